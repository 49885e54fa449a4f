"""Each table's columns are pinned: columns are append-only, a change here is a migration."""

from __future__ import annotations

from schemas.tables import TABLES, TABLES_VERSION, duckdb_columns

PINNED = {
    "sessions": ["session_id", "user_id", "agent", "date", "started_at", "ended_at", "message_count",
                 "source_format", "archive_path", "sha256", "run_id", "day_source", "redactions", "archive_paths"],
    "messages": ["message_id", "session_id", "user_id", "date", "ts", "role", "seq", "content", "run_id",
                 "redactions", "flags"],
    "archive_files": ["path", "user_id", "date", "size", "sha256", "original_path", "run_id", "archived_at"],
    "days": ["user_id", "date", "status", "archive_fingerprint", "content_fingerprint", "sessions", "messages",
             "reason", "run_id", "updated_at", "summary_status", "summary_fingerprint", "summary_reason",
             "summary_run_id", "summary_sha256", "index_status", "index_key", "index_reason", "index_run_id"],
    "runs": ["run_id", "flow", "parameters", "started_at", "finished_at", "status", "counts", "error", "date"],
    "quarantine": ["path", "original_path", "user_id", "size", "sha256", "kind", "reason", "run_id",
                   "quarantined_at", "date"],
    "daily_summaries": ["user_id", "date", "schema_version", "summary", "people", "projects", "tags",
                        "technologies", "importance", "mood", "related_dates", "sessions", "messages", "backend",
                        "model", "model_sha256", "prompt_version", "fallback_fields", "first_try_valid", "attempts",
                        "chunks", "prompt_tokens", "completion_tokens", "llm_seconds", "provenance", "path",
                        "content_fingerprint", "run_id"],
    "memory_chunks": ["chunk_id", "user_id", "date", "session_id", "source", "seq", "text", "flagged", "terms", "tfs",
                      "embedder_id", "embedding", "run_id"],
    "memory_events": ["event_id", "at", "user_id", "target", "action", "source", "before_sha256", "after_sha256", "date"],
    "memory_candidates": ["candidate_id", "user_id", "kind", "target", "text", "quote", "dates", "session_ids", "status",
                          "updated_at"],
    "tombstones": ["tombstone_id", "user_id", "kind", "digest", "words", "day", "purge", "created_at"],
    "purge_log": ["path", "sha256", "user_id", "day", "purged_at", "why"],
}


def test_every_table_has_exactly_its_pinned_columns_in_order():
    assert TABLES_VERSION == 1
    assert {name: t.schema.names for name, t in TABLES.items()} == PINNED


def test_duckdb_types_are_generated_for_every_column():
    cols = dict(duckdb_columns(TABLES["messages"]))
    assert cols["ts"] == "TIMESTAMPTZ" and cols["date"] == "DATE" and cols["seq"] == "INTEGER"


def test_every_user_facing_table_is_scoped_by_user():
    assert all("user_id" in t.schema.names for n, t in TABLES.items() if n != "runs")
