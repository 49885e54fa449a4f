"""Grok (x.ai) data exports: ``prod-grok-backend.json``, every conversation with its responses.

The file is one JSON object, ``{"conversations": [...], "projects": [...], ...}``. Each
item of ``conversations`` is ``{"conversation": {...}, "responses": [...]}``: the
conversation's ``id``, ``title``, ``create_time`` (ISO-8601) and, in newer exports,
``leaf_response_id``; and its responses, each usually wrapped as
``{"response": {...}, "share_link": ...}``, sometimes bare.

- A response is ``{_id, sender, message, create_time, parent_response_id, model, ...}``.
  ``sender`` is ``human`` (the user) or the assistant, written ``ASSISTANT``,
  ``assistant`` or a model name (``grok-3``): every sender but ``human``/``user`` and
  ``system`` is the assistant.
- Times: a response's ``create_time`` is Mongo extended JSON, ``{"$date":
  {"$numberLong": "<epoch ms>"}}`` or ``{"$date": "<ISO>"}``, or a plain ISO string or
  epoch number; all read through ``_json.timestamp``.
- Content: ``message``; each ``generated_image_urls`` entry adds ``[image]`` and each
  ``file_attachments`` entry ``[attachment]``. A response without text is kind
  ``attachment`` when it has those, else ``placeholder`` reading ``[empty message]``
  (an image-only reply, or one that failed with ``error``).
- ``thinking_trace`` (and each ``agent_thinking_traces[].thinking_trace``) is kept as a
  hidden assistant message of kind ``thinking`` just before its response, on the same
  branch.
- Branches: when responses carry ``parent_response_id``, the path from the root to
  ``leaf_response_id`` (else to the response written last) is active and every other
  response is kept with ``active=False`` (``_json.tree_order``). Without parent ids the
  responses are one chain in file order.
- Ids: ``conversation.id``, else the content hash of the item (``_json.conversation_id``).
  A response's ``_id`` (else ``response_id``) is its ``source_id``.
- ``projects``, ``media_posts`` and ``tasks`` hold no conversation; they are counted in a
  note.

As for the other JSON exports, any error fails the whole file with a ``ParseError``
naming the conversation and response by position or id, never by text.
"""

from __future__ import annotations

from datetime import datetime, tzinfo

from transforms.errors import ParseError
from transforms.imports import _json
from transforms.imports.base import Conversation, Export, ImportedMessage

FORMAT = "grok"

_USER_SENDERS = frozenset({"human", "user"})
_OTHER_LISTS = ("projects", "media_posts", "tasks")


def sniff(data: bytes) -> bool:
    """An object whose ``conversations`` are ``{"conversation": {...}, "responses": [...]}`` items."""
    if b'"responses"' not in data[: 1 << 20]:
        return False
    top = _json.sniff_load(data)
    items = top.get("conversations") if isinstance(top, dict) else None
    return (
        isinstance(items, list)
        and bool(items)
        and all(
            isinstance(item, dict)
            and isinstance(item.get("conversation"), dict)
            and isinstance(item.get("responses"), list)
            for item in items
        )
    )


def parse(data: bytes, tz: tzinfo, default_ts: datetime | None = None) -> Export:
    """Every conversation in the export, abandoned branches included."""
    top = _json.load(data)
    if not isinstance(top, dict) or not isinstance(top.get("conversations"), list):
        raise ParseError("top level is not an object with a 'conversations' array", kind="bad_record")
    items = top["conversations"]
    if not items:
        raise ParseError("the export holds no conversations", kind="no_messages")
    conversations = []
    for i, item in enumerate(items):
        if not isinstance(item, dict) or not isinstance(item.get("conversation"), dict):
            raise ParseError(f"conversation {i} has no 'conversation' object", kind="bad_record")
        conversations.append(_conversation(item, i, tz))
    counted = [f"{key}: {len(top[key])}" for key in _OTHER_LISTS if isinstance(top.get(key), list) and top[key]]
    notes = (f"skipped what holds no conversation ({', '.join(counted)})",) if counted else ()
    return Export(FORMAT, tuple(conversations), notes)


