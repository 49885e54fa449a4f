"""The Prefect flows: ``nightly`` and ``backfill``. They only wire.

nightly:  collect (sources) → ingest → quarantine → archive → load → summarize (+ memory candidates, open items) → index → retention → catalog
          (compact copies, recall pack, views) → memory
backfill: survey the archive → load → summarize → index → catalog → memory

"memory" writes MEMORY_INDEX for each user whose summaries changed and each user's
snapshot (core memory and the latest days), reading the compact copies the catalog
stage made; retention.archive_days is applied before the copies are made, and
retention.messages_days empties old days during load.

Tasks work per batch (one ingest, one archive batch, loads in batches of days), so
Prefect's per-task overhead stays small. I/O tasks retry, and only on
``TransientError``; pure work is never retried. With the in-process model the
summarize task carries the ``llm`` tag, which docs/homelab.md limits to concurrency 1; the flow also calls it one
batch at a time, since a llama.cpp context is not thread-safe. The summarizer and the
embedder are each loaded once per run, and only when there is work for them.

Every run takes the run lock and writes a ``runs`` row when it starts and when it
ends; a failure is re-raised as ``StageFailed`` naming the stage and the run id.

A flow run publishes kenang's own run report as Prefect artifacts (``kenang-<flow>-report``,
``kenang-<flow>-users``) and ends its log with a one-line summary. Each flow's body is a
plain function (``nightly_run``, ``backfill_run``) that calls its tasks through
``RunState.call``: ``kenang run`` runs a night with nothing to do (``quiet``) as that
function with ``plain=True``, the tasks called as the functions they wrap, so it never
waits for Prefect to start; the lock, the runs row and the crash sweep are the same. Nor
does it import Prefect: a task becomes Prefect's (``prefect.task``) when a run first calls
it through Prefect, and the flows ``nightly`` and ``backfill`` (``prefect.flow``) when first
asked for, by an import or a deployment's entrypoint.
A backfill's range given the wrong way round is refused when it is submitted to a deployment
that ``kenang serve`` or ``kenang deploy`` registered (flows/serve.py); one that reaches the
flow all the same ends the run Failed with a one-line message, before anything runs.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import os
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, Generic, ParamSpec, TypedDict, TypeVar, Unpack

from pydantic import Field

from flows.config import Settings, load_settings, resolve_home
from flows.stages import (
    archive,
    candidates,
    catalog,
    collect,
    ingest,
    load,
    memory_file,
    open_items,
    plan,
    pool,
    progress,
    quarantine,
    recall_index,
    summarize,
)
from flows.stages.outcome import StageResult
from flows.store import (
    archive_files,
    clock,
    compact,
    core_memory,
    faults,
    ledger,
    mount,
    recall_pack,
    remote,
    tombstones,
)
from flows.store.fsio import durable_batch, sweep_tmp
from flows.store.lock import run_lock
from schemas.tables import DAILY_SUMMARIES, MEMORY_CHUNKS
from transforms import log_gate
from transforms.errors import KenangError, ModelUnavailable, StageFailed, TransientError
from transforms.recall import Embedder
from transforms.summarize import Summarizer

LOAD_BATCH_DAYS = 128
SUMMARIZE_BATCH_DAYS = 4
INDEX_BATCH_DAYS = 8

#: Seconds spent inside task bodies, per stage, for the current run. Tasks run one at a
#: time in the flow's process, so a plain dict is enough; the flow resets it.
_work: dict[str, float] = {}


@contextmanager
def _timed(stage: str) -> Iterator[None]:
    t0 = time.perf_counter()
    try:
        yield
    finally:
        _work[stage] = _work.get(stage, 0.0) + time.perf_counter() - t0


#: Seconds an I/O task waits before its first, second and third retry of a TransientError.
RETRY_DELAYS_S = (2.0, 10.0, 30.0)


def _only_transient(task, task_run, state) -> bool:
    """Prefect retry condition: retry TransientError, nothing else, after its delay.

    The delay is waited here, on ``flows.store.clock`` (Prefect's own is 0: it retries when
    this returns), so a test records the delays a night asked for instead of sleeping.
    """
    try:
        state.result()
    except TransientError:
        clock.sleep(RETRY_DELAYS_S[min(task_run.run_count, len(RETRY_DELAYS_S)) - 1])
        return True
    except BaseException:
        return False
    return False


class _RetryOptions(TypedDict, total=False):
    """The retry options of ``prefect.task`` an I/O task passes (``_IO``)."""

    retries: int
    retry_delay_seconds: float
    retry_condition_fn: Callable[..., bool]


# Prefect's own delay is 0: _only_transient waits RETRY_DELAYS_S on kenang's clock before it says yes.
_IO: _RetryOptions = {
    "retries": 3,
    "retry_delay_seconds": 0,
    "retry_condition_fn": _only_transient,
}

_T = TypeVar("_T")
P = ParamSpec("P")
R = TypeVar("R")


class _Task(Generic[P, R]):
    """A stage's task: its function (``fn``), and the Prefect task made of it (``prefect.task``, no result cache)
    when a run first calls it through Prefect. A run called ``plain`` calls ``fn`` and never imports Prefect, whose
    import is about half of a quiet ``kenang run``."""

    def __init__(self, fn: Callable[P, R], name: str, tags: tuple[str, ...], retry: _RetryOptions) -> None:
        self.fn = fn
        self.name = name
        self.tags = tags
        self.retry = retry
        self._made: Task[P, R] | None = None
        self._lock = threading.Lock()

    def with_options(self, *, tags: list[str]) -> _Task[P, R]:
        """The same task under other tags (the ``llm`` tag, whose concurrency a homelab limits)."""
        return _Task(self.fn, self.name, tuple(tags), self.retry)

    def prefect(self) -> Task[P, R]:
        with self._lock:
            if self._made is None:
                from prefect import task as prefect_task
                from prefect.cache_policies import NO_CACHE

                made = prefect_task(name=self.name, tags=list(self.tags), cache_policy=NO_CACHE, **self.retry)
                self._made = made(self.fn)
            return self._made


def task(name: str, **retry: Unpack[_RetryOptions]) -> Callable[[Callable[P, R]], _Task[P, R]]:
    """``prefect.task``, made when first called through Prefect (``_Task``)."""
    return lambda fn: _Task(fn, name, (), retry)


class quote(Generic[_T]):  # noqa: N801 - Prefect's name: the call sites read as with Prefect's own
    """A task's argument handed over as it is: Prefect's ``quote`` (never walked for futures or hashed), which
    ``RunState.call`` puts in its place when it calls through Prefect; a plain call takes the value out."""

    __slots__ = ("value",)

    def __init__(self, value: _T) -> None:
        self.value = value

    def unquote(self) -> _T:
        return self.value


@task(name="collect", **_IO)
def collect_task(settings: Settings, now: dt.datetime) -> list[collect.SourceReport]:
    with _timed("collect"):
        return collect.collect(settings, now, time.time())


@task(name="ingest")
def ingest_task(settings: Settings, now: dt.datetime) -> ingest.IngestResult:
    with _timed("ingest"):
        return ingest.scan(settings, now, time.time())


@task(name="quarantine", **_IO)
def quarantine_task(settings: Settings, rejected, run_id: str, now: dt.datetime) -> quarantine.QuarantineResult:
    with _timed("quarantine"):
        return quarantine.quarantine_batch(settings, rejected, run_id, now)


@task(name="archive-check")
def mount_task(settings: Settings, need_bytes: int) -> mount.ArchiveState:
    with _timed("archive"):
        return mount.check(settings, need_bytes)


@task(name="archive-pull")
def pull_task(settings: Settings) -> remote.SyncResult:
    """An archive on S3: what the local copy lacks comes down first (a new or emptied copy), if the bucket is ours."""
    with _timed("archive"):
        if mount.bucket_state(settings).state != "ok":
            return remote.SyncResult()
        purged: dict[str, set[str]] = {}
        for r in archive_files.purged(settings):
            purged.setdefault(r["path"], set()).add(r["sha256"])
        return remote.pull(settings, purged)


@task(name="archive-push")
def push_task(settings: Settings) -> remote.SyncResult:
    """An archive on S3: what the run changed in the local copy (summaries, manifests, MEMORY_INDEX) goes up."""
    with _timed("archive"):
        return remote.push(settings)


def _remote_counts(run: RunState, key: str, res: remote.SyncResult) -> None:
    """Fold an S3 sync's figures into the run's counts; a bucket that went away, or refused, degrades the night."""
    mine = run.counts.setdefault("archive_remote", {})
    for k, v in res.counts().items():
        mine[k] = (mine.get(k) or 0) + v if isinstance(v, int) else (v or mine.get(k))
    if res.why:
        _degrade(run, "unreachable" if res.error else "refused", f"{key}: {res.why}")


def _archive_state(settings: Settings, run: RunState, need_bytes: int) -> mount.ArchiveState:
    """The archive's state for this run; an archive on S3 fills its local copy first, and a copy the bucket
    could not fill is not written tonight (no name is chosen blind)."""
    pulled = run.call(pull_task, settings) if settings.paths.remote_archive else None
    disk = run.call(mount_task, settings, need_bytes)
    if pulled is not None:
        _remote_counts(run, "pull", pulled)
        if pulled.why and disk.writable:
            disk = mount.ArchiveState("unreachable", f"pull: {pulled.why}")
    return disk


def _push_archive(settings: Settings, run: RunState, disk: mount.ArchiveState) -> None:
    """An archive on S3: what the run changed in the local copy goes up when it ends."""
    if settings.paths.remote_archive and disk.writable:
        with run.stage_of("archive"):
            _remote_counts(run, "push", run.call(push_task, settings))


def _degrade(run: RunState, state: str, reason: str) -> None:
    """Say the night was degraded (the first cause is kept: it is what to fix first)."""
    run.counts.setdefault("degraded", {"archive": state, "reason": reason})


@task(name="archive", **_IO)
def archive_task(settings: Settings, ready, run_id: str) -> archive.ArchiveResult:
    with _timed("archive"):
        return archive.archive_batch(settings, ready, run_id)


@task(name="archive-exports", **_IO)
def exports_task(settings: Settings, exports, run_id: str) -> archive.ArchiveResult:
    with _timed("archive"):
        return archive.archive_exports(settings, exports, run_id)


@task(name="record", **_IO)
def record_task(settings: Settings, rows, run_id: str) -> int:
    """Bring the two records together: manifests into the warehouse (a lost warehouse) and back; never adopts."""
    now = ledger.utcnow()
    with _timed("archive"):
        return archive_files.record(settings, [{"run_id": run_id, "archived_at": now, **r} for r in rows])


@task(name="load", **_IO)
def load_task(
    settings: Settings,
    days,
    ledger_rows,
    run_id: str,
    parsed,
    check_hashes: bool,
    offset: int,
    total: int,
    files_before: int,
    today: dt.date,
) -> StageResult:
    def tick(done: int, _n: int, files: int) -> None:
        progress.report("load", offset + done, total, files_before + files, unit="days")

    with _timed("load"), durable_batch():
        return load.load_days(settings, days, ledger_rows, run_id, parsed, tick, check_hashes, today)


@task(name="ledger", **_IO)
def ledger_task(settings: Settings, outcomes) -> int:
    with _timed("ledger"):
        return ledger.write_days(settings.paths.warehouse, [o.ledger_row for o in outcomes if o.ledger_row])


@task(name="load-model", **_IO)
def model_task(settings: Settings) -> Summarizer:
    with _timed("model"):
        from flows.models import llm  # loaded only when a run has days to summarize

        return llm.make_summarizer(settings)


@task(name="summarize", **_IO)
def summarize_task(
    settings: Settings, summarizer, keys, ledger_rows, run_id: str, today: dt.date, offset: int, total: int, ahead=None
) -> StageResult:
    with _timed("summarize"), durable_batch():
        res = summarize.summarize_days(settings, summarizer, keys, ledger_rows, run_id, today, ahead)
    progress.report("summarize", offset + len(keys), total, 0, unit="days")
    return res


@task(name="memory-candidates", **_IO)
def candidates_task(settings: Settings, keys, found, today: dt.date, refused=()) -> dict:
    with _timed("candidates"):
        return candidates.propose(settings, keys, found, today, refused)


@task(name="open-items", **_IO)
def open_items_task(settings: Settings, keys, wrote=None, ahead=None) -> dict:
    """The touched users' open-items chains: their notes' carried sections and the open_items table."""
    with _timed("open_items"):
        return open_items.refresh(settings, keys, wrote, ahead).counts()


@task(name="snapshots", **_IO)
def snapshots_task(settings: Settings, archive_writable: bool = True) -> dict:
    """MEMORY_INDEX for each user whose summaries changed, then snapshot/<user>.md for every user with loaded days
    or core memory: what agents read next. After the compact copies: each reads one file a month (a newest month's
    base and its few new days).

    A core memory file kenang cannot read (a link, a folder, bad UTF-8, oversized) is left out of its user's snapshot
    and named in ``problems``; every user still gets a fresh snapshot."""
    with _timed("memory_file"):
        rows = plan.Night(settings)
        made = rows.digests()
        stale = memory_file.stale_users(settings, made)
        if stale and archive_writable:  # MEMORY_INDEX lives in the archive
            memory_file.write_memory_files(settings, stale, made)
        users = rows.loaded_users()
        problems: list[str] = []
        written = 0
        for user in sorted(users | set(core_memory.users(settings))):
            problems += core_memory.errors(settings, user)
            try:
                core_memory.write_snapshot(settings, user)
                written += 1
            except OSError as exc:  # this user's snapshot waits for the next run; the others are written
                problems.append(f"snapshot/{user}.md not written ({exc.strerror or exc}): the next run tries again")
        return {"snapshots": written, "problems": problems}


@task(name="retention", **_IO)
def retention_task(settings: Settings, today: dt.date) -> int:
    """retention.archive_days: archived and quarantined originals older than that are purged, each logged."""
    days = settings.retention.archive_days
    if not days:
        return 0
    cutoff = today - dt.timedelta(days=days)
    n = 0
    why = f"retention:archive_days={days}"
    with _timed("archive"):
        exports: dict[str, set[str]] = {}
        for a in plan.archived_before(settings, cutoff):
            exports.setdefault(a.user_id, set()).update(archive_files.exports_of(settings, a.user_id, a.paths))
            n += len(archive_files.purge(settings, a.user_id, a.date, list(a.paths), why))
        for user, found in sorted(exports.items()):  # an export goes once every day cut from it has gone
            old = [e for e in sorted(found) if not archive_files.still_cut_from(settings, user, e)]
            n += len(archive_files.purge(settings, user, None, old, why))
        # quarantined files are originals too: they age out by the day they were quarantined
        n += quarantine.purge_quarantined(settings, quarantine.quarantined_before(settings, cutoff), why)
    return n


@task(name="load-embedder", **_IO)
def embedder_task(settings: Settings) -> Embedder | None:
    with _timed("model"):
        from flows.models import embed  # loaded only when a run has days to index

        return embed.make_embedder(settings)


@task(name="recall-index", **_IO)
def recall_index_task(
    settings: Settings,
    embedder,
    keys,
    ledger_rows,
    run_id: str,
    reembed: bool,
    offset: int,
    total: int,
    untrusted=frozenset(),
    max_new: int | None = None,
) -> StageResult:
    with _timed("index"), durable_batch():
        res = recall_index.index_days(
            settings, embedder, keys, ledger_rows, run_id, reembed=reembed, untrusted=untrusted, max_new=max_new
        )
    progress.report("index", offset + len(keys), total, 0, unit="days")
    return res


@task(name="settle", **_IO)
def settle_task(settings: Settings, checked) -> None:
    """Clear the pending marks whose days are now settled in the ledger."""
    with _timed("ledger"):
        ledger.clear_pending(settings.paths.warehouse, checked)
    faults.checkpoint("load.settled")


@task(name="catalog", **_IO)
def catalog_task(settings: Settings, check_copies: bool = False) -> bool:
    # The catalog's views are over the partitions, not the copies: DuckDB builds it (off the GIL) while the copies
    # and the recall pack are made.
    built = _in_thread(catalog.ensure_catalog, settings.paths.catalog, settings.paths.warehouse)
    with _timed("compact"):
        compact.refresh(settings.paths.warehouse, check=check_copies, map_items=pool.pure_imap)
        recall_pack.refresh(
            settings.paths.warehouse,
            check=check_copies,
            map_items=pool.pure_imap,
            ann_from=int(settings.recall.exact_below),
        )
        ledger.refresh_history(settings.paths.warehouse, plan.ledger_notes(settings))
    with _timed("catalog"):
        return built()


def _unquoted(value: object) -> object:
    """What a ``quote`` holds (Prefect unwraps its own when it calls a task; a plain call must do the same)."""
    return value.unquote() if isinstance(value, quote) else value


def _prefect_quoted(value: object) -> object:
    """Prefect's own ``quote`` in place of kenang's, for a call through Prefect."""
    if not isinstance(value, quote):
        return value
    from prefect.utilities.annotations import quote as prefect_quote

    return prefect_quote(value.unquote())


def _in_thread(fn: Callable[..., _T], *args: object) -> Callable[[], _T]:
    """Start ``fn(*args)`` in a thread; the returned function waits for it and gives its result (or raises)."""
    out: dict = {}

    def target() -> None:
        try:
            out["value"] = fn(*args)
        except BaseException as exc:  # noqa: BLE001 - raised again in the caller's thread
            out["error"] = exc

    thread = threading.Thread(target=target, name=f"kenang-{fn.__name__}", daemon=True)
    thread.start()

    def wait() -> _T:
        thread.join()
        if "error" in out:
            raise out["error"]
        return out["value"]

    return wait


@dataclass
class RunState:
    """What a run did, stage by stage; becomes the runs row's counts and the CLI's table."""

    run_id: str
    flow: str
    stage: str = "start"
    counts: dict = field(default_factory=dict)
    seconds: dict = field(default_factory=dict)
    #: No Prefect: each task is called as the plain function it wraps (``_Task.fn``), without retries. A run with
    #: nothing to do goes this way, so it does not wait for a Prefect API to start.
    plain: bool = False

    def call(self, t: _Task[P, R], *args: Any, **kwargs: Any) -> R:
        """Call task ``t`` as Prefect's task, or as its plain function when the run is ``plain``."""
        if not self.plain:
            made: Callable[..., R] = t.prefect()
            return made(*(_prefect_quoted(a) for a in args), **{k: _prefect_quoted(v) for k, v in kwargs.items()})
        fn: Callable[..., R] = t.fn
        return fn(*(_unquoted(a) for a in args), **{k: _unquoted(v) for k, v in kwargs.items()})

    def tally(self, stage: str, res: StageResult) -> None:
        """Count this stage's days per user (status, and the days left waiting) for the run report's user table."""
        by_user = self.counts.setdefault("by_user", {})
        for d in res.days:
            row = by_user.setdefault(d.user_id, {})
            key = d.status if d.status in ("loaded", "summarized", "indexed") else f"{stage}_{d.status}"
            row[key] = row.get(key, 0) + 1
        for user, _ in res.waiting:
            row = by_user.setdefault(user, {})
            row[f"{stage}_waiting"] = row.get(f"{stage}_waiting", 0) + 1

    @contextmanager
    def stage_of(self, name: str) -> Iterator[None]:
        self.stage = name
        t0 = time.perf_counter()
        progress.start(name)
        yield
        self.seconds[name] = round(self.seconds.get(name, 0.0) + time.perf_counter() - t0, 4)


