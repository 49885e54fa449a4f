"""Secrets planted in every field a transcript has never reach anything kenang writes.

One night through the CLI on a scratch home, with secrets in message content (both
languages, many providers, YAML and ``.env`` lines, a wallet mnemonic, chat webhook
URLs, passwords written with and without a colon), in a session id, an agent, a user
id, a file name, and in a broken file whose quarantine reason would quote one. The
first run is verbose (``kenang -v run``), so its logs are scanned too. Then a scan of
every byte kenang wrote:

- every table, read through DuckDB;
- every file kenang derives (summaries, MEMORY_INDEX, the archive's manifests, the
  quarantine sidecars, the catalog, the checksum and ledger files) and every path name
  under the home;
- the run's stdout and stderr (and `status`, `verify`, `recall`, `sql`), and every log
  record and every byte written to the process's own stdout and stderr meanwhile.

The originals themselves are archived byte-exact and read-only, as docs/guarantees.md says:
they are the one place the secrets stay, and the scan skips exactly those files.
"""

from __future__ import annotations

import json
import logging

import duckdb
import pytest
from helpers import NOW, drop, jsonl, kenang, md

from flows.store import archive_files as archive
from flows.store import warehouse
from schemas.tables import TABLES
from transforms.redact import redact_identifier

pytestmark = pytest.mark.usefixtures("prefect_api")

# Each value is a secret that must appear nowhere; the texts plant them.
SECRETS = {
    "github": "ghp_FAKEfakeFAKEfakeFAKEfakeFAKEfake1234",
    "slack": "xoxb-1234567890-FAKEfakeFAKEfake",
    "openai": "sk-proj-FAKEfake1234FAKEfake5678FAKE",
    "aws": "AKIAIOSFODNN7EXAMPLE",
    "stripe": "sk_live_FAKEfakeFAKEfake12345678",
    "wifi_id": "Mawar123Rumah",
    "wifi_en": "kucing99rumah",
    "pw": "hunter22FAKE",
    "mysql": "S3cretFAKEroot",
    "curl": "AdminFAKE99pass",
    "card": "4111 1111 1111 1111",
    "env": "verysecretFAKEvalue42",
    # built by concatenation, so no secret scanner trips on this file
    "yaml_pw": "YamlFAKEpass77",
    "yaml_block": "BlockFAKEpass88",
    "mnemonic": "legal winner thank year wave sausage worth useful legal winner thank yellow",
    "mnemonic_part": "wave sausage worth",
    "slack_hook": "https://hooks.slack" + ".com/services/TFAKE0000/BFAKE0000/" + "FAKEfake" * 3,
    "slack_hook_token": "FAKEfake" * 3,
    "discord_hook": "https://discord" + ".com/api/webhooks/123456789012345678/" + "FAKEfake0000" * 5,
    "discord_hook_token": "FAKEfake0000" * 5,
    "npm": "np" + "m_" + "FAKEfake0000" * 3,
    "pypi": "pypi-" + "AgEIcHlwaS5vcmc" + "FAKEfake0000" * 6,
    "gitlab": "gl" + "pat-" + "FAKEfake0000FAKEfake",
    "aws_secret": "wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "FAKEKEY000",
    "groq": "gs" + "k_" + "FAKEfake0000" * 5,
    "docker": "dckr" + "_pat_" + "FAKEfake0000FAKEfake0000FAK",
    "google_oauth": "ya" + "29." + "a0AfH6SM" + "FAKEfake0000" * 5,
    "pass_wifi": "Melati88Pagi",
    "password_loose": "Kucing77Baru",
    "kata_sandi_loose": "Mawar456Kost",
    "user_id": "np" + "m_" + "fake0000" * 4 + "fake",
}


