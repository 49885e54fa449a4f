"""What the JSON exports (ChatGPT, Claude.ai, Open WebUI, Grok) share: loading, times, ids, trees;
and what the JSON-lines logs share: reading line by line, surviving a bad line.

Invariants the importers rely on:

- Bytes are strict UTF-8 with one leading BOM dropped; ``NaN``/``Infinity`` are not JSON.
- ``sniff_load`` never raises: anything that is not a JSON array or object is ``None``.
- Every datetime returned is aware: a naive ISO string is read in ``tz``, an epoch
  number is an instant. An epoch above 1e11 is not seconds (that is the year 5138):
  it is divided by 1000 until it fits, so milliseconds, microseconds and nanoseconds
  all read right.
- A conversation id is the export's own id when it is a safe path segment, else a
  content hash of the conversation; an id that is present but unsafe is refused.
- ``tree_order`` puts every node exactly once: the active path root to leaf first,
  then the abandoned branches depth first, children in file order. Cycles and
  dangling parents in a broken export cannot loop it or lose a node.
- Reasons never carry message text: at most an id or a value cut to 40 characters.
- ``json_lines`` reads every line it can and names each one it cannot in a note (its
  number and why, never its text); ``sniff_lines`` does the same for a sniffer's first
  lines and never raises.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from datetime import datetime, tzinfo

from transforms.errors import ParseError
from transforms.parse import decode_text

_EPOCH_SECONDS_MAX = 1e11
_SHOWN = 40
_MAX_ID = 200
_ID_FORBIDDEN = frozenset("/\\\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")
_ROLE_ALIASES = {"human": "user", "ai": "assistant", "model": "assistant", "bot": "assistant"}

EMPTY = "[empty message]"


def decode(data: bytes) -> str:
    """Strict UTF-8 without a leading BOM; an empty file is a ParseError (``parse.decode_text``).

    CRLF read as LF changes nothing in JSON: a raw line break can only stand between tokens.
    """
    return decode_text(data)


def load(data: bytes) -> object:
    """The file as one JSON value; a ParseError with line and column when it is not JSON."""
    text = decode(data)
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise ParseError(f"invalid JSON at line {exc.lineno}, column {exc.colno} ({exc.msg})", kind="bad_json") from exc
    except (ValueError, RecursionError) as exc:
        raise ParseError("invalid JSON (NaN/Infinity or nesting too deep)", kind="bad_json") from exc


def sniff_load(data: bytes) -> object | None:
    """The file as a JSON array or object, or None for anything else; never raises."""
    head = data[:1024].removeprefix(b"\xef\xbb\xbf").lstrip()
    if not head.startswith((b"{", b"[")):
        return None  # cheap: an aider log or a JSONL file is never decoded here
    try:
        return load(data)
    except ParseError:
        return None


def json_lines(data: bytes, notes: list[str]) -> list[tuple[int, dict]]:
    """(line number, object) for every line that is a JSON object; each other non-blank line is noted and skipped.

    A leading BOM is dropped and a CR before the line break is ignored. ``NaN`` and
    ``Infinity`` are not JSON.
    """
    out = []
    for lineno, raw in enumerate(data.removeprefix(b"\xef\xbb\xbf").split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw.decode("utf-8").rstrip("\r"), parse_constant=_reject_constant)
        except UnicodeDecodeError as exc:
            notes.append(f"line {lineno}: invalid UTF-8 at byte {exc.start}; line skipped")
            continue
        except json.JSONDecodeError as exc:
            notes.append(f"line {lineno}: invalid JSON ({exc.msg}, column {exc.colno}); line skipped")
            continue
        except (ValueError, RecursionError):
            notes.append(f"line {lineno}: invalid JSON; line skipped")
            continue
        if not isinstance(record, dict):
            notes.append(f"line {lineno}: not a JSON object; line skipped")
            continue
        out.append((lineno, record))
    return out


def sniff_lines(data: bytes, count: int = 20) -> list[object]:
    """The non-blank lines among the first ``count`` as JSON values (None where one is not JSON); never raises."""
    out: list[object] = []
    for raw in data.removeprefix(b"\xef\xbb\xbf").split(b"\n", count)[:count]:
        if not raw.strip():
            continue
        try:
            out.append(json.loads(raw, parse_constant=_reject_constant))
        except (ValueError, RecursionError):
            out.append(None)
    return out


#: What ``items`` gives for a JSONL line that is not JSON (its note then lands in file order).
NOT_JSON = object()


def items(data: bytes) -> list[tuple[str, object]]:
    """(position, item) for every object of a file that is one object, a list, or JSON lines.

    A JSON line that is not JSON, or not UTF-8, is kept as ``NOT_JSON`` (a file cut short
    loses only its last line); ParseError when the file is a JSON scalar (``bad_record``),
    empty (``empty``), or no line is JSON (``bad_json``, or ``bad_utf8`` when the file is
    not UTF-8).
    """
    undecodable: ParseError | None = None
    try:
        top = json.loads(decode(data))
    except ParseError as exc:
        if exc.kind != "bad_utf8":
            raise
        undecodable, top = exc, None
    except (ValueError, RecursionError):
        top = None
    else:
        if isinstance(top, dict):
            return [("the object", top)]
        if isinstance(top, list):
            return [(f"item {i}", item) for i, item in enumerate(top)]
        raise ParseError("top level is neither an object, a list nor JSON lines", kind="bad_record")
    found: list[tuple[str, object]] = []
    for lineno, raw in enumerate(data.removeprefix(b"\xef\xbb\xbf").split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            found.append((f"line {lineno}", json.loads(raw.decode("utf-8"))))
        except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
            found.append((f"line {lineno}", NOT_JSON))
    if all(item is NOT_JSON for _, item in found):
        raise undecodable or ParseError("not JSON, nor JSON lines", kind="bad_json")
    return found


def lenient_timestamp(value: object, tz: tzinfo, where: str, notes: list[str]) -> datetime | None:
    """An aware datetime from ISO-8601 (a naive one read in ``tz``); None for none, and None with a note
    for one that cannot be read: the JSONL formats keep such a message, undated, and read on."""
    if value is None:
        return None
    try:
        ts = datetime.fromisoformat(value.strip()) if isinstance(value, str) else None
    except ValueError:
        ts = None
    if ts is None:
        notes.append(f"{where}: unreadable timestamp; message kept undated")
        return None
    return ts.replace(tzinfo=tz) if ts.tzinfo is None else ts


def usable_id(value: object) -> str | None:
    """A string or integer that can name a session (one line, 1 to 200 characters, no path), as text; else None."""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        return None
    text = str(value).strip()
    if not text or text in (".", "..") or len(text) > _MAX_ID or any(ch in _ID_FORBIDDEN for ch in text):
        return None
    return text


def content_hash(item: object) -> str:
    """The first 16 hex digits of the SHA-256 of ``item``'s canonical JSON (sorted keys, no spaces, UTF-8)."""
    canonical = json.dumps(item, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def records(obj: object) -> list[dict] | None:
    """A single object or a non-empty array of objects as a list of dicts; None otherwise."""
    if isinstance(obj, dict):
        return [obj]
    if isinstance(obj, list) and obj and all(isinstance(item, dict) for item in obj):
        return obj
    return None


def conversations(obj: object) -> list[dict]:
    """The conversations of an export that is one object or an array of them."""
    if isinstance(obj, dict):
        return [obj]
    if not isinstance(obj, list):
        raise ParseError(f"top level is {json_type(obj)}, not a conversation or an array of them", kind="bad_record")
    if not obj:
        raise ParseError("the export holds no conversations", kind="no_messages")
    for i, item in enumerate(obj):
        if not isinstance(item, dict):
            raise ParseError(f"item {i} is {json_type(item)}, not a conversation object", kind="bad_record")
    return obj


def timestamp(value: object, tz: tzinfo, where: str) -> datetime | None:
    """An ISO string or an epoch number as an aware datetime; None for null or ''."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        return _iso(value, tz, where)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return _epoch(value, tz, where)
    raise ParseError(f"{where}: timestamp is {json_type(value)}, not a string or epoch number", kind="bad_timestamp")


def _iso(value: str, tz: tzinfo, where: str) -> datetime:
    try:
        ts = datetime.fromisoformat(value.strip())
    except ValueError as exc:
        raise ParseError(f"{where}: unparseable timestamp {shown(value)}", kind="bad_timestamp") from exc
    return ts.replace(tzinfo=tz) if ts.tzinfo is None else ts


def _epoch(value: float, tz: tzinfo, where: str) -> datetime:
    seconds = float(value)
    try:
        if not math.isfinite(seconds):
            raise ValueError("not finite")
        while abs(seconds) > _EPOCH_SECONDS_MAX:
            seconds /= 1000
        return datetime.fromtimestamp(seconds, tz)
    except (ValueError, OverflowError, OSError) as exc:
        raise ParseError(f"{where}: epoch timestamp out of range: {shown(str(value))}", kind="bad_timestamp") from exc


def conversation_id(value: object, conversation: object, where: str) -> str:
    """The export's own id, or the first 16 hex digits of the sha256 of its canonical JSON."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = str(value)
    if value is None or (isinstance(value, str) and not value.strip()):
        canonical = json.dumps(conversation, sort_keys=True, ensure_ascii=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()[:16]
    if not isinstance(value, str):
        raise ParseError(f"{where}: id is {json_type(value)}, not a string", kind="bad_session_id")
    text = value.strip()
    if text in (".", "..") or len(text) > _MAX_ID or any(ch in _ID_FORBIDDEN for ch in text):
        raise ParseError(f"{where}: id {shown(text)} is not usable as a session id", kind="bad_session_id")
    return text


def title(value: object) -> str | None:
    """A title as text; '' and non-strings read as no title."""
    return (value.strip() or None) if isinstance(value, str) else None


def role(value: object, where: str) -> str:
    """A role stripped and lower-cased; ``human`` is ``user``, ``ai``/``model``/``bot`` are ``assistant``."""
    if not isinstance(value, str) or not value.strip():
        raise ParseError(f"{where}: role is missing or empty", kind="bad_record")
    lowered = value.strip().lower()
    return _ROLE_ALIASES.get(lowered, lowered)


def latest_leaf(parents: Sequence[int | None], times: Sequence[datetime | None]) -> int | None:
    """The leaf written last (untimed leaves count as oldest; ties go to the later node)."""
    if not parents:
        return None
    has_child = {p for i, p in enumerate(parents) if p is not None and p != i}
    leaves = [i for i in range(len(parents)) if i not in has_child] or [len(parents) - 1]

    def written(i: int) -> tuple[bool, float, int]:
        ts = times[i]
        return ts is not None, ts.timestamp() if ts else 0.0, i

    return max(leaves, key=written)


def tree_order(parents: Sequence[int | None], leaf: int | None) -> list[tuple[int, bool]]:
    """(node, active) for every node: the path root to ``leaf`` first, then the rest depth first."""
    active: list[int] = []
    seen: set[int] = set()
    node = leaf
    while node is not None and node not in seen:
        seen.add(node)
        active.append(node)
        node = parents[node]
    active.reverse()

    children: list[list[int]] = [[] for _ in parents]
    for i, p in enumerate(parents):
        if p is not None and p != i:
            children[p].append(i)
    visited: set[int] = set()
    rest: list[int] = []
    roots = [i for i, p in enumerate(parents) if p is None or p == i]
    for start in roots + list(range(len(parents))):  # the second pass reaches nodes caught in cycles
        stack = [start]
        while stack:
            i = stack.pop()
            if i in visited:
                continue
            visited.add(i)
            if i not in seen:
                rest.append(i)
            stack.extend(reversed(children[i]))
    return [(i, True) for i in active] + [(i, False) for i in rest]


def index_parents(keys: Sequence[object], parent_keys: Sequence[object]) -> list[int | None]:
    """Parent positions from parent keys; a parent the file does not hold makes a root."""
    position: dict[object, int] = {}
    for i, key in enumerate(keys):
        if isinstance(key, str) and key:
            position.setdefault(key, i)
    return [position.get(p) if isinstance(p, str) else None for p in parent_keys]


def shown(value: str) -> str:
    """A value safe to put in a one-line reason: redacted, then cut to 40 characters, quoted and escaped."""
    from transforms.redact import redact_reason  # on the error path only: the redactor costs an import

    return repr(redact_reason(value, _SHOWN + 1))


def json_type(value: object) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")


def where_conversation(i: int, ident: object) -> str:
    """'conversation 3' or 'conversation 3 (id 'abc')' for reasons."""
    return f"conversation {i}" + (f" (id {shown(ident)})" if isinstance(ident, str) and ident else "")


def _reject_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")
