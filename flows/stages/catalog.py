"""``warehouse/kenang.duckdb``: a catalog of views over the Parquet tables (the last nightly stage).

DuckDB lets one process write a database file, and a read-only opener blocks that
writer. So kenang never writes the catalog in place: it builds a new one under a
temporary name and ``os.replace``s it. A reader that has the old file open keeps
reading it (the views glob Parquet at query time, so it still sees new data); the next
reader opens the new file. Neither side ever waits on the other.

The catalog is rebuilt only when its DDL would change (a table gaining its first
file) or it was built for another warehouse (a copied or moved home: its views hold
absolute paths), so a no-op run leaves it byte-for-byte alone. Its ``_kenang_catalog``
table records the DDL digest and the warehouse it was built for. How users' queries
open it, locked to the warehouse, is ``flows.query.sql``.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import duckdb

from flows.store import faults, warehouse
from flows.store.fsio import fsync_dir, tmp_name
from schemas.tables import TABLES, Table, duckdb_columns
from schemas.views import derived_view_sql

_META = "_kenang_catalog"


def view_sql(wh: Path, table: Table) -> str:
    """CREATE VIEW for one table: over its Parquet files, or typed and empty if none exist yet."""
    cols = duckdb_columns(table)
    if not warehouse.has_files(wh, table):
        select = ", ".join(f'CAST(NULL AS {t}) AS "{c}"' for c, t in cols)
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
        row = con.execute(f"SELECT digest, warehouse FROM {_META}").fetchone()
        return tuple(row) if row is not None else None
    except (duckdb.Error, TypeError):
        return None
    finally:
        con.close()
