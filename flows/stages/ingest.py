"""Ingest: look at ``active/`` and sort every file into ready, waiting or rejected.

Read-only: this stage never moves or writes anything, so ``--dry-run`` is just this
stage plus a report.

- Hidden names (a leading dot: editor swap files, a tool's own state folders,
  kenang's temporaries) are *skipped*, never touched, and listed (``skipped``) so the
  run report and ``kenang status`` can say so. A dot-folder is not walked.
- A file modified within the quiet period is *waiting*, whatever its content: it may
  still be being written, so it is not even parsed.
- A pipe, socket or device is *skipped* as ``not_regular`` and left in place: it
  cannot be copied and verified, so it cannot be moved safely either.
- A quiet file that cannot be read (see ``docs/formats.md``) is *rejected*, with the
  ParseError kind and reason, for the quarantine stage. So is one whose times are not
  sane (``bad_timestamp``: before 1970, or more than a day past ``--now``), and one
  that meets any other error while it is read, parsed or dated: no single file can
  stop the night.
- A quiet, readable file whose day is not yet eligible is *waiting*.
- Everything else is *ready* for the archive.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import logging
import os
import stat
from dataclasses import dataclass, field, replace
from pathlib import Path

from flows.config import Settings
from flows.stages import pool
from flows.store.fsio import open_regular
from transforms.collect import segment_of
from transforms.days import check_day, check_times, day_is_eligible, eligible_from, file_is_quiet
from transforms.errors import ParseError
from transforms.imports import (
    Derived,
    Export,
    conversation_transcripts,
    detect,
    formats,
    parse_export,
    undated_days,
)
from transforms.model import ResolvedSession, Session
from transforms.parse import parse_transcript
from transforms.redact import printable_name, redact_file_name, redact_reason
from transforms.resolve import active_folder_user, folder_user, resolve
from transforms.segments import read_segment

log = logging.getLogger("kenang")


@dataclass(frozen=True)
class Candidate:
    path: Path
    relpath: str  # relative to active/, posix separators; a name holding a secret shown as its hash
    size: int
    mtime: float

    @property
    def name(self) -> str:
        """The file's name as kenang archives and records it (``relpath``'s last part)."""
        return self.relpath.rsplit("/", 1)[-1]

    @property
    def folder(self) -> str | None:
        """The first folder under active/, which names the user."""
        head, sep, _rest = self.relpath.partition("/")
        return head if sep else None


@dataclass(frozen=True)
class Ready:
    cand: Candidate
    # its session's messages are left out when a pool worker read it (``classify``), and a segment's always
    resolved: ResolvedSession
    sha256: str
    messages: int = 0


@dataclass(frozen=True)
class Waiting:
    cand: Candidate
    why: str  # 'not_quiet' | 'not_eligible'
    day: dt.date | None = None
    user_id: str | None = None
    eligible_at: dt.datetime | None = None


#: The longest reason kept (the quarantine table, the reason file, the run's counts).
REASON_CHARS = 1000


@dataclass(frozen=True)
class Rejected:
    """A file kenang cannot take, and why. The reason may quote the file, so it passes the redaction gate
    (``transforms.redact.redact_reason``: redacted whole, then cut) here, where every rejection is made."""

    cand: Candidate
    kind: str
    reason: str
    user_id: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "reason", redact_reason(self.reason, REASON_CHARS))


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
class Skipped:
    """An entry ingest leaves alone on purpose, and says so (run report, status)."""

    relpath: str
    why: str  # 'hidden' (a dot-file) | 'hidden_folder' (a dot-folder, never walked) | 'not_regular'


#: What ``classify`` makes of one file (a ready transcript comes with its session, None when left in the worker).
Fate = tuple[Ready, Session | None] | ReadyExport | Waiting | Skipped | Rejected


@dataclass(frozen=True)
class IngestResult:
    ready: tuple[Ready, ...] = ()
    waiting: tuple[Waiting, ...] = ()
    rejected: tuple[Rejected, ...] = ()
    hidden: int = 0
    parsed: dict[str, Session] = field(default_factory=dict)  # sha256 -> session, reused by load
    exports: tuple[ReadyExport, ...] = ()
    skipped: tuple[Skipped, ...] = ()

    @property
    def bytes_to_archive(self) -> int:
        """What archiving tonight writes: the ready files, each export and its day transcripts."""
        return sum(r.cand.size for r in self.ready) + sum(
            e.cand.size + sum(len(d.data) for d in e.derived) for e in self.exports
        )

    def skipped_counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for s in self.skipped:
            out[s.why] = out.get(s.why, 0) + 1
        return out


def scan(settings: Settings, now: dt.datetime, wall_now: float) -> IngestResult:
    """Classify every file under active/; nothing one file does can stop the scan.

    With many files, or big ones (``pool.HEAVY_BYTES`` in all: an agent's huge log), they
    are read, parsed and dated on every core (``classify`` in the process pool), and the
    flow's process never holds a huge file's parse. A worker then hands back what the
    archive needs, not the parsed messages (sending those back costs more than the load
    parsing them again, on every core, from the archive). With few small files, they are
    read here and their sessions kept for the load (``parsed``).
    """
    ready: list[Ready] = []
    exports: list[ReadyExport] = []
    waiting: list[Waiting] = []
    rejected: list[Rejected] = []
    skipped: list[Skipped] = []
    parsed: dict[str, Session] = {}
    entries = list(walk(settings.paths.active))
    files = [(cand, st) for cand, st, why in entries if why is None]
    nbytes = sum(st.st_size for _, st in files)
    wide = (len(files) >= pool.MIN_ITEMS or nbytes >= pool.HEAVY_BYTES) and pool.workers() > 1
    classified = pool.pure_imap(
        classify, [(settings, cand, st, now, wall_now, wide) for cand, st in files], chunksize=32, nbytes=nbytes
    )
    for cand, _st, why in entries:
        if why is not None:
            skipped.append(Skipped(cand.relpath, why))
            continue
        got = next(classified)
        if isinstance(got, pool.Failed):  # the worker itself failed on it
            got = (
                Rejected(cand, "unreadable", f"kenang could not read it ({got})", _folder_user_or_none(cand)),
                got.kind,
            )
        item, trouble = got
        if trouble is not None:
            log.warning("ingest could not read %s: %s", cand.relpath, trouble)
        if item is None:
            continue  # removed while we looked: nothing to do, nothing lost
        if isinstance(item, tuple):  # a ready transcript and its parsed session (None: left in the worker)
            r, session = item
            if session is not None:
                parsed[r.sha256] = session
            ready.append(r)
        elif isinstance(item, ReadyExport):
            exports.append(item)
        elif isinstance(item, Waiting):
            waiting.append(item)
        elif isinstance(item, Skipped):
            skipped.append(item)
        else:
            rejected.append(item)
    hidden = sum(s.why in ("hidden", "hidden_folder") for s in skipped)
    return IngestResult(tuple(ready), tuple(waiting), tuple(rejected), hidden, parsed, tuple(exports), tuple(skipped))


def classify(args) -> tuple[Fate | None, str | None]:
    """One file's fate, and the name of an unexpected error met on the way (to log); writes nothing.

    ``args``: (settings, candidate, its lstat, now, wall clock, slim). The fate is what
    ``_classify`` says, a ``Rejected`` for a file it cannot read, or None for a file
    removed while kenang looked. ``slim``: a ready file's messages are left out (its
    ``Ready`` keeps their count), and its session is None.
    """
    settings, cand, st, now, wall_now, slim = args
    trouble = None
    try:
        item = _classify(settings, cand, st, now, wall_now)
    except ParseError as exc:
        item = Rejected(cand, exc.kind, exc.reason, _folder_user_or_none(cand))
    except FileNotFoundError:
        return None, None
    except OverflowError as exc:
        item = Rejected(
            cand, "bad_timestamp", f"holds a date kenang cannot represent ({exc})", _folder_user_or_none(cand)
        )
    except Exception as exc:  # noqa: BLE001 - one file must never stop the night
        trouble = type(exc).__name__
        item = Rejected(
            cand, "unreadable", f"kenang could not read it ({type(exc).__name__}: {exc})", _folder_user_or_none(cand)
        )
    if isinstance(item, tuple) and slim and item[1] is not None:
        r, session = item
        item = (replace(r, resolved=replace(r.resolved, session=replace(session, messages=()))), None)
    return item, trouble


def _classify(settings: Settings, cand: Candidate, st: os.stat_result, now: dt.datetime, wall_now: float):
    """One file's fate: (Ready, session), ReadyExport, Waiting, Skipped or Rejected; ParseError when unreadable."""
    if cand.mtime > wall_now + FUTURE_SLACK_S:  # it would never be quiet: a clock that was wrong, or a forged time
        stamp = dt.datetime.fromtimestamp(cand.mtime, dt.UTC).isoformat() if cand.mtime < 2**37 else "far ahead"
        raise ParseError(f"its modification time ({stamp}) is more than a day in the future", kind="bad_timestamp")
    if not file_is_quiet(cand.mtime, wall_now, settings.quiet_period):
        return Waiting(cand, "not_quiet")
    if stat.S_ISLNK(st.st_mode):
        target = os.readlink(cand.path)
        return Rejected(cand, "symlink", f"is a symbolic link (to {target}); kenang archives only regular files")
    if not stat.S_ISREG(st.st_mode):
        # A pipe, socket or device cannot be copied and verified, so it is not moved either.
        return Skipped(cand.relpath, "not_regular")
    if cand.size > settings.max_file_bytes:
        limit = settings.limits.max_file_mb
        return Rejected(cand, "too_large", f"is {cand.size / 2**20:.1f} MiB, over limits.max_file_mb={limit}")
    with open_regular(cand.path) as fh:  # what was looked at above, never a link or pipe put there since
        data = fh.read()
    if (segment := segment_of(cand.path.name)) is not None:
        return _classify_segment(settings, cand, data, segment[1], now)
    fmt = detect(data) if cand.path.suffix.lower() in IMPORT_SUFFIXES else None
    if fmt is not None:
        return expand_export(settings, cand, data, fmt, now)
    if cand.path.suffix.lower() == ".json":
        raise not_an_export(data)
    session = parse_transcript(cand.path.name, data, tz=settings.timezone)
    check_times((m.ts for m in session.messages), now)
    rs = resolve(
        session,
        file_name=cand.path.name,
        folder=cand.folder,
        default_user=settings.default_user,
        tz=settings.timezone,
        mtime=cand.mtime,
    )
    check_day(rs.day, now, {"timestamp": "first timestamp", "filename": "file name"}.get(rs.day_source, rs.day_source))
    if not day_is_eligible(rs.day, now, settings.timezone, settings.grace_period):
        at = eligible_from(rs.day, settings.timezone, settings.grace_period)
        return Waiting(cand, "not_eligible", rs.day, rs.user_id, at)
    return Ready(cand, rs, hashlib.sha256(data).hexdigest(), len(session.messages)), session


