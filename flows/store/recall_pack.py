"""Recall packs: each user's recall index by month, ready to search the moment it is opened.

A cold ``kenang recall`` used to read every chunk's terms and embedding from Parquet,
build the BM25 posting list and copy the embeddings into a matrix: about 11 s at 100k
chunks. A pack holds what that produced, one segment per (user, month), made at the end
of a run from the user's compact copies (``flows.store.compact``):

- ``<id>.rows.arrow``: each chunk's ``chunk_id, user_id, date, session_id, source,
  text, flagged, embedder_id``, in the order the reader sorts by, as an Arrow IPC
  file in zstd-compressed record batches of ``BATCH_ROWS`` rows (``CODED`` columns
  dictionary-encoded). A reader keeps it open and reads the batch of a row when the
  row is a hit: a chunk's text is never held;
- ``<id>.search.arrow``: the same rows' ``SEARCH_COLUMNS`` (date, source, embedder),
  the few bytes a row that a search needs for every chunk, read whole;
- ``<id>.kw-{hashes,vocab,offsets,indptr,postings,tfs,lengths}.npy``: the month's
  posting list with its raw counts (``transforms.recall.PostingSegment``: the
  vocabulary as hash-sorted bytes, no Python object per term; the vocabulary's entries,
  postings and counts a query needs read with ``pread``, never mapped or held:
  ``FileArray``); BM25 weights need every month's statistics, so the reader makes
  them per query (``SegmentedIndex``), with the very scores one index over all the
  chunks gives;
- ``<id>.emb.npy``: the embeddings of the month's embedder as one float32 matrix,
  memory-mapped by readers (rows of another embedder are zeros); absent when no chunk
  has one;
- ``<id>.ann.usearch`` and ``<id>.ann-basis.npy``: for a user with ``recall.exact_below``
  chunks or more, the month's ANN index of those embeddings and the projection its
  vectors are stored in (``flows.store.ann``), the index memory-mapped by readers;
- ``month=YYYY-MM.json``, written last and atomically, naming the files, the embedder,
  the row count and each file's sha256.

``<id>`` is a hash of the month's chunk ids, the embedder, the keyword arrays and the ANN index's kind,
so the same chunks make the same bytes. A pack of another ``VERSION`` is no pack: the next run makes
its segments again and removes its files. Each file is written beside its name and renamed in, so a reader that
mapped an older file keeps reading it.

By month, so a night's cost does not grow with the history, and in parts, so it does not
grow with the month either. A night's new day (after every day its month's segment holds)
sets that segment aside as the month's *base* (``warehouse.drop_compacts``, beside its
memory_chunks copy), and the run's end keeps the base's parts as they are and makes one
part of the new days alone: a manifest of several parts lists them under ``parts``, in
day order, each with its files, rows and ``days`` (the first and last day it was made
of). The new part takes in the parts before it while each spans at most ``MERGE_SPAN``
times its days, so a month has a few parts (3 at most when every night adds one day) and
a night makes 3 to 4 days on average, one night in a month up to 21 (a part whose days are
big is read from the month's new copy, filtered to its days, a batch at a time). A month
with parts is made whole once a later month has chunks. A reader searches each part as a
segment; the answers are those of the month made whole. A user with ANN indexes (``recall.exact_below`` chunks or
more, with embeddings: ``_embedded``) gets whole months each night: which rows an approximate
search scores exactly depends on how a month is cut. A keyword-only user has no ANN index and
gets parts, whatever the size.

Freshness is by construction, as for the copies: ``warehouse.drop_compacts`` removes the
month's manifest (or renames it to the base) durably before any memory_chunks partition of
that user and month changes, so a segment that exists holds exactly its month's chunks; a
day the base holds, changed, drops the base too, and its files go with the next tidy of the
pack (a forgotten chunk leaves no file behind). A reader that finds
a month with chunks and no segment (or a file of one gone: a run replaced it meanwhile)
builds the index the slow way.
"""

from __future__ import annotations

import bisect
import datetime as dt
import hashlib
import io
import json
import mmap
import operator
import os
import re
import sys
import threading
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute  # noqa: F401  (pa.compute)
import pyarrow.parquet as pq

from flows.store import ann, compact, faults, warehouse
from flows.store.fsio import atomic_write_bytes, fsync_dir, sha256_file, tmp_name, total_size
from schemas.tables import MEMORY_CHUNKS
from transforms.errors import ArchiveError
from transforms.model import USER_ID_RE
from transforms.recall import KeywordIndex, PostingSegment, SegmentedIndex

VERSION = 4
META_COLUMNS = ("chunk_id", "user_id", "date", "session_id", "source", "text", "flagged", "embedder_id")
#: Columns of few distinct values, stored as dictionaries: a mask over them reads codes, not strings.
CODED = ("user_id", "source", "embedder_id")
#: The columns a search reads for every row (held: a few bytes a row); the others are read per hit.
SEARCH_COLUMNS = ("date", "source", "embedder_id")
#: Rows per record batch of a rows file: a hit reads its batch (a few hundred KB), never the file.
BATCH_ROWS = 256
#: How a rows file's bytes are laid out (its batches written one at a time); part of a segment's file names.
ROWS_LAYOUT = "batched-1"
#: The reader's order; a pack is in it, so nothing is sorted at load.
ORDER = "ORDER BY date, source, session_id, seq, chunk_id"
KW_PARTS = ("hashes", "vocab", "offsets", "indptr", "postings", "tfs", "lengths")
_MANIFEST = re.compile(r"^month=(\d{4}-\d{2})\.json$")
_SET_ASIDE = re.compile(r"^\.month=(\d{4}-\d{2})\.(?:base|added)\.json$")  # ``warehouse.pack_base``'s names


def folder(wh: Path, user: str) -> Path:
    return warehouse.pack_folder(wh, user)


def manifest(wh: Path, user: str, month: str) -> Path:
    """The manifest of one month's segment: compact/recall_pack/user_id=U/month=YYYY-MM.json."""
    return warehouse.pack_manifest(wh, user, month)


drop = warehouse.drop_pack


