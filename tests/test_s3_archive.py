"""The archive on S3-compatible storage, against moto's standalone S3 server on 127.0.0.1.

``paths.archive: s3://bucket/prefix``: a night uploads, reads back and compares before
any source goes; a crash between upload and delete heals; a bucket that cannot be
reached keeps every source and the night goes on; no key is overwritten; verify,
backfill from the bucket alone and ``forget --purge`` (every version, past object lock)
work on the bucket. Credentials and endpoint come from the environment, as in use.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import shutil
import socket
import subprocess
import uuid

import pytest
from helpers import NOW, crash_at, drop, kenang, md, scenario, snapshot, table

from flows.config import init_home
from flows.pipeline import backfill, nightly
from flows.store import mount, remote
from flows.store.verify import verify

# A real S3 server (moto's, over HTTP), and boto's and s3fs's own back-off when it is away: integration.
pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("prefect_api")]

ENV = {
    "AWS_ACCESS_KEY_ID": "kenang-test",
    "AWS_SECRET_ACCESS_KEY": "kenang-test-secret",
    "AWS_DEFAULT_REGION": "us-east-1",
}


@pytest.fixture(scope="module")
def s3():
    """moto's S3 server in a thread on a free 127.0.0.1 port; the environment points at it; stopped at the end."""
    import logging

    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    port = _free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    saved = {k: os.environ.get(k) for k in [*ENV, "AWS_ENDPOINT_URL"]}
    os.environ.update(ENV, AWS_ENDPOINT_URL=f"http://127.0.0.1:{port}")
    box = {"server": server, "port": port}
    yield box
    box["server"].stop()
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def client():
    import boto3

    return boto3.client("s3", endpoint_url=os.environ["AWS_ENDPOINT_URL"])


def s3_home(tmp_path, *, lock: bool = False, prefix: str = "homes/gading", name: str = "home"):
    bucket = f"kenang-{uuid.uuid4().hex[:12]}"
    client().create_bucket(Bucket=bucket, **({"ObjectLockEnabledForBucket": True} if lock else {}))
    settings, _ = init_home(
        tmp_path / name,
        {
            "summarizer": {"backend": "extractive"},
            "embedder": {"backend": "none"},
            "paths": {"archive": f"s3://{bucket}/{prefix}"},
        },
    )
    mount.claim(settings)  # as `kenang init` does
    return settings, bucket, prefix


def objects(bucket: str, prefix: str) -> dict[str, bytes]:
    c = client()
    out = {}
    for page in c.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix + "/"):
        for o in page.get("Contents") or []:
            out[o["Key"][len(prefix) + 1 :]] = c.get_object(Bucket=bucket, Key=o["Key"])["Body"].read()
    return out


def night(settings):
    return nightly(now=NOW, home=str(settings.paths.home))


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_a_night_uploads_reads_back_and_only_then_deletes_its_sources(s3, tmp_path):
    home, bucket, prefix = s3_home(tmp_path)
    assert home.paths.archive == home.paths.home / "archive-cache"
    scenario(home)
    result = night(home)
    assert "degraded" not in result, (result["degraded"], result.get("archive"), result.get("archive_remote"))
    recorded = table(home, "archive_files")
    there = objects(bucket, prefix)
    assert len(recorded) == 3
    for r in recorded:  # every original is in the bucket, byte-exact, and its source is gone
        assert sha(there[r["path"]]) == r["sha256"]
        assert not (home.paths.active / r["original_path"]).exists()
    assert result["archive"]["sources_deleted"] == 3 and result["archive"]["not_uploaded"] == 0
    # the derived files went up when the run ended: summaries, the day manifests, MEMORY_INDEX
    assert any(k.endswith(".summary.md") for k in there) and any(k.endswith(".kenang-files.json") for k in there)
    assert "MEMORY_INDEX.md" in there and ".kenang-archive" in there
    cache = {
        p.relative_to(home.paths.archive).as_posix(): p.read_bytes()
        for p in home.paths.archive.rglob("*")
        if p.is_file() and p.name != remote.STATE
    }
    assert cache == there  # the local copy and the bucket hold the same bytes
    # the metadata carries the sha256 every read-back and download is checked against
    head = client().head_object(Bucket=bucket, Key=f"{prefix}/{recorded[0]['path']}")
    assert head["Metadata"]["sha256"] == recorded[0]["sha256"]
    rep = verify(home)
    assert rep.problems == 0 and rep.bucket["checked"] == 3 and rep.bucket["not_uploaded"] == ()

    again = night(home)  # a rerun changes nothing, here or in the bucket
    assert again["archive_remote"]["pushed"] == 0 and again["archive_remote"]["pulled"] == 0
    assert objects(bucket, prefix) == there


