"""Index: the ``memory_chunks`` partition of each loaded (user, day), with embeddings.

A day is (re)indexed when its ``index_key`` in the ledger differs from the key of what
it would index now: the day's content fingerprint, the digest of its summary file,
the embedder id and the chunker version. So a nightly run decides from the ledger
alone, without reading old partitions, and its cost does not grow with history.

For each such day the stage chunks the day's redacted messages, its summary and its
MEMORY_INDEX line (``transforms.chunk``), reads the day's current partition, and
embeds only the chunks whose id is new (or whose stored embedding came from another
embedder). The partition is rewritten whole only when its chunks changed: their ids,
embedder or keyword terms (a new chunker may give the same texts new terms, as chunker
4 did: then nothing is embedded, and the day is rewritten with its old embeddings). A day that
fails is recorded as failed with its reason, and the others go on.

``backfill --reindex`` takes every day in range and re-embeds every chunk.

A keyword-only day of more than ``limits.batch_rows`` messages (a huge agent log's
day) is chunked as its rows are read and written a row group at a time
(``_streamed``): the same chunks as whole, never all held at once. With an embedder a
day is still chunked whole.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import itertools
import json
import logging
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa

from flows.config import Settings
from flows.stages import pool
from flows.stages.outcome import DayOutcome, StageResult, failed
from flows.store import faults, warehouse
from flows.store.ledger import DayKey
from schemas.tables import DAILY_SUMMARIES, MEMORY_CHUNKS, MESSAGES
from transforms import chunk as chunker
from transforms.chunk import CHUNKER_VERSION, Chunk, Turn, index_chunk, session_chunks, summary_chunk
from transforms.errors import ModelRefused, ModelUnavailable
from transforms.ids import fingerprint
from transforms.memory_file import entry_line, entry_of
from transforms.recall import Embedder, embedder_key

log = logging.getLogger("kenang")


def index_key(row: Mapping, embedder_id: str) -> str:
    summary = row.get("summary_sha256") if row.get("summary_status") == "summarized" else ""
    return fingerprint(
        [
            f"content={row.get('content_fingerprint')}",
            f"summary={summary}",
            f"embedder={embedder_id}",
            f"chunker={CHUNKER_VERSION}",
            f"lexicon={chunker.lexicon_key()}",
            *([f"granularity={chunker.GRANULARITY}"] if chunker.GRANULARITY != chunker.DEFAULT_GRANULARITY else []),
        ]
    )


def is_fresh(row: Mapping, embedder_id: str) -> bool:
    """A day's index is fresh when it was built from the day's content and summary, by this embedder and chunker
    (and the word lists its terms are made with: ``transforms.chunk.lexicon_key``)."""
    return row.get("index_status") == "indexed" and row.get("index_key") == index_key(row, embedder_id)


#: What ``chunks_of`` reads of a day's summary row (its chunk and its MEMORY_INDEX line).
_SUMMARY_COLUMNS = (
    "date",
    "summary",
    "people",
    "projects",
    "tags",
    "technologies",
    "importance",
    "mood",
    "title",
    "decisions",
    "open_items",
)


def day_text(settings: Settings, user_id: str, day: dt.date, *, messages: bool = True) -> tuple:
    """What ``chunks_of`` needs of a day, read from its partitions: (user, day, turns by session, summary rows)."""
    wh = settings.paths.warehouse
    cols = ("session_id", "seq", "role", "content", "flags")
    by_session: dict[str, list[Turn]] = {}
    if messages:
        msgs = warehouse.read_columns(warehouse.partition_file(wh, MESSAGES, day, user_id), MESSAGES, cols)
        for sid, seq, role, content, flags in zip(*(msgs[c] for c in cols), strict=False):
            by_session.setdefault(sid, []).append(Turn(seq, role, content, tuple(flags or ())))
    summary_path = warehouse.partition_file(wh, DAILY_SUMMARIES, day, user_id)
    summaries = []
    if summary_path.is_file():
        columns = warehouse.read_columns(summary_path, DAILY_SUMMARIES, _SUMMARY_COLUMNS)
        summaries = [
            dict(zip(_SUMMARY_COLUMNS, r, strict=False))
            for r in zip(*(columns[c] for c in _SUMMARY_COLUMNS), strict=False)
        ]
    return user_id, day, by_session, summaries


def chunks_of(text: tuple) -> list[Chunk]:
    """Every chunk of one (user, day) from ``day_text``: transcript pairs and facts, then summary and index line; pure."""
    user_id, day, by_session, summaries = text
    chunks: list[Chunk] = []
    for sid in sorted(by_session):
        turns = sorted(by_session[sid], key=lambda t: t.seq)
        chunks += session_chunks(user_id, day, sid, turns)
    chunks += _summary_chunks(user_id, day, summaries)
    seen: set[str] = set()
    unique: list[Chunk] = []
    for c in chunks:
        if c.chunk_id not in seen:
            seen.add(c.chunk_id)
            unique.append(c)
    return unique


def _summary_chunks(user_id: str, day: dt.date, summaries: list[dict]) -> list[Chunk]:
    """Each summary row's chunk and its MEMORY_INDEX line's."""
    chunks = []
    for row in summaries:
        fields = {k: row[k] or () for k in ("people", "projects", "tags", "technologies", "decisions", "open_items")}
        note = "\n".join(t for t in (row["title"], row["summary"]) if t)  # the title is the note's first line
        chunks.append(summary_chunk(user_id, day, note, fields))
        chunks.append(index_chunk(user_id, day, entry_line(entry_of(row), link=False)))
    return chunks


@dataclass(frozen=True)
class ChunkedDay:
    """What ``chunk_day`` hands back: the day's chunks, its partition as it is, and (keyword-only) the new one's bytes.

    A streamed day (``_streamed``) hands back no chunks: ``count`` of them and ``digest``
    (``_digest``) of their ids and terms, and ``old_digest`` of the partition as it is
    (``None`` when there is none), which is all the unchanged check needs.
    """

    chunks: list[Chunk]
    old: pa.Table | None
    parquet: bytes | None
    count: int | None = None
    digest: str | None = None
    old_digest: str | None = None


def chunk_day(args) -> ChunkedDay:
    """Read one day and chunk it; writes nothing (``pool.pure_imap`` runs it on every core).

    ``args``: (settings, user, day, whether to read the old partition, whether the
    index is keyword-only, run id). A keyword-only day's partition bytes are made
    here too, since no embedding is needed; one of more than ``limits.batch_rows``
    messages is streamed (``_streamed``).
    """
    settings, user_id, day, read_old, keyword_only, run_id = args
    if keyword_only:
        streamed = _streamed(settings, user_id, day, read_old, run_id)
        if streamed is not None:
            return streamed
    chunks = chunks_of(day_text(settings, user_id, day))
    old = _existing(settings, user_id, day) if read_old else None
    parquet = None
    if keyword_only:
        if old is not None:
            old = old.select(["chunk_id", "embedder_id", "terms", "tfs"])  # all the unchanged check needs
        if chunks:
            parquet = warehouse.parquet_bytes(_table(chunks, [None] * len(chunks), None, run_id), MEMORY_CHUNKS)
    return ChunkedDay(chunks, old, parquet)


#: The most chunks a streamed day holds at once (one row group of its partition).
CHUNK_ROWS = 1_000


def _streamed(settings: Settings, user_id: str, day: dt.date, read_old: bool, run_id: str) -> ChunkedDay | None:
    """A keyword-only day of more than ``limits.batch_rows`` messages, chunked as its rows are read.

    The messages are read ``batch_rows`` rows at a time and the chunks written to the
    partition's bytes a row group of at most ``CHUNK_ROWS`` chunks at a time (a chunk, with
    its terms, weighs several messages), so no more than a batch of either is held (and no chunk once written): the chunks, and so the bytes
    once read back, are the ones ``chunks_of`` gives. ``None`` (chunk it whole) for a
    smaller day, or one whose rows are not in (session, seq) order, as ``load`` writes them.
    """
    wh = settings.paths.warehouse
    path = warehouse.partition_file(wh, MESSAGES, day, user_id)
    batch = settings.limits.batch_rows
    if not path.is_file() or warehouse.num_rows(path) <= batch:
        return None
    keys = warehouse.read_columns(path, MESSAGES, ("session_id", "seq"))
    order = list(zip(keys["session_id"], keys["seq"], strict=True))
    if any(a > b for a, b in itertools.pairwise(order)):
        return None
    del keys, order
    cols = ("session_id", "seq", "role", "content", "flags")

    def turns() -> Iterator[tuple[str, Turn]]:
        for got in warehouse.iter_columns(path, MESSAGES, cols, batch):
            for sid, seq, role, content, flags in zip(*(got[c] for c in cols), strict=True):
                yield sid, Turn(seq, role, content, tuple(flags or ()))

    def chunks() -> Iterator[Chunk]:
        for sid, rows in itertools.groupby(turns(), key=lambda r: r[0]):
            yield from chunker.iter_session_chunks(user_id, day, sid, (t for _, t in rows))
        yield from _summary_chunks(user_id, day, day_text(settings, user_id, day, messages=False)[3])

    def unique() -> Iterator[Chunk]:  # a chunk whose id came before is left out, as ``chunks_of`` does
        seen: set[str] = set()
        for c in chunks():
            if c.chunk_id not in seen:
                seen.add(c.chunk_id)
                yield c

    digest = hashlib.sha256()
    count = 0

    def tables() -> Iterator[pa.Table]:
        nonlocal count
        for piece in _batched(unique(), min(batch, CHUNK_ROWS)):
            digest.update(_digest_lines((c.chunk_id, c.terms, c.tfs) for c in piece))
            count += len(piece)
            yield _table(piece, [None] * len(piece), None, run_id)

    parquet = warehouse.parquet_bytes_of(tables(), MEMORY_CHUNKS)
    old_path = warehouse.partition_file(wh, MEMORY_CHUNKS, day, user_id)
    old_digest = None
    if read_old and old_path.is_file():
        old_digest = _old_digest(old_path, batch)
    return ChunkedDay([], None, parquet if count else None, count, digest.hexdigest(), old_digest)


def _batched(items: Iterable[Chunk], n: int) -> Iterator[list[Chunk]]:
    it = iter(items)
    while piece := list(itertools.islice(it, n)):
        yield piece


def _digest_lines(rows: Iterable[tuple[str, Iterable[str], Iterable[int]]]) -> bytes:
    return b"".join(json.dumps([cid, list(terms), list(tfs)]).encode() + b"\n" for cid, terms, tfs in rows)


def _old_digest(path: Path, batch: int) -> str | None:
    """The digest of a partition's chunks as ``_streamed`` makes it; ``None`` when any came from an embedder."""
    digest = hashlib.sha256()
    cols = ("chunk_id", "embedder_id", "terms", "tfs")
    for got in warehouse.iter_columns(path, MEMORY_CHUNKS, cols, batch):
        if any(e is not None for e in got["embedder_id"]):
            return None
        digest.update(_digest_lines(zip(got["chunk_id"], got["terms"], got["tfs"], strict=True)))
    return digest.hexdigest()


