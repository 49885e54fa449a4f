"""Recall search, pure: BM25 keyword scores, cosine scores, their fusion, days, related dates.

A search runs over one user's chunks (``ChunkSet``), already filtered by date range:

1. **Keyword**: Okapi BM25 (k1 = 1.2, b = 0.75) over the chunks' ``terms``, from a
   term-sorted posting list built once per loaded set (``KeywordIndex``).
2. **Vector**: cosine of the query embedding with every chunk embedding, by brute
   force (one matrix-vector product), so the ranking is exact.
3. **Fusion** (``fuse``), a documented weighted sum of the two arms, each scaled to
   [0, 1] over the loaded chunks:
   ``score = (w_kw * bm25 / max(bm25) + w_vec * (cos - min(cos)) / (max(cos) - min(cos))) / (w_kw + w_vec)``
   with ``w_kw = 1`` and ``w_vec = 2``. Scaling the cosines matters: embedders crowd
   them into a narrow band (e5's sit between about 0.7 and 0.9), so raw cosines would
   let BM25 decide alone (``benchmarks/recall_eval.py`` measures both).
   ``keyword`` mode is ``w_vec = 0``, ``vector`` mode is ``w_kw = 0``. A search
   through ``Recaller`` can weigh the keyword arm by how strongly anything matched
   (``keyword_weight``): ``w_kw = min(1, max(bm25) / keyword_full)`` (at least 0.05);
   ``keyword_full`` is None (always the full weight) since chunker 3: with pairs and the
   gloss, the tune halves ranked a shrinking keyword arm lower. Reciprocal
   Rank Fusion, the baseline it is compared with, lives in ``benchmarks/evaluation.py``.
4. **Days**: a day scores as its best transcript chunk and its best key (summary,
   MEMORY_INDEX line, the user's facts: ``transforms.chunk.KEY_SOURCES``), weighed
   apart: ``(best transcript + key_weight * best key) / (1 + key_weight)``, ``key_weight``
   0.75 (``max(window, key)``, and weights 0.25 to 1.5, ranked lower by the mean MRR of the tune halves with
   chunker 3's pairs); the top days
   are the direct hits, each shown by its best chunk. A chunk with no keyword match and
   no positive cosine (score 0) is never a result.
5. **Related dates**: for each of the top ``k`` direct days, each day in its summary's
   ``related_dates`` that has chunks in range is pulled in at the parent's score times
   ``decay`` (0.7), with its own best chunk, ``via = related:<parent date>``. A day
   keeps the higher of its direct and related scores. The final top ``k`` is taken over
   both.
6. **Time** (``transforms.timeq``): a query that names a time ("last Saturday",
   "bulan lalu", "on May 2nd") is scored without those words, and the chunks of days
   in the named range get their score times ``1 + time_boost`` (3): a day in range
   needs only a third of an out-of-range day's score to rank above it, and a query
   about a time with nothing in range still finds the best days elsewhere. The
   ``slack`` days around the range (by its precision: people misremember a day, not a
   month) get ``1 + slack_boost * time_boost`` (1.5), so the day named outranks its
   neighbours on equal text. A question that asks *when* ranks
   the day a thing happened over the days that only mention it: a direct hit whose
   summary cites another day (``related_dates``) lifts that day just above itself
   (``select(cited_first=True)``) when the cited day scores at least ``when_min`` of it
   on its own, or when the hit's own chunk names that day by date (``named_days``).
7. **Identifiers** (``anchors``): a query term with a digit or joined by ``. : / -``
   ("137", "pve-02.lan") multiplies the score of each row holding it by up to
   ``1 + anchor_boost`` (``boost_anchors``), unless more than ``anchor_share`` of the
   rows hold it.
8. **The other language**, both ways. Each chunk's keyword terms carry its gloss into
   the other language, marked (``transforms.chunk.GLOSS_MARK``), and a query's own
   terms meet them too (``gloss_terms``): the keyword arm of "when did the cat knock
   the Pi off" matches "kucingku jatuhin Pi-nya". And ``flows.query.recall`` also
   scores the query's gloss (``transforms.translate``) and joins each row's two fused
   scores, ``(own + w * gloss) / (1 + w)`` with ``w = gloss_weight``, before steps 6
   and 7; not when no row holds, as written, any word the gloss brings (an archive in
   one language, unless the gloss brings a loan word of the list that it holds).

9. **Relevance and match**: each hit also carries a ``relevance`` in [0, 1] that no step
   above changes (no scaling over the loaded chunks, no boost, no decay, no lift), so it
   means the same in any query: the logistic of the shown chunk's ``coverage`` (the
   idf-weighted share of the query's terms it holds, its gloss included) and its raw
   cosine with the query (``relevance_hybrid``; ``relevance_keyword`` without a vector
   arm). A related day keeps its own chunk's relevance. ``match_of`` reads an answer's
   best hit: ``strong`` from ``match_strong``, ``weak`` from ``match_weak``, else ``none``.
   The constants were fitted on the tune halves (``benchmarks/recall_match.py``).

The knobs named here in lower case are the fields of ``RecallParams``, handed to each call (a ``Recaller``
builds its own from the config); no module global is read or written at search time.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import re
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import NamedTuple, Protocol

import numpy as np

from schemas import lexicon
from transforms import chunk, timeq
from transforms.chunk import query_terms, surface_words, terms_of

K1 = 1.2
B = 0.75
SNIPPET_CHARS = 240
NAMED_PLACES, NAMED_AROUND = 8, 40  # a chunk is read for dates at most at 8 places, 40 characters each side


@dataclass(frozen=True)
class RecallParams:
    """Every knob of a search, fixed for the ``Recaller`` (or the call) it is handed to; nothing reads a global.

    The defaults are kenang's. ``flows.query.recall`` builds one per ``Recaller`` from the config (``recall:``
    sets ``related_decay``); a benchmark or a test makes its own with ``dataclasses.replace(RecallParams(), ...)``,
    so two searches in one process never see each other's settings. BM25's ``K1`` and ``B`` stay constants: they
    are made into a keyword index's weights when it is built. What changes the stored terms (the chunks' glosses,
    the granularity) is the chunker's, in the index key (``transforms.chunk``), never a knob here.
    """

    keyword_weight: float = 1.0
    vector_weight: float = 2.0
    related_decay: float = 0.7
    #: A user's chunks from which the vector arm is approximate (``recall.exact_below``): below, every cosine is
    #: computed; from it, each month's ANN index names ``ann_candidates`` rows to compute (``flows.store.ann``).
    exact_below: int = 200_000
    ann_candidates: int = 100
    #: Tuned on the tune halves of both evaluation sets (benchmarks/recall_tune.py); the test halves are read apart.
    time_boost: float = 2.0
    #: Days added on each side of a named time, by its precision: people misremember days, not months.
    slack: Mapping[str, int] = field(
        default_factory=lambda: MappingProxyType({"day": 1, "part": 2, "week": 1, "month": 3, "year": 7})
    )
    #: The share of time_boost a day of that slack gets: the day named is the likeliest, its neighbours only
    #: possible ("On April 30th, what did we talk about?" ranked April 29 first when the two counted alike).
    slack_boost: float = 0.25
    key_weight: float = 0.75
    #: The best BM25 score at which the keyword arm counts fully in a hybrid search; below it, its weight shrinks in
    #: proportion (a query in the other language matches a word or two by chance). None: always fully (chunker 3's
    #: choice on the tune halves; 24 was chunker 2's).
    keyword_full: float | None = None
    key_fusion: str = "mean"  # 'mean': (window + w * key) / (1 + w); 'max': max(window, w * key)
    when_min: float = 0.9
    #: A when-question also lifts a cited day that the hit's own chunk names by date (``named_days``).
    when_named: bool = True
    when_lift: float = 1.01
    #: A row holding the query's identifier terms ("exit code 137", "pve-02.lan") counts this much more, when
    #: such a term is in at most anchor_share of the rows (``boost_anchors``).
    anchor_boost: float = 1.0
    anchor_share: float = 0.1
    #: The query glossed into the other language (``transforms.translate``) is searched too; a chunk's two fused
    #: scores are joined by gloss_fusion: 'mean' is (own + w * gloss) / (1 + w), 'max' is max(own, w * gloss),
    #: with w = gloss_weight (0: no gloss).
    gloss_weight: float = 0.75
    gloss_fusion: str = "mean"
    #: A query's words also meet the chunks' glosses into the other language (``transforms.chunk.GLOSS_MARK``
    #: terms, chunker 4); False: only the chunks' own words (an ablation of the benchmarks). Query-side only:
    #: the chunks' glossed terms are stored either way.
    gloss_terms: bool = True
    #: Relevance (``relevance``): a logistic of two signals of a chunk that no boost touches, the query's terms it
    #: holds (``coverage``) and the raw cosine of its embedding with the query's, as (intercept, coverage weight,
    #: cosine weight); ``relevance_keyword`` is the same without the cosine, for a search without a vector arm.
    #: Fitted on the tune halves and the tune half of the unrelated questions (benchmarks/recall_match.py), and
    #: frozen here: tests/test_recall_match.py checks them against that run's output.
    relevance_hybrid: tuple[float, float, float] = (-24.786, 2.166, 41.339)
    relevance_keyword: tuple[float, float] = (-1.983, 5.864)
    #: An answer's ``match``: strong when its best hit's relevance reaches match_strong, weak when it reaches
    #: match_weak, none below (chosen on the same tune halves).
    match_strong: float = 0.941
    match_weak: float = 0.141

    def __post_init__(self):
        object.__setattr__(self, "slack", MappingProxyType(dict(self.slack)))

    def __hash__(self) -> int:  # the slack days, a read-only mapping, count by their items
        return hash(
            tuple(
                tuple(sorted(v.items())) if isinstance(v, Mapping) else v
                for v in (getattr(self, f.name) for f in fields(self))
            )
        )


#: kenang's own settings, for a call that is handed none.
DEFAULTS = RecallParams()

MODES = ("hybrid", "keyword", "vector")


class Embedder(Protocol):
    """Turns text into L2-normalised vectors; loaded once per run."""

    id: str  # names the model and its version; chunks embedded by another id are never mixed
    dim: int

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray: ...  # (n, dim) float32

    def embed_query(self, text: str) -> np.ndarray: ...  # (dim,) float32


def embedder_key(embedder: Embedder | None) -> str:
    """The ``embedder_id`` that chunks embedded by ``embedder`` carry ("none": not embedded)."""
    return embedder.id if embedder is not None else "none"


class KeywordIndex:
    """BM25 over documents given as (distinct terms, counts), as a term-sorted posting list.

    ``doc_terms`` holds every document's distinct terms flattened, ``doc_tfs`` their
    counts, and ``lengths`` how many distinct terms each document has (so document
    ``i``'s terms are the next ``lengths[i]`` entries).
    """

    def __init__(
        self, doc_terms: Sequence[str], doc_tfs: np.ndarray, lengths: np.ndarray, *, term_ids: np.ndarray | None = None
    ):
        n = len(lengths)
        self.n_docs = n
        doc_of = np.repeat(np.arange(n, dtype=np.int64), lengths)
        tfs = np.asarray(doc_tfs, dtype=np.float32)
        if term_ids is None:  # doc_terms are the flat terms
            vocab: dict[str, int] = {}
            term_ids = np.fromiter(
                (vocab.setdefault(t, len(vocab)) for t in doc_terms), dtype=np.int64, count=len(doc_terms)
            )
        else:  # doc_terms is the vocabulary and term_ids index it (a dictionary-encoded column)
            vocab = {t: i for i, t in enumerate(doc_terms)}
            term_ids = np.asarray(term_ids, dtype=np.int64)
        self.vocab = vocab
        doc_len = np.bincount(doc_of, weights=tfs, minlength=n).astype(np.float32)
        avg = float(doc_len.mean()) if n else 0.0
        order = np.argsort(term_ids, kind="stable")
        self.postings = doc_of[order]
        df = np.bincount(term_ids, minlength=len(vocab))
        self.indptr = np.concatenate([[0], np.cumsum(df)])
        idf = np.log(1.0 + (n - df + 0.5) / (df + 0.5)).astype(np.float32)
        tf = tfs[order]
        norm = K1 * (1.0 - B + B * doc_len[self.postings] / (avg or 1.0))
        self.weights = idf[term_ids[order]] * tf * (K1 + 1.0) / (tf + norm)

    def arrays(self) -> dict[str, np.ndarray]:
        """The index as plain arrays (``from_arrays`` reads them back): a recall pack stores them."""
        terms = sorted(self.vocab, key=self.vocab.__getitem__)
        blob = "\n".join(terms).encode("utf-8", "surrogatepass")
        return {
            "vocab": np.frombuffer(blob, dtype=np.uint8),
            "vocab_size": np.int64(len(terms)),
            "n_docs": np.int64(self.n_docs),
            "indptr": self.indptr,
            "postings": self.postings,
            "weights": self.weights,
        }

    @classmethod
    def from_arrays(cls, a: Mapping[str, np.ndarray]) -> KeywordIndex:
        self = cls.__new__(cls)
        size = int(a["vocab_size"])
        terms = bytes(a["vocab"]).decode("utf-8", "surrogatepass").split("\n") if size else []
        if len(terms) != size:
            raise ValueError("a keyword index whose vocabulary does not match its size")
        self.vocab = {t: i for i, t in enumerate(terms)}
        self.n_docs = int(a["n_docs"])
        self.indptr, self.postings, self.weights = a["indptr"], a["postings"], a["weights"]
        return self

    @classmethod
    def from_lists(cls, terms: Sequence[Sequence[str]], tfs: Sequence[Sequence[int]]) -> KeywordIndex:
        lengths = np.fromiter((len(t) for t in terms), dtype=np.int64, count=len(terms))
        flat_terms = [t for ts in terms for t in ts]
        flat_tfs = np.fromiter((c for cs in tfs for c in cs), dtype=np.float32, count=len(flat_terms))
        return cls(flat_terms, flat_tfs, lengths)

    def has(self, term: str) -> bool:
        """Whether any document holds ``term``."""
        return term in self.vocab

    def remembering(self) -> contextlib.AbstractContextManager[None]:
        """As ``SegmentedIndex.remembering``; a term here is one dictionary look."""
        return contextlib.nullcontext()

    def docs_with(self, term: str) -> np.ndarray:
        """The documents that hold ``term``, ascending."""
        tid = self.vocab.get(term)
        return (
            np.zeros(0, dtype=np.int64)
            if tid is None
            else np.sort(self.postings[self.indptr[tid] : self.indptr[tid + 1]])
        )

    def scores(self, query: str, *, glossed: bool = DEFAULTS.gloss_terms) -> np.ndarray:
        """Each document's BM25 score; ``glossed``: the query's terms meet the documents' glosses too."""
        out = np.zeros(self.n_docs, dtype=np.float32)
        for term in query_terms(query, glossed=glossed):
            tid = self.vocab.get(term)
            if tid is None:
                continue
            a, b = self.indptr[tid], self.indptr[tid + 1]
            out[self.postings[a:b]] += self.weights[a:b]  # a term's postings name each doc once
        return out


class PostingSegment:
    """The BM25 raw counts of one slice of the documents (a month of a recall pack): no weights yet.

    ``indptr``/``postings`` are a term-sorted posting list with document numbers local
    to the segment, ``tfs`` each posting's count, ``lengths`` each document's length
    (the sum of its counts). Weights need the statistics of every segment together, so
    ``SegmentedIndex`` makes them at query time.

    The vocabulary holds no Python object per term, so a segment can be read in place
    (memory-mapped, or from its files): term ``i`` is ``vocab[offsets[i]:offsets[i + 1]]`` (UTF-8), the terms sorted
    by ``hashes`` (``term_hash``, ascending), and a term is found by a binary search of
    its hash, then a comparison of its bytes (two terms with one hash stay apart).
    """

    def __init__(
        self,
        hashes: np.ndarray,
        vocab: np.ndarray,
        offsets: np.ndarray,
        indptr: np.ndarray,
        postings: np.ndarray,
        tfs: np.ndarray,
        lengths: np.ndarray,
    ):
        self.hashes, self.vocab, self.offsets = hashes, vocab, offsets
        self.indptr, self.postings, self.tfs, self.lengths = indptr, postings, tfs, lengths

    @classmethod
    def build(
        cls, vocab: Sequence[str], term_ids: np.ndarray, doc_tfs: np.ndarray, lengths: np.ndarray
    ) -> PostingSegment:
        """From a dictionary-encoded terms column: ``vocab``, each flat term's id, its count, and how many
        distinct terms each document has."""
        n = len(lengths)
        encoded = [t.encode("utf-8", "surrogatepass") for t in vocab]
        hashes = np.fromiter((_hash_bytes(t) for t in encoded), dtype=np.uint64, count=len(encoded))
        by_hash = np.lexsort((np.arange(len(encoded)), hashes))  # ties (a collision): the first seen first
        # 32-bit ids and positions where they fit: a big month has millions of postings, and each array of them
        # is held at once with the others while they are sorted
        small = max(len(encoded), len(term_ids), n) < 2**31
        index_type = np.int32 if small else np.int64
        rank = np.empty(len(encoded), dtype=index_type)
        rank[by_hash] = np.arange(len(encoded), dtype=index_type)
        sizes = np.fromiter((len(encoded[i]) for i in by_hash), dtype=np.int64, count=len(encoded))
        tfs = np.asarray(doc_tfs, dtype=np.float32)
        ids = rank[np.asarray(term_ids)] if len(encoded) else np.zeros(0, dtype=index_type)
        del rank
        order = np.argsort(ids, kind="stable")
        df = np.bincount(ids, minlength=len(encoded))
        del ids
        doc_of = np.repeat(np.arange(n, dtype=np.int32), lengths)
        doc_len = np.bincount(doc_of, weights=tfs, minlength=n).astype(np.float32)
        postings = doc_of[order]
        del doc_of
        return cls(
            hashes[by_hash],
            np.frombuffer(b"".join(encoded[i] for i in by_hash), dtype=np.uint8),
            np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64),
            np.concatenate([[0], np.cumsum(df)]).astype(np.int64),
            postings,
            tfs[order],
            doc_len,
        )

    @property
    def size(self) -> int:
        """How many distinct terms the segment holds."""
        return len(self.hashes)

    def term(self, i: int) -> str:
        return bytes(self.vocab[self.offsets[i] : self.offsets[i + 1]]).decode("utf-8", "surrogatepass")

    def find(self, encoded: Sequence[bytes], hashes: np.ndarray) -> list[int | None]:
        """Each term's id here (None: not held); ``encoded`` the terms as UTF-8, ``hashes`` their ``term_hash``.
        The arrays may be read in place from files (slices only; the hashes with an ``equal_range`` method)."""
        if hasattr(self.hashes, "equal_range"):
            lo, hi = self.hashes.equal_range(hashes)
        else:
            lo, hi = np.searchsorted(self.hashes, hashes, "left"), np.searchsorted(self.hashes, hashes, "right")
        out: list[int | None] = []
        for t, a, b in zip(encoded, lo.tolist(), hi.tolist(), strict=True):
            found = None
            if b > a:
                at = self.offsets[a : b + 1].tolist()  # one read for the run's terms (one, but for a collision)
                found = next((a + k for k in range(b - a) if self.vocab[at[k] : at[k + 1]].tobytes() == t), None)
            out.append(found)
        return out

    def arrays(self) -> dict[str, np.ndarray]:
        """The segment as plain arrays (``from_arrays`` reads them back): a recall pack stores them."""
        return {
            "hashes": self.hashes,
            "vocab": self.vocab,
            "offsets": self.offsets,
            "indptr": self.indptr,
            "postings": self.postings,
            "tfs": self.tfs,
            "lengths": self.lengths,
        }

    @classmethod
    def from_arrays(cls, a: Mapping[str, np.ndarray], vocab_size: int) -> PostingSegment:
        """A segment of ``arrays()`` as they are (memory maps stay memory maps), its sizes checked."""
        if not (
            len(a["hashes"]) == vocab_size
            and len(a["offsets"]) == vocab_size + 1
            and len(a["indptr"]) == vocab_size + 1
            and int(a["offsets"][-1]) == len(a["vocab"])
            and int(a["indptr"][-1]) == len(a["postings"]) == len(a["tfs"])
            and a["hashes"].dtype == np.uint64
            and a["tfs"].dtype == a["lengths"].dtype == np.float32
        ):
            raise ValueError("a posting segment whose vocabulary does not match its size")
        return cls(a["hashes"], a["vocab"], a["offsets"], a["indptr"], a["postings"], a["tfs"], a["lengths"])


