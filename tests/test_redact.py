"""Secrets are redacted before anything reaches a table, an index or an LLM.

Every fake secret here is built by concatenation so that no secret scanner trips on
this file.
"""

from __future__ import annotations

import hashlib
import re

import pytest
from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
from detect_secrets.plugins.base import RegexBasedDetector
from detect_secrets.plugins.private_key import PrivateKeyDetector
from hypothesis import given, settings
from hypothesis import strategies as st

from schemas.patterns import FOLD_UNSAFE
from schemas.wordlists import BIP39_ENGLISH
from transforms import redact as redact_module  # private rule tables, for the prefilter tests
from transforms.redact import (
    EXCLUDED_PLUGINS,
    KINDS,
    PROVIDER_PLUGINS,
    Redaction,
    redact,
    redact_file_name,
    redact_identifier,
    redact_reason,
    redact_tree,
)

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
MNEMONIC = "legal winner thank year wave sausage worth useful legal winner thank yellow".split()


def fill(n: int) -> str:
    """``n`` characters of an obviously fake token body."""
    return ("FAKE0000EXAMPLE0000fake" * 10)[:n]


def lower_fill(n: int) -> str:
    return ("fake0000example0000" * 10)[:n]


STRIPE = "s" + "k_live_" + fill(24)
GOOGLE = "AI" + "za" + fill(35)
NPM = "np" + "m_" + fill(36)
PYPI = "pypi-" + "AgEIcHlwaS5vcmc" + fill(80)
GITLAB = "gl" + "pat-" + fill(20)
SENDGRID = "S" + "G." + fill(22) + "." + fill(43)
TELEGRAM = "1234567" + "89:AA" + fill(33)
SLACK_WEBHOOK = "https://hooks.slack" + ".com/services/TFAKE0000/BEXAMPLE00/" + fill(24)
DISCORD_WEBHOOK = "https://discord" + ".com/api/webhooks/123456789012345678/" + fill(40)
GOOGLE_OAUTH = "ya" + "29." + "a0AfH6SM" + fill(60)
GOOGLE_OAUTH_SECRET = "GOC" + "SPX-" + fill(28)
DOCKER = "dckr" + "_pat_" + fill(27)
SLACK_APP = "xa" + "pp-1-" + "A0FAKE00000-1234567890123-" + "0123456789abcdef" * 4
GRAFANA = "gl" + "c_" + fill(60) + "=="
SHOPIFY = "shp" + "at_" + "0123456789abcdef" * 2
GROQ = "gs" + "k_" + fill(52)


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
        # kenang's own shapes for what detect-secrets lacks
        (GOOGLE, "google_api_key"),
        (STRIPE, "stripe_key"),
        ("r" + "k_live_" + fill(30), "stripe_key"),
        ("s" + "k_test_" + fill(24), "stripe_key"),
        ("wh" + "sec_" + fill(32), "stripe_key"),
        (NPM, "npm_token"),
        ("do" + "p_v1_" + "fa" * 32, "digitalocean_token"),
        ("h" + "f_" + fill(34), "huggingface_token"),
        (DISCORD_WEBHOOK, "discord_webhook"),
        (GOOGLE_OAUTH, "google_oauth_token"),
        ("ya" + "29.c." + "b0Aaek" + fill(40), "google_oauth_token"),  # a service account's, dot-joined
        (GOOGLE_OAUTH_SECRET, "google_oauth_secret"),
        (DOCKER, "docker_token"),
        ("dckr" + "_oat_" + fill(32), "docker_token"),
        (SLACK_APP, "slack_token"),
        (GRAFANA, "grafana_token"),
        ("gl" + "sa_" + fill(32) + "_" + "0123abcd", "grafana_token"),
        (SHOPIFY, "shopify_token"),
        ("shp" + "ss_" + "0123456789abcdef" * 2, "shopify_token"),
        ("shp" + "ca_" + "0123456789ABCDEF" * 2, "shopify_token"),
        ("shp" + "pa_" + "fedcba9876543210" * 2, "shopify_token"),
        (GROQ, "groq_key"),
        # detect-secrets' provider formats
        (GITLAB, "gitlab_token"),
        (PYPI, "pypi_token"),
        (SENDGRID, "sendgrid_key"),
        (TELEGRAM, "telegram_bot_token"),
        (SLACK_WEBHOOK, "slack_webhook"),
        ("M" + fill(23) + "." + fill(6) + "." + fill(27), "discord_token"),
        ("A" + "C" + lower_fill(32), "twilio_key"),
        ("S" + "K" + lower_fill(32), "twilio_key"),
        (lower_fill(32) + "-us" + "12", "mailchimp_key"),
        ("sq0" + "csp-" + fill(43), "square_oauth_secret"),
        ("AK" + "C" + fill(20), "artifactory_token"),
        ("AC" + "CA" + "FAKE0EXAMPLE0000", "aws_access_key"),
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


def test_a_token_is_redacted_whole_even_past_the_length_detect_secrets_names():
    # detect-secrets matches sk_live_ + 24 characters; live keys are longer, and the rest goes too.
    long_key = "s" + "k_live_" + fill(99)
    assert redact(f"key {long_key}.").text == "key [REDACTED:stripe_key]."


@pytest.mark.parametrize(
    ("text", "expected", "kind"),
    [
        (
            "AccountName=nas;AccountKey=" + fill(86) + "==;EndpointSuffix=core.windows.net",
            "AccountName=nas;AccountKey=[REDACTED:azure_storage_key];EndpointSuffix=core.windows.net",
            "azure_storage_key",
        ),
        (
            'ibm_cloud_api_key = "' + fill(44) + '"',
            'ibm_cloud_api_key = "[REDACTED:ibm_cloud_iam_key]"',
            "ibm_cloud_iam_key",
        ),
        (
            'cos_hmac_secret_access_key = "' + "0123456789abcdef" * 3 + '"',
            'cos_hmac_secret_access_key = "[REDACTED:ibm_cos_hmac_key]"',
            "ibm_cos_hmac_key",
        ),
        ("softlayer_api_key: " + lower_fill(64), "softlayer_api_key: [REDACTED:softlayer_key]", "softlayer_key"),
        (
            'cloudant_password = "' + "0123456789abcdef" * 4 + '"',
            'cloudant_password = "[REDACTED:cloudant_key]"',
            "cloudant_key",
        ),
        (
            "aws_secret_key = '" + fill(40) + "'",
            "aws_secret_key = '[REDACTED:aws_access_key]'",
            "aws_access_key",
        ),
    ],
)
def test_a_detect_secrets_assignment_keeps_its_key_and_loses_only_its_secret(text: str, expected: str, kind: str):
    result = redact(text)
    assert (result.text, result.kinds) == (expected, (kind,))


