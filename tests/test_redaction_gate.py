"""One redaction gate on every way out: a secret planted in bad input reaches no reason, table, output or log.

Each kind of bad input carries a fake secret: a token in place of a header's timestamp,
an AWS key pair and a passphrase as JSONL timestamps, a token as an export's
conversation id, a token in a file name and in a symlink's target. A real nightly run
quarantines them all, and neither the secret nor its first 8 characters may be found in
the quarantine table, the reason files, the runs table, ``kenang run`` (text and
``--json``), ``kenang status`` (text and ``--json``), or the log. The MCP server's
errors, click's usage errors, an unexpected error's traceback and ``kenang sources``
pass the same gate.

Every fake secret is built by concatenation so that no secret scanner trips on this file.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os

import pytest
from fastmcp import Client
from fastmcp.exceptions import MCPError, ToolError
from helpers import NOW, OLD, drop, jsonl, kenang, md, table
from import_support import FIXTURES

from flows.query.mcp import build_server

pytestmark = pytest.mark.usefixtures("prefect_api")

GITHUB = "gh" + "p_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
GITHUB_2 = "gh" + "p_" + "Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp9Oo8"
AWS = "AK" + "IA" + "IOSFODNN7EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"
PASSPHRASE = "correct horse battery staple"
# What may not be found anywhere: each secret, and its first 8 characters.
NEEDLES = [GITHUB, GITHUB[:8], GITHUB_2, GITHUB_2[:8], AWS, AWS[:8], AWS_SECRET, AWS_SECRET[:8], PASSPHRASE, "battery"]


def plant(home) -> int:
    """A good file and bad ones, each with a secret where kenang quotes what it could not read; returns how many bad."""
    day = "2026-07-19"
    drop(home, "good.md", md(day, "1000", ("user", "tetap jalan"), ("assistant", "oke")))
    # a header line with a token in place of its timestamp
    drop(home, "header-token.md", f"## user · 1{GITHUB}\nhalo\n".encode())
    # an AWS key pair and a passphrase where a JSONL timestamp goes
    drop(
        home,
        "aws-pair.jsonl",
        jsonl({"role": "user", "content": "x", "timestamp": f"AWS key {AWS} secret {AWS_SECRET}"}),
    )
    drop(home, "passphrase.jsonl", jsonl({"role": "user", "content": "x", "timestamp": f"password: {PASSPHRASE}"}))
    # an export whose conversation id is a token, broken so that its reason names the conversation
    conv = json.loads((FIXTURES / "chatgpt" / "single_object.json").read_bytes())
    conv["id"] = conv["conversation_id"] = GITHUB_2
    del conv["mapping"]["s-u1"]["message"]["author"]["role"]
    drop(home, "conversations.json", json.dumps(conv).encode())
    # a bad file whose name is a token, and a symlink whose target names one
    drop(home, f"{GITHUB}.jsonl", b'{"role": "user", "content": "hi"}\n{"role": "assist')
    link = home.paths.active / "linked.md"
    os.symlink(f"/tmp/{GITHUB_2}/key", link)
    os.utime(link, (OLD, OLD), follow_symlinks=False)
    return 6


def leaks(text: str) -> list[str]:
    return [n for n in NEEDLES if n in text]


def everything_written(home) -> str:
    """The quarantine and runs tables (decoded), the reason files and what status says, as one text."""
    parts = [json.dumps(table(home, name), default=str) for name in ("quarantine", "runs", "days")]
    parts += [p.read_text() for p in home.paths.quarantine.rglob("*.reason.json")]
    for args in (("status",), ("status", "--json")):
        r = kenang(*args, "--home", str(home.paths.home))
        parts.append(r.stdout + r.stderr)
    return "\n".join(parts)


@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_a_secret_planted_in_bad_input_reaches_no_reason_table_output_or_log(home, caplog, as_json):
    n = plant(home)
    caplog.set_level(logging.DEBUG)
    r = kenang("-v", "run", "--home", str(home.paths.home), "--now", NOW.isoformat(), *(["--json"] if as_json else []))

    assert r.exit_code == 0, r.output
    quarantined = table(home, "quarantine")
    assert len(quarantined) == n  # every bad file; the good one is archived
    assert {q["kind"] for q in quarantined} >= {"bad_timestamp", "bad_record", "symlink"}
    assert leaks(r.stdout + r.stderr) == []
    assert leaks(caplog.text) == []
    assert leaks(everything_written(home)) == []
    # the reasons still say what was wrong, with the secret's place marked
    reasons = " ".join(q["reason"] for q in quarantined)
    assert "unparseable timestamp" in reasons and "[REDACTED:" in reasons


def test_a_log_record_passes_the_gate_whatever_logger_writes_it(caplog):
    from transforms import log_gate

    log_gate.install()
    caplog.set_level(logging.INFO)
    # an earlier run may have left Prefect's run logger quiet; this test wants to see what it writes
    caplog.set_level(logging.INFO, logger="prefect.flow_runs")
    logging.getLogger("kenang").warning("could not read %s", f"1{GITHUB}")
    from prefect.settings import PREFECT_LOGGING_TO_API_WHEN_MISSING_FLOW, temporary_settings

    with temporary_settings({PREFECT_LOGGING_TO_API_WHEN_MISSING_FLOW: "ignore"}):  # no run: nothing for its API
        logging.getLogger("prefect.flow_runs").error("failed: password: %s", PASSPHRASE)
    try:
        raise ValueError(f"AWS key {AWS} secret {AWS_SECRET}")
    except ValueError:
        logging.getLogger("kenang.mcp").exception("tool failed")
    assert leaks(caplog.text) == []
    assert caplog.text.count("[REDACTED:") >= 4


def test_a_gated_log_record_keeps_its_arguments_for_formatters_that_read_them():
    from transforms import log_gate

    class Keep(logging.Handler):
        def emit(self, record):
            records.append(record)

    log_gate.install()
    records: list[logging.LogRecord] = []
    access = logging.getLogger("kenang.test.access")
    access.addHandler(handler := Keep(logging.INFO))
    access.setLevel(logging.INFO)
    try:
        access.info('%s - "%s %s HTTP/%s" %d', "127.0.0.1:5", "POST", "/mcp", "1.1", 200)
        access.info('%s - "%s %s HTTP/%s" %d', "127.0.0.1:5", "GET", f"/x?token={GITHUB}", "1.1", 200)
    finally:
        access.removeHandler(handler)
    plain, secret = records
    assert plain.args == ("127.0.0.1:5", "POST", "/mcp", "1.1", 200)
    assert len(secret.args) == 5 and secret.args[4] == 200 and leaks(secret.getMessage()) == []


def test_an_mcp_error_passes_the_gate(home):
    async def go():
        async with Client(build_server(home, user="default")) as c:
            with pytest.raises(ToolError) as bad_turn:
                await c.call_tool(
                    "session_write", {"turns": [{"role": "user", "content": "halo", "timestamp": f"1{GITHUB}"}]}
                )
            with pytest.raises(MCPError) as bad_date:
                await c.read_resource(f"kenang://summary/{GITHUB_2}")
            return str(bad_turn.value), str(bad_date.value)

    turn_error, date_error = asyncio.run(go())
    assert "timestamp" in turn_error and "[REDACTED:" in turn_error
    assert leaks(turn_error) == [] and leaks(date_error) == []


def test_an_mcp_answer_passes_the_gate_even_for_what_an_older_redactor_left(home):
    """A summary written before a rule existed (here: a passphrase left whole) is served redacted."""
    from flows.query.service import MemoryService

    class Old(MemoryService):
        def summary_text(self, user, day):
            return f"# {day}\nThe wifi password: {PASSPHRASE}, and AWS key {AWS} secret {AWS_SECRET}."

    async def go():
        async with Client(build_server(home, user="default", service=Old(home))) as c:
            return await c.read_resource("kenang://summary/2026-07-19")

    text = "".join(getattr(part, "text", "") for part in asyncio.run(go()))
    assert "wifi password: [REDACTED:password]" in text and leaks(text) == []


def test_a_usage_error_that_quotes_a_secret_passes_the_gate(home):
    h = str(home.paths.home)
    for args in (
        ("run", "--home", h, "--now", f"1{GITHUB}"),
        (GITHUB,),
        (f"--{GITHUB}",),
        ("import", "--home", h, "--user", "default", f"/nonexistent/{GITHUB}.json"),
    ):
        r = kenang(*args)
        assert r.exit_code == 2, r.output
        # a path kenang import skips is named by its hash (``shown_path``), as every name that holds a secret is
        marker = "/nonexistent/redacted-" if args[0] == "import" else "[REDACTED:github_token]"
        assert leaks(r.stdout + r.stderr) == [] and marker in r.stderr, r.stderr


def test_an_unexpected_error_is_printed_through_the_gate(home):
    """A bug's traceback quotes what it was given: the process prints it redacted."""
    import subprocess
    import sys

    code = (
        "import flows.cli.report as report\n"
        "def broken(data):\n"
        f"    raise RuntimeError('could not render ' + {('1' + GITHUB)!r} + ' AWS key {AWS} secret {AWS_SECRET}')\n"
        "report.render_status = broken\n"
        "from flows.cli.main import main\n"
        f"main(['status', '--home', {str(home.paths.home)!r}])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 1
    assert "RuntimeError: could not render" in out.stderr and "[REDACTED:" in out.stderr
    assert leaks(out.stdout + out.stderr) == []


def test_sources_output_passes_the_gate_even_for_what_an_older_kenang_recorded(home):
    h = str(home.paths.home)
    folder = home.paths.home / "agent" / GITHUB
    folder.mkdir(parents=True)
    r = kenang("sources", "add", "notes", "--kind", "folder", "--path", f"{folder}/*.md", "--home", h)
    assert r.exit_code == 0 and leaks(r.stdout + r.stderr) == []
    state = home.paths.warehouse / "_sources" / "notes.json"  # as a kenang before the gate wrote it
    state.parent.mkdir(parents=True, exist_ok=True)
    state.write_text(
        json.dumps({"errors": [f"{folder}/a.md: cannot read it"], "notes": [f"password: {PASSPHRASE}"], "files": {}})
    )
    for args in (("sources",), ("sources", "--json")):
        r = kenang(*args, "--home", h)
        assert r.exit_code == 0, r.output
        assert leaks(r.stdout + r.stderr) == [] and "[REDACTED:" in r.stdout
