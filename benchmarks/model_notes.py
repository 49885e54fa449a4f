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
    """The reply parses only when control characters are allowed inside strings."""
    body = re.sub(r"^```(?:json)?\s*|\s*```$", "", text.strip(), flags=re.MULTILINE)
    start = body.find("{")
    if start < 0:
        return False
    try:
        json.JSONDecoder().raw_decode(body[start:])
        return False
    except ValueError:
        pass
    try:
        json.JSONDecoder(strict=False).raw_decode(body[start:])
        return True
    except ValueError:
        return bool(re.search(r'"[^"]*[\x00-\x1f][^"]*"', body))


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


def measure(days: Sequence[NoteDay], summarizer, extractive=None) -> dict:
    """Run ``summarizer`` over ``days``; the figures per set (see the module docstring)."""
    extractive = extractive or ExtractiveSummarizer()
    recorder = None
    if hasattr(summarizer, "llm"):
        recorder = Recorder(summarizer.llm)
        summarizer.llm = recorder
    out: dict = {}
    for nd in days:
        f = out.setdefault(
            nd.set,
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
        before = len(recorder.replies) if recorder else 0
        t0 = time.perf_counter()
        outcome = summarizer.summarize(nd.day)
        f["seconds"] += time.perf_counter() - t0
        ex = extractive.summarize(nd.day)
        doc = outcome.doc
        f["days"] += 1
        f["first_try_valid"] += bool(outcome.first_try_valid)
        if recorder is not None:
            replies = recorder.replies[before:]
            f["first_reply"][classify_reply(replies[0], nd.day) if replies else "no reply"] += 1
        fallback = tuple(doc.generator.fallback_fields)
        f["fell_back"].update(fallback)
        for name, why in (getattr(outcome, "reasons", None) or {}).items():
            f["reasons"][f"{name}: {why}"] += 1
        if "summary" not in fallback and getattr(summarizer, "backend", "extractive") != "extractive":
            f["model_summaries"] += 1
            f["accepted"].append({"day": nd.name, "title": doc.title, "summary": doc.summary})
        if nd.facts:
            f["facts"]["total"] += len(nd.facts)
            f["facts"]["model"] += sum(mentioned(_note_text(doc), fact) for fact in nd.facts)
            f["facts"]["extractive"] += sum(mentioned(_note_text(ex.doc), fact) for fact in nd.facts)
        if nd.reference:
            f["recall"]["model"].append(recall(_note_text(doc), nd.reference))
            f["recall"]["extractive"].append(recall(_note_text(ex.doc), nd.reference))
    for f in out.values():
        for k in ("model", "extractive"):
            vals = f["recall"][k]
            f["recall"][k] = round(sum(vals) / len(vals), 3) if vals else None
        f["first_reply"] = dict(f["first_reply"])
        f["fell_back"] = dict(f["fell_back"])
        f["reasons"] = dict(f["reasons"])
        f["seconds"] = round(f["seconds"], 1)
    if recorder is not None:
        summarizer.llm = recorder.inner
    return out


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
    """Every tenth DialogSum test dialogue, ``n`` of them, with its first reference summary."""
    from benchmarks.summary_quality import DIALOGSUM, day_of, dialogues

    path = next((p for p in (DIALOGSUM, ROOT.parents[1] / DIALOGSUM.relative_to(ROOT.parent)) if p.is_file()), None)
    if path is None:
        return []
    rows = dialogues(path)[::10][:n]
    return [
        NoteDay("dialogsum", f"dialogsum-{i * 10}", _day_input(day_of(r)), (), r["summary1"])
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


def indonesian_days() -> list[NoteDay]:
    """The Indonesian dialogues of ``benchmarks/data/`` with their reference notes (none when absent).

    Each dialogue: ``id``, ``turns`` (``speaker``/``role``, ``text``) and a ``reference``
    note (its ``summary`` or ``note`` text, decisions and open items).
    """
    import yaml

    out: list[NoteDay] = []
    tz = ZoneInfo("Asia/Jakarta")
    for path in sorted(DATA.glob("*")) if DATA.is_dir() else []:
        if path.suffix not in (".yaml", ".yml", ".json", ".jsonl"):
            continue
        if path.suffix == ".jsonl":
            items = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        else:
            loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
            items = loaded.get("dialogues", loaded) if isinstance(loaded, dict) else loaded
        for i, item in enumerate(items or []):
            if not isinstance(item, dict) or not item.get("turns"):
                continue
            day = dt.date(2026, 3, 2) + dt.timedelta(days=i)
            start = dt.datetime.combine(day, dt.time(20), tzinfo=tz)
            msgs = []
            for j, turn in enumerate(item["turns"]):
                if isinstance(turn, dict):
                    who = turn.get("speaker") or turn.get("name") or ""
                    role = turn.get("role") or "user"
                    text = turn.get("text") or turn.get("content") or ""
                else:
                    who, role, text = "", "user", str(turn)
                if who and role == "user":
                    text = f"{who}: {text}"
                msgs.append(DayMessage("s1", role, text, start + dt.timedelta(minutes=j)))
            ref = item.get("reference") or {}
            if isinstance(ref, dict):
                parts = [
                    ref.get("summary") or ref.get("note") or "",
                    *(ref.get("decisions") or ()),
                    *(ref.get("open_items") or ()),
                ]
                reference = "\n".join(str(p) for p in parts)
            else:
                reference = str(ref)
            name = str(item.get("id", f"{path.stem}-{i}"))
            out.append(NoteDay("id", name, _day_input(DayText("u1", day, tz, tuple(msgs))), (), reference))
    return out


def load_days(sets: Sequence[str], n_dialogsum: int = 50, n_demo: int = 8) -> list[NoteDay]:
    out: list[NoteDay] = []
    if "dialogsum" in sets:
        out += dialogsum_days(n_dialogsum)
    if "demo" in sets:
        out += demo_note_days(n_demo)
    if "id" in sets:
        out += indonesian_days()
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


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sets", default=",".join(SETS), help=f"comma-separated, of {', '.join(SETS)}")
    p.add_argument("--dialogsum", type=int, default=50, help="DialogSum dialogues (every tenth)")
    p.add_argument("--demo", type=int, default=8, help="demo days (evenly spaced; 0: all)")
    p.add_argument("--json", type=Path, help="also write the figures (with the accepted summaries) here")
    args = p.parse_args(argv)
    days = load_days([s.strip() for s in args.sets.split(",") if s.strip()], args.dialogsum, args.demo)
    figures = measure(days, bundled_summarizer())
    print_figures(figures)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    main()
