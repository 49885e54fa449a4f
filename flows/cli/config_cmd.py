"""``kenang config``: the configuration in effect (``show``) and whether it holds (``check``).

``show`` prints every key of kenang.yaml with the value a run uses, as YAML; a value that is the key's
default (left out of the file, or written as it, as ``kenang init`` does) carries a trailing ``# default``,
and each folder its resolved path.
Secrets never print: a token's sha256 shows only its start (as ``kenang mcp token list`` does), a URL's
``user:password@`` becomes ``***@``, and the whole text passes the redaction gate.

``check`` reads kenang.yaml as every run does, but reports every problem of the schema at once rather than
the first, then looks at what the file names: the home's folders, the archive's marker, model files, the
API key variables and the sources. Each problem is one line with what to do; the exit status is 1 when
there is one. It reaches no server: ``kenang models test`` tries the models.

``flows.cli.main`` adds the group (``group``), handing it its shared ``--home`` and ``--json`` options:
this module never imports the main one.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import click
import yaml
from pydantic import BaseModel, ValidationError

from flows.config import CONFIG_NAME, Settings, read_config_all, settings_from, value_problems
from schemas.config import Config, describe_errors
from transforms.errors import ConfigError

#: Values a run never prints whole: kenang.yaml keeps a token's sha256, still a key to that user's memory.
_MASKED_KEYS = {("mcp", "tokens")}
_USERINFO = re.compile(r"(?<=://)[^/@\s]+@")
_FOLDERS = ("active", "archive", "warehouse", "quarantine", "archive_cache")
EXIT_PROBLEMS = 1  # as the CLI's EXIT_FAILED: the check ran and found something wrong


def group(
    home_option: Callable[[Any], Any], json_option: Callable[[Any], Any], home_of: Callable[[Path | None], Path]
) -> click.Group:
    """The ``kenang config`` group, made with the main module's shared ``--home`` and ``--json`` options."""
    config = click.Group(
        "config", help="Show the configuration in effect (defaults marked), or check it and the paths it names."
    )

    @config.command("show")
    @home_option
    @click.option("--changed", is_flag=True, help="Only the keys whose value is not their default.")
    @json_option
    def show(home: Path | None, changed: bool, as_json: bool) -> None:
        """Print the configuration in effect, defaults marked and secrets masked.

        Every key of kenang.yaml with the value a run uses, as YAML: `# default` marks a value that is the
        key's default, and each folder shows the path it resolves to. A token shows only the start of its
        sha256, and a URL's user:password is hidden. --changed leaves out every key at its default (and a
        section with nothing else). --json gives the config, and the keys at their default.
        """
        from flows.config import load_settings
        from transforms.redact import redact, redact_tree

        settings = load_settings(home_of(home))
        if as_json:
            data = {
                "config_file": str(settings.paths.config_file),
                "config": _masked(settings.config.model_dump()),
                "defaults": sorted(_defaults(settings.config)),
            }
            click.echo(json.dumps(redact_tree(data), indent=2, ensure_ascii=False))
            return
        click.echo(redact(render(settings, changed=changed)).text, nl=False)

    @config.command("check")
    @home_option
    def check(home: Path | None) -> None:
        """Check kenang.yaml and the folders, files and sources it names.

        Every problem of the file is listed, not just the first; then the home's folders, the archive's
        marker, model files, API key variables and sources are looked at. One line per problem, with what
        to do; exit status 1 when there is one. No server is reached: `kenang models test` tries the models.
        """
        from transforms.redact import redact_reason

        target = home_of(home)
        found, notes = findings(target, os.environ)
        for line in found:
            click.echo(redact_reason(line))
        for line in notes:  # what is fine for now (a source not there yet), and said
            click.echo(redact_reason(f"note: {line}"))
        if found:
            sys.exit(EXIT_PROBLEMS)
        click.echo(f"ok: {target / CONFIG_NAME} and the paths it names")

    return config


# --- show ---------------------------------------------------------------------------------


def render(settings: Settings, changed: bool = False) -> str:
    """The effective config as commented YAML (a mapping kenang reads back, tokens masked); ``changed``: only the
    keys not at their default."""
    rows = _rows(settings.config, (), settings, changed)
    width = min(max((len(text) for text, note in rows if note), default=0) + 2, 60)
    head = [
        f"# kenang.yaml in effect: {settings.paths.config_file}",
        "# (only the keys not at their default; a token shows only its sha256's start)"
        if changed
        else "# (# default: the value kenang uses when the file does not set it; a token shows only its sha256's start)",
    ]
    body = [f"{text:<{width}}# {note}" if note else text for text, note in rows]
    return "\n".join(head + body) + "\n"


