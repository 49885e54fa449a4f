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

A gloss is a bag of words, not a sentence: it feeds the keyword arm and one more query
embedding, never a summary or anything shown.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Iterable

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


def words_language(words: Iterable[str]) -> str | None:
    """``id`` or ``en``: whose function words these lower-case words hold more; None on a tie."""
    indonesian = english = 0
    for w in words:
        indonesian += w in STOPWORDS_ID and w not in STOPWORDS_EN
        english += w in STOPWORDS_EN and w not in STOPWORDS_ID
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


def _indonesian(word: str) -> tuple[str, ...] | None:
    if word in BILINGUAL:
        return BILINGUAL[word]
    for suffix in _SUFFIXES:  # kakiku, resepsinya
        if word.endswith(suffix) and word[: -len(suffix)] in BILINGUAL:
            return BILINGUAL[word[: -len(suffix)]]
    return None


def gloss(query: str) -> str | None:
    """The query in the other language, word by word; None when there is nothing to gloss."""
    lang = language(query)
    words = _words(query)
    out: list[str] = []
    found = False
    if lang == "id":
        for w in words:
            meanings = _indonesian(w)
            if meanings:
                out.extend(meanings[:GLOSSES])
                found = True
            elif w not in STOPWORDS_ID:
                out.append(w)
    elif lang == "en":
        reverse = _reverse()
        i = 0
        while i < len(words):
            for n in (3, 2, 1):
                phrase = " ".join(words[i:i + n])
                if len(words[i:i + n]) == n and phrase in reverse and not (n == 1 and phrase in STOPWORDS_EN):
                    out.extend(reverse[phrase][:HEADWORDS])
                    found = True
                    i += n
                    break
            else:
                if words[i] not in STOPWORDS_EN:
                    out.append(words[i])
                i += 1
    return " ".join(dict.fromkeys(out)) if found else None
