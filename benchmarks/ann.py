"""Which ANN library for recall's vector arm: usearch against faiss, measured here.

    .venv/bin/python benchmarks/ann.py [--sizes 100000 1000000] [--dim 896] [--queries 200]

For each size, synthetic *clustered* unit vectors of the bundled embedder's width (e5+use:
384 + 512 = 896; real chunk embeddings cluster by topic, so recall figures on uniform
vectors would mean nothing) are indexed by each candidate:

- ``usearch-i8`` / ``usearch-f16``: usearch HNSW, cosine, vectors stored in 8 or 16 bits;
- ``faiss-hnsw-sq8``: faiss ``IndexHNSWSQ`` (HNSW over 8-bit scalar-quantised vectors);
- ``faiss-hnsw-flat``: faiss ``IndexHNSWFlat`` over float32 (100k only: at 1M it needs 3.6 GB).

Each index is built (timed), saved, then opened memory-mapped in a fresh process
(usearch ``Index.restore(path, view=True)``, faiss ``read_index(path, IO_FLAG_MMAP)``),
which runs the queries one at a time and reports p50/p95 per query, its RSS after them
and recall@10 against exact float64 cosine. Queries are perturbed data points (what a
question near a topic looks like). kenang reranks each segment's candidates by their
exact float32 cosine, so ``recall@10`` is that of the top 10 among ``--candidates``
returned (default 100), the figure that matters for its ranking.

``--segmented`` measures kenang's own search instead (``flows.store.ann.approximate``): a
user's pack of ``--segments`` months of ``--segment-rows`` chunks each (default 60 x 16,667:
1M chunks over five years), of which ``--built`` months are built (single-threaded, as a
run builds each) and the others repeat them (the latency is that of 60 months; the
build's CPU seconds are scaled to all of them).

Prints a table and ends with one JSON line. Timings are the machine's; run at ``nice``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

CONNECTIVITY = 16  # HNSW M, the same for both libraries
EXPANSION_ADD = 128  # efConstruction
EXPANSION_SEARCH = 128  # ef at query time (>= the candidates asked for)


def clustered(n: int, dim: int, seed: int, clusters: int = 2000, spread: float = 0.6) -> np.ndarray:
    """``n`` unit vectors around ``clusters`` random centres (float32), made in blocks to bound memory."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((clusters, dim)).astype(np.float32)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    out = np.empty((n, dim), dtype=np.float32)
    for lo in range(0, n, 50_000):
        hi = min(n, lo + 50_000)
        x = centres[rng.integers(0, clusters, hi - lo)]
        x = x + rng.standard_normal((hi - lo, dim)).astype(np.float32) * (spread / np.sqrt(dim))
        out[lo:hi] = x / np.linalg.norm(x, axis=1, keepdims=True)
    return out


