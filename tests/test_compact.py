"""Compact copies: one file per user of what whole-history readers read, always matching the partitions."""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
import random

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from helpers import NOW, compacts_match, kenang, scenario, table

from flows.pipeline import nightly
from flows.query.analyze import INTENTS, Analytics
from flows.store import compact, ledger, warehouse
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
    recall_index._write(home, "gading", row["date"], None)  # no chunks left: e.g. every message forgotten
    assert compact.path_for(wh, "memory_chunks", "gading", month) is None
    compact.refresh(wh)
    assert row["date"] not in {
        r["date"]
        for f in compact.sources(wh, "memory_chunks", "gading")
        for r in warehouse.read_file(f, COMPACTS["memory_chunks"].table).to_pylist()
    }
    compacts_match(home)


def _month_of_summaries(wh, user: str, days: list[dt.date]) -> None:
    def blank(t):
        if pa.types.is_list(t):
            return []
        if pa.types.is_string(t):
            return ""
        return False if pa.types.is_boolean(t) else 0

    for d in days:
        row = {f.name: blank(f.type) for f in DAILY_SUMMARIES.schema}
        row.update(user_id=user, date=d, summary=f"Hari {d.day}.", importance=d.day % 10, mood="calm")
        data = pa.Table.from_pylist([row], schema=DAILY_SUMMARIES.schema)
        warehouse.write_partition(wh, DAILY_SUMMARIES, data, d, user)
        # as a load does: every day with partitions has its row in the ledger
        ledger.write_days(
            wh,
            [
                dict(
                    user_id=user,
                    date=d,
                    status="loaded",
                    archive_fingerprint="f",
                    sessions=1,
                    messages=1,
                    run_id="r",
                    updated_at=dt.datetime(2026, 7, 20, tzinfo=dt.UTC),
                )
            ],
        )


def _copy_rows(wh, user: str, month: str) -> list[dict]:
    path = compact.path_for(wh, "daily_summaries", user, month)
    assert path is not None
    return warehouse.read_file(path, COMPACTS["daily_summaries"].table).to_pylist()


def test_a_new_day_sets_the_copy_aside_and_the_next_copy_is_that_base_and_the_day(tmp_path, monkeypatch):
    wh = tmp_path
    _month_of_summaries(wh, "gading", [dt.date(2026, 7, d) for d in (1, 2, 3)])
    assert compact.refresh(wh) == 1
    path = warehouse.compact_file(wh, "daily_summaries", "gading", "2026-07")
    base, added = warehouse.compact_base(path)
    _month_of_summaries(wh, "gading", [dt.date(2026, 7, 4)])
    assert not path.exists() and base.is_file() and warehouse.intact(base)
    assert warehouse.compact_added_days(path) == {dt.date(2026, 7, 4)}
    # meanwhile a reader opens the base and the new day's partition, not the month's four partitions
    sources = compact.sources(wh, "daily_summaries", "gading")
    assert sources[0] == base and [f.parent.parent.name for f in sources[1:]] == ["date=2026-07-04"]
    got = compact.read_user(wh, "daily_summaries", "gading", columns=["date"], months=["2026-07"])
    assert got["date"].to_pylist() == [dt.date(2026, 7, d) for d in (1, 2, 3, 4)]
    read = []
    real = compact._read
    monkeypatch.setattr(compact, "_read", lambda files, c: read.append(files) or real(files, c))
    # the user's newest month: a run's end keeps the base and the day beside it, and writes no copy
    assert compact.refresh(wh) == 0
    assert not path.exists() and base.is_file() and warehouse.compact_added_days(path) == {dt.date(2026, 7, 4)}
    assert compact.sources(wh, "daily_summaries", "gading") == sources
    # more days than the base holds: the copy is made of the base and them...
    _month_of_summaries(wh, "gading", [dt.date(2026, 7, d) for d in (5, 6)])
    assert compact.refresh(wh) == 1
    assert read == []  # not made from the month's partitions...
    full = compact.build(wh, COMPACTS["daily_summaries"], "gading", "2026-07")
    assert full is not None and _copy_rows(wh, "gading", "2026-07") == full.to_pylist()  # ...and the same rows
    assert warehouse.intact(path) and not base.exists() and not added.exists()


