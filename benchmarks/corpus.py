"""A year of load for the benchmarks: valid, quiet transcripts made of the demo's sentences.

``year_corpus`` trades realism for speed: each message is a finished sentence sampled
from ``sentence_pool``, every template variant of the demo (``flows/cli/demo_data``)
filled once with fixed slots, so the benchmarks read the same languages and shapes the
demo shows without paying for its planning.

Invariants: pure and deterministic, like ``flows.cli.demo_corpus`` (``random.Random(seed)``,
no clock, the caller writes the files); files are ``SyntheticFile`` with ``relpath``
relative to the active folder (``gading`` at the root, ``rina`` under ``rina/``) and
``mtime`` the last message plus five minutes.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date, datetime, time, timedelta, tzinfo
from functools import lru_cache
from random import Random

from flows.cli.demo_corpus import DEMO_USER, USERS, SyntheticFile, fill, slot_values, templates
from transforms.model import Message, Session
from transforms.render import render_jsonl, render_markdown


@lru_cache(maxsize=1)
def sentence_pool() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(user texts, assistant texts): every topic, filler and closer variant filled once with fixed slots."""
    t = templates()
    slots = slot_values(Random(0), date(2026, 1, 1))
    user: list[str] = []
    assistant: list[str] = []
    exchanges = [x for topic in t.topics for x in topic.exchanges]
    exchanges += [x for group in t.filler.values() for x in group] + list(t.closers)
    for user_variants, assistant_variants in exchanges:
        user += [fill(v, slots) for v in user_variants]
        assistant += [fill(v, slots) for v in assistant_variants]
    return tuple(user), tuple(assistant)


def year_corpus(
    *,
    start: date,
    days: int = 365,
    sessions_per_day: int = 10,
    messages_per_session: int = 40,
    tz: tzinfo,
    seed: int = 1,
) -> Iterator[SyntheticFile]:
    """Valid, quiet files for benchmarks: one per session, formats alternating, two users.

    Sessions are spread evenly over each day; messages are 1-3 minutes apart with text
    sampled from a pool of finished sentences. ``mtime`` is the last message plus five
    minutes. Session start times are distinct as long as ``sessions_per_day <= 1440``.
    """
    if messages_per_session < 1:
        raise ValueError(f"a session needs at least one message, got {messages_per_session}")
    rng = Random(seed)
    user_pool, assistant_pool = sentence_pool()
    agents = ("zed", "claude-code", "open-webui")
    step = 1440 / max(sessions_per_day, 1)
    # Below the gap between two slots, so start minutes stay distinct.
    jitter = max(1, min(int(step), 20))
    index = 0
    for d in range(days):
        day = start + timedelta(days=d)
        midnight = datetime.combine(day, time(0), tzinfo=tz)
        for j in range(sessions_per_day):
            user = USERS[j % 2]
            begin = midnight + timedelta(minutes=int(j * step) + rng.randrange(jitter))
            ts = begin
            messages = []
            for seq in range(messages_per_session):
                if seq % 2 == 0:
                    role, text = "user", rng.choice(user_pool)
                else:
                    role, text = "assistant", rng.choice(assistant_pool)
                messages.append(Message(role, text, ts, seq))
                ts += timedelta(minutes=rng.randint(1, 3))
            sid = begin.strftime("%Y-%m-%d-%H%M")
            fmt = "md" if index % 2 == 0 else "jsonl"
            index += 1
            session = Session(sid, None, agents[index % 3], "markdown" if fmt == "md" else "jsonl", tuple(messages))
            if fmt == "md":
                data = render_markdown(session, parent_day=day, folder="" if user == DEMO_USER else user).encode()
            else:
                data = render_jsonl(session).encode()
            name = f"{sid}.{fmt}"
            relpath = name if user == DEMO_USER else f"{user}/{name}"
            yield SyntheticFile(relpath, data, (messages[-1].ts + timedelta(minutes=5)).timestamp())
