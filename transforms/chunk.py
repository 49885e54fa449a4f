"""Cut a day into recall chunks, and the keyword terms of any text.

Three sources feed the recall index, all already redacted:

- ``transcript``: each user turn with the replies up to the next user turn (a *pair*,
  ``GRANULARITY``), so one exchange inside a long conversation is a chunk of its own
  rather than a third of a window about other things. A pair longer than
  ``MAX_TOKENS`` is cut into windows of whole turns, about ``TARGET_TOKENS`` tokens
  each, each window repeating the previous window's last turn so an exchange that
  straddles a cut is found whole; a single turn longer than the window is split at
  line, then sentence, then word boundaries. (``GRANULARITY = "window"`` cuts whole
  sessions that way, as chunker 2 did; ``"both"`` keeps both: the benchmarks measure
  all three.)
- ``summary``: the day's summary text with its people, projects, tags and
  technologies.
- ``index``: the day's line in MEMORY_INDEX.md.
- ``facts``: what the user said of themselves in a session (sentences of the user's
  turns in the first person: "I went to...", "saya pindah ke..."), gathered per
  session: short keys that a long conversation buries.

``summary``, ``index`` and ``facts`` are the day's *keys*: recall weighs a day's best
key apart from its best transcript chunk (``transforms.recall``). Every chunk is
embedded with a short context header, ``passage``: its date and weekday, the session's
opening line (its title, near enough) and who speaks, so "the Saturday we talked
about the NAS" finds an exchange that never names the day.

``chunk_id`` is a content hash of (user, date, session, source, header and text), so
re-chunking the same day gives the same ids and the index stage embeds only what is
new. ``CHUNKER_VERSION`` is part of every day's index key: changing how days are cut
re-chunks every day and embeds the chunks whose ids are new, newest first, as many as
the index stage's budget (``embedder.max_chunks_per_run``) allows a run (chunker 4
changed only the keyword terms: its rebuild embeds nothing).

``terms`` is the keyword side (BM25): NFKC, lower case, words and compound tokens
such as ``pve-02.lan`` (kept whole *and* as their parts; ``err_zfs_0x1f4a`` is one
word), runs of Han characters as overlapping bigrams (Chinese has no spaces between
words), stop words of English and Indonesian dropped, and a light stemmer (``_stem``):
a word of the Indonesian list stays as written; any other loses an Indonesian particle
or possessive (``-nya``, ``-lah``, ``-kah``, ``-pun``, ``-ku``, ``-mu``) or an English
plural, and is then taken by its English Porter2 stem (Snowball: "finished" is finish,
"installed" install). Queries go through the same function. A chunk's terms also hold
the meanings of its gloss into the other language (``chunk_term_counts``), marked with
``GLOSS_MARK``, which a query's own words meet (``query_terms``). What the terms are
made with (the word lists) is fingerprinted by ``lexicon_key``.
"""

from __future__ import annotations

import datetime as dt
import itertools
import re
import threading
import unicodedata
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache

from schemas.lexicon import BILINGUAL, STOPWORDS_EN, STOPWORDS_ID, says_something
from schemas.lexicon import SEARCH_STOPWORDS as STOPWORDS
from transforms import translate
from transforms.ids import chunk_id, fingerprint

CHUNKER_VERSION = 5  # 1: windows only; 2: + context headers and the user's facts; 3: pairs instead of windows,
#                       and Chinese keyword terms as character bigrams; 4: English terms stemmed (Porter2), and
#                       each chunk's keyword terms also carry its gloss into the other language (GLOSS_MARK);
#                       5: a turn of bare placeholders ("[empty message]") is left out of every chunk
#: How a session's transcript is cut: 'pair' (each user turn with the replies up to the next one) or 'window'
#: (about TARGET_TOKENS of whole turns, overlapping), or 'both'. benchmarks/recall_eval.py and
#: recall_memorybank.py measure them (--granularity); pairs won on the tune halves (benchmarks/README.md).
#: The granularity this CHUNKER_VERSION stands for; another one is named in the index key (a benchmark's choice).
DEFAULT_GRANULARITY = "pair"
GRANULARITY = DEFAULT_GRANULARITY
TARGET_TOKENS = 300
MAX_TOKENS = 400
TOKENS_PER_WORD = 1.3  # multilingual subword tokenizers split Indonesian and code finely

_WORD_RE = re.compile(r"\w+", re.UNICODE)
_COMPOUND_RE = re.compile(r"(?<!\w)\w++(?:[.:/\-]\w+)+", re.UNICODE)  # from a word start, no backtracking into it
_SENTENCE_END_RE = re.compile(r"(?<=[.!?…])\s+")
_SUFFIXES_ID = ("nya", "lah", "kah", "pun", "ku", "mu")


