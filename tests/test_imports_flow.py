"""Exports through the nightly flow: exact counts, archived once, re-import no-op, overlap adds only new."""

from __future__ import annotations

import copy
import datetime as dt
import hashlib
import json
import os
import stat
from collections import Counter
from pathlib import Path

import pytest
from helpers import NOW, drop, fifo_that_answers, fifo_that_cannot_hang, kenang, table

from flows.pipeline import nightly

pytestmark = pytest.mark.usefixtures("prefect_api")

FIX = Path(__file__).parent / "fixtures" / "imports"
SAMPLES = {  # file -> messages it holds (every one kept), by role
    "chatgpt/mitkury__chatgpt-export-parser__example-conversation.json": {"user": 3, "assistant": 2},
    "chatgpt/yetanotherchris__openwebui-importer__gpt_example.json": {"system": 1, "user": 5, "assistant": 5},
    "claude_ai/yetanotherchris__openwebui-importer__claude_example.json": {"user": 283, "assistant": 274},
    "openwebui/yetanotherchris__openwebui-importer__webui-json.json": {"user": 1, "assistant": 1},
    "claude_code/simonw__claude-code-transcripts__sample_session.jsonl": {"user": 2, "assistant": 4, "tool": 2},
    "claude_code/d-kimuson__claude-code-viewer__1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl": {
        "user": 2,
        "assistant": 15,
        "tool": 12,
    },
    "aider/Aider-AI__aider__chat-history.prefix250k.md": {"user": 111, "assistant": 70, "tool": 157},
    "sharegpt/axolotl-ai-cloud__axolotl__conversation.json": {"user": 6, "assistant": 6},
    "openai_messages/CameronVetter__FineTuning-A-Pirate__training_set.jsonl": {
        "system": 10,
        "user": 10,
        "assistant": 10,
    },
    "codex/simonw__claude-code-transcripts__sample_codex_session.jsonl": {"user": 3},
    "claude_code/simonw__sample_session.loglines.json": {"user": 2, "assistant": 4, "tool": 2},
    "sillytavern/swipes_reasoning.jsonl": {"user": 3, "assistant": 7, "system": 2},
}


def night(home, now=NOW):
    return nightly(now=now, home=str(home.paths.home))


def put(home, rel: str, data: bytes | None = None, user: str = "gading") -> Path:
    src = FIX / rel
    return drop(home, f"{user}/{src.name.lstrip('.')}", data if data is not None else src.read_bytes())


@pytest.mark.parametrize("sample", list(SAMPLES), ids=[s.split("/")[0] for s in SAMPLES])
def test_every_message_of_every_sample_export_is_loaded(home, sample):
    put(home, sample)
    res = night(home)
    assert res["ingest"]["exports"] == 1 and res["ingest"]["rejected"] == 0
    rows = [r for r in table(home, "messages") if r["user_id"] == "gading"]
    assert Counter(r["role"] for r in rows) == Counter(SAMPLES[sample])
    # the original is archived once, byte-exact and read-only, and left active/
    original = home.paths.archive / "imports" / "gading" / (FIX / sample).name.lstrip(".")
    assert original.read_bytes() == (FIX / sample).read_bytes()
    assert stat.S_IMODE(original.stat().st_mode) == 0o444
    assert not any(home.paths.active.rglob("*.*"))
    # every day transcript records where it came from
    files = [r for r in table(home, "archive_files") if r["user_id"] == "gading"]
    assert files and all(r["original_path"] == f"imports/gading/{original.name}" for r in files)


