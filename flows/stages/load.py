"""Load: re-derive a (user, day)'s ``sessions`` and ``messages`` from its archived files.

This is the one day-level code path. The nightly flow feeds it the days whose archive
changed (or that failed before); a backfill feeds it a date range found in the archive
folders alone. Either way a day is parsed from the archive, never from ``active/``.

- A partition is written only when its content fingerprint (all columns but
  ``run_id``) differs from the ledger's, so rerunning writes nothing.
- An archived file whose bytes no longer match the record, or a recorded file that
  is gone, fails the day with a reason and leaves its partition as it was.
- A day that fails does not stop the others.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from flows.config import Settings
from flows.stages import pool
from flows.stages.outcome import DayOutcome, StageResult, failed
from flows.store import faults, remote, tombstones, warehouse
from flows.store.archive_files import day_dir, rel
from flows.store.fsio import total_size
from flows.store.ledger import ArchivedDay, DayKey
from schemas.tables import DAILY_SUMMARIES, MEMORY_CHUNKS, MESSAGES, SESSIONS
from transforms.collect import segment_lineage
from transforms.errors import ParseError, TransientError
from transforms.forget import Forgetting
from transforms.model import Session
from transforms.parse import parse_transcript
from transforms.redact import redact_identifier
from transforms.resolve import resolve
from transforms.rows import SourceFile, build_day_rows
from transforms.segments import is_segment, read_segment

log = logging.getLogger("kenang")


#: What a load outcome counts; StageResult.counts sums them for the run report.
NUMBERS = ("sessions", "messages", "redactions")
STATUSES = ("loaded", "unchanged", "forgotten")
FORGOTTEN = "forgotten"


Progress = Callable[[int, int, int], None]  # (days done, days total, files done)


def load_days(
    settings: Settings,
    days: Iterable[ArchivedDay],
    ledger: Mapping[DayKey, Mapping],
    run_id: str,
    parsed: Mapping[str, Session] | None = None,
    progress: Progress | None = None,
    check_hashes: bool = False,
    today: dt.date | None = None,
) -> StageResult:
    """Load each day; check_hashes re-hashes archived files first (backfill).

    Each user's tombstones (and the retention window, counted back from ``today``) are
    applied: a forgotten day is emptied, forgotten sessions and phrases left out.

    Each day's files are read and its rows and Parquet bytes made by ``build_day``, on
    every core (``flows.stages.pool``); the partitions are written here, day by day in
    order, while the workers make the next days.
    """
    days = list(days)
    parsed = parsed or {}
    out: list[DayOutcome] = []
    files_done = 0
    forgetting: dict[str, Forgetting] = {}
    for day in days:
        if day.user_id not in forgetting:
            forgetting[day.user_id] = tombstones.forgetting(settings, day.user_id, today=today)
    todo = [d for d in days if not forgetting[d.user_id].drops_day(d.date)]
    built = pool.pure_imap(
        build_day,
        [
            (
                settings,
                d,
                {sha: parsed[sha] for sha in d.shas if sha in parsed},
                check_hashes,
                None if forgetting[d.user_id].empty else forgetting[d.user_id],
                run_id,
            )
            for d in todo
        ],
        nbytes=total_size(settings.paths.archive / p for d in todo for p in d.paths),  # 0 where not here
    )
    for i, day in enumerate(days, 1):
        try:
            if forgetting[day.user_id].drops_day(day.date):
                outcome = forget_day(settings, day, ledger.get((day.user_id, day.date)), run_id)
            else:
                outcome = load_day(settings, day, ledger.get((day.user_id, day.date)), run_id, next(built))
        except TransientError:
            raise  # the task retries the batch
        except Exception as exc:  # noqa: BLE001 - one bad day must not stop the night
            log.warning("load failed for %s/%s: %s", day.user_id, day.date, pool.kind_of(exc))
            outcome = _failed(day, run_id, f"internal error: {pool.kind_of(exc)}: {exc}")
        out.append(outcome)
        files_done += len(day.paths)
        faults.checkpoint("load.day_done")
        if progress:
            progress(i, len(days), files_done)
    return StageResult(tuple(out))


@dataclass(frozen=True)
class BuiltDay:
    """What ``build_day`` hands back: the day's numbers and its two partitions' Parquet bytes."""

    fingerprint: str
    sessions: int
    messages: int
    redactions: int
    merged: tuple[tuple[str, int], ...]
    sessions_parquet: bytes
    messages_parquet: bytes


@dataclass(frozen=True)
class Unreadable:
    """A day whose archived files cannot be read as recorded: why."""

    reason: str


def build_day(args) -> BuiltDay | Unreadable:
    """Read one day's archived files and make its rows' Parquet bytes; writes nothing (``pool.pure_imap`` runs it).

    ``args``: (settings, day, parsed sessions by sha256, check_hashes, forgetting or None, run id).
    """
    settings, day, parsed, check_hashes, forgetting, run_id = args
    try:
        items = [
            item
            for p, sha in zip(day.paths, day.shas, strict=False)
            for item in _read_archived(settings, p, sha, day, parsed, check_hashes)
        ]
    except _DayFailure as exc:
        return Unreadable(str(exc))
    rows = build_day_rows(
        items,
        user_id=day.user_id,
        day=day.date,
        run_id=run_id,
        forgetting=forgetting,
        batch_rows=settings.limits.batch_rows,
    )
    del items  # the parsed sessions are in the rows now: a big day is not held twice while its Parquet is made
    # a row group a batch, as the rows were made (one batch: the bytes ``parquet_bytes`` gives)
    messages = warehouse.parquet_bytes_of(rows.batches, MESSAGES)
    return BuiltDay(
        rows.fingerprint,
        rows.sessions.num_rows,
        rows.messages.num_rows,
        rows.redactions,
        rows.merged,
        warehouse.parquet_bytes(rows.sessions, SESSIONS),
        messages,
    )


def load_day(
    settings: Settings,
    day: ArchivedDay,
    ledger_row: Mapping | None,
    run_id: str,
    built: BuiltDay | Unreadable | pool.Failed,
) -> DayOutcome:
    """Load one day from what ``build_day`` made of it: its partitions are written unless unchanged."""
    base = _base_row(day, run_id)
    if isinstance(built, pool.Failed):
        raise pool.WorkerError(built)
    if isinstance(built, Unreadable):
        return _failed(day, run_id, built.reason)
    rows = built
    unchanged = (
        ledger_row is not None
        and ledger_row["status"] == "loaded"
        and ledger_row["content_fingerprint"] == rows.fingerprint
        and _partition_intact(settings.paths.warehouse, day)
    )
    if not unchanged:
        wh = settings.paths.warehouse
        for table, data in ((SESSIONS, rows.sessions_parquet), (MESSAGES, rows.messages_parquet)):
            warehouse.write_partition(wh, table, data, day.date, day.user_id)
            faults.checkpoint("load.partition_written")
    numbers = {"sessions": rows.sessions, "messages": rows.messages, "redactions": rows.redactions}
    notes = {"merged": rows.merged}
    if unchanged and ledger_row is not None and ledger_row["archive_fingerprint"] == day.fingerprint:
        return DayOutcome(day.user_id, day.date, "unchanged", numbers=numbers, notes=notes)
    row = {
        **base,
        "status": "loaded",
        "content_fingerprint": rows.fingerprint,
        "sessions": rows.sessions,
        "messages": rows.messages,
        "reason": None,
    }
    if unchanged and ledger_row is not None:  # same rows, new archive state (an identical copy recorded): ledger only
        row["run_id"] = ledger_row["run_id"]
    status = "unchanged" if unchanged else "loaded"
    return DayOutcome(day.user_id, day.date, status, ledger_row=row, numbers=numbers, notes=notes)


class _DayFailure(Exception):
    pass


def _base_row(day: ArchivedDay, run_id: str) -> dict:
    return {
        "user_id": day.user_id,
        "date": day.date,
        "archive_fingerprint": day.fingerprint,
        "run_id": run_id,
        "updated_at": dt.datetime.now(dt.UTC),
    }


def _failed(day: ArchivedDay, run_id: str, reason: str) -> DayOutcome:
    """A failed load owns the day's load columns (status, reason) rather than prefixed ones."""
    return failed(
        None,
        day.user_id,
        day.date,
        run_id,
        reason,
        archive_fingerprint=day.fingerprint,
        updated_at=dt.datetime.now(dt.UTC),
        content_fingerprint=None,
        sessions=0,
        messages=0,
    )


