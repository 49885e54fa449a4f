"""Word lists kenang ships as data files under ``schemas/data/``.

``BIP39_ENGLISH`` is the 2048-word BIP39 English list that wallet seed phrases are
drawn from; ``transforms.redact`` uses it to spot a pasted mnemonic. The file's first
line is a ``#`` comment naming its source and license; every other line is one word.
"""

from __future__ import annotations

from importlib.resources import files


def _load_words(name: str) -> frozenset[str]:
    text = files(__package__).joinpath("data", name).read_text(encoding="utf-8")
    return frozenset(w.strip() for w in text.splitlines() if w.strip() and not w.startswith("#"))


BIP39_ENGLISH: frozenset[str] = _load_words("bip39_english.txt")
