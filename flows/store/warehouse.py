"""Parquet tables under ``warehouse/``: the source of truth.

Every write is a whole file, written to a temporary name beside its final one and
``os.replace``d (``flows.store.fsio.atomic_write``), so a reader sees either the old
partition or the new one, never half. Temporary names end in ``.part``, so a reader's
``**/*.parquet`` glob never lists a half-written file.

Reads use an in-memory DuckDB connection over ``read_parquet`` globs. They never open
``kenang.duckdb``, so the pipeline can neither block nor be blocked by a notebook.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from flows.store.fsio import TMP_PREFIX, atomic_write, atomic_write_bytes, fsync_dir, io_error, sha256_file
from schemas.tables import COMPACTS, Table

_PARQUET_OPTS = {"compression": "zstd", "use_dictionary": True, "write_statistics": True}


def table_dir(warehouse: Path, table: Table) -> Path:
    return warehouse / table.name


def subfolders(folder: Path, prefix: str) -> list[str]:
    """The names of ``folder``'s subfolders that start with ``prefix``, sorted (none when it is not a folder).

    ``os.scandir``, not ``Path.glob``: partitions are listed several times a night, and this is 3-4x faster."""
    try:
        with os.scandir(folder) as it:
            return sorted(e.name for e in it if e.name.startswith(prefix) and e.is_dir(follow_symlinks=False))
    except (FileNotFoundError, NotADirectoryError):
        return []


def file_names(folder: Path) -> set[str]:
    """The names of ``folder``'s plain files (none when it is not a folder): one listing where a stat each would
    cost a path each."""
    try:
        with os.scandir(folder) as it:
            return {e.name for e in it if e.is_file()}
    except (FileNotFoundError, NotADirectoryError):
        return set()


def partition_file(warehouse: Path, table: Table, day: dt.date, user_id: str | None = None, name: str = "data") -> Path:
    """Where a partition lives: user_day -> date=/user_id=/data.parquet, date -> date=/<name>.parquet."""
    base = table_dir(warehouse, table) / f"date={day.isoformat()}"
    if table.layout == "user_day":
        return base / f"user_id={user_id}" / "data.parquet"
    if table.layout == "date":
        return base / f"{name}.parquet"
    raise ValueError(f"{table.name} is not partitioned")


def single_file(warehouse: Path, table: Table) -> Path:
    return warehouse / f"{table.name}.parquet"


def user_month_file(warehouse: Path, table: Table, user_id: str, month: str) -> Path:
    """A ``user_month`` table's file of one user and month: <table>/user_id=<u>/month=YYYY-MM/data.parquet."""
    if table.layout != "user_month":
        raise ValueError(f"{table.name} is not kept per user and month")
    return table_dir(warehouse, table) / f"user_id={user_id}" / f"month={month}" / "data.parquet"


def user_month_files(warehouse: Path, table: Table, user_id: str, since: str = "") -> dict[str, Path]:
    """A ``user_month`` table's files of one user, by month (``YYYY-MM``, from ``since`` on), in order."""
    folder = user_month_file(warehouse, table, user_id, "x").parent.parent
    out = {}
    for name in subfolders(folder, "month="):
        month = name.removeprefix("month=")
        if month >= since and os.path.isfile(f := folder / name / "data.parquet"):
            out[month] = f
    return out


def legacy_user_file(warehouse: Path, table: Table, user_id: str) -> Path:
    """Where an older kenang kept a ``user_month`` table's rows of one user in one file: <table>/user_id=<u>/data.parquet
    (read until a run splits it by month)."""
    return table_dir(warehouse, table) / f"user_id={user_id}" / "data.parquet"


