"""Importers for the exports people already have: one export file, many conversations.

Pure, like the rest of ``transforms``: bytes in, ``Export`` out, no I/O, no clock.

- ``detect(data)`` names the format by *content* alone, or returns ``None``.
- ``parse_export(data, fmt=..., tz=..., default_ts=None)`` parses it, in the format
  ``detect`` named, into an ``Export``: every conversation with every message,
  abandoned branches included (``active`` False), tool output and hidden/system
  messages kept and marked (``kind``, ``hidden``). Anything it cannot read is a
  ``ParseError`` whose ``kind`` is the quarantine reason; no format at all is
  ``unknown_format``, and its reason names the formats tried.
- ``conversation_transcripts(conv, ...)`` cuts a conversation into one kenang JSONL
  transcript per local day it has messages on (the day each message was written, in
  ``tz``). The nightly flow archives and loads those; ``kenang import --dry-run``
  counts from them too, through the same ``flows.stages.ingest.export_transcripts``.

Formats live one per module (``aider``, ``chatgpt``, ``claude_ai``, ``claude_code``,
``codex``, ``gemini``, ``grok``, ``openai_messages``, ``openwebui``, ``sharegpt``,
``sillytavern``), and ``FORMATS`` lists them, sorted by name, each with the name people
know it by (``LABELS``; ``kenang import --help`` lists those): ``detect`` asks them in that order, so each
sniffer must refuse the others' files (the tests hold every fixture to its own format).
Each module exposes ``FORMAT`` (its name), ``sniff(data)`` and ``parse(data, tz,
default_ts)``, and imports only ``base`` and ``_json``: nothing registers itself, so
there is no import circle. ``docs/formats.md`` documents how each
maps roles, tool output and hidden messages.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass

from transforms.errors import ParseError
from transforms.imports import (
    aider,
    chatgpt,
    claude_ai,
    claude_code,
    codex,
    gemini,
    grok,
    openai_messages,
    openwebui,
    sharegpt,
    sillytavern,
)
from transforms.imports.base import (  # noqa: F401
    Conversation,
    Dated,
    Derived,
    Export,
    ImportedMessage,
    conversation_transcripts,
    dating,
    skipped_lines,
    undated_days,
)


@dataclass(frozen=True, slots=True)
class Format:
    """One importer: ``sniff`` says whether bytes are its format (never raises), ``parse`` reads them."""

    name: str
    label: str  # the name people know it by, as ``kenang import --help`` lists it
    sniff: Callable[[bytes], bool]
    parse: Callable[[bytes, dt.tzinfo, dt.datetime | None], Export]


LABELS = {
    "aider": "aider",
    "chatgpt": "ChatGPT",
    "claude_ai": "Claude.ai",
    "claude_code": "Claude Code",
    "codex": "Codex",
    "gemini": "Gemini (Google Takeout)",
    "grok": "Grok",
    "openai_messages": "OpenAI messages",
    "openwebui": "Open WebUI",
    "sharegpt": "ShareGPT",
    "sillytavern": "SillyTavern",
}

# Sorted by name, the order detect asks in (a test holds it): a new format goes in its place, and in LABELS.
FORMATS: tuple[Format, ...] = tuple(
    Format(m.FORMAT, LABELS[m.FORMAT], m.sniff, m.parse)
    for m in (
        aider,
        chatgpt,
        claude_ai,
        claude_code,
        codex,
        gemini,
        grok,
        openai_messages,
        openwebui,
        sharegpt,
        sillytavern,
    )
)
_BY_NAME = {f.name: f for f in FORMATS}


def formats() -> tuple[str, ...]:
    """The format names, sorted: the order ``detect`` tries them in."""
    return tuple(f.name for f in FORMATS)


def labels() -> tuple[str, ...]:
    """The formats as people know them (``ChatGPT``, ``Claude Code``), in ``formats()`` order."""
    return tuple(f.label for f in FORMATS)


def detect(data: bytes) -> str | None:
    """The name of the first format (``FORMATS`` order) that claims the bytes; None if none does."""
    return next((f.name for f in FORMATS if f.sniff(data)), None)


def parse_export(data: bytes, *, fmt: str | None, tz: dt.tzinfo, default_ts: dt.datetime | None = None) -> Export:
    """The export read as ``fmt``, the format ``detect`` named; None is an ``unknown_format`` ParseError."""
    found = _BY_NAME.get(fmt or "")
    if found is None:
        raise ParseError(f"not a format kenang can import (tried: {', '.join(formats())})", kind="unknown_format")
    return found.parse(data, tz, default_ts)
