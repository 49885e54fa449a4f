"""Tune recall's knobs on the tune halves only: key fusion, key weight, time boost, the when-lift, anchors, the gloss.

    .venv/bin/python benchmarks/recall_tune.py --eval-home DIR --memorybank-home DIR

Both homes are the ``--keep`` folders of ``recall_eval.py`` and ``recall_memorybank.py``
(built once, by the chunker being tuned). For every setting of the grid the real API,
``Recaller.search``, ranks the days of every *tune* question of both sets (never a
test question: ``evaluation.half``), and the table prints hit@1, hit@5 and MRR per set,
best first by the worse set's hit@5, then the mean hit@1. ``--chunker4`` is the grid
chunker 4's term choices and the tapered time window came from; ``--chunker3`` is the grid
chunker 3's knobs came from, ranked by the mean MRR of the three tune sets instead
(hit@5 no longer separates settings once nearly every tune question is in the top 5). The defaults in
``transforms/recall.py`` are then set from the top lines (where a setting one question below the top was
kept, benchmarks/README.md says which and why), and the test halves are read by the two
scripts. Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import datetime as dt
import itertools
from dataclasses import replace
from pathlib import Path

import _common as c


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--eval-home", type=Path, required=True, help="recall_eval.py's --keep folder")
    p.add_argument("--memorybank-home", type=Path, required=True, help="recall_memorybank.py's --keep folder")
    p.add_argument("--fine", action="store_true", help="the second, finer grid around the first one's best")
    p.add_argument("--keyword", action="store_true", help="the third grid: the keyword arm's confidence (keyword_full)")
    p.add_argument(
        "--anchors",
        action="store_true",
        help="the fourth grid: the boost of rows holding an identifier term (anchor_boost, anchor_share)",
    )
    p.add_argument(
        "--gloss",
        action="store_true",
        help="the fifth grid: the weight of the query glossed into the other language (gloss_weight)",
    )
    p.add_argument(
        "--chunker4",
        action="store_true",
        help="chunker 4's grid: English stems x the chunks' glosses x the slack days' share of the time "
        "boost, ranked by the mean MRR of the three tune sets; each keyword index is rebuilt in "
        "memory from the loaded chunks' texts, so homes of chunker 3 or 4 serve alike",
    )
    p.add_argument(
        "--chunker3",
        action="store_true",
        help="chunker 3's grid: key weight x the keyword arm's confidence, ranked by the mean MRR of the "
        "three tune sets (recall_eval, MemoryBank English, MemoryBank Chinese); build both homes by "
        "the granularity being compared (--granularity of the two scripts)",
    )
    args = p.parse_args(argv)

    with c.bench_env("recall-tune", keep=args.eval_home):
        import recall_corpus
        import recall_memorybank as mb
        from evaluation import half, metrics

        from flows.config import load_settings
        from flows.models.embed import make_embedder
        from flows.query.recall import Recaller
        from transforms.recall import RecallParams

        sets = []
        settings = load_settings(args.eval_home / "home")
        embedder = _cached(make_embedder(settings))
        r = Recaller(settings, "gading", embedder=embedder)
        sets.append(
            ("recall_eval", [(r, q.query, None, q.answers) for q in recall_corpus.questions() if half(q.qid) == "tune"])
        )
        histories, qs = mb.load(mb.DATA)
        mb_settings = load_settings(args.memorybank_home / "home")
        recallers: dict[str, Recaller] = {}
        now = {
            u: max(dt.date.fromisoformat(d) for d, pairs in h.items() if pairs) + dt.timedelta(days=1)
            for u, h in histories.items()
        }
        items = []
        for q in qs:
            if half(q.qid) != "tune" or not q.evidence:
                continue
            if q.user not in recallers:
                recallers[q.user] = Recaller(mb_settings, q.user, embedder=embedder)
            items.append((recallers[q.user], q.text, now[q.user], q.evidence))
        if args.chunker3:
            _mean_mrr_grid(sets[0], items, metrics)
            return
        if args.chunker4:
            _chunker4_grid(sets[0], items, metrics)
            return
        sets.append(("memorybank", items))
        print("tune questions: " + ", ".join(f"{name} {len(items)}" for name, items in sets))

        grid = (
            list(itertools.product(("mean", "max"), (0.5, 1.0, 1.5), (0.0, 0.5, 1.0, 2.0), (0.5, 99.0)))
            if not args.fine
            else list(itertools.product(("mean",), (0.25, 0.5, 0.75), (2.0, 3.0), (0.6, 0.8, 0.9, 99.0)))
        )
        fulls = (None, 2.0, 4.0, 8.0, 16.0, 24.0, 32.0, 48.0, 64.0) if args.keyword else (None,)
        base = RecallParams()
        if args.keyword or args.anchors or args.gloss:
            grid = [(base.key_fusion, base.key_weight, base.time_boost, base.when_min)]
            fulls = fulls if args.keyword else (base.keyword_full,)
        anchor_grid = (
            list(itertools.product((0.0, 0.5, 1.0, 2.0), (0.02, 0.05, 0.1)))
            if args.anchors
            else [(base.anchor_boost, base.anchor_share)]
        )
        gloss_grid = (
            list(itertools.product(("max", "mean"), (0.0, 0.25, 0.5, 0.75, 1.0)))
            if args.gloss
            else [(base.gloss_fusion, base.gloss_weight)]
        )
        rows = []
        for (fusion, weight, boost, when_min), full, (a_boost, a_share), (g_fusion, gloss) in itertools.product(
            grid, fulls, anchor_grid, gloss_grid
        ):
            params = replace(
                base,
                gloss_fusion=g_fusion,
                gloss_weight=gloss,
                key_fusion=fusion,
                key_weight=weight,
                time_boost=boost,
                when_min=when_min,
                keyword_full=full,
                anchor_boost=a_boost,
                anchor_share=a_share,
            )
            got = {}
            for name, items in sets:
                ranked = [
                    [h.date for h in rr.with_params(params).search(text, top_k=10, now=now_)]
                    for rr, text, now_, _ in items
                ]
                got[name] = metrics(ranked, [ans for *_, ans in items])
            rows.append(((fusion, weight, boost, when_min, full, a_boost, a_share, g_fusion, gloss), got))
        rows.sort(
            key=lambda row: (-min(m["hit@5"] for m in row[1].values()), -sum(m["hit@1"] for m in row[1].values()))
        )
        names = [name for name, _ in sets]
        print(
            "\n| fusion | key weight | time boost | when-lift | keyword full at | anchor boost | anchor share | gloss | "
            + " | ".join(f"{n} hit@1 | {n} hit@5 | {n} MRR" for n in names)
            + " |"
        )
        print("|---|---|---|---|---|---|---|---|" + "---|" * (3 * len(names)))
        for (fusion, weight, boost, when_min, full, a_boost, a_share, g_fusion, gloss), got in rows:
            cells = " | ".join(f"{got[n]['hit@1']:.3f} | {got[n]['hit@5']:.3f} | {got[n]['mrr']:.3f}" for n in names)
            print(
                f"| {fusion} | {weight:g} | {boost:g} | {f'on, {when_min:g}' if when_min < 1 else 'off'} | "
                f"{'always' if full is None else f'{full:g}'} | {a_boost:g} | {a_share:g} | {f'{g_fusion} {gloss:g}' if gloss else 'off'} | {cells} |"
            )


def _mean_mrr_grid(eval_set, mb_items, metrics) -> None:
    """Chunker 3's choice: key_weight x keyword_full, best first by the mean tune MRR of the three sets (hit@5 no
    longer separates them: nearly every tune question is in the top 5)."""
    from transforms.recall import RecallParams

    sets = _three_sets(eval_set, mb_items)
    print("tune questions: " + ", ".join(f"{name} {len(items)}" for name, items in sets))
    rows = []
    for weight, full in itertools.product((0.25, 0.5, 0.75, 1.0, 1.5), (None, 12.0, 24.0, 48.0)):
        params = replace(RecallParams(), key_weight=weight, keyword_full=full)
        got = [
            metrics(
                [
                    [h.date for h in rr.with_params(params).search(text, top_k=10, now=now_)]
                    for rr, text, now_, _ in items
                ],
                [ans for *_, ans in items],
            )
            for _, items in sets
        ]
        rows.append((sum(m["mrr"] for m in got) / len(got), weight, full, got))
    rows.sort(key=lambda row: -row[0])
    print(
        "\n| key weight | keyword full at | mean MRR | "
        + " | ".join(f"{n} hit@1 / hit@5 / MRR" for n, _ in sets)
        + " |"
    )
    print("|---|---|---|" + "---|" * len(sets))
    for mean, weight, full, got in rows:
        cells = " | ".join(f"{m['hit@1']:.3f} / {m['hit@5']:.3f} / {m['mrr']:.3f}" for m in got)
        print(f"| {weight:g} | {'always' if full is None else f'{full:g}'} | {mean:.3f} | {cells} |")


def _three_sets(eval_set, mb_items):
    return [
        eval_set,
        ("MemoryBank en", [it for it in mb_items if not it[0].user.endswith("-zh")]),
        ("MemoryBank zh", [it for it in mb_items if it[0].user.endswith("-zh")]),
    ]


def _chunker4_grid(eval_set, mb_items, metrics) -> None:
    """Chunker 4's choice: English stems (on/off) x the chunks' glosses (on/off) x slack_boost, best first by the
    mean tune MRR of the three sets. Both term choices are the chunker's, so each keyword index is rebuilt here
    from the loaded chunks' texts, as the chunker would make it (``KeywordIndex`` scores exactly what a recall
    pack's ``SegmentedIndex`` does)."""
    from transforms import chunk
    from transforms.recall import KeywordIndex, RecallParams

    sets = _three_sets(eval_set, mb_items)
    print("tune questions: " + ", ".join(f"{name} {len(items)}" for name, items in sets))
    recallers = {id(it[0]): it[0] for _, items in sets for it in items}
    texts = {k: [ref.text for ref in r._data.refs] for k, r in recallers.items()}
    porter, counts_of = chunk._porter, chunk.chunk_term_counts
    rows = []
    try:
        for stems, glosses in itertools.product((False, True), (False, True)):
            chunk._porter = porter if stems else (lambda word: word)
            for cached in (chunk._term, chunk._han_terms, chunk._phrase_terms):  # the query side stems through them
                cached.cache_clear()
            make = counts_of if glosses else chunk.term_counts
            for k, r in recallers.items():
                made = [make(t) for t in texts[k]]
                r._data.keyword = KeywordIndex.from_lists([t for t, _ in made], [c for _, c in made])
            for slack in (0.0, 0.25, 0.5, 0.75, 1.0):
                params = replace(RecallParams(), gloss_terms=glosses, slack_boost=slack)
                got = [
                    metrics(
                        [
                            [h.date for h in rr.with_params(params).search(text, top_k=10, now=now_)]
                            for rr, text, now_, _ in items
                        ],
                        [ans for *_, ans in items],
                    )
                    for _, items in sets
                ]
                rows.append((sum(m["mrr"] for m in got) / len(got), stems, glosses, slack, got))
    finally:
        chunk._porter = porter
        for cached in (chunk._term, chunk._han_terms, chunk._phrase_terms):
            cached.cache_clear()
    rows.sort(key=lambda row: -row[0])
    print(
        "\n| English stems | chunks' glosses | slack share | mean MRR | "
        + " | ".join(f"{n} hit@1 / hit@5 / MRR" for n, _ in sets)
        + " |"
    )
    print("|---|---|---|---|" + "---|" * len(sets))
    for mean, stems, glosses, slack, got in rows:
        cells = " | ".join(f"{m['hit@1']:.3f} / {m['hit@5']:.3f} / {m['mrr']:.3f}" for m in got)
        print(f"| {'on' if stems else 'off'} | {'on' if glosses else 'off'} | {slack:g} | {mean:.3f} | {cells} |")


def _cached(embedder):
    """The embedder with its query vectors remembered: the grid asks each question many times."""
    if embedder is None:
        return None
    seen: dict[str, object] = {}
    real = embedder.embed_query

    def embed_query(text: str):
        if text not in seen:
            seen[text] = real(text)
        return seen[text]

    embedder.embed_query = embed_query
    return embedder


if __name__ == "__main__":
    main()
