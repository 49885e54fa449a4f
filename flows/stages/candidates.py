"""Candidates: the notes the nightly run proposes for core memory, in ``memory_candidates``.

Each (user, day) the run summarized is read for corrections and preferences
(``transforms.candidates.day_candidates``) by the summarize stage, in the same pass as
its summary; then the user's last
``FACT_WINDOW_DAYS`` days of summaries for technologies, projects and hosts that keep
coming back (``recurring_facts``). The window's summaries are read from its months'
files alone, and each day's host names are read from its messages once, then kept
(``_candidates/<user>.hosts.json``, by the sha256 kenang recorded for the day's
partition, and only for the window's days): a night reads its own day's messages, not
a month of them. ``kenang forget`` drops the user's kept names with the days it rewrites. A candidate keeps its provenance: the dates, the
session ids and the quote (all redacted). Its status is ``pending`` until a person
accepts it (``kenang memory accept``), which writes it through the core memory rules,
or rejects it; a rejected candidate is never proposed again. With
``memory.auto_accept``, pending corrections are added by the run itself, under every
rule. A candidate the rules refuse (a standing order, a credential, ...) is never
proposed; a pending one that today's rules refuse, or that a write refuses, becomes
``refused`` and is never accepted. The run report counts the refusals by rule
(``candidates.refused``). A pending candidate's text is checked once per version of
the rules (``passed.json``), and so is a recurring fact's while it is pending and its
count and dates stay the same.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import itertools
import json
import logging
from collections.abc import Iterable, Iterator
from pathlib import Path

import pyarrow as pa

from flows.config import Settings
from flows.store import compact, core_memory, warehouse
from flows.store.fsio import atomic_write_bytes
from flows.store.ledger import DayKey
from schemas.tables import MEMORY_CANDIDATES, MESSAGES
from transforms import candidates as tc
from transforms.core_memory import Refused, check_entry, entry_text

FACT_WINDOW_DAYS = 30
log = logging.getLogger("kenang")


def read_all(settings: Settings) -> list[dict]:
    return warehouse.read(settings.paths.warehouse, MEMORY_CANDIDATES).to_pylist()


def write_all(settings: Settings, rows: list[dict]) -> None:
    rows = sorted(rows, key=lambda r: (r["user_id"], r["candidate_id"]))
    warehouse.write_file(
        warehouse.single_file(settings.paths.warehouse, MEMORY_CANDIDATES),
        pa.Table.from_pylist(rows, schema=MEMORY_CANDIDATES.schema),
        MEMORY_CANDIDATES,
    )


def propose(
    settings: Settings,
    keys: Iterable[DayKey],
    found: Iterable[tc.Candidate],
    today: dt.date,
    refused: Iterable[str] = (),
) -> dict:
    """Merge the candidates found in the given days (the summarize stage finds them, ``transforms.candidates.
    scan_day``, and says which rule ``refused`` the ones it dropped) and the users' recurring facts into the table;
    auto-accept if configured."""
    keys = sorted(set(keys))
    why: dict[str, int] = {}
    for kind in refused:
        why[kind] = why.get(kind, 0) + 1
    if not keys:
        return {"found": 0, "new": 0, "auto_accepted": 0, "refused": why}
    found = list(found)
    passed = _passed(settings)
    for user in sorted({u for u, _ in keys}):
        found += _recurring(settings, user, today, passed)
    rows = read_all(settings)
    by_id = {r["candidate_id"]: r for r in rows}
    now = dt.datetime.now(dt.UTC)
    new = changed = 0
    for c in tc.merge([], found):
        old = by_id.get(c.candidate_id)
        row = {
            "candidate_id": c.candidate_id,
            "user_id": c.user_id,
            "kind": c.kind,
            "target": c.target,
            "text": c.text,
            "quote": c.quote,
            "dates": sorted(set(c.dates) | set(old["dates"] if old else ())),
            "session_ids": sorted(set(c.session_ids) | set(old["session_ids"] if old else ())),
            "status": old["status"] if old else "pending",
            "updated_at": now,
        }
        if old is None:
            new += 1
        elif all(old[k] == row[k] for k in ("text", "dates", "session_ids", "status")):
            continue
        by_id[c.candidate_id] = row
        changed += 1
    # each passed the rules' check in this run (scan_day, recurring_facts), or on an earlier night under these rules
    checked = {c.text for c in found}
    still: set[str] = set()
    for row in by_id.values():  # proposed under older rules: what today's refuse is never accepted
        if row["status"] == "pending":
            digest = _digest(row["text"])
            if digest in passed or row["text"] in checked:  # checked under these very rules, earlier or now
                still.add(digest)
                continue
            try:
                check_entry(row["text"])
                still.add(digest)
            except Refused as exc:
                row["status"], row["updated_at"] = "refused", now
                why[exc.kind] = why.get(exc.kind, 0) + 1
                changed += 1
    if still != passed:
        _keep_passed(settings, still)
    auto = 0
    if settings.memory.auto_accept:
        for row in by_id.values():
            if row["status"] == "pending" and row["kind"] == "correction":
                try:
                    core_memory.write(
                        settings, row["user_id"], row["target"], "add", text=row["text"], source="nightly"
                    )
                except Refused as exc:
                    log.info("candidate %s stays pending: %s", row["candidate_id"], exc.kind)
                    if exc.kind == "bad_file":  # the file is fixed by hand, then the next run adds it
                        why[exc.kind] = why.get(exc.kind, 0) + 1
                    continue
                row["status"], row["updated_at"] = "accepted", now
                auto += 1
                changed += 1
    if changed:
        write_all(settings, list(by_id.values()))
    return {"found": len(found), "new": new, "auto_accepted": auto, "refused": why}


def _passed_file(settings: Settings) -> Path:
    return settings.paths.warehouse / "_candidates" / "passed.json"


@functools.cache
def rules_key() -> str:
    """A digest of the code and word lists the memory rules are made of (``transforms``, ``schemas``), and of what
    they read from outside them (detect-secrets' patterns, Python's Unicode tables): any change to them checks
    every pending candidate again."""
    import unicodedata
    from importlib.metadata import version

    import schemas
    import transforms

    h = hashlib.sha256()
    h.update(f"detect-secrets {version('detect-secrets')}\0unicode {unicodedata.unidata_version}\0".encode())
    for pkg in (transforms, schemas):
        root = Path(str(pkg.__file__)).parent
        for path in sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in (".py", ".yaml", ".tsv", ".txt")):
            data = path.read_bytes()
            h.update(f"{path.relative_to(root)}\0{len(data)}\0".encode() + data)
    return h.hexdigest()[:24]


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _passed(settings: Settings) -> set[str]:
    """The digests of the pending candidates' texts that today's rules let through on an earlier night: a pending
    candidate is checked once per version of the rules, not every night (the memory rules check it again when it
    is accepted, whatever this says)."""
    try:
        body = json.loads(_passed_file(settings).read_bytes())
        return set(body["passed"]) if body.get("rules") == rules_key() else set()
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return set()


def _keep_passed(settings: Settings, passed: set[str]) -> None:
    body = {"rules": rules_key(), "passed": sorted(passed)}
    atomic_write_bytes(_passed_file(settings), json.dumps(body).encode())


def _recurring(settings: Settings, user: str, today: dt.date, passed: set[str]) -> list[tc.Candidate]:
    """The user's recurring facts over the window. A fact's text names its count and dates, so it changes when they
    do; one unchanged since a night whose check these rules passed (``passed``) is not checked again."""
    since = today - dt.timedelta(days=FACT_WINDOW_DAYS)
    rows = compact.read_user(
        settings.paths.warehouse,
        "daily_summaries",
        user,
        "date >= ?",
        [since],
        columns=("date", "technologies", "projects"),
        months=_months(since, today),  # the window's months alone: a night's reads do not grow with the history
    ).to_pylist()
    techs = {r["date"]: list(r["technologies"] or ()) for r in rows}
    projects = {r["date"]: list(r["projects"] or ()) for r in rows}
    hosts = _hosts_since(settings, user, since, today)

    def check(text: str) -> str:
        return text if entry_text(text) == text and _digest(text) in passed else check_entry(text)

    return (
        tc.recurring_facts(user, techs, "Uses", check=check)
        + tc.recurring_facts(user, projects, "Works on project", check=check)
        + tc.recurring_facts(user, hosts, "Runs host", check=check)
    )


def _months(since: dt.date, today: dt.date) -> list[str]:
    """The ``YYYY-MM`` of every month from ``since`` to ``today``."""
    out, day = [], since.replace(day=1)
    while day <= today:
        out.append(f"{day:%Y-%m}")
        day = (day + dt.timedelta(days=32)).replace(day=1)
    return out


def _hosts_file(settings: Settings, user: str) -> Path:
    return settings.paths.warehouse / "_candidates" / f"{user}.hosts.json"


def forget_hosts(settings: Settings, user: str) -> None:
    """Drop the host names kept for the user's days (``kenang forget`` rewrites their messages)."""
    _hosts_file(settings, user).unlink(missing_ok=True)


