"""ANN indexes of recall-pack segments: the vector arm of a large history, read from disk.

Below ``exact_below`` chunks (a user's total; ``recall.exact_below`` in kenang.yaml,
default ``EXACT_BELOW``) recall's vector arm is exact: one matrix-vector product over
every segment's memory-mapped float32 matrix (``<id>.emb.npy``). A user with more gets,
per (user, month) segment, a usearch HNSW index (``<id>.ann.usearch``), made from the
segment's stored vectors, never by embedding again. The index does not hold the
vectors themselves: it holds each one projected onto the segment's ``BASIS`` principal
axes (``<id>.ann-basis.npy``, the (width, BASIS) projection; uncentred, the axes that
keep most of the vectors' inner products), in 8 bits. usearch scales each 8-bit vector,
and each query, to unit length, so the index ranks rows by the cosine of their
projections. Its only task is to choose candidates, which are then scored exactly, so it
needs the vectors' broad shape, not their last digits: at 256 of the bundled embedder's
896 dimensions an index is 40 % of one over the whole vectors, a search reads that much
less, and the indexes of a million chunks fit in memory beside the server (below). A
segment also holds its projection (about 0.9 MiB at 896 dimensions) while it is open.
An index made before projections (no basis in the manifest) is searched as it is until
the next run makes it again. Both files are
written beside the segment's other files by ``flows.store.recall_pack`` under the same
rules (named by what they hold, written beside their names and renamed in, in the
manifest with their sha256). usearch was chosen over faiss by ``benchmarks/ann.py``
(``benchmarks/README.md``).

A query then asks each segment's index for its ``CANDIDATES`` nearest rows and for its
``FARTHEST`` rows farthest from the query (the nearest to its negation, with a narrower beam: they only set
the floor below), and scores exactly, from the memory-mapped float32 matrix, those rows and the ones the
caller names (``also``: the best keyword rows, the days a question names). A row a search reads is kept
until the search ends (``KEPT_MIB`` at most), so the search's other queries (the question, its gloss) take it
from there; a month scored whole is read for each query. Every other row gets the lowest cosine
so found: ``transforms.recall.scale`` maps a query's cosines from their minimum, so the
vector arm keeps the weight it has in an exact search, and a row that is not a candidate
adds nothing to its day. The float32 matrix stays: it makes the exact arm below the
threshold and the exact cosines of the candidates above it (the projected 8-bit vectors
only choose them).

Indexes are built one thread per segment (a run's process pool makes segments on
every core): the same vectors make the same bytes. Readers open them memory-mapped
(``Index.restore(path, view=True)``): only the graph nodes a search visits are read.
The pages a search maps stay mapped for the next one while the process's file-backed
memory (``RssFile``) is at most ``RESIDENT_MIB`` (a page mapped again costs more than the
search that reads it); above it (a history whose indexes alone come near it), a search
hands the indexes' pages back.
"""

from __future__ import annotations

import contextlib
import ctypes
import io
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from transforms.recall import Days, RecallParams

#: A user's chunks below which the vector arm is exact (``recall.exact_below``).
EXACT_BELOW = RecallParams().exact_below
#: What the index stores and how it links: a change makes new files (it is in the segment's id).
DTYPE = "i8"
CONNECTIVITY = 16
EXPANSION_ADD = 128
#: Nearest rows asked of each segment's index per query, then scored exactly (benchmarks/ann.py).
CANDIDATES = RecallParams().ann_candidates
EXPANSION_SEARCH = 128
#: Rows asked of each segment's index as the farthest from a query, scored exactly: the least of their cosines is
#: the floor of the query's cosines (the index's vectors are projected, so its farthest is near the least, not it).
FARTHEST = 16
#: The farthest rows' search beam: a wide one finds rows a little farther, at more cost than the nearest rows' search.
FARTHEST_EXPANSION = 32
#: A segment whose share of ``also`` rows exceeds this is scored whole: one contiguous product beats a gather.
WHOLE_SHARE = 0.25
#: Rows of the best candidates' days scored whole per query (the rest of their days: only their keys).
DAY_ROWS = 2048
#: The vectors a search keeps of the rows it read, at most (MiB): at 1M chunks a question and its gloss read about 35.
KEPT_MIB = 64
#: Dimensions an index's vectors are projected to (the segment's principal axes), and the rows the axes are found from.
BASIS = 256
BASIS_SAMPLE = 8192
SPEC = f"usearch:{DTYPE}:M{CONNECTIVITY}:ef{EXPANSION_ADD}:ip:pca{BASIS}"
#: The file-backed memory (MiB) up to which a search leaves the index pages it read mapped for the next search.
RESIDENT_MIB = 600
#: Segments searched at once by a query: the cores this process may run on (at most 8).
SEARCH_THREADS = min(8, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)


