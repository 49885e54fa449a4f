"""Collect: copy what is new in the agents' own logs into ``active/``, never touching the logs.

The nightly flow's first stage. For each source of ``kenang.yaml``'s ``sources:``:

- ``claude_code``, ``codex``, ``aider``: each matching file is read from where the
  last night stopped. The bytes taken before must still be there (same device and
  inode, at least as long, the same sha256); otherwise the file was truncated,
  rewritten or replaced, and it is read again whole, with a note in the run report
  (segments are named by their bytes, so what was taken before is recognised, and
  the load merges sessions by message id). The complete new lines of eligible days
  are cut into one segment per (session, local day) (``transforms.collect``) and
  written into ``active/[user/]``, where ingest archives them as they are. The new
  part is streamed: read a block at a time to plan the segments (each line's place,
  session and day), then each segment copied from the file by its byte ranges, so a
  log of any size is taken in memory bounded by its line count.
- ``open_webui_db``: the ``chat`` table is read through a read-only connection
  (``mode=ro``), in one short read; each chat with a newer ``updated_at`` whose day
  is eligible is written into ``active/`` as an Open WebUI export of that one chat.
- ``folder``: each file that is new or changed is copied whole into ``active/``;
  with ``mode: move`` the original is removed once its copy is durable and
  verified.

A file modified within the quiet period is not read at all. A segment's copy in
``active/`` takes the source file's modification time (at most the quiet period
ago), so the same night's ingest takes it. Sources are only read: a file is
opened read-only (without updating its access time where the system allows), and
its contents, mode and times stay as they were.

Sources never leave their folders. The path a source names is resolved once
(``source_root``): a link in what you wrote is yours. Below it nothing is followed: a
folder, and a glob's folders, are walked without entering a linked folder (each is
said), and each file is looked at with ``lstat``, so a link, pipe, socket or
device is skipped unopened. A file is opened with ``O_NOFOLLOW`` and ``O_NONBLOCK``
(``fsio.open_regular``, which ingest reads ``active/`` with too), and only when what
was opened is a regular file inside the root. A night reads at most
``limits.source_file_mb`` of one file (a log's new part, a folder's file); a bigger
one is skipped. Each skip is a note with its reason, counted as ``skipped``.

A source that fails (a permission error, a broken database, a path that matches
nothing) is named in the report and the others go on. The state (``flows.store.collected``) is written after the
segments are durable, so a crash in between only makes the next night take the same
bytes again, which are recognised.
"""

from __future__ import annotations

import datetime as dt
import fnmatch
import glob
import hashlib
import json
import logging
import os
import sqlite3
import stat
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path

from flows.config import Settings
from flows.stages.ingest import shown_path
from flows.store import collected
from flows.store.collected import FileState, SourceState
from flows.store.fsio import (
    NotRegular,
    atomic_write,
    atomic_write_bytes,
    free_name,
    not_regular,
    open_regular,
    remove_source,
    sha256_file,
    within,
)
from schemas.config import Source
from transforms.collect import LINE_KINDS, Planned, lineage, plan, segment_name
from transforms.days import FUTURE_SLACK, day_is_eligible, file_is_quiet
from transforms.redact import redact_reason

log = logging.getLogger("kenang")

#: Where a source whose ``path`` is a folder looks, per kind.
FOLDER_GLOBS = {
    "claude_code": "**/*.jsonl",
    "codex": "**/rollout-*.jsonl",
    "aider": "**/.aider.chat.history.md",
    "open_webui_db": "webui.db",
    "folder": "**/*",
}
_CHUNK = 1 << 20
_dry: ContextVar[bool] = ContextVar("kenang_collect_dry_run", default=False)
_root: ContextVar[Path | None] = ContextVar("kenang_collect_root", default=None)
_UNOPENED = "skipped unopened (kenang reads only regular files inside a source's folder)"
_NOT_ENTERED = "a link to a folder; not entered (kenang reads only regular files inside a source's folder)"


