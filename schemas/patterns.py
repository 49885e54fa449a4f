"""Regex lists kenang ships as data files under ``schemas/data/``.

``INJECTION_PATTERNS`` maps each prompt-injection kind to its compiled patterns, read
from ``injection_patterns.yaml``; ``transforms.injection`` uses them to flag text that
reads like a prompt override. The file is data so the lists can grow without touching
code; its comments say why each pattern is as narrow as it is.

Invariants:

- Loaded and compiled once, on import. A malformed file fails the import with a
  ``ValueError`` naming the kind, not the first message that gets scanned.
- Every pattern is compiled ``IGNORECASE | MULTILINE``; a pattern that must be
  case-sensitive (``DAN``, since Indonesian "dan" means "and") says so inline with
  ``(?-i:...)``. ``^`` means the start of a line.
- The mapping and its tuples are read-only to callers by convention: nothing mutates
  them after import.
"""

from __future__ import annotations

import re
from importlib.resources import files

import yaml

_FLAGS = re.IGNORECASE | re.MULTILINE


def _load_patterns(name: str) -> dict[str, tuple[re.Pattern[str], ...]]:
    text = files(__package__).joinpath("data", name).read_text(encoding="utf-8")
    data = yaml.safe_load(text)
    if not isinstance(data, dict) or not data:
        raise ValueError(f"{name}: expected a mapping of kind -> list of regexes")
    compiled: dict[str, tuple[re.Pattern[str], ...]] = {}
    for kind, patterns in data.items():
        if not isinstance(patterns, list) or not patterns or not all(isinstance(p, str) for p in patterns):
            raise ValueError(f"{name}: {kind!r} must be a non-empty list of regex strings")
        try:
            compiled[str(kind)] = tuple(re.compile(p, _FLAGS) for p in patterns)
        except re.error as exc:
            raise ValueError(f"{name}: {kind!r} has a bad regex: {exc}") from exc
    return compiled


INJECTION_PATTERNS: dict[str, tuple[re.Pattern[str], ...]] = _load_patterns("injection_patterns.yaml")

#: One alternation per kind, so a message is scanned once per kind instead of once per
#: pattern (the patterns use no backreferences or group names, so joining is safe).
INJECTION_COMBINED: dict[str, re.Pattern[str]] = {
    kind: re.compile("|".join(f"(?:{p.pattern})" for p in patterns), _FLAGS)
    for kind, patterns in INJECTION_PATTERNS.items()
}
