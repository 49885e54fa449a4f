"""Content-hash ids, so that rerunning anything is a no-op.

An id is the sha256 of a canonical encoding of the fields that make the thing what it
is, never of where or when kenang saw it. ``message_id`` deliberately leaves out
``seq``: the n-th identical (role, ts, content) in a session is told apart by its
occurrence number instead, so a newer copy of a transcript with messages inserted
earlier still maps old messages to their old ids.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from datetime import datetime

#: ``json.dumps(x, ensure_ascii=False, separators=(",", ":"), default=str)``, without making an encoder per call.
_ENCODE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str).encode
#: How ``_ENCODE`` writes one string (json's own, in C where it can).
_STRING = json.encoder.encode_basestring


def _encode(parts: tuple) -> str:
    """``_ENCODE(parts)``, the same text: a tuple of strings, ints and Nones is written here, since the encoder's
    set-up costs several times that per call, and ids are made for every message; any other value, by it."""
    out = []
    for p in parts:
        kind = type(p)
        if kind is str:
            out.append(_STRING(p))
        elif kind is int:
            out.append(int.__repr__(p))
        elif p is None:
            out.append("null")
        else:
            return _ENCODE(parts)
    return "[" + ",".join(out) + "]"


def _digest(*parts: object) -> str:
    return hashlib.sha256(_encode(parts).encode("utf-8")).hexdigest()


def message_id(user_id: str, session_id: str, role: str, ts: datetime | None, content: str, occurrence: int) -> str:
    ts_key = ts.isoformat(timespec="microseconds") if ts is not None else ""
    return _digest("message", user_id, session_id, role, ts_key, content, occurrence)[:32]


def fingerprint(items: Iterable[str]) -> str:
    """Order-independent fingerprint of a set of strings (sha256 of the sorted items)."""
    return _digest("set", *sorted(items))


def row_fingerprint(rows: Iterable[tuple]) -> str:
    """Fingerprint of rows in order; callers sort them first."""
    digest = RowDigest()
    digest.update(rows)
    return digest.hexdigest()


class RowDigest:
    """``row_fingerprint`` fed rows a batch at a time: the same rows in the same order give the same digest."""

    def __init__(self) -> None:
        self._h = hashlib.sha256()

    def update(self, rows: Iterable[tuple]) -> None:
        for row in rows:
            self._h.update(_encode(row).encode("utf-8"))
            self._h.update(b"\n")

    def hexdigest(self) -> str:
        return self._h.hexdigest()


def chunk_id(user_id: str, day: object, session_id: str | None, source: str, text: str) -> str:
    """A recall chunk: the same text of the same (user, day, session, source) is the same chunk."""
    return _digest("chunk", user_id, str(day), session_id or "", source, text)[:32]