def index_files(matrix: np.ndarray, rows: np.ndarray) -> tuple[bytes, bytes] | None:
    """The saved index of ``matrix``'s ``rows`` (keyed by row number) and its basis (an ``.npy`` file), or None when
    no row has a vector."""
    if not len(rows):
        return None
    from usearch.index import Index  # here: importing usearch takes longer than a quiet run's whole work

    vectors = np.ascontiguousarray(matrix[rows], dtype=np.float32)
    nonzero = np.linalg.norm(vectors, axis=1) > 0  # a zero vector has no direction: cosine 0 with every query
    if not nonzero.any():
        return None
    vectors, keys = vectors[nonzero], rows[nonzero].astype(np.uint64)
    axes = basis(vectors)
    projected = vectors @ axes
    # scaled so the projected rows' largest value is 1, in the 8-bit range (usearch also scales each row to unit
    # length: the scale changes no ranking); the query's projection by the same axes carries the same scale
    top = float(np.abs(projected).max())
    if top > 0:
        axes /= np.float32(top)
        projected /= np.float32(top)
    index = Index(
        ndim=axes.shape[1],
        metric="ip",
        dtype=DTYPE,
        connectivity=CONNECTIVITY,
        expansion_add=EXPANSION_ADD,
        expansion_search=EXPANSION_SEARCH,
    )
    index.add(keys, projected, threads=1)
    saved = index.save()
    assert saved is not None  # save() without a path returns the bytes
    out = io.BytesIO()
    np.save(out, axes)
    return bytes(saved), out.getvalue()


def basis(vectors: np.ndarray, width: int = BASIS) -> np.ndarray:
    """The (dim, ``width``) float32 projection of ``vectors`` onto their principal axes, uncentred (the axes that keep
    most of their inner products: a query's inner product with a row is about its projection's with the row's),
    found from at most ``BASIS_SAMPLE`` rows spread over them, each axis signed so its largest component is positive.
    Fewer dimensions than ``width``: all of them (a rotation, nothing lost)."""
    take = vectors
    if len(vectors) > BASIS_SAMPLE:
        take = vectors[np.linspace(0, len(vectors) - 1, BASIS_SAMPLE).astype(np.int64)]
    wide = take.astype(np.float64)
    _, axes = np.linalg.eigh(wide.T @ wide)  # ascending
    axes = axes[:, ::-1][:, : min(width, vectors.shape[1])]
    axes *= np.sign(axes[np.abs(axes).argmax(axis=0), np.arange(axes.shape[1])])
    return np.ascontiguousarray(axes, dtype=np.float32)


def open_view(path: Path) -> Any:
    """An index file memory-mapped, read only (``usearch.index.Index``)."""
    from usearch.index import Index

    index = Index.restore(str(path), view=True)
    if index is None:
        raise ValueError(f"{path.name} is not a usearch index")
    # usearch's property has a setter that its type stubs do not declare
    index.expansion_search = max(EXPANSION_SEARCH, CANDIDATES)  # type: ignore[misc]
    return index


@dataclass(frozen=True)
class Block:
    """One segment as the vector arm reads it: its first row in the pack, its rows, its matrix and index."""

    offset: int
    rows: int
    matrix: np.ndarray | None  # (rows, dim) float32, memory-mapped; None: no row has an embedding
    index: Any  # usearch Index (a view), or None: the segment has no index
    basis: np.ndarray | None = None  # (dim, width) float32: what a query is projected by for the index (``basis``)
    #: The index view's read-only mappings in this process, (start, end) addresses, found once (``views``) so a
    #: search hands their pages back without reading ``/proc/self/maps``; empty: not found, it is read then.
    pages: tuple[tuple[int, int], ...] = ()
    #: Held while the index is searched: a search of usearch's with ``threads=1`` uses one scratch context of the
    #: index, so two queries at once (the HTTP server's threads) take turns on each segment.
    lock: threading.Lock = field(default_factory=threading.Lock, compare=False, repr=False)


