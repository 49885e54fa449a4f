"""Which day a session belongs to, and whether that day may be processed yet.

- A session's day is the local date, in the configured zone, of its first
  timestamped message. Failing that, the ``YYYY-MM-DD`` at the start of its file name.
  Failing that, the file's mtime, and the day is flagged ``day_source='mtime'``.
  A session that crosses midnight belongs to the day it started.
- Day D is eligible once D has ended in the configured zone and the grace period has
  passed: ``now >= start_of(D + 1) + grace``. ``now`` is the run's notion of time
  (``--now``), so backfills and tests can replay any night.
- A sane time lies between 1970-01-01 (UTC) and one day past the run's ``now``. A
  message dated outside that window, or a day outside it (a file named
  ``9999-12-31-x.md``), is a ``bad_timestamp``: such a date cannot be a chat of
  tonight's, and year 9999 or 0001 would overflow the day arithmetic further on.
- A file is quiet once the wall clock is at least the quiet period past its mtime. This
  uses the real clock on purpose: it guards against a writer that is active right now,
  whatever night ``--now`` replays. An mtime in the future is never quiet.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import UTC, date, datetime, time, timedelta, tzinfo

from transforms.errors import ParseError

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


EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
#: How far past the run's ``now`` a timestamp may lie (clocks drift; zones differ).
FUTURE_SLACK = timedelta(days=1)


def _utc_naive(ts: datetime) -> datetime | None:
    """``ts`` as naive UTC, or None when it cannot be expressed (year 1 at +07:00)."""
    try:
        offset = ts.utcoffset() or timedelta(0)
        return ts.replace(tzinfo=None) - offset
    except OverflowError:
        return None


def check_times(stamps: Iterable[datetime | None], now: datetime, what: str = "message") -> None:
    """Raise ``bad_timestamp`` for the first time outside 1970-01-01 .. now + 1 day."""
    lo = EARLIEST.replace(tzinfo=None)
    hi = _utc_naive(now + FUTURE_SLACK) or datetime.max  # past the last UTC instant: nothing lies beyond it
    for i, ts in enumerate(stamps, 1):
        if ts is None:
            continue
        utc = _utc_naive(ts)
        if utc is None or not lo <= utc <= hi:
            raise ParseError(
                f"{what} {i} is dated {ts.isoformat()}, outside the sane range 1970-01-01 .. "
                f"{(now + FUTURE_SLACK).date().isoformat()} (one day past the run's --now)",
                kind="bad_timestamp",
            )


def check_day(day: date, now: datetime, source: str) -> None:
    """Raise ``bad_timestamp`` for a day outside 1970-01-01 .. now + 1 day."""
    if not EARLIEST.date() <= day <= (now + FUTURE_SLACK).date():
        raise ParseError(
            f"its day {day.isoformat()} (from its {source}) is outside the sane range 1970-01-01 .. "
            f"{(now + FUTURE_SLACK).date().isoformat()}",
            kind="bad_timestamp",
        )
