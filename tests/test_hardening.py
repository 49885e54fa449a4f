"""Issue 10's holes, each reproduced as a user would meet it: through the CLI, on a scratch home.

- No file can stop a night: impossible dates, a FIFO, hidden names, a parser that
  blows up, one session_id in two files, a keyword-only index asked for vectors, a
  held lock, a name that is no UTF-8 or holds a newline or ``]]``, a token as user id,
  an mtime far in the future, a folder that cannot be listed.
- Paths are checked before anything moves: overlapping folders, system folders, an
  unmounted, foreign, read-only or full archive, numeric settings out of range; an
  archive unmounted in the middle of a run.
- Tampering is caught: a stray file in the archive (also with a line added to its
  manifest), a summary or MEMORY_INDEX edited by hand, a warehouse partition
  overwritten (archive_files rebuilt from the manifest; runs and quarantine accepted).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from helpers import NOW, OLD, drop, jsonl, kenang, md, table

from flows.store import warehouse
from flows.store.mount import MARKER
from flows.store.verify import verify

pytestmark = pytest.mark.usefixtures("prefect_api")

NOW_S = NOW.isoformat()
GOOD = md("2026-07-19", "1000", ("user", "tetap jalan"), ("assistant", "oke"))


def run(home, *extra: str):
    return kenang("run", "--home", str(home.paths.home), "--now", NOW_S, *extra)


def run_json(home, *extra: str) -> tuple[int, dict]:
    r = run(home, "--json", *extra)
    out = r.stdout
    return r.exit_code, json.loads(out[out.index("{") :])


def quarantined(home) -> dict[str, dict]:
    return {r["original_path"]: r for r in table(home, "quarantine")}


def archived(home) -> list[str]:
    return sorted(r["path"] for r in table(home, "archive_files"))


def verify_json(home, *extra: str) -> tuple[int, dict]:
    r = kenang("verify", "--home", str(home.paths.home), "--json", *extra)
    return r.exit_code, json.loads(r.stdout)


def backfill_day(home, day: str = "2026-07-19"):
    return kenang("backfill", "--home", str(home.paths.home), "--start", day, "--end", day)


# --- 2. no file can stop a night -------------------------------------------------------


@pytest.mark.parametrize(
    "name,data,what",
    [
        (
            "y9999.jsonl",
            jsonl({"role": "user", "content": "halo", "timestamp": "9999-12-31T10:00:00+07:00"}),
            "9999-12-31",
        ),
        (
            "y0001.jsonl",
            jsonl({"role": "user", "content": "halo", "timestamp": "0001-01-01T00:00:00+07:00"}),
            "0001-01-01",
        ),
        ("y1969.md", md("1969-07-20", "2017", ("user", "one small step")), "1969-07-20"),
        (
            "future.jsonl",
            jsonl({"role": "user", "content": "besok", "timestamp": "2026-07-23T10:00:00+07:00"}),
            "2026-07-23",
        ),
        ("9999-12-31-x.md", b"## user\nhalo tanpa jam\n", "9999-12-31"),
    ],
    ids=["year-9999", "year-0001", "before-1970", "two-days-past-now", "name-9999-12-31"],
)
def test_an_impossible_date_is_a_bad_timestamp_and_the_night_goes_on(home, name, data, what):
    drop(home, "good.md", GOOD)
    drop(home, name, data)
    code, result = run_json(home)
    assert code == 0
    q = quarantined(home)[name]
    assert q["kind"] == "bad_timestamp" and what in q["reason"]
    assert archived(home) == ["daily_sessions/2026-07-19/good.md"] and result["load"]["loaded"] == 1
    assert not (home.paths.active / name).exists()
    assert run(home).exit_code == 0  # and the next night is not stopped either


def test_a_fifo_is_reported_and_left_in_place(home):
    drop(home, "good.md", GOOD)
    fifo = home.paths.active / "pipe.md"
    os.mkfifo(fifo)
    os.utime(fifo, (NOW.timestamp() - 86400,) * 2)
    code, result = run_json(home)
    assert code == 0 and fifo.exists() and not fifo.is_file()
    assert result["ingest"]["skipped"] == {"not_regular": 1}
    assert result["ingest"]["skipped_items"] == [["pipe.md", "not_regular"]]
    assert archived(home) == ["daily_sessions/2026-07-19/good.md"] and table(home, "quarantine") == []
    r = kenang("status", "--home", str(home.paths.home))
    assert r.exit_code == 0
    out = r.stdout
    assert "skipped in active/" in out and "pipe.md" in out and "cannot be moved safely" in out


def test_hidden_files_and_folders_are_counted_never_silently_ignored(home):
    drop(home, "good.md", GOOD)
    drop(home, ".good.md.swp", b"vim swap")
    drop(home, ".cache/state.md", GOOD)
    drop(home, "gading/.draft.md", GOOD)
    code, result = run_json(home)
    assert code == 0
    assert result["ingest"]["skipped"] == {"hidden": 2, "hidden_folder": 1}
    assert sorted(result["ingest"]["skipped_items"]) == [
        [".cache/", "hidden_folder"],
        [".good.md.swp", "hidden"],
        ["gading/.draft.md", "hidden"],
    ]
    assert (home.paths.active / ".cache/state.md").exists() and (home.paths.active / ".good.md.swp").exists()
    text = kenang("run", "--home", str(home.paths.home), "--now", NOW_S).stdout
    assert "3 skipped (2 hidden, 1 hidden folder)" in text and ".cache/" in text
    status = json.loads(kenang("status", "--home", str(home.paths.home), "--json").stdout)
    assert {x["file"] for x in status["skipped_in_active"]} == {".cache/", ".good.md.swp", "gading/.draft.md"}


def test_an_error_no_parser_expected_quarantines_that_file_only(home, monkeypatch):
    import flows.stages.ingest

    real = flows.stages.ingest.parse_transcript

    def explode(name, data, *, tz):
        if name == "cursed.md":
            raise RecursionError("maximum recursion depth exceeded")
        return real(name, data, tz=tz)

    monkeypatch.setattr(flows.stages.ingest, "parse_transcript", explode)
    drop(home, "good.md", GOOD)
    drop(home, "cursed.md", GOOD.replace(b"tetap jalan", b"kutukan"))
    code, _ = run_json(home)
    q = quarantined(home)["cursed.md"]
    assert code == 0 and q["kind"] == "unreadable" and "RecursionError" in q["reason"]
    assert archived(home) == ["daily_sessions/2026-07-19/good.md"]


def test_one_session_id_in_two_files_is_one_session_that_names_both_files(home):
    drop(home, "a.md", md("2026-07-19", "1000", ("user", "satu"), session_id="shared"))
    drop(home, "b.md", md("2026-07-19", "1100", ("user", "dua"), session_id="shared"))
    code, result = run_json(home)
    assert code == 0
    (s,) = table(home, "sessions")
    assert s["session_id"] == "shared" and s["message_count"] == 2
    assert s["archive_paths"] == ["daily_sessions/2026-07-19/a.md", "daily_sessions/2026-07-19/b.md"]
    assert result["load"]["merged_sessions"] == [
        {"user_id": "default", "date": "2026-07-19", "session_id": "shared", "files": 2}
    ]
    drop(home, "c.md", md("2026-07-19", "1200", ("user", "tiga"), session_id="other"))
    assert "sessions read from several files with the same session_id" in run(home).stdout


def test_recall_in_vector_mode_on_a_keyword_only_index_says_so_in_one_line(home):
    drop(home, "good.md", GOOD)
    assert run(home).exit_code == 0
    r = kenang("recall", "--home", str(home.paths.home), "--mode", "vector", "jalan")
    code, err = r.exit_code, r.stderr
    assert code == 2 and "keyword-only" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


@pytest.mark.integration  # the holder and the run are child processes
def test_a_held_lock_gets_one_clear_line_and_exit_75(home):
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            (
                "import time, sys\nfrom pathlib import Path\nfrom flows.store.lock import run_lock\n"
                f"with run_lock(Path({str(home.paths.lock)!r}), 'holder-run'):\n"
                "    print('held', flush=True)\n    time.sleep(60)\n"
            ),
        ],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).parent.parent,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        out = subprocess.run(
            [sys.executable, "-m", "flows.cli", "run", "--home", str(home.paths.home)],
            capture_output=True,
            text=True,
            cwd=Path(__file__).parent.parent,
            timeout=120,
        )
    finally:
        holder.kill()
        holder.wait()
    assert out.returncode == 75
    assert out.stderr.strip().splitlines() == [out.stderr.strip()]  # one line
    assert "holder-run" in out.stderr and "--wait" in out.stderr and "Traceback" not in out.stderr


def test_a_name_that_is_no_utf8_is_archived_under_an_escaped_name(home):
    drop(home, "good.md", GOOD)
    drop(home, "gading/also-good.md", md("2026-07-19", "1100", ("user", "juga jalan")))
    raw = bytes(home.paths.active) + b"/bad\xffname.md"
    fd = os.open(raw, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        os.write(fd, md("2026-07-19", "1200", ("user", "nama yang aneh")))
    finally:
        os.close(fd)
    os.utime(raw, (OLD, OLD))
    code, result = run_json(home)
    assert code == 0
    assert result["load"]["loaded"] == 2 and result["quarantine"]["moved"] == 0
    assert archived(home) == [
        "daily_sessions/2026-07-19/bad\\xffname.md",
        "daily_sessions/2026-07-19/gading/also-good.md",
        "daily_sessions/2026-07-19/good.md",
    ]
    assert (home.paths.archive / "daily_sessions/2026-07-19" / "bad\\xffname.md").is_file()  # a literal backslash
    assert os.listdir(bytes(home.paths.active)) == [b"gading"] and os.listdir(home.paths.active / "gading") == []
    assert {m["content"] for m in table(home, "messages")} == {"tetap jalan", "oke", "juga jalan", "nama yang aneh"}
    r = kenang("verify", "--home", str(home.paths.home))
    assert r.exit_code == 0 and r.stdout.rstrip().endswith("OK"), r.stdout


def _session_ids(home, day="2026-07-19") -> list[str]:
    from transforms.frontmatter import parse_summary

    text = (home.paths.archive / "daily_sessions" / day / f"{day}.summary.md").read_text(encoding="utf-8")
    return [s.session_id for s in parse_summary(text).session_lines]


def _drop_odd_names(home):
    drop(home, "good.md", GOOD)
    drop(home, "new\nline.md", md("2026-07-19", "1100", ("user", "baris baru")))
    drop(home, "a]]b.md", md("2026-07-19", "1200", ("user", "kurung siku")))


def test_names_with_a_newline_or_double_brackets_load_and_their_summary_reads_back(home):
    from transforms.resolve import safe_session_id

    _drop_odd_names(home)
    code, result = run_json(home)
    assert code == 0 and result["load"]["sessions"] == 3 and result["summarize"]["summarized"] == 1
    assert archived(home) == [
        "daily_sessions/2026-07-19/a]]b.md",
        "daily_sessions/2026-07-19/good.md",
        "daily_sessions/2026-07-19/new\\x0aline.md",
    ]
    ids = _session_ids(home)  # parse_summary reads the written file back, every line checked
    assert len(ids) == 3 and ids[0] == "good" and ids[2] == safe_session_id("a]]b")
    assert ids[2].startswith("a__b-") and len(ids[2]) == len("a__b-") + 8
    assert all(i.isprintable() and "[" not in i and "]" not in i for i in ids)
    assert sorted(s["session_id"] for s in table(home, "sessions")) == sorted(ids)
    r = kenang("verify", "--home", str(home.paths.home))
    assert r.exit_code == 0 and r.stdout.rstrip().endswith("OK"), r.stdout


TOKEN = "npm_abcdefghij0123456789abcdefghij012345"


def test_a_token_used_as_user_id_becomes_one_stable_hash_everywhere(home):
    from schemas.tables import TABLES
    from transforms.frontmatter import parse_summary
    from transforms.redact import redact_identifier

    hashed = redact_identifier(TOKEN)
    assert hashed.startswith("redacted-") and len(hashed) == len("redacted-") + 12
    drop(home, f"{TOKEN}/x.md", GOOD)  # as the folder's name
    drop(
        home,
        "t.jsonl",
        jsonl({"role": "user", "content": "dari jsonl", "timestamp": "2026-07-19T21:00:00+07:00", "user_id": TOKEN}),
    )  # as the record's user_id
    code, result = run_json(home)
    assert code == 0 and result["load"]["sessions"] == 2 and result["quarantine"]["moved"] == 0
    r = kenang("sql", "--home", str(home.paths.home), "select distinct user_id from messages", "--json")
    assert r.exit_code == 0 and json.loads(r.stdout) == [{"user_id": hashed}]
    assert sorted((s["user_id"], s["archive_path"]) for s in table(home, "sessions")) == [
        (hashed, f"daily_sessions/2026-07-19/{hashed}/t.jsonl"),
        (hashed, f"daily_sessions/2026-07-19/{hashed}/x.md"),
    ]
    for name in TABLES:
        assert TOKEN not in json.dumps(table(home, name), default=str), name
    home_root = home.paths.home
    names = [p.relative_to(home_root).as_posix() for p in home_root.rglob("*") if p.parent != home.paths.active]
    assert not [n for n in names if TOKEN in n]
    assert (home.paths.archive / f"MEMORY_INDEX.{hashed}.md").is_file()
    summary = (home.paths.archive / f"daily_sessions/2026-07-19/{hashed}/2026-07-19.summary.md").read_text()
    assert parse_summary(summary).user_id == hashed and TOKEN not in summary
    derived = [
        home.paths.archive / f"MEMORY_INDEX.{hashed}.md",
        home.paths.archive / f"daily_sessions/2026-07-19/{hashed}/.kenang-files.json",
    ]
    assert all(TOKEN not in p.read_text() for p in derived)


def test_a_file_modified_in_the_far_future_is_a_bad_timestamp_not_a_file_that_waits_forever(home):
    year_2100 = 4102444800.0  # 2100-01-01T00:00:00Z
    drop(home, "good.md", GOOD)
    drop(home, "future.md", md("2026-07-19", "1100", ("user", "dari masa depan")), mtime=year_2100)
    soon = drop(home, "soon.md", md("2026-07-19", "1200", ("user", "jam komputer maju")), mtime=time.time() + 3600)
    code, result = run_json(home)
    assert code == 0
    q = quarantined(home)["future.md"]
    assert q["kind"] == "bad_timestamp"
    assert q["reason"] == "its modification time (2100-01-01T00:00:00+00:00) is more than a day in the future"
    assert not (home.paths.active / "future.md").exists()
    assert result["ingest"]["waiting_quiet"] == 1 and soon.exists()  # an hour ahead: within the slack, it waits
    assert archived(home) == ["daily_sessions/2026-07-19/good.md"]


def test_a_folder_that_cannot_be_listed_is_counted_as_skipped(home, monkeypatch):
    """The tests run as root, whom chmod 000 does not stop, so ``os.scandir`` is patched to
    refuse this one folder with PermissionError; that is the only thing here that is not real."""
    drop(home, "good.md", GOOD)
    hidden_from_us = drop(home, "locked/x.md", md("2026-07-19", "1100", ("user", "terkunci")))
    locked = os.fspath(home.paths.active / "locked")
    real = os.scandir

    def scandir(path="."):
        if os.fspath(path) == locked:
            raise PermissionError(13, "Permission denied", locked)
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    code, result = run_json(home)
    assert code == 0
    assert result["ingest"]["skipped"] == {"unreadable_folder": 1}
    assert result["ingest"]["skipped_items"] == [["locked/", "unreadable_folder"]]
    assert hidden_from_us.exists() and archived(home) == ["daily_sessions/2026-07-19/good.md"]
    assert table(home, "quarantine") == []
    r = kenang("status", "--home", str(home.paths.home))
    assert r.exit_code == 0
    assert "skipped in active/" in r.stdout and "locked/" in r.stdout and "a folder kenang may not list" in r.stdout
    status = json.loads(kenang("status", "--home", str(home.paths.home), "--json").stdout)
    assert status["skipped_in_active"] == [{"file": "locked/", "why": "unreadable_folder"}]


# --- 3. paths are checked before anything moves --------------------------------------------


@pytest.mark.parametrize(
    "paths,needles",
    [
        ("  active: .\n", ["paths.active", "kenang.yaml"]),
        ("  active: /\n", ["paths.active", "system folder"]),
        ("  archive: /etc\n", ["paths.archive", "system folder"]),
        ("  archive: warehouse/archive\n", ["paths.archive", "paths.warehouse", "overlap"]),
        ("  quarantine: active\n", ["paths.active", "paths.quarantine", "overlap"]),
    ],
    ids=["active-is-home", "active-is-root", "archive-is-etc", "archive-in-warehouse", "quarantine-is-active"],
)
def test_a_bad_layout_is_a_config_error_that_names_the_paths(home, paths, needles):
    cfg = home.paths.config_file
    text = cfg.read_text()
    key = paths.split(":")[0].strip()
    lines = [ln for ln in text.splitlines() if not ln.startswith(f"  {key}:")]
    cfg.write_text("\n".join(lines).replace("paths:", "paths:\n" + paths.rstrip("\n"), 1) + "\n")
    drop(home, "good.md", GOOD)
    before = sorted(p.name for p in home.paths.home.rglob("*"))
    r = run(home)
    assert r.exit_code == 2
    err = r.stderr
    assert all(n in err for n in needles), err
    assert sorted(p.name for p in home.paths.home.rglob("*")) == before


@pytest.mark.parametrize(
    "setting,needle",
    [
        ("recall:\n  related_decay: 1.5\n", "recall.related_decay: 1.5 must be <= 1"),
        ("analytics:\n  productive_min_importance: 0\n", "analytics.productive_min_importance: 0 must be >= 1"),
        ("analytics:\n  productive_min_importance: 11\n", "must be <= 10"),
        ("summarizer:\n  temperature: 5\n", "summarizer.temperature: 5 must be <= 2"),
        ("recall:\n  top_k: 0\n", "recall.top_k: 0 must be >= 1"),
    ],
)
def test_numeric_settings_out_of_range_are_config_errors(home, setting, needle):
    home.paths.config_file.write_text(
        "summarizer:\n  backend: extractive\nembedder:\n  backend: none\n" + setting
        if not setting.startswith(("summarizer", "embedder"))
        else setting
    )
    r = run(home)
    assert r.exit_code == 2
    assert needle in r.stderr


def test_an_unmounted_nas_archives_nothing_deletes_nothing_and_exits_degraded(home, tmp_path):
    mount_point = tmp_path / "nas"  # the empty folder of an absent mount
    mount_point.mkdir()
    cfg = home.paths.config_file
    cfg.write_text(cfg.read_text().replace("archive: archive", f"archive: {mount_point}"))
    src = drop(home, "good.md", GOOD)
    code, result = run_json(home)
    assert code == 3
    assert result["degraded"]["archive"] == "not_mounted" and MARKER in result["degraded"]["reason"]
    assert src.read_bytes() == GOOD and list(mount_point.iterdir()) == [] and table(home, "archive_files") == []
    r = run(home)
    assert r.exit_code == 3
    assert "DEGRADED NIGHT: archive not mounted" in r.stdout
    r = kenang("verify", "--home", str(home.paths.home))
    assert r.exit_code == 1
    assert "ARCHIVE NOT MOUNTED" in r.stdout
    # `kenang status` shows the nights that exited 3 as degraded, never as a plain "completed".
    r = kenang("status", "--home", str(home.paths.home), "--json")
    assert [(x["status"], x["degraded"]) for x in json.loads(r.stdout)["runs"][:2]] == [
        ("completed", "not_mounted")
    ] * 2
    r = kenang("status", "--home", str(home.paths.home))
    last = r.stdout.split("last runs:")[1]
    assert last.count("degraded (not mounted)") == 2 and " completed " not in last
    # The mount comes back (here: the real archive, with its marker): the next night archives.
    cfg.write_text(cfg.read_text().replace(f"archive: {mount_point}", "archive: archive"))
    assert run(home).exit_code == 0 and not src.exists() and archived(home) == ["daily_sessions/2026-07-19/good.md"]


def test_init_writes_no_marker_on_an_empty_mount_point_once_the_home_has_archived(home, tmp_path):
    drop(home, "good.md", GOOD)
    assert run(home).exit_code == 0 and archived(home) == ["daily_sessions/2026-07-19/good.md"]
    mount_point = tmp_path / "nas"  # the NAS is unmounted: its mount point is an empty local folder
    mount_point.mkdir()
    cfg = home.paths.config_file
    cfg.write_text(cfg.read_text().replace("archive: archive", f"archive: {mount_point}"))
    r = kenang("init", "--home", str(home.paths.home))
    assert r.exit_code == 2
    assert f"{mount_point} holds no {MARKER} marker" in r.stderr and "--claim-archive" in r.stderr
    assert list(mount_point.iterdir()) == []
    src = drop(home, "next.md", md("2026-07-19", "1300", ("user", "lagi")))
    code, result = run_json(home)
    assert code == 3 and result["degraded"]["archive"] == "not_mounted" and src.exists()
    # Told that the archive really is there now, init takes the folder.
    assert kenang("init", "--home", str(home.paths.home), "--claim-archive").exit_code == 0
    assert (mount_point / MARKER).is_file()


def test_a_run_never_creates_the_archive_root(home, tmp_path):
    gone = tmp_path / "nowhere" / "archive"
    cfg = home.paths.config_file
    cfg.write_text(cfg.read_text().replace("archive: archive", f"archive: {gone}"))
    drop(home, "good.md", GOOD)
    assert run(home).exit_code == 3 and not gone.exists() and not (tmp_path / "nowhere").exists()
    assert kenang("init", "--home", str(home.paths.home)).exit_code == 0 and (gone / MARKER).is_file()
    assert run(home).exit_code == 0 and (gone / "daily_sessions/2026-07-19/good.md").is_file()


def test_another_homes_archive_is_foreign_until_claimed(home):
    marker = home.paths.archive / MARKER
    os.replace(marker, marker.with_name("old"))
    marker.write_text(json.dumps({"kenang_archive": 1, "home_id": uuid.uuid4().hex, "home": "/elsewhere"}))
    src = drop(home, "good.md", GOOD)
    code, result = run_json(home)
    assert code == 3 and result["degraded"]["archive"] == "foreign" and "/elsewhere" in result["degraded"]["reason"]
    assert src.exists()
    assert kenang("init", "--home", str(home.paths.home)).exit_code == 2  # init keeps another home's marker ...
    assert kenang("init", "--home", str(home.paths.home), "--claim-archive").exit_code == 0  # ... unless told
    assert run(home).exit_code == 0 and not src.exists()


def test_a_full_archive_archives_nothing_but_loads_what_it_holds(home):
    drop(home, "good.md", GOOD)
    assert run(home).exit_code == 0
    cfg = home.paths.config_file
    cfg.write_text(cfg.read_text().replace("archive_min_free_mb: 64", "archive_min_free_mb: 10000000"))
    src = drop(home, "next.md", md("2026-07-19", "1300", ("user", "lagi")))
    code, result = run_json(home)
    assert (
        code == 3 and result["degraded"]["archive"] == "full" and "archive_min_free_mb" in result["degraded"]["reason"]
    )
    assert src.exists() and archived(home) == ["daily_sessions/2026-07-19/good.md"]
    assert result["archive"]["placed"] == 0


def _mount_tmpfs(where: Path, size: str) -> bool:
    where.mkdir(parents=True, exist_ok=True)
    return (
        subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True
        ).returncode
        == 0
    )


@pytest.fixture
def small_fs(tmp_path):
    where = tmp_path / "smallfs"
    if not _mount_tmpfs(where, "2m"):
        pytest.skip("this machine does not let the tests mount a tmpfs (needs CAP_SYS_ADMIN)")
    yield where
    subprocess.run(["umount", "-l", str(where)], capture_output=True)


def test_a_read_only_archive_archives_nothing_and_loads_what_it_holds(home, small_fs):
    cfg = home.paths.config_file
    cfg.write_text(
        cfg.read_text()
        .replace("archive: archive", f"archive: {small_fs}")
        .replace("archive_min_free_mb: 64", "archive_min_free_mb: 0")
    )
    assert kenang("init", "--home", str(home.paths.home)).exit_code == 0
    drop(home, "good.md", GOOD)
    assert run(home).exit_code == 0
    assert subprocess.run(["mount", "-o", "remount,ro", str(small_fs)]).returncode == 0
    src = drop(home, "next.md", md("2026-07-19", "1300", ("user", "lagi")))
    code, result = run_json(home)
    assert code == 3 and result["degraded"]["archive"] == "read_only" and "Read-only" in result["degraded"]["reason"]
    assert src.exists() and archived(home) == ["daily_sessions/2026-07-19/good.md"]


def test_a_really_full_archive_is_noticed_before_anything_is_copied(home, small_fs):
    cfg = home.paths.config_file
    cfg.write_text(
        cfg.read_text()
        .replace("archive: archive", f"archive: {small_fs}")
        .replace("archive_min_free_mb: 64", "archive_min_free_mb: 0")
    )
    assert kenang("init", "--home", str(home.paths.home)).exit_code == 0
    big = drop(home, "big.md", md("2026-07-19", "1000", ("user", "x" * 3_000_000)))
    code, result = run_json(home)
    assert code == 3 and result["degraded"]["archive"] == "full"
    assert big.exists() and not (small_fs / "daily_sessions").exists()


def test_the_archive_unmounted_mid_run_gets_no_folder_and_loses_nothing(home, monkeypatch):
    from flows.store import faults

    files = {
        "good.md": GOOD,
        "gading/b.md": md("2026-07-18", "1000", ("user", "kemarin")),
        "rina/c.md": md("2026-07-17", "1000", ("user", "lusa")),
    }
    for rel, data in files.items():
        drop(home, rel, data)
    marker = home.paths.archive / MARKER
    real = faults.checkpoint

    def unmount_after_the_first_file(name):  # the NAS goes away once the first copy is in place
        if name == "archive.placed" and marker.exists():
            marker.unlink()
        real(name)

    monkeypatch.setattr(faults, "checkpoint", unmount_after_the_first_file)
    r = run(home)
    monkeypatch.setattr(faults, "checkpoint", real)
    assert r.exit_code == 1
    assert "stage 'archive'" in r.stderr and f"{marker} is gone" in r.stderr
    # The batch's copies were staged while the archive was there; once its marker is gone
    # none is renamed in, and their temporary files are removed: only the first file is placed.
    in_archive = sorted(
        p.relative_to(home.paths.archive).as_posix()
        for p in (home.paths.archive / "daily_sessions").rglob("*")
        if not p.is_dir()
    )
    assert in_archive == ["daily_sessions/2026-07-19/good.md"]
    assert {rel: (home.paths.active / rel).read_bytes() for rel in files} == files  # every original still there
    assert table(home, "archive_files") == [] and table(home, "messages") == []
    # The mount comes back: the next night archives all three, the first one's copy recognised.
    assert kenang("init", "--home", str(home.paths.home)).exit_code == 0 and marker.is_file()
    code, result = run_json(home)
    assert code == 0 and result["archive"]["already_there"] == 1 and result["archive"]["placed"] == 2
    assert archived(home) == [
        "daily_sessions/2026-07-17/rina/c.md",
        "daily_sessions/2026-07-18/gading/b.md",
        "daily_sessions/2026-07-19/good.md",
    ]
    assert not [p for p in home.paths.active.rglob("*") if p.is_file()]
    assert len(table(home, "messages")) == 4


# --- 5. tampering is caught ---------------------------------------------------------------


def test_a_stray_file_in_the_archive_is_reported_never_loaded_until_adopted(home):
    drop(home, "good.md", GOOD)
    assert run(home).exit_code == 0
    stray = home.paths.archive / "daily_sessions/2026-07-19/stray.md"
    stray.write_bytes(md("2026-07-19", "1500", ("user", "planted memory")))
    r = kenang("backfill", "--home", str(home.paths.home), "--start", "2026-07-19", "--end", "2026-07-19", "--json")
    assert r.exit_code == 0
    result = json.loads(r.stdout)
    assert result["survey"]["unrecorded"] == ["daily_sessions/2026-07-19/stray.md"]
    assert all("planted" not in m["content"] for m in table(home, "messages"))
    assert all("planted" not in c["text"] for c in table(home, "memory_chunks"))
    r = kenang("verify", "--home", str(home.paths.home))
    assert r.exit_code == 1
    assert "UNRECORDED" in r.stdout
    r = kenang("adopt", "--home", str(home.paths.home), str(stray))
    assert r.exit_code == 0
    assert "adopted daily_sessions/2026-07-19/stray.md" in r.stdout
    assert oct(stray.stat().st_mode & 0o777) == "0o444"
    assert run(home).exit_code == 0
    assert any("planted" in m["content"] for m in table(home, "messages"))
    assert kenang("verify", "--home", str(home.paths.home)).exit_code == 0


def test_adopt_refuses_a_file_that_does_not_parse_or_lies_outside_the_day_folders(home, tmp_path):
    drop(home, "good.md", GOOD)
    assert run(home).exit_code == 0
    broken = home.paths.archive / "daily_sessions/2026-07-19/broken.jsonl"
    broken.write_bytes(b'{"role": "user", "content": "hi"}\n{"role": ')
    outside = tmp_path / "elsewhere.md"
    outside.write_bytes(GOOD)
    r = kenang("adopt", "--home", str(home.paths.home), str(broken), str(outside))
    assert r.exit_code == 1
    out = r.stdout
    assert "refused daily_sessions/2026-07-19/broken.jsonl" in out and "not inside the archive's day folders" in out
    assert archived(home) == ["daily_sessions/2026-07-19/good.md"]


def test_a_summary_or_memory_index_edited_by_hand_is_reported(home):
    drop(home, "good.md", GOOD)
    assert run(home).exit_code == 0
    summary = home.paths.archive / "daily_sessions/2026-07-19/2026-07-19.summary.md"
    os.chmod(summary, 0o644)
    summary.write_text(summary.read_text() + "\nI edited this.\n")
    index = home.paths.archive / "MEMORY_INDEX.md"
    index.write_text(index.read_text() + "- a line of my own\n")
    report = verify(home)
    assert report.derived_changed == ("MEMORY_INDEX.md", "daily_sessions/2026-07-19/2026-07-19.summary.md")
    r = kenang("verify", "--home", str(home.paths.home))
    assert r.exit_code == 1
    assert "EDITED BY HAND" in r.stdout


def test_a_warehouse_partition_changed_behind_kenangs_back_is_reported_and_backfill_rebuilds_it(home):
    drop(home, "good.md", GOOD)
    assert run(home).exit_code == 0
    part = warehouse.partition_file(
        home.paths.warehouse, warehouse_table("messages"), NOW.date().replace(day=19), "default"
    )
    rows = pq.read_table(part).to_pylist()
    rows[0]["content"] = "something I never said"
    pq.write_table(pa.Table.from_pylist(rows, schema=pq.read_schema(part)), part)
    assert verify(home).warehouse_changed == ("messages/date=2026-07-19/user_id=default/data.parquet",)
    r = kenang("verify", "--home", str(home.paths.home))
    assert r.exit_code == 1
    assert "WAREHOUSE CHANGED" in r.stdout
    assert (
        kenang("backfill", "--home", str(home.paths.home), "--start", "2026-07-19", "--end", "2026-07-19").exit_code
        == 0
    )
    assert verify(home).problems == 0
    assert "never said" not in json.dumps([m["content"] for m in table(home, "messages")])


def test_a_tampered_summary_and_index_partition_are_rebuilt_by_backfill(home):
    drop(home, "good.md", GOOD)
    assert run(home).exit_code == 0
    for name in ("daily_summaries", "memory_chunks"):
        part = warehouse.partition_file(
            home.paths.warehouse, warehouse_table(name), NOW.date().replace(day=19), "default"
        )
        data = pq.read_table(part)
        pq.write_table(data.slice(0, 0), part)  # emptied
    assert len(verify(home).warehouse_changed) == 2
    assert (
        kenang("backfill", "--home", str(home.paths.home), "--start", "2026-07-19", "--end", "2026-07-19").exit_code
        == 0
    )
    assert verify(home).problems == 0
    assert len(table(home, "daily_summaries")) == 1 and len(table(home, "memory_chunks")) > 0


def test_init_records_checksums_for_a_warehouse_written_before_kenang_kept_them(home):
    drop(home, "good.md", GOOD)
    assert run(home).exit_code == 0
    for p in home.paths.warehouse.rglob(".*.sha256"):
        p.unlink()
    assert verify(home).warehouse_unrecorded
    r = kenang("init", "--home", str(home.paths.home))
    assert r.exit_code == 0
    assert "recorded checksums for" in r.stderr
    assert verify(home).problems == 0


def warehouse_table(name: str):
    from schemas.tables import TABLES

    return TABLES[name]


def test_the_archive_manifest_lists_what_kenang_archived_and_nothing_else(home):
    drop(home, "good.md", GOOD)
    assert run(home).exit_code == 0
    manifest = json.loads((home.paths.archive / "daily_sessions/2026-07-19/.kenang-files.json").read_text())
    assert list(manifest["files"]) == ["good.md"]
    assert manifest["files"]["good.md"]["original_path"] == "good.md"
    shutil.rmtree(home.paths.warehouse)  # the warehouse is gone; the archive still says what it holds
    assert (
        kenang("backfill", "--home", str(home.paths.home), "--start", "2026-07-19", "--end", "2026-07-19").exit_code
        == 0
    )
    assert archived(home) == ["daily_sessions/2026-07-19/good.md"] and len(table(home, "messages")) == 2


def test_a_stray_file_with_a_hand_added_manifest_line_is_never_loaded_and_the_manifest_is_rewritten(home):
    import hashlib

    drop(home, "good.md", GOOD)
    assert run(home).exit_code == 0
    folder = home.paths.archive / "daily_sessions/2026-07-19"
    data = md("2026-07-19", "1500", ("user", "planted memory"))
    (folder / "stray.md").write_bytes(data)
    manifest = folder / ".kenang-files.json"
    before = manifest.read_bytes()
    body = json.loads(before)
    body["files"]["stray.md"] = {
        "original_path": "stray.md",
        "sha256": hashlib.sha256(data).hexdigest(),
        "size": len(data),
    }
    os.chmod(manifest, 0o644)
    manifest.write_text(json.dumps(body, indent=1, sort_keys=True) + "\n")
    code, rep = verify_json(home)
    assert code == 1
    assert rep["unrecorded"] == ["daily_sessions/2026-07-19/stray.md"]
    assert rep["manifests_changed"] == ["daily_sessions/2026-07-19/.kenang-files.json"]
    r = kenang("verify", "--home", str(home.paths.home))
    assert r.exit_code == 1 and "UNRECORDED" in r.stdout and "MANIFEST CHANGED" in r.stdout
    assert backfill_day(home).exit_code == 0
    assert all("planted" not in m["content"] for m in table(home, "messages"))
    assert all("planted" not in c["text"] for c in table(home, "memory_chunks"))
    assert archived(home) == ["daily_sessions/2026-07-19/good.md"]
    assert manifest.read_bytes() == before  # rewritten from the warehouse's record
    code, rep = verify_json(home)
    assert code == 1 and rep["unrecorded"] == ["daily_sessions/2026-07-19/stray.md"]
    assert rep["manifests_changed"] == [] and rep["problems"] == 1


def test_a_tampered_archive_files_partition_is_rebuilt_from_the_days_manifest(home):
    drop(home, "good.md", GOOD)
    assert run(home).exit_code == 0
    rel = "archive_files/date=2026-07-19/user_id=default/data.parquet"
    part = home.paths.warehouse / rel
    rows = table(home, "archive_files")
    original = part.read_bytes()
    pq.write_table(pq.read_table(part), part, compression="gzip")  # same rows, other bytes
    assert part.read_bytes() != original
    code, rep = verify_json(home)
    assert code == 1 and rep["warehouse_changed"] == [rel] and rep["problems"] == 1
    r = kenang("verify", "--home", str(home.paths.home))
    assert "WAREHOUSE CHANGED" in r.stdout and rel in r.stdout
    assert backfill_day(home).exit_code == 0
    assert [
        {k: v for k, v in r.items() if k not in ("run_id", "archived_at")} for r in table(home, "archive_files")
    ] == [{k: v for k, v in r.items() if k not in ("run_id", "archived_at")} for r in rows]
    r = kenang("verify", "--home", str(home.paths.home))
    assert r.exit_code == 0 and r.stdout.rstrip().endswith("OK"), r.stdout


def test_a_tampered_runs_or_quarantine_record_is_reported_until_accepted(home):
    drop(home, "good.md", GOOD)
    drop(home, "broken.jsonl", b'{"role": "user", "content": "hi"}\n{"role": "assist')
    assert run(home).exit_code == 0
    changed = []
    for name in ("quarantine", "runs"):
        (part,) = (home.paths.warehouse / name).rglob("*.parquet")
        pq.write_table(pq.read_table(part), part, compression="gzip")
        changed.append(part.relative_to(home.paths.warehouse).as_posix())
    code, rep = verify_json(home)
    assert code == 1 and rep["records_changed"] == changed and rep["warehouse_changed"] == []
    r = kenang("verify", "--home", str(home.paths.home))
    assert r.exit_code == 1 and "RECORD CHANGED" in r.stdout and all(c in r.stdout for c in changed)
    assert backfill_day(home).exit_code == 0  # no backfill rebuilds a record: still reported
    code, rep = verify_json(home)
    assert code == 1 and rep["records_changed"] == changed
    r = kenang(
        "verify", "--home", str(home.paths.home), "--accept", "messages/date=2026-07-19/user_id=default/data.parquet"
    )
    assert r.exit_code == 2 and "not a changed record file" in r.stderr  # a rebuildable table is never accepted
    assert r.stderr.startswith("kenang verify: --accept:") and "configuration error" not in r.stderr
    r = kenang("verify", "--home", str(home.paths.home), *[a for c in changed for a in ("--accept", c)])
    assert r.exit_code == 0 and r.stdout.rstrip().endswith("OK"), r.stdout
    assert all(f"accepted warehouse/{c} as it is now" in r.stderr for c in changed)
    code, rep = verify_json(home)
    assert code == 0 and rep["records_changed"] == [] and rep["problems"] == 0
    assert [q["original_path"] for q in table(home, "quarantine")] == ["broken.jsonl"]