def test_a_crash_between_upload_and_delete_heals_on_the_next_run(s3, tmp_path, prefect_api):
    reference, rb, rp = s3_home(tmp_path, name="reference")
    scenario(reference)
    night(reference)
    home, bucket, prefix = s3_home(tmp_path)
    scenario(home)
    for boundary, nth in (("remote.uploaded", 2), ("archive.uploaded", 1)):
        child = crash_at(home, boundary, nth, prefect_api)
        assert child.returncode == 137, child.stderr[-2000:]
        # cut after an upload: every source is still in active/
        assert len(list(home.paths.active.rglob("*.md"))) >= 3
    night(home)
    assert _comparable(snapshot(home)) == _comparable(snapshot(reference))
    assert sorted(objects(bucket, prefix)) == sorted(objects(rb, rp))
    assert verify(home).problems == 0


def _comparable(snap: dict) -> dict:
    return {k: v for k, v in snap.items() if remote.STATE not in k}


def test_an_unreachable_bucket_keeps_every_source_and_the_night_goes_on(s3, tmp_path, monkeypatch):
    home, bucket, prefix = s3_home(tmp_path)
    drop(
        home, "2026-07-18-0900.md", md("2026-07-18", "0900", ("user", "Backup NAS jalan jam 2."), ("assistant", "Oke."))
    )
    night(home)
    scenario(home)
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{_free_port()}")  # nothing listens there
    down = night(home)
    assert down["degraded"]["archive"] == "unreachable" and "cannot be reached" in down["degraded"]["reason"]
    assert down["archive"]["placed"] == 0 and len(list(home.paths.active.rglob("*.md"))) >= 3
    assert down["load"]["days"] >= 0  # the local copy still loads; nothing was archived, nothing deleted
    r = kenang("run", "--home", str(home.paths.home), "--now", NOW.isoformat())
    assert r.exit_code == 3 and "unreachable" in (r.stdout + r.stderr)
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{s3['port']}")
    back = night(home)
    assert "degraded" not in back and back["archive"]["sources_deleted"] == 3
    assert verify(home).problems == 0


def test_a_bucket_lost_mid_batch_deletes_only_the_sources_it_confirmed(s3, tmp_path, monkeypatch):
    from moto.server import ThreadedMotoServer

    from flows.store import faults

    home, bucket, prefix = s3_home(tmp_path)
    scenario(home)
    hits = [0]

    def checkpoint(name):  # the server goes away right after the second original's upload
        if name == "remote.uploaded":
            hits[0] += 1
            if hits[0] == 2:
                s3["server"].stop()

    monkeypatch.setattr(faults, "checkpoint", checkpoint)
    try:
        cut = night(home)
    finally:
        s3["server"] = ThreadedMotoServer(ip_address="127.0.0.1", port=s3["port"], verbose=False)
        s3["server"].start()  # moto keeps its buckets in the process: the same bucket is back
    assert cut["degraded"]["archive"] == "unreachable", cut
    assert cut["archive"]["sources_deleted"] == 1 and cut["archive"]["not_uploaded"] == 2, (
        cut["archive"],
        cut["degraded"],
    )
    monkeypatch.undo()
    healed = night(home)
    assert healed["archive"]["sources_deleted"] == 2 and "degraded" not in healed
    assert verify(home).problems == 0 and len(table(home, "archive_files")) == 3


