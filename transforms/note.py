"""The extractive daily note: threads, a paragraph per thread, a title, decisions and open items.

What most days get (the extractive backend, and the model backend's fallback). It is
written from the day's own sentences, never invented, but it reads as a note, not as
quotes:

1. **Units.** ``transforms.digest.units``: each sentence of the unflagged user and
   assistant turns, with its speaker (a ``Nadia: ...`` / ``#Person1#: ...`` prefix, else
   the role), inline code kept in backticks. Filler (greetings, thanks, "Oke makasih
   ya") is never a unit of a paragraph (``digest.is_filler``).
2. **Threads.** A session is a thread; a long session splits where the talk moves on:
   a gap of ``GAP`` or more between turns, or a lexical valley (TextTiling: the term
   overlap of the ``BLOCK`` units before and after a user's turn falls under
   ``VALLEY``, with ``MIN_THREAD`` units on either side). At most ``SUMMARY_PARAGRAPHS`` threads are written, the busiest ones.
   Linear in the day's size: a thread sees each unit once, and only each thread's
   first units are ranked. Each unit is read once for the whole note (``Reading``): its
   words and counted terms serve the filler test, the splits and the ranking alike.
3. **Pick.** Units score by ``digest``'s centrality and facts. Every thread gets the
   best unit of its opening turn (what it is about), then the answer (the best unit of
   the other side's next turn that fits, which may take the budget ``ANSWER_ROOM`` times),
   then the rest of its opening turn, then the day's best units by MMR. The budget is
   ``digest.budget``'s with a floor of ``MIN_CHARS``, and ``PER_THREAD`` characters per
   thread on a day of several. A unit's clause (step 4) is written once, when it is weighed
   against the budget, and that same clause goes into the paragraph.
4. **Write.** One paragraph per thread, in time order, in the day's language
   (``digest.day_language``), each unit a clause that names who did what: "Dimas asked
   how to replace a failing disk; the assistant suggested running `zpool replace`."
   Questions become indirect ("asked whether", "bertanya apakah"), a user's request
   "asked the assistant to ...", an assistant's instruction "suggested ...", and
   first-person pronouns are resolved to the speaker (``transforms.cues.as_third_person``,
   then a small local pass for verb agreement and for "you", the other speaker).
5. **Title**: the threads' topics (technologies first, then each thread's most
   distinctive words), one line of at most ``TITLE_MAX_CHARS``.
6. **Decisions and open items**: the sentences whose cues (``transforms.cues.cues_of``)
   are "decision" or "open", filler too ("oke nanti aku tanya HR"), plus a user's
   question that no later turn of its thread answered. Open items are what the user (or
   a speaker of a pasted chat) said: an assistant's "I'll explain" inside its own
   answer, or its "if it still fails ...", is not open work. A plan with its time
   ("besok pagi ke dokter aja") is an open item, listed once. Each item is one sentence naming its speaker
   once ("Gading will check the restic snapshots", "Pengguna akan beli baterai dulu"),
   a short one with what it is about in brackets (the speaker's sentence before it, or
   the other side's that shares a word); a follow-up ("besok aku benerin") or a plan
   for the speaker's last item takes that item over; one the thread settles later is
   dropped. The paragraphs' MMR fill leaves the listed sentences to their lists.

Pure and deterministic. Every output is within ``schemas.frontmatter``'s bounds
(``normalise_summary``, ``normalise_title``, ``normalise_items``).
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta

from schemas.frontmatter import ITEM_BOUNDS, SUMMARY_MAX_CHARS, SUMMARY_PARAGRAPHS, TITLE_MAX_CHARS
from schemas.lexicon import EXTRACTOR_STOPWORDS, TECHNOLOGIES
from transforms import digest
from transforms.cues import _shared, _sorts, as_third_person, closes, content_terms, cues_of
from transforms.digest import DEFAULT_MAX_CHARS, Unit
from transforms.extract import (
    SPEAKER_PREFIX,
    DayMessage,
    DayText,
    display_name,
    extract_people,
    extract_technologies,
    readable_messages,
)
from transforms.frontmatter import normalise_items, normalise_summary, normalise_title

#: A pause this long inside a session starts a new thread.
GAP = timedelta(minutes=45)
#: Units on each side of a candidate boundary, for the lexical comparison.
BLOCK = 4
#: A boundary where the two blocks share less than this (cosine of their term counts).
VALLEY = 0.05
#: The fewest units a thread split out of a session keeps.
MIN_THREAD = 10
#: Units ranked per thread, at most (a long thread is told from its first ones).
RANKED_PER_THREAD = 400
#: Units of a thread's first turn its paragraph may open with.
OPENING_UNITS = 2
#: Room each written thread gets at least, in characters (within ``SUMMARY_MAX_CHARS``).
PER_THREAD = 300
#: The other side's turns after a thread's first pick where its answer is looked for.
REPLY_TURNS = 2
#: How far past the budget a thread's answer may go.
ANSWER_ROOM = 1.5
#: Units after an open item where its thread may settle it (``transforms.cues.closes``), and
#: the share of the item's content words the settling sentence needs (a few turns later, a quarter).
CLOSE_WINDOW = 40
IN_THREAD_SHARE = 0.25
#: Turns after an open item where the speaker's own "done" sentence sharing one of its content words settles it.
SETTLED_TURNS = 4
#: Turns after an open item where the speaker's plan that shares a word with it takes it over ("remnya bunyi" ...
#: "besok ke bengkel, sekalian cek kampas rem").
PLAN_TURNS = 6
#: An open item with fewer content words than this takes the speaker's sentence before it.
CONTEXT_TERMS = 4
#: Threads the title names, at most (the busiest).
TITLE_THREADS = 3
_SLACK = 80  # what a paragraph adds to its clauses' costs: capitals, stops, blank lines
#: The budget's share of the day's readable characters.
SHARE = 0.3
#: The shortest budget, whatever the day.
MIN_CHARS = 140
#: Clauses in one sentence of a paragraph, and units in one paragraph.
CLAUSES_PER_SENTENCE = 2
UNITS_PER_PARAGRAPH = 4

_WORDS = {
    "en": {
        "user": "the user",
        "assistant": "the assistant",
        "asked": "asked",
        "asked_to": "asked {who} to",
        "said": "said",
        "suggested": "suggested",
        "explained": "explained that",
        "and": "and",
        "whether": "whether",
        "about": "about",
    },
    "id": {
        "user": "pengguna",
        "assistant": "asisten",
        "asked": "bertanya",
        "asked_to": "meminta {who}",
        "said": "bercerita",
        "suggested": "menyarankan",
        "explained": "menjelaskan bahwa",
        "and": "dan",
        "whether": "apakah",
        "about": "tentang",
    },
}


@dataclass(frozen=True)
class Thread:
    """A stretch of one session on one topic: its informative units, in order."""

    session_id: str
    units: tuple[Unit, ...]
    end_turn: int  # the first readable message after the thread (exclusive)


@dataclass(frozen=True)
class Note:
    """What the extractive path writes for a day: each field already within its bounds."""

    title: str
    language: str
    summary: str  # "What happened": one paragraph per thread, separated by a blank line
    decisions: tuple[str, ...]
    open_items: tuple[str, ...]


# --- threads ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Reading:
    """Each of the day's units read once, by ``Unit.order``: the threads and the ranking share its words and terms."""

    words: Mapping[int, list[str]]  # its lower-case words
    bags: Mapping[int, Counter[str]]  # an informative (not filler) unit's terms, counted

    @classmethod
    def of(cls, every: list[Unit], names: frozenset[str] = frozenset()) -> Reading:
        words = {u.order: digest._lower_words(u.text) for u in every}
        bags = {order: Counter(digest._terms_of(w)) for order, w in words.items() if not digest._is_filler(w, names)}
        return cls(words, bags)


