"""Summaries to measure kenang's against: lead-3, longest-3, and the extractive summary kenang shipped before.

Evaluation only (``benchmarks/summary_quality.py``): nothing in kenang imports this.
``previous_extractive`` is the summary of kenang 0.1 up to issue 12, kept so the
benchmark can print "before" beside "after" on the same dialogues: a counts-and-topics
sentence, then the first quotable sentence of the user's opening message per session.
"""

from __future__ import annotations

import re
from datetime import datetime

from schemas.frontmatter import SUMMARY_MAX_CHARS, SUMMARY_SENTENCES
from transforms.extract import DayMessage, DayText, clean_sentence, extract_tags, extract_technologies, first_sentences

SPEAKER_TAG = re.compile(r"^#Person\d+#:\s*")


def lead_3(turns: list[str]) -> str:
    return " ".join(SPEAKER_TAG.sub("", t) for t in turns[:3])


def longest_3(turns: list[str]) -> str:
    return " ".join(sorted((SPEAKER_TAG.sub("", t) for t in turns), key=len, reverse=True)[:3])


def previous_extractive(day: DayText) -> str:
    """The extractive summary before issue 12 (its user is the user id, title-cased)."""
    who = day.user_id.title() if day.user_id != "default" else "The user"
    unflagged = [m for m in day.messages if not m.flagged]
    sessions: dict[str, list[DayMessage]] = {}
    for m in unflagged:
        sessions.setdefault(m.session_id, []).append(m)
    far = datetime.max.replace(tzinfo=None)

    def start(sid: str) -> datetime:
        ts = next((m.ts for m in sessions[sid] if m.ts is not None), None)
        return far if ts is None else ts.astimezone(day.tz).replace(tzinfo=None)

    topics = list(extract_technologies(day)[:3]) or list(extract_tags(day)[:3])
    n_s, n_m = len(sessions), len(unflagged)
    head = f"{who} had {n_s} session{'s' * (n_s != 1)} with {n_m} message{'s' * (n_m != 1)}"
    head += (
        ", mostly about " + (topics[0] if len(topics) == 1 else ", ".join(topics[:-1]) + " and " + topics[-1]) + "."
        if topics
        else "."
    )
    lines = []
    for sid in sorted(sessions, key=start)[:4]:
        quote = next(
            (
                c
                for m in sessions[sid]
                if m.role == "user"
                for s in first_sentences(m.content, 8)
                if (c := clean_sentence(s))
            ),
            None,
        )
        if quote:
            verb = "asked" if quote.endswith("?") else "wrote"
            ts = start(sid)
            lines.append(
                f"At {ts:%H:%M} {who.lower() if who == 'The user' else who} {verb}: {quote}"
                if ts != far
                else f"{who} {verb}: {quote}"
            )
    parts = [head, *lines][: SUMMARY_SENTENCES[1]]
    if len(parts) < SUMMARY_SENTENCES[0]:
        tags = list(extract_tags(day))
        parts.append(f"Keywords: {', '.join(tags)}." if tags else "No user message had a sentence worth quoting.")
    while len(" ".join(parts)) > SUMMARY_MAX_CHARS and len(parts) > 2:
        parts.pop()
    return " ".join(parts)
