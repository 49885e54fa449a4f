"""The MCP server's memory with a recall pack open, and a cold `kenang recall` from the pack.

    .venv/bin/python benchmarks/server_rss.py [--chunks 100000] [--queries 30] [--home DIR] [--root REPO]

1. Builds one user's index of ``--chunks`` chunks over 1,000 days (benchmarks/recall.py's
   ``build_index``: random embeddings of the ``e5+use`` width), unless ``--home`` already
   holds one, then makes the compact copies and the recall pack as a run's end does
   (``pack_build_s``).
2. Starts ``kenang mcp --http`` on that home, calls ``memory_recall`` through a real
   ``fastmcp.Client`` (one call to load, then ``--queries`` timed ones: p50, p95), and reads
   the server's RSS (psutil) once listening and with the index loaded, split as Linux
   counts it: anonymous memory (the heap: what the process holds) and file pages (mapped
   files it has read; the kernel drops them under pressure and reads them again).
3. The same with ``embedder.backend: none``: the keyword arm and the chunks alone.
4. Three cold `kenang recall` calls in new processes, embedder load included (``cold_s``:
   their median).

``--root`` runs another checkout's code (its servers and CLI too), e.g. the last release:
``cd ../base && .venv/bin/python ../lean/benchmarks/server_rss.py --root . --home H``.
Ends with one line of JSON. Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
# This folder holds mcp.py, which would shadow the `mcp` SDK that fastmcp imports: it leaves sys.path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]


def _args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--chunks", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=30, help="timed memory_recall calls (recall.py's queries, cycled)")
    ap.add_argument("--home", type=Path, help="the home to build (or reuse, when it has chunks); kept afterwards")
    ap.add_argument("--root", type=Path, default=HERE.parent, help="the checkout whose code runs (default: this one)")
    return ap.parse_args()


ARGS = _args()
ROOT = ARGS.root.resolve()
sys.path.insert(0, str(ROOT))

import psutil  # noqa: E402
import yaml  # noqa: E402
from fastmcp import Client  # noqa: E402

from benchmarks.recall import QUERIES, generate  # noqa: E402
from flows.config import init_home, load_settings  # noqa: E402
from flows.models.embed import make_embedder  # noqa: E402
from flows.store import compact, mount, recall_pack, warehouse  # noqa: E402
from schemas.tables import MEMORY_CHUNKS  # noqa: E402


def load_line() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} / {five:.2f} / {fifteen:.2f}"


def rss(pid: int) -> dict[str, float]:
    """The process's resident memory in MiB: all of it, its anonymous part and its file pages (/proc status)."""
    out = {"rss": psutil.Process(pid).memory_info().rss / 2**20}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("RssAnon", "RssFile", "RssShmem"):
            out[key] = int(value.split()[0]) / 1024
    return out


def cli(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "KENANG_HOME"}
    r = subprocess.run([sys.executable, "-m", "flows.cli", *args], cwd=ROOT, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"kenang {' '.join(args[:2])} exited with {r.returncode}: {r.stderr.strip()[-2000:]}")
    return r


def set_embedder(home: Path, backend: str) -> None:
    path = home / "kenang.yaml"
    cfg = yaml.safe_load(path.read_text()) or {}
    cfg.setdefault("embedder", {})["backend"] = backend
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))


def serve(home: Path, queries: int, log: Path) -> dict:
    """Start ``kenang mcp --http``, recall through a client, read its RSS; stopped whatever happens."""
    token = cli("mcp", "token", "add", "--home", str(home), "--user", "bench").stdout.strip()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with open(log, "w") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "flows.cli", "mcp", "--home", str(home), "--http", "--port", str(port)],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"kenang mcp --http did not start: {log.read_text()[-2000:]}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                time.sleep(0.05)
        listening = rss(proc.pid)

        async def calls() -> tuple[float, list[float]]:
            async with Client(f"http://127.0.0.1:{port}/mcp", auth=token, timeout=600) as c:
                t0 = time.perf_counter()
                await c.call_tool("memory_recall", {"query": QUERIES[0]})
                first = time.perf_counter() - t0
                lat = []
                for i in range(queries):
                    t0 = time.perf_counter()
                    await c.call_tool("memory_recall", {"query": QUERIES[i % len(QUERIES)], "top_k": 5})
                    lat.append((time.perf_counter() - t0) * 1000)
                return first, lat

        first, lat = asyncio.run(calls())
        loaded = rss(proc.pid)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=20)
    lat.sort()
    return {
        "listening": listening,
        "loaded": loaded,
        "first_s": first,
        "p50_ms": statistics.median(lat),
        "p95_ms": lat[min(len(lat) - 1, int(round(0.95 * (len(lat) - 1))))],
    }