def _documents(parts: Sequence[np.ndarray]) -> np.ndarray:
    """A term's documents from each segment's postings of it (int64, the pack's numbers), ascending: as they come
    when each segment's ascend and the segments follow one another, else sorted."""
    docs = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
    return docs if len(docs) < 2 or (docs[1:] > docs[:-1]).all() else np.sort(docs)


def term_hash(term: str) -> int:
    """A term's 64-bit hash, the same in every process and release (the order of a ``PostingSegment``'s terms)."""
    return _hash_bytes(term.encode("utf-8", "surrogatepass"))


def _hash_bytes(data: bytes) -> int:
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little")


class SegmentedIndex:
    """BM25 over segments taken together, the scores exactly those of one ``KeywordIndex`` over the same
    documents in the same order: the document frequencies, the count and the mean length are the sums
    over the segments, and each posting's weight is the same float32 arithmetic, made per query."""

    def __init__(self, segments: Sequence[PostingSegment]):
        self.segments = list(segments)
        self.offsets = np.cumsum([0] + [len(s.lengths) for s in self.segments])
        self.doc_len = (
            np.concatenate([s.lengths for s in self.segments]) if self.segments else np.zeros(0, dtype=np.float32)
        )
        self.n_docs = int(self.offsets[-1])
        self.avg = float(self.doc_len.mean()) if self.n_docs else 0.0
        self._memo = threading.local()  # ``remembering``

    def arrays(self) -> dict[str, np.ndarray]:
        return {f"{i}.{k}": v for i, s in enumerate(self.segments) for k, v in s.arrays().items()}

    @contextlib.contextmanager
    def remembering(self) -> Iterator[None]:
        """Within, on this thread, each term is looked up in the segments once: a query asks for its terms several
        times (its scores, its coverage, its gloss), and in a history read from files each look is a few reads per
        month. Nothing is kept after."""
        if getattr(self._memo, "found", None) is not None:  # already within
            yield
            return
        self._memo.found, self._memo.docs = {}, {}
        try:
            yield
        finally:
            self._memo.found = self._memo.docs = None

    def _found(self, terms: Sequence[str]) -> list[list[tuple[PostingSegment, int, int, int]]]:
        """For each term, the (segment, its first document's number, postings start, end) of each segment that
        holds it."""
        memo = getattr(self._memo, "found", None)
        if memo is None:
            memo = {}
        new = [t for t in dict.fromkeys(terms) if t not in memo]
        encoded = [t.encode("utf-8", "surrogatepass") for t in new]
        hashes = np.fromiter((_hash_bytes(t) for t in encoded), dtype=np.uint64, count=len(encoded))
        found: list[list[tuple[PostingSegment, int, int, int]]] = [[] for _ in new]
        if new:
            for s, offset in zip(self.segments, self.offsets.tolist(), strict=False):
                for j, tid in enumerate(s.find(encoded, hashes)):
                    if tid is not None:
                        a, b = s.indptr[tid : tid + 2].tolist()
                        found[j].append((s, offset, int(a), int(b)))
        memo.update(zip(new, found, strict=True))
        return [memo[t] for t in terms]

    def has(self, term: str) -> bool:
        """Whether any document holds ``term``."""
        return bool(self._found([term])[0])

    def docs_with(self, term: str) -> np.ndarray:
        """The documents that hold ``term``, ascending."""
        memo = getattr(self._memo, "docs", None)
        if memo is not None and term in memo:
            return memo[term]
        docs = _documents([s.postings[a:b].astype(np.int64) + offset for s, offset, a, b in self._found([term])[0]])
        if memo is not None:
            docs.flags.writeable = False  # shared by the query's callers
            memo[term] = docs
        return docs

    def scores(self, query: str, *, glossed: bool = DEFAULTS.gloss_terms) -> np.ndarray:
        out = np.zeros(self.n_docs, dtype=np.float32)
        n = self.n_docs
        terms = list(query_terms(query, glossed=glossed))
        memo = getattr(self._memo, "docs", None)
        for term, hits in zip(terms, self._found(terms), strict=True):
            if not hits:
                continue
            df = np.array([sum(b - a for _, _, a, b in hits)], dtype=np.int64)
            idf = np.log(1.0 + (n - df + 0.5) / (df + 0.5)).astype(np.float32)[0]
            parts = []
            for s, offset, a, b in hits:
                docs = s.postings[a:b].astype(np.int64) + offset
                tf = s.tfs[a:b]
                norm = K1 * (1.0 - B + B * self.doc_len[docs] / (self.avg or 1.0))
                out[docs] += idf * tf * (K1 + 1.0) / (tf + norm)
                parts.append(docs)
            if memo is not None and term not in memo:  # ``docs_with`` of it, read here already
                held = _documents(parts)
                held.flags.writeable = False
                memo[term] = held
        return out


