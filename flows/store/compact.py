"""Compact copies: one file per user and month of what whole-history readers read (``schemas.tables.COMPACTS``).

A year of one user's summaries is 365 small partitions; opening them all costs most of
a cold ``kenang analyze``. So at the end of every run (and of ``kenang forget``) each
(user, month) copy that is missing is made again from that month's partitions, in one
Parquet file, written atomically with its checksum like every warehouse file.

Freshness is by construction, with no clock and no digest to compare:
``warehouse.write_partition`` and ``delete_partition`` remove the user's copy of the
day's month, durably, before they touch a source partition. So a copy that exists was
made after the last change to its partitions, a crash in between included (the copy is
then simply missing, and readers read that month's partitions until the next run makes
it). A copy whose bytes changed behind kenang's back is caught by ``kenang verify`` and
made again by a backfill.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from flows.store import faults, ledger, warehouse
from flows.store.fsio import fsync_dir, total_size
from schemas.tables import COMPACTS, Compact
from transforms.errors import ArchiveError
from transforms.model import USER_ID_RE


def parts_of(wh: Path, c: Compact, user: str = "*") -> dict[tuple[str, str], list[Path]]:
    """The source partitions of each copy (every user's, or one user's): (user, month) -> files, sorted."""
    root = warehouse.table_dir(wh, c.source)
    out: dict[tuple[str, str], list[Path]] = {}
    for date_dir in warehouse.subfolders(root, "date="):
        users = warehouse.subfolders(root / date_dir, "user_id=") if user == "*" else [f"user_id={user}"]
        for user_dir in users:
            f = root / date_dir / user_dir / "data.parquet"
            found = user_dir.removeprefix("user_id=")
            if USER_ID_RE.match(found) and os.path.isfile(f):
                out.setdefault((found, date_dir.removeprefix("date=")[:7]), []).append(f)
    return out


def month_parts(wh: Path, c: Compact, user: str, month: str) -> list[Path]:
    """The user's source partitions of one month (``YYYY-MM``), sorted: the month's day folders alone are looked
    into."""
    root = warehouse.table_dir(wh, c.source)
    return [
        f
        for d in warehouse.subfolders(root, f"date={month}-")
        if os.path.isfile(f := root / d / f"user_id={user}" / "data.parquet")
    ]


def build(wh: Path, c: Compact, user: str, month: str) -> pa.Table | None:
    """The rows of the user's partitions of that month, sorted, with the copy's columns; None if none."""
    files = month_parts(wh, c, user, month)
    return _read(files, c) if files else None


def _read(files: list[Path], c: Compact) -> pa.Table:
    # user_id, date first: ORDER BY ALL is day order, and total
    return scan(files, ", ".join(f'"{n}"' for n in c.columns), "ORDER BY ALL")


def scan(files: list[Path], columns: str, tail: str = "", params=()) -> pa.Table:
    """``SELECT columns`` from the given copies and partitions (one in-memory DuckDB, by name), then ``tail``."""
    con = warehouse.scratch()
    try:
        return con.sql(
            f"SELECT {columns} FROM read_parquet(?, hive_partitioning=false, union_by_name=true) {tail}",
            params=[[str(f) for f in files], *params],
        ).to_arrow_table()
    finally:
        con.close()


Mapper = Callable[..., Iterable]  # (fn, items, nbytes=...): flows.stages.pool.pure_imap


def refresh(wh: Path, check: bool = False, map_items: Mapper | None = None) -> int:
    """Make every missing copy; returns how many were written.

    A copy whose partitions are all gone was removed with the last of them. With
    ``check`` (a backfill), a copy whose bytes are not the ones kenang wrote (``kenang
    verify`` reports it) is made again too, and every partition folder is listed;
    otherwise only the months without a copy are looked into (``_missing``), so a
    night's look costs a stat per user and month, not one per day. A month whose copy
    was set aside as its base for a new day (``warehouse.drop_compacts``) is made from
    that base and the added days' partitions. ``map_items`` (the run's process pool,
    ``flows.stages.pool.pure_imap``) makes the copies' bytes on every core; they are
    written here, in order.
    """
    todo = []
    for c in COMPACTS.values():
        found = parts_of(wh, c).items() if check else _missing(wh, c)
        for (user, month), files in found:
            path = warehouse.compact_file(wh, c.name, user, month)
            if path.is_file() and (not check or warehouse.intact(path)):
                continue
            todo.append((c, user, path, _appended(c, path, files) or (c.name, files)))
    items = [args for *_, args in todo]
    made = map_items(copy_bytes, items, nbytes=_nbytes(items)) if map_items else _in_process(copy_bytes, items)
    for (c, user, path, _), data in zip(todo, made, strict=False):
        if not isinstance(data, bytes):  # a worker's failure: raised here, as in one process
            raise ArchiveError(f"making the compact copy {path}: {data}")
        if c.source.name == "memory_chunks":
            warehouse.drop_pack(wh, user, path.stem.removeprefix("month="))  # made from what this copy replaces
        warehouse.write_file(path, data, c.table)
        faults.checkpoint("compact.written")
    _drop_bases(wh)
    return len(todo)


def _nbytes(items: list[tuple]) -> int:
    """The bytes ``copy_bytes`` reads for these copies: their partitions' and bases' sizes."""
    return total_size(f for _, files, *rest in items for f in [*files, *(rest[0][:1] if rest else ())])


def _missing(wh: Path, c: Compact) -> Iterator[tuple[tuple[str, str], list[Path]]]:
    """((user, month), partitions) for each month of each user with partitions of ``c``'s source and no copy.

    The users are the ledger's and those with copies: a partition is written only for a
    day the ledger holds (or is about to: that day is loaded again by the next run).
    """
    root = warehouse.table_dir(wh, c.source)
    by_month: dict[str, list[str]] = {}
    for date_dir in warehouse.subfolders(root, "date="):
        by_month.setdefault(date_dir.removeprefix("date=")[:7], []).append(date_dir)
    users = set(ledger.users(wh))
    users |= {d.removeprefix("user_id=") for d in warehouse.subfolders(wh / "compact" / c.name, "user_id=")}
    for user in sorted(u for u in users if USER_ID_RE.match(u)):
        for month, date_dirs in sorted(by_month.items()):
            if os.path.isfile(warehouse.compact_file(wh, c.name, user, month)):
                continue
            files = [f for d in date_dirs if os.path.isfile(f := root / d / f"user_id={user}" / "data.parquet")]
            if files:
                yield (user, month), files


def _appended(c: Compact, path: Path, files: list[Path]) -> tuple | None:
    """copy_bytes' arguments to make a copy from its base and the days added since, if it has a sound base."""
    base, _ = warehouse.compact_base(path)
    added = warehouse.compact_added_days(path)
    if added is None or not warehouse.intact(base):
        return None
    days = {d.isoformat() for d in added}
    new = [f for f in files if f.parent.parent.name.removeprefix("date=") in days]
    return c.name, new, (base, sorted(added))


