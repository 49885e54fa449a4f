"""SillyTavern chat files: a header line, one message a line, every date form it has written, swipes kept."""

from __future__ import annotations

import json
from collections import Counter
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from import_support import (
    ALL_FORMATS,
    FIXTURES,
    GENERIC_JSONL,
    JAKARTA,
    KENANG_MARKDOWN,
    fixtures,
    jsonish,
    sessions_by_day,
)

from transforms.errors import ParseError
from transforms.imports import _json, detect, formats, parse_export, sillytavern

HERE = FIXTURES / "sillytavern"
SWIPES = HERE / "swipes_reasoning.jsonl"
OTHER_FOLDERS = (
    "aider",
    "chatgpt",
    "claude_ai",
    "claude_code",
    "codex",
    "grok",
    "openai_messages",
    "openwebui",
    "sharegpt",
)
JULY_19 = datetime(2026, 7, 19, 12, 0, tzinfo=JAKARTA)


def parse(path: Path, default_ts: datetime | None = None):
    return sillytavern.parse(path.read_bytes(), JAKARTA, default_ts)


def wib(*args) -> datetime:
    return datetime(*args, tzinfo=JAKARTA)


def test_a_tavernai_era_chat_reads_epoch_milliseconds_as_instants():
    export = parse(HERE / "tavernai_epoch.jsonl")

    assert export.format == "sillytavern" and export.notes == ()
    [conv] = export.conversations
    assert conv.title == "Sari"
    assert [m.role for m in conv.messages] == ["assistant", "user", "assistant"]
    assert conv.messages[0].ts == datetime(2023, 1, 24, 12, 29, 31, 558000, tzinfo=UTC)
    assert conv.created == datetime(2023, 1, 24, 11, 31, 36, 839000, tzinfo=UTC)  # the header's create_date


def test_humanized_dates_are_local_times_read_in_the_configured_zone():
    [conv] = parse(HERE / "humanized_dates.jsonl").conversations

    assert [m.ts for m in conv.messages] == [
        wib(2023, 4, 21, 20, 2, 47, 124000),  # "2023-4-21 @20h 02m 47s 124ms"
        wib(2023, 4, 21, 20, 3, 6, 446000),
        wib(2023, 4, 21, 23, 59, 58, 9000),  # "... 9ms" is 9 milliseconds, not 900
        wib(2023, 4, 22, 0, 1, 2, 3000),
    ]
    days = sessions_by_day(conv, JAKARTA, "sillytavern")
    assert [(d.isoformat(), len(s.messages)) for d, s in days] == [("2023-04-21", 3), ("2023-04-22", 1)]
    assert days[1][1].session_id == f"{conv.conversation_id}@2023-04-22"


def test_swipes_reasoning_and_system_messages_are_kept_and_marked():
    export = parse(SWIPES)

    [conv] = export.conversations
    assert [(m.role, m.kind, m.active, m.hidden) for m in conv.messages] == [
        ("assistant", "text", True, False),  # the greeting, its second swipe chosen
        ("user", "text", True, False),
        ("assistant", "thinking", True, True),  # extra.reasoning
        ("assistant", "text", True, False),
        ("system", "narrator", True, False),  # /sys
        ("user", "text", True, True),  # hidden from the prompt (is_system)
        ("system", "comment", True, True),  # /comment
        ("user", "text", True, False),
        ("assistant", "text", True, False),
        ("assistant", "text", False, False),  # the greeting's other swipe
        ("assistant", "text", False, False),  # the reply's two swipes not chosen
        ("assistant", "text", False, False),
    ]
    assert conv.messages[0].content.startswith("*Sari spins her chair around*")
    assert conv.messages[9].content == "*Sari waves* Hi! What shall we break today?"
    assert conv.messages[7].content == "Here is the rack now.\n[image]"
    assert Counter(m.active for m in conv.messages) == Counter({True: 9, False: 3})


