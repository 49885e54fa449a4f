"""The synthetic corpora: the demo a new user sees, and the benchmark year.

Every demo file must behave as its ``expect`` says when the parser meets it, fall on
the right day in the zone it was made for, and be the same bytes for the same seed.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter
from datetime import date, datetime, time, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.corpus import year_corpus
from flows.cli.demo_corpus import (
    FAKE_GITHUB_TOKEN,
    FAKE_PASSWORD_LINE,
    INJECTION_LINE,
    SyntheticFile,
    demo_corpus,
)
from transforms.days import session_day
from transforms.errors import ParseError
from transforms.parse import parse_transcript
from transforms.redact import redact

JAKARTA = ZoneInfo("Asia/Jakarta")
END = date(2026, 7, 19)
ZONES = [JAKARTA, timezone(timedelta(hours=-5)), ZoneInfo("Europe/Amsterdam")]
BROKEN_KINDS = {"bad_utf8", "bad_json", "no_messages", "unknown_extension"}


def demo(tz=JAKARTA, **kw) -> list[SyntheticFile]:
    return demo_corpus(end_day=kw.pop("end_day", END), tz=tz, **kw)


def user_of(f: SyntheticFile) -> str:
    return f.relpath.split("/")[0] if "/" in f.relpath else "gading"


def file_name(f: SyntheticFile) -> str:
    return f.relpath.rsplit("/", 1)[-1]


def parse(f: SyntheticFile, tz):
    return parse_transcript(file_name(f), f.data, tz=tz)


def day_of(f: SyntheticFile, tz) -> tuple[date, str]:
    session = parse(f, tz)
    return session_day(session.first_ts, file_name(f), f.mtime or 0.0, tz)


def text_of(files: list[SyntheticFile]) -> str:
    return "\n".join(f.data.decode("utf-8", errors="replace") for f in files)


def check_expectations(files: list[SyntheticFile], *, end_day: date, days: int, tz) -> None:
    first = end_day - timedelta(days=days - 1)
    run_at = datetime.combine(end_day + timedelta(days=1), time(2, 30), tzinfo=tz).timestamp()
    for f in files:
        if f.expect == "symlink":
            assert f.symlink_to and f.data == b"" and f.mtime is None, f.relpath
        elif f.expect in BROKEN_KINDS:
            with pytest.raises(ParseError) as info:
                parse(f, tz)
            assert info.value.kind == f.expect, f.relpath
            assert f.mtime is not None and f.mtime < run_at, f.relpath
        else:
            assert f.expect in ("ok", "not_yet"), f.relpath
            day, _ = day_of(f, tz)
            if f.expect == "ok":
                assert first <= day <= end_day, f.relpath
                assert f.mtime is not None and f.mtime < run_at, f.relpath
            elif f.mtime is None:
                assert first <= day <= end_day + timedelta(days=1), f.relpath
            else:
                assert day == end_day + timedelta(days=1), f.relpath
                assert f.mtime < run_at, f.relpath


# --- determinism -------------------------------------------------------------------


def test_the_same_seed_gives_byte_identical_output():
    assert demo(seed=3) == demo(seed=3)
    assert list(year_corpus(start=END, days=2, tz=JAKARTA, seed=5)) == list(
        year_corpus(start=END, days=2, tz=JAKARTA, seed=5)
    )


def test_a_different_seed_gives_a_different_corpus():
    assert demo(seed=3) != demo(seed=4)
    assert list(year_corpus(start=END, days=2, tz=JAKARTA, seed=5)) != list(
        year_corpus(start=END, days=2, tz=JAKARTA, seed=6)
    )


# --- every file behaves as it says ---------------------------------------------------


@pytest.mark.parametrize("tz", ZONES, ids=str)
def test_every_demo_file_parses_or_fails_as_it_expects_and_falls_on_its_day(tz):
    check_expectations(demo(tz), end_day=END, days=21, tz=tz)


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    days=st.integers(1, 30),
    end_day=st.dates(date(2000, 1, 1), date(2090, 12, 31)),
    tz=st.sampled_from([*ZONES, ZoneInfo("America/New_York")]),
)
def test_any_seed_span_and_zone_yields_files_that_behave_as_they_expect(seed, days, end_day, tz):
    files = demo_corpus(end_day=end_day, days=days, tz=tz, seed=seed)
    assert len({f.relpath for f in files}) == len(files)
    check_expectations(files, end_day=end_day, days=days, tz=tz)


def test_there_is_exactly_one_broken_file_per_failure_mode():
    counts = Counter(f.expect for f in demo())
    assert {kind: counts[kind] for kind in BROKEN_KINDS | {"symlink"}} == dict.fromkeys(BROKEN_KINDS | {"symlink"}, 1)


def test_files_of_the_next_day_and_one_still_being_written_are_not_yet_due():
    not_yet = [f for f in demo() if f.expect == "not_yet"]
    assert sum(f.mtime is None for f in not_yet) == 1
    next_day = [f for f in not_yet if f.mtime is not None]
    assert len(next_day) >= 2
    assert all(day_of(f, JAKARTA)[0] == END + timedelta(days=1) for f in next_day)


def test_an_ok_file_was_last_touched_five_minutes_after_its_last_message():
    for f in demo():
        if f.expect == "ok" and (last := parse(f, JAKARTA).last_ts) is not None:
            assert f.mtime == (last + timedelta(minutes=5)).timestamp(), f.relpath


# --- what the demo contains --------------------------------------------------------


def test_both_users_and_both_formats_occur_in_roughly_sixty_forty_proportion():
    ok = [f for f in demo() if f.expect == "ok"]
    assert {user_of(f) for f in ok} == {"gading", "rina"}
    assert {(user_of(f), f.relpath.rsplit(".", 1)[1]) for f in ok} == {
        ("gading", "md"),
        ("gading", "jsonl"),
        ("rina", "md"),
        ("rina", "jsonl"),
    }
    markdown = sum(f.relpath.endswith(".md") for f in ok)
    assert 0.45 <= markdown / len(ok) <= 0.75


def test_some_files_name_their_user_inside():
    sessions = [(f, parse(f, JAKARTA)) for f in demo() if f.expect == "ok"]
    assert any(s.user_id == "gading" and f.relpath.endswith(".md") for f, s in sessions)
    assert any(s.user_id == "rina" and f.relpath.endswith(".jsonl") for f, s in sessions)
    assert all(s.user_id in (None, user_of(f)) for f, s in sessions)


def test_sessions_hold_four_to_sixteen_messages_with_a_few_system_lines_in_jsonl():
    sessions = [parse(f, JAKARTA) for f in demo() if f.expect == "ok"]
    assert all(4 <= len(s.messages) <= 16 for s in sessions)
    roles = Counter(m.role for s in sessions for m in s.messages)
    assert set(roles) == {"user", "assistant", "system"}
    assert all(s.source_format == "jsonl" for s in sessions if s.messages[0].role == "system")


def test_jsonl_files_use_iso_and_epoch_timestamps_and_text_blocks():
    jsonl = text_of([f for f in demo() if f.expect == "ok" and f.relpath.endswith(".jsonl")])
    assert '"timestamp": "20' in jsonl
    assert '"timestamp": 17' in jsonl  # epoch seconds in 2026
    assert '"content": [{"type": "text"' in jsonl


def test_markdown_sessions_carry_a_session_id_and_a_parent_day():
    for f in demo():
        if f.expect == "ok" and f.relpath.endswith(".md"):
            text = f.data.decode()
            assert f"session_id: {file_name(f)[:-3]}\n" in text
            day, user = file_name(f)[:10], f.relpath.split("/")[0] if "/" in f.relpath else ""
            note = f"{day}/{user}/{day}.summary" if user else f"{day}/{day}.summary"
            assert f"Parent Day: [[daily_sessions/{note}|{day}]]" in text  # the day's note, by its path


def test_the_demo_speaks_indonesian_and_english_and_names_people_and_dates():
    text = text_of(demo())
    for word in ("nggak", "gimana", "Kak Rina", "Mas Bayu", "Bu ", "Pak ", "Mbak "):
        assert word in text, word
    for word in ("the", "should", "thanks"):
        assert re.search(rf"\b{word}\b", text, re.IGNORECASE), word
    for relative_words in (
        ("kemarin", "minggu lalu"),
        ("besok", "lusa", "minggu depan"),
        ("yesterday", "last week"),
        ("tomorrow", "next week"),
    ):
        assert any(re.search(rf"\b{w}\b", text, re.IGNORECASE) for w in relative_words), relative_words
    assert re.search(
        r"\b\d{1,2} (Januari|Februari|Maret|April|Mei|Juni|Juli|Agustus|September|"
        r"Oktober|November|Desember) \d{4}\b",
        text,
    )
    assert re.search(
        r"\b\d{1,2} (January|February|March|April|May|June|July|August|September|"
        r"October|November|December) \d{4}\b",
        text,
    )


def test_the_fake_secrets_and_the_injection_line_are_present_and_the_redactor_catches_them():
    text = text_of([f for f in demo() if f.expect == "ok"])
    assert FAKE_PASSWORD_LINE in text
    assert FAKE_GITHUB_TOKEN in text and len(FAKE_GITHUB_TOKEN) == 4 + 36
    assert "-----BEGIN OPENSSH PRIVATE KEY-----" in text
    assert INJECTION_LINE in text
    kinds = {k for f in demo() if f.expect == "ok" for m in parse(f, JAKARTA).messages for k in redact(m.content).kinds}
    assert {"password", "github_token", "private_key"} <= kinds


def test_one_session_crosses_midnight_and_belongs_to_the_day_it_started():
    crossing = []
    for f in demo():
        if f.expect == "ok":
            s = parse(f, JAKARTA)
            if s.first_ts and s.first_ts.date() != s.last_ts.date():
                crossing.append((f, s))
    assert len(crossing) == 1
    f, s = crossing[0]
    assert (s.first_ts.time(), s.last_ts.time()) == (time(23, 40), time(0, 20))
    assert day_of(f, JAKARTA) == (s.first_ts.date(), "timestamp")


def test_one_markdown_session_has_no_timestamps_and_takes_its_day_from_its_file_name():
    untimed = [f for f in demo() if f.expect == "ok" and parse(f, JAKARTA).first_ts is None]
    assert len(untimed) == 1 and untimed[0].relpath.endswith(".md")
    assert day_of(untimed[0], JAKARTA) == (date.fromisoformat(file_name(untimed[0])[:10]), "filename")


def test_some_answers_hold_code_fences_with_a_heading_like_line_inside():
    text = text_of(demo())
    assert "```bash" in text and "```yaml" in text and "```sql" in text
    assert "\n## user · " in text.split("```markdown", 1)[1]  # a header that must stay text


# --- the benchmark year ------------------------------------------------------------


def test_a_small_year_yields_six_parseable_files_of_five_messages_each():
    files = list(year_corpus(start=END, days=3, sessions_per_day=2, messages_per_session=5, tz=JAKARTA))
    assert len(files) == 6 and len({f.relpath for f in files}) == 6
    assert {user_of(f) for f in files} == {"gading", "rina"}
    assert {f.relpath.rsplit(".", 1)[1] for f in files} == {"md", "jsonl"}
    for f in files:
        assert f.expect == "ok" and f.mtime is not None and f.symlink_to is None
        session = parse(f, JAKARTA)
        assert len(session.messages) == 5
        assert END <= day_of(f, JAKARTA)[0] <= END + timedelta(days=2)


def test_year_corpus_is_a_lazy_generator():
    it = year_corpus(start=END, tz=JAKARTA)
    assert iter(it) is it
    assert next(it).relpath.endswith(".md")


# --- purity ------------------------------------------------------------------------


def test_importing_synthetic_loads_no_io_framework():
    code = (
        "import sys, flows.cli.demo_corpus, benchmarks.corpus\n"
        "bad = {'prefect', 'duckdb', 'polars', 'llama_cpp'} & set(sys.modules)\n"
        "assert not bad, bad\n"
    )
    subprocess.run(
        [sys.executable, "-c", code], check=True, cwd=Path(__file__).resolve().parent.parent
    )  # benchmarks/ is not installed
