"""A session an agent hands in (MCP ``session_write``), checked before a byte is written.

``check_session`` turns the request into a ``Session`` or raises ``ValueError`` naming
the field that is wrong (``turns[3].role``, ``session_id``, ``turns[0].timestamp``):
nothing is written for a bad request. The rules are those of the transcripts kenang
reads, so what it accepts the nightly run can load:

- a role of ``ROLES``; content a string; at most ``max_turns`` turns of at most
  ``max_turn_chars`` characters and ``max_chars`` in all;
- a timestamp ISO-8601 (a naive one is read in the home's zone) between 1970 and a
  day past now; a turn without one takes the time before it, the first takes now;
- a session id safe as a file name (letters, digits, ``.``, ``_``, ``-``; it starts
  with a letter or digit; at most 100 characters); without one it is made from the
  time and a hash of the content, so the same request gives the same id;
- an agent and a title of one line, at most 100 and 200 characters.

Content is kept as written, but for what Markdown would misread: a line that reads as
a turn header is indented by one space, and a code fence left open is closed.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from datetime import datetime, tzinfo

from transforms.days import check_times
from transforms.errors import ParseError
from transforms.model import Message, Session
from transforms.parse import markdown_body

ROLES = ("user", "assistant", "system", "tool")
SESSION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


@dataclass(frozen=True)
class Limits:
    max_turns: int
    max_turn_chars: int
    max_chars: int


def check_session(
    turns: object,
    *,
    user_id: str,
    session_id: str | None,
    agent: str | None,
    title: str | None,
    now: datetime,
    tz: tzinfo,
    limits: Limits,
) -> Session:
    """The session the request describes; ``ValueError`` naming the first bad field."""
    if not isinstance(turns, list) or not turns:
        raise ValueError("turns: give at least one turn, each {role, content, timestamp?}")
    if len(turns) > limits.max_turns:
        raise ValueError(f"turns: {len(turns)} turns, more than the {limits.max_turns} allowed (mcp.session_max_turns)")
    messages: list[Message] = []
    total = 0
    last = now
    for i, turn in enumerate(turns):
        where = f"turns[{i}]"
        if not isinstance(turn, dict):
            raise ValueError(f"{where}: each turn is an object {{role, content, timestamp?}}")
        unknown = sorted(set(turn) - {"role", "content", "timestamp"})
        if unknown:
            raise ValueError(f"{where}: unknown field {unknown[0]!r} (a turn has role, content, timestamp)")
        role = turn.get("role")
        if role not in ROLES:
            raise ValueError(f"{where}.role: {role!r} is not one of {', '.join(ROLES)}")
        content = turn.get("content")
        if not isinstance(content, str):
            raise ValueError(f"{where}.content: must be a string")
        if len(content) > limits.max_turn_chars:
            raise ValueError(
                f"{where}.content: {len(content)} characters, more than the {limits.max_turn_chars} "
                "allowed (mcp.session_max_turn_chars)"
            )
        total += len(content)
        if total > limits.max_chars:
            raise ValueError(
                f"turns: more than the {limits.max_chars} characters allowed in one session (mcp.session_max_chars)"
            )
        ts = _timestamp(turn.get("timestamp"), f"{where}.timestamp", tz, now) or last
        last = ts
        messages.append(Message(role, _clean(content), ts, i))
    sid = _session_id(session_id, messages)
    return Session(sid, user_id, _one_line(agent, "agent", 100), "markdown", tuple(messages))


def check_title(title: str | None) -> str | None:
    return _one_line(title, "title", 200)


def _timestamp(value: object, where: str, tz: tzinfo, now: datetime) -> datetime | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f"{where}: an ISO-8601 string, e.g. 2026-07-19T10:37:00+07:00")
    try:
        ts = datetime.fromisoformat(value.strip())
    except ValueError:
        raise ValueError(f"{where}: {_shown(value)} is not ISO-8601, e.g. 2026-07-19T10:37:00+07:00") from None
    ts = ts if ts.tzinfo else ts.replace(tzinfo=tz)
    try:
        check_times([ts], now, what="timestamp")
    except (ParseError, OverflowError):
        raise ValueError(f"{where}: {_shown(value)} is outside 1970 .. a day past now") from None
    return ts


def _clean(text: str) -> str:
    """The content as a Markdown turn body that reads back as one turn (``parse.markdown_body``)."""
    return markdown_body(text)


def _session_id(value: str | None, messages: list[Message]) -> str:
    if value is None:
        first = messages[0].ts
        digest = hashlib.sha256("\0".join(f"{m.role}\0{m.content}" for m in messages).encode("utf-8", "surrogatepass"))
        return f"{first:%Y-%m-%d-%H%M%S}-{digest.hexdigest()[:8]}"
    if not isinstance(value, str) or not SESSION_ID.fullmatch(value):
        raise ValueError(
            "session_id: letters, digits, '.', '_' or '-', starting with a letter or digit, "
            "at most 100 characters (it names a file)"
        )
    if value in (".", "..") or ".." in value:
        raise ValueError("session_id: may not hold '..'")
    return value


def _shown(value: str) -> str:
    """A value as a reason quotes it: redacted, then cut to 40 characters (``transforms.redact.redact_reason``)."""
    from transforms.redact import redact_reason  # on the error path only: the redactor costs an import

    return repr(redact_reason(value, 41))


def _one_line(value: str | None, name: str, most: int) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or "\n" in value or "\r" in value or len(value) > most or not value.strip():
        raise ValueError(f"{name}: one line of 1 to {most} characters")
    return value.strip()
