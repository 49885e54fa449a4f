"""Which user a CLI query serves: a misspelt --user is refused with the home's users, never answered with nothing.

Every command that reads or writes one user's memory (``recall``, ``analyze``, ``memory``, ``remember``,
``forget``, ``open-items``) asks ``flows.store.users`` first, as ``kenang mcp`` does. Without --user it
serves the default user, or the home's only user with data when the default user holds nothing, and says so.
``kenang import`` may start a user, so it refuses none: it says in one line when its user is new.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import NOW, drop, kenang, md

from flows.config import init_home
from flows.pipeline import nightly
from flows.store import mount

REFUSED = (
    "this home has no user 'gadng' (its users: default, gading); check the spelling, "
    "or list a new user under mcp.users in kenang.yaml\n"
)
SERVING = "serving gading, the home's only user with data ('default', the default user, holds nothing)\n"
PER_USER = [  # (the command as it names itself, its arguments)
    ("kenang recall", ("recall", "sahur")),
    ("kenang analyze", ("analyze", "mood_timeseries")),
    ("kenang memory show", ("memory", "show")),
    ("kenang memory candidates", ("memory", "candidates")),
    ("kenang memory replace", ("memory", "replace", "tabs", "spaces")),
    ("kenang memory remove", ("memory", "remove", "tabs")),
    ("kenang remember", ("remember", "Prefers tabs.")),
    ("kenang forget", ("forget", "--day", "2026-07-18", "--dry-run")),
    ("kenang open-items", ("open-items",)),
]


@pytest.fixture(scope="module")
def gadings(tmp_path_factory, prefect_api):
    """A home whose every day is gading's (the default user, 'default', holds nothing), after one night."""
    settings, _ = init_home(
        tmp_path_factory.mktemp("users") / "home",
        {"summarizer": {"backend": "extractive"}, "embedder": {"backend": "none"}},
    )
    mount.claim(settings)
    drop(
        settings,
        "gading/2026-07-18-2340.md",
        md("2026-07-18", "2340", ("user", "Jadwal sahur besok jam 3 ya?"), ("assistant", "Jam 03.00, siap.")),
    )
    nightly(now=NOW, home=str(settings.paths.home))
    return settings


@pytest.mark.parametrize(("command", "args"), PER_USER, ids=[c for c, _ in PER_USER])
def test_a_user_the_home_does_not_know_is_one_line_naming_its_users_and_exit_2(gadings, command, args):
    r = kenang(*args, "--user", "gadng", "--home", str(gadings.paths.home))
    assert (r.exit_code, r.stdout, r.stderr) == (2, "", f"{command}: {REFUSED}")
    assert not (gadings.paths.memory / "gadng").exists()


@pytest.mark.parametrize(("command", "args"), PER_USER, ids=[c for c, _ in PER_USER])
def test_an_empty_user_is_refused_never_taken_as_the_default_user(gadings, command, args):
    # `--user "$WHO"` with WHO unset: forget above all must not act on the default user, or anyone
    r = kenang(*args, "--user", "", "--home", str(gadings.paths.home))
    assert (r.exit_code, r.stdout) == (2, "")
    assert r.stderr == f"{command}: the user is empty; name one of this home's users (default, gading)\n"


def test_an_empty_user_starts_no_import(gadings, tmp_path):
    export = tmp_path / "chat.md"
    export.write_bytes(md("2026-07-18", "2340", ("user", "Halo."), ("assistant", "Hai.")))
    r = kenang("import", str(export), "--user", "", "--home", str(gadings.paths.home))
    assert (r.exit_code, r.stdout) == (2, "")
    assert "--user is empty; name whose conversations these are (a new user starts here)" in r.stderr
    assert not [p for p in gadings.paths.active.rglob("*") if p.is_file()]


def test_a_misspelt_user_in_capitals_is_refused_too(gadings):
    r = kenang("recall", "sahur", "--user", "GADNG", "--home", str(gadings.paths.home))
    assert (r.exit_code, r.stderr) == (2, f"kenang recall: {REFUSED.replace(repr('gadng'), repr('GADNG'))}")


def test_without_a_user_recall_serves_the_only_user_with_data_and_says_so(gadings):
    r = kenang("recall", "sahur", "--json", "--home", str(gadings.paths.home))
    assert r.exit_code == 0 and r.stderr == f"kenang recall: {SERVING}"
    hits = json.loads(r.stdout)["results"]
    assert hits and {h["date"] for h in hits} == {"2026-07-18"}


def test_without_a_user_analyze_memory_and_open_items_serve_the_same_user(gadings):
    h = str(gadings.paths.home)
    r = kenang("analyze", "mood_timeseries", "--by", "day", "--json", "--home", h)
    assert (r.exit_code, r.stderr, json.loads(r.stdout)["user"]) == (0, f"kenang analyze: {SERVING}", "gading")
    r = kenang("memory", "show", "--json", "--home", h)
    assert (r.exit_code, r.stderr, json.loads(r.stdout)["user"]) == (0, f"kenang memory show: {SERVING}", "gading")
    r = kenang("open-items", "--home", h)
    assert (r.exit_code, r.stderr) == (0, f"kenang open-items: {SERVING}")


