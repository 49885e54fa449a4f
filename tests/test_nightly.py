"""End-to-end: the nightly flow on a home in tmp_path, under one Prefect test server."""

from __future__ import annotations

import datetime as dt
import stat
from dataclasses import replace

import pytest
from helpers import NOW, drop, md, scenario, snapshot, table

from flows.pipeline import nightly
from flows.store.verify import verify

pytestmark = pytest.mark.usefixtures("prefect_api")


def run(settings, now=NOW):
    return nightly(now=now, home=str(settings.paths.home))


def test_a_night_archives_eligible_files_and_loads_their_days(home):
    scenario(home)
    result = run(home)
    archived = sorted(
        p.relative_to(home.paths.archive).as_posix()
        for p in home.paths.archive.rglob("*")
        if p.is_file()
        and not p.name.endswith(".summary.md")
        and "MEMORY_INDEX" not in p.name
        and not p.name.startswith(".")  # the archive marker and each day folder's manifest
    )
    assert archived == [
        "daily_sessions/2026-07-18/gading/2026-07-18-2340.md",
        "daily_sessions/2026-07-19/2026-07-19-1037.md",
        "daily_sessions/2026-07-19/rina/chat.jsonl",
    ]
    assert result["archive"]["placed"] == 3 and result["archive"]["sources_deleted"] == 3
    sessions = {(s["user_id"], s["session_id"]): s for s in table(home, "sessions")}
    assert set(sessions) == {("default", "2026-07-19-1037"), ("gading", "2026-07-18-2340"), ("rina", "chat")}
    assert sessions[("rina", "chat")]["message_count"] == 2
    assert sessions[("default", "2026-07-19-1037")]["day_source"] == "timestamp"
    assert len(table(home, "messages")) == 7


def test_archived_originals_are_read_only_and_byte_identical(home):
    data = md("2026-07-19", "1037", ("user", "halo"), ("assistant", "hai"))
    drop(home, "a.md", data)
    run(home)
    archived = home.paths.archive / "daily_sessions/2026-07-19/a.md"
    assert archived.read_bytes() == data
    assert stat.S_IMODE(archived.stat().st_mode) == 0o444
    rec = table(home, "archive_files")[0]
    assert (rec["path"], rec["size"], rec["user_id"], rec["original_path"]) == (
        "daily_sessions/2026-07-19/a.md",
        len(data),
        "default",
        "a.md",
    )


def test_files_of_a_day_still_in_its_grace_period_are_left_alone(home):
    path = drop(home, "late.md", md("2026-07-19", "2330", ("user", "malam")))
    run(home, now=dt.datetime(2026, 7, 20, 1, 59, tzinfo=NOW.tzinfo))  # grace: 2 h after midnight
    assert path.exists() and table(home, "sessions") == []
    run(home, now=dt.datetime(2026, 7, 20, 2, 0, tzinfo=NOW.tzinfo))
    assert not path.exists() and len(table(home, "sessions")) == 1


def test_a_file_written_within_the_quiet_period_is_not_touched(home):
    path = drop(home, "busy.md", md("2026-07-10", "0900", ("user", "lagi nulis")), mtime=None)
    result = run(home)
    assert path.exists() and result["ingest"]["waiting_quiet"] == 1 and table(home, "sessions") == []


def test_days_are_cut_in_the_configured_time_zone(home):
    # 2026-07-19T18:30Z is 01:30 on the 20th in Jakarta, so the session is not eligible yet at NOW.
    drop(home, "utc.jsonl", b'{"role":"user","content":"x","timestamp":"2026-07-19T18:30:00Z"}\n')
    drop(home, "utc2.jsonl", b'{"role":"user","content":"y","timestamp":"2026-07-19T16:59:00Z"}\n')
    run(home)
    assert [s["date"] for s in table(home, "sessions")] == [dt.date(2026, 7, 19)]
    assert (home.paths.active / "utc.jsonl").exists()


def test_a_rerun_with_the_same_now_changes_nothing(home):
    scenario(home)
    run(home)
    before = snapshot(home)
    files_before = sorted(p for p in home.paths.home.rglob("*") if "runs" not in p.parts)
    verify_before = verify(home)
    result = run(home)
    assert snapshot(home) == before
    assert sorted(p for p in home.paths.home.rglob("*") if "runs" not in p.parts) == files_before
    assert replace(verify(home), warehouse_checked=0) == replace(verify_before, warehouse_checked=0)  # + 1 runs file
    assert result["archive"]["placed"] == 0 and result["load"]["days"] == 0
    assert result["catalog_rebuilt"] is False


def test_the_same_name_with_new_bytes_gets_a_new_archive_name_and_is_merged(home):
    first = md("2026-07-19", "1000", ("user", "satu"), session_id="s1")
    drop(home, "s1.md", first)
    run(home)
    second = md("2026-07-19", "1000", ("user", "satu"), ("assistant", "dua"), session_id="s1")
    drop(home, "s1.md", second)
    run(home)
    day = home.paths.archive / "daily_sessions/2026-07-19"
    names = sorted(p.name for p in day.iterdir() if not p.name.endswith(".summary.md") and not p.name.startswith("."))
    assert len(names) == 2 and "s1.md" in names
    assert (day / "s1.md").read_bytes() == first
    sessions = table(home, "sessions")
    assert len(sessions) == 1 and sessions[0]["message_count"] == 2
    assert len(table(home, "messages")) == 2


def test_identical_bytes_dropped_again_are_recognised_and_the_source_removed(home):
    data = md("2026-07-19", "1000", ("user", "sama"))
    drop(home, "x.md", data)
    run(home)
    drop(home, "x.md", data)
    result = run(home)
    assert result["archive"] == {**result["archive"], "placed": 0, "already_there": 1, "sources_deleted": 1}
    assert not (home.paths.active / "x.md").exists()
    assert len(table(home, "archive_files")) == 1


def test_secrets_are_redacted_before_they_reach_the_tables(home):
    drop(home, "s.md", md("2026-07-19", "1000", ("user", "password: hunter2-test ok")))
    run(home)
    (msg,) = table(home, "messages")
    assert "hunter2" not in msg["content"] and msg["redactions"] == 1


def test_every_row_carries_its_user(home):
    scenario(home)
    run(home)
    for name in ("sessions", "messages", "archive_files", "days"):
        assert all(r["user_id"] for r in table(home, name)), name
