"""Grok's prod-grok-backend.json: wrapped responses, Mongo dates, regenerated replies kept as branches."""

from __future__ import annotations

import json
from collections import Counter
from datetime import UTC, datetime
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
from transforms.imports import _json, detect, formats, grok, parse_export

HERE = FIXTURES / "grok"
EXPORT = HERE / "export.json"
BROKEN = ("bad_timestamp.json", "no_sender.json")
OTHER_FOLDERS = (
    "aider",
    "chatgpt",
    "claude_ai",
    "claude_code",
    "codex",
    "openai_messages",
    "openwebui",
    "sharegpt",
    "sillytavern",
)
JSONISH = jsonish(
    [
        "conversations",
        "conversation",
        "responses",
        "response",
        "id",
        "_id",
        "sender",
        "message",
        "create_time",
        "$date",
        "$numberLong",
        "parent_response_id",
        "leaf_response_id",
        "thinking_trace",
        "generated_image_urls",
    ]
)


def parse(path: Path):
    return grok.parse(path.read_bytes(), JAKARTA, None)


def conversation(export, cid: str):
    return next(c for c in export.conversations if c.conversation_id == cid)


def test_the_export_holds_three_conversations_and_counts_what_is_no_conversation():
    export = parse(EXPORT)

    assert export.format == "grok"
    assert [c.conversation_id for c in export.conversations][:2] == [
        "3f1c2a9e-1b7d-4e0a-9c55-0d2b6f8a1e01",
        "8a2d5c31-7e4f-4b1a-a0c9-5f6e7d8c9b02",
    ]
    assert [c.title for c in export.conversations] == ["Proxmox boot order", "Gambar kucing oren", None]
    assert export.notes == ("skipped what holds no conversation (projects: 1)",)
    every = [m for c in export.conversations for m in c.messages]
    assert len(every) == 11
    assert Counter(m.role for m in every) == Counter({"user": 4, "assistant": 7})


def test_a_regenerated_reply_is_an_inactive_branch_and_the_latest_leaf_is_active():
    conv = conversation(parse(EXPORT), "3f1c2a9e-1b7d-4e0a-9c55-0d2b6f8a1e01")

    assert [(m.source_id, m.role, m.kind, m.active, m.hidden) for m in conv.messages] == [
        ("r1", "user", "text", True, False),
        ("r3", "assistant", "text", True, False),
        ("r4", "user", "text", True, False),
        ("r5", "assistant", "text", True, False),  # sender "grok-3", a model name, is the assistant
        ("r2:thinking", "assistant", "thinking", False, True),  # the first reply's thinking, on its branch
        ("r2", "assistant", "text", False, False),  # sender "ASSISTANT"
    ]
    assert conv.created == datetime(2026, 7, 19, 2, 10, tzinfo=UTC)


def test_mongo_dates_in_milliseconds_and_iso_read_as_instants():
    export = parse(EXPORT)
    first = conversation(export, "3f1c2a9e-1b7d-4e0a-9c55-0d2b6f8a1e01").messages[0]
    image_chat = conversation(export, "8a2d5c31-7e4f-4b1a-a0c9-5f6e7d8c9b02").messages[0]

    assert first.ts == datetime(2026, 7, 19, 2, 10, tzinfo=UTC)  # {"$date": {"$numberLong": "1784427000000"}}
    assert image_chat.ts == datetime(2026, 7, 19, 16, 58, tzinfo=UTC)  # {"$date": "2026-07-19T16:58:00.000Z"}


def test_leaf_response_id_picks_the_active_reply_over_the_one_written_last():
    conv = conversation(parse(EXPORT), "8a2d5c31-7e4f-4b1a-a0c9-5f6e7d8c9b02")

    assert [(m.source_id, m.active, m.kind, m.content) for m in conv.messages] == [
        ("q1", True, "text", "Buatkan gambar kucing oren tidur di atas NAS."),
        ("a1", True, "attachment", "[image]\n[image]"),  # an image-only reply
        ("a2", False, "placeholder", "[empty message]"),  # a failed regeneration, written later
    ]


