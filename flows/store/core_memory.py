"""Core memory on disk: ``memory/<user>/MEMORY.md`` and ``USER.md``, the snapshot, and the event log.

The files are the person's: plain text, editable by hand. kenang reads them as they are
(``transforms.core_memory.parse``), reports what is wrong with a hand edit, and never
rewrites a file but for a write somebody asked for. Every write, from any path (CLI,
MCP, the nightly run, ``forget``), goes through ``write``:

- under the memory lock (``<home>/.kenang-memory.lock``, a ``flock``): two writers never
  interleave, and a write never waits for a nightly run;
- the rules of ``transforms.core_memory`` decide; a refused write changes nothing;
- the file is replaced atomically (temp file, fsync, rename);
- the change is logged in ``memory_events`` (when, user, action, source, the entry's
  sha256 before and after: never its text), and the user's snapshot is rewritten.

``snapshot/<user>.md`` is what an agent pastes into its system prompt (MCP
``memory_snapshot``): both files under their usage headers, then the latest days' one
line summaries within ``memory.snapshot_days_chars``. It is derived and rewritten after
every memory write and at the end of every run. A hand edit is served through the
rules (``transforms.core_memory.serve``: redacted, orders withheld, cut to the limit,
with a note saying what was trimmed).

A file is opened without following links (``O_NOFOLLOW``, its user folder too) and
read only when it is a regular file of at most ``FILE_BYTES``, in UTF-8. Anything else
(a link, a folder named MEMORY.md, a FIFO, an unreadable, oversized or malformed file)
is a ``FileState.error``: reported by ``memory show``, ``status`` and the run report,
left out of the snapshot, and never written over (a write is refused until the person
fixes it). It never raises. A snapshot that cannot be written (``snapshot/<user>.md`` is a
folder, the disk is full) never undoes a write: ``FileState.snapshot_error`` says so.
"""

from __future__ import annotations

import datetime as dt
import errno
import fcntl
import os
import secrets
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from dataclasses import replace as with_fields
from pathlib import Path

import pyarrow as pa

from flows.config import Settings
from flows.store import compact, ledger, warehouse
from flows.store.fsio import atomic_write_bytes
from schemas.tables import MEMORY_EVENTS
from transforms import core_memory as cm
from transforms.memory_file import ENTRY_COLUMNS, entry_line, entry_of, render_snapshot
from transforms.model import USER_ID_RE

SOURCES = ("cli", "mcp", "nightly", "forget")


@dataclass(frozen=True)
class FileState:
    target: str  # memory | user
    path: Path
    entries: list[str]
    usage: cm.Usage
    problems: list[str]
    error: str | None = None  # why the file could not be read; then entries is empty and the file is left alone
    snapshot_error: str | None = None  # after a write: why the user's snapshot could not be rewritten

    def as_dict(self) -> dict:
        """The file as ``memory show --json`` gives it: entries redacted, one that reads as an order withheld."""
        shown = [cm.safe_entry(e) for e in self.entries]
        return {
            "target": self.target,
            "file": self.path.name,
            "entries": [text if text is not None else f"(withheld: {why})" for text, why in shown],
            "chars": self.usage.chars,
            "limit": self.usage.limit,
            "percent": self.usage.percent,
            "problems": self.problems,
            "error": self.error,
        }


def path_of(settings: Settings, user: str, target: str) -> Path:
    if not USER_ID_RE.match(user):
        raise ValueError(f"{user!r} is not a valid user id")
    name, _ = cm.TARGETS[target]
    return settings.paths.memory / user / name


def read(settings: Settings, user: str, target: str) -> FileState:
    path = path_of(settings, user, target)
    limit = cm.TARGETS[target][1]
    text, error = _read_text(path)
    if error is not None:
        return FileState(target, path, [], cm.usage([], limit), [error], error)
    entries = cm.parse(text)
    return FileState(
        target, path, entries, cm.usage(entries, limit), cm.problems(entries, limit, settings.memory.max_notes)
    )


