"""The kenang.yaml schema, declared once, as pydantic v2 models.

``kenang init`` renders the commented file from these models (``render_yaml``), and
``flows.config`` validates a loaded file against them, so a key, its type, its range,
its default and its comment live in one place: the field. Every model forbids extra
keys: a typo must never be silently ignored in a tool that deletes originals. Types
are strict (``true`` is not a number, ``"2"`` is not an integer), and a bad value is
reported by ``describe_error`` as the key path, the value and what was wanted, the
way a person reads it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal, TypeGuard, Union, get_args, get_origin

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    ValidationError,
    field_validator,
    model_validator,
)

from schemas.frontmatter import MOODS

Number = StrictInt | StrictFloat


class Section(BaseModel):
    """A mapping in kenang.yaml: strict, closed, frozen."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


def _not_blank(v: str) -> str:
    if not v.strip():
        raise ValueError("must not be empty")
    return v


class Paths(Section):
    """relative to the home unless absolute (archive may be a NAS mount, or s3://bucket/prefix)"""

    active: StrictStr = Field(default="active", description="where agents drop transcripts")
    archive: StrictStr = Field(
        default="archive",
        description="read-only originals; a NAS mount, or s3://bucket/prefix (credentials from the environment)",
    )
    warehouse: StrictStr = Field(default="warehouse", description="Parquet tables and kenang.duckdb")
    quarantine: StrictStr = Field(default="quarantine", description="files kenang could not read, with a reason")
    archive_cache: StrictStr = Field(
        default="archive-cache", description="with an s3:// archive: the local copy kenang reads and writes first"
    )

    _blank = field_validator("active", "archive", "warehouse", "quarantine", "archive_cache")(_not_blank)

    @field_validator("active", "warehouse", "quarantine", "archive_cache")
    @classmethod
    def _local(cls, v: str) -> str:
        if _URL.match(v.strip()):
            raise ValueError("is a URL, and this path is a local folder (only paths.archive may be s3://bucket/prefix)")
        return v

    @field_validator("archive")
    @classmethod
    def _archive(cls, v: str) -> str:
        if _URL.match(v.strip()) and s3_url(v) is None:
            raise ValueError(
                "is a URL kenang cannot archive to: give a local folder (a mounted NAS folder is fine) "
                "or s3://bucket/prefix for S3-compatible object storage"
            )
        return v


_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_S3 = re.compile(r"^s3://([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:/(.*))?$")


def s3_url(v: str) -> tuple[str, str] | None:
    """(bucket, prefix without slashes at its ends) of an ``s3://bucket/prefix`` archive, else None."""
    m = _S3.match(v.strip())
    if m is None:
        return None
    prefix = (m.group(2) or "").strip("/")
    if any(part in ("", ".", "..") for part in prefix.split("/")) and prefix:
        return None
    return m.group(1), prefix


class Limits(Section):
    """guards against files that are not transcripts"""

    max_file_mb: Number = Field(
        default=200, ge=0.001, le=100_000, description="a transcript bigger than this goes to quarantine"
    )
    source_file_mb: Number = Field(
        default=64,
        ge=0.001,
        le=100_000,
        description="sources: a file (a log's new part) bigger than this is skipped for the night",
    )
    archive_min_free_mb: Number = Field(
        default=64,
        ge=0,
        le=10_000_000,
        description="below this much free space the archive counts as full: nothing is archived",
    )
    batch_rows: StrictInt = Field(
        default=20_000,
        ge=1,
        le=10_000_000,
        description="a day of more messages than this is loaded and indexed this many rows at a time (bounds memory)",
    )


def _http_url(v: str | None) -> str | None:
    if v is not None and not re.match(r"^https?://[^/\s]+", v.strip()):
        raise ValueError("must be an http:// or https:// URL, e.g. http://gpu-box:11434/v1")
    return v


