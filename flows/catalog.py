"""``warehouse/kenang.duckdb``: a catalog of views over the Parquet tables.

DuckDB lets one process write a database file, and a read-only opener blocks that
writer. So kenang never writes the catalog in place: it builds a new one under a
temporary name and ``os.replace``s it. A reader that has the old file open keeps
reading it (the views glob Parquet at query time, so it still sees new data); the next
reader opens the new file. Neither side ever waits on the other.

The catalog is rebuilt only when its DDL would change (a table gaining its first
file, a moved home), so a no-op run leaves it byte-for-byte alone.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import duckdb

from flows import faults, warehouse
from flows.fsio import fsync_dir, tmp_name
from schemas.tables import TABLES, Table, duckdb_columns
from schemas.views import derived_view_sql

_META = "_kenang_catalog"


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
    """Rebuild the catalog if its views would change; returns whether it did."""
    ddl = catalog_ddl(wh)
    digest = hashlib.sha256("\n".join(ddl).encode()).hexdigest()
    if _current_digest(catalog) == digest:
        return False
    catalog.parent.mkdir(parents=True, exist_ok=True)
    tmp = tmp_name(catalog)
    try:
        con = duckdb.connect(str(tmp))
        try:
            for stmt in ddl:
                con.execute(stmt)
            con.execute(f"CREATE TABLE {_META} (digest VARCHAR)")
            con.execute(f"INSERT INTO {_META} VALUES (?)", [digest])
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
    return True


def _current_digest(catalog: Path) -> str | None:
    if not catalog.is_file():
        return None
    try:
        con = duckdb.connect(str(catalog), read_only=True)
    except duckdb.Error:
        return None
    try:
        return con.execute(f"SELECT digest FROM {_META}").fetchone()[0]
    except duckdb.Error:
        return None
    finally:
        con.close()


def connect_read_only(catalog: Path, timezone: str | None = None) -> duckdb.DuckDBPyConnection:
    """A read-only connection for `kenang sql` and notebooks; never blocks a run.

    With ``timezone``, TIMESTAMPTZ values display in the user's zone rather than UTC.
    """
    con = duckdb.connect(str(catalog), read_only=True)
    if timezone:
        con.execute("SET TimeZone = ?", [timezone])
    return con
