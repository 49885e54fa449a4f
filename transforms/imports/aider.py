"""aider's chat log (``.aider.chat.history.md``), one markdown file appended to forever.

The file's grammar, as aider writes it:

- ``# aider chat started at 2024-08-05 11:39:34`` opens a session. The time is local
  and has no zone: it is read in ``tz``. Each session becomes one ``Conversation``
  with id ``aider-<start as ISO>`` (``aider-2024-08-05T11:39:34``), a ``-2``, ``-3``
  ... suffix when a start time repeats. A session with nothing after its header is
  still a Conversation, with no messages: the header says aider was started.
- A line starting ``#### `` is user input; consecutive ``#### `` lines are one user
  message (the prefix is dropped).
- A line starting ``> `` is tool or command output (``role='tool'``,
  ``kind='tool_output'``, the prefix dropped); consecutive ones are one message.
- Any other line is the assistant's reply. Lines such as ``>>>>>>> REPLACE`` (no
  space after the first ``>``) are therefore assistant text, as in aider's own reader.
- A blank line belongs to the message it sits in; blank lines at a message's edges
  are trimmed, and a run of nothing but blank lines is no message.
- Every line's trailing whitespace is stripped (aider ends lines with two spaces, a
  markdown line break).

Messages carry no time of their own, so every message gets its session's start time:
the day a session lands on is the day it started. A file that starts mid-session
(no header before the first message, as a log whose head was cut) gives a first
Conversation with ``ts=None`` on every message and an id ``aider-<sha256 of its
text, 16 hex>``; the caller dates it. An Emacs modeline on the first line
(``-*- mode: fundamental -*-``) is an editor setting, not a message, and is dropped.
A header whose time cannot be read keeps its session, undated, with a note.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re

from transforms.errors import ParseError
from transforms.imports.base import Conversation, Export, ImportedMessage
from transforms.parse import decode_text

FORMAT = "aider"

HEADER_PREFIX = "# aider chat started at "
_SNIFF_RE = re.compile(rb"(?m)^# aider chat started at \d{4}-\d{2}-\d{2}")
# A kenang markdown transcript that quotes an aider log is still kenang's: its turn headers say so.
_KENANG_TURN_RE = re.compile(
    rb"(?mi)^##[ \t]+(?:user|assistant|system|tool|human|ai|model|bot)[ \t]+(?:\xc2\xb7|-|\|)[ \t]+\d"
)
_MODELINE_RE = re.compile(r"^.*-\*-.*-\*-\s*$")
_USER, _TOOL, _ASSISTANT = "user", "tool", "assistant"


def sniff(data: bytes) -> bool:
    """True when some line is an aider session header and no line is a kenang turn header (never raises)."""
    try:
        return _SNIFF_RE.search(data) is not None and _KENANG_TURN_RE.search(data) is None
    except Exception:  # noqa: BLE001 - a sniffer answers, it never fails
        return False


def parse(data: bytes, tz: dt.tzinfo, default_ts: dt.datetime | None = None) -> Export:
    """One Conversation per session; see the module docstring."""
    notes: list[str] = []
    # (start, [(kind, [lines])]) per session; a headerless first session has no start
    sessions: list[tuple[dt.datetime | None, list[tuple[str, list[str]]]]] = []
    headerless = False
    after_blank = False  # a blank line ends a user message: only consecutive "#### " lines join
    for lineno, raw in enumerate(decode_text(data).split("\n"), start=1):
        if lineno == 1 and _MODELINE_RE.match(raw):
            continue
        if raw.startswith(HEADER_PREFIX):
            sessions.append((_start(raw, tz, lineno, notes), []))
            after_blank = False
            continue
        kind, line = _classify(raw)
        if kind is None:
            if sessions and sessions[-1][1]:
                sessions[-1][1][-1][1].append(line)
            after_blank = True
            continue
        if not sessions:
            sessions.append((None, []))
            headerless = True
        runs = sessions[-1][1]
        if runs and runs[-1][0] == kind and not (kind == _USER and after_blank):
            runs[-1][1].append(line)
        else:
            runs.append((kind, [line]))
        after_blank = False
    if not sessions:
        raise ParseError("no aider session header and no messages found", kind="no_messages")
    conversations = []
    seen: dict[str, int] = {}
    for start, runs in sessions:
        messages = tuple(
            ImportedMessage(
                role=kind,
                content=body,
                ts=start,
                kind="tool_output" if kind == _TOOL else "text",
            )
            for kind, run in runs
            if (body := _trim_blank_lines(run)) or kind == _USER
        )
        base_id = _conversation_id(start, messages)
        seen[base_id] = seen.get(base_id, 0) + 1
        cid = base_id if seen[base_id] == 1 else f"{base_id}-{seen[base_id]}"
        conversations.append(Conversation(conversation_id=cid, title=None, messages=messages, created=start))
    if headerless:
        notes.append("the file starts mid-session: its first conversation has no start time")
    return Export(format=FORMAT, conversations=tuple(conversations), notes=tuple(notes))


def _classify(raw: str) -> tuple[str | None, str]:
    """(kind, text without its prefix and trailing whitespace); kind None for a blank line."""
    if raw.startswith("#### "):
        return _USER, raw[5:].rstrip()
    if raw.startswith("> "):
        return _TOOL, raw[2:].rstrip()
    line = raw.rstrip()
    return (None, "") if not line else (_ASSISTANT, line)


def _trim_blank_lines(lines: list[str]) -> str:
    start, end = 0, len(lines)
    while start < end and not lines[start]:
        start += 1
    while end > start and not lines[end - 1]:
        end -= 1
    return "\n".join(lines[start:end])


def _start(header: str, tz: dt.tzinfo, lineno: int, notes: list[str]) -> dt.datetime | None:
    value = header[len(HEADER_PREFIX) :].strip()
    try:
        ts = dt.datetime.fromisoformat(value)
    except ValueError:
        notes.append(f"line {lineno}: unreadable session start time; session kept undated")
        return None
    return ts.replace(tzinfo=tz) if ts.tzinfo is None else ts


def _conversation_id(start: dt.datetime | None, messages: tuple[ImportedMessage, ...]) -> str:
    if start is not None:
        return f"aider-{start.replace(tzinfo=None).isoformat()}"
    body = "\n".join(f"{m.role}\n{m.content}" for m in messages)
    return "aider-" + hashlib.sha256(body.encode("utf-8")).hexdigest()[:16]
