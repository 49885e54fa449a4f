"""The vector arm's ANN indexes (``flows.store.ann``): as good as exact search, and as forgetful as the rest.

A home whose ``recall.exact_below`` is 0 gets a usearch index per (user, month) segment
of its recall pack from its nightly run, and recall asks them instead of every vector.
"""

from __future__ import annotations

import copy
import dataclasses
import datetime as dt
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from fakes import HashEmbedder
from helpers import CRASHED, NOW, compacts_match, kenang
from test_recall_flow import archive_days, night

from benchmarks import recall_corpus
from flows.config import init_home
from flows.models import embed
from flows.pipeline import nightly
from flows.query.recall import Recaller
from flows.store import ann, mount, recall_pack

pytestmark = pytest.mark.usefixtures("prefect_api")

JAKARTA = dt.timezone(dt.timedelta(hours=7))

APPROXIMATE = {"summarizer": {"backend": "extractive"}, "embedder": {"backend": "none"}, "recall": {"exact_below": 0}}


def _embed_with(mp: pytest.MonkeyPatch, e: HashEmbedder) -> None:
    """Every embedder kenang loads is ``e`` (``kenang forget`` re-embeds what it rewrites with its own names)."""
    from flows.stages import forget

    for module in (embed, forget):
        mp.setattr(module, "make_embedder", lambda settings, **_: e)
        mp.setattr(module, "configured_id", lambda settings: e.id)


def _approximate_home(root: Path):
    settings, _ = init_home(root / "home", APPROXIMATE)
    mount.claim(settings)  # as `kenang init` does
    return settings


@pytest.fixture(scope="module")
def eval_home(tmp_path_factory, prefect_api):
    """The recall evaluation archive (benchmarks/recall_corpus.py) run once, every month with its ANN index."""
    with pytest.MonkeyPatch.context() as mp:
        _embed_with(mp, HashEmbedder())
        settings = _approximate_home(tmp_path_factory.mktemp("eval"))
        files = recall_corpus.corpus()
        for f in files:
            p = settings.paths.active / f.relpath
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(f.text, encoding="utf-8")
            os.utime(p, (0, 0))
        after = max(f.day for f in files) + dt.timedelta(days=1)
        nightly(now=dt.datetime.combine(after, dt.time(3, 0), tzinfo=JAKARTA), home=str(settings.paths.home))
        yield settings


@pytest.fixture
def hashed(monkeypatch) -> HashEmbedder:
    e = HashEmbedder()
    _embed_with(monkeypatch, e)
    return e


def _top_days(r: Recaller, query: str, mode: str) -> list:
    return [h.date for h in r.search(query, top_k=5, mode=mode)]


def test_approximate_and_exact_search_agree_on_the_top_five_days_for_the_evaluation_questions(eval_home, hashed):
    wh = eval_home.paths.warehouse
    months = recall_pack.months(wh, "gading")
    infos = [json.loads(recall_pack.manifest(wh, "gading", m).read_text()) for m in months]
    assert len(months) >= 3 and all(i["ann"] == ann.SPEC and i["files"]["ann"] for i in infos)
    # the indexes choose: each month holds more chunks than the candidates asked of it
    assert all(i["rows"] > ann.CANDIDATES for i in infos)
    approximate = Recaller(eval_home, "gading")
    exact = approximate.with_params(dataclasses.replace(approximate.params, exact_below=10**9))
    assert approximate._approximate("hybrid") and not exact._approximate("hybrid")
    questions = recall_corpus.questions()
    assert len(questions) >= 100
    differ = [
        (q.qid, mode)
        for q in questions
        for mode in ("hybrid", "vector")
        if _top_days(approximate, q.query, mode) != _top_days(exact, q.query, mode)
    ]
    assert differ == []
    # and the indexes really leave rows out: the cosines differ where no candidate was
    cos = approximate._cosines([questions[0].query], "vector")[0]
    assert not np.allclose(cos, exact._cosines([questions[0].query], "vector")[0])


