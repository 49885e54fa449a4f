"""Spine benchmark: one nightly run (ingest → quarantine → archive → load → summarize → catalog) over a synthetic year.

What it measures: a fresh home gets ``year_corpus`` files for 365 days × 10 sessions ×
40 messages (3,650 files, 146,000 messages) in ``active/``; generating and writing them
is timed separately and not counted. Then ONE ``nightly`` flow call runs with ``now`` =
the day after the last day, 03:00 +07:00, and the script prints: the flow call's wall
time (measured outside it), per-stage seconds (around task calls) and work seconds
(inside kenang's own code), the Prefect overhead share = 1 - sum(work)/flow wall, peak
RSS of this process and of child processes (the Prefect test server), and a second,
identical nightly (a rerun, which must be a no-op) with its wall time, and three no-op
``kenang run`` CLI calls as new processes against the same Prefect server (what a cron
or systemd timer pays with a server running; target <= 3 s). No model: the
home summarizes with the extractive backend (``benchmarks/summarize.py`` times the model),
and the summarize stage is its own line in the per-stage table.

Target: <= 30 s wall for the first nightly, on 2 cores.

``--noop`` measures only the no-op ``kenang run`` (the home loaded first with one
nightly, not timed): three runs as new processes against the Prefect server (target
<= 3 s) and three with no Prefect server configured (target <= 5 s), and prints the
median of each. Without a server, a run with nothing to do skips Prefect's start-up.

One Prefect test server serves the script; its start-up is excluded from all timings.
Everything lives in a temp dir under /tmp that is removed at the end.

Run:  .venv/bin/python benchmarks/spine.py                 # the target's size
      .venv/bin/python benchmarks/spine.py --days 10 --sessions 4 --messages 10   # smoke
      .venv/bin/python benchmarks/spine.py --noop --days 30       # no-op runs, with and without a server
"""

from __future__ import annotations

import argparse
import datetime as dt
import os

import _common as c

TARGET_SECONDS = 30.0
NOOP_TARGET_SECONDS = 3.0
NOOP_NO_SERVER_TARGET_SECONDS = 5.0
START = dt.date(2025, 1, 1)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--days", type=int, default=365, help="days of transcripts (default 365)")
    p.add_argument("--noop", action="store_true", help="time only no-op `kenang run`s, with and without a server")
    c.size_args(p)
    args = p.parse_args(argv)
    if args.noop:
        noop(args)
        return

    last = START + dt.timedelta(days=args.days - 1)
    now = c.run_after(last)
    print(
        f"spine: nightly over {args.days} days x {args.sessions} sessions x {args.messages} messages "
        f"({START} .. {last}), now={now.isoformat()}"
    )
    with c.bench_env("spine") as env:
        print(f"prefect test server start-up: {env.startup_seconds:.1f} s (excluded from all timings)")
        print(c.QUANTUM_NOTE)
        home = env.root / "home"
        settings = c.new_home(home)
        w = c.write_files(settings.paths.active, c.corpus(START, args.days, args.sessions, args.messages))
        print(
            f"generated: {w.files} files, {w.files * args.messages} messages, {w.bytes / 2**20:.1f} MiB "
            f"in {w.seconds:.1f} s (generation + writing, not counted)"
        )
        rss_before = c.peak_rss_self_mib()

        first, wall = c.timed_nightly(home, now)
        print(f"\nnightly #1: flow call wall {wall:.2f} s (flow body wall_seconds {first['wall_seconds']:.2f} s)")
        print(f"  {c.counts_line(first)}")
        print("\n".join(c.stage_table([first])))
        print(
            f"  prefect overhead share: 1 - {c.work_total(first):.2f}/{wall:.2f} = {c.overhead_share(first, wall):.1%}"
        )

        again, wall2 = c.timed_nightly(home, now)
        print(
            f"\nnightly #2 (rerun, expected no-op): flow call wall {wall2:.2f} s, "
            f"kenang work {c.work_total(again):.2f} s, overhead share {c.overhead_share(again, wall2):.1%}"
        )
        print(f"  {c.counts_line(again)}")
        rss_self = c.peak_rss_self_mib()
        cli_walls = [c.cli_noop_seconds(home, now) for _ in range(3)]
        print(
            f"\n`kenang run` with nothing to do, as a new process against the running Prefect server: "
            f"{', '.join(f'{s:.2f}' for s in cli_walls)} s wall (median {sorted(cli_walls)[1]:.2f} s); "
            f"target <= {NOOP_TARGET_SECONDS:.0f} s: {c.target_verdict(sorted(cli_walls)[1] <= NOOP_TARGET_SECONDS)}"
        )

    print(f"\npeak RSS, this process: {rss_self:.0f} MiB (before the first nightly: {rss_before:.0f} MiB)")
    print(f"peak RSS, child processes (Prefect test server, largest reaped child): {c.peak_rss_children_mib():.0f} MiB")
    n = c.cores()
    print(
        f"\ntarget: <= {TARGET_SECONDS:.0f} s wall on {c.TARGET_CORES} cores -> "
        f"{c.target_verdict(wall <= TARGET_SECONDS)} ({wall:.2f} s on {n} core{'s' * (n != 1)}"
        f"{'' if n == c.TARGET_CORES else f'; not {c.TARGET_CORES} cores, so only indicative'}"
        f"{'' if args.days == 365 and args.sessions == 10 and args.messages == 40 else '; reduced size'})"
    )


def _median_line(what: str, runs: list[tuple[float, float]], target: float) -> str:
    walls = [w for w, _ in runs]
    med = sorted(walls)[len(walls) // 2]
    cpu = sorted(c for _, c in runs)[len(runs) // 2]
    return (
        f"`kenang run` with nothing to do, {what}: {', '.join(f'{s:.2f}' for s in walls)} s wall "
        f"(median {med:.2f} s; CPU median {cpu:.2f} s); target <= {target:.0f} s: {c.target_verdict(med <= target)}"
    )


def noop(args: argparse.Namespace) -> None:
    """Three no-op CLI runs with the Prefect server, three without one; the home is loaded first (not timed)."""
    last = START + dt.timedelta(days=args.days - 1)
    now = c.run_after(last)
    with c.bench_env("spine-noop") as env:
        home = env.root / "home"
        settings = c.new_home(home)
        w = c.write_files(settings.paths.active, c.corpus(START, args.days, args.sessions, args.messages))
        c.timed_nightly(home, now)
        print(f"spine --noop: a home of {w.files} files over {args.days} days, loaded (not timed)")
        print(f"load average before: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")
        with_server = [c.cli_noop(home, now) for _ in range(3)]
        print(_median_line("against a running Prefect server", with_server, NOOP_TARGET_SECONDS))
        without = [c.cli_noop(home, now, server=False) for _ in range(3)]
        print(_median_line("with no Prefect server configured", without, NOOP_NO_SERVER_TARGET_SECONDS))
        print(f"load average after: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    n = c.cores()
    print(f"({n} core{'s' * (n != 1)}{'' if n == c.TARGET_CORES else f'; not {c.TARGET_CORES}, so only indicative'})")


if __name__ == "__main__":
    main()
