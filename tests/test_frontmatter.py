"""Frontmatter render and parse round-trip; MEMORY_INDEX.md against its golden file."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
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
)
from transforms.memory_file import IndexEntry, render_memory_index

GOLDEN = Path(__file__).parent / "golden"

name = st.text(st.characters(codec="utf-8", exclude_categories=("Cc", "Cs", "Zl", "Zp")), min_size=1, max_size=30)
sentence = st.from_regex(r"[A-Z][a-z]{1,12}( [a-z]{1,10}){2,8}[.!?]", fullmatch=True)
day = st.dates(min_value=dt.date(2000, 1, 1), max_value=dt.date(2030, 12, 31))


@st.composite
def summaries(draw) -> DaySummary:
    d = draw(day)
    return DaySummary(
        date=d,
        user_id=draw(st.from_regex(r"[a-z0-9][a-z0-9._-]{0,20}", fullmatch=True)),
        people=normalise_list("people", draw(st.lists(name, max_size=14))),
        projects=normalise_list("projects", draw(st.lists(name, max_size=10))),
        tags=normalise_list("tags", draw(st.lists(name, max_size=12))),
        technologies=normalise_list("technologies", draw(st.lists(name, max_size=18))),
        importance=draw(st.integers(1, 10)),
        mood=draw(st.sampled_from(MOODS)),
        related_dates=normalise_dates(draw(st.lists(day, max_size=12)), day=d, today=dt.date(2031, 1, 1)),
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
                "10:37",
                "11:30",
                draw(st.integers(0, 500)),
                draw(st.from_regex(r"[A-Za-z ,]{0,40}", fullmatch=True)).strip(),
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
        ("related_dates: ['2026-07-18', '2026-07-20']", "related_dates: ['2026-07-19']"),
    ],
)
def test_a_summary_file_breaking_the_schema_is_refused(breakage):
    text = (GOLDEN / "2026-07-19.summary.md").read_text()
    assert breakage[0] in text
    with pytest.raises(FrontmatterError):
        parse_summary(text.replace(breakage[0], breakage[1]))


def test_memory_index_matches_its_golden_file():
    entries = [
        IndexEntry(
            dt.date(2026, 7, 19),
            6,
            "productive",
            ("proxmox-boot-order", "sahur", "docker-volume", "x"),
            "Gading set the Proxmox boot order so PostgreSQL starts first. The app VM now waits thirty seconds.",
        ),
        IndexEntry(
            dt.date(2026, 7, 2),
            3,
            "tired",
            (),
            "Kak Rina and Gading agreed on the sahur schedule: alarms at 03.00 on weekdays. Long day.",
        ),
        IndexEntry(
            dt.date(2026, 6, 28),
            8,
            "reflective",
            ("restic-backup",),
            "A restic restore test finally passed after the NAS disk swap, which took the whole afternoon and "
            "most of the evening because the old disk kept timing out during the copy of the photo library.",
        ),
    ]
    assert render_memory_index("gading", entries) == (GOLDEN / "MEMORY_INDEX.md").read_text()


def test_an_importance_of_a_superscript_digit_is_invalid_not_an_error():
    assert normalise_importance("²") is None and normalise_importance(" 7 ") == 7