def test_above_exact_below_days_grouped_over_the_rows_that_scored_answer_as_over_every_row(eval_home, hashed):
    sparse = Recaller(eval_home, "gading")
    dense = copy.copy(sparse)
    dense._sparse = False  # the grouping below exact_below: every row, every relevance
    assert sparse._approximate("hybrid")
    questions = [q.query for q in recall_corpus.questions()]
    questions += ["kemarin", "what did we talk about in March?", "exit code 137", "kapan terakhir ganti oli?"]
    asked = 0
    for query in questions:
        for mode in ("hybrid", "vector", "keyword"):
            for top_k, expand in ((5, True), (10, False)):
                got = sparse.search(query, top_k=top_k, mode=mode, expand=expand)
                assert got == dense.search(query, top_k=top_k, mode=mode, expand=expand), (query, mode)
                asked += bool(got)
    assert asked > 300
    # and a narrowed search
    start, end = dt.date(2026, 3, 1), dt.date(2026, 5, 31)
    assert sparse.search("proxmox", start=start, end=end) == dense.search("proxmox", start=start, end=end)


def _vectors(wh: Path, user: str, needle: str) -> list[bytes]:
    """The stored bytes of every vector of the user's chunks whose text holds ``needle``: float32 rows of the
    embedding matrices and 8-bit rows of the ANN indexes."""
    out = []
    for month in recall_pack.months(wh, user):
        parts = recall_pack._load_segment(wh, user, month)
        assert parts is not None
        for seg in parts:
            assert seg.ann is not None
            for row, text in enumerate(seg.rows.table()["text"].to_pylist()):
                if needle in text.lower():
                    out.append(np.asarray(seg.embeddings[row], dtype=np.float32).tobytes())
                    out.append(seg.ann.get(row, dtype=np.int8).tobytes())
    return out


def _pack_bytes(wh: Path, user: str) -> dict[str, bytes]:
    folder = recall_pack.folder(wh, user)
    return {p.name: p.read_bytes() for p in folder.rglob("*") if p.is_file()} if folder.is_dir() else {}


def test_a_forgotten_chunk_leaves_no_trace_in_the_index_files(tmp_path, hashed):
    settings = _approximate_home(tmp_path)
    archive_days(settings)
    night(settings)
    wh = settings.paths.warehouse
    gone = _vectors(wh, "gading", "postgres")
    assert gone and all(any(v in b for b in _pack_bytes(wh, "gading").values()) for v in gone)

    r = kenang("forget", "--user", "gading", "--text", "postgres", "--yes", "--home", str(settings.paths.home))
    assert r.exit_code == 0, r.stderr

    files = _pack_bytes(wh, "gading")
    assert any(name.endswith(".ann.usearch") for name in files)  # the month is indexed again, without it
    assert not [name for name, data in files.items() if any(v in data for v in gone)]
    assert compacts_match(settings)


def test_a_purged_user_leaves_no_index_file(tmp_path, hashed):
    settings = _approximate_home(tmp_path)
    archive_days(settings)
    night(settings)
    wh = settings.paths.warehouse
    gone = _vectors(wh, "rina", "")
    assert gone

    r = kenang(
        "forget", "--user", "rina", "--before", "2026-08-01", "--purge", "--yes", "--home", str(settings.paths.home)
    )
    assert r.exit_code == 0, r.stderr

    assert not [n for n in _pack_bytes(wh, "rina") if n.endswith((".ann.usearch", ".emb.npy"))]
    everywhere = [p for p in (wh / "compact" / "recall_pack").rglob("*") if p.is_file()]
    assert not [p for p in everywhere if any(v in p.read_bytes() for v in gone)]
    assert recall_pack.load(wh, "gading") is not None  # the other user's pack stays


