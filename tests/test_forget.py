"""kenang forget: after it, no file under the home holds what was forgotten, and nothing brings it back."""

from __future__ import annotations

import datetime as dt
import json
import stat
import threading

import duckdb
import pytest
from helpers import JAKARTA, NOW, drop, kenang, md, table

from flows.pipeline import backfill, nightly
from flows.store import core_memory, ledger
from flows.store.lock import run_lock
from flows.store.verify import verify
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
                "id": f"m{i}",
                "parent": "root" if i == 0 else f"m{i - 1}",
                "children": [f"m{i + 1}"] if i + 1 < len(turns) else [],
                "message": {
                    "id": f"m{i}",
                    "author": {"role": role, "name": None, "metadata": {}},
                    "create_time": ts + 60 * i,
                    "content": {"content_type": "text", "parts": [text]},
                    "status": "finished_successfully",
                    "metadata": {},
                    "recipient": "all",
                },
            }
        out.append(
            {
                "title": title,
                "create_time": ts,
                "update_time": ts,
                "mapping": mapping,
                "current_node": f"m{len(turns) - 1}",
                "conversation_id": f"conv-{n}",
                "id": f"conv-{n}",
            }
        )
    return json.dumps(out, ensure_ascii=False).encode()


EXPORT = chatgpt_export(
    (
        "Gudang",
        dt.datetime(2026, 7, 17, 9, 0, tzinfo=JAKARTA).timestamp(),
        [
            ("user", "Aku taruh kunci gudang di bawah pot, di teras."),
            ("assistant", "Oke. Podman sudah jalan di pve1."),
            ("user", "Makasih, besok lanjut Podman."),
        ],
    ),
    (
        "Backup",
        dt.datetime(2026, 7, 16, 20, 0, tzinfo=JAKARTA).timestamp(),
        [("user", "Restic ke nas.lan tiap jam 2 ya."), ("assistant", "Siap, restic dijadwalkan.")],
    ),
)


def _drop_history(settings) -> None:
    drop(
        settings,
        "2026-07-18-0900.md",
        md(
            "2026-07-18",
            "0900",
            ("user", "Pagi, lanjut setup Proxmox di pve1."),
            ("assistant", "Oke, kita buka Datacenter > Storage."),
            ("user", "Catatan: kunci gudang di bawah pot bunga."),
            ("assistant", "Dicatat: Kunci  Gudang di bawah POT."),
            ("user", "Aku lebih suka simpan kunci gudang di bawah pot saja."),
            ("user", "Terus backup restic jalan jam 2."),
            session_id="2026-07-18-0900",
        ),
    )
    drop(
        settings,
        "2026-07-19-0900.md",
        md(
            "2026-07-19",
            "0900",
            ("user", "Besok cek lagi restic di nas.lan."),
            ("assistant", "Baik, restic dicek besok."),
            session_id="2026-07-19-0900",
        ),
    )
    drop(
        settings,
        "2026-07-19-2000.md",
        md(
            "2026-07-19",
            "2000",
            ("user", "Btw, kunci gudang di bawah pot, jangan lupa."),
            ("assistant", "Siap."),
            session_id="2026-07-19-2000",
        ),
    )
    drop(settings, "gudang-export.json", EXPORT)


def _night(settings, now=NOW):
    return nightly(now=now, home=str(settings.paths.home))


def _holds(text: str) -> bool:
    w, p = words(text), words(PHRASE)
    return any(w[i : i + len(p)] == p for i in range(len(w) - len(p) + 1))


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
        elif p.suffix == ".arrow":  # a recall pack's rows (compressed batches)
            import pyarrow as pa

            t = pa.ipc.open_file(pa.OSFile(str(p))).read_all()
            body = "\n".join(json.dumps(r, default=str, ensure_ascii=False) for r in t.to_pylist())
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
                    body += "\n".join(
                        json.dumps(json.loads(line), ensure_ascii=False)
                        for line in ([body] if p.suffix == ".json" else body.splitlines())
                        if line.strip()
                    )
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
    out |= {
        f"{arch}/{r['original_path']}"
        for r in table(settings, "archive_files")
        if r["original_path"] and r["original_path"].startswith("imports/")
    }
    return out


def _setup(home) -> None:
    _drop_history(home)
    _night(home)
    assert (
        kenang("remember", "Kunci gudang di bawah pot bunga, teras depan.", "--home", str(home.paths.home)).exit_code
        == 0
    )
    assert kenang("remember", "Backups: restic to nas.lan at 02:00.", "--home", str(home.paths.home)).exit_code == 0
    everywhere = traces(home)
    # before: the phrase is in the tables, the summaries, the index, the candidates, core memory, the snapshot
    for where in (
        "warehouse/messages/",
        "warehouse/memory_chunks/",
        "warehouse/memory_candidates.parquet",
        "memory/default/MEMORY.md",
        "snapshot/default.md",
    ):
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
    assert r.stdout.startswith(
        "forgotten: 3 day(s) re-derived, 0 archived file(s) purged, 1 memory entry and 1 candidate(s)"
    )

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


