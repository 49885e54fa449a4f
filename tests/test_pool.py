"""Pure per-day work on every core (``flows.stages.pool``): the same home, byte for byte, as in one process."""

from __future__ import annotations

import datetime as dt

import pytest
from fakes import fails_on_odd
from helpers import NOW, drop, md, snapshot

from flows.config import init_home
from flows.pipeline import nightly
from flows.stages import pool
from flows.store import mount

pytestmark = pytest.mark.usefixtures("prefect_api")

TOPICS = (
    "Proxmox boot order: postgres VM first, then the app.",
    "Cadangan NAS tiap malam jam 01:00 pakai restic.",
    "Rina and I agreed the pre-dawn meal is at 03:30.",
    "ZFS scrub found no errors; the pool is healthy.",
)


def many_days(settings, days: int = 12) -> None:
    for i in range(days):
        day = (NOW.date() - dt.timedelta(days=days - i)).isoformat()
        for s in range(2):
            drop(
                settings,
                f"{day}-{s}.md",
                md(
                    day,
                    f"{9 + s:02d}00",
                    ("user", TOPICS[(i + s) % 4]),
                    ("assistant", f"Noted for day {i}: {TOPICS[(i + s + 1) % 4]}"),
                    ("user", "Makasih, lanjut besok ya."),
                ),
            )


def home_at(path):
    settings, _ = init_home(path, {"summarizer": {"backend": "extractive"}, "embedder": {"backend": "none"}})
    mount.claim(settings)  # as `kenang init` does
    return settings


def test_a_night_on_every_core_writes_what_one_process_writes(tmp_path, monkeypatch):
    one, many = home_at(tmp_path / "one"), home_at(tmp_path / "many")
    many_days(one)
    many_days(many)
    monkeypatch.setenv("KENANG_WORKERS", "1")
    nightly(now=NOW, home=str(one.paths.home))
    calls = []
    real = pool.pure_imap
    monkeypatch.setattr(
        pool,
        "pure_imap",
        lambda fn, items, **kw: calls.append((fn.__name__, len(items := list(items)))) or real(fn, items, **kw),
    )
    monkeypatch.setenv("KENANG_WORKERS", "2")
    result = nightly(now=NOW, home=str(many.paths.home))
    assert result["summarize"]["summarized"] == 12 and result["load"]["loaded"] == 12
    # ingest, load, summarize (+ candidates) and index went wide; the compact copies and the recall pack's
    # month segments (a handful here: in one process) took the pool's map too
    assert calls[:4] == [("classify", 24), ("build_day", 12), ("summarize_day", 12), ("chunk_day", 12)]
    assert [name for name, _ in calls[4:]] == ["copy_bytes", "segment_files"]
    assert not pool._broken
    assert snapshot(many) == snapshot(one)


def test_two_heavy_days_go_to_the_workers_and_write_what_one_process_writes(tmp_path, monkeypatch):
    """Under ``MIN_ITEMS`` days the pool is not worth starting, unless the days are big (an agent's huge log)."""
    one, many = home_at(tmp_path / "one"), home_at(tmp_path / "many")
    many_days(one, 2)
    many_days(many, 2)
    monkeypatch.setenv("KENANG_WORKERS", "1")
    nightly(now=NOW, home=str(one.paths.home))
    monkeypatch.setattr(pool, "HEAVY_BYTES", 1)  # these two small days count as big
    monkeypatch.setattr(pool, "HEAVY_MESSAGES", 1)
    wide = []
    monkeypatch.setattr(pool, "_start", lambda n, start=pool._start: wide.append(n) or start(n))
    calls = []
    imap = pool.pure_imap

    def recorded(fn, items, **kw):
        if kw.get("heavy") or kw.get("nbytes", 0) >= pool.HEAVY_BYTES:
            calls.append(fn.__name__)
        return imap(fn, items, **kw)

    monkeypatch.setattr(pool, "pure_imap", recorded)
    monkeypatch.setenv("KENANG_WORKERS", "2")
    result = nightly(now=NOW, home=str(many.paths.home))
    assert result["load"]["loaded"] == 2 and result["summarize"]["summarized"] == 2
    # the files ingest reads, each stage's two days, and the copies and month segments, by the bytes they read or
    # their messages
    assert calls == ["classify", "build_day", "summarize_day", "chunk_day", "copy_bytes", "segment_files"]
    assert wide and not pool._broken  # the pool started, and was not given up
    assert snapshot(many) == snapshot(one)
    monkeypatch.setattr(pool, "HEAVY_MESSAGES", 2**40)
    assert not pool.heavy([10_000, None]) and pool.heavy([2**40, None])