def read_user_months(warehouse: Path, table: Table, user_id: str) -> pa.Table:
    """A ``user_month`` table's rows of one user, month by month; an older kenang's one file while it is there (it
    holds every row until a run has split it by month, and only then goes)."""
    legacy = legacy_user_file(warehouse, table, user_id)
    if legacy.is_file():
        try:
            return read_file(legacy, table)
        except FileNotFoundError:  # a run split it meanwhile
            pass
    files = list(user_month_files(warehouse, table, user_id).values())
    return pa.concat_tables([read_file(f, table) for f in files]) if files else table.schema.empty_table()


#: A ``user_month`` table's files: never an older kenang's one file per user beside them (``legacy_user_file``).
_USER_MONTH_FILES = "user_id=*/month=*/*.parquet"


def glob(warehouse: Path, table: Table) -> str:
    if table.layout == "single":
        return str(single_file(warehouse, table))
    return str(table_dir(warehouse, table) / (_USER_MONTH_FILES if table.layout == "user_month" else "**/*.parquet"))


def has_files(warehouse: Path, table: Table) -> bool:
    if table.layout == "single":
        return single_file(warehouse, table).is_file()
    root = table_dir(warehouse, table)
    found = root.glob(_USER_MONTH_FILES) if table.layout == "user_month" else root.rglob("*.parquet")
    return root.is_dir() and any(p.suffix == ".parquet" and not p.name.startswith(TMP_PREFIX) for p in found)


def parquet_bytes(data: pa.Table, table: Table) -> bytes:
    """The bytes of one Parquet file of ``table``, cast to its declared schema (a pool worker may make them)."""
    data = data.select(table.schema.names).cast(table.schema)
    sink = pa.BufferOutputStream()
    pq.write_table(data, sink, **_PARQUET_OPTS)
    return sink.getvalue().to_pybytes()


def parquet_bytes_of(batches: Iterable[pa.Table], table: Table) -> bytes:
    """``parquet_bytes`` of the batches' rows, a row group a batch, each batch let go once written.

    One batch gives the bytes ``parquet_bytes`` gives for it."""
    sink = pa.BufferOutputStream()
    with pq.ParquetWriter(sink, table.schema, **_PARQUET_OPTS) as writer:
        for data in batches:
            writer.write_table(data.select(table.schema.names).cast(table.schema))
    return sink.getvalue().to_pybytes()


def write_file(path: Path, data: pa.Table | bytes, table: Table) -> None:
    """Write one Parquet file atomically (a table, or ``parquet_bytes`` of one), and record its sha256."""
    blob = data if isinstance(data, bytes) else parquet_bytes(data, table)

    def write(tmp: Path) -> None:
        tmp.write_bytes(blob)
        _record_checksum(path, hashlib.sha256(blob).hexdigest())

    try:
        atomic_write(path, write)
    except OSError as exc:
        raise io_error(f"writing {path}", exc) from exc


# --- checksums: a partition changed behind kenang's back is caught --------------------
#
# Every Parquet file kenang writes gets a hidden sidecar ``.<name>.sha256`` beside it,
# holding the sha256 of the bytes kenang wrote. The sidecar is replaced *before* the
# Parquet file (both atomically), and keeps the previous checksum too, so a crash
# between the two leaves a pair that still verifies: the file is the previous bytes,
# or the new ones. ``verify`` re-hashes every file against its sidecar, and a backfill
# rewrites a partition whose bytes no longer match.


def checksum_file(path: Path) -> Path:
    return path.with_name(f".{path.name}.sha256")


