"""ChatGPT's conversations.json: a tree per conversation, the active path first, branches kept."""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from datetime import UTC, date, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from import_support import ALL_FORMATS, FIXTURES, JAKARTA, fixtures, jsonish, sessions_by_day

from transforms.errors import ParseError
from transforms.imports import chatgpt, detect, formats, parse_export

HERE = FIXTURES / "chatgpt"
MITKURY = HERE / "mitkury__chatgpt-export-parser__example-conversation.json"
GPT_EXAMPLE = HERE / "yetanotherchris__openwebui-importer__gpt_example.json"
OTHER_FOLDERS = (
    "aider",
    "claude_ai",
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
        "mapping",
        "current_node",
        "create_time",
        "message",
        "parent",
        "children",
        "id",
        "author",
        "role",
        "content",
        "content_type",
        "parts",
        "text",
        "metadata",
    ]
)
JSONISH = jsonish(_KEYS)


def parse(path: Path):
    return chatgpt.parse(path.read_bytes(), JAKARTA, None)


def parse_bytes(data: bytes):
    return chatgpt.parse(data, JAKARTA, None)


def utc(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)


def census(export) -> dict:
    messages = [m for c in export.conversations for m in c.messages]
    return {
        "conversations": len(export.conversations),
        "roles": Counter(m.role for m in messages),
        "active": sum(m.active for m in messages),
        "inactive": sum(not m.active for m in messages),
        "hidden": sum(m.hidden for m in messages),
    }


# --- the real samples --------------------------------------------------------


def test_the_mitkury_sample_keeps_the_abandoned_edit_after_the_active_path():
    export = parse(MITKURY)

    assert export.format == "chatgpt"
    assert census(export) == {
        "conversations": 1,
        "roles": Counter({"user": 3, "assistant": 2}),  # the empty system root is the one message dropped
        "active": 4,
        "inactive": 1,
        "hidden": 0,
    }
    [conv] = export.conversations
    assert (conv.conversation_id, conv.title) == ("conv-123", "Sample conversation with branch")
    assert conv.created == datetime(2024, 1, 1, tzinfo=UTC)
    assert [(m.source_id, m.role, m.active) for m in conv.messages] == [
        ("msg-2", "user", True),
        ("msg-3", "assistant", True),
        ("msg-4", "user", True),
        ("msg-6", "assistant", True),
        ("msg-5", "user", False),
    ]
    assert conv.messages[0].ts == utc(1704067300) == datetime(2024, 1, 1, 0, 1, 40, tzinfo=UTC)
    assert conv.messages[3].ts == utc(1704067500)  # the last active message
    assert conv.messages[-1].ts == utc(1704067450)
    assert conv.messages[-1].content == "Actually, can you help me with Python instead?"
    assert conv.messages[3].content.startswith("Here's how to write a function in JavaScript:\n\n```javascript")


def test_the_2025_sample_has_a_hidden_custom_instructions_message_and_ten_turns():
    export = parse(GPT_EXAMPLE)

    assert census(export) == {
        "conversations": 1,
        "roles": Counter({"system": 1, "user": 5, "assistant": 5}),
        "active": 11,
        "inactive": 0,
        "hidden": 1,
    }
    [conv] = export.conversations
    assert conv.conversation_id == "6857150a-cd20-800f-a5f7-d2404f94b935"
    assert conv.title == "How photosynthesis works"
    assert conv.created == utc(1750537482.970556)
    context = conv.messages[0]
    assert (context.role, context.hidden, context.kind, context.ts) == ("system", True, "text", None)
    assert context.source_id == "a021bc5d-b3f2-4120-a182-c00058472c7b"
    assert context.content.startswith("The user provided the additional info about how they would like you to respond:")
    assert [m.role for m in conv.messages[1:]] == ["user", "assistant"] * 5
    assert conv.messages[1].ts == datetime(2025, 6, 21, 20, 24, 43, 102000, tzinfo=UTC)
    assert conv.messages[-1].ts == datetime(2025, 6, 21, 20, 25, 32, 237099, tzinfo=UTC)
    assert conv.messages[-1].content.startswith("Forests, like ponds, are not sentient\u2014they don\u2019t")


def test_tree_order_wins_over_clock_skew_between_question_and_reply():
    conv = parse(GPT_EXAMPLE).conversations[0]

    question, reply = conv.messages[1], conv.messages[2]
    assert (question.role, reply.role) == ("user", "assistant")
    assert reply.ts < question.ts  # the server stamped the reply 79 ms before the client stamped the question