NUMBERS = ("chunks", "embedded")
STATUSES = ("indexed", "unchanged")


def counts(res: StageResult) -> dict:
    return res.counts(STATUSES, NUMBERS)


def _existing(settings: Settings, user_id: str, day: dt.date) -> pa.Table | None:
    path = warehouse.partition_file(settings.paths.warehouse, MEMORY_CHUNKS, day, user_id)
    return warehouse.read_file(path, MEMORY_CHUNKS) if path.is_file() else None


def index_days(
    settings: Settings,
    embedder: Embedder | None,
    keys: Iterable[DayKey],
    ledger_rows: Mapping[DayKey, Mapping],
    run_id: str,
    *,
    reembed: bool = False,
    untrusted: frozenset[DayKey] = frozenset(),
    max_new: int | None = None,
) -> StageResult:
    """Index each day; new chunks of all the days are embedded together, in batches.

    The partitions of ``untrusted`` days (changed behind kenang's back) are rebuilt
    from scratch: nothing in them, embeddings included, is reused.

    ``max_new`` bounds the chunks embedded: the day that reaches it is still taken (so
    a day bigger than the whole budget is never stuck behind it), and every day after
    that waits in ``StageResult.waiting`` for a later run. A run goes over the budget
    by at most that one day's chunks.
    """
    eid = embedder_key(embedder)
    plans: list[tuple[DayKey, list[Chunk], dict[str, np.ndarray], pa.Table | None]] = []
    failed_days: list[DayOutcome] = []
    out: list[DayOutcome] = []
    keys = list(keys)
    planned_new = 0
    waiting: tuple[DayKey, ...] = ()
    made = pool.pure_imap(
        chunk_day,
        [(settings, user_id, day, (user_id, day) not in untrusted, embedder is None, run_id) for user_id, day in keys],
        heavy=pool.heavy((ledger_rows.get(k) or {}).get("messages") for k in keys),
    )
    for i, (user_id, day) in enumerate(keys):
        try:
            got = next(made)
            if isinstance(got, pool.Failed):
                raise pool.WorkerError(got)
            chunks, old = got.chunks, got.old
        except Exception as exc:  # noqa: BLE001 - one bad day must not stop the night
            log.exception("index failed for %s/%s", user_id, day)
            failed_days.append(failed("index", user_id, day, run_id, f"{pool.kind_of(exc)}: {exc}"))
            continue
        reuse: dict[str, np.ndarray] = {}
        if old is not None and embedder is not None and not reembed:
            for cid, e_id, emb in zip(
                *(old[c].to_pylist() for c in ("chunk_id", "embedder_id", "embedding")), strict=False
            ):
                if e_id == eid and emb is not None:
                    reuse[cid] = np.asarray(emb, dtype=np.float32)
        new = 0 if embedder is None else sum(c.chunk_id not in reuse for c in chunks)
        if max_new is not None and new and planned_new >= max_new:
            waiting = tuple(keys[i:])
            break
        planned_new += new
        if got.digest is not None:  # a streamed keyword-only day
            out.append(_finish_streamed(settings, (user_id, day), got, ledger_rows, run_id, reembed))
            continue
        if embedder is None:  # nothing to embed: written now, while the workers chunk the next days
            out.append(
                _finish(
                    settings,
                    (user_id, day),
                    chunks,
                    [None] * len(chunks),
                    0,
                    old,
                    got.parquet,
                    None,
                    ledger_rows,
                    run_id,
                    reembed,
                )
            )
            continue
        plans.append(((user_id, day), chunks, reuse, old))
        if max_new is not None and planned_new > max_new:  # this day reached the budget: the rest wait
            waiting = tuple(keys[i + 1 :])
            break
    made.close()  # days after the budget are not chunked
    if embedder is None:  # every day was written as it was chunked: nothing to embed
        return StageResult(tuple(failed_days + out), waiting)

    new_texts = [c.passage for _, chunks, reuse, _ in plans for c in chunks if c.chunk_id not in reuse]
    try:
        vectors = iter(embed_reporting(embedder, new_texts)) if new_texts else iter(())
    except ModelUnavailable as exc:  # a model server that is down: these days wait, the night goes on
        log.warning("embedding server unavailable, %d day(s) wait: %s", len(plans) + len(waiting), exc)
        return StageResult(tuple(failed_days + out), tuple(k for k, *_ in plans) + waiting, str(exc))
    except ModelRefused:  # the server refused some text: day by day, so only the day it refuses fails
        return _day_by_day(settings, embedder, plans, eid, ledger_rows, run_id, reembed, failed_days + out, waiting)
    for key, chunks, reuse, old in plans:
        embeddings, embedded = [], 0
        for c in chunks:
            if c.chunk_id in reuse:
                embeddings.append(reuse[c.chunk_id])
            else:
                embeddings.append(next(vectors))
                embedded += 1
        out.append(_finish(settings, key, chunks, embeddings, embedded, old, None, eid, ledger_rows, run_id, reembed))
    return StageResult(tuple(failed_days + out), waiting)