@contextmanager
def pipeline_run(
    settings: Settings, flow_name: str, parameters: dict, wait_seconds: float, *, plain: bool = False
) -> Iterator[RunState]:
    """Lock, record the run as running, and record how it ended."""
    log_gate.install()  # a deployment's run starts here, not in the CLI: its logs pass the gate too
    started = ledger.utcnow()
    run = RunState(ledger.new_run_id(started), flow_name, plain=plain)
    record = ledger.RunRecord(run.run_id, flow_name, parameters, started, run.counts, timezone=settings.timezone)
    t0 = time.perf_counter()
    _work.clear()
    with (
        run_lock(settings.paths.lock, run.run_id, wait_seconds) as previous_run_died,
        ledger.held(settings.paths.warehouse),
    ):
        faults.checkpoint("run.locked")
        with _timed("bookkeeping"):
            if previous_run_died:  # sweep its temporaries; a clean run leaves none
                for root in (
                    settings.paths.archive,
                    settings.paths.quarantine,
                    settings.paths.warehouse,
                    settings.paths.active,
                ):
                    sweep_tmp(root)
            ledger.migrate(settings.paths.warehouse)  # a one-file day ledger of an older kenang: split by month
            open_items.migrate(settings.paths.warehouse)  # and its one-file open_items tables
            ledger.write_run(settings.paths.warehouse, record)
        try:
            yield run
        except BaseException as exc:
            pool.shutdown()
            record.status, record.finished_at = "failed", ledger.utcnow()
            record.error = f"{run.stage}: {type(exc).__name__}: {exc}"  # cut where it is written, after redaction
            run.counts["seconds"] = run.seconds
            _safe_write_run(settings, record)
            if isinstance(exc, (KenangError, OSError)) and not isinstance(exc, StageFailed):
                raise StageFailed(run.stage, run.run_id, str(exc)) from exc
            raise
        pool.shutdown()
        run.counts["seconds"] = run.seconds
        run.counts["work_seconds"] = {k: round(v, 4) for k, v in _work.items()}
        run.counts["wall_seconds"] = round(time.perf_counter() - t0, 4)
        record.status, record.finished_at = "completed", ledger.utcnow()
        with _timed("bookkeeping"):
            ledger.write_run(settings.paths.warehouse, record)
        faults.checkpoint("run.recorded")