def fuse(
    keyword: np.ndarray,
    cosine: np.ndarray | None,
    *,
    mode: str = "hybrid",
    keyword_weight: float | None = None,
    vector_weight: float | None = None,
    params: RecallParams = DEFAULTS,
    _spans: tuple[tuple[float, float], tuple[float, float] | None] | None = None,
) -> np.ndarray:
    """The weighted sum in the module docstring; scores are comparable within one query.

    The weights default to ``params``'. ``_spans``: each arm's (low, span) over every row, when ``keyword`` and
    ``cosine`` are some of the rows."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; known: {', '.join(MODES)}")
    keyword_weight = params.keyword_weight if keyword_weight is None else keyword_weight
    vector_weight = params.vector_weight if vector_weight is None else vector_weight
    wk = 0.0 if mode == "vector" else keyword_weight
    wv = 0.0 if mode == "keyword" or cosine is None else vector_weight
    if wk + wv == 0:
        raise ValueError("vector mode needs embeddings; this index is keyword only")
    # A row whose BM25 is 0 and whose cosine is the least scores 0: with few others (a large index searched
    # approximately, ``flows.query.recall``), the same arithmetic runs over those others alone.
    support = _scored_rows(keyword if wk else None, cosine if wv else None) if _spans is None else None
    if support is not None:
        out = np.zeros(keyword.shape, dtype=np.float64)
        out[support] = fuse(
            keyword[support],
            None if cosine is None else cosine[support],
            mode=mode,
            keyword_weight=keyword_weight,
            vector_weight=vector_weight,
            params=params,
            _spans=(_span(keyword, 0.0), _span(cosine, None) if cosine is not None else None),
        )
        return out
    total = np.zeros(keyword.shape, dtype=np.float64)
    if wk:
        total += wk * scale(keyword, floor=0.0, span=None if _spans is None else _spans[0])
    if wv and cosine is not None:  # wv is 0 without cosines
        total += wv * scale(cosine, span=None if _spans is None else _spans[1])
    return total / (wk + wv)


#: A fusion over more than this share of the rows, or of fewer rows, runs over every row (a gather and a scatter
#: cost more); not a knob: the scores are the same either way.
_SPARSE_SHARE, _SPARSE_FROM = 0.2, 10_000


def _scored_rows(keyword: np.ndarray | None, cosine: np.ndarray | None) -> np.ndarray | None:
    """The rows ``fuse`` scores above 0 (BM25 above 0, or a cosine above the least), when they are few; else None."""
    n = len(keyword) if keyword is not None else len(cosine) if cosine is not None else 0
    if n < _SPARSE_FROM:
        return None
    held = np.zeros(n, dtype=bool)
    if keyword is not None:
        held |= keyword != 0
    if cosine is not None and len(cosine):
        held |= cosine != cosine.min()
    rows = np.flatnonzero(held)
    return rows if len(rows) <= _SPARSE_SHARE * n else None


def _span(x: np.ndarray, floor: float | None) -> tuple[float, float]:
    """``scale``'s (low, span) of ``x``."""
    if not x.size:
        return 0.0, 0.0
    low = float(x.min()) if floor is None else floor
    return low, float(x.max()) - low