def cold(home: Path) -> float:
    t0 = time.perf_counter()
    cli("recall", "backup restic ke NAS tiap malam", "--home", str(home), "--user", "bench", "--top-k", "5")
    return time.perf_counter() - t0


def show(name: str, f: dict) -> None:
    a, b = f["listening"], f["loaded"]
    print(
        f"{name}: RSS listening {a['rss']:.0f} MiB; with the index loaded {b['rss']:.0f} MiB "
        f"(anonymous {b.get('RssAnon', float('nan')):.0f}, file pages {b.get('RssFile', float('nan')):.0f}); "
        f"first recall {f['first_s']:.2f} s, warm p50 {f['p50_ms']:.1f} ms, p95 {f['p95_ms']:.1f} ms"
    )


def main() -> None:
    tmp = Path(tempfile.mkdtemp(prefix="kenang-bench-rss-", dir="/tmp"))
    home = ARGS.home.resolve() if ARGS.home else tmp / "home"
    try:
        print(f"benchmarks/server_rss.py --chunks {ARGS.chunks} --root {ROOT}; {load_line()}")
        if not (home / "kenang.yaml").exists():
            init_home(home, {"embedder": {"backend": "e5+use"}, "mcp": {"users": ["bench"]}})
        set_embedder(home, "e5+use")
        settings = load_settings(home)
        mount.claim(settings)
        wh = settings.paths.warehouse
        if not warehouse.has_files(wh, MEMORY_CHUNKS):
            e = make_embedder(settings)
            s = generate(settings, ARGS.chunks, 1000, e).gen_s
            del e
            print(f"built {ARGS.chunks:,} chunks over 1,000 days in {s:.1f} s")
        compact.refresh(wh, check=True)  # every partition, as a backfill does: the synthetic days have no ledger
        t0 = time.perf_counter()
        recall_pack.refresh(wh)
        build_s = time.perf_counter() - t0
        pack = recall_pack.folder(wh, "bench")
        sizes: dict[str, int] = {}
        for p in pack.iterdir():
            kind = p.name.split(".", 1)[-1]
            sizes[kind] = sizes.get(kind, 0) + p.stat().st_size
        print(f"recall pack made in {build_s:.1f} s; {load_line()}")
        print("  on disk (MiB): " + ", ".join(f"{k} {v / 2**20:.1f}" for k, v in sorted(sizes.items())))
        hybrid = serve(home, ARGS.queries, tmp / "server.log")
        show(f"hybrid (e5+use), {load_line()}", hybrid)
        colds = [cold(home) for _ in range(3)]
        print(f"cold `kenang recall` from the pack: {', '.join(f'{c:.2f}' for c in colds)} s; {load_line()}")
        set_embedder(home, "none")
        keyword = serve(home, ARGS.queries, tmp / "server-kw.log")
        show(f"keyword only (embedder none), {load_line()}", keyword)
        set_embedder(home, "e5+use")
        print(
            json.dumps(
                {
                    "chunks": ARGS.chunks,
                    "pack_build_s": round(build_s, 2),
                    "pack_mib": round(sum(sizes.values()) / 2**20, 1),
                    "rss_listening_mib": round(hybrid["listening"]["rss"], 1),
                    "rss_loaded_mib": round(hybrid["loaded"]["rss"], 1),
                    "rss_loaded_anon_mib": round(hybrid["loaded"].get("RssAnon", float("nan")), 1),
                    "rss_loaded_file_mib": round(hybrid["loaded"].get("RssFile", float("nan")), 1),
                    "rss_keyword_only_mib": round(keyword["loaded"]["rss"], 1),
                    "rss_keyword_only_anon_mib": round(keyword["loaded"].get("RssAnon", float("nan")), 1),
                    "p50_ms": round(hybrid["p50_ms"], 1),
                    "p95_ms": round(hybrid["p95_ms"], 1),
                    "cold_s": round(statistics.median(colds), 2),
                    "load1": round(os.getloadavg()[0], 2),
                }
            )
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
