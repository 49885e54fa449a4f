"""The trends charts stay readable over a long range: days for a season, weeks for a year, months beyond.

The bucketing is pure (``transforms.periods``); the charts (``flows.query.charts``, which the trends
notebook draws) are rendered with matplotlib's Agg backend, and the test counts bars and labels.
"""

from __future__ import annotations

import datetime as dt

import duckdb
import matplotlib
import polars as pl
import pytest

from flows.query import charts
from transforms.periods import at_least, label_every, period_for, period_label, period_start

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402 (after the backend is chosen)

D = dt.date
MOODS = ("focused", "calm", "tired", "productive", "stressed")


def year_of_days(first: D, n: int) -> pl.DataFrame:
    """A summarized day for each of ``n`` days from ``first``: a mood, an importance and a rolling mean."""
    days = [first + dt.timedelta(days=i) for i in range(n)]
    imp = [1 + (i * 7) % 10 for i in range(n)]
    return pl.DataFrame(
        {"date": days, "mood": [MOODS[i % len(MOODS)] for i in range(n)], "importance": imp}
    ).with_columns(pl.col("importance").rolling_mean(7, min_samples=1).alias("rolling_mean"))


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.mark.parametrize(
    ("days", "period"),
    [(1, "day"), (21, "day"), (90, "day"), (91, "week"), (365, "week"), (366, "week"), (367, "month"), (1100, "month")],
)
def test_a_range_is_drawn_by_day_up_to_90_days_by_week_up_to_a_year_and_by_month_beyond(days, period):
    first = D(2026, 1, 1)
    assert period_for(first, first + dt.timedelta(days=days - 1)) == period
    assert period_for(first + dt.timedelta(days=days - 1), first) == period  # either order


def test_a_period_starts_where_duckdbs_date_trunc_starts_it():
    days = [D(2025, 12, 20) + dt.timedelta(days=i) for i in range(80)]
    con = duckdb.connect()
    for by in ("week", "month"):
        truncated = [
            r[0]
            for r in con.execute(f"SELECT CAST(date_trunc('{by}', d) AS DATE) FROM unnest(?) t(d)", [days]).fetchall()
        ]
        assert [period_start(d, by) for d in days] == truncated
    assert period_start(D(2026, 7, 15), "day") == D(2026, 7, 15)
    assert (period_label(D(2026, 7, 13), "week"), period_label(D(2026, 7, 1), "month")) == (
        "week of 2026-07-13",
        "2026-07",
    )


def test_a_chart_of_days_per_bar_is_weekly_at_least():
    assert [at_least(p, "week") for p in ("day", "week", "month")] == ["week", "week", "month"]


def test_labels_are_thinned_to_at_most_a_dozen():
    assert [label_every(n) for n in (1, 12, 13, 53, 90, 365)] == [1, 1, 2, 5, 8, 31]
    assert all(-(-n // label_every(n)) <= 12 for n in range(1, 1000))


def test_a_year_of_moods_is_53_weekly_bars_with_a_dozen_labels():
    days = year_of_days(D(2026, 1, 1), 365)  # a Thursday: its week starts on 2025-12-29
    fig, wide = charts.mood(days, "gading")
    ax = fig.axes[0]
    assert wide.height == 53 and wide["period"][0] == D(2025, 12, 29)
    assert len(ax.containers) == len(MOODS) and all(len(c) == 53 for c in ax.containers)
    assert sum(int(sum(c.datavalues)) for c in ax.containers) == 365  # every day is in one bar
    assert 1 <= len(ax.get_xticklabels()) <= 12 and ax.get_xticklabels()[0].get_text() == "week of 2025-12-29"
    assert ax.get_title() == "Mood per week (gading)"
    fig.canvas.draw()  # it renders


def test_two_years_of_moods_are_monthly_bars_and_three_weeks_are_weekly_ones():
    fig, wide = charts.mood(year_of_days(D(2025, 1, 1), 730), "gading")
    assert wide.height == 24 and all(len(c) == 24 for c in fig.axes[0].containers)
    assert fig.axes[0].get_xticklabels()[0].get_text() == "2025-01"
    fig, wide = charts.mood(year_of_days(D(2026, 6, 1), 21), "gading")
    assert wide.height == 3 and fig.axes[0].get_title() == "Mood per week (gading)"  # never a strip of 1-day bars


def test_a_year_of_importance_plots_one_point_per_week_beside_the_daily_rolling_mean():
    fig = charts.importance(year_of_days(D(2026, 1, 1), 365), "gading", 7)
    points, line = fig.axes[0].get_lines()
    assert len(points.get_xdata()) == 53 and len(line.get_xdata()) == 365
    fig = charts.importance(year_of_days(D(2026, 1, 1), 30), "gading", 7)
    assert len(fig.axes[0].get_lines()[0].get_xdata()) == 30
    fig.canvas.draw()


def test_productivity_annotates_a_dozen_months_but_not_53_weeks():
    def frame(periods: list[D]) -> pl.DataFrame:
        return pl.DataFrame(
            {"period": periods, "days": [7] * len(periods), "productive_days": [3] * len(periods)}
        ).with_columns((pl.col("productive_days") / pl.col("days")).alias("share"))

    months = frame([D(2026, m, 1) for m in range(1, 13)])
    weeks = frame([D(2025, 12, 29) + dt.timedelta(weeks=i) for i in range(53)])
    fig = charts.productivity([("month", months), ("week", weeks)], "gading")
    by_month, by_week = fig.axes
    assert len(by_month.patches) == 12 and len(by_month.texts) == 12
    assert len(by_week.patches) == 53 and len(by_week.texts) == 0
    assert len(by_week.get_xticklabels()) <= 12
    fig.canvas.draw()


def test_a_year_of_day_states_is_a_square_per_week_and_a_failed_day_still_shows_red():
    first = D(2026, 1, 1)
    days = pl.DataFrame(
        [
            {
                "user": user,
                "date": first + dt.timedelta(days=i),
                "state": "failed" if (user, i) == ("rina", 100) else "loaded",
                "summary": "summarized" if i < 360 else "pending",
                "index": "indexed",
            }
            for user in ("gading", "rina")
            for i in range(365)
        ]
    )
    fig = charts.day_status(days)
    ax = fig.axes[0]
    lanes = ax.collections
    assert len(lanes) == 6 and all(len(lane.get_offsets()) == 53 for lane in lanes)
    red = matplotlib.colors.to_rgba("tab:red")
    rina_load = lanes[3].get_facecolors()
    failed_week = (period_start(first + dt.timedelta(days=100), "week") - D(2025, 12, 29)).days // 7
    assert [i for i, c in enumerate(rina_load) if tuple(c) == red] == [failed_week]
    assert tuple(lanes[1].get_facecolors()[-1]) == matplotlib.colors.to_rgba("tab:orange")  # a pending day's week
    assert ax.get_title() == "Per-week status: load, summary and index (a square per week: its worst day)"
    fig = charts.day_status(days.filter(pl.col("date") < D(2026, 2, 1)))
    assert all(len(lane.get_offsets()) == 31 for lane in fig.axes[0].collections)
    fig.canvas.draw()