def test_a_crash_while_a_segments_index_is_written_heals_on_the_next_run(tmp_path, hashed, prefect_api):
    settings = _approximate_home(tmp_path)
    archive_days(settings)
    tests = Path(__file__).resolve().parent
    code = (
        f"import os, sys\nsys.path.insert(0, {str(tests)!r})\n"
        "import flows.store.faults as f\nfrom flows.models import embed\nfrom fakes import HashEmbedder\n"
        "e = HashEmbedder()\nembed.make_embedder = lambda settings, **_: e\nembed.configured_id = lambda s: e.id\n"
        "def checkpoint(name):\n"
        f"    if name == 'recall_pack.ann_written':\n        os._exit({CRASHED})\n"
        "f.checkpoint = checkpoint\n"
        "from flows.cli.main import main\n"
        f"main(['run', '--home', {str(settings.paths.home)!r}, '--now', {NOW.isoformat()!r}])\n"
    )
    child = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "PREFECT_API_URL": prefect_api},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert child.returncode == CRASHED, f"the run never wrote an index: {child.stderr[-2000:]}"
    wh = settings.paths.warehouse
    assert recall_pack.load(wh, "gading") is None  # an index without its manifest is never read

    night(settings)

    assert compacts_match(settings)
    for user in ("gading", "rina"):
        assert not recall_pack.changed(wh, user)
        pack = recall_pack.load(wh, user)
        assert pack is not None and pack.ann_blocks is not None
        names = set(_pack_bytes(wh, user))
        named = {n for m in recall_pack.months(wh, user) for n in recall_pack._info(wh, user, m)["files"].values()}
        assert names - named == {f"month={m}.json" for m in recall_pack.months(wh, user)}  # no file left over
    r = Recaller(settings, "gading")
    assert r._approximate("hybrid") and r.search("proxmox boot order")[0].date.isoformat() == "2026-07-17"


def test_queries_at_once_on_threads_get_the_answers_each_gets_alone(eval_home, hashed):
    # the HTTP server answers on threads: two searches of one month's index take turns (Block.lock), and each
    # answer is the one its query gets alone
    from concurrent.futures import ThreadPoolExecutor

    r = Recaller(eval_home, "gading")
    assert r._approximate("hybrid")
    questions = [q.query for q in recall_corpus.questions()][:24]
    alone = {q: r.search(q, top_k=5) for q in questions}
    with ThreadPoolExecutor(4) as pool:
        together = list(pool.map(lambda q: (q, r.search(q, top_k=5)), questions * 3))
    assert all(got == alone[q] for q, got in together)


class _Concurrent(HashEmbedder):
    """A fake that may embed on threads at once, and says on which threads it embedded queries."""

    concurrent = True

    def __init__(self) -> None:
        super().__init__()
        self.threads: set[str] = set()

    def embed_query(self, text: str):
        import threading

        self.threads.add(threading.current_thread().name)
        return super().embed_query(text)


def test_a_query_and_its_gloss_embed_side_by_side_only_for_an_embedder_that_allows_it():
    from flows.query.recall import _embedding

    texts = ["backup ke NAS tiap malam", "backup to the NAS every night"]
    plain, concurrent = HashEmbedder(), _Concurrent()
    serial = [plain.embed_query(t) for t in texts]
    got = _embedding(concurrent, texts)()
    assert all(np.array_equal(a, b) for a, b in zip(got, serial, strict=True))
    assert all(t.startswith("kenang-embed") for t in concurrent.threads)  # while the caller scores keywords
    later = _embedding(plain, texts)
    assert all(np.array_equal(a, b) for a, b in zip(later(), serial, strict=True))
    one = _Concurrent()
    _embedding(one, texts[:1])()
    assert one.threads and all(t.startswith("kenang-embed") for t in one.threads)


def test_a_months_index_made_before_projections_is_searched_until_the_next_run_makes_it_again(tmp_path, hashed):
    """A manifest of the last release names a cosine index of the whole vectors and no basis: the pack still loads
    and searches it, and the next run remakes the month with its projection."""
    from usearch.index import Index

    settings = _approximate_home(tmp_path)
    archive_days(settings)
    night(settings)
    wh = settings.paths.warehouse
    want = {q: _top_days(Recaller(settings, "gading"), q, "hybrid") for q in ("proxmox", "postgres backup")}
    month = recall_pack.months(wh, "gading")[0]
    path = recall_pack.manifest(wh, "gading", month)
    info = json.loads(path.read_text())
    base = recall_pack.folder(wh, "gading")
    matrix = np.load(base / info["files"]["embeddings"])
    old = Index(ndim=matrix.shape[1], metric="cos", dtype="i8", connectivity=16, expansion_add=128)
    rows = np.flatnonzero(np.linalg.norm(matrix, axis=1) > 0)
    old.add(rows.astype(np.uint64), matrix[rows], threads=1)
    (base / info["files"]["ann"]).write_bytes(bytes(old.save()))
    (base / info["files"].pop("ann_basis")).unlink()
    info["ann"] = "usearch:i8:M16:ef128"
    path.write_text(json.dumps(info))

    pack = recall_pack.load(wh, "gading")
    assert pack is not None and pack.ann_blocks is not None
    assert [b.basis is None for b in pack.ann_blocks][0]  # the old month, searched as it is
    assert {q: _top_days(Recaller(settings, "gading"), q, "hybrid") for q in want} == want
    night(settings)
    assert "ann_basis" in json.loads(path.read_text())["files"]


