"""The house plan holds: each room imports only what its role allows.

- ``transforms/`` and ``schemas/`` are pure: no Prefect, DuckDB, llama_cpp, Polars or
  Parquet I/O, and no file I/O (no ``open``, ``os``, ``pathlib``, ``shutil``, ...).
  ``schemas/`` reads its own data files only through ``importlib.resources``.
- ``schemas/`` imports nothing else of the project.
- ``flows/query/`` answers questions without Prefect, so a query never starts a server.

The checks read the source (AST), so a forbidden import inside a function counts too;
``test_import_hygiene.py`` checks what importing actually loads.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
IO_MODULES = {"os", "pathlib", "shutil", "io", "tempfile", "glob", "subprocess", "sqlite3", "fsspec", "socket"}
ENGINES = {"prefect", "duckdb", "llama_cpp", "polars", "pyarrow.parquet", "pyarrow.csv", "pyarrow.dataset"}


def modules(room: str) -> list[Path]:
    return sorted((ROOT / room).rglob("*.py"))


def imports(path: Path) -> set[str]:
    """Every module a file imports, anywhere in it (``from a.b import c`` gives ``a.b`` and ``a.b.c``)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
            out |= {f"{node.module}.{a.name}" for a in node.names}
    return out


def reaches(names: set[str], forbidden: set[str]) -> set[str]:
    return {n for n in names for f in forbidden if n == f or n.startswith(f + ".")}


def calls_open(path: Path) -> bool:
    return any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "open"
        for n in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
    )


@pytest.mark.parametrize("path", modules("transforms") + modules("schemas"), ids=lambda p: str(p.relative_to(ROOT)))
def test_transforms_and_schemas_touch_no_engine_and_no_file(path):
    assert reaches(imports(path), ENGINES | IO_MODULES | {"flows"}) == set()
    assert not calls_open(path)


@pytest.mark.parametrize("path", modules("schemas"), ids=lambda p: str(p.relative_to(ROOT)))
def test_schemas_import_nothing_else_of_the_project(path):
    assert reaches(imports(path), {"transforms", "flows", "benchmarks", "tests"}) == set()


@pytest.mark.parametrize("path", modules("flows/query"), ids=lambda p: str(p.relative_to(ROOT)))
def test_the_query_room_imports_no_prefect(path):
    assert reaches(imports(path), {"prefect", "flows.pipeline", "flows.serve"}) == set()


def test_importing_every_query_module_loads_no_prefect():
    names = [f"flows.query.{p.stem}" for p in modules("flows/query") if p.stem != "__init__"]
    code = "import sys\n" + "".join(f"import {n}\n" for n in names) + "print('prefect' in sys.modules)\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "False"


def test_the_rooms_of_flows_are_the_ones_the_architecture_page_names():
    rooms = sorted(p.name for p in (ROOT / "flows").iterdir() if p.is_dir() and not p.name.startswith("__"))
    assert rooms == ["cli", "models", "query", "stages", "store"]
    top = sorted(p.name for p in (ROOT / "flows").glob("*.py"))
    assert top == ["__init__.py", "config.py", "pipeline.py", "serve.py"]


def test_the_modules_of_flows_import_one_another_without_a_cycle():
    """Config sits below the store: ``kenang init`` claims the archive, ``init_home`` does not.

    Every import counts, a deferred one inside a function too, so a cycle cannot hide
    behind a late import.
    """
    import graphlib

    def name(path: Path) -> str:
        parts = path.relative_to(ROOT).with_suffix("").parts
        return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)

    ours = {name(p): p for p in modules("flows")}
    graph = {mod: {n for n in imports(path) if n in ours and n != mod} for mod, path in ours.items()}
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as exc:
        pytest.fail(f"an import cycle: {' -> '.join(exc.args[1])}")
    assert "flows.store.mount" in graph and not reaches(imports(ROOT / "flows/config.py"), {"flows.store"})
