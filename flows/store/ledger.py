"""The day ledger and the runs table: what kenang did, and to which (user, day).

- ``days`` holds, per (user, day), the last load outcome (``loaded`` or ``failed``
  with a reason) and the archive fingerprint that load saw. A day is *missing* when
  the archive holds files for it but the ledger has no load of exactly those files.
  The nightly flow, ``backfill --only-missing`` and ``kenang status`` all read this
  one definition (``day_states``).
- ``days`` is kept by user and month (``days/user_id=<u>/month=YYYY-MM/data.parquet``):
  a write rewrites the months its rows fall in, each file atomically with its checksum,
  so a night's write costs its own month, whatever the history. A crash between two
  months' files leaves each file whole: the first holds its new rows, the second its
  old ones, and the rows not yet written are written again by the next run (a day whose
  outcome is not in the ledger is still pending or missing). Readers of a process keep
  each month's rows until its file is replaced (by its inode, size and mtime), so the
  many reads of one night convert a month once.
- A process's first read does not open every month file: at the end of a run,
  ``refresh_history`` gathers the rows of the months before last month (which a night
  no longer writes) into one Arrow file, ``warehouse/_ledger_history.arrow`` (outside
  ``days/``, so the ``days`` view never reads it twice), whose metadata
  records each month file's sha256. A reader takes a month's rows from it while that
  month file's recorded checksum is still the one it was made from, and reads the month
  file itself otherwise (a backfill or a forget rewrote it since); so a process's first
  full read costs the history file, a checksum per month and the recent months. A ledger of one file
  (``days.parquet``, before this layout) is read as it is, under the months, and split into months by the
  next run (``migrate``) before that file goes.
- A night need not read the older months at all: the history file also keeps a caller's note of each month
  (``Notes``: for the stages, whether anything in it is left to do, its loaded days and its MEMORY_INDEX
  digests; ``flows.stages.plan.Night``). ``Ledger`` reads a month's rows only when one is asked for, and gives
  the notes of the months whose file is still the one the note was made from.
- ``runs`` gets one file per run, written as ``running`` when it starts and replaced
  when it ends. A ``running`` row whose lock is free was interrupted.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import secrets
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from flows.store import faults, warehouse
from flows.store.fsio import atomic_write_bytes, fsync_dir
from schemas.tables import ARCHIVE_FILES, DAYS, RUNS
from transforms.ids import fingerprint

DayKey = tuple[str, dt.date]


def new_run_id(now: dt.datetime) -> str:
    """Sortable and unique: UTC start time plus 6 random hex digits."""
    return f"{now.astimezone(dt.UTC):%Y%m%dT%H%M%SZ}-{secrets.token_hex(3)}"


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


# --- days -----------------------------------------------------------------------


_LEGACY = "days.parquet"  # the ledger before it was kept by month: read, then split by ``migrate``
_HISTORY = "_ledger_history.arrow"  # the older months' rows in one file (``refresh_history``), in the warehouse
_HISTORY_KEY = b"kenang.ledger.months"  # its metadata: month file (relative to days/) -> sha256 it was made from
_NOTES_KEY = b"kenang.ledger.notes"  # and {"basis": Notes.basis, "months": {month file: its note}}
_cache: dict[Path, tuple[tuple[int, int, int], dict[DayKey, dict]]] = {}
_cache_lock = threading.Lock()


def _month_file(wh: Path, user: str, month: str) -> Path:
    return warehouse.user_month_file(wh, DAYS, user, month)


_held: dict[Path, list[Path] | None] = {}  # warehouse -> its month files, in a run of this process (``held``)


@contextmanager
def held(wh: Path) -> Iterator[None]:
    """While this process holds the home's run lock (``flows.pipeline.pipeline_run``): no other process writes this
    ledger and no month file is ever removed, so the month files are listed once, and this process's writes add
    theirs (``_write_month``). A night asks for them a dozen times. What this process learned of the checksum files
    before it held the lock is forgotten (``_recorded``). A scope inside another for the same warehouse is the
    outer one's."""
    with _cache_lock:
        if wh in _held:
            inner = True
        else:
            inner = False
            _held[wh] = None
            _recorded_cache.clear()  # another process may have written the ledger before this one took the lock
    try:
        yield
    finally:
        if not inner:
            with _cache_lock:
                _held.pop(wh, None)


