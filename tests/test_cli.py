"""The command line: every command has --help, queries print tables or JSON, exit codes mean something."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys

import pytest
from helpers import NOW, kenang, scenario

COMMANDS = ["init", "run", "backfill", "status", "verify", "sql", "import", "recall", "analyze", "demo"]


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help(command):
    r = kenang(command, "--help")
    assert r.exit_code == 0
    assert "Usage: kenang " + command in r.stdout


def cli_json(*args: str):
    r = kenang(*args, "--json")
    assert r.exit_code == 0, r.stderr
    return json.loads(r.stdout)


@pytest.mark.usefixtures("prefect_api")
def test_run_status_sql_and_verify_work_end_to_end(home):
    scenario(home)
    h = str(home.paths.home)
    dry = cli_json("run", "--home", h, "--now", NOW.isoformat(), "--dry-run")
    assert len(dry["archive"]) == 3 and len(dry["quarantine"]) == 3 and len(dry["waiting"]) == 2
    assert (home.paths.active / "2026-07-19-1037.md").exists()  # a dry run changes nothing
    dry_text = kenang("run", "--home", h, "--now", NOW.isoformat(), "--dry-run").stdout
    assert "taken after 2026-07-21 02:00+07:00: its day is not over, plus the grace period" in dry_text
    # without --now, the time it says is the home's local time, to the second, as with --now
    when = dt.datetime.fromisoformat(cli_json("run", "--home", h, "--dry-run")["now"])
    assert when.utcoffset() == dt.timedelta(hours=7) and when.microsecond == 0

    result = cli_json("run", "--home", h, "--now", NOW.isoformat())
    assert result["load"]["loaded"] == 3 and result["quarantine"]["moved"] == 3

    status = cli_json("status", "--home", h)
    assert status["days"]["loaded"] == 3 and status["days"]["missing"] == [] and status["days"]["failed"] == []
    # status looks at the wall clock, where 2026-07-20 is long over: that file is ready now
    assert {p["why"] for p in status["pending"]} == {"ready", "not_quiet"}
    assert {q["kind"] for q in status["quarantine"]} == {"bad_json", "bad_utf8", "symlink"}
    assert status["runs"][0]["status"] == "completed"
    # a run's times in the home's zone (Asia/Jakarta), as the notes and `kenang sql` show times
    assert dt.datetime.fromisoformat(status["runs"][0]["started_at"]).utcoffset() == dt.timedelta(hours=7)

    rows = cli_json("sql", "--home", h, "SELECT user_id, count(*) AS n FROM messages GROUP BY 1 ORDER BY 1")
    assert rows == [{"user_id": "default", "n": 2}, {"user_id": "gading", "n": 3}, {"user_id": "rina", "n": 2}]

    assert cli_json("verify", "--home", h)["problems"] == 0
    text = kenang("status", "--home", h).stdout
    assert "days: 3 loaded, 0 failed, 0 missing" in text
    assert "ready: the next run takes it" in text and "still being written; taken once it rests" in text
    last_run = text.splitlines()[text.splitlines().index("last runs:") + 3]
    assert last_run.count("+07:00") == 2 and "+00:00" not in last_run, last_run


def test_sql_is_read_only(home):
    r = kenang("sql", "--home", str(home.paths.home), "CREATE TABLE x (a INT)")
    assert r.exit_code == 2 and "read-only" in r.stderr.lower()


def test_verify_exits_non_zero_when_the_archive_has_a_problem(home):
    stray = home.paths.archive / "daily_sessions/2026-07-19/stray.md"
    stray.parent.mkdir(parents=True)
    stray.write_text("## user\nx\n")
    r = kenang("verify", "--home", str(home.paths.home))
    assert r.exit_code == 1 and "UNRECORDED" in r.stdout


@pytest.mark.parametrize("command", [["status"], ["verify"], ["sql", "SELECT 1"], ["run", "--dry-run"]])
def test_queries_never_import_prefect(home, command):
    code = (
        "import sys\nfrom flows.cli.main import main\n"
        f"try:\n    main({command[:1] + ['--home', str(home.paths.home)] + command[1:]!r})\n"
        "except SystemExit as e:\n    assert e.code in (0, None), e.code\n"
        "assert 'prefect' not in sys.modules, 'prefect was imported'\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ})
    assert out.returncode == 0, out.stderr


def test_backfill_rejects_an_end_before_its_start(home):
    r = kenang("backfill", "--home", str(home.paths.home), "--start", "2026-07-10", "--end", "2026-07-01")
    assert r.exit_code == 2 and "before --start" in r.stderr


def test_an_error_under_a_command_named_token_keeps_its_words_and_still_hides_a_secret(home):
    at = ("--home", str(home.paths.home))
    r = kenang("mcp", "token", "add", *at, "--user", "nobody")
    assert (r.exit_code, r.stdout) == (2, "")
    assert r.stderr == (
        "kenang mcp token add: this home has no user 'nobody' (its users: default); check the spelling, "
        "or list a new user under mcp.users in kenang.yaml\n"
    )
    r = kenang("mcp", "token", "add", *at, "--user", "password=hunter2-xyz")
    assert r.exit_code == 2 and "hunter2" not in r.stderr
    assert r.stderr.startswith("kenang mcp token add: 'password=[REDACTED:password]' is not a valid user id")
    # quoted as typed, not lower-cased: a key the gate knows by its capitals is still found
    jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
    for command in (("mcp", "token", "add"), ("mcp",), ("recall", "tea")):
        r = kenang(*command, *at, "--user", jwt)
        assert r.exit_code == 2 and "dozjg" not in r.stderr.lower() and "eyjhbg" not in r.stderr.lower(), r.stderr


@pytest.mark.parametrize(
    "command",
    [
        ("run",),
        ("backfill", "--start", "2026-07-01", "--end", "2026-07-02"),
        ("adopt", "."),
        ("forget", "--day", "2026-07-01"),
    ],
)
def test_a_negative_wait_is_refused_before_anything_runs(home, command):
    extra = ("--user", "default") if command[0] == "forget" else ()
    r = kenang(*command, *extra, "--home", str(home.paths.home), "--wait", "-5")
    assert r.exit_code == 2 and "--wait" in r.stderr and "x>=0" in r.stderr


def test_removing_a_token_nothing_matches_says_none_does_and_how_to_list_them(home):
    kenang("mcp", "token", "add", "--home", str(home.paths.home), "--user", "default")
    r = kenang("mcp", "token", "remove", "--home", str(home.paths.home), "zzzz")
    assert r.exit_code == 2
    assert "no token" in r.stderr and "kenang mcp token list" in r.stderr and "0 tokens" not in r.stderr


@pytest.mark.parametrize(
    ("server", "wall", "seconds", "shown"),
    [
        (None, 2.0, 11.0, 9.0),  # a short night behind a temporary server's start-up: the hint says how long it took
        (None, 274.0, 283.0, None),  # a long night: its own work, not the server's start-up, took the time
        (None, 0.5, 2.5, None),  # a start-up of a second or two is not worth a hint
        ("http://127.0.0.1:4200/api", 2.0, 11.0, None),  # a server to reuse: nothing to hint
    ],
)
def test_the_prefect_start_up_hint_shows_only_when_the_start_up_took_the_time(
    monkeypatch, server, wall, seconds, shown
):
    from flows.cli import main

    monkeypatch.setattr(main, "_prefect_server", lambda: server)
    got = main._start_up_share({"wall_seconds": wall}, seconds)
    assert got == (None if shown is None else pytest.approx(shown))


@pytest.mark.parametrize(
    "argv",
    [
        ["recall", "x", "--start", "2025-02-30"],
        ["backfill", "--start", "2025-02-30", "--end", "2025-03-01"],
        ["forget", "--user", "default", "--day", "2025-02-30", "--dry-run"],
        ["analyze", "mood_timeseries", "--end", "2025-13-01"],
    ],
)
def test_a_day_that_is_not_in_the_calendar_is_refused_as_no_date(home, argv):
    r = kenang(*argv, "--home", str(home.paths.home))
    bad = next(a for a in argv if a.startswith("2025-") and a not in ("2025-03-01",))
    assert r.exit_code == 2 and f"'{bad}' is not a date; give YYYY-MM-DD" in r.stderr, r.stderr