def _hosts_since(settings: Settings, user: str, since: dt.date, today: dt.date) -> dict[dt.date, list[str]]:
    """The host names of each day in [since, today] with messages: kept ones whose partition is unchanged, the rest
    read from their partitions."""
    wh = settings.paths.warehouse
    path = _hosts_file(settings, user)
    try:
        kept = {
            str(d): (str(sha), [str(h) for h in names]) for d, (sha, names) in json.loads(path.read_bytes()).items()
        }
    except (OSError, ValueError, TypeError, AttributeError):
        kept = {}
    out: dict[dt.date, list[str]] = {}
    keep: dict[str, tuple[str, list[str]]] = {}
    todo: dict[dt.date, tuple[Path, str | None]] = {}
    for n in range((today - since).days + 1):
        day = since + dt.timedelta(days=n)
        f = warehouse.partition_file(wh, MESSAGES, day, user)
        if not f.is_file():
            continue
        sums = warehouse.recorded_checksums(f)
        hit = kept.get(day.isoformat())
        if sums and hit is not None and hit[0] == sums[0]:
            out[day] = hit[1]
            keep[day.isoformat()] = hit
        else:
            todo[day] = (f, sums[0] if sums else None)
    if todo:
        found = tc.hosts_by_day(_unflagged([f for f, _ in todo.values()], settings.limits.batch_rows))
        for day, (_, sha) in todo.items():
            out[day] = found.get(day, [])
            if sha is not None:
                keep[day.isoformat()] = (sha, out[day])
    if keep != kept:
        atomic_write_bytes(path, json.dumps({d: list(v) for d, v in sorted(keep.items())}).encode())
    return dict(sorted(out.items()))


