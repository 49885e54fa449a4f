"""The ``YYYY-MM-DD.summary.md`` document: normalise, render and parse.

Every value goes through a normaliser that bounds it (``schemas.frontmatter``), so a
rendered frontmatter is valid by construction; ``parse_summary`` applies the same
checks to a file read back, and ``render → parse`` is the identity (Hypothesis tests
hold it to that).

Normalisation rules:
- lists are stripped, whitespace-collapsed, deduplicated case-insensitively (first
  spelling wins) and cut to their bound in count; an item longer than its bound, or
  with control characters, is dropped rather than truncated into nonsense;
- ``people`` and ``projects`` that arrive all lower-case are title-cased;
  ``technologies`` take their canonical gazetteer spelling where one is known;
  ``tags`` become lower-case kebab-case;
- ``related_dates`` are real dates, never the day itself, never after ``today``.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import yaml

from schemas.frontmatter import (
    FIELDS,
    GENERATOR_KEYS,
    IMPORTANCE_MAX,
    IMPORTANCE_MIN,
    LIST_BOUNDS,
    MOODS,
    SCHEMA_VERSION,
    SUMMARY_MAX_CHARS,
    SUMMARY_SENTENCES,
)
from transforms import yamls

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_SPACE = re.compile(r"\s+")
_TAG_JUNK = re.compile(r"[^a-z0-9]+")
TAG_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


class FrontmatterError(ValueError):
    """A summary file that does not satisfy the schema."""


@dataclass(frozen=True)
class Generator:
    backend: str
    model: str
    model_sha256: str
    prompt_version: int
    fallback_fields: tuple[str, ...] = ()


@dataclass(frozen=True)
class SessionLine:
    session_id: str
    start: str  # HH:MM local, or "" when unknown
    end: str
    messages: int
    topic: str


@dataclass(frozen=True)
class DaySummary:
    date: dt.date
    user_id: str
    people: tuple[str, ...]
    projects: tuple[str, ...]
    tags: tuple[str, ...]
    technologies: tuple[str, ...]
    importance: int
    mood: str
    related_dates: tuple[dt.date, ...]
    sessions: int
    generator: Generator
    summary: str
    session_lines: tuple[SessionLine, ...] = field(default=())
    schema_version: int = SCHEMA_VERSION

    def record(self) -> dict:
        """The frontmatter fields (but the generator) and the summary text as plain values."""
        return {
            "schema_version": self.schema_version,
            "date": self.date,
            "user_id": self.user_id,
            "people": list(self.people),
            "projects": list(self.projects),
            "tags": list(self.tags),
            "technologies": list(self.technologies),
            "importance": self.importance,
            "mood": self.mood,
            "related_dates": list(self.related_dates),
            "sessions": self.sessions,
            "summary": self.summary,
        }


# --- normalisers (each returns a bounded value) ----------------------------------------


def clean_text(value: object) -> str | None:
    """One line of text, stripped and whitespace-collapsed; None if empty or not text."""
    if not isinstance(value, str):
        return None
    text = _SPACE.sub(" ", value).strip()
    return text or None


def normalise_list(name: str, items: Iterable[object], canonical: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """A bounded, deduplicated list for a frontmatter list field (not related_dates)."""
    most, longest = LIST_BOUNDS[name]
    out: list[str] = []
    seen: set[str] = set()
    for raw in items:
        if not isinstance(raw, str) or _CONTROL.search(raw.strip()):
            continue
        item = clean_text(raw)
        if item is None:
            continue
        if name == "tags":
            item = slug(item)
        elif name == "technologies" and canonical:
            item = canonical.get(item.lower(), item)
        elif name in ("people", "projects") and item == item.lower():
            item = " ".join(w[:1].upper() + w[1:] for w in item.split(" "))
        if not item or len(item) > longest or item.lower() in seen:
            continue
        seen.add(item.lower())
        out.append(item)
        if len(out) == most:
            break
    return tuple(out)


def slug(text: str) -> str:
    """Lower-case kebab-case: 'Proxmox Config' -> 'proxmox-config'."""
    return _TAG_JUNK.sub("-", text.lower()).strip("-")


def normalise_importance(value: object) -> int | None:
    """An integer in [1, 10], or None: out-of-range numbers are invalid, never clamped."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str) and value.strip().lstrip("-").isdecimal():
        value = int(value.strip())
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int) and IMPORTANCE_MIN <= value <= IMPORTANCE_MAX:
        return value
    return None


