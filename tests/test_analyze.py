"""`kenang analyze`: every intent against hand-computed numbers on a small fixture warehouse."""

from __future__ import annotations

import datetime as dt
import json

import pyarrow as pa
import pytest
from helpers import kenang

from flows.query.analyze import INTENTS, Analytics
from flows.store import ledger, warehouse
from schemas.tables import DAILY_SUMMARIES, MESSAGES
from transforms.errors import ConfigError

D = dt.date
UTC = dt.UTC


def summary(user, day, mood, importance, *, people=(), projects=(), technologies=(), tags=(), messages=10):
    return {
        "user_id": user,
        "date": day,
        "schema_version": 2,
        "summary": "A day.",
        "title": "A day",
        "language": "en",
        "decisions": [],
        "open_items": [],
        "people": list(people),
        "projects": list(projects),
        "tags": list(tags),
        "technologies": list(technologies),
        "importance": importance,
        "mood": mood,
        "related_dates": [],
        "sessions": 1,
        "messages": messages,
        "backend": "extractive",
        "model": "extractive",
        "model_sha256": "",
        "prompt_version": 1,
        "fallback_fields": [],
        "first_try_valid": True,
        "attempts": 1,
        "chunks": 1,
        "prompt_tokens": 0,
        "completion_tokens": 0,
        "llm_seconds": 0.0,
        "provenance": "{}",
        "path": f"daily_sessions/{day}/{day}.summary.md",
        "content_fingerprint": "x",
        "run_id": "r",
    }


SUMMARIES = [
    summary(
        "gading", D(2026, 7, 1), "productive", 6, people=["Rina"], projects=["Homelab"], technologies=["Proxmox", "ZFS"]
    ),
    summary("gading", D(2026, 7, 2), "focused", 4, people=["Rina", "Budi"], technologies=["Proxmox"]),
    summary("gading", D(2026, 7, 3), "tired", 7),
    summary("gading", D(2026, 7, 15), "productive", 5, projects=["Homelab", "kenang"], messages=20),
    summary("gading", D(2026, 8, 1), "focused", 9, technologies=["Next.js"]),
    summary("rina", D(2026, 7, 1), "productive", 9, people=["Gading"], projects=["Homelab"], technologies=["Proxmox"]),
]

# Local (Asia/Jakarta, +07:00) times: 2026-07-01 23:30 is 16:30 UTC; 2026-07-02 00:10 is 17:10 UTC on 07-01.
MESSAGES_AT = [
    ("gading", D(2026, 7, 1), dt.datetime(2026, 7, 1, 16, 30, tzinfo=UTC)),
    ("gading", D(2026, 7, 1), dt.datetime(2026, 7, 1, 16, 45, tzinfo=UTC)),
    ("gading", D(2026, 7, 2), dt.datetime(2026, 7, 1, 17, 10, tzinfo=UTC)),
    ("gading", D(2026, 7, 2), None),  # no timestamp: not on the heatmap
    ("rina", D(2026, 7, 1), dt.datetime(2026, 7, 1, 2, 0, tzinfo=UTC)),
]


@pytest.fixture
def wh(home):
    by_key: dict = {}
    for row in SUMMARIES:
        by_key.setdefault((row["user_id"], row["date"]), []).append(row)
    for (user, day), rows in by_key.items():
        warehouse.write_partition(
            home.paths.warehouse, DAILY_SUMMARIES, pa.Table.from_pylist(rows, schema=DAILY_SUMMARIES.schema), day, user
        )
    msgs: dict = {}
    for i, (user, day, ts) in enumerate(MESSAGES_AT):
        msgs.setdefault((user, day), []).append(
            {
                "message_id": f"m{i}",
                "session_id": "s",
                "user_id": user,
                "date": day,
                "ts": ts,
                "role": "user",
                "seq": i,
                "content": "hi",
                "run_id": "r",
                "redactions": 0,
                "flags": [],
            }
        )
    for (user, day), rows in msgs.items():
        warehouse.write_partition(
            home.paths.warehouse, MESSAGES, pa.Table.from_pylist(rows, schema=MESSAGES.schema), day, user
        )
    now = dt.datetime(2026, 8, 2, tzinfo=UTC)
    ledger.write_days(
        home.paths.warehouse,
        [
            {
                "user_id": r["user_id"],
                "date": r["date"],
                "status": "loaded",
                "archive_fingerprint": "a",
                "sessions": 1,
                "messages": 1,
                "run_id": "r",
                "updated_at": now,
            }
            for r in SUMMARIES
        ],
    )
    return home


