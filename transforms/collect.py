"""Cut what is new in an agent's own log into segments: one per (session, local day).

Pure: bytes in, segments out; no I/O, no clock (eligibility is a function the caller
gives). ``flows.stages.collect`` reads the sources and writes the segments.

An agent's log grows by appending (Claude Code and Codex JSONL, aider's markdown).
Each night the collector hands over the lines after what it took before, and
``plan`` decides what to take now:

- Only complete lines: an unterminated last line may still be being written.
- Lines are grouped by (session, local day) in order of first appearance, so a
  session that crosses midnight becomes two segments. A line with no time of its own
  (a Claude Code ``summary``, a blank or unreadable line) joins the line before it;
  leading ones join the first dated line after them, else the group the last night
  ended in (``last``).
- Taking stops at the first line whose day is not eligible yet (the grace period):
  the offset stays there, and the rest waits for its night. What was taken is always
  a prefix of the new bytes, so the next night starts exactly where this one ended.
- A segment must read alone. Codex names its session only in the first record
  (``session_meta``) and aider dates a session only in its header line (``# aider
  chat started at ...``); a segment that does not begin with its session's opening
  record gets that record put before its lines (``context``). The segment is then
  the exact bytes taken, behind at most that one line.

A segment is one transcript of the day's archive folder, and the load reads it with
the format's importer (``transforms.segments``).

``plan`` reads the lines one at a time and gives each segment as byte ranges of the
new part (``Planned``), so the collector streams a log of any size.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

#: What each line-based source kind is, as an import format, and the extension of its segments.
LINE_KINDS = {"claude_code": ("claude_code", ".jsonl"), "codex": ("codex", ".jsonl"), "aider": ("aider", ".md")}
SEGMENT_PREFIX = "collected-"

_AIDER_HEADER = re.compile(rb"^# aider chat started at (.+?)\s*$")
_NAME_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True, slots=True)
class Planned:
    """A segment to write, by where its bytes lie: ``prefix`` then each (start, end) of the new part, in order."""

    session: str  # the session's key in the log (a session id, or an opening record)
    day: dt.date
    prefix: bytes  # the opening record put before its lines, or b""
    ranges: tuple[tuple[int, int], ...]  # runs of consecutive lines, offsets into the new part
    offset: int = 0  # where its first line taken starts in the source file
    first_day: dt.date | None = None  # the day its session began in this file, when that is an earlier day

    @property
    def size(self) -> int:
        return len(self.prefix) + sum(b - a for a, b in self.ranges)


@dataclass(frozen=True, slots=True)
class Plan:
    """What ``plan`` decides, each segment given by where its bytes lie."""

    segments: tuple[Planned, ...]
    taken: int  # bytes of the new part consumed (always whole lines)
    context: bytes | None  # the opening record in force at the new offset (Codex session_meta, aider header)
    last: tuple[str, str] | None  # (session, ISO day) of the last line taken, for the next night's undated lines
    waiting_days: tuple[dt.date, ...]  # days seen in the complete lines not taken yet
    lines: int  # lines taken
    first_days: dict[str, str] = field(default_factory=dict)  # session -> ISO day it began, this night's included


@dataclass(frozen=True, slots=True)
class _Line:
    start: int
    end: int
    session: str | None  # None: joins its neighbour's group
    day: dt.date | None
    opening: bytes | None  # the line itself when it is its session's opening record


def plan(
    kind: str,
    lines: Iterable[bytes],
    *,
    context: bytes | None,
    last: tuple[str, str] | None,
    tz: dt.tzinfo,
    eligible: Callable[[dt.date], bool],
    undated_day: dt.date,
    start: int = 0,
    latest: dt.date | None = None,
    first_days: dict[str, str] | None = None,
) -> Plan:
    """What to take of the new part of a ``kind`` in ``LINE_KINDS``, from its complete lines in order (each
    with its line end, as ``bytes.splitlines(keepends=True)`` cuts them), keeping none of them.

    ``context``: the opening record in force at the offset; ``last``: the group the
    previous night ended in; ``undated_day``: the day of lines with no time at all
    and no group to join (a headerless aider log): the file's modification day.
    ``start``: where the new part starts in the file (segments record their offsets).
    ``first_days``: the day each session began in this file, from the nights before; a
    segment of a later day names it (``Planned.first_day``), so its session is read as
    ``<id>@<day>``, as ``kenang import`` of the same file names it.
    ``latest``: a line dated after this day (an impossible time) is taken at once, in a
    segment of its own that ingest quarantines with the reason, so one bad time never
    holds back the lines after it.

    Each line is read once and only its place, session and day are kept (an opening
    record's bytes too), so a log of any size is planned in memory bounded by its line
    count; the caller copies each segment's ranges from the file.
    """
    read = _aider_line if kind == "aider" else _codex_line if kind == "codex" else _claude_code_line
    kept: list[_Line] = []
    ctx = context
    session_of_ctx = _session_of(kind, ctx, tz)
    pos = 0
    same: dict[object, object] = {}  # one object per distinct session and day: 200,000 lines hold a few
    for raw in lines:
        session, day, opening = read(raw, tz)
        if opening:
            assert session is not None, "every reader names the session of an opening line"
            ctx, session_of_ctx = raw, (session, day)
        elif kind != "claude_code" and session is None:
            session = session_of_ctx[0] if session_of_ctx else None
            if kind == "aider":  # aider dates every line by its session's header; before any header, the file's day
                session, day = session_of_ctx or (f"undated-{undated_day.isoformat()}", undated_day)
        if kind == "aider" and day is None:
            day = undated_day  # a header whose time cannot be read: its session is dated like an undated log
        session, day = same.setdefault(session, session), same.setdefault(day, day)  # type: ignore[assignment]
        kept.append(_Line(pos, pos + len(raw), session, day, raw if opening else None))
        pos += len(raw)
    taken_now = eligible if latest is None else (lambda d: d > latest or eligible(d))
    return _group(
        kind,
        kept,
        context=context,
        last=last,
        eligible=taken_now,
        undated_day=undated_day,
        start=start,
        first_days=dict(first_days or {}),
    )


def _group(
    kind: str,
    lines: list[_Line],
    *,
    context: bytes | None,
    last: tuple[str, str] | None,
    eligible: Callable[[dt.date], bool],
    undated_day: dt.date,
    start: int,
    first_days: dict[str, str],
) -> Plan:
    groups: dict[tuple[str, dt.date], list[_Line]] = {}
    openings: dict[str, bytes] = {}
    ctx = context
    current: tuple[str, dt.date] | None = (last[0], dt.date.fromisoformat(last[1])) if last else None
    pending: list[_Line] = []  # undated lines waiting for a group
    taken_end = 0
    stop: int | None = None
    for i, line in enumerate(lines):
        if line.opening is not None:
            ctx = line.opening
        if line.day is not None and line.session is not None:
            key = (line.session, line.day)
        elif line.day is not None and current is not None:
            key = (current[0], line.day)
        elif line.session is not None and current is not None and line.session == current[0]:
            key = current
        else:
            key = None
        if key is None:
            pending.append(line)
            continue
        if not eligible(key[1]):
            stop = i
            break
        if ctx is not None:
            openings.setdefault(key[0], ctx)
        group = groups.setdefault(key, [])
        group.extend(pending)
        group.append(line)
        pending = []
        current = key
        taken_end = line.end
    if stop is None and pending:
        if current is None and all(line.session is None for line in pending):
            current = (f"undated-{undated_day.isoformat()}", undated_day)  # nothing dated at all: the file's day
        if current is not None and eligible(current[1]):
            groups.setdefault(current, []).extend(pending)
            taken_end = pending[-1].end
            pending = []
    rest = lines[stop:] if stop is not None else pending
    waiting = tuple(sorted({line.day for line in rest if line.day is not None}))
    segments = []
    for (session, day), members in groups.items():
        opening = openings.get(session)
        prefix = b""
        if kind != "claude_code" and opening is not None and members[0].opening is None:
            prefix = opening
        began = dt.date.fromisoformat(first_days.setdefault(session, day.isoformat()))
        segments.append(
            Planned(session, day, prefix, _runs(members), start + members[0].start, began if began < day else None)
        )
    end_ctx = _context_before([line for line in lines if line.end <= taken_end], context)
    taken_lines = sum(len(m) for m in groups.values())
    return Plan(
        tuple(segments),
        taken_end,
        end_ctx,
        (current[0], current[1].isoformat()) if current else None,
        waiting,
        taken_lines,
        first_days,
    )


def _runs(members: list[_Line]) -> tuple[tuple[int, int], ...]:
    """The members' byte ranges, each run of adjacent lines as one range."""
    out: list[list[int]] = []
    for m in members:
        if out and out[-1][1] == m.start:
            out[-1][1] = m.end
        else:
            out.append([m.start, m.end])
    return tuple((a, b) for a, b in out)


def _context_before(lines: list[_Line], context: bytes | None) -> bytes | None:
    """The opening record in force after ``lines``: the last one among them, else the one before them."""
    for line in reversed(lines):
        if line.opening is not None:
            return line.opening
    return context


def _session_of(kind: str, context: bytes | None, tz: dt.tzinfo) -> tuple[str, dt.date | None] | None:
    if context is None:
        return None
    read = _aider_line if kind == "aider" else _codex_line
    session, day, _opening = read(context, tz)
    return (session, day) if session is not None else None


# --- one line of each format ------------------------------------------------------------


def _json_line(raw: bytes) -> dict | None:
    try:
        record = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    return record if isinstance(record, dict) else None


def _day(value: object, tz: dt.tzinfo) -> dt.date | None:
    """The local day of an ISO time, read as ``transforms.imports`` reads it; None if it has none."""
    if not isinstance(value, str):
        return None
    try:
        ts = dt.datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    try:
        return (ts.replace(tzinfo=tz) if ts.tzinfo is None else ts).astimezone(tz).date()
    except (OverflowError, ValueError):
        return None


def _claude_code_line(raw: bytes, tz: dt.tzinfo) -> tuple[str | None, dt.date | None, bool]:
    record = _json_line(raw)
    if record is None:
        return None, None, False
    sid = record.get("sessionId")
    return (sid if isinstance(sid, str) and sid.strip() else None), _day(record.get("timestamp"), tz), False


def _codex_line(raw: bytes, tz: dt.tzinfo) -> tuple[str | None, dt.date | None, bool]:
    record = _json_line(raw)
    if record is None:
        return None, None, False
    payload = record.get("payload")
    if record.get("type") == "session_meta" and isinstance(payload, dict) and isinstance(payload.get("id"), str):
        return payload["id"], _day(record.get("timestamp") or payload.get("timestamp"), tz), True
    if "type" not in record and isinstance(record.get("id"), str) and "instructions" in record:
        return record["id"], _day(record.get("timestamp"), tz), True  # the older rollouts' first line
    return None, _day(record.get("timestamp"), tz), False


def _aider_line(raw: bytes, tz: dt.tzinfo) -> tuple[str | None, dt.date | None, bool]:
    m = _AIDER_HEADER.match(raw.rstrip(b"\r\n"))
    if m is None:
        return None, None, False
    day = _day(m.group(1).decode("utf-8", "replace"), tz)
    return raw.rstrip(b"\r\n").decode("utf-8", "replace"), day, True


_SEGMENT_NAME = re.compile(
    r"^collected-([a-z0-9_]+)-(\d{4}-\d{2}-\d{2})-(.*)-([0-9a-f]{8})-(\d{12})-[0-9a-f]{12}\.[a-z]+$"
)


def lineage(path: str, generation: int) -> str:
    """8 hex naming one reading of one source file: a file read again whole (rewritten) starts a new one."""
    return hashlib.sha256(f"{path}\0{generation}".encode("utf-8", "surrogateescape")).hexdigest()[:8]


def segment_name(source: str, kind: str, segment: Planned, line: str, sha256: str) -> str:
    """``collected-<format>-<day>-<source>-<session, cut>-<lineage>-<offset>-<12 hex of the bytes>.<ext>``.

    The same bytes from the same place get the same name. The name carries what the
    bytes alone may not: the format to read them in, the day the collector put them on
    (a segment may hold no dated line), and which reading of which file they come from
    and where (``line``, the ``lineage``, and the offset): the load numbers a session's
    repeated messages across the segments of one reading in file order, as one file.
    ``sha256``: of the bytes written.
    """
    fmt, ext = LINE_KINDS[kind]
    label = segment.session.removeprefix("# aider chat started at ") if kind == "aider" else segment.session
    from transforms.redact import redact  # a label may quote a secret: redacted, then cut

    label = _NAME_UNSAFE.sub("_", redact(label).text).strip("_")[:40] or "session"
    if segment.first_day is not None:  # "@" never survives in a label: it marks a later day of the session
        label += "@" + segment.first_day.isoformat()
    return (
        f"{SEGMENT_PREFIX}{fmt}-{segment.day.isoformat()}-{source}-{label}-{line}-{segment.offset:012d}-"
        f"{sha256[:12]}{ext}"
    )


def segment_of(name: str) -> tuple[str, dt.date] | None:
    """(format, day) of a segment's file name; None for any other name."""
    m = _SEGMENT_NAME.match(name)
    if m is None:
        return None
    try:
        return m.group(1), dt.date.fromisoformat(m.group(2))
    except ValueError:
        return None


def segment_lineage(name: str) -> str | None:
    """The reading a segment comes from (``lineage``), from its name; None for any other file."""
    m = _SEGMENT_NAME.match(name)
    return m.group(4) if m else None


def segment_later_day(name: str) -> bool:
    """Whether a segment holds a later day of a session that began on an earlier one (its label says so)."""
    m = _SEGMENT_NAME.match(name)
    return m is not None and "@" in m.group(3)