def normalise_mood(value: object) -> str | None:
    text = clean_text(value)
    if text is None:
        return None
    text = text.lower().strip(".!")
    return text if text in MOODS else None


def normalise_dates(values: Iterable[object], *, day: dt.date, today: dt.date) -> tuple[dt.date, ...]:
    """Real ISO dates, not the day itself, not after today; sorted, deduplicated, bounded."""
    most = LIST_BOUNDS["related_dates"][0]
    out: set[dt.date] = set()
    for v in values:
        if isinstance(v, dt.datetime):
            continue
        if isinstance(v, str):
            try:
                v = dt.date.fromisoformat(v.strip())
            except ValueError:
                continue
        if isinstance(v, dt.date) and v != day and v <= today:
            out.add(v)
    # keep the closest to the day when there are too many
    return tuple(sorted(sorted(out, key=lambda d: (abs((d - day).days), d))[:most]))


_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+(?=[^\s])")


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text.strip()) if s.strip()]


def normalise_summary(value: object) -> str | None:
    """2-6 sentences, at most 1200 characters, no loops; None when that cannot be had."""
    if not isinstance(value, str):
        return None
    text = _SPACE.sub(" ", value.replace("\r", " ")).strip()
    if not text or _CONTROL.search(text):
        return None
    found: list[str] = []
    seen: set[str] = set()
    for s in sentences(text):
        key = re.sub(r"\W+", " ", s.lower()).strip()
        if key in seen:
            continue  # a repeated sentence is a loop symptom; keep its first copy
        seen.add(key)
        found.append(s)
    if looks_like_a_loop(text):
        return None
    low, high = SUMMARY_SENTENCES
    found = found[:high]
    while found and len(" ".join(found)) > SUMMARY_MAX_CHARS:
        found.pop()
    if len(found) < low:
        return None
    out = " ".join(found)
    return out if out[-1] in ".!?…" else None


def looks_like_a_loop(text: str, n: int = 6, times: int = 3) -> bool:
    """True when some run of n words occurs at least `times` times: a model stuck in a loop."""
    words = re.findall(r"\w+", text.lower())
    counts: dict[tuple[str, ...], int] = {}
    for i in range(len(words) - n + 1):
        gram = tuple(words[i : i + n])
        counts[gram] = counts.get(gram, 0) + 1
        if counts[gram] >= times:
            return True
    return False


# --- render / parse ---------------------------------------------------------------------


def _flow(value: object) -> str:
    return yaml.safe_dump(value, default_flow_style=True, allow_unicode=True, width=1 << 20, sort_keys=False).strip()


def _scalar_yaml(value: object) -> str:
    text = _flow(value)
    return text[: -len("\n...")] if text.endswith("\n...") else text.removesuffix(" ...").strip()


def render_summary(doc: DaySummary) -> str:
    """The Markdown file, frontmatter first; the same doc always renders the same bytes."""
    gen = doc.generator
    values = {
        **doc.record(),
        "related_dates": [d.isoformat() for d in doc.related_dates],
        "generator": {
            "backend": gen.backend,
            "model": gen.model,
            "model_sha256": gen.model_sha256,
            "prompt_version": gen.prompt_version,
            "fallback_fields": list(gen.fallback_fields),
        },
    }
    lines = ["---"] + [f"{k}: {_scalar_yaml(values[k])}" for k in FIELDS] + ["---"]
    day = doc.date.isoformat()
    related = " ".join(f"[[{d.isoformat()}]]" for d in doc.related_dates)
    lines += [f"# {day}", f"Parent Day: [[{day}]]" + (f" · Related: {related}" if related else ""), "", doc.summary]
    if doc.session_lines:
        lines += ["", "## Sessions"]
        for s in doc.session_lines:
            span = f"{s.start}–{s.end}" if s.start else "time unknown"
            topic = f" · {s.topic}" if s.topic else ""
            lines.append(f"- [[{s.session_id}]] {span} · {s.messages} message{'s' if s.messages != 1 else ''}{topic}")
    return "\n".join(lines) + "\n"


_SESSION_LINE = re.compile(
    r"^- \[\[(?P<id>[^\]]+)\]\] (?:(?P<start>\d\d:\d\d)–(?P<end>\d\d:\d\d)|time unknown) · (?P<n>\d+) messages?(?: · (?P<topic>.*))?$"
)


