"""The daily summary's frontmatter, declared once: fields, types, bounds and moods.

``transforms.frontmatter`` validates and normalises against these declarations, the
LLM is given ``llm_json_schema()`` (generated from them), and the ``daily_summaries``
table mirrors them. A frontmatter kenang writes always satisfies every bound here.

Bumping ``SCHEMA_VERSION`` means a migration: old summaries stay readable and
``kenang backfill --resummarize`` rewrites them.
"""

from __future__ import annotations

SCHEMA_VERSION = 2
#: Versions ``parse_summary`` still reads (1: the summary as one paragraph, no title or sections).
READABLE_SCHEMA_VERSIONS: tuple[int, ...] = (1, 2)

#: The mood vocabulary, fixed and documented. The LLM must pick one of these; the
#: extractive fallback picks by lexicon. ``neutral`` is the default.
MOODS: tuple[str, ...] = (
    "productive",
    "focused",
    "curious",
    "reflective",
    "calm",
    "happy",
    "grateful",
    "excited",
    "neutral",
    "tired",
    "stressed",
    "anxious",
    "frustrated",
    "sad",
)

IMPORTANCE_MIN, IMPORTANCE_MAX = 1, 10

#: Per list field: (most items, longest item in characters).
LIST_BOUNDS: dict[str, tuple[int, int]] = {
    "people": (12, 60),
    "projects": (8, 60),
    "tags": (10, 40),
    "technologies": (16, 40),
    "related_dates": (10, 10),
}

#: "What happened": one paragraph per thread of the day. Sentences in all, characters in all, paragraphs.
SUMMARY_SENTENCES = (1, 12)
SUMMARY_MAX_CHARS = 1600
SUMMARY_PARAGRAPHS = 6

#: The note's one-line title (frontmatter ``title``), in characters.
TITLE_MAX_CHARS = 100

#: The languages a note is written in (frontmatter ``language``): the day's main language.
LANGUAGES: tuple[str, ...] = ("en", "id")

#: The note's item sections, per section: (most items, longest item in characters). Items are one line each.
ITEM_BOUNDS: dict[str, tuple[int, int]] = {
    "decisions": (8, 300),
    "open_items": (8, 300),
    "still_open": (12, 300),
    "closed": (12, 300),
}

#: The body's section headings, per language, in the order they are written. An empty section is left out.
HEADINGS: dict[str, dict[str, str]] = {
    "en": {
        "summary": "What happened",
        "decisions": "Decisions",
        "open_items": "Open items",
        "still_open": "Still open",
        "closed": "Closed",
        "people": "People and projects",
        "sessions": "Sessions",
    },
    "id": {
        "summary": "Yang terjadi",
        "decisions": "Keputusan",
        "open_items": "Belum selesai",
        "still_open": "Masih terbuka",
        "closed": "Sudah selesai",
        "people": "Orang dan proyek",
        "sessions": "Sesi",
    },
}

#: Frontmatter keys in the order they are written.
FIELDS: tuple[str, ...] = (
    "schema_version",
    "date",
    "user_id",
    "title",
    "language",
    "people",
    "projects",
    "tags",
    "technologies",
    "importance",
    "mood",
    "related_dates",
    "sessions",
    "generator",
)

#: Fields the LLM proposes; the rest come from kenang itself.
LLM_FIELDS: tuple[str, ...] = ("summary", "people", "projects", "tags", "technologies", "importance", "mood")

GENERATOR_KEYS: tuple[str, ...] = ("backend", "model", "model_sha256", "prompt_version", "fallback_fields")


#: Most items the model may propose per list field (the extractors add theirs after).
LLM_LIST_ITEMS = 5


def llm_json_schema() -> dict:
    """The JSON schema handed to the model as its response format.

    The summary comes first, then the title, then the rest: a small model that rambles
    until ``max_tokens`` loses a list, never the note. Strings are non-empty, lists hold
    at most ``LLM_LIST_ITEMS``, importance is one of a fixed list. The llama backend
    turns this into its own stricter grammar (``transforms.grammar``: no control
    characters, ``x-newlines`` marks the one string that may hold paragraph breaks); a
    model server gets it as it is. Everything is validated again afterwards
    (``transforms.frontmatter``, ``transforms.summarize``).
    """

    def str_list() -> dict:
        return {"type": "array", "items": {"type": "string", "minLength": 1}, "maxItems": LLM_LIST_ITEMS}

    properties = {
        "summary": {"type": "string", "minLength": 1, "x-newlines": True},
        "title": {"type": "string", "minLength": 1},
        "people": str_list(),
        "projects": str_list(),
        "technologies": str_list(),
        "tags": str_list(),
        "importance": {"type": "integer", "enum": list(range(IMPORTANCE_MIN, IMPORTANCE_MAX + 1))},
        "mood": {"type": "string", "enum": list(MOODS)},
    }
    return {"type": "object", "properties": properties, "required": list(properties)}