def test_a_key_holding_other_bytes_is_never_overwritten_and_identical_bytes_are_recognised(s3, tmp_path):
    home, bucket, prefix = s3_home(tmp_path)
    same = md("2026-07-18", "0900", ("user", "Sama persis."))
    other_there = md("2026-07-18", "1000", ("user", "Versi lain di bucket."))
    c = client()
    c.put_object(
        Bucket=bucket, Key=f"{prefix}/daily_sessions/2026-07-18/same.md", Body=same, Metadata={"sha256": sha(same)}
    )
    c.put_object(Bucket=bucket, Key=f"{prefix}/daily_sessions/2026-07-18/taken.md", Body=other_there)
    drop(home, "same.md", same)
    drop(home, "taken.md", md("2026-07-18", "1000", ("user", "Versi kenang.")))
    res = night(home)
    assert res["archive"]["sources_deleted"] == 2
    there = objects(bucket, prefix)
    assert there["daily_sessions/2026-07-18/taken.md"] == other_there  # untouched
    names = sorted(r["path"] for r in table(home, "archive_files"))
    assert "daily_sessions/2026-07-18/same.md" in names  # the identical bytes were recognised
    new = [
        n
        for n in names
        if n.startswith("daily_sessions/2026-07-18/taken.") and n != "daily_sessions/2026-07-18/taken.md"
    ]
    assert len(new) == 1 and new[0] in there  # the other bytes went to a new name
    # the object put there behind kenang's back is reported, never loaded
    assert verify(home).bucket["unrecorded"] == ("daily_sessions/2026-07-18/taken.md",)


def test_a_backfill_works_from_the_bucket_alone(s3, tmp_path):
    home, bucket, prefix = s3_home(tmp_path)
    scenario(home)
    night(home)
    before = snapshot(home)
    shutil.rmtree(home.paths.warehouse)
    shutil.rmtree(home.paths.archive)  # the local copy is gone too: only the bucket remains
    result = backfill(start=dt.date(2026, 7, 1), end=dt.date(2026, 7, 31), home=str(home.paths.home))
    assert result["archive_remote"]["pulled"] == len(objects(bucket, prefix)) - 1  # all but the marker object
    assert result["survey"]["restored_records"] == 3 and result["load"]["loaded"] == 3
    after = snapshot(home)
    keep = ("table/sessions", "table/messages", "table/days", "table/archive_files")
    assert {k: after[k] for k in keep} == {k: before[k] for k in keep}
    cached = {k: v for k, v in after.items() if k.startswith("archive/") and remote.STATE not in k}
    assert cached == {k: v for k, v in before.items() if k.startswith("archive/") and remote.STATE not in k}
    assert verify(home).problems == 0


def test_forget_purge_deletes_every_version_past_object_lock(s3, tmp_path):
    home, bucket, prefix = s3_home(tmp_path, lock=True)
    assert "governance mode for 3650 days" in remote.lock_summary(home)
    scenario(home)
    night(home)
    c = client()
    gading = [r for r in table(home, "archive_files") if r["user_id"] == "gading"]
    key = f"{prefix}/{gading[0]['path']}"
    head = c.head_object(Bucket=bucket, Key=key)
    assert head["ObjectLockMode"] == "GOVERNANCE" and head["ObjectLockRetainUntilDate"] > dt.datetime.now(dt.UTC)
    with pytest.raises(c.exceptions.ClientError):  # locked: no plain delete takes it
        c.delete_object(Bucket=bucket, Key=key, VersionId=head["VersionId"])
    summary_key = f"{prefix}/daily_sessions/2026-07-18/gading/2026-07-18.summary.md"
    assert c.list_object_versions(Bucket=bucket, Prefix=summary_key).get("Versions")

    r = kenang("forget", "--home", str(home.paths.home), "--user", "gading", "--day", "2026-07-18", "--purge", "--yes")
    assert r.exit_code == 0, r.stderr
    versions = c.list_object_versions(Bucket=bucket, Prefix=key)
    assert not versions.get("Versions") and not versions.get("DeleteMarkers")  # every version, truly gone
    # the day's rewritten summary replaced the old one, whose versions (with what was said) are deleted
    left = c.list_object_versions(Bucket=bucket, Prefix=summary_key)
    assert len(left.get("Versions") or []) <= 1
    assert remote.owed(home) == []
    rep = verify(home)
    assert rep.problems == 0 and gading[0]["path"] in rep.purged, rep
    night(home)  # a later night never pulls it back
    assert not (home.paths.archive / gading[0]["path"]).exists()


def test_verify_reads_the_bucket_back_and_names_what_differs(s3, tmp_path):
    home, bucket, prefix = s3_home(tmp_path)
    scenario(home)
    night(home)
    rows = sorted(table(home, "archive_files"), key=lambda r: r["path"])
    c = client()
    c.put_object(Bucket=bucket, Key=f"{prefix}/{rows[0]['path']}", Body=b"changed behind kenang's back")
    c.delete_object(Bucket=bucket, Key=f"{prefix}/{rows[1]['path']}")
    rep = verify(home)
    assert rep.bucket["changed"] == (rows[0]["path"],) and rep.bucket["missing"] == (rows[1]["path"],)
    assert rep.problems == 2 and rep.changed == () and rep.missing == ()  # the local copy is intact
    r = kenang("verify", "--home", str(home.paths.home))
    assert r.exit_code != 0 and "CHANGED IN THE BUCKET" in r.stdout and "MISSING IN THE BUCKET" in r.stdout


