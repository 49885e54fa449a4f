"""``kenang import``: put exports into active/ for the nightly flow, or preview them.

Each file is looked at before it is read (``os.stat``): a pipe, socket or device is
never opened, so nothing can hang the import. A file bigger than ``limits.max_file_mb``
(what ingest would quarantine) is not read past that size. A file no importer
recognises, or one its importer cannot read, is *skipped*: the others are imported,
and each skipped one is returned with its reason (the CLI lists them and exits 4).

``stage`` copies each file into ``active/[user/]`` atomically (the user's original is
never touched). A name taken by other bytes, or by something that is no regular file
(a pipe, a link), gets a sha-suffixed name; identical bytes already waiting are
recognised. ``--date`` sets the copy's modification time to noon
of that day: the file's date, which messages take when nothing in the file dates them
(``transforms.imports.undated_days``).
A leading dot is dropped from the name (``.aider.chat.history.md``), since kenang
skips hidden files in active/.

``preview`` goes the nightly flow's way: it parses each file as ``detect`` named it,
cuts every conversation into the day transcripts ingest would archive
(``conversation_transcripts``), and reads each back with the loader's parser and ids
(``parse_transcript``, ``session_message_ids``). It says, per conversation, its title,
day span, message count and how many of its messages the ``messages`` table does not
hold yet (ids are content hashes, so this is exact).

Both say of each file what it could not take as it is (``_explain``): the numbers of
the lines its importer could not read, and how many messages without a time took which
day, by which rule (``transforms.imports.dating``). A ``.json`` file no importer claims
is skipped with the nightly quarantine's own reason (``ingest.not_an_export``: where
the JSON breaks).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
from collections.abc import Iterable
from pathlib import Path

from flows.config import Settings
from flows.stages.ingest import export_transcripts, not_an_export, shown_path
from flows.store import warehouse
from flows.store.fsio import NotRegular, atomic_write_bytes, free_name, not_regular, open_regular
from schemas.tables import MESSAGES
from transforms.errors import ArchiveError, ParseError, UsageError
from transforms.imports import Derived, Export, dating, detect, formats, skipped_lines
from transforms.imports.base import BY_FILE
from transforms.model import USER_ID_RE, Session
from transforms.parse import parse_transcript
from transforms.redact import redact, redact_user_id
from transforms.rows import session_message_ids


class _Skip(Exception):
    """Why one file of an import is left out; the others go on."""


def _read(settings: Settings, f: Path) -> tuple[bytes, os.stat_result]:
    """A file's bytes and stat, read only when it is a regular file within ``limits.max_file_mb``.

    Looked at first: a pipe, socket or device is never opened. A link you name is
    yours, so its target is what is looked at and read.
    """
    try:
        try:
            st = os.stat(f)
        except FileNotFoundError:
            raise _Skip("does not exist (check the path)") from None
        what = not_regular(st.st_mode)
        if what is not None:
            raise _Skip(f"{what}, not a file; nothing read (kenang imports regular files only)")
        cap = settings.max_file_bytes
        if st.st_size > cap:
            raise _Skip(_too_big(settings, st.st_size))
        with open_regular(Path(os.path.realpath(f))) as fh:
            data = fh.read(cap + 1)
    except NotRegular as exc:  # swapped between the look and the open
        raise _Skip(f"{exc.what}, not a file; nothing read (kenang imports regular files only)") from None
    except OSError as exc:
        raise _Skip(f"cannot be read ({exc.strerror or type(exc).__name__})") from None
    if len(data) > cap:  # it grew since the look
        raise _Skip(_too_big(settings, len(data)))
    return data, st


def _too_big(settings: Settings, size: int) -> str:
    limit = settings.limits.max_file_mb
    return (
        f"is {size / 2**20:.1f} MiB, over limits.max_file_mb={limit}; nothing read (raise limits.max_file_mb "
        "in kenang.yaml to import it)"
    )


def _examine(
    settings: Settings, f: Path, user: str, date: dt.date | None, now: dt.datetime
) -> tuple[bytes, str, float, Export, list[list[Derived]]]:
    """(bytes, format, the copy's mtime, the export, its day transcripts), read as the nightly ingest reads it.

    ``_Skip`` with the reason when the file is no export kenang recognises or can read.
    """
    data, st = _read(settings, f)
    mtime = _noon(settings, date) if date else min(st.st_mtime, _quiet_enough(settings))
    fmt = None
    try:
        fmt = detect(data)
        if fmt is None:
            raise _Skip(_unknown(f, data))
        export, per_conversation = export_transcripts(
            data,
            fmt,
            tz=settings.timezone,
            user=user,
            stamp=dt.datetime.fromtimestamp(mtime, settings.timezone),
            now=now,
        )
    except ParseError as exc:
        raise _Skip(f"a {fmt or 'file'} export kenang cannot read: {exc.reason}") from None
    except _Skip:
        raise
    except Exception as exc:  # noqa: BLE001 - one file must never stop the import
        raise _Skip(f"kenang could not read it ({type(exc).__name__})") from None
    return data, fmt, mtime, export, per_conversation


def _explain(settings: Settings, export: Export, mtime: float, date: dt.date | None) -> dict:
    """What the report says of a file besides its counts: the lines it could not read (their numbers), the days
    messages without a time took and why (``by``: conversation, neighbour, --date or mtime), and its other notes."""
    file_day = dt.datetime.fromtimestamp(mtime, settings.timezone).date()
    undated = [
        {
            "messages": d.messages,
            "day": d.day.isoformat(),
            "by": ("--date" if date else "mtime") if d.by == BY_FILE else d.by,
        }
        for d in dating(export, settings.timezone, file_day)
    ]
    return {
        "unreadable_lines": list(skipped_lines(export.notes)),
        "undated": undated,
        "notes": [n for n in export.notes if not skipped_lines((n,))],
    }


def _unknown(f: Path, data: bytes) -> str:
    """Why no importer claims a file: where JSON breaks, as the nightly quarantine says it, else the formats tried."""
    if not data.strip():
        return "the file is empty; nothing to import"
    if f.suffix.lower() == ".json" or data[:1024].removeprefix(b"\xef\xbb\xbf").lstrip().startswith((b"{", b"[")):
        why = not_an_export(data)
        if why.kind != "unknown_format":
            cut = "; the file may be cut short: download or export it again" if why.kind == "bad_json" else ""
            return f"{why.reason}{cut}"
    return f"not an export kenang can import (tried: {', '.join(formats())})"


def _skipped(f: Path, exc: _Skip) -> dict:
    """A skipped file as the CLI shows it: a name holding a secret as its hash, the reason redacted."""
    return {"file": shown_path(str(f)), "reason": redact(str(exc)).text}


def user_id(typed: str) -> str:
    """The user id ``kenang import --user`` names, in lower case. Refused: one that reads as a secret, as typed or
    lower-cased (a user id is written into every row and folder of the user's, where no secret may go), and one
    that is no valid id."""
    user = typed.strip().lower()
    if not user:  # a script's unset variable: never the default user
        raise UsageError("--user is empty; name whose conversations these are (a new user starts here)")
    if not USER_ID_RE.match(user):
        raise UsageError(f"--user {user!r} is not a valid user id (a-z, 0-9, . _ -)")
    if redact_user_id(typed) != user:
        raise UsageError("--user reads as a secret, not a name: a user id is a short name, such as gading")
    return user


def _noon(settings: Settings, day: dt.date) -> float:
    return dt.datetime.combine(day, dt.time(12), tzinfo=settings.timezone).timestamp()


def stage(
    settings: Settings, files: Iterable[Path], user: str, date: dt.date | None, now: dt.datetime
) -> tuple[list[dict], list[dict]]:
    """Copy each export into active/; (what was copied, what was skipped and why)."""
    user_id(user)
    folder = settings.paths.active if user == settings.default_user else settings.paths.active / user
    out: list[dict] = []
    skipped: list[dict] = []
    for f in files:
        try:
            data, fmt, mtime, export, _days = _examine(settings, f, user, date, now)
        except _Skip as exc:
            skipped.append(_skipped(f, exc))
            continue
        sha = hashlib.sha256(data).hexdigest()
        try:
            # A name in active/ taken by other bytes, or by no regular file (a pipe would hang the import, a
            # link be followed), is passed over: free_name hashes only regular files.
            target = free_name(folder, f.name.lstrip(".") or "export", sha)
            if not target.exists():
                atomic_write_bytes(target, data)  # the bytes read and checked, never the file read again
            os.utime(target, (mtime, mtime))
        except OSError as exc:  # active/ full, read-only or not a folder: one line, never a traceback
            raise ArchiveError(
                f"cannot copy {shown_path(str(f))} into {folder} ({exc.strerror or exc}); nothing "
                f"imported{f', the {len(out)} file(s) copied before it wait there' if out else ''}; "
                "free space or fix the folder, then import again"
            ) from None
        out.append({"file": str(f), "format": fmt, "active": str(target), **_explain(settings, export, mtime, date)})
    return out, skipped


def _session_id(session: Session) -> str:
    assert session.session_id is not None, "export_transcripts names the session on a transcript's first line"
    return session.session_id


def _quiet_enough(settings: Settings) -> float:
    """An mtime old enough that the quiet period does not hold back a file copied just now."""
    return dt.datetime.now(dt.UTC).timestamp() - settings.quiet_period.total_seconds() - 1


def preview(settings: Settings, files: Iterable[Path], user: str, date: dt.date | None, now: dt.datetime) -> dict:
    """What ``kenang import`` would add, read through the nightly ingest's own ``export_transcripts``."""
    user_id(user)
    tz = settings.timezone
    out, skipped = [], []
    known_cache: dict[dt.date, set[str]] = {}

    def known(day: dt.date) -> set[str]:
        if day not in known_cache:
            path = warehouse.partition_file(settings.paths.warehouse, MESSAGES, day, user)
            known_cache[day] = (
                set(warehouse.read_file(path, MESSAGES)["message_id"].to_pylist()) if path.is_file() else set()
            )
        return known_cache[day]

    for f in files:
        try:
            _data, fmt, mtime, export, per_conversation = _examine(settings, f, user, date, now)
            read_back = [[(d.day, parse_transcript(d.name, d.data, tz=tz)) for d in ds] for ds in per_conversation]
        except _Skip as exc:
            skipped.append(_skipped(f, exc))
            continue
        except ParseError as exc:
            skipped.append(_skipped(f, _Skip(f"a {fmt} export kenang cannot read: {exc.reason}")))
            continue
        convs = []
        for conv, sessions in zip(export.conversations, read_back, strict=False):
            days = [day for day, _session in sessions]
            ids = [
                (day, mid)
                for day, s in sessions
                for _m, _ts, mid in session_message_ids(s.messages, user_id=user, session_id=_session_id(s))
            ]
            convs.append(
                {
                    "id": conv.conversation_id,
                    "title": conv.title,
                    "first_day": min(days, default=None),
                    "last_day": max(days, default=None),
                    "messages": len(ids),
                    "new_messages": sum(mid not in known(day) for day, mid in ids),
                }
            )
        out.append(
            {
                "file": str(f),
                "format": fmt,
                "user_id": user,
                **_explain(settings, export, mtime, date),
                "conversations": convs,
            }
        )
    return {"files": out, "skipped": skipped}
