"""Deterministic extractors: everything a daily summary needs, from the day's text alone.

They run on every day, before any model: the extractive summarizer is made of them,
and each is the fallback of the LLM field it mirrors. Input is a ``DayText``: one
user's messages of one local day, already redacted, with prompt-injection suspects
marked ``flagged``.

Design and invariants:

- Pure and deterministic: no I/O, no clock (``today`` is an argument), inputs are
  never mutated, and the same ``DayText`` always gives the same output. The
  vocabulary (technology gazetteer, stopwords, mood words, importance markers, signals) is
  data, loaded by ``schemas.lexicon``; the grammar (explicit dates, honorifics,
  sentences) lives here. Relative dates ("kemarin", "minggu lalu", "last week") have
  one grammar, ``transforms.timeq``, shared with recall's queries; a phrase that
  names a week, month or year gives its first day (see ``extract_dates``).
- A ``flagged`` message contributes nothing to any extractor, not even a count.
- The conversation is the ``user`` and ``assistant`` messages. System prompts and tool
  output are boilerplate and logs (a tool's log is full of dates), so they are read
  by none of the extractors; they are still counted as messages by the summary.
- Per-message work (the prose of a message, its technologies, people and candidate
  tags) is memoised in bounded LRU caches keyed by the message text: extractors
  that read the same message share it, and an answer never depends on what was
  asked before.
- Fenced code blocks are never read: a pasted config is not a topic, a person or a
  date. ``[REDACTED:...]`` markers and importers' placeholders (``[empty message]``,
  ``[image]``: ``lexicon.PLACEHOLDERS``) are read as blanks, and no list ever holds a
  placeholder.
- Importance and mood come from signals in the user's own words (``day_signals``):
  problems, deadlines, relief and thanks, with negation; ``DaySignals`` also carries
  the bounds within which a model may move them.
- Every result is within ``schemas.frontmatter``: lists hold at most their bound of
  items, each at most its bound of characters (a longer item is dropped, not cut),
  deduplicated case-insensitively with the first spelling kept; the mood is one of
  ``MOODS``; importance is in ``[IMPORTANCE_MIN, IMPORTANCE_MAX]``. The extractive
  summary is chosen from these sentences by ``transforms.digest``.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from datetime import date, datetime, tzinfo
from functools import lru_cache, partial
from itertools import groupby

from schemas.frontmatter import (
    IMPORTANCE_MAX,
    IMPORTANCE_MIN,
    LIST_BOUNDS,
    MOODS,
)
from schemas.lexicon import (
    EVERYDAY_TECHNOLOGY_WORDS,
    IMPORTANCE_MARKERS,
    MOOD_WORDS,
    NEGATIONS,
    NOT_PEOPLE,
    PLACEHOLDER_RE,
    SIGNALS,
    TECHNOLOGIES,
    is_placeholder,
    says_something,
)
from schemas.lexicon import EXTRACTOR_STOPWORDS as STOPWORDS
from transforms import timeq


@dataclass(frozen=True)
class DayMessage:
    session_id: str
    role: str  # user | assistant | system | tool ...
    content: str  # already redacted
    ts: datetime | None  # aware, or None
    flagged: bool = False  # reads like a prompt injection: never extract anything from it


@dataclass(frozen=True)
class DayText:
    user_id: str
    day: date  # the day being summarized
    tz: tzinfo  # the configured zone
    messages: tuple[DayMessage, ...]
    people: tuple[str, ...] = ()  # the names the day's transcripts declare in their frontmatter
    user_name: str | None = None  # what notes call the user (config ``names``)


_CONVERSATION_ROLES = frozenset({"user", "assistant"})
#: A tool call as an importer writes it (``transforms.imports``: ``[tool_use <name>] <input as JSON>``), led by its
#: markers; what follows them decides whether the message is the call itself (JSON, or nothing) or a reply that
#: starts with them (a Claude.ai answer after a web search: ``[tool_use: web_search]\n[tool_result: ...]\nThe ...``).
_TOOL_MARKERS = re.compile(r"^(?:\s*\[(?:sidechain_)?tool_(?:use|call|result)\b[^\]\n]*\])+\s*")
#: Claude Code's slash-command line (``<command-message>init is analyzing...</command-message>
#: <command-name>/init</command-name>``): read as the command typed.
_COMMAND_WRAPPER = re.compile(r"<command-message>.*?</command-message>|</?command-(?:name|args)>", re.DOTALL)


def conversation(messages: Iterable[DayMessage]) -> tuple[DayMessage, ...]:
    """The messages a day's note is written from: what was said. A tool's calls (a message that is its markers and
    its input) and results (role ``tool``), and a message of bare placeholders (``[empty message]``), are left out;
    Claude Code's slash-command wrapper reads as the command typed (``/init``). A day with nothing else keeps every
    message, so its note still tells what the day held."""
    every = tuple(messages)
    out = []
    for m in every:
        if m.role == "tool":
            continue
        lead = _TOOL_MARKERS.match(m.content)
        if lead and (not (rest := m.content[lead.end() :].lstrip()) or rest[0] in '{["' or rest == "null"):
            continue
        text = _COMMAND_WRAPPER.sub(" ", m.content).strip() if "<command-" in m.content else m.content
        if not says_something(text):
            continue
        out.append(m if text is m.content else replace(m, content=text))
    return tuple(out) if out else every


_DEFAULT_USER = "default"


# --- reading the text ---------------------------------------------------------------

_FENCE_OPEN = re.compile(r"^ {0,3}(?P<fence>`{3,}(?=[^`]*$)|~{3,})")
_REDACTED = re.compile(r"\[REDACTED:[^\]\n]*\]")
_URL = re.compile(r"(?:https?://|www\.)\S+", re.IGNORECASE)
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_SPACES = re.compile(r"\s+")
# Separators inside a multi-word alias or name: "docker compose", "docker-compose",
# "docker_compose", "next.js", "nextjs" are one spelling.
_SEPARATORS = re.compile(r"[\s._-]+")


def _without_code(text: str) -> str:
    """The text with fenced code blocks removed; an unclosed fence runs to the end (CommonMark)."""
    if "```" not in text and "~~~" not in text:  # no line can open a fence
        return "\n".join(text.splitlines())
    out: list[str] = []
    fence = ""
    for line in text.splitlines():
        if fence:
            stripped = line.strip()
            if stripped.startswith(fence) and set(stripped) == {fence[0]}:
                fence = ""
            continue
        m = _FENCE_OPEN.match(line)
        if m:
            fence = m["fence"]
            out.append("")  # a fence ends a paragraph
            continue
        out.append(line)
    return "\n".join(out)


# Several extractors read each message, and the summarizer calls them one by one, so
# what they read is kept per message text (a day's worth; pure, so only time is saved).
_PER_MESSAGE = 1024


@lru_cache(maxsize=_PER_MESSAGE)
def _prose(text: str) -> str:
    prose = _REDACTED.sub(" ", _without_code(text))
    return PLACEHOLDER_RE.sub(" ", prose) if "[" in prose else prose


def _readable(day_text: DayText, roles: frozenset[str] = _CONVERSATION_ROLES) -> list[DayMessage]:
    return [m for m in day_text.messages if not m.flagged and m.role in roles]


def readable_messages(day_text: DayText) -> list[DayMessage]:
    """The day's conversation: unflagged user and assistant messages, in order."""
    return _readable(day_text)


