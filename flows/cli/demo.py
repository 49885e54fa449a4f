"""``kenang demo``: a sample home with three weeks of bilingual chats, run once.

The home is marked with a ``.kenang-demo`` file. The demo wipes and rebuilds only a
home carrying that mark, so it can never destroy a real archive.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from flows.cli import report
from flows.cli.demo_corpus import demo_corpus
from flows.config import Settings, init_home, load_settings
from flows.store import mount, warehouse
from flows.store.fsio import atomic_write_bytes
from schemas.config import render_yaml
from schemas.tables import MESSAGES, SESSIONS
from transforms.days import eligible_from
from transforms.errors import UsageError

MARK = ".kenang-demo"
DEMO_CONFIG = {"timezone": "Asia/Jakarta", "default_user": "gading"}
#: Days summarized by the bundled model on the demo's last night; older days were
#: "imported" with the extractive backend first, which keeps the demo to a few minutes
#: on 2 cores (the 135M model takes 10-30 s a day).
MODEL_DAYS = 1
#: The demo ends by recalling these for its main user: one Indonesian question with an
#: English answer, one English question with an Indonesian answer.
DEMO_QUERIES = (
    "gimana cara akses Home Assistant dari luar tanpa buka port?",
    "after a power cut, which VM should boot first in Proxmox?",
)


@dataclass(frozen=True)
class DemoPlan:
    settings: Settings
    history_now: dt.datetime  # the first night: every day but the last, extractive summaries
    now: dt.datetime  # the last night: the newest day, summarized by the bundled model
    written: int


def prepare(home: Path, wall_now: dt.datetime | None = None) -> DemoPlan:
    """Wipe (if a demo home) and rebuild the demo home with its sample files."""
    if home.exists() and any(home.iterdir()) and not (home / MARK).exists():
        raise UsageError(f"{home} exists and is not a kenang demo home; pass an empty --home for the demo")
    if home.exists():
        shutil.rmtree(home)
    home.mkdir(parents=True)
    (home / MARK).write_text("created by `kenang demo`; safe to delete\n", encoding="utf-8")
    settings, _ = init_home(home, {**DEMO_CONFIG, "summarizer": {"backend": "extractive"}})
    mount.claim(settings)  # as `kenang init` does
    now = wall_now or dt.datetime.now(dt.UTC)
    tz = settings.timezone
    # The newest eligible day: yesterday once the grace period has passed, else the day before.
    end_day = (now.astimezone(tz) - settings.grace_period).date() - dt.timedelta(days=1)
    written = 0
    horizon = now.timestamp() - 3600
    for f in demo_corpus(end_day=end_day, days=21, tz=tz):
        path = settings.paths.active / f.relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        if f.symlink_to is not None:
            os.symlink(f.symlink_to, path)
            os.utime(path, (horizon, horizon), follow_symlinks=False)
        else:
            path.write_bytes(f.data)
            if f.mtime is not None:
                mtime = f.mtime if f.expect == "not_yet" else min(f.mtime, horizon)
                os.utime(path, (mtime, mtime))
        written += 1
    history_now = eligible_from(end_day - dt.timedelta(days=MODEL_DAYS), settings.timezone, settings.grace_period)
    return DemoPlan(settings, history_now, now, written)


def use_model(settings: Settings) -> Settings:
    """Switch the demo home to the bundled model for its last night (one key: ``summarizer.backend: llama``)."""
    text = render_yaml(values={**DEMO_CONFIG, "summarizer": {"backend": "llama"}})
    atomic_write_bytes(settings.paths.config_file, text.encode("utf-8"))
    return load_settings(settings.paths.home)


def recalls(settings: Settings) -> list[tuple[str, list]]:
    """The demo's example recalls, with the home's configured embedder."""
    from flows.query.recall import Recaller

    r = Recaller(settings, DEMO_CONFIG["default_user"])
    return [(q, r.search(q, top_k=3)) for q in DEMO_QUERIES]


def _example(notes: Sequence[Path], language: str) -> Path | None:
    """The newest note in ``language``, preferring one that lists decisions or open items."""
    texts = {p: p.read_text(encoding="utf-8") for p in notes}
    of_language = [p for p in notes if f"\nlanguage: {language}\n" in texts[p]]
    items = {"id": ("## Keputusan", "## Belum selesai"), "en": ("## Decisions", "## Open items")}[language]
    rich = [p for p in of_language if all(h in texts[p] for h in items)]
    some = [p for p in of_language if any(h in texts[p] for h in items)]
    return next(iter(rich or some or of_language), None)


def render(
    settings: Settings, history: dict, result: dict, seconds: float, found: Sequence[tuple[str, list]] = ()
) -> str:
    """The demo's closing words: what happened, per user, and what to try next."""
    wh = settings.paths.warehouse
    sessions = warehouse.read(wh, SESSIONS).to_pylist()
    messages = warehouse.read(wh, MESSAGES)
    per_user: dict[str, list] = {}
    for s in sessions:
        per_user.setdefault(s["user_id"], []).append(s)
    msg_users = messages["user_id"].to_pylist()
    rows = []
    for user, ss in sorted(per_user.items()):
        days = sorted({s["date"] for s in ss})
        rows.append(
            (
                user,
                len(days),
                f"{days[0]} .. {days[-1]}",
                len(ss),
                msg_users.count(user),
                sum(s["redactions"] for s in ss),
            )
        )
    home = settings.paths.home
    summaries = sorted(settings.paths.archive.rglob("*.summary.md"), key=lambda p: p.name, reverse=True)
    shown_notes = [p for p in (_example(summaries, "id"), _example(summaries, "en")) if p is not None]
    shown: list[str] = []
    for path in shown_notes:
        shown += [
            "",
            f"── {path.relative_to(settings.paths.archive)} " + "─" * 20,
            path.read_text(encoding="utf-8").rstrip(),
        ]
    lines = [
        "night 1: the history, summaries by the extractive backend",
        report.render_run(history),
        "",
        f"night 2: the newest day, summarized by the bundled model ({result.get('summarize', {}).get('model', '-')})",
        report.render_run({**result, "cli_seconds": seconds}),
        "",
        "loaded per user:",
        report.table(["user", "days", "span", "sessions", "messages", "secrets redacted"], rows),
        "",
        f"left in {settings.paths.active} (not yet eligible or still being written): "
        f"{result['ingest']['waiting_day'] + result['ingest']['waiting_quiet']} file(s)",
        f"quarantined on night 1: {history.get('quarantine', {}).get('moved', 0)} file(s), see above",
        "",
        f"one Indonesian and one English note of the {len(summaries)} "
        f"(all under {settings.paths.archive}/daily_sessions/, indexes in MEMORY_INDEX*.md):",
        *shown,
        "",
        "recall, by meaning and keywords across languages (kenang recall):",
        *[line for q, hits in found for line in ("", report.render_recall(q, DEMO_CONFIG["default_user"], hits))],
        "",
        "try next:",
        f"  kenang status --home {home}",
        f"  kenang verify --home {home}",
        f'  kenang sql --home {home} "SELECT user_id, date, count(*) AS messages FROM messages GROUP BY ALL ORDER BY date DESC LIMIT 10"',
        f'  kenang recall --home {home} "apa kesepakatan soal sahur?" --user gading',
        f"  kenang open-items --home {home} --user gading",
        f"  kenang models test --home {home}      # is the bundled model good enough to write notes?",
        f"  kenang run --home {home}        # a second run changes nothing",
    ]
    return "\n".join(lines)
