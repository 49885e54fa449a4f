"""DuckDB's one-writer lock and kenang's one-run lock, tested in both directions."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import duckdb
import pytest
from helpers import NOW, drop, kenang, md

from flows.pipeline import nightly
from flows.store.lock import holder

pytestmark = pytest.mark.usefixtures("prefect_api")


def night(settings):
    return nightly(now=NOW, home=str(settings.paths.home))


def test_a_reader_holding_the_catalog_open_does_not_fail_a_run(home):
    drop(home, "a.md", md("2026-07-18", "1000", ("user", "satu")))
    night(home)
    reader = duckdb.connect(str(home.paths.catalog), read_only=True)
    try:
        assert reader.execute("SELECT count(*) FROM messages").fetchone() == (1,)
        drop(home, "b.md", md("2026-07-19", "1000", ("user", "dua")))
        result = night(home)
        assert result["load"]["loaded"] == 1
        # The open reader keeps working, and its views glob Parquet, so it sees the new day too.
        assert reader.execute("SELECT count(*) FROM messages").fetchone() == (2,)
    finally:
        reader.close()


def test_a_read_write_connection_left_open_by_a_notebook_does_not_fail_a_run(home):
    drop(home, "a.md", md("2026-07-18", "1000", ("user", "satu")))
    night(home)
    notebook = duckdb.connect(str(home.paths.catalog))  # the default mode takes the write lock
    try:
        drop(home, "b.md", md("2026-07-19", "1000", ("user", "dua")))
        assert night(home)["load"]["loaded"] == 1
    finally:
        notebook.close()
    with duckdb.connect(str(home.paths.catalog), read_only=True) as fresh:
        assert fresh.execute("SELECT count(*) FROM messages").fetchone() == (2,)


def test_a_run_does_not_make_a_querying_reader_fail(home):
    drop(home, "a.md", md("2026-07-17", "1000", ("user", "x")))
    night(home)
    errors: list[BaseException] = []
    counts: list[int] = []
    stop = threading.Event()

    def read_loop():
        while not stop.is_set():
            try:
                with duckdb.connect(str(home.paths.catalog), read_only=True) as con:
                    counts.append(con.execute("SELECT count(*) FROM messages").fetchone()[0])
            except BaseException as exc:  # noqa: BLE001 - any failure is the finding
                errors.append(exc)

    t = threading.Thread(target=read_loop)
    t.start()
    try:
        for day in range(18, 20):
            drop(home, f"{day}.md", md(f"2026-07-{day}", "1000", ("user", "y")))
            night(home)
    finally:
        stop.set()
        t.join()
    assert errors == [] and counts and max(counts) == 3


def _holding_child(settings, api_url: str) -> subprocess.Popen:
    """A kenang run in a child process that holds the run lock until a line arrives on its stdin."""
    code = (
        "import sys, flows.store.faults as f\n"
        "f.checkpoint = lambda n: sys.stdin.readline() if n == 'run.locked' else None\n"
        "from flows.cli.main import main\n"
        f"main(['run', '--home', {str(settings.paths.home)!r}, '--now', {NOW.isoformat()!r}])\n"
    )
    env = {**os.environ, "PREFECT_API_URL": api_url}
    child = subprocess.Popen(
        [sys.executable, "-c", code],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 120
    while holder(settings.paths.lock) is None:
        assert child.poll() is None, child.communicate()
        assert time.monotonic() < deadline, "child never took the lock"
        time.sleep(0.2)
    return child


@pytest.mark.integration  # the first run is a child process
def test_a_second_concurrent_run_exits_with_a_clear_message(home, prefect_api):
    child = _holding_child(home, prefect_api)
    try:
        r = kenang("run", "--home", str(home.paths.home), "--now", NOW.isoformat())
        assert r.exit_code == 75
        err = r.stderr
        assert "holds" in err and "--wait" in err and f"pid {child.pid}" in err
    finally:
        child.kill()
        child.wait()


@pytest.mark.integration  # the first run is a child process
def test_a_second_run_with_wait_queues_behind_the_first(home, prefect_api, clock):
    drop(home, "a.md", md("2026-07-19", "1000", ("user", "x")))
    child = _holding_child(home, prefect_api)
    ended: list[bytes] = []

    def first_run_ends(_seconds):  # the first run goes on and ends while the second waits
        if not ended:
            ended.append(child.communicate(input=b"go\n", timeout=120)[1])

    clock.on_sleep = first_run_ends
    try:
        r = kenang("run", "--home", str(home.paths.home), "--now", NOW.isoformat(), "--wait", "120", "--json")
        assert r.exit_code == 0, r.stderr
    finally:
        child.kill()
        child.wait()
    assert child.returncode == 0, ended
    assert clock.slept == [0.5]  # one poll, then the lock was free
    assert not (home.paths.active / "a.md").exists()


@pytest.mark.integration  # the run is a child process
def test_a_killed_run_leaves_no_stale_lock(home, prefect_api):
    child = _holding_child(home, prefect_api)
    child.kill()
    child.wait()
    assert holder(home.paths.lock) is None
    assert night(home)["load"]["days"] == 0