def test_a_search_reads_each_row_of_a_matrix_once(tmp_path, monkeypatch):
    """A query and its gloss score many of the same rows: within one search, a row read from a month's matrix is
    taken from what was read, and the vectors are the matrix's."""
    matrix = np.arange(40 * 8, dtype=np.float32).reshape(40, 8)
    np.save(tmp_path / "m.npy", matrix)
    mapped = np.load(tmp_path / "m.npy", mmap_mode="r")
    read: list[int] = []
    preadv = os.preadv
    monkeypatch.setattr(ann.os, "preadv", lambda fd, bufs, at: read.append(at) or preadv(fd, bufs, at))
    with ann._Files() as files:
        first = ann.vectors(mapped, np.array([3, 4, 5, 20]), files)
        reads = len(read)
        second = ann.vectors(mapped, np.array([20, 5, 30, 3]), files)
        assert len(read) == reads + 1  # row 30 alone
        again = ann.vectors(mapped, np.array([30, 4]), files)
        assert len(read) == reads + 1
    assert np.array_equal(first, matrix[[3, 4, 5, 20]])
    assert np.array_equal(second, matrix[[20, 5, 30, 3]])
    assert np.array_equal(again, matrix[[30, 4]])


def test_the_candidates_days_scored_are_the_best_that_fit_the_budget_then_the_others_keys():
    """``ann._days``, against its rule read one day at a time: the candidates' days, best candidate first, then
    the ``also`` rows' days; each day whole while it fits the budget, else its key rows; rows already scored
    are left as they are."""
    from transforms.recall import Days

    rng = np.random.default_rng(5)
    for _ in range(200):
        n = int(rng.integers(1, 400))
        dates = np.sort(rng.integers(0, int(rng.integers(1, 40)), n)).astype("datetime64[D]")
        firsts = np.flatnonzero(np.concatenate([[True], dates[1:] != dates[:-1]]))
        cut = np.sort(rng.choice(firsts[1:], size=min(len(firsts) - 1, 2), replace=False)) if len(firsts) > 1 else []
        bounds = np.concatenate([[0], cut, [n]]).astype(int)
        matrix = rng.standard_normal((n, 8)).astype(np.float32)
        blocks = [ann.Block(lo, hi - lo, matrix[lo:hi], None) for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)]
        is_key = rng.random(n) < rng.random() if rng.random() < 0.8 else None
        known = rng.random(n) < 0.2
        out = np.where(known, rng.standard_normal(n), 0).astype(np.float32)
        near = rng.choice(n, size=min(n, int(rng.integers(1, 30))), replace=False)
        also = rng.random(n) < 0.05
        budget = int(rng.integers(0, 200))
        q = rng.standard_normal(8).astype(np.float32)

        want_out, want_known = out.copy(), known.copy()
        order = list(dict.fromkeys(dates[near[np.argsort(-out[near], kind="stable")]].tolist()))
        order += [d for d in dict.fromkeys(dates[also].tolist()) if d not in order]
        left = budget
        for day in order:
            rows = np.flatnonzero(dates == day)
            if len(rows) <= left:
                left -= len(rows)
            elif is_key is not None:
                rows = rows[is_key[rows]]
            else:
                continue
            rows = rows[~known[rows]]
            if len(rows):
                want_out[rows] = matrix[rows] @ q
                want_known[rows] = True

        got_out, got_known = out.copy(), known.copy()
        ann._days(blocks, q, near, also, dates, is_key, budget, got_out, got_known, None, Days.of(dates))
        assert np.array_equal(got_known, want_known)
        assert np.allclose(got_out, want_out, rtol=1e-5, atol=1e-5)