@dataclass(frozen=True)
class Turn:
    """One message of a session, redacted, in order."""

    seq: int
    role: str
    content: str
    flags: tuple[str, ...] = ()


@dataclass(frozen=True)
class Chunk:
    chunk_id: str
    user_id: str
    date: dt.date
    session_id: str | None
    source: str  # 'transcript' | 'summary' | 'index'
    seq: int
    text: str
    flagged: tuple[str, ...]
    terms: tuple[str, ...]
    tfs: tuple[int, ...]
    header: str = ""  # context for the embedding only: never shown, never a keyword

    @property
    def passage(self) -> str:
        """What is embedded: the context header, then the text."""
        return f"{self.header}\n{self.text}" if self.header else self.text


KEY_SOURCES = ("summary", "index", "facts")


def estimate_tokens(text: str) -> int:
    return max(1, round(len(_WORD_RE.findall(text)) * TOKENS_PER_WORD))


# --- terms ----------------------------------------------------------------------------


@lru_cache(maxsize=1 << 16)
def _term(word: str) -> str | None:
    """A word's keyword term, or None for a stop word or a single non-digit character (cached: words repeat)."""
    if word in STOPWORDS or (len(word) < 2 and not word.isdigit()):
        return None
    return _stem(word)


def _stem(word: str) -> str:
    """A word of the Indonesian list as it is written ("keras" is not kera + -s, "masalah" not masa + -lah);
    else without an Indonesian particle or possessive ("kucingnya" is kucing) or an English plural, and a word
    that is then not Indonesian by its English Porter2 stem as well ("finished" meets "finish", "installed"
    "install")."""
    if word in _INDONESIAN:
        return word
    base = word
    for suffix in _SUFFIXES_ID:
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            base = word[: -len(suffix)]
            break
    else:
        if len(word) > 4 and word.endswith("s") and not word.endswith(("ss", "us", "is")) and word.isalpha():
            base = word[:-2] if word.endswith(("ches", "shes", "xes")) else word[:-1]
    if base.isascii() and base.isalpha() and base not in _INDONESIAN:
        return _porter(base)
    return base


#: Words the English stemmer leaves alone, as written: the Indonesian list's words (an Indonesian ending is not
#: an English suffix: "kucing" is not kuc + -ing) and function words, but not the English loan words the list
#: glosses as themselves ("install", "server", "update"), so "installed" still meets "install". A word the list
#: lacks is taken for English: "maling" is stored as male, the same on both sides of a search.
_INDONESIAN = frozenset(w for w, meanings in BILINGUAL.items() if w not in meanings) | STOPWORDS_ID
_STEMMERS = threading.local()  # a Snowball stemmer keeps its state while it works: one per thread


def _porter(word: str) -> str:
    stemmer = getattr(_STEMMERS, "english", None)
    if stemmer is None:
        # Snowball's own English stemmer, never PyStemmer's build (snowballstemmer.stemmer picks that when it is
        # installed): the stems are part of every stored index. Imported on first use: the package loads all its
        # 36 stemmers (12 ms), which a run with nothing to index never needs.
        from snowballstemmer.english_stemmer import EnglishStemmer

        stemmer = _STEMMERS.english = EnglishStemmer()
    return stemmer.stemWord(word)


_HAN_RE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")


@lru_cache(maxsize=1 << 16)
def _han_terms(word: str) -> tuple[str, ...]:
    """A word holding Han characters: each run of them as its overlapping bigrams (a lone character as itself),
    the rest of the word as ordinary terms. Chinese has no spaces, so a whole run was one term no query met."""
    out: list[str] = []
    at = 0
    for m in _HAN_RE.finditer(word):
        if m.start() > at and (t := _term(word[at : m.start()])) is not None:
            out.append(t)
        run = m.group(0)
        out += [run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)]
        at = m.end()
    if at < len(word) and (t := _term(word[at:])) is not None:
        out.append(t)
    return tuple(out)


def terms_of(text: str) -> list[str]:
    """Keyword terms of a text, in order, with repeats (queries and chunks alike)."""
    text = unicodedata.normalize("NFKC", text).lower()
    out = _COMPOUND_RE.findall(text)
    for w in _WORD_RE.findall(text):
        if w.isascii() or not _HAN_RE.search(w):
            if (t := _term(w)) is not None:
                out.append(t)
        else:
            out += _han_terms(w)
    return out


