"""Compact copies: one file per user and month of what whole-history readers read (``schemas.tables.COMPACTS``).

A year of one user's summaries is 365 small partitions; opening them all costs most of
a cold ``kenang analyze``. So at the end of every run (and of ``kenang forget``) each
(user, month) copy that is missing is made from that month's partitions, in one Parquet
file, written atomically with its checksum like every warehouse file; only a user's newest
month may wait, as a base and a few new days (below).

Freshness is by construction, with no clock and no digest to compare:
``warehouse.write_partition`` and ``delete_partition`` remove the user's copy of the
day's month, durably, before they touch a source partition. So a copy that exists was
made after the last change to its partitions, a crash in between included (the copy is
then simply missing, and readers read that month's partitions, or its base and the days
added after it, until a run makes it). A copy whose bytes changed behind kenang's back is caught by ``kenang verify`` and
made again by a backfill.

A night's new day is appended, not merged in: the month's copy is set aside as its
*base* with the list of days added after it, readers read the base and those days'
partitions, and a run's end makes the copy again only once they outgrow the base
(``KEEP_PARTS``, ``_keeps_parts``), once a month of recall chunks is big
(``WHOLE_MONTH_BYTES``), or once the month is no longer the user's newest.
"""

from __future__ import annotations

import bisect
import datetime as dt
import itertools
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
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
    """The user's source partitions of one month (``YYYY-MM``), sorted."""
    return _month_files(warehouse.table_dir(wh, c.source), user, month)


def _month_files(root: Path, user: str, month: str) -> list[Path]:
    """The user's partitions of one month under ``root``, in day order: each of the month's days is looked for, so
    the table's day folders (thousands, after years) are never listed."""
    try:
        first = dt.date.fromisoformat(f"{month}-01")
    except ValueError:  # not a YYYY-MM (a stray day folder's name made it): the folders of that name, as listed
        return [
            f
            for d in warehouse.subfolders(root, "date=")
            if d.removeprefix("date=")[:7] == month
            and os.path.isfile(f := root / d / f"user_id={user}" / "data.parquet")
        ]
    days = (first + dt.timedelta(days=n) for n in range(31))
    return [
        f
        for day in days
        if day.month == first.month
        and os.path.isfile(f := root / f"date={day.isoformat()}" / f"user_id={user}" / "data.parquet")
    ]


def build(wh: Path, c: Compact, user: str, month: str) -> pa.Table | None:
    """The rows of the user's partitions of that month, sorted, with the copy's columns; None if none."""
    files = month_parts(wh, c, user, month)
    return _read(files, c) if files else None