def _read_text(path: Path) -> tuple[str, str | None]:
    """(the file's text, None), or ("", why it cannot be used); a missing file is empty. Links are not followed."""
    name = f"{path.parent.name}/{path.name}"
    try:
        folder = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return "", None
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            kind = "a symbolic link" if path.parent.is_symlink() else "not a folder"
            return "", f"memory/{path.parent.name} is {kind}; kenang follows no links in memory/: make it a real folder"
        return "", f"memory/{path.parent.name} cannot be opened ({exc.strerror}): fix its permissions"
    try:
        try:
            fd = os.open(path.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=folder)
        except FileNotFoundError:
            return "", None
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                return "", f"{name} is a symbolic link, and kenang follows no links in memory/: replace it with a file"
            return "", f"{name} cannot be read ({exc.strerror}): fix its permissions, or move it away"
        try:
            st = os.fstat(fd)
            if stat.S_ISDIR(st.st_mode):
                return "", f"{name} is a folder, not a file: move it away (kenang then starts an empty one)"
            if not stat.S_ISREG(st.st_mode):
                return "", f"{name} is not a regular file: move it away (kenang then starts an empty one)"
            if st.st_size > cm.FILE_BYTES:
                return "", (
                    f"{name} is {st.st_size:,} bytes, over the {cm.FILE_BYTES:,} kenang reads (the file may "
                    f"hold {cm.TARGETS[_target(path.name)][1]:,} characters): shorten it by hand"
                )
            with os.fdopen(fd, "rb", closefd=False) as f:
                data = f.read(cm.FILE_BYTES + 1)
        except OSError as exc:
            return "", f"{name} cannot be read ({exc.strerror}): fix it, or move it away"
        finally:
            os.close(fd)
    finally:
        os.close(folder)
    if len(data) > cm.FILE_BYTES:
        return "", f"{name} is over the {cm.FILE_BYTES:,} bytes kenang reads: shorten it by hand"
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        return "", f"{name} is not valid UTF-8 (at byte {exc.start:,}): save it as UTF-8 in an editor, or move it away"


def _target(file_name: str) -> str:
    return next(t for t, (n, _) in cm.TARGETS.items() if n == file_name)


def errors(settings: Settings, user: str) -> list[str]:
    """Why each of the user's files cannot be used, one line each (naming the file); empty when both read."""
    return list(dict.fromkeys(state.error for t in cm.TARGETS if (state := read(settings, user, t)).error))


def users(settings: Settings) -> list[str]:
    root = settings.paths.memory
    return sorted(p.name for p in root.iterdir() if p.is_dir() and USER_ID_RE.match(p.name)) if root.is_dir() else []


@contextmanager
def memory_lock(settings: Settings) -> Iterator[None]:
    path = settings.paths.home / ".kenang-memory.lock"
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # memory writes are short: waiting is right
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def write(
    settings: Settings,
    user: str,
    target: str,
    action: str,
    *,
    text: str | None = None,
    old: str | None = None,
    source: str = "cli",
) -> FileState:
    """add (``text``), replace (``old`` -> ``text``) or remove (``old``) one entry; ``Refused`` changes nothing."""
    if target not in cm.TARGETS:
        raise cm.Refused(f"unknown memory file {target!r}", "Use memory (MEMORY.md) or user (USER.md)")
    if source not in SOURCES:
        raise ValueError(f"source must be one of {SOURCES}")
    limit = cm.TARGETS[target][1]
    with memory_lock(settings):
        state = read(settings, user, target)
        if state.error is not None:
            raise cm.Refused(state.error, "kenang changes nothing in it until it reads", "bad_file")
        before = after = None
        if action == "add":
            new = cm.add(state.entries, text or "", limit, settings.memory.max_notes)
            after = new[-1]
        elif action == "replace":
            i = cm.find(state.entries, old or "")
            new = cm.replace(state.entries, old or "", text or "", limit)
            before, after = state.entries[i], new[i]
        elif action == "remove":
            i = cm.find(state.entries, old or "")
            new = cm.remove(state.entries, old or "")
            before = state.entries[i]
        else:
            raise cm.Refused(f"unknown action {action!r}", "Use add, replace or remove")
        _save(settings, user, target, new)
        log_event(settings, user, target, action, source, before, after)
    return with_fields(read(settings, user, target), snapshot_error=refresh_snapshot(settings, user))


