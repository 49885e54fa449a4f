"""Codex CLI rollouts: the conversation from response items only, injected context hidden, bad lines survived."""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from datetime import UTC, datetime
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
from transforms.imports import claude_code, codex, detect, formats, parse_export

HERE = FIXTURES / "codex"
SIMONW = HERE / "simonw__claude-code-transcripts__sample_codex_session.jsonl"
ROLLOUT = HERE / "rollout-2026-07-19T23-55-00-0198f1a2-7c3d-7e4f-9a0b-1c2d3e4f5a6b.jsonl"
OLD = HERE / "rollout-2025-05-07T10-14-15-5b1f7c2e-3a4d-4e5f-8a9b-0c1d2e3f4a5b.jsonl"
OTHER_FOLDERS = (
    "aider",
    "chatgpt",
    "claude_ai",
    "claude_code",
    "grok",
    "openai_messages",
    "openwebui",
    "sharegpt",
    "sillytavern",
)


def parse(path: Path):
    return codex.parse(path.read_bytes(), JAKARTA, None)


def test_the_real_sample_keeps_the_prompt_and_hides_the_injected_context():
    export = parse(SIMONW)

    [conv] = export.conversations
    assert conv.conversation_id == "019b64e5-57fa-7463-b644-fba7e456f905"
    assert [(m.role, m.kind, m.hidden) for m in conv.messages] == [
        ("user", "context", True),  # "# AGENTS.md instructions for ..."
        ("user", "context", True),  # <environment_context>
        ("user", "text", False),
    ]
    assert conv.messages[2].content.startswith("can you analyse the MD files")
    assert conv.messages[2].ts == datetime(2025, 12, 28, 12, 21, 44, 491000, tzinfo=UTC)
    assert conv.created == datetime(2025, 12, 28, 12, 18, 30, 522000, tzinfo=UTC)  # session_meta.payload.timestamp
    # the event_msg user_message repeats the prompt: counted, not read twice
    assert export.notes == ("skipped records that hold no conversation or repeat it (event_msg: 1, turn_context: 6)",)


def test_the_copied_sample_matches_its_recorded_sha256():
    sources = (HERE / "SOURCES.md").read_text()
    [digest] = re.findall(rf"## `[^`]*{re.escape(SIMONW.name)}`.*?sha256 `([0-9a-f]{{64}})`", sources, re.DOTALL)
    assert hashlib.sha256(SIMONW.read_bytes()).hexdigest() == digest


def test_every_response_item_type_maps_to_a_role_and_kind_and_event_messages_are_not_doubled():
    export = parse(ROLLOUT)

    [conv] = export.conversations
    assert conv.conversation_id == "0198f1a2-7c3d-7e4f-9a0b-1c2d3e4f5a6b"
    assert conv.title is None
    assert [(m.role, m.kind, m.hidden) for m in conv.messages] == [
        ("system", "context", True),  # developer: permissions instructions
        ("user", "context", True),  # <user_instructions>
        ("user", "context", True),  # <environment_context>
        ("user", "text", False),
        ("assistant", "thinking", True),  # reasoning summary
        ("assistant", "tool_use", False),  # function_call shell
        ("tool", "tool_result", False),
        ("assistant", "tool_use", False),  # custom_tool_call apply_patch
        ("tool", "tool_result", False),
        ("assistant", "tool_use", False),  # local_shell_call
        ("tool", "tool_result", False),  # output as content items
        ("assistant", "tool_use", False),  # web_search_call
        ("assistant", "text", False),
        ("user", "text", False),
        ("assistant", "text", False),
    ]
    visible = [m.content for m in conv.messages if m.kind == "text"]
    assert len(visible) == len(set(visible)) == 4  # agent_message / user_message events add nothing
    assert export.notes == (
        "skipped records that hold no conversation or repeat it "
        "(compacted: 1, event_msg: 7, response_item ghost_snapshot: 1, turn_context: 2)",
    )


def test_tool_calls_read_as_name_and_arguments_and_results_as_written():
    messages = parse(ROLLOUT).conversations[0].messages

    assert messages[4].content == "**Inspecting the backup cron entry**"
    assert messages[5].content == (
        '[tool_use shell] {"command":["bash","-lc","cat /etc/cron.d/backup"],"workdir":"/home/gading/homelab"}'
    )
    assert (messages[5].source_id, messages[6].source_id) == ("call_cron_1", "call_cron_1:output")
    assert messages[6].content.startswith('{"output":"0 2 * * * root')
    assert messages[7].content.startswith("[tool_use apply_patch] *** Begin Patch\n")
    assert messages[9].content.startswith('[tool_use local_shell] {"type": "exec", "command": ["zpool"')
    assert messages[10].content == "scan: scrub in progress since Sun 01:30\n[image]"
    assert messages[11].content == '[tool_use web_search] {"type": "search", "query": "zfs scrub slows backup"}'


def test_a_session_across_jakarta_midnight_becomes_two_day_sessions():
    conv = parse(ROLLOUT).conversations[0]

    days = sessions_by_day(conv, JAKARTA, "codex")
    assert [(d.isoformat(), s.session_id, len(s.messages)) for d, s in days] == [
        ("2026-07-19", "0198f1a2-7c3d-7e4f-9a0b-1c2d3e4f5a6b", 12),  # until 23:59:20 WIB
        ("2026-07-20", "0198f1a2-7c3d-7e4f-9a0b-1c2d3e4f5a6b@2026-07-20", 3),
    ]
    assert Counter(f for _, s in days for m in s.messages for f in m.flags) == Counter({"hidden": 4})


