"""Summary quality: ROUGE on DialogSum, and a bilingual fact check on the demo corpus.

DialogSum's test split (``../shared/eval/dialogsum/``: 500 English two-person
dialogues, three human summaries each; CC BY-NC-SA 4.0, evaluation only, never
shipped) is read here, never copied into the package. Each dialogue becomes one
kenang day: one session whose turns are messages "#Person1#: ...", a minute apart, as
a pasted chat would be. Printed per method: ROUGE-1, ROUGE-2 and ROUGE-L F1 (the best of
the three references, averaged, ``rouge-score`` with its stemmer), the mean summary
length in words, and the time per day.

Methods: lead-3 and longest-3 (the first / longest three turns, speaker tags
stripped), the extractive summary before issue 12, the current extractive summary, and
(``--model-sample N``, default 50, a fixed sample: every tenth dialogue) the bundled
model twice: writing from the day's key sentences and facts (select-then-write, as a
long day gets it), and from the transcript (as a day that fits gets it), each with the
share of days valid on the first try.

Then the demo corpus (Indonesian and English): each day's sessions are matched to the
topics of ``benchmarks/summary_facts.yaml`` by their first user message, and the share
of the topics' facts each summary mentions is printed per method.

Run:  .venv/bin/python benchmarks/summary_quality.py                # all, model on 50
      .venv/bin/python benchmarks/summary_quality.py --model-sample 0   # no model
Target: the extractive summary reaches ROUGE-1 >= 0.32 on all 500 (lead-3: 0.272).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from zoneinfo import ZoneInfo

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.baselines import lead_3, longest_3, previous_extractive  # noqa: E402
from transforms.digest import extractive_summary  # noqa: E402
from transforms.extract import DayMessage, DayText  # noqa: E402

DIALOGSUM = ROOT.parent / "shared" / "eval" / "dialogsum" / "dialogsum.test.jsonl"
FACTS = Path(__file__).with_name("summary_facts.yaml")
UTC = ZoneInfo("UTC")
DAY = dt.date(2026, 1, 5)


def dialogues(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def turns_of(row: dict) -> list[str]:
    return [t.strip() for t in row["dialogue"].split("\n") if t.strip()]


def day_of(row: dict) -> DayText:
    start = dt.datetime.combine(DAY, dt.time(9), tzinfo=UTC)
    msgs = tuple(DayMessage("s1", "user", t, start + dt.timedelta(minutes=i)) for i, t in enumerate(turns_of(row)))
    return DayText("u1", DAY, UTC, msgs)


def score(rows: list[dict], summarize: Callable[[dict], str]) -> dict:
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=True)
    out = {"rouge1": [], "rouge2": [], "rougeL": [], "words": [], "seconds": []}
    for row in rows:
        t0 = time.perf_counter()
        summary = summarize(row)
        out["seconds"].append(time.perf_counter() - t0)
        refs = [row["summary1"], row["summary2"], row["summary3"]]
        for k in ("rouge1", "rouge2", "rougeL"):
            out[k].append(max(scorer.score(r, summary)[k].fmeasure for r in refs))
        out["words"].append(len(summary.split()))
    return {k: statistics.mean(v) for k, v in out.items()}


def print_row(name: str, n: int, r: dict, extra: str = "") -> None:
    print(
        f"{name:<34} {n:>4}  R1 {r['rouge1']:.3f}  R2 {r['rouge2']:.3f}  RL {r['rougeL']:.3f}  "
        f"{r['words']:5.1f} words  {r['seconds'] * 1000:8.1f} ms/day{extra}",
        flush=True,
    )


def model_summarizer(key_sentences: str = "long"):
    """The bundled model behind kenang's own LlmSummarizer, as the nightly run builds it."""
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
        key_sentences=key_sentences,
    )


def day_input(text: DayText):
    from transforms.summarize import DayInput, SessionMeta

    msgs = text.messages
    sessions = tuple(
        SessionMeta(
            sid,
            min(m.ts for m in msgs if m.session_id == sid),
            max(m.ts for m in msgs if m.session_id == sid),
            sum(m.session_id == sid for m in msgs),
        )
        for sid in dict.fromkeys(m.session_id for m in msgs)
    )
    return DayInput(text, sessions, text.day + dt.timedelta(days=1))