def _local(ts: datetime, tz: tzinfo) -> datetime:
    """``ts`` in ``tz``; a naive one is read in ``tz``, never in the machine's zone."""
    return ts.replace(tzinfo=tz) if ts.tzinfo is None else ts.astimezone(tz)


def _local_day(message: DayMessage, day_text: DayText) -> date:
    return day_text.day if message.ts is None else _local(message.ts, day_text.tz).date()


_FLEXIBLE_JOIN = r"[\s._-]?"
_SPACED_JOIN = r"\s+"


def _flexible_parts(phrase: str) -> list[str]:
    return [p for p in _SEPARATORS.split(phrase) if p]


def _flexible(phrase: str) -> str:
    """A regex for a phrase whose separators may be any one separator or none."""
    return _FLEXIBLE_JOIN.join(re.escape(p) for p in _flexible_parts(phrase))


def _one_of(phrases: Iterable[str], parts_of: Callable[[str], list[str]], joiner: str) -> str:
    """The alternation of ``joiner.join(map(re.escape, parts_of(p)))`` over ``phrases``, in
    their order, with the alternatives that start with the same character grouped.

    For a pattern compiled with IGNORECASE this matches the same text at the same
    places, taking the same alternative: at one position only alternatives whose first
    character matches the text can match, and within a group the order is kept. The
    engine then tries one branch per first character rather than every alternative,
    which is most of the time a long alternation takes. Grouping is exact for ASCII
    first characters (under IGNORECASE two of them match the same text only when their
    lower cases are equal), so a list with any other first character is not grouped.
    """
    rows = [parts_of(p) for p in phrases]
    if not all(row and row[0] and row[0][0].isascii() for row in rows):
        return "|".join(joiner.join(map(re.escape, row)) for row in rows)
    groups: dict[str, list[str]] = {}
    for first, *more in rows:
        rest = re.escape(first[1:]) + "".join(joiner + re.escape(part) for part in more)
        groups.setdefault(first[0].lower(), []).append(rest)
    return "|".join(
        re.escape(c) + (rests[0] if len(rests) == 1 else "(?:" + "|".join(rests) + ")") for c, rests in groups.items()
    )


def _squash(text: str) -> str:
    return _SEPARATORS.sub("", text.lower())


def _bounded(field: str, items: Iterable[str]) -> tuple[str, ...]:
    """First spelling of each item, case-insensitively; too-long items and placeholders dropped; cut to the bound."""
    most, longest = LIST_BOUNDS[field]
    out: list[str] = []
    seen: set[str] = set()
    for item in items:
        key = item.lower()
        if not item or len(item) > longest or key in seen or is_placeholder(item):
            continue
        seen.add(key)
        out.append(item)
        if len(out) == most:
            break
    return tuple(out)


# --- dates ----------------------------------------------------------------------------

_MONTHS: dict[str, int] = {
    # Indonesian, with the abbreviations people actually write (and two old spellings)
    "januari": 1,
    "februari": 2,
    "pebruari": 2,
    "maret": 3,
    "april": 4,
    "mei": 5,
    "juni": 6,
    "juli": 7,
    "agustus": 8,
    "september": 9,
    "oktober": 10,
    "november": 11,
    "nopember": 11,
    "desember": 12,
    "agu": 8,
    "agt": 8,
    "ags": 8,
    "agus": 8,
    "okt": 10,
    "des": 12,
    # English
    "january": 1,
    "february": 2,
    "march": 3,
    "may": 5,
    "june": 6,
    "july": 7,
    "august": 8,
    "october": 10,
    "december": 12,
    "aug": 8,
    "oct": 10,
    "dec": 12,
    # both
    "jan": 1,
    "feb": 2,
    "mar": 3,
    "apr": 4,
    "jun": 6,
    "jul": 7,
    "sep": 9,
    "sept": 9,
    "nov": 11,
}
_WEEKDAYS = frozenset(
    {
        "senin",
        "selasa",
        "rabu",
        "kamis",
        "jumat",
        "jum'at",
        "sabtu",
        "minggu",
        "ahad",
        "monday",
        "tuesday",
        "wednesday",
        "thursday",
        "friday",
        "saturday",
        "sunday",
    }
)


def _spaced(phrase: str) -> str:
    """A regex for a phrase whose words may be split by any run of whitespace."""
    return _SPACED_JOIN.join(re.escape(w) for w in phrase.split())


def _alternation(words: Iterable[str]) -> str:
    """Longest first, so at one position the longest spelling wins."""
    return _one_of(sorted(words, key=lambda w: (-len(w), w)), str.split, _SPACED_JOIN)


_MONTH_ALT = _alternation(_MONTHS)
_ORDINAL = r"(?:st|nd|rd|th)?"
# Every alternative starts after a non-word character; saying so once up front lets the
# engine pass over the inside of a word in one step.
_DATE_RE = re.compile(
    rf"""
    (?<!\w)(?:
    (?<![\w.,:/-])(?P<iy>\d{{4}})-(?P<im>\d{{1,2}})-(?P<id>\d{{1,2}})(?!\d)
  | (?<![\w.,:/-])(?P<dd>\d{{1,2}}){_ORDINAL}\s+(?P<dm>{_MONTH_ALT})(?!\w)\.?(?:,?\s+(?P<dy>\d{{4}})(?!\d))?
  | (?<!\w)(?P<mm>{_MONTH_ALT})\.?\s+(?P<md>\d{{1,2}}){_ORDINAL},?\s+(?P<my>\d{{4}})(?!\d)
    )""",
    re.IGNORECASE | re.VERBOSE,
)
_MIN_YEAR = 1900  # a four-digit "year" before this is a number, not a date worth linking


def _real_date(y: int, m: int, d: int) -> date | None:
    if y < _MIN_YEAR:
        return None
    try:
        return date(y, m, d)
    except ValueError:
        return None


def _date_of(m: re.Match, anchor: date) -> date | None:
    """The date one explicit date names, a missing year read as ``anchor``'s (the message's local day)."""
    if m["iy"]:
        return _real_date(int(m["iy"]), int(m["im"]), int(m["id"]))
    if m["dd"]:
        year = int(m["dy"]) if m["dy"] else anchor.year
        return _real_date(year, _MONTHS[m["dm"].lower()], int(m["dd"]))
    return _real_date(int(m["my"]), _MONTHS[m["mm"].lower()], int(m["md"]))


