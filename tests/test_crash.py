"""Kill the process at every step boundary; the next run must reach the same end state.

A child process runs ``kenang run`` with ``flows.store.faults.checkpoint`` replaced by one
that ``os._exit``s at the chosen boundary (no cleanup, no finally blocks: as close to
``kill -9`` as Python gets). Then an ordinary run follows, and the home must equal the
home of one uninterrupted run: no lost file, no duplicate row, a clean verify.
"""

from __future__ import annotations

import pytest
from helpers import CRASHED, NOW, compacts_match, crash_at, scenario, snapshot

from flows.config import init_home
from flows.pipeline import nightly
from flows.store import faults, mount
from flows.store.verify import verify

# Each case runs kenang in a child process: integration.
pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("prefect_api")]

# (boundary, which hit): per-file boundaries are also cut at a later file.
CASES = [(b, 1) for b in faults.BOUNDARIES] + [
    ("archive.placed", 2),
    ("archive.source_deleted", 2),
    ("quarantine.placed", 2),
    ("load.day_done", 2),
]


@pytest.fixture(scope="module")
def reference(tmp_path_factory, prefect_api):
    settings, _ = init_home(
        tmp_path_factory.mktemp("reference") / "home",
        {"summarizer": {"backend": "extractive"}, "embedder": {"backend": "none"}},
    )
    mount.claim(settings)  # as `kenang init` does
    scenario(settings)
    nightly(now=NOW, home=str(settings.paths.home))
    return snapshot(settings)


@pytest.mark.parametrize("boundary,nth", CASES, ids=[f"{b}#{n}" for b, n in CASES])
def test_a_crash_at_any_step_heals_on_the_next_run(home, reference, prefect_api, boundary, nth):
    scenario(home)
    child = crash_at(home, boundary, nth, prefect_api)
    assert child.returncode == CRASHED, f"the run never reached {boundary} #{nth}: {child.stderr[-2000:]}"
    compacts_match(home)  # a copy left by the crash is never older than its partitions

    nightly(now=NOW, home=str(home.paths.home))

    assert snapshot(home) == reference
    assert compacts_match(home) > 0
    report = verify(home)
    assert report.problems == 0 and report.leftover_tmp == () and report.writable == ()
    # and the run after that is a no-op
    again = nightly(now=NOW, home=str(home.paths.home))
    assert again["archive"]["placed"] == 0 and again["load"]["days"] == 0
    assert snapshot(home) == reference
