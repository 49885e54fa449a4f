"""MEMORY_INDEX kept by month: a night renders the months it changed, and the file is byte for byte a whole render."""

from __future__ import annotations

import datetime as dt
import json
import shutil

import pytest
from helpers import JAKARTA, drop, md, table

from flows.pipeline import nightly
from flows.stages import memory_file
from transforms.memory_file import entry_of, render_memory_index

pytestmark = pytest.mark.usefixtures("prefect_api")

JUNE = dt.datetime(2026, 6, 20, 3, 0, tzinfo=JAKARTA)
JULY = dt.datetime(2026, 7, 20, 3, 0, tzinfo=JAKARTA)


def night(settings, now):
    return nightly(now=now, home=str(settings.paths.home))


def whole_render(settings, user="default") -> bytes:
    rows = [r for r in table(settings, "daily_summaries") if r["user_id"] == user]
    return render_memory_index(user, [entry_of(r) for r in rows]).encode()


def index_file(settings):
    return settings.paths.archive / "MEMORY_INDEX.md"


def part(settings, month, user="default"):
    return settings.paths.warehouse / "_memory_index" / user / f"{month}.md"


def two_months(settings):
    """Two June days summarized in June's night, then one July day: the July night changes July alone."""
    drop(settings, "a.md", md("2026-06-10", "0900", ("user", "Setup Proxmox di rumah."), ("assistant", "Oke.")))
    drop(settings, "b.md", md("2026-06-11", "0900", ("user", "Backup ZFS tiap malam."), ("assistant", "Siap.")))
    night(settings, JUNE)
    june = part(settings, "2026-06").stat()
    drop(settings, "c.md", md("2026-07-19", "1000", ("user", "Pasang Grafana untuk NAS."), ("assistant", "Oke.")))
    night(settings, JULY)
    return june


def test_a_new_day_renders_its_own_month_and_the_file_equals_a_whole_render(home):
    june = two_months(home)
    assert index_file(home).read_bytes() == whole_render(home)
    assert "3 days remembered." in index_file(home).read_text()
    again = part(home, "2026-06").stat()
    assert (again.st_ino, again.st_mtime_ns) == (june.st_ino, june.st_mtime_ns)  # June was not rendered again
    assert "|2026-07-19]]" in part(home, "2026-07").read_text()


def test_a_rerun_leaves_the_index_and_its_parts_alone(home):
    two_months(home)
    folder = home.paths.warehouse / "_memory_index"
    before = {p: (p.stat().st_ino, p.stat().st_mtime_ns) for p in [index_file(home), *folder.rglob("*")]}
    night(home, JULY)
    assert {p: (p.stat().st_ino, p.stat().st_mtime_ns) for p in [index_file(home), *folder.rglob("*")]} == before


def test_a_lost_part_is_rendered_again_when_its_user_next_changes(home):
    drop(home, "a.md", md("2026-06-10", "0900", ("user", "Setup Proxmox di rumah."), ("assistant", "Oke.")))
    night(home, JUNE)
    part(home, "2026-06").unlink()
    drop(home, "c.md", md("2026-07-19", "1000", ("user", "Pasang Grafana untuk NAS."), ("assistant", "Oke.")))
    night(home, JULY)
    assert part(home, "2026-06").is_file()
    assert index_file(home).read_bytes() == whole_render(home)


def test_parts_of_an_older_format_are_all_rendered_again(home):
    two_months(home)
    record = home.paths.warehouse / "_memory_index" / "default.json"
    body = json.loads(record.read_text())
    part(home, "2026-06").write_text("\n## 2026-06\n\n- stale line")
    record.write_text(json.dumps({**body, "format": memory_file.PART_FORMAT - 1}))
    memory_file.write_memory_files(home, ["default"])
    assert index_file(home).read_bytes() == whole_render(home)
    assert "stale line" not in part(home, "2026-06").read_text()


def test_a_lost_ledger_still_renders_every_summary_as_a_whole_render_does(home):
    two_months(home)
    shutil.rmtree(home.paths.warehouse / "days")
    memory_file.write_memory_files(home, ["default"])
    assert index_file(home).read_bytes() == whole_render(home)


@pytest.mark.parametrize("budget", [1, 60, 1500])
def test_the_snapshot_reads_the_newest_months_and_shows_what_every_summary_would_show(home, budget):
    from flows.config import edit_config
    from flows.store import core_memory
    from transforms.memory_file import render_snapshot

    two_months(home)
    settings = edit_config(home.paths.home, lambda c: c.setdefault("memory", {}).update(snapshot_days_chars=budget))
    rows = [r for r in table(home, "daily_summaries") if r["user_id"] == "default"]
    every = render_snapshot("default", [entry_of(r) for r in rows], budget).split("\n", 2)[-1].strip()
    assert core_memory.snapshot_text(settings, "default").endswith("RECENT DAYS\n" + every + "\n")


def test_a_month_whose_summaries_the_ledger_no_longer_records_is_still_rendered_from_its_partitions(home):
    """The ledger's months without a digest are the ones looked for partitions (a night's months all have one)."""
    from flows.store import ledger

    two_months(home)
    wh = home.paths.warehouse
    june = [{**r, "summary_status": None} for (_, day), r in ledger.read_days(wh).items() if day.month == 6]
    ledger.write_days(wh, june)
    part(home, "2026-06").unlink()
    memory_file.write_memory_files(home, ["default"])
    assert index_file(home).read_bytes() == whole_render(home)
    assert "|2026-06-10]]" in part(home, "2026-06").read_text()