def _safe_write_run(settings: Settings, record: ledger.RunRecord) -> None:
    try:
        ledger.write_run(settings.paths.warehouse, record)
    except OSError:
        pass  # the original error matters more; the row stays 'running' = interrupted


def _settings(home: str | None) -> Settings:
    # The flow is the edge for deployment runs, so it may read the environment.
    return load_settings(resolve_home(home, os.environ))


def _in_batches(
    settings: Settings, run: RunState, items: list, size: int, work: Callable[[list, int], StageResult]
) -> StageResult:
    """Run ``work(batch, offset)`` over ``items`` batch by batch, recording each batch's days as it lands.

    Recording per batch means a long backfill that dies keeps what it finished. A batch
    that found its model server unavailable ends the stage: every later item waits.
    """
    parts = []
    for i in range(0, len(items), size):
        res = work(items[i : i + size], i)
        run.call(ledger_task, settings, quote(res.days))
        parts.append(res)
        if res.unavailable:
            parts.append(StageResult(waiting=tuple(items[i + size :])))
            break
    return StageResult.of(parts)


def _load_all(settings: Settings, run: RunState, days, ledger_rows, parsed, check_hashes: bool, today: dt.date) -> dict:
    days = list(days)
    starts = [0]  # files done before each batch, for progress
    for d in days:
        starts.append(starts[-1] + len(d.paths))
    res = _in_batches(
        settings,
        run,
        days,
        LOAD_BATCH_DAYS,
        lambda batch, i: run.call(
            load_task,
            settings,
            quote(batch),
            quote(ledger_rows),
            run.run_id,
            quote(parsed),
            check_hashes,
            i,
            len(days),
            starts[i],
            today,
        ),
    )
    run.tally("load", res)
    return load.counts(res)


