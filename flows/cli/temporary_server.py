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

#: The watcher: ``argv`` holds two pidfds, the command's and the server's, passed to it open (then the two pids,
#: for ``ps`` to show). It forks and its first process ends at once, so the watcher is no child of the command's
#: (no zombie, and a command that stops its children does not stop it). It waits until the command has ended,
#: then stops the server (SIGTERM, then SIGKILL after 10 s); a pidfd names that very process, never another that
#: took its pid since. A server that is already gone (the command stopped it) is left as it is.
WATCHER = """
import os, select, signal, sys
if os.fork():
    os._exit(0)
run, server = int(sys.argv[1]), int(sys.argv[2])
select.select([run], [], [])
try:
    signal.pidfd_send_signal(server, signal.SIGTERM)
    if not select.select([server], [], [], 10)[0]:
        signal.pidfd_send_signal(server, signal.SIGKILL)
except ProcessLookupError:
    pass
"""


_watched: set[int] = set()  # the servers this process started a watcher for


def start() -> int | None:
    """Start Prefect's temporary server now, with its watcher, when this process would start one (no
    ``PREFECT_API_URL``, temporary servers allowed); the server's pid, or None when there is none to start.

    Each server process is watched from the moment it is spawned, not once it answers: a command killed while
    the server starts (that can take a minute on a busy box) leaves nothing either."""
    from prefect.settings import PREFECT_API_URL, PREFECT_SERVER_EPHEMERAL_ENABLED

    if PREFECT_API_URL.value() or not PREFECT_SERVER_EPHEMERAL_ENABLED.value():
        return None
    from prefect.server.api.server import SubprocessASGIServer

    server = SubprocessASGIServer()  # the one Prefect's clients start and use (one per process, by port)
    spawn = getattr(server, "_run_uvicorn_command", None)
    if not server.running and callable(spawn):

        def spawned_and_watched():
            process = spawn()
            _watch_once(process.pid)
            return process

        # Prefect has no hook for a spawned server: its spawning method is wrapped on this one instance
        server._run_uvicorn_command = spawned_and_watched  # type: ignore[method-assign]
    try:
        server.start()
    finally:
        if callable(spawn):
            server._run_uvicorn_command = spawn  # type: ignore[method-assign]  # the wrap undone, as above
    if server.server_process is None:
        return None
    _watch_once(server.server_process.pid)  # a Prefect whose server starts another way: watched once up
    return server.server_process.pid


def _watch_once(pid: int) -> None:
    if pid not in _watched and watch(pid):
        _watched.add(pid)


def watch(child: int, command: int | None = None) -> bool:
    """Start the watcher that stops process ``child`` once process ``command`` (this one unless given) has ended;
    whether it started (not without pidfds, Linux before 5.3: the child is then left as Prefect leaves it)."""
    try:
        fds = (os.pidfd_open(os.getpid() if command is None else command), os.pidfd_open(child))
    except (AttributeError, OSError):
        return False
    try:
        shown = (os.getpid() if command is None else command, child)
        first = subprocess.Popen(
            [sys.executable, "-I", "-c", WATCHER, *map(str, fds), *map(str, shown)],
            pass_fds=fds,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,  # never holds the command's output open after it ends
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # a Ctrl-C to the command's terminal is the command's to handle
        )
        return first.wait(60) == 0  # its fork is the watcher
    except (OSError, subprocess.TimeoutExpired):
        return False
    finally:
        for fd in fds:
            os.close(fd)
