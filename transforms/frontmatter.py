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
    HEADINGS,
    IMPORTANCE_MAX,
    IMPORTANCE_MIN,
    ITEM_BOUNDS,
    LANGUAGES,
    LIST_BOUNDS,
    MOODS,
    READABLE_SCHEMA_VERSIONS,
    SCHEMA_VERSION,
    SUMMARY_MAX_CHARS,
    SUMMARY_PARAGRAPHS,
    SUMMARY_SENTENCES,
    TITLE_MAX_CHARS,
)
from schemas.lexicon import is_placeholder
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
class CarriedItem:
    """An open item raised on an earlier day: under "Still open" while open, under "Closed" the day it closes."""

    raised_on: dt.date
    text: str


@dataclass(frozen=True)
class DaySummary:
    """One day's note. ``summary`` is the "What happened" section: one paragraph per thread,
    paragraphs separated by a blank line. ``decisions`` and ``open_items`` are the day's own;
    ``still_open`` and ``closed`` are carried from earlier days' open items."""

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
    title: str = ""
    language: str = "en"
    decisions: tuple[str, ...] = ()
    open_items: tuple[str, ...] = ()
    still_open: tuple[CarriedItem, ...] = ()
    closed: tuple[CarriedItem, ...] = ()

    def record(self) -> dict:
        """The frontmatter fields (but the generator) and the summary text as plain values."""
        return {
            "schema_version": self.schema_version,
            "date": self.date,
            "user_id": self.user_id,
            "title": self.title,
            "language": self.language,
            "people": list(self.people),
            "projects": list(self.projects),
            "tags": list(self.tags),
            "technologies": list(self.technologies),
            "importance": self.importance,
            "mood": self.mood,
            "related_dates": list(self.related_dates),
            "sessions": self.sessions,
            "summary": self.summary,
            "decisions": list(self.decisions),
            "open_items": list(self.open_items),
        }


# --- normalisers (each returns a bounded value) ----------------------------------------


def clean_text(value: object) -> str | None:
    """One line of text, stripped and whitespace-collapsed; None if empty or not text."""
    if not isinstance(value, str):
        return None
    text = _SPACE.sub(" ", value).strip()
    return text or None