def queries_of(data: np.ndarray, count: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    q = data[rng.integers(0, len(data), count)]
    q = q + rng.standard_normal(q.shape).astype(np.float32) * (0.4 / np.sqrt(data.shape[1]))
    return (q / np.linalg.norm(q, axis=1, keepdims=True)).astype(np.float32)


def exact_top(data: np.ndarray, q: np.ndarray, k: int = 10) -> np.ndarray:
    """Each query's exact top-k rows by cosine, computed in blocks (the data are unit vectors)."""
    best = np.full((len(q), k), -np.inf)
    rows = np.zeros((len(q), k), dtype=np.int64)
    for lo in range(0, len(data), 100_000):
        s = q.astype(np.float64) @ data[lo : lo + 100_000].astype(np.float64).T
        s = np.concatenate([best, s], axis=1)
        r = np.concatenate([rows, np.arange(lo, lo + s.shape[1] - k)[None, :].repeat(len(q), 0)], axis=1)
        top = np.argsort(-s, axis=1)[:, :k]
        best, rows = np.take_along_axis(s, top, 1), np.take_along_axis(r, top, 1)
    return rows


def build(kind: str, data: np.ndarray, path: Path) -> tuple[float, float]:
    """Build one index of ``data`` (keys = row numbers), save it at ``path``; the seconds it took, wall and CPU
    (on a shared machine the CPU seconds are the steadier figure)."""
    t0, c0 = time.perf_counter(), time.process_time()
    if kind.startswith("usearch"):
        from usearch.index import Index

        index = Index(
            ndim=data.shape[1],
            metric="cos",
            dtype=kind.split("-")[1],
            connectivity=CONNECTIVITY,
            expansion_add=EXPANSION_ADD,
            expansion_search=EXPANSION_SEARCH,
        )
        index.add(np.arange(len(data), dtype=np.uint64), data, threads=os.cpu_count() or 2)
        index.save(str(path))
    else:
        import faiss

        if kind == "faiss-hnsw-sq8":
            index = faiss.IndexHNSWSQ(
                data.shape[1], faiss.ScalarQuantizer.QT_8bit, CONNECTIVITY, faiss.METRIC_INNER_PRODUCT
            )
            index.train(data[: min(len(data), 100_000)])
        else:
            index = faiss.IndexHNSWFlat(data.shape[1], CONNECTIVITY, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = EXPANSION_ADD
        index.add(data)
        faiss.write_index(index, str(path))
    return time.perf_counter() - t0, time.process_time() - c0


_CHILD = r"""
import json, sys, time
import numpy as np
kind, path, qpath, cand = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
q = np.load(qpath)
if kind.startswith("usearch"):
    from usearch.index import Index
    index = Index.restore(path, view=True)
    index.expansion_search = max(EF, cand)
    search = lambda v: index.search(v, cand).keys
else:
    import faiss
    index = faiss.read_index(path, faiss.IO_FLAG_MMAP)
    index.hnsw.efSearch = max(EF, cand)
    search = lambda v: index.search(v[None, :], cand)[1][0]
def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
opened = rss()
found, times = [], []
for v in q:
    t0 = time.perf_counter()
    keys = search(v)
    times.append(time.perf_counter() - t0)
    found.append([int(k) for k in keys])
print(json.dumps({"opened_mib": opened, "rss_mib": rss(), "times": times, "found": found}))
""".replace("EF", str(EXPANSION_SEARCH))


def measure(kind: str, path: Path, qpath: Path, candidates: int) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, kind, str(path), str(qpath), str(candidates)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout)


def recall_at_10(found: list[list[int]], truth: np.ndarray, data: np.ndarray, q: np.ndarray) -> float:
    """The share of the exact top 10 among the 10 best of the candidates, reranked by their exact cosine."""
    got = 0
    for cand, want, v in zip(found, truth, q, strict=True):
        cand = np.asarray([c for c in cand if c >= 0], dtype=np.int64)
        top = cand[np.argsort(-(data[cand] @ v))[:10]]
        got += len(set(top.tolist()) & set(want.tolist()))
    return got / truth.size


_SEGMENTED = r"""
import json, os, sys, time
import numpy as np
sys.path.insert(0, os.getcwd())
from flows.store import ann
folder, segments, queries = sys.argv[1], int(sys.argv[2]), sys.argv[3]
built = sorted(p for p in os.listdir(folder) if p.endswith(".usearch"))
blocks, offset = [], 0
for i in range(segments):
    name = built[i % len(built)]
    m = np.load(os.path.join(folder, name.replace(".usearch", ".npy")), mmap_mode="r")
    basis = np.load(os.path.join(folder, name.replace(".usearch", ".basis.npy")))
    blocks.append(ann.Block(offset, len(m), m, ann.open_view(os.path.join(folder, name)), basis))
    offset += len(m)
def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
opened = rss()
times, cpu = [], []
for q in np.load(queries):
    t0, c0 = time.perf_counter(), time.process_time()
    ann.approximate(blocks, [q])
    times.append(time.perf_counter() - t0)
    cpu.append(time.process_time() - c0)
print(json.dumps({"opened_mib": opened, "rss_mib": rss(), "times": times, "cpu": cpu, "rows": offset}))
"""


def segmented(args, tmp: str) -> dict:
    """kenang's search over a pack of ``args.segments`` months (module docstring)."""
    from flows.store import ann

    cpu = 0.0
    for i in range(args.built):
        data = clustered(args.segment_rows, args.dim, seed=100 + i)
        c0 = time.process_time()
        saved = ann.index_files(data, np.arange(len(data)))
        cpu += time.process_time() - c0
        assert saved is not None
        Path(tmp, f"m{i:02d}.usearch").write_bytes(saved[0])
        Path(tmp, f"m{i:02d}.basis.npy").write_bytes(saved[1])
        np.save(Path(tmp, f"m{i:02d}.npy"), data)
    q = queries_of(data, args.queries, seed=1)
    np.save(Path(tmp, "q.npy"), q)
    root = Path(__file__).resolve().parent.parent
    out = subprocess.run(
        [sys.executable, "-c", _SEGMENTED, tmp, str(args.segments), str(Path(tmp, "q.npy"))],
        capture_output=True,
        text=True,
        check=True,
        cwd=root,
    )
    m = json.loads(out.stdout)
    t, c = np.asarray(m["times"]) * 1000, np.asarray(m["cpu"]) * 1000
    return {
        "kind": f"kenang-segmented-{ann.DTYPE}-pca{ann.BASIS}",
        "chunks": m["rows"],
        "segments": args.segments,
        "dim": args.dim,
        "build_cpu_s_all": round(cpu / args.built * args.segments, 1),
        "rss_opened_mib": round(m["opened_mib"], 1),
        "rss_mib": round(m["rss_mib"], 1),
        "p50_ms": round(float(np.percentile(t, 50)), 2),
        "p95_ms": round(float(np.percentile(t, 95)), 2),
        "cpu_p50_ms": round(float(np.percentile(c, 50)), 2),
        "cpu_p95_ms": round(float(np.percentile(c, 95)), 2),
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    ap.add_argument("--dim", type=int, default=896, help="vector width (the bundled e5+use embedder: 896)")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--candidates", type=int, default=100, help="candidates asked of the index per query")
    ap.add_argument("--kinds", nargs="+", default=["usearch-i8", "usearch-f16", "faiss-hnsw-sq8", "faiss-hnsw-flat"])
    ap.add_argument("--segmented", action="store_true", help="kenang's own search over monthly segments")
    ap.add_argument("--segments", type=int, default=60)
    ap.add_argument("--segment-rows", type=int, default=16_667)
    ap.add_argument("--built", type=int, default=3, help="months actually built (the others repeat them)")
    args = ap.parse_args(argv)
    if args.segmented:
        with tempfile.TemporaryDirectory(prefix="kenang-bench-ann-", dir="/tmp") as tmp:
            row = segmented(args, tmp)
        print(
            f"{row['kind']} {row['chunks']:,} chunks in {row['segments']} months: build {row['build_cpu_s_all']:.0f} "
            f"CPU s (all months), rss {row['rss_opened_mib']:.1f}->{row['rss_mib']:.1f} MiB, "
            f"p50 {row['p50_ms']:.1f} ms, p95 {row['p95_ms']:.1f} ms wall, CPU {row['cpu_p50_ms']:.1f} / "
            f"{row['cpu_p95_ms']:.1f} ms (query embedding excluded)"
        )
        print(json.dumps({"benchmark": "ann", "load": os.getloadavg()[0], "results": [row]}))
        return
    rows = []
    with tempfile.TemporaryDirectory(prefix="kenang-bench-ann-", dir="/tmp") as tmp:
        for n in args.sizes:
            data = clustered(n, args.dim, seed=n)
            q = queries_of(data, args.queries, seed=n + 1)
            qpath = Path(tmp) / "q.npy"
            np.save(qpath, q)
            truth = exact_top(data, q)
            for kind in args.kinds:
                if kind == "faiss-hnsw-flat" and n > 200_000:
                    continue  # a float32 graph index of 1M x 896 is 3.6 GB: the point of the others is not to be it
                path = Path(tmp) / f"{kind}-{n}.index"
                build_s, build_cpu_s = build(kind, data, path)
                m = measure(kind, path, qpath, args.candidates)
                t = np.asarray(m["times"]) * 1000
                row = {
                    "kind": kind,
                    "chunks": n,
                    "dim": args.dim,
                    "build_s": round(build_s, 1),
                    "build_cpu_s": round(build_cpu_s, 1),
                    "file_mib": round(path.stat().st_size / 2**20, 1),
                    "rss_opened_mib": round(m["opened_mib"], 1),
                    "rss_mib": round(m["rss_mib"], 1),
                    "p50_ms": round(float(np.percentile(t, 50)), 2),
                    "p95_ms": round(float(np.percentile(t, 95)), 2),
                    "recall_at_10": round(recall_at_10(m["found"], truth, data, q), 4),
                }
                rows.append(row)
                path.unlink()
                print(
                    f"{kind:16} {n:>9,} build {row['build_s']:>7.1f} s ({row['build_cpu_s']:.0f} s CPU)  file {row['file_mib']:>7.1f} MiB  "
                    f"rss {row['rss_opened_mib']:>6.1f}->{row['rss_mib']:>6.1f} MiB  p50 {row['p50_ms']:>6.2f} ms  "
                    f"p95 {row['p95_ms']:>6.2f} ms  recall@10 {row['recall_at_10']:.4f}",
                    flush=True,
                )
            del data
    print(json.dumps({"benchmark": "ann", "load": os.getloadavg()[0], "results": rows}))


if __name__ == "__main__":
    main()
