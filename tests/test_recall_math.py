"""BM25, fusion and related-dates expansion, with scores checked by hand."""

from __future__ import annotations

import datetime as dt
import math

import numpy as np
import pytest

from benchmarks.evaluation import fuse_rrf, metrics
from transforms.chunk import terms_of
from transforms.recall import ChunkRef, KeywordIndex, fuse, select, snippet

D = [dt.date(2026, 7, d) for d in range(1, 8)]


def ref(i: int, day: dt.date, text: str = "x") -> ChunkRef:
    return ChunkRef(f"c{i}", "gading", day, "s", "transcript", text, ())


def test_bm25_scores_match_the_formula():
    idx = KeywordIndex.from_lists([["boot", "proxmox"], ["proxmox"], ["nas"]], [[1, 2], [1], [1]])
    s = idx.scores("Proxmox?")
    idf = math.log(1 + (3 - 2 + 0.5) / (2 + 0.5))
    avg = 5 / 3
    d0 = idf * 2 * 2.2 / (2 + 1.2 * (0.25 + 0.75 * 3 / avg))
    d1 = idf * 1 * 2.2 / (1 + 1.2 * (0.25 + 0.75 * 1 / avg))
    assert s == pytest.approx([d0, d1, 0.0], rel=1e-6)
    assert idx.scores("tidak ada").tolist() == [0.0, 0.0, 0.0]


def test_bm25_sums_over_distinct_query_terms():
    idx = KeywordIndex.from_lists([["boot", "proxmox"], ["proxmox"], ["nas"]], [[1, 2], [1], [1]])
    both = idx.scores("proxmox boot")
    assert both == pytest.approx(idx.scores("proxmox") + idx.scores("boot"))
    assert idx.scores("proxmox proxmox") == pytest.approx(idx.scores("proxmox"))


def test_fusion_is_the_documented_weighted_sum():
    kw = np.array([2.0, 1.0, 0.0])
    cos = np.array([0.8, 0.9, 0.7])  # scaled over the set: 0.5, 1, 0
    assert fuse(kw, cos).tolist() == pytest.approx([(1 + 2 * 0.5) / 3, (0.5 + 2 * 1.0) / 3, 0.0])
    assert fuse(kw, cos, mode="keyword").tolist() == pytest.approx([1.0, 0.5, 0.0])
    assert fuse(kw, cos, mode="vector").tolist() == pytest.approx([0.5, 1.0, 0.0])
    assert fuse(kw, np.full(3, 0.4)).tolist() == pytest.approx([1 / 3, 0.5 / 3, 0.0])  # flat cosines add nothing
    assert fuse(kw, None).tolist() == pytest.approx([1.0, 0.5, 0.0])  # keyword-only index
    with pytest.raises(ValueError, match="vector mode needs embeddings"):
        fuse(kw, None, mode="vector")


@pytest.mark.parametrize("seed", range(6))
def test_fusion_over_the_few_rows_that_scored_is_the_weighted_sum_over_every_row(seed):
    rng = np.random.default_rng(seed)
    n = 30_000  # large enough for fuse to run over the rows that scored alone
    kw = np.where(rng.random(n) < 0.02, rng.random(n) * 5, 0.0).astype(np.float32)
    cos = np.full(n, np.float32(-0.3))  # an approximate vector arm: the rows not scored hold the least cosine
    near = rng.random(n) < 0.05
    cos[near] = rng.random(int(near.sum())).astype(np.float32)
    for mode in ("hybrid", "keyword", "vector"):
        for weight in (None, 0.4):
            wk = 0.0 if mode == "vector" else (1.0 if weight is None else weight)
            wv = 0.0 if mode == "keyword" else 2.0
            by_hand = np.zeros(n)
            by_hand += wk * (kw.astype(np.float64) / float(kw.max()))
            by_hand += wv * ((cos.astype(np.float64) - float(cos.min())) / (float(cos.max()) - float(cos.min())))
            assert np.array_equal(fuse(kw, cos, mode=mode, keyword_weight=weight), by_hand / (wk + wv))


