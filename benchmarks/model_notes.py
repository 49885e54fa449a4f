"""The model's notes, measured: why its replies are rejected, which fields fall back, what they mention.

Days come from three sets: 50 DialogSum dialogues (every tenth of the test split, as
``benchmarks/summary_quality.py`` reads them), the demo corpus's days with their
hand-listed facts (``benchmarks/summary_facts.yaml``), and the Indonesian dialogues of
``benchmarks/data/`` with their reference notes, when that file is there.

``measure(days, summarizer)`` runs one summarizer over the days and returns, per set:

- ``first_reply``: each day's first model reply, classified by the first check it fails
  (``classify_reply``: unparseable or cut before the summary, a control character,
  an empty summary, a summary out of bounds, a copied injection or prompt, a copy of
  the user's own turns, not grounded, or valid). The classification is the
  benchmark's own, so a before and an after compare;
- ``first_try_valid``: the summarizer's own verdict on its first reply;
- ``fell_back``: per field, the days it fell back on, and (when the summarizer says
  why) the reasons;
- ``facts``: the demo facts the model's note mentions, against the extractive note's;
- ``recall``: the share of a reference note's content words the note holds (model,
  extractive), for sets with references;
- ``accepted``: the summaries the model wrote and kenang kept, for a hand check.

Run:  .venv/bin/python benchmarks/model_notes.py                  # all three sets
      .venv/bin/python benchmarks/model_notes.py --sets demo --json out.json
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from zoneinfo import ZoneInfo

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from transforms.extract import DayMessage, DayText  # noqa: E402
from transforms.frontmatter import normalise_summary  # noqa: E402
from transforms.summarize import (  # noqa: E402
    COPIED_SHARE,
    GROUNDED_SHARE,
    DayInput,
    ExtractiveSummarizer,
    Generation,
    Grounding,
    SessionMeta,
    content_terms,
    copied_share,
    grounded_share,
    parse_json_object,
)

DATA = Path(__file__).with_name("data")
SETS = ("dialogsum", "demo", "id")
REASONS = (
    "unparseable or cut before the summary",
    "control character",
    "empty summary",
    "summary out of bounds",
    "copied injection or prompt",
    "copied user turns",
    "not grounded",
    "valid",
)


@dataclass(frozen=True)
class NoteDay:
    """One day to write a note for: its set, a name, the input, and what a good note holds."""

    set: str
    name: str
    day: DayInput
    facts: tuple[tuple[str, ...], ...] = ()
    reference: str = ""


@dataclass
class Recorder:
    """A ``TextModel`` that passes every call on and keeps the replies."""

    inner: object
    replies: list[str] = field(default_factory=list)

    def __getattr__(self, name: str):
        return getattr(self.inner, name)

    def generate(self, messages: list[dict], *, schema: dict, temperature: float, max_tokens: int) -> Generation:
        gen = self.inner.generate(messages, schema=schema, temperature=temperature, max_tokens=max_tokens)  # type: ignore[attr-defined]
        self.replies.append(gen.text)
        return gen


def _control_broke_it(text: str) -> bool:
    """A raw control character inside a string of the reply (strict JSON refuses it)."""
    in_str = escaped = False
    for ch in text:
        if in_str:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_str = False
            elif ord(ch) < 0x20:
                return True
        elif ch == '"':
            in_str = True
    return False


def classify_reply(text: str, day: DayInput) -> str:
    """The first check a reply's summary fails (``REASONS``), or ``valid``."""
    if _control_broke_it(text):
        return "control character"
    obj = parse_json_object(text)
    if obj is None or not isinstance(obj.get("summary"), str):
        return "unparseable or cut before the summary"
    raw = obj["summary"]
    if not raw.strip():
        return "empty summary"
    summary = normalise_summary(raw)
    if summary is None:
        return "summary out of bounds"
    messages = day.text.messages
    if not Grounding.of(messages).summary_is_clean(summary):
        return "copied injection or prompt"
    users = [m.content for m in messages if m.role == "user" and not m.flagged]
    if copied_share(summary, users) >= COPIED_SHARE:
        return "copied user turns"
    day_terms = content_terms("\n".join(m.content for m in messages if not m.flagged))
    if grounded_share(summary, day_terms) < GROUNDED_SHARE:
        return "not grounded"
    return "valid"


