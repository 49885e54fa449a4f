"""A ``kenang run`` with nothing to do and no Prefect server skips Prefect's start-up, and nothing else.

It runs the nightly flow's own body with its tasks called as plain functions: the same run
report, the same runs row, the same lock and the same crash sweep. The child processes here
have no PREFECT_API_URL, so a run that went through Prefect would start a temporary server
(and leave its database in the child's PREFECT_HOME); the quiet one leaves none.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from helpers import NOW, OLD, drop, kenang, md, table

from flows.pipeline import _backfill_quiet, backfill_quiet, nightly, nightly_run, quiet
from flows.store import ledger, warehouse
from flows.store.lock import holder
from schemas.tables import DAILY_SUMMARIES

ROOT = Path(__file__).resolve().parent.parent


def no_server_env(tmp_path: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    env["PREFECT_HOME"] = str(tmp_path / "child-prefect-home")
    return env


def kenang_child(settings, env: dict, *args: str, python: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            sys.executable,
            *python,
            "-m",
            "flows.cli",
            "run",
            "--home",
            str(settings.paths.home),
            "--now",
            NOW.isoformat(),
            *args,
        ],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_fresh_home_is_quiet_and_a_file_in_active_is_not(home):
    assert quiet(home)
    drop(home, "a.md", md("2026-07-19", "1000", ("user", "x")))
    assert not quiet(home)


def test_a_file_whose_day_is_not_over_leaves_the_night_quiet_and_an_unreadable_one_does_not(home):
    # an agent writing today's chat always leaves a file in active/: the run leaves it there, so a night is quiet
    drop(home, "today.md", md(NOW.date().isoformat(), "0100", ("user", "x"), ("assistant", "y")))
    drop(home, "writing.md", md("2026-07-19", "2300", ("user", "x")), mtime=None)  # still being written
    assert quiet(home, NOW)
    elsewhere = home.paths.home.parent / "elsewhere"
    elsewhere.mkdir()
    (home.paths.active / "linked").symlink_to(elsewhere)
    os.utime(home.paths.active / "linked", (OLD, OLD), follow_symlinks=False)  # past the quiet period, as drop()'s
    assert not quiet(home, NOW)  # the run quarantines a linked folder
    (home.paths.active / "linked").unlink()
    drop(home, "broken.json", b'{"messages": [')
    assert not quiet(home, NOW)  # the run quarantines it


def test_a_plain_run_with_a_file_waiting_for_its_day_reports_what_a_prefect_run_reports(home):
    drop(home, "a.md", md("2026-07-19", "1000", ("user", "x"), ("assistant", "y")))
    nightly(now=NOW, home=str(home.paths.home))
    drop(home, "today.md", md(NOW.date().isoformat(), "0100", ("user", "x"), ("assistant", "y")))
    assert quiet(home, NOW)
    through_prefect = nightly(now=NOW, home=str(home.paths.home))
    plain = nightly_run(now=NOW, home=str(home.paths.home), plain=True)
    assert plain["ingest"]["waiting_day"] == through_prefect["ingest"]["waiting_day"] == 1

    def same(r: dict) -> dict:
        return {k: v for k, v in r.items() if k not in ("run_id", "seconds", "work_seconds", "wall_seconds")}

    assert same(plain) == same(through_prefect)
    assert (home.paths.active / "today.md").exists()


@pytest.mark.usefixtures("prefect_api")
def test_a_loaded_home_with_nothing_new_is_quiet(home):
    drop(home, "a.md", md("2026-07-19", "1000", ("user", "x"), ("assistant", "y")))
    nightly(now=NOW, home=str(home.paths.home))
    assert quiet(home)


@pytest.mark.usefixtures("prefect_api")
def test_a_source_with_nothing_new_leaves_the_home_quiet_and_a_new_file_in_it_does_not(home, tmp_path):
    from flows.config import edit_config, load_settings

    src = tmp_path / "exports"
    src.mkdir()
    (src / "a.md").write_bytes(md("2026-07-19", "1000", ("user", "x"), ("assistant", "y")))
    os.utime(src / "a.md", (OLD, OLD))
    edit_config(
        home.paths.home,
        lambda d: d.setdefault("sources", []).append({"name": "notes", "kind": "folder", "path": str(src)}),
    )
    settings = load_settings(home.paths.home)
    assert not quiet(settings, NOW)  # the folder's file is new
    nightly(now=NOW, home=str(home.paths.home))
    assert quiet(settings, NOW)
    (src / "b.md").write_bytes(md("2026-07-19", "1100", ("user", "z")))
    os.utime(src / "b.md", (OLD, OLD))
    assert not quiet(settings, NOW)


@pytest.mark.usefixtures("prefect_api")
def test_a_ledger_that_cannot_be_read_is_not_quiet_so_the_flow_reports_it(home):
    drop(home, "a.md", md("2026-07-19", "1000", ("user", "x"), ("assistant", "y")))
    nightly(now=NOW, home=str(home.paths.home))
    assert quiet(home, NOW)
    (ledger_file,) = ledger.month_files(home.paths.warehouse)
    ledger_file.chmod(0o644)
    ledger_file.write_bytes(b"not parquet")
    assert not quiet(home, NOW)


@pytest.mark.usefixtures("prefect_api")
def test_a_plain_run_reports_what_a_prefect_run_with_nothing_to_do_reports(home):
    drop(home, "a.md", md("2026-07-19", "1000", ("user", "x"), ("assistant", "y")))
    nightly(now=NOW, home=str(home.paths.home))
    through_prefect = nightly(now=NOW, home=str(home.paths.home))
    plain = nightly_run(now=NOW, home=str(home.paths.home), plain=True)

    def same(r: dict) -> dict:
        return {k: v for k, v in r.items() if k not in ("run_id", "seconds", "work_seconds", "wall_seconds")}

    assert same(plain) == same(through_prefect)
    runs = {r["run_id"]: r for r in table(home, "runs")}
    assert runs[plain["run_id"]]["status"] == "completed"


def imported(stderr: str) -> set[str]:
    """The modules a child run with ``python -X importtime`` imported."""
    return {line.rsplit("|", 1)[1].strip() for line in stderr.splitlines() if line.startswith("import time:")}


def test_a_run_with_nothing_to_do_and_no_server_starts_no_prefect_and_records_its_run(home, tmp_path):
    env = no_server_env(tmp_path)
    r = kenang_child(home, env, "--json", python=("-X", "importtime"))
    assert r.returncode == 0, r.stderr
    assert not (tmp_path / "child-prefect-home" / "prefect.db").exists()  # no temporary Prefect server ran
    assert "flows.pipeline" in imported(r.stderr) and "prefect" not in imported(r.stderr)  # nor was it imported
    (run,) = table(home, "runs")
    assert run["status"] == "completed" and run["flow"] == "nightly"
    text = kenang_child(home, env)
    assert text.returncode == 0 and "nightly run" in text.stdout and "catalog" in text.stdout
    assert "hint:" not in text.stderr  # no temporary server to hint about


def _holding_quiet_child(settings, env: dict) -> subprocess.Popen:
    """A quiet ``kenang run`` (no server, nothing to do) that holds the lock until a line arrives on its stdin."""
    code = (
        "import sys, flows.store.faults as f\n"
        "f.checkpoint = lambda n: sys.stdin.readline() if n == 'run.locked' else None\n"
        "from flows.cli.main import main\n"
        f"main(['run', '--home', {str(settings.paths.home)!r}, '--now', {NOW.isoformat()!r}])\n"
    )
    child = subprocess.Popen(
        [sys.executable, "-c", code], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + 120
    while holder(settings.paths.lock) is None:
        assert child.poll() is None, child.communicate()
        assert time.monotonic() < deadline, "child never took the lock"
        time.sleep(0.2)
    return child


@pytest.mark.integration  # the first run is a child process
def test_a_quiet_run_holds_the_lock_and_a_second_run_is_refused_as_always(home, tmp_path):
    env = no_server_env(tmp_path)
    child = _holding_quiet_child(home, env)
    try:
        r = kenang("run", "--home", str(home.paths.home), "--now", NOW.isoformat())
        assert r.exit_code == 75
        assert "holds" in r.stderr and f"pid {child.pid}" in r.stderr
        out, err = child.communicate(input=b"go\n", timeout=120)
        assert child.returncode == 0, err
    finally:
        child.kill()
        child.wait()
    assert not (tmp_path / "child-prefect-home" / "prefect.db").exists()


@pytest.mark.integration  # the run is a child process
def test_a_quiet_run_after_a_killed_one_finds_the_lock_free_and_sweeps_what_it_left(home, tmp_path):
    env = no_server_env(tmp_path)
    child = _holding_quiet_child(home, env)
    child.kill()
    child.wait()
    assert holder(home.paths.lock) is None
    left = home.paths.warehouse / ".kenang-tmp-0badc0de-runs.parquet.part"  # as a run killed mid-write leaves
    left.write_bytes(b"half")
    r = kenang_child(home, env)
    assert r.returncode == 0, r.stderr
    assert not left.exists()
    assert [x["status"] for x in table(home, "runs")] == ["completed"]
    assert not (tmp_path / "child-prefect-home" / "prefect.db").exists()


# --- a backfill with nothing to derive ------------------------------------------------------------

DAY = dt.date(2026, 7, 19)


@pytest.mark.usefixtures("prefect_api")
def test_a_backfill_is_quiet_only_when_its_range_has_nothing_to_derive(home):
    # the negatives ask the predicate's body, which raises where the predicate would read False for an error
    assert backfill_quiet(home, DAY, DAY)  # nothing archived at all
    drop(home, "a.md", md("2026-07-19", "1000", ("user", "x"), ("assistant", "y")))
    nightly(now=NOW, home=str(home.paths.home))
    assert not _backfill_quiet(home, DAY, DAY, False, False)  # its day has files: a backfill re-derives it
    assert backfill_quiet(home, DAY, DAY, only_missing=True)  # loaded, summarized and indexed
    assert not _backfill_quiet(home, DAY, DAY, True, True)  # --resummarize, --reindex
    assert backfill_quiet(home, DAY + dt.timedelta(days=30), DAY + dt.timedelta(days=40))  # a range with no day
    row = ledger.read_days(home.paths.warehouse)[("default", DAY)]
    ledger.write_days(home.paths.warehouse, [{**row, "summary_status": "failed"}])
    assert not _backfill_quiet(home, DAY, DAY, True, False)  # its summary is owed
    ledger.write_days(home.paths.warehouse, [row])
    assert backfill_quiet(home, DAY, DAY, only_missing=True)


@pytest.mark.usefixtures("prefect_api")
def test_a_tampered_partition_or_a_stray_archive_file_is_not_quiet(home):
    drop(home, "a.md", md("2026-07-19", "1000", ("user", "x"), ("assistant", "y")))
    nightly(now=NOW, home=str(home.paths.home))
    stray = home.paths.archive / "daily_sessions/2026-07-19/stray.md"
    stray.write_bytes(md("2026-07-19", "1500", ("user", "planted")))
    assert not _backfill_quiet(home, DAY, DAY, True, False)  # the backfill reports it
    stray.unlink()
    assert backfill_quiet(home, DAY, DAY, only_missing=True)
    part = warehouse.partition_file(home.paths.warehouse, DAILY_SUMMARIES, DAY, "default")
    pq.write_table(pq.read_table(part).slice(0, 0), part)  # changed behind kenang's back: a backfill rebuilds it
    assert not _backfill_quiet(home, DAY, DAY, True, False)


def test_a_backfill_with_nothing_to_derive_and_no_server_starts_no_prefect_and_records_its_run(home, tmp_path):
    env = no_server_env(tmp_path)
    args = ["backfill", "--home", str(home.paths.home), "--start", "2026-08-01", "--end", "2026-08-03"]
    r = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "flows.cli", *args, "--json"],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    assert not (tmp_path / "child-prefect-home" / "prefect.db").exists()  # no temporary Prefect server ran
    assert "flows.pipeline" in imported(r.stderr) and "prefect" not in imported(r.stderr)  # nor was it imported
    assert json.loads(r.stdout)["survey"]["days"] == 0
    (run,) = table(home, "runs")
    assert run["status"] == "completed" and run["flow"] == "backfill"
    text = subprocess.run(
        [sys.executable, "-m", "flows.cli", *args], env=env, cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert text.returncode == 0 and "0 day(s) to derive" in text.stdout
    assert "hint:" not in text.stderr  # no temporary server to hint about


@pytest.mark.integration  # the lock's holder is a child process
def test_a_command_that_waits_for_the_lock_never_takes_its_range_for_quiet(home, tmp_path):
    from flows.cli.main import _lock_free

    child = _holding_quiet_child(home, no_server_env(tmp_path))
    try:
        assert _lock_free(home, 5.0) is False  # what the holder does meanwhile is not known: through Prefect
        child.communicate(input=b"go\n", timeout=120)
        assert child.returncode == 0
    finally:
        child.kill()
        child.wait()
    assert _lock_free(home, 0.0) is True
