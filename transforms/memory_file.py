"""MEMORY_INDEX.md: one line per summarized day, a section per month, newest first.

Each line is ``- [[<note's path>|date]] importance/10 · mood · title — first sentence``,
so an assistant (or a person) can scan months of memory at a glance and follow the link
to the day's note: the link is the note's path from the archive's root, which Obsidian
opens when the archive is its vault (``transforms.vault``). A day without a title (a
version-1 note) shows its top tags instead. The index is rendered from the
``daily_summaries`` rows alone and holds no timestamp, so the same summaries always
render the same bytes and a rerun leaves the file alone.

The snapshot an agent reads, and the line recall indexes, are the same lines with the
plain date in place of the link: they live outside the vault.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass

from transforms import vault
from transforms.frontmatter import sentences

TOP_TAGS = 3
FIRST_SENTENCE_MAX = 200


@dataclass(frozen=True)
class IndexEntry:
    date: dt.date
    importance: int
    mood: str
    tags: tuple[str, ...]
    summary: str
    title: str = ""
    path: str = ""  # the note, from the archive's root (``daily_summaries.path``); "" links nothing


def render_memory_index(user_id: str, entries: Iterable[IndexEntry]) -> str:
    by_month: dict[str, list[IndexEntry]] = {}
    for e in entries:
        by_month.setdefault(f"{e.date:%Y-%m}", []).append(e)
    months = sorted(by_month, reverse=True)
    return assemble_memory_index(
        user_id, sum(len(v) for v in by_month.values()), [month_part(by_month[m]) for m in months]
    )


def month_part(entries: Iterable[IndexEntry]) -> str:
    """One month's section of the index (its heading and its days' lines, newest first), as the file holds it.

    The file is ``assemble_memory_index`` of its months' parts, newest month first, so a
    run that changed one month renders that month's part alone and joins the others as
    they were: the bytes are those of a whole render.
    """
    entries = sorted(entries, key=lambda e: e.date, reverse=True)
    if not entries:
        return ""
    return "\n".join(["", f"## {entries[0].date:%Y-%m}", "", *(entry_line(e) for e in entries)])


def assemble_memory_index(user_id: str, days: int, parts: Iterable[str]) -> str:
    """The whole file from its months' parts (newest month first) and the number of days they hold."""
    head = "\n".join(
        [
            f"# Memory index: {user_id}",
            "",
            f"{days} day{'s' if days != 1 else ''} remembered. "
            "Written by kenang from the daily summaries; edits are overwritten.",
        ]
    )
    return head + "".join("\n" + p for p in parts if p) + "\n"


def entry_line(e: IndexEntry, *, link: bool = True) -> str:
    """One day's line: ``- [[path|date]] importance/10 · mood · title — first sentence``; ``link=False``: the plain date."""
    what = e.title or ", ".join(e.tags[:TOP_TAGS]) or "no tags"
    first = (sentences(e.summary) or [""])[0]
    if len(first) > FIRST_SENTENCE_MAX:
        first = first[: FIRST_SENTENCE_MAX - 1].rstrip() + "…"
    day = e.date.isoformat()
    shown = (vault.link(e.path, day) if link and e.path else None) or day
    return f"- {shown} {e.importance}/10 · {e.mood} · {what} — {first}"


#: The ``daily_summaries`` columns ``entry_of`` reads (a reader of every day asks for these alone).
ENTRY_COLUMNS = ("date", "importance", "mood", "tags", "summary", "title", "path")


def entry_of(row: dict) -> IndexEntry:
    """The entry for a ``daily_summaries`` row."""
    return IndexEntry(
        row["date"],
        row["importance"],
        row["mood"],
        tuple(row["tags"]),
        row["summary"],
        row.get("title") or "",
        row.get("path") or "",
    )


def render_snapshot(user_id: str, entries: Iterable[IndexEntry], budget: int) -> str:
    """What an agent reads at the start of a session: the newest days' lines, within ``budget`` characters.

    The header says how many days it holds of how many, so an agent knows what was
    left out (and can ask ``memory_day`` or ``memory_recall`` for more).
    """
    entries = sorted(entries, key=lambda e: e.date, reverse=True)
    lines: list[str] = []
    used = 0
    for e in entries:
        line = entry_line(e, link=False)
        if used + len(line) + 1 > budget and lines:
            break
        lines.append(line[:budget])
        used += len(line) + 1
    if not entries:
        return f"# Memory of {user_id}\n\nNothing remembered yet.\n"
    head = (
        f"# Memory of {user_id}: the latest {len(lines)} of {len(entries)} days "
        f"({entries[0].date.isoformat()} back to {entries[len(lines) - 1].date.isoformat()})"
    )
    return "\n".join([head, "", *lines]) + "\n"