@dataclass
class SourceReport:
    name: str
    kind: str
    user: str
    files: int = 0  # matched tonight
    changed: int = 0  # read tonight
    written: int = 0  # segments or copies written into active/
    bytes: int = 0  # taken tonight
    waiting_quiet: int = 0  # files still being written
    waiting_days: int = 0  # days seen whose grace period has not passed
    moved: int = 0  # folder, mode move: originals removed after their copy
    skipped: int = 0  # links, pipes, sockets, devices and files over limits.source_file_mb: not read (notes say why)
    notes: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def collect(settings: Settings, now: dt.datetime, wall_now: float, dry_run: bool = False) -> list[SourceReport]:
    """Collect every source; one that fails is reported and the others go on.

    ``dry_run``: say what would be taken, writing nothing (no copy, no state, no move).
    """
    _dry.set(dry_run)
    out = []
    for source in settings.config.sources:
        user = source.user or settings.default_user
        report = SourceReport(source.name, source.kind, user)
        state, trouble = collected.read(settings.paths.warehouse, source.name)
        state.errors, state.notes = [], []
        if trouble:
            report.notes.append(trouble)
        try:
            _collect_source(settings, source, user, state, report, now, wall_now)
        except Exception as exc:  # noqa: BLE001 - one source must never stop the night
            report.errors.append(f"{type(exc).__name__}: {exc}")
        report.errors = [_said(e) for e in report.errors]  # a path or a message may quote a secret
        report.notes = [_said(n) for n in report.notes]
        state.errors, state.notes = list(report.errors), list(report.notes)
        state.last_collected = collected.now_iso()
        state.matched = report.files
        state.days_waiting, state.waiting_quiet = report.waiting_days, report.waiting_quiet
        state.skipped = report.skipped
        if not dry_run:  # a dry run only looks: its report says what it found, the night logs it once
            collected.write(settings.paths.warehouse, source.name, state)
            for e in report.errors:
                log.warning("source %s: %s", source.name, e)
        out.append(report)
    return out


def matches(source: Source) -> list[Path]:
    """The files a source's path names now: the file, the folder's files of its kind, or the glob's matches."""
    return scan(source)[0]


def source_root(source: Source) -> Path:
    """The real folder a source may read below: its path as written (a link in it is yours), up to any glob.

    A path that names a file is its own root: that one file.
    """
    raw = os.path.expanduser(source.path)
    return Path(os.path.realpath(_glob_base(raw) if glob.has_magic(raw) else raw))


def _glob_base(raw: str) -> Path:
    """The folders of a glob before its first wildcard, as written: a '..' after the wildcard never widens them."""
    parts = _glob_parts(raw)
    return Path(*parts[: _first_magic(parts)])


def _glob_parts(raw: str) -> tuple[str, ...]:
    return Path(raw).parts  # unlike os.path.abspath, Path keeps each '..'


def _first_magic(parts: tuple[str, ...]) -> int:
    return next(i for i, part in enumerate(parts) if glob.has_magic(part))


def scan(source: Source) -> tuple[list[Path], list[tuple[Path, str]]]:
    """(the files a source's path names now, the places below its root not followed and why).

    A folder, or a glob, is walked without following a link: a linked folder is not
    entered, and a link, pipe, socket or device of the kind's name is listed as a file,
    for ``_collect_source`` to skip with its reason. The path you wrote is resolved once
    (``source_root``): a link in it is yours; a link below it is the agent's folder.
    """
    raw = os.path.expanduser(source.path)
    skipped: list[tuple[Path, str]] = []
    if glob.has_magic(raw):
        found, skipped = _glob(raw)
    elif os.path.isdir(raw):
        found, skipped = _walk(Path(raw), FOLDER_GLOBS[source.kind])
    else:
        found = [source_root(source)] if os.path.lexists(raw) else []  # the file you named, a link in its path followed
    return sorted(p for p in found if _shown(p)), sorted(skipped)


def _shown(p: Path) -> bool:
    # A hidden name is a tool's own state or a temporary; aider's log is the one hidden name read.
    return not p.name.startswith(".") or p.name == ".aider.chat.history.md"


def _walk(top: Path, pattern: str) -> tuple[list[Path], list[tuple[Path, str]]]:
    """The entries below ``top`` whose names match ``pattern`` (``**/NAME`` or ``NAME``), never through a link.

    As ``glob`` would match them, without following a linked folder (listed, with why) and
    without entering a hidden one. A matching name that is a link, pipe or device is
    listed as found: the caller skips it with its reason.
    """
    if not glob.has_magic(pattern):
        return ([top / pattern] if os.path.lexists(top / pattern) else []), []
    return _match(top, tuple(pattern.split("/")))


