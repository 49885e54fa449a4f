"""I/O stages retry transient errors and only those; a failure names its stage and run."""

from __future__ import annotations

import errno

import pytest
from helpers import NOW, drop, md, table

from flows.pipeline import nightly
from flows.stages import archive
from flows.store import ledger
from flows.store.fsio import io_error
from transforms.errors import ArchiveError, StageFailed, TransientError

pytestmark = pytest.mark.usefixtures("prefect_api")


def test_an_io_error_that_may_pass_is_transient_and_one_that_cannot_is_terminal():
    assert isinstance(io_error("x", OSError(errno.EIO, "I/O error")), TransientError)
    assert isinstance(io_error("x", OSError(errno.ENOSPC, "No space left")), ArchiveError)


def test_a_transient_archive_error_is_retried_and_the_night_completes(home, monkeypatch, clock):
    drop(home, "a.md", md("2026-07-19", "1000", ("user", "x")))
    real = archive.archive_batch
    calls = []

    def flaky(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise TransientError("NAS blinked")
        return real(*args, **kwargs)

    monkeypatch.setattr(archive, "archive_batch", flaky)
    result = nightly(now=NOW, home=str(home.paths.home))
    assert len(calls) == 2 and result["archive"]["placed"] == 1
    assert clock.slept == [2.0]  # the first retry's delay


def test_a_transient_error_that_stays_is_retried_after_each_delay_then_fails_the_run(home, monkeypatch, clock):
    drop(home, "a.md", md("2026-07-19", "1000", ("user", "x")))
    calls = []

    def down(*args, **kwargs):
        calls.append(1)
        raise TransientError("NAS gone")

    monkeypatch.setattr(archive, "archive_batch", down)
    with pytest.raises(StageFailed) as err:
        nightly(now=NOW, home=str(home.paths.home))
    assert len(calls) == 4 and err.value.stage == "archive"
    assert clock.slept == [2.0, 10.0, 30.0]


def test_a_terminal_error_is_not_retried_and_fails_the_run_naming_stage_and_run(home, monkeypatch, clock):
    drop(home, "a.md", md("2026-07-19", "1000", ("user", "x")))
    calls = []

    def broken(*args, **kwargs):
        calls.append(1)
        raise ArchiveError("disk full")

    monkeypatch.setattr(archive, "archive_batch", broken)
    with pytest.raises(StageFailed) as err:
        nightly(now=NOW, home=str(home.paths.home))
    assert len(calls) == 1 and err.value.stage == "archive" and err.value.run_id in str(err.value)
    assert clock.slept == []
    (run,) = ledger.read_runs(home.paths.warehouse)
    assert run["status"] == "failed" and run["error"].startswith("archive:")
    assert (home.paths.active / "a.md").exists() and table(home, "archive_files") == []