class Summarizer(Section):
    """how the daily summaries are written"""

    backend: Literal["llama", "extractive", "openai"] = Field(
        default="extractive",
        description="extractive (no model: the notes kenang writes best without a 1.5B+ model), llama (a local "
        "GGUF via llama-cpp-python) or openai (a model server's OpenAI-compatible API)",
    )
    model_path: StrictStr | None = Field(
        default=None, description="a GGUF file; null = the bundled SmolLM2-135M-Instruct"
    )
    n_ctx: StrictInt = Field(
        default=4096, ge=512, le=1_048_576, description="context window in tokens; longer days go in chunks"
    )
    n_threads: StrictInt | None = Field(
        default=None, ge=1, le=1024, description="CPU threads for the model; null = all cores but one"
    )
    chat_format: StrictStr | None = Field(
        default=None, description="llama-cpp chat format (e.g. chatml); null = the model's own"
    )
    max_tokens: StrictInt = Field(default=320, ge=16, le=32_768, description="longest reply per model call")
    temperature: Number = Field(default=0.2, ge=0, le=2, description="first attempt; the retry uses 0")
    seed: StrictInt = Field(default=42, description="fixed, so a rerun writes the same summary")
    summary_chars: StrictInt = Field(
        default=600,
        ge=200,
        le=1200,
        description="longest extractive summary; a short day gets a shorter one (a quarter of it)",
    )
    max_days_per_run: StrictInt | None = Field(
        default=None,
        ge=1,
        le=1_000_000,
        description="most days one run summarizes, newest first; the rest wait for the next nights. "
        "null = 60 with a model, no limit for extractive",
    )
    base_url: StrictStr | None = Field(
        default=None, description="openai: the server's API, e.g. http://gpu-box:11434/v1"
    )
    model: StrictStr | None = Field(
        default=None, description="openai: the model id the server knows, e.g. qwen2.5:7b-instruct"
    )
    api_key_env: StrictStr | None = Field(
        default=None, description="openai: the environment variable holding the API key (never the key itself)"
    )
    timeout_s: Number = Field(default=300, ge=1, le=86_400, description="openai: seconds to wait for one answer")
    concurrency: StrictInt = Field(default=1, ge=1, le=64, description="openai: days in flight at once")
    structured_output: Literal["json_schema", "json_object", "none"] = Field(
        default="json_schema", description="openai: json_schema (the server follows the schema), json_object, or none"
    )

    _url = field_validator("base_url")(_http_url)


class Embedder(Section):
    """the recall index's embedding model (changing it re-embeds everything)"""

    backend: Literal["e5+use", "e5", "use", "llama", "openai", "none"] = Field(
        default="e5+use",
        description="e5+use (both bundled models, fused), e5, use, llama (a GGUF embedding model), openai (a model "
        "server's /embeddings), or none (keyword only)",
    )
    model_path: StrictStr | None = Field(
        default=None, description="a GGUF embedding model for the llama backend, e.g. bge-m3"
    )
    query_prefix: StrictStr = Field(
        default="", description="llama backend: text put before each query (e5 GGUFs want 'query: ')"
    )
    passage_prefix: StrictStr = Field(
        default="", description="llama backend: text put before each chunk (e5 GGUFs: 'passage: ')"
    )
    n_threads: StrictInt | None = Field(
        default=None, ge=1, le=1024, description="CPU threads; null = all cores but one when indexing, 1 for a query"
    )
    batch_size: StrictInt = Field(default=16, ge=1, le=4096, description="chunks embedded per call")
    max_chunks_per_run: StrictInt | None = Field(
        default=None,
        ge=1,
        le=100_000_000,
        description="most new chunks one run embeds, newest days first; the rest wait. "
        "null = 6000 with an embedding model, no limit for none",
    )
    base_url: StrictStr | None = Field(
        default=None, description="openai: the server's API, e.g. http://gpu-box:11434/v1"
    )
    model: StrictStr | None = Field(
        default=None, description="openai: the embedding model id the server knows, e.g. bge-m3"
    )
    api_key_env: StrictStr | None = Field(
        default=None, description="openai: the environment variable holding the API key (never the key itself)"
    )
    timeout_s: Number = Field(default=120, ge=1, le=86_400, description="openai: seconds to wait for one batch")
    concurrency: StrictInt = Field(default=1, ge=1, le=64, description="openai: batches in flight at once")

    _url = field_validator("base_url")(_http_url)


class Recall(Section):
    """kenang recall"""

    top_k: StrictInt = Field(default=5, ge=1, le=100, description="results per query")
    related_decay: Number = Field(
        default=0.7, ge=0, le=1, description="a related_dates day scores its parent's score times this"
    )
    exact_below: StrictInt = Field(
        default=200_000, ge=0, description="chunks (a user's) below which the vector arm is exact; from it, ANN"
    )


