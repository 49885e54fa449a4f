"""The day ledger kept by user and month: what a write touches, a crash between months, an older one-file ledger."""

from __future__ import annotations

import datetime as dt
import shutil

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from helpers import NOW, drop, md, scenario

from flows.pipeline import nightly
from flows.query.sql import connect
from flows.stages import memory_file, plan, recall_index, summarize
from flows.store import ledger, warehouse
from flows.store.fsio import sha256_file
from schemas.tables import DAYS

pytestmark = pytest.mark.usefixtures("prefect_api")


def night(settings):
    return nightly(now=NOW, home=str(settings.paths.home))


def row(user: str, day: dt.date, status: str = "loaded") -> dict:
    return {
        "user_id": user,
        "date": day,
        "status": status,
        "archive_fingerprint": f"fp-{day}",
        "sessions": 1,
        "messages": 2,
        "run_id": "r1",
        "updated_at": dt.datetime(2026, 7, 20, tzinfo=dt.UTC),
    }


def stamps(wh) -> dict:
    return {p: (p.stat().st_ino, p.stat().st_mtime_ns) for p in ledger.month_files(wh)}


def as_one_file(settings) -> dict:
    """Turn the home's ledger into the one file an older kenang kept; returns the rows."""
    wh = settings.paths.warehouse
    rows = ledger.read_days(wh)
    shutil.rmtree(wh / "days")
    warehouse.write_file(wh / "days.parquet", pa.Table.from_pylist(list(rows.values()), schema=DAYS.schema), DAYS)
    return rows


def test_a_night_keeps_the_ledger_one_file_per_user_and_month(home):
    scenario(home)
    night(home)
    wh = home.paths.warehouse
    names = {p.relative_to(wh).as_posix() for p in ledger.month_files(wh)}
    assert names == {
        "days/user_id=default/month=2026-07/data.parquet",
        "days/user_id=gading/month=2026-07/data.parquet",
        "days/user_id=rina/month=2026-07/data.parquet",
    }
    assert not (wh / "days.parquet").exists() and all(warehouse.intact(p) for p in ledger.month_files(wh))


def test_a_write_rewrites_only_the_months_its_rows_fall_in(tmp_path):
    wh = tmp_path
    ledger.write_days(wh, [row("default", dt.date(2024, m, 3)) for m in range(1, 13)])
    before = stamps(wh)
    ledger.write_days(wh, [{**row("default", dt.date(2024, 12, 3)), "status": "failed", "reason": "x"}])
    after = stamps(wh)
    changed = {p.parent.name for p in after if after[p] != before[p]}
    assert changed == {"month=2024-12"} and len(after) == 12
    assert ledger.read_days(wh)[("default", dt.date(2024, 12, 3))]["status"] == "failed"
    assert ledger.read_days(wh)[("default", dt.date(2024, 11, 3))]["status"] == "loaded"


def _dies_on_the_second_file(monkeypatch, why: str) -> None:
    """``warehouse.write_file`` writes the first file, then raises OSError(why): a crash between two months."""
    real = warehouse.write_file
    calls = []

    def dies_on_the_second_month(path, data, table):
        calls.append(path)
        if len(calls) == 2:
            raise OSError(why)
        real(path, data, table)

    monkeypatch.setattr(warehouse, "write_file", dies_on_the_second_month)


def test_a_crash_between_two_months_leaves_each_file_whole_and_the_rerun_finishes(tmp_path, monkeypatch):
    wh = tmp_path
    ledger.write_days(wh, [row("default", dt.date(2024, 1, 3)), row("default", dt.date(2024, 2, 3))])
    update = [{**row("default", d), "status": "failed"} for d in (dt.date(2024, 1, 3), dt.date(2024, 2, 3))]
    real = warehouse.write_file
    _dies_on_the_second_file(monkeypatch, "power lost")
    with pytest.raises(OSError, match="power lost"):
        ledger.write_days(wh, update)
    monkeypatch.setattr(warehouse, "write_file", real)
    assert all(warehouse.intact(p) for p in ledger.month_files(wh))
    got = {d: r["status"] for (_, d), r in ledger.read_days(wh).items()}
    assert got == {dt.date(2024, 1, 3): "failed", dt.date(2024, 2, 3): "loaded"}
    ledger.write_days(wh, update)  # the next run writes its outcomes again
    assert {r["status"] for r in ledger.read_days(wh).values()} == {"failed"}


