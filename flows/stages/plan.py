"""Which days a run should load, summarize and index, decided from the archive record and the day ledger.

Pure reads, no Prefect: the flows, ``--dry-run`` and ``kenang status`` share them. A run reads the ledger as a
``Night``: the months of the history are judged by the notes the ledger keeps of them, not read.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from flows.config import Settings
from flows.store import ledger, warehouse
from flows.store.archive_files import list_archive, read_manifests, trusted_manifests
from flows.store.ledger import ArchivedDay, DayKey, archived_days, day_state
from schemas.tables import ARCHIVE_FILES
from transforms.ids import fingerprint

if TYPE_CHECKING:
    from flows.stages import memory_file

#: Up to this many candidate days are read partition by partition; more, in one scan.
_ONE_BY_ONE = 64


def pending_days(settings: Settings) -> tuple[list[ArchivedDay], Night, set[DayKey]]:
    """Days to load: pending ones whose record changed, and ones whose last load failed.

    Returns (days to load, the ledger, the pending keys checked); the caller clears
    the checked keys once their outcomes are in the ledger. Reads one archive_files
    partition per candidate day, never the whole record.
    """
    wh = settings.paths.warehouse
    days = Night(settings)
    checked = ledger.read_pending(wh)
    failed = {k for k, r in days.open_rows if r["status"] == "failed"}
    keys = sorted(checked | failed)
    if len(keys) > _ONE_BY_ONE:  # a big first import: one scan beats many small reads
        everything = archived_days(wh)
        found = [everything.get(k) for k in keys]
    else:
        found = [ledger.archived_day(wh, *k) for k in keys]
    todo = [
        a for a in found if a is not None and day_state(a, days.get((a.user_id, a.date))) not in ("loaded", "forgotten")
    ]
    return todo, days, checked


#: Bumped whenever what a month's note says changes, so the ledger's notes made by an older kenang go unused.
NOTE_FORMAT = 1


def ledger_notes(settings: Settings) -> ledger.Notes:
    """The notes the day ledger keeps of each of its older months for a run (``ledger.refresh_history``)."""
    eid = _embedder_id(settings)
    return ledger.Notes(_basis(eid), lambda rows: _note(rows, eid))


def _embedder_id(settings: Settings) -> str:
    from flows.models import embed

    return embed.configured_id(settings)


def _basis(eid: str) -> str:
    from flows.stages import recall_index

    return fingerprint([f"notes={NOTE_FORMAT}", f"index={recall_index.index_key({}, eid)}"])


def _note(rows: list[dict], eid: str) -> dict:
    """A month of one user's ledger, as a run judges it: ``settled`` when no day of it is failed or still to
    summarize or index (by ``eid``), its loaded days (day of the month), and its MEMORY_INDEX digests."""
    from flows.stages import memory_file, recall_index, summarize

    settled = all(
        r["status"] != "failed"
        and (r["status"] != "loaded" or (summarize.is_fresh(r) and recall_index.is_fresh(r, eid)))
        for r in rows
    )
    sources, states = memory_file.month_digests(rows)
    return {
        "settled": settled,
        "loaded": [r["date"].day for r in rows if r["status"] == "loaded"],
        "sources": sources,
        "states": states,
    }


class Night(ledger.Ledger):
    """The day ledger as a run's stages judge it, without reading the months the ledger's notes settle.

    A month with a note (``ledger_notes``) whose days are all settled is known from its note: nothing in it to
    summarize or index, no failed day, which days are loaded, its MEMORY_INDEX digests. Every other month (the
    recent ones, one a backfill or a forget rewrote since, one with a failed or waiting day) is read. A row asked
    for (``get``) is read from its month, so the tasks take a ``Night`` as their ledger rows."""

    def __init__(self, settings: Settings) -> None:
        self.eid = _embedder_id(settings)
        super().__init__(settings.paths.warehouse, _basis(self.eid))
        self.settled = {m for m, note in self.notes.items() if note.get("settled") is True}

    @cached_property
    def open_rows(self) -> list[tuple[DayKey, dict]]:
        """(key, row) of every day in a month not settled by its note, in order."""
        return list(self.rows_except(self.settled))

    @cached_property
    def _settled_loaded(self) -> list[DayKey]:
        """(user, day) of every loaded day of a settled month, from the notes."""
        out = []
        for user, month in sorted(self.settled):
            first = dt.date.fromisoformat(f"{month}-01")
            out += [(user, first.replace(day=int(d))) for d in self.notes[(user, month)].get("loaded", ())]
        return out

    def needing(
        self,
        fresh: Callable[[Mapping], bool],
        *,
        start: dt.date | None = None,
        end: dt.date | None = None,
        force: bool = False,
        redo: frozenset[DayKey] = frozenset(),
    ) -> list[DayKey]:
        """``days_needing`` over the whole ledger, for ``fresh`` one of the rules the notes judge by
        (``summarize.is_fresh``, ``recall_index.is_fresh`` for this run's embedder): a settled month's loaded days
        are fresh, so they are taken only when ``force`` or ``redo`` asks."""
        out = days_needing(dict(self.open_rows), fresh, start=start, end=end, force=force, redo=redo)
        if not force and not redo:
            return out
        taken = (k for k in self._settled_loaded if force or k in redo)
        return sorted({*out, *(k for k in taken if (start is None or k[1] >= start) and (end is None or k[1] <= end))})

    def failed(self, column: str) -> set[DayKey]:
        """The days whose ``column`` (``summary_status``, ``index_status``) says failed: none in a settled month."""
        return {k for k, r in self.open_rows if r.get(column) == "failed"}

    @cached_property
    def _noted(self) -> dict[str, Noted]:
        out: dict[str, dict[str, set[int]]] = {}
        for user, month in self.settled:
            days = self.notes[(user, month)].get("loaded", ())
            if days:
                out.setdefault(user, {}).setdefault(month, set()).update(int(d) for d in days)
        for (user, day), r in self.open_rows:
            if r["status"] == "loaded":
                out.setdefault(user, {}).setdefault(f"{day:%Y-%m}", set()).add(day.day)
        return {u: Noted({m: frozenset(d) for m, d in months.items()}) for u, months in out.items()}

    def noted(self) -> dict[str, Noted]:
        """Per user, the loaded days (``summarize.noted_days``), by month: the notes' lists of days, not a date each."""
        return self._noted

    def loaded_users(self) -> set[str]:
        """The users with a loaded day."""
        settled = {user for (user, month) in self.settled if self.notes[(user, month)].get("loaded")}
        return settled | {user for (user, _), r in self.open_rows if r["status"] == "loaded"}

    def digests(self) -> memory_file.Digests:
        """``memory_file.digests`` of the whole ledger: the notes' digests of the noted months, the others' rows."""
        from flows.stages import memory_file  # noqa: F811 - loaded with the stages, not with the plan

        by_month: dict[str, dict[str, tuple[str | None, str | None]]] = {}
        for (user, month), note in self.notes.items():
            by_month.setdefault(user, {})[month] = (note.get("sources"), note.get("states"))
        rows: dict[tuple[str, str], list[dict]] = {}
        for (user, day), r in self.unnoted():
            rows.setdefault((user, f"{day:%Y-%m}"), []).append(r)
        for (user, month), got in rows.items():
            by_month.setdefault(user, {})[month] = memory_file.month_digests(got)
        return memory_file.joined(by_month)


@dataclass(frozen=True)
class Noted:
    """A user's loaded days, ``day in noted``: per month (``YYYY-MM``), its days' numbers (a summarize job takes
    it to every core, and years of days are a few numbers a month)."""

    months: Mapping[str, frozenset[int]]

    def __contains__(self, day: object) -> bool:
        return isinstance(day, dt.date) and day.day in self.months.get(f"{day:%Y-%m}", ())

    def __iter__(self) -> Iterator[dt.date]:
        for month, days in sorted(self.months.items()):
            first = dt.date.fromisoformat(f"{month}-01")
            yield from (first.replace(day=d) for d in sorted(days))


@dataclass(frozen=True)
class Survey:
    """What a backfill found in the archive folders of its range."""

    days: tuple[ArchivedDay, ...]
    restore: tuple[dict, ...]  # rows one record holds and the other lacks: the manifests' or the warehouse's
    unrecorded: tuple[str, ...]  # archive paths on disk in no record: reported, never loaded
    ledger: Mapping[DayKey, dict]
    rewrite: tuple[dict, ...] = ()  # the warehouse's rows of days whose manifest says otherwise: rewritten from them


def days_held(days_ledger: Mapping[DayKey, Mapping]) -> dict:
    """How many (user, day)s the ledger holds, forgotten ones left out, and the first and last of their days."""
    held = sorted(day for (_, day), row in days_ledger.items() if row.get("status") != "forgotten")
    return {
        "days": len(held),
        "first": held[0].isoformat() if held else None,
        "last": held[-1].isoformat() if held else None,
    }


def survey(settings: Settings, start: dt.date, end: dt.date, only_missing: bool) -> Survey:
    """Days in [start, end] whose record holds files, and the files on disk no record knows.

    The record is the warehouse's ``archive_files`` and, for a warehouse that was lost,
    the manifest kenang writes into each archive day folder (``archive.MANIFEST``; see
    ``archive_files.trusted_manifests``). A file no record knows is never adopted here: a stray file
    placed in the archive must not reach the tables or the index unnoticed. It is
    reported, as ``kenang verify`` reports it, and ``kenang adopt PATH`` takes it in on
    purpose. A manifest that differs from the record is rewritten from it.
    """
    wh = settings.paths.warehouse
    lost = not warehouse.has_files(wh, ARCHIVE_FILES)
    broken = frozenset(tampered(settings, ARCHIVE_FILES, start, end))
    recorded = [
        r
        for r in warehouse.read(wh, ARCHIVE_FILES, "date BETWEEN ? AND ?", [start, end]).to_pylist()
        if (r["user_id"], r["date"]) not in broken
    ]
    files: dict[DayKey, dict[str, str]] = {}
    for r in recorded:
        files.setdefault((r["user_id"], r["date"]), {})[r["path"]] = r["sha256"]
    manifests = read_manifests(settings, start, end)
    trusted, stale = trusted_manifests(recorded, manifests, lost=lost, broken=broken)
    in_manifest = {row["path"] for rows in manifests.values() for row in rows}
    # Recorded before manifests existed (or a manifest lost): written back into the archive.
    restore: list[dict] = [r for r in recorded if r["path"] not in in_manifest]
    for key, rows in trusted.items():
        known = files.setdefault(key, {})
        for row in rows:
            if row["path"] not in known:
                known[row["path"]] = row["sha256"]
                restore.append(row)
    restoring = {(r["user_id"], r["date"]) for r in restore}
    rewrite = tuple(r for r in recorded if (r["user_id"], r["date"]) in stale - restoring)
    on_record = {p for f in files.values() for p in f}
    unrecorded = tuple(d.relpath for d in list_archive(settings, start, end) if d.relpath not in on_record)
    days_ledger = ledger.read_days(wh)
    days = []
    for key in sorted(k for k, f in files.items() if f):
        a = ArchivedDay.of(key[0], key[1], files[key].items())
        if only_missing and day_state(a, days_ledger.get(key)) == "loaded":
            continue
        days.append(a)
    return Survey(tuple(days), tuple(restore), unrecorded, days_ledger, rewrite)


def days_needing(
    ledger_rows: Mapping[DayKey, Mapping],
    fresh: Callable[[Mapping], bool],
    *,
    start: dt.date | None = None,
    end: dt.date | None = None,
    force: bool = False,
    redo: frozenset[DayKey] = frozenset(),
) -> list[DayKey]:
    """Loaded days in [start, end] a stage still has to do, in day order.

    A day needs the stage when its row is not ``fresh`` by the stage's own rule
    (``summarize.is_fresh``, ``recall_index.is_fresh``), when ``force`` says every day
    of the range, or when it is in ``redo`` (a partition changed behind kenang's back).
    """
    out = []
    for key, row in sorted(ledger_rows.items()):
        if row["status"] != "loaded" or (start and key[1] < start) or (end and key[1] > end):
            continue
        if force or key in redo or not fresh(row):
            out.append(key)
    return out


#: A run's budgets when the config leaves them null: about an hour of the bundled model
#: (a busy day a minute on 2 cores) and about half an hour of ``e5+use`` (3 chunks a second).
MODEL_DAYS_PER_RUN = 60
EMBEDDED_CHUNKS_PER_RUN = 6000


def summary_budget(settings: Settings) -> int | None:
    """Most days one run summarizes: ``summarizer.max_days_per_run``, else 60 with a model, no limit without."""
    cfg = settings.summarizer
    if cfg.max_days_per_run is not None:
        return cfg.max_days_per_run
    return None if cfg.backend == "extractive" else MODEL_DAYS_PER_RUN


def chunk_budget(settings: Settings) -> int | None:
    """Most new chunks one run embeds: ``embedder.max_chunks_per_run``, else 6000 with a model, no limit without."""
    cfg = settings.embedder
    if cfg.max_chunks_per_run is not None:
        return cfg.max_chunks_per_run
    return None if cfg.backend == "none" else EMBEDDED_CHUNKS_PER_RUN


def newest_first(keys: list[DayKey], limit: int | None = None, last=frozenset()) -> tuple[list[DayKey], list[DayKey]]:
    """(the days to take, newest first, at most ``limit``; the days that wait for the next nights).

    Days in ``last`` (ones that failed before) go after every other day, so days that
    keep failing can never hold the budget against the ones still waiting.
    """
    order = sorted(keys, key=lambda k: (k not in last, k[1], k[0]), reverse=True)
    return (order, []) if limit is None else (order[:limit], order[limit:])


def archived_before(settings: Settings, cutoff: dt.date) -> list[ArchivedDay]:
    """Every recorded (user, day) of the archive older than ``cutoff`` (retention.archive_days)."""
    return [a for (_, day), a in sorted(archived_days(settings.paths.warehouse, "date < ?", [cutoff]).items())]


def expired_days(settings: Settings, cutoff: dt.date) -> list[ArchivedDay]:
    """Loaded days older than ``cutoff`` (retention.messages_days): the load empties them."""
    wh = settings.paths.warehouse
    rows = ledger.read_days(wh)
    out = []
    for (user, day), row in sorted(rows.items()):
        if day < cutoff and row["status"] == "loaded":
            out.append(ledger.archived_day(wh, user, day) or ArchivedDay(user, day, (), ()))
    return out


def tampered(settings: Settings, table, start: dt.date, end: dt.date) -> set[DayKey]:
    """(user, day)s in range whose partition of ``table`` exists but holds bytes kenang did not write."""
    root = warehouse.table_dir(settings.paths.warehouse, table)
    out: set[DayKey] = set()
    if not root.is_dir():
        return out
    for path in root.glob("date=*/user_id=*/data.parquet"):
        try:
            day = dt.date.fromisoformat(path.parent.parent.name.removeprefix("date="))
        except ValueError:
            continue
        if start <= day <= end and not warehouse.intact(path):
            out.add((path.parent.name.removeprefix("user_id="), day))
    return out


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
    """summarized | failed | pending, by the summarize stage's own freshness rule."""
    from flows.stages.summarize import is_fresh

    if row and row.get("summary_status") == "failed":
        return "failed"
    return "summarized" if row and is_fresh(row) else "pending"
