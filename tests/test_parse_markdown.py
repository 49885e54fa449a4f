"""Markdown transcripts, and the one-fixture-per-failure-mode suite for both formats."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from transforms.errors import ParseError
from transforms.model import Message
from transforms.parse import parse_transcript

FIXTURES = Path(__file__).parent / "fixtures"
JAKARTA = ZoneInfo("Asia/Jakarta")
WIB = timezone(timedelta(hours=7))

# A fixture's stem is its kind, except where two files exercise one kind.
KIND_OF_STEM = {"unclosed_frontmatter": "bad_frontmatter", "broken_json": "bad_json"}
EXPECTED_BAD_STEMS = {
    "bad_utf8",
    "broken_json",
    "bad_record",
    "no_messages",
    "empty",
    "unknown_extension",
    "bad_frontmatter",
    "unclosed_frontmatter",
    "bad_timestamp",
    "bad_user_id",
    "bad_session_id",
}


def parse_md(text: str, *, name: str = "2026-07-19-x.md", tz=JAKARTA):
    return parse_transcript(name, text.encode("utf-8"), tz=tz)


def parse_error(text: str | bytes, *, name: str = "2026-07-19-x.md") -> ParseError:
    data = text if isinstance(text, bytes) else text.encode("utf-8")
    with pytest.raises(ParseError) as info:
        parse_transcript(name, data, tz=JAKARTA)
    return info.value


# --- the bad-input fixtures ------------------------------------------------------


def test_there_is_one_bad_fixture_per_failure_mode():
    assert {p.stem for p in (FIXTURES / "bad").iterdir()} == EXPECTED_BAD_STEMS


@pytest.mark.parametrize("path", sorted((FIXTURES / "bad").iterdir()), ids=lambda p: p.name)
def test_each_bad_fixture_is_rejected_with_its_failure_kind(path: Path):
    with pytest.raises(ParseError) as info:
        parse_transcript(path.name, path.read_bytes(), tz=JAKARTA)
    assert info.value.kind == KIND_OF_STEM.get(path.stem, path.stem)
    assert "\n" not in info.value.reason and info.value.reason


# --- a realistic session ------------------------------------------------------


def test_a_realistic_bilingual_session_parses_into_its_turns():
    path = FIXTURES / "good" / "2026-07-19-homelab.md"
    session = parse_transcript(path.name, path.read_bytes(), tz=JAKARTA)

    assert (session.session_id, session.user_id, session.agent) == ("2026-07-19-1037", "gading", "zed")
    assert session.source_format == "markdown"
    assert [m.role for m in session.messages] == ["user", "assistant", "user", "assistant"]
    assert [m.seq for m in session.messages] == [0, 1, 2, 3]
    assert session.messages[0].ts == datetime(2026, 7, 19, 10, 37, 12, tzinfo=WIB)
    assert session.messages[2].ts == datetime(2026, 7, 19, 10, 41, tzinfo=JAKARTA)
    answer = session.messages[1].content
    assert answer.startswith("Oke. Buka VM postgres")
    assert "## Plan\n1. postgres dulu" in answer
    assert "```ini\n## user · this is a comment in the config, not a turn\nstartup" in answer
    assert "~~~markdown\n## assistant\nHeaders inside a tilde fence stay text too.\n~~~" in answer
    assert answer.endswith("~~~")
    assert session.messages[3].content.splitlines()[0].endswith("on the host.   ")


def test_a_crlf_file_parses_like_its_lf_twin():
    data = (FIXTURES / "good" / "crlf.md").read_bytes()
    assert b"\r\n" in data
    crlf = parse_transcript("crlf.md", data, tz=JAKARTA)
    lf = parse_transcript("crlf.md", data.replace(b"\r\n", b"\n"), tz=JAKARTA)
    assert crlf == lf
    assert crlf.messages[0].content == "Halo dari Windows.\nBaris kedua.  "
    assert crlf.session_id == "crlf-1"


# --- headers and fences -------------------------------------------------------


def test_a_hash_line_inside_a_code_fence_stays_in_the_message():
    session = parse_md("## user\nShow me\n\n## assistant\n```\n## user\n```\n")
    assert [m.role for m in session.messages] == ["user", "assistant"]
    assert session.messages[1].content == "```\n## user\n```"


def test_a_fence_with_an_info_string_and_tildes_hides_headers():
    session = parse_md("## user\nx\n~~~~ python title=a.py\n## assistant\n~~~~\n## assistant\ny\n")
    assert [m.content for m in session.messages] == ["x\n~~~~ python title=a.py\n## assistant\n~~~~", "y"]


def test_a_shorter_or_different_fence_does_not_close_the_open_one():
    text = "## user\n````\n```\n~~~\n## assistant\n````\n## assistant\nok\n"
    session = parse_md(text)
    assert len(session.messages) == 2
    assert session.messages[0].content == "````\n```\n~~~\n## assistant\n````"


def test_a_closing_fence_with_trailing_text_does_not_close():
    session = parse_md("## user\n```\n``` not a close\n## assistant\n```\n## assistant\nok\n")
    assert len(session.messages) == 2


def test_inline_triple_backticks_do_not_open_a_fence():
    session = parse_md("## user\n```inline``` code\n## assistant\nok\n")
    assert [m.role for m in session.messages] == ["user", "assistant"]


def test_an_ordinary_level_two_heading_stays_in_the_message():
    text = "## assistant\nPlan below.\n\n## Plan\n## User - Experience\n### user\n##user\n  ## user\n"
    session = parse_md(text)
    assert len(session.messages) == 1
    assert session.messages[0].content == ("Plan below.\n\n## Plan\n## User - Experience\n### user\n##user\n  ## user")


def test_role_names_are_case_insensitive_and_aliases_are_mapped():
    text = "## Human\na\n## AI\nb\n## model\nc\n## BOT\nd\n## System\ne\n## tool\nf\n"
    roles = [m.role for m in parse_md(text).messages]
    assert roles == ["user", "assistant", "assistant", "assistant", "system", "tool"]


@pytest.mark.parametrize("sep", ["·", "-", "|"])
def test_each_separator_between_role_and_time_is_accepted(sep: str):
    session = parse_md(f"## user {sep} 2026-07-19T10:37:12+07:00\nhi\n")
    assert session.messages[0].ts == datetime(2026, 7, 19, 10, 37, 12, tzinfo=WIB)


def test_a_header_without_a_time_has_no_timestamp():
    assert parse_md("## user\nhi\n").messages[0].ts is None


def test_a_naive_timestamp_is_read_in_the_configured_zone():
    ts = parse_md("## user · 2026-07-19T23:30:00\nhi\n", tz=ZoneInfo("Europe/Amsterdam")).messages[0].ts
    assert ts == datetime(2026, 7, 19, 21, 30, tzinfo=UTC)
    assert ts.utcoffset() == timedelta(hours=2)


def test_an_aware_timestamp_keeps_its_offset():
    ts = parse_md("## user · 2026-07-19T10:00:00Z\nhi\n").messages[0].ts
    assert ts.utcoffset() == timedelta(0)
    assert ts == datetime(2026, 7, 19, 17, tzinfo=WIB)


# --- content ------------------------------------------------------------------


def test_the_preamble_before_the_first_turn_is_not_a_message():
    session = parse_md("Parent Day: [[2026-07-19]]\n\nSome notes.\n\n## user\nhi\n")
    assert session.messages == (Message("user", "hi", None, 0),)


def test_content_keeps_inner_blank_lines_and_trailing_spaces():
    session = parse_md("## user\n\n\n  indented  \n\n\nlast line \t\n\n\n## assistant\nok")
    assert session.messages[0].content == "  indented  \n\n\nlast line \t"
    assert session.messages[1].content == "ok"


def test_a_turn_with_no_body_has_empty_content():
    session = parse_md("## user\n\n## assistant\nok\n")
    assert session.messages[0].content == ""


def test_a_leading_bom_is_dropped():
    session = parse_transcript("a.md", b"\xef\xbb\xbf---\nagent: zed\n---\n## user\nhi\n", tz=JAKARTA)
    assert session.agent == "zed"


@pytest.mark.parametrize("name", ["x.MD", "x.Markdown", "2026-07-19.markdown", "dir.jsonl.md"])
def test_the_extension_is_matched_case_insensitively(name: str):
    assert parse_md("## user\nhi\n", name=name).source_format == "markdown"


# --- frontmatter --------------------------------------------------------------


def test_yaml_dates_and_numbers_in_frontmatter_become_strings():
    session = parse_md("---\nsession_id: 2026-07-19\nagent: 42\nuser_id: 7\n---\n## user\nhi\n")
    assert (session.session_id, session.agent, session.user_id) == ("2026-07-19", "42", "7")


def test_frontmatter_values_are_stripped_and_user_id_lower_cased():
    session = parse_md("---\nsession_id: ' abc '\nuser_id: '  Gading '\nagent: ' zed '\n---\n## user\nhi\n")
    assert (session.session_id, session.user_id, session.agent) == ("abc", "gading", "zed")


def test_unknown_frontmatter_keys_are_ignored_and_missing_ones_are_none():
    session = parse_md("---\nmood: happy\ntags: [a, b]\n---\n## user\nhi\n")
    assert (session.session_id, session.user_id, session.agent) == (None, None, None)


def test_an_empty_frontmatter_is_allowed():
    assert parse_md("---\n---\n## user\nhi\n").messages[0].content == "hi"


def test_a_yaml_syntax_error_names_the_line():
    err = parse_error("---\nsession_id: a\nuser_id: [unclosed\n---\n## user\nhi\n")
    assert err.kind == "bad_frontmatter"
    assert "line " in err.reason


def test_a_frontmatter_that_is_a_scalar_is_rejected():
    assert parse_error("---\njust text\n---\n## user\nhi\n").kind == "bad_frontmatter"


@pytest.mark.parametrize(
    ("value", "people"),
    [
        ("[Dimas, Sari]", ("Dimas", "Sari")),
        ("\n  - Dimas Pratama\n  - '  Sari   Wulandari '\n  - 2026", ("Dimas Pratama", "Sari Wulandari", "2026")),
        ("Dimas, Sari,  ", ("Dimas", "Sari")),
        ("[Dimas, dimas, DIMAS, '', null]", ("Dimas",)),
        ("[[Dimas]]", ("Dimas",)),
        ("\n  - '[[Dimas]]'", ("[[Dimas]]",)),
        ("[]", ()),
        ("", ()),
    ],
)
def test_the_people_a_frontmatter_declares_are_kept_as_written(value, people):
    assert parse_md(f"---\nsession_id: s1\npeople: {value}\n---\n## user\nhi\n").people == people


def test_a_frontmatter_without_people_declares_nobody():
    assert parse_md("---\nsession_id: s1\n---\n## user\nhi\n").people == ()


@pytest.mark.parametrize("value", ["{name: Dimas}", "[[[Dimas]]]", "[{name: Dimas}]"])
def test_people_that_are_not_names_are_rejected(value):
    err = parse_error(f"---\npeople: {value}\n---\n## user\nhi\n")
    assert err.kind == "bad_frontmatter" and "people" in err.reason


def test_a_list_valued_agent_is_rejected():
    assert parse_error("---\nagent: [a, b]\n---\n## user\nhi\n").kind == "bad_frontmatter"


@pytest.mark.parametrize(
    "value",
    ['""', '"a/b"', '"a\\\\b"', '"two\\nlines"', "x" * 201, '"."', "[a, b]"],
    ids=["empty", "slash", "backslash", "newline", "too-long", "dot", "list"],
)
def test_a_session_id_that_is_not_a_safe_single_line_is_rejected(value: str):
    err = parse_error(f"---\nsession_id: {value}\n---\n## user\nhi\n")
    assert err.kind == "bad_session_id"


def test_a_session_id_of_exactly_200_characters_is_accepted():
    assert parse_md(f"---\nsession_id: {'x' * 200}\n---\n## user\nhi\n").session_id == "x" * 200


@pytest.mark.parametrize("value", ["'-gading'", "'gad ing'", "'gading/x'", "x" * 65, "''", "[a]"])
def test_a_user_id_that_breaks_the_pattern_is_rejected(value: str):
    assert parse_error(f"---\nuser_id: {value}\n---\n## user\nhi\n").kind == "bad_user_id"


# --- errors -------------------------------------------------------------------


def test_bad_utf8_names_the_byte_offset():
    err = parse_error(b"## user\nok \xff\n")
    assert err.kind == "bad_utf8"
    assert "offset 11" in err.reason


def test_an_unknown_extension_names_the_supported_ones():
    err = parse_error("## user\nhi\n", name="notes.txt")
    assert err.kind == "unknown_extension"
    assert ".md" in err.reason and ".markdown" in err.reason and ".jsonl" in err.reason


def test_a_whitespace_only_file_is_empty():
    assert parse_error(" \n\t\r\n").kind == "empty"
    assert parse_error(b"\xef\xbb\xbf").kind == "empty"


def test_a_file_with_only_frontmatter_has_no_messages():
    assert parse_error("---\nagent: zed\n---\n").kind == "no_messages"


def test_a_bad_header_timestamp_names_the_line_and_the_value_cut_to_40_characters():
    bad = "2026-07-19T99:99:99 " + "z" * 60
    err = parse_error(f"## user\nhi\n\n## assistant · {bad}\nok\n")
    assert err.kind == "bad_timestamp"
    assert "line 4" in err.reason
    # redacted, then cut to 40 characters; the run of z the cut would split goes whole
    assert repr(bad[:19] + "…") in err.reason and "z" not in err.reason


def test_a_reason_never_contains_message_text():
    secret_words = "Rahasia-kantor-jangan-dibocorkan"
    broken = [
        f"## user\n{secret_words}\n## assistant · 2026-13-45\nx\n",
        f"---\nuser_id: Bad Id\n---\n## user\n{secret_words}\n",
        f"## user\n{secret_words}\n".encode() + b"\xfe",
        f"---\n: [\n---\n## user\n{secret_words}\n",
    ]
    for text in broken:
        assert secret_words not in parse_error(text).reason
