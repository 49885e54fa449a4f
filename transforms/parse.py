"""Parse one transcript file's bytes into a ``Session``.

``parse_transcript`` dispatches on the file name's extension (case-insensitive):
``.md``/``.markdown`` is the markdown an agent's ``session_write`` tool writes,
``.jsonl`` is one JSON object per line. ``docs/formats.md`` is the user-facing spec.

Design and invariants:

- The result depends on the name, the bytes and ``tz`` alone. No I/O, no clock.
- Bytes are strict UTF-8; one leading BOM is dropped; CRLF is read as LF (a lone CR
  is kept as text).
- A naive timestamp is read in ``tz``; an aware one keeps its offset. Every ``ts`` in
  the result is therefore aware or ``None``.
- ``people`` (a list of names, or one text of names separated by commas) keeps each
  name with its whitespace collapsed, empty ones and repeats (in any case) left out;
- ``user_id`` is stripped and lower-cased and must match ``USER_ID_RE``;
  ``session_id`` and ``agent`` are coerced to ``str`` and stripped (YAML may hand over
  a date or an int). An empty ``agent`` counts as absent.
- Roles are stripped and lower-cased; ``human`` reads as ``user`` and ``ai``,
  ``model``, ``bot`` as ``assistant``. In markdown only these and ``KNOWN_ROLES`` make
  a header; in JSONL any non-empty role is kept.
- Every failure is a ``ParseError`` with a ``kind`` (the quarantine reason) and a
  one-line ``reason`` that says what and where. A reason never carries message text:
  at most a key name or a timestamp value, redacted and then cut to 40 characters
  (``transforms.redact.redact_reason``).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from datetime import date, datetime, tzinfo

import yaml

from transforms import yamls
from transforms.errors import ParseError
from transforms.model import KNOWN_ROLES, MESSAGE_FLAGS, USER_ID_RE, Message, Session
from transforms.redact import redact_user_id

_MARKDOWN_EXTS = (".md", ".markdown")
_JSONL_EXTS = (".jsonl",)

_ROLE_ALIASES = {"human": "user", "ai": "assistant", "model": "assistant", "bot": "assistant"}
_HEADER_ROLES = frozenset(KNOWN_ROLES) | frozenset(_ROLE_ALIASES)

# A remainder that starts with a digit is a (maybe broken) time; anything else after a
# separator, as in "## User - Experience", keeps the line ordinary text.
_HEADER_RE = re.compile(r"^##[ \t]+(?P<role>[A-Za-z]+)(?:[ \t]+(?:·|-|\|)[ \t]+(?P<ts>\d.*)|[ \t]*)$")
# CommonMark fences: up to three spaces of indent; a backtick fence's info string has no backtick.
_FENCE_OPEN_RE = re.compile(r"^ {0,3}(?P<fence>`{3,}(?=[^`]*$)|~{3,})")
_FRONTMATTER_FENCE_RE = re.compile(r"^---[ \t]*$")

# What str.splitlines() would split on; a session id must be one line to all readers.
_LINE_BREAKS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")
_MAX_SESSION_ID = 200
_EPOCH_MS_THRESHOLD = 1e11
_TS_SHOWN = 40


def parse_transcript(name: str, data: bytes, *, tz: tzinfo) -> Session:
    """Parse a transcript file's bytes; raise ``ParseError`` with a ``kind`` when it cannot."""
    lower = name.lower()
    if lower.endswith(_MARKDOWN_EXTS):
        return _parse_markdown(decode_text(data), tz)
    if lower.endswith(_JSONL_EXTS):
        return _parse_jsonl(decode_text(data), tz)
    supported = ", ".join(_MARKDOWN_EXTS + _JSONL_EXTS)
    raise ParseError(f"unknown file extension in {_shown(name)}; supported: {supported}", kind="unknown_extension")


