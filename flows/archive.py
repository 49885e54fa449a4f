"""Archive: move originals into read-only storage with nothing lost.

Layout: ``<archive>/daily_sessions/YYYY-MM-DD/<file>`` for the default user, and
``<archive>/daily_sessions/YYYY-MM-DD/<user>/<file>`` for everyone else.

A batch goes in three steps, each safe to crash after:

1. place: every file is copied to a temporary name, fsynced, checksum-verified,
   made read-only (0444) and renamed into place (``fsio.safe_copy``). Identical bytes
   already there are recognised; a same name with other bytes gets a new name.
2. record: the ``archive_files`` partitions of the touched (user, day)s are rewritten
   with the new rows (path, size, sha256, user, day, run id). A path already
   recorded is never recorded twice.
3. delete: each source is removed, and only if it still holds the archived bytes.

A crash before 3 leaves sources in ``active/``; the next run finds their identical
copies, records them if needed, and deletes the sources. ``verify`` re-hashes the
archive against the record.
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

import pyarrow as pa

from flows import faults, ledger, progress, warehouse
from flows.config import Settings
from flows.fsio import TMP_PREFIX, remove_source, safe_copy, safe_write, sha256_file
from flows.ingest import Ready, ReadyExport
from schemas.tables import ARCHIVE_FILES

DAILY = "daily_sessions"


def day_dir(settings: Settings, user_id: str, day: dt.date) -> Path:
    base = settings.paths.archive / DAILY / day.isoformat()
    return base if user_id == settings.default_user else base / user_id


def rel(settings: Settings, path: Path) -> str:
    return path.relative_to(settings.paths.archive).as_posix()


@dataclass(frozen=True)
class ArchiveResult:
    placed: int = 0
    already_there: int = 0
    recorded: int = 0
    sources_deleted: int = 0
    sources_kept: int = 0
    bytes: int = 0
    days: frozenset = field(default_factory=frozenset)  # {(user, day)}


def archive_batch(settings: Settings, ready: Iterable[Ready], run_id: str) -> ArchiveResult:
    """Place, record, then delete the sources of a batch of ready files."""
    ready = list(ready)
    placed_rows: list[tuple[Ready, dict]] = []
    n_new = n_existed = n_bytes = 0
    now = dt.datetime.now(dt.timezone.utc)
    for i, r in enumerate(ready, 1):
        rs = r.resolved
        placed = safe_copy(r.cand.path, day_dir(settings, rs.user_id, rs.day), r.cand.path.name)
        progress.report("archive", i, len(ready), i, unit="files")
        n_new += not placed.existed
        n_existed += placed.existed
        n_bytes += placed.size
        placed_rows.append(
            (
                r,
                {
                    "path": rel(settings, placed.path),
                    "user_id": rs.user_id,
                    "date": rs.day,
                    "size": placed.size,
                    "sha256": placed.sha256,
                    "original_path": r.cand.relpath,
                    "run_id": run_id,
                    "archived_at": now,
                },
            )
        )
    faults.checkpoint("archive.batch_placed")
    recorded = record(settings, [row for _, row in placed_rows])
    faults.checkpoint("archive.recorded")
    deleted = kept = 0
    for r, row in placed_rows:
        if remove_source(r.cand.path, row["sha256"]):
            deleted += 1
            faults.checkpoint("archive.source_deleted")
        else:
            kept += 1
    days = frozenset((row["user_id"], row["date"]) for _, row in placed_rows)
    return ArchiveResult(n_new, n_existed, recorded, deleted, kept, n_bytes, days)


IMPORTS = "imports"


def imports_dir(settings: Settings, user_id: str) -> Path:
    base = settings.paths.archive / IMPORTS
    return base if user_id == settings.default_user else base / user_id


def archive_exports(settings: Settings, exports: Iterable[ReadyExport], run_id: str) -> ArchiveResult:
    """Archive each export once, and its day transcripts into the day folders; then delete it.

    Order, each step safe to crash after: the original goes byte-exact (verified, 0444)
    to ``imports/[user/]``; each (conversation, day) transcript is written read-only
    into its day folder (identical bytes are recognised, so a re-import adds nothing,
    and a newer export's longer transcript gets a new name beside the old one, whose
    messages the load merges by id); the transcripts are recorded, with the export's
    archive path as their ``original_path``; only then is the export removed from
    ``active/``.
    """
    n_new = n_existed = n_bytes = recorded = deleted = kept = 0
    days: set = set()
    now = dt.datetime.now(dt.timezone.utc)
    for e in exports:
        original = safe_copy(e.cand.path, imports_dir(settings, e.user_id), e.cand.path.name)
        if original.sha256 != e.sha256:
            kept += 1  # changed since the scan: left for the next run
            continue
        rows = []
        for d in e.derived:
            placed = safe_write(d.data, day_dir(settings, e.user_id, d.day), d.name)
            n_new += not placed.existed
            n_existed += placed.existed
            n_bytes += placed.size
            rows.append({
                "path": rel(settings, placed.path), "user_id": e.user_id, "date": d.day, "size": placed.size,
                "sha256": placed.sha256, "original_path": rel(settings, original.path), "run_id": run_id,
                "archived_at": now,
            })
        recorded += record(settings, rows)
        faults.checkpoint("archive.recorded")
        days |= {(r["user_id"], r["date"]) for r in rows}
        if remove_source(e.cand.path, e.sha256):
            deleted += 1
            faults.checkpoint("archive.source_deleted")
        else:
            kept += 1
    return ArchiveResult(n_new, n_existed, recorded, deleted, kept, n_bytes, frozenset(days))


def record(settings: Settings, rows: list[dict]) -> int:
    """Add rows to archive_files, one whole partition per (user, day); skip recorded paths."""
    by_part: dict[tuple[str, dt.date], list[dict]] = {}
    for row in rows:
        by_part.setdefault((row["user_id"], row["date"]), []).append(row)
    added = 0
    wh = settings.paths.warehouse
    ledger.mark_pending(wh, by_part)  # before the record changes: see ledger.read_pending
    faults.checkpoint("archive.pending_marked")
    for (user, day), new in sorted(by_part.items()):
        path = warehouse.partition_file(wh, ARCHIVE_FILES, day, user)
        existing = warehouse.read_file(path, ARCHIVE_FILES).to_pylist() if path.exists() else []
        known = {r["path"] for r in existing}
        fresh = []
        for r in new:
            if r["path"] not in known:
                known.add(r["path"])
                fresh.append(r)
        if not fresh:
            continue
        merged = sorted(existing + fresh, key=lambda r: r["path"])
        warehouse.write_file(path, pa.Table.from_pylist(merged, schema=ARCHIVE_FILES.schema), ARCHIVE_FILES)
        added += len(fresh)
    return added


# --- what the archive holds, from the files alone ----------------------------------

@dataclass(frozen=True)
class OnDisk:
    path: Path
    relpath: str
    user_id: str
    day: dt.date


def list_archive(settings: Settings, start: dt.date | None = None, end: dt.date | None = None) -> list[OnDisk]:
    """Every archived original, from the folder layout alone (no warehouse needed)."""
    root = settings.paths.archive / DAILY
    out: list[OnDisk] = []
    if not root.is_dir():
        return out
    for day_entry in sorted(os.scandir(root), key=lambda e: e.name):
        try:
            day = dt.date.fromisoformat(day_entry.name)
        except ValueError:
            continue
        if (start and day < start) or (end and day > end) or not day_entry.is_dir(follow_symlinks=False):
            continue
        for entry in sorted(os.scandir(day_entry.path), key=lambda e: e.name):
            if entry.is_dir(follow_symlinks=False):
                for sub in sorted(os.scandir(entry.path), key=lambda e: e.name):
                    if _is_original(sub):
                        out.append(OnDisk(Path(sub.path), rel(settings, Path(sub.path)), entry.name, day))
            elif _is_original(entry):
                out.append(OnDisk(Path(entry.path), rel(settings, Path(entry.path)), settings.default_user, day))
    return out


def _is_original(entry: os.DirEntry) -> bool:
    return not entry.name.startswith(".") and entry.is_file(follow_symlinks=False) and not is_derived(entry.name)


def is_derived(name: str) -> bool:
    """Files kenang itself writes beside the originals (summaries); never originals."""
    return name.endswith(".summary.md")


# --- verify -----------------------------------------------------------------------

@dataclass(frozen=True)
class VerifyReport:
    checked: int
    ok: int
    missing: tuple[str, ...]
    changed: tuple[str, ...]
    unrecorded: tuple[str, ...]
    writable: tuple[str, ...]
    leftover_tmp: tuple[str, ...]

    @property
    def problems(self) -> int:
        return len(self.missing) + len(self.changed) + len(self.unrecorded)


def verify(settings: Settings) -> VerifyReport:
    """Re-hash every archived file against the record."""
    recorded = {
        r["path"]: r for r in warehouse.read(settings.paths.warehouse, ARCHIVE_FILES).to_pylist()
    }
    on_disk = {d.relpath: d for d in list_archive(settings)}
    missing, changed, unrecorded, writable = [], [], [], []
    ok = 0
    for relpath, row in sorted(recorded.items()):
        d = on_disk.get(relpath)
        if d is None:
            missing.append(relpath)
            continue
        if sha256_file(d.path) != row["sha256"]:
            changed.append(relpath)
            continue
        ok += 1
        if os.stat(d.path).st_mode & 0o222:
            writable.append(relpath)
    unrecorded = sorted(set(on_disk) - set(recorded))
    tmp = sorted(
        p.relative_to(settings.paths.archive).as_posix()
        for p in (settings.paths.archive / DAILY).rglob(f"{TMP_PREFIX}*")
    ) if (settings.paths.archive / DAILY).exists() else []
    return VerifyReport(
        checked=len(recorded) + len(unrecorded),
        ok=ok,
        missing=tuple(missing),
        changed=tuple(changed),
        unrecorded=tuple(unrecorded),
        writable=tuple(writable),
        leftover_tmp=tuple(tmp),
    )

