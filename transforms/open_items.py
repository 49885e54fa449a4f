"""Open items that carry over: a day's open items stay open in the following days' notes until closed.

The chain is computed per user, in date order, from each summarized day's own open
items (``DaySummary.open_items``) and its **resolutions**: the day's sentences that
may close an earlier item (a "done" or "decision" cue, ``transforms.cues``), kept in
the day's ``daily_summaries`` row so the chain is recomputed from the tables alone.

Rules (the invariants the tests hold):

- an item raised on day R is listed under "Still open" on each later day D with a note,
  while ``D <= R + OPEN_DAYS`` and no day in (R, D) closed it;
- the first later day whose resolutions close it (``closes(item, sentence)``: the
  item's content words, stemmed, in either language, and a done cue) lists it under
  "Closed"; after that day it is gone;
- a day's own items are never closed by that same day: the day's note already says
  what the day left open, and "Closed" means closed *later*;
- after ``OPEN_DAYS`` days without a close it is dropped from notes (it stays in the
  ``open_items`` table, where ``expires_on`` says when it stopped being carried);
- each raise is its own item (the id is a content hash of user, day and text): an item
  raised again on a later day is carried from each day it was raised, and one closing
  sentence closes both.

An item's fate depends only on the days from its own day to ``OPEN_DAYS`` after it, so
a run that changed days from E on recomputes the items raised from ``E - OPEN_DAYS`` on
(``window_start``) and the carried sections of the days from E on, and gets what a
recomputation of the whole history would.

Pure: no I/O.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from schemas.frontmatter import ITEM_BOUNDS
from transforms import cues
from transforms.chunk import terms_of
from transforms.extract import DayMessage
from transforms.frontmatter import CarriedItem, clean_text, normalise_carried, sentences

#: Days an item is carried: on day ``raised_on + OPEN_DAYS`` it is still listed, the day after it is not.
OPEN_DAYS = 30
#: Resolutions kept per day, and their longest length in characters (longer sentences are left out).
MOST_RESOLUTIONS = 40
LONGEST_RESOLUTION = ITEM_BOUNDS["closed"][1]
#: A closing sentence with fewer content words than this is read with the sentence before it in its thread
#: ("Sudah beres." alone says nothing about *what* is done).
_THREAD_WORDS = 2

Closes = Callable[[str, str], bool]

_LINE = re.compile(r"\n+")
_BULLET = re.compile(r"^\s*(?:[-*+>]|\d+[.)])\s+")
_CODE_FENCE = re.compile(r"```.*?(?:```|$)", re.S)


@dataclass(frozen=True)
class ChainDay:
    """What the chain needs of one summarized day."""

    date: dt.date
    open_items: tuple[str, ...] = ()
    resolutions: tuple[str, ...] = ()


@dataclass(frozen=True)
class Item:
    """One open item and what became of it: a row of the ``open_items`` table."""

    item_id: str
    user_id: str
    raised_on: dt.date
    text: str
    closed_on: dt.date | None
    closed_by: str | None  # the resolution that closed it
    expires_on: dt.date  # the last day it is carried unless closed

    def row(self) -> dict:
        return {
            "item_id": self.item_id,
            "user_id": self.user_id,
            "raised_on": self.raised_on,
            "text": self.text,
            "closed_on": self.closed_on,
            "closed_by": self.closed_by,
            "expires_on": self.expires_on,
        }


@dataclass(frozen=True)
class Carried:
    """A day's carried sections, bounded and ordered as the note holds them."""

    still_open: tuple[CarriedItem, ...] = ()
    closed: tuple[CarriedItem, ...] = ()


@dataclass(frozen=True)
class Chain:
    """Per day, its carried sections; and every item raised in the days given, in (raised_on, text) order."""

    carried: dict[dt.date, Carried]
    items: tuple[Item, ...]


def item_id(user_id: str, raised_on: dt.date, text: str) -> str:
    """The same text raised on the same day by the same user is the same item."""
    key = f"open_item\0{user_id}\0{raised_on.isoformat()}\0{text.casefold()}"
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]


def window_start(earliest_changed: dt.date) -> dt.date:
    """The first day whose items a change from ``earliest_changed`` on can touch."""
    return earliest_changed - dt.timedelta(days=OPEN_DAYS)


def chain(user_id: str, days: Iterable[ChainDay], closes: Closes | None = None) -> Chain:
    """Carry each day's open items through the later days; ``closes`` defaults to ``transforms.cues.closes``."""
    carrier = Carrier(user_id, closes)
    carried = {day.date: carrier.step(day) for day in sorted(days, key=lambda d: d.date)}
    return Chain(carried, carrier.items())