@lru_cache(maxsize=_PER_MESSAGE)
def _dates_in(prose: str, anchor: date) -> tuple[date, ...]:
    """Every date the prose names, one per mention: explicit dates, then relative phrases.

    A relative phrase is read by ``transforms.timeq`` against ``anchor``, and stands for
    the first day of what it names: "kemarin" is that day, "minggu lalu" the Monday of
    last week, "bulan lalu" the 1st of last month, "tahun lalu" January 1st.
    """
    found = [_date_of(m, anchor) for m in _DATE_RE.finditer(prose)]
    found += [r.start for r in timeq.relative(prose, anchor) if r.start.year >= _MIN_YEAR]
    return tuple(d for d in found if d is not None)


def extract_dates(day_text: DayText, *, today: date) -> tuple[date, ...]:
    """Dates the day's conversation refers to, sorted ascending.

    Explicit dates (``2026-10-14``, ``14 Oktober 2026``, ``14 Okt``, ``7 May 2023``,
    ``May 7, 2023``, ``May 7th 2023``), a missing year read as the year of the message's
    own local date; a month-first English date needs its year ("May 7" alone is too often
    "may"). Relative phrases (``kemarin``, ``lusa``, ``minggu lalu``, ``bulan depan``,
    ``3 hari lalu``, ``in two days``, ``hari Minggu lalu``, ...) are read by
    ``transforms.timeq``, recall's own grammar, against the message's local date, so
    they mean here what they mean in a recall query. A phrase that names more than a
    day (a week, a weekend, a month, a year, "the last 3 days") gives its first day:
    "minggu lalu" / "last week" is the Monday of the previous calendar week (weeks run
    Monday to Sunday), "bulan lalu" / "last month" the 1st of the previous month,
    "2 minggu lalu" the Monday of the week that holds the day 14 days back. Kept: real
    dates from 1900 on, not the day itself, not after ``today``; at most the bound, the
    most mentioned first, ties by closeness to the day.
    """
    counts: Counter[date] = Counter()
    for message in _readable(day_text):
        for found in _dates_in(_prose(message.content), _local_day(message, day_text)):
            if found != day_text.day and found <= today:
                counts[found] += 1
    most = LIST_BOUNDS["related_dates"][0]
    ranked = sorted(counts, key=lambda d: (-counts[d], abs((d - day_text.day).days), d))
    return tuple(sorted(ranked[:most]))


# --- technologies -------------------------------------------------------------------


def _technology_index() -> tuple[dict[str, str], re.Pattern]:
    """(squashed alias -> canonical name, one regex for every alias, longest first)."""
    by_key: dict[str, str] = {}
    for name, aliases in TECHNOLOGIES.items():
        for alias in aliases:
            owner = by_key.setdefault(_squash(alias), name)
            if owner != name:
                raise ValueError(f"technologies.yaml: {alias!r} ({name}) reads the same as an alias of {owner}")
    ordered = sorted({a for v in TECHNOLOGIES.values() for a in v}, key=lambda a: (-len(a), a))
    one_of = _one_of(ordered, _flexible_parts, _FLEXIBLE_JOIN)
    return by_key, re.compile(r"(?<!\w)(?:" + one_of + r")(?!\w)", re.IGNORECASE)


_TECH_BY_KEY, _TECH_RE = _technology_index()


@lru_cache(maxsize=_PER_MESSAGE)
def _alias_spans(text: str) -> tuple[tuple[int, int, str, bool], ...]:
    """(start, end, canonical name, plain) of each alias in ``text``, in order. ``plain``: an alias that is an
    everyday word too (``EVERYDAY_TECHNOLOGY_WORDS``: "insects react to light", "rust on the gate"), written in
    lower case outside inline code; it counts only beside a technology that is not plain."""
    found = []
    code: list[tuple[int, int]] | None = None
    for m in _TECH_RE.finditer(text):
        written = m[0]
        plain = written.islower() and written in EVERYDAY_TECHNOLOGY_WORDS
        if plain:
            if code is None:
                code = [c.span() for c in _INLINE_CODE.finditer(text)] if "`" in text else []
            plain = not any(a < m.start() and m.end() < b for a, b in code)
        found.append((m.start(), m.end(), _TECH_BY_KEY[_squash(written)], plain))
    return tuple(found)


def _counted(texts: list[tuple[tuple[int, int, str, bool], ...]]) -> list[tuple[int, int, str]]:
    """(start, end, canonical name) of each alias of these texts' ``_alias_spans`` that counts, in order: a plain
    one only when the texts name a technology that is not plain."""
    beside = any(not plain for spans in texts for *_, plain in spans)
    return [(start, end, name) for spans in texts for start, end, name, plain in spans if beside or not plain]


def _technology_spans(text: str) -> tuple[tuple[int, int, str], ...]:
    """(start, end, canonical name) of each alias in ``text`` that counts, in order (``_counted``)."""
    return tuple(_counted([_alias_spans(text)]))


def extract_technologies(day_text: DayText) -> tuple[str, ...]:
    """Canonical names from the gazetteer, in order of first mention.

    Aliases match case-insensitively on word boundaries, the longest at a position
    winning: "docker compose up" yields Docker Compose only, and Docker too only where
    "docker" is also written on its own. Inline code and URLs are read; code blocks not.
    An everyday word among the aliases ("react", "rust"), in lower case and outside
    inline code, counts only when the day names another technology.
    """
    counted = _counted([_alias_spans(_prose(m.content)) for m in _readable(day_text)])
    return _bounded("technologies", (name for *_, name in counted))


# --- people ---------------------------------------------------------------------------

_HONORIFICS = ("kak", "mas", "mbak", "pak", "bu", "bang", "om", "tante", "dek", "teh", "uda", "bapak", "ibu")
_SAME_HONORIFIC = {"bapak": "pak", "ibu": "bu"}  # "Bapak Joko" and "Pak Joko" are one person
_NAME = r"[A-ZÀ-Ö][a-zß-öø-ÿ]+"
_PERSON_RE = re.compile(
    r"(?<![\w.])(?:"
    rf"(?P<hon>(?i:{'|'.join(sorted(_HONORIFICS, key=len, reverse=True))}))[ \t]+"
    rf"(?P<name>{_NAME}|[A-Z]{{2,3}})(?:[ \t]+(?P<name2>{_NAME}))?"
    "|"
    rf"(?P<title>Mr|Mrs|Ms|Mx|Dr|dr|Prof)(?P<dot>\.?)[ \t]+(?P<tname>{_NAME})(?:[ \t]+(?P<tname2>{_NAME}))?"
    r")(?!\w)"  # "Mas Bayu's wedding" names Mas Bayu
)
# Every word of a technology's aliases: "Compose" alone is Docker Compose, not a person.
_TECH_WORDS = frozenset(
    w for aliases in TECHNOLOGIES.values() for a in aliases for w in _SEPARATORS.split(a.lower()) if w
)
_NOT_A_NAME = STOPWORDS | _WEEKDAYS | frozenset(_MONTHS) | frozenset(_TECH_BY_KEY) | _TECH_WORDS
# Capitalised words that recur mid-sentence without naming a person: places, the
# assistants themselves, and words English capitalises.
_NOT_PEOPLE = NOT_PEOPLE


