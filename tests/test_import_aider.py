"""aider chat histories: one conversation per session, every input and output line kept."""

from __future__ import annotations

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

HERE = FIXTURES / "aider"
SAMPLE = HERE / "Aider-AI__aider__chat-history.prefix250k.md"
EDGES = HERE / "two_headers_headerless_start.aider.chat.history.md"


def parse(path: Path):
    return aider.parse(path.read_bytes(), JAKARTA, None)


def sample_lines() -> list[str]:
    return SAMPLE.read_text(encoding="utf-8").split("\n")


def test_the_real_history_has_62_headed_sessions_and_one_headerless_start():
    export = parse(SAMPLE)

    assert export.format == "aider"
    headers = [line for line in sample_lines() if line.startswith("# aider chat started at ")]
    assert len(headers) == 62
    assert len(export.conversations) == 63
    headless, *headed = export.conversations
    assert headless.created is None and all(m.ts is None for m in headless.messages)
    assert headless.conversation_id.startswith("aider-") and len(headless.conversation_id) == len("aider-") + 16
    assert [c.conversation_id for c in headed] == [
        "aider-" + h.removeprefix("# aider chat started at ").replace(" ", "T") for h in headers
    ]
    assert export.notes == ("the file starts mid-session: its first conversation has no start time",)


def test_the_real_history_counts_are_exact():
    export = parse(SAMPLE)
    messages = [m for c in export.conversations for m in c.messages]

    assert Counter((m.role, m.kind) for m in messages) == Counter(
        {("user", "text"): 111, ("assistant", "text"): 70, ("tool", "tool_output"): 157}
    )
    assert sum(m.hidden for m in messages) == 0
    assert sum(1 for c in export.conversations if not c.messages) == 15  # a header and nothing after it
    dated = [m.ts for m in messages if m.ts is not None]
    assert dated[0] == datetime(2024, 8, 5, 19, 33, 2, tzinfo=JAKARTA)
    assert dated[-1] == datetime(2024, 8, 6, 14, 10, 41, tzinfo=JAKARTA)
    assert len(export.conversations[0].messages) == 3  # tool output, a lint-fix request, ^C


def test_all_226_user_input_lines_are_in_the_111_user_messages_in_order():
    groups: list[list[str]] = []
    previous = False
    for line in sample_lines():
        is_user = line.startswith("#### ")
        if is_user and not previous:
            groups.append([])
        if is_user:
            groups[-1].append(line[5:].rstrip())
        previous = is_user
    assert sum(len(g) for g in groups) == 226
    assert len(groups) == 111  # consecutive "#### " lines are one message

    users = [m for c in parse(SAMPLE).conversations for m in c.messages if m.role == "user"]
    assert [m.content for m in users] == ["\n".join(g).strip("\n") for g in groups]


def test_no_line_of_the_real_history_is_lost():
    lines = sample_lines()
    expected = []
    for line in lines[1:]:  # line 1 is the emacs modeline
        if line.startswith("# aider chat started at "):
            continue
        text = line[5:] if line.startswith("#### ") else line.removeprefix("> ")
        if text.rstrip():
            expected.append(text.rstrip())

    export = parse(SAMPLE)
    got = [line for c in export.conversations for m in c.messages for line in m.content.split("\n") if line]
    assert got == expected
    outputs = [m for c in export.conversations for m in c.messages if m.kind == "tool_output"]
    output_lines = [line[2:].rstrip() for line in lines if line.startswith("> ")]
    assert len(output_lines) == 1694
    assert [line for m in outputs for line in m.content.split("\n") if line] == [x for x in output_lines if x]


def test_trailing_whitespace_is_stripped_from_every_line():
    export = parse(SAMPLE)

    assert not any(
        line != line.rstrip() for c in export.conversations for m in c.messages for line in m.content.split("\n")
    )


