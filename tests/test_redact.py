"""Secrets are redacted before anything reaches a table, an index or an LLM.

Every fake secret here is built by concatenation so that no secret scanner trips on
this file.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schemas.wordlists import BIP39_ENGLISH
from transforms.redact import Redaction, redact

AWS = "AK" + "IA" + "IOSFODNN7EXAMPLE"
GITHUB = "gh" + "p_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
GITHUB_PAT = "github" + "_pat_" + "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz"
OPENAI = "s" + "k-" + "proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8t"
OPENAI_CLASSIC = "s" + "k-" + "T3BlbkFJ" + "a1b2c3d4e5f6g7h8i9j0"
ANTHROPIC = "s" + "k-" + "ant-" + "api03-" + "Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2"
SLACK = "xo" + "xb-" + "123456789012-abcdefABCDEF"
JWT = "ey" + "JhbGciOiJIUzI1NiJ9" + "." + "ey" + "JzdWIiOiIxMjM0In0" + "." + "c2lnbmF0dXJl"
PEM = (
    "-----BEGIN " + "OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n"
    "-----END " + "OPENSSH PRIVATE KEY-----"
)
MNEMONIC = (
    "legal winner thank year wave sausage worth useful legal winner thank yellow".split()
)


# --- each kind ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("secret", "kind"),
    [
        (AWS, "aws_access_key"),
        ("AS" + "IA" + "ABCDEFGHIJ234567", "aws_access_key"),
        (GITHUB, "github_token"),
        ("gh" + "o_" + "Zx9" * 12, "github_token"),
        ("gh" + "s_" + "Zx9" * 12, "github_token"),
        ("gh" + "u_" + "Zx9" * 12, "github_token"),
        (GITHUB_PAT, "github_token"),
        (OPENAI, "openai_key"),
        (OPENAI_CLASSIC, "openai_key"),
        (ANTHROPIC, "anthropic_key"),
        (SLACK, "slack_token"),
        ("xo" + "xp-" + "1234-5678-abcdef", "slack_token"),
        (JWT, "jwt"),
    ],
)
def test_a_token_with_a_known_shape_is_redacted_whole(secret: str, kind: str):
    result = redact(f"pakai ini ya: {secret} lalu restart")
    assert result.text == f"pakai ini ya: [REDACTED:{kind}] lalu restart"
    assert (result.count, result.kinds) == (1, (kind,))


def test_a_private_key_block_is_redacted_up_to_its_end_line():
    result = redact(f"kunci saya:\n{PEM}\nsudah.")
    assert result.text == "kunci saya:\n[REDACTED:private_key]\nsudah."
    assert result.kinds == ("private_key",)


def test_a_private_key_cut_off_before_its_end_line_is_redacted_to_the_end():
    result = redact("here:\n-----BEGIN " + "RSA PRIVATE KEY-----\nMIIEow\nIBAAKCAQEA")
    assert result.text == "here:\n[REDACTED:private_key]"


def test_a_public_key_is_not_a_secret():
    text = "-----BEGIN PUBLIC KEY-----\nMFkwEwYH\n-----END PUBLIC KEY-----"
    assert redact(text).text == text


def test_a_bearer_token_is_redacted_but_the_header_kept():
    result = redact('curl -H "Authorization: Bearer abc.DEF-ghi_123" https://api')
    assert result.text == 'curl -H "Authorization: Bearer [REDACTED:bearer]" https://api'
    assert result.kinds == ("bearer",)


def test_a_bearer_token_in_a_quoted_header_or_standing_alone_is_redacted():
    assert redact('{"Authorization": "Bearer abc"}').text == '{"Authorization": "Bearer [REDACTED:bearer]"}'
    assert redact("use Bearer " + "Ab1" * 8).text == "use Bearer [REDACTED:bearer]"


def test_only_the_password_of_url_credentials_is_redacted():
    result = redact("DATABASE_URL=postgres://kenang:" + "Pa55word" + "@db.lan:5432/kenang")
    assert result.text == "DATABASE_URL=postgres://kenang:[REDACTED:url_credentials]@db.lan:5432/kenang"


@pytest.mark.parametrize(
    ("text", "expected", "kind"),
    [
        ("password: hunter2", "password: [REDACTED:password]", "password"),
        ("password=hunter2", "password=[REDACTED:password]", "password"),
        ("PASSWD = 'two words'", "PASSWD = '[REDACTED:password]'", "password"),
        ("pwd: x1", "pwd: [REDACTED:password]", "password"),
        ("pass: abc", "pass: [REDACTED:password]", "password"),
        ("DB_PASSWORD=s3cret!", "DB_PASSWORD=[REDACTED:password]", "password"),
        ('{"password": "abc"}', '{"password": "[REDACTED:password]"}', "password"),
        ("kata sandi: rahasia", "kata sandi: [REDACTED:password]", "password"),
        ("kata sandi adalah kucing123", "kata sandi adalah [REDACTED:password]", "password"),
        ("sandi=rahasia", "sandi=[REDACTED:password]", "password"),
        ("my password is hunter2.", "my password is [REDACTED:password].", "password"),
        ("secret: abc", "secret: [REDACTED:secret]", "secret"),
        ("client_secret=abc", "client_secret=[REDACTED:secret]", "secret"),
        ("token: abc", "token: [REDACTED:secret]", "secret"),
        ("access_token=abc", "access_token=[REDACTED:secret]", "secret"),
        ("api_key: abc", "api_key: [REDACTED:secret]", "secret"),
        ("apikey=abc", "apikey=[REDACTED:secret]", "secret"),
        ("x-api-key: abc", "x-api-key: [REDACTED:secret]", "secret"),
        ("the token is 'abc def'", "the token is '[REDACTED:secret]'", "secret"),
    ],
)
def test_an_assignment_keeps_its_key_and_loses_its_value(text: str, expected: str, kind: str | None):
    result = redact(text)
    assert result.text == expected
    assert result.kinds == ((kind,) if kind else ())


def test_a_twelve_word_mnemonic_is_redacted_whole():
    result = redact("seed phrase saya: " + " ".join(MNEMONIC) + " tolong simpan")
    assert result.text == "seed phrase saya: [REDACTED:wallet_mnemonic] tolong simpan"
    assert result.kinds == ("wallet_mnemonic",)


def test_a_numbered_comma_or_upper_case_mnemonic_is_redacted_whole():
    numbered = "\n".join(f"{i}. {w}" for i, w in enumerate(MNEMONIC, start=1))
    assert redact(numbered).text == "1. [REDACTED:wallet_mnemonic]"
    assert redact(", ".join(w.upper() for w in MNEMONIC)).text == "[REDACTED:wallet_mnemonic]"


@pytest.mark.parametrize("n", [15, 18, 21, 24])
def test_longer_mnemonics_are_redacted_whole(n: int):
    words = (MNEMONIC * 2)[:n]
    assert redact(" ".join(words)).text == "[REDACTED:wallet_mnemonic]"


def test_eleven_bip39_words_in_a_row_are_left_alone():
    text = " ".join(MNEMONIC[:11])
    assert redact(text).text == text


def test_a_secret_inside_an_assignment_counts_once():
    result = redact("OPENAI_API_KEY=" + OPENAI)
    assert result.text == "OPENAI_API_KEY=[REDACTED:openai_key]"
    assert result.count == 1


def test_count_and_kinds_cover_every_secret():
    result = redact(f"{GITHUB} {GITHUB} password: x1 {AWS}")
    assert result.count == 4
    assert result.kinds == ("aws_access_key", "github_token", "password")


# --- false positives ----------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "I need to check the order of the boot process again today",
        "Pagi! Aku mau lanjut setup boot order server homelab di Proxmox.",
        "Kalau urutannya benar, postgres muncul dengan order=1 dan startup delay 30 detik.",
        "Tolong cek lagi apakah backup job sudah selesai sebelum jam dua pagi.",
        "The password is wrong, and the token is expired; please reset the secret.",
        "Kata sandinya salah, coba lagi nanti ya.",
        "def login(user: str, password: str) -> bool:",
        "We use sk-learn-compatible estimators and a bearer token scheme.",
        "Visit https://example.com/docs and user@example.com for help.",
        "Keep the Bearer tokens short-lived.",
        "abandon ability able about above absent absorb abstract absurd abuse, then stop.",
        "Task-abcdefghijklmnopqrstuvwxyz is done; see ticket ASIA-2026 and AKIA.",
    ],
)
def test_ordinary_sentences_are_left_alone(text: str):
    result = redact(text)
    assert result == Redaction(text=text, count=0, kinds=())


def test_the_bip39_word_list_is_complete():
    assert len(BIP39_ENGLISH) == 2048
    assert {"abandon", "zoo", "legal", "winner"} <= BIP39_ENGLISH


# --- idempotence --------------------------------------------------------------


PIECES = [
    AWS, GITHUB, GITHUB_PAT, OPENAI, ANTHROPIC, SLACK, JWT, PEM, " ".join(MNEMONIC),
    "Authorization: Bearer tok123", "https://u:p4ss@h", "password: x", "kata sandi adalah abc123",
    "token=", "secret is", " ", "\n", ": ", "=", "'", '"', "[REDACTED:", "]", "1. ", ",", "legal",
    "winner", "the", "yang", "api_key", "Bearer ", "://", "@", "-----BEGIN ", "PRIVATE KEY-----",
]


@settings(max_examples=150)
@given(st.lists(st.sampled_from(PIECES) | st.text(max_size=8), max_size=20).map("".join))
def test_redaction_is_idempotent(text: str):
    once = redact(text)
    twice = redact(once.text)
    assert twice.text == once.text
    assert twice.count == 0 and twice.kinds == ()


@pytest.mark.parametrize("text", [f"{PEM}\n{GITHUB}", "password: " + " ".join(MNEMONIC), "token: " + JWT])
def test_redacting_redacted_text_changes_nothing(text: str):
    once = redact(text)
    assert once.count >= 1
    assert redact(once.text) == Redaction(text=once.text, count=0, kinds=())