def month_files(wh: Path) -> list[Path]:
    """Every month file of the ledger, in (user, month) order."""
    with _cache_lock:
        kept = _held.get(wh)
    if kept is not None:
        return list(kept)
    root = warehouse.table_dir(wh, DAYS)
    out = []
    for user_dir in warehouse.subfolders(root, "user_id="):
        folder = os.path.join(root, user_dir)
        for month_dir in warehouse.subfolders(Path(folder), "month="):
            f = os.path.join(folder, month_dir, "data.parquet")  # os.path: a night lists these many times
            if os.path.isfile(f):
                out.append(Path(f))
    with _cache_lock:
        if wh in _held:
            _held[wh] = list(out)
    return out


def user_months(wh: Path) -> list[tuple[str, str]] | None:
    """(user, ``YYYY-MM``) of every month file of the ledger, in order: the months in which each user has days
    (a partition is written only for a day the ledger holds, or is about to). None when the ledger cannot say: it
    is still one file (``days.parquet``, split into months by the next write), or it has no month yet."""
    if (wh / _LEGACY).is_file():
        return None
    files = tuple(month_files(wh))
    kept = _user_months_cache.get(wh)
    if kept is not None and kept[0] == files:  # a night asks a dozen times, with the same listing
        return list(kept[1]) or None
    found = [(f.parent.parent.name.removeprefix("user_id="), f.parent.name.removeprefix("month=")) for f in files]
    if len(_user_months_cache) > 64:  # many homes in one process (tests, benchmarks)
        _user_months_cache.clear()
    _user_months_cache[wh] = (files, found)
    return list(found) or None


_user_months_cache: dict[Path, tuple[tuple[Path, ...], list[tuple[str, str]]]] = {}


def _version(path: Path) -> tuple[int, int, int]:
    """A file's (inode, size, mtime): it changes whenever the file is replaced (every file here is written whole,
    through a rename), so the caches below keep what they read of a file by it."""
    st = os.stat(path)
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def _rows_of(path: Path) -> dict[DayKey, dict]:
    """One file's rows by (user, day), read once per version of the file in this process."""
    key = _version(path)
    with _cache_lock:
        hit = _cache.get(path)
    if hit is not None and hit[0] == key:
        return hit[1]
    data = pq.ParquetFile(path).read(use_threads=False)  # a small file: see warehouse.THREADED_READ_BYTES
    rows = {(r["user_id"], r["date"]): r for r in _dicts(_typed(data))}
    _remember(path, key, rows)
    return rows


def _typed(data: pa.Table) -> pa.Table:
    for f in DAYS.schema:
        if f.name not in data.column_names:  # a file from before a newer column
            data = data.append_column(f.name, pa.nulls(data.num_rows, f.type))
    data = data.select(DAYS.schema.names)
    return data.cast(DAYS.schema) if data.schema != DAYS.schema else data


_EPOCH = pa.scalar(0, pa.timestamp("us", tz="UTC")).as_py()  # with the tzinfo this pyarrow gives a UTC timestamp
_EPOCH_DAY = dt.date(1970, 1, 1)


def _dicts(data: pa.Table) -> list[dict]:
    """``data.to_pylist()``, the same values, made column by column: a process's first read of the ledger converts
    every row of the history, and pyarrow's own conversion of a timestamp or a date costs several times this."""
    columns: list[list] = []
    for f in data.schema:
        col = data.column(f.name)
        if f.type == pa.timestamp("us", tz="UTC"):
            columns.append([None if v is None else _EPOCH + dt.timedelta(microseconds=v) for v in _ints(col)])
        elif f.type == pa.date32():
            columns.append([None if v is None else _EPOCH_DAY + dt.timedelta(days=v) for v in _ints(col)])
        else:
            columns.append(col.to_pylist())
    names = data.column_names
    return [dict(zip(names, values, strict=True)) for values in zip(*columns, strict=True)]


