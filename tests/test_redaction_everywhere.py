"""Secrets planted in every field a transcript has never reach anything kenang writes.

One night through the CLI on a scratch home, with secrets in message content (both
languages, many providers), in a session id, an agent, a file name, and in a broken
file whose quarantine reason would quote one. Then a scan of every byte kenang wrote:

- every table, read through DuckDB;
- every file kenang derives (summaries, MEMORY_INDEX, the archive's manifests, the
  quarantine sidecars, the catalog, the checksum and ledger files) and every path name
  under the home;
- the run's stdout and stderr (and `status`, `verify`, `recall`, `sql`).

The originals themselves are archived byte-exact and read-only, as the README says:
they are the one place the secrets stay, and the scan skips exactly those files.
"""

from __future__ import annotations

import json

import duckdb
import pytest

from flows.store import archive_files as archive
from flows.store import warehouse
from helpers import NOW, drop, jsonl, kenang, md
from schemas.tables import TABLES

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
}


def _plant(home):
    s = SECRETS
    content = md("2026-07-19", "1000",
                 ("user", f"kata sandi wifi rumah: {s['wifi_id']} ya, jangan lupa"),
                 ("assistant", f"Oke. Untuk yang lain: password wifi: {s['wifi_en']}"),
                 ("user", f"pw: {s['pw']}\nmysql -u root -p{s['mysql']} homelab"),
                 ("assistant", f"curl -u admin:{s['curl']} https://nas.lan/api and token {s['github']}"),
                 ("user", f"STRIPE_SECRET_KEY={s['stripe']}\nMY_APP_SECRET={s['env']}\nkartu {s['card']}"),
                 ("assistant", f"Slack bot {s['slack']} and {s['openai']} noted."),
                 session_id=s["github"])
    drop(home, f"notes-{s['aws']}.md", content)
    drop(home, "gading/agent.jsonl", jsonl(
        {"role": "user", "content": "halo dari agent", "timestamp": "2026-07-19T11:00:00+07:00",
         "agent": s["slack"], "session_id": "boring-session"},
        {"role": "assistant", "content": "halo juga", "timestamp": "2026-07-19T11:01:00+07:00"},
    ))
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
            rows = con.sql(f"SELECT * FROM read_parquet('{warehouse.glob(home.paths.warehouse, t)}', "
                           f"union_by_name=true)").fetchall()
            out.append(json.dumps(rows, default=str, ensure_ascii=False))
    return "\n".join(out)


def test_no_planted_secret_survives_anywhere_kenang_writes(home):
    _plant(home)
    h = str(home.paths.home)
    results = [kenang("run", "--home", h, "--now", NOW.isoformat()),
               kenang("run", "--home", h, "--now", NOW.isoformat(), "--json"),
               kenang("status", "--home", h), kenang("status", "--home", h, "--json"),
               kenang("verify", "--home", h),
               kenang("recall", "--home", h, "--user", "default", "wifi password"),
               kenang("sql", "--home", h, "SELECT * FROM sessions"),
               kenang("sql", "--home", h, "SELECT * FROM archive_files"),
               kenang("sql", "--home", h, "SELECT * FROM quarantine")]
    codes = [r.exit_code for r in results]
    assert codes == [0] * len(codes)
    haystacks = {
        "stdout": "".join(r.stdout for r in results),
        "stderr": "".join(r.stderr for r in results),
        "tables": _tables_text(home),
        "paths": "\n".join(str(p) for p in home.paths.home.rglob("*")),
    }
    for p in _kenang_written(home):
        haystacks[str(p.relative_to(home.paths.home))] = p.read_bytes().decode("utf-8", "replace")
    leaks = [(kind, where) for kind, secret in SECRETS.items() for where, text in haystacks.items()
             if secret in text or secret.replace(" ", "") in text]
    assert leaks == []
    # ... and the night did its work: the secrets became markers, the sessions are told apart
    tables = haystacks["tables"]
    assert "[REDACTED:" in tables
    sessions = json.loads(json.dumps(_sessions(home), default=str))
    assert {s["session_id"][:9] for s in sessions} >= {"redacted-"}
    assert any(s["agent"] and s["agent"].startswith("redacted-") for s in sessions)
    assert any("notes-" not in s["archive_path"] and "redacted-" in s["archive_path"] for s in sessions)


def _sessions(home) -> list[dict]:
    return warehouse.read(home.paths.warehouse, TABLES["sessions"]).to_pylist()
