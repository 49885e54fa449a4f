"""The archive mover and `verify`: nothing lost, nothing overwritten, tampering caught."""

from __future__ import annotations

import os
import shutil
import stat
import uuid
from pathlib import Path

import pytest
from helpers import NOW, drop, kenang, md, scenario, table

from flows.pipeline import nightly
from flows.store import fsio
from flows.store.fsio import remove_source, safe_copy, sha256_file
from flows.store.verify import verify


def test_safe_copy_places_a_verified_read_only_copy_and_keeps_the_source(tmp_path):
    src = tmp_path / "a.md"
    src.write_bytes(b"halo")
    placed = safe_copy(src, tmp_path / "arch", "a.md")
    assert placed.path.read_bytes() == b"halo" and src.exists() and not placed.existed
    assert stat.S_IMODE(placed.path.stat().st_mode) == 0o444
    assert placed.sha256 == sha256_file(src)
    assert [p.name for p in (tmp_path / "arch").iterdir()] == ["a.md"]  # no temporary left


def test_safe_copy_never_overwrites_different_bytes_and_recognises_identical_ones(tmp_path):
    src = tmp_path / "a.md"
    src.write_bytes(b"one")
    first = safe_copy(src, tmp_path / "arch", "a.md")
    src.write_bytes(b"two")
    second = safe_copy(src, tmp_path / "arch", "a.md")
    assert second.path != first.path and first.path.read_bytes() == b"one" and second.path.read_bytes() == b"two"
    assert second.path.name.startswith("a.") and second.path.name.endswith(".md")
    again = safe_copy(src, tmp_path / "arch", "a.md")
    assert again.existed and again.path == second.path


def test_a_source_is_not_deleted_if_it_changed_after_archiving(tmp_path):
    src = tmp_path / "a.md"
    src.write_bytes(b"one")
    placed = safe_copy(src, tmp_path / "arch", "a.md")
    src.write_bytes(b"one and more")  # the writer came back
    assert remove_source(src, placed.sha256) is False and src.exists()


def test_a_big_source_is_copied_in_chunks_byte_exact_with_its_times(tmp_path, monkeypatch):
    monkeypatch.setattr(fsio, "_IN_MEMORY", 4)  # every source here counts as too big to hold
    src = tmp_path / "big.md"
    src.write_bytes(b"halo dunia " * 1000)
    os.utime(src, ns=(1_700_000_000_000_000_000, 1_700_000_000_000_000_000))
    placed = safe_copy(src, tmp_path / "arch", "big.md")
    assert placed.path.read_bytes() == src.read_bytes() and placed.sha256 == sha256_file(src)
    assert placed.size == src.stat().st_size and placed.path.stat().st_mtime_ns == src.stat().st_mtime_ns


def test_a_source_gone_since_its_copy_is_not_deleted_twice(tmp_path):
    src = tmp_path / "a.md"
    src.write_bytes(b"one")
    placed = safe_copy(src, tmp_path / "arch", "a.md")
    src.unlink()
    assert remove_source(src, placed.sha256) is False
    assert remove_source(tmp_path / "not-a-folder" / "a.md", placed.sha256) is False


@pytest.fixture
def shm_archive():
    root = Path("/dev/shm") / f"kenang-test-{uuid.uuid4().hex[:8]}"
    yield root
    shutil.rmtree(root, ignore_errors=True)


@pytest.mark.usefixtures("prefect_api")
def test_an_archive_on_another_filesystem_loses_nothing(home, shm_archive):
    cfg = home.paths.config_file
    cfg.write_text(cfg.read_text().replace("archive: archive", f"archive: {shm_archive}"))
    assert kenang("init", "--home", str(home.paths.home)).exit_code == 0  # a new archive gets its marker
    data = md("2026-07-19", "1000", ("user", "ke NAS"))
    src = drop(home, "nas.md", data)
    assert os.stat(home.paths.active).st_dev != os.stat("/dev/shm").st_dev  # really another filesystem
    nightly(now=NOW, home=str(home.paths.home))
    placed = shm_archive / "daily_sessions/2026-07-19/nas.md"
    assert placed.read_bytes() == data and not src.exists()
    assert stat.S_IMODE(placed.stat().st_mode) == 0o444
    assert table(home, "archive_files")[0]["path"] == "daily_sessions/2026-07-19/nas.md"


@pytest.mark.usefixtures("prefect_api")
def test_verify_catches_a_tampered_a_missing_and_an_unrecorded_file(home):
    scenario(home)
    nightly(now=NOW, home=str(home.paths.home))
    clean = verify(home)
    assert clean.problems == 0 and clean.ok == 3
    day = home.paths.archive / "daily_sessions/2026-07-19"
    tampered = day / "2026-07-19-1037.md"
    os.chmod(tampered, 0o644)
    tampered.write_bytes(b"## user\nsomething else\n")
    (day / "rina" / "chat.jsonl").unlink()
    (day / "stray.md").write_bytes(b"## user\nnot archived by kenang\n")
    report = verify(home)
    assert report.changed == ("daily_sessions/2026-07-19/2026-07-19-1037.md",)
    assert report.missing == ("daily_sessions/2026-07-19/rina/chat.jsonl",)
    assert report.unrecorded == ("daily_sessions/2026-07-19/stray.md",)
    assert report.problems == 3
