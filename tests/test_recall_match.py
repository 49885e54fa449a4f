"""Recall says whether anything matched: each hit's ``relevance`` in [0, 1], the same across queries and untouched
by boosts, and each answer's ``match`` (strong, weak or none), by the CLI and by the MCP tool alike."""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest
from fakes import HashEmbedder
from fastmcp import Client
from fastmcp.client.transports import StdioTransport
from helpers import kenang
from test_recall_flow import archive_days, night

from flows.query.recall import Recaller
from transforms.recall import DEFAULTS, Hit, KeywordIndex, RecallParams, coverage, match_of, relevance

pytestmark = pytest.mark.usefixtures("prefect_api")
ROOT = Path(__file__).resolve().parent.parent
CALIBRATION = ROOT / "benchmarks" / "data" / "recall_match.json"
UNRELATED = "what temperature suits a sourdough starter?"


@pytest.fixture
def indexed(home):
    archive_days(home)
    night(home)
    return home


def test_the_frozen_match_constants_are_those_the_tune_run_wrote():
    tuned = json.loads(CALIBRATION.read_text(encoding="utf-8"))
    p = RecallParams()
    assert list(p.relevance_hybrid) == tuned["relevance_hybrid"]
    assert list(p.relevance_keyword) == tuned["relevance_keyword"]
    assert (p.match_weak, p.match_strong) == (tuned["match_weak"], tuned["match_strong"])
    assert 0 < p.match_weak < p.match_strong < 1
    assert p.relevance_hybrid[1] > 0 and p.relevance_hybrid[2] > 0 and p.relevance_keyword[1] > 0  # more is better


def test_relevance_stays_between_0_and_1_and_grows_with_each_signal():
    cover = np.linspace(0.0, 1.0, 11)
    for cos in (None, np.full(11, -1.0), np.full(11, 0.0), np.full(11, 1.0)):
        rel = relevance(cover, cos)
        assert ((rel >= 0) & (rel <= 1)).all() and (np.diff(rel) > 0).all()
    low, high = relevance(cover, np.full(11, 0.5)), relevance(cover, np.full(11, 0.9))
    assert (high > low).all()


def test_coverage_is_the_idf_weighted_share_of_the_query_terms_a_chunk_holds():
    index = KeywordIndex.from_lists(
        [["proxmox", "boot", "order"], ["nas", "backup"], ["proxmox", "~cadangan"]], [[1, 1, 1], [1, 1], [1, 1]]
    )
    got = coverage(index, "proxmox boot order")
    assert got[0] == pytest.approx(1.0) and got[1] == 0.0 and 0.0 < got[2] < 0.5
    assert coverage(index, "sourdough starter").max() == 0.0  # words no chunk holds
    assert coverage(index, "cadangan")[2] == pytest.approx(1.0)  # met in the chunk's gloss
    assert coverage(index, "cadangan", glossed=False)[2] == 0.0


def test_the_match_is_none_without_hits_and_follows_the_best_hit():
    assert match_of([]) == "none"
    hit = Hit(dt.date(2026, 7, 17), 1.0, "direct", None, 0.0)  # type: ignore[arg-type]
    for rel, want in ((0.0, "none"), (DEFAULTS.match_weak, "weak"), (DEFAULTS.match_strong, "strong")):
        assert match_of([hit, dataclasses.replace(hit, relevance=rel)]) == want


def test_boosts_reorder_hits_but_never_change_their_relevance(indexed):
    plain = Recaller(indexed, "gading")
    flat = plain.with_params(dataclasses.replace(RecallParams(), time_boost=0.0, anchor_boost=0.0, slack_boost=0.0))
    for query in ("proxmox boot order 1 on 2026-07-17", "cadangan NAS kemarin", "kapan boot order postgres?"):
        now = dt.date(2026, 7, 19)
        boosted = {(h.date, h.chunk.chunk_id): h for h in plain.search(query, top_k=10, now=now)}
        unboosted = {(h.date, h.chunk.chunk_id): h for h in flat.search(query, top_k=10, now=now)}
        shared = boosted.keys() & unboosted.keys()
        assert shared, query
        for key in shared:
            assert boosted[key].relevance == unboosted[key].relevance, (query, key)
            assert 0.0 <= boosted[key].relevance <= 1.0
    # 2026-07-17 comes in through 2026-07-18's related_dates: ranked by its parent's score, relevant on its own words
    hits = {h.date: h for h in plain.search("cadangan", top_k=5)}
    pulled, parent = hits[dt.date(2026, 7, 17)], hits[dt.date(2026, 7, 18)]
    assert pulled.via == "related:2026-07-18" and pulled.score == pytest.approx(parent.score * 0.7)
    assert pulled.relevance < parent.relevance


