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
- ``related_dates`` are real dates, never the day itself, never after ``today``;
- no text holds ``[[`` or ``]]`` (``unlinked``): the note's only links are its own.

Links: every ``[[...]]`` the note holds is a path from the vault's root with a short
alias (``transforms.vault``), written from ``DaySummary.folder``: up to the user's
MEMORY_INDEX, to the related days that have a note (``related_notes``), to the day a
carried item was raised, and to each session's archived file (``SessionLine.file``).
``parse_summary`` reads each of these lines back and refuses one kenang would not write.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache

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
from transforms import vault, yamls

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
    file: str = ""  # the archived transcript's name in the day folder; "" when unknown (no link)


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
    #: Where the user's notes live in the vault: "" for the default user, else the user's
    #: folder inside each day folder (``transforms.vault.user_folder``). Links are written by it.
    folder: str = ""
    #: The related dates that have a note of their own: linked; the others are written as plain dates.
    related_notes: tuple[dt.date, ...] = ()

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
    """One line of text, stripped, whitespace-collapsed and ``unlinked``; None if empty or not text."""
    if not isinstance(value, str):
        return None
    text = unlinked(_SPACE.sub(" ", value).strip())
    return text or None


def unlinked(text: str) -> str:
    """``text`` with no wiki link in it: ``[[`` and ``]]`` become single brackets.

    A note's links are kenang's own, each resolving in the vault (``transforms.vault``);
    a ``[[...]]`` quoted from a transcript would point nowhere.
    """
    while "[[" in text or "]]" in text:
        text = text.replace("[[", "[").replace("]]", "]")
    return text


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
    text = unlinked(value.replace("\r", " "))
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
    cleaned = [(it.raised_on, text) for it in items if (text := clean_text(it.text)) is not None]
    # Sorted by the cleaned text, as a parse of the rendered note sorts it: the order survives a round trip.
    for raised_on, text in sorted(cleaned):
        if _CONTROL.search(text) or len(text) > longest or text.lower() in seen:
            continue
        seen.add(text.lower())
        out.append(CarriedItem(raised_on, text))
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
    if value is None or type(value) in _PLAIN:  # a container may hold 1 and True alike: never cached
        return _cached_scalar_yaml(value)
    return _scalar_text(value)


_PLAIN = (str, int, bool, float, dt.date)


@lru_cache(maxsize=1 << 14, typed=True)
def _cached_scalar_yaml(value: object) -> str:
    """Cached: the notes of a run share most of their values (tags, dates, the generator), and PyYAML's dumper is
    most of what rendering a note costs."""
    return _scalar_text(value)


def _scalar_text(value: object) -> str:
    text = _flow(value)
    return text[: -len("\n...")] if text.endswith("\n...") else text.removesuffix(" ...").strip()


def _yaml_entry(key: str, value: object, indent: str = "") -> list[str]:
    """One frontmatter key as Obsidian writes properties: a list as a block list, a mapping as a block."""
    if isinstance(value, dict):
        return [f"{indent}{key}:", *(ln for k, v in value.items() for ln in _yaml_entry(k, v, indent + "  "))]
    if isinstance(value, list) and value:
        return [f"{indent}{key}:", *(f"{indent}  - {_scalar_yaml(v)}" for v in value)]
    return [f"{indent}{key}: {_scalar_yaml(value)}"]


def day_link(folder: str, day: dt.date) -> str:
    """A wiki link to ``day``'s note of the user whose notes live in ``folder``: its path, the date as alias."""
    found = vault.link(vault.summary_path(day, folder), day.isoformat())
    if found is None:  # a user id is never unlinkable (USER_ID_RE); a folder that is gives the plain date
        return day.isoformat()
    return found


def session_link(day: dt.date, folder: str, s: SessionLine) -> str:
    """A wiki link to a session's archived transcript, the session id as alias; the bare id when it has none."""
    found = vault.link(f"{vault.day_folder(day, folder)}/{s.file}", s.session_id) if _linked(s.file) else None
    return found or s.session_id


def _linked(file: str) -> bool:
    """Whether a session's file gets a link that reads back as the same name: a .jsonl, or a .md not named *.jsonl.md."""
    if "/" in file or not vault.linkable(file):
        return False
    if file.endswith(".jsonl"):
        return len(file) > len(".jsonl")
    return file.endswith(".md") and len(file) > len(".md") and not file.removesuffix(".md").endswith(".jsonl")


def session_file(name: str) -> str:
    """The archived file name a ``SessionLine`` keeps: ``name`` when a link can name it, else "" (no link)."""
    return name if _linked(name) else ""


