"""``kenang import``: put exports into active/ for the nightly flow, or preview them.

``stage`` copies each file into ``active/[user/]`` atomically (the user's original is
never touched). A name taken by other bytes gets a sha-suffixed name; identical bytes
already waiting are recognised. ``--date`` sets the copy's modification time to noon
of that day, which is the date the importer gives messages without timestamps.
A leading dot is dropped from the name (``.aider.chat.history.md``), since kenang
skips hidden files in active/.

``preview`` goes the nightly flow's way: it parses each file as ``detect`` named it,
cuts every conversation into the day transcripts ingest would archive
(``conversation_transcripts``), and reads each back with the loader's parser and ids
(``parse_transcript``, ``session_message_ids``). It says, per conversation, its title,
day span, message count and how many of its messages the ``messages`` table does not
hold yet (ids are content hashes, so this is exact).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import shutil
from pathlib import Path
from typing import Iterable

from flows.store import warehouse
from flows.config import Settings
from flows.store.fsio import fsync_dir, tmp_name
from schemas.tables import MESSAGES
from transforms.errors import ConfigError, ParseError
from flows.stages.ingest import export_transcripts
from transforms.imports import detect, formats
from transforms.model import USER_ID_RE, Session
from transforms.parse import parse_transcript
from transforms.rows import session_message_ids


def _check(settings: Settings, files: Iterable[Path], user: str) -> list[tuple[Path, bytes, str]]:
    if not USER_ID_RE.match(user):
        raise ConfigError(f"--user {user!r} is not a valid user id (a-z, 0-9, . _ -)")
    out = []
    for f in files:
        data = f.read_bytes()
        fmt = detect(data)
        if fmt is None:
            raise ConfigError(f"{f}: not an export kenang can import (tried: {', '.join(formats())})")
        out.append((f, data, fmt))
    return out


def _noon(settings: Settings, day: dt.date) -> float:
    return dt.datetime.combine(day, dt.time(12), tzinfo=settings.timezone).timestamp()


def stage(settings: Settings, files: Iterable[Path], user: str, date: dt.date | None) -> list[dict]:
    checked = _check(settings, files, user)
    folder = settings.paths.active if user == settings.default_user else settings.paths.active / user
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for f, data, fmt in checked:
        sha = hashlib.sha256(data).hexdigest()
        name = f.name.lstrip(".") or "export"
        target = folder / name
        if target.exists() and hashlib.sha256(target.read_bytes()).hexdigest() != sha:
            stem, dot, suffix = name.partition(".")
            target = folder / f"{stem}.{sha[:8]}{dot}{suffix}"
        if not target.exists():
            tmp = tmp_name(target)
            shutil.copyfile(f, tmp)
            with open(tmp, "rb") as fh:
                os.fsync(fh.fileno())
            os.replace(tmp, target)
            fsync_dir(folder)
        mtime = _noon(settings, date) if date else min(os.stat(f).st_mtime, _quiet_enough(settings))
        os.utime(target, (mtime, mtime))
        out.append({"file": str(f), "format": fmt, "active": str(target)})
    return out


def _quiet_enough(settings: Settings) -> float:
    """An mtime old enough that the quiet period does not hold back a file copied just now."""
    return dt.datetime.now(dt.timezone.utc).timestamp() - settings.quiet_period.total_seconds() - 1


def preview(settings: Settings, files: Iterable[Path], user: str, date: dt.date | None, now: dt.datetime) -> dict:
    """What ``kenang import`` would add, read through the nightly ingest's own ``export_transcripts``."""
    tz = settings.timezone
    out = []
    known_cache: dict[dt.date, set[str]] = {}

    def known(day: dt.date) -> set[str]:
        if day not in known_cache:
            path = warehouse.partition_file(settings.paths.warehouse, MESSAGES, day, user)
            known_cache[day] = set(warehouse.read_file(path, MESSAGES)["message_id"].to_pylist()) if path.is_file() else set()
        return known_cache[day]

    for f, data, fmt in _check(settings, files, user):
        stamp = dt.datetime.fromtimestamp(_noon(settings, date) if date else os.stat(f).st_mtime, tz)
        try:
            export, per_conversation = export_transcripts(data, fmt, tz=tz, user=user, stamp=stamp, now=now)
            read_back = [[(d.day, parse_transcript(d.name, d.data, tz=tz)) for d in ds] for ds in per_conversation]
        except ParseError as exc:
            out.append({"file": str(f), "format": fmt, "error": exc.reason, "conversations": []})
            continue
        convs = []
        for conv, sessions in zip(export.conversations, read_back):
            days = [day for day, _session in sessions]
            ids = [(day, mid) for day, s in sessions
                   for _m, _ts, mid in session_message_ids(s.messages, user_id=user, session_id=s.session_id)]
            convs.append({"id": conv.conversation_id, "title": conv.title, "first_day": min(days, default=None),
                          "last_day": max(days, default=None), "messages": len(ids),
                          "new_messages": sum(mid not in known(day) for day, mid in ids)})
        out.append({"file": str(f), "format": fmt, "user_id": user, "notes": list(export.notes), "conversations": convs})
    return {"files": out}
