"""Issue 10's holes, each reproduced as a user would meet it: through the CLI, on a scratch home.

- No file can stop a night: impossible dates, a FIFO, hidden names, a parser that
  blows up, one session_id in two files, a keyword-only index asked for vectors, a
  held lock.
- Paths are checked before anything moves: overlapping folders, system folders, an
  unmounted, foreign, read-only or full archive, numeric settings out of range.
- Tampering is caught: a stray file in the archive, a summary or MEMORY_INDEX edited
  by hand, a warehouse partition overwritten.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from flows.store import warehouse
from flows.store.mount import MARKER
from flows.store.verify import verify
from helpers import NOW, drop, jsonl, kenang, md, table

pytestmark = pytest.mark.usefixtures("prefect_api")

NOW_S = NOW.isoformat()
GOOD = md("2026-07-19", "1000", ("user", "tetap jalan"), ("assistant", "oke"))


def run(home, *extra: str):
    return kenang("run", "--home", str(home.paths.home), "--now", NOW_S, *extra)


def run_json(home, *extra: str) -> tuple[int, dict]:
    r = run(home, "--json", *extra)
    out = r.stdout
    return r.exit_code, json.loads(out[out.index("{"):])


def quarantined(home) -> dict[str, dict]:
    return {r["original_path"]: r for r in table(home, "quarantine")}


def archived(home) -> list[str]:
    return sorted(r["path"] for r in table(home, "archive_files"))


# --- 2. no file can stop a night -------------------------------------------------------


@pytest.mark.parametrize("name,data,what", [
    ("y9999.jsonl", jsonl({"role": "user", "content": "halo", "timestamp": "9999-12-31T10:00:00+07:00"}), "9999-12-31"),
    ("y0001.jsonl", jsonl({"role": "user", "content": "halo", "timestamp": "0001-01-01T00:00:00+07:00"}), "0001-01-01"),
    ("y1969.md", md("1969-07-20", "2017", ("user", "one small step")), "1969-07-20"),
    ("future.jsonl", jsonl({"role": "user", "content": "besok", "timestamp": "2026-07-23T10:00:00+07:00"}), "2026-07-23"),
    ("9999-12-31-x.md", b"## user\nhalo tanpa jam\n", "9999-12-31"),
], ids=["year-9999", "year-0001", "before-1970", "two-days-past-now", "name-9999-12-31"])
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
        [".cache/", "hidden_folder"], [".good.md.swp", "hidden"], ["gading/.draft.md", "hidden"]]
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
        {"user_id": "default", "date": "2026-07-19", "session_id": "shared", "files": 2}]
    drop(home, "c.md", md("2026-07-19", "1200", ("user", "tiga"), session_id="other"))
    assert "sessions read from several files with the same session_id" in run(home).stdout


def test_recall_in_vector_mode_on_a_keyword_only_index_says_so_in_one_line(home):
    drop(home, "good.md", GOOD)
    assert run(home).exit_code == 0
    r = kenang("recall", "--home", str(home.paths.home), "--mode", "vector", "jalan")
    code, err = r.exit_code, r.stderr
    assert code == 2 and "keyword-only" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_a_held_lock_gets_one_clear_line_and_exit_75(home):
    holder = subprocess.Popen([sys.executable, "-c", (
        "import time, sys\nfrom pathlib import Path\nfrom flows.store.lock import run_lock\n"
        f"with run_lock(Path({str(home.paths.lock)!r}), 'holder-run'):\n"
        "    print('held', flush=True)\n    time.sleep(60)\n")], stdout=subprocess.PIPE, text=True,
        cwd=Path(__file__).parent.parent)
    try:
        assert holder.stdout.readline().strip() == "held"
        out = subprocess.run([sys.executable, "-m", "flows.cli", "run", "--home", str(home.paths.home)],
                             capture_output=True, text=True, cwd=Path(__file__).parent.parent, timeout=120)
    finally:
        holder.kill()
        holder.wait()
    assert out.returncode == 75
    assert out.stderr.strip().splitlines() == [out.stderr.strip()]  # one line
    assert "holder-run" in out.stderr and "--wait" in out.stderr and "Traceback" not in out.stderr


# --- 3. paths are checked before anything moves --------------------------------------------


@pytest.mark.parametrize("paths,needles", [
    ("  active: .\n", ["paths.active", "kenang.yaml"]),
    ("  active: /\n", ["paths.active", "system folder"]),
    ("  archive: /etc\n", ["paths.archive", "system folder"]),
    ("  archive: warehouse/archive\n", ["paths.archive", "paths.warehouse", "overlap"]),
    ("  quarantine: active\n", ["paths.active", "paths.quarantine", "overlap"]),
], ids=["active-is-home", "active-is-root", "archive-is-etc", "archive-in-warehouse", "quarantine-is-active"])
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


@pytest.mark.parametrize("setting,needle", [
    ("recall:\n  related_decay: 1.5\n", "recall.related_decay: 1.5 must be <= 1"),
    ("analytics:\n  productive_min_importance: 0\n", "analytics.productive_min_importance: 0 must be >= 1"),
    ("analytics:\n  productive_min_importance: 11\n", "must be <= 10"),
    ("summarizer:\n  temperature: 5\n", "summarizer.temperature: 5 must be <= 2"),
    ("recall:\n  top_k: 0\n", "recall.top_k: 0 must be >= 1"),
])
def test_numeric_settings_out_of_range_are_config_errors(home, setting, needle):
    home.paths.config_file.write_text("summarizer:\n  backend: extractive\nembedder:\n  backend: none\n" + setting
                                      if not setting.startswith(("summarizer", "embedder")) else setting)
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
    # The mount comes back (here: the real archive, with its marker): the next night archives.
    cfg.write_text(cfg.read_text().replace(f"archive: {mount_point}", "archive: archive"))
    assert run(home).exit_code == 0 and not src.exists() and archived(home) == ["daily_sessions/2026-07-19/good.md"]


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
    assert code == 3 and result["degraded"]["archive"] == "full" and "archive_min_free_mb" in result["degraded"]["reason"]
    assert src.exists() and archived(home) == ["daily_sessions/2026-07-19/good.md"]
    assert result["archive"]["placed"] == 0


def _mount_tmpfs(where: Path, size: str) -> bool:
    where.mkdir(parents=True, exist_ok=True)
    return subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
                          capture_output=True).returncode == 0


@pytest.fixture
def small_fs(tmp_path):
    where = tmp_path / "smallfs"
    if not _mount_tmpfs(where, "2m"):
        pytest.skip("this machine does not let the tests mount a tmpfs (needs CAP_SYS_ADMIN)")
    yield where
    subprocess.run(["umount", "-l", str(where)], capture_output=True)


def test_a_read_only_archive_archives_nothing_and_loads_what_it_holds(home, small_fs):
    cfg = home.paths.config_file
    cfg.write_text(cfg.read_text().replace("archive: archive", f"archive: {small_fs}")
                   .replace("archive_min_free_mb: 64", "archive_min_free_mb: 0"))
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
    cfg.write_text(cfg.read_text().replace("archive: archive", f"archive: {small_fs}")
                   .replace("archive_min_free_mb: 64", "archive_min_free_mb: 0"))
    assert kenang("init", "--home", str(home.paths.home)).exit_code == 0
    big = drop(home, "big.md", md("2026-07-19", "1000", ("user", "x" * 3_000_000)))
    code, result = run_json(home)
    assert code == 3 and result["degraded"]["archive"] == "full"
    assert big.exists() and not (small_fs / "daily_sessions").exists()


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
    part = warehouse.partition_file(home.paths.warehouse, warehouse_table("messages"), NOW.date().replace(day=19),
                                    "default")
    rows = pq.read_table(part).to_pylist()
    rows[0]["content"] = "something I never said"
    pq.write_table(pa.Table.from_pylist(rows, schema=pq.read_schema(part)), part)
    assert verify(home).warehouse_changed == ("messages/date=2026-07-19/user_id=default/data.parquet",)
    r = kenang("verify", "--home", str(home.paths.home))
    assert r.exit_code == 1
    assert "WAREHOUSE CHANGED" in r.stdout
    assert kenang("backfill", "--home", str(home.paths.home),
                  "--start", "2026-07-19", "--end", "2026-07-19").exit_code == 0
    assert verify(home).problems == 0
    assert "never said" not in json.dumps([m["content"] for m in table(home, "messages")])


def test_a_tampered_summary_and_index_partition_are_rebuilt_by_backfill(home):
    drop(home, "good.md", GOOD)
    assert run(home).exit_code == 0
    for name in ("daily_summaries", "memory_chunks"):
        part = warehouse.partition_file(home.paths.warehouse, warehouse_table(name), NOW.date().replace(day=19), "default")
        data = pq.read_table(part)
        pq.write_table(data.slice(0, 0), part)  # emptied
    assert len(verify(home).warehouse_changed) == 2
    assert kenang("backfill", "--home", str(home.paths.home),
                  "--start", "2026-07-19", "--end", "2026-07-19").exit_code == 0
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
    assert kenang("backfill", "--home", str(home.paths.home),
                  "--start", "2026-07-19", "--end", "2026-07-19").exit_code == 0
    assert archived(home) == ["daily_sessions/2026-07-19/good.md"] and len(table(home, "messages")) == 2