def test_a_one_file_ledger_of_an_older_kenang_reads_the_same_and_the_next_run_splits_it(home):
    scenario(home)
    night(home)
    statuses = plan.day_statuses(home)
    rows = as_one_file(home)
    wh = home.paths.warehouse
    assert ledger.month_files(wh) == [] and ledger.read_days(wh) == rows
    assert plan.day_statuses(home) == statuses  # kenang status, backfill --only-missing and the plan read these
    assert ledger.users(wh) == {"default", "gading", "rina"}
    result = night(home)
    assert result["load"]["days"] == 0 and result["summarize"]["days"] == 0  # nothing was taken for missing
    assert not (wh / "days.parquet").exists() and len(ledger.month_files(wh)) == 3
    assert ledger.read_days(wh) == rows and plan.day_statuses(home) == statuses


def test_a_migration_that_died_halfway_is_finished_by_the_next_one_losing_nothing(home, monkeypatch):
    scenario(home)
    night(home)
    wh = home.paths.warehouse
    rows = ledger.read_days(wh)
    extra = {("gading", dt.date(2026, 6, 30)): {**rows[("gading", dt.date(2026, 7, 18))], "date": dt.date(2026, 6, 30)}}
    rows = {**rows, **extra}
    shutil.rmtree(wh / "days")
    warehouse.write_file(wh / "days.parquet", pa.Table.from_pylist(list(rows.values()), schema=DAYS.schema), DAYS)
    real = warehouse.write_file
    _dies_on_the_second_file(monkeypatch, "killed")
    with pytest.raises(OSError, match="killed"):
        ledger.migrate(wh)
    monkeypatch.setattr(warehouse, "write_file", real)
    assert len(ledger.month_files(wh)) == 1 and (wh / "days.parquet").is_file()
    assert ledger.read_days(wh) == rows
    assert ledger.migrate(wh) and not ledger.migrate(wh)
    assert len(ledger.month_files(wh)) == 4 and not (wh / "days.parquet").exists()
    assert ledger.read_days(wh) == rows


def test_a_rerun_rewrites_no_ledger_file(home):
    scenario(home)
    night(home)
    before = stamps(home.paths.warehouse)
    night(home)
    assert stamps(home.paths.warehouse) == before


# --- the history file: the older months' rows in one read ---------------------------------


def history_ledger(wh, months: int = 14) -> dict:
    """Two users' ledgers over ``months`` months, one day a month; returns the rows as written."""
    rows = [row(u, dt.date(2025, 1, 1) + dt.timedelta(days=31 * i)) for u in ("dimas", "rina") for i in range(months)]
    ledger.write_days(wh, rows)
    return ledger.read_days(wh)


def test_the_older_months_are_read_from_the_history_file_and_the_recent_ones_from_their_files(tmp_path, monkeypatch):
    wh = tmp_path / "warehouse"
    want = history_ledger(wh)
    assert ledger.refresh_history(wh) and not ledger.refresh_history(wh)  # the second finds it as it should be
    monkeypatch.setattr(ledger, "_cache", {})  # a new process
    read = []
    real = ledger.pq.ParquetFile
    monkeypatch.setattr(ledger.pq, "ParquetFile", lambda p, *a, **k: read.append(p) or real(p, *a, **k))
    monkeypatch.setattr(ledger.warehouse, "scratch", lambda: pytest.fail("the months were scanned one by one"))
    assert ledger.read_days(wh) == want
    # Of 14 months, the latest two are read from their files (a night writes them); the other 12 from the history.
    assert sorted(f"{p.parent.parent.name}/{p.parent.name}" for p in read) == [
        "user_id=dimas/month=2026-01",
        "user_id=dimas/month=2026-02",
        "user_id=rina/month=2026-01",
        "user_id=rina/month=2026-02",
    ]


