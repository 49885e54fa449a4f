"""Summary quality: the daily note on DialogSum, on Indonesian dialogues, and on the demo days.

Every note here comes out of kenang's own path: ``ExtractiveSummarizer().summarize`` on
a ``DayInput``, so whatever changes the extractive note shows up here. A note's text is
what a reader sees of it: the title, "What happened" (``summary``), the decisions and
the open items.

- **DialogSum** (``../shared/eval/dialogsum/``: 500 English two-person dialogues, three
  human summaries each; CC BY-NC-SA 4.0, evaluation only, never shipped or copied
  into tests). Each dialogue becomes one day: one session whose turns are messages
  "#Person1#: ...", a minute apart, as a pasted chat would be. ROUGE-1/2/L F1 of the
  note's ``summary`` (the best of the three references, averaged, ``rouge-score`` with
  its stemmer), beside lead-3, longest-3 and the extractive summary of before issue 12
  (``benchmarks/baselines.py``).
- **Indonesian** (``benchmarks/data/indonesian_notes.yaml``: 30 chats written for this
  benchmark, each with a reference note, its decisions and its open items). The
  content-word recall of the reference note (stemmed content words: the terms of
  ``transforms.chunk.terms_of`` that are no stop word of ``schemas.lexicon``, the share
  of the reference's that the note's text holds, averaged over dialogues), and the
  precision and recall of the decisions and of the open items found. A found item
  matches a reference item when they share at least half of the reference item's
  content words; each reference item is matched once. Counts are pooled over the set.
- **Demo days** (``flows.cli.demo_corpus``): each day's sessions are matched to the
  topics of ``benchmarks/summary_facts.yaml`` by their first user message, and the
  share of the topics' facts the note's text mentions is printed.
- **The model path** (``--model-sample N``, default 0): ``benchmarks/model_notes.py``
  measures it, when it is there, through its ``report(sample=N)``; the extractive
  note's ROUGE on the same N dialogues (every tenth) is printed beside it.

Every figure is printed beside its target; ``--json`` prints them as one JSON object
instead (with the per-dialogue figures of the Indonesian set).

``--time`` also prints what the note writer costs: the CPU milliseconds a day of the
summarize stage's pure part (``flows.stages.summarize.written``: the note, its readback)
over each set's days, the best of three passes, every ``lru_cache`` of kenang emptied
before each pass so that no text is cheap for having been met before. DialogSum's days
are ten dialogues each (a session apiece, about 100 messages, the size of a busy day).

Run:  .venv/bin/python benchmarks/summary_quality.py                  # all sets, no model
      .venv/bin/python benchmarks/summary_quality.py --sets id,demo    # skip DialogSum
      .venv/bin/python benchmarks/summary_quality.py --model-sample 50 --json > figures.json
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import importlib
import json
import re
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from zoneinfo import ZoneInfo

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.baselines import lead_3, longest_3, previous_extractive  # noqa: E402
from transforms.extract import DayMessage, DayText  # noqa: E402

_DIALOGSUM = Path("shared", "eval", "dialogsum", "dialogsum.test.jsonl")
# Beside the checkout (../shared), or beside a worktree's parent folder (../../shared).
DIALOGSUM = next(
    (p / _DIALOGSUM for p in (ROOT.parent, ROOT.parent.parent) if (p / _DIALOGSUM).is_file()), ROOT.parent / _DIALOGSUM
)
FACTS = Path(__file__).with_name("summary_facts.yaml")
INDONESIAN = Path(__file__).with_name("data") / "indonesian_notes.yaml"
MODEL_NOTES = Path(__file__).with_name("model_notes.py")
UTC = ZoneInfo("UTC")
JAKARTA = ZoneInfo("Asia/Jakarta")
DAY = dt.date(2026, 1, 5)
SETS = ("dialogsum", "id", "demo")

# The targets (issue 31, item 7): a figure meets its target when it is at least this.
TARGETS = {
    "dialogsum_rouge1": 0.36,
    "id_content_recall": 0.5,
    "id_open_precision": 0.8,
    "id_open_recall": 0.6,
    "demo_facts": 0.9,
}


# --- what a note says ------------------------------------------------------------------


def day_input(text: DayText):
    """A ``DayInput`` of one day's messages, a session per session id, as the summarize stage builds it."""
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


