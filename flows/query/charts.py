"""The notebooks' charts (trends, the backfill audit's timeline), drawn with matplotlib from frames.

A chart over a long range switches from days to weeks or months (``transforms.periods``): a year
of moods reads as 53 stacked weekly bars and two years as 24 monthly ones; the audit timeline
draws a square per week or month, coloured by its worst day. Axis labels are thinned to about a
dozen, and a bar carries its count only while there are few. Each function takes frames (as
``flows.query.analyze`` returns them) and returns the figure, reading nothing itself, so a test
renders a year with matplotlib's Agg backend and counts bars and points. matplotlib comes with
the ``notebooks`` extra; it is imported here only when a chart is drawn.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

import polars as pl

from transforms.periods import Period, at_least, label_every, period_for, period_label, period_start

if TYPE_CHECKING:
    from matplotlib.figure import Figure

#: The most bars a chart annotates with their counts; past it the labels would overlap.
ANNOTATED_BARS = 16


def chart_period(frame: pl.DataFrame, column: str = "date") -> Period:
    """The period per bar for the days in ``frame[column]`` (a day for an empty frame)."""
    if frame.is_empty():
        return "day"
    return period_for(frame[column].min(), frame[column].max())  # type: ignore[arg-type]


def bucketed(frame: pl.DataFrame, by: Period, column: str = "date") -> pl.DataFrame:
    """``frame`` with a ``period`` column: the first day of the period each row's day falls in."""
    return frame.with_columns(
        pl.col(column).map_elements(lambda d: period_start(d, by), return_dtype=pl.Date).alias("period")
    )


def mood(days: pl.DataFrame, user: str) -> tuple[Figure, pl.DataFrame]:
    """Days per mood, stacked, per week (per month past a year); ``days`` has a ``date`` and ``mood`` per day.

    Returns the figure and the table it draws (a period per row, a column per mood).
    """
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    by = at_least(chart_period(days), "week")  # a day holds one mood: a count per day would be a strip of 1s
    counts = bucketed(days, by).group_by("period", "mood").agg(pl.len().alias("days"))
    wide = counts.pivot(on="mood", index="period", values="days").fill_null(0).sort("period")
    moods = sorted((c for c in wide.columns if c != "period"), key=lambda m: (-wide[m].sum(), m))
    fig, ax = plt.subplots(figsize=(9, 4.5))
    x = list(range(wide.height))
    bottom = [0] * wide.height
    for m in moods:
        heights = wide[m].to_list()
        ax.bar(x, heights, bottom=bottom, label=m, width=0.8)
        bottom = [b + h for b, h in zip(bottom, heights, strict=True)]
    _period_axis(ax, wide["period"].to_list(), by)
    ax.set_title(f"Mood per {by} ({user})")
    ax.set_ylabel("days")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.legend(title="mood", bbox_to_anchor=(1.01, 1), loc="upper left")
    fig.tight_layout()
    return fig, wide