def test_the_default_user_is_served_without_a_note_once_it_holds_data(home):
    drop(home, "2026-07-18-0900.md", md("2026-07-18", "0900", ("user", "Pagi.")))
    drop(home, "gading/2026-07-18-2340.md", md("2026-07-18", "2340", ("user", "Masih bangun?")))
    r = kenang("memory", "show", "--json", "--home", str(home.paths.home))
    assert (r.exit_code, r.stderr, json.loads(r.stdout)["user"]) == (0, "", "default")


def test_without_a_user_a_home_of_two_users_and_an_empty_default_asks_which(home):
    drop(home, "gading/2026-07-18-2340.md", md("2026-07-18", "2340", ("user", "Masih bangun?")))
    drop(home, "rina/chat.md", md("2026-07-19", "2100", ("user", "Jadwal sahur?")))
    for args in (("recall", "sahur"), ("analyze", "productivity"), ("memory", "show"), ("open-items",)):
        r = kenang(*args, "--home", str(home.paths.home))
        assert r.exit_code == 2 and r.stdout == "", args
        assert r.stderr.endswith(
            ": the default user 'default' holds nothing and this home has 2 other users (gading, rina); "
            "choose one with --user\n"
        ), args
        assert r.stderr.count("\n") == 1


# --- kenang import may start a user: a new one is said, never refused ------------------------------

EXPORT = str(Path(__file__).parent / "fixtures" / "imports" / "sharegpt" / "list.json")
NEW_USER = "kenang import: gadng is a new user in this home (its users: default, gading); check the spelling\n"


def test_an_import_dry_run_for_a_user_the_home_lacks_says_so_in_one_line_and_in_its_json(gadings):
    h = ("--home", str(gadings.paths.home), "--date", "2026-07-01", "--dry-run", EXPORT)
    r = kenang("import", "--user", "gadng", *h)
    assert r.exit_code == 0 and r.stderr == NEW_USER and "8 messages, 8 new" in r.stdout
    r = kenang("import", "--user", "gadng", "--json", *h)
    assert r.exit_code == 0 and json.loads(r.stdout)["new_user"] == {
        "user": "gadng",
        "home_users": ["default", "gading"],
        "note": NEW_USER.removeprefix("kenang import: ").rstrip("\n"),
    }
    r = kenang("import", "--user", "Gading", "--json", *h)  # a user it has: nothing to say
    assert r.exit_code == 0 and r.stderr == "" and json.loads(r.stdout)["new_user"] is None
    assert not (gadings.paths.active / "gadng").exists()


@pytest.mark.usefixtures("prefect_api")
def test_an_import_starts_a_new_user_and_says_so_but_a_fresh_homes_first_import_says_nothing(home):
    h = ("--home", str(home.paths.home), "--date", "2026-07-01", "--now", NOW.isoformat(), "--json", EXPORT)
    first = kenang("import", "--user", "gading", *h)
    assert first.exit_code == 0 and "new user" not in first.stderr and json.loads(first.stdout)["new_user"] is None
    r = kenang("import", "--user", "gadng", *h)
    assert r.exit_code == 0, r.stderr
    assert NEW_USER in r.stderr and json.loads(r.stdout)["new_user"]["user"] == "gadng"
    again = kenang("import", "--user", "gadng", *h)  # gadng is a user now, as the note said it would be
    assert again.exit_code == 0 and "new user" not in again.stderr


def test_a_source_added_for_a_user_the_home_lacks_says_so_and_one_it_has_says_nothing(gadings, tmp_path):
    h = ("--home", str(gadings.paths.home), "--kind", "folder", "--path", str(tmp_path))
    r = kenang("sources", "add", "typo", "--user", "gadng", *h)
    assert r.exit_code == 0 and r.stderr == NEW_USER.replace("kenang import", "kenang sources add"), r.stderr
    r = kenang("sources", "add", "right", "--user", "gading", *h)
    assert r.exit_code == 0 and r.stderr == ""


def test_an_import_refuses_a_user_id_that_reads_as_a_secret_as_typed_or_lower_cased(gadings):
    h = ("--home", str(gadings.paths.home), "--date", "2026-07-01", "--dry-run", EXPORT)
    # an AWS key id is upper case: lower-cased, it is a valid user id that no case-sensitive rule would redact
    for typed in ("AKIAIOSFODNN7EXAMPLE", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"):
        r = kenang("import", "--user", typed, *h)
        assert r.exit_code == 2 and r.stderr == (
            "kenang import: --user reads as a secret, not a name: a user id is a short name, such as gading\n"
        ), typed
        assert typed.lower() not in r.output and not (gadings.paths.active / typed.lower()).exists()
    bad = kenang("import", "--user", "Gading Putra", *h)
    assert bad.exit_code == 2 and bad.stderr == (
        "kenang import: --user 'gading putra' is not a valid user id (a-z, 0-9, . _ -)\n"
    )
