"""Sources: agents' own logs collected night after night, by copy, taking only what is new.

Real samples (tests/fixtures/imports, attributed in their SOURCES.md) are appended to a
source file over simulated nights; every night is a real nightly flow run.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import sqlite3
import stat
from collections import Counter
from pathlib import Path

import pytest
from helpers import JAKARTA, fifo_that_answers, fifo_that_cannot_hang, grep_home, kenang, snapshot, table

from flows.config import edit_config
from flows.pipeline import backfill, nightly
from flows.stages import collect
from flows.store import collected

pytestmark = pytest.mark.usefixtures("prefect_api")

FIX = Path(__file__).parent / "fixtures" / "imports"
CLAUDE = FIX / "claude_code" / "d-kimuson__claude-code-viewer__1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl"
AIDER = FIX / "aider" / "Aider-AI__aider__chat-history.prefix250k.md"
LONG_AGO = dt.datetime(2026, 1, 1, tzinfo=JAKARTA).timestamp()  # an mtime well past any quiet period


def add_source(home, **entry) -> None:
    def change(data):
        data.setdefault("sources", []).append(dict(entry))

    edit_config(home.paths.home, change)


def write(path: Path, data: bytes, mtime: float = LONG_AGO, append: bool = False) -> None:
    """Write (or append to) a source file as its tool would, then give it an old mtime: it is quiet."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "ab" if append else "wb") as fh:
        fh.write(data)
    os.utime(path, (mtime, mtime))


def night(home, now: dt.datetime) -> dict:
    return nightly(now=now, home=str(home.paths.home))


def fingerprint(path: Path) -> tuple:
    st = path.stat()
    return hashlib.sha256(path.read_bytes()).hexdigest(), stat.S_IMODE(st.st_mode), st.st_mtime_ns


def messages(home, user: str = "default") -> list[dict]:
    return [r for r in table(home, "messages") if r["user_id"] == user]


def imported_roles(path: Path) -> Counter:
    """What `kenang import` of the whole file loads: the counts every collection must end with."""
    from transforms.imports import detect, parse_export

    data = path.read_bytes()
    export = parse_export(data, fmt=detect(data), tz=JAKARTA)
    return Counter(m.role for c in export.conversations for m in c.messages)


def test_a_claude_code_log_appended_over_three_nights_ends_with_exactly_what_an_import_loads(home, tmp_path):
    lines = CLAUDE.read_bytes().splitlines(keepends=True)
    log = tmp_path / "claude" / "projects" / "demo" / CLAUDE.name
    add_source(home, name="cc", kind="claude_code", path=str(tmp_path / "claude" / "projects"))
    seen = []
    for k, (a, b) in enumerate([(0, 10), (10, 20), (20, len(lines))]):
        write(log, b"".join(lines[a:b]), append=k > 0)
        before = fingerprint(log)
        res = night(home, dt.datetime(2025, 9, 4 + k, 3, 0, tzinfo=JAKARTA))
        assert fingerprint(log) == before  # never touched: bytes, mode and mtime
        c = res["collect"]
        assert c["errors"] == 0 and c["written"] == 1 and c["bytes"] == sum(len(x) for x in lines[a:b])
        seen.append(len(messages(home)))
        # exactly the new lines were taken: what is loaded is what an import of the file so far loads
        assert Counter(r["role"] for r in messages(home)) == imported_roles(log)
    assert seen[0] < seen[1] < seen[2]
    assert (
        Counter(r["role"] for r in messages(home)) == imported_roles(CLAUDE) == {"user": 2, "assistant": 15, "tool": 12}
    )
    # a night with nothing new writes nothing and changes nothing
    again = snapshot(home)
    res = night(home, dt.datetime(2025, 9, 8, 3, 0, tzinfo=JAKARTA))
    assert res["collect"]["written"] == 0 and res["collect"]["bytes"] == 0
    assert snapshot(home) == again
    # the archive holds the bytes taken once: three segments, their lines exactly the file's
    segs = sorted((home.paths.archive / "daily_sessions" / "2025-09-03").glob("collected-*"))
    assert len(segs) == 3 and sum(len(p.read_bytes()) for p in segs) == len(CLAUDE.read_bytes())
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o444 for p in segs)


def record(ts: str, text: str, role: str = "user", session: str = "s-midnight") -> bytes:
    body = {
        "type": role,
        "sessionId": session,
        "uuid": hashlib.sha1((ts + text).encode()).hexdigest(),
        "timestamp": ts,
        "message": {"role": role, "content": text},
    }
    return (json.dumps(body) + "\n").encode()


def test_a_session_crossing_midnight_splits_into_its_two_days_and_a_day_waits_for_its_grace(home, tmp_path):
    log = tmp_path / "cc" / "s.jsonl"
    add_source(home, name="cc", kind="claude_code", path=str(tmp_path / "cc" / "*.jsonl"))
    write(
        log,
        record("2026-07-18T23:50:00+07:00", "sebelum tengah malam")
        + record("2026-07-18T23:55:00+07:00", "oke", "assistant")
        + record("2026-07-19T00:10:00+07:00", "sesudah tengah malam")
        + record("2026-07-19T09:00:00+07:00", "hari ini belum selesai"),
    )
    # at 03:00 on the 19th the 18th is eligible, the 19th is not: only the 18th is taken
    res = night(home, dt.datetime(2026, 7, 19, 3, 0, tzinfo=JAKARTA))
    assert res["collect"]["written"] == 1
    assert sorted((r["date"].isoformat(), r["content"]) for r in messages(home)) == [
        ("2026-07-18", "oke"),
        ("2026-07-18", "sebelum tengah malam"),
    ]
    assert collected.read(home.paths.warehouse, "cc")[0].files[str(log)].waiting_days == ["2026-07-19"]
    res = night(home, dt.datetime(2026, 7, 20, 3, 0, tzinfo=JAKARTA))
    assert res["collect"]["written"] == 1
    by_day = Counter(r["date"].isoformat() for r in messages(home))
    assert by_day == {"2026-07-18": 2, "2026-07-19": 2}
    # named as `kenang import` of the same file names them: the later day is <id>@<day>
    assert {(r["date"].isoformat(), r["session_id"]) for r in table(home, "sessions")} == {
        ("2026-07-18", "s-midnight"),
        ("2026-07-19", "s-midnight@2026-07-19"),
    }


