"""OpenAI-style {"messages": [...]} sets: one conversation a line, tool calls kept, undated unless dated."""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
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
from transforms.imports import _json, detect, formats, openai_messages, parse_export, sharegpt

HERE = FIXTURES / "openai_messages"
PIRATE = HERE / "CameronVetter__FineTuning-A-Pirate__training_set.jsonl"
TOOLS = HERE / "tool_calls.jsonl"
OTHER_FOLDERS = (
    "aider",
    "chatgpt",
    "claude_ai",
    "claude_code",
    "codex",
    "grok",
    "openwebui",
    "sharegpt",
    "sillytavern",
)
JULY_1 = datetime(2026, 7, 1, 12, 0, tzinfo=JAKARTA)
UNDATED_NOTE = "no timestamps; dated by nothing: no default date was given, every message is undated"


def parse(path: Path, default_ts: datetime | None = None):
    return openai_messages.parse(path.read_bytes(), JAKARTA, default_ts)


def test_the_pirate_set_is_ten_conversations_of_thirty_messages():
    export = parse(PIRATE)

    assert export.format == "openai_messages"
    assert len(export.conversations) == 10
    assert [len(c.messages) for c in export.conversations] == [3] * 10
    assert Counter(m.role for c in export.conversations for m in c.messages) == Counter(
        {"system": 10, "user": 10, "assistant": 10}
    )
    assert all([m.hidden for m in c.messages] == [True, False, False] for c in export.conversations)
    assert {m.kind for c in export.conversations for m in c.messages} == {"text"}
    assert export.notes == (UNDATED_NOTE,)
    assert export.conversations[0].messages[1].content == "Is Xbox better than PlayStation?"


def test_the_copied_sample_matches_its_recorded_sha256():
    sources = (HERE / "SOURCES.md").read_text()
    [digest] = re.findall(rf"## `[^`]*{re.escape(PIRATE.name)}`.*?sha256 `([0-9a-f]{{64}})`", sources, re.DOTALL)
    assert hashlib.sha256(PIRATE.read_bytes()).hexdigest() == digest


def test_each_line_without_an_id_gets_a_hash_of_its_canonical_json():
    export = parse(PIRATE)
    first = json.loads(PIRATE.read_bytes().splitlines()[0])

    assert export.conversations[0].conversation_id == "openai-messages-" + _json.content_hash(first)
    assert len({c.conversation_id for c in export.conversations}) == 10


def test_a_given_default_date_dates_every_message_and_the_conversation_is_one_day():
    export = parse(PIRATE, default_ts=JULY_1)

    assert {m.ts for c in export.conversations for m in c.messages} == {JULY_1}
    assert export.notes == () and export.file_dated == 30
    [(day, session)] = sessions_by_day(export.conversations[0], JAKARTA, "openai_messages")
    assert day.isoformat() == "2026-07-01" and [m.flags for m in session.messages] == [("hidden",), (), ()]


def test_tool_calls_their_results_and_content_parts_are_kept_in_order():
    export = parse(TOOLS)

    first, second, third = export.conversations
    assert [(m.role, m.kind, m.hidden) for m in first.messages] == [
        ("system", "text", True),
        ("user", "text", False),
        ("assistant", "tool_use", False),  # content null: only the call
        ("tool", "tool_result", False),
        ("assistant", "text", False),
    ]
    assert first.messages[2].content == '[tool_use smart_status] {"disk": 3}'
    assert first.messages[2].source_id == "call_smart_1"
    assert first.messages[4].content == "Disk 3 is at 51 °C: warm, not critical.\nClean the dust filter."

    assert second.conversation_id == "ft-boot-order"
    assert [(m.role, m.hidden) for m in second.messages] == [
        ("system", True),  # developer
        ("user", False),
        ("assistant", False),  # weight 0 is kept
        ("assistant", False),  # a refusal part
    ]
    assert second.messages[1].content == "Bagaimana urutan boot VM?\n[image]"
    assert second.messages[3].content == "Saya tidak bisa mengakses server Anda."

    assert [(m.role, m.kind) for m in third.messages] == [
        ("user", "text"),
        ("assistant", "tool_use"),  # a legacy function_call
        ("tool", "tool_result"),  # role function
        ("assistant", "text"),
    ]
    assert third.messages[1].content == '[tool_use rack_sensor] {"sensor": "inlet"}'


