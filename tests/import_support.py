"""What the importer tests share: fixture paths, the zone, other formats' inputs, a JSON-ish strategy."""

from __future__ import annotations

from pathlib import Path
from zoneinfo import ZoneInfo

from hypothesis import strategies as st

from transforms.imports import base

FIXTURES = Path(__file__).parent / "fixtures" / "imports"
JAKARTA = ZoneInfo("Asia/Jakarta")
ALL_FORMATS = ("aider", "chatgpt", "claude_ai", "claude_code", "openwebui", "sharegpt")
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


def every_format_registered() -> set[str]:
    """Every importer's name; detect chooses among all of them."""
    return set(base.formats())


def fixtures(folder: str) -> list[Path]:
    where = FIXTURES / folder
    return sorted(p for p in where.iterdir() if p.name != "SOURCES.md") if where.is_dir() else []
