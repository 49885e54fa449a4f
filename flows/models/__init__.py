"""The models behind the Protocols of ``transforms``: the llama-cpp summarizer (``llm``) and the embedders (``embed``).

A homelab box always runs something else, so by default a model leaves one core free
(``default_threads``), and its waiting threads sleep instead of spinning
(``OMP_WAIT_POLICY=PASSIVE``, set by ``flows/__init__.py`` before any model library
loads; ggml's CPU backend and the bundled embedders use OpenMP).
"""

from __future__ import annotations

import os


def cores() -> int:
    """The cores this process may run on (its affinity, as a container or ``taskset`` limits it)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def default_threads(configured: int | None) -> int:
    """``n_threads`` as configured, else every core but one (at least one)."""
    return configured or max(1, cores() - 1)