def test_detect_secrets_assignment_patterns_in_their_linear_spelling_match_what_they_matched():
    rewritten = [(p, redact_module._linear(p)) for plugin in PROVIDER_PLUGINS for p in plugin.denylist]
    rewritten = [(old, new) for old, new in rewritten if old is not new]
    assert len(rewritten) == 5  # Cloudant's two, IBM's two, SoftLayer's one
    values = ["0123456789abcdef" * 4, lower_fill(64), "abcdefghijklmnopqrstuvwx", fill(44), "0123456789abcdef" * 3]
    keys = [
        "cloudant_password",
        "cl_key",
        "ibm_cloud_iam_key",
        "ibm_api_key",
        "cos_hmac_secret_access_key",
        "softlayer_api_key",
        '["sl_token"]',
    ]
    operators = ["=", ":", ":=", "=>", "::", " ", "  =  ", " :: ", " => ", "\t=", "=\n"]
    for old, new in rewritten:
        for key in keys:
            for op in operators:
                for value in values:
                    for text in (f"{key}{op}{value}", f"x {key}{op}'{value}' y", f'{{"{key}"{op}"{value}"}}'):
                        a, b = old.search(text), new.search(text)
                        assert (a and (a.span(), a.groups())) == (b and (b.span(), b.groups())), (old.pattern, text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("//registry.npmjs.org/:_authToken=" + NPM, "//registry.npmjs.org/:_authToken=[REDACTED:npm_token]"),
        ("//npm.lan/:_authToken=" + "0123abcd-" * 4 + "ffff # CI", "//npm.lan/:_authToken=[REDACTED:secret] # CI"),
        ("key " + "s" + "k-" + fill(20) + "T3Blbk" + "FJ" + fill(20), "key [REDACTED:openai_key]"),
        ("s" + "k-proj-abc-" + fill(20) + "T3Blbk" + "FJ" + fill(20), "[REDACTED:openai_key]"),
    ],
)
def test_what_the_left_out_npm_and_openai_plugins_match_kenangs_own_rules_redact(text: str, expected: str):
    assert redact(text).text == expected


def test_an_ibm_pattern_that_does_not_name_ibm_leaves_the_secret_to_kenangs_own_kinds():
    assert redact('api_key = "' + fill(44) + '"').text == 'api_key = "[REDACTED:secret]"'


def test_every_regex_detect_secrets_plugin_is_used_or_left_out_for_a_stated_reason():
    plugins = set(get_mapping_from_secret_type_to_class().values())
    used = set(PROVIDER_PLUGINS)
    assert used <= plugins
    assert {p.__name__ for p in plugins - used} == set(EXCLUDED_PLUGINS)
    assert all(issubclass(p, RegexBasedDetector) for p in used)
    assert set(PROVIDER_PLUGINS.values()) <= set(KINDS)


@pytest.mark.parametrize("header", [p.pattern for p in PrivateKeyDetector.denylist])
def test_every_private_key_header_detect_secrets_knows_is_redacted_with_its_whole_block(header: str):
    if header.startswith("PuTTY"):
        key = (
            header + ": ssh-rsa\nEncryption: none\nComment: FAKE\nPublic-Lines: 1\nAAAAB3FAKE\n"
            "Private-Lines: 1\nAAAAFAKEprivate\nPrivate-MAC: 0123456789abcdef"
        )
    elif "SSH2" in header:
        key = f"---- {header} ----\nFAKEbody\n---- {header.replace('BEGIN', 'END')} ----"
    else:
        key = f"-----{header}-----\nFAKEbody\n-----{header.replace('BEGIN', 'END')}-----"
    result = redact(f"kunci:\n{key}\nselesai")
    assert result.text == "kunci:\n[REDACTED:private_key]\nselesai"
    assert not any(p.search(result.text) for p in PrivateKeyDetector.denylist)


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
        # everyday phrasings, Indonesian and English
        ("kata sandi wifi rumah: Mawar123", "kata sandi wifi rumah: [REDACTED:password]", "password"),
        ("password wifi: kucing99", "password wifi: [REDACTED:password]", "password"),
        ("password root MySQL: S3cret", "password root MySQL: [REDACTED:password]", "password"),
        ("Password yang baru: kucingku", "Password yang baru: [REDACTED:password]", "password"),
        ("pw: hunter22", "pw: [REDACTED:password]", "password"),
        ("pwd=hunter22", "pwd=[REDACTED:password]", "password"),
        ("passwordnya kucing123", "passwordnya [REDACTED:password]", "password"),
        ("passwordnya: kucing", "passwordnya: [REDACTED:password]", "password"),
        ("sandinya: rahasia", "sandinya: [REDACTED:password]", "password"),
        ("the password is: hunter2", "the password is: [REDACTED:password]", "password"),
        ("the password for the router is hunter2!", "the password for the router is [REDACTED:password]!", "password"),
        ("  password: s3cret", "  password: [REDACTED:password]", "password"),
        (
            "db:\n  password:\n    s3cret\n  user: app",
            "db:\n  password:\n    [REDACTED:password]\n  user: app",
            "password",
        ),
        ("password: |\n  s3cret", "password: |\n  [REDACTED:password]", "password"),
        ("PIN ATM: 1234", "PIN ATM: [REDACTED:pin]", "pin"),
        ("pin: 123456", "pin: [REDACTED:pin]", "pin"),
        ("PIN-nya 4321", "PIN-nya [REDACTED:pin]", "pin"),
        # any key whose name holds a secret word
        ("STRIPE_SECRET_KEY=abc", "STRIPE_SECRET_KEY=[REDACTED:secret]", "secret"),
        ("SECRET_KEY_BASE=abc", "SECRET_KEY_BASE=[REDACTED:secret]", "secret"),
        ("db.password=abc", "db.password=[REDACTED:password]", "password"),
        ("ADMIN_PASSWORD_HASH=abc", "ADMIN_PASSWORD_HASH=[REDACTED:password]", "password"),
        ("DB_PASSWORD2=abc", "DB_PASSWORD2=[REDACTED:password]", "password"),
        ("MY_APP_TOKEN: abc", "MY_APP_TOKEN: [REDACTED:secret]", "secret"),
        ('"apiKey": "abc"', '"apiKey": "[REDACTED:secret]"', "secret"),
        ("auth_token = 'abc'", "auth_token = '[REDACTED:secret]'", "secret"),
        ("GITHUB_TOKEN=abc", "GITHUB_TOKEN=[REDACTED:secret]", "secret"),
        ("MINIO_ACCESS_KEY=abc", "MINIO_ACCESS_KEY=[REDACTED:secret]", "secret"),
        ("private_key: abc", "private_key: [REDACTED:secret]", "secret"),
        ("auth_key=abc", "auth_key=[REDACTED:secret]", "secret"),
        ("credentials: abc", "credentials: [REDACTED:secret]", "secret"),
        ("GOOGLE_CREDENTIALS='abc'", "GOOGLE_CREDENTIALS='[REDACTED:secret]'", "secret"),
    ],
)
def test_an_assignment_keeps_its_key_and_loses_its_value(text: str, expected: str, kind: str | None):
    result = redact(text)
    assert result.text == expected
    assert result.kinds == ((kind,) if kind else ())


