"""Cue phrases: what a sentence does for the day's note, in Indonesian and English.

A sentence may record a **decision** ("jadi kita pakai ZFS", "let's go with restic"),
raise an **open** item (a promise, a TODO, a question or an error still standing:
"nanti saya cek", "belum jalan", "still failing", "we'll look at it tomorrow"), or
report something **done** ("sudah beres", "works now", "fixed"), which may close an
item raised on an earlier day (``closes``).

The API (the note writer and the open-items chain build on it):

- ``cues_of(sentence, *, role="user")``: the kinds of cue a sentence carries, a subset of ``KINDS``;
- ``as_third_person(sentence, speaker, lang, *, role="user")``: first-person pronouns resolved to the
  speaker ("I'll check the snapshots" said by Dimas: "Dimas will check the snapshots");
- ``closes(item, sentence, *, share=1/3, role="user")``: whether a later sentence closes an open item (a done
  cue, and enough of the item's content words, stemmed, word by word in either language:
  ``transforms.translate.word_meanings``);
- ``content_terms(text)``: a text's stemmed content words, the measure ``closes`` shares.

The phrase tables are data, declared once in ``schemas.cues`` and compiled here once, on import.
Precision comes before recall: a cue is dropped when its words belong to a phrase that is no cue ("belum
tentu", "let's see", "I'll explain"), when its sentence is a question ("udah jalan belum?"), when a conditional
comes before it ("kalau masih error" in its clause; "kalau masih error, restart aja" for a decision or done), when a negation stands just before a done or decision cue ("belum
beres", "not fixed"), when a hedge comes before a done cue ("harusnya sudah bisa"), and, for the assistant, when
it is a promise or a proposal (an answer's "I'll explain", "let's use"). An error or a doubt followed in the
same sentence by a done cue ("tadi masih error, sekarang sudah bisa") is no longer open.

Code spans, URLs and paths are never matched and never rewritten. Pure: no I/O.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from schemas import cues as table
from schemas.lexicon import BILINGUAL, EXTRACTOR_STOPWORDS, STOPWORDS_EN, STOPWORDS_ID
from transforms import translate
from transforms.chunk import terms_of

Kind = Literal["decision", "open", "done"]
KINDS: tuple[Kind, ...] = ("decision", "open", "done")
Role = Literal["user", "assistant"]


def _alternation(fragments: Iterable[str]) -> str:
    return "|".join(f"(?:{table.fill(f)})" for f in fragments)


def _compile(fragments: Iterable[str]) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w'-])(?:{_alternation(fragments)})(?![\w'-])")


@dataclass(frozen=True)
class _Cue:
    kind: Kind
    sort: str  # decision | proposal | promise | todo | error | unresolved | done
    pattern: re.Pattern[str]


_CUES: tuple[_Cue, ...] = (
    _Cue("decision", "decision", _compile(table.DECISION)),
    _Cue("decision", "proposal", _compile(table.PROPOSAL)),
    *(_Cue("open", sort, _compile(fragments)) for sort, fragments in table.OPEN.items()),
    _Cue("done", "done", _compile(table.DONE)),
)
_NOT_CUES = _compile(table.NOT_CUES)
_NEGATED = re.compile(rf"(?:^|[\s,;:(])(?:{'|'.join(map(re.escape, table.NEGATORS))})\s+(?:\S+\s+)?$")
_NEGATED_RIGHT_BEFORE = re.compile(rf"(?:^|[\s,;:(])(?:{'|'.join(map(re.escape, table.NEGATORS))})\s*$")
_CONDITIONAL = re.compile(rf"(?<![\w'-])(?:{'|'.join(map(re.escape, table.CONDITIONALS))})(?![\w'-])")
_HEDGE = re.compile(rf"(?<![\w'-])(?:{'|'.join(map(re.escape, table.HEDGES))})(?![\w'-])")
# What is never a cue nor rewritten: code spans, URLs, paths.
_PROTECTED = re.compile(
    r"```.*?```|`[^`\n]*`|https?://\S+|www\.\S+|(?<![\w/])(?:~|\.{1,2})?/[\w.\-/]+|[A-Za-z]:\\[\w\\.\-]+",
    re.DOTALL,
)
_SENTENCE_END = re.compile(r"[.!?\n]+|$")
_CLAUSE_START = re.compile(
    r"[,;:()\u2014\u2013]|(?<![\w'-])(?:tapi|tetapi|namun|but|however|sedangkan|while)(?![\w'-])"
)
_TAG_QUESTION = re.compile(r"(?<![\w'-])(?:belum|blm|belom|ga|gak|nggak|ngga|enggak|tidak|kah|bukan)\s*$")
_FIRST_PLURAL = re.compile(r"(?<![\w'-])(?:kita|we|we'll|we're|let's)(?![\w'-])")
_STATES: frozenset[str] = frozenset({"error", "unresolved"})


def _blank(match: re.Match[str]) -> str:
    return " " * len(match.group(0))


def _normalised(sentence: str) -> str:
    """Lower case, one kind of apostrophe, code spans, URLs and the phrases that are no cue blanked (same length)."""
    text = unicodedata.normalize("NFKC", sentence).replace("\u2019", "'").replace("`", "`")
    text = _PROTECTED.sub(_blank, text).lower()
    return _NOT_CUES.sub(_blank, text)


def _sentence_of(text: str, start: int, end: int) -> str:
    """The sentence around [start, end): from the previous terminator to the next one, terminator included."""
    before = max(text.rfind(c, 0, start) for c in ".!?\n")
    after = _SENTENCE_END.search(text, end)
    stop = after.end() if after else len(text)
    return text[before + 1 : stop]


def _sentence_before(text: str, start: int) -> str:
    """What the sentence holding ``start`` says before it."""
    head = text[:start]
    return head[max(head.rfind(c) for c in ".!?\n") + 1 :]


def _clause_before(text: str, start: int) -> str:
    """What the clause holding ``start`` says before it."""
    head = _sentence_before(text, start)
    starts = [m.end() for m in _CLAUSE_START.finditer(head)]
    return head[starts[-1] :] if starts else head


def _is_question(sentence: str) -> bool:
    s = sentence.rstrip()
    return s.endswith("?") or bool(_TAG_QUESTION.search(s.rstrip(".!")))


def _matches(sentence: str, role: str) -> list[tuple[_Cue, int]]:
    """Each cue that stands in ``sentence``, with where it starts."""
    text = _normalised(sentence)
    found: list[tuple[_Cue, int]] = []
    for cue in _CUES:
        if role != "user" and cue.sort in ("promise", "proposal"):
            continue
        for m in cue.pattern.finditer(text):
            if role != "user" and cue.kind == "decision" and _FIRST_PLURAL.search(m.group(0)):
                continue  # an answer's "kita pakai"/"we'll use" walks through the steps, it settles nothing
            if _is_question(_sentence_of(text, m.start(), m.end())):
                continue
            clause = _clause_before(text, m.start())
            # a condition holds its own clause; a choice or a result after "kalau ..., " stays conditional
            if _CONDITIONAL.search(clause if cue.kind == "open" else _sentence_before(text, m.start())):
                continue
            if cue.kind != "open" and _NEGATED.search(clause) and _NEGATED_RIGHT_BEFORE.search(clause):
                continue
            if cue.kind == "done" and _HEDGE.search(clause):
                continue
            found.append((cue, m.start()))
    return found


@lru_cache(maxsize=1 << 14)  # a note's items and ``closes`` read the same sentence's cues again
def cues_of(sentence: str, *, role: str = "user") -> frozenset[Kind]:
    """The kinds of cue ``sentence`` carries, said by the user (``role="user"``) or the assistant."""
    found = _matches(sentence, role)
    last_done = max((at for cue, at in found if cue.kind == "done"), default=-1)
    kinds: set[Kind] = set()
    for cue, at in found:
        if cue.sort in _STATES and at < last_done:
            continue  # "tadi masih error, sekarang sudah bisa": the error did not stay
        kinds.add(cue.kind)
    return frozenset(kinds)


@lru_cache(maxsize=1 << 14)
def _sorts(sentence: str, role: str = "user") -> frozenset[str]:
    return frozenset(cue.sort for cue, _ in _matches(sentence, role))


# --- third person ----------------------------------------------------------------------

_THIRD_PERSON_VERBS = frozenset(
    """
    need want think know like love hate use run try plan hope see get keep feel prefer guess mean remember forget
    believe wonder agree work live own play make take buy pay check look start stop find call send back host
    store save mount boot install update upgrade replace expect suppose understand assume care miss read write
    """.split()
)
_IRREGULAR = {"have": "has", "do": "does", "go": "goes", "am": "is", "'m": "is", "'ve": "has", "'ll": "will",
              "'d": "would", "don't": "doesn't", "haven't": "hasn't", "wasn't": "wasn't", "was": "was",
              "'re": "are"}  # fmt: skip
_ADVERBS = r"(?:\w+ly|also|just|still|already|never|always|often|even|really|only|now|then|too|sometimes|usually)"


def _spellings(*words: str) -> str:
    """Each word lower case and capitalised, not in capitals: "US" is a country, "GW" a gateway."""
    return "|".join(dict.fromkeys(v for w in words for v in (w, w.capitalize())))


_EDGE_L, _EDGE_R = r"(?<![\w'/-])", r"(?![\w'/-])"  # "I/O" and "NAS-ku" are one word each
_EN_I = re.compile(
    _EDGE_L + r"(I|i)(?:(['\u2019](?:m|ve|ll|d))|(\s+(?:" + _ADVERBS + r"\s+)*)(am|have|haven't|haven\u2019t|do|"
    r"don't|don\u2019t|go|was|\w+))?" + _EDGE_R
)
_EN_OBJECT = re.compile(_EDGE_L + f"({_spellings('me', 'my', 'mine', 'myself')})" + _EDGE_R)
_EN_WE = re.compile(
    _EDGE_L + f"({_spellings('we', 'us', 'our', 'ours', 'ourselves')})"
    r"(?:(['\u2019](?:re|ve|ll|d))|\s+(are|have|were|do))?" + _EDGE_R
)
_ID_ME = re.compile(_EDGE_L + f"({_spellings('aku', 'saya', 'gue', 'gua', 'gw', 'ane', 'ku')}|AKU|SAYA)" + _EDGE_R)
_ID_WE = re.compile(_EDGE_L + f"({_spellings('kita')}|KITA)" + _EDGE_R)
_ID_CLITIC = re.compile(r"(?<![\w'-])([^\W\d_]\w*?)(-?)(ku)" + _EDGE_R, re.IGNORECASE)
_KNOWN_ID = frozenset(BILINGUAL) | STOPWORDS_ID


def _third_person_verb(verb: str) -> str:
    low = verb.lower()
    if low in _IRREGULAR:
        return _IRREGULAR[low]
    if low not in _THIRD_PERSON_VERBS:
        return verb
    if low.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    if low.endswith("y") and low[-2:-1] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def _opens(m: re.Match[str]) -> bool:
    """Whether the match opens its sentence (a lower-case replacement then takes a capital)."""
    head = m.string[: m.start()].rstrip(" \t\"'*(")
    return not head or head[-1] in ".!?\n:"


def _placed(word: str, m: re.Match[str]) -> str:
    return word[:1].upper() + word[1:] if _opens(m) else word


_CONTRACTED = {"'m": "is", "'ve": "has", "'ll": "will", "'d": "would", "'re": "are"}


def _rewrite(text: str, name: str, lang: str, role: str) -> str:
    both = f"{name} dan asisten" if lang == "id" else f"{name} and the assistant"

    def subject(m: re.Match[str]) -> str:
        pronoun, contraction, gap, verb = m.group(1), m.group(2), m.group(3), m.group(4)
        if pronoun == "i" and not contraction and lang != "en":
            return m.group(0)  # a lone lower-case i in an Indonesian sentence is no pronoun
        who = _placed(name, m)
        if contraction:
            return f"{who} {_CONTRACTED[contraction.replace(chr(0x2019), chr(39)).lower()]}"
        if verb is None:
            return who
        return f"{who}{gap}{_third_person_verb(verb.replace(chr(0x2019), chr(39)))}"

    def obj(m: re.Match[str]) -> str:
        return _placed(f"{name}'s" if m.group(1).lower() in ("my", "mine") else name, m)

    def we(m: re.Match[str]) -> str:
        pronoun, contraction, verb = m.group(1).lower(), m.group(2), m.group(3)
        if pronoun in ("our", "ours"):
            return _placed(f"{name}'s", m)
        who = _placed(both, m)
        if contraction:
            return f"{who} {_CONTRACTED[contraction.replace(chr(0x2019), chr(39)).lower()]}"
        return f"{who} {verb}" if verb else who

    def clitic(m: re.Match[str]) -> str:
        base, hyphen = m.group(1), m.group(2)
        if not hyphen and (len(base) < 3 or base.lower() not in _KNOWN_ID or m.group(0).lower() in _KNOWN_ID):
            return m.group(0)
        return f"{base} {name}"

    text = _EN_I.sub(subject, text)
    text = _EN_OBJECT.sub(obj, text)
    text = _ID_ME.sub(lambda m: _placed(name, m), text)
    text = _ID_CLITIC.sub(clitic, text)
    if role == "user":
        text = _EN_WE.sub(we, text)
        text = _ID_WE.sub(lambda m: _placed(both, m), text)
    return text


def as_third_person(sentence: str, speaker: str, lang: str, *, role: str = "user") -> str:
    """``sentence`` with the speaker's first-person pronouns replaced by ``speaker``, the rest as written.

    "we"/"kita" become the speaker and the assistant when the user (``role``) said them. Code spans, URLs and
    paths stay as they are; English verbs after "I" agree in the common cases (I'm, I've, I'll, I'd, I was).
    """
    name = " ".join(speaker.split())
    if not name:
        return sentence
    out: list[str] = []
    at = 0
    for m in _PROTECTED.finditer(sentence):
        out.append(_rewrite(sentence[at : m.start()], name, lang, role))
        out.append(m.group(0))
        at = m.end()
    out.append(_rewrite(sentence[at:], name, lang, role))
    return "".join(out)


# --- closing ---------------------------------------------------------------------------

_NOT_CONTENT: frozenset[str] = (
    frozenset(t for w in EXTRACTOR_STOPWORDS | STOPWORDS_EN | STOPWORDS_ID | table.GENERIC_WORDS for t in terms_of(w))
    | EXTRACTOR_STOPWORDS
    | table.GENERIC_WORDS
)


@lru_cache(maxsize=1 << 12)
def content_terms(text: str) -> frozenset[str]:
    """A text's content words: its stemmed keyword terms (``transforms.chunk.terms_of``) less stop words and the
    words any item has (check, coba, fix, done...)."""
    return frozenset(t for t in terms_of(text) if t not in _NOT_CONTENT and not t.isdigit())


_WORD = re.compile(r"[^\W_]+(?:['-][^\W_]+)*", re.UNICODE)


@lru_cache(maxsize=1 << 14)
def _concept(word: str) -> frozenset[str]:
    """A word's content terms with those of its equivalents in the other language (``transforms.translate``:
    "kabel" meets "cable", "dibayar" "paid") and of its Indonesian base ("dibayar" meets "bayar")."""
    out = set(content_terms(word))
    if not out:
        return frozenset()
    for meaning in translate.word_meanings(word):
        out |= content_terms(meaning)
    if word not in _KNOWN_ID:
        base = next((b for b in translate.base_words(word)[1:] if b in BILINGUAL), None)
        if base is not None:
            out |= content_terms(base)
    return frozenset(out)


def _concepts(text: str) -> dict[frozenset[str], frozenset[str]]:
    """A text's content words, each as its own terms -> its concept; a word whose terms came before counts once."""
    out: dict[frozenset[str], frozenset[str]] = {}
    for word in _WORD.findall(_PROTECTED.sub(" ", unicodedata.normalize("NFKC", text)).lower()):
        if (c := _concept(word)) and (own := content_terms(word)) not in out:
            out[own] = c
    return out


