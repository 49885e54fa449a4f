"""Open WebUI chat exports: one chat or a list of rows; seconds or milliseconds; currentId marks the path."""

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
from transforms.imports import detect, formats, openwebui, parse_export

HERE = FIXTURES / "openwebui"
SAMPLE = HERE / "yetanotherchris__openwebui-importer__webui-json.json"
SINGLE = HERE / "single_seconds.json"
LISTED = HERE / "list_milliseconds.json"
OTHER_FOLDERS = (
    "aider",
    "chatgpt",
    "claude_ai",
    "claude_code",
    "codex",
    "grok",
    "openai_messages",
    "sharegpt",
    "sillytavern",
)
_KEYS = (  # the keys the format reads
    [
        "id",
        "title",
        "chat",
        "history",
        "messages",
        "currentId",
        "parentId",
        "childrenIds",
        "role",
        "content",
        "timestamp",
        "created_at",
        "files",
        "type",
    ]
)
JSONISH = jsonish(_KEYS)


def parse(path: Path):
    return openwebui.parse(path.read_bytes(), JAKARTA, None)


def parse_bytes(data: bytes):
    return openwebui.parse(data, JAKARTA, None)


# --- the real sample ----------------------------------------------------------


def test_the_sample_is_one_chat_of_two_active_messages():
    export = parse(SAMPLE)

    assert export.format == "openwebui"
    [conv] = export.conversations
    assert Counter(m.role for m in conv.messages) == Counter({"user": 1, "assistant": 1})
    assert [m.active for m in conv.messages] == [True, True]
    assert conv.title == "\U0001f9e0 Goldwater Rule Ethics"  # surrogate-pair escapes joined into one emoji
    assert conv.messages[0].ts == conv.messages[-1].ts == datetime(2025, 4, 13, 20, 52, 37, tzinfo=UTC)
    assert conv.created == datetime(2025, 4, 13, 20, 52, 37, 127000, tzinfo=UTC)  # the chat's timestamp is in ms
    assert conv.messages[0].content.startswith("what was the ruling in the US called where you can''t")
    assert conv.messages[1].content.startswith(
        "The principle you''re referring to is known as the **\"Goldwater Rule.\"**"
    )
    assert [m.source_id for m in conv.messages] == [
        "5ae90291-abf9-453f-9f7d-78f3753af40c",
        "a9436447-add3-4bd8-a25f-6ce54b73903c",
    ]


def test_an_empty_id_gives_a_stable_content_hash():
    [conv] = parse(SAMPLE).conversations

    assert conv.conversation_id == "8839eb4a1c9f9137"


def test_the_copied_sample_matches_its_recorded_sha256():
    sources = (HERE / "SOURCES.md").read_text()
    recorded = dict(re.findall(r"## `[^/`]+/([^`]+)`.*?sha256 `([0-9a-f]{64})`", sources, re.DOTALL))

    assert recorded == {SAMPLE.name: hashlib.sha256(SAMPLE.read_bytes()).hexdigest()}


# --- hand-made edge cases ---------------------------------------------------


def test_current_id_marks_the_active_path_and_the_regenerated_reply_is_kept_inactive():
    [conv] = parse(SINGLE).conversations

    assert [(m.source_id, m.role, m.active, m.kind, m.content) for m in conv.messages] == [
        ("w-u1", "user", True, "text", "Kenapa langit biru?"),
        ("w-a1new", "assistant", True, "text", "Rayleigh scattering (regenerated)."),
        ("w-u2", "user", True, "attachment", "[image]\n[attachment: sky.pdf]"),
        ("w-a2", "assistant", True, "placeholder", "[empty message]"),
        ("w-a1old", "assistant", False, "text", "Rayleigh scattering (first try)."),
    ]
    assert conv.messages[0].ts == datetime(2024, 7, 20, 10, 0, tzinfo=JAKARTA)
    assert conv.messages[-1].ts == datetime(2024, 7, 20, 10, 0, 10, tzinfo=JAKARTA)
    assert conv.title == "Langit biru"


def test_milliseconds_and_seconds_give_the_same_times():
    [single] = parse(SINGLE).conversations
    listed, _ = parse(LISTED).conversations

    assert listed.messages == single.messages
    assert single.created == datetime(2024, 7, 20, 10, 0, 0, 500000, tzinfo=JAKARTA)  # chat timestamp, ms
    assert listed.created == datetime(2024, 7, 20, 10, 0, tzinfo=JAKARTA)  # the row's created_at, seconds