@lru_cache(maxsize=1)
def _extractive():
    from transforms.summarize import ExtractiveSummarizer

    return ExtractiveSummarizer()


def extractive_note(text: DayText):
    """The extractive note (a ``DaySummary``) kenang writes for this day."""
    return _extractive().summarize(day_input(text)).doc


def note_text(doc) -> str:
    """What a reader sees of a note: its title, what happened, its decisions and its open items."""
    return "\n".join((doc.title or "", doc.summary, *doc.decisions, *doc.open_items))


# --- scoring helpers (pure; tests/test_summary_quality_data.py) ------------------------


@lru_cache(maxsize=1)
def _stop_terms() -> frozenset[str]:
    from schemas.lexicon import STOPWORDS_EN, STOPWORDS_ID
    from transforms.chunk import terms_of

    words = STOPWORDS_ID | STOPWORDS_EN
    return frozenset(words) | frozenset(t for w in words for t in terms_of(w))


def content_words(text: str) -> frozenset[str]:
    """The stemmed content words of a text: ``terms_of`` less the stop words of both languages."""
    from transforms.chunk import terms_of

    stop = _stop_terms()
    return frozenset(t for t in terms_of(text) if t not in stop)


def content_recall(note: str, reference: str) -> float:
    """The share of the reference's content words the note holds (0.0 for a reference without any)."""
    ref = content_words(reference)
    return len(ref & content_words(note)) / len(ref) if ref else 0.0


def item_matches(found: str, reference: str) -> bool:
    """Whether a found item shares at least half of the reference item's content words."""
    ref = content_words(reference)
    return bool(ref) and 2 * len(ref & content_words(found)) >= len(ref)


def match_items(found: Sequence[str], reference: Sequence[str]) -> int:
    """How many found items match a reference item, each reference item matched once (the best overlap first)."""
    refs = [content_words(r) for r in reference]
    free = set(range(len(refs)))
    matched = 0
    for item in found:
        words = content_words(item)
        best = max(
            (i for i in free if refs[i] and 2 * len(refs[i] & words) >= len(refs[i])),
            key=lambda i: (len(refs[i] & words) / len(refs[i]), -i),
            default=None,
        )
        if best is not None:
            free.discard(best)
            matched += 1
    return matched


def item_scores(pairs: Sequence[tuple[Sequence[str], Sequence[str]]]) -> dict:
    """Precision and recall of found items against reference items, pooled over (found, reference) pairs.

    Nothing found where nothing was to be found is perfect (1.0); nothing found where
    something was, or something found where nothing was, scores 0.0.
    """
    found = sum(len(f) for f, _ in pairs)
    refs = sum(len(r) for _, r in pairs)
    matched = sum(match_items(f, r) for f, r in pairs)
    return {
        "precision": matched / found if found else float(not refs),
        "recall": matched / refs if refs else float(not found),
        "matched": matched,
        "found": found,
        "reference": refs,
    }


# --- DialogSum -------------------------------------------------------------------------


