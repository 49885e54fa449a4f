"""Claude.ai's conversations.json: every message counted, blanks as placeholders, branches kept."""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from import_support import ALL_FORMATS, FIXTURES, JAKARTA, fixtures, jsonish

from transforms.errors import ParseError
from transforms.imports import claude_ai, detect, formats, parse_export

HERE = FIXTURES / "claude_ai"
SAMPLE = HERE / "yetanotherchris__openwebui-importer__claude_example.json"
NOT_CONVERSATIONS = ("projects.json", "users.json")
OTHER_FOLDERS = (
    "aider",
    "chatgpt",
    "claude_code",
    "codex",
    "grok",
    "openai_messages",
    "openwebui",
    "sharegpt",
    "sillytavern",
)
_KEYS = (  # the keys the format reads
    [
        "uuid",
        "name",
        "created_at",
        "chat_messages",
        "sender",
        "text",
        "content",
        "type",
        "parent_message_uuid",
        "current_leaf_message_uuid",
        "attachments",
        "files",
        "file_name",
    ]
)
JSONISH = jsonish(_KEYS)


def parse(path: Path):
    return claude_ai.parse(path.read_bytes(), JAKARTA, None)


def parse_bytes(data: bytes):
    return claude_ai.parse(data, JAKARTA, None)


# --- the real sample ----------------------------------------------------------


def test_the_sample_keeps_all_557_messages_of_its_85_conversations():
    export = parse(SAMPLE)

    assert export.format == "claude_ai"
    messages = [m for c in export.conversations for m in c.messages]
    assert len(export.conversations) == 85
    assert Counter(m.role for m in messages) == Counter({"user": 283, "assistant": 274})
    assert sum(m.active for m in messages) == 557  # no parent_message_uuid: one chain each, all active
    assert Counter(m.kind for m in messages) == Counter({"placeholder": 547, "text": 10})
    assert {m.content for m in messages if m.kind == "placeholder"} == {"[empty message]"}
    assert min(m.ts for m in messages) == datetime(2024, 3, 13, 14, 48, 44, 500345, tzinfo=UTC)
    assert max(m.ts for m in messages) == datetime(2025, 6, 21, 20, 49, 35, 584322, tzinfo=UTC)


def test_the_sample_keeps_file_order_untitled_and_empty_conversations():
    convs = parse(SAMPLE).conversations

    assert Counter(c.title for c in convs) == Counter({None: 84, "How Photosynthesis Works": 1})
    assert [i for i, c in enumerate(convs) if not c.messages] == [11, 12]
    assert convs[0].conversation_id == "636f35a1-13bb-479e-836b-e320aec9c6ac"
    assert convs[0].created == datetime(2024, 3, 13, 14, 48, 37, 115821, tzinfo=UTC)
    assert convs[-1].conversation_id == "76a904ac-7838-4a01-9e91-020411c40566"
    assert convs[-1].created == datetime(2025, 6, 21, 20, 48, 38, 467685, tzinfo=UTC)
    assert [c.created for c in convs] != sorted(c.created for c in convs)


def test_the_one_conversation_with_text_reads_as_ten_alternating_turns():
    conv = parse(SAMPLE).conversations[-1]

    assert [m.role for m in conv.messages] == ["user", "assistant"] * 5
    assert {m.kind for m in conv.messages} == {"text"}
    assert conv.messages[0].content == "Can you explain how photosynthesis works in simple terms?"
    assert conv.messages[1].content.startswith(" Photosynthesis is how plants make")  # leading space kept
    assert conv.messages[0].ts == datetime(2025, 6, 21, 20, 48, 39, 29572, tzinfo=UTC)
    assert conv.messages[-1].ts == datetime(2025, 6, 21, 20, 49, 35, 584322, tzinfo=UTC)
    assert conv.messages[0].source_id is not None


def test_the_copied_sample_matches_its_recorded_sha256():
    sources = (HERE / "SOURCES.md").read_text()
    recorded = dict(re.findall(r"## `[^/`]+/([^`]+)`.*?sha256 `([0-9a-f]{64})`", sources, re.DOTALL))

    assert recorded == {SAMPLE.name: hashlib.sha256(SAMPLE.read_bytes()).hexdigest()}


# --- hand-made edge cases ---------------------------------------------------


def test_a_null_entry_is_skipped_and_an_empty_message_kept_as_a_placeholder():
    [conv] = parse(HERE / "null_entry.json").conversations

    assert [(m.source_id, m.role, m.kind, m.content) for m in conv.messages] == [
        ("n-h1", "user", "text", "Halo"),
        ("n-a1", "assistant", "placeholder", "[empty message]"),
        ("n-h2", "user", "text", "Older export: text only"),
        ("n-a2", "assistant", "text", "[tool_use: web_search]\n[tool_result: web_search]\nFound it."),
    ]


