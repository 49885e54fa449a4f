"""Redact secrets from text before it reaches a table, an index or an LLM.

``redact(text)`` replaces each secret it recognises with ``[REDACTED:<kind>]`` and
reports how many it replaced and of which kinds. Recognisers run in a fixed order, the
most specific first, each on the output of the one before:

1. ``private_key``: a PEM ``-----BEGIN ... PRIVATE KEY-----`` block (RSA, EC, DSA,
   OPENSSH, ENCRYPTED, PGP ``... KEY BLOCK``), an SSH2 ``---- BEGIN SSH2 ENCRYPTED
   PRIVATE KEY ----`` block or a PuTTY key (``PuTTY-User-Key-File-2:`` to its
   ``Private-MAC:`` line), up to its end, or to the end of the text when the paste was
   cut. These are the headers detect-secrets' PrivateKeyDetector names; it matches the
   header line only, so kenang takes the block.
2. Tokens with a recognisable shape: ``anthropic_key`` (``sk-ant-``), ``openai_key``
   (``sk-``, ``sk-proj-``; a digit is required so ``sk-learn-...`` prose survives),
   ``aws_access_key`` (``AKIA``/``ASIA`` + 16), ``github_token`` (``ghp_ gho_ ghs_
   ghu_ ghr_ github_pat_``), ``slack_token`` (``xox[abposr]-``), ``jwt``,
   ``tailscale_key`` (``tskey-``), ``huggingface_token`` (``hf_`` + 30),
   ``google_api_key`` (``AIza`` + 35), ``stripe_key`` (``sk_`` / ``rk_`` ``live_`` or
   ``test_``, ``whsec_``), ``npm_token`` (``npm_`` + 36), ``digitalocean_token``
   (``dop_v1_ doo_v1_ dor_v1_``), ``google_oauth_token`` (``ya29.`` + 20+ base64url,
   dot-joined parts included), ``google_oauth_secret`` (``GOCSPX-`` + 28),
   ``docker_token`` (``dckr_pat_`` / ``dckr_oat_`` + 27), ``slack_token`` also for
   app-level tokens (``xapp-1-...``), ``grafana_token`` (``glc_`` + 32+ base64,
   ``glsa_`` + 32 + ``_`` + 8 hex), ``shopify_token`` (``shpat_ shpss_ shpca_ shppa_`` +
   32 hex), ``groq_key`` (``gsk_`` + 52) and ``discord_webhook`` (the whole
   ``https://discord.com/api/webhooks/<id>/<token>`` URL). A token starts at the start
   of the text or after any character but a letter or digit, so a whole identifier
   ("ghp_...") and one inside a file name ("2026-07-19-sk-proj-...") are tokens; a
   ``jwt`` only where no token character precedes it.
3. Provider formats from detect-secrets (``PROVIDER_PLUGINS``, kinds named after the
   plugin): ``artifactory_token``, ``aws_access_key`` (also ``ABIA ACCA A3T`` ids and a
   40-character secret key quoted after an ``aws ... key`` name), ``azure_storage_key``
   (after ``AccountKey=``), ``url_credentials`` (its BasicAuthDetector),
   ``cloudant_key``, ``discord_token``, ``github_token``, ``gitlab_token`` (``glpat-``
   and the other ``gl..-`` tokens), ``ibm_cloud_iam_key``, ``ibm_cos_hmac_key``,
   ``mailchimp_key``, ``pypi_token``, ``sendgrid_key`` (``SG.``), ``slack_token``,
   ``slack_webhook`` (``https://hooks.slack.com/services/...``), ``softlayer_key``,
   ``square_oauth_secret``, ``stripe_key``, ``telegram_bot_token``
   (``123456789:AA...``) and ``twilio_key``. The ``denylist`` regexes of its
   regex-based plugins are imported once and used as they are, but for one linear
   respelling: the assignment operator of ``build_assignment_regex`` (three space
   repeats in a row, cubic on a long run of spaces) is written with possessive repeats,
   which match the same text at the same places. The secret is a pattern's first
   capture group, or its whole match where it has none or captures only the token's
   prefix (GitHub, GitLab), less the delimiters the pattern spells around it
   (Artifactory's leading space or quote, Azure's ``AccountKey=``), cut at whitespace,
   and grown over the token characters on both sides: the patterns have no word
   boundaries, so one may match inside a longer token, and Stripe's 24 characters are a
   minimum (live keys are longer). IBM's two patterns allow an empty provider prefix,
   which makes them a generic ``key = <44 characters>`` rule; a match counts only when
   it names IBM. Left out, with the reason in ``EXCLUDED_PLUGINS``: the entropy and
   keyword detectors (noise in chat), IPPublicDetector (an IP address is not a secret,
   and a homelab names them all day), JwtTokenDetector (its lazy tail stops before the
   signature; ``jwt`` above takes the whole token), PrivateKeyDetector (see 1), and
   NpmDetector and OpenAIDetector, whose regexes backtrack in quadratic time (on a long
   line of URLs, on a run of ``sk-``) and whose every match ``npm_token``, ``openai_key``
   and the ``_authToken=`` assignment take anyway.
4. ``bearer``: the token after ``Authorization: Bearer`` (also written as a quoted
   JSON or Python header; the prefix is kept), or after a bare ``Bearer`` when it
   looks random (20+ characters with a digit); also after ``Authorization: Token`` and
   after ``Authorization:`` with no scheme (its whole value, 16+ token characters with a
   digit).
   ``basic_auth``: the base64 after ``Authorization: Basic``, which is ``user:password``
   in the clear. ``azure_storage_key`` also after ``SharedAccessKey=`` (Service Bus and
   Event Hubs connection strings) and a SAS token's ``sig=``. ``password``: SQL's
   ``IDENTIFIED [WITH plugin] BY '...'``.
5. ``url_credentials``: only the password in ``scheme://user:PASS@host``.
6. ``card_number``: 13 to 19 digits, bare or grouped by spaces or dashes in fours
   (Amex and Diners 4-6-5 and 4-6-4), that pass the Luhn check and have the length
   of the brand their first digits name (Visa 4: 13, 16 or 19; Mastercard 51-55 and
   2221-2720: 16; Amex 34, 37: 15; Diners 30, 36, 38, 39: 14-19; JCB 35: 16-19;
   Discover and UnionPay 6: 16-19). Not next to a word character, ``+``, ``/``, ``-``
   or a decimal point, so phone numbers (``+62 812-3456-7890``, ``0812...``,
   ``62812...``), Unix timestamps, dates, versions, IMEIs and order ids that fail Luhn
   survive.
7. ``wallet_mnemonic``: a run of 12 or more consecutive BIP39 English words
   (case-insensitive) separated only by whitespace, commas, semicolons, list bullets
   or numbering (``1. abandon 2. ability``). The whole run goes. Every word in the list
   has 3+ letters, so "to", "of", "the", "yang" break a run and prose does not reach 12.
   A word glued to a digit or ``_`` is part of a token, not a word. It runs before 9 so
   that ``seed: <12 words>`` is one redaction, not 11 words left.
8. ``password`` on a command line, after each option on the rest of the command's
   line: ``mysql``/``mariadb`` (and their dump and admin tools) ``-pSECRET`` (``-p``
   alone prompts, ``-P`` is the port), ``mongosh -p``/``--password``, ``redis-cli
   -a``/``--pass``, ``curl -u``/``--user user:SECRET``, HTTPie ``http -a
   user:SECRET``, ``sshpass -p``, ``smbclient -U user%SECRET``, ``wget --password
   SECRET``, ``docker login -p``, ``ipmitool -P``, the LDAP tools' ``-w``, ``htpasswd
   -b file user SECRET`` and OpenSSL's ``pass:SECRET``. ``--password=`` and
   ``PGPASSWORD=`` are assignments (9).
9. ``password`` / ``secret`` / ``pin``: the value of an assignment to a password-like
   key (``password passwd passphrase passcode pwd pw pass kata sandi sandi``), a
   secret-like key (``secret client_secret secret_key aws_secret_access_key token api_key
   apikey api-key access_key private_key auth_key credential(s)``; ``api key`` in two
   words when its value looks like a secret, below) or ``pin``, also with a
   prefix such as ``DB_``, ``STRIPE_`` or ``db.`` and a suffix naming a variant
   (``SECRET_KEY_BASE``, ``PASSWORD_HASH``, ``PASSWORD2``, ``_OLD``, ``_PROD``, ...).
   ``password``, ``passwd``, ``passphrase`` and ``token`` also take a prefix glued on
   with letters (PHP's ``dbpassword``, ngrok's ``authtoken``: no English word ends in
   them, unlike ``bypass``), and every key takes the Indonesian ``-nya``
   ("passwordnya: ...", "kata sandinya adalah ..."). Up to three short words may stand
   between a key and its separator ("kata sandi wifi rumah:", "password root MySQL:",
   "PIN ATM:"), unless one of them says the value is not the secret ("token limit:",
   "password policy:", "kata sandi salah:"). After ``pass`` with words between ("pass
   wifi: X") the value must look like a secret (below) and no word may make ``pass`` a
   verb ("pass the flag: --foo", "pass it on:"), so "Pass 1: scanning" survives. The key
   and separator are kept. Separators ``:`` and ``=`` take any
   value but a type name, a boolean or a pointer to the secret (``$VAR``, ``$(pass show
   x)``, ``<your-token>``, a URL or the rest of one; SQL's ``PASSWORD('x')`` is its
   quoted ``x``), and so does ``=>`` after a quoted key (PHP
   ``'dbpassword' => '...'``; not after a bare one, where it is a JavaScript arrow such
   as ``token => token.trim()``); a YAML ``password:`` with its value alone on the next,
   indented line (also after ``|`` or ``>``) takes that value. The verbal ``is`` /
   ``adalah``, and a bare ``-nya`` ("passwordnya kucing123"), take a value only when
   quoted or when it looks like a password (4+ characters with a digit or symbol, a
   closing ``?`` or ``!`` not counted), so "the password is wrong" and "passwordnya
   apa?" survive. A ``pin`` takes only 4 to 8 digits, so ``GPIO pin: 18`` survives.
   With no separator at all, after ``password``, ``passphrase``, ``kata sandi`` or a
   lower-case ``sandi`` (also with ``-nya``; not ``pwd``/``passwd``, which are commands,
   ``pass``, a verb, or "Sandi", a name) and up to three short words ("password wifi
   rumah Mawar123", "kata sandi wifi rumah Mawar123 ya", "PASSWORD 'x'" in SQL), the
   first word that looks like a secret is the password (right after the key, a quoted
   phrase of three or more words too: ``passphrase 'correct horse battery staple'``): 6+ characters, no path, option,
   URL or ``$VARIABLE``, with a digit, a symbol or case mixed twice inside the word
   ("kuCinGku"; "GitHub" and "PostgreSQL" are names). The words before it may not be a
   verb or one of the property words above but for the words of a change ("sudah
   diganti"), nor end in punctuation, and it may not be followed by ``is`` / ``adalah``
   or a separator (that is a key's words, as in "password for admin123 is ..."). So
   "password wifi rumah sudah diganti" and "password manager 1Password7" survive.
10. ``secret``: a value assigned to a marker, where a recogniser took the key and left
    the value (``AKIA...:<secret key>`` becomes ``[REDACTED:aws_access_key]:...``):
    after ``=`` any value, after ``:`` one that looks random (8+ characters with a
    digit).
11. Everyday phrasings with no separator: ``pin`` ("PIN ATM aku 482913", "passcode
    8891": up to three plain words, then 4 to 8 digits; not "pin 17 on the header"),
    ``password`` after ``wifi pass`` / ``pass wifi`` when it looks like one, and for a
    user then a password ("user admin / pass Indomie123"), a login cue then
    ``user:password`` ("login admin:Indomie123 di router") and ``passwd`` before a word
    that looks like a password (not the command: "sudo passwd deploy01"). A passphrase
    after ``password:`` (9) runs to the end of its clause: "password: correct horse
    battery staple" loses all four words (not after ``passcode``: one word of digits),
    up to a line end, ``,`` ``;``, a sentence's
    end, a bracket, quote or dash, the next key ("user:") or a word that joins clauses ("and",
    "lalu", "ya"). ``kata kunci`` is a password key when its value looks like a password
    ("kata kunci: python" is a search keyword). ``cookie``: each cookie's value in a
    ``Cookie:`` header (the first pair of a ``Set-Cookie:``), when it is 8+ characters
    or its name says session, token or auth ("theme=dark" survives).
12. ``high_entropy``: a run of 20+ base64, base64url or hex characters that is random by
    detect-secrets' Shannon entropy (``Base64HighEntropyString``: at least 0.75 of the
    most a run of its length can have, with a digit and both cases; hex from 32
    characters at its hex limit, 3.0) and whose nearest telling word before it, on its
    line, names a credential (``secret key token password pass kunci rahasia sandi
    credential``, also as an identifier's last part: ``aws_secret_access_key``) or is a
    marker (``[REDACTED:aws_access_key] wJalr...``: an AWS, GCP or Azure pair; a run that
    opens its line pairs with an AWS key id ending the line before). A word
    that names a hash or an id (``sha256 commit digest checksum fingerprint id uuid
    image base64``) keeps it, and so do UUIDs, SSH public keys (``AAAA...``) and base64
    after ``base64,``: commit hashes, digests in logs and inline images survive.

A recogniser runs only on text that holds one of the substrings every match of its
pattern contains, derived from the pattern by ``schemas.patterns.gate``: a prefilter
that saves time and never changes a result.

``redact_reason(text, limit)`` is the gate on every way out of kenang (reasons, run
counts, status, logs, errors, MCP errors): the text is redacted whole and only then cut,
and a cut never splits a marker or leaves the start of a run of 8+ token characters
(the whole run goes). ``redact_tree`` passes every string of a dict or list through it.

``redact_identifier(value)`` returns ``value`` when ``redact`` finds nothing in it, else
the stable ``redacted-<12 hex of its sha256>``; ``redact_file_name(name)`` does the same
to a file name's stem and keeps its extensions (``.md``, ``.jsonl``, ``.summary.md``).

Invariants:

- Idempotent: ``redact(redact(x).text)`` changes nothing and counts 0. A marker never
  matches a recogniser: values starting ``[REDACTED:`` are skipped, a secret that
  reaches a marker stops there and the scan goes on after it, and a marker's brackets
  break a mnemonic run.
- ``kinds`` is sorted and unique; ``count`` is the number of markers written.
- Linear time on adversarial input: repeats are bounded, possessive or followed by
  what they cannot match (tests/test_redact.py runs 200 KB adversarial strings).
- Pure: no I/O beyond the word list that ``schemas.wordlists`` loads and the
  detect-secrets plugin modules imported on import.
"""

