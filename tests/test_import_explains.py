"""`kenang import` explains itself: where broken JSON breaks, which lines it could not read, what date undated
messages took, and every format it reads; Gemini's Takeout imports end to end."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
from collections import Counter
from pathlib import Path

import pytest
from helpers import JAKARTA, NOW, drop, kenang, table

from flows.pipeline import nightly
from transforms.imports import FORMATS

pytestmark = pytest.mark.usefixtures("prefect_api")

FIX = Path(__file__).parent / "fixtures" / "imports"
CLAUDE_CODE = FIX / "claude_code" / "simonw__claude-code-transcripts__sample_session.jsonl"  # 8 lines, 8 messages
GEMINI = FIX / "gemini" / "MyActivity.json"


def args(home, *more: str) -> list[str]:
    return ["import", "--home", str(home.paths.home), "--user", "gading", "--now", NOW.isoformat(), *more]


def said(stderr: str, path: Path) -> list[str]:
    """What the import said of one file on stderr (its skip reason, or its report lines)."""
    return [line for line in stderr.splitlines() if f"{path}: " in line]


def at_noon(path: Path, day: dt.date) -> None:
    t = dt.datetime.combine(day, dt.time(12), tzinfo=JAKARTA).timestamp()
    os.utime(path, (t, t))


def test_a_truncated_json_export_is_skipped_with_the_line_and_column_where_it_breaks_as_the_nightly_says(
    home, tmp_path
):
    whole = (FIX / "chatgpt" / "two_days.json").read_bytes()
    cut = whole[: len(whole) // 2]
    with pytest.raises(json.JSONDecodeError) as broken:
        json.loads(cut)
    where = f"broken JSON at line {broken.value.lineno}, column {broken.value.colno}"
    f = tmp_path / "conversations.json"
    f.write_bytes(cut)
    for dry in (["--dry-run"], []):
        r = kenang(*args(home, *dry, str(f)))
        assert r.exit_code == 2
        [line] = said(r.stderr, f)
        assert line == f"skipped {f}: {where}; the file may be cut short: download or export it again"
        assert "not an export kenang can import" not in r.stderr
    assert table(home, "messages") == []
    drop(home, "gading/conversations.json", cut)  # the nightly run quarantines the same bytes with the same words
    res = nightly(now=NOW, home=str(home.paths.home))
    [(_file, kind, reason)] = res["quarantine"]["items"]
    assert kind == "bad_json" and reason == where


def test_a_missing_path_or_a_folder_is_skipped_with_why_and_the_other_files_are_imported(home, tmp_path):
    missing, folder = tmp_path / "no-such.json", tmp_path / "exports"
    folder.mkdir()
    for dry in (["--dry-run"], []):
        r = kenang(*args(home, *dry, str(missing), str(CLAUDE_CODE), str(folder)))
        assert r.exit_code == 4, r.stderr  # partial: the good file goes on
        assert said(r.stderr, missing) == [f"skipped {missing}: does not exist (check the path)"]
        assert said(r.stderr, folder) == [
            f"skipped {folder}: a folder, not a file; nothing read (kenang imports regular files only)"
        ]
    assert len(table(home, "messages")) == 8
    r = kenang(*args(home, str(missing)))
    assert r.exit_code == 2 and "nothing imported" in r.stderr


def test_a_jsonl_export_cut_short_imports_every_line_it_can_and_says_which_it_could_not_read(home, tmp_path):
    cut = tmp_path / "session.jsonl"  # a Claude Code log whose last line was cut mid-write
    cut.write_bytes(CLAUDE_CODE.read_bytes() + b'{"type":"user","message":{"role":"user","content":"and th')
    pirate = (FIX / "openai_messages" / "CameronVetter__FineTuning-A-Pirate__training_set.jsonl").read_bytes()
    lines = pirate.splitlines(keepends=True)
    split = "Apa kabar, kapten? 🏴‍☠️".encode()
    garbled = tmp_path / "training.jsonl"  # two unreadable lines: one not JSON, one cut inside a character
    garbled.write_bytes(b"".join(lines[:5]) + b"not json\n" + b"".join(lines[5:]) + b'{"messages": "' + split[:-2])
    r = kenang(*args(home, "--date", "2026-07-01", "--json", str(cut), str(garbled)))
    assert r.exit_code == 0, r.stderr
    assert [f["unreadable_lines"] for f in json.loads(r.stdout)["import_files"]] == [[9], [6, 12]]
    assert said(r.stderr, cut) == [f"  {cut}: 1 line could not be read and was skipped (line 9); the rest is imported"]
    assert f"  {garbled}: 2 lines could not be read and were skipped (lines 6, 12); the rest is imported" in r.stderr
    rows = table(home, "messages")
    by_session = Counter(r["session_id"].split("@")[0] for r in rows)
    assert sum(by_session.values()) == 8 + 30  # every message of every readable line
    assert len(rows) == len({r["message_id"] for r in rows})


def test_an_aider_log_that_starts_mid_session_is_not_held_back_and_the_report_says_what_date_its_head_took(
    home, tmp_path
):
    log = tmp_path / ".aider.chat.history.md"
    log.write_text(
        "#### and the tests?\n\nThey pass now.\n\n"  # the head of a session begun before the log was kept
        "# aider chat started at 2026-07-18 09:00:00\n\n#### add a --date flag\n\nDone.\n\n> Applied edit to cli.py\n"
    )
    at_noon(log, NOW.date())  # copied today: its own date is not eligible yet
    r = kenang(*args(home, "--dry-run", str(log)))
    assert r.exit_code == 0
    assert "  2 messages without a time took 2026-07-18: the nearest dated conversation in the file" in r.stdout
    r = kenang(*args(home, str(log)))
    assert r.exit_code == 0, r.stderr
    assert f"  {log}: 2 messages without a time took 2026-07-18: the nearest dated conversation in the file" in (
        r.stderr
    )
    rows = table(home, "messages")
    assert len(rows) == 5 and {row["date"] for row in rows} == {dt.date(2026, 7, 18)}
    assert not any(home.paths.active.rglob("*.md"))  # nothing waits for tomorrow


def test_a_sharegpt_file_without_date_takes_its_modification_time_and_the_report_says_so(home, tmp_path):
    f = tmp_path / "sharegpt.json"
    f.write_bytes((FIX / "sharegpt" / "list.json").read_bytes())
    at_noon(f, dt.date(2026, 7, 10))
    r = kenang(*args(home, "--dry-run", "--json", str(f)))
    assert json.loads(r.stdout)["files"][0]["undated"] == [{"messages": 8, "day": "2026-07-10", "by": "mtime"}]
    r = kenang(*args(home, "--dry-run", "--date", "2026-07-01", str(f)))
    assert "  8 messages without a time took 2026-07-01: the date given with --date" in r.stdout
    r = kenang(*args(home, str(f)))
    assert r.exit_code == 0, r.stderr
    assert said(r.stderr, f) == [
        f"  {f}: 8 messages without a time took 2026-07-10: the file's modification time "
        "(give --date YYYY-MM-DD to choose the day)"
    ]
    assert {row["date"] for row in table(home, "messages")} == {dt.date(2026, 7, 10)}


def test_a_gemini_takeout_imports_every_prompt_and_answer_on_its_day_and_again_adds_nothing(home):
    r = kenang(*args(home, str(GEMINI)))
    assert r.exit_code == 0, r.stderr
    assert f"copied {GEMINI} (gemini)" in r.stderr
    rows = table(home, "messages")
    assert Counter(row["role"] for row in rows) == {"user": 6, "assistant": 4}
    assert Counter(row["date"] for row in rows) == {
        dt.date(2026, 7, 17): 2,
        dt.date(2026, 7, 18): 4,
        dt.date(2026, 7, 19): 4,
    }
    assert any(row["content"].startswith("Tolong buatkan daftar belanja") for row in rows)
    again = kenang(*args(home, "--dry-run", str(GEMINI)))
    assert "10 messages, 0 new" in again.stdout
    assert "note: skipped records that hold no Gemini prompt (Created: 1, other products: 1)" in again.stdout


def test_import_help_lists_every_format_the_registry_holds():
    r = kenang("import", "--help")
    text = re.sub(r"\s+", " ", r.stdout)
    assert len(FORMATS) == 11
    for f in FORMATS:
        assert f.label in text, f.name
    assert "Gemini (Google Takeout)" in text and "{formats}" not in text


def test_an_undated_conversation_takes_the_nearest_dated_one_before_it_else_after_else_the_file_date():
    from transforms.imports import Conversation, ImportedMessage, undated_days

    def conv(*days: int | None) -> Conversation:
        msgs = [ImportedMessage("user", "x", dt.datetime(2026, 7, d, 9, tzinfo=JAKARTA) if d else None) for d in days]
        return Conversation("c", None, tuple(msgs))

    file_day = dt.date(2026, 7, 30)
    convs = (conv(None), conv(3, 5), conv(None, None), conv(8), conv(None))
    assert [(d.day, by) for d, by in undated_days(convs, JAKARTA, file_day)] == [
        (3, "neighbour"),  # nothing before it: the first dated conversation after
        (3, "conversation"),
        (5, "neighbour"),  # the last day of the one before
        (8, "conversation"),
        (8, "neighbour"),
    ]
    assert undated_days((conv(None),), JAKARTA, file_day) == [(file_day, "file")]
