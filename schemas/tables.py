"""Every table kenang writes, declared once as a pyarrow schema.

DuckDB view types and Polars casts are generated from these declarations; nothing
else spells a column list. Columns are append-only: a new column goes at the end, and
readers use ``union_by_name`` so older partitions (without it) read as NULL. Changing
or removing a column bumps ``TABLES_VERSION`` and needs a migration.

Layout under ``warehouse/`` (``Table.layout``):

- ``user_day``: ``<table>/date=YYYY-MM-DD/user_id=<u>/data.parquet``. One file per
  (user, day) partition, always written whole, so a rerun replaces, never appends.
- ``date``: ``<table>/date=YYYY-MM-DD/<run_id>.parquet``. One file per run that
  touched that date (runs, quarantine events).
- ``single``: ``<table>.parquet``. A small ledger rewritten whole.
- ``user_month``: ``<table>/user_id=<u>/month=YYYY-MM/data.parquet``. One file per user
  and month, rewritten whole when a row of that month changes (the day ledger, and
  ``open_items`` by the month an item was raised: a night rewrites its own months, never
  the history).

Every table carries ``user_id`` except ``runs`` (a run spans users), so every row a
user can query is scoped by user.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

TABLES_VERSION = 1

_TS = pa.timestamp("us", tz="UTC")


@dataclass(frozen=True)
class Table:
    name: str
    schema: pa.Schema
    layout: str  # 'user_day' | 'date' | 'single' | 'user_month'
    doc: str


SESSIONS = Table(
    "sessions",
    pa.schema(
        [
            pa.field("session_id", pa.string(), nullable=False),
            pa.field("user_id", pa.string(), nullable=False),
            pa.field("agent", pa.string()),
            pa.field("date", pa.date32(), nullable=False),
            pa.field("started_at", _TS),
            pa.field("ended_at", _TS),
            pa.field("message_count", pa.int32(), nullable=False),
            pa.field("source_format", pa.string(), nullable=False),
            pa.field("archive_path", pa.string(), nullable=False),
            pa.field("sha256", pa.string(), nullable=False),
            pa.field("run_id", pa.string(), nullable=False),
            pa.field("day_source", pa.string(), nullable=False),
            pa.field("redactions", pa.int32(), nullable=False),
            # Every archived file the session was read from: several when one session_id
            # came in more than one file that day (a re-dropped, grown transcript).
            pa.field("archive_paths", pa.list_(pa.string())),
            # The names the transcript's own frontmatter declares (``people:``), in order.
            pa.field("people", pa.list_(pa.string())),
        ]
    ),
    "user_day",
    "One row per transcript session; its day is the archive folder it lives in.",
)

MESSAGES = Table(
    "messages",
    pa.schema(
        [
            pa.field("message_id", pa.string(), nullable=False),
            pa.field("session_id", pa.string(), nullable=False),
            pa.field("user_id", pa.string(), nullable=False),
            pa.field("date", pa.date32(), nullable=False),
            pa.field("ts", _TS),
            pa.field("role", pa.string(), nullable=False),
            pa.field("seq", pa.int32(), nullable=False),
            pa.field("content", pa.string(), nullable=False),
            pa.field("run_id", pa.string(), nullable=False),
            pa.field("redactions", pa.int32(), nullable=False),
            pa.field("flags", pa.list_(pa.string())),  # injection kinds; never promoted into a summary
        ]
    ),
    "user_day",
    "One row per message, content redacted; message_id is a content hash.",
)

ARCHIVE_FILES = Table(
    "archive_files",
    pa.schema(
        [
            pa.field("path", pa.string(), nullable=False),
            pa.field("user_id", pa.string(), nullable=False),
            pa.field("date", pa.date32(), nullable=False),
            pa.field("size", pa.int64(), nullable=False),
            pa.field("sha256", pa.string(), nullable=False),
            pa.field("original_path", pa.string()),
            pa.field("run_id", pa.string(), nullable=False),
            pa.field("archived_at", _TS, nullable=False),
        ]
    ),
    "user_day",
    "The record of every file in the archive; `kenang verify` checks the archive against it.",
)

DAYS = Table(
    "days",
    pa.schema(
        [
            pa.field("user_id", pa.string(), nullable=False),
            pa.field("date", pa.date32(), nullable=False),
            pa.field("status", pa.string(), nullable=False),  # 'loaded' | 'failed'
            pa.field("archive_fingerprint", pa.string(), nullable=False),
            pa.field("content_fingerprint", pa.string()),
            pa.field("sessions", pa.int32(), nullable=False),
            pa.field("messages", pa.int32(), nullable=False),
            pa.field("reason", pa.string()),
            pa.field("run_id", pa.string(), nullable=False),
            pa.field("updated_at", _TS, nullable=False),
            pa.field("summary_status", pa.string()),  # 'summarized' | 'failed' | NULL (not yet)
            pa.field("summary_fingerprint", pa.string()),  # the content_fingerprint it summarized
            pa.field("summary_reason", pa.string()),
            pa.field("summary_run_id", pa.string()),
            pa.field("summary_sha256", pa.string()),  # of the summary file written
            pa.field("index_status", pa.string()),  # 'indexed' | 'failed' | NULL (not yet)
            pa.field("index_key", pa.string()),  # what it indexed: content, summary, embedder, chunker
            pa.field("index_reason", pa.string()),
            pa.field("index_run_id", pa.string()),
        ]
    ),
    "user_month",
    "The day ledger: per (user, day), the last load outcome and the archive state it saw.",
)

RUNS = Table(
    "runs",
    pa.schema(
        [
            pa.field("run_id", pa.string(), nullable=False),
            pa.field("flow", pa.string(), nullable=False),
            pa.field("parameters", pa.string(), nullable=False),  # JSON object
            pa.field("started_at", _TS, nullable=False),
            pa.field("finished_at", _TS),
            pa.field("status", pa.string(), nullable=False),  # running|completed|failed
            pa.field("counts", pa.string(), nullable=False),  # JSON object
            pa.field("error", pa.string()),
            pa.field("date", pa.date32(), nullable=False),
        ]
    ),
    "date",
    "One row per flow run; readers trust rows of completed runs.",
)

QUARANTINE = Table(
    "quarantine",
    pa.schema(
        [
            pa.field("path", pa.string(), nullable=False),
            pa.field("original_path", pa.string(), nullable=False),
            pa.field("user_id", pa.string()),
            pa.field("size", pa.int64()),
            pa.field("sha256", pa.string()),
            pa.field("kind", pa.string(), nullable=False),
            pa.field("reason", pa.string(), nullable=False),
            pa.field("run_id", pa.string(), nullable=False),
            pa.field("quarantined_at", _TS, nullable=False),
            pa.field("date", pa.date32(), nullable=False),
        ]
    ),
    "date",
    "One row per file moved to quarantine, with the reason its sidecar also holds.",
)

_STRS = pa.list_(pa.string())

DAILY_SUMMARIES = Table(
    "daily_summaries",
    pa.schema(
        [
            pa.field("user_id", pa.string(), nullable=False),
            pa.field("date", pa.date32(), nullable=False),
            pa.field("schema_version", pa.int32(), nullable=False),
            pa.field("summary", pa.string(), nullable=False),  # the note's "What happened" paragraphs
            pa.field("title", pa.string(), nullable=False),
            pa.field("language", pa.string(), nullable=False),  # en | id: the day's main language
            pa.field("decisions", _STRS, nullable=False),
            pa.field("open_items", _STRS, nullable=False),  # raised this day
            pa.field("people", _STRS, nullable=False),
            pa.field("projects", _STRS, nullable=False),
            pa.field("tags", _STRS, nullable=False),
            pa.field("technologies", _STRS, nullable=False),
            pa.field("importance", pa.int32(), nullable=False),
            pa.field("mood", pa.string(), nullable=False),
            pa.field("related_dates", pa.list_(pa.date32()), nullable=False),
            pa.field("sessions", pa.int32(), nullable=False),
            pa.field("messages", pa.int32(), nullable=False),
            pa.field("backend", pa.string(), nullable=False),
            pa.field("model", pa.string(), nullable=False),
            pa.field("model_sha256", pa.string(), nullable=False),
            pa.field("prompt_version", pa.int32(), nullable=False),
            pa.field("fallback_fields", _STRS, nullable=False),
            pa.field("first_try_valid", pa.bool_(), nullable=False),
            pa.field("attempts", pa.int32(), nullable=False),
            pa.field("chunks", pa.int32(), nullable=False),
            pa.field("prompt_tokens", pa.int32(), nullable=False),
            pa.field("completion_tokens", pa.int32(), nullable=False),
            pa.field("llm_seconds", pa.float64(), nullable=False),
            pa.field("provenance", pa.string(), nullable=False),  # JSON: field -> item -> llm|extractor|both
            pa.field("path", pa.string(), nullable=False),  # the summary file, relative to the archive
            pa.field("content_fingerprint", pa.string(), nullable=False),
            pa.field("run_id", pa.string(), nullable=False),
            # The day's sentences that may close an earlier day's open item (transforms.open_items.resolutions).
            pa.field("resolutions", _STRS),
        ]
    ),
    "user_day",
    "One row per (user, day) summary: the frontmatter fields as columns, plus how it was made.",
)

OPEN_ITEMS = Table(
    "open_items",
    pa.schema(
        [
            pa.field("item_id", pa.string(), nullable=False),  # content hash of user, raised_on, text
            pa.field("user_id", pa.string(), nullable=False),
            pa.field("raised_on", pa.date32(), nullable=False),
            pa.field("text", pa.string(), nullable=False),  # as the day's note lists it (redacted)
            pa.field("closed_on", pa.date32()),  # the later day whose note lists it under Closed; NULL while open
            pa.field("closed_by", pa.string()),  # the sentence of that day that closed it
            pa.field("expires_on", pa.date32(), nullable=False),  # the last day it is carried unless closed
        ]
    ),
    "user_month",  # by raised_on's month
    "Every open item a day's note raised, carried over the later days until one closes it or it expires.",
)

MEMORY_CHUNKS = Table(
    "memory_chunks",
    pa.schema(
        [
            pa.field("chunk_id", pa.string(), nullable=False),  # content hash of user, date, session, source, text
            pa.field("user_id", pa.string(), nullable=False),
            pa.field("date", pa.date32(), nullable=False),
            pa.field("session_id", pa.string()),  # NULL for summary and index chunks
            pa.field("source", pa.string(), nullable=False),  # 'transcript' | 'summary' | 'index' | 'facts'
            pa.field("seq", pa.int32(), nullable=False),  # first message's seq (transcripts), else 0
            pa.field("text", pa.string(), nullable=False),  # redacted
            pa.field("flagged", _STRS, nullable=False),  # injection kinds of the messages in it
            pa.field("terms", _STRS, nullable=False),  # distinct keyword terms, for BM25
            pa.field("tfs", pa.list_(pa.int32()), nullable=False),  # their counts, aligned with terms
            pa.field("embedder_id", pa.string()),  # NULL when the backend is 'none' (keyword only)
            pa.field("embedding", pa.list_(pa.float32())),  # L2-normalised
            pa.field("run_id", pa.string(), nullable=False),
        ]
    ),
    "user_day",
    "The recall index: redacted chunks of transcripts, summaries and MEMORY_INDEX lines, with embeddings.",
)

MEMORY_EVENTS = Table(
    "memory_events",
    pa.schema(
        [
            pa.field("event_id", pa.string(), nullable=False),
            pa.field("at", _TS, nullable=False),
            pa.field("user_id", pa.string(), nullable=False),
            pa.field("target", pa.string(), nullable=False),  # memory | user
            pa.field("action", pa.string(), nullable=False),  # add | replace | remove | accept | forget
            pa.field("source", pa.string(), nullable=False),  # cli | mcp | nightly | forget
            pa.field("before_sha256", pa.string()),  # the entry before, by hash: never its text
            pa.field("after_sha256", pa.string()),
            pa.field("date", pa.date32(), nullable=False),
        ]
    ),
    "date",
    "One row per change to a core memory file (USER.md, MEMORY.md): when, whose, what, from where, by hash.",
)

MEMORY_CANDIDATES = Table(
    "memory_candidates",
    pa.schema(
        [
            pa.field("candidate_id", pa.string(), nullable=False),
            pa.field("user_id", pa.string(), nullable=False),
            pa.field("kind", pa.string(), nullable=False),  # correction | preference | fact
            pa.field("target", pa.string(), nullable=False),  # user | memory
            pa.field("text", pa.string(), nullable=False),  # the note as it would be written (redacted)
            pa.field("quote", pa.string(), nullable=False),  # the sentence it came from (redacted)
            pa.field("dates", pa.list_(pa.date32())),
            pa.field("session_ids", pa.list_(pa.string())),
            pa.field("status", pa.string(), nullable=False),  # pending | accepted | rejected | refused
            pa.field("updated_at", _TS, nullable=False),
        ]
    ),
    "single",
    "Notes the nightly run proposes for core memory, with where they were said; a person accepts or rejects them.",
)

TOMBSTONES = Table(
    "tombstones",
    pa.schema(
        [
            pa.field("tombstone_id", pa.string(), nullable=False),
            pa.field("user_id", pa.string(), nullable=False),
            pa.field("kind", pa.string(), nullable=False),  # text | session | day | before
            pa.field("digest", pa.string()),  # keyed hash of the phrase's words, or of the session id: never clear text
            pa.field("words", pa.int32()),  # how many words the phrase has (text)
            pa.field("day", pa.date32()),  # day | before
            pa.field("purge", pa.bool_(), nullable=False),
            pa.field("created_at", _TS, nullable=False),
        ]
    ),
    "single",
    "What `kenang forget` forgot, by hash: every load, summary, index and import honours it, so no rebuild brings it back.",
)

PURGE_LOG = Table(
    "purge_log",
    pa.schema(
        [
            pa.field("path", pa.string(), nullable=False),  # archive-relative
            pa.field("sha256", pa.string(), nullable=False),
            pa.field("user_id", pa.string(), nullable=False),
            pa.field("day", pa.date32()),
            pa.field("purged_at", _TS, nullable=False),
            pa.field("why", pa.string(), nullable=False),  # forget:<tombstone_id> | retention:archive_days=N
        ]
    ),
    "single",
    "Every archived original kenang deleted on purpose (`forget --purge`, retention); `verify` reports them as purged.",
)


@dataclass(frozen=True)
class Compact:
    """A per-user, per-month copy of one table's columns, for readers that want a user's whole history.

    Made at the end of each run from the partitions (``flows.store.compact``); any write
    to a source partition removes that user's copy of its month first, so a copy that
    exists always matches the partitions. By month, a night rewrites the months it
    changed and never a whole history, so what it costs stays flat as history grows.
    """

    name: str
    source: Table
    columns: tuple[str, ...]  # user_id and date first: the copy is sorted by all of them, in this order
    #: The leading columns that tell a day's rows apart (a day's chunk ids are distinct), by which each day is
    #: sorted when its copy is made; where two rows are alike on them, that day is sorted by every column.
    #: Empty: the leading columns before the first list.
    day_key: tuple[str, ...] = ()
    #: Rows of a copy's row group: a reader of a month of big rows (the recall pack's segment) holds one at a time,
    #: and making the copy about as many besides the day it sorts. The default is the Parquet writer's largest.
    row_group_rows: int = 2**20

    @property
    def table(self) -> Table:
        schema = pa.schema([self.source.schema.field(c) for c in self.columns])
        return Table(f"compact/{self.name}", schema, "single", f"per-user copy of {self.source.name}")


TABLES: dict[str, Table] = {
    t.name: t
    for t in (
        SESSIONS,
        MESSAGES,
        ARCHIVE_FILES,
        DAYS,
        RUNS,
        QUARANTINE,
        DAILY_SUMMARIES,
        OPEN_ITEMS,
        MEMORY_CHUNKS,
        MEMORY_EVENTS,
        MEMORY_CANDIDATES,
        TOMBSTONES,
        PURGE_LOG,
    )
}

_DUCKDB_TYPES = {
    pa.string(): "VARCHAR",
    pa.date32(): "DATE",
    _TS: "TIMESTAMPTZ",
    pa.int32(): "INTEGER",
    pa.int64(): "BIGINT",
    pa.float64(): "DOUBLE",
    pa.float32(): "FLOAT",
    pa.bool_(): "BOOLEAN",
}


def duckdb_type(dtype: pa.DataType) -> str:
    """The DuckDB type name of a pyarrow type used in these schemas."""
    if pa.types.is_list(dtype):
        return duckdb_type(dtype.value_type) + "[]"
    try:
        return _DUCKDB_TYPES[dtype]
    except KeyError:
        raise TypeError(f"no DuckDB type declared for {dtype}") from None


def duckdb_columns(table: Table) -> list[tuple[str, str]]:
    """(column, DuckDB type) pairs in declaration order."""
    return [(f.name, duckdb_type(f.type)) for f in table.schema]


#: The compact copies, by user and month: summaries (``kenang analyze``, the notebooks, recall's related days),
#: message times (activity_heatmap) and recall chunks (``kenang recall``, the MCP server).
COMPACTS: dict[str, Compact] = {
    c.name: c
    for c in (
        Compact("daily_summaries", DAILY_SUMMARIES, tuple(DAILY_SUMMARIES.schema.names)),
        Compact("message_times", MESSAGES, ("user_id", "date", "ts", "role")),
        Compact(
            "memory_chunks",
            MEMORY_CHUNKS,
            (
                "user_id",
                "date",
                "source",
                "session_id",
                "seq",
                "chunk_id",
                "text",
                "flagged",
                "terms",
                "tfs",
                "embedder_id",
                "embedding",
                "run_id",
            ),
            day_key=("user_id", "date", "source", "session_id", "seq", "chunk_id"),
            row_group_rows=8_192,
        ),
    )
}