def test_a_kept_month_is_made_whole_once_a_later_month_has_days(tmp_path):
    wh = tmp_path
    _month_of_summaries(wh, "gading", [dt.date(2026, 7, d) for d in (1, 2, 3)])
    compact.refresh(wh)
    _month_of_summaries(wh, "gading", [dt.date(2026, 7, 4)])
    assert compact.refresh(wh) == 0  # kept as its base and the day
    july = warehouse.compact_file(wh, "daily_summaries", "gading", "2026-07")
    assert not july.exists()
    _month_of_summaries(wh, "gading", [dt.date(2026, 8, 1)])
    assert compact.refresh(wh) == 2  # July made whole, August's first copy
    full = compact.build(wh, COMPACTS["daily_summaries"], "gading", "2026-07")
    assert full is not None and _copy_rows(wh, "gading", "2026-07") == full.to_pylist()
    assert not [p for p in july.parent.iterdir() if p.name.endswith((".base.parquet", ".added.json"))]


def test_a_users_months_listed_from_their_copies_are_those_a_look_at_each_month_finds(tmp_path, monkeypatch):
    """Over many months ``user_months`` lists the user's copies once; it finds what a stat of each month finds: a
    copy, a month without one (its partitions), a copy set aside as a base with a new day, a copy removed by hand."""
    wh = tmp_path
    for month in range(1, 8):
        _month_of_summaries(wh, "gading", [dt.date(2026, month, d) for d in (1, 2)])
    compact.refresh(wh)
    _month_of_summaries(wh, "gading", [dt.date(2026, 7, 3)])  # July's copy set aside, the day beside it
    _month_of_summaries(wh, "gading", [dt.date(2026, 3, 5)])  # March's copy dropped: its partitions
    warehouse.compact_file(wh, "daily_summaries", "gading", "2026-05").unlink()  # by hand
    _month_of_summaries(wh, "rina", [dt.date(2026, 2, 1)])
    listed = {u: compact.user_months(wh, "daily_summaries", u) for u in ("gading", "rina", "nobody")}
    assert [m for m, _ in listed["gading"]] == [f"2026-{m:02d}" for m in range(1, 8)]
    monkeypatch.setattr(compact, "_LISTED_FROM", 1000)
    assert {u: compact.user_months(wh, "daily_summaries", u) for u in listed} == listed


def test_a_kept_months_days_are_never_more_than_keep_parts(tmp_path, monkeypatch):
    """Days small beside a big base: between runs a reader opens fewer than ``KEEP_PARTS`` files besides it."""
    wh = tmp_path
    _month_of_summaries(wh, "gading", [dt.date(2026, 7, 1)])
    compact.refresh(wh)
    path = warehouse.compact_file(wh, "daily_summaries", "gading", "2026-07")
    base = warehouse.compact_base(path)[0]
    real = compact._rows
    monkeypatch.setattr(compact, "_rows", lambda f: 10**6 if f == base else real(f))  # the base outweighs any days
    kept = []
    for day in range(2, 2 + 2 * compact.KEEP_PARTS):
        _month_of_summaries(wh, "gading", [dt.date(2026, 7, day)])
        if compact.refresh(wh) == 0:
            kept.append(len(compact.sources(wh, "daily_summaries", "gading")) - 1)
        assert compact.read_user(wh, "daily_summaries", "gading", columns=["date"])["date"].to_pylist() == [
            dt.date(2026, 7, d) for d in range(1, day + 1)
        ]
    assert max(kept) == compact.KEEP_PARTS - 1  # the count alone made the copy
    full = compact.build(wh, COMPACTS["daily_summaries"], "gading", "2026-07")
    got = compact.read_user(wh, "daily_summaries", "gading")
    assert full is not None and got.to_pylist() == full.to_pylist()


def test_a_big_months_copy_is_made_not_kept(tmp_path, monkeypatch):
    """A month of recall chunks of ``WHOLE_MONTH_BYTES`` or more is kept as its copy, which the recall pack reads a
    batch at a time."""
    wh = tmp_path
    _month_of_summaries(wh, "gading", [dt.date(2026, 7, d) for d in (1, 2, 3)])
    compact.refresh(wh)
    _month_of_summaries(wh, "gading", [dt.date(2026, 7, 4)])
    monkeypatch.setattr(compact, "WHOLE_MONTH_BYTES", 1)
    assert compact.refresh(wh) == 0  # summaries: kept, whatever their size
    chunks = COMPACTS["memory_chunks"]
    for d in (1, 2, 3):
        _write_day(wh, dt.date(2026, 7, d), _chunk_rows(dt.date(2026, 7, d), 20, seed=d), row_group=7)
    compact.refresh(wh)
    _write_day(wh, dt.date(2026, 7, 4), _chunk_rows(dt.date(2026, 7, 4), 5, seed=4), row_group=7)
    path = warehouse.compact_file(wh, "memory_chunks", "gading", "2026-07")
    assert warehouse.compact_base(path)[0].is_file()
    assert compact.refresh(wh) == 1  # recall chunks: a big month is made into its copy
    full = compact.build(wh, chunks, "gading", "2026-07")
    assert full is not None and warehouse.read_file(path, chunks.table).to_pylist() == full.to_pylist()
    assert not [p for p in path.parent.iterdir() if p.name.endswith((".base.parquet", ".added.json"))]