def _summarize_all(
    settings: Settings,
    run: RunState,
    today: dt.date,
    *,
    start=None,
    end=None,
    force=False,
    redo=frozenset(),
    budget: bool = True,
) -> dict:
    """Summarize the days that need it, newest first, within the run's budget; the model loads only if there is work."""
    # A forced or repairing backfill does all of its range: a nightly run would never redo those days.
    limit = plan.summary_budget(settings) if budget and not force and not redo else None
    with _timed("plan"):
        rows = plan.Night(settings)
        keys, waiting = plan.newest_first(
            rows.needing(summarize.is_fresh, start=start, end=end, force=force, redo=redo),
            limit,
            last=rows.failed("summary_status"),
        )
    left: dict[str, int | str | None] = {"waiting": len(waiting), "budget_days": limit, "unavailable": None}
    if not keys:  # a crashed run may still owe the chain of days it summarized
        run.tally("summarize", StageResult(waiting=tuple(waiting)))
        carried = (
            run.call(open_items_task, settings, []) if open_items.owed(settings) else open_items.Refreshed().counts()
        )
        return summarize.counts(StageResult()) | left | {"open_items": carried}
    try:
        summarizer = run.call(model_task, settings)
    except ModelUnavailable as exc:  # a model server that cannot be used: every day waits, the night goes on
        run.tally("summarize", StageResult(waiting=tuple(waiting) + tuple(keys)))
        return summarize.counts(StageResult()) | left | {"waiting": len(waiting) + len(keys), "unavailable": str(exc)}
    # Small batches for a model (progress, and little lost to a crash); the extractive
    # backend is fast, so it takes load-sized batches and fewer ledger rewrites.
    in_process = summarizer.backend == "llama"
    # A model writes the ledger every few days (progress, and little asked again after a crash); a server with
    # ``concurrency`` days in flight gets batches that keep it busy.
    size = (
        SUMMARIZE_BATCH_DAYS
        if in_process
        else max(SUMMARIZE_BATCH_DAYS, 2 * settings.summarizer.concurrency)
        if summarizer.backend == "openai"
        else LOAD_BATCH_DAYS
    )
    # Only an in-process model takes the ``llm`` tag: a tag costs a concurrency-slot
    # round trip to the server per task call (about 1.7 s here), worth it only for a model.
    run_batch = summarize_task.with_options(tags=["llm"]) if in_process else summarize_task
    # The extractive backend does every day taken in one go: oldest first, each note is written once, with the
    # carried sections the open-items chain gives it. A model keeps the newest days first.
    ahead = open_items.Ahead(settings) if summarizer.backend == "extractive" else None
    if ahead is not None:
        keys = sorted(keys, key=lambda k: (k[1], k[0]))
    open_items.owe(settings, keys)  # durable before any summary is written: a crash leaves the chain owed
    res = _in_batches(
        settings,
        run,
        keys,
        size,
        lambda batch, i: run.call(
            run_batch, settings, quote(summarizer), batch, quote(rows), run.run_id, today, i, len(keys), quote(ahead)
        ),
    )
    left = {"waiting": len(waiting) + len(res.waiting), "budget_days": limit, "unavailable": res.unavailable}
    run.tally("summarize", StageResult(days=res.days, waiting=tuple(waiting) + res.waiting))
    done = [(d.user_id, d.date) for d in res.days if d.status == "summarized"]
    # In day order: a candidate found on several days keeps its first day's quote.
    day_found = [c for d in sorted(res.days, key=lambda d: (d.user_id, d.date)) for c in d.notes.get("candidates", ())]
    refused = [k for d in res.days for k in d.notes.get("refused_candidates", ())]
    found = (
        run.call(candidates_task, settings, done, quote(day_found), today, refused)
        if done
        else {"found": 0, "new": 0, "auto_accepted": 0, "refused": {}}
    )
    wrote = {(d.user_id, d.date): d.notes["wrote"] for d in res.days if d.notes.get("wrote") is not None}
    carried = (
        run.call(open_items_task, settings, done, quote(wrote), quote(ahead))
        if done
        else open_items.Refreshed().counts()
    )
    # Why the model's fields fell back, counted over the days ("summary: not grounded in the day": 3).
    why = Counter(
        f"{name}: {reason.split(' (')[0]}"
        for d in res.days
        for name, reason in d.notes.get("fallback_reasons", {}).items()
    )
    return (
        summarize.counts(res)
        | left
        | {
            "backend": summarizer.backend,
            "model": summarizer.model,
            "candidates": found,
            "open_items": carried,
            "fallback_reasons": dict(why),
        }
    )


