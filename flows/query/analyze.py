"""The SQL lane: deterministic trends over the summaries and messages (``kenang analyze``).

No LLM, no embeddings: each intent is one SQL aggregate over the Parquet tables and the
exploded views of ``schemas.views``, scoped to one user and a date range, returned as a
Polars DataFrame. The CLI and the notebooks call the same ``Analytics`` object, so no
SQL is copied into a notebook.

``Analytics`` opens an in-memory DuckDB over the Parquet files (never
``kenang.duckdb``), so it neither blocks nor is blocked by a running pipeline. On first
use it copies the user's rows it needs (summaries; message timestamps for the heatmap)
into memory, so every later query of a notebook session answers in milliseconds.
Timestamps are read in the configured timezone: days are the archive's local days, and
the heatmap's weekday and hour are local.

Intents (``INTENTS``): mood_timeseries, productivity, technology_counts,
people_mentions, project_activity, activity_heatmap, importance_trend.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable
from dataclasses import dataclass, field

import duckdb
import polars as pl

from flows.config import Settings, load_settings, pick_user, resolve_home
from flows.query.sql import LOCKED_CONFIG, lock_to_warehouse
from flows.stages.catalog import view_sql
from flows.store import compact
from schemas.tables import DAILY_SUMMARIES, DAYS, MESSAGES
from schemas.views import LIST_VIEWS, derived_view_sql
from transforms.errors import UsageError
from transforms.model import USER_ID_RE

PERIODS = ("day", "week", "month")
WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


@dataclass(frozen=True)
class Result:
    intent: str
    user: str
    start: dt.date | None
    end: dt.date | None
    frame: pl.DataFrame
    definition: dict = field(default_factory=dict)  # what the numbers mean, where a setting decides it

    @property
    def empty(self) -> bool:
        return self.frame.height == 0

    def as_dict(self) -> dict:
        return {
            "intent": self.intent,
            "user": self.user,
            "start": self.start.isoformat() if self.start else None,
            "end": self.end.isoformat() if self.end else None,
            "definition": self.definition,
            "rows": self.frame.to_dicts(),
        }


@dataclass(frozen=True)
class Intent:
    name: str
    doc: str
    run: Callable[[Analytics, dict], Result]


class Analytics:
    """One home's trends, for one user; cheap to keep open in a notebook."""

    def __init__(self, settings: Settings, user: str | None = None):
        self.settings = settings
        # Notebooks reach this connection (`analytics.con`): like `kenang sql`'s, it may read the warehouse only.
        self.con = lock_to_warehouse(
            duckdb.connect(":memory:", config=LOCKED_CONFIG), settings.paths.warehouse, settings.timezone.key
        )
        self._loaded: set[str] = set()
        self.user = self._choose_user(user)

    def _choose_user(self, user: str | None) -> str:
        def loaded() -> list[str]:
            sql = f"SELECT DISTINCT user_id FROM {self._view(DAYS)} WHERE status = 'loaded' ORDER BY 1"
            return [r[0] for r in self.con.execute(sql).fetchall()]

        return pick_user(user, loaded, "nothing is loaded yet: run `kenang run` (or `kenang backfill`) first")

    def _need(self, what: str) -> None:
        """Copy this user's rows into memory once (then every query is in-memory).

        A nightly run may drop a compact copy between the listing and the read; then
        the files are listed again, once.
        """
        if what in self._loaded:
            return
        try:
            self._copy_in(what)
        except duckdb.IOException:  # the CREATE TABLE failed whole: nothing to undo
            self._copy_in(what)
        self._loaded.add(what)

    def _copy_in(self, what: str) -> None:
        if what == "summaries":
            self.con.execute(
                "CREATE TABLE daily_summaries AS SELECT user_id, CAST(date AS DATE) AS date, summary, people, projects, "
                "tags, technologies, importance, mood, related_dates, sessions, messages "
                f"FROM {self._user_files(DAILY_SUMMARIES, 'daily_summaries')} WHERE user_id = ?",
                [self.user],
            )
            for stmt in derived_view_sql("daily_summaries"):
                self.con.execute(stmt)
        elif what == "messages":
            self.con.execute(
                "CREATE TABLE message_times AS SELECT CAST(date AS DATE) AS date, CAST(ts AS TIMESTAMPTZ) AS ts, role "
                f"FROM {self._user_files(MESSAGES, 'message_times')} WHERE user_id = ?",
                [self.user],
            )

    def _view(self, table) -> str:
        """A view over all of a table's files (typed and empty if it has none), made when first needed."""
        name = f"all_{table.name}"
        if name not in self._loaded:
            sql = view_sql(self.settings.paths.warehouse, table).replace(f'VIEW "{table.name}"', f'VIEW "{name}"', 1)
            self.con.execute(sql)
            self._loaded.add(name)
        return name

    def _user_files(self, table, compact_name: str) -> str:
        """This user's compact copies, else a month's base and new days, else its partitions (``compact.sources``)."""
        files = (
            compact.sources(self.settings.paths.warehouse, compact_name, self.user)
            if USER_ID_RE.match(self.user)
            else []
        )
        if not files:
            return self._view(table)
        listed = ", ".join("'" + str(f).replace("'", "''") + "'" for f in files)
        return f"read_parquet([{listed}], hive_partitioning=false, union_by_name=true)"

    def run(
        self,
        intent: str,
        *,
        start: dt.date | None = None,
        end: dt.date | None = None,
        by: str = "month",
        window: int | None = None,
    ) -> Result:
        if intent not in INTENTS:
            raise UsageError(f"unknown intent {intent!r}; known intents: {', '.join(INTENTS)}")
        if by not in PERIODS:
            raise UsageError(f"--by must be one of {', '.join(PERIODS)}")
        if start and end and end < start:
            raise UsageError(f"end {end} is before start {start}")
        args = {
            "start": start or dt.date.min,
            "end": end or dt.date.max,
            "by": by,
            "window": window or self.settings.analytics.rolling_days,
            "_start": start,
            "_end": end,
        }
        return INTENTS[intent].run(self, args)

    def frame(self, sql: str, params: list) -> pl.DataFrame:
        frame = pl.from_arrow(self.con.sql(sql, params=params).to_arrow_table())
        assert isinstance(frame, pl.DataFrame)  # a whole table comes back as a frame; polars types a union
        return frame

    def result(self, intent: str, args: dict, frame: pl.DataFrame, definition: dict | None = None) -> Result:
        return Result(intent, self.user, args["_start"], args["_end"], frame, definition or {})