def _is_name(word: str | None) -> bool:
    if not word:
        return False
    return word.lower() not in _NOT_A_NAME and _squash(word) not in _TECH_BY_KEY


def _speaker(day_text: DayText) -> str | None:
    """The user's name, when the day's own unflagged text uses it (``gading`` -> Gading)."""
    uid = day_text.user_id.strip()
    if not uid or uid.lower() == _DEFAULT_USER or not uid.replace("-", "").replace("_", "").isalpha():
        return None
    name = uid.title()
    pattern = re.compile(rf"(?<!\w){re.escape(name)}(?!\w)")
    return name if any(pattern.search(_prose(m.content)) for m in _readable(day_text)) else None


def display_name(day_text: DayText) -> str | None:
    """What a summary calls the user: the configured name, else their id's name when the text uses it, else None."""
    return day_text.user_name or _speaker(day_text)


_WIKI_LINK = re.compile(r"^\[\[([^\[\]|]+)(?:\|[^\[\]]*)?\]\]$")


def _declared(name: str) -> str:
    """A name as a transcript declares it, an Obsidian link (``[[Dimas]]``, ``[[Dimas|Dim]]``) read as its note."""
    name = " ".join(name.split())
    m = _WIKI_LINK.match(name)
    return " ".join(m[1].split()) if m else name.lstrip("@")


def _people_in(text: str) -> Iterator[tuple[str, str]]:
    """(as written, dedupe key) for each honorific or title followed by a capitalised name."""
    for m in _PERSON_RE.finditer(text):
        if m["hon"]:
            first, second, lead = m["name"], m["name2"], m["hon"].lower()
            title = lead.capitalize()
            key_lead = _SAME_HONORIFIC.get(lead, lead)
        else:
            first, second = m["tname"], m["tname2"]
            title = m["title"].capitalize() + m["dot"]
            key_lead = m["title"].lower()
        if not _is_name(first):
            continue
        name = f"{first} {second}" if _is_name(second) else first
        yield f"{title} {name}", f"{key_lead} {name.lower()}"


@lru_cache(maxsize=_PER_MESSAGE)
def _people_of(content: str) -> tuple[tuple[str, str], ...]:
    return tuple(_people_in(_prose(content)))


# A speaker prefix: a line that opens with a name and a colon, as in a pasted chat
# ("Nadia: Hey Sekar!"). The labels below open lines as often and name nobody.
SPEAKER_PREFIX = re.compile(rf"^[ \t>*-]*(?P<name>{_NAME}(?:[ \t]{_NAME})?|#\w{{1,20}}#)[ \t]*:[ \t]+(?=\S)", re.M)
_LABELS = frozenset(
    """
note notes error errors warning warnings step output input example examples update updates todo question
answer user assistant system human bot tip tips hint summary result results response reply info debug fix
problem solution cause reason date time subject from to cc re fwd host port password status edit ps nb
important update source sources link links file files command commands code log logs test tests item
catatan contoh jawaban pertanyaan hasil langkah solusi masalah penyebab alasan penting sumber tanggal waktu
judul isi balasan perintah
""".split()
)


def _is_speaker(name: str) -> bool:
    if name.startswith("#"):
        return False  # "#Person1#" labels a speaker but is not anybody's name
    return all(_is_name(w) and w.lower() not in _LABELS for w in name.split())


@lru_cache(maxsize=_PER_MESSAGE)
def _speakers_of(content: str) -> tuple[str, ...]:
    return tuple(m["name"] for m in SPEAKER_PREFIX.finditer(_without_code(content)) if _is_speaker(m["name"]))


# A capitalised name inside a sentence: after a lower-case word or a comma, and not
# beside another capitalised word ("sama Nadia" names Nadia; "Docker Compose" and
# "Home Assistant" name products). Its capital says "a name" where a sentence's first
# word's does not.
# Nor is a word followed by what names a thing of code ("the Spinner class").
_MID_NAME = re.compile(
    rf"(?:(?<=[\s(])|^)(?P<prev>[a-z][\w'-]*,?|,)[ \t]+(?P<name>{_NAME})(?![\w-])(?![ \t]+[A-Z])"
    r"(?![ \t]+(?:class|classes|object|objects|component|components|module|modules|method|methods|function"
    r"|functions|widget|widgets|enum|interface|struct|package|library|constructor|decorator|exception)\b)"
)


# An article or a demonstrative before a capitalised word names a thing ("use the Spinner"), not a person; so
# does a keyword of code, in a traceback or a linter's output pasted as prose ("from aider.utils import Spinner").
_NOT_BEFORE_A_NAME = frozenset(
    "the a an this these those each every another "
    "import class def extends implements raise struct enum interface func function const var".split()
)


@lru_cache(maxsize=_PER_MESSAGE)
def _names_of(content: str) -> tuple[frozenset[str], frozenset[str]]:
    """(capitalised words inside a sentence, every capitalised word) of a message's prose."""
    text = _INLINE_CODE.sub(" ", _URL.sub(" ", _prose(content)))
    mid = frozenset(
        n
        for m in _MID_NAME.finditer(text)
        if _is_name(n := m["name"])
        and n.lower() not in _LABELS
        and n.lower() not in _NOT_PEOPLE
        and m["prev"] not in _NOT_BEFORE_A_NAME
    )
    anywhere = frozenset(re.findall(rf"(?<![\w-]){_NAME}(?![\w-])", text))
    return mid, anywhere