def _ints(col: pa.ChunkedArray) -> list[int | None]:
    return col.cast(pa.int64() if pa.types.is_timestamp(col.type) else pa.int32()).to_pylist()


def _stale(paths: list[Path]) -> list[tuple[Path, tuple[int, int, int]]]:
    """(path, its stat key) for each file this process has not kept the rows of as the file is now."""
    stale = []
    for path in paths:
        key = _version(path)  # before the read: a file replaced meanwhile is read again
        with _cache_lock:
            hit = _cache.get(path)
        if hit is None or hit[0] != key:
            stale.append((path, key))
    return stale


def _prefetch(stale: list[tuple[Path, tuple[int, int, int]]]) -> None:
    """Read the files this process has not read as they are now (``_stale``) in one scan (a process's first read
    of the ledger: one file per user and month), then keep each one's rows as ``_rows_of`` would."""
    if len(stale) < 8:
        return
    con = warehouse.scratch()
    try:
        got = con.sql(
            "SELECT * FROM read_parquet(?, hive_partitioning=false, union_by_name=true, filename=true)",
            params=[[str(p) for p, _ in stale]],
        ).to_arrow_table()
    finally:
        con.close()
    names = got["filename"].to_pylist()
    by_file: dict[str, dict[DayKey, dict]] = {}
    for name, r in zip(names, _dicts(_typed(got.drop_columns(["filename"]))), strict=True):
        by_file.setdefault(name, {})[(r["user_id"], r["date"])] = r
    for path, key in stale:
        _remember(path, key, by_file.get(str(path), {}))


def _remember(path: Path, key: tuple[int, int, int], rows: dict[DayKey, dict]) -> None:
    with _cache_lock:
        if len(_cache) > 10_000:  # many homes in one process (tests, benchmarks): start again
            _cache.clear()
        _cache[path] = (key, rows)


def _from_history(wh: Path, stale: list[tuple[Path, tuple[int, int, int]]]) -> list[tuple[Path, tuple[int, int, int]]]:
    """Keep the rows of each month file in ``stale`` (``_stale``) that the history file holds as it is now
    (``_rows_of`` finds them kept), so that they are not read one file at a time; returns the others."""
    root = warehouse.table_dir(wh, DAYS)
    history = wh / _HISTORY
    if len(stale) < 8 or not history.is_file():
        return stale
    try:
        reader = pa.ipc.open_file(pa.memory_map(str(history)))
        made_from = json.loads((reader.schema.metadata or {})[_HISTORY_KEY])
        same = [
            (path, key)
            for path, key in stale
            if (sha := made_from.get(path.relative_to(root).as_posix()))
            and sha in warehouse.recorded_checksums(path)[:1]
        ]
        if not same:
            return stale
        rows = _by_month_file(_dicts(_typed(reader.read_all())))
    except (OSError, ValueError, KeyError, TypeError, pa.ArrowException):
        return stale  # read the month files themselves
    for path, key in same:
        _remember(path, key, rows.get(path.relative_to(root).as_posix(), {}))
    kept = {path for path, _ in same}
    return [(path, key) for path, key in stale if path not in kept]


def _by_month_file(rows: list[dict]) -> dict[str, dict[DayKey, dict]]:
    """Rows by their month file (relative to ``days/``), each by (user, day); the history holds each month's rows
    together (by its file's name, then day), so a month's name is made where it starts, not once a row."""
    out: dict[str, dict[DayKey, dict]] = {}
    at: tuple | None = None
    month: dict[DayKey, dict] = {}
    for r in rows:
        user, day = r["user_id"], r["date"]
        if at != (user, day.year, day.month):
            at = (user, day.year, day.month)
            month = out.setdefault(f"user_id={user}/month={day:%Y-%m}/data.parquet", {})
        month[(user, day)] = r
    return out


@dataclass(frozen=True)
class Notes:
    """What a caller keeps of each month the history file holds, beside its rows (``refresh_history``), so that a
    reader can judge the month without reading it (``Ledger.notes``).

    ``of`` makes a month's note (a JSON object) from the month's rows; ``basis`` names what a note depends on besides
    the rows (the note's format, the embedder and chunker a day's index is fresh for): a reader asking for another
    basis gets no notes, and the next ``refresh_history`` with this one writes them again."""

    basis: str
    of: Callable[[list[dict]], dict]