def test_a_month_rewritten_after_the_history_was_made_is_read_from_its_file(tmp_path, monkeypatch):
    wh = tmp_path / "warehouse"
    history_ledger(wh)
    ledger.refresh_history(wh)
    ledger.write_days(wh, [row("rina", dt.date(2025, 3, 1), "failed")])  # a backfill of an old month
    monkeypatch.setattr(ledger, "_cache", {})
    assert ledger.read_days(wh)[("rina", dt.date(2025, 3, 1))]["status"] == "failed"


def test_months_rewritten_since_the_history_are_scanned_together_and_the_others_taken_from_it(tmp_path, monkeypatch):
    """A backfill of many old months: those are read in one scan, the months the history still holds are not."""
    wh = tmp_path / "warehouse"
    history_ledger(wh)
    ledger.refresh_history(wh)
    redone = [row("rina", dt.date(2025, 1, 1) + dt.timedelta(days=31 * i), "failed") for i in range(10)]
    ledger.write_days(wh, redone)
    monkeypatch.setattr(ledger, "_cache", {})
    scanned = []
    real = ledger._prefetch
    monkeypatch.setattr(ledger, "_prefetch", lambda stale: scanned.append(sorted(p for p, _ in stale)) or real(stale))
    got = ledger.read_days(wh)
    assert all(got[(r["user_id"], r["date"])]["status"] == "failed" for r in redone)
    assert got[("dimas", dt.date(2025, 1, 1))]["status"] == "loaded"
    # rina's 10 rewritten months and each user's latest two (never in the history); not dimas's older 12.
    latest = [f"user_id={u}/month=2026-0{m}" for u in ("dimas", "rina") for m in (1, 2)]
    assert [sorted(f"{p.parent.parent.name}/{p.parent.name}" for p in s) for s in scanned] == [
        sorted([f"user_id=rina/month={r['date']:%Y-%m}" for r in redone] + latest)
    ]


def test_a_month_whose_checksum_ran_ahead_of_its_bytes_is_read_from_its_file(tmp_path, monkeypatch):
    """As a crash between a month file's checksum and its rename leaves it: the bytes are the truth."""
    wh = tmp_path / "warehouse"
    want = history_ledger(wh)
    path = next(p for p in ledger.month_files(wh) if "rina" in str(p) and "2025-03" in str(p))
    old = path.read_bytes()
    ledger.write_days(wh, [row("rina", dt.date(2025, 3, 4), "failed")])
    path.chmod(0o644)
    path.write_bytes(old)  # the bytes of the loaded row; the checksum file already names the failed one's
    ledger.refresh_history(wh)  # made in that state: from the loaded row, under its own bytes' sha256
    monkeypatch.setattr(ledger, "_cache", {})
    assert ledger.read_days(wh)[("rina", dt.date(2025, 3, 4))] == want[("rina", dt.date(2025, 3, 4))]
    ledger.write_days(wh, [row("rina", dt.date(2025, 3, 4), "failed")])  # the next run writes it whole
    monkeypatch.setattr(ledger, "_cache", {})
    assert ledger.read_days(wh)[("rina", dt.date(2025, 3, 4))]["status"] == "failed"


def test_the_days_view_does_not_read_the_history_file(home):
    scenario(home)
    night(home)
    wh = home.paths.warehouse
    ledger.write_days(wh, [row("default", dt.date(2025, m, 1)) for m in range(1, 13)])
    assert ledger.refresh_history(wh) and (wh / ledger._HISTORY).is_file()
    n = len(ledger.read_days(wh))
    assert connect(home).sql("SELECT count(*) FROM days").fetchall() == [(n,)]


def test_the_history_holds_each_month_files_own_rows_whatever_its_checksum_file_says(tmp_path, monkeypatch):
    """A month file whose bytes changed behind its checksum file (restored from a backup, say) is gathered as its
    bytes are, and a reader never gets the rows that checksum file stood for once it is accepted."""
    wh = tmp_path / "warehouse"
    history_ledger(wh)
    ledger.refresh_history(wh)
    day = dt.date(2025, 3, 4)
    path = next(p for p in ledger.month_files(wh) if "rina" in str(p) and "2025-03" in str(p))
    path.chmod(0o644)
    pq.write_table(pa.Table.from_pylist([row("rina", day, "failed")], schema=DAYS.schema), path)
    monkeypatch.setattr(ledger, "_cache", {})  # the next run's process
    ledger.refresh_history(wh)
    warehouse._record_checksum(path, sha256_file(path))  # as `kenang verify --accept` would
    monkeypatch.setattr(ledger, "_cache", {})
    assert ledger.read_days(wh)[("rina", day)]["status"] == "failed"


