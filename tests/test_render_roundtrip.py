"""Render and parse go both ways: parse(render(s)) == s for every session the contract admits."""

from __future__ import annotations

import json
import re
from datetime import date, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

from hypothesis import given, settings
from hypothesis import strategies as st

from transforms.model import KNOWN_ROLES, Message, Session
from transforms.parse import parse_transcript
from transforms.render import render_jsonl, render_markdown

JAKARTA = ZoneInfo("Asia/Jakarta")
WIB = timezone(timedelta(hours=7))
FENCE_OR_HEADER = re.compile(r"^(?: {0,3}(?:```|~~~)|##)")

# Any character but CR, so the strategy can hit \x0b, \x85, \u2028 and friends.
any_char = st.characters(blacklist_categories=("Cs",), blacklist_characters="\r")
line_chars = st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n")

offsets = st.integers(min_value=-23 * 60, max_value=23 * 60).map(lambda m: timezone(timedelta(minutes=m)))
aware = st.datetimes(min_value=datetime(1971, 1, 1), max_value=datetime(9998, 12, 31), timezones=offsets)
timestamps = st.none() | aware

session_ids = (
    st.text(any_char, min_size=1, max_size=60)
    .map(str.strip)
    .filter(lambda s: s and s not in (".", "..") and "/" not in s and "\\" not in s and len(s.splitlines()) == 1)
)
user_ids = st.from_regex(r"[a-z0-9][a-z0-9._-]{0,63}", fullmatch=True)
agents = st.text(any_char, min_size=1, max_size=30).map(str.strip).filter(bool)
# Names as a parser keeps them: whitespace collapsed, non-empty, none repeated in any case.
names = st.text(any_char, min_size=1, max_size=30).map(lambda s: " ".join(s.split())).filter(bool)
people = st.lists(names, max_size=4, unique_by=str.lower).map(tuple)


def plain_line():
    tricky = st.sampled_from(
        ["## Plan", "## User - Experience", "### user", "##user", "    ## user", " ## user", "---", "", "   "]
    )
    text = st.text(line_chars, max_size=40).filter(lambda s: not FENCE_OR_HEADER.match(s))
    return tricky | text


@st.composite
def fenced_block(draw):
    char = draw(st.sampled_from("`~"))
    length = draw(st.integers(3, 5))
    info_chars = st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n`")
    # An info string that starts with the fence character would lengthen the fence itself
    # ("~~~" + "~" opens a four-tilde fence that "~~~" cannot close).
    info = draw(st.text(info_chars, max_size=10).filter(lambda s: not s.startswith(char)))
    inner = draw(
        st.lists(
            st.sampled_from(["## user", "## assistant · 2026-07-19T10:00:00+07:00", char * (length - 1), ""])
            | st.text(line_chars, max_size=30).filter(lambda s: not s.lstrip(" ").startswith(char * 3)),
            max_size=4,
        )
    )
    closing = char * draw(st.integers(length, length + 2))
    return [char * length + info, *inner, closing]


@st.composite
def markdown_content(draw):
    lines: list[str] = []
    for chunk in draw(st.lists(plain_line().map(lambda s: [s]) | fenced_block(), max_size=6)):
        lines.extend(chunk)
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    return "\n".join(lines)


def sessions(source_format: str, roles, contents):
    messages = st.lists(st.tuples(roles, contents, timestamps), min_size=1, max_size=6).map(
        lambda items: tuple(Message(role=r, content=c, ts=t, seq=i) for i, (r, c, t) in enumerate(items))
    )
    return st.builds(
        Session,
        session_id=st.none() | session_ids,
        user_id=st.none() | user_ids,
        agent=st.none() | agents,
        source_format=st.just(source_format),
        messages=messages,
        people=people,
    )


jsonl_roles = st.sampled_from(KNOWN_ROLES) | st.from_regex(r"[a-z][a-z_]{0,11}", fullmatch=True).filter(
    lambda r: r not in ("human", "ai", "model", "bot")
)


@settings(max_examples=100)
@given(sessions("markdown", st.sampled_from(KNOWN_ROLES), markdown_content()), st.none() | st.dates())
def test_a_rendered_markdown_session_parses_back_to_itself(session: Session, parent_day: date | None):
    text = render_markdown(session, parent_day=parent_day)
    assert parse_transcript("s.md", text.encode("utf-8"), tz=JAKARTA) == session


@settings(max_examples=100)
@given(sessions("jsonl", jsonl_roles, st.text(st.characters(blacklist_categories=("Cs",)), max_size=80)))
def test_a_rendered_jsonl_session_parses_back_to_itself(session: Session):
    text = render_jsonl(session)
    assert parse_transcript("s.jsonl", text.encode("utf-8"), tz=JAKARTA) == session


def example_session(**fields) -> Session:
    base = dict(session_id=None, user_id=None, agent=None, source_format="markdown")
    base.update(fields)
    return Session(
        **base,
        messages=(
            Message("user", "Pagi!", datetime(2026, 7, 19, 10, 37, 12, tzinfo=WIB), 0),
            Message("assistant", "Oke.", None, 1),
        ),
    )


def test_markdown_has_no_frontmatter_when_no_field_is_set():
    text = render_markdown(example_session())
    assert text == "## user · 2026-07-19T10:37:12+07:00\nPagi!\n\n## assistant\nOke.\n\n"


def test_markdown_frontmatter_holds_only_the_fields_that_are_set():
    text = render_markdown(example_session(session_id="2026-07-19-1037", agent="zed"), parent_day=date(2026, 7, 19))
    assert text.startswith(
        "---\nsession_id: 2026-07-19-1037\nagent: zed\n---\n"
        "Parent Day: [[daily_sessions/2026-07-19/2026-07-19.summary|2026-07-19]]\n\n## user"
    )


def test_a_session_id_that_yaml_would_read_as_a_date_is_quoted():
    text = render_markdown(example_session(session_id="2026-07-19"))
    assert 'session_id: "2026-07-19"' in text
    assert parse_transcript("a.md", text.encode(), tz=JAKARTA).session_id == "2026-07-19"


def test_jsonl_puts_the_ids_on_the_first_line_only():
    session = example_session(session_id="s1", user_id="gading", source_format="jsonl")
    first, second = (json.loads(line) for line in render_jsonl(session).splitlines())
    assert first == {
        "session_id": "s1",
        "user_id": "gading",
        "role": "user",
        "content": "Pagi!",
        "timestamp": "2026-07-19T10:37:12+07:00",
    }
    assert second == {"role": "assistant", "content": "Oke.", "timestamp": None}


def test_the_people_a_transcript_declares_are_a_yaml_list_and_come_back():
    session = example_session(session_id="s1", people=("Dimas", "Sari Wulandari", "2026"))
    text = render_markdown(session)
    assert text.startswith('---\nsession_id: s1\npeople:\n  - Dimas\n  - Sari Wulandari\n  - "2026"\n---\n')
    assert parse_transcript("a.md", text.encode(), tz=JAKARTA) == session
    as_jsonl = example_session(people=("Dimas",), source_format="jsonl")
    assert json.loads(render_jsonl(as_jsonl).splitlines()[0])["people"] == ["Dimas"]
    assert parse_transcript("a.jsonl", render_jsonl(as_jsonl).encode(), tz=JAKARTA) == as_jsonl
