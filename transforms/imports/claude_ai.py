"""Claude.ai's data export: ``conversations.json``, an array of conversations.

A conversation is ``{uuid, name, created_at, chat_messages: [...]}``; a message is
``{uuid, sender, text, content: [blocks], created_at, attachments, files,
parent_message_uuid}``. The export's ``projects.json`` and ``users.json`` are not
conversations and are not claimed.

- Text comes from the ``text`` blocks of ``content``; other blocks become markers
  (``[tool_use: web_search]``, ``[tool_result: web_search]``, ``[thinking]``). When
  no block has text, the flat ``text`` field is used (older exports have no
  ``content``).
- ``attachments`` append ``[attachment: <file_name>]`` followed by their
  ``extracted_content``; ``files`` (uploaded images) append ``[file: <file_name>]``.
- A message with nothing in it is kept as ``[empty message]`` of kind
  ``placeholder``: exports blank messages (deleted, failed) and every message must
  still be counted. A ``null`` entry in ``chat_messages`` is not a message: skipped.
- Branches: when messages carry ``parent_message_uuid``, the chain from the root to
  ``current_leaf_message_uuid`` (else the leaf written last) is active; the other
  branches follow it, ``active=False``, depth first, children in file order. Without
  parent ids the messages are one chain in file order, all active; consecutive
  human messages there cannot be told apart from edits, so they are kept as written.
- A conversation with no messages is kept (empty ``messages``); ``name`` '' is no title.
- ``sender`` ``human`` is ``user``. ``created_at`` is ISO 8601; one without an offset is
  read in ``tz``. ``default_ts`` is unused: the export dates its own messages.
"""

from __future__ import annotations

from datetime import datetime, tzinfo

from transforms.errors import ParseError
from transforms.imports import _json
from transforms.imports.base import Conversation, Export, ImportedMessage

FORMAT = "claude_ai"


def sniff(data: bytes) -> bool:
    """A conversation object (or an array of them) with a ``chat_messages`` list."""
    convs = _json.records(_json.sniff_load(data))
    return convs is not None and all(isinstance(c.get("chat_messages"), list) and "mapping" not in c for c in convs)


def parse(data: bytes, tz: tzinfo, default_ts: datetime | None = None) -> Export:
    """Every conversation in the export, branches included."""
    convs = _json.conversations(_json.load(data))
    return Export(FORMAT, tuple(_conversation(conv, i, tz) for i, conv in enumerate(convs)))


def _conversation(conv: dict, index: int, tz: tzinfo) -> Conversation:
    own_id = conv.get("uuid")
    where = _json.where_conversation(index, own_id)
    entries = conv.get("chat_messages")
    if not isinstance(entries, list):
        raise ParseError(f"{where}: 'chat_messages' is missing or not an array", kind="bad_record")
    raw = []
    for position, entry in enumerate(entries):
        if entry is None:
            continue
        if not isinstance(entry, dict):
            raise ParseError(f"{where}: message {position} is {_json.json_type(entry)}", kind="bad_record")
        raw.append((position, entry))
    wheres = [f"{where}, message {_message_name(position, m)}" for position, m in raw]
    times = [
        _json.timestamp(m.get("created_at"), tz, f"{w}, created_at") for (_, m), w in zip(raw, wheres, strict=False)
    ]
    keys = [m.get("uuid") for _, m in raw]
    if any(isinstance(m.get("parent_message_uuid"), str) for _, m in raw):
        parents = _json.index_parents(keys, [m.get("parent_message_uuid") for _, m in raw])
        current = conv.get("current_leaf_message_uuid")
        leaf = (
            keys.index(current) if isinstance(current, str) and current in keys else _json.latest_leaf(parents, times)
        )
    else:
        parents = [i - 1 if i else None for i in range(len(raw))]
        leaf = len(raw) - 1 if raw else None
    messages = tuple(_message(raw[i][1], times[i], active, wheres[i]) for i, active in _json.tree_order(parents, leaf))
    return Conversation(
        conversation_id=_json.conversation_id(own_id, conv, where),
        title=_json.title(conv.get("name")),
        messages=messages,
        created=_json.timestamp(conv.get("created_at"), tz, f"{where}, created_at"),
    )


def _message_name(position: int, message: dict) -> str:
    uuid = message.get("uuid")
    return f"{position} ({_json.shown(uuid)})" if isinstance(uuid, str) and uuid else str(position)


def _message(message: dict, ts: datetime | None, active: bool, where: str) -> ImportedMessage:
    role = _json.role(message.get("sender"), where)
    parts, has_text = _blocks(message.get("content"))
    if not has_text and isinstance(message.get("text"), str) and message["text"].strip():
        parts.insert(0, message["text"])
        has_text = True
    extras = _attachments(message.get("attachments"), "attachment")
    extras += _attachments(message.get("files"), "file")
    content = "\n".join(p for p in parts + extras if p)
    if has_text:
        kind = "text"
    elif extras:
        kind = "attachment"
    else:
        kind = "placeholder"
        content = content or _json.EMPTY
    source_id = message.get("uuid") if isinstance(message.get("uuid"), str) else None
    return ImportedMessage(role, content, ts, active, kind, False, source_id)


def _blocks(content: object) -> tuple[list[str], bool]:
    """The content blocks as text and markers, and whether any block had text."""
    parts: list[str] = []
    has_text = False
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        block_type = block.get("type")
        if block_type == "text":
            text = found if isinstance(found := block.get("text"), str) else ""
            has_text = has_text or bool(text.strip())
            parts.append(text)
        elif block_type in ("tool_use", "tool_result"):
            tool = block.get("name")
            parts.append(f"[{block_type}: {tool}]" if isinstance(tool, str) and tool else f"[{block_type}]")
        elif isinstance(block_type, str) and block_type:
            parts.append(f"[{block_type}]")
    if not has_text:
        parts = [p for p in parts if p.strip()]  # blank text blocks must not hide the fallback
    return parts, has_text


def _attachments(items: object, label: str) -> list[str]:
    """A marker per attachment, with its extracted text after it when the export has it."""
    out = []
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        name = item.get("file_name")
        marker = f"[{label}: {name}]" if isinstance(name, str) and name else f"[{label}]"
        extracted = item.get("extracted_content")
        out.append(f"{marker}\n{extracted}" if isinstance(extracted, str) and extracted.strip() else marker)
    return out
