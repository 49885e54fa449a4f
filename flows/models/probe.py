"""``kenang models test``: five small days through the configured summarizer, one query through the embedder.

It tells a person, before a night depends on it, whether a backend works and whether
it is good enough to write notes: the latency, the completion tokens per second, how
many days' replies were valid on the first try, how many summaries kenang kept (a
summary not grounded in its day, a copy of the user's turns, an empty or cut one
falls back to the extractive note), why the others fell back, and how many of the
sample's hand-listed facts its notes mention against the extractive path's. The verdict
says whether the model is good enough to write notes, and what to use if not. The days
are fixed (homelab chats, two in Indonesian, two in English, one mixed), so figures
from two backends compare.
"""

from __future__ import annotations

import datetime as dt
import re
import time
from collections import Counter

from flows.config import Settings
from transforms.extract import DayMessage, DayText
from transforms.summarize import DayInput, ExtractiveSummarizer, SessionMeta

PROBE_DAY = dt.date(2026, 7, 19)
_TURNS = (
    ("user", "Pagi! The Proxmox backup to the NAS failed again last night, kenapa ya?"),
    (
        "assistant",
        "The job log says the NFS mount on the Synology was read-only after its update. Remount it "
        "read-write and rerun vzdump for VM 101.",
    ),
    ("user", "Done, it works now. Tolong ingatkan aku untuk cek snapshot ZFS hari Jumat."),
    ("assistant", "Noted: check the ZFS snapshots on Friday. The backup finished in 14 minutes."),
)

#: The sample: (turns, facts). A fact is a list of spellings, any one of which counts.
SAMPLE: tuple[tuple[tuple[tuple[str, str], ...], tuple[tuple[str, ...], ...]], ...] = (
    (_TURNS, (("proxmox",), ("backup",), ("nfs", "read-only", "mount"), ("zfs", "snapshot", "snapshots"))),
    (
        (
            ("user", "Scrub ZFS di pool tank nemu 3 error CKSUM di disk sdb. Datanya aman nggak ya?"),
            (
                "assistant",
                "Error CKSUM biasanya dari kabel SATA yang longgar. Ganti kabelnya, lalu jalankan zpool clear "
                "dan scrub lagi.",
            ),
            ("user", "Oke, kabel sudah aku ganti. Nanti malam aku jalankan scrub lagi."),
        ),
        (("zfs", "scrub"), ("cksum", "error", "errors"), ("kabel", "cable", "sata")),
    ),
    (
        (
            ("user", "Aku mau backup folder foto ke NAS pakai restic. Jadwalnya tiap malam jam 2."),
            (
                "assistant",
                "Buat repository restic di NAS, lalu pasang systemd timer untuk jam 02:00. Simpan password "
                "repository di file terpisah.",
            ),
            ("user", "Sip, jadi kita pakai restic dengan timer systemd. Retensi 7 harian dan 4 mingguan."),
        ),
        (("restic",), ("nas",), ("timer", "systemd", "jadwal"), ("retensi", "retention")),
    ),
    (
        (
            ("user", "Grafana should alert me on Telegram when the NAS disk is above 85%."),
            (
                "assistant",
                "Add a Telegram contact point with your bot token, then an alert rule on disk usage above 85 "
                "for five minutes.",
            ),
            ("user", "The test alert arrived on my phone. Thanks!"),
        ),
        (("grafana",), ("telegram",), ("disk", "nas", "85")),
    ),
    (
        (
            ("user", "My docker compose stack fails: the app starts before Postgres is ready."),
            (
                "assistant",
                "Add a healthcheck with pg_isready to the db service, and depends_on with condition "
                "service_healthy to the app.",
            ),
            ("user", "That fixed it, the app waits for the database now. I'll move the passwords to an .env file."),
        ),
        (("compose", "docker"), ("postgres", "database", "db"), ("healthcheck", "pg_isready")),
    ),
)

#: A model is good enough to write notes when kenang keeps at least this many of the sample's summaries
#: (and its notes mention at least as many facts as the extractive path's).
GOOD_ENOUGH_KEPT = 4
INSTEAD = (
    "use summarizer.backend: extractive, a multilingual instruct model of 1.5-3B parameters through "
    "summarizer.model_path, or a model server (summarizer.backend: openai)"
)


def probe_day(settings: Settings, turns=_TURNS, day: dt.date = PROBE_DAY) -> DayInput:
    tz = settings.timezone
    start = dt.datetime.combine(day, dt.time(9, 0), tzinfo=tz)
    msgs = tuple(
        DayMessage("probe", role, text, start + dt.timedelta(minutes=i)) for i, (role, text) in enumerate(turns)
    )
    text = DayText(user_id=settings.default_user, day=day, tz=tz, messages=msgs)
    session = SessionMeta("probe", msgs[0].ts, msgs[-1].ts, len(msgs))
    return DayInput(text, (session,), day, settings.projects, settings.summarizer.summary_chars)


