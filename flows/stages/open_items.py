"""Open items: carry each day's open items through the later days' notes, and keep the ``open_items`` table.

After a run summarizes some days (nightly, backfill, forget), ``refresh`` recomputes
each touched user's chain (``transforms.open_items``) from the ``daily_summaries``
partitions alone (each day's ``open_items`` and ``resolutions``), from ``OPEN_DAYS``
before the earliest touched day E on, and then:

- rewrites the user's ``open_items`` files of the months from the window's on
  (``open_items/user_id=<u>/month=YYYY-MM/data.parquet``, by the month an item was
  raised) whose rows changed: the items raised before that window keep their rows,
  their fate was settled before E, so the months before it are never read or written;
- re-renders the notes of the days from E to ``OPEN_DAYS`` after the latest touched
  day (no other note can change) whose "Still open" / "Closed" sections differ from
  the chain's: the note is parsed, its carried sections replaced, rendered,
  read back, and written atomically and read-only only when its bytes change; the
  ledger's ``summary_sha256`` follows.

A crash between the summaries and the chain must not leave later notes behind for good:
before a run writes any summary, ``owe`` records the users and days it is about to
touch in ``open_items/owed.json`` (durably), ``refresh`` takes those in as well, and
only then removes the record. So the next run finishes what a crashed one owed.

A night whose days all come after the last day the chain was stepped to does not read
the window again: next to the table, ``chain.json`` records that day, the sha256 of the
table's files from the window's month on, and the sha256 of each of the user's partitions
in the ``OPEN_DAYS`` before it. When those files and every partition of the window still
have those bytes, the chain is resumed from the table's rows raised in the window
(``Carrier.resumed``) and stepped through the new days only; any difference (a backfill
of an older day, a forgotten day, a crash between the table and the record, an older
chain version) falls back to reading the window. With the extractive backend the
summarize stage already resumed and stepped it (``Ahead``) to write each note with its
sections: ``refresh`` then takes that carrier (``Ahead.stepped``) when it stepped exactly
the days ``refresh`` would, and only writes the table and its record.

A rerun finds every note and the table as the chain wants them and writes nothing. A
user with no open-items file yet (a new home, a deleted table) has the chain computed
over the whole history; a user none of whose days ever raised an item has a record
that says so (``no_table``), and is resumed like any other. A version-1 note has no
sections to carry items in; it is left as it is until ``backfill --resummarize``
rewrites it.
"""

from __future__ import annotations

import calendar
import datetime as dt
import hashlib
import json
import logging
import os
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypeVar

import pyarrow as pa
import pyarrow.compute as pc

from flows.config import Settings
from flows.store import faults, ledger, warehouse
from flows.store.archive_files import marker
from flows.store.fsio import READ_ONLY, atomic_write_bytes, durable_batch, fsync_dir, sha256_file
from flows.store.ledger import DayKey
from schemas.frontmatter import SCHEMA_VERSION
from schemas.tables import DAILY_SUMMARIES, OPEN_ITEMS
from transforms.frontmatter import DaySummary, FrontmatterError, carried_sections, parse_summary, render_summary
from transforms.open_items import OPEN_DAYS, Carried, Carrier, ChainDay, Item, window_start

log = logging.getLogger("kenang")

_COLUMNS = ("date", "open_items", "resolutions", "path")
#: Bumped when the chain's rules change, so that a table made by the old rules is not resumed from (2: the table
#: kept by month).
CHAIN_VERSION = 2


@dataclass(frozen=True)
class Refreshed:
    """What ``refresh`` did: notes rewritten, users whose table changed, and the ledger rows to merge."""

    notes: int = 0
    tables: int = 0
    ledger_rows: tuple[dict, ...] = ()

    def counts(self) -> dict:
        return {"notes_rewritten": self.notes, "tables_written": self.tables}


def _owed_file(settings: Settings | Path) -> Path:
    wh = settings if isinstance(settings, Path) else settings.paths.warehouse
    return warehouse.table_dir(wh, OPEN_ITEMS) / "owed.json"


def owed(settings: Settings | Path) -> dict[str, dt.date]:
    """Per user, the earliest day a run touched whose chain has not been recomputed since (a crashed run's)."""
    try:
        body = json.loads(_owed_file(settings).read_text(encoding="utf-8"))
        return {str(u): dt.date.fromisoformat(d) for u, d in body.items()}
    except (OSError, ValueError, AttributeError, TypeError):
        return {}


