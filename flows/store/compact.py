"""Compact copies: one file per user of what whole-history readers read (``schemas.tables.COMPACTS``).

A year of one user's summaries is 365 small partitions; opening them all costs most of
a cold ``kenang analyze``. So at the end of every run (and of ``kenang forget``) each
user's copy that is missing is made again from the partitions, in one Parquet file,
written atomically with its checksum like every warehouse file.

Freshness is by construction, with no clock and no digest to compare:
``warehouse.write_partition`` and ``delete_partition`` remove the user's copies, durably,
before they touch a source partition. So a copy that exists was made after the last
change to its partitions, a crash in between included (the copy is then simply missing,
and readers read the partitions until the next run makes it). A partition changed
behind kenang's back is caught by ``kenang verify``, and the backfill that rebuilds it
removes the copy too.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pyarrow as pa

from flows.store import faults, warehouse
from schemas.tables import COMPACTS, Compact
from transforms.model import USER_ID_RE


def users_of(wh: Path, c: Compact) -> list[str]:
    """Users with at least one partition of the copy's source table."""
    root = warehouse.table_dir(wh, c.source)
    if not root.is_dir():
        return []
    found = {p.name.removeprefix("user_id=") for p in root.glob("date=*/user_id=*") if p.is_dir()}
    return sorted(u for u in found if USER_ID_RE.match(u))


def build(wh: Path, c: Compact, user: str) -> pa.Table | None:
    """The user's rows of the source table, in day order, with the copy's columns; None if there are none."""
    files = sorted(warehouse.table_dir(wh, c.source).glob(f"date=*/user_id={user}/data.parquet"))
    if not files:
        return None
    cols = ", ".join(f'"{n}"' for n in c.columns)  # user_id, date first: ORDER BY ALL is day order, and total
    con = duckdb.connect(":memory:")
    try:
        return con.sql(f"SELECT {cols} FROM read_parquet(?, hive_partitioning=false, union_by_name=true) "
                       "ORDER BY ALL", params=[[str(f) for f in files]]).to_arrow_table()
    finally:
        con.close()


def refresh(wh: Path) -> int:
    """Make every missing copy; returns how many were written."""
    n = 0
    for c in COMPACTS.values():
        for user in users_of(wh, c):
            path = warehouse.compact_file(wh, c.name, user)
            if path.is_file():
                continue
            data = build(wh, c, user)
            if data is None:
                continue
            warehouse.write_file(path, data, c.table)
            faults.checkpoint("compact.written")
            n += 1
    return n


def path_for(wh: Path, name: str, user: str) -> Path | None:
    """The user's copy, if there is one (then it matches the partitions)."""
    path = warehouse.compact_file(wh, name, user)
    return path if path.is_file() else None
