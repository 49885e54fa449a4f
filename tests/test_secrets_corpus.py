"""No secret in the fake-secret corpus survives redaction, not even a long piece of one."""

from __future__ import annotations

import base64
import re
from collections import Counter

import pytest
from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
from detect_secrets.plugins.base import RegexBasedDetector
from secrets_corpus import CORPUS_PATH, SecretEntry, load_corpus

from transforms.redact import redact

CORPUS = load_corpus()
# Published BIP39 test vectors: a seed made of these is public by construction.
TEST_VECTOR_WORDS = frozenset(
    "abandon about art zoo wrong vote legal winner thank year wave sausage worth useful yellow "
    "letter advice cage absurd amount doctor acoustic avoid above".split()
)
REQUIRED_KINDS = {
    "aws_access_key",
    "github_token",
    "slack_token",
    "openai_key",
    "anthropic_key",
    "jwt",
    "private_key",
    "password",
    "url_credentials",
    "bearer",
    "wallet_mnemonic",
    "stripe_key",
    "google_api_key",
    "gitlab_token",
    "npm_token",
    "pypi_token",
    "digitalocean_token",
    "sendgrid_key",
    "telegram_bot_token",
    "slack_webhook",
    "discord_webhook",
    "huggingface_token",
    "azure_storage_key",
    "card_number",
    "pin",
    "secret",
}
# Published test numbers (Visa's, Stripe's) and a PIN nobody keeps: fake by construction.
TEST_CARDS = frozenset({"4111 1111 1111 1111", "4242424242424242"})
TEST_PINS = frozenset({"1234"})
WINDOW = 12


def _id(entry: SecretEntry) -> str:
    return f"{entry.kind}-{CORPUS.index(entry)}"


# --- the corpus itself --------------------------------------------------------


def test_the_corpus_has_thirty_entries_or_more_covering_every_required_kind():
    assert len(CORPUS) >= 30
    assert REQUIRED_KINDS <= {e.kind for e in CORPUS}
    assert len({e.text for e in CORPUS}) == len(CORPUS)


def test_the_corpus_covers_each_variant_the_rule_names():
    secrets = [e.secret for e in CORPUS]
    for prefix in ["AKIA", "ASIA", "ghp_", "github_pat_", "xoxb-", "sk-proj-", "sk-ant-", "eyJ"]:
        assert any(s.startswith(prefix) for s in secrets), prefix
    assert any(s.startswith("sk-") and not s.startswith(("sk-proj-", "sk-ant-")) for s in secrets)
    for pem in ["RSA", "OPENSSH", "EC"]:
        assert any(s.startswith(f"-----BEGIN {pem} PRIVATE KEY-----") for s in secrets), pem
    for scheme in ["postgresql", "mysql", "redis"]:
        assert any(e.kind == "url_credentials" and f"{scheme}://" in e.text for e in CORPUS), scheme
    assert any(e.kind == "password" and "password: " in e.text for e in CORPUS)
    assert any(e.kind == "password" and "kata sandi: " in e.text for e in CORPUS)
    assert any(e.kind == "bearer" and "Authorization: Bearer " in e.text for e in CORPUS)
    for prefix in [
        "sk_live_",
        "sk_test_",
        "AIza",
        "glpat-",
        "npm_",
        "pypi-",
        "dop_v1_",
        "SG.",
        "https://hooks.slack.com/",
    ]:
        assert any(s.startswith(prefix) for s in secrets), prefix
    assert any(e.kind == "password" and "kata sandi wifi rumah: " in e.text for e in CORPUS)
    for command in ["mysqldump", "redis-cli", "curl", "sshpass", "smbclient", "mongosh"]:
        assert any(e.kind == "password" and command in e.text for e in CORPUS), command
    lengths = Counter(len(re.findall(r"[a-z]+", e.secret)) for e in CORPUS if e.kind == "wallet_mnemonic")
    assert lengths[12] >= 1 and lengths[24] >= 1


@pytest.mark.parametrize("entry", CORPUS, ids=_id)
def test_every_secret_is_obviously_fake(entry: SecretEntry):
    if entry.kind == "wallet_mnemonic":
        assert set(re.findall(r"[a-z]+", entry.secret)) <= TEST_VECTOR_WORDS
        return
    if entry.kind == "card_number" or entry.kind == "pin":
        assert entry.secret in TEST_CARDS | TEST_PINS
        return
    value = entry.secret
    if entry.kind == "basic_auth":
        value = base64.b64decode(value).decode()
    assert re.search("FAKE|EXAMPLE", value, re.IGNORECASE), entry.secret


