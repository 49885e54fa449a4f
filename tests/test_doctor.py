"""``kenang doctor`` through the CLI: a healthy home passes, and each broken part fails with its line.

Real things only: a real Prefect server (the session's), a port nothing listens on, a
read-only tmpfs for the archive, a model path that is not there.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import socket
import subprocess
import sys

import prefect.context  # noqa: F401  (see below)
import pytest
from helpers import drop, kenang, md

from flows.config import edit_config

# Prefect takes its settings from the environment of the moment it is first imported, and keeps them: imported
# here, before a test sets PREFECT_API_URL to a port nothing listens on, so that a later test's in-process
# `kenang doctor` does not find that port in Prefect's settings.


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def doctor(home, *extra: str):
    out = kenang("doctor", "--home", str(home.paths.home), *extra)
    return out, out.stdout.splitlines()


def line_of(lines: list[str], name: str) -> str:
    return next(line for line in lines if line[6:].startswith(name + " "))


def test_a_healthy_home_passes_every_check_and_exits_0(home, prefect_api, monkeypatch):
    monkeypatch.setenv("PREFECT_API_URL", prefect_api)
    out, lines = doctor(home)
    assert out.exit_code == 0, out.stdout
    names = [line[6:18].strip() for line in lines]
    assert names[:8] == ["config", "home", "archive", "summarizer", "embedder", "prefect", "schedule", "sources"]
    # the schedule's line depends on what other tests served on the session's server: checked below on its own
    assert {line.split()[0] for line in lines if line[6:18].strip() != "schedule"} == {"ok"}
    assert f"the Prefect server at {prefect_api} answers" in line_of(lines, "prefect")
    assert "extractive: no model to load" in line_of(lines, "summarizer")
    assert "MiB free" in line_of(lines, "disk home")
    data = json.loads(doctor(home, "--json")[0].stdout)
    assert data["ok"] is True and {c["status"] for c in data["checks"] if c["name"] != "schedule"} == {"ok"}


def test_the_nightly_deployment_is_checked_for_a_scheduled_run_and_a_pause(home, prefect_api):
    import httpx

    from flows.cli.doctor import check_schedule
    from flows.serve import PREFECT_YAML, deployments

    # under a name of its own: the session's server may serve the real nightly/nightly for other tests
    name = "nightly/doctor-check"
    assert check_schedule(name).status == "ok"  # none: nights come from `kenang run`
    (nightly,) = deployments(PREFECT_YAML, ("nightly",), str(home.paths.home))
    nightly.name = name.split("/")[1]
    deployment_id = nightly.apply()
    try:
        found = check_schedule(name)  # the server's scheduler has not run yet: said, never a failure
        assert found.status == "warn" and "has no run scheduled" in found.what
        httpx.post(f"{prefect_api}/deployments/{deployment_id}/schedule", json={}, timeout=60).raise_for_status()
        found = check_schedule(name)
        assert found.status == "ok" and "the next nightly run is scheduled for 20" in found.what
        # nothing served it: a week later, its run is long overdue
        found = check_schedule(name, now=dt.datetime.now(dt.UTC) + dt.timedelta(days=7))
        assert found.status == "warn" and "has not started" in found.what and "kenang serve" in found.todo
        httpx.patch(f"{prefect_api}/deployments/{deployment_id}", json={"paused": True}, timeout=60).raise_for_status()
        found = check_schedule(name)
        assert found.status == "warn" and "paused" in found.what
    finally:
        httpx.delete(f"{prefect_api}/deployments/{deployment_id}", timeout=60)


def test_a_prefect_server_that_does_not_answer_fails_its_line_and_the_exit_status(home, monkeypatch):
    url = f"http://127.0.0.1:{free_port()}/api"  # nothing listens there
    monkeypatch.setenv("PREFECT_API_URL", url)
    out, lines = doctor(home)
    assert out.exit_code == 1
    line = line_of(lines, "prefect")
    assert line.startswith("FAIL") and url in line and "cannot reach it" in line
    assert "`prefect server start`" in line and "unset PREFECT_API_URL" in line  # what to do
    assert line_of(lines, "archive").startswith("ok")  # the other checks still ran


@pytest.mark.parametrize("command", ["run", "backfill"])
def test_a_run_whose_prefect_server_does_not_answer_says_so_in_one_line(home, command):
    """A nightly from cron with its server down: one line saying what to do, never Prefect's traceback."""
    drop(home, "gading/day.md", md("2026-07-17", "0900", ("user", "Proxmox boot order?"), ("assistant", "VM first.")))
    url = f"http://127.0.0.1:{free_port()}/api"  # nothing listens there
    # --reindex: a backfill that re-derives is never quiet (one with nothing to derive runs without Prefect)
    args = ["--start", "2026-07-17", "--end", "2026-07-17", "--reindex"] if command == "backfill" else []
    r = subprocess.run(
        [sys.executable, "-m", "flows.cli.main", command, "--home", str(home.paths.home), *args],
        env={**os.environ, "PREFECT_API_URL": url},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 1, r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert f"the Prefect server at {url} does not answer" in r.stderr
    assert "`prefect server start`" in r.stderr and "unset PREFECT_API_URL" in r.stderr
    assert (home.paths.active / "gading" / "day.md").is_file()  # what waits stays


def test_a_missing_model_path_fails_the_summarizer_line(home, monkeypatch):
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    missing = home.paths.home / "models" / "nope.gguf"
    edit_config(home.paths.home, lambda d: d["summarizer"].update(backend="llama", model_path=str(missing)))
    out, lines = doctor(home)
    assert out.exit_code == 1
    line = line_of(lines, "summarizer")
    assert line.startswith("FAIL") and f"{missing} is not a file" in line
    assert "summarizer.backend: extractive" in line


def test_an_unreachable_model_server_fails_with_its_url_and_the_key_to_fix(home, monkeypatch):
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    url = f"http://127.0.0.1:{free_port()}/v1"
    edit_config(home.paths.home, lambda d: d["summarizer"].update(backend="openai", base_url=url, model="qwen"))
    out = kenang("doctor", "--home", str(home.paths.home), "--json")
    assert out.exit_code == 1
    data = json.loads(out.stdout)
    check = next(c for c in data["checks"] if c["name"] == "summarizer")
    assert data["ok"] is False and check["status"] == "FAIL"
    assert f"{url}/models does not answer" in check["what"] and "summarizer.base_url" in check["todo"]


def test_a_source_that_is_not_there_yet_is_a_warning_not_a_failure(home, monkeypatch):
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    gone = home.paths.home.parent / "no-such-agent"
    edit_config(home.paths.home, lambda d: d.update(sources=[{"name": "aider", "kind": "aider", "path": str(gone)}]))
    out, lines = doctor(home)
    assert out.exit_code == 0, out.stdout
    line = line_of(lines, "source aider")
    assert line.startswith("warn") and f"{gone} is not there" in line


def test_a_home_that_was_never_initialised_fails_with_what_to_run(tmp_path):
    out = kenang("doctor", "--home", str(tmp_path / "nowhere"))
    assert out.exit_code == 1
    assert out.stdout.startswith("FAIL  config") and "kenang init" in out.stdout
    assert out.stdout.count("kenang init") == 1  # the advice once, not the error's and the todo's


def test_a_home_whose_kenang_yaml_is_wrong_is_told_to_fix_it_not_to_run_init(home):
    """kenang init refuses a home whose kenang.yaml does not read: the advice is the file and config check."""
    home.paths.config_file.write_text("timezone: Asia/Jakart\n", encoding="utf-8")
    out = kenang("doctor", "--home", str(home.paths.home))
    assert out.exit_code == 1
    line = out.stdout.splitlines()[0]
    assert line.startswith("FAIL  config") and "Asia/Jakart" in line
    assert "kenang config check" in out.stdout and "kenang init" not in out.stdout


@pytest.fixture
def small_fs(tmp_path):
    where = tmp_path / "smallfs"
    where.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(where)], capture_output=True).returncode:
        pytest.skip("this machine does not let the tests mount a tmpfs (needs CAP_SYS_ADMIN)")
    yield where
    subprocess.run(["umount", "-l", str(where)], capture_output=True)