def test_kenang_recall_json_says_whether_anything_matched(indexed):
    h = str(indexed.paths.home)
    found = json.loads(kenang("recall", "--home", h, "--user", "gading", "proxmox boot order", "--json").stdout)
    assert found["match"] == "strong" and found["results"][0]["date"] == "2026-07-17"
    assert all(0.0 <= r["relevance"] <= 1.0 for r in found["results"])
    nothing = json.loads(kenang("recall", "--home", h, "--user", "gading", UNRELATED, "--json").stdout)
    assert nothing == {"match": "none", "results": []}
    told = kenang("recall", "--home", h, "--user", "gading", UNRELATED)
    assert told.exit_code == 0 and told.stdout.startswith("nothing matches")
    only_time = json.loads(
        kenang("recall", "--home", h, "--user", "gading", "kemarin", "--now", "2026-07-19", "--json").stdout
    )
    assert only_time["match"] != "none" and only_time["results"][0]["date"] == "2026-07-18"
    explained = json.loads(kenang("recall", "--home", h, "--user", "gading", "cadangan", "--explain", "--json").stdout)
    assert {"understood", "match", "results"} == set(explained)


def test_a_question_that_is_only_a_time_is_answered_by_the_days_of_that_time(indexed):
    now = dt.date(2026, 7, 19)
    # The keyword arm alone, and with a vector arm whose cosines say nothing (the stored chunks were embedded by
    # another embedder): either way the day named is the answer, at full relevance.
    for r in (Recaller(indexed, "gading"), Recaller(indexed, "gading", embedder=HashEmbedder())):
        for q in (
            "kemarin",
            "what did I do yesterday?",
            "ngapain aja kemarin?",
            "what happened yesterday",
            "昨天做了什么？",
            "what's happened yesterday?",  # chat shorthand: a lone lower-case letter names nothing
            "kemarin ngapain y?",
        ):
            hits = r.search(q, top_k=3, now=now)
            assert hits[0].date == dt.date(2026, 7, 18) and hits[0].relevance == 1.0, (q, hits[0])
            assert match_of(hits, r.params) == "strong", q
            assert all(h.relevance < 1.0 for h in hits if h.date != dt.date(2026, 7, 18)), q
        # a question about a thing on that day is answered by its words, not by the day; a one-letter name too
        assert all(h.relevance < 1.0 for h in r.search(f"{UNRELATED} yesterday", top_k=3, now=now))
        for named in ("what did I do with C yesterday?", "What did A do yesterday?", "昨天和A做了什么？"):
            assert all(h.relevance < 1.0 for h in r.search(named, top_k=3, now=now)), named


def test_kenang_recall_refuses_an_empty_query_and_a_reversed_range_and_says_what_it_searched(indexed):
    h = str(indexed.paths.home)
    empty = kenang("recall", "--home", h, "--user", "gading", "   ")
    assert empty.exit_code == 2 and "QUERY" in empty.output and "empty" in empty.output
    reversed_ = kenang(
        "recall", "--home", h, "--user", "gading", "boot", "--start", "2026-07-19", "--end", "2026-07-17"
    )
    assert reversed_.exit_code == 2 and "--end 2026-07-17 is before --start 2026-07-19" in reversed_.output
    nothing = kenang("recall", "--home", h, "--user", "gading", "boot", "--start", "2020-01-01", "--end", "2020-01-31")
    assert nothing.exit_code == 0 and nothing.stdout.strip() == "no memories of gading from 2020-01-01 to 2020-01-31"
    missed = kenang("recall", "--home", h, "--user", "gading", UNRELATED, "--start", "2026-07-17")
    assert missed.stdout.strip() == f"nothing matches {UNRELATED!r} in the memories of gading from 2026-07-17 on"


def test_the_human_output_marks_a_weak_answer_and_a_none_one(indexed):
    from flows.cli import report

    hits = Recaller(indexed, "gading").search("cadangan", top_k=2)
    weak = report.render_recall("cadangan", "gading", hits, match="weak")
    assert weak.startswith("2 results for 'cadangan' (gading), a weak match: read them with care")
    assert "relevance " in weak
    one = report.render_recall("cadangan", "gading", hits[:1], match="weak")
    assert one.startswith("1 result for 'cadangan' (gading), a weak match: read it with care")
    none = report.render_recall("cadangan", "gading", hits, match="none")
    assert none.startswith("nothing matches 'cadangan' (gading); the nearest days, not relevant:\n")


@pytest.mark.integration  # `kenang mcp` over stdio, in a process of its own
def test_the_mcp_recall_tool_over_stdio_says_match_and_relevance(indexed):
    transport = StdioTransport(
        sys.executable,
        ["-m", "flows.cli", "mcp", "--home", str(indexed.paths.home), "--user", "gading"],
        cwd=str(ROOT),
        env={**os.environ},
        keep_alive=False,
    )

    async def go():
        async with Client(transport) as c:
            found = (await c.call_tool("memory_recall", {"query": "proxmox boot order"})).structured_content
            nothing = (await c.call_tool("memory_recall", {"query": UNRELATED})).structured_content
            return found, nothing

    found, nothing = asyncio.run(go())
    assert found["match"] == "strong" and found["results"][0]["date"] == "2026-07-17"
    assert all(0.0 <= r["relevance"] <= 1.0 for r in found["results"])
    assert nothing == {"match": "none", "results": []}
