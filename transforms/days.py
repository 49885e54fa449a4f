"""Which day a session belongs to, and whether that day may be processed yet.

- A session's day is the local date, in the configured zone, of its first
  timestamped message. Failing that, the ``YYYY-MM-DD`` at the start of its file name.
  Failing that, the file's mtime, and the day is flagged ``day_source='mtime'``.
  A session that crosses midnight belongs to the day it started.
- Day D is eligible once D has ended in the configured zone and the grace period has
  passed: ``now >= start_of(D + 1) + grace``. ``now`` is the run's notion of time
  (``--now``), so backfills and tests can replay any night.
- A file is quiet once the wall clock is at least the quiet period past its mtime. This
  uses the real clock on purpose: it guards against a writer that is active right now,
  whatever night ``--now`` replays. An mtime in the future is never quiet.
"""

from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta, tzinfo

_NAME_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})")


def name_date(file_name: str) -> date | None:
    """The YYYY-MM-DD at the start of a file name, if it is a real date."""
    m = _NAME_DATE.match(file_name)
    if not m:
        return None
    try:
        return date(int(m[1]), int(m[2]), int(m[3]))
    except ValueError:
        return None


def session_day(first_ts: datetime | None, file_name: str, mtime: float, tz: tzinfo) -> tuple[date, str]:
    """(day, day_source) for a session: 'timestamp', 'filename' or 'mtime'."""
    if first_ts is not None:
        return first_ts.astimezone(tz).date(), "timestamp"
    if (d := name_date(file_name)) is not None:
        return d, "filename"
    return datetime.fromtimestamp(mtime, tz).date(), "mtime"


def day_start(day: date, tz: tzinfo) -> datetime:
    return datetime.combine(day, time(0), tzinfo=tz)


def eligible_from(day: date, tz: tzinfo, grace: timedelta) -> datetime:
    """The first instant at which day may be processed."""
    return day_start(day + timedelta(days=1), tz) + grace


def day_is_eligible(day: date, now: datetime, tz: tzinfo, grace: timedelta) -> bool:
    return now >= eligible_from(day, tz, grace)


def file_is_quiet(mtime: float, wall_now: float, quiet: timedelta) -> bool:
    age = wall_now - mtime
    return age >= 0 and age >= quiet.total_seconds()