def counts(res: StageResult) -> dict:
    """The run report's load line: statuses, totals, failures, and every session read from several files."""
    return res.counts(STATUSES, NUMBERS) | {
        "merged_sessions": [
            {"user_id": d.user_id, "date": d.date.isoformat(), "session_id": sid, "files": n}
            for d in res.days
            if d.status == "loaded"
            for sid, n in d.notes.get("merged", ())
        ]
    }


def _read_archived(
    settings: Settings, relpath: str, sha: str, day: ArchivedDay, parsed: Mapping[str, Session], check_hashes: bool
) -> list[tuple]:
    """(resolved session, its file) for each session of one archived file: one, or a collected segment's sessions."""
    path = settings.paths.archive / relpath
    if not path.is_file():
        raise _DayFailure(f"archived file {relpath} is missing; run `kenang verify`")
    session = parsed.get(sha)
    segment = is_segment(path.name)
    sessions: list[Session] = [] if session is None else [session]
    if session is None or check_hashes or segment:
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise _DayFailure(f"cannot read archived file {relpath}: {exc.strerror}") from exc
        if hashlib.sha256(data).hexdigest() != sha:
            raise _DayFailure(f"archived file {relpath} changed since it was archived; run `kenang verify`")
        if session is None or segment:
            try:
                sessions = (
                    read_segment(path.name, data, tz=settings.timezone, user_id=day.user_id)
                    if segment
                    else [parse_transcript(path.name, data, tz=settings.timezone)]
                )
            except ParseError as exc:
                raise _DayFailure(f"archived file {relpath} no longer parses: {exc.reason}") from exc
    out = []
    mtime = path.stat().st_mtime
    for session in sessions:
        rs = resolve(
            session,
            file_name=path.name,
            folder=None if day.user_id == settings.default_user else day.user_id,
            default_user=settings.default_user,
            tz=settings.timezone,
            mtime=mtime,
            fixed_day=day.date,
        )
        if rs.user_id != day.user_id:
            raise _DayFailure(f"archived file {relpath} names user {rs.user_id!r} but lies in {day.user_id!r}'s folder")
        out.append((rs, SourceFile(relpath, sha, segment_lineage(path.name) if segment else None)))
    return out