def test_rows_are_made_as_pyarrow_makes_them():
    """The ledger's own conversion of a file's rows gives pyarrow's values: dates and UTC timestamps (before 1970,
    at a microsecond, null), strings and nulls, of the same types and the same tzinfo."""
    rows = [
        {**row("rina", dt.date(1969, 12, 31)), "updated_at": dt.datetime(1969, 12, 31, 23, 59, 59, 1, tzinfo=dt.UTC)},
        {**row("rina", dt.date(2025, 3, 1), "failed"), "reason": "x", "summary_status": None},
        {**row("budi", dt.date(1970, 1, 1)), "updated_at": dt.datetime(2026, 12, 7, 4, 5, 6, 999999, tzinfo=dt.UTC)},
    ]
    data = pa.Table.from_pylist(rows, schema=DAYS.schema)
    expected, got = data.to_pylist(), ledger._dicts(data)
    assert got == expected
    for a, b in zip(expected, got, strict=True):
        assert [type(v) for v in a.values()] == [type(v) for v in b.values()]
        assert a["updated_at"].tzinfo is b["updated_at"].tzinfo
    assert ledger._dicts(data.slice(0, 0)) == []


def test_history_rows_go_to_their_month_file_in_any_order():
    """The history keeps each month's rows together; a month's rows that come apart still reach one month."""
    days = [("rina", dt.date(2025, 3, 1)), ("rina", dt.date(2025, 4, 2)), ("budi", dt.date(2025, 3, 9))]
    days += [("rina", dt.date(2025, 3, 5)), ("rina", dt.date(2026, 3, 5))]
    got = ledger._by_month_file([row(u, d) for u, d in days])
    want: dict = {}
    for u, d in days:
        want.setdefault(f"user_id={u}/month={d:%Y-%m}/data.parquet", {})[(u, d)] = row(u, d)
    assert got == want and len(got) == 4


# --- a run's view: the older months judged by the notes the history keeps of them ---------------------


def done(user: str, day: dt.date) -> dict:
    """A day loaded, summarized and indexed (keyword-only, as the test home's embedder is) from its content."""
    r = {
        **row(user, day),
        "content_fingerprint": f"c-{day}",
        "summary_status": "summarized",
        "summary_fingerprint": f"c-{day}",
        "summary_sha256": f"s-{user}-{day}",
        "index_status": "indexed",
    }
    return {**r, "index_key": recall_index.index_key(r, "none")}


def judged_ledger(wh) -> dict:
    """Two users over 14 months, two days a month, every day done but: a day whose summary failed, a failed load,
    a day not indexed yet, a forgotten day; all in the months the history holds."""
    rows = [
        done(u, dt.date(2025, 1, 1) + dt.timedelta(days=31 * i + d))
        for u in ("dimas", "rina")
        for i in range(14)
        for d in (0, 9)
    ]
    rows += [
        {**done("rina", dt.date(2025, 3, 20)), "summary_status": "failed", "summary_fingerprint": None},
        {**row("dimas", dt.date(2025, 5, 20), "failed"), "reason": "unreadable"},
        {**done("rina", dt.date(2025, 6, 21)), "index_status": None, "index_key": None},
        {**row("dimas", dt.date(2025, 7, 20), "forgotten")},
    ]
    ledger.write_days(wh, rows)
    return ledger.read_days(wh)