#: "(raised [[<path>|2026-07-15]])" after a carried item, per language.
_RAISED = {"en": "raised", "id": "sejak"}
_RELATED = {"en": "Related", "id": "Terkait"}
_INDEX_LABEL = {"en": "Memory index", "id": "Indeks memori"}
_PEOPLE_LABELS = {"en": ("People", "Projects"), "id": ("Orang", "Proyek")}
_TIME_UNKNOWN = {"en": "time unknown", "id": "waktu tidak diketahui"}


def _messages(n: int, language: str) -> str:
    return f"{n} pesan" if language == "id" else f"{n} message{'s' if n != 1 else ''}"


def _nav_line(folder: str, language: str, related: tuple[dt.date, ...], noted: tuple[dt.date, ...]) -> str:
    """The line under the heading: a link up to the user's MEMORY_INDEX, then the related days (linked if noted)."""
    index = vault.link(vault.index_of_folder(folder), _INDEX_LABEL[language])
    parts = [index or _INDEX_LABEL[language]]
    if related:
        days = (day_link(folder, d) if d in noted else d.isoformat() for d in related)
        parts.append(f"{_RELATED[language]}: " + ", ".join(days))
    return " · ".join(parts)


def _session_text(day: dt.date, folder: str, language: str, s: SessionLine) -> str:
    span = f"{s.start}–{s.end}" if s.start else _TIME_UNKNOWN[language]
    topic = f" · {s.topic}" if s.topic else ""
    return f"- {session_link(day, folder, s)} {span} · {_messages(s.messages, language)}{topic}"


def _carried_text(folder: str, language: str, it: CarriedItem) -> str:
    return f"- {it.text} ({_RAISED[language]} {day_link(folder, it.raised_on)})"


def render_summary(doc: DaySummary) -> str:
    """The Markdown file, frontmatter first; the same doc always renders the same bytes.

    The frontmatter is written the way Obsidian writes properties (lists as block lists),
    so the vault shows every field. The body: ``# <date> · <title>``, a line linking up to
    the user's MEMORY_INDEX and to the related days that have a note, then the sections
    in ``HEADINGS`` order, in the note's language; an empty section is left out. Every
    link is a path from the vault's root (``transforms.vault``).
    """
    before, after = render_parts(doc)
    return before + carried_sections(doc.folder, doc.language, doc.still_open, doc.closed) + after


def render_parts(doc: DaySummary) -> tuple[str, str]:
    """``render_summary(doc)`` cut where the carried sections go, less them: (before, after).

    So a note's carried sections can be put in without rendering the rest again (``carried_sections``).
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
    lines = ["---", *(ln for k in FIELDS for ln in _yaml_entry(k, values[k])), "---"]
    day = doc.date.isoformat()
    heads = HEADINGS[doc.language]
    lines += [f"# {day} · {doc.title}", _nav_line(doc.folder, doc.language, doc.related_dates, doc.related_notes)]
    lines += ["", f"## {heads['summary']}", doc.summary]
    for name in ("decisions", "open_items"):
        if getattr(doc, name):
            lines += ["", f"## {heads[name]}", *(f"- {item}" for item in getattr(doc, name))]
    people_label, projects_label = _PEOPLE_LABELS[doc.language]
    who = [
        f"- {label}: {', '.join(v)}" for label, v in ((people_label, doc.people), (projects_label, doc.projects)) if v
    ]
    tail: list[str] = []
    if who:
        tail += ["", f"## {heads['people']}", *who]
    if doc.session_lines:
        tail += ["", f"## {heads['sessions']}"]
        tail += [_session_text(doc.date, doc.folder, doc.language, s) for s in doc.session_lines]
    return "\n".join(lines), "".join(f"\n{ln}" for ln in tail) + "\n"


def carried_sections(
    folder: str, language: str, still_open: tuple[CarriedItem, ...], closed: tuple[CarriedItem, ...]
) -> str:
    """The "Still open" and "Closed" sections as ``render_summary`` writes them between ``render_parts``' two."""
    heads = HEADINGS[language]
    lines: list[str] = []
    for name, carried in (("still_open", still_open), ("closed", closed)):
        if carried:
            lines += ["", f"## {heads[name]}", *(_carried_text(folder, language, it) for it in carried)]
    return "".join(f"\n{ln}" for ln in lines)


