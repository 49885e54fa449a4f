"""kenang.yaml: one commented file, strictly validated before anything runs."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest
import yaml
from helpers import kenang

from flows.config import init_home, load_settings, resolve_home
from flows.store import mount
from transforms.errors import ConfigError


def test_init_creates_the_folders_and_a_commented_config_with_the_documented_keys(tmp_path):
    settings, created = init_home(tmp_path / "h")
    mount.claim(settings)  # as `kenang init` does: the archive folder is its
    assert created
    text = settings.paths.config_file.read_text()
    values = yaml.safe_load(text)
    assert values == {
        "timezone": "Asia/Jakarta",
        "grace_period_hours": 2,
        "quiet_period_minutes": 10,
        "default_user": "default",
        "paths": {
            "active": "active",
            "archive": "archive",
            "warehouse": "warehouse",
            "quarantine": "quarantine",
            "archive_cache": "archive-cache",
        },
        "limits": {"max_file_mb": 200, "source_file_mb": 64, "archive_min_free_mb": 64, "batch_rows": 20_000},
        "summarizer": {
            "backend": "extractive",
            "model_path": None,
            "n_ctx": 4096,
            "n_threads": None,
            "chat_format": None,
            "max_tokens": 320,
            "temperature": 0.2,
            "seed": 42,
            "summary_chars": 600,
            "max_days_per_run": None,
            "base_url": None,
            "model": None,
            "api_key_env": None,
            "timeout_s": 300,
            "concurrency": 1,
            "structured_output": "json_schema",
        },
        "embedder": {
            "backend": "e5+use",
            "model_path": None,
            "query_prefix": "",
            "passage_prefix": "",
            "n_threads": None,
            "batch_size": 16,
            "max_chunks_per_run": None,
            "base_url": None,
            "model": None,
            "api_key_env": None,
            "timeout_s": 120,
            "concurrency": 1,
        },
        "recall": {"top_k": 5, "related_decay": 0.7, "exact_below": 200_000},
        "analytics": {"productive_moods": ["productive", "focused"], "productive_min_importance": 5, "rolling_days": 7},
        "mcp": {
            "tokens": {},
            "max_query_chars": 2000,
            "max_top_k": 50,
            "session_max_turns": 2000,
            "session_max_turn_chars": 100000,
            "session_max_chars": 2000000,
            "users": [],
            "allowed_hosts": [],
            "allowed_origins": [],
        },
        "memory": {"max_notes": 50, "auto_accept": False, "snapshot_days_chars": 1500},
        "retention": {"messages_days": None, "archive_days": None, "archive_lock_days": 3650},
        "projects": [],
        "names": {},
        "sources": [],
    }
    assert "# IANA name" in text and "# never touch a file modified more recently" in text
    for name in ("active", "archive", "warehouse", "quarantine"):
        assert getattr(settings.paths, name).is_dir()


def test_init_keeps_an_existing_config(tmp_path):
    settings, _ = init_home(tmp_path / "h")
    settings.paths.config_file.write_text("timezone: Europe/Amsterdam\n")
    again, created = init_home(tmp_path / "h")
    assert not created and again.timezone.key == "Europe/Amsterdam"


def test_init_under_a_file_is_one_line_saying_so_with_exit_status_2(tmp_path):
    (tmp_path / "f").write_text("not a folder\n")
    r = kenang("init", "--home", str(tmp_path / "f" / "sub"))
    assert (r.exit_code, r.stdout) == (2, "")
    assert r.stderr == (
        f"kenang init: cannot make the home {tmp_path}/f/sub: {tmp_path}/f is a file, not a folder; "
        "choose another --home, in a folder you can write to\n"
    )


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux's /proc, where no folder can be made")
def test_init_in_a_folder_the_system_keeps_is_one_line_with_exit_status_2():
    r = kenang("init", "--home", "/proc/kenang-home")
    assert (r.exit_code, r.stdout) == (2, "")
    assert r.stderr.startswith("kenang init: cannot make the home /proc/kenang-home: ") and r.stderr.count("\n") == 1


def test_the_home_comes_from_the_flag_then_the_environment_then_the_default(tmp_path):
    assert resolve_home(tmp_path / "a", {"KENANG_HOME": str(tmp_path / "b")}) == tmp_path / "a"
    assert resolve_home(None, {"KENANG_HOME": str(tmp_path / "b")}) == tmp_path / "b"
    assert str(resolve_home(None, {})).endswith(".local/share/kenang")


def test_paths_are_relative_to_the_home_unless_absolute(tmp_path):
    home = tmp_path / "h"
    home.mkdir()
    (home / "kenang.yaml").write_text(f"paths:\n  archive: {tmp_path / 'nas'}\n  active: inbox\n")
    s = load_settings(home)
    assert s.paths.archive == tmp_path / "nas" and s.paths.active == home / "inbox"


@pytest.mark.parametrize(
    "text,needle",
    [
        ("timezon: Asia/Jakarta\n", "unknown key timezon"),
        ("paths:\n  archiv: /mnt/nas\n", "unknown key paths.archiv"),
        ("timezone: Asia/Jakartaa\n", "timezone: 'Asia/Jakartaa' is not an IANA time zone"),
        ("grace_period_hours: two\n", "grace_period_hours: expected integer or number, got 'two'"),
        ("quiet_period_minutes: true\n", "quiet_period_minutes: expected integer or number"),
        ("grace_period_hours: -1\n", "grace_period_hours: -1 must be >= 0"),
        ("default_user: Gading Putra\n", "default_user: 'Gading Putra' is not a valid user id"),
        ("default_user: AKIAIOSFODNN7EXAMPLE\n", "default_user: '[REDACTED:aws_access_key]' is not a valid user id"),
        (
            "default_user: ghp_abcdefghijklmnopqrstuvwxyz0123456789\n",
            "default_user: the value reads as a secret (a key or a token), not a name",
        ),
        ("default_user: xoxb-1234567890\n", "default_user: the value reads as a secret"),
        ("default_user: 'pwd=hunter2!'\n", "default_user: 'pwd=[REDACTED:password]' is not a valid user id"),
        ("timezone: 'pwd=hunter2!'\n", "timezone: 'pwd=[REDACTED:password]' is not an IANA time zone"),
        ("paths: /mnt\n", "paths must be a mapping"),
        ("- a\n- b\n", "the top level must be a mapping"),
        ("summarizer:\n  backend: gpt4\n", "summarizer.backend: 'gpt4' must be one of: llama, extractive"),
        ("summarizer:\n  n_ctx: 2k\n", "summarizer.n_ctx: expected integer, got '2k'"),
        ("projects: Homelab\n", "projects: expected list"),
        ("names: [Gading]\n", "names must be a mapping"),
        ("names:\n  Gading Putra: Gading\n", "names: 'Gading Putra' is not a valid user id"),
        ("names:\n  gading: 7\n", "names: the name of gading must be text, got 7"),
        ("names:\n  gading: ''\n", "names: the name of gading must be one line of 1-60 characters"),
        ("names:\n  gading: '  Gading'\n", "names: the name of gading must be one line"),
        ("timezone: [\n", "not valid YAML"),
        ("timezone: Asia/Jakarta\ntimezone: UTC\n", "duplicate key timezone at lines 1 and 2; keep one of them"),
        ("recall:\n  top_k: 3\n  top_k: 4\n", "duplicate key recall.top_k at lines 2 and 3"),
    ],
)
def test_a_bad_config_is_a_clear_error_naming_the_key_and_the_file(tmp_path, text, needle):
    home = tmp_path / "h"
    home.mkdir()
    (home / "kenang.yaml").write_text(text)
    with pytest.raises(ConfigError) as err:
        load_settings(home)
    assert needle in str(err.value) and str(home / "kenang.yaml") in str(err.value)
    shown = str(err.value)
    assert not any(secret in shown for secret in ("AKIA", "ghp_", "xoxb", "hunter2"))  # a refused secret never shown


def test_names_give_each_user_the_name_notes_call_them(tmp_path):
    home = tmp_path / "h"
    home.mkdir()
    (home / "kenang.yaml").write_text("names:\n  gading: Gading Nasution\n  rina: Rina\n")
    s = load_settings(home)
    assert (s.display_name("gading"), s.display_name("rina"), s.display_name("budi")) == (
        "Gading Nasution",
        "Rina",
        None,
    )


def test_with_a_bad_config_nothing_runs(tmp_path):
    settings, _ = init_home(tmp_path / "h")
    mount.claim(settings)  # as `kenang init` does
    (settings.paths.active / "a.md").write_text("## user · 2026-07-19T10:00:00+07:00\nhalo\n")
    settings.paths.config_file.write_text("timezone: Mars/Olympus\n")
    r = kenang("run", "--home", str(settings.paths.home), "--now", "2026-07-21T03:00")
    assert r.exit_code == 2
    assert "Mars/Olympus" in r.stderr
    assert (settings.paths.active / "a.md").exists()
    assert [p.name for p in settings.paths.archive.iterdir()] == [".kenang-archive"]  # only init's marker


def test_a_home_without_a_config_says_to_run_init(tmp_path):
    r = kenang("status", "--home", str(tmp_path / "nowhere"))
    assert r.exit_code == 2 and "kenang init" in r.stderr


def test_a_naive_now_is_read_in_the_configured_zone(tmp_path):
    from flows.cli.main import _parse_now

    settings, _ = init_home(tmp_path / "h")
    assert _parse_now("2026-07-20T03:00", settings) == dt.datetime(2026, 7, 20, 3, 0, tzinfo=settings.timezone)


def test_the_configuration_page_shows_exactly_the_kenang_yaml_that_init_writes(tmp_path):
    page = (Path(__file__).parent.parent / "docs" / "configuration.md").read_text(encoding="utf-8")
    marker = "`kenang.yaml` (every key optional; `kenang init` writes it with comments):\n\n```yaml\n"
    block = page[page.index(marker) + len(marker) :]
    block = block[: block.index("```\n")]
    settings, _ = init_home(tmp_path / "h")
    assert block == settings.paths.config_file.read_text(encoding="utf-8")


def _yaml_blocks() -> list[tuple[str, str]]:
    root = Path(__file__).parent.parent
    found = []
    for path in [root / "README.md", *sorted((root / "docs").glob("*.md"))]:
        text = path.read_text(encoding="utf-8")
        for n, block in enumerate(re.findall(r"^```yaml\n(.*?)^```$", text, flags=re.S | re.M)):
            found.append((f"{path.relative_to(root)}#{n}", block))
    return found


def test_the_docs_show_kenang_yaml_in_more_than_one_place():
    assert len(_yaml_blocks()) >= 5


@pytest.mark.parametrize("where, block", _yaml_blocks(), ids=[w for w, _ in _yaml_blocks()])
def test_every_yaml_block_of_the_readme_and_docs_is_a_valid_kenang_yaml(where, block):
    from schemas.config import Config

    Config.model_validate(yaml.safe_load(block))


@pytest.mark.parametrize(
    "key, value, said",
    [
        ("archive", "https://nas.local/archive", "is a URL kenang cannot archive to"),
        ("archive", "s3://UPPER/x", "is a URL kenang cannot archive to"),
        ("archive", "s3://kenang-archive/a/../b", "is a URL kenang cannot archive to"),
        ("warehouse", "s3://kenang-archive/wh", "only paths.archive may be s3://bucket/prefix"),
        ("archive_cache", "s3://kenang-archive/c", "only paths.archive may be s3://bucket/prefix"),
    ],
)
def test_a_url_kenang_cannot_use_is_refused_rather_than_made_a_local_folder(key, value, said):
    from pydantic import ValidationError

    from schemas.config import Config, describe_error

    raw = {"paths": {key: value}}
    with pytest.raises(ValidationError) as exc:
        Config.model_validate(raw)
    text = describe_error(exc.value, raw)
    assert text.startswith(f"paths.{key}: {value!r} is a URL") and said in text


def test_an_s3_archive_reads_its_bucket_and_prefix_and_keeps_a_local_copy(tmp_path):
    from schemas.config import s3_url

    assert s3_url("s3://kenang-archive") == ("kenang-archive", "")
    assert s3_url("s3://kenang-archive/homes/gading/") == ("kenang-archive", "homes/gading")
    home = tmp_path / "h"
    home.mkdir()
    (home / "kenang.yaml").write_text("paths:\n  archive: s3://kenang-archive/gading\n", encoding="utf-8")
    settings = load_settings(home)
    assert settings.paths.remote_archive == "s3://kenang-archive/gading"
    assert settings.paths.archive == home / "archive-cache"


@pytest.mark.parametrize(
    "path, kind, said",
    [
        ("/", "folder", "a system folder"),
        ("/**/*.jsonl", "claude_code", "a system folder"),
        ("active/gading", "folder", "overlaps paths.active"),
        ("archive/daily_sessions/*/*.md", "aider", "overlaps paths.archive"),
        (".", "folder", "overlaps paths.active"),
    ],
)
def test_a_source_path_that_would_walk_the_machine_or_kenang_s_own_folders_is_refused(tmp_path, path, kind, said):
    from flows.config import edit_config

    settings, _ = init_home(tmp_path / "h")
    before = settings.paths.config_file.read_text()
    with pytest.raises(ConfigError, match=said):
        edit_config(
            settings.paths.home, lambda d: d.__setitem__("sources", [{"name": "x", "kind": kind, "path": path}])
        )
    assert settings.paths.config_file.read_text() == before  # nothing written
