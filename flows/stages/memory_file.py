"""``MEMORY_INDEX.md`` (default user) and ``MEMORY_INDEX.<user>.md``: one line per summarized day.

Rebuilt from ``daily_summaries`` for each user a run summarized, in the archive root,
and written only when its bytes change. The sha256 of each is recorded
(``ledger.record_derived``), so ``kenang verify`` can tell a hand edit.
"""

from __future__ import annotations

import hashlib
from typing import Iterable

from flows.config import Settings
from flows.store import compact, faults, ledger
from flows.store.archive_files import marker
from flows.store.fsio import atomic_write_bytes
from transforms.memory_file import ENTRY_COLUMNS, entry_of, index_name, render_memory_index


def write_memory_files(settings: Settings, users: Iterable[str]) -> int:
    """Rebuild MEMORY_INDEX.md for each user from daily_summaries; returns files changed."""
    changed = 0
    shas = {}
    for user in sorted(set(users)):
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
    return changed
