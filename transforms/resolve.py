"""Decide a parsed session's owner, id and day.

Owner: the file's own ``user_id``, else the first folder under ``active/`` (or the
user folder in the archive), else ``default_user``; an owner that holds a secret (a
token pasted as ``user_id``) becomes its stable hash, like any identifier. Id: the
file's ``session_id``, else the file name without its extension; an id with brackets
or control characters (which would break a summary's session line) has them replaced
and a short hash of the original appended, so two such ids stay apart. Day: see ``transforms.days``; once a file is
archived, its archive folder is the day, so a later change of time zone never moves
archived sessions between days.
"""

from __future__ import annotations

import hashlib
import re
from datetime import date, tzinfo

from transforms.days import session_day
from transforms.errors import ParseError
from transforms.model import USER_ID_RE, ResolvedSession, Session
from transforms.redact import printable_name, redact_file_name, redact_identifier, redact_user_id

_UNSAFE_ID = re.compile(r"[\[\]\x00-\x1f\x7f]|[\ud800-\udfff]")


def active_folder_user(name: str) -> str | None:
    """The user a folder of active/ holds files for, as ingest reads it (by the folder's name as kenang records it,
    a name holding a secret as its hash); None when that names no valid user."""
    try:
        return folder_user(redact_file_name(printable_name(name)))
    except ParseError:
        return None


def folder_user(name: str | None) -> str | None:
    """The user a folder name gives, validated; None for no folder."""
    if name is None:
        return None
    user = redact_user_id(name)
    if not USER_ID_RE.match(user):
        raise ParseError(
            f"folder {name!r} does not name a valid user (lower-case letters, digits, '.', '_' or '-'); "
            f"rename the folder or set user_id in the file",
            kind="bad_user_id",
        )
    return user


def safe_session_id(value: str) -> str:
    """``value``, or for one holding brackets or control characters: those replaced by ``_``
    and ``-`` + 8 hex of the original's sha256 appended."""
    if not _UNSAFE_ID.search(value) and value.isprintable():
        return value
    digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    cleaned = "".join("_" if _UNSAFE_ID.match(c) or not c.isprintable() else c for c in value)
    return f"{cleaned}-{digest}"


def file_stem(file_name: str) -> str:
    stem, dot, _ext = file_name.rpartition(".")
    return stem if dot and stem else file_name


def resolve(
    session: Session,
    *,
    file_name: str,
    folder: str | None,
    default_user: str,
    tz: tzinfo,
    mtime: float,
    fixed_day: date | None = None,
) -> ResolvedSession:
    """Owner, id and day of a session; fixed_day is the archive folder's day when loading."""
    user = redact_identifier(session.user_id or folder_user(folder) or default_user)
    day, source = session_day(session.first_ts, file_name, mtime, tz)
    return ResolvedSession(
        session=session,
        session_id=safe_session_id(session.session_id or file_stem(file_name)),
        user_id=user,
        day=fixed_day or day,
        day_source=source,
    )
