"""Big-day benchmark: one night over one huge Claude Code log (~200k lines over 2 days, ~200 MB).

What it measures: a fresh home (extractive summaries, keyword-only recall index) gets
one Claude Code session log written in the shape Claude Code writes it (user turns,
assistant turns with long texts and ``tool_use`` blocks, ``tool_result`` lines, the
odd ``summary`` line), ``--lines`` lines spread over two local days. By default the
log sits in an agent folder that kenang.yaml names as a ``claude_code`` source (with
``limits.source_file_mb`` and ``limits.max_file_mb`` raised to take it), so the night
collects, ingests, archives, loads, summarizes and indexes it; ``--via active`` puts
the log straight into ``active/`` instead. Generating the log is timed and not
counted.

Then ONE ``kenang run`` runs as a new process (no Prefect server: a cron job on a
small box), and the script prints its wall time, the peak RSS of the run (the
largest of the run's processes: each one's ``VmHWM`` read every 0.2 s while the run
goes, the pool's workers included, and ``getrusage(RUSAGE_CHILDREN)``), the
summarize stage's seconds (from ``kenang run --json``), and how many messages the
warehouse holds against how many the log has. A second ``kenang run`` must be a no-op.

Targets: the night <= 3 min and peak RSS <= 600 MiB, every message loaded.
``--summary-only`` times only the extractive summary of one day of ``--messages``
messages (target <= 5 s at 100,000), in this process.

Ends with ONE line of JSON: ``{"messages", "wall_s", "peak_rss_mib", "summarize_s"}``.

Run:  .venv/bin/python benchmarks/big_day.py                       # the target's size
      .venv/bin/python benchmarks/big_day.py --lines 20000          # smaller
      .venv/bin/python benchmarks/big_day.py --summary-only --messages 100000
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

NIGHT_TARGET_S = 180.0
RSS_TARGET_MIB = 600.0
SUMMARY_TARGET_S = 5.0
DAY1 = dt.date(2025, 3, 10)
JAKARTA = dt.timezone(dt.timedelta(hours=7))
SESSION = "5b0c1d2e-3f40-4a51-8b62-7c83d94ea5f6"
ROOT = Path.cwd() if (Path.cwd() / "flows").is_dir() else Path(__file__).resolve().parent.parent

_WORDS = (
    "the index segment parser loader stream batch row group parquet writer reader memory budget night "
    "summary extractive note cue open item decision fixed failing test module function class method "
    "refactor config yaml schema migration warehouse archive quarantine checksum verify rename fsync "
    "worker pool queue retry timeout latency profile allocation buffer chunk vector keyword posting "
    "recall query embed model token prompt answer review branch commit merge release deploy rollback"
).split()
_FILES = [f"src/pkg/mod_{i}.py" for i in range(60)]


def _sentence(rng: random.Random, n: int) -> str:
    words = [rng.choice(_WORDS) for _ in range(n)]
    return " ".join(words).capitalize() + "."


def _text(rng: random.Random, sentences: int) -> str:
    return " ".join(_sentence(rng, rng.randint(6, 18)) for _ in range(sentences))


def write_log(path: Path, lines: int, seed: int = 33) -> tuple[int, int]:
    """Write a Claude Code log of ``lines`` lines over two local days; (messages kenang should load, bytes)."""
    rng = random.Random(seed)
    start = dt.datetime.combine(DAY1, dt.time(8, 0), tzinfo=JAKARTA)
    step = dt.timedelta(seconds=(2 * 86400 - 9 * 3600) / max(lines, 1))
    parent = None
    messages = 0
    size = 0
    with path.open("w", encoding="utf-8") as fh:
        for i in range(lines):
            ts = (start + step * i).astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
            uid = f"{i:08x}-0000-4000-8000-{seed:012x}"
            base = {
                "parentUuid": parent,
                "isSidechain": False,
                "userType": "external",
                "cwd": "/home/dev/project",
                "sessionId": SESSION,
                "version": "1.0.98",
                "gitBranch": "main",
                "uuid": uid,
                "timestamp": ts,
            }
            kind = i % 10
            if i % 5000 == 4999:
                rec = {"type": "summary", "summary": _sentence(rng, 8), "leafUuid": uid}
            elif kind == 0:
                rec = {**base, "type": "user", "message": {"role": "user", "content": _text(rng, rng.randint(1, 4))}}
            elif kind in (1, 4, 7):
                rec = {
                    **base,
                    "type": "assistant",
                    "message": {
                        "id": f"msg_{uid}",
                        "type": "message",
                        "role": "assistant",
                        "model": "claude-sonnet-4-20250514",
                        "content": [{"type": "text", "text": _text(rng, rng.randint(3, 14))}],
                        "stop_reason": None,
                        "usage": {"input_tokens": rng.randint(3, 900), "output_tokens": rng.randint(10, 900)},
                    },
                }
            elif kind in (2, 5, 8):
                rec = {
                    **base,
                    "type": "assistant",
                    "message": {
                        "id": f"msg_{uid}",
                        "type": "message",
                        "role": "assistant",
                        "model": "claude-sonnet-4-20250514",
                        "content": [
                            {
                                "type": "tool_use",
                                "id": f"toolu_{uid}",
                                "name": rng.choice(("Read", "Edit", "Bash", "Grep")),
                                "input": {"file_path": f"/home/dev/project/{rng.choice(_FILES)}", "limit": 200},
                            }
                        ],
                    },
                }
            else:
                body = "\n".join(f"{n:>5}\t{_sentence(rng, rng.randint(4, 12))}" for n in range(rng.randint(2, 12)))
                rec = {
                    **base,
                    "type": "user",
                    "message": {
                        "role": "user",
                        "content": [{"tool_use_id": f"toolu_{uid}", "type": "tool_result", "content": body}],
                    },
                }
            line = json.dumps(rec, ensure_ascii=False) + "\n"
            fh.write(line)
            size += len(line.encode("utf-8"))
            if rec.get("type") != "summary":
                parent = uid
                messages += 1
    return messages, size


def _loadavg() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


class Peak:
    """The largest peak RSS (``VmHWM``) of a process and its descendants, read every ``every`` seconds while it
    runs: the pool's workers are children of its forkserver, which the run may leave to exit on its own, and
    ``getrusage(RUSAGE_CHILDREN)`` counts only the processes that were waited for."""

    def __init__(self, pid: int, every: float = 0.2):
        import threading

        self.mib = 0.0
        self._pid, self._every, self._stop = pid, every, threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        import psutil

        try:
            root = psutil.Process(self._pid)
        except psutil.Error:
            return
        while not self._stop.is_set():
            try:
                procs = [root, *root.children(recursive=True)]
            except psutil.Error:
                return
            for proc in procs:
                try:
                    with open(f"/proc/{proc.pid}/status", encoding="ascii") as f:
                        hwm = next((int(line.split()[1]) for line in f if line.startswith("VmHWM:")), 0)
                except (OSError, ValueError):
                    continue
                self.mib = max(self.mib, hwm / 1024)
            self._stop.wait(self._every)

    def stop(self) -> float:
        self._stop.set()
        self._thread.join()
        return self.mib


def _kenang(home: Path, now: dt.datetime, env: dict) -> tuple[float, dict, float]:
    """One ``kenang run --json``: its wall, its JSON, and the largest peak RSS of its processes (MiB)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "flows.cli", "run", "--home", str(home), "--now", now.isoformat(), "--json"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    peak = Peak(proc.pid)
    stdout, stderr = proc.communicate()
    wall = time.perf_counter() - t0
    watched = peak.stop()
    if proc.returncode != 0:
        raise SystemExit(f"kenang run failed ({proc.returncode}): {stderr[-3000:]}")
    try:
        out = json.loads(stdout)
    except ValueError:
        out = {}
    return wall, out, watched


