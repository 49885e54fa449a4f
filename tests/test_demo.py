"""`kenang demo`: two nights on a sample home, the last one with the (here: fake) model."""

from __future__ import annotations

import re
import time

import pytest
from fakes import AxisEmbedder, QueueModel, reply
from helpers import kenang, unresolved_links

from flows.cli.demo import DEMO_QUERIES
from flows.config import load_settings
from flows.models import embed, llm
from schemas.lexicon import TECHNOLOGIES
from transforms.summarize import LlmSummarizer, canonical_map

pytestmark = pytest.mark.usefixtures("prefect_api")


def test_the_demo_archives_loads_quarantines_and_summarizes_and_prints_it_all(tmp_path, monkeypatch):
    model = QueueModel(default=reply(summary="Gading worked on the homelab all day. Proxmox is calmer now."))
    monkeypatch.setattr(
        llm,
        "make_summarizer",
        lambda s: (
            LlmSummarizer(model, canonical_technologies=canonical_map(TECHNOLOGIES))
            if s.summarizer.backend == "llama"
            else llm.ExtractiveSummarizer()
        ),
    )
    fake = AxisEmbedder()  # the real embedders have their own tests; this keeps the demo quick
    monkeypatch.setattr(embed, "make_embedder", lambda s, **_: fake)
    monkeypatch.setattr(embed, "configured_id", lambda s: fake.id)
    home = tmp_path / "demo"
    t0 = time.perf_counter()
    r = kenang("demo", "--home", str(home))
    took = time.perf_counter() - t0
    assert r.exit_code == 0, r.stderr
    out = r.stdout
    # each night says its own time: together they are no more than the whole demo took
    nights = [float(s) for s in re.findall(r"finished in ([0-9.]+) s", out)]
    assert len(nights) == 2 and sum(nights) <= took + 0.1, (nights, took)
    for needle in (
        "night 1",
        "night 2",
        "bad_utf8",
        "bad_json",
        "no_messages",
        "unknown_extension",
        "symlink",
        "loaded per user",
        "gading",
        "rina",
        "backend: extractive",
        "language: id",
        "## Yang terjadi",
        "language: en",
        "## What happened",
        "kenang status",
        "recall, by meaning",
        *DEMO_QUERIES,
        "kenang recall",
    ):
        assert needle in out, needle
    settings = load_settings(home)
    assert settings.summarizer.backend == "llama"  # the home is left on the model backend of its last night
    assert len(list(settings.paths.archive.rglob("*.summary.md"))) >= 30
    assert (settings.paths.archive / "MEMORY_INDEX.md").is_file()
    assert unresolved_links(settings.paths.archive) == []  # the demo's archive opens as an Obsidian vault
    assert model.prompts  # the last night really went through the model backend
    # indexed, then recalled: each demo query embedded in order (an Indonesian one also as its English gloss)
    assert fake.passages and [q for q in fake.queries if q in DEMO_QUERIES] == list(DEMO_QUERIES)
    assert len(fake.queries) <= 2 * len(DEMO_QUERIES)


def test_the_demo_refuses_to_wipe_a_home_that_is_not_a_demo_home(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    (real / "kenang.yaml").write_text("timezone: Asia/Jakarta\n")
    r = kenang("demo", "--home", str(real))
    assert r.exit_code == 2 and "not a kenang demo home" in r.stderr
    assert (real / "kenang.yaml").exists()
