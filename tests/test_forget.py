"""kenang forget: after it, no file under the home holds what was forgotten, and nothing brings it back."""

from __future__ import annotations

import datetime as dt
import json
import stat
import threading

import duckdb
import pytest

from flows.pipeline import backfill, nightly
from flows.store import core_memory
from flows.store.lock import run_lock
from flows.store.verify import verify
from helpers import JAKARTA, NOW, drop, kenang, md, table
from transforms.forget import words

pytestmark = pytest.mark.usefixtures("prefect_api")

PHRASE = "kunci gudang di bawah pot"
START, END = dt.date(2026, 7, 1), dt.date(2026, 7, 31)


def chatgpt_export(*conversations: tuple[str, float, list[tuple[str, str]]]) -> bytes:
    """A ChatGPT conversations.json: (title, first timestamp, [(role, text)]) a minute apart."""
    out = []
    for n, (title, ts, turns) in enumerate(conversations):
        mapping = {"root": {"id": "root", "message": None, "parent": None, "children": ["m0"]}}
        for i, (role, text) in enumerate(turns):
            mapping[f"m{i}"] = {
                "id": f"m{i}", "parent": "root" if i == 0 else f"m{i - 1}",
                "children": [f"m{i + 1}"] if i + 1 < len(turns) else [],
                "message": {"id": f"m{i}", "author": {"role": role, "name": None, "metadata": {}},
                            "create_time": ts + 60 * i, "content": {"content_type": "text", "parts": [text]},
                            "status": "finished_successfully", "metadata": {}, "recipient": "all"},
            }
        out.append({"title": title, "create_time": ts, "update_time": ts, "mapping": mapping,
                    "current_node": f"m{len(turns) - 1}", "conversation_id": f"conv-{n}", "id": f"conv-{n}"})
    return json.dumps(out, ensure_ascii=False).encode()


EXPORT = chatgpt_export(
    ("Gudang", dt.datetime(2026, 7, 17, 9, 0, tzinfo=JAKARTA).timestamp(),
     [("user", "Aku taruh kunci gudang di bawah pot, di teras."), ("assistant", "Oke. Podman sudah jalan di pve1."),
      ("user", "Makasih, besok lanjut Podman.")]),
    ("Backup", dt.datetime(2026, 7, 16, 20, 0, tzinfo=JAKARTA).timestamp(),
     [("user", "Restic ke nas.lan tiap jam 2 ya."), ("assistant", "Siap, restic dijadwalkan.")]),
)


def _drop_history(settings) -> None:
    drop(settings, "2026-07-18-0900.md", md("2026-07-18", "0900",
                                            ("user", "Pagi, lanjut setup Proxmox di pve1."),
                                            ("assistant", "Oke, kita buka Datacenter > Storage."),
                                            ("user", "Catatan: kunci gudang di bawah pot bunga."),
                                            ("assistant", "Dicatat: Kunci  Gudang di bawah POT."),
                                            ("user", "Aku lebih suka simpan kunci gudang di bawah pot saja."),
                                            ("user", "Terus backup restic jalan jam 2."),
                                            session_id="2026-07-18-0900"))
    drop(settings, "2026-07-19-0900.md", md("2026-07-19", "0900",
                                            ("user", "Besok cek lagi restic di nas.lan."),
                                            ("assistant", "Baik, restic dicek besok."),
                                            session_id="2026-07-19-0900"))
    drop(settings, "2026-07-19-2000.md", md("2026-07-19", "2000",
                                            ("user", "Btw, kunci gudang di bawah pot, jangan lupa."),
                                            ("assistant", "Siap."), session_id="2026-07-19-2000"))
    drop(settings, "gudang-export.json", EXPORT)


def _night(settings, now=NOW):
    return nightly(now=now, home=str(settings.paths.home))


def _holds(text: str) -> bool:
    w, p = words(text), words(PHRASE)
    return any(w[i:i + len(p)] == p for i in range(len(w) - len(p) + 1))


def traces(settings, *, skip: frozenset[str] = frozenset()) -> list[str]:
    """Every file under the home that holds the phrase (Parquet read through DuckDB), minus ``skip``."""
    home = settings.paths.home
    found = []
    con = duckdb.connect(":memory:")
    for p in sorted(home.rglob("*")):
        if not p.is_file() or p.is_symlink():
            continue
        rel = p.relative_to(home).as_posix()
        if rel in skip:
            continue
        if p.suffix == ".parquet":
            rows = con.sql("SELECT * FROM read_parquet(?)", params=[str(p)]).fetchall()
            body = "\n".join(json.dumps(r, default=str, ensure_ascii=False) for r in rows)
        elif p.suffix == ".duckdb":
            c = duckdb.connect(str(p), read_only=True)
            try:
                body = "\n".join(str(r) for r in c.sql("SELECT sql FROM duckdb_views()").fetchall())
            finally:
                c.close()
            body += p.read_bytes().decode("utf-8", "replace")
        else:
            body = p.read_bytes().decode("utf-8", "replace")
            if p.suffix in (".json", ".jsonl"):  # "\u00e9"-style escapes, read as the text they stand for
                try:
                    body += "\n".join(json.dumps(json.loads(line), ensure_ascii=False) for line in
                                      ([body] if p.suffix == ".json" else body.splitlines()) if line.strip())
                except ValueError:
                    pass
        if _holds(body):
            found.append(rel)
    con.close()
    return found