def test_verify_re_hashes_each_archived_export_and_finds_one_changed_or_gone(home):
    from flows.store.verify import verify

    put(home, "chatgpt/edited_branch.json")
    put(home, "chatgpt/two_days.json", user="rina")
    night(home)
    exports = {
        "imports/gading/edited_branch.json": home.paths.archive / "imports" / "gading" / "edited_branch.json",
        "imports/rina/two_days.json": home.paths.archive / "imports" / "rina" / "two_days.json",
    }
    manifest = home.paths.archive / "imports" / "gading" / ".kenang-files.json"
    assert stat.S_IMODE(manifest.stat().st_mode) == 0o444
    assert (
        json.loads(manifest.read_text())["files"]["edited_branch.json"]["sha256"]
        == hashlib.sha256(exports["imports/gading/edited_branch.json"].read_bytes()).hexdigest()
    )
    clean = verify(home)
    assert clean.problems == 0 and clean.exports_unchecked == ()
    # changed behind kenang's back, and made read-only again: caught
    f = exports["imports/gading/edited_branch.json"]
    f.chmod(0o644)
    with f.open("ab") as out:
        out.write(b"\n")
    f.chmod(0o444)
    gone = exports["imports/rina/two_days.json"]
    gone.chmod(0o644)
    gone.unlink()
    v = verify(home)
    assert v.changed == ("imports/gading/edited_branch.json",) and v.missing == ("imports/rina/two_days.json",)
    assert v.problems == 2 and v.ok == clean.ok - 2
    r = kenang("verify", "--home", str(home.paths.home))
    assert r.exit_code != 0 and "imports/gading/edited_branch.json" in r.stdout
    # the manifest deleted: the warehouse's record still checks the export; the manifest's loss is a note
    manifest.chmod(0o644)
    manifest.unlink()
    v = verify(home)
    assert v.changed == ("imports/gading/edited_branch.json",) and v.exports_unchecked == ()
    assert v.exports_manifests == () and v.exports_manifests_absent == ("imports/gading/.kenang-files.json",)
    assert v.problems == 2
    # a manifest kenang cannot read, or naming what is no file of its folder, is a problem, never a traceback,
    # and the next import into the folder does not write over it
    manifest.write_text('{"kenang_manifest": 1, "files": {"/etc/passwd": {"sha256": "00"}}}')
    v = verify(home)
    assert v.exports_manifests == ("imports/gading/.kenang-files.json",)
    put(home, "chatgpt/single_object.json")
    night(home)
    assert "passwd" in manifest.read_text()
    # deleted, the next import writes back what the warehouse recorded of the folder
    manifest.unlink()
    put(home, "chatgpt/content_types.json")
    night(home)
    assert set(json.loads(manifest.read_text())["files"]) == {
        "edited_branch.json",
        "single_object.json",
        "content_types.json",
    }
    assert verify(home).exports_manifests == ()
    # the warehouse's record unreadable or holding a path that is no export's: a problem, never written over
    record = home.paths.warehouse / "_exports.json"
    kept = record.read_bytes()
    for bad in ("{garbage", '{"exports": {"/etc/passwd": {"sha256": "00"}, "": {"sha256": "00"}}}'):
        record.write_text(bad)
        assert verify(home).exports_manifests == ("warehouse/_exports.json",)
        put(home, "chatgpt/mitkury__chatgpt-export-parser__example-conversation.json")
        night(home)
        assert record.read_text() == bad
    record.write_bytes(kept)
    # an export in no record (archived by an older kenang) is said to be unchecked, and is no problem
    manifest.chmod(0o644)
    manifest.unlink()
    record.unlink()
    v = verify(home)
    assert "imports/gading/edited_branch.json" in v.exports_unchecked and v.changed == () and v.exports_manifests == ()
    r = kenang("verify", "--home", str(home.paths.home))
    assert "export(s) in imports/ are in no record" in r.stdout


def test_a_new_export_where_a_purged_one_was_is_checked_and_a_purge_takes_its_name_out_of_both_records(home):
    from flows.store import archive_files
    from flows.store.verify import verify

    name = "Downloads\\conversations.json"  # a zip made on Windows, unpacked on Linux: the backslash is in the name
    put(home, "chatgpt/edited_branch.json", user="gading")
    (home.paths.active / "gading" / "edited_branch.json").rename(home.paths.active / "gading" / name)
    night(home)
    relpath = f"imports/gading/{name}"
    assert (home.paths.archive / relpath).is_file() and verify(home).problems == 0
    archive_files.purge(home, "gading", None, [relpath], "forget: test")
    record = (home.paths.warehouse / "_exports.json").read_text()
    assert "conversations" not in record and not (home.paths.archive / "imports/gading/.kenang-files.json").exists()
    assert verify(home).problems == 0
    # other bytes archived at the purged path, then deleted: missing, not excused by the earlier purge
    drop(home, f"gading/{name}", (FIX / "chatgpt" / "two_days.json").read_bytes())
    night(home)
    assert verify(home).problems == 0
    (home.paths.archive / relpath).chmod(0o644)
    (home.paths.archive / relpath).unlink()
    assert verify(home).missing == (relpath,)


def test_abandoned_branches_and_hidden_messages_are_kept_and_flagged(home):
    put(home, "chatgpt/edited_branch.json")
    night(home)
    rows = table(home, "messages")
    flags = Counter(f for r in rows for f in r["flags"])
    assert len(rows) == 7
    assert flags["inactive_branch"] == 3  # the first edit of the question and two answers it lost
    summary = table(home, "daily_summaries")[0]["summary"]
    for r in rows:
        if "inactive_branch" in r["flags"]:
            assert r["content"] not in summary  # an abandoned branch never becomes a fact