def _index_all(
    settings: Settings,
    run: RunState,
    *,
    start=None,
    end=None,
    reindex: bool = False,
    redo=frozenset(),
    budget: bool = True,
) -> dict:
    """Index the days that need it, newest first, until the run's chunk budget is spent; the embedder loads only if
    there is work."""
    limit = plan.chunk_budget(settings) if budget and not reindex and not redo else None
    with _timed("plan"):
        rows = plan.Night(settings)
        eid = rows.eid
        keys, _ = plan.newest_first(
            rows.needing(lambda r: recall_index.is_fresh(r, eid), start=start, end=end, force=reindex, redo=redo),
            last=rows.failed("index_status"),
        )
    if not keys:
        return recall_index.counts(StageResult()) | {
            "embedder": eid,
            "waiting": 0,
            "budget_chunks": limit,
            "unavailable": None,
        }
    try:
        embedder = run.call(embedder_task, settings)
    except ModelUnavailable as exc:  # an embedding server that is down: every day waits, the night goes on
        run.tally("index", StageResult(waiting=tuple(keys)))
        return recall_index.counts(StageResult()) | {
            "embedder": eid,
            "waiting": len(keys),
            "budget_chunks": limit,
            "unavailable": str(exc),
        }
    parts: list[StageResult] = []
    spent = 0
    # Small batches for an embedder (progress, and the budget); keyword-only indexing is fast, so load-sized ones.
    size = INDEX_BATCH_DAYS if embedder is not None else LOAD_BATCH_DAYS
    for i in range(0, len(keys), size):
        res = run.call(
            recall_index_task,
            settings,
            quote(embedder),
            keys[i : i + size],
            quote(rows),
            run.run_id,
            reindex,
            i,
            len(keys),
            redo,
            None if limit is None else limit - spent,
        )
        run.call(ledger_task, settings, quote(res.days))
        parts.append(res)
        spent += int(res.total("embedded"))
        if res.waiting or (limit is not None and spent >= limit):  # spent: every later day waits for the next night
            parts.append(StageResult(waiting=tuple(keys[i + size :])))
            break
    res = StageResult.of(parts)
    run.tally("index", res)
    return recall_index.counts(res) | {
        "embedder": eid,
        "waiting": len(res.waiting),
        "budget_chunks": limit,
        "unavailable": res.unavailable,
    }