def test_the_corpus_file_holds_no_secret_a_scanner_would_read_whole():
    raw = CORPUS_PATH.read_text(encoding="utf-8")
    scanner_shapes = [
        r"(?:AKIA|ASIA)[A-Z0-9]{16}",
        r"gh[pousr]_[A-Za-z0-9]{20}",
        r"github_pat_",
        r"xox[abposr]-",
        r"sk-[A-Za-z0-9]",
        r"BEGIN [A-Z ]*PRIVATE KEY",
        r"END [A-Z ]*PRIVATE KEY",
        r"eyJ[A-Za-z0-9_-]+\.eyJ",
        r"tskey-",
        r"hf_[A-Za-z0-9]{30}",
        r"[sr]k_(?:live|test)_",
        r"AIza[0-9A-Za-z_-]{35}",
        r"glpat-",
        r"npm_[A-Za-z0-9]{36}",
        r"pypi-AgE",
        r"do[opr]_v1_",
        r"SG\.[A-Za-z0-9_-]{22}\.",
        r"\d{8,10}:AA",
        r"hooks\.slack\.com/services/",
        r"discord(?:app)?\.com/api/webhooks/",
        r"PuTTY-User-Key-File",
    ]
    for shape in scanner_shapes:
        assert not re.search(shape, raw), shape


# --- redaction ----------------------------------------------------------------


@pytest.mark.parametrize("entry", CORPUS, ids=_id)
def test_redaction_removes_the_secret_and_counts_it(entry: SecretEntry):
    result = redact(entry.text)
    assert entry.secret in entry.text
    assert entry.secret not in result.text
    assert result.count >= 1
    assert entry.kind in result.kinds


@pytest.mark.parametrize("entry", CORPUS, ids=_id)
def test_no_long_piece_of_a_secret_survives_redaction(entry: SecretEntry):
    redacted = redact(entry.text).text
    rest = entry.text.replace(entry.secret, "\0")
    for i in range(len(entry.secret) - WINDOW + 1):
        piece = entry.secret[i : i + WINDOW]
        if piece not in rest:
            assert piece not in redacted, piece


@pytest.mark.parametrize("entry", CORPUS, ids=_id)
def test_the_words_around_a_secret_survive_redaction(entry: SecretEntry):
    before, after = entry.text.split(entry.secret)
    redacted = redact(entry.text).text
    # A mnemonic run may swallow a neighbouring BIP39 word; everything else keeps its context.
    if entry.kind != "wallet_mnemonic":
        assert redacted.startswith(before) and redacted.endswith(after)


# Every regex-based detect-secrets plugin but the public-IP one, the left-out ones too.
SCANNERS = [
    p
    for p in get_mapping_from_secret_type_to_class().values()
    if issubclass(p, RegexBasedDetector) and p.__name__ != "IPPublicDetector"
]


@pytest.mark.parametrize("entry", CORPUS, ids=_id)
def test_detect_secrets_finds_nothing_in_a_redacted_message(entry: SecretEntry):
    redacted = redact(entry.text).text
    found = [(p.__name__, m[0]) for p in SCANNERS for pattern in p.denylist for m in pattern.finditer(redacted)]
    assert found == []


def test_all_the_secrets_in_one_transcript_are_redacted_and_counted():
    # A key pasted without its END line is redacted to the end of the text, so it goes last.
    cut_last = sorted(CORPUS, key=lambda e: e.kind == "private_key" and "-----END" not in e.secret)
    transcript = "\n\n".join(e.text for e in cut_last)
    result = redact(transcript)
    assert not [e.secret for e in CORPUS if e.secret in result.text]
    assert result.count >= len(CORPUS)
    assert redact(result.text).count == 0


# --- the redactor's rules added for this corpus do not over-reach -------------


@pytest.mark.parametrize(
    "text",
    [
        "bypass: true",
        "compass: north",
        "passwordless: true",
        "tokens.map(token => token.trim())",
        "if (password == other) return",
        "password := readline()",
        "from huggingface_hub import hf_hub_download",
        "Tailscale calls them tskey values",
        "The header is Authorization: Basic, then base64.",
        "Kata sandinya salah, coba lagi nanti ya.",
    ],
)
def test_the_new_rules_leave_ordinary_text_alone(text: str):
    assert redact(text).count == 0