def assert_judged_as_read(night_rows: plan.Night, full: dict) -> None:
    """The night's judgements are the ones a read of every row makes."""
    fresh_index = lambda r: recall_index.is_fresh(r, "none")  # noqa: E731
    for fresh in (summarize.is_fresh, fresh_index):
        assert night_rows.needing(fresh) == plan.days_needing(full, fresh)
        span = {"start": dt.date(2025, 2, 5), "end": dt.date(2025, 6, 30)}
        assert night_rows.needing(fresh, force=True, **span) == plan.days_needing(full, fresh, force=True, **span)
        redo = frozenset(
            {("rina", dt.date(2025, 4, 4)), ("dimas", dt.date(2025, 7, 20)), ("dimas", dt.date(2025, 9, 9))}
        )
        assert night_rows.needing(fresh, redo=redo) == plan.days_needing(full, fresh, redo=redo)
    for column in ("status", "summary_status", "index_status"):
        assert night_rows.failed(column) == {k for k, r in full.items() if r.get(column) == "failed"}
    assert {u: frozenset(n) for u, n in night_rows.noted().items()} == summarize.noted_days(full)
    noted, loaded = night_rows.noted(), summarize.noted_days(full)
    for user, day in full:  # what a note's related days ask of it
        for d in (day, day + dt.timedelta(days=1), day.replace(year=day.year - 1)):
            assert (d in noted[user]) == (d in loaded[user])
    assert night_rows.loaded_users() == {u for (u, _), r in full.items() if r["status"] == "loaded"}
    assert night_rows.digests() == memory_file.digests(full)


def test_a_run_judges_the_settled_older_months_by_their_notes_without_reading_them(home, monkeypatch):
    wh = home.paths.warehouse
    full = judged_ledger(wh)
    assert ledger.refresh_history(wh, plan.ledger_notes(home))
    assert not ledger.refresh_history(wh, plan.ledger_notes(home))  # nothing changed: nothing written
    monkeypatch.setattr(ledger, "_cache", {})  # a new process
    monkeypatch.setattr(ledger, "_recorded_cache", {})
    read = []
    real = ledger.pq.ParquetFile
    monkeypatch.setattr(ledger.pq, "ParquetFile", lambda p, *a, **k: read.append(p) or real(p, *a, **k))
    real_history = ledger._from_history
    asked = []  # the months asked of the history file (rows from it, for months without a note)
    monkeypatch.setattr(
        ledger, "_from_history", lambda wh, stale: asked.extend(p for p, _ in stale) or real_history(wh, stale)
    )
    night_rows = plan.Night(home)
    assert len(night_rows.notes) == 24 and len(night_rows.settled) == 21  # a forgotten day settles
    assert_judged_as_read(night_rows, full)
    assert sorted({f"{p.parent.parent.name}/{p.parent.name}" for p in read}) == [
        "user_id=dimas/month=2025-05",  # a failed load
        "user_id=dimas/month=2026-01",  # the latest two months (a night writes them), never in the history
        "user_id=dimas/month=2026-02",
        "user_id=rina/month=2025-03",  # a failed summary
        "user_id=rina/month=2025-06",  # a day not indexed
        "user_id=rina/month=2026-01",
        "user_id=rina/month=2026-02",
    ]
    assert sorted({f"{p.parent.parent.name}/{p.parent.name}" for p in asked}) == [  # only months without a note
        "user_id=dimas/month=2026-01",
        "user_id=dimas/month=2026-02",
        "user_id=rina/month=2026-01",
        "user_id=rina/month=2026-02",
    ]
    assert night_rows[("rina", dt.date(2025, 1, 10))] == full[("rina", dt.date(2025, 1, 10))]  # a row asked for
    assert dict(night_rows.items()) == full and len(night_rows) == len(full)  # iterating reads every month


def test_a_month_rewritten_after_its_note_was_made_is_read_not_judged(home, monkeypatch):
    """A backfill, a forget or a late day of an old month: the month's note no longer stands for its file."""
    wh = home.paths.warehouse
    judged_ledger(wh)
    ledger.refresh_history(wh, plan.ledger_notes(home))
    late = dt.date(2025, 2, 14)
    ledger.write_days(wh, [{**row("rina", late), "content_fingerprint": "c-late"}])  # loaded, not yet summarized
    full = ledger.read_days(wh)
    night_rows = plan.Night(home)
    assert ("rina", "2025-02") not in night_rows.notes
    assert ("rina", late) in night_rows.needing(summarize.is_fresh)
    assert_judged_as_read(night_rows, full)
    assert ledger.refresh_history(wh, plan.ledger_notes(home))  # the month is gathered again, with a new note
    monkeypatch.setattr(ledger, "_cache", {})
    assert ("rina", "2025-02") in plan.Night(home).notes
    assert_judged_as_read(plan.Night(home), full)


