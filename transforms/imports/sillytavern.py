"""SillyTavern chat files (``data/<user>/chats/<character>/<name>.jsonl``): one file, one chat.

JSON lines. The first line is a header, ``{"user_name", "character_name", "create_date",
"chat_metadata"}`` (a group chat's may hold only ``chat_metadata``); every other line is
a message, ``{"name", "is_user", "is_system", "send_date", "mes", "extra", "swipes",
"swipe_id", "swipe_info"}``.

- Roles: ``is_user`` is the user. A message whose ``extra.type`` names a SillyTavern
  system message (``narrator`` from ``/sys``, ``comment``, ``help``, ...) is ``system``,
  of that kind. Every other message is the character's: ``assistant``. The speaker's
  ``name`` is not kept; the chat's title is the header's ``character_name``.
- Hidden: ``is_system: true`` marks what SillyTavern keeps out of the prompt (its own
  notices, comments, and messages the user hid); they are kept with ``hidden=True``.
  ``extra.reasoning`` (a reasoning model's thinking) is a hidden assistant message of
  kind ``thinking`` just before its reply.
- Swipes: ``mes`` is the chosen reply and ``swipes`` every alternative. The chosen one
  (``swipe_id``, else the swipe equal to ``mes``) is the message; each other swipe is
  kept after the chat's active messages with ``active=False``, timed by its
  ``swipe_info`` entry when it has one.
- Content: ``mes``; ``extra.image`` adds ``[image]`` and ``extra.file`` adds
  ``[attachment: <name>]``. An empty message reads ``[empty message]``.
- Times: ``send_date`` in any form SillyTavern has written: epoch milliseconds (its
  TavernAI heritage), ``June 19, 2023 2:20pm``, ``2023-6-8 @16h 53m 12s 456ms``,
  ``2024-07-12@01h31m37s123ms``, or ISO-8601. The non-ISO forms are the local time of
  the machine SillyTavern ran on and are read in ``tz``; an ISO time without an offset
  too. A date that cannot be read leaves its message undated, with a note. When no
  message has a time, every message takes the header's ``create_date`` (a note says
  so), else ``default_ts`` (the file's date, counted in ``Export.file_dated``).
- Id: ``sillytavern-`` and the first 16 hex digits of the SHA-256 of the header's
  identity (``user_name``, ``character_name``, ``create_date``,
  ``chat_metadata.integrity``), so a chat keeps its id as it grows; a header without
  ``create_date`` or ``integrity`` (or no header) adds the first message's ``name``,
  ``is_user`` and ``send_date``.

One unreadable line (bad UTF-8, bad JSON, not an object, no ``mes``) never loses the
rest: it is skipped with a note naming its line number. ``ParseError`` only when no
line is readable (``bad_json``) or no line is a message (``no_messages``). Notes and
errors never carry message text.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any, TypeGuard

from transforms.errors import ParseError
from transforms.imports import _json
from transforms.imports.base import Conversation, Export, ImportedMessage
from transforms.redact import redact_reason

FORMAT = "sillytavern"

_HEADER_KEYS = ("user_name", "character_name", "create_date", "chat_metadata")
_MONTHS = {
    name: i
    for i, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        start=1,
    )
    for name in names
}
# June 19, 2023 2:20pm (getMessageTimeStamp before ISO)
_MERIDIEM = re.compile(r"([A-Za-z]+)\.? (\d{1,2}), (\d{4}) (\d{1,2}):(\d{2}) ?([ap]m)", re.IGNORECASE)
# 2023-6-8 @16h 53m 12s 456ms (humanizedDateTime, 2023) and 2024-07-12@01h31m37s[123ms] (since)
_HUMANIZED = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2}) ?@(\d{1,2})h ?(\d{1,2})m ?(\d{1,2})s(?: ?(\d{1,3})ms)?")


def sniff(data: bytes) -> bool:
    """True when the file opens with a SillyTavern header or message line (never raises)."""
    try:
        if b'"mes"' not in data[: 1 << 20] and b'"character_name"' not in data[: 1 << 20]:
            return False
        lines = [line for line in _json.sniff_lines(data) if line is not None]
        if not lines:
            return False
        first = lines[0]
        if _is_message(first):
            return True
        if not _is_header(first):
            return False
        named = "user_name" in first and "character_name" in first
        return named or any(_is_message(line) for line in lines[1:])
    except Exception:  # noqa: BLE001 - a sniffer answers, it never fails
        return False


def _is_header(record: object) -> TypeGuard[dict[str, Any]]:
    return (
        isinstance(record, dict)
        and "mes" not in record
        and (("user_name" in record and "character_name" in record) or isinstance(record.get("chat_metadata"), dict))
        and not any(key in record for key in ("role", "messages", "type", "conversations"))
    )


def _is_message(record: object) -> bool:
    return isinstance(record, dict) and isinstance(record.get("mes"), str) and isinstance(record.get("is_user"), bool)


def parse(data: bytes, tz: dt.tzinfo, default_ts: dt.datetime | None = None) -> Export:
    """The chat in the file, as one Conversation; see the module docstring."""
    if not data.strip():
        raise ParseError("file is empty or whitespace only", kind="empty")
    notes: list[str] = []
    lines = _json.json_lines(data, notes)
    if not lines:
        raise ParseError("no line is a readable JSON record", kind="bad_json")
    header: dict = {}
    if "mes" not in lines[0][1] and any(key in lines[0][1] for key in _HEADER_KEYS):
        header_line, header = lines.pop(0)
        if header.get("create_date") not in (None, "") and _send_date(header["create_date"], tz) is None:
            notes.append(f"line {header_line}: unreadable create_date")
    active: list[ImportedMessage] = []
    swiped: list[ImportedMessage] = []
    first: dict | None = None
    for lineno, record in lines:
        if "mes" not in record or not (record["mes"] is None or isinstance(record["mes"], str)):
            notes.append(f"line {lineno}: no 'mes' text; line skipped")
            continue
        if first is None:
            first = record
        chosen, others = _message(record, lineno, tz, notes)
        active.extend(chosen)
        swiped.extend(others)
    if first is None:
        raise ParseError("no line is a message", kind="no_messages")
    messages = active + swiped
    created = _send_date(header.get("create_date"), tz)
    file_dated = 0
    if all(m.ts is None for m in messages):
        fallback = created or _aware(default_ts, tz)
        messages = [_dated(m, fallback) for m in messages]
        if created is not None:
            notes.insert(0, f"no message has a time; dated by the chat's create_date {created.isoformat()}")
        elif fallback is not None:
            file_dated = len(messages)
        else:
            notes.insert(0, "no message has a time and no default date was given: every message is undated")
    title = header.get("character_name")
    conversation = Conversation(
        conversation_id="sillytavern-" + _json.content_hash(_identity(header, first)),
        title=(title.strip() or None) if isinstance(title, str) else None,
        messages=tuple(messages),
        created=created or min((m.ts for m in messages if m.ts is not None), default=None),
    )
    return Export(FORMAT, (conversation,), tuple(notes), file_dated=file_dated)


def _message(
    record: dict, lineno: int, tz: dt.tzinfo, notes: list[str]
) -> tuple[list[ImportedMessage], list[ImportedMessage]]:
    """(the message, with its thinking before it; the swipes not chosen, inactive)."""
    extra = found if isinstance(found := record.get("extra"), dict) else {}
    system_type = extra.get("type") if isinstance(extra.get("type"), str) and extra["type"].strip() else None
    if record.get("is_user") is True:
        role, kind = "user", "text"
    elif system_type is not None:
        role, kind = "system", redact_reason(system_type.strip().lower(), 40)
    else:
        role, kind = "assistant", "text"
    hidden = record.get("is_system") is True
    ts = _send_date(record.get("send_date"), tz)
    if ts is None and record.get("send_date") not in (None, ""):
        notes.append(f"line {lineno}: unreadable send_date; message kept undated")
    chosen: list[ImportedMessage] = []
    reasoning = extra.get("reasoning")
    if isinstance(reasoning, str) and reasoning.strip():
        chosen.append(ImportedMessage("assistant", reasoning, ts, True, "thinking", True))
    text = record.get("mes") or ""
    chosen.append(ImportedMessage(role, _content(text, extra), ts, True, kind, hidden))
    swipes = listed if isinstance(listed := record.get("swipes"), list) else []
    info = given if isinstance(given := record.get("swipe_info"), list) else []
    pick = record.get("swipe_id")
    if not (isinstance(pick, int) and not isinstance(pick, bool) and 0 <= pick < len(swipes)):
        pick = swipes.index(text) if text in swipes else None
    others = []
    for i, swipe in enumerate(swipes):
        if i == pick or not isinstance(swipe, str):
            continue
        entry = info[i] if i < len(info) and isinstance(info[i], dict) else {}
        when = _send_date(entry.get("send_date"), tz) or ts
        others.append(ImportedMessage(role, swipe or _json.EMPTY, when, False, kind, hidden))
    return chosen, others


def _content(text: str, extra: dict) -> str:
    parts = [text] if text.strip() else []
    if isinstance(extra.get("image"), str) and extra["image"]:
        parts.append("[image]")
    file = extra.get("file")
    if isinstance(file, dict):
        name = file.get("name")
        parts.append(f"[attachment: {name}]" if isinstance(name, str) and name else "[attachment]")
    return "\n".join(parts) or _json.EMPTY


def _send_date(value: object, tz: dt.tzinfo) -> dt.datetime | None:
    """A SillyTavern date as an aware datetime (see the module docstring); None when absent or unreadable."""
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            return _json.timestamp(value, tz, "send_date")
        except ParseError:
            return None
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    ts: dt.datetime | None
    try:
        ts = dt.datetime.fromisoformat(text)
    except ValueError:
        ts = _humanized(text) or _meridiem(text)
    if ts is None:
        return None
    return ts.replace(tzinfo=tz) if ts.tzinfo is None else ts


def _humanized(text: str) -> dt.datetime | None:
    found = _HUMANIZED.fullmatch(text)
    if not found:
        return None
    year, month, day, hour, minute, second, ms = found.groups()
    # the milliseconds are a count, not a fraction: SillyTavern wrote 9 ms as "09" (and read it back as 009)
    try:
        return dt.datetime(
            int(year), int(month), int(day), int(hour), int(minute), int(second), int(ms) * 1000 if ms else 0
        )
    except ValueError:
        return None


def _meridiem(text: str) -> dt.datetime | None:
    found = _MERIDIEM.fullmatch(text)
    month = _MONTHS.get(found.group(1).lower()) if found else None
    if not found or month is None:
        return None
    _, day, year, hour, minute, half = found.groups()
    hour24 = int(hour) % 12 + (12 if half.lower() == "pm" else 0)
    try:
        return dt.datetime(int(year), month, int(day), hour24, int(minute))
    except ValueError:
        return None


def _aware(ts: dt.datetime | None, tz: dt.tzinfo) -> dt.datetime | None:
    return ts.replace(tzinfo=tz) if ts is not None and ts.tzinfo is None else ts


def _dated(message: ImportedMessage, ts: dt.datetime | None) -> ImportedMessage:
    return ImportedMessage(
        message.role, message.content, ts, message.active, message.kind, message.hidden, message.source_id
    )


def _identity(header: dict, first: dict) -> dict:
    """What names the chat for good: the header's identity, and the first message when that is thin."""
    metadata = found if isinstance(found := header.get("chat_metadata"), dict) else {}
    identity: dict = {key: header.get(key) for key in ("user_name", "character_name", "create_date")}
    identity["integrity"] = metadata.get("integrity")
    if identity["create_date"] in (None, "") and identity["integrity"] in (None, ""):
        identity["first"] = {key: first.get(key) for key in ("name", "is_user", "send_date")}
    return identity