def test_the_copied_samples_match_their_recorded_sha256():
    sources = (HERE / "SOURCES.md").read_text()
    recorded = dict(re.findall(r"## `[^/`]+/([^`]+)`.*?sha256 `([0-9a-f]{64})`", sources, re.DOTALL))

    assert set(recorded) == {MITKURY.name, GPT_EXAMPLE.name}
    for name, digest in recorded.items():
        assert hashlib.sha256((HERE / name).read_bytes()).hexdigest() == digest


# --- hand-made edge cases ---------------------------------------------------


def test_a_top_level_object_reads_like_an_array_of_one():
    data = (HERE / "single_object.json").read_bytes()
    as_array = json.dumps([json.loads(data)]).encode()

    export = parse_bytes(data)
    assert export == parse_bytes(as_array)
    [conv] = export.conversations
    assert (conv.conversation_id, conv.title, conv.created) == (
        "single-0001",
        "Single object export",
        utc(1721527200.5),
    )


def test_client_created_root_is_skipped_and_a_null_create_time_is_no_time():
    [conv] = parse(HERE / "single_object.json").conversations

    assert [(m.source_id, m.role, m.ts) for m in conv.messages] == [
        ("s-u1", "user", None),
        ("s-a1", "assistant", utc(1721527260.25)),
    ]


def test_every_content_type_maps_to_a_role_kind_and_text():
    [conv] = parse(HERE / "content_types.json").conversations

    assert [(m.source_id, m.role, m.kind, m.hidden, m.content) for m in conv.messages] == [
        ("t-sys", "system", "text", False, "You are a helpful assistant."),
        ("t-ctx", "system", "text", True, "I live in Jakarta.\n\nAnswer briefly."),
        ("t-u1", "user", "text", False, "[image]\nWhat is in this picture?\n[audio]\nspoken words"),
        ("t-a1", "assistant", "code", False, "print(1 + 1)"),
        ("t-tool1", "tool", "execution_output", False, "2"),
        ("t-a2", "assistant", "placeholder", False, "[empty message]"),
        ("t-tool2", "tool", "quote", False, "L0: Example Domain"),
        ("t-tool3", "tool", "quote", False, "This domain is for use in examples."),
        ("t-a3", "assistant", "placeholder", False, "[sonic_webpage_preview]"),
        ("t-a4", "assistant", "text", False, "The picture shows 2."),
    ]
    assert all(m.active for m in conv.messages)


def test_an_edited_prompt_and_a_regenerated_reply_are_kept_as_inactive_branches():
    [conv] = parse(HERE / "edited_branch.json").conversations

    assert [(m.source_id, m.active) for m in conv.messages] == [
        ("b-u1", True),
        ("b-a1", True),
        ("b-u2new", True),
        ("b-a3new", True),
        ("b-u2old", False),
        ("b-a2old", False),
        ("b-a3old", False),
    ]


def test_current_node_decides_the_active_path_even_when_an_older_leaf_is_named():
    conv_obj = json.loads((HERE / "edited_branch.json").read_bytes())
    conv_obj[0]["current_node"] = "b-a2old"

    [conv] = parse_bytes(json.dumps(conv_obj).encode()).conversations
    assert [m.source_id for m in conv.messages if m.active] == ["b-u1", "b-a1", "b-u2old", "b-a2old"]
    assert [m.source_id for m in conv.messages if not m.active] == ["b-u2new", "b-a3old", "b-a3new"]


def test_without_current_node_the_leaf_written_last_is_active():
    conv_obj = json.loads((HERE / "edited_branch.json").read_bytes())
    del conv_obj[0]["current_node"]

    [conv] = parse_bytes(json.dumps(conv_obj).encode()).conversations
    assert [m.source_id for m in conv.messages if m.active] == ["b-u1", "b-a1", "b-u2new", "b-a3new"]


def test_a_conversation_across_midnight_in_jakarta_becomes_two_sessions():
    export = parse(HERE / "two_days.json")
    assert [c.conversation_id for c in export.conversations] == ["night-0001", "morning-0001"]

    sessions = sessions_by_day(export.conversations[0], JAKARTA, "chatgpt")

    assert [(day, s.session_id, len(s.messages)) for day, s in sessions] == [
        (date(2024, 7, 19), "night-0001", 2),
        (date(2024, 7, 20), "night-0001@2024-07-20", 2),
    ]
    assert [m.content for m in sessions[1][1].messages] == ["After midnight", "Now the 20th"]
    assert sessions[1][1].messages[0].ts == datetime(2024, 7, 20, 0, 10, tzinfo=JAKARTA)


