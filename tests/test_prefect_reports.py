"""Runs report where the operator looks: Prefect artifacts, a summary line, checked parameters, serve.

Every test here talks to a real Prefect server: the session's test server (``prefect_api``),
and for ``python -m flows.serve`` and ``prefect deployment run`` a child process pointed
at it. Each test stops what it started.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import NOW, drop, md, scenario

from flows.config import init_home
from flows.pipeline import backfill, nightly

pytestmark = pytest.mark.usefixtures("prefect_api")

ROOT = Path(__file__).resolve().parent.parent
PREFECT = str(Path(sys.executable).with_name("prefect"))


def artifacts(flow_run_id) -> dict:
    """The artifacts of one flow run, by key."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterFlowRunId

    with get_client(sync_client=True) as client:
        found = client.read_artifacts(
            artifact_filter=ArtifactFilter(flow_run_id=ArtifactFilterFlowRunId(any_=[flow_run_id]))
        )
    return {a.key: a for a in found}


def test_a_nightly_run_publishes_its_report_and_its_days_per_user_as_artifacts(home, caplog):
    scenario(home)
    caplog.set_level(logging.INFO, logger="prefect.flow_runs")
    state = nightly(now=NOW, home=str(home.paths.home), return_state=True)
    result = state.result()
    got = artifacts(state.state_details.flow_run_id)
    assert set(got) == {"kenang-nightly-report", "kenang-nightly-users"}
    report = got["kenang-nightly-report"]
    assert report.type == "markdown"
    text = str(report.data)
    assert result["run_id"] in text
    assert "broken.jsonl" in text and "quarantined" in text  # the quarantined files, with their reasons
    assert "load" in text and "summarize" in text and "index" in text  # the stage table
    # counts, dates, file names and reasons only: no transcript text, no secret
    for private in ("Proxmox", "sahur", "hunter2", "Masih bangun"):
        assert private not in text
    users = got["kenang-nightly-users"]
    assert users.type == "table"
    rows = {r["user"]: r for r in _table_rows(users.data)}
    assert set(rows) == {"default", "gading", "rina"}
    assert all(r["loaded"] == 1 for r in rows.values())
    columns = ["user", "loaded", "summarized", "indexed", "unchanged", "failed", "waiting"]
    assert all(list(r)[:7] == columns for r in rows.values())  # every column, in order, zeros included
    # the flow's last log line (before Prefect's own "Finished in state") is the run in one line
    lines = [r.getMessage() for r in caplog.records if r.name.startswith("prefect.flow_runs")]
    assert lines[-1].startswith("Finished in state Completed")
    assert lines[-2].startswith(f"nightly run {result['run_id']}: 3 day(s) loaded, 3 summarized, 3 indexed")
    assert "3 quarantined" in lines[-2] and "\n" not in lines[-2]
    assert "2 file(s) in active/ for their day or their writer" in lines[-2]  # as the stage table says


def _table_rows(data) -> list[dict]:
    import json

    return json.loads(data) if isinstance(data, str) else data


def test_a_backfill_run_publishes_its_report_under_its_own_key(home):
    drop(home, "a.md", md("2026-07-19", "1037", ("user", "halo"), ("assistant", "hai")))
    nightly(now=NOW, home=str(home.paths.home))
    state = backfill(start=dt.date(2026, 7, 19), end=dt.date(2026, 7, 19), home=str(home.paths.home), return_state=True)
    got = artifacts(state.state_details.flow_run_id)
    assert set(got) == {"kenang-backfill-report", "kenang-backfill-users"}
    assert f"backfill run {state.result()['run_id']}" in str(got["kenang-backfill-report"].data)


def test_a_reversed_range_ends_the_backfill_failed_with_one_line_and_nothing_run(home):
    state = backfill(start=dt.date(2026, 7, 19), end=dt.date(2026, 7, 1), home=str(home.paths.home), return_state=True)
    assert state.is_failed()
    assert state.message == "end 2026-07-01 is before start 2026-07-19: nothing was run; submit the range again"
    assert not any(home.paths.warehouse.glob("runs/**/*.parquet"))  # no run was started


