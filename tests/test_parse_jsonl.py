"""JSONL transcripts: one JSON object per line."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from transforms.errors import ParseError
from transforms.parse import parse_transcript

GOOD = Path(__file__).parent / "fixtures" / "good"
JAKARTA = ZoneInfo("Asia/Jakarta")
WIB = timezone(timedelta(hours=7))


def lines(*records: object) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in records).encode()


def parse(data: bytes, *, tz=JAKARTA):
    return parse_transcript("2026-07-20-x.jsonl", data, tz=tz)


def parse_error(data: bytes) -> ParseError:
    with pytest.raises(ParseError) as info:
        parse(data)
    return info.value


def test_a_session_with_blocks_and_epoch_timestamps_parses():
    path = GOOD / "2026-07-20-chat.jsonl"
    session = parse_transcript(path.name, path.read_bytes(), tz=JAKARTA)

    assert (session.session_id, session.user_id, session.agent) == ("chat-0720", "gading", "claude-code")
    assert session.source_format == "jsonl"
    assert [m.role for m in session.messages] == ["system", "user", "assistant", "tool", "assistant"]
    assert [m.seq for m in session.messages] == [0, 1, 2, 3, 4]
    assert session.messages[1].content == "Ini screenshot dashboard-nya.\n[image]\nKenapa CPU-nya tinggi?"
    assert session.messages[2].content == "CPU tinggi karena backup job berjalan.\n[tool_use]"
    assert session.messages[0].ts == datetime(2026, 7, 20, 10, 30, tzinfo=WIB)
    assert session.messages[1].ts == datetime(2026, 7, 20, 10, 31, 0, 123000, tzinfo=WIB)
    assert session.messages[2].ts == datetime(2026, 7, 20, 10, 31, 15, 500000, tzinfo=WIB)
    assert session.messages[3].ts is None
    assert session.messages[4].ts == datetime(2026, 7, 20, 10, 35, tzinfo=JAKARTA)


def test_the_first_non_null_metadata_value_wins():
    session = parse(
        lines(
            {"role": "user", "content": "a", "session_id": None},
            {"role": "user", "content": "b", "session_id": "first", "user_id": "Ana"},
            {"role": "user", "content": "c", "session_id": "second", "user_id": "budi"},
        )
    )
    assert (session.session_id, session.user_id) == ("first", "ana")


def test_the_people_of_the_first_line_that_names_them_are_kept():
    session = parse(
        lines(
            {"role": "user", "content": "a", "people": ["Dimas", " Sari ", "dimas"]},
            {"role": "user", "content": "b", "people": ["Budi"]},
        )
    )
    assert session.people == ("Dimas", "Sari")


def test_people_that_are_not_names_are_rejected_with_their_line():
    err = parse_error(lines({"role": "user", "content": "a"}, {"role": "user", "content": "b", "people": {"a": 1}}))
    assert err.kind == "bad_record" and err.reason.startswith("line 2: people")


def test_numeric_session_ids_become_strings():
    assert parse(lines({"role": "user", "content": "a", "session_id": 1234})).session_id == "1234"


def test_a_missing_or_null_timestamp_gives_no_time():
    session = parse(lines({"role": "user", "content": "a"}, {"role": "user", "content": "b", "timestamp": None}))
    assert [m.ts for m in session.messages] == [None, None]


def test_epoch_numbers_above_1e11_are_milliseconds():
    ms, s = parse(
        lines(
            {"role": "u", "content": "", "timestamp": 100_000_000_001},
            {"role": "u", "content": "", "timestamp": 99_999_999_999},
        )
    ).messages
    assert ms.ts == datetime.fromtimestamp(100_000_000.001, UTC)
    assert s.ts == datetime.fromtimestamp(99_999_999_999, UTC)


def test_a_naive_iso_timestamp_is_read_in_the_configured_zone():
    ts = (
        parse(
            lines({"role": "user", "content": "a", "timestamp": "2026-07-20T00:30:00"}), tz=ZoneInfo("America/New_York")
        )
        .messages[0]
        .ts
    )
    assert ts == datetime(2026, 7, 20, 4, 30, tzinfo=UTC)


def test_an_aware_iso_timestamp_keeps_its_offset():
    ts = parse(lines({"role": "user", "content": "a", "timestamp": "2026-07-20T00:30:00+05:30"})).messages[0].ts
    assert ts.utcoffset() == timedelta(hours=5, minutes=30)


def test_roles_are_lower_cased_and_aliases_mapped_but_unknown_roles_kept():
    session = parse(lines(*({"role": r, "content": "x"} for r in [" Human ", "model", "Critic"])))
    assert [m.role for m in session.messages] == ["user", "assistant", "critic"]


def test_blank_lines_and_crlf_endings_are_accepted():
    data = b'\r\n{"role": "user", "content": "a"}\r\n\r\n   \r\n{"role": "assistant", "content": "b"}\r\n'
    assert [m.content for m in parse(data).messages] == ["a", "b"]


def test_null_content_is_an_empty_message():
    assert parse(lines({"role": "assistant", "content": None})).messages[0].content == ""


def test_content_strings_keep_their_text_exactly():
    text = "  leading\n\n\ntrailing  \n"
    assert parse(lines({"role": "user", "content": text})).messages[0].content == text


def test_an_invalid_json_line_is_bad_json_with_its_line_number():
    err = parse_error(lines({"role": "user", "content": "a"}) + b"\n" + b'{"role": "user", "content": "b"\n')
    assert err.kind == "bad_json"
    assert "line 3" in err.reason


def test_nan_is_not_json():
    assert parse_error(b'{"role": "user", "content": "a", "timestamp": NaN}\n').kind == "bad_json"


@pytest.mark.parametrize(
    "record",
    [
        ["user", "a"],
        "just a string",
        {"content": "a"},
        {"role": "", "content": "a"},
        {"role": "  ", "content": "a"},
        {"role": 3, "content": "a"},
        {"role": "user"},
        {"role": "user", "content": 42},
        {"role": "user", "content": {"text": "a"}},
        {"role": "user", "content": [{"text": "no type"}]},
        {"role": "user", "content": [{"type": "text", "text": 5}]},
        {"role": "user", "content": [7]},
        {"role": "user", "content": "a", "agent": ["x"]},
    ],
    ids=[
        "array",
        "string",
        "no-role",
        "empty-role",
        "blank-role",
        "number-role",
        "no-content",
        "number-content",
        "object-content",
        "untyped-block",
        "non-string-text",
        "number-block",
        "list-agent",
    ],
)
def test_a_record_of_the_wrong_shape_is_bad_record_with_its_line_number(record: object):
    err = parse_error(lines({"role": "user", "content": "ok"}, record))
    assert err.kind == "bad_record"
    assert "line 2" in err.reason


@pytest.mark.parametrize("value", ["kemarin", "", True, {"t": 1}, 1e300, "2026-02-30T10:00:00"])
def test_an_unreadable_timestamp_is_bad_timestamp_with_its_line_number(value: object):
    err = parse_error(lines({"role": "user", "content": "a", "timestamp": value}))
    assert err.kind == "bad_timestamp"
    assert "line 1" in err.reason


def test_a_long_bad_timestamp_is_cut_to_40_characters_in_the_reason():
    value = "noon on " + "x" * 3 + " " + "y" * 26 + " ABCDEFG"
    err = parse_error(lines({"role": "user", "content": "a", "timestamp": value}))
    assert repr(value[:40] + "…") in err.reason and "AB" not in err.reason  # a short word may be cut


def test_a_cut_that_would_split_a_long_run_in_a_reason_drops_the_whole_run():
    value = "at " + "x" * 60  # a run the cut would split: none of it is shown, so no token is half shown
    err = parse_error(lines({"role": "user", "content": "a", "timestamp": value}))
    assert "'at…'" in err.reason and "x" not in err.reason


def test_a_bad_timestamp_is_redacted_before_it_is_cut():
    token = "gh" + "p_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    err = parse_error(lines({"role": "user", "content": "a", "timestamp": "1" + token}))
    assert "[REDACTED:github_token]" in err.reason and token[:8] not in err.reason


def test_an_invalid_user_id_is_bad_user_id_naming_the_line():
    err = parse_error(lines({"role": "user", "content": "a"}, {"role": "user", "content": "b", "user_id": "a b"}))
    assert err.kind == "bad_user_id"
    assert "line 2" in err.reason


def test_an_invalid_session_id_is_bad_session_id():
    assert parse_error(lines({"role": "user", "content": "a", "session_id": "x/y"})).kind == "bad_session_id"


def test_a_blank_file_is_empty():
    assert parse_error(b"\n\n  \n").kind == "empty"


def test_a_reason_never_contains_message_text():
    secret_words = "Rahasia-kantor-jangan-dibocorkan"
    broken = [
        lines({"role": "user", "content": secret_words, "timestamp": "nope"}),
        lines({"role": "", "content": secret_words}),
        lines({"role": "user", "content": secret_words})[:-3] + b"\n",
        lines({"role": "user", "content": 1, "note": secret_words}),
    ]
    for data in broken:
        assert secret_words not in parse_error(data).reason