def threads(every: list[Unit], names: frozenset[str] = frozenset(), read: Reading | None = None) -> list[Thread]:
    """The informative units of ``every`` in threads: per session, split at gaps and lexical valleys.

    ``read``: ``Reading.of(every, names)``, when the caller has it already (it was read with ``names``).
    """
    read = Reading.of(every, names) if read is None else read
    by_session: dict[str, list[tuple[Unit, Counter[str]]]] = {}
    for u in every:
        if (bag := read.bags.get(u.order)) is not None:
            by_session.setdefault(u.session_id, []).append((u, bag))
    out: list[Thread] = []
    for sid, pairs in by_session.items():
        us = [u for u, _ in pairs]
        cuts = _cuts(us, [bag for _, bag in pairs])
        for a, b in zip([0, *cuts], [*cuts, len(us)], strict=True):
            out.append(Thread(sid, tuple(us[a:b]), -1))
    out.sort(key=lambda t: t.units[0].order)
    # A thread runs until the next thread of its session opens (or the session ends).
    last_turn = {u.session_id: u.turn for u in every}
    closed: list[Thread] = []
    for i, t in enumerate(out):
        nxt = next((o for o in out[i + 1 :] if o.session_id == t.session_id), None)
        end = nxt.units[0].turn if nxt else last_turn.get(t.session_id, t.units[-1].turn) + 1
        closed.append(Thread(t.session_id, t.units, end))
    return closed


def _cuts(us: list[Unit], bags: list[Counter[str]]) -> list[int]:
    """Where a session's units split into threads: a long pause, or a valley in term overlap."""
    n = len(us)
    cuts: list[int] = []
    left: dict[str, int] = {}
    right: dict[str, int] = {}
    for j in range(min(BLOCK, n)):
        _add(right, bags[j], 1)
    last = 0
    for i in range(1, n):
        # Slide the windows: left holds units [i-BLOCK, i), right [i, i+BLOCK).
        _add(left, bags[i - 1], 1)
        if i - 1 - BLOCK >= 0:
            _add(left, bags[i - 1 - BLOCK], -1)
        _add(right, bags[i - 1], -1)
        if i + BLOCK - 1 < n:
            _add(right, bags[i + BLOCK - 1], 1)
        u, prev = us[i], us[i - 1]
        if u.turn == prev.turn:
            continue  # never inside a message
        gap = u.ts is not None and prev.ts is not None and u.ts - prev.ts >= GAP
        if gap and i - last >= 1:
            cuts.append(i)
            last = i
            continue
        opens = u.role == "user" and (u.speaker is None or u.speaker == us[last].speaker)
        if opens and i - last >= MIN_THREAD and n - i >= MIN_THREAD and _overlap(left, right) < VALLEY:
            cuts.append(i)
            last = i
    return cuts


def _add(window: dict[str, int], bag: Counter[str], sign: int) -> None:
    """Add (sign 1) or take out (-1) a unit's terms; a term at zero leaves, so a window stays small."""
    for t, c in bag.items():
        v = window.get(t, 0) + sign * c
        if v:
            window[t] = v
        else:
            window.pop(t, None)


def _overlap(a: dict[str, int], b: dict[str, int]) -> float:
    if len(a) > len(b):
        a, b = b, a
    dot = sum(x * b.get(t, 0) for t, x in a.items())
    na = math.sqrt(sum(x * x for x in a.values()))
    nb = math.sqrt(sum(x * x for x in b.values()))
    return dot / (na * nb) if na and nb else 0.0


# --- who said it ------------------------------------------------------------------------


@dataclass(frozen=True)
class _Voices:
    """How the note names the day's speakers."""

    lang: str
    user: str  # the user's name, or "the user" / "pengguna"
    assistant: str
    speakers: tuple[str, ...]  # speaker prefixes, in order of first appearance
    proper: frozenset[str]  # words the day writes capitalised inside a sentence: names, not sentence openers

    def of(self, u: Unit) -> str:
        if u.speaker:
            return u.speaker
        return self.assistant if u.role == "assistant" else self.user

    def addressee(self, u: Unit) -> str:
        """Whom a unit speaks to: the other speaker of a two-person chat, or the other role."""
        if u.speaker:
            others = [s for s in self.speakers if s != u.speaker]
            return others[0] if len(others) == 1 else (self.assistant if not others else others[0])
        return self.user if u.role == "assistant" else self.assistant


def _voices(day_text: DayText, every: list[Unit], lang: str, people: tuple[str, ...]) -> _Voices:
    words = _WORDS[lang]
    speakers = tuple(dict.fromkeys(u.speaker for u in every if u.speaker))
    proper: set[str] = set()
    for u in every[: digest._MAX_UNITS]:
        for m in re.finditer(r"(?<=[\w,;:)] )([A-Z][\w'-]*)", u.text):
            proper.add(m[1])
    proper |= {w for p in people for w in p.split()}
    proper |= {w for s in speakers for w in s.split()}
    return _Voices(lang, display_name(day_text) or words["user"], words["assistant"], speakers, frozenset(proper))


