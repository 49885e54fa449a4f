"""Recall on MemoryBank: hit@1, hit@5 and MRR per method, on the tune half, the test half and all.

    .venv/bin/python benchmarks/recall_memorybank.py [--backend e5+use] [--keep DIR] [--data DIR]

The data (``../shared/eval/memorybank``, MIT; see SOURCES.md and LICENSE there) is
MemoryBank's evaluation set (Zhong et al., AAAI 2024): 15 users' chats with an AI
companion, ten days each (2023-04-27 to 2023-05-06), once in English and once in
Chinese, and 100 probing questions per language. The questions carry no evidence;
``memorybank_labels.json`` (beside this file) holds ours: for each English question the
day(s) whose conversation answers it, found by reading that user's history, and its
kinds: ``dated`` (it names a date, or a relative time that resolves to a day), ``when``
(it asks when something happened), ``plain`` otherwise. A question no day answers has
no evidence and is left out of the metrics (the count is printed).

The Chinese questions were not labelled on their own. They translate the English ones in
the same order, user by user, and the two histories run in parallel (same dates, the same
conversations translated), so each takes its English twin's labels; every one was
checked against the Chinese dialogue, and the labels file notes the two that differ (the
Chinese history's 2023-05-05 for John Zhang has the turn the English one lacks, and one
Chinese question drops its relative time). English and Chinese are reported apart.

The script builds one kenang home (extractive summaries, the ``--backend`` index,
``e5+use`` by default) with each MemoryBank user as a kenang user: the English name
lower-cased, ASCII letters only (``johnzhang``), and for the Chinese twin that id with
``-zh``. Each history date is one markdown transcript ``active/<user>/<date>-2000.md``
whose turns are a minute apart from 20:00 +07:00 (the format of ``md()`` in
tests/helpers.py); a date with no turns gets no file. It runs the real nightly flow once, then ranks days for
every question, among that question's user's days, with each method:

- ``BM25``, ``vector: <backend>`` and ``hybrid w=2 + related x0.7 (kenang recall 1)``,
  computed from the ``Recaller``'s loaded data as ``recall_eval.py`` computes them
  (``fuse``, then ``select`` through its ``days_of``); the vector arm is the stored
  vectors times the query's, which for ``e5+use`` is recall_eval's mean of the e5 and
  USE cosines;
- ``kenang recall``: the real API, ``Recaller.search(question, top_k=10, now=<the day
  after the user's last history date>)``. Where it ranks differently from the line above
  (recall made time-aware, say), the count is printed.

A user has at most ten days, so chance is high; each table's last line is what a random
order of the user's days scores in expectation.

Knobs may be tuned only on the ``tune`` half (``evaluation.half``); targets are read on
``test``. Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from math import comb
from pathlib import Path

import _common as c
import numpy as np

HERE = Path(__file__).resolve().parent
DATA = HERE.parent.parent / "shared" / "eval" / "memorybank"
LABELS = HERE / "memorybank_labels.json"
FILES = {
    "en": ("memory_bank_en.json", "probing_questions_en.jsonl"),
    "zh": ("memory_bank_cn.json", "probing_questions_cn.jsonl"),
}
LANG_NAMES = {"en": "English", "zh": "Chinese"}
KINDS = ("dated", "when", "plain")
PARTS = ("tune", "test", "all")
START = dt.time(20, 0)
TOP_K = 10
API = "kenang recall"
COMPUTED = "hybrid w=2 + related x0.7 (kenang recall 1)"
CHANCE = "chance: a random order of the user's days"


@dataclass(frozen=True)
class Question:
    qid: str
    lang: str
    user: str  # kenang user id
    text: str
    evidence: tuple[dt.date, ...]
    kinds: tuple[str, ...]


def user_id(name: str) -> str:
    """The English name lower-cased, ASCII letters only."""
    return re.sub(r"[^a-z]", "", name.lower())


def load(data: Path) -> tuple[dict[str, dict[str, list[dict]]], list[Question]]:
    """(history per kenang user, questions): the two languages' users paired in file order."""
    banks = {lang: json.loads((data / bank).read_text(encoding="utf-8")) for lang, (bank, _) in FILES.items()}
    asked: dict[str, list[tuple[str, list[str]]]] = {}
    for lang, (_, probes) in FILES.items():
        lines = (data / probes).read_text(encoding="utf-8").splitlines()
        asked[lang] = [next(iter(json.loads(line).items())) for line in lines if line.strip()]
    for lang, (bank, probes) in FILES.items():
        if [n for n, _ in asked[lang]] != [n.strip() for n in banks[lang]]:
            raise SystemExit(f"{probes} lists other users, or in another order, than {bank}")
    ids = [user_id(n) for n in banks["en"]]
    users = {
        "en": dict(zip(ids, banks["en"], strict=False)),
        "zh": {f"{u}-zh": n for u, n in zip(ids, banks["zh"], strict=False)},
    }
    histories = {u: banks[lang][name]["history"] for lang in FILES for u, name in users[lang].items()}

    labels = json.loads(LABELS.read_text(encoding="utf-8"))["questions"]
    texts = {}
    for lang in FILES:
        for (name, qs), u in zip(asked[lang], ids, strict=False):
            for n, text in enumerate(qs, 1):
                texts[f"{lang}-{u}-{n}"] = (name, text)
    if sorted(texts) != sorted(q["qid"] for q in labels):
        raise SystemExit(f"{LABELS.name} and the probing questions in {data} name different questions")
    out = []
    for q in labels:
        lang, u, _ = q["qid"].split("-")
        name, text = texts[q["qid"]]
        if (name.strip(), text) != (q["user"], q["question"]):
            raise SystemExit(f"{q['qid']}: the label's user or question differs from {FILES[lang][1]}")
        out.append(
            Question(
                q["qid"],
                lang,
                u if lang == "en" else f"{u}-zh",
                text,
                tuple(dt.date.fromisoformat(d) for d in q["evidence"]),
                tuple(q["kinds"]),
            )
        )
    return histories, out