def test_forget_text_takes_the_phrase_out_of_the_ledgers_older_months_file_too(home):
    """The ledger's older months are also kept together in one file (``ledger.refresh_history``)."""
    _setup(home)
    old = [
        {
            "user_id": "default",
            "date": dt.date(2026, m, 3),
            "status": "failed",
            "reason": f"cannot read {PHRASE}.md",
            "archive_fingerprint": f"fp-{m}",
            "sessions": 0,
            "messages": 0,
            "run_id": "r0",
            "updated_at": dt.datetime(2026, m, 4, tzinfo=dt.UTC),
        }
        for m in (1, 2, 3)
    ]
    ledger.write_days(home.paths.warehouse, old)
    assert ledger.refresh_history(home.paths.warehouse)
    assert ledger._HISTORY in " ".join(traces(home))  # the phrase is in it before the forget
    _forget(home)
    assert not [t for t in traces(home) if ledger._HISTORY in t]


def test_forget_with_purge_deletes_the_originals_logs_them_and_verify_says_purged(home):
    _setup(home)
    plan = kenang(
        "forget",
        "--user",
        "default",
        "--text",
        PHRASE,
        "--purge",
        "--dry-run",
        "--json",
        "--home",
        str(home.paths.home),
    )
    listed = json.loads(plan.stdout)
    assert listed["dry_run"] and listed["days"] == ["2026-07-17", "2026-07-18", "2026-07-19"]
    assert sorted(listed["archive_files"]) == [
        "daily_sessions/2026-07-17/chatgpt-conv-0.jsonl",
        "daily_sessions/2026-07-18/2026-07-18-0900.md",
        "daily_sessions/2026-07-19/2026-07-19-2000.md",
        "imports/gudang-export.json",
    ]
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
        "  1 core memory entry, 1 candidate(s)",
        "  the archived originals stay, byte-exact (add --purge to delete them too)",
    ]
    from click.testing import CliRunner

    from flows.cli.main import cli

    asked = CliRunner().invoke(
        cli, ["forget", "--user", "default", "--text", PHRASE, "--home", str(home.paths.home)], input="n\n"
    )
    assert asked.exit_code == 1 and "Forget it? [y/N]" in asked.stderr and "nothing was changed" in asked.stderr
    assert table(home, "tombstones") == [] and _holds(json.dumps([m["content"] for m in table(home, "messages")]))


def test_forget_a_session_a_day_and_before_a_date(home):
    _setup(home)
    kenang("forget", "--user", "default", "--session", "2026-07-19-2000", "--yes", "--home", str(home.paths.home))
    assert {m["session_id"] for m in table(home, "messages") if m["date"] == dt.date(2026, 7, 19)} == {
        "2026-07-19-0900"
    }
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


def test_a_session_id_no_session_has_is_refused_and_one_forgotten_before_is_not(home):
    _setup(home)
    from helpers import snapshot

    before = snapshot(home)
    h = ("--user", "default", "--home", str(home.paths.home))
    for extra in (("--dry-run",), ("--yes",), ("--dry-run", "--json")):
        r = kenang("forget", "--session", "nosuch", *h, *extra)
        assert r.exit_code == 2 and "no session of default has the id 'nosuch'" in r.stderr, r.stderr
        assert "kenang sql" in r.stderr and r.stdout == ""
    assert snapshot(home) == before and table(home, "tombstones") == []
    assert kenang("forget", "--session", "2026-07-19-2000", "--yes", *h).exit_code == 0
    again = kenang("forget", "--session", "2026-07-19-2000", "--dry-run", *h)  # forgotten already: no mistake
    assert again.exit_code == 0 and "0 message(s) in 0 session(s)" in again.stdout, again.stderr


def test_forget_takes_the_run_lock_waits_for_a_running_night_or_exits_75(home, clock):
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
        assert sum(clock.slept) == 2.0  # the short minimum wait, in polls
        clock.slept.clear()

        def night_ends(_seconds):  # the night ends while forget waits for it
            release.set()
            t.join()

        clock.on_sleep = night_ends
        r = kenang(
            "forget", "--user", "default", "--text", PHRASE, "--yes", "--wait", "30", "--home", str(home.paths.home)
        )
        assert r.exit_code == 0 and clock.slept == [0.5]  # it waited one poll, then took the lock
    finally:
        release.set()
        t.join()
    assert len(table(home, "tombstones")) == 1


def test_retention_empties_old_days_every_night_and_purges_old_archive_days(tmp_path):
    from flows.config import init_home
    from flows.store import mount

    settings, _ = init_home(
        tmp_path / "home",
        {
            "summarizer": {"backend": "extractive"},
            "embedder": {"backend": "none"},
            "retention": {"messages_days": 2, "archive_days": 3},
        },
    )
    mount.claim(settings)  # as `kenang init` does
    _drop_history(settings)
    _night(settings)  # today 2026-07-20: messages kept from 2026-07-18 on, the archive from 2026-07-17 on
    assert {m["date"] for m in table(settings, "messages")} == {dt.date(2026, 7, 18), dt.date(2026, 7, 19)}
    assert (settings.paths.archive / "imports/gudang-export.json").is_file()  # its 2026-07-17 conversation is kept
    _night(settings, now=dt.datetime(2026, 7, 22, 3, 0, tzinfo=JAKARTA))
    assert {m["date"] for m in table(settings, "messages")} == set()
    purged = {r["path"] for r in table(settings, "purge_log")}
    assert "daily_sessions/2026-07-18/2026-07-18-0900.md" in purged and all(
        r["why"].startswith("retention") for r in table(settings, "purge_log")
    )
    assert not (settings.paths.archive / "daily_sessions/2026-07-18/2026-07-18-0900.md").exists()
    assert "imports/gudang-export.json" in purged  # every day cut from it has gone, so the export goes too
    assert not (settings.paths.archive / "imports/gudang-export.json").exists()
    assert (settings.paths.archive / "daily_sessions/2026-07-19/2026-07-19-0900.md").is_file()
    assert verify(settings).problems == 0


