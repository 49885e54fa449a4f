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


def parts_of(wh: Path, c: Compact) -> dict[tuple[str, str | None], list[Path]]:
    """The source partitions of each copy: (user, month or None) -> partition files, sorted."""
    root = warehouse.table_dir(wh, c.source)
    out: dict[tuple[str, str | None], list[Path]] = {}
    if not root.is_dir():
        return out
    for f in sorted(root.glob("date=*/user_id=*/data.parquet")):
        user, day = f.parent.name.removeprefix("user_id="), f.parent.parent.name.removeprefix("date=")
        if USER_ID_RE.match(user):
            out.setdefault((user, day[:7] if c.grain == "month" else None), []).append(f)
    return out


def build(wh: Path, c: Compact, user: str, month: str | None = None) -> pa.Table | None:
    """The rows of the user's (by month: that month's) partitions, sorted, with the copy's columns; None if none."""
    files = parts_of(wh, c).get((user, month if c.grain == "month" else None))
    return _read(files, c) if files else None


def _read(files: list[Path], c: Compact) -> pa.Table:
    cols = ", ".join(f'"{n}"' for n in c.columns)  # user_id, date first: ORDER BY ALL is day order, and total
    con = duckdb.connect(":memory:")
    try:
        return con.sql(f"SELECT {cols} FROM read_parquet(?, hive_partitioning=false, union_by_name=true) "
                       "ORDER BY ALL", params=[[str(f) for f in files]]).to_arrow_table()
    finally:
        con.close()


def refresh(wh: Path, check: bool = False) -> int:
    """Make every missing copy; returns how many were written.

    A copy whose partitions are all gone was removed with the last of them. With
    ``check`` (a backfill), a copy whose bytes are not the ones kenang wrote (``kenang
    verify`` reports it) is made again too.
    """
    n = 0
    for c in COMPACTS.values():
        for (user, month), files in parts_of(wh, c).items():
            path = warehouse.compact_file(wh, c.name, user, month)
            if path.is_file() and (not check or warehouse.intact(path)):
                continue
            warehouse.write_file(path, _read(files, c), c.table)
            faults.checkpoint("compact.written")
            n += 1
    return n


def sources(wh: Path, name: str, user: str) -> list[Path]:
    """What to read for one user's whole history: the copies that exist, and the partitions of the rest.

    A copy by user, if it exists, is all of it. By month, each month with a copy is read
    from it, and a month without one (changed since the last run's end) from its partitions.
    """
    c = COMPACTS[name]
    if c.grain == "user":
        path = warehouse.compact_file(wh, name, user)
        if path.is_file():
            return [path]
        return sorted(warehouse.table_dir(wh, c.source).glob(f"date=*/user_id={user}/data.parquet"))
    out: list[Path] = []
    for (u, month), files in sorted(parts_of(wh, c).items(), key=lambda kv: kv[0][1] or ""):
        if u != user:
            continue
        path = warehouse.compact_file(wh, name, user, month)
        out += [path] if path.is_file() else files
    return out


def path_for(wh: Path, name: str, user: str, month: str | None = None) -> Path | None:
    """The user's (month's) copy, if there is one (then it matches the partitions)."""
    path = warehouse.compact_file(wh, name, user, month)
    return path if path.is_file() else None