class Carrier:
    """The chain one day at a time: ``step`` each summarized day in date order, and it gives that day's carried
    sections; ``items`` is every item raised so far with what became of it (``chain`` is the whole history's
    steps). A day's sections depend only on the days before it, so a stage can know a note's sections before it
    writes the note, when it writes the days in date order."""

    def __init__(self, user_id: str, closes: Closes | None = None) -> None:
        self.user_id = user_id
        self.last: dt.date | None = None  # the last day stepped
        self._match = closes or cues.closes
        self._done: list[Item] = []
        self._open: list[Item] = []

    @classmethod
    def resumed(cls, user_id: str, items: Iterable[Item], last: dt.date, closes: Closes | None = None) -> Carrier:
        """The carrier after ``last``, from the items its steps had made by then (the ``open_items`` table's rows
        raised from some day on): stepping it on gives what stepping every day from that day would."""
        carrier = cls(user_id, closes)
        for it in items:
            (carrier._open if it.closed_on is None else carrier._done).append(it)
        carrier.last = last
        return carrier

    def step(self, day: ChainDay) -> Carried:
        """Day ``day``'s carried sections, after the days stepped before it (each later than the last)."""
        match = self._match
        expired = [it for it in self._open if day.date > it.expires_on]
        open_ = [it for it in self._open if day.date <= it.expires_on]
        self._done += expired
        still: list[Item] = []
        closed: list[Item] = []
        for it in open_:
            by = next((s for s in day.resolutions if match(it.text, s)), None)
            if by is None:
                still.append(it)
            else:
                closed.append(
                    Item(it.item_id, it.user_id, it.raised_on, it.text, day.date, by, it.expires_on),
                )
        carried = Carried(
            normalise_carried("still_open", (CarriedItem(it.raised_on, it.text) for it in still)),
            normalise_carried("closed", (CarriedItem(it.raised_on, it.text) for it in closed)),
        )
        self._done += closed
        self._open = still
        known = {it.item_id for it in self._open}
        for text in day.open_items:
            new = Item(
                item_id(self.user_id, day.date, text),
                self.user_id,
                day.date,
                text,
                None,
                None,
                day.date + dt.timedelta(days=OPEN_DAYS),
            )
            if new.item_id not in known:
                known.add(new.item_id)
                self._open.append(new)
        self.last = day.date
        return carried

    def items(self) -> tuple[Item, ...]:
        """Every item raised in the days stepped, in (raised_on, text) order."""
        return tuple(sorted(self._done + self._open, key=lambda it: (it.raised_on, it.text.casefold(), it.item_id)))


def is_open(item: Item | dict, today: dt.date) -> bool:
    """Whether an item (or its table row) is still open on ``today``: not closed, not past its last day."""
    closed_on = item.closed_on if isinstance(item, Item) else item["closed_on"]
    expires_on = item.expires_on if isinstance(item, Item) else item["expires_on"]
    return closed_on is None and today <= expires_on


# --- resolutions: the day's sentences that may close an earlier item ----------------------


def resolutions(messages: Sequence[DayMessage]) -> tuple[str, ...]:
    """The sentences of a day's messages with a "done" or "decision" cue, in order, each read in its thread.

    A flagged message (one that reads like an instruction to an assistant) gives none.
    A sentence with too few content words of its own carries the sentence before it in
    the same session (its thread), joined with " — ", so that "Sudah beres." closes what
    the thread was about. Bounded by ``MOST_RESOLUTIONS`` and ``LONGEST_RESOLUTION``.
    """
    out: list[str] = []
    seen: set[str] = set()
    previous: dict[str, str] = {}  # session -> its last sentence so far
    for m in messages:
        if m.role not in ("user", "assistant") or m.flagged:
            continue
        for s in _sentences(m.content):
            before = previous.get(m.session_id)
            previous[m.session_id] = s
            if not cues.cues_of(s) & {"done", "decision"}:
                continue
            text = s
            if before is not None and len(terms_of(s)) < _THREAD_WORDS:
                text = f"{before} — {s}"
            if len(text) > LONGEST_RESOLUTION or text.casefold() in seen:
                continue
            seen.add(text.casefold())
            out.append(text)
            if len(out) == MOST_RESOLUTIONS:
                return tuple(out)
    return tuple(out)


def _sentences(content: str) -> list[str]:
    """A message's sentences: code blocks left out, one line or bullet at a time."""
    out = []
    for line in _LINE.split(_CODE_FENCE.sub("\n", content)):
        text = clean_text(_BULLET.sub("", line))
        if text:
            out += sentences(text)
    return out