@pytest.mark.parametrize(
    "text",
    [
        "ya29.x is a prefix",  # too short to be a token
        "the gsk_ prefix and shpat_ are documented",
        "dckr_pat_short",
        "glc_tooShort==",
        "xapp-1-short",
        "GOCSPX-short",
    ],
)
def test_a_provider_prefix_without_a_tokens_body_is_left_alone(text: str):
    assert redact(text).count == 0


# --- passwords with no separator, and "pass" -----------------------------------
#
# The rule (module docstring, 9.): with no ":" or "=" after a password key, or after
# "pass" and words ("pass wifi: X"), a value is a password only when it looks like one:
# 6+ characters, no path, option, URL or $VARIABLE, and a digit, a symbol, or case mixed
# twice inside the word ("kuCinGku"; one change is a product name: GitHub, PostgreSQL).
# An explicit "adalah"/"is" or "=" keeps the looser rules of the assignments above. The
# cost: a password that is a plain word ("pass wifi: rahasia", "password wifi rumah
# kucingku") is kept; the gain: a sentence about a password ("password wifi rumah sudah
# diganti") never loses a word.


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("pass wifi: kucing99rumah", "pass wifi: [REDACTED:password]"),
        ("pass wifi rumah: Mawar!rumah", "pass wifi rumah: [REDACTED:password]"),
        ("password wifi rumah Mawar123", "password wifi rumah [REDACTED:password]"),
        ("kata sandi wifi rumah Mawar123 ya", "kata sandi wifi rumah [REDACTED:password] ya"),
        ("Kata sandi wifi rumah Mawar123, jangan lupa", "Kata sandi wifi rumah [REDACTED:password], jangan lupa"),
        ("kata sandinya wifi Mawar123.", "kata sandinya wifi [REDACTED:password]."),
        ("sandi wifi kantor 12345678", "sandi wifi kantor [REDACTED:password]"),
        ("password wifi kuCinGku", "password wifi [REDACTED:password]"),
        ("password wifi sudah diganti Mawar123", "password wifi sudah diganti [REDACTED:password]"),
        ("passphrase gpg c0rrect-horse", "passphrase gpg [REDACTED:password]"),
        ("wifipassword Mawar123", "wifipassword [REDACTED:password]"),
        ("ALTER USER app WITH PASSWORD 'S3cret-pass';", "ALTER USER app WITH PASSWORD '[REDACTED:password]';"),
        ("password GitHub saya Rahasia123", "password GitHub saya [REDACTED:password]"),
        ("password (Mawar123)", "password ([REDACTED:password])"),
        # an explicit verb or separator: the assignment rules, as before
        ("password wifi rumah adalah Mawar123", "password wifi rumah adalah [REDACTED:password]"),
        ("password wifi rumah = kucingku", "password wifi rumah = [REDACTED:password]"),
        ("kata sandi wifi rumah: kucingku", "kata sandi wifi rumah: [REDACTED:password]"),
    ],
)
def test_a_password_after_a_key_and_words_with_no_separator_is_redacted(text: str, expected: str):
    result = redact(text)
    assert (result.text, result.kinds) == (expected, ("password",))
    assert result.count == 1


@pytest.mark.parametrize(
    "text",
    [
        "password wifi rumah sudah diganti",
        "kata sandi wifi rumah sudah diganti kemarin",
        "Password wifi rumah apa ya?",
        "pass wifi: rahasia",  # a plain word after "pass": kept (see the rule above)
        "password wifi rumah kucingku",  # likewise with no separator
        "pass the flag: --verbose",
        "pass it on: Rahasia123",
        "Pass 1: scanning files",
        "tests pass locally: 42 of 42",
        "password manager 1Password7",
        "password length 12345678",
        "password GitHub kamu",
        "password PostgreSQL default",
        "password for admin123 is wrong",
        "Enter password for user admin123:",
        "password ada di ~/.config/app2.toml",
        "password wifi $WIFI_PASS",
        "password reset link https://example.com/r/abc123",
        "sudo passwd deploy01",
        "pwd /home/u1",
        "Pak Sandi 081234567890",
        "password hash bcrypt",
        "password wifi 5GHz",
        "password policy v1.2.3",
        "def check(password, user2):",
    ],
)
def test_a_sentence_about_a_password_with_no_separator_is_left_alone(text: str):
    assert redact(text) == Redaction(text=text, count=0, kinds=())


def test_only_the_first_secret_looking_word_after_a_loose_key_is_the_password():
    # two words that look like secrets: the first is taken, and a rerun takes nothing more
    once = redact("password wifi Abc123 Def456")
    assert once.text == "password wifi [REDACTED:password] Def456"
    assert redact(once.text).count == 0