from __future__ import annotations

import functools
import hashlib
import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import cast

from detect_secrets.plugins.artifactory import ArtifactoryDetector
from detect_secrets.plugins.aws import AWSKeyDetector
from detect_secrets.plugins.azure_storage_key import AzureStorageKeyDetector
from detect_secrets.plugins.base import RegexBasedDetector
from detect_secrets.plugins.basic_auth import BasicAuthDetector
from detect_secrets.plugins.cloudant import CloudantDetector
from detect_secrets.plugins.discord import DiscordBotTokenDetector
from detect_secrets.plugins.github_token import GitHubTokenDetector
from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString, HexHighEntropyString
from detect_secrets.plugins.ibm_cloud_iam import IbmCloudIamDetector
from detect_secrets.plugins.ibm_cos_hmac import IbmCosHmacDetector
from detect_secrets.plugins.mailchimp import MailchimpDetector
from detect_secrets.plugins.pypi_token import PypiTokenDetector
from detect_secrets.plugins.sendgrid import SendGridDetector
from detect_secrets.plugins.slack import SlackDetector
from detect_secrets.plugins.softlayer import SoftlayerDetector
from detect_secrets.plugins.square_oauth import SquareOAuthDetector
from detect_secrets.plugins.stripe import StripeDetector
from detect_secrets.plugins.telegram_token import TelegramBotTokenDetector
from detect_secrets.plugins.twilio import TwilioKeyDetector

from schemas.patterns import Gate, Prefilter, gate
from schemas.wordlists import BIP39_ENGLISH
from transforms.model import USER_ID_RE

_MARKER = "[REDACTED:{}]"
_NOT_MARKER = r"(?!\[REDACTED:)"
_MNEMONIC_MIN_WORDS = 12
_MNEMONIC_MIN_CHARS = _MNEMONIC_MIN_WORDS * 3 + _MNEMONIC_MIN_WORDS - 1  # every BIP39 word has 3+ letters
# A token starts after a non-word character or at the start of the text, so a whole
# identifier like "ghp_..." is a token, and so is one after "-" or "_" in a file name
# ("2026-07-19-sk-proj-..."). Each such pattern either fails within a bounded look at
# a start or matches to the end of its run, so "sk-sk-sk-..." costs linear time.
_AFTER_WORD = r"(?<![A-Za-z0-9])"
# A JWT must find two dots in its run: a start after "-" could scan the whole run and
# fail, once per "eyJ-", so it starts only where no token character precedes it.
_START = r"(?<![A-Za-z0-9_-])"


@dataclass(frozen=True, slots=True)
class Redaction:
    """Redacted text, the number of markers written and their sorted unique kinds."""

    text: str
    count: int
    kinds: tuple[str, ...]


Span = tuple[int, int]


@dataclass(frozen=True, slots=True)
class _Rule:
    """A gated pattern, and where in each of its matches the secret is (None: not a secret).

    With ``option``, the gated pattern finds a command, and the matches are those of
    ``option`` in the rest of the command's line.
    """

    kind: str
    gate: Gate
    span: Callable[[re.Match[str]], Span | None]
    option: re.Pattern[str] | None = None
    # Grow the span over the token characters around it: the pattern may match inside a token.
    whole_token: bool = False

    def matches(self, text: str, start: int = 0) -> Iterator[re.Match[str]]:
        if self.option is None:
            yield from self.gate.pattern.finditer(text, start)
            return
        scanned = 0  # a line is scanned once, from its first command on: linear, and idempotent
        for command in self.gate.pattern.finditer(text):
            if command.start() < scanned:
                continue
            end = text.find("\n", command.end())
            scanned = len(text) if end < 0 else end
            yield from self.option.finditer(text, command.end(), scanned)