@dataclass(frozen=True)
class Segment:
    """One month of a user's pack."""

    month: str
    meta: pa.Table  # SEARCH_COLUMNS of every row
    keyword: PostingSegment  # read per query term when loaded (FileArray): the vocabulary's entries, the postings
    embedder_id: str | None
    embeddings: np.ndarray | None  # (rows, dim) float32, memory-mapped when loaded; None: no chunk has one
    rows: Rows  # every META_COLUMNS column of a row, read when asked for
    ann: Any = None  # the embeddings' ANN index (flows.store.ann), memory-mapped; None: not made for this month
    ann_path: Path | None = None  # the index's file
    ann_basis: np.ndarray | None = None  # what a query is projected by for the index (``ann.basis``)


class Rows:
    """A segment's chunks with every ``META_COLUMNS`` column: the table as it is made, or, loaded, its rows file
    kept open and read one record batch at a time when a row is asked for (never mapped, never held)."""

    def __init__(self, table: pa.Table | None = None, path: Path | None = None, n: int = 0):
        self._table = table
        self._reader = pa.ipc.open_file(pa.OSFile(str(path))) if path is not None else None
        self._n = table.num_rows if table is not None else n
        self._lock = threading.Lock()  # one reader, shared by a server's threads
        if self._reader is not None and self._reader.num_record_batches != -(-n // BATCH_ROWS):
            raise ValueError(f"{path}: not {n} rows in batches of {BATCH_ROWS}")

    def __len__(self) -> int:
        return self._n

    def row(self, i: int) -> dict:
        """Row ``i``'s columns, as Python values."""
        if self._reader is None:
            assert self._table is not None
            return {c: self._table[c][i].as_py() for c in META_COLUMNS}
        with self._lock:
            batch = self._reader.get_batch(i // BATCH_ROWS)
        return {c: batch.column(c)[i % BATCH_ROWS].as_py() for c in META_COLUMNS}

    def table(self) -> pa.Table:
        """Every row, read whole (checks and tests; a search never needs it)."""
        if self._reader is None:
            assert self._table is not None
            return self._table.select(list(META_COLUMNS))
        with self._lock:
            return self._reader.read_all()


#: The ``struct`` codes of the little-endian integer dtypes a FileArray searches without numpy (``equal_range``).
_ITEM_CODES: dict[str, Literal["Q", "q", "I", "i", "B"]] = {"<u8": "Q", "<i8": "q", "<u4": "I", "<i4": "i", "|u1": "B"}


class FileArray:
    """A 1-d ``.npy`` array read a slice at a time with ``pread`` from a file kept open: a query reads the
    postings of its terms and the few vocabulary entries it looks up, and the process neither maps nor holds the
    rest (a mapped page counts in the reader's memory, and Linux maps 64 KiB around each page read, so the binary
    searches of a query's terms over years of months would map most of the vocabulary).

    A sorted array is searched with ``equal_range``: a fence of every ``FENCE``-th value, read once, names the
    block of ``FENCE`` values to read."""

    FENCE = 512

    def __init__(self, path: Path):
        with open(path, "rb") as f:
            version = np.lib.format.read_magic(f)
            header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
            shape, fortran, dtype = header(f)
            self._start = f.tell()
            size = os.fstat(f.fileno()).st_size
        if len(shape) != 1 or fortran or dtype.hasobject or size != self._start + shape[0] * dtype.itemsize:
            raise ValueError(f"{path}: not a whole 1-d array")
        self.dtype, self.shape = dtype, shape
        self._fd = os.open(path, os.O_RDONLY)
        self._fence: np.ndarray | None = None
        weakref.finalize(self, os.close, self._fd)

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, at: slice | int) -> Any:
        if not isinstance(at, slice):  # one value
            i = operator.index(at)
            i += len(self) if i < 0 else 0
            if not 0 <= i < len(self):
                raise IndexError(f"index {at} out of a FileArray of {len(self)}")
            return self[i : i + 1][0]
        a, b, step = at.indices(len(self))
        if step != 1:
            raise IndexError("a FileArray is read in plain slices")
        size = self.dtype.itemsize
        data = os.pread(self._fd, max(0, b - a) * size, self._start + a * size)
        return np.frombuffer(data, dtype=self.dtype)

    def equal_range(self, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each value's ``searchsorted`` left and right (where its run of equal values starts and ends) in a sorted
        FileArray, from one read per value: the blocks from the left place's fence to the right one's."""
        if self._fence is None:
            self._fence = np.array(self[:][:: self.FENCE])
        values = np.asarray(values, dtype=self.dtype)  # compared as stored (a Python int to uint64 is a float)
        left, right = np.searchsorted(self._fence, values, "left"), np.searchsorted(self._fence, values, "right")
        size, code = self.dtype.itemsize, _ITEM_CODES.get(self.dtype.str) if sys.byteorder == "little" else None
        lo, hi = [0] * len(values), [0] * len(values)
        for j, (kl, kr, v) in enumerate(zip(left.tolist(), right.tolist(), values.tolist(), strict=True)):
            if kr:  # fence[k - 1] is before a place, fence[k] (if any) at or after it; kr == 0: before every value
                start = max(kl - 1, 0) * self.FENCE
                end = min(kr * self.FENCE, len(self))
                raw = os.pread(self._fd, (end - start) * size, self._start + start * size)
                # an integer block is searched as Python ints (exact), without a numpy call per value
                block: Any = memoryview(raw).cast(code) if code else np.frombuffer(raw, dtype=self.dtype)
                lo[j] = start + bisect.bisect_left(block, v)
                hi[j] = start + bisect.bisect_right(block, v, lo[j] - start)
        return np.asarray(lo, dtype=np.int64), np.asarray(hi, dtype=np.int64)

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        out = self[:]
        return out if dtype is None else out.astype(dtype)


def unmap_pages(matrix: np.ndarray) -> None:
    """Drop a memory-mapped matrix's pages from this process once read: they stay in the page cache for the next
    product, but a page mapped into the process counts in its RSS, and an exact search reads every page."""
    mapped = getattr(matrix, "_mmap", None)
    if mapped is not None and hasattr(mmap, "MADV_DONTNEED"):
        mapped.madvise(mmap.MADV_DONTNEED)


class Stacked:
    """The segments' embedding matrices as one (rows, dim) matrix, never copied into one: ``@`` runs per segment."""

    def __init__(self, blocks: Sequence[tuple[int, np.ndarray | None]], dim: int):
        self.blocks = list(blocks)  # (rows, matrix or None for rows without embeddings)
        self.shape = (sum(n for n, _ in self.blocks), dim)

    def __matmul__(self, q: np.ndarray) -> np.ndarray:
        """The product, segment by segment on the search threads (``ann.products``)."""
        parts = ann.products([m for _, m in self.blocks], q, after=unmap_pages)  # each month dropped once read
        dtype = np.result_type(q.dtype, np.float32)
        out = [np.zeros(n, dtype=dtype) if p is None else p for (n, _), p in zip(self.blocks, parts, strict=True)]
        return np.concatenate(out) if out else np.zeros(0, dtype=np.float32)

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        out = np.zeros(self.shape, dtype=np.float32)
        row = 0
        for n, m in self.blocks:
            if m is not None:
                out[row : row + n] = m
            row += n
        return out if dtype is None else out.astype(dtype)


@dataclass(frozen=True)
class Pack:
    """A user's whole pack: the segments in month order, as one index."""

    segments: tuple[Segment, ...]

    @cached_property
    def meta(self) -> pa.Table:
        return (
            pa.concat_tables([s.meta for s in self.segments])
            if self.segments
            else pa.table({c: pa.array([]) for c in SEARCH_COLUMNS})
        )

    @cached_property
    def _starts(self) -> np.ndarray:
        return np.cumsum([0] + [len(s.rows) for s in self.segments])

    def row(self, i: int) -> dict:
        """Row ``i`` of the whole pack, every ``META_COLUMNS`` column, read from its segment's rows now."""
        k = int(np.searchsorted(self._starts, i, side="right")) - 1
        return self.segments[k].rows.row(i - int(self._starts[k]))

    def table(self) -> pa.Table:
        """Every row of every segment, read whole (checks and tests; a search never needs it)."""
        tables = [s.rows.table() for s in self.segments]
        return pa.concat_tables(tables) if tables else pa.table({c: pa.array([]) for c in META_COLUMNS})

    def mask(self, column: str, values: Iterable[str]) -> np.ndarray:  # column: one of SEARCH_COLUMNS
        """Whether each row's ``column`` is one of ``values`` (null: no), read from the dictionaries' codes where
        the column is coded (``CODED``), so no row's string is made."""
        wanted = set(values)
        parts = []
        for chunk in self.meta[column].chunks:
            if pa.types.is_dictionary(chunk.type):
                hit = np.array([v in wanted for v in chunk.dictionary.to_pylist()] + [False], dtype=bool)
                parts.append(hit[chunk.indices.fill_null(len(chunk.dictionary)).to_numpy(zero_copy_only=False)])
            else:
                value_set = pa.array(sorted(wanted), type=pa.string()).cast(chunk.type)
                parts.append(
                    pa.compute.is_in(chunk, value_set=value_set).fill_null(False).to_numpy(zero_copy_only=False)
                )
        return np.concatenate(parts).astype(bool) if parts else np.zeros(self.meta.num_rows, dtype=bool)

    @cached_property
    def keyword(self) -> SegmentedIndex:
        return SegmentedIndex([s.keyword for s in self.segments])

    @cached_property
    def embedder_id(self) -> str | None:
        """The embedder of every segment that has embeddings; ``"mixed"`` when they differ."""
        ids = {s.embedder_id for s in self.segments if s.embeddings is not None}
        return None if not ids else ids.pop() if len(ids) == 1 else "mixed"

    @cached_property
    def embeddings(self) -> Stacked | None:
        dims = {s.embeddings.shape[1] for s in self.segments if s.embeddings is not None}
        if len(dims) != 1:
            return None
        return Stacked([(s.meta.num_rows, s.embeddings) for s in self.segments], dims.pop())

    @cached_property
    def ann_blocks(self) -> list[ann.Block] | None:
        """The segments for an approximate search (``flows.store.ann``); None when a month with embeddings has no
        index, or the months' widths differ."""
        if self.embeddings is None or any(s.embeddings is not None and s.ann is None for s in self.segments):
            return None
        indexed = {id(s): s.ann_path for s in self.segments if s.ann is not None and s.ann_path is not None}
        pages = dict(zip(indexed, ann.views(list(indexed.values())), strict=True))
        return [
            ann.Block(int(o), s.meta.num_rows, s.embeddings, s.ann, basis=s.ann_basis, pages=pages.get(id(s), ()))
            for o, s in zip(self._starts[:-1], self.segments, strict=True)
        ]


def months(wh: Path, user: str) -> list[str]:
    """The months in which the user has chunk partitions, in order."""
    return [m for m, _ in compact.user_months(wh, "memory_chunks", user)]


def _info(wh: Path, user: str, month: str, base: str | None = None) -> dict | None:
    """A month's manifest, or None when there is none (or it cannot be read). ``base``: the user's pack folder, as
    a string (``refresh`` reads every month's manifest)."""
    try:
        path = os.path.join(base, f"month={month}.json") if base is not None else manifest(wh, user, month)
        with open(path, encoding="utf-8") as f:
            info = json.loads(f.read())
    except (FileNotFoundError, ValueError, OSError):
        return None
    return info if isinstance(info, dict) and info.get("version") == VERSION else None


def load(wh: Path, user: str) -> Pack | None:
    """The user's pack, or None when a month has no usable segment (or one was replaced while being opened)."""
    segments = []
    have = months(wh, user)
    _room_for_files(FILES_HELD * len(have))
    for month in have:
        parts = _load_segment(wh, user, month)
        if parts is None:
            return None
        segments += parts
    if any(seg.ann is not None for seg in segments):
        ann.hand_back()  # opening a view reads its pages' headers: handed back, as after a search
    return Pack(tuple(segments)) if segments else None


#: Files a loaded segment keeps open: its rows, the six keyword arrays read in place (``FileArray``), its index.
FILES_HELD = 8


def _room_for_files(n: int) -> None:
    """Raise the process's soft limit of open files, up to its hard limit, to leave room for ``n`` more: a server
    holding years of months for a few users passes the usual 1,024."""
    try:
        import resource
    except ImportError:  # not a Unix: nothing to raise
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:
        used = len(os.listdir("/proc/self/fd"))
    except OSError:
        used = 256
    want = used + n + 256
    if soft != resource.RLIM_INFINITY and soft < want:
        cap = want if hard == resource.RLIM_INFINITY else min(want * 2, hard)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, cap), hard))
        except (ValueError, OSError):  # kept as it was: a segment that cannot be opened reads the slow way
            pass