def keyword_weight(keyword: np.ndarray, params: RecallParams = DEFAULTS) -> float:
    """The keyword arm's weight for this query's BM25 scores (``params.keyword_full``)."""
    if params.keyword_full is None or not keyword.size:
        return params.keyword_weight
    return params.keyword_weight * max(0.05, min(1.0, float(keyword.max()) / params.keyword_full))


def boost_time(
    scores: np.ndarray,
    dates: np.ndarray,
    start: dt.date,
    end: dt.date,
    *,
    boost: float | None = None,
    named: tuple[dt.date, dt.date] | None = None,
    params: RecallParams = DEFAULTS,
) -> np.ndarray:
    """Scores with every row dated in [start, end] multiplied by ``1 + boost`` (default ``params.time_boost``).

    ``named``: the range the query named, inside [start, end] (``time_window`` widens it by its slack);
    a row in the window but outside it gets ``params.slack_boost`` of the boost, ``1 + slack_boost * boost``.
    """
    boost = params.time_boost if boost is None else boost
    inside = (dates >= np.datetime64(start)) & (dates <= np.datetime64(end))
    if named is None:
        return np.where(inside, scores * (1.0 + boost), scores)
    core = (dates >= np.datetime64(named[0])) & (dates <= np.datetime64(named[1]))
    factor = np.where(core, 1.0 + boost, np.where(inside, 1.0 + params.slack_boost * boost, 1.0))
    return scores * factor