def quiet(settings: Settings, now: dt.datetime | None = None) -> bool:
    """True when a nightly run at ``now`` would find nothing to do: no source with anything new (a dry collect),
    nothing in active/ the run would take (a file whose day is not over, or one still being written, waits; a few
    small files are classified as the run does, more go through Prefect), no S3 archive, no retention, no day owed
    a load, a summary, an index entry or its open items.

    ``kenang run`` runs such a night ``plain`` (without Prefect, whose start-up would be most of it). It is cautious: whatever
    it cannot rule out cheaply sends the run through Prefect. A plain run still runs the same body, so a file that
    lands meanwhile is handled all the same (only without Prefect's retries)."""
    try:
        return _quiet(settings, now)
    except Exception:  # noqa: BLE001 - what could not be read is the flow's to report, stage by stage
        return False


def _quiet(settings: Settings, now: dt.datetime | None) -> bool:
    if settings.paths.remote_archive or settings.retention.archive_days or settings.retention.messages_days:
        return False
    now = now or ledger.utcnow()
    if settings.config.sources:
        found = collect.collect(settings, now, time.time(), dry_run=True)
        if any(r.written or r.moved or r.changed for r in found):
            return False
    if not _active_waits(settings, now):
        return False
    days, rows, checked = plan.pending_days(settings)
    if days or checked or open_items.owed(settings):
        return False
    return _none_owed(settings, rows)


def _active_waits(settings: Settings, now: dt.datetime) -> bool:
    """Whether a run at ``now`` would leave every file in active/ where it is (none, or each waiting for its day
    or for its writer), classified as ``ingest.scan`` does; False for more files than a scan reads in one process.
    The files are the ones ``ingest.walk`` finds for the scan (hidden names left out, a link taken as a file)."""
    sizes = [st.st_size for _, st, why in ingest.walk(settings.paths.active) if why is None]
    if not sizes:
        return True
    if len(sizes) >= pool.MIN_ITEMS or sum(sizes) >= pool.HEAVY_BYTES:
        return False
    found = ingest.scan(settings, now, time.time())
    return not (found.ready or found.exports or found.rejected)


def _none_owed(settings: Settings, rows, start: dt.date | None = None, end: dt.date | None = None) -> bool:
    """Whether no loaded day of the ledger ``rows`` (in [start, end] when given) is owed a summary or an index
    entry by the stages' own freshness rules."""
    from flows.models import embed

    eid = embed.configured_id(settings)
    needing = rows.needing if isinstance(rows, plan.Night) else functools.partial(plan.days_needing, rows)
    return not needing(summarize.is_fresh, start=start, end=end) and not needing(
        lambda r: recall_index.is_fresh(r, eid), start=start, end=end
    )


def backfill_quiet(
    settings: Settings, start: dt.date, end: dt.date, only_missing: bool = False, *, redo_all: bool = False
) -> bool:
    """True when a backfill of [start, end] would derive nothing: no day in the range to load (``plan.survey``:
    none with files, or ``only_missing`` and every one loaded), no record to restore or rewrite, no file no record
    knows, no partition changed behind kenang's back, no day owed a summary, an index entry or its open items, and
    no S3 archive to sync. ``redo_all`` (``--resummarize``, ``--reindex``) is never quiet.

    ``kenang backfill`` runs such a range ``plain``, as ``kenang run`` does a quiet night: the same body (the run
    report, the catalog's check of every copy, the lock), without Prefect's start-up. Whatever it cannot rule out
    cheaply sends the run through Prefect."""
    try:
        return _backfill_quiet(settings, start, end, only_missing, redo_all)
    except Exception:  # noqa: BLE001 - what could not be read is the flow's to report, stage by stage
        return False


def _backfill_quiet(settings: Settings, start: dt.date, end: dt.date, only_missing: bool, redo_all: bool) -> bool:
    if redo_all or end < start or settings.paths.remote_archive or open_items.owed(settings):
        return False
    if not only_missing and any(start <= day <= end for _, day in ledger.read_days(settings.paths.warehouse)):
        return False  # a day on record in the range is re-derived: known without surveying the archive
    found = plan.survey(settings, start, end, only_missing)
    if found.days or found.restore or found.rewrite or found.unrecorded:
        return False
    if plan.tampered(settings, DAILY_SUMMARIES, start, end) or plan.tampered(settings, MEMORY_CHUNKS, start, end):
        return False
    return _none_owed(settings, found.ledger, start, end)


def heartbeats_as_asked() -> contextlib.AbstractContextManager:
    """Settings for a flow a kenang command calls in its own process: no flow-run heartbeats, unless a Prefect
    setting source (the environment, the profile, prefect.toml, .env) sets their frequency. Prefect sends them by
    default, from a thread that sleeps in whole seconds and is waited for when the run ends: up to a second added
    to every command. A command watches its own run, and kenang's run record tells an interrupted one; a worker's
    runs keep Prefect's setting."""
    from prefect.settings import PREFECT_FLOWS_HEARTBEAT_FREQUENCY, get_current_settings, temporary_settings

    if "heartbeat_frequency" in get_current_settings().flows.model_fields_set:
        return contextlib.nullcontext()
    return temporary_settings({PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None})


def _published(flow_name: str, body: Callable[[], dict]) -> dict:
    """Run a flow's body, then publish its report where the Prefect UI shows it: a Markdown artifact (kenang's own
    run report), a table artifact of the days per user, and a one-line summary as the flow's last log line.

    The keys name the flow, so the UI shows each deployment's latest report. Only counts, ids, dates, file names and
    reasons, all through the redaction gate, ever reach them."""
    from prefect.artifacts import create_markdown_artifact, create_table_artifact
    from prefect.logging import get_run_logger

    from flows.cli import report
    from transforms.redact import redact_reason, redact_tree

    logger = get_run_logger()
    try:
        result = body()
    except BaseException as exc:
        line = redact_reason(f"{flow_name} run failed: {type(exc).__name__}: {exc}", 1000)
        create_markdown_artifact(f"# {flow_name} run failed\n\n{line}\n", key=f"kenang-{flow_name}-report")
        logger.error(line)
        raise
    gated = redact_tree(result)
    assert isinstance(gated, dict)
    create_markdown_artifact(
        report.render_run_markdown(gated), key=f"kenang-{flow_name}-report", description=report.summary_line(gated)
    )
    create_table_artifact(
        report.user_rows(gated),
        key=f"kenang-{flow_name}-users",
        description="days per user: loaded, summarized, indexed, and what failed or waits",
    )
    logger.info(report.summary_line(gated))
    return result