def transcript(day: str, pairs: list[dict]) -> str:
    """One day's chat as kenang's markdown: each query and response a turn, a minute apart from 20:00 +07:00."""
    start = dt.datetime.combine(dt.date.fromisoformat(day), START, tzinfo=c.JAKARTA)
    turns = [(role, p[key].strip()) for p in pairs for role, key in (("user", "query"), ("assistant", "response"))]
    body = [f"Parent Day: [[{day}]]", ""]
    for i, (role, text) in enumerate(turns):
        body += [f"## {role} · {(start + dt.timedelta(minutes=i)).isoformat()}", text, ""]
    return "\n".join(body)


def build_home(root: Path, backend: str, histories: dict[str, dict[str, list[dict]]]):
    """(settings, nightly result or None when a kept home is reused, nightly wall seconds)."""
    from flows.config import init_home, load_settings
    from flows.store import mount

    if (root / "home" / "kenang.yaml").is_file():  # --keep: reuse the built archive and index
        return load_settings(root / "home"), None, 0.0
    settings, _ = init_home(root / "home", {"summarizer": {"backend": "extractive"}, "embedder": {"backend": backend}})
    mount.claim(settings)  # as `kenang init` does
    old = time.time() - 86400
    for user, history in histories.items():
        for day, pairs in history.items():
            if not pairs:
                continue
            p = settings.paths.active / user / f"{day}-2000.md"
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(transcript(day, pairs), encoding="utf-8")
            os.utime(p, (old, old))
    last = max(dt.date.fromisoformat(d) for h in histories.values() for d, pairs in h.items() if pairs)
    result, wall = c.timed_nightly(settings.paths.home, c.run_after(last))
    return settings, result, wall