def test_a_failed_night_still_publishes_a_report_that_says_where_it_failed(home, monkeypatch):
    from flows.stages import archive
    from transforms.errors import ArchiveError

    drop(home, "a.md", md("2026-07-19", "1000", ("user", "x")))

    def broken(*args, **kwargs):
        raise ArchiveError("disk full")

    monkeypatch.setattr(archive, "archive_batch", broken)
    state = nightly(now=NOW, home=str(home.paths.home), return_state=True)
    assert state.is_failed()
    got = artifacts(state.state_details.flow_run_id)
    text = str(got["kenang-nightly-report"].data)
    assert "nightly run failed" in text and "archive" in text and "disk full" in text


@pytest.fixture
def served(prefect_api, tmp_path):
    """``python -m flows.serve`` in a child process against the session's server; yields (process, log path)."""
    log = tmp_path / "serve.log"
    init_home(tmp_path / "home", {"summarizer": {"backend": "extractive"}, "embedder": {"backend": "none"}})
    # DEBUG: the runner says "Starting runner..." once its SIGTERM handling is in place
    env = {**os.environ, "PREFECT_API_URL": prefect_api, "PREFECT_LOGGING_LEVEL": "DEBUG"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "flows.serve", "--home", str(tmp_path / "home")],
        env=env,
        cwd=ROOT,
        stdout=open(log, "wb"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        yield proc, log
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def _deployment(name: str):
    from prefect.client.orchestration import get_client

    with get_client(sync_client=True) as client:
        return client.read_deployment_by_name(name)


def _wait_for(what, proc, log: Path, seconds: float = 120):
    """Poll ``what()`` until it is true; the child serving is watched, not slept on by kenang's code."""
    deadline = time.monotonic() + seconds
    while not what():
        assert proc.poll() is None and time.monotonic() < deadline, log.read_text()[-3000:]
        time.sleep(0.5)


def test_serve_stopped_by_sigterm_leaves_no_deployment_paused(served):
    proc, log = served

    def polling() -> bool:  # the runner is up: deployments applied, and its SIGTERM handling in place
        return "Starting runner..." in log.read_text(errors="replace")

    _wait_for(polling, proc, log)
    for name in ("nightly/nightly", "backfill/backfill"):
        assert _deployment(name).paused is False
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(180) == 0, log.read_text()[-3000:]  # a bound, not a figure: a loaded CI box is slow to stop
    said = log.read_text(errors="replace")
    assert "never awaited" not in said and "Traceback" not in said, said[-3000:]
    assert "SIGTERM received, stopping the runner" in said  # stopped by its own astop, in its loop
    for name in ("nightly/nightly", "backfill/backfill"):
        d = _deployment(name)
        assert d.paused is False, name
        assert all(s.active for s in d.schedules), name


def _submit_backfill(served, prefect_api, start: str, end: str) -> tuple[int, str]:
    """``prefect deployment run backfill/backfill`` with these dates, once ``flows.serve`` has registered it:
    (its exit status, what it printed)."""
    proc, log = served
    _wait_for(lambda: "backfill/backfill" in log.read_text(errors="replace"), proc, log)
    out = subprocess.run(
        [PREFECT, "deployment", "run", "backfill/backfill", "-p", f"start={start}", "-p", f"end={end}"],
        env={**os.environ, "PREFECT_API_URL": prefect_api},
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return out.returncode, out.stdout + out.stderr


def test_a_bad_date_is_refused_when_a_backfill_run_is_submitted(served, prefect_api):
    rc, said = _submit_backfill(served, prefect_api, "2026-13-01", "2026-07-31")
    assert rc != 0, said
    assert "Validation failed for field 'start'" in said and "'2026-13-01' does not match" in said, said
    assert "Traceback" not in said


def _runs_of(name: str) -> int:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import DeploymentFilter, DeploymentFilterId

    with get_client(sync_client=True) as client:
        d = client.read_deployment_by_name(name)
        return len(client.read_flow_runs(deployment_filter=DeploymentFilter(id=DeploymentFilterId(any_=[d.id]))))


def test_a_reversed_range_is_refused_when_a_backfill_run_is_submitted(served, prefect_api):
    proc, log = served
    _wait_for(lambda: "backfill/backfill" in log.read_text(errors="replace"), proc, log)
    before = _runs_of("backfill/backfill")
    rc, said = _submit_backfill(served, prefect_api, "2026-07-19", "2026-07-01")
    assert rc != 0, said
    assert "Validation failed" in said and "end-is-before-start" in said, said
    assert "Traceback" not in said
    assert _runs_of("backfill/backfill") == before  # no run was created


def test_serve_help_prints_its_usage():
    out = subprocess.run(
        [sys.executable, "-m", "flows.serve", "--help"], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0
    assert out.stdout.startswith("usage: python -m flows.serve") and "--only" in out.stdout


def test_serve_lists_only_the_deployments_it_is_asked_for():
    out = subprocess.run(
        [sys.executable, "-m", "flows.serve", "--only", "backfill", "--list"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0 and out.stdout.split() == ["backfill/backfill"]


@pytest.mark.parametrize("how", [["-m", "flows.serve"], ["-m", "flows.cli", "serve"]], ids=["module", "kenang"])
def test_serve_refuses_a_home_that_is_not_there_in_one_line(tmp_path, how):
    missing = tmp_path / "srv" / "kenang"  # a typo in --home, or a KENANG_HOME never initialised
    env = {k: v for k, v in os.environ.items() if k != "KENANG_HOME"}
    out = subprocess.run(
        [sys.executable, *how, "--home", str(missing)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr
    assert f"no kenang.yaml in {missing}" in out.stderr and "kenang init" in out.stderr
    assert "nothing was served" in out.stderr and not missing.exists()


@pytest.mark.parametrize("api", [None, "dead"], ids=["unset", "down"])
def test_serve_without_a_prefect_server_to_keep_the_deployments_serves_nothing_in_one_line(home, tmp_path, api):
    # no PREFECT_API_URL: Prefect would serve them on a temporary server of its own, gone with the process
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    env["PREFECT_HOME"] = str(tmp_path / "child-prefect-home")
    if api == "dead":
        with socket.socket() as s:  # a port nothing listens on once this closes
            s.bind(("127.0.0.1", 0))
            env["PREFECT_API_URL"] = f"http://127.0.0.1:{s.getsockname()[1]}/api"
    out = subprocess.run(
        [sys.executable, "-m", "flows.cli", "serve", "--home", str(home.paths.home)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr, out.stderr[-3000:]
    assert out.stderr.endswith("; nothing was served\n")
    if api is None:
        assert out.returncode == 2 and "PREFECT_API_URL is not set" in out.stderr
    else:
        assert out.returncode == 1 and f"the Prefect server at {env['PREFECT_API_URL']} does not answer" in out.stderr
    assert not (tmp_path / "child-prefect-home" / "prefect.db").exists()


def test_kenang_serve_is_the_same_server_with_its_own_usage():
    out = subprocess.run(
        [sys.executable, "-m", "flows.cli", "serve", "--help"], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0
    assert out.stdout.startswith("usage: kenang serve") and "--only" in out.stdout
    listed = subprocess.run(
        [sys.executable, "-m", "flows.cli", "serve", "--only", "nightly", "--list"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (listed.returncode, listed.stdout) == (0, "nightly/nightly\n")
    wrong = subprocess.run(
        [sys.executable, "-m", "flows.cli", "serve", "--limit", "0"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert wrong.returncode == 2 and "kenang serve: error: --limit must be 1 or more" in wrong.stderr


def test_a_run_a_command_starts_sends_no_heartbeats_unless_a_prefect_setting_asks(monkeypatch, tmp_path):
    """Prefect's heartbeat thread sleeps in whole seconds and is waited for at a run's end: a command's run turns
    it off, unless a Prefect setting source (the environment, under either name, or prefect.toml) sets it."""
    from prefect.context import SettingsContext, get_settings_context
    from prefect.settings import PREFECT_FLOWS_HEARTBEAT_FREQUENCY, Settings

    from flows.cli.main import _with_progress

    def inside(settings: Settings):
        with SettingsContext(profile=get_settings_context().profile, settings=settings):
            return _with_progress(PREFECT_FLOWS_HEARTBEAT_FREQUENCY.value)

    monkeypatch.chdir(tmp_path)
    for name in ("PREFECT_FLOWS_HEARTBEAT_FREQUENCY", "PREFECT_RUNNER_HEARTBEAT_FREQUENCY"):
        monkeypatch.delenv(name, raising=False)
    assert Settings().flows.heartbeat_frequency is not None  # Prefect's default sends them
    assert inside(Settings()) is None
    for name in ("PREFECT_FLOWS_HEARTBEAT_FREQUENCY", "PREFECT_RUNNER_HEARTBEAT_FREQUENCY"):
        monkeypatch.setenv(name, "60")
        assert inside(Settings()) == 60
        monkeypatch.delenv(name)
    (tmp_path / "prefect.toml").write_text("[flows]\nheartbeat_frequency = 90\n")
    assert inside(Settings()) == 90