def _glob(raw: str) -> tuple[list[Path], list[tuple[Path, str]]]:
    """A glob's matches as ``glob.glob(raw, recursive=True)`` finds them, never through a link below its base.

    ``glob`` follows every linked folder: a link to ``/`` walks the whole disk, and a few
    links to ``.`` make a search that never ends. Here a linked folder the pattern would
    enter is listed, with why, and not entered; a name that matches the last part is
    listed as found whatever it is but a folder (the caller skips a link, pipe or device
    with its reason). Hidden names match only a part that starts with a dot, as in
    ``glob``. Folders are walked from a list, not by recursion, so no depth stops it.
    """
    parts = _glob_parts(raw)
    first = _first_magic(parts)
    return _match(Path(*parts[:first]), parts[first:])


def _match(base: Path, parts: tuple[str, ...]) -> tuple[list[Path], list[tuple[Path, str]]]:
    """What the glob ``parts`` match below ``base``, and the linked folders not entered (see ``_glob``)."""
    pattern = tuple(p for i, p in enumerate(parts) if not (p == "**" and i and parts[i - 1] == "**"))
    found: set[Path] = set()
    skipped: dict[Path, str] = {}
    # (folder, how much of the pattern is matched): a list, not recursion, so no depth of folders can stop it;
    # each pair once, so neither '**/**' nor a '..' after '**' walks a folder twice.
    todo, seen = [(base, 0)], set()

    def entries(folder: Path) -> list[os.DirEntry]:
        try:
            with os.scandir(folder) as it:
                return list(it)
        except OSError:  # as glob: a folder that cannot be listed matches nothing
            return []

    def enter(path: Path, at: int) -> None:
        if os.path.islink(path):
            if os.path.isdir(path):
                skipped[path] = _NOT_ENTERED
        elif os.path.isdir(path):
            todo.append((path, at))

    while todo:
        here, at = todo.pop()
        key = (os.path.normpath(here.relative_to(base)), at)
        if key in seen:
            continue
        seen.add(key)
        head, last = pattern[at], at == len(pattern) - 1
        if head == "**":
            if not last:
                todo.append((here, at + 1))  # ** matches no folder too
            for e in entries(here):
                if e.name.startswith("."):
                    continue
                if last and not os.path.isdir(e.path):  # a link to a folder is said by enter, not listed
                    found.add(Path(e.path))
                enter(Path(e.path), at)
            continue
        if glob.has_magic(head):
            names = [
                e.name
                for e in entries(here)
                if fnmatch.fnmatchcase(e.name, head) and (head.startswith(".") or not e.name.startswith("."))
            ]
        else:
            names = [head] if os.path.lexists(here / head) else []
        for name in names:
            if not last:
                enter(here / name, at + 1)
            elif not os.path.isdir(here / name):
                found.add(here / name)
            elif os.path.islink(here / name):
                skipped[here / name] = _NOT_ENTERED
    # A '..' after the base goes up through folders that are not links, so it is read as written; the
    # caller's check that a match lies inside the root refuses one that leaves it.
    tidy = lambda p: base / os.path.normpath(p.relative_to(base))  # noqa: E731
    return sorted({tidy(p) for p in found}), sorted(skipped.items())


