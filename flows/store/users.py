"""Which users a home knows: the ones kenang.yaml names (``default_user``, ``mcp.users``,
each source's ``user``) and the ones that hold data (a day in the ledger, a file in the
archive record, core memory, a transcript waiting in ``active/<user>/``).

Every way in that could start a user checks here first (``check_user``): the MCP server
(``flows.query.mcp``), ``kenang remember`` and ``kenang memory``. A misspelt user is
refused with the users the home has, never made into a new one that tonight's run would
keep apart from the real one. ``kenang import`` is the way a new user starts: it refuses
none, but says in one line when its user is new to a home that has users.
"""

from __future__ import annotations

import os

from flows.config import Settings
from transforms.errors import ConfigError
from transforms.model import USER_ID_RE
from transforms.resolve import active_folder_user


class UnknownUser(ConfigError):
    """A user this home does not know: kenang.yaml does not name them and they hold no data."""


def named_users(settings: Settings) -> set[str]:
    """The users kenang.yaml names: ``default_user``, ``mcp.users`` and each source's ``user`` (not tokens)."""
    named = {settings.default_user, *settings.mcp.users, *(s.user for s in settings.config.sources if s.user)}
    return {u.strip().lower() for u in named}


def users_holding_data(settings: Settings) -> set[str]:
    """Users with a day in the ledger, a file in the archive record, core memory or a transcript in active/."""
    from flows.store import core_memory, ledger, warehouse
    from schemas.tables import ARCHIVE_FILES

    wh = settings.paths.warehouse
    users: set[str] = set(core_memory.users(settings))  # the nightly run keeps their snapshot: they are a user
    users.update(ledger.users(wh))
    root = warehouse.table_dir(wh, ARCHIVE_FILES)
    if root.is_dir():
        users.update(p.name.removeprefix("user_id=") for p in root.glob("date=*/user_id=*"))
    for top, dirs, files in os.walk(settings.paths.active):  # as ingest walks it: no dot-names, no linked folders
        rel = os.path.relpath(top, settings.paths.active)
        owner = settings.default_user if rel == "." else active_folder_user(rel.split(os.sep)[0]) or ""
        dirs[:] = [] if rel != "." and owner in users else [d for d in dirs if not d.startswith(".")]
        if any(not f.startswith(".") for f in files):
            users.add(owner)
    return {u for u in users if u and USER_ID_RE.match(u)}


def home_users(settings: Settings) -> list[str]:
    """Every user the home knows: named in kenang.yaml or holding data."""
    return sorted(named_users(settings) | users_holding_data(settings))


def knows(settings: Settings, user: str) -> bool:
    """Whether the home knows ``user`` (see ``home_users``)."""
    return user in named_users(settings) or user in users_holding_data(settings)


def check_user(settings: Settings, user: str) -> str:
    """The user id ``user`` names (trimmed, lower-cased) when the home knows them; else ``UnknownUser`` naming the
    users it has. The error quotes ``user`` as it was given: lower-cased, a key the redaction gate knows by its
    capitals (``AKIA...``, ``eyJ...``) would no longer be one it finds."""
    uid = user.strip().lower()
    if not uid:  # --user "" (an unset variable in a script): never taken as the default user
        raise UnknownUser(f"the user is empty; name one of this home's users ({', '.join(home_users(settings))})")
    if not USER_ID_RE.match(uid):
        raise UnknownUser(f"{user!r} is not a valid user id (a-z, 0-9, '.', '_' or '-', at most 64)")
    if uid in named_users(settings):  # known without a look at the data (what a cold `kenang recall` waits on)
        return uid
    known = home_users(settings)
    if uid not in known:
        raise UnknownUser(
            f"this home has no user {user!r} (its users: {', '.join(known)}); check the spelling, "
            "or list a new user under mcp.users in kenang.yaml"
        )
    return uid


def served_user(settings: Settings) -> tuple[str | None, str | None]:
    """The user a command serves when no ``--user`` is given, and a note when that is not the default user.

    The default user, unless they hold nothing and another user does: then that user when there is only one
    (the note says so), else ``UnknownUser`` naming them. (None, None) when no user holds anything yet, so the
    command says what to run first.
    """
    default = settings.default_user.strip().lower()
    holding = users_holding_data(settings)
    if not holding:
        return None, None
    if default in holding:
        return default, None
    others = sorted(holding)
    if len(others) == 1:
        return others[0], (
            f"serving {others[0]}, the home's only user with data ({default!r}, the default user, holds nothing)"
        )
    raise UnknownUser(
        f"the default user {default!r} holds nothing and this home has {len(others)} other users "
        f"({', '.join(others)}); choose one with --user"
    )