def test_notes_made_for_another_embedder_or_format_are_not_used(home, monkeypatch):
    wh = home.paths.warehouse
    full = judged_ledger(wh)
    ledger.refresh_history(wh, plan.ledger_notes(home))
    monkeypatch.setattr(plan, "NOTE_FORMAT", plan.NOTE_FORMAT + 1)
    assert plan.Night(home).notes == {}
    assert_judged_as_read(plan.Night(home), full)
    assert ledger.refresh_history(wh, plan.ledger_notes(home))  # made again for the new basis
    assert len(plan.Night(home).notes) == 24
    monkeypatch.setattr(plan, "_embedder_id", lambda settings: "e5-other")
    night_rows = plan.Night(home)
    assert night_rows.notes == {}
    everything = [k for k, r in full.items() if r["status"] == "loaded"]
    assert night_rows.needing(lambda r: recall_index.is_fresh(r, "e5-other")) == everything  # all to index again


def test_a_refresh_without_notes_keeps_the_notes_of_unchanged_months(home):
    wh = home.paths.warehouse
    judged_ledger(wh)
    ledger.refresh_history(wh, plan.ledger_notes(home))
    ledger.write_days(wh, [{**done("rina", dt.date(2025, 2, 14))}])
    assert ledger.refresh_history(wh)
    notes = plan.Night(home).notes
    assert len(notes) == 23 and ("rina", "2025-02") not in notes
    assert ledger.refresh_history(wh, plan.ledger_notes(home))  # the month without a note gets one
    assert len(plan.Night(home).notes) == 24


def test_a_night_summarizes_and_indexes_a_late_day_of_a_month_its_history_holds(home):
    """A night's load writes an old month of the ledger (a late export): the stages after it see the new day."""
    drop(home, "2026-07-19-1037.md", md("2026-07-19", "1037", ("user", "Pagi! Lanjut setup Proxmox.")))
    drop(home, "2026-02-03-0900.md", md("2026-02-03", "0900", ("user", "Catatan lama soal NAS.")))
    drop(home, "2026-03-03-0900.md", md("2026-03-03", "0900", ("user", "Catatan lama soal UPS.")))
    night(home)
    wh = home.paths.warehouse
    assert plan.Night(home).settled >= {("default", "2026-02"), ("default", "2026-03")}
    drop(home, "2026-02-10-0800.md", md("2026-02-10", "0800", ("user", "Ternyata ada catatan Februari lagi.")))
    report = nightly(now=NOW + dt.timedelta(days=1), home=str(home.paths.home))
    assert report["summarize"]["days"] == 1 and report["index"]["days"] == 1
    row = ledger.read_days(wh)[("default", dt.date(2026, 2, 10))]
    assert summarize.is_fresh(row) and recall_index.is_fresh(row, "none")
    assert "2026-02-10" in (home.paths.archive / "MEMORY_INDEX.md").read_text(encoding="utf-8")
    assert ("default", "2026-02") in plan.Night(home).settled  # gathered again at the run's end


def test_a_run_lists_the_month_files_once_and_its_own_writes_add_theirs(tmp_path, monkeypatch):
    wh = tmp_path / "warehouse"
    history_ledger(wh, months=3)
    listed = []
    real = ledger.warehouse.subfolders
    monkeypatch.setattr(ledger.warehouse, "subfolders", lambda f, p: listed.append(p) or real(f, p))
    with ledger.held(wh):
        before = ledger.month_files(wh)
        n = len(listed)
        ledger.write_days(wh, [row("budi", dt.date(2024, 6, 1)), row("rina", dt.date(2026, 5, 1))])
        assert ledger.month_files(wh) == sorted(
            before + [ledger._month_file(wh, "budi", "2024-06"), ledger._month_file(wh, "rina", "2026-05")],
            key=lambda f: (f.parent.parent.name, f.parent.name),
        )
        assert len(listed) == n  # listed once, in the run
        assert ledger.user_months(wh)[0] == ("budi", "2024-06")
        during = ledger.month_files(wh)
    assert ledger.month_files(wh) == during and len(listed) > n  # after the run: listed again, the same files


