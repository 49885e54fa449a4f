"""Claude Code session logs: every turn kept, tool traffic and sub-agents marked, bad lines survived."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from datetime import UTC, datetime
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

HERE = FIXTURES / "claude_code"
SIMONW = HERE / "simonw__claude-code-transcripts__sample_session.jsonl"
VIEWER = HERE / "d-kimuson__claude-code-viewer__1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl"
SIMONW_LOGLINES = HERE / "simonw__sample_session.loglines.json"
WEB_LOGLINES = HERE / "web_session.loglines.json"


def parse(path: Path):
    return claude_code.parse(path.read_bytes(), JAKARTA, None)


def kinds(export) -> Counter:
    return Counter((m.role, m.kind) for c in export.conversations for m in c.messages)


def test_the_simonw_sample_is_one_titled_session_with_every_turn():
    export = parse(SIMONW)

    assert export.format == "claude_code"
    assert export.notes == ()
    [conv] = export.conversations
    assert conv.conversation_id == "test-session-id"
    assert conv.title == "Test session for JSONL parsing"  # from the summary record, which is no message
    assert kinds(export) == Counter(
        {
            ("user", "text"): 2,
            ("assistant", "text"): 2,
            ("assistant", "tool_use"): 2,
            ("tool", "tool_result"): 2,
        }
    )
    assert sum(m.hidden for m in conv.messages) == 0
    assert conv.messages[0].ts == datetime(2025, 12, 24, 10, 0, 0, tzinfo=UTC)
    assert conv.messages[-1].ts == datetime(2025, 12, 24, 10, 1, 5, tzinfo=UTC)
    assert conv.created == conv.messages[0].ts
    assert [m.source_id for m in conv.messages] == [
        "msg-001",
        "msg-002:0",
        "msg-002:1",
        "msg-003",
        "msg-004",
        "msg-005",
        "msg-006",
        "msg-007",
    ]


def test_a_tool_use_reads_as_its_name_and_json_input_and_its_result_as_a_tool_message():
    conv = parse(SIMONW).conversations[0]

    bash = conv.messages[4]
    assert (bash.role, bash.kind) == ("assistant", "tool_use")
    assert bash.content == (
        '[tool_use Bash] {"command": "git add . && git commit -m \'Add hello function\'", '
        '"description": "Commit changes"}'
    )
    result = conv.messages[5]
    assert (result.role, result.kind, result.content) == (
        "tool",
        "tool_result",
        "[main abc1234] Add hello function\n 1 file changed",
    )


def test_the_real_viewer_session_keeps_all_29_records_in_file_order():
    export = parse(VIEWER)

    assert export.notes == ()
    [conv] = export.conversations
    assert conv.conversation_id == "1af7fc5e-8455-4414-9ccd-011d40f70b2a"
    assert conv.title is None  # the file has no summary record
    assert len(conv.messages) == 29
    assert kinds(export) == Counter(
        {
            ("user", "text"): 2,
            ("assistant", "text"): 3,
            ("assistant", "tool_use"): 12,
            ("tool", "tool_result"): 12,
        }
    )
    assert [m.content[:15] for m in conv.messages if m.hidden] == ["Please analyze "]  # the isMeta prompt
    assert conv.messages[0].ts == datetime(2025, 9, 3, 0, 47, 19, 293000, tzinfo=UTC)
    assert conv.messages[-1].ts == datetime(2025, 9, 3, 0, 47, 52, 264000, tzinfo=UTC)
    # file order, not time order: one tool result is logged before an earlier-stamped one
    assert [m.source_id for m in conv.messages] == [
        json.loads(line)["uuid"] for line in VIEWER.read_bytes().splitlines()
    ]


def test_the_slash_command_line_keeps_its_text():
    first = parse(VIEWER).conversations[0].messages[0]

    assert (first.role, first.kind, first.hidden) == ("user", "text", False)
    assert "<command-name>/init</command-name>" in first.content


def test_assistant_lines_that_share_a_message_id_are_each_kept_in_order():
    records = [json.loads(line) for line in VIEWER.read_bytes().splitlines()]
    by_id = Counter(r["message"].get("id") for r in records if r["type"] == "assistant")
    assert sorted(by_id.values()) == [1, 1, 1, 2, 2, 3, 5]  # 4 of 7 ids span several lines

    conv = parse(VIEWER).conversations[0]
    split = [r["uuid"] for r in records if r["type"] == "assistant" and by_id[r["message"]["id"]] > 1]
    kept = [m.source_id for m in conv.messages if m.role == "assistant"]
    assert [u for u in kept if u in split] == split


def test_one_malformed_line_loses_only_that_line_and_is_named_in_a_note():
    export = parse(HERE / "malformed_line.jsonl")

    [conv] = export.conversations
    assert [m.source_id for m in conv.messages] == ["u-1", "a-1", "u-2", "a-3", "u-3"]
    assert [(m.role, m.kind) for m in conv.messages] == [
        ("user", "text"),
        ("assistant", "text"),
        ("tool", "tool_result"),
        ("assistant", "text"),
        ("user", "text"),
    ]
    assert len(export.notes) == 1
    assert export.notes[0].startswith("line 3: invalid JSON")


def test_a_bad_line_note_never_carries_the_line_text():
    data = b'{"type":"user","sessionId":"s","message":{"role":"user","content":"ok"}}\n{"secret": "hunter2\n'
    export = claude_code.parse(data, JAKARTA, None)

    assert len(export.conversations[0].messages) == 1
    assert not any("hunter2" in note for note in export.notes)


def test_bad_utf8_and_non_object_lines_are_skipped_with_notes_too():
    good = b'{"type":"user","sessionId":"s","uuid":"u","message":{"role":"user","content":"ok"}}'
    data = b"\n".join([good, b'{"type":"user","message":"\xff"}', b"[1, 2]", good.replace(b'"u"', b'"v"')])
    export = claude_code.parse(data, JAKARTA, None)

    assert [m.source_id for m in export.conversations[0].messages] == ["u", "v"]
    assert [n.split(":")[0] for n in export.notes] == ["line 2", "line 3"]


def test_records_without_a_usable_session_id_share_one_hashed_conversation():
    data = b"\n".join(
        [
            b'{"type":"user","message":{"role":"user","content":"no session id"}}',
            b'{"type":"assistant","sessionId":"a/b","message":{"role":"assistant","content":"bad one"}}',
        ]
    )
    export = claude_code.parse(data, JAKARTA, None)

    [conv] = export.conversations
    assert conv.conversation_id == "claude-code-" + hashlib.sha256(data).hexdigest()[:16]
    assert [m.role for m in conv.messages] == ["user", "assistant"]
    assert export.notes == ("line 2: sessionId cannot name a session; the file's hash id is used",)


def test_an_unreadable_timestamp_keeps_the_message_undated_with_a_note():
    data = b'{"type":"user","sessionId":"s","timestamp":"soon","message":{"role":"user","content":"hi"}}'
    export = claude_code.parse(data, JAKARTA, None)

    assert export.conversations[0].messages[0].ts is None
    assert export.notes == ("line 1: unreadable timestamp; message kept undated",)


def test_a_file_with_no_readable_line_is_a_parse_error():
    with pytest.raises(ParseError) as info:
        parse(HERE / "no_readable_line.jsonl")
    assert info.value.kind == "bad_json"


def test_an_empty_file_is_a_parse_error():
    with pytest.raises(ParseError) as info:
        claude_code.parse(b"\n \n", JAKARTA, None)
    assert info.value.kind == "empty"


def test_sidechain_records_are_kept_shown_and_marked_by_kind():
    export = parse(HERE / "sidechain_meta_thinking.jsonl")

    [conv] = export.conversations
    assert [(m.source_id, m.role, m.kind, m.hidden) for m in conv.messages] == [
        ("u-1", "user", "text", False),
        ("u-2", "user", "text", True),  # isMeta: the expanded /review prompt
        ("a-1", "assistant", "thinking", True),
        ("a-2", "assistant", "tool_use", False),
        ("s-1", "user", "sidechain", False),
        ("s-2", "assistant", "sidechain_tool_use", False),
        ("s-3", "tool", "sidechain_tool_result", False),
        ("s-4", "assistant", "sidechain", False),
        ("u-3", "tool", "tool_result", False),
        ("a-3", "assistant", "text", False),
    ]
    assert conv.messages[6].content == "transforms/parse.py:12: TODO"  # a list-shaped tool_result
    assert export.notes == ("skipped records that hold no conversation (file-history-snapshot: 1)",)


def test_a_long_tool_input_is_cut_to_a_sane_length():
    conv = parse(HERE / "sidechain_meta_thinking.jsonl").conversations[0]

    long_call = conv.messages[5].content
    assert long_call.startswith('[tool_use Bash] {"command": "echo xxx')
    assert len(long_call) == len("[tool_use Bash] ") + claude_code.TOOL_INPUT_LIMIT + 1
    assert long_call.endswith("…")


def test_sessions_are_grouped_by_session_id_and_a_summary_titles_the_one_holding_its_leaf():
    export = parse(HERE / "two_sessions_summary.jsonl")

    first, second = export.conversations
    assert (first.conversation_id, first.title, len(first.messages)) == (
        "7c0f2e1a-5b6d-4c3e-9f10-2a4b6c8d0e12",
        None,
        2,
    )
    assert (second.conversation_id, second.title, len(second.messages)) == (
        "9d1e3f5a-7b9c-4d2e-8f01-3a5b7c9d1e23",
        "Fixing the boot order",
        2,
    )
    assert not any(m.content == "Fixing the boot order" for c in export.conversations for m in c.messages)


def test_sessions_by_day_cuts_at_local_midnight():
    conv = parse(HERE / "two_sessions_summary.jsonl").conversations[0]

    # 23:50Z is 06:50 the next morning in Jakarta
    [(day, session)] = sessions_by_day(conv, JAKARTA, "claude_code")
    assert day.isoformat() == "2026-07-19"
    assert [m.role for m in session.messages] == ["user", "assistant"]


@pytest.mark.parametrize(
    "data",
    [
        pytest.param((FIXTURES / "aider" / "Aider-AI__aider__chat-history.prefix250k.md").read_bytes(), id="aider"),
        pytest.param(
            (FIXTURES / "sharegpt" / "axolotl-ai-cloud__axolotl__conversation.json").read_bytes(),
            id="sharegpt",
        ),
        pytest.param((FIXTURES / "sharegpt" / "conversations.jsonl").read_bytes(), id="sharegpt-jsonl"),
        pytest.param(KENANG_MARKDOWN, id="kenang-markdown"),
        pytest.param(GENERIC_JSONL, id="generic-jsonl"),
        pytest.param(
            (Path(__file__).parent / "fixtures" / "good" / "2026-07-20-chat.jsonl").read_bytes(),
            id="kenang-jsonl",
        ),
        pytest.param(b"{}", id="empty-object"),
        pytest.param(b"[]", id="empty-list"),
        pytest.param(b"", id="empty"),
        pytest.param(b"\xff\xfe\x00", id="binary"),
    ],
)
def test_the_sniffer_rejects_what_is_not_a_claude_code_log(data):
    assert claude_code.sniff(data) is False


# --- the same records as one JSON object: {"loglines": [...]} ---------------------------------------------


def test_a_loglines_json_gives_exactly_the_messages_of_its_jsonl_session():
    from_json = parse(SIMONW_LOGLINES)
    from_jsonl = parse(SIMONW)

    assert from_json == from_jsonl  # same conversation id, title, messages, notes
    assert len(from_json.conversations[0].messages) == 8


def test_the_loglines_fixture_holds_the_jsonl_records_unchanged():
    records = [json.loads(line) for line in SIMONW.read_bytes().splitlines()]
    assert json.loads(SIMONW_LOGLINES.read_bytes()) == {"loglines": records}


def test_a_web_session_without_session_ids_is_one_hashed_conversation_with_every_turn():
    export = parse(WEB_LOGLINES)

    [conv] = export.conversations
    assert conv.conversation_id == "claude-code-" + hashlib.sha256(WEB_LOGLINES.read_bytes()).hexdigest()[:16]
    assert [(m.source_id, m.role, m.kind, m.hidden) for m in conv.messages] == [
        ("w-1", "user", "text", False),
        ("w-2:0", "assistant", "thinking", True),
        ("w-2:1", "assistant", "text", False),
        ("w-3", "system", "system", True),
        ("w-4", "user", "text", False),
        ("w-5", "assistant", "text", False),
    ]
    assert export.notes == (
        "loglines item 2: not a JSON object; skipped",
        "skipped records that hold no conversation (file-history-snapshot: 1)",
    )


def test_a_loglines_session_is_cut_into_day_sessions_like_any_other():
    conv = parse(WEB_LOGLINES).conversations[0]

    days = sessions_by_day(conv, JAKARTA, "claude_code")  # 23:59:30 WIB, then past midnight
    assert [(d.isoformat(), len(s.messages)) for d, s in days] == [("2026-07-19", 3), ("2026-07-20", 3)]


@pytest.mark.parametrize(
    ("data", "kind"),
    [
        (b'{"loglines": []}', "no_messages"),
        (b'{"loglines": ["a", 1, null]}', "no_messages"),
    ],
)
def test_a_loglines_object_without_records_is_a_parse_error(data, kind):
    with pytest.raises(ParseError) as info:
        claude_code.parse(data, JAKARTA, None)
    assert info.value.kind == kind


@pytest.mark.parametrize(
    "data",
    [
        b'{"loglines": []}',
        b'{"loglines": [{"line": "octoprint log", "stream": "stdout"}]}',
        b'{"loglines": "not a list", "type": "user", "message": {}}',
        b'{"loglines": [{"type": "user", "message": {"content": "hi"}}',  # cut off
    ],
)
def test_the_sniffer_rejects_loglines_that_hold_no_claude_code_record(data):
    assert claude_code.sniff(data) is False


@pytest.mark.parametrize(
    "path", [SIMONW, VIEWER, HERE / "malformed_line.jsonl", SIMONW_LOGLINES, WEB_LOGLINES], ids=lambda p: p.name[:20]
)
def test_the_sniffer_and_detect_recognise_claude_code_logs(path):
    assert claude_code.sniff(path.read_bytes()) is True
    assert aider.sniff(path.read_bytes()) is False
    assert sharegpt.sniff(path.read_bytes()) is False
    assert every_format() == set(ALL_FORMATS)
    assert detect(path.read_bytes()) == "claude_code"