def _drop_bases(wh: Path) -> None:
    """Remove every base left: once the copies are made, each was made from its base or had no partitions left."""
    for c in COMPACTS.values():
        root = wh / "compact" / c.name
        for user_dir in warehouse.subfolders(root, "user_id="):
            folder = root / user_dir
            gone = [
                n for n in _names(folder) if n.startswith(".month=") and n.endswith((".base.parquet", ".added.json"))
            ]
            for n in gone:
                (folder / n).unlink(missing_ok=True)
                if n.endswith(".parquet"):
                    warehouse.checksum_file(folder / n).unlink(missing_ok=True)
            if gone:
                fsync_dir(folder)


def _names(folder: Path) -> list[str]:
    try:
        with os.scandir(folder) as it:
            return [e.name for e in it]
    except (FileNotFoundError, NotADirectoryError):
        return []


def copy_bytes(args: tuple) -> bytes:
    """The Parquet bytes of one copy: (its name, its partitions), or (its name, the added days' partitions, (its
    base, those days)); writes nothing, so a pool worker may make them."""
    name, files, *rest = args
    c = COMPACTS[name]
    if not rest:
        return warehouse.parquet_bytes(_read(files, c), c.table)
    base, added = rest[0]
    cols = ", ".join(f'"{n}"' for n in c.columns)
    # The base's rows of the other days are those days' partitions' rows: one sort of all gives a whole build's order.
    sql = f"SELECT {cols} FROM read_parquet(?, hive_partitioning=false) WHERE NOT list_contains(?, date)"
    params: list = [[str(base)], added]
    if files:
        sql += f" UNION ALL SELECT {cols} FROM read_parquet(?, hive_partitioning=false, union_by_name=true)"
        params.append([str(f) for f in files])
    con = warehouse.scratch()
    try:
        data = con.sql(sql + " ORDER BY ALL", params=params).to_arrow_table()
    finally:
        con.close()
    return warehouse.parquet_bytes(data, c.table)