def _old_month_files(wh: Path) -> list[Path]:
    """The month files of every month before the latest two (which a night no longer writes)."""
    files = month_files(wh)
    latest = max((p.parent.name for p in files), default="month=")
    if latest == "month=":
        return []
    first = dt.date.fromisoformat(latest.removeprefix("month=") + "-01")
    before = f"month={first - dt.timedelta(days=1):%Y-%m}"
    return [p for p in files if p.parent.name < before]


_meta_cache: dict[Path, tuple[tuple[int, int, int], tuple[dict[str, str], dict]]] = {}


def _history_meta(history: Path) -> tuple[dict[str, str], dict]:
    """(month file -> sha256 it was made from, the notes) of the history file, read once per version of the file in
    this process (it is replaced whole, never edited); raises when it cannot be read. Not to be changed."""
    key = _version(history)
    with _cache_lock:
        hit = _meta_cache.get(history)
    if hit is not None and hit[0] == key:
        return hit[1]
    meta = pa.ipc.open_file(pa.memory_map(str(history))).schema.metadata or {}
    made_from = json.loads(meta[_HISTORY_KEY])
    notes = json.loads(meta[_NOTES_KEY]) if _NOTES_KEY in meta else {}
    if not isinstance(made_from, dict) or not isinstance(notes, dict):
        raise ValueError("not a ledger history")
    with _cache_lock:
        if len(_meta_cache) > 100:
            _meta_cache.clear()
        _meta_cache[history] = (key, (made_from, notes))
    return made_from, notes


def refresh_history(wh: Path, notes: Notes | None = None) -> bool:
    """Gather the rows of the month files of every month before the latest two into the history file, with ``notes``
    of each month, if they are not what it holds; returns whether it was written. Called at the end of a run and of a
    forget, never by a reader.

    Each month file is recorded by the sha256 of its bytes as read here (not its checksum file, which a crash can
    leave ahead of the bytes), so a reader takes nothing from the history for a month rewritten since. The month
    files are not read when the history holds the same months, each checksum file still names the sha256 recorded
    (readers trust no more: the checksum file is replaced before its month file), and the notes are of ``notes``'s
    basis for every month. Bytes changed behind their checksum file are ``kenang verify``'s to find, as for every
    Parquet file. Without ``notes``, the notes already there are kept for the months whose bytes did not change."""
    root = warehouse.table_dir(wh, DAYS)
    old = _old_month_files(wh)
    history = wh / _HISTORY
    try:
        made_from, had = _history_meta(history)
    except (OSError, ValueError, KeyError, TypeError, pa.ArrowException):
        made_from, had = {}, {}
    names = [p.relative_to(root).as_posix() for p in old]
    got = had.get("months")
    kept: dict = got if isinstance(got, dict) else {}
    basis_same = notes is None or (had.get("basis") == notes.basis and set(kept) == set(names))
    if basis_same and set(made_from) == set(names):
        run = wh in _held
        if all(_recorded(p, run) == made_from[n] for p, n in zip(old, names, strict=True)):
            return False
    blobs = {name: p.read_bytes() for name, p in zip(names, old, strict=True)}
    want = {name: hashlib.sha256(blob).hexdigest() for name, blob in blobs.items()}
    if made_from == want and basis_same:
        return False
    if not want:
        if history.exists():
            history.unlink()
            fsync_dir(wh)
        return False
    # The rows of the very bytes each sha256 names: never kept rows, which a checksum file vouched for.
    months = {
        name: sorted(
            _typed(pq.ParquetFile(pa.BufferReader(blobs[name])).read()).to_pylist(),
            key=lambda r: (r["user_id"], r["date"]),
        )
        for name in sorted(blobs)
    }
    if notes is not None:
        noted = {"basis": notes.basis, "months": {name: notes.of(rows) for name, rows in months.items()}}
    else:  # the notes of the months whose bytes did not change
        same = {n: kept[n] for n in want if n in kept and made_from.get(n) == want[n]}
        noted = {"basis": had["basis"], "months": same} if same and "basis" in had else {}
    metadata = {_HISTORY_KEY: json.dumps(want, sort_keys=True).encode()}
    if noted:
        metadata[_NOTES_KEY] = json.dumps(noted, sort_keys=True, default=str).encode()
    data = pa.Table.from_pylist([r for rows in months.values() for r in rows], schema=DAYS.schema)
    data = data.replace_schema_metadata(metadata)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, data.schema, options=pa.ipc.IpcWriteOptions(compression="zstd")) as w:
        w.write_table(data)
    atomic_write_bytes(history, sink.getvalue().to_pybytes())
    return True


