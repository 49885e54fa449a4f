"""Pure per-day work on every core: one process pool per run for the stages' CPU-bound steps.

A stage hands ``pure_imap`` (or ``pure_map``) a module-level function and the days'
inputs. The function must be pure in what it writes: it writes nothing, and its result
depends only on its arguments and on files that the stage does not change while the
map runs (a day's partitions of an earlier stage). So running it in another process
changes nothing but the time it takes. The stage keeps every write, and every ledger
row, in its own process and order, so the outputs are byte-identical to a run without
the pool, and the crash boundaries are where they were.

Results stream back in order (``pure_imap``): the stage writes day 1 while the workers
still work on the days after it, so its I/O overlaps their CPU.

- Workers: ``KENANG_WORKERS`` if set, else the cores this process may use (at most 4).
  With one worker, or fewer than ``MIN_ITEMS`` items, the work runs in-process, unless
  the stage says its items are ``heavy`` (days of ``HEAVY_MESSAGES`` messages or
  ``HEAVY_BYTES`` of files to read, in all: an agent's huge log): then even one item
  goes to a worker, since it takes far longer than the pool takes to start, and what
  it holds while it works is let go with the worker's, not kept in the flow's process.
  Those workers are stopped once the map is done (the next map starts new ones from
  the forkserver, in a few milliseconds), so the memory an allocator keeps after a
  huge item is not carried into the next stage's work.
- The pool starts with the ``forkserver`` method, so no worker is forked from a process
  that holds Prefect's or DuckDB's threads, and it is started once, on first use, then
  shut down when the run ends (``shutdown``) or the process exits.
- An exception in one item comes back as that item's ``Failed`` (its type and message),
  so one bad day is recorded as failed and the others go on, as in-process.
- A pool that breaks (a worker killed, or workers that cannot start: a script run
  without ``if __name__ == "__main__":``, which each worker imports again) is given up
  for the rest of the process, and the work is done in-process.
"""

from __future__ import annotations

import atexit
import logging
import multiprocessing
import os
import select
import threading
import time
from collections.abc import Callable, Generator, Iterable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")

MIN_ITEMS = 8
#: Items heavy enough for the pool however few: this many messages (``heavy``), or bytes of files read, in all.
HEAVY_MESSAGES = 20_000
HEAVY_BYTES = 16 * 2**20
MAX_WORKERS = 4
_PRELOAD = ["flows.stages.ingest", "flows.stages.load", "flows.stages.recall_index", "flows.stages.summarize"]

_pool: ProcessPoolExecutor | None = None
_broken = False
log = logging.getLogger("kenang")


@dataclass(frozen=True)
class Failed:
    """What an item's exception was, carried back from a worker."""

    kind: str
    message: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}"


class WorkerError(Exception):
    """A ``Failed`` raised again in the stage's process; ``kind_of`` names the original type."""

    def __init__(self, failed: Failed):
        super().__init__(failed.message)
        self.kind = failed.kind


def kind_of(exc: BaseException) -> str:
    """The name of an exception's type, or of the one a worker raised."""
    return exc.kind if isinstance(exc, WorkerError) else type(exc).__name__


def workers() -> int:
    env = os.environ.get("KENANG_WORKERS")
    if env and env.strip().isdigit():
        return max(1, int(env))
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        cores = os.cpu_count() or 1
    return max(1, min(MAX_WORKERS, cores))


def _guarded(fn: Callable[[T], R], item: T) -> R | Failed:
    try:
        return fn(item)
    except Exception as exc:  # noqa: BLE001 - carried back as the item's failure
        return Failed(type(exc).__name__, str(exc))


def _call(args):
    fn, item = args
    return _guarded(fn, item)


def heavy(messages: Iterable[int | None]) -> bool:
    """Whether days of these many messages (None: not known) reach ``HEAVY_MESSAGES`` in all."""
    return sum(c or 0 for c in messages) >= HEAVY_MESSAGES


def pure_map(fn: Callable[[T], R], items: Iterable[T]) -> list[R | Failed]:
    """``[fn(x) for x in items]``, on every core when there is enough work; a raised exception is a ``Failed``."""
    return list(pure_imap(fn, items))


def pure_imap(
    fn: Callable[[T], R], items: Iterable[T], chunksize: int | None = None, heavy: bool = False, nbytes: int = 0
) -> Generator[R | Failed, None, None]:
    """``fn(x) for x in items``, lazily and in order, on every core when there is enough work.

    A raised exception is that item's ``Failed``. The workers run ahead of the caller
    (every item is submitted at once), so the caller's writes overlap their work.
    ``chunksize``: items sent to a worker at once (default: small, so results come
    back soon; cheap items take bigger chunks). ``heavy``: the items are few but big (``heavy()``), so even
    one goes to a worker; so do items that read ``nbytes`` of files in all, from ``HEAVY_BYTES`` on.
    """
    global _broken
    items = list(items)
    heavy = heavy or nbytes >= HEAVY_BYTES
    n = workers()
    if n < 2 or not items or (len(items) < MIN_ITEMS and not heavy) or _broken:
        yield from (_guarded(fn, x) for x in items)
        return
    done = 0
    try:
        pool = _start(n)
        # Small chunks: the first results come back soon, so the caller starts writing early.
        size = chunksize or max(1, min(4, len(items) // (8 * n)))
        for result in pool.map(_call, [(fn, x) for x in items], chunksize=size):
            done += 1
            if done == len(items) and heavy and len(items) < MIN_ITEMS:
                shutdown()  # what a huge item's worker kept of its memory goes with it, not into the next stage's
            yield result
    except (BrokenProcessPool, OSError, RuntimeError) as exc:
        # A worker died (out of memory, killed) or could not start (a script without
        # ``if __name__ == "__main__":`` that the workers import again): the work is pure,
        # so the rest is simply done here, and this process does not try the pool again.
        log.warning("the process pool failed (%s: %s); working in one process", type(exc).__name__, exc)
        _broken = True
        shutdown()
        yield from (_guarded(fn, x) for x in items[done:])


def _start(n: int) -> ProcessPoolExecutor:
    global _pool
    if _pool is None:
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(_PRELOAD)
        _pool = ProcessPoolExecutor(
            max_workers=n, mp_context=ctx, initializer=_die_with_parent, initargs=(os.getpid(),)
        )
    return _pool


def _die_with_parent(run_pid: int) -> None:
    """A worker ends when the run's process ends, so a run killed with SIGKILL leaves no worker behind.

    The workers are the forkserver's children, and each holds the forkserver's "alive"
    pipe open, so neither ever sees the run go: without this they would wait on their
    task queue forever (holding the run's stdout and stderr open). A daemon thread waits
    on the run's process (a pidfd, Linux 5.3+; else it looks once a second) and ends the
    worker when it is gone.
    """
    threading.Thread(target=_watch, args=(run_pid,), name="kenang-run-watch", daemon=True).start()


def _watch(run_pid: int) -> None:
    try:
        fd = os.pidfd_open(run_pid)
    except (AttributeError, OSError):
        fd = None
    if fd is not None:
        select.select([fd], [], [])  # readable once the process has ended
        os._exit(1)
    while _alive(run_pid):
        time.sleep(1.0)
    os._exit(1)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def shutdown() -> None:
    """Stop the workers (the end of a run); the next ``pure_map`` starts them again."""
    global _pool
    if _pool is not None:
        _pool.shutdown(wait=True, cancel_futures=True)
        _pool = None


atexit.register(shutdown)
