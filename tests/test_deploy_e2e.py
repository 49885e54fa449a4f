"""The deployments path, end to end, as docs/homelab.md tells a homelab to run it.

A real ``prefect server start`` on a free 127.0.0.1 port, ``prefect work-pool create``,
``kenang deploy`` (``prefect deploy --all`` from this repository's prefect.yaml, then
kenang's parameter checks), and ``prefect worker start``; then ``prefect deployment run
'nightly/nightly'`` and ``'backfill/backfill'`` with parameters, each watched until it
ends, and the tables checked. A backfill range given the wrong way round is refused when
it is submitted. Everything it
started is stopped at the end. One Prefect upgrade that breaks this path fails here.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from helpers import NOW, drop, md, snapshot

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parent.parent
PREFECT = str(Path(sys.executable).with_name("prefect"))
KENANG = str(Path(sys.executable).with_name("kenang"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(cmd: list[str], env: dict, log: Path) -> subprocess.Popen:
    """A long-running process in its own process group (stopped with everything it starts)."""
    return subprocess.Popen(
        cmd, env=env, cwd=ROOT, stdout=open(log, "wb"), stderr=subprocess.STDOUT, start_new_session=True
    )


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def cli(env: dict, *args: str, timeout: float = 180) -> subprocess.CompletedProcess:
    out = subprocess.run([PREFECT, *args], env=env, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    assert out.returncode == 0, f"prefect {' '.join(args)} failed:\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
    return out


def api_json(api: str, path: str, body: object | None = None) -> object:
    """GET (or, with a body, POST) one of the Prefect server's API routes; its JSON answer."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(f"{api}{path}", data=data, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.loads(r.read() or b"null")


def run_deployment(env: dict, name: str, **params) -> str:
    args = ["deployment", "run", name, "--watch", "--watch-interval", "2", "--watch-timeout", "150"]
    for k, v in params.items():
        args += ["--param", f"{k}={json.dumps(v)}"]
    out = cli(env, *args, timeout=200)
    text = out.stdout + out.stderr
    assert "Completed" in text, text[-3000:]
    return text


def test_nightly_and_backfill_run_through_a_real_server_and_worker(tmp_path):
    from flows.config import init_home
    from flows.store import mount

    settings, _ = init_home(
        tmp_path / "home", {"summarizer": {"backend": "extractive"}, "embedder": {"backend": "none"}}
    )
    mount.claim(settings)  # as `kenang init` does
    drop(
        settings,
        "2026-07-18-0900.md",
        md(
            "2026-07-18",
            "0900",
            ("user", "Pagi, cek backup Proxmox."),
            ("assistant", "Backup semalam selesai jam 02.14."),
        ),
    )
    drop(
        settings,
        "gading/2026-07-19-2100.md",
        md("2026-07-19", "2100", ("user", "Jadwal scrub ZFS minggu ini?"), ("assistant", "Minggu jam 01.30.")),
    )
    port = free_port()
    api = f"http://127.0.0.1:{port}/api"
    env = {
        **os.environ,
        "PREFECT_HOME": str(tmp_path / "prefect-home"),
        "PREFECT_API_URL": api,
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "PREFECT_WORKER_QUERY_SECONDS": "1",
        "PREFECT_LOGGING_LEVEL": "WARNING",
        "PWD": str(ROOT),
        "KENANG_HOME": str(settings.paths.home),
    }
    env.pop("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", None)
    server = start(
        [PREFECT, "server", "start", "--host", "127.0.0.1", "--port", str(port)], env, tmp_path / "server.log"
    )
    worker = None
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"{api}/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            assert server.poll() is None and time.monotonic() < deadline, (tmp_path / "server.log").read_text()[-3000:]
            time.sleep(0.5)
        cli(env, "work-pool", "create", "kenang", "--type", "process")
        out = subprocess.run([KENANG, "deploy"], env=env, cwd=ROOT, capture_output=True, text=True, timeout=180)
        assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
        assert "nightly" in out.stdout and "backfill/backfill: a range whose end is before its start" in out.stdout
        wrong = subprocess.run(
            [PREFECT, "deployment", "run", "backfill/backfill", "-p", "start=2026-07-19", "-p", "end=2026-07-18"],
            env=env,
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert wrong.returncode != 0 and "end-is-before-start" in wrong.stdout + wrong.stderr, wrong.stdout
        # The nightly's schedule makes runs: what the server's scheduler does each minute, asked for at once. With
        # SQLAlchemy 2.1 under Prefect 3.9 this failed ("Can't evaluate bulk DML statement") and no night ever ran.
        nightly_id = api_json(api, "/deployments/name/nightly/nightly")["id"]
        api_json(api, f"/deployments/{nightly_id}/schedule", {})
        scheduled = api_json(
            api,
            "/flow_runs/filter",
            {"deployments": {"id": {"any_": [nightly_id]}}, "flow_runs": {"state": {"type": {"any_": ["SCHEDULED"]}}}},
        )
        assert scheduled, "the nightly deployment's schedule made no run"
        worker = start([PREFECT, "worker", "start", "--pool", "kenang"], env, tmp_path / "worker.log")
        home = str(settings.paths.home)

        run_deployment(env, "nightly/nightly", now=NOW.isoformat(), home=home)
        before = snapshot(settings)
        assert len(before["table/messages"]) == 4 and len(before["table/sessions"]) == 2
        assert not any(settings.paths.active.rglob("*.md"))  # archived

        # The warehouse lost: a backfill of the range, only the missing days, rebuilds it from the archive alone.
        shutil.rmtree(settings.paths.warehouse)
        settings.paths.warehouse.mkdir()
        run_deployment(env, "backfill/backfill", start="2026-07-18", end="2026-07-19", only_missing=True, home=home)
        after = snapshot(settings)
        for t in ("table/messages", "table/sessions", "table/daily_summaries", "table/archive_files"):
            assert after[t] == before[t], t
    finally:
        if worker is not None:
            stop(worker)
        stop(server)
