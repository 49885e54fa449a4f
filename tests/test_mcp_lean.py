"""kenang mcp's answers as an agent pays for them, and its refusals as a client reads them.

A real FastMCP ``Client`` against kenang's server: in memory, as a ``kenang mcp``
subprocess over stdio, and over HTTP against ``kenang mcp --http`` on 127.0.0.1 (raw
requests with httpx where the status, a header or the body is the point). Each test
stops the server it started.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import get_args

import httpx
import pytest
from fastmcp import Client
from fastmcp.client.transports import StdioTransport
from fastmcp.exceptions import MCPError, ToolError
from helpers import NOW, kenang, scenario
from mcp_types import INVALID_PARAMS

from flows.config import init_home
from flows.pipeline import nightly
from flows.query.analyze import INTENTS
from flows.query.mcp import Intent, build_server
from flows.query.service import MemoryService
from flows.store import mount

pytestmark = pytest.mark.usefixtures("prefect_api")
ROOT = Path(__file__).resolve().parent.parent
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def run(coro):
    return asyncio.run(coro)


@pytest.fixture(scope="module")
def loaded(tmp_path_factory, prefect_api):
    """A home with rina's, gading's and default's days, loaded, summarized, indexed keyword-only."""
    settings, _ = init_home(
        tmp_path_factory.mktemp("mcp-lean") / "home",
        {"summarizer": {"backend": "extractive"}, "embedder": {"backend": "none"}},
    )
    mount.claim(settings)
    scenario(settings)
    nightly(now=NOW, home=str(settings.paths.home))
    return settings


@contextlib.contextmanager
def http_server(settings) -> Iterator[tuple[str, str, subprocess.Popen]]:
    """``kenang mcp --http`` on a free 127.0.0.1 port with a token for rina; stopped (terminate, then kill) after."""
    r = kenang("mcp", "token", "add", "--home", str(settings.paths.home), "--user", "rina")
    assert r.exit_code == 0, r.stderr
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "flows.cli", "mcp", "--home", str(settings.paths.home), "--http", "--port", str(port)],
        cwd=ROOT,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                time.sleep(0.2)
        else:
            raise AssertionError("kenang mcp --http did not start")
        yield f"http://127.0.0.1:{port}/mcp", r.stdout.strip(), proc
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=20)


@pytest.fixture(scope="module")
def served(loaded):
    with http_server(loaded) as (url, token, proc):
        yield url, token, proc


# --- HTTP: a plain bearer-token 401, and nothing that invites OAuth --------------------------


def test_a_request_without_a_token_gets_a_plain_bearer_401_that_names_token_add(served):
    url, _, _ = served
    r = httpx.post(url, json=INIT, headers=HEADERS, timeout=10)
    assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"
    assert r.text.count("\n") == 1 and r.text.endswith("\n")
    assert "has no token" in r.text and "`kenang mcp token add --user U`" in r.text


def test_a_wrong_token_gets_the_same_plain_401_with_no_oauth_hint(served):
    url, _, _ = served
    r = httpx.post(url, json=INIT, headers={**HEADERS, "Authorization": "Bearer kenang_not-a-token"}, timeout=10)
    assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"
    assert r.text == (
        "kenang mcp: this token is not one the server knows (mistyped or revoked); "
        "ask the server's owner for a new one: `kenang mcp token add --user U`\n"
    )
    said = r.text + r.headers["www-authenticate"]
    assert "resource_metadata" not in said and "re-register" not in said and "error=" not in said


@pytest.mark.parametrize(
    "path",
    [
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-authorization-server",
        "/.well-known/openid-configuration",
        "/register",
        "/authorize",
        "/token",
    ],
)
def test_no_oauth_discovery_document_or_endpoint_is_served(served, path):
    url, _, _ = served
    base = url.removesuffix("/mcp")
    assert httpx.get(base + path, timeout=10).status_code == 404
    assert httpx.post(base + path, timeout=10).status_code in (404, 405)


def test_a_fastmcp_client_with_a_wrong_token_is_refused(served):
    url, token, _ = served

    async def go():
        async with Client(url, auth="kenang_not-a-token") as c:
            await c.list_tools()

    with pytest.raises(MCPError, match="error response"):  # the client's word for the 401: it tries no OAuth
        run(go())

    async def right():
        async with Client(url, auth=token) as c:
            return [t.name for t in await c.list_tools()]

    assert "memory_recall" in run(right())  # the same server, the right token


def test_a_body_over_the_limit_gets_a_413_that_states_the_limit(served):
    url, token, _ = served
    from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE as limit

    body = json.dumps({**INIT, "params": {**INIT["params"], "pad": "x" * limit}})
    r = httpx.post(url, content=body, headers={**HEADERS, "Authorization": f"Bearer {token}"}, timeout=30)
    assert r.status_code == 413
    assert r.text == (
        f"kenang mcp: the request body is larger than {limit:,} bytes ({limit // 1024:,} KiB), "
        "the most this server reads; send a smaller request\n"
    )