def _load_segment(wh: Path, user: str, month: str) -> list[Segment] | None:
    """A month's segment: one per part of it (``parts_of``), in day order; None when any cannot be opened."""
    info = _info(wh, user, month)
    if info is None:
        return None
    out = []
    for part in parts_of(info):
        seg = _load_part(folder(wh, user), month, part)
        if seg is None:
            return None
        out.append(seg)
    return out


def parts_of(info: dict) -> list[dict]:
    """The parts of a month's manifest, each with its ``rows``, ``files``, ``embedder_id`` and ``vocab_size``: the
    manifest itself when the month is one part (a month made whole), else its ``parts``."""
    parts = info.get("parts")
    return [info] if parts is None else list(parts)


def _files_of(info: dict) -> set[str]:
    """Every file a month's manifest names, over its parts."""
    return {name for part in parts_of(info) for name in part["files"].values()}


def _load_part(base: Path, month: str, info: dict) -> Segment | None:
    try:
        files = info["files"]
        with pa.OSFile(str(base / files["search"])) as f:
            meta = pa.ipc.open_file(f).read_all()
        rows = Rows(path=base / files["rows"], n=int(info["rows"]))
        arrays: dict[str, Any] = {
            p: np.asarray(np.load(path, mmap_mode="r")) if p == "lengths" else FileArray(path)
            for p in KW_PARTS
            for path in [base / files[f"kw_{p}"]]
        }
        kw = PostingSegment.from_arrays(arrays, int(info["vocab_size"]))
        emb = np.load(base / files["embeddings"], mmap_mode="r") if files.get("embeddings") else None
        index = ann.open_view(base / files["ann"]) if files.get("ann") else None
        # an index made before projections (a cosine index of the whole vectors) has none: searched as it is
        basis = np.load(base / files["ann_basis"]) if index is not None and files.get("ann_basis") else None
    except (FileNotFoundError, ValueError, KeyError, OSError, RuntimeError, EOFError):
        return None
    if meta.num_rows != info["rows"] or len(kw.lengths) != info["rows"] or meta.column_names != list(SEARCH_COLUMNS):
        return None
    width = basis.shape[1] if basis is not None else emb.shape[1] if emb is not None else None
    if index is not None and (
        emb is None or index.ndim != width or (basis is not None and basis.shape[0] != emb.shape[1])
    ):
        return None
    return Segment(
        month,
        meta,
        kw,
        info.get("embedder_id"),
        emb,
        rows,
        index,
        base / files["ann"] if index is not None else None,
        basis,
    )


