"""A model server the homelab already runs, over the OpenAI-compatible HTTP API.

Ollama, llama.cpp's ``llama-server``, vLLM, LM Studio and ``python -m llama_cpp.server``
all answer ``POST {base_url}/chat/completions`` and ``POST {base_url}/embeddings``.

- ``OpenAIModel`` is a ``transforms.summarize.TextModel``: the summarizer's whole
  ladder (validate, bound, ground, retry, fall back per field) is the in-process
  backend's code, unchanged; only where the words come from differs. The JSON schema
  goes to the server as ``structured_output`` says: ``json_schema`` (the server
  constrains the reply to it), ``json_object`` (any JSON object), or ``none``.
- ``OpenAIEmbedder`` is a ``transforms.recall.Embedder``; its batches may be in
  flight ``concurrency`` at a time, and it learns the vector size from the server.
- **Transient errors** (no connection, a timeout, a reply cut short, 429, 5xx) are
  retried with a doubling back-off (a 429's ``Retry-After`` is honoured, capped); when
  the attempts run out the server counts as unavailable (``ModelUnavailable``): the
  summarize and index stages leave their remaining days waiting with the reason, and
  the night goes on and ends. A 401, 403 or 404 (a wrong key, model or path) is
  unavailable at once: retrying will not change it. Any other 4xx fails the one day.
- **Identity.** ``shown_url`` is the base URL without credentials or query; a summary's
  ``generator.model`` is ``<model id>@<shown_url>`` and its ``model_sha256`` the
  sha256 of that string, so a summary says what wrote it, and changing the model or
  the server is a change the ledger sees.
- The API key comes from the environment variable ``api_key_env`` names, never from
  kenang.yaml.
"""

from __future__ import annotations

import hashlib
import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Sequence
from urllib.parse import urlsplit, urlunsplit

import numpy as np

from transforms.errors import ConfigError, ModelUnavailable
from transforms.summarize import Generation, SummarizeError

#: Back-off before the n-th retry: BACKOFF_S * 2**n, at most MAX_WAIT_S (a Retry-After too).
BACKOFF_S = 1.0
MAX_WAIT_S = 30.0


def shown_url(base_url: str) -> str:
    """The base URL without user, password, query or fragment: what reports and summaries may show."""
    parts = urlsplit(base_url.strip())
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path.rstrip("/"), "", ""))


@dataclass(frozen=True)
class Server:
    base_url: str
    model: str
    api_key: str | None
    timeout_s: float
    retries: int = 3

    @property
    def shown(self) -> str:
        return shown_url(self.base_url)

    @property
    def identity(self) -> str:
        return f"{self.model}@{self.shown}"


def server_of(section: Any, what: str) -> Server:
    """The server a ``summarizer`` or ``embedder`` section names; ConfigError when a key is missing."""
    if not section.base_url:
        raise ConfigError(f"{what}.backend is openai but {what}.base_url is not set (e.g. http://gpu-box:11434/v1)")
    if not section.model:
        raise ConfigError(f"{what}.backend is openai but {what}.model is not set (the server's model id)")
    key = None
    if section.api_key_env:
        key = os.environ.get(section.api_key_env)
        if not key:
            raise ConfigError(f"{what}.api_key_env names {section.api_key_env}, which is not set in the environment")
    return Server(section.base_url.rstrip("/"), section.model, key, float(section.timeout_s))