def _classify_segment(settings: Settings, cand: Candidate, data: bytes, day: dt.date, now: dt.datetime):
    """A segment the collector wrote (``transforms.collect``): archived as it is, on the day its name gives.

    It is read through the format's importer (``transforms.segments``) to count and check
    it; the load reads it again from the archive, so no session is kept for it here.
    """
    user = folder_user(cand.folder) or settings.default_user
    sessions = read_segment(cand.path.name, data, tz=settings.timezone, user_id=user)
    check_times((m.ts for s in sessions for m in s.messages), now)
    check_day(day, now, "file name")
    if not day_is_eligible(day, now, settings.timezone, settings.grace_period):
        return Waiting(cand, "not_eligible", day, user, eligible_from(day, settings.timezone, settings.grace_period))
    first = sessions[0] if sessions else Session(None, user, None, "segment", ())
    rs = resolve(
        first,
        file_name=cand.path.name,
        folder=cand.folder,
        default_user=settings.default_user,
        tz=settings.timezone,
        mtime=cand.mtime,
        fixed_day=day,
    )
    count = sum(len(s.messages) for s in sessions)
    # the load reads the segment again from the archive: its messages are not kept (a huge log's first session
    # would otherwise ride along with its Ready until the night ends)
    rs = replace(rs, session=replace(first, messages=()))
    return Ready(cand, rs, hashlib.sha256(data).hexdigest(), count), None