# --- third person ----------------------------------------------------------------------

_EN_SUBJECT_FORMS = {
    "am": "is",
    "are": "is",
    "were": "was",
    "have": "has",
    "do": "does",
    "don't": "doesn't",
    "dont": "doesn't",
    "aren't": "isn't",
    "weren't": "wasn't",
    "haven't": "hasn't",
}
#: Common base verbs that take -s after a third-person subject ("I want" -> "Dimas wants").
_EN_VERBS = frozenset(
    """
want need like love hate know think mean feel guess hope plan prefer agree remember forget wonder believe
understand see hear look seem work live use run go get make take give keep try play enjoy miss wish expect
find buy pay call say tell ask write read watch check install set fix keep prefer usually always never also
""".split()
)
_EN_ADVERBS = frozenset(
    "usually always never also just really still often sometimes only even actually already".split()
)
_EN_CONTRACTIONS = {"'m": "is", "'ve": "has", "'ll": "will", "'d": "would", "'re": "is"}
_APOS = "['’]"
_MODAL_BEFORE = re.compile(r"(?i)(?<!\w)(?:do|does|did|can|could|should|would|will|shall|may|might|must|to)\s+$")


def third_person(text: str, speaker: str, addressee: str, lang: str, role: str = "user") -> str:
    """``text`` with the speaker's "I" and the addressee's "you" replaced by their names."""
    out = as_third_person(text, speaker, lang, role=role)
    if lang == "id":
        out = _id_third_person(out, speaker, addressee)
    if not re.search(r"(?i)\b(?:i|me|my|mine|myself|you|your|yours|yourself)\b", out):
        return out  # (an Indonesian day quotes English too: "I'll swap the cable tomorrow")
    out = _en_person(out, r"I", r"me|myself", r"my|mine", speaker)
    return _en_person(out, r"you", r"yourself", r"your|yours", addressee, subject_ci=True)


def _en_person(text: str, subject: str, obj: str, possessive: str, name: str, subject_ci: bool = False) -> str:
    flags = "(?i)" if subject_ci else ""

    def contraction(m: re.Match) -> str:
        return f"{name} {_EN_CONTRACTIONS[m[1].lower().replace('’', chr(39))]}"

    text = re.sub(rf"{flags}(?<![\w#-]){subject}({_APOS}(?:m|ve|ll|d|re))(?!\w)", contraction, text)

    def subj(m: re.Match) -> str:
        verb, adverb = m["verb"], m["adv"] or ""
        if verb is None:
            return name + m["rest"]
        low = verb.lower()
        if _MODAL_BEFORE.search(m.string, 0, m.start()):
            return f"{name}{adverb} {verb}"  # "should I use" keeps its verb: "should Dimas use"
        if low in _EN_SUBJECT_FORMS:
            return f"{name}{adverb} {_EN_SUBJECT_FORMS[low]}"
        if low in _EN_VERBS:
            return f"{name}{adverb} {_third_singular(verb)}"
        return f"{name}{adverb} {verb}"

    text = re.sub(
        rf"{flags}(?<![\w#'-]){subject}(?![\w'’-])(?:(?P<adv>(?: (?:{'|'.join(_EN_ADVERBS)}))?) (?P<verb>[a-z']+)|(?P<rest>))",
        subj,
        text,
    )
    text = re.sub(rf"(?i)(?<![\w#'-])(?:{obj})(?![\w'’-])", name, text)
    return re.sub(rf"(?i)(?<![\w#'-])(?:{possessive})(?![\w'’-])", f"{name}'s", text)