def mentioned(note: str, fact: Sequence[str]) -> bool:
    low = note.lower()
    return any(re.search(rf"(?<!\w){re.escape(s.lower())}(?!\w)", low) for s in fact)


def recall(note: str, reference: str) -> float:
    ref = content_terms(reference)
    return len(ref & content_terms(note)) / len(ref) if ref else 0.0


def _note_text(doc) -> str:
    """What a reader sees of a note: title, what happened, decisions and open items."""
    return "\n".join((doc.title or "", doc.summary, *doc.decisions, *doc.open_items))


def note_record(nd: NoteDay, summarizer, extractive, recorder: Recorder | None) -> dict:
    """One day through ``summarizer``: what its first reply failed, what fell back and why, what the note holds."""
    before = len(recorder.replies) if recorder else 0
    t0 = time.perf_counter()
    outcome = summarizer.summarize(nd.day)
    seconds = time.perf_counter() - t0
    ex = extractive.summarize(nd.day).doc
    doc = outcome.doc
    replies = recorder.replies[before:] if recorder else []
    fallback = list(doc.generator.fallback_fields)
    uses_model = getattr(summarizer, "backend", "extractive") != "extractive"
    return {
        "set": nd.set,
        "day": nd.name,
        "seconds": round(seconds, 1),
        "first_try_valid": bool(outcome.first_try_valid),
        "first_reply": (classify_reply(replies[0], nd.day) if replies else "no reply") if recorder else None,
        "first_reply_text": replies[0] if replies else None,
        "fell_back": fallback,
        "reasons": dict(getattr(outcome, "reasons", None) or {}),
        "model_summary": uses_model and "summary" not in fallback,
        "title": doc.title,
        "summary": doc.summary,
        "facts": [len(nd.facts), *(sum(mentioned(_note_text(d), f) for f in nd.facts) for d in (doc, ex))],
        "recall": [recall(_note_text(d), nd.reference) for d in (doc, ex)] if nd.reference else None,
    }


def aggregate(records: Sequence[dict]) -> dict:
    """The figures per set, from the days' records."""
    out: dict = {}
    for r in records:
        f = out.setdefault(
            r["set"],
            {
                "days": 0,
                "first_try_valid": 0,
                "first_reply": Counter(),
                "fell_back": Counter(),
                "reasons": Counter(),
                "model_summaries": 0,
                "facts": {"total": 0, "model": 0, "extractive": 0},
                "recall": {"model": [], "extractive": []},
                "seconds": 0.0,
                "accepted": [],
            },
        )
        f["days"] += 1
        f["seconds"] += r["seconds"]
        f["first_try_valid"] += r["first_try_valid"]
        if r["first_reply"]:
            f["first_reply"][r["first_reply"]] += 1
        f["fell_back"].update(r["fell_back"])
        f["reasons"].update(f"{k}: {re.sub(r' [(].*[)]$', '', v)}" for k, v in r["reasons"].items())
        if r["model_summary"]:
            f["model_summaries"] += 1
            f["accepted"].append({"day": r["day"], "title": r["title"], "summary": r["summary"]})
        for k, v in zip(("total", "model", "extractive"), r["facts"], strict=True):
            f["facts"][k] += v
        if r["recall"]:
            f["recall"]["model"].append(r["recall"][0])
            f["recall"]["extractive"].append(r["recall"][1])
    for f in out.values():
        for k in ("model", "extractive"):
            vals = f["recall"][k]
            f["recall"][k] = round(sum(vals) / len(vals), 3) if vals else None
        for k in ("first_reply", "fell_back", "reasons"):
            f[k] = dict(f[k])
        f["seconds"] = round(f["seconds"], 1)
    return out


def measure(days: Sequence[NoteDay], summarizer, extractive=None, progress=None) -> dict:
    """Run ``summarizer`` over ``days``; the figures per set (see the module docstring).

    ``progress(i, record)`` is called after each day (a small model takes minutes a day on 2 cores)."""
    extractive = extractive or ExtractiveSummarizer()
    recorder = None
    if hasattr(summarizer, "llm"):
        recorder = Recorder(summarizer.llm)
        summarizer.llm = recorder
    records = []
    try:
        for i, nd in enumerate(days, 1):
            records.append(note_record(nd, summarizer, extractive, recorder))
            if progress is not None:
                progress(i, records[-1])
    finally:
        if recorder is not None:
            summarizer.llm = recorder.inner
    return aggregate(records)