def test_meridiem_iso_and_swipe_dates_are_read_and_an_unreadable_one_is_noted():
    export = parse(SWIPES)
    messages = export.conversations[0].messages

    assert messages[0].ts == wib(2025, 3, 2, 14, 5)  # "March 2, 2025 2:05pm"
    assert messages[3].ts == datetime(2025, 3, 2, 7, 7, 30, 250000, tzinfo=UTC)  # ISO with Z
    assert messages[10].ts == datetime(2025, 3, 2, 7, 6, 40, tzinfo=UTC)  # from its swipe_info
    assert messages[7].ts is None  # "sometime on Sunday"
    assert export.notes == ("line 8: unreadable send_date; message kept undated",)
    assert export.conversations[0].created == wib(2025, 3, 2, 14, 5, 9, 123000)  # "2025-03-02@14h05m09s123ms"


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ("June 8, 2023 4:53pm", wib(2023, 6, 8, 16, 53)),
        ("June 8, 2023 12:05am", wib(2023, 6, 8, 0, 5)),
        ("Dec 31, 2024 12:00PM", wib(2024, 12, 31, 12, 0)),
        ("2023-06-08 @16h 53m 12s 456ms", wib(2023, 6, 8, 16, 53, 12, 456000)),
        ("2024-07-12@01h31m37s123ms", wib(2024, 7, 12, 1, 31, 37, 123000)),
        ("2024-7-12@01h31m37s", wib(2024, 7, 12, 1, 31, 37)),
        ("2026-02-04T04:32:50.667Z", datetime(2026, 2, 4, 4, 32, 50, 667000, tzinfo=UTC)),
        ("2026-02-04T11:32:50+07:00", datetime(2026, 2, 4, 11, 32, 50, tzinfo=timezone(timedelta(hours=7)))),
        ("1674563371558", datetime(2023, 1, 24, 12, 29, 31, 558000, tzinfo=UTC)),
        (1674563371558, datetime(2023, 1, 24, 12, 29, 31, 558000, tzinfo=UTC)),
        ("Smarch 8, 2023 4:53pm", None),
        ("2023-13-08 @16h 53m 12s 456ms", None),
        ("", None),
        (True, None),
    ],
)
def test_every_date_form_sillytavern_writes_is_read(written, expected):
    line = {"name": "Sari", "is_user": False, "send_date": written, "mes": "hi"}
    export = sillytavern.parse(json.dumps(line).encode(), JAKARTA, None)

    assert export.conversations[0].messages[0].ts == expected


def test_one_malformed_line_loses_only_that_line_and_each_is_named_in_a_note():
    export = parse(HERE / "malformed_line.jsonl")

    [conv] = export.conversations
    assert [(m.role, m.content) for m in conv.messages] == [
        ("assistant", "Pagi!"),
        ("user", "Mulai dari NAS."),
        ("assistant", "Oke, cek suhu disk dulu."),
    ]
    assert [n.split(":")[0] for n in export.notes] == ["line 3", "line 5"]
    assert not any("Pagi" in n or "aku" in n for n in export.notes)


def test_a_chat_without_any_date_takes_the_default_date_with_a_note():
    undated = parse(HERE / "no_dates.jsonl")
    dated = parse(HERE / "no_dates.jsonl", default_ts=JULY_19)

    assert {m.ts for m in undated.conversations[0].messages} == {None}
    assert undated.notes == ("no message has a time and no default date was given: every message is undated",)
    assert {m.ts for m in dated.conversations[0].messages} == {JULY_19}
    assert dated.notes == () and dated.file_dated == 2
    [(day, session)] = sessions_by_day(dated.conversations[0], JAKARTA, "sillytavern")
    assert day.isoformat() == "2026-07-19" and len(session.messages) == 2


def test_a_chat_without_message_dates_takes_its_create_date_first():
    data = b'{"user_name":"You","character_name":"Sari","create_date":"2025-7-19@10h00m00s"}\n'
    data += b'{"name":"Sari","is_user":false,"mes":"Halo!"}\n'
    export = sillytavern.parse(data, JAKARTA, JULY_19)

    assert export.conversations[0].messages[0].ts == wib(2025, 7, 19, 10, 0)
    assert export.notes == ("no message has a time; dated by the chat's create_date 2025-07-19T10:00:00+07:00",)


