"""``kenang verify``: everything kenang wrote is still what it wrote.

Four records, four checks, each read-only:

- **originals**: every file in the archive's day folders, and every export in ``imports/``, is re-hashed against its
  record (the warehouse's ``archive_files``; each day folder's manifest only for a
  warehouse that lost it, see ``archive_files.trusted_manifests``). A manifest that differs
  from the record is *manifest changed*; ``kenang backfill`` rewrites it. A
  recorded file that is gone is *missing*, one whose bytes differ is *changed*, a file
  no record knows is *unrecorded* (placed there behind kenang's back: a backfill never
  loads it; ``kenang adopt`` takes it in on purpose). A file deleted on purpose
  (``kenang forget --purge``, ``retention.archive_days``) is in ``purge_log`` and is
  reported as *purged*, never as missing.
- **derived files**: each ``.summary.md`` against the sha256 the ledger recorded
  when kenang wrote it, and each MEMORY_INDEX against its own record. One that differs
  was edited by hand; one no record knows was put there.
- **warehouse**: every Parquet file against the checksum sidecar written with it
  (``warehouse.recorded_checksums``); ``kenang backfill`` of the range rebuilds a
  changed partition. A changed file of a *record* (``RECORDS``: runs, quarantine,
  memory events and candidates, tombstones, purge_log) has no other copy to rebuild
  from: it is reported on its own, and ``kenang verify --accept PATH`` takes its bytes
  as they are now, on purpose.
- **the forgetting key**: a home with tombstones needs ``.kenang-forget-key``; one restored
  without it (or with a damaged one) is reported, with what to do (``flows.store.tombstones``).
- **the archive itself**: no marker means not mounted, and nothing else is checked.
- **the bucket**, for an archive on S3 (``flows.store.remote``): every recorded
  original is read back from the bucket and its sha256 compared with the record:
  *missing in the bucket*, *changed in the bucket*, *unrecorded in the bucket*. A
  recorded original the bucket holds intact but the local copy lacks is not missing
  (the next run copies it down); files of the copy the bucket does not have yet, and
  purged keys it still holds, are listed. Nothing is written, here or there.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field

from flows.config import Settings
from flows.store import ledger, mount, recall_pack, remote, tombstones, warehouse
from flows.store.archive_files import (
    DAILY,
    MANIFEST,
    day_dir,
    export_records,
    exports_on_disk,
    list_archive,
    purged,
    read_manifests,
    rel,
    trusted_manifests,
)
from flows.store.fsio import TMP_PREFIX, sha256_file
from schemas.tables import ARCHIVE_FILES, MEMORY_CANDIDATES, MEMORY_EVENTS, PURGE_LOG, QUARANTINE, RUNS, TOMBSTONES
from transforms.errors import UsageError


@dataclass(frozen=True)
class VerifyReport:
    checked: int
    ok: int
    missing: tuple[str, ...]
    changed: tuple[str, ...]
    unrecorded: tuple[str, ...]
    writable: tuple[str, ...]
    leftover_tmp: tuple[str, ...]
    derived_changed: tuple[str, ...] = ()
    derived_missing: tuple[str, ...] = ()
    derived_unrecorded: tuple[str, ...] = ()
    warehouse_checked: int = 0
    warehouse_changed: tuple[str, ...] = ()
    warehouse_unrecorded: tuple[str, ...] = ()
    purged: tuple[str, ...] = ()  # deleted on purpose (forget --purge, retention), logged in purge_log
    purged_on_disk: tuple[str, ...] = ()  # logged as purged, not deleted yet (a purge was cut short)
    archive_state: dict = field(default_factory=lambda: {"state": "ok", "reason": None})
    manifests_changed: tuple[str, ...] = ()  # a day folder's manifest that differs from the warehouse's record
    records_changed: tuple[str, ...] = ()  # a changed Parquet file of a record no backfill can rebuild (RECORDS)
    bucket: dict | None = None  # an archive on S3: remote.RemoteCheck's fields
    forget_key: tuple[str, ...] = ()  # tombstones whose key is missing or damaged (tombstones.key_problem)
    exports_unchecked: tuple[str, ...] = ()  # exports in imports/ no record holds (archived by an older kenang)
    exports_manifests: tuple[str, ...] = ()  # the exports' records unreadable, or manifests contradicting the record
    exports_manifests_absent: tuple[str, ...] = ()  # imports/ manifests gone; the warehouse's record checks the exports

    @property
    def problems(self) -> int:
        unmounted = self.archive_state["state"] in ("not_mounted", "foreign")
        return (
            len(self.missing)
            + len(self.changed)
            + len(self.unrecorded)
            + len(self.derived_changed)
            + len(self.derived_missing)
            + len(self.derived_unrecorded)
            + len(self.warehouse_changed)
            + len(self.warehouse_unrecorded)
            + len(self.manifests_changed)
            + len(self.records_changed)
            + int(unmounted)
            + (self.bucket or {}).get("problems", 0)
            + len(self.forget_key)
            + len(self.exports_manifests)
        )


#: Tables that are the only copy of what they hold (what ran, what was quarantined, what
#: the user told kenang to remember or forget): a backfill cannot rebuild them from the
#: archive, so a changed file is restored from a backup or accepted (``accept``).
RECORDS = (RUNS, QUARANTINE, MEMORY_EVENTS, MEMORY_CANDIDATES, TOMBSTONES, PURGE_LOG)


def _is_record(relpath: str) -> bool:
    return relpath.split("/", 1)[0].removesuffix(".parquet") in {t.name for t in RECORDS}


def accept(settings: Settings, relpaths: list[str]) -> list[str]:
    """Record the current bytes of changed record files as kenang's own; returns what was accepted.

    Only files ``verify`` lists under *records changed* are taken: a changed partition of
    a table a backfill rebuilds is rebuilt, never accepted.
    """
    wh = settings.paths.warehouse
    changed, _unrecorded, _n = _warehouse(settings)
    allowed = {r for r in changed if _is_record(r)}
    refused = sorted(set(relpaths) - allowed)
    if refused:
        raise UsageError(
            f"--accept: not a changed record file (`kenang verify` lists those under RECORD CHANGED): "
            f"{', '.join(refused)}; nothing was accepted"
        )
    for r in sorted(set(relpaths)):
        warehouse.accept_bytes(wh / r)
    return sorted(set(relpaths))


def verify(settings: Settings) -> VerifyReport:
    """Re-hash the archive, the derived files and the warehouse against their records."""
    wh_changed, wh_unrecorded, wh_checked = _warehouse(settings)
    records_changed = tuple(r for r in wh_changed if _is_record(r))
    wh_changed = tuple(r for r in wh_changed if not _is_record(r))
    forget_key = tuple(p for p in [tombstones.key_problem(settings)] if p)
    state = mount.check(settings, probe=False)
    if not state.readable and state.state != "read_only":
        return VerifyReport(
            0,
            0,
            (),
            (),
            (),
            (),
            (),
            warehouse_checked=wh_checked,
            warehouse_changed=wh_changed,
            warehouse_unrecorded=wh_unrecorded,
            archive_state=state.as_dict(),
            records_changed=records_changed,
            forget_key=forget_key,
        )
    wh = settings.paths.warehouse
    rows = warehouse.read(wh, ARCHIVE_FILES).to_pylist()
    manifests = read_manifests(settings)
    trusted, stale = trusted_manifests(rows, manifests, lost=not warehouse.has_files(wh, ARCHIVE_FILES))
    recorded = {r["path"]: r["sha256"] for day_rows in trusted.values() for r in day_rows}
    recorded.update({r["path"]: r["sha256"] for r in rows})
    on_disk = {d.relpath: d for d in list_archive(settings)}
    purge_log = purged(settings)  # read once: the day files, the exports and the bucket are each judged by it
    gone = {r["path"] for r in purge_log} - set(recorded)
    missing, changed, writable = [], [], []
    ok = 0
    for relpath, sha in sorted(recorded.items()):
        d = on_disk.get(relpath)
        if d is None:
            missing.append(relpath)
            continue
        if sha256_file(d.path) != sha:
            changed.append(relpath)
            continue
        ok += 1
        if os.stat(d.path).st_mode & 0o222:
            writable.append(relpath)
    unrecorded = sorted(set(on_disk) - set(recorded) - gone)
    # The exports in imports/, against their records (the warehouse's over their folders' manifests): kept
    # byte-exact and read-only like any original.
    logged: dict[str, set[str]] = {}
    for r in purge_log:
        logged.setdefault(r["path"], set()).add(r["sha256"])
    records, export_files = export_records(settings, logged), exports_on_disk(settings)
    exports = records.expected
    for relpath, sha in sorted(exports.items()):
        f = export_files.get(relpath)
        if f is None:
            if sha not in logged.get(relpath, ()):  # these very bytes deleted on purpose (purge_log): not missing
                missing.append(relpath)
            continue
        if sha256_file(f) != sha:
            changed.append(relpath)
            continue
        ok += 1
        if os.stat(f).st_mode & 0o222:
            writable.append(relpath)
    unchecked = sorted(set(export_files) - set(exports) - set(logged))  # a purge cut short: purged, on disk
    cut_short = set(export_files) & set(logged) - set(exports)  # purged exports a purge cut short left on disk
    daily = settings.paths.archive / DAILY
    tmp = (
        sorted(p.relative_to(settings.paths.archive).as_posix() for p in daily.rglob(f"{TMP_PREFIX}*"))
        if daily.exists()
        else []
    )
    d_changed, d_missing, d_unrecorded = _derived(settings)
    there = (
        remote.verify(
            settings,
            {**recorded, **{r: sha for r, sha in exports.items() if sha not in logged.get(r, ())}},
            {r["original_path"] for r in rows if r["original_path"]},
            {r["path"] for r in purge_log},
        )
        if settings.paths.remote_archive
        else None
    )
    if there is not None and there.not_in_copy:  # intact in the bucket: the next run copies them down
        missing = [m for m in missing if m not in set(there.not_in_copy)]
    return VerifyReport(
        checked=len(recorded) + len(unrecorded) + len(exports),
        ok=ok,
        missing=tuple(missing),
        changed=tuple(changed),
        unrecorded=tuple(unrecorded),
        writable=tuple(writable),
        leftover_tmp=tuple(tmp),
        derived_changed=d_changed,
        derived_missing=d_missing,
        derived_unrecorded=d_unrecorded,
        warehouse_checked=wh_checked,
        warehouse_changed=wh_changed,
        warehouse_unrecorded=wh_unrecorded,
        purged=tuple(sorted(gone - set(on_disk) - set(export_files))),
        purged_on_disk=tuple(sorted(gone & set(on_disk) | cut_short)),
        archive_state=state.as_dict(),
        manifests_changed=tuple(f"{rel(settings, day_dir(settings, u, d))}/{MANIFEST}" for u, d in sorted(stale)),
        records_changed=records_changed,
        bucket=None if there is None else {**asdict(there), "problems": there.problems},
        forget_key=forget_key,
        exports_unchecked=tuple(unchecked),
        exports_manifests=records.damaged,
        exports_manifests_absent=records.absent,
    )


def _derived(settings: Settings) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """Summaries and MEMORY_INDEX files against the sha256 kenang recorded for them."""
    archive = settings.paths.archive
    expected: dict[str, str] = {}
    for (user, day), row in ledger.read_days(settings.paths.warehouse).items():
        if row.get("summary_status") == "summarized" and row.get("summary_sha256"):
            path = day_dir(settings, user, day) / f"{day.isoformat()}.summary.md"
            expected[path.relative_to(archive).as_posix()] = row["summary_sha256"]
    expected.update(ledger.read_derived(settings.paths.warehouse))
    on_disk = (
        {p.relative_to(archive).as_posix(): p for p in (archive / DAILY).rglob("*.summary.md")}
        if (archive / DAILY).is_dir()
        else {}
    )
    for p in archive.glob("MEMORY_INDEX*.md"):
        on_disk[p.name] = p
    changed = tuple(r for r in sorted(expected) if r in on_disk and sha256_file(on_disk[r]) != expected[r])
    missing = tuple(r for r in sorted(expected) if r not in on_disk)
    unrecorded = tuple(sorted(set(on_disk) - set(expected)))
    return changed, missing, unrecorded


def _warehouse(settings: Settings) -> tuple[tuple[str, ...], tuple[str, ...], int]:
    """(changed, unrecorded, checked) Parquet files of the warehouse, recall packs' files included."""
    wh = settings.paths.warehouse
    changed, unrecorded = [], []
    files = warehouse.parquet_files(wh)
    for p in files:
        shas = warehouse.recorded_checksums(p)
        relpath = p.relative_to(wh).as_posix()
        if not shas:
            unrecorded.append(relpath)
        elif sha256_file(p) not in shas:
            changed.append(relpath)
    packs = 0
    for user in recall_pack.users(wh):
        base = recall_pack.folder(wh, user)
        changed += [(base / name).relative_to(wh).as_posix() for name in recall_pack.changed(wh, user)]
        packs += len(recall_pack.months_with_manifests(wh, user))
    return tuple(changed), tuple(unrecorded), len(files) + packs