def _set_aside(wh, days: tuple[int, ...], new: int):
    """A July of summaries on ``days`` with its copy made, then day ``new`` (after them) written: (the copy's
    path, its base, its list of added days)."""
    _month_of_summaries(wh, "gading", [dt.date(2026, 7, d) for d in days])
    compact.refresh(wh)
    path = warehouse.compact_file(wh, "daily_summaries", "gading", "2026-07")
    base, added = warehouse.compact_base(path)
    _month_of_summaries(wh, "gading", [dt.date(2026, 7, new)])
    return path, base, added


def test_a_rewritten_day_removes_the_copy_and_its_base_so_no_file_keeps_the_old_rows(tmp_path):
    wh = tmp_path
    path, base, added = _set_aside(wh, (1, 2), 3)  # a new day: set aside
    assert base.is_file()
    _month_of_summaries(wh, "gading", [dt.date(2026, 7, 2)])  # a day the base holds (a forget, a reload)
    assert not path.exists() and not base.exists() and not added.exists()
    _month_of_summaries(wh, "gading", [dt.date(2026, 7, 1)])
    compact.refresh(wh)
    full = compact.build(wh, COMPACTS["daily_summaries"], "gading", "2026-07")
    assert full is not None and _copy_rows(wh, "gading", "2026-07") == full.to_pylist()


def test_a_base_a_failed_run_left_beside_its_copy_is_never_paired_with_a_new_day(tmp_path, monkeypatch):
    """A run that failed after making a month's copy, before removing its base, left both. A new day then sets the
    copy aside: the old base goes first, so no crash in between pairs it with the new day's list and a reader of
    the month sees every day."""
    wh = tmp_path
    path, base, added = _set_aside(wh, (1, 2, 3), 4)
    left = {f: f.read_bytes() for f in (base, warehouse.checksum_file(base), added)}  # days 1 to 3, and [4]
    compact.refresh(wh, check=True)  # a backfill's end: every copy made
    assert not base.exists()  # removed with its copy made
    for f, data in left.items():
        f.write_bytes(data)
    real = os.replace

    def crash(src, dst, *args, **kwargs):  # the power goes before the copy is set aside
        if str(dst) == str(base):
            raise OSError("power lost")
        return real(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError):
        _month_of_summaries(wh, "gading", [dt.date(2026, 7, 5)])
    monkeypatch.setattr(os, "replace", real)
    assert not base.exists() and path.exists()
    path.unlink()  # and, say, a reload of a day that crashed once it had removed the copy
    got = compact.read_user(wh, "daily_summaries", "gading", columns=["date"])
    assert got["date"].to_pylist() == [dt.date(2026, 7, d) for d in (1, 2, 3, 4)]


def test_a_reader_takes_a_base_only_while_it_is_the_bytes_kenang_set_aside(tmp_path):
    wh = tmp_path
    _, base, _ = _set_aside(wh, (1, 2), 3)
    assert compact.sources(wh, "daily_summaries", "gading")[0] == base
    base.chmod(0o644)
    base.write_bytes(base.read_bytes()[:-1] + b"x")
    assert [f.parent.parent.name for f in compact.sources(wh, "daily_summaries", "gading")] == [
        "date=2026-07-01",
        "date=2026-07-02",
        "date=2026-07-03",
    ]


def test_a_whole_history_read_lists_again_once_when_a_file_it_listed_is_gone(tmp_path, monkeypatch):
    """A run's end makes a copy and removes its base between a reader's listing and its read: listed again."""
    wh = tmp_path
    _month_of_summaries(wh, "gading", [dt.date(2026, 7, d) for d in (1, 2)])
    compact.refresh(wh)
    real, listed = compact.sources, []

    def first_with_a_file_gone(*args, **kwargs):
        listed.append(real(*args, **kwargs))
        return [tmp_path / ".month=2026-07.base.parquet", *listed[-1]] if len(listed) == 1 else listed[-1]

    monkeypatch.setattr(compact, "sources", first_with_a_file_gone)
    got = compact.read_user(wh, "daily_summaries", "gading", columns=["date"])
    assert got["date"].to_pylist() == [dt.date(2026, 7, 1), dt.date(2026, 7, 2)] and len(listed) == 2