def approximate(
    blocks: Sequence[Block],
    queries: Sequence[np.ndarray],
    also: np.ndarray | None = None,
    candidates: int = CANDIDATES,
    *,
    dates: np.ndarray | None = None,
    is_key: np.ndarray | None = None,
    day_rows: int = DAY_ROWS,
    days: Days | None = None,
    key_rows: np.ndarray | None = None,
) -> list[np.ndarray]:
    """Every row's cosine with each query vector: exact for each segment's ``candidates`` nearest rows, the
    ``also`` rows and the rows of their days (below), the least of those elsewhere (module docstring). ``also``:
    bool per row. The rows scored for one query are scored for all (a query and its gloss are fused row by row).

    A day scores by its best chunk and its best key together (``transforms.recall.day_scores``), so with
    ``dates`` (each row's day, ascending, as a pack is) and ``is_key``, the key rows of every day a candidate or an
    ``also`` row is on are scored too, and every row of the best candidates' days, ``day_rows`` rows at most.
    ``days``: ``Days.of(dates)``, and ``key_rows``: ``np.flatnonzero(is_key)``, when the caller keeps them.
    """
    n = sum(b.rows for b in blocks)
    known = np.zeros(n, dtype=bool)
    zero_rows = any(b.matrix is None or (b.index is not None and len(b.index) < b.rows) for b in blocks)
    # Each segment's index is asked once for every query (a batch), its nearest rows and the rows farthest from
    # each (the nearest to its negation: the least cosines), and those rows are scored, the segments on every core
    # (usearch and the file reads let go of the GIL).
    with _Files() as files:
        if len(blocks) > 1 and SEARCH_THREADS > 1:
            found = [_pool().submit(_ask_and_score, b, queries, also, candidates, files) for b in blocks]
            try:
                asked = [f.result() for f in found]
            finally:
                wait(found)  # a segment that fails leaves none of the others reading files about to be closed
        else:
            asked = [_ask_and_score(b, queries, also, candidates, files) for b in blocks]

        outs = []
        for j, q in enumerate(queries):
            out = np.zeros(n, dtype=np.float32)
            mine = np.zeros(n, dtype=bool)
            near_rows = []
            for b, (near, got) in zip(blocks, asked, strict=True):
                if got is None:  # scored whole, here: one month's vectors held at a time (not kept)
                    _score(b, q, np.arange(b.rows), out, mine)
                elif got:
                    rows, cos = got[j]
                    out[rows + b.offset] = cos
                    mine[rows + b.offset] = True
                if near:
                    near_rows.append(near[j] + b.offset)
            if dates is not None and near_rows:
                nearest = np.concatenate(near_rows)
                _days(blocks, q, nearest, also, dates, is_key, day_rows, out, mine, files, days, key_rows)
            outs.append((q, out, mine))
            known |= mine
        starts = np.asarray([b.offset for b in blocks])
        result = []
        for q, out, mine in outs:
            missing = np.flatnonzero(known & ~mine)
            if len(missing):  # another query's rows (read already: taken from ``files``)
                for i in np.unique(np.searchsorted(starts, missing, "right") - 1):
                    b = blocks[int(i)]
                    rows = missing[(missing >= b.offset) & (missing < b.offset + b.rows)]
                    _score(b, q, rows - b.offset, out, mine, files)
            floor = float(out[known].min()) if known.any() else 0.0
            out[~known] = min(floor, 0.0) if zero_rows else floor  # rows without a vector have cosine 0
            for b in blocks:  # the exact arm's zeros for segments without embeddings
                if b.matrix is None:
                    out[b.offset : b.offset + b.rows] = 0.0
            result.append(out)
    if _file_rss_mib() <= RESIDENT_MIB:
        pass  # the pages read stay mapped for the next search (module docstring)
    elif all(b.pages or b.index is None for b in blocks):
        drop([p for b in blocks for p in b.pages])
    else:
        hand_back()
    return result