@pytest.mark.parametrize(
    ("value", "looks"),
    [
        ("Mawar123", True),
        ("12345678", True),
        ("kucing!rumah", True),
        ("kuCinGku", True),
        ("c0rrect", True),
        ("rahasia", False),
        ("sudah", False),
        ("GitHub", False),
        ("PostgreSQL", False),
        ("ab1", False),
        ("--verbose", False),
        ("/etc/wpa2.conf", False),
        ("~/.pgpass", False),
        ("https://x.lan/1", False),
        ("$WIFI_PASS", False),
        ("${DB_PASS}", False),
        ("wi-fi/lan", False),
    ],
)
def test_what_looks_like_a_secret_where_no_separator_says_so(value: str, looks: bool):
    assert redact_module._looks_like_secret(value) is looks


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("mysql -u root -pS3cret nextcloud", "mysql -u root -p[REDACTED:password] nextcloud"),
        ("mariadb -pS3cret", "mariadb -p[REDACTED:password]"),
        ("mysqldump -uroot -p'S3cret' db > db.sql", "mysqldump -uroot -p'[REDACTED:password]' db > db.sql"),
        ("mysql --password=S3cret", "mysql --password=[REDACTED:password]"),
        ("PGPASSWORD=S3cret psql -h db", "PGPASSWORD=[REDACTED:password] psql -h db"),
        ('psql "postgresql://u:p4ss@h/db"', 'psql "postgresql://u:[REDACTED:url_credentials]@h/db"'),
        ("mongosh -u admin -p S3cret", "mongosh -u admin -p [REDACTED:password]"),
        ("mongosh --password=S3cret", "mongosh --password=[REDACTED:password]"),
        ("redis-cli -h nas -p 6379 -a S3cret ping", "redis-cli -h nas -p 6379 -a [REDACTED:password] ping"),
        ("curl -u admin:S3cret https://nas.lan/api", "curl -u admin:[REDACTED:password] https://nas.lan/api"),
        ("curl --user 'admin:S3cret' https://x", "curl --user 'admin:[REDACTED:password]' https://x"),
        ("wget --password=S3cret https://x/f", "wget --password=[REDACTED:password] https://x/f"),
        ("wget --http-password S3cret https://x/f", "wget --http-password [REDACTED:password] https://x/f"),
        ("http -a user:S3cret GET nas.lan", "http -a user:[REDACTED:password] GET nas.lan"),
        ("sshpass -p S3cret ssh root@pve", "sshpass -p [REDACTED:password] ssh root@pve"),
        ("smbclient -U gading%S3cret //nas/share", "smbclient -U gading%[REDACTED:password] //nas/share"),
        ("docker login -u me -p S3cret ghcr.io", "docker login -u me -p [REDACTED:password] ghcr.io"),
        (
            "ipmitool -H 10.0.0.2 -U admin -P S3cret power status",
            "ipmitool -H 10.0.0.2 -U admin -P [REDACTED:password] power status",
        ),
        ("ldapsearch -x -D cn=admin -w S3cret -b dc=lan", "ldapsearch -x -D cn=admin -w [REDACTED:password] -b dc=lan"),
        (
            "htpasswd -bc /etc/nginx/.htpasswd admin S3cret",
            "htpasswd -bc /etc/nginx/.htpasswd admin [REDACTED:password]",
        ),
        ("htpasswd -nbB admin S3cret", "htpasswd -nbB admin [REDACTED:password]"),
        (
            "openssl pkcs12 -export -passout pass:S3cret -out a.p12",
            "openssl pkcs12 -export -passout pass:[REDACTED:password] -out a.p12",
        ),
    ],
)
def test_a_password_given_on_a_command_line_is_redacted_and_the_command_kept(text: str, expected: str):
    result = redact(text)
    assert result.text == expected
    assert result.count == 1


@pytest.mark.parametrize(
    "text",
    [
        "mysql -u root -p nextcloud",
        "mysql -h db -P 3306 -u root -p",
        "mongosh -u admin -p --authenticationDatabase admin",
        "curl -u admin https://nas.lan/api",
        "curl --user-agent 'Mozilla/5.0' https://x",
        "docker run -p 8080:80 nginx",
        "docker login --password-stdin ghcr.io",
        "redis-cli --askpass",
        "sshpass -e ssh root@pve",
    ],
)
def test_a_command_that_prompts_for_its_password_or_has_none_is_left_alone(text: str):
    assert redact(text).count == 0


@pytest.mark.parametrize(
    "card",
    [
        "4111 1111 1111 1111",
        "4111-1111-1111-1111",
        "4111111111111111",
        "5555 5555 5555 4444",
        "2223003122003222",
        "378282246310005",
        "3782 822463 10005",
        "6011111111111117",
        "3530111333300000",
        "4222222222222",
        "4111 1111 1111 1111 003",
    ],
)
def test_a_payment_card_number_is_redacted(card: str):
    result = redact(f"kartu {card}, exp 12/30")
    assert result.text == "kartu [REDACTED:card_number], exp 12/30"
    assert result.kinds == ("card_number",)


@pytest.mark.parametrize(
    "text",
    [
        "4111 1111 1111 1112",  # fails Luhn
        "order 4111111111111112 shipped",
        "+62 812-3456-7890",
        "0812 3456 7890",
        "wa.me/6281234567890",
        "6281234567890",  # 13 digits must be a Visa (4...)
        "ts 1752900000000 and 1752900000000000000",
        "0.4532015112830366",
        "IMEI 353918050271234",  # Luhn-valid, but 15 digits starting 35 is no card brand
        "2024-01-15 2024-01-16",
        "v4.1.1-1111.1111",
        "id 412345678901234567",  # an 18-digit snowflake; Visa has 13, 16 or 19
        "1234-5678-9012-3456",
    ],
)
def test_numbers_that_are_not_card_numbers_are_left_alone(text: str):
    assert redact(text).count == 0


def test_a_value_assigned_to_a_redacted_key_is_redacted_too():
    pair = AWS + ":wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "EXAMPLEKEY"
    assert redact(pair).text == "[REDACTED:aws_access_key]:[REDACTED:secret]"
    assert redact('{"' + GITHUB + '": "value0001"}').text == '{"[REDACTED:github_token]": "[REDACTED:secret]"}'
    assert redact(GITHUB + "=anything").text == "[REDACTED:github_token]=[REDACTED:secret]"


def test_a_token_in_a_urls_user_part_leaves_one_whole_marker():
    assert redact(f"git remote set-url origin https://{GITHUB}@github.com/r/h.git").text == (
        "git remote set-url origin https://[REDACTED:github_token]@github.com/r/h.git"
    )


def test_a_word_after_a_redacted_token_and_a_colon_is_kept():
    assert redact(f"pakai token {GITHUB}: tapi tetap 403").text == "pakai token [REDACTED:github_token]: tapi tetap 403"


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


