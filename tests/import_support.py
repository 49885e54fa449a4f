"""What the importer tests share: fixture paths, the zone, other formats' inputs, a JSON-ish strategy,
and a conversation's day sessions as the nightly flow makes and loads them."""

from __future__ import annotations

from datetime import date, tzinfo
from pathlib import Path
from zoneinfo import ZoneInfo

from hypothesis import strategies as st

from transforms.imports import Conversation, conversation_transcripts, formats
from transforms.model import Session
from transforms.parse import parse_transcript

FIXTURES = Path(__file__).parent / "fixtures" / "imports"
JAKARTA = ZoneInfo("Asia/Jakarta")
ALL_FORMATS = (
    "aider",
    "chatgpt",
    "claude_ai",
    "claude_code",
    "codex",
    "gemini",
    "grok",
    "openai_messages",
    "openwebui",
    "sharegpt",
    "sillytavern",
)
# kenang's own transcript formats, which no importer may claim
KENANG_MARKDOWN = b"---\nsession_id: x\n---\n\n## user \xc2\xb7 2026-07-19T10:37:12+07:00\nhi\n"
GENERIC_JSONL = b'{"role":"user","content":"hi"}\n'

_SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8)


def jsonish(keys: list[str]) -> st.SearchStrategy:
    """Arbitrary JSON built from the keys a format reads (for never-crash properties)."""
    names = st.sampled_from(keys)
    return st.recursive(
        _SCALARS,
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(names, inner, max_size=6),
        max_leaves=30,
    )


def every_format() -> set[str]:
    """Every importer's name (``FORMATS``); detect chooses among all of them."""
    return set(formats())


def sessions_by_day(conv: Conversation, tz: tzinfo, fmt: str) -> list[tuple[date, Session]]:
    """(day, session) per day transcript ingest makes of a conversation, read back as the loader reads it."""
    transcripts = conversation_transcripts(conv, fmt, tz=tz, user_id="test", undated_day=date(1970, 1, 1))
    return [(d.day, parse_transcript(d.name, d.data, tz=tz)) for d in transcripts]


def fixtures(folder: str) -> list[Path]:
    where = FIXTURES / folder
    return sorted(p for p in where.iterdir() if p.name != "SOURCES.md") if where.is_dir() else []