def drop_matching(settings: Settings, user: str, matches, source: str = "forget") -> int:
    """Remove every entry ``matches(entry)`` says to forget, from both files; returns how many went."""
    gone = 0
    with memory_lock(settings):
        for target in cm.TARGETS:
            state = read(settings, user, target)
            if state.error is not None:  # a file kenang cannot read is never written over
                continue
            keep = [e for e in state.entries if not matches(e)]
            for e in state.entries:
                if matches(e):
                    log_event(settings, user, target, "forget", source, e, None)
            if len(keep) != len(state.entries):
                _save(settings, user, target, keep)
                gone += len(state.entries) - len(keep)
    if gone:
        refresh_snapshot(settings, user)  # one that cannot be written now is by the next run, which reports it
    return gone


def _save(settings: Settings, user: str, target: str, entries: list[str]) -> None:
    path = path_of(settings, user, target)
    atomic_write_bytes(path, cm.render(entries).encode("utf-8"))


def log_event(
    settings: Settings, user: str, target: str, action: str, source: str, before: str | None, after: str | None
) -> None:
    now = dt.datetime.now(dt.UTC)
    event_id = f"{now:%Y%m%dT%H%M%S%fZ}-{secrets.token_hex(3)}"
    row = {
        "event_id": event_id,
        "at": now,
        "user_id": user,
        "target": target,
        "action": action,
        "source": source,
        "before_sha256": cm.entry_hash(before),
        "after_sha256": cm.entry_hash(after),
        "date": (day := now.astimezone(settings.timezone).date()),  # the home's local day, as every table's
    }
    path = warehouse.partition_file(settings.paths.warehouse, MEMORY_EVENTS, day, name=event_id)
    warehouse.write_file(path, pa.Table.from_pylist([row], schema=MEMORY_EVENTS.schema), MEMORY_EVENTS)


def snapshot_text(settings: Settings, user: str) -> str:
    """Both files under their usage headers, then the latest days within memory.snapshot_days_chars."""
    parts = []
    for target, label in (("memory", "MEMORY"), ("user", "USER")):
        state = read(settings, user, target)
        if state.error is not None:
            parts.append(f"{label} (not served: {state.error})")
            continue
        served = cm.serve(state.entries, state.usage.limit)
        body = cm.render(served.entries).strip() or "(empty)"
        parts.append(f"{state.usage.header(label)}\n{body}" + (f"\n{served.note}" if served.note else ""))
    budget = max(settings.memory.snapshot_days_chars, 1)
    rows = _latest_days(settings, user, budget)
    days = render_snapshot(user, [entry_of(r) for r in rows], budget)
    if settings.memory.snapshot_days_chars:
        parts.append(
            "RECENT DAYS\n" + days.split("\n", 2)[-1].strip() if rows else "RECENT DAYS\n(nothing remembered yet)"
        )
    return "\n\n".join(parts) + "\n"


def _latest_days(settings: Settings, user: str, budget: int) -> list[dict]:
    """The user's summaries of the newest months whose lines fill ``budget`` characters (every month if they do
    not): what ``render_snapshot`` shows, read without the years before them."""
    wh = settings.paths.warehouse
    known = ledger.user_months(wh)  # the ledger's months (a partition is written only for a day it holds), not
    # each month's copy or partitions looked for: a month without summaries reads as empty
    if not USER_ID_RE.match(user):
        months: list[str] = []
    elif known is not None:
        months = [m for u, m in known if u == user]
    else:
        months = [m for m, _ in compact.user_months(wh, "daily_summaries", user)]
    rows: list[dict] = []
    used = 0
    for month in reversed(months):
        got = compact.read_user(wh, "daily_summaries", user, columns=ENTRY_COLUMNS, months=[month]).to_pylist()
        rows = got + rows
        used += sum(len(entry_line(entry_of(r), link=False)) + 1 for r in got)
        if used > budget:
            break
    return rows


def refresh_snapshot(settings: Settings, user: str) -> str | None:
    """``write_snapshot``; None, or why it could not be written and what to do (one line)."""
    try:
        write_snapshot(settings, user)
    except OSError as exc:
        return (
            f"snapshot/{user}.md was not rewritten ({exc.strerror or exc}): fix or move it away; the next "
            "memory write or nightly run writes it"
        )
    return None


def write_snapshot(settings: Settings, user: str) -> Path:
    path = settings.paths.snapshots / f"{user}.md"
    data = snapshot_text(settings, user).encode("utf-8")
    if not path.is_file() or path.read_bytes() != data:
        atomic_write_bytes(path, data)
    return path