def _conversation(item: dict, index: int, tz: tzinfo) -> Conversation:
    conv = item["conversation"]
    own_id = conv.get("id")
    where = _json.where_conversation(index, own_id)
    responses = item.get("responses")
    if not isinstance(responses, list):
        raise ParseError(f"{where}: 'responses' is missing or not an array", kind="bad_record")
    raw = []
    for position, wrapper in enumerate(responses):
        response = wrapper.get("response", wrapper) if isinstance(wrapper, dict) else None
        if not isinstance(response, dict):
            raise ParseError(f"{where}: response {position} is not an object", kind="bad_record")
        raw.append(response)
    keys = [_response_id(r) for r in raw]
    wheres = [f"{where}, response {i}" + (f" ({_json.shown(k)})" if k else "") for i, k in enumerate(keys)]
    times = [
        _json.timestamp(_unwrap_date(r.get("create_time")), tz, f"{w}, create_time")
        for r, w in zip(raw, wheres, strict=False)
    ]
    if any(isinstance(r.get("parent_response_id"), str) and r["parent_response_id"] for r in raw):
        parents = _json.index_parents(keys, [r.get("parent_response_id") for r in raw])
        named = conv.get("leaf_response_id")
        leaf = keys.index(named) if isinstance(named, str) and named in keys else _json.latest_leaf(parents, times)
    else:
        parents = [i - 1 if i else None for i in range(len(raw))]
        leaf = len(raw) - 1 if raw else None
    messages: list[ImportedMessage] = []
    for i, active in _json.tree_order(parents, leaf):
        messages.extend(_messages(raw[i], keys[i], times[i], active, wheres[i]))
    return Conversation(
        conversation_id=_json.conversation_id(own_id, item, where),
        title=_json.title(conv.get("title")),
        messages=tuple(messages),
        created=_json.timestamp(_unwrap_date(conv.get("create_time")), tz, f"{where}, create_time"),
    )


def _response_id(response: dict) -> str | None:
    for key in ("_id", "response_id", "id"):
        value = response.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def _unwrap_date(value: object) -> object:
    """Mongo extended JSON (``{"$date": {"$numberLong": "ms"}}``, ``{"$date": ...}``) as a plain value."""
    if isinstance(value, dict) and "$date" in value:
        value = value["$date"]
    if isinstance(value, dict) and isinstance(value.get("$numberLong"), str):
        try:
            return int(value["$numberLong"])
        except ValueError:
            return value["$numberLong"]  # read, and refused, as an unparseable timestamp
    return value


def _messages(
    response: dict, source_id: str | None, ts: datetime | None, active: bool, where: str
) -> list[ImportedMessage]:
    """The response's thinking (hidden, when it has some) and the response itself."""
    role = _role(response.get("sender"), where)
    out = []
    thinking = _thinking(response)
    if thinking:
        sid = f"{source_id}:thinking" if source_id else None
        out.append(ImportedMessage("assistant", thinking, ts, active, "thinking", True, sid))
    text = found if isinstance(found := response.get("message"), str) else ""
    extras = ["[image]" for url in _list(response.get("generated_image_urls")) if url]
    extras += ["[attachment]" for asset in _list(response.get("file_attachments")) if asset]
    if text.strip():
        content, kind = "\n".join([text, *extras]), "text"
    elif extras:
        content, kind = "\n".join(extras), "attachment"
    else:
        content, kind = _json.EMPTY, "placeholder"
    out.append(ImportedMessage(role, content, ts, active, kind, role == "system", source_id))
    return out


def _role(sender: object, where: str) -> str:
    """``human``/``user`` is the user, ``system`` the system; any other sender is the assistant."""
    if not isinstance(sender, str) or not sender.strip():
        raise ParseError(f"{where}: sender is missing or empty", kind="bad_record")
    lowered = sender.strip().lower()
    if lowered in _USER_SENDERS:
        return "user"
    return "system" if lowered == "system" else "assistant"


def _thinking(response: dict) -> str:
    parts = [response["thinking_trace"]] if isinstance(response.get("thinking_trace"), str) else []
    for trace in _list(response.get("agent_thinking_traces")):
        if isinstance(trace, dict) and isinstance(trace.get("thinking_trace"), str):
            parts.append(trace["thinking_trace"])
    return "\n\n".join(p for p in parts if p.strip())


def _list(value: object) -> list:
    return value if isinstance(value, list) else []