def owe(settings: Settings | Path, touched: Iterable[DayKey]) -> None:
    """Record, before any summary is written, that these users' chains must be recomputed from these days."""
    now = owed(settings)
    merged = dict(now)
    for user, day in touched:
        merged[user] = min(day, merged.get(user, day))
    if merged != now:
        body = json.dumps({u: d.isoformat() for u, d in sorted(merged.items())}, indent=1) + "\n"
        atomic_write_bytes(_owed_file(settings), body.encode("utf-8"))


@dataclass(frozen=True)
class Wrote:
    """A note the run's summarize stage wrote: its day's chain inputs (as its partition holds them), its path in the
    archive, and the carried sections it was written with (None: those its file had before, ``with_carried``)."""

    day: ChainDay
    path: str
    carried: Carried | None


def refresh(
    settings: Settings,
    touched: Iterable[DayKey],
    wrote: Mapping[DayKey, Wrote] | None = None,
    ahead: Ahead | None = None,
) -> Refreshed:
    """Recompute the chain of every user in ``touched``, and every one a run still owes, from their earliest
    touched day; write what changed, then clear what was owed.

    ``wrote``: the notes this run wrote, so their partitions are not read again and a note written with the
    chain's sections (``Ahead``) is not read again either. ``ahead``: the run's ``Ahead``; a user whose chain it
    stepped just as this would (``Ahead.stepped``) takes its carrier, and the window is not read again. Each
    rewritten note's new ``summary_sha256`` is merged into the ledger here, user by user (``ledger_rows``).
    """
    wrote = wrote or {}
    touched = list(touched)
    migrate(settings.paths.warehouse)  # a forget may come before any run split an older kenang's table
    debt = owed(settings)
    earliest: dict[str, dt.date] = dict(debt)
    latest: dict[str, dt.date] = dict.fromkeys(debt, dt.date.max)  # what a crashed run touched after E is not known
    for user, day in touched:
        earliest[user] = min(day, earliest.get(user, day))
        latest[user] = max(day, latest.get(user, day))
    notes = tables = 0
    rows: list[dict] = []
    for user in sorted(earliest):
        mine = {day: w for (u, day), w in wrote.items() if u == user}
        days = {day for u, day in touched if u == user}
        stepped = ahead.stepped(user, earliest[user], mine) if ahead is not None and days <= mine.keys() else None
        if stepped is not None:
            n, table, changed = _carried_on(settings, user, earliest[user], stepped)
        else:
            n, table, changed = _refresh_user(settings, user, earliest[user], latest[user], mine)
        ledger.write_days(settings.paths.warehouse, changed)
        notes += n
        tables += int(table)
        rows += changed
    if debt:
        _owed_file(settings).unlink(missing_ok=True)
        fsync_dir(_owed_file(settings).parent)
    return Refreshed(notes, tables, tuple(rows))


def _refresh_user(
    settings: Settings, user: str, since: dt.date, until: dt.date, wrote: Mapping[dt.date, Wrote]
) -> tuple[int, bool, list[dict]]:
    """The chain of ``user`` after days from ``since`` to ``until`` changed: the notes it can change are those of
    the days from ``since`` to ``OPEN_DAYS`` after ``until`` (an item is never carried longer)."""
    wh = settings.paths.warehouse
    last = until + dt.timedelta(days=OPEN_DAYS) if until < dt.date.max - dt.timedelta(days=OPEN_DAYS) else until
    # Without a table the window is the whole history: nothing earlier is known.
    start = window_start(since) if _has_table(wh, user, _table_files(wh, user, since)) else dt.date.min
    carrier, first = _resume(wh, user, since) or (Carrier(user), start)
    days = _days(wh, user, first, wrote)
    carried = {day: carrier.step(_chain_day(day, row)) for day, row in days}
    table = _write_table(wh, user, [it.row() for it in carrier.items()], start)
    faults.checkpoint("open_items.table_written")
    _record(wh, user, days[-1][0] if days else carrier.last)
    written: list[dict] = []
    with durable_batch():  # the notes are made durable together, before the ledger records their new sha256
        for day, row in days:
            if not since <= day <= last:
                continue
            if day in wrote and wrote[day].carried == carried[day]:
                continue  # written in this run with the chain's sections
            sha = _rewrite_note(settings, settings.paths.archive / row["path"], carried[day])
            if sha is not None:
                written.append({"user_id": user, "date": day, "summary_sha256": sha})
    return len(written), table, written


