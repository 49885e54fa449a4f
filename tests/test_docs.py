"""The README and docs/ hold to what kenang is: generated --help listings, working links, short and user-facing.

The ``--help`` listings in docs/ are the CLI's own output (``tools/helpdocs.py``, ``make docs``):
a listing that differs from what the command prints, or a command without one in
docs/commands.md, fails here. The README stays a short front page that links every page
of docs/, every relative link of the README and docs/ reaches a file, and the guides
carry no lab notes (benchmark history lives in benchmarks/README.md).
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
PAGES = sorted((ROOT / "docs").glob("*.md"))
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def _helpdocs():
    spec = importlib.util.spec_from_file_location("helpdocs", ROOT / "tools" / "helpdocs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


helpdocs = _helpdocs()


def _listings() -> list[tuple[str, str, str]]:
    return [
        (page.name, cmd, body)
        for page in PAGES
        for cmd, body in helpdocs.listings(page.read_text(encoding="utf-8")).items()
    ]


def _prose(path: Path) -> str:
    """The page without its fenced blocks: what a link in it can be."""
    return re.sub(r"^(```|````).*?^\1\s*$", "", path.read_text(encoding="utf-8"), flags=re.S | re.M)


def test_the_docs_hold_help_listings():
    assert len(_listings()) >= len(helpdocs.commands())


@pytest.mark.parametrize("page, command, body", _listings(), ids=lambda v: v if " " in str(v) else None)
def test_each_help_listing_in_the_docs_is_what_the_cli_prints(page, command, body):
    assert command in helpdocs.commands(), f"docs/{page}: '{command}' is no kenang command"
    assert body == helpdocs.help_text(command), f"docs/{page}: '{command} --help' changed; run `make docs`"


def test_every_command_and_subcommand_has_a_listing_in_the_commands_page():
    listed = helpdocs.listings((ROOT / "docs" / "commands.md").read_text(encoding="utf-8"))
    commands = helpdocs.commands()
    assert {"kenang", "kenang run", "kenang mcp token add", "kenang memory show"} <= set(commands)
    assert [c for c in commands if c not in listed] == []


def test_the_generator_rewrites_a_stale_listing_and_leaves_a_current_one_alone():
    current = helpdocs.block("kenang status")
    stale = current.replace("Usage: kenang status", "Usage: kenang stale")
    assert helpdocs.refresh(f"before\n{stale}\nafter\n") == f"before\n{current}\nafter\n"
    assert helpdocs.refresh(current) == current


def test_the_help_is_rendered_at_a_fixed_width_whatever_the_terminal(monkeypatch):
    monkeypatch.setenv("COLUMNS", "40")
    wide = helpdocs.help_text("kenang forget")
    monkeypatch.setenv("COLUMNS", "300")
    assert helpdocs.help_text("kenang forget") == wide
    assert max(len(line) for line in wide.splitlines()) <= helpdocs.WIDTH


def test_the_readme_is_at_most_250_lines():
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 250


def test_the_readme_links_every_docs_page():
    targets = {link.split("#")[0] for link in LINK.findall(README.read_text(encoding="utf-8"))}
    assert [page.name for page in PAGES if f"docs/{page.name}" not in targets] == []


@pytest.mark.parametrize("path", [README, *PAGES], ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_points_at_a_file_that_exists(path):
    broken = []
    for link in LINK.findall(_prose(path)):
        if re.match(r"[a-z]+:", link) or link.startswith("#"):
            continue
        if not (path.parent / link.split("#")[0]).exists():
            broken.append(link)
    assert broken == []


@pytest.mark.parametrize("path", [README, *PAGES], ids=lambda p: str(p.relative_to(ROOT)))
def test_no_page_speaks_of_a_chunker_or_this_session(path):
    text = path.read_text(encoding="utf-8").lower()
    assert "chunker" not in text
    assert "this session" not in text