def test_a_single_json_object_is_one_conversation():
    export = parse(HERE / "single_object.json")

    [conv] = export.conversations
    assert [m.role for m in conv.messages] == ["system", "user", "assistant"]


def test_a_bad_line_or_turn_is_skipped_with_a_note_naming_its_position():
    export = parse(HERE / "malformed_line.jsonl")

    assert [[m.content for m in c.messages] for c in export.conversations] == [["hi", "hello"], ["still here?", "yes"]]
    assert export.notes[1:] == (
        "line 2: invalid JSON; line skipped",
        "line 3: no 'messages' list; skipped",
        "line 4, message 1: not a {'role', ...} object; skipped",
        "line 4, message 2: not a {'role', ...} object; skipped",
    )


def test_a_long_tool_argument_is_cut_and_a_repeated_conversation_gets_a_suffix():
    call = {"id": "c", "type": "function", "function": {"name": "write", "arguments": "x" * 3000}}
    line = json.dumps({"messages": [{"role": "assistant", "content": None, "tool_calls": [call]}]})
    export = openai_messages.parse(f"{line}\n{line}\n".encode(), JAKARTA, None)

    first, second = export.conversations
    assert len(first.messages[0].content) == len("[tool_use write] ") + openai_messages.TOOL_INPUT_LIMIT + 1
    assert second.conversation_id == f"{first.conversation_id}-2"


def test_an_id_that_cannot_name_a_session_is_hashed_with_a_note_that_does_not_quote_it():
    item = {"id": "../../etc/passwd", "messages": [{"role": "user", "content": "hi"}]}
    export = openai_messages.parse(json.dumps(item).encode(), JAKARTA, None)

    assert export.conversations[0].conversation_id.startswith("openai-messages-")
    assert "passwd" not in export.notes[1]


@pytest.mark.parametrize(
    ("data", "kind"),
    [
        (b"", "empty"),
        (b"\xff", "bad_utf8"),
        (b"not json\nnor this\n", "bad_json"),
        (b"42", "bad_record"),
        (b'{"messages": []}', "no_messages"),
        (b'{"prompt": "p", "completion": "c"}\n{"prompt": "q", "completion": "d"}\n', "no_messages"),
    ],
)
def test_an_unreadable_file_is_a_parse_error(data, kind):
    with pytest.raises(ParseError) as info:
        openai_messages.parse(data, JAKARTA, None)
    assert info.value.kind == kind


@settings(max_examples=300, deadline=None)
@given(jsonish(["messages", "role", "content", "type", "text", "tool_calls", "function", "name", "arguments", "id"]))
def test_any_json_is_either_read_or_a_parse_error_and_sniffing_never_raises(obj: object):
    data = json.dumps(obj).encode()
    openai_messages.sniff(data)
    try:
        openai_messages.parse(data, JAKARTA, None)
    except ParseError:
        pass


@pytest.mark.parametrize("path", fixtures("openai_messages"), ids=lambda p: p.name)
def test_detect_names_openai_messages_for_every_fixture_and_sharegpt_does_not_claim_them(path: Path):
    assert set(formats()) == set(ALL_FORMATS)
    assert openai_messages.sniff(path.read_bytes())
    assert not sharegpt.sniff(path.read_bytes())
    assert detect(path.read_bytes()) == "openai_messages"


@pytest.mark.parametrize(
    "path", [p for folder in OTHER_FOLDERS for p in fixtures(folder)], ids=lambda p: f"{p.parent.name}/{p.name}"
)
def test_the_sniffer_rejects_every_other_format(path: Path):
    assert not openai_messages.sniff(path.read_bytes())


@pytest.mark.parametrize(
    "data",
    [
        KENANG_MARKDOWN,
        GENERIC_JSONL,
        b'{"conversations": [{"from": "human", "value": "messages"}]}',
        b'{"messages": [{"from": "human", "value": "hi"}]}',
        b'{"id": "c", "history": {"messages": {}}, "messages": [{"role": "user", "content": "hi"}]}',
        b'{"messages": [{"id": "m1", "parentId": null, "role": "user", "content": "hi"}]}',
        b'{"messages": []}',
        b"[]",
    ],
)
def test_the_sniffer_rejects_what_is_not_a_messages_set(data: bytes):
    assert not openai_messages.sniff(data)


def test_parse_export_reads_the_sample_end_to_end():
    data = PIRATE.read_bytes()
    assert parse_export(data, fmt=detect(data), tz=JAKARTA) == parse(PIRATE)