def _collect_source(
    settings: Settings,
    source: Source,
    user: str,
    state: SourceState,
    report: SourceReport,
    now: dt.datetime,
    wall_now: float,
) -> None:
    files, passed = scan(source)
    root = source_root(source)
    _root.set(root)
    report.files = len(files) + len(passed)
    if not files and not passed:
        report.errors.append(f"{source.path} matches no file (nothing collected; check the path)")
        return
    for f, why in passed:
        _skip(report, f, why)
    target = settings.paths.active if user == settings.default_user else settings.paths.active / user
    for f in files:
        try:
            st = os.lstat(f)
            if stat.S_ISDIR(st.st_mode):
                continue
            what = not_regular(st.st_mode)
            if what is not None:  # never opened: a pipe would hang the night, a device may act on a read
                _skip(report, f, f"{what}; {_UNOPENED}")
                continue
            if not within(os.path.realpath(f), root):
                _skip(report, f, f"lies outside {root}; {_UNOPENED}")
                continue
            # A database is written all day: its quiet period is each chat's updated_at, not the file's mtime.
            if source.kind != "open_webui_db" and not file_is_quiet(st.st_mtime, wall_now, settings.quiet_period):
                report.waiting_quiet += 1
                continue
            if source.kind in LINE_KINDS:
                _take_lines(settings, source, f, st, state, report, target, now, wall_now)
            elif source.kind == "open_webui_db":
                _take_chats(settings, source, f, st, state, report, target, now, wall_now)
            else:
                _take_file(settings, source, f, st, state, report, target, wall_now)
        except NotRegular as exc:  # it changed between the look and the open
            _skip(report, f, f"{exc.what}; {_UNOPENED}")
        except PermissionError as exc:
            report.errors.append(f"{f}: cannot read it ({exc.strerror}); left as it is")
        except OSError as exc:
            report.errors.append(f"{f}: cannot read it ({exc.strerror or exc}); left as it is")
        except sqlite3.Error as exc:
            report.errors.append(f"{f}: {_sqlite_words(exc)}")


# --- line logs: Claude Code, Codex, aider --------------------------------------------------


def _take_lines(
    settings: Settings,
    source: Source,
    f: Path,
    st: os.stat_result,
    state: SourceState,
    report: SourceReport,
    target: Path,
    now: dt.datetime,
    wall_now: float,
) -> None:
    key = str(f)
    old = state.files.get(key)
    due = old is not None and any(
        day_is_eligible(dt.date.fromisoformat(d), now, settings.timezone, settings.grace_period)
        for d in old.waiting_days
    )
    if old is not None and old.same_stat(st) and not due:  # nothing new, and no waiting day has come
        report.waiting_days += len(old.waiting_days)
        return
    report.changed += 1
    prior = old or FileState()
    with _open_read_only(f) as fh:
        fresh = os.fstat(fh.fileno())
        hasher = hashlib.sha256()
        why = _changed_under(prior, fresh, fh, hasher) if old is not None else None
        if why is not None:
            report.notes.append(
                f"{f}: {why}; read again whole (what was taken before is recognised, nothing counted twice)"
            )
            prior, hasher = FileState(generation=prior.generation + 1), hashlib.sha256()
        if _too_big(settings, report, f, fresh.st_size - prior.taken):
            return
        tz = settings.timezone
        # Streamed: the new part is read line by line and only each line's place, session and day kept; each
        # segment is then copied from the file by its ranges. A log of any size is taken in bounded memory.
        result = plan(
            source.kind,
            _complete_lines(fh, prior.taken, fresh.st_size - prior.taken),
            context=prior.context_bytes(),
            last=tuple(prior.last) if prior.last else None,
            tz=tz,
            eligible=lambda d: day_is_eligible(d, now, tz, settings.grace_period),
            undated_day=dt.datetime.fromtimestamp(fresh.st_mtime, tz).date(),
            start=prior.taken,
            latest=(now + FUTURE_SLACK).astimezone(tz).date(),
            first_days=prior.first_days,
        )
        mtime = min(fresh.st_mtime, wall_now - settings.quiet_period.total_seconds() - 1)
        line = lineage(key, prior.generation)
        for seg in result.segments:
            report.written += _place_planned(target, source, line, seg, fh, prior.taken, mtime)
        fh.seek(prior.taken)
        _hash_into(fh, result.taken, hasher)
    report.bytes += result.taken
    report.waiting_days += len(result.waiting_days)
    state.bytes_taken += result.taken
    state.segments += len(result.segments)
    state.files[key] = FileState(
        dev=fresh.st_dev,
        ino=fresh.st_ino,
        size=fresh.st_size,
        mtime_ns=fresh.st_mtime_ns,
        ctime_ns=fresh.st_ctime_ns,
        taken=prior.taken + result.taken,
        sha256=hasher.hexdigest(),
        context=FileState.encode(result.context),
        last=list(result.last) if result.last else None,
        waiting_days=[d.isoformat() for d in result.waiting_days],
        generation=prior.generation,
        first_days=result.first_days,
    )


