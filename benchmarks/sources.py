"""Sources benchmark: a night's collection over many agents' logs, and the archive's growth over a month.

1. Collection time. ``--files`` (500) Claude Code session logs totalling ``--total-mb``
   (1 GB) sit in one source folder; a first collection takes them all (printed, not
   the target). Then ``--changed`` (1 %) of them get a new day of lines appended, and
   the next night's collection is timed: ``flows.stages.collect.collect``, the stage
   the nightly flow runs before ingest. Target: <= 5 s on 2 cores.
2. Archive growth. One Claude Code log grows night after night for ``--nights`` (30)
   nights to ``--grow-mb`` (50 MB); after each append a real nightly flow runs
   (collect, ingest, archive, load, summaries, keyword index). Printed: the bytes the
   collected segments take in the archive against the bytes appended (target <= 1.1x),
   and every other file the archive gained (manifests, summaries, MEMORY_INDEX) apart.

Lines are real Claude Code records (the d-kimuson sample in tests/fixtures, MIT) with
their session id, uuids and timestamps rewritten per file and day, so their sizes and
shapes are a real log's. One Prefect test server serves part 2; its start-up is not
timed. Everything lives in a temp dir under /tmp that is removed at the end.

Run:  .venv/bin/python benchmarks/sources.py
      .venv/bin/python benchmarks/sources.py --files 20 --total-mb 20 --nights 3 --grow-mb 3   # smoke
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import statistics
import time
import uuid
from pathlib import Path

import _common as c

SAMPLE = (
    Path(__file__).resolve().parent.parent
    / "tests"
    / "fixtures"
    / "imports"
    / "claude_code"
    / "d-kimuson__claude-code-viewer__1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl"
)
TARGET_SECONDS = 5.0
TARGET_GROWTH = 1.1
FIRST_DAY = dt.date(2026, 1, 1)


def records() -> list[dict]:
    return [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines() if line.strip()]


def day_of_lines(templates: list[dict], session: str, day: dt.date, size: int, salt: int) -> bytes:
    """About ``size`` bytes of the sample's records as one session's lines on ``day`` (10:00 on, a second apart)."""
    out, n, i = [], 0, 0
    start = dt.datetime.combine(day, dt.time(10), tzinfo=c.JAKARTA)
    while n < size:
        r = dict(templates[i % len(templates)])
        r["sessionId"] = session
        r["uuid"] = str(uuid.UUID(int=(salt << 64) + i))
        r["timestamp"] = (start + dt.timedelta(seconds=i)).astimezone(dt.UTC).isoformat().replace("+00:00", "Z")
        line = (json.dumps(r, ensure_ascii=False) + "\n").encode()
        out.append(line)
        n += len(line)
        i += 1
    return b"".join(out)


def append(path: Path, data: bytes, mtime: float) -> None:
    with open(path, "ab") as fh:
        fh.write(data)
    os.utime(path, (mtime, mtime))


def part_collection(root: Path, args) -> bool:
    from flows.config import edit_config, load_settings
    from flows.stages import collect

    templates = records()
    settings = c.new_home(root / "home-a")
    logs = root / "claude" / "projects"
    edit_config(
        settings.paths.home,
        lambda d: d.setdefault("sources", []).append({"name": "cc", "kind": "claude_code", "path": str(logs)}),
    )
    settings = load_settings(settings.paths.home)
    old = time.time() - 86400
    per_file = args.total_mb * 2**20 // args.files
    t0 = time.perf_counter()
    total = 0
    for k in range(args.files):
        path = logs / f"project-{k % 25:02d}" / f"{uuid.UUID(int=k)}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        days = 5
        data = b"".join(
            day_of_lines(
                templates, str(uuid.UUID(int=k)), FIRST_DAY + dt.timedelta(days=d), per_file // days, k * 100 + d
            )
            for d in range(days)
        )
        append(path, data, old)
        total += len(data)
    print(f"part 1: {args.files} logs, {total / 2**20:.0f} MiB written in {time.perf_counter() - t0:.1f} s (not timed)")
    now = dt.datetime.combine(FIRST_DAY + dt.timedelta(days=6), dt.time(3), tzinfo=c.JAKARTA)
    t0 = time.perf_counter()
    first = collect.collect(settings, now, time.time())
    print(
        f"  first collection (every file whole): {time.perf_counter() - t0:.2f} s, "
        f"{sum(r.bytes for r in first) / 2**20:.0f} MiB taken, {sum(r.written for r in first)} segments"
    )
    changed = max(1, args.files * args.changed // 100)
    runs = []
    for rep in range(args.repeats):
        day = FIRST_DAY + dt.timedelta(days=6 + rep)
        added = 0
        for k in range(0, args.files, args.files // changed)[:changed]:
            path = logs / f"project-{k % 25:02d}" / f"{uuid.UUID(int=k)}.jsonl"
            data = day_of_lines(templates, str(uuid.UUID(int=k)), day, per_file // 5, k * 100 + 50 + rep)
            append(path, data, old + rep + 1)
            added += len(data)
        now = dt.datetime.combine(day + dt.timedelta(days=1), dt.time(3), tzinfo=c.JAKARTA)
        t0 = time.perf_counter()
        rep_res = collect.collect(settings, now, time.time())
        runs.append(time.perf_counter() - t0)
        got = sum(r.bytes for r in rep_res)
        assert got == added, (got, added)
        print(
            f"  night {rep + 1}: {changed} of {args.files} logs appended ({added / 2**20:.1f} MiB): collection "
            f"{runs[-1]:.2f} s, {sum(r.written for r in rep_res)} segments, {got / 2**20:.1f} MiB taken "
            f"(exactly the bytes appended)"
        )
    median = statistics.median(runs)
    met = median <= TARGET_SECONDS
    print(
        f"target: a night's collection over {args.files} logs / {total / 2**30:.2f} GiB with {args.changed} % "
        f"changed <= {TARGET_SECONDS} s: {c.target_verdict(met)} (median {median:.2f} s of {len(runs)})"
    )
    return met


def part_growth(root: Path, args) -> bool:
    from flows.config import edit_config
    from flows.pipeline import nightly

    templates = records()
    settings = c.new_home(root / "home-b")
    log = root / "grow" / "session.jsonl"
    log.parent.mkdir(parents=True)
    edit_config(
        settings.paths.home,
        lambda d: d.setdefault("sources", []).append({"name": "cc", "kind": "claude_code", "path": str(log)}),
    )
    archive = settings.paths.archive
    per_night = args.grow_mb * 2**20 // args.nights
    appended = 0
    seconds = []
    for n in range(args.nights):
        day = FIRST_DAY + dt.timedelta(days=n)
        append(log, day_of_lines(templates, "grow-session", day, per_night, 10_000 + n), time.time() - 86400)
        appended = log.stat().st_size
        res = nightly(
            now=dt.datetime.combine(day + dt.timedelta(days=1), dt.time(3), tzinfo=c.JAKARTA),
            home=str(settings.paths.home),
        )
        seconds.append(res["seconds"].get("collect", 0.0))
        assert res["collect"]["errors"] == 0 and res["ingest"]["rejected"] == 0, res["collect"]
    segs = sum(p.stat().st_size for p in archive.rglob("collected-*"))
    other = sum(p.stat().st_size for p in archive.rglob("*") if p.is_file() and not p.name.startswith("collected-"))
    growth = segs / appended
    met = growth <= TARGET_GROWTH
    print(
        f"part 2: one log grown to {appended / 2**20:.1f} MiB over {args.nights} nights "
        f"(collect stage median {statistics.median(seconds):.2f} s a night)"
    )
    print(
        f"  archive: collected segments {segs / 2**20:.2f} MiB = {growth:.4f}x the bytes appended; "
        f"other archive files (manifests, summaries, MEMORY_INDEX) {other / 2**20:.2f} MiB"
    )
    print(
        f"target: archive growth <= {TARGET_GROWTH}x the bytes appended: {c.target_verdict(met)} ({growth:.4f}x; "
        f"{(segs + other) / appended:.4f}x counting every archive file)"
    )
    return met


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--files", type=int, default=500)
    p.add_argument("--total-mb", type=int, default=1024)
    p.add_argument("--changed", type=int, default=1, help="percent of the logs appended to before the timed night")
    p.add_argument("--repeats", type=int, default=3, help="timed nights (default 3); the median is the figure")
    p.add_argument("--nights", type=int, default=30)
    p.add_argument("--grow-mb", type=int, default=50)
    args = p.parse_args(argv)
    print(f"sources: {c.cores()} core(s)")
    with c.bench_env("sources") as env:
        print(f"prefect test server start-up: {env.startup_seconds:.1f} s (excluded from all timings)")
        part_collection(env.root, args)
        part_growth(env.root, args)


if __name__ == "__main__":
    main()
