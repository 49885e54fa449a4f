"""Gemini (Google Takeout): ``Takeout/My Activity/Gemini Apps/MyActivity.json``.

Takeout writes Gemini as *activity*, not as conversations: the file is one JSON list of
records, newest first, each ``{"header": "Gemini Apps", "title": "Prompted <the
prompt>", "time": "<ISO-8601>", "products": ["Gemini Apps"], "safeHtmlItem": [{"html":
"<Gemini's answer>"}], ...}`` (Takeout offers JSON or HTML; only JSON is read).

- A record is Gemini's when its ``header`` or one of its ``products`` names Gemini (or
  Bard, its old name), in any language (``Aplikasi Gemini``); a record with neither
  label is read too. Records of other products (a whole My Activity export holds Search
  and YouTube in the same shape) are counted in a note and skipped.
- The prompt is the ``title`` after its verb (``Prompted ``). A trailing ``Attached N
  file(s).`` is cut off and kept as an ``attachment`` message ``[N attached files]``. A
  title with another English verb (``Created``, ``Used``, ``Gave``, ``Selected``,
  ``Shared``, ``Deleted`` ...) is no prompt: counted in a note, skipped. A title with no
  English verb (an account in another language) is the prompt, whole, when Gemini
  answered it; else it is counted and skipped.
- The answer is ``safeHtmlItem[].html`` as text (paragraphs, line breaks and list items
  kept, tags dropped), one assistant message. A record without one is a prompt alone.
  Other fields (``subtitles``, ``details``, ``activityControls``) are no messages.
- Times: ``time`` through ``_json.lenient_timestamp``: one that cannot be read leaves
  its record undated, with a note, and the import dates it (``undated_days``).
- Conversations: records carry no conversation id, so prompts are put back into
  conversations in time order, a new one after ``GAP`` of silence. Its id is
  ``gemini-<first prompt's time, UTC>`` (``-2``, ``-3`` ... when one repeats), so a
  newer Takeout that holds the same prompts gives the same sessions and adds only what
  is new. Undated records are one conversation, ``gemini-undated-<hash>``, after the rest.

``ParseError`` when the file is not a JSON list (``bad_json``, with line and column, or
``bad_record``), or when no record is a Gemini prompt (``no_messages``).
"""

from __future__ import annotations

import datetime as dt
import re
from html.parser import HTMLParser

from transforms.errors import ParseError
from transforms.imports import _json
from transforms.imports.base import Conversation, Export, ImportedMessage

FORMAT = "gemini"

#: A new conversation starts after this long with no prompt.
GAP = dt.timedelta(minutes=30)

_LABEL_RE = re.compile(r"gemini|bard", re.IGNORECASE)
_PROMPT_VERBS = ("Prompted ",)
_OTHER_VERB_RE = re.compile(r"^(Created|Used|Gave|Selected|Shared|Deleted|Viewed|Visited|Searched|Edited|Pinned)\b")
_ATTACHED_RE = re.compile(r"\s*Attached (\d+) files?\.?\s*$")
_BLOCKS = frozenset({"p", "div", "br", "li", "ul", "ol", "pre", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "table"})


def sniff(data: bytes) -> bool:
    """A JSON list of activity records (``title`` and ``time``) of which one names Gemini or Bard (never raises)."""
    try:
        if b'"title"' not in data[: 1 << 20] or b'"time"' not in data[: 1 << 20]:
            return False
        top = _json.sniff_load(data)
        return (
            isinstance(top, list)
            and bool(top)
            and all(isinstance(r, dict) and "title" in r and "time" in r for r in top)
            and any(_labels(r) and _is_gemini(r) for r in top)
        )
    except Exception:  # noqa: BLE001 - a sniffer answers, it never fails
        return False


