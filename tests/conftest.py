"""Shared fixtures: a kenang home in tmp_path, one Prefect test server per session, a fake clock.

Prefect is pointed at a private PREFECT_HOME before it is imported, so tests never
touch ~/.prefect. Flow tests use the session-scoped ``prefect_api`` fixture; its URL
is also handed to child processes (crash and lock tests) so they skip starting an
ephemeral server of their own.

Every test runs on a ``FakeClock`` (the ``clock`` fixture): kenang's back-off, lock polls
and retry delays are recorded, never slept. A test that uses a fixture of
``SERVER_FIXTURES`` is marked ``integration``; the markers are declared in pyproject.toml.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings

# Tests never assert on time: a Hypothesis example has no deadline (on a loaded 2-core box one can take 0.7 s).
settings.register_profile("kenang", deadline=None)
settings.load_profile("kenang")

_PREFECT_HOME = tempfile.mkdtemp(prefix="kenang-test-prefect-")
os.environ["PREFECT_HOME"] = _PREFECT_HOME
os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "180")
os.environ["PREFECT_SERVER_ANALYTICS_ENABLED"] = "false"
os.environ["PREFECT_LOGGING_LEVEL"] = "WARNING"
os.environ.pop("KENANG_HOME", None)

FIXTURES = Path(__file__).parent / "fixtures"

#: Fixtures that start a real server in a process of its own: a test that uses one is marked ``integration``.
SERVER_FIXTURES = {"http_server", "llama_server"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if SERVER_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.integration)


@pytest.fixture(scope="session")
def prefect_api():
    """A Prefect API for the whole session; yields its URL."""
    from prefect.settings import (
        PREFECT_API_URL,
        PREFECT_FLOWS_HEARTBEAT_FREQUENCY,
        PREFECT_SERVER_SERVICES_EVENT_PERSISTER_ENABLED,
        PREFECT_SERVER_SERVICES_TASK_RUN_RECORDER_ENABLED,
        PREFECT_SERVER_SERVICES_TRIGGERS_ENABLED,
        temporary_settings,
    )
    from prefect.testing.utilities import prefect_test_harness

    # The server records no events, task runs or automations: no test reads them back, and
    # each night's few hundred events would cost the server about as much CPU as the night.
    # Flow runs and their states still go through the API. No flow-run heartbeats: nothing
    # here watches for crashed runs, and each run's end would wait up to a second for the
    # heartbeat thread, which sleeps in whole seconds.
    quiet_server = {
        PREFECT_SERVER_SERVICES_EVENT_PERSISTER_ENABLED: False,
        PREFECT_SERVER_SERVICES_TASK_RUN_RECORDER_ENABLED: False,
        PREFECT_SERVER_SERVICES_TRIGGERS_ENABLED: False,
    }
    with (
        temporary_settings(quiet_server),
        prefect_test_harness(server_startup_timeout=None),
        temporary_settings({PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None}),
    ):
        yield PREFECT_API_URL.value()
    shutil.rmtree(_PREFECT_HOME, ignore_errors=True)


def pytest_unconfigure(config) -> None:
    """Every pytest process made its own PREFECT_HOME (xdist's controller and each worker, a run that never
    started the server too): each removes its own at its end."""
    shutil.rmtree(_PREFECT_HOME, ignore_errors=True)


class FakeClock:
    """A clock that never waits: it records each delay asked of it and moves its own time on by it.

    ``on_sleep``, if set, is called with each delay before it is recorded: a test makes
    the world move there (a lock holder lets go), where a real wait would have let it.
    """

    def __init__(self) -> None:
        self.now = 1000.0
        self.slept: list[float] = []
        self.on_sleep = None

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        if self.on_sleep is not None:
            self.on_sleep(seconds)
        self.slept.append(seconds)
        self.now += seconds


@pytest.fixture(autouse=True)
def clock():
    """kenang's waits (back-off, lock polls, retry delays) in every test go to a FakeClock.

    Ask for ``clock`` by name to assert on ``clock.slept``, the delays asked for.
    """
    from flows.store import clock as kenang_clock

    fake = FakeClock()
    previous = kenang_clock.use(fake)
    yield fake
    kenang_clock.use(previous)


@pytest.fixture
def home(tmp_path: Path):
    """A fresh, initialised kenang home (Asia/Jakarta, default user 'default').

    It summarizes with the deterministic extractive backend and indexes keyword-only
    (embedder ``none``); tests of the model backends swap in fakes or opt into the
    bundled models explicitly.
    """
    from flows.config import init_home
    from flows.store import mount

    settings, _ = init_home(
        tmp_path / "home", {"summarizer": {"backend": "extractive"}, "embedder": {"backend": "none"}}
    )
    mount.claim(settings)  # as `kenang init` does
    return settings


@pytest.fixture
def fake(monkeypatch):
    """Every embedder kenang loads is one deterministic fake (its id can be changed mid-test)."""
    from fakes import AxisEmbedder

    from flows.models import embed

    e = AxisEmbedder()
    monkeypatch.setattr(embed, "make_embedder", lambda settings, **_: e)
    monkeypatch.setattr(embed, "configured_id", lambda settings: e.id)
    return e