def anchors(query: str) -> list[str]:
    """The query's identifier terms: those with a digit ("137", "pay-3817", "24") or joined by . : / -
    ("pve-02.lan"). Embedders read them poorly; a chunk that holds one is very likely what was meant."""
    terms = list(dict.fromkeys(terms_of(query)))
    joined = [t for t in terms if _JOINED.search(t)]
    parts = {p for t in joined for p in terms_of(_JOINER.sub(" ", t))}  # "pve-02" is the anchor, not "02"
    return [t for t in terms if t in joined or (any(ch.isdigit() for ch in t) and t not in parts)]


_JOINED = re.compile(r"\w[.:/\-]\w")
_JOINER = re.compile(r"[.:/\-]")


def boost_anchors(
    scores: np.ndarray,
    index,
    terms: Sequence[str],
    *,
    boost: float | None = None,
    max_share: float | None = None,
    params: RecallParams = DEFAULTS,
) -> np.ndarray:
    """Scores with every row that holds an anchor term multiplied by ``1 + boost`` (default
    ``params.anchor_boost``), times the share of the query's anchors it holds; an anchor in more than
    ``max_share`` of the rows (``params.anchor_share``) names nothing in particular and is passed over."""
    boost = params.anchor_boost if boost is None else boost
    share = params.anchor_share if max_share is None else max_share
    n = len(scores)
    if not terms or not n or boost <= 0:
        return scores
    held = np.zeros(n, dtype=np.float64)
    counted = 0
    for term in terms:
        docs = index.docs_with(term)
        if not len(docs) or len(docs) > max(1.0, share * n):
            continue
        held[docs] += 1.0
        counted += 1
    if not counted:
        return scores
    return scores * (1.0 + boost * held / counted)


