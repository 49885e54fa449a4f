"""Regex lists kenang ships as data files under ``schemas/data/``.

``INJECTION_PATTERNS`` maps each prompt-injection kind to its compiled patterns, read
from ``injection_patterns.yaml``; ``transforms.injection`` uses them to flag text that
reads like a prompt override. The file is data so the lists can grow without touching
code; its comments say why each pattern is as narrow as it is. ``INJECTION_GATES``
pairs each pattern with the substrings every match of it contains, derived from the
pattern itself, so a prefilter can skip the patterns a text cannot match. ``gate``
derives them for any pattern, and ``Prefilter`` finds which of many gated patterns a
text admits in one pass over their substrings; ``transforms.redact`` gates its
recognisers the same way.

Invariants:

- Loaded and compiled once, on import. A malformed file fails the import with a
  ``ValueError`` naming the kind, not the first message that gets scanned.
- Every pattern is compiled ``IGNORECASE | MULTILINE``; a pattern that must be
  case-sensitive (``DAN``, since Indonesian "dan" means "and") says so inline with
  ``(?-i:...)``. ``^`` means the start of a line.
- The mapping and its tuples are read-only to callers by convention: nothing mutates
  them after import.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from importlib.resources import files
from re import _constants, _parser  # type: ignore[attr-defined]  # the stdlib's regex parser (3.11+); typeshed has no stubs

import yaml

_FLAGS = re.IGNORECASE | re.MULTILINE


def _load_patterns(name: str) -> dict[str, tuple[re.Pattern[str], ...]]:
    text = files(__package__).joinpath("data", name).read_text(encoding="utf-8")
    data = yaml.safe_load(text)
    if not isinstance(data, dict) or not data:
        raise ValueError(f"{name}: expected a mapping of kind -> list of regexes")
    compiled: dict[str, tuple[re.Pattern[str], ...]] = {}
    for kind, patterns in data.items():
        if not isinstance(patterns, list) or not patterns or not all(isinstance(p, str) for p in patterns):
            raise ValueError(f"{name}: {kind!r} must be a non-empty list of regex strings")
        try:
            compiled[str(kind)] = tuple(re.compile(p, _FLAGS) for p in patterns)
        except re.error as exc:
            raise ValueError(f"{name}: {kind!r} has a bad regex: {exc}") from exc
    return compiled


INJECTION_PATTERNS: dict[str, tuple[re.Pattern[str], ...]] = _load_patterns("injection_patterns.yaml")

#: One alternation per kind, so a message is scanned once per kind instead of once per
#: pattern (the patterns use no backreferences or group names, so joining is safe).
INJECTION_COMBINED: dict[str, re.Pattern[str]] = {
    kind: re.compile("|".join(f"(?:{p.pattern})" for p in patterns), _FLAGS)
    for kind, patterns in INJECTION_PATTERNS.items()
}


# --- prefilter: the substrings each pattern needs ------------------------------------
#
# Most messages hold none of the words the patterns are built around, and a regex
# costs far more than a substring check. So each pattern gets the set of substrings
# one of which is in every text it matches, derived from its parse tree (never
# written by hand), and transforms.injection runs a pattern only on a text that holds
# one of them.

_IGNORECASE = _constants.SRE_FLAG_IGNORECASE

#: The characters on which re.IGNORECASE and str.lower disagree about a needed
#: substring's characters ("ı" and "İ" match "i", "ſ" matches "s", the Kelvin sign
#: matches "k"; tests/test_injection.py checks every code point). A text holding one
#: of them must skip the prefilter.
FOLD_UNSAFE = re.compile("[\u0130\u0131\u017f\u212a]")


def fold_unsafe(text: str) -> bool:
    """Whether ``text`` holds a ``FOLD_UNSAFE`` character."""
    # All four are non-ASCII, and str.isascii is a flag read, not a scan.
    return not text.isascii() and FOLD_UNSAFE.search(text) is not None


_ZERO_WIDTH = (_constants.AT, _constants.ASSERT, _constants.ASSERT_NOT)
_REPEATS = (_constants.MAX_REPEAT, _constants.MIN_REPEAT, _constants.POSSESSIVE_REPEAT)
_MAX_SPELLINGS = 32  # a run of fixed text with more spellings than this is cut in two

# A spelling is (text, exact): exact when every character was matched case-sensitively.
_Spellings = frozenset[tuple[str, bool]]
_EMPTY: _Spellings = frozenset({("", True)})


@dataclass(frozen=True)
class Gate:
    """A pattern and the substrings one of which is in every text it matches.

    ``needs`` holds the case-insensitive substrings, lower-cased; ``exact`` the
    case-sensitive ones, as written. Each of their characters is ASCII or has no case
    at all, so ``transforms.injection`` may test ``needs`` against the text's
    ``str.lower()``. Both empty: nothing could be derived, and the pattern always runs.
    """

    kind: str
    pattern: re.Pattern[str]
    needs: frozenset[str]
    exact: frozenset[str]

    def admits(self, text: str) -> bool:
        """Whether ``pattern`` could match ``text``: it holds a needed substring, or nothing was derived."""
        if not self.needs and not self.exact or fold_unsafe(text):
            return True
        needs, exact = self._lookups
        if needs:
            low = text.lower()
            for s in needs:
                if s in low:
                    return True
        for s in exact:
            if s in text:
                return True
        return False

    @cached_property
    def _lookups(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        # A substring that contains another needs no look of its own: "password" is in
        # no text that lacks "pass". Loops, not any(): admits runs on every message.
        return _innermost(self.needs), _innermost(self.exact)


class Prefilter:
    """Which of many gates' patterns could match a text, in one pass over their substrings.

    Each distinct substring is looked up once, not once per pattern; of a gate's
    substrings, one that contains another is dropped (the shorter is in every text the
    longer is). A text holding a ``FOLD_UNSAFE`` character admits every gate.

    The substrings are filed under their rarest character (``_COMMON``): a text without
    ``_`` skips every substring that holds one with a single lookup, so a message of
    plain prose checks a handful of substrings instead of all of them. The result is the
    same as checking each.
    """

    def __init__(self, gates: tuple[Gate, ...]) -> None:
        self.gates = gates
        self._always = frozenset(i for i, g in enumerate(gates) if not g.needs and not g.exact)
        self._needs = _by_substring(gates, lambda g: g.needs)
        self._exact = _by_substring(gates, lambda g: g.exact)
        self._needs_by_char = _by_rare_char(self._needs)
        self._exact_by_char = _by_rare_char(self._exact)

    def admitted(self, text: str) -> set[int]:
        """The indices of the gates whose pattern could match ``text``."""
        if fold_unsafe(text):
            return set(range(len(self.gates)))
        low = text.lower()
        out = set(self._always)
        for source, groups in ((low, self._needs_by_char), (text, self._exact_by_char)):
            for ch, subs in groups:
                if ch in source:
                    for s, ids in subs:
                        if s in source:
                            out.update(ids)
        return out


#: Characters by how often they appear in chat prose, most common first; any other
#: character (``_``, ``-``, digits, ``=``) counts as rarer than all of them.
_COMMON = " etaoinsrhldcumfpgwybvkxjqz.,ETAOINSRHLDCUMFPGWYBVKXJQZ"


def _by_rare_char(
    subs: tuple[tuple[str, tuple[int, ...]], ...],
) -> tuple[tuple[str, tuple[tuple[str, tuple[int, ...]], ...]], ...]:
    """Each substring filed under its rarest character: (character, ((substring, gate ids), ...))."""
    out: dict[str, list[tuple[str, tuple[int, ...]]]] = {}
    for s, ids in subs:
        if not s:
            continue
        ch = max(s, key=lambda c: (_COMMON.find(c) if c in _COMMON else len(_COMMON), c))
        out.setdefault(ch, []).append((s, ids))
    return tuple((ch, tuple(group)) for ch, group in out.items())


def _innermost(subs: frozenset[str]) -> tuple[str, ...]:
    """``subs`` less each one that contains another (the shorter is in every text the longer is), sorted."""
    return tuple(sorted(s for s in subs if not any(o != s and o in s for o in subs)))


def _by_substring(
    gates: tuple[Gate, ...], pick: Callable[[Gate], frozenset[str]]
) -> tuple[tuple[str, tuple[int, ...]], ...]:
    """Each needed substring, with the indices of the gates that need it."""
    out: dict[str, list[int]] = {}
    for i, g in enumerate(gates):
        for s in _innermost(pick(g)):
            out.setdefault(s, []).append(i)
    return tuple((s, tuple(ids)) for s, ids in out.items())


def _foldable(ch: str) -> bool:
    """ASCII, or a character with no case: str.lower and re.IGNORECASE agree on it."""
    return ch.isascii() or (ch.lower() == ch and ch.upper() == ch)


def _product(left: _Spellings, right: _Spellings) -> _Spellings:
    return frozenset((a + b, ea and eb) for a, ea in left for b, eb in right)


def _union(alts: list[_Spellings | None]) -> _Spellings | None:
    """The spellings of a branch: those of every alternative; None if one alternative has none."""
    known = [a for a in alts if a is not None]
    return frozenset().union(*known) if len(known) == len(alts) else None


def _fixed(items, ignorecase: bool) -> _Spellings | None:
    """Every text ``items`` can match, if that is a few fixed strings; else None."""
    out = _EMPTY
    for op, av in items:
        if op in _ZERO_WIDTH:
            continue
        one: _Spellings | None
        if op is _constants.LITERAL and _foldable(chr(av)):
            one = frozenset({(chr(av), not ignorecase)})
        elif op is _constants.IN and all(o is _constants.LITERAL and _foldable(chr(c)) for o, c in av):
            one = frozenset((chr(c), not ignorecase) for _, c in av)
        elif op is _constants.SUBPATTERN:
            one = _fixed(av[3], _flags(ignorecase, av))
        elif op is _constants.BRANCH:
            one = _union([_fixed(alt, ignorecase) for alt in av[1]])
        else:
            return None
        if one is None:
            return None
        out = _product(out, one)
        if len(out) > _MAX_SPELLINGS:
            return None
    return out


def _needed(items, ignorecase: bool) -> _Spellings | None:
    """Spellings one of which every match of ``items`` contains; None if none could be derived.

    Consecutive fixed items join into one run; a group, a repeat taken at least once,
    and a branch whose every alternative needs something, need what their insides
    need. Of these candidates the one whose shortest spelling is longest is kept (a
    case-sensitive spelling with a letter counts as longer: "DAN" is rarer than "dan",
    but a case-sensitive " " is as common as any space).
    """
    candidates: list[_Spellings | None] = []
    run = _EMPTY
    for item in items:
        op, av = item
        if op in _ZERO_WIDTH:
            continue  # consumes nothing: the text around it stays one run
        one = _fixed([item], ignorecase)
        if one is not None:
            if len(run) * len(one) > _MAX_SPELLINGS:
                candidates.append(run)
                run = _EMPTY
            run = _product(run, one)
            continue
        candidates.append(run)
        run = _EMPTY
        if op is _constants.SUBPATTERN:
            candidates.append(_needed(av[3], _flags(ignorecase, av)))
        elif op is _constants.BRANCH:
            candidates.append(_union([_needed(alt, ignorecase) for alt in av[1]]))
        elif op in _REPEATS and av[0] >= 1:
            candidates.append(_needed(av[2], ignorecase))
    candidates.append(run)
    usable = [c for c in candidates if c and all(text for text, _ in c)]
    if not usable:
        return None
    return max(usable, key=lambda c: (min(len(text) + 3 * (exact and _cased(text)) for text, exact in c), -len(c)))


def _cased(text: str) -> bool:
    return text.lower() != text.upper()


def _flags(ignorecase: bool, subpattern_av) -> bool:
    """IGNORECASE inside a group that may set or clear it, as in ``(?-i:DAN)``."""
    _group, add, remove, _items = subpattern_av
    return bool(add & _IGNORECASE) or (ignorecase and not remove & _IGNORECASE)


def gate(kind: str, pattern: re.Pattern[str]) -> Gate:
    """``pattern`` with the substrings it needs (none when they cannot be derived)."""
    spellings = _needed(_parser.parse(pattern.pattern, pattern.flags), bool(pattern.flags & _IGNORECASE)) or ()
    return Gate(
        kind,
        pattern,
        needs=frozenset(text.lower() for text, exact in spellings if not exact),
        exact=frozenset(text for text, exact in spellings if exact),
    )


#: Every pattern with the substrings it needs, for the prefilter in ``transforms.injection``.
INJECTION_GATES: tuple[Gate, ...] = tuple(
    gate(kind, p) for kind, patterns in INJECTION_PATTERNS.items() for p in patterns
)
