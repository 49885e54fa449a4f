"""One shape for what a per-day stage did: a ``DayOutcome`` per (user, day), a ``StageResult`` per batch.

Load, summarize and the recall index all work day by day, and all answer the same
questions of a run: how many days ended in which status, what they added up to, which
failed and why, and which ledger columns to write. Each stage names its statuses
(``loaded``/``unchanged``, ``summarized``, ``indexed``/``unchanged``; ``failed`` for all)
and its numbers (``sessions``, ``messages``, ``chunks``, ``completion_tokens`` ...);
``StageResult.counts`` turns them into the run report's dict.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from transforms.redact import redact_reason

FAILED = "failed"


@dataclass(frozen=True)
class DayOutcome:
    user_id: str
    date: dt.date
    status: str
    reason: str | None = None
    ledger_row: Mapping | None = None  # the ledger columns this stage owns, to merge into the day's row
    numbers: Mapping[str, float] = field(default_factory=dict)  # summed by StageResult.counts
    notes: Mapping[str, Any] = field(default_factory=dict)  # stage-specific details (merged sessions, fallback fields)

    @property
    def failure(self) -> dict:
        return {"user_id": self.user_id, "date": self.date.isoformat(), "reason": self.reason}


def failed(prefix: str | None, user_id: str, day: dt.date, run_id: str, reason: str, **columns: Any) -> DayOutcome:
    """A day this stage failed on: ``<prefix>_status/_reason/_run_id`` in the ledger, the others untouched.

    The load owns the row's unprefixed ``status``, ``reason`` and ``run_id`` (``prefix=None``).
    """

    def col(name: str) -> str:
        return f"{prefix}_{name}" if prefix else name

    reason = redact_reason(reason, 1000)  # the gate: it may quote what failed
    row = {
        "user_id": user_id,
        "date": day,
        col("status"): FAILED,
        col("reason"): reason,
        col("run_id"): run_id,
        **columns,
    }
    return DayOutcome(user_id, day, FAILED, reason, row)


@dataclass(frozen=True)
class StageResult:
    days: tuple[DayOutcome, ...] = ()
    waiting: tuple[tuple[str, dt.date], ...] = ()  # days left for a later run by the stage's budget
    unavailable: str | None = None  # why the model server could not be used: the waiting days wait for it

    def count(self, status: str) -> int:
        return sum(d.status == status for d in self.days)

    def total(self, name: str) -> float:
        return sum(d.numbers.get(name, 0) for d in self.days)

    def counts(self, statuses: Iterable[str], numbers: Iterable[str]) -> dict:
        """``days``, one count per status (``failed`` included), one total per number, and the failures."""
        out: dict[str, Any] = {"days": len(self.days)}
        out.update({s: self.count(s) for s in (*statuses, FAILED)})
        for name in numbers:
            t = self.total(name)
            out[name] = round(t, 3) if isinstance(t, float) else t
        out["failures"] = [d.failure for d in self.days if d.status == FAILED]
        return out

    @classmethod
    def of(cls, parts: Iterable[StageResult]) -> StageResult:
        parts = list(parts)
        return cls(
            tuple(d for p in parts for d in p.days),
            tuple(k for p in parts for k in p.waiting),
            next((p.unavailable for p in parts if p.unavailable), None),
        )
