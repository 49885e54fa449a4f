"""OpenAI-style chat sets: ``{"messages": [{"role", "content"}, ...]}``, one conversation per line.

The shape of OpenAI fine-tuning files (and of many datasets and evals built like them).
A file holds one such object per line (JSONL), one object, or a JSON array of them.

- Roles: ``system`` and ``developer`` are hidden ``system`` messages; ``user`` and
  ``assistant`` stay; ``tool`` (and the older ``function``) is role ``tool``, kind
  ``tool_result``. Any other role is kept, lower-cased.
- Content: a string, or a list of parts: the text of ``text`` (and ``input_text``,
  ``output_text``) parts and of ``refusal`` parts, ``[image]`` for ``image_url``, any
  other part as ``[<type>]``, joined by newlines. ``null`` content (an assistant turn
  that only calls tools) gives no text message.
- Tool calls: each ``tool_calls`` entry (and a legacy ``function_call``) is an
  assistant message of kind ``tool_use``, ``[tool_use <name>] <arguments>``, the
  arguments cut to ``TOOL_INPUT_LIMIT`` characters, after the turn's text.
- ``name`` and ``weight`` (which turns a fine-tune learns from) are metadata, not text:
  a turn with ``weight: 0`` is kept as any other.
- Ids: the item's ``id`` when it can name a session, else ``openai-messages-`` and the
  first 16 hex digits of the SHA-256 of the item's canonical JSON; a repeated id gets
  ``-2``, ``-3`` ...
- Times: the format has none. Every message gets ``default_ts`` (the file's date:
  ``--date``, else its modification time) and ``Export.file_dated`` counts them; with
  none given they stay undated and a note says so.

A line that is not JSON, an item without a ``messages`` list, or a turn that is not a
``{"role", ...}`` object is skipped with a note naming its position; ``ParseError``
only when nothing readable remains. Notes never carry message text.
"""

from __future__ import annotations

import datetime as dt
import json

from transforms.errors import ParseError
from transforms.imports import _json
from transforms.imports.base import Conversation, Export, ImportedMessage

FORMAT = "openai_messages"

TOOL_INPUT_LIMIT = 2000
_ROLES = {"system": "system", "developer": "system", "tool": "tool", "function": "tool"}
_TEXT_PARTS = ("text", "input_text", "output_text")
# Keys of the exports that also hold a "messages" list: theirs, not ours.
_OTHER_FORMAT_KEYS = ("mapping", "chat_messages", "chat", "history", "conversations", "loglines")
_TREE_KEYS = ("parentId", "childrenIds")


def sniff(data: bytes) -> bool:
    """True when the first item (the object, an array's first, or the first line) is a messages set."""
    try:
        if b'"messages"' not in data[: 1 << 20]:
            return False
        top = _json.sniff_load(data)
        if top is None:
            lines = [line for line in _json.sniff_lines(data, 1) if line is not None]
            top = lines[0] if lines else None
        if isinstance(top, list):
            top = top[0] if top else None
        return _is_messages_item(top)
    except Exception:  # noqa: BLE001 - a sniffer answers, it never fails
        return False


def _is_messages_item(item: object) -> bool:
    if not isinstance(item, dict) or any(key in item for key in _OTHER_FORMAT_KEYS):
        return False
    turns = item.get("messages")
    return (
        isinstance(turns, list)
        and bool(turns)
        and all(isinstance(t, dict) and isinstance(t.get("role"), str) for t in turns)
        and all("content" in t or "tool_calls" in t or "function_call" in t for t in turns)
        and not any(key in t for t in turns for key in _TREE_KEYS)
    )


