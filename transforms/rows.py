"""Turn one (user, day)'s resolved sessions into ``sessions`` and ``messages`` rows.

A partition is built whole from every archived file of that user and day, so a rerun
replaces it rather than appending. Sessions that share a ``session_id`` (a transcript
archived again with more turns) are merged: their messages are unioned by
``message_id`` and renumbered, so nothing is counted twice. The segments collected
from one reading of an agent's log (same ``lineage``) are one file cut in pieces:
a message repeated in a later piece counts on from the earlier ones, so it is kept.
The merge is never silent: the session row lists every file it came from
(``archive_paths``), and ``merged`` names it for the run report.

Message content is redacted here, before any row exists, and so are the session id
and the agent (a token used as one becomes a stable ``redacted-<hash>``; one, or a file name,
that holds a forgotten phrase becomes ``forgotten-<hash>``), and a message that reads
like a prompt override is flagged (``flags``) so no summary promotes it. The partition's
fingerprint covers every column except ``run_id``, so an unchanged day is recognised
and not rewritten.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime

import pyarrow as pa

from schemas.tables import MESSAGES, SESSIONS
from transforms.forget import Forgetting
from transforms.ids import RowDigest, message_id
from transforms.injection import flag_injection
from transforms.model import Message, ResolvedSession
from transforms.redact import redact, redact_identifier

_FAR_FUTURE = datetime.max.replace(tzinfo=UTC)


@dataclass(frozen=True)
class SourceFile:
    archive_path: str  # relative to the archive root, posix separators
    sha256: str
    lineage: str | None = None  # a collected segment's reading of its source file (``transforms.collect``)


@dataclass(frozen=True)
class DayRows:
    sessions: pa.Table
    messages: pa.Table
    fingerprint: str
    redactions: int
    merged: tuple[tuple[str, int], ...] = ()  # (session_id, files) for each session read from several files
    batches: tuple[pa.Table, ...] = ()  # ``messages`` in the batches it was made in


def build_day_rows(
    items: Sequence[tuple[ResolvedSession, SourceFile]],
    *,
    user_id: str,
    day: date,
    run_id: str,
    forgetting: Forgetting | None = None,
    batch_rows: int = 20_000,
) -> DayRows:
    """Rows for one (user, day) partition from its resolved sessions; ``forgetting`` leaves out what was forgotten.

    The message rows are made ``batch_rows`` at a time (``DayRows.batches``), so a huge
    day never holds them all as Python objects."""
    by_id: dict[str, list[tuple[ResolvedSession, SourceFile]]] = {}
    for rs, src in sorted(items, key=lambda it: (it[0].session_id, it[1].archive_path)):
        by_id.setdefault(rs.session_id, []).append((rs, src))

    session_rows: list[dict] = []
    sessions_merged: list[tuple[str, list[dict]]] = []
    several_files: list[tuple[str, int]] = []
    total_redactions = 0
    for raw_sid, group in by_id.items():
        sid = redact_identifier(raw_sid)  # a token used as a session id is a secret like any other
        if forgetting is not None:
            if forgetting.drops_session(sid):
                continue
            sid = forgetting.rename(sid)  # an id that holds a forgotten phrase becomes forgotten-<hash>
            if forgetting.drops_session(sid):  # forgotten by the name its rows gave it
                continue
        merged = _merge_messages(group, user_id=user_id, session_id=raw_sid, forgetting=forgetting)
        first_rs, first_src = group[0]
        stamps = [m["ts"] for m in merged if m["ts"] is not None]
        redactions = sum(m["redactions"] for m in merged)
        total_redactions += redactions
        session_rows.append(
            {
                "session_id": sid,
                "user_id": user_id,
                "agent": _agent(group, forgetting),
                "date": day,
                "started_at": min(stamps) if stamps else None,
                "ended_at": max(stamps) if stamps else None,
                "message_count": len(merged),
                "source_format": first_rs.session.source_format,
                "archive_path": _path(first_src.archive_path, forgetting),
                "sha256": first_src.sha256,
                "run_id": run_id,
                "day_source": first_rs.day_source,
                "redactions": redactions,
                "archive_paths": sorted({_path(src.archive_path, forgetting) for _, src in group}),
                "people": _people(group, forgetting),
            }
        )
        if len(group) > 1:
            several_files.append((sid, len(group)))
        sessions_merged.append((sid, merged))

    # The fingerprint takes every session row, then every message row: the message rows
    # are made, hashed and turned into Arrow a batch at a time, each batch's dicts let go.
    digest = RowDigest()
    digest.update(("s",) + _strip(r) for r in session_rows)
    batches: list[pa.Table] = []
    message_rows: list[dict] = []
    for sid, merged in sessions_merged:
        for seq in range(len(merged)):
            m, merged[seq] = merged[seq], {}  # each merged message is let go once its row is made
            message_rows.append(
                {
                    "message_id": m["message_id"],
                    "session_id": sid,
                    "user_id": user_id,
                    "date": day,
                    "ts": m["ts"],
                    "role": m["role"],
                    "seq": seq,
                    "content": m["content"],
                    "run_id": run_id,
                    "redactions": m["redactions"],
                    "flags": m["flags"],
                }
            )
            if len(message_rows) >= batch_rows:
                batches.append(_message_batch(message_rows, digest))
                message_rows = []
    if message_rows or not batches:
        batches.append(_message_batch(message_rows, digest))

    sessions = pa.Table.from_pylist(session_rows, schema=SESSIONS.schema)
    messages = batches[0] if len(batches) == 1 else pa.concat_tables(batches)
    return DayRows(sessions, messages, digest.hexdigest(), total_redactions, tuple(several_files), tuple(batches))


def _message_batch(rows: list[dict], digest: RowDigest) -> pa.Table:
    digest.update(("m",) + _strip(r) for r in rows)
    return pa.Table.from_pylist(rows, schema=MESSAGES.schema)


def _agent(group: list[tuple[ResolvedSession, SourceFile]], forgetting: Forgetting | None = None) -> str | None:
    agent = next((rs.session.agent for rs, _ in group if rs.session.agent), None)
    if not agent:
        return None
    agent = redact_identifier(agent)
    return agent if forgetting is None else forgetting.rename(agent)


def _people(group: list[tuple[ResolvedSession, SourceFile]], forgetting: Forgetting | None = None) -> list[str]:
    """The names the session's files declare, in order, once each; a name that holds a secret or a forgotten
    phrase is left out (a name is not rewritten: it would name somebody else)."""
    out: dict[str, str] = {}
    for rs, _ in group:
        for name in rs.session.people:
            if name.lower() in out or redact(name).count or (forgetting is not None and forgetting.mentions(name)):
                continue
            out[name.lower()] = name
    return list(out.values())


def _path(archive_path: str, forgetting: Forgetting | None) -> str:
    """An archived file's path as a row names it: a name that holds a forgotten phrase is renamed."""
    return archive_path if forgetting is None else forgetting.rename_path(archive_path)


