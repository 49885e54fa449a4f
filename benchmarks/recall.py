"""Recall at scale: build one user's index from stored vectors, then serve it through `kenang mcp`.

    .venv/bin/python benchmarks/recall.py [--chunks 100000] [--queries 60] [--keep DIR] [--build-only]

1. Writes ``--chunks`` synthetic ``memory_chunks`` rows over ``--days`` days (about 3
   years) for one user, as day partitions: texts of 30-90 words drawn from a Zipf
   vocabulary (the synthetic corpus's words first, then made-up ones, 200,000 terms),
   their keyword terms counted from the same draw, and clustered random unit vectors of
   the configured embedder's width as the stored ``embedding`` (the eval queries' own
   embeddings sit near cluster centres, so each has a dense neighbourhood to rank).
   Embedding a million real chunks would take days on 2 cores: re-embedding is not
   what is measured.
2. Builds the index from the stored vectors with the product's own code, as a night
   ends: ``compact.refresh`` then ``recall_pack.refresh`` on the run's process pool
   (``build_s``; target <= 10 min at 1M chunks).
3. Starts ``kenang mcp --http`` and queries it with a real ``fastmcp.Client``: the
   server's RSS (/proc/<pid>/status VmRSS) after the first query (``rss_mib``; targets
   <= 1 GiB at 1M, <= 400 MiB at 100k), then warm ``memory_recall`` p50 and p95, query
   embedding by the real bundled embedder included (targets 150 and 300 ms at 1M).
4. A cold ``kenang recall`` in a new process, median of ``--cold-runs`` (``cold_s``;
   target <= 1.5 s at 1M).
5. ``recall_at_10``: the vector arm's 10 best days (``Recaller.search``, mode vector, the
   gloss, related days and time words off) against the exact ranking, float64 cosine
   over every stored vector (each day ranked by its best chunk); a hit counts when both
   its day and its chunk are the exact ones. Mean over the eval queries.

Every process that may hold the index (the server, the cold recall) is killed when
its VmRSS passes ``--cap-mib`` (default 8 GiB); the figures it would have given are
then null. ``--keep DIR`` makes the home in DIR and leaves it there; run again with the
same DIR and sizes, generation is skipped and the index is built again from the stored
vectors (the compact folder is removed first). ``--build-only`` stops after step 2.

The last line of output is one JSON object: ``chunks, build_s, rss_mib, p50_ms,
p95_ms, cold_s, recall_at_10`` (then ``build_cpu_s, gen_s, disk_mib, rss_warm_mib, load_avg``).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import datetime as dt
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
# Python puts this folder first on sys.path, where mcp.py would shadow the `mcp` SDK that fastmcp imports.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE] + [str(HERE)]
sys.path.insert(0, str(HERE.parent))

import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402

from benchmarks._serve import ROOT, Cap, _env, cli, load_line, start_server, stop_server, vm_mib  # noqa: E402
from benchmarks.corpus import sentence_pool  # noqa: E402
from flows.cli.demo_corpus import demo_corpus  # noqa: E402
from flows.config import init_home  # noqa: E402
from flows.models.embed import E5Embedder, EnsembleEmbedder, UseEmbedder, make_embedder  # noqa: E402
from flows.query.recall import Recaller  # noqa: E402
from flows.store import compact, mount, recall_pack, warehouse  # noqa: E402
from schemas.tables import MEMORY_CHUNKS  # noqa: E402
from transforms.chunk import Turn, chunk_term_counts, session_chunks, terms_of  # noqa: E402
from transforms.ids import chunk_id  # noqa: E402
from transforms.parse import parse_transcript  # noqa: E402

QUERIES = [
    "how did I set up the Proxmox boot order?",
    "apa kesepakatan sama Kak Rina soal sahur?",
    "backup TrueNAS ke disk eksternal",
    "why does the ZFS pool show degraded",
    "cara akses Home Assistant dari luar tanpa buka port",
    "Tailscale subnet router ACL for CCTV",
    "resep martabak dan pecahan untuk anak",
    "Prefect flow schedule at 02:30 WIB",
    "grocery list budget Rp800k",
    "refleksi mingguan capek",
]
USER = "bench"
DAYS = 1096  # three years
START = dt.date(2023, 1, 1)
VOCAB = 200_000
ZIPF_S = 1.05
WORDS = (30, 90)  # words per chunk
SESSIONS = 12  # per day
CENTERS = 256
SPREAD = 1.2  # noise norm around a centre: a chunk's cosine with its centre is about 1 / sqrt(1 + SPREAD**2)
EVAL_EXTRA = 30  # eval queries besides QUERIES: the synthetic corpus's user turns
MARKER = "bench-recall.json"
TARGET_P50_MS = 150.0
TARGET_P95_MS = 300.0
TARGET_COLD_S = 1.5
TARGET_BUILD_S = 600.0
TARGET_RSS_MIB = {100_000: 400.0, 1_000_000: 1024.0}


@dataclasses.dataclass
class Synthetic:
    chunks: int
    days: int
    embedder_id: str
    seed: int
    gen_s: float
    exact: dict[str, list[list[str]]]  # eval query -> the exact 10 best (day, chunk_id), best first


def vocabulary(size: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(surface words, their terms, vocabulary index by Zipf rank): distinct terms in sorted order, as the chunker
    keeps them; the corpus's words take the top ranks, made-up words the rest."""
    user, assistant = sentence_pool()
    seen: dict[str, str] = {}
    for s in [*QUERIES, *user, *assistant]:
        for w in re.findall(r"[^\W_]+", s.lower()):
            t = terms_of(w)
            if len(t) == 1 and t[0] not in seen:
                seen[t[0]] = w
    real = set(seen)
    # Made-up words are their own terms: stemming 200,000 of them would take minutes, and no query names one.
    syllables = np.array([c + v for c in "bcdfghjklmnprstwyz" for v in "aeiou"] + [""], dtype=object)
    while len(seen) < size:
        draw = syllables[rng.integers(0, len(syllables) - 1, (size, 4))]
        draw[:, 3][rng.random(size) < 0.5] = ""  # 3 or 4 syllables
        for w in draw.sum(axis=1):
            if len(seen) < size and w not in seen:
                seen[w] = w
    terms = sorted(seen)
    is_real = np.array([t in real for t in terms])
    idx = np.arange(len(terms))
    by_rank = np.concatenate([rng.permutation(idx[is_real]), rng.permutation(idx[~is_real])])
    return np.array([seen[t] for t in terms], dtype=object), np.array(terms, dtype=object), by_rank