class Analytics(Section):
    """kenang analyze and the notebooks"""

    productive_moods: list[StrictStr] = Field(
        default=["productive", "focused"],
        description="moods that count a day as productive (kenang analyze productivity)",
    )
    productive_min_importance: StrictInt = Field(
        default=5, ge=1, le=10, description="... and the least importance it needs (1-10)"
    )
    rolling_days: StrictInt = Field(
        default=7, ge=1, le=366, description="window of importance_trend's rolling mean, in days"
    )

    @field_validator("productive_moods")
    @classmethod
    def _known_moods(cls, v: list[str]) -> list[str]:
        bad = [x for x in v if x not in MOODS]
        if bad:
            raise ValueError(f"unknown mood(s) {', '.join(bad)}; moods are: {', '.join(MOODS)}")
        return v


_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_USER = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")
_HOST = re.compile(r"^(\*|[A-Za-z0-9*][A-Za-z0-9.*-]*|\[[0-9A-Fa-f:.]+\])$")
_ORIGIN = re.compile(r"^(\*|https?://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9*][A-Za-z0-9.*-]*)(:(\d{1,5}|\*))?)$")


class Mcp(Section):
    """kenang mcp, the memory server for agents"""

    tokens: dict[StrictStr, StrictStr] = Field(
        default={}, description="sha256 of a bearer token -> its user; `kenang mcp token add --user U` adds one"
    )
    max_query_chars: StrictInt = Field(default=2000, ge=10, le=100_000, description="longest memory_recall query")
    max_top_k: StrictInt = Field(default=50, ge=1, le=1000, description="most results one memory_recall returns")
    session_max_turns: StrictInt = Field(
        default=2000, ge=1, le=100_000, description="most turns one session_write takes"
    )
    session_max_turn_chars: StrictInt = Field(
        default=100_000, ge=100, le=10_000_000, description="longest turn session_write takes, in characters"
    )
    session_max_chars: StrictInt = Field(
        default=2_000_000, ge=100, le=100_000_000, description="most characters one session_write takes in all"
    )
    users: list[StrictStr] = Field(
        default=[],
        description="users kenang mcp may serve before they hold any data (default_user and the sources' "
        "users always may)",
    )
    allowed_hosts: list[StrictStr] = Field(
        default=[],
        description="--http: Host names a request may carry besides localhost and the address it reached "
        "(any port), e.g. [nas.lan]",
    )
    allowed_origins: list[StrictStr] = Field(
        default=[],
        description="--http: browser Origins allowed besides loopback ones and the server's own, "
        "e.g. [https://chat.nas.lan]",
    )

    @field_validator("users")
    @classmethod
    def _user_ids(cls, v: list[str]) -> list[str]:
        for user in v:
            if not _USER.match(user):
                raise ValueError(f"{user!r} is not a valid user id (a-z, 0-9, '.', '_' or '-', at most 64)")
        return v

    @field_validator("allowed_hosts")
    @classmethod
    def _hosts(cls, v: list[str]) -> list[str]:
        for host in v:
            if not _HOST.match(host):
                raise ValueError(
                    f"{host!r} is not a host name: give the name or address alone, e.g. nas.lan or "
                    "[fd00::2] (an IPv6 address in brackets; any port is allowed), without http://"
                )
        return v

    @field_validator("allowed_origins")
    @classmethod
    def _origins(cls, v: list[str]) -> list[str]:
        for origin in v:
            if not _ORIGIN.match(origin):
                raise ValueError(f"{origin!r} is not an origin: give scheme and host, e.g. https://chat.nas.lan")
        return v

    @field_validator("tokens")
    @classmethod
    def _hashes(cls, v: dict[str, str]) -> dict[str, str]:
        for sha, user in v.items():
            if not _SHA256.match(sha):
                raise ValueError(f"key {sha[:16]!r}... is not a sha256 (64 lower-case hex): store hashes, never tokens")
            if not _USER.match(user):
                raise ValueError(f"{user!r} is not a valid user id")
        return v


class Memory(Section):
    """core memory (memory/<user>/USER.md and MEMORY.md) and the snapshot agents read"""

    max_notes: StrictInt = Field(default=50, ge=1, le=500, description="most entries one core memory file may hold")
    auto_accept: StrictBool = Field(
        default=False, description="add the corrections the nightly run finds by itself (still under every rule)"
    )
    snapshot_days_chars: StrictInt = Field(
        default=1500, ge=0, le=100_000, description="the snapshot's latest-days part, in characters"
    )