# --- forget reaches everything: names, quarantine, a purge after a plain forget ---------

NAMED = "2026-07-19-kunci-gudang-di-bawah-pot.md"  # a session id made from this name holds the phrase
Q_REASON = "catatan-rumah.md"  # quarantined: its reason quotes the phrase
Q_NAME = "kunci_gudang_di_bawah_pot.txt"  # quarantined: its name holds the phrase ("_" cuts words in a name)
Q_BYTES = "catatan-rusak.jsonl"  # quarantined: its bytes hold the phrase


def _norm(text: str) -> str:
    """Lower case, every run of non-letters (spaces, '-', '_', punctuation) one space."""
    import re
    import unicodedata

    return " " + re.sub(r"[\W_]+", " ", unicodedata.normalize("NFKC", text).lower()) + " "


NEEDLE = _norm(PHRASE)


def _strings(value):
    """Every string in a decoded value (Parquet row, JSON document, numpy array), keys too."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, bytes):
        yield value.decode("utf-8", "replace")
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(k)
            yield from _strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _strings(v)


def _decoded(p) -> list[str]:
    """What a file says, decoded by its kind: Parquet (pyarrow, every column), numpy, JSON, DuckDB, text."""
    import numpy as np
    import pyarrow.parquet as pq

    raw = p.read_bytes()
    out = [raw.decode("utf-8", "replace"), raw.decode("latin-1")]
    if raw[:4] == b"PAR1":
        t = pq.read_table(p)
        out += list(_strings([t.column(c).to_pylist() for c in t.column_names]))
    elif raw[:6] == b"ARROW1":  # a recall pack's rows (compressed batches)
        import pyarrow as pa

        t = pa.ipc.open_file(pa.BufferReader(raw)).read_all()
        out += list(_strings([t.column(c).to_pylist() for c in t.column_names]))
    elif p.suffix == ".npy":
        a = np.load(p, allow_pickle=False)
        if a.dtype.kind in "US":
            out += [" ".join(str(x) for x in a.ravel())]
    elif p.suffix in (".json", ".jsonl"):
        for doc in [raw] if p.suffix == ".json" else raw.splitlines():
            if doc.strip():
                try:
                    out += list(_strings(json.loads(doc)))
                except ValueError:
                    pass
    elif p.suffix == ".duckdb":
        c = duckdb.connect(str(p), read_only=True)
        try:
            out += [
                r[0] or ""
                for r in c.sql("SELECT sql FROM duckdb_views() UNION ALL SELECT sql FROM duckdb_tables()").fetchall()
            ]
            for (name,) in c.sql("SELECT table_name FROM duckdb_tables()").fetchall():
                out += list(_strings([list(r) for r in c.sql(f'SELECT * FROM "{name}"').fetchall()]))
        finally:
            c.close()
    return out


def every_trace(settings) -> list[str]:
    """Every path under the home whose name, bytes or decoded content holds the phrase, in any case or spacing."""
    home = settings.paths.home
    found = []
    for p in sorted(home.rglob("*")):
        rel = p.relative_to(home).as_posix()
        if NEEDLE in _norm(rel):
            found.append(rel)
        elif p.is_symlink():
            import os

            if NEEDLE in _norm(os.readlink(p)):
                found.append(rel)
        elif p.is_file() and any(NEEDLE in _norm(s) for s in _decoded(p)):
            found.append(rel)
    return found


def _cli_night(settings, now=NOW):
    r = kenang("run", "--now", now.isoformat(), "--home", str(settings.paths.home))
    assert r.exit_code in (0, 1), r.stdout + r.stderr  # 1: files went to quarantine
    return r


def _setup_everywhere(home) -> None:
    """A real night's home where the phrase is in messages, a session id and file name, and quarantine."""
    _drop_history(home)
    drop(home, NAMED, md("2026-07-19", "1500", ("user", "Lampu teras mati lagi."), ("assistant", "Ganti bohlamnya.")))
    drop(home, Q_REASON, "## user · 2026 Kunci gudang di bawah POT\nisi catatan\n".encode())
    drop(home, Q_NAME, b"daftar belanja\n")
    drop(home, Q_BYTES, b'{"role": "user", "content": "kunci gudang di bawah pot"}\n{"role": "assist')
    _cli_night(home)
    assert (
        kenang("remember", "Kunci gudang di bawah pot bunga, teras depan.", "--home", str(home.paths.home)).exit_code
        == 0
    )
    found = every_trace(home)
    for where in (
        "warehouse/sessions/",
        "warehouse/messages/",
        "warehouse/memory_chunks/",
        "warehouse/compact/recall_pack/",
        "warehouse/runs/",
        "warehouse/quarantine/",
        "archive/daily_sessions/2026-07-19/.kenang-files.json",
        "archive/daily_sessions/2026-07-19/2026-07-19.summary.md",
        "memory/default/MEMORY.md",
        "snapshot/default.md",
    ):
        assert any(t.startswith(where) for t in found), (where, found)
    quarantined = [t for t in found if t.startswith("quarantine/")]
    assert len([t for t in quarantined if not t.endswith(".reason.json")]) == 3, found
    assert len([t for t in quarantined if t.endswith(".reason.json")]) == 2, found  # Q_BYTES's reason is clean


