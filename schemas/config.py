"""The kenang.yaml schema, declared once.

``kenang init`` renders the commented file from this declaration, and
``flows.config`` validates a loaded file against it, so a key, its type, its default
and its comment live in one place. Unknown keys are errors: a typo must never be
silently ignored in a tool that deletes originals.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

Check = Callable[[Any], "str | None"]


@dataclass(frozen=True)
class Key:
    name: str
    types: tuple[type, ...]
    default: Any
    comment: str
    check: Check | None = None


@dataclass(frozen=True)
class Section:
    name: str
    keys: tuple["Key | Section", ...]
    comment: str


def _between(lo: float, hi: float) -> Check:
    def check(v: Any) -> str | None:
        if v is None or lo <= v <= hi:
            return None
        return f"must be {'>=' if v < lo else '<='} {lo if v < lo else hi} (allowed: {lo} to {hi})"

    return check


def _non_empty(v: Any) -> str | None:
    return None if str(v).strip() else "must not be empty"


def _one_of(*choices: str) -> Check:
    def check(v: Any) -> str | None:
        return None if v in choices else f"must be one of: {', '.join(choices)}"

    return check


def _strings(v: Any) -> str | None:
    return None if all(isinstance(x, str) and x.strip() for x in v) else "must be a list of names"


def _moods(v: Any) -> str | None:
    from schemas.frontmatter import MOODS

    bad = [x for x in v if x not in MOODS]
    return f"unknown mood(s) {', '.join(map(str, bad))}; moods are: {', '.join(MOODS)}" if bad else None


NONE = type(None)

SCHEMA = Section(
    "",
    (
        Key("timezone", (str,), "Asia/Jakarta", "IANA name; days are cut in this zone"),
        Key(
            "grace_period_hours",
            (int, float),
            2,
            "day D is eligible once D has ended here and this many hours passed",
            _between(0, 24 * 31),
        ),
        Key(
            "quiet_period_minutes",
            (int, float),
            10,
            "never touch a file modified more recently than this",
            _between(0, 24 * 60),
        ),
        Key("default_user", (str,), "default", "owner of files that name no user"),
        Section(
            "paths",
            (
                Key("active", (str,), "active", "where agents drop transcripts", _non_empty),
                Key("archive", (str,), "archive", "read-only originals; may be a NAS mount", _non_empty),
                Key("warehouse", (str,), "warehouse", "Parquet tables and kenang.duckdb", _non_empty),
                Key("quarantine", (str,), "quarantine", "files kenang could not read, with a reason", _non_empty),
            ),
            "relative to the home unless absolute (archive may be a NAS mount)",
        ),
        Section(
            "limits",
            (
                Key(
                    "max_file_mb",
                    (int, float),
                    200,
                    "a transcript bigger than this goes to quarantine",
                    _between(0.001, 100_000),
                ),
                Key(
                    "archive_min_free_mb",
                    (int, float),
                    64,
                    "below this much free space the archive counts as full: nothing is archived",
                    _between(0, 10_000_000),
                ),
            ),
            "guards against files that are not transcripts",
        ),
        Section(
            "summarizer",
            (
                Key("backend", (str,), "llama", "llama (a local GGUF via llama-cpp-python) or extractive (no model)",
                    _one_of("llama", "extractive")),
                Key("model_path", (str, NONE), None, "a GGUF file; null = the bundled SmolLM2-135M-Instruct"),
                Key("n_ctx", (int,), 4096, "context window in tokens; longer days go in chunks", _between(512, 1_048_576)),
                Key("n_threads", (int, NONE), None, "CPU threads for the model; null = all cores", _between(1, 1024)),
                Key("chat_format", (str, NONE), None, "llama-cpp chat format (e.g. chatml); null = the model's own"),
                Key("max_tokens", (int,), 320, "longest reply per model call", _between(16, 32_768)),
                Key("temperature", (int, float), 0.2, "first attempt; the retry uses 0", _between(0, 2)),
                Key("seed", (int,), 42, "fixed, so a rerun writes the same summary"),
            ),
            "how the daily summaries are written",
        ),
        Section(
            "embedder",
            (
                Key("backend", (str,), "e5+use",
                    "e5+use (both bundled models, fused), e5, use, llama (a GGUF embedding model), or none (keyword only)",
                    _one_of("e5+use", "e5", "use", "llama", "none")),
                Key("model_path", (str, NONE), None, "a GGUF embedding model for the llama backend, e.g. bge-m3"),
                Key("query_prefix", (str,), "", "llama backend: text put before each query (e5 GGUFs want 'query: ')"),
                Key("passage_prefix", (str,), "", "llama backend: text put before each chunk (e5 GGUFs: 'passage: ')"),
                Key("n_threads", (int, NONE), None, "CPU threads; null = all cores", _between(1, 1024)),
                Key("batch_size", (int,), 16, "chunks embedded per call", _between(1, 4096)),
            ),
            "the recall index's embedding model (changing it re-embeds everything)",
        ),
        Section(
            "recall",
            (
                Key("top_k", (int,), 5, "results per query", _between(1, 100)),
                Key("related_decay", (int, float), 0.7, "a related_dates day scores its parent's score times this",
                    _between(0, 1)),
            ),
            "kenang recall",
        ),
        Section(
            "analytics",
            (
                Key("productive_moods", (list,), ["productive", "focused"],
                    "moods that count a day as productive (kenang analyze productivity)", _moods),
                Key("productive_min_importance", (int,), 5, "... and the least importance it needs (1-10)",
                    _between(1, 10)),
                Key("rolling_days", (int,), 7, "window of importance_trend's rolling mean, in days", _between(1, 366)),
            ),
            "kenang analyze and the notebooks",
        ),
        Key("projects", (list,), [], "project names to recognise in chats, e.g. [Homelab, kenang]", _strings),
    ),
    "",
)


def defaults(section: Section = SCHEMA) -> dict[str, Any]:
    """The default configuration as a plain nested dict."""
    out: dict[str, Any] = {}
    for k in section.keys:
        out[k.name] = defaults(k) if isinstance(k, Section) else k.default
    return out


def render_yaml(section: Section = SCHEMA, indent: int = 0, values: dict[str, Any] | None = None) -> str:
    """The commented kenang.yaml that `kenang init` writes; values override the defaults."""
    values = values or {}
    lines: list[str] = []
    if indent == 0:
        lines += [
            "# kenang configuration. Every key is optional: a key left out takes its default.",
            "# Unknown keys are an error, so a typo never passes silently.",
        ]
    pad = " " * indent
    width = max((len(k.name) for k in section.keys if isinstance(k, Key)), default=0)
    for k in section.keys:
        if isinstance(k, Section):
            lines.append(f"{pad}{k.name}:{' ' * 6}# {k.comment}")
            lines.append(render_yaml(k, indent + 2, values.get(k.name)).rstrip("\n"))
        else:
            value = _yaml_scalar(values.get(k.name, k.default))
            head = f"{pad}{k.name}: {value}"
            column = indent + width + 16
            lines.append(f"{head:<{column}}# {k.comment}" if len(head) < column else f"{head}  # {k.comment}")
    return "\n".join(lines) + "\n"


def _yaml_scalar(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list):
        return "[" + ", ".join(str(x) for x in v) + "]"
    if isinstance(v, str) and (not v or v != v.strip() or any(c in v for c in ":#'\"[]{},&*!|>%@`")):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return str(v)
