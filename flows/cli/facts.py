"""What ``kenang status`` and ``kenang run --dry-run`` report, gathered: plain dicts, changing nothing.

The scans, ledger reads and plans live here; ``flows.cli.report`` only renders what
they return. Each dict is also the command's ``--json`` output, so its keys are a
contract: add, never rename. Only counts, ids, paths and reasons go in, never
transcript text. Each function imports the stages it reads, so a dry run does not
load what only status needs.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import time
from typing import TYPE_CHECKING, Any

from flows.config import Settings

if TYPE_CHECKING:
    from flows.stages import ingest, plan


# --- dry run ---------------------------------------------------------------------


def dry_run(settings: Settings, now: dt.datetime) -> dict:
    """What a nightly run at `now` would do, computed without changing anything."""
    from flows.stages import collect, ingest, plan

    sources = (
        collect.counts(collect.collect(settings, now, time.time(), dry_run=True)) if settings.config.sources else None
    )
    found = ingest.scan(settings, now, time.time())
    pending, _, _ = plan.pending_days(settings)
    new_days = {(r.resolved.user_id, r.resolved.day) for r in found.ready}
    new_days |= {(e.user_id, d.day) for e in found.exports for d in e.derived}
    return {
        "now": now.isoformat(),
        "archive": [
            {
                "file": r.cand.relpath,
                "user_id": r.resolved.user_id,
                "date": r.resolved.day.isoformat(),
                "messages": r.messages,
                "day_source": r.resolved.day_source,
            }
            for r in found.ready
        ],
        "imports": [
            {
                "file": e.cand.relpath,
                "format": e.format,
                "user_id": e.user_id,
                "conversations": e.conversations,
                "transcripts": len(e.derived),
                "messages": sum(d.messages for d in e.derived),
                "days": f"{min(d.day for d in e.derived)} .. {max(d.day for d in e.derived)}",
            }
            for e in found.exports
        ],
        "quarantine": [{"file": r.cand.relpath, "kind": r.kind, "reason": r.reason} for r in found.rejected],
        "waiting": [_waiting(w) for w in found.waiting],
        "load_days": sorted(
            {f"{u}/{d.isoformat()}" for u, d in new_days} | {f"{a.user_id}/{a.date.isoformat()}" for a in pending}
        ),
        "hidden_skipped": found.hidden,
        "skipped": [{"file": x.relpath, "why": x.why} for x in found.skipped],
        "collect": sources,
    }


def _waiting(w: ingest.Waiting) -> dict:
    out: dict[str, str | None] = {"file": w.cand.relpath, "why": w.why}
    if w.day and w.eligible_at:  # a waiting day always comes with its user and the time it is eligible
        out.update(user_id=w.user_id, date=w.day.isoformat(), eligible_at=w.eligible_at.isoformat())
    return out


# --- status ----------------------------------------------------------------------


def status(settings: Settings) -> dict:
    from flows.stages import ingest, plan
    from flows.stages.quarantine import list_quarantine
    from flows.store import ledger, mount
    from flows.store.lock import holder

    wh = settings.paths.warehouse
    now = dt.datetime.now(dt.UTC)
    found = ingest.scan(settings, now, time.time())
    days = plan.day_statuses(settings)
    lock = holder(settings.paths.lock)
    runs = ledger.read_runs(wh, limit=10)
    for r in runs:
        if r["status"] == "running" and (not lock or lock.get("run_id") != r["run_id"]):
            r["status"] = "interrupted"
    q = list_quarantine(settings)
    return {
        "home": str(settings.paths.home),
        "running": lock,
        "pending": [_waiting(w) for w in found.waiting]
        + [
            {"file": r.cand.relpath, "why": "ready", "user_id": r.resolved.user_id, "date": r.resolved.day.isoformat()}
            for r in found.ready
        ],
        "unreadable_in_active": [{"file": r.cand.relpath, "kind": r.kind, "reason": r.reason} for r in found.rejected],
        "skipped_in_active": [{"file": x.relpath, "why": x.why} for x in found.skipped],
        "archive": mount.check(settings, probe=False).as_dict(),
        "days": {
            "loaded": sum(d.state == "loaded" for d in days),
            "failed": [_day(d) for d in days if d.state == "failed"],
            "missing": [_day(d) for d in days if d.state == "missing"],
            "summarized": sum(d.summary == "summarized" for d in days),
            "summary_failed": [
                {"user_id": d.user_id, "date": d.date.isoformat(), "reason": d.summary_reason}
                for d in days
                if d.summary == "failed"
            ],
            "summary_pending": sum(d.state == "loaded" and d.summary == "pending" for d in days),
        },
        "index": _index_status(settings),
        "backlog": _backlog(settings, sum(d.state == "loaded" and d.summary == "pending" for d in days), runs),
        "model_servers": _unavailable(runs),
        "quarantine": q,
        "core_memory": _core_memory_problems(settings),
        "runs": [
            {
                **{
                    k: _local(r[k], settings)
                    for k in ("run_id", "flow", "status", "started_at", "finished_at", "error")
                },
                "degraded": _degraded(r),
            }
            for r in runs
        ],
    }


def _degraded(run: dict) -> str | None:
    """The archive's state when the run ended degraded (exit 3: not mounted, foreign, read-only, full, unreachable)."""
    try:
        counts = json.loads(run.get("counts") or "{}")
    except ValueError:
        return None
    return (counts.get("degraded") or {}).get("archive") if isinstance(counts, dict) else None


