"""The archive's files: its layout, the manifest in each day folder, and the ``archive_files`` record.

Layout: ``<archive>/daily_sessions/YYYY-MM-DD/<file>`` for the default user, and
``<archive>/daily_sessions/YYYY-MM-DD/<user>/<file>`` for everyone else; exports once
under ``<archive>/imports/[user/]``. Everything here reads the layout or records what
the archive stage (``flows.stages.archive``) placed; nothing here moves an original.

``record`` writes a day folder's manifest first, then its ``archive_files`` partition,
so the archive describes itself: a backfill with the warehouse gone still knows which
files kenang archived, and which were placed there behind its back.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
from collections.abc import Iterable, Mapping, Set
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from flows.config import Settings
from flows.store import faults, ledger, remote, warehouse
from flows.store.fsio import READ_ONLY, atomic_write_bytes, sha256_file
from schemas.tables import ARCHIVE_FILES, PURGE_LOG
from transforms import vault
from transforms.vault import DAILY, IMPORTS


def marker(settings: Settings) -> Path:
    """The archive's marker: every write into the archive needs it (``fsio._make_folder``)."""
    from flows.store.mount import MARKER

    return settings.paths.archive / MARKER


def day_dir(settings: Settings, user_id: str, day: dt.date) -> Path:
    """The (user, day) folder, by the layout ``transforms.vault`` declares."""
    return settings.paths.archive / vault.day_folder(day, vault.user_folder(user_id, settings.default_user))


def rel(settings: Settings, path: Path) -> str:
    return path.relative_to(settings.paths.archive).as_posix()


def imports_dir(settings: Settings, user_id: str) -> Path:
    folder = vault.user_folder(user_id, settings.default_user)
    return settings.paths.archive / IMPORTS / folder if folder else settings.paths.archive / IMPORTS


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
        # A partition changed behind kenang's back is rebuilt from the rows given (the day's manifest).
        rebuilt = warehouse.changed_behind_our_back(path)
        existing = warehouse.read_file(path, ARCHIVE_FILES).to_pylist() if path.exists() and not rebuilt else []
        known = {r["path"] for r in existing}
        fresh = []
        for r in new:
            if r["path"] not in known:
                known.add(r["path"])
                fresh.append(r)
        merged = sorted(existing + fresh, key=lambda r: r["path"])
        write_manifest(settings, user, day, merged)
        if not fresh and not rebuilt:
            continue
        warehouse.write_file(path, pa.Table.from_pylist(merged, schema=ARCHIVE_FILES.schema), ARCHIVE_FILES)
        added += len(fresh)
    return added


def purge(settings: Settings, user: str, day: dt.date | None, paths: list[str], why: str) -> list[dict]:
    """Delete archived originals on purpose (``forget --purge``, retention), and say so.

    Each file is logged in ``purge_log`` (path, sha256, when, why) before it goes, then
    taken out of the day's manifest and ``archive_files`` partition, then deleted: a
    crash in between leaves a logged file that ``verify`` reports as purged, never a
    file gone without a word. An archive on S3 deletes the bucket's copy, every version of it,
    last (``flows.store.remote.delete``). Returns the log rows.
    """
    wh = settings.paths.warehouse
    part = warehouse.partition_file(wh, ARCHIVE_FILES, day, user) if day is not None else None
    recorded = warehouse.read_file(part, ARCHIVE_FILES).to_pylist() if part is not None and part.is_file() else []
    by_path = {r["path"]: r for r in recorded}
    now = dt.datetime.now(dt.UTC)
    logged = [
        {
            "path": p,
            "sha256": by_path[p]["sha256"] if p in by_path else _sha(settings, p),
            "user_id": user,
            "day": day,
            "purged_at": now,
            "why": why,
        }
        for p in paths
    ]
    if not logged:
        return []
    _append_purge_log(settings, logged)
    if day is not None and part is not None:
        keep = [r for r in recorded if r["path"] not in set(paths)]
        write_manifest(settings, user, day, keep)
        if keep:
            warehouse.write_file(part, pa.Table.from_pylist(keep, schema=ARCHIVE_FILES.schema), ARCHIVE_FILES)
        else:
            warehouse.delete_partition(wh, ARCHIVE_FILES, day, user)
    else:  # an export original (imports/) has no day record: out of its folder's manifest, then deleted
        paths = [*paths, *_unrecord_exports(settings, [p for p in paths if p.startswith(IMPORTS + "/")])]
    remote.owe(settings, paths)  # an S3 archive: owed before the local copy goes, so a crash cannot lose the debt
    for p in paths:
        target = settings.paths.archive / p
        if target.is_file():
            os.chmod(target, 0o644)
            target.unlink()
    remote.settle(settings)  # every version; what the bucket refuses or cannot take now stays owed, retried
    return logged


