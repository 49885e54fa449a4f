"""Configuration, resolved once at the edge.

The home is ``--home``, else env ``KENANG_HOME``, else ``~/.local/share/kenang``. Its
``kenang.yaml`` is validated against the pydantic models of ``schemas.config``; any
unknown key, wrong type, value out of range or bad timezone raises ``ConfigError``
naming the key, the value and the file, before anything runs. Only the CLI calls
``resolve_home`` with the environment; everything below receives a frozen
``Settings``, whose sections are typed: ``settings.summarizer.backend``.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import yaml
from pydantic import ValidationError

from schemas import config as schema
from schemas.config import Config, describe_error, render_yaml
from transforms.errors import ConfigError, UsageError
from transforms.model import USER_ID_RE

CONFIG_NAME = "kenang.yaml"
DEFAULT_HOME = "~/.local/share/kenang"


@dataclass(frozen=True)
class Paths:
    home: Path
    config_file: Path
    active: Path
    archive: Path
    warehouse: Path
    quarantine: Path
    #: ``s3://bucket/prefix`` when the archive is on object storage; ``archive`` is then its local copy
    #: (``paths.archive_cache``), which every stage reads and writes first (``flows.store.remote``).
    remote_archive: str | None = None

    @property
    def catalog(self) -> Path:
        return self.warehouse / "kenang.duckdb"

    @property
    def lock(self) -> Path:
        return self.home / ".kenang.lock"

    @property
    def memory(self) -> Path:
        """Core memory files: memory/<user>/USER.md and MEMORY.md."""
        return self.home / "memory"

    @property
    def snapshots(self) -> Path:
        """snapshot/<user>.md: what an agent reads at the start of a session."""
        return self.home / "snapshot"

    @property
    def home_id_file(self) -> Path:
        """The home's id, made by ``kenang init``; the archive marker names it."""
        return self.home / ".kenang-id"


@dataclass(frozen=True)
class Settings:
    paths: Paths
    timezone: ZoneInfo
    grace_period: timedelta
    quiet_period: timedelta
    default_user: str
    max_file_bytes: int
    config: Config

    @property
    def limits(self) -> schema.Limits:
        return self.config.limits

    @property
    def summarizer(self) -> schema.Summarizer:
        return self.config.summarizer

    @property
    def embedder(self) -> schema.Embedder:
        return self.config.embedder

    @property
    def recall(self) -> schema.Recall:
        return self.config.recall

    @property
    def analytics(self) -> schema.Analytics:
        return self.config.analytics

    @property
    def mcp(self) -> schema.Mcp:
        return self.config.mcp

    @property
    def memory(self) -> schema.Memory:
        return self.config.memory

    @property
    def retention(self) -> schema.Retention:
        return self.config.retention

    @property
    def projects(self) -> tuple[str, ...]:
        return tuple(self.config.projects)

    def display_name(self, user_id: str) -> str | None:
        """The name notes call ``user_id`` (config ``names``), or None when none is set."""
        return self.config.names.get(user_id)


def resolve_home(home: str | os.PathLike | None, environ: Mapping[str, str]) -> Path:
    """--home, else KENANG_HOME, else ~/.local/share/kenang; made absolute."""
    chosen = home or environ.get("KENANG_HOME") or DEFAULT_HOME
    return Path(chosen).expanduser().resolve()


def init_home(home: Path, values: dict[str, Any] | None = None) -> tuple[Settings, bool]:
    """Create the home's folders, its id and a commented kenang.yaml; returns (settings, created_config).

    The archive is not touched: ``kenang init`` claims it next (``flows.store.mount.claim``
    writes its marker, and is the only code that creates the archive root). Config sits
    below the store, so it never imports it.
    """
    config_file = home / CONFIG_NAME
    try:
        home.mkdir(parents=True, exist_ok=True)
        created = not config_file.exists()
        if created:
            tmp = config_file.with_name(f".{CONFIG_NAME}.tmp")
            tmp.write_text(render_yaml(values=values), encoding="utf-8")
            os.replace(tmp, config_file)
    except OSError as exc:  # a file on the way, a read-only or virtual folder: the --home given, so a usage error
        raise UsageError(
            f"cannot make the home {home}: {_why_not(home, exc)}; choose another --home, in a folder you can write to"
        ) from None
    settings = load_settings(home)
    if not settings.paths.home_id_file.is_file():
        tmp = settings.paths.home_id_file.with_name(".kenang-id.tmp")
        tmp.write_text(uuid.uuid4().hex + "\n", encoding="utf-8")
        os.replace(tmp, settings.paths.home_id_file)
    for p in (settings.paths.active, settings.paths.warehouse, settings.paths.quarantine):
        p.mkdir(parents=True, exist_ok=True)
    return settings, created