def _carried_on(settings: Settings, user: str, since: dt.date, carrier: Carrier) -> tuple[int, bool, list[dict]]:
    """``_refresh_user`` for a user whose chain the run's ``Ahead`` resumed from the table and stepped through the
    run's days alone, each note written with the sections it gave: the table and its record, no note to rewrite."""
    wh = settings.paths.warehouse
    table = _write_table(wh, user, [it.row() for it in carrier.items()], window_start(since))
    faults.checkpoint("open_items.table_written")
    _record(wh, user, carrier.last)
    return 0, table, []


#: A window of at most this many days is looked for day by day; a longer one lists the table's day folders,
#: which after years are thousands. One without an end ends with the user's last month in the ledger.
_LOOKED_FOR = 400


def _stored(wh: Path, user: str, start: dt.date, end: dt.date | None = None) -> list[tuple[dt.date, Path]]:
    """(day, its daily_summaries partition) for each of ``user``'s summarized days from ``start`` on (to ``end``,
    when given), in order."""
    root = warehouse.table_dir(wh, DAILY_SUMMARIES)
    if end is None and start > dt.date.min:
        end = _last_day(wh, user)
    if end is not None and start > dt.date.min and (end - start).days < _LOOKED_FOR:
        days = (start + dt.timedelta(days=n) for n in range((end - start).days + 1))
        return [
            (day, path)
            for day in days
            if (path := root / f"date={day.isoformat()}" / f"user_id={user}" / "data.parquet").is_file()
        ]
    first = f"date={start.isoformat()}" if start > dt.date.min else "date="
    out = []
    for name in warehouse.subfolders(root, "date="):
        if name < first:
            continue
        try:
            day = dt.date.fromisoformat(name.removeprefix("date="))
        except ValueError:
            continue
        path = root / name / f"user_id={user}" / "data.parquet"
        if path.is_file() and (end is None or day <= end):
            out.append((day, path))
    return out


def _last_day(wh: Path, user: str) -> dt.date | None:
    """The last day of the user's last month in the ledger: no later day has a summary (a day is summarized only
    once the ledger holds it); None when the ledger cannot say (``ledger.user_months``)."""
    months = ledger.user_months(wh)
    mine = [m for u, m in months or () if u == user]
    if not mine:
        return None
    try:
        year, month = (int(n) for n in max(mine).split("-"))
        return dt.date(year, month, calendar.monthrange(year, month)[1])
    except ValueError:
        return None


def _days(
    wh: Path, user: str, start: dt.date, wrote: Mapping[dt.date, Wrote] | None = None, end: dt.date | None = None
) -> list[tuple[dt.date, dict]]:
    """(day, its daily_summaries row's chain columns) for each of ``user``'s summarized days from ``start`` on (to
    ``end``, when given); a day in ``wrote`` is taken from there, not read again."""
    wrote = wrote or {}
    out = []
    for day, path in _stored(wh, user, start, end):
        if day in wrote:
            w = wrote[day]
            out.append(
                (day, {"date": day, "open_items": w.day.open_items, "resolutions": w.day.resolutions, "path": w.path})
            )
            continue
        cols = warehouse.read_columns(path, DAILY_SUMMARIES, _COLUMNS)
        if cols["date"]:
            out.append((day, {k: cols[k][0] for k in _COLUMNS}))
    return out


def _record_file(wh: Path, user: str) -> Path:
    return warehouse.table_dir(wh, OPEN_ITEMS) / f"user_id={user}" / "chain.json"


def _month(day: dt.date) -> str:
    return f"{day:%Y-%m}" if day > dt.date.min else ""


def _table_files(wh: Path, user: str, since: dt.date = dt.date.min) -> dict[str, Path]:
    """The user's open_items files by month, of the months from ``since``'s on."""
    return warehouse.user_month_files(wh, OPEN_ITEMS, user, _month(since))


def _has_table(wh: Path, user: str, recent: dict[str, Path]) -> bool:
    """Whether the user has any open_items file, given ``recent``, their files of the months from some month on
    (``_table_files(wh, user, since)``): every month is looked at only when those are none."""
    return bool(recent) or bool(_table_files(wh, user))