# --- the day sets ----------------------------------------------------------------------


def _day_input(text: DayText) -> DayInput:
    msgs = text.messages
    sessions = tuple(
        SessionMeta(
            sid,
            min(m.ts for m in msgs if m.session_id == sid and m.ts),
            max(m.ts for m in msgs if m.session_id == sid and m.ts),
            sum(m.session_id == sid for m in msgs),
        )
        for sid in dict.fromkeys(m.session_id for m in msgs)
    )
    return DayInput(text, sessions, text.day + dt.timedelta(days=1))


def dialogsum_days(n: int = 50) -> list[NoteDay]:
    """``n`` DialogSum test dialogues, evenly spaced (50: every tenth), with their first reference summary."""
    from benchmarks.summary_quality import DIALOGSUM, day_of, dialogues

    path = next((p for p in (DIALOGSUM, ROOT.parents[1] / DIALOGSUM.relative_to(ROOT.parent)) if p.is_file()), None)
    if path is None:
        return []
    step = max(1, 500 // n) if n else 10
    rows = dialogues(path)[::step][:n]
    return [
        NoteDay("dialogsum", f"dialogsum-{i * step}", _day_input(day_of(r)), (), r["summary1"])
        for i, r in enumerate(rows)
    ]


def demo_note_days(n: int = 8) -> list[NoteDay]:
    """``n`` of the demo corpus's days (evenly spaced) with the facts of their topics."""
    from benchmarks.summary_quality import demo_days

    days = demo_days()
    step = max(1, len(days) // n) if n else 1
    return [
        NoteDay("demo", f"{t.user_id}/{t.day}", _day_input(t), tuple(tuple(x) for x in facts))
        for t, facts in days[::step][: n or None]
    ]


def indonesian_days(path: Path | None = None, n: int = 30) -> list[NoteDay]:
    """The Indonesian dialogues of ``benchmarks/data/indonesian_notes.yaml`` with their reference notes.

    Each dialogue is one day, as ``benchmarks/summary_quality.py`` builds it: its turns a
    minute apart in the evening (Asia/Jakarta), the user id the typing person's name
    when the dialogue gives one. None when the file is not there.
    """
    import yaml

    path = path or DATA / "indonesian_notes.yaml"
    if not path.is_file():
        return []
    tz = ZoneInfo("Asia/Jakarta")
    out: list[NoteDay] = []
    for i, d in enumerate(yaml.safe_load(path.read_text(encoding="utf-8"))["dialogues"]):
        day = dt.date(2026, 3, 2) + dt.timedelta(days=i)
        start = dt.datetime.combine(day, dt.time(20), tzinfo=tz)
        user = "-".join(str(d.get("user") or "default").lower().split())
        msgs = tuple(
            DayMessage("s1", t["role"], t["text"], start + dt.timedelta(minutes=j)) for j, t in enumerate(d["turns"])
        )
        reference = "\n".join(
            [str(d.get("reference") or ""), *map(str, d.get("decisions") or ()), *map(str, d.get("open_items") or ())]
        )
        out.append(NoteDay("id", str(d["id"]), _day_input(DayText(user, day, tz, msgs)), (), reference))
    return out[:: max(1, len(out) // n)][:n] if n else out


def load_days(
    sets: Sequence[str], n_dialogsum: int = 50, n_demo: int = 8, indonesian: Path | None = None, n_id: int = 30
) -> list[NoteDay]:
    out: list[NoteDay] = []
    if "dialogsum" in sets:
        out += dialogsum_days(n_dialogsum)
    if "demo" in sets:
        out += demo_note_days(n_demo)
    if "id" in sets:
        out += indonesian_days(indonesian, n_id)
    return interleave(out)


def interleave(days: Sequence[NoteDay]) -> list[NoteDay]:
    """The sets' days taken in turn, so a run cut short still has figures for every set."""
    by: dict[str, list[NoteDay]] = {}
    for d in days:
        by.setdefault(d.set, []).append(d)
    out: list[NoteDay] = []
    while any(by.values()):
        for queue in by.values():
            if queue:
                out.append(queue.pop(0))
    return out


def bundled_summarizer():
    """The bundled model behind kenang's LlmSummarizer, with the default settings of a nightly run."""
    from flows.models.llm import ModelConfig, bundled_model_path, load_model
    from schemas.config import Summarizer
    from schemas.lexicon import TECHNOLOGIES
    from transforms.summarize import LlmSummarizer, canonical_map

    cfg = Summarizer()
    model = load_model(ModelConfig(bundled_model_path(), cfg.n_ctx, cfg.n_threads, cfg.chat_format, cfg.seed))
    return LlmSummarizer(
        model,
        temperature=cfg.temperature,
        max_tokens=cfg.max_tokens,
        canonical_technologies=canonical_map(TECHNOLOGIES),
    )


def print_figures(figures: dict) -> None:
    for name, f in figures.items():
        n = f["days"]
        print(f"\n{name}: {n} days, {f['seconds']:.0f} s")
        print(f"  first try valid (kenang's verdict)  {f['first_try_valid']}/{n}")
        print(f"  summaries the model wrote and kenang kept  {f['model_summaries']}/{n}")
        if f["first_reply"]:
            print("  first reply, by the first check it fails:")
            for reason in (*REASONS, "no reply"):
                if reason in f["first_reply"]:
                    print(f"    {reason:<40} {f['first_reply'][reason]}")
        if f["fell_back"]:
            print("  fields that fell back: " + ", ".join(f"{k} {v}" for k, v in sorted(f["fell_back"].items())))
        if f["reasons"]:
            print("  why: " + "; ".join(f"{k} ({v})" for k, v in sorted(f["reasons"].items())))
        if f["facts"]["total"]:
            t = f["facts"]["total"]
            print(f"  facts mentioned: model {f['facts']['model']}/{t}, extractive {f['facts']['extractive']}/{t}")
        if f["recall"]["model"] is not None:
            print(f"  reference content recall: model {f['recall']['model']}, extractive {f['recall']['extractive']}")


def report(
    sample: int = 50,
    sets: Sequence[str] = SETS,
    demo: int = 8,
    indonesian: Path | None = None,
    n_id: int = 30,
    log: Path | None = None,
) -> dict:
    """The bundled model on ``sample`` DialogSum dialogues, ``demo`` demo days and the Indonesian set: printed
    and returned (JSON-able), for ``benchmarks/summary_quality.py``. ``log``: each day's record, as it is done."""

    def progress(i: int, record: dict) -> None:
        kept = "kept" if record["model_summary"] else "fell back"
        print(f"[{i}] {record['set']} {record['day']}: summary {kept}", file=sys.stderr, flush=True)
        if log is not None:
            with log.open("a", encoding="utf-8") as f:
                f.write(json.dumps(record, ensure_ascii=False) + "\n")

    days = load_days(sets, sample, demo, indonesian, n_id)
    done: list[dict] = []
    if log is not None and log.is_file():  # a run cut short goes on where it stopped
        done = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line.strip()]
        seen = {(r["set"], r["day"]) for r in done}
        days = [d for d in days if (d.set, d.name) not in seen]
    figures = measure(days, bundled_summarizer(), progress=progress)
    if log is not None and log.is_file():
        figures = aggregate([json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line.strip()])
    print_figures(figures)
    return figures


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sets", default=",".join(SETS), help=f"comma-separated, of {', '.join(SETS)}")
    p.add_argument("--dialogsum", type=int, default=50, help="DialogSum dialogues (evenly spaced; 50: every tenth)")
    p.add_argument("--demo", type=int, default=8, help="demo days (evenly spaced; 0: all)")
    p.add_argument("--id", type=int, default=30, help="Indonesian dialogues (evenly spaced)")
    p.add_argument(
        "--indonesian", type=Path, help="the Indonesian dialogues (default benchmarks/data/indonesian_notes.yaml)"
    )
    p.add_argument("--log", type=Path, help="append each day's record (JSON lines) here as it is done")
    p.add_argument("--from-log", type=Path, help="print the figures of a log instead of running the model")
    p.add_argument("--json", type=Path, help="also write the figures (with the accepted summaries) here")
    args = p.parse_args(argv)
    sets = [s.strip() for s in args.sets.split(",") if s.strip()]
    if args.from_log:
        lines = args.from_log.read_text(encoding="utf-8").splitlines()
        figures = aggregate([json.loads(line) for line in lines if line.strip()])
        print_figures(figures)
    else:
        figures = report(args.dialogsum, sets, args.demo, args.indonesian, args.id, args.log)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    main()
