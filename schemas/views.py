"""Views derived from the tables, declared once: the catalog and `kenang analyze` both create them.

One exploded view per list field of ``daily_summaries``: a row per (user, day, item), so
a trend is a plain ``GROUP BY``. Every view keeps ``user_id``.
"""

from __future__ import annotations

#: view name -> (list column of daily_summaries, name of the item column)
LIST_VIEWS: dict[str, tuple[str, str]] = {
    "summary_people": ("people", "person"),
    "summary_projects": ("projects", "project"),
    "summary_tags": ("tags", "tag"),
    "summary_technologies": ("technologies", "technology"),
    "summary_related_dates": ("related_dates", "related_date"),
}


def derived_view_sql(source: str = "daily_summaries") -> list[str]:
    """CREATE VIEW statements for the exploded views, over ``source`` (a view or table name)."""
    return [
        f'CREATE VIEW "{view}" AS SELECT user_id, date, unnest("{column}") AS "{item}", importance, mood '
        f'FROM "{source}"'
        for view, (column, item) in LIST_VIEWS.items()
    ]