#: New chunks embedded between two progress reports (``embed_reporting``): a multiple of the bundled embedders'
#: batches (16 and 64), so each call makes the batches one call for all would.
PROGRESS_CHUNKS = 64


def embed_reporting(embedder: Embedder, texts: list[str]) -> np.ndarray:
    """``embedder.embed_passages(texts)``, with a progress report (stage ``embed``, in chunks) every
    ``PROGRESS_CHUNKS``: an import of a big log embeds for minutes, and said nothing meanwhile."""
    if len(texts) <= PROGRESS_CHUNKS:
        return embedder.embed_passages(texts)
    from flows.stages import progress

    progress.start("embed")
    parts = []
    for at in range(0, len(texts), PROGRESS_CHUNKS):
        parts.append(np.asarray(embedder.embed_passages(texts[at : at + PROGRESS_CHUNKS])))
        progress.report("embed", min(at + PROGRESS_CHUNKS, len(texts)), len(texts), 0, unit="chunks")
    return np.concatenate(parts)


def _day_by_day(
    settings: Settings,
    embedder: Embedder,
    plans: list,
    eid: str,
    ledger_rows: Mapping[DayKey, Mapping],
    run_id: str,
    reembed: bool,
    done: list[DayOutcome],
    waiting: tuple[DayKey, ...],
) -> StageResult:
    """Each planned day embedded apart: a day whose text the server refuses fails alone, with the reason."""
    out = list(done)
    for i, (key, chunks, reuse, old) in enumerate(plans):
        try:
            fresh = iter(embedder.embed_passages([c.passage for c in chunks if c.chunk_id not in reuse]))
        except ModelRefused as exc:
            out.append(failed("index", key[0], key[1], run_id, f"the embedding server refused it: {exc}"))
            continue
        except ModelUnavailable as exc:
            return StageResult(tuple(out), tuple(k for k, *_ in plans[i:]) + waiting, str(exc))
        embeddings = [reuse[c.chunk_id] if c.chunk_id in reuse else next(fresh) for c in chunks]
        embedded = sum(c.chunk_id not in reuse for c in chunks)
        out.append(_finish(settings, key, chunks, embeddings, embedded, old, None, eid, ledger_rows, run_id, reembed))
    return StageResult(tuple(out), waiting)