def test_a_file_still_being_written_is_not_taken(home, tmp_path):
    log = tmp_path / "cc" / "s.jsonl"
    add_source(home, name="cc", kind="claude_code", path=str(log))
    write(log, record("2026-07-18T10:00:00+07:00", "halo"), mtime=dt.datetime.now().timestamp())
    res = night(home, dt.datetime(2026, 7, 20, 3, 0, tzinfo=JAKARTA))
    assert res["collect"]["waiting_quiet"] == 1 and res["collect"]["written"] == 0
    assert messages(home) == []
    os.utime(log, (LONG_AGO, LONG_AGO))
    assert night(home, dt.datetime(2026, 7, 20, 3, 0, tzinfo=JAKARTA))["collect"]["written"] == 1
    assert [r["content"] for r in messages(home)] == ["halo"]


def test_an_unterminated_last_line_waits_until_it_is_whole(home, tmp_path):
    log = tmp_path / "cc" / "s.jsonl"
    add_source(home, name="cc", kind="claude_code", path=str(log))
    whole, half = record("2026-07-18T10:00:00+07:00", "satu"), record("2026-07-18T10:01:00+07:00", "dua")
    write(log, whole + half[:20])
    night(home, dt.datetime(2026, 7, 20, 3, 0, tzinfo=JAKARTA))
    assert [r["content"] for r in messages(home)] == ["satu"]
    write(log, half[20:], append=True)
    night(home, dt.datetime(2026, 7, 21, 3, 0, tzinfo=JAKARTA))
    assert sorted(r["content"] for r in messages(home)) == ["dua", "satu"]


def test_truncated_and_replaced_files_are_read_again_whole_without_duplicates(home, tmp_path):
    log = tmp_path / "cc" / "s.jsonl"
    add_source(home, name="cc", kind="claude_code", path=str(log))
    a, b = record("2026-07-17T10:00:00+07:00", "pertama"), record("2026-07-18T10:00:00+07:00", "kedua")
    write(log, a + b)
    night(home, dt.datetime(2026, 7, 20, 3, 0, tzinfo=JAKARTA))
    # replaced: a new file (new inode) renamed over it, holding the same lines and one more
    c = record("2026-07-19T10:00:00+07:00", "ketiga")
    tmp = log.with_name("s.jsonl.new")
    write(tmp, a + b + c)
    os.replace(tmp, log)
    res = night(home, dt.datetime(2026, 7, 21, 3, 0, tzinfo=JAKARTA))
    notes = res["collect"]["by_source"][0]["notes"]
    assert len(notes) == 1 and "new inode" in notes[0] and "read again whole" in notes[0]
    assert sorted(r["content"] for r in messages(home)) == ["kedua", "ketiga", "pertama"]
    # truncated: the tool started the file over with other lines
    d = record("2026-07-20T10:00:00+07:00", "keempat")
    write(log, d)
    res = night(home, dt.datetime(2026, 7, 22, 3, 0, tzinfo=JAKARTA))
    assert "truncated" in res["collect"]["by_source"][0]["notes"][0]
    assert sorted(r["content"] for r in messages(home)) == ["kedua", "keempat", "ketiga", "pertama"]
    # rewritten in place, same length: the taken bytes changed
    write(log, d.replace(b"keempat", b"KEEMPAT"))
    res = night(home, dt.datetime(2026, 7, 23, 3, 0, tzinfo=JAKARTA))
    assert "rewritten" in res["collect"]["by_source"][0]["notes"][0]
    rendered = kenang("run", "--home", str(home.paths.home), "--now", "2026-07-23T03:00")
    assert rendered.exit_code == 0


def test_aider_history_appended_turn_by_turn_ends_with_what_an_import_loads(home, tmp_path):
    text = AIDER.read_bytes()
    lines = text.splitlines(keepends=True)
    # cut points at turn starts: one inside a session (its header is put before the rest), one at a header
    turns = [i for i, ln in enumerate(lines) if ln.startswith(b"#### ")]
    headers = [i for i, ln in enumerate(lines) if ln.startswith(b"# aider chat started at")]
    inside = next(t for t in turns if t > headers[10] and not any(t == h + 1 for h in headers))
    cuts = [0, inside, headers[40], len(lines)]
    log = tmp_path / "repo" / ".aider.chat.history.md"
    add_source(home, name="aider", kind="aider", path=str(tmp_path / "repo"))
    for k in range(3):
        write(log, b"".join(lines[cuts[k] : cuts[k + 1]]), append=k > 0)
        res = night(home, dt.datetime(2026, 7, 20 + k, 3, 0, tzinfo=JAKARTA))
        assert res["collect"]["errors"] == 0 and res["ingest"]["rejected"] == 0
    assert (
        Counter(r["role"] for r in messages(home))
        == imported_roles(AIDER)
        == {"user": 111, "assistant": 70, "tool": 157}
    )


