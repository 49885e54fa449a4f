"""Backfill re-derives the tables from the archive alone, with the nightly day code."""

from __future__ import annotations

import datetime as dt
import os
import shutil

import pytest
from helpers import NOW, drop, md, scenario, snapshot, table

from flows.pipeline import backfill, nightly
from flows.stages import plan
from flows.store import ledger

pytestmark = pytest.mark.usefixtures("prefect_api")

START, END = dt.date(2026, 7, 1), dt.date(2026, 7, 31)


def night(settings):
    return nightly(now=NOW, home=str(settings.paths.home))


def fill(settings, **kw):
    return backfill(start=START, end=END, home=str(settings.paths.home), **kw)


def without(snap: dict, *prefixes: str) -> dict:
    return {k: v for k, v in snap.items() if not k.startswith(prefixes)}


def test_a_backfill_rebuilds_lost_tables_from_the_archive_alone(home):
    scenario(home)
    night(home)
    before = snapshot(home)
    shutil.rmtree(home.paths.warehouse)
    shutil.rmtree(home.paths.active)
    home.paths.active.mkdir()
    result = fill(home)
    after = snapshot(home)
    # The archive's own day manifests say which files kenang archived: they are re-recorded, not adopted.
    assert result["survey"]["restored_records"] == 3 and result["survey"]["unrecorded"] == []
    assert result["load"]["loaded"] == 3
    # The tables come back identical; only the quarantine history (not in the archive) is gone.
    keep = ("table/sessions", "table/messages", "table/days")
    assert {k: after[k] for k in keep} == {k: before[k] for k in keep}
    assert [r["path"] for r in table(home, "archive_files")] == sorted(r["path"] for r in before["table/archive_files"])


def test_a_second_backfill_changes_nothing(home):
    scenario(home)
    night(home)
    fill(home)
    before = snapshot(home)
    files = sorted(p for p in home.paths.home.rglob("*") if "runs" not in p.parts and p != home.paths.lock)
    mtimes = {p: p.stat().st_mtime_ns for p in files if p.is_file()}
    result = fill(home)
    assert snapshot(home) == before
    assert result["load"]["loaded"] == 0 and result["load"]["unchanged"] == 3
    assert {p: p.stat().st_mtime_ns for p in files if p.is_file()} == mtimes


def test_the_nightly_and_the_backfill_derive_identical_rows(home):
    scenario(home)
    night(home)
    nightly_rows = without(snapshot(home), "active/", "archive/", "quarantine/", "table/quarantine")
    for t in ("sessions", "messages"):
        shutil.rmtree(home.paths.warehouse / t)
    shutil.rmtree(home.paths.warehouse / "days")
    fill(home)
    assert without(snapshot(home), "active/", "archive/", "quarantine/", "table/quarantine") == nightly_rows


def test_only_missing_takes_just_the_days_without_a_complete_load(home):
    scenario(home)
    night(home)
    # Lose one day's load: it is now missing, the others stay loaded.
    shutil.rmtree(home.paths.warehouse / "sessions" / "date=2026-07-18")
    import pyarrow.parquet as pq

    for days in ledger.month_files(home.paths.warehouse):
        t = pq.read_table(days).to_pylist()
        pq.write_table(
            __import__("pyarrow").Table.from_pylist(
                [r for r in t if r["date"] != dt.date(2026, 7, 18)], schema=pq.read_schema(days)
            ),
            days,
        )
    states = {(d.user_id, d.date): d.state for d in plan.day_statuses(home)}
    assert states[("gading", dt.date(2026, 7, 18))] == "missing"
    result = fill(home, only_missing=True)
    assert result["survey"]["days"] == 1 and result["load"]["loaded"] == 1
    assert {d.state for d in plan.day_statuses(home)} == {"loaded"}
    assert any(s["date"] == dt.date(2026, 7, 18) for s in table(home, "sessions"))


def test_a_tampered_archive_file_fails_its_day_with_a_reason_and_others_load(home):
    scenario(home)
    night(home)
    victim = home.paths.archive / "daily_sessions/2026-07-19/2026-07-19-1037.md"
    os.chmod(victim, 0o644)
    victim.write_bytes(victim.read_bytes().replace(b"Pagi", b"Sore"))
    result = fill(home)
    assert result["load"]["failed"] == 1
    (failure,) = result["load"]["failures"]
    assert failure["date"] == "2026-07-19" and "changed since it was archived" in failure["reason"]
    states = {(d.user_id, d.date): d.state for d in plan.day_statuses(home)}
    assert states[("default", dt.date(2026, 7, 19))] == "failed"
    assert states[("rina", dt.date(2026, 7, 19))] == "loaded"


def test_a_backfill_outside_the_archived_range_does_nothing(home):
    scenario(home)
    night(home)
    before = snapshot(home)
    result = backfill(start=dt.date(2025, 1, 1), end=dt.date(2025, 1, 31), home=str(home.paths.home))
    assert result["survey"]["days"] == 0 and snapshot(home) == before
    # ...and says which days the archive does hold, so a mistyped range is seen at once
    held = [day for _, day in ledger.read_days(home.paths.warehouse)]  # (user, day)s, as "to derive" counts
    first, last = min(held).isoformat(), max(held).isoformat()
    assert result["survey"]["on_record"] == {"days": len(held), "first": first, "last": last}
    from flows.cli.report import render_run

    said = f"0 day(s) to derive: none in this range; kenang's record holds {len(held)} day(s), {first} to {last}"
    assert said in render_run(result)
    # a range with days says nothing of the rest, even when they are all loaded already (--only-missing)
    assert "on_record" not in fill(home)["survey"] and "on_record" not in fill(home, only_missing=True)["survey"]


def test_a_day_whose_ledger_was_lost_shows_as_missing_and_only_missing_restores_it(home):
    drop(home, "a.md", md("2026-07-19", "1000", ("user", "x")))
    night(home)
    rows = snapshot(home)["table/messages"]
    shutil.rmtree(home.paths.warehouse / "days")  # warehouse damage, not a crash
    assert [(d.date, d.state) for d in plan.day_statuses(home)] == [(dt.date(2026, 7, 19), "missing")]
    result = fill(home, only_missing=True)
    assert result["load"]["days"] == 1 and result["load"]["loaded"] == 1
    assert snapshot(home)["table/messages"] == rows
    assert fill(home, only_missing=True)["load"]["days"] == 0
