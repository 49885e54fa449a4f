"""What a day's conversation said, in a few of its own sentences: units, filler, ranking.

``transforms.note`` writes the day's note from the units, filler test and ranking
here. ``extractive_summary`` (the picked sentences quoted with who said them) is what
a day falls back on when the note finds nothing to write, and ``select`` gives the
model its key sentences. The summary is chosen, not written, so it can only say what
the day said:

1. **Units.** Each unflagged user and assistant message is split into sentences
   (``transforms.extract``'s splitter: code, headers and tables skipped). A line that
   opens with a speaker prefix (``Nadia: ...``, ``#Person1#: ...``) gives its sentences
   that speaker, and the prefix is taken off. A sentence with a redaction marker is
   never a unit: a secret's surroundings say too little to quote.
2. **No filler.** Greetings, thanks, agreement and other phatic turns ("Hey Sekar,
   great to chat with you again!", "Oke makasih ya!", "Sip, siap kak") are dropped, in
   Indonesian and English: a unit needs two content words that are neither stop words,
   filler words nor the names of the people talking.
3. **Rank.** A unit scores by how central it is (cosine similarity of its TF-IDF
   vector to the day's centroid, a MEAD-style centrality), raised for the facts it
   carries (a technology, a person, a number or date, a decision or recommendation
   word), and for coming early in its session, where the topic is set (the first
   sentence counts double, the second one and a half times, and so on).
4. **Pick with MMR** (maximal marginal relevance) until the character budget is
   spent, so the summary is not five variants of one sentence. Every session gets its
   best unit first, while the budget allows, and the assistant's best unit is kept when
   it carries a fact: the answer often holds it (the setting chosen, the command).
5. **Write** the picked units in time order as sentences that say who said what, in
   the day's language: "Nadia asked: How was the trip?", "The assistant suggested:
   ...", "Gading menulis: ...". At least two sentences (a day with less to say gets
   the day's counts and topics as its first sentence).

Deterministic (ties broken by position), pure, and within ``schemas.frontmatter``'s
bounds: 2-6 sentences and at most ``max_chars`` characters. The budget grows with the
day: a quarter of the day's readable characters, and room for a sentence per session,
between ``MIN_CHARS`` and the configured ``max_chars`` (``summarizer.summary_chars``).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache

from schemas.frontmatter import SUMMARY_MAX_CHARS, SUMMARY_SENTENCES
from schemas.lexicon import EXTRACTOR_STOPWORDS, TECHNOLOGIES
from transforms.extract import (
    SPEAKER_PREFIX,
    DayMessage,
    DayText,
    clean_sentence,
    display_name,
    extract_people,
    extract_tags,
    extract_technologies,
    readable_messages,
    sentences_of,
)
from transforms.translate import words_language

#: The shortest budget, whatever the day: two short sentences.
MIN_CHARS = 200
#: The default longest summary (``summarizer.summary_chars``).
DEFAULT_MAX_CHARS = 600
#: The budget is this share of the day's readable characters, between the bounds ...
SHARE = 0.25
#: ... and holds a sentence of this length for each session.
PER_SESSION = 160
_MMR_LAMBDA = 0.7
_FACT_BOOST = 0.25
#: A session's first sentences set its topic: the first counts double, the second 1.5 times, ...
_EARLY_BOOST = 1.0
_MAX_UNITS = 4000  # a day longer than this many sentences is ranked on its first ones

_FILLER = frozenset(
    """
