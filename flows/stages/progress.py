"""Progress of long work: items done out of total, and files per second.

Stages call ``report(stage, done, total, files, unit)``. By default that logs a line
at most every few seconds (what a Prefect worker's log wants); the CLI installs its
own reporter on stderr. Only counts travel here, never transcript text.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

Reporter = Callable[[str, int, int, int, float, str], None]  # stage, done, total, files, elapsed, unit

log = logging.getLogger("kenang")

_reporter: Reporter | None = None
_started: dict[str, float] = {}
_last_log = 0.0


def set_reporter(reporter: Reporter | None) -> None:
    global _reporter
    _reporter = reporter


def start(stage: str) -> None:
    _started[stage] = time.perf_counter()


def report(stage: str, done: int, total: int, files: int, unit: str = "days") -> None:
    global _last_log
    elapsed = time.perf_counter() - _started.setdefault(stage, time.perf_counter())
    if _reporter is not None:
        _reporter(stage, done, total, files, elapsed, unit)
        return
    now = time.monotonic()
    if done == total or now - _last_log >= 5:
        _last_log = now
        log.info("%s", line(stage, done, total, files, elapsed, unit))


def line(stage: str, done: int, total: int, files: int, elapsed: float, unit: str) -> str:
    if files == 0:  # model-bound work (summaries): seconds per item says more than a rate
        per = elapsed / done if done else 0.0
        return f"{stage}: {done}/{total} {unit}, {per:.1f} s per {unit.rstrip('s')}"
    rate = files / elapsed if elapsed > 0 else 0.0
    return f"{stage}: {done}/{total} {unit}, {rate:.1f} files/s"
