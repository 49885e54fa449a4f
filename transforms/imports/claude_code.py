"""Claude Code session logs (``~/.claude/projects/<project>/<sessionId>.jsonl``).

One JSON record per line. The same records also come as one JSON object,
``{"loglines": [record, ...], ...}``, as transcript viewers save a session (simonw's
claude-code-transcripts saves sessions of Claude Code on the web so). Both are read by
the same code, so a session gives the same messages either way; only a note names an
item by its position in ``loglines`` instead of its line number, and a loglines record
may lack ``sessionId``.

The records kenang reads:

- ``type: user`` / ``type: assistant`` with ``message.content`` a string or a list of
  blocks. Each block becomes its own ``ImportedMessage``, in file order:
  ``text`` keeps the record's role (kind ``text``); ``tool_use`` is an assistant
  message of kind ``tool_use`` reading ``[tool_use <name>] <input as JSON>`` (the
  JSON cut to ``TOOL_INPUT_LIMIT`` characters); ``tool_result`` arrives inside a
  ``type: user`` record and becomes role ``tool``, kind ``tool_result``;
  ``thinking`` is an assistant message of kind ``thinking``, hidden; ``image`` is an
  ``attachment`` placeholder; any other block type is kept as ``[<type>]``.
- An assistant API message streamed over several lines that share ``message.id`` is
  not merged: every line's content is kept, in file order.
- ``isMeta: true`` (an expanded slash-command prompt) is kept with ``hidden=True``.
  The command line itself (``<command-name>/init</command-name>`` ...) is ordinary
  user text and kept as written.
- ``isSidechain: true`` (a sub-agent's turn) is kept with its own role and shown, but
  its kind is prefixed: ``sidechain`` for text, ``sidechain_tool_use``,
  ``sidechain_tool_result``, ``sidechain_thinking``. The main thread's kinds stay
  untouched, so a reader that wants only the main conversation filters on kind.
- ``type: system`` records with string ``content`` are kept as hidden ``system``
  messages of kind ``system``.
- ``type: summary`` (``summary``, ``leafUuid``) is not a message: it titles the
  session holding ``leafUuid``; one whose leaf is in no session of the file titles
  the file's only session, if it has exactly one.

Other record types (``file-history-snapshot``, ...) carry no conversation and are
counted in a note. Conversations are grouped by ``sessionId`` in order of first
appearance (a file normally holds one); records without one, or with one that
cannot name a session (a ``/``, a line break, over 200 characters), share a
conversation whose id is ``claude-code-<sha256 of the file, 16 hex>``.

Robustness: one unreadable line (bad UTF-8, bad JSON, not an object, a bad
timestamp) never loses the rest of the file. It is skipped, or for a bad timestamp
kept undated, and ``Export.notes`` names its line number. ``ParseError`` is raised
only when no line at all can be read (or a ``loglines`` array holds no object).
Notes and errors never carry message text.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Iterator

from transforms.errors import ParseError
from transforms.imports._json import lenient_timestamp
from transforms.imports.base import Conversation, Export, ImportedMessage
from transforms.redact import redact_reason

FORMAT = "claude_code"

TOOL_INPUT_LIMIT = 2000
_SNIFF_LINES = 20
_CHAT_TYPES = ("user", "assistant")
# A session id is a path segment on one line (as in transforms.parse).
_MAX_ID = 200
_ID_FORBIDDEN = frozenset("/\\\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")


def sniff(data: bytes) -> bool:
    """True when the first lines hold a Claude Code record, or the file is a loglines object (never raises)."""
    try:
        head = data[: 1 << 20]
        lines = _loglines(data) if b'"loglines"' in head else None
        if lines is not None:
            return any(_is_claude_code_record(r, loglines=True) for r in lines[:_SNIFF_LINES])
        if b'"sessionId"' not in head and b'"leafUuid"' not in head:
            return False
        for raw in data.removeprefix(b"\xef\xbb\xbf").split(b"\n", _SNIFF_LINES)[:_SNIFF_LINES]:
            try:
                record = json.loads(raw)
            except (ValueError, RecursionError):
                continue
            if _is_claude_code_record(record):
                return True
        return False
    except Exception:  # noqa: BLE001 - a sniffer answers, it never fails
        return False


def _is_claude_code_record(record: object, *, loglines: bool = False) -> bool:
    """A user/assistant record (in a JSONL log it must carry ``sessionId``), or a summary record."""
    if not isinstance(record, dict):
        return False
    kind = record.get("type")
    if kind in _CHAT_TYPES:
        return isinstance(record.get("message"), dict) and (loglines or isinstance(record.get("sessionId"), str))
    return kind == "summary" and isinstance(record.get("summary"), str) and "leafUuid" in record


def _loglines(data: bytes) -> list | None:
    """The ``loglines`` array when the whole file is one JSON object holding one; else None."""
    head = data[:1024].removeprefix(b"\xef\xbb\xbf").lstrip()
    if not head.startswith(b"{"):
        return None
    try:
        top = json.loads(data.removeprefix(b"\xef\xbb\xbf").decode("utf-8"))
    except (ValueError, RecursionError):  # not one JSON value: JSON lines, or broken
        return None
    lines = top.get("loglines") if isinstance(top, dict) else None
    return lines if isinstance(lines, list) else None


def parse(data: bytes, tz: dt.tzinfo, default_ts: dt.datetime | None = None) -> Export:
    """Every session in the file, one Conversation each; see the module docstring."""
    if not data.strip():
        raise ParseError("file is empty or whitespace only", kind="empty")
    fallback_id = "claude-code-" + hashlib.sha256(data).hexdigest()[:16]
    notes: list[str] = []
    sessions: dict[str, list[ImportedMessage]] = {}
    session_of_uuid: dict[str, str] = {}
    summaries: list[tuple[str | None, str]] = []
    other_types: dict[str, int] = {}
    readable = 0
    loglines = _loglines(data)
    read_notes: list[str] = []  # the unreadable records' notes come first, as they always have
    for where, record in _records(data, loglines, read_notes):
        if record is None:
            continue
        readable += 1
        kind = record.get("type")
        if kind == "summary":
            if isinstance(record.get("summary"), str) and record["summary"].strip():
                leaf = record.get("leafUuid")
                summaries.append((leaf if isinstance(leaf, str) else None, record["summary"].strip()))
            continue
        if kind not in _CHAT_TYPES and not (kind == "system" and isinstance(record.get("content"), str)):
            label = kind if isinstance(kind, str) else "untyped"
            label = redact_reason(label, 40)
            other_types[label] = other_types.get(label, 0) + 1
            continue
        session_id = _session_id(record.get("sessionId"), fallback_id, where, notes)
        messages = _messages(record, where, tz, notes)
        if messages is None:
            continue
        sessions.setdefault(session_id, []).extend(messages)
        if isinstance(record.get("uuid"), str):
            session_of_uuid[record["uuid"]] = session_id
    notes = read_notes + notes
    if readable == 0 and loglines is not None:
        raise ParseError("the loglines array holds no record object", kind="no_messages")
    if readable == 0:
        raise ParseError("no line is a readable JSON record", kind="bad_json")
    if other_types:
        counted = ", ".join(f"{t}: {n}" for t, n in sorted(other_types.items()))
        notes.append(f"skipped records that hold no conversation ({counted})")
    if not sessions:
        notes.append("no user or assistant records")
    titles = _titles(summaries, session_of_uuid, tuple(sessions))
    conversations = tuple(
        Conversation(
            conversation_id=sid,
            title=titles.get(sid),
            messages=tuple(msgs),
            created=min((m.ts for m in msgs if m.ts is not None), default=None),
        )
        for sid, msgs in sessions.items()
    )
    return Export(format=FORMAT, conversations=conversations, notes=tuple(notes))


def _session_id(value: object, fallback: str, where: str, notes: list[str]) -> str:
    """The record's sessionId when it can name a session, else the file's hash id."""
    text = value.strip() if isinstance(value, str) else ""
    if text and text not in (".", "..") and len(text) <= _MAX_ID and not _ID_FORBIDDEN.intersection(text):
        return text
    if text:
        notes.append(f"{where}: sessionId cannot name a session; the file's hash id is used")
    return fallback


def _records(data: bytes, lines: list | None, notes: list[str]) -> Iterator[tuple[str, dict | None]]:
    """(where, record) in file order: the ``loglines`` items when there are some, else every non-blank line.

    ``where`` names the record in notes (``line 3``, ``loglines item 2``); an unreadable
    one is ``None``, its note already written. One record at a time: a 200 MB log is
    never held as a list of its lines or of its records.
    """
    if lines is None:
        for lineno, raw in _split_lines(data):
            if raw.strip():
                yield f"line {lineno}", _record(raw, lineno, notes)
        return
    for i, item in enumerate(lines):
        if not isinstance(item, dict):
            notes.append(f"loglines item {i}: not a JSON object; skipped")
        yield f"loglines item {i}", item if isinstance(item, dict) else None


def _split_lines(data: bytes) -> Iterator[tuple[int, bytes]]:
    """(line number, line) of ``data.removeprefix(BOM).split(b"\\n")``, one at a time."""
    start = 3 if data.startswith(b"\xef\xbb\xbf") else 0
    lineno = 1
    while (end := data.find(b"\n", start)) >= 0:
        yield lineno, data[start:end]
        start, lineno = end + 1, lineno + 1
    yield lineno, data[start:]


def _record(raw: bytes, lineno: int, notes: list[str]) -> dict | None:
    """The line's JSON object, or None with a note saying why it was skipped."""
    try:
        record = json.loads(raw.decode("utf-8").rstrip("\r"))
    except UnicodeDecodeError as exc:
        notes.append(f"line {lineno}: invalid UTF-8 at byte {exc.start}; line skipped")
        return None
    except json.JSONDecodeError as exc:
        notes.append(f"line {lineno}: invalid JSON ({exc.msg}, column {exc.colno}); line skipped")
        return None
    except (ValueError, RecursionError):
        notes.append(f"line {lineno}: invalid JSON; line skipped")
        return None
    if not isinstance(record, dict):
        notes.append(f"line {lineno}: not a JSON object; line skipped")
        return None
    return record