def test_a_base_that_is_not_the_bytes_kenang_wrote_is_not_used(tmp_path):
    wh = tmp_path
    _month_of_summaries(wh, "gading", [dt.date(2026, 7, 1)])
    compact.refresh(wh)
    path = warehouse.compact_file(wh, "daily_summaries", "gading", "2026-07")
    _month_of_summaries(wh, "gading", [dt.date(2026, 7, 2)])
    base, _ = warehouse.compact_base(path)
    other = compact.build(wh, COMPACTS["daily_summaries"], "gading", "2026-07")  # both days: not what it held
    assert other is not None
    base.chmod(0o644)
    base.write_bytes(warehouse.parquet_bytes(other.filter(pa.array([True, False])), COMPACTS["daily_summaries"].table))
    base.with_name(base.name).touch()
    compact.refresh(wh)
    full = compact.build(wh, COMPACTS["daily_summaries"], "gading", "2026-07")
    assert full is not None and _copy_rows(wh, "gading", "2026-07") == full.to_pylist()
    assert [r["date"] for r in full.to_pylist()] == [dt.date(2026, 7, 1), dt.date(2026, 7, 2)]


@pytest.mark.usefixtures("prefect_api")
def test_nights_of_new_days_keep_every_copy_equal_to_its_partitions(home):
    from helpers import drop, md

    from flows.pipeline import nightly as run

    jakarta = NOW.tzinfo
    for day in (17, 18, 19):
        drop(
            home,
            f"d{day}.md",
            md(f"2026-07-{day}", "0900", ("user", f"Setup pve{day} hari ini."), ("assistant", "Oke.")),
        )
        run(now=dt.datetime(2026, 7, day + 1, 3, 0, tzinfo=jakarta), home=str(home.paths.home))
        assert compacts_match(home) == len(COMPACTS)
    wh = home.paths.warehouse
    # the newest month may be kept as its base and its new days (checked above); never an older one, nor a base alone
    kept = [p for p in (wh / "compact").rglob(".month=*") if ".base." in p.name or p.name.endswith(".added.json")]
    assert all(".month=2026-07." in p.name for p in kept)
    for p in kept:
        if p.name.endswith(".base.parquet"):
            assert p.with_name(p.name.replace(".base.parquet", ".added.json")).is_file()
            assert not p.with_name(p.name.removeprefix(".").replace(".base.parquet", ".parquet")).exists()


def _chunk_rows(day: dt.date, n: int, seed: int, same_key: bool = False) -> pa.Table:
    """``n`` memory_chunks rows of one user-day in a scrambled order (sessions, sources and seqs mixed)."""
    rnd = random.Random(seed)
    rows = []
    for i in range(n):
        source = rnd.choice(["transcript", "summary", "index", "facts"])
        rows.append(
            {
                "chunk_id": "same" if same_key else f"c{rnd.randrange(10**6):06d}-{i}",
                "user_id": "gading",
                "date": day,
                "session_id": None if source != "transcript" else f"s{rnd.randrange(3)}",
                "source": source,
                "seq": 0 if same_key else rnd.randrange(50),
                "text": f"teks {i} " * rnd.randrange(1, 4),
                "flagged": [],
                "terms": sorted({f"t{rnd.randrange(20)}" for _ in range(3)}),
                "tfs": [1, 2, 1],
                "embedder_id": None,
                "embedding": None,
                "run_id": "r",
            }
        )
    for r in rows:
        r["tfs"] = r["tfs"][: len(r["terms"])]
    return pa.Table.from_pylist(rows, schema=COMPACTS["memory_chunks"].source.schema)


def _write_day(wh, day: dt.date, rows: pa.Table, row_group: int) -> None:
    """A partition written in row groups of ``row_group`` rows, as a day streamed in batches is."""
    c = COMPACTS["memory_chunks"]
    sink = pa.BufferOutputStream()
    pq.write_table(rows, sink, row_group_size=row_group)
    warehouse.write_partition(wh, c.source, sink.getvalue().to_pybytes(), day, "gading")