def _plant(home):
    s = SECRETS
    content = md(
        "2026-07-19",
        "1000",
        ("user", f"kata sandi wifi rumah: {s['wifi_id']} ya, jangan lupa"),
        ("assistant", f"Oke. Untuk yang lain: password wifi: {s['wifi_en']}"),
        ("user", f"pw: {s['pw']}\nmysql -u root -p{s['mysql']} homelab"),
        ("assistant", f"curl -u admin:{s['curl']} https://nas.lan/api and token {s['github']}"),
        ("user", f"STRIPE_SECRET_KEY={s['stripe']}\nMY_APP_SECRET={s['env']}\nkartu {s['card']}"),
        ("assistant", f"Slack bot {s['slack']} and {s['openai']} noted."),
        session_id=s["github"],
    )
    drop(home, f"notes-{s['aws']}.md", content)
    drop(
        home,
        "gading/agent.jsonl",
        jsonl(
            {
                "role": "user",
                "content": "halo dari agent",
                "timestamp": "2026-07-19T11:00:00+07:00",
                "agent": s["slack"],
                "session_id": "boring-session",
            },
            {"role": "assistant", "content": "halo juga", "timestamp": "2026-07-19T11:01:00+07:00"},
        ),
    )
    drop(
        home,
        "2026-07-19-1400.md",
        md(
            "2026-07-19",
            "1400",
            ("user", f"config.yaml:\n\n```yaml\ndb:\n  user: app\n  password: {s['yaml_pw']}\n```"),
            ("assistant", f"Dan yang satunya:\n\n```yaml\nsmtp:\n  password:\n    {s['yaml_block']}\n```"),
            ("user", f"seed phrase dompet lama: {s['mnemonic']}"),
            ("assistant", f"Slack: {s['slack_hook']} dan Discord: {s['discord_hook']}"),
            (
                "user",
                f"//registry.npmjs.org/:_authToken={s['npm']}\nTWINE_PASSWORD={s['pypi']}\ntoken gitlab {s['gitlab']}",
            ),
            ("assistant", f"AWS_SECRET_ACCESS_KEY = {s['aws_secret']}\nGROQ {s['groq']}, Docker {s['docker']}"),
            ("user", f"access token google {s['google_oauth']} kadaluarsa"),
            (
                "user",
                f"pass wifi: {s['pass_wifi']}\npassword wifi rumah {s['password_loose']}\n"
                f"kata sandi wifi rumah {s['kata_sandi_loose']} ya",
            ),
        ),
    )
    drop(
        home,
        "tokens.jsonl",
        jsonl(
            {
                "role": "user",
                "content": "halo dari tokens",
                "timestamp": "2026-07-19T15:00:00+07:00",
                "user_id": s["user_id"],
            },
            {
                "role": "assistant",
                "content": "password wifi rumah sudah diganti",
                "timestamp": "2026-07-19T15:01:00+07:00",
            },
        ),
    )
    drop(home, "broken.jsonl", jsonl({"role": "user", "content": "x", "timestamp": s["github"]}))


def _kenang_written(home) -> list:
    """Every file under the home except the archived originals (and their quarantined twins)."""
    originals = set()
    for rows in archive.read_manifests(home).values():
        originals |= {home.paths.archive / r["path"] for r in rows}
    originals |= {p for p in home.paths.quarantine.rglob("*") if p.is_file() and not p.name.endswith(".reason.json")}
    originals |= set((home.paths.archive / "imports").rglob("*"))
    return [p for p in home.paths.home.rglob("*") if p.is_file() and p not in originals]


def _tables_text(home) -> str:
    con = duckdb.connect(":memory:")
    out = []
    for t in TABLES.values():
        if warehouse.has_files(home.paths.warehouse, t):
            rows = con.sql(
                f"SELECT * FROM read_parquet('{warehouse.glob(home.paths.warehouse, t)}', union_by_name=true)"
            ).fetchall()
            out.append(json.dumps(rows, default=str, ensure_ascii=False))
    return "\n".join(out)


