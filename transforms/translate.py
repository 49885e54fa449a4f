"""A recall query glossed into the other language, word by word (pure).

People ask their memory in Indonesian about a day they talked through in English, and the
other way round. The embedders kenang ships are multilingual, but they rank a same-language
passage on a loosely related topic above the other-language passage that answers
(``benchmarks/recall_eval.py``, kind ``cross_lingual``). So a query is also searched as its
gloss: each word replaced by its dictionary equivalents in the other language
(``schemas.lexicon.BILINGUAL``, a hand-written Indonesian-English word list), every word the
list does not know (names, numbers, hostnames, loan words like "fintech") kept as written.

- ``language(text)`` is ``id`` or ``en`` when one language's function words outnumber the
  other's, else None.
- ``gloss(query)`` is the Indonesian query in English (each word's first ``GLOSSES`` meanings),
  or the English query in Indonesian (each English phrase of up to three words that is a
  gloss, longest first, becomes the first ``HEADWORDS`` Indonesian words that have it,
  those whose first meaning it is before the others); None
  when the language is unknown or no word was found in the list.
- A word the list does not hold as written is looked up by its base: an Indonesian word
  without its affixes (``base_words``: "dijatuhin" is jatuh, "perpisahanku" pisah,
  "disuntik" suntik, "sehari-harinya" hari), an English word without its inflection
  (``english_bases``: "crashed" is crash, "weddings" wedding). The word as written always
  wins, so a listed affixed form keeps its own meaning; an Indonesian function word
  ("selama") glosses to nothing, and a hyphenated name ("nas-gudang") stays as written.

A gloss is a bag of words, not a sentence: it feeds the keyword arm and one more query
embedding, never a summary or anything shown.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from functools import lru_cache

from schemas.lexicon import BILINGUAL, STOPWORDS_EN, STOPWORDS_ID

GLOSSES = 2  # English meanings per Indonesian word
HEADWORDS = 2  # Indonesian words per English phrase
_WORD = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*", re.UNICODE)
_SUFFIXES = ("nya", "ku", "mu", "lah", "kah", "pun")


def _words(text: str) -> list[str]:
    return _WORD.findall(unicodedata.normalize("NFKC", text).lower())


def language(text: str) -> str | None:
    """``id`` or ``en``: whose function words the text uses more; None on a tie."""
    return words_language(_words(text))


_ONLY_ID = STOPWORDS_ID - STOPWORDS_EN
_ONLY_EN = STOPWORDS_EN - STOPWORDS_ID


def words_language(words: Iterable[str]) -> str | None:
    """``id`` or ``en``: whose function words these lower-case words hold more; None on a tie."""
    words = words if isinstance(words, list) else list(words)
    indonesian = sum(map(_ONLY_ID.__contains__, words))
    english = sum(map(_ONLY_EN.__contains__, words))
    if indonesian == english:
        return None
    return "id" if indonesian > english else "en"


@lru_cache(maxsize=1)
def _reverse() -> dict[str, tuple[str, ...]]:
    """English gloss -> the Indonesian words that have it: those whose first meaning it is first, then
    by the meaning's rank, then in the list's order ("pay" is bayar before gaji, whose third meaning it is)."""
    out: dict[str, list[tuple[int, int, str]]] = {}
    for n, (word, glosses) in enumerate(BILINGUAL.items()):
        for rank, g in enumerate(glosses):
            out.setdefault(g, []).append((rank, n, word))
    return {g: tuple(w for _, _, w in sorted(ws)) for g, ws in out.items()}


#: Indonesian derivational suffixes, after the particles and possessives of ``_SUFFIXES``; -in is Jakarta's -kan/-i.
_DERIVATIONAL = ("kan", "an", "in", "i")
#: Prefixes, longest first: (prefix, the letters a nasal stands for before a vowel, whether the bare rest may
#: also begin with that vowel). "memulihkan" is pulih, "menulis" tulis, "menyimpan" simpan, "nyuci" cuci; meng-
#: and peng- before a vowel are either k ("mengirim" kirim) or nothing ("mengambil" ambil); casual ng-/ny-
#: ("ngerjain" kerja).
_PREFIXES = (
    ("memper", "", True),
    ("diper", "", True),
    ("meng", "k", True),
    ("peng", "k", True),
    ("meny", "s", False),
    ("peny", "s", False),
    ("mem", "p", False),
    ("pem", "p", False),
    ("men", "t", False),
    ("pen", "t", False),
    ("ber", "", True),
    ("per", "", True),
    ("ter", "", True),
    ("nge", "", True),
    ("me", "", True),
    ("pe", "", True),
    ("be", "", True),
    ("di", "", True),
    ("ke", "", True),
    ("se", "", True),
    ("ng", "k", True),
    ("ny", "sc", False),
)
_MIN_BASE = 3
_MIN_PREFIXED = 4  # a prefix stripped from a short word mostly leaves another word ("ngrok" is not rok)
_VOWELS = frozenset("aeiou")


def base_words(word: str) -> list[str]:
    """Candidate base words of an Indonesian word, the least stripped first (the word itself first).

    Particles and possessives (-nya, -ku, ...), then one derivational suffix (-kan, -an, -in, -i), then one
    prefix (di-, ke-, ter-, ber-, per-, meN-, peN-, casual ng-/ny-, the nasal's letter restored first before a
    vowel: "menurut" is turut before urut). A base reached through a prefix keeps at least ``_MIN_PREFIXED``
    letters, any other ``_MIN_BASE``. A reduplication ("sehari-hari", "kucing-kucing": two halves with a base
    in common) gives that base; any other hyphenated word ("nas-gudang", "qemu-server") is only itself, so a
    name stays a name. A rule-based guess, not a dictionary: a caller keeps only what its word list holds.
    """
    out: dict[str, None] = {}

    def add(w: str, least: int = _MIN_BASE) -> None:
        if len(w) >= least:
            out.setdefault(w)

    add(word)
    if "-" in word:
        halves = word.split("-")
        if len(halves) == 2 and all(halves):
            first, second = (base_words(h) for h in halves)
            for b in second:  # the later half first: "sehari-harinya" is hari
                if b in first:
                    add(b)
        return list(out)
    stems = [word] + [word[: -len(s)] for s in _SUFFIXES if word.endswith(s)]
    stems += [
        stem[: -len(d)]
        for stem in list(stems)
        for d in _DERIVATIONAL
        if stem.endswith(d) and (d != "in" or len(stem) - 2 >= 5 or stem.startswith(("di", "ng", "me", "ny")))
    ]  # not desa of desain
    for stem in stems:
        add(stem)
    for stem in stems:
        for prefix, nasal, bare in _PREFIXES:
            if not stem.startswith(prefix):
                continue
            rest = stem[len(prefix) :]
            if rest[:1] in _VOWELS:
                for letter in nasal:
                    add(letter + rest, _MIN_PREFIXED)
                if bare or not nasal:
                    add(rest, _MIN_PREFIXED)
            else:
                add(rest, _MIN_PREFIXED)
    return list(out)


def english_bases(word: str) -> list[str]:
    """The word, then its likely bases without an inflection: -s, -es (after s, x, z, ch, sh), -ies, -ed and
    -ing (a dropped e restored first, then a doubled consonant undone): "injured" injure, "stopped" stop,
    "parties" party, "noted" note (before not); "-eed" words (need, feed) are left alone."""
    out: dict[str, None] = {word: None}

    def add(w: str) -> None:
        if len(w) >= _MIN_BASE:
            out.setdefault(w)

    if word.endswith("ies"):
        add(word[:-3] + "y")
    if word.endswith(("ses", "xes", "zes", "ches", "shes")):
        add(word[:-2])
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        add(word[:-1])
    for ending in ("ed", "ing"):
        if word.endswith(ending) and not word.endswith("eed"):
            stem = word[: -len(ending)]
            if ending == "ed" and stem.endswith("i"):
                add(stem[:-1] + "y")
            add(stem + "e")
            if len(stem) >= 2 and stem[-1] == stem[-2] and stem[-1] not in "aeiouls":
                add(stem[:-1])
            add(stem)
    return list(out)


@lru_cache(maxsize=1)
def _phrase_openers() -> frozenset[str]:
    """The first words of the list's glosses of two or three words: only there is a longer phrase looked up."""
    return frozenset(g.split(" ", 1)[0] for g in _reverse() if " " in g)