@lru_cache(maxsize=8)  # the digest, the tags and the summary's field each ask for the same day's people
def extract_people(day_text: DayText) -> tuple[str, ...]:
    """The people of a day, in order: the user, the transcripts' own, speakers, honorifics, recurring names.

    - The user, when they wrote that day: by the configured name (``user_name``, config
      ``names``), else by ``user_id`` title-cased, and then only when the text itself
      uses that name (the id of an account is not a person).
    - The names the day's transcripts declare in their frontmatter (``people``), an
      Obsidian link read as the name of its note; a placeholder is never one.
    - Speaker prefixes of a pasted chat (``Nadia: Hey Sekar!``): a capitalised name
      opening a line before a colon, when somebody speaks twice (a shopping list's
      ``Sayur:``, ``Buah:`` labels do not). Labels that open lines as often (``Note:``,
      ``Error:``, ``Jawaban:``) are not names.
    - ``Kak|Mas|Mbak|Pak|Bu|Bang|Om|Tante|Dek|Teh|Uda|Bapak|Ibu`` or ``Mr.|Mrs.|Ms.|Dr.``
      followed by a capitalised name (one or two words; ``Pak RT`` counts), kept as
      written with the honorific capitalised. "Bu gurunya" (lower-case) is not a person,
      nor is an honorific before a weekday, month, stopword or technology. ``Bapak X`` and
      ``Pak X`` (``Ibu``/``Bu``) are one person: the first spelling wins.
    - A capitalised name written inside a sentence (after a lower-case word, not beside
      another capitalised word) and capitalised in two messages or more: the family and
      friends the user talks about ("sama Nadia"). A name already given with an
      honorific is not listed again bare. Not a name: a word after an article ("the
      Spinner") or a keyword of code ("import Spinner"), before a word of code ("the Spinner
      class"), or in ``lexicon.yaml``'s ``not_people`` (places, products, ``None``).

    Every name is the user's, declared by a transcript or in the day's unflagged text.
    A bare name already part of a declared or configured one ("Dimas" beside "Dimas
    Pratama") is not listed again.
    """
    readable = _readable(day_text)
    out: list[str] = []
    seen: set[str] = set()

    def add(person: str, *keys: str) -> None:
        if person.lower() in seen or any(k in seen for k in keys):
            return
        seen.update({person.lower(), *keys})
        out.append(person)

    known = [n for n in (day_text.user_name, *map(_declared, day_text.people)) if n]
    parts = {w.lower() for n in known if " " in n for w in n.split() if _is_name(w)}
    speaker = day_text.user_name or _speaker(day_text)
    if speaker and any(m.role == "user" for m in readable):
        add(speaker)
    for person in known[1 if day_text.user_name else 0 :]:
        add(person)
    seen |= parts
    prefixes = Counter(n for m in readable for n in _speakers_of(m.content))
    if prefixes and max(prefixes.values()) >= 2:  # a dialogue: somebody speaks twice (a list's labels do not)
        for name in prefixes:
            add(name)
    bare: dict[str, str] = {}  # bare name -> the honorific spelling that named it
    for message in readable:
        for person, key in _people_of(message.content):
            add(person, key)
            bare.setdefault(person.split(" ", 1)[1].lower(), person)
    inside: set[str] = set()
    messages_with: dict[str, set[int]] = {}
    for i, message in enumerate(readable):
        mid, anywhere = _names_of(message.content)
        inside |= mid
        for name in anywhere:
            messages_with.setdefault(name, set()).add(i)

    def first_said(name: str) -> tuple[int, int, str]:  # the message, then where in it: never a set's order
        i = min(messages_with[name])
        return i, readable[i].content.find(name), name

    for name in sorted(inside, key=first_said):
        if len(messages_with[name]) >= 2 and name.lower() not in bare:
            add(name)
    return _bounded("people", out)


# --- projects -------------------------------------------------------------------------

_IDENT = r"[A-Z][A-Za-z0-9]*(?:[-_][A-Za-z0-9]+)*|[a-z0-9]+(?:[-_][a-z0-9]+)+"
_PROJECT_RE = re.compile(rf"(?<![\w-])(?i:project|proyek|projek|repo)[ \t]+(?P<name>{_IDENT})(?![\w-])")
_CLITIC = re.compile(r"-(?:nya|ku|mu)$", re.IGNORECASE)  # "Kenang-nya" is "Kenang"


def _project_name(raw: str) -> str | None:
    name = _CLITIC.sub("", raw)
    if not (name[:1].isupper() or "-" in name or "_" in name):
        return None
    if name.isupper():
        return None  # an acronym: "repo NAS" is a place, not a project
    if name.lower() in _NOT_A_NAME or _squash(name) in _TECH_BY_KEY:
        return None
    return name


def extract_projects(day_text: DayText, *, known: tuple[str, ...]) -> tuple[str, ...]:
    """Configured project names found in the text (spelled as configured), and named projects.

    A known name matches case-insensitively on word boundaries. A named project is
    ``project|proyek|projek|repo X`` where X is a capitalised word or a kebab/snake-case
    identifier, not an acronym ("repo NAS"), stopword or technology; a clitic
    ("Kenang-nya") is dropped. Order of first mention.
    """
    known_res = [(k, re.compile(rf"(?<!\w){_flexible(k)}(?!\w)", re.IGNORECASE)) for k in known if k.strip()]
    spelled = {_squash(k): k for k, _ in known_res}
    found: list[tuple[int, int, str]] = []
    for i, message in enumerate(_readable(day_text)):
        text = _prose(message.content)
        for name, pattern in known_res:
            m = pattern.search(text)
            if m:
                found.append((i, m.start(), name))
        for m in _PROJECT_RE.finditer(text):
            project = _project_name(m["name"])
            if project:
                found.append((i, m.start("name"), spelled.get(_squash(project), project)))
    return _bounded("projects", (name for _, _, name in sorted(found, key=lambda f: (f[0], f[1]))))


# --- tags -----------------------------------------------------------------------------

_MAX_TAGS = 5
_TAG_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_WORD_RE = re.compile(r"^[^\W\d_]+(?:-[^\W\d_]+)*$")
_EDGE_PUNCT = "\"'“”‘’()[]{}<>*.,!?;:…"
_CODE_CHARS = re.compile(r"[/\\._=<>$@#{}\[\]()`|~^%&+*:;]")


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


_TECH_SLUGS = {name: _slug(name) for name in TECHNOLOGIES}


def _ascii(word: str) -> str:
    return unicodedata.normalize("NFKD", word).encode("ascii", "ignore").decode()


# Calendar words say when, not what: they are never tags (the words of the commonest
# relative phrases; ``transforms.timeq`` reads the phrases themselves).
_RELATIVE_DAY_WORDS = frozenset(
    {
        "after",
        "before",
        "besok",
        "bulan",
        "depan",
        "kemaren",
        "kemarin",
        "lalu",
        "last",
        "lusa",
        "minggu",
        "month",
        "next",
        "pekan",
        "sebulan",
        "seminggu",
        "tomorrow",
        "week",
        "yesterday",
    }
)
_CALENDAR_WORDS = _WEEKDAYS | frozenset(_MONTHS) | _RELATIVE_DAY_WORDS


@lru_cache(maxsize=_PER_MESSAGE)
def _content_words(content: str) -> tuple[str, ...]:
    """Candidate tags in order: technology slugs, then plain words that are not code, numbers or stopwords."""
    # Without URLs or inline code this is the prose itself, whose spans are known already.
    text = _INLINE_CODE.sub(" ", _URL.sub(" ", _prose(content)))
    words = []
    blanked = []
    last = 0
    for start, end, name in _technology_spans(text):
        words.append(_TECH_SLUGS[name])
        blanked.append(text[last:start])
        last = end
    blanked.append(text[last:])
    for chunk in " ".join(blanked).split():
        word = _tag_word(chunk)
        if word:
            words.append(word)
    return tuple(words)