def normalise_list(name: str, items: Iterable[object], canonical: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """A bounded, deduplicated list for a frontmatter list field (not related_dates); placeholders left out."""
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
        if not item or len(item) > longest or item.lower() in seen or is_placeholder(raw) or is_placeholder(item):
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
    """The "What happened" text: paragraphs (split at blank lines) of whole sentences, no loops.

    Within ``SUMMARY_SENTENCES`` sentences, ``SUMMARY_MAX_CHARS`` characters and
    ``SUMMARY_PARAGRAPHS`` paragraphs in all (later sentences are dropped to fit, never
    cut); None when that cannot be had. A repeated sentence keeps its first copy.
    """
    if not isinstance(value, str):
        return None
    text = value.replace("\r", " ")
    if _CONTROL.search(text.replace("\n", " ")):
        return None
    paragraphs = [_SPACE.sub(" ", p).strip() for p in re.split(r"\n[ \t]*\n", text.strip())]
    paragraphs = [p for p in paragraphs if p][:SUMMARY_PARAGRAPHS]
    if not paragraphs or looks_like_a_loop(" ".join(paragraphs)):
        return None
    low, high = SUMMARY_SENTENCES
    kept: list[list[str]] = []
    seen: set[str] = set()
    count, size = 0, 0
    for paragraph in paragraphs:
        found: list[str] = []
        for s in sentences(paragraph):
            key = re.sub(r"\W+", " ", s.lower()).strip()
            if key in seen:
                continue  # a repeated sentence is a loop symptom; keep its first copy
            extra = len(s) + (1 if found else 2 if kept else 0)
            if count == high or size + extra > SUMMARY_MAX_CHARS:
                break
            seen.add(key)
            found.append(s)
            count += 1
            size += extra
        if found:
            kept.append(found)
    if count < low:
        return None
    out = "\n\n".join(" ".join(p) for p in kept)
    return out if all(p[-1][-1] in ".!?…" for p in kept) else None


def normalise_title(value: object) -> str | None:
    """One line of at most ``TITLE_MAX_CHARS`` characters, no trailing full stop; None if empty."""
    text = clean_text(value)
    if text is None or _CONTROL.search(text):
        return None
    text = text.rstrip(" .")
    if len(text) > TITLE_MAX_CHARS:
        cut = text[: TITLE_MAX_CHARS - 1].rsplit(" ", 1)[0].rstrip(" ,;:-")
        text = (cut or text[: TITLE_MAX_CHARS - 1]) + "…"
    return text or None


def normalise_items(name: str, items: Iterable[object]) -> tuple[str, ...]:
    """A bounded, deduplicated list of one-line items for a body section (decisions, open items)."""
    most, longest = ITEM_BOUNDS[name]
    out: list[str] = []
    seen: set[str] = set()
    for raw in items:
        item = clean_text(raw)
        if item is None or _CONTROL.search(item) or len(item) > longest or item.lower() in seen:
            continue
        seen.add(item.lower())
        out.append(item)
        if len(out) == most:
            break
    return tuple(out)


def normalise_carried(name: str, items: Iterable[CarriedItem]) -> tuple[CarriedItem, ...]:
    """``still_open`` or ``closed``: bounded items, oldest first, each text once."""
    most, longest = ITEM_BOUNDS[name]
    out: list[CarriedItem] = []
    seen: set[str] = set()
    for it in sorted(items, key=lambda i: (i.raised_on, i.text)):
        text = clean_text(it.text)
        if text is None or _CONTROL.search(text) or len(text) > longest or text.lower() in seen:
            continue
        seen.add(text.lower())
        out.append(CarriedItem(it.raised_on, text))
        if len(out) == most:
            break
    return tuple(out)


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


def day_link(doc: DaySummary, day: dt.date) -> str:
    """A wiki link to ``day``'s note of ``doc``'s user."""
    return f"[[{day.isoformat()}]]"


def session_link(doc: DaySummary, session_id: str) -> str:
    """A wiki link to one of the day's sessions."""
    return f"[[{session_id}]]"


#: "(raised [[2026-07-15]])" after a carried item, per language.
_RAISED = {"en": "raised", "id": "sejak"}
_RELATED = {"en": "Related", "id": "Terkait"}
_PEOPLE_LABELS = {"en": ("People", "Projects"), "id": ("Orang", "Proyek")}


def render_summary(doc: DaySummary) -> str:
    """The Markdown file, frontmatter first; the same doc always renders the same bytes.

    The body: ``# <date> · <title>``, a line of related days, then the sections in
    ``HEADINGS`` order, in the note's language; an empty section is left out.
    """
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
    heads = HEADINGS[doc.language]
    lines.append(f"# {day} · {doc.title}")
    if doc.related_dates:
        lines.append(f"{_RELATED[doc.language]}: " + " · ".join(day_link(doc, d) for d in doc.related_dates))
    lines += ["", f"## {heads['summary']}", doc.summary]
    for name in ("decisions", "open_items"):
        if getattr(doc, name):
            lines += ["", f"## {heads[name]}", *(f"- {item}" for item in getattr(doc, name))]
    for name in ("still_open", "closed"):
        if getattr(doc, name):
            raised = _RAISED[doc.language]
            items = (f"- {it.text} ({raised} {day_link(doc, it.raised_on)})" for it in getattr(doc, name))
            lines += ["", f"## {heads[name]}", *items]
    people_label, projects_label = _PEOPLE_LABELS[doc.language]
    who = [
        f"- {label}: {', '.join(v)}" for label, v in ((people_label, doc.people), (projects_label, doc.projects)) if v
    ]
    if who:
        lines += ["", f"## {heads['people']}", *who]
    if doc.session_lines:
        lines += ["", f"## {heads['sessions']}"]
        for s in doc.session_lines:
            span = f"{s.start}–{s.end}" if s.start else "time unknown"
            topic = f" · {s.topic}" if s.topic else ""
            n = f"{s.messages} message{'s' if s.messages != 1 else ''}"
            lines.append(f"- {session_link(doc, s.session_id)} {span} · {n}{topic}")
    return "\n".join(lines) + "\n"


_LINK = r"\[\[(?P<target>[^\]|\n]+)(?:\|(?P<alias>[^\]\n]+))?\]\]"
_SESSION_LINE = re.compile(
    rf"^- {_LINK} (?:(?P<start>\d\d:\d\d)–(?P<end>\d\d:\d\d)|time unknown) · (?P<n>\d+) messages?(?: · (?P<topic>.*))?$"
)
_CARRIED = re.compile(rf"^- (?P<text>.+) \((?P<word>raised|sejak) {_LINK}\)$")
_DATE_IN_LINK = re.compile(r"(\d{4}-\d\d-\d\d)(?:\.summary)?$")


def parse_summary(text: str, *, today: dt.date | None = None) -> DaySummary:
    """Read a summary file back, checking every field; FrontmatterError says what is wrong.

    Reads every version in ``READABLE_SCHEMA_VERSIONS``: a version-1 file (one summary
    paragraph, no title, language or sections) reads with an empty title, ``en`` and no
    items.
    """
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
    version = meta.get("schema_version")
    if isinstance(version, bool) or version not in READABLE_SCHEMA_VERSIONS:
        raise FrontmatterError(f"schema_version must be one of {list(READABLE_SCHEMA_VERSIONS)}, not {version!r}")
    fields = FIELDS if version == SCHEMA_VERSION else tuple(k for k in FIELDS if k not in ("title", "language"))
    missing = [k for k in fields if k not in meta]
    extra = sorted(set(meta) - set(fields))
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
    if not isinstance(meta["sessions"], int) or isinstance(meta["sessions"], bool):
        raise FrontmatterError("sessions must be an integer")
    title, language = "", "en"
    if version == SCHEMA_VERSION:
        title = meta["title"]
        if not isinstance(title, str) or normalise_title(title) != title:
            raise FrontmatterError(f"title must be one line of at most {TITLE_MAX_CHARS} characters")
        language = meta["language"]
        if language not in LANGUAGES:
            raise FrontmatterError(f"language must be one of {', '.join(LANGUAGES)}")
    body = text[end + len("\n---\n") :].split("\n")
    if version == SCHEMA_VERSION:
        sections = _parse_sections(body, day, title, language)
    else:
        summary_v1, lines_v1 = _parse_body_v1(body, day)
        sections = {"summary": summary_v1, "sessions": lines_v1}
    summary = sections.get("summary")
    if not isinstance(summary, str) or normalise_summary(summary) != summary:
        raise FrontmatterError(
            f"what happened must be {SUMMARY_SENTENCES[0]}-{SUMMARY_SENTENCES[1]} sentences in at most "
            f"{SUMMARY_PARAGRAPHS} paragraphs and {SUMMARY_MAX_CHARS} characters"
        )
    decisions = tuple(sections.get("decisions", ()))
    open_items = tuple(sections.get("open_items", ()))
    still_open = tuple(sections.get("still_open", ()))
    closed = tuple(sections.get("closed", ()))
    if normalise_items("decisions", decisions) != decisions or normalise_items("open_items", open_items) != open_items:
        raise FrontmatterError("decisions and open items must be distinct one-line items within their bounds")
    if normalise_carried("still_open", still_open) != still_open or normalise_carried("closed", closed) != closed:
        raise FrontmatterError("carried items must be distinct one-line items within their bounds, oldest first")
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
        session_lines=tuple(sections.get("sessions", ())),
        schema_version=version,
        title=title,
        language=language,
        decisions=decisions,
        open_items=open_items,
        still_open=still_open,
        closed=closed,
    )