def test_sources_that_fail_are_named_and_the_others_go_on(home, tmp_path):
    good = tmp_path / "cc" / "s.jsonl"
    write(good, record("2026-07-18T10:00:00+07:00", "tetap jalan"))
    add_source(home, name="nothing", kind="claude_code", path=str(tmp_path / "nowhere" / "*.jsonl"))
    broken = tmp_path / "broken" / "x.jsonl"
    broken.parent.mkdir()
    if os.geteuid() == 0:  # root reads any mode: the file you name, a link to nowhere, is the unreadable one here
        os.symlink(tmp_path / "gone.jsonl", broken)
        add_source(home, name="broken", kind="claude_code", path=str(broken))
        unreadable = tmp_path / "gone.jsonl"
    else:
        write(broken, b"{}\n")
        broken.chmod(0)
        add_source(home, name="broken", kind="claude_code", path=str(broken.parent / "*.jsonl"))
        unreadable = broken
    add_source(home, name="cc", kind="claude_code", path=str(good))
    res = night(home, dt.datetime(2026, 7, 20, 3, 0, tzinfo=JAKARTA))
    by = {s["name"]: s for s in res["collect"]["by_source"]}
    assert "matches no file" in by["nothing"]["errors"][0]
    assert f"{unreadable}: cannot read it" in by["broken"]["errors"][0]
    assert by["cc"]["errors"] == [] and by["cc"]["written"] == 1
    assert [r["content"] for r in messages(home)] == ["tetap jalan"]
    out = kenang("sources", "--home", str(home.paths.home))
    assert out.exit_code == 0 and "matches no file" in out.stdout and "cc" in out.stdout


def test_a_source_error_is_logged_once_by_the_night_and_never_by_a_look(home, tmp_path, caplog):
    import logging
    import time

    from flows.config import load_settings

    add_source(home, name="nothing", kind="claude_code", path=str(tmp_path / "nowhere" / "*.jsonl"))
    settings = load_settings(home.paths.home)
    now = dt.datetime(2026, 7, 20, 3, 0, tzinfo=JAKARTA)
    with caplog.at_level(logging.WARNING, logger="kenang"):
        looked = collect.collect(settings, now, time.time(), dry_run=True)  # kenang run's check for a quiet night
        assert "matches no file" in looked[0].errors[0] and not caplog.records
        collect.collect(settings, now, time.time())
    assert [r.getMessage() for r in caplog.records if "matches no file" in r.getMessage()] == [
        f"source nothing: {looked[0].errors[0]}"
    ]


def test_what_a_source_said_is_a_table_with_a_heading_over_every_column(home, tmp_path):
    add_source(home, name="nothing", kind="claude_code", path=str(tmp_path / "nowhere" / "*.jsonl"))
    h = ("--home", str(home.paths.home))
    r = kenang("run", *h, "--now", dt.datetime(2026, 7, 20, 3, 0, tzinfo=JAKARTA).isoformat())
    s = kenang("sources", *h)
    for out, title in ((r.stdout, "sources (each goes on without the others):"), (s.stdout, "last night:")):
        lines = out.splitlines()
        head, rule, row = lines[lines.index(title) + 1 : lines.index(title) + 4]
        assert head.split() == ["source", "type", "what"] and len(rule.split()) == 3, out
        assert row.split()[:2] == ["nothing", "error"] and "matches no file" in row


def test_a_run_at_a_terminal_logs_what_its_report_says_only_with_verbose(home, tmp_path, caplog, monkeypatch):
    import logging

    from flows.cli import main

    add_source(home, name="nothing", kind="claude_code", path=str(tmp_path / "nowhere" / "*.jsonl"))
    h = ("--home", str(home.paths.home))
    # at a terminal: the warning only with -v; under a timer (no terminal): always, for its journal
    for terminal, verbose, day, shown in ((True, False, 20, False), (True, True, 21, True), (False, False, 22, True)):
        monkeypatch.setattr(main, "_interactive", lambda terminal=terminal: terminal)
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="kenang"):
            now = dt.datetime(2026, 7, day, 3, 0, tzinfo=JAKARTA).isoformat()
            r = kenang(*(["-v"] if verbose else []), "run", *h, "--now", now)
            assert logging.getLogger("kenang").level == logging.WARNING  # the command gave the level back
        assert r.exit_code == 0 and "matches no file" in r.stdout  # the report says it either way
        logged = [x for x in caplog.records if "matches no file" in x.getMessage()]
        assert bool(logged) == shown, (terminal, verbose, logged)


def test_a_source_deleted_after_collection_leaves_the_archive_and_a_backfill_rebuilds_the_same_tables(home, tmp_path):
    log = tmp_path / "cc" / "s.jsonl"
    add_source(home, name="cc", kind="claude_code", path=str(log))
    write(log, CLAUDE.read_bytes())
    night(home, dt.datetime(2025, 9, 4, 3, 0, tzinfo=JAKARTA))
    before = snapshot(home)
    log.unlink()
    res = night(home, dt.datetime(2025, 9, 5, 3, 0, tzinfo=JAKARTA))
    assert "matches no file" in res["collect"]["by_source"][0]["errors"][0]
    assert {k: v for k, v in snapshot(home).items() if k.startswith(("archive/", "table/messages"))} == {
        k: v for k, v in before.items() if k.startswith(("archive/", "table/messages"))
    }
    # the warehouse gone, the source gone: the archive alone rebuilds the same rows
    import shutil

    shutil.rmtree(home.paths.warehouse)
    home.paths.warehouse.mkdir()
    backfill(start=dt.date(2025, 9, 1), end=dt.date(2025, 9, 30), home=str(home.paths.home))
    assert [snapshot(home)[t] for t in ("table/messages", "table/sessions")] == [
        before[t] for t in ("table/messages", "table/sessions")
    ]


# --- Open WebUI's database --------------------------------------------------------------------

WEBUI_SCHEMA = """
CREATE TABLE user (id VARCHAR(255) PRIMARY KEY, name VARCHAR(255), email VARCHAR(255), role VARCHAR(255),
    profile_image_url TEXT, last_active_at BIGINT, updated_at BIGINT, created_at BIGINT, api_key VARCHAR(255),
    settings JSON, info JSON, oauth_sub TEXT);
CREATE TABLE chat (id VARCHAR(255) PRIMARY KEY, user_id VARCHAR(255), title TEXT, share_id VARCHAR(255),
    archived INTEGER, created_at BIGINT, updated_at BIGINT, chat JSON, pinned BOOLEAN, meta JSON DEFAULT '{}',
    folder_id TEXT);
"""