def _rule(kind: str, pattern: re.Pattern[str], span: Callable[[re.Match[str]], Span | None]) -> _Rule:
    return _Rule(kind, gate(kind, pattern), span)


def _whole(m: re.Match[str]) -> Span:
    return m.span()


def _quoted_or_bare(m: re.Match[str]) -> Span:
    return m.span("quoted") if m["quoted"] is not None else m.span("bare")


# --- 1 and 2: kenang's own shapes ------------------------------------------------------

_PRIVATE_KEY = re.compile(
    r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
    r".*?(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)"
    r"|---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----.*?(?:---- END SSH2 ENCRYPTED PRIVATE KEY ----|\Z)"
    r"|PuTTY-User-Key-File-\d+:.*?(?:Private-(?:MAC|Hash):[ \t]*[0-9A-Fa-f]+|\Z)",
    re.DOTALL,
)
# (kind, pattern): each whole match is a secret.
_TOKENS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("anthropic_key", re.compile(_AFTER_WORD + r"sk-ant-[A-Za-z0-9_-]{20,}")),
    # The digit is looked for within 80 characters, so a run of "sk-" without one costs
    # 80 steps a start, not a scan to its end.
    ("openai_key", re.compile(_AFTER_WORD + r"sk-(?!ant-)(?=[A-Za-z0-9_-]{20})(?=[A-Za-z_-]{0,80}\d)[A-Za-z0-9_-]+")),
    ("aws_access_key", re.compile(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b")),
    ("github_token", re.compile(_AFTER_WORD + r"(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})")),
    ("slack_token", re.compile(_AFTER_WORD + r"xox[abposr]-[A-Za-z0-9-]{10,}")),
    ("jwt", re.compile(_START + r"eyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*")),
    ("tailscale_key", re.compile(_AFTER_WORD + r"tskey-[A-Za-z0-9-]{16,}")),
    ("huggingface_token", re.compile(_AFTER_WORD + r"hf_[A-Za-z0-9]{30,}")),
    ("google_api_key", re.compile(_AFTER_WORD + r"AIza[0-9A-Za-z_-]{35,}")),
    # detect-secrets knows sk_live_ and rk_live_; test keys and webhook secrets are secrets too.
    ("stripe_key", re.compile(_AFTER_WORD + r"(?:[sr]k_(?:live|test)_[0-9A-Za-z]{10,}|whsec_[A-Za-z0-9]{20,})")),
    ("npm_token", re.compile(_AFTER_WORD + r"npm_[A-Za-z0-9]{36,}")),
    ("digitalocean_token", re.compile(_AFTER_WORD + r"do[opr]_v1_[A-Za-z0-9]{40,}")),
    # Google OAuth 2.0 access tokens: "ya29." and base64url, in dot-joined parts for
    # service accounts ("ya29.c.b0A..."); 20+ characters, so prose "ya29.x" survives.
    (
        "google_oauth_token",
        re.compile(_AFTER_WORD + r"ya29\.(?=[0-9A-Za-z._-]{20})[0-9A-Za-z_-]++(?:\.[0-9A-Za-z_-]++)*+"),
    ),
    # Google OAuth client secrets: "GOCSPX-" and 28 base64url characters.
    ("google_oauth_secret", re.compile(_AFTER_WORD + r"GOCSPX-[A-Za-z0-9_-]{28,}")),
    # Docker Hub personal and organisation access tokens: "dckr_pat_" / "dckr_oat_" + 27+.
    ("docker_token", re.compile(_AFTER_WORD + r"dckr_(?:pat|oat)_[A-Za-z0-9_-]{27,}")),
    # Slack app-level tokens: "xapp-1-A0123-1234-abc..."; the xox. tokens are above.
    ("slack_token", re.compile(_AFTER_WORD + r"xapp-[0-9]+-[A-Za-z0-9-]{20,}")),
    # Grafana Cloud access policy tokens ("glc_" + base64) and service account tokens
    # ("glsa_" + 32 base62 + "_" + 8 hex).
    ("grafana_token", re.compile(_AFTER_WORD + r"glc_[A-Za-z0-9+/]{32,}={0,2}")),
    # A shape that ends in a fixed count of hex runs on to the end of the letters and
    # digits, so what follows ("...abcdnpm_...") is no token a rerun would find.
    ("grafana_token", re.compile(_AFTER_WORD + r"glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}[A-Za-z0-9]*")),
    # Shopify access tokens and shared secrets: "shpat_ shpss_ shpca_ shppa_" + 32 hex.
    ("shopify_token", re.compile(_AFTER_WORD + r"shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}[A-Za-z0-9]*")),
    # Groq API keys: "gsk_" + 52 base62.
    ("groq_key", re.compile(_AFTER_WORD + r"gsk_[A-Za-z0-9]{52,}")),
    (
        "discord_webhook",
        re.compile(r"https?://(?:(?:ptb|canary)\.)?discord(?:app)?\.com/api/webhooks/[0-9]+/[A-Za-z0-9_-]+"),
    ),
)

# --- 3: detect-secrets' provider formats -----------------------------------------------

#: The detect-secrets plugins whose ``denylist`` regexes redact, and the kind each writes.
PROVIDER_PLUGINS: dict[type[RegexBasedDetector], str] = {
    ArtifactoryDetector: "artifactory_token",
    AWSKeyDetector: "aws_access_key",
    AzureStorageKeyDetector: "azure_storage_key",
    BasicAuthDetector: "url_credentials",
    CloudantDetector: "cloudant_key",
    DiscordBotTokenDetector: "discord_token",
    GitHubTokenDetector: "github_token",
    GitLabTokenDetector: "gitlab_token",
    IbmCloudIamDetector: "ibm_cloud_iam_key",
    IbmCosHmacDetector: "ibm_cos_hmac_key",
    MailchimpDetector: "mailchimp_key",
    PypiTokenDetector: "pypi_token",
    SendGridDetector: "sendgrid_key",
    SlackDetector: "slack_token",
    SoftlayerDetector: "softlayer_key",
    SquareOAuthDetector: "square_oauth_secret",
    StripeDetector: "stripe_key",
    TelegramBotTokenDetector: "telegram_bot_token",
    TwilioKeyDetector: "twilio_key",
}
#: The detect-secrets plugins left out, by class name, and why.
EXCLUDED_PLUGINS: dict[str, str] = {
    "Base64HighEntropyString": "entropy alone flags hashes, ids and base64 pastes all day",
    "HexHighEntropyString": "entropy alone flags commit hashes, checksums and container ids",
    "KeywordDetector": "a keyword with any value; kenang's assignment rules are narrower and bilingual",
    "IPPublicDetector": "an IP address is not a secret, and a homelab names them all day",
    "JwtTokenDetector": "its lazy tail stops before the signature; kenang's jwt takes the whole token",
    "PrivateKeyDetector": "it matches the BEGIN line only; kenang's private_key takes the whole block",
    # Superlinear: each "//" scans on to the end of its line ("//" * n then one
    # "/:_authToken=" is quadratic). kenang's npm_token and its authtoken assignment take
    # every token it matches.
    "NpmDetector": "quadratic on a long line of URLs; kenang's npm_token and _authToken= rules cover it",
    # Superlinear: each "sk-" scans its whole run before looking for T3BlbkFJ. kenang's
    # openai_key takes every key it matches ("T3BlbkFJ" holds the digit it needs).
    "OpenAIDetector": "quadratic on a run of sk- prefixes; kenang's openai_key covers every key it matches",
}
# A pattern that finds another kind of the plugin's secrets.
_PATTERN_KINDS: dict[tuple[type, int], str] = {(SlackDetector, 1): "slack_webhook"}
# Their groups capture the token's prefix ("ghp", "glpat"), not the token.
_GROUP_IS_PREFIX = frozenset({GitHubTokenDetector, GitLabTokenDetector})
# The key name a whole match starts with, which is kept.
_KEY_IN_MATCH: dict[type, str] = {AzureStorageKeyDetector: "AccountKey="}
# Their provider prefix may be empty; a match counts only when it names one of these.
_MUST_NAME: dict[type, tuple[str, ...]] = {
    IbmCloudIamDetector: ("ibm", "iam", "cloud"),
    IbmCosHmacDetector: ("cos",),
}
# Delimiters a pattern spells around a token: before it (Artifactory's "=", ":", quote
# or space), after it (a quote or space; a trailing "=" is base64 padding, kept in).
_LEAD = " \t\r\n\"'=:"
_TRAIL = " \t\r\n\"'"
_WHITESPACE = re.compile(r"\s")
_TOKEN_TAIL = re.compile(r"[A-Za-z0-9_-]*")
_TOKEN_SET = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


def _provider_span(plugin: type, pattern: re.Pattern[str]) -> Callable[[re.Match[str]], Span | None]:
    whole = plugin in _GROUP_IS_PREFIX or not pattern.groups
    keep = _KEY_IN_MATCH.get(plugin, "")
    names = _MUST_NAME.get(plugin, ())

    def span(m: re.Match[str]) -> Span | None:
        if names and not any(n in m[0].lower() for n in names):
            return None
        group = 0 if whole else next((g for g in range(1, pattern.groups + 1) if m.start(g) >= 0), 0)
        start, end = m.span(group)
        if keep and m[group].startswith(keep):
            start += len(keep)
        text = m.string
        while start < end and text[start] in _LEAD:
            start += 1
        if (ws := _WHITESPACE.search(text, start, end)) is not None:
            end = ws.start()
        while end > start and text[end - 1] in _TRAIL:
            end -= 1
        return (start, end) if start < end else None

    return span


# detect-secrets' build_assignment_regex spells the operator as three space repeats in a
# row, which backtrack in cubic time on a long run of spaces ("cl_key" and 500 spaces
# takes a second). The rewrite matches the same text at the same places, linearly: what
# follows the operator starts with neither a space nor "=", ">" or ":", so the operator
# is forced, and its spaces can be taken possessively.
_ASSIGNMENT_OPERATOR = "(?: *)(?:=|:|:=|=>| +|::)(?: *)"
_ASSIGNMENT_OPERATOR_LINEAR = "(?: *+(?:=>|::|:=|=|:) *+| ++)"


def _linear(pattern: re.Pattern[str]) -> re.Pattern[str]:
    """``pattern``, with detect-secrets' assignment operator in its linear spelling."""
    if _ASSIGNMENT_OPERATOR not in pattern.pattern:
        return pattern
    return re.compile(pattern.pattern.replace(_ASSIGNMENT_OPERATOR, _ASSIGNMENT_OPERATOR_LINEAR), pattern.flags)


def _provider_rules() -> tuple[_Rule, ...]:
    rules = []
    for plugin, kind in PROVIDER_PLUGINS.items():
        # detect-secrets declares denylist an instance property; every detector sets it as a class tuple
        denylist = cast("tuple[re.Pattern[str], ...]", plugin.denylist)
        for i, original in enumerate(denylist):
            pattern = _linear(original)
            kind_here = _PATTERN_KINDS.get((plugin, i), kind)
            g = gate(kind_here, pattern)
            if plugin in _MUST_NAME:  # the names are needed too: a sharper prefilter, as sound
                g = Gate(kind_here, pattern, frozenset(_MUST_NAME[plugin]), frozenset())
            rules.append(_Rule(kind_here, g, _provider_span(plugin, pattern), whole_token=True))
    return tuple(rules)


# --- 4 and 5: headers and URLs -----------------------------------------------------------

_TOKEN_CHARS = r"[A-Za-z0-9._~+/=-]"
# (kind, pattern): only the ``secret`` group is a secret; the rest is kept.
_PARTIAL: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "bearer",
        re.compile(
            r"(?i)\bauthorization[\"']?[ \t]*[:=][ \t]*[\"']?(?:bearer|token)[ \t]+"
            + _NOT_MARKER
            + rf"(?P<secret>{_TOKEN_CHARS}+)"
        ),
    ),
    ("bearer", re.compile(rf"\b[Bb]earer[ \t]+(?P<secret>(?={_TOKEN_CHARS}*\d){_TOKEN_CHARS}{{20,}})")),
    # "Authorization: <token>" with no scheme: the header's whole value, 16+ token characters with a digit.
    (
        "bearer",
        re.compile(
            r"(?i)\bauthorization[\"']?[ \t]*[:=][ \t]*[\"']?(?!(?:bearer|basic|token)[ \t])"
            + _NOT_MARKER
            + rf"(?P<secret>(?={_TOKEN_CHARS}{{0,200}}\d){_TOKEN_CHARS}{{16,}})(?=[ \t]*(?:[\"',;\r\n]|\Z))"
        ),
    ),
    (
        "basic_auth",
        re.compile(
            r"(?i)\bauthorization[\"']?[ \t]*[:=][ \t]*[\"']?basic[ \t]+"
            + _NOT_MARKER
            + r"(?P<secret>[A-Za-z0-9+/]+=*)"
        ),
    ),
    # Azure Service Bus / Event Hubs connection strings, and a SAS token's signature.
    ("azure_storage_key", re.compile(r"(?i)\bSharedAccessKey=" + _NOT_MARKER + r"(?P<secret>[A-Za-z0-9+/]{16,}=*)")),
    ("azure_storage_key", re.compile(r"(?i)[?&;]sig=" + _NOT_MARKER + r"(?P<secret>[A-Za-z0-9%+/=]{16,})")),
    # SQL: "CREATE USER ... IDENTIFIED BY 'secret'" (also "IDENTIFIED WITH plugin BY").
    (
        "password",
        re.compile(
            r"(?i)\bidentified[ \t]+(?:with[ \t]+[A-Za-z0-9_]+[ \t]+)?by[ \t]+(?:password[ \t]+)?[\"']"
            + _NOT_MARKER
            + r"(?P<secret>[^\"'\n]+)[\"']"
        ),
    ),
    (
        "url_credentials",
        re.compile(
            r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{0,31}://[^\s:/@]*:" + _NOT_MARKER + r"(?P<secret>[^\s/@]+)@"
        ),
    ),
)


