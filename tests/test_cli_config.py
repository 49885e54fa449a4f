"""What an admin reaches for first: ``kenang --version``, ``kenang config show`` and ``kenang config check``."""

from __future__ import annotations

import json
from importlib.metadata import version

import pytest
import yaml
from helpers import kenang

from flows.config import edit_config
from flows.store import mount
from schemas.config import Config
from schemas.frontmatter import SCHEMA_VERSION

SHA = "3f" * 32


def test_kenang_version_names_the_package_version_and_the_notes_schema():
    r = kenang("--version")
    assert (r.exit_code, r.stdout) == (0, f"kenang {version('kenang')} (notes schema {SCHEMA_VERSION})\n")


def _tuned(home) -> None:
    def change(d) -> None:
        d["default_user"] = "gading"
        d["recall"]["top_k"] = 8
        d["mcp"]["tokens"] = {SHA: "gading"}
        d["summarizer"]["base_url"] = "http://bob:hunter2-pass@gpu-box:11434/v1"
        d["sources"] = [{"name": "notes", "kind": "folder", "path": str(home.paths.home.parent / "inbox")}]

    edit_config(home.paths.home, change)


def _line(text: str, key: str) -> str:
    return next(line for line in text.splitlines() if line.lstrip().startswith(f"{key}:"))


def test_config_show_marks_every_value_at_its_default_and_no_other(home):
    _tuned(home)
    r = kenang("config", "show", "--home", str(home.paths.home))
    assert r.exit_code == 0 and r.stderr == ""
    assert _line(r.stdout, "top_k").split("#")[0].strip() == "top_k: 8" and "# default" not in _line(r.stdout, "top_k")
    assert _line(r.stdout, "default_user").rstrip() == "default_user: gading"
    assert _line(r.stdout, "related_decay").endswith("# default")
    assert _line(r.stdout, "timezone").endswith("# default")  # written by kenang init, at its default
    assert _line(r.stdout, "warehouse").endswith(f"# default; resolves to {home.paths.warehouse}")
    assert "  - name: notes" in r.stdout


def test_config_show_reads_back_as_the_config_in_effect_with_secrets_masked(home):
    _tuned(home)
    r = kenang("config", "show", "--home", str(home.paths.home))
    shown = yaml.safe_load(r.stdout)
    assert shown["mcp"]["tokens"] == {SHA[:12] + "...": "gading"}
    assert shown["summarizer"]["base_url"] == "http://***@gpu-box:11434/v1"
    effective = Config.model_validate(yaml.safe_load(home.paths.config_file.read_text(encoding="utf-8"))).model_dump()
    for section in ("mcp", "summarizer"):
        shown[section].pop("tokens" if section == "mcp" else "base_url")
        effective[section].pop("tokens" if section == "mcp" else "base_url")
    assert shown == effective
    assert SHA not in r.stdout and "hunter2" not in r.stdout


def test_config_show_changed_prints_only_what_this_home_changed_as_yaml(home):
    _tuned(home)
    r = kenang("config", "show", "--changed", "--home", str(home.paths.home))
    assert r.exit_code == 0 and "related_decay" not in r.stdout  # at its default
    shown = yaml.safe_load(r.stdout)
    assert shown["recall"] == {"top_k": 8} and shown["default_user"] == "gading"
    assert shown["sources"][0]["name"] == "notes"  # a changed list shows whole
    assert "analytics" not in shown and "timezone" not in shown  # nothing changed there
    assert SHA not in r.stdout and "hunter2" not in r.stdout


def test_config_show_json_gives_the_config_and_the_keys_at_their_default(home):
    _tuned(home)
    edit_config(home.paths.home, lambda d: d.update({"names": {"mcp": "Em Cee"}}))  # a user id that is a section's name
    r = kenang("config", "show", "--json", "--home", str(home.paths.home))
    data = json.loads(r.stdout)
    assert data["config"]["recall"]["top_k"] == 8 and "recall.top_k" not in data["defaults"]
    assert "recall.related_decay" in data["defaults"] and "default_user" not in data["defaults"]
    assert data["config"]["names"] == {"mcp": "Em Cee"} and data["config"]["mcp"]["tokens"] == {
        SHA[:12] + "...": "gading"
    }
    assert SHA not in r.stdout and "hunter2" not in r.stdout


def test_config_check_passes_a_fresh_home(home):
    r = kenang("config", "check", "--home", str(home.paths.home))
    assert (r.exit_code, r.stdout) == (0, f"ok: {home.paths.config_file} and the paths it names\n")