def rows(res):
    return res.frame.to_dicts()


def test_productivity_per_month_follows_the_configured_definition(wh):
    res = Analytics(wh, "gading").run("productivity")
    assert rows(res) == [
        {"period": D(2026, 7, 1), "days": 4, "productive_days": 2, "share": 0.5},
        {"period": D(2026, 8, 1), "days": 1, "productive_days": 1, "share": 1.0},
    ]
    assert res.definition["productive_moods"] == ["productive", "focused"]
    assert res.definition["productive_min_importance"] == 5
    july = Analytics(wh, "gading").run("productivity", start=D(2026, 7, 2), end=D(2026, 7, 31))
    assert rows(july) == [{"period": D(2026, 7, 1), "days": 3, "productive_days": 1, "share": 0.3333}]


def test_mood_timeseries_per_day_and_per_month(wh):
    a = Analytics(wh, "gading")
    assert rows(a.run("mood_timeseries", by="month")) == [
        {"period": D(2026, 7, 1), "mood": "productive", "days": 2},
        {"period": D(2026, 7, 1), "mood": "focused", "days": 1},
        {"period": D(2026, 7, 1), "mood": "tired", "days": 1},
        {"period": D(2026, 8, 1), "mood": "focused", "days": 1},
    ]
    daily = rows(a.run("mood_timeseries", by="day", end=D(2026, 7, 2)))
    assert daily == [
        {"date": D(2026, 7, 1), "mood": "productive", "importance": 6},
        {"date": D(2026, 7, 2), "mood": "focused", "importance": 4},
    ]
    weekly = rows(a.run("mood_timeseries", by="week", end=D(2026, 7, 3)))
    assert {r["period"] for r in weekly} == {D(2026, 6, 29)}  # ISO weeks start on Monday


def test_technology_people_and_project_counts(wh):
    a = Analytics(wh, "gading")
    assert rows(a.run("technology_counts")) == [
        {
            "period": D(2026, 7, 1),
            "technology": "Proxmox",
            "days": 2,
            "first_day": D(2026, 7, 1),
            "last_day": D(2026, 7, 2),
        },
        {
            "period": D(2026, 7, 1),
            "technology": "ZFS",
            "days": 1,
            "first_day": D(2026, 7, 1),
            "last_day": D(2026, 7, 1),
        },
        {
            "period": D(2026, 8, 1),
            "technology": "Next.js",
            "days": 1,
            "first_day": D(2026, 8, 1),
            "last_day": D(2026, 8, 1),
        },
    ]
    people = rows(a.run("people_mentions"))
    assert [(r["person"], r["days"]) for r in people] == [("Rina", 2), ("Budi", 1)]
    assert rows(a.run("project_activity")) == [
        {"period": D(2026, 7, 1), "project": "Homelab", "days": 2, "messages": 30, "mean_importance": 5.5},
        {"period": D(2026, 7, 1), "project": "kenang", "days": 1, "messages": 20, "mean_importance": 5.0},
    ]


def test_the_heatmap_cuts_weekday_and_hour_in_the_configured_timezone(wh):
    res = Analytics(wh, "gading").run("activity_heatmap")
    grid = {r["weekday"]: r for r in rows(res)}
    assert list(grid) == ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    # 2026-07-01 is a Wednesday: 23:30 and 23:45 local; 00:10 local is Thursday.
    assert grid["Wed"]["23"] == 2 and grid["Thu"]["00"] == 1
    assert sum(v for r in rows(res) for k, v in r.items() if k != "weekday") == 3  # untimed and rina's left out
    assert grid["Wed"]["16"] == 0


def test_importance_trend_is_a_rolling_mean_over_calendar_days(wh):
    res = Analytics(wh, "gading").run("importance_trend")
    assert [(r["date"], r["importance"], r["rolling_mean"]) for r in rows(res)] == [
        (D(2026, 7, 1), 6, 6.0),
        (D(2026, 7, 2), 4, 5.0),
        (D(2026, 7, 3), 7, 5.667),
        (D(2026, 7, 15), 5, 5.0),
        (D(2026, 8, 1), 9, 9.0),
    ]
    two = Analytics(wh, "gading").run("importance_trend", window=2, end=D(2026, 7, 3))
    assert [r["rolling_mean"] for r in rows(two)] == [6.0, 5.0, 5.5]
    late = Analytics(wh, "gading").run("importance_trend", start=D(2026, 7, 2), end=D(2026, 7, 3))
    assert [r["rolling_mean"] for r in rows(late)] == [5.0, 5.667]  # the window reaches back before --start