IMPORT_SUFFIXES = (".json", ".jsonl", ".md", ".markdown")
#: A file modified more than this far past the wall clock is a ``bad_timestamp``: it would never be quiet.
FUTURE_SLACK_S = 86400


def not_an_export(data: bytes) -> ParseError:
    """Why a .json file no importer claims is refused: broken JSON (where it breaks), or JSON that is no chat export.

    ``kenang import`` says the same of a file it skips."""
    try:
        json.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        return ParseError(f"not valid UTF-8 at byte {exc.start}", kind="bad_utf8")
    except ValueError as exc:
        where = f" at line {exc.lineno}, column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else ""
        return ParseError(f"broken JSON{where}", kind="bad_json")
    except RecursionError:
        return ParseError("JSON nested too deeply", kind="bad_json")
    return ParseError(
        f"valid JSON, but not a chat export kenang can import (tried: {', '.join(formats())})", kind="unknown_format"
    )


def expand_export(
    settings: Settings, cand: Candidate, data: bytes, fmt: str, now: dt.datetime
) -> ReadyExport | Waiting:
    """Parse an export as ``fmt`` (what ``detect`` named) into day transcripts; it waits until every day is eligible.

    The owner is the file's folder under active/ (else the default user). Messages with
    no time at all (ShareGPT, a headerless aider log) are dated by the file's mtime,
    which ``kenang import --date`` sets.
    """
    tz = settings.timezone
    user = folder_user(cand.folder) or settings.default_user
    stamp = dt.datetime.fromtimestamp(cand.mtime, tz)
    sha = hashlib.sha256(data).hexdigest()
    export, per_conversation = export_transcripts(data, fmt, tz=tz, user=user, stamp=stamp, now=now)
    derived = [d for ds in per_conversation for d in ds]
    last = max(d.day for d in derived)
    if not day_is_eligible(last, now, tz, settings.grace_period):
        return Waiting(cand, "not_eligible", last, user, eligible_from(last, tz, settings.grace_period))
    return ReadyExport(cand, sha, export.format, user, len(export.conversations), tuple(derived), export.notes)