#: The flows' functions by name: ``nightly`` and ``backfill`` are made Prefect flows when first asked for
#: (``__getattr__``), so a module that only runs a night plain never imports Prefect.
_FLOW_BODIES: dict[str, Callable[..., Any]] = {}


def _flow_body(fn: Callable[P, R]) -> Callable[P, R]:
    """Keep ``fn`` as the body of the flow of its name; the module then drops the name (``del``), so that asking
    for it makes the flow. The ``def`` stays in the source, where Prefect looks for an entrypoint's function when it
    cannot import the file."""
    _FLOW_BODIES[fn.__name__] = fn
    return fn


if TYPE_CHECKING:
    from prefect import Flow, Task

    nightly: Flow[..., dict]
    backfill: Flow[..., dict]


def __getattr__(name: str) -> Any:
    """``nightly`` and ``backfill``: the Prefect flows (``prefect.flow`` of ``_FLOW_BODIES``), made on first use."""
    body = _FLOW_BODIES.get(name)
    if body is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from prefect import flow

    with _made_lock:
        made = globals().get(name)
        if made is None:
            made = globals()[name] = flow(name=name, log_prints=False)(body)
    return made


_made_lock = threading.Lock()


@_flow_body  # type: ignore[no-redef]  # the name stands for the flow (``__getattr__``)
def nightly(now: dt.datetime | None = None, home: str | None = None, wait_seconds: float = 0.0) -> dict:
    """Archive every eligible, quiet transcript in active/ and load its day."""
    return _published("nightly", lambda: nightly_run(now, home, wait_seconds))


del nightly  # made a flow when first asked for (``__getattr__``)


def nightly_run(
    now: dt.datetime | None = None, home: str | None = None, wait_seconds: float = 0.0, *, plain: bool = False
) -> dict:
    """The nightly flow's body; ``plain`` calls its tasks without Prefect (see ``quiet``)."""
    settings = _settings(home)
    now = now or ledger.utcnow()
    params = {"now": now.isoformat(), "home": str(settings.paths.home)}
    tombstones.require_key(settings)  # a deployment's run starts here: no tombstone may be ignored
    with pipeline_run(settings, "nightly", params, wait_seconds, plain=plain) as run:
        if settings.config.sources:  # agents' own logs: what is new goes into active/ for ingest
            with run.stage_of("collect"):
                run.counts["collect"] = collect.counts(run.call(collect_task, settings, now))
        with run.stage_of("ingest"):
            found = run.call(ingest_task, settings, now)
            run.counts["ingest"] = {
                "ready": len(found.ready),
                "waiting_quiet": sum(w.why == "not_quiet" for w in found.waiting),
                "waiting_day": sum(w.why == "not_eligible" for w in found.waiting),
                "rejected": len(found.rejected),
                "hidden": found.hidden,
                "exports": len(found.exports),
                "skipped": found.skipped_counts(),
                "skipped_items": [[x.relpath, x.why] for x in found.skipped],
            }
        with run.stage_of("quarantine"):
            # A task with nothing to do is not called: each call is a few round trips to the Prefect server.
            q = (
                run.call(quarantine_task, settings, quote(found.rejected), run.run_id, now)
                if found.rejected
                else quarantine.QuarantineResult()
            )
            run.counts["quarantine"] = {
                "moved": q.moved,
                "by_kind": dict(q.by_kind),
                "items": [list(i) for i in q.items],
                "left": [list(i) for i in q.left],
            }
        with run.stage_of("archive"):
            disk = _archive_state(settings, run, found.bytes_to_archive)
            if disk.writable:
                a = (
                    run.call(archive_task, settings, quote(found.ready), run.run_id)
                    if found.ready
                    else archive.ArchiveResult()
                )
            else:
                a = archive.ArchiveResult(sources_kept=len(found.ready) + len(found.exports))
                run.counts["degraded"] = {"archive": disk.state, "reason": disk.reason}
            run.counts["archive"] = {k: v for k, v in asdict(a).items() if k != "days"}
            if a.upload_error:
                _degrade(run, "unreachable" if a.unreachable else "refused", f"upload: {a.upload_error}")
            if found.exports and disk.writable:
                x = run.call(exports_task, settings, quote(found.exports), run.run_id)
                run.counts["imports"] = {
                    "exports": [
                        {
                            "file": e.cand.relpath,
                            "format": e.format,
                            "user_id": e.user_id,
                            "conversations": e.conversations,
                            "transcripts": len(e.derived),
                            "messages": sum(d.messages for d in e.derived),
                            "notes": list(e.notes),
                        }
                        for e in found.exports
                    ],
                    **{k: v for k, v in asdict(x).items() if k != "days"},
                }
                if x.upload_error:
                    _degrade(run, "unreachable" if x.unreachable else "refused", f"upload: {x.upload_error}")
        with run.stage_of("load"):
            if disk.readable:
                today = now.astimezone(settings.timezone).date()
                with _timed("plan"):
                    days, ledger_rows, checked = plan.pending_days(settings)
                    if settings.retention.messages_days:  # retention: old days are emptied like forgotten ones
                        cutoff = today - dt.timedelta(days=settings.retention.messages_days)
                        known = {(d.user_id, d.date) for d in days}
                        days += [d for d in plan.expired_days(settings, cutoff) if (d.user_id, d.date) not in known]
                run.counts["load"] = _load_all(
                    settings, run, days, ledger_rows, found.parsed, False, now.astimezone(settings.timezone).date()
                )
                if checked:
                    run.call(settle_task, settings, quote(checked))
            else:
                run.counts["load"] = load.counts(StageResult())
        with run.stage_of("summarize"):
            if disk.writable:  # summaries and MEMORY_INDEX live in the archive
                run.counts["summarize"] = _summarize_all(settings, run, now.astimezone(settings.timezone).date())
        with run.stage_of("index"):
            run.counts["index"] = _index_all(settings, run)
        with run.stage_of("memory"):
            if disk.writable:
                run.counts["retention_purged"] = (
                    run.call(retention_task, settings, now.astimezone(settings.timezone).date())
                    if settings.retention.archive_days
                    else 0
                )
        with run.stage_of("catalog"):
            run.counts["catalog_rebuilt"] = run.call(catalog_task, settings)
        with run.stage_of("memory"):  # after the copies: MEMORY_INDEX and the snapshots read one file a month
            run.counts["core_memory"] = run.call(snapshots_task, settings, disk.writable)
        _push_archive(settings, run, disk)
    return {"run_id": run.run_id, "flow": "nightly", **run.counts}


