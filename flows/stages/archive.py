"""Archive: move originals into read-only storage with nothing lost.

Layout: ``<archive>/daily_sessions/YYYY-MM-DD/<file>`` for the default user, and
``<archive>/daily_sessions/YYYY-MM-DD/<user>/<file>`` for everyone else. A file name
that holds a secret (a key pasted into a name) is archived under a stable hash of it,
``redacted-<sha>.md``: names reach tables and reports, so they are redacted like text.

A batch goes in three steps, each safe to crash after:

1. place: every file is copied to a temporary name; the batch is synced once; then
   each copy is checksum-verified, made read-only (0444) and renamed into place
   (``fsio.stage_copy`` and ``commit_copy``). Identical bytes already there are
   recognised; a same name with other bytes gets a new name.
2. record: the ``archive_files`` partitions of the touched (user, day)s are rewritten
   with the new rows (path, size, sha256, user, day, run id). A path already
   recorded is never recorded twice.
3. upload, with an archive on S3 (``flows.store.remote``): the batch's copies and
   their day manifests go to the bucket, each read back and compared by sha256.
4. delete: after one more sync (the copies and the record are durable, and uploaded),
   each source is removed, and only if it still holds the archived bytes. A source
   whose copy the bucket has not confirmed stays in ``active/`` for the next night.

A crash before 4 leaves sources in ``active/``; the next run finds their identical
copies, records them if needed, and deletes the sources. ``kenang verify``
(``flows.store.verify``) re-hashes the archive against the record.

What ``kenang forget --purge`` deleted never comes back into the archive: a file with
the bytes of a purged one (``purge_log``) is removed from ``active/`` and not archived
(``purged_on_arrival``); an export's day transcripts leave out purged days and
sessions and have purged phrases scrubbed, and an export that held any of it is not
archived itself (logged in ``purge_log``): its day transcripts carry the rest.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from flows.config import Settings
from flows.stages import progress
from flows.stages.ingest import Ready, ReadyExport
from flows.store import archive_files, faults, remote, tombstones
from flows.store.archive_files import day_dir, imports_dir, marker, record, rel
from flows.store.fsio import (
    Placed,
    Staged,
    barrier,
    commit_copy,
    discard,
    durable_batch,
    remove_source,
    safe_copy,
    safe_write,
    stage_copy,
)
from transforms.forget import scrub_transcript
from transforms.redact import redact_file_name


def _purged_shas(settings: Settings) -> set[tuple[str, str]]:
    return {(r["user_id"], r["sha256"]) for r in archive_files.purged(settings)}


@dataclass(frozen=True)
class ArchiveResult:
    placed: int = 0
    already_there: int = 0
    recorded: int = 0
    sources_deleted: int = 0
    sources_kept: int = 0
    bytes: int = 0
    days: frozenset = field(default_factory=frozenset)  # {(user, day)}
    purged_on_arrival: int = 0  # files (or exports) kenang had purged once, not archived again
    not_uploaded: int = 0  # S3 archive: copies the bucket has not confirmed; their sources are kept
    upload_error: str | None = None  # why (the bucket unreachable, a key holding other bytes)
    unreachable: bool = False  # the bucket went away (else it refused some files)


def archive_batch(settings: Settings, ready: Iterable[Ready], run_id: str) -> ArchiveResult:
    """Place, record, then delete the sources of a batch of ready files.

    The batch's copies are made durable together (``fsio.durable_batch``): every copy
    is written, then one sync, then each is verified, made read-only and renamed in,
    then recorded, then one more sync, and only then is any source deleted.
    """
    ready = list(ready)
    placed_rows: list[tuple[Ready, dict]] = []
    n_new = n_existed = n_bytes = again = 0
    now = dt.datetime.now(dt.UTC)
    gone = _purged_shas(settings)
    staged: list[tuple[Ready, Staged | Placed]] = []
    with durable_batch():
        try:
            for r in ready:
                rs = r.resolved
                if (rs.user_id, r.sha256) in gone:  # purged once on purpose: never archived again
                    again += remove_source(r.cand.path, r.sha256)
                    continue
                staged.append(
                    (
                        r,
                        stage_copy(
                            r.cand.path, day_dir(settings, rs.user_id, rs.day), r.cand.name, needs=marker(settings)
                        ),
                    )
                )
            barrier()  # every copy's bytes are on disk before it takes its name
            for i, (r, s) in enumerate(staged, 1):
                placed = s if isinstance(s, Placed) else commit_copy(s)
                staged[i - 1] = (r, placed)
                progress.report("archive", i, len(staged), i, unit="files")
                n_new += not placed.existed
                n_existed += placed.existed
                n_bytes += placed.size
                rs = r.resolved
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
        except BaseException:
            discard(s for _, s in staged)
            raise
        faults.checkpoint("archive.batch_placed")
        recorded = record(settings, [row for _, row in placed_rows])
        barrier()  # the copies and their record are durable before any source goes
        faults.checkpoint("archive.recorded")
        up = remote.confirm(settings, [row["path"] for _, row in placed_rows])  # an S3 archive: uploaded, read back
        faults.checkpoint("archive.uploaded")
        deleted = kept = 0
        for r, row in placed_rows:
            if row["path"] not in up.confirmed:
                kept += 1
            elif remove_source(r.cand.path, row["sha256"]):
                deleted += 1
                faults.checkpoint("archive.source_deleted")
            else:
                kept += 1
    days = frozenset((row["user_id"], row["date"]) for _, row in placed_rows)
    return ArchiveResult(
        n_new,
        n_existed,
        recorded,
        deleted,
        kept,
        n_bytes,
        days,
        again,
        len(placed_rows) - len(up.confirmed & {row["path"] for _, row in placed_rows}),
        up.why,
        up.error is not None,
    )


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
    n_new = n_existed = n_bytes = recorded = deleted = kept = again = not_up = 0
    why, unreachable = None, False
    days: set = set()
    now = dt.datetime.now(dt.UTC)
    gone = _purged_shas(settings)
    for e in exports:
        derived, held = _unpurged(settings, e, gone)
        target = imports_dir(settings, e.user_id)
        if held:  # it holds what a purge deleted: its day transcripts carry the rest, it is not archived
            original_path = rel(settings, target / e.cand.name)
            if (e.user_id, e.sha256) not in gone:
                archive_files.log_purge(
                    settings, e.user_id, None, original_path, e.sha256, "forget: on arrival, held what a purge deleted"
                )
            again += 1
        else:
            original = safe_copy(e.cand.path, target, e.cand.name, needs=marker(settings))
            if original.sha256 != e.sha256:
                kept += 1  # changed since the scan: left for the next run
                continue
            archive_files.record_export(settings, e.user_id, original.path, original.sha256, original.size)
            original_path = rel(settings, original.path)
        rows = []
        for d in derived:
            placed = safe_write(
                d.data, day_dir(settings, e.user_id, d.day), redact_file_name(d.name), needs=marker(settings)
            )
            n_new += not placed.existed
            n_existed += placed.existed
            n_bytes += placed.size
            rows.append(
                {
                    "path": rel(settings, placed.path),
                    "user_id": e.user_id,
                    "date": d.day,
                    "size": placed.size,
                    "sha256": placed.sha256,
                    "original_path": original_path,
                    "run_id": run_id,
                    "archived_at": now,
                }
            )
        recorded += record(settings, rows)
        faults.checkpoint("archive.recorded")
        days |= {(r["user_id"], r["date"]) for r in rows}
        wanted = [r["path"] for r in rows] + ([] if held else [original_path])
        up = remote.confirm(settings, wanted)
        faults.checkpoint("archive.uploaded")
        if not set(wanted) <= up.confirmed:
            kept += 1
            not_up += len(set(wanted) - up.confirmed)
            why, unreachable = up.why, unreachable or up.error is not None
        elif remove_source(e.cand.path, e.sha256):
            deleted += 1
            faults.checkpoint("archive.source_deleted")
        else:
            kept += 1
    return ArchiveResult(
        n_new, n_existed, recorded, deleted, kept, n_bytes, frozenset(days), again, not_up, why, unreachable
    )


def _unpurged(settings: Settings, e: ReadyExport, gone: set[tuple[str, str]]) -> tuple[list, bool]:
    """An export's day transcripts without what a purge deleted; and whether it held any."""
    forgetting = tombstones.forgetting(settings, e.user_id, purged=True)
    held = (e.user_id, e.sha256) in gone
    if forgetting.empty and not held and not gone:
        return list(e.derived), False
    out = []
    for d in e.derived:
        if (
            (e.user_id, hashlib.sha256(d.data).hexdigest()) in gone
            or forgetting.drops_day(d.day)
            or forgetting.drops_session(d.session_id)
        ):
            held = True
            continue
        data, hits = scrub_transcript(d.data, forgetting)
        if hits:
            held = True
            d = replace(d, data=data)
        out.append(d)
    return out, held
