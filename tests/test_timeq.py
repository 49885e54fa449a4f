"""Reading the time a recall query talks about: every case checked against a calendar by hand.

Reference days: 2026-07-20 is a Monday, 2026-07-22 a Wednesday, 2026-07-19 a Sunday,
2026-01-02 a Friday, 2026-03-30 a Monday, 2028-03-01 a Wednesday.
"""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from transforms.timeq import DAY_WORDS, MONTHS, PRECISIONS, ZH_WORDS, TimeQuery, TimeRange, explain, parse

D = dt.date
MON = D(2026, 7, 20)
WED = D(2026, 7, 22)
SUN = D(2026, 7, 19)
JAN2 = D(2026, 1, 2)

CASES = [
    # English: days
    ("what did we discuss today", MON, D(2026, 7, 20), D(2026, 7, 20)),
    ("what did I ask yesterday?", MON, D(2026, 7, 19), D(2026, 7, 19)),
    ("the day before yesterday", MON, D(2026, 7, 18), D(2026, 7, 18)),
    ("what did we say last night", MON, D(2026, 7, 19), D(2026, 7, 19)),
    ("plans for tomorrow", MON, D(2026, 7, 21), D(2026, 7, 21)),
    ("3 days ago", MON, D(2026, 7, 17), D(2026, 7, 17)),
    ("a few days ago", MON, D(2026, 7, 17), D(2026, 7, 17)),
    ("several days ago", MON, D(2026, 7, 15), D(2026, 7, 18)),
    ("in the past 3 days", MON, D(2026, 7, 17), D(2026, 7, 20)),
    # English: weeks, months, years
    ("two weeks ago", MON, D(2026, 7, 6), D(2026, 7, 12)),
    ("a couple of weeks ago", WED, D(2026, 7, 6), D(2026, 7, 12)),
    ("last week", MON, D(2026, 7, 13), D(2026, 7, 19)),
    ("last week", JAN2, D(2025, 12, 22), D(2025, 12, 28)),
    ("this week", WED, D(2026, 7, 20), D(2026, 7, 26)),
    ("next week", WED, D(2026, 7, 27), D(2026, 8, 2)),
    ("earlier this week", WED, D(2026, 7, 20), D(2026, 7, 21)),
    ("earlier this week", MON, D(2026, 7, 20), D(2026, 7, 20)),
    ("a month ago", MON, D(2026, 6, 1), D(2026, 6, 30)),
    ("last month", JAN2, D(2025, 12, 1), D(2025, 12, 31)),
    ("this year", MON, D(2026, 1, 1), D(2026, 12, 31)),
    ("two years ago", MON, D(2024, 1, 1), D(2024, 12, 31)),
    # English: weekends and weekdays
    ("over the weekend", MON, D(2026, 7, 18), D(2026, 7, 19)),
    ("last weekend", SUN, D(2026, 7, 11), D(2026, 7, 12)),
    ("this weekend", WED, D(2026, 7, 25), D(2026, 7, 26)),
    ("What did we discuss last Saturday?", MON, D(2026, 7, 18), D(2026, 7, 18)),
    ("on Monday", MON, D(2026, 7, 13), D(2026, 7, 13)),
    ("Friday", WED, D(2026, 7, 17), D(2026, 7, 17)),
    ("this Monday", WED, D(2026, 7, 20), D(2026, 7, 20)),
    ("this Saturday", WED, D(2026, 7, 25), D(2026, 7, 25)),
    ("next Saturday", WED, D(2026, 7, 25), D(2026, 7, 25)),
    ("Tuesday of last week", WED, D(2026, 7, 14), D(2026, 7, 14)),
    # English: months and dates
    ("in May", MON, D(2026, 5, 1), D(2026, 5, 31)),
    ("in December", MON, D(2025, 12, 1), D(2025, 12, 31)),
    ("in July", MON, D(2026, 7, 1), D(2026, 7, 31)),
    ("May I ask what we did on May 2nd?", MON, D(2026, 5, 2), D(2026, 5, 2)),
    ("early March", MON, D(2026, 3, 1), D(2026, 3, 10)),
    ("mid-May 2023", MON, D(2023, 5, 11), D(2023, 5, 20)),
    ("late February 2024", MON, D(2024, 2, 21), D(2024, 2, 29)),
    ("the end of last month", MON, D(2026, 6, 21), D(2026, 6, 30)),
    ("last May", D(2026, 5, 10), D(2025, 5, 1), D(2025, 5, 31)),
    ("May last year", MON, D(2025, 5, 1), D(2025, 5, 31)),
    ("March 2023", MON, D(2023, 3, 1), D(2023, 3, 31)),
    ("July 25", MON, D(2025, 7, 25), D(2025, 7, 25)),
    ("Jan 5th, 2024", MON, D(2024, 1, 5), D(2024, 1, 5)),
    ("the 2nd of May 2023", MON, D(2023, 5, 2), D(2023, 5, 2)),
    ("3 Sep", MON, D(2025, 9, 3), D(2025, 9, 3)),
    ("Feb 29", MON, D(2024, 2, 29), D(2024, 2, 29)),
    ("what did we say on the 14th", MON, D(2026, 7, 14), D(2026, 7, 14)),
    ("2023-05-02", MON, D(2023, 5, 2), D(2023, 5, 2)),
    ("in 2023", MON, D(2023, 1, 1), D(2023, 12, 31)),
    ("during 2023", MON, D(2023, 1, 1), D(2023, 12, 31)),
    ("since May", MON, D(2026, 5, 1), D(2026, 7, 20)),
    ("after May", MON, D(2026, 6, 1), D(2026, 7, 20)),
    # Indonesian: days
    ("apa yang kita bahas hari ini", MON, D(2026, 7, 20), D(2026, 7, 20)),
    ("yang tadi", MON, D(2026, 7, 20), D(2026, 7, 20)),
    ("kemarin kita ngobrol apa", MON, D(2026, 7, 19), D(2026, 7, 19)),
    ("kemarin lusa", MON, D(2026, 7, 18), D(2026, 7, 18)),
    ("lusa", MON, D(2026, 7, 22), D(2026, 7, 22)),
    ("besok", MON, D(2026, 7, 21), D(2026, 7, 21)),
    ("3 hari lalu", MON, D(2026, 7, 17), D(2026, 7, 17)),
    ("tiga hari yang lalu", MON, D(2026, 7, 17), D(2026, 7, 17)),
    ("dua belas hari lalu", MON, D(2026, 7, 8), D(2026, 7, 8)),
    ("sehari yang lalu", MON, D(2026, 7, 19), D(2026, 7, 19)),
    ("beberapa hari lalu", MON, D(2026, 7, 15), D(2026, 7, 18)),
    ("sejak kemarin", MON, D(2026, 7, 19), D(2026, 7, 20)),
    ("5 hari terakhir", MON, D(2026, 7, 15), D(2026, 7, 20)),
    # Indonesian: weeks, months, years
    ("seminggu yang lalu", MON, D(2026, 7, 13), D(2026, 7, 19)),
    ("2 minggu lalu", MON, D(2026, 7, 6), D(2026, 7, 12)),
    ("Minggu lalu kita bahas apa", MON, D(2026, 7, 13), D(2026, 7, 19)),
    ("minggu kemarin", MON, D(2026, 7, 13), D(2026, 7, 19)),
    ("pekan depan", MON, D(2026, 7, 27), D(2026, 8, 2)),
    ("sebulan lalu", MON, D(2026, 6, 1), D(2026, 6, 30)),
    ("bulan lalu", D(2026, 1, 15), D(2025, 12, 1), D(2025, 12, 31)),
    ("bulan ini", MON, D(2026, 7, 1), D(2026, 7, 31)),
    ("tahun lalu", MON, D(2025, 1, 1), D(2025, 12, 31)),
    ("akhir tahun lalu", MON, D(2025, 9, 1), D(2025, 12, 31)),
    # Indonesian: weekends and weekdays
    ("akhir pekan lalu", MON, D(2026, 7, 18), D(2026, 7, 19)),
    ("akhir pekan kemarin", WED, D(2026, 7, 18), D(2026, 7, 19)),
    ("hari Minggu lalu", WED, D(2026, 7, 19), D(2026, 7, 19)),
    ("hari Minggu", MON, D(2026, 7, 19), D(2026, 7, 19)),
    ("Sabtu kemarin", MON, D(2026, 7, 18), D(2026, 7, 18)),
    ("Jum'at lalu", MON, D(2026, 7, 17), D(2026, 7, 17)),
    ("hari Senin", MON, D(2026, 7, 13), D(2026, 7, 13)),
    ("Senin ini", WED, D(2026, 7, 20), D(2026, 7, 20)),
    ("Senin depan", MON, D(2026, 7, 27), D(2026, 7, 27)),
    ("Kamis minggu lalu", MON, D(2026, 7, 16), D(2026, 7, 16)),
    # Indonesian: months and dates
    ("bulan Mei", MON, D(2026, 5, 1), D(2026, 5, 31)),
    ("bulan Desember", MON, D(2025, 12, 1), D(2025, 12, 31)),
    ("Mei 2023", MON, D(2023, 5, 1), D(2023, 5, 31)),
    ("awal Maret", MON, D(2026, 3, 1), D(2026, 3, 10)),
    ("pertengahan Agustus 2025", MON, D(2025, 8, 11), D(2025, 8, 20)),
    ("akhir bulan lalu", MON, D(2026, 6, 21), D(2026, 6, 30)),
    ("Mei tahun lalu", MON, D(2025, 5, 1), D(2025, 5, 31)),
    ("tanggal 14", MON, D(2026, 7, 14), D(2026, 7, 14)),
    ("tanggal 31", MON, D(2026, 5, 31), D(2026, 5, 31)),
    ("tanggal 31", D(2026, 3, 30), D(2026, 1, 31), D(2026, 1, 31)),
    ("tanggal 14 Juli 2026", MON, D(2026, 7, 14), D(2026, 7, 14)),
    ("14 Juli", MON, D(2026, 7, 14), D(2026, 7, 14)),
    ("25 Juli", MON, D(2025, 7, 25), D(2025, 7, 25)),
    ("pada 2 Mei", MON, D(2026, 5, 2), D(2026, 5, 2)),
    ("5 Agt 2024", MON, D(2024, 8, 5), D(2024, 8, 5)),
    ("29 Februari", D(2028, 3, 1), D(2028, 2, 29), D(2028, 2, 29)),
    ("tanggal 14 bulan lalu", MON, D(2026, 6, 14), D(2026, 6, 14)),
    ("tahun 2023", MON, D(2023, 1, 1), D(2023, 12, 31)),
    # Chinese
    ("今天我们聊了什么", MON, D(2026, 7, 20), D(2026, 7, 20)),
    ("昨天", MON, D(2026, 7, 19), D(2026, 7, 19)),
    ("前天", MON, D(2026, 7, 18), D(2026, 7, 18)),
    ("上周", MON, D(2026, 7, 13), D(2026, 7, 19)),
    ("上个星期", MON, D(2026, 7, 13), D(2026, 7, 19)),
    ("本周", WED, D(2026, 7, 20), D(2026, 7, 26)),
    ("下周", WED, D(2026, 7, 27), D(2026, 8, 2)),
    ("上个月", JAN2, D(2025, 12, 1), D(2025, 12, 31)),
    ("这个月", MON, D(2026, 7, 1), D(2026, 7, 31)),
    ("去年", MON, D(2025, 1, 1), D(2025, 12, 31)),
    ("3天前", MON, D(2026, 7, 17), D(2026, 7, 17)),
    ("三天前", MON, D(2026, 7, 17), D(2026, 7, 17)),
    ("上周六", WED, D(2026, 7, 18), D(2026, 7, 18)),
    ("5月2日", MON, D(2026, 5, 2), D(2026, 5, 2)),
    ("我们在8月2号聊过", MON, D(2025, 8, 2), D(2025, 8, 2)),
    ("2023年5月2日", MON, D(2023, 5, 2), D(2023, 5, 2)),
    ("2023年5月", MON, D(2023, 5, 1), D(2023, 5, 31)),
]