def test_a_read_only_archive_fails_the_archive_line(home, small_fs, monkeypatch):
    monkeypatch.delenv("PREFECT_API_URL", raising=False)

    def change(d):
        d["paths"]["archive"] = str(small_fs)
        d["limits"]["archive_min_free_mb"] = 0  # the tmpfs is small on purpose

    edit_config(home.paths.home, change)
    assert kenang("init", "--home", str(home.paths.home)).exit_code == 0  # claims the new archive
    out, lines = doctor(home)
    assert out.exit_code == 0 and line_of(lines, "disk archive").startswith("warn")  # 2 MiB: a warning, no failure
    assert subprocess.run(["mount", "-o", "remount,ro", str(small_fs)]).returncode == 0
    out, lines = doctor(home)
    assert out.exit_code == 1
    line = line_of(lines, "archive")
    assert line.startswith("FAIL") and "read only" in line and "Read-only" in line
    assert "remount it read-write" in line
    assert line_of(lines, "home").startswith("ok")


@pytest.fixture
def https_prefect(tmp_path):
    """A server on 127.0.0.1 that answers ``/health`` over TLS with a self-signed certificate, as a Prefect server
    behind a homelab's reverse proxy does; yields (its URL, the certificate's file)."""
    import http.server
    import shutil as sh
    import ssl
    import threading

    if not sh.which("openssl"):
        pytest.skip("needs the openssl command to make a certificate")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=127.0.0.1"]
        + ["-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True,
        capture_output=True,
    )

    class Health(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (http.server's name)
            self.send_response(200 if self.path == "/api/health" else 404)
            self.end_headers()
            self.wfile.write(b"true")

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Health)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}/api", cert
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_a_prefect_server_over_tls_is_checked_as_prefects_own_client_checks_it(https_prefect):
    """Prefect's settings as a host sets them, in the environment of a new process."""
    url, cert = https_prefect
    code = (
        "import json, sys; from flows.cli.doctor import check_prefect; "
        "c = check_prefect(sys.argv[1]); print(json.dumps([c.status, c.what, c.todo]))"
    )

    def check(**env: str) -> list[str]:
        clean = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_API_", "SSL_CERT_"))}
        r = subprocess.run([sys.executable, "-c", code, url], env={**clean, **env}, capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)

    status, what, todo = check()
    assert status == "FAIL" and "TLS certificate is not one this host trusts" in what
    assert "PREFECT_API_SSL_CERT_FILE" in todo
    assert check(PREFECT_API_SSL_CERT_FILE=str(cert))[0] == "ok"
    assert check(PREFECT_API_TLS_INSECURE_SKIP_VERIFY="true")[0] == "ok"
    status, what, todo = check(PREFECT_API_SSL_CERT_FILE=str(cert.parent / "no-such.pem"))  # a typo: a line, no crash
    assert status == "FAIL" and "no-such.pem" in what and "PREFECT_API_SSL_CERT_FILE" in todo
    url = url.replace("127.0.0.1", "localhost")  # a name the certificate was not made for
    status, what, todo = check(PREFECT_API_SSL_CERT_FILE=str(cert))
    assert status == "FAIL" and "not made for this host name" in what and "PREFECT_API_URL" in todo