_RANGE = "user_id = ? AND date BETWEEN ? AND ?"


def _period(by: str) -> str:
    return "date" if by == "day" else f"CAST(date_trunc('{by}', date) AS DATE)"


def _mood_timeseries(a: Analytics, x: dict) -> Result:
    a._need("summaries")
    p = [a.user, x["start"], x["end"]]
    if x["by"] == "day":
        df = a.frame(f"SELECT date, mood, importance FROM daily_summaries WHERE {_RANGE} ORDER BY date", p)
    else:
        df = a.frame(
            f"SELECT {_period(x['by'])} AS period, mood, count(*) AS days FROM daily_summaries WHERE {_RANGE} "
            "GROUP BY ALL ORDER BY period, days DESC, mood",
            p,
        )
    return a.result("mood_timeseries", x, df, {"by": x["by"]})


def _productivity(a: Analytics, x: dict) -> Result:
    a._need("summaries")
    cfg = a.settings.analytics
    moods, least = list(cfg.productive_moods), cfg.productive_min_importance
    df = a.frame(
        f"SELECT {_period(x['by'])} AS period, count(*) AS days, "
        "count(*) FILTER (WHERE list_contains(?, mood) AND importance >= ?) AS productive_days, "
        "round(productive_days / count(*), 4) AS share "
        f"FROM daily_summaries WHERE {_RANGE} GROUP BY ALL ORDER BY period",
        [moods, least, a.user, x["start"], x["end"]],
    )
    definition = {
        "by": x["by"],
        "productive_moods": moods,
        "productive_min_importance": least,
        "rule": f"a day is productive when its mood is one of {', '.join(moods)} and its importance is >= {least} "
        "(analytics.productive_moods / analytics.productive_min_importance in kenang.yaml)",
    }
    return a.result("productivity", x, df, definition)


