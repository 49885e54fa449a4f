"""The recall and MCP benchmarks keep working: each runs at a tiny size, as a person runs it, and ends with its
line of figures (benchmarks/recall.py, benchmarks/mcp.py). Figures are printed, never asserted, except that the
exact search of a small index must find what float64 cosine finds."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

ROOT = Path(__file__).resolve().parent.parent
RECALL_KEYS = ("chunks", "build_s", "rss_mib", "p50_ms", "p95_ms", "cold_s", "recall_at_10")
MCP_KEYS = ("chunks", "rss_loaded_mib", "p50_ms", "p95_ms")

pytestmark = [pytest.mark.integration, pytest.mark.model]


def bench(*args: str) -> tuple[str, dict]:
    r = subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=1200)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout, json.loads(r.stdout.strip().splitlines()[-1])


def recall_bench(home: Path, *more: str) -> tuple[str, dict]:
    return bench(
        "benchmarks/recall.py",
        *("--chunks", "2000", "--days", "20", "--embedder", "use", "--keep", str(home)),
        *more,
    )


def test_the_recall_benchmark_serves_a_synthetic_index_and_prints_every_figure_on_its_last_line(tmp_path):
    home = tmp_path / "home"
    _, figures = recall_bench(home, "--queries", "3", "--cold-runs", "1")
    assert figures["chunks"] == 2000
    assert all(figures[k] is not None for k in RECALL_KEYS), figures
    assert figures["recall_at_10"] >= 0.98  # 2,000 chunks are searched exactly
    days = sorted((home / "warehouse" / "memory_chunks").glob("date=*/user_id=bench/data.parquet"))
    assert len(days) == 20 and sum(pq.read_metadata(f).num_rows for f in days) == 2000
    assert list((home / "warehouse" / "compact" / "recall_pack" / "user_id=bench").glob("month=*.json"))


def test_a_kept_home_is_reused_and_its_index_built_again_from_the_stored_vectors(tmp_path):
    home = tmp_path / "home"
    recall_bench(home, "--build-only")
    packs = home / "warehouse" / "compact" / "recall_pack" / "user_id=bench"
    (packs / "month=2023-01.json").unlink()  # what the rebuild must make again
    out, figures = recall_bench(home, "--build-only")
    assert "reusing the 2,000 chunks" in out
    assert figures["chunks"] == 2000 and figures["build_s"] is not None and figures["rss_mib"] is None
    assert (packs / "month=2023-01.json").is_file()


def test_the_mcp_benchmark_prints_the_servers_figures_on_its_last_line():
    _, figures = bench(
        "benchmarks/mcp.py",
        *("--chunks", "2000", "--recall-days", "20", "--queries", "3", "--runs", "1", "--days", "3", "--messages", "5"),
    )
    assert figures["chunks"] == 2000
    assert all(figures[k] is not None for k in MCP_KEYS), figures


def test_the_big_day_benchmark_loads_every_message_and_times_one_days_summary():
    out, figures = bench("benchmarks/big_day.py", "--lines", "400")
    assert "messages in the warehouse" in out and "(all)" in out, out
    assert set(figures) == {"messages", "wall_s", "peak_rss_mib", "summarize_s"} and figures["messages"] > 0
    _, one = bench("benchmarks/big_day.py", "--summary-only", "--messages", "500")
    assert one["messages"] == 500 and one["summarize_s"] is not None, one


def test_the_incremental_benchmark_reuses_a_kept_history(tmp_path):
    size = ("--years", "1", "--days-per-year", "6", "--sessions", "2", "--messages", "4", "--repeats", "1")
    out, figures = bench("benchmarks/incremental.py", *size, "--keep", str(tmp_path))
    assert "setup B (not timed" in out and figures["years"] == 1 and figures["ratio_work"] > 0
    again, _ = bench("benchmarks/incremental.py", *size, "--keep", str(tmp_path))
    assert f"setup B: kept from {tmp_path / 'B.base'}" in again