def _third_singular(verb: str) -> str:
    if verb.endswith(("s", "sh", "ch", "x", "o")):
        return verb + "es"
    if verb.endswith("y") and len(verb) > 2 and verb[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


_ID_ME = r"aku|saya|gue|gw|gua|ane"
_ID_YOU = r"kamu|anda|kau|engkau|lu|lo|elo|elu"


def _id_third_person(text: str, speaker: str, addressee: str) -> str:
    text = re.sub(rf"(?i)(?<![\w-])(?:{_ID_ME})(?![\w-])", speaker, text)
    text = re.sub(r"(?i)(?<=\w)-ku(?!\w)", f" {speaker}", text)
    text = re.sub(rf"(?i)(?<![\w-])(?:{_ID_YOU})(?![\w-])", addressee, text)
    return re.sub(r"(?i)(?<=\w)-mu(?!\w)", f" {addressee}", text)


# --- clauses ----------------------------------------------------------------------------

_OPENERS = re.compile(
    r"(?i)^(?:so|and|but|well|oh|ok|okay|oke|hey|hi|btw|anyway|noted|alright|right|yes|yeah|sure|sip|siap|iya|ya|"
    r"terus|trus|nah|eh)\b[,.!]?\s+"
    r"|^(?:great|good|nice|cool|perfect|bagus|mantap|keren|betul|benar)[,!]\s+"
)
_WH = "how|what|where|when|why|which|who|whom|whose"
_AUX = "do|does|did|is|are|was|were|can|could|should|would|will|shall|have|has|may|might|am"
_EN_WH_TO = re.compile(rf"(?i)^({_WH})\s+(?:do|can|should|could|would|shall)\s+(?:I|we)\s+(.+)$")
_EN_WH_BE = re.compile(rf"(?i)^({_WH})\s+(is|are|was|were)\s+(.+)$")
_EN_YES_NO = re.compile(rf"(?i)^({_AUX})(n't)?\s+(I|you|we|they|he|she|it|this|that|there|[A-Z#][\w#.'-]*)\s+(.+)$")
_EN_WH_AUX = re.compile(
    rf"(?i)^({_WH})\s+({_AUX})\s+(I|you|we|they|he|she|it|this|that|there|#\w+#|[A-Z][\w'-]*)\s+(.+)$"
)
_EN_REQUEST = re.compile(r"(?i)^(?:can|could|would|will)\s+you\s+(?:please\s+)?(?!like\b|mind\b|be\b)(.+)$")
# A question tag adds nothing to what was asked: "..., don't you", "..., right".
_TAG = re.compile(
    r"(?i),\s*(?:(?:do|does|did|is|are|was|were|can|could|will|would|have|has|should|won't|isn't|aren't|don't|"
    r"doesn't|didn't|can't)(?:n't)?\s+\w+|right|ok|okay|eh|huh|ya|kan|dong|nggak|gak|ga)$"
)
_PLEASE = re.compile(r"(?i)^(?:please|pls|plz|tolong|bantu(?:in)?|coba)\s+(.+)$")
_ID_HOW = re.compile(r"(?i)^(?:gimana|bagaimana|gmn)\s+(?:ya\s+)?(?:cara(?:nya)?\s+)?(.+)$")


def _bare(text: str) -> tuple[str, str]:
    """The text without its closing punctuation, and that punctuation."""
    m = re.search(r"[.!?…]+$", text)
    return (text[: m.start()].rstrip(" ,;:"), m[0]) if m else (text, "")


def clause(u: Unit, voices: _Voices, item: bool = False) -> str:
    """The unit as a clause that names who did what, in the note's language (no closing stop).

    ``item``: for a list item, a statement is "Who: what" rather than "Who said what".
    """
    lang, words = voices.lang, _WORDS[voices.lang]
    who, to = voices.of(u), voices.addressee(u)
    body, end = _bare(u.text)
    body = _OPENERS.sub("", body) or body
    if end.startswith("?"):
        verb, rest = _question(_TAG.sub("", body) or body, to, lang)
    elif u.role == "assistant" and _instruction(body, lang) and not _PLEASE.match(body):
        verb, rest = words["suggested"], _suggestion(body, lang)
    elif u.role != "assistant" and (m := _PLEASE.match(body)):
        verb, rest = words["asked_to"].format(who=to), m[1]
    else:
        verb, rest = None, body
    # Only the user's own "we" is the user and the assistant; a pasted chat's "we" names nobody we know.
    rest = third_person(rest, who, to, voices.lang, "user" if u.role == "user" and not u.speaker else "assistant")
    rest = _tidy(rest, lang) or rest
    if verb is None:
        if rest.lower().startswith((who.lower() + " ", who.lower() + "'s ")):
            return who + rest[len(who) :]  # "I'll swap the cable" is "Gading will swap the cable"
        if item:
            return f"{_capital(who)}: {_lower_first(rest, voices)}"
        verb = words["explained"] if u.role == "assistant" and not u.speaker else words["said"]
    return f"{who} {verb} {_lower_first(rest, voices)}"


# Indonesian instructions open with a verb: a root from this list, or a -kan / -lah imperative.
_ID_IMPERATIVE = re.compile(
    r"(?i)^(?:\W*\w+\W+){0,1}(?:tempel|taruh|cek|coba|pakai|pake|ganti|buka|simpan|hapus|buat|bikin|pasang|ambil|"
    r"catat|jangan|tanya|baca|lihat|kirim|isi|set|pilih|tulis|ketik|klik|jalankan|tunggu|mulai|anggap|biasakan|"
    r"\w{3,}kan|\w{3,}lah)(?!\w)"
)


def _instruction(body: str, lang: str) -> bool:
    return bool(digest._IMPERATIVE.search(body) or (lang == "id" and _ID_IMPERATIVE.match(body)))


# Chat particles and emoji carry tone, not content: a note leaves them out.
_ID_PARTICLES = re.compile(
    r"(?i)\s+(?:nih|sih|deh|dong|kok|lho|loh|tuh|yah|ya|kan|wkwk\w*|hehe\w*|haha\w*)(?=[\s,.;:!?]|$)"
)
_EMOJI = re.compile("[\U0001f000-\U0001faff\u2600-\u27bf\ufe0f]+")


def _tidy(text: str, lang: str) -> str:
    text = _EMOJI.sub("", text)
    if lang == "id":
        text = _ID_PARTICLES.sub("", text)
    return re.sub(r"\s+([,;:])", r"\1", re.sub(r"\s{2,}", " ", text)).strip(" ,;")


def _question(body: str, to: str, lang: str) -> tuple[str, str]:
    words = _WORDS[lang]
    if lang == "id":
        if m := _ID_HOW.match(body):
            return words["asked"], "cara " + m[1]
        return words["asked"], body
    if m := _EN_REQUEST.match(body):
        return words["asked_to"].format(who=to), m[1]
    if m := _EN_WH_TO.match(body):
        return words["asked"], f"{m[1].lower()} to {m[2]}"
    if m := _EN_WH_BE.match(body):
        return words["asked"], f"{m[1].lower()} {m[3]} {m[2].lower()}"
    if m := _EN_YES_NO.match(body):
        aux, neg, subject, rest = m[1].lower(), m[2] or "", m[3], m[4]
        if aux in ("do", "does", "did"):
            return words["asked"], f"whether {subject} {'did not ' if neg else ''}{rest}"
        return words["asked"], f"whether {subject} {aux}{' not' if neg else ''} {rest}"
    if m := _EN_WH_AUX.match(body):
        wh, aux, subject, rest = m[1].lower(), m[2].lower(), m[3], m[4]
        aux = "" if aux in ("do", "does", "did") else f" {aux}"
        return words["asked"], f"{wh} {subject}{aux} {rest}"
    if re.match(rf"(?i)^(?:{_WH})\b", body):
        return words["asked"], body
    return words["asked"], f"{words['about']} {body}" if len(body.split()) <= 4 else f"whether {body}"


def _suggestion(body: str, lang: str) -> str:
    """An instruction as what was suggested: "Use glob" -> "using glob"; Indonesian keeps it."""
    if lang == "id":
        return body
    m = re.match(r"(?i)^((?:\W*\w+\W+){0,2}?)([a-z]+)\b(.*)$", body)
    if not m or not digest._IMPERATIVE.match(m[2]):
        return body
    return f"{m[1]}{_gerund(m[2].lower())}{m[3]}"


def _gerund(verb: str) -> str:
    if verb.endswith("ie"):
        return verb[:-2] + "ying"
    if verb.endswith("e") and not verb.endswith(("ee", "ye", "oe")):
        return verb[:-1] + "ing"
    if re.fullmatch(r"[^aeiou]*[aeiou][bdgmnprt]", verb) and len(verb) <= 4:
        return verb + verb[-1] + "ing"  # set -> setting, run -> running
    return verb + "ing"


def _lower_first(text: str, voices: _Voices) -> str:
    first = re.match(r"[\w'#-]+", text)
    if not first:
        return text
    word = first[0]
    keep = (
        word in voices.proper
        or word == "I"
        or not word[:1].isupper()
        or any(c.isupper() or c.isdigit() for c in word[1:])
        or word.lower() in _TECH_NAMES
    )
    return text if keep else text[:1].lower() + text[1:]


_TECH_NAMES = frozenset(a.lower() for aliases in TECHNOLOGIES.values() for a in aliases) | frozenset(
    n.lower() for n in TECHNOLOGIES
)


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text


def paragraph(clauses: list[str]) -> str:
    """A thread's picked clauses (``clause``) as sentences of at most ``CLAUSES_PER_SENTENCE`` clauses each."""
    sentences = ["; ".join(clauses[i : i + CLAUSES_PER_SENTENCE]) for i in range(0, len(clauses), CLAUSES_PER_SENTENCE)]
    return " ".join(_capital(s.rstrip(" .;,:")) + "." for s in sentences)


# --- picking ----------------------------------------------------------------------------


def _pick(
    ths: list[Thread],
    voices: _Voices,
    read: Reading,
    limit: int,
    names: frozenset[str],
    listed: frozenset[int] = frozenset(),
) -> list[list[str]]:
    """Each thread's clauses for its paragraph, in time order: its opening, its answer, the rest of its opening, then
    MMR.

    ``listed``: the units the note lists as decisions or open items (by order); the rest of the paragraph leaves
    them to their list and says something else.
    """
    pool = [u for t in ths for u in t.units[:RANKED_PER_THREAD]]
    if not pool:
        return [[] for _ in ths]
    scores, vectors = digest.rank(pool, names, [read.words[u.order] for u in pool], [read.bags[u.order] for u in pool])
    index = {u.order: i for i, u in enumerate(pool)}
    thread_of = {u.order: k for k, t in enumerate(ths) for u in t.units[:RANKED_PER_THREAD]}
    keys = [digest._NON_WORDS.sub(" ", u.text.lower()).strip() for u in pool]
    clauses: dict[int, str] = {}  # a unit's clause is written only when it could be taken: most never are
    chosen: set[int] = set()
    taken: list[int] = []  # in the order taken
    said: set[str] = set()
    # A unit's redundancy is its greatest cosine with a taken unit; brought up to date only when it is weighed
    # (a maximum is the same whatever the order its values come in).
    redundancy = [0.0] * len(pool)
    seen = [0] * len(pool)  # how many of ``taken`` each unit's redundancy has met
    used = 0
    per_thread = Counter[int]()

    room = limit

    def fits(i: int) -> bool:
        if per_thread[thread_of[pool[i].order]] >= UNITS_PER_PARAGRAPH or keys[i] in said:
            return False
        if i not in clauses:
            clauses[i] = clause(pool[i], voices)
        return used + len(clauses[i]) + 2 <= room

    def take(i: int) -> None:
        nonlocal used
        chosen.add(i)
        taken.append(i)
        said.add(keys[i])
        used += len(clauses[i]) + 2  # written by fits(i), which every take follows
        per_thread[thread_of[pool[i].order]] += 1

    def weighed(i: int) -> float:
        for t in taken[seen[i] :]:
            redundancy[i] = max(redundancy[i], digest._cosine(vectors[i], vectors[t]))
        seen[i] = len(taken)
        return 0.7 * scores[i] - 0.3 * redundancy[i]

    def best(cands) -> int | None:
        fitting = [i for i in cands if i not in chosen and fits(i)]
        return max(fitting, key=lambda i: (weighed(i), -i)) if fitting else None

    members = [[index[u.order] for u in t.units[:RANKED_PER_THREAD]] for t in ths]
    order = sorted(range(len(ths)), key=lambda k: (-max(scores[i] for i in members[k]), k))
    for k in order:  # what the thread is about: its opening turn sets the topic
        openers = [i for i in members[k] if pool[i].turn == pool[members[k][0]].turn][:OPENING_UNITS]
        if (pick := best(openers)) is not None or (pick := best(members[k])) is not None:
            take(pick)
    room = int(limit * ANSWER_ROOM)  # a question and its answer belong together, even past the budget
    for k in order:  # the other side of the exchange: what came of the question
        picked = [i for i in members[k] if i in chosen]
        if not picked:
            continue
        first = pool[picked[0]]
        later = [i for i in members[k] if i > picked[0] and voices.of(pool[i]) != voices.of(first)]
        for turn in sorted({pool[i].turn for i in later})[:REPLY_TURNS]:  # the answer: the next turn that fits
            if (pick := best([i for i in later if pool[i].turn == turn])) is not None:
                take(pick)
                break
    room = limit
    for k in order:  # the rest of the opening turn, when it is short
        openers = [i for i in members[k] if pool[i].turn == pool[members[k][0]].turn][:OPENING_UNITS]
        for i in openers:
            if i not in chosen and fits(i) and pool[i].order not in listed:
                take(i)
    while (pick := best(i for i in range(len(pool)) if pool[i].order not in listed)) is not None:
        take(pick)
    out: list[list[str]] = [[] for _ in ths]
    for i in sorted(chosen):
        out[thread_of[pool[i].order]].append(clauses[i])
    return out


# --- title ------------------------------------------------------------------------------


def title(ths: list[Thread], proper: frozenset[str] = frozenset(), day_text: DayText | None = None) -> str | None:
    """The busiest threads' topics in one line: their technologies first, then their most distinctive words."""
    if not ths:
        return None
    df: Counter[str] = Counter()
    per: list[Counter[str]] = []
    surface: dict[str, Counter[str]] = {}
    for t in ths:
        bag: Counter[str] = Counter()
        for u in t.units[:RANKED_PER_THREAD]:
            for w in re.findall(r"[^\W\d_][\w'-]*[^\W_]|[^\W\d_]{2}", u.text):
                low = w.lower()
                if len(low) < 3 or low in EXTRACTOR_STOPWORDS or low in digest._FILLER or low in _TITLE_NOISE:
                    continue
                stem = digest._stem(low)
                bag[stem] += 1 if u.role == "assistant" else 2  # the user's words say what the thread was for
                keep = w.isupper() or w in proper or (w[:1].isupper() and low in _TECH_NAMES)
                surface.setdefault(stem, Counter())[w if keep else low] += 1
        per.append(bag)
        df.update(bag.keys())
    labels: list[str] = []
    seen: set[str] = set()
    biggest = sorted(range(len(ths)), key=lambda k: (-len(ths[k].units), k))[:TITLE_THREADS]
    size = 3 if len(biggest) == 1 else 2
    for k in sorted(biggest):
        bag = per[k]
        words = [w for w in _technologies(ths[k], day_text) if w.lower() not in seen][:size]
        seen.update(w.lower() for w in words)
        seen.update(digest._stem(x.lower()) for w in words for x in w.split())
        ranked = sorted(bag, key=lambda s: (-(bag[s] * math.log(1 + len(per) / df[s])), s))
        named = bool(words) and len(biggest) > 1  # on a day of threads, a thread's technologies name it well enough
        for stem in ranked:
            if len(words) >= size or named:
                break
            if stem in seen or surface[stem].most_common(1)[0][0].lower() in seen:
                continue
            seen.add(stem)
            words.append(surface[stem].most_common(1)[0][0])
        if words:
            labels.append(", ".join(words))
    joined = ""
    for label in labels:
        nxt = f"{joined}; {label}" if joined else label
        if len(nxt) > TITLE_MAX_CHARS:
            break
        joined = nxt
    return normalise_title(_capital(joined)) if joined else None


def _technologies(t: Thread, day_text: DayText | None) -> tuple[str, ...]:
    """The technologies a thread's sentences name, by ``extract_technologies``' order."""
    if day_text is None:
        return ()
    msgs = tuple(DayMessage(t.session_id, u.role, u.text, u.ts) for u in t.units[:RANKED_PER_THREAD])
    return extract_technologies(DayText(day_text.user_id, day_text.day, day_text.tz, msgs))


_TITLE_NOISE = frozenset(
    """
none null true false
like just really want need know think make get got going also would could should much many thing things something
way lot yes yeah okay sure well right one two time day today tomorrow yesterday mau bisa udah sudah aja juga lagi
kalau kalo terus buat bikin pakai pake ada ini itu yang dan atau tapi karena kayak gitu gini banget dulu nanti
""".split()
)


# --- decisions and open items ------------------------------------------------------------


def items(
    ths: list[Thread], voices: _Voices, speaker_of_turn: list[str], every: list[Unit] | None = None
) -> tuple[list[str], list[str], frozenset[int]]:
    """(decisions, open items, the listed units' orders) of the day's threads, in time order, each item a sentence
    in the third person.

    ``every``: all the day's units, filler too: "oke nanti aku tanya HR" is too short for a paragraph, but it is
    an open item.
    """
    # The next turn by someone else, per turn: a question is answered when it comes inside its thread.
    n = len(speaker_of_turn)
    next_other = [n] * (n + 1)
    for k in range(n - 2, -1, -1):
        next_other[k] = k + 1 if speaker_of_turn[k + 1] != speaker_of_turn[k] else next_other[k + 1]
    decisions: list[str] = []
    open_items: list[str] = []
    listed: set[int] = set()
    for t, us in zip(ths, _with_filler(ths, every), strict=True):
        raised: list[tuple[Unit, int]] = []  # this thread's open items: the unit, and its place in open_items
        every_kinds = [cues_of(u.text, role=u.role) for u in us]
        for j, u in enumerate(us):
            kinds = every_kinds[j]
            if "decision" in kinds:
                context = _context(u, us[max(0, j - CLOSE_WINDOW) : j], voices, set(), answer=True)
                decisions.append(_item(u, voices, "decision", context=context))
                listed.add(u.order)
            # a plan with its time ("besok pagi ke dokter aja") is decided and still to do
            plan = "decision" not in kinds or "promise" in _sorts(u.text, u.role)
            if "open" in kinds and u.role != "assistant" and plan:
                if _closed_later(u, us[j + 1 : j + 1 + CLOSE_WINDOW], every_kinds[j + 1 : j + 1 + CLOSE_WINDOW]):
                    continue
                before = us[max(0, j - CLOSE_WINDOW) : j]
                if (same := _follows(u, raised, voices)) is not None:  # "... masih merah di CI. besok aku benerin"
                    prev, at = same
                    open_items[at] = _item(u, voices, "open", context=prev)
                    raised[raised.index(same)] = (u, at)
                    listed.add(u.order)
                    continue
                context = _context(u, before, voices, {id(r) for r, _ in raised})
                raised.append((u, len(open_items)))
                listed.add(u.order)
                open_items.append(_item(u, voices, "open", context=context))
            elif u.text.endswith("?") and u.role == "user" and _unanswered(u, t, speaker_of_turn, next_other):
                if not _is_filler_unit(u):
                    open_items.append(_item(u, voices, "open"))
    return decisions, open_items, frozenset(listed)


def _with_filler(ths: list[Thread], every: list[Unit] | None) -> list[tuple[Unit, ...]]:
    """Each thread's units with the filler between them: a unit belongs to the last thread of its session that
    opened before it (or the session's first)."""
    if every is None:
        return [t.units for t in ths]
    opens: dict[str, tuple[list[int], list[int]]] = {}
    for k, t in enumerate(ths):
        orders, ks = opens.setdefault(t.session_id, ([], []))
        orders.append(t.units[0].order)
        ks.append(k)
    out: list[list[Unit]] = [[] for _ in ths]
    for u in every:
        if (found := opens.get(u.session_id)) is not None:
            orders, ks = found
            out[ks[max(0, bisect_right(orders, u.order) - 1)]].append(u)
    return [tuple(us) for us in out]


def _is_filler_unit(u: Unit) -> bool:
    return digest.is_filler(u.text)


def _follows(u: Unit, raised: list[tuple[Unit, int]], voices: _Voices) -> tuple[Unit, int] | None:
    """The speaker's open item just before ``u`` that ``u`` only takes further, if any: a short follow-up ("...
    masih merah di CI. besok aku benerin"), or a plan for it a few turns on ("remnya bunyi" ... "besok ke bengkel,
    sekalian cek kampas rem")."""
    if not raised:
        return None
    prev, at = raised[-1]
    if voices.of(prev) != voices.of(u):
        return None
    mine, theirs = content_terms(u.text), content_terms(prev.text)
    if prev.turn >= u.turn - 2 and len(mine - theirs) < 2:
        return prev, at
    plan = prev.turn >= u.turn - PLAN_TURNS and "promise" in _sorts(u.text, u.role)
    return (prev, at) if plan and _shared(prev.text, u.text)[0] else None


def _context(u: Unit, before: tuple[Unit, ...], voices: _Voices, raised: set[int], answer: bool = False) -> Unit | None:
    """For a short item, what it is about: the speaker's sentence before it ("sensor gerak di garasi baterainya
    tinggal 5%" ... "nanti beli baterai dulu"), else the other side's sentence just before that shares a word.

    ``answer``: a short choice ("restic aja") takes the other side's sentence first: the options it chose from.
    """
    mine = content_terms(u.text)
    if len(mine) >= CONTEXT_TERMS:
        return None
    near = [p for p in reversed(before) if p.turn >= u.turn - 2]
    other = next((p for p in near if voices.of(p) != voices.of(u) and mine & content_terms(p.text)), None)
    if answer and other is not None:
        return other
    own = next((p for p in near if voices.of(p) == voices.of(u)), None)
    if own is not None and id(own) not in raised and content_terms(own.text) and not cues_of(own.text, role=own.role):
        return own  # (a sentence with a cue of its own is an item of its own)
    return other


def _has_item_cue(sentence: str) -> bool:
    """A sentence too short for a paragraph that is still an item: "oke nanti aku tanya HR"."""
    return bool(cues_of(sentence) & {"open", "decision"}) and bool(content_terms(sentence))  # not "aku coba dulu"


def _closed_later(u: Unit, later: tuple[Unit, ...], kinds: Sequence[frozenset[str]]) -> bool:
    """An item raised and settled in the same thread ("belum jalan" ... "udah jalan") is not open.

    A few turns later, by the same speaker, one shared content word is enough ("gak bisa ping" ... "nah bisa! ping
    jalan"). ``kinds``: the cues of each of ``later``, read once per unit (only a sentence with a done or decision
    cue, and no open one, can settle anything).
    """
    for v, cue in zip(later, kinds, strict=True):
        if v.turn == u.turn or "open" in cue or not cue & {"done", "decision"}:
            continue
        if closes(u.text, v.text, role=v.role, share=IN_THREAD_SHARE):
            return True
        near = v.turn <= u.turn + SETTLED_TURNS and v.role == u.role and v.speaker == u.speaker
        if near and cue == {"done"} and content_terms(u.text) & content_terms(v.text):
            return True
    return False


def _unanswered(u: Unit, t: Thread, speaker_of_turn: list[str], next_other: list[int]) -> bool:
    """No later turn of the thread comes from anyone else: the question was left standing."""
    if speaker_of_turn[u.turn] != (u.speaker or u.role):
        return False  # a quoted question inside someone else's turn
    return next_other[u.turn] >= t.end_turn


# An item opens with its time ("nanti", "besok pagi", "tomorrow"): the note names the speaker first.
_WHEN = {
    "id": r"nanti|ntar|entar|nti|besok|lusa|abis ini|habis ini|setelah ini|minggu depan|bulan depan|malam ini|"
    r"malem ini|sore ini|weekend ini|akhir pekan ini|minggu ini",
    "en": r"tomorrow|later|tonight|next week|this weekend|after lunch|later today",
}
_WHEN_MORE = r"(?:\s+(?:pagi|siang|sore|malam|malem|ini|aja|saja|deh|dulu))*"
_LATER = frozenset({"nanti", "ntar", "entar", "nti"})  # "later": what "akan" already says
_ID_MODAL = re.compile(r"(?i)^(?:akan|mau|bakal|bakalan|harus|perlu|musti|mesti|pengen|ingin)\b")
_TODO = re.compile(r"(?i)^(?:todo|to-do|fixme|tbd|note to self)\b\s*[:\-]?\s*")
# What opens a sentence of chat but not an item: "tapi", "sama", "hmm", "oh iya".
_ITEM_OPENERS = re.compile(
    r"(?i)^(?:(?:jadi|tapi|tetapi|namun|sama|hmm+|btw|eh|oh iya|oh ya|iya|ya|oke|ok|sip|nah|terus|trus|yaudah|ya udah|"
    r"yasudah|but|and|also|"
    r"oh|well|so)\b[,.!]?\s+)+"
)
_CHOICE = re.compile(r"(?i)\s+(?:aja|saja|deh)(?=[\s,.;:!?]|$)")


def _item(u: Unit, voices: _Voices, kind: str, context: Unit | None = None) -> str:
    """An item as one sentence that names its speaker once: "Gading will check the restic snapshots on the NAS",
    "Pengguna akan cek harga minyak di aplikasi"; with ``context``, the sentence it takes further, in brackets."""
    text = _item_sentence(u, voices, kind)
    if context is not None:
        who, to = voices.of(context), voices.addressee(context)
        role = "user" if context.role == "user" and not context.speaker else "assistant"
        said = _ITEM_OPENERS.sub("", _bare(context.text)[0])
        said = _tidy(third_person(said, who, to, voices.lang, role), voices.lang)
        if said:
            text = f"{text} ({_lower_first(said, voices)})"
    return _capital(text.rstrip(" .;,:")) + "."


def _item_sentence(u: Unit, voices: _Voices, kind: str) -> str:
    lang = voices.lang
    who, to = voices.of(u), voices.addressee(u)
    body, end = _bare(u.text)
    body = _ITEM_OPENERS.sub("", _OPENERS.sub("", body)) or body
    todo = _TODO.match(body)
    if end.startswith("?") or (u.role == "assistant" and not todo):
        return clause(u, voices)  # "asked whether ...", "suggested ..."
    if todo:
        body = body[todo.end() :] or body
    role = "user" if u.role == "user" and not u.speaker else "assistant"
    rest = _tidy(third_person(body, who, to, lang, role), lang) or body
    if lang == "id" and kind == "decision":
        rest = _CHOICE.sub("", rest).strip(" ,;") or rest
    low = rest.lower()
    if low.startswith((who.lower() + " ", who.lower() + "'s ")):
        return who + rest[len(who) :]  # "I'll swap the cable" is "Gading will swap the cable"
    if m := re.match(
        rf"(?i)^(?P<when>(?:{_WHEN[lang]}){_WHEN_MORE})[,]?\s+(?P<who>{re.escape(who)}\s+)?(?P<rest>.+)$", rest
    ):
        whole, when, rest = rest, m["when"], m["rest"]
        if lang == "en":
            if m["who"]:
                return f"{who} {rest} {when.lower()}"  # "tomorrow Gading will call": "Gading will call tomorrow"
            if _starts_with_verb(rest, lang):
                return f"{who} will {_lower_first(rest, voices)} {when.lower()}"
            return f"According to {who}, {_lower_first(whole, voices)}"
        will = "" if _ID_MODAL.match(rest) else "akan "
        when = "" if when.lower() in _LATER else when.lower() + " "
        return f"{who} {when}{will}{_lower_first(rest, voices)}"
    if kind == "open" and (todo or _starts_with_verb(rest, lang)):
        will = "akan" if lang == "id" else "will"
        return f"{who} {'' if lang == 'id' and _ID_MODAL.match(rest) else will + ' '}{_lower_first(rest, voices)}"
    if who.lower() in low:
        return rest  # "restore-nya belum jalan, nanti Gading cek": the speaker is named already
    if kind == "decision":
        if lang == "id":
            return f"{who} memutuskan {_lower_first(rest, voices)}"
        if m := re.match(r"(?i)^let's\s+(.+)$", rest):
            return f"{who} decided to {m[1]}"
        return f"{who} decided: {_lower_first(rest, voices)}"
    return f"{'Menurut' if lang == 'id' else 'According to'} {who}, {_lower_first(rest, voices)}"


def _starts_with_verb(text: str, lang: str) -> bool:
    """Whether an item opens with what is to be done ("check the snapshots", "beli baterai")."""
    return bool(_TODO_VERBS[lang].match(text))


_TODO_VERBS = {
    "id": re.compile(
        r"(?i)^(?:beli|cek|ngecek|tanya|nanya|tanyain|tes|test|ngetes|coba|ganti|pasang|bayar|kirim|bikin|buat|pesan|"
        r"pesen|telpon|telepon|hubungi|kabarin|benerin|beresin|perbaiki|install|instal|update|upgrade|backup|bawa|urus|"
        r"ambil|cari|daftar|jadwalin|siapin|lihat|liat|periksa|baca|catat|ukur|servis|service|restart|migrasi|pindah)\b"
    ),
    "en": re.compile(
        r"(?i)^(?:check|look|fix|test|try|ask|call|buy|order|replace|update|upgrade|install|renew|rotate|book|email|"
        r"write|send|finish|review|schedule|move|clean|back|migrate|set|add|remove|find|read|pay|file|cancel|follow|"
        r"debug|investigate|restart|run|verify|confirm)\b"
    ),
}


def _same_item(item: str, others: list[frozenset[str]]) -> bool:
    """Whether ``item`` says what one of ``others`` (their content terms) says: nearly the same words."""
    mine = content_terms(item)
    return any(mine and len(mine & t) >= 0.8 * len(mine | t) for t in others)


def _bounded_items(name: str, found: list[str]) -> tuple[str, ...]:
    most, longest = ITEM_BOUNDS[name]
    fitting = [f if len(f) <= longest else f[: longest - 4].rsplit(" ", 1)[0] + " ..." for f in found]
    return normalise_items(name, fitting[:most] if len(fitting) <= most else fitting[-most:])


# --- the note ---------------------------------------------------------------------------


def write_note(
    day_text: DayText, max_chars: int = DEFAULT_MAX_CHARS, people: tuple[str, ...] | None = None
) -> Note | None:
    """The day's note (see the module docstring); None when no sentence of the day is worth writing.

    ``people``: the day's ``extract_people``, when the caller has them already.
    """
    lang = digest.day_language(day_text)
    every = digest.units(day_text, code=True, keep=_has_item_cue)
    people = extract_people(day_text) if people is None else people
    names = frozenset(w.lower() for p in people for w in p.split())
    names |= frozenset(w.lower() for u in every if u.speaker for w in u.speaker.split())
    read = Reading.of(every, names)  # the threads and the ranking share it
    ths = threads(every, names, read)
    if not ths:
        return None
    voices = _voices(day_text, every, lang, people)
    written = sorted(ths, key=lambda t: (-len(t.units), t.units[0].order))[:SUMMARY_PARAGRAPHS]
    written.sort(key=lambda t: t.units[0].order)
    limit = _budget(day_text, max_chars)
    if len(written) > 1:  # every thread gets its paragraph
        limit = max(limit, min(SUMMARY_MAX_CHARS - _SLACK, PER_THREAD * len(written)))
    readable = readable_messages(day_text)
    speakers = digest._speakers(readable)
    speaker_of_turn = [_turn_speaker(m.content, m.role, speakers) for m in readable]
    decisions, open_items, listed = items(ths, voices, speaker_of_turn, every)
    picked = _pick(written, voices, read, limit, names, listed)
    # A day that says the same words again and again reads as a loop: fewer paragraphs, then one unit each.
    summary = None
    for per in (UNITS_PER_PARAGRAPH, 1):
        paragraphs = [paragraph(cs[:per]) for cs in picked if cs]
        for k in range(len(paragraphs), 0, -1):
            if summary := normalise_summary("\n\n".join(paragraphs[:k])):
                break
        if summary:
            break
    if summary is None:
        return None
    opened = _bounded_items("open_items", open_items)
    open_terms = [content_terms(item) for item in opened]
    return Note(
        title=title(written, voices.proper, day_text) or day_text.day.isoformat(),
        language=lang,
        summary=summary,
        # a plan with its time is listed once, as still to do
        decisions=tuple(d for d in _bounded_items("decisions", decisions) if not _same_item(d, open_terms)),
        open_items=opened,
    )


def _budget(day_text: DayText, max_chars: int) -> int:
    """``digest.budget`` with the note's own floor: a short exchange gets a short paragraph."""
    readable = readable_messages(day_text)
    size = sum(len(m.content) for m in readable)
    sessions = len({m.session_id for m in readable})
    return int(min(max_chars, SUMMARY_MAX_CHARS, max(MIN_CHARS, SHARE * size, digest.PER_SESSION * sessions)))


def _turn_speaker(content: str, role: str, speakers: frozenset[str]) -> str:
    m = SPEAKER_PREFIX.match(content)
    return m["name"] if m and m["name"] in speakers else role