def test_rrf_adds_reciprocal_ranks():
    a = np.array([3.0, 2.0, 1.0])
    b = np.array([1.0, 2.0, 3.0])
    assert fuse_rrf(a, b, k=60).tolist() == pytest.approx([1 / 61 + 1 / 63, 2 / 62, 1 / 63 + 1 / 61])


def test_a_day_scores_as_its_best_chunk_and_related_days_come_in_at_0_7():
    refs = [ref(0, D[0]), ref(1, D[0]), ref(2, D[1]), ref(3, D[2]), ref(4, D[3])]
    scores = np.array([0.9, 0.95, 0.5, 0.1, 0.2])
    related = {D[0]: (D[2], D[5])}  # D[5] has no chunks in range: never invented
    hits = select(scores, refs, related, top_k=3)
    assert [(h.date, h.via, h.chunk.chunk_id) for h in hits] == [
        (D[0], "direct", "c1"),
        (D[2], f"related:{D[0].isoformat()}", "c3"),
        (D[1], "direct", "c2"),
    ]
    assert [h.score for h in hits] == pytest.approx([0.95, 0.95 * 0.7, 0.5])


def test_a_day_keeps_its_direct_score_when_that_is_higher():
    refs = [ref(0, D[0]), ref(1, D[1])]
    hits = select(np.array([0.6, 0.5]), refs, {D[0]: (D[1],)}, top_k=5)
    assert [(h.date, h.via, h.score) for h in hits] == [(D[0], "direct", 0.6), (D[1], "direct", 0.5)]


def test_only_the_top_k_direct_days_expand_and_expansion_can_be_switched_off():
    refs = [ref(0, D[0]), ref(1, D[1]), ref(2, D[2])]
    scores = np.array([0.9, 0.8, 0.0])
    assert [h.via for h in select(scores, refs, {D[1]: (D[2],)}, top_k=1)] == ["direct"]
    two = select(scores, refs, {D[1]: (D[2],)}, top_k=3)
    assert [(h.date, round(h.score, 6)) for h in two] == [(D[0], 0.9), (D[1], 0.8), (D[2], 0.56)]
    plain = select(scores, refs, {D[1]: (D[2],)}, top_k=3, expand=False)
    assert [(h.date, h.via) for h in plain] == [(D[0], "direct"), (D[1], "direct")]  # a 0 score is no match


def test_snippet_centres_on_the_match():
    text = "a " * 300 + "the Proxmox boot order was fixed " + "b " * 300
    s = snippet(text, "proxmox")
    assert "Proxmox boot order" in s and s.startswith("…") and s.endswith("…") and len(s) <= 242


def test_snippet_finds_a_word_whose_stem_is_not_its_start():
    text = "a " * 300 + "we planned the happy birthday party at home " + "b " * 300
    assert terms_of("party") == ["parti"]  # Porter2: not a prefix of "party"
    assert "birthday party" in snippet(text, "party") and "birthday party" in snippet(text, "the parties")


def test_metrics_count_any_answer_day():
    ranked = [[D[0], D[1]], [D[2], D[3]], [D[4]]]
    gold = [[D[0]], [D[3], D[6]], [D[5]]]
    assert metrics(ranked, gold) == pytest.approx({"hit@1": 1 / 3, "hit@5": 2 / 3, "mrr": (1 + 0.5) / 3})


def test_a_dictionary_encoded_index_scores_like_a_plain_one():
    terms, tfs = [["boot", "proxmox"], ["proxmox"], ["nas"]], [[1, 2], [1], [1]]
    plain = KeywordIndex.from_lists(terms, tfs)
    vocab = ["nas", "proxmox", "boot"]
    ids = [2, 1, 1, 0]
    encoded = KeywordIndex(vocab, np.array([1, 2, 1, 1]), np.array([2, 1, 1]), term_ids=np.array(ids))
    for q in ("proxmox", "boot nas", "x"):
        assert encoded.scores(q) == pytest.approx(plain.scores(q))
