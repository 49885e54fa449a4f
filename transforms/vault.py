"""The archive as an Obsidian vault: its layout, declared once, and the wiki links kenang writes into it.

Layout, from the archive's root (the vault's root):

- ``daily_sessions/YYYY-MM-DD/`` holds the default user's day: the archived originals
  and ``YYYY-MM-DD.summary.md``; ``daily_sessions/YYYY-MM-DD/<user>/`` holds any other
  user's day (``day_folder``);
- ``imports/`` (``imports/<user>/``) the exports transcripts were cut from;
- ``MEMORY_INDEX.md`` (default user) and ``MEMORY_INDEX.<user>.md`` at the root.

``flows.store.archive_files`` places files by these names; the renderers link by them.

Links resolve the way Obsidian resolves them: the target is what comes before ``|``
(the alias, what a reader sees) and ``#``; a target holding ``/`` is a path from the
vault's root, any other is a file's name, which must be unique in the vault. A Markdown
file's target drops ``.md``; any other file keeps its extension. Two users' notes of
one day share a file name, so a link to a day's note or an archived transcript is
always its path, with the date or the session id as its alias. A file whose path
cannot be written inside ``[[...]]`` (it holds ``[``, ``]``, ``|``, ``#``, ``^``, a
backslash or a control character) gets no link: ``link`` returns None.
"""

from __future__ import annotations

import datetime as dt
import re

DAILY = "daily_sessions"
IMPORTS = "imports"
INDEX_STEM = "MEMORY_INDEX"
SUMMARY_SUFFIX = ".summary.md"

_UNLINKABLE = re.compile(r"[\[\]|#^\\\x00-\x1f\x7f]")


def user_folder(user_id: str, default_user: str) -> str:
    """The user's folder inside each day folder: "" for the default user, the user id for anyone else."""
    return "" if user_id == default_user else user_id


def day_folder(day: dt.date, folder: str = "") -> str:
    """``daily_sessions/YYYY-MM-DD`` (``/<folder>`` for a user other than the default), from the root."""
    base = f"{DAILY}/{day.isoformat()}"
    return f"{base}/{folder}" if folder else base


def summary_name(day: dt.date) -> str:
    return f"{day.isoformat()}{SUMMARY_SUFFIX}"


def summary_path(day: dt.date, folder: str = "") -> str:
    """The day's note, from the root: ``daily_sessions/YYYY-MM-DD/[user/]YYYY-MM-DD.summary.md``."""
    return f"{day_folder(day, folder)}/{summary_name(day)}"


def index_name(user_id: str, default_user: str) -> str:
    """MEMORY_INDEX.md for the default user, MEMORY_INDEX.<user>.md for everyone else."""
    return f"{INDEX_STEM}.md" if user_id == default_user else f"{INDEX_STEM}.{user_id}.md"


def index_of_folder(folder: str) -> str:
    """The index of the user whose notes live in ``folder`` (see ``user_folder``)."""
    return f"{INDEX_STEM}.{folder}.md" if folder else f"{INDEX_STEM}.md"


def folder_of_index(name: str) -> str | None:
    """``index_of_folder`` read back: the folder, or None when ``name`` is not an index's name."""
    if name == f"{INDEX_STEM}.md":
        return ""
    if name.startswith(f"{INDEX_STEM}.") and name.endswith(".md") and len(name) > len(INDEX_STEM) + 4:
        return name[len(INDEX_STEM) + 1 : -len(".md")]
    return None


def target(path: str) -> str:
    """What a link to ``path`` (from the root) names: the path, less ``.md`` for a Markdown file."""
    return path.removesuffix(".md") if path.endswith(".md") and path != ".md" else path


def linkable(path: str) -> bool:
    """Whether ``path`` can be written as a link's target and read back the same."""
    return bool(path) and not _UNLINKABLE.search(path) and path == path.strip() and not path.endswith("/")


def link(path: str, alias: str | None = None) -> str | None:
    """``[[target|alias]]`` for the file at ``path`` (from the root); None when the path cannot be linked."""
    if not linkable(path) or (alias is not None and (not linkable(alias) or "/" in alias)):
        return None
    t = target(path)
    return f"[[{t}|{alias}]]" if alias is not None and alias != t else f"[[{t}]]"