def webui_chat(chat_id: str, turns: list[tuple[str, str, int]]) -> dict:
    """An Open WebUI chat object: the message tree and the linear list, as the app stores them."""
    msgs, parent = {}, None
    ids = [f"{chat_id}-m{i}" for i in range(len(turns))]
    for i, (role, text, ts) in enumerate(turns):
        msgs[ids[i]] = {
            "id": ids[i],
            "parentId": parent,
            "childrenIds": [ids[i + 1]] if i + 1 < len(turns) else [],
            "role": role,
            "content": text,
            "timestamp": ts,
        }
        parent = ids[i]
    return {
        "id": "",
        "title": chat_id,
        "models": ["llama3"],
        "history": {"messages": msgs, "currentId": parent},
        "messages": list(msgs.values()),
        "timestamp": turns[0][2] * 1000,
    }


def put_chat(db: Path, chat_id: str, user: str, turns: list[tuple[str, str, int]]) -> None:
    con = sqlite3.connect(db)
    with con:
        con.execute(
            "INSERT OR REPLACE INTO chat (id, user_id, title, archived, created_at, updated_at, chat, pinned) "
            "VALUES (?, ?, ?, 0, ?, ?, ?, 0)",
            (chat_id, user, chat_id, turns[0][2], turns[-1][2], json.dumps(webui_chat(chat_id, turns))),
        )
    con.close()


def at(day: int, hour: int) -> int:
    return int(dt.datetime(2026, 7, day, hour, 0, tzinfo=JAKARTA).timestamp())


def test_an_open_webui_database_gives_each_updated_chat_once_and_only_what_is_new(home, tmp_path):
    db = tmp_path / "open-webui" / "webui.db"
    db.parent.mkdir()
    con = sqlite3.connect(db)
    con.executescript(WEBUI_SCHEMA)
    con.execute("INSERT INTO user (id, name, email, role) VALUES ('u1', 'Gading', 'gading@example.org', 'admin')")
    con.execute("INSERT INTO user (id, name, email, role) VALUES ('u2', 'Rina', 'rina@example.org', 'user')")
    con.commit()
    con.close()
    put_chat(db, "c1", "u1", [("user", "Cara pasang Proxmox?", at(17, 9)), ("assistant", "Unduh ISO-nya.", at(17, 9))])
    put_chat(db, "c2", "u2", [("user", "Resep rendang?", at(17, 10)), ("assistant", "Daging dan santan.", at(17, 10))])
    os.utime(db, (LONG_AGO, LONG_AGO))
    add_source(home, name="webui", kind="open_webui_db", path=str(db), user="gading", webui_user="gading@example.org")
    before = fingerprint(db)
    res = night(home, dt.datetime(2026, 7, 18, 3, 0, tzinfo=JAKARTA))
    assert res["collect"]["errors"] == 0 and res["collect"]["written"] == 1  # only gading's chat
    assert sorted(r["content"] for r in messages(home, "gading")) == ["Cara pasang Proxmox?", "Unduh ISO-nya."]
    # the chat goes on the next day: only it is taken again, and its old messages are not counted twice
    put_chat(
        db,
        "c1",
        "u1",
        [
            ("user", "Cara pasang Proxmox?", at(17, 9)),
            ("assistant", "Unduh ISO-nya.", at(17, 9)),
            ("user", "Lalu VLAN?", at(18, 20)),
            ("assistant", "Pakai bridge vmbr0.", at(18, 20)),
        ],
    )
    os.utime(db, (LONG_AGO, LONG_AGO))
    before = fingerprint(db)
    res = night(home, dt.datetime(2026, 7, 19, 3, 0, tzinfo=JAKARTA))
    assert res["collect"]["written"] == 1
    assert fingerprint(db) == before
    assert Counter(r["date"].isoformat() for r in messages(home, "gading")) == {"2026-07-17": 2, "2026-07-18": 2}
    assert night(home, dt.datetime(2026, 7, 20, 3, 0, tzinfo=JAKARTA))["collect"]["written"] == 0


def test_a_locked_database_is_said_and_taken_the_next_night(home, tmp_path):
    db = tmp_path / "webui.db"
    con = sqlite3.connect(db)
    con.executescript(WEBUI_SCHEMA)
    con.close()
    put_chat(db, "c1", "u1", [("user", "halo", at(17, 9))])
    add_source(home, name="webui", kind="open_webui_db", path=str(db))
    writer = sqlite3.connect(db, isolation_level=None)
    writer.execute("BEGIN EXCLUSIVE")  # the app, in the middle of saving
    try:
        res = night(home, dt.datetime(2026, 7, 18, 3, 0, tzinfo=JAKARTA))
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    assert "locked by a writer" in res["collect"]["by_source"][0]["errors"][0]
    assert messages(home) == []
    res = night(home, dt.datetime(2026, 7, 18, 4, 0, tzinfo=JAKARTA))
    assert res["collect"]["errors"] == 0 and [r["content"] for r in messages(home)] == ["halo"]


def test_a_database_kenang_does_not_know_is_said_clearly(home, tmp_path):
    db = tmp_path / "other.db"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE chat (id TEXT, body TEXT)")
    con.close()
    add_source(home, name="webui", kind="open_webui_db", path=str(db))
    res = night(home, dt.datetime(2026, 7, 18, 3, 0, tzinfo=JAKARTA))
    assert "not an Open WebUI database kenang knows" in res["collect"]["by_source"][0]["errors"][0]


# --- a folder, copied or moved ------------------------------------------------------------------


def test_a_folder_source_copies_new_and_changed_files_and_move_removes_only_after_the_copy(home, tmp_path):
    from helpers import md

    folder = tmp_path / "exports"
    write(folder / "2026-07-18-0900.md", md("2026-07-18", "0900", ("user", "Catatan pagi"), ("assistant", "Siap.")))
    add_source(home, name="notes", kind="folder", path=str(folder))
    res = night(home, dt.datetime(2026, 7, 20, 3, 0, tzinfo=JAKARTA))
    assert res["collect"]["written"] == 1 and (folder / "2026-07-18-0900.md").exists()
    assert night(home, dt.datetime(2026, 7, 20, 4, 0, tzinfo=JAKARTA))["collect"]["written"] == 0
    moved = tmp_path / "inbox"
    write(moved / "2026-07-19-0800.md", md("2026-07-19", "0800", ("user", "Pindahkan aku")))
    add_source(home, name="inbox", kind="folder", path=str(moved), mode="move", user="rina")
    res = night(home, dt.datetime(2026, 7, 21, 3, 0, tzinfo=JAKARTA))
    assert not (moved / "2026-07-19-0800.md").exists()
    assert [r["content"] for r in messages(home, "rina")] == ["Pindahkan aku"]


