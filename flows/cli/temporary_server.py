"""The temporary Prefect server a command starts when no ``PREFECT_API_URL`` is set, and what ends it.

Prefect runs its temporary API (uvicorn) as a child process of the command and stops it at
exit. A command killed with SIGKILL (the OOM killer, ``kill -9``, a unit's stop timeout)
never gets there, and the server would stay up for good, holding its memory and a port.
So the command starts that server itself, before its flow, and leaves a small watcher
beside it: a process that waits for the command's process to end (a pidfd) and then
stops the server. Prefect's own calls find the server running and use it.
"""

from __future__ import annotations

import os
import subprocess
import sys

#: The watcher: ``argv`` holds two pidfds, the command's and the server's, passed to it open. It waits until
#: the command has ended, then stops the server (SIGTERM, then SIGKILL after 10 s); a pidfd names that very
#: process, never another that took its pid since. A server that is already gone (the command stopped it)
#: is left as it is.
WATCHER = """
import select, signal, sys
run, server = int(sys.argv[1]), int(sys.argv[2])
select.select([run], [], [])
try:
    signal.pidfd_send_signal(server, signal.SIGTERM)
    if not select.select([server], [], [], 10)[0]:
        signal.pidfd_send_signal(server, signal.SIGKILL)
except ProcessLookupError:
    pass
"""


def start() -> int | None:
    """Start Prefect's temporary server now, with its watcher, when this process would start one (no
    ``PREFECT_API_URL``, temporary servers allowed); the server's pid, or None when there is none to start."""
    from prefect.settings import PREFECT_API_URL, PREFECT_SERVER_EPHEMERAL_ENABLED

    if PREFECT_API_URL.value() or not PREFECT_SERVER_EPHEMERAL_ENABLED.value():
        return None
    from prefect.server.api.server import SubprocessASGIServer

    server = SubprocessASGIServer()  # the one Prefect's clients start and use (one per process, by port)
    server.start()
    if server.server_process is None:
        return None
    watch(server.server_process.pid)
    return server.server_process.pid


def watch(child: int, command: int | None = None) -> subprocess.Popen | None:
    """Start the watcher that stops process ``child`` once process ``command`` (this one unless given) has ended;
    None without pidfds (Linux before 5.3), where the child is left as Prefect leaves it."""
    try:
        fds = (os.pidfd_open(os.getpid() if command is None else command), os.pidfd_open(child))
    except (AttributeError, OSError):
        return None
    try:
        return subprocess.Popen(
            [sys.executable, "-I", "-c", WATCHER, *map(str, fds)],
            pass_fds=fds,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,  # never holds the command's output open after it ends
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # a Ctrl-C to the command's terminal is the command's to handle
        )
    except OSError:
        return None
    finally:
        for fd in fds:
            os.close(fd)