def time_window(
    start: dt.date, end: dt.date, precision: str, params: RecallParams = DEFAULTS
) -> tuple[dt.date, dt.date]:
    """The named range widened by ``params.slack`` days for its precision (kept within the calendar)."""
    pad = params.slack.get(precision, 1)
    lo = start - dt.timedelta(days=pad) if start > dt.date.min + dt.timedelta(days=pad) else dt.date.min
    hi = end + dt.timedelta(days=pad) if end < dt.date.max - dt.timedelta(days=pad) else dt.date.max
    return lo, hi


_WHAT_HAPPENED = frozenset(t for w in lexicon.WHAT_HAPPENED for t in terms_of(w))


def only_a_time(rest: str) -> bool:
    """Whether a query that names a past time asks nothing else of it: ``rest``, the query less that time, holds
    no term but those that ask what happened then ("what did I do last Saturday?", "ngapain aja kemarin?",
    "上周做了什么？"). Such a query is answered by the days of that time. A capital letter standing alone names
    something ("what did I do with C yesterday?", "上周和A做了什么"), though it makes no keyword term: any but "I",
    and "A" that opens the question; a lower-case one is chat shorthand ("ngapain y?", "what did u do").
    """
    if any(
        m.group() != "I" and not (m.group() == "A" and not rest[: m.start()].strip()) for m in _A_NAME.finditer(rest)
    ):
        return False
    return all(t in _WHAT_HAPPENED for t in terms_of(rest))


#: A capital ASCII letter with no ASCII letter, digit or apostrophe beside it: a one-letter name, also among Han.
_A_NAME = re.compile(r"(?<![A-Za-z0-9'’])[A-Z](?![A-Za-z0-9'’])")


def coverage(index, query: str, *, glossed: bool = DEFAULTS.gloss_terms) -> np.ndarray:
    """Each document's share of the query's terms, each weighed by its BM25 idf, in [0, 1]; a term no document
    holds weighs as much as a term can. ``glossed``: a document's gloss of a term (``GLOSS_MARK``) holds it too.

    Unlike BM25 scaled by the query's best document, the share is the same for the same match whatever else
    the index holds or the query asks: a question whose words are nowhere scores near 0 everywhere.
    """
    n = index.n_docs
    held = np.zeros(n, dtype=np.float64)
    total = 0.0
    for term in dict.fromkeys(terms_of(query)):
        docs = index.docs_with(term)
        if glossed and len(more := index.docs_with(chunk.GLOSS_MARK + term)):
            docs = _union(docs, more)
        weight = float(np.log(1.0 + (n - len(docs) + 0.5) / (len(docs) + 0.5)))
        total += weight
        held[docs] += weight
    return held / total if total > 0 else held


def _union(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The documents of two ascending, distinct lists, each once (in no particular order): a list's documents that
    the other holds are found by a binary search of the shorter, not by sorting both."""
    if len(a) < len(b):
        a, b = b, a
    at = np.searchsorted(a, b).clip(max=len(a) - 1)
    return np.concatenate([a, b[a[at] != b]])


def relevance(cover: np.ndarray, cosine: np.ndarray | None, params: RecallParams = DEFAULTS) -> np.ndarray:
    """Each row's relevance in [0, 1], the same for the same match in any query: the logistic of its
    ``coverage`` and its raw cosine (``params.relevance_hybrid``; ``relevance_keyword`` without a cosine)."""
    if cosine is None:
        b0, b_cov = params.relevance_keyword
        z = b0 + b_cov * cover
    else:
        b0, b_cov, b_cos = params.relevance_hybrid
        z = b0 + b_cov * cover + b_cos * np.asarray(cosine, dtype=np.float64)
    return 1.0 / (1.0 + np.exp(-z))


def match_of(hits: Sequence[Hit], params: RecallParams = DEFAULTS) -> str:
    """'strong', 'weak' or 'none': how well the best of an answer's hits matches (``params.match_strong`` and
    ``match_weak``); an answer without hits is 'none'."""
    best = max((h.relevance for h in hits), default=0.0)
    return "strong" if best >= params.match_strong else "weak" if best >= params.match_weak else "none"


def scale(x: np.ndarray, *, floor: float | None = None, span: tuple[float, float] | None = None) -> np.ndarray:
    """``x`` mapped onto [0, 1]: (x - low) / (max - low), low = min(x) unless ``floor`` is given; ``span``:
    (low, max - low) as given (``x`` is some of the rows they were read over)."""
    if not x.size:
        return x.astype(np.float64)
    low, width = _span(x, floor) if span is None else span
    return (x.astype(np.float64) - low) / width if width > 0 else np.zeros(x.shape, dtype=np.float64)


@dataclass(frozen=True)
class ChunkRef:
    """What a result needs to know of a chunk, by its row in the loaded set."""

    chunk_id: str
    user_id: str
    date: dt.date
    session_id: str | None
    source: str
    text: str
    flagged: tuple[str, ...]


@dataclass(frozen=True)
class Hit:
    date: dt.date
    score: float  # the rank: boosts (time, identifiers, related days) count; comparable within one query only
    via: str  # 'direct' | 'related:<date>' | 'cited:<date>'
    chunk: ChunkRef
    relevance: float = 0.0  # the shown chunk's ``relevance``, in [0, 1]: no boost counts; comparable across queries

    def as_dict(self, query: str = "") -> dict:
        c = self.chunk
        return {
            "date": self.date.isoformat(),
            "score": round(self.score, 6),
            "relevance": round(self.relevance, 3),
            "via": self.via,
            "source": c.source,
            "session_id": c.session_id,
            "user_id": c.user_id,
            "chunk_id": c.chunk_id,
            "flagged": list(c.flagged),
            "text": c.text,
            "snippet": snippet(c.text, query) if query else c.text[:SNIPPET_CHARS],
        }


def rank_days(scores: np.ndarray, dates) -> dict[dt.date, int]:
    """Each day's best-scoring row (ties: the earliest row), in score order.

    ``dates``: each row's day, as ``datetime64[D]`` (or anything ``np.asarray`` makes one of).
    """
    days = np.asarray(dates, dtype="datetime64[D]")
    if not len(days):
        return {}
    order = np.argsort(-scores, kind="stable")
    _, first = np.unique(days[order], return_index=True)  # the first, best, row of each day
    rows = order[np.sort(first)]
    return {d: int(r) for d, r in zip(days[rows].astype(object), rows, strict=False)}


def day_scores(
    scores: np.ndarray,
    dates,
    is_key: np.ndarray,
    key_weight: float | None = None,
    fusion: str | None = None,
    params: RecallParams = DEFAULTS,
) -> dict[dt.date, tuple[float, int]]:
    """Each day's fused score (best transcript chunk and best key weighed apart, step 4) and its best row, best first.

    Ties keep the earlier day first.
    """
    days = np.asarray(dates, dtype="datetime64[D]")
    if not len(days):
        return {}
    uniq, inv = np.unique(days, return_inverse=True)
    window = np.zeros(len(uniq))
    key = np.zeros(len(uniq))
    np.maximum.at(window, inv[~is_key], np.maximum(scores[~is_key], 0.0))
    np.maximum.at(key, inv[is_key], np.maximum(scores[is_key], 0.0))
    w = params.key_weight if key_weight is None else key_weight
    if (fusion or params.key_fusion) == "max":
        fused = np.maximum(window, w * key)
    else:
        fused = (window + w * key) / (1.0 + w)
    best = rank_days(scores, days)
    order = np.argsort(-fused, kind="stable")
    out = {}
    for i in order:
        d = uniq[i].astype(object)
        out[d] = (float(fused[i]), best[d])
    return out


@dataclass(frozen=True)
class Days:
    """Each row's day as a number, made once per loaded set (``Days.of``), so that ``select`` groups only the rows
    that scored: ``days`` the distinct days ascending, ``of_row`` each row's index into them (int32), ``first``
    each day's first row, ``ascending`` whether the rows are in date order (a recall pack's are)."""

    days: np.ndarray
    of_row: np.ndarray
    first: np.ndarray
    ascending: bool

    @classmethod
    def of(cls, dates) -> Days:
        d = np.asarray(dates, dtype="datetime64[D]")
        if not len(d) or bool((d[1:] >= d[:-1]).all()):  # in date order: no sort
            starts = np.flatnonzero(np.concatenate([[True], d[1:] != d[:-1]])) if len(d) else np.zeros(0, np.int64)
            of_row = np.repeat(np.arange(len(starts), dtype=np.int32), np.diff(np.append(starts, len(d))))
            return cls(d[starts], of_row, starts.astype(np.int64), True)
        days, first, inv = np.unique(d, return_index=True, return_inverse=True)
        return cls(days, inv.astype(np.int32), first.astype(np.int64), False)

    def row_of(self, day: dt.date) -> int | None:
        """A day's first row (None: no row is on that day)."""
        at = int(np.searchsorted(self.days, np.datetime64(day, "D")))
        return int(self.first[at]) if at < len(self.days) and self.days[at] == np.datetime64(day, "D") else None


