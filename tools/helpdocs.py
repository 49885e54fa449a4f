"""The ``--help`` listings of docs/, generated from the ``kenang`` command itself (``make docs``).

Each listing sits in a Markdown page between two markers, with the command it shows::

    <!-- help: kenang memory show -->
    ```text
    ...what `kenang memory show --help` prints...
    ```
    <!-- /help -->

``python tools/helpdocs.py`` rewrites every such block in ``docs/*.md`` with what the CLI
prints now, and appends to docs/commands.md a block for each command that has none.
``python tools/helpdocs.py --check`` changes nothing and exits 1, naming each listing that
differs or is missing. The help is rendered through click's test runner with a fixed
width and the program name ``kenang``, so it reads the same on every terminal.
``tests/test_docs.py`` holds the docs to it.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path

import click
from click.testing import CliRunner

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
COMMANDS_PAGE = DOCS / "commands.md"
WIDTH = 100
BLOCK = re.compile(r"<!-- help: (?P<cmd>[^>]+?) -->\n```text\n(?P<body>.*?)```\n<!-- /help -->", re.S)


def _cli() -> click.Group:
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from flows.cli.main import cli

    return cli


def commands() -> list[str]:
    """Every command and subcommand of the CLI, as typed (``kenang``, ``kenang mcp token add``), in CLI order."""

    def walk(cmd: click.Command, path: str, ctx: click.Context | None) -> Iterator[str]:
        yield path
        if isinstance(cmd, click.Group):
            here = click.Context(cmd, info_name=path.rsplit(" ", 1)[-1], parent=ctx)
            for name in cmd.list_commands(here):
                sub = cmd.get_command(here, name)
                if sub is not None and not sub.hidden:
                    yield from walk(sub, f"{path} {name}", here)

    return list(walk(_cli(), "kenang", None))


def help_text(command: str) -> str:
    """What ``<command> --help`` prints, at a fixed width."""
    args = command.split()[1:] + ["--help"]
    result = CliRunner().invoke(
        _cli(),
        args,
        prog_name="kenang",
        terminal_width=WIDTH,
        max_content_width=WIDTH,
        env={"COLUMNS": str(WIDTH)},
    )
    if result.exit_code != 0:
        raise RuntimeError(f"{command} --help exited {result.exit_code}: {result.output}")
    return result.stdout


def block(command: str) -> str:
    return f"<!-- help: {command} -->\n```text\n{help_text(command)}```\n<!-- /help -->"


def listings(text: str) -> dict[str, str]:
    """The listings a page holds: command -> the text between its markers."""
    return {m["cmd"]: m["body"] for m in BLOCK.finditer(text)}


def refresh(text: str) -> str:
    """``text`` with every listing rewritten from the CLI."""
    return BLOCK.sub(lambda m: block(m["cmd"]), text)


def pages() -> list[Path]:
    return sorted(DOCS.glob("*.md"))


def problems() -> list[str]:
    """Each listing that differs from the CLI, each unknown command listed, each command without a listing."""
    out: list[str] = []
    known = commands()
    for page in pages():
        for cmd, body in listings(page.read_text(encoding="utf-8")).items():
            if cmd not in known:
                out.append(f"{page.relative_to(ROOT)}: '{cmd}' is no kenang command")
            elif body != help_text(cmd):
                out.append(f"{page.relative_to(ROOT)}: the listing of '{cmd} --help' differs from the CLI")
    listed = listings(COMMANDS_PAGE.read_text(encoding="utf-8"))
    out += [f"docs/commands.md: no listing of '{cmd} --help'" for cmd in known if cmd not in listed]
    return out


def write() -> None:
    for page in pages():
        text = page.read_text(encoding="utf-8")
        new = refresh(text)
        if page == COMMANDS_PAGE:
            listed = listings(new)
            missing = [cmd for cmd in commands() if cmd not in listed]
            if missing:
                new = new.rstrip("\n") + "\n" + "".join(f"\n### `{cmd}`\n\n{block(cmd)}\n" for cmd in missing)
        if new != text:
            page.write_text(new, encoding="utf-8")
            print(f"rewrote {page.relative_to(ROOT)}")


def main(argv: list[str]) -> int:
    if argv == ["--check"]:
        found = problems()
        for line in found:
            print(line, file=sys.stderr)
        if found:
            print("run `make docs` to regenerate the listings", file=sys.stderr)
        return 1 if found else 0
    if argv:
        print("usage: python tools/helpdocs.py [--check]", file=sys.stderr)
        return 2
    write()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