# --- configuration and the CLI --------------------------------------------------------------------


def test_sources_add_keeps_the_comments_and_sources_lists_what_was_taken(home, tmp_path):
    log = tmp_path / "claude" / "p" / "s.jsonl"
    write(log, record("2026-07-18T10:00:00+07:00", "halo"))
    text = home.paths.config_file.read_text()
    out = kenang(
        "sources",
        "add",
        "cc",
        "--kind",
        "claude_code",
        "--path",
        str(tmp_path / "claude"),
        "--home",
        str(home.paths.home),
    )
    assert out.exit_code == 0, out.stdout
    new = home.paths.config_file.read_text()
    comments = [line.partition("#")[2] for line in text.splitlines() if "#" in line]
    assert all(c in new for c in comments)  # every comment kept
    assert "model_path: null" in new and "\n  - name: cc\n    kind: claude_code\n" in new
    assert "1 file" in out.stdout
    bad = kenang("sources", "add", "cc", "--kind", "aider", "--path", "x", "--home", str(home.paths.home))
    assert bad.exit_code != 0 and "names a source twice" in bad.stderr
    night(home, dt.datetime(2026, 7, 20, 3, 0, tzinfo=JAKARTA))
    listed = kenang("sources", "--home", str(home.paths.home), "--json")
    data = json.loads(listed.stdout)
    [cc] = data["sources"]
    assert cc["name"] == "cc" and cc["files"] == 1 and cc["bytes_taken"] == len(log.read_bytes())
    assert cc["last_collected"] and cc["errors"] == []


def test_move_is_refused_for_a_tool_s_own_logs():
    from pydantic import ValidationError

    from schemas.config import Config, describe_error

    raw = {"sources": [{"name": "cc", "kind": "claude_code", "path": "~/.claude/projects", "mode": "move"}]}
    with pytest.raises(ValidationError) as exc:
        Config.model_validate(raw)
    assert "move is for kind: folder only" in describe_error(exc.value, raw)


def test_matches_expands_home_folders_and_globs(tmp_path, monkeypatch):
    from schemas.config import Source

    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".codex" / "sessions" / "2026" / "07" / "18").mkdir(parents=True)
    f = tmp_path / ".codex" / "sessions" / "2026" / "07" / "18" / "rollout-2026-07-18T10-00-00-abc.jsonl"
    f.write_text("{}\n")
    assert collect.matches(Source(name="x", kind="codex", path="~/.codex/sessions")) == [f]
    assert collect.matches(Source(name="x", kind="codex", path="~/.codex/sessions/**/*.jsonl")) == [f]


def test_a_dry_run_says_what_would_be_collected_and_changes_nothing(home, tmp_path):
    log = tmp_path / "cc" / "s.jsonl"
    write(log, record("2026-07-18T10:00:00+07:00", "halo"))
    add_source(home, name="cc", kind="claude_code", path=str(log))
    before = snapshot(home)
    out = kenang("run", "--dry-run", "--home", str(home.paths.home), "--now", "2026-07-20T03:00")
    assert out.exit_code == 0 and "would collect from 1 source(s): 1 file(s) into active/" in out.stdout
    assert snapshot(home) == before and not collected.path(home.paths.warehouse, "cc").exists()


CODEX = FIX / "codex" / "rollout-2026-07-19T23-55-00-0198f1a2-7c3d-7e4f-9a0b-1c2d3e4f5a6b.jsonl"


def test_a_codex_rollout_crossing_midnight_is_taken_day_by_day_and_its_later_day_reads_alone(home, tmp_path):
    lines = CODEX.read_bytes().splitlines(keepends=True)
    log = tmp_path / ".codex" / "sessions" / "2026" / "07" / "19" / CODEX.name
    add_source(home, name="codex", kind="codex", path=str(tmp_path / ".codex" / "sessions"))
    write(log, b"".join(lines[:22]))  # the session so far: the 19th, and the first minute of the 20th
    res = night(home, dt.datetime(2026, 7, 20, 3, 0, tzinfo=JAKARTA))
    assert res["collect"]["written"] == 1 and res["ingest"]["rejected"] == 0
    assert {r["date"].isoformat() for r in messages(home)} == {"2026-07-19"}
    write(log, b"".join(lines[22:]), append=True)
    res = night(home, dt.datetime(2026, 7, 21, 3, 0, tzinfo=JAKARTA))
    assert res["collect"]["written"] == 1 and res["ingest"]["rejected"] == 0
    [day2] = (home.paths.archive / "daily_sessions" / "2026-07-20").glob("collected-codex-*")
    assert day2.read_bytes().startswith(lines[0])  # the session's opening record, so it reads alone
    assert day2.read_bytes()[len(lines[0]) :] == b"".join(lines[18:])
    assert Counter(r["role"] for r in messages(home)) == imported_roles(CODEX)
    assert {r["date"].isoformat() for r in messages(home)} == {"2026-07-19", "2026-07-20"}
    sid = "0198f1a2-7c3d-7e4f-9a0b-1c2d3e4f5a6b"
    assert {r["session_id"] for r in table(home, "sessions")} == {sid, f"{sid}@2026-07-20"}  # as an import names them


# --- what a hostile review found ----------------------------------------------------------------------


