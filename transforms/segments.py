"""Read a collected segment (``transforms.collect``) as the sessions it holds.

A segment is an agent's own log lines, in the agent's format, so it is read by that
format's importer and cut into day transcripts exactly as ``kenang import`` would
cut the same lines; each is then read by the transcript parser, so ids, kinds and
flags are the ones an import gives. The nightly ingest and the load both read
segments through here, so what was counted is what is loaded.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import replace

from transforms.collect import segment_later_day, segment_of
from transforms.errors import ParseError
from transforms.imports import conversation_transcripts, parse_export
from transforms.model import Session
from transforms.parse import parse_transcript


def is_segment(name: str) -> bool:
    return segment_of(name) is not None


def read_segment(name: str, data: bytes, *, tz: dt.tzinfo, user_id: str) -> list[Session]:
    """The sessions of a segment named ``name`` (its format and day come from the name); [] when it holds none.

    A segment whose lines hold no message (tool bookkeeping records only) is kept in
    the archive like any bytes taken, and loads as nothing. The opening line put before
    a session's later lines (``transforms.collect``) holds no message of its own.
    """
    found = segment_of(name)
    if found is None:
        raise ParseError(f"{name!r} is not a collected segment's name", kind="unknown_format")
    fmt, day = found
    later = segment_later_day(name)
    try:
        export = parse_export(data, fmt=fmt, tz=tz, default_ts=None)
    except ParseError as exc:
        if exc.kind in ("empty", "no_messages"):  # bookkeeping records only (Codex token counts, ...): nothing to load
            return []
        raise
    # Each conversation, and each of its day transcripts, is let go once read: a huge
    # segment is never held as its export, its transcripts and its sessions at once.
    fmt, conversations = export.format, list(export.conversations)
    del export
    sessions = []
    while conversations:
        conv = conversations.pop(0)
        conv_id = conv.conversation_id
        derived = conversation_transcripts(conv, fmt, tz=tz, user_id=user_id, undated_day=day)
        del conv
        while derived:
            d = derived.pop(0)
            session = parse_transcript(d.name, d.data, tz=tz)
            del d
            if later and session.session_id == conv_id:  # as an import names a session's later days
                session = replace(session, session_id=f"{conv_id}@{day.isoformat()}")
            sessions.append(session)
    return sessions