def _record(wh: Path, user: str, through: dt.date | None) -> None:
    """Record what the user's table was made from: the last day stepped, the bytes of the table's files from the
    window's month on, and the bytes of each partition of the window before that day, so that the next run can
    resume the chain from the table."""
    path = _record_file(wh, user)
    if through is None:
        if path.exists():
            path.unlink()
            fsync_dir(path.parent)
        return
    tables = _table_files(wh, user, window_start(through))
    body = {
        "version": CHAIN_VERSION,
        "open_days": OPEN_DAYS,
        "through": through.isoformat(),
        "tables": {m: _sha256(f) for m, f in tables.items()},
        "days": {d.isoformat(): _sha256(p) for d, p in _stored(wh, user, window_start(through), through)},
    }
    if not _has_table(wh, user, tables):  # no day of theirs ever raised an item: resumed all the same
        body["no_table"] = True
    data = (json.dumps(body, indent=1, sort_keys=True) + "\n").encode("utf-8")
    try:
        if path.read_bytes() == data:
            return
    except OSError:
        pass
    atomic_write_bytes(path, data)


def _resume(wh: Path, user: str, since: dt.date) -> tuple[Carrier, dt.date] | None:
    """The user's chain as its table left it, and the first day to step it from, when every day from ``since`` on
    is after the last day it was stepped to and nothing it was made from has changed since; else None (read the
    window)."""
    try:
        body = json.loads(_record_file(wh, user).read_text(encoding="utf-8"))
        if (body["version"], body["open_days"]) != (CHAIN_VERSION, OPEN_DAYS):
            return None
        through = dt.date.fromisoformat(body["through"])
        recorded: dict = body["days"]
        if since <= through:
            return None
        tables = _table_files(wh, user, window_start(through))
        if not (_has_table(wh, user, tables) or body.get("no_table") is True):  # a table deleted: every day again
            return None
        if {m: _sha256(f) for m, f in tables.items()} != body["tables"]:
            return None
        start = window_start(since)
        stored = {d.isoformat(): p for d, p in _stored(wh, user, start, through)}
        if stored.keys() != {d for d in recorded if d >= start.isoformat()}:
            return None
        if any(_sha256(p) != recorded[d] for d, p in stored.items()):
            return None
        rows = _rows_from(wh, user, start)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    return Carrier.resumed(user, (Item(**r) for r in rows), through), through + dt.timedelta(days=1)


_T = TypeVar("_T")


def _by_version(
    cache: dict[Path, tuple[tuple[int, int, int], _T]], keep: int, path: Path, make: Callable[[Path], _T]
) -> _T:
    """``make(path)``, made once per version of the file in this process (kenang replaces a file, never edits it in
    place: a new version is a new inode); ``cache`` holds at most about ``keep`` files (many homes in one process:
    tests, benchmarks)."""
    st = os.stat(path)
    key = (st.st_ino, st.st_size, st.st_mtime_ns)  # before the read: a file replaced meanwhile is read again
    hit = cache.get(path)
    if hit is not None and hit[0] == key:
        return hit[1]
    if len(cache) > keep:
        cache.clear()
    value = make(path)
    cache[path] = (key, value)
    return value


_seen: dict[Path, tuple[tuple[int, int, int], str]] = {}
_tables: dict[Path, tuple[tuple[int, int, int], pa.Table]] = {}


def _sha256(path: Path) -> str:
    """A file's sha256, once per version of the file: a night's summarize and open-items stages resume the same
    chain."""
    return _by_version(_seen, 10_000, path, sha256_file)


def _table(path: Path) -> pa.Table:
    """One month of a user's open_items table, read once per version of the file: a night's summarize stage
    resumes the chain from it, and the open-items stage resumes it again and rewrites it."""
    return _by_version(_tables, 1000, path, lambda p: warehouse.read_file(p, OPEN_ITEMS))


def _rows_from(wh: Path, user: str, start: dt.date) -> list[dict]:
    """The rows of a user's open_items table raised from ``start`` on: its files of the months from ``start``'s."""
    out = []
    for path in _table_files(wh, user, start).values():
        data = _table(path)
        out += data.filter(pc.greater_equal(data["raised_on"], pa.scalar(start, pa.date32()))).to_pylist()
    return out


