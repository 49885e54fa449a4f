"""Evaluation helpers for the recall benchmarks: a fusion to compare against, and the scores.

``fuse_rrf`` is Reciprocal Rank Fusion, the usual baseline for hybrid search, kept so
``recall_eval.py`` can show what the weighted sum of ``transforms.recall.fuse`` buys.
``metrics`` scores ranked day lists against answer days. ``half`` splits every question
set into a tune half and a test half: a method's knobs (weights, decays, windows) may be
tuned only on the questions of ``'tune'``, and its targets are read on ``'test'``, so a
figure on ``'test'`` was not fitted to those questions. None of this is used by kenang
itself. Pure numpy and hashlib, no I/O.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import math
from collections.abc import Iterable, Sequence

import numpy as np

RRF_K = 60


def fuse_rrf(*scores: np.ndarray, k: int = RRF_K) -> np.ndarray:
    """Reciprocal Rank Fusion: sum of 1 / (k + rank) over the given score arrays."""
    total = np.zeros(scores[0].shape, dtype=np.float64)
    for s in scores:
        ranks = np.empty(len(s), dtype=np.float64)
        ranks[np.argsort(-s, kind="stable")] = np.arange(1, len(s) + 1)
        total += 1.0 / (k + ranks)
    return total


def metrics(ranked: Iterable[Sequence[dt.date]], answers: Iterable[Sequence[dt.date]]) -> dict[str, float]:
    """hit@1, hit@5 and MRR of ranked day lists against answer days (any answer counts)."""
    h1 = h5 = rr = 0.0
    n = 0
    for days, gold in zip(ranked, answers, strict=False):
        n += 1
        gold = set(gold)
        rank = next((i for i, d in enumerate(days, 1) if d in gold), None)
        h1 += rank == 1
        h5 += rank is not None and rank <= 5
        rr += 1.0 / rank if rank else 0.0
    return (
        {"hit@1": h1 / n, "hit@5": h5 / n, "mrr": rr / n}
        if n
        else {"hit@1": math.nan, "hit@5": math.nan, "mrr": math.nan}
    )


def half(qid: str) -> str:
    """'tune' or 'test' for a question id: the parity of the first byte of its sha256 (even: tune).

    Deterministic across runs, machines and question sets, and fixed per question, so a
    question never moves between halves when others are added. Tune methods only on
    'tune'; read targets on 'test'.
    """
    return "tune" if hashlib.sha256(qid.encode("utf-8")).digest()[0] % 2 == 0 else "test"