def _messages_in_warehouse(home: Path) -> int:
    """Messages the warehouse holds (every finished day's Parquet), read with DuckDB in this process."""
    import duckdb

    files = [str(p) for p in (home / "warehouse").rglob("*.parquet") if "messages" in p.as_posix()]
    if not files:
        return 0
    con = duckdb.connect()
    try:
        row = con.execute("SELECT count(*) FROM read_parquet(?, union_by_name=true)", [files]).fetchone()
    finally:
        con.close()
    return int(row[0]) if row else 0


def _stage_seconds(out: dict, stage: str) -> float | None:
    for key in ("work_seconds", "seconds"):
        got = (out.get(key) or {}).get(stage)
        if got is not None:
            return float(got)
    return None


def night(args: argparse.Namespace) -> dict:
    root = Path(tempfile.mkdtemp(prefix="kenang-bench-bigday-", dir="/tmp"))
    try:
        home, agent = root / "home", root / "agent" / "projects" / "-home-dev-project"
        agent.mkdir(parents=True)
        env = {k: v for k, v in os.environ.items() if k not in ("PREFECT_API_URL", "KENANG_HOME")}
        env.update(
            PREFECT_HOME=str(root / "prefect-home"),
            PREFECT_LOGGING_LEVEL="WARNING",
            PREFECT_SERVER_ANALYTICS_ENABLED="false",
            PYTHONPATH=str(ROOT),
        )
        values: dict = {
            "summarizer": {"backend": "extractive"},
            "embedder": {"backend": "none"},
            "limits": {"max_file_mb": 1024, "source_file_mb": 1024},
        }
        if args.via == "source":
            values["sources"] = [{"name": "cc", "kind": "claude_code", "path": str(agent.parent.parent)}]
        subprocess.run([sys.executable, "-c", _INIT, str(home), json.dumps(values)], env=env, check=True, cwd=ROOT)
        log = (agent if args.via == "source" else home / "active") / f"{SESSION}.jsonl"
        log.parent.mkdir(parents=True, exist_ok=True)
        t0 = time.perf_counter()
        expected, size = write_log(log, args.lines)
        quiet = time.time() - 6 * 3600
        os.utime(log, (quiet, quiet))
        print(
            f"big_day: {args.lines} lines, {expected} messages, {size / 2**20:.1f} MiB over {DAY1} and "
            f"{DAY1 + dt.timedelta(days=1)}, via {args.via} (written in {time.perf_counter() - t0:.1f} s, not counted)"
        )
        now = dt.datetime.combine(DAY1 + dt.timedelta(days=2), dt.time(3, 0), tzinfo=JAKARTA)
        print(f"load average before: {_loadavg()}")
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        wall, out, watched = _kenang(home, now, env)
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        print(f"load average after: {_loadavg()}")
        summarize_s = _stage_seconds(out, "summarize")
        stages = {k: round(v, 2) for k, v in (out.get("work_seconds") or out.get("seconds") or {}).items()}
        print(f"night: {wall:.1f} s wall; stages (kenang work s): {stages}")
        loaded = _messages_in_warehouse(home)
        print(f"messages in the warehouse: {loaded} of {expected} ({'all' if loaded == expected else 'MISSING SOME'})")
        again, out2, _ = _kenang(home, now, env)
        print(f"rerun: {again:.1f} s wall, load {json.dumps((out2.get('load') or {}).get('loaded'))} loaded (no-op)")
        peak_mib = max(max(peak, before) / 1024, watched)
        print(
            f"peak RSS: {peak_mib:.0f} MiB (every process of the run, read while it ran: {watched:.0f}; "
            f"the waited-for children, getrusage: {max(peak, before) / 1024:.0f})"
        )
        print(
            f"targets: night <= {NIGHT_TARGET_S:.0f} s: {'MET' if wall <= NIGHT_TARGET_S else 'MISSED'}; "
            f"peak RSS <= {RSS_TARGET_MIB:.0f} MiB: {'MET' if peak_mib <= RSS_TARGET_MIB else 'MISSED'} "
            f"({peak_mib:.0f} MiB, the largest process of the run)"
        )
        return {
            "messages": loaded,
            "wall_s": round(wall, 2),
            "peak_rss_mib": round(peak_mib, 1),
            "summarize_s": None if summarize_s is None else round(summarize_s, 2),
        }
    finally:
        shutil.rmtree(root, ignore_errors=True)