def _sessions_named(home) -> set[str]:
    return {s["session_id"] for s in table(home, "sessions") if s["date"] == dt.date(2026, 7, 19)}


def _verify_ok_and_rerun_is_a_noop(home) -> None:
    from helpers import snapshot

    v = kenang("verify", "--home", str(home.paths.home), "--json")
    assert v.exit_code == 0 and json.loads(v.stdout)["problems"] == 0, v.stdout
    before = snapshot(home)
    _cli_night(home)
    assert snapshot(home) == before
    assert every_trace(home) == []


def test_forget_then_purge_leaves_no_byte_under_the_home_that_holds_the_phrase(home):
    _setup_everywhere(home)
    r = _forget(home)
    assert r.stdout.rstrip().endswith(")") and "2 quarantined file(s) scrubbed" in r.stdout
    # the session whose id held the phrase is renamed, keyed and stable, and keeps what was said in it
    renamed = {s for s in _sessions_named(home) if s.startswith("forgotten-")}
    assert len(renamed) == 1 and len(next(iter(renamed))) == len("forgotten-") + 12
    assert any(m["content"] == "Lampu teras mati lagi." and m["session_id"] in renamed for m in table(home, "messages"))
    # without --purge only the originals keep it: archived and quarantined files, and what names them
    kept = every_trace(home)
    named_by = [t for t in kept if t.startswith("warehouse/quarantine/")]  # the row that names a quarantined file
    assert len(named_by) == 1 and set(kept) - set(named_by) == {
        "archive/daily_sessions/2026-07-17/chatgpt-conv-0.jsonl",
        "archive/daily_sessions/2026-07-18/2026-07-18-0900.md",
        "archive/daily_sessions/2026-07-19/2026-07-19-2000.md",
        f"archive/daily_sessions/2026-07-19/{NAMED}",
        "archive/imports/gudang-export.json",
        f"quarantine/2026-07-20/{Q_REASON}",
        f"quarantine/2026-07-20/{Q_BYTES}",
        f"quarantine/2026-07-20/{Q_NAME}",
        # the records that name an original whose name holds it: its manifest, its archive_files row, its reason file
        "archive/daily_sessions/2026-07-19/.kenang-files.json",
        "warehouse/archive_files/date=2026-07-19/user_id=default/data.parquet",
        f"quarantine/2026-07-20/{Q_NAME}.reason.json",
    }, kept
    assert not any(_holds(r["reason"]) for r in table(home, "quarantine"))
    from helpers import snapshot

    before = snapshot(home)
    again = _forget(home)  # the same forget again changes nothing
    assert again.stdout.startswith(
        "forgotten: 0 day(s) re-derived, 0 archived file(s) purged, 0 memory entries and 0 candidate(s) removed (run "
    ), again.stdout
    assert snapshot(home) == before

    plan = json.loads(
        kenang(
            "forget",
            "--user",
            "default",
            "--text",
            PHRASE,
            "--purge",
            "--dry-run",
            "--json",
            "--home",
            str(home.paths.home),
        ).stdout
    )
    assert sorted(plan["archive_files"]) == [
        "daily_sessions/2026-07-17/chatgpt-conv-0.jsonl",
        "daily_sessions/2026-07-18/2026-07-18-0900.md",
        "daily_sessions/2026-07-19/2026-07-19-2000.md",
        f"daily_sessions/2026-07-19/{NAMED}",
        "imports/gudang-export.json",
    ]
    assert len(plan["quarantine_files"]) == 3 and plan["days"] == ["2026-07-17", "2026-07-18", "2026-07-19"]
    r = _forget(home, "--purge")
    assert "5 archived file(s) purged" in r.stdout and "3 quarantined file(s) purged" in r.stdout
    assert every_trace(home) == []
    assert not any(p.is_file() for p in home.paths.quarantine.rglob("*"))
    assert table(home, "quarantine") == []
    assert len([x for x in table(home, "purge_log") if x["path"].startswith("quarantine/")]) == 3
    assert all(t["purge"] for t in table(home, "tombstones"))  # re-dropped originals are kept out from now on
    _verify_ok_and_rerun_is_a_noop(home)


def test_purge_first_leaves_no_byte_under_the_home_that_holds_the_phrase(home):
    _setup_everywhere(home)
    r = _forget(home, "--purge")
    assert "5 archived file(s) purged" in r.stdout and "3 quarantined file(s) purged" in r.stdout
    assert every_trace(home) == []
    assert (home.paths.archive / "daily_sessions/2026-07-19/2026-07-19-0900.md").is_file()  # never held it: stays
    _verify_ok_and_rerun_is_a_noop(home)
    _rerun_everything(home)
    assert every_trace(home) == []