def exports_of(settings: Settings, user: str, paths: Iterable[str]) -> list[str]:
    """The archived exports (imports/...) the given derived transcripts were cut from, still on disk."""
    paths = set(paths)
    if not paths:
        return []
    rows = warehouse.read(settings.paths.warehouse, ARCHIVE_FILES, "user_id = ?", [user]).to_pylist()
    found = {
        r["original_path"] for r in rows if r["path"] in paths and (r["original_path"] or "").startswith(IMPORTS + "/")
    }
    return sorted(e for e in found if (settings.paths.archive / e).is_file())


def still_cut_from(settings: Settings, user: str, export: str) -> bool:
    """Whether any recorded transcript still comes from this export."""
    return bool(
        warehouse.read(
            settings.paths.warehouse, ARCHIVE_FILES, "user_id = ? AND original_path = ?", [user, export]
        ).num_rows
    )


def log_purge(settings: Settings, user: str, day: dt.date | None, path: str, sha256: str, why: str) -> None:
    """Log a file kept out of the archive on purpose (an export that held what a purge deleted)."""
    _append_purge_log(
        settings,
        [
            {
                "path": path,
                "sha256": sha256,
                "user_id": user,
                "day": day,
                "purged_at": dt.datetime.now(dt.UTC),
                "why": why,
            }
        ],
    )


def _append_purge_log(settings: Settings, rows: list[dict]) -> None:
    wh = settings.paths.warehouse
    log_rows = warehouse.read(wh, PURGE_LOG).to_pylist() + rows
    warehouse.write_file(
        warehouse.single_file(wh, PURGE_LOG), pa.Table.from_pylist(log_rows, schema=PURGE_LOG.schema), PURGE_LOG
    )


def _sha(settings: Settings, relpath: str) -> str:
    path = settings.paths.archive / relpath
    return sha256_file(path) if path.is_file() else ""


def purged(settings: Settings) -> list[dict]:
    return warehouse.read(settings.paths.warehouse, PURGE_LOG).to_pylist()


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
        files[r["path"].rsplit("/", 1)[-1]] = {
            "sha256": r["sha256"],
            "size": r["size"],
            "original_path": r["original_path"],
        }
    return {"kenang_manifest": 1, "files": files}