_INIT = """
import json, sys
from pathlib import Path
from flows.config import init_home
from flows.store import mount
settings, _ = init_home(Path(sys.argv[1]), json.loads(sys.argv[2]))
mount.claim(settings)
"""


def summary_only(args: argparse.Namespace) -> dict:
    """The extractive summary of one day of ``--messages`` messages, timed in this process.

    What the summarize stage does for a day once its messages are read: the note
    (``flows.stages.summarize.written``: summarize, render, read back) and the day's
    candidates for core memory (``transforms.candidates.scan_day``).
    """
    sys.path.insert(0, str(ROOT))
    root = Path(tempfile.mkdtemp(prefix="kenang-bench-bigday-", dir="/tmp"))
    try:
        log = root / f"{SESSION}.jsonl"
        write_log(log, args.messages + args.messages // 4000 + 1)
        day_input = _day_input(log, args.messages)
        from flows.stages.summarize import written
        from transforms.candidates import scan_day
        from transforms.summarize import ExtractiveSummarizer

        print(f"load average before: {_loadavg()}")
        t0 = time.perf_counter()
        result, text, _ = written((ExtractiveSummarizer(), day_input, day_input.today))
        took = time.perf_counter() - t0
        scan_day(day_input.text)
        scanned = time.perf_counter() - t0 - took
        print(f"load average after: {_loadavg()}")
        print(
            f"extractive summary of a day of {len(day_input.text.messages)} messages: {took:.2f} s "
            f"({len(text)} chars); core-memory candidates: {scanned:.2f} s; "
            f"target <= {SUMMARY_TARGET_S:.0f} s: {'MET' if took <= SUMMARY_TARGET_S else 'MISSED'}"
        )
        return {
            "messages": len(day_input.text.messages),
            "wall_s": None,
            "peak_rss_mib": None,
            "summarize_s": round(took, 2),
        }
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _day_input(log: Path, n: int):
    """One day's DayInput of the log's first ``n`` messages, all put on DAY1 (as the load would give them)."""
    from transforms.extract import DayMessage, DayText
    from transforms.imports import parse_export
    from transforms.summarize import DayInput, SessionMeta

    export = parse_export(log.read_bytes(), fmt="claude_code", tz=JAKARTA)
    got = [m for c in export.conversations for m in c.messages][:n]
    msgs = tuple(DayMessage(SESSION, m.role, m.content, m.ts, False) for m in got)
    text = DayText(user_id="default", day=DAY1, tz=JAKARTA, messages=msgs)
    meta = SessionMeta(SESSION, msgs[0].ts, msgs[-1].ts, len(msgs), f"2025/03/10/{SESSION}.jsonl")
    return DayInput(text, (meta,), DAY1 + dt.timedelta(days=1))


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--lines", type=int, default=198_102, help="lines of the log (default 198,102)")
    p.add_argument("--via", choices=("source", "active"), default="source", help="a claude_code source, or active/")
    p.add_argument("--summary-only", action="store_true", help="time only the extractive summary of one day")
    p.add_argument("--messages", type=int, default=100_000, help="--summary-only: messages in the day")
    args = p.parse_args(argv)
    figures = summary_only(args) if args.summary_only else night(args)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