@lru_cache(maxsize=1 << 16)
def _english_headwords(word: str) -> tuple[str, ...]:
    """The Indonesian words for one English word (``glosses`` takes the first ``HEADWORDS``): as written, else its
    first base that is a gloss in the list ("crashed" is crash, ``english_bases``); none when neither is."""
    reverse = _reverse()
    base = next((b for b in english_bases(word) if b in reverse), None)
    return reverse[base] if base is not None else ()


@lru_cache(maxsize=1 << 16)  # words repeat: a chunk's gloss (transforms.chunk) looks up every word of the archive
def _indonesian(word: str) -> tuple[str, ...] | None:
    if word in BILINGUAL:  # a listed affixed form keeps its own meaning
        return BILINGUAL[word]
    if word in STOPWORDS_ID:  # "selama" is not lama, "sebuah" not buah: a function word glosses to nothing
        return None
    for base in base_words(word):
        if base in BILINGUAL:
            return BILINGUAL[base]
    return None


def word_meanings(word: str) -> tuple[str, ...]:
    """One word's equivalents in the other language, whichever language it is in: its English meanings as an
    Indonesian word (``base_words`` when not listed as written), then its Indonesian headwords as an English
    word (``english_bases``); empty when the list knows neither."""
    word = word.lower()
    return tuple(dict.fromkeys([*(_indonesian(word) or ()), *_english_headwords(word)]))


