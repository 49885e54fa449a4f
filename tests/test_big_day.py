"""One huge day: a Claude Code log bigger than collect's read block is streamed, every message loaded,
and the extractive note of a day of 20,000 messages is written (benchmarks/big_day.py times the full size).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import random
from collections import Counter

import pyarrow.parquet as pq
import pytest
from helpers import JAKARTA, table

from flows.config import edit_config, init_home
from flows.pipeline import nightly
from flows.stages import collect
from flows.stages.summarize import written
from flows.store import mount, warehouse
from schemas.tables import MEMORY_CHUNKS
from transforms.chunk import Turn, iter_session_chunks, session_chunks
from transforms.collect import plan
from transforms.extract import DayMessage, DayText
from transforms.summarize import DayInput, ExtractiveSummarizer, SessionMeta, bounded_text

LONG_AGO = dt.datetime(2026, 1, 1, tzinfo=JAKARTA).timestamp()
DAY = dt.date(2025, 3, 10)
SESSION = "7c1d2e3f-4a5b-4c6d-8e9f-0a1b2c3d4e5f"


def claude_code_log(lines: int, days: int = 2, padding: int = 0) -> tuple[bytes, int]:
    """A Claude Code log of ``lines`` lines over ``days`` local days: (its bytes, the messages it holds)."""
    start = dt.datetime.combine(DAY, dt.time(0, 5), tzinfo=JAKARTA)
    step = dt.timedelta(seconds=(days * 86400 - 600) / lines)
    out, parent, messages = [], None, 0
    for i in range(lines):
        ts = (start + step * i).astimezone(dt.UTC).isoformat().replace("+00:00", "Z")
        uid = f"{i:08x}-0000-4000-8000-000000000033"
        base = {"parentUuid": parent, "sessionId": SESSION, "uuid": uid, "timestamp": ts, "cwd": "/home/dev/p"}
        words = f"step {i} of the plan: read module {i % 37} and fix the failing parser test" + " ok" * padding
        if i % 997 == 996:
            record = {"type": "summary", "summary": f"part {i}", "leafUuid": uid}
        elif i % 3 == 0:
            record = {**base, "type": "user", "message": {"role": "user", "content": f"Please {words}."}}
        elif i % 3 == 1:
            content = [{"type": "text", "text": f"I will {words}. Done."}]
            record = {**base, "type": "assistant", "message": {"role": "assistant", "content": content}}
        else:
            content = [{"type": "tool_use", "id": f"toolu_{i}", "name": "Read", "input": {"file_path": f"m{i}.py"}}]
            record = {**base, "type": "assistant", "message": {"role": "assistant", "content": content}}
        out.append(json.dumps(record) + "\n")
        if record["type"] != "summary":
            parent, messages = uid, messages + 1
    return "".join(out).encode("utf-8"), messages


@pytest.mark.usefixtures("prefect_api")
def test_a_multi_day_log_bigger_than_a_read_block_is_streamed_and_every_message_is_loaded(home, tmp_path):
    data, expected = claude_code_log(6000, days=3, padding=30)
    assert len(data) > 2 * (1 << 20)  # more than two of collect's read blocks
    log = tmp_path / "claude" / "projects" / "demo" / f"{SESSION}.jsonl"
    log.parent.mkdir(parents=True)
    log.write_bytes(data)
    os.utime(log, (LONG_AGO, LONG_AGO))
    edit_config(
        home.paths.home,
        lambda c: c.setdefault("sources", []).append(
            {"name": "cc", "kind": "claude_code", "path": str(tmp_path / "claude" / "projects")}
        ),
    )
    now = dt.datetime.combine(DAY + dt.timedelta(days=3), dt.time(3, 0), tzinfo=JAKARTA)
    first = nightly(now=now, home=str(home.paths.home))
    assert first["ingest"]["rejected"] == 0
    rows = table(home, "messages")
    assert len(rows) == expected
    assert {r["date"] for r in rows} == {DAY + dt.timedelta(days=k) for k in range(3)}
    again = nightly(now=now, home=str(home.paths.home))
    assert again["load"]["loaded"] == 0 and len(table(home, "messages")) == expected


def test_planning_a_log_from_its_streamed_lines_gives_the_segments_of_cutting_it_whole(tmp_path):
    data, _ = claude_code_log(3000, days=2, padding=40)
    data += b'{"type": "user", "sessionId": "unfinished'  # a last line still being written: left for later
    src = tmp_path / "log.jsonl"
    src.write_bytes(data)
    args = dict(context=None, last=None, tz=JAKARTA, eligible=lambda d: True, undated_day=DAY, start=0)
    complete = data[: data.rfind(b"\n") + 1]
    whole = plan("claude_code", complete.splitlines(keepends=True), **args)
    with open(src, "rb") as fh:
        planned = plan("claude_code", collect._complete_lines(fh, 0, len(data)), **args)
        streamed = [s.prefix + b"".join(collect._pieces(fh, 0, s.ranges)) for s in planned.segments]
    assert streamed == [s.prefix + b"".join(complete[a:b] for a, b in s.ranges) for s in whole.segments]
    assert len(streamed) == 2
    assert (planned.taken, planned.lines, planned.last) == (whole.taken, whole.lines, whole.last)
    assert planned.taken == data.rfind(b"\n") + 1


def day_of(n: int) -> DayInput:
    start = dt.datetime.combine(DAY, dt.time(0, 5), tzinfo=JAKARTA)
    msgs = tuple(
        DayMessage(
            SESSION,
            "user" if i % 2 == 0 else "assistant",
            f"We should fix the parser test in module {i % 50} before the release."
            if i % 2 == 0
            else f"I fixed module {i % 50}; the loader now streams row groups.",
            start + dt.timedelta(seconds=3 * i),
        )
        for i in range(n)
    )
    text = DayText(user_id="default", day=DAY, tz=JAKARTA, messages=msgs)
    meta = SessionMeta(SESSION, msgs[0].ts, msgs[-1].ts, n, f"2025/03/10/{SESSION}.jsonl")
    return DayInput(text, (meta,), DAY + dt.timedelta(days=1))


def test_the_extractive_note_of_a_twenty_thousand_message_day_is_written():
    day = day_of(20_000)
    bounded = bounded_text(day.text)
    assert len(bounded.messages) < len(day.text.messages)
    assert bounded.messages[0] == day.text.messages[0] and bounded.messages[-1] == day.text.messages[-1]
    result, text, _ = written((ExtractiveSummarizer(), day, day.today))
    assert result.doc.summary and result.doc.session_lines[0].messages == 20_000
    assert "module" in text


def test_a_day_within_the_bounds_is_read_whole_so_its_note_is_unchanged():
    day = day_of(400)
    assert bounded_text(day.text) is day.text


def test_a_day_of_few_very_long_messages_keeps_every_message_cut_to_one_length():
    day = day_of(10)
    long = DayText(
        "default",
        DAY,
        JAKARTA,
        tuple(DayMessage(m.session_id, m.role, (m.content + " ") * 20_000, m.ts) for m in day.text.messages),
    )
    bounded = bounded_text(long, max_messages=100, max_chars=50_000)
    assert len(bounded.messages) == 10
    assert sum(len(m.content) for m in bounded.messages) <= 50_000
    assert all(m.content.startswith(o.content[:100]) for m, o in zip(bounded.messages, long.messages, strict=True))


def test_a_session_chunked_as_its_turns_come_gives_the_chunks_of_chunking_it_whole():
    rng = random.Random(33)
    words = "I moved the NAS today . we fixed the parser ! saya pindah ke Bandung ? ok".split()
    for case in range(60):
        turns = []
        for seq in range(rng.randint(0, 80)):
            role = rng.choice(("user", "assistant", "assistant", "tool"))
            body = " ".join(rng.choice(words) for _ in range(rng.choice((0, 3, 12, 40, 400))))
            flags = ("injection",) if rng.random() < 0.1 else ()
            turns.append(Turn(seq, role, body if rng.random() > 0.05 else "   ", flags))
        whole = session_chunks("u", DAY, f"s{case}", turns)
        assert list(iter_session_chunks("u", DAY, f"s{case}", iter(turns))) == whole


def _rows_but_run_id(settings, name: str) -> list[dict]:
    return [{k: v for k, v in r.items() if k != "run_id"} for r in table(settings, name)]


@pytest.mark.usefixtures("prefect_api")
def test_a_day_bigger_than_a_batch_is_loaded_and_indexed_in_batches_as_it_would_be_whole(home, tmp_path):
    data, expected = claude_code_log(1500, days=2, padding=5)
    now = dt.datetime.combine(DAY + dt.timedelta(days=2), dt.time(3, 0), tzinfo=JAKARTA)
    whole, _ = init_home(tmp_path / "whole", {"summarizer": {"backend": "extractive"}, "embedder": {"backend": "none"}})
    mount.claim(whole)
    edit_config(home.paths.home, lambda c: c.setdefault("limits", {}).update(batch_rows=64))
    for settings in (home, whole):
        log = settings.paths.active / f"{SESSION}.jsonl"
        log.write_bytes(data)
        os.utime(log, (LONG_AGO, LONG_AGO))
        nightly(now=now, home=str(settings.paths.home))
    batched = table(home, "messages")
    assert len(batched) == expected and max(Counter(r["date"] for r in batched).values()) > 5 * 64
    for name in ("sessions", "messages", "memory_chunks"):
        assert _rows_but_run_id(home, name) == _rows_but_run_id(whole, name), name
    chunks = warehouse.partition_file(home.paths.warehouse, MEMORY_CHUNKS, DAY, "default")
    assert pq.ParquetFile(chunks).metadata.num_row_groups > 1  # written a batch at a time
    again = nightly(now=now, home=str(home.paths.home))
    assert again["load"]["loaded"] == 0 and again["index"]["indexed"] == 0


def test_a_collected_segment_is_counted_in_ingest_without_keeping_its_messages(home, tmp_path):
    """The load reads a segment again from the archive, so what ingest hands on holds its count, not its
    messages: a huge log's first session would otherwise stay in the flow's memory all night."""
    import time

    from flows.stages import ingest

    data, expected = claude_code_log(900, days=2)
    log = tmp_path / "claude" / "projects" / "demo" / f"{SESSION}.jsonl"
    log.parent.mkdir(parents=True)
    log.write_bytes(data)
    os.utime(log, (LONG_AGO, LONG_AGO))
    settings = edit_config(
        home.paths.home,
        lambda c: c.setdefault("sources", []).append(
            {"name": "cc", "kind": "claude_code", "path": str(tmp_path / "claude" / "projects")}
        ),
    )
    now = dt.datetime.combine(DAY + dt.timedelta(days=2), dt.time(3, 0), tzinfo=JAKARTA)
    collect.collect(settings, now, time.time())
    got = ingest.scan(settings, now, time.time() + 86400)
    assert len(got.ready) == 2 and not got.rejected and not got.parsed
    assert sum(r.messages for r in got.ready) == expected
    assert all(r.resolved.session.messages == () for r in got.ready)
    assert {r.resolved.day for r in got.ready} == {DAY, DAY + dt.timedelta(days=1)}
