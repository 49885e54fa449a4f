"""Which days a run should load, decided from the archive record and the day ledger.

Pure reads, no Prefect: the flows, ``--dry-run`` and ``kenang status`` share them.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Mapping

from flows import ledger
from flows.archive import list_archive
from flows.config import Settings
from flows.fsio import sha256_file
from flows.ledger import ArchivedDay, DayKey, archived_days, day_state


#: Up to this many candidate days are read partition by partition; more, in one scan.
_ONE_BY_ONE = 64


def pending_days(settings: Settings) -> tuple[list[ArchivedDay], dict[DayKey, dict], set[DayKey]]:
    """Days to load: pending ones whose record changed, and ones whose last load failed.

    Returns (days to load, the ledger, the pending keys checked); the caller clears
    the checked keys once their outcomes are in the ledger. Reads one archive_files
    partition per candidate day, never the whole record.
    """
    wh = settings.paths.warehouse
    days = ledger.read_days(wh)
    checked = ledger.read_pending(wh)
    failed = {k for k, r in days.items() if r["status"] == "failed"}
    keys = sorted(checked | failed)
    if len(keys) > _ONE_BY_ONE:  # a big first import: one scan beats many small reads
        everything = archived_days(wh)
        found = [everything.get(k) for k in keys]
    else:
        found = [ledger.archived_day(wh, *k) for k in keys]
    todo = [a for a in found if a is not None and day_state(a, days.get((a.user_id, a.date))) != "loaded"]
    return todo, days, checked


@dataclass(frozen=True)
class Survey:
    """What a backfill found in the archive folders of its range."""

    days: tuple[ArchivedDay, ...]
    adopt: tuple[dict, ...]  # archive_files rows for files on disk with no record
    ledger: Mapping[DayKey, dict]


def survey(settings: Settings, start: dt.date, end: dt.date, only_missing: bool, run_id: str) -> Survey:
    """Days with archived files in [start, end], from the folders alone; adopt unrecorded files."""
    wh = settings.paths.warehouse
    recorded = archived_days(wh, "date BETWEEN ? AND ?", [start, end])
    known = {p for a in recorded.values() for p in a.paths}
    now = dt.datetime.now(dt.timezone.utc)
    adopt = []
    files: dict[DayKey, list[tuple[str, str]]] = {
        k: list(zip(a.paths, a.shas)) for k, a in recorded.items()
    }
    for d in list_archive(settings, start, end):
        if d.relpath in known:
            continue
        st = d.path.stat()
        sha = sha256_file(d.path)
        adopt.append(
            {
                "path": d.relpath,
                "user_id": d.user_id,
                "date": d.day,
                "size": st.st_size,
                "sha256": sha,
                "original_path": None,
                "run_id": run_id,
                "archived_at": now,
            }
        )
        files.setdefault((d.user_id, d.day), []).append((d.relpath, sha))
    days_ledger = ledger.read_days(wh)
    days = []
    for key in sorted(files):
        a = ArchivedDay.of(key[0], key[1], files[key])
        if only_missing and day_state(a, days_ledger.get(key)) == "loaded":
            continue
        days.append(a)
    return Survey(tuple(days), tuple(adopt), days_ledger)


@dataclass(frozen=True)
class DayStatus:
    user_id: str
    date: dt.date
    state: str  # loaded | failed | missing
    files: int
    reason: str | None
    run_id: str | None
    summary: str = "pending"  # summarized | failed | pending (not yet, or made from older content)
    summary_reason: str | None = None


def day_statuses(settings: Settings) -> list[DayStatus]:
    """Every (user, day) the archive record or the ledger knows, with its state."""
    wh = settings.paths.warehouse
    archived = archived_days(wh)
    rows = ledger.read_days(wh)
    out = []
    for key in sorted(set(archived) | set(rows)):
        a, row = archived.get(key), rows.get(key)
        state = day_state(a, row)
        out.append(
            DayStatus(
                key[0],
                key[1],
                state,
                len(a.paths) if a else 0,
                row["reason"] if row else None,
                row["run_id"] if row else None,
                _summary_state(row),
                row.get("summary_reason") if row else None,
            )
        )
    return out


def _summary_state(row: dict | None) -> str:
    if not row or not row.get("summary_status"):
        return "pending"
    if row["summary_status"] == "failed":
        return "failed"
    return "summarized" if row.get("summary_fingerprint") == row.get("content_fingerprint") else "pending"
