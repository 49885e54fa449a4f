"""Redact secrets from text before it reaches a table, an index or an LLM.

``redact(text)`` replaces each secret it recognises with ``[REDACTED:<kind>]`` and
reports how many it replaced and of which kinds. Recognisers run in a fixed order, the
most specific first, each on the output of the one before:

1. ``private_key``: a PEM ``-----BEGIN ... PRIVATE KEY-----`` block (RSA, EC, DSA,
   OPENSSH, ENCRYPTED, PGP ``... KEY BLOCK``) up to its END line, or to the end of the
   text when the paste was cut.
2. Tokens with a recognisable shape: ``anthropic_key`` (``sk-ant-``), ``openai_key``
   (``sk-``, ``sk-proj-``; a digit is required so ``sk-learn-...`` prose survives),
   ``aws_access_key`` (``AKIA``/``ASIA`` + 16), ``github_token`` (``ghp_ gho_ ghs_
   ghu_ ghr_ github_pat_``), ``slack_token`` (``xox[abposr]-``), ``jwt``,
   ``tailscale_key`` (``tskey-``) and ``huggingface_token`` (``hf_`` + 30), the two a
   homelab that runs local models pastes most.
3. ``bearer``: the token after ``Authorization: Bearer`` (also written as a quoted
   JSON or Python header; the prefix is kept), or after a bare ``Bearer`` when it
   looks random (20+ characters with a digit). ``basic_auth``: the base64 after
   ``Authorization: Basic``, which is ``user:password`` in the clear.
4. ``url_credentials``: only the password in ``scheme://user:PASS@host``.
5. ``wallet_mnemonic``: a run of 12 or more consecutive BIP39 English words
   (case-insensitive) separated only by whitespace, commas, semicolons, list bullets
   or numbering (``1. abandon 2. ability``). The whole run goes. Every word in the list
   has 3+ letters, so "to", "of", "the", "yang" break a run and prose does not reach 12.
   It runs before 6 so that ``seed: <12 words>`` is one redaction, not 11 words left.
6. ``password`` / ``secret``: the value of an assignment to a password-like key
   (``password passwd pwd pass passphrase kata sandi sandi``) or a secret-like key
   (``secret client_secret secret_key aws_secret_access_key token api_key apikey
   api-key``), also with a prefix such as ``DB_`` or ``access_``. ``password``,
   ``passwd``, ``passphrase`` and ``token`` also take a prefix glued on with letters
   (PHP's ``dbpassword``, ngrok's ``authtoken``: no English word ends in them, unlike
   ``bypass``), and every key takes the Indonesian ``-nya`` ("passwordnya: ...",
   "kata sandinya adalah ..."). The key and separator are kept. Separators ``:`` and
   ``=`` take any value, and so does ``=>`` after a quoted key (PHP
   ``'dbpassword' => '...'``; not after a bare one, where it is a JavaScript arrow
   such as ``token => token.trim()``); the verbal ``is`` / ``adalah`` take a value
   only when quoted or when it looks like a password (4+ characters with a digit or
   symbol), so "the password is wrong" survives.

Invariants:

- Idempotent: ``redact(redact(x).text)`` changes nothing and counts 0. A marker never
  matches a recogniser: values starting ``[REDACTED:`` are skipped, and a marker's
  brackets break a mnemonic run.
- ``kinds`` is sorted and unique; ``count`` is the number of markers written.
- Pure: no I/O beyond the word list that ``schemas.wordlists`` loads on import.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from schemas.wordlists import BIP39_ENGLISH

_MARKER = "[REDACTED:{}]"
_NOT_MARKER = r"(?!\[REDACTED:)"
_MNEMONIC_MIN_WORDS = 12
# A token starts where no token character precedes it, so "eyJ-eyJ-eyJ-..." or
# "sk-sk-sk-..." offers one candidate start, not one per dash (no quadratic scans).
_START = r"(?<![A-Za-z0-9_-])"


@dataclass(frozen=True, slots=True)
class Redaction:
    """Redacted text, the number of markers written and their sorted unique kinds."""

    text: str
    count: int
    kinds: tuple[str, ...]


_PRIVATE_KEY = re.compile(
    r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
    r".*?(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
    re.DOTALL,
)
# (kind, pattern): each whole match is a secret.
_TOKENS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("anthropic_key", re.compile(_START + r"sk-ant-[A-Za-z0-9_-]{20,}")),
    ("openai_key", re.compile(_START + r"sk-(?!ant-)(?=[A-Za-z0-9_-]{20})[A-Za-z0-9_-]*\d[A-Za-z0-9_-]*")),
    ("aws_access_key", re.compile(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b")),
    ("github_token", re.compile(_START + r"(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})")),
    ("slack_token", re.compile(_START + r"xox[abposr]-[A-Za-z0-9-]{10,}")),
    ("jwt", re.compile(_START + r"eyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*")),
    ("tailscale_key", re.compile(_START + r"tskey-[A-Za-z0-9-]{16,}")),
    ("huggingface_token", re.compile(_START + r"hf_[A-Za-z0-9]{30,}")),
)

_TOKEN_CHARS = r"[A-Za-z0-9._~+/=-]"
# (kind, pattern): only the ``secret`` group is a secret; the rest is kept.
_PARTIAL: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "bearer",
        re.compile(
            r"(?i)\bauthorization[\"']?[ \t]*[:=][ \t]*[\"']?bearer[ \t]+"
            + _NOT_MARKER
            + rf"(?P<secret>{_TOKEN_CHARS}+)"
        ),
    ),
    ("bearer", re.compile(rf"\b[Bb]earer[ \t]+(?P<secret>(?={_TOKEN_CHARS}*\d){_TOKEN_CHARS}{{20,}})")),
    (
        "basic_auth",
        re.compile(
            r"(?i)\bauthorization[\"']?[ \t]*[:=][ \t]*[\"']?basic[ \t]+"
            + _NOT_MARKER
            + r"(?P<secret>[A-Za-z0-9+/]+=*)"
        ),
    ),
    (
        "url_credentials",
        re.compile(
            r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{0,31}://[^\s:/@]*:"
            + _NOT_MARKER
            + r"(?P<secret>[^\s/@]+)@"
        ),
    ),
)

_PASSWORD_KEYS = r"password|passwd|passphrase|pwd|pass|kata[ \t]+sandi|sandi"
_SECRET_KEYS = r"aws_secret_access_key|client_secret|secret_key|secret|token|api_key|apikey|api-key"
_VALUE = (
    r"(?:(?P<q>[\"'`])" + _NOT_MARKER + r"(?P<quoted>[^\"'`\n]+)(?P=q)"
    r"|" + _NOT_MARKER + r"(?P<bare>[^\s\"'`]*[^\s\"'`.,;:)\]}]))"
)
# A glued-on prefix ("dbpassword", "authtoken") is bounded, so a long word costs a
# bounded look at each word start, not a scan to its end.
_GLUED = r"(?:[A-Za-z0-9]{1,20}(?=pass(?:word|wd|phrase)|token))?"
_ASSIGNMENT = re.compile(
    r"(?i)(?<![A-Za-z0-9])" + _GLUED + r"(?:(?P<pw>" + _PASSWORD_KEYS + r")|(?P<sec>" + _SECRET_KEYS + r"))"
    r"(?:-?nya)?[\"']?"
    r"(?:(?P<sep>[ \t]*(?::(?!=)|=(?![=>]))[ \t]*|(?<=[\"'])[ \t]*=>[ \t]*)|(?P<verb>[ \t]+(?:is|adalah)[ \t]+))"
    + _VALUE
)
# Type names after a colon are code annotations ("password: str"), not values.
_NOT_VALUES = frozenset({"str", "string", "bytes", "int", "none", "null", "optional", "any"})
_LOOKS_LIKE_PASSWORD = re.compile(r"^(?=.*[\d\W_]).{4,}$")

_WORD = re.compile(r"[A-Za-z]+")
# Possessive, so a long gap that fails (many spaces, then "!") fails in linear time.
_MNEMONIC_GAP = re.compile(r"(?:[\s,;]|\d++[.):]?|[-*•](?=\s))++")


def redact(text: str) -> Redaction:
    """Replace every recognised secret in ``text`` with ``[REDACTED:<kind>]``."""
    found: list[str] = []

    def marker(kind: str) -> str:
        found.append(kind)
        return _MARKER.format(kind)

    text = _PRIVATE_KEY.sub(lambda m: marker("private_key"), text)
    for kind, pattern in _TOKENS:
        text = pattern.sub(lambda m, kind=kind: marker(kind), text)
    for kind, pattern in _PARTIAL:
        text = pattern.sub(lambda m, kind=kind: _replace_group(m, "secret", marker(kind)), text)
    text = _redact_mnemonics(text, marker)
    text = _redact_assignments(text, marker)
    return Redaction(text=text, count=len(found), kinds=tuple(sorted(set(found))))


def _replace_group(m: re.Match[str], group: str, replacement: str) -> str:
    start, end = m.span(group)
    return m.string[m.start() : start] + replacement + m.string[end : m.end()]


def _redact_assignments(text: str, marker: Callable[[str], str]) -> str:
    """Redact assignment values; a rejected candidate resumes the scan one character on."""
    out: list[str] = []
    pos = 0
    # Not re.sub: a rejected "password is wrong" must not swallow a "token: x" inside it.
    while (m := _ASSIGNMENT.search(text, pos)) is not None:
        group = "quoted" if m["quoted"] is not None else "bare"
        value = m[group]
        if m["verb"] is not None:
            rejected = group == "bare" and not _LOOKS_LIKE_PASSWORD.match(value)
        else:
            rejected = value.lower() in _NOT_VALUES
        if rejected:
            out.append(text[pos : m.start() + 1])
            pos = m.start() + 1
            continue
        out.append(text[pos : m.start()])
        out.append(_replace_group(m, group, marker("password" if m["pw"] is not None else "secret")))
        pos = m.end()
    out.append(text[pos:])
    return "".join(out)


def _redact_mnemonics(text: str, marker: Callable[[str], str]) -> str:
    """Replace each maximal run of 12+ BIP39 words with one marker."""
    runs: list[tuple[int, int]] = []
    run_start = run_end = -1
    length = 0
    for m in _WORD.finditer(text):
        if m.group().lower() not in BIP39_ENGLISH:
            if length >= _MNEMONIC_MIN_WORDS:
                runs.append((run_start, run_end))
            length = 0
            continue
        if length and _MNEMONIC_GAP.fullmatch(text, run_end, m.start()):
            length += 1
        else:
            if length >= _MNEMONIC_MIN_WORDS:
                runs.append((run_start, run_end))
            run_start, length = m.start(), 1
        run_end = m.end()
    if length >= _MNEMONIC_MIN_WORDS:
        runs.append((run_start, run_end))
    if not runs:
        return text
    out: list[str] = []
    pos = 0
    for start, end in runs:
        out.append(text[pos:start])
        out.append(marker("wallet_mnemonic"))
        pos = end
    out.append(text[pos:])
    return "".join(out)