class Ledger(Mapping[DayKey, dict]):
    """The day ledger read a month at a time: a row's month file is read when the row is asked for (each row a
    fresh dict the caller may change), so a night that asks for its own days reads their months only.

    ``notes``: per (user, ``YYYY-MM``), the note ``Notes.of`` made of the month for ``basis``, for each month the
    history file holds as its month file is now; ``unnoted`` gives the rows of every other month. Iterating reads
    every month, as ``read_days`` does."""

    def __init__(self, wh: Path, basis: str | None = None) -> None:
        self.wh = wh
        self._legacy = (wh / _LEGACY).is_file()
        self._files = {} if self._legacy else {_user_month(p): p for p in month_files(wh)}
        self.notes: dict[tuple[str, str], dict] = _vouched_notes(wh, self._files, basis) if basis else {}

    def get(self, key: DayKey, default=None):
        user, day = key
        path = _month_file(self.wh, user, f"{day:%Y-%m}")
        row = _rows_of(path).get(key) if path.is_file() else None
        if row is None and (self.wh / _LEGACY).is_file():
            row = _rows_of(self.wh / _LEGACY).get(key)
        return default if row is None else dict(row)

    def __getitem__(self, key: DayKey) -> dict:
        row = self.get(key)
        if row is None:
            raise KeyError(key)
        return row

    def __contains__(self, key: object) -> bool:
        return isinstance(key, tuple) and len(key) == 2 and self.get(key) is not None

    def __iter__(self) -> Iterator[DayKey]:
        return iter(read_days(self.wh))

    def __len__(self) -> int:
        return len(read_days(self.wh))

    def items(self):
        return read_days(self.wh).items()

    def values(self):
        return read_days(self.wh).values()

    def unnoted(self) -> Iterator[tuple[DayKey, dict]]:
        """(key, row) of every day in a month without a note, in order."""
        return self.rows_except(set(self.notes))

    def rows_except(self, months: set[tuple[str, str]]) -> Iterator[tuple[DayKey, dict]]:
        """(key, row) of every day in a month not in ``months`` (user, ``YYYY-MM``), in order; many months are read
        in one scan. Months without a note are taken from the history file where it holds them (as ``read_days``
        takes them), months with one from their own files: a few old months left to do never cost the history's
        read. A one-file ledger (or one split since this was made) is read whole."""
        if self._legacy or (self.wh / _LEGACY).is_file():
            yield from read_days(self.wh).items()
            return
        paths = [p for m, p in sorted(self._files.items()) if m not in months]
        stale = _stale(paths)
        if stale:  # the history file is read for months without a note (all, when the notes are of another basis)
            noted = {self._files[m] for m in self.notes}
            unnoted = _from_history(self.wh, [s for s in stale if s[0] not in noted])
            _prefetch(unnoted + [s for s in stale if s[0] in noted])
        for path in paths:
            for key, row in sorted(_rows_of(path).items()):
                yield key, dict(row)


_recorded_cache: dict[Path, tuple[tuple[int, int, int], str | None]] = {}