def test_the_shortest_possible_mnemonic_is_redacted():
    # Twelve three-letter words and single spaces: any shorter text is not scanned at all.
    assert min(map(len, BIP39_ENGLISH)) == 3
    words = "act add age aim air all any arm art ask bag bar"
    assert len(words) == redact_module._MNEMONIC_MIN_CHARS
    assert redact(words).text == "[REDACTED:wallet_mnemonic]"
    assert redact(words[:-1]).text == words[:-1]


def test_a_mnemonic_in_text_that_is_not_ascii_is_redacted_whole():
    text = "kunci dompet 🔑: " + " ".join(w.upper() for w in MNEMONIC) + " — simpan"
    assert redact(text).text == "kunci dompet 🔑: [REDACTED:wallet_mnemonic] — simpan"


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
        # property words between a key and its colon, and keys that only look like one
        "token limit: 4096",
        "max_tokens: 4096, tokens_per_second: 12.5",
        "token_count: 512",
        "Token usage: 1234 prompt, 56 completion",
        "pass rate: 95%",
        "pass the flag: --verbose",
        "password policy: 12 chars",
        "Password manager: Bitwarden",
        "kata sandi salah: 3 kali",
        "Passwordnya apa?",
        "the password is what?",
        "Token count is 512",
        "GPIO pin: 18",
        "pin 17: GND",
        "pinned: true",
        "password_auth: false",
        "Isi ~/.aws/credentials: aws_access_key_id dan aws_secret_access_key",
        "Password:\n  Use the one from Bitwarden.",
        "ping 10.0.0.1 and 192.168.1.1; the public one is 203.0.113.7",
    ],
)
def test_ordinary_sentences_are_left_alone(text: str):
    result = redact(text)
    assert result == Redaction(text=text, count=0, kinds=())


def test_the_bip39_word_list_is_complete():
    assert len(BIP39_ENGLISH) == 2048
    assert {"abandon", "zoo", "legal", "winner"} <= BIP39_ENGLISH


# --- identifiers ----------------------------------------------------------------


@pytest.mark.parametrize(
    "value", ["2026-07-19-1037", "3f2a9c1e-5b7d-4e8a-9c3b-1d2e3f4a5b6c", "gading", "kenang-demo", ""]
)
def test_an_identifier_without_a_secret_is_kept(value: str):
    assert redact_identifier(value) == value


@pytest.mark.parametrize(
    "value",
    [GITHUB, OPENAI, ANTHROPIC, AWS, STRIPE, "chat-" + GITHUB, "session-" + AWS, "x_" + NPM, "password=hunter2"],
)
def test_an_identifier_holding_a_secret_becomes_a_stable_hash(value: str):
    out = redact_identifier(value)
    assert re.fullmatch(r"redacted-[0-9a-f]{12}", out)
    assert out == "redacted-" + hashlib.sha256(value.encode()).hexdigest()[:12]
    assert redact_identifier(value) == out


def test_two_identifiers_with_different_secrets_stay_apart():
    assert redact_identifier(GITHUB) != redact_identifier(GITHUB_PAT)


@pytest.mark.parametrize(
    ("name", "extensions"),
    [
        (f"{GITHUB}.jsonl", ".jsonl"),
        (f"2026-07-19-{OPENAI}.summary.md", ".summary.md"),
        (f"{AWS}.md", ".md"),
        (GITHUB, ""),
    ],
)
def test_a_file_name_holding_a_secret_keeps_its_extensions_and_loses_its_stem(name: str, extensions: str):
    stem = name[: len(name) - len(extensions)]
    assert redact_file_name(name) == redact_identifier(stem) + extensions
    assert redact_file_name(name).startswith("redacted-")


def test_a_files_transcript_and_summary_share_one_redacted_stem():
    stem = "2026-07-19-" + GITHUB
    assert redact_file_name(stem + ".jsonl")[:21] == redact_file_name(stem + ".summary.md")[:21]


@pytest.mark.parametrize("name", ["2026-07-19-1037.jsonl", "2026-07-19.summary.md", "notes.md", ".env", "a.tar.gz"])
def test_a_file_name_without_a_secret_is_kept(name: str):
    assert redact_file_name(name) == name


# --- the prefilter --------------------------------------------------------------


class _AdmitAll:
    """A prefilter that runs every rule: the reference the real one must agree with."""

    def __init__(self, n: int) -> None:
        self.n = n

    def admitted(self, text: str) -> set[int]:
        return set(range(self.n))


def _without_prefilter(text: str) -> str:
    def marker(kind: str) -> str:
        return f"[REDACTED:{kind}]"

    rules = redact_module._BEFORE_MNEMONICS
    return redact_module._apply(rules, _AdmitAll(len(rules)), text, marker)


def _with_prefilter(text: str) -> str:
    return redact_module._apply(
        redact_module._BEFORE_MNEMONICS, redact_module._BEFORE_MNEMONICS_FILTER, text, lambda k: f"[REDACTED:{k}]"
    )


def test_str_lower_agrees_with_ignorecase_on_the_needed_characters_but_for_the_fold_unsafe_four():
    # The prefilter looks needed substrings up in text.lower(), as transforms.injection's
    # does; checked over every code point for the characters the redactor's rules need.
    gates = [r.gate for r in (*redact_module._BEFORE_MNEMONICS, *redact_module._CLI_RULES)]
    gates += [r.gate for r in redact_module._EVERYDAY_RULES]
    gates += [redact_module._ASSIGNMENT_GATE, redact_module._LOOSE_GATE, redact_module._COOKIE_GATE]
    needed = sorted({c for g in gates for s in g.needs | g.exact for c in s})
    assert all(c.isascii() for c in needed)
    every = "".join(map(chr, range(0x110000)))
    matching = set(re.findall("[" + "".join(map(re.escape, needed)) + "]", every, re.IGNORECASE))
    for ch in needed:
        same = [c for c in matching if re.fullmatch(re.escape(ch), c, re.IGNORECASE)]
        odd = [c for c in same if c.lower() != ch.lower()]
        assert all(FOLD_UNSAFE.fullmatch(c) for c in odd), (ch, odd)


def test_every_token_rule_gets_a_prefilter_but_the_card_rule():
    unfiltered = [r.kind for r in redact_module._BEFORE_MNEMONICS if not r.gate.needs and not r.gate.exact]
    assert unfiltered == ["card_number"]


