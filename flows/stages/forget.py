"""``kenang forget``: make kenang truly forget a phrase, a session, a day, or everything before a date.

It deletes; it does not hide. Under the run lock:

1. **plan** (``--dry-run`` stops here): the days, sessions and messages that hold what
   is forgotten (a phrase: in a message, or in a session id, agent or file name), the
   core memory entries and candidates, the quarantined files whose name, bytes or
   reason hold the phrase, and with ``--purge`` the archived originals. A phrase's
   originals are found by reading the user's whole archive (names and bytes), never
   through the tables, which an earlier forget of the same phrase already scrubbed: a
   ``--purge`` after a plain forget finds every one;
2. a **tombstone** records what was forgotten, by keyed hash, never in clear text
   (``transforms.forget``); every later load, summary, index, import and backfill
   honours it;
3. with ``--purge``, the archived originals go too, and so do the quarantined files
   and their reason files, each logged in ``purge_log`` (under its name renamed as
   ``transforms.forget`` renames one, when the name holds the phrase); without it they
   stay byte-exact and read-only (the archive keeps what was said, the tables and the
   index no longer do), and only the quarantine reasons are scrubbed;
4. the core memory entries and candidates that hold it are removed;
5. each affected day is re-derived from the archive with the tombstone applied, then
   re-summarized and re-indexed, so its summary, its ``.summary.md``, its chunks and
   MEMORY_INDEX no longer hold it; the snapshots and the catalog are rebuilt;
6. the records that are the only copy of what they hold (``runs``, ``quarantine``,
   ``purge_log``) have the phrase scrubbed from their text and renamed in their names.

This runs without Prefect on purpose: a flow's parameters are stored by the Prefect
server, and the phrase must not be. The ``runs`` table gets a row with counts only.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import re
import unicodedata
from dataclasses import dataclass, field

import pyarrow as pa

from flows.config import Settings
from flows.models.embed import configured_id, make_embedder
from flows.models.llm import make_summarizer
from flows.stages import candidates, catalog, load, memory_file, open_items, recall_index, summarize
from flows.stages import quarantine as quarantine_stage
from flows.stages.plan import ledger_notes
from flows.store import (
    archive_files,
    compact,
    core_memory,
    faults,
    ledger,
    mount,
    recall_pack,
    remote,
    tombstones,
    warehouse,
)
from flows.store.fsio import atomic_write_bytes
from flows.store.ledger import ArchivedDay, DayKey, RunRecord
from flows.store.lock import run_lock
from schemas.tables import MESSAGES, PURGE_LOG, QUARANTINE, RUNS, SESSIONS
from transforms.errors import ArchiveError, UsageError
from transforms.forget import Forgetting, Tombstone, id_digest, phrase_digest, words
from transforms.resolve import active_folder_user


@dataclass
class Plan:
    user: str
    kind: str
    purge: bool
    tombstone: Tombstone
    days: list[dt.date] = field(default_factory=list)
    sessions: int = 0
    messages: int = 0
    memory_entries: int = 0
    candidates: int = 0
    archive_files: list[tuple[dt.date | None, str]] = field(default_factory=list)  # (day, archive path)
    quarantine_files: list[str] = field(default_factory=list)  # quarantine-relative paths that hold the phrase
    words: list[str] | None = field(default=None, repr=False)  # kept in memory only, to hash with the home's key
    session: str | None = field(default=None, repr=False)

    def as_dict(self) -> dict:
        return {
            "user": self.user,
            "kind": self.kind,
            "purge": self.purge,
            "days": [d.isoformat() for d in self.days],
            "sessions": self.sessions,
            "messages": self.messages,
            "memory_entries": self.memory_entries,
            "candidates": self.candidates,
            "archive_files": [p for _, p in self.archive_files],
            "quarantine_files": list(self.quarantine_files),
        }


def make_plan(
    settings: Settings,
    user: str,
    *,
    text: str | None = None,
    session: str | None = None,
    day: dt.date | None = None,
    before: dt.date | None = None,
    purge: bool = False,
) -> Plan:
    given = [x is not None for x in (text, session, day, before)]
    if sum(given) != 1:
        raise UsageError("give exactly one of --text, --session, --day or --before")
    key = tombstones.key(settings) or b"\0" * 32  # the real key is made when the tombstone is written
    if text is not None:
        ws = words(text)
        if not ws:
            raise UsageError("--text: give the words to forget")
        t = Tombstone("", user, "text", phrase_digest(key, ws), len(ws), None, purge)
    elif session is not None:
        t = Tombstone("", user, "session", id_digest(key, session), None, None, purge)
    else:
        t = Tombstone("", user, "day" if day else "before", None, None, day or before, purge)
    plan = Plan(user, t.kind, purge, t, words=words(text) if text is not None else None, session=session)
    forgetting = Forgetting.of(key, [t])
    wh = settings.paths.warehouse
    sessions = warehouse.read(wh, SESSIONS, "user_id = ?", [user]).to_pylist()
    if t.kind in ("day", "before"):
        hit = [s for s in sessions if forgetting.drops_day(s["date"])]
        plan.days = sorted(
            {s["date"] for s in hit} | {d for (u, d) in ledger.read_days(wh) if u == user and forgetting.drops_day(d)}
        )
        plan.sessions = len(hit)
        plan.messages = sum(s["message_count"] for s in hit)
    elif t.kind == "session":
        hit = [s for s in sessions if s["session_id"] == session]
        plan.days = sorted({s["date"] for s in hit})
        plan.sessions = len(hit)
        plan.messages = sum(s["message_count"] for s in hit)
    else:
        longest = max(ws, key=len)
        # the longest word narrows the search; a text with other than ASCII in it is read whole (its letters may
        # be full-width, decomposed or ligatures, the same words once normalised)
        rows = warehouse.read(
            wh,
            MESSAGES,
            "user_id = ? AND (contains(lower(content), ?) OR regexp_matches(content, '[^\\x01-\\x7f]'))",
            [user, longest],
        ).to_pylist()
        hit_msgs = [m for m in rows if forgetting.mentions(m["content"])]
        named = [s for s in sessions if _names_session(forgetting, s)]
        plan.days = sorted({m["date"] for m in hit_msgs} | {s["date"] for s in named})
        plan.messages = len(hit_msgs)
        plan.sessions = len(
            {(m["date"], m["session_id"]) for m in hit_msgs} | {(s["date"], s["session_id"]) for s in named}
        )
        plan.quarantine_files = quarantined(settings, user, forgetting, longest)
    plan.memory_entries = sum(
        1
        for target in ("memory", "user")
        for e in core_memory.read(settings, user, target).entries
        if _mentions(forgetting, t, e)
    )
    plan.candidates = sum(
        1 for c in candidates.read_all(settings) if c["user_id"] == user and _candidate_hit(forgetting, t, c)
    )
    if purge:
        plan.archive_files = _archive_files(
            settings,
            user,
            forgetting,
            t,
            plan.days,
            sessions,
            session,
            max(plan.words, key=len) if plan.words else None,
        )
        plan.days = sorted(set(plan.days) | {d for d, _ in plan.archive_files if d is not None})
    if t.kind == "session" and not (plan.sessions or plan.archive_files) and not _recorded(settings, t):
        # an id is exact, unlike a phrase: one that names nothing is a typo, and its tombstone would guard nothing
        raise UsageError(
            f"no session of {user} has the id {session!r}; nothing was changed "
            '(`kenang sql "SELECT DISTINCT session_id FROM sessions"` lists them)'
        )
    return plan


def _recorded(settings: Settings, t: Tombstone) -> bool:
    """Whether the user already has this tombstone (a session id forgotten before): forgetting again is no mistake."""
    return any((r.user_id, r.kind, r.digest) == (t.user_id, t.kind, t.digest) for r in tombstones.read(settings))


def _names_session(f: Forgetting, s: dict) -> bool:
    """Whether a session row's id, agent, file names or declared people hold the phrase."""
    return (
        f.names(s["session_id"])
        or f.names(s["agent"])
        or any(f.names_path(v) for v in (s["archive_path"], *(s["archive_paths"] or ())))
        or any(f.mentions(p) for p in s.get("people") or ())
    )