def _recorded(path: Path, run: bool = False) -> str | None:
    """The sha256 the checksum file of a month file names first, read once per version of the month file in this
    process (as ``_rows_of`` keeps its rows). A note is trusted while this is the sha256 its month was gathered
    from: a checksum file that ran ahead of its bytes (a crash between the two) names another, and the month is
    read. One replaced by another process since it was read here came with a new month file, read again.

    ``run``: this process holds the home's run lock (``held``, which forgot what was read before it), so what it
    read since stands until its own writes, which record theirs (``_write_month``): the month file is not looked
    at again."""
    if run:
        with _cache_lock:
            hit = _recorded_cache.get(path)
        if hit is not None:
            return hit[1]
    try:
        key = _version(path)
    except FileNotFoundError:
        return None
    with _cache_lock:
        hit = _recorded_cache.get(path)
    if hit is not None and hit[0] == key:
        return hit[1]
    sha = (warehouse.recorded_checksums(path) or (None,))[0]
    with _cache_lock:
        if len(_recorded_cache) > 10_000:
            _recorded_cache.clear()
        _recorded_cache[path] = (key, sha)
    return sha


def _user_month(path: Path) -> tuple[str, str]:
    return path.parent.parent.name.removeprefix("user_id="), path.parent.name.removeprefix("month=")


def _vouched_notes(wh: Path, files: Mapping[tuple[str, str], Path], basis: str) -> dict[tuple[str, str], dict]:
    """The history file's notes of ``basis``, of each month whose file's recorded sha256 is the one the note was made
    from."""
    try:
        made_from, notes = _history_meta(wh / _HISTORY)
    except (OSError, ValueError, KeyError, TypeError, pa.ArrowException):
        return {}
    months = notes.get("months")
    if notes.get("basis") != basis or not isinstance(months, dict):
        return {}
    run = wh in _held
    out = {}
    for key, path in files.items():
        name = f"user_id={key[0]}/month={key[1]}/data.parquet"  # as the history names it, relative to days/
        note, sha = months.get(name), made_from.get(name)
        if isinstance(note, dict) and sha and _recorded(path, run) == sha:
            out[key] = note
    return out


def read_days(wh: Path) -> dict[DayKey, dict]:
    """The whole ledger: (user, day) -> its row (each a fresh dict the caller may change)."""
    out: dict[DayKey, dict] = {}
    legacy = wh / _LEGACY
    months = month_files(wh)
    stale = _stale(months)
    if stale:
        _prefetch(_from_history(wh, stale))
    for path in ([legacy] if legacy.is_file() else []) + months:
        out.update(_rows_of(path))  # a month file, once written, holds the newer rows
    return {k: dict(r) for k, r in sorted(out.items())}


def version(wh: Path) -> tuple:
    """Changes whenever the ledger is written (every month file is replaced, never edited in place)."""
    legacy = wh / _LEGACY
    out = []
    for path in ([legacy] if legacy.is_file() else []) + month_files(wh):
        try:
            st = os.stat(path)
        except FileNotFoundError:
            continue
        out.append((str(path), st.st_ino, st.st_size, st.st_mtime_ns))
    return tuple(out)


def users(wh: Path) -> set[str]:
    """Every user with a row in the ledger."""
    found = {u.removeprefix("user_id=") for u in warehouse.subfolders(warehouse.table_dir(wh, DAYS), "user_id=")}
    legacy = wh / _LEGACY
    if legacy.is_file():
        found.update(warehouse.read_columns(legacy, DAYS, ["user_id"])["user_id"])
    return found


def write_days(wh: Path, updates: Iterable[Mapping]) -> int:
    """Merge updated (user, day) rows into the ledger, rewriting only the months they fall in."""
    updates = list(updates)
    if not updates:
        return 0
    if (wh / _LEGACY).is_file():
        migrate(wh)
    months: dict[tuple[str, str], dict[DayKey, dict]] = {}
    for u in updates:
        key = (u["user_id"], u["date"])
        month = months.get((key[0], f"{key[1]:%Y-%m}"))
        if month is None:
            path = _month_file(wh, key[0], f"{key[1]:%Y-%m}")
            month = months[(key[0], f"{key[1]:%Y-%m}")] = dict(_rows_of(path)) if path.is_file() else {}
        month[key] = {**month.get(key, {}), **u}  # load and summarize each own their columns
    for (user, m), rows in sorted(months.items()):
        _write_month(wh, user, m, rows)
    faults.checkpoint("load.ledger_written")
    return len(updates)