def _write_table(wh: Path, user: str, items: list[dict], start: dt.date) -> bool:
    """The user's open_items files of the months from ``start``'s on: in ``start``'s month, its rows raised before
    ``start`` as they were, then ``items`` (raised from ``start`` on, in the table's order) by the month each was
    raised; each written if changed, and removed when it has no row left. Whether any changed."""
    by_month: dict[str, list[dict]] = {}
    for item in items:
        by_month.setdefault(_month(item["raised_on"]), []).append(item)
    have = _table_files(wh, user, start)
    changed = False
    for month in sorted(set(by_month) | set(have)):
        path = warehouse.user_month_file(wh, OPEN_ITEMS, user, month)
        rows = by_month.get(month, [])
        old = _table(path) if month in have else None
        if old is not None and month == _month(start):
            before = old.filter(pc.less(old["raised_on"], pa.scalar(start, pa.date32()))).to_pylist()
            rows = before + rows
        if old is not None and old.to_pylist() == rows:
            continue
        if rows:
            warehouse.write_file(path, pa.Table.from_pylist(rows, schema=OPEN_ITEMS.schema), OPEN_ITEMS)
        elif old is not None:
            path.unlink()
            warehouse.checksum_file(path).unlink(missing_ok=True)
            fsync_dir(path.parent)
            try:
                path.parent.rmdir()  # the month's folder, unless something else is in it
                fsync_dir(path.parent.parent)
            except OSError:
                pass
        else:
            continue
        changed = True
    return changed


def migrate(wh: Path) -> bool:
    """Split each user's one-file table of an older kenang (``warehouse.legacy_user_file``) by month, then remove
    it; returns whether there was one. A migration that died halfway is done again from the file by the next.

    A file that cannot be read, or whose bytes are not the ones kenang wrote, is set aside (``_set_aside``) and the
    user's table is made again from the summaries by the next chain refresh: the other users, and the run, go on."""
    root = warehouse.table_dir(wh, OPEN_ITEMS)
    found = False
    for name in warehouse.subfolders(root, "user_id="):
        user = name.removeprefix("user_id=")
        legacy = warehouse.legacy_user_file(wh, OPEN_ITEMS, user)
        if not legacy.is_file():
            continue
        found = True
        try:
            if warehouse.changed_behind_our_back(legacy):
                raise ValueError("its bytes are not the ones kenang wrote")
            stored = warehouse.read_file(legacy, OPEN_ITEMS).to_pylist()
        except (OSError, ValueError, pa.ArrowException) as exc:
            _set_aside(wh, user, legacy, exc)
            continue
        _write_table(wh, user, stored, dt.date.min)  # every month, as the old file has it
        faults.checkpoint("open_items.migrated")
        legacy.unlink()
        warehouse.checksum_file(legacy).unlink(missing_ok=True)
        fsync_dir(legacy.parent)
    return found


def _set_aside(wh: Path, user: str, legacy: Path, exc: Exception) -> None:
    """Keep an unreadable one-file table beside, as ``data.unreadable`` (its bytes, for whoever wants them), drop
    the month files and chain record made from it, and owe the user's whole chain: the next refresh makes the
    table again from the summaries."""
    kept = legacy.with_name("data.unreadable")
    owe(wh, [(user, dt.date.min)])  # first: a crash after this still has the table made again
    for path in _table_files(wh, user).values():
        path.unlink()
        warehouse.checksum_file(path).unlink(missing_ok=True)
    _record_file(wh, user).unlink(missing_ok=True)
    os.replace(legacy, kept)
    warehouse.checksum_file(legacy).unlink(missing_ok=True)
    fsync_dir(legacy.parent)
    log.error(
        "open_items: %s could not be read (%s: %s); kept as %s, the table is made again from the summaries",
        legacy,
        type(exc).__name__,
        str(exc)[:200],
        kept.name,
    )


def _rewrite_note(settings: Settings, path: Path, carried: Carried) -> str | None:
    """Give a note the chain's carried sections; the new file's sha256 if it was rewritten, else None."""
    try:
        text = path.read_text(encoding="utf-8")
        doc = parse_summary(text)
    except (OSError, UnicodeDecodeError, FrontmatterError) as exc:  # verify reports it; the chain goes on
        log.warning("open items: note %s not updated: %s", path.name, type(exc).__name__)
        return None
    if doc.schema_version != SCHEMA_VERSION or (doc.still_open, doc.closed) == (carried.still_open, carried.closed):
        return None
    new = replace(doc, still_open=carried.still_open, closed=carried.closed)
    data = render_summary(new)
    if parse_summary(data) != new:  # never write what would not read back
        log.warning("open items: note %s would not read back; left as it is", path.name)
        return None
    blob = data.encode("utf-8")
    atomic_write_bytes(path, blob, mode=READ_ONLY, needs=marker(settings))
    faults.checkpoint("open_items.note_written")
    return hashlib.sha256(blob).hexdigest()