def scored_day_scores(
    scores: np.ndarray,
    rows: np.ndarray,
    days: Days,
    is_key: np.ndarray | None,
    key_weight: float | None = None,
    params: RecallParams = DEFAULTS,
) -> dict[dt.date, tuple[float, int]]:
    """``day_scores`` (``rank_days`` without ``is_key``) of the days of ``rows`` (ascending), every other row
    scoring 0: the same scores, best rows and order for every day that scores above 0, in time proportional to
    ``rows``."""
    if not len(rows):
        return {}
    ids = days.of_row[rows]
    s = np.maximum(scores[rows].astype(np.float64), 0.0)
    if not days.ascending:  # else the rows' days ascend with them: each day's rows are already a run
        order = np.argsort(ids, kind="stable")
        rows, ids, s = rows[order], ids[order], s[order]
    starts = np.flatnonzero(np.diff(ids, prepend=-1) != 0)
    uniq = ids[starts]
    if is_key is None:
        fused = np.maximum.reduceat(s, starts)
    else:
        key = is_key[rows]
        window = np.maximum.reduceat(np.where(key, 0.0, s), starts)
        keys = np.maximum.reduceat(np.where(key, s, 0.0), starts)
        w = params.key_weight if key_weight is None else key_weight
        fused = np.maximum(window, w * keys) if params.key_fusion == "max" else (window + w * keys) / (1.0 + w)
    # each day's best row: its highest score, ties to its lowest row (as ``rank_days``)
    sizes = np.diff(np.append(starts, len(rows)))
    top = np.repeat(np.maximum.reduceat(s, starts), sizes)
    run = np.repeat(np.arange(len(starts)), sizes)
    at = np.flatnonzero(s == top)
    if not days.ascending:  # within a run the rows are not in order: the lowest of the ties
        first = np.full(len(starts), np.iinfo(np.int64).max)
        np.minimum.at(first, run[at], rows[at])
    else:
        first = rows[at[np.flatnonzero(np.diff(run[at], prepend=-1) != 0)]]
    # days in order of score, ties: the earlier day (``day_scores``) or the earlier best row (``rank_days``)
    order = np.argsort(-fused, kind="stable") if is_key is not None else np.lexsort((first, -fused))
    # datetime64[D] values' ``tolist`` are dates; float64 and int64 values' are floats and ints
    best = zip(fused[order].tolist(), first[order].tolist(), strict=True)
    return dict(zip(days.days[uniq[order]].tolist(), best, strict=True))


class _BestRows(Mapping[dt.date, int]):
    """Every day's best row (``select``): those of ``ranked``, else the day's first row (every row of it scores 0)."""

    def __init__(self, ranked: Mapping[dt.date, tuple[float, int]], days: Days):
        self._ranked, self._days = ranked, days

    def __getitem__(self, day: dt.date) -> int:
        if day in self._ranked:
            return self._ranked[day][1]
        row = self._days.row_of(day)
        if row is None:
            raise KeyError(day)
        return row

    def __contains__(self, day: object) -> bool:
        return isinstance(day, dt.date) and (day in self._ranked or self._days.row_of(day) is not None)

    def __iter__(self):
        return (d.astype(object) for d in self._days.days)

    def __len__(self) -> int:
        return len(self._days.days)