def session_files(settings: Settings, day: ArchivedDay) -> list[tuple[str, str]]:
    """(session id as read, before any forgetting renames it; archive path) for each session of a day's files.

    ``kenang forget --session --purge`` finds a session's originals with it, even after an
    earlier forget took the session out of the tables. A file that cannot be read is left out."""
    out = []
    for p, sha in zip(day.paths, day.shas, strict=False):
        try:
            out += [
                (redact_identifier(rs.session_id), src.archive_path)
                for rs, src in _read_archived(settings, p, sha, day, {}, False)
            ]
        except _DayFailure:
            continue
    return out


def forget_day(settings: Settings, day: ArchivedDay, ledger_row: Mapping | None, run_id: str) -> DayOutcome:
    """Empty a forgotten day: its rows, summary and index are deleted, and the ledger says ``forgotten``."""
    wh = settings.paths.warehouse
    for table in (SESSIONS, MESSAGES, DAILY_SUMMARIES, MEMORY_CHUNKS):
        warehouse.delete_partition(wh, table, day.date, day.user_id)
    summary = day_dir(settings, day.user_id, day.date) / f"{day.date.isoformat()}.summary.md"
    if summary.is_file():
        remote.owe(settings, [rel(settings, summary)])  # an S3 archive deletes the bucket's copy at the run's end
        summary.unlink()
    if (
        ledger_row is not None
        and ledger_row.get("status") == FORGOTTEN
        and ledger_row.get("archive_fingerprint") == day.fingerprint
    ):
        return DayOutcome(day.user_id, day.date, "unchanged")
    row = {
        **_base_row(day, run_id),
        "status": FORGOTTEN,
        "content_fingerprint": None,
        "sessions": 0,
        "messages": 0,
        "reason": None,
        "summary_status": None,
        "summary_fingerprint": None,
        "summary_sha256": None,
        "index_status": None,
        "index_key": None,
    }
    return DayOutcome(day.user_id, day.date, FORGOTTEN, ledger_row=row)


def _partition_intact(wh: Path, day: ArchivedDay) -> bool:
    """Both partitions exist and hold the bytes kenang wrote (one changed behind its back is rewritten)."""
    return all(warehouse.intact(warehouse.partition_file(wh, t, day.date, day.user_id)) for t in (MESSAGES, SESSIONS))
