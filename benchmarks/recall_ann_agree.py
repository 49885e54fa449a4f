"""Approximate against exact recall on the evaluation sets: top-5 days, hit@1 and hit@5.

    .venv/bin/python benchmarks/recall_ann_agree.py --eval-home DIR --memorybank-home DIR [--candidates 100,20,10]

Both homes are the ``--keep`` folders of ``recall_eval.py`` and ``recall_memorybank.py``
(the real ``e5+use`` index). Each is copied to a scratch folder, where every user's
recall pack is given its months' ANN indexes (``recall_pack.refresh`` with ``ann_from``
0, as a home at ``recall.exact_below`` chunks gets them). Then every question with an
evidence day (``recall_eval``'s 102, MemoryBank's English and Chinese ones) is asked
through ``Recaller.search(top_k=5)`` twice: approximate (every month's index names
``--candidates`` rows, the product's ``recall.ann_candidates``) and exact (every
cosine computed). Printed per set and candidates: the share of questions whose top-5
days are the same, in the same order, and hit@1 / hit@5 of both.

The evaluation homes are small (``recall_eval``'s user holds about 520 chunks a month,
a MemoryBank user 38 to 90 in all): at the product's 100 candidates a month the index
names nearly every row, so smaller counts are read too, where the index must choose.
The last line is JSON: per set, hybrid search's figures at the first ``--candidates``.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
import shutil
import tempfile
from collections import defaultdict
from pathlib import Path

from evaluation import metrics


def _copy_with_indexes(home: Path, into: Path) -> Path:
    """A copy of a kept benchmark home whose every user has each month's ANN index."""
    from flows.store import recall_pack

    shutil.copytree(home / "home", into / "home", symlinks=True)
    wh = into / "home" / "warehouse"
    recall_pack.refresh(wh, ann_from=0)
    return into / "home"


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--eval-home", type=Path, required=True, help="recall_eval.py's --keep folder")
    p.add_argument("--memorybank-home", type=Path, required=True, help="recall_memorybank.py's --keep folder")
    p.add_argument("--memorybank-data", type=Path, help="the MemoryBank folder (default: recall_memorybank.py's)")
    p.add_argument("--candidates", default="100,20,10", help="ANN candidates a month to read, comma-separated")
    p.add_argument("--modes", default="hybrid,vector", help="search modes to read, comma-separated")
    args = p.parse_args(argv)
    counts = [int(x) for x in args.candidates.split(",")]

    with tempfile.TemporaryDirectory(prefix="kenang-ann-agree-") as tmp:
        import recall_corpus
        import recall_memorybank as mb
        from recall_tune import _cached

        from flows.config import load_settings
        from flows.models.embed import make_embedder
        from flows.query.recall import Recaller

        eval_home = _copy_with_indexes(args.eval_home, Path(tmp) / "eval")
        mb_home = _copy_with_indexes(args.memorybank_home, Path(tmp) / "mb")
        settings, mb_settings = load_settings(eval_home), load_settings(mb_home)
        embedder = _cached(make_embedder(settings))
        asked = [("recall_eval", "gading", settings, q.query, None, q.answers) for q in recall_corpus.questions()]
        histories, qs = mb.load(args.memorybank_data or mb.DATA)
        for q in qs:
            if q.evidence:
                last = max(dt.date.fromisoformat(d) for d, pairs in histories[q.user].items() if pairs)
                group = "MemoryBank zh" if q.user.endswith("-zh") else "MemoryBank en"
                asked.append((group, q.user, mb_settings, q.text, last + dt.timedelta(days=1), q.evidence))
        recallers: dict[str, Recaller] = {}
        for _, user, s, *_ in asked:
            if user not in recallers:
                recallers[user] = Recaller(s, user, embedder=embedder)
        answers: dict[str, list] = defaultdict(list)
        for group, *_, gold in asked:
            answers[group].append(gold)
        print(
            "| mode | set | questions | candidates a month | same top-5 days | hit@1 exact / approx. | hit@5 exact / approx. |"
        )
        print("|---|---|---|---|---|---|---|")
        figures: dict[str, dict] = {}
        for mode in args.modes.split(","):
            exact: dict[str, list] = defaultdict(list)
            for group, user, _, text, now, _ in asked:
                r = recallers[user]
                r = r.with_params(dataclasses.replace(r.params, exact_below=10**9))
                exact[group].append([h.date for h in r.search(text, top_k=5, now=now, mode=mode)])
            for n in counts:
                approx: dict[str, list] = defaultdict(list)
                for group, user, _, text, now, _ in asked:
                    r = recallers[user]
                    r = r.with_params(dataclasses.replace(r.params, exact_below=0, ann_candidates=n))
                    assert r._approximate(mode)
                    approx[group].append([h.date for h in r.search(text, top_k=5, now=now, mode=mode)])
                for group in exact:
                    same = sum(a == e for a, e in zip(approx[group], exact[group], strict=True)) / len(exact[group])
                    me, ma = metrics(exact[group], answers[group]), metrics(approx[group], answers[group])
                    print(
                        f"| {mode} | {group} | {len(exact[group])} | {n} | {same:.3f} "
                        f"| {me['hit@1']:.3f} / {ma['hit@1']:.3f} | {me['hit@5']:.3f} / {ma['hit@5']:.3f} |"
                    )
                    if n == counts[0] and mode == "hybrid":
                        figures[group] = {
                            "candidates": n,
                            "same_top5": round(same, 3),
                            "hit1": [round(me["hit@1"], 3), round(ma["hit@1"], 3)],
                            "hit5": [round(me["hit@5"], 3), round(ma["hit@5"], 3)],
                        }
        print(json.dumps(figures))


if __name__ == "__main__":
    main()