def _mentions(doc, facts) -> int:
    low = f"{doc.title}\n{doc.summary}".lower()
    return sum(any(re.search(rf"(?<!\w){re.escape(s)}(?!\w)", low) for s in fact) for fact in facts)


def test_summarizer(settings: Settings) -> dict:
    from flows.models import llm

    t0 = time.perf_counter()
    summarizer = llm.make_summarizer(settings)
    loaded = time.perf_counter() - t0
    plain = ExtractiveSummarizer()
    outs, facts = [], {"total": 0, "model": 0, "extractive": 0}
    t0 = time.perf_counter()
    for i, (turns, day_facts) in enumerate(SAMPLE):
        day = probe_day(settings, turns, PROBE_DAY - dt.timedelta(days=i))
        out = summarizer.summarize(day)
        outs.append(out)
        facts["total"] += len(day_facts)
        facts["model"] += _mentions(out.doc, day_facts)
        facts["extractive"] += _mentions(plain.summarize(day).doc, day_facts)
    seconds = time.perf_counter() - t0
    n = len(outs)
    uses_model = summarizer.backend != "extractive"
    kept = sum("summary" not in o.doc.generator.fallback_fields for o in outs) if uses_model else 0
    refused = Counter(re.sub(r" \(.*\)$", "", o.reasons["summary"]) for o in outs if "summary" in o.reasons)
    llm_seconds = sum(o.llm_seconds for o in outs)
    completion = sum(o.completion_tokens for o in outs)
    if not uses_model:
        good, verdict = True, "no model: the extractive path writes every note"
    elif kept >= GOOD_ENOUGH_KEPT and facts["model"] >= facts["extractive"]:
        good, verdict = True, "good enough to write notes"
    else:
        good, verdict = False, f"not good enough to write notes: {INSTEAD}"
    return {
        "backend": summarizer.backend,
        "model": summarizer.model,
        "load_seconds": round(loaded, 3),
        "seconds": round(seconds, 3),
        "days": n,
        "attempts": sum(o.attempts for o in outs),
        "prompt_tokens": sum(o.prompt_tokens for o in outs),
        "completion_tokens": completion,
        "tokens_per_second": round(completion / llm_seconds, 2) if llm_seconds else None,
        "schema_honoured_first_try": all(o.first_try_valid for o in outs),
        "valid_first_try": sum(o.first_try_valid for o in outs) if uses_model else 0,
        "summaries_kept": kept,
        "summary_refused": dict(refused),
        "fallback_fields": sorted({f for o in outs for f in o.doc.generator.fallback_fields}),
        "fallback_reasons": [dict(o.reasons) for o in outs],
        "facts": facts,
        "good_enough": good,
        "verdict": verdict,
        "tokens_counted_by": _counted_by(summarizer),
        "structured_output": _structured_output(settings, summarizer),
        "summary": outs[0].doc.summary,
    }


def _counted_by(summarizer) -> str:
    """Who counted the day's tokens for the context: the model, the server's tokenizer, or an estimate."""
    way = getattr(getattr(summarizer, "llm", None), "_tokenize", None)
    if way is None and getattr(summarizer, "backend", "") != "openai":
        return "the model" if getattr(summarizer, "backend", "") == "llama" else "-"
    return f"the server ({way[0]})" if way else "an estimate (the server offers no tokenizer kenang knows)"


def _structured_output(settings: Settings, summarizer) -> str | None:
    """openai: how the schema was sent in the end, and whether the server refused what kenang.yaml says."""
    sent = getattr(getattr(summarizer, "llm", None), "sent", None)
    if sent is None:
        return None
    asked = settings.summarizer.structured_output
    return sent if sent == asked else f"{sent} (the server refused {asked}: set summarizer.structured_output: {sent})"


def test_embedder(settings: Settings) -> dict:
    from flows.models import embed

    t0 = time.perf_counter()
    e = embed.make_embedder(settings, for_queries=True)
    loaded = time.perf_counter() - t0
    if e is None:
        return {"backend": "none"}
    t0 = time.perf_counter()
    q = e.embed_query("backup NAS gagal")
    p = e.embed_passages([_TURNS[1][1], _TURNS[3][1]])
    seconds = time.perf_counter() - t0
    return {
        "backend": settings.embedder.backend,
        "id": e.id,
        "dim": int(e.dim),
        "load_seconds": round(loaded, 3),
        "seconds": round(seconds, 3),
        "cosine_query_to_passages": [round(float(x), 4) for x in p @ q],
    }
