"""transforms/ is pure: importing it loads no file-system, database, Prefect or LLM modules.

And the importers are a plain list: no format module imports another, or the list.
"""

from __future__ import annotations

import ast
import pkgutil
import subprocess
import sys
from pathlib import Path

import transforms
from transforms.imports import FORMATS, formats

FORBIDDEN = ["duckdb", "prefect", "llama_cpp", "flows", "sqlite3", "polars.io"]


def test_importing_every_transform_loads_none_of_the_forbidden_modules():
    modules = [f"transforms.{m.name}" for m in pkgutil.iter_modules(transforms.__path__)]
    assert len(modules) >= 8
    code = (
        "import sys\n"
        + "".join(f"import {m}\n" for m in modules)
        + f"print([m for m in {FORBIDDEN!r} if m in sys.modules])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def _package_imports(path) -> set[str]:
    """The transforms.imports modules a file imports (``from transforms.imports import _json`` is ``..._json``)."""
    tree = ast.parse(path.read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module == "transforms.imports":
            names |= {f"{node.module}.{a.name}" for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return {n for n in names if n.startswith("transforms.imports")}


def test_the_importers_are_listed_sorted_by_name_and_none_imports_another():
    """detect asks FORMATS in order, so that order is the name order; nothing registers, so there is no circle."""
    names = [f.name for f in FORMATS]
    assert names == sorted(names) and len(set(names)) == len(names) == 11
    assert formats() == tuple(names)
    for path in sorted((Path(transforms.__file__).parent / "imports").glob("*.py")):
        if path.name != "__init__.py":
            own = f"transforms.imports.{path.stem}"
            assert _package_imports(path) <= {"transforms.imports._json", "transforms.imports.base"} - {own}, path.name
