"""A run stops promptly on SIGTERM, even in the middle of a model call, and the next run finishes the night.

The "model call" is one C call that holds the main thread for minutes and never looks
at signals (PBKDF2 with a huge iteration count), like a llama.cpp decode on a busy box.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import NOW, drop, kenang, md, table

# A kenang run in a child process, stopped with SIGTERM: integration.
pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("prefect_api")]

CHILD = r"""
import hashlib, sys
from pathlib import Path
from transforms import summarize as ts

marker = Path(sys.argv[1])
def stuck_in_the_model(self, inp):
    marker.write_text("in the model")
    hashlib.pbkdf2_hmac("sha256", b"k", b"s", 2_000_000_000)  # minutes in one C call
    raise AssertionError("SIGTERM did not stop the run")
ts.ExtractiveSummarizer.summarize = stuck_in_the_model

from flows.cli.main import main
main(["run", "--home", sys.argv[2], "--now", sys.argv[3]])
"""


def test_sigterm_stops_a_run_stuck_in_a_model_call_and_the_next_run_finishes_the_night(home, prefect_api, tmp_path):
    drop(
        home, "2026-07-19-0900.md", md("2026-07-19", "0900", ("user", "Cek restic di nas.lan."), ("assistant", "Oke."))
    )
    marker = tmp_path / "in-model"
    env = {**os.environ, "PREFECT_API_URL": prefect_api}
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(marker), str(home.paths.home), NOW.isoformat()],
        env=env,
        cwd=Path(__file__).parent,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 240
        while not marker.exists():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the child never reached the model call"
            time.sleep(0.2)
        time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)
        sent = time.monotonic()
        # The stuck call alone would hold it for minutes; a prompt stop ends it well within this bound.
        rc = proc.wait(timeout=60)
        print(f"stopped {time.monotonic() - sent:.2f} s after SIGTERM")  # a figure to read, never asserted
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert rc == 128 + signal.SIGTERM
    assert (home.paths.archive / "daily_sessions/2026-07-19/2026-07-19-0900.md").is_file()  # archived before the stop

    status = kenang("status", "--home", str(home.paths.home))
    assert "interrupted" in status.stdout or "failed" in status.stdout
    again = kenang("run", "--home", str(home.paths.home), "--now", NOW.isoformat())
    assert again.exit_code == 0, again.stderr
    assert [s["date"].isoformat() for s in table(home, "daily_summaries")] == ["2026-07-19"]
