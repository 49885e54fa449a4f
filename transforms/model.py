"""The common model every transcript format parses into.

A file becomes one ``Session``: an ordered tuple of ``Message``. Parsers fill in what
the file itself says (``session_id``, ``user_id``, ``agent``, ``people`` when present) and leave
the rest ``None``; the resolution against folder names and config happens later, in
``transforms.resolve``, so that parsing stays a function of the bytes alone.

Invariants:
- ``Message.ts`` is timezone-aware or ``None``. A naive timestamp in a file is read in
  the configured ``timezone`` (the zone the user lives in), never in the machine's.
- ``Message.seq`` is the 0-based position in the file, gap-free.
- ``Message.role`` is lower-case and non-empty; ``content`` may be empty only when
  the file says so, and a session always has at least one message.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime

#: Roles kenang knows by name; other lower-case roles are kept as written.
KNOWN_ROLES = ("user", "assistant", "system", "tool")

#: A user id is a path segment and a partition value, so it is kept boring.
USER_ID_RE = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")


#: Flags a transcript may carry on a message (JSONL key ``flags``), kept in the
#: ``messages.flags`` column beside the injection kinds. A flagged message is never
#: promoted into a summary's facts.
MESSAGE_FLAGS = ("inactive_branch", "hidden")


@dataclass(frozen=True, slots=True)
class Message:
    role: str
    content: str
    ts: datetime | None
    seq: int
    flags: tuple[str, ...] = ()  # a subset of MESSAGE_FLAGS


@dataclass(frozen=True, slots=True)
class Session:
    """One parsed transcript file. ``source_format`` is ``markdown`` or ``jsonl``.

    ``people`` are the names the file itself declares (frontmatter ``people:``), as written:
    each stripped, non-empty and one line, no name twice (case-insensitively).
    """

    session_id: str | None
    user_id: str | None
    agent: str | None
    source_format: str
    messages: tuple[Message, ...]
    people: tuple[str, ...] = ()

    @property
    def first_ts(self) -> datetime | None:
        return next((m.ts for m in self.messages if m.ts is not None), None)

    @property
    def last_ts(self) -> datetime | None:
        return next((m.ts for m in reversed(self.messages) if m.ts is not None), None)


@dataclass(frozen=True, slots=True)
class ResolvedSession:
    """A session with its owner, id and day decided: ready for the archive and the tables."""

    session: Session
    session_id: str
    user_id: str
    day: date
    day_source: str  # 'timestamp' | 'filename' | 'mtime' | 'archive'
    flags: tuple[str, ...] = field(default=())