def _rows(model: BaseModel, path: tuple[str, ...], settings: Settings, changed: bool = False) -> list[tuple[str, str]]:
    """(line, comment) for each key of ``model``, its sections' keys indented under it; ``changed``: only keys not
    at their default, and a section only with such a key (a list or mapping that is changed shows whole)."""
    pad = "  " * len(path)
    out: list[tuple[str, str]] = []
    for name in type(model).model_fields:
        value = getattr(model, name)
        note = "default" if _is_default(model, name) else ""
        key = (*path, name)
        if isinstance(value, BaseModel):
            inner = _rows(value, key, settings, changed)
            if inner or not changed:
                out.append((f"{pad}{name}:", ""))
                out += inner
        elif changed and note:
            continue
        elif value and isinstance(value, list) and isinstance(value[0], BaseModel):
            out.append((f"{pad}{name}:", note))
            for item in value:
                lines = _rows(item, key, settings)
                lines[0] = (f"{pad}  - {lines[0][0].lstrip()}", lines[0][1])
                out += [(f"  {text}" if i else text, n) for i, (text, n) in enumerate(lines)]
        elif value and isinstance(value, dict):
            out.append((f"{pad}{name}:", note))
            for k, v in (_masked_mapping(value) if key in _MASKED_KEYS else value).items():
                out.append((f"{pad}  {_scalar(k)}: {_scalar(v)}", ""))
        else:
            if path == ("paths",) and name in _FOLDERS:
                note = "; ".join(filter(None, (note, f"resolves to {_resolved(settings, name, value)}")))
            out.append((f"{pad}{name}: {_scalar(_no_credentials(value))}", note))
    return out


def _resolved(settings: Settings, name: str, value: str) -> str:
    if name == "archive" and settings.paths.remote_archive:
        return f"{settings.paths.remote_archive} (its local copy: {settings.paths.archive})"
    if name == "archive_cache":
        return str(settings.paths.archive) if settings.paths.remote_archive else "nothing: the archive is local"
    return str(getattr(settings.paths, name))


def _scalar(v: Any) -> str:
    """``v`` as one line of YAML (flow style for a list or mapping)."""
    text = yaml.safe_dump(v, default_flow_style=True, width=10**9, allow_unicode=True, sort_keys=False)
    return text.removesuffix("\n").removesuffix("\n...").strip()


def _no_credentials(v: Any) -> Any:
    return _USERINFO.sub("***@", v) if isinstance(v, str) else v


def _masked_mapping(tokens: Mapping[str, str]) -> dict[str, str]:
    return {sha[:12] + "...": user for sha, user in sorted(tokens.items())}


def _masked(dumped: dict) -> dict:
    """``Config.model_dump()`` with tokens masked and URL credentials hidden."""

    def clean(v: Any) -> Any:
        if isinstance(v, dict):
            return {k: clean(x) for k, x in v.items()}
        return [clean(x) for x in v] if isinstance(v, list) else _no_credentials(v)

    out = clean(dumped)
    out["mcp"]["tokens"] = _masked_mapping(dumped["mcp"]["tokens"])
    return out


def _is_default(model: BaseModel, name: str) -> bool:
    """Whether ``model.name`` holds the key's default (a required key has none)."""
    field = type(model).model_fields[name]
    return not field.is_required() and getattr(model, name) == field.get_default(call_default_factory=True)


def _defaults(model: BaseModel, path: tuple[str, ...] = ()) -> list[str]:
    """The dotted keys whose value is the default."""
    out: list[str] = []
    for name in type(model).model_fields:
        value = getattr(model, name)
        if isinstance(value, BaseModel):
            out += _defaults(value, (*path, name))
        elif _is_default(model, name):
            out.append(".".join((*path, name)))
    return out


# --- check --------------------------------------------------------------------------------


