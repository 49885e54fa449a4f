"""What kenang's MCP server costs an agent's context: the tokens of ``tools/list`` and of a recall answer.

    .venv/bin/python benchmarks/mcp_tokens.py [--top-k 5] [--keep DIR | --home H]

Builds a demo-like home (``kenang demo``'s three weeks of bilingual chats, one nightly
run with extractive summaries and a keyword-only index), starts the real server as an
agent does (``kenang mcp --home H --user gading`` over stdio, FastMCP's ``Client``), and
measures what comes over the wire:

1. ``tools/list``: the whole result (names, descriptions, input and output schemas), as
   compact JSON, and the server's ``instructions`` from ``initialize``.
2. ``memory_recall`` with the demo's first question and ``top_k`` 5: the whole
   ``tools/call`` result as compact JSON, and its two parts, the text block(s) and the
   structured content.

Tokens are counted as characters / 4: tiktoken is no kenang dependency, and its encodings
are downloaded on first use, which an offline machine cannot. The same count before and
after a change is what the figures compare. Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
# benchmarks/mcp.py would shadow the `mcp` SDK that fastmcp imports: this folder goes last on sys.path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE] + [str(HERE)]
sys.path.insert(0, str(ROOT))

import _common as c  # noqa: E402

USER = "gading"


def tokens(text: str) -> int:
    """Characters / 4, rounded up: the usual rule of thumb for English and JSON."""
    return (len(text) + 3) // 4


def compact(obj) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def build_home(root: Path):
    """The demo's sample home, run once: extractive summaries, keyword-only index (no model time)."""
    from flows.cli import demo
    from flows.config import edit_config
    from flows.pipeline import nightly

    plan = demo.prepare(root / "home")
    settings = edit_config(plan.settings.paths.home, lambda d: d.update(embedder={"backend": "none"}))
    nightly(now=plan.now, home=str(settings.paths.home))
    return settings


async def measure(home: Path, query: str, top_k: int) -> dict:
    from fastmcp import Client
    from fastmcp.client.transports import StdioTransport

    transport = StdioTransport(
        sys.executable,
        ["-m", "flows.cli", "mcp", "--home", str(home), "--user", USER],
        cwd=str(ROOT),
        env={**os.environ},
        keep_alive=False,
    )
    async with Client(transport, mode="legacy") as client:  # the initialize handshake: its instructions
        init = client.initialize_result
        listed = await client.list_tools_mcp()
        answer = await client.call_tool_mcp("memory_recall", {"query": query, "top_k": top_k})
    dumped = answer.model_dump(mode="json", by_alias=True, exclude_none=True)
    return {
        "instructions": (init.instructions if init else None) or "",
        "tools": listed.model_dump(mode="json", by_alias=True, exclude_none=True),
        "answer": dumped,
        "text": "\n".join(b.get("text", "") for b in dumped.get("content", [])),
        "structured": dumped.get("structuredContent"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--top-k", type=int, default=5, help="hits in the recall answer (default 5)")
    parser.add_argument("--keep", type=Path, default=None, help="build the home under DIR and leave it")
    parser.add_argument("--home", type=Path, default=None, help="measure this home (built by --keep) as it is")
    args = parser.parse_args()
    count = tokens
    from flows.cli.demo import DEMO_QUERIES

    if args.home:
        got = asyncio.run(measure(args.home.resolve(), DEMO_QUERIES[0], args.top_k))
    else:
        with c.bench_env("mcp-tokens", keep=args.keep) as env:
            settings = build_home(env.root)
            got = asyncio.run(measure(settings.paths.home, DEMO_QUERIES[0], args.top_k))
    hits = got["structured"] or {}
    n_hits = len(hits.get("results", [])) if isinstance(hits, dict) else 0
    tools = got["tools"]["tools"]
    print(f"tokens as chars / 4; server started as `kenang mcp --user {USER}` over stdio on a demo home")
    print(f"initialize instructions: {count(got['instructions']):6,} tokens ({len(got['instructions']):,} chars)")
    print(f"tools/list ({len(tools)} tools):  {count(compact(got['tools'])):6,} tokens")
    for t in tools:
        print(
            f"  {t['name']:<18} {count(compact(t)):5,}  (description {count(t.get('description', '')):4,}, "
            f"input schema {count(compact(t.get('inputSchema', {}))):4,}, "
            f"output schema {count(compact(t.get('outputSchema', {}))):4,})"
        )
    print(f"memory_recall answer, {n_hits} hits: {count(compact(got['answer'])):6,} tokens")
    print(f"  text block(s)       {count(got['text']):6,}")
    print(f"  structured content  {count(compact(got['structured'])) if got['structured'] else 0:6,}")


if __name__ == "__main__":
    main()