def test_reimporting_the_same_export_changes_nothing(home):
    put(home, "chatgpt/edited_branch.json")
    night(home)
    before = {p: p.stat().st_mtime_ns for p in home.paths.archive.rglob("*") if p.is_file()}
    n = len(table(home, "messages"))
    put(home, "chatgpt/edited_branch.json")
    res = night(home)
    assert res["imports"]["placed"] == 0 and res["imports"]["already_there"] == 1
    assert res["load"]["days"] == 0 and len(table(home, "messages")) == n
    assert {p: p.stat().st_mtime_ns for p in home.paths.archive.rglob("*") if p.is_file()} == before
    assert not any(home.paths.active.rglob("*.json"))


def test_a_newer_overlapping_export_adds_only_its_new_messages(home):
    put(home, "chatgpt/edited_branch.json")
    night(home)
    old = {r["message_id"] for r in table(home, "messages")}
    conv = json.loads((FIX / "chatgpt/edited_branch.json").read_text())
    newer = copy.deepcopy(conv)
    c = newer[0]
    leaf = c["current_node"]
    c["mapping"][leaf]["children"] = ["b-u4"]
    c["mapping"]["b-u4"] = {
        "id": "b-u4",
        "parent": leaf,
        "children": [],
        "message": {
            "id": "b-u4",
            "author": {"role": "user"},
            "create_time": c["mapping"][leaf]["message"]["create_time"] + 60,
            "content": {"content_type": "text", "parts": ["One more question"]},
            "status": "finished_successfully",
        },
    }
    c["current_node"] = "b-u4"
    put(home, "chatgpt/edited_branch.json", json.dumps(newer).encode())
    res = night(home, NOW + dt.timedelta(days=1))
    rows = table(home, "messages")
    assert {r["message_id"] for r in rows} >= old
    assert len(rows) == len(old) + 1
    assert [r["content"] for r in rows if r["message_id"] not in old] == ["One more question"]
    assert res["load"]["loaded"] == 1


def test_exports_that_are_not_conversations_go_to_quarantine_with_the_formats_tried(home):
    put(home, "claude_ai/projects.json")
    put(home, "chatgpt/bad_json.json")
    drop(home, "gading/random.json", b'{"hello": "world"}')
    res = night(home)
    items = {Path(i[0]).name: i for i in res["quarantine"]["items"]}
    assert len(items) == 3
    tried = (
        "aider, chatgpt, claude_ai, claude_code, codex, gemini, grok, openai_messages, openwebui, sharegpt, sillytavern"
    )
    for name in ("projects.json", "random.json"):
        _file, kind, reason = items[name]
        assert kind == "unknown_format"
        assert tried in reason
    assert items["bad_json.json"][1] == "bad_json" and "line" in items["bad_json.json"][2]
    assert table(home, "messages") == []


def test_an_export_waits_until_every_one_of_its_days_is_eligible(home):
    conv = json.loads((FIX / "chatgpt/edited_branch.json").read_text())
    late = NOW.timestamp()  # 2026-07-20 03:00 +07: that day is not eligible yet
    for node in conv[0]["mapping"].values():
        if node.get("message") and node["message"].get("create_time"):
            node["message"]["create_time"] = late
    put(home, "chatgpt/edited_branch.json", json.dumps(conv).encode())
    res = night(home)
    assert res["ingest"]["waiting_day"] == 1 and res["ingest"]["exports"] == 0
    assert (home.paths.active / "gading" / "edited_branch.json").is_file()
    res = night(home, NOW + dt.timedelta(days=1))
    assert res["ingest"]["exports"] == 1 and len(table(home, "messages")) == 7


def test_cli_import_previews_then_imports_with_a_date_for_undated_exports(home):
    f = str(FIX / "sharegpt/list.json")
    h = str(home.paths.home)
    r = kenang("import", "--home", h, "--user", "gading", "--date", "2026-07-01", "--dry-run", f)
    assert r.exit_code == 0
    out = r.stdout
    assert "sharegpt, 2 conversations" in out and "8 messages, 8 new" in out and "2026-07-01" in out
    imported = kenang("import", "--home", h, "--user", "gading", "--date", "2026-07-01", "--now", NOW.isoformat(), f)
    assert imported.exit_code == 0
    rows = table(home, "messages")
    assert len(rows) == 8 and {r["date"] for r in rows} == {dt.date(2026, 7, 1)}
    r = kenang("import", "--home", h, "--user", "gading", "--date", "2026-07-01", "--dry-run", f)
    assert r.exit_code == 0
    assert (
        "8 messages, 0 new" in imported.stdout + r.stdout
    )  # the import's output and this preview's, read together as before
    # the user's own file is never touched; a file that is no export is refused up front
    assert (
        hashlib.sha256(Path(f).read_bytes()).hexdigest()
        == hashlib.sha256((FIX / "sharegpt/list.json").read_bytes()).hexdigest()
    )
    r = kenang("import", "--home", h, str(FIX / "claude_ai/projects.json"))
    assert r.exit_code == 2
    assert "not an export kenang can import" in r.stderr


