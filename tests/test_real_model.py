"""The bundled model, for real: one small day through the nightly flow with llama-cpp."""

from __future__ import annotations

import pytest
from helpers import NOW, drop, md, table

from flows.models.llm import bundled_model_path
from flows.pipeline import nightly
from transforms.frontmatter import parse_summary

pytestmark = [pytest.mark.model, pytest.mark.usefixtures("prefect_api")]


def test_the_bundled_model_summarizes_a_small_day_end_to_end(home):
    cfg = home.paths.config_file
    cfg.write_text(cfg.read_text().replace("backend: extractive", "backend: llama"))
    drop(
        home,
        "2026-07-19-1037.md",
        md(
            "2026-07-19",
            "1037",
            (
                "user",
                "Pagi! Aku mau lanjut setup boot order server homelab di Proxmox. VM PostgreSQL harus nyala duluan.",
            ),
            (
                "assistant",
                "Oke. Buka VM postgres > Options > Start/Shutdown order, set order=1 dan startup delay 30 detik.",
            ),
            ("user", "Sip, udah jalan. password: hunter2-real-model"),
        ),
    )
    result = nightly(now=NOW, home=str(home.paths.home))
    assert result["summarize"]["summarized"] == 1, result["summarize"]
    assert result["summarize"]["model"] == bundled_model_path().name
    path = home.paths.archive / "daily_sessions/2026-07-19/2026-07-19.summary.md"
    text = path.read_text()
    doc = parse_summary(text)
    assert doc.generator.backend == "llama" and doc.generator.model == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert len(doc.generator.model_sha256) == 64
    assert "hunter2" not in text
    (row,) = table(home, "daily_summaries")
    assert row["completion_tokens"] > 0 and row["attempts"] >= 1
