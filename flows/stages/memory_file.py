"""``MEMORY_INDEX.md`` (default user) and ``MEMORY_INDEX.<user>.md``: one line per summarized day.

Rebuilt from ``daily_summaries`` for each user whose summaries changed, in the archive
root, and written only when its bytes change. The sha256 of each is recorded
(``ledger.record_derived``), so ``kenang verify`` can tell a hand edit.

Which users: ``stale_users`` compares a digest of each user's summarized days in the
ledger (date and summary sha256) with the digest their index was last written from
(``_memory_index_sources.json`` in the warehouse). So a run that wrote summaries and
then died before their index brings the index up to date on the next run, and a run
writes each index after the compact copies are made, reading one file a month.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from pathlib import Path

from flows.config import Settings
from flows.store import compact, faults, ledger
from flows.store.archive_files import marker
from flows.store.fsio import atomic_write_bytes
from flows.store.ledger import DayKey
from transforms.ids import fingerprint
from transforms.memory_file import ENTRY_COLUMNS, entry_of, render_memory_index
from transforms.vault import index_name


def stale_users(settings: Settings, rows: Mapping[DayKey, Mapping]) -> set[str]:
    """Users whose MEMORY_INDEX was not written from their summaries as the ledger ``rows`` hold them now."""
    written = _written_from(settings)
    return {u for u, digest in source_digests(rows).items() if written.get(u) != digest} | {
        u for u in written if u not in source_digests(rows)
    }


def source_digests(rows: Mapping[DayKey, Mapping]) -> dict[str, str]:
    """Per user, a digest of the summarized days (date, summary sha256) an index is made from."""
    by_user: dict[str, list[str]] = {}
    for (user, day), r in rows.items():
        if r.get("summary_status") == "summarized":
            by_user.setdefault(user, []).append(f"{day.isoformat()}:{r.get('summary_sha256')}")
    return {u: fingerprint(items) for u, items in by_user.items()}


def _sources_file(settings: Settings) -> Path:
    return settings.paths.warehouse / "_memory_index_sources.json"


def _written_from(settings: Settings) -> dict[str, str]:
    try:
        got = json.loads(_sources_file(settings).read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return {}
    return got if isinstance(got, dict) else {}


def write_memory_files(settings: Settings, users: Iterable[str]) -> int:
    """Rebuild MEMORY_INDEX.md for each user from daily_summaries; returns files changed."""
    changed = 0
    shas = {}
    users = sorted(set(users))
    for user in users:
        rows = compact.read_user(settings.paths.warehouse, "daily_summaries", user, columns=ENTRY_COLUMNS).to_pylist()
        entries = [entry_of(r) for r in rows]
        data = render_memory_index(user, entries).encode("utf-8")
        path = settings.paths.archive / index_name(user, settings.default_user)
        shas[path.name] = hashlib.sha256(data).hexdigest()
        if path.is_file() and path.read_bytes() == data:
            continue
        atomic_write_bytes(path, data, needs=marker(settings))
        changed += 1
    ledger.record_derived(settings.paths.warehouse, shas)
    faults.checkpoint("memory_file.written")
    digests = source_digests(ledger.read_days(settings.paths.warehouse))
    written = _written_from(settings)
    new = {**written, **{u: digests[u] for u in users if u in digests}}
    for u in users:
        if u not in digests:
            new.pop(u, None)
    if new != written:
        atomic_write_bytes(_sources_file(settings), (json.dumps(new, indent=1, sort_keys=True) + "\n").encode())
    return changed