class Retention(Section):
    """what kenang forgets by itself, every night (null: keep everything)"""

    messages_days: StrictInt | None = Field(
        default=None, ge=1, le=36_500, description="forget messages, summaries and the index older than this many days"
    )
    archive_days: StrictInt | None = Field(
        default=None,
        ge=1,
        le=36_500,
        description="also delete archived and quarantined originals older than this (logged, never undone)",
    )
    archive_lock_days: StrictInt = Field(
        default=3650,
        ge=0,
        le=36_500,
        description="s3:// archive with object lock: days each original stays locked (0: the bucket's rule only)",
    )


#: The longest name ``names`` may give a user: a name in a note's ``people`` is at most this long.
_NAME_CHARS = 60

SOURCE_KINDS = ("claude_code", "codex", "aider", "open_webui_db", "folder")
_SOURCE_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,39}$")


class Source(Section):
    """one place an agent already keeps its transcripts; kenang copies what is new each night"""

    name: StrictStr = Field(description="a short name of your own (a-z, 0-9, _ -), shown in reports")
    kind: Literal["claude_code", "codex", "aider", "open_webui_db", "folder"] = Field(
        description="claude_code | codex | aider | open_webui_db | folder"
    )
    path: StrictStr = Field(
        description="a file, a folder or a glob; ~ is your home (e.g. ~/.claude/projects/*/*.jsonl)"
    )
    user: StrictStr | None = Field(default=None, description="whose transcripts these are; null = default_user")
    mode: Literal["copy", "move"] = Field(
        default="copy", description="copy (the source is never touched); move: folder only"
    )
    webui_user: StrictStr | None = Field(
        default=None, description="open_webui_db: only this Open WebUI user's chats (email or id); null = every chat"
    )

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not _SOURCE_NAME.match(v):
            raise ValueError("must be 1-40 of a-z, 0-9, '_' or '-', starting with a letter or digit")
        return v

    @field_validator("path")
    @classmethod
    def _path(cls, v: str) -> str:
        return _not_blank(v)

    @field_validator("user")
    @classmethod
    def _user(cls, v: str | None) -> str | None:
        if v is not None and not _USER.match(v):
            raise ValueError("is not a valid user id (a-z, 0-9, '.', '_' or '-', at most 64)")
        return v

    @model_validator(mode="after")
    def _mode_and_kind(self) -> Source:
        if self.mode == "move" and self.kind != "folder":
            raise ValueError(
                f"mode: move is for kind: folder only; a source of kind {self.kind} belongs to its "
                "tool, so kenang only copies from it"
            )
        if self.webui_user is not None and self.kind != "open_webui_db":
            raise ValueError("webui_user is for kind: open_webui_db only")
        return self


class Config(Section):
    """The whole kenang.yaml."""

    timezone: StrictStr = Field(default="Asia/Jakarta", description="IANA name; days are cut in this zone")
    grace_period_hours: Number = Field(
        default=2, ge=0, le=24 * 31, description="day D is eligible once D has ended here and this many hours passed"
    )
    quiet_period_minutes: Number = Field(
        default=10, ge=0, le=24 * 60, description="never touch a file modified more recently than this"
    )
    default_user: StrictStr = Field(default="default", description="owner of files that name no user")
    paths: Paths = Field(default_factory=Paths)
    limits: Limits = Field(default_factory=Limits)
    summarizer: Summarizer = Field(default_factory=Summarizer)
    embedder: Embedder = Field(default_factory=Embedder)
    recall: Recall = Field(default_factory=Recall)
    analytics: Analytics = Field(default_factory=Analytics)
    mcp: Mcp = Field(default_factory=Mcp)
    memory: Memory = Field(default_factory=Memory)
    retention: Retention = Field(default_factory=Retention)
    projects: list[StrictStr] = Field(
        default=[], description="project names to recognise in chats, e.g. [Homelab, kenang]"
    )
    names: dict[StrictStr, StrictStr] = Field(
        default={}, description="user id -> the name notes call that user, e.g. {gading: Gading Nasution}"
    )
    sources: list[Source] = Field(
        default=[],
        description="where agents keep their own transcripts; `kenang sources add` adds one (see docs/importing.md)",
    )

    @model_validator(mode="before")
    @classmethod
    def _empty_sections(cls, data: Any) -> Any:
        """``summarizer:`` with nothing under it reads as YAML null: the section's defaults."""
        if isinstance(data, dict):
            return {k: ({} if v is None and k in _SECTIONS else v) for k, v in data.items()}
        return data

    @field_validator("projects")
    @classmethod
    def _names(cls, v: list[str]) -> list[str]:
        if not all(x.strip() for x in v):
            raise ValueError("must be a list of names")
        return v

    @field_validator("names", mode="before")
    @classmethod
    def _names_are_text(cls, v: Any) -> Any:
        """A name that is not text says whose it is (the type check names only the mapping)."""
        if isinstance(v, dict):
            for user, name in v.items():
                if not isinstance(name, str):
                    raise ValueError(f"the name of {user} must be text, got {name!r}")
        return v

    @field_validator("names")
    @classmethod
    def _user_names(cls, v: dict[str, str]) -> dict[str, str]:
        for user, name in v.items():
            if not _USER.match(user):
                raise ValueError(f"{user!r} is not a valid user id (a-z, 0-9, '.', '_' or '-', at most 64)")
            if not name.strip() or name != " ".join(name.split()) or len(name) > _NAME_CHARS:
                raise ValueError(
                    f"the name of {user} must be one line of 1-{_NAME_CHARS} characters, without leading, "
                    "trailing or repeated spaces"
                )
        return v

    @field_validator("sources")
    @classmethod
    def _unique_sources(cls, v: list[Source]) -> list[Source]:
        names = [s.name for s in v]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"names a source twice ({', '.join(twice)}); each source needs a name of its own")
        return v