def _partial_span(m: re.Match[str]) -> Span | None:
    """The ``secret`` group, unless it is a placeholder (``IDENTIFIED BY '...'``, ``'<password>'``)."""
    start, end = m.span("secret")
    return None if _PLACEHOLDER.match(m.string, start, end) else (start, end)


# --- 6: payment cards --------------------------------------------------------------------

# It opens with a digit, and looks behind that digit, so the engine can skip to digits.
_CARD = re.compile(
    r"[0-9](?<![\w.,+/-][0-9])"
    r"(?:[0-9]{12,18}"
    r"|[0-9]{3}(?P<sep>[ -])[0-9]{4}(?P=sep)[0-9]{4}(?P=sep)[0-9]{4}(?:(?P=sep)[0-9]{3})?"
    r"|[0-9]{3}[ -][0-9]{6}[ -][0-9]{4,5})"
    r"(?![\w+/-]|[.,][0-9])"
)


def _luhn(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _brand_length(d: str) -> bool:
    """Whether ``d`` has a length the card brand its first digits name issues."""
    n = len(d)
    if d[0] == "4":
        return n in (13, 16, 19)
    if d[:2] in ("34", "37"):
        return n == 15
    if d[:2] in ("30", "36", "38", "39"):
        return 14 <= n <= 19
    if d[:2] == "35":
        return 16 <= n <= 19
    if "51" <= d[:2] <= "55" or "2221" <= d[:4] <= "2720":
        return n == 16
    if d[0] == "6":
        return 16 <= n <= 19
    return False


def _card_span(m: re.Match[str]) -> Span | None:
    digits = m[0].replace(" ", "").replace("-", "")
    return m.span() if _brand_length(digits) and _luhn(digits) else None


# --- 8: passwords on a command line ------------------------------------------------------

_ARG = (
    r"(?:(?P<q>[\"'])" + _NOT_MARKER + r"(?P<quoted>[^\"'\n]+)(?P=q)"
    r"|" + _NOT_MARKER + r"(?P<bare>[^\s\"'`;|&<>]+))"
)


def _user_and(sep: str) -> str:
    """``user<sep>SECRET``, bare or quoted as one argument; only the secret is captured.

    The user holds no ``[``, so a marker's ``[REDACTED:`` is never read as ``user:``.
    """
    return (
        rf"(?:(?P<q>[\"'])[^\"'\s{sep}\[]*{sep}" + _NOT_MARKER + r"(?P<quoted>[^\"'\n]+)(?P=q)"
        rf"|[^\s\"'{sep}\[]*{sep}" + _NOT_MARKER + r"(?P<bare>[^\s\"'`;|&<>]+))"
    )


def _cli_value(m: re.Match[str]) -> Span | None:
    """The option's value, unless it is a placeholder (``mysql -p...``, ``-p $DB_PASS``)."""
    start, end = _quoted_or_bare(m)
    return None if _PLACEHOLDER.match(m.string, start, end) else (start, end)


def _cli(commands: str, option: str, value: str = _ARG) -> _Rule:
    """``value`` after each ``option`` on the rest of the line of one of ``commands``."""
    command = re.compile(r"(?<![\w.-])(?:" + commands + r")(?=[ \t])")
    return _Rule("password", gate("password", command), _cli_value, re.compile(r"[ \t]" + option + value))


_MYSQL = r"mysql|mariadb|mysqldump|mysqladmin|mysqlimport|mysqlcheck|mysqlpump|mysqlsh|mariadb-dump|mariadb-admin"
_MONGO = r"mongo|mongosh|mongodump|mongorestore|mongoexport|mongoimport|mongostat|mongotop"
_CLI_RULES: tuple[_Rule, ...] = (
    _cli(_MYSQL, r"-p(?=[^\s-])"),  # glued: "-p" alone prompts, "-P" is the port
    _cli(_MONGO, r"(?:-p|--password)(?:[ \t]+|=)(?!-)"),
    _cli(r"redis-cli|valkey-cli|keydb-cli", r"(?:-a|--pass)[ \t]+(?!-)"),
    _cli(r"curl", r"(?:-u|--user|-U|--proxy-user)(?:[ \t]*|=)", _user_and(":")),
    _cli(r"http|https|xh|xhs", r"(?:-a|--auth)(?:[ \t]*|=)", _user_and(":")),
    _cli(r"sshpass", r"-p[ \t]*(?!-)"),
    _cli(r"smbclient|smbmap|smbget|smbcacls|rpcclient", r"(?:-U|--user)(?:[ \t]*|=)", _user_and("%")),
    _cli(r"wget", r"--(?:(?:ftp|http|proxy)-)?password[ \t]+(?!-)"),
    _cli(r"(?:docker|podman|nerdctl|buildah|skopeo)[ \t]+login", r"(?:-p|--password)(?:[ \t]+|=)(?!-)"),
    _cli(r"ipmitool", r"-P[ \t]*(?!-)"),
    _cli(r"ldapsearch|ldapadd|ldapmodify|ldapdelete|ldapwhoami|ldappasswd", r"-w[ \t]*(?!-)"),
    # "htpasswd -b FILE USER SECRET", or with -n (no file) "htpasswd -nb USER SECRET".
    _rule(
        "password",
        re.compile(
            r"(?<![\w.-])htpasswd[ \t]+"
            r"(?:-(?=[a-zA-Z]*n)[a-zA-Z]*b[a-zA-Z]*[ \t]+\S+|-[a-zA-Z]*b[a-zA-Z]*[ \t]+\S+[ \t]+\S+)[ \t]+" + _ARG
        ),
        _quoted_or_bare,
    ),
    _rule(
        "password",
        re.compile(
            r"(?<![\w-])-pass(?:in|out)?[ \t]+(?:(?P<q>[\"'])pass:" + _NOT_MARKER + r"(?P<quoted>[^\"'\n]+)(?P=q)"
            r"|pass:" + _NOT_MARKER + r"(?P<bare>[^\s\"'`;|&<>]+))"
        ),
        _quoted_or_bare,
    ),
)

# --- 9: assignments ----------------------------------------------------------------------

_PASSWORD_KEYS = r"password|passwd|passphrase|passcode|pwd|pw|pass|kata[ \t]+sandi|sandi|kata[ \t]+kunci"
_SECRET_KEYS = (
    r"aws_secret_access_key|client[_-]?secret|secret[_-]?key|secret|token|api(?:[_-]|[ \t])?key"
    r"|access[_-]?key|private[_-]?key|auth[_-]?key|credentials?"
)
# A suffix that names a variant of the same secret, never a property of it ("token_limit").
_KEY_SUFFIX = (
    r"(?:[_.-]?[0-9]{1,2}(?![0-9])"
    r"|[_.-](?:base|value|hash|plain|raw|b64|base64|enc|encrypted|old|new|prod|production|dev|test"
    r"|staging|live|local)(?![A-Za-z0-9]))?"
)
_VALUE = (
    r"(?:(?:(?:old_)?password\()?(?P<q>[\"'`])" + _NOT_MARKER + r"(?P<quoted>[^\"'`\n]+)(?P=q)"
    r"|" + _NOT_MARKER + r"(?!(?:old_)?password\([\"'`])(?P<bare>[^\s\"'`]*[^\s\"'`.,;:)\]}]))"
)
# A glued-on prefix ("dbpassword", "authtoken") is bounded, so a long word costs a
# bounded look at each word start, not a scan to its end.
_GLUED = r"(?:[A-Za-z0-9]{1,20}(?=pass(?:word|wd|phrase)|token))?"
# Up to three short words between a key and its separator. The verbs are never one of
# them: "kata sandi adalah x: y" is "adalah x", however often it is read again.
_MID_WORD = r"(?!(?:is|adalah)(?![A-Za-z0-9_.-]))[A-Za-z0-9][A-Za-z0-9_.-]{0,19}"
_MID_WORDS = _MID_WORD + r"(?:[ \t]+" + _MID_WORD + r"){0,2}"
_ASSIGNMENT = re.compile(
    r"(?i)(?<![A-Za-z0-9/])"
    + _GLUED  # not after "/": "~/.aws/credentials:" is a path
    + r"(?:(?P<pw>"
    + _PASSWORD_KEYS
    + r")|(?P<sec>"
    + _SECRET_KEYS
    + r")|(?P<pin>pin))"
    + _KEY_SUFFIX
    + r"(?P<nya>-?nya)?[\"']?"
    r"(?P<mid>[ \t]+" + _MID_WORDS + r")?"
    r"(?:(?P<block>[ \t]*:[ \t]*(?:[|>][-+]?[ \t]*)?\n[ \t]+)"
    r"|(?P<sep>[ \t]*(?::(?!=)|=(?![=>]))[ \t]*|(?<=[\"'])[ \t]*=>[ \t]*)"
    # A bare "-nya" (the key's own, right before the value) is verbal only where no
    # "word word: value" follows, which is the words-between form, so a value is read
    # the same way however often it is redacted.
    r"|(?P<verb>[ \t]+(?:is|adalah)(?:[ \t]*:)?[ \t]+"
    r"|(?(mid)(?!)|(?(nya)[ \t]+(?!" + _MID_WORDS + r"[ \t]*[:=])|(?!)))))" + _VALUE
)
# Type names after a colon are code annotations ("password: str"), not values; a
# boolean is a setting ("password_auth: false"), never a secret.
_NOT_VALUES = frozenset(
    {
        "str",
        "string",
        "bytes",
        "int",
        "none",
        "null",
        "optional",
        "any",
        "true",
        "false",
        "yes",
        "no",
        "on",
        "off",
        "enabled",
        "disabled",
        "required",
    }
)
# Words between a key and its separator that make the value a property of the secret,
# not the secret: "token limit: 4096", "password policy: 12 chars", "kata sandi salah: 3x".
_NOT_KEY_WORDS = frozenset(
    """
    rate count counts limit limits budget usage used length len size policy policies manager
    managers reset resets expired expires expiry expiration lifetime ttl timeout type types url
    uri endpoint file path dir name names field fields header prefix format hint prompt prompts
    input box form strength requirement requirements rule rules rotation change changed changes
    update updated per window id ids index store storage vault generator error errors failed wrong
    invalid incorrect required optional enabled disabled mode method protected less through check
    checks recovery forgot forgotten history age complexity min max minimum maximum level score
    cost price label description message regex pattern strategy provider version link links page
    tidak nggak gak ga enggak bukan salah belum sudah udah harus wajib minimal maksimal panjang kuat
    lemah lupa hilang kadaluarsa kedaluwarsa habis berlaku sisa jumlah batas gagal ganti diganti direset
    """.split()
)
# A value that names where the secret is, not the secret: a variable or a command's
# output ("$DB_PASS", "${TOKEN}", "$(pass show x)"), a placeholder ("<isi-node-token>",
# "<your-token>", "...", "***": no letter or digit), or the rest of a URL ("credential to https://...").
_PLACEHOLDER = re.compile(
    r"\$\(|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?\Z|<[^<>\s]{1,60}>\Z|//|[A-Za-z][A-Za-z0-9+.-]{0,31}://|[^A-Za-z0-9]+\Z"
)
_LOOKS_LIKE_PASSWORD = re.compile(r"^(?=.*[\d\W_]).{4,}$")
# After the verb "pass" ("pass the flag: --verbose", "pass it on: ..."), words that make
# "pass" a verb, not the short "password" ("pass wifi: ...").
_PASS_VERB_WORDS = frozenset(
    """
    the a an it its this that these those them they him her me us you your my our their his
    each every all any some both either another other in on into onto to through thru along
    around by down over back out up off as via with from of at then now again only just here
    there when if so and or not
    """.split()
)
# What a password looks like where no ":" or "=" says a value follows ("pass wifi: X",
# "password wifi rumah X"): 6+ characters, no path, option, URL or $VARIABLE, with a
# digit, a symbol, or case mixed inside the word at least twice ("kuCinGku"; one change
# is a product name: GitHub, PostgreSQL, TrueNAS).
_SECRET_SYMBOL = re.compile(r"[!@#$%^&*+=?~|\\<>]")
_DIGIT = re.compile(r"[0-9]")
_CASE_CHANGE = re.compile(r"[a-z][A-Z]")
_VARIABLE = re.compile(r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?")


def _looks_like_secret(value: str) -> bool:
    """Whether ``value`` has the shape of a password (see ``_SECRET_SYMBOL`` above)."""
    if len(value) < 6 or "://" in value or value[0] in "-/~." or _VARIABLE.fullmatch(value):
        return False
    return bool(_DIGIT.search(value) or _SECRET_SYMBOL.search(value) or len(_CASE_CHANGE.findall(value)) >= 2)


_PIN = re.compile(r"[0-9]{4,8}")
# A password key followed by words and no separator: "password wifi rumah Mawar123",
# "kata sandi wifi rumah Mawar123". Only the nouns (not "pwd", "passwd" or "pass", which
# are commands or a verb), and "sandi" only in lower case ("Sandi" is a name).
_LOOSE_KEY = re.compile(
    r"(?<![A-Za-z0-9/_.-])(?:(?i:[A-Za-z0-9]{0,20}pass(?:word|phrase|code)|kata[ \t]+sandi)|sandi)(?i:-?nya)?(?=[ \t])"
)
_LOOSE_WORDS = 3
_LOOSE_QUOTED = 200  # the longest quoted password looked for
_NEXT_WORD = re.compile(r"[ \t]++(\S++)")
_LOOSE_MID_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,19}")
# Words that stop an assignment's key ("password changed: yes") but may stand before a
# new password with no separator ("password wifi sudah diganti Mawar123").
_CHANGE_WORDS = frozenset("change changed changes update updated reset resets ganti diganti direset sudah udah".split())
# A word after a value that makes it one of the words before a verb or separator.
_LOOSE_STOP_AFTER = frozenset({"is", "adalah", "=", ":", "=>", ":="})
_REST_OF_LINE_BLANK = re.compile(r"[ \t]*(?:\n|\Z)")

# --- 10: a value assigned to a marker ----------------------------------------------------

_AFTER_MARKER = re.compile(
    r"\[REDACTED:[a-z0-9_]+\][\"']?(?:(?P<eq>[ \t]*=[ \t]*)|[ \t]*:[ \t]*)"
    r"(?:(?P<q>[\"'])" + _NOT_MARKER + r"(?P<quoted>[^\"'\n]+)(?P=q)|" + _NOT_MARKER + r"(?P<bare>[^\s\"'`,;)\]}]+))"
)
_LOOKS_RANDOM = re.compile(r"(?=.*[0-9])\S{8,}")


def _after_marker_span(m: re.Match[str]) -> Span | None:
    start, end = _quoted_or_bare(m)
    return (start, end) if m["eq"] is not None or _LOOKS_RANDOM.fullmatch(m.string, start, end) else None


# --- 11: everyday phrasings with no separator ---------------------------------------------

# Mid words between a cue and its value: plain words ("PIN ATM aku 482913").
_PLAIN_WORDS = r"(?P<mid>(?:[ \t]+[A-Za-z]{1,20}){0,3})"
_EVERYDAY: tuple[tuple[str, re.Pattern[str]], ...] = (
    # "PIN ATM aku 482913": a PIN, up to three plain words, then 4 to 8 digits.
    (
        "pin",
        re.compile(
            r"(?<![A-Za-z0-9_])(?i:pin|passcode)(?:-?nya)?"
            + _PLAIN_WORDS
            + r"[ \t]+"
            + _NOT_MARKER
            + r"(?P<bare>[0-9]{4,8})(?![0-9A-Za-z_/-]|[.,:][0-9])"
        ),
    ),
    # "user admin / pass Indomie123": a user and then a password, with no separator after "pass".
    (
        "password",
        re.compile(
            r"(?i)(?<![A-Za-z0-9_])(?:user(?:name)?|usr|login|akun|account)[ \t]*[:=]?[ \t]*[^\s/:@,;|\[]{1,64}"
            r"[ \t]*(?:[/,;|][ \t]*|[ \t]+)(?:pass(?:word)?|passwd|pwd|pw|sandi)[ \t]+"
            + _NOT_MARKER
            + r"(?P<bare>[^\s\"'`,;]+)"
        ),
    ),
    # "login admin:Indomie123 di router": a login cue, then user:password.
    (
        "password",
        re.compile(
            r"(?i)(?<![A-Za-z0-9_])(?:login|log[ \t]+in|masuk|akun|account|creds?|credentials?|user(?:name)?)"
            r"[ \t]+(?:(?:pakai|pake|with|dengan|as|sebagai)[ \t]+)?[A-Za-z0-9._%+-]{1,64}:"
            + _NOT_MARKER
            + r"(?P<bare>[^\s\"'`,;@/]+)(?![@/])"
        ),
    ),
    # "wifi pass Abc12345zz", "pass wifi Abc12345zz": "pass" is no verb next to "wifi".
    (
        "password",
        re.compile(
            r"(?i)(?<![A-Za-z0-9_])(?:wi-?fi(?:-?nya)?[ \t]+pass|pass[ \t]+wi-?fi(?:-?nya)?)[ \t]+"
            + _NOT_MARKER
            + r"(?P<bare>[^\s\"'`,;]+)"
        ),
    ),
    # "passwd hunter2xyz": not the command ("sudo passwd deploy01", "$ passwd -l u").
    (
        "password",
        re.compile(
            r"(?<![A-Za-z0-9_./$`-])(?<!sudo )(?<!doas )(?<!\$ )(?<!# )(?i:passwd)[ \t]+"
            + _NOT_MARKER
            + r"(?P<bare>[^\s\"'`,;]+)"
        ),
    ),
)


# Words after "pin" that make it a connector's pin or a line, not a card's ("pin on line 1234").
_NOT_PIN_WORDS = frozenset(
    "on at in of to from line lines port gpio header row rows col column page step version no nomor number ke di "
    "pada baris".split()
)


def _everyday_span(m: re.Match[str]) -> Span | None:
    start, end = m.span("bare")
    value = m.string[start : _before_marker(m.string, start, end)].rstrip(".!?)")
    if m.re is _EVERYDAY[0][1]:
        words = (m["mid"] or "").lower().split()
        return None if any(w in _NOT_KEY_WORDS or w in _NOT_PIN_WORDS for w in words) else (start, start + len(value))
    if value.lower() in _NOT_VALUES or value.lower() in _PASS_VERB_WORDS or not _looks_like_secret(value):
        return None
    return (start, start + len(value))


# "Cookie: session=..." (and Set-Cookie): each cookie's value, in the header's value.
_COOKIE = re.compile(r"(?i)(?<![A-Za-z0-9_-])(?P<set>set-)?cookie[\"']?[ \t]*:[ \t]*(?P<value>[^\n\"'`]*)")
_COOKIE_PAIR = re.compile(r"(?P<name>[^=;\s]{1,64})=(?P<v>[^;\s\"'`]*)")
_COOKIE_NAME = re.compile(r"(?i)sess|sid|token|auth|jwt|csrf|xsrf|remember|login|key")


def _redact_cookies(text: str, marker: Callable[[str], str]) -> str:
    """Redact the cookies' values in each ``Cookie:`` header (the first pair of a ``Set-Cookie:``)."""
    out: list[str] = []
    pos = 0
    for header in _COOKIE.finditer(text):
        for i, pair in enumerate(_COOKIE_PAIR.finditer(text, header.start("value"), header.end("value"))):
            if header["set"] and i:
                break  # Path=/, Expires=...: attributes, not cookies
            start, end = pair.span("v")
            end = _before_marker(text, start, end)
            value = text[start:end]
            if not value or not (len(value) >= 8 or _COOKIE_NAME.search(pair["name"])):
                continue
            out.append(text[pos:start])
            out.append(marker("cookie"))
            pos = end
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)