def _unflagged(files: list[Path], batch_rows: int) -> Iterator[tuple[dt.date, str]]:
    """(date, content) of the unflagged messages in these partitions (one user and day each, in day order), in day,
    session and turn order, read ``batch_rows`` rows at a time: a huge day is never held whole."""
    for path in files:
        keys = warehouse.read_columns(path, MESSAGES, ("session_id", "seq"))
        in_order = all(a <= b for a, b in itertools.pairwise(zip(keys["session_id"], keys["seq"], strict=True)))
        del keys
        if not in_order:  # not as ``load`` writes a day: sorted here, whole
            yield from _sorted_unflagged(path)
            continue
        for got in warehouse.iter_columns(path, MESSAGES, ("date", "content", "flags"), batch_rows):
            for day, content, flags in zip(got["date"], got["content"], got["flags"], strict=True):
                if not flags:
                    yield day, content


def _sorted_unflagged(path: Path) -> list[tuple[dt.date, str]]:
    con = warehouse.scratch()
    try:
        rows = (
            con.sql(
                "SELECT date, content FROM read_parquet(?, hive_partitioning=true, union_by_name=true) "
                "WHERE len(coalesce(flags, [])) = 0 ORDER BY date, session_id, seq",
                params=[[str(path)]],
            )
            .to_arrow_table()
            .to_pylist()
        )
    finally:
        con.close()
    return [(r["date"], r["content"]) for r in rows]


def decide(
    settings: Settings, candidate_id: str, accept: bool, *, target: str | None = None, source: str = "cli"
) -> dict:
    """Accept (write it, under every rule) or reject one pending candidate; returns its row."""
    rows = read_all(settings)
    hits = [r for r in rows if r["candidate_id"].startswith(candidate_id)]
    if len(hits) != 1:
        raise Refused(
            f"{len(hits)} candidates have an id starting {candidate_id!r}", "See them with `kenang memory candidates`"
        )
    row = hits[0]
    if row["status"] != "pending":
        raise Refused(
            f"candidate {row['candidate_id']} is {row['status']} already",
            "Nothing to do" if row["status"] != "refused" else "The memory rules refuse it; nothing to do",
        )
    if accept:
        core_memory.write(settings, row["user_id"], target or row["target"], "add", text=row["text"], source=source)
    row["status"] = "accepted" if accept else "rejected"
    row["updated_at"] = dt.datetime.now(dt.UTC)
    write_all(settings, rows)
    return row
