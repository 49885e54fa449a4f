"""Every fixture is claimed by its own format's sniffer and by no other, so detect's order never decides."""

from __future__ import annotations

from pathlib import Path

import pytest
from import_support import ALL_FORMATS, FIXTURES

from transforms.imports import FORMATS, detect

# Files that are no conversation, or too broken to recognise: no sniffer may claim them.
UNCLAIMED = {
    "chatgpt/bad_json.json",
    "claude_ai/projects.json",
    "claude_ai/users.json",
    "claude_code/no_readable_line.jsonl",
}
EVERY_FIXTURE = sorted(p for p in FIXTURES.rglob("*") if p.is_file() and p.name != "SOURCES.md")


def test_every_format_has_a_fixture_folder_of_its_name():
    assert {p.parent.name for p in EVERY_FIXTURE} == set(ALL_FORMATS)


@pytest.mark.parametrize("path", EVERY_FIXTURE, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_fixture_is_claimed_by_exactly_its_own_format(path: Path):
    rel = f"{path.parent.name}/{path.name}"
    data = path.read_bytes()
    claims = [f.name for f in FORMATS if f.sniff(data)]

    expected = [] if rel in UNCLAIMED else [path.parent.name]
    assert claims == expected
    assert detect(data) == (expected[0] if expected else None)