def test_no_planted_secret_survives_anywhere_kenang_writes(home, caplog, capfd):
    caplog.set_level(logging.DEBUG)
    _plant(home)
    h = str(home.paths.home)
    results = [
        kenang("-v", "run", "--home", h, "--now", NOW.isoformat()),
        kenang("run", "--home", h, "--now", NOW.isoformat(), "--json"),
        kenang("status", "--home", h),
        kenang("status", "--home", h, "--json"),
        kenang("verify", "--home", h),
        kenang("recall", "--home", h, "--user", "default", "wifi password"),
        kenang("sql", "--home", h, "SELECT * FROM sessions"),
        kenang("sql", "--home", h, "SELECT * FROM archive_files"),
        kenang("sql", "--home", h, "SELECT * FROM quarantine"),
    ]
    codes = [r.exit_code for r in results]
    assert codes == [0] * len(codes)
    process_out, process_err = capfd.readouterr()
    haystacks = {
        "stdout": "".join(r.stdout for r in results),
        "stderr": "".join(r.stderr for r in results),
        "logs": caplog.text,
        "process stdout": process_out,
        "process stderr": process_err,
        "tables": _tables_text(home),
        "paths": "\n".join(str(p) for p in home.paths.home.rglob("*")),
    }
    for p in _kenang_written(home):
        haystacks[str(p.relative_to(home.paths.home))] = p.read_bytes().decode("utf-8", "replace")
    leaks = [
        (kind, where)
        for kind, secret in SECRETS.items()
        for where, text in haystacks.items()
        if any(s in text for s in (secret, secret.replace(" ", ""), secret.lower()))
    ]
    assert leaks == []
    # ... and the night did its work: the secrets became markers, the sessions are told apart
    tables = haystacks["tables"]
    assert "[REDACTED:" in tables
    kinds = {
        "wallet_mnemonic",
        "slack_webhook",
        "discord_webhook",
        "npm_token",
        "pypi_token",
        "gitlab_token",
        "groq_key",
        "docker_token",
        "google_oauth_token",
        "password",
        "secret",
    }
    assert {k for k in kinds if f"[REDACTED:{k}]" in tables} == kinds
    sessions = json.loads(json.dumps(_sessions(home), default=str))
    assert {s["session_id"][:9] for s in sessions} >= {"redacted-"}
    assert any(s["agent"] and s["agent"].startswith("redacted-") for s in sessions)
    assert any("notes-" not in s["archive_path"] and "redacted-" in s["archive_path"] for s in sessions)
    # the token as a user id became its stable hash, and the sentence about a password kept its words
    assert redact_identifier(SECRETS["user_id"]) in {s["user_id"] for s in sessions}
    assert "password wifi rumah sudah diganti" in tables


def _sessions(home) -> list[dict]:
    return warehouse.read(home.paths.warehouse, TABLES["sessions"]).to_pylist()


def test_a_user_id_that_is_a_key_only_as_typed_becomes_its_hash_and_no_listing_shows_the_key(home):
    """A rule that knows a key by its case (an AWS key id) must see a transcript's user_id as written: lower-cased,
    it is a valid user id that no rule redacts, and it would be written into every row of the user's. A key the
    rules know lower-cased keeps the hash it always had; a folder named by a key is a user by the folder's hash."""
    from flows.store import users

    key, folder = "AKIA" + "IOSFODNN7EXAMPL2", "AKIA" + "IOSFODNN7EXAMPL1"
    lower_key = "GHP_" + "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"  # a GitHub token, known in any case
    for name, who in (("b.jsonl", key), ("c.jsonl", lower_key)):
        drop(
            home,
            name,
            jsonl(
                {"role": "user", "content": "halo", "timestamp": "2026-07-19T15:00:00+07:00", "user_id": who},
                {"role": "assistant", "content": "ok", "timestamp": "2026-07-19T15:01:00+07:00"},
            ),
        )
    drop(home, f"{folder}/a.md", md("2026-07-19", "1000", ("user", "halo dari folder"), ("assistant", "ok")))
    listed = users.home_users(home)  # before the night: the folder in active/ makes a user
    assert not any(k.lower() in u for u in listed for k in (key, folder, lower_key)), listed
    r = kenang("run", "--home", str(home.paths.home), "--now", NOW.isoformat())
    assert r.exit_code == 0, r.output
    from transforms.resolve import active_folder_user

    assert {s["user_id"] for s in _sessions(home)} == {
        redact_identifier(key),
        redact_identifier(lower_key.lower()),  # the hash such an id always had
        active_folder_user(folder),
    }
    written = {
        "output": r.output,
        "tables": _tables_text(home),
        "paths": "\n".join(str(p) for p in home.paths.home.rglob("*") if "active" not in p.parts),
    }
    assert [(k, w) for k in (key, folder, lower_key) for w, text in written.items() if k.lower() in text.lower()] == []
    assert not any(k.lower() in u for u in users.home_users(home) for k in (key, folder, lower_key))
