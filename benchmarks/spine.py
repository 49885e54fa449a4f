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
<= 3 s) and three with no Prefect server configured (target <= 5 s), and three
``kenang backfill --only-missing`` of the loaded range with no server (nothing to derive:
target <= 5 s too), and prints the median of each. A run or backfill with nothing to do
skips Prefect's start-up.

``--floor`` first runs ``../shared/bench/floor_spine.py`` (the least a nightly must do for the
same year, on 2 processes; ``--floor-script`` names another path) as a child process, in the
same minutes, and reports the first nightly's ratio to it (target <= 3). The no-op
``kenang run`` is also given as a ratio over ``python -c "import prefect"``, timed three times
in the same run.

The script ends with ONE line of JSON: ``first_nightly_s``, ``noop_cli_s``,
``import_prefect_s``, ``noop_ratio`` and, with ``--floor``, ``floor_s`` and ``floor_ratio``
(``--noop``: ``noop_cli_s``, ``noop_no_server_s``, ``noop_backfill_no_server_s``, ``import_prefect_s``,
``noop_ratio``), with
the load average at the start and the end.

One Prefect test server serves the script; its start-up is excluded from all timings.
Everything lives in a temp dir under /tmp that is removed at the end.

Run:  .venv/bin/python benchmarks/spine.py                 # the target's size
      .venv/bin/python benchmarks/spine.py --days 10 --sessions 4 --messages 10   # smoke
      .venv/bin/python benchmarks/spine.py --noop --days 30       # no-op runs, with and without a server
      .venv/bin/python benchmarks/spine.py --floor               # the floor first, then the ratio to it
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import _common as c

TARGET_SECONDS = 30.0
NOOP_TARGET_SECONDS = 3.0
NOOP_NO_SERVER_TARGET_SECONDS = 5.0
FLOOR_TARGET_RATIO = 3.0
START = dt.date(2025, 1, 1)
ROOT = Path(__file__).resolve().parent.parent
FLOOR_SCRIPT = ROOT.parent / "shared" / "bench" / "floor_spine.py"


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def floor_seconds(script: Path) -> float:
    """Run the floor script as a child process from the checkout's root; the wall seconds it reports."""
    if not script.is_file():
        raise SystemExit(f"spine: no floor script at {script}; give its path with --floor-script")
    r = subprocess.run([sys.executable, str(script)], cwd=ROOT, capture_output=True, text=True)
    found = re.search(r"([0-9.]+) s wall", r.stdout)
    if r.returncode != 0 or found is None:
        raise SystemExit(f"spine: the floor script failed ({r.returncode}): {(r.stderr or r.stdout)[-500:]}")
    print(r.stdout.strip())
    return float(found.group(1))


def import_prefect_seconds(runs: int = 3) -> float:
    """Median wall seconds of ``python -c "import prefect"`` as a new process (the no-op run's yardstick)."""
    walls = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import prefect"], check=True, cwd=ROOT)
        walls.append(time.perf_counter() - t0)
    print(f'`python -c "import prefect"`: {", ".join(f"{w:.2f}" for w in walls)} s wall')
    return sorted(walls)[len(walls) // 2]


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--days", type=int, default=365, help="days of transcripts (default 365)")
    p.add_argument("--noop", action="store_true", help="time only no-op `kenang run`s, with and without a server")
    p.add_argument("--floor", action="store_true", help="run the floor script first and report the ratio to it")
    p.add_argument("--floor-script", type=Path, default=FLOOR_SCRIPT, help=f"the floor script (default {FLOOR_SCRIPT})")
    c.size_args(p)
    args = p.parse_args(argv)
    if args.noop:
        noop(args)
        return

    load_start = _load()
    floor = floor_seconds(args.floor_script) if args.floor else None
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
        prefect_s = import_prefect_seconds()

    print(f"\npeak RSS, this process: {rss_self:.0f} MiB (before the first nightly: {rss_before:.0f} MiB)")
    print(f"peak RSS, child processes (Prefect test server, largest reaped child): {c.peak_rss_children_mib():.0f} MiB")
    n = c.cores()
    print(
        f"\ntarget: <= {TARGET_SECONDS:.0f} s wall on {c.TARGET_CORES} cores -> "
        f"{c.target_verdict(wall <= TARGET_SECONDS)} ({wall:.2f} s on {n} core{'s' * (n != 1)}"
        f"{'' if n == c.TARGET_CORES else f'; not {c.TARGET_CORES} cores, so only indicative'}"
        f"{'' if args.days == 365 and args.sessions == 10 and args.messages == 40 else '; reduced size'})"
    )
    noop_s = sorted(cli_walls)[1]
    figures: dict = {
        "days": args.days,
        "first_nightly_s": round(wall, 2),
        "noop_cli_s": round(noop_s, 2),
        "import_prefect_s": round(prefect_s, 2),
        "noop_ratio": round(noop_s / prefect_s, 2),
    }
    if floor is not None:
        print(
            f"ratio to the floor: {wall:.2f} / {floor:.2f} = {wall / floor:.1f}; target <= {FLOOR_TARGET_RATIO:.0f}: "
            f"{c.target_verdict(wall / floor <= FLOOR_TARGET_RATIO)}"
        )
        figures |= {"floor_s": round(floor, 2), "floor_ratio": round(wall / floor, 2)}
    print(json.dumps(figures | {"load_start": load_start, "load_end": _load()}))


def _median_line(what: str, runs: list[tuple[float, float]], target: float, command: str = "`kenang run`") -> str:
    walls = [w for w, _ in runs]
    med = sorted(walls)[len(walls) // 2]
    cpu = sorted(c for _, c in runs)[len(runs) // 2]
    return (
        f"{command} with nothing to do, {what}: {', '.join(f'{s:.2f}' for s in walls)} s wall "
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
        # a backfill of the loaded range that has nothing to derive (every day loaded, summarized and indexed)
        refill = ("backfill", "--only-missing", "--start", START.isoformat(), "--end", last.isoformat())
        backfills = [c.cli_noop(home, now, server=False, command=refill) for _ in range(3)]
        print(
            _median_line(
                "with no Prefect server configured",
                backfills,
                NOOP_NO_SERVER_TARGET_SECONDS,
                "`kenang backfill --only-missing` over the loaded days",
            )
        )
        # each no-server command above skipped Prefect only if none started a temporary server (its database)
        if (home.parent / "prefect-home-no-server" / "prefect.db").exists():
            print("NOTE: a command with no server went through Prefect (a temporary server ran): not a no-op")
        prefect_s = import_prefect_seconds()
        print(f"load average after: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    n = c.cores()
    print(f"({n} core{'s' * (n != 1)}{'' if n == c.TARGET_CORES else f'; not {c.TARGET_CORES}, so only indicative'})")
    noop_s = sorted(w for w, _ in with_server)[1]
    figures = {
        "days": args.days,
        "noop_cli_s": round(noop_s, 2),
        "noop_no_server_s": round(sorted(w for w, _ in without)[1], 2),
        "noop_backfill_no_server_s": round(sorted(w for w, _ in backfills)[1], 2),
        "import_prefect_s": round(prefect_s, 2),
        "noop_ratio": round(noop_s / prefect_s, 2),
    }
    print(json.dumps(figures | {"load_end": _load()}))


if __name__ == "__main__":
    main()
