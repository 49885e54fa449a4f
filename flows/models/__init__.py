"""The models behind the Protocols of ``transforms``: the llama-cpp summarizer (``llm``) and the embedders (``embed``).

A homelab box always runs something else, so by default a model leaves one core free
(``default_threads``), and its waiting threads sleep instead of spinning
(``OMP_WAIT_POLICY=PASSIVE``, set by ``flows/__init__.py`` before any model library
loads; ggml's CPU backend and the bundled embedders use OpenMP).
"""

from __future__ import annotations

import os
import threading
from typing import Any


def cores() -> int:
    """The cores this process may run on (its affinity, as a container or ``taskset`` limits it)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def default_threads(configured: int | None) -> int:
    """``n_threads`` as configured, else every core but one (at least one)."""
    return configured or max(1, cores() - 1)


class OneBlasThread:
    """Within, numpy's BLAS runs each product on the calling thread alone (``one_blas_thread``)."""

    def __init__(self) -> None:
        #: Held while the BLAS thread count changes, and by the USE embedder for each of its calls (it sets the
        #: count around each with threadpoolctl, then puts back what it found): the two never interleave.
        self.lock = threading.RLock()
        self._inside = 0
        self._baseline: list[tuple[Any, int]] | None = None  # each BLAS library's own count, read once

    def _libraries(self) -> list[tuple[Any, int]]:
        if self._baseline is None:
            try:
                from threadpoolctl import ThreadpoolController

                libs = ThreadpoolController().select(user_api="blas").lib_controllers
                self._baseline = [(c, c.num_threads) for c in libs]
            except Exception:  # noqa: BLE001 - without threadpoolctl, BLAS keeps its threads: only slower
                self._baseline = []
        return self._baseline

    def __enter__(self) -> None:
        with self.lock:
            if not self._inside:
                for c, _ in self._libraries():
                    c.set_num_threads(1)
            self._inside += 1

    def __exit__(self, *exc: object) -> None:
        with self.lock:
            self._inside -= 1
            if not self._inside:  # the count read before the first search, whatever was set since
                for c, n in self._libraries():
                    c.set_num_threads(n)


#: Held by recall's searches (``flows.query.recall``): their products are small (a month's candidates, a day's
#: rows) and run side by side on the search's own threads; BLAS's threads would split each small product between
#: the cores and then spin, waiting for the next, on the cores those threads need (at 1M chunks a query cost 240 ms
#: of CPU with them, 145 ms without). Nested and concurrent searches share it: BLAS gets back the count it had
#: before the first search when the last one ends.
one_blas_thread = OneBlasThread()