def eval_queries(n_extra: int, rng: np.random.Generator) -> list[str]:
    user, _ = sentence_pool()
    picks = rng.choice(len(user), size=min(n_extra, len(user)), replace=False)
    return [*QUERIES, *(user[i] for i in sorted(picks))]


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def generate(settings, n: int, days: int, embedder, seed: int = 7) -> Synthetic:
    """Write ``n`` chunks of user bench over ``days`` days as memory_chunks partitions; the exact 10 best days of each
    eval query are found on the way, in float64 over the very float32 vectors written."""
    t0 = time.perf_counter()
    rng = np.random.default_rng(seed)
    words, terms, by_rank = vocabulary(VOCAB, rng)
    ranks = np.arange(1, len(by_rank) + 1, dtype=np.float64)
    cdf = np.cumsum(1.0 / (ranks + 2.7) ** ZIPF_S)
    cdf /= cdf[-1]
    queries = eval_queries(EVAL_EXTRA, rng)
    qv = np.asarray([embedder.embed_query(q) for q in queries], dtype=np.float32)
    dim = qv.shape[1]
    centers = _unit(rng.standard_normal((CENTERS, dim)))
    centers[: len(queries)] = _unit(qv + 0.3 * _unit(rng.standard_normal(qv.shape)))
    centers = centers.astype(np.float32)
    popularity = 1.0 / np.arange(1, CENTERS + 1) ** 0.8
    popularity = rng.permutation(popularity / popularity.sum())
    q64 = qv.astype(np.float64)
    q64 /= np.linalg.norm(q64, axis=1, keepdims=True)
    best = np.full((days, len(queries)), -np.inf)
    best_id = np.empty((days, len(queries)), dtype=object)
    width = WORDS[1]
    made = 0
    for d in range(days):
        k = n * (d + 1) // days - made
        if k <= 0:
            continue
        day = START + dt.timedelta(days=d)
        lengths = rng.integers(WORDS[0], WORDS[1] + 1, k)
        tok = by_rank[np.searchsorted(cdf, rng.random((k, width)))]
        tok[np.arange(width)[None, :] >= lengths[:, None]] = len(terms)  # past the chunk's end: a sentinel
        texts = [" ".join(words[row[:m]]) for row, m in zip(tok, lengths, strict=True)]
        # Distinct terms and their counts, from the sorted draw: a run of one index is one term.
        s = np.sort(tok, axis=1)
        start = np.ones_like(s, dtype=bool)
        start[:, 1:] = s[:, 1:] != s[:, :-1]
        start &= s < len(terms)
        at = np.flatnonzero(start.ravel())
        row = at // width
        ends = np.minimum(np.append(at[1:], k * width), row * width + lengths[row])
        offsets = pa.array(np.concatenate([[0], np.cumsum(np.bincount(row, minlength=k))]).astype(np.int32))
        term_list = pa.ListArray.from_arrays(offsets, pa.array(terms[s.ravel()[at]].tolist(), pa.string()))
        tf_list = pa.ListArray.from_arrays(offsets, pa.array((ends - at).astype(np.int32)))
        vecs = centers[rng.choice(CENTERS, size=k, p=popularity)]
        vecs += rng.standard_normal((k, dim), dtype=np.float32) * np.float32(SPREAD / np.sqrt(dim))
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        session = np.arange(k) * SESSIONS // k
        sessions = [f"{day}-s{i:02d}" for i in session]
        ids = [chunk_id(USER, day, sid, "transcript", t) for sid, t in zip(sessions, texts, strict=True)]
        v64 = vecs.astype(np.float64)
        cos = (v64 @ q64.T) / np.linalg.norm(v64, axis=1, keepdims=True)
        top = cos.argmax(axis=0)
        best[d] = cos[top, np.arange(len(queries))]
        best_id[d] = [ids[j] for j in top]
        seq = np.arange(k) - np.searchsorted(session, session)
        table = pa.table(
            {
                "chunk_id": ids,
                "user_id": [USER] * k,
                "date": [day] * k,
                "session_id": sessions,
                "source": ["transcript"] * k,
                "seq": pa.array(seq.astype(np.int32)),
                "text": texts,
                "flagged": pa.ListArray.from_arrays(pa.array(np.zeros(k + 1, np.int32)), pa.array([], pa.string())),
                "terms": term_list,
                "tfs": tf_list,
                "embedder_id": [embedder.id] * k,
                "embedding": pa.FixedSizeListArray.from_arrays(pa.array(vecs.ravel()), dim).cast(
                    pa.list_(pa.float32())
                ),
                "run_id": ["bench"] * k,
            }
        )
        warehouse.write_partition(settings.paths.warehouse, MEMORY_CHUNKS, table, day, USER)
        made += k
    exact = {}
    for j, q in enumerate(queries):
        order = np.argsort(-best[:, j], kind="stable")[:10]
        exact[q] = [[(START + dt.timedelta(days=int(d))).isoformat(), best_id[d, j]] for d in order if best_id[d, j]]
    return Synthetic(made, days, embedder.id, seed, time.perf_counter() - t0, exact)


