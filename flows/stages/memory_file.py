"""``MEMORY_INDEX.md`` (default user) and ``MEMORY_INDEX.<user>.md``: one line per summarized day.

Rebuilt from ``daily_summaries`` for each user whose summaries changed, in the archive
root, and written only when its bytes change. The sha256 of each is recorded
(``ledger.record_derived``), so ``kenang verify`` can tell a hand edit.

Which users: ``stale_users`` compares a digest of each user's summarized days in the
ledger (date and summary sha256, digested by month, then the months together) with the
digest their index was last written from (``_memory_index_sources.json`` in the
warehouse). So a run that wrote summaries and then died before their index brings the
index up to date on the next run, and a run writes each index after the compact copies
are made, reading one file a month. A run takes the older months' digests from the
ledger's notes of them (``flows.stages.plan.Night.digests``), not from their rows.

By month: each month's part of a user's index (``transforms.memory_file.month_part``)
is kept in the warehouse, ``_memory_index/<user>/<YYYY-MM>.md``, beside a record of the
digest of the month's summarized days it was rendered from (``_memory_index/<user>.json``).
A run renders again only the months whose digest changed (or whose part is missing),
drops the parts of months with no summary left, and joins the parts into the file: one
new day reads and renders its own month, whatever the history, and the file has the
bytes of a whole render. The parts are written before the record, so a crash in between
leaves months that look changed and are rendered again by the next run.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import NamedTuple

from flows.config import Settings
from flows.store import compact, faults, ledger
from flows.store.archive_files import marker
from flows.store.fsio import atomic_write_bytes, fsync_dir
from flows.store.ledger import DayKey
from transforms.ids import fingerprint
from transforms.memory_file import ENTRY_COLUMNS, assemble_memory_index, entry_of, month_part
from transforms.vault import index_name

#: Bumped whenever a line's rendering changes, so parts rendered by an older kenang are rendered again.
PART_FORMAT = 1


class Digests(NamedTuple):
    """What the indexes are made from, as the ledger's rows hold it now (``digests``)."""

    sources: dict[str, str]  # per user, a digest of its months' digests of the summarized days (date, summary sha256)
    months: dict[str, dict[str, str]]  # per user and month, a digest of its days' summary states


def stale_users(settings: Settings, made: Digests) -> set[str]:
    """Users whose MEMORY_INDEX was not written from their summaries as ``made`` (``digests`` of the ledger now)
    has them."""
    written = _written_from(settings)
    sources = made.sources
    return {u for u, digest in sources.items() if written.get(u) != digest} | {u for u in written if u not in sources}


def digests(rows: Mapping[DayKey, Mapping]) -> Digests:
    """The ``Digests`` of the ledger's ``rows``, in one pass over every day of the history: a night makes them
    once for ``stale_users`` and ``write_memory_files`` (from the ledger's notes of the older months, and the rows
    of the others: ``flows.stages.plan.Night.digests``)."""
    by_month: dict[str, dict[str, list[Mapping]]] = {}
    for (user, day), r in rows.items():
        by_month.setdefault(user, {}).setdefault(f"{day:%Y-%m}", []).append(r)
    return joined({u: {m: month_digests(days) for m, days in months.items()} for u, months in by_month.items()})


def month_digests(rows: Iterable[Mapping]) -> tuple[str | None, str | None]:
    """(a digest of the summarized days, a digest of every day's summary state) of one user's month of ledger
    rows; None for a month without such a day."""
    sources: list[str] = []
    states: list[str] = []
    for r in rows:
        status = r.get("summary_status")
        if status is None:
            continue
        iso, sha = r["date"].isoformat(), r.get("summary_sha256")
        if status == "summarized":
            sources.append(f"{iso}:{sha}")
        states.append(f"{iso}:{status}:{sha}")
    return (fingerprint(sources) if sources else None, fingerprint(states) if states else None)


def joined(by_month: Mapping[str, Mapping[str, tuple[str | None, str | None]]]) -> Digests:
    """The ``Digests`` of each user's ``month_digests`` by month: a user's sources digest is one of its months'."""
    sources: dict[str, str] = {}
    months: dict[str, dict[str, str]] = {}
    for user, got in by_month.items():
        summarized = [f"{m}:{s}" for m, (s, _) in sorted(got.items()) if s is not None]
        if summarized:
            sources[user] = fingerprint(summarized)
        states = {m: state for m, (_, state) in got.items() if state is not None}
        if states:
            months[user] = states
    return Digests(sources, months)


def _sources_file(settings: Settings) -> Path:
    return settings.paths.warehouse / "_memory_index_sources.json"