@pytest.mark.parametrize(("query", "today", "start", "end"), CASES, ids=[f"{q}@{t}" for q, t, _, _ in CASES])
def test_each_expression_reads_as_the_range_a_calendar_gives(query, today, start, end):
    assert parse(query, today).span == (start, end)


def test_the_table_covers_the_three_languages_generously():
    assert len(CASES) >= 60


@pytest.mark.parametrize(
    ("query", "precision"),
    [
        ("2 weeks ago", "week"),
        ("yesterday", "day"),
        ("bulan lalu", "month"),
        ("in 2023", "year"),
        ("early March", "part"),
        ("akhir pekan lalu", "part"),
        ("over the weekend", "part"),
        ("2023-05-02", "day"),
        ("上周", "week"),
        ("since May", "month"),
    ],
)
def test_each_range_says_how_precise_it_is(query, precision):
    (r,) = parse(query, MON).ranges
    assert r.precision == precision


@pytest.mark.parametrize(
    "query",
    [
        "May I ask what we decided about the budget?",
        "this may be a silly question",
        "we will march on to the next topic",
        "Mayday alert in the logs",
        "sat with the jan team",
        "the 3rd option looks better",
        "2023 tokens is the limit",
        "Minggu",
        "jam berapa kita ngobrol",
    ],
)
def test_words_that_only_look_like_times_are_not_times(query):
    tq = parse(query, MON)
    assert tq.ranges == ()
    assert tq.residual == query