def quarantined(settings: Settings, user: str, f: Forgetting, hint: str | None = None) -> list[str]:
    """The quarantined files (quarantine-relative) of ``user``, or of no known user, whose name, link target or
    bytes hold a phrase. Their reasons are kenang's words about them: a phrase in one is scrubbed, never a cause
    to delete the file (``owned_quarantine``, ``_scrub_reasons``)."""
    root = settings.paths.quarantine
    out = []
    for rel, original in owned_quarantine(settings, user):
        path = root / rel
        if (
            f.names_path(original or rel)
            or (path.is_symlink() and f.names(os.readlink(path)))
            or (not path.is_symlink() and _holds(path, f, hint))
        ):
            out.append(rel)
    return out


def owned_quarantine(settings: Settings, user: str) -> list[tuple[str, str | None]]:
    """(quarantine-relative path, original path under active/) of each quarantined file that is ``user``'s.

    A file is its row's user's; without one, the user its first folder under active/ names (the
    default user's when it had none); a file no one can tell the owner of is everyone's."""
    rows = {r["path"]: r for r in warehouse.read(settings.paths.warehouse, QUARANTINE).to_pylist()}
    out = []
    for rel in quarantine_stage.quarantined_files(settings):
        row = rows.get(rel) or {}
        original = row.get("original_path") or _sidecar(settings, rel).get("original_path")
        original = original if isinstance(original, str) else None
        if _quarantine_owner(settings, row.get("user_id"), original) in (user, None):
            out.append((rel, original))
    return out


