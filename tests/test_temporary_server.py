"""A command without a Prefect server starts a temporary one, and that server ends with the command, however the
command ends: a ``kenang run`` killed with SIGKILL leaves no uvicorn behind (``flows.cli.temporary_server``)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import NOW, drop, md

from flows.cli import temporary_server

ROOT = Path(__file__).resolve().parent.parent


def _children(pid: int) -> dict[int, str]:
    """The processes whose parent is ``pid``: pid -> command line."""
    out = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            out[int(entry)] = cmdline
    return out


def _watcher_of(command: int, server: int) -> int | None:
    """The watcher process of ``server`` for ``command`` (its command line ends with the two pids), if running."""
    for entry in os.listdir("/proc"):
        if entry.isdigit() and _alive(int(entry)):
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"pidfd_send_signal" in b" ".join(cmdline) and cmdline[-3:-1] == [b"%d" % command, b"%d" % server]:
                return int(entry)
    return None


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _until(what, seconds: float = 240.0, step: float = 0.2) -> bool:
    """Poll ``what()`` until it is true or ``seconds`` pass; whether it became true. (The processes watched are
    real ones; nothing of kenang's is slept on.)"""
    deadline = time.monotonic() + seconds
    while not what():
        if time.monotonic() > deadline:
            return False
        time.sleep(step)
    return True


def test_a_run_killed_with_sigkill_while_its_server_starts_leaves_no_temporary_prefect_server(home, tmp_path):
    drop(home, "a.md", md("2026-07-19", "1000", ("user", "Setup pve hari ini."), ("assistant", "Oke.")))
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    env["PREFECT_HOME"] = str(tmp_path / "child-prefect-home")
    run = subprocess.Popen(
        [sys.executable, "-m", "flows.cli", "run", "--home", str(home.paths.home), "--now", NOW.isoformat()],
        env=env,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    found: dict[str, int | None] = {"server": None, "watcher": None}

    def watched() -> bool:  # the temporary server is spawned, and its watcher beside it
        if found["server"] is None:
            found["server"] = next((p for p, c in _children(run.pid).items() if "uvicorn" in c), None)
        if found["server"] is not None:
            found["watcher"] = _watcher_of(run.pid, found["server"])
        return found["watcher"] is not None

    try:
        assert _until(watched), found
        os.kill(run.pid, signal.SIGKILL)  # most likely before the server answers: it takes seconds to start
        run.wait(30)
        assert _until(lambda: not _alive(found["server"]) and not _alive(found["watcher"]), seconds=60), found
    finally:
        for pid in (run.pid, found["server"], found["watcher"]):
            if pid is not None and _alive(pid):
                os.kill(pid, signal.SIGKILL)
        run.wait(30)


@pytest.fixture
def watched():
    """A stand-in command and server, and the watcher of the server started as for that command."""
    command = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    server = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    watcher = None
    try:
        assert temporary_server.watch(server.pid, command=command.pid)
        watcher = _watcher_of(command.pid, server.pid)
        assert watcher is not None and watcher not in _children(os.getpid())  # no child of the command's
        yield command, server, watcher
    finally:
        for p in (command, server):
            if p.poll() is None:
                p.kill()
                p.wait(30)
        if watcher is not None and _alive(watcher):
            os.kill(watcher, signal.SIGKILL)


def test_the_watcher_stops_the_server_once_its_command_is_gone(watched):
    command, server, watcher = watched
    command.kill()
    command.wait(30)
    assert server.wait(60) == -signal.SIGTERM
    assert _until(lambda: not _alive(watcher), seconds=30)


def test_the_watcher_leaves_a_server_that_is_already_gone_and_ends_with_its_command(watched):
    """A command that ended normally stopped its server first: the watcher finds it gone, and ends too."""
    command, server, watcher = watched
    server.kill()
    server.wait(30)
    command.stdin.close()
    command.wait(30)
    assert _until(lambda: not _alive(watcher), seconds=30)
