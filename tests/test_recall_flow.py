"""The index stage in the flows, and recall over it, with a deterministic fake embedder."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from helpers import NOW, drop, kenang, md, table

from flows.pipeline import backfill, nightly
from flows.query.recall import Recaller, choose_user
from transforms.errors import ConfigError

pytestmark = pytest.mark.usefixtures("prefect_api")

D17, D18, D19 = dt.date(2026, 7, 17), dt.date(2026, 7, 18), dt.date(2026, 7, 19)


def archive_days(home) -> None:
    drop(
        home,
        "gading/a.md",
        md(
            "2026-07-17",
            "0900",
            ("user", "Proxmox boot order: postgres VM first, please."),
            ("assistant", "Done: boot order 1 for postgres."),
            user_id="gading",
        ),
    )
    drop(
        home,
        "gading/b.md",
        md(
            "2026-07-18",
            "2000",
            ("user", "Lanjutan dari 2026-07-17: cadangan NAS tiap malam."),
            ("assistant", "Backup NAS jam 01:00."),
            user_id="gading",
        ),
    )
    drop(
        home,
        "gading/c.md",
        md(
            "2026-07-19",
            "0400",
            ("user", "Rina and I agreed: pre-dawn meal at 03:30."),
            ("assistant", "Noted."),
            user_id="gading",
        ),
    )
    drop(
        home,
        "rina/d.md",
        md(
            "2026-07-19",
            "2100",
            ("user", "Jadwal sahur sama Gading jam 03.30, Rina yang masak."),
            ("assistant", "Siap."),
            user_id="rina",
        ),
    )


def night(home, now=NOW):
    return nightly(now=now, home=str(home.paths.home))


def test_a_night_indexes_every_loaded_day_and_a_second_night_changes_nothing(home, fake):
    archive_days(home)
    first = night(home)
    assert first["index"]["indexed"] == 4 and first["index"]["failed"] == 0
    rows = table(home, "memory_chunks")
    assert {r["source"] for r in rows} == {"transcript", "summary", "index", "facts"}
    assert {(r["user_id"], r["date"]) for r in rows} == {
        ("gading", D17),
        ("gading", D18),
        ("gading", D19),
        ("rina", D19),
    }
    assert all(r["embedder_id"] == fake.id and len(r["embedding"]) == fake.dim for r in rows)
    assert first["index"]["embedded"] == len(rows) == len(fake.passages)
    ledger = table(home, "days")
    assert all(r["index_status"] == "indexed" for r in ledger)

    files = sorted(home.paths.warehouse.rglob("memory_chunks/**/*.parquet"))
    mtimes = [p.stat().st_mtime_ns for p in files]
    second = night(home)
    assert second["index"]["days"] == 0 and second["index"]["embedded"] == 0
    assert [p.stat().st_mtime_ns for p in files] == mtimes
    assert len(fake.passages) == len(rows)


def test_only_new_chunks_are_embedded_when_a_day_grows(home, fake):
    archive_days(home)
    night(home)
    before = len(fake.passages)
    drop(
        home,
        "gading/e.md",
        md(
            "2026-07-18",
            "2300",
            ("user", "NAS backup verified, Proxmox too."),
            ("assistant", "Good."),
            user_id="gading",
        ),
    )
    res = night(home, NOW + dt.timedelta(days=1))
    assert res["index"]["indexed"] == 1
    # The new session's chunk plus the day's new summary and index line: nothing already embedded.
    new = fake.passages[before:]
    assert any("NAS backup verified" in t for t in new)
    assert not any("cadangan NAS tiap malam" in t for t in new if t.startswith("user:"))


def test_recall_finds_a_day_and_pulls_in_its_related_day_at_0_7(home, fake):
    archive_days(home)
    night(home)
    r = Recaller(home, "gading")
    hits = r.search("cadangan", top_k=3)
    by_day = {h.date: h for h in hits}
    assert by_day[D18].via == "direct"
    assert by_day[D17].via == "related:2026-07-18"
    assert by_day[D17].score == pytest.approx(by_day[D18].score * 0.7)


def test_one_users_chunks_never_appear_in_anothers_results(home, fake):
    archive_days(home)
    night(home)
    for user in ("gading", "rina"):
        for q in ("sahur rina pre-dawn", "proxmox boot", "jadwal masak 03.30", "nas"):
            for mode in ("hybrid", "keyword", "vector"):
                hits = Recaller(home, user).search(q, top_k=10, mode=mode)
                assert all(h.chunk.user_id == user for h in hits), (user, q, mode)
    assert {h.date for h in Recaller(home, "rina").search("sahur", top_k=10)} == {D19}
    with pytest.raises(ConfigError, match="choose one with --user"):
        choose_user(home, None)


def test_date_filters_bound_direct_and_related_results(home, fake):
    archive_days(home)
    night(home)
    hits = Recaller(home, "gading", start=D18, end=D18).search("cadangan proxmox", top_k=5)
    assert {h.date for h in hits} == {D18}


def test_changing_the_embedder_re_embeds_everything_and_never_mixes(home, fake):
    archive_days(home)
    night(home)
    n = len(table(home, "memory_chunks"))
    fake.id = "fake-axis@2"
    stale = Recaller(home, "gading")
    assert stale.stale > 0  # chunks of @1, seen by @2: keyword only until re-indexed
    res = night(home, NOW + dt.timedelta(days=1))
    assert res["index"]["embedded"] == n
    assert {r["embedder_id"] for r in table(home, "memory_chunks")} == {"fake-axis@2"}
    assert Recaller(home, "gading").stale == 0


def test_backfill_reindex_re_embeds_its_range_and_a_plain_backfill_is_a_no_op(home, fake):
    archive_days(home)
    night(home)
    plain = backfill(start=D17, end=D19, home=str(home.paths.home))
    assert plain["index"]["days"] == 0
    before = len(fake.passages)
    res = backfill(start=D17, end=D18, home=str(home.paths.home), reindex=True)
    assert res["index"]["days"] == 2 and res["index"]["embedded"] == len(fake.passages) - before > 0
    again = backfill(start=D17, end=D19, home=str(home.paths.home))
    assert again["index"]["days"] == 0


def test_keyword_only_index_works_without_any_model(home):
    archive_days(home)
    res = night(home)
    assert res["index"]["embedder"] == "none"
    assert all(r["embedding"] is None for r in table(home, "memory_chunks"))
    hits = Recaller(home, "gading").search("cadangan", top_k=2)
    assert hits[0].date == D18


def test_cli_recall_prints_json_and_reads_a_queries_file(home, fake, tmp_path):
    archive_days(home)
    night(home)
    res = kenang("recall", "--home", str(home.paths.home), "--user", "gading", "cadangan", "--json")
    assert res.exit_code == 0
    out = json.loads(res.stdout)["results"]
    assert {"date", "score", "relevance", "via", "source", "session_id", "text"} <= set(out[0])
    assert any(r["via"] == "related:2026-07-18" for r in out)
    qf = tmp_path / "q.txt"
    qf.write_text("proxmox boot\n\nsahur rina\n")
    res = kenang("recall", "--home", str(home.paths.home), "--user", "gading", "--queries", str(qf))
    assert res.exit_code == 0
    lines = [json.loads(x) for x in res.stdout.splitlines()]
    assert [x["query"] for x in lines] == ["proxmox boot", "sahur rina"]
    assert lines[0]["results"][0]["date"] == "2026-07-17"
    assert lines[1]["results"][0]["date"] == "2026-07-19"
    res = kenang("recall", "--home", str(home.paths.home), "--user", "gading", "proxmox boot")
    assert res.exit_code == 0
    text = res.stdout
    assert "2026-07-17" in text and "direct" in text


def test_cli_recall_without_user_in_a_shared_home_is_a_usage_error(home, fake):
    archive_days(home)
    night(home)
    r = kenang("recall", "--home", str(home.paths.home), "sahur")
    assert r.exit_code == 2
    assert "--user" in r.stderr