def export_transcripts(
    data: bytes, fmt: str, *, tz: dt.tzinfo, user: str, stamp: dt.datetime, now: dt.datetime
) -> tuple[Export, list[list[Derived]]]:
    """An export parsed as ``fmt`` and cut into day transcripts, per conversation, every time checked.

    The nightly ingest and ``kenang import --dry-run`` both read exports through here.
    Messages with no time take their conversation's nearest dated message, else the
    nearest dated conversation's day, else ``stamp`` (the file's mtime, or ``--date``'s
    noon): ``transforms.imports.undated_days``.
    """
    export = parse_export(data, fmt=fmt, tz=tz, default_ts=stamp)
    check_times((m.ts for c in export.conversations for m in c.messages), now)
    fallbacks = undated_days(export.conversations, tz, stamp.date())
    per_conversation = [
        conversation_transcripts(conv, export.format, tz=tz, user_id=user, undated_day=day)
        for conv, (day, _by) in zip(export.conversations, fallbacks, strict=True)
    ]
    if not any(per_conversation):
        raise ParseError(f"a {export.format} export with no messages", kind="no_messages")
    for d in (d for ds in per_conversation for d in ds):
        check_day(d.day, now, "messages")
    return export, per_conversation


def _folder_user_or_none(cand: Candidate) -> str | None:
    """The folder's user for a quarantine row, or None when the folder is no valid user id."""
    return active_folder_user(cand.folder) if cand.folder else None


def shown_path(relpath: str) -> str:
    """A path as kenang records and prints it: a name holding a secret becomes a stable
    hash, and one that is no UTF-8 or holds control characters is escaped (``printable_name``)."""
    return "/".join(redact_file_name(printable_name(part)) for part in relpath.split("/"))


def walk(root: Path):
    """Yield (Candidate, lstat, None) for every entry that is not a directory, and
    (Candidate, None, why) for each hidden name: a dot-file, or a dot-folder, which is
    not walked (editor swap files, a tool's own state, kenang's temporaries)."""
    if not root.is_dir():
        return
    stack = [root]
    while stack:
        d = stack.pop()
        try:
            entries = sorted(os.scandir(d), key=lambda e: e.name)
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError as exc:  # an unreadable folder is counted and reported, never a reason to stop
            shown = shown_path(d.relative_to(root).as_posix())
            log.warning("ingest cannot list %s: %s", shown, exc.strerror)
            yield Candidate(d, shown + "/", 0, 0.0), None, "unreadable_folder"
            continue
        for e in entries:
            path = Path(e.path)
            rel = shown_path(path.relative_to(root).as_posix())
            try:
                st = e.stat(follow_symlinks=False)
            except FileNotFoundError:
                continue
            if e.name.startswith("."):
                why = "hidden_folder" if stat.S_ISDIR(st.st_mode) else "hidden"
                yield Candidate(path, rel + ("/" if why == "hidden_folder" else ""), 0, st.st_mtime), None, why
                continue
            if stat.S_ISDIR(st.st_mode):
                stack.append(path)
                continue
            yield Candidate(path, rel, st.st_size, st.st_mtime), st, None