# Words repeat, day after day: each spelling is judged once.
@lru_cache(maxsize=8192)
def _tag_word(chunk: str) -> str | None:
    """The tag a whitespace-separated chunk of prose stands for, if it is a content word."""
    word = chunk.strip(_EDGE_PUNCT)
    if not word or _CODE_CHARS.search(word) or not _WORD_RE.match(word):
        return None
    if any(a.islower() and b.isupper() for a, b in zip(word, word[1:], strict=False)):
        return None  # camelCase is code
    word = _CLITIC.sub("", _ascii(word).lower())
    if len(word) < 4 or not _TAG_RE.match(word) or word in STOPWORDS or word in _CALENDAR_WORDS:
        return None
    if all(part in STOPWORDS for part in word.split("-")):
        return None
    return word


def extract_tags(day_text: DayText) -> tuple[str, ...]:
    """Up to five lower-case kebab-case tags: the day's most characteristic content words.

    A word scores by the number of messages it appears in, then by its count, then
    by its first appearance. Stopwords (both languages), calendar words, the names of
    the people found, words under four letters, numbers, URLs and code-ish tokens never
    count; a technology alias counts as its canonical name's slug ("postgres" ->
    ``postgresql``).
    """
    names = {w.lower() for p in extract_people(day_text) for w in p.split()[-2:]}
    where: dict[str, set[int]] = {}
    count: Counter[str] = Counter()
    first: dict[str, int] = {}
    order = 0
    for i, message in enumerate(_readable(day_text)):
        for word in _content_words(message.content):
            if word in names:
                continue
            where.setdefault(word, set()).add(i)
            count[word] += 1
            first.setdefault(word, order)
            order += 1
    ranked = sorted(count, key=lambda w: (-len(where[w]), -count[w], first[w]))
    tags = (w for w in ranked if _TAG_RE.match(w) and len(w) <= LIST_BOUNDS["tags"][1])
    return _bounded("tags", tags)[:_MAX_TAGS]


# --- mood -----------------------------------------------------------------------------


def _phrase_regex(phrases: Iterable[str]) -> re.Pattern:
    r"""Any of the phrases, longest first; a phrase with a word character only as a whole word.

    Neighbouring word phrases share one ``(?<!\w)(?:...)(?!\w)``, which matches what
    each one wrapped in its own would, in the same order, and fails inside a word at once.
    """
    alts = []
    ordered = sorted(phrases, key=lambda p: (-len(p), p))
    # An emoji has no word boundaries; a word must not sit inside another word.
    for is_word, run in groupby(ordered, key=lambda p: bool(re.search(r"\w", p))):
        if is_word:
            alts.append(rf"(?<!\w)(?:{_one_of(run, str.split, _SPACED_JOIN)})(?!\w)")
        else:
            alts.extend(map(_spaced, run))
    return re.compile("|".join(alts), re.IGNORECASE)


_MOOD_RES = {mood: _phrase_regex(words) for mood, words in MOOD_WORDS.items()}
_LAUGHS = (
    (re.compile(r"(?<!\w)(?:ha){2,}h?(?!\w)", re.I), "haha"),
    (re.compile(r"(?<!\w)(?:he){2,}h?(?!\w)", re.I), "hehe"),
    (re.compile(r"(?<!\w)(?:wk){2,}w?(?!\w)", re.I), "wkwk"),
)
# Most messages hold no laugh and no mood word: one search for any of them (each a
# union of the patterns it stands for) spares the dozen scans that would find nothing.
_ANY_LAUGH = re.compile("|".join(pattern.pattern for pattern, _ in _LAUGHS), re.IGNORECASE)
_ANY_MOOD = _phrase_regex({p for words in MOOD_WORDS.values() for p in words})


def _user_prose(day_text: DayText) -> list[str]:
    return [_prose(m.content) for m in _readable(day_text, frozenset({"user"}))]


# --- signals: importance and mood ----------------------------------------------------

_SIGNAL_RE = _phrase_regex({p for phrases in SIGNALS.values() for p in phrases})
_SIGNAL_KIND = {p: kind for kind, phrases in SIGNALS.items() for p in phrases}
_MARKERS_RE = _phrase_regex(IMPORTANCE_MARKERS)
_LONG_DAY_CHARS = 2000
#: The problems, gravest first, and the importance each one guarantees a day.
_PROBLEMS = ("data_loss", "incident", "failure")
_FLOORS = {"data_loss": 6, "incident": 5, "failure": 3, "deadline": 3}
#: The mood of a day that reports a problem in no mood words of its own.
_PROBLEM_MOOD = {"data_loss": "anxious", "incident": "stressed", "failure": "frustrated"}
#: Moods a day with a problem left unsolved never has, and moods a day whose problems were sorted out never has.
_CHEERFUL = frozenset({"productive", "calm", "happy", "grateful", "excited"})
_SOLVED_AWAY = frozenset({"frustrated", "anxious", "stressed"})
_POSITIVE = frozenset(MOODS[: MOODS.index("neutral")])
_NEGATIVE = frozenset(MOODS[MOODS.index("neutral") + 1 :])
#: How far a model may move importance from the signal's value (never below the problem's floor).
IMPORTANCE_LEEWAY = 2
_CLAUSE_END = re.compile(r"[.,;:!?\n()\[\]]")
_WORD_TOKEN = re.compile(r"\w+(?:['’]\w+)*")
# A label answered by nothing: "errors: No known data errors", "errors: 0", "error: none".
_ANSWERED_NO = re.compile(
    r"\s*:\s*(?:no known|no errors?|none|nothing|0|tidak ada|nggak ada|gak ada)(?!\w)", re.IGNORECASE
)


@dataclass(frozen=True)
class DaySignals:
    """What the user's own words say about a day: its importance and mood, and why.

    ``reasons`` are ``kind: phrase`` for each signal found (``failure: gagal``,
    ``data_loss: data errors``, ``thanks: makasih banyak``, ``decision: sepakat``), in
    order of first mention, once each: lexicon phrases, never transcript text.
    ``importance_range`` and ``moods`` bound what a model may write instead.
    """

    importance: int
    mood: str
    importance_range: tuple[int, int]
    moods: tuple[str, ...]  # the moods a model may choose, in MOODS order
    reasons: tuple[str, ...]

    def bound_importance(self, value: int) -> int:
        """``value`` moved into ``importance_range``."""
        low, high = self.importance_range
        return max(low, min(high, value))

    def bound_mood(self, value: str) -> str:
        """``value`` when a model may choose it, else the signal's own mood."""
        return value if value in self.moods else self.mood


def _negated(text: str, start: int) -> bool:
    """Whether one of the two words before ``start``, in the same clause, is a negation."""
    clause = _CLAUSE_END.split(text[max(0, start - 60) : start])[-1]
    words = _WORD_TOKEN.findall(clause)
    return any(w.lower().replace("’", "'") in NEGATIONS for w in words[-2:])


def _pad(short: str, match: re.Match) -> str:
    return short.ljust(len(match[0]))


def _hits(pattern: re.Pattern, text: str) -> Iterator[re.Match]:
    return (
        m for m in pattern.finditer(text) if not _negated(text, m.start()) and not _ANSWERED_NO.match(text, m.end())
    )