def _manifest_bytes(body: dict) -> bytes:
    """A manifest's bytes, a day folder's or an imports folder's: the same body gives the same bytes."""
    return (json.dumps(body, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode()


def write_manifest(settings: Settings, user: str, day: dt.date, rows: list[dict]) -> bool:
    """Write a day folder's manifest if it would change; returns whether it did."""
    data = _manifest_bytes(manifest_entries(rows))
    path = day_dir(settings, user, day) / MANIFEST
    if path.is_file() and path.read_bytes() == data:
        return False
    atomic_write_bytes(path, data, mode=READ_ONLY, needs=marker(settings))
    faults.checkpoint("archive.manifest_written")
    return True


def record_export(settings: Settings, user: str, path: Path, sha256: str, size: int) -> bool:
    """Record an archived export twice, as a day's files are: in its imports folder's manifest
    (``imports/[user/].kenang-files.json``, a day folder's form, read-only) and then in the warehouse
    (``_exports.json``), so ``kenang verify`` re-hashes it against either. Returns whether the manifest changed.

    Called once the copy is verified and read-only, before its transcripts are recorded: a crash in between leaves
    the export in active/, and the next run archives it again (the same bytes, found there) and records it. The
    warehouse's entries of the folder that its manifest lacks (a manifest deleted) are written back into it, and a
    warehouse without a record (lost, or older than it) starts one from the manifests. A manifest or a record that
    cannot be read is never written over (``verify`` reports it)."""
    folder = imports_dir(settings, user)
    entry = {"sha256": sha256, "size": size}
    record, record_bad = _read_export_record(settings)
    if not record and not record_bad:
        record = _from_manifests(settings)
    files, raw = _read_exports(folder)
    changed = False
    if raw is not None and len(files) == len(raw):  # readable, every entry as kenang writes it
        mine = {Path(r).name: e for r, e in record.items() if (settings.paths.archive / r).parent == folder}
        want = {**mine, **files, path.name: entry}
        if want != files:
            _write_exports(settings, folder / MANIFEST, want)
            changed = True
    relpath = rel(settings, path)
    if not record_bad and record.get(relpath) != entry:
        _write_export_record(settings, {**record, relpath: entry})
    faults.checkpoint("archive.export_recorded")
    return changed


#: The warehouse's record of the archived exports (``record_export``).
EXPORTS_RECORD = "_exports.json"
_EXPORT_PATH = re.compile(r"^imports/(?:[^/]+/)?[^/]+$")


def _read_export_record(settings: Settings) -> tuple[dict[str, dict], bool]:
    """(the warehouse's record of the archived exports: archive-relative path -> {sha256, size}, whether it is
    damaged: unreadable, or not as kenang writes it). None yet is no damage (the manifests alone are then the
    record, as after a backfill of a lost warehouse)."""
    try:
        body = json.loads((settings.paths.warehouse / EXPORTS_RECORD).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}, False
    except (OSError, ValueError):
        return {}, True
    exports = body.get("exports") if isinstance(body, dict) else None
    if not isinstance(exports, dict):
        return {}, True
    good = {r: e for r, e in exports.items() if _export_path(r) and _sha_of(e)}
    return good, len(good) != len(exports)


def _export_path(relpath: object) -> bool:
    """Whether a record's key names an export as kenang files one: ``imports/[user/]name``, each part a name."""
    return (
        isinstance(relpath, str)
        and bool(_EXPORT_PATH.match(relpath))
        and all(_plain_name(part) for part in relpath.split("/"))
    )


def _write_export_record(settings: Settings, record: Mapping[str, dict]) -> None:
    data = (json.dumps({"exports": dict(record)}, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode()
    atomic_write_bytes(settings.paths.warehouse / EXPORTS_RECORD, data)


def _from_manifests(settings: Settings) -> dict[str, dict]:
    """What the imports folders' manifests record, in the warehouse record's form."""
    out = {}
    for folder in _imports_folders(settings.paths.archive / IMPORTS):
        files, _raw = _read_exports(folder)
        out.update({rel(settings, folder / n): e for n, e in files.items()})
    return out


def _sha_of(entry: object) -> str | None:
    sha = entry.get("sha256") if isinstance(entry, dict) else None
    return sha if isinstance(sha, str) else None


def _read_exports(folder: Path) -> tuple[dict[str, dict], dict | None]:
    """(name -> {sha256, size} of an imports folder's manifest, every entry as kenang writes it; the manifest's
    entries as they are, or None when it cannot be read). None there yet reads as no entries."""
    try:
        body = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}, {}
    except (OSError, ValueError):
        return {}, None
    files = body.get("files") if isinstance(body, dict) else None
    if not isinstance(files, dict):
        return {}, None
    return {n: e for n, e in files.items() if _plain_name(n) and _sha_of(e)}, files


def _plain_name(name: object) -> bool:
    """A name a manifest may hold: one file of its own folder, not hidden (a backslash is a character of a name)."""
    return isinstance(name, str) and bool(name) and not name.startswith(".") and "/" not in name and "\0" not in name


def _write_exports(settings: Settings, manifest: Path, files: Mapping[str, object]) -> None:
    """An imports folder's manifest, in a day folder's form, read-only."""
    data = _manifest_bytes({"kenang_manifest": 1, "files": dict(files)})
    atomic_write_bytes(manifest, data, mode=READ_ONLY, needs=marker(settings))


def _unrecord_exports(settings: Settings, paths: list[str]) -> list[str]:
    """Take purged exports (archive-relative paths) out of their folders' manifests and the warehouse's record: a
    name may hold what a purge deletes, and a purged export is no longer kenang's to check. An entry kenang did not
    write is left as it is (``verify`` reports it), but the purged names go. Returns the manifests left naming
    nothing, for the caller to delete with the exports (and from a bucket)."""
    if not paths:
        return []
    gone = set(paths)
    record, record_bad = _read_export_record(settings)
    if not record_bad and gone & set(record):
        _write_export_record(settings, {r: e for r, e in record.items() if r not in gone})
    by_folder: dict[Path, set[str]] = {}
    for p in paths:
        f = settings.paths.archive / p
        by_folder.setdefault(f.parent, set()).add(f.name)
    empty = []
    for folder, names in by_folder.items():
        _files, raw = _read_exports(folder)
        if not raw or not names & set(raw):
            continue
        kept = {n: e for n, e in raw.items() if n not in names}
        if kept:
            _write_exports(settings, folder / MANIFEST, kept)
        else:  # the folder's last export: no manifest is left to name it
            empty.append(rel(settings, folder / MANIFEST))
    return empty


@dataclass(frozen=True)
class ExportRecords:
    """What ``kenang verify`` checks the exports in imports/ against."""

    expected: dict[str, str]  # archive-relative path -> sha256 (the warehouse's record over the manifests')
    damaged: tuple[str, ...]  # records unreadable, or manifests that are, or contradict the warehouse's record
    absent: tuple[str, ...]  # manifests gone, of folders the warehouse's record still checks


def export_records(settings: Settings, purged: Mapping[str, Set[str]] | None = None) -> ExportRecords:
    """The exports' records, manifests and the warehouse's, and which do not agree. ``purged``: path -> the sha256s
    purge_log holds for it; a record of those very bytes, left by a purge cut short, is no disagreement (a new
    export at a purged export's path is checked as any other)."""
    purged = purged or {}
    root = settings.paths.archive / IMPORTS
    listed: dict[str, str] = {}
    damaged: set[str] = set()
    present: set[Path] = set()
    for folder in _imports_folders(root):
        files, raw = _read_exports(folder)
        if raw is None or len(files) != len(raw):
            damaged.add(rel(settings, folder / MANIFEST))
        if raw is None or raw or (folder / MANIFEST).is_file():
            present.add(folder)
        listed.update({rel(settings, folder / n): e["sha256"] for n, e in files.items()})
    found, record_bad = _read_export_record(settings)
    if record_bad:
        damaged.add(f"warehouse/{EXPORTS_RECORD}")
    record = {r: e["sha256"] for r, e in found.items() if e["sha256"] not in purged.get(r, ())}
    absent: set[str] = set()
    for r, sha in record.items():
        folder = (settings.paths.archive / r).parent
        manifest = rel(settings, folder / MANIFEST)
        if folder not in present:
            absent.add(manifest)  # no manifest: the record still checks the export; the next import writes it back
        elif listed.get(r) != sha:
            damaged.add(manifest)
    return ExportRecords({**listed, **record}, tuple(sorted(damaged)), tuple(sorted(absent)))


def _imports_folders(root: Path) -> list[Path]:
    """The imports folder (the default user's exports) and each user's folder in it; none without it."""
    if not root.is_dir():
        return []
    return [root, *(Path(e.path) for e in os.scandir(root) if e.is_dir(follow_symlinks=False))]


def exports_on_disk(settings: Settings) -> dict[str, Path]:
    """Archive-relative path -> file of every archived export (``imports/[user/]``), its manifest left out."""
    out: dict[str, Path] = {}
    for folder in _imports_folders(settings.paths.archive / IMPORTS):
        for entry in os.scandir(folder):
            if not entry.name.startswith(".") and entry.is_file(follow_symlinks=False):
                out[rel(settings, Path(entry.path))] = Path(entry.path)
    return out


def read_manifests(
    settings: Settings, start: dt.date | None = None, end: dt.date | None = None
) -> dict[tuple[str, dt.date], list[dict]]:
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
            rows.append(
                {
                    "path": relpath,
                    "user_id": user,
                    "date": day,
                    "size": e.get("size"),
                    "sha256": e.get("sha256"),
                    "original_path": e.get("original_path"),
                }
            )
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


def trusted_manifests(
    recorded: list[dict],
    manifests: Mapping[tuple[str, dt.date], list[dict]],
    *,
    lost: bool,
    broken: frozenset = frozenset(),
) -> tuple[dict[tuple[str, dt.date], list[dict]], set[tuple[str, dt.date]]]:
    """(the manifest rows a record may take in, the days whose manifest differs from the warehouse's record).

    The warehouse's ``archive_files`` is the record; a day folder's manifest is its copy
    in the archive, for a warehouse that was ``lost`` (no ``archive_files`` at all) and
    for the ``broken`` days whose partition was changed behind kenang's back. With
    a record, a manifest row the record lacks is not taken in: a file and a line added to
    a manifest by hand must not reach the tables (it is reported as unrecorded, and
    ``kenang adopt`` takes it in on purpose). A crash between a manifest and its
    partition leaves the original in active/, so the next night records it again.
    """
    by_day: dict[tuple[str, dt.date], list[dict]] = {}
    for r in recorded:
        by_day.setdefault((r["user_id"], r["date"]), []).append(r)
    stale = set()
    for key, rows in manifests.items():
        if key in by_day and key not in broken and _entries(rows) != _entries(by_day[key]):
            stale.add(key)
    return (dict(manifests) if lost else {k: v for k, v in manifests.items() if k in broken}), stale


def _entries(rows: list[dict]) -> list[tuple]:
    return sorted((r["path"], r["sha256"], r["size"], r["original_path"]) for r in rows)