def build_index(settings) -> tuple[float, float]:
    """(wall, CPU) seconds to make the compact copies and the recall pack from the stored chunks, as a run's end
    does; the CPU is this process's and its pool workers' (the figure a busy machine moves least)."""
    import psutil

    from flows.stages import pool

    wh = settings.paths.warehouse
    me = psutil.Process()
    cpu0 = sum(me.cpu_times()[:2])
    t0 = time.perf_counter()
    try:
        # check=True: every partition folder is listed, as a backfill does (a night looks only at the ledger's
        # users, and these synthetic days have no ledger rows)
        compact.refresh(wh, check=True, map_items=pool.pure_imap)
        recall_pack.refresh(wh, map_items=pool.pure_imap)
        wall = time.perf_counter() - t0
        cpu = sum(me.cpu_times()[:2]) - cpu0
        for child in me.children(recursive=True):  # the workers, alive until the pool shuts down
            try:
                cpu += sum(child.cpu_times()[:2])
            except psutil.Error:
                pass
    finally:
        pool.shutdown()
    return wall, cpu


def recall_at_10(settings, embedder, syn: Synthetic) -> float:
    """The vector arm's 10 best (day, chunk) against the exact ones, mean over the eval queries."""
    r = Recaller(settings, USER, embedder=embedder)
    r = r.with_params(dataclasses.replace(r.params, gloss_weight=0.0))
    found = []
    for q, want in syn.exact.items():
        hits = r.search(q, top_k=10, mode="vector", expand=False, use_time=False)
        got = {(h.date.isoformat(), h.chunk.chunk_id) for h in hits}
        found.append(len(got & {tuple(w) for w in want}) / max(1, len(want)))
    return statistics.fmean(found)