def select(
    scores: np.ndarray,
    refs: Sequence[ChunkRef],
    related: Mapping[dt.date, Sequence[dt.date]],
    *,
    top_k: int,
    decay: float | None = None,
    expand: bool = True,
    dates: np.ndarray | None = None,
    cited_first: bool = False,
    is_key: np.ndarray | None = None,
    key_weight: float | None = None,
    params: RecallParams = DEFAULTS,
    relevance: np.ndarray | Callable[[int], float] | None = None,
    scored: np.ndarray | None = None,
    days: Days | None = None,
) -> list[Hit]:
    """Top ``top_k`` days: direct hits plus 1-hop related_dates at ``decay`` × parent score.

    ``refs`` is read only at the rows of the hits (it may build them lazily); ``dates``
    gives every row's day (default: from ``refs``). ``is_key`` marks the rows that are a
    day's keys (step 4); without it a day scores as its best row. ``cited_first`` (a *when* question):
    a day a direct hit cites is lifted just above it when it scores at least ``params.when_min`` of
    it on its own, or when the hit's chunk names it by date (``named_days``). ``decay`` defaults to
    ``params.related_decay``. ``relevance``: every row's (``relevance``), or a row's when called; each hit carries
    its shown row's, which no lift or decay changes. ``scored`` with ``days`` (``Days.of(dates)``): the rows that
    may score above 0, ascending, every other row scoring 0; days are then grouped over them alone
    (``scored_day_scores``), with the same hits.
    """

    def rel(row: int) -> float:
        if relevance is None:
            return 0.0
        return float(relevance(row)) if callable(relevance) else float(relevance[row])

    if not len(refs) or top_k < 1:
        return []
    decay = params.related_decay if decay is None else decay
    if dates is None:
        dates = np.array([r.date for r in refs], dtype="datetime64[D]")
    best_row: Mapping[dt.date, int]
    if scored is not None and days is not None:
        ranked = scored_day_scores(scores, scored, days, is_key, key_weight, params)
        best_row = _BestRows(ranked, days)
    else:
        if is_key is not None:
            ranked = day_scores(scores, dates, is_key, key_weight, params=params)
        else:  # a day scores as its best row
            ranked = {d: (float(scores[row]), row) for d, row in rank_days(scores, dates).items()}
        best_row = {d: row for d, (_, row) in ranked.items()}  # every day's best chunk, in score order
    # Each hit as (date, score, via, row) until the last step: a row's chunk (``refs[row]``: its text, read from
    # disk with a recall pack) is read only for the hits returned and the parents whose text names days.
    hits = {day: _Pick(day, score, "direct", row) for day, (score, row) in ranked.items() if score > 0}
    if cited_first:
        for parent in list(hits.values())[:top_k]:
            cited = related.get(parent.date, ())
            named = named_days(refs[parent.row].text, parent.date, cited) if cited and params.when_named else set()
            for day in cited:
                own = hits.get(day)
                if own is None and day in named and day in best_row:  # no score of its own: shown by its best row
                    own = _Pick(day, 0.0, "direct", best_row[day])
                if (
                    day < parent.date
                    and own is not None
                    and own.via == "direct"
                    and (own.score >= params.when_min * parent.score or day in named)
                    and own.score < parent.score * params.when_lift
                ):
                    hits[day] = _Pick(day, parent.score * params.when_lift, f"cited:{parent.date.isoformat()}", own.row)
    if expand:
        direct_top = [h for h in hits.values() if h.via == "direct"][:top_k]
        for parent in direct_top:
            pulled = parent.score * decay
            for day in related.get(parent.date, ()):
                if day == parent.date or day not in best_row:
                    continue
                current = hits.get(day)
                if current is None or pulled > current.score:
                    hits[day] = _Pick(day, pulled, f"related:{parent.date.isoformat()}", best_row[day])
    ordered = sorted(hits.values(), key=lambda h: (-h.score, h.date))
    return [Hit(h.date, h.score, h.via, refs[h.row], rel(h.row)) for h in ordered[:top_k]]


class _Pick(NamedTuple):
    """A hit before its chunk is read (``select``)."""

    date: dt.date
    score: float
    via: str
    row: int


def named_days(text: str, day: dt.date, cited: Sequence[dt.date]) -> set[dt.date]:
    """The days of ``cited`` that ``text``, written on ``day``, names by date ("on 2026-03-05", "5 Maret").

    Read with ``transforms.timeq`` relative to ``day``; only a date that reads the same a week later
    counts, so "yesterday" or "last Tuesday" in the text never names a day here.
    """
    wanted = set(cited)
    if not wanted or day >= dt.date.max - dt.timedelta(days=8):
        return set()
    # Only the words around a cited day's day of the month, written as a number, are read: a date in words
    # alone ("the fifth of May") is not understood anyway, and timeq over a whole long chunk costs milliseconds.
    numbers = re.compile(r"(?<!\d)0?(?:" + "|".join(sorted({str(d.day) for d in wanted})) + r")(?!\d)")
    found: set[dt.date] = set()
    for i, m in enumerate(numbers.finditer(text)):
        if i == NAMED_PLACES:
            break
        around = text[max(0, m.start() - NAMED_AROUND) : m.end() + NAMED_AROUND]
        later = {(r.text, r.start) for r in timeq.parse(around, day + dt.timedelta(days=8)).ranges}
        found |= {
            r.start
            for r in timeq.parse(around, day).ranges
            if r.start == r.end and r.start in wanted and (r.text, r.start) in later
        }
    return found


def snippet(text: str, query: str, width: int = SNIPPET_CHARS) -> str:
    """About ``width`` characters of ``text`` around the longest query word it holds, as written or as a term's
    start, else around its first word whose term is one of the query's (a stem is not always its word's start:
    "party" is parti)."""
    flat = " ".join(text.split())
    if len(flat) <= width:
        return flat
    lowered = flat.lower()
    at = -1
    for term in sorted(dict.fromkeys([*surface_words(query), *terms_of(query)]), key=len, reverse=True):
        m = re.search(r"(?<!\w)" + re.escape(term), lowered)
        if m:
            at = m.start()
            break
    if at < 0 and (wanted := set(terms_of(query))):  # "the parties" (parti) meets "party" (parti) by its term
        at = next((m.start() for m in re.finditer(r"\w+", lowered) if wanted.intersection(terms_of(m.group()))), -1)
    if at < 0:
        return flat[: width - 1].rstrip() + "…"
    start = max(0, at - width // 3)
    end = min(len(flat), start + width)
    start = max(0, end - width)
    return ("…" if start else "") + flat[start:end].strip() + ("…" if end < len(flat) else "")
