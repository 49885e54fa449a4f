"""Quarantine: files kenang cannot read leave ``active/`` with a reason, never silently.

A rejected file goes to ``<quarantine>/YYYY-MM-DD/<flattened relative path>`` (the day
of the run, in the configured zone) with a sidecar ``<name>.reason.json`` that says
what was wrong, and a row in the ``quarantine`` table. It moves with the same
copy-verify-then-delete steps as the archive, so nothing is lost even if quarantine
sits on another filesystem. A symlink is moved as a link (its target is never read).
A file that cannot be moved at all (unreadable, gone) is left in place and listed in
the result's ``left``; the night goes on with every other file.

A quarantined file is an original, like an archived one, and the second place a pasted
secret or a forgotten phrase stays: ``kenang forget --purge`` and
``retention.archive_days`` delete it with its reason file (``purge_quarantined``).
"""

from __future__ import annotations

import datetime as dt
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from flows.config import Settings
from flows.stages.ingest import REASON_CHARS, Rejected
from flows.store import archive_files, faults, warehouse
from flows.store.fsio import atomic_write_bytes, fsync_dir, io_error, remove_source, safe_copy, sha256_file
from schemas.tables import QUARANTINE
from transforms.errors import ArchiveError, TransientError
from transforms.redact import redact_reason

SIDECAR = ".reason.json"


@dataclass(frozen=True)
class QuarantineResult:
    moved: int = 0
    recorded: int = 0
    by_kind: tuple[tuple[str, int], ...] = ()
    items: tuple[tuple[str, str, str], ...] = ()  # (original relpath, kind, reason)
    left: tuple[tuple[str, str], ...] = ()  # (original relpath, why it could not be moved): left in active/


def quarantine_batch(
    settings: Settings, rejected: Iterable[Rejected], run_id: str, now: dt.datetime
) -> QuarantineResult:
    """Move each rejected file to quarantine with a sidecar; record; delete sources."""
    rejected = list(rejected)
    if not rejected:
        return QuarantineResult()
    day = now.astimezone(settings.timezone).date()
    dest_dir = settings.paths.quarantine / day.isoformat()
    stamp = dt.datetime.now(dt.UTC)
    done: list[tuple[Rejected, dict, str | None]] = []
    left: list[tuple[str, str]] = []
    for rej in rejected:
        name = rej.cand.relpath.replace("/", "__")
        try:
            if rej.kind == "symlink":
                target = _move_link(rej.cand.path, dest_dir / name)
                sha, size = None, None
            else:
                placed = safe_copy(rej.cand.path, dest_dir, name, checkpoint_prefix="quarantine")
                target, sha, size = placed.path, placed.sha256, placed.size
        except TransientError:
            raise  # the task retries the batch; a file already placed is recognised
        except (ArchiveError, OSError) as exc:
            # A file that cannot be copied (unreadable, vanished, not regular after all)
            # stays where it is, and the run says so; the night goes on.
            left.append((rej.cand.relpath, redact_reason(str(exc), REASON_CHARS)))
            continue
        sidecar = {
            "original_path": rej.cand.relpath,
            "kind": rej.kind,
            "reason": rej.reason,
            "sha256": sha,
            "size": size,
            "run_id": run_id,
            "quarantined_at": stamp.isoformat(),
            "what_to_do": _advice(rej.kind),
        }
        atomic_write_bytes(
            target.with_name(target.name + SIDECAR),
            (json.dumps(sidecar, indent=2, ensure_ascii=False) + "\n").encode(),
        )
        faults.checkpoint("quarantine.sidecar")
        row = {
            "path": target.relative_to(settings.paths.quarantine).as_posix(),
            "original_path": rej.cand.relpath,
            "user_id": rej.user_id,
            "size": size,
            "sha256": sha,
            "kind": rej.kind,
            "reason": rej.reason,
            "run_id": run_id,
            "quarantined_at": stamp,
            "date": day,
        }
        done.append((rej, row, sha))
    recorded = _record(settings, [row for _, row, _ in done], day, run_id)
    faults.checkpoint("quarantine.recorded")
    moved = 0
    for rej, _row, sha in done:
        if sha is None or remove_source(rej.cand.path, sha):
            moved += 1
    kinds: dict[str, int] = {}
    for rej in rejected:
        kinds[rej.kind] = kinds.get(rej.kind, 0) + 1
    return QuarantineResult(
        moved,
        recorded,
        tuple(sorted(kinds.items())),
        tuple((r.cand.relpath, r.kind, r.reason) for r in rejected),
        tuple(left),
    )


def _record(settings: Settings, rows: list[dict], day: dt.date, run_id: str) -> int:
    """One file per run and day; a (path, sha256) already recorded is not recorded again."""
    wh = settings.paths.warehouse
    seen = {(r["path"], r["sha256"]) for r in warehouse.read(wh, QUARANTINE).to_pylist()}
    fresh = [r for r in rows if (r["path"], r["sha256"]) not in seen]
    if fresh:
        path = warehouse.partition_file(wh, QUARANTINE, day, name=run_id)
        warehouse.write_file(path, pa.Table.from_pylist(fresh, schema=QUARANTINE.schema), QUARANTINE)
    return len(fresh)


def _move_link(src: Path, dest: Path) -> Path:
    """Move a symlink itself (never its target), across filesystems if need be."""
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        if dest.is_symlink() and os.readlink(dest) == os.readlink(src):
            src.unlink()
            return dest
        n = 2
        while dest.exists() or dest.is_symlink():
            dest = dest.with_name(f"{dest.name}-{n}")
            n += 1
        try:
            os.rename(src, dest)
        except OSError:
            os.symlink(os.readlink(src), dest)
            src.unlink()
        fsync_dir(dest.parent)
        faults.checkpoint("quarantine.placed")
        return dest
    except OSError as exc:
        raise io_error(f"moving symlink {src} to quarantine", exc) from exc


