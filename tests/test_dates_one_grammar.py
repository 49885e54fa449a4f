"""One date grammar: a relative phrase means the same days in a summary and in a query.

Each phrase of the table is read twice: by recall's query parser (``timeq.parse``, which
``Recaller.understand`` calls) and by the extractor of a summary's ``related_dates``
(``extract_dates``). The table holds its one meaning for both; an extracted phrase that
names more than a day stands for its first day.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from datetime import date, datetime, time, timedelta, timezone

import pytest

import transforms
from transforms import timeq
from transforms.extract import DayMessage, DayText, extract_dates

WIB = timezone(timedelta(hours=7))
ANCHOR = date(2026, 7, 15)  # a Wednesday: the message's day and the query's "now"
LATER = date(2027, 1, 1)  # the run day: nothing of the table is after it


def d(month: int, day: int, year: int = 2026) -> date:
    return date(year, month, day)


# phrase -> (first day, last day), read on Wednesday 2026-07-15
MEANINGS = {
    # Indonesian days
    "kemarin": (d(7, 14), d(7, 14)),
    "kemaren": (d(7, 14), d(7, 14)),
    "kemarin malam": (d(7, 14), d(7, 14)),
    "semalam": (d(7, 14), d(7, 14)),
    "kemarin lusa": (d(7, 13), d(7, 13)),
    "besok": (d(7, 16), d(7, 16)),
    "lusa": (d(7, 17), d(7, 17)),
    "3 hari lalu": (d(7, 12), d(7, 12)),
    "tiga hari yang lalu": (d(7, 12), d(7, 12)),
    "2 hari lagi": (d(7, 17), d(7, 17)),
    "sepuluh hari lagi": (d(7, 25), d(7, 25)),
    "beberapa hari lalu": (d(7, 10), d(7, 13)),
    "3 hari terakhir": (d(7, 12), d(7, 15)),
    # Indonesian weeks: calendar weeks, Monday to Sunday
    "minggu lalu": (d(7, 6), d(7, 12)),
    "minggu kemarin": (d(7, 6), d(7, 12)),
    "minggu kemaren": (d(7, 6), d(7, 12)),
    "pekan lalu": (d(7, 6), d(7, 12)),
    "seminggu lalu": (d(7, 6), d(7, 12)),
    "seminggu yang lalu": (d(7, 6), d(7, 12)),
    "2 minggu lalu": (d(6, 29), d(7, 5)),
    "minggu ini": (d(7, 13), d(7, 19)),
    "minggu depan": (d(7, 20), d(7, 26)),
    "pekan depan": (d(7, 20), d(7, 26)),
    "seminggu lagi": (d(7, 20), d(7, 26)),
    "akhir pekan lalu": (d(7, 11), d(7, 12)),
    # Indonesian weekdays: "hari Minggu" is Sunday, "Minggu lalu" is last week
    "hari Minggu lalu": (d(7, 12), d(7, 12)),
    "hari Senin": (d(7, 13), d(7, 13)),
    "Sabtu lalu": (d(7, 11), d(7, 11)),
    "Jumat depan": (d(7, 17), d(7, 17)),
    "Senin minggu lalu": (d(7, 6), d(7, 6)),
    # Indonesian months and years
    "bulan lalu": (d(6, 1), d(6, 30)),
    "bulan kemarin": (d(6, 1), d(6, 30)),
    "sebulan yang lalu": (d(6, 1), d(6, 30)),
    "2 bulan lalu": (d(5, 1), d(5, 31)),
    "bulan depan": (d(8, 1), d(8, 31)),
    "Mei lalu": (d(5, 1), d(5, 31)),
    "tanggal 3 bulan lalu": (d(6, 3), d(6, 3)),
    "tahun lalu": (d(1, 1, 2025), d(12, 31, 2025)),
    # English days
    "yesterday": (d(7, 14), d(7, 14)),
    "last night": (d(7, 14), d(7, 14)),
    "the day before yesterday": (d(7, 13), d(7, 13)),
    "tomorrow": (d(7, 16), d(7, 16)),
    "the day after tomorrow": (d(7, 17), d(7, 17)),
    "day after tomorrow": (d(7, 17), d(7, 17)),
    "3 days ago": (d(7, 12), d(7, 12)),
    "two days ago": (d(7, 13), d(7, 13)),
    "in two days": (d(7, 17), d(7, 17)),
    "in three days": (d(7, 18), d(7, 18)),
    "several days ago": (d(7, 10), d(7, 13)),
    "the last 3 days": (d(7, 12), d(7, 15)),
    # English weeks and weekdays
    "last week": (d(7, 6), d(7, 12)),
    "a week ago": (d(7, 6), d(7, 12)),
    "2 weeks ago": (d(6, 29), d(7, 5)),
    "this week": (d(7, 13), d(7, 19)),
    "earlier this week": (d(7, 13), d(7, 14)),
    "next week": (d(7, 20), d(7, 26)),
    "in 2 weeks": (d(7, 27), d(8, 2)),
    "last weekend": (d(7, 11), d(7, 12)),
    "last Sunday": (d(7, 12), d(7, 12)),
    "on Monday": (d(7, 13), d(7, 13)),
    "next Friday": (d(7, 17), d(7, 17)),
    # English months and years
    "last month": (d(6, 1), d(6, 30)),
    "a month ago": (d(6, 1), d(6, 30)),
    "next month": (d(8, 1), d(8, 31)),
    "last May": (d(5, 1), d(5, 31)),
    "last year": (d(1, 1, 2025), d(12, 31, 2025)),
}


@pytest.mark.parametrize("phrase", sorted(MEANINGS))
def test_a_recall_query_reads_each_relative_phrase_as_the_table_says(phrase):
    first, last = MEANINGS[phrase]
    ranges = timeq.parse(f"backup gagal {phrase}", ANCHOR).ranges
    assert [(r.start, r.end, r.text) for r in ranges] == [(first, last, phrase)]


@pytest.mark.parametrize("phrase", sorted(MEANINGS))
def test_a_summarys_related_dates_read_each_relative_phrase_as_its_first_day(phrase):
    first, _ = MEANINGS[phrase]
    message = DayMessage("s1", "user", f"Backup gagal {phrase}, ya.", datetime.combine(ANCHOR, time(10), tzinfo=WIB))
    found = extract_dates(DayText("gading", ANCHOR, WIB, (message,)), today=LATER)
    assert found == (() if first == ANCHOR else (first,))


def test_the_same_phrase_gives_the_same_first_day_in_a_summary_and_in_a_query():
    text = "Minggu lalu deploy, kemarin rollback, hari Minggu lalu rapat, 3 hari lalu backup."
    message = DayMessage("s1", "user", text, datetime.combine(ANCHOR, time(10), tzinfo=WIB))
    summary = extract_dates(DayText("gading", ANCHOR, WIB, (message,)), today=LATER)
    query = timeq.parse(text, ANCHOR).ranges
    assert summary == tuple(sorted({r.start for r in query})) == (d(7, 6), d(7, 12), d(7, 14))


def test_calendar_dates_are_not_relative_phrases():
    assert timeq.relative("14 Oktober 2026, 2026-07-01, Mei, tanggal 14, in 2023", ANCHOR) == ()


# Words only a reader of relative dates needs: the days before today and "ago". (core_memory
# looks for "besok"/"tomorrow" after a deploy, to refuse a one-off task; that names no day.)
_PAST_WORDS = re.compile(r"(?<![a-z])(?:kemarin|kemaren|yesterday|ago)(?![a-z])")


def test_no_module_of_transforms_but_timeq_holds_a_pattern_for_relative_dates():
    found = []
    for info in pkgutil.iter_modules(transforms.__path__):
        if info.name == "timeq":
            continue
        module = importlib.import_module(f"transforms.{info.name}")
        for name, value in vars(module).items():
            if isinstance(value, re.Pattern) and isinstance(value.pattern, str):
                if _PAST_WORDS.search(value.pattern.lower()):
                    found.append(f"transforms.{info.name}.{name}")
    assert found == []
