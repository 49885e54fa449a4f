"""SQL-lane speed: p50 and p95 of every `kenang analyze` intent over a synthetic year.

    .venv/bin/python benchmarks/analytics.py [--days 365] [--messages 400] [--runs 30]

Writes a year of ``daily_summaries`` rows (random moods, importance, people, projects,
technologies from the real lexicon) and ``messages`` rows (``--messages`` a day, spread
over the day) for two users straight into a scratch warehouse, then times each intent
through ``flows.query.analyze.Analytics`` (what the CLI and the notebooks call):

- warm: one ``Analytics`` per user session, as a notebook keeps it; ``--runs`` calls
  per intent (each over the whole year, by month). Target: p50 <= 50 ms per intent.
- cold: a new ``Analytics`` for every call, as one ``kenang analyze`` process pays it
  (reading the Parquet files included): first from the day partitions alone, then
  from the compact copies a run's end makes (``flows.store.compact``). Target: cold
  p50 <= 100 ms per intent.
"""

from __future__ import annotations

import argparse
import datetime as dt
import statistics
import sys
import tempfile
import time
from pathlib import Path
from random import Random

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pyarrow as pa  # noqa: E402

from flows.config import init_home  # noqa: E402
from flows.query.analyze import INTENTS, Analytics  # noqa: E402
from flows.store import (  # noqa: E402
    compact,
    ledger,
    mount,  # noqa: E402
    warehouse,
)
from schemas.frontmatter import MOODS  # noqa: E402
from schemas.lexicon import TECHNOLOGIES  # noqa: E402
from schemas.tables import DAILY_SUMMARIES, MESSAGES  # noqa: E402

TARGET_MS = 50.0
TARGET_COLD_MS = 100.0
PEOPLE = ["Rina", "Budi", "Sari", "Bu Ani", "Pak Joko", "Dewi", "Andi"]
PROJECTS = ["Homelab", "kenang", "NAS migration", "Thesis", "Garden"]
UTC = dt.UTC


def build(settings, days: int, per_day: int, rng: Random) -> None:
    wh = settings.paths.warehouse
    techs = sorted(TECHNOLOGIES)
    start = dt.date(2025, 1, 1)
    ledger_rows = []
    for user in ("gading", "rina"):
        for d in range(days):
            day = start + dt.timedelta(days=d)
            row = {
                "user_id": user,
                "date": day,
                "schema_version": 2,
                "summary": "A synthetic day.",
                "title": "A synthetic day",
                "language": "en",
                "decisions": [],
                "open_items": [],
                "people": rng.sample(PEOPLE, rng.randint(0, 3)),
                "projects": rng.sample(PROJECTS, rng.randint(0, 2)),
                "tags": ["synthetic"],
                "technologies": rng.sample(techs, rng.randint(0, 4)),
                "importance": rng.randint(1, 10),
                "mood": rng.choice(MOODS),
                "related_dates": [],
                "sessions": 10,
                "messages": per_day,
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
                "run_id": "bench",
            }
            warehouse.write_partition(
                wh, DAILY_SUMMARIES, pa.Table.from_pylist([row], schema=DAILY_SUMMARIES.schema), day, user
            )
            base = dt.datetime.combine(day, dt.time(0), tzinfo=dt.timezone(dt.timedelta(hours=7))).astimezone(UTC)
            msgs = pa.table(
                {
                    "message_id": [f"{user}-{day}-{i}" for i in range(per_day)],
                    "session_id": [f"{day}-{i // 40}" for i in range(per_day)],
                    "user_id": [user] * per_day,
                    "date": [day] * per_day,
                    "ts": [base + dt.timedelta(seconds=rng.randint(6 * 3600, 86399)) for _ in range(per_day)],
                    "role": ["user" if i % 2 == 0 else "assistant" for i in range(per_day)],
                    "seq": list(range(per_day)),
                    "content": ["synthetic message"] * per_day,
                    "run_id": ["bench"] * per_day,
                    "redactions": [0] * per_day,
                    "flags": [[] for _ in range(per_day)],
                }
            )
            warehouse.write_partition(wh, MESSAGES, msgs, day, user)
            ledger_rows.append(
                {
                    "user_id": user,
                    "date": day,
                    "status": "loaded",
                    "archive_fingerprint": "a",
                    "sessions": 10,
                    "messages": per_day,
                    "run_id": "bench",
                    "updated_at": dt.datetime.now(UTC),
                }
            )
    ledger.write_days(wh, ledger_rows)


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--days", type=int, default=365)
    ap.add_argument("--messages", type=int, default=400, help="messages per user per day")
    ap.add_argument("--runs", type=int, default=30)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="kenang-bench-analytics-") as tmp:
        settings, _ = init_home(Path(tmp) / "home", {"embedder": {"backend": "none"}})
        mount.claim(settings)  # as `kenang init` does
        t0 = time.perf_counter()
        build(settings, args.days, args.messages, Random(3))
        print(
            f"synthetic warehouse: 2 users x {args.days} days of summaries, {args.messages} messages per user-day "
            f"({2 * args.days * args.messages:,} messages), built in {time.perf_counter() - t0:.1f} s"
        )
        cold_parts = {}
        for name in INTENTS:  # before a run's end has made the compact copies: every day's partition is opened
            xs = []
            for _ in range(5):
                t0 = time.perf_counter()
                Analytics(settings, "gading").run(name)
                xs.append((time.perf_counter() - t0) * 1000)
            cold_parts[name] = statistics.median(xs)
        t0 = time.perf_counter()
        made = compact.refresh(settings.paths.warehouse)
        print(f"compact copies, as a run's end makes them: {made} file(s) in {time.perf_counter() - t0:.2f} s")
        t0 = time.perf_counter()
        a = Analytics(settings, "gading")
        init_ms = (time.perf_counter() - t0) * 1000
        print(f"Analytics() opened in {init_ms:.1f} ms; first use of each table copies the user's rows into memory\n")
        print(
            f"{'intent':<19} {'warm p50':>9} {'warm p95':>9} {'cold p50':>9} {'cold p95':>9} "
            f"{'cold, no copies':>16}  (ms)"
        )
        met = cold_met = True
        for name in INTENTS:
            a.run(name)  # first use: loads the tables it needs
            warm, cold = [], []
            for _ in range(args.runs):
                t0 = time.perf_counter()
                a.run(name)
                warm.append((time.perf_counter() - t0) * 1000)
            for _ in range(max(5, args.runs // 3)):
                t0 = time.perf_counter()
                Analytics(settings, "gading").run(name)
                cold.append((time.perf_counter() - t0) * 1000)
            p50 = statistics.median(warm)
            met &= p50 <= TARGET_MS
            cold_met &= statistics.median(cold) <= TARGET_COLD_MS
            print(
                f"{name:<19} {p50:9.1f} {pct(warm, 0.95):9.1f} {statistics.median(cold):9.1f} {pct(cold, 0.95):9.1f} "
                f"{cold_parts[name]:16.1f}"
            )
        print(f"\ntarget: warm p50 <= {TARGET_MS:.0f} ms for every intent: {'MET' if met else 'MISSED'}")
        print(
            f"target: cold p50 <= {TARGET_COLD_MS:.0f} ms for every intent (a year, from the compact copies): "
            f"{'MET' if cold_met else 'MISSED'}"
        )


if __name__ == "__main__":
    main()