def test_a_list_of_rows_reads_every_chat_with_the_rows_ids():
    export = parse(LISTED)

    assert [(c.conversation_id, c.title, len(c.messages)) for c in export.conversations] == [
        ("row-0001", "Langit biru", 5),
        ("row-0002", "Flat chat", 2),
    ]


def test_a_chat_without_history_reads_its_linear_messages():
    _, flat = parse(LISTED).conversations

    assert [(m.role, m.content, m.active, m.ts) for m in flat.messages] == [
        ("user", "Hi", True, datetime(2024, 7, 20, 11, 0, tzinfo=JAKARTA)),
        ("assistant", "Hello!", True, datetime(2024, 7, 20, 11, 0, 5, tzinfo=JAKARTA)),
    ]


def test_a_single_chat_reads_like_a_list_of_one():
    data = SINGLE.read_bytes()

    assert parse_bytes(json.dumps([json.loads(data)]).encode()) == parse(SINGLE)


def test_without_current_id_the_ids_listed_in_messages_are_the_active_path():
    chat = json.loads(SINGLE.read_bytes())
    del chat["history"]["currentId"]
    chat["messages"] = [chat["history"]["messages"][i] for i in ("w-u1", "w-a1old")]

    [conv] = parse_bytes(json.dumps(chat).encode()).conversations
    assert [m.source_id for m in conv.messages if m.active] == ["w-u1", "w-a1old"]


def test_an_iso_timestamp_without_offset_is_read_in_the_configured_zone():
    chat = json.loads(SINGLE.read_bytes())
    chat["history"]["messages"]["w-u1"]["timestamp"] = "2024-07-20T10:00:00"

    [conv] = parse_bytes(json.dumps(chat).encode()).conversations
    assert conv.messages[0].ts == datetime(2024, 7, 20, 3, 0, tzinfo=UTC)


# --- bad input ------------------------------------------------------------------


def test_a_message_without_a_role_names_it_and_not_its_text():
    chat = json.loads(SINGLE.read_bytes())
    del chat["history"]["messages"]["w-u1"]["role"]

    with pytest.raises(ParseError) as info:
        parse_bytes(json.dumps(chat).encode())

    assert info.value.kind == "bad_record"
    assert "'w-u1'" in info.value.reason
    assert "langit" not in info.value.reason.lower()


def test_a_timestamp_that_is_not_a_time_is_a_bad_timestamp():
    chat = json.loads(SINGLE.read_bytes())
    chat["history"]["messages"]["w-u1"]["timestamp"] = True

    with pytest.raises(ParseError) as info:
        parse_bytes(json.dumps(chat).encode())

    assert info.value.kind == "bad_timestamp"


@settings(max_examples=300, deadline=None)
@given(JSONISH)
def test_any_json_is_either_read_or_a_parse_error_and_sniffing_never_raises(obj: object):
    data = json.dumps(obj).encode()
    openwebui.sniff(data)
    try:
        openwebui.parse(data, JAKARTA, None)
    except ParseError:
        pass


# --- sniffing and detection ------------------------------------------------------


@pytest.mark.parametrize("path", fixtures("openwebui"), ids=lambda p: p.name)
def test_the_sniffer_claims_every_openwebui_fixture(path: Path):
    assert openwebui.sniff(path.read_bytes())


@pytest.mark.parametrize("path", [p for folder in OTHER_FOLDERS for p in fixtures(folder)], ids=lambda p: p.name)
def test_the_sniffer_rejects_other_formats(path: Path):
    assert not openwebui.sniff(path.read_bytes())


@pytest.mark.parametrize(
    "data",
    [
        b"{}",
        b"[]",
        b"",
        b"\xff\xfe not utf-8",
        b'{"messages": [{"role": "user", "content": "hi"}]}',  # OpenAI messages, no tree
        b'{"messages": []}',
        json.dumps([{"uuid": "p1", "name": "Project", "description": "d", "docs": [{"uuid": "d1"}]}]).encode(),
        json.dumps({"chat": {"history": {"messages": {}}}, "chat_messages": []}).encode(),
    ],
)
def test_the_sniffer_rejects_json_that_is_not_an_openwebui_export(data: bytes):
    assert not openwebui.sniff(data)


def test_detect_names_openwebui_for_every_openwebui_fixture():
    assert set(formats()) == set(ALL_FORMATS)

    for path in fixtures("openwebui"):
        assert detect(path.read_bytes()) == "openwebui", path.name


def test_parse_export_reads_the_sample_end_to_end():
    data = SAMPLE.read_bytes()
    export = parse_export(data, fmt=detect(data), tz=JAKARTA)

    assert export == parse(SAMPLE)
