"""Frontmatter render and parse round-trip; MEMORY_INDEX.md against its golden file."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from pathlib import Path

import pytest
import yaml
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from schemas.frontmatter import LANGUAGES, LIST_BOUNDS, MOODS
from transforms.frontmatter import (
    CarriedItem,
    DaySummary,
    FrontmatterError,
    Generator,
    SessionLine,
    normalise_carried,
    normalise_dates,
    normalise_importance,
    normalise_items,
    normalise_list,
    normalise_summary,
    normalise_title,
    parse_summary,
    render_summary,
    session_file,
)
from transforms.memory_file import IndexEntry, entry_line, render_memory_index, render_snapshot

GOLDEN = Path(__file__).parent / "golden"

name = st.text(st.characters(codec="utf-8", exclude_categories=("Cc", "Cs", "Zl", "Zp")), min_size=1, max_size=30)
sentence = st.from_regex(r"[A-Z][a-z]{1,12}( [a-z]{1,10}){2,8}[.!?]", fullmatch=True)
day = st.dates(min_value=dt.date(2000, 1, 1), max_value=dt.date(2030, 12, 31))


#: Archived file names: Markdown, JSONL, and ones a link cannot hold (those keep no name: ``session_file``).
file_name = st.from_regex(r"[a-z0-9 ._\[\]#|-]{1,15}\.(md|jsonl)", fullmatch=True)


@st.composite
def summaries(draw) -> DaySummary:
    d = draw(day)
    user = draw(st.from_regex(r"[a-z0-9][a-z0-9._-]{0,20}", fullmatch=True))
    related = normalise_dates(draw(st.lists(day, max_size=12)), day=d, today=dt.date(2031, 1, 1))
    return DaySummary(
        date=d,
        user_id=user,
        people=normalise_list("people", draw(st.lists(name, max_size=14))),
        projects=normalise_list("projects", draw(st.lists(name, max_size=10))),
        tags=normalise_list("tags", draw(st.lists(name, max_size=12))),
        technologies=normalise_list("technologies", draw(st.lists(name, max_size=18))),
        importance=draw(st.integers(1, 10)),
        mood=draw(st.sampled_from(MOODS)),
        related_dates=related,
        sessions=draw(st.integers(0, 50)),
        generator=Generator(
            draw(st.sampled_from(["llama", "extractive"])),
            draw(name).replace("\n", " ").strip() or "m",
            "ab" * 32,
            1,
            tuple(draw(st.lists(st.sampled_from(["mood", "summary", "tags"]), unique=True))),
        ),
        summary="\n\n".join(
            " ".join(p)
            for p in draw(st.lists(st.lists(sentence, min_size=1, max_size=3, unique=True), min_size=1, max_size=3))
        ),
        session_lines=tuple(
            SessionLine(
                draw(st.from_regex(r"[a-z0-9-]{1,20}", fullmatch=True)),
                *draw(st.sampled_from([("10:37", "11:30"), ("", "")])),
                draw(st.integers(0, 500)),
                draw(st.from_regex(r"[A-Za-z ,]{0,40}", fullmatch=True)).strip(),
                session_file(draw(file_name)),
            )
            for _ in range(draw(st.integers(0, 3)))
        ),
        title=normalise_title(draw(name)) or "A day",
        language=draw(st.sampled_from(LANGUAGES)),
        decisions=normalise_items("decisions", draw(st.lists(name, max_size=4))),
        open_items=normalise_items("open_items", draw(st.lists(name, max_size=4))),
        still_open=normalise_carried(
            "still_open", [CarriedItem(draw(day), t) for t in draw(st.lists(name, max_size=3))]
        ),
        closed=normalise_carried("closed", [CarriedItem(draw(day), t) for t in draw(st.lists(name, max_size=3))]),
        folder=draw(st.sampled_from(["", user])),
        related_notes=tuple(x for x in related if draw(st.booleans())),
    )


@settings(max_examples=150, deadline=None)
@given(summaries())
def test_render_then_parse_gives_back_the_same_summary(doc):
    assume(normalise_summary(doc.summary) == doc.summary)
    assert parse_summary(render_summary(doc)) == doc


@given(st.lists(st.text(max_size=200), max_size=40))
def test_normalised_lists_are_always_within_their_bounds(items):
    for field in ("people", "projects", "tags", "technologies"):
        out = normalise_list(field, items)
        most, longest = LIST_BOUNDS[field]
        assert len(out) <= most and all(0 < len(i) <= longest for i in out)
        assert len({i.lower() for i in out}) == len(out)


def test_importance_out_of_range_is_invalid_not_clamped():
    assert normalise_importance(1276895428323932) is None
    assert normalise_importance(0) is None and normalise_importance(True) is None
    assert normalise_importance("7") == 7 and normalise_importance(7.0) == 7


def test_related_dates_are_never_the_day_itself_nor_in_the_future():
    d = dt.date(2026, 7, 19)
    got = normalise_dates(
        ["2026-07-19", "2026-07-18", "2026-07-21", "2026-02-30", "x", dt.date(2026, 7, 20)],
        day=d,
        today=dt.date(2026, 7, 20),
    )
    assert got == (dt.date(2026, 7, 18), dt.date(2026, 7, 20))


@pytest.mark.parametrize(
    "breakage",
    [
        ("importance: 2", "importance: 11"),
        ("mood: productive", "mood: ecstatic"),
        ("schema_version: 2", "schema_version: 2\nextra: 1"),
        ("related_dates:\n  - '2026-07-18'\n  - '2026-07-20'", "related_dates:\n  - '2026-07-19'"),
    ],
)
def test_a_summary_file_breaking_the_schema_is_refused(breakage):
    text = (GOLDEN / "2026-07-19.summary.md").read_text()
    assert breakage[0] in text
    with pytest.raises(FrontmatterError):
        parse_summary(text.replace(breakage[0], breakage[1]))


INDEX_ENTRIES = [
    IndexEntry(
        dt.date(2026, 7, 19),
        6,
        "productive",
        ("proxmox-boot-order", "sahur", "docker-volume", "x"),
        "Gading set the Proxmox boot order so PostgreSQL starts first. The app VM now waits thirty seconds.",
        "Proxmox boot order: PostgreSQL first",
        "daily_sessions/2026-07-19/gading/2026-07-19.summary.md",
    ),
    IndexEntry(
        dt.date(2026, 7, 2),
        3,
        "tired",
        (),
        "Kak Rina and Gading agreed on the sahur schedule: alarms at 03.00 on weekdays. Long day.",
        "Jadwal sahur",
        "daily_sessions/2026-07-02/gading/2026-07-02.summary.md",
    ),
    IndexEntry(  # a version-1 day: no title, its tags instead
        dt.date(2026, 6, 28),
        8,
        "reflective",
        ("restic-backup",),
        "A restic restore test finally passed after the NAS disk swap, which took the whole afternoon and "
        "most of the evening because the old disk kept timing out during the copy of the photo library.",
        "",
        "daily_sessions/2026-06-28/gading/2026-06-28.summary.md",
    ),
]


def test_memory_index_matches_its_golden_file():
    assert render_memory_index("gading", INDEX_ENTRIES) == (GOLDEN / "MEMORY_INDEX.md").read_text()


def test_a_memory_index_line_links_the_note_by_its_path_with_the_date_as_alias():
    line = entry_line(INDEX_ENTRIES[0])
    assert line.startswith("- [[daily_sessions/2026-07-19/gading/2026-07-19.summary|2026-07-19]] 6/10 · productive")
    assert "· Proxmox boot order: PostgreSQL first — Gading set" in line


def test_the_snapshot_and_the_recall_line_carry_the_plain_date_not_a_link():
    assert entry_line(INDEX_ENTRIES[0], link=False).startswith("- 2026-07-19 6/10 · productive · Proxmox boot")
    snap = render_snapshot("gading", INDEX_ENTRIES, 10_000)
    assert "[[" not in snap and "- 2026-07-02 3/10 · tired · Jadwal sahur — " in snap


def _note(**changes) -> DaySummary:
    """A version-2 note with every section, of a user other than the default."""
    doc = DaySummary(
        date=dt.date(2026, 7, 19),
        user_id="rina",
        people=("Dimas", "Kak Rina"),
        projects=("Homelab",),
        tags=("zfs", "disk-replacement"),
        technologies=("ZFS",),
        importance=8,
        mood="stressed",
        related_dates=(dt.date(2026, 7, 1), dt.date(2026, 7, 18)),
        sessions=2,
        generator=Generator("extractive", "extractive", "", 2, ()),
        summary="Dimas asked how to replace a failing ZFS disk. The assistant walked through zpool replace.\n\n"
        "Rina planned the sahur schedule.",
        session_lines=(
            SessionLine("2026-07-19-1037", "10:37", "10:52", 6, "ZFS", "2026-07-19-1037.md"),
            SessionLine("chat", "", "", 1, "", "chat.jsonl"),
        ),
        title="A failing ZFS disk replaced",
        language="en",
        decisions=("Replace the disk with a 4 TB WD Red.",),
        open_items=("Check the SMART data of the second disk.",),
        still_open=(CarriedItem(dt.date(2026, 7, 15), "Order a UPS battery."),),
        closed=(CarriedItem(dt.date(2026, 7, 10), "Move backups off the failing pool."),),
        folder="rina",
        related_notes=(dt.date(2026, 7, 18),),
    )
    return replace(doc, **changes)


def test_a_version_2_note_with_every_section_matches_its_golden_file_and_reads_back():
    text = render_summary(_note())
    assert text == (GOLDEN / "note.v2.summary.md").read_text(encoding="utf-8")
    assert parse_summary(text) == _note()


def test_frontmatter_lists_are_yaml_block_lists_as_obsidian_writes_them():
    text = render_summary(_note())
    front = text.split("---\n")[1]
    assert "people:\n  - Dimas\n  - Kak Rina\n" in front and "related_dates:\n  - '2026-07-01'\n" in front
    assert "generator:\n  backend: extractive\n" in front and "{" not in front and "- [" not in front
    meta = yaml.safe_load(front)
    assert meta["tags"] == ["zfs", "disk-replacement"] and meta["date"] == dt.date(2026, 7, 19)
    assert all(isinstance(meta[k], list) for k in ("people", "projects", "tags", "technologies", "related_dates"))


def test_every_link_of_a_note_is_a_path_in_the_user_folder_with_a_readable_alias():
    text = render_summary(_note())
    assert "[[MEMORY_INDEX.rina|Memory index]] · Related: 2026-07-01, " in text  # 07-01 has no note: no link
    assert "[[daily_sessions/2026-07-18/rina/2026-07-18.summary|2026-07-18]]" in text
    assert "- Order a UPS battery. (raised [[daily_sessions/2026-07-15/rina/2026-07-15.summary|2026-07-15]])" in text
    assert "- [[daily_sessions/2026-07-19/rina/2026-07-19-1037|2026-07-19-1037]] 10:37–10:52 · 6 messages · ZFS" in text
    assert "- [[daily_sessions/2026-07-19/rina/chat.jsonl|chat]] time unknown · 1 message" in text
    default = render_summary(_note(user_id="default", folder=""))
    assert "[[MEMORY_INDEX|Memory index]]" in default and "[[daily_sessions/2026-07-18/2026-07-18.summary|" in default


def test_an_indonesian_note_localizes_its_session_lines():
    text = render_summary(_note(language="id"))
    assert "- [[daily_sessions/2026-07-19/rina/chat.jsonl|chat]] waktu tidak diketahui · 1 pesan" in text
    assert " · 6 pesan · ZFS" in text and "(sejak [[daily_sessions/2026-07-15/" in text
    assert "[[MEMORY_INDEX.rina|Indeks memori]] · Terkait: " in text and "message" not in text
    assert parse_summary(text) == _note(language="id")


def test_a_session_whose_file_a_link_cannot_hold_is_named_without_a_link():
    assert session_file("a]]b.md") == "" and session_file("x|y.jsonl") == "" and session_file("ok.jsonl") == "ok.jsonl"
    doc = _note(session_lines=(SessionLine("a__b-1234abcd", "", "", 2, "", session_file("a]]b.md")),))
    text = render_summary(doc)
    assert "\n- a__b-1234abcd time unknown · 2 messages\n" in text and parse_summary(text) == doc


@pytest.mark.parametrize(
    "breakage, why",
    [
        (("## Decisions", "## Choices"), "unknown section"),
        (("## Open items\n", "## Decisions\n"), "appears twice"),
        (("- Replace the disk", "* Replace the disk"), "list of '- ' items"),
        (("\n## What happened", "\nA stray line.\n\n## What happened"), "text before the first section"),
        (("[[MEMORY_INDEX.rina|", "[[MEMORY_INDEX.gading|"), "MEMORY_INDEX"),
        (
            ("Related: 2026-07-01, [[daily_sessions/2026-07-18/rina/", "Related: 2026-07-01, [[daily_sessions/x/"),
            "line under",
        ),
        (
            (
                "[[daily_sessions/2026-07-19/rina/chat.jsonl|chat]]",
                "[[daily_sessions/2026-07-18/rina/chat.jsonl|chat]]",
            ),
            "session",
        ),
        (("(raised [[daily_sessions/2026-07-15/rina/", "(raised [[2026-07-15"), "carried item"),
        ((" · 6 messages · ZFS", " · 6 pesan · ZFS"), "session line"),
    ],
)
def test_a_malformed_note_body_is_refused_with_what_is_wrong(breakage, why):
    text = render_summary(_note())
    assert breakage[0] in text
    with pytest.raises(FrontmatterError, match=why):
        parse_summary(text.replace(breakage[0], breakage[1], 1))


def test_an_importance_of_a_superscript_digit_is_invalid_not_an_error():
    assert normalise_importance("²") is None and normalise_importance(" 7 ") == 7


def test_a_wiki_link_quoted_from_a_transcript_never_becomes_a_link_of_the_note():
    assert normalise_title("Notes on [[2026-07-01]]") == "Notes on [2026-07-01]"
    assert normalise_items("decisions", ["Keep [[[[MEMORY_INDEX]]]] short."]) == ("Keep [MEMORY_INDEX] short.",)
    assert normalise_summary("Rina pasted [[Sahur plan]] in the chat.") == "Rina pasted [Sahur plan] in the chat."
    assert normalise_list("people", ["[[Dimas]]"]) == ("[Dimas]",)


def test_carried_items_keep_their_order_through_a_round_trip_when_cleaning_reorders_them():
    d = dt.date(2026, 7, 1)
    got = normalise_carried("closed", [CarriedItem(d, "  zebra crossing"), CarriedItem(d, "apple pie")])
    assert [i.text for i in got] == ["apple pie", "zebra crossing"]
    assert normalise_carried("closed", got) == got