#: A calendar date, YYYY-MM-DD, as a deployment's parameter schema says it. The server checks a pattern when a run
#: is submitted (Prefect's server-side check ignores JSON-schema ``format``), so a bad date is refused there: the
#: 29th of February only in a leap year (a year divisible by 4, a century only when divisible by 400), no year 0.
_LEAP_YEAR = r"(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:0[48]|[2468][048]|[13579][26])00)"
ISO_DATE = Annotated[
    dt.date,
    Field(
        json_schema_extra={
            "pattern": r"^(?!0000)(?:[0-9]{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])"
            r"|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)|02-(?:0[1-9]|1[0-9]|2[0-8]))|" + _LEAP_YEAR + r"-02-29)$",
            "maxLength": 10,  # the server's pattern is Python's, whose $ also takes a trailing newline
        }
    ),
]


@_flow_body  # type: ignore[no-redef]  # the name stands for the flow (``__getattr__``)
def backfill(
    start: ISO_DATE,
    end: ISO_DATE,
    only_missing: bool = False,
    resummarize: bool = False,
    home: str | None = None,
    wait_seconds: float = 0.0,
    reindex: bool = False,
    no_budget: bool = False,
) -> dict:
    """Re-derive the tables, summaries and recall index for [start, end] from the archive alone.

    Summaries and the index take the nightly budgets (newest days first, the rest left for
    later runs) unless ``no_budget``; loading is never budgeted.
    """
    if end < start:  # kenang's deployments refuse this when it is submitted; plain `prefect deploy` ones, here
        # A Failed state ends the run with this message alone: no traceback in the worker's log.
        from prefect.states import Failed

        return Failed(message=f"end {end} is before start {start}: nothing was run; submit the range again")  # type: ignore[return-value]
    return _published(
        "backfill", lambda: backfill_run(start, end, only_missing, resummarize, home, wait_seconds, reindex, no_budget)
    )


del backfill  # made a flow when first asked for (``__getattr__``)


def backfill_run(
    start: dt.date,
    end: dt.date,
    only_missing: bool = False,
    resummarize: bool = False,
    home: str | None = None,
    wait_seconds: float = 0.0,
    reindex: bool = False,
    no_budget: bool = False,
    *,
    plain: bool = False,
) -> dict:
    """The backfill flow's body; ``plain`` calls its tasks without Prefect (see ``backfill_quiet``)."""
    settings = _settings(home)
    if end < start:
        raise ValueError(f"end {end} is before start {start}")
    params = {
        "start": start.isoformat(),
        "end": end.isoformat(),
        "only_missing": only_missing,
        "resummarize": resummarize,
        "reindex": reindex,
        "no_budget": no_budget,
        "home": str(settings.paths.home),
    }
    tombstones.require_key(settings)
    with pipeline_run(settings, "backfill", params, wait_seconds, plain=plain) as run:
        with run.stage_of("survey"):
            disk = _archive_state(settings, run, 0)  # an S3 archive's new local copy is filled first
            if not disk.readable:  # an absent archive must not read as days with no files
                run.counts["degraded"] = {"archive": disk.state, "reason": disk.reason}
                return {"run_id": run.run_id, "flow": "backfill", **run.counts}
            with _timed("plan"):
                found = plan.survey(settings, start, end, only_missing)
            if (found.restore or found.rewrite) and disk.writable:
                run.call(record_task, settings, quote(found.restore + found.rewrite), run.run_id)
            run.counts["survey"] = {
                "days": len(found.days),
                "restored_records": len(found.restore),
                "unrecorded": list(found.unrecorded),
                "manifests_rewritten": len({(r["user_id"], r["date"]) for r in found.rewrite}) if disk.writable else 0,
            }
            if not found.days and not found.unrecorded and not any(start <= d <= end for _, d in found.ledger):
                # a range kenang knows nothing of (a typo in a date?): say which days it does know
                run.counts["survey"]["on_record"] = plan.days_held(found.ledger)
            if not disk.writable:
                run.counts["degraded"] = {"archive": disk.state, "reason": disk.reason}
        with run.stage_of("load"):
            run.counts["load"] = _load_all(
                settings, run, found.days, found.ledger, {}, True, ledger.utcnow().astimezone(settings.timezone).date()
            )
            run.call(settle_task, settings, quote({(d.user_id, d.date) for d in found.days}))
        with run.stage_of("summarize"):
            if disk.writable:
                today = ledger.utcnow().astimezone(settings.timezone).date()
                redo = frozenset(plan.tampered(settings, DAILY_SUMMARIES, start, end))
                run.counts["summarize"] = _summarize_all(
                    settings, run, today, start=start, end=end, force=resummarize, redo=redo, budget=not no_budget
                )
        with run.stage_of("index"):
            redo = frozenset(plan.tampered(settings, MEMORY_CHUNKS, start, end))
            run.counts["index"] = _index_all(
                settings, run, start=start, end=end, reindex=reindex, redo=redo, budget=not no_budget
            )
        with run.stage_of("catalog"):
            run.counts["catalog_rebuilt"] = run.call(catalog_task, settings, check_copies=True)
        with run.stage_of("memory"):
            run.counts["core_memory"] = run.call(snapshots_task, settings, disk.writable)
        _push_archive(settings, run, disk)
    return {"run_id": run.run_id, "flow": "backfill", **run.counts}
