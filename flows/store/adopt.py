"""``kenang adopt``: take a file found in the archive without a record into the record.

A backfill never does this on its own: a file that appears in the archive behind
kenang's back (a restored backup, or a planted transcript) must not reach the tables
and the recall index unnoticed. ``kenang verify`` and every backfill list such files;
adopting one is a person's decision.

Each file must lie in a day folder (``daily_sessions/YYYY-MM-DD/`` for the default
user, ``daily_sessions/YYYY-MM-DD/<user>/`` for others), be a regular file, and parse
as a transcript whose user is that folder's. It is made read-only (0444), recorded in
the day's manifest and ``archive_files``, and its day is marked pending, so the next
``kenang run`` loads it. Adopting runs under the run lock.
"""

from __future__ import annotations

import datetime as dt
import os
import stat
from collections.abc import Iterable
from pathlib import Path

from flows.config import Settings
from flows.store import archive_files as archive
from flows.store import ledger, mount, remote, warehouse
from flows.store.fsio import READ_ONLY, sha256_file
from flows.store.lock import run_lock
from schemas.tables import ARCHIVE_FILES
from transforms.errors import ArchiveError, ParseError
from transforms.parse import parse_transcript
from transforms.resolve import resolve


def adopt(settings: Settings, paths: Iterable[Path], wait_seconds: float = 0.0) -> dict:
    """Record each unrecorded original under ``paths``; returns adopted, already and refused."""
    state = mount.check(settings)
    if not state.writable:
        raise ArchiveError(state.reason or "the archive cannot be written")
    run_id = "adopt-" + ledger.new_run_id(ledger.utcnow())
    adopted: list[dict] = []
    already: list[str] = []
    refused: list[dict] = []
    with run_lock(settings.paths.lock, run_id, wait_seconds):
        recorded = {r["path"] for r in warehouse.read(settings.paths.warehouse, ARCHIVE_FILES).to_pylist()}
        recorded |= {r["path"] for rows in archive.read_manifests(settings).values() for r in rows}
        rows = []
        for path in _files(settings, paths, refused):
            relpath = archive.rel(settings, path)
            if relpath in recorded:
                already.append(relpath)
                continue
            try:
                row, messages = _row(settings, path, relpath, run_id)
            except (ParseError, ValueError) as exc:
                refused.append({"path": relpath, "reason": getattr(exc, "reason", str(exc))})
                continue
            rows.append(row)
            recorded.add(relpath)
            adopted.append(
                {"path": relpath, "user_id": row["user_id"], "date": row["date"].isoformat(), "messages": messages}
            )
        archive.record(settings, rows)
        up = remote.confirm(settings, [r["path"] for r in rows])  # an S3 archive: the files and manifests go up
    out = {"adopted": adopted, "already": already, "refused": refused, "run_id": run_id}
    return out | ({"archive_remote": up.counts()} if settings.paths.remote_archive else {})


def _files(settings: Settings, paths: Iterable[Path], refused: list[dict]) -> list[Path]:
    """The candidate files: each path, or every original below a folder, in the day folders only."""
    daily = (settings.paths.archive / archive.DAILY).resolve()
    out: list[Path] = []
    for given in paths:
        p = Path(os.path.abspath(given))
        p = p.parent.resolve() / p.name  # the folder's real path; a symlinked file stays a link
        if p != daily and daily not in p.parents:
            refused.append({"path": str(given), "reason": f"not inside the archive's day folders ({daily})"})
            continue
        if p.is_dir() and not p.is_symlink():
            out += sorted(d.path for d in archive.list_archive(settings) if p == d.path or p in d.path.parents)
        else:
            out.append(p)
    return out


def _row(settings: Settings, path: Path, relpath: str, run_id: str) -> tuple[dict, int]:
    parts = relpath.split("/")  # daily_sessions/DAY/file or daily_sessions/DAY/user/file
    if len(parts) not in (3, 4) or parts[0] != archive.DAILY:
        raise ValueError("not in a day folder (daily_sessions/YYYY-MM-DD/[user/]FILE)")
    try:
        day = dt.date.fromisoformat(parts[1])
    except ValueError:
        raise ValueError(f"{parts[1]!r} is not a day folder (YYYY-MM-DD)") from None
    user = parts[2] if len(parts) == 4 else settings.default_user
    name = parts[-1]
    st = os.lstat(path)
    if not stat.S_ISREG(st.st_mode):
        raise ValueError("not a regular file")
    if name.startswith(".") or archive.is_derived(name):
        raise ValueError("a hidden or derived file, not an original")
    data = path.read_bytes()
    session = parse_transcript(name, data, tz=settings.timezone)
    rs = resolve(
        session,
        file_name=name,
        folder=None if user == settings.default_user else user,
        default_user=settings.default_user,
        tz=settings.timezone,
        mtime=st.st_mtime,
        fixed_day=day,
    )
    if rs.user_id != user:
        raise ValueError(f"it names user {rs.user_id!r} but lies in {user!r}'s folder")
    os.chmod(path, READ_ONLY)
    row = {
        "path": relpath,
        "user_id": user,
        "date": day,
        "size": st.st_size,
        "sha256": sha256_file(path),
        "original_path": None,
        "run_id": run_id,
        "archived_at": ledger.utcnow(),
    }
    return row, len(session.messages)
