"""Tombstones on disk: the ``tombstones`` table, and the home's forgetting key.

The key (``<home>/.kenang-forget-key``, 32 random bytes, 0600) keys the hashes a
tombstone keeps instead of the forgotten text (``transforms.forget``). It is made with
the first tombstone; a home without one has forgotten nothing. A home whose tombstones
outlived their key (restored from a backup without it) cannot honour them: every use of
the key then stops with ``ForgetKeyMissing`` (``kenang verify`` reports it), so no
rebuild brings forgotten text back and no forget makes a new key over the old tombstones.
"""

from __future__ import annotations

import datetime as dt
import os
import secrets
from typing import Literal, overload

import pyarrow as pa

from flows.config import Settings
from flows.store import warehouse
from flows.store.fsio import atomic_write
from schemas.tables import TOMBSTONES
from transforms.errors import TerminalError
from transforms.forget import Forgetting, Tombstone

KEY_BYTES = 32


class ForgetKeyMissing(TerminalError):
    """Tombstones exist and the key their hashes need is missing or damaged: nothing may be rebuilt."""


def _key_file(settings: Settings):
    return settings.paths.home / ".kenang-forget-key"


def _read_key(settings: Settings) -> tuple[bytes | None, str | None]:
    """The key, or None and why not ("is missing", "is damaged ...")."""
    path = _key_file(settings)
    try:
        k = path.read_bytes()
    except FileNotFoundError:
        return None, "is missing"
    except OSError as exc:
        return None, f"cannot be read ({exc.strerror or type(exc).__name__})"
    if len(k) != KEY_BYTES:
        return None, f"is damaged ({len(k)} bytes, not {KEY_BYTES})"
    return k, None


def key_problem(settings: Settings) -> str | None:
    """Why this home's tombstones cannot be honoured (they exist, their key does not); None when they can."""
    k, why = _read_key(settings)
    if k is not None:
        return None
    n = warehouse.read(settings.paths.warehouse, TOMBSTONES).num_rows
    if not n:
        return None  # nothing forgotten yet: the first forget makes the key
    return (
        f"{_key_file(settings)} {why}, and {n} tombstone(s) need it (without it, forgotten text would come "
        "back): restore it from the backup that holds this home; until then kenang rebuilds and forgets nothing"
    )


def require_key(settings: Settings) -> None:
    """Stop, before anything is written, when the tombstones cannot be honoured (``key_problem``)."""
    if problem := key_problem(settings):
        raise ForgetKeyMissing(problem)


@overload
def key(settings: Settings, create: Literal[True]) -> bytes: ...
@overload
def key(settings: Settings, create: bool = False) -> bytes | None: ...


def key(settings: Settings, create: bool = False) -> bytes | None:
    """The home's key; None when there is none and ``create`` is not asked.

    Raises ``ForgetKeyMissing`` when tombstones exist and the key is missing or damaged:
    they would match nothing, and a new key would not bring them back."""
    k, _why = _read_key(settings)
    if k is not None:
        return k
    require_key(settings)
    if not create:
        return None
    atomic_write(_key_file(settings), lambda tmp: _write_private(tmp, secrets.token_bytes(KEY_BYTES)), 0o600)
    return _key_file(settings).read_bytes()


def _write_private(tmp, data: bytes) -> None:
    """Write a file that is 0600 from its first byte: never readable by others, not even before a chmod."""
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)


def read(settings: Settings) -> list[Tombstone]:
    rows = warehouse.read(settings.paths.warehouse, TOMBSTONES).to_pylist()
    return [
        Tombstone(r["tombstone_id"], r["user_id"], r["kind"], r["digest"], r["words"], r["day"], r["purge"])
        for r in rows
    ]


def forgetting(settings: Settings, user: str, *, today: dt.date | None = None, purged: bool = False) -> Forgetting:
    """What to leave out of ``user``'s rows: their tombstones, and the retention window if one is set.

    ``purged``: only the tombstones of ``forget --purge``, which keep what they forgot
    out of the archive too (``flows.stages.archive``); no retention window.
    """
    k = key(settings) or b""
    before = None
    if today is not None and settings.retention.messages_days and not purged:
        before = today - dt.timedelta(days=settings.retention.messages_days)
    return Forgetting.of(k, [t for t in read(settings) if t.user_id == user and (t.purge or not purged)], before=before)


def add(settings: Settings, tombstone: Tombstone) -> bool:
    """Record a tombstone (once: its id is a hash of what it forgets); returns whether it is new.

    The same forget again with ``--purge`` marks the recorded one as purged, so what it
    forgot is kept out of the archive from then on too."""
    rows = warehouse.read(settings.paths.warehouse, TOMBSTONES).to_pylist()
    if any(r["tombstone_id"] == tombstone.tombstone_id for r in rows):
        if tombstone.purge and not all(r["purge"] for r in rows if r["tombstone_id"] == tombstone.tombstone_id):
            rows = [{**r, "purge": True} if r["tombstone_id"] == tombstone.tombstone_id else r for r in rows]
            warehouse.write_file(
                warehouse.single_file(settings.paths.warehouse, TOMBSTONES),
                pa.Table.from_pylist(rows, schema=TOMBSTONES.schema),
                TOMBSTONES,
            )
        return False
    rows.append(
        {
            "tombstone_id": tombstone.tombstone_id,
            "user_id": tombstone.user_id,
            "kind": tombstone.kind,
            "digest": tombstone.digest,
            "words": tombstone.words,
            "day": tombstone.day,
            "purge": tombstone.purge,
            "created_at": dt.datetime.now(dt.UTC),
        }
    )
    warehouse.write_file(
        warehouse.single_file(settings.paths.warehouse, TOMBSTONES),
        pa.Table.from_pylist(rows, schema=TOMBSTONES.schema),
        TOMBSTONES,
    )
    return True
