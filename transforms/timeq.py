"""The time a recall query talks about, read relative to a given ``today``.

``parse(query, today)`` finds the time expressions of a query in English, Indonesian
and a little Chinese, and turns each into an inclusive range of days, so recall can
narrow or boost days. It also says whether the query asks *when* something happened,
and gives the query with the time expressions taken out (``residual``).

This is kenang's only grammar of relative dates. ``relative(text, today)`` gives the
ranges of ``parse`` that a phrase counted from today names (kemarin, last week, 3 hari
lalu, hari Minggu lalu), leaving out calendar names (dates, months, years): the
extractors (``transforms.extract.extract_dates``) read a summary's relative dates with
it, so a phrase means the same days in a summary's ``related_dates`` as in a query.

How it reads a query:

- The query is NFKC-normalised and lower-cased character by character, keeping for each
  character of the normal text the index of the query character it came from. Matching
  runs on the normal text; ``TimeRange.text`` and the residual are cut from the query
  itself, so they keep its spelling exactly.
- Each rule is one regular expression, compiled at import, and one small function that
  turns a match into ``(start, end, precision)`` or ``None`` (not a time after all).
  A rule is tried only on text that holds the strings its expression always matches
  (read from the expression itself: "lalu" and a unit for "3 hari lalu"), so most text,
  which names no time, costs a word lookup rather than every rule.
  Every rule's matches are candidates; the leftmost one wins, then the longest, then the
  earlier rule. So "kemarin lusa" beats "kemarin", "hari Minggu lalu" beats "Minggu
  lalu", and "May 2nd, 2023" beats "May 2nd".
- Words before a candidate may change it. "early/mid/late", "the beginning/middle/end
  of", "awal/pertengahan/akhir" narrow a whole month to days 1-10, 11-20, 21-end, and a
  whole year to Jan-Apr, May-Aug, Sep-Dec (precision ``part``). Then "since/sejak/
  semenjak X" becomes X's start .. today, and "after/setelah/sesudah X" the day after X
  .. today; both keep X's precision, and are dropped when that range would be empty.
  "before/sebelum X" has no start, so X is dropped: narrowing to X would be wrong.
  "from May until July" and "between May and July" give two ranges; ``span`` joins them.
- A date that falls off the calendar (February 30, year 10000) is not understood.
  ``parse`` never raises, and every range has ``start <= end``.

Rules for the ambiguous cases:

- **Weeks** run Monday to Sunday. "last week" is the previous such week; "N weeks ago"
  is the week that holds ``today - 7N``. A weekend is that week's Saturday and Sunday:
  "last weekend", "over the weekend", "akhir pekan" and a bare 周末 are the previous
  week's, "this weekend" the current week's, "next weekend" the next week's.
  "earlier this week" is Monday .. yesterday, and just today on a Monday.
- **Weekdays**: a bare weekday, "on X", "last X" and "X lalu/kemarin" are the most recent
  X strictly before today; "this X" / "X ini" is X of the current week (maybe still to
  come); "next X" / "X depan" is the first X after today. "X of last week", "X minggu
  lalu" and 上周X are X of that calendar week. A bare Chinese 周X is the most recent X.
- **Minggu** means "week" unless "hari" comes right before it: "minggu lalu/kemarin/ini/
  depan" and "N minggu lalu" are weeks; "hari Minggu [lalu|ini|depan]" is Sunday. A
  bare "Minggu" is neither, so it is not understood. ("Ahad" is always Sunday.)
- **Months without a year** are the most recent such month not after today's month
  (in July 2026, "May" is 2026-05 and "December" is 2025-12). "last May" / "Mei lalu"
  is the most recent May strictly before this month, "this May" is this year's, "next
  May" the first after this month. "May last year" / "Mei tahun lalu" is May of that year.
- **Dates without a year** ("May 2nd", "14 Juli", 5月2日) are the most recent such date
  not after today; February 29 goes back to the last leap year. A day alone ("tanggal
  14", "on the 14th") is the most recent month's 14th not after today, skipping months
  that have no such day ("tanggal 31" in July skips June).
- **"May" and "March"** are also an English verb: bare, they are months only after a
  cue word (in, on, of, during, since, early, mid, late, between, ...), after "last",
  after "this/next" when the clause ends there ("this May?", not "this may be"), or
  when a day or a year follows. Three-letter abbreviations (jan, mar, sep, des, ...) are months
  only next to a day or a year. A bare year needs a cue too ("in 2023", "tahun 2023",
  "since 2023"), so "2023 tokens" is not a year.
- **Future** expressions are read as said: tomorrow, besok, lusa, next week, "this
  Saturday" later in the week. Recall can ignore a range that starts after today.
- **Counts**: "a/an/one" = 1, "a couple (of)" = 2, "a few" = 3. "in N days/weeks/months"
  and "N hari/minggu/bulan lagi" count forward as "N ... ago" counts back ("in 2 weeks"
  is the week that holds ``today + 14``). "beberapa" and "several"
  are 2 to 5: "beberapa hari lalu" is ``today-5 .. today-2``. "the last/past N days" and
  "N hari terakhir" are rolling: ``today - N days .. today`` (precision ``day``), with
  a vague count taken at its upper end (5).
- **Nights**: "last night", "semalam" and "tadi malam" are yesterday; "tonight" is today.
- **asks_when** is true when a when-word appears as a whole word: when, since when, how
  long ago, what/which day|date|week|month|year; kapan(kah), tanggal/tgl berapa, hari apa,
  bulan apa, tahun berapa; 什么时候, 哪天, 哪一天, 几号, 几月, 哪年, 哪一年, 哪个月. "when" as a
  conjunction counts too; "whenever" does not; "what time" and "jam berapa" ask a time
  of day and do not.

Not understood: times of day, "before X" (dropped, see above), "the week before last",
numeric dates other than ISO (14/7/2026 is day-first in Indonesian, month-first in US
English), ordinal words ("the second of May"), and Chinese beyond the listed words.
"""

from __future__ import annotations

import calendar
import datetime as dt
import importlib
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass

PRECISIONS = ("day", "week", "month", "year", "part")


@dataclass(frozen=True)
class TimeRange:
    """One time expression of a query, as an inclusive range of days."""

    start: dt.date
    end: dt.date
    text: str  # the words understood, exactly as they appear in the query
    precision: str  # one of PRECISIONS; 'part' is early/mid/late month or year, or a weekend


@dataclass(frozen=True)
class TimeQuery:
    """What a query says about time."""

    ranges: tuple[TimeRange, ...]  # every expression found, in query order
    asks_when: bool  # the query asks when something happened
    residual: str  # the query less the time expressions (not the when-words), tidied

    @property
    def span(self) -> tuple[dt.date, dt.date] | None:
        """The earliest start and the latest end of the ranges, or None without ranges."""
        if not self.ranges:
            return None
        return min(r.start for r in self.ranges), max(r.end for r in self.ranges)


Found = tuple[dt.date, dt.date, str]  # (start, end, precision)
ONE_DAY = dt.timedelta(days=1)

# --- Vocabulary --------------------------------------------------------------------

MONTHS = {
    "january": 1,
    "february": 2,
    "march": 3,
    "april": 4,
    "may": 5,
    "june": 6,
    "july": 7,
    "august": 8,
    "september": 9,
    "october": 10,
    "november": 11,
    "december": 12,
    "januari": 1,
    "februari": 2,
    "pebruari": 2,
    "maret": 3,
    "mei": 5,
    "juni": 6,
    "juli": 7,
    "agustus": 8,
    "oktober": 10,
    "nopember": 11,
    "desember": 12,
}
#: Full names that are also common English words: bare, they need a cue word.
VERB_MONTHS = frozenset({"may", "march"})
MONTH_ABBREVIATIONS = {
    "jan": 1,
    "feb": 2,
    "mar": 3,
    "apr": 4,
    "jun": 6,
    "jul": 7,
    "aug": 8,
    "agu": 8,
    "agt": 8,
    "ags": 8,
    "sep": 9,
    "sept": 9,
    "oct": 10,
    "okt": 10,
    "nov": 11,
    "dec": 12,
    "des": 12,
}
EN_WEEKDAYS = {
    "monday": 0,
    "tuesday": 1,
    "wednesday": 2,
    "thursday": 3,
    "friday": 4,
    "saturday": 5,
    "sunday": 6,
}
#: Indonesian weekdays that need no "hari" before them ("minggu" does: it is also "week").
ID_WEEKDAYS = {
    "senin": 0,
    "selasa": 1,
    "rabu": 2,
    "kamis": 3,
    "jumat": 4,
    "jum'at": 4,
    "jum’at": 4,
    "sabtu": 5,
    "ahad": 6,
}
ZH_WEEKDAYS = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}