class Client:
    """JSON over HTTP to one server, with the retries above; thread-safe."""

    def __init__(self, server: Server) -> None:
        import httpx

        self.server = server
        headers = {"Authorization": f"Bearer {server.api_key}"} if server.api_key else {}
        self._http = httpx.Client(base_url=server.base_url, timeout=server.timeout_s, headers=headers)
        self._httpx = httpx

    def post(self, path: str, body: dict) -> tuple[dict | None, str]:
        """(the reply's JSON object, or None when it is no JSON object; the reply's text)."""
        httpx = self._httpx
        why = ""
        for attempt in range(self.server.retries + 1):
            wait = min(MAX_WAIT_S, BACKOFF_S * 2**attempt)
            try:
                r = self._http.post(path, json=body)
                text = r.text
            except httpx.TimeoutException:
                why = f"no answer within {self.server.timeout_s:g} s"
            except (httpx.TransportError, httpx.DecodingError) as exc:  # refused, reset, a reply cut short
                why = f"cannot reach it ({type(exc).__name__})"
            else:
                if r.status_code in (401, 403, 404):
                    raise ModelUnavailable(f"{self.server.shown}{path}: HTTP {r.status_code} ({_said(text)}); "
                                           "check base_url, model and the API key")
                if r.status_code == 429 or r.status_code >= 500:
                    why = f"HTTP {r.status_code}"
                    if r.status_code == 429:
                        wait = min(MAX_WAIT_S, _retry_after(r.headers.get("retry-after"), wait))
                elif r.status_code >= 400:
                    raise SummarizeError(f"{self.server.shown}{path}: HTTP {r.status_code}: {_said(text)}")
                else:
                    try:
                        data = r.json()
                    except ValueError:
                        return None, text
                    return (data if isinstance(data, dict) else None), text
            if attempt < self.server.retries:
                time.sleep(wait)
        raise ModelUnavailable(f"{self.server.shown}: {why} ({self.server.retries + 1} attempts)")

    def raw_post(self, url: str, body: dict):
        """One POST to an absolute URL of the same server, without retries (the tokenizer probe)."""
        return self._http.post(url, json=body, timeout=min(self.server.timeout_s, 30.0))

    def close(self) -> None:
        self._http.close()


def _retry_after(value: str | None, default: float) -> float:
    try:
        return max(0.0, float(value)) if value is not None else default
    except ValueError:
        return default


def _said(text: str) -> str:
    return " ".join(text.split())[:200]


# --- the summarizer's model -------------------------------------------------------------------


class OpenAIModel:
    """A ``TextModel`` on a server: one chat completion per ``generate``, the schema sent as configured."""

    def __init__(self, server: Server, *, n_ctx: int, structured_output: str, seed: int) -> None:
        self.server = server
        self.client = Client(server)
        self.name = server.identity
        self.sha256 = hashlib.sha256(server.identity.encode("utf-8")).hexdigest()
        self.n_ctx = n_ctx
        self.structured_output = structured_output
        self.seed = seed
        self._tokenize: tuple[str, str] | tuple[()] | None = None  # found on first use

    def count_tokens(self, text: str) -> int:
        """The server's own count where it offers one (llama-server's and vLLM's ``/tokenize``,
        llama_cpp.server's ``/extras/tokenize/count``), so a day is cut as the in-process
        backend would cut it; else an estimate on the safe side, about 3 UTF-8 bytes a token."""
        if self._tokenize is None:
            self._tokenize = self._find_tokenizer()
        if self._tokenize:
            n = self._count(self._tokenize, text)
            if n is not None:
                return n
        return len(text.encode("utf-8")) // 3 + 1

    _TOKENIZERS = (("/extras/tokenize/count", "input"), ("/tokenize", "content"), ("/tokenize", "prompt"))

    def _find_tokenizer(self) -> tuple[str, str] | tuple[()]:
        for way in self._TOKENIZERS:
            if self._count(way, "kenang") is not None:
                return way
        return ()

    def _count(self, way: tuple[str, str], text: str) -> int | None:
        """Tokens of ``text`` by one tokenize endpoint; None when it does not answer as one."""
        path, key = way
        root = self.server.base_url.removesuffix("/v1") if path.startswith("/tokenize") else self.server.base_url
        try:
            r = self.client.raw_post(root + path, {key: text, "model": self.server.model})
            data = r.json() if r.status_code == 200 else None
        except Exception:  # noqa: BLE001 - no tokenizer there: the estimate is used
            return None
        if not isinstance(data, dict):
            return None
        if isinstance(data.get("count"), int):
            return data["count"]
        return len(data["tokens"]) if isinstance(data.get("tokens"), list) else None

    def generate(self, messages: list[dict], *, schema: dict, temperature: float, max_tokens: int) -> Generation:
        body: dict[str, Any] = {"model": self.server.model, "messages": messages, "temperature": temperature,
                                "max_tokens": max_tokens, "seed": self.seed, "stream": False}
        if self.structured_output == "json_schema":
            body["response_format"] = {"type": "json_schema",
                                       "json_schema": {"name": "day_summary", "schema": schema, "strict": True}}
        elif self.structured_output == "json_object":
            # llama.cpp's servers (llama-server, llama_cpp.server) constrain a json_object reply to a schema sent
            # with it; the others take json_object alone and ignore it.
            body["response_format"] = {"type": "json_object", "schema": schema}
        t0 = time.perf_counter()
        data, text = self.client.post("/chat/completions", body)
        seconds = time.perf_counter() - t0
        try:
            content = data["choices"][0]["message"].get("content") or ""  # type: ignore[index]
        except (TypeError, KeyError, IndexError, AttributeError):
            content = text  # not a completion: the ladder reads it as an invalid reply and repairs or falls back
        usage = (data or {}).get("usage") or {}
        return Generation(text=content if isinstance(content, str) else str(content),
                          prompt_tokens=_int(usage.get("prompt_tokens")),
                          completion_tokens=_int(usage.get("completion_tokens")), seconds=seconds)


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