def contents(wh: Path, user: str) -> Pack | None:
    """What the user's pack holds, made from their chunks now (None: they have none)."""
    segments = [segment_of(wh, user, m) for m in months(wh, user)]
    return Pack(tuple(s for s in segments if s is not None)) if segments else None


def segment_of(wh: Path, user: str, month: str) -> Segment | None:
    """One month's segment, made from its compact copy or its partitions now, its rows held (None: no chunks)."""
    source = _MonthChunks.of(wh, user, month)
    if source is None:
        return None
    held: list[pa.Table] = []
    made = _make(source, source.read(_SMALL), held.append)
    rows = pa.concat_tables(held) if held else source.read(META_COLUMNS).slice(0, 0)
    return Segment(month, made.meta, made.keyword, made.embedder_id, made.embeddings, Rows(rows))


#: Rows read at a time from a big month's copy: making its segment holds this many rows' text and terms, never the
#: month's. A whole number of ``BATCH_ROWS``, so each is cut into the rows file's batches on its own.
READ_ROWS = 16 * BATCH_ROWS


class _MonthChunks:
    """A month's chunks in the pack's ``ORDER``: a big compact copy (``compact.WHOLE_MONTH_BYTES``), read a batch at
    a time; a small one, read once and held; or (no copy: a small month) its copy's base and new days, or its
    partitions, sorted in memory. ``days`` (the first
    and last): only the rows of those days (a part of the month, ``refresh``), read from the copy the same ways."""

    def __init__(self, copy: Path | None, files: list[Path], days: tuple[dt.date, dt.date] | None = None):
        self.copy, self.files, self.days = copy, files, days
        self._held: pa.Table | None = None

    @classmethod
    def of(cls, wh: Path, user: str, month: str, days: tuple[str, str] | None = None) -> _MonthChunks | None:
        """The month's chunks, or (``days``: the first and last, ISO) those of the month's days in that range: from
        those days' partitions, or, when they are big (``compact.WHOLE_MONTH_BYTES``) and the month has a copy,
        from the copy a batch at a time."""
        c = compact.COMPACTS["memory_chunks"]
        copy = compact.path_for(wh, "memory_chunks", user, month)
        if days is None:
            # no copy: its base and the days added after it (``compact.refresh`` keeps them apart), or its partitions
            files = compact.month_parts(wh, c, user, month) if copy is not None else _month_sources(wh, user, month)
            return cls(copy, files) if files else None
        first, last = dt.date.fromisoformat(days[0]), dt.date.fromisoformat(days[1])
        span = (first + dt.timedelta(days=n) for n in range((last - first).days + 1))
        files = [f for d in span if (f := warehouse.partition_file(wh, c.source, d, user)).is_file()]
        if not files:
            return None
        big = copy is not None and total_size(files) >= compact.WHOLE_MONTH_BYTES
        return cls(copy, files, (first, last)) if big else cls(None, files)

    def _within(self, rows: pa.Table) -> pa.Table:
        """The rows of ``days`` (all of them without), read with their date column."""
        if self.days is None:
            return rows
        start, end = (pa.scalar(d, pa.date32()) for d in self.days)
        keep = pa.compute.and_(pa.compute.greater_equal(rows["date"], start), pa.compute.less_equal(rows["date"], end))
        return rows.filter(keep)

    def _names(self, columns: Sequence[str]) -> list[str]:
        return list(dict.fromkeys((*columns, *(("date",) if self.days is not None else ()))))

    def _whole(self) -> pa.Table | None:
        """Every row, held, unless the month is a big copy (None)."""
        if self._held is None and (self.copy is None or total_size([self.copy]) < compact.WHOLE_MONTH_BYTES):
            names = list(dict.fromkeys((*META_COLUMNS, "terms", "tfs", "embedding")))
            # a copy is in ORDER already (sorted by user, date, source, session, seq, chunk id first)
            self._held = (
                compact.scan(self.files, ", ".join(names), ORDER)
                if self.copy is None
                else self._within(compact.read_copy(self.copy, names))
            )
        return self._held

    def read(self, columns: Sequence[str]) -> pa.Table:
        """Some columns of every row (small ones: a search's, the ids)."""
        whole = self._whole()
        if whole is not None:
            return whole.select(list(columns))
        assert self.copy is not None
        return self._within(compact.read_copy(self.copy, self._names(columns))).select(list(columns))

    def batches(self, columns: Sequence[str]) -> Iterable[pa.Table]:
        """Every row of some columns, in tables of a whole number of ``BATCH_ROWS`` rows (but the last): a big
        copy ``READ_ROWS`` at a time, any other month whole."""
        whole = self._whole()
        if whole is not None:
            return [whole.select(list(columns))]
        assert self.copy is not None
        got = compact.iter_copy(self.copy, self._names(columns), READ_ROWS)
        return compact.rebatched((self._within(t).select(list(columns)) for t in got), READ_ROWS)