# --- 12: a random string next to a credential word or a key id ------------------------------

# A run of base64 / base64url / hex characters, 20 or more; "~" for Azure client secrets.
_RANDOM_RUN = re.compile(r"(?<![A-Za-z0-9+/=_~.-])[A-Za-z0-9+/=_~-]{20,}+(?!\.?[A-Za-z0-9+/=_~-])")
_HEX = re.compile(r"[0-9a-fA-F]{32,}")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_CREDENTIAL_WORDS = frozenset(
    """
    secret secrets key keys token tokens password passwords passwd pass pwd passphrase passcode credential credentials
    creds
    apikey api_key access_key secret_key auth kunci rahasia sandi
    """.split()
)
# Words that say a random string is a hash, an id or data: it survives, however random.
_DATA_WORDS = frozenset(
    """
    sha sha1 sha256 sha384 sha512 md5 hash hashes digest checksum checksums commit commits rev revision fingerprint
    id ids uuid guid etag image images base64 public pub blob object oid tree nonce salt iv
    """.split()
)
# Words passed over between a credential word and its value.
_FILLER_WORDS = frozenset(
    "is are was = : := => - the my your our its a an adalah ialah yaitu aku saya gue gw ku nya ini itu baru new old "
    "lama nya:".split()
)
_LOOK_BACK = 4  # words
_SPLIT_ID = re.compile(r"[_.-]")