def _write_month(wh: Path, user: str, month: str, rows: Mapping[DayKey, Mapping]) -> None:
    ordered = [rows[k] for k in sorted(rows)]
    path = _month_file(wh, user, month)
    data = pa.Table.from_pylist(ordered, schema=DAYS.schema)
    blob = warehouse.parquet_bytes(data, DAYS)
    try:
        warehouse.write_file(path, blob, DAYS)
    except BaseException:  # the file may or may not be replaced: looked at again, as if another process wrote it
        with _cache_lock:
            _recorded_cache.pop(path, None)
            if _held.get(wh) is not None:
                _held[wh] = None
        raise
    # What this process wrote is what it reads next: no second look at a file whose stat could repeat
    key = _version(path)
    _remember(path, key, {(r["user_id"], r["date"]): r for r in data.to_pylist()})
    with _cache_lock:
        _recorded_cache[path] = (key, hashlib.sha256(blob).hexdigest())
        kept = _held.get(wh)
        if kept is not None and path not in kept:
            kept.append(path)
            kept.sort(key=lambda f: (f.parent.parent.name, f.parent.name))


def migrate(wh: Path) -> bool:
    """Split a one-file ledger (``days.parquet``) into month files, then remove it; returns whether there was one.

    Each month file is written from the old file's rows under any month file already
    there, so a migration that died halfway is finished by the next one, losing nothing.
    """
    legacy = wh / _LEGACY
    if not legacy.is_file():
        return False
    by_month: dict[tuple[str, str], dict[DayKey, dict]] = {}
    for key, row in read_days(wh).items():
        by_month.setdefault((key[0], f"{key[1]:%Y-%m}"), {})[key] = row
    for (user, m), rows in sorted(by_month.items()):
        _write_month(wh, user, m, rows)
    faults.checkpoint("ledger.migrated")
    legacy.unlink()
    warehouse.checksum_file(legacy).unlink(missing_ok=True)
    fsync_dir(wh)
    return True


@dataclass(frozen=True)
class ArchivedDay:
    user_id: str
    date: dt.date
    paths: tuple[str, ...]
    shas: tuple[str, ...]

    @property
    def fingerprint(self) -> str:
        return archive_fingerprint(self.paths, self.shas)

    @classmethod
    def of(cls, user_id: str, day: dt.date, files: Iterable[tuple[str, str]]) -> ArchivedDay:
        """From (path, sha256) pairs, in path order."""
        pairs = sorted(files)
        return cls(user_id, day, tuple(p for p, _ in pairs), tuple(s for _, s in pairs))


def archive_fingerprint(paths: Iterable[str], shas: Iterable[str]) -> str:
    return fingerprint(f"{p}\0{s}" for p, s in zip(paths, shas, strict=False))


def archived_day(wh: Path, user_id: str, day: dt.date) -> ArchivedDay | None:
    """One (user, day)'s archive record, read from its own partition only."""
    path = warehouse.partition_file(wh, ARCHIVE_FILES, day, user_id)
    if not path.is_file():
        return None
    data = warehouse.read_file(path, ARCHIVE_FILES)
    if not data.num_rows:
        return None
    return ArchivedDay.of(user_id, day, zip(data["path"].to_pylist(), data["sha256"].to_pylist(), strict=False))


# --- pending: (user, day)s whose archive record changed and may need a load ----------
#
# The archive stage marks a day pending *before* it records new files for it, and the
# load stage clears the mark only after the day's outcome is in the ledger. So a crash
# anywhere leaves the day pending, and the nightly run checks just these days (and
# the failed ones) instead of scanning the whole archive record: its cost does not
# grow with years of history.


def _pending_file(wh: Path) -> Path:
    return wh / "_pending_days.json"


def read_pending(wh: Path) -> set[DayKey]:
    path = _pending_file(wh)
    if not path.is_file():
        return set()
    return {(u, dt.date.fromisoformat(d)) for u, d in json.loads(path.read_text(encoding="utf-8"))}


def _write_pending(wh: Path, keys: set[DayKey]) -> None:
    data = json.dumps(sorted([u, d.isoformat()] for u, d in keys)).encode()
    atomic_write_bytes(_pending_file(wh), data)


