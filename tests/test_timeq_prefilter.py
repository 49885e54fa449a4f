"""timeq tries a rule only on a text that holds what the rule needs, and reads the same.

Each rule's needs are read from its own pattern (``timeq._needs``): sets of strings
such that every match holds one string of each set. A text without them is not
searched with that rule. These tests hold the gate to changing nothing: every match of
every rule holds its needs, and the gated reading (``parse`` and ``relative``) equals the
reading with every rule tried, on the phrase tables of the grammar and on generated text.
"""

from __future__ import annotations

import datetime as dt
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_dates_one_grammar import ANCHOR, MEANINGS
from test_timeq import CASES, FRAGMENTS

from transforms import timeq

# Every phrase the grammar's tables hold, in the case written and in capitals, alone and in a sentence.
PHRASES = sorted({q for q, *_ in CASES} | set(MEANINGS) | set(FRAGMENTS))
TEXTS = [
    *PHRASES,
    *(p.upper() for p in PHRASES),
    *(f"Backup gagal {p}, ya." for p in PHRASES),
    *(f"(we met {p}); then {p}!" for p in PHRASES),
    "ｌａｓｔ ｗｅｅｋ and ３ ｄａｙｓ ａｇｏ",  # full-width: matched on the NFKC text
    "İstanbul trip kemarin, ﬁnal call tomorrow",  # İ lower-cases to two characters
    "ΣΟΦΙΑ said 2 hari lalu; ok 👍 minggu depan",
]


def _ungated(text: str, today: dt.date) -> list[tuple[int, int, tuple, bool]]:
    """The candidates chosen with every rule tried, as (start, end, found, relative)."""
    normal, _ = timeq._normalise(text)
    everything = timeq._candidates(normal, today, list(enumerate(timeq.RULES)))
    return [(c.start, c.end, c.found, c.relative) for c in timeq._leftmost_longest(everything)]


def _gated(text: str, today: dt.date, *, relative_only: bool = False) -> list[tuple[int, int, tuple, bool]]:
    _, chosen, _ = timeq._read(text, today, relative_only=relative_only)
    return [(c.start, c.end, c.found, c.relative) for c in chosen]


def test_every_rule_knows_what_it_needs():
    # An empty tuple is safe (the rule is always tried) but slow: this Python's parser
    # must still give every rule its needs.
    assert all(rule.needs for rule in timeq.RULES)
    units_ago = [rule.needs for rule in timeq.RULES if rule.read.__name__ == "_units_ago"]
    assert units_ago == [
        (frozenset({"hari", "minggu", "pekan", "bulan", "tahun"}), frozenset({"lalu"})),  # "3 hari (yang) lalu"
        (frozenset({"day", "week", "month", "year"}), frozenset({"ago"})),  # "3 days ago"
    ]


@pytest.mark.parametrize("text", TEXTS)
def test_every_match_of_every_rule_holds_what_the_rule_needs(text):
    normal, _ = timeq._normalise(text)
    for rule in timeq.RULES:
        for m in rule.pattern.finditer(normal):
            for need in rule.needs:
                assert any(w in m.group() for w in need), (rule.read.__name__, m.group(), sorted(need))


@pytest.mark.parametrize("text", TEXTS)
def test_the_gate_reads_each_phrase_as_every_rule_would(text):
    for today in (ANCHOR, dt.date(2026, 7, 20), dt.date(2026, 1, 2)):
        everything = _ungated(text, today)
        assert _gated(text, today) == everything
        assert [c for c in _gated(text, today, relative_only=True) if c[3]] == [c for c in everything if c[3]]


texts = st.one_of(
    st.text(),
    st.lists(
        st.sampled_from([*FRAGMENTS, *sorted(timeq._ALL_NEEDED), "kemarin,", "(last", "ＷＥＥＫ", "\n"]), max_size=10
    ).map(" ".join),
    st.lists(st.sampled_from([*FRAGMENTS, *sorted(timeq._ALL_NEEDED)]), max_size=8).map("".join),
)


@settings(max_examples=400, deadline=None)
@given(texts, st.dates(min_value=dt.date(1901, 1, 1), max_value=dt.date(2098, 12, 31)))
def test_the_gate_never_drops_a_reading_of_generated_text(text, today):
    everything = _ungated(text, today)
    assert _gated(text, today) == everything
    assert [c for c in _gated(text, today, relative_only=True) if c[3]] == [c for c in everything if c[3]]


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_the_normal_text_is_each_characters_nfkc_lower_case(text):
    chars = [unicodedata.normalize("NFKC", ch).lower() for ch in text]
    normal, origin = timeq._normalise(text)
    assert normal == "".join(chars)
    assert list(origin) == [i for i, piece in enumerate(chars) for _ in piece]
