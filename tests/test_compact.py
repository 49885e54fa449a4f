"""Compact copies: one file per user of what whole-history readers read, always matching the partitions."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pytest
from helpers import NOW, compacts_match, kenang, scenario, table

from flows.pipeline import nightly
from flows.query.analyze import INTENTS, Analytics
from flows.store import compact, warehouse
from flows.store.verify import verify
from schemas.tables import COMPACTS, DAILY_SUMMARIES

pytestmark = pytest.mark.usefixtures("prefect_api")


def _all_intents(settings, user: str) -> dict:
    a = Analytics(settings, user)
    return {name: a.run(name).frame.to_dicts() for name in INTENTS}


def test_a_run_makes_each_users_copies_and_analyze_reads_them_with_the_same_answers(home):
    scenario(home)
    nightly(now=NOW, home=str(home.paths.home))
    users = sorted({r["user_id"] for r in table(home, "daily_summaries")})
    for user in users:
        for name in COMPACTS:
            files = compact.sources(home.paths.warehouse, name, user)
            assert files and all("compact" in f.parts for f in files), (name, user, files)
    assert compacts_match(home) == len(users) * len(COMPACTS)
    with_copies = {u: _all_intents(home, u) for u in users}
    for path in (home.paths.warehouse / "compact").rglob("*.parquet"):
        path.unlink()
    assert {u: _all_intents(home, u) for u in users} == with_copies  # from the partitions: the same answers
    assert verify(home).problems == 0


def test_a_partition_write_drops_the_copy_first_and_the_next_run_makes_it_again(home):
    scenario(home)
    nightly(now=NOW, home=str(home.paths.home))
    row = next(r for r in table(home, "daily_summaries") if r["user_id"] == "gading")
    wh = home.paths.warehouse
    month = f"{row['date']:%Y-%m}"
    assert compact.path_for(wh, "daily_summaries", "gading", month) is not None
    changed = {**row, "summary": "Dipindah ke Proxmox 9.", "importance": 9}
    # a write that crashed before the run's end: the copy is gone, never stale
    warehouse.write_partition(
        wh, DAILY_SUMMARIES, pa.Table.from_pylist([changed], schema=DAILY_SUMMARIES.schema), row["date"], "gading"
    )
    assert compact.path_for(wh, "daily_summaries", "gading", month) is None
    assert compact.path_for(wh, "message_times", "gading", month) is not None  # another table's copy stays
    assert compact.path_for(wh, "memory_chunks", "gading", month) is not None
    got = Analytics(home, "gading").run("importance_trend").frame.to_dicts()
    assert any(r["importance"] == 9 for r in got)
    assert compact.refresh(wh) == 1 and compacts_match(home) == len(COMPACTS) * 3
    assert any(r["importance"] == 9 for r in Analytics(home, "gading").run("importance_trend").frame.to_dicts())


def test_forget_drops_and_remakes_the_copies_without_what_was_forgotten(home):
    scenario(home)
    nightly(now=NOW, home=str(home.paths.home))
    day = next(r["date"] for r in table(home, "daily_summaries") if r["user_id"] == "gading")
    r = kenang("forget", "--user", "gading", "--day", day.isoformat(), "--yes", "--home", str(home.paths.home))
    assert r.exit_code == 0, r.stderr
    for f in compact.sources(home.paths.warehouse, "daily_summaries", "gading"):
        assert day not in warehouse.read_file(f, COMPACTS["daily_summaries"].table).column("date").to_pylist()
    compacts_match(home)


def test_a_noop_run_leaves_the_copies_untouched(home):
    scenario(home)
    nightly(now=NOW, home=str(home.paths.home))
    files = sorted((home.paths.warehouse / "compact").rglob("*.parquet"))
    before = [(p, p.stat().st_mtime_ns) for p in files]
    nightly(now=NOW, home=str(home.paths.home))
    assert [(p, p.stat().st_mtime_ns) for p in files] == before
    assert dt.date.today()  # the copies do not depend on the clock


def test_recall_reads_a_months_copy_or_its_partitions_and_finds_the_same(home):
    from flows.query.recall import Recaller
    from schemas.tables import MEMORY_CHUNKS

    scenario(home)
    nightly(now=NOW, home=str(home.paths.home))
    wh = home.paths.warehouse
    before = [(h.date, h.score, h.chunk.chunk_id) for h in Recaller(home, "rina").search("jadwal sahur")]
    assert before
    order = [c.chunk_id for c in Recaller(home, "rina")._data.refs]  # from the copies, unsorted by the query
    row = next(r for r in table(home, "memory_chunks") if r["user_id"] == "rina")
    rows = [r for r in table(home, "memory_chunks") if r["user_id"] == "rina" and r["date"] == row["date"]]
    warehouse.write_partition(
        wh, MEMORY_CHUNKS, pa.Table.from_pylist(rows, schema=MEMORY_CHUNKS.schema), row["date"], "rina"
    )  # the same rows, rewritten: the month's copy goes
    month = f"{row['date']:%Y-%m}"
    assert compact.path_for(wh, "memory_chunks", "rina", month) is None
    assert not any("compact" in f.parts for f in compact.sources(wh, "memory_chunks", "rina"))
    assert [(h.date, h.score, h.chunk.chunk_id) for h in Recaller(home, "rina").search("jadwal sahur")] == before
    assert [c.chunk_id for c in Recaller(home, "rina")._data.refs] == order  # from the partitions, sorted
    compact.refresh(wh)
    assert compact.path_for(wh, "memory_chunks", "rina", month) is not None
    assert [(h.date, h.score, h.chunk.chunk_id) for h in Recaller(home, "rina").search("jadwal sahur")] == before


def test_a_day_whose_chunks_all_go_takes_its_months_copy_with_it(home):
    from flows.stages import recall_index

    scenario(home)
    nightly(now=NOW, home=str(home.paths.home))
    wh = home.paths.warehouse
    row = next(r for r in table(home, "memory_chunks") if r["user_id"] == "gading")
    month = f"{row['date']:%Y-%m}"
    assert compact.path_for(wh, "memory_chunks", "gading", month) is not None
    recall_index._write(home, "gading", row["date"], [], [], None, "r")  # e.g. every message forgotten
    assert compact.path_for(wh, "memory_chunks", "gading", month) is None
    compact.refresh(wh)
    assert row["date"] not in {
        r["date"]
        for f in compact.sources(wh, "memory_chunks", "gading")
        for r in warehouse.read_file(f, COMPACTS["memory_chunks"].table).to_pylist()
    }
    compacts_match(home)
