"""Forgetting as a fact: tombstones, and what they take out of a day's rows.

``kenang forget`` records a tombstone and never the forgotten text: a phrase is kept as
a keyed hash of its words (``phrase_digest``), a session id as a keyed hash of the id,
a day or a "before" date as the date. Every load, summary, index and import applies the
user's tombstones (``Forgetting``), so no backfill, re-import or reindex brings back what
was forgotten:

- a ``day`` tombstone, or a ``before`` one later than the day, drops the whole day;
- a ``session`` tombstone drops that session;
- a ``text`` tombstone replaces every run of words equal to the phrase with
  ``[FORGOTTEN]``, in any message, old or new: the words are compared as hashes, word
  window by word window, case- and spacing-insensitively (NFKC, lower case, ``\\w+``).
  An identifier or a file name that holds the phrase (its words cut at ``_`` too, so
  ``kunci_gudang`` holds "kunci gudang") is renamed whole, ``forgotten-<12 hex>``: a
  hash keyed like the tombstone, so it is the same at every rerun (IDs stay content
  hashes of what is kept, and a rerun is a no-op), two such ids stay apart, and the
  name cannot be guessed back without the home. A file name keeps its extensions.

The key is the home's own (``<home>/.kenang-forget-key``), so the hash of a short phrase
in the warehouse cannot be guessed by trying a dictionary without the home itself.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import json
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field

MARKER = "[FORGOTTEN]"
RENAMED = "forgotten-"
_WORD = re.compile(r"\w+")
_NAME_WORD = re.compile(r"[^\W_]+")  # in a name, "_" separates words too
# A file name's type extensions (".md", ".reason.json"): they say what kind of file it is, never what was said in
# it, so a phrase ("md", "json") is not looked for in them. Any other dotted part is a word of the name.
_TYPE_EXTENSIONS = frozenset(
    {
        "md",
        "markdown",
        "jsonl",
        "json",
        "txt",
        "text",
        "log",
        "gz",
        "zip",
        "bz2",
        "xz",
        "zst",
        "tar",
        "html",
        "htm",
        "xml",
        "csv",
        "tsv",
        "yaml",
        "yml",
        "db",
        "sqlite",
        "sqlite3",
        "bak",
        "tmp",
        "pdf",
        "doc",
        "docx",
        "rtf",
        "odt",
        "reason",
        "summary",
        "bad",
    }
)


def split_name(name: str) -> tuple[str, str]:
    """(stem, type extensions) of a file name: ``kunci.gudang.md`` is (``kunci.gudang``, ``.md``)."""
    stem, extensions = name, ""
    while True:
        head, dot, tail = stem.rpartition(".")
        if not dot or not head or tail.lower() not in _TYPE_EXTENSIONS:
            return stem, extensions
        stem, extensions = head, dot + tail + extensions


def words(text: str) -> list[str]:
    return _WORD.findall(unicodedata.normalize("NFKC", text).lower())


def phrase_digest(key: bytes, phrase_words: Iterable[str]) -> str:
    return hmac.new(key, " ".join(phrase_words).encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()


def id_digest(key: bytes, value: str) -> str:
    return hmac.new(key, b"id\0" + value.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()


@dataclass(frozen=True)
class Tombstone:
    tombstone_id: str
    user_id: str
    kind: str  # text | session | day | before
    digest: str | None = None
    words: int | None = None
    day: dt.date | None = None
    purge: bool = False


@dataclass(frozen=True)
class Forgetting:
    """One user's tombstones, ready to apply to rows."""

    key: bytes
    phrases: dict[int, frozenset[str]] = field(default_factory=dict)  # words -> digests
    sessions: frozenset[str] = frozenset()
    days: frozenset[dt.date] = frozenset()
    before: dt.date | None = None

    @classmethod
    def of(cls, key: bytes, tombstones: Iterable[Tombstone], *, before: dt.date | None = None) -> Forgetting:
        phrases: dict[int, set[str]] = {}
        sessions: set[str] = set()
        days: set[dt.date] = set()
        for t in tombstones:
            # a tombstone row without its digest or day (the columns are nullable) matches nothing
            if t.kind == "text" and t.words and t.digest is not None:
                phrases.setdefault(t.words, set()).add(t.digest)
            elif t.kind == "session" and t.digest is not None:
                sessions.add(t.digest)
            elif t.kind == "day" and t.day is not None:
                days.add(t.day)
            elif t.kind == "before" and t.day is not None and (before is None or t.day > before):
                before = t.day
        return cls(key, {k: frozenset(v) for k, v in phrases.items()}, frozenset(sessions), frozenset(days), before)

    @property
    def empty(self) -> bool:
        return not (self.phrases or self.sessions or self.days or self.before)

    def drops_day(self, day: dt.date) -> bool:
        return day in self.days or (self.before is not None and day < self.before)

    def drops_session(self, session_id: str) -> bool:
        return bool(self.sessions) and id_digest(self.key, session_id) in self.sessions

    def scrub(self, text: str, *, names: bool = False, numbers: bool = True) -> tuple[str, int]:
        """``text`` with every forgotten phrase replaced by the marker; (text, how many).

        ``names``: words are cut at ``_`` too, as in an identifier or a file name.
        ``numbers``: whether a run of words that are all digits counts (``names`` leaves those out)."""
        if not self.phrases or not text:
            return text, 0
        original = text
        normal = unicodedata.normalize("NFKC", text)
        if len(normal) != len(text):  # offsets would not line up: compare on the normal form
            text = normal
        # each word compared in its normal form too ("ＫＵＮＣＩ" is "kunci"), as ``words`` makes the phrase's
        spans = [
            (m.start(), m.end(), unicodedata.normalize("NFKC", m[0]).lower())
            for m in (_NAME_WORD if names else _WORD).finditer(text)
        ]
        cut: list[tuple[int, int]] = []
        i = 0
        while i < len(spans):
            hit = 0
            for k, digests in self.phrases.items():
                if (
                    i + k <= len(spans)
                    and phrase_digest(self.key, (w for _, _, w in spans[i : i + k])) in digests
                    and (numbers or not all(w.isdigit() for _, _, w in spans[i : i + k]))
                ):
                    hit = max(hit, k)
            if hit:
                cut.append((spans[i][0], spans[i + hit - 1][1]))
                i += hit
            else:
                i += 1
        if not cut:  # nothing forgotten in it: the text as it was, never rewritten into its normal form
            return original, 0
        out, pos = [], 0
        for start, end in cut:
            out.append(text[pos:start])
            out.append(MARKER)
            pos = end
        out.append(text[pos:])
        return "".join(out), len(cut)

    def mentions(self, text: str) -> bool:
        return self.scrub(text)[1] > 0

    def names(self, value: str | None) -> bool:
        """Whether an identifier or a file name holds a forgotten phrase (its words cut at ``_`` too).

        A phrase of numbers alone (a PIN, "1100") is not looked for in names: in one, numbers are its date
        and time (``2026-07-18-1100``), and a name is renamed, and a file purged, whole."""
        if not value:
            return False
        return self.scrub(value, numbers=False)[1] > 0 or self.scrub(value, names=True, numbers=False)[1] > 0

    def rename(self, value: str) -> str:
        """``value``, or ``forgotten-<12 hex>`` for one that holds a forgotten phrase: keyed, stable, one per value."""
        if not self.names(value):
            return value
        return (
            RENAMED
            + hmac.new(self.key, b"name\0" + value.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()[:12]
        )

    def names_file(self, name: str | None) -> bool:
        """Whether a file name holds a forgotten phrase outside its type extensions (``split_name``)."""
        if not name:
            return False
        return self.names(split_name(name)[0])

    def names_path(self, path: str | None) -> bool:
        """Whether a ``/``-separated path's file name holds a phrase: its folders are kenang's layout (days, users)."""
        if not path:
            return False
        return self.names_file(path.rsplit("/", 1)[-1])

    def rename_file(self, name: str) -> str:
        """A file name with its stem renamed as ``rename`` would when the stem holds a phrase; type extensions kept."""
        stem, extensions = split_name(name)
        return self.rename(stem) + extensions if self.names(stem) else name

    def rename_path(self, path: str) -> str:
        """A ``/``-separated path with its file name renamed (``rename_file``); its folders are kenang's layout."""
        head, sep, name = path.rpartition("/")
        return head + sep + self.rename_file(name)

    def scrub_value(self, value):
        """A JSON-like value (a report, a reason file) with the phrase scrubbed from every string in it, keys too."""
        if isinstance(value, str):
            text, _ = self.scrub(value)
            return self.scrub(text, names=True)[0]
        if isinstance(value, list):
            return [self.scrub_value(v) for v in value]
        if isinstance(value, tuple):
            return tuple(self.scrub_value(v) for v in value)
        if isinstance(value, dict):
            return {self.scrub_value(k) if isinstance(k, str) else k: self.scrub_value(v) for k, v in value.items()}
        return value


def scrub_transcript(data: bytes, forgetting: Forgetting) -> tuple[bytes, int]:
    """A kenang JSONL transcript (an export's day transcript) with forgotten phrases scrubbed.

    Each record's ``content`` and ``title`` are scrubbed as text, so an escape in the
    JSON (``\\n`` between two words) cannot hide a phrase. Returns (bytes, how many).
    """
    lines, hits = [], 0
    for line in data.decode("utf-8", "surrogatepass").splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        for key in ("content", "title"):
            if isinstance(record.get(key), str):
                record[key], n = forgetting.scrub(record[key])
                hits += n
        lines.append(json.dumps(record, ensure_ascii=False, sort_keys=False))
    if not hits:
        return data, 0
    return ("\n".join(lines) + "\n").encode("utf-8", "surrogatepass"), hits