def _quarantine_owner(settings: Settings, user_id: str | None, original: str | None) -> str | None:
    if user_id:
        return user_id
    if original is None:
        return None
    head, sep, _ = original.partition("/")
    if not sep:
        return settings.default_user
    return active_folder_user(head)


def _sidecar(settings: Settings, rel: str) -> dict:
    try:
        info = json.loads((settings.paths.quarantine / (rel + quarantine_stage.SIDECAR)).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return info if isinstance(info, dict) else {}


_BLOCK, _OVERLAP = 4 << 20, 64 << 10


def _holds(path, f: Forgetting, hint: str | None = None) -> bool:
    """Whether a file's bytes hold a phrase: read in blocks (a quarantined file may be huge), as UTF-8 and as
    Latin-1 (a quarantined file is often no UTF-8), and with JSON's escapes read as what they stand for
    (``\\n`` between two words, ``\\u00e9``), in a broken JSON line too (a quarantined file often is one).

    ``hint``: one of the phrase's words (held in memory only); a block without it is not searched word by word."""

    def search(text: str) -> bool:
        return (hint is None or hint in unicodedata.normalize("NFKC", text).lower()) and f.mentions(text)

    def any_reading(text: str) -> bool:
        return search(text) or ("\\" in text and search(_unescaped(text)))

    try:
        with open(path, "rb") as fh:
            tail = b""
            while block := fh.read(_BLOCK):
                data, tail = tail + block, (tail + block)[-_OVERLAP:]
                text = data.decode("utf-8", "replace")
                if any_reading(text) or ("\ufffd" in text and any_reading(data.decode("latin-1"))):
                    return True
    except OSError:
        return False
    return False


_ESCAPE = re.compile(r"\\(u[0-9a-fA-F]{4}|.)", re.S)
_ESCAPED = {"n": "\n", "t": "\t", "r": "\r", "b": " ", "f": " "}


def _unescaped(text: str) -> str:
    """Text with JSON's escapes read as the characters they stand for; what is no escape is kept."""

    def one(m: re.Match) -> str:
        e = m[1]
        return chr(int(e[1:], 16)) if len(e) == 5 else _ESCAPED.get(e, e)

    return _ESCAPE.sub(one, text)


def _mentions(f: Forgetting, t: Tombstone, text: str) -> bool:
    return t.kind == "text" and f.mentions(text)


def _candidate_hit(f: Forgetting, t: Tombstone, c: dict) -> bool:
    if t.kind == "text":
        return f.mentions(c["text"]) or f.mentions(c["quote"])
    if t.kind == "session":
        return any(f.drops_session(s) for s in c["session_ids"] or ())
    return any(f.drops_day(d) for d in c["dates"] or ())


def _archive_files(
    settings: Settings,
    user: str,
    f: Forgetting,
    t: Tombstone,
    days: list[dt.date],
    sessions: list[dict],
    session: str | None,
    hint: str | None = None,
) -> list[tuple[dt.date | None, str]]:
    """The archived originals a purge deletes: the days' files, or the files that hold the session or phrase."""
    wh = settings.paths.warehouse
    out: list[tuple[dt.date | None, str]] = []
    if (
        t.kind == "text"
    ):  # every original of the user's that holds it, in its name or its bytes, whatever forgot it before
        days = []
        out += [
            (d.day, d.relpath)
            for d in archive_files.list_archive(settings)
            if d.user_id == user and (f.names_file(d.path.name) or _file_mentions(settings, d.relpath, f, hint))
        ]
    for d in days:
        a = ledger.archived_day(wh, user, d)
        for path in a.paths if a else ():
            if t.kind in ("day", "before"):
                out.append((d, path))
            elif t.kind == "session":
                if any(
                    s["session_id"] == session and path in (s.get("archive_paths") or [s["archive_path"]])
                    for s in sessions
                    if s["date"] == d
                ):
                    out.append((d, path))
            elif _file_mentions(settings, path, f, hint):
                out.append((d, path))
    if (
        t.kind == "session"
    ):  # the files that hold it, read from the archive: an earlier forget took it out of the tables
        named = tombstones.forgetting(settings, user)  # an id the rows show renamed (forgotten-...) is found too
        for a in ledger.archived_days(wh, "user_id = ?", [user]).values():
            out += [(a.date, p) for sid, p in load.session_files(settings, a) if session in (sid, named.rename(sid))]
    if t.kind == "text":  # an export whose conversations hold the phrase goes with them
        root = archive_files.imports_dir(settings, user)
        if root.is_dir():
            for p in sorted(root.iterdir()):
                if (
                    p.is_file()
                    and not p.name.startswith(".")
                    and (f.names_file(p.name) or _file_mentions(settings, archive_files.rel(settings, p), f, hint))
                ):
                    out.append((None, archive_files.rel(settings, p)))
    else:  # the export a purged day's or session's transcript was cut from goes too (its other days keep theirs)
        out += [(None, e) for e in archive_files.exports_of(settings, user, [p for _, p in out])]
    return list(dict.fromkeys(out))


def _file_mentions(settings: Settings, relpath: str, f: Forgetting, hint: str | None = None) -> bool:
    return _holds(settings.paths.archive / relpath, f, hint)


def apply(settings: Settings, plan: Plan, *, wait_seconds: float = 0.0) -> dict:
    """Forget, under the run lock; returns counts (never the forgotten text)."""
    started = ledger.utcnow()
    run_id = ledger.new_run_id(started)
    if settings.paths.remote_archive:  # never purge in, or write to, a bucket that is not this home's
        state = mount.bucket_state(settings)
        if state.state in ("not_mounted", "foreign"):
            raise ArchiveError(state.reason or state.state)
    parameters = {"user": plan.user, "kind": plan.kind, "purge": plan.purge, "days": len(plan.days)}
    with run_lock(settings.paths.lock, run_id, wait_seconds):
        # written first: a forget killed midway shows as interrupted in `kenang status` (the same forget again finishes it)
        ledger.write_run(
            settings.paths.warehouse, RunRecord(run_id, "forget", parameters, started, {}, timezone=settings.timezone)
        )
        if plan.purge and settings.paths.remote_archive and _fill_copy(settings):
            plan = _replanned(settings, plan)  # what came down from the bucket is searched too
        key = tombstones.key(settings, create=True)
        tomb = _keyed(plan, key)
        tombstones.add(settings, tomb)
        forgetting = Forgetting.of(key, [tomb])
        purged = 0
        if plan.purge:
            by_day: dict[dt.date | None, list[str]] = {}
            for d, p in plan.archive_files:
                by_day.setdefault(d, []).append(p)
            for d, paths in sorted(by_day.items(), key=lambda kv: (kv[0] is None, kv[0] or dt.date.min)):
                purged += len(archive_files.purge(settings, plan.user, d, paths, f"forget:{tomb.tombstone_id}"))
        quarantined = 0
        if plan.purge and plan.quarantine_files:
            quarantined = quarantine_stage.purge_quarantined(
                settings, plan.quarantine_files, f"forget:{tomb.tombstone_id}", plan.user, forgetting.rename_path
            )
        if tomb.kind == "text":  # a reason (kenang's words, quoting a name or a line) loses the phrase; the file stays
            scrubbed = _scrub_reasons(settings, [rel for rel, _ in owned_quarantine(settings, plan.user)], forgetting)
            quarantined = quarantined if plan.purge else scrubbed
        faults.checkpoint("forget.purged")
        entries = core_memory.drop_matching(settings, plan.user, lambda e: _mentions(forgetting, tomb, e))
        rows = candidates.read_all(settings)
        keep = [c for c in rows if not (c["user_id"] == plan.user and _candidate_hit(forgetting, tomb, c))]
        if tomb.kind == "text":  # the user's kept candidates name sessions by id: renamed as their rows are
            keep = [
                {**c, "session_ids": [forgetting.rename(x) for x in c["session_ids"]]}
                if c["user_id"] == plan.user and c["session_ids"] and any(forgetting.names(x) for x in c["session_ids"])
                else c
                for c in keep
            ]
        if keep != rows:
            candidates.write_all(settings, keep)
        rebuilt = rebuild_days(settings, plan.user, plan.days, run_id)
        if tomb.kind == "text":
            rebuilt["records_scrubbed"] = scrub_records(settings, forgetting, plan.user)
            ledger.refresh_history(settings.paths.warehouse, ledger_notes(settings))  # older months, without the phrase
        if settings.paths.remote_archive:  # the rewritten summaries replace the bucket's, their old versions deleted
            rebuilt["archive_remote"] = remote.push(settings).counts()
        record = RunRecord(
            run_id,
            "forget",
            {**parameters, "days": len(plan.days)},
            started,
            {
                "days": len(plan.days),
                "archive_files_purged": purged,
                "quarantine_files_" + ("purged" if plan.purge else "scrubbed"): quarantined,
                "memory_entries": entries,
                "candidates": len(rows) - len(keep),
                **rebuilt,
            },
            status="completed",
            finished_at=ledger.utcnow(),
            timezone=settings.timezone,
        )
        ledger.write_run(settings.paths.warehouse, record)
    return {"run_id": run_id, **record.counts}


def _fill_copy(settings: Settings) -> int:
    """An archive on S3: what the local copy lacks comes down first (a copy made anew), as before a night."""
    purged: dict[str, set[str]] = {}
    for r in archive_files.purged(settings):
        purged.setdefault(r["path"], set()).add(r["sha256"])
    got = remote.pull(settings, purged)
    if got.error:
        raise ArchiveError(
            f"cannot fill the archive's local copy from the bucket before purging ({got.error}); "
            "nothing was forgotten: check the bucket, then run the forget again"
        )
    return got.pulled


def _replanned(settings: Settings, plan: Plan) -> Plan:
    t = plan.tombstone
    return make_plan(
        settings,
        plan.user,
        text=" ".join(plan.words) if plan.words else None,
        session=plan.session,
        day=t.day if t.kind == "day" else None,
        before=t.day if t.kind == "before" else None,
        purge=True,
    )


def _scrub_reasons(settings: Settings, rels: list[str], f: Forgetting) -> int:
    """Without --purge a quarantined file stays as it is; the phrase leaves its reason (reason file and row)."""
    root, n = settings.paths.quarantine, 0
    for rel in rels:
        sidecar = root / (rel + quarantine_stage.SIDECAR)
        try:
            info = json.loads(sidecar.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(info, dict) and isinstance(info.get("reason"), str):
            scrubbed = f.scrub_value(info["reason"])
            if scrubbed != info["reason"]:
                atomic_write_bytes(
                    sidecar, (json.dumps({**info, "reason": scrubbed}, indent=2, ensure_ascii=False) + "\n").encode()
                )
                n += 1
    wanted = set(rels)
    quarantine_stage.edit_rows(
        settings, lambda r: {**r, "reason": f.scrub_value(r["reason"])} if r["path"] in wanted else r
    )
    return n


def scrub_records(settings: Settings, f: Forgetting, user: str) -> int:
    """Scrub a phrase from the records that are the only copy of what they hold; returns the files rewritten.

    ``runs`` (its parameters, counts and errors name files and hold reasons) and the
    ``days`` ledger's reasons get the phrase replaced by the marker; ``purge_log`` and
    the quarantine reasons are scrubbed too, and a logged path that names the phrase is
    renamed (``Forgetting.rename_path``): what was purged stays on the record, by
    sha256, never by the forgotten words. ``runs`` rows of every user (a run's report is the home's);
    the other records only ``user``'s: another user's phrase never rewrites them.
    """
    wh, n = settings.paths.warehouse, 0

    def text(v):
        return f.scrub_value(v) if isinstance(v, str) else v

    def as_json(v):  # read, so that no escape ("\u00e9", "\n") can hide a phrase
        try:
            body = json.loads(v) if isinstance(v, str) else None
        except ValueError:
            return text(v)
        scrubbed = f.scrub_value(body)
        return v if scrubbed == body else json.dumps(scrubbed, sort_keys=True, default=str)

    for path in _files(wh, RUNS):
        rows = warehouse.read_file(path, RUNS).to_pylist()
        new = [
            {**r, "parameters": as_json(r["parameters"]), "counts": as_json(r["counts"]), "error": text(r["error"])}
            for r in rows
        ]
        if new != rows:
            warehouse.write_file(path, pa.Table.from_pylist(new, schema=RUNS.schema), RUNS)
            n += 1
    days = ledger.read_days(wh)
    fixed = [
        {**r, **{c: text(r[c]) for c in ("reason", "summary_reason", "index_reason")}} if r["user_id"] == user else r
        for r in days.values()
    ]
    changed = [r for r, old in zip(fixed, days.values(), strict=False) if r != old]
    if changed:
        n += ledger.write_days(wh, changed) and 1
    log = warehouse.read(wh, PURGE_LOG).to_pylist()
    renamed = [
        {**r, "path": f.rename_path(r["path"]), "why": text(r["why"])} if r["user_id"] == user else r for r in log
    ]
    if renamed != log:
        warehouse.write_file(
            warehouse.single_file(wh, PURGE_LOG), pa.Table.from_pylist(renamed, schema=PURGE_LOG.schema), PURGE_LOG
        )
        n += 1
    owned = {rel for rel, _ in owned_quarantine(settings, user)}
    n += quarantine_stage.edit_rows(settings, lambda r: {**r, "reason": text(r["reason"])} if r["path"] in owned else r)
    return n


def _files(wh, table) -> list:
    root = warehouse.table_dir(wh, table)
    return sorted(p for p in root.rglob("*.parquet") if not p.name.startswith(".")) if root.is_dir() else []


def _keyed(plan: Plan, key: bytes) -> Tombstone:
    """The plan's tombstone, hashed with the home's real key, with an id that is a hash of what it forgets."""
    t = plan.tombstone
    digest = t.digest
    if t.kind == "text":
        assert plan.words is not None, "make_plan keeps the words of a text plan"
        digest = phrase_digest(key, plan.words)
    elif t.kind == "session":
        assert plan.session is not None, "make_plan keeps the session of a session plan"
        digest = id_digest(key, plan.session)
    ident = hashlib.sha256(f"{t.user_id}\0{t.kind}\0{digest}\0{t.day}".encode()).hexdigest()[:16]
    return Tombstone(ident, t.user_id, t.kind, digest, t.words, t.day, t.purge)


def rebuild_days(settings: Settings, user: str, days: list[dt.date], run_id: str) -> dict:
    """Re-derive, re-summarize and re-index ``days`` of ``user`` with every tombstone applied."""
    wh = settings.paths.warehouse
    open_items.owe(settings, [(user, d) for d in days])  # before any day changes: a crash leaves the chain owed
    today = ledger.utcnow().astimezone(settings.timezone).date()
    archived = [a for d in days if (a := ledger.archived_day(wh, user, d)) is not None]
    archived += [ArchivedDay(user, d, (), ()) for d in days if ledger.archived_day(wh, user, d) is None]
    rows = ledger.read_days(wh)
    res = load.load_days(settings, archived, rows, run_id, {}, None, True, today)
    ledger.write_days(wh, [o.ledger_row for o in res.days if o.ledger_row])
    rows = ledger.read_days(wh)
    keys: list[DayKey] = [(user, d) for d in days if rows.get((user, d), {}).get("status") == "loaded"]
    summed = indexed = 0
    if keys:
        s = summarize.summarize_days(settings, make_summarizer(settings), keys, rows, run_id, today)
        ledger.write_days(wh, [o.ledger_row for o in s.days if o.ledger_row])
        summed = s.count("summarized")
    if days:  # the later days' carried open items, and the open_items table, lose what was forgotten
        open_items.refresh(settings, [(user, d) for d in days])
    if keys:
        rows = ledger.read_days(wh)
        embedder = make_embedder(settings) if configured_id(settings) != "none" else None
        ix = recall_index.index_days(settings, embedder, keys, rows, run_id, reembed=True)
        ledger.write_days(wh, [o.ledger_row for o in ix.days if o.ledger_row])
        indexed = ix.count("indexed")
    memory_file.write_memory_files(settings, [user])
    candidates.forget_hosts(settings, user)  # the host names kept for its days were read before the forget
    core_memory.write_snapshot(settings, user)
    compact.refresh(settings.paths.warehouse)
    recall_pack.refresh(settings.paths.warehouse, [user], ann_from=int(settings.recall.exact_below))
    ledger.refresh_history(settings.paths.warehouse, ledger_notes(settings))
    catalog.ensure_catalog(settings.paths.catalog, settings.paths.warehouse)
    return {"reloaded": len(res.days), "resummarized": summed, "reindexed": indexed}