def test_retention_ages_quarantined_files_out_with_their_reason_files(tmp_path):
    from flows.config import init_home
    from flows.store import mount

    settings, _ = init_home(
        tmp_path / "home",
        {"summarizer": {"backend": "extractive"}, "embedder": {"backend": "none"}, "retention": {"archive_days": 3}},
    )
    mount.claim(settings)  # as `kenang init` does
    drop(settings, Q_NAME, b"daftar belanja\n")
    _night(settings)  # quarantined on 2026-07-20
    assert [r["original_path"] for r in table(settings, "quarantine")] == [Q_NAME]
    _night(settings, now=dt.datetime(2026, 7, 23, 3, 0, tzinfo=JAKARTA))  # 3 days on: kept
    assert len(list(settings.paths.quarantine.rglob("*"))) == 3  # the day folder, the file, its reason file
    _night(settings, now=dt.datetime(2026, 7, 24, 3, 0, tzinfo=JAKARTA))
    assert list(settings.paths.quarantine.rglob("*")) == [] and table(settings, "quarantine") == []
    log = table(settings, "purge_log")
    assert [(r["path"], r["why"]) for r in log] == [(f"quarantine/2026-07-20/{Q_NAME}", "retention:archive_days=3")]
    assert verify(settings).problems == 0


def test_a_session_forgotten_then_purged_loses_its_original_too(home):
    _setup(home)
    original = home.paths.archive / "daily_sessions/2026-07-19/2026-07-19-2000.md"
    args = ("forget", "--user", "default", "--session", "2026-07-19-2000", "--yes", "--home", str(home.paths.home))
    assert kenang(*args).exit_code == 0 and original.is_file()
    r = kenang(*args, "--purge")
    assert r.exit_code == 0 and "1 archived file(s) purged" in r.stdout, r.stdout
    assert not original.exists() and (home.paths.archive / "daily_sessions/2026-07-19/2026-07-19-0900.md").is_file()
    assert verify(home).problems == 0


def test_a_name_that_holds_a_phrase_is_renamed_the_same_way_every_time_and_only_with_the_homes_key():
    from transforms.forget import Forgetting, Tombstone, phrase_digest

    def forgetting(key: bytes) -> Forgetting:
        return Forgetting.of(key, [Tombstone("t", "u", "text", phrase_digest(key, words(PHRASE)), len(words(PHRASE)))])

    f = forgetting(b"k" * 32)
    assert f.names("2026-07-19-Kunci-Gudang-di-bawah-POT") and f.names("kunci_gudang_di_bawah_pot")
    assert not f.names("kunci-gudang-di-atas-pot") and not f.names(None)
    renamed = f.rename("2026-07-19-kunci-gudang-di-bawah-pot")
    assert renamed == f.rename("2026-07-19-kunci-gudang-di-bawah-pot") != f.rename("kunci_gudang_di_bawah_pot")
    assert renamed.startswith("forgotten-") and renamed != forgetting(b"j" * 32).rename(
        "2026-07-19-kunci-gudang-di-bawah-pot"
    )
    assert f.rename("2026-07-19-0900") == "2026-07-19-0900"
    name = f.rename_file("kunci_gudang_di_bawah_pot.reason.json")
    assert name.startswith("forgotten-") and name.endswith(".reason.json")
    assert f.rename_path("daily_sessions/2026-07-19/kunci gudang di bawah pot.md").startswith(
        "daily_sessions/2026-07-19/forgotten-"
    )
    assert f.scrub_value({"file": "kunci_gudang_di_bawah_pot.txt", "n": [1, "Kunci gudang di bawah pot!"]}) == {
        "file": "[FORGOTTEN].txt",
        "n": [1, "[FORGOTTEN]!"],
    }


# --- a purge takes only what holds the phrase, and only the user's -----------------------


def _two_users(home) -> None:
    """default and alice, each with files; alice's quarantine holds a link (a row without a user) and a .txt."""
    import os

    from helpers import OLD

    drop(
        home,
        "2026-07-18-0900.md",
        md("2026-07-18", "0900", ("user", "Kunci gudang ada di bawah pot."), ("assistant", "Oke.")),
    )
    drop(
        home,
        "2026-07-18-1000.md",
        md("2026-07-18", "1000", ("user", "Kuncinya hilang. MD file ini penting."), ("assistant", "Oke.")),
    )
    drop(home, "2026-07-18-1100.md", md("2026-07-18", "1100", ("user", "Restic backup jalan."), ("assistant", "Oke.")))
    drop(home, "readme.txt", b"daftar belanja\n")  # quarantined: its reason is kenang's words ("supported: .md")
    drop(
        home,
        "alice/2026-07-18-0900.md",
        md("2026-07-18", "0900", ("user", "Kunci gudang alice di laci."), ("assistant", "Oke.")),
    )
    drop(home, "alice/2026-07-17-restic.md", md("2026-07-17", "0900", ("user", "Restic alice."), ("assistant", "Oke.")))
    drop(home, "alice/notes.txt", b"restic notes\n")  # quarantined, alice's row
    link = home.paths.active / "alice" / "kunci-link.md"
    os.symlink("/nonexistent/kunci", link)  # quarantined as a link: its row names no user
    os.utime(link, (OLD, OLD), follow_symlinks=False)
    _cli_night(home)