def surface_words(text: str) -> list[str]:
    """A text's words as written (NFKC, lower case), those that make a term (``_term``: no stop word, no single
    letter): what a snippet looks for, since a stem is not always the start of its word ("party" is parti)."""
    return [w for w in _WORD_RE.findall(unicodedata.normalize("NFKC", text).lower()) if _term(w) is not None]


def term_counts(text: str) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """Distinct terms (sorted) and how often each occurs."""
    counts = Counter(terms_of(text))
    keys = tuple(sorted(counts))
    return keys, tuple(counts[k] for k in keys)


#: Marks a chunk's keyword term that comes from its gloss into the other language, not from its own words.
#: ``terms_of`` never makes it (it is no word character), so a chunk's own words and its gloss stay apart.
GLOSS_MARK = "~"


def chunk_term_counts(text: str) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """A chunk's keyword terms with their counts: its own (``term_counts``), and each term of the meanings of its
    gloss into the other language (``transforms.translate.glosses``, never a word it keeps as written) that is
    not one of them, marked with ``GLOSS_MARK``, counted once.

    A query meets a chunk's gloss with its own words (``query_terms``): "cat" finds "kucingku" (its gloss
    holds ``~cat``). The marks keep the chunk's own words apart, so whether a query's gloss is searched at all
    is still decided by them alone (``flows.query.recall``): in an archive in one language, only when the gloss
    brings a loan word of the list that its chunks hold ("server").
    """
    counts = Counter(terms_of(text))
    phrases = translate.glosses(text, kept=False)
    glossed = set().union(*map(_phrase_terms, phrases)).difference(counts) if phrases else ()
    keys = tuple(sorted([*counts, *(GLOSS_MARK + t for t in glossed)]))
    return keys, tuple(counts[k] or 1 for k in keys)  # a gloss term counts once (a Counter reads 0 for it)


@lru_cache(maxsize=1 << 16)
def _phrase_terms(phrase: str) -> frozenset[str]:
    """The terms of one meaning or word of a gloss (cached: meanings repeat across an archive)."""
    return frozenset(terms_of(phrase))


@lru_cache(maxsize=1)
def lexicon_key() -> str:
    """A fingerprint of the word lists a chunk's terms are made with: the stop words, the Indonesian list (it
    decides which words the English stemmer leaves alone, and the glosses) and how many meanings a gloss takes.
    Part of each day's index key, so an edited word list re-makes the stored terms its queries are now made
    with (``flows.stages.recall_index``)."""
    return fingerprint(
        [
            *(f"stop\t{w}" for w in STOPWORDS),
            *(f"stop_id\t{w}" for w in STOPWORDS_ID),
            *(f"stop_en\t{w}" for w in STOPWORDS_EN),
            *(f"word\t{w}\t{' | '.join(m)}" for w, m in BILINGUAL.items()),
            f"glosses\t{translate.GLOSSES}\t{translate.HEADWORDS}",
        ]
    )


def query_terms(text: str, *, glossed: bool = True) -> list[str]:
    """The terms a query is searched by: each of its distinct terms, and (``glossed``) each as a chunk's gloss
    holds it (``GLOSS_MARK`` + term)."""
    own = list(dict.fromkeys(terms_of(text)))
    return own + [GLOSS_MARK + t for t in own] if glossed else own


# --- chunks ---------------------------------------------------------------------------


def _make(
    user_id: str,
    day: dt.date,
    session_id: str | None,
    source: str,
    seq: int,
    text: str,
    flags: Iterable[str],
    header: str = "",
) -> Chunk:
    terms, tfs = chunk_term_counts(text)
    return Chunk(
        chunk_id(user_id, day, session_id, source, f"{header}\n{text}" if header else text),
        user_id,
        day,
        session_id,
        source,
        seq,
        text,
        tuple(sorted(set(flags))),
        terms,
        tfs,
        header,
    )


def context_header(day: dt.date, title: str = "", speakers: Sequence[str] = ()) -> str:
    """``2026-07-19 Sunday · <title> · user, assistant``: the date, the session's opening line, who speaks."""
    parts = [f"{day.isoformat()} {day.strftime('%A')}"]
    if title:
        parts.append(title)
    if speakers:
        parts.append(", ".join(speakers))
    return " · ".join(parts)


def _title(turns: Sequence[Turn], limit: int = 80) -> str:
    """The session's first user line, cut at a word within ``limit`` characters."""
    for t in turns:
        if t.role == "user" and not t.flags and says_something(t.content):  # never a flagged, hidden or abandoned turn
            line = " ".join(t.content.strip().split("\n", 1)[0].split())
            return line if len(line) <= limit else line[:limit].rsplit(" ", 1)[0] + "…"
    return ""


