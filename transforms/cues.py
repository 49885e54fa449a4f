"""Cue phrases: what a sentence does for the day's note, in Indonesian and English.

A sentence may record a **decision** ("jadi kita pakai ZFS", "let's go with restic"),
raise an **open** item (a promise, a TODO, a question or an error still standing:
"nanti saya cek", "belum jalan", "still failing", "we'll look at it tomorrow"), or
report something **done** ("sudah beres", "works now", "fixed"), which may close an
item raised on an earlier day (``closes``).

The API (the note writer and the open-items chain build on it):

- ``cues_of(sentence)``: the kinds of cue a sentence carries, a subset of ``KINDS``;
- ``as_third_person(sentence, speaker, lang)``: first-person pronouns resolved to the
  speaker ("I'll check the snapshots" said by Dimas: "Dimas will check the snapshots");
- ``closes(item, sentence)``: whether a later sentence closes an open item (its
  content words, stemmed, in either language, and a done cue).

Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Literal

Kind = Literal["decision", "open", "done"]
KINDS: tuple[Kind, ...] = ("decision", "open", "done")

_DECISION = re.compile(
    r"(?i)(?<!\w)(?:sudah diputuskan|diputuskan|jadi kita pakai|kita pakai|sepakat|memutuskan|"
    r"decided|we'll go with|let's go with|let's use|we chose)(?!\w)"
)
_OPEN = re.compile(r"(?i)(?<!\w)(?:nanti saya|nanti aku|belum|todo|we'll|i'll|still failing|masih gagal)(?!\w)")
_DONE = re.compile(r"(?i)(?<!\w)(?:sudah beres|beres|berhasil|works now|fixed|solved|resolved|done)(?!\w)")


def cues_of(sentence: str) -> frozenset[Kind]:
    """The kinds of cue ``sentence`` carries (a first version: the lead's stub, to be replaced)."""
    out: set[Kind] = set()
    if _DECISION.search(sentence):
        out.add("decision")
    if _OPEN.search(sentence):
        out.add("open")
    if _DONE.search(sentence):
        out.add("done")
    return frozenset(out)


def as_third_person(sentence: str, speaker: str, lang: str) -> str:
    """``sentence`` with the speaker's first-person pronouns replaced by ``speaker`` (stub: unchanged)."""
    return sentence


def closes(item: str, sentence: str) -> bool:
    """Whether ``sentence`` (said on a later day) closes the open ``item`` (stub: never)."""
    return False
