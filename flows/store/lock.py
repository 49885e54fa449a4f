"""One run at a time: an advisory ``flock`` on ``<home>/.kenang.lock``.

The lock is taken inside the flow body, so CLI runs and Prefect deployment runs
exclude each other alike. It dies with its process, so a killed run never leaves a
stale lock behind. The file holds the holder's pid, run id and start time, so the
second run's message can say who it waited for.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from flows.store import clock
from transforms.errors import LockHeld


@contextmanager
def run_lock(path: Path, run_id: str, wait_seconds: float = 0.0, poll: float = 0.5) -> Iterator[bool]:
    """Hold the run lock, waiting up to wait_seconds; LockHeld says who holds it.

    Yields whether the previous holder died holding it (its note is still in the
    file: a clean exit empties it), so the caller knows to sweep crash leftovers.
    A short minimum wait rides out `kenang status` peeking at the lock.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = clock.monotonic() + max(wait_seconds, 2.0)
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if clock.monotonic() >= deadline:
                    raise LockHeld(held_message(path, wait_seconds)) from None
                clock.sleep(poll)
        unclean = os.fstat(fd).st_size > 0
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps({"pid": os.getpid(), "run_id": run_id, "since": time.time()}).encode(), 0)
        try:
            yield unclean
        finally:
            os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def holder(path: Path) -> dict | None:
    """Who holds the lock now, or None if nobody does."""
    if not path.exists():
        return None
    fd = os.open(path, os.O_RDONLY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            try:
                return json.loads(os.pread(fd, 4096, 0) or b"{}")
            except ValueError:
                return {}
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def held_message(path: Path, waited: float) -> str:
    """The one line a second run prints: who holds the lock, for how long, and what to do."""
    info = holder(path) or {}
    who = f"run {info.get('run_id', '?')} (pid {info.get('pid', '?')})" if info else "another kenang run"
    since = ""
    if "since" in info:
        since = f", running for {time.time() - info['since']:.0f} s"
    wait = f" after waiting {waited:.0f} s" if waited else ""
    return (
        f"{who} holds {path}{since}; gave up{wait}. Wait for it to finish, or pass --wait SECONDS to queue behind it."
    )