def _local(v: Any, settings: Settings) -> Any:
    """A stored (UTC) time in the home's time zone, the same instant, as the notes and `kenang sql` show it."""
    return v.astimezone(settings.timezone) if isinstance(v, dt.datetime) and v.tzinfo else v


def _core_memory_problems(settings: Settings) -> list[str]:
    """Each core memory file kenang cannot read (a link, a folder, bad UTF-8, oversized): what and what to do."""
    from flows.store import core_memory

    return [p for user in core_memory.users(settings) for p in core_memory.errors(settings, user)]


def _unavailable(runs: list[dict]) -> dict:
    """What the last completed run said of its model servers: stage -> why it could not use one (none: it could)."""
    for r in runs:
        if r["status"] == "completed":
            c = json.loads(r["counts"] or "{}")
            return {
                stage: (c.get(stage) or {}).get("unavailable")
                for stage in ("summarize", "index")
                if (c.get(stage) or {}).get("unavailable")
            }
    return {}


def _rate(runs: list[dict], stage: str, number: str) -> tuple[float, float] | None:
    """(``number`` per hour of the stage's own work, ``number`` per day done) over recent completed runs."""
    done = work = days = 0.0
    for r in runs:
        if r["status"] != "completed":
            continue
        c = json.loads(r["counts"] or "{}")
        n, s = (c.get(stage) or {}).get(number) or 0, (c.get("work_seconds") or {}).get(stage) or 0
        if n and s:
            done, work, days = done + n, work + s, days + ((c.get(stage) or {}).get("days") or 0)
    if not done or not work:
        return None
    return done / work * 3600, done / days if days else 0.0


def _backlog(settings: Settings, summaries_waiting: int, runs: list[dict]) -> dict:
    """What the summarize and index stages still have to do, and how many nights (and hours of work) that is.

    Rates are measured: the work seconds and counts of the last completed runs.
    """
    from flows.models import embed
    from flows.stages import plan
    from flows.stages import recall_index as index
    from flows.store import ledger

    rows = ledger.read_days(settings.paths.warehouse)
    eid = embed.configured_id(settings)
    index_waiting = len(plan.days_needing(rows, lambda r: index.is_fresh(r, eid)))
    days_budget, chunk_budget = plan.summary_budget(settings), plan.chunk_budget(settings)
    out = {}
    rate = _rate(runs, "summarize", "summarized")
    out["summarize"] = {
        "days": summaries_waiting,
        "budget_days": days_budget,
        "nights": (math.ceil(summaries_waiting / days_budget) if days_budget else 1) if summaries_waiting else 0,
        "hours": round(summaries_waiting / rate[0], 2) if rate and summaries_waiting else None,
    }
    rate = _rate(runs, "index", "embedded")
    chunks = round(index_waiting * rate[1]) if rate else None
    out["index"] = {
        "days": index_waiting,
        "budget_chunks": chunk_budget,
        "chunks_estimate": chunks,
        "nights": (math.ceil(chunks / chunk_budget) if chunk_budget and chunks else 1) if index_waiting else 0,
        "hours": round(chunks / rate[0], 2) if rate and chunks else None,
    }
    return out


def _index_status(settings: Settings) -> dict:
    """Recall index coverage from the ledger, against the configured embedder."""
    from flows.models import embed
    from flows.stages import plan
    from flows.stages import recall_index as index
    from flows.store import ledger

    rows = ledger.read_days(settings.paths.warehouse)
    eid = embed.configured_id(settings)
    loaded = [r for r in rows.values() if r["status"] == "loaded"]
    return {
        "embedder": eid,
        "indexed": sum(index.is_fresh(r, eid) for r in loaded),
        "failed": [
            {"user_id": r["user_id"], "date": r["date"].isoformat(), "reason": r.get("index_reason")}
            for r in loaded
            if r.get("index_status") == "failed"
        ],
        "pending": len(plan.days_needing(rows, lambda r: index.is_fresh(r, eid))),
    }


def _day(d: plan.DayStatus) -> dict:
    return {"user_id": d.user_id, "date": d.date.isoformat(), "files": d.files, "reason": d.reason}
