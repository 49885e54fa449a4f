"""Recall: load one user's chunks, then answer queries (the API behind ``kenang recall``).

``Recaller`` reads the user's ``memory_chunks`` (within an optional date range) and
the ``related_dates`` of their daily summaries from Parquet with an in-memory DuckDB,
so it never blocks, and is never blocked by, a running pipeline. The embedder and
the keyword index are built once; each ``search`` is then one query embedding, one
matrix-vector product and a few posting lists (``transforms.recall``). For the whole
history (no date range) it opens the user's recall pack instead when there is one
(``flows.store.recall_pack``): the posting list ready-made and read per query term, a
hit's text read from disk when it is shown, the embeddings memory-mapped; nothing is
built at load, and the heap holds a few numbers per chunk (date, key and embedder
masks, length).

Only chunks embedded by the configured embedder take part in the vector arm; if the
index holds chunks of another embedder (the config changed and no run has re-indexed
yet), ``stale`` counts them and the CLI says to run ``kenang backfill --reindex``.

Notebooks::

    from flows.query.recall import recall
    hits = recall("proxmox boot order", home="~/kenang-demo")
"""

from __future__ import annotations

import contextlib
import copy
import datetime as dt
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal, overload

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from flows.config import Settings, load_settings, pick_user, resolve_home
from flows.models import embed
from flows.store import ann, compact, recall_pack, warehouse
from schemas.tables import DAILY_SUMMARIES, MEMORY_CHUNKS
from transforms import timeq, translate
from transforms.chunk import KEY_SOURCES, terms_of
from transforms.errors import ModelRefused, ModelUnavailable, UsageError
from transforms.model import USER_ID_RE
from transforms.recall import (
    ChunkRef,
    Days,
    Embedder,
    Hit,
    KeywordIndex,
    RecallParams,
    SegmentedIndex,
    anchors,
    boost_anchors,
    boost_time,
    coverage,
    embedder_key,
    fuse,
    keyword_weight,
    only_a_time,
    relevance,
    select,
    time_window,
)


def recall_params(settings: Settings) -> RecallParams:
    """The search's knobs: kenang's, with what the config's ``recall:`` section sets."""
    return replace(
        RecallParams(),
        related_decay=float(settings.recall.related_decay),
        exact_below=int(settings.recall.exact_below),
    )


def index_users(settings: Settings) -> list[str]:
    """Users with anything in the recall index."""
    wh = settings.paths.warehouse
    if not warehouse.has_files(wh, MEMORY_CHUNKS):
        return []
    root = warehouse.table_dir(wh, MEMORY_CHUNKS)
    return sorted({p.parent.name.removeprefix("user_id=") for p in root.glob("date=*/user_id=*/data.parquet")})


def choose_user(settings: Settings, user: str | None) -> str:
    """The user to search: the one given, else the only one indexed."""
    return pick_user(
        user, lambda: index_users(settings), "the recall index is empty: run `kenang run` (or `kenang backfill`) first"
    )


#: The best keyword rows of a query whose cosines stay exact when the vector arm is approximate.
KEYWORD_ROWS = 1000


class _Rows(Sequence[ChunkRef]):
    """The loaded chunks as ``ChunkRef``s, each made when asked for (a search reads a handful of 100k): from a
    table, or from ``row`` (a recall pack's ``Pack.row``: a chunk's text is read from disk when it is a hit)."""

    def __init__(self, tbl=None, *, row=None, n: int = 0):
        if tbl is not None:
            cols = {k: tbl[k] for k in ("chunk_id", "user_id", "date", "session_id", "source", "text", "flagged")}
            self._row = lambda i: {k: c[i].as_py() for k, c in cols.items()}
            self._n = tbl.num_rows
        else:
            self._row, self._n = row, n

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, i: int) -> ChunkRef: ...

    @overload
    def __getitem__(self, i: slice) -> list[ChunkRef]: ...

    def __getitem__(self, i: int | slice) -> ChunkRef | list[ChunkRef]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self._n))]
        at = int(i) + self._n if i < 0 else int(i)
        if not 0 <= at < self._n:
            raise IndexError(i)
        c = self._row(at)
        return ChunkRef(
            c["chunk_id"], c["user_id"], c["date"], c["session_id"], c["source"], c["text"], tuple(c["flagged"] or ())
        )

    def __iter__(self) -> Iterator[ChunkRef]:
        return (self[i] for i in range(self._n))


