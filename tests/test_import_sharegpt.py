"""ShareGPT conversations: one object, a list or JSON lines; undated unless the caller dates them."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from datetime import datetime
from pathlib import Path

import pytest
from import_support import (
    ALL_FORMATS,
    FIXTURES,
    GENERIC_JSONL,
    JAKARTA,
    KENANG_MARKDOWN,
    every_format,
    sessions_by_day,
)

from transforms.errors import ParseError
from transforms.imports import aider, claude_code, detect, sharegpt

HERE = FIXTURES / "sharegpt"
SAMPLE = HERE / "axolotl-ai-cloud__axolotl__conversation.json"
JULY_19 = datetime(2026, 7, 19, tzinfo=JAKARTA)

UNDATED_NOTE = "no timestamps; dated by nothing: no default date was given, every message is undated"


def parse(path: Path, default_ts: datetime | None = None):
    return sharegpt.parse(path.read_bytes(), JAKARTA, default_ts)


def test_the_axolotl_sample_is_one_undated_conversation_of_12_turns():
    export = parse(SAMPLE)

    assert export.format == "sharegpt"
    [conv] = export.conversations
    assert Counter(m.role for m in conv.messages) == Counter({"user": 6, "assistant": 6})
    assert [m.role for m in conv.messages] == ["user", "assistant"] * 6
    assert {m.kind for m in conv.messages} == {"text"}
    assert sum(m.hidden for m in conv.messages) == 0
    assert conv.messages[0].ts is None and conv.messages[-1].ts is None
    assert conv.created is None
    assert export.notes == (UNDATED_NOTE,)
    assert conv.messages[0].content.startswith("how could i implement a minesweeper algorithm")


def test_without_an_id_the_conversation_id_is_a_hash_of_its_canonical_json():
    conv = parse(SAMPLE).conversations[0]

    item = json.loads(SAMPLE.read_bytes())
    canonical = json.dumps(item, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    assert conv.conversation_id == "sharegpt-" + hashlib.sha256(canonical.encode()).hexdigest()[:16]
    assert conv.conversation_id == "sharegpt-f19f8cda6780de38"


def test_a_given_default_date_dates_every_message_and_says_so():
    export = parse(SAMPLE, default_ts=JULY_19)

    [conv] = export.conversations
    assert {m.ts for m in conv.messages} == {JULY_19}
    assert conv.created == JULY_19
    assert export.notes == () and export.file_dated == 12
    [(day, session)] = sessions_by_day(conv, JAKARTA, "sharegpt")
    assert day.isoformat() == "2026-07-19" and len(session.messages) == 12


def test_a_naive_default_date_is_read_in_the_configured_zone():
    export = parse(SAMPLE, default_ts=datetime(2026, 7, 19, 9, 0))

    assert export.conversations[0].messages[0].ts == datetime(2026, 7, 19, 9, 0, tzinfo=JAKARTA)


def test_a_single_object_keeps_its_id_and_hides_its_system_prompt():
    export = parse(HERE / "single_object.json")

    [conv] = export.conversations
    assert conv.conversation_id == "sg-boot-order"
    assert [(m.role, m.hidden) for m in conv.messages] == [
        ("system", True),
        ("user", False),
        ("assistant", False),
        ("user", False),
        ("assistant", False),
    ]


def test_a_list_gives_one_conversation_per_item_with_roles_normalised():
    export = parse(HERE / "list.json")

    first, second = export.conversations
    assert first.conversation_id == "42"  # an integer id, as text
    assert [m.role for m in first.messages] == ["user", "assistant"]
    assert second.conversation_id.startswith("sharegpt-") and len(second.conversation_id) == 25
    assert [m.role for m in second.messages] == [
        "user",
        "assistant",
        "user",
        "function_call",
        "observation",
        "assistant",
    ]


def test_json_lines_give_one_conversation_per_line():
    export = parse(HERE / "conversations.jsonl")

    assert [c.conversation_id for c in export.conversations][::2] == ["jl-1", "jl-3"]
    assert [[m.role for m in c.messages] for c in export.conversations] == [
        ["user", "assistant"],
        ["system", "user", "assistant"],
        ["user", "narrator", "assistant"],  # an unknown role is kept, lower-cased
    ]
    assert sum(m.hidden for c in export.conversations for m in c.messages) == 1
    assert export.notes == (UNDATED_NOTE,)


def test_a_bad_json_line_or_turn_is_skipped_with_a_note_naming_it():
    data = b"\n".join(
        [
            b'{"id": "a", "conversations": [{"from": "human", "value": "hi"}, {"value": "no from"}]}',
            b'{"id": "b", "conversations": [{"from": "human", "val',
            b'{"id": "c", "conversations": [{"from": "gpt", "value": null}]}',
        ]
    )
    export = sharegpt.parse(data, JAKARTA, None)

    assert [c.conversation_id for c in export.conversations] == ["a", "c"]
    assert export.conversations[1].messages[0].content == ""
    assert export.notes[1:] == (
        "line 1, turn 1: not a {'from', 'value'} object; skipped",
        "line 2: invalid JSON; line skipped",
    )


def test_an_id_that_cannot_name_a_session_is_hashed_with_a_note():
    item = {"id": "../etc/passwd", "conversations": [{"from": "human", "value": "hi"}]}
    export = sharegpt.parse(json.dumps(item).encode(), JAKARTA, None)

    assert export.conversations[0].conversation_id.startswith("sharegpt-")
    assert export.notes[1] == (
        "the object: its id cannot name a session (too long, or a path or line break); hashed instead"
    )
    assert "passwd" not in export.notes[1]


def test_a_repeated_conversation_gets_a_suffixed_id():
    item = {"conversations": [{"from": "human", "value": "hi"}]}
    export = sharegpt.parse(json.dumps([item, item]).encode(), JAKARTA, None)

    first, second = (c.conversation_id for c in export.conversations)
    assert second == f"{first}-2"


@pytest.mark.parametrize(
    ("data", "kind"),
    [
        (b"", "empty"),
        (b"\xff", "bad_utf8"),
        (b"not json\n", "bad_json"),
        (b"42", "bad_record"),
        (b'{"conversations": []}', "no_messages"),
    ],
)
def test_an_unreadable_file_is_a_parse_error(data, kind):
    with pytest.raises(ParseError) as info:
        sharegpt.parse(data, JAKARTA, None)
    assert info.value.kind == kind


@pytest.mark.parametrize(
    "data",
    [
        pytest.param(
            (FIXTURES / "claude_code" / "simonw__claude-code-transcripts__sample_session.jsonl").read_bytes(),
            id="claude-code",
        ),
        pytest.param((FIXTURES / "aider" / "Aider-AI__aider__chat-history.prefix250k.md").read_bytes(), id="aider"),
        pytest.param(KENANG_MARKDOWN, id="kenang-markdown"),
        pytest.param(GENERIC_JSONL, id="generic-jsonl"),
        pytest.param(b"{}", id="empty-object"),
        pytest.param(b"[]", id="empty-list"),
        pytest.param(
            b'[{"title": "x", "mapping": {}, "conversations": [{"from": "human", "value": "x"}]}]',
            id="chatgpt-like",
        ),
        pytest.param(b'{"conversations": [{"role": "user", "content": "hi"}]}', id="role-content-turns"),
    ],
)
def test_the_sniffer_rejects_what_is_not_sharegpt(data):
    assert sharegpt.sniff(data) is False


@pytest.mark.parametrize(
    "path",
    [SAMPLE, HERE / "single_object.json", HERE / "list.json", HERE / "conversations.jsonl"],
    ids=lambda p: p.name[:20],
)
def test_the_sniffer_and_detect_recognise_sharegpt(path):
    data = path.read_bytes()
    assert sharegpt.sniff(data) is True
    assert claude_code.sniff(data) is False
    assert aider.sniff(data) is False
    assert every_format() == set(ALL_FORMATS)
    assert detect(data) == "sharegpt"