def test_a_timestamp_without_offset_is_read_in_the_configured_zone():
    [conv] = parse(HERE / "null_entry.json").conversations

    assert conv.messages[2].ts == datetime(2024, 7, 20, 8, 1, tzinfo=JAKARTA)
    assert conv.messages[3].ts == datetime(2024, 7, 20, 1, 1, 10, tzinfo=UTC)


def test_attachments_and_files_become_markers_after_the_text():
    [conv] = parse(HERE / "attachment.json").conversations

    assert [(m.role, m.kind, m.content) for m in conv.messages] == [
        ("user", "text", "Summarise the notes\n[attachment: notes.txt]\nbuy rice"),
        ("assistant", "text", "Buy rice."),
        ("user", "attachment", "[file: photo.png]"),
        ("assistant", "text", "A photo."),
    ]


def test_an_edited_prompt_leaves_the_older_branch_inactive():
    first, _ = parse(HERE / "branches.json").conversations

    assert [(m.source_id, m.active) for m in first.messages] == [
        ("b-h1", True),
        ("b-a1", True),
        ("b-h2new", True),
        ("b-a2new", True),
        ("b-h2old", False),
        ("b-a2old", False),
    ]


def test_current_leaf_message_uuid_beats_the_leaf_written_last():
    _, second = parse(HERE / "branches.json").conversations

    assert [(m.source_id, m.active) for m in second.messages] == [
        ("c-h1", True),
        ("c-a1", True),
        ("c-a2", False),
    ]


def test_a_top_level_object_reads_like_an_array_of_one():
    [conv_obj] = json.loads((HERE / "attachment.json").read_bytes())

    assert parse_bytes(json.dumps(conv_obj).encode()) == parse(HERE / "attachment.json")


# --- bad input ------------------------------------------------------------------


def test_a_message_without_a_sender_names_it_and_not_its_text():
    convs = json.loads((HERE / "attachment.json").read_bytes())
    del convs[0]["chat_messages"][1]["sender"]

    with pytest.raises(ParseError) as info:
        parse_bytes(json.dumps(convs).encode())

    assert info.value.kind == "bad_record"
    assert "'at-a1'" in info.value.reason
    assert "rice" not in info.value.reason.lower()


def test_a_conversation_that_is_not_an_object_is_a_bad_record():
    with pytest.raises(ParseError) as info:
        parse_bytes(b'[{"uuid": "a", "chat_messages": []}, 3]')

    assert (info.value.kind, info.value.reason) == (
        "bad_record",
        "item 1 is a number, not a conversation object",
    )


@settings(max_examples=300, deadline=None)
@given(JSONISH)
def test_any_json_is_either_read_or_a_parse_error_and_sniffing_never_raises(obj: object):
    data = json.dumps(obj).encode()
    claude_ai.sniff(data)
    try:
        claude_ai.parse(data, JAKARTA, None)
    except ParseError:
        pass


# --- sniffing and detection ------------------------------------------------------


@pytest.mark.parametrize(
    "path", [p for p in fixtures("claude_ai") if p.name not in NOT_CONVERSATIONS], ids=lambda p: p.name
)
def test_the_sniffer_claims_every_claude_ai_conversations_fixture(path: Path):
    assert claude_ai.sniff(path.read_bytes())


@pytest.mark.parametrize(
    "path",
    [p for folder in OTHER_FOLDERS for p in fixtures(folder)] + [HERE / n for n in NOT_CONVERSATIONS],
    ids=lambda p: p.name,
)
def test_the_sniffer_rejects_other_formats_and_the_exports_other_files(path: Path):
    assert not claude_ai.sniff(path.read_bytes())


@pytest.mark.parametrize(
    "data",
    [
        b"{}",
        b"[]",
        b"",
        b"\xff\xfe not utf-8",
        b'{"chat_messages": "not a list"}',
        json.dumps([{"uuid": "p1", "name": "Project", "description": "d", "docs": [{"uuid": "d1"}]}]).encode(),
        json.dumps([{"uuid": "c1", "chat_messages": []}, {"uuid": "p1", "name": "Project", "docs": []}]).encode(),
    ],
)
def test_the_sniffer_rejects_json_that_is_not_a_claude_ai_export(data: bytes):
    assert not claude_ai.sniff(data)


def test_detect_names_claude_ai_for_every_conversations_fixture_and_nothing_for_the_rest():
    assert set(formats()) == set(ALL_FORMATS)

    for path in fixtures("claude_ai"):
        expected = None if path.name in NOT_CONVERSATIONS else "claude_ai"
        assert detect(path.read_bytes()) == expected, path.name


def test_parse_export_reads_the_sample_end_to_end():
    data = SAMPLE.read_bytes()
    export = parse_export(data, fmt=detect(data), tz=JAKARTA)

    assert export == parse(SAMPLE)