def productivity(panels: list[tuple[Period, pl.DataFrame]], user: str) -> Figure:
    """The productive-day share, one panel per (period, ``productivity`` frame), side by side."""
    import matplotlib.pyplot as plt

    widths = [max(frame.height, 2) for _, frame in panels]
    fig, axes = plt.subplots(
        1, len(panels), figsize=(11, 4), sharey=True, squeeze=False, gridspec_kw={"width_ratios": widths}
    )
    for ax, (by, frame) in zip(axes[0], panels, strict=True):
        frame = frame.sort("period")
        x = list(range(frame.height))
        bars = ax.bar(x, (frame["share"] * 100).to_list(), width=0.6, color="tab:green")
        if frame.height <= ANNOTATED_BARS:
            for bar, p, d in zip(bars, frame["productive_days"], frame["days"], strict=True):
                ax.annotate(
                    f"{p}/{d} days",
                    (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                    ha="center",
                    va="bottom",
                    fontsize=9,
                )
        pad = max(0.7, (3 - frame.height) / 2)
        ax.set_xlim(-pad, frame.height - 1 + pad)
        _period_axis(ax, frame["period"].to_list(), by)
        ax.set_title(f"per {by}")
    axes[0][0].set_ylim(0, 105)
    axes[0][0].set_ylabel("productive days (% of summarized days)")
    fig.suptitle(f"Productive-day share ({user})")
    fig.tight_layout()
    return fig


def importance(frame: pl.DataFrame, user: str, window_days: int) -> Figure:
    """Importance per day (or its mean per week or month over a long range), and the daily rolling mean."""
    import matplotlib.pyplot as plt

    frame = frame.sort("date")
    by = chart_period(frame)
    fig, ax = plt.subplots(figsize=(10, 4))
    if by == "day":
        ax.plot(frame["date"].to_list(), frame["importance"].to_list(), "o", color="tab:gray", alpha=0.7, label="day")
    else:
        means = bucketed(frame, by).group_by("period").agg(pl.col("importance").mean()).sort("period")
        ax.plot(
            means["period"].to_list(),
            means["importance"].to_list(),
            "o",
            color="tab:gray",
            alpha=0.8,
            label=f"mean per {by} (at its first day)",
        )
    ax.plot(
        frame["date"].to_list(),
        frame["rolling_mean"].to_list(),
        "-",
        color="tab:red",
        linewidth=2,
        label=f"{window_days}-day rolling mean",
    )
    ax.set_title(f"Importance per {by} ({user})")
    ax.set_xlabel("date")
    ax.set_ylabel("importance (1-10)")
    ax.legend()
    fig.autofmt_xdate()
    fig.tight_layout()
    return fig


#: A day's state as the audit timeline colours it, and how bad it is: a week or month shows its worst day.
STATUS_COLOURS = {
    "loaded": "tab:green",
    "summarized": "tab:green",
    "indexed": "tab:green",
    "failed": "tab:red",
    "missing": "tab:orange",
    "pending": "tab:orange",
}
_SEVERITY = {"failed": 3, "missing": 2, "pending": 2}
_LANES = (("state", "load"), ("summary", "summary"), ("index", "index"))


def day_status(days: pl.DataFrame) -> Figure:
    """The audit timeline: per user three lanes (load, summary, index), a square per day, week or month.

    ``days`` has a ``user``, ``date``, ``state``, ``summary`` and ``index`` per (user, day). Over a long
    range a square is a week or a month, coloured by its worst day, so one failed day still shows red.
    """
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    by = chart_period(days)
    users = sorted(days["user"].unique().to_list())
    lanes = [(u, column, name) for u in users for column, name in _LANES]
    fig, ax = plt.subplots(figsize=(10, 0.45 * len(lanes) + 1.6))
    for y, (user, column, _) in enumerate(lanes):
        sub = bucketed(days.filter(pl.col("user") == user), by).select(
            "period", pl.col(column).alias("status"), pl.col(column).replace_strict(_SEVERITY, default=0).alias("bad")
        )
        worst = sub.sort("bad", descending=True).group_by("period", maintain_order=True).first().sort("period")
        ax.scatter(
            worst["period"].to_list(),
            [y] * worst.height,
            marker="s",
            s=70,
            c=[STATUS_COLOURS.get(v, "tab:gray") for v in worst["status"].to_list()],
        )
    ax.set_yticks(range(len(lanes)), [f"{u} · {name}" for u, _, name in lanes])
    ax.invert_yaxis()
    handles = [
        Line2D([], [], marker="s", linestyle="", color=c, label=label)
        for label, c in (("done", "tab:green"), ("failed", "tab:red"), ("missing / pending", "tab:orange"))
    ]
    ax.legend(handles=handles, bbox_to_anchor=(1.01, 1), loc="upper left")
    worst_day = "" if by == "day" else f" (a square per {by}: its worst day)"
    ax.set_title(f"Per-{by} status: load, summary and index{worst_day}")
    ax.set_xlabel("date")
    ax.set_ylabel("user · stage")
    ax.grid(axis="x", alpha=0.3)
    fig.autofmt_xdate()
    fig.tight_layout()
    return fig


def _period_axis(ax: Any, periods: list[dt.date], by: Period) -> None:
    """Label about a dozen of the bars with their period; name the axis."""
    step = label_every(len(periods))
    shown = list(range(0, len(periods), step))
    ax.set_xticks(shown, [period_label(periods[i], by) for i in shown], rotation=30 if len(shown) > 4 else 0)
    for label in ax.get_xticklabels():
        label.set_horizontalalignment("right" if len(shown) > 4 else "center")
    ax.set_xlabel({"day": "day", "week": "week (from Monday)", "month": "month"}[by])