def _file_rss_mib() -> float:
    """This process's file-backed resident memory in MiB (``RssFile``); infinite where it cannot be read."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("RssFile:"):
                    return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        pass
    return float("inf")


class _OneBlasThread:
    """Within, numpy's BLAS runs each product on the calling thread alone (``one_blas_thread``)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._inside = 0
        self._saved: list[tuple[Any, int]] = []
        self._libs: list[Any] | None = None

    def _controllers(self) -> list[Any]:
        if self._libs is None:
            try:
                from threadpoolctl import ThreadpoolController

                self._libs = list(ThreadpoolController().select(user_api="blas").lib_controllers)
            except Exception:  # noqa: BLE001 - without threadpoolctl, BLAS keeps its threads: only slower
                self._libs = []
        return self._libs

    def __enter__(self) -> None:
        with self._lock:
            if not self._inside:
                self._saved = [(c, c.num_threads) for c in self._controllers()]
                for c, n in self._saved:
                    if n != 1:
                        c.set_num_threads(1)
            self._inside += 1

    def __exit__(self, *exc) -> None:
        with self._lock:
            self._inside -= 1
            if not self._inside:
                for c, n in self._saved:
                    if n != 1:
                        c.set_num_threads(n)


#: Held by every search and ``Recaller.scores`` (``flows.query.recall``): their products are small (a month's
#: candidates, a day's rows) and run side by side on ``_pool``'s threads; BLAS's own threads would split each small
#: product between the cores and then spin, waiting for the next, on the cores the search's threads need (at 1M
#: chunks a query cost 240 ms of CPU with them, 145 ms without). Nested and concurrent searches share it: BLAS gets
#: back the count the first of them found when the last ends. The USE embedder sets the count around each of its
#: calls too (threadpoolctl) and puts back what it found: a query's embedding, made while its search holds this,
#: finds and puts back one.
one_blas_thread = _OneBlasThread()


def serve_on_one_blas_thread() -> None:
    """For a process that answers searches (``kenang mcp``): BLAS on one thread from now on, set once from its main
    thread before it serves, and freed memory kept for the next search. OpenBLAS takes a count set from another
    thread unevenly (a server answers on worker threads: at 1M chunks its p50 read 134 to 156 ms with the count set
    around each search there); ``one_blas_thread`` then finds one and changes nothing. A search's arrays (the rows
    it reads, its score arrays) are tens of MiB: glibc hands such blocks back to the system when they are freed, and
    the next search takes them again, a page fault each 4 KiB (128 ms against 118 ms at 1M)."""
    for c in one_blas_thread._controllers():
        c.set_num_threads(1)
    libc = _libc()
    if libc is not None and hasattr(libc, "mallopt"):
        with contextlib.suppress(Exception):
            libc.mallopt(M_MMAP_THRESHOLD, 32 * 2**20)
            libc.mallopt(M_TRIM_THRESHOLD, 256 * 2**20)


M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt


def products(
    matrices: Sequence[np.ndarray | None], q: np.ndarray, after: Callable[[np.ndarray], None] | None = None
) -> list[np.ndarray | None]:
    """Each matrix's product with ``q`` (None for None), the matrices on ``_pool``'s threads; ``after``: called
    with each matrix once its product is made."""

    def each(m: np.ndarray | None) -> np.ndarray | None:
        if m is None:
            return None
        out = m @ q
        if after is not None:
            after(m)
        return out

    if len(matrices) > 1 and SEARCH_THREADS > 1:
        return list(_pool().map(each, matrices))
    return [each(m) for m in matrices]


_POOL: ThreadPoolExecutor | None = None


def _pool() -> ThreadPoolExecutor:
    """The threads segments are searched on, kept for the process (a pool a query costs milliseconds to start)."""
    global _POOL
    if _POOL is None:
        _POOL = ThreadPoolExecutor(SEARCH_THREADS, thread_name_prefix="kenang-ann")
    return _POOL