def test_a_bucket_marked_by_another_home_is_refused_until_claimed(s3, tmp_path):
    home, bucket, prefix = s3_home(tmp_path)
    other, _ = init_home(
        tmp_path / "other",
        {
            "summarizer": {"backend": "extractive"},
            "embedder": {"backend": "none"},
            "paths": {"archive": f"s3://{bucket}/{prefix}"},
        },
    )
    mount.claim(other)  # as `kenang init` does
    # init of a second home against a marked bucket leaves the marker alone
    assert objects(bucket, prefix)[".kenang-archive"].decode().count(home.paths.home.name)
    scenario(other)
    res = night(other)
    assert res["degraded"]["archive"] == "foreign" and res["archive"]["placed"] == 0
    r = kenang("init", "--home", str(other.paths.home), "--claim-archive")
    assert r.exit_code == 0
    assert "degraded" not in night(other)


def test_init_says_whether_the_bucket_locks_what_kenang_uploads(s3, tmp_path):
    for lock, said in (
        (True, "object lock on: each original is kept in governance mode for 3650 days"),
        (False, "no object lock on this bucket"),
    ):
        bucket = f"kenang-{uuid.uuid4().hex[:12]}"
        client().create_bucket(Bucket=bucket, **({"ObjectLockEnabledForBucket": True} if lock else {}))
        home = tmp_path / bucket
        home.mkdir()
        (home / "kenang.yaml").write_text(f"paths:\n  archive: s3://{bucket}/h\n", encoding="utf-8")
        r = kenang("init", "--home", str(home))
        assert r.exit_code == 0 and said in r.stdout, r.stdout + r.stderr
        assert f"s3://{bucket}/h" in r.stdout


def test_init_against_a_bucket_that_cannot_be_reached_says_so(s3, tmp_path, monkeypatch):
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{_free_port()}")
    home = tmp_path / "h"
    home.mkdir()
    (home / "kenang.yaml").write_text("paths:\n  archive: s3://kenang-nowhere/h\n", encoding="utf-8")
    r = kenang("init", "--home", str(home))
    assert r.exit_code == 1 and "cannot be reached" in r.stderr


def test_init_on_a_bucket_that_does_not_exist_says_what_to_do_in_one_line(s3, tmp_path):
    bucket = f"kenang-{uuid.uuid4().hex[:12]}"
    home = tmp_path / "h"
    home.mkdir()
    (home / "kenang.yaml").write_text(f"paths:\n  archive: s3://{bucket}/h\n", encoding="utf-8")
    r = kenang("init", "--home", str(home))  # a traceback would raise here: the runner does not catch it
    assert r.exit_code == 1 and len(r.stderr.splitlines()) == 1, r.stderr
    assert f"the bucket {bucket} does not exist" in r.stderr and f"aws s3 mb s3://{bucket}" in r.stderr
    assert "AWS_ENDPOINT_URL" in r.stderr and "Traceback" not in r.stderr
    client().create_bucket(Bucket=bucket)  # doing what it says is enough
    r = kenang("init", "--home", str(home))
    assert r.exit_code == 0 and f"s3://{bucket}/h" in r.stdout


def test_an_s3_archive_with_no_marker_is_not_written(s3, tmp_path):
    home, bucket, prefix = s3_home(tmp_path)
    client().delete_object(Bucket=bucket, Key=f"{prefix}/.kenang-archive")
    scenario(home)
    res = night(home)
    assert (
        res["degraded"]["archive"] == "not_mounted" and "no .kenang-archive marker object" in res["degraded"]["reason"]
    )
    assert res["archive"]["placed"] == 0 and len(list(home.paths.active.rglob("*.md"))) >= 3


# --- what a hostile review found: each held to its fix ------------------------------------


