"""The SQL lane's connections: read the home's warehouse and nothing else.

Every connection kenang opens for a user's SQL (``kenang sql``, notebooks through
``connect``, ``flows.query.analyze.Analytics``) is locked by ``lock_to_warehouse``:
DuckDB may read the home's warehouse directory and nothing else, load or install no
extension, and change no setting afterwards. DuckDB's allowed directories grant writes
too, so ``kenang sql`` also runs only one read-only statement (``check_read_only``): a
COPY, EXPORT or ``EXPLAIN ANALYZE COPY`` into the warehouse is refused before it runs.
"""

from __future__ import annotations

import os
from pathlib import Path

import duckdb

from flows.config import Settings, load_settings, resolve_home
from flows.stages.catalog import ensure_catalog
from transforms.errors import TerminalError

#: Connect-time settings of a locked connection: no extension is fetched or loaded behind the user's back
#: (typed as ``duckdb.connect``'s ``config``).
LOCKED_CONFIG: dict[str, str | bool | int | float | list[str]] = {
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
}

#: PRAGMAs that only read (settings PRAGMAs, ``PRAGMA x = y``, parse as SET and are refused).
READ_ONLY_PRAGMAS = frozenset(
    {
        "collations",
        "database_list",
        "database_size",
        "functions",
        "metadata_info",
        "platform",
        "show_databases",
        "show_tables",
        "show_tables_expanded",
        "storage_info",
        "table_info",
        "user_agent",
        "version",
    }
)

_READ_ONLY = (
    "kenang sql is read-only and runs one statement: a SELECT (or WITH, FROM, VALUES, DESCRIBE, SHOW, "
    "SUMMARIZE), a PRAGMA that reads (" + ", ".join(sorted(READ_ONLY_PRAGMAS)) + "), or an EXPLAIN of one"
)


class QueryRefused(TerminalError):
    """A query the SQL lane will not run (not one read-only statement)."""


def lock_to_warehouse(
    con: duckdb.DuckDBPyConnection, wh: Path, timezone: str | None = None
) -> duckdb.DuckDBPyConnection:
    """Let ``con`` read files under ``wh`` and nothing else, then freeze its settings; returns ``con``.

    After this no file outside ``wh`` can be read or written, no extension installed,
    loaded or attached database opened, and no ``SET`` succeeds (so set ``timezone``
    here, not after). Writes *into* ``wh`` stay possible: callers that run a user's
    SQL must also pass it through ``check_read_only``.
    """
    con.execute("SET autoinstall_known_extensions = false")
    con.execute("SET autoload_known_extensions = false")
    spill = con.execute("SELECT current_setting('temp_directory')").fetchall()[0][0]
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
        if inner is None or len(inner_kinds) != 1:
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
    return [
        (off, sql[off:end].strip())
        for (off, kind), end in zip(toks, ends, strict=False)
        if kind != duckdb.token_type.comment
    ]


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
    return sql[words[i][0] :] if i < len(words) else None