def _ask_and_score(
    b: Block, queries: Sequence[np.ndarray], also: np.ndarray | None, candidates: int, files: _Files | None = None
):
    """What ``approximate`` takes of a segment: ([], []) when it has no vectors; ([], None) when it is scored whole
    (no index, or too many ``also`` rows); else (each query's nearest rows, each query's (rows, cosines)), the rows
    being its nearest, its farthest and the segment's ``also`` rows, in the segment's own numbering. The rows are
    read once for every query, and each query's product is over its own rows, as ``_score`` of them alone would
    make it (a row's cosine depends on the rows it is computed with)."""
    if b.matrix is None:
        return [], []
    extra = np.flatnonzero(also[b.offset : b.offset + b.rows]) if also is not None else np.zeros(0, np.int64)
    if b.index is None or len(extra) > WHOLE_SHARE * b.rows:
        return [], None
    batch = np.stack(queries)
    if b.basis is not None:
        batch = batch @ b.basis
    with b.lock:
        found = b.index.search(batch, candidates, threads=1)
        beam = b.index.expansion_search
        b.index.expansion_search = FARTHEST_EXPANSION
        try:
            farthest = b.index.search(-batch, FARTHEST, threads=1)
        finally:
            b.index.expansion_search = beam
    if len(queries) == 1:  # usearch answers one query with Matches, several with BatchMatches
        near, far = [found.keys.astype(np.int64)], [farthest.keys.astype(np.int64)]
    else:
        near = [found[i].keys.astype(np.int64) for i in range(len(queries))]
        far = [farthest[i].keys.astype(np.int64) for i in range(len(queries))]
    each = [np.unique(np.concatenate([near[j], far[j], extra])) for j in range(len(queries))]
    union = np.unique(np.concatenate(each))
    vecs = vectors(b.matrix, union, files)
    scored = [
        (rows, np.asarray(vecs[np.searchsorted(union, rows)] @ q, dtype=np.float32))
        for rows, q in zip(each, queries, strict=True)
    ]
    return near, scored


def hand_back(suffix: str = ".ann.usearch") -> None:
    """Drop the pages of this process's read-only mappings of ``suffix`` files (the indexes' views): they stay
    in the system's file cache for the next search, but a page mapped into the process counts in its RSS, and
    Linux maps whole cached folios (up to megabytes) around each page a search reads. usearch keeps its
    mappings to itself, so they are found in ``/proc/self/maps``; elsewhere this does nothing."""
    drop([r for path, ranges in _mappings().items() if path.endswith(suffix) for r in ranges])


def views(paths: Sequence[Path | str]) -> list[tuple[tuple[int, int], ...]]:
    """Each file's read-only mappings in this process (``Block.pages``), read from ``/proc/self/maps`` once."""
    found = _mappings()
    return [tuple(found.get(os.path.realpath(p), ())) for p in paths]


def drop(ranges: Sequence[tuple[int, int]]) -> None:
    """Hand back the pages of these read-only mappings (``hand_back``)."""
    libc = _libc()
    if libc is None:
        return
    for lo, hi in ranges:
        libc.madvise(ctypes.c_void_p(lo), ctypes.c_size_t(hi - lo), MADV_DONTNEED)


def _mappings() -> dict[str, list[tuple[int, int]]]:
    """The read-only file mappings of this process, by path (none where ``/proc/self/maps`` cannot be read)."""
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return {}
    out: dict[str, list[tuple[int, int]]] = {}
    for line in lines:
        fields = line.split(maxsplit=5)
        if len(fields) < 6 or "w" in fields[1] or not fields[5].startswith("/"):
            continue  # a writable mapping may hold changes that dropping would lose: never touched
        lo, hi = (int(x, 16) for x in fields[0].split("-"))
        out.setdefault(fields[5], []).append((lo, hi))
    return out


MADV_DONTNEED = 4  # Linux


def _libc():
    global _LIBC
    if _LIBC is False:
        try:
            _LIBC = ctypes.CDLL(None, use_errno=True)
            _LIBC.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        except (OSError, AttributeError):
            _LIBC = None
    return _LIBC


_LIBC: Any = False


def _score(
    b: Block, q: np.ndarray, rows: np.ndarray, out: np.ndarray, known: np.ndarray, files: _Files | None = None
) -> None:
    """Exact cosines of a segment's ``rows`` (its own numbering) from its float32 matrix, into ``out``."""
    if b.matrix is None or not len(rows):
        return
    out[rows + b.offset] = np.asarray(vectors(b.matrix, rows, files) @ q, dtype=np.float32)
    known[rows + b.offset] = True