def test_the_edge_file_splits_a_headerless_start_and_two_sessions():
    export = parse(EDGES)

    headless, evening, night = export.conversations
    assert [(m.role, m.kind, m.content) for m in headless.messages] == [
        ("tool", "tool_output", "Tokens: 1.2k sent, 80 received."),
        ("user", "text", "why does the nightly run skip Sundays?"),
        ("assistant", "text", "Because `schedule.py` uses `weekday < 6`."),
    ]
    assert all(m.ts is None for m in headless.messages)

    assert evening.conversation_id == "aider-2026-07-19T23:30:05"
    assert evening.created == datetime(2026, 7, 19, 23, 30, 5, tzinfo=JAKARTA)
    assert [(m.role, m.kind) for m in evening.messages] == [
        ("tool", "tool_output"),
        ("user", "text"),
        ("assistant", "text"),
        ("tool", "tool_output"),
        ("user", "text"),
        ("user", "text"),
    ]
    assert evening.messages[0].content == (
        "/home/gading/.venv/bin/aider flows/nightly.py\nAider v0.47.2-dev\n\nAdded flows/nightly.py to the chat."
    )
    assert evening.messages[1].content == "run it at 02:00 local\nand keep the retries"
    assert evening.messages[2].content.endswith('CRON = "0 2 * * *"\n>>>>>>> REPLACE\n```')
    assert [m.content for m in evening.messages[4:]] == ["/undo", "thanks"]  # a blank line parts them
    assert {m.ts for m in evening.messages} == {evening.created}

    assert night.conversation_id == "aider-2026-07-20T00:10:00"
    assert [m.role for m in night.messages] == ["tool", "user", "assistant"]


def test_a_session_lands_on_the_day_it_started():
    evening = parse(EDGES).conversations[1]

    [(day, session)] = sessions_by_day(evening, JAKARTA, "aider")
    assert day.isoformat() == "2026-07-19"
    assert len(session.messages) == 6


def test_a_file_that_starts_with_a_header_has_no_headerless_note():
    data = b"# aider chat started at 2026-07-19 08:00:00\n\n#### hi  \n\nHello.  \n"
    export = aider.parse(data, JAKARTA, None)

    [conv] = export.conversations
    assert export.notes == ()
    assert [(m.role, m.content) for m in conv.messages] == [("user", "hi"), ("assistant", "Hello.")]


def test_an_unreadable_start_time_keeps_the_session_undated_with_a_note():
    data = b"# aider chat started at yesterday-ish\n\n#### hi\n"
    export = aider.parse(data, JAKARTA, None)

    [conv] = export.conversations
    assert conv.messages[0].ts is None
    assert export.notes == ("line 1: unreadable session start time; session kept undated",)


def test_a_repeated_start_time_gets_a_suffixed_id():
    data = b"# aider chat started at 2026-07-19 08:00:00\n#### a\n# aider chat started at 2026-07-19 08:00:00\n#### b\n"

    ids = [c.conversation_id for c in aider.parse(data, JAKARTA, None).conversations]
    assert ids == ["aider-2026-07-19T08:00:00", "aider-2026-07-19T08:00:00-2"]


@pytest.mark.parametrize(("data", "kind"), [(b"  \n", "empty"), (b"\xff\n", "bad_utf8")])
def test_an_unreadable_file_is_a_parse_error(data, kind):
    with pytest.raises(ParseError) as info:
        aider.parse(data, JAKARTA, None)
    assert info.value.kind == kind


@pytest.mark.parametrize(
    "data",
    [
        pytest.param(
            (FIXTURES / "claude_code" / "simonw__claude-code-transcripts__sample_session.jsonl").read_bytes(),
            id="claude-code",
        ),
        pytest.param(
            (
                FIXTURES / "claude_code" / "d-kimuson__claude-code-viewer__1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl"
            ).read_bytes(),
            id="claude-code-real",
        ),
        pytest.param(
            (FIXTURES / "sharegpt" / "axolotl-ai-cloud__axolotl__conversation.json").read_bytes(),
            id="sharegpt",
        ),
        pytest.param(KENANG_MARKDOWN, id="kenang-markdown"),
        pytest.param(
            (Path(__file__).parent / "fixtures" / "good" / "2026-07-19-homelab.md").read_bytes(),
            id="kenang-md-file",
        ),
        pytest.param(GENERIC_JSONL, id="generic-jsonl"),
        pytest.param(b"{}", id="empty-object"),
        pytest.param(b"[]", id="empty-list"),
        pytest.param(b"#### a user line, but no session header anywhere\n", id="no-header"),
        pytest.param(
            KENANG_MARKDOWN + b"\n## assistant \xc2\xb7 2026-07-19T10:38:00+07:00\n"
            b"# aider chat started at 2026-07-19 10:00:00\n#### quoted from an aider log\n",
            id="kenang-markdown-quoting-aider",
        ),
    ],
)
def test_the_sniffer_rejects_what_is_not_an_aider_history(data):
    assert aider.sniff(data) is False


@pytest.mark.parametrize("path", [SAMPLE, EDGES], ids=lambda p: p.name[:20])
def test_the_sniffer_and_detect_recognise_aider_histories(path):
    data = path.read_bytes()
    assert aider.sniff(data) is True
    assert claude_code.sniff(data) is False
    assert sharegpt.sniff(data) is False
    assert every_format() == set(ALL_FORMATS)
    assert detect(data) == "aider"