def _originals(settings) -> set[str]:
    """The archived originals (day files and export originals), relative to the home."""
    arch = settings.paths.archive.relative_to(settings.paths.home).as_posix()
    out = {f"{arch}/{r['path']}" for r in table(settings, "archive_files")}
    out |= {f"{arch}/{r['original_path']}" for r in table(settings, "archive_files") if r["original_path"]
            and r["original_path"].startswith("imports/")}
    return out


def _setup(home) -> None:
    _drop_history(home)
    _night(home)
    assert kenang("remember", "Kunci gudang di bawah pot bunga, teras depan.", "--home", str(home.paths.home)).exit_code == 0
    assert kenang("remember", "Backups: restic to nas.lan at 02:00.", "--home", str(home.paths.home)).exit_code == 0
    everywhere = traces(home)
    # before: the phrase is in the tables, the summaries, the index, the candidates, core memory, the snapshot
    for where in ("warehouse/messages/", "warehouse/memory_chunks/", "warehouse/memory_candidates.parquet",
                  "memory/default/MEMORY.md", "snapshot/default.md"):
        assert any(t.startswith(where) for t in everywhere), (where, everywhere)


def _forget(home, *extra: str):
    r = kenang("forget", "--user", "default", "--text", PHRASE, "--yes", "--home", str(home.paths.home), *extra)
    assert r.exit_code == 0, r.stderr
    return r


def _rerun_everything(home) -> None:
    backfill(start=START, end=END, home=str(home.paths.home))
    backfill(start=START, end=END, home=str(home.paths.home), reindex=True, resummarize=True)
    drop(home, "gudang-export.json", EXPORT)  # the same export, imported again
    _night(home, now=dt.datetime(2026, 7, 21, 3, 0, tzinfo=JAKARTA))


def test_forget_text_leaves_no_trace_outside_the_archived_originals_and_nothing_brings_it_back(home):
    _setup(home)
    originals = _originals(home)
    before = {p: (home.paths.home / p).read_bytes() for p in originals}
    r = _forget(home)
    assert r.stdout.startswith("forgotten: 3 day(s) re-derived, 0 archived file(s) purged, 1 memory entr(ies) and 1 candidate(s)")

    assert traces(home, skip=frozenset(originals)) == []
    # without --purge the archived originals stay, byte-exact and read-only
    assert {p: (home.paths.home / p).read_bytes() for p in originals} == before
    assert all(stat.S_IMODE((home.paths.home / p).stat().st_mode) == 0o444 for p in originals)
    assert core_memory.read(home, "default", "memory").entries == ["Backups: restic to nas.lan at 02:00."]
    # what was around the phrase is still remembered
    said = [m["content"] for m in table(home, "messages")]
    assert "Catatan: [FORGOTTEN] bunga." in said and "Terus backup restic jalan jam 2." in said
    assert len(table(home, "tombstones")) == 1 and PHRASE not in json.dumps(table(home, "tombstones"), default=str)

    _rerun_everything(home)
    assert traces(home, skip=frozenset(originals)) == []
    hits = kenang("recall", "kunci gudang bawah pot", "--home", str(home.paths.home), "--json")
    assert not _holds(hits.stdout)


def test_forget_with_purge_deletes_the_originals_logs_them_and_verify_says_purged(home):
    _setup(home)
    plan = kenang("forget", "--user", "default", "--text", PHRASE, "--purge", "--dry-run", "--json",
                  "--home", str(home.paths.home))
    listed = json.loads(plan.stdout)
    assert listed["dry_run"] and listed["days"] == ["2026-07-17", "2026-07-18", "2026-07-19"]
    assert sorted(listed["archive_files"]) == [
        "daily_sessions/2026-07-17/chatgpt-conv-0.jsonl", "daily_sessions/2026-07-18/2026-07-18-0900.md",
        "daily_sessions/2026-07-19/2026-07-19-2000.md", "imports/gudang-export.json"]
    assert traces(home) != []  # a dry run changed nothing

    _forget(home, "--purge")
    assert traces(home) == []
    log = table(home, "purge_log")
    assert sorted(r["path"] for r in log) == sorted(listed["archive_files"])
    assert all(len(r["sha256"]) == 64 and r["why"].startswith("forget:") for r in log)
    # the day file that never held the phrase stays
    assert (home.paths.archive / "daily_sessions/2026-07-19/2026-07-19-0900.md").is_file()
    assert (home.paths.archive / "daily_sessions/2026-07-16/chatgpt-conv-1.jsonl").is_file()
    report = verify(home)
    assert report.problems == 0 and sorted(report.purged) == sorted(listed["archive_files"])

    _rerun_everything(home)
    assert traces(home) == []
    assert verify(home).problems == 0