def test_an_aider_turn_repeated_on_a_later_night_is_kept_as_an_import_keeps_it(home, tmp_path):
    log = tmp_path / "repo" / ".aider.chat.history.md"
    add_source(home, name="aider", kind="aider", path=str(log))
    turn = b"#### yes\n\nDone.\n\n"
    write(log, b"# aider chat started at 2026-07-13 09:00:00\n\n" + turn)
    night(home, dt.datetime(2026, 7, 20, 3, 0, tzinfo=JAKARTA))
    write(log, turn, append=True)  # aider left open: the same answer to the same question, days later
    night(home, dt.datetime(2026, 7, 21, 3, 0, tzinfo=JAKARTA))
    assert Counter(r["role"] for r in messages(home)) == imported_roles(log) == {"user": 2, "assistant": 2}


def test_a_line_dated_in_the_future_is_quarantined_and_never_holds_back_the_lines_after_it(home, tmp_path):
    log = tmp_path / "cc" / "s.jsonl"
    add_source(home, name="cc", kind="claude_code", path=str(log))
    write(
        log,
        record("2026-07-17T10:00:00+07:00", "satu")
        + record("2099-01-01T10:00:00+07:00", "nanti")
        + record("2026-07-18T10:00:00+07:00", "dua"),
    )
    res = night(home, dt.datetime(2026, 7, 20, 3, 0, tzinfo=JAKARTA))
    assert sorted(r["content"] for r in messages(home)) == ["dua", "satu"]
    q = res["quarantine"]
    assert q["moved"] == 1 and q["items"][0][1] == "bad_timestamp"  # its own segment, with the reason
    write(log, record("2026-07-20T10:00:00+07:00", "tiga"), append=True)
    night(home, dt.datetime(2026, 7, 21, 3, 0, tzinfo=JAKARTA))
    assert "tiga" in {r["content"] for r in messages(home)}
    assert collected.read(home.paths.warehouse, "cc")[0].files[str(log)].waiting_days == []


def test_a_chat_updated_on_later_nights_does_not_archive_its_unchanged_days_again(home, tmp_path):
    db = tmp_path / "webui.db"
    con = sqlite3.connect(db)
    con.executescript(WEBUI_SCHEMA)
    con.close()
    turns = [("user", "Cara pasang Proxmox?", at(15, 9)), ("assistant", "Unduh ISO-nya.", at(15, 9))]
    put_chat(db, "c1", "u1", turns)
    add_source(home, name="webui", kind="open_webui_db", path=str(db))
    night(home, dt.datetime(2026, 7, 16, 3, 0, tzinfo=JAKARTA))
    for day in (16, 17, 18):
        turns += [("user", f"Pertanyaan hari {day}", at(day, 9)), ("assistant", f"Jawaban hari {day}", at(day, 9))]
        put_chat(db, "c1", "u1", turns)
        night(home, dt.datetime(2026, 7, day + 1, 3, 0, tzinfo=JAKARTA))
    first = list((home.paths.archive / "daily_sessions" / "2026-07-15").glob("*.jsonl"))
    assert len(first) == 1  # the same bytes each time: recognised, not archived again
    assert len(messages(home)) == 8


def test_a_wal_database_whose_app_is_stopped_is_read_without_creating_files_beside_it(home, tmp_path):
    folder = tmp_path / "data"
    folder.mkdir()
    db = folder / "webui.db"
    con = sqlite3.connect(db)
    con.execute("PRAGMA journal_mode=WAL")
    con.executescript(WEBUI_SCHEMA)
    con.close()
    put_chat(db, "c1", "u1", [("user", "halo", at(17, 9))])
    con = sqlite3.connect(db)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    for extra in ("webui.db-wal", "webui.db-shm"):
        (folder / extra).unlink(missing_ok=True)
    before = sorted(p.name for p in folder.iterdir()), fingerprint(db)
    add_source(home, name="webui", kind="open_webui_db", path=str(db))
    res = night(home, dt.datetime(2026, 7, 18, 3, 0, tzinfo=JAKARTA))
    assert res["collect"]["errors"] == 0 and [r["content"] for r in messages(home)] == ["halo"]
    assert (sorted(p.name for p in folder.iterdir()), fingerprint(db)) == before


def test_a_state_file_kenang_cannot_read_is_set_aside_and_said(home, tmp_path):
    log = tmp_path / "cc" / "s.jsonl"
    add_source(home, name="cc", kind="claude_code", path=str(log))
    write(log, record("2026-07-18T10:00:00+07:00", "halo"))
    night(home, dt.datetime(2026, 7, 20, 3, 0, tzinfo=JAKARTA))
    state_file = collected.path(home.paths.warehouse, "cc")
    raw = json.loads(state_file.read_text())
    raw["a_newer_key"] = 1
    next(iter(raw["files"].values()))["another"] = 2
    state_file.write_text(json.dumps(raw))
    state, trouble = collected.read(home.paths.warehouse, "cc")
    assert trouble is None and state.bytes_taken == len(log.read_bytes())  # unknown keys are ignored
    state_file.write_text("{not json")
    res = night(home, dt.datetime(2026, 7, 20, 4, 0, tzinfo=JAKARTA))
    note = res["collect"]["by_source"][0]["notes"][0]
    assert "could not be read" in note and state_file.with_name("cc.json.bad").exists()
    assert [r["content"] for r in messages(home)] == ["halo"]  # read whole again, recognised: nothing twice


def test_a_log_imported_by_hand_and_then_collected_is_not_counted_twice(home, tmp_path):
    log = tmp_path / "sessions" / CODEX.name
    write(log, CODEX.read_bytes())
    out = kenang("import", str(log), "--home", str(home.paths.home), "--now", "2026-07-21T03:00")
    assert out.exit_code == 0, out.stdout
    imported = sorted((r["date"], r["session_id"], r["message_id"]) for r in messages(home))
    add_source(home, name="codex", kind="codex", path=str(log.parent))
    res = night(home, dt.datetime(2026, 7, 21, 4, 0, tzinfo=JAKARTA))
    assert res["collect"]["written"] == 2
    assert sorted((r["date"], r["session_id"], r["message_id"]) for r in messages(home)) == imported