class _Files:
    """The matrices' files a search reads, each opened once and closed when the search ends, and the rows read from
    each, kept until then: a query and its gloss score many of the same rows (their candidates, their best days),
    and a row read once is not read again."""

    def __init__(self) -> None:
        self._fds: dict[str, int] = {}
        self._opening = threading.Lock()  # a search's threads may read one file at once
        self._read: dict[str, list[tuple[np.ndarray, np.ndarray, np.ndarray]]] = {}  # (rows ascending, order, vectors)
        self._kept = 0  # bytes of vectors kept
        self._closed = False

    def fd(self, path: str) -> int:
        with self._opening:
            if self._closed:
                raise ValueError("the search's files are closed")
            if path not in self._fds:
                self._fds[path] = os.open(path, os.O_RDONLY)
            return self._fds[path]

    def recall(self, path: str, rows: np.ndarray, out: np.ndarray) -> np.ndarray:
        """Fill ``out`` (one row each) with the vectors of ``rows`` already read from ``path``; which were."""
        have = np.zeros(len(rows), dtype=bool)
        for held, order, vecs in self._read.get(path, ()):
            at = np.minimum(np.searchsorted(held, rows), len(held) - 1)
            hit = ~have & (held[at] == rows)
            out[hit] = vecs[order[at[hit]]]
            have |= hit
        return have

    def keep(self, path: str, rows: np.ndarray, vecs: np.ndarray) -> None:
        """Remember the vectors of ``rows`` (one row each of ``vecs``, made read-only) read from ``path``, while
        the search keeps at most ``KEPT_MIB`` of them (a time window's rows are many: those are read again)."""
        if not len(rows):
            return
        order = np.argsort(rows, kind="stable")
        with self._opening:
            if self._kept + vecs.nbytes <= KEPT_MIB * 2**20:
                self._kept += vecs.nbytes
                vecs.flags.writeable = False
                self._read.setdefault(path, []).append((rows[order], order, vecs))

    def __enter__(self) -> _Files:
        return self

    def __exit__(self, *exc) -> None:
        with self._opening:
            self._closed = True
            for fd in self._fds.values():
                os.close(fd)
            self._fds.clear()
        self._read.clear()


def vectors(matrix: np.ndarray, rows: np.ndarray, files: _Files | None = None) -> np.ndarray:
    """``matrix[rows]``; from a memory-mapped matrix, read from its file (each run of consecutive rows at once),
    so its pages are never mapped: a mapped page counts in the reader's RSS, and Linux maps a whole cached
    folio (up to megabytes) around each page read. ``files``: the open files to read from (else opened here), and
    the rows the search has read already (taken from there, not read again)."""
    path = getattr(matrix, "filename", None)
    if not isinstance(matrix, np.memmap) or not path or matrix.dtype != np.float32 or not matrix.flags.c_contiguous:
        return np.asarray(matrix[rows])
    rows = np.asarray(rows, dtype=np.int64)
    out = np.empty((len(rows), matrix.shape[1]), dtype=np.float32)
    if files is None:
        with _Files() as opened:
            _read_rows(matrix, path, rows, out, opened)
        return out
    have = files.recall(path, rows, out) if len(rows) else np.ones(0, dtype=bool)
    if have.all():
        return out
    need = rows[~have]
    got = out if not have.any() else np.empty((len(need), matrix.shape[1]), dtype=np.float32)
    _read_rows(matrix, path, need, got, files)
    if got is not out:
        out[~have] = got
    files.keep(path, need, got)
    return out


def _read_rows(matrix: np.memmap, path: str, rows: np.ndarray, out: np.ndarray, files: _Files) -> None:
    """Read ``rows`` of a memory-mapped float32 matrix from its file into ``out``."""
    width = matrix.shape[1] * 4
    # an ndarray is a buffer; numpy's stubs declare __buffer__ only for Python 3.12 and later
    buf = memoryview(out).cast("B")  # type: ignore[arg-type]
    starts = np.flatnonzero(np.diff(rows, prepend=-2) != 1)
    ends = np.append(starts[1:], len(rows))
    at = (matrix.offset + rows[starts] * width).tolist()
    fd = files.fd(path)
    for lo, hi, offset in zip(starts.tolist(), ends.tolist(), at, strict=True):
        if os.preadv(fd, [buf[lo * width : hi * width]], offset) != (hi - lo) * width:
            raise OSError(f"{Path(path).name} is shorter than its header says")


