"""Open WebUI's chat export JSON: one chat, or an array of them.

"Export chats" writes database rows ``{id, title, chat: {...}, created_at, ...}``;
"Download > Export chat (.json)" writes the ``chat`` object alone. Both are read. A
chat holds its messages twice: ``history.messages`` (id -> message, with ``parentId``
and ``childrenIds``; every branch) and ``messages`` (the active path only).

- Messages come from ``history.messages`` when it is a non-empty object, else from
  ``messages``. Each keeps its role (normalised), ``content`` and ``timestamp``.
- The path from the root to ``history.currentId`` is active, root first. Without a
  usable ``currentId`` the ids listed in ``messages`` are the active path, and
  without those the leaf written last is. Other branches (regenerations, replies of
  other models) follow, ``active=False``, depth first, children in file order.
- Times are epoch numbers in seconds or milliseconds (one file has both: a chat's
  ``timestamp`` in ms, its messages' in seconds), decided by magnitude: above 1e11
  is not seconds. ISO strings are accepted too; one without an offset is read in
  ``tz``. The conversation's ``created`` is the row's ``created_at``, else the chat's
  ``timestamp``. ``default_ts`` is unused: the export dates its own messages.
- Message ``files`` append ``[image]`` or ``[attachment: <name>]``. An empty message
  is kept as ``[empty message]`` of kind ``placeholder``.
- An id of '' is no id: the conversation id is then a content hash.
"""

from __future__ import annotations

from datetime import datetime, tzinfo

from transforms.errors import ParseError
from transforms.imports import _json
from transforms.imports.base import Conversation, Export, ImportedMessage

FORMAT = "openwebui"


def sniff(data: bytes) -> bool:
    """A chat (or an array of chats, or of rows wrapping one in ``chat``) with a message tree."""
    items = _json.records(_json.sniff_load(data))
    return items is not None and all(
        "mapping" not in item and "chat_messages" not in item and _is_chat(_chat_of(item)) for item in items
    )


def parse(data: bytes, tz: tzinfo, default_ts: datetime | None = None) -> Export:
    """Every chat in the export, branches included."""
    items = _json.conversations(_json.load(data))
    return Export(FORMAT, tuple(_conversation(item, i, tz) for i, item in enumerate(items)))


def _chat_of(item: dict) -> dict:
    return item["chat"] if isinstance(item.get("chat"), dict) else item


def _is_chat(chat: dict) -> bool:
    history = chat.get("history")
    if isinstance(history, dict) and isinstance(history.get("messages"), dict):
        return True
    listed = chat.get("messages")
    return (
        isinstance(listed, list)
        and bool(listed)
        and all(isinstance(m, dict) and ("parentId" in m or "childrenIds" in m) for m in listed)
    )


def _conversation(item: dict, index: int, tz: tzinfo) -> Conversation:
    chat = _chat_of(item)
    own_id = item.get("id") or chat.get("id")
    where = _json.where_conversation(index, own_id)
    history = found if isinstance(found := chat.get("history"), dict) else {}
    listed = given if isinstance(given := chat.get("messages"), list) else []
    tree = history.get("messages")
    if isinstance(tree, dict) and tree:
        keys, raw = list(tree), list(tree.values())
    else:
        raw = listed
        keys = [m.get("id") if isinstance(m, dict) else None for m in raw]
    for key, message in zip(keys, raw, strict=False):
        if not isinstance(message, dict):
            raise ParseError(f"{where}: message {_json.shown(str(key))} is not an object", kind="bad_record")
    wheres = [f"{where}, message {_json.shown(k) if isinstance(k, str) and k else i}" for i, k in enumerate(keys)]
    times = [_json.timestamp(m.get("timestamp"), tz, f"{w}, timestamp") for m, w in zip(raw, wheres, strict=False)]
    parents = _json.index_parents(keys, [m.get("parentId") for m in raw])
    messages = tuple(
        _message(raw[i], times[i], active, wheres[i])
        for i, active in _json.tree_order(parents, _leaf(keys, parents, times, history, listed))
    )
    created = item.get("created_at") if item is not chat else None
    return Conversation(
        conversation_id=_json.conversation_id(own_id, item, where),
        title=_json.title(item.get("title")) or _json.title(chat.get("title")),
        messages=messages,
        created=_json.timestamp(created if created is not None else chat.get("timestamp"), tz, f"{where}, created"),
    )


def _leaf(keys: list, parents: list, times: list, history: dict, listed: list) -> int | None:
    """The active leaf: ``currentId``, else the last message of ``messages``, else the newest leaf."""
    position = {k: i for i, k in enumerate(keys) if isinstance(k, str) and k}
    for candidate in (
        history.get("currentId"),
        *(m.get("id") for m in reversed(listed) if isinstance(m, dict)),
    ):
        if isinstance(candidate, str) and candidate in position:
            return position[candidate]
    return _json.latest_leaf(parents, times)


def _message(message: dict, ts: datetime | None, active: bool, where: str) -> ImportedMessage:
    role = _json.role(message.get("role"), where)
    text = _content(message.get("content"))
    files = found if isinstance(found := message.get("files"), list) else []
    extras = [_file(f) for f in files if isinstance(f, dict)]
    content = "\n".join(p for p in [text, *extras] if p)
    if text.strip():
        kind = "text"
    elif extras:
        kind = "attachment"
    else:
        kind, content = "placeholder", _json.EMPTY
    source_id = message.get("id") if isinstance(message.get("id"), str) and message["id"] else None
    return ImportedMessage(role, content, ts, active, kind, False, source_id)


def _content(content: object) -> str:
    """String content as is; OpenAI-style block lists as their text, other blocks as markers."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif isinstance(block, dict) and isinstance(block.get("type"), str):
            parts.append("[image]" if block["type"] == "image_url" else f"[{block['type']}]")
    return "\n".join(p for p in parts if p)


def _file(item: dict) -> str:
    if item.get("type") == "image":
        return "[image]"
    inner = found if isinstance(found := item.get("file"), dict) else {}
    name = item.get("name") or inner.get("filename")
    return f"[attachment: {name}]" if isinstance(name, str) and name else "[attachment]"
