"""OpenAI Codex CLI rollouts (``~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl``).

One JSON record per line, ``{"timestamp", "type", "payload"}``: a ``session_meta``
first (``payload.id`` names the session), then ``response_item``, ``event_msg``,
``turn_context`` and ``compacted`` records. The conversation is read from the
``response_item`` records alone: ``event_msg`` records (``user_message``,
``agent_message``, ``agent_reasoning``, ``token_count`` ...) repeat their text or
carry none, so they, ``turn_context`` and ``compacted`` (a summary of what came before)
are counted in a note and never read twice. A response item becomes:

- ``message``: its text (``input_text``/``output_text``; ``[image]`` for an image),
  in its role. A ``user`` message that Codex injects as context (``<environment_context>``,
  ``<user_instructions>``, ``# AGENTS.md instructions for ...``) is kept hidden, kind
  ``context``; a ``developer`` or ``system`` message is a hidden ``system`` message of
  kind ``context``.
- ``reasoning``: a hidden assistant message of kind ``thinking``, its summary (and any
  plain reasoning text); ``[reasoning]`` when it is only encrypted.
- ``function_call``, ``custom_tool_call``, ``local_shell_call``, ``web_search_call``:
  an assistant message of kind ``tool_use``, ``[tool_use <name>] <arguments>`` (cut to
  ``TOOL_INPUT_LIMIT`` characters); its ``call_id`` is the ``source_id``.
- ``function_call_output``, ``custom_tool_call_output``: role ``tool``, kind
  ``tool_result``, the output as written.
- anything else (``ghost_snapshot``, an encrypted ``compaction``) is counted in the note.

The older rollouts of spring 2025 have no envelope: the first line is ``{"id",
"timestamp", "instructions"}``, then bare response items and ``{"record_type":
"state"}`` lines. They are read the same way; a record without a time of its own
takes the session's start time. ``session_meta.instructions`` is not a message: Codex
sends the same text as the ``<user_instructions>`` (or AGENTS.md) user message.

Times are the envelope's ISO-8601 ``timestamp``. The session id is the first
``session_meta``'s ``payload.id`` (a later one, from a resumed session, is counted);
without a usable one, ``codex-<first 16 hex digits of the file's SHA-256>``.

One unreadable line (bad UTF-8, bad JSON, not an object, not a Codex record) never
loses the rest: it is skipped with a note naming its line number; a bad timestamp
leaves its message undated, with a note. ``ParseError`` only when no line is readable
(``bad_json``) or no response item holds a message (``no_messages``). Notes and errors
never carry message text.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json

from transforms.errors import ParseError
from transforms.imports import _json
from transforms.imports.base import Conversation, Export, ImportedMessage
from transforms.redact import redact_reason

FORMAT = "codex"

TOOL_INPUT_LIMIT = 2000
_ENVELOPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted"})
_ITEMS = frozenset(
    {
        "message",
        "reasoning",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "local_shell_call",
        "web_search_call",
        "ghost_snapshot",
        "compaction",
        "compaction_summary",
    }
)
_CONTEXT_OPENINGS = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions for ")
_OLD_META_KEYS = frozenset({"id", "timestamp", "instructions", "git"})


def sniff(data: bytes) -> bool:
    """True when the file opens with a Codex session record, enveloped or of the older bare form (never raises)."""
    try:
        if b'"timestamp"' not in data[: 1 << 20]:
            return False
        lines = [line for line in _json.sniff_lines(data) if isinstance(line, dict)]
        if not lines:
            return False
        if _is_envelope(lines[0]):
            return any(_is_envelope(line) and line["type"] in ("session_meta", "response_item") for line in lines)
        return _is_old_meta(lines[0])
    except Exception:  # noqa: BLE001 - a sniffer answers, it never fails
        return False


def _is_envelope(record: dict) -> bool:
    kind = record.get("type")
    return (
        isinstance(kind, str)
        and kind in _ENVELOPES
        and isinstance(record.get("payload"), dict)
        and ("timestamp" in record)
    )


def _is_old_meta(record: dict) -> bool:
    return (
        "instructions" in record
        and isinstance(record.get("id"), str)
        and isinstance(record.get("timestamp"), str)
        and set(record) <= _OLD_META_KEYS
    )


def parse(data: bytes, tz: dt.tzinfo, default_ts: dt.datetime | None = None) -> Export:
    """The session in the rollout, as one Conversation; see the module docstring."""
    if not data.strip():
        raise ParseError("file is empty or whitespace only", kind="empty")
    notes: list[str] = []
    lines = _json.json_lines(data, notes)
    if not lines:
        raise ParseError("no line is a readable JSON record", kind="bad_json")
    session_id: str | None = None
    start: dt.datetime | None = None
    skipped: dict[str, int] = {}
    messages: list[ImportedMessage] = []
    for index, (lineno, record) in enumerate(lines):
        where = f"line {lineno}"
        if _is_envelope(record):
            ts = _json.lenient_timestamp(record.get("timestamp"), tz, where, notes)
            kind, payload = record["type"], record["payload"]
            if kind == "session_meta" and session_id is None and start is None:
                session_id = _session_id(payload.get("id"), where, notes)
                start = _json.lenient_timestamp(payload.get("timestamp"), tz, where, notes) or ts
                continue
            if kind != "response_item":
                _count(skipped, kind)
                continue
            item = payload
        elif index == 0 and _is_old_meta(record):
            session_id = _session_id(record.get("id"), where, notes)
            start = _json.lenient_timestamp(record.get("timestamp"), tz, where, notes)
            continue
        elif "record_type" in record:
            state = record["record_type"]
            _count(skipped, f"record_type {state}" if isinstance(state, str) else "record_type")
            continue
        elif isinstance(record.get("type"), str) and record["type"] in _ITEMS:
            item = record
            ts = _json.lenient_timestamp(record.get("timestamp"), tz, where, notes) if "timestamp" in record else start
        else:
            notes.append(f"{where}: not a Codex rollout record; line skipped")
            continue
        read = _item(item, ts)
        if read is None:
            item_type = item.get("type")
            _count(skipped, f"response_item {item_type}" if isinstance(item_type, str) else "response_item")
        else:
            messages.append(read)
    if skipped:
        counted = ", ".join(f"{t}: {n}" for t, n in sorted(skipped.items()))
        notes.append(f"skipped records that hold no conversation or repeat it ({counted})")
    if not messages:
        raise ParseError("no response item holds a message", kind="no_messages")
    conversation = Conversation(
        conversation_id=session_id or "codex-" + hashlib.sha256(data).hexdigest()[:16],
        title=None,
        messages=tuple(messages),
        created=start or min((m.ts for m in messages if m.ts is not None), default=None),
    )
    return Export(FORMAT, (conversation,), tuple(notes))


def _item(item: dict, ts: dt.datetime | None) -> ImportedMessage | None:
    """The response item as a message; None for an item that holds none."""
    kind = item.get("type")
    call_id = item.get("call_id") if isinstance(item.get("call_id"), str) and item["call_id"] else None
    if kind == "message":
        return _message(item, ts)
    if kind == "reasoning":
        return ImportedMessage("assistant", _reasoning(item), ts, kind="thinking", hidden=True)
    if kind == "function_call":
        return _tool_use(_name(item), item.get("arguments"), ts, call_id)
    if kind == "custom_tool_call":
        return _tool_use(_name(item), item.get("input"), ts, call_id)
    if kind == "local_shell_call":
        return _tool_use("local_shell", item.get("action"), ts, call_id or _text_or_none(item.get("id")))
    if kind == "web_search_call":
        return _tool_use("web_search", item.get("action"), ts, _text_or_none(item.get("id")))
    if kind in ("function_call_output", "custom_tool_call_output"):
        sid = f"{call_id}:output" if call_id else None
        return ImportedMessage("tool", _output(item.get("output")), ts, kind="tool_result", source_id=sid)
    return None


def _message(item: dict, ts: dt.datetime | None) -> ImportedMessage | None:
    role = given.strip().lower() if isinstance(given := item.get("role"), str) and given.strip() else None
    if role is None:
        return None
    text = _parts(item.get("content"))
    sid = _text_or_none(item.get("id"))
    if role in ("developer", "system"):
        return ImportedMessage("system", text, ts, kind="context", hidden=True, source_id=sid)
    if role == "user" and text.lstrip().startswith(_CONTEXT_OPENINGS):
        return ImportedMessage("user", text, ts, kind="context", hidden=True, source_id=sid)
    return ImportedMessage(role, text, ts, source_id=sid)


def _parts(content: object) -> str:
    """A message's content items as text: their text, ``[image]`` for an image, ``[<type>]`` for others."""
    if isinstance(content, str):
        return content or _json.EMPTY
    parts = []
    for part in content if isinstance(content, list) else []:
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if isinstance(part.get("text"), str):
            parts.append(part["text"])
        elif kind in ("input_image", "image_url"):
            parts.append("[image]")
        elif isinstance(kind, str) and kind:
            parts.append(f"[{kind}]")
    return "\n".join(parts) or _json.EMPTY


