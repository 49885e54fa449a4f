"""A benchmark stopped by SIGTERM (``kill``, a timeout) leaves nothing running and nothing in /tmp: the Prefect test
server that ``benchmarks/_common.bench_env`` started is stopped with it, and its scratch dir removed."""

from __future__ import annotations

import signal
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.integration

SCRIPT = """
import sys, threading
sys.path.insert(0, "benchmarks")
import _common as c
with c.bench_env("sigterm-test") as env:
    from prefect.settings import PREFECT_API_URL
    print(env.root, PREFECT_API_URL.value(), flush=True)
    threading.Event().wait()
"""


def _health(url: str) -> int:
    with urllib.request.urlopen(f"{url}/health", timeout=5) as r:
        return r.status


def test_a_benchmark_stopped_by_sigterm_stops_its_prefect_server_and_removes_its_scratch_dir():
    child = subprocess.Popen(
        [sys.executable, "-c", SCRIPT], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        line = child.stdout.readline()
        assert line, child.communicate()[1][-3000:]
        root, url = line.split()
        assert Path(root).is_dir()
        assert _health(url) == 200
        child.send_signal(signal.SIGTERM)
        assert child.wait(timeout=120) == 128 + signal.SIGTERM
    finally:
        if child.poll() is None:  # SIGTERM first: SIGKILL would leave the child's server running
            child.terminate()
            try:
                child.wait(timeout=60)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
    assert not Path(root).exists()
    with pytest.raises(urllib.error.URLError):
        _health(url)
