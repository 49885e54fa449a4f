"""Day cuts, grace and quiet periods: pure functions, exact boundaries."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import pytest

from transforms.days import check_times, day_is_eligible, file_is_quiet, name_date, session_day
from transforms.errors import ParseError
from transforms.model import Message, Session
from transforms.resolve import resolve

JKT = ZoneInfo("Asia/Jakarta")
NY = ZoneInfo("America/New_York")


def test_a_session_belongs_to_the_local_day_of_its_first_message():
    first = dt.datetime(2026, 7, 19, 17, 30, tzinfo=dt.UTC)  # 00:30 on the 20th in Jakarta
    assert session_day(first, "x.md", 0, JKT) == (dt.date(2026, 7, 20), "timestamp")
    assert session_day(first, "x.md", 0, NY) == (dt.date(2026, 7, 19), "timestamp")


def test_a_session_crossing_midnight_belongs_to_the_day_it_started():
    msgs = (
        Message("user", "a", dt.datetime(2026, 7, 19, 23, 40, tzinfo=JKT), 0),
        Message("assistant", "b", dt.datetime(2026, 7, 20, 0, 20, tzinfo=JKT), 1),
    )
    rs = resolve(
        Session(None, None, None, "markdown", msgs),
        file_name="x.md",
        folder=None,
        default_user="default",
        tz=JKT,
        mtime=0,
    )
    assert rs.day == dt.date(2026, 7, 19)


def test_without_timestamps_the_day_comes_from_the_file_name_then_the_mtime():
    assert session_day(None, "2026-07-19-1037.md", 0, JKT) == (dt.date(2026, 7, 19), "filename")
    mtime = dt.datetime(2026, 7, 18, 20, 0, tzinfo=dt.UTC).timestamp()  # 03:00 on the 19th in Jakarta
    assert session_day(None, "notes.md", mtime, JKT) == (dt.date(2026, 7, 19), "mtime")
    assert name_date("2026-02-30-x.md") is None


def test_a_day_is_eligible_exactly_when_its_grace_period_has_passed():
    day, grace = dt.date(2026, 7, 19), dt.timedelta(hours=2)
    assert not day_is_eligible(day, dt.datetime(2026, 7, 20, 1, 59, 59, tzinfo=JKT), JKT, grace)
    assert day_is_eligible(day, dt.datetime(2026, 7, 20, 2, 0, tzinfo=JKT), JKT, grace)
    # the same instant in UTC reads the same
    assert day_is_eligible(day, dt.datetime(2026, 7, 19, 19, 0, tzinfo=dt.UTC), JKT, grace)
    assert not day_is_eligible(dt.date(2026, 7, 20), dt.datetime(2026, 7, 20, 23, 0, tzinfo=JKT), JKT, grace)


def test_a_file_is_quiet_only_after_the_quiet_period_and_never_from_the_future():
    quiet = dt.timedelta(minutes=10)
    assert file_is_quiet(1000.0, 1600.0, quiet)
    assert not file_is_quiet(1000.0, 1599.0, quiet)
    assert not file_is_quiet(2000.0, 1600.0, quiet)


def test_the_owner_is_the_file_then_the_folder_then_the_default():
    s = Session(None, "rina", None, "jsonl", (Message("user", "x", None, 0),))
    kw = dict(file_name="2026-07-19-a.jsonl", default_user="default", tz=JKT, mtime=0)
    assert resolve(s, folder="gading", **kw).user_id == "rina"
    assert resolve(Session(None, None, None, "jsonl", s.messages), folder="Gading", **kw).user_id == "gading"
    assert resolve(Session(None, None, None, "jsonl", s.messages), folder=None, **kw).user_id == "default"
    assert resolve(s, folder=None, **kw).session_id == "2026-07-19-a"


def test_a_run_whose_slack_ends_past_the_last_utc_instant_still_checks_its_times():
    now = dt.datetime(9999, 12, 30, 12, 0, tzinfo=dt.timezone(dt.timedelta(hours=-23)))  # now + 1 day is past 9999 UTC
    check_times([dt.datetime(9999, 12, 31, 23, 0, tzinfo=dt.UTC), None], now)
    with pytest.raises(ParseError, match="outside the sane range"):
        check_times([dt.datetime(1969, 12, 31, tzinfo=dt.UTC)], now)