def chance(days: int, answers: int) -> dict[str, float]:
    """Expected hit@1, hit@5 and MRR of a random order of a user's ``days``, ``answers`` of them evidence."""
    first = [comb(days - r, answers - 1) / comb(days, answers) for r in range(1, days - answers + 2)]  # P(first at r)
    return {"hit@1": first[0], "hit@5": sum(first[:5]), "mrr": sum(p / r for r, p in enumerate(first, 1))}


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backend", default="e5+use", help="embedder backend to index with (default e5+use)")
    p.add_argument("--keep", type=Path, help="build the home in this folder and keep it; reuse it if it exists")
    p.add_argument("--data", type=Path, default=DATA, help=f"the MemoryBank folder (default {DATA})")
    c.granularity_args(p)
    args = p.parse_args(argv)
    c.use_granularity(args.granularity)
    histories, qs = load(args.data)

    with c.bench_env("recall-memorybank", keep=args.keep) as env:
        from evaluation import half, metrics
        from recall_eval import days_of

        from flows.models.embed import make_embedder
        from flows.query.recall import Recaller
        from transforms.recall import fuse

        settings, result, wall = build_home(env.root, args.backend, histories)
        days = [pairs for h in histories.values() for pairs in h.values() if pairs]
        chars = sum(len(t["query"]) + len(t["response"]) for pairs in days for t in pairs)
        print(
            f"corpus: {len(histories)} users ({sum(not u.endswith('-zh') for u in histories)} English, "
            f"{sum(u.endswith('-zh') for u in histories)} Chinese), {len(days)} days as transcripts, "
            f"{2 * sum(map(len, days))} turns, {chars:,} characters"
        )
        if result:
            ix = result["index"]
            secs = result["work_seconds"].get("index", 0.0)
            print(
                f"archive: {result['load']['messages']} messages, {result['load']['days']} user-days; "
                f"index ({args.backend}): {ix['chunks']} chunks, {ix['embedded']} embedded in {secs:.1f} s; "
                f"nightly wall {wall:.1f} s"
            )
        else:
            print(f"reused the home in {args.keep} (no nightly run)")

        embedder = make_embedder(settings)
        vector = "vector: e5+USE" if args.backend == "e5+use" else f"vector: {args.backend}"
        names = [
            "BM25",
            *([vector] if embedder is not None else []),
            COMPUTED,
            API,
            *(f"{API}, {label}" for label, _, _ in c.ABLATIONS),
        ]
        pool = {u: {dt.date.fromisoformat(d) for d, pairs in h.items() if pairs} for u, h in histories.items()}
        now = {u: max(days) + dt.timedelta(days=1) for u, days in pool.items()}  # the day after the user's last
        recallers: dict[str, Recaller] = {}
        ranked: dict[str, dict[str, list[dt.date]]] = defaultdict(dict)
        leaks = differ = 0
        for q in qs:
            if q.user not in recallers:
                recallers[q.user] = Recaller(settings, q.user, embedder=embedder)
            r = recallers[q.user]
            d = r._data
            kw = d.keyword.scores(q.text)
            cos = None
            if embedder is not None:
                cos = np.asarray(d.embeddings @ embedder.embed_query(q.text))
                cos[~d.current] = 0.0
            methods = {"BM25": (fuse(kw, None, mode="keyword"), False)}
            if cos is not None:
                methods[vector] = (fuse(kw, cos, mode="vector"), False)
            methods[COMPUTED] = (fuse(kw, cos), True)
            for name, (scores, expand) in methods.items():
                ranked[name][q.qid], users = days_of(scores, d.refs, d.related, expand=expand, k=TOP_K)
                leaks += sum(u != q.user for u in users)
            hits = r.search(q.text, top_k=TOP_K, now=now[q.user])
            ranked[API][q.qid] = [h.date for h in hits]
            for label, knob_name, off in c.ABLATIONS:  # what each new part adds: the API with it off
                ranked[f"{API}, {label}"][q.qid] = [
                    h.date for h in c.knob(r, knob_name, off).search(q.text, top_k=TOP_K, now=now[q.user])
                ]
            leaks += sum(h.chunk.user_id != q.user for h in hits)
            differ += ranked[API][q.qid] != ranked[COMPUTED][q.qid]

        print(
            f"\nresults of another user: {leaks}; questions where `{API}` ranks days differently from "
            f"`{COMPUTED}`: {differ} of {len(qs)}"
        )
        for lang in FILES:
            asked = [q for q in qs if q.lang == lang]
            scored = [q for q in asked if q.evidence]
            left = [q.qid for q in asked if not q.evidence]
            print(
                f"\n## {LANG_NAMES[lang]}: {len(asked)} questions; left out for having no evidence day: {len(left)}"
                + (f" ({', '.join(left)})" if left else "")
                + f"; scored: {len(scored)}"
            )
            for part in PARTS:
                sel = [q for q in scored if part == "all" or half(q.qid) == part]
                print(f"\n### {LANG_NAMES[lang]}, {part}: {len(sel)} questions")
                print("\n| method | hit@1 | hit@5 | MRR |\n|---|---|---|---|")
                for name in names:
                    m = metrics([ranked[name][q.qid] for q in sel], [q.evidence for q in sel])
                    print(f"| {name} | {m['hit@1']:.3f} | {m['hit@5']:.3f} | {m['mrr']:.3f} |")
                odds = [chance(len(pool[q.user]), len(pool[q.user] & set(q.evidence))) for q in sel]
                print(
                    f"| {CHANCE} | "
                    + " | ".join(f"{np.mean([o[k] for o in odds]):.3f}" for k in ("hit@1", "hit@5", "mrr"))
                    + " |"
                )
                count = Counter(k for q in sel for k in q.kinds)
                print(
                    "\nhit@5 by question kind:\n\n| method | "
                    + " | ".join(f"{k} ({count[k]})" for k in KINDS)
                    + " |\n|---|"
                    + "---|" * len(KINDS)
                )
                for name in names:
                    cells = []
                    for k in KINDS:
                        of = [q for q in sel if k in q.kinds]
                        cells.append(metrics([ranked[name][q.qid] for q in of], [q.evidence for q in of])["hit@5"])
                    print(f"| {name} | " + " | ".join(f"{x:.3f}" for x in cells) + " |")


if __name__ == "__main__":
    main()