def test_a_copy_is_written_a_row_group_at_a_time_in_the_order_one_sort_of_the_month_gives(tmp_path, monkeypatch):
    """Each day is sorted on its own and read a row group at a time: the rows are those of one ``ORDER BY ALL``
    of the month, in row groups of the copy's ``row_group_rows``, and a day whose rows are alike on the key
    (sorted by every column instead) too; a copy made from its base and a day added after its days is the same
    file."""
    monkeypatch.setitem(COMPACTS, "memory_chunks", dataclasses.replace(COMPACTS["memory_chunks"], row_group_rows=16))
    monkeypatch.setattr(compact, "WHOLE_MONTH_BYTES", 0)  # every month made a day at a time
    wh, c = tmp_path, COMPACTS["memory_chunks"]
    days = [dt.date(2026, 7, d) for d in (1, 3, 4)]
    for i, day in enumerate(days):
        _write_day(wh, day, _chunk_rows(day, 61, seed=i, same_key=day.day == 4), row_group=7)
    assert compact.refresh(wh, check=True) == 1  # no ledger here: every folder is looked into
    path = warehouse.compact_file(wh, "memory_chunks", "gading", "2026-07")
    want = compact.build(wh, c, "gading", "2026-07")
    assert want is not None and warehouse.read_file(path, c.table).to_pylist() == want.to_pylist()
    groups = [pq.ParquetFile(path).metadata.row_group(g).num_rows for g in range(pq.ParquetFile(path).num_row_groups)]
    assert groups == [16] * 11 + [7]  # 183 rows
    whole = path.read_bytes()
    _write_day(wh, dt.date(2026, 7, 5), _chunk_rows(dt.date(2026, 7, 5), 40, seed=9), row_group=5)  # a new day
    base, _ = warehouse.compact_base(path)
    assert base.is_file() and base.read_bytes() == whole
    assert compact.refresh(wh, check=True) == 1
    appended = path.read_bytes()
    assert not base.exists()
    want = compact.build(wh, c, "gading", "2026-07")
    assert want is not None and warehouse.read_file(path, c.table).to_pylist() == want.to_pylist()
    files = compact.month_parts(wh, c, "gading", "2026-07")
    assert compact.copy_bytes(("memory_chunks", files)) == appended  # made whole: the very bytes
    monkeypatch.setattr(compact, "WHOLE_MONTH_BYTES", 2**40)
    assert compact.copy_bytes(("memory_chunks", files)) == appended  # and sorted whole in DuckDB: the same
    monkeypatch.setattr(compact, "WHOLE_MONTH_BYTES", 0)
    # a base and a day between its days (not what a night sets aside, but read as well): the whole month's bytes
    old = tmp_path / "old.parquet"
    old.write_bytes(whole)
    middle = dt.date(2026, 7, 2)
    _write_day(wh, middle, _chunk_rows(middle, 23, seed=5), row_group=4)
    files = compact.month_parts(wh, c, "gading", "2026-07")
    in_base = [f for f in files if "2026-07-05" not in str(f) and "2026-07-02" not in str(f)]
    assert len(in_base) == 3
    both = compact.copy_bytes(
        ("memory_chunks", [f for f in files if f not in in_base], (old, [middle, dt.date(2026, 7, 5)]))
    )
    assert both == compact.copy_bytes(("memory_chunks", files))


def test_a_small_months_copy_is_its_base_and_the_new_day_appended_with_no_sort_of_the_month(tmp_path, monkeypatch):
    """A night's new day, after every day of the copy, is appended to the base's rows as they are: the rows are
    those one sort of the month gives, and the month is not sorted again. A day among the base's days sorts it."""
    wh, c = tmp_path, COMPACTS["memory_chunks"]
    for i, day in enumerate([dt.date(2026, 7, 1), dt.date(2026, 7, 3)]):
        _write_day(wh, day, _chunk_rows(day, 61, seed=i), row_group=7)
    assert compact.refresh(wh, check=True) == 1
    path = warehouse.compact_file(wh, "memory_chunks", "gading", "2026-07")
    new = dt.date(2026, 7, 4)
    _write_day(wh, new, _chunk_rows(new, 40, seed=9, same_key=True), row_group=5)  # its rows alike on the key
    sorted_months = []
    real = compact._sorted_month
    monkeypatch.setattr(
        compact, "_sorted_month", lambda c, f, base, a: sorted_months.append(base) or real(c, f, base, a)
    )
    assert compact.refresh(wh) == 1
    assert [b for b in sorted_months if b is not None] == []  # (the day alike on the key is sorted on its own)
    want = compact.build(wh, c, "gading", "2026-07")
    assert want is not None and warehouse.read_file(path, c.table).to_pylist() == want.to_pylist()
    # a base and a day among its days (not what a night sets aside, but made as well): the month sorted again
    old = tmp_path / "old.parquet"
    old.write_bytes(path.read_bytes())
    middle = dt.date(2026, 7, 2)
    _write_day(wh, middle, _chunk_rows(middle, 23, seed=5), row_group=4)
    files = [f for f in compact.month_parts(wh, c, "gading", "2026-07") if "2026-07-02" in str(f)]
    made = compact.copy_bytes(("memory_chunks", files, (old, [middle])))
    assert [b for b in sorted_months if b is not None] == [old]
    want = compact.build(wh, c, "gading", "2026-07")
    assert (
        want is not None
        and warehouse.conformed(pq.read_table(pa.BufferReader(made)), c.table).to_pylist() == want.to_pylist()
    )


