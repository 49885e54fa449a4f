"""A model server the homelab already runs, over the OpenAI-compatible HTTP API.

Ollama, llama.cpp's ``llama-server``, vLLM, LM Studio and ``python -m llama_cpp.server``
all answer ``POST {base_url}/chat/completions`` and ``POST {base_url}/embeddings``.

- ``OpenAIModel`` is a ``transforms.summarize.TextModel``: the summarizer's whole
  ladder (validate, bound, ground, retry, fall back per field) is the in-process
  backend's code, unchanged; only where the words come from differs. The JSON schema
  goes to the server as ``structured_output`` says: ``json_schema`` (the server
  constrains the reply to it), ``json_object`` (any JSON object), or ``none``. A server
  that refuses ``json_schema`` (llama-cpp-python's own server answers it with an error
  that names ``response_format``) is asked again with ``json_object``; once that
  answers, the model sends ``json_object`` for the rest of the run and says so in one
  log line.
- ``OpenAIEmbedder`` is a ``transforms.recall.Embedder``; its batches may be in
  flight ``concurrency`` at a time, and it learns the vector size from the server.
- **Transient errors** (no connection, a timeout, a reply cut short, 429, 5xx, a 200
  that is no API answer) are retried with a doubling back-off (a 429's
  ``Retry-After`` is honoured, capped). When the attempts run out, the server is asked
  for its ``/models``: if it answers as an API, it is this request it fails on, and
  only its day fails (``ModelRefused``, retried the next night after the others);
  otherwise the server counts as unavailable (``ModelUnavailable``): the summarize and
  index stages leave their remaining days waiting with the reason, and the night goes
  on and ends. A 401, 403 or 404 (a wrong key, model or path) is unavailable at once:
  retrying will not change it. Any other 4xx fails the one day (``ModelRefused``).
  A reply that refuses the request's ``response_format`` is not retried either: the same
  request gets the same refusal.
  Queries (recall, the MCP server) do not retry and wait at most ``QUERY_TIMEOUT_S``:
  a person is waiting, and keyword recall still answers.
- **Identity.** ``shown_url`` is the base URL without credentials or query (and with
  anything that reads like a token redacted); a summary's ``generator.model`` is
  ``<model id>@<shown_url>`` and its ``model_sha256`` the sha256 of that string, so a
  summary says what wrote it. The embedder's id is ``openai/<model id>`` and its
  prefixes: the same model served from another host or port does not re-embed the
  index (a tag that now names other weights needs ``kenang backfill --reindex``).
- **Reasons.** A refusal's reason says what failed first (``HTTP 400 at <url>``), then
  which key of kenang.yaml to change, and only then quotes the server: a reason cut for
  a table still says what to do.
- The API key comes from the environment variable ``api_key_env`` names, never from
  kenang.yaml.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import numpy as np

from flows.store import clock
from transforms.errors import ConfigError, ModelRefused, ModelUnavailable
from transforms.redact import redact
from transforms.summarize import Generation

#: Back-off before the n-th retry: BACKOFF_S * 2**n, at most MAX_WAIT_S (a Retry-After too).
BACKOFF_S = 1.0
MAX_WAIT_S = 30.0
#: A query's embedding (recall, the MCP server): one attempt, at most this long.
QUERY_TIMEOUT_S = 10.0

log = logging.getLogger("kenang")


class Refused(ModelRefused):
    """A server's refusal in parts, so a caller can put what to change before what the server said.

    ``form``: the server refused the request's ``response_format`` (its reply names it).
    """

    def __init__(self, cause: str, where: str, said: str = "", *, form: bool = False) -> None:
        super().__init__(f"{cause} at {where}" + (f"; it said: {said}" if said else ""))
        self.cause, self.where, self.said, self.form = cause, where, said, form


def shown_url(base_url: str) -> str:
    """The base URL without user, password, query or fragment, a token in its path redacted: what may be shown."""
    try:
        parts = urlsplit(base_url.strip())
        host = parts.hostname or ""
        if ":" in host:
            host = f"[{host}]"  # IPv6
        if parts.port:
            host = f"{host}:{parts.port}"
    except ValueError:
        return "(an unreadable URL)"
    return redact(urlunsplit((parts.scheme, host, parts.path.rstrip("/"), "", ""))).text


@dataclass(frozen=True)
class Server:
    base_url: str = field(repr=False)  # may hold a user and password
    model: str
    api_key: str | None = field(repr=False)
    timeout_s: float
    retries: int = 3

    @property
    def shown(self) -> str:
        return shown_url(self.base_url)

    @property
    def identity(self) -> str:
        return f"{self.model}@{self.shown}"


def server_of(section: Any, what: str, *, query: bool = False) -> Server:
    """The server a ``summarizer`` or ``embedder`` section names; ConfigError when a key is missing.

    ``query``: for one person's query, one attempt of at most ``QUERY_TIMEOUT_S``. An
    ``api_key_env`` that is not set makes the server unavailable (its days wait, the
    report says why), not the night fail.
    """
    if not section.base_url:
        raise ConfigError(f"{what}.backend is openai but {what}.base_url is not set (e.g. http://gpu-box:11434/v1)")
    if not section.model:
        raise ConfigError(f"{what}.backend is openai but {what}.model is not set (the server's model id)")
    key = None
    if section.api_key_env:
        key = os.environ.get(section.api_key_env)
        if not key:
            raise ModelUnavailable(
                f"{what}.api_key_env names {section.api_key_env}, which is not set in this "
                "process's environment (the worker's, for a deployment)"
            )
    if query:
        return Server(
            section.base_url.rstrip("/"), section.model, key, min(float(section.timeout_s), QUERY_TIMEOUT_S), retries=0
        )
    return Server(section.base_url.rstrip("/"), section.model, key, float(section.timeout_s))


class Client:
    """JSON over HTTP to one server, with the retries above; thread-safe."""

    def __init__(self, server: Server) -> None:
        import httpx

        self.server = server
        headers = {"Authorization": f"Bearer {server.api_key}"} if server.api_key else {}
        self._http = httpx.Client(base_url=server.base_url, timeout=server.timeout_s, headers=headers)
        self._httpx = httpx

    def post(self, path: str, body: dict, answers: str, *, form: Callable[[int, str], bool] | None = None) -> dict:
        """The reply's JSON object, which must hold ``answers`` (``choices``, ``data``); see the module docstring.

        ``form(status, text)``: whether an error reply refuses the request's form (its ``response_format``):
        raised at once as a ``Refused`` with ``form`` set, never retried.
        """
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
                if r.status_code >= 400 and form is not None and form(r.status_code, text):
                    raise Refused(f"HTTP {r.status_code}", f"{self.server.shown}{path}", _said(text), form=True)
                if r.status_code in (401, 403, 404):
                    raise ModelUnavailable(
                        f"{self.server.shown}{path}: HTTP {r.status_code} ({_said(text)}); "
                        "check base_url, model and the API key"
                    )
                if r.status_code == 429 or r.status_code >= 500:
                    why = f"HTTP {r.status_code} ({_said(text)})"
                    if r.status_code == 429:
                        wait = min(MAX_WAIT_S, _retry_after(r.headers.get("retry-after"), wait))
                elif r.status_code >= 400:
                    raise Refused(f"HTTP {r.status_code}", f"{self.server.shown}{path}", _said(text))
                else:
                    data = _json_object(r)
                    if data is not None and answers in data:
                        return data
                    why = f"HTTP {r.status_code} but no API answer ({_said(text)})"
            if attempt < self.server.retries:
                clock.sleep(wait)
        if self.retries_tried() and self._answers_as_api():
            raise Refused(
                f"the server answers, but failed on this request {self.server.retries + 1} times",
                f"{self.server.shown}{path}",
                why,
            )
        raise ModelUnavailable(f"{self.server.shown}: {why} ({self.server.retries + 1} attempts)")

    def retries_tried(self) -> bool:
        return self.server.retries > 0  # a query (one attempt) does not probe: a person is waiting

    def _answers_as_api(self) -> bool:
        """Whether ``GET /models`` answers as an OpenAI-compatible API does (a JSON object with ``data``)."""
        try:
            r = self._http.get("/models", timeout=min(self.server.timeout_s, 10.0))
        except Exception:  # noqa: BLE001 - not answering is the answer
            return False
        data = _json_object(r) if r.status_code == 200 else None
        return data is not None and isinstance(data.get("data"), list)

    def listed_models(self, timeout_s: float) -> list[str] | None:
        """The model ids ``GET /models`` lists; None when it does not answer as an OpenAI-compatible API."""
        try:
            r = self._http.get("/models", timeout=min(self.server.timeout_s, timeout_s))
        except Exception:  # noqa: BLE001 - not answering is the answer
            return None
        data = _json_object(r) if r.status_code == 200 else None
        if data is None or not isinstance(data.get("data"), list):
            return None
        return [m["id"] for m in data["data"] if isinstance(m, dict) and isinstance(m.get("id"), str)]

    def raw_post(self, url: str, body: dict):
        """One POST to an absolute URL of the same server, without retries (the tokenizer probe)."""
        return self._http.post(url, json=body, timeout=min(self.server.timeout_s, 30.0))

    def close(self) -> None:
        self._http.close()


def _json_object(r) -> dict | None:
    try:
        data = r.json()
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


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
        self.structured_output = structured_output  # as configured
        self.sent = structured_output  # as sent: json_schema becomes json_object once the server refuses it
        self._switch = threading.Lock()  # days in flight share the model: one of them switches and says so
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
        root = self.server.base_url.removesuffix("/v1")  # the tokenizers are served beside the API, not in it
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
        body: dict[str, Any] = {
            "model": self.server.model,
            "messages": messages,
            "temperature": temperature,
            "max_tokens": max_tokens,
            "seed": self.seed,
            "stream": False,
        }
        sent = self.sent
        t0 = time.perf_counter()
        try:
            data = self._complete(body, schema, sent)
        except Refused as exc:
            if not (exc.form and sent == "json_schema"):
                raise ModelRefused(self._reason(exc, sent)) from exc
            try:
                data = self._complete(body, schema, "json_object")
            except Refused as again:
                raise ModelRefused(self._reason(again, "json_object", also=again.form)) from again
            self._fall_back(exc)
        seconds = time.perf_counter() - t0
        try:
            content = data["choices"][0]["message"].get("content") or ""
        except (TypeError, KeyError, IndexError, AttributeError):
            content = ""  # a completion with no message: the ladder reads it as an empty, invalid reply
        usage = data.get("usage") or {}
        if not isinstance(usage, dict):
            usage = {}
        return Generation(
            text=content if isinstance(content, str) else str(content),
            prompt_tokens=_int(usage.get("prompt_tokens")),
            completion_tokens=_int(usage.get("completion_tokens")),
            seconds=seconds,
        )

    def _complete(self, body: dict[str, Any], schema: dict, sent: str) -> dict:
        """One chat completion with the schema sent as ``sent`` says (``json_schema``, ``json_object``, ``none``)."""
        body = dict(body)
        if sent == "json_schema":
            # Strict mode (OpenAI's rules) wants every object closed.
            closed = {**schema, "additionalProperties": False}
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "day_summary", "schema": closed, "strict": True},
            }
        elif sent == "json_object":
            # llama.cpp's servers (llama-server, llama_cpp.server) constrain a json_object reply to a schema sent
            # with it; the others take json_object alone and ignore it.
            body["response_format"] = {"type": "json_object", "schema": schema}
        form = _refuses_form if sent != "none" else None
        return self.client.post("/chat/completions", body, "choices", form=form)

    def _fall_back(self, exc: Refused) -> None:
        """From now on this model sends json_object; said once per model, so once per run."""
        with self._switch:
            if self.sent != "json_schema":
                return
            self.sent = "json_object"
        log.warning(
            "summarizer: %s refused structured_output json_schema (%s); sending json_object for the rest of "
            "this run. Set summarizer.structured_output: json_object in kenang.yaml to skip the first try",
            self.server.shown,
            exc.cause,
        )

    def _reason(self, exc: Refused, sent: str, *, also: bool = False) -> str:
        """A day's failure reason: the cause and where, the key to change, then what the server said."""
        if exc.form:
            what = "json_schema, and json_object too" if also else sent
            todo = "set summarizer.structured_output: none in kenang.yaml"
            cause = f"the model server refused structured_output {what} ({exc.cause} at {exc.where})"
        else:
            todo = "check summarizer.model, and that summarizer.n_ctx is at most the server's context size" + {
                "json_schema": ", or set summarizer.structured_output: json_object",
                "json_object": ", or set summarizer.structured_output: none",
            }.get(sent, "")
            cause = f"the model server refused this day: {exc.cause} at {exc.where}"
        return f"{cause}; {todo}" + (f"; it said: {exc.said}" if exc.said else "")