def _entropy_secret(run: str) -> bool:
    """Whether ``run`` is random enough to be a key: detect-secrets' Shannon entropy, with thresholds that keep
    words, paths, UUIDs and identifiers out; a hex run only from 32 characters, at its own (lower) scale."""
    if _UUID.fullmatch(run) or run.startswith("AAAA"):  # a UUID; an SSH public key's blob
        return False
    n = len(run)
    if _HEX.fullmatch(run):
        return _HEX_ENTROPY.calculate_shannon_entropy(run) >= 3.0
    if not (re.search(r"[0-9]", run) and re.search(r"[a-z]", run) and re.search(r"[A-Z]", run)):
        return False
    return _B64_ENTROPY.calculate_shannon_entropy(run) >= 0.75 * math.log2(min(n, 64))


def _credential_before(before: str) -> bool:
    """Whether the nearest telling word in the last few words of ``before`` (same line) names a credential or is a
    key id's marker; a word that names a hash or an id first keeps the string."""
    line_start = before.rfind("\n") + 1
    words = before[line_start:].split()[-_LOOK_BACK:]
    if not words:  # the run opens its line: an AWS key id that ends the line before pairs with it (AKIA...\nwJalr...)
        above = before[: max(0, line_start - 1)]
        above_words = above[above.rfind("\n") + 1 :].split()
        return bool(above_words) and "[REDACTED:aws_access_key]" in above_words[-1]
    for word in reversed(words):
        if word.startswith("[REDACTED:"):
            return True
        low = word.lower().strip("\"'`,;:=()[]{}<>")
        if low in _FILLER_WORDS or not low:
            continue
        parts = [p for p in _SPLIT_ID.split(low) if p]
        if low in _DATA_WORDS or (parts and parts[-1] in _DATA_WORDS):
            return False
        if low in _CREDENTIAL_WORDS or (parts and parts[-1] in _CREDENTIAL_WORDS):
            return True
    return False