def _read(files: list[Path], c: Compact) -> pa.Table:
    # user_id, date first: ORDER BY ALL is day order, and total
    return _sorted_month(c, files, None, set())


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
    """Make every missing copy (a newest month's may wait: ``_keeps_parts``); returns how many were written.

    A copy whose partitions are all gone was removed with the last of them. With
    ``check`` (a backfill), a copy whose bytes are not the ones kenang wrote (``kenang
    verify`` reports it) is made again too, and every partition folder is listed;
    otherwise only the months without a copy are looked into (``_missing``), so a
    night's look costs a listing of each user's copies, not a stat per day. A month whose copy
    was set aside as its base for a new day (``warehouse.drop_compacts``) is made from
    that base and the added days' partitions; a user's newest month keeps its base and
    those partitions as they are while they are few and small beside it (``_keeps_parts``),
    and readers read them together (``user_months``), so a night writes no copy of a month
    for its day. ``map_items`` (the run's process pool,
    ``flows.stages.pool.pure_imap``) makes the copies' bytes on every core; they are
    written here, in order.
    """
    todo = []
    known = None if check else ledger.user_months(wh)  # read once for the three copies
    newest = {user: month for user, month in known or ()}  # each user's newest month (the ledger's are in order)
    kept: set[Path] = set()
    for c in COMPACTS.values():
        found = parts_of(wh, c).items() if check else _missing(wh, c, known)
        for (user, month), files in found:
            path = warehouse.compact_file(wh, c.name, user, month)
            if path.is_file() and (not check or warehouse.intact(path)):
                continue
            args = _appended(c, path, files)
            if args is not None and newest.get(user) == month and _keeps_parts(args):
                kept.add(path)  # the base and its days' partitions are the month's copy until they outgrow it
                continue
            todo.append((c, user, path, args or (c.name, files)))
    items = [args for *_, args in todo]
    made = map_items(copy_bytes, items, nbytes=_nbytes(items)) if map_items else _in_process(copy_bytes, items)
    for (c, user, path, args), data in zip(todo, made, strict=False):
        if not isinstance(data, bytes):  # a worker's failure: raised here, as in one process
            raise ArchiveError(f"making the compact copy {path}: {data}")
        if c.source.name == "memory_chunks":
            month = path.stem.removeprefix("month=")
            warehouse.drop_pack(wh, user, month)  # made from what this copy replaces
            if len(args) < 3:  # not made from its base (none, or not the bytes kenang set aside): nor is the segment
                warehouse.drop_pack_base(wh, user, month)
        warehouse.write_file(path, data, c.table)
        warehouse.drop_compact_base(path)  # at once: a later copy's failure leaves no base beside this copy
        faults.checkpoint("compact.written")
    _drop_bases(wh, kept)
    return len(todo)


#: A newest month's base keeps the days added after it beside it, as their partitions, while they are fewer than
#: this and hold fewer rows than the base: then the copy is made of them all. So a night adds its day's
#: partition to what readers read instead of writing the month again; a month's days are written into its copy
#: a few times a month (the base about doubles each time), and a reader opens at most this many more files.
KEEP_PARTS = 8


def _keeps_parts(args: tuple) -> bool:
    """Whether a copy's base and added days (``_appended``'s arguments) stay as they are at a run's end: every
    added day after the base's days, fewer than ``KEEP_PARTS`` of them, and fewer rows in their partitions than
    in the base (rows, not bytes: a partition holds all of its table's columns, a copy some), by their footers.
    A month of recall chunks of ``WHOLE_MONTH_BYTES`` or more is made into its copy, as before: the recall pack
    streams a big month from its copy, and would sort a base and its days in memory."""
    name, files, (base, added) = args
    if not 0 < len(files) < KEEP_PARTS or not warehouse.holds_only_days_before(base, min(added)):
        return False
    if name == "memory_chunks" and total_size([base, *files]) >= WHOLE_MONTH_BYTES:  # its copy, streamed
        return False
    try:
        return sum(_rows(f) for f in files) < _rows(base)
    except (OSError, ValueError, pa.ArrowException):
        return False


def _rows(path: Path) -> int:
    return pq.ParquetFile(path).metadata.num_rows


def _nbytes(items: list[tuple]) -> int:
    """The bytes ``copy_bytes`` reads for these copies: their partitions' and bases' sizes."""
    return total_size(f for _, files, *rest in items for f in [*files, *(rest[0][:1] if rest else ())])


def _missing(wh: Path, c: Compact, known: list[tuple[str, str]] | None) -> Iterator[tuple[tuple[str, str], list[Path]]]:
    """((user, month), partitions) for each month of each user with partitions of ``c``'s source and no copy.

    The months are the ledger's (one folder per user and month): a partition is written only for a day the
    ledger holds (or is about to: that day is loaded again by the next run), so the table's day folders,
    thousands after years, are not listed. ``known``: ``ledger.user_months``; a ledger that cannot say (None) has
    them listed.
    """
    root = warehouse.table_dir(wh, c.source)
    if known is None:
        yield from _missing_listed(wh, c)
        return
    copies: dict[str, set[str]] = {}  # each user's copies, listed once: not a stat (and a path) per month
    for user, month in known:
        if not USER_ID_RE.match(user):
            continue
        if user not in copies:
            copies[user] = warehouse.file_names(warehouse.compact_folder(wh, c.name, user))
        if f"month={month}.parquet" in copies[user]:
            continue
        files = _month_files(root, user, month)
        if files:
            yield (user, month), files