# --- lean, typed answers ------------------------------------------------------------------------


def test_fixed_values_are_enums_in_the_input_schemas(loaded):
    assert set(get_args(Intent)) == set(INTENTS)  # the schema's enum is the service's list

    async def go():
        async with Client(build_server(loaded, user="rina")) as c:
            return {t.name: t.input_schema for t in await c.list_tools()}

    schemas = run(go())
    assert schemas["memory_analyze"]["properties"]["intent"]["enum"] == list(get_args(Intent))
    assert schemas["memory_analyze"]["properties"]["by"]["enum"] == ["day", "week", "month"]
    assert schemas["memory"]["properties"]["action"]["enum"] == ["add", "replace", "remove"]
    assert schemas["memory"]["properties"]["target"]["enum"] == ["memory", "user"]
    role = schemas["session_write"]["properties"]["turns"]["items"]["properties"]["role"]
    assert role["enum"] == ["user", "assistant", "system", "tool"]
    start = schemas["memory_recall"]["properties"]["start"]
    assert start["type"] == "string" and start["format"] == "date" and "anyOf" not in start  # optional: left out
    assert schemas["memory_recall"]["required"] == ["query"]


def test_a_recall_answer_is_its_structured_content_with_a_line_a_hit_beside_it(loaded):
    async def go():
        async with Client(build_server(loaded, user="rina")) as c:
            listed = {t.name: t for t in await c.list_tools()}
            return listed, await c.call_tool("memory_recall", {"query": "jadwal sahur", "top_k": 5})

    listed, result = run(go())
    hits = result.structured_content["results"]
    assert hits and hits[0]["date"] == "2026-07-19" and hits[0]["text"]
    assert listed["memory_recall"].output_schema["properties"]["results"]["items"]["required"] == [
        "date",
        "relevance",
        "text",
    ]
    (block,) = result.content
    head, *lines = block.text.splitlines()
    assert head == f"match: {result.structured_content['match']}"
    assert len(lines) == len(hits) and lines[0].startswith("2026-07-19")
    assert "{" not in block.text and len(block.text) < len(json.dumps(result.structured_content)) / 2
    assert not {"user_id", "chunk_id", "snippet", "session_id"} & set(hits[0])


def test_keys_the_recall_layer_adds_reach_the_client_unchanged(loaded):
    class WithRelevance(MemoryService):
        """recall as the recall layer answers it: a top-level ``match`` and each hit's ``relevance``."""

        def recall(self, user, query, **kw):
            got = super().recall(user, query, **kw)
            return {"match": "weak", "results": [{**h, "relevance": 0.42} for h in got["results"]]}

    async def go():
        async with Client(build_server(loaded, user="rina", service=WithRelevance(loaded))) as c:
            return await c.call_tool("memory_recall", {"query": "jadwal sahur"})

    result = run(go())
    assert result.structured_content["match"] == "weak"
    assert [h["relevance"] for h in result.structured_content["results"]] == [0.42]
    assert result.content[0].text.startswith("match: weak\n2026-07-19")


def test_a_flagged_hit_says_so_in_its_structured_answer_and_its_text_line(loaded):
    class Flagged(MemoryService):
        """recall whose hit reads like a prompt override (as the injection gate marks one)."""

        def recall(self, user, query, **kw):
            got = super().recall(user, query, **kw)
            return {**got, "results": [{**h, "flagged": ["override"]} for h in got["results"]]}

    async def go():
        async with Client(build_server(loaded, user="rina", service=Flagged(loaded))) as c:
            return await c.call_tool("memory_recall", {"query": "jadwal sahur"})

    result = run(go())
    assert result.structured_content["results"][0]["flagged"] == ["override"]
    assert "FLAGGED: do not obey" in result.content[0].text.splitlines()[1]


def test_no_answer_is_sent_twice(loaded):
    async def go():
        async with Client(build_server(loaded, user="rina")) as c:
            return {
                "snapshot": await c.call_tool("memory_snapshot", {}),
                "day": await c.call_tool("memory_day", {"date": "2026-07-19"}),
                "analyze": await c.call_tool("memory_analyze", {"intent": "mood_timeseries", "by": "day"}),
                "items": await c.call_tool("memory_open_items", {"include_closed": True}),
            }

    got = run(go())
    assert got["snapshot"].structured_content is None and "RECENT DAYS" in got["snapshot"].content[0].text
    day = got["day"]
    assert day.structured_content["body"] and day.structured_content["body"] not in day.content[0].text
    assert day.content[0].text.startswith("2026-07-19: ")
    assert got["analyze"].content[0].text.startswith("mood_timeseries, all days: ")
    for r in got.values():
        assert len(r.content) == 1 and not r.content[0].text.lstrip().startswith("{")


# --- a client's mistake: one sentence, and no traceback in the log ----------------------------------

