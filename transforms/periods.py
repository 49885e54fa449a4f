"""How long a chart's bar is: a day, a week or a month, chosen from the range it covers.

A chart of one bar per day is readable for a season, not for a year. So the notebooks draw
days for a range of up to ``DAILY_DAYS`` days, weeks up to ``WEEKLY_DAYS`` (a year is 53
bars at most), and months beyond; a chart that counts days per bar (mood) starts at weeks. A period is named by its first day, as DuckDB's
``date_trunc`` names it (``flows.query.analyze`` groups by that): a week starts on Monday.
"""

from __future__ import annotations

import datetime as dt
from typing import Literal

Period = Literal["day", "week", "month"]

#: The longest range drawn a day per bar, and the longest drawn a week per bar (a leap year's days).
DAILY_DAYS = 90
WEEKLY_DAYS = 366


def period_for(first: dt.date, last: dt.date) -> Period:
    """The period per bar for a chart of the days ``first`` to ``last`` (inclusive)."""
    days = abs((last - first).days) + 1
    if days <= DAILY_DAYS:
        return "day"
    return "week" if days <= WEEKLY_DAYS else "month"


def at_least(by: Period, floor: Period) -> Period:
    """``by``, or ``floor`` when that is the longer period (a stacked count per day says nothing: weeks at least)."""
    order: tuple[Period, ...] = ("day", "week", "month")
    return max(by, floor, key=order.index)


def period_start(day: dt.date, by: Period) -> dt.date:
    """The first day of the period ``day`` falls in: itself, its week's Monday, or its month's first day."""
    if by == "day":
        return day
    if by == "week":
        return day - dt.timedelta(days=day.weekday())
    return day.replace(day=1)


def period_label(start: dt.date, by: Period) -> str:
    """A period as a chart's axis names it: 2026-07-14, week of 2026-07-13, or 2026-07."""
    if by == "month":
        return start.strftime("%Y-%m")
    return f"week of {start.isoformat()}" if by == "week" else start.isoformat()


def label_every(bars: int, most: int = 12) -> int:
    """Label every n-th bar so that at most ``most`` labels share an axis."""
    return max(1, -(-bars // most))