def test_forget_never_purges_in_a_bucket_that_names_another_home(s3, tmp_path):
    a, bucket, prefix = s3_home(tmp_path, name="a")
    scenario(a)
    night(a)
    before = objects(bucket, prefix)
    b, other_bucket, other_prefix = s3_home(tmp_path, name="b")
    scenario(b)
    night(b)
    cfg = b.paths.config_file  # b's config pointed at a's bucket by mistake: the marker says another home
    cfg.write_text(
        cfg.read_text(encoding="utf-8").replace(f"s3://{other_bucket}/{other_prefix}", f"s3://{bucket}/{prefix}"),
        encoding="utf-8",
    )
    r = kenang("forget", "--home", str(b.paths.home), "--user", "gading", "--day", "2026-07-18", "--purge", "--yes")
    assert r.exit_code != 0 and "another kenang home" in r.stderr
    assert objects(bucket, prefix) == before


def test_a_new_bucket_for_the_same_copy_gets_everything_uploaded(s3, tmp_path):
    home, bucket, prefix = s3_home(tmp_path)
    scenario(home)
    night(home)
    new = f"kenang-{uuid.uuid4().hex[:12]}"
    client().create_bucket(Bucket=new)
    cfg = home.paths.config_file
    cfg.write_text(cfg.read_text(encoding="utf-8").replace(f"s3://{bucket}/", f"s3://{new}/"), encoding="utf-8")
    assert kenang("init", "--home", str(home.paths.home)).exit_code == 0
    from flows.config import load_settings

    moved = load_settings(home.paths.home)
    night(moved)
    assert sorted(objects(new, prefix)) == sorted(objects(bucket, prefix))
    assert verify(moved).problems == 0


def test_an_object_gone_from_the_bucket_is_uploaded_again(s3, tmp_path):
    home, bucket, prefix = s3_home(tmp_path)
    scenario(home)
    night(home)
    path = sorted(r["path"] for r in table(home, "archive_files"))[0]
    client().delete_object(Bucket=bucket, Key=f"{prefix}/{path}")  # a lifecycle rule, a slip in the console
    assert verify(home).bucket["missing"] == (path,)
    night(home)
    assert path in objects(bucket, prefix) and verify(home).problems == 0


def test_a_lost_piece_of_the_local_copy_comes_back_and_the_bucket_keeps_everything(s3, tmp_path):
    home, bucket, prefix = s3_home(tmp_path)
    scenario(home)
    night(home)
    before = objects(bucket, prefix)
    day = home.paths.archive / "daily_sessions" / "2026-07-18"
    subprocess.run(["chmod", "-R", "u+w", str(day)], check=True)
    shutil.rmtree(day)  # one day folder of the copy lost, the state file kept
    rep = verify(home)  # read-only: the copy is not filled here, and what the bucket holds is not missing
    assert rep.missing == () and rep.bucket["not_in_copy"] and not day.exists()
    night(home)
    assert objects(bucket, prefix) == before  # no manifest or summary deleted from the bucket
    assert sorted(p.name for p in day.rglob("*") if p.is_file()) == sorted(
        k.rsplit("/", 1)[-1] for k in before if k.startswith("daily_sessions/2026-07-18/")
    )
    assert verify(home).problems == 0


def test_a_purge_cut_short_before_the_bucket_is_owed_and_never_pulled_back(s3, tmp_path, monkeypatch):
    home, bucket, prefix = s3_home(tmp_path)
    scenario(home)
    night(home)
    path = next(r["path"] for r in table(home, "archive_files") if r["user_id"] == "gading")

    class Crash(BaseException):
        pass

    def die(_settings):
        raise Crash()

    monkeypatch.setattr(remote, "settle", die)  # the process dies right after the local copy went
    with pytest.raises(Crash):
        kenang("forget", "--home", str(home.paths.home), "--user", "gading", "--day", "2026-07-18", "--purge", "--yes")
    monkeypatch.undo()
    assert path in remote.owed(home) and path in objects(bucket, prefix)
    night(home)
    assert not (home.paths.archive / path).exists() and path not in objects(bucket, prefix)
    # and with the owed list lost with the local copy, purge_log still keeps it out
    home2, bucket2, prefix2 = s3_home(tmp_path, name="second")
    scenario(home2)
    night(home2)
    path2 = next(r["path"] for r in table(home2, "archive_files") if r["user_id"] == "gading")
    monkeypatch.setattr(remote, "settle", die)
    with pytest.raises(Crash):
        kenang("forget", "--home", str(home2.paths.home), "--user", "gading", "--day", "2026-07-18", "--purge", "--yes")
    monkeypatch.undo()
    subprocess.run(["chmod", "-R", "u+w", str(home2.paths.archive)], check=True)
    shutil.rmtree(home2.paths.archive)
    night(home2)
    assert not (home2.paths.archive / path2).exists() and path2 not in objects(bucket2, prefix2)