_LOOK_BACK_CHARS = 400


def _tail(parts: list[str], n: int) -> str:
    """The last ``n`` characters of ``"".join(parts)``, without joining them all."""
    got: list[str] = []
    size = 0
    for part in reversed(parts):
        got.append(part)
        size += len(part)
        if size >= n:
            break
    return "".join(reversed(got))[-n:]


def _redact_random_runs(text: str, marker: Callable[[str], str]) -> str:
    """Redact each random run whose nearest words before it name a credential or a key id (see 12.)."""
    out: list[str] = []
    pos = 0
    for m in _RANDOM_RUN.finditer(text):
        run = m[0]
        if text.startswith("base64,", max(0, m.start() - 7)) or not _entropy_secret(run):
            continue
        out.append(text[pos : m.start()])
        if not _credential_before(_tail(out, _LOOK_BACK_CHARS)):
            out.append(run)
        else:
            out.append(marker("high_entropy"))
        pos = m.end()
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)


# --- the order they run in ---------------------------------------------------------------

_BEFORE_MNEMONICS: tuple[_Rule, ...] = (
    _rule("private_key", _PRIVATE_KEY, _whole),
    *(_rule(kind, pattern, _whole) for kind, pattern in _TOKENS),
    *_provider_rules(),
    *(_rule(kind, pattern, _partial_span) for kind, pattern in _PARTIAL),
    _rule("card_number", _CARD, _card_span),
)
_BEFORE_MNEMONICS_FILTER = Prefilter(tuple(r.gate for r in _BEFORE_MNEMONICS))
_CLI_FILTER = Prefilter(tuple(r.gate for r in _CLI_RULES))
_ASSIGNMENT_GATE = gate("password", _ASSIGNMENT)
_LOOSE_GATE = gate("password", _LOOSE_KEY)
_AFTER_MARKER_RULE = _rule("secret", _AFTER_MARKER, _after_marker_span)
_EVERYDAY_RULES: tuple[_Rule, ...] = tuple(_rule(kind, pattern, _everyday_span) for kind, pattern in _EVERYDAY)
_EVERYDAY_FILTER = Prefilter(tuple(r.gate for r in _EVERYDAY_RULES))
_COOKIE_GATE = gate("cookie", _COOKIE)
_B64_ENTROPY = Base64HighEntropyString()
_HEX_ENTROPY = HexHighEntropyString()

#: Every kind ``redact`` can write.
KINDS: tuple[str, ...] = tuple(
    sorted(
        {r.kind for r in (*_BEFORE_MNEMONICS, *_CLI_RULES)}
        | {"wallet_mnemonic", "password", "secret", "pin", "cookie", "high_entropy"}
    )
)

# A word glued to a digit or "_" is part of a token ("yellow4111", "abandon_1"), not a
# mnemonic word, so a run never ends next to a token that a marker would then expose.
_WORD = re.compile(r"(?<![A-Za-z0-9_])[A-Za-z]+(?![A-Za-z0-9_])")
# Possessive, so a long gap that fails (many spaces, then "!") fails in linear time.
_MNEMONIC_GAP = re.compile(r"(?:[\s,;]|\d++[.):]?|[-*•](?=\s))++")


def redact(text: str) -> Redaction:
    """Replace every recognised secret in ``text`` with ``[REDACTED:<kind>]``."""
    found: list[str] = []

    def marker(kind: str) -> str:
        found.append(kind)
        return _MARKER.format(kind)

    text = _apply(_BEFORE_MNEMONICS, _BEFORE_MNEMONICS_FILTER, text, marker)
    text = _redact_mnemonics(text, marker)
    text = _apply(_CLI_RULES, _CLI_FILTER, text, marker)
    if _ASSIGNMENT_GATE.admits(text):
        text = _redact_assignments(text, marker)
    if _LOOSE_GATE.admits(text):
        text = _redact_loose_passwords(text, marker)
    text = _apply(_EVERYDAY_RULES, _EVERYDAY_FILTER, text, marker)
    if _COOKIE_GATE.admits(text):
        text = _redact_cookies(text, marker)
    if found and _AFTER_MARKER_RULE.gate.admits(text):  # only a marker can hold a key
        text = _substitute(_AFTER_MARKER_RULE, text, marker)
    before = len(found)
    text = _redact_random_runs(text, marker)
    if len(found) > before and _AFTER_MARKER_RULE.gate.admits(text):  # a new marker may hold a key too
        text = _substitute(_AFTER_MARKER_RULE, text, marker)
    return Redaction(text=text, count=len(found), kinds=tuple(sorted(set(found))))


def _apply(rules: tuple[_Rule, ...], prefilter: Prefilter, text: str, marker: Callable[[str], str]) -> str:
    """Each rule in turn, on the output of the one before; only the rules the prefilter admits run."""
    # The admitted indices in order, not a membership test per rule: a text admits few of them.
    todo = sorted(prefilter.admitted(text), reverse=True)
    while todo:
        i = todo.pop()
        new = _substitute(rules[i], text, marker)
        if new is not text:
            text = new
            # A marker is new text: judge the rules after this one afresh.
            todo = sorted((j for j in prefilter.admitted(text) if j > i), reverse=True)
    return text


def _substitute(rule: _Rule, text: str, marker: Callable[[str], str]) -> str:
    """``text`` with the secret of each match of ``rule`` replaced; ``text`` itself when none."""
    if rule.gate.pattern.search(text) is None:
        return text  # most texts a rule is tried on hold no match: skip setting up the scan
    out: list[str] = []
    pos = 0
    matches = rule.matches(text)
    while (m := next(matches, None)) is not None:
        if m.start() < pos:  # inside a span that ran on past its match
            continue
        span = rule.span(m)
        if span is None or span[0] < pos or _inside_marker(text, span[0]):
            continue
        start, end = span
        if rule.whole_token:
            while start > pos and text[start - 1] in _TOKEN_SET:
                start -= 1
            tail = _TOKEN_TAIL.match(text, end)
            assert tail is not None, "the token tail matches the empty string too"
            end = tail.end()
        cut = _before_marker(text, start, end)
        if cut < end and rule.option is None:
            # A marker inside the match: what follows it is looked at afresh, as a rerun would.
            close = text.find("]", cut)
            matches = rule.matches(text, close + 1 if close >= 0 else cut + len("[REDACTED:"))
        if start == cut:
            continue
        out.append(text[pos:start])
        out.append(marker(rule.kind))
        pos = cut
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)


def _inside_marker(text: str, at: int) -> bool:
    """Whether ``at`` falls inside a marker (``https://[REDACTED:github_token]@`` is no ``user:password@``)."""
    opened = text.rfind("[REDACTED:", max(0, at - 40), at)
    return opened >= 0 and text.find("]", opened, at) < 0


def _before_marker(text: str, start: int, end: int) -> int:
    """``end``, or where a marker starts inside ``text[start:end]``: a secret never swallows a marker."""
    at = text.find("[REDACTED:", start, end)
    return end if at < 0 else at


def _redact_assignments(text: str, marker: Callable[[str], str]) -> str:
    """Redact assignment values; a rejected candidate resumes the scan one character on."""
    out: list[str] = []
    pos = 0
    # Not re.sub: a rejected "password is wrong" must not swallow a "token: x" inside it.
    while (m := _ASSIGNMENT.search(text, pos)) is not None:
        group = "quoted" if m["quoted"] is not None else "bare"
        start, end = m.span(group)
        value = text[start : _before_marker(text, start, end)]
        if m["verb"] is not None and group == "bare":
            value = value.rstrip("?!")
        if _accepted(m, value):
            end = start + len(value)
            if (
                m["pw"] is not None
                and group == "bare"
                and (m["sep"] or "").strip() == ":"
                and m["pw"].lower() != "passcode"
            ):  # a passcode is one word of digits
                end = _clause_end(text, end)
            kind = "pin" if m["pin"] is not None else "password" if m["pw"] is not None else "secret"
            out.append(text[pos:start])
            out.append(marker(kind))
            pos = end
        else:
            out.append(text[pos : m.start() + 1])
            pos = m.start() + 1
    out.append(text[pos:])
    return "".join(out)


def _accepted(m: re.Match[str], value: str) -> bool:
    """Whether an assignment's ``value`` (its text up to a marker) is a secret (see 9. in the module docstring)."""
    if not value:
        return False
    if m["verb"] is not None and m["quoted"] is None and not _LOOKS_LIKE_PASSWORD.match(value):
        return False
    if value.lower() in _NOT_VALUES or _PLACEHOLDER.match(value):
        return False
    if m["mid"] is not None:
        words = [w.lower() for w in m["mid"].split()]
        if any(w in _NOT_KEY_WORDS for w in words):
            return False
        # "pass wifi: X" is a password; "pass the flag: --verbose" and "Pass 1: scanning" are not.
        if (m["pw"] or "").lower() == "pass" and (
            any(w in _PASS_VERB_WORDS for w in words) or not _looks_like_secret(value)
        ):
            return False
    if m["pin"] is not None and not _PIN.fullmatch(value):
        return False
    # "API key: in .env" is talk about a key: written as two words, the value must look like one.
    if m["sec"] is not None and _WHITESPACE.search(m["sec"]) and not _looks_like_secret(value):
        return False
    # "kata kunci" is also a search keyword ("kata kunci: python"): a password only when it looks like one.
    if (m["pw"] or "").lower().startswith("kata") and "kunci" in m["pw"].lower() and not _looks_like_secret(value):
        return False
    if m["block"] is not None and not _REST_OF_LINE_BLANK.match(m.string, m.end()):
        return False
    return True