def _reasoning(item: dict) -> str:
    texts = [
        part["text"]
        for listed in (item.get("summary"), item.get("content"))
        for part in (listed if isinstance(listed, list) else [])
        if isinstance(part, dict) and isinstance(part.get("text"), str) and part["text"].strip()
    ]
    if not texts and isinstance(item.get("text"), str) and item["text"].strip():
        texts = [item["text"]]  # an early bare reasoning record carried plain text
    return "\n".join(texts) or "[reasoning]"


def _tool_use(name: str, arguments: object, ts: dt.datetime | None, call_id: str | None) -> ImportedMessage:
    shown = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    cut = shown if len(shown) <= TOOL_INPUT_LIMIT else shown[:TOOL_INPUT_LIMIT] + "…"
    return ImportedMessage("assistant", f"[tool_use {name}] {cut}", ts, kind="tool_use", source_id=call_id)


def _output(output: object) -> str:
    """A tool's output: a string as written, content items as text, a ``{"content": ...}`` object's content."""
    if isinstance(output, str):
        return output
    if isinstance(output, list):
        return _parts(output)
    if isinstance(output, dict) and isinstance(output.get("content"), str):
        return output["content"]
    return "" if output is None else json.dumps(output, ensure_ascii=False)


def _name(item: dict) -> str:
    name = item.get("name")
    return name.strip() if isinstance(name, str) and name.strip() else "?"


def _text_or_none(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _session_id(value: object, where: str, notes: list[str]) -> str | None:
    found = _json.usable_id(value) if isinstance(value, str) else None
    if found is None and value not in (None, ""):
        notes.append(f"{where}: the session id cannot name a session; the file's hash id is used")
    return found


def _count(counts: dict[str, int], kind: str) -> None:
    label = redact_reason(kind, 40)
    counts[label] = counts.get(label, 0) + 1