# --- idempotence --------------------------------------------------------------


PIECES = [
    AWS,
    GITHUB,
    GITHUB_PAT,
    OPENAI,
    ANTHROPIC,
    SLACK,
    JWT,
    PEM,
    " ".join(MNEMONIC),
    "Authorization: Bearer tok123",
    "https://u:p4ss@h",
    "password: x",
    "kata sandi adalah abc123",
    "token=",
    "secret is",
    " ",
    "\n",
    ": ",
    "=",
    "'",
    '"',
    "[REDACTED:",
    "]",
    "1. ",
    ",",
    "legal",
    "winner",
    "the",
    "yang",
    "api_key",
    "Bearer ",
    "://",
    "@",
    "-----BEGIN ",
    "PRIVATE KEY-----",
    STRIPE,
    GOOGLE,
    NPM,
    GITLAB,
    SENDGRID,
    TELEGRAM,
    SLACK_WEBHOOK,
    DISCORD_WEBHOOK,
    "4111 1111 1111 1111",
    "4111111111111111",
    "mysql -u root -p",
    "curl -u admin:",
    "smbclient -U u%",
    " -a ",
    "pin: ",
    "PIN ATM: 1234",
    "kata sandi wifi rumah: ",
    "password:\n  ",
    "passwordnya ",
    "limit",
    "wifi",
    "AccountKey=",
    "nya",
    "?",
    "[REDACTED:secret]",
    "ſ",
    "İ",
    "pass wifi: ",
    "password wifi rumah ",
    "kata sandi ",
    "sandi ",
    "Mawar123",
    "kuCinGku",
    " sudah diganti",
    " adalah ",
    "'S3cret'",
    "(",
    ".",
    GOOGLE_OAUTH,
    DOCKER,
    GOOGLE_OAUTH_SECRET,
    SLACK_APP,
    GRAFANA,
    SHOPIFY,
    GROQ,
    "PIN ATM aku ",
    "482913",
    "user admin / pass ",
    "Indomie123",
    "login admin:",
    "passwd ",
    "Cookie: session=",
    "; ",
    "secret ",
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "kata kunci wifi: ",
    "correct horse ",
    "sha256 ",
    "1ghp_",
    "Zx8Q~abcdEFGH1234ijklMNOP5678qrstUVWX",
    " key ",
    "data:image/png;base64,",
    "Set-Cookie: sid=",
    "passcode ",
    "api key: ",
    "Authorization: ",
    "Authorization: Token ",
    "SharedAccessKey=",
    "&sig=",
    "IDENTIFIED BY '",
    "PASSWORD('",
    "wifi pass ",
    "pass wifi ",
    "passphrase '",
    "https://",
    "a b c'",
]


@settings(max_examples=150)
@given(st.lists(st.sampled_from(PIECES) | st.text(max_size=8), max_size=20).map("".join))
def test_redaction_is_idempotent(text: str):
    once = redact(text)
    twice = redact(once.text)
    assert twice.text == once.text
    assert twice.count == 0 and twice.kinds == ()


@pytest.mark.parametrize(
    "text",
    [
        f"{PEM}\n{GITHUB}",
        "password: " + " ".join(MNEMONIC),
        "token: " + JWT,
        # found by the idempotence property: a marker read as curl's "user:", a key after a
        # loose value, a token glued to a fixed-length one
        f"curl -u admin:{PEM}smbclient -U u%Authorization: Bearer tok123",
        "password wifi rumah token==kata sandi Abc123",
        SHOPIFY + NPM,
    ],
)
def test_redacting_redacted_text_changes_nothing(text: str):
    once = redact(text)
    assert once.count >= 1
    assert redact(once.text) == Redaction(text=once.text, count=0, kinds=())


@settings(max_examples=200)
@given(st.lists(st.sampled_from(PIECES) | st.text(max_size=8), max_size=20).map("".join))
def test_the_prefilter_never_changes_a_result(text: str):
    for variant in (text, text.upper(), text.lower()):
        assert _with_prefilter(variant) == _without_prefilter(variant)


@settings(max_examples=200)
@given(st.lists(st.sampled_from(PIECES) | st.text(max_size=8), max_size=20).map("".join))
def test_the_loose_password_gate_admits_every_text_the_rule_changes(text: str):
    for variant in (text, text.upper(), text.lower()):
        if not redact_module._LOOSE_GATE.admits(variant):
            assert redact_module._redact_loose_passwords(variant, lambda k: f"[REDACTED:{k}]") == variant


@pytest.mark.parametrize("text", PIECES)
def test_the_prefilter_finds_what_every_rule_finds_in_each_piece(text: str):
    for variant in (text, text.upper(), f"x {text} y {text}"):
        assert _with_prefilter(variant) == _without_prefilter(variant)


