"""Deterministic stand-ins for the language model (llm's conftest style)."""

from __future__ import annotations

import json
from collections import deque

from transforms.summarize import Generation


class QueueModel:
    """Replies with queued texts in order; records every prompt it was given."""

    name = "fake-queue.gguf"
    sha256 = "0" * 64

    def __init__(self, replies=(), *, n_ctx: int = 4096, default: str | None = None, fail: Exception | None = None):
        self.replies = deque(replies)
        self.n_ctx = n_ctx
        self.default = default
        self.fail = fail
        self.prompts: list[list[dict]] = []
        self.temperatures: list[float] = []

    def count_tokens(self, text: str) -> int:
        return max(1, len(text) // 4)

    def generate(self, messages, *, schema, temperature, max_tokens) -> Generation:
        self.prompts.append(messages)
        self.temperatures.append(temperature)
        if self.fail is not None:
            raise self.fail
        text = self.replies.popleft() if self.replies else self.default
        if text is None:
            raise AssertionError("the fake model ran out of replies")
        return Generation(text, self.count_tokens(str(messages)), self.count_tokens(text), 0.01)


def reply(**fields) -> str:
    """A well-formed model reply; override any field."""
    base = {
        "summary": "Gading set the Proxmox boot order so the PostgreSQL VM starts first, with a delay of 30 seconds.",
        "title": "Proxmox boot order for PostgreSQL",
        "people": ["Gading"],
        "projects": [],
        "tags": ["proxmox-boot-order"],
        "technologies": ["Proxmox", "PostgreSQL"],
        "importance": 2,
        "mood": "productive",
    }
    base.update(fields)
    return json.dumps(base)


class EchoModel(QueueModel):
    """An adversarial model: puts the whole prompt it saw into every field."""

    name = "fake-echo.gguf"

    def generate(self, messages, *, schema, temperature, max_tokens) -> Generation:
        seen = messages[-1]["content"]
        words = seen.split()
        text = json.dumps(
            {
                "summary": seen[:1000] + ". It was a day. It ended.",
                "people": words[:12],
                "projects": words[12:20],
                "tags": words[20:30],
                "technologies": words[30:46],
                "importance": 5,
                "mood": "neutral",
            }
        )
        self.prompts.append(messages)
        return Generation(text, 10, 10, 0.0)


class AxisEmbedder:
    """A deterministic embedder: one axis per listed word, counts, L2-normalised.

    Synonyms across languages share an axis (``sahur``/``pre-dawn``), so tests can model
    cross-lingual recall and compute every cosine by hand. A text with none of the
    words embeds as the zero vector (cosine 0 with everything).
    """

    AXES = (("proxmox",), ("boot",), ("sahur", "pre-dawn"), ("rina",), ("backup", "cadangan"), ("nas",))

    def __init__(self, eid: str = "fake-axis@1"):
        self.id = eid
        self.dim = len(self.AXES)
        self.passages: list[str] = []
        self.queries: list[str] = []

    def _vec(self, text: str):
        import numpy as np

        words = text.lower().replace("?", " ").replace(".", " ").replace(",", " ").split()
        v = np.array([sum(words.count(w) for w in axis) for axis in self.AXES], dtype=np.float32)
        n = np.linalg.norm(v)
        return v / n if n else v

    def embed_passages(self, texts):
        import numpy as np

        self.passages.extend(texts)
        return np.vstack([self._vec(t) for t in texts]) if texts else np.zeros((0, self.dim), np.float32)

    def embed_query(self, text):
        self.queries.append(text)
        return self._vec(text)


class HashEmbedder:
    """A deterministic embedder with meaning enough to rank by: each word's character trigrams hashed onto
    ``dim`` axes, L2-normalised (two texts that share words, or parts of words, have a cosine above 0).

    Fast, so a test can index a whole evaluation archive; every vector of a text with a word is distinct.
    """

    def __init__(self, eid: str = "fake-hash@1", dim: int = 384):
        self.id = eid
        self.dim = dim

    def _vec(self, text: str):
        import zlib

        import numpy as np

        grams = [w[i : i + 3] for w in f" {text.lower()} ".split() for i in range(max(1, len(w) - 2))]
        v = np.bincount([zlib.crc32(g.encode()) % self.dim for g in grams], minlength=self.dim).astype(np.float32)
        n = np.linalg.norm(v)
        return v / n if n else v

    def embed_passages(self, texts):
        import numpy as np

        return np.vstack([self._vec(t) for t in texts]) if texts else np.zeros((0, self.dim), np.float32)

    def embed_query(self, text):
        return self._vec(text)


def fails_on_odd(x: int) -> int:
    """For tests of ``flows.stages.pool``: a pure function that raises on odd numbers (workers import it by name)."""
    if x % 2:
        raise ValueError(f"odd: {x}")
    return x * x