def _complete_lines(fh, start: int, n: int) -> Iterator[bytes]:
    """The complete lines of the ``n`` bytes at ``start``, as ``bytes.splitlines(keepends=True)`` cuts them.

    Read a block at a time: what follows the last line end (a line still being
    written) is left out: ``transforms.collect.plan`` takes complete lines only.
    """
    fh.seek(start)
    left = n
    carry: list[bytes] = []  # a line longer than a block, so far
    while left > 0:
        block = fh.read(min(_CHUNK, left))
        if not block:
            break
        left -= len(block)
        end = block.rfind(b"\n") + 1
        if not end:
            carry.append(block)
            continue
        head = b"".join([*carry, block[:end]]) if carry else block[:end]
        carry = [block[end:]] if end < len(block) else []
        yield from head.splitlines(keepends=True)


def _pieces(fh, base: int, ranges: tuple[tuple[int, int], ...]) -> Iterator[bytes]:
    """The bytes of each (start, end) of the file from ``base``, in blocks."""
    for a, b in ranges:
        fh.seek(base + a)
        left = b - a
        while left > 0:
            block = fh.read(min(_CHUNK, left))
            if not block:
                raise OSError(
                    f"the file ended {left} bytes early (truncated while read); the next night reads it again"
                )
            left -= len(block)
            yield block


def _place_planned(target: Path, source: Source, line: str, seg: Planned, fh, base: int, mtime: float) -> int:
    """``_place`` for a planned segment, copied from the open source file by its ranges; 1 if written."""
    hasher = hashlib.sha256(seg.prefix)
    for block in _pieces(fh, base, seg.ranges):
        hasher.update(block)
    sha = hasher.hexdigest()
    path = target / segment_name(source.name, source.kind, seg, line, sha)
    if _is_plain_file(path) and sha256_file(path) == sha:
        return 0
    if _dry.get():
        return 1

    def write(tmp: Path) -> None:
        check = hashlib.sha256(seg.prefix)
        with open(tmp, "wb") as out:
            out.write(seg.prefix)
            for block in _pieces(fh, base, seg.ranges):
                check.update(block)
                out.write(block)
        if check.hexdigest() != sha:  # the source changed between the two reads: take nothing of it tonight
            raise OSError("the file changed while it was read; the next night reads it again")

    atomic_write(path, write)
    os.utime(path, (mtime, mtime))
    return 1


def _changed_under(prior: FileState, st: os.stat_result, fh, hasher) -> str | None:
    """Why the bytes taken before are no longer the file's start; None when they are (``hasher`` has hashed them)."""
    if (st.st_dev, st.st_ino) != (prior.dev, prior.ino):
        return "replaced by another file (a new inode)"
    if st.st_size < prior.taken:
        return f"truncated (now {st.st_size} bytes, {prior.taken} were taken)"
    fh.seek(0)
    _hash_into(fh, prior.taken, hasher)
    if hasher.hexdigest() != prior.sha256:
        return "rewritten (the bytes taken before changed)"
    return None


def _hash_into(fh, n: int, hasher) -> None:
    left = n
    while left > 0:
        block = fh.read(min(_CHUNK, left))
        if not block:
            break
        hasher.update(block)
        left -= len(block)


# --- a folder of files in a format kenang reads -------------------------------------------


def _take_file(
    settings: Settings,
    source: Source,
    f: Path,
    st: os.stat_result,
    state: SourceState,
    report: SourceReport,
    target: Path,
    wall_now: float,
) -> None:
    key = str(f)
    old = state.files.get(key)
    if old is not None and old.same_stat(st) and source.mode == "copy":
        return
    if _too_big(settings, report, f, st.st_size):
        return
    report.changed += 1
    with _open_read_only(f) as fh:
        fresh = os.fstat(fh.fileno())
        data = fh.read(_cap(settings) + 1)
    if _too_big(settings, report, f, len(data)):  # it grew since the look
        return
    sha = hashlib.sha256(data).hexdigest()
    if old is None or old.sha256 != sha:
        name = f.name.lstrip(".") or "file"
        mtime = min(fresh.st_mtime, wall_now - settings.quiet_period.total_seconds() - 1)
        report.written += _place(free_name(target, name, sha), data, mtime)
        report.bytes += len(data)
        state.bytes_taken += len(data)
        state.segments += 1
    state.files[key] = FileState(
        dev=fresh.st_dev,
        ino=fresh.st_ino,
        size=fresh.st_size,
        mtime_ns=fresh.st_mtime_ns,
        ctime_ns=fresh.st_ctime_ns,
        taken=len(data),
        sha256=sha,
    )
    # move: its copy is durable (``_place``), and the original goes only if it still holds the bytes copied
    if source.mode == "move" and not _dry.get() and remove_source(f, sha):
        report.moved += 1
        del state.files[key]


