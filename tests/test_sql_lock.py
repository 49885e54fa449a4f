"""`kenang sql` reads the home's warehouse and nothing else (issue 10, part 1).

Each case runs as a user would, through the CLI on a scratch home whose warehouse holds
one messages partition written directly. DuckDB's lock (``lock_to_warehouse``) refuses
files outside the warehouse; the statement check (``check_read_only``) refuses writes,
settings and extensions before anything runs, including writes *into* the warehouse,
which DuckDB's allowed directories would let through. The connections that notebooks
get (``flows.query.sql.connect`` and ``Analytics.con``) carry the same lock.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import shutil
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest
from helpers import kenang

from flows.config import load_settings
from flows.store import warehouse
from schemas.tables import MESSAGES

DAY = dt.date(2026, 7, 19)


def write_messages(settings, *contents: str) -> Path:
    """One messages partition for user 'default' on DAY, one row per content."""
    rows = [
        {
            "message_id": f"m{i}",
            "session_id": "s",
            "user_id": "default",
            "date": DAY,
            "ts": dt.datetime(2026, 7, 19, 3, i, tzinfo=dt.UTC),
            "role": "user",
            "seq": i,
            "content": c,
            "run_id": "r",
            "redactions": 0,
            "flags": [],
        }
        for i, c in enumerate(contents)
    ]
    return warehouse.write_partition(
        settings.paths.warehouse, MESSAGES, pa.Table.from_pylist(rows, schema=MESSAGES.schema), DAY, "default"
    )


@pytest.fixture
def partition(home) -> Path:
    return write_messages(home, "halo", "apa kabar")


def sql(settings, query: str, *options: str) -> tuple[int, str, str]:
    """``kenang sql --home HOME [OPTIONS] QUERY``: (exit code, stdout, stderr)."""
    r = kenang("sql", "--home", str(settings.paths.home), *options, query)
    return r.exit_code, r.stdout, r.stderr


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def assert_read_only_refusal(code: int, out: str, err: str, what: str) -> None:
    assert code == 2 and out == ""
    assert err.startswith(f"kenang sql: {what} is refused: kenang sql is read-only")
    assert len(err.strip().splitlines()) == 1


# --- files outside the warehouse: refused by DuckDB's lock, at run time -----------------


def test_read_text_of_etc_passwd_is_refused(home, partition):
    code, out, err = sql(home, "SELECT content FROM read_text('/etc/passwd')")
    assert code == 2 and out == "" and "root:" not in err
    assert err.startswith(f"kenang sql: refused: kenang sql reads only the warehouse ({home.paths.warehouse});")
    assert '"/etc/passwd"' in err and len(err.strip().splitlines()) == 1


def test_glob_of_root_is_refused(home, partition):
    code, out, err = sql(home, "SELECT * FROM glob('/root/*')")
    assert code == 2 and out == ""
    assert err.startswith("kenang sql: refused: kenang sql reads only the warehouse") and '"/root/*"' in err


def test_a_dot_dot_escape_from_the_warehouse_is_refused(home, partition):
    code, out, err = sql(home, f"SELECT content FROM read_text('{home.paths.warehouse}/../kenang.yaml')")
    assert code == 2 and out == "" and "reads only the warehouse" in err


# --- writes, settings, extensions: refused before they run -----------------------------


def test_copy_to_tmp_is_refused_and_writes_nothing(home, partition, tmp_path):
    target = tmp_path / "x.csv"
    assert_read_only_refusal(*sql(home, f"COPY (SELECT * FROM messages) TO '{target}'"), "COPY")
    assert not target.exists()


def test_export_database_is_refused_and_creates_no_folder(home, partition, tmp_path):
    target = tmp_path / "dump"
    assert_read_only_refusal(*sql(home, f"EXPORT DATABASE '{target}'"), "EXPORT")
    assert not target.exists()


def test_copy_over_a_warehouse_partition_is_refused_and_leaves_its_bytes_alone(home, partition):
    before = sha256(partition)
    query = f"COPY (SELECT 'pwned' AS content) TO '{partition}' (FORMAT parquet)"
    assert_read_only_refusal(*sql(home, query), "COPY")
    assert sha256(partition) == before


def test_explain_analyze_copy_is_refused_and_leaves_the_partition_alone(home, partition):
    before = sha256(partition)
    query = f"EXPLAIN ANALYZE COPY (SELECT 'pwned' AS content) TO '{partition}' (FORMAT parquet)"
    assert_read_only_refusal(*sql(home, query), "EXPLAIN of COPY, which EXPLAIN ANALYZE would run,")
    assert sha256(partition) == before


def test_install_httpfs_is_refused_before_any_connection_opens(home, partition, monkeypatch):
    def no_connection(*args, **kwargs):
        raise AssertionError("kenang sql opened a connection for a refused statement")

    monkeypatch.setattr("flows.query.sql.connect", no_connection)
    assert_read_only_refusal(*sql(home, "INSTALL httpfs"), "INSTALL (a LOAD statement)")


def test_set_enable_external_access_is_refused(home, partition):
    assert_read_only_refusal(*sql(home, "SET enable_external_access = true"), "SET")


def test_two_statements_are_refused_even_when_the_first_reads(home, partition, tmp_path):
    target = tmp_path / "x.csv"
    code, out, err = sql(home, f"SELECT 1; COPY (SELECT 1) TO '{target}'")
    assert code == 2 and out == ""
    assert err.startswith("kenang sql: 2 statements given: kenang sql is read-only")
    assert not target.exists()


# --- reads that run ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "query, check",
    [
        ("SELECT count(*) AS n FROM messages", lambda rows: rows == [{"n": 2}]),
        (
            "WITH m AS (SELECT content FROM messages) SELECT content FROM m ORDER BY 1",
            lambda rows: rows == [{"content": "apa kabar"}, {"content": "halo"}],
        ),
        ("FROM messages SELECT seq ORDER BY seq", lambda rows: rows == [{"seq": 0}, {"seq": 1}]),
        ("DESCRIBE messages", lambda rows: "content" in [r["column_name"] for r in rows]),
        ("SHOW TABLES", lambda rows: {"messages", "sessions", "daily_summaries"} <= {r["name"] for r in rows}),
        ("PRAGMA table_info('messages')", lambda rows: "content" in [r["name"] for r in rows]),
        ("EXPLAIN SELECT * FROM messages", lambda rows: "READ_PARQUET" in json.dumps(rows).upper()),
    ],
)
def test_one_read_only_statement_runs(home, partition, query, check):
    code, out, err = sql(home, query, "--json")
    assert code == 0, err
    assert check(json.loads(out))


def test_timestamps_show_in_the_home_timezone(home, partition):
    code, out, err = sql(home, "SELECT CAST(min(ts) AS VARCHAR) AS ts FROM messages", "--json")
    assert code == 0, err
    assert json.loads(out) == [{"ts": "2026-07-19 10:00:00+07"}]  # 03:00 UTC, shown in Asia/Jakarta


# --- a copied or moved home -------------------------------------------------------------


def test_a_copied_home_reads_its_own_warehouse(home, partition, tmp_path):
    assert sql(home, "SELECT count(*) AS n FROM messages", "--json")[:2] == (0, '[\n  {\n    "n": 2\n  }\n]\n')
    copy = tmp_path / "copy"
    shutil.copytree(home.paths.home, copy)  # its catalog still names the original's files
    write_messages(home, "satu", "dua", "tiga")  # the original moves on
    copied = load_settings(copy)

    code, out, err = sql(copied, "SELECT count(*) AS n, min(content) AS first FROM messages", "--json")
    assert code == 0, err
    assert json.loads(out) == [{"n": 2, "first": "apa kabar"}]
    code, out, err = sql(copied, "SELECT warehouse FROM _kenang_catalog", "--json")
    assert json.loads(out) == [{"warehouse": str(copy / "warehouse")}]

    shutil.rmtree(home.paths.warehouse)  # and the original can go
    code, out, err = sql(copied, "SELECT count(*) AS n FROM messages", "--json")
    assert code == 0 and json.loads(out) == [{"n": 2}], err


def test_a_missing_catalog_is_built_on_first_query(home, partition):
    home.paths.catalog.unlink(missing_ok=True)
    code, out, err = sql(home, "SELECT count(*) AS n FROM messages", "--json")
    assert code == 0 and json.loads(out) == [{"n": 2}], err
    assert home.paths.catalog.is_file()


# --- the connections notebooks get --------------------------------------------------------


def _notebook_connection(settings):
    from flows.query.sql import connect

    return connect(settings.paths.home)


def _analytics_connection(settings):
    from flows.query.analyze import Analytics

    return Analytics(settings, "default").con


@pytest.mark.parametrize(
    "open_connection", [_notebook_connection, _analytics_connection], ids=["notebook", "analytics"]
)
def test_a_notebook_connection_reads_the_warehouse_and_nothing_else(home, partition, tmp_path, open_connection):
    con = open_connection(home)
    try:
        glob = str(home.paths.warehouse / "messages" / "**" / "*.parquet")
        assert con.execute("SELECT count(*) FROM read_parquet(?)", [glob]).fetchone() == (2,)
        assert con.execute("SELECT current_setting('TimeZone')").fetchone() == ("Asia/Jakarta",)
        with pytest.raises(duckdb.PermissionException):
            con.execute("SELECT content FROM read_text('/etc/passwd')")
        target = tmp_path / "x.csv"
        with pytest.raises(duckdb.PermissionException):
            con.execute(f"COPY (SELECT 1 AS a) TO '{target}'")
        assert not target.exists()
        with pytest.raises(duckdb.PermissionException):
            con.execute("INSTALL httpfs")
        with pytest.raises(duckdb.InvalidInputException, match="configuration has been locked"):
            con.execute("SET enable_external_access = true")
    finally:
        con.close()


def test_the_analytics_connection_cannot_write_into_duckdbs_spill_folder(home, partition, tmp_path, monkeypatch):
    from flows.query.analyze import Analytics

    monkeypatch.chdir(tmp_path)
    (tmp_path / ".tmp").mkdir()  # an in-memory DuckDB spills to ./.tmp and would allow writes there
    con = Analytics(home, "default").con
    try:
        with pytest.raises(duckdb.PermissionException):
            con.execute("COPY (SELECT 1 AS a) TO '.tmp/x.csv'")
    finally:
        con.close()
    assert not (tmp_path / ".tmp" / "x.csv").exists()