def _in_process(fn: Callable, items: list) -> Iterator:
    return (fn(x) for x in items)


def sources(wh: Path, name: str, user: str, months: Iterable[str] | None = None) -> list[Path]:
    """What to read for one user's whole history (or for ``months`` of it, ``YYYY-MM``), month by month: the
    month's copy if it exists, else its partitions (a month changed since the last run's end). ``user`` must match
    ``USER_ID_RE``."""
    return [f for _, files in user_months(wh, name, user, months) for f in files]


def user_months(wh: Path, name: str, user: str, months: Iterable[str] | None = None) -> list[tuple[str, list[Path]]]:
    """(month, what to read of it) for each month in which the user has partitions of a copy's source, in order.

    A copy that exists holds exactly its month's partitions (it is dropped before any of
    them changes), so a month with a copy needs no listing of its days: this costs one
    listing of the table's date folders and a stat per month, not a look into every
    day's folder, for every whole-history reader.
    """
    c = COMPACTS[name]
    root = warehouse.table_dir(wh, c.source)
    wanted = None if months is None else set(months)
    by_month: dict[str, list[str]] = {}
    for date_dir in warehouse.subfolders(root, "date="):
        month = date_dir.removeprefix("date=")[:7]
        if wanted is None or month in wanted:
            by_month.setdefault(month, []).append(date_dir)
    out = []
    for month, date_dirs in sorted(by_month.items()):
        copy = warehouse.compact_file(wh, name, user, month)
        if copy.is_file():
            out.append((month, [copy]))
            continue
        files = [f for d in date_dirs if os.path.isfile(f := root / d / f"user_id={user}" / "data.parquet")]
        if files:
            out.append((month, files))
    return out


def read_user(
    wh: Path,
    name: str,
    user: str,
    where: str = "",
    params=(),
    columns: Sequence[str] | None = None,
    months: Iterable[str] | None = None,
) -> pa.Table:
    """One user's whole history of a copy's columns (or of ``columns``), in day order, from ``sources`` (copies
    where they exist).

    What a per-user reader of a whole table reads instead of globbing every partition;
    ``where`` (SQL over the copy's columns) narrows it, and ``months`` (``YYYY-MM``) says which
    months to open at all: a reader of a few recent weeks opens those months' files alone.
    """
    c = COMPACTS[name]
    schema = c.table.schema if columns is None else pa.schema([c.table.schema.field(n) for n in columns])
    files = sources(wh, name, user, months) if USER_ID_RE.match(user) else []
    if not files:
        return schema.empty_table()
    got = scan(
        files,
        ", ".join(f'"{n}"' for n in (columns or c.columns)),
        f"WHERE user_id = ? {'AND ' + where if where else ''} ORDER BY date",
        [user, *params],
    )
    return got.cast(schema) if got.schema != schema else got


def read_copy(path: Path, columns: Sequence[str]) -> pa.Table:
    """Some columns of one copy, in its order and typed as a ``scan`` of it gives them (every field nullable, a
    list's items named ``l``), without the memory of a sort."""
    data = pq.ParquetFile(path).read(columns=list(columns))
    return data.cast(pa.schema([pa.field(f.name, _as_scanned(f.type)) for f in data.schema]))


def _as_scanned(t: pa.DataType) -> pa.DataType:
    return pa.list_(pa.field("l", _as_scanned(t.value_type))) if pa.types.is_list(t) else t


def is_copy(wh: Path, path: Path) -> bool:
    """Whether a file ``sources`` listed is a compact copy (not a day partition)."""
    return path.is_relative_to(wh / "compact")


def path_for(wh: Path, name: str, user: str, month: str) -> Path | None:
    """The user's copy of a month, if there is one (then it matches the partitions)."""
    path = warehouse.compact_file(wh, name, user, month)
    return path if path.is_file() else None
