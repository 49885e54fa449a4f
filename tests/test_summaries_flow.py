"""The summarize stage inside the nightly and backfill flows."""

from __future__ import annotations

import datetime as dt
import stat

import pytest
from fakes import EchoModel, QueueModel, reply
from helpers import NOW, drop, md, scenario, snapshot, table
from secrets_corpus import load_corpus

from flows.models import llm
from flows.pipeline import backfill, nightly
from flows.stages import plan
from schemas.lexicon import TECHNOLOGIES
from transforms.frontmatter import parse_summary
from transforms.summarize import LlmSummarizer, canonical_map

pytestmark = pytest.mark.usefixtures("prefect_api")


def night(settings):
    return nightly(now=NOW, home=str(settings.paths.home))


def use_model(monkeypatch, model):
    monkeypatch.setattr(
        llm,
        "make_summarizer",
        lambda settings: LlmSummarizer(model, canonical_technologies=canonical_map(TECHNOLOGIES)),
    )


def test_every_loaded_day_gets_a_read_only_summary_a_table_row_and_an_index_line(home):
    scenario(home)
    result = night(home)
    assert result["summarize"]["summarized"] == 3 and result["summarize"]["failed"] == 0
    path = home.paths.archive / "daily_sessions/2026-07-19/2026-07-19.summary.md"
    doc = parse_summary(path.read_text())
    assert doc.user_id == "default" and doc.date == dt.date(2026, 7, 19)
    assert stat.S_IMODE(path.stat().st_mode) == 0o444
    assert (home.paths.archive / "daily_sessions/2026-07-19/rina/2026-07-19.summary.md").is_file()
    rows = {(r["user_id"], r["date"]): r for r in table(home, "daily_summaries")}
    assert set(rows) == {
        ("default", dt.date(2026, 7, 19)),
        ("gading", dt.date(2026, 7, 18)),
        ("rina", dt.date(2026, 7, 19)),
    }
    assert rows[("default", dt.date(2026, 7, 19))]["summary"] == doc.summary
    index = (home.paths.archive / "MEMORY_INDEX.md").read_text()
    assert "## 2026-07" in index and "[[daily_sessions/2026-07-19/2026-07-19.summary|2026-07-19]]" in index
    assert "|2026-07-18]]" not in index  # gading's day is in gading's own index
    gading = (home.paths.archive / "MEMORY_INDEX.gading.md").read_text()
    assert "[[daily_sessions/2026-07-18/gading/2026-07-18.summary|2026-07-18]]" in gading


def test_summaries_are_not_originals_so_verify_stays_clean(home):
    from flows.store.verify import verify

    scenario(home)
    night(home)
    assert verify(home).problems == 0


def test_a_rerun_writes_no_new_summaries(home):
    scenario(home)
    night(home)
    before = snapshot(home)
    index = (home.paths.archive / "MEMORY_INDEX.md").stat().st_mtime_ns
    result = night(home)
    assert result["summarize"]["days"] == 0 and snapshot(home) == before
    assert (home.paths.archive / "MEMORY_INDEX.md").stat().st_mtime_ns == index


def test_a_run_that_died_after_its_summaries_gets_its_memory_index_from_the_next_run(home, monkeypatch):
    """MEMORY_INDEX is written at the run's end: the next run sees it is behind the ledger and writes it."""
    from flows.store import faults

    scenario(home)
    real = faults.checkpoint

    def die_before_the_copies(name):
        if name == "compact.written":
            raise RuntimeError("killed")
        real(name)

    monkeypatch.setattr(faults, "checkpoint", die_before_the_copies)
    with pytest.raises(RuntimeError, match="killed"):
        night(home)
    monkeypatch.setattr(faults, "checkpoint", real)
    assert table(home, "daily_summaries") and not (home.paths.archive / "MEMORY_INDEX.md").exists()
    again = night(home)
    assert again["summarize"]["days"] == 0  # nothing left to summarize, and yet:
    assert "|2026-07-19]]" in (home.paths.archive / "MEMORY_INDEX.md").read_text()
    assert "|2026-07-18]]" in (home.paths.archive / "MEMORY_INDEX.gading.md").read_text()


def test_a_day_whose_model_crashed_is_failed_shown_in_status_and_retried_next_night(home, monkeypatch):
    drop(home, "a.md", md("2026-07-19", "1000", ("user", "Setup Proxmox hari ini."), ("assistant", "Oke.")))
    use_model(monkeypatch, QueueModel(fail=RuntimeError("llama_decode returned -3")))
    result = night(home)
    assert result["summarize"]["failed"] == 1 and "llama_decode" in result["summarize"]["failures"][0]["reason"]
    (st,) = plan.day_statuses(home)
    assert st.summary == "failed" and "llama_decode" in st.summary_reason
    assert not (home.paths.archive / "daily_sessions/2026-07-19/2026-07-19.summary.md").exists()

    use_model(monkeypatch, QueueModel([reply(summary="Gading worked on the Proxmox setup.")]))
    result = night(home)
    assert result["summarize"]["summarized"] == 1
    assert plan.day_statuses(home)[0].summary == "summarized"


def test_backfill_resummarize_rewrites_summaries_with_the_new_model(home, monkeypatch):
    drop(home, "a.md", md("2026-07-19", "1000", ("user", "Setup Proxmox hari ini."), ("assistant", "Oke.")))
    night(home)
    assert table(home, "daily_summaries")[0]["backend"] == "extractive"
    untouched = backfill(start=dt.date(2026, 7, 1), end=dt.date(2026, 7, 31), home=str(home.paths.home))
    assert untouched["summarize"]["days"] == 0
    use_model(monkeypatch, QueueModel([reply(summary="Gading worked on the Proxmox setup.")]))
    result = backfill(start=dt.date(2026, 7, 1), end=dt.date(2026, 7, 31), resummarize=True, home=str(home.paths.home))
    assert result["summarize"]["summarized"] == 1
    (row,) = table(home, "daily_summaries")
    assert row["backend"] == "llama" and row["model"] == "fake-queue.gguf"
    text = (home.paths.archive / "daily_sessions/2026-07-19/2026-07-19.summary.md").read_text()
    assert "Gading worked on the Proxmox setup." in text


def test_no_secret_reaches_a_summary_a_table_or_the_index_even_from_an_echoing_model(home, monkeypatch):
    corpus = load_corpus()
    turns = [("user", entry.text) for entry in corpus]
    drop(home, "secrets.md", md("2026-07-19", "0900", *turns))
    use_model(monkeypatch, EchoModel())
    night(home)
    haystacks = [
        p.read_text(errors="replace")
        for p in home.paths.archive.rglob("*.md")
        if "summary" in p.name or "INDEX" in p.name
    ]
    for name in ("messages", "daily_summaries", "sessions"):
        haystacks.append(repr(table(home, name)))
    blob = "\n".join(haystacks)
    assert "REDACTED" in blob
    leaked = [e.kind for e in corpus if e.secret in blob]
    assert leaked == []