def _phrase(match: re.Match) -> str:
    return " ".join(match[0].lower().split())


@lru_cache(maxsize=8)  # extract_importance, extract_mood and a model's bounds each ask for the same day
def day_signals(day_text: DayText) -> DaySignals:
    """Importance and mood from deterministic signals in the user's own words, in both languages.

    Read from unflagged user messages, code blocks left out; a phrase right after a
    negation in its clause ("no known data errors", "nggak capek", "belum berhasil")
    does not count.

    Importance, from 1 to 10: starting from 1, add +1 per 4 user messages (at most +3),
    +1 per session beyond the first (at most +2), +1 per marker of a decision, promise,
    plan, deadline or problem (at most +3) and +1 when the user wrote 2000 characters or
    more; then raise it to the floor of the gravest signal: data loss (ZFS "data
    errors", a failed backup, a dying disk) 6, an incident (outage, "server down",
    theft) 5, a failure ("error", "gagal", "rusak") or a deadline 3. A day with nothing
    readable is 1.

    Mood: each mood word (``lexicon.yaml`` moods) scores one, laughter of any length
    reading as its short form, and the highest score wins (a tie: the mood listed first
    in ``MOODS``). A problem is solved when relief ("akhirnya berhasil", "fixed")
    follows its last mention, and a failure also when thanks do ("makasih banyak"); lost
    data or an incident needs relief. A solved day's frustration, anxiety and stress
    written before the relief or thanks no longer count. A day with an unsolved problem is never
    productive, calm, happy, grateful or excited; without other mood words it takes
    the problem's mood (data loss: anxious, an incident: stressed, two failures or
    more: frustrated). Nothing found is ``neutral``.

    A model may move importance by ``IMPORTANCE_LEEWAY`` either way, never below the
    floor, and choose a mood from ``moods``: with an unsolved problem, no cheerful mood;
    with a solved one, no frustration, anxiety or stress; otherwise the signal mood's
    side (positive or negative) and neutral, or any mood when the signal is neutral.
    """
    user_text = _user_prose(day_text)
    sessions = {m.session_id for m in day_text.messages if not m.flagged}
    reasons: dict[str, None] = {}
    moods: list[tuple[tuple[int, int], str]] = []
    problems: list[tuple[tuple[int, int], str]] = []
    relief_at: list[tuple[int, int]] = []
    thanks_at: list[tuple[int, int]] = []
    markers = 0
    for i, raw in enumerate(user_text):
        text = raw
        if _ANY_LAUGH.search(text):
            for pattern, short in _LAUGHS:
                # padded to its length, so a mood word's place lines up with the signals'
                text = pattern.sub(partial(_pad, short), text)
        if _ANY_MOOD.search(text):
            for mood, pattern in _MOOD_RES.items():
                moods += [((i, m.start()), mood) for m in _hits(pattern, text)]
        for m in _hits(_SIGNAL_RE, raw):
            kind = _SIGNAL_KIND[_phrase(m)]
            reasons[f"{kind}: {_phrase(m)}"] = None
            if kind in ("relief", "thanks"):
                (relief_at if kind == "relief" else thanks_at).append((i, m.start()))
                continue
            markers += 1
            if kind in _PROBLEMS:
                problems.append(((i, m.start()), kind))
        for m in _hits(_MARKERS_RE, raw):
            reasons[f"decision: {_phrase(m)}"] = None
            markers += 1
    kinds = {k.split(":", 1)[0] for k in reasons}
    floor = max((_FLOORS[k] for k in kinds if k in _FLOORS), default=IMPORTANCE_MIN)
    score = (
        1
        + min(3, len(user_text) // 4)
        + min(2, max(0, len(sessions) - 1))
        + min(3, markers)
        + (1 if sum(len(t) for t in user_text) >= _LONG_DAY_CHARS else 0)
    )
    importance = max(IMPORTANCE_MIN, min(IMPORTANCE_MAX, max(score, floor)))

    # Relief solves any problem; thanks answer a failure, not lost data or an incident.
    last_grave = max((at for at, kind in problems if kind != "failure"), default=None)
    last_failure = max((at for at, kind in problems if kind == "failure"), default=None)
    last_relief = max(relief_at, default=None)
    last_solver = max(relief_at + thanks_at, default=None)
    unsolved = (last_grave is not None and (last_relief is None or last_relief < last_grave)) or (
        last_failure is not None and (last_solver is None or last_solver < last_failure)
    )
    solved = bool(problems) and not unsolved
    scores: Counter[str] = Counter()
    for at, mood in moods:
        if solved and mood in _SOLVED_AWAY and last_solver is not None and at < last_solver:
            continue
        if unsolved and mood in _CHEERFUL:
            continue
        scores[mood] += 1
    best = max(MOODS, key=lambda mood: (scores[mood], -MOODS.index(mood)))
    mood = best if scores[best] > 0 else "neutral"
    if mood == "neutral" and unsolved:
        found = [kind for _, kind in problems]
        gravest = min(found, key=_PROBLEMS.index)
        if gravest != "failure" or found.count("failure") >= 2:
            mood = _PROBLEM_MOOD[gravest]

    allowed: frozenset[str]
    if unsolved:
        allowed = frozenset(MOODS) - _CHEERFUL
    elif solved:
        allowed = frozenset(MOODS) - _SOLVED_AWAY
    elif mood == "neutral":
        allowed = frozenset(MOODS)
    else:
        allowed = (_POSITIVE if mood in _POSITIVE else _NEGATIVE) | {"neutral"}
    low = max(floor, importance - IMPORTANCE_LEEWAY, IMPORTANCE_MIN)
    high = min(IMPORTANCE_MAX, importance + IMPORTANCE_LEEWAY)
    return DaySignals(
        importance=importance,
        mood=mood,
        importance_range=(low, high),
        moods=tuple(m for m in MOODS if m in allowed),
        reasons=tuple(reasons),
    )


def extract_mood(day_text: DayText) -> str:
    """One of ``MOODS``, from the user's own words and the day's signals (``day_signals``)."""
    return day_signals(day_text).mood


def extract_importance(day_text: DayText) -> int:
    """How much the day matters, from 1 to 10 (``day_signals``)."""
    return day_signals(day_text).importance


# --- sentences ------------------------------------------------------------------------

# Never end a sentence: titles, "e.g."-style, and initials (checked separately).
_ABBREV_NEVER = frozenset(
    {
        "mr",
        "mrs",
        "ms",
        "mx",
        "dr",
        "prof",
        "st",
        "jr",
        "sr",
        "vs",
        "cf",
        "e.g",
        "i.e",
        "eg",
        "ie",
        "no",
        "nos",
        "fig",
        "approx",
        "jl",
        "jln",
        "rp",
        "yth",
        "yg",
        "dgn",
        "utk",
        "spt",
        "tgl",
        "hlm",
        "kec",
        "kab",
        "prov",
        "drs",
        "ir",
        "s.d",
        "a.n",
        "u.p",
        "dsj",
        "pt",
        "cv",
        "tbk",
    }
)
# End a sentence only when a capital follows: "buah, sayur, dll. semuanya" goes on.
_ABBREV_LIST_END = frozenset({"dll", "dsb", "dst", "dkk", "tsb", "sbb", "etc", "al"})
_BOUNDARY = re.compile(r"[.!?…]+[\"'”’)\]]*(?=\s|$)")
_LIST_ITEM = re.compile(r"^\s{0,3}(?:[-*+•]|\d{1,3}[.)])\s+")
_QUOTE = re.compile(r"^\s{0,3}(?:>\s?)+")
_HEADER = re.compile(r"^\s{0,3}#{1,6}(?:\s|$)")
_RULE = re.compile(r"^\s{0,3}(?:[-*_]\s*){3,}$")
_HAS_WORD = re.compile(r"\w")


def _blocks(text: str) -> Iterator[str]:
    """Paragraphs and list items of the text, code, headers, tables and rules left out."""
    lines: list[str] = []
    for line in _without_code(text).splitlines():
        if ">" in line:
            line = _QUOTE.sub("", line)
        # The guards are the characters each pattern needs: most lines hold none of them.
        if (
            not line.strip()
            or ("#" in line and _HEADER.match(line))
            or (("-" in line or "*" in line or "_" in line) and _RULE.match(line))
            or line.lstrip().startswith("|")
        ):
            if lines:
                yield " ".join(lines)
            lines = []
            continue
        item = _LIST_ITEM.match(line)
        if item:
            if lines:
                yield " ".join(lines)
            lines = [line[item.end() :].strip()]
        else:
            lines.append(line.strip())
    if lines:
        yield " ".join(lines)


def _is_boundary(block: str, m: re.Match) -> bool:
    if m[0].rstrip("\"'”’)]") != ".":
        return True  # "!", "?", "…" and runs like "..." or "?!" always end a sentence
    before = block[: m.start()].rsplit(None, 1)  # the word before the stop
    token = before[-1].lstrip("(\"'“‘[").lower() if before else ""
    if len(token) == 1 and token.isalpha():
        return False  # an initial: "A. Rahman"
    if token in _ABBREV_NEVER:
        return False
    if token in _ABBREV_LIST_END:
        return block[m.end() :].lstrip()[:1].isupper()
    return True


def _split(block: str) -> Iterator[str]:
    start = 0
    for m in _BOUNDARY.finditer(block):
        if _is_boundary(block, m):
            yield block[start : m.end()].strip()
            start = m.end()
    yield block[start:].strip()


def sentences_of(text: str) -> tuple[str, ...]:
    """Every sentence of ``text``, as ``first_sentences`` finds them."""
    out: list[str] = []
    for block in _blocks(text):
        block = _SPACES.sub(" ", block).strip()
        out += [s for s in _split(block) if _HAS_WORD.search(s)]
    return tuple(out)


def first_sentences(text: str, n: int) -> tuple[str, ...]:
    """The first ``n`` sentences of ``text``, whitespace collapsed.

    Sentences end at ``.``, ``!``, ``?`` or ``…`` followed by a space or the end, but not
    after an abbreviation (``dr.``, ``e.g.``, ``yg.``; ``dll.``/``dsb.``/``etc.`` only
    before a capital) or an initial; ``1.5``, ``next.js`` and URLs have no space after
    their dots. A paragraph, list item or quote line ends a sentence too. Fenced code
    blocks, headers, tables and rules are skipped. The last piece of a paragraph is
    returned even without closing punctuation.
    """
    if n <= 0:
        return ()
    out: list[str] = []
    for block in _blocks(text):
        block = _SPACES.sub(" ", block).strip()
        for sentence in _split(block):
            if re.search(r"\w", sentence):
                out.append(sentence)
                if len(out) == n:
                    return tuple(out)
    return tuple(out)


# --- sentences a summary may quote (transforms.digest picks them) -----------------------

_QUOTE_CHARS = 160
_MD_LINK = re.compile(r"!?\[([^\]\n]*)\]\([^)\s]*\)")
# Only asterisks: underscores are far more often code (__init__, snake_case) than emphasis.
_EMPHASIS = re.compile(r"(?<![\w*])(\*{1,3})(?=\S)(.+?)(?<=\S)\1(?![\w*])")
_INNER_STOP = re.compile(r"[.!?…]+(?=\s)")
_LETTERS = re.compile(r"[^\W\d_]+")
# A token of code rather than prose: a file's name or path ("aider/utils.py"), a snake_case name, a test run's dots.
_CODEISH = re.compile(
    r"\w\.(?:py|pyi|js|mjs|ts|tsx|jsx|md|json|jsonl|ya?ml|toml|txt|sh|rs|go|java|c|h|cc|cpp|hpp|rb|php|lock|cfg"
    r"|ini|sql|html|css|ipynb|log|conf)\b|[a-z0-9]_[a-z0-9]|\.{3,}"
)
_TAIL = re.compile(r"[.!?…]+[\"'”’)\]]*$")


def _two_content_words(words: list[str]) -> bool:
    n = 0
    for w in words:
        if w.lower() not in STOPWORDS:
            n += 1
            if n == 2:
                return True
    return False


def clean_sentence(sentence: str) -> str | None:
    """A sentence fit to quote: no markers, code ticks or markdown, ending in . ? or !, ≤ 160 chars."""
    if "[REDACTED" in sentence:
        return None
    s = _MD_LINK.sub(r"\1", sentence) if "](" in sentence else sentence
    if "*" in s:
        s = _EMPHASIS.sub(r"\2", s)
    s = s.replace("`", "")
    if not s.isprintable():
        s = "".join(c for c in s if c.isprintable())
    s = _SPACES.sub(" ", s).strip()
    words = _LETTERS.findall(s)
    if len(words) < 3 or not _two_content_words(words):
        return None  # "Oke makasih ya!" says nothing
    if _CODEISH.search(s):  # a path or a test run's line says nothing either: "aider/utils.py;", "test_x.py ..F"
        if len(_LETTERS.findall(" ".join(t for t in s.split() if not _CODEISH.search(t)))) < 3:
            return None
    tail = _TAIL.search(s)
    body, end = (s[: tail.start()], tail[0]) if tail else (s, "")
    # A stop left inside belongs to an abbreviation or an initial; other splitters would cut there.
    if "." in body or "!" in body or "?" in body or "…" in body:
        body = _INNER_STOP.sub("", body)
    if len(body) + len(end) > _QUOTE_CHARS:
        cut = body[: _QUOTE_CHARS - 3]
        space = cut.rfind(" ")
        return (cut[:space] if space > _QUOTE_CHARS // 2 else cut).rstrip(" ,;:-–—(\"'") + "..."
    end = end.replace("…", "...")
    if not end or end[-1] not in ".!?":
        end += "."
    return body.rstrip(" ,;:-–—") + end
