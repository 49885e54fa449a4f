"""The vocabulary of the extractors and of keyword search, shipped as data files under ``schemas/data/``.

``technologies.yaml`` is the gazetteer: canonical name -> the aliases that name it.
``lexicon.yaml`` holds the stop words, the words per mood, the markers of an
important day, the signals of a day (problems, deadlines, relief, thanks), the
negations that undo them, and the placeholders importers write instead of content. ``bilingual_id_en.tsv`` is an Indonesian -> English word list for glossing a
recall query into the other language (``transforms.translate``). Both are read once, on import, with ``importlib.resources`` and
``yaml.safe_load``, and exposed as plain Python values (treat them as read-only); nothing
else in kenang opens them. ``transforms.extract`` decides how the words are matched.

Stop words are declared here once, one list per language (``STOPWORDS_ID``,
``STOPWORDS_EN``). Each word is in a part that names its uses, and each use takes its
subset: ``EXTRACTOR_STOPWORDS`` (tags, names, summaries: ``transforms.extract`` and
``transforms.summarize``) and ``SEARCH_STOPWORDS`` (keyword-search terms:
``transforms.chunk``). The subsets stay apart because their union changes results
(the keyword terms of 610 of the demo's 674 messages).

Invariants (checked here, so a bad edit fails on import, not at 02:30):

- every alias, stopword, mood word and marker is a string (YAML reads an unquoted
  yes/no/on/off as a boolean), stripped, lower-case and non-empty;
- every technology has at least one alias, and no alias names two technologies;
- a stop word sits in one part (both, extractors, search) of its language;
- every mood key is one of ``schemas.frontmatter.MOODS`` other than ``neutral``;
- the signals are exactly the kinds of ``SIGNAL_KINDS``, and no phrase is in two kinds;
- every word-list line is ``word<TAB>gloss|gloss...``, the word one lower-case token that no
  other line has, each gloss lower-case and non-empty.
"""

from __future__ import annotations

import re
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
        if not isinstance(v, str):
            raise ValueError(f"{where}: {v!r} is not a string; quote it")
        word = v.strip().lower()
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


#: The kinds of signal ``lexicon.yaml`` signals declares, problems first (``transforms.extract.day_signals``).
SIGNAL_KINDS: tuple[str, ...] = ("failure", "data_loss", "incident", "deadline", "relief", "thanks")


def _signals(data: dict) -> dict[str, tuple[str, ...]]:
    """Kind -> phrases; every kind of ``SIGNAL_KINDS`` present, no phrase in two kinds."""
    if not isinstance(data, dict) or set(data) != set(SIGNAL_KINDS):
        got = sorted(data) if isinstance(data, dict) else type(data).__name__
        raise ValueError(f"lexicon.yaml signals: expected the kinds {', '.join(SIGNAL_KINDS)}, got {got}")
    out = {k: _words(data[k], f"lexicon.yaml signals.{k}") for k in SIGNAL_KINDS}
    owner: dict[str, str] = {}
    for kind, phrases in out.items():
        for p in phrases:
            if p in owner:
                raise ValueError(f"lexicon.yaml signals: {p!r} is in both {owner[p]} and {kind}")
            owner[p] = kind
    return out


def _moods(data: dict) -> dict[str, tuple[str, ...]]:
    unknown = set(data) - (set(MOODS) - {"neutral"})
    if unknown:
        raise ValueError(f"lexicon.yaml moods: not a mood of schemas.frontmatter.MOODS: {sorted(unknown)}")
    return {m: _words(data[m], f"lexicon.yaml moods.{m}") for m in MOODS if m in data}


_STOPWORD_PARTS = ("both", "extractors", "search")


def _stopwords(data: dict) -> dict[str, dict[str, frozenset[str]]]:
    """Language -> part -> words; a word sits in one part of its language."""
    if set(data) != {"id", "en"}:
        raise ValueError(f"lexicon.yaml stopwords: expected the languages id and en, got {sorted(data)}")
    out: dict[str, dict[str, frozenset[str]]] = {}
    for lang, parts in data.items():
        if not isinstance(parts, dict) or set(parts) != set(_STOPWORD_PARTS):
            raise ValueError(f"lexicon.yaml stopwords.{lang}: expected the parts {', '.join(_STOPWORD_PARTS)}")
        out[lang] = {p: frozenset(_words(parts[p], f"lexicon.yaml stopwords.{lang}.{p}")) for p in _STOPWORD_PARTS}
        seen: set[str] = set()
        for p in _STOPWORD_PARTS:
            if twice := seen & out[lang][p]:
                raise ValueError(f"lexicon.yaml stopwords.{lang}: {sorted(twice)} in two parts")
            seen |= out[lang][p]
    return out


def _bilingual(name: str) -> dict[str, tuple[str, ...]]:
    """Indonesian word -> its English glosses, most common first."""
    out: dict[str, tuple[str, ...]] = {}
    text = files(__package__).joinpath("data", name).read_text(encoding="utf-8")
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        word, sep, rest = line.partition("\t")
        glosses = tuple(g.strip() for g in rest.split("|"))
        if (
            not sep
            or "\t" in rest
            or not word
            or word != word.strip().lower()
            or " " in word
            or not all(g and g == g.lower() for g in glosses)
        ):
            raise ValueError(f"schemas/data/{name}:{n}: expected 'word<TAB>gloss|gloss', lower-case: {line!r}")
        if word in out:
            raise ValueError(f"schemas/data/{name}:{n}: {word!r} is listed twice")
        out[word] = tuple(dict.fromkeys(" ".join(g.split()) for g in glosses))
    return out


def _uses(parts: dict[str, dict[str, frozenset[str]]], *names: str) -> frozenset[str]:
    return frozenset().union(*(words for lang in parts.values() for p, words in lang.items() if p in names))