def dialogues(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def turns_of(row: dict) -> list[str]:
    return [t.strip() for t in row["dialogue"].split("\n") if t.strip()]


def day_of(row: dict) -> DayText:
    start = dt.datetime.combine(DAY, dt.time(9), tzinfo=UTC)
    msgs = tuple(DayMessage("s1", "user", t, start + dt.timedelta(minutes=i)) for i, t in enumerate(turns_of(row)))
    return DayText("u1", DAY, UTC, msgs)


def model_sample(rows: list[dict], n: int) -> list[dict]:
    """The fixed sample the model path is measured on: every tenth dialogue (for 50 of 500), ``n`` of them."""
    return rows[:: max(1, len(rows) // n)][:n] if n else []


def score(rows: list[dict], summarize: Callable[[dict], str]) -> dict:
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=True)
    out: dict[str, list[float]] = {"rouge1": [], "rouge2": [], "rougeL": [], "words": [], "seconds": []}
    for row in rows:
        t0 = time.perf_counter()
        summary = summarize(row)
        out["seconds"].append(time.perf_counter() - t0)
        refs = [row["summary1"], row["summary2"], row["summary3"]]
        for k in ("rouge1", "rouge2", "rougeL"):
            out[k].append(max(scorer.score(r, summary)[k].fmeasure for r in refs))
        out["words"].append(len(summary.split()))
    return {k: round(statistics.mean(v), 4) for k, v in out.items()} | {"n": len(rows)}


def dialogsum_figures(rows: list[dict], sample: int) -> dict:
    methods: dict[str, Callable[[dict], str]] = {
        "lead-3": lambda r: lead_3(turns_of(r)),
        "longest-3": lambda r: longest_3(turns_of(r)),
        "extractive before issue 12": lambda r: previous_extractive(day_of(r)),
        "extractive note": lambda r: extractive_note(day_of(r)).summary,
    }
    out = {name: score(rows, fn) for name, fn in methods.items()}
    if sample:
        out["extractive note, model sample"] = score(model_sample(rows, sample), methods["extractive note"])
    return out


# --- the Indonesian set ----------------------------------------------------------------


def indonesian_dialogues(path: Path = INDONESIAN) -> list[dict]:
    """The hand-written Indonesian dialogues: id, user (optional), turns, reference, decisions, open_items."""
    return yaml.safe_load(path.read_text(encoding="utf-8"))["dialogues"]


def indonesian_day(dialogue: dict, index: int = 0) -> DayText:
    """One dialogue as one day: a session of its turns, a minute apart, in the evening, Asia/Jakarta.

    The user id is the typing person's name when the dialogue gives one ("Bu Rina" is
    ``bu-rina``), as a configured user would be; else kenang's default user.
    """
    day = dt.date(2026, 3, 2) + dt.timedelta(days=index)
    start = dt.datetime.combine(day, dt.time(20), tzinfo=JAKARTA)
    user = "-".join(str(dialogue.get("user") or "default").lower().split())
    msgs = tuple(
        DayMessage("s1", t["role"], t["text"], start + dt.timedelta(minutes=i)) for i, t in enumerate(dialogue["turns"])
    )
    return DayText(user, day, JAKARTA, msgs)


def indonesian_figures(items: list[dict]) -> dict:
    per = []
    decisions, opens = [], []
    for i, d in enumerate(items):
        doc = extractive_note(indonesian_day(d, i))
        decisions.append((doc.decisions, d["decisions"]))
        opens.append((doc.open_items, d["open_items"]))
        per.append(
            {
                "id": d["id"],
                "content_recall": round(content_recall(note_text(doc), d["reference"]), 3),
                "language": doc.language,
                "title": doc.title,
                "decisions": {"found": list(doc.decisions), "matched": match_items(doc.decisions, d["decisions"])},
                "open_items": {"found": list(doc.open_items), "matched": match_items(doc.open_items, d["open_items"])},
            }
        )
    return {
        "dialogues": len(items),
        "content_recall": round(statistics.mean(p["content_recall"] for p in per), 4) if per else 0.0,
        # What a note made only of the chat's own words could reach: the whole chat's recall.
        "content_recall_whole_chat": round(
            statistics.mean(content_recall("\n".join(t["text"] for t in d["turns"]), d["reference"]) for d in items), 4
        )
        if items
        else 0.0,
        "indonesian_notes": sum(p["language"] == "id" for p in per),
        "decisions": item_scores(decisions),
        "open_items": item_scores(opens),
        "per_dialogue": per,
    }


# --- the demo corpus's facts -----------------------------------------------------------


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


def fact_share(days, summarize: Callable[[DayText], str]) -> dict:
    hit = total = 0
    for text, facts in days:
        summary = summarize(text)
        hit += sum(mentioned(summary, f) for f in facts)
        total += len(facts)
    return {"share": round(hit / total, 4) if total else 0.0, "mentioned": hit, "facts": total}


def demo_figures() -> dict:
    days = demo_days()
    return {
        "days": len(days),
        "extractive before issue 12": fact_share(days, previous_extractive),
        "extractive note": fact_share(days, lambda t: note_text(extractive_note(t))),
        # The "78 % now" was the summary alone; the note's text adds the title and the items.
        "extractive note, What happened only": fact_share(days, lambda t: extractive_note(t).summary),
    }


# --- the model path --------------------------------------------------------------------


def model_figures(sample: int, quiet: bool = False) -> dict:
    """``benchmarks/model_notes.py``'s ``report(sample=N)`` when that module is there, else why not.

    ``report`` prints its own figures and returns them (JSON-able); with ``quiet`` (``--json``)
    what it prints goes to stderr, so stdout stays one JSON object.
    """
    if not sample:
        return {"available": False, "why": "--model-sample 0"}
    if not MODEL_NOTES.is_file():
        return {"available": False, "why": "benchmarks/model_notes.py is not there"}
    module = importlib.import_module("benchmarks.model_notes")
    report = getattr(module, "report", None)
    if report is None:
        return {"available": False, "why": "benchmarks/model_notes.py has no report()"}
    with contextlib.redirect_stdout(sys.stderr) if quiet else contextlib.nullcontext():
        return {"available": True, "report": report(sample=sample)}


# --- printing --------------------------------------------------------------------------


def _against(value: float, target: float) -> str:
    return f"(target >= {target:g}: {'met' if value >= target else 'not met'})"


def print_figures(f: dict) -> None:
    if "dialogsum" in f:
        ds = f["dialogsum"]
        n = ds["extractive note"]["n"]
        print(f"DialogSum test split: {n} dialogues, best of 3 references, rouge-score with stemmer")
        for name, r in ds.items():
            extra = (
                f"  (ROUGE-1 target >= {TARGETS['dialogsum_rouge1']:g}: "
                + ("met)" if r["rouge1"] >= TARGETS["dialogsum_rouge1"] else "not met)")
                if name == "extractive note"
                else ""
            )
            print(
                f"  {name:<36} {r['n']:>4}  R1 {r['rouge1']:.3f}  R2 {r['rouge2']:.3f}  RL {r['rougeL']:.3f}  "
                f"{r['words']:5.1f} words  {r['seconds'] * 1000:7.1f} ms/day{extra}"
            )
    if "id" in f:
        ind = f["id"]
        print(f"\nIndonesian dialogues: {ind['dialogues']} ({INDONESIAN.relative_to(ROOT)}), extractive note")
        print(
            f"  content-word recall of the reference  {ind['content_recall']:.3f}  "
            + _against(ind["content_recall"], TARGETS["id_content_recall"])
        )
        print(f"  the same, of the whole chat (ceiling) {ind['content_recall_whole_chat']:.3f}")
        print(f"  notes written in Indonesian           {ind['indonesian_notes']}/{ind['dialogues']}")
        for key, label in (("decisions", "decisions"), ("open_items", "open items")):
            s = ind[key]
            line = (
                f"  {label:<11} precision {s['precision']:.2f} ({s['matched']}/{s['found']} found)  "
                f"recall {s['recall']:.2f} ({s['matched']}/{s['reference']} marked)"
            )
            if key == "open_items":
                line += (
                    f"  precision {_against(s['precision'], TARGETS['id_open_precision'])}, "
                    f"recall {_against(s['recall'], TARGETS['id_open_recall'])}"
                )
            print(line)
    if "demo" in f:
        demo = f["demo"]
        print(f"\ndemo corpus: {demo['days']} days (Indonesian and English), facts from {FACTS.name}")
        for name in ("extractive before issue 12", "extractive note, What happened only", "extractive note"):
            s = demo[name]
            extra = "  " + _against(s["share"], TARGETS["demo_facts"]) if name == "extractive note" else ""
            print(f"  {name:<36} facts mentioned {s['mentioned']}/{s['facts']} = {s['share']:.0%}{extra}")
    m = f["model"]
    print("\nmodel path: " + ("see benchmarks/model_notes.py's report above" if m["available"] else m["why"]))


def timing_days(args, sets: set[str]) -> dict[str, list]:
    """Each set's ``DayInput``s for ``--time``: DialogSum ten dialogues a day, the Indonesian chats and demo days one
    a day."""
    out: dict[str, list] = {}
    if "dialogsum" in sets:
        rows, days = dialogues(args.data), []
        for d in range(len(rows) // 10):
            day, messages = DAY + dt.timedelta(days=d), []
            for k, row in enumerate(rows[d * 10 : (d + 1) * 10]):
                start = dt.datetime.combine(day, dt.time(8 + k), tzinfo=UTC)
                for i, t in enumerate(turns_of(row)):
                    role = "assistant" if t.startswith("#Person2#") else "user"
                    messages.append(DayMessage(f"s{k}", role, t, start + dt.timedelta(minutes=i)))
            days.append(day_input(DayText("u1", day, UTC, tuple(messages))))
        out["dialogsum"] = days
    if "id" in sets:
        out["id"] = [day_input(indonesian_day(x, i)) for i, x in enumerate(indonesian_dialogues(args.indonesian))]
    if "demo" in sets:
        out["demo"] = [day_input(t) for t, _ in demo_days()]
    return out


def timing_figures(args, sets: set[str]) -> dict:
    """CPU ms a day of ``written`` on each set, the best of three passes, kenang's caches emptied before each."""
    from flows.stages.summarize import written
    from transforms.summarize import ExtractiveSummarizer

    def cold() -> None:
        for name, module in list(sys.modules.items()):
            if name.split(".")[0] in ("transforms", "flows", "schemas"):
                for v in list(vars(module).values()):
                    if hasattr(v, "cache_clear"):
                        v.cache_clear()

    out = {}
    for name, days in timing_days(args, sets).items():
        best = float("inf")
        for _ in range(3):
            cold()
            summarizer, t0 = ExtractiveSummarizer(), time.process_time()
            for inp in days:
                written((summarizer, inp, inp.today))
            best = min(best, time.process_time() - t0)
        out[name] = {"days": len(days), "ms_per_day": round(best / max(1, len(days)) * 1000, 2)}
    return out


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, default=DIALOGSUM, help=f"DialogSum test JSONL (default {DIALOGSUM})")
    p.add_argument("--indonesian", type=Path, default=INDONESIAN, help="the Indonesian dialogues (YAML)")
    p.add_argument("--sets", default=",".join(SETS), help=f"comma-separated, of {', '.join(SETS)} (default: all)")
    p.add_argument(
        "--model-sample", type=int, default=0, help="DialogSum dialogues for the model path (model_notes.py; 0: skip)"
    )
    p.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    p.add_argument("--time", action="store_true", help="also the note writer's CPU time a day on each set")
    args = p.parse_args(argv)
    sets = {s.strip() for s in args.sets.split(",") if s.strip()}
    if unknown := sets - set(SETS):
        p.error(f"unknown set(s) {', '.join(sorted(unknown))}: choose from {', '.join(SETS)}")
    figures: dict = {"targets": TARGETS}
    if "dialogsum" in sets:
        if not args.data.is_file():
            p.error(f"{args.data} not found: pass DialogSum's test split with --data, or leave dialogsum out of --sets")
        figures["dialogsum"] = dialogsum_figures(dialogues(args.data), args.model_sample)
    if "id" in sets:
        figures["id"] = indonesian_figures(indonesian_dialogues(args.indonesian))
    if "demo" in sets:
        figures["demo"] = demo_figures()
    figures["model"] = model_figures(args.model_sample, quiet=args.json)
    if args.time:
        figures["time"] = timing_figures(args, sets)
        if not args.json:
            for name, t in figures["time"].items():
                print(f"note writer, {name}: {t['days']} days, CPU {t['ms_per_day']:.2f} ms a day (best of 3)")
    if args.json:
        print(json.dumps(figures, indent=2, ensure_ascii=False, default=str))
    else:
        print_figures(figures)


if __name__ == "__main__":
    main()
