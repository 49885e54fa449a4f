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


def llm_json_schema() -> dict:
    """The JSON schema handed to the model as its response format.

    Grammars enforce shape, not numeric bounds or lengths, so everything is validated
    again afterwards (``transforms.frontmatter``).
    """

    # No maxLength/maxItems: llama.cpp unrolls each into a nested grammar rule per
    # character, which makes sampling crawl; the bounds are enforced after parsing.
    def str_list(_field: str) -> dict:
        return {"type": "array", "items": {"type": "string"}}

    # The summary goes last: a small model that rambles until max_tokens then loses
    # only the summary, and the fields before it are salvaged from the cut reply. (With
    # the summary first the bundled 135M model rambled on every long demo day and lost
    # every field: 8 of 8 days fell back, against 4 of 8 with it last.)
    properties = {
        "importance": {"type": "integer", "minimum": IMPORTANCE_MIN, "maximum": IMPORTANCE_MAX},
        "mood": {"type": "string", "enum": list(MOODS)},
        "people": str_list("people"),
        "projects": str_list("projects"),
        "technologies": str_list("technologies"),
        "tags": str_list("tags"),
        "summary": {"type": "string"},
    }
    return {"type": "object", "properties": properties, "required": list(properties)}
