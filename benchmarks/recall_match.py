"""Recall's ``match`` and ``relevance``: calibrated on the tune halves, read on the test halves.

    .venv/bin/python benchmarks/recall_match.py --eval-home DIR --memorybank-home DIR [--fit]

Both homes are the ``--keep`` folders of ``recall_eval.py`` and ``recall_memorybank.py``.
Three sets of questions, each split by ``evaluation.half``: ``recall_eval``'s and
MemoryBank's (English and Chinese) questions that have an evidence day (*answerable*),
and ``data/unrelated_questions.yaml`` (*unrelated*: English and Indonesian questions
about a homelab and a daily life the archive never talks about), asked of
``recall_eval``'s user. Every question goes through the real API,
``Recaller.search(top_k=5)`` (the MCP tool's default), with each hit's two signals
read back from it: the query's idf-weighted terms the shown chunk holds
(``transforms.recall.coverage``) and its raw cosine with the query.

``--fit`` (tune halves only): for each mix of the two signals
(``cos(t) * coverage + sin(t) * cosine``), the cut that leaves at most 2 % of the
answerable tune questions below it (the target is 3 % on test), and the share of the
unrelated tune questions below it; the mix that leaves the most unrelated questions
below wins. Then a logistic of that mix, answerable against unrelated (the classes
weighed equally), makes ``relevance``: a hit's relevance is how likely a question
whose best hit reads so has an answer. ``match_weak`` is the relevance at the cut, and
``match_strong`` the relevance just above the best unrelated tune question. The
keyword-only calibration (no vector arm) is the logistic of the coverage alone, fitted
the same way. It prints the constants and writes them to ``data/recall_match.json``,
which ``tests/test_recall_match.py`` holds ``RecallParams``' frozen defaults to.

Without ``--fit`` it reads the frozen defaults on every half: the share of answers
``none`` / ``weak`` / ``strong`` per set, and hit@1 / hit@5 (which ``match`` cannot
change: relevance never reorders hits; compare with ``recall_eval.py``'s and
``recall_memorybank.py``'s). Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
from collections import defaultdict
from pathlib import Path

import _common as c
import numpy as np
import yaml

HERE = Path(__file__).resolve().parent
UNRELATED = HERE / "data" / "unrelated_questions.yaml"
OUT = HERE / "data" / "recall_match.json"
TOP_K = 5
#: the share of answerable tune questions a cut may leave 'none' (the target on test is 3 %)
TUNE_MISS = 0.02


@dataclasses.dataclass
class Asked:
    qid: str
    group: str  # 'recall_eval' | 'MemoryBank en' | 'MemoryBank zh' | 'unrelated'
    recaller: object
    text: str
    now: dt.date | None
    answers: tuple[dt.date, ...]


def unrelated() -> list[dict]:
    return yaml.safe_load(UNRELATED.read_text(encoding="utf-8"))["questions"]


def _logit(p: np.ndarray) -> np.ndarray:
    p = np.clip(p, 1e-12, 1 - 1e-12)
    return np.log(p / (1 - p))


def signals(item: Asked, mode: str = "hybrid") -> tuple[list[dt.date], np.ndarray, np.ndarray | None]:
    """(the days found, each hit's coverage, each hit's cosine or None), read back through the real search."""
    r = item.recaller
    probe = dataclasses.replace(r.params, relevance_hybrid=(0.0, 1.0, 0.0), relevance_keyword=(0.0, 1.0))
    hits = r.with_params(probe).search(item.text, top_k=TOP_K, now=item.now, mode=mode)
    cover = _logit(np.array([h.relevance for h in hits]))
    if mode == "keyword" or r.embedder is None:
        return [h.date for h in hits], cover, None
    probe = dataclasses.replace(r.params, relevance_hybrid=(0.0, 0.0, 1.0))
    cos = _logit(np.array([h.relevance for h in r.with_params(probe).search(item.text, top_k=TOP_K, now=item.now)]))
    return [h.date for h in hits], cover, cos


def fit_logistic(x: np.ndarray, y: np.ndarray, steps: int = 50) -> tuple[float, float]:
    """(a, b) of P(y) = 1 / (1 + exp(-(a + b x))), by Newton's method, each class weighed equally."""
    w = np.where(y == 1, 0.5 / max(1, y.sum()), 0.5 / max(1, (1 - y).sum()))
    X = np.stack([np.ones_like(x), x], axis=1)
    beta = np.zeros(2)
    for _ in range(steps):
        p = 1 / (1 + np.exp(-X @ beta))
        grad = X.T @ (w * (y - p))
        hess = (X * (w * p * (1 - p))[:, None]).T @ X + 1e-9 * np.eye(2)
        beta += np.linalg.solve(hess, grad)
    return float(beta[0]), float(beta[1])