def _messages(record: dict, where: str, tz: dt.tzinfo, notes: list[str]) -> list[ImportedMessage] | None:
    """The record's messages, one per content block; None (with a note) if it has no content."""
    ts = lenient_timestamp(record.get("timestamp"), tz, where, notes)
    source_id = record["uuid"] if isinstance(record.get("uuid"), str) else None
    sidechain = record.get("isSidechain") is True
    meta = record.get("isMeta") is True
    if record.get("type") == "system":
        return [ImportedMessage("system", record["content"], ts, kind="system", hidden=True, source_id=source_id)]
    message = record.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    role = record["type"]
    if isinstance(message, dict) and isinstance(message.get("role"), str) and message["role"].strip():
        role = message["role"].strip().lower()
    if isinstance(content, str):
        blocks: list = [{"type": "text", "text": content}]
    elif isinstance(content, list):
        blocks = content
    else:
        notes.append(f"{where}: {record['type']} record has no message content; skipped")
        return None
    out = []
    for i, block in enumerate(blocks):
        msg_role, text, kind, hidden = _block(block, role)
        if sidechain:
            kind = "sidechain" if kind == "text" else f"sidechain_{kind}"
        sid = source_id if source_id is None or len(blocks) == 1 else f"{source_id}:{i}"
        out.append(ImportedMessage(msg_role, text, ts, kind=kind, hidden=hidden or meta, source_id=sid))
    return out