def test_config_check_lists_every_problem_of_the_file_one_line_each(home):
    home.paths.config_file.write_text("timezone: 3\ntypo: 1\nsummarizer: {backend: gpt}\n", encoding="utf-8")
    r = kenang("config", "check", "--home", str(home.paths.home))
    where = home.paths.config_file
    assert r.exit_code == 1
    assert r.stdout.splitlines() == [
        f"{where}: timezone: expected text, got 3 (integer)",
        f"{where}: summarizer.backend: 'gpt' must be one of: llama, extractive, openai",
        f"{where}: unknown key typo (known here: timezone, grace_period_hours, quiet_period_minutes, default_user, "
        "paths, limits, summarizer, embedder, recall, analytics, mcp, memory, retention, projects, names, sources)",
    ]


def test_config_check_lists_a_bad_zone_and_user_id_beside_the_schemas_problems(home):
    """A zone and a user id are checked after the schema: a file with both kinds of problem gets every one."""
    home.paths.config_file.write_text(
        "timezone: Asia/Jakart\ndefault_user: Budi Santoso\ngrace_period_hours: -1\n", encoding="utf-8"
    )
    r = kenang("config", "check", "--home", str(home.paths.home))
    where = home.paths.config_file
    assert r.exit_code == 1
    assert r.stdout.splitlines() == [
        f"{where}: grace_period_hours: -1 must be >= 0 (allowed: 0 to 744)",
        f"{where}: timezone: 'Asia/Jakart' is not an IANA time zone (for example Asia/Jakarta or Europe/Amsterdam)",
        f"{where}: default_user: 'Budi Santoso' is not a valid user id (lower-case letters, digits, '.', '_' or '-', "
        "at most 64)",
    ]
    # a run stops at the first, as before
    assert kenang("status", "--home", str(home.paths.home)).exit_code == 2


def test_config_check_lists_a_zone_that_is_a_folder_of_zones_without_a_traceback(home):
    home.paths.config_file.write_text("timezone: Asia\ntypo: 1\n", encoding="utf-8")
    r = kenang("config", "check", "--home", str(home.paths.home))
    assert r.exit_code == 1 and len(r.stdout.splitlines()) == 2
    assert "timezone: 'Asia' is not an IANA time zone" in r.stdout and "unknown key typo" in r.stdout


def test_config_check_says_where_broken_yaml_breaks(home):
    home.paths.config_file.write_text("timezone: Asia/Jakarta\nprojects: [kenang\n", encoding="utf-8")
    r = kenang("config", "check", "--home", str(home.paths.home))
    assert r.exit_code == 1 and r.stdout.count("\n") == 1
    assert r.stdout.startswith(f"{home.paths.config_file}: not valid YAML at line 3, column 1: ")


def test_a_key_written_twice_at_any_level_is_an_error_naming_both_lines(home):
    text = "timezone: Asia/Jakarta\nrecall:\n  top_k: 3\n  top_k: 4\ntimezone: UTC\n"
    home.paths.config_file.write_text(text, encoding="utf-8")
    where = home.paths.config_file
    r = kenang("config", "check", "--home", str(home.paths.home))
    assert r.exit_code == 1 and r.stdout.splitlines() == [
        f"{where}: duplicate key recall.top_k at lines 3 and 4; keep one of them",
        f"{where}: duplicate key timezone at lines 1 and 5; keep one of them",
    ]
    for args in (("config", "show"), ("status",)):
        r = kenang(*args, "--home", str(home.paths.home))
        assert (r.exit_code, r.stdout) == (2, "")
        assert (
            r.stderr
            == f"kenang: configuration error: {where}: duplicate key recall.top_k at lines 3 and 4; keep one of them\n"
        )


@pytest.mark.parametrize(
    "args", [("run", "--dry-run"), ("status",), ("recall", "tea"), ("mcp", "token", "add", "--user", "default")]
)
def test_every_command_says_where_broken_yaml_breaks_in_one_line_as_the_check_does(home, args):
    home.paths.config_file.write_text("timezone: Asia/Jakarta\nprojects: [kenang\n", encoding="utf-8")
    checked = kenang("config", "check", "--home", str(home.paths.home)).stdout
    r = kenang(*args, "--home", str(home.paths.home))
    assert r.exit_code == 2 and r.stderr == f"kenang: configuration error: {checked}"


def test_config_check_without_a_kenang_yaml_says_to_run_init(tmp_path):
    r = kenang("config", "check", "--home", str(tmp_path))
    assert r.exit_code == 1
    assert r.stdout == f"{tmp_path}/kenang.yaml: no such file; run `kenang init --home {tmp_path}` to make one\n"