def test_the_id_hashes_the_header_identity_so_a_growing_chat_keeps_it():
    data = (HERE / "tavernai_epoch.jsonl").read_bytes()
    shorter = b"\n".join(data.splitlines()[:2]) + b"\n"
    [conv] = sillytavern.parse(data, JAKARTA, None).conversations
    [same] = sillytavern.parse(shorter, JAKARTA, None).conversations

    identity = {"user_name": "You", "character_name": "Sari", "create_date": 1674559896839, "integrity": None}
    assert conv.conversation_id == "sillytavern-" + _json.content_hash(identity)
    assert same.conversation_id == conv.conversation_id
    assert len(same.messages) == 1


def test_a_header_without_create_date_or_integrity_adds_the_first_message_to_the_id():
    header = b'{"chat_metadata":{"note_prompt":""},"user_name":"unused","character_name":"unused"}\n'
    first = b'{"name":"Sari","is_user":false,"send_date":"2025-01-01T00:00:00Z","mes":"one"}\n'
    other = b'{"name":"Sari","is_user":false,"send_date":"2025-01-02T00:00:00Z","mes":"one"}\n'
    a = sillytavern.parse(header + first, JAKARTA, None).conversations[0].conversation_id
    b = sillytavern.parse(header + other, JAKARTA, None).conversations[0].conversation_id

    assert a != b and a.startswith("sillytavern-")


@pytest.mark.parametrize(
    ("data", "kind"),
    [
        (b"", "empty"),
        (b"\n \n", "empty"),
        (b"not json\n{also not\n", "bad_json"),
        (b'{"user_name":"You","character_name":"Sari","create_date":1}\n', "no_messages"),
        (b'{"user_name":"You","character_name":"Sari"}\n{"name":"x","is_user":true}\n', "no_messages"),
    ],
)
def test_a_file_that_is_no_chat_is_a_parse_error(data, kind):
    with pytest.raises(ParseError) as info:
        sillytavern.parse(data, JAKARTA, None)
    assert info.value.kind == kind


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        jsonish(
            [
                "name",
                "is_user",
                "is_system",
                "send_date",
                "mes",
                "extra",
                "swipes",
                "swipe_id",
                "swipe_info",
                "user_name",
                "character_name",
                "create_date",
                "chat_metadata",
                "type",
                "reasoning",
            ]
        ),
        min_size=1,
        max_size=5,
    )
)
def test_any_json_lines_are_read_or_a_parse_error_and_sniffing_never_raises(lines):
    data = "\n".join(json.dumps(line) for line in lines).encode()
    sillytavern.sniff(data)
    try:
        sillytavern.parse(data, JAKARTA, None)
    except ParseError:
        pass


@pytest.mark.parametrize("path", fixtures("sillytavern"), ids=lambda p: p.name)
def test_detect_names_sillytavern_for_every_sillytavern_fixture(path: Path):
    assert set(formats()) == set(ALL_FORMATS)
    assert sillytavern.sniff(path.read_bytes())
    assert detect(path.read_bytes()) == "sillytavern"


@pytest.mark.parametrize(
    "path", [p for folder in OTHER_FOLDERS for p in fixtures(folder)], ids=lambda p: f"{p.parent.name}/{p.name}"
)
def test_the_sniffer_rejects_every_other_format(path: Path):
    assert not sillytavern.sniff(path.read_bytes())


@pytest.mark.parametrize(
    "data",
    [
        KENANG_MARKDOWN,
        GENERIC_JSONL,
        b'{"role":"user","content":"mes"}\n',
        b'{"mes":"hi"}\n',  # no is_user: not enough to tell
        b'{"name":"x","chat_metadata":{},"messages":[]}\n',
        b"{}",
        b"",
    ],
)
def test_the_sniffer_rejects_what_is_not_a_sillytavern_chat(data: bytes):
    assert not sillytavern.sniff(data)


def test_parse_export_reads_a_chat_end_to_end():
    data = SWIPES.read_bytes()
    assert parse_export(data, fmt=detect(data), tz=JAKARTA) == parse(SWIPES)