def _split_long(text: str, limit: int) -> list[str]:
    """Pieces of one over-long turn, each within ``limit`` tokens where a boundary allows."""
    pieces: list[str] = []
    current: list[str]
    for unit_re in (None, _SENTENCE_END_RE, re.compile(r"\s+")):
        units = text.split("\n") if unit_re is None else [u for p in pieces or [text] for u in unit_re.split(p)]
        pieces, current, size = [], [], 0
        joiner = "\n" if unit_re is None else " "
        for u in units:
            t = estimate_tokens(u)
            if current and size + t > limit:
                pieces.append(joiner.join(current))
                current, size = [], 0
            current.append(u)
            size += t
        if current:
            pieces.append(joiner.join(current))
        if all(estimate_tokens(p) <= limit for p in pieces):
            break
    return [p.strip() for p in pieces if p.strip()]


def _lines(turns: Sequence[Turn]) -> list[tuple[Turn, str, int]]:
    """(turn, rendered line, tokens), with long turns split into several lines."""
    out = []
    for t in turns:
        body = t.content.strip()
        if not says_something(body):
            continue
        line = f"{t.role}: {body}"
        size = estimate_tokens(line)
        if size <= MAX_TOKENS:
            out.append((t, line, size))
            continue
        for piece in _split_long(body, MAX_TOKENS - 2):
            out.append((t, f"{t.role}: {piece}", estimate_tokens(piece) + 1))
    return out


def session_chunks(
    user_id: str, day: dt.date, session_id: str, turns: Sequence[Turn], granularity: str | None = None
) -> list[Chunk]:
    """The session's transcript chunks (``GRANULARITY``), then the user's facts (``facts_chunks``)."""
    how = granularity or GRANULARITY
    if how == "both":  # windows, and each user turn with its replies (a pair that is a whole window once)
        cut = list(
            {
                c.chunk_id: c
                for c in window_chunks(user_id, day, session_id, turns) + pair_chunks(user_id, day, session_id, turns)
            }.values()
        )
    else:
        cut = (pair_chunks if how == "pair" else window_chunks)(user_id, day, session_id, turns)
    return cut + facts_chunks(user_id, day, session_id, turns)


def pair_chunks(user_id: str, day: dt.date, session_id: str, turns: Sequence[Turn]) -> list[Chunk]:
    """Each user turn with the replies up to the next user turn; a pair over MAX_TOKENS is cut like a window.

    User turns in a row (a question sent as two messages) open one pair together; what comes before the first
    user turn (an opening message of the assistant) is a chunk of its own.
    """
    title = _title(turns)
    return [c for group in _pairs(turns) for c in _pair_group(user_id, day, session_id, group, title)]


def _pairs(turns: Iterable[Turn]) -> Iterator[list[Turn]]:
    """``pair_chunks``' groups of turns, each given once the next one opens (empty turns left out)."""
    group: list[Turn] = []
    for t in turns:
        if not says_something(t.content):
            continue
        if group and t.role == "user" and any(x.role != "user" for x in group):
            yield group
            group = []
        group.append(t)
    if group:
        yield group


def _pair_group(user_id: str, day: dt.date, session_id: str, group: list[Turn], title: str) -> list[Chunk]:
    """One pair's chunk, or its windows when it is over MAX_TOKENS."""
    lines = _lines(group)
    if sum(size for _, _, size in lines) > MAX_TOKENS:
        return window_chunks(user_id, day, session_id, group, title=title)
    text = "\n".join(line for _, line, _ in lines)
    speakers = tuple(dict.fromkeys(t.role for t in group))
    return [
        _make(
            user_id,
            day,
            session_id,
            "transcript",
            group[0].seq,
            text,
            [f for t in group for f in t.flags],
            context_header(day, title, speakers),
        )
    ]