def decode_text(data: bytes) -> str:
    """Strict UTF-8 without a leading BOM and with CRLF read as LF; empty is a ParseError.

    Shared by the transcript parsers and the export importers.
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ParseError(f"invalid UTF-8 at byte offset {exc.start}", kind="bad_utf8") from exc
    text = text.removeprefix("\ufeff").replace("\r\n", "\n")
    if not text.strip():
        raise ParseError("file is empty or whitespace only", kind="empty")
    return text


# --- markdown -----------------------------------------------------------------


def markdown_body(content: str) -> str:
    """``content`` as a Markdown turn body that reads back as this one turn.

    A line outside a code fence that reads as a turn header (``## assistant``) gets one
    space of indent, which keeps it text; a fence left open at the end is closed, so it
    cannot swallow the turns after it; leading and trailing blank lines go (the reader
    trims them). Everything else is kept as written.
    """
    out: list[str] = []
    fence: str | None = None
    for line in content.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if fence is not None:
            if _closes_fence(line, fence):
                fence = None
        elif (m := _HEADER_RE.match(line)) and m["role"].lower() in _HEADER_ROLES:
            line = " " + line
        elif (f := _FENCE_OPEN_RE.match(line)) is not None:
            fence = f["fence"]
        out.append(line)
    if fence is not None:
        out.append(fence)
    return _trim_blank_lines(out)


def _parse_markdown(text: str, tz: tzinfo) -> Session:
    lines = text.split("\n")
    meta, body_start = _frontmatter(lines)
    turns: list[tuple[str, datetime | None, list[str]]] = []
    fence: str | None = None
    for lineno, line in enumerate(lines[body_start:], start=body_start + 1):
        if fence is not None:
            if _closes_fence(line, fence):
                fence = None
        elif (m := _HEADER_RE.match(line)) and m["role"].lower() in _HEADER_ROLES:
            ts = None if m["ts"] is None else _parse_iso(m["ts"], tz, lineno)
            turns.append((_normalise_role(m["role"]), ts, []))
            continue
        elif (f := _FENCE_OPEN_RE.match(line)) is not None:
            fence = f["fence"]
        if turns:
            turns[-1][2].append(line)
        # Lines before the first header are the preamble ("Parent Day: [[...]]"): not a message.
    if not turns:
        raise ParseError("no turn headers ('## user', '## assistant', ...) found", kind="no_messages")
    messages = tuple(
        Message(role=role, content=_trim_blank_lines(body), ts=ts, seq=i) for i, (role, ts, body) in enumerate(turns)
    )
    return Session(
        session_id=_session_id(meta.get("session_id"), "frontmatter"),
        user_id=_user_id(meta.get("user_id"), "frontmatter"),
        agent=_agent(meta.get("agent"), "frontmatter", kind="bad_frontmatter"),
        source_format="markdown",
        messages=messages,
        people=_people(meta.get("people"), "frontmatter", kind="bad_frontmatter"),
    )


def _frontmatter(lines: list[str]) -> tuple[dict, int]:
    """(mapping, index of the first body line); an absent frontmatter is an empty mapping."""
    if not _FRONTMATTER_FENCE_RE.match(lines[0]):
        return {}, 0
    end = next((i for i in range(1, len(lines)) if _FRONTMATTER_FENCE_RE.match(lines[i])), None)
    if end is None:
        raise ParseError("frontmatter opened on line 1 is never closed by '---'", kind="bad_frontmatter")
    try:
        meta = yamls.safe_load("\n".join(lines[1:end]))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 2}" if mark is not None else f"lines 2-{end}"
        raise ParseError(f"frontmatter is not valid YAML ({where})", kind="bad_frontmatter") from exc
    if meta is None:
        return {}, end + 1
    if not isinstance(meta, dict):
        raise ParseError(
            f"frontmatter (lines 1-{end + 1}) is a YAML {type(meta).__name__}, not a mapping",
            kind="bad_frontmatter",
        )
    return meta, end + 1


def _closes_fence(line: str, fence: str) -> bool:
    stripped = line.lstrip(" ")
    if len(line) - len(stripped) > 3:
        return False
    run = len(stripped) - len(stripped.lstrip(fence[0]))
    return run >= len(fence) and not stripped[run:].strip(" \t")


def _trim_blank_lines(lines: list[str]) -> str:
    start, end = 0, len(lines)
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return "\n".join(lines[start:end])


# --- jsonl --------------------------------------------------------------------


def _parse_jsonl(text: str, tz: tzinfo) -> Session:
    meta: dict[str, object] = {}
    meta_line: dict[str, int] = {}
    messages: list[Message] = []
    for lineno, line in enumerate(_split(text), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line, parse_constant=_reject_constant)
        except (ValueError, RecursionError) as exc:
            detail = f" ({exc.msg}, column {exc.colno})" if isinstance(exc, json.JSONDecodeError) else ""
            raise ParseError(f"line {lineno}: invalid JSON{detail}", kind="bad_json") from exc
        if not isinstance(record, dict):
            raise ParseError(f"line {lineno}: expected a JSON object, got {_json_type(record)}", kind="bad_record")
        for key in ("session_id", "user_id", "agent", "people"):
            if key not in meta and record.get(key) is not None:
                meta[key], meta_line[key] = record[key], lineno
        role = record.get("role")
        if not isinstance(role, str) or not role.strip():
            raise ParseError(f"line {lineno}: 'role' is missing or empty", kind="bad_record")
        messages.append(
            Message(
                role=_normalise_role(role),
                content=_content(record, lineno),
                ts=_json_timestamp(record.get("timestamp"), tz, lineno),
                seq=len(messages),
                flags=_flags(record.get("flags")),
            )
        )
    if not messages:
        raise ParseError("no message lines found", kind="no_messages")
    return Session(
        session_id=_session_id(meta.get("session_id"), f"line {meta_line.get('session_id')}"),
        user_id=_user_id(meta.get("user_id"), f"line {meta_line.get('user_id')}"),
        agent=_agent(meta.get("agent"), f"line {meta_line.get('agent')}", kind="bad_record"),
        source_format="jsonl",
        messages=tuple(messages),
        people=_people(meta.get("people"), f"line {meta_line.get('people')}", kind="bad_record"),
    )


def _split(text: str) -> Iterator[str]:
    """``text.split("\\n")``, one line at a time (a day of 100,000 messages is not held twice)."""
    start = 0
    while (end := text.find("\n", start)) >= 0:
        yield text[start:end]
        start = end + 1
    yield text[start:]


def _flags(value: object) -> tuple[str, ...]:
    """The known message flags of a record (others are ignored, as unknown keys are)."""
    if not isinstance(value, list):
        return ()
    return tuple(f for f in MESSAGE_FLAGS if f in value)


def _reject_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def _content(record: dict, lineno: int) -> str:
    if "content" not in record:
        raise ParseError(f"line {lineno}: 'content' is missing", kind="bad_record")
    content = record["content"]
    if content is None:
        # OpenAI-style tool-call turns say null on purpose: an empty message, not a broken one.
        return ""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise ParseError(
            f"line {lineno}: 'content' is {_json_type(content)}, not a string or a list of blocks",
            kind="bad_record",
        )
    parts: list[str] = []
    for i, block in enumerate(content):
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict) and isinstance(block.get("type"), str) and block["type"]:
            if block["type"] != "text":
                parts.append(f"[{block['type']}]")
            elif isinstance(block.get("text"), str):
                parts.append(block["text"])
            else:
                raise ParseError(f"line {lineno}: content block {i} has no string 'text'", kind="bad_record")
        else:
            raise ParseError(f"line {lineno}: content block {i} has no 'type'", kind="bad_record")
    return "\n".join(parts)


def _json_timestamp(value: object, tz: tzinfo, lineno: int) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, str):
        return _parse_iso(value, tz, lineno)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            seconds = value / 1000 if value > _EPOCH_MS_THRESHOLD else value
            if not math.isfinite(seconds):
                raise ValueError("not finite")
            return datetime.fromtimestamp(seconds, tz)
        except (ValueError, OverflowError, OSError) as exc:
            raise ParseError(
                f"line {lineno}: epoch timestamp out of range: {_shown(str(value))}", kind="bad_timestamp"
            ) from exc
    raise ParseError(
        f"line {lineno}: 'timestamp' is {_json_type(value)}, not a string or epoch number",
        kind="bad_timestamp",
    )


def _json_type(value: object) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")


# --- shared -------------------------------------------------------------------


def _parse_iso(value: str, tz: tzinfo, lineno: int) -> datetime:
    try:
        ts = datetime.fromisoformat(value.strip())
    except ValueError as exc:
        raise ParseError(f"line {lineno}: unparseable timestamp {_shown(value)}", kind="bad_timestamp") from exc
    return ts.replace(tzinfo=tz) if ts.tzinfo is None else ts


def _normalise_role(role: str) -> str:
    role = role.strip().lower()
    return _ROLE_ALIASES.get(role, role)


def _scalar(value: object) -> str | None:
    """A YAML/JSON scalar as text; ``None`` for a list or mapping."""
    if isinstance(value, (date, datetime)):
        return value.isoformat()
    if isinstance(value, (str, int, float, bool)):
        return str(value)
    return None


def _session_id(value: object, where: str) -> str | None:
    if value is None:
        return None
    text = _scalar(value)
    problem = None
    if text is None:
        problem = "is not a scalar"
    else:
        text = text.strip()
        if not text or text in (".", ".."):
            problem = "is empty"
        elif len(text) > _MAX_SESSION_ID:
            problem = f"is longer than {_MAX_SESSION_ID} characters"
        elif any(ch in _LINE_BREAKS for ch in text):
            problem = "spans more than one line"
        elif "/" in text or "\\" in text:
            problem = "contains '/' or '\\'"
    if problem:
        raise ParseError(f"{where}: session_id {problem}", kind="bad_session_id")
    return text


def _user_id(value: object, where: str) -> str | None:
    if value is None:
        return None
    text = _scalar(value)
    text = None if text is None else redact_user_id(text)
    if text is None or not USER_ID_RE.fullmatch(text):
        raise ParseError(
            f"{where}: user_id must be 1-64 of a-z 0-9 . _ - starting with a letter or digit",
            kind="bad_user_id",
        )
    return text


def _agent(value: object, where: str, *, kind: str) -> str | None:
    if value is None:
        return None
    text = _scalar(value)
    if text is None:
        raise ParseError(f"{where}: agent is not a scalar", kind=kind)
    return text.strip() or None


def _people(value: object, where: str, *, kind: str) -> tuple[str, ...]:
    """The names a transcript declares: a list of names, or one text of names separated by commas.

    A list inside the list (an unquoted ``[[Dimas]]``) gives its names too.

    Each is stripped; empty ones are skipped, and a name given twice (in any case) is kept once.
    """
    if value is None:
        return ()
    if isinstance(value, str):
        items: list[object] = list(value.split(","))
    elif isinstance(value, list):
        # An unquoted Obsidian link, ``people: [[Dimas]]``, reads as a list inside the list.
        items = [x for item in value for x in (item if isinstance(item, list) else [item])]
    else:
        raise ParseError(f"{where}: people is not a list of names", kind=kind)
    out: list[str] = []
    seen: set[str] = set()
    for item in items:
        text = None if item is None else _scalar(item)
        if text is None and item is not None:
            raise ParseError(f"{where}: people holds a list or mapping where a name belongs", kind=kind)
        name = " ".join((text or "").split())
        if name and name.lower() not in seen:
            seen.add(name.lower())
            out.append(name)
    return tuple(out)


def _shown(value: str) -> str:
    """A value safe to put in a one-line reason: redacted, then cut to 40 characters, quoted and escaped."""
    from transforms.redact import redact_reason  # on the error path only: the redactor costs an import

    return repr(redact_reason(value, _TS_SHOWN + 1))