@dataclass(frozen=True)
class _Made:
    """What ``_make`` makes of a month besides its rows."""

    meta: pa.Table
    keyword: PostingSegment
    embedder_id: str | None
    embeddings: np.ndarray | None
    chunk_ids: pa.ChunkedArray


#: The columns of every row that making a segment reads whole: a few bytes a row.
_SMALL = ("chunk_id", *dict.fromkeys((*SEARCH_COLUMNS, *CODED)))


def _make(source: _MonthChunks, small: pa.Table, rows_out: Callable[[pa.Table], None]) -> _Made:
    """A segment's search columns, posting list and embeddings, made a batch of rows at a time; each batch's
    ``META_COLUMNS`` go to ``rows_out`` in order (``small``: the month's ``_SMALL`` columns, read whole). The same
    rows make the same arrays however they are batched: the vocabulary is in the order each term is first met, as
    one dictionary encoding of the month's terms gives it."""
    n = small.num_rows
    ids = [e for e in small["embedder_id"].to_pylist() if e]
    embedder = max(set(ids), key=lambda e: (ids.count(e), e)) if ids else None
    current = (
        pa.compute.equal(small["embedder_id"], embedder)
        .fill_null(False)
        .combine_chunks()
        .to_numpy(zero_copy_only=False)
        if embedder is not None
        else None
    )
    matrix: np.ndarray | None = None
    vocab: dict[str, int] = {}
    term_ids, tfs, lengths = [], [], []
    at = 0
    columns = list(dict.fromkeys((*META_COLUMNS, "terms", "tfs", *(("embedding",) if embedder else ()))))
    for batch in source.batches(columns):
        terms = batch["terms"].combine_chunks()
        encoded = pa.compute.dictionary_encode(terms.flatten())
        remap = np.fromiter(
            (vocab.setdefault(t, len(vocab)) for t in encoded.dictionary.to_pylist()),
            dtype=np.int32,
            count=len(encoded.dictionary),
        )
        term_ids.append(remap[encoded.indices.to_numpy(zero_copy_only=False)].astype(np.int32, copy=False))
        tfs.append(batch["tfs"].combine_chunks().flatten().to_numpy(zero_copy_only=False).astype(np.float32))
        lengths.append(np.diff(terms.offsets.to_numpy()))
        if current is not None:
            mine = current[at : at + batch.num_rows]
            if mine.any():
                col = batch["embedding"].combine_chunks().filter(pa.array(mine))
                if matrix is None:
                    matrix = np.zeros((n, len(col[0])), dtype=np.float32)
                vectors = col.flatten().to_numpy(zero_copy_only=False)
                matrix[at + np.flatnonzero(mine)] = vectors.reshape(-1, matrix.shape[1])
        rows_out(batch.select(list(META_COLUMNS)))
        at += batch.num_rows
    flat_ids = np.concatenate(term_ids) if term_ids else np.zeros(0, np.int32)
    del term_ids
    flat_tfs = np.concatenate(tfs) if tfs else np.zeros(0, np.float32)
    del tfs
    keyword = PostingSegment.build(
        list(vocab), flat_ids, flat_tfs, np.concatenate(lengths) if lengths else np.zeros(0, np.int64)
    )
    return _Made(small.select(list(SEARCH_COLUMNS)), keyword, embedder, matrix, small["chunk_id"])


def keyword_index(terms: pa.ListArray, tfs: pa.ListArray) -> KeywordIndex:
    """BM25 postings of chunks given as Arrow list columns (the vocabulary built in Arrow)."""
    encoded = pa.compute.dictionary_encode(terms.flatten())
    return KeywordIndex(
        encoded.dictionary.to_pylist(),
        tfs.flatten().to_numpy(zero_copy_only=False),
        np.diff(terms.offsets.to_numpy()) if len(terms) else np.zeros(0, np.int64),
        term_ids=encoded.indices.to_numpy(zero_copy_only=False),
    )


# --- making them ---------------------------------------------------------------------


def build(wh: Path, user: str, month: str, made: Made | None = None, kept: Kept | None = None) -> bool:
    """Write one month's segment from its chunks (or from ``made``, its files already made), after the parts
    ``kept`` of a set-aside segment whose files are on disk (``refresh``); returns False when the month has none
    (no segment)."""
    made = made if made is not None else segment_files((wh, user, month)) if kept is None else None
    parts = [*(kept.parts if kept else ()), *([made.info] if made is not None else [])]
    if not parts:
        drop(wh, user, month)
        return False
    base = folder(wh, user)
    base.mkdir(parents=True, exist_ok=True)
    sha = dict(kept.sha256) if kept else {}
    for name, data in (made.files if made is not None else {}).items():
        _put(base / name, lambda f, data=data: f.write(data))
        if made is not None and name == made.info["files"].get("ann"):
            faults.checkpoint("recall_pack.ann_written")
        sha[name] = hashlib.sha256(data).hexdigest()
    fsync_dir(base)
    faults.checkpoint("recall_pack.files")
    atomic_write_bytes(manifest(wh, user, month), _manifest_bytes(user, month, parts, sha))
    return True


#: What a part of a multi-part manifest keeps of the manifest its segment was made with.
_MONTH_KEYS = ("version", "user_id", "month", "sha256", "parts")