def test_a_run_reads_each_months_checksum_once_and_its_own_writes_record_theirs(home, monkeypatch):
    wh = home.paths.warehouse
    judged_ledger(wh)
    ledger.refresh_history(wh, plan.ledger_notes(home))
    monkeypatch.setattr(ledger, "_recorded_cache", {})  # a new process
    real = ledger.warehouse.recorded_checksums
    looked = []
    monkeypatch.setattr(ledger.warehouse, "recorded_checksums", lambda p: looked.append(p) or real(p))
    with ledger.held(wh):
        assert len(plan.Night(home).notes) == 24 and len(looked) == 24
        assert len(plan.Night(home).notes) == 24 and len(looked) == 24  # not looked at again
        ledger.write_days(wh, [done("rina", dt.date(2025, 2, 14))])
        looked.clear()
        notes = plan.Night(home).notes
        assert looked == []  # the write recorded its own
        assert len(notes) == 23 and ("rina", "2025-02") not in notes
        assert ledger.refresh_history(wh, plan.ledger_notes(home))  # the month is gathered again
    monkeypatch.undo()
    assert len(plan.Night(home).notes) == 24


def test_a_run_forgets_the_checksums_it_read_before_it_held_the_lock(home):
    """What a process read before its run took the lock (``kenang run``'s quiet check) may be stale by then."""
    wh = home.paths.warehouse
    judged_ledger(wh)
    ledger.refresh_history(wh, plan.ledger_notes(home))
    assert ("rina", "2025-02") in plan.Night(home).notes  # read before the lock
    path = ledger._month_file(wh, "rina", "2025-02")
    late = [*ledger.Ledger(wh).rows_except(set()), ((None, None), {**row("rina", dt.date(2025, 2, 14))})]
    rows = [r for (u, d), r in late if r["user_id"] == "rina" and r["date"].month == 2 and r["date"].year == 2025]
    warehouse.write_file(path, pa.Table.from_pylist(rows, schema=DAYS.schema), DAYS)  # another process's write
    with ledger.held(wh):
        night_rows = plan.Night(home)
        assert ("rina", "2025-02") not in night_rows.notes
        assert ("rina", dt.date(2025, 2, 14)) in night_rows.needing(summarize.is_fresh)


def test_many_old_months_left_to_do_are_read_from_their_files_not_from_the_history(home, monkeypatch):
    """A backlog in the old months (a model summarizing years, 60 days a night): the history is not converted."""
    wh = home.paths.warehouse
    full = judged_ledger(wh)
    backlog = [
        {**r, "summary_status": None, "summary_fingerprint": None}
        for (u, d), r in full.items()
        if u == "dimas" and d in {dt.date(2025, 1, 1) + dt.timedelta(days=31 * i) for i in range(11)}
    ]
    ledger.write_days(wh, backlog)
    full = ledger.read_days(wh)
    ledger.refresh_history(wh, plan.ledger_notes(home))
    monkeypatch.setattr(ledger, "_cache", {})
    real = ledger._from_history
    asked = []
    monkeypatch.setattr(ledger, "_from_history", lambda wh, stale: asked.extend(p for p, _ in stale) or real(wh, stale))
    night_rows = plan.Night(home)
    assert len(night_rows.notes) - len(night_rows.settled) >= 8
    assert_judged_as_read(night_rows, full)
    assert {p.parent.name for p in asked} == {"month=2026-01", "month=2026-02"}


def test_a_run_is_dated_and_filed_by_the_homes_local_day_it_started(tmp_path):
    import zoneinfo

    from flows.store.ledger import RunRecord, read_runs, write_run

    jakarta = zoneinfo.ZoneInfo("Asia/Jakarta")
    started = dt.datetime(2026, 12, 7, 23, 30, tzinfo=dt.UTC)  # 06:30 on the 8th in Jakarta
    record = RunRecord("r1", "nightly", {}, started, {}, timezone=jakarta)
    assert record.day == dt.date(2026, 12, 8) and record.row()["date"] == dt.date(2026, 12, 8)
    write_run(tmp_path, record)
    assert (tmp_path / "runs" / "date=2026-12-08").is_dir()
    assert [r["date"] for r in read_runs(tmp_path)] == [dt.date(2026, 12, 8)]
    assert RunRecord("r2", "nightly", {}, started, {}).day == dt.date(2026, 12, 7)  # no zone given: UTC's day
