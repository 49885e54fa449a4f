"""What kenang remembers of each source: per file, how far it has taken it, and the night's outcome.

One JSON file per source, ``<warehouse>/_sources/<name>.json``, replaced atomically
after the source's segments are durable in ``active/``. Losing it loses nothing: the
next night reads every file whole again, and segments are named by their bytes, so
whatever was taken before is recognised (in ``active/`` or in the archive) and
nothing is counted twice.

A file's entry (``FileState``): device and inode, size, mtime and ctime when last
looked at, ``taken`` (bytes taken from its start) and the sha256 of those bytes, the
opening record in force at that offset (``context``, base64), the (session, day)
the taking ended in (``last``), and the days seen but not yet eligible. An Open
WebUI database keeps each chat's ``updated_at`` taken instead; a folder file keeps
the sha256 of the whole file taken.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import os
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from flows.store.fsio import atomic_write_bytes

FOLDER = "_sources"


@dataclass
class FileState:
    dev: int = 0
    ino: int = 0
    size: int = 0
    mtime_ns: int = 0
    ctime_ns: int = 0  # changes with every write, even one whose mtime was set back
    taken: int = 0
    sha256: str = ""  # of the bytes taken (line kinds), or of the whole file taken (folder)
    context: str | None = None  # base64 of the opening record in force at ``taken``
    last: list | None = None  # [session, ISO day]
    waiting_days: list[str] = field(default_factory=list)
    generation: int = 0  # how many times the file was read again whole (rewritten): names its segments' lineage
    first_days: dict[str, str] = field(default_factory=dict)  # session -> ISO day it began in this file

    def same_stat(self, st: os.stat_result) -> bool:
        return (self.dev, self.ino, self.size, self.mtime_ns, self.ctime_ns) == (
            st.st_dev,
            st.st_ino,
            st.st_size,
            st.st_mtime_ns,
            st.st_ctime_ns,
        )

    def context_bytes(self) -> bytes | None:
        return None if self.context is None else base64.b64decode(self.context)

    @staticmethod
    def encode(context: bytes | None) -> str | None:
        return None if context is None else base64.b64encode(context).decode("ascii")


@dataclass
class SourceState:
    files: dict[str, FileState] = field(default_factory=dict)  # absolute path -> its state
    chats: dict[str, int] = field(default_factory=dict)  # open_webui_db: chat id -> updated_at taken
    bytes_taken: int = 0  # in all nights
    segments: int = 0  # files written into active/ in all nights
    last_collected: str | None = None  # ISO time of the last night that looked
    errors: list[str] = field(default_factory=list)  # the last night's
    notes: list[str] = field(default_factory=list)  # the last night's (files re-read whole, ...)
    matched: int = 0  # files the path matched on the last night
    days_waiting: int = 0  # days (or chats) seen on the last night whose grace period had not passed
    waiting_quiet: int = 0  # files still being written on the last night
    skipped: int = 0  # links, pipes, devices and files too big, not read on the last night (its notes say why)


def path(warehouse: Path, name: str) -> Path:
    return warehouse / FOLDER / f"{name}.json"


def read(warehouse: Path, name: str) -> tuple[SourceState, str | None]:
    """(the source's state, or a new one; what was wrong with the file when it could not be read).

    Keys kenang does not know are ignored (a newer kenang's). A file that cannot be read
    at all is kept beside as ``<name>.json.bad`` and the files are read whole again:
    what was taken before is recognised by its bytes, and the run report says so.
    """
    p = path(warehouse, name)
    try:
        raw = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return SourceState(), None
    except (OSError, ValueError) as exc:
        return SourceState(), _set_aside(p, exc)
    try:
        known = {f.name for f in fields(FileState)}
        files = {k: FileState(**{a: b for a, b in v.items() if a in known}) for k, v in raw.get("files", {}).items()}
        top = {f.name for f in fields(SourceState)} - {"files"}
        return SourceState(files=files, **{k: v for k, v in raw.items() if k in top}), None
    except (AttributeError, TypeError) as exc:
        return SourceState(), _set_aside(p, exc)


def _set_aside(p: Path, exc: Exception) -> str:
    try:
        os.replace(p, p.with_name(p.name + ".bad"))
    except OSError:
        pass
    return (
        f"the source's state ({p.name}) could not be read ({type(exc).__name__}); it is kept as {p.name}.bad "
        "and every file is read whole again (what was taken before is recognised by its bytes)"
    )


def write(warehouse: Path, name: str, state: SourceState) -> None:
    data = asdict(state)
    atomic_write_bytes(path(warehouse, name), json.dumps(data, ensure_ascii=False, sort_keys=True).encode("utf-8"))


def now_iso() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
