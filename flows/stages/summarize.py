"""Summarize: one ``YYYY-MM-DD.summary.md`` per loaded (user, day), plus its table row.

The stage reads a day's redacted, flagged messages from the warehouse (so the model
never sees a secret), asks the configured ``Summarizer``, and writes three things:

- the summary file beside the day's originals in the archive, atomically and 0444
  (a derived file: ``backfill --resummarize`` may replace it; originals never change);
- the day's ``daily_summaries`` partition (with its ``resolutions``: the sentences that
  may close an earlier day's open item, ``transforms.open_items``);
- then, once per run, ``MEMORY_INDEX.md`` for each user touched
  (``flows.stages.memory_file``).

Before writing, the rendered file is parsed back and must equal what was meant: an
invalid frontmatter is never written. A day the model fails on is recorded as
failed in the ledger with its reason; the next nightly run retries it.

A note's "Still open" and "Closed" sections depend on the days before it: the flow
recomputes them after this stage (``flows.stages.open_items``).

Which days: loaded days whose summary is not ``is_fresh`` (missing, failed, or made
from other content), through ``plan.days_needing``. ``--resummarize`` takes every day
in the backfill's range.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import logging
import threading
from collections.abc import Container, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from flows.config import Settings
from flows.stages import open_items, pool
from flows.stages.outcome import DayOutcome, StageResult, failed
from flows.store import faults, warehouse
from flows.store.archive_files import day_dir, marker
from flows.store.fsio import READ_ONLY, atomic_write_bytes
from flows.store.ledger import DayKey
from schemas.tables import DAILY_SUMMARIES, MESSAGES, SESSIONS
from transforms import vault
from transforms.candidates import Candidate, scan_day
from transforms.errors import ModelUnavailable
from transforms.extract import DayMessage, DayText, conversation
from transforms.frontmatter import carried_sections, parse_summary, render_parts
from transforms.open_items import ChainDay, resolutions
from transforms.summarize import (
    DayInput,
    ExtractiveSummarizer,
    SessionMeta,
    SummarizeError,
    Summarizer,
    SummaryOutcome,
)

log = logging.getLogger("kenang")


def is_fresh(row: Mapping) -> bool:
    """A day's summary is fresh when it was written from the day's current content."""
    return row.get("summary_status") == "summarized" and row.get("summary_fingerprint") == row["content_fingerprint"]


_LAST = dt.datetime.max.replace(tzinfo=dt.UTC)


def day_input(
    settings: Settings, user_id: str, day: dt.date, today: dt.date, noted: Container[dt.date] = frozenset()
) -> DayInput:
    """A day's redacted messages and sessions, from the warehouse; ``noted``: the user's days that have a note."""
    wh = settings.paths.warehouse
    m = warehouse.read_columns(
        warehouse.partition_file(wh, MESSAGES, day, user_id),
        MESSAGES,
        ("session_id", "seq", "role", "content", "ts", "flags"),
    )
    s = warehouse.read_columns(
        warehouse.partition_file(wh, SESSIONS, day, user_id),
        SESSIONS,
        ("session_id", "started_at", "ended_at", "message_count", "archive_path", "people"),
    )
    sess = sorted(
        zip(s["session_id"], s["started_at"], s["ended_at"], s["message_count"], s["archive_path"], strict=False),
        key=lambda r: (r[1] or _LAST, r[0]),
    )
    declared = dict(zip(s["session_id"], s["people"], strict=False))
    # The names the day's transcripts declare, in session order, once each.
    people = tuple(dict.fromkeys(p for r in sess for p in declared.get(r[0]) or ()))
    order = {r[0]: i for i, r in enumerate(sess)}
    msgs = sorted(
        zip(m["session_id"], m["seq"], m["role"], m["content"], m["ts"], m["flags"], strict=False),
        key=lambda r: (order.get(r[0], 0), r[1]),
    )
    text = DayText(
        user_id=user_id,
        day=day,
        tz=settings.timezone,
        messages=conversation(
            DayMessage(sid, role, content, ts, bool(flags)) for sid, _, role, content, ts, flags in msgs
        ),
        people=people,
        user_name=settings.display_name(user_id),
    )
    sessions = tuple(SessionMeta(*r) for r in sess)
    folder = vault.user_folder(user_id, settings.default_user)
    return DayInput(text, sessions, today, settings.projects, settings.summarizer.summary_chars, folder, noted)


#: What a summary outcome counts; StageResult.counts sums them for the run report.
NUMBERS = ("first_try_valid", "with_fallback", "completion_tokens", "llm_seconds")


def summarize_days(
    settings: Settings,
    summarizer: Summarizer,
    keys: Iterable[DayKey],
    ledger_rows: Mapping[DayKey, Mapping],
    run_id: str,
    today: dt.date,
    ahead: open_items.Ahead | None = None,
) -> StageResult:
    """Summarize each day; a failing day is recorded and the others go on.

    ``summarize_day`` reads a day and makes its summary file's text and its partition's
    Parquet bytes. With the extractive backend (pure, no model) it runs on every core
    (``flows.stages.pool``), and each day's file and partition are written here, in day
    order, while the workers make the next days. A model runs in this process.

    ``ahead``: the days come oldest first, and each note is written with the carried sections the open-items chain
    gives it (``open_items.Ahead``), so the chain after the stage finds nothing to rewrite.
    """
    keys = list(keys)
    noted = noted_days(ledger_rows)
    jobs = [
        (
            settings,
            summarizer,
            user_id,
            day,
            today,
            ledger_rows[(user_id, day)]["content_fingerprint"],
            run_id,
            noted.get(user_id, frozenset()),
        )
        for user_id, day in keys
    ]
    remote = getattr(summarizer, "backend", None) == "openai"
    if isinstance(summarizer, ExtractiveSummarizer):
        made = pool.pure_imap(summarize_day, jobs, heavy=pool.heavy(ledger_rows[k].get("messages") for k in keys))
    elif remote and settings.summarizer.concurrency > 1:
        made = _in_flight(jobs, settings.summarizer.concurrency)
    else:
        made = None
    out: list[DayOutcome] = []
    for i, job in enumerate(jobs):
        user_id, day = job[2], job[3]
        try:
            outcome = _write_one(settings, summarize_day(job) if made is None else _raised(next(made)), run_id, ahead)
        except ModelUnavailable as exc:  # the server is down: this day and the rest wait, the night goes on
            log.warning("model server unavailable, %d day(s) wait: %s", len(jobs) - i, exc)
            if made is not None and hasattr(made, "close"):
                made.close()  # the days not yet sent are not sent
            return StageResult(tuple(out), tuple(keys[i:]), str(exc))
        except SummarizeError as exc:
            outcome = _failed(user_id, day, run_id, str(exc))
        except Exception as exc:  # noqa: BLE001 - one bad day must not stop the night
            log.exception("summarize failed for %s/%s", user_id, day)
            outcome = _failed(user_id, day, run_id, f"internal error: {pool.kind_of(exc)}: {exc}")
        out.append(outcome)
        faults.checkpoint("summarize.day_done")
    return StageResult(tuple(out))


def noted_days(ledger_rows: Mapping[DayKey, Mapping]) -> Mapping[str, Container[dt.date]]:
    """Per user, the loaded days: each has a note, or gets one in this run (a day that fails gets it on a later run)."""
    noted = getattr(ledger_rows, "noted", None)  # a run's ledger (``plan.Night``): its settled months from their notes
    if callable(noted):
        return noted()
    out: dict[str, set[dt.date]] = {}
    for (user, day), row in ledger_rows.items():
        if row.get("status") == "loaded":
            out.setdefault(user, set()).add(day)
    return {u: frozenset(days) for u, days in out.items()}


def _in_flight(jobs: list, concurrency: int):
    """``summarize_day`` over ``jobs`` with ``concurrency`` days in flight at a model server, results in order.

    Each result is the day's ``Summarized`` or the exception it raised (raised again by
    ``_raised``). Once the server is unavailable, the days not yet sent are not sent.
    """
    down = threading.Event()

    def one(job):
        if down.is_set():
            return ModelUnavailable("not sent: the model server was unavailable")
        try:
            return summarize_day(job)
        except ModelUnavailable as exc:
            down.set()
            return exc
        except Exception as exc:  # noqa: BLE001 - handed to the stage's loop, which decides
            return exc

    ex = ThreadPoolExecutor(concurrency, thread_name_prefix="kenang-summarize")
    try:
        yield from ex.map(one, jobs)
    finally:  # closed early (a server down, SIGTERM): the days not started are not sent, none is waited for
        down.set()
        ex.shutdown(wait=False, cancel_futures=True)


def _raised(made):
    """A worker's ``pool.Failed`` raised again here as what it was (a model's failure stays a ``SummarizeError``)."""
    if isinstance(made, BaseException):
        raise made
    if isinstance(made, pool.Failed):
        if made.kind == "SummarizeError":
            raise SummarizeError(made.message)
        raise pool.WorkerError(made)
    return made


def _failed(user_id: str, day: dt.date, run_id: str, reason: str) -> DayOutcome:
    return failed("summary", user_id, day, run_id, reason, summary_sha256=None)


def written(args: tuple[Summarizer, DayInput, dt.date]) -> tuple[SummaryOutcome, str, tuple[int, int]]:
    """A day's summary, the text of its file, and the lengths in bytes of the file before and after its carried
    sections (where ``open_items.with_sections`` puts the chain's); pure."""
    summarizer, inp, today = args
    result = summarizer.summarize(inp)
    doc = result.doc
    before, after = render_parts(doc)
    text = before + carried_sections(doc.folder, doc.language, doc.still_open, doc.closed) + after
    if parse_summary(text, today=today) != doc:  # never write what would not read back
        raise SummarizeError(f"rendered summary for {inp.text.day} does not read back as written")
    return result, text, (len(before.encode("utf-8")), len(after.encode("utf-8")))


@dataclass(frozen=True)
class Summarized:
    """What ``summarize_day`` hands back: the day's summary, its file's bytes and its partition's Parquet bytes."""

    user_id: str
    day: dt.date
    result: SummaryOutcome
    data: bytes  # the summary file
    path: Path  # where the file goes
    parquet: bytes  # the daily_summaries partition
    content_fingerprint: str
    candidates: tuple[Candidate, ...]  # for core memory (``flows.stages.candidates``)
    refused: tuple[str, ...] = ()  # the rule that refused each candidate left out (``transforms.candidates.scan_day``)
    chain_day: ChainDay | None = None  # what the open-items chain needs of the day, as its partition holds it
    cut: tuple[int, int] = (0, 0)  # bytes of the file before and after its carried sections (``written``)


def summarize_day(args) -> Summarized:
    """Read one day, summarize it, and make its file and partition bytes; writes nothing. The day's
    candidates for core memory are found in the same pass.

    ``args``: (settings, summarizer, user, day, today, the day's content fingerprint, run id, the user's
    days that have a note).
    """
    settings, summarizer, user_id, day, today, content_fingerprint, run_id, noted = args
    inp = day_input(settings, user_id, day, today, noted)
    result, text, cut = written((summarizer, inp, today))
    path = day_dir(settings, user_id, day) / f"{day.isoformat()}.summary.md"
    doc = result.doc
    table_row = {
        **doc.record(),
        "messages": sum(s.message_count for s in inp.sessions),  # every message, as the Sessions lines count them
        "backend": doc.generator.backend,
        "model": doc.generator.model,
        "model_sha256": doc.generator.model_sha256,
        "prompt_version": doc.generator.prompt_version,
        "fallback_fields": list(doc.generator.fallback_fields),
        "first_try_valid": result.first_try_valid,
        "attempts": result.attempts,
        "chunks": result.chunks,
        "prompt_tokens": result.prompt_tokens,
        "completion_tokens": result.completion_tokens,
        "llm_seconds": round(result.llm_seconds, 3),
        "provenance": json.dumps(result.provenance, sort_keys=True, ensure_ascii=False),
        "path": path.relative_to(settings.paths.archive).as_posix(),
        "content_fingerprint": content_fingerprint,
        "run_id": run_id,
        "resolutions": list(resolved := resolutions(inp.text.messages)),
    }
    parquet = warehouse.parquet_bytes(pa.Table.from_pylist([table_row], schema=DAILY_SUMMARIES.schema), DAILY_SUMMARIES)
    scan = scan_day(inp.text)
    return Summarized(
        user_id,
        day,
        result,
        text.encode("utf-8"),
        path,
        parquet,
        content_fingerprint,
        scan.candidates,
        scan.refused,
        ChainDay(day, tuple(doc.open_items), resolved),
        cut,
    )


def _write_one(settings: Settings, made: Summarized, run_id: str, ahead: open_items.Ahead | None = None) -> DayOutcome:
    """Write a day's summary file (when its bytes changed) and its partition; the ledger row says so.

    The file gets the "Still open" and "Closed" sections the chain gives it when ``ahead`` knows them, else it keeps
    those it had (``flows.stages.open_items`` recomputes them after the stage), so a day summarized again from the
    same content is not rewritten.
    """
    user_id, day, path, result = made.user_id, made.day, made.path, made.result
    carried = ahead.sections(user_id, made.chain_day) if ahead is not None and made.chain_day is not None else None
    data = open_items.with_sections(result.doc, made.data, made.cut, carried) if carried is not None else None
    if data is None:
        carried = None
        data = open_items.with_carried(path, result.doc, made.data)
    if not path.is_file() or path.read_bytes() != data:
        atomic_write_bytes(path, data, mode=READ_ONLY, needs=marker(settings))
    faults.checkpoint("summarize.file_written")
    warehouse.write_partition(settings.paths.warehouse, DAILY_SUMMARIES, made.parquet, day, user_id)
    doc = result.doc
    ledger_row = {
        "user_id": user_id,
        "date": day,
        "summary_status": "summarized",
        "summary_fingerprint": made.content_fingerprint,
        "summary_reason": None,
        "summary_run_id": run_id,
        "summary_sha256": hashlib.sha256(data).hexdigest(),
    }
    numbers = {
        "first_try_valid": int(result.first_try_valid),
        "with_fallback": int(bool(doc.generator.fallback_fields)),
        "completion_tokens": result.completion_tokens,
        "llm_seconds": float(result.llm_seconds),
    }
    return DayOutcome(
        user_id,
        day,
        "summarized",
        ledger_row=ledger_row,
        numbers=numbers,
        notes={
            "fallback_fields": doc.generator.fallback_fields,
            "fallback_reasons": result.reasons,
            "candidates": made.candidates,
            "refused_candidates": made.refused,
            "wrote": open_items.Wrote(made.chain_day, made.path.relative_to(settings.paths.archive).as_posix(), carried)
            if made.chain_day is not None
            else None,
        },
    )


def counts(res: StageResult) -> dict:
    return res.counts(("summarized",), NUMBERS)