# A passphrase after "password:" runs to the end of its clause ("password: correct horse
# battery staple"): up to a line end, a "," or ";", a sentence's end, a closing bracket or
# quote, a dash, a marker, a word that is the next key ("user:"), or a word that joins clauses.
_CLAUSE_WORD = re.compile(r"[ \t]++([^\s,;\]\[)}>\"'`]++)")
_CLAUSE_JOINERS = frozenset(
    """
    and or but then so because if when while please thanks thx
    dan atau tapi tetapi lalu terus trus kemudian jadi karena soalnya kalau kalo biar supaya agar untuk buat
    ya yah dong deh kok sih nih tuh
    """.split()
)
_CLAUSE_WORDS = 8  # the longest passphrase looked for, in words


def _clause_end(text: str, end: int) -> int:
    """Where the clause a password value starts ends, the value ending at ``end``."""
    if end < len(text) and text[end] in ".!?" or text[end - 1] in ".!?":
        return end  # the value closes its sentence
    for _ in range(_CLAUSE_WORDS - 1):
        m = _CLAUSE_WORD.match(text, end)
        if m is None:
            return end
        word = m[1]
        if word.lower().rstrip(".!?") in _CLAUSE_JOINERS or word.endswith((":", "=")) or word[0] in "#-—–(":
            return end
        core = word.rstrip(".!?")
        if core != word:  # the sentence ends with this word
            return m.start(1) + len(core)
        end = m.end(1)
    return end


def _redact_loose_passwords(text: str, marker: Callable[[str], str]) -> str:
    """Redact the password after a password key and up to three words with no separator
    ("password wifi rumah Mawar123"); see 9. in the module docstring."""
    out: list[str] = []
    pos = at = 0
    # Not finditer: after a value the scan goes on from its end, where a rerun would
    # find a key ("...kata [REDACTED:password] sandi X" reads "sandi X" as a key's).
    while (key := _LOOSE_KEY.search(text, at)) is not None:
        span = _loose_value(text, key.end())
        if span is None:
            at = key.start() + 1
            continue
        out.append(text[pos : span[0]])
        out.append(marker("password"))
        pos = at = span[1]
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)


def _loose_value(text: str, pos: int) -> Span | None:
    """Where the password is in the words after a loose key ending at ``pos``, if anywhere."""
    for i in range(_LOOSE_WORDS + 1):
        m = _NEXT_WORD.match(text, pos)
        if m is None:
            return None
        start, end = m.span(1)
        if text[start] in "\"'`":  # a quoted value: the whole quote, or the phrase ends
            # Bounded, so a run of "password '" costs a bounded look at each key.
            close = text.find(text[start], start + 1, start + 1 + _LOOSE_QUOTED)
            if close < 0 or "\n" in text[start:close]:
                return None
            value = text[start + 1 : _before_marker(text, start + 1, close)]
            # A quoted phrase of three or more words right after the key is a passphrase.
            phrase = i == 0 and len(value.split()) >= 3
            return (
                (start + 1, close)
                if value == text[start + 1 : close] and (_looks_like_secret(value) or phrase)
                else None
            )
        word = m[1].lstrip("(<{")
        start += len(m[1]) - len(word)
        cut = word.find("[REDACTED:")
        body = word if cut < 0 else word[:cut]
        core = body.rstrip(".,;)!?>}]")
        if core.endswith((":", "=")):  # "password for admin1:": a label, and the assignment's business
            return None
        if _looks_like_secret(core):
            after = _NEXT_WORD.match(text, end)
            if after is not None and after[1].lower() in _LOOSE_STOP_AFTER:
                return None  # "password for admin123 is ...": the verbal form's business
            return (start, start + len(core))
        lower = core.lower()
        if (
            cut >= 0
            or core != word
            or i == _LOOSE_WORDS
            or not _LOOSE_MID_WORD.fullmatch(core)
            or lower in ("is", "adalah")
            or (lower in _NOT_KEY_WORDS and lower not in _CHANGE_WORDS)
        ):
            return None
        pos = m.end()
    return None


def _redact_mnemonics(text: str, marker: Callable[[str], str]) -> str:
    """Replace each maximal run of 12+ BIP39 words with one marker."""
    # A run needs 12 BIP39 words; most texts do not hold that many in all, and counting is cheap.
    # Shorter than 12 words of 3+ letters and the 11 gaps between them, a text holds no run.
    if len(text) < _MNEMONIC_MIN_CHARS:
        return text
    # On ASCII text str.lower changes letters only, so the words of the lowered text are
    # the lowered words (not so elsewhere: the Kelvin sign lowers to "k").
    words = _WORD.findall(text.lower()) if text.isascii() else [w.lower() for w in _WORD.findall(text)]
    if len(words) < _MNEMONIC_MIN_WORDS or sum(map(BIP39_ENGLISH.__contains__, words)) < _MNEMONIC_MIN_WORDS:
        return text
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


# --- the gate on every way out --------------------------------------------------------------

_ELLIPSIS = "…"
# A run a cut may not split: a cut inside a run this long drops the whole run, so no
# token's first characters are left to recognise ("1ghp_" and 34 more).
_CUT_RUN = re.compile(r"[A-Za-z0-9+/=_~.:%-]+")
_CUT_RUN_KEEP = 8  # a shorter run is a word, not a token: cut as it is


def redact_reason(text: str, limit: int | None = None, *, ellipsis: str = _ELLIPSIS) -> str:
    """``text`` as it may leave kenang (a reason, a count, an error, a log line, a table cell):
    redacted whole, and only then cut to ``limit`` characters (``ellipsis`` included).

    A cut never splits a marker, and never leaves the start of a run of token
    characters of 8 or more: the whole run goes, so a cut token is not half shown.
    """
    text = redact(text).text
    if limit is None or len(text) <= limit:
        return text
    cut = max(0, limit - len(ellipsis))
    opened = text.rfind("[REDACTED:", 0, cut + len("[REDACTED:") - 1)
    if 0 <= opened < cut and text.find("]", opened) >= cut:  # inside a marker: the whole marker goes
        cut = opened
    if 0 < cut < len(text):
        run = _CUT_RUN.match(text, cut)
        if run is not None and run.end() > cut:  # the cut falls inside (or at the start of) a run
            start = cut
            while start > 0 and _CUT_RUN.fullmatch(text[start - 1]):
                start -= 1
            if run.end() - start >= _CUT_RUN_KEEP and start < cut:
                cut = start
    return text[:cut].rstrip() + ellipsis


def redact_tree(value: object) -> object:
    """``value`` with every string in it (dict keys and values, list and tuple items) passed through
    ``redact_reason``; numbers, booleans, None and other values as they are. For run counts and JSON output."""
    if isinstance(value, str):
        return redact(value).text
    if isinstance(value, dict):
        return {redact_tree(k): redact_tree(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return (
            type(value)(redact_tree(v) for v in value)
            if isinstance(value, list)
            else tuple(redact_tree(v) for v in value)
        )
    return value


# --- identifiers ---------------------------------------------------------------------------

_ID_PREFIX = "redacted-"
# A file name's extensions: short lower-case words after the stem (".md", ".summary.md").
_EXTENSIONS = re.compile(r"(?:\.[a-z][a-z0-9]{0,9})+\Z")


def _stable_id(value: str) -> str:
    return _ID_PREFIX + hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def redact_identifier(value: str) -> str:
    """``value`` when it holds no secret, else ``redacted-<12 hex of its sha256>``: stable, one per value."""
    return value if redact(value).count == 0 else _stable_id(value)


@functools.lru_cache(maxsize=1024)  # a user id repeats on every line of a transcript that carries it
def redact_user_id(typed: str) -> str:
    """A user id as kenang keeps it: ``typed`` in lower case, or ``redacted-<12 hex>`` when that valid id holds a
    secret: lower-cased (the hash ``redact_identifier`` gives it), else as typed (a rule that knows a key by its
    case must see the case it came in). An id that is no valid user id comes back lower-cased, for its caller to
    refuse."""
    typed = typed.strip()
    user = typed.lower()
    if not USER_ID_RE.fullmatch(user):
        return user
    if redact(user).count:
        return _stable_id(user)
    return _stable_id(typed) if redact(typed).count else user


def printable_name(name: str) -> str:
    """A file name as kenang records and prints it: bytes that are no UTF-8 and control
    characters (a newline, a tab) become ``\\xNN`` escapes; any other name is itself."""
    if name.isprintable():
        try:
            name.encode("utf-8")
            return name
        except UnicodeEncodeError:
            pass
    text = name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return "".join(c if c.isprintable() else f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}" for c in text)


def redact_file_name(name: str) -> str:
    """``name`` with its stem replaced as ``redact_identifier`` would when the name holds a secret; extensions kept."""
    m = _EXTENSIONS.search(name)
    stem, extensions = (name[: m.start()], m[0]) if m is not None and m.start() > 0 else (name, "")
    if redact(name).count == 0 and redact(stem).count == 0:
        return name
    return _stable_id(stem) + extensions
