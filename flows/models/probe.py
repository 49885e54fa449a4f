"""``kenang models test``: one small day through the configured summarizer, one query through the embedder.

It tells a person, before a night depends on it, whether a backend works and how
well: the latency, the completion tokens per second, whether the reply honoured the
summary's JSON schema on the first try, and which fields fell back to the extractive
ones. The day is fixed (four turns about a homelab, in English and Indonesian), so
figures from two backends compare.
"""

from __future__ import annotations

import datetime as dt
import time

from flows.config import Settings
from transforms.extract import DayMessage, DayText
from transforms.summarize import DayInput, SessionMeta

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


def probe_day(settings: Settings) -> DayInput:
    tz = settings.timezone
    start = dt.datetime.combine(PROBE_DAY, dt.time(9, 0), tzinfo=tz)
    msgs = tuple(
        DayMessage("probe", role, text, start + dt.timedelta(minutes=i)) for i, (role, text) in enumerate(_TURNS)
    )
    text = DayText(user_id=settings.default_user, day=PROBE_DAY, tz=tz, messages=msgs)
    session = SessionMeta("probe", msgs[0].ts, msgs[-1].ts, len(msgs))
    return DayInput(text, (session,), PROBE_DAY, settings.projects, settings.summarizer.summary_chars)


def test_summarizer(settings: Settings) -> dict:
    from flows.models import llm

    t0 = time.perf_counter()
    summarizer = llm.make_summarizer(settings)
    loaded = time.perf_counter() - t0
    t0 = time.perf_counter()
    out = summarizer.summarize(probe_day(settings))
    seconds = time.perf_counter() - t0
    doc = out.doc
    return {
        "backend": summarizer.backend,
        "model": summarizer.model,
        "load_seconds": round(loaded, 3),
        "seconds": round(seconds, 3),
        "attempts": out.attempts,
        "prompt_tokens": out.prompt_tokens,
        "completion_tokens": out.completion_tokens,
        "tokens_per_second": round(out.completion_tokens / out.llm_seconds, 2) if out.llm_seconds else None,
        "schema_honoured_first_try": out.first_try_valid,
        "fallback_fields": list(doc.generator.fallback_fields),
        "tokens_counted_by": _counted_by(summarizer),
        "summary": doc.summary,
    }


def _counted_by(summarizer) -> str:
    """Who counted the day's tokens for the context: the model, the server's tokenizer, or an estimate."""
    way = getattr(getattr(summarizer, "llm", None), "_tokenize", None)
    if way is None and getattr(summarizer, "backend", "") != "openai":
        return "the model" if getattr(summarizer, "backend", "") == "llama" else "-"
    return f"the server ({way[0]})" if way else "an estimate (the server offers no tokenizer kenang knows)"


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
