"""``warehouse/kenang.duckdb``: a catalog of views over the Parquet tables.

DuckDB lets one process write a database file, and a read-only opener blocks that
writer. So kenang never writes the catalog in place: it builds a new one under a
temporary name and ``os.replace``s it. A reader that has the old file open keeps
reading it (the views glob Parquet at query time, so it still sees new data); the next
reader opens the new file. Neither side ever waits on the other.

The catalog is rebuilt only when its DDL would change (a table gaining its first
file) or it was built for another warehouse (a copied or moved home: its views hold
absolute paths), so a no-op run leaves it byte-for-byte alone. Its ``_kenang_catalog``
table records the DDL digest and the warehouse it was built for.

Every connection kenang opens for a user's SQL (``kenang sql``, notebooks through
``connect``, ``flows.analyze.Analytics``) is locked by ``lock_to_warehouse``: DuckDB may
read the home's warehouse directory and nothing else, load or install no extension, and
change no setting afterwards. DuckDB's allowed directories grant writes too, so
``kenang sql`` also runs only one read-only statement (``check_read_only``): a COPY,
EXPORT or ``EXPLAIN ANALYZE COPY`` into the warehouse is refused before it runs.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import duckdb

from flows import faults, warehouse
from flows.config import Settings, load_settings, resolve_home
from flows.fsio import fsync_dir, tmp_name
from schemas.tables import TABLES, Table, duckdb_columns
from schemas.views import derived_view_sql
from transforms.errors import TerminalError

_META = "_kenang_catalog"

#: Connect-time settings of a locked connection: no extension is fetched or loaded behind the user's back.
LOCKED_CONFIG = {"autoinstall_known_extensions": False, "autoload_known_extensions": False}

#: PRAGMAs that only read (settings PRAGMAs, ``PRAGMA x = y``, parse as SET and are refused).
READ_ONLY_PRAGMAS = frozenset({
    "collations", "database_list", "database_size", "functions", "metadata_info", "platform", "show_databases",
    "show_tables", "show_tables_expanded", "storage_info", "table_info", "user_agent", "version",
})

_READ_ONLY = ("kenang sql is read-only and runs one statement: a SELECT (or WITH, FROM, VALUES, DESCRIBE, SHOW, "
              "SUMMARIZE), a PRAGMA that reads (" + ", ".join(sorted(READ_ONLY_PRAGMAS)) + "), or an EXPLAIN of one")


class QueryRefused(TerminalError):
    """A query the SQL lane will not run (not one read-only statement)."""


def view_sql(wh: Path, table: Table) -> str:
    """CREATE VIEW for one table: over its Parquet files, or typed and empty if none exist yet."""
    cols = duckdb_columns(table)
    if not warehouse.has_files(wh, table):
        select = ", ".join(f"CAST(NULL AS {t}) AS \"{c}\"" for c, t in cols)
        return f'CREATE VIEW "{table.name}" AS SELECT {select} WHERE false'
    hive = "true" if table.layout != "single" else "false"
    src = warehouse.glob(wh, table).replace("'", "''")
    select = ", ".join(f'CAST("{c}" AS {t}) AS "{c}"' for c, t in cols)
    return (
        f'CREATE VIEW "{table.name}" AS SELECT {select} FROM '
        f"read_parquet('{src}', hive_partitioning={hive}, union_by_name=true)"
    )


def catalog_ddl(wh: Path) -> list[str]:
    """The table views, then the views derived from them (``schemas.views``)."""
    return [view_sql(wh, t) for t in TABLES.values()] + derived_view_sql()


def ensure_catalog(catalog: Path, wh: Path) -> bool:
    """Rebuild the catalog if its views would change or it was built for another warehouse; returns whether it did.

    A run and a reader may rebuild at once, each swapping in its own file. After its swap
    each one looks again, and builds once more if the warehouse moved on meanwhile, so a
    reader's rebuild never leaves an older catalog in place of a run's.
    """
    built = False
    for _ in range(3):
        ddl = catalog_ddl(wh)
        digest = hashlib.sha256("\n".join(ddl).encode()).hexdigest()
        if _built_for(catalog) == (digest, str(wh)):
            break
        _build(catalog, wh, ddl, digest)
        built = True
    return built


def _build(catalog: Path, wh: Path, ddl: list[str], digest: str) -> None:
    catalog.parent.mkdir(parents=True, exist_ok=True)
    tmp = tmp_name(catalog)
    try:
        con = duckdb.connect(str(tmp))
        try:
            for stmt in ddl:
                con.execute(stmt)
            con.execute(f"CREATE TABLE {_META} (digest VARCHAR, warehouse VARCHAR)")
            con.execute(f"INSERT INTO {_META} VALUES (?, ?)", [digest, str(wh)])
            con.execute("CHECKPOINT")
        finally:
            con.close()
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, catalog)
    finally:
        tmp.unlink(missing_ok=True)
        Path(str(tmp) + ".wal").unlink(missing_ok=True)
    fsync_dir(catalog.parent)
    faults.checkpoint("catalog.built")


def _built_for(catalog: Path) -> tuple[str, str] | None:
    """(digest, warehouse) the catalog was built with; None if it is missing, unreadable or older than that record."""
    if not catalog.is_file():
        return None
    try:
        con = duckdb.connect(str(catalog), read_only=True)
    except duckdb.Error:
        return None
    try:
        return tuple(con.execute(f"SELECT digest, warehouse FROM {_META}").fetchone())
    except (duckdb.Error, TypeError):
        return None
    finally:
        con.close()


def lock_to_warehouse(con: duckdb.DuckDBPyConnection, wh: Path, timezone: str | None = None) -> duckdb.DuckDBPyConnection:
    """Let ``con`` read files under ``wh`` and nothing else, then freeze its settings; returns ``con``.

    After this no file outside ``wh`` can be read or written, no extension installed,
    loaded or attached database opened, and no ``SET`` succeeds (so set ``timezone``
    here, not after). Writes *into* ``wh`` stay possible: callers that run a user's
    SQL must also pass it through ``check_read_only``.
    """
    con.execute("SET autoinstall_known_extensions = false")
    con.execute("SET autoload_known_extensions = false")
    spill = con.execute("SELECT current_setting('temp_directory')").fetchone()[0]
    if spill and not Path(os.path.abspath(spill)).is_relative_to(wh):
        # DuckDB adds its spill folder to the allowed directories, writable; keep it inside wh or off.
        con.execute("SET temp_directory = ''")
    con.execute("SET allowed_directories = ?", [[str(wh) + os.sep]])
    con.execute("SET enable_external_access = false")
    if timezone:
        con.execute("SET TimeZone = ?", [timezone])
    con.execute("SET lock_configuration = true")
    return con


def connect_read_only(catalog: Path, timezone: str | None = None) -> duckdb.DuckDBPyConnection:
    """A read-only connection to ``catalog``, locked to its warehouse folder; never blocks a run.

    With ``timezone``, TIMESTAMPTZ values display in the user's zone rather than UTC. It
    opens the file as it is; ``connect`` brings it up to date first.
    """
    con = duckdb.connect(str(catalog), read_only=True, config=LOCKED_CONFIG)
    try:
        return lock_to_warehouse(con, catalog.parent, timezone)
    except BaseException:
        con.close()
        raise


def connect(home: Settings | str | os.PathLike | None = None) -> duckdb.DuckDBPyConnection:
    """The home's catalog for `kenang sql` and notebooks: read-only, locked to its warehouse, in its timezone.

    ``home`` is a ``Settings``, a home folder, or None for ``$KENANG_HOME``. The catalog
    is built first if it is missing, stale or was built for another warehouse (a copied
    or moved home), atomically, so this never waits on or blocks a run.
    """
    settings = home if isinstance(home, Settings) else load_settings(resolve_home(home, os.environ))
    ensure_catalog(settings.paths.catalog, settings.paths.warehouse)
    return connect_read_only(settings.paths.catalog, settings.timezone.key)


def check_read_only(query: str) -> None:
    """Raise ``QueryRefused`` unless ``query`` is exactly one read-only statement.

    Allowed: SELECT-type statements (WITH, FROM, VALUES, DESCRIBE, SHOW, SUMMARIZE, a
    PIVOT with its IN list), the PRAGMAs in ``READ_ONLY_PRAGMAS``, and EXPLAIN [ANALYZE]
    of one of those (EXPLAIN ANALYZE runs its statement). Anything else, or anything
    that cannot be classified, is refused.
    """
    kinds = _kinds(query)
    if len(kinds) != 1:
        raise QueryRefused(f"{len(kinds) or 'no'} statements given: {_READ_ONLY}")
    refused = _refusal(query, kinds[0])
    if refused:
        raise QueryRefused(f"{refused} is refused: {_READ_ONLY}")


def _kinds(sql: str) -> list[duckdb.StatementType]:
    try:
        return [s.type for s in duckdb.extract_statements(sql)]
    except duckdb.Error as exc:
        raise QueryRefused(str(exc).splitlines()[0]) from exc
    except ValueError as exc:  # a statement type the Python binding has no name for (UPDATE EXTENSIONS)
        raise QueryRefused(f"a statement kenang cannot classify is refused: {_READ_ONLY}") from exc


def _refusal(sql: str, kind: duckdb.StatementType) -> str | None:
    """What to name in the refusal of one statement; None if it may run."""
    if kind == duckdb.StatementType.SELECT:
        return None
    words = _tokens(sql)
    if kind == duckdb.StatementType.PRAGMA:
        name = words[1][1].strip('"').lower() if len(words) > 1 else ""
        return None if name in READ_ONLY_PRAGMAS else f"PRAGMA {name}"
    if kind == duckdb.StatementType.EXPLAIN:
        inner = _explained(sql, words)
        inner_kinds = _kinds(inner) if inner is not None else []
        if len(inner_kinds) != 1:
            return "an EXPLAIN kenang cannot read"
        refused = _refusal(inner, inner_kinds[0])
        return f"EXPLAIN of {refused}, which EXPLAIN ANALYZE would run," if refused else None
    head = words[0][1].upper() if words else kind.name
    if head == "PRAGMA" and len(words) > 1:
        head += f" {words[1][1]}"
    return head if head == kind.name else f"{head} (a {kind.name} statement)"


def _tokens(sql: str) -> list[tuple[int, str]]:
    """(offset, text) of each token, comments left out."""
    toks = duckdb.tokenize(sql)
    ends = [off for off, _ in toks[1:]] + [len(sql)]
    return [(off, sql[off:end].strip()) for (off, kind), end in zip(toks, ends) if kind != duckdb.token_type.comment]


def _explained(sql: str, words: list[tuple[int, str]]) -> str | None:
    """The statement after ``EXPLAIN [ANALYZE] [(options)]``; None if the prefix is not that."""
    if not words or words[0][1].upper() != "EXPLAIN":
        return None
    i = 1
    if i < len(words) and words[i][1].upper() in ("ANALYZE", "ANALYSE"):
        i += 1
    if i < len(words) and words[i][1] == "(":
        depth = 0
        while i < len(words):
            depth += {"(": 1, ")": -1}.get(words[i][1], 0)
            i += 1
            if depth == 0:
                break
        if depth:
            return None
    return sql[words[i][0]:] if i < len(words) else None