def _written_from(settings: Settings) -> dict[str, str]:
    try:
        got = json.loads(_sources_file(settings).read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return {}
    return got if isinstance(got, dict) else {}


def write_memory_files(settings: Settings, users: Iterable[str], made: Digests | None = None) -> int:
    """Bring MEMORY_INDEX.md up to date for each user, month by month (see the module); returns files changed.

    ``made``: the ``digests`` of the day ledger as the caller just read it (of the ledger read here when not
    given)."""
    wh = settings.paths.warehouse
    sources, by_month = digests(ledger.read_days(wh)) if made is None else made
    changed = 0
    shas = {}
    users = sorted(set(users))
    for user in users:
        data = _assemble(settings, user, _month_digests(settings, by_month.get(user, {}), user)).encode("utf-8")
        path = settings.paths.archive / index_name(user, settings.default_user)
        shas[path.name] = hashlib.sha256(data).hexdigest()
        if path.is_file() and path.read_bytes() == data:
            continue
        atomic_write_bytes(path, data, needs=marker(settings))
        changed += 1
    ledger.record_derived(wh, shas)
    faults.checkpoint("memory_file.written")
    written = _written_from(settings)
    new = {**written, **{u: sources[u] for u in users if u in sources}}
    for u in users:
        if u not in sources:
            new.pop(u, None)
    if new != written:
        atomic_write_bytes(_sources_file(settings), (json.dumps(new, indent=1, sort_keys=True) + "\n").encode())
    return changed


def _month_digests(settings: Settings, digests: Mapping[str, str], user: str) -> dict[str, str]:
    """Per month the user's index may show (a summary in the ledger or a partition of ``daily_summaries``): a
    digest of its days' summary states in the ledger (``digests``, from ``Digests.months``)."""
    wh = settings.paths.warehouse
    known = ledger.user_months(wh)  # the ledger's months: a partition is written only for a day it holds
    # Only the months without a digest (no summary state in the ledger) are looked for partitions.
    unsure = None if known is None else [m for u, m in known if u == user and m not in digests]
    empty = fingerprint([])
    return {**{m: empty for m, _ in compact.user_months(wh, "daily_summaries", user, unsure)}, **digests}


def _parts_folder(settings: Settings, user: str) -> Path:
    return settings.paths.warehouse / "_memory_index" / user


def _parts_record(settings: Settings, user: str) -> Path:
    return settings.paths.warehouse / "_memory_index" / f"{user}.json"


def _read_parts_record(settings: Settings, user: str) -> dict[str, tuple[str, int]]:
    """month -> (the digest its part was rendered from, its days); empty when missing, unreadable or of an older
    format."""
    try:
        got = json.loads(_parts_record(settings, user).read_text(encoding="utf-8"))
        if got.get("format") != PART_FORMAT:
            return {}
        return {str(m): (str(d), int(n)) for m, (d, n) in got["months"].items()}
    except (OSError, ValueError, TypeError, AttributeError, KeyError):
        return {}


def _assemble(settings: Settings, user: str, months: Mapping[str, str]) -> str:
    """The user's index: the months whose summaries changed rendered again, the others' parts as they were."""
    folder = _parts_folder(settings, user)
    record = _read_parts_record(settings, user)
    parts: dict[str, tuple[str, int]] = {}
    for m, digest in months.items():
        if m in record and record[m][0] == digest:
            try:
                parts[m] = ((folder / f"{m}.md").read_text(encoding="utf-8"), record[m][1])
            except (OSError, ValueError):  # a part lost or damaged: rendered again below
                pass
    stale = sorted(m for m in months if m not in parts)
    if stale:
        table = compact.read_user(
            settings.paths.warehouse, "daily_summaries", user, columns=ENTRY_COLUMNS, months=stale
        ).to_pylist()
        by_month: dict[str, list] = {m: [] for m in stale}
        for r in table:
            by_month.setdefault(f"{r['date']:%Y-%m}", []).append(entry_of(r))
        for m in stale:
            parts[m] = (month_part(by_month[m]), len(by_month[m]))
            atomic_write_bytes(folder / f"{m}.md", parts[m][0].encode("utf-8"))
    gone = [m for m in record if m not in months]
    for m in gone:  # a month whose last summary went (forget): its lines go with it
        (folder / f"{m}.md").unlink(missing_ok=True)
    if gone and folder.is_dir():
        fsync_dir(folder)
    if stale or gone or not _parts_record(settings, user).is_file():
        body = {"format": PART_FORMAT, "months": {m: [months[m], parts[m][1]] for m in sorted(months)}}
        atomic_write_bytes(_parts_record(settings, user), (json.dumps(body, indent=1) + "\n").encode())
    order = sorted(months, reverse=True)
    return assemble_memory_index(user, sum(parts[m][1] for m in order), [parts[m][0] for m in order])