def parse_summary(text: str, *, today: dt.date | None = None) -> DaySummary:
    """Read a summary file back, checking every field; FrontmatterError says what is wrong."""
    if not text.startswith("---\n"):
        raise FrontmatterError("no frontmatter: the file must start with '---'")
    end = text.find("\n---\n", 4)
    if end < 0:
        raise FrontmatterError("frontmatter is not closed with '---'")
    try:
        meta = yamls.safe_load(text[4:end])
    except yaml.YAMLError as exc:
        raise FrontmatterError(f"frontmatter is not valid YAML: {exc}") from exc
    if not isinstance(meta, dict):
        raise FrontmatterError("frontmatter must be a mapping")
    missing = [k for k in FIELDS if k not in meta]
    extra = sorted(set(meta) - set(FIELDS))
    if missing or extra:
        raise FrontmatterError(f"frontmatter keys: missing {missing}, unknown {extra}")
    day = meta["date"]
    if not isinstance(day, dt.date) or isinstance(day, dt.datetime):
        raise FrontmatterError("date must be an ISO date")
    gen = meta["generator"]
    if not isinstance(gen, dict) or sorted(gen) != sorted(GENERATOR_KEYS):
        raise FrontmatterError(f"generator must have exactly {list(GENERATOR_KEYS)}")
    checks = {
        "people": normalise_list("people", meta["people"] or []),
        "projects": normalise_list("projects", meta["projects"] or []),
        "tags": normalise_list("tags", meta["tags"] or []),
        "technologies": normalise_list("technologies", meta["technologies"] or []),
    }
    for name, value in checks.items():
        if list(value) != list(meta[name] or []):
            raise FrontmatterError(f"{name} is not normalised or out of bounds: {meta[name]!r}")
    importance = normalise_importance(meta["importance"])
    mood = normalise_mood(meta["mood"])
    if importance is None or importance != meta["importance"]:
        raise FrontmatterError(f"importance must be an integer {IMPORTANCE_MIN}..{IMPORTANCE_MAX}")
    if mood is None or mood != meta["mood"]:
        raise FrontmatterError(f"mood must be one of {', '.join(MOODS)}")
    raw_dates = meta["related_dates"] or []
    dates = normalise_dates(raw_dates, day=day, today=today or dt.date.max)
    if [d.isoformat() for d in dates] != [str(d) for d in raw_dates]:
        raise FrontmatterError(f"related_dates must be sorted ISO dates, not the day itself: {raw_dates!r}")
    if meta["schema_version"] != SCHEMA_VERSION or not isinstance(meta["sessions"], int):
        raise FrontmatterError("schema_version or sessions is wrong")
    body = text[end + len("\n---\n") :].split("\n")
    summary, lines = _parse_body(body, day)
    if normalise_summary(summary) != summary:
        raise FrontmatterError("the summary paragraph is not 2-6 sentences within 1200 characters")
    return DaySummary(
        date=day,
        user_id=str(meta["user_id"]),
        people=checks["people"],
        projects=checks["projects"],
        tags=checks["tags"],
        technologies=checks["technologies"],
        importance=importance,
        mood=mood,
        related_dates=dates,
        sessions=meta["sessions"],
        generator=Generator(
            backend=str(gen["backend"]),
            model=str(gen["model"]),
            model_sha256=str(gen["model_sha256"]),
            prompt_version=int(gen["prompt_version"]),
            fallback_fields=tuple(gen["fallback_fields"] or ()),
        ),
        summary=summary,
        session_lines=tuple(lines),
        schema_version=meta["schema_version"],
    )


def _parse_body(body: list[str], day: dt.date) -> tuple[str, list[SessionLine]]:
    if (
        len(body) < 4
        or body[0] != f"# {day.isoformat()}"
        or not body[1].startswith(f"Parent Day: [[{day.isoformat()}]]")
    ):
        raise FrontmatterError("body must start with '# <date>' and 'Parent Day: [[<date>]]'")
    rest = body[3:]
    try:
        cut = rest.index("## Sessions")
    except ValueError:
        cut = len(rest)
    summary = "\n".join(rest[:cut]).strip()
    lines = []
    for line in rest[cut + 1 :]:
        if not line.strip():
            continue
        m = _SESSION_LINE.match(line)
        if not m:
            from transforms.redact import redact_reason  # on the error path only

            raise FrontmatterError(f"bad session line: {redact_reason(line, 80)!r}")
        lines.append(SessionLine(m["id"], m["start"] or "", m["end"] or "", int(m["n"]), m["topic"] or ""))
    return summary, lines