def mark_pending(wh: Path, keys: Iterable[DayKey]) -> None:
    current = read_pending(wh)
    new = current | set(keys)
    if new != current:
        _write_pending(wh, new)


def clear_pending(wh: Path, keys: Iterable[DayKey]) -> None:
    current = read_pending(wh)
    new = current - set(keys)
    if new != current:
        _write_pending(wh, new)


def archived_days(wh: Path, where: str = "", params: Iterable = ()) -> dict[DayKey, ArchivedDay]:
    """Every (user, day) the archive record holds, with its files."""
    grouped: dict[DayKey, list[tuple[str, str]]] = {}
    data = warehouse.read(wh, ARCHIVE_FILES, where, params)
    for user, day, path, sha in zip(
        data["user_id"].to_pylist(),
        data["date"].to_pylist(),
        data["path"].to_pylist(),
        data["sha256"].to_pylist(),
        strict=False,
    ):
        grouped.setdefault((user, day), []).append((path, sha))
    return {key: ArchivedDay.of(key[0], key[1], files) for key, files in grouped.items()}


def day_state(archived: ArchivedDay | None, ledger_row: Mapping | None) -> str:
    """'loaded', 'failed', 'missing' or 'forgotten' for one (user, day)."""
    if ledger_row is None:
        return "missing"
    if ledger_row["status"] == "failed":
        return "failed"
    if ledger_row["status"] == "forgotten":
        return "forgotten"  # settled: emptied on purpose (kenang forget, retention)
    if archived is not None and ledger_row["archive_fingerprint"] != archived.fingerprint:
        return "missing"
    return "loaded"


# --- derived files outside the day ledger: MEMORY_INDEX*.md -----------------------------
#
# Summaries have their sha256 in the days ledger; the MEMORY_INDEX files (one per user,
# in the archive root) have theirs here, so ``kenang verify`` can tell a hand edit.


def _derived_file(wh: Path) -> Path:
    return wh / "_derived_files.json"


def read_derived(wh: Path) -> dict[str, str]:
    """archive-relative path -> the sha256 kenang wrote there."""
    try:
        return dict(json.loads(_derived_file(wh).read_text(encoding="utf-8")))
    except (FileNotFoundError, ValueError):
        return {}


def record_derived(wh: Path, shas: Mapping[str, str]) -> None:
    current = read_derived(wh)
    new = {**current, **shas}
    if new != current:
        atomic_write_bytes(_derived_file(wh), (json.dumps(new, indent=1, sort_keys=True) + "\n").encode())


# --- runs -----------------------------------------------------------------------


@dataclass
class RunRecord:
    run_id: str
    flow: str
    parameters: dict
    started_at: dt.datetime
    counts: dict
    status: str = "running"
    finished_at: dt.datetime | None = None
    error: str | None = None
    timezone: dt.tzinfo = dt.UTC  # the home's: a run's ``date`` is the local day it started, as every table's is

    @property
    def day(self) -> dt.date:
        """The home's local day the run started on (its ``date``, and its partition)."""
        return self.started_at.astimezone(self.timezone).date()

    def row(self) -> dict:
        """The runs row: counts and error pass the redaction gate (they quote reasons and errors)."""
        from transforms.redact import redact_reason, redact_tree  # runs are written by the pipeline alone

        return {
            "run_id": self.run_id,
            "flow": self.flow,
            "parameters": json.dumps(self.parameters, sort_keys=True, default=str),
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "status": self.status,
            "counts": json.dumps(redact_tree(self.counts), sort_keys=True, default=str),
            "error": None if self.error is None else redact_reason(self.error, 2000),
            "date": self.day,
        }


def write_run(wh: Path, run: RunRecord) -> None:
    path = warehouse.partition_file(wh, RUNS, run.day, name=run.run_id)
    warehouse.write_file(path, pa.Table.from_pylist([run.row()], schema=RUNS.schema), RUNS)


def read_runs(wh: Path, limit: int = 10) -> list[dict]:
    rows = warehouse.read(wh, RUNS).to_pylist()
    rows.sort(key=lambda r: r["started_at"], reverse=True)
    return rows[:limit]