def test_every_intent_is_scoped_to_its_user(wh):
    a = Analytics(wh, "rina")
    assert rows(a.run("productivity")) == [{"period": D(2026, 7, 1), "days": 1, "productive_days": 1, "share": 1.0}]
    assert [r["person"] for r in rows(a.run("people_mentions"))] == ["Gading"]
    grid = {r["weekday"]: r for r in rows(a.run("activity_heatmap"))}
    assert grid["Wed"]["09"] == 1 and sum(v for r in grid.values() for k, v in r.items() if k != "weekday") == 1
    with pytest.raises(ConfigError, match="choose one with --user"):
        Analytics(wh)


@pytest.mark.parametrize("intent", list(INTENTS))
def test_an_empty_range_is_empty_for_every_intent(wh, intent):
    res = Analytics(wh, "gading").run(intent, start=D(2025, 1, 1), end=D(2025, 1, 31))
    assert res.empty


def test_cli_analyze_prints_a_table_json_and_says_when_empty(wh):
    home = str(wh.paths.home)
    r = kenang(
        "analyze", "--home", home, "--user", "gading", "productivity", "--start", "2026-07-01", "--end", "2026-07-31"
    )
    assert r.exit_code == 0
    out = r.stdout
    assert "productive_days" in out and "0.5" in out and "importance is >= 5" in out
    r = kenang("analyze", "--home", home, "--user", "gading", "technology_counts", "--json")
    assert r.exit_code == 0
    data = json.loads(r.stdout)
    assert data["intent"] == "technology_counts" and data["rows"][0]["technology"] == "Proxmox"
    r = kenang(
        "analyze", "--home", home, "--user", "gading", "people_mentions", "--start", "2025-01-01", "--end", "2025-01-02"
    )
    assert r.exit_code == 0
    assert "(no rows: no summarized day of gading in 2025-01-01 .. 2025-01-02 gives one)" in r.stdout
    r = kenang("analyze", "--home", home, "nonsense")
    assert r.exit_code == 2
    err = r.stderr
    assert "unknown intent 'nonsense'" in err and "importance_trend" in err


@pytest.mark.usefixtures("prefect_api")
def test_an_open_reader_neither_blocks_nor_is_blocked_by_a_run(wh):
    from helpers import NOW, drop, md

    from flows.pipeline import nightly

    reader = Analytics(wh, "gading")
    reader.run("productivity")  # holds its tables in memory; no file stays open or locked
    drop(
        wh, "gading/x.md", md("2026-07-19", "1000", ("user", "Proxmox lagi."), ("assistant", "Oke."), user_id="gading")
    )
    result = nightly(now=NOW, home=str(wh.paths.home))
    assert result["load"]["loaded"] == 1
    assert rows(reader.run("productivity"))[0]["days"] == 4  # the open session still answers
    fresh = Analytics(wh, "gading").run("mood_timeseries", by="day", start=D(2026, 7, 19), end=D(2026, 7, 19))
    assert len(rows(fresh)) == 1  # a new reader sees the run's summary


def test_the_catalog_has_one_exploded_view_per_list_field(wh):
    from flows.query.sql import connect_read_only
    from flows.stages.catalog import ensure_catalog

    ensure_catalog(wh.paths.catalog, wh.paths.warehouse)
    con = connect_read_only(wh.paths.catalog)
    try:
        got = con.execute(
            "SELECT user_id, technology, count(*) FROM summary_technologies GROUP BY ALL ORDER BY ALL"
        ).fetchall()
        assert got == [("gading", "Next.js", 1), ("gading", "Proxmox", 2), ("gading", "ZFS", 1), ("rina", "Proxmox", 1)]
        for view in ("summary_people", "summary_projects", "summary_tags", "summary_related_dates"):
            cols = [d[0] for d in con.execute(f"SELECT * FROM {view} LIMIT 0").description]
            assert cols[:2] == ["user_id", "date"]
    finally:
        con.close()
