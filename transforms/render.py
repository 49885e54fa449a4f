"""Render a ``Session`` back into the two transcript formats kenang reads.

``render_markdown`` writes the format an agent's ``session_write`` tool writes: an
optional YAML frontmatter with the non-``None`` ids and the ``people`` list, an optional ``Parent Day:``
preamble (a link to the day's note, by its path in the vault: ``transforms.vault``), then one ``## <role> · <iso time>`` header per message followed by its
content and a blank line. ``render_jsonl`` writes one JSON object per message, with
``session_id``/``user_id``/``agent``/``people`` on the first line only.

Round-trip contract: ``parse_transcript(name, render_X(s).encode(), tz=any)`` equals
``s`` whenever ``s`` is what a parser could have produced, that is:

- ``source_format`` names the format rendered (``markdown`` or ``jsonl``);
- at least one message, ``seq`` gap-free ``0..n-1`` in order;
- every ``ts`` is aware or ``None`` (it comes back with a fixed offset, which compares
  equal: aware datetimes compare by instant);
- ``session_id`` is ``None`` or a stripped single line of 1..200 characters without
  ``/`` or ``\\`` and not ``.``/``..``; ``user_id`` is ``None`` or matches
  ``USER_ID_RE``; ``agent`` is ``None`` or a non-empty stripped string;
- each of ``people`` is non-empty with its whitespace collapsed (``" ".join(name.split())``),
  and no name repeats another in any case;
- ``role`` is stripped, lower-case and not an alias (``human``, ``ai``, ``model``,
  ``bot``); in markdown it must also be one of ``KNOWN_ROLES``;
- all strings are valid Unicode (no lone surrogates).

Markdown adds, per message content:

- no carriage return (``\\r``) anywhere, since CRLF is read as a line ending;
- no leading or trailing blank line (empty, or whitespace by ``str.isspace``);
- no line outside a code fence that reads as a turn header: ``##``, spaces, a known
  role or alias in any case, then the end of the line or `` · ``/`` - ``/`` | `` and a
  digit. ``## Plan``, `` ## user`` (indented) and ``### user`` are fine;
- no code fence left open at its end, or it would swallow the next headers.
"""

from __future__ import annotations

import json
from datetime import date

import yaml

from transforms import vault
from transforms.model import Session

_FRONTMATTER_KEYS = ("session_id", "user_id", "agent")


def render_markdown(
    session: Session, *, parent_day: date | None = None, folder: str = "", title: str | None = None
) -> str:
    """The session as ``session_write`` markdown; see the module docstring for the contract.

    ``title`` goes into the frontmatter too (parsers keep only the three ids; the
    archived file keeps the title for people who read it). ``folder`` is the user's
    folder in the vault's day folders (``vault.user_folder``), for the parent day's link.
    """
    parts: list[str] = []
    fields = [(k, getattr(session, k)) for k in _FRONTMATTER_KEYS if getattr(session, k) is not None]
    if title:
        fields.append(("title", title))
    if fields or session.people:
        body = "".join(f"{k}: {_yaml_scalar(v)}\n" for k, v in fields)
        if session.people:
            body += "people:\n" + "".join(f"  - {_yaml_scalar(p)}\n" for p in session.people)
        parts.append(f"---\n{body}---\n")
    if parent_day is not None:
        note = vault.link(vault.summary_path(parent_day, folder), parent_day.isoformat())
        parts.append(f"Parent Day: {note or parent_day.isoformat()}\n\n")
    for m in session.messages:
        header = f"## {m.role}" if m.ts is None else f"## {m.role} · {m.ts.isoformat()}"
        parts.append(f"{header}\n{m.content}\n\n" if m.content else f"{header}\n\n")
    return "".join(parts)


def _yaml_scalar(value: str) -> str:
    """``value`` as a YAML scalar that loads back as exactly this string."""
    try:
        if yaml.safe_load(f"k: {value}") == {"k": value}:
            return value
    except yaml.YAMLError:
        pass
    # Double quotes escape newlines and keep "2026-07-19" or "007" from becoming a date or int.
    return yaml.safe_dump(value, default_style='"', allow_unicode=True, width=2**31 - 1).rstrip("\n")


def render_jsonl(session: Session) -> str:
    """The session as JSONL, one object per message; see the module docstring for the contract."""
    lines: list[str] = []
    for i, m in enumerate(session.messages):
        record: dict[str, object] = {}
        if i == 0:
            record.update({k: getattr(session, k) for k in _FRONTMATTER_KEYS if getattr(session, k) is not None})
            if session.people:
                record["people"] = list(session.people)
        record["role"] = m.role
        record["content"] = m.content
        record["timestamp"] = None if m.ts is None else m.ts.isoformat()
        lines.append(json.dumps(record, ensure_ascii=False) + "\n")
    return "".join(lines)