def _plan(home, user: str, text: str) -> dict:
    r = kenang(
        "forget", "--user", user, "--text", text, "--purge", "--dry-run", "--json", "--home", str(home.paths.home)
    )
    assert r.exit_code == 0, r.stderr
    return json.loads(r.stdout)


def test_a_purge_takes_only_the_files_that_hold_the_phrase_never_for_an_extension_or_kenangs_words(home):
    _two_users(home)
    # "md" is in every .md file's name and in readme.txt's reason, but said only in one file
    plan = _plan(home, "default", "md")
    assert plan["archive_files"] == ["daily_sessions/2026-07-18/2026-07-18-1000.md"] and plan["quarantine_files"] == []
    assert _plan(home, "default", "supported")["quarantine_files"] == []  # a word of readme.txt's reason only
    assert _plan(home, "default", "jsonl")["archive_files"] == []
    # "kunci" is no part of "kuncinya"
    assert _plan(home, "default", "kunci")["archive_files"] == ["daily_sessions/2026-07-18/2026-07-18-0900.md"]
    _forget_as(home, "default", "md")
    assert (home.paths.archive / "daily_sessions/2026-07-18/2026-07-18-0900.md").is_file()
    assert {s["archive_path"] for s in table(home, "sessions") if s["user_id"] == "default"} == {
        "daily_sessions/2026-07-18/2026-07-18-0900.md",
        "daily_sessions/2026-07-18/2026-07-18-1100.md",
    }
    assert (home.paths.quarantine / "2026-07-20/readme.txt").is_file()
    assert verify(home).problems == 0


def _forget_as(home, user: str, text: str, *extra: str):
    r = kenang("forget", "--user", user, "--text", text, "--purge", "--yes", "--home", str(home.paths.home), *extra)
    assert r.exit_code == 0, r.stderr
    return r


def test_a_users_forget_never_deletes_or_rewrites_another_users_files_or_records(home):
    _two_users(home)
    r = kenang("forget", "--user", "alice", "--day", "2026-07-17", "--purge", "--yes", "--home", str(home.paths.home))
    assert r.exit_code == 0, r.stderr
    alice_log = [x for x in table(home, "purge_log") if x["user_id"] == "alice"]
    alice_quarantine = sorted((q["path"], q["reason"]) for q in table(home, "quarantine"))
    alice_said = sorted(m["content"] for m in table(home, "messages") if m["user_id"] == "alice")
    assert alice_log and any("restic" in x["path"] for x in alice_log)
    assert any("kunci" in p for p, _ in alice_quarantine) and any("notes" in reason for _, reason in alice_quarantine)

    _forget_as(home, "default", "restic")  # in alice's purge_log path
    _forget_as(home, "default", "notes")  # in alice's quarantine reason
    assert [x for x in table(home, "purge_log") if x["user_id"] == "alice"] == alice_log
    assert sorted((q["path"], q["reason"]) for q in table(home, "quarantine")) == alice_quarantine
    plan = _plan(home, "default", "kunci")
    assert plan["quarantine_files"] == []  # alice's link, though its row names no user
    _forget_as(home, "default", "kunci")
    assert sorted((q["path"], q["reason"]) for q in table(home, "quarantine")) == alice_quarantine
    assert sorted(m["content"] for m in table(home, "messages") if m["user_id"] == "alice") == alice_said
    assert (home.paths.archive / "daily_sessions/2026-07-18/alice/2026-07-18-0900.md").is_file()
    assert (home.paths.quarantine / "2026-07-20/alice__kunci-link.md").is_symlink()
    assert verify(home).problems == 0
    # alice's own forget reaches her link
    assert _plan(home, "alice", "kunci")["quarantine_files"] == ["2026-07-20/alice__kunci-link.md"]


def test_a_phrase_hidden_by_json_escapes_is_found_by_a_purge_after_a_plain_forget(home):
    from helpers import jsonl

    drop(
        home,
        "2026-07-18-1200.jsonl",
        b'{"role": "user", "content": "Kunci\\ngudang di\\tbawah p\\u006ft", '
        b'"ts": "2026-07-18T12:00:00+07:00"}\n'
        b'{"role": "assistant", "content": "ok", "ts": "2026-07-18T12:00:30+07:00"}\n',
    )
    drop(
        home,
        "2026-07-18-1300.jsonl",
        jsonl(
            {"role": "user", "content": "kunci gudang di atas pot", "ts": "2026-07-18T13:00:00+07:00"},
            {"role": "assistant", "content": "ok", "ts": "2026-07-18T13:00:30+07:00"},
        ),
    )
    _cli_night(home)
    assert any(_holds(m["content"]) for m in table(home, "messages"))
    _forget(home)
    assert not any(_holds(m["content"]) for m in table(home, "messages"))
    r = _forget(home, "--purge")
    assert "1 archived file(s) purged" in r.stdout, r.stdout
    assert not (home.paths.archive / "daily_sessions/2026-07-18/2026-07-18-1200.jsonl").exists()
    assert (home.paths.archive / "daily_sessions/2026-07-18/2026-07-18-1300.jsonl").is_file()
    assert every_trace(home) == []