def test_a_pull_cut_short_archives_nothing_that_night(s3, tmp_path, monkeypatch):
    from transforms.errors import ArchiveUnreachable

    home, bucket, prefix = s3_home(tmp_path)
    first = md("2026-07-19", "1037", ("user", "Pagi! Lanjut setup Proxmox."), session_id="s1")
    drop(home, "2026-07-19-1037.md", first)
    night(home)
    subprocess.run(["chmod", "-R", "u+w", str(home.paths.archive)], check=True)
    shutil.rmtree(home.paths.archive)  # a new machine
    grown = md(
        "2026-07-19", "1037", ("user", "Pagi! Lanjut setup Proxmox."), ("assistant", "Oke lagi."), session_id="s1"
    )
    drop(home, "2026-07-19-1037.md", grown)  # the same name, other bytes
    real = remote._download

    def flaky(b, rel, dest):
        if rel.startswith("daily_sessions/2026-07-19/"):
            raise ArchiveUnreachable("read timeout")
        return real(b, rel, dest)

    monkeypatch.setattr(remote, "_download", flaky)
    cut = night(home)
    monkeypatch.undo()
    assert cut["degraded"]["archive"] == "unreachable" and cut["archive"]["placed"] == 0
    healed = night(home)
    assert "degraded" not in healed and healed["archive"]["sources_deleted"] == 1
    there = objects(bucket, prefix)
    assert sha(there["daily_sessions/2026-07-19/2026-07-19-1037.md"]) == sha(first)  # never overwritten
    assert sum(sha(v) == sha(grown) for v in there.values()) == 1  # the grown one under a new name
    assert verify(home).problems == 0


def test_keys_kenang_must_not_copy_down_are_ignored_and_said(s3, tmp_path):
    home, bucket, prefix = s3_home(tmp_path)
    c = client()
    c.put_object(Bucket=bucket, Key=f"{prefix}/daily_sessions/../../escaped.txt", Body=b"owned")
    c.put_object(Bucket=bucket, Key=f"{prefix}/daily_sessions/", Body=b"")  # a console's "create folder"
    scenario(home)
    res = night(home)
    assert not (home.paths.home / "escaped.txt").exists() and not (tmp_path / "escaped.txt").exists()
    assert (home.paths.archive / "daily_sessions").is_dir() and res["archive"]["sources_deleted"] == 3
    assert sorted(res["archive_remote"]["ignored"]) == ["daily_sessions/", "daily_sessions/../../escaped.txt"]


def test_a_night_with_an_imported_export_verifies_clean_in_the_bucket(s3, tmp_path):
    from conftest import FIXTURES

    home, bucket, prefix = s3_home(tmp_path)
    src = FIXTURES / "imports" / "chatgpt" / "mitkury__chatgpt-export-parser__example-conversation.json"
    drop(home, f"gading/{src.name}", src.read_bytes())
    res = night(home)
    assert "degraded" not in res and res["imports"]["sources_deleted"] == 1
    assert f"imports/gading/{src.name}" in objects(bucket, prefix)
    rep = verify(home)
    assert rep.problems == 0 and rep.bucket["unrecorded"] == ()


def test_a_purge_after_a_plain_forget_finds_the_phrase_in_the_bucket_even_with_the_copy_gone(s3, tmp_path):
    home, bucket, prefix = s3_home(tmp_path)
    scenario(home)
    night(home)
    path = next(r["path"] for r in table(home, "archive_files") if r["path"].endswith("/2026-07-18-2340.md"))
    args = ("forget", "--home", str(home.paths.home), "--user", "gading", "--text", "Masih bangun", "--yes")
    assert kenang(*args).exit_code == 0 and (home.paths.archive / path).is_file()
    shutil.rmtree(home.paths.archive / "daily_sessions")  # a copy made anew: the originals are in the bucket alone
    r = kenang(*args, "--purge")
    assert r.exit_code == 0 and "1 archived file(s) purged" in r.stdout, r.stdout + r.stderr
    versions = client().list_object_versions(Bucket=bucket, Prefix=f"{prefix}/{path}")
    assert not versions.get("Versions") and not versions.get("DeleteMarkers")
    assert not (home.paths.archive / path).exists() and remote.owed(home) == []
    assert verify(home).problems == 0