def fit(items: list[Asked], got: dict[str, tuple]) -> dict:
    """The calibration from the tune halves (see the module docstring)."""
    from evaluation import half

    tune = [it for it in items if half(it.qid) == "tune"]
    pos = [it for it in tune if it.answers]
    neg = [it for it in tune if not it.answers]

    def best(it: Asked, t: float, key: str = "hybrid") -> float:
        _, cover, cos = got[key][it.qid]
        if not len(cover):
            return -np.inf
        mix = np.cos(t) * cover + (np.sin(t) * cos if cos is not None else 0.0)
        return float(mix.max())

    rows = []
    for t in np.linspace(0.0, np.pi / 2, 31):
        sp = np.array([best(it, t) for it in pos])
        sn = np.array([best(it, t) for it in neg])
        cut = float(np.quantile(sp[np.isfinite(sp)], TUNE_MISS, method="lower"))
        rows.append((float(np.mean(sn < cut)), -float(np.mean(sp < cut)), t, cut, sp, sn))
    rows.sort(key=lambda r: (r[0], r[1]), reverse=True)
    print("\nmix of the signals, tune halves: cos(t) * coverage + sin(t) * cosine\n")
    print("| t | unrelated below the cut | answerable below the cut |\n|---|---|---|")
    for share_n, share_p, t, *_ in sorted(rows, key=lambda r: r[2]):
        print(f"| {t:.3f} | {share_n:.3f} | {-share_p:.3f} |")
    _, _, t, cut, sp, sn = rows[0]
    x = np.concatenate([sp, sn])
    y = np.concatenate([np.ones(len(sp)), np.zeros(len(sn))])
    ok = np.isfinite(x)
    a, b = fit_logistic(x[ok], y[ok])
    top = float(sn[np.isfinite(sn)].max())
    weak = 1 / (1 + np.exp(-(a + b * cut)))
    strong = 1 / (1 + np.exp(-(a + b * top)))
    kp = np.array([best(it, 0.0, "keyword") for it in pos])
    kn = np.array([best(it, 0.0, "keyword") for it in neg])
    kx = np.concatenate([kp, kn])
    ky = np.concatenate([np.ones(len(kp)), np.zeros(len(kn))])
    ka, kb = fit_logistic(kx[np.isfinite(kx)], ky[np.isfinite(kx)])
    return {
        "relevance_hybrid": [round(a, 3), round(b * np.cos(t), 3), round(b * np.sin(t), 3)],
        "relevance_keyword": [round(ka, 3), round(kb, 3)],
        "match_weak": float(np.floor(weak * 1000) / 1000),  # rounded down: the cut stays inside 'weak'
        "match_strong": float(
            np.ceil(strong * 1000 + 1e-9) / 1000
        ),  # rounded up: no unrelated tune question reaches it
        "tune": {"answerable": len(pos), "unrelated": len(neg), "mix_t": round(t, 3), "cut": round(cut, 4)},
    }