async def _client_figures(url: str, token: str, pid: int, queries: int) -> dict:
    from fastmcp import Client

    async with Client(url, auth=token, timeout=600) as c:
        t0 = time.perf_counter()
        first = await c.call_tool("memory_recall", {"query": QUERIES[0], "top_k": 5})
        first_s = time.perf_counter() - t0
        vm = vm_mib(pid)
        lat = []
        for i in range(queries):
            t0 = time.perf_counter()
            await c.call_tool("memory_recall", {"query": QUERIES[i % len(QUERIES)], "top_k": 5})
            lat.append((time.perf_counter() - t0) * 1000)
    return {"first_s": first_s, "hits": len(first.structured_content["results"]), "vm": vm, "lat": lat}


def serve(home: Path, log: Path, queries: int, cap_mib: float) -> dict | None:
    """The server's figures through a real client; None when it passed the memory cap."""
    token = cli("mcp", "token", "add", "--home", str(home), "--user", USER).strip()
    s = start_server(home, log, cap_mib)
    try:
        got = asyncio.run(_client_figures(s.url, token, s.proc.pid, queries))
        got["vm_warm"] = vm_mib(s.proc.pid)
        got["server_ms"] = s.tool_ms("memory_recall")[1:]
    except Exception:
        if s.cap is not None and s.cap.hit:
            print(f"the server passed the {cap_mib:.0f} MiB cap (VmRSS {s.cap.hit:.0f} MiB) and was killed")
            return None
        raise
    finally:
        stop_server(s)
    return got


def cold_recall(home: Path, user: str, cap_mib: float | None = None, query: str = "backup restic ke NAS tiap malam"):
    """Wall seconds of one `kenang recall` in a new process (what a person or a script pays per call); None when it
    passed the memory cap."""
    cmd = [sys.executable, "-m", "flows.cli", "recall", query, "--home", str(home), "--user", user, "--top-k", "5"]
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, cwd=ROOT, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    cap = Cap(p.pid, cap_mib) if cap_mib else None
    _, err = p.communicate()
    seconds = time.perf_counter() - t0
    if cap is not None:
        cap.stop()
        if cap.hit:
            print(f"`kenang recall` passed the {cap_mib:.0f} MiB cap (VmRSS {cap.hit:.0f} MiB) and was killed")
            return None
    if p.returncode != 0:
        raise RuntimeError(f"kenang recall failed ({p.returncode}): {err[-2000:]}")
    return seconds


def real_chunks(limit: int) -> list[str]:
    from zoneinfo import ZoneInfo

    tz = ZoneInfo("Asia/Jakarta")
    texts: list[str] = []
    for f in demo_corpus(end_day=dt.date(2026, 7, 19), tz=tz):
        if f.expect != "ok" or f.symlink_to:
            continue
        try:
            s = parse_transcript(f.relpath, f.data, tz=tz)
        except Exception:  # noqa: BLE001 - the planted broken files
            continue
        turns = [Turn(i, m.role, m.content) for i, m in enumerate(s.messages)]
        texts += [c.text for c in session_chunks("u", dt.date(2026, 7, 19), "s", turns)]
        if len(texts) >= limit:
            break
    return texts[:limit]


def throughput(embedder, texts: list[str]) -> float:
    embedder.embed_passages(texts[:4])  # warm up
    t0 = time.perf_counter()
    embedder.embed_passages(texts)
    return len(texts) / (time.perf_counter() - t0)