#: What a server's error reply says when it is the response_format it refuses (llama_cpp.server answers a json_schema
#: with a 500 whose message names it; others answer 400 or 422 naming response_format or the schema).
_FORM_WORDS = ("response_format", "json_schema", "json_object")


def _refuses_form(status: int, text: str) -> bool:
    """Whether an error reply refuses the request's response_format."""
    if status in (401, 403, 404, 429):
        return False
    return any(w in text for w in _FORM_WORDS)


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


# --- the embedder -------------------------------------------------------------------------------


def embedder_id(model: str, query_prefix: str, passage_prefix: str) -> str:
    """What chunks record of the embedder: the model and its prefixes (not the host: moving the server re-embeds nothing)."""
    return f"openai/{model}/q={query_prefix!r}/p={passage_prefix!r}"


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

    def __init__(
        self, server: Server, *, batch_size: int, concurrency: int, query_prefix: str = "", passage_prefix: str = ""
    ) -> None:
        self.server = server
        self.client = Client(server)
        self.batch_size = batch_size
        self.concurrency = concurrency
        self.query_prefix, self.passage_prefix = query_prefix, passage_prefix
        self.id = embedder_id(server.model, query_prefix, passage_prefix)
        self.dim = int(self._embed(["dim"]).shape[1])

    def _embed(self, texts: list[str]) -> np.ndarray:
        data = self.client.post("/embeddings", {"model": self.server.model, "input": texts}, "data")
        try:
            rows = sorted(data["data"], key=lambda d: d.get("index", 0))
            m = np.vstack([_pooled(r["embedding"]) for r in rows]) if rows else np.zeros((0, 0), np.float32)
        except (TypeError, KeyError, ValueError, AttributeError) as exc:
            raise ModelUnavailable(f"{self.server.shown}/embeddings: the reply holds no embeddings") from exc
        if m.ndim != 2 or m.shape[0] != len(texts):
            raise ModelUnavailable(
                f"{self.server.shown}/embeddings: {m.shape[0] if m.ndim else 0} vectors for {len(texts)} texts"
            )
        norms = np.linalg.norm(m, axis=1, keepdims=True)
        return m / np.where(norms == 0, 1.0, norms)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        batches = [
            [self.passage_prefix + t for t in texts[i : i + self.batch_size]]
            for i in range(0, len(texts), self.batch_size)
        ]
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