def report(items: list[Asked], got: dict[str, tuple], params) -> None:
    """Per half and set: the shares of none / weak / strong, and hit@1 / hit@5, with the frozen defaults."""
    from evaluation import half, metrics

    from transforms.recall import relevance

    def match(cover, cos) -> str:
        if not len(cover):
            return "none"
        best = float(relevance(cover, cos, params).max())
        return "strong" if best >= params.match_strong else "weak" if best >= params.match_weak else "none"

    for mode in ("hybrid", "keyword"):
        print(f"\n### {mode} search: the share of answers 'none' / 'weak' / 'strong', and hit@1 / hit@5\n")
        print("| half | set | questions | none | weak | strong | hit@1 | hit@5 |\n|---|---|---|---|---|---|---|---|")
        for part in ("tune", "test"):
            groups: dict[str, list[Asked]] = defaultdict(list)
            for it in items:
                if half(it.qid) == part:
                    groups[it.group].append(it)
                    if it.answers:
                        groups["answerable, all sets"].append(it)
            for name in ("recall_eval", "MemoryBank en", "MemoryBank zh", "answerable, all sets", "unrelated"):
                sel = groups.get(name, [])
                if not sel:
                    continue
                seen = [match(*got[mode][it.qid][1:]) for it in sel]
                shares = [sum(s == k for s in seen) / len(sel) for k in ("none", "weak", "strong")]
                hits = (
                    metrics([got[mode][it.qid][0] for it in sel], [it.answers for it in sel])
                    if sel[0].answers
                    else None
                )
                cells = f"{hits['hit@1']:.3f} | {hits['hit@5']:.3f}" if hits else "– | –"
                print(f"| {part} | {name} | {len(sel)} | " + " | ".join(f"{s:.3f}" for s in shares) + f" | {cells} |")


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--eval-home", type=Path, required=True, help="recall_eval.py's --keep folder")
    p.add_argument("--memorybank-home", type=Path, required=True, help="recall_memorybank.py's --keep folder")
    p.add_argument("--memorybank-data", type=Path, help="the MemoryBank folder (default: recall_memorybank.py's)")
    p.add_argument("--fit", action="store_true", help=f"fit the calibration on the tune halves; write {OUT.name}")
    args = p.parse_args(argv)

    with c.bench_env("recall-match", keep=args.eval_home):
        import recall_corpus
        import recall_memorybank as mb
        from recall_tune import _cached

        from flows.config import load_settings
        from flows.models.embed import make_embedder
        from flows.query.recall import Recaller
        from transforms.recall import RecallParams

        settings = load_settings(args.eval_home / "home")
        embedder = _cached(make_embedder(settings))
        gading = Recaller(settings, "gading", embedder=embedder)
        items = [Asked(q.qid, "recall_eval", gading, q.query, None, q.answers) for q in recall_corpus.questions()]
        items += [Asked(u["id"], "unrelated", gading, u["q"], None, ()) for u in unrelated()]
        histories, qs = mb.load(args.memorybank_data or mb.DATA)
        mb_settings = load_settings(args.memorybank_home / "home")
        recallers: dict[str, Recaller] = {}
        for q in qs:
            if not q.evidence:
                continue
            if q.user not in recallers:
                recallers[q.user] = Recaller(mb_settings, q.user, embedder=embedder)
            last = max(dt.date.fromisoformat(d) for d, pairs in histories[q.user].items() if pairs)
            group = "MemoryBank zh" if q.user.endswith("-zh") else "MemoryBank en"
            items.append(Asked(q.qid, group, recallers[q.user], q.text, last + dt.timedelta(days=1), q.evidence))
        got = {mode: {it.qid: signals(it, mode) for it in items} for mode in ("hybrid", "keyword")}
        print(
            f"questions: {sum(bool(it.answers) for it in items)} answerable "
            f"({', '.join(f'{g} {sum(it.group == g for it in items)}' for g in ('recall_eval', 'MemoryBank en', 'MemoryBank zh'))}), "
            f"{sum(not it.answers for it in items)} unrelated; top_k {TOP_K}"
        )
        if args.fit:
            found = fit(items, got)
            print("\n" + json.dumps(found, indent=2))
            OUT.write_text(json.dumps(found, indent=2) + "\n", encoding="utf-8")
            params = dataclasses.replace(
                RecallParams(),
                relevance_hybrid=tuple(found["relevance_hybrid"]),
                relevance_keyword=tuple(found["relevance_keyword"]),
                match_weak=found["match_weak"],
                match_strong=found["match_strong"],
            )
            print("\nwith these constants:")
        else:
            params = RecallParams()
        report(items, got, params)


if __name__ == "__main__":
    main()