def test_a_worker_exception_is_that_items_failure_and_the_others_come_back(monkeypatch):
    monkeypatch.setenv("KENANG_WORKERS", "2")
    got = pool.pure_map(fails_on_odd, range(10))
    assert pool._pool is not None  # it ran in the workers
    assert [g for g in got if not isinstance(g, pool.Failed)] == [0, 4, 16, 36, 64]
    assert [str(g) for g in got if isinstance(g, pool.Failed)] == [f"ValueError: odd: {n}" for n in (1, 3, 5, 7, 9)]
    assert not pool._broken
    pool.shutdown()


def test_one_worker_or_few_items_run_in_process(monkeypatch):
    monkeypatch.setenv("KENANG_WORKERS", "1")
    assert pool.pure_map(fails_on_odd, [2, 3])[0] == 4 and pool._pool is None


@pytest.mark.integration  # a kenang run in a child process, with its workers
def test_the_command_in_a_new_process_works_on_every_core(tmp_path, prefect_api):
    """``python -m flows.cli run`` as cron would run it: the pool's workers start and the pool is never given up."""
    import os
    import subprocess
    import sys

    settings = home_at(tmp_path / "home")
    many_days(settings)
    env = {**os.environ, "PREFECT_API_URL": prefect_api, "KENANG_WORKERS": "2"}
    r = subprocess.run(
        [sys.executable, "-m", "flows.cli", "-v", "run", "--home", str(settings.paths.home), "--now", NOW.isoformat()],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    assert "process pool failed" not in r.stderr
    assert "12 day(s)" in r.stdout


@pytest.mark.integration  # a child process with its workers
def test_a_run_killed_with_its_workers_started_leaves_no_worker_behind(tmp_path):
    """Workers wait on the run's process: killed without cleanup, it leaves none holding its output open."""
    import subprocess
    import sys

    code = (
        "import os, sys, time\n"
        "os.environ['KENANG_WORKERS'] = '2'\n"
        "from flows.stages import pool\n"
        "it = pool.pure_imap(abs, range(-9, 0))\n"
        "assert list(it) == list(range(9, 0, -1))\n"
        "print(os.getpid(), flush=True)\n"
        "os._exit(137)\n"
    )
    # capture_output: an orphaned worker holding the pipes open would make this time out
    r = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=str(__import__("pathlib").Path(__file__).resolve().parent.parent),
    )
    assert r.returncode == 137, r.stderr[-2000:]


def test_the_workers_of_a_few_heavy_items_are_stopped_once_their_results_are_in(monkeypatch):
    """What an allocator keeps after a huge item goes with its worker: the next map starts new ones."""
    monkeypatch.setenv("KENANG_WORKERS", "2")
    got = pool.pure_imap(fails_on_odd, [2, 4], heavy=True)
    assert next(got) == 4
    assert pool._pool is not None  # one result is still to come
    assert next(got) == 16
    assert pool._pool is None  # stopped before the last result was handed on: a caller's zip never asks again
    assert [x for x in pool.pure_map(fails_on_odd, range(8)) if not isinstance(x, pool.Failed)] == [0, 4, 16, 36]
    assert pool._pool is not None and not pool._broken  # a new pool, from the same forkserver
    pool.shutdown()