def _why_not(home: Path, exc: OSError) -> str:
    """What stops ``home`` being made: a file where a folder must be, else the system's word."""
    blocker = next((p for p in (*reversed(home.parents), home) if p.exists() and not p.is_dir()), None)
    if blocker is not None:
        return f"{blocker} is a file, not a folder"
    return exc.strerror or str(exc)


def edit_config(home: Path, change: Callable[[dict], None]) -> Settings:
    """Apply ``change`` to kenang.yaml's mapping and write it back with its comments kept.

    The new file must validate (it is checked before it replaces the old one), and it
    replaces the old one atomically: a bad edit changes nothing.
    """
    import io

    from ruamel.yaml import YAML

    config_file = home / CONFIG_NAME
    read_config(config_file)  # a broken file is one line saying where, as everywhere, not ruamel's dump
    rt = YAML()  # round-trip: comments, order and styles survive
    rt.preserve_quotes = True
    rt.indent(mapping=2, sequence=4, offset=2)
    rt.representer.add_representer(type(None), lambda r, _v: r.represent_scalar("tag:yaml.org,2002:null", "null"))
    data = rt.load(config_file.read_text(encoding="utf-8")) or {}
    change(data)
    _flow_empties(data)
    buf = io.StringIO()
    rt.dump(data, buf)
    text = buf.getvalue()
    try:
        raw = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:  # kenang's own writing went wrong: say so, change nothing
        raise ConfigError(
            f"{config_file}: the edit would not read back ({type(exc).__name__}); nothing changed"
        ) from None
    try:
        config = Config.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(f"{config_file}: {describe_error(exc, raw)}") from None
    settings_from(home, config_file, config)
    tmp = config_file.with_name(f".{CONFIG_NAME}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, config_file)
    return load_settings(home)


def _flow_empties(node: object) -> None:
    """Write every mapping and list the edit left empty as ``{}`` or ``[]``: ruamel writes an emptied block mapping
    (the last token removed, its key's comment kept) as a ``{}`` on a line of its own, which is no YAML."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    if isinstance(node, (CommentedMap, CommentedSeq)):
        if not node:
            node.fa.set_flow_style()
        for child in node.values() if isinstance(node, CommentedMap) else node:
            _flow_empties(child)


def home_id(paths: Paths) -> str | None:
    """The id ``kenang init`` gave this home, or None for a home made before ids existed."""
    try:
        return paths.home_id_file.read_text(encoding="utf-8").strip() or None
    except FileNotFoundError:
        return None


def load_settings(home: Path) -> Settings:
    """Read and validate home/kenang.yaml; ConfigError names the key and the file."""
    config_file = home / CONFIG_NAME
    if not config_file.is_file():
        raise ConfigError(
            f"no {CONFIG_NAME} in {home}: run `kenang init --home {home}` first (or `kenang demo` for a sample home)"
        )
    raw = read_config(config_file)
    try:
        config = Config.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(f"{config_file}: {describe_error(exc, raw)}") from None
    return settings_from(home, config_file, config)


def read_config(config_file: Path) -> Any:
    """kenang.yaml as YAML reads it ({} when empty); ConfigError, one line, when it is not YAML or repeats a key."""
    raw, duplicates = read_config_all(config_file)
    if duplicates:
        raise ConfigError(f"{config_file}: {duplicates[0]}")
    return raw


def read_config_all(config_file: Path) -> tuple[Any, list[str]]:
    """(kenang.yaml as YAML reads it, {} when empty; each key it repeats, one line each naming both lines).

    ConfigError, one line saying where, when it is not YAML. PyYAML keeps a repeated key's last value
    without a word, so a second ``timezone:`` at the end of the file would silently win: the keys are
    checked on the parsed nodes, at every level, before anything is built from them.
    """
    try:
        loader = yaml.SafeLoader(config_file.read_text(encoding="utf-8"))
        try:
            node = loader.get_single_node()
            raw = loader.construct_document(node) if node is not None else None
        finally:
            loader.dispose()
    except (yaml.YAMLError, UnicodeDecodeError, OSError) as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        said = getattr(exc, "problem", None) or " ".join(str(exc).split())
        raise ConfigError(
            f"{config_file}: not valid YAML{at}: {said}; fix it (or move it away and run `kenang init`)"
        ) from None
    return ({} if raw is None else raw), (_duplicate_keys(node) if node is not None else [])


def _duplicate_keys(root: yaml.Node) -> list[str]:
    """Each mapping key under ``root`` that appears twice in its mapping, as ``duplicate key a.b at lines 3 and 9``."""
    out: list[tuple[int, str]] = []
    seen: set[int] = set()  # an alias repeats a node (and may hold itself): each is walked once
    todo: list[tuple[yaml.Node, tuple[str, ...]]] = [(root, ())]
    while todo:
        node, path = todo.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.SequenceNode):
            todo += [(item, (*path, str(i))) for i, item in enumerate(node.value)]
        elif isinstance(node, yaml.MappingNode):
            first: dict[tuple[str, str], int] = {}
            for key, value in node.value:
                name = key.value if isinstance(key, yaml.ScalarNode) else None
                if name is not None and key.tag != "tag:yaml.org,2002:merge":
                    line = key.start_mark.line + 1
                    if (key.tag, name) in first:
                        where = f"{'.'.join((*path, name))} at lines {first[key.tag, name]} and {line}"
                        out.append((line, f"duplicate key {where}; keep one of them"))
                    else:
                        first[key.tag, name] = line
                todo.append((value, (*path, str(name))))
    return [said for _, said in sorted(out)]


def value_problems(raw: Mapping[str, Any]) -> list[str]:
    """What is wrong with the values the schema takes as any string: ``timezone`` (an IANA zone) and
    ``default_user`` (a user id). ``raw``: the file's top level, read or validated."""
    out = []
    zone = raw.get("timezone")  # left out: the default, which is one; not text: the schema's problem
    try:
        ZoneInfo(zone) if isinstance(zone, str) else None
    except (ZoneInfoNotFoundError, ValueError, OSError):  # "Asia" is a folder of zones; a long name, an OS error
        out.append(
            f"timezone: {_shown(str(zone))!r} is not an IANA time zone (for example Asia/Jakarta or Europe/Amsterdam)"
        )
    user = raw.get("default_user")
    if isinstance(user, str) and not USER_ID_RE.match(user):
        out.append(
            f"default_user: {_shown(user)!r} is not a valid user id (lower-case letters, digits, '.', '_' or '-', "
            "at most 64)"
        )
    elif isinstance(user, str) and _reads_as_secret(user):
        out.append(
            "default_user: the value reads as a secret (a key or a token), not a name; a user id is written into "
            "every row and folder of the user's, so choose a short name, such as gading"
        )
    return out


def _reads_as_secret(user: str) -> bool:
    """Whether a valid user id holds a secret as written (``transforms.redact.redact_user_id`` would not keep it).

    An id of letters and marks alone, or of fewer than 8 characters, is a name: a token, a key or a card number
    holds digits, and the redaction rules cost an import (about 0.2 s) that every command reading the config would
    otherwise pay."""
    if len(user) < 8 or not any(ch.isdigit() for ch in user):
        return False
    from transforms.redact import redact_user_id

    return redact_user_id(user) != user


def _shown(value: str) -> str:
    """A refused value as an error may show it: with any secret in it redacted."""
    from transforms.redact import redact

    return redact(value).text


def settings_from(home: Path, config_file: Path, config: Config) -> Settings:
    """Build Settings from a validated config: the zone, the user id and the folder layout checked."""
    where = str(config_file)
    if problems := value_problems({"timezone": config.timezone, "default_user": config.default_user}):
        raise ConfigError(f"{where}: {problems[0]}")
    tz = ZoneInfo(config.timezone)
    user = config.default_user

    def place(key: str) -> Path:
        p = Path(getattr(config.paths, key)).expanduser()
        return (p if p.is_absolute() else home / p).resolve()

    paths = Paths(
        home=home,
        config_file=config_file,
        active=place("active"),
        archive=place("archive_cache") if schema.s3_url(config.paths.archive) else place("archive"),
        warehouse=place("warehouse"),
        quarantine=place("quarantine"),
        remote_archive=config.paths.archive.strip() if schema.s3_url(config.paths.archive) else None,
    )
    check_layout(paths, where)
    check_sources(config, paths, where)
    return Settings(
        paths=paths,
        timezone=tz,
        grace_period=timedelta(hours=config.grace_period_hours),
        quiet_period=timedelta(minutes=config.quiet_period_minutes),
        default_user=user,
        max_file_bytes=int(config.limits.max_file_mb * 1024 * 1024),
        config=config,
    )


#: Folders no kenang path may be: the root and the system's own top-level folders.
SYSTEM_DIRS = frozenset(
    Path(p)
    for p in (
        "/",
        "/bin",
        "/boot",
        "/dev",
        "/etc",
        "/home",
        "/lib",
        "/lib32",
        "/lib64",
        "/media",
        "/mnt",
        "/opt",
        "/proc",
        "/root",
        "/run",
        "/sbin",
        "/srv",
        "/sys",
        "/tmp",
        "/usr",
        "/var",
    )
)
_LAYOUT = ("active", "archive", "warehouse", "quarantine")


def check_layout(paths: Paths, where: str) -> None:
    """The four folders are apart from one another, from the config file and from system folders.

    ``paths.active: .`` would make kenang quarantine its own kenang.yaml and tables, and
    ``paths.active: /`` would walk the whole filesystem; both are refused before anything runs.
    """
    for name in _LAYOUT:
        p = getattr(paths, name)
        if p in SYSTEM_DIRS or p == Path(p.anchor):
            raise ConfigError(
                f"{where}: paths.{name}: {str(p)!r} is a system folder; "
                f"give kenang a folder of its own, e.g. {paths.home / name}"
            )
        if p == paths.config_file or p in paths.config_file.parents:
            raise ConfigError(
                f"{where}: paths.{name}: {str(p)!r} contains the home's own {CONFIG_NAME}; "
                f"use a subfolder, e.g. {paths.home / name}"
            )
    for i, a in enumerate(_LAYOUT):
        for b in _LAYOUT[i + 1 :]:
            pa, pb = getattr(paths, a), getattr(paths, b)
            if pa == pb or pa in pb.parents or pb in pa.parents:
                raise ConfigError(
                    f"{where}: paths.{a} ({pa}) and paths.{b} ({pb}) overlap; "
                    f"each must be a folder of its own, neither inside the other"
                )


def check_sources(config: Config, paths: Paths, where: str) -> None:
    """Each source's path stays off the system's top folders and off kenang's own folders.

    ``/`` or ``/home`` would have collection walk the whole machine, and a source inside
    ``active/`` or the archive (or a ``folder`` source holding them) would collect
    kenang's own files back into ``active/``. Both are refused before anything runs.
    """
    for src in config.sources:
        raw = os.path.expanduser(src.path)
        parts = Path(raw).parts
        fixed = next((i for i, part in enumerate(parts) if any(c in part for c in "*?[")), len(parts))
        root = Path(*parts[:fixed]) if fixed else Path(".")
        root = (root if root.is_absolute() else paths.home / root).resolve()
        if root in SYSTEM_DIRS or root == Path(root.anchor):
            raise ConfigError(
                f"{where}: sources: {src.name}: path {src.path!r} starts at {root}, a system folder; "
                "name the folder the tool keeps its logs in (e.g. ~/.claude/projects)"
            )
        for name in _LAYOUT:
            mine = getattr(paths, name)
            if root == mine or mine in root.parents or (src.kind == "folder" and root in mine.parents):
                raise ConfigError(
                    f"{where}: sources: {src.name}: path {src.path!r} overlaps paths.{name} ({mine}); "
                    "kenang would collect its own files"
                )


def pick_user(given: str | None, known: Callable[[], list[str]], nothing_yet: str) -> str:
    """The user a query is for: the one given, else the home's only one (``known`` is read only then)."""
    if given:
        return given
    users = known()
    if len(users) == 1:
        return users[0]
    if not users:
        raise UsageError(nothing_yet)
    raise UsageError(f"this home has {len(users)} users ({', '.join(users)}); choose one with --user")
