"""Recall's knobs are a frozen ``RecallParams`` handed to each search: two recallers in one process never see
each other's settings, and no module writes a knob of ``transforms.recall`` at run time."""

from __future__ import annotations

import ast
import dataclasses
import datetime as dt
from pathlib import Path

import pytest
from helpers import NOW, drop, md

from flows.config import init_home
from flows.pipeline import nightly
from flows.query.recall import Recaller, recall_params
from transforms import recall
from transforms.recall import RecallParams

pytestmark = pytest.mark.usefixtures("prefect_api")

ROOT = Path(__file__).resolve().parent.parent
D17, D18 = dt.date(2026, 7, 17), dt.date(2026, 7, 18)


def _found(hits) -> list[tuple]:
    return [(h.date, h.score, h.via, h.chunk.chunk_id) for h in hits]


def test_a_search_with_its_own_params_leaves_another_recallers_results_unchanged(home, fake):
    drop(
        home,
        "a.md",
        md(
            "2026-07-17",
            "0900",
            ("user", "Proxmox boot order: postgres VM first, please."),
            ("assistant", "Done: boot order 1 for postgres."),
        ),
    )
    drop(
        home,
        "b.md",
        md(
            "2026-07-18",
            "2000",
            ("user", "Lanjutan dari 2026-07-17: cadangan NAS tiap malam."),
            ("assistant", "Backup NAS jam 01:00."),
        ),
    )
    nightly(now=NOW, home=str(home.paths.home))
    queries = ("cadangan", "proxmox boot order", "kapan backup NAS kemarin?", "boot order 1")
    plain = Recaller(home, "default")
    before = {q: _found(plain.search(q, top_k=5)) for q in queries}
    tuned = dataclasses.replace(
        RecallParams(),
        related_decay=0.2,
        key_weight=1.5,
        gloss_weight=0.0,
        gloss_terms=False,
        time_boost=0.0,
        anchor_boost=0.0,
        vector_weight=0.5,
    )
    other = Recaller(home, "default", params=tuned)
    assert other.params is tuned and plain.params == RecallParams()
    theirs = {q: _found(other.search(q, top_k=5)) for q in queries}
    cadangan = {h.date: h for h in other.search("cadangan", top_k=5)}
    assert cadangan[D17].via == "related:2026-07-18"
    assert cadangan[D17].score == pytest.approx(cadangan[D18].score * 0.2)  # its own decay, not the config's
    assert theirs != before
    assert {q: _found(plain.search(q, top_k=5)) for q in queries} == before  # the first recaller never saw them
    assert {q: _found(plain.with_params(tuned).search(q, top_k=5)) for q in queries} == theirs
    assert {q: _found(Recaller(home, "default").search(q, top_k=5)) for q in queries} == before
    assert plain.params == RecallParams()


def test_the_params_are_built_from_the_config_and_cannot_be_changed(tmp_path):
    settings, _ = init_home(
        tmp_path / "home",
        {"summarizer": {"backend": "extractive"}, "embedder": {"backend": "none"}, "recall": {"related_decay": 0.5}},
    )
    params = recall_params(settings)
    assert params == dataclasses.replace(RecallParams(), related_decay=0.5)
    with pytest.raises(dataclasses.FrozenInstanceError):
        params.key_weight = 1.0  # type: ignore[misc]
    with pytest.raises(TypeError):
        params.slack["day"] = 5  # type: ignore[index]
    assert RecallParams(slack={"day": 2}).slack["day"] == 2 and RecallParams().slack["day"] == 1
    assert hash(params) == hash(dataclasses.replace(RecallParams(), related_decay=0.5)) and params in {params}


def test_transforms_recall_keeps_no_knob_as_a_module_global():
    constants = {"K1", "B", "SNIPPET_CHARS", "NAMED_PLACES", "NAMED_AROUND", "MODES", "DEFAULTS"}
    upper = {n for n in vars(recall) if n.isupper() and not n.startswith("_")}
    assert upper == constants
    assert recall.DEFAULTS == RecallParams()
    assert {f.name for f in dataclasses.fields(RecallParams)} >= {
        "keyword_weight",
        "vector_weight",
        "related_decay",
        "time_boost",
        "slack",
        "slack_boost",
        "key_weight",
        "keyword_full",
        "key_fusion",
        "when_min",
        "when_named",
        "when_lift",
        "anchor_boost",
        "anchor_share",
        "gloss_weight",
        "gloss_fusion",
        "gloss_terms",
    }


def _writes_to_transforms_recall(tree: ast.AST) -> list[int]:
    """Lines that assign to an attribute of ``transforms.recall`` or setattr one (monkeypatch's included)."""
    aliases = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "transforms":
            aliases |= {a.asname or a.name for a in node.names if a.name == "recall"}
        elif isinstance(node, ast.Import):
            aliases |= {a.asname for a in node.names if a.name == "transforms.recall" and a.asname}

    def is_module(expr: ast.AST) -> bool:
        return (isinstance(expr, ast.Name) and expr.id in aliases) or ast.unparse(expr) == "transforms.recall"

    lines = []
    for node in ast.walk(tree):
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else [node.target]
            if isinstance(node, (ast.AugAssign, ast.AnnAssign))
            else []
        )
        flat = [t for target in targets for t in (target.elts if isinstance(target, ast.Tuple) else [target])]
        if any(isinstance(t, ast.Attribute) and is_module(t.value) for t in flat):
            lines.append(node.lineno)
        if (
            isinstance(node, ast.Call)
            and node.args
            and (
                (isinstance(node.func, ast.Name) and node.func.id in ("setattr", "delattr"))
                or (isinstance(node.func, ast.Attribute) and node.func.attr in ("setattr", "delattr"))
            )
        ):
            first = node.args[0]
            if is_module(first) or (
                isinstance(first, ast.Constant)
                and isinstance(first.value, str)
                and first.value.startswith("transforms.recall.")
            ):
                lines.append(node.lineno)
    return lines


def test_no_module_assigns_to_transforms_recall_at_run_time():
    files = [
        p
        for room in ("flows", "transforms", "schemas", "benchmarks", "tests", "notebooks")
        for p in sorted((ROOT / room).rglob("*.py"))
    ]
    assert len(files) > 50
    found = {
        str(p.relative_to(ROOT)): lines
        for p in files
        if (lines := _writes_to_transforms_recall(ast.parse(p.read_text(encoding="utf-8"))))
    }
    assert found == {}, "build a RecallParams and hand it to the Recaller instead of setting a module global"


def test_the_check_catches_each_way_of_writing_a_knob():
    for code in (
        "from transforms import recall\nrecall.KEY_WEIGHT = 1",
        "from transforms import recall as r\nr.A, r.B = 1, 2",
        "import transforms.recall as rm\nrm.X += 1",
        "import transforms.recall\ntransforms.recall.X = 1",
        "from transforms import recall\ndef t(monkeypatch):\n    monkeypatch.setattr(recall, 'X', 1)",
        "from transforms import recall\nsetattr(recall, 'X', 1)",
        "def t(monkeypatch):\n    monkeypatch.setattr('transforms.recall.X', 1)",
    ):
        assert _writes_to_transforms_recall(ast.parse(code)), code
    assert not _writes_to_transforms_recall(ast.parse("from flows.query import recall\nrecall.X = 1"))