def parse(data: bytes, tz: dt.tzinfo, default_ts: dt.datetime | None = None) -> Export:
    """Every Gemini prompt with its answer, grouped into conversations; see the module docstring."""
    top = _json.load(data)
    if not isinstance(top, list):
        raise ParseError(f"top level is {_json.json_type(top)}, not a list of activity records", kind="bad_record")
    notes: list[str] = []
    skipped: dict[str, int] = {}
    prompts: list[tuple[dt.datetime | None, int, list[ImportedMessage]]] = []
    for i, rec in enumerate(top):
        why = _not_a_prompt(rec)
        if why is not None:
            skipped[why] = skipped.get(why, 0) + 1
            continue
        assert isinstance(rec, dict)
        ts = _json.lenient_timestamp(rec.get("time"), tz, f"item {i}", notes)
        prompts.append((ts, i, _messages(rec, ts)))
    if skipped:
        notes.append(
            f"skipped records that hold no Gemini prompt ({', '.join(f'{k}: {n}' for k, n in skipped.items())})"
        )
    if not prompts:
        raise ParseError(
            "no Gemini prompt found (is this Takeout's 'Gemini Apps' MyActivity.json?)", kind="no_messages"
        )
    dated = sorted((p for p in prompts if p[0] is not None), key=lambda p: (p[0], -p[1]))  # file order is newest first
    groups: list[list[tuple[dt.datetime | None, int, list[ImportedMessage]]]] = []
    for p in dated:
        if not groups or p[0] - groups[-1][-1][0] > GAP:  # type: ignore[operator]
            groups.append([])
        groups[-1].append(p)
    undated = [p for p in prompts if p[0] is None]
    if undated:
        groups.append(undated)
    conversations = []
    seen: dict[str, int] = {}
    for group in groups:
        first = group[0][0]
        base = (
            f"gemini-{first.astimezone(dt.UTC).strftime('%Y-%m-%dT%H:%M:%SZ')}"
            if first is not None
            else "gemini-undated-" + _json.content_hash([[m.content for m in p[2]] for p in group])
        )
        seen[base] = seen.get(base, 0) + 1
        cid = base if seen[base] == 1 else f"{base}-{seen[base]}"
        messages = tuple(m for p in group for m in p[2])
        conversations.append(Conversation(cid, None, messages, created=first))
    return Export(FORMAT, tuple(conversations), tuple(notes))


def _labels(rec: dict) -> list[str]:
    products = rec.get("products")
    labels = [rec.get("header"), *(products if isinstance(products, list) else ())]
    return [x for x in labels if isinstance(x, str) and x.strip()]


def _is_gemini(rec: dict) -> bool:
    labels = _labels(rec)
    return not labels or any(_LABEL_RE.search(x) for x in labels)


def _not_a_prompt(rec: object) -> str | None:
    """Why a record is no Gemini prompt (the note's key), or None when it is one."""
    if not isinstance(rec, dict):
        return "not an object"
    if not _is_gemini(rec):
        return "other products"
    title = rec.get("title")
    if not isinstance(title, str) or not title.strip():
        return "no title"
    text = title.strip()
    if text.startswith(_PROMPT_VERBS):
        return None
    if (verb := _OTHER_VERB_RE.match(text)) is not None:
        return verb[1]
    return None if _answer(rec) else "no prompt"


def _messages(rec: dict, ts: dt.datetime | None) -> list[ImportedMessage]:
    """The prompt, an attachment marker when the title names attached files, and Gemini's answer when there is one."""
    text = rec["title"].strip()
    for verb in _PROMPT_VERBS:
        text = text.removeprefix(verb)
    attached = _ATTACHED_RE.search(text)
    if attached is not None:
        text = text[: attached.start()]
    out = [ImportedMessage("user", text.strip() or _json.EMPTY, ts, kind="text" if text.strip() else "placeholder")]
    if attached is not None:
        n = int(attached[1])
        out.append(ImportedMessage("user", f"[{n} attached file{'s' if n != 1 else ''}]", ts, kind="attachment"))
    if answer := _answer(rec):
        out.append(ImportedMessage("assistant", answer, ts))
    return out


def _answer(rec: dict) -> str:
    """Gemini's answer, ``safeHtmlItem[].html`` as text; '' when the record holds none."""
    items = rec.get("safeHtmlItem")
    parts = [
        _html_text(item["html"])
        for item in (items if isinstance(items, list) else ())
        if isinstance(item, dict) and isinstance(item.get("html"), str)
    ]
    return "\n\n".join(p for p in parts if p)


class _Text(HTMLParser):
    """HTML's text: a block tag starts a new line, a list item reads ``- ``, character references decoded."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _BLOCKS:
            self.parts.append("\n- " if tag == "li" else "\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in _BLOCKS and tag != "li":  # list items follow one another line by line
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


def _html_text(html: str) -> str:
    parser = _Text()
    parser.feed(html)
    parser.close()
    lines = [line.rstrip() for line in "".join(parser.parts).split("\n")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
