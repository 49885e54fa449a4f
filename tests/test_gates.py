"""`make lint`, the gates CI runs before the tests, catches what it is there to catch.

Each test copies the tracked tree into tmp_path, plants one problem and runs the real
`make lint` there (on the venv `make setup` built), so the gates are proven through the
Makefile, the pinned tools and the pyproject.toml configuration together.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
VENV = Path(sys.prefix)  # the venv running the tests: `make setup`'s
STAMP = ".venv/.kenang-installed"

needs_tools = pytest.mark.skipif(
    not (VENV / "bin" / "ruff").exists() or shutil.which("make") is None or shutil.which("git") is None,
    reason="make lint needs `make setup`'s venv (with the dev extra), make and git",
)


def _tree(tmp_path: Path) -> Path:
    """A copy of the tracked files, with the real venv linked in."""
    files = (
        subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout.decode().split("\0")
    )
    copy = tmp_path / "kenang"
    for rel in filter(None, files):
        src = ROOT / rel
        if not src.is_file():
            continue
        dst = copy / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dst)
    (copy / ".venv").symlink_to(VENV)
    return copy


ANSI = re.compile(r"\x1b\[[0-9;]*m")  # deptry colours its findings whatever NO_COLOR says


def _lint(tree: Path) -> subprocess.CompletedProcess[str]:
    if (ROOT / ".mypy_cache").is_dir():  # warm: CI's `make lint` ran before the tests
        shutil.copytree(ROOT / ".mypy_cache", tree / ".mypy_cache", symlinks=True)
    # -o: the copy's pyproject.toml is newer than the venv's stamp; the venv is not to be rebuilt.
    env = {**os.environ, "NO_COLOR": "1", "MYPY_CACHE_DIR": str(tree / ".mypy_cache")}
    done = subprocess.run(["make", "-o", STAMP, "lint"], cwd=tree, capture_output=True, text=True, env=env, timeout=600)
    return subprocess.CompletedProcess(done.args, done.returncode, ANSI.sub("", done.stdout), ANSI.sub("", done.stderr))


def _append(path: Path, text: str) -> None:
    path.write_text(path.read_text() + text)


PLANTED = {
    "an unused import": ("transforms/days.py", "prepend", "import fractions\n", "F401"),
    "an undefined name": ("flows/stages/plan.py", "append", "\n\ndef _planted():\n    return no_such_name\n", "F821"),
    "a type error": (
        "transforms/days.py",
        "append",
        '\n\ndef _planted() -> int:\n    return "a day"\n',
        "return-value",
    ),
    "a formatting change": ("schemas/tables.py", "append", "\n_PLANTED = [1,2]\n", "schemas/tables.py"),
}


@needs_tools
@pytest.mark.integration  # the whole `make lint` in processes of its own, tens of seconds each
@pytest.mark.parametrize("problem", list(PLANTED))
def test_make_lint_fails_on(problem, tmp_path):
    rel, where, text, expected = PLANTED[problem]
    tree = _tree(tmp_path)
    path = tree / rel
    if where == "prepend":
        lines = path.read_text().splitlines(keepends=True)
        at = next(i for i, line in enumerate(lines) if line.startswith(("import ", "from ")))
        path.write_text("".join(lines[:at] + [text] + lines[at:]))
    else:
        _append(path, text)
    done = _lint(tree)
    assert done.returncode != 0, done.stdout + done.stderr
    assert expected in done.stdout + done.stderr
    if problem == "a formatting change":
        assert "would be reformatted" in done.stdout + done.stderr


@needs_tools
@pytest.mark.integration  # the whole `make lint` in processes of its own, tens of seconds each
def test_make_lint_fails_on_an_undeclared_import(tmp_path):
    tree = _tree(tmp_path)
    # jinja2 is installed (a dependency of a dependency) but kenang does not declare it.
    _append(
        tree / "flows" / "stages" / "plan.py", "\n\ndef _planted() -> object:\n    import jinja2\n\n    return jinja2\n"
    )
    done = _lint(tree)
    assert done.returncode != 0
    said = re.sub(r"\x1b\[[0-9;]*m", "", done.stdout + done.stderr)  # deptry colours its output whatever NO_COLOR says
    assert "DEP003 'jinja2' imported but it is a transitive dependency" in said


def test_every_imported_package_is_declared_in_pyproject():
    """deptry over the whole repository: kenang's code, tests, benchmarks and notebooks."""
    deptry = Path(sys.executable).parent / "deptry"
    if not deptry.exists():
        pytest.skip("deptry comes with the dev extra (`make setup`)")
    done = subprocess.run(
        [str(deptry), "."], cwd=ROOT, capture_output=True, text=True, env={**os.environ, "NO_COLOR": "1"}
    )
    assert done.returncode == 0, done.stdout + done.stderr