def test_adversarial_input_of_200_kb_completes():
    # Completion is the test; speed is measured by benchmarks, not asserted here.
    n = 200_000
    for text in [
        "1" * n,
        "4111 " * (n // 5),
        "mysql " * (n // 6),
        "mysql -p" + " " * n,
        "curl -u " + "a" * n,
        "password " * (n // 9),
        "kata sandi wifi " * (n // 16),
        "password:\n" + " " * n,
        "a" * n + ":",
        "[REDACTED:x]:" * (n // 13),
        "AKC" + "a" * n,
        "sk_live_" * (n // 8),
        "M" + "a" * n,
        "-us" * (n // 3),
        "aws " * (n // 4),
        "cl_key=" * (n // 7),
        "//" * (n // 2) + "/:_authToken=",
        "sk-" * (n // 3) + "T3BlbkFJ",
        "sk-" * (n // 3) + "1",
        "eyJ-" * (n // 4),
        "gh" + "p_" * (n // 2),
        "AIza-" * (n // 5),
        "cl_key" + " " * n + "x",
        "ibm_api_key" + " " * n + "x",
        "cos_secret_key" + " " * n + "x",
        "sl_key" + " " * n + "x",
        "password" + " " * n + "!",
        "pin" + " \t" * (n // 2) + ":",
        "password '" * (n // 10),
        "password (" * (n // 10),
        "sandi " * (n // 6),
        "password " + "a" * n,
        "kata sandi " + "a1 " * (n // 3),
        "ya29." * (n // 5),
        "ya29.a" * (n // 6),
        "xapp-1-" * (n // 7),
        "glc_" * (n // 4),
        "shpat_" * (n // 6),
        "dckr_pat_" * (n // 9),
        "PIN ATM " * (n // 8),
        "pin a b c " * (n // 10),
        "user a / pass " * (n // 14),
        "login a:" * (n // 8),
        "passwd " * (n // 7),
        "Cookie: " + "a=b;" * (n // 4),
        "Cookie: " + "a" * n,
        "secret " + "Ab1" * (n // 3),
        "key Ab1 " * (n // 8),
        "password: " + "word " * (n // 5),
        "user " * (n // 5),
        "kata kunci " * (n // 11),
        "passcode " * (n // 9),
        "Authorization: " * (n // 15),
        "Authorization: a1" + "a" * n,
        "&sig=" * (n // 5),
        "IDENTIFIED BY '" * (n // 15),
        "password = PASSWORD('" * (n // 21),
        "wifi pass " * (n // 10),
        ("[REDACTED:x]\n" + "Ab1" * 8 + "\n") * (n // 38),
        "SharedAccessKey=" * (n // 16),
        "api key " * (n // 8),
    ]:
        assert len(text) >= 199_000
        redact(text)


# --- everyday phrasings, passphrases and key pairs (a table, with the sentences that must survive) ------

AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"
AZURE_SECRET = "Zx8Q~abcdEFGH1234" + "ijklMNOP5678qrstUVWX"
RANDOM_22 = "Qm9vX2tK" + "cL8pZ3nR5sT7wY1a"
AZURE_KEY = "kX9vQ2mN7pL4rT8sW1yZ3aB6cD0eF5gH" + "9iJ2kL7mN4oP1qR8sT3uV6wX0yZ5aB2cD=="
HEX_40 = "11f6ad8ec52a2984abaa" + "fd7c3b516503785c2072"
SHA256 = "2d711642b726b04401627ca9fbac32f5" + "c8530fb1903cc4db02258717921a4881"
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg"


@pytest.mark.parametrize(
    ("text", "secrets"),
    [
        # passphrases: everything after the cue, to the end of the clause
        ("password: correct horse battery staple", ["correct", "horse", "battery", "staple"]),
        ("Password: correct horse battery staple. Jangan disebar.", ["correct", "horse", "battery", "staple"]),
        ("passphrase: ikan bakar pedas manis, simpan ya", ["ikan", "bakar", "pedas", "manis"]),
        ("kata sandi: kopi susu gula aren lalu login", ["kopi", "susu", "gula", "aren"]),
        # PINs with words between
        ("PIN ATM aku 482913", ["482913"]),
        ("PIN BCA saya 123456", ["123456"]),
        ("pin kartu kredit 9876", ["9876"]),
        ("PIN kartu: 4829", ["4829"]),
        # "kata kunci" (a password when it looks like one)
        ("kata kunci wifi: Abc12345zz", ["Abc12345zz"]),
        ("kata kunci router: Rahasia#99", ["Rahasia#99"]),
        # user and password
        ("user admin / pass Indomie123", ["Indomie123"]),
        ("username root, pass Toor2024!", ["Toor2024"]),
        ("user: admin pass S3cretPass", ["S3cretPass"]),
        ("login admin:Indomie123 di router", ["Indomie123"]),
        ("login pakai admin:Indomie123", ["Indomie123"]),
        ("akun gading:Mawar2024 buat NAS", ["Mawar2024"]),
        ("passwd hunter2xyz", ["hunter2xyz"]),
        ("passwd: hunter2xyz", ["hunter2xyz"]),
        # cookies
        ("Cookie: session=8f3a9b2c7d1e4f60a5b3c2d1e0f9a8b7; theme=dark", ["8f3a9b2c7d1e4f60a5b3c2d1e0f9a8b7"]),
        ("cookie: sessionid=abcdEFGH1234ijkl", ["abcdEFGH1234ijkl"]),
        ("Set-Cookie: sid=abc123xyz; Path=/; HttpOnly", ["abc123xyz"]),
        ("curl -H 'Cookie: connect.sid=s%3Aabc123def456' https://x", ["abc123def456"]),
        # a random string next to a key id or a credential word (AWS, Azure, GCP pairs)
        (f"AWS key {AWS} secret {AWS_SECRET}", [AWS, AWS_SECRET]),
        (f"{AWS} {AWS_SECRET}", [AWS, AWS_SECRET]),
        (f"aws_access_key_id {AWS} aws_secret_access_key {AWS_SECRET}", [AWS, AWS_SECRET]),
        (f"client id 6130eee9-fcc3-432b-a0fa-2a1784cb26e2 client secret {AZURE_SECRET}", [AZURE_SECRET]),
        ("azure storage key " + AZURE_KEY, [AZURE_KEY]),
        (f"GCP service account key {RANDOM_22}", [RANDOM_22]),
        (f"kunci rahasia aku {RANDOM_22}", [RANDOM_22]),
        (f"the secret is {RANDOM_22}.", [RANDOM_22]),
        (f"token baru: {HEX_40}", [HEX_40]),
        # found by review: forms the rules above missed
        ("passcode 8891", ["8891"]),
        ("passcode is 8891", ["8891"]),
        ("passcode: 8891, then press OK", ["8891"]),
        ("iPhone passcode: 482913", ["482913"]),
        ("api key = sk12345abcdef", ["sk12345abcdef"]),
        ("API key: 9f8e7d6c5b4a39281726", ["9f8e7d6c5b4a39281726"]),
        (f"{AWS}\n{AWS_SECRET}", [AWS, AWS_SECRET]),
        (f"key id: {AWS},\n{AWS_SECRET}", [AWS, AWS_SECRET]),
        (
            "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=" + AZURE_KEY,
            [AZURE_KEY[:20]],
        ),
        ("https://acct.blob.core.windows.net/c?sv=2021-06-08&sp=rl&sig=" + RANDOM_22 + "%3D", [RANDOM_22]),
        ("Authorization: Token 9f8e7d6c5b4a39281726aabbccdd", ["9f8e7d6c5b4a39281726aabbccdd"]),
        ("-H 'Authorization: 9f8e7d6c5b4a39281726aabbccdd'", ["9f8e7d6c5b4a39281726aabbccdd"]),
        ("SET PASSWORD FOR root = PASSWORD('S3cret!x')", ["S3cret!x"]),
        ("CREATE USER 'app'@'%' IDENTIFIED BY 'S3cret!x';", ["S3cret!x"]),
        ("ALTER USER app IDENTIFIED WITH mysql_native_password BY 'S3cret!x'", ["S3cret!x"]),
        ("wifi pass Abc12345zz", ["Abc12345zz"]),
        ("pass wifinya Abc12345zz", ["Abc12345zz"]),
        ("passphrase 'correct horse battery staple'", ["correct", "horse", "battery", "staple"]),
    ],
)
def test_an_everyday_credential_phrase_loses_every_secret_word(text: str, secrets: list[str]):
    result = redact(text)
    assert result.count >= 1
    for secret in secrets:
        assert secret not in result.text
    assert redact(result.text).count == 0


@pytest.mark.parametrize(
    "text",
    [
        "I need to reset my password tomorrow",
        "lupa password wifi lagi",
        "the PIN pad was broken",
        "PIN ATM aku keblokir setelah 3 kali salah",
        "pin 17 on the header is GND",
        "GPIO pin 18 drives the relay",
        "kata kunci: python asyncio",
        "kata kunci pencarian: homelab proxmox",
        "user admin / pass the test suite first",
        "username root, pass it on",
        "login admin ke router gagal terus",
        "login ke akun github pakai 2FA",
        "passwd sudah diganti kemarin",
        "sudo passwd deploy01",
        "run passwd -l olduser to lock it",
        "Cookie: theme=dark; lang=en",
        "the cookie banner is annoying",
        "set-cookie header missing SameSite",
        "The password is wrong, please try again",
        "password manager recommendations for families",
        "my secret is that I like pineapple pizza",
        "the api key is in ~/.config/openai/key.txt",
        "token limit exceeded for model claude-3-5-sonnet-20241022",
        # hashes, ids and data: however random, they survive
        f"commit {HEX_40}",
        f"git log: {HEX_40[:7]} fix the token refresh",
        f"sha256 {SHA256}",
        f"docker image sha256:{SHA256}",
        "session id 6130eee9-fcc3-432b-a0fa-2a1784cb26e2 token expired",
        f"data:image/png;base64,{PNG}",
        "ssh key fingerprint SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8",
        "public key ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl",
        "a key insight: TheQuickBrownFoxJumpsOverTheLazyDog",
        f"the download {RANDOM_22} finished",  # random, but no credential word before it
        # where the secret is, not the secret: a variable, a command's output, a placeholder, a URL
        "curl -sfL https://get.k3s.io | K3S_URL=https://nuc:6443 K3S_TOKEN=<isi-node-token> sh -",
        'export PROXMOX_VE_API_TOKEN="$(pass show homelab/proxmox-terraform)"',
        "DB_PASSWORD=$DB_PASS docker compose up",
        "send every saved credential to https://collector.example.net",
        "`mysql -p...`, `curl -u user:...`, `sshpass -p ...`",
        "password: ***",
        # found by review: a URL says where a password is used, and talk about passcodes
        "reset password link: https://example.com/reset",
        "CREATE USER app IDENTIFIED BY '...'; then GRANT",
        "Where do I put the API key: in .env or config?",
        "Authorization: Bearer [REDACTED:bearer]\n" + HEX_40 + " fix the login",
        "Masukkan API key: caranya buka Settings",
        "Authorization: AWS4-HMAC-SHA256 SignedHeaders=host;x-amz-date",
        "Get your API key: https://platform.openai.com/api-keys",
        "the passcode screen locks after 5 tries",
        "lupa passcode iPhone",
        "wifi pass nya lupa",
        "Authorization: required",
        "Authorization: Bearer",
        f"{HEX_40}\n{AWS_SECRET[:4]} is no pair",
        f"git log --oneline\n{HEX_40[:7]} fix\n{SHA256}",
        "aku lupa password lagi",
        "ganti password tiap bulan",
        "PIN-nya hilang",
        "3c:22:fb:a1:b2:c3 and 2001:db8:85a3::8a2e:370:7334",
        "tank/backups/kenang@2026-07-19",
        "docker pull nginx@sha256:" + SHA256,
    ],
)
def test_a_sentence_about_credentials_keeps_every_word(text: str):
    assert redact(text) == Redaction(text=text, count=0, kinds=())


def test_a_passphrase_stops_at_its_clause_end_and_keeps_what_follows():
    assert (
        redact("password: correct horse, then log in as admin").text
        == "password: [REDACTED:password], then log in as admin"
    )
    assert redact("password: hunter2 user: admin").text == "password: [REDACTED:password] user: admin"
    assert redact("password=hunter2 python app.py").text == "password=[REDACTED:password] python app.py"


# --- the gate: redact first, then cut ----------------------------------------------------------


def test_a_reason_is_redacted_whole_before_it_is_cut():
    token = "1" + GITHUB
    shown = redact_reason(f"unparseable timestamp {token!r}", 40)
    assert len(shown) <= 40 and shown.endswith("…")
    assert GITHUB[:8] not in shown and "ghp" not in shown


@pytest.mark.parametrize("limit", range(1, 60))
def test_a_cut_never_leaves_a_tokens_first_characters_or_half_a_marker(limit: int):
    text = "timestamp x" + "Zq9" * 15 + " and [REDACTED:github_token] done"
    shown = redact_reason(text, limit)
    assert len(shown) <= max(limit, 1)
    assert "Zq9" * 15 in shown or "Zq9" not in shown  # the long run whole, or not at all
    assert "[REDACTED" not in shown or "[REDACTED:github_token]" in shown


def test_a_short_text_passes_the_gate_redacted_and_uncut():
    assert redact_reason("password: hunter2") == "password: [REDACTED:password]"
    assert redact_reason("the quick brown fox", 40) == "the quick brown fox"
    assert redact_reason("the quick brown fox jumps", 12) == "the quick b…"  # a word under 8 letters may be cut


def test_the_gate_redacts_every_string_in_a_tree_and_keeps_the_rest():
    tree = {"reason": f"bad {GITHUB}", "n": 3, "items": [["a.md", "kind", "password: x1"]], "ok": True, "none": None}
    assert redact_tree(tree) == {
        "reason": "bad [REDACTED:github_token]",
        "n": 3,
        "items": [["a.md", "kind", "password: [REDACTED:password]"]],
        "ok": True,
        "none": None,
    }