def _advice(kind: str) -> str:
    return {
        "bad_utf8": "re-save the file as UTF-8, then move it back into active/",
        "bad_json": "fix the broken line (or remove it), then move the file back into active/",
        "bad_record": "each line needs an object with 'role' and 'content'; fix it and move it back",
        "no_messages": "the file has no turns; add '## user' / '## assistant' turns or delete it",
        "empty": "the file is empty; delete it if that is expected",
        "unknown_extension": "kenang reads .md and .jsonl transcripts and .json exports; rename or convert the file",
        "bad_frontmatter": "fix the YAML between the '---' lines, then move the file back",
        "bad_timestamp": "use ISO-8601 (2026-07-19T10:37:12+07:00) or epoch seconds",
        "bad_user_id": "user ids are lower-case letters, digits, '.', '_' or '-'",
        "bad_session_id": "session ids are one line without '/' or '\\\\'",
        "symlink": "copy the real file into active/ instead of linking it",
        "too_large": "raise limits.max_file_mb in kenang.yaml if this really is a transcript",
        "not_regular": "only regular files are read",
    }.get(kind, "fix the file and move it back into active/")


def list_quarantine(settings: Settings) -> list[dict]:
    """Every sidecar in quarantine, newest first (read-only)."""
    root = settings.paths.quarantine
    out = []
    if root.is_dir():
        for p in sorted(root.rglob(f"*{SIDECAR}"), reverse=True):
            try:
                info = json.loads(p.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            info["path"] = p.relative_to(root).as_posix()[: -len(SIDECAR)]
            out.append(info)
    return out


# --- what forget and retention take out of quarantine ---------------------------------
#
# A quarantined file is an original, like an archived one: it stays byte-exact until a
# purge (``kenang forget --purge``, ``retention.archive_days``) deletes it with its reason
# file, logged in ``purge_log`` as ``quarantine/<path>`` first, then taken out of the
# ``quarantine`` table, then deleted: a crash in between leaves a logged file, never a
# file gone without a word.

PURGED_PREFIX = "quarantine/"


def quarantined_files(settings: Settings) -> list[str]:
    """Every quarantined file (or link), quarantine-relative, without the reason files."""
    root = settings.paths.quarantine
    if not root.is_dir():
        return []
    out = []
    for dirpath, dirs, files in os.walk(root):
        for name in files + [d for d in dirs if os.path.islink(os.path.join(dirpath, d))]:
            if not name.endswith(SIDECAR):
                out.append(Path(dirpath, name).relative_to(root).as_posix())
    return sorted(out)


def quarantined_before(settings: Settings, cutoff: dt.date) -> list[str]:
    """The quarantined files whose quarantine day (their folder) is older than ``cutoff``."""
    out = []
    for rel in quarantined_files(settings):
        try:
            day = dt.date.fromisoformat(rel.split("/", 1)[0])
        except ValueError:
            continue  # not a file kenang placed: left alone
        if day < cutoff:
            out.append(rel)
    return out


def purge_quarantined(
    settings: Settings, rels: list[str], why: str, user: str | None = None, logged_as=lambda rel: rel
) -> int:
    """Delete quarantined files and their reason files on purpose, each logged in ``purge_log``; returns how many.

    ``logged_as``: the name a file is logged under (``forget`` renames one that holds the phrase)."""
    root = settings.paths.quarantine
    rels = [r for r in rels if os.path.lexists(root / r)]
    if not rels:
        return 0
    rows = {r["path"]: r for r in warehouse.read(settings.paths.warehouse, QUARANTINE).to_pylist()}
    for rel in rels:
        row = rows.get(rel) or {}
        sha = row.get("sha256") or ("" if (root / rel).is_symlink() else _sha(root / rel))
        day = row.get("date") or _folder_day(rel)
        archive_files.log_purge(
            settings, row.get("user_id") or user or settings.default_user, day, PURGED_PREFIX + logged_as(rel), sha, why
        )
    drop_rows(settings, set(rels))
    for rel in rels:
        path = root / rel
        for p in (path.with_name(path.name + SIDECAR), path):
            if p.is_symlink() or p.is_file():
                p.unlink()
        fsync_dir(path.parent)
        try:
            path.parent.rmdir()  # an emptied day folder goes too
        except OSError:
            pass
    return len(rels)


def drop_rows(settings: Settings, rels: set[str]) -> None:
    """Take the rows of these quarantined files out of the ``quarantine`` table."""
    edit_rows(settings, lambda row: None if row["path"] in rels else row)


def edit_rows(settings: Settings, edit) -> int:
    """Rewrite the ``quarantine`` table's files whose rows ``edit(row)`` changes (None drops a row); returns files rewritten."""
    root = warehouse.table_dir(settings.paths.warehouse, QUARANTINE)
    n = 0
    for path in sorted(root.rglob("*.parquet")) if root.is_dir() else []:
        if path.name.startswith("."):
            continue
        rows = warehouse.read_file(path, QUARANTINE).to_pylist()
        new = [e for r in rows if (e := edit(dict(r))) is not None]
        if new == rows:
            continue
        if new:
            warehouse.write_file(path, pa.Table.from_pylist(new, schema=QUARANTINE.schema), QUARANTINE)
        else:
            path.unlink()
            warehouse.checksum_file(path).unlink(missing_ok=True)
            fsync_dir(path.parent)
        n += 1
    return n


def _folder_day(rel: str) -> dt.date | None:
    try:
        return dt.date.fromisoformat(rel.split("/", 1)[0])
    except ValueError:
        return None


def _sha(path: Path) -> str:
    try:
        return sha256_file(path)
    except OSError:
        return ""
