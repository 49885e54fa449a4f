"""Shared setup for the benchmark scripts: a scratch dir, one Prefect test server, timed runs.

Invariants:

- Prefect is configured through the environment *before* it is first imported, so
  nothing here imports ``prefect`` or ``flows.pipeline`` at module level; ``bench_env``
  sets the environment and only then starts the harness.
- Everything a benchmark writes (kenang homes, PREFECT_HOME) lives under one temp dir
  in /tmp that ``bench_env`` removes on exit.
- Server start-up happens once per script and is excluded from every timing.
- Timings are printed, never asserted.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import resource
import shutil
import statistics
import tempfile
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from corpus import year_corpus

import flows
from flows.cli.demo_corpus import SyntheticFile


def code_tree() -> Path:
    """The checkout whose kenang this process runs: ``python benchmarks/x.py`` puts the script's folder first on
    ``sys.path``, not the working directory, so a checkout that borrows another's venv (an editable install) runs
    the other's code unless ``PYTHONPATH`` names it."""
    return Path(flows.__file__).resolve().parents[1]


if code_tree() != Path(__file__).resolve().parents[1]:
    import sys

    print(
        f"warning: this benchmark is in {Path(__file__).resolve().parents[1]} but runs kenang from {code_tree()}; "
        f"set PYTHONPATH={Path(__file__).resolve().parents[1]} to measure this checkout",
        file=sys.stderr,
    )

#: The synthetic corpus is dated in Jakarta time, the default home's timezone.
JAKARTA = dt.timezone(dt.timedelta(hours=7))
#: Targets are stated for this many cores.
TARGET_CORES = 2
#: Prefect joins a heartbeat thread that sleeps in 1 s steps when a flow call ends (prefect/flow_engine.py
#: ``_send_heartbeats``), which rounded flow call walls up to whole seconds; kenang's commands turn it off
#: (``flows.pipeline.heartbeats_as_asked``), and so does ``bench_env``.
QUANTUM_NOTE = (
    "note: flows run as a kenang command runs them, without Prefect's flow-run heartbeats (whose thread, "
    "joined at a run's end, rounded each flow call up to whole seconds)"
)


def size_args(parser: argparse.ArgumentParser, *, sessions: int = 10, messages: int = 40) -> None:
    """--sessions and --messages, defaulting to the targets' sizes."""
    parser.add_argument("--sessions", type=int, default=sessions, help=f"sessions per day (default {sessions})")
    parser.add_argument("--messages", type=int, default=messages, help=f"messages per session (default {messages})")


@dataclass(frozen=True)
class Env:
    root: Path  # scratch dir for homes
    startup_seconds: float  # Prefect test server start-up, excluded from timings


@contextmanager
def bench_env(prefix: str, keep: Path | None = None) -> Iterator[Env]:
    """A scratch dir under /tmp (or ``keep``, left in place) and one Prefect test server for the whole script.

    SIGTERM (``kill``, a timeout) ends the script as kenang's own commands end (``flows.cli.stop``): the server
    is stopped and the scratch dir removed, or, past the grace time, the server is killed with the script."""
    from flows.cli import stop

    stop.install(grace_seconds=30.0)  # the harness's server stops in about a second; a loaded box may take more
    root = keep.resolve() if keep else Path(tempfile.mkdtemp(prefix=f"kenang-bench-{prefix}-", dir="/tmp"))
    root.mkdir(parents=True, exist_ok=True)
    try:
        os.environ["PREFECT_HOME"] = str(root / "prefect-home")
        os.environ["PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS"] = "180"
        os.environ["PREFECT_SERVER_ANALYTICS_ENABLED"] = "false"
        os.environ["PREFECT_LOGGING_LEVEL"] = "WARNING"
        os.environ.pop("KENANG_HOME", None)
        from prefect.testing.utilities import prefect_test_harness

        t0 = time.perf_counter()
        with prefect_test_harness(server_startup_timeout=None):
            startup = time.perf_counter() - t0
            import flows.pipeline  # imported (and its flows made) here, so their cost is not in the first timing

            flows.pipeline.nightly, flows.pipeline.backfill  # noqa: B018 - asked for only to make them

            with flows.pipeline.heartbeats_as_asked():
                yield Env(root, startup)
    finally:
        if keep is None:
            shutil.rmtree(root, ignore_errors=True)


def granularity_args(parser: argparse.ArgumentParser) -> None:
    """--granularity: how the recall index cuts transcripts (``transforms.chunk.GRANULARITY``)."""
    parser.add_argument(
        "--granularity",
        choices=("window", "pair", "both"),
        default=None,
        help="cut transcripts into ~300-token windows or user turn + reply (default: kenang's)",
    )


def use_granularity(name: str | None) -> None:
    """Index with this granularity: set in this process, and the chunking kept in it (no worker pool)."""
    if name is None:
        return
    from transforms import chunk

    chunk.GRANULARITY = name
    os.environ["KENANG_WORKERS"] = "1"


def new_home(path: Path):
    """An initialised kenang home (Asia/Jakarta, grace 2 h) whose summaries use the
    extractive backend and whose recall index is keyword-only: these benchmarks time
    the non-model stages (benchmarks/summarize.py times the LLM, benchmarks/recall.py
    the embedders); returns Settings."""
    from flows.config import init_home
    from flows.store import mount

    settings, _ = init_home(path, {"summarizer": {"backend": "extractive"}, "embedder": {"backend": "none"}})
    mount.claim(settings)  # as `kenang init` does
    return settings


def corpus(start: dt.date, days: int, sessions: int, messages: int) -> Iterator[SyntheticFile]:
    return year_corpus(start=start, days=days, sessions_per_day=sessions, messages_per_session=messages, tz=JAKARTA)