class Ahead:
    """The carried sections of each note a run writes in date order, known before the note is first written, so
    that a first night over a long history writes each note once instead of writing it and then its sections.

    Per user, a ``Carrier`` steps through the stored days from ``OPEN_DAYS`` before the user's first day in the
    run, then through the run's days as they are written and the stored days between them. A day that comes out
    of order gets None (its note is written as ``with_carried`` has it); ``refresh`` after the stage stays the
    authority and corrects any note whose sections differ from the chain's, unless the chain went just as it
    would take it up (``stepped``): then it takes this carrier and writes the table alone.
    """

    def __init__(self, settings: Settings) -> None:
        self._wh = settings.paths.warehouse
        self._carriers: dict[str, Carrier] = {}
        self._stored: dict[str, deque[ChainDay]] = {}  # the user's stored days, oldest first, not stepped yet
        # Per user, while the chain went as ``refresh`` would take it up (resumed from the table at the user's first
        # day, stepped through the run's days alone): that day and the sections each day got. Else absent.
        self._plain: dict[str, tuple[dt.date, dict[dt.date, Carried]]] = {}

    def sections(self, user: str, own: ChainDay) -> Carried | None:
        """The carried sections of ``own``'s note, after the days before it; None if a later day came first."""
        carrier = self._carriers.get(user)
        if carrier is None:
            resumed = _resume(self._wh, user, own.date)
            carrier, first = resumed or (Carrier(user), window_start(own.date))
            self._carriers[user] = carrier
            self._stored[user] = deque(_chain_day(d, row) for d, row in _days(self._wh, user, first))
            if resumed is not None:
                self._plain[user] = (own.date, {})
        elif carrier.last is not None and own.date <= carrier.last:
            self._plain.pop(user, None)
            return None
        stored = self._stored[user]
        while stored and stored[0].date < own.date:
            before = stored.popleft()
            if carrier.last is None or before.date > carrier.last:
                self._plain.pop(user, None)
                carrier.step(before)
        carried = carrier.step(own)
        if user in self._plain:
            self._plain[user][1][own.date] = carried
        return carried

    def stepped(self, user: str, since: dt.date, wrote: Mapping[dt.date, Wrote]) -> Carrier | None:
        """The user's carrier when it is what ``refresh`` would step from ``since`` with the user's notes this run
        ``wrote``: resumed from the table at ``since``, stepped through those days alone (no stored day between or
        after them), each written with the sections it gave; else None (``refresh`` reads the window)."""
        plain = self._plain.get(user)
        if plain is None or plain[0] != since or self._stored[user]:
            return None
        given = plain[1]
        if given.keys() != wrote.keys() or any(wrote[day].carried != given[day] for day in given):
            return None
        return self._carriers[user]


def _chain_day(day: dt.date, row: dict) -> ChainDay:
    return ChainDay(day, tuple(row["open_items"] or ()), tuple(row["resolutions"] or ()))


def with_sections(doc: DaySummary, data: bytes, cut: tuple[int, int], carried: Carried) -> bytes | None:
    """A newly made note's bytes with ``carried`` in place of its carried sections; None if it would not read back.

    ``cut``: the lengths in bytes of the file before and after its carried sections (``render_parts``).
    """
    if doc.schema_version != SCHEMA_VERSION:
        return None
    if (doc.still_open, doc.closed) == (carried.still_open, carried.closed):
        return data
    new = replace(doc, still_open=carried.still_open, closed=carried.closed)
    before, after = cut
    sections = carried_sections(doc.folder, doc.language, carried.still_open, carried.closed)
    blob = data[:before] + sections.encode("utf-8") + data[len(data) - after :]
    try:
        back = parse_summary(blob.decode("utf-8"))
    except FrontmatterError:
        return None
    return blob if back == new else None  # never write what would not read back


def with_carried(path: Path, doc: DaySummary, data: bytes) -> bytes:
    """A day's newly made note with the carried sections its file on disk already has (the chain corrects them after).

    So a day summarized again with the same content is written with the same bytes, never first without them.
    """
    try:
        old = parse_summary(path.read_text(encoding="utf-8")) if path.is_file() else None
    except (OSError, UnicodeDecodeError, FrontmatterError):
        old = None
    if old is None or not (old.still_open or old.closed) or doc.schema_version != SCHEMA_VERSION:
        return data
    new = replace(doc, still_open=old.still_open, closed=old.closed)
    text = render_summary(new)
    return text.encode("utf-8") if parse_summary(text) == new else data


def open_items(wh: Path, user: str) -> list[dict]:
    """The user's rows of the open_items table, oldest first."""
    return warehouse.read_user_months(wh, OPEN_ITEMS, user).to_pylist()
