"""Gemini's Google Takeout MyActivity.json: prompts and answers put back into conversations, other records counted."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime

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
from transforms.imports import detect, formats, gemini, parse_export

SAMPLE = FIXTURES / "gemini" / "MyActivity.json"
JSONISH = jsonish(["header", "title", "time", "products", "safeHtmlItem", "html", "subtitles", "activityControls"])


def parse(data: bytes | None = None):
    return gemini.parse(SAMPLE.read_bytes() if data is None else data, JAKARTA, None)


def record(title: str, time: str, html: str | None = None, header: str = "Gemini Apps") -> dict:
    rec: dict = {"header": header, "title": title, "time": time, "products": [header]}
    if html is not None:
        rec["safeHtmlItem"] = [{"html": html}]
    return rec


def test_the_sample_is_three_conversations_in_time_order_and_counts_what_is_no_prompt():
    export = parse()
    assert [c.conversation_id for c in export.conversations] == [
        "gemini-2026-07-17T13:00:00Z",
        "gemini-2026-07-18T02:05:13Z",
        "gemini-2026-07-19T07:30:02Z",
    ]
    assert export.notes == ("skipped records that hold no Gemini prompt (Created: 1, other products: 1)",)
    roles = [[(m.role, m.kind) for m in c.messages] for c in export.conversations]
    assert roles[1] == [("user", "text"), ("assistant", "text"), ("user", "text"), ("user", "attachment")]
    assert all(m.ts is not None for c in export.conversations for m in c.messages)


def test_an_english_prompt_loses_its_verb_and_its_attachment_line_and_the_answer_is_text():
    conv = parse().conversations[1]
    question, answer, follow_up, attached = (m.content for m in conv.messages)
    assert question.startswith("My backup job to the NAS failed") and not question.startswith("Prompted")
    assert answer == (
        "A few common causes:\n\n- The mount is ro (read-only).\n"
        "- The job runs as a user without write access to /mnt/archive.\n\nCheck with touch /mnt/archive/test."
    )
    assert follow_up == "And what should I check first tomorrow?"
    assert attached == "[1 attached file]"


def test_indonesian_prompts_keep_their_words_and_html_entities_are_decoded():
    conv = parse().conversations[2]
    assert conv.messages[0].content == "Tolong buatkan daftar belanja untuk nasi goreng kampung"
    assert "- Bawang merah & bawang putih\n- Cabai rawit" in conv.messages[1].content
    # an account in Indonesian: a translated header, a title with no English verb, answered: kept whole
    translated = parse().conversations[0]
    assert [m.content for m in translated.messages][0] == "Apa arti 'idempoten' dalam ETL?"


def test_each_conversation_lands_on_its_jakarta_day():
    days = [[d for d, _s in sessions_by_day(c, JAKARTA, "gemini")] for c in parse().conversations]
    assert days == [[date(2026, 7, 17)], [date(2026, 7, 18)], [date(2026, 7, 19)]]


def test_a_pause_longer_than_the_gap_starts_a_new_conversation():
    records = [
        record("Prompted later", "2026-07-19T05:00:00Z", "<p>b</p>"),
        record("Prompted soon after", "2026-07-19T03:29:00Z", "<p>a</p>"),
        record("Prompted first", "2026-07-19T03:00:00Z"),
    ]
    export = parse(json.dumps(records).encode())
    assert [[m.content for m in c.messages] for c in export.conversations] == [
        ["first", "soon after", "a"],
        ["later", "b"],
    ]


def test_a_newer_takeout_that_holds_the_same_prompts_gives_the_same_conversation_ids():
    old = json.loads(SAMPLE.read_text())
    newer = [record("Prompted one more", "2026-07-21T01:00:00Z", "<p>ok</p>"), *old]
    ids = {c.conversation_id for c in parse().conversations}
    assert ids < {c.conversation_id for c in parse(json.dumps(newer).encode()).conversations}


def test_an_unreadable_time_keeps_its_prompt_undated_with_a_note_after_the_rest():
    records = [record("Prompted when?", "yesterday", "<p>x</p>"), record("Prompted hi", "2026-07-19T03:00:00Z")]
    export = parse(json.dumps(records).encode())
    assert export.conversations[-1].conversation_id.startswith("gemini-undated-")
    assert {m.ts for m in export.conversations[-1].messages} == {None}
    assert export.notes == ("item 0: unreadable timestamp; message kept undated",)


@pytest.mark.parametrize(
    ("data", "kind"),
    [
        (b"", "empty"),
        (b'[{"header": "Gemini Apps", "title": "Prompted hi", "time": "2026-07-19T03:00:00Z"', "bad_json"),
        (b'{"header": "Gemini Apps"}', "bad_record"),
        (b"[]", "no_messages"),
        (json.dumps([record("Used Gemini", "2026-07-19T03:00:00Z")]).encode(), "no_messages"),
        (json.dumps([record("Searched for x", "2026-07-19T03:00:00Z", header="Search")]).encode(), "no_messages"),
    ],
)
def test_an_unreadable_takeout_is_a_parse_error(data, kind):
    with pytest.raises(ParseError) as info:
        parse(data)
    assert info.value.kind == kind


@settings(max_examples=300, deadline=None)
@given(JSONISH)
def test_any_json_is_either_read_or_a_parse_error_and_sniffing_never_raises(obj: object):
    data = json.dumps(obj).encode()
    gemini.sniff(data)
    try:
        parse(data)
    except ParseError:
        pass


def test_detect_names_gemini_for_the_sample():
    assert set(formats()) == set(ALL_FORMATS)
    assert detect(SAMPLE.read_bytes()) == "gemini"


@pytest.mark.parametrize(
    "path",
    [p for folder in ALL_FORMATS if folder != "gemini" for p in fixtures(folder)],
    ids=lambda p: f"{p.parent.name}/{p.name}",
)
def test_the_sniffer_rejects_every_other_format(path):
    assert not gemini.sniff(path.read_bytes())


@pytest.mark.parametrize(
    "data",
    [
        b"[]",
        json.dumps([record("Searched for nas", "2026-07-19T03:00:00Z", header="Search")]).encode(),
        json.dumps({"title": "Prompted hi", "time": "2026-07-19T03:00:00Z", "header": "Gemini Apps"}).encode(),
        KENANG_MARKDOWN,
        GENERIC_JSONL,
    ],
)
def test_the_sniffer_rejects_what_is_not_a_gemini_takeout(data: bytes):
    assert not gemini.sniff(data)


def test_parse_export_reads_the_sample_end_to_end():
    data = SAMPLE.read_bytes()
    export = parse_export(data, fmt=detect(data), tz=JAKARTA)
    assert export == parse()
    assert export.conversations[0].created == datetime(2026, 7, 17, 13, tzinfo=UTC)