def test_rebatched_gives_the_same_batches_however_the_rows_came():
    rows = pa.table({"n": list(range(23))})
    one = [t.to_pylist() for t in compact.rebatched([rows], 5)]
    pieces = [rows.slice(0, 3), rows.slice(3, 0), rows.slice(3, 11), rows.slice(14, 9)]
    assert [t.to_pylist() for t in compact.rebatched(pieces, 5)] == one
    assert [len(b) for b in one] == [5, 5, 5, 5, 3]


@pytest.mark.parametrize("whole_below", [0, 2**40], ids=["day by day", "sorted whole"])
def test_a_month_with_a_partition_from_before_a_newer_column_makes_its_copy_with_that_column_null(
    tmp_path, monkeypatch, whole_below
):
    """``resolutions`` came after the first summaries were written: an older day's partition lacks it, and its
    copy reads it as NULL, as every reader of a partition does."""
    monkeypatch.setattr(compact, "WHOLE_MONTH_BYTES", whole_below)
    wh = tmp_path
    _month_of_summaries(wh, "gading", [dt.date(2026, 7, 1), dt.date(2026, 7, 2)])
    old = warehouse.partition_file(wh, DAILY_SUMMARIES, dt.date(2026, 7, 1), "gading")
    data = warehouse.read_file(old, DAILY_SUMMARIES).drop_columns(["resolutions"])
    assert "resolutions" not in data.column_names
    warehouse.write_partition(
        wh,
        DAILY_SUMMARIES,
        warehouse.parquet_bytes_of([data], _without(DAILY_SUMMARIES, "resolutions")),
        dt.date(2026, 7, 1),
        "gading",
    )
    assert compact.refresh(wh) == 1
    rows = _copy_rows(wh, "gading", "2026-07")
    assert [(r["date"].day, r["resolutions"]) for r in rows] == [(1, None), (2, [])]


def _without(table, column: str):
    from schemas.tables import Table

    return Table(table.name, pa.schema([f for f in table.schema if f.name != column]), table.layout, table.doc)


def test_a_few_months_are_found_without_listing_the_historys_day_folders(home, monkeypatch):
    """A reader of recent weeks (the candidates' window, one month's snapshot) looks for those months' days alone:
    the same files as a listing of the whole table finds, a copy or the partitions of a month without one."""
    scenario(home)
    nightly(now=NOW, home=str(home.paths.home))
    wh = home.paths.warehouse
    for name in COMPACTS:
        for user in ("gading", "rina"):
            listed = compact.user_months(wh, name, user)
            months = [m for m, _ in listed]
            assert months
            gone = months[0]
            warehouse.compact_file(wh, name, user, gone).unlink()  # that month is read from its partitions
            listed = compact.user_months(wh, name, user)
            assert any("compact" not in f.parts for m, files in listed if m == gone for f in files)
            with monkeypatch.context() as m:
                m.setattr(warehouse, "subfolders", lambda *a: pytest.fail("listed the day folders"))
                assert compact.user_months(wh, name, user, [*months, "1999-01"]) == listed
                assert compact.user_months(wh, name, user, months[-1:]) == listed[-1:]
                assert compact.month_parts(wh, COMPACTS[name], user, gone) == dict(listed)[gone]
                # a month string that is no YYYY-MM (a stray folder's name made it) is looked up as listed, no crash
                m.undo()
                assert compact.user_months(wh, name, user, ["2026-7-"]) == []
                assert compact.month_parts(wh, COMPACTS[name], user, "2026-7-") == []