def _manifest_bytes(user: str, month: str, parts: list[dict], sha: Mapping[str, str]) -> bytes:
    """A month's manifest: one part's own (a month made whole), or its parts in day order and their rows in all."""
    own = [{k: v for k, v in p.items() if k not in _MONTH_KEYS} for p in parts]
    info: dict = {"version": VERSION, "user_id": user, "month": month}
    info |= own[0] if len(own) == 1 else {"rows": sum(int(p["rows"]) for p in own), "parts": own}
    info["sha256"] = {name: sha[name] for name in sorted(_files_of(info))}
    return (json.dumps(info, indent=1, sort_keys=True) + "\n").encode()


@dataclass(frozen=True)
class Kept:
    """The parts of a month's set-aside segment that its next segment keeps as they are, with their files'
    sha256."""

    parts: tuple[dict, ...]
    sha256: Mapping[str, str]


@dataclass(frozen=True)
class Made:
    """A segment's files (name -> bytes) and its manifest without the checksums."""

    files: dict[str, bytes]
    info: dict


def segment_files(args: tuple) -> Made | None:
    """The files of one (warehouse, user, month[, with its ANN index[, days]])'s segment, as bytes; writes nothing,
    so a pool worker may make them. ``days`` (the first and last, ISO): a part of the month, made of those days'
    partitions alone (see ``refresh``)."""
    wh, user, month = args[:3]
    with_ann = len(args) > 3 and bool(args[3])
    days = args[4] if len(args) > 4 else None
    source = _MonthChunks.of(wh, user, month, days)
    if source is None:
        return None
    small = source.read(_SMALL)
    coded = {c: pa.compute.dictionary_encode(small[c].combine_chunks()) for c in CODED}
    rows_file = io.BytesIO()
    writer: list = []  # the rows file's writer, opened on the first batch (its schema is the batch's)
    at = 0

    def write_rows(rows: pa.Table) -> None:
        nonlocal at
        for start in range(0, rows.num_rows, BATCH_ROWS):
            batch = _coded(_fresh(rows.slice(start, BATCH_ROWS)), coded, at)
            if not writer:
                writer.append(pa.ipc.new_file(rows_file, batch.schema, options=_IPC))
            writer[0].write_table(batch)
            at += batch.num_rows

    made = _make(source, small, write_rows)
    if not writer:  # no rows: the file of an empty table, as before
        writer.append(
            pa.ipc.new_file(rows_file, _coded(source.read(META_COLUMNS).slice(0, 0), coded, 0).schema, options=_IPC)
        )
    writer[0].close()
    # Named by what they hold (the chunk ids, the embedder and the keyword arrays) and by how the rows file is laid
    # out, so the same chunks make the same files, and neither the same chunks with new keyword terms (a new
    # chunker keeps ids) nor a rows file written another way ever overwrite a file that a reader, or ``verify``,
    # of the old manifest may be reading.
    arrays = made.keyword.arrays()
    h = hashlib.sha256(
        b"\n".join(c.encode() for c in made.chunk_ids.to_pylist())
        + f"\n{made.embedder_id}\n{VERSION}\n{ann.SPEC}\n{ROWS_LAYOUT}".encode()
    )
    for part in KW_PARTS:
        # an ndarray is a buffer; numpy's stubs declare __buffer__ only for Python 3.12 and later
        h.update(np.ascontiguousarray(arrays[part]).view(np.uint8))  # type: ignore[arg-type]
    key = h.hexdigest()[:16]
    names = {"rows": f"{key}.rows.arrow", "search": f"{key}.search.arrow"}
    files = {names["rows"]: rows_file.getvalue(), names["search"]: _arrow_file(made.meta)}
    for part in KW_PARTS:
        names[f"kw_{part}"] = f"{key}.kw-{part}.npy"
        files[names[f"kw_{part}"]] = _bytes(lambda f, a=arrays[part]: np.save(f, a))
    if made.embeddings is not None:
        names["embeddings"] = f"{key}.emb.npy"
        files[names["embeddings"]] = _bytes(lambda f: np.save(f, made.embeddings))
        # only the rows of the month's embedder: the others are zeros, which no cosine can rank
        own = pa.compute.equal(made.meta["embedder_id"], made.embedder_id).fill_null(False)
        index = (
            ann.index_files(made.embeddings, np.flatnonzero(own.to_numpy(zero_copy_only=False))) if with_ann else None
        )
        if index is not None:
            names["ann"], names["ann_basis"] = f"{key}.ann.usearch", f"{key}.ann-basis.npy"
            files[names["ann"]], files[names["ann_basis"]] = index
    dates = made.meta["date"]
    info = {
        "version": VERSION,
        "user_id": user,
        "month": month,
        "rows": made.meta.num_rows,
        "embedder_id": made.embedder_id,
        "vocab_size": made.keyword.size,
        "files": names,
        # the days it was made of: a part's range, or the month's first and last day with chunks
        "days": list(days)
        if days is not None
        else [str(pa.compute.min(dates)), str(pa.compute.max(dates))]
        if len(dates)
        else None,
        **({"ann": ann.SPEC} if "ann" in names else {}),
    }
    return Made(files, info)


_IPC = pa.ipc.IpcWriteOptions(compression="zstd")


def _arrow_file(rows: pa.Table) -> bytes:
    """The rows as an Arrow IPC file of one record batch, compressed with zstd, ``CODED`` columns as
    dictionaries."""
    rows = rows.combine_chunks()
    coded = {c: pa.compute.dictionary_encode(rows[c].combine_chunks()) for c in CODED if c in rows.column_names}
    table = _coded(rows, coded, 0)

    def write(f) -> None:
        with pa.ipc.new_file(f, table.schema, options=_IPC) as w:
            w.write_table(table, max_chunksize=max(1, table.num_rows))

    return _bytes(write)


def _fresh(rows: pa.Table) -> pa.Table:
    """The rows in new arrays of their own (a slice of a bigger array, or of several, is written with other
    padding): a rows file's bytes are then the same however its rows were read, whole or a batch at a time."""
    at = pa.array(np.arange(rows.num_rows))
    return pa.Table.from_arrays([pa.compute.take(c, at) for c in rows.columns], names=rows.column_names)


def _coded(rows: pa.Table, coded: dict[str, pa.DictionaryArray], at: int) -> pa.Table:
    """``rows`` (rows ``at``.. of their month) with each ``CODED`` column as its month's dictionary codes: one
    dictionary for the whole file."""
    cols = [
        pa.DictionaryArray.from_arrays(coded[c].indices.slice(at, rows.num_rows), coded[c].dictionary)
        if c in coded and c in rows.column_names
        else rows[c].combine_chunks()
        for c in rows.column_names
    ]
    return pa.Table.from_arrays(cols, names=rows.column_names)