# --- Open WebUI's database ------------------------------------------------------------------

_CHAT_COLUMNS = ("id", "user_id", "title", "chat", "created_at", "updated_at")


def _take_chats(
    settings: Settings,
    source: Source,
    f: Path,
    st: os.stat_result,
    state: SourceState,
    report: SourceReport,
    target: Path,
    now: dt.datetime,
    wall_now: float,
) -> None:
    """Each chat updated since it was last taken, quiet, and of an eligible day: one Open WebUI export file."""
    report.changed += 1
    rows, waiting = _changed_chats(f, source, state, settings, now, wall_now)
    report.waiting_days += waiting
    mtime = wall_now - settings.quiet_period.total_seconds() - 1
    for row in rows:
        chat_id, updated = row["id"], row["updated_at"]
        data = json.dumps([row], ensure_ascii=False, sort_keys=True).encode("utf-8")
        name = f"webui-{source.name}-{_safe(chat_id)}-{updated}.json"
        report.written += _place(target / name, data, mtime)
        report.bytes += len(data)
        state.bytes_taken += len(data)
        state.segments += 1
        state.chats[chat_id] = updated
    state.files[str(f)] = FileState(
        dev=st.st_dev, ino=st.st_ino, size=st.st_size, mtime_ns=st.st_mtime_ns, ctime_ns=st.st_ctime_ns
    )


def _changed_chats(
    f: Path, source: Source, state: SourceState, settings: Settings, now: dt.datetime, wall_now: float
) -> tuple[list[dict], int]:
    """(the chat rows to take, how many changed chats wait for their day or quiet); one short read-only read."""
    uri = f"file:{_uri_path(f)}?mode=ro"
    if _wal_without_files(f):
        # A WAL database whose app is not running: even a read-only open would create its -wal and -shm files
        # beside it. With neither there, nothing writes it now, and it is read as immutable: nothing is created.
        uri += "&immutable=1"
    con = sqlite3.connect(uri, uri=True, timeout=2.0, isolation_level=None)
    try:
        con.execute("PRAGMA query_only = 1")
        columns = {r[1] for r in con.execute("PRAGMA table_info(chat)")}
        missing = [c for c in _CHAT_COLUMNS if c not in columns]
        if missing:
            raise sqlite3.DatabaseError(
                "not an Open WebUI database kenang knows: "
                + ("it has no chat table" if not columns else f"its chat table lacks {', '.join(missing)}")
            )
        where, args = "", []
        if source.webui_user:
            where, args = " WHERE user_id IN (SELECT id FROM user WHERE id = ? OR email = ?)", [source.webui_user] * 2
        # Short reads, each holding the read lock only while it runs: the list, then each chat.
        listed = con.execute(f"SELECT id, updated_at FROM chat{where}", args).fetchall()
        todo, waiting = [], 0
        quiet = settings.quiet_period.total_seconds()
        for chat_id, updated in listed:
            if not isinstance(updated, (int, float)) or state.chats.get(str(chat_id)) == updated:
                continue
            seconds = _seconds(updated)
            day = dt.datetime.fromtimestamp(seconds, settings.timezone).date()
            if wall_now - seconds < quiet or not day_is_eligible(day, now, settings.timezone, settings.grace_period):
                waiting += 1
                continue
            todo.append(chat_id)
        # One chat a statement: each holds the read lock only while one row (images and all) is read.
        rows = [
            row
            for chat_id in todo
            for row in con.execute(f"SELECT {', '.join(_CHAT_COLUMNS)} FROM chat WHERE id = ?", (chat_id,))
        ]
    finally:
        con.close()
    out = []
    for values in sorted(rows, key=lambda r: str(r[0])):
        row = dict(zip(_CHAT_COLUMNS, values, strict=False))
        row["id"] = str(row["id"])
        try:
            row["chat"] = json.loads(row["chat"]) if isinstance(row["chat"], (str, bytes)) else row["chat"]
        except ValueError:
            pass  # kept as text: the import quarantines it with its reason
        out.append(row)
    return out, waiting