def _finish(
    settings: Settings,
    key: DayKey,
    chunks: list[Chunk],
    embeddings: list,
    embedded: int,
    old: pa.Table | None,
    parquet: bytes | None,
    eid: str | None,
    ledger_rows: Mapping[DayKey, Mapping],
    run_id: str,
    reembed: bool,
) -> DayOutcome:
    """Write a day's partition unless its chunks are the ones it holds; the ledger row says it is indexed."""
    user_id, day = key
    ledger_row = _indexed_row(key, ledger_rows, eid, run_id)
    unchanged = (
        old is not None
        and not embedded
        and not reembed
        and old["chunk_id"].to_pylist() == [c.chunk_id for c in chunks]
        and set(old["embedder_id"].to_pylist()) <= {eid}
        # the same texts cut by a new chunker keep their ids (and embeddings) but may have new keyword terms
        and old["terms"].to_pylist() == [list(c.terms) for c in chunks]
        and old["tfs"].to_pylist() == [list(c.tfs) for c in chunks]
    )
    if unchanged:
        return DayOutcome(
            user_id, day, "unchanged", ledger_row=ledger_row, numbers={"chunks": len(chunks), "embedded": 0}
        )
    try:
        data = (parquet if parquet is not None else _table(chunks, embeddings, eid, run_id)) if chunks else None
        _write(settings, user_id, day, data)
    except OSError as exc:
        return failed("index", user_id, day, run_id, f"writing its chunks: {exc}")
    faults.checkpoint("index.day_done")
    return DayOutcome(
        user_id, day, "indexed", ledger_row=ledger_row, numbers={"chunks": len(chunks), "embedded": embedded}
    )