hi hello hey hiya yo morning evening afternoon night good great nice cool awesome wow ok okay okey sure yes yeah
yep yup no nope nah thanks thank thx ty please welcome bye goodbye see later cheers alright right well oh ah
um uh hmm lol haha hehe wkwk wkwkwk lmao np sorry excuse glad fine fun chat talk again nice lovely perfect exactly
indeed totally absolutely definitely really true agreed agree noted understood got gotcha
halo hai helo hallo pagi siang sore malam selamat makasih terima kasih trims tq oke okee sip siap mantap mantul
iya ya yaa yoi yups ngga nggak gak ga enggak engga tidak boleh bisa dong deh kok sih nih tuh kan loh lho
hehe wkwk haha hihi asik asyik keren bagus sama sama-sama dadah daah bro sis gan kak mas mbak bang om tante
maaf permisi salam assalamualaikum waalaikumsalam baik sehat kabar
""".split()
)
_DECISION = re.compile(
    r"(?i)(?<!\w)(?:decid\w*|decision|chose|choose|chosen|plan\w*|will|going to|should|need to|must|recommend\w*|"
    r"suggest\w*|fixed|solved|works now|set up|switch\w* to|use|using|install\w*|"
    r"akhirnya|jadi(?:nya)?|pakai|pake|harus|perlu|akan|mau|rencana\w*|sepakat|memutuskan|putuskan|coba|"
    r"berhasil|solusi\w*|sarankan|saran\w*|disarankan|ganti|pasang)(?!\w)"
)
# An instruction: one of the first three words is a verb in the imperative ("Di Proxmox, set ...").
_IMPERATIVE = re.compile(
    r"(?i)^(?:\W*\w+\W+){0,2}(?:set|use|try|run|add|install|change|replace|check|open|restart|enable|disable|create|"
    r"make|keep|put|move|buy|call|turn|update|upgrade|backup|schedule|pakai|ganti|coba|jalankan|pasang|tambah|"
    r"tambahkan|buka|cek|periksa|atur|aktifkan|matikan|nyalakan|hapus|buat|simpan|pindahkan|jadwalkan|beli|"
    r"restart|update)(?!\w)"
)
_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,:]\d+)*(?![\w])")
_WORD = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")
_NON_WORDS = re.compile(r"\W+")
_TECH_WORDS = frozenset(w for aliases in TECHNOLOGIES.values() for a in aliases for w in [a.lower()] if " " not in w)

_WORDS = {
    "en": {
        "user": "The user",
        "assistant": "The assistant",
        "asked": "asked",
        "said": "said",
        "suggested": "suggested",
        "decided": "decided",
    },
    "id": {
        "user": "Pengguna",
        "assistant": "Asisten",
        "asked": "bertanya",
        "said": "menulis",
        "suggested": "menyarankan",
        "decided": "memutuskan",
    },
}


@dataclass(frozen=True)
class Unit:
    """One sentence of the day that a summary may quote."""

    order: int  # position in the day
    session_id: str
    role: str
    speaker: str | None  # from a speaker prefix in the message
    text: str  # cleaned, ready to quote
    ts: datetime | None
    first_in_session: int  # its rank among the session's units, from 0
    turn: int = -1  # the index of its message among the day's readable messages


def day_language(day_text: DayText) -> str:
    """``id`` or ``en``: the language the person mostly wrote in that day, by its function words.

    The user's own turns decide (the note speaks to them); a day where they wrote no
    function word of either language goes by all its readable text. A tie reads as English.
    """
    readable = readable_messages(day_text)
    mine = words_language(w.lower() for m in readable if m.role == "user" for w in _WORD.findall(m.content))
    if mine is None:
        mine = words_language(w.lower() for m in readable for w in _WORD.findall(m.content))
    return "id" if mine == "id" else "en"


def units(day_text: DayText, code: bool = False, keep: Callable[[str], bool] | None = None) -> list[Unit]:
    """Every quotable sentence of the day's unflagged user and assistant turns, in order.

    ``code``: keep inline code in its backticks (a command, an error message), where a
    quote drops them. ``keep``: a sentence too short to quote that is a unit all the same
    ("oke nanti aku tanya HR" is an open item).
    """
    out: list[Unit] = []
    per_session: Counter[str] = Counter()
    readable = readable_messages(day_text)
    speakers = _speakers(readable)
    for turn, m in enumerate(readable):
        for speaker, sentence in _speaker_sentences(m, speakers):
            cleaned = _clean_keeping_code(sentence) if code else clean_sentence(sentence)
            if cleaned is None and keep is not None and "[REDACTED" not in sentence and keep(sentence):
                cleaned = _short(sentence)
            if cleaned is None:
                continue
            out.append(Unit(len(out), m.session_id, m.role, speaker, cleaned, m.ts, per_session[m.session_id], turn))
            per_session[m.session_id] += 1
    return out


def _short(sentence: str) -> str | None:
    """A short sentence kept as it is written, on one line, with its stop."""
    s = " ".join("".join(c for c in sentence if c.isprintable() or c.isspace()).split()).strip(" ,;:-")
    return (s if s[-1:] in (".", "!", "?") else s + ".") if s else None


_TICKED = re.compile(r"`([^`\n]+)`")


def _clean_keeping_code(sentence: str) -> str | None:
    """``clean_sentence``, with inline code kept in backticks (the cleaner would drop them)."""
    if "`" not in sentence:
        return clean_sentence(sentence)
    cleaned = clean_sentence(_TICKED.sub("\u27e6\\1\u27e7", sentence))
    return None if cleaned is None else cleaned.replace("\u27e6", "`").replace("\u27e7", "`")


def _speakers(messages: list[DayMessage]) -> frozenset[str]:
    """The day's speaker prefixes: a name that opens a line in two messages or more, or a ``#Person1#`` tag.

    ("Ditambahkan: minyak goreng 2 liter" opens one line of one answer: a label, not a speaker.)
    """
    seen: Counter[str] = Counter()
    for m in messages:
        if ":" in m.content:
            seen.update({x["name"] for x in SPEAKER_PREFIX.finditer(m.content)})
    return frozenset(n for n, c in seen.items() if c >= 2 or n.startswith("#"))


def _speaker_sentences(message: DayMessage, speakers: frozenset[str] | None = None):
    """(speaker or None, sentence) for each sentence of a message; a speaker prefix holds until the next.

    ``speakers``: the prefixes that name a speaker (``_speakers``); None takes every prefix.
    """
    speaker: str | None = None
    block: list[str] = []

    def flush():
        text = "\n".join(block)
        return [(speaker, s) for s in sentences_of(text)] if text.strip() else []

    out = []
    for line in message.content.split("\n"):
        m = SPEAKER_PREFIX.match(line)
        if m and (speakers is None or m["name"] in speakers):
            out += flush()
            block, speaker = [line[m.end() :]], m["name"]
        else:
            block.append(line)
    out += flush()
    return out


def is_filler(text: str, names: frozenset[str] = frozenset()) -> bool:
    """A greeting, thanks, agreement or other turn that says nothing: fewer than two content words."""
    return _is_filler(_lower_words(text), names)


def _lower_words(text: str) -> list[str]:
    return [t.lower() for t in _WORD.findall(text)]


def _is_filler(words: list[str], names: frozenset[str]) -> bool:
    content = [w for w in words if len(w) > 2 and w not in EXTRACTOR_STOPWORDS and w not in _FILLER and w not in names]
    return len(content) < 2


def _terms(text: str) -> list[str]:
    return _terms_of(_lower_words(text))


def _terms_of(words: list[str]) -> list[str]:
    return [_stem(w) for w in words if len(w) > 1 and w not in EXTRACTOR_STOPWORDS and w not in _FILLER]


@lru_cache(maxsize=1 << 16)
def _stem(word: str) -> str:
    """A light stem, so "asked" meets "asks" and "rumahnya" meets "rumah"."""
    for suffix in ("nya", "lah", "kah"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def _facts(text: str, people: frozenset[str]) -> int:
    return _facts_of(text, set(_lower_words(text)), people, bool(_DECISION.search(text)))


def _facts_of(text: str, words: set[str], people: frozenset[str], decision: bool) -> int:
    return bool(words & _TECH_WORDS) + bool(words & people) + bool(_NUMBER.search(text)) + decision


def rank(
    candidates: list[Unit], people: frozenset[str], words: list[list[str]], bags: list[Counter[str]]
) -> tuple[list[float], list[dict[str, float]]]:
    """(score, unit TF-IDF vector) per candidate: centrality to the day's centroid, boosted by facts.

    ``words`` and ``bags``: each candidate's ``_lower_words`` and its terms counted (``_terms_of``), read once by the
    caller for all its passes.
    """
    facts = [
        _facts_of(u.text, set(w), people, bool(_DECISION.search(u.text)))
        for u, w in zip(candidates, words, strict=False)
    ]
    return _rank(candidates, words, facts, bags)


def _rank(
    candidates: list[Unit], words: list[list[str]], facts: list[int], bags: list[Counter[str]] | None = None
) -> tuple[list[float], list[dict[str, float]]]:
    bags = [Counter(_terms_of(w)) for w in words] if bags is None else bags
    df = Counter(t for bag in bags for t in bag)
    n = len(bags)
    idf = {t: math.log((1 + n) / (1 + c)) + 1.0 for t, c in df.items()}
    vectors = []
    for bag in bags:
        v = {t: (1 + math.log(c)) * idf[t] for t, c in bag.items()}
        norm = math.sqrt(sum(x * x for x in v.values())) or 1.0
        vectors.append({t: x / norm for t, x in v.items()})
    centroid: Counter[str] = Counter()
    for v in vectors:
        centroid.update(v)
    cnorm = math.sqrt(sum(x * x for x in centroid.values())) or 1.0
    scores = []
    for u, v, f in zip(candidates, vectors, facts, strict=False):
        central = sum(x * centroid[t] for t, x in v.items()) / cnorm
        early = 1.0 + _EARLY_BOOST / (1 + u.first_in_session)
        scores.append(central * early * (1.0 + _FACT_BOOST * f))
    return scores, vectors


def _cosine(a: dict[str, float], b: dict[str, float]) -> float:
    if len(a) > len(b):
        a, b = b, a
    return sum(x * b.get(t, 0.0) for t, x in a.items())


def budget(day_text: DayText, max_chars: int = DEFAULT_MAX_CHARS) -> int:
    """How long this day's summary may be: a share of its readable text, room for a sentence
    per session, at least ``MIN_CHARS`` and at most ``max_chars``."""
    readable = readable_messages(day_text)
    size = sum(len(m.content) for m in readable)
    sessions = len({m.session_id for m in readable})
    return int(min(max_chars, SUMMARY_MAX_CHARS, max(MIN_CHARS, SHARE * size, PER_SESSION * sessions)))


def select(
    day_text: DayText,
    max_chars: int = DEFAULT_MAX_CHARS,
    max_units: int = 6,
    lang: str | None = None,
) -> list[Unit]:
    """The units a summary of the day quotes, in time order (see the module docstring).

    ``max_units`` is the summary's sentence bound; the model's key sentences take more.
    ``lang``: the day's ``day_language``, when the caller knows it already.
    """
    names = frozenset(w.lower() for p in extract_people(day_text) for w in p.split())
    every = units(day_text)
    speakers = {u.speaker.lower() for u in every if u.speaker}
    names |= frozenset(w for s in speakers for w in s.split())
    # Each unit's words, decision word and facts are found once: filler, rank, answers and wording all use them.
    kept = [(u, w) for u in every[:_MAX_UNITS] if not _is_filler(w := _lower_words(u.text), names)]
    if not kept:
        return []
    candidates = [u for u, _ in kept]
    decisions = [bool(_DECISION.search(u.text)) for u in candidates]
    facts = [_facts_of(u.text, set(w), names, d) for (u, w), d in zip(kept, decisions, strict=False)]
    scores, vectors = _rank(candidates, [w for _, w in kept], facts)
    limit = budget(day_text, max_chars) if max_units <= 6 else max_chars
    lang = lang or day_language(day_text)
    written = [_sentence(u, lang, None, d) for u, d in zip(candidates, decisions, strict=False)]
    costs = [len(w) + 1 for w in written]
    # What a unit says: the same words said again (another session) add nothing.
    keys = [_NON_WORDS.sub(" ", w.lower()).strip() for w in written]
    redundancy = [0.0] * len(candidates)  # each unit's highest cosine to a chosen one
    chosen: list[int] = []
    taken: set[int] = set()
    said: set[str] = set()
    used = 0

    def fits(i: int) -> bool:
        return used + costs[i] <= limit and len(chosen) < max_units and keys[i] not in said

    # Which units hold each term: a unit that shares no term with a chosen one has cosine 0
    # to it (every weight is positive), which leaves its redundancy as it was.
    holders: dict[str, list[int]] = {}
    for j, v in enumerate(vectors):
        for t in v:
            holders.setdefault(t, []).append(j)

    def take(i: int) -> None:
        nonlocal used
        chosen.append(i)
        taken.add(i)
        said.add(keys[i])
        used += costs[i]
        near = {j for t in vectors[i] for j in holders[t]}
        for j in near - taken:
            redundancy[j] = max(redundancy[j], _cosine(vectors[j], vectors[i]))

    def best(pool) -> int | None:
        def mmr(i: int) -> tuple[float, int]:
            return (_MMR_LAMBDA * scores[i] - (1 - _MMR_LAMBDA) * redundancy[i], -i)

        fitting = [i for i in pool if i not in taken and fits(i)]
        return max(fitting, key=mmr) if fitting else None

    by_session: dict[str, list[int]] = {}
    for i, u in enumerate(candidates):
        by_session.setdefault(u.session_id, []).append(i)
    # Every session first, the busiest sessions' best units before the others'.
    for sid in sorted(by_session, key=lambda s: (-max(scores[i] for i in by_session[s]), by_session[s][0])):
        if (pick := best(by_session[sid])) is not None:
            take(pick)
    answers = [i for i, u in enumerate(candidates) if u.role == "assistant" and facts[i]]
    if answers and not any(candidates[i].role == "assistant" for i in chosen):
        if (pick := best(answers)) is not None:
            take(pick)
    while (pick := best(range(len(candidates)))) is not None:
        take(pick)
    return [candidates[i] for i in sorted(chosen)]


def _sentence(u: Unit, lang: str, user_name: str | None, decision: bool | None = None) -> str:
    words = _WORDS[lang]
    if u.speaker:
        who = u.speaker
    elif u.role == "assistant":
        who = words["assistant"]
    else:
        who = user_name or words["user"]
    if u.text.endswith("?"):
        verb = words["asked"]
    elif u.role == "assistant" and (
        (bool(_DECISION.search(u.text)) if decision is None else decision) or _IMPERATIVE.search(u.text)
    ):
        verb = words["suggested"]
    else:
        verb = words["said"]
    return f"{who} {verb}: {u.text}"


def extractive_summary(day_text: DayText, max_chars: int = DEFAULT_MAX_CHARS) -> str:
    """The day in 2-6 of its own sentences, each saying who said it, at most ``max_chars``."""
    lang = day_language(day_text)
    name = display_name(day_text)
    who = name or _WORDS[lang]["user"]
    unflagged = [m for m in day_text.messages if not m.flagged]
    if not unflagged:
        set_aside = len(day_text.messages)
        reason = (
            "No messages were recorded."
            if not set_aside
            else "Its only message was set aside as untrusted."
            if set_aside == 1
            else f"All {set_aside} messages of the day were set aside as untrusted."
        )
        return f"{who} had no conversation to summarize on {day_text.day.isoformat()}. {reason}"
    picked = [_sentence(u, lang, name) for u in select(day_text, max_chars, lang=lang)]
    low = max(2, SUMMARY_SENTENCES[0])
    if len(picked) < low:
        picked.insert(0, _overview(day_text, unflagged, who, lang))
    if len(picked) < low:
        tags = list(extract_tags(day_text))
        picked.append(f"Keywords: {', '.join(tags)}." if tags else "No message had a sentence worth quoting.")
    out = " ".join(picked)
    while len(out) > max(max_chars, MIN_CHARS) and len(picked) > low:
        picked.pop()
        out = " ".join(picked)
    return out


def plain_summary(day_text: DayText) -> str:
    """Two plain sentences (the day's size and topics, then its keywords): what a summary falls back on."""
    lang = day_language(day_text)
    who = display_name(day_text) or _WORDS[lang]["user"]
    unflagged = [m for m in day_text.messages if not m.flagged]
    tags = [t for t in extract_tags(day_text) if t]
    return f"{_overview(day_text, unflagged, who, lang)} " + (
        f"Keywords: {', '.join(tags)}." if tags else "No message had a sentence worth quoting."
    )


def _overview(day_text: DayText, unflagged: list[DayMessage], who: str, lang: str) -> str:
    sessions = len({m.session_id for m in unflagged})
    topics = list(extract_technologies(day_text)[:3]) or list(extract_tags(day_text)[:3])
    if lang == "id":
        head = f"{who} punya {sessions} sesi dengan {len(unflagged)} pesan"
        return head + (f", sebagian besar tentang {_listing(topics, 'dan')}." if topics else ".")
    head = f"{who} had {_plural(sessions, 'session')} with {_plural(len(unflagged), 'message')}"
    return head + (f", mostly about {_listing(topics)}." if topics else ".")


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _listing(items: list[str], conjunction: str = "and") -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + f" {conjunction} " + items[-1]
