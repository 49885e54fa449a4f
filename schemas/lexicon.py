"""The vocabulary of the deterministic extractors, shipped as data files under ``schemas/data/``.

``technologies.yaml`` is the gazetteer: canonical name -> the aliases that name it.
``lexicon.yaml`` holds the bilingual stopwords, the words per mood and the markers of
an important day. Both are read once, on import, with ``importlib.resources`` and
``yaml.safe_load``, and exposed as plain Python values (treat them as read-only); nothing
else in kenang opens them. ``transforms.extract`` decides how the words are matched.

Invariants (checked here, so a bad edit fails on import, not at 02:30):

- every alias, stopword, mood word and marker is stripped, lower-case and non-empty;
- every technology has at least one alias, and no alias names two technologies;
- every mood key is one of ``schemas.frontmatter.MOODS`` other than ``neutral``.
"""

from __future__ import annotations

from importlib.resources import files
import yaml

from schemas.frontmatter import MOODS


def _load_yaml(name: str) -> dict:
    text = files(__package__).joinpath("data", name).read_text(encoding="utf-8")
    data = yaml.safe_load(text)
    if not isinstance(data, dict):
        raise ValueError(f"schemas/data/{name}: expected a mapping at the top level")
    return data


def _words(values: object, where: str) -> tuple[str, ...]:
    """Stripped lower-case entries in their order, first copy kept."""
    if not isinstance(values, list):
        raise ValueError(f"{where}: expected a list, got {type(values).__name__}")
    out: list[str] = []
    for v in values:
        word = str(v).strip().lower()
        if not word:
            raise ValueError(f"{where}: empty entry")
        if word not in out:
            out.append(word)
    return tuple(out)


def _technologies(data: dict) -> dict[str, tuple[str, ...]]:
    out: dict[str, tuple[str, ...]] = {}
    owner: dict[str, str] = {}
    for name, aliases in data.items():
        name = str(name).strip()
        words = _words(aliases, f"technologies.yaml {name}")
        if not words:
            raise ValueError(f"technologies.yaml {name}: needs at least one alias")
        for w in words:
            if w in owner:
                raise ValueError(f"technologies.yaml: alias {w!r} names both {owner[w]} and {name}")
            owner[w] = name
        out[name] = words
    return out


def _moods(data: dict) -> dict[str, tuple[str, ...]]:
    unknown = set(data) - (set(MOODS) - {"neutral"})
    if unknown:
        raise ValueError(f"lexicon.yaml moods: not a mood of schemas.frontmatter.MOODS: {sorted(unknown)}")
    return {m: _words(data[m], f"lexicon.yaml moods.{m}") for m in MOODS if m in data}


_LEXICON = _load_yaml("lexicon.yaml")

#: Canonical technology name -> its aliases (lower-case), in the file's order.
TECHNOLOGIES: dict[str, tuple[str, ...]] = _technologies(_load_yaml("technologies.yaml"))
STOPWORDS_ID: frozenset[str] = frozenset(_words(_LEXICON["stopwords"]["id"], "lexicon.yaml stopwords.id"))
STOPWORDS_EN: frozenset[str] = frozenset(_words(_LEXICON["stopwords"]["en"], "lexicon.yaml stopwords.en"))
STOPWORDS: frozenset[str] = STOPWORDS_ID | STOPWORDS_EN
#: Mood -> words and phrases, keyed in ``MOODS`` order.
MOOD_WORDS: dict[str, tuple[str, ...]] = _moods(_LEXICON["moods"])
IMPORTANCE_MARKERS: tuple[str, ...] = _words(_LEXICON["importance_markers"], "lexicon.yaml importance_markers")