_LINK = r"\[\[(?P<target>[^\]|\n]+)(?:\|(?P<alias>[^\]\n]+))?\]\]"
_SESSION_LINE = re.compile(
    rf"^- {_LINK} (?:(?P<start>\d\d:\d\d)–(?P<end>\d\d:\d\d)|time unknown) · (?P<n>\d+) messages?(?: · (?P<topic>.*))?$"
)
_CARRIED = re.compile(rf"^- (?P<text>.+) \((?P<word>raised|sejak) {_LINK}\)$")
_DATE_IN_LINK = re.compile(r"(\d{4}-\d\d-\d\d)(?:\.summary)?$")
_SESSION_LINE_V2 = re.compile(
    rf"^- (?:{_LINK}|(?P<plain>.+?)) (?:(?P<start>\d\d:\d\d)–(?P<end>\d\d:\d\d)|time unknown|waktu tidak diketahui)"
    r" · (?P<n>\d+) (?:messages?|pesan)(?: · (?P<topic>.*))?$"
)
_INDEX_LINK = re.compile(r"^\[\[(?P<target>[^\]|\n]+)\|[^\]\n]+\]\]")
_ALIASES = re.compile(_LINK)


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
        sections = _parse_sections(body, day, title, language, str(meta["user_id"]), dates)
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
        folder=sections.get("folder", ""),
        related_notes=tuple(sections.get("related_notes", ())),
    )


def _bad_line(what: str, line: str) -> FrontmatterError:
    from transforms.redact import redact_reason  # on the error path only

    return FrontmatterError(f"bad {what}: {redact_reason(line, 80)!r}")


def _session_line_v2(line: str, day: dt.date, folder: str, language: str) -> SessionLine:
    """A version-2 session line: its link names the archived file; it must read as kenang writes it."""
    m = _SESSION_LINE_V2.match(line)
    if not m:
        raise _bad_line("session line", line)
    file = ""
    if m["target"] is not None:
        base = vault.day_folder(day, folder) + "/"
        if not m["target"].startswith(base):
            raise _bad_line("session link (not a file of the day's folder)", line)
        file = m["target"][len(base) :]
        file = file if file.endswith(".jsonl") else file + ".md"
    sid = m["plain"] if m["target"] is None else (m["alias"] or m["target"])
    found = SessionLine(sid, m["start"] or "", m["end"] or "", int(m["n"]), m["topic"] or "", file)
    if _session_text(day, folder, language, found) != line:
        raise _bad_line("session line", line)
    return found


def _carried_v2(line: str, folder: str, language: str) -> CarriedItem:
    found = _carried(line, language)
    if _carried_text(folder, language, found) != line:
        raise FrontmatterError("a carried item must read '- <text> (raised <link to its day's note>)'")
    return found


def _nav(line: str, user_id: str, language: str, related: tuple[dt.date, ...]) -> tuple[str, tuple[dt.date, ...]]:
    """The line under the heading read back: the notes' folder (from the index link) and the related days linked."""
    m = _INDEX_LINK.match(line)
    folder = vault.folder_of_index(m["target"] + ".md") if m else None
    if folder is None or folder not in ("", user_id):
        raise FrontmatterError("the line under the heading must start with a link to the user's MEMORY_INDEX")
    linked = {a["alias"] for a in _ALIASES.finditer(line) if a["alias"]}
    noted = tuple(d for d in related if d.isoformat() in linked)
    if _nav_line(folder, language, related, noted) != line:
        raise FrontmatterError("the line under the heading must read '<index link> · <related>: <days>'")
    return folder, noted


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


def _parse_sections(
    body: list[str], day: dt.date, title: str, language: str, user_id: str, related: tuple[dt.date, ...]
) -> dict:
    """The version-2 body: the heading line, the index and related line, then ``## `` sections."""
    if not body or body[0] != f"# {day.isoformat()} · {title}":
        raise FrontmatterError("body must start with '# <date> · <title>'")
    if len(body) < 2:
        raise FrontmatterError("the heading must be followed by the line linking the user's MEMORY_INDEX")
    folder, noted = _nav(body[1], user_id, language, related)
    names = {heading: name for name, heading in HEADINGS[language].items()}
    out: dict = {"folder": folder, "related_notes": noted}
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
            out[current] = [_session_line_v2(ln, day, folder, language) for ln in items]
        elif current in ("still_open", "closed"):
            out[current] = [_carried_v2(ln, folder, language) for ln in items]
        elif current == "people":
            out[current] = items  # derived from the frontmatter: checked by the read-back, not kept
        else:
            if any(not ln.startswith("- ") for ln in items):
                raise FrontmatterError(f"section {HEADINGS[language][current]!r} must be a list of '- ' items")
            out[current] = [ln[2:] for ln in items]

    for line in body[2:]:
        if line.startswith("## "):
            close()
            current = names.get(line[3:])
            if current is None:
                raise FrontmatterError(f"unknown section {line[3:]!r}")
            lines = []
        elif current is None:
            if line.strip():
                raise FrontmatterError("text before the first section: every line must belong to a '## ' section")
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