def _wal_without_files(f: Path) -> bool:
    """A database in WAL mode (its header says so) with no -wal or -shm file beside it."""
    try:
        with _open_read_only(f) as fh:
            header = fh.read(20)
    except OSError:
        return False
    wal = len(header) == 20 and header.startswith(b"SQLite format 3\x00") and header[18] == 2
    return wal and not Path(f"{f}-wal").exists() and not Path(f"{f}-shm").exists()


def _seconds(value: float) -> float:
    """An epoch in seconds, from seconds, milliseconds or nanoseconds (Open WebUI has used more than one)."""
    v = float(value)
    while v > 1e11:
        v /= 1000
    return v


def _uri_path(f: Path) -> str:
    from urllib.parse import quote

    return quote(str(f.resolve()))


def _sqlite_words(exc: sqlite3.Error) -> str:
    text = str(exc)
    if "locked" in text or "busy" in text:
        return "the database is locked by a writer (the app is saving); nothing taken, the next night tries again"
    if "not a database" in text or "malformed" in text:
        return f"not a readable SQLite database ({text})"
    return text


# --- writing into active/ ---------------------------------------------------------------------


def _place(target: Path, data: bytes, mtime: float) -> int:
    """Write ``data`` as ``target`` (durable) unless those bytes are there already; 1 if written.

    Only a regular file there is read: a pipe or a link with the name is replaced, never opened.
    """
    if _is_plain_file(target) and sha256_file(target) == hashlib.sha256(data).hexdigest():
        return 0
    if _dry.get():
        return 1
    atomic_write_bytes(target, data)
    os.utime(target, (mtime, mtime))
    return 1


def _is_plain_file(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except FileNotFoundError:
        return False


def _open_read_only(path: Path):
    """A source file opened read-only, without touching its access time where the system allows.

    Only a regular file inside the source's root, never through a link (``open_regular``).
    """
    return open_regular(path, inside=_root.get(), noatime=True)


def _cap(settings: Settings) -> int:
    return int(settings.limits.source_file_mb * 2**20)


def _too_big(settings: Settings, report: SourceReport, f: Path, size: int) -> bool:
    """Whether a night would read more of ``f`` than ``limits.source_file_mb`` allows (then it is skipped, said)."""
    if size <= _cap(settings):
        return False
    limit = settings.limits.source_file_mb
    _skip(
        report,
        f,
        f"{size / 2**20:.1f} MiB to read tonight, over limits.source_file_mb={limit}; nothing read "
        "(raise limits.source_file_mb in kenang.yaml to take it)",
    )
    return True


def _skip(report: SourceReport, f: Path, why: str) -> None:
    report.skipped += 1
    report.notes.append(f"{shown_path(str(f))}: {why}")


def _safe(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in text)[:60] or "chat"


def _said(text: str) -> str:
    return redact_reason(text, 500)


def listing(settings: Settings) -> list[dict]:
    """``kenang sources``: each source, what its path matches now, and what the nights took from it."""
    out = []
    for source in settings.config.sources:
        state, _trouble = collected.read(settings.paths.warehouse, source.name)
        try:
            files = len(matches(source))
        except OSError:
            files = 0
        out.append(
            {
                "name": source.name,
                "kind": source.kind,
                "user": source.user or settings.default_user,
                "path": source.path,
                "mode": source.mode,
                "files": files,
                "files_known": len(state.files),
                "bytes_taken": state.bytes_taken,
                "written": state.segments,
                "last_collected": state.last_collected,
                "days_waiting": state.days_waiting,
                "waiting_quiet": state.waiting_quiet,
                "skipped": state.skipped,
                "errors": state.errors,
                "notes": state.notes,
            }
        )
    return out


def counts(reports: list[SourceReport]) -> dict:
    """The run report's collect line and each source's outcome."""
    return {
        "sources": len(reports),
        "files": sum(r.files for r in reports),
        "written": sum(r.written for r in reports),
        "bytes": sum(r.bytes for r in reports),
        "waiting_quiet": sum(r.waiting_quiet for r in reports),
        "skipped": sum(r.skipped for r in reports),
        "errors": sum(len(r.errors) for r in reports),
        "by_source": [r.as_dict() for r in reports],
    }