# --- bad input ------------------------------------------------------------------


def test_invalid_json_is_a_bad_json_error_with_line_and_column():
    with pytest.raises(ParseError) as info:
        parse(HERE / "bad_json.json")

    assert info.value.kind == "bad_json"
    assert re.fullmatch(r"invalid JSON at line \d+, column \d+ \(.+\)", info.value.reason)


def test_a_message_without_a_role_names_its_node_and_not_its_text():
    conv_obj = json.loads((HERE / "single_object.json").read_bytes())
    del conv_obj["mapping"]["s-u1"]["message"]["author"]["role"]

    with pytest.raises(ParseError) as info:
        parse_bytes(json.dumps(conv_obj).encode())

    assert info.value.kind == "bad_record"
    assert "'s-u1'" in info.value.reason and "role" in info.value.reason
    assert "kabar" not in info.value.reason


def test_an_unreadable_create_time_is_a_bad_timestamp():
    conv_obj = json.loads((HERE / "single_object.json").read_bytes())
    conv_obj["mapping"]["s-a1"]["message"]["create_time"] = "yesterday-ish"

    with pytest.raises(ParseError) as info:
        parse_bytes(json.dumps(conv_obj).encode())

    assert info.value.kind == "bad_timestamp"


@settings(max_examples=300, deadline=None)
@given(JSONISH)
def test_any_json_is_either_read_or_a_parse_error_and_sniffing_never_raises(obj: object):
    data = json.dumps(obj).encode()
    chatgpt.sniff(data)
    try:
        chatgpt.parse(data, JAKARTA, None)
    except ParseError:
        pass


# --- sniffing and detection ------------------------------------------------------


@pytest.mark.parametrize("path", [p for p in fixtures("chatgpt") if p.name != "bad_json.json"], ids=lambda p: p.name)
def test_the_sniffer_claims_every_chatgpt_fixture(path: Path):
    assert chatgpt.sniff(path.read_bytes())


@pytest.mark.parametrize(
    "path",
    [p for folder in OTHER_FOLDERS for p in fixtures(folder)] + [HERE / "bad_json.json"],
    ids=lambda p: p.name,
)
def test_the_sniffer_rejects_other_formats_and_broken_files(path: Path):
    assert not chatgpt.sniff(path.read_bytes())


@pytest.mark.parametrize(
    "data",
    [
        b"{}",
        b"[]",
        b"",
        b"\xff\xfe not utf-8",
        b'"mapping"',
        b'{"mapping": "not a tree", "current_node": "x"}',
        json.dumps([{"uuid": "p1", "name": "Project", "description": "d", "docs": [{"uuid": "d1"}]}]).encode(),
        json.dumps({"uuid": "c1", "name": "", "chat_messages": [], "mapping": {}, "create_time": 1}).encode(),
    ],
)
def test_the_sniffer_rejects_json_that_is_not_a_chatgpt_export(data: bytes):
    assert not chatgpt.sniff(data)


def test_detect_names_chatgpt_for_every_chatgpt_fixture():
    assert set(formats()) == set(ALL_FORMATS)

    for path in fixtures("chatgpt"):
        expected = None if path.name == "bad_json.json" else "chatgpt"
        assert detect(path.read_bytes()) == expected, path.name


def test_parse_export_reads_a_sample_end_to_end():
    data = MITKURY.read_bytes()
    export = parse_export(data, fmt=detect(data), tz=JAKARTA)

    assert export == parse(MITKURY)


@pytest.mark.parametrize("fmt", [None, "csv"])
def test_parse_export_without_a_known_format_is_unknown_format_naming_the_formats_tried(fmt):
    with pytest.raises(ParseError) as info:
        parse_export(b'{"hello": "world"}', fmt=fmt, tz=JAKARTA)
    assert info.value.kind == "unknown_format"
    tried = (
        "aider, chatgpt, claude_ai, claude_code, codex, gemini, grok, openai_messages, openwebui, sharegpt, sillytavern"
    )
    assert f"tried: {tried}" in info.value.reason


@pytest.mark.parametrize("content_type", [["text"], {"kind": "text"}, 7])
def test_a_content_type_that_is_not_a_string_is_a_placeholder_not_a_crash(content_type):
    assert chatgpt._render({"content_type": content_type, "parts": ["hi"]}) == ("[no content_type]", "placeholder")