def test_dry_run_lists_exports_and_a_backfill_rebuilds_imported_days_from_the_archive(home):
    import shutil

    from flows.pipeline import backfill

    put(home, "chatgpt/edited_branch.json")
    r = kenang("run", "--home", str(home.paths.home), "--now", NOW.isoformat(), "--dry-run")
    assert r.exit_code == 0
    out = r.stdout
    assert "would import 1 export(s)" in out and "chatgpt" in out
    night(home)
    before = sorted(r["message_id"] for r in table(home, "messages"))
    shutil.rmtree(home.paths.warehouse)
    res = backfill(start=dt.date(2024, 7, 1), end=dt.date(2024, 7, 31), home=str(home.paths.home))
    assert res["load"]["loaded"] == 1
    assert sorted(r["message_id"] for r in table(home, "messages")) == before


def test_a_night_of_many_exports_keeps_the_run_report_narrow(home):
    data = json.loads((FIX / "chatgpt/edited_branch.json").read_bytes())
    for i in range(12):  # each one its own export: a title of its own
        one = copy.deepcopy(data)
        for conv in one if isinstance(one, list) else [one]:
            conv["title"] = f"export {i}"
        put(home, "chatgpt/edited_branch.json", json.dumps(one).encode())
        os.replace(
            home.paths.active / "gading/edited_branch.json", home.paths.active / f"gading/{'x' * 90}-{i:02d}.json"
        )
    r = kenang("run", "--home", str(home.paths.home), "--now", NOW.isoformat())
    assert r.exit_code == 0, r.stderr
    lines = r.stdout.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("imports "))
    assert "12 export(s)" in lines[first] and "day transcript(s) written" in lines[first]
    assert sum(line.startswith(" " * 9) and "(chatgpt, " in line for line in lines[first + 1 :]) == 10
    assert (
        "x...x" in r.stdout and "x-09.json (chatgpt, " in r.stdout and "-10.json" not in r.stdout
    )  # cut in the middle
    assert "... and 2 more export(s)" in r.stdout
    assert max(len(line) for line in lines) < 160, max(lines, key=len)


def test_an_import_skips_what_it_cannot_read_says_why_imports_the_rest_and_exits_partial(home, tmp_path):
    h = str(home.paths.home)
    good = str(FIX / "sharegpt/list.json")
    unknown = tmp_path / "random.json"
    unknown.write_bytes(b'{"hello": "world"}')
    future = json.loads((FIX / "chatgpt/edited_branch.json").read_text())  # detected, but its times are impossible
    for node in future[0]["mapping"].values():
        if node.get("message") and node["message"].get("create_time"):
            node["message"]["create_time"] = 6153667200.0
    unreadable = tmp_path / "conversations.json"
    unreadable.write_bytes(json.dumps(future).encode())
    big = tmp_path / "big.json"
    big.write_bytes(json.dumps([{"conversations": [{"from": "human", "value": "x" * 70_000}]}]).encode())
    cfg = home.paths.config_file
    cfg.write_text(cfg.read_text().replace("max_file_mb: 200", "max_file_mb: 0.05"))  # about 52 KB
    args = ["--home", h, "--user", "gading", "--date", "2026-07-01", "--now", NOW.isoformat()]
    with fifo_that_cannot_hang(tmp_path / "pipe.json") as fifo:
        files = [good, str(fifo), "/dev/null", str(unknown), str(unreadable), str(big)]
        preview = kenang("import", *args, "--dry-run", *files)
        imported = kenang("import", *args, *files)
    for r in (preview, imported):
        assert r.exit_code == 4
        said = {
            line.split(": ", 1)[0].removeprefix("skipped "): line
            for line in r.stderr.splitlines()
            if line.startswith("skipped ")
        }
        assert set(said) == {str(fifo), "/dev/null", str(unknown), str(unreadable), str(big)}
        assert "a named pipe (FIFO), not a file; nothing read" in said[str(fifo)]
        assert "a device, not a file; nothing read" in said["/dev/null"]
        assert "not an export kenang can import (tried: aider, chatgpt" in said[str(unknown)]
        assert "a chatgpt export kenang cannot read: message 1 is dated 2165" in said[str(unreadable)]
        assert "over limits.max_file_mb=0.05" in said[str(big)] and "raise limits.max_file_mb" in said[str(big)]
    assert "sharegpt, 2 conversations" in preview.stdout and "8 messages, 8 new" in preview.stdout
    assert "the import was partial: 5 file(s) skipped" in imported.stderr
    assert len(table(home, "messages")) == 8 and table(home, "quarantine") == []
    assert sorted(p.name for p in home.paths.active.rglob("*") if p.is_file()) == []
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    # no file that kenang can import: nothing runs, and each is said, exit 2
    r = kenang("import", *args, str(unknown), "/dev/null")
    assert r.exit_code == 2 and r.stderr.count("skipped ") == 2 and "nothing imported" in r.stderr
    r = kenang("import", *args, "--json", good, str(unknown))
    assert r.exit_code == 4 and json.loads(r.stdout)["import_skipped"][0]["file"] == str(unknown)
    # a name that holds a token is shown as its stable hash, never as the token
    token = "ghp_" + "k3nAng" * 6
    named = tmp_path / f"{token}.json"
    named.write_bytes(b'{"hello": "world"}')
    r = kenang("import", *args, "--dry-run", good, str(named))
    assert r.exit_code == 4 and "skipped " in r.stderr and "redacted-" in r.stderr
    assert token not in r.stderr + r.stdout