def parse(data: bytes, tz: dt.tzinfo, default_ts: dt.datetime | None = None) -> Export:
    """Every conversation in the file; see the module docstring."""
    notes: list[str] = []
    ts = default_ts.replace(tzinfo=tz) if default_ts is not None and default_ts.tzinfo is None else default_ts
    conversations = []
    seen: dict[str, int] = {}
    for where, item in _json.items(data):
        if item is _json.NOT_JSON:
            notes.append(f"{where}: invalid JSON; line skipped")
            continue
        turns = item.get("messages") if isinstance(item, dict) else None
        if not isinstance(item, dict) or not isinstance(turns, list):
            notes.append(f"{where}: no 'messages' list; skipped")
            continue
        messages: list[ImportedMessage] = []
        for i, turn in enumerate(turns):
            read = _turn(turn, ts)
            if read is None:
                notes.append(f"{where}, message {i}: not a {{'role', ...}} object; skipped")
            messages.extend(read or ())
        if not messages:
            notes.append(f"{where}: no messages; skipped")
            continue
        base_id = _conversation_id(item, where, notes)
        seen[base_id] = seen.get(base_id, 0) + 1
        cid = base_id if seen[base_id] == 1 else f"{base_id}-{seen[base_id]}"
        conversations.append(Conversation(cid, None, tuple(messages), created=ts))
    if not conversations:
        raise ParseError("no conversation with readable messages found", kind="no_messages")
    if ts is None:
        notes.insert(0, "no timestamps; dated by nothing: no default date was given, every message is undated")
    file_dated = 0 if ts is None else sum(len(c.messages) for c in conversations)
    return Export(FORMAT, tuple(conversations), tuple(notes), file_dated=file_dated)


def _turn(turn: object, ts: dt.datetime | None) -> list[ImportedMessage] | None:
    """The turn's messages: its text, then one per tool call; None when it is no turn at all."""
    if not isinstance(turn, dict) or not isinstance(turn.get("role"), str) or not turn["role"].strip():
        return None
    raw_role = turn["role"].strip().lower()
    role = _ROLES.get(raw_role, raw_role)
    listed = turn.get("tool_calls")
    calls = [c for c in listed if isinstance(c, dict)] if isinstance(listed, list) else []
    if isinstance(turn.get("function_call"), dict):
        calls.append({"function": turn["function_call"]})
    out = []
    content = turn.get("content")
    if content is not None or not calls:
        text = _content(content)
        kind = "tool_result" if role == "tool" else "text"
        out.append(ImportedMessage(role, text, ts, kind=kind, hidden=role == "system"))
    for call in calls:
        function = found if isinstance(found := call.get("function"), dict) else call
        name = function.get("name") if isinstance(function.get("name"), str) else "?"
        arguments = function.get("arguments")
        shown = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
        call_id = call.get("id") if isinstance(call.get("id"), str) and call["id"] else None
        out.append(
            ImportedMessage("assistant", f"[tool_use {name}] {_cut(shown)}", ts, kind="tool_use", source_id=call_id)
        )
    return out


def _content(content: object) -> str:
    if isinstance(content, str):
        return content or _json.EMPTY
    if not isinstance(content, list):
        return _json.EMPTY if content is None else json.dumps(content, ensure_ascii=False)
    parts = []
    for part in content:
        if isinstance(part, str):
            parts.append(part)
        elif isinstance(part, dict):
            kind = part.get("type")
            if kind in _TEXT_PARTS and isinstance(part.get("text"), str):
                parts.append(part["text"])
            elif kind == "refusal" and isinstance(part.get("refusal"), str):
                parts.append(part["refusal"])
            elif kind == "image_url":
                parts.append("[image]")
            else:
                parts.append(f"[{kind}]" if isinstance(kind, str) and kind else "[part]")
    return "\n".join(parts) or _json.EMPTY


def _cut(text: str) -> str:
    return text if len(text) <= TOOL_INPUT_LIMIT else text[:TOOL_INPUT_LIMIT] + "…"


def _conversation_id(item: dict, where: str, notes: list[str]) -> str:
    """The item's own id when it can name a session, else ``openai-messages-<hash>`` of the item."""
    own = _json.usable_id(item.get("id"))
    if own is not None:
        return own
    if item.get("id") not in (None, ""):
        notes.append(f"{where}: its id cannot name a session (too long, or a path or line break); hashed instead")
    return "openai-messages-" + _json.content_hash(item)