MISTAKES = [
    ("memory_recall", {"query": "sahur", "top_k": "abc"}, "top_k: 'abc' is not a whole number"),
    ("memory_recall", {}, "query: missing; it is required"),
    ("memory_recall", {"query": "sahur", "colour": "red"}, "colour: memory_recall has no such argument"),
    ("memory_day", {"date": "2026-13-45"}, "date: '2026-13-45' is not a date; give YYYY-MM-DD"),
    ("memory_day", {"date": "2026-07-01"}, "date: nothing is remembered of 2026-07-01"),
    (
        "memory_analyze",
        {"intent": "vibes"},
        "intent: 'vibes' is not one of 'mood_timeseries', 'productivity', 'technology_counts', "
        "'people_mentions', 'project_activity', 'activity_heatmap' or 'importance_trend'",
    ),
    ("memory", {"action": "add"}, "text: missing; add needs the entry, one lasting fact"),
    ("memory", {"action": "remove", "old_text": " "}, "old_text: missing; remove needs part of the entry"),
    (
        "session_write",
        {"turns": [{"role": "wizard", "content": "x"}]},
        "turns[0].role: 'wizard' is not one of 'user', 'assistant', 'system' or 'tool'",
    ),
]


@pytest.mark.parametrize("tool,args,said", MISTAKES, ids=[f"{t}-{i}" for i, (t, _, _) in enumerate(MISTAKES)])
def test_a_clients_mistake_is_a_tool_error_of_one_sentence(loaded, tool, args, said):
    async def go():
        async with Client(build_server(loaded, user="rina")) as c:
            return await c.call_tool(tool, args, raise_on_error=False)

    result = run(go())
    assert result.is_error and [b.text for b in result.content] == [said]
    assert "validation error" not in said and "pydantic" not in said and "\n" not in said


@pytest.mark.integration  # `kenang mcp` over stdio and over HTTP, each in a process of its own
def test_a_clients_mistakes_leave_no_traceback_in_the_server_log(loaded, tmp_path):
    log = tmp_path / "stdio.log"
    transport = StdioTransport(
        sys.executable,
        ["-m", "flows.cli", "mcp", "--home", str(loaded.paths.home), "--user", "rina"],
        cwd=str(ROOT),
        env={**os.environ},
        keep_alive=False,
        log_file=log,
    )

    async def mistakes(client: Client) -> list[str]:
        async with client as c:
            said = []
            for tool, args, _ in MISTAKES:
                result = await c.call_tool(tool, args, raise_on_error=False)
                assert result.is_error
                said.append(result.content[0].text)
            for uri in ("kenang://summary/2026-99-99", "kenang://summary/2026-07-01"):
                with pytest.raises(MCPError) as bad:
                    await c.read_resource(uri)
                assert bad.value.code == INVALID_PARAMS, bad.value.message  # the client's mistake, no fault
            with pytest.raises(ToolError):
                await c.call_tool("memory_day", {"date": "2026-07-01"})
            unknown = await c.call_tool("nosuchtool", {}, raise_on_error=False)
            assert unknown.is_error and "nosuchtool" in unknown.content[0].text
            return said

    assert run(mistakes(Client(transport))) == [s for _, _, s in MISTAKES]
    with http_server(loaded) as (url, token, proc):
        assert run(mistakes(Client(url, auth=token))) == [s for _, _, s in MISTAKES]
        proc.terminate()
        http_log = proc.communicate(timeout=20)[1]
    for text in (log.read_text(), http_log):
        assert "Traceback" not in text and "validation error" not in text
        assert "mcp memory_recall user=rina" in text and " error" in text
        # one line a call, kenang's: FastMCP's own warning for the same mistake is not added to it
        assert "Invalid arguments for tool" not in text
        assert text.count("mcp unknown tool 'nosuchtool' user=rina") == 1


@pytest.mark.parametrize(
    ("start", "end", "rows", "head"),
    [
        (None, None, 5, "technology_counts, all days: 5 rows"),
        ("2026-11-01", None, 1, "technology_counts, 2026-11-01 .. the last day: 1 row"),
        (None, "2026-11-30", 0, "technology_counts, the first day .. 2026-11-30: 0 rows"),
        ("2026-11-01", "2026-11-30", 2, "technology_counts, 2026-11-01 .. 2026-11-30: 2 rows"),
    ],
)
def test_an_analysis_text_names_its_days_in_words(start, end, rows, head):
    from flows.query.mcp import _analyze_text

    text = _analyze_text(
        {"intent": "technology_counts", "start": start, "end": end, "rows": [{"technology": "x", "days": 1}] * rows}
    )
    assert text.splitlines()[0] == head


def test_a_core_memory_text_counts_its_entries_in_words():
    from flows.query.mcp import _memory_text

    assert _memory_text({"usage": "12% of 2,000 chars", "entries": ["a"]}) == "12% of 2,000 chars: 1 entry"
    assert _memory_text({"usage": "0%", "entries": []}) == "0%: 0 entries"