@dataclass(frozen=True)
class Written:
    files: int
    bytes: int
    seconds: float


def write_files(active: Path, files: Iterable[SyntheticFile]) -> Written:
    """Place synthetic files under active/ with their mtimes; timed."""
    t0 = time.perf_counter()
    n = size = 0
    for f in files:
        path = active / f.relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        if f.symlink_to is not None:
            os.symlink(f.symlink_to, path)
        else:
            path.write_bytes(f.data)
            size += len(f.data)
            if f.mtime is not None:
                os.utime(path, (f.mtime, f.mtime))
        n += 1
    return Written(n, size, time.perf_counter() - t0)


def run_after(last_day: dt.date) -> dt.datetime:
    """The nightly's ``now``: the day after last_day, 03:00 +07:00."""
    return dt.datetime.combine(last_day + dt.timedelta(days=1), dt.time(3, 0), tzinfo=JAKARTA)


def timed_nightly(home: Path, now: dt.datetime) -> tuple[dict, float]:
    """One nightly flow call; returns (result, wall seconds measured outside the call).

    The setup's writes (a home copied back, the day's files) reach the disk first: a real night does not follow
    hundreds of MiB of fresh writes, and their writeback would otherwise be timed as the night's."""
    from flows.pipeline import nightly

    os.sync()
    t0 = time.perf_counter()
    result = nightly(now=now, home=str(home))
    return result, time.perf_counter() - t0


def cli_noop_seconds(home: Path, now: dt.datetime) -> float:
    """Wall time of one ``kenang run`` as a new process against this script's Prefect server."""
    return cli_noop(home, now)[0]


def cli_noop(
    home: Path, now: dt.datetime, *, server: bool = True, command: tuple[str, ...] | None = None
) -> tuple[float, float]:
    """(wall, CPU) seconds of one kenang command (``kenang run`` unless ``command``) as a new process: against this script's Prefect server, or
    (``server=False``) with no PREFECT_API_URL at all, as a cron job on a host without a server runs it. CPU is the
    child's user + system time: on a machine shared with other work it is what the run itself cost. ``command``:
    another kenang command and its arguments (``--home`` is added), in place of ``run --now NOW``."""
    import resource
    import subprocess
    import sys

    from prefect.settings import PREFECT_API_URL

    if server:
        env = {**os.environ, "PREFECT_API_URL": PREFECT_API_URL.value()}
    else:
        env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
        env["PREFECT_HOME"] = str(home.parent / "prefect-home-no-server")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run(
        [sys.executable, "-m", "flows.cli", *(command or ("run", "--now", now.isoformat())), "--home", str(home)],
        env=env,
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parent.parent,
    )
    seconds = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        raise RuntimeError(f"kenang {(command or ('run',))[0]} failed ({r.returncode}): {r.stderr[-2000:]}")
    return seconds, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def work_total(result: dict) -> float:
    return sum(result.get("work_seconds", {}).values())


def overhead_share(result: dict, wall: float) -> float:
    """1 - kenang's own work / flow call wall time: what Prefect (and the harness) costs."""
    return 1.0 - work_total(result) / wall if wall > 0 else float("nan")


def stage_table(results: list[dict], indent: str = "  ") -> list[str]:
    """Per-stage lines: median 'seconds' (around task calls) and 'work_seconds' (inside kenang)."""
    stages: list[str] = []
    for r in results:
        for k in [*r.get("seconds", {}), *r.get("work_seconds", {})]:
            if k not in stages:
                stages.append(k)
    lines = [f"{indent}{'stage':<12} {'around tasks s':>15} {'kenang work s':>14}"]
    for s in stages:
        around = [r.get("seconds", {}).get(s) for r in results]
        work = [r.get("work_seconds", {}).get(s) for r in results]
        lines.append(f"{indent}{s:<12} {_med(around):>15} {_med(work):>14}")
    lines.append(f"{indent}{'sum work':<12} {'':>15} {statistics.median(work_total(r) for r in results):>14.3f}")
    return lines


def _med(values: list[float | None]) -> str:
    present = [v for v in values if v is not None]
    return f"{statistics.median(present):.3f}" if present else "-"


def counts_line(result: dict) -> str:
    i, a, ld = result.get("ingest", {}), result.get("archive", {}), result.get("load", {})
    return (
        f"ingest ready={i.get('ready')} waiting={i.get('waiting_quiet', 0) + i.get('waiting_day', 0)} "
        f"rejected={i.get('rejected')}; archive placed={a.get('placed')} recorded={a.get('recorded')} "
        f"deleted={a.get('sources_deleted')}; load days={ld.get('days')} loaded={ld.get('loaded')} "
        f"failed={ld.get('failed')} sessions={ld.get('sessions')} messages={ld.get('messages')}; "
        f"catalog rebuilt={result.get('catalog_rebuilt')}"
    )


def peak_rss_self_mib() -> float:
    """Peak RSS of this process so far (Linux reports ru_maxrss in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def peak_rss_children_mib() -> float:
    """Largest peak RSS of any reaped child (the Prefect test server, once the harness stopped it)."""
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def target_verdict(met: bool) -> str:
    return "MET" if met else "MISSED"


#: The parts of `kenang recall` that an ablation turns off one at a time:
#: (label, field of transforms.recall.RecallParams, off value).
ABLATIONS = (
    ("without the gloss", "gloss_weight", 0.0),
    ("without the chunks' glosses", "gloss_terms", False),
    ("without the tapered time window", "slack_boost", 1.0),
    ("without the identifier boost", "anchor_boost", 0.0),
    ("without the dated-citation lift", "when_named", False),
)


def knob(recaller, name: str, value):
    """The recaller searching with one of its knobs (``RecallParams``) set to ``value``; it is left unchanged."""
    return recaller.with_params(replace(recaller.params, **{name: value}))