# --- the demo corpus's facts ----------------------------------------------------------


def demo_days() -> list[tuple[DayText, list[list[str]]]]:
    """Each demo (user, day) with the facts of the topics its sessions are on."""
    from flows.cli.demo_corpus import demo_corpus
    from transforms.parse import parse_transcript

    topics = yaml.safe_load(FACTS.read_text(encoding="utf-8"))
    tz = ZoneInfo("Asia/Jakarta")
    by: dict = {}
    for f in demo_corpus(end_day=dt.date(2026, 7, 19), days=21, tz=tz):
        if f.symlink_to is not None or f.expect != "ok":
            continue
        try:
            s = parse_transcript(f.relpath.rsplit("/", 1)[-1], f.data, tz=tz)
        except Exception:  # noqa: BLE001 - the corpus holds broken files on purpose
            continue
        if s.first_ts is None:
            continue
        user = f.relpath.split("/")[0] if "/" in f.relpath else "gading"
        key = (user, s.first_ts.astimezone(tz).date())
        sid = s.session_id or f.relpath
        msgs, facts = by.setdefault(key, ([], []))
        msgs.extend(DayMessage(sid, m.role, m.content, m.ts) for m in s.messages)
        opener = next((m.content.lower() for m in s.messages if m.role == "user"), "")
        for spec in topics.values():
            if any(w in opener for w in spec["detect"]):
                facts.extend(spec["facts"])
                break
    return [(DayText(u, d, tz, tuple(m)), f) for (u, d), (m, f) in sorted(by.items()) if f]


def mentioned(summary: str, fact: list[str]) -> bool:
    low = summary.lower()
    return any(re.search(rf"(?<!\w){re.escape(s.lower())}(?!\w)", low) for s in fact)


def fact_share(days, summarize: Callable[[DayText], str]) -> tuple[float, int, int]:
    hit = total = 0
    for text, facts in days:
        summary = summarize(text)
        hit += sum(mentioned(summary, f) for f in facts)
        total += len(facts)
    return (hit / total if total else 0.0), hit, total


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, default=DIALOGSUM, help=f"DialogSum test JSONL (default {DIALOGSUM})")
    p.add_argument("--model-sample", type=int, default=50, help="dialogues for the bundled model (0: skip)")
    args = p.parse_args(argv)
    rows = dialogues(args.data)
    n = len(rows)
    print(f"DialogSum test split: {n} dialogues, best of 3 references, rouge-score with stemmer")
    print_row("lead-3 (speaker tags stripped)", n, score(rows, lambda r: lead_3(turns_of(r))))
    print_row("longest-3", n, score(rows, lambda r: longest_3(turns_of(r))))
    print_row("extractive, before issue 12", n, score(rows, lambda r: previous_extractive(day_of(r))))
    print_row("extractive, now", n, score(rows, lambda r: extractive_summary(day_of(r))))
    if args.model_sample:
        sample = rows[:: max(1, n // args.model_sample)][: args.model_sample]
        for label, mode in (("bundled model, select-then-write", "always"), ("bundled model, transcript", "never")):
            s = model_summarizer(mode)
            outcomes = []

            def by_model(r: dict, s=s, outcomes=outcomes) -> str:
                out = s.summarize(day_input(day_of(r)))
                outcomes.append(out)
                return out.doc.summary

            r = score(sample, by_model)
            first = sum(o.first_try_valid for o in outcomes)
            fell = sum("summary" in o.doc.generator.fallback_fields for o in outcomes)
            print_row(label, len(sample), r, f"  (first try valid {first}/{len(sample)}; summary fell back on {fell})")
        print_row("extractive, now (same sample)", len(sample), score(sample, lambda r: extractive_summary(day_of(r))))
    days = demo_days()
    print(f"\ndemo corpus: {len(days)} days (Indonesian and English), facts from {FACTS.name}")
    for name, fn in (("extractive, before issue 12", previous_extractive), ("extractive, now", extractive_summary)):
        share, hit, total = fact_share(days, fn)
        print(f"{name:<34} facts mentioned {hit}/{total} = {share:.0%}")


if __name__ == "__main__":
    main()