def _list_counts(intent: str, view: str) -> Callable[[Analytics, dict], Result]:
    item = LIST_VIEWS[view][1]

    def run(a: Analytics, x: dict) -> Result:
        a._need("summaries")
        df = a.frame(
            f'SELECT {_period(x["by"])} AS period, "{item}", count(DISTINCT date) AS days, '
            f"min(date) AS first_day, max(date) AS last_day FROM {view} WHERE {_RANGE} "
            f'GROUP BY ALL ORDER BY period, days DESC, "{item}"',
            [a.user, x["start"], x["end"]],
        )
        return a.result(intent, x, df, {"by": x["by"], "counts": f"days whose summary names the {item}"})

    return run


def _project_activity(a: Analytics, x: dict) -> Result:
    a._need("summaries")
    df = a.frame(
        f"SELECT {_period(x['by'])} AS period, project, count(*) AS days, CAST(sum(s.messages) AS BIGINT) AS messages, "
        "round(avg(s.importance), 2) AS mean_importance "
        f"FROM summary_projects JOIN daily_summaries s USING (user_id, date) WHERE user_id = ? AND date BETWEEN ? AND ? "
        "GROUP BY ALL ORDER BY period, days DESC, project",
        [a.user, x["start"], x["end"]],
    )
    return a.result(
        "project_activity", x, df, {"by": x["by"], "messages": "all messages of the days naming the project"}
    )


def _activity_heatmap(a: Analytics, x: dict) -> Result:
    a._need("messages")
    long = a.frame(
        "SELECT isodow(ts) AS dow, hour(ts) AS hour, count(*) AS messages FROM message_times "
        "WHERE ts IS NOT NULL AND date BETWEEN ? AND ? GROUP BY ALL",
        [x["start"], x["end"]],
    )
    counts = {(int(r["dow"]), int(r["hour"])): int(r["messages"]) for r in long.iter_rows(named=True)}
    schema = {"weekday": pl.Utf8, **{f"{h:02d}": pl.Int64 for h in range(24)}}
    rows = [{"weekday": WEEKDAYS[d - 1], **{f"{h:02d}": counts.get((d, h), 0) for h in range(24)}} for d in range(1, 8)]
    wide = pl.DataFrame(rows if counts else [], schema=schema)
    return a.result(
        "activity_heatmap",
        x,
        wide,
        {"timezone": a.settings.timezone.key, "cells": "messages by local weekday (rows) and hour (columns)"},
    )


def _importance_trend(a: Analytics, x: dict) -> Result:
    a._need("summaries")
    w = int(x["window"])
    # The window looks back past --start: the first day of a range keeps its real rolling mean.
    df = a.frame(
        "SELECT * FROM (SELECT date, importance, round(avg(importance) OVER (ORDER BY date RANGE BETWEEN "
        f"INTERVAL {w - 1} DAYS PRECEDING AND CURRENT ROW), 3) AS rolling_mean "
        "FROM daily_summaries WHERE user_id = ?) WHERE date BETWEEN ? AND ? ORDER BY date",
        [a.user, x["start"], x["end"]],
    )
    return a.result(
        "importance_trend",
        x,
        df,
        {"window_days": w, "rolling_mean": f"mean importance of the summarized days in the {w} days up to each day"},
    )


INTENTS: dict[str, Intent] = {
    i.name: i
    for i in (
        Intent("mood_timeseries", "mood per day (--by day), or days per mood per week or month", _mood_timeseries),
        Intent("productivity", "share of productive days per period (definition from kenang.yaml)", _productivity),
        Intent(
            "technology_counts",
            "days each technology was named, per period",
            _list_counts("technology_counts", "summary_technologies"),
        ),
        Intent(
            "people_mentions",
            "days each person was named, per period",
            _list_counts("people_mentions", "summary_people"),
        ),
        Intent("project_activity", "days, messages and mean importance per project, per period", _project_activity),
        Intent("activity_heatmap", "messages by weekday x hour, in the configured timezone", _activity_heatmap),
        Intent("importance_trend", "importance per day with a rolling mean", _importance_trend),
    )
}


def analyze(
    intent: str,
    *,
    home: str | None = None,
    user: str | None = None,
    start: dt.date | None = None,
    end: dt.date | None = None,
    by: str = "month",
    window: int | None = None,
) -> pl.DataFrame:
    """One intent as a DataFrame (for notebooks); ``Analytics`` keeps a session warm."""
    settings = load_settings(resolve_home(home, os.environ))
    return Analytics(settings, user).run(intent, start=start, end=end, by=by, window=window).frame