def print_throughput(n: int) -> None:
    texts = real_chunks(n)
    t0 = time.perf_counter()
    for t in texts * 20:
        chunk_term_counts(t)
    print(f"\nindexing throughput on {len(texts)} real demo chunks (2 threads each):")
    print(f"  keyword terms only: {len(texts) * 20 / (time.perf_counter() - t0):,.0f} chunks/s")
    e5, use = E5Embedder(n_threads=2), UseEmbedder(n_threads=2)
    for name, emb in (("use", use), ("e5", e5), ("e5+use", EnsembleEmbedder([(e5, 1.0), (use, 1.0)]))):
        print(f"  {name:<7} {throughput(emb, texts):7.1f} chunks/s")


def _verdict(value: float | None, target: float | None) -> str:
    if target is None:
        return ""
    return (
        " (target: none at this size)"
        if value is None
        else f" (target <= {target:g}: {'MET' if value <= target else 'MISSED'})"
    )


def _home(keep: Path | None, tmp: Path, args) -> tuple[Path, Synthetic | None]:
    """The home to use, and the chunks it already holds (a --keep DIR made by this script with the same sizes)."""
    if keep is None:
        return tmp / "home", None
    marker = keep / MARKER
    if marker.is_file():
        syn = Synthetic(**json.loads(marker.read_text()))
        if (syn.chunks, syn.days, syn.seed) == (args.chunks, args.days, args.seed):
            return keep, syn
        raise SystemExit(f"{keep} holds {syn.chunks} chunks over {syn.days} days (seed {syn.seed}): give another DIR")
    if keep.exists() and any(keep.iterdir()):
        raise SystemExit(f"{keep} is not empty and was not made by benchmarks/recall.py: give an empty or new folder")
    return keep, None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--chunks", type=int, default=100_000)
    ap.add_argument("--days", type=int, default=DAYS, help=f"days the chunks spread over (default {DAYS})")
    ap.add_argument("--queries", type=int, default=60, help="timed warm memory_recall calls (the 10 queries, cycled)")
    ap.add_argument("--cold-runs", type=int, default=3, help="cold `kenang recall` runs (the median is reported)")
    ap.add_argument("--embedder", default="e5+use", help="embedder.backend of the home (default e5+use)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--keep", type=Path, help="make the home in DIR and keep it (run again with it: reuse its chunks)")
    ap.add_argument(
        "--serve-only", action="store_true", help="with --keep: reuse the kept index as it is (build_s is then 0)"
    )
    ap.add_argument("--build-only", action="store_true", help="stop once the index is built")
    ap.add_argument("--cap-mib", type=float, default=8192, help="kill a server or recall past this VmRSS (MiB)")
    ap.add_argument("--throughput-chunks", type=int, default=0, help="also time embedders on N real demo chunks")
    args = ap.parse_args()

    print(
        f"benchmarks/recall.py --chunks {args.chunks} --days {args.days} --queries {args.queries} "
        f"--embedder {args.embedder}"
    )
    print(load_line())
    out: dict = {"chunks": args.chunks}
    with tempfile.TemporaryDirectory(prefix="kenang-bench-recall-", dir="/tmp") as tmp:
        keep = args.keep.resolve() if args.keep else None
        home, syn = _home(keep, Path(tmp), args)
        settings, _ = init_home(home, {"embedder": {"backend": args.embedder}, "mcp": {"users": [USER]}})
        mount.claim(settings)  # as `kenang init` does
        embedder = make_embedder(settings, for_queries=True)
        print(
            f"embedder: {embedder.id} ({embedder.dim} dims); free disk {shutil.disk_usage(home).free / 2**30:.0f} GiB"
        )
        as_kept = syn is not None and args.serve_only  # the kept index is served as it is
        if syn is None:
            syn = generate(settings, args.chunks, args.days, embedder, args.seed)
            if keep is not None:
                (keep / MARKER).write_text(json.dumps(dataclasses.asdict(syn)))
            print(f"wrote {syn.chunks:,} chunks over {syn.days} days in {syn.gen_s:.1f} s (not counted in the build)")
        elif args.serve_only:
            print(f"reusing the {syn.chunks:,} chunks in {home} and the index built from them")
        else:
            shutil.rmtree(settings.paths.warehouse / "compact", ignore_errors=True)
            print(f"reusing the {syn.chunks:,} chunks in {home}; the index is built again from them")
        out["chunks"] = syn.chunks
        build_s, build_cpu_s = (0.0, 0.0) if as_kept else build_index(settings)
        disk = sum(f.stat().st_size for f in settings.paths.warehouse.rglob("*") if f.is_file()) / 2**20
        print(
            f"built the index from the stored vectors (compact copies + recall pack) in {build_s:.1f} s, "
            f"{build_cpu_s:.1f} CPU s with the pool's workers"
            + _verdict(build_s, TARGET_BUILD_S if args.chunks >= 1_000_000 else None)
        )
        print(f"warehouse on disk: {disk:,.0f} MiB (day partitions, compact copies, recall pack); {load_line()}")
        out.update(build_s=round(build_s, 1), rss_mib=None, p50_ms=None, p95_ms=None, cold_s=None, recall_at_10=None)
        extra = {
            "build_cpu_s": round(build_cpu_s, 1),
            "gen_s": round(syn.gen_s, 1),
            "disk_mib": round(disk),
            "rss_warm_mib": None,
        }
        if not args.build_only:
            served = serve(home, Path(tmp) / "server.log", args.queries, args.cap_mib)
            if served is not None:
                lat = sorted(served["lat"])
                p50, p95 = statistics.median(lat), lat[int(0.95 * (len(lat) - 1))]
                vm, warm = served["vm"], served["vm_warm"]
                print(f"\nkenang mcp --http, fastmcp.Client; {load_line()}")
                print(
                    f"first memory_recall (loads the embedder and the index): {served['first_s']:.2f} s, "
                    f"{served['hits']} hits"
                )
                print(
                    f"server VmRSS after it: {vm.get('VmRSS', 0):.0f} MiB (anon {vm.get('RssAnon', 0):.0f}, "
                    f"file {vm.get('RssFile', 0):.0f})" + _verdict(vm.get("VmRSS"), TARGET_RSS_MIB.get(args.chunks))
                )
                print(
                    f"server VmRSS after the warm queries: {warm.get('VmRSS', 0):.0f} MiB (anon "
                    f"{warm.get('RssAnon', 0):.0f}, file {warm.get('RssFile', 0):.0f}; peak {warm.get('VmHWM', 0):.0f})"
                )
                sl = sorted(served["server_ms"])
                tool = f"; inside the tool {statistics.median(sl):.1f} ms p50" if sl else ""
                print(
                    f"warm memory_recall, {args.queries} calls, query embedding included: p50 {p50:.1f} ms"
                    + _verdict(p50, TARGET_P50_MS if args.chunks >= 1_000_000 else None)
                    + f", p95 {p95:.1f} ms"
                    + _verdict(p95, TARGET_P95_MS if args.chunks >= 1_000_000 else None)
                    + tool
                )
                out.update(rss_mib=round(vm.get("VmRSS", 0)), p50_ms=round(p50, 1), p95_ms=round(p95, 1))
                extra["rss_warm_mib"] = round(warm.get("VmRSS", 0))
                colds = [cold_recall(home, USER, args.cap_mib) for _ in range(max(1, args.cold_runs))]
                if None not in colds:
                    cold = statistics.median(colds)
                    print(
                        f"cold `kenang recall` (new process: imports, embedder, index, one search): "
                        f"{', '.join(f'{c:.2f}' for c in colds)} s, median {cold:.2f}"
                        + _verdict(cold, TARGET_COLD_S if args.chunks >= 1_000_000 else None)
                    )
                    out["cold_s"] = round(cold, 2)
                    r10 = recall_at_10(settings, embedder, syn)
                    print(
                        f"vector arm recall@10 against exact float64 cosine, {len(syn.exact)} queries: {r10:.3f} "
                        "(target >= 0.98)"
                    )
                    out["recall_at_10"] = round(r10, 4)
        if keep is None:
            shutil.rmtree(home, ignore_errors=True)
    if args.throughput_chunks:
        print_throughput(args.throughput_chunks)
    extra["load_avg"] = round(os.getloadavg()[0], 2)
    print(json.dumps({**out, **extra}))


if __name__ == "__main__":
    main()
