"""What a long-lived reader of one home answers from: warm per user, fresh after every run.

``MemoryService`` is what ``kenang mcp`` serves (``flows.query.mcp`` only adapts it to
the protocol), and it owns the memory an agent reads and writes:

- **recall**: each user's recall index is loaded once (``flows.query.recall.Recaller``)
  and kept; the embedder is loaded once for all users. When a run changes the day
  ledger (its file is replaced atomically), the next query of that user reloads, so new
  days are found without a restart.
- **analyze**: each user's ``Analytics`` session is kept the same way.
- **day** reads the warehouse's partitions of one user; **snapshot** is core memory
  (``flows.store.core_memory``) with the latest days, and **memory** writes core memory
  under its rules, like ``kenang remember``.
- **write_session** checks a session an agent hands in (``transforms.turns``) and writes
  it as a Markdown transcript into ``active/<user>/``, atomically, never over another
  file; the next nightly run takes it after the quiet and grace periods like any file.

Nothing here takes the run lock or writes the warehouse: a query never blocks a run,
and a run never blocks a query (partitions are replaced whole, atomically). Every call
is scoped to one user, and every user id is checked before it reaches a path.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flows.config import Settings
from flows.query.analyze import INTENTS, Analytics
from flows.query.recall import Recaller
from flows.store import compact, core_memory, ledger, warehouse
from flows.store.fsio import fsync_dir
from schemas.frontmatter import HEADINGS
from schemas.tables import DAILY_SUMMARIES, SESSIONS
from transforms.core_memory import Refused
from transforms.errors import ConfigError, ModelRefused, ModelUnavailable
from transforms.memory_file import ENTRY_COLUMNS, entry_of
from transforms.model import USER_ID_RE
from transforms.recall import match_of
from transforms.render import render_markdown
from transforms.turns import Limits, check_session, check_title

MODES = ("hybrid", "keyword", "vector")
#: How long a query server that met an embedding server down answers by keyword before it tries that server again.
EMBEDDER_RETRY_S = 60.0

log = logging.getLogger("kenang")


class RequestError(ValueError):
    """A request that names a bad field; nothing was done."""


@dataclass
class _Warm:
    version: tuple
    value: Any


class MemoryService:
    """One home's memory, for many calls and many users."""

    def __init__(self, settings: Settings, *, embedder: Any = "config", clock: Callable[[], dt.datetime] | None = None):
        self.settings = settings
        self._embedder = embedder
        self._embedder_failed = 0.0  # when an embedding server was last found down (monotonic); 0: it was not
        self._clock = clock or (lambda: dt.datetime.now(dt.UTC))
        self._lock = threading.Lock()
        self._user_locks: dict[str, threading.Lock] = {}
        self._recallers: dict[str, _Warm] = {}
        self._analytics: dict[str, _Warm] = {}

    # --- freshness ---------------------------------------------------------------------

    def version(self) -> tuple:
        """Changes whenever a run records anything: the day ledger is replaced atomically."""
        return ledger.version(self.settings.paths.warehouse)

    def _user_lock(self, user: str) -> threading.Lock:
        with self._lock:
            return self._user_locks.setdefault(user, threading.Lock())

    def _warm(self, cache: dict[str, _Warm], user: str, make: Callable[[], Any]) -> Any:
        v = self.version()
        with self._user_lock(user):
            hit = cache.get(user)
            if hit is None or hit.version != v:
                hit = cache[user] = _Warm(v, make())
            return hit.value

    def embedder(self):
        """The query embedder, loaded once; an embedding server that is down gives None (keyword recall) for
        ``EMBEDDER_RETRY_S``, then it is tried again."""
        if self._embedder == "config" or (
            self._embedder is None
            and self._embedder_failed
            and time.monotonic() - self._embedder_failed > EMBEDDER_RETRY_S
        ):
            from flows.models.embed import make_embedder

            with self._lock:
                try:
                    self._embedder, self._embedder_failed = make_embedder(self.settings, for_queries=True), 0.0
                except (ModelUnavailable, ModelRefused) as exc:
                    log.warning("embedding server unavailable, recall answers by keyword: %s", exc)
                    self._embedder, self._embedder_failed = None, time.monotonic()
        return self._embedder

    # --- the tools ---------------------------------------------------------------------

    def recall(
        self,
        user: str,
        query: str,
        *,
        top_k: int | None = None,
        start: dt.date | None = None,
        end: dt.date | None = None,
        mode: str = "hybrid",
        now: dt.date | None = None,
    ) -> dict:
        """The best days for a query, as ``{"match": strong|weak|none, "results": [hit, ...]}``."""
        user = self._user(user)
        cfg = self.settings.mcp
        if not isinstance(query, str) or not query.strip():
            raise RequestError("query: give the words to look for (it was empty)")
        if len(query) > cfg.max_query_chars:
            raise RequestError(
                f"query: {len(query)} characters, more than the {cfg.max_query_chars} allowed "
                "(mcp.max_query_chars); ask a shorter question"
            )
        top_k = self.settings.recall.top_k if top_k is None else top_k
        if not 1 <= top_k <= cfg.max_top_k:
            raise RequestError(f"top_k: {top_k} is outside 1..{cfg.max_top_k}")
        _check_range(start, end)
        if mode not in MODES:
            raise RequestError(f"mode: {mode!r} is not one of {', '.join(MODES)}")
        r = self._warm(self._recallers, user, lambda: Recaller(self.settings, user, embedder=self.embedder()))
        hits = r.search(query, top_k=top_k, mode=mode, start=start, end=end, now=now)
        return {
            "match": match_of(hits, r.params),
            "results": [{**h.as_dict(query), "flagged": list(h.chunk.flagged)} for h in hits],
        }

    def analyze(
        self,
        user: str,
        intent: str,
        *,
        start: dt.date | None = None,
        end: dt.date | None = None,
        by: str = "month",
        window: int | None = None,
    ) -> dict:
        user = self._user(user)
        if intent not in INTENTS:
            raise RequestError(f"intent: unknown intent {intent!r}; known intents: {', '.join(INTENTS)}")
        _check_range(start, end)
        if by not in ("day", "week", "month"):
            raise RequestError(f"by: {by!r} is not one of day, week, month")
        if window is not None and not 1 <= window <= 366:
            raise RequestError(f"window: {window} is outside 1..366 days")
        a = self._warm(self._analytics, user, lambda: Analytics(self.settings, user))
        return a.run(intent, start=start, end=end, by=by, window=window).as_dict()

    def day(self, user: str, day: dt.date) -> dict:
        user = self._user(user)
        wh = self.settings.paths.warehouse
        summary_file = warehouse.partition_file(wh, DAILY_SUMMARIES, day, user)
        sessions_file = warehouse.partition_file(wh, SESSIONS, day, user)
        summary = warehouse.read_file(summary_file, DAILY_SUMMARIES).to_pylist() if summary_file.is_file() else []
        sessions = warehouse.read_file(sessions_file, SESSIONS).to_pylist() if sessions_file.is_file() else []
        if not summary and not sessions:
            raise RequestError(f"date: nothing is remembered of {day.isoformat()}")
        out: dict[str, Any] = {"date": day.isoformat(), "user": user, "summary": None, "body": None}
        if summary:
            row = summary[0]
            out["summary"] = {k: row[k] for k in ("people", "projects", "tags", "technologies", "importance", "mood")}
            out["summary"] |= {"title": row.get("title") or "", "language": row.get("language") or "en"}
            out["summary"] |= {k: list(row.get(k) or ()) for k in ("decisions", "open_items")}
            out["summary"]["related_dates"] = [d.isoformat() for d in row["related_dates"] or ()]
            out["body"] = row["summary"]
        tz = self.settings.timezone
        out["sessions"] = [
            {
                "session_id": s["session_id"],
                "agent": s["agent"],
                "messages": s["message_count"],
                # in the home's zone (the same instant), as the notes and `kenang sql` show them
                "started_at": s["started_at"].astimezone(tz).isoformat() if s["started_at"] else None,
                "ended_at": s["ended_at"].astimezone(tz).isoformat() if s["ended_at"] else None,
            }
            for s in sorted(
                sessions, key=lambda s: (s["started_at"] is None, s["started_at"] or dt.datetime.min, s["session_id"])
            )
        ]
        return out

    def summary_text(self, user: str, day: dt.date) -> str:
        """The day's summary as Markdown: its fields, its note and its sessions."""
        d = self.day(user, day)
        if d["summary"] is None:
            return f"# {d['date']}\n\n(not summarized yet)\n"
        s = d["summary"]
        heads = HEADINGS.get(s["language"], HEADINGS["en"])
        lines = [
            f"# {d['date']} · {s['title']}" if s["title"] else f"# {d['date']}",
            "",
            d["body"],
            "",
            *(
                ln
                for k in ("decisions", "open_items")
                if s[k]
                for ln in (f"## {heads[k]}", *(f"- {item}" for item in s[k]), "")
            ),
            f"importance {s['importance']}/10 · {s['mood']}",
            *(
                f"{k}: {', '.join(map(str, s[k]))}"
                for k in ("people", "projects", "technologies", "tags", "related_dates")
                if s[k]
            ),
            "",
            "sessions:",
            *(f"- {x['session_id']} ({x['messages']} messages)" for x in d["sessions"]),
        ]
        return "\n".join(lines) + "\n"

    def open_items(
        self, user: str, *, now: dt.date | None = None, include_closed: bool = False, since: dt.date | None = None
    ) -> list[dict]:
        """What is still open for ``user`` on ``now`` (default: today in the home's zone), oldest first."""
        from flows.query.open_items import list_open_items

        today = now or self._clock().astimezone(self.settings.timezone).date()
        return list_open_items(self.settings, self._user(user), today, include_closed=include_closed, since=since)

    def snapshot(self, user: str) -> str:
        """The text an agent pastes into its system prompt: core memory under its usage headers, then the latest days."""
        return core_memory.snapshot_text(self.settings, self._user(user))

    def memory(
        self, user: str, action: str, *, target: str = "memory", text: str | None = None, old_text: str | None = None
    ) -> dict:
        """add / replace / remove one core memory entry, under every rule (the CLI's code, ``core_memory.write``);
        a missing argument is named, as every tool error names its argument."""
        user = self._user(user)
        if action in ("replace", "remove") and not (old_text or "").strip():
            raise RequestError(f"old_text: missing; {action} needs part of the entry")
        if action in ("add", "replace") and not (text or "").strip():
            raise RequestError(f"text: missing; {action} needs the entry, one lasting fact")
        try:
            state = core_memory.write(self.settings, user, target, action, text=text, old=old_text, source="mcp")
        except Refused as exc:
            raise RequestError(f"refused: {exc} (nothing was changed)") from None
        # as served: a hand edit's secrets redacted, its orders withheld
        return {
            "file": state.path.name,
            "usage": state.usage.header(state.path.stem),
            "entries": state.as_dict()["entries"],
        } | ({"warning": state.snapshot_error} if state.snapshot_error else {})

    def memory_index(self, user: str) -> str:
        """The user's MEMORY_INDEX, rendered from the summaries (the archive may be a NAS that sleeps)."""
        from transforms.memory_file import render_memory_index

        user = self._user(user)
        rows = compact.read_user(
            self.settings.paths.warehouse, "daily_summaries", user, columns=ENTRY_COLUMNS
        ).to_pylist()
        return render_memory_index(user, [entry_of(r) for r in rows])

    def write_session(
        self,
        user: str,
        turns: list,
        *,
        session_id: str | None = None,
        agent: str | None = None,
        title: str | None = None,
    ) -> dict:
        """Check the session, then write it into active/<user>/ whole or not at all; never over another file."""
        user = self._user(user)
        cfg = self.settings.mcp
        now = self._clock()
        try:
            session = check_session(
                turns,
                user_id=user,
                session_id=session_id,
                agent=agent,
                title=title,
                now=now,
                tz=self.settings.timezone,
                limits=Limits(cfg.session_max_turns, cfg.session_max_turn_chars, cfg.session_max_chars),
            )
            title = check_title(title)
        except ValueError as exc:
            raise RequestError(str(exc)) from None
        text = render_markdown(session, title=title)
        folder = self.settings.paths.active / user
        final = folder / f"{session.session_id}.md"
        _write_new(final, text.encode("utf-8"))
        first = session.first_ts
        assert first is not None  # check_session stamps every turn: its own time, the turn before's, or now
        day = first.astimezone(self.settings.timezone).date()
        return {
            "path": final.relative_to(self.settings.paths.home).as_posix()
            if _inside(final, self.settings.paths.home)
            else str(final),
            "session_id": session.session_id,
            "day": day.isoformat(),
            "turns": len(session.messages),
        }

    # --- helpers -----------------------------------------------------------------------

    def _user(self, user: str) -> str:
        if not isinstance(user, str) or not USER_ID_RE.match(user):
            raise ConfigError(f"{user!r} is not a valid user id")
        return user


def _check_range(start: dt.date | None, end: dt.date | None) -> None:
    if start and end and end < start:
        raise RequestError(f"end: {end.isoformat()} is before start {start.isoformat()}")


def _inside(path: Path, root: Path) -> bool:
    return root == path or root in path.parents


def _write_new(final: Path, data: bytes) -> None:
    """Write ``data`` to ``final`` atomically; a file already there is never replaced (FileExistsError -> RequestError)."""
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = final.with_name(f".kenang-tmp-{secrets.token_hex(4)}-{final.name}.part")
    try:
        with open(tmp, "xb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        try:
            os.link(tmp, final)  # atomic, and fails if final exists: no overwrite, ever
        except FileExistsError:
            raise RequestError(f"session_id: {final.stem!r} was written already; give another session_id") from None
    finally:
        tmp.unlink(missing_ok=True)
    fsync_dir(final.parent)
