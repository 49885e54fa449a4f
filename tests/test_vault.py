"""The archive opens as an Obsidian vault: every wiki link kenang writes resolves to exactly one file
(``helpers.resolve`` resolves a link the way Obsidian does)."""

from __future__ import annotations

import datetime as dt

import pytest
from helpers import NOW, drop, jsonl, links_of, resolve, unresolved_links

from flows.pipeline import nightly
from transforms import vault
from transforms.model import Message, Session
from transforms.render import render_markdown

pytestmark = pytest.mark.usefixtures("prefect_api")

JKT = NOW.tzinfo


def _session(sid: str, day: str, hhmm: str, *texts: str) -> Session:
    start = dt.datetime.fromisoformat(f"{day}T{hhmm[:2]}:{hhmm[2:]}:00").replace(tzinfo=JKT)
    roles = ("user", "assistant")
    msgs = tuple(Message(roles[i % 2], t, start + dt.timedelta(minutes=i), i) for i, t in enumerate(texts))
    return Session(sid, None, "claude-code", "markdown", msgs)


def _transcript(sid: str, day: str, hhmm: str, *texts: str, folder: str = "") -> bytes:
    """A transcript as kenang renders one: its Parent Day line links the day's note."""
    return render_markdown(
        _session(sid, day, hhmm, *texts), parent_day=dt.date.fromisoformat(day), folder=folder
    ).encode()


def _two_users_three_days(home) -> None:
    """Two users (the default and rina), each with more than one day; days that name other days."""
    for day, hhmm in (("2026-07-17", "0900"), ("2026-07-18", "2000"), ("2026-07-19", "1037")):
        drop(
            home,
            f"{day}-{hhmm}.md",
            _transcript(
                f"{day}-{hhmm}",
                day,
                hhmm,
                "Kemarin disk ZFS di NAS error lagi, zpool status bilang degraded.",
                "Jalankan zpool replace tank sdb sdc, lalu tunggu resilver selesai.",
                "Sudah diputuskan pakai disk WD Red 4 TB. Nanti saya cek SMART disk kedua.",
            ),
        )
    drop(
        home,
        "rina/2026-07-18-1900.md",
        _transcript(
            "2026-07-18-1900",
            "2026-07-18",
            "1900",
            "Let's plan the sahur schedule for next week, like we did on 2026-07-01.",
            "Alarms at 03.00 on weekdays, and the rice cooker timer at 02.30.",
            folder="rina",
        ),
    )
    drop(
        home,
        "rina/chat.jsonl",
        jsonl(
            {
                "role": "user",
                "content": "Yesterday's sahur plan worked. We'll keep the alarms at 03.00.",
                "timestamp": "2026-07-19T21:00:00+07:00",
            },
            {"role": "assistant", "content": "Good. I noted it.", "timestamp": "2026-07-19T21:01:00+07:00"},
        ),
    )


def test_every_link_in_the_archive_resolves_to_exactly_one_file(home):
    _two_users_three_days(home)
    result = nightly(now=NOW, home=str(home.paths.home))
    assert result["summarize"]["summarized"] == 5
    archive = home.paths.archive
    assert unresolved_links(archive) == []
    files = sorted(p.relative_to(archive).as_posix() for p in archive.rglob("*") if p.is_file())
    found = links_of(archive)
    # every kind of link kenang writes is there, so the check above cannot pass on an empty archive
    every = [(f, link) for f, links in found.items() for link in links]
    targets = [resolve(link, files)[0] for _, link in every]
    assert {"MEMORY_INDEX.md", "MEMORY_INDEX.rina.md"} <= set(targets)  # each note links up to its index
    notes = [f for f in files if f.endswith(".summary.md")]
    assert len(notes) == 5 and all(n in targets for n in notes)  # the indexes link every note
    assert "daily_sessions/2026-07-19/rina/chat.jsonl" in targets  # a session line links a JSONL transcript
    assert "daily_sessions/2026-07-19/2026-07-19-1037.md" in targets  # ... and a Markdown one
    related = [link for f, link in every if f.endswith("2026-07-19.summary.md") and link.endswith("|2026-07-18")]
    assert related  # "kemarin" names a day with a note: it is linked
    parent = [link for f, link in every if f == "daily_sessions/2026-07-18/rina/2026-07-18-1900.md"]
    assert parent == ["daily_sessions/2026-07-18/rina/2026-07-18.summary|2026-07-18"]  # a transcript's parent day


def test_a_day_named_in_a_note_without_a_note_of_its_own_is_not_linked(home):
    _two_users_three_days(home)
    nightly(now=NOW, home=str(home.paths.home))
    note = (home.paths.archive / vault.summary_path(dt.date(2026, 7, 18), "rina")).read_text(encoding="utf-8")
    assert "related_dates:\n  - '2026-07-01'" in note  # the property keeps the date
    assert "[[daily_sessions/2026-07-01" not in note and "Related: 2026-07-01" in note  # the body names it plainly


def test_the_layout_names_a_day_folder_per_user_and_an_index_per_user():
    day = dt.date(2026, 7, 19)
    assert vault.day_folder(day, vault.user_folder("default", "default")) == "daily_sessions/2026-07-19"
    assert vault.summary_path(day, vault.user_folder("rina", "default")) == (
        "daily_sessions/2026-07-19/rina/2026-07-19.summary.md"
    )
    assert vault.index_name("rina", "default") == "MEMORY_INDEX.rina.md" == vault.index_of_folder("rina")
    assert vault.folder_of_index("MEMORY_INDEX.rina.md") == "rina" and vault.folder_of_index("MEMORY_INDEX.md") == ""
    assert vault.folder_of_index("NOTES.md") is None


@pytest.mark.parametrize(
    "path, alias, link",
    [
        (
            "daily_sessions/2026-07-19/2026-07-19.summary.md",
            "2026-07-19",
            "[[daily_sessions/2026-07-19/2026-07-19.summary|2026-07-19]]",
        ),
        ("daily_sessions/2026-07-19/rina/chat.jsonl", "chat", "[[daily_sessions/2026-07-19/rina/chat.jsonl|chat]]"),
        ("MEMORY_INDEX.md", None, "[[MEMORY_INDEX]]"),
        ("daily_sessions/2026-07-19/a]]b.md", "a", None),
        ("daily_sessions/2026-07-19/a|b.md", "a", None),
        ("daily_sessions/2026-07-19/a#b.md", "a", None),
        ("daily_sessions/2026-07-19/new\\x0aline.md", "n", None),
        ("daily_sessions/2026-07-19/ok.md", "a]]b", None),
    ],
)
def test_a_link_names_the_path_without_md_or_is_not_written_at_all(path, alias, link):
    assert vault.link(path, alias) == link


def test_the_resolver_refuses_a_link_to_no_file_and_a_name_two_files_share(tmp_path):
    day = tmp_path / "daily_sessions" / "2026-07-19"
    (day / "rina").mkdir(parents=True)
    (day / "2026-07-19.summary.md").write_text("x")
    (day / "rina" / "2026-07-19.summary.md").write_text("x")
    (tmp_path / "MEMORY_INDEX.md").write_text(
        "- [[2026-07-19]] the old link\n- [[2026-07-19.summary|2026-07-19]] a name two notes share\n"
        "- [[daily_sessions/2026-07-19/rina/2026-07-19.summary|2026-07-19]] a path\n"
    )
    assert [link for _, link in unresolved_links(tmp_path)] == ["2026-07-19", "2026-07-19.summary|2026-07-19"]
