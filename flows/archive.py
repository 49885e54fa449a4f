"""Archive: move originals into read-only storage with nothing lost.

Layout: ``<archive>/daily_sessions/YYYY-MM-DD/<file>`` for the default user, and
``<archive>/daily_sessions/YYYY-MM-DD/<user>/<file>`` for everyone else. A file name
that holds a secret (a key pasted into a name) is archived under a stable hash of it,
``redacted-<sha>.md``: names reach tables and reports, so they are redacted like text.

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
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

import pyarrow as pa

from flows import faults, ledger, progress, warehouse
from flows.config import Settings
from flows.fsio import READ_ONLY, TMP_PREFIX, atomic_write_bytes, remove_source, safe_copy, safe_write, sha256_file
from flows.ingest import Ready, ReadyExport
from schemas.tables import ARCHIVE_FILES
from transforms.redact import redact_file_name

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
        placed = safe_copy(r.cand.path, day_dir(settings, rs.user_id, rs.day), r.cand.name)
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
        original = safe_copy(e.cand.path, imports_dir(settings, e.user_id), e.cand.name)
        if original.sha256 != e.sha256:
            kept += 1  # changed since the scan: left for the next run
            continue
        rows = []
        for d in e.derived:
            placed = safe_write(d.data, day_dir(settings, e.user_id, d.day), redact_file_name(d.name))
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
    """Add rows to archive_files, one whole partition per (user, day); skip recorded paths.

    Each touched day's manifest in the archive is written first, then its partition:
    the archive describes itself, so a backfill with the warehouse gone still knows
    which files kenang archived (and which were placed there behind its back).
    """
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
        merged = sorted(existing + fresh, key=lambda r: r["path"])
        write_manifest(settings, user, day, merged)
        if not fresh:
            continue
        warehouse.write_file(path, pa.Table.from_pylist(merged, schema=ARCHIVE_FILES.schema), ARCHIVE_FILES)
        added += len(fresh)
    return added


# --- the archive's own record of what kenang put in each day folder ------------------
#
# ``<day folder>/.kenang-files.json`` (0444) lists every original kenang archived there:
# name -> sha256, size, original path. It holds nothing that changes between runs, so
# an identical night writes identical bytes. Hidden, so no scan takes it for a file.

MANIFEST = ".kenang-files.json"


def manifest_entries(rows: Iterable[dict]) -> dict:
    """The manifest body for a day's archive_files rows."""
    files = {}
    for r in sorted(rows, key=lambda r: r["path"]):
        files[r["path"].rsplit("/", 1)[-1]] = {"sha256": r["sha256"], "size": r["size"],
                                               "original_path": r["original_path"]}
    return {"kenang_manifest": 1, "files": files}


def write_manifest(settings: Settings, user: str, day: dt.date, rows: list[dict]) -> bool:
    """Write a day folder's manifest if it would change; returns whether it did."""
    data = (json.dumps(manifest_entries(rows), indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode()
    path = day_dir(settings, user, day) / MANIFEST
    if path.is_file() and path.read_bytes() == data:
        return False
    atomic_write_bytes(path, data, mode=READ_ONLY)
    faults.checkpoint("archive.manifest_written")
    return True


def read_manifests(settings: Settings, start: dt.date | None = None, end: dt.date | None = None) -> dict[tuple[str, dt.date], list[dict]]:
    """archive_files rows (without run fields) for every day folder's manifest in [start, end]."""
    out: dict[tuple[str, dt.date], list[dict]] = {}
    for user, day, folder in _day_folders(settings, start, end):
        try:
            body = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        except FileNotFoundError:
            continue
        except (OSError, ValueError):
            continue  # unreadable: its files show as unrecorded, which verify reports
        rows = []
        for name, e in sorted((body.get("files") or {}).items()):
            relpath = rel(settings, folder / name)
            rows.append({"path": relpath, "user_id": user, "date": day, "size": e.get("size"),
                         "sha256": e.get("sha256"), "original_path": e.get("original_path")})
        out[(user, day)] = rows
    return out


def _day_folders(settings: Settings, start: dt.date | None, end: dt.date | None):
    """(user, day, folder) for every day folder in range, from the layout alone."""
    root = settings.paths.archive / DAILY
    if not root.is_dir():
        return
    for day_entry in sorted(os.scandir(root), key=lambda e: e.name):
        try:
            day = dt.date.fromisoformat(day_entry.name)
        except ValueError:
            continue
        if (start and day < start) or (end and day > end) or not day_entry.is_dir(follow_symlinks=False):
            continue
        yield settings.default_user, day, Path(day_entry.path)
        for sub in sorted(os.scandir(day_entry.path), key=lambda e: e.name):
            if sub.is_dir(follow_symlinks=False) and not sub.name.startswith("."):
                yield sub.name, day, Path(sub.path)


# --- what the archive holds, from the files alone ----------------------------------

@dataclass(frozen=True)
class OnDisk:
    path: Path
    relpath: str
    user_id: str
    day: dt.date


def list_archive(settings: Settings, start: dt.date | None = None, end: dt.date | None = None) -> list[OnDisk]:
    """Every archived original, from the folder layout alone (no warehouse needed)."""
    out: list[OnDisk] = []
    for user, day, folder in _day_folders(settings, start, end):
        for entry in sorted(os.scandir(folder), key=lambda e: e.name):
            if _is_original(entry):
                out.append(OnDisk(Path(entry.path), rel(settings, Path(entry.path)), user, day))
    return out


def _is_original(entry: os.DirEntry) -> bool:
    return not entry.name.startswith(".") and entry.is_file(follow_symlinks=False) and not is_derived(entry.name)


def is_derived(name: str) -> bool:
    """Files kenang itself writes beside the originals (summaries); never originals."""
    return name.endswith(".summary.md")