EN_NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "a couple of": 2,
    "a couple": 2,
    "couple of": 2,
    "a few": 3,
    "few": 3,
}
ID_NUMBERS = {
    "satu": 1,
    "dua": 2,
    "tiga": 3,
    "empat": 4,
    "lima": 5,
    "enam": 6,
    "tujuh": 7,
    "delapan": 8,
    "sembilan": 9,
    "sepuluh": 10,
    "sebelas": 11,
    "dua belas": 12,
    "duabelas": 12,
}
ZH_DIGITS = {"一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
#: "beberapa" and "several" span this many units back.
VAGUE = (2, 5)

UNITS = {
    "day": "day",
    "days": "day",
    "week": "week",
    "weeks": "week",
    "month": "month",
    "months": "month",
    "year": "year",
    "years": "year",
    "hari": "day",
    "minggu": "week",
    "pekan": "week",
    "bulan": "month",
    "tahun": "year",
    "天": "day",
    "日": "day",
    "周": "week",
    "星期": "week",
    "个星期": "week",
    "礼拜": "week",
    "个礼拜": "week",
    "个月": "month",
    "年": "year",
    "weekend": "weekend",
}
EN_RELATIVE = {"last": -1, "previous": -1, "this past": -1, "this": 0, "this coming": 1, "coming": 1, "next": 1}
ID_RELATIVE = {"lalu": -1, "yang lalu": -1, "yg lalu": -1, "kemarin": -1, "kemaren": -1, "ini": 0, "depan": 1}
RELATIVE = {**EN_RELATIVE, **ID_RELATIVE}  # -1 last, 0 this, 1 next
ZH_RELATIVE = {"上": -1, "上个": -1, "这": 0, "这个": 0, "本": 0, "下": 1, "下个": 1}

#: Words that name one day, as an offset from today.
DAY_WORDS = {
    "today": 0,
    "tonight": 0,
    "this morning": 0,
    "this afternoon": 0,
    "this evening": 0,
    "earlier today": 0,
    "yesterday": -1,
    "yesterday morning": -1,
    "yesterday afternoon": -1,
    "yesterday evening": -1,
    "last night": -1,
    "the day before yesterday": -2,
    "day before yesterday": -2,
    "tomorrow": 1,
    "the day after tomorrow": 2,
    "day after tomorrow": 2,
    "hari ini": 0,
    "tadi": 0,
    "tadi pagi": 0,
    "tadi siang": 0,
    "tadi sore": 0,
    "kemarin": -1,
    "kemaren": -1,
    "kemarin pagi": -1,
    "kemarin siang": -1,
    "kemarin sore": -1,
    "kemarin malam": -1,
    "semalam": -1,
    "tadi malam": -1,
    "kemarin lusa": -2,
    "kemarin dulu": -2,
    "besok": 1,
    "lusa": 2,
}
#: Chinese words that name a day, week, month, year or weekend, as (unit, offset).
ZH_WORDS = {
    "今天": ("day", 0),
    "今日": ("day", 0),
    "今晚": ("day", 0),
    "今早": ("day", 0),
    "昨天": ("day", -1),
    "昨日": ("day", -1),
    "昨晚": ("day", -1),
    "前天": ("day", -2),
    "明天": ("day", 1),
    "后天": ("day", 2),
    "上周": ("week", -1),
    "上个星期": ("week", -1),
    "上星期": ("week", -1),
    "上个礼拜": ("week", -1),
    "上礼拜": ("week", -1),
    "这周": ("week", 0),
    "本周": ("week", 0),
    "这个星期": ("week", 0),
    "这星期": ("week", 0),
    "这个礼拜": ("week", 0),
    "这礼拜": ("week", 0),
    "下周": ("week", 1),
    "下个星期": ("week", 1),
    "下星期": ("week", 1),
    "下个礼拜": ("week", 1),
    "下礼拜": ("week", 1),
    "上个月": ("month", -1),
    "上月": ("month", -1),
    "这个月": ("month", 0),
    "本月": ("month", 0),
    "这月": ("month", 0),
    "下个月": ("month", 1),
    "下月": ("month", 1),
    "去年": ("year", -1),
    "今年": ("year", 0),
    "明年": ("year", 1),
    "前年": ("year", -2),
    "周末": ("weekend", -1),
    "上周末": ("weekend", -1),
    "上个周末": ("weekend", -1),
    "这周末": ("weekend", 0),
    "这个周末": ("weekend", 0),
    "本周末": ("weekend", 0),
    "下周末": ("weekend", 1),
    "下个周末": ("weekend", 1),
}


def _alternatives(words) -> str:
    """A regex alternation of words, longest first, any run of spaces matching a space."""
    ordered = sorted(set(words), key=lambda w: (-len(w), w))
    return "|".join(r"\s+".join(re.escape(part) for part in w.split()) for w in ordered)


def _key(text: str) -> str:
    """Matched words as a dictionary key: single spaces, no full stop."""
    return " ".join(text.split()).rstrip(".")


B, E = r"(?<!\w)", r"(?!\w)"  # word boundaries that also hold next to CJK text
ZB = r"(?<![\d一二两三四五六七八九十])"  # no digit right before a Chinese number
ZH_AT = r"(?:在|于)?"  # "at", taken along with the time
PREP = r"(?:(?P<prep>in|on|during|throughout|over|pada|di|selama)\s+)?"
YEAR = r"(?:19|20)\d\d"
NOT_ISO = r"(?![-/]\d\d?[-/]\d)(?!-(?:0[1-9]|1[0-2])(?!\d))"  # after a year: not the rest of 2026-03-05 or 2026-03
DAY = r"(?:[12]\d|3[01]|0?[1-9])"
ORDINAL = r"(?:st|nd|rd|th)"
FULL_MONTH = _alternatives(MONTHS)
ANY_MONTH = rf"(?:{_alternatives([*MONTHS, *MONTH_ABBREVIATIONS])})\.?"
EN_WEEKDAY = _alternatives(EN_WEEKDAYS)
ID_WEEKDAY = rf"(?:(?:pada\s+)?hari\s+(?P<wd>{_alternatives([*ID_WEEKDAYS, 'minggu'])})|(?P<wd_bare>{_alternatives(ID_WEEKDAYS)}))"
ANY_WEEKDAY = _alternatives([*EN_WEEKDAYS, *ID_WEEKDAYS, "minggu"])
EN_REL = _alternatives(EN_RELATIVE)
ID_REL = _alternatives(ID_RELATIVE)
EN_NUM = rf"\d{{1,4}}|{_alternatives(EN_NUMBERS)}"
ID_NUM = rf"\d{{1,4}}|{_alternatives(ID_NUMBERS)}"
ZH_NUM = r"\d{1,3}|[一二两三四五六七八九]?十[一二三四五六七八九]?|[一二两三四五六七八九]"
EN_UNIT = r"days?|weeks?|months?|years?"
ID_UNIT = r"hari|minggu|pekan|bulan|tahun"
ID_AGO = r"(?:yang\s+|yg\s+)?lalu"

#: Words before a whole month or year that narrow it to a third of it.
PART_BEFORE = re.compile(
    r"(?<!\w)(?:(?:at|in|on|pada|di)\s+)?(?:"
    r"(?P<early>early|awal|(?:the\s+)?(?:beginning|start)\s+of)"
    r"|(?P<mid>mid|pertengahan|tengah|(?:the\s+)?middle\s+of)"
    r"|(?P<late>late|akhir|(?:the\s+)?end\s+of))[\s-]*$"
)
OPEN_BEFORE = re.compile(r"(?<!\w)(?:(?P<since>since|sejak|semenjak)|(?P<after>after|setelah|sesudah))\s+$")
#: Nothing but punctuation or the end of the text follows.
CLAUSE_END = re.compile(r"\s*(?:[^\w\s]|$)")
BEFORE_BEFORE = re.compile(r"(?<!\w)(?:before|sebelum)\s+$")
#: Words after which a bare "may", "march" or year is a time.
CUE_BEFORE = re.compile(
    r"(?<!\w)(?:in|on|of|during|throughout|since|sejak|semenjak|after|setelah|sesudah|before|sebelum|"
    r"until|till|from|between|dari|antara|early|mid|late|awal|pertengahan|tengah|akhir|bulan|tahun)[\s-]*$"
)
WHEN = re.compile(
    r"(?<!\w)(?:when|how\s+long\s+ago|(?:what|which)\s+(?:day|date|week|month|year)"
    r"|kapan(?:kah)?|(?:tanggal|tgl)\s+berapa|hari\s+apa|bulan\s+apa|tahun\s+berapa)(?!\w)"
    r"|什么时候|哪一?天|几号|几月|哪一?年|哪个月"
)

# --- Calendar arithmetic -------------------------------------------------------------


def _days(first: dt.date, last: dt.date, precision: str = "day") -> Found:
    return first, last, precision


def _week(day: dt.date) -> tuple[dt.date, dt.date]:
    """The Monday and the Sunday of day's week."""
    monday = day - dt.timedelta(days=day.weekday())
    return monday, monday + dt.timedelta(days=6)


def _month(year: int, month: int) -> tuple[dt.date, dt.date]:
    return dt.date(year, month, 1), dt.date(year, month, calendar.monthrange(year, month)[1])


def _add_months(year: int, month: int, k: int) -> tuple[int, int]:
    y, m = divmod(year * 12 + month - 1 + k, 12)
    return y, m + 1


def _shifted(unit: str, k: int, today: dt.date) -> Found:
    """The day, week, month, year or weekend k steps from the one holding today."""
    if unit == "day":
        day = today + dt.timedelta(days=k)
        return _days(day, day)
    if unit in ("week", "weekend"):
        monday, sunday = _week(today + dt.timedelta(days=7 * k))
        if unit == "weekend":
            return _days(sunday - ONE_DAY, sunday, "part")
        return _days(monday, sunday, "week")
    if unit == "month":
        return _days(*_month(*_add_months(today.year, today.month, k)), "month")
    return _days(dt.date(today.year + k, 1, 1), dt.date(today.year + k, 12, 31), "year")


def _back(today: dt.date, unit: str, n: int) -> dt.date:
    """The day n units before today (a missing day of month clamps to the month's last)."""
    if unit in ("day", "week"):
        return today - dt.timedelta(days=n * (7 if unit == "week" else 1))
    y, m = _add_months(today.year, today.month, -n * (12 if unit == "year" else 1))
    return dt.date(y, m, min(today.day, calendar.monthrange(y, m)[1]))


def _weekday_near(weekday: int, k: int, today: dt.date) -> dt.date:
    """k=-1: the last such weekday before today; 0: the one in today's week; 1: the next after today."""
    if k < 0:
        return today - dt.timedelta(days=(today.weekday() - weekday - 1) % 7 + 1)
    if k > 0:
        return today + dt.timedelta(days=(weekday - today.weekday() - 1) % 7 + 1)
    return _week(today)[0] + dt.timedelta(days=weekday)


def _weekday_of_week(weekday: int, k: int, today: dt.date) -> dt.date:
    """The weekday in the week k weeks from today's."""
    return _week(today + dt.timedelta(days=7 * k))[0] + dt.timedelta(days=weekday)


def _month_near(month: int, k: int, today: dt.date) -> Found:
    """The month: k=-1 strictly before this month, 0 in this year, 1 strictly after this month."""
    if k == 0:
        year = today.year
    elif k > 0:
        year = today.year if month > today.month else today.year + 1
    else:
        year = today.year if month < today.month else today.year - 1
    return _days(*_month(year, month), "month")


def _recent_month(month: int, today: dt.date) -> Found:
    """The most recent such month not after today's month."""
    return _days(*_month(today.year if month <= today.month else today.year - 1, month), "month")


def _recent_date(month: int, day: int, today: dt.date) -> Found | None:
    """The most recent month/day not after today (February 29 reaches back to a leap year)."""
    for year in range(today.year, today.year - 9, -1):
        if 1 <= year and day <= calendar.monthrange(year, month)[1] and dt.date(year, month, day) <= today:
            found = dt.date(year, month, day)
            return _days(found, found)
    return None


def _recent_day_of_month(day: int, today: dt.date) -> Found | None:
    """The most recent day-th of a month, not after today, skipping months too short for it."""
    year, month = today.year, today.month
    for _ in range(13):
        if day <= calendar.monthrange(year, month)[1] and dt.date(year, month, day) <= today:
            return _days(dt.date(year, month, day), dt.date(year, month, day))
        year, month = _add_months(year, month, -1)
    return None


def _dated(year: int, month: int, day: int) -> Found:
    found = dt.date(year, month, day)
    return _days(found, found)


def _part(found: Found, which: str) -> Found:
    """Early, mid or late third of a whole month (1-10, 11-20, 21-end) or year (Jan-Apr, May-Aug, Sep-Dec)."""
    first, last, precision = found
    if precision == "month":
        starts, ends = {"early": 1, "mid": 11, "late": 21}, {"early": 10, "mid": 20, "late": last.day}
        return first.replace(day=starts[which]), first.replace(day=ends[which]), "part"
    months = {"early": (1, 4), "mid": (5, 8), "late": (9, 12)}[which]
    return _month(first.year, months[0])[0], _month(first.year, months[1])[1], "part"


# --- Reading the numbers ------------------------------------------------------------


def _count(word: str | None) -> int:
    """A count written in digits, English or Indonesian words; None (the "se-" forms) is 1."""
    if word is None:
        return 1
    if word.isdigit():
        return int(word)
    key = _key(word)
    return EN_NUMBERS.get(key) or ID_NUMBERS[key]


def _zh_count(word: str) -> int:
    """A number from 1 to 99 written in digits or Chinese numerals (十, 十二, 二十三)."""
    if word.isdigit():
        return int(word)
    if "十" in word:
        tens, _, ones = word.partition("十")
        return ZH_DIGITS.get(tens, 1) * 10 + ZH_DIGITS.get(ones, 0)
    return ZH_DIGITS[word]


def _month_number(word: str) -> int:
    key = _key(word)
    return MONTHS.get(key) or MONTH_ABBREVIATIONS[key]


WEEKDAYS = {**EN_WEEKDAYS, **ID_WEEKDAYS, "minggu": 6}


def _group(m: re.Match, name: str) -> str | None:
    """A named group's text, or None when the group did not match or the pattern has none."""
    return m.groupdict().get(name)


def _first(m: re.Match, *names: str) -> str:
    """The text of the first of the named groups that matched (the patterns make one match)."""
    return next(said for n in names if (said := _group(m, n)))


def _relative(m: re.Match, *names: str) -> int:
    """The offset (-1, 0, 1) named by the first of the groups that matched."""
    return RELATIVE[_key(_first(m, *names))]


def _weekday_number(m: re.Match) -> int:
    """The weekday in group wd or wd_bare, English or Indonesian."""
    return WEEKDAYS[_key(_first(m, "wd", "wd_bare"))]


def _cued(m: re.Match) -> bool:
    """A cue word (in, since, early, bulan, ...) stands right before the match."""
    return CUE_BEFORE.search(m.string, 0, m.start()) is not None


# --- Rules ---------------------------------------------------------------------------

Reader = Callable[[re.Match, dt.date], "Found | None"]
Needs = tuple[frozenset[str], ...]


@dataclass(frozen=True)
class Rule:
    pattern: re.Pattern[str]
    read: Reader
    relative: bool  # reads a phrase counted from today, not a calendar name
    needs: Needs  # every match holds a string of each set (see _needs); () gates nothing


RULES: list[Rule] = []


def _rule(pattern: str, *, relative: bool = True):
    """Register a reader for a pattern; the readers are tried in the order written.

    ``relative`` is False for the rules that read a calendar name (a date, a month, a
    year, a day of the month) rather than a phrase counted from today.
    """

    def register(read: Reader) -> Reader:
        RULES.append(Rule(re.compile(pattern), read, relative, _needs(pattern)))
        return read

    return register


# --- What a rule needs -----------------------------------------------------------------
#
# Most texts name no time, and a rule cannot match a text that lacks a string its
# pattern always matches ("lalu" for "3 hari lalu", a month's name for "14 Mei"). Each
# rule's needs are read once from its own pattern, so they cannot drift from it, and a
# text is searched only with the rules whose needs it holds: the same matches, fewer
# passes. An empty tuple (nothing read) gates nothing: the rule is always tried.

# The parser re.compile itself uses (private, hence looked up by name; any surprise in
# it leaves a rule ungated: slower, never a different reading).
_sre_parser = importlib.import_module("re._parser")
_sre = importlib.import_module("re._constants")


def _needs(pattern: str) -> Needs:
    """Sets of strings such that every match of ``pattern`` holds one string of each set."""
    try:
        tree = _sre_parser.parse(pattern)
        if tree.state.flags & re.IGNORECASE:
            return ()
        return tuple(_needed(tree))
    except Exception:  # noqa: BLE001 - a parse tree of another shape: the rule goes ungated
        return ()


def _needed(items) -> list[frozenset[str]]:
    """The needs of a parsed sequence: its runs of literal characters, and what each part
    that must match needs (a group, a repeat of at least one, one string of each branch of
    an alternation, a class of plain characters). Lookarounds, anchors, optional parts and
    back-references add nothing."""
    out: list[frozenset[str]] = []
    run: list[str] = []
    for op, av in items:
        if op is _sre.LITERAL:
            run.append(chr(av))
            continue
        if run:
            out.append(frozenset({"".join(run)}))
            run = []
        if op is _sre.SUBPATTERN and not av[1] & re.IGNORECASE:
            out += _needed(av[3])
        elif op in (_sre.MAX_REPEAT, _sre.MIN_REPEAT) and av[0] >= 1:
            out += _needed(av[2])
        elif op is _sre.BRANCH:
            each = [_rarest(_needed(branch)) for branch in av[1]]
            if all(each):
                out.append(frozenset().union(*each))
        elif op is _sre.IN and all(kind is _sre.LITERAL for kind, _ in av):
            out.append(frozenset(chr(code) for _, code in av))
    if run:
        out.append(frozenset({"".join(run)}))
    return out


def _rarest(needs: list[frozenset[str]]) -> frozenset[str]:
    """The set whose shortest string is longest (the rarest), then with the fewest strings; empty without sets."""
    return min(needs, key=lambda s: (-min(map(len, s)), len(s)), default=frozenset())


@_rule(rf"{B}(?P<w>{_alternatives(DAY_WORDS)}){E}")
def _day_word(m, today):
    return _shifted("day", DAY_WORDS[_key(m["w"])], today)


@_rule(rf"{ZH_AT}(?P<w>{_alternatives(ZH_WORDS)})")
def _zh_word(m, today):
    return _shifted(*ZH_WORDS[m["w"]], today)


@_rule(rf"{B}(?P<n>{EN_NUM})\s+(?P<unit>{EN_UNIT})\s+ago{E}")
@_rule(rf"{B}(?:(?P<n>{ID_NUM})\s+|se)(?P<unit>{ID_UNIT})\s+{ID_AGO}{E}")
def _units_ago(m, today):
    return _shifted(UNITS[m["unit"]], -_count(m["n"]), today)


@_rule(rf"{ZB}{ZH_AT}(?P<n>{ZH_NUM})\s*(?P<unit>个星期|个礼拜|个月|星期|礼拜|天|日|周|年)\s*以?前")
def _zh_units_ago(m, today):
    return _shifted(UNITS[m["unit"]], -_zh_count(m["n"]), today)


@_rule(rf"{B}in\s+(?P<n>{EN_NUM})\s+(?P<unit>{EN_UNIT}){E}")
@_rule(rf"{B}(?:(?P<n>{ID_NUM})\s+|se)(?P<unit>{ID_UNIT})\s+lagi{E}")
def _units_ahead(m, today):
    return _shifted(UNITS[m["unit"]], _count(m["n"]), today)


@_rule(rf"{B}several\s+(?P<unit>{EN_UNIT})\s+ago{E}")
@_rule(rf"{B}beberapa\s+(?P<unit>{ID_UNIT})\s+{ID_AGO}{E}")
def _some_units_ago(m, today):
    unit = UNITS[m["unit"]]
    first, _, precision = _shifted(unit, -VAGUE[1], today)
    return _days(first, _shifted(unit, -VAGUE[0], today)[1], precision)


@_rule(rf"{B}(?:(?:in|over|during|for)\s+)?(?:the\s+)?(?:last|past)\s+(?P<n>{EN_NUM}|several)\s+(?P<unit>{EN_UNIT}){E}")
@_rule(rf"{B}(?:(?:dalam|selama)\s+)?(?P<n>{ID_NUM}|beberapa)\s+(?P<unit>{ID_UNIT})\s+terakhir{E}")
def _rolling(m, today):
    n = VAGUE[1] if m["n"] in ("several", "beberapa") else _count(m["n"])
    return _days(_back(today, UNITS[m["unit"]], n), today)


@_rule(rf"{B}{PREP}(?P<rel>{EN_REL})\s+(?P<unit>week|month|year|weekend){E}")
@_rule(rf"{B}{PREP}(?P<unit>minggu|pekan|bulan|tahun)\s+(?P<rel>{ID_REL}){E}")
def _relative_unit(m, today):
    return _shifted(UNITS[m["unit"]], _relative(m, "rel"), today)


@_rule(rf"{B}(?:(?:over|on|at|during)\s+)?the\s+weekend{E}")
@_rule(
    rf"{B}(?:(?:pada|di)\s+)?(?:akhir\s+pekan(?:\s+(?P<rel>{ID_REL}))?|(?:akhir\s+minggu|weekend)\s+(?P<rel2>{ID_REL})){E}"
)
def _weekend(m, today):
    said = _group(m, "rel") or _group(m, "rel2")
    return _shifted("weekend", RELATIVE[_key(said)] if said else -1, today)


@_rule(rf"{B}earlier\s+this\s+(?P<unit>week|month|year){E}")
def _earlier_this(m, today):
    first = _shifted(m["unit"], 0, today)[0]
    return _days(first, max(first, today - ONE_DAY), "part")


@_rule(rf"{B}{PREP}(?:(?P<rel>{EN_REL})\s+)?(?P<wd>{EN_WEEKDAY}){E}")
@_rule(rf"{B}{ID_WEEKDAY}(?:\s+(?P<rel>{ID_REL}))?{E}")
def _weekday(m, today):
    day = _weekday_near(_weekday_number(m), RELATIVE[_key(m["rel"])] if m["rel"] else -1, today)
    return _days(day, day)


@_rule(rf"{B}{PREP}(?P<wd>{EN_WEEKDAY})\s+(?:of\s+)?(?P<rel>{EN_REL})\s+week{E}")
@_rule(rf"{B}(?P<rel>{EN_REL})\s+week\s+(?:on\s+)?(?P<wd>{EN_WEEKDAY}){E}")
@_rule(rf"{B}{ID_WEEKDAY}\s+(?:minggu|pekan)\s+(?P<rel>{ID_REL}){E}")
def _weekday_of_relative_week(m, today):
    day = _weekday_of_week(_weekday_number(m), _relative(m, "rel"), today)
    return _days(day, day)


@_rule(rf"{ZH_AT}(?P<rel>上个?|这个?|本|下个?)?(?:周|星期|礼拜)(?P<wd>[一二三四五六日天])")
def _zh_weekday(m, today):
    weekday = ZH_WEEKDAYS[m["wd"]]
    if m["rel"] is None:
        day = _weekday_near(weekday, -1, today)
    else:
        day = _weekday_of_week(weekday, ZH_RELATIVE[m["rel"]], today)
    return _days(day, day)


@_rule(rf"{B}{PREP}(?:(?P<bulan>bulan)\s+)?(?P<month>{FULL_MONTH}){E}", relative=False)
def _bare_month(m, today):
    month = m["month"]
    if month in VERB_MONTHS and not (m["prep"] or m["bulan"] or _cued(m)):
        return None
    return _recent_month(MONTHS[month], today)


@_rule(rf"{B}{PREP}(?P<rel>{EN_REL})\s+(?P<month>{FULL_MONTH}){E}")
@_rule(rf"{B}{PREP}(?:bulan\s+)?(?P<month>{FULL_MONTH})\s+(?P<rel>{ID_REL}){E}")
def _relative_month(m, today):
    k = _relative(m, "rel")
    if m["month"] in VERB_MONTHS and k >= 0 and not CLAUSE_END.match(m.string, m.end()):
        return None  # "this may be", "next may help": a verb unless the clause ends there
    return _month_near(MONTHS[m["month"]], k, today)


@_rule(
    rf"{B}{PREP}(?:bulan\s+)?(?P<month>{FULL_MONTH})\s+(?:(?:of\s+)?(?P<rel>{EN_REL})\s+year|tahun\s+(?P<idrel>{ID_REL})){E}"
)
def _month_of_relative_year(m, today):
    return _days(*_month(today.year + _relative(m, "rel", "idrel"), MONTHS[m["month"]]), "month")


@_rule(
    rf"{B}{PREP}(?:bulan\s+)?(?P<month>{ANY_MONTH}),?\s+(?:of\s+|tahun\s+)?(?P<year>{YEAR}){E}{NOT_ISO}", relative=False
)
def _month_year(m, today):
    return _days(*_month(int(m["year"]), _month_number(m["month"])), "month")


@_rule(
    rf"{B}{PREP}(?:(?:{ANY_WEEKDAY}),?\s+)?(?:(?:tanggal|tgl\.?)\s*)?(?:the\s+)?(?P<day>{DAY}){ORDINAL}?"
    rf"\s+(?:of\s+)?(?:bulan\s+)?(?P<month>{ANY_MONTH})(?:,?\s+(?:tahun\s+)?(?P<year>{YEAR}))?{E}",
    relative=False,
)
@_rule(
    rf"{B}{PREP}(?:(?:{ANY_WEEKDAY}),?\s+)?(?P<month>{ANY_MONTH})\s+(?:the\s+)?(?P<day>{DAY}){ORDINAL}?"
    rf"(?:,?\s+(?P<year>{YEAR}))?{E}",
    relative=False,
)
def _date(m, today):
    month, day = _month_number(m["month"]), int(m["day"])
    if m["year"]:
        return _dated(int(m["year"]), month, day)
    return _recent_date(month, day, today)


@_rule(r"(?<![\w-])(?P<year>\d{4})(?P<sep>[-/])(?P<month>\d\d?)(?P=sep)(?P<day>\d\d?)(?!\d)", relative=False)
def _iso_date(m, today):
    return _dated(int(m["year"]), int(m["month"]), int(m["day"]))


@_rule(rf"(?<![\w-])(?P<year>{YEAR})-(?P<month>0[1-9]|1[0-2])(?![\d-])", relative=False)
def _iso_month(m, today):
    return _days(*_month(int(m["year"]), int(m["month"])), "month")


@_rule(
    rf"{B}(?:(?P<on>on\s+)?the\s+(?P<day_en>{DAY}){ORDINAL}|(?:pada\s+)?(?:tanggal|tgl\.?)\s*(?P<day_id>{DAY})){E}",
    relative=False,
)
def _day_of_month(m, today):
    if m["day_en"] and not (m["on"] or _cued(m)):
        return None
    return _recent_day_of_month(int(m["day_en"] or m["day_id"]), today)


@_rule(
    rf"{B}(?:(?:on\s+)?the\s+(?P<day_en>{DAY}){ORDINAL}?\s+of\s+(?P<rel>{EN_REL})\s+month"
    rf"|(?:pada\s+)?(?:tanggal|tgl\.?)\s*(?P<day_id>{DAY})\s+bulan\s+(?P<idrel>{ID_REL})){E}"
)
def _day_of_relative_month(m, today):
    first = _shifted("month", _relative(m, "rel", "idrel"), today)[0]
    return _dated(first.year, first.month, int(m["day_en"] or m["day_id"]))


@_rule(rf"{B}{PREP}(?:(?P<word>(?:the\s+)?year|tahun)\s+)?(?P<year>{YEAR}){E}{NOT_ISO}", relative=False)
def _year(m, today):
    if not (m["prep"] or m["word"] or _cued(m)):
        return None
    year = int(m["year"])
    return _days(dt.date(year, 1, 1), dt.date(year, 12, 31), "year")


@_rule(
    rf"{ZB}{ZH_AT}(?:(?P<year>\d{{4}})\s*年\s*)?(?P<month>{ZH_NUM})\s*月\s*(?P<day>{ZH_NUM})\s*[日号]",
    relative=False,
)
def _zh_date(m, today):
    month, day = _zh_count(m["month"]), _zh_count(m["day"])
    if m["year"]:
        return _dated(int(m["year"]), month, day)
    if not 1 <= month <= 12:
        return None
    return _recent_date(month, day, today)


@_rule(rf"{ZB}{ZH_AT}(?:(?P<year>\d{{4}})\s*年\s*)?(?P<month>{ZH_NUM})\s*月份?", relative=False)
def _zh_month(m, today):
    month = _zh_count(m["month"])
    if m["year"]:
        return _days(*_month(int(m["year"]), month), "month")
    if not 1 <= month <= 12:
        return None
    return _recent_month(month, today)


@_rule(rf"(?<!\d){ZH_AT}(?P<year>\d{{4}})\s*年", relative=False)
def _zh_year(m, today):
    year = int(m["year"])
    return _days(dt.date(year, 1, 1), dt.date(year, 12, 31), "year")


# --- Putting it together -------------------------------------------------------------


@dataclass(frozen=True)
class _Candidate:
    start: int  # in the normal text, words before that changed it included
    end: int
    found: Found
    order: int  # the rule's place, to break ties
    relative: bool  # a phrase counted from today, not a calendar name


class _NormalChars(dict[int, str]):
    """Each character's NFKC lower-case form, by code point, worked out on first use."""

    def __missing__(self, code: int) -> str:
        normal = self[code] = unicodedata.normalize("NFKC", chr(code)).lower()
        return normal


_NORMAL_CHARS = _NormalChars()


def _normalise(query: str) -> tuple[str, Sequence[int]]:
    """NFKC lower-case text, and for each of its characters the index of the query character it came from."""
    if query.isascii():
        return query.lower(), range(len(query))
    text = query.translate(_NORMAL_CHARS)  # character by character, as below
    if len(text) == len(query):  # no form is empty, so each is one character
        return text, range(len(query))
    chars: list[str] = []
    origin: list[int] = []
    for i, ch in enumerate(query):
        normal = _NORMAL_CHARS[ord(ch)]
        chars.append(normal)
        origin.extend([i] * len(normal))
    return "".join(chars), origin


#: Every string some rule needs, and the rules that need it (by place in RULES), relative ones apart.
_NEEDING: dict[bool, dict[str, list[int]]] = {True: {}, False: {}}
for _order, _r in enumerate(RULES):
    for _w in frozenset().union(*_r.needs):
        _NEEDING[_r.relative].setdefault(_w, []).append(_order)
#: Rules that need nothing known, tried on every text.
_UNGATED = {
    kind: frozenset(order for order, r in enumerate(RULES) if r.relative is kind and not r.needs) for kind in _NEEDING
}
_NEEDED = {kind: frozenset(needing) for kind, needing in _NEEDING.items()}
_ALL_NEEDED = _NEEDED[True] | _NEEDED[False]
#: Needed strings with whitespace inside (none today): looked for in the whole text.
_SPACED = tuple(w for w in _ALL_NEEDED if any(ch.isspace() for ch in w))
_UNSPACED = tuple(w for w in _ALL_NEEDED if w not in _SPACED)
#: The unspaced strings by their first character: a run can hold only those that start with one of its own.
_UNSPACED_BY_FIRST: dict[str, tuple[str, ...]] = {}
for _w in _UNSPACED:
    _UNSPACED_BY_FIRST[_w[0]] = (*_UNSPACED_BY_FIRST.get(_w[0], ()), _w)


class _ChunkNeeds(dict[str, frozenset[str]]):
    """The needed strings inside each run of non-space characters, worked out on first use."""

    LIMIT = 1 << 16  # runs remembered; past it, the memory starts over

    def __missing__(self, chunk: str) -> frozenset[str]:
        if len(self) >= self.LIMIT:
            self.clear()
        found = self[chunk] = frozenset(
            w for first in set(chunk) for w in _UNSPACED_BY_FIRST.get(first, ()) if w in chunk
        )
        return found


_CHUNK_NEEDS = _ChunkNeeds()


def _present(text: str) -> set[str]:
    """The needed strings that occur in text.

    A string without whitespace occurs only inside one run of non-space characters, so
    each distinct run (most are words, and words repeat) is searched once.
    """
    found: set[str] = set().union(*map(_CHUNK_NEEDS.__getitem__, text.split()))
    if _SPACED:
        found.update(w for w in _SPACED if w in text)
    return found


def _gated(present: set[str], *, relative: bool) -> list[tuple[int, Rule]]:
    """The relative rules (or the others), in order, whose needs are all present: the only ones that can match."""
    needing = _NEEDING[relative]
    if present.isdisjoint(_NEEDED[relative]) and not _UNGATED[relative]:
        return []
    maybe = _UNGATED[relative].union(*(needing[w] for w in present if w in needing))
    return [(order, RULES[order]) for order in sorted(maybe) if not any(map(present.isdisjoint, RULES[order].needs))]


def _with_words_before(text: str, start: int, found: Found, today: dt.date) -> tuple[int, Found] | None:
    """Apply early/mid/late, then since/after, to a candidate; None when "before" makes it unusable."""
    if found[2] in ("month", "year") and (part := PART_BEFORE.search(text, 0, start)):
        found = _part(found, next(k for k in ("early", "mid", "late") if part[k]))
        start = part.start()
    if opener := OPEN_BEFORE.search(text, 0, start):
        first = found[0] if opener["since"] else found[1] + ONE_DAY
        if first > today:
            return None
        return opener.start(), (first, today, found[2])
    if BEFORE_BEFORE.search(text, 0, start):
        return None
    return start, found


def _candidates(text: str, today: dt.date, rules: list[tuple[int, Rule]]) -> list[_Candidate]:
    """Every match of the rules that reads as a time."""
    out = []
    for order, rule in rules:
        for m in rule.pattern.finditer(text):
            try:
                found = rule.read(m, today)
                placed = found and _with_words_before(text, m.start(), found, today)
            except (ValueError, OverflowError):  # off the calendar: year 0, year 10000, day 31 of June
                continue
            if placed:
                out.append(_Candidate(placed[0], m.end(), placed[1], order, rule.relative))
    return out


def _leftmost_longest(candidates: list[_Candidate]) -> list[_Candidate]:
    """Non-overlapping candidates: leftmost first, then longest, then the earlier rule."""
    chosen: list[_Candidate] = []
    reach = 0
    for c in sorted(candidates, key=lambda c: (c.start, c.start - c.end, c.order)):
        if c.start >= reach:
            chosen.append(c)
            reach = c.end
    return chosen


DANGLING = " \t\r\n,.;:!?-–—，。？！、；："
SPACES = re.compile(r"\s+")
SPACE_BEFORE_PUNCTUATION = re.compile(r" ([,.;:!?])")


def _residual(query: str, spans: list[tuple[int, int]]) -> str:
    """The query less the spans, whitespace collapsed, punctuation left at either end stripped."""
    if not spans:
        return query.strip()
    kept, at = [], 0
    for start, end in spans:
        kept.append(query[at:start])
        at = end
    kept.append(query[at:])
    text = SPACE_BEFORE_PUNCTUATION.sub(r"\1", SPACES.sub(" ", "".join(kept)))
    return text.strip(DANGLING)


def _read(
    query: str, today: dt.date, *, relative_only: bool = False
) -> tuple[str, list[_Candidate], list[tuple[int, int]]]:
    """The normal text, the chosen candidates, and each one's span in the query.

    Only the rules whose needs the text holds are tried (see ``_needs``); with
    ``relative_only``, a text that no relative rule can match gives no candidates at all.
    """
    text, origin = _normalise(query)
    present = _present(text)
    rules = _gated(present, relative=True)
    candidates = _candidates(text, today, rules) if rules else []
    if candidates or not relative_only:  # without a relative candidate, the others cannot matter
        candidates += _candidates(text, today, _gated(present, relative=False))
    if not candidates:
        return text, [], []
    chosen = _leftmost_longest(candidates)
    return text, chosen, [(origin[c.start], origin[c.end - 1] + 1) for c in chosen]


def _ranges(query: str, chosen: list[_Candidate], spans: list[tuple[int, int]]) -> tuple[TimeRange, ...]:
    return tuple(
        TimeRange(c.found[0], c.found[1], query[a:b], c.found[2]) for c, (a, b) in zip(chosen, spans, strict=True)
    )


def parse(query: str, today: dt.date) -> TimeQuery:
    """Every time expression of query, as day ranges relative to today; never raises."""
    text, chosen, spans = _read(query, today)
    return TimeQuery(_ranges(query, chosen, spans), WHEN.search(text) is not None, _residual(query, spans))


def relative(text: str, today: dt.date) -> tuple[TimeRange, ...]:
    """The ranges of ``parse(text, today).ranges`` that a relative phrase names; never raises.

    A relative phrase is counted from today: kemarin, last week, 3 hari lalu, in two
    days, hari Minggu lalu, Mei lalu, the last 3 days, since yesterday. Calendar names
    are left out, however they are read: dates with or without a year, a month or a
    year by name or number, "tanggal 14". The text is read exactly as ``parse`` reads
    it, so a phrase means the same days here as in a query.
    """
    _, chosen, spans = _read(text, today, relative_only=True)
    if not chosen:
        return ()
    kept = [(c, span) for c, span in zip(chosen, spans, strict=True) if c.relative]
    return _ranges(text, [c for c, _ in kept], [span for _, span in kept])


def explain(tq: TimeQuery) -> str:
    """One line for ``kenang recall --explain``: the ranges read and whether the query asks when."""

    def days(r: TimeRange) -> str:
        return r.start.isoformat() if r.start == r.end else f"{r.start.isoformat()}..{r.end.isoformat()}"

    found = ", ".join(f"'{r.text}' → {days(r)}" for r in tq.ranges) or "none"
    return f"time: {found}; asks when: {'yes' if tq.asks_when else 'no'}"


def as_dict(tq: TimeQuery) -> dict:
    """What ``kenang recall --explain --json`` prints of a query's time."""
    return {
        "ranges": [
            {"text": r.text, "start": r.start.isoformat(), "end": r.end.isoformat(), "precision": r.precision}
            for r in tq.ranges
        ],
        "asks_when": tq.asks_when,
        "residual": tq.residual,
    }
