"""History never blocks a night: summaries and the recall index take the newest days first, within a budget.

Loading and archiving are never budgeted. A budgeted run followed by the nights that
finish the backlog ends exactly where one unbudgeted run ends.
"""

from __future__ import annotations

import datetime as dt

import pytest
from helpers import NOW, drop, kenang, md, snapshot, table

from flows.config import init_home
from flows.models import default_threads
from flows.pipeline import backfill, nightly
from flows.stages import plan
from flows.store import mount

pytestmark = pytest.mark.usefixtures("prefect_api")

DAYS = [dt.date(2026, 7, 10) + dt.timedelta(days=i) for i in range(10)]  # 2026-07-10 .. 2026-07-19


def _home(tmp_path, name: str, **budgets):
    summarizer = {"backend": "extractive"}
    embedder = {"backend": "e5"}
    if "days" in budgets:
        summarizer["max_days_per_run"] = budgets["days"]
    if "chunks" in budgets:
        embedder["max_chunks_per_run"] = budgets["chunks"]
    settings, _ = init_home(tmp_path / name, {"summarizer": summarizer, "embedder": embedder})
    mount.claim(settings)  # as `kenang init` does
    for i, day in enumerate(DAYS):
        drop(
            settings,
            f"{day}.md",
            md(
                day.isoformat(),
                "0900",
                ("user", f"Hari ke-{i}: cek backup restic ke nas.lan, lalu update pve{i}."),
                ("assistant", f"Oke, restic jalan dan pve{i} sudah di-update ke versi baru."),
                ("user", "Makasih, besok lanjut Proxmox cluster."),
            ),
        )
    return settings


def _night(settings):
    return nightly(now=NOW, home=str(settings.paths.home))


def test_a_budgeted_night_summarizes_and_indexes_the_newest_days_first_and_says_what_waits(tmp_path, fake):
    settings = _home(tmp_path, "h", days=3, chunks=8)
    r = _night(settings)
    assert r["load"]["loaded"] == 10 and r["archive"]["placed"] == 10  # loading and archiving are never budgeted
    assert sorted(s["date"] for s in table(settings, "daily_summaries")) == DAYS[-3:]
    assert r["summarize"]["waiting"] == 7 and r["summarize"]["budget_days"] == 3
    chunks = table(settings, "memory_chunks")
    indexed = sorted({c["date"] for c in chunks})
    assert indexed == DAYS[-len(indexed) :] and r["index"]["waiting"] == 10 - len(indexed)
    # the day that reached the budget is taken, and no day after it
    last = sum(c["date"] == indexed[0] for c in chunks)
    assert r["index"]["embedded"] - last < 8 <= r["index"]["embedded"]

    status = kenang("status", "--home", str(settings.paths.home))
    assert "backlog, summaries: 7 day(s): 3 night(s) at this budget" in status.stdout
    assert "backlog, recall index:" in status.stdout
    js = kenang("status", "--json", "--home", str(settings.paths.home))
    import json

    b = json.loads(js.stdout)["backlog"]
    assert b["summarize"]["days"] == 7 and b["summarize"]["nights"] == 3 and b["summarize"]["hours"] is not None
    assert b["index"]["days"] == 10 - len(indexed) and b["index"]["chunks_estimate"] > 0


def test_a_budgeted_run_and_the_nights_after_it_end_where_one_unbudgeted_run_ends(tmp_path, fake):
    budgeted, whole = _home(tmp_path, "budgeted", days=3, chunks=5), _home(tmp_path, "whole")
    _night(whole)
    nights = 0
    while True:
        r = _night(budgeted)
        nights += 1
        if not r["summarize"].get("waiting") and not r["index"].get("waiting"):
            break
        assert nights < 20
    assert nights >= 4
    a, b = snapshot(budgeted), snapshot(whole)
    assert a.keys() == b.keys()
    for key in a:
        if key != "table/days":
            assert a[key] == b[key], key
    assert _night(budgeted)["summarize"]["days"] == 0  # and the next night has nothing left


def test_a_day_bigger_than_the_whole_chunk_budget_is_still_indexed_first(tmp_path, fake):
    settings = _home(tmp_path, "h", chunks=1)
    r = _night(settings)
    assert r["index"]["indexed"] == 1 and r["index"]["embedded"] > 1 and r["index"]["waiting"] == 9
    assert {c["date"] for c in table(settings, "memory_chunks")} == {DAYS[-1]}


def test_backfill_takes_the_budget_unless_told_no_budget_or_forced(tmp_path, fake):
    settings = _home(tmp_path, "h", days=2)
    assert _night(settings)["summarize"]["waiting"] == 8
    r = backfill(start=DAYS[0], end=DAYS[-1], home=str(settings.paths.home))
    assert r["summarize"]["days"] == 2 and r["summarize"]["waiting"] == 6
    r = backfill(start=DAYS[0], end=DAYS[-1], no_budget=True, home=str(settings.paths.home))
    assert r["summarize"]["days"] == 6 and r["summarize"]["waiting"] == 0
    # a forced backfill does its whole range: no nightly run would redo those days
    r = backfill(start=DAYS[0], end=DAYS[-1], resummarize=True, home=str(settings.paths.home))
    assert r["summarize"]["days"] == 10 and r["summarize"]["waiting"] == 0


def test_the_default_budgets_bound_a_model_and_leave_extractive_and_keyword_only_unbounded(tmp_path):
    model, _ = init_home(tmp_path / "m", {"summarizer": {"backend": "llama"}, "embedder": {"backend": "e5+use"}})
    assert (
        plan.summary_budget(model) == plan.MODEL_DAYS_PER_RUN
        and plan.chunk_budget(model) == plan.EMBEDDED_CHUNKS_PER_RUN
    )
    plain, _ = init_home(tmp_path / "p", {"summarizer": {"backend": "extractive"}, "embedder": {"backend": "none"}})
    assert plan.summary_budget(plain) is None and plan.chunk_budget(plain) is None
    keys = [("default", d) for d in DAYS] + [("rina", DAYS[-1])]
    take, wait = plan.newest_first(keys, 2)
    assert take == [("rina", DAYS[-1]), ("default", DAYS[-1])] and len(wait) == 9


def test_a_model_leaves_one_core_free_unless_configured():
    from flows.models import cores

    assert default_threads(None) == max(1, cores() - 1) and default_threads(3) == 3


def test_a_big_old_day_is_never_stuck_behind_new_days_that_spend_the_budget_first(tmp_path, fake):
    settings = _home(tmp_path, "h", chunks=4)
    big = DAYS[0]
    drop(
        settings,
        f"{big}-long.md",
        md(
            big.isoformat(),
            "1200",
            *[
                (
                    "user" if i % 2 == 0 else "assistant",
                    f"Langkah {i}: konfigurasi restic, ZFS dan pve{i} " + "detail " * 60,
                )
                for i in range(16)
            ],
        ),
    )
    seen = set()
    for _ in range(12):
        r = _night(settings)
        seen |= {c["date"] for c in table(settings, "memory_chunks")}
        if not r["index"]["waiting"]:
            break
    assert big in seen and r["index"]["waiting"] == 0


def test_days_that_failed_before_go_after_the_ones_still_waiting():
    keys = [("u", d) for d in DAYS]
    take, wait = plan.newest_first(keys, 3, last={("u", DAYS[-1]), ("u", DAYS[-2])})
    assert take == [("u", DAYS[-3]), ("u", DAYS[-4]), ("u", DAYS[-5])]
    assert wait[-2:] == [("u", DAYS[-1]), ("u", DAYS[-2])]