def test_config_check_names_each_missing_folder_archive_marker_key_and_source(home, monkeypatch):
    monkeypatch.delenv("KENANG_TEST_KEY", raising=False)
    inbox = home.paths.home.parent / "inbox"

    def change(d) -> None:
        d["embedder"] |= {"backend": "openai", "base_url": "http://gpu-box:11434/v1", "api_key_env": "KENANG_TEST_KEY"}
        d["summarizer"] |= {"backend": "llama", "model_path": str(home.paths.home.parent / "missing.gguf")}
        d["sources"] = [{"name": "notes", "kind": "folder", "path": str(inbox)}]

    edit_config(home.paths.home, change)
    home.paths.quarantine.rmdir()
    (home.paths.archive / mount.MARKER).unlink()
    r = kenang("config", "check", "--home", str(home.paths.home))
    assert r.exit_code == 1
    assert r.stdout.splitlines() == [
        f"paths.quarantine: {home.paths.quarantine} does not exist; run `kenang init` to make it",
        f"paths.archive: {home.paths.archive} holds no .kenang-archive marker, so it is not mounted; mount it, "
        "or run `kenang init` once for a new, empty archive",
        f"summarizer.model_path: {home.paths.home.parent / 'missing.gguf'} is not a file; give the path of a GGUF model",
        "embedder.model: the openai backend needs the model id the server knows",
        "embedder.api_key_env: KENANG_TEST_KEY is not set here; export it where kenang runs "
        "(a systemd unit's Environment=, a compose file's environment:)",
        # a source not there yet is a note, as `kenang doctor` warns: a night skips it until it is
        f"note: sources: notes: {inbox} names {inbox}, which does not exist (yet); a night skips it until it does, "
        "so check the path if the agent has run",
    ]
    inbox.mkdir()
    monkeypatch.setenv("KENANG_TEST_KEY", "sk-test")
    now = kenang("config", "check", "--home", str(home.paths.home)).stdout
    assert "sources:" not in now and "api_key_env" not in now


def test_a_source_not_there_yet_is_a_note_and_the_check_still_passes(home):
    inbox = home.paths.home.parent / "agent-logs"
    edit_config(home.paths.home, lambda d: d.update(sources=[{"name": "codex", "kind": "folder", "path": str(inbox)}]))
    r = kenang("config", "check", "--home", str(home.paths.home))
    assert r.exit_code == 0, r.stdout
    assert r.stdout.splitlines()[0].startswith("note: sources: codex: ") and r.stdout.rstrip().endswith("names")


def test_a_commands_wrong_options_are_not_called_a_configuration_error(home):
    """kenang.yaml is fine: the line names the command and what to give, exit 2 as for any usage error."""
    h = str(home.paths.home)
    r = kenang("forget", "--user", "default", "--dry-run", "--home", h)
    assert r.exit_code == 2
    assert r.stderr.strip() == "kenang forget: give exactly one of --text, --session, --day or --before"
    r = kenang("analyze", "mood_timeseries", "--home", h)
    assert r.exit_code == 2 and r.stderr.startswith("kenang analyze: nothing is loaded yet: run `kenang run`")
    r = kenang(
        "analyze", "mood_timeseries", "--user", "default", "--start", "2025-12-01", "--end", "2025-01-01", "--home", h
    )
    assert r.exit_code == 2 and r.stderr.strip() == "kenang analyze: end 2025-01-01 is before start 2025-12-01"
    home.paths.config_file.write_text("timezone: Asia/Jakart\n", encoding="utf-8")
    r = kenang("analyze", "mood_timeseries", "--home", h)
    assert r.exit_code == 2 and r.stderr.startswith("kenang: configuration error: ")  # the file is


def test_removing_the_last_token_leaves_a_file_that_reads_back(home):
    h = str(home.paths.home)
    assert kenang("mcp", "token", "add", "--home", h, "--user", "default").exit_code == 0
    sha = next(iter(yaml.safe_load((home.paths.home / "kenang.yaml").read_text())["mcp"]["tokens"]))
    removed = kenang("mcp", "token", "remove", "--home", h, sha[:12])
    assert removed.exit_code == 0, removed.output
    text = (home.paths.home / "kenang.yaml").read_text()
    assert yaml.safe_load(text)["mcp"]["tokens"] == {} and "  tokens: {}" in text
    assert kenang("config", "check", "--home", h).exit_code == 0
    assert kenang("mcp", "token", "add", "--home", h, "--user", "default").exit_code == 0  # and it takes one again
