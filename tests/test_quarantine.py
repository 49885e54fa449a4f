"""Every unreadable file lands in quarantine with a reason, and the night goes on."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from helpers import NOW, OLD, drop, md, table

from flows.pipeline import nightly

pytestmark = pytest.mark.usefixtures("prefect_api")

BAD = sorted((Path(__file__).parent / "fixtures" / "bad").iterdir())
KIND = {"unclosed_frontmatter": "bad_frontmatter", "broken_json": "bad_json"}


@pytest.mark.parametrize("fixture", BAD, ids=[p.name for p in BAD])
def test_an_unreadable_transcript_lands_in_quarantine_with_its_reason(home, fixture):
    good = md("2026-07-19", "1000", ("user", "tetap jalan"))
    drop(home, "good.md", good)
    drop(home, fixture.name, fixture.read_bytes())
    result = nightly(now=NOW, home=str(home.paths.home))

    kind = KIND.get(fixture.stem, fixture.stem)
    placed = home.paths.quarantine / "2026-07-20" / fixture.name
    assert placed.read_bytes() == fixture.read_bytes()
    sidecar = json.loads(placed.with_name(placed.name + ".reason.json").read_text())
    assert sidecar["kind"] == kind and sidecar["reason"] and sidecar["original_path"] == fixture.name
    assert not (home.paths.active / fixture.name).exists()
    (row,) = table(home, "quarantine")
    assert (row["kind"], row["original_path"]) == (kind, fixture.name)
    # the good file of the same night was archived and loaded all the same
    assert result["load"]["loaded"] == 1 and len(table(home, "messages")) == 1


def test_a_symlink_is_quarantined_as_a_link_and_its_target_never_read(home, tmp_path):
    target = tmp_path / "secret.txt"
    target.write_text("do not read")
    link = home.paths.active / "link.md"
    os.symlink(target, link)
    os.utime(link, (OLD, OLD), follow_symlinks=False)
    nightly(now=NOW, home=str(home.paths.home))
    placed = home.paths.quarantine / "2026-07-20" / "link.md"
    assert placed.is_symlink() and os.readlink(placed) == str(target)
    assert target.read_text() == "do not read"
    assert table(home, "quarantine")[0]["kind"] == "symlink"


def test_a_file_over_the_size_limit_is_quarantined(home):
    cfg = home.paths.config_file
    cfg.write_text(cfg.read_text().replace("max_file_mb: 200", "max_file_mb: 0.001"))
    drop(home, "huge.md", md("2026-07-19", "1000", ("user", "x" * 5000)))
    nightly(now=NOW, home=str(home.paths.home))
    (row,) = table(home, "quarantine")
    assert row["kind"] == "too_large" and "max_file_mb" in row["reason"]


def test_a_folder_that_is_not_a_valid_user_is_quarantined_with_advice(home):
    drop(home, "My Chats/a.md", md("2026-07-19", "1000", ("user", "x")))
    nightly(now=NOW, home=str(home.paths.home))
    (row,) = table(home, "quarantine")
    assert row["kind"] == "bad_user_id" and row["original_path"] == "My Chats/a.md"


def test_quarantine_reasons_never_quote_transcript_text(home):
    drop(home, "bad.jsonl", b'{"role": "user", "content": "rahasia sekali", "timestamp": "kemarin sore"}\n')
    nightly(now=NOW, home=str(home.paths.home))
    (row,) = table(home, "quarantine")
    assert row["kind"] == "bad_timestamp" and "rahasia" not in row["reason"]


def test_hidden_files_are_skipped_not_quarantined(home):
    drop(home, ".draft.md.swp", b"\x00\x01")
    result = nightly(now=NOW, home=str(home.paths.home))
    assert (home.paths.active / ".draft.md.swp").exists()
    assert result["ingest"]["hidden"] == 1 and table(home, "quarantine") == []