def _finish_streamed(
    settings: Settings,
    key: DayKey,
    got: ChunkedDay,
    ledger_rows: Mapping[DayKey, Mapping],
    run_id: str,
    reembed: bool,
) -> DayOutcome:
    """``_finish`` for a streamed day: unchanged when the partition's chunks have the same digest."""
    user_id, day = key
    ledger_row = _indexed_row(key, ledger_rows, None, run_id)
    numbers = {"chunks": got.count or 0, "embedded": 0}
    if not reembed and got.old_digest is not None and got.old_digest == got.digest:
        return DayOutcome(user_id, day, "unchanged", ledger_row=ledger_row, numbers=numbers)
    try:
        _write(settings, user_id, day, got.parquet)
    except OSError as exc:
        return failed("index", user_id, day, run_id, f"writing its chunks: {exc}")
    faults.checkpoint("index.day_done")
    return DayOutcome(user_id, day, "indexed", ledger_row=ledger_row, numbers=numbers)


def _indexed_row(key: DayKey, ledger_rows: Mapping[DayKey, Mapping], eid: str | None, run_id: str) -> dict:
    """The ledger row of a day the index stage has done (``eid``: its embedder, None when keyword-only)."""
    user_id, day = key
    return {
        "user_id": user_id,
        "date": day,
        "index_status": "indexed",
        "index_key": index_key(ledger_rows[key], eid or "none"),
        "index_reason": None,
        "index_run_id": run_id,
    }


def _write(settings: Settings, user_id: str, day: dt.date, data: pa.Table | bytes | None) -> None:
    """The day's chunks partition as ``data``, or none when it has no chunks."""
    if data is None:  # through delete_partition: its checksum and the month's compact copy go with it
        warehouse.delete_partition(settings.paths.warehouse, MEMORY_CHUNKS, day, user_id)
        return
    warehouse.write_partition(settings.paths.warehouse, MEMORY_CHUNKS, data, day, user_id)


def _table(chunks: list[Chunk], embeddings: list, eid: str | None, run_id: str) -> pa.Table:
    return pa.table(
        {
            "chunk_id": [c.chunk_id for c in chunks],
            "user_id": [c.user_id for c in chunks],
            "date": [c.date for c in chunks],
            "session_id": [c.session_id for c in chunks],
            "source": [c.source for c in chunks],
            "seq": [c.seq for c in chunks],
            "text": [c.text for c in chunks],
            "flagged": [list(c.flagged) for c in chunks],
            "terms": [list(c.terms) for c in chunks],
            "tfs": [list(c.tfs) for c in chunks],
            "embedder_id": [eid] * len(chunks),
            "embedding": pa.array(
                [None if e is None else np.asarray(e, np.float32) for e in embeddings], type=pa.list_(pa.float32())
            ),
            "run_id": [run_id] * len(chunks),
        }
    )