def _missing_listed(wh: Path, c: Compact) -> Iterator[tuple[tuple[str, str], list[Path]]]:
    """``_missing`` by a listing of the table's day folders; the users are the ledger's and those with copies."""
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
    found = _set_aside(path, files)
    if found is None:
        return None
    base, added, new = found
    return c.name, new, (base, sorted(added))


def _set_aside(copy: Path, files: list[Path]) -> tuple[Path, set[dt.date], list[Path]] | None:
    """A copy's base, the days added since it was set aside, and those days' partitions among ``files``; None
    when it has no base, its list of days cannot be read, or the base is not the bytes kenang set aside."""
    base, _ = warehouse.compact_base(copy)
    added = warehouse.compact_added_days(copy) if os.path.isfile(base) else None
    if added is None or not warehouse.intact(base):
        return None
    days = {f"date={d.isoformat()}" for d in added}
    return base, added, [f for f in files if f.parent.parent.name in days]


def _drop_bases(wh: Path, kept: Iterable[Path] = ()) -> None:
    """Remove every base left but those of the copies in ``kept`` (``_keeps_parts``): once the copies are made,
    every other was made from its base or had no partitions left."""
    keep = {b for path in kept for b in warehouse.compact_base(path)}
    for c in COMPACTS.values():
        root = wh / "compact" / c.name
        for user_dir in warehouse.subfolders(root, "user_id="):
            folder = root / user_dir
            gone = [
                n
                for n in _names(folder)
                if n.startswith(".month=") and n.endswith((".base.parquet", ".added.json")) and folder / n not in keep
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


#: A copy made from this many bytes of files or more is made a day at a time (``_in_order``); below, in one
#: DuckDB sort of the month, which costs less for the many small months of a history.
WHOLE_MONTH_BYTES = 16 * 2**20


def copy_bytes(args: tuple) -> bytes:
    """The Parquet bytes of one copy: (its name, its partitions), or (its name, the added days' partitions, (its
    base, those days)); writes nothing, so a pool worker may make them.

    The copy's order is ``ORDER BY ALL`` with user and date first. A big month (``WHOLE_MONTH_BYTES``) is made
    a day at a time, since that order is each day's rows sorted on their own, a day after another: the base's
    rows of its other days (already in that order), and each partition sorted (``_sorted_day``), so it is never
    held whole. A small month with a base and only days after the base's (a night's new day) is the base's rows
    read as they are and then the days' (``_after_base``), with no sort of the month. Rows are written
    ``row_group_rows`` at a time (the copy's declaration), and typed as the copy declares (an older partition's
    missing newer column reads as NULL)."""
    name, files, *rest = args
    c = COMPACTS[name]
    base, added = rest[0] if rest else (None, ())
    if total_size([*files, *([base] if base is not None else [])]) < WHOLE_MONTH_BYTES:
        after = _after_base(c, files, base, added) if base is not None else None
        if after is not None:
            rows: Iterable[pa.Table] = after
        else:
            whole = _read(files, c) if base is None else _sorted_month(c, files, base, set(added))
            rows = [warehouse.conformed(whole, c.table)]
    else:
        rows = _in_order(c, files, base, {d.isoformat() for d in added})
    return warehouse.parquet_bytes_of(rebatched(rows, c.row_group_rows), c.table)


def _after_base(c: Compact, files: list[Path], base: Path, added: Sequence[dt.date]) -> list[pa.Table] | None:
    """The copy's rows as its base's rows and then the added days' (each day sorted on its own), when every added
    day comes after the base's last day, as a night's new day does: the base is in the copy's order already, so
    the month is appended to, not sorted again. None when a day falls among the base's days, by its footer
    (sort the month)."""
    if added and not warehouse.holds_only_days_before(base, min(added)):
        return None
    pf = pq.ParquetFile(base)
    kept = warehouse.conformed(pf.read(columns=_present(pf, c.columns), use_threads=False), c.table)
    days = sorted((f.parent.parent.name.removeprefix("date="), f) for f in files)
    return [kept, *(t for _, f in days for t in _sorted_day(c, f))]


def _sorted_month(c: Compact, files: list[Path], base: Path | None, added: set[dt.date]) -> pa.Table:
    """The copy's rows, sorted whole in DuckDB: the base's rows of days not in ``added``, and the partitions'."""
    try:
        return _sorted_sql(c.columns, files, base, added)
    except duckdb.BinderException:  # a column no file of the month has yet (older partitions): read as NULL
        have = {n for f in [*files, *([base] if base is not None else [])] for n in pq.read_schema(f).names}
        return _sorted_sql([n for n in c.columns if n in have], files, base, added)


def _sorted_sql(columns: Sequence[str], files: list[Path], base: Path | None, added: set[dt.date]) -> pa.Table:
    cols = ", ".join(f'"{n}"' for n in columns)
    if base is None:
        return scan(files, cols, "ORDER BY ALL")
    # The base's rows of the other days are those days' partitions' rows: one sort of all gives a whole build's order.
    sql = f"SELECT {cols} FROM read_parquet(?, hive_partitioning=false) WHERE NOT list_contains(?, date)"
    params: list = [[str(base)], sorted(added)]
    if files:
        sql += f" UNION ALL SELECT {cols} FROM read_parquet(?, hive_partitioning=false, union_by_name=true)"
        params.append([str(f) for f in files])
    con = warehouse.scratch()
    try:
        return con.sql(sql + " ORDER BY ALL", params=params).to_arrow_table()
    finally:
        con.close()


def _in_order(c: Compact, files: list[Path], base: Path | None, added: set[str]) -> Iterator[pa.Table]:
    """The copy's rows in its order, a few at a time: the base's rows of days not in ``added`` and the
    partitions' rows, day by day."""
    days = sorted((f.parent.parent.name.removeprefix("date="), f) for f in files)
    if base is not None:
        pf = pq.ParquetFile(base)
        for batch in pf.iter_batches(batch_size=c.row_group_rows, columns=_present(pf, c.columns)):
            t = warehouse.conformed(pa.Table.from_batches([batch]), c.table)
            dates = [d.isoformat() for d in t["date"].to_pylist()]  # ascending: the base is a copy
            t = t.filter(pa.array([d not in added for d in dates]))
            dates = [d for d in dates if d not in added]
            while days and dates and days[0][0] <= dates[-1]:
                cut = bisect.bisect_left(dates, days[0][0])
                yield t.slice(0, cut)
                t, dates = t.slice(cut), dates[cut:]
                yield from _sorted_day(c, days.pop(0)[1])
            yield t
    for _, f in days:
        yield from _sorted_day(c, f)


def _present(pf: pq.ParquetFile, columns: Sequence[str]) -> list[str]:
    have = set(pf.schema_arrow.names)
    return [n for n in columns if n in have]


def _sorted_day(c: Compact, f: Path) -> Iterator[pa.Table]:
    """One day's partition in the copy's order, typed as the copy declares.

    Its rows are sorted by the copy's ``day_key`` (or its leading columns before the first list; a column the
    file lacks is NULL in every row, so it orders nothing). A copy of big rows (``row_group_rows`` below a
    million) reads the day a row group at a time, each once, held until the last of its rows is written: a day's
    rows are mostly in order already, so a big day is not held whole. A day with two rows alike on the key is
    sorted by every column, in DuckDB, as the whole copy once was."""
    pf = pq.ParquetFile(f)
    flat = itertools.takewhile(lambda n: not pa.types.is_nested(c.table.schema.field(n).type), c.columns)
    keys = _present(pf, c.day_key or list(flat))
    columns = _present(pf, c.columns)
    order = [(k, "ascending") for k in keys]
    threads = warehouse.threaded(f)
    key = pf.read(columns=keys, use_threads=threads) if keys else None
    perm = pc.sort_indices(key, order) if key is not None else None
    if key is None or perm is None or (len(keys) < len(c.columns) and _ties(key.take(perm))):
        yield from rebatched([warehouse.conformed(_read([f], c), c.table)], c.row_group_rows)
        return
    del key
    size = c.row_group_rows
    if pf.metadata.num_rows <= size or size >= WHOLE_DAY_ROWS:
        whole = pf.read(columns=columns, use_threads=threads).take(perm)
        yield from rebatched([warehouse.conformed(whole, c.table)], size)
        return
    perm = perm.to_numpy().astype(np.int64)
    starts = np.cumsum([0] + [pf.metadata.row_group(g).num_rows for g in range(pf.num_row_groups)])
    group = np.searchsorted(starts, perm, side="right") - 1  # each output row's row group
    last = np.zeros(pf.num_row_groups, dtype=np.int64)  # the last output batch that needs each row group
    np.maximum.at(last, group, np.arange(len(perm)) // size)
    held: dict[int, pa.Table] = {}
    for b, at in enumerate(range(0, len(perm), size)):
        want, groups = perm[at : at + size], group[at : at + size]
        parts, where = [], []
        for g in np.unique(groups).tolist():
            if g not in held:
                held[g] = pf.read_row_group(g, columns=columns, use_threads=threads)
            mine = np.flatnonzero(groups == g)
            parts.append(held[g].take(want[mine] - starts[g]))
            where.append(mine)
        got = pa.concat_tables(parts)
        yield warehouse.conformed(got.take(np.argsort(np.concatenate(where))), c.table)
        held = {g: t for g, t in held.items() if last[g] > b}


#: A copy whose row groups are this big (the Parquet writer's largest) has small rows: its days are read whole.
WHOLE_DAY_ROWS = 2**20


def _ties(keys: pa.Table) -> bool:
    """Whether two adjacent rows of a sorted table are alike on every column."""
    if keys.num_rows < 2:
        return False
    same = None
    for name in keys.column_names:
        col = keys[name].combine_chunks()
        a, b = col.slice(0, len(col) - 1), col.slice(1)
        eq = pc.or_kleene(pc.equal(a, b), pc.and_(pc.is_null(a), pc.is_null(b))).fill_null(False)
        same = eq if same is None else pc.and_(same, eq)
    return bool(pc.any(same).as_py())


def rebatched(tables: Iterable[pa.Table], size: int) -> Iterator[pa.Table]:
    """The tables' rows again, ``size`` rows a table (the last one fewer): the same rows make the same batches
    however they came."""
    held: list[pa.Table] = []
    n = 0
    for t in tables:
        if not t.num_rows:
            continue
        held.append(t)
        n += t.num_rows
        if n < size:
            continue
        whole = pa.concat_tables(held)
        cut = n - n % size
        for at in range(0, cut, size):
            yield whole.slice(at, size)
        held, n = [whole.slice(cut)], n - cut
    if n:
        yield pa.concat_tables(held)


def _in_process(fn: Callable, items: list) -> Iterator:
    return (fn(x) for x in items)


def sources(wh: Path, name: str, user: str, months: Iterable[str] | None = None) -> list[Path]:
    """What to read for one user's whole history (or for ``months`` of it, ``YYYY-MM``), month by month: the
    month's copy if it exists, else its base and the days added after it (``_with_base``), else its partitions (a
    month changed since the last run's end). ``user`` must match ``USER_ID_RE``."""
    return [f for _, files in user_months(wh, name, user, months) for f in files]


#: ``user_months`` over more months than this lists the user's copies instead of looking for each.
_LISTED_FROM = 4


def user_months(wh: Path, name: str, user: str, months: Iterable[str] | None = None) -> list[tuple[str, list[Path]]]:
    """(month, what to read of it) for each month in which the user has partitions of a copy's source, in order.

    A copy that exists holds exactly its month's partitions (it is dropped before any of
    them changes, or set aside as the base of a night's new days: ``_with_base``), so a month
    with a copy needs no listing of its days. The months are the ledger's (``ledger.user_months``: a partition is
    written only for a day the ledger holds), so this costs a listing of the user's ledger months and of their
    copies (a stat per month, for a few), not a listing of the table's day folders (thousands, after years), for
    every whole-history reader.
    """
    c = COMPACTS[name]
    root = warehouse.table_dir(wh, c.source)
    known = ledger.user_months(wh) if months is None else None
    if known is not None:  # the months the ledger holds days of (see ``_missing``)
        months = [m for u, m in known if u == user]
    # each month's day folders, listed; with ``months``, None: each day looked for, the history never listed
    by_month: dict[str, list[str] | None] = dict.fromkeys(months) if months is not None else {}
    if months is None:
        listed: dict[str, list[str]] = {}
        for date_dir in warehouse.subfolders(root, "date="):
            listed.setdefault(date_dir.removeprefix("date=")[:7], []).append(date_dir)
        by_month.update(listed)
    folder = warehouse.compact_folder(wh, name, user)
    # many months: the user's copies listed once, not a stat (and a path) each
    copies = warehouse.file_names(folder) if len(by_month) > _LISTED_FROM else None
    out = []
    for month, date_dirs in sorted(by_month.items()):
        copy = folder / f"month={month}.parquet"
        if copy.name in copies if copies is not None else copy.is_file():
            out.append((month, [copy]))
            continue
        files = (
            _month_files(root, user, month)
            if date_dirs is None
            else [f for d in date_dirs if os.path.isfile(f := root / d / f"user_id={user}" / "data.parquet")]
        )
        if files:
            out.append((month, _with_base(copy, files)))
    return out


def _with_base(copy: Path, files: list[Path]) -> list[Path]:
    """A month's partitions, or its copy's base (set aside for a night's new days) and the added days' partitions
    when it has one: the base holds the month's other days, as the copy did, so a reader opens the base and a few
    days (fewer than ``KEEP_PARTS`` between runs) where it would open a month of them."""
    found = _set_aside(copy, files)
    return files if found is None else [found[0], *found[2]]


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
    for attempt in (1, 2):
        files = sources(wh, name, user, months) if USER_ID_RE.match(user) else []
        if not files:
            return schema.empty_table()
        try:
            got = scan(
                files,
                ", ".join(f'"{n}"' for n in (columns or c.columns)),
                f"WHERE user_id = ? {'AND ' + where if where else ''} ORDER BY date",
                [user, *params],
            )
        except duckdb.IOException:  # a run made a copy (and removed its base) between the listing and the read
            if attempt == 2:
                raise
            continue
        return got.cast(schema) if got.schema != schema else got
    raise AssertionError("unreachable")


def read_copy(path: Path, columns: Sequence[str]) -> pa.Table:
    """Some columns of one copy, in its order and typed as a ``scan`` of it gives them (every field nullable, a
    list's items named ``l``), without the memory of a sort."""
    return _scanned(pq.ParquetFile(path).read(columns=list(columns), use_threads=warehouse.threaded(path)))


def iter_copy(path: Path, columns: Sequence[str], batch_rows: int) -> Iterator[pa.Table]:
    """``read_copy``'s rows a batch at a time: ``batch_rows`` rows (fewer where a row group ends), so a reader
    of a big month holds one batch of its text and terms, never the month's."""
    for batch in pq.ParquetFile(path, pre_buffer=False, buffer_size=1 << 20).iter_batches(
        batch_size=batch_rows, columns=list(columns), use_threads=False
    ):
        yield _scanned(pa.Table.from_batches([batch]))


def _scanned(data: pa.Table) -> pa.Table:
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
