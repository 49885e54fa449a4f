"""Ingest: look at ``active/`` and sort every file into ready, waiting or rejected.

Read-only: this stage never moves or writes anything, so ``--dry-run`` is just this
stage plus a report.

- Hidden names (a leading dot: editor swap files, kenang's own temporaries) are
  skipped and counted, never touched.
- A file modified within the quiet period is *waiting*, whatever its content: it may
  still be being written, so it is not even parsed.
- A quiet file that cannot be read (see ``docs/formats.md``) is *rejected*, with the
  ParseError kind and reason, for the quarantine stage.
- A quiet, readable file whose day is not yet eligible is *waiting*.
- Everything else is *ready* for the archive.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from flows.config import Settings
from transforms.days import day_is_eligible, eligible_from, file_is_quiet
from transforms.errors import ParseError
from transforms.model import ResolvedSession, Session
from transforms.parse import parse_transcript
from transforms.imports import detect, formats, parse_export
from transforms.imports.base import Derived, derived_transcripts
from transforms.model import USER_ID_RE
from transforms.resolve import resolve


@dataclass(frozen=True)
class Candidate:
    path: Path
    relpath: str  # relative to active/, posix separators
    size: int
    mtime: float

    @property
    def folder(self) -> str | None:
        """The first folder under active/, which names the user."""
        head, sep, _rest = self.relpath.partition("/")
        return head if sep else None


@dataclass(frozen=True)
class Ready:
    cand: Candidate
    resolved: ResolvedSession
    sha256: str


@dataclass(frozen=True)
class Waiting:
    cand: Candidate
    why: str  # 'not_quiet' | 'not_eligible'
    day: dt.date | None = None
    user_id: str | None = None
    eligible_at: dt.datetime | None = None


@dataclass(frozen=True)
class Rejected:
    cand: Candidate
    kind: str
    reason: str
    user_id: str | None = None


@dataclass(frozen=True)
class ReadyExport:
    """An export (ChatGPT, Claude.ai, ...) whose every day is eligible: its day transcripts, made."""

    cand: Candidate
    sha256: str
    format: str
    user_id: str
    conversations: int
    derived: tuple[Derived, ...]
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class IngestResult:
    ready: tuple[Ready, ...] = ()
    waiting: tuple[Waiting, ...] = ()
    rejected: tuple[Rejected, ...] = ()
    hidden: int = 0
    parsed: dict[str, Session] = field(default_factory=dict)  # sha256 -> session, reused by load
    exports: tuple[ReadyExport, ...] = ()


def scan(settings: Settings, now: dt.datetime, wall_now: float) -> IngestResult:
    """Classify every file under active/."""
    ready: list[Ready] = []
    exports: list[ReadyExport] = []
    waiting: list[Waiting] = []
    rejected: list[Rejected] = []
    parsed: dict[str, Session] = {}
    hidden = 0
    root = settings.paths.active
    for cand, st in _walk(root):
        if cand is None:
            hidden += 1
            continue
        if not file_is_quiet(cand.mtime, wall_now, settings.quiet_period):
            waiting.append(Waiting(cand, "not_quiet"))
            continue
        if stat.S_ISLNK(st.st_mode):
            target = os.readlink(cand.path)
            rejected.append(Rejected(cand, "symlink", f"is a symbolic link (to {target}); kenang archives only regular files"))
            continue
        if not stat.S_ISREG(st.st_mode):
            rejected.append(Rejected(cand, "not_regular", "is not a regular file (a pipe, socket or device)"))
            continue
        if cand.size > settings.max_file_bytes:
            limit = settings.values["limits"]["max_file_mb"]
            rejected.append(
                Rejected(cand, "too_large", f"is {cand.size / 2**20:.1f} MiB, over limits.max_file_mb={limit}")
            )
            continue
        try:
            data = cand.path.read_bytes()
            fmt = detect(cand.path.name, data) if cand.path.suffix.lower() in IMPORT_SUFFIXES else None
            if fmt is not None:
                item = expand_export(settings, cand, data, now)
                (exports if isinstance(item, ReadyExport) else waiting).append(item)
                continue
            if cand.path.suffix.lower() == ".json":
                raise _not_an_export(data)
            session = parse_transcript(cand.path.name, data, tz=settings.timezone)
            rs = resolve(
                session,
                file_name=cand.path.name,
                folder=cand.folder,
                default_user=settings.default_user,
                tz=settings.timezone,
                mtime=cand.mtime,
            )
        except ParseError as exc:
            rejected.append(Rejected(cand, exc.kind, exc.reason, _folder_user(cand)))
            continue
        except FileNotFoundError:
            continue  # removed while we looked: nothing to do, nothing lost
        if not day_is_eligible(rs.day, now, settings.timezone, settings.grace_period):
            at = eligible_from(rs.day, settings.timezone, settings.grace_period)
            waiting.append(Waiting(cand, "not_eligible", rs.day, rs.user_id, at))
            continue
        sha = hashlib.sha256(data).hexdigest()
        parsed[sha] = session
        ready.append(Ready(cand, rs, sha))
    return IngestResult(tuple(ready), tuple(waiting), tuple(rejected), hidden, parsed, tuple(exports))


IMPORT_SUFFIXES = (".json", ".jsonl", ".md", ".markdown")


def _not_an_export(data: bytes) -> ParseError:
    """Why a .json file no importer claims is refused: broken JSON, or JSON that is no chat export."""
    try:
        json.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        return ParseError(f"not valid UTF-8 at byte {exc.start}", kind="bad_utf8")
    except ValueError as exc:
        where = f" at line {exc.lineno}, column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else ""
        return ParseError(f"not valid JSON{where}", kind="bad_json")
    except RecursionError:
        return ParseError("JSON nested too deeply", kind="bad_json")
    return ParseError(f"valid JSON, but not a chat export kenang can import (tried: {', '.join(formats())})",
                      kind="unknown_format")


def expand_export(settings: Settings, cand: Candidate, data: bytes, now: dt.datetime) -> ReadyExport | Waiting:
    """Parse an export into day transcripts; it waits until every one of its days is eligible.

    The owner is the file's folder under active/ (else the default user). Messages with
    no time at all (ShareGPT, a headerless aider log) are dated by the file's mtime,
    which ``kenang import --date`` sets.
    """
    tz = settings.timezone
    user = _folder_user(cand) or settings.default_user
    if not USER_ID_RE.match(user):
        raise ParseError(f"folder {cand.folder!r} is not a valid user id", kind="bad_user_id")
    stamp = dt.datetime.fromtimestamp(cand.mtime, tz)
    export = parse_export(cand.path.name, data, tz=tz, default_ts=stamp)
    sha = hashlib.sha256(data).hexdigest()
    derived = derived_transcripts(export, tz=tz, user_id=user, source=cand.relpath, source_sha256=sha,
                                  undated_day=stamp.date())
    if not derived:
        raise ParseError(f"a {export.format} export with no messages", kind="no_messages")
    last = max(d.day for d in derived)
    if not day_is_eligible(last, now, tz, settings.grace_period):
        return Waiting(cand, "not_eligible", last, user, eligible_from(last, tz, settings.grace_period))
    return ReadyExport(cand, sha, export.format, user, len(export.conversations), tuple(derived), export.notes)


def _folder_user(cand: Candidate) -> str | None:
    return cand.folder.lower() if cand.folder else None


def _walk(root: Path):
    """Yield (Candidate, lstat) for every entry that is not a directory; (None, None) per hidden name."""
    if not root.is_dir():
        return
    stack = [root]
    while stack:
        d = stack.pop()
        try:
            entries = sorted(os.scandir(d), key=lambda e: e.name)
        except FileNotFoundError:
            continue
        for e in entries:
            if e.name.startswith("."):
                yield None, None
                continue
            try:
                st = e.stat(follow_symlinks=False)
            except FileNotFoundError:
                continue
            if stat.S_ISDIR(st.st_mode):
                stack.append(Path(e.path))
                continue
            path = Path(e.path)
            yield Candidate(path, path.relative_to(root).as_posix(), st.st_size, st.st_mtime), st
