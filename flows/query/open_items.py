"""What is still open: a user's rows of the ``open_items`` table, as ``kenang open-items`` and ``memory_open_items``
list them.

An item is open on a day when no later day has closed it and it is at most
``transforms.open_items.OPEN_DAYS`` days old (its ``expires_on`` is not past): what the
notes of that day carry under "Still open". ``days_open`` counts from the day it was
raised to that day (to the day it closed, or to its last day, for the others).
"""

from __future__ import annotations

import datetime as dt

from flows.config import Settings
from flows.store import warehouse
from schemas.tables import OPEN_ITEMS
from transforms.open_items import is_open


def list_open_items(
    settings: Settings, user: str, today: dt.date, *, include_closed: bool = False, since: dt.date | None = None
) -> list[dict]:
    """``user``'s items, oldest first: the open ones, or every one with ``include_closed``; from ``since`` on."""
    rows = warehouse.read_user_months(settings.paths.warehouse, OPEN_ITEMS, user).to_pylist()
    out = []
    for r in rows:
        if since is not None and r["raised_on"] < since:
            continue
        state = "open" if is_open(r, today) else "closed" if r["closed_on"] is not None else "expired"
        if state != "open" and not include_closed:
            continue
        if r["raised_on"] > today:  # raised after the day asked about: not yet an item then
            continue
        until = today if state == "open" else r["closed_on"] or r["expires_on"]
        out.append(
            {
                "item_id": r["item_id"],
                "text": r["text"],
                "raised_on": r["raised_on"].isoformat(),
                "days_open": (until - r["raised_on"]).days,
                "status": state,
                "closed_on": r["closed_on"].isoformat() if r["closed_on"] else None,
                "closed_by": r["closed_by"],
            }
        )
    return out
