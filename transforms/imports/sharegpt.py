"""ShareGPT-style conversations, the shape most chat datasets are shared in.

A conversation is ``{"conversations": [{"from": ..., "value": ...}, ...], "id"?: ...}``.
A file holds one such object, a JSON list of them, or one per line (JSONL).

- Roles: ``human``/``user`` read as ``user``; ``gpt``, ``chatgpt``, ``bing``, ``bard``,
  ``assistant``, ``model`` as ``assistant``; ``system`` is kept hidden; any other role
  is kept stripped and lower-cased (``tool``, ``function_call``, ``observation`` ...).
- ``conversation_id`` is the item's ``id`` (as text), else ``sharegpt-`` and the first
  16 hex digits of the sha256 of the item's canonical JSON (sorted keys, no spaces,
  UTF-8), so the same conversation always gets the same id. An id that cannot name a
  session (a ``/``, a line break, over 200 characters) is hashed too, with a note. A
  repeated id gets ``-2``, ``-3`` ...
- The format has no timestamps. Every message gets ``default_ts`` (the file's date:
  ``--date``, else its modification time) and ``Export.file_dated`` counts them; with
  no ``default_ts`` they stay undated and ``Export.notes`` says so.
- A turn that is not a ``{"from", "value"}`` object, an item without a
  ``conversations`` list, or (in JSONL) a line that is not JSON is skipped with a note
  that names it by position; ``ParseError`` only when nothing readable remains.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json

from transforms.errors import ParseError
from transforms.imports import _json
from transforms.imports.base import Conversation, Export, ImportedMessage

FORMAT = "sharegpt"

_ROLES = {
    "human": "user",
    "user": "user",
    "gpt": "assistant",
    "chatgpt": "assistant",
    "bing": "assistant",
    "bard": "assistant",
    "assistant": "assistant",
    "model": "assistant",
}
_OTHER_FORMAT_KEYS = ("mapping", "chat_messages", "chat")
# An id names a session, and a session id is a path segment on one line (as in transforms.parse).
_MAX_ID = 200
_ID_FORBIDDEN = frozenset("/\\\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")


def sniff(data: bytes) -> bool:
    """True when the first conversation is a ShareGPT one (never raises)."""
    try:
        if b'"conversations"' not in data:
            return False
        first = _json.sniff_load(data)
        if first is None:  # JSONL: its first line is enough
            lines = _json.sniff_lines(data, 1)
            first = lines[0] if lines else None
        if isinstance(first, list):
            first = first[0] if first else None
        return _is_sharegpt(first)
    except Exception:  # noqa: BLE001 - a sniffer answers, it never fails
        return False


def _is_sharegpt(item: object) -> bool:
    if not isinstance(item, dict) or any(key in item for key in _OTHER_FORMAT_KEYS):
        return False
    turns = item.get("conversations")
    return (
        isinstance(turns, list)
        and bool(turns)
        and isinstance(turns[0], dict)
        and "from" in turns[0]
        and "value" in turns[0]
    )


def parse(data: bytes, tz: dt.tzinfo, default_ts: dt.datetime | None = None) -> Export:
    """Every conversation in the file; see the module docstring."""
    notes: list[str] = []
    items = _json.items(data)
    ts = default_ts.replace(tzinfo=tz) if default_ts is not None and default_ts.tzinfo is None else default_ts
    conversations = []
    seen: dict[str, int] = {}
    for where, item in items:
        if item is _json.NOT_JSON:
            notes.append(f"{where}: invalid JSON; line skipped")
            continue
        turns = item.get("conversations") if isinstance(item, dict) else None
        if not isinstance(item, dict) or not isinstance(turns, list):
            notes.append(f"{where}: no 'conversations' list; skipped")
            continue
        messages = []
        for i, turn in enumerate(turns):
            message = _message(turn, ts)
            if message is None:
                notes.append(f"{where}, turn {i}: not a {{'from', 'value'}} object; skipped")
            else:
                messages.append(message)
        if not messages:
            notes.append(f"{where}: no turns; skipped")
            continue
        base_id = _conversation_id(item, where, notes)
        seen[base_id] = seen.get(base_id, 0) + 1
        cid = base_id if seen[base_id] == 1 else f"{base_id}-{seen[base_id]}"
        title = (item["title"].strip() or None) if isinstance(item.get("title"), str) else None
        conversations.append(Conversation(cid, title, tuple(messages), created=ts))
    if not conversations:
        raise ParseError("no ShareGPT conversation with readable turns found", kind="no_messages")
    if ts is None:
        notes.insert(0, "no timestamps; dated by nothing: no default date was given, every message is undated")
    file_dated = 0 if ts is None else sum(len(c.messages) for c in conversations)
    return Export(format=FORMAT, conversations=tuple(conversations), notes=tuple(notes), file_dated=file_dated)


def _message(turn: object, ts: dt.datetime | None) -> ImportedMessage | None:
    if not isinstance(turn, dict) or not isinstance(turn.get("from"), str) or "value" not in turn:
        return None
    raw_role = turn["from"].strip().lower()
    role = _ROLES.get(raw_role, raw_role) or "unknown"
    value = turn["value"]
    content = value if isinstance(value, str) else "" if value is None else json.dumps(value, ensure_ascii=False)
    return ImportedMessage(role, content, ts, hidden=role == "system")


def _conversation_id(item: dict, where: str, notes: list[str]) -> str:
    """The item's own id when it can name a session, else ``sharegpt-<hash>`` of the item."""
    own = item.get("id")
    text = str(own).strip() if isinstance(own, (str, int)) and not isinstance(own, bool) else ""
    if text and text not in (".", "..") and len(text) <= _MAX_ID and not _ID_FORBIDDEN.intersection(text):
        return text
    if text:
        notes.append(f"{where}: its id cannot name a session (too long, or a path or line break); hashed instead")
    canonical = json.dumps(item, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return "sharegpt-" + hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()[:16]