@lru_cache(maxsize=1 << 14)
def _concept_sets(text: str) -> tuple[tuple[frozenset[str], ...], frozenset[str]]:
    """A text's concepts (``_concepts``' values) and their union; cached, since a chain meets every open item
    with the same sentences."""
    values = tuple(_concepts(text).values())
    return values, frozenset().union(*values)


def _shared(item: str, sentence: str) -> tuple[int, int]:
    """How many of the item's content words the sentence meets, in its own words or across the languages, of how
    many."""
    mine = _concept_sets(item)[0]
    theirs = _concept_sets(sentence)[1]
    return sum(1 for c in mine if c & theirs), len(mine)


def closes(item: str, sentence: str, *, share: float = 1 / 3, role: str = "user") -> bool:
    """Whether ``sentence`` (said later, by ``role``) closes the open ``item``.

    It must report something done (or settle a question the item left open: "belum tahu mau pakai apa" is
    closed by "jadi pakai restic"), hold no open cue of its own, and meet enough of the item's content words,
    stemmed, in its own language or glossed into the other: two of them, or the only one an item of one or two
    has, and at least ``share`` of them. A third across days; within one conversation, where the sentence
    answers the item a few turns later, a quarter is enough ("aplikasi bank gak bisa login" is closed by
    "udah allow api bank, bisa login sekarang").
    """
    kinds = cues_of(sentence, role=role)
    if "open" in kinds:
        return False
    settles = "decision" in kinds and "unresolved" in _sorts(item)
    if "done" not in kinds and not settles:
        return False
    hits, of = _shared(item, sentence)
    if hits == 0:
        return False
    return (hits >= 2 or of <= 2) and hits >= share * of