def test_an_old_unenveloped_rollout_is_read_and_undated_items_take_the_session_start():
    export = parse(OLD)

    [conv] = export.conversations
    assert conv.conversation_id == "5b1f7c2e-3a4d-4e5f-8a9b-0c1d2e3f4a5b"
    assert [(m.role, m.kind, m.hidden) for m in conv.messages] == [
        ("user", "context", True),
        ("user", "text", False),
        ("assistant", "thinking", True),
        ("assistant", "tool_use", False),
        ("tool", "tool_result", False),
        ("assistant", "text", False),
    ]
    assert conv.messages[2].content == "[reasoning]"  # encrypted only
    assert {m.ts for m in conv.messages} == {datetime(2025, 5, 7, 3, 14, 15, 926000, tzinfo=UTC)}
    assert export.notes == ("skipped records that hold no conversation or repeat it (record_type state: 3)",)


def test_one_malformed_line_loses_only_that_line_and_a_bad_time_leaves_its_message_undated():
    export = parse(HERE / "malformed_line.jsonl")

    [conv] = export.conversations
    assert [(m.role, m.content) for m in conv.messages] == [
        ("user", "Restart the NAS share."),
        ("assistant", "Done: smbd restarted."),
    ]
    assert conv.messages[1].ts is None
    assert [n.split(":")[0] for n in export.notes] == ["line 3", "line 4", "line 5"]
    assert not any("NAS" in n or "smbd" in n for n in export.notes)


def test_without_a_session_meta_the_id_is_a_hash_of_the_file():
    data = b'{"timestamp":"2026-07-19T01:00:00Z","type":"response_item","payload":{"type":"message","role":"user",'
    data += b'"content":[{"type":"input_text","text":"hi"}]}}\n'
    [conv] = codex.parse(data, JAKARTA, None).conversations

    assert conv.conversation_id == "codex-" + hashlib.sha256(data).hexdigest()[:16]


def test_a_later_session_meta_is_counted_and_the_first_names_the_session():
    def meta(sid: str) -> str:
        return json.dumps({"timestamp": "2026-07-19T01:00:00Z", "type": "session_meta", "payload": {"id": sid}})

    item = json.dumps(
        {
            "timestamp": "2026-07-19T01:00:01Z",
            "type": "response_item",
            "payload": {"type": "message", "role": "user", "content": "hi"},
        }
    )
    data = "\n".join([meta("first-id"), item, meta("second-id"), item]).encode()
    export = codex.parse(data, JAKARTA, None)

    assert export.conversations[0].conversation_id == "first-id"
    assert len(export.conversations[0].messages) == 2
    assert export.notes == ("skipped records that hold no conversation or repeat it (session_meta: 1)",)


@pytest.mark.parametrize(
    ("data", "kind"),
    [
        (b"", "empty"),
        (b" \n\n", "empty"),
        (b"not json\n[1]\n", "bad_json"),
        (b'{"timestamp":"2026-07-19T01:00:00Z","type":"session_meta","payload":{"id":"x"}}\n', "no_messages"),
    ],
)
def test_a_rollout_with_no_conversation_is_a_parse_error(data, kind):
    with pytest.raises(ParseError) as info:
        codex.parse(data, JAKARTA, None)
    assert info.value.kind == kind


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        jsonish(
            [
                "timestamp",
                "type",
                "payload",
                "id",
                "role",
                "content",
                "text",
                "summary",
                "name",
                "arguments",
                "call_id",
                "output",
                "record_type",
                "instructions",
            ]
        ),
        min_size=1,
        max_size=5,
    )
)
def test_any_json_lines_are_read_or_a_parse_error_and_sniffing_never_raises(lines):
    data = "\n".join(json.dumps(line) for line in lines).encode()
    codex.sniff(data)
    try:
        codex.parse(data, JAKARTA, None)
    except ParseError:
        pass


@pytest.mark.parametrize("path", fixtures("codex"), ids=lambda p: p.name[:24])
def test_detect_names_codex_for_every_codex_fixture(path: Path):
    assert set(formats()) == set(ALL_FORMATS)
    assert codex.sniff(path.read_bytes())
    assert not claude_code.sniff(path.read_bytes())
    assert detect(path.read_bytes()) == "codex"


@pytest.mark.parametrize(
    "path", [p for folder in OTHER_FOLDERS for p in fixtures(folder)], ids=lambda p: f"{p.parent.name}/{p.name}"
)
def test_the_sniffer_rejects_every_other_format(path: Path):
    assert not codex.sniff(path.read_bytes())


@pytest.mark.parametrize(
    "data",
    [
        KENANG_MARKDOWN,
        GENERIC_JSONL,
        b'{"timestamp":"2026-07-19T01:00:00Z","role":"user","content":"hi"}\n',
        b'{"timestamp":"2026-07-19T01:00:00Z","type":"event_msg","payload":{"type":"token_count"}}\n',
        b'{"id":"x","timestamp":"2026-07-19T01:00:00Z","title":"not codex"}\n',
        b"",
    ],
)
def test_the_sniffer_rejects_what_is_not_a_rollout(data: bytes):
    assert not codex.sniff(data)


def test_parse_export_reads_a_rollout_end_to_end():
    data = ROLLOUT.read_bytes()
    assert parse_export(data, fmt=detect(data), tz=JAKARTA) == parse(ROLLOUT)