_SECTIONS = frozenset(
    n for n, f in Config.model_fields.items() if isinstance(f.annotation, type) and issubclass(f.annotation, Section)
)


# --- errors a person can read ---------------------------------------------------------

_WORDS = {
    str: "text",
    int: "integer",
    float: "number",
    bool: "true/false",
    dict: "mapping",
    list: "list",
    tuple: "list",
    type(None): "empty",
}


def describe_error(exc: ValidationError, raw: Any) -> str:
    """The first problem of a failed validation as ``key: value what-was-wrong``."""
    return _describe(_first(exc.errors()), raw)


def describe_errors(exc: ValidationError, raw: Any) -> list[str]:
    """Every problem of a failed validation, one per key, each as ``describe_error`` says it."""
    seen: dict[tuple, str] = {}
    for err in exc.errors():
        where = tuple(_trim([p for p in err["loc"] if isinstance(p, (str, int))]))
        if where not in seen:  # a union reports one error per member: the first says what was wanted best
            seen[where] = _describe(err, raw)
    return list(seen.values())


def _describe(err: Mapping[str, Any], raw: Any) -> str:
    path = [p for p in err["loc"] if isinstance(p, (str, int))]
    key = ".".join(str(p) for p in _trim(path)) if path else ""
    value = _lookup(raw, _trim(path))
    kind = err["type"]
    if kind == "extra_forbidden":
        *parent, name = _trim(path)
        model = _model_at(parent)
        known = ", ".join(".".join([*map(str, parent), k]) for k in model.model_fields)
        return f"unknown key {key} (known here: {known})"
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        label = key or "the top level"
        return f"{label} must be a mapping of keys, got {_word(type(value))}"
    if kind == "literal_error":
        choices = ", ".join(get_args(_annotation(_trim(path))))
        return f"{key}: {value!r} must be one of: {choices}"
    if kind in ("greater_than_equal", "less_than_equal", "greater_than", "less_than"):
        lo, hi = _bounds(_trim(path))
        below = kind.startswith("greater")
        return f"{key}: {value!r} must be {'>=' if below else '<='} {lo if below else hi} (allowed: {lo} to {hi})"
    if kind == "missing":
        return f"{key} is required"
    if kind == "value_error":
        said = str(err["msg"]).removeprefix("Value error, ")
        return f"{key}: {said}" if isinstance(value, (dict, list)) else f"{key}: {value!r} {said}"
    wanted = " or ".join(_word(t) for t in _types(_annotation(_trim(path))))
    return f"{key}: expected {wanted}, got {value!r} ({_word(type(value))})"


def _first(errors: Sequence[Mapping[str, Any]]) -> Mapping[str, Any]:
    """A union reports one error per member: the first member's says what was wanted best."""
    return errors[0]