def test_a_forget_killed_midway_shows_as_interrupted_and_the_same_forget_again_finishes_it(home):
    import subprocess
    import sys

    from helpers import CRASHED, snapshot

    _setup_everywhere(home)
    code = (
        "import os, flows.store.faults as f\n"
        f"f.checkpoint = lambda name: os._exit({CRASHED}) if name == 'forget.purged' else None\n"
        "from flows.cli.main import main\n"
        f"main(['forget', '--user', 'default', '--text', {PHRASE!r}, '--purge', '--yes', '--home', {str(home.paths.home)!r}])\n"
    )
    child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert child.returncode == CRASHED, child.stderr[-2000:]
    assert every_trace(home) != []  # killed after the purge: the tables and summaries still hold it
    status = json.loads(kenang("status", "--json", "--home", str(home.paths.home)).stdout)
    assert [r["status"] for r in status["runs"] if r["flow"] == "forget"] == ["interrupted"]

    _forget(home, "--purge")
    assert every_trace(home) == []
    assert not any(p.is_file() for p in home.paths.quarantine.rglob("*"))
    _verify_ok_and_rerun_is_a_noop(home)
    before = snapshot(home)
    _forget(home, "--purge")  # and once more: nothing changes
    assert snapshot(home) == before


def test_the_forget_key_is_never_readable_by_others_not_even_while_it_is_written(home, monkeypatch):
    import os

    from flows.store import fsio

    seen: list[int] = []
    real = fsio._fsync_path

    def fsync(path):  # the key's temporary file, written and not yet chmod-ed or renamed
        if path.name.endswith(".kenang-forget-key.part"):
            seen.append(stat.S_IMODE(os.stat(path).st_mode))
        real(path)

    monkeypatch.setattr(fsio, "_fsync_path", fsync)
    old = os.umask(0o022)
    try:
        _drop_history(home)
        _night(home)
        _forget(home)
    finally:
        os.umask(old)
    key = home.paths.home / ".kenang-forget-key"
    assert seen == [0o600] and stat.S_IMODE(key.stat().st_mode) == 0o600 and len(key.read_bytes()) == 32
    logged = "\n".join(json.dumps(r, default=str) for r in table(home, "runs"))
    assert key.read_bytes().hex() not in logged


def test_a_phrase_in_full_width_letters_is_forgotten_and_a_text_without_it_is_never_rewritten():
    from transforms.forget import MARKER, Forgetting, Tombstone, phrase_digest

    key = b"k" * 32
    f = Forgetting.of(key, [Tombstone("t", "u", "text", phrase_digest(key, words(PHRASE)), len(words(PHRASE)))])
    assert f.scrub("Catatan: ＫＵＮＣＩ ＧＵＤＡＮＧ di bawah pot.") == (f"Catatan: {MARKER}.", 1)
    assert f.names("ｋｕｎｃｉ_ｇｕｄａｎｇ_di_bawah_pot")
    for kept in ("Lanjut besok… ½ jam lagi, ﬁle di pve1.", "Ｐｏｄｍａｎ sudah jalan.", "kuncinya gudang di bawah pot"):
        assert f.scrub(kept) == (kept, 0) and f.scrub_value({"x": [kept]}) == {"x": [kept]}


def test_a_broken_json_file_in_quarantine_whose_phrase_hides_behind_escapes_is_purged(home):
    drop(home, "rusak.jsonl", b'{"role": "user", "content": "Kunci\\ngudang di\\tbawah p\\u006ft"}\n{"role": "assist')
    drop(home, "rusak-juga.json", b'{"title": "k\\u0075nci gudang di bawah pot", "mapping": {')
    drop(home, "2026-07-18-0900.md", md("2026-07-18", "0900", ("user", "Restic jalan."), ("assistant", "Oke.")))
    _cli_night(home)
    assert len(table(home, "quarantine")) == 2
    r = _forget(home, "--purge")
    assert "2 quarantined file(s) purged" in r.stdout, r.stdout
    assert table(home, "quarantine") == [] and not any(p.is_file() for p in home.paths.quarantine.rglob("*"))


def test_another_users_candidates_keep_their_session_ids(home):
    drop(
        home,
        "alice/2026-07-18-kunci-gudang-di-bawah-pot.md",
        md("2026-07-18", "0900", ("user", "Aku lebih suka teh manis tanpa gula."), ("assistant", "Dicatat.")),
    )
    _drop_history(home)
    _cli_night(home)
    theirs = [c for c in table(home, "memory_candidates") if c["user_id"] == "alice"]
    assert any(any("kunci" in s for s in c["session_ids"]) for c in theirs), theirs
    _forget(home)
    assert [c for c in table(home, "memory_candidates") if c["user_id"] == "alice"] == theirs


def test_a_phrase_said_in_full_width_letters_leaves_the_tables(home):
    drop(
        home,
        "2026-07-18-0900.md",
        md("2026-07-18", "0900", ("user", "Catatan: ＫＵＮＣＩ ＧＵＤＡＮＧ di bawah pot."), ("assistant", "Oke.")),
    )
    _cli_night(home)
    _forget(home)
    assert [m["content"] for m in table(home, "messages")] == ["Catatan: [FORGOTTEN].", "Oke."]


