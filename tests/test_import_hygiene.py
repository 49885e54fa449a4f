"""transforms/ is pure: importing it loads no file-system, database, Prefect or LLM modules."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import transforms

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