def _days(
    blocks, q, near, also, dates, is_key, budget, out, known, files=None, days: Days | None = None, key_rows=None
) -> None:
    """Score the rows of the candidates' days (``approximate``): whole days, best first, within ``budget`` rows,
    then the key rows of every other day a candidate or an ``also`` row is on. ``days``: ``Days.of(dates)``, and
    ``key_rows``: ``np.flatnonzero(is_key)``, made once by the caller."""
    days = Days.of(dates) if days is None else days
    starts = np.asarray([b.offset for b in blocks])
    by_cos = near[np.argsort(-out[near], kind="stable")]
    ranked = list(dict.fromkeys(days.of_row[by_cos].tolist()))
    if also is not None:
        seen = set(ranked)
        ranked += [d for d in dict.fromkeys(days.of_row[also].tolist()) if d not in seen]
    if not ranked:
        return
    ids = np.asarray(ranked, dtype=np.int64)
    if days.ascending:
        bounds = np.append(days.first, len(dates))
        los, his = bounds[ids], bounds[ids + 1]
    else:  # not a pack's order: as the days' searches always read
        los, his = np.searchsorted(dates, days.days[ids], "left"), np.searchsorted(dates, days.days[ids], "right")
    owners = np.searchsorted(starts, los, "right") - 1
    sizes = his - los
    whole = np.zeros(len(ids), dtype=bool)  # the days scored whole: best first, each that still fits the budget
    left = budget
    for k, size in enumerate(sizes.tolist()):
        if 0 < size <= left:
            whole[k] = True
            left -= size
    day = np.repeat(np.flatnonzero(whole), sizes[whole])  # each row's day (its place in ``ranked``)
    rows = _ranges(los[whole], sizes[whole])
    rest = np.flatnonzero(~whole & (sizes > 0))
    if is_key is not None and len(rest):  # the other days: their key rows
        keys = np.flatnonzero(is_key) if key_rows is None else key_rows
        first, last = np.searchsorted(keys, los[rest]), np.searchsorted(keys, his[rest])
        day = np.concatenate([day, np.repeat(rest, last - first)])
        rows = np.concatenate([rows, keys[_ranges(first, last - first)]])
    unknown = ~known[rows]  # the days' rows are apart: scoring one day changes no other day's
    rows, day = rows[unknown], day[unknown]
    if not len(rows):
        return
    # by segment (in the order the ranked days first name them), then by day in rank order (rows ascending)
    segments, named_at = np.unique(owners, return_index=True)
    named = np.argsort(np.argsort(named_at))[np.searchsorted(segments, owners)]  # each day's segment's place
    order = np.lexsort((day, named[day]))
    rows, day = rows[order], day[order]
    cuts = np.flatnonzero(np.diff(day)) + 1
    groups: dict[int, list[np.ndarray]] = {}  # each segment's days to score, each day's rows (the pack's numbers)
    for owner, each in zip(owners[day[np.concatenate([[0], cuts])]].tolist(), np.split(rows, cuts), strict=True):
        groups.setdefault(owner, []).append(each)
    for owner, days_rows in groups.items():
        _score_each(blocks[owner], q, days_rows, out, known, files)


def _ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The rows ``starts[i]`` to ``starts[i] + lengths[i]`` of each i, one after the other."""
    total = int(lengths.sum())
    if not total:
        return np.zeros(0, dtype=np.int64)
    before = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    return np.repeat(np.asarray(starts, dtype=np.int64) - before, lengths) + np.arange(total)


def _score_each(
    b: Block, q: np.ndarray, groups: list[np.ndarray], out: np.ndarray, known: np.ndarray, files: _Files | None
) -> None:
    """``_score`` of each group of a segment's rows (the pack's numbers), with one read of all their vectors and one
    product per group size: a product over stacked matrices is each matrix's own, so every cosine is the one a
    ``_score`` of its group alone gives (a row's cosine depends on the rows it is computed with)."""
    if b.matrix is None:
        return
    every = np.concatenate(groups)
    vecs = vectors(b.matrix, every - b.offset, files)
    sizes = np.asarray([len(g) for g in groups])
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    for k in np.unique(sizes).tolist():
        first = starts[sizes == k]
        at = first[:, None] + np.arange(k)  # (groups of k, k): rows of ``every`` and ``vecs``
        out[every[at]] = np.asarray(vecs[at] @ q, dtype=np.float32)
        known[every[at]] = True