def _session_line(line: str) -> SessionLine:
    m = _SESSION_LINE.match(line)
    if not m:
        from transforms.redact import redact_reason  # on the error path only

        raise FrontmatterError(f"bad session line: {redact_reason(line, 80)!r}")
    sid = m["alias"] or m["target"]
    return SessionLine(sid, m["start"] or "", m["end"] or "", int(m["n"]), m["topic"] or "")


def _carried(line: str, language: str) -> CarriedItem:
    m = _CARRIED.match(line)
    date = _DATE_IN_LINK.search(m["target"]) if m else None
    if not m or not date or m["word"] != _RAISED[language]:
        raise FrontmatterError("a carried item must read '- <text> (raised <link to its day>)'")
    try:
        return CarriedItem(dt.date.fromisoformat(date.group(1)), m["text"])
    except ValueError as exc:
        raise FrontmatterError(f"a carried item's day is not a date: {exc}") from exc


def _parse_sections(body: list[str], day: dt.date, title: str, language: str) -> dict:
    """The version-2 body: the heading line, the related line, then ``## `` sections."""
    if not body or body[0] != f"# {day.isoformat()} · {title}":
        raise FrontmatterError("body must start with '# <date> · <title>'")
    names = {heading: name for name, heading in HEADINGS[language].items()}
    out: dict = {}
    current: str | None = None
    lines: list[str] = []

    def close() -> None:
        if current is None:
            return
        if current in out:
            raise FrontmatterError(f"section {HEADINGS[language][current]!r} appears twice")
        content = [ln for ln in lines]
        while content and not content[-1].strip():
            content.pop()
        if current == "summary":
            out[current] = "\n".join(content).strip()
            return
        items = [ln for ln in content if ln.strip()]
        if current == "sessions":
            out[current] = [_session_line(ln) for ln in items]
        elif current in ("still_open", "closed"):
            out[current] = [_carried(ln, language) for ln in items]
        elif current == "people":
            out[current] = items  # derived from the frontmatter: checked by the read-back, not kept
        else:
            if any(not ln.startswith("- ") for ln in items):
                raise FrontmatterError(f"section {HEADINGS[language][current]!r} must be a list of '- ' items")
            out[current] = [ln[2:] for ln in items]

    for line in body[1:]:
        if line.startswith("## "):
            close()
            current = names.get(line[3:])
            if current is None:
                raise FrontmatterError(f"unknown section {line[3:]!r}")
            lines = []
        elif current is None:
            continue  # the related line and blank lines before the first section
        else:
            lines.append(line)
    close()
    return out


def _parse_body_v1(body: list[str], day: dt.date) -> tuple[str, list[SessionLine]]:
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
    summary = " ".join(ln.strip() for ln in rest[:cut] if ln.strip())
    return summary, [_session_line(ln) for ln in rest[cut + 1 :] if ln.strip()]