OUTSIDE = b"kenang-test-outside-bytes-5b1f"  # in files outside every source: it must never reach the home


def test_links_pipes_and_files_too_big_are_skipped_with_a_reason_and_the_rest_is_collected(home, tmp_path):
    outside = tmp_path / "outside"
    write(
        outside / "id_rsa",
        b"-----BEGIN OPENSSH PRIVATE KEY-----\n" + OUTSIDE + b"\n-----END OPENSSH PRIVATE KEY-----\n",
    )
    write(outside / "session.jsonl", record("2026-07-18T09:00:00+07:00", OUTSIDE.decode(), session="s-outside"))
    root = tmp_path / "claude" / "projects"
    write(root / "proj" / "good.jsonl", record("2026-07-18T10:00:00+07:00", "tetap dikumpulkan", session="s-good"))
    os.symlink(outside / "id_rsa", root / "proj" / "id_rsa.jsonl")  # a link to a file outside
    os.symlink(outside / "session.jsonl", root / "proj" / "leak.jsonl")  # one that reads as a real log
    os.symlink(outside, root / "linked")  # a link to a folder outside: never entered
    write(
        root / "proj" / "big.jsonl",
        b"".join(record(f"2026-07-18T11:{m:02d}:00+07:00", "x" * 200, session="s-big") for m in range(20)),
    )
    add_source(home, name="cc", kind="claude_code", path=str(root))
    # a glob whose folder is a link below its root: not entered either
    (tmp_path / "logs").mkdir()
    os.symlink(outside, tmp_path / "logs" / "globbed")
    add_source(home, name="glob", kind="claude_code", path=str(tmp_path / "logs" / "*" / "session.jsonl"))
    cfg = home.paths.config_file
    cfg.write_text(cfg.read_text().replace("source_file_mb: 64", "source_file_mb: 0.002"))  # about 2 KB
    before = {p: fingerprint(p) for p in (outside / "id_rsa", outside / "session.jsonl")}
    with fifo_that_cannot_hang(root / "proj" / "pipe.jsonl") as fifo:
        res = night(home, dt.datetime(2026, 7, 20, 3, 0, tzinfo=JAKARTA))
    by = {s["name"]: s for s in res["collect"]["by_source"]}
    said = {Path(n.split(": ", 1)[0]).name: n for n in by["cc"]["notes"]}
    assert "a symbolic link; skipped unopened" in said["id_rsa.jsonl"]
    assert "a symbolic link; skipped unopened" in said["leak.jsonl"]
    assert "a link to a folder; not entered" in said["linked"]
    assert "a named pipe (FIFO); skipped unopened" in said["pipe.jsonl"]
    assert (
        "over limits.source_file_mb=0.002" in said["big.jsonl"] and "raise limits.source_file_mb" in said["big.jsonl"]
    )
    assert by["cc"]["skipped"] == 5 and by["cc"]["errors"] == [] and by["cc"]["written"] == 1
    assert by["glob"]["skipped"] == 1 and "globbed: a link to a folder; not entered" in by["glob"]["notes"][0]
    assert res["collect"]["skipped"] == 6 and res["collect"]["errors"] == 0
    # the file that is fine is collected; nothing from outside is read, copied, archived or loaded
    assert [r["content"] for r in messages(home)] == ["tetap dikumpulkan"]
    assert grep_home(home, OUTSIDE) == [] and grep_home(home, b"OPENSSH PRIVATE KEY") == []
    assert not any(OUTSIDE.decode() in str(v) for r in table(home, "messages") for v in r.values())
    assert {p: fingerprint(p) for p in before} == before and stat.S_ISFIFO(os.lstat(fifo).st_mode)
    # the reasons are kept with the source's state and shown by `kenang sources` and the run's report
    state = collected.read(home.paths.warehouse, "cc")[0]
    assert state.skipped == 5 and set(state.notes) == set(by["cc"]["notes"])
    out = kenang("sources", "--home", str(home.paths.home))
    assert out.exit_code == 0 and "raise limits.source_file_mb" in out.stdout and "named pipe" in out.stdout
    # raising the cap, as the reason says, takes the big log the next night
    cfg.write_text(cfg.read_text().replace("source_file_mb: 0.002", "source_file_mb: 1"))
    res = night(home, dt.datetime(2026, 7, 21, 3, 0, tzinfo=JAKARTA))
    assert res["collect"]["written"] == 1 and res["collect"]["skipped"] == 5
    assert Counter(r["session_id"] for r in messages(home)) == {"s-good": 1, "s-big": 20}
    assert grep_home(home, OUTSIDE) == []


def test_a_source_path_you_name_through_a_link_is_followed_but_nothing_below_it(home, tmp_path):
    real = tmp_path / "dotfiles" / "claude"
    write(real / "p" / "s.jsonl", record("2026-07-18T10:00:00+07:00", "lewat tautan milikmu"))
    os.symlink(real, tmp_path / "claude")  # ~/.claude kept in a dotfiles folder: your own link
    os.symlink(tmp_path / "dotfiles", real / "p" / "up")  # a link below the root: the agent's, not followed
    add_source(home, name="cc", kind="claude_code", path=str(tmp_path / "claude"))
    res = night(home, dt.datetime(2026, 7, 20, 3, 0, tzinfo=JAKARTA))
    c = res["collect"]["by_source"][0]
    assert c["written"] == 1 and c["errors"] == [] and c["skipped"] == 1 and "link to a folder" in c["notes"][0]
    assert [r["content"] for r in messages(home)] == ["lewat tautan milikmu"]