def test_minggu_is_a_week_unless_hari_comes_before_it():
    week = parse("minggu lalu", WED).ranges[0]
    sunday = parse("hari minggu lalu", WED).ranges[0]
    assert (week.start, week.end, week.precision) == (D(2026, 7, 13), D(2026, 7, 19), "week")
    assert (sunday.start, sunday.end, sunday.precision) == (D(2026, 7, 19), D(2026, 7, 19), "day")


def test_before_a_time_drops_it_rather_than_narrow_to_it():
    assert parse("what did we decide before May", MON).ranges == ()


def test_a_date_off_the_calendar_is_not_read_as_that_date():
    assert parse("2023-02-30", MON).ranges == ()


def test_several_expressions_come_in_query_order_and_span_their_union():
    tq = parse("between May and July 2025", MON)
    assert [r.text for r in tq.ranges] == ["May", "July 2025"]
    assert tq.span == (D(2025, 7, 1), D(2026, 5, 31))


def test_a_query_without_time_has_no_span():
    assert parse("how do I set up nginx", MON).span is None


def test_text_is_the_query_own_spelling_even_when_normalised_to_match():
    tq = parse("ｌａｓｔ Ｓａｔｕｒｄａｙ の話", MON)
    assert tq.ranges[0].text == "ｌａｓｔ Ｓａｔｕｒｄａｙ"
    assert tq.ranges[0].start == D(2026, 7, 18)
    assert parse("Jum’at lalu", MON).ranges[0].text == "Jum’at lalu"


