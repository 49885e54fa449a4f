"""Backlog benchmark: history never blocks a night.

What it measures: a fresh home that summarizes with the bundled model (the default
``summarizer.backend: llama``), ``summarizer.max_days_per_run`` = ``--budget`` and, by
default, a keyword-only recall index (``embedder.backend: none``; ``--embedder`` picks
a model, which then takes ``embedder.max_chunks_per_run``'s default) gets ``--days`` days
of history in ``active/`` at once, as a user bringing their old transcripts does
(``year_corpus``, 1 session x 6 messages a day by default, so the model's days are
short; writing them is timed separately and not counted). Then ONE ``nightly`` flow
call runs with ``now`` = the day after the last day, 03:00 +07:00, and the script
prints: its wall time (measured outside the call) with per-stage seconds, the days
loaded (every one of them: loading is never budgeted), the days summarized (at most the
budget, and the newest ones), ``summarize.waiting`` (the days left for the next nights),
and ``kenang status`` for the home, whose "backlog, summaries" line says how many
nights and hours of work the rest is at this budget.

Target: the first run ends within the budget (every day loaded, at most ``--budget``
days summarized and they are the newest, the rest counted as waiting) and
``kenang status`` shows the backlog.

One Prefect test server serves the script; its start-up is excluded from all timings.
Everything lives in a temp dir under /tmp that is removed at the end. The bundled model
takes roughly 10-60 s a day on 2 cores, so the first run lasts about budget x that.

Run:  .venv/bin/python benchmarks/backlog.py                        # 400 days, budget 20
      .venv/bin/python benchmarks/backlog.py --embedder e5+use      # with the bundled embedders
      .venv/bin/python benchmarks/backlog.py --model /path/to/model.gguf
      .venv/bin/python benchmarks/backlog.py --days 30 --budget 3   # smoke
"""

from __future__ import annotations

import argparse
import datetime as dt
import subprocess
import sys
from pathlib import Path

import _common as c
from corpus import USERS

START = dt.date(2024, 1, 1)
EMBEDDERS = ("none", "e5+use", "e5", "use", "llama")


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--days", type=int, default=400, help="days of history in active/ (default 400)")
    p.add_argument("--budget", type=int, default=20, help="summarizer.max_days_per_run (default 20)")
    p.add_argument("--embedder", choices=EMBEDDERS, default="none", help="embedder.backend (default none)")
    p.add_argument("--model", default=None, help="summarizer.model_path, a GGUF; default: the bundled SmolLM2")
    c.size_args(p, sessions=1, messages=6)
    args = p.parse_args(argv)

    last = START + dt.timedelta(days=args.days - 1)
    now = c.run_after(last)
    expected = args.days * min(args.sessions, len(USERS))  # (user, day)s: sessions alternate between the users
    summarizer = {"backend": "llama", "max_days_per_run": args.budget}
    if args.model:
        summarizer["model_path"] = str(Path(args.model).expanduser().resolve())
    print(
        f"backlog: {args.days} days x {args.sessions} session(s) x {args.messages} messages of history "
        f"({START} .. {last}, {expected} (user, day)s), now={now.isoformat()}"
    )
    with c.bench_env("backlog") as env:
        print(f"prefect test server start-up: {env.startup_seconds:.1f} s (excluded from all timings)")
        from flows.config import init_home
        from flows.models import default_threads
        from flows.stages import plan
        from flows.store import ledger, mount

        home = env.root / "home"
        settings, _ = init_home(home, {"summarizer": summarizer, "embedder": {"backend": args.embedder}})
        mount.claim(settings)  # as `kenang init` does
        print(
            f"config: summarizer llama ({args.model or 'bundled SmolLM2'}), max_days_per_run "
            f"{plan.summary_budget(settings)}, n_threads {default_threads(settings.summarizer.n_threads)} of "
            f"{c.cores()} cores; embedder {args.embedder}, max_chunks_per_run {plan.chunk_budget(settings)}"
        )
        w = c.write_files(settings.paths.active, c.corpus(START, args.days, args.sessions, args.messages))
        print(
            f"history: {w.files} files, {w.files * args.messages} messages, {w.bytes / 2**10:.0f} KiB "
            f"in {w.seconds:.1f} s (generation + writing, not counted)"
        )

        result, wall = c.timed_nightly(home, now)
        ld, sm = result.get("load", {}), result.get("summarize", {})
        print(f"\nnightly #1: flow call wall {wall:.2f} s (flow body wall_seconds {result['wall_seconds']:.2f} s)")
        print(f"  {c.counts_line(result)}")
        print("\n".join(c.stage_table([result])))

        rows = ledger.read_days(settings.paths.warehouse)
        loaded = sorted(k for k, r in rows.items() if r["status"] == "loaded")
        done = sorted(
            (k for k, r in rows.items() if r.get("summary_status") == "summarized"), key=lambda k: (k[1], k[0])
        )
        newest = plan.newest_first(loaded, args.budget)[0]
        waiting = sm.get("waiting")
        print(f"\nloaded:     {len(loaded)} of {expected} (user, day)s (this run's load stage: {ld.get('loaded')})")
        print(
            f"summarized: {len(done)} (attempted {sm.get('days')}, failed {sm.get('failed')}; budget {args.budget})"
            + (f", {done[0][1]} .. {done[-1][1]}" if done else "")
        )
        print(f"waiting:    {waiting} (result['summarize']['waiting'])")
        if sm.get("days"):
            work = result.get("work_seconds", {}).get("summarize", 0.0)
            print(
                f"  summarize: {work:.1f} s of work ({sm.get('llm_seconds', 0):.1f} s in the model) for "
                f"{sm['days']} day(s), {work / sm['days']:.1f} s a day"
            )

        shown = _status(home)
        print("\n$ kenang status --home H")
        print(shown.rstrip())

    backlog_line = any(line.startswith("backlog, summaries:") for line in shown.splitlines())
    met = (
        len(loaded) == expected
        and ld.get("loaded") == expected
        and (sm.get("days") or 0) <= args.budget
        and set(done) <= set(newest)
        and waiting == expected - (sm.get("days") or 0)
        and (backlog_line or waiting == 0)
    )
    print(
        f"\ntarget: the first run ends within the budget (<= {args.budget} days summarized) and status shows the "
        f"backlog: {c.target_verdict(met)} (loaded {len(loaded)}/{expected}, summarized {len(done)}, "
        f"newest {'yes' if set(done) <= set(newest) else 'NO'}, waiting {waiting}, backlog line "
        f"{'shown' if backlog_line else 'ABSENT'}; first run {wall:.1f} s)"
    )


def _status(home: Path) -> str:
    """``kenang status --home H`` as a user would run it: a separate process, stdout only."""
    exe = Path(sys.executable).with_name("kenang")
    cmd = [str(exe)] if exe.is_file() else [sys.executable, "-m", "flows.cli"]
    out = subprocess.run([*cmd, "status", "--home", str(home)], capture_output=True, text=True, timeout=300)
    if out.returncode:
        return f"(kenang status exited {out.returncode})\n{out.stdout}{out.stderr}"
    return out.stdout


if __name__ == "__main__":
    main()