def test_a_search_runs_blas_on_one_thread_and_gives_its_threads_back(eval_home, hashed):
    """A search's products are small and run on its own threads: BLAS's threads would spin between them on the
    cores the search needs. BLAS has one thread while a search runs (read here on the thread that searches), and
    the count it had before again after."""
    from threadpoolctl import ThreadpoolController

    blas = ThreadpoolController().select(user_api="blas")
    assert blas.lib_controllers  # numpy's BLAS is found
    own = [c.num_threads for c in blas.lib_controllers]
    seen: list[list[int]] = []
    r = Recaller(eval_home, "gading")
    search = r._search

    def spying(*args):
        seen.append([c.num_threads for c in blas.lib_controllers])
        return search(*args)

    r._search = spying  # type: ignore[method-assign]  # a spy on this one recaller, to read BLAS inside a search
    for q in ["proxmox", "backup NAS", "kucing"]:
        r.search(q, top_k=5)
    assert seen == [[1] * len(own)] * 3
    assert [c.num_threads for c in blas.lib_controllers] == own


def test_searches_at_once_share_one_blas_thread_and_the_last_gives_the_count_back():
    import threading
    from concurrent.futures import ThreadPoolExecutor

    class Library:  # a BLAS library's thread count, as threadpoolctl sets it
        num_threads = 4

        def set_num_threads(self, n: int) -> None:
            self.num_threads = n

    lib, limiter = Library(), ann._OneBlasThread()
    limiter._libs = [lib]
    inside, go = [], threading.Barrier(4)

    def search(_):
        with limiter:
            go.wait()  # four searches at once
            inside.append(lib.num_threads)
            with limiter:  # nested
                inside.append(lib.num_threads)
            go.wait()

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(search, range(4)))
    assert inside == [1] * 8 and lib.num_threads == 4


def test_a_months_beam_is_the_same_after_a_search_even_one_that_fails(eval_home, hashed, monkeypatch):
    r = Recaller(eval_home, "gading")
    assert r._approximate("hybrid")
    r.search("proxmox", top_k=5)
    beams = [b.index.expansion_search for b in r._data.ann if b.index is not None]
    assert beams and all(x == max(ann.EXPANSION_SEARCH, ann.CANDIDATES) for x in beams)

    block = next(b for b in r._data.ann if b.index is not None)

    class Failing:  # the month's index, whose search of the farthest rows fails
        def __init__(self, index):
            self.index = index

        def __getattr__(self, name):
            return getattr(self.index, name)

        def __setattr__(self, name, value):
            if name == "index":
                object.__setattr__(self, name, value)
            else:
                setattr(self.index, name, value)

        def __len__(self):
            return len(self.index)

        def search(self, batch, count, **kw):
            if count == ann.FARTHEST:
                raise OSError("the month's index went away")
            return self.index.search(batch, count, **kw)

    failing = dataclasses.replace(block, index=Failing(block.index))
    with pytest.raises(OSError):
        ann.approximate([failing], [np.ones(block.matrix.shape[1], dtype=np.float32)])
    assert block.index.expansion_search == max(ann.EXPANSION_SEARCH, ann.CANDIDATES)


def test_the_rows_a_search_keeps_change_none_of_its_cosines(eval_home, hashed, monkeypatch):
    r = Recaller(eval_home, "gading")
    questions = [q.query for q in recall_corpus.questions()][:12]
    kept = {q: r.scores(q) for q in questions}
    monkeypatch.setattr(ann._Files, "keep", lambda self, path, rows, vecs: None)  # every row read from its file
    assert all(np.array_equal(r.scores(q), kept[q]) for q in questions)


def test_a_server_process_serves_with_one_blas_thread():
    code = (
        "import numpy\n"
        "from threadpoolctl import ThreadpoolController\n"
        "from flows.store import ann\n"
        "ann.serve_on_one_blas_thread()\n"
        "print([c.num_threads for c in ThreadpoolController().select(user_api='blas').lib_controllers])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[1]"