_LEXICON = _load_yaml("lexicon.yaml")
_STOPWORDS = _stopwords(_LEXICON["stopwords"])

#: Canonical technology name -> its aliases (lower-case), in the file's order.
TECHNOLOGIES: dict[str, tuple[str, ...]] = _technologies(_load_yaml("technologies.yaml"))
#: Every stop word of a language, whichever use drops it.
STOPWORDS_ID: frozenset[str] = frozenset().union(*_STOPWORDS["id"].values())
STOPWORDS_EN: frozenset[str] = frozenset().union(*_STOPWORDS["en"].values())
#: Words that never make a tag, a name or a summary's key words, in either language.
EXTRACTOR_STOPWORDS: frozenset[str] = _uses(_STOPWORDS, "both", "extractors")
#: Words left out of keyword-search terms (BM25), in either language.
SEARCH_STOPWORDS: frozenset[str] = _uses(_STOPWORDS, "both", "search")
#: Mood -> words and phrases, keyed in ``MOODS`` order.
MOOD_WORDS: dict[str, tuple[str, ...]] = _moods(_LEXICON["moods"])
IMPORTANCE_MARKERS: tuple[str, ...] = _words(_LEXICON["importance_markers"], "lexicon.yaml importance_markers")
#: Signal kind (``SIGNAL_KINDS``) -> phrases: problems, deadlines, relief and thanks, in both languages.
SIGNALS: dict[str, tuple[str, ...]] = _signals(_LEXICON["signals"])
#: Words that undo a signal or mood word right after them ("no known data errors", "nggak capek").
NEGATIONS: frozenset[str] = frozenset(_words(_LEXICON["negations"], "lexicon.yaml negations"))
#: What a question asks beside a time when it asks only what happened then ("what did I do", "ngapain").
WHAT_HAPPENED: tuple[str, ...] = _words(_LEXICON["what_happened"], "lexicon.yaml what_happened")
#: What importers write in brackets instead of content ("empty message" for ``[empty message]``), lower-case.
PLACEHOLDERS: tuple[str, ...] = _words(_LEXICON["placeholders"], "lexicon.yaml placeholders")
#: A placeholder as written in a message: one of ``PLACEHOLDERS`` in brackets, maybe with a detail after a
#: colon or space (``[attachment: scan.pdf]``, ``[tool_use Bash]``), or any bracketed snake_case word
#: (``[tether_quote]``); never a markdown link's text (``[image](https://...)``) or a wiki link.
PLACEHOLDER_RE: re.Pattern[str] = re.compile(
    r"(?<!\[)\[(?:(?:"
    + "|".join(re.escape(p).replace(r"\ ", r"[ _]") for p in sorted(PLACEHOLDERS, key=len, reverse=True))
    + r")(?:[:\s][^\]\n]{0,200})?|[a-z]+(?:_[a-z]+)+)\](?![(\]])",
    re.IGNORECASE,
)
#: A placeholder written bare, with no detail (``[empty message]``, ``[image]``): a message of nothing but these says
#: nothing. ``[attachment: scan.pdf]`` names a file and ``[tool_use Bash] {...}`` holds a call, so neither is bare.
BARE_PLACEHOLDER_RE: re.Pattern[str] = re.compile(
    r"\[(?:" + "|".join(re.escape(p).replace(r"\ ", r"[ _]") for p in PLACEHOLDERS) + r")\]", re.IGNORECASE
)

# A placeholder of two words or more ("empty message", "tool call") reads as one even without its
# brackets or with other separators ("empty-message"); one word ("image") only in brackets.
_PLACEHOLDER_KEYS = frozenset(re.sub(r"[\s._-]+", "", p) for p in PLACEHOLDERS if re.search(r"[\s_]", p))


def is_placeholder(item: str) -> bool:
    """Whether a tag, person or project (an extractor's or a model's) is an importer's placeholder.

    ``[empty message]``, ``[image]``, ``[attachment: scan.pdf]`` and any bracketed
    snake_case word are; so is a placeholder of two words or more written bare, in any
    case or with any separators (``empty message``, ``empty-message``, ``Tool call``).
    """
    text = item.strip()
    if PLACEHOLDER_RE.fullmatch(text.rstrip(".,;:")):
        return True
    return re.sub(r"[\s._-]+", "", text.strip("[]").lower()) in _PLACEHOLDER_KEYS


def says_something(text: str) -> bool:
    """Whether a message holds anything but blanks and bare placeholders (``BARE_PLACEHOLDER_RE``): an export's
    ``[empty message]`` says nothing, to a note or to recall."""
    return bool(text.strip()) and ("[" not in text or bool(BARE_PLACEHOLDER_RE.sub(" ", text).strip()))


#: Capitalised words that recur mid-sentence but name no person (places, assistants, brands), lower-case.
NOT_PEOPLE: frozenset[str] = frozenset(_words(_LEXICON["not_people"], "lexicon.yaml not_people"))
#: Technology aliases that are everyday words too: in lower case, counted only beside code or another technology.
EVERYDAY_TECHNOLOGY_WORDS: frozenset[str] = frozenset(
    _words(_LEXICON["everyday_technology_words"], "lexicon.yaml everyday_technology_words")
)
if _unknown := sorted(EVERYDAY_TECHNOLOGY_WORDS - {a for v in TECHNOLOGIES.values() for a in v}):
    raise ValueError(f"lexicon.yaml everyday_technology_words: not an alias in technologies.yaml: {_unknown}")
#: Indonesian word -> its English glosses, most common first (``transforms.translate``).
BILINGUAL: dict[str, tuple[str, ...]] = _bilingual("bilingual_id_en.tsv")
