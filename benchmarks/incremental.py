"""Incremental benchmark: does one new day cost the same whatever the archive already holds?

What it measures: home A starts with an empty archive; home B already holds ``--years`` (3 ×
365 days × 10 sessions × 40 messages from ``year_corpus`` by default, archived and loaded by
one nightly run; that setup is not timed in the comparison, but its duration is printed).
Then the SAME new day (10 sessions × 40 messages, dated the day after B's last day:
identical relpaths and bytes in both homes) is dropped into each home's ``active/`` and one
nightly flow call is timed in each (wall time measured outside the call), after one untimed
night on a throwaway home that warms the process up. Each measurement is repeated
``--repeats`` times, on a freshly initialised A and on a fresh copy of B's pre-run tree
(copied to the same path, so absolute paths in the catalog stay valid); the medians are
compared.

Target: median(B) / median(A) <= 1.2, both in the flow call's wall time and in kenang's
own work (the stages' ``work_seconds``, which leave out Prefect's task calls), at 3 and
at 5 years. Each repeat's B runs right after its A; the median of their ratios is
printed beside (in the JSON as ``ratio_*_paired``), less moved by the machine's speed
drifting over a run. ``--profile FILE`` writes cProfile stats of each timed call
(``FILE.A.<n>.prof`` and ``FILE.B.<n>.prof``, one per repeat) to see what still grows. The last line is JSON:
``{"years", "ratio_wall", "ratio_work", ...}``.

One Prefect test server serves the script; its start-up is excluded from all timings.
Everything lives in a temp dir under /tmp that is removed at the end.

Run:  .venv/bin/python benchmarks/incremental.py                 # the target's size
      .venv/bin/python benchmarks/incremental.py --years 5
      .venv/bin/python benchmarks/incremental.py --years 1 --days-per-year 10 --sessions 4 --messages 10  # smoke
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import statistics
import time
from pathlib import Path

import _common as c

TARGET_RATIO = 1.2
START = dt.date(2022, 1, 1)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--years", type=int, default=3, help="years already archived in home B (default 3)")
    p.add_argument("--days-per-year", type=int, default=365, help="days per year (default 365)")
    p.add_argument("--repeats", type=int, default=3, help="timed runs per home; the median is compared (default 3)")
    p.add_argument(
        "--profile",
        metavar="FILE",
        help="write cProfile stats of each timed call to FILE.A.<n>.prof and FILE.B.<n>.prof",
    )
    p.add_argument(
        "--keep",
        metavar="DIR",
        type=Path,
        help="work in DIR and leave it; a later run with the same sizes reuses B's history from it",
    )
    c.size_args(p)
    args = p.parse_args(argv)

    history = args.years * args.days_per_year
    # Every day before the real today: a day after it is rejected as from the future, and would be no new day at all.
    # Whole years back from START, so that the dates (and a kept history) stay the same from one day to the next.
    start = START
    while start + dt.timedelta(days=history + 2) > dt.date.today():
        start = start.replace(year=start.year - 1)
    new_day = start + dt.timedelta(days=history)
    now = c.run_after(new_day)
    print(
        f"incremental: one new day ({new_day}, {args.sessions} sessions x {args.messages} messages) into "
        f"A = empty archive vs B = {history} days archived ({start} .. {new_day - dt.timedelta(days=1)}); "
        f"now={now.isoformat()}, {args.repeats} repeat(s)"
    )
    with c.bench_env("incremental", args.keep) as env:
        print(f"prefect test server start-up: {env.startup_seconds:.1f} s (excluded from all timings)")
        print(c.QUANTUM_NOTE)
        home_a, home_b, base_b = env.root / "A", env.root / "B", env.root / "B.base"

        # B's history: written, archived and loaded once (not part of the comparison), or kept from a run before.
        # with the chunker's version: a history chunked by another is re-chunked by every timed night
        from transforms.chunk import CHUNKER_VERSION

        size = (
            f"{args.years} {args.days_per_year} {args.sessions} {args.messages} chunker {CHUNKER_VERSION} from {start}"
        )
        stamp = env.root / "B.size"
        if base_b.is_dir() and stamp.is_file() and stamp.read_text() == size:
            from flows.config import load_settings

            shutil.rmtree(home_b, ignore_errors=True)
            shutil.copytree(base_b, home_b, symlinks=True)
            settings_b = load_settings(home_b)
            print(f"setup B: kept from {base_b}")
        else:
            shutil.rmtree(home_b, ignore_errors=True)
            shutil.rmtree(base_b, ignore_errors=True)
            stamp.unlink(missing_ok=True)
            settings_b = c.new_home(home_b)
            w = c.write_files(settings_b.paths.active, c.corpus(start, history, args.sessions, args.messages))
            setup, setup_wall = c.timed_nightly(home_b, c.run_after(new_day - dt.timedelta(days=1)))
            t0 = time.perf_counter()
            shutil.copytree(home_b, base_b, symlinks=True)
            copy_s = time.perf_counter() - t0
            stamp.write_text(size)
            print(
                f"setup B (not timed in the comparison): generated {w.files} files ({w.bytes / 2**20:.0f} MiB) "
                f"in {w.seconds:.1f} s; first nightly {setup_wall:.1f} s; snapshot copy {copy_s:.1f} s"
            )
            print(f"  {c.counts_line(setup)}")

        new_files = list(c.corpus(new_day, 1, args.sessions, args.messages))
        # One night first, untimed, on a throwaway empty home: a process's first night pays for its imports and
        # first calls (2 to 5 s here, against about 1 s after), and that fell on A's first repeat alone.
        warm = env.root / "warm-up"
        shutil.rmtree(warm, ignore_errors=True)
        c.write_files(c.new_home(warm).paths.active, new_files)
        c.timed_nightly(warm, now)
        shutil.rmtree(warm, ignore_errors=True)
        runs: dict[str, list[tuple[dict, float]]] = {"A": [], "B": []}
        for i in range(args.repeats):
            # A: a fresh empty home at the same path each time.
            shutil.rmtree(home_a, ignore_errors=True)
            c.write_files(c.new_home(home_a).paths.active, new_files)
            runs["A"].append(_profiled(args.profile and f"{args.profile}.A", i, lambda: c.timed_nightly(home_a, now)))
            # B: the pre-run snapshot copied back to B's own path (the first run uses B as built).
            if i:
                shutil.rmtree(home_b)
                shutil.copytree(base_b, home_b, symlinks=True)
            c.write_files(settings_b.paths.active, new_files)
            runs["B"].append(_profiled(args.profile and f"{args.profile}.B", i, lambda: c.timed_nightly(home_b, now)))

        med, work = {}, {}
        for name, label in (("A", "empty archive"), ("B", f"{history} days archived")):
            walls = [w for _, w in runs[name]]
            results = [r for r, _ in runs[name]]
            med[name] = statistics.median(walls)
            work[name] = statistics.median(c.work_total(r) for r in results)
            overhead = statistics.median(c.overhead_share(r, w) for r, w in runs[name])
            print(
                f"\nhome {name} ({label}): flow call wall median {med[name]:.2f} s "
                f"(runs: {', '.join(f'{w:.2f}' for w in walls)}); prefect overhead share {overhead:.1%}"
            )
            print(f"  {c.counts_line(results[-1])}")
            print("\n".join(c.stage_table(results)))

    ratio = med["B"] / med["A"]
    ratio_work = work["B"] / work["A"]
    # Each repeat's B right after its A, in the same minute: the median of those ratios is less moved by the
    # machine's speed drifting over the run than the ratio of the medians (printed beside it, not the target).
    paired = statistics.median(b[1] / a[1] for a, b in zip(runs["A"], runs["B"], strict=True))
    paired_work = statistics.median(
        c.work_total(b[0]) / c.work_total(a[0]) for a, b in zip(runs["A"], runs["B"], strict=True)
    )
    print(f"\nB/A = {med['B']:.2f} / {med['A']:.2f} = {ratio:.2f} (flow call wall, medians)")
    print(f"kenang work only: B/A = {work['B']:.3f} / {work['A']:.3f} = {ratio_work:.2f}")
    print(f"each repeat's B over its A, median: wall {paired:.2f}, work {paired_work:.2f}")
    full = args.days_per_year == 365 and args.sessions == 10 and args.messages == 40
    notes = [n for n, on in (("reduced size", not full), ("every night under cProfile", args.profile)) if on]
    reduced = f" ({'; '.join(notes)})" if notes else ""
    for label, r in (("flow wall", ratio), ("kenang work", ratio_work)):
        print(f"target: {label} ratio <= {TARGET_RATIO} -> {c.target_verdict(r <= TARGET_RATIO)}{reduced}")
    figures = {
        "years": args.years,
        "ratio_wall": round(ratio, 3),
        "ratio_work": round(ratio_work, 3),
        "wall_empty_s": round(med["A"], 3),
        "wall_history_s": round(med["B"], 3),
        "work_empty_s": round(work["A"], 3),
        "work_history_s": round(work["B"], 3),
        "ratio_wall_paired": round(paired, 3),
        "ratio_work_paired": round(paired_work, 3),
        "days_per_year": args.days_per_year,
        "load_avg": round(os.getloadavg()[0], 2),
    }
    print(json.dumps(figures))


def _profiled(path: str | None, i: int, call):
    """``call()``, under cProfile when ``path`` is given (stats to ``path.<i>.prof``)."""
    if not path:
        return call()
    import cProfile

    prof = cProfile.Profile()
    try:
        return prof.runcall(call)
    finally:
        prof.dump_stats(f"{path}.{i}.prof")


if __name__ == "__main__":
    main()
