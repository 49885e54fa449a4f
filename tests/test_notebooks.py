"""The notebooks under notebooks/: each runs top to bottom on a demo-like home, and is
committed without outputs.

The home is the demo's sample corpus run through one nightly flow, with the extractive
summarizer and a keyword-only index, so no model is downloaded or loaded. Each notebook
runs in a fresh ``python3`` kernel (nbclient) that inherits ``KENANG_HOME`` from this
process; any cell that raises fails the test with the cell's traceback.
"""

from __future__ import annotations

from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
EXPECTED = ("trends.ipynb", "recall.ipynb", "backfill_audit.ipynb")


@pytest.fixture(scope="module")
def demo_home(tmp_path_factory, prefect_api) -> Path:
    """A demo home after one nightly run: extractive summaries, keyword-only recall."""
    from flows.cli import demo
    from flows.pipeline import nightly
    from schemas.config import render_yaml

    target = tmp_path_factory.mktemp("notebooks") / "demo-home"
    plan = demo.prepare(target)
    config = render_yaml(
        values={**demo.DEMO_CONFIG, "summarizer": {"backend": "extractive"}, "embedder": {"backend": "none"}}
    )
    plan.settings.paths.config_file.write_text(config, encoding="utf-8")
    result = nightly(now=plan.now, home=str(target))
    assert result["load"]["loaded"] > 0, result
    return target


def test_the_three_notebooks_are_there():
    assert {p.name for p in NOTEBOOKS.glob("*.ipynb")} >= set(EXPECTED)


@pytest.mark.integration  # each notebook runs in a Jupyter kernel, a process of its own
@pytest.mark.parametrize("name", EXPECTED)
def test_every_notebook_runs_top_to_bottom(name, demo_home, monkeypatch):
    import nbformat
    from nbclient import NotebookClient

    monkeypatch.setenv("KENANG_HOME", str(demo_home))
    monkeypatch.delenv("KENANG_USER", raising=False)
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    client = NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOKS)}})
    client.execute()  # raises CellExecutionError on the first broken cell

    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    text = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert str(demo_home) in text  # it read the fixture's home, not the default demo home
    if name != "recall.ipynb":  # every chart rendered (recall has tables only)
        assert any("image/png" in o.get("data", {}) for o in outputs)


def test_notebooks_are_committed_without_outputs():
    import nbformat

    paths = sorted(NOTEBOOKS.rglob("*.ipynb"))
    assert paths
    for path in paths:
        if ".ipynb_checkpoints" in path.parts:
            continue
        nb = nbformat.read(path, as_version=4)
        nbformat.validate(nb)
        assert nb.metadata.get("kernelspec", {}).get("name") == "python3", path.name
        for i, cell in enumerate(nb.cells):
            if cell.cell_type != "code":
                continue
            assert cell.outputs == [], f"{path.name} cell {i} has outputs: strip them before committing"
            assert cell.execution_count is None, f"{path.name} cell {i} has an execution_count"