def test_bare_responses_without_parents_are_one_chain_with_a_hashed_id():
    conv = parse(EXPORT).conversations[2]

    assert [(m.source_id, m.role, m.active) for m in conv.messages] == [("b1", "user", True), ("b2", "assistant", True)]
    assert conv.messages[0].content == "Ringkas log ini.\n[attachment]"
    assert conv.messages[1].ts == datetime(2026, 7, 18, 9, 0, 30, tzinfo=UTC)  # a plain epoch-ms number
    item = json.loads(EXPORT.read_bytes())["conversations"][2]
    assert conv.conversation_id == _json.conversation_id(None, item, "x")
    assert len(conv.conversation_id) == 16


def test_a_conversation_across_jakarta_midnight_becomes_two_day_sessions():
    conv = conversation(parse(EXPORT), "8a2d5c31-7e4f-4b1a-a0c9-5f6e7d8c9b02")

    days = sessions_by_day(conv, JAKARTA, "grok")
    assert [(d.isoformat(), s.session_id, len(s.messages)) for d, s in days] == [
        ("2026-07-19", "8a2d5c31-7e4f-4b1a-a0c9-5f6e7d8c9b02", 1),  # 23:58 WIB
        ("2026-07-20", "8a2d5c31-7e4f-4b1a-a0c9-5f6e7d8c9b02@2026-07-20", 2),  # 00:01 and 00:05 WIB
    ]
    assert [m.flags for m in days[1][1].messages] == [(), ("inactive_branch",)]


def test_an_unreadable_date_is_a_bad_timestamp_naming_the_response_not_its_text():
    with pytest.raises(ParseError) as info:
        parse(HERE / "bad_timestamp.json")
    assert info.value.kind == "bad_timestamp"
    assert "response 0 ('x1')" in info.value.reason and "yesterday" in info.value.reason


def test_a_response_without_a_sender_is_a_bad_record_and_its_text_stays_out_of_the_reason():
    with pytest.raises(ParseError) as info:
        parse(HERE / "no_sender.json")
    assert info.value.kind == "bad_record"
    assert "secret" not in info.value.reason and "'y1'" in info.value.reason


@pytest.mark.parametrize(
    ("data", "kind"),
    [
        (b"", "empty"),
        (b"\xff", "bad_utf8"),
        (b'{"conversations": [', "bad_json"),
        (b"[]", "bad_record"),
        (b'{"conversations": []}', "no_messages"),
        (b'{"conversations": [{"responses": []}]}', "bad_record"),
        (b'{"conversations": [{"conversation": {}, "responses": ["text"]}]}', "bad_record"),
    ],
)
def test_an_unreadable_export_is_a_parse_error(data, kind):
    with pytest.raises(ParseError) as info:
        grok.parse(data, JAKARTA, None)
    assert info.value.kind == kind


@settings(max_examples=300, deadline=None)
@given(JSONISH)
def test_any_json_is_either_read_or_a_parse_error_and_sniffing_never_raises(obj: object):
    data = json.dumps(obj).encode()
    grok.sniff(data)
    try:
        grok.parse(data, JAKARTA, None)
    except ParseError:
        pass


@pytest.mark.parametrize("path", fixtures("grok"), ids=lambda p: p.name)
def test_detect_names_grok_for_every_grok_fixture(path: Path):
    assert set(formats()) == set(ALL_FORMATS)
    assert grok.sniff(path.read_bytes())
    assert detect(path.read_bytes()) == "grok"


@pytest.mark.parametrize(
    "path", [p for folder in OTHER_FOLDERS for p in fixtures(folder)], ids=lambda p: f"{p.parent.name}/{p.name}"
)
def test_the_sniffer_rejects_every_other_format(path: Path):
    assert not grok.sniff(path.read_bytes())


@pytest.mark.parametrize(
    "data",
    [
        b"{}",
        b'{"conversations": []}',
        b'{"conversations": [{"conversations": [{"from": "human", "value": "responses"}]}]}',
        b'{"conversations": [{"conversation": {"id": "x"}}], "responses": []}',
        KENANG_MARKDOWN,
        GENERIC_JSONL,
    ],
)
def test_the_sniffer_rejects_what_is_not_a_grok_export(data: bytes):
    assert not grok.sniff(data)


def test_parse_export_reads_the_export_end_to_end():
    data = EXPORT.read_bytes()
    assert parse_export(data, fmt=detect(data), tz=JAKARTA) == parse(EXPORT)
