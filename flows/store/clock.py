"""Every wait kenang makes on purpose goes through here: back-off, lock polls, retry delays.

A run waits for real: ``sleep`` is ``time.sleep`` and ``monotonic`` is
``time.monotonic``. A test installs its own clock (``use``) that records each delay it
is asked for and moves its own time on by it, so the suite never sleeps through a
back-off, and its tests assert on the delays asked for, never on time.

Deadlines on other processes stay on the real clock: a socket's timeout, a database's
busy timeout, the grace a run stopped with SIGTERM gives its children, a worker's
watch on its run (no test can stand in for those processes' time). So do the
back-offs inside boto and s3fs, which wait in their own event loop.
"""

from __future__ import annotations

import time
from typing import Protocol


class Clock(Protocol):
    def monotonic(self) -> float: ...

    def sleep(self, seconds: float) -> None: ...


class RealClock:
    """The clock of a run: the process's own."""

    def monotonic(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


_clock: Clock = RealClock()


def monotonic() -> float:
    """Seconds on the current clock, for deadlines (only differences mean anything)."""
    return _clock.monotonic()


def sleep(seconds: float) -> None:
    """Wait ``seconds`` on the current clock."""
    _clock.sleep(seconds)


def use(clock: Clock) -> Clock:
    """Make ``clock`` the current clock; returns the one it replaces, to put back."""
    global _clock
    previous, _clock = _clock, clock
    return previous