def findings(home: Path, environ: Mapping[str, str]) -> tuple[list[str], list[str]]:
    """Every problem of ``home``'s kenang.yaml and of what it names, one line each with what to do; and the notes,
    said without counting as problems (``_sources``)."""
    config_file = home / CONFIG_NAME
    if not config_file.is_file():
        return [f"{config_file}: no such file; run `kenang init --home {home}` to make one"], []
    try:
        raw, duplicates = read_config_all(config_file)
    except ConfigError as exc:
        return [str(exc)], []
    found = [f"{config_file}: {line}" for line in duplicates]
    try:
        parsed = Config.model_validate(raw)
    except ValidationError as exc:
        # the schema's problems, and the values it could not get to (a zone, a user id): every problem at once
        schema = describe_errors(exc, raw)
        named = {str(e["loc"][0]) for e in exc.errors() if e["loc"]}
        more = value_problems(raw) if isinstance(raw, dict) else []
        return found + [
            f"{config_file}: {line}" for line in schema + [m for m in more if m.split(":")[0] not in named]
        ], []
    try:
        settings = settings_from(home, config_file, parsed)
    except ConfigError as exc:
        return [*found, str(exc)], []
    sources, notes = _sources(settings)
    return found + _folders(settings) + _archive(settings) + _models(settings, environ) + sources, notes


def _folders(settings: Settings) -> list[str]:
    out = []
    for name in ("active", "warehouse", "quarantine"):
        p = getattr(settings.paths, name)
        if not p.exists():
            out.append(f"paths.{name}: {p} does not exist; run `kenang init` to make it")
        elif not p.is_dir():
            out.append(f"paths.{name}: {p} is not a folder; point paths.{name} at a folder")
        elif not os.access(p, os.W_OK | os.X_OK):
            out.append(f"paths.{name}: {p} is not writable by this user; fix its owner or mode")
    return out


def _archive(settings: Settings) -> list[str]:
    """The local archive's marker and mode (a bucket is for `kenang doctor`: it takes the network)."""
    from flows.store import mount

    root = settings.paths.archive
    if settings.paths.remote_archive:
        return []
    if not root.is_dir():
        return [f"paths.archive: {root} does not exist; mount the archive there, or run `kenang init` for a new one"]
    state = mount.check(settings, probe=False)
    if state.state == "not_mounted":
        return [
            f"paths.archive: {root} holds no {mount.MARKER} marker, so it is not mounted; mount it, "
            "or run `kenang init` once for a new, empty archive"
        ]
    if state.state == "foreign":
        return [
            f"paths.archive: {root} is another kenang home's archive; if this home was restored or moved, "
            "run `kenang init --claim-archive`"
        ]
    if not os.access(root, os.W_OK | os.X_OK):
        return [f"paths.archive: {root} is not writable by this user; fix its owner or mode (or the mount's options)"]
    return [f"paths.archive: {state.reason}"] if state.reason else []


def _models(settings: Settings, environ: Mapping[str, str]) -> list[str]:
    out = []
    for what, section in (("summarizer", settings.summarizer), ("embedder", settings.embedder)):
        if section.backend == "llama" and section.model_path:
            p = Path(section.model_path).expanduser()
            if not p.is_file():
                out.append(f"{what}.model_path: {p} is not a file; give the path of a GGUF model")
        if what == "embedder" and section.backend == "llama" and not section.model_path:
            out.append("embedder.model_path: the llama backend needs a GGUF embedding model; set embedder.model_path")
        if section.backend == "openai":
            if not section.base_url:
                out.append(f"{what}.base_url: the openai backend needs the server's API, e.g. http://gpu-box:11434/v1")
            if not section.model:
                out.append(f"{what}.model: the openai backend needs the model id the server knows")
            if section.api_key_env and not environ.get(section.api_key_env):
                out.append(
                    f"{what}.api_key_env: {section.api_key_env} is not set here; export it where kenang runs "
                    "(a systemd unit's Environment=, a compose file's environment:)"
                )
    return out


def _sources(settings: Settings) -> tuple[list[str], list[str]]:
    """(each source's problem, each source whose folder is not there yet: a note, as `kenang doctor` warns, since
    a night skips it until it is)."""
    from flows.stages import collect

    out, notes = [], []
    for src in settings.config.sources:
        root = collect.source_root(src)
        if not root.exists():
            notes.append(
                f"sources: {src.name}: {src.path} names {root}, which does not exist (yet); a night skips it until "
                "it does, so check the path if the agent has run"
            )
        elif not os.access(root, os.R_OK):
            out.append(f"sources: {src.name}: {root} is not readable by this user; fix its owner or mode")
    return out, notes