def _trim(path: list) -> list:
    """The key path without pydantic's union-member tags; an item of a list of sections keeps its index."""
    out: list = []
    model: type[BaseModel] | None = Config
    items: type[BaseModel] | None = None  # the section type of the list just entered
    for p in path:
        if items is not None and isinstance(p, int):
            out.append(p)
            model, items = items, None
        elif model is not None and isinstance(p, str) and p in model.model_fields:
            out.append(p)
            ann = model.model_fields[p].annotation
            items = _list_of_sections(ann)
            model = ann if isinstance(ann, type) and issubclass(ann, BaseModel) else None
        elif model is not None and isinstance(p, str):
            out.append(p)  # an unknown key
            model = items = None
    return out


def _list_of_sections(annotation: Any) -> type[BaseModel] | None:
    """``Source`` for ``list[Source]``; None for anything else."""
    args = get_args(annotation) if get_origin(annotation) is list else ()
    return args[0] if args and isinstance(args[0], type) and issubclass(args[0], BaseModel) else None


def _model_at(parent: list) -> type[BaseModel]:
    model: type[BaseModel] = Config
    for p in parent:
        if isinstance(p, int):
            continue  # the list's item type was taken with its key
        ann = model.model_fields[p].annotation
        inner = _list_of_sections(ann) or ann
        assert isinstance(inner, type) and issubclass(inner, BaseModel)  # _trim keeps only keys through sections
        model = inner
    return model


def _annotation(path: list) -> Any:
    *parent, name = path
    return _model_at(parent).model_fields[name].annotation


def _bounds(path: list) -> tuple[Any, Any]:
    *parent, name = path
    lo = hi = None
    for m in _model_at(parent).model_fields[name].metadata:
        lo = getattr(m, "ge", lo)
        hi = getattr(m, "le", hi)
    return lo, hi


def _types(annotation: Any) -> list[type]:
    origin = get_origin(annotation)
    if origin is Union or (origin is not None and str(origin) == "types.UnionType"):
        return [t for a in get_args(annotation) for t in _types(a)]
    if origin is tuple or annotation is tuple:
        return [list]
    base = getattr(annotation, "__origin__", annotation)
    for t in (bool, int, float, str, type(None)):
        if base is t or (isinstance(base, type) and issubclass(base, t) and t is not int):
            return [t]
    if base is int:
        return [int]
    return [base] if isinstance(base, type) else [str]


def _word(t: type) -> str:
    return _WORDS.get(t, t.__name__)


def _lookup(raw: Any, path: list) -> Any:
    for p in path:
        if isinstance(p, int) and isinstance(raw, list) and 0 <= p < len(raw):
            raw = raw[p]
        elif isinstance(p, str) and isinstance(raw, dict) and p in raw:
            raw = raw[p]
        else:
            return None
    return raw


# --- the commented file `kenang init` writes ---------------------------------------------

_HEADER = (
    "# kenang configuration. Every key is optional: a key left out takes its default.",
    "# Unknown keys and keys written twice are errors, so a typo never passes silently.",
)


def render_yaml(values: dict[str, Any] | None = None) -> str:
    """The commented kenang.yaml that `kenang init` writes; values override the defaults."""
    return "\n".join([*_HEADER, *_render(Config, values or {}, 0)]) + "\n"


def _render(model: type[BaseModel], values: dict[str, Any], indent: int) -> list[str]:
    pad = " " * indent
    scalars = [n for n, f in model.model_fields.items() if not _is_section(f.annotation)]
    width = max((len(n) for n in scalars), default=0)
    lines: list[str] = []
    for name, f in model.model_fields.items():
        section = f.annotation
        if _is_section(section):
            assert section.__doc__, f"{section.__name__} needs a docstring: it is the comment kenang init writes"
            lines.append(f"{pad}{name}:{' ' * 6}# {section.__doc__.strip()}")
            lines += _render(section, values.get(name) or {}, indent + 2)
            continue
        default = f.get_default(call_default_factory=True)
        head = f"{pad}{name}: {_yaml_scalar(values.get(name, default))}"
        column = indent + width + 16
        lines.append(f"{head:<{column}}# {f.description}" if len(head) < column else f"{head}  # {f.description}")
    return lines


def _is_section(annotation: Any) -> TypeGuard[type[Section]]:
    return isinstance(annotation, type) and issubclass(annotation, Section)


def _yaml_scalar(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(str(x) for x in v) + "]"
    if isinstance(v, str) and (not v or v != v.strip() or any(c in v for c in ":#'\"[]{},&*!|>%@`")):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return str(v)