@dataclass
class _Loaded:
    refs: _Rows
    embeddings: np.ndarray | recall_pack.Stacked | None  # rows of the current embedder; zeros elsewhere
    current: np.ndarray  # bool: row embedded by the current embedder
    keyword: KeywordIndex | SegmentedIndex
    related: dict[dt.date, tuple[dt.date, ...]]
    dates: np.ndarray  # datetime64[D] of each chunk, for narrowing a search by date
    is_key: np.ndarray  # bool: the chunk is one of its day's keys (summary, index line, facts)
    ann: list[ann.Block] | None = None  # the pack's segments with their ANN indexes, when every month has one
    days: Days | None = None  # each row's day as a number, made at the first approximate search
    newest: dt.date | None = None  # the newest day, read at the first search that asks
    not_current: np.ndarray | None = None  # the rows another embedder embedded (or none), found at the first search
    key_rows: np.ndarray | None = None  # np.flatnonzero(is_key), made at the first approximate search


class Recaller:
    """One user's recall index in memory, searched with one embedder.

    ``params``: the search's knobs, fixed for this recaller (default: ``recall_params(settings)``); another
    recaller in the same process keeps its own.
    """

    def __init__(
        self,
        settings: Settings,
        user: str | None = None,
        *,
        start: dt.date | None = None,
        end: dt.date | None = None,
        embedder: Embedder | None | Literal["config"] = "config",
        params: RecallParams | None = None,
    ):
        self.settings = settings
        self.params = recall_params(settings) if params is None else params
        self.user = choose_user(settings, user)
        self.start, self.end = start, end
        self.unavailable: str | None = None  # why the vector arm is off: its model server could not be used
        if embedder == "config":
            try:
                embedder = embed.make_embedder(settings, for_queries=True)
            except (ModelUnavailable, ModelRefused) as exc:  # the embedding server is down: keyword recall answers
                embedder, self.unavailable = None, str(exc)
        self.embedder = embedder
        self.embedder_id = embedder_key(self.embedder)
        self._data = self._load()
        #: Above ``exact_below``, days are grouped and relevance read over the rows that scored alone (False: over
        #: every row, as below it; the answers are the same, which tests check).
        self._sparse = True

    def with_params(self, params: RecallParams) -> Recaller:
        """This recaller's loaded index searched with other knobs (shared, not loaded again); this one is unchanged."""
        other = copy.copy(self)
        other.params = params
        return other

    @property
    def size(self) -> int:
        return len(self._data.refs)

    @property
    def stale(self) -> int:
        """Chunks embedded by another embedder than this one (left out of the vector arm)."""
        return int((~self._data.current).sum()) if self.embedder is not None else 0

    def _files(self, name: str):
        """The user's compact copies and partitions to read, listed when read (a run may drop a copy meanwhile)."""
        if not USER_ID_RE.match(self.user):
            return None
        return lambda: compact.sources(self.settings.paths.warehouse, name, self.user)

    def _load(self) -> _Loaded:
        wh = self.settings.paths.warehouse
        where = ["user_id = ?"]
        params: list[object] = [self.user]
        if self.start:
            where.append("date >= ?")
            params.append(self.start)
        if self.end:
            where.append("date <= ?")
            params.append(self.end)
        related = self._related()
        if not self.start and not self.end and (loaded := self._from_pack(related)) is not None:
            return loaded
        cols = "chunk_id, user_id, date, session_id, source, text, flagged, terms, tfs, embedder_id, embedding"
        tbl = _query(
            wh,
            MEMORY_CHUNKS,
            cols,
            " AND ".join(where),
            params,
            recall_pack.ORDER,
            files=self._files("memory_chunks"),
            sorted_if_copies=True,
        )
        refs = _Rows(tbl)
        keyword = recall_pack.keyword_index(tbl["terms"].combine_chunks(), tbl["tfs"].combine_chunks())
        current = np.asarray([e == self.embedder_id for e in tbl["embedder_id"].to_pylist()], dtype=bool)
        embeddings = None
        if self.embedder is not None:
            embeddings = np.zeros((len(refs), self.embedder.dim), dtype=np.float32)
            if current.any():
                col = tbl["embedding"].combine_chunks().filter(current)
                embeddings[current] = col.flatten().to_numpy(zero_copy_only=False).reshape(-1, self.embedder.dim)
        dates = tbl["date"].to_numpy(zero_copy_only=False).astype("datetime64[D]")
        return _Loaded(refs, embeddings, current, keyword, related, dates, _keys(tbl["source"]))

    def _related(self) -> dict[dt.date, tuple[dt.date, ...]]:
        summaries = _query(
            self.settings.paths.warehouse,
            DAILY_SUMMARIES,
            "date, related_dates",
            "user_id = ?",
            [self.user],
            "",
            files=self._files("daily_summaries"),
        )
        return {
            d: tuple(r or ())
            for d, r in zip(summaries["date"].to_pylist(), summaries["related_dates"].to_pylist(), strict=False)
        }

    def _from_pack(self, related) -> _Loaded | None:
        """The whole history from the user's recall pack; None when there is none to use."""
        if not USER_ID_RE.match(self.user):
            return None
        pack = recall_pack.load(self.settings.paths.warehouse, self.user)
        if pack is None:
            return None
        current = pack.mask("embedder_id", [self.embedder_id] if self.embedder_id is not None else [])
        embeddings: np.ndarray | recall_pack.Stacked | None = None
        blocks = None
        if self.embedder is not None:
            if current.any() and pack.embedder_id != self.embedder_id:
                return None  # the pack holds another embedder's matrix: build this one's
            if pack.embeddings is not None and pack.embeddings.shape[1] == self.embedder.dim:
                embeddings, blocks = pack.embeddings, pack.ann_blocks
            else:
                embeddings = np.zeros((pack.meta.num_rows, self.embedder.dim), dtype=np.float32)
        dates = pack.meta["date"].to_numpy(zero_copy_only=False).astype("datetime64[D]")
        keys = pack.mask("source", KEY_SOURCES)
        refs = _Rows(row=pack.row, n=pack.meta.num_rows)
        return _Loaded(refs, embeddings, current, pack.keyword, related, dates, keys, blocks)

    def scores(self, query: str, mode: str = "hybrid", *, meaning: str | None = None) -> np.ndarray:
        """Fused score of every loaded chunk for one query; ``meaning``: the text to embed, if not the query.

        The query glossed into the other language (``transforms.translate``) is searched too, and each chunk's
        two fused scores are joined (``params.gloss_fusion``, the gloss's weighed by ``params.gloss_weight``).
        """
        with self._data.keyword.remembering(), ann.one_blas_thread:
            return self._scored(query, mode, meaning)[0]

    def _scored(
        self, query: str, mode: str, meaning: str | None, within: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """(``scores``, each chunk's raw cosine with what the query embeds; None without a vector arm).

        ``within``: rows whose cosines must be exact even when the vector arm is approximate (the days a question
        names); the best keyword rows are too, so a row that ranks by both arms keeps its exact sum."""
        weight = self.params.gloss_weight
        other = translate.gloss(query) if weight else None
        if other and not any(self._data.keyword.has(t) for t in set(terms_of(other)) - set(terms_of(query))):
            other = None  # no chunk holds a word of the other language the gloss brings: nothing to find with it
        # What the gloss embeds: the gloss of what the query embeds (never the time words left out of it);
        # when that has no gloss, the gloss's vector arm is the query's own.
        texts = [meaning or query]
        if other and (glossed_meaning := translate.gloss(meaning) if meaning else other):
            texts.append(glossed_meaning)
        # the query's vectors are made on other threads while the keyword arm scores here
        vectors = _embedding(self.embedder, texts) if self.embedder is not None and mode != "keyword" else None
        p = self.params
        try:
            kws = (
                self._data.keyword.scores(query, glossed=p.gloss_terms),
                self._data.keyword.scores(other, glossed=p.gloss_terms) if other else None,
            )
        except BaseException:
            if vectors is not None:  # nothing of this search is left running
                with contextlib.suppress(Exception):
                    vectors()
            raise
        also = None
        if self._approximate(mode):
            also = np.zeros(self.size, dtype=bool) if within is None else within.copy()
            for kw in kws:
                if kw is not None and (hits := np.flatnonzero(kw > 0)).size:
                    also[_best(hits, kw[hits], KEYWORD_ROWS)] = True
        cos = self._cosines(texts, mode, also, vectors)
        raw = None if cos is None else cos[0]
        own = self._fused(query, raw, mode, kws[0])
        if not other:
            return own, raw
        glossed = self._fused(other, None if cos is None else cos[-1], mode, kws[1])
        if self.params.gloss_fusion == "max":
            return np.maximum(own, weight * glossed), raw
        return (own + weight * glossed) / (1.0 + weight), raw

    def _approximate(self, mode: str) -> bool:
        """Whether the vector arm asks the months' ANN indexes (``flows.store.ann``) rather than every vector."""
        return (
            mode != "keyword"
            and getattr(self._data, "ann", None) is not None
            and self.embedder is not None
            and self.size >= self.params.exact_below
        )

    def _cosines(
        self, texts: list[str], mode: str, also: np.ndarray | None = None, vectors: Callable[[], list] | None = None
    ) -> list[np.ndarray] | None:
        """Each loaded chunk's cosine with each text (a matrix-vector product each: faster here than one
        matrix product; or the ANN indexes' candidates and the ``also`` rows, exact, the rest the least of them);
        None: no vector arm. ``vectors``: the texts' vectors, already being made (``_embedding``)."""
        d = self._data
        if self.embedder is None or mode == "keyword":
            return None
        try:
            qs = (vectors or _embedding(self.embedder, texts))()
        except (ModelUnavailable, ModelRefused) as exc:  # the server went away: this query is keyword only
            self.unavailable = str(exc)
            return None
        if self._approximate(mode) and d.ann is not None:
            if d.key_rows is None:
                d.key_rows = np.flatnonzero(d.is_key)
            out = ann.approximate(
                d.ann,
                qs,
                also,
                self.params.ann_candidates,
                dates=d.dates,
                is_key=d.is_key,
                days=self._days(),
                key_rows=d.key_rows,
            )
        else:
            out = [_product(d.embeddings, q) for q in qs]
        if d.not_current is None:
            d.not_current = np.flatnonzero(~d.current)
        for cos in out:
            cos[d.not_current] = 0.0
        return out

    def _fused(self, query: str, cos: np.ndarray | None, mode: str, kw: np.ndarray | None = None) -> np.ndarray:
        p = self.params
        kw = self._data.keyword.scores(query, glossed=p.gloss_terms) if kw is None else kw
        return fuse(
            kw, cos, mode=mode, keyword_weight=keyword_weight(kw, p) if cos is not None else p.keyword_weight, params=p
        )

    def _days(self) -> Days:
        if self._data.days is None:
            self._data.days = Days.of(self._data.dates)
        return self._data.days

    def _newest(self) -> dt.date:
        dates = self._data.dates
        if not len(dates):
            return dt.date.today()
        if self._data.newest is None:  # read once: a million rows' maximum is milliseconds at every query
            self._data.newest = dates.max().astype(object)
        return self._data.newest

    def understand(self, query: str, now: dt.date | None = None) -> timeq.TimeQuery:
        """The time a query names, read relative to ``now`` (default: the newest day in the index)."""
        return timeq.parse(query, now or self._newest())

    def search(
        self,
        query: str,
        *,
        top_k: int | None = None,
        mode: str = "hybrid",
        expand: bool = True,
        start: dt.date | None = None,
        end: dt.date | None = None,
        now: dt.date | None = None,
        use_time: bool = True,
    ) -> list[Hit]:
        """The best days for a query; ``start``/``end`` narrow a warm index that holds more days.

        Narrowed here, the scores are those of the whole loaded index (its BM25 and cosine
        scaling), and only days in the range, related days included, are returned. A time
        the query names (``understand``) boosts its days and a *when* question ranks the
        day a thing happened first (``transforms.recall``, step 6); ``use_time=False``
        turns both off.
        """
        # each of the query's terms looked up once; BLAS on one thread (``ann.one_blas_thread``)
        with self._data.keyword.remembering(), ann.one_blas_thread:
            return self._search(query, top_k, mode, expand, start, end, now, use_time)

    def _search(self, query, top_k, mode, expand, start, end, now, use_time) -> list[Hit]:
        cfg, p = self.settings.recall, self.params
        if mode == "vector" and (self.embedder is None or (self._data.refs and not self._data.current.any())):
            why = (
                f"its embedding server could not be used: {self.unavailable}"
                if self.unavailable
                else "embedder.backend is none"
                if self.embedder is None
                else f"no chunk was embedded by the configured embedder ({self.embedder_id})"
            )
            raise UsageError(
                f"--mode vector needs embeddings, and this recall index is keyword-only ({why}); "
                "use --mode keyword or hybrid, or set embedder.backend in kenang.yaml and run "
                "`kenang backfill --reindex --start ... --end ...`"
            )
        if not query.strip() or not self._data.refs:
            return []
        tq = self.understand(query, now) if use_time else None
        past = [r for r in tq.ranges if r.start <= (now or self._newest())] if tq is not None else []
        rest = tq.residual if tq is not None and past else None  # the query less the past time it names
        # A past time is embedded without its words (its days are boosted instead); the keywords keep them, so a
        # name that reads like a time ("June Carter", "a song called Yesterday") is still found by its words.
        # A future time ("next week") stays in both: plans are made on earlier days.
        dates = self._data.dates
        inside = keep = None  # the rows of the past time named (widened), and of the range asked for
        if past:  # one window over the whole span named ("between May and July" takes June too)
            named = (min(r.start for r in past), max(r.end for r in past))
            lo, hi = time_window(*named, min((r.precision for r in past), key=lambda x: p.slack.get(x, 1)), p)
            inside = (dates >= np.datetime64(lo)) & (dates <= np.datetime64(hi))
        if start or end:
            keep = np.ones(len(dates), dtype=bool)
            if start:
                keep &= dates >= np.datetime64(start)
            if end:
                keep &= dates <= np.datetime64(end)
        within = None
        if self._approximate(mode) and (inside is not None or keep is not None):  # their rows are scored exactly
            within = np.zeros(self.size, dtype=bool)
            for rows in (inside, keep):
                if rows is not None:
                    within |= rows
        scores, cos = self._scored(query, mode, (rest or query) if past else None, within)
        # Relevance reads what the query asks without the time it names (the time boosts its days instead)
        # and no boost: the same match scores the same in any query. A query that is only a time is matched
        # by the days of that time.
        asked = rest if past and rest is not None else query
        cover = coverage(self._data.keyword, asked, glossed=p.gloss_terms)
        timely = inside is not None and only_a_time(asked)  # "what did I do last Saturday?": its days answer it
        if inside is not None:  # one boost over the whole span named
            if not (scores[inside] > 0).any():  # only a time was asked ("kemarin"): its days, by their keys
                scores = np.where(inside & self._data.is_key, 1e-3, scores)
            if timely:
                cover = np.where(inside, 1.0, cover)
            scores = boost_time(scores, dates, lo, hi, named=named, params=p)
        if mode != "vector" and (terms := anchors(rest if rest is not None else query)):
            scores = boost_anchors(scores, self._data.keyword, terms, params=p)
        if keep is not None:
            scores = np.where(keep, scores, 0.0)
        # approximate: few rows scored, so days are grouped, and relevance read, over them alone
        sparse = self._sparse and self._approximate(mode)
        hits = select(
            scores,
            self._data.refs,
            self._data.related,
            top_k=(top_k or cfg.top_k) * (2 if start or end else 1),
            expand=expand,
            dates=self._data.dates,
            cited_first=tq is not None and tq.asks_when,
            is_key=self._data.is_key,
            params=p,
            relevance=_relevance_of(cover, cos, p) if sparse else relevance(cover, cos, p),
            scored=np.flatnonzero(scores > 0) if sparse else None,
            days=self._days() if sparse else None,
        )
        if start or end:
            hits = [h for h in hits if (not start or h.date >= start) and (not end or h.date <= end)]
        if timely:  # a day of the time named is the answer, whatever its words; a day near it keeps its own
            hits = [replace(h, relevance=1.0) if named[0] <= h.date <= named[1] else h for h in hits]
        return hits[: top_k or cfg.top_k]


_EMBED_POOL: ThreadPoolExecutor | None = None


def _embedding(embedder, texts: list[str]) -> Callable[[], list[np.ndarray]]:
    """Each text's query vector, handed over when asked. An embedder that may run on threads at once
    (``concurrent``) starts now, on a pool's threads, side by side (a query and its gloss take about the time of
    one), and the caller works meanwhile; another embeds them one after the other when they are asked for."""
    global _EMBED_POOL
    if not getattr(embedder, "concurrent", False):
        return lambda: [embedder.embed_query(t) for t in texts]
    if _EMBED_POOL is None:
        _EMBED_POOL = ThreadPoolExecutor(2, thread_name_prefix="kenang-embed")
    started = [_EMBED_POOL.submit(embedder.embed_query, t) for t in texts]

    def vectors() -> list[np.ndarray]:
        wait(started)  # each, even when one fails: nothing is left running
        return [f.result() for f in started]

    return vectors


#: Rows of an in-memory embedding matrix multiplied at a time, the blocks on the search's threads (``_product``).
PRODUCT_ROWS = 32_768


def _product(embeddings, q: np.ndarray) -> np.ndarray:
    """Every row's cosine with ``q``: a recall pack's months (``recall_pack.Stacked``) or a matrix in memory in
    blocks of ``PRODUCT_ROWS``, side by side on the search's threads (BLAS keeps to one: ``ann.one_blas_thread``).
    The blocks are fixed, so a row's cosine is the same from search to search."""
    if isinstance(embeddings, np.ndarray) and len(embeddings) > PRODUCT_ROWS:
        blocks = [embeddings[i : i + PRODUCT_ROWS] for i in range(0, len(embeddings), PRODUCT_ROWS)]
        return np.concatenate([p for p in ann.products(blocks, q) if p is not None])
    return np.asarray(embeddings @ q)


def _best(rows: np.ndarray, values: np.ndarray, k: int) -> np.ndarray:
    """The ``k`` rows of the highest values, ties to the earlier rows (a stable sort's first ``k``), without
    sorting them all."""
    if len(rows) <= k:
        return rows
    neg = -values
    kth = np.partition(neg, k - 1)[k - 1]
    better = rows[neg < kth]
    return np.concatenate([better, rows[neg == kth][: k - len(better)]])


def _relevance_of(cover: np.ndarray, cos: np.ndarray | None, p: RecallParams):
    """One row's ``relevance``, computed when a hit asks for it (the same arithmetic as over every row)."""
    return lambda row: float(relevance(cover[row : row + 1], None if cos is None else cos[row : row + 1], p)[0])


def _keys(source) -> np.ndarray:
    """Which rows are their day's keys (``transforms.chunk.KEY_SOURCES``)."""
    return (
        pc.is_in(source.cast(pa.string()), value_set=pa.array(KEY_SOURCES, type=pa.string()))
        .to_numpy(zero_copy_only=False)
        .astype(bool)
    )


def _query(
    wh: Path, table, columns: str, where: str, params: list, tail: str, files=None, sorted_if_copies: bool = False
):
    """Rows of a table: from ``files()`` (a user's compact copies and partitions) when given, else every partition.

    A nightly run may drop a copy between the listing and the read (it is made again at
    the run's end); then the files are listed again, once. ``sorted_if_copies``: when
    every file is a copy, the rows are already in ``tail``'s order (each copy is sorted
    the same way, and the months are listed in order; a scan keeps file order), so the
    sort, which moves every embedding, is skipped.
    """
    for attempt in (1, 2):
        listed = files() if files is not None else None
        presorted = sorted_if_copies and listed and all(compact.is_copy(wh, f) for f in listed)
        if (listed is not None and not listed) or (listed is None and not warehouse.has_files(wh, table)):
            return table.schema.empty_table().select([c.strip() for c in columns.split(",")])
        con = warehouse.scratch()
        try:
            hive = "false" if listed is not None else "true"
            sql = (
                f"SELECT {columns} FROM read_parquet(?, hive_partitioning={hive}, union_by_name=true) "
                f"WHERE {where} {'' if presorted else tail}"
            )
            source = [str(f) for f in listed] if listed is not None else warehouse.glob(wh, table)
            return con.sql(sql, params=[source, *params]).to_arrow_table()
        except duckdb.IOException:
            if attempt == 2 or listed is None:
                raise
        finally:
            con.close()
    raise AssertionError("unreachable")


def recall(
    query: str,
    *,
    home: str | None = None,
    user: str | None = None,
    top_k: int | None = None,
    start: dt.date | None = None,
    end: dt.date | None = None,
    mode: str = "hybrid",
) -> list[dict]:
    """One query's hits, as plain dicts (the ``results`` of ``kenang recall --json``). For notebooks."""
    import os

    settings = load_settings(resolve_home(home, os.environ))
    r = Recaller(settings, user, start=start, end=end)
    return [h.as_dict(query) for h in r.search(query, top_k=top_k, mode=mode)]