# --- the embedder -------------------------------------------------------------------------------


def _pooled(embedding: object) -> np.ndarray:
    """One text's vector; a model served without pooling answers one vector per token: their mean."""
    v = np.asarray(embedding, dtype=np.float32)
    if v.ndim == 2:
        v = v.mean(axis=0)
    if v.ndim != 1 or not v.size:
        raise ValueError("not a vector")
    return v


class OpenAIEmbedder:
    """An ``Embedder`` on a server: batches of ``batch_size`` texts, ``concurrency`` of them in flight."""

    def __init__(self, server: Server, *, batch_size: int, concurrency: int, query_prefix: str = "",
                 passage_prefix: str = "") -> None:
        self.server = server
        self.client = Client(server)
        self.batch_size = batch_size
        self.concurrency = concurrency
        self.query_prefix, self.passage_prefix = query_prefix, passage_prefix
        self.id = f"openai/{server.identity}/q={query_prefix!r}/p={passage_prefix!r}"
        self.dim = int(self._embed(["dim"]).shape[1])

    def _embed(self, texts: list[str]) -> np.ndarray:
        data, _text = self.client.post("/embeddings", {"model": self.server.model, "input": texts})
        try:
            rows = sorted(data["data"], key=lambda d: d.get("index", 0))  # type: ignore[index]
            m = np.vstack([_pooled(r["embedding"]) for r in rows]) if rows else np.zeros((0, 0), np.float32)
        except (TypeError, KeyError, ValueError, AttributeError) as exc:
            raise ModelUnavailable(f"{self.server.shown}/embeddings: the reply holds no embeddings") from exc
        if m.ndim != 2 or m.shape[0] != len(texts):
            raise ModelUnavailable(f"{self.server.shown}/embeddings: {m.shape[0] if m.ndim else 0} vectors "
                                   f"for {len(texts)} texts")
        norms = np.linalg.norm(m, axis=1, keepdims=True)
        return m / np.where(norms == 0, 1.0, norms)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        batches = [[self.passage_prefix + t for t in texts[i:i + self.batch_size]]
                   for i in range(0, len(texts), self.batch_size)]
        if not batches:
            return np.zeros((0, self.dim), np.float32)
        if self.concurrency > 1 and len(batches) > 1:
            with ThreadPoolExecutor(self.concurrency, thread_name_prefix="kenang-embed") as ex:
                parts = list(ex.map(self._embed, batches))
        else:
            parts = [self._embed(b) for b in batches]
        return np.vstack(parts)

    def embed_query(self, text: str) -> np.ndarray:
        return self._embed([self.query_prefix + text])[0]