def test_an_import_passes_over_a_pipe_or_a_link_that_holds_its_name_in_active(home, tmp_path):
    """What already holds the name in active/ is never read as a file: a pipe there would hang the import."""
    listed, other = FIX / "sharegpt/list.json", FIX / "sharegpt/axolotl-ai-cloud__axolotl__conversation.json"
    folder = home.paths.active / "gading"
    folder.mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_bytes(other.read_bytes())
    os.utime(elsewhere, (1_700_000_000, 1_700_000_000))
    os.symlink(elsewhere, folder / other.name)  # a link to the same bytes, kept outside
    args = ["--home", str(home.paths.home), "--user", "gading", "--date", "2026-07-01", "--now", NOW.isoformat()]
    with fifo_that_answers(folder / listed.name, listed.read_bytes(), spare=tmp_path / "spare") as fifo:
        r = kenang("import", *args, str(listed), str(other))
        assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert r.exit_code == 0, r.stderr
    assert Counter(m["session_id"].split("@")[0][:8] for m in table(home, "messages")) == {"42": 2, "sharegpt": 18}
    assert elsewhere.stat().st_mtime == 1_700_000_000  # the link's target was neither read as the copy nor touched


def test_an_import_that_cannot_write_into_active_says_so_in_one_line(home):
    (home.paths.active / "gading").write_bytes(b"")  # a file where the user's folder goes: no copy can be made
    r = kenang(
        "import",
        "--home",
        str(home.paths.home),
        "--user",
        "gading",
        "--date",
        "2026-07-01",
        str(FIX / "sharegpt/list.json"),
    )
    assert r.exit_code == 1 and len(r.stderr.splitlines()) == 1, r.stderr
    assert f"cannot copy {FIX / 'sharegpt/list.json'} into {home.paths.active / 'gading'}" in r.stderr
    assert "nothing imported" in r.stderr and table(home, "messages") == []


def test_a_coding_agents_note_tells_what_was_said_not_its_tool_calls(home):
    """docs/summaries.md: what an importer writes in place of content is never a tag, a person or a project, and the
    note's prose is what the user and the assistant said, never a tool's JSON or Claude Code's command wrapper."""
    put(home, "claude_code/d-kimuson__claude-code-viewer__1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl")
    night(home)
    (row,) = [r for r in table(home, "daily_summaries") if r["user_id"] == "gading"]
    note = (home.paths.archive / row["path"]).read_text(encoding="utf-8")
    body = note.split("## Sessions")[0]
    for noise in ("[tool_use", "<command-", '{"', "todos", "activeForm"):
        assert noise not in body, (noise, body)
    assert "analyze the codebase" in body  # the assistant's own words
    assert row["projects"] == [] and "pattern" not in row["tags"] and "tool_use" not in row["title"]
    assert "29 messages" in note and row["messages"] == 29  # the Sessions line and the table count every message
