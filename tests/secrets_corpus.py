"""The fake-secret corpus: realistic chat messages that each carry one fake secret.

Other tests plant these in transcripts to check end to end that no secret reaches a
summary, a table or the index: ``for e in load_corpus(): ... assert e.secret not in out``.
The data and its rules (every value fake, scanner-visible prefixes split) live in
``fixtures/secrets/corpus.yaml``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

import yaml

CORPUS_PATH = Path(__file__).parent / "fixtures" / "secrets" / "corpus.yaml"
PLACEHOLDER = "{secret}"


@dataclass(frozen=True, slots=True)
class SecretEntry:
    """One message: the redactor ``kind`` that must catch it, the full ``text``, the exact ``secret`` in it."""

    kind: str
    text: str
    secret: str


@cache
def load_corpus() -> tuple[SecretEntry, ...]:
    """Every entry, with list-valued secrets joined and ``{secret}`` filled in; a malformed entry raises."""
    entries = []
    for i, raw in enumerate(yaml.safe_load(CORPUS_PATH.read_text(encoding="utf-8"))):
        secret = raw["secret"]
        if isinstance(secret, list):
            secret = "".join(secret)
        template = raw["text"]
        if not isinstance(secret, str) or not secret or template.count(PLACEHOLDER) != 1:
            raise ValueError(f"{CORPUS_PATH.name} entry {i}: need a non-empty secret and exactly one {PLACEHOLDER}")
        entries.append(SecretEntry(kind=raw["kind"], text=template.replace(PLACEHOLDER, secret), secret=secret))
    return tuple(entries)