def test_a_dry_run_lists_what_would_go_and_without_yes_the_command_asks(home):
    _setup(home)
    dry = kenang("forget", "--user", "default", "--text", PHRASE, "--dry-run", "--home", str(home.paths.home))
    assert dry.exit_code == 0 and dry.stdout.splitlines() == [
        "would forget, for default (text):",
        "  5 message(s) in 3 session(s) on 3 day(s): 2026-07-17, 2026-07-18, 2026-07-19",
        "  1 core memory entr(ies), 1 candidate(s)",
        "  the archived originals stay, byte-exact (add --purge to delete them too)",
    ]
    from click.testing import CliRunner

    from flows.cli.main import cli

    asked = CliRunner().invoke(cli, ["forget", "--user", "default", "--text", PHRASE, "--home", str(home.paths.home)],
                               input="n\n")
    assert asked.exit_code == 1 and "Forget it? [y/N]" in asked.stderr and "nothing was changed" in asked.stderr
    assert table(home, "tombstones") == [] and _holds(json.dumps([m["content"] for m in table(home, "messages")]))


def test_forget_a_session_a_day_and_before_a_date(home):
    _setup(home)
    kenang("forget", "--user", "default", "--session", "2026-07-19-2000", "--yes", "--home", str(home.paths.home))
    assert {m["session_id"] for m in table(home, "messages") if m["date"] == dt.date(2026, 7, 19)} == {"2026-07-19-0900"}
    kenang("forget", "--user", "default", "--day", "2026-07-18", "--yes", "--home", str(home.paths.home))
    assert dt.date(2026, 7, 18) not in {m["date"] for m in table(home, "messages")}
    assert not any(s["date"] == dt.date(2026, 7, 18) for s in table(home, "daily_summaries"))
    assert not (home.paths.archive / "daily_sessions/2026-07-18/2026-07-18.summary.md").exists()
    assert (home.paths.archive / "daily_sessions/2026-07-18/2026-07-18-0900.md").is_file()  # no --purge: it stays
    kenang("forget", "--user", "default", "--before", "2026-07-18", "--yes", "--purge", "--home", str(home.paths.home))
    assert {m["date"] for m in table(home, "messages")} == {dt.date(2026, 7, 19)}
    assert not list((home.paths.archive / "imports").rglob("*.json"))
    backfill(start=START, end=END, home=str(home.paths.home))
    assert {m["date"] for m in table(home, "messages")} == {dt.date(2026, 7, 19)}
    assert {m["session_id"] for m in table(home, "messages")} == {"2026-07-19-0900"}
    assert {d["status"] for d in table(home, "days") if d["date"] < dt.date(2026, 7, 19)} <= {"forgotten"}


def test_forget_takes_the_run_lock_waits_for_a_running_night_or_exits_75(home):
    _setup(home)
    held, release = threading.Event(), threading.Event()

    def night_running():
        with run_lock(home.paths.lock, "a-night"):
            held.set()
            release.wait(30)

    t = threading.Thread(target=night_running)
    t.start()
    held.wait(10)
    try:
        r = kenang("forget", "--user", "default", "--text", PHRASE, "--yes", "--home", str(home.paths.home))
        assert r.exit_code == 75 and "a-night" in r.stderr
        assert table(home, "tombstones") == []
        threading.Timer(1.0, release.set).start()
        r = kenang("forget", "--user", "default", "--text", PHRASE, "--yes", "--wait", "30", "--home", str(home.paths.home))
        assert r.exit_code == 0
    finally:
        release.set()
        t.join()
    assert len(table(home, "tombstones")) == 1


def test_retention_empties_old_days_every_night_and_purges_old_archive_days(tmp_path):
    from flows.config import init_home

    settings, _ = init_home(tmp_path / "home", {"summarizer": {"backend": "extractive"}, "embedder": {"backend": "none"},
                                                "retention": {"messages_days": 2, "archive_days": 3}})
    _drop_history(settings)
    _night(settings)  # today 2026-07-20: messages kept from 2026-07-18 on, the archive from 2026-07-17 on
    assert {m["date"] for m in table(settings, "messages")} == {dt.date(2026, 7, 18), dt.date(2026, 7, 19)}
    assert (settings.paths.archive / "imports/gudang-export.json").is_file()  # its 2026-07-17 conversation is kept
    _night(settings, now=dt.datetime(2026, 7, 22, 3, 0, tzinfo=JAKARTA))
    assert {m["date"] for m in table(settings, "messages")} == set()
    purged = {r["path"] for r in table(settings, "purge_log")}
    assert "daily_sessions/2026-07-18/2026-07-18-0900.md" in purged and all(r["why"].startswith("retention") for r in table(settings, "purge_log"))
    assert not (settings.paths.archive / "daily_sessions/2026-07-18/2026-07-18-0900.md").exists()
    assert "imports/gudang-export.json" in purged  # every day cut from it has gone, so the export goes too
    assert not (settings.paths.archive / "imports/gudang-export.json").exists()
    assert (settings.paths.archive / "daily_sessions/2026-07-19/2026-07-19-0900.md").is_file()
    assert verify(settings).problems == 0