def iter_session_chunks(user_id: str, day: dt.date, session_id: str, turns: Iterable[Turn]) -> Iterator[Chunk]:
    """``session_chunks`` of one session whose turns come in ``seq`` order, cut as they come.

    Pairs are let go once cut, so a session of any length is chunked in memory bounded by
    its longest pair (and its facts, which come last); the chunks are the ones
    ``session_chunks`` gives, in its order. Only the pair granularity streams: the others
    take the session whole.
    """
    if GRANULARITY != "pair":
        yield from session_chunks(user_id, day, session_id, list(turns))
        return
    rest = iter(turns)
    head: list[Turn] = []
    title = ""
    for t in rest:  # the title is the first qualifying user turn: turns wait until it is known
        head.append(t)
        title = _title((t,))
        if title:
            break
    found: list[tuple[int, str]] = []

    def noting_facts(ts: Iterable[Turn]) -> Iterator[Turn]:
        for t in ts:
            found.extend(_facts_in(t))
            yield t

    for group in _pairs(noting_facts(itertools.chain(head, rest))):
        yield from _pair_group(user_id, day, session_id, group, title)
    yield from _facts_chunks(user_id, day, session_id, found, title)


def window_chunks(
    user_id: str, day: dt.date, session_id: str, turns: Sequence[Turn], *, title: str | None = None
) -> list[Chunk]:
    """Overlapping windows of whole turns, about TARGET_TOKENS each, each with its context header."""
    title = _title(turns) if title is None else title
    lines = _lines(turns)
    chunks: list[Chunk] = []
    start = 0
    while start < len(lines):
        end, size = start, 0
        while end < len(lines) and (end == start or size + lines[end][2] <= MAX_TOKENS):
            size += lines[end][2]
            end += 1
            if size >= TARGET_TOKENS:
                break
        window = lines[start:end]
        text = "\n".join(line for _, line, _ in window)
        flags = [f for t, _, _ in window for f in t.flags]
        speakers = tuple(dict.fromkeys(t.role for t, _, _ in window))
        chunks.append(
            _make(
                user_id,
                day,
                session_id,
                "transcript",
                window[0][0].seq,
                text,
                flags,
                context_header(day, title, speakers),
            )
        )
        if end >= len(lines):
            break
        start = max(start + 1, end - 1)  # repeat the last turn, and always move on
    return chunks


#: First-person words that mark a sentence as the user speaking of themselves (English, Indonesian, casual Jakarta).
_FIRST_PERSON = re.compile(
    r"(?<!\w)(i|i'm|i've|i'd|i'll|im|my|me|mine|myself|we|our|us|saya|aku|gue|gua|gw|kami|kita|"
    r"ku|daku)(?!\w)",
    re.IGNORECASE,
)
_SENTENCE_RE = re.compile(r"[^.!?\n…]+[.!?…]*")
FACT_CHARS = 400


def facts_chunks(user_id: str, day: dt.date, session_id: str, turns: Sequence[Turn]) -> list[Chunk]:
    """The user's first-person sentences of a session, about ``FACT_CHARS`` a chunk, in order.

    A flagged turn (it read like a prompt override) gives no facts: facts are keys a
    day is found by, and such text is never promoted.
    """
    found = [f for t in turns for f in _facts_in(t)]
    return _facts_chunks(user_id, day, session_id, found, _title(turns))


def _facts_in(t: Turn) -> list[tuple[int, str]]:
    """(seq, sentence) for each first-person sentence of one unflagged user turn."""
    if t.role != "user" or t.flags:
        return []
    found = []
    for m in _SENTENCE_RE.finditer(t.content):
        sentence = " ".join(m.group(0).split())[:FACT_CHARS]
        if len(sentence) >= 12 and _FIRST_PERSON.search(sentence):
            found.append((t.seq, sentence))
    return found


def _facts_chunks(user_id: str, day: dt.date, session_id: str, found: list[tuple[int, str]], title: str) -> list[Chunk]:
    current: list[str] = []
    chunks, seq = [], 0
    for s, sentence in found:
        if current and sum(len(x) + 1 for x in current) + len(sentence) > FACT_CHARS:
            chunks.append(
                _make(
                    user_id, day, session_id, "facts", seq, " ".join(current), (), context_header(day, title, ("user",))
                )
            )
            current = []
        if not current:
            seq = s
        current.append(sentence)
    if current:
        chunks.append(
            _make(user_id, day, session_id, "facts", seq, " ".join(current), (), context_header(day, title, ("user",)))
        )
    return chunks


def summary_chunk(user_id: str, day: dt.date, summary: str, fields: dict[str, Sequence[str]]) -> Chunk:
    """The day's summary, with its list fields spelled out for keyword search."""
    extra = [f"{name}: {', '.join(values)}" for name, values in fields.items() if values]
    text = "\n".join([summary.strip(), *extra]).strip()
    return _make(user_id, day, None, "summary", 0, text, (), context_header(day))


def index_chunk(user_id: str, day: dt.date, line: str) -> Chunk:
    return _make(user_id, day, None, "index", 0, line.strip(), (), context_header(day))
