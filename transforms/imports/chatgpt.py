"""ChatGPT's data export: ``conversations.json``, an array of conversations (or just one).

A conversation is a tree: ``mapping`` holds nodes ``{id, message|null, parent,
children}`` and ``current_node`` names the leaf the user last saw.

- The path from ``current_node`` up to the root is active, root first. That is tree
  order, not time order: a reply's ``create_time`` (server clock) can come a few
  milliseconds before its question's (client clock). Without a usable
  ``current_node``, the leaf written last is taken.
- Every other node is an abandoned branch (an edited prompt, a regenerated reply). It
  is kept with ``active=False`` after the active path, depth first, children in
  mapping order, so a branch reads as a thread.
- Nodes without a message (``client-created-root``) are skipped. So is a ``system``
  message whose content is empty (or whitespace-only) text: the invisible scaffold
  ChatGPT puts at the root. Those are the only messages ever dropped. An empty
  message of any other role is kept as the placeholder ``[empty message]``.
- ``content_type``: ``text`` joins its string ``parts``; ``multimodal_text`` does too,
  with ``[image]`` (``[audio]``...) for asset pointers; ``code`` is kind ``code``;
  ``execution_output`` is kind ``execution_output`` with role ``tool``;
  ``tether_quote`` and ``tether_browsing_display`` are kind ``quote``;
  ``user_editable_context`` (custom instructions) is a hidden ``system`` message. Any
  other type becomes ``[<content_type>]`` of kind ``placeholder``: never an error.
- ``hidden`` follows ``metadata.is_visually_hidden_from_conversation`` for any role;
  a system message with no text is hidden too.
- ``author.role`` is normalised like the transcript parsers (``tool`` stays ``tool``).
- ``create_time`` is epoch seconds (a float) or null, which gives ``ts=None``.
  ``default_ts`` is unused: the export dates its own messages.
"""

from __future__ import annotations

from datetime import datetime, tzinfo

from transforms.errors import ParseError
from transforms.imports import _json
from transforms.imports.base import Conversation, Export, ImportedMessage

FORMAT = "chatgpt"

_QUOTE_FIELDS = {"tether_quote": ("text", "title", "url"), "tether_browsing_display": ("result", "summary")}


def sniff(data: bytes) -> bool:
    """A conversation object (or an array of them) with a ``mapping`` tree."""
    convs = _json.records(_json.sniff_load(data))
    return convs is not None and all(
        isinstance(c.get("mapping"), dict) and ("current_node" in c or "create_time" in c) and "chat_messages" not in c
        for c in convs
    )


def parse(data: bytes, tz: tzinfo, default_ts: datetime | None = None) -> Export:
    """Every conversation in the export, abandoned branches included."""
    convs = _json.conversations(_json.load(data))
    return Export(FORMAT, tuple(_conversation(conv, i, tz) for i, conv in enumerate(convs)))


def _conversation(conv: dict, index: int, tz: tzinfo) -> Conversation:
    own_id = conv.get("conversation_id") or conv.get("id")
    where = _json.where_conversation(index, own_id)
    mapping = conv.get("mapping")
    if not isinstance(mapping, dict):
        raise ParseError(f"{where}: 'mapping' is missing or not an object", kind="bad_record")
    keys = list(mapping)
    nodes = []
    for key in keys:
        node = mapping[key]
        message = node.get("message") if isinstance(node, dict) else None
        if not isinstance(node, dict) or not (message is None or isinstance(message, dict)):
            raise ParseError(f"{where}: node {_json.shown(key)} is not a node object", kind="bad_record")
        nodes.append(node)
    wheres = [f"{where}, node {_json.shown(key)}" for key in keys]
    times = [_time(node, tz, w) for node, w in zip(nodes, wheres, strict=False)]
    parents = _json.index_parents(keys, [node.get("parent") for node in nodes])
    current = conv.get("current_node")
    leaf = keys.index(current) if isinstance(current, str) and current in mapping else _json.latest_leaf(parents, times)

    messages = []
    for i, active in _json.tree_order(parents, leaf):
        message = nodes[i].get("message")
        if message is None:
            continue
        imported = _message(message, keys[i], times[i], active, wheres[i])
        if imported is not None:
            messages.append(imported)
    return Conversation(
        conversation_id=_json.conversation_id(own_id, conv, where),
        title=_json.title(conv.get("title")),
        messages=tuple(messages),
        created=_json.timestamp(conv.get("create_time"), tz, f"{where}, create_time"),
    )


def _time(node: dict, tz: tzinfo, where: str) -> datetime | None:
    """The create_time of a node's message; None for a node without one."""
    created = (node.get("message") or {}).get("create_time")
    return _json.timestamp(created, tz, f"{where}, create_time")


def _message(message: dict, key: str, ts: datetime | None, active: bool, where: str) -> ImportedMessage | None:
    """One node's message; None for the empty system scaffold."""
    author = message.get("author")
    role = _json.role(author.get("role") if isinstance(author, dict) else None, where)
    content = found if isinstance(found := message.get("content"), dict) else {}
    content_type = content.get("content_type")
    text, kind = _render(content)
    metadata = found if isinstance(found := message.get("metadata"), dict) else {}
    hidden = bool(metadata.get("is_visually_hidden_from_conversation"))
    if content_type == "user_editable_context":
        role, hidden = "system", True
    elif content_type == "execution_output":
        role = "tool"
    if not text.strip():
        if role == "system" and content_type == "text":
            return None
        hidden = hidden or role == "system"
        text, kind = _json.EMPTY, "placeholder"
    source_id = message.get("id") if isinstance(message.get("id"), str) else key
    return ImportedMessage(role, text, ts, active, kind, hidden, source_id)


def _render(content: dict) -> tuple[str, str]:
    """(text, kind) of a message's content."""
    found = content.get("content_type")
    content_type = found if isinstance(found, str) else None  # a damaged export's list or dict is no type
    if content_type in ("text", "multimodal_text"):
        parts = content.get("parts")
        return "\n".join(p for p in map(_part, parts if isinstance(parts, list) else []) if p), "text"
    if content_type == "code":
        return _text(content.get("text")), "code"
    if content_type == "execution_output":
        return _text(content.get("text")), "execution_output"
    if content_type in _QUOTE_FIELDS:
        return next((t for f in _QUOTE_FIELDS[content_type] if (t := _text(content.get(f))).strip()), ""), "quote"
    if content_type == "user_editable_context":
        fields = (_text(content.get(f)).strip() for f in ("user_profile", "user_instructions"))
        return "\n\n".join(f for f in fields if f), "text"
    shown = content_type if isinstance(content_type, str) and content_type else "no content_type"
    return f"[{shown}]", "placeholder"


def _part(part: object) -> str:
    """A string part as itself; an image, audio or file part as a marker."""
    if isinstance(part, str):
        return part
    if not isinstance(part, dict):
        return ""
    if isinstance(part.get("text"), str):  # audio_transcription parts carry their words
        return part["text"]
    part_type = part.get("content_type")
    if not isinstance(part_type, str) or not part_type:
        return "[attachment]"
    if part_type == "image_asset_pointer":
        return "[image]"
    return f"[{part_type.removesuffix('_asset_pointer')}]"


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""