def _bytes(write) -> bytes:
    buf = io.BytesIO()
    write(buf)
    return buf.getvalue()


def _put(path: Path, write) -> None:
    """Write a pack file beside its name, fsync it, rename it in: a reader that mapped the old one keeps it."""
    tmp = tmp_name(path)
    try:
        with open(tmp, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def refresh(
    wh: Path, users: Iterable[str] | None = None, check: bool = False, map_items=None, ann_from: int = ann.EXACT_BELOW
) -> int:
    """Make every missing month segment of every user (or of ``users``); returns how many users' packs changed.

    With ``check`` (a backfill), a segment whose files are not the bytes it was written
    with is made again too. Segments of months with no chunks left, and files no
    manifest names (the ones a new segment replaced, a pack of an older version), go.
    ``map_items`` (the run's process pool) makes the segments' bytes on every core;
    they are written here, in order. A user with ``ann_from`` chunks or more (``recall.exact_below``) gets each
    month's ANN index too; one who reaches it has every month's segment made again, with its index.

    A user's newest month whose segment was set aside for a night's new days (``warehouse.drop_compacts``) keeps
    it as its first parts and gets a part of the new days alone (``_appended``), so a night makes its own day's
    part, not the month's. Any other month is made whole, and a month with parts is made whole once a later month
    has chunks: a closed month is one part, as a reader searches it best.
    """
    root = wh / "compact" / "memory_chunks"
    if users is None:
        users = set(p.name.removeprefix("user_id=") for p in root.glob("user_id=*")) if root.is_dir() else set()
        packs = wh / "compact" / "recall_pack"
        users |= {p.name.removeprefix("user_id=") for p in packs.glob("user_id=*")} if packs.is_dir() else set()
    users = [u for u in sorted(users) if USER_ID_RE.match(u)]
    have = {user: months(wh, user) for user in users}
    # each manifest read once, and each user's folder listed once, however many months the history has
    infos = {}
    for user in users:
        base = str(folder(wh, user))
        infos[user] = {month: _info(wh, user, month, base) for month in have[user]}
    names = {user: _names(folder(wh, user)) for user in users}
    # Users searched approximately: past ``ann_from`` chunks, with embeddings to index (a keyword-only user has no
    # ANN index, so a night's part answers as the month made whole).
    big = {
        user
        for user in users
        if _large(wh, user, have[user], ann_from, infos[user]) and _embedded(wh, user, infos[user])
    }
    todo: list[tuple[tuple, Kept | None]] = []
    for user in users:
        for month in have[user]:
            info = infos[user][month]
            closed = month != have[user][-1] and info is not None and len(parts_of(info)) > 1
            if (
                _complete(info, names[user])
                and not (check and changed(wh, user, month))
                and not (user in big and not _indexed(info))
                and not closed
            ):
                continue
            # A user with ANN indexes gets whole months: which rows an approximate search scores exactly depends on
            # how the month is cut, so parts would answer otherwise than the month made whole.
            whole = info is not None or month != have[user][-1] or user in big
            found = None if whole else _appended(wh, user, month, names[user], check)
            if found is None:
                todo.append(((wh, user, month, user in big), None))
            else:
                kept, days = found
                todo.append(((wh, user, month, user in big, days), kept))
    changed_users = set()
    jobs = [args for args, _ in todo]
    made_all = (
        map_items(segment_files, jobs, nbytes=sum(_job_bytes(args) for args in jobs))
        if map_items
        else _in_process(segment_files, jobs)
    )
    for ((_, user, month, *_), keep), made in zip(todo, made_all, strict=False):
        if made is not None and not isinstance(made, Made):  # a worker's failure: raised here, as in one process
            raise ArchiveError(f"making the recall pack segment {user}/{month}: {made}")
        if build(wh, user, month, made, keep) if made is not None or keep else (drop(wh, user, month) or False):
            changed_users.add(user)
    made_months = {(args[1], args[2]) for args, _ in todo}
    for user in users:
        # A set-aside segment is spent once its month is made (or found made already), or has no chunks left.
        for month in sorted({m[1] for name in names[user] if (m := _SET_ASIDE.match(name))}):
            warehouse.drop_pack_base(wh, user, month)
        kept_infos = {m: info for m, info in infos[user].items() if (user, m) not in made_months}
        if _tidy(wh, user, set(have[user]), kept_infos):
            changed_users.add(user)
    return len(changed_users)


#: A month's new part takes in the part before it while that one spans at most this many times its days: the
#: parts of a month stay few (their spans about double from the newest back), and a day is made again a few times
#: a month, not once a night.
MERGE_SPAN = 2


def _appended(
    wh: Path, user: str, month: str, names: set[str], check: bool = False
) -> tuple[Kept, tuple[str, str]] | None:
    """For a month whose segment was set aside for new days: its parts kept as they are, and the days of the one
    part to make (the new days, and the parts before them it takes in, ``MERGE_SPAN``); None when there is no sound
    base (its manifest or list of days unreadable or not as kenang writes them, a file of it gone, or with
    ``check``, a file whose bytes are not those its manifest names)."""
    base = _set_aside(wh, user, month)
    try:
        added = warehouse.pack_added_days(wh, user, month)
        if base is None or base.get("version") != VERSION or not added or not _complete(base, names):
            return None
        parts = parts_of(base)
        first, last = min(added), max(added)
        for part in parts:
            days = part.get("days")
            if days is not None and dt.date.fromisoformat(days[1]) >= first:  # never: the base holds the days before
                return None
        while parts and parts[-1].get("days") and _span(parts[-1]["days"]) <= MERGE_SPAN * _span((first, last)):
            first = dt.date.fromisoformat(parts.pop()["days"][0])
        sha = base.get("sha256") or {}
        kept = Kept(tuple(parts), {n: sha[n] for p in parts for n in p["files"].values() if n in sha})
        if len(kept.sha256) != sum(len(p["files"]) for p in parts):
            return None
        if check and _differing(folder(wh, user), kept.sha256):
            return None
    except (OSError, ValueError, TypeError, KeyError, AttributeError, IndexError):
        return None
    return kept, (first.isoformat(), last.isoformat())


def _span(days) -> int:
    """The days from a part's first to its last, both counted."""
    a, b = (d if isinstance(d, dt.date) else dt.date.fromisoformat(d) for d in days)
    return (b - a).days + 1


def _job_bytes(args: tuple) -> int:
    """The bytes a segment job reads: its month's (``_chunk_bytes``), or a part's days' partitions."""
    wh, user, month = args[:3]
    if len(args) <= 4:
        return _chunk_bytes(wh, user, month)
    source = _MonthChunks.of(wh, user, month, args[4])
    if source is None:
        return 0
    return total_size([source.copy] if source.copy is not None else source.files)


def _chunk_bytes(wh: Path, user: str, month: str) -> int:
    """The bytes a month's segment is made from: its copy's, or its partitions'."""
    return total_size(_month_sources(wh, user, month))


def _month_sources(wh: Path, user: str, month: str) -> list[Path]:
    """What to read of a month's chunks: its copy, else its copy's base and the days added after it, else its
    partitions (``compact.sources``)."""
    return compact.sources(wh, "memory_chunks", user, [month])


def _large(wh: Path, user: str, have: list[str], ann_from: int, infos: dict[str, dict | None]) -> bool:
    """Whether the user has ``ann_from`` chunks or more: the rows of their segments' manifests (``infos``, each
    month's, read once by ``refresh``), and of the months without one (read from their Parquet footers only when
    it matters)."""
    if ann_from <= 0:
        return True
    total, unknown = 0, []
    for month in have:
        info = infos[month]
        if info is not None and isinstance(info.get("rows"), int):
            total += info["rows"]
        else:
            unknown.append(month)
    for month in unknown:
        if total >= ann_from:
            break
        total += sum(pq.ParquetFile(f).metadata.num_rows for f in _month_sources(wh, user, month))
    return total >= ann_from


def _set_aside(wh: Path, user: str, month: str) -> dict | None:
    """The manifest of a month's segment set aside for a night's new days; None when there is none, or it cannot
    be read."""
    try:
        base = json.loads(warehouse.pack_base(wh, user, month)[0].read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return base if isinstance(base, dict) else None


def _embedded(wh: Path, user: str, infos: dict[str, dict | None]) -> bool:
    """Whether the user's chunks may hold embeddings, which get an ANN index: False only when every month has a
    segment (``infos``, each month's manifest, or the one set aside for a night's new days) and none of them
    holds any, nor do the days added since a segment was set aside (a keyword-only user)."""
    for month, info in infos.items():
        if info is None:
            info = _set_aside(wh, user, month)
            if info is None:
                return True  # a month not made yet: its chunks may have them
            added = warehouse.pack_added_days(wh, user, month)
            if added is None or any(_may_embed(wh, user, day) for day in added):
                return True
        for part in parts_of(info):
            if not isinstance(part, dict) or not isinstance(files := part.get("files"), dict):
                return True
            if files.get("embeddings"):
                return True
    return False


def _may_embed(wh: Path, user: str, day: dt.date) -> bool:
    """Whether a day's memory_chunks partition may hold embeddings: by its footer, some row has an embedder."""
    try:
        groups = warehouse.column_stats(warehouse.partition_file(wh, MEMORY_CHUNKS, day, user), "embedder_id")
    except FileNotFoundError:
        return False  # no chunks that day
    except (OSError, pa.ArrowException):
        return True
    return any(stats is None or not stats.has_null_count or stats.null_count < rows for stats, rows in groups)


def _indexed(info: dict | None) -> bool:
    """Whether a month's segment (its manifest, or a part of one) has the ANN index it needs (none is needed
    without embeddings), in every part."""
    for part in parts_of(info or {}):
        files = part.get("files") or {}
        if files.get("embeddings") and not (files.get("ann") and part.get("ann") == ann.SPEC):
            return False
    return True


def _in_process(fn, items):
    return (fn(x) for x in items)


def _tidy(wh: Path, user: str, have: set[str], known: dict[str, dict | None] | None = None) -> bool:
    """Remove the segments of months without chunks, then every file no manifest names; whether any went.
    ``known``: manifests already read (month -> manifest), unchanged since."""
    base = folder(wh, user)
    if not base.is_dir():
        return False
    gone = False
    for name in _names(base):  # names, not a path each: a pack folder holds hundreds of files after years
        m = _MANIFEST.match(name)
        if m and m[1] not in have:
            drop(wh, user, m[1])
            gone = True
    named = {"month=" + m + ".json" for m in have}
    known = known or {}
    for month in have:
        info = known[month] if month in known else _info(wh, user, month)
        named |= _files_of(info) if info else set()
    for name in _names(base):  # a reader that opened a replaced file keeps it
        if name not in named and not name.startswith("."):
            (base / name).unlink(missing_ok=True)
    return gone


def _complete(info: dict | None, names: set[str]) -> bool:
    """Whether a month has a segment (its manifest) with every file it names, ``names`` being the files of its
    folder (one removed by hand is made again)."""
    try:
        return info is not None and all(name in names for name in _files_of(info))
    except (KeyError, AttributeError, TypeError):
        return False


_names = warehouse.file_names  # the names of the plain files in a pack folder (none when there is no folder)


def changed(wh: Path, user: str, month: str | None = None) -> list[str]:
    """Files of the user's segments (or one month's) whose bytes differ from the sha256 their manifest holds.

    A file that is gone is no problem: like a compact copy, the segment is then simply
    not used, and the next run makes it again."""
    out = []
    base = folder(wh, user)
    for m in [month] if month else months_with_manifests(wh, user):
        out += _differing(base, (_info(wh, user, m) or {}).get("sha256", {}))
    return out


def _differing(base: Path, shas: Mapping[str, str]) -> list[str]:
    """The files in ``base`` whose bytes are not the sha256 ``shas`` names for them (one that is gone is not)."""
    out = []
    for name, sha in sorted(shas.items()):
        try:
            if sha256_file(base / name) != sha:
                out.append(name)
        except FileNotFoundError:
            continue
    return out


def months_with_manifests(wh: Path, user: str) -> list[str]:
    base = folder(wh, user)
    return sorted(m[1] for p in base.iterdir() if (m := _MANIFEST.match(p.name))) if base.is_dir() else []


def users(wh: Path) -> list[str]:
    """Users with any segment."""
    root = wh / "compact" / "recall_pack"
    return (
        sorted(
            p.name.removeprefix("user_id=")
            for p in root.glob("user_id=*")
            if months_with_manifests(wh, p.name.removeprefix("user_id="))
        )
        if root.is_dir()
        else []
    )