def test_a_pin_forgotten_leaves_the_files_and_sessions_named_by_that_time_alone(home):
    drop(home, "2026-07-18-1100.md", md("2026-07-18", "1100", ("user", "Restic jalan."), ("assistant", "Oke.")))
    drop(
        home,
        "2026-07-18-1200.md",
        md("2026-07-18", "1200", ("user", "PIN ATM baru 1100, jangan lupa."), ("assistant", "Oke.")),
    )
    _cli_night(home)
    plan = _plan(home, "default", "1100")
    assert plan["archive_files"] == ["daily_sessions/2026-07-18/2026-07-18-1200.md"], plan
    _forget_as(home, "default", "1100")
    assert "2026-07-18-1100" in {s["session_id"] for s in table(home, "sessions")}
    assert (home.paths.archive / "daily_sessions/2026-07-18/2026-07-18-1100.md").is_file()
    assert not any("1100," in m["content"] for m in table(home, "messages"))


def _every_file(settings) -> dict[str, bytes]:
    home = settings.paths.home
    return {p.relative_to(home).as_posix(): p.read_bytes() for p in sorted(home.rglob("*")) if p.is_file()}


def test_a_home_restored_without_its_forget_key_refuses_to_rebuild_until_the_key_is_back(home):
    from flows.store.tombstones import ForgetKeyMissing

    _drop_history(home)
    _cli_night(home)
    _forget(home)
    originals = frozenset(_originals(home))
    assert traces(home, skip=originals) == []
    key_file = home.paths.home / ".kenang-forget-key"
    saved = key_file.read_bytes()
    key_file.unlink()  # a home restored from a backup that left the key out
    drop(
        home,
        "2026-07-20-0900.md",
        md(
            "2026-07-20",
            "0900",
            ("user", "Kunci gudang di bawah pot, ingat."),
            ("assistant", "Siap."),
            session_id="2026-07-20-0900",
        ),
    )
    export = home.paths.home.parent / "gudang-export.json"  # outside the home
    export.write_bytes(EXPORT)
    before = _every_file(home)

    v = kenang("verify", "--home", str(home.paths.home))
    assert v.exit_code == 1 and "FORGET KEY MISSING" in v.stdout and str(key_file) in v.stdout, v.stdout
    assert "restore it from the backup that holds this home" in v.stdout
    assert json.loads(kenang("verify", "--json", "--home", str(home.paths.home)).stdout)["forget_key"]
    later = dt.datetime(2026, 7, 21, 3, 0, tzinfo=JAKARTA)
    for args in (
        ("run", "--now", later.isoformat()),
        ("backfill", "--start", "2026-07-01", "--end", "2026-07-31"),
        ("forget", "--user", "default", "--text", "restic", "--yes"),
        ("forget", "--user", "default", "--text", PHRASE, "--purge", "--yes"),
        ("import", str(export)),
    ):
        r = kenang(*args, "--home", str(home.paths.home))
        assert r.exit_code == 1, (args, r.stdout, r.stderr)
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and str(key_file) in lines[0] and "restore it from the backup" in lines[0], r.stderr
        assert "Traceback" not in r.stdout + r.stderr
    with pytest.raises(ForgetKeyMissing):  # a deployment's run, without the CLI, stops too
        backfill(start=START, end=END, home=str(home.paths.home))
    assert _every_file(home) == before  # nothing written, no new key made
    assert not key_file.exists()

    key_file.write_bytes(b"short")  # a damaged key is no key either
    assert "is damaged (5 bytes, not 32)" in kenang("verify", "--home", str(home.paths.home)).stdout
    assert kenang("run", "--now", later.isoformat(), "--home", str(home.paths.home)).exit_code == 1

    key_file.write_bytes(saved)  # restored: everything works again, and the phrase stays forgotten
    key_file.chmod(0o600)
    _cli_night(home, later)
    assert (
        kenang("backfill", "--start", "2026-07-01", "--end", "2026-07-31", "--home", str(home.paths.home)).exit_code
        == 0
    )
    assert traces(home, skip=frozenset(_originals(home))) == []
    v = kenang("verify", "--json", "--home", str(home.paths.home))
    assert v.exit_code == 0 and json.loads(v.stdout)["problems"] == 0, v.stdout
    assert (
        kenang("forget", "--user", "default", "--text", "restic", "--yes", "--home", str(home.paths.home)).exit_code
        == 0
    )
    assert key_file.read_bytes() == saved


def test_a_forgotten_name_leaves_the_people_a_transcript_declares_and_the_note(home):
    transcript = md(
        "2026-07-19",
        "1037",
        ("user", "Pagi! Lanjut setup Proxmox."),
        ("assistant", "Oke, buka Options > Start order."),
        session_id="s-people",
    ).replace(b"session_id: s-people\n", b"session_id: s-people\npeople: [Dimas Pratama, Sari]\n")
    drop(home, "2026-07-19-1037.md", transcript)
    _night(home)
    note = home.paths.archive / "daily_sessions/2026-07-19/2026-07-19.summary.md"
    assert table(home, "sessions")[0]["people"] == ["Dimas Pratama", "Sari"] and "Dimas Pratama" in note.read_text()

    r = kenang("forget", "--user", "default", "--text", "dimas pratama", "--yes", "--home", str(home.paths.home))
    assert r.exit_code == 0, r.stderr
    assert table(home, "sessions")[0]["people"] == ["Sari"]
    assert "Dimas" not in note.read_text() and "Sari" in note.read_text()
