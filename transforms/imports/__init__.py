"""Importers for the exports people already have: one export file, many conversations.

Pure, like the rest of ``transforms``: bytes in, ``Export`` out, no I/O, no clock.

- ``detect(name, data)`` names the format by *content* (the file name only breaks
  ties), or returns ``None``.
- ``parse_export(name, data, *, tz, default_ts=None)`` parses it into an ``Export``:
  every conversation with every message, abandoned branches included (``active``
  False), tool output and hidden/system messages kept and marked (``kind``,
  ``hidden``). Anything it cannot read is a ``ParseError`` whose ``kind`` is the
  quarantine reason and whose reason names the formats tried.
- ``sessions_by_day(conversation, tz)`` cuts a conversation into one ``Session`` per
  local day it has messages on (the day each message was written, in ``tz``).

Formats live one per module (``chatgpt``, ``claude_ai``, ``claude_code``, ``aider``,
``sharegpt``, ``openwebui``); each exposes ``FORMAT`` (its name), ``sniff(data, name)``
and ``parse(...)``. ``docs/formats.md`` documents how each maps roles, tool output and
hidden messages.
"""

from transforms.imports.base import (  # noqa: F401
    Conversation,
    Export,
    ImportedMessage,
    detect,
    formats,
    parse_export,
    sessions_by_day,
)