def recorded_checksums(path: Path) -> tuple[str, ...]:
    """The sha256s a Parquet file may hold: the one kenang wrote, and the one before it."""
    try:
        info = json.loads(checksum_file(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ()
    return tuple(v for v in (info.get("sha256"), info.get("previous")) if isinstance(v, str))


def _record_checksum(path: Path, sha: str) -> None:
    current = recorded_checksums(path)
    body = {"sha256": sha, "previous": current[0] if current else None}
    atomic_write_bytes(checksum_file(path), (json.dumps(body) + "\n").encode())


def intact(path: Path) -> bool:
    """Whether a Parquet file exists and holds bytes kenang wrote."""
    try:
        return path.is_file() and sha256_file(path) in recorded_checksums(path)
    except OSError:
        return False


def changed_behind_our_back(path: Path) -> bool:
    """A Parquet file with a recorded checksum that its bytes no longer match (none recorded: not changed)."""
    try:
        shas = recorded_checksums(path)
        return bool(shas) and path.is_file() and sha256_file(path) not in shas
    except OSError:
        return False


def accept_bytes(path: Path) -> None:
    """Record a Parquet file's current bytes as the ones kenang wrote (``kenang verify --accept``)."""
    _record_checksum(path, sha256_file(path))


def record_missing_checksums(warehouse: Path) -> int:
    """Give every Parquet file without a sidecar one, trusting its bytes as they are; returns how many.

    For a home made before kenang kept checksums: ``kenang init`` calls it once, with
    the home as it stands. A file that has a sidecar is never touched.
    """
    n = 0
    for p in parquet_files(warehouse):
        if not checksum_file(p).exists():
            _record_checksum(p, sha256_file(p))
            n += 1
    return n


def parquet_files(warehouse: Path) -> list[Path]:
    """Every Parquet file under the warehouse with a checksum sidecar of its own, sorted.

    Temporaries are left out, and so are recall packs (``pack_manifest``): a segment's
    manifest holds the sha256 of each of its files.
    """
    if not warehouse.is_dir():
        return []
    packs = warehouse / "compact" / "recall_pack"
    return sorted(
        p
        for p in warehouse.rglob("*.parquet")
        if not p.name.startswith(".") and p.is_file() and not p.is_relative_to(packs)
    )


def write_partition(
    warehouse: Path, table: Table, data: pa.Table | bytes, day: dt.date, user_id: str | None = None, name: str = "data"
) -> Path:
    path = partition_file(warehouse, table, day, user_id, name)
    drop_compacts(warehouse, table, user_id, day)
    write_file(path, data, table)
    return path


def delete_partition(warehouse: Path, table: Table, day: dt.date, user_id: str) -> bool:
    """Remove one (user, day) partition and its checksum; returns whether there was one."""
    path = partition_file(warehouse, table, day, user_id)
    drop_compacts(warehouse, table, user_id, day)
    existed = path.is_file()
    path.unlink(missing_ok=True)
    checksum_file(path).unlink(missing_ok=True)
    if existed:
        fsync_dir(path.parent)
    return existed


_scratch: tuple[int, duckdb.DuckDBPyConnection] | None = None
_scratch_lock = threading.Lock()


def scratch() -> duckdb.DuckDBPyConnection:
    """A cursor on this process's one in-memory DuckDB, for reading Parquet files; close it after use.

    Opening a DuckDB connection costs about 15 ms, a cursor on an open one next to
    nothing. No file contents or metadata are cached, so a file replaced since is read
    as it is now. (The locked connections of ``kenang sql`` and ``analyze`` are their own.)
    """
    global _scratch
    with _scratch_lock:
        if _scratch is None or _scratch[0] != os.getpid():
            # parquet_metadata_cache is off by default too (it needs the extension loaded to be set)
            con = duckdb.connect(":memory:", config={"enable_external_file_cache": False})
            _scratch = (os.getpid(), con)
        return _scratch[1].cursor()


def read(warehouse: Path, table: Table, where: str = "", params: Iterable = ()) -> pa.Table:
    """Rows of a table (optionally filtered by a SQL WHERE clause) as pyarrow, typed as declared."""
    if not has_files(warehouse, table):
        return table.schema.empty_table()
    if table.layout == "single" and not where:  # one file: Arrow reads it without a DuckDB connection's cost
        return read_file(single_file(warehouse, table), table)
    hive = "true" if table.layout != "single" else "false"
    sql = (
        f"SELECT {', '.join(_quote(n) for n in table.schema.names)} FROM read_parquet(?, "
        f"hive_partitioning={hive}, union_by_name=true) {('WHERE ' + where) if where else ''}"
    )
    con = scratch()
    try:
        result = con.sql(sql, params=[glob(warehouse, table), *params]).to_arrow_table()
    finally:
        con.close()
    return _conform(result, table)


#: From this size on a Parquet file is read on Arrow's thread pool; a smaller one on the calling thread, since
#: for the small files kenang's tables are mostly made of the pool costs more than the read (a 140 KB file: 1 ms
#: on the calling thread, 2 to 40 ms through ``read_table``'s dataset layer and the pool).
THREADED_READ_BYTES = 16 * 2**20


def threaded(path: Path) -> bool:
    """Whether to read a Parquet file on Arrow's thread pool (``THREADED_READ_BYTES``)."""
    try:
        return os.path.getsize(path) >= THREADED_READ_BYTES
    except OSError:
        return True  # the read itself says what is wrong


def read_file(path: Path, table: Table) -> pa.Table:
    """One Parquet file of a table, typed as declared (missing newer columns read as NULL)."""
    return conformed(pq.ParquetFile(path, pre_buffer=True).read(use_threads=threaded(path)), table)


def conformed(data: pa.Table, table: Table) -> pa.Table:
    """``data`` with ``table``'s columns, in order and typed as declared: a missing newer column reads as NULL."""
    for f in table.schema:
        if f.name not in data.column_names:
            data = data.append_column(f.name, pa.nulls(data.num_rows, f.type))
    return _conform(data.select(table.schema.names), table)


def read_columns(path: Path, table: Table, names: Iterable[str]) -> dict[str, list]:
    """Some columns of one Parquet file of a table, as Python lists typed as declared (a missing newer
    column reads as NULLs); far cheaper than ``read_file(...).to_pylist()`` when a reader needs a few."""
    names = list(names)
    pf = pq.ParquetFile(path)
    have = [n for n in names if n in set(pf.schema_arrow.names)]
    return _typed_lists(pf.read(columns=have, use_threads=threaded(path)), table, names)


def _typed_lists(data: pa.Table | pa.RecordBatch, table: Table, names: list[str]) -> dict[str, list]:
    """``names`` of ``data`` as Python lists typed as ``table`` declares them; a column ``data`` lacks reads as
    NULLs."""
    out = {}
    for n in names:
        want = table.schema.field(n).type
        col = data.column(n) if n in data.schema.names else pa.nulls(data.num_rows, want)
        out[n] = (col.cast(want) if col.type != want else col).to_pylist()
    return out


def num_rows(path: Path) -> int:
    """The rows of one Parquet file, from its footer."""
    return pq.ParquetFile(path).metadata.num_rows


def iter_columns(path: Path, table: Table, names: Iterable[str], batch_rows: int) -> Iterator[dict[str, list]]:
    """``read_columns`` of one Parquet file, ``batch_rows`` rows at a time."""
    names = list(names)
    pf = pq.ParquetFile(path)
    have = [n for n in names if n in set(pf.schema_arrow.names)]
    for batch in pf.iter_batches(batch_size=batch_rows, columns=have):
        yield _typed_lists(batch, table, names)


def _conform(data: pa.Table, table: Table) -> pa.Table:
    # DuckDB hands back TIMESTAMPTZ and DATE with its own metadata; cast to the declaration.
    return data.cast(table.schema) if data.schema != table.schema else data


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


# --- compact copies (schemas.tables.COMPACTS) ----------------------------------------


def compact_folder(warehouse: Path, name: str, user_id: str) -> Path:
    """A user's copies of a table: compact/<name>/user_id=U/."""
    return warehouse / "compact" / name / f"user_id={user_id}"


def compact_file(warehouse: Path, name: str, user_id: str, month: str) -> Path:
    """A user's copy of one month: compact/<name>/user_id=U/month=YYYY-MM.parquet."""
    return compact_folder(warehouse, name, user_id) / f"month={month}.parquet"


def pack_folder(warehouse: Path, user_id: str) -> Path:
    """A user's recall pack (see flows.store.recall_pack): compact/recall_pack/user_id=U/."""
    return warehouse / "compact" / "recall_pack" / f"user_id={user_id}"


def pack_manifest(warehouse: Path, user_id: str, month: str) -> Path:
    """The manifest of one month's segment of a user's recall pack: .../user_id=U/month=YYYY-MM.json."""
    return pack_folder(warehouse, user_id) / f"month={month}.json"


def drop_pack(warehouse: Path, user_id: str, month: str | None = None) -> None:
    """Remove a month's segment of a user's recall pack (every month's, and every base, without ``month``), by its
    manifest, durably, before anything it was made from changes."""
    base = pack_folder(warehouse, user_id)
    found = [pack_manifest(warehouse, user_id, month)] if month else list(base.glob("month=*.json"))
    if month is None and base.is_dir():
        found += [p for p in base.iterdir() if p.name.startswith(".month=") and p.name.endswith(".json")]
    gone = False
    for m in found:
        if m.exists():
            m.unlink()
            gone = True
    if gone:
        fsync_dir(base)


def pack_base(warehouse: Path, user_id: str, month: str) -> tuple[Path, Path]:
    """A month's segment set aside when a night's new day came (its manifest, renamed) and the list of the days
    added since: hidden names beside the manifests (see ``flows.store.recall_pack``)."""
    folder = pack_folder(warehouse, user_id)
    return folder / f".month={month}.base.json", folder / f".month={month}.added.json"


def pack_added_days(warehouse: Path, user_id: str, month: str) -> set[dt.date] | None:
    """The days added to a month since its segment was set aside; None if that list cannot be read."""
    return _added_days(pack_base(warehouse, user_id, month)[1])


def _added_days(path: Path) -> set[dt.date] | None:
    """A list of the days added to a month since its copy or segment was set aside; None if it cannot be read."""
    try:
        return {dt.date.fromisoformat(d) for d in json.loads(path.read_text(encoding="utf-8"))}
    except (OSError, ValueError, TypeError):
        return None


def _write_added_days(path: Path, days: Iterable[dt.date]) -> None:
    atomic_write_bytes(path, json.dumps(sorted({d.isoformat() for d in days})).encode())


def drop_pack_base(warehouse: Path, user_id: str, month: str) -> bool:
    """Remove a month's set-aside segment (its manifest and list of added days; the files go with the next tidy of
    the pack); whether there was one."""
    gone = False
    for p in pack_base(warehouse, user_id, month):
        if p.exists():
            p.unlink()
            gone = True
    return gone


def _set_aside_pack(warehouse: Path, user_id: str, day: dt.date, keep: bool) -> None:
    """Take a month's segment out of use before a memory_chunks partition of ``day`` changes. ``keep``: the day comes
    after every day the month's copy holds (a night's new day), so the segment is kept aside as the month's base
    with the days added since, and the next run makes a segment of those days alone beside it; otherwise the
    segment and any base go outright (the files no manifest names go with the next tidy)."""
    month = f"{day:%Y-%m}"
    manifest = pack_manifest(warehouse, user_id, month)
    base, added = pack_base(warehouse, user_id, month)
    if not manifest.exists() and not base.exists() and not added.exists():
        return
    if keep and manifest.exists():
        drop_pack_base(warehouse, user_id, month)  # a base a failed run left beside its segment: never paired anew
        _write_added_days(added, [day])
        os.replace(manifest, base)
    elif keep and base.exists() and (days := _added_days(added)) is not None:
        if day not in days:
            _write_added_days(added, {*days, day})
    else:
        manifest.unlink(missing_ok=True)
        drop_pack_base(warehouse, user_id, month)
    fsync_dir(manifest.parent)


def drop_compacts(warehouse: Path, table: Table, user_id: str | None, day: dt.date | None) -> None:
    """Take the user's compact copies of ``table`` for the day's month out of use before one of its partitions changes.

    Done durably first, so that whatever happens next (a crash, power loss) a copy
    that exists never holds older rows than the partitions; ``flows.store.compact``
    makes it again at the end of a run. A day after every day the copy holds (a
    night's new day) keeps the copy aside as the month's *base*, with the days added
    since (``compact_base``): readers read the base and those days' partitions, and the
    next copy is made of them (once they outgrow the base, in a user's newest month), so
    a night appends its day instead of reading the month again. A day the copy
    already holds (a reload, a forget) removes the copy and any base outright: no file
    keeps rows a partition no longer has. The month's recall pack segment follows its
    memory_chunks copy (``_set_aside_pack``): kept aside as its base, or removed.
    """
    if user_id is None or day is None:
        return
    for c in COMPACTS.values():
        if c.source.name == table.name:
            path = compact_file(warehouse, c.name, user_id, f"{day:%Y-%m}")
            base, added = compact_base(path)
            kept = False
            if path.exists():
                if base.exists() or added.exists():  # a base a failed run left beside its copy: never paired anew
                    drop_compact_base(path)
                    fsync_dir(path.parent)
                if holds_only_days_before(path, day):
                    _write_added_days(added, [day])
                    os.replace(path, base)  # first: a crash before its checksum follows leaves a base not intact
                    os.replace(checksum_file(path), checksum_file(base))
                    kept = True
                else:
                    path.unlink()
                    checksum_file(path).unlink(missing_ok=True)
                    drop_compact_base(path)
                fsync_dir(path.parent)
            elif base.exists():
                days = _added_days(added)
                if days is not None and holds_only_days_before(base, day):
                    if day not in days:
                        _write_added_days(added, {*days, day})
                    kept = True
                else:
                    drop_compact_base(path)
                    fsync_dir(path.parent)
            if c.name == "memory_chunks":  # the month's segment of the user's recall pack follows its copy
                _set_aside_pack(warehouse, user_id, day, kept)


def compact_base(path: Path) -> tuple[Path, Path]:
    """A copy's base (the copy set aside when a new day came) and the list of the days added since: hidden names, so
    no glob of the warehouse lists them."""
    stem = path.name.removesuffix(".parquet")
    return path.with_name(f".{stem}.base.parquet"), path.with_name(f".{stem}.added.json")


def compact_added_days(path: Path) -> set[dt.date] | None:
    """The days added to a copy's month since its base was set aside; None if that list cannot be read."""
    return _added_days(compact_base(path)[1])


def drop_compact_base(path: Path) -> None:
    """Remove a copy's base and its list of added days."""
    base, added = compact_base(path)
    base.unlink(missing_ok=True)
    checksum_file(base).unlink(missing_ok=True)
    added.unlink(missing_ok=True)


def holds_only_days_before(path: Path, day: dt.date) -> bool:
    """Whether every row of a copy (sorted by user and date) is dated before ``day``, by its footer alone."""
    try:
        last = None
        for stats, _ in column_stats(path, "date"):
            if stats is None or not stats.has_min_max:
                return False
            last = stats.max if last is None else max(last, stats.max)
        return last is not None and last < day
    except (OSError, ValueError, pa.ArrowException):
        return False


def column_stats(path: Path, name: str) -> list[tuple[pq.Statistics | None, int]]:
    """(a flat column's statistics, the row group's rows) for each row group of a Parquet file, from its footer
    alone; no statistics where the file has none for it, or lacks the column."""
    meta = pq.ParquetFile(path).metadata
    out = []
    for i in range(meta.num_row_groups):
        group = meta.row_group(i)
        column = next((c for c in map(group.column, range(group.num_columns)) if c.path_in_schema == name), None)
        out.append((column.statistics if column is not None else None, group.num_rows))
    return out