def _block(block: object, role: str) -> tuple[str, str, str, bool]:
    """(role, content, kind, hidden) for one content block."""
    if isinstance(block, str):
        return role, block, "text", False
    if not isinstance(block, dict):
        return role, "", "unknown", False
    kind = found if isinstance(found := block.get("type"), str) else "unknown"
    if kind == "text":
        return role, _text(block.get("text")), "text", False
    if kind == "tool_use":
        name = block.get("name") if isinstance(block.get("name"), str) else "?"
        return "assistant", f"[tool_use {name}] {_cut(_json(block.get('input')))}", "tool_use", False
    if kind == "tool_result":
        return "tool", _result_text(block.get("content")), "tool_result", False
    if kind in ("thinking", "redacted_thinking"):
        return "assistant", _text(block.get("thinking")), "thinking", True
    if kind in ("image", "document"):
        return role, f"[{kind}]", "attachment", False
    return role, f"[{kind}]", kind, False


def _result_text(content: object) -> str:
    """A tool_result's content: a string, or a list of text/image blocks."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return "" if content is None else _json(content)
    parts = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict) and block.get("type") == "text":
            parts.append(_text(block.get("text")))
        elif isinstance(block, dict) and isinstance(block.get("type"), str):
            parts.append(f"[{block['type']}]")
    return "\n".join(parts)


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


def _cut(text: str) -> str:
    return text if len(text) <= TOOL_INPUT_LIMIT else text[:TOOL_INPUT_LIMIT] + "…"


def _titles(
    summaries: list[tuple[str | None, str]], session_of_uuid: dict[str, str], session_ids: tuple[str, ...]
) -> dict[str, str]:
    """Session id -> title: the last summary whose leaf is in it; else a stray summary for a lone session."""
    titles: dict[str, str] = {}
    stray: list[str] = []
    for leaf, summary in summaries:
        if leaf is not None and leaf in session_of_uuid:
            titles[session_of_uuid[leaf]] = summary
        else:
            stray.append(summary)
    if stray and len(session_ids) == 1 and session_ids[0] not in titles:
        titles[session_ids[0]] = stray[-1]
    return titles