def test_open_regular_refuses_a_link_a_pipe_and_a_file_outside_its_folder_without_blocking(tmp_path):
    from flows.store.fsio import NotRegular, open_regular

    inside, outside = tmp_path / "src", tmp_path / "elsewhere"
    write(inside / "ok.jsonl", b"{}\n")
    write(outside / "secret", OUTSIDE)
    os.symlink(outside / "secret", inside / "link.jsonl")
    with open_regular(inside / "ok.jsonl", inside=inside) as fh:
        assert fh.read() == b"{}\n"
    with pytest.raises(NotRegular, match="a symbolic link"):
        open_regular(inside / "link.jsonl", inside=inside)
    with pytest.raises(NotRegular, match=f"outside {inside}"):  # reached by a path that leaves the folder
        open_regular(inside / ".." / "elsewhere" / "secret", inside=inside)
    with fifo_that_cannot_hang(inside / "pipe.jsonl") as fifo, pytest.raises(NotRegular, match="named pipe"):
        open_regular(fifo, inside=inside)
    with pytest.raises(NotRegular, match="a device"):
        open_regular(Path("/dev/null"))


def test_a_glob_never_enters_a_linked_folder_and_a_dotdot_after_its_wildcard_never_widens_it(home, tmp_path):
    outside = tmp_path / "outside"
    write(outside / "deep" / "s.jsonl", record("2026-07-18T09:00:00+07:00", OUTSIDE.decode(), session="s-outside"))
    root = tmp_path / "cc"
    write(root / "p" / "good.jsonl", record("2026-07-18T10:00:00+07:00", "lewat glob", session="s-good"))
    os.symlink(".", root / "p" / "loop")  # glob.glob walks it 40 deep (a few such links: a search that never ends)
    os.symlink(outside, root / "p" / "out")  # glob.glob walks it, and a link to / would walk the whole disk
    add_source(home, name="g", kind="claude_code", path=str(root / "**" / "*.jsonl"))
    # a '..' after the wildcard: the root stays the folder before it, so this leaves it and is skipped
    add_source(home, name="up", kind="claude_code", path=str(root / "*" / ".." / ".." / "outside" / "*" / "*.jsonl"))
    add_source(home, name="down", kind="claude_code", path=str(root / "*" / ".." / "p" / "good.jsonl"))
    res = night(home, dt.datetime(2026, 7, 20, 3, 0, tzinfo=JAKARTA))
    by = {s["name"]: s for s in res["collect"]["by_source"]}
    assert sorted(by["g"]["notes"]) == [
        f"{root / 'p' / name}: a link to a folder; not entered (kenang reads only "
        "regular files inside a source's folder)"
        for name in ("loop", "out")
    ]
    assert by["g"]["skipped"] == 2 and by["g"]["written"] == 1 and by["g"]["errors"] == []
    assert by["up"]["skipped"] == 1 and f"lies outside {root}; skipped unopened" in by["up"]["notes"][0]
    assert by["up"]["written"] == 0 and by["up"]["errors"] == []
    assert by["down"]["errors"] == [] and by["down"]["written"] == 1 and by["down"]["skipped"] == 0
    assert {r["content"] for r in messages(home)} == {"lewat glob"}
    assert grep_home(home, OUTSIDE) == []


def test_an_original_swapped_for_a_pipe_after_its_copy_is_kept_and_never_read(tmp_path):
    from flows.store.fsio import remove_source

    data = b"the bytes that were archived\n"
    with fifo_that_answers(tmp_path / "export.json", data, spare=tmp_path / "spare") as fifo:
        assert remove_source(fifo, hashlib.sha256(data).hexdigest()) is False
        assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_a_pipe_put_in_active_under_a_segments_name_is_replaced_never_read(home, tmp_path):
    log = tmp_path / "cc" / "s.jsonl"
    write(log, record("2026-07-18T10:00:00+07:00", "sekali saja", session="s-once"))
    add_source(home, name="cc", kind="claude_code", path=str(log))
    assert night(home, dt.datetime(2026, 7, 20, 3, 0, tzinfo=JAKARTA))["collect"]["written"] == 1
    [archived] = home.paths.archive.rglob("collected-*")
    (home.paths.warehouse / "_sources" / "cc.json").unlink()  # the night forgets it took the log: it takes it again
    planted = home.paths.active / archived.name
    with fifo_that_answers(planted, archived.read_bytes(), spare=tmp_path / "spare"):
        res = night(home, dt.datetime(2026, 7, 21, 3, 0, tzinfo=JAKARTA))
    assert res["collect"]["written"] == 1 and res["collect"]["errors"] == 0
    assert not os.path.lexists(planted)  # written over the pipe, archived (already there) and removed
    assert [r["content"] for r in messages(home)] == ["sekali saja"]


def test_a_folder_nested_deeper_than_pythons_recursion_limit_is_still_collected(home, tmp_path):
    root = tmp_path / "deep"
    root.mkdir()
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(1200):  # os.walk and glob recurse once a level, and give up near 1000
        os.mkdir("d", dir_fd=fd)
        fd, parent = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd), fd
        os.close(parent)
    os.close(fd)
    try:
        write(root / ("d/" * 1200 + "s.jsonl"), record("2026-07-18T10:00:00+07:00", "jauh di dalam", session="s-deep"))
        add_source(home, name="walked", kind="claude_code", path=str(root))
        add_source(home, name="globbed", kind="claude_code", path=str(root / "**" / "*.jsonl"))
        res = night(home, dt.datetime(2026, 7, 20, 3, 0, tzinfo=JAKARTA))
        by = {s["name"]: s for s in res["collect"]["by_source"]}
        assert [(by[n]["errors"], by[n]["written"]) for n in ("walked", "globbed")] == [([], 1), ([], 1)]
        assert {r["content"] for r in messages(home)} == {"jauh di dalam"}
    finally:
        remove_deep(root)


def remove_deep(root: Path) -> None:
    """Remove a folder tree of any depth without recursion (shutil.rmtree, and pytest's clean-up, recurse)."""
    stack = [root]
    while stack:
        entries = list(os.scandir(stack[-1]))
        folders = [Path(e.path) for e in entries if e.is_dir(follow_symlinks=False)]
        for e in entries:
            if not e.is_dir(follow_symlinks=False):
                os.unlink(e.path)
        if folders:
            stack.extend(folders)
        else:
            os.rmdir(stack.pop())
