"""The import model, and an export as day transcripts (see the package docstring).

It imports no format module: the formats import it, and ``transforms.imports`` lists them.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class ImportedMessage:
    role: str  # user | assistant | system | tool
    content: str
    ts: dt.datetime | None  # aware, or None when the export has no time for it
    active: bool = True  # False: on an abandoned branch (an edited or regenerated turn)
    kind: str = "text"  # text | code | tool_use | tool_result | execution_output | quote | attachment | placeholder ...
    hidden: bool = False  # system prompts, custom instructions, meta records: kept, never shown as a turn
    source_id: str | None = None  # the export's own id for the message, when it has one


@dataclass(frozen=True, slots=True)
class Conversation:
    conversation_id: str  # the export's own id, else a content hash
    title: str | None
    messages: tuple[ImportedMessage, ...]  # in order: the active path first in time order, branches kept
    created: dt.datetime | None = None


@dataclass(frozen=True, slots=True)
class Export:
    format: str
    conversations: tuple[Conversation, ...]
    notes: tuple[str, ...] = field(default=())  # e.g. "line 9: invalid JSON (...); line skipped"
    file_dated: int = 0  # messages with no time of their own that the parser gave ``default_ts`` (the file's date)


def day_groups(conv: Conversation, tz: dt.tzinfo) -> list[tuple[dt.date | None, str, list[ImportedMessage]]]:
    """(local day, session id, messages) per day the conversation has messages on, days in order.

    Untimed messages join the day before them (leading ones, the first dated day).
    The first day's session id is ``<conversation_id>``, each later day's
    ``<conversation_id>@<date>``. A conversation with no timestamps at all is one group
    with day ``None`` (the caller dates it).
    """
    groups: list[tuple[dt.date | None, list[ImportedMessage]]] = []
    current: dt.date | None = None
    for m in conv.messages:
        day = m.ts.astimezone(tz).date() if m.ts is not None else current
        if not groups or day != groups[-1][0]:
            if groups and groups[-1][0] is None and day is not None:
                groups[-1] = (day, groups[-1][1])  # leading untimed messages join the first dated day
            else:
                groups.append((day, []))
        if day is not None:
            current = day
        groups[-1][1].append(m)
    merged: dict[dt.date | None, list[ImportedMessage]] = {}
    for day, msgs in groups:
        merged.setdefault(day, []).extend(msgs)
    out = []
    for i, (day, msgs) in enumerate(sorted(merged.items(), key=lambda kv: (kv[0] is None, kv[0] or dt.date.min))):
        sid = conv.conversation_id if i == 0 else f"{conv.conversation_id}@{day.isoformat() if day else 'undated'}"
        out.append((day, sid, msgs))
    return out


#: How a message with no time of its own got its day (``Dated.by``).
BY_CONVERSATION = "conversation"  # the nearest dated message of its conversation, before it, else after
BY_NEIGHBOUR = "neighbour"  # the nearest dated conversation of the file, before it, else after
BY_FILE = "file"  # the file's date: ``--date``, else its modification time


@dataclass(frozen=True, slots=True)
class Dated:
    """How many messages had no time of their own, the day they took, and by which rule (``BY_*``)."""

    day: dt.date
    by: str
    messages: int


def undated_days(
    conversations: tuple[Conversation, ...], tz: dt.tzinfo, file_day: dt.date
) -> list[tuple[dt.date, str]]:
    """(day, rule) per conversation, for its messages when none of them has a time.

    The nearest dated conversation in file order lends its day: the one before (its
    last day), else the one after (its first day); with none, the file's date. So an
    aider log that starts mid-session dates its head by the first session, and a few
    undated messages never hold a whole import back to the day it was copied.
    """
    spans = [sorted({m.ts.astimezone(tz).date() for m in c.messages if m.ts is not None}) for c in conversations]
    before: list[dt.date | None] = []  # the last day of the nearest dated conversation before each (one pass each way)
    last: dt.date | None = None
    for span in spans:
        before.append(last)
        last = span[-1] if span else last
    after: list[dt.date | None] = [None] * len(spans)
    first: dt.date | None = None
    for i in reversed(range(len(spans))):
        after[i] = first
        first = spans[i][0] if spans[i] else first
    out = []
    for span, prev, nxt in zip(spans, before, after, strict=True):
        near = prev or nxt
        out.append((span[0], BY_CONVERSATION) if span else (near, BY_NEIGHBOUR) if near else (file_day, BY_FILE))
    return out


def dating(export: Export, tz: dt.tzinfo, file_day: dt.date) -> tuple[Dated, ...]:
    """Every day that messages with no time of their own took, how many, and why; in day order."""
    counts: dict[tuple[dt.date, str], int] = {}
    for conv, (fallback, by) in zip(
        export.conversations, undated_days(export.conversations, tz, file_day), strict=True
    ):
        for day, _sid, msgs in day_groups(conv, tz):
            n = sum(m.ts is None for m in msgs)
            if n:
                key = (day, BY_CONVERSATION) if day is not None else (fallback, by)
                counts[key] = counts.get(key, 0) + n
    if export.file_dated:
        counts[(file_day, BY_FILE)] = counts.get((file_day, BY_FILE), 0) + export.file_dated
    return tuple(Dated(day, by, n) for (day, by), n in sorted(counts.items()))


_SKIPPED_LINE = re.compile(r"^line (\d+): .*; line skipped$")


def skipped_lines(notes: tuple[str, ...]) -> tuple[int, ...]:
    """The numbers of the lines a parser could not read and skipped (its ``line N: ...; line skipped`` notes)."""
    return tuple(int(m[1]) for n in notes if (m := _SKIPPED_LINE.match(n)))


@dataclass(frozen=True, slots=True)
class Derived:
    """One session of an export, as a kenang JSONL transcript for one local day."""

    day: dt.date
    session_id: str
    name: str  # file name in the day's archive folder
    data: bytes
    messages: int


_UNSAFE = re.compile(r"[^A-Za-z0-9._@-]+")


def conversation_transcripts(
    conv: Conversation, fmt: str, *, tz: dt.tzinfo, user_id: str, undated_day: dt.date
) -> list[Derived]:
    """One conversation as kenang JSONL transcripts, one per local day, in day order.

    The transcript's first record names the session, the user, the format (``agent``)
    and the title; every record keeps the message's ``kind`` and its ``flags``
    (``inactive_branch``, ``hidden``). Messages with no time in a conversation with none
    take ``undated_day``. Nothing in it names the export it came from (the archive's
    record does: ``archive_files.original_path``), so a day that a newer, overlapping
    export holds unchanged is the same bytes, recognised and not archived again.
    """
    out: list[Derived] = []
    for day, sid, msgs in day_groups(conv, tz):
        if not msgs:
            continue
        lines = []
        for i, m in enumerate(msgs):
            flags = [f for f, on in (("inactive_branch", not m.active), ("hidden", m.hidden)) if on]
            record: dict = {
                "role": m.role,
                "content": m.content,
                "timestamp": m.ts.isoformat() if m.ts else None,
                "kind": m.kind,
            }
            if flags:
                record["flags"] = flags
            if i == 0:
                record = {"session_id": sid, "user_id": user_id, "agent": fmt, "title": conv.title, **record}
            lines.append(json.dumps(record, ensure_ascii=False, sort_keys=False).encode("utf-8", "surrogatepass"))
        name = f"{fmt}-{_UNSAFE.sub('_', sid)[:150]}.jsonl"
        lines.append(b"")  # the last line's end; each line encoded alone, so a big day is never held twice as text
        data = b"\n".join(lines)
        out.append(Derived(day or undated_day, sid, name, data, len(msgs)))
    return out
