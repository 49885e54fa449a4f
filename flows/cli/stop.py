"""Stop promptly on SIGTERM (systemd, a Prefect cancellation, ``kill``), even in the middle of a model call.

Python runs a signal handler only between bytecodes, so a run busy in one long C call
(a llama.cpp decode, an embedding batch) would not see SIGTERM until that call returned:
seconds, or minutes on a busy box. Two things make the stop prompt:

- the Python handler raises ``Terminated`` in the main thread as soon as it runs, so a
  run between calls ends the usual way: the run is recorded as failed ("Terminated"),
  the lock is released, Prefect marks the flow run;
- the C-level handler also writes to a wakeup fd (``signal.set_wakeup_fd``), which a
  watcher thread reads at once, whatever the main thread is doing. If the process has
  not ended ``GRACE_SECONDS`` later, the watcher stops the children kenang started (a
  temporary Prefect server) and ends the process with ``os._exit(143)``.

Ending that way is a crash at an arbitrary point, which kenang is built for
(``tests/test_crash.py``): nothing is half-written, the lock dies with the process, and
the next run reaches the same state as an uninterrupted one. ``kenang status`` shows the
run as interrupted.
"""

from __future__ import annotations

import os
import signal
import socket
import threading
import time

GRACE_SECONDS = 2.0


class Terminated(SystemExit):
    """SIGTERM arrived; the run ends here."""

    def __init__(self, signum: int = signal.SIGTERM):
        super().__init__(128 + signum)
        self.signum = signum

    def __str__(self) -> str:
        return f"stopped by {signal.Signals(self.signum).name}"


_installed = False
_keep: tuple = ()  # the wakeup socketpair: closed with the process, never before


def install(grace_seconds: float = GRACE_SECONDS) -> bool:
    """Install the SIGTERM handler and its watcher, once per process, from the main thread."""
    global _installed, _keep
    if _installed or threading.current_thread() is not threading.main_thread():
        return _installed
    reader, writer = socket.socketpair()
    reader.setblocking(True)
    writer.setblocking(False)
    signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
    _keep = (reader, writer)

    def on_sigterm(signum, frame):
        raise Terminated(signum)

    def watch() -> None:
        while True:
            data = reader.recv(64)
            if not data:  # the socket went away (the process is ending): nothing to watch
                return
            if signal.SIGTERM in data:
                break
        time.sleep(grace_seconds)
        _stop_children()
        os._exit(128 + signal.SIGTERM)

    signal.signal(signal.SIGTERM, on_sigterm)
    threading.Thread(target=watch, name="kenang-sigterm", daemon=True).start()
    _installed = True
    return True


def _stop_children() -> None:
    """SIGTERM this process's children (a temporary Prefect server), so none outlives it."""
    me = os.getpid()
    for entry in os.scandir("/proc") if os.path.isdir("/proc") else ():
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                stat = f.read()
            ppid = int(stat[stat.rindex(b")") + 2 :].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if ppid == me:
            try:
                os.kill(int(entry.name), signal.SIGTERM)
            except OSError:
                pass