def gloss(query: str) -> str | None:
    """The query in the other language, word by word; None when there is nothing to gloss."""
    found = glosses(query)
    return " ".join(found) if found is not None else None


def glosses(query: str, *, kept: bool = True) -> list[str] | None:
    """What ``gloss`` joins: each distinct meaning or kept word, in order; None when there is nothing to gloss.

    ``kept=False``: the meanings alone, without the words kept as written (names, numbers, identifiers, words
    the list lacks): what a chunk's gloss adds to its keyword terms (``transforms.chunk``).
    """
    words = _words(query)
    lang = words_language(words)
    out: list[str] = []
    found = False
    if lang == "id":  # word by word, so each distinct word once (the output is distinct anyway)
        for w in dict.fromkeys(words):
            meanings = _indonesian(w)
            if meanings:
                out.extend(meanings[:GLOSSES])
                found = True
            elif kept and w not in STOPWORDS_ID:
                out.append(w)
    elif lang == "en":
        reverse = _reverse()
        openers = _phrase_openers()
        i = 0
        while i < len(words):
            w = words[i]
            if w in openers:  # a phrase of three words, then of two, before the word alone
                phrase = next(
                    (p for n in (3, 2) if i + n <= len(words) and (p := " ".join(words[i : i + n])) in reverse), None
                )
                if phrase is not None:
                    out.extend(reverse[phrase][:HEADWORDS])
                    found = True
                    i += phrase.count(" ") + 1
                    continue
            if w not in STOPWORDS_EN:
                headwords = _english_headwords(w)
                if headwords:
                    out.extend(headwords[:HEADWORDS])
                    found = True
                elif kept:
                    out.append(w)
            i += 1
    return list(dict.fromkeys(out)) if found else None