@pytest.mark.parametrize(
    ("query", "asks"),
    [
        ("When did we talk about Rust?", True),
        ("what day did I fix the bug", True),
        ("which date was the deploy", True),
        ("how long ago did we start", True),
        ("since when do we use duckdb", True),
        ("kapan kita bahas python?", True),
        ("tanggal berapa kita deploy", True),
        ("hari apa kita rapat", True),
        ("sejak kapan pakai prefect", True),
        ("我们什么时候讨论过这个", True),
        ("那是哪天", True),
        ("你几号走", True),
        ("whenever I ask about docker", False),
        ("what time did we meet", False),
        ("jam berapa kita ngobrol", False),
        ("what did we discuss last Saturday", False),
    ],
)
def test_asks_when_is_true_only_for_a_whole_when_word(query, asks):
    assert parse(query, MON).asks_when is asks


@pytest.mark.parametrize(
    ("query", "residual"),
    [
        ("What did we discuss last Saturday?", "What did we discuss"),
        ("what did we decide yesterday, and why", "what did we decide, and why"),
        ("apa yang kita bahas minggu lalu soal python", "apa yang kita bahas soal python"),
        ("kapan kita bahas docker kemarin?", "kapan kita bahas docker"),
        ("去年我们说了什么？", "我们说了什么"),
        ("  no time here?  ", "no time here?"),
        ("yesterday", ""),
    ],
)
def test_residual_is_the_query_less_its_times_tidied(query, residual):
    assert parse(query, MON).residual == residual


def test_explain_names_the_words_the_days_and_the_when_question():
    assert explain(parse("last Saturday", MON)) == "time: 'last Saturday' → 2026-07-18; asks when: no"
    assert explain(parse("kapan minggu lalu", MON)) == ("time: 'minggu lalu' → 2026-07-13..2026-07-19; asks when: yes")
    assert explain(parse("when", MON)) == "time: none; asks when: yes"


def test_the_results_are_frozen_dataclasses():
    tq = parse("yesterday", MON)
    assert isinstance(tq, TimeQuery) and isinstance(tq.ranges[0], TimeRange)
    with pytest.raises(AttributeError):
        tq.ranges[0].start = MON  # type: ignore[misc]


FRAGMENTS = [
    *MONTHS,
    *DAY_WORDS,
    *ZH_WORDS,
    *"""last this next week month year weekend ago lalu yang kemarin depan ini
    hari minggu pekan bulan tahun tanggal the of on in since sejak before after early mid late awal akhir
    pertengahan 1 2 14 29 30 31 2023 2024 0000 9999 , . ? 月 日 号 年 前 天 周 上 下 这 星期 六 十 二 feb jan
    - / 2023-05-02 2023-02-30 a few couple several beberapa terakhir past sabtu senin saturday hari jum'at 在""".split(),
]
queries = st.one_of(
    st.text(),
    st.lists(st.sampled_from(FRAGMENTS), max_size=8).map(" ".join),
    st.lists(st.sampled_from(FRAGMENTS), max_size=8).map("".join),
)


@settings(max_examples=500, deadline=None)
@given(queries, st.dates())
def test_parse_never_raises_and_every_range_is_ordered_and_quoted(query, today):
    tq = parse(query, today)
    for r in tq.ranges:
        assert r.start <= r.end
        assert r.text and r.text in query
        assert r.precision in PRECISIONS
    assert isinstance(explain(tq), str)
    if not tq.ranges:
        assert tq.residual == query.strip()