def session_message_ids(
    messages: Iterable[Message], *, user_id: str, session_id: str, occurrences: Counter | None = None
) -> Iterator[tuple[Message, datetime | None, str]]:
    """(message, its UTC time, its id) for one file's messages of a session; the n-th identical one counts n.

    ``occurrences`` carries the count on from the files before (the segments of one
    reading of an agent's log, in file order, are numbered as that one file)."""
    occurrences = Counter() if occurrences is None else occurrences
    for msg in messages:
        ts = msg.ts.astimezone(UTC) if msg.ts is not None else None
        key = (msg.role, ts, msg.content)
        yield msg, ts, message_id(user_id, session_id, msg.role, ts, msg.content, occurrences[key])
        occurrences[key] += 1


def _merge_messages(
    group: list[tuple[ResolvedSession, SourceFile]],
    *,
    user_id: str,
    session_id: str,
    forgetting: Forgetting | None = None,
) -> list[dict]:
    seen: dict[str, dict] = {}
    order = 0
    readings: dict[str, Counter] = {}  # a collected log's segments count repeats on from one another
    for rs, src in group:
        counts = readings.setdefault(src.lineage, Counter()) if src.lineage else None
        for msg, ts, mid in session_message_ids(
            rs.session.messages, user_id=user_id, session_id=session_id, occurrences=counts
        ):
            if mid in seen:
                continue
            red = redact(msg.content)
            content = red.text if forgetting is None else forgetting.scrub(red.text)[0]
            seen[mid] = {
                "message_id": mid,
                "ts": ts,
                "role": msg.role,
                "content": content,
                "redactions": red.count,
                "flags": list(flag_injection(content)) + list(msg.flags),
                "order": order,
            }
            order += 1
    # Timestamped messages in time order; untimestamped ones keep their file order.
    rows = list(seen.values())
    if len(group) > 1:
        rows.sort(key=lambda r: (r["ts"] or _FAR_FUTURE, r["order"]))
    return rows


def _strip(row: dict) -> tuple:
    # A session that declares nobody fingerprints as it did before sessions had people.
    return tuple((k, v) for k, v in row.items() if k != "run_id" and not (k == "people" and not v))
