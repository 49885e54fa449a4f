"""What the CLI prints: status, dry-run plans, run summaries and query results.

Renderers only: each takes the plain dict a command built (its ``--json`` output;
``flows.cli.facts`` gathers status and dry runs) and turns it into text tables. Only
counts, ids, paths and reasons appear, never transcript text.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from typing import Any

import click

# What import previews and cut cells need (the redactor's patterns, recall's snippets) is
# imported where they need it: `kenang recall` and `kenang analyze` render here too, and
# a cold query should not pay for compiling what it never uses.


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]], max_width: int | None = 80) -> str:
    """A plain aligned text table; cells longer than max_width are cut with '...'."""
    cells = [[_cell(v, max_width) for v in r] for r in rows]
    widths = [len(h) for h in headers]
    for r in cells:
        widths = [max(w, len(c)) for w, c in zip(widths, r, strict=False)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    lines = [fmt.format(*headers), fmt.format(*("-" * w for w in widths))]
    lines += [fmt.format(*r) for r in cells]
    return "\n".join(line.rstrip() for line in lines)


def _cell(v: Any, max_width: int | None) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.3f}".rstrip("0").rstrip(".")
    if isinstance(v, dt.datetime):
        return v.isoformat(sep=" ", timespec="seconds")
    text = str(v).replace("\n", " ")
    if max_width is None or len(text) <= max_width:
        return text
    from transforms.redact import redact_reason  # a cut cell is redacted first: a cut token is no longer found

    return redact_reason(text, max_width, ellipsis="...")


def render_rows(cols: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    if not cols:
        return "(no result)"
    out = table(cols, rows)
    return f"{out}\n({len(rows)} row{'s' if len(rows) != 1 else ''})"


# --- dry run ---------------------------------------------------------------------


def render_dry_run(p: dict) -> str:
    parts = [f"dry run at {p['now']}: nothing was changed"]
    if p.get("collect"):
        c = p["collect"]
        parts.append(
            f"\nwould collect from {c['sources']} source(s): {c['written']} file(s) into active/, "
            f"{c['bytes']} bytes (ingest, below, sees them only once they are there)"
        )
        parts.append(
            table(
                ["source", "kind", "files", "would write", "bytes", "still being written", "errors"],
                [
                    (
                        s["name"],
                        s["kind"],
                        s["files"],
                        s["written"],
                        s["bytes"],
                        s["waiting_quiet"],
                        "; ".join(s["errors"]),
                    )
                    for s in c["by_source"]
                ],
                max_width=None,
            )
        )
    parts.append(f"\nwould archive {len(p['archive'])} file(s):")
    if p["archive"]:
        parts.append(
            table(
                ["file", "user", "day", "messages", "day from"],
                [(a["file"], a["user_id"], a["date"], a["messages"], a["day_source"]) for a in p["archive"]],
            )
        )
    if p.get("imports"):
        parts.append(f"\nwould import {len(p['imports'])} export(s):")
        parts.append(
            table(
                ["file", "format", "user", "conversations", "messages", "days"],
                [
                    (e["file"], e["format"], e["user_id"], e["conversations"], e["messages"], e["days"])
                    for e in p["imports"]
                ],
            )
        )
    parts.append(f"\nwould quarantine {len(p['quarantine'])} file(s):")
    if p["quarantine"]:
        parts.append(table(["file", "kind", "reason"], [(q["file"], q["kind"], q["reason"]) for q in p["quarantine"]]))
    parts.append(f"\nwould leave {len(p['waiting'])} file(s) alone:")
    if p["waiting"]:
        parts.append(
            table(
                ["file", "day", "why"],
                [(w["file"], w.get("date"), waiting_words(w)) for w in p["waiting"]],
            )
        )
    if p.get("skipped"):
        parts.append(f"\nwould skip {len(p['skipped'])} entr{'y' if len(p['skipped']) == 1 else 'ies'}:")
        parts.append(table(["file", "why"], [(x["file"], _SKIP_WORDS.get(x["why"], x["why"])) for x in p["skipped"]]))
    parts.append(
        f"\nwould load {len(p['load_days'])} day(s): {', '.join(p['load_days'][:20])}"
        + (" ..." if len(p["load_days"]) > 20 else "")
    )
    return "\n".join(parts)


# --- run summary -----------------------------------------------------------------


def render_models_test(data: dict) -> str:
    """``kenang models test``: what each backend did with the probe day."""
    out = []
    sm = data.get("summarizer")
    if sm:
        if "error" in sm:
            out.append(f"summarizer: {sm['error']}")
        else:
            rate = f"{sm['tokens_per_second']} tokens/s" if sm.get("tokens_per_second") else "no tokens (no model)"
            out.append(f"summarizer: {sm['backend']} ({sm['model']})")
            out.append(
                f"  loaded in {sm['load_seconds']:.2f} s; the {sm.get('days', 1)} sample day(s) took {sm['seconds']:.2f} s, "
                f"{sm['attempts']} call(s), {sm['completion_tokens']} completion tokens, {rate}"
            )
            n = sm.get("days", 1)
            if sm["backend"] != "extractive":
                refused = ", ".join(f"{k} {v}" for k, v in sorted(sm.get("summary_refused", {}).items()))
                out.append(
                    f"  valid on the first try: {sm.get('valid_first_try', 0)}/{n} days; "
                    f"summaries kept (grounded in their day): {sm.get('summaries_kept', 0)}/{n}"
                    + (f" (refused: {refused})" if refused else "")
                )
            out.append(
                f"  fields that fell back: {', '.join(sm['fallback_fields']) or 'none'}; "
                f"tokens counted by {sm['tokens_counted_by']}"
            )
            if sm.get("structured_output"):
                out.append(f"  structured output: {sm['structured_output']}")
            if "facts" in sm:
                f = sm["facts"]
                out.append(
                    f"  facts mentioned: {f['model']}/{f['total']} (the extractive path: {f['extractive']}/{f['total']})"
                )
            out.append(f"  summary of the first day: {sm['summary']}")
            if "verdict" in sm:
                out.append(f"  verdict: {sm['verdict']}")
    em = data.get("embedder")
    if em:
        if "error" in em:
            out.append(f"embedder: {em['error']}")
        elif em.get("backend") == "none":
            out.append("embedder: none (keyword-only recall)")
        else:
            out.append(
                f"embedder: {em['id']}, {em['dim']} dimensions; loaded in {em['load_seconds']:.2f} s, "
                f"a query and two passages in {em['seconds']:.2f} s"
            )
    return "\n".join(out)


def render_sources(data: dict) -> str:
    """``kenang sources``: one row per source, then what each said on its last night."""
    if not data["sources"]:
        return "no sources yet: `kenang sources add NAME --kind claude_code --path ~/.claude/projects` adds one"
    rows = [
        (
            s["name"],
            s["kind"],
            s["user"],
            s["files"],
            s["bytes_taken"],
            s["last_collected"] or "never",
            s["days_waiting"],
            len(s["errors"]),
        )
        for s in data["sources"]
    ]
    out = [
        table(
            ["source", "kind", "user", "files", "bytes taken", "last collected", "days waiting", "errors"],
            rows,
            max_width=None,
        )
    ]
    said = [
        (s["name"], word, text)
        for s in data["sources"]
        for word, key in (("error", "errors"), ("note", "notes"))
        for text in s[key]
    ]
    if said:
        out.append("\nlast night:")
        out.append(table(["source", "type", "what"], said, max_width=None))
    return "\n".join(out)


def _held(held: dict | None) -> str:
    """What a backfill that found no day in its range says of the days the archive holds."""
    if held is None:
        return ""
    if not held["days"]:
        return ": none in this range"
    return f": none in this range; kenang's record holds {held['days']} day(s), {held['first']} to {held['last']}"


def render_run(r: dict) -> str:
    rows = []
    if "collect" in r:
        c = r["collect"]
        rows.append(
            (
                "collect",
                f"{c['sources']} source(s), {c['files']} file(s): {c['written']} written into "
                f"active/, {c['bytes']} bytes taken, {c['waiting_quiet']} still being written"
                + (f", {c['skipped']} skipped (see below)" if c.get("skipped") else "")
                + (f", {c['errors']} error(s) (see below)" if c["errors"] else ""),
            )
        )
    if "ingest" in r:
        i = r["ingest"]
        skipped = i.get("skipped") or {}
        rows.append(
            (
                "ingest",
                f"{i['ready']} ready, {i['waiting_day']} waiting for their day, "
                f"{i['waiting_quiet']} still being written, {i['rejected']} unreadable"
                + (f", {sum(skipped.values())} skipped ({_skipped_words(skipped)})" if skipped else ""),
            )
        )
    if "survey" in r:
        s = r["survey"]
        rows.append(
            (
                "survey",
                f"{s['days']} day(s) to derive"
                + _held(s.get("on_record"))
                + (
                    f", {len(s['unrecorded'])} unrecorded file(s) NOT adopted (see below)"
                    if s.get("unrecorded")
                    else ""
                ),
            )
        )
    if "quarantine" in r:
        rows.append(("quarantine", f"{r['quarantine']['moved']} moved"))
    if "archive" in r:
        a = r["archive"]
        rows.append(
            (
                "archive",
                f"{a['placed']} archived, {a['already_there']} already there, "
                f"{a['sources_deleted']} source(s) removed, {a['bytes']} bytes"
                + (
                    f"; {a['purged_on_arrival']} file(s) forgotten with --purge once, removed again and not archived"
                    if a.get("purged_on_arrival")
                    else ""
                ),
            )
        )
    ld = r.get("load", {})
    if ld:
        rows.append(
            (
                "load",
                f"{ld['days']} day(s): {ld['loaded']} loaded, {ld['unchanged']} unchanged, "
                f"{ld['failed']} failed; {ld['sessions']} sessions, {ld['messages']} messages, "
                f"{ld['redactions']} secret(s) redacted",
            )
        )
    sm = r.get("summarize", {})
    if sm:
        model = f" with {sm['backend']} ({sm['model']})" if sm.get("backend") else ""
        rows.append(
            (
                "summarize",
                f"{sm['days']} day(s){model}: {sm['summarized']} written, {sm['failed']} failed; "
                f"{sm['first_try_valid']} valid on first try, {sm['with_fallback']} with fallback fields",
            )
        )
        if sm.get("fallback_reasons"):
            why = "; ".join(f"{k} ({v})" for k, v in sorted(sm["fallback_reasons"].items()))
            rows.append(("", f"fell back: {why}"))
    cand = sm.get("candidates") or {}
    if cand.get("refused"):
        rows.append(
            (
                "",
                f"core memory candidates: {cand.get('new', 0)} new, {cand.get('auto_accepted', 0)} "
                f"auto-accepted, {sum(cand['refused'].values())} refused by the memory rules ("
                + ", ".join(f"{k.replace('_', ' ')} {n}" for k, n in sorted(cand["refused"].items()))
                + ")",
            )
        )
    carried = sm.get("open_items") or {}
    if carried.get("notes_rewritten"):
        rows.append(("", f"open items: {carried['notes_rewritten']} later note(s) now carry or close them"))
    if sm.get("unavailable"):
        rows.append(
            (
                "",
                f"MODEL SERVER UNAVAILABLE: {sm['unavailable']}; {sm['waiting']} day(s) wait for their "
                "summaries, and the next nightly run tries again",
            )
        )
    elif sm.get("waiting"):
        rows.append(
            (
                "",
                f"{sm['waiting']} older day(s) wait for their summaries (summarizer.max_days_per_run "
                f"{sm['budget_days']}): the next nightly runs go on with them",
            )
        )
    ix = r.get("index", {})
    if ix:
        rows.append(
            (
                "index",
                f"{ix['days']} day(s): {ix['indexed']} indexed, {ix['unchanged']} unchanged, "
                f"{ix['failed']} failed; {ix['chunks']} chunks, {ix['embedded']} embedded ({ix['embedder']})",
            )
        )
    if ix.get("unavailable"):
        rows.append(
            (
                "",
                f"EMBEDDING SERVER UNAVAILABLE: {ix['unavailable']}; {ix['waiting']} day(s) wait for the "
                "recall index, and the next nightly run tries again",
            )
        )
    elif ix.get("waiting"):
        rows.append(
            (
                "",
                f"{ix['waiting']} older day(s) wait for the recall index (embedder.max_chunks_per_run "
                f"{ix['budget_chunks']}): the next nightly runs go on with them",
            )
        )
    im = r.get("imports")
    if im:
        at = 3 if "archive" in r else 1
        rows[at:at] = _import_rows(im)
    rows.append(("catalog", "rebuilt" if r.get("catalog_rebuilt") else "unchanged"))
    secs = r.get("seconds", {})
    out = [
        f"{r['flow']} run {r['run_id']} finished in {r.get('cli_seconds', r.get('wall_seconds', 0)):.1f} s "
        f"(stages {sum(secs.values()):.1f} s)",
        table(["stage", "result"], rows, max_width=None),
    ]
    if r.get("degraded"):
        d = r["degraded"]
        out.insert(0, f"DEGRADED NIGHT: archive {d['archive'].replace('_', ' ')}. {d['reason']}")
    said = [
        (src["name"], word, text)
        for src in r.get("collect", {}).get("by_source", [])
        for word, key in (("error", "errors"), ("note", "notes"))
        for text in src[key]
    ]
    if said:
        out.append("\nsources (each goes on without the others):")
        out.append(table(["source", "type", "what"], said, max_width=None))
    bad = (r.get("core_memory") or {}).get("problems") or []
    if bad:
        out.append("\ncore memory files left out of the snapshots (fix them by hand; every other file was served):")
        out.extend(f"  {p}" for p in bad)
    items = r.get("quarantine", {}).get("items", [])
    if items:
        out.append("\nquarantined:")
        out.append(table(["file", "kind", "reason"], items))
    left = r.get("quarantine", {}).get("left", [])
    if left:
        out.append("\nunreadable, but could not be moved to quarantine (left in active/):")
        out.append(table(["file", "why"], left))
    skipped = r.get("ingest", {}).get("skipped_items", [])
    if skipped:
        out.append("\nskipped in active/ (left as they are):")
        out.append(table(["file", "why"], [(f, _SKIP_WORDS.get(w, w)) for f, w in skipped[:20]]))
        if len(skipped) > 20:
            out.append(f"... and {len(skipped) - 20} more")
    unrecorded = r.get("survey", {}).get("unrecorded", [])
    if unrecorded:
        out.append("\nunrecorded files in the archive (not loaded; `kenang adopt PATH` takes one in):")
        out += [f"  {p}" for p in unrecorded]
    merged = r.get("load", {}).get("merged_sessions", [])
    if merged:
        out.append(
            "\nsessions read from several files with the same session_id (merged by message id; "
            "sessions.archive_paths lists the files):"
        )
        out.append(
            table(
                ["user", "day", "session", "files"],
                [(m["user_id"], m["date"], m["session_id"], m["files"]) for m in merged],
            )
        )
    failures = [(stage, f) for stage in ("load", "summarize", "index") for f in r.get(stage, {}).get("failures", [])]
    if failures:
        out.append("\nfailed days (the next nightly run retries them):")
        out.append(
            table(
                ["stage", "user", "day", "reason"],
                [(st, f["user_id"], f["date"], f["reason"]) for st, f in failures],
                max_width=None,  # a reason says its cause, then what to do: never cut
            )
        )
    return "\n".join(out)


#: How many exports the run report names one by one, and how much of each file name it shows.
_EXPORTS_LISTED, _EXPORT_NAME_WIDTH = 10, 60


def _import_rows(im: dict) -> list[tuple[str, str]]:
    """The imports stage's rows: the counts on one line, then an export a line (the first ten, names cut), so
    a night of many exports does not widen the whole table."""
    ex = im["exports"]
    rows = [
        (
            "imports",
            f"{len(ex)} export(s), {_count(sum(e['conversations'] for e in ex), 'conversation')}, "
            f"{_count(sum(e['messages'] for e in ex), 'message')}: {im['placed']} day transcript(s) written, "
            f"{im['already_there']} already there",
        )
    ]
    rows += [
        (
            "",
            f"{_middle_cut(e['file'], _EXPORT_NAME_WIDTH)} ({e['format']}, {_count(e['conversations'], 'conversation')}, "
            f"{_count(e['messages'], 'message')})",
        )
        for e in ex[:_EXPORTS_LISTED]
    ]
    if len(ex) > _EXPORTS_LISTED:
        rows.append(("", f"... and {len(ex) - _EXPORTS_LISTED} more export(s) (`--json` lists every one)"))
    if im.get("purged_on_arrival"):
        rows.append(
            (
                "",
                f"{im['purged_on_arrival']} export(s) held what a purge deleted: not archived, their day "
                "transcripts without it",
            )
        )
    return rows


def _middle_cut(name: str, width: int) -> str:
    """A name cut in its middle to ``width``: its start and its end (the part that tells two apart) stay."""
    if len(name) <= width:
        return name
    head = (width - 3) // 2
    return name[:head] + "..." + name[len(name) - (width - 3 - head) :]


def summary_line(r: dict) -> str:
    """A run in one line (the flow's last log line): days done, waiting, quarantined, failed, how long."""
    ld, sm, ix = r.get("load") or {}, r.get("summarize") or {}, r.get("index") or {}
    failed = sum((r.get(stage) or {}).get("failed", 0) for stage in ("load", "summarize", "index"))
    ig = r.get("ingest") or {}
    held = ig.get("waiting_day", 0) + ig.get("waiting_quiet", 0)
    text = (
        f"{r['flow']} run {r['run_id']}: {ld.get('loaded', 0)} day(s) loaded, {sm.get('summarized', 0)} summarized, "
        f"{ix.get('indexed', 0)} indexed; {sm.get('waiting', 0)} waiting for a summary, "
        f"{ix.get('waiting', 0)} for the index"
        + (f", {held} file(s) in active/ for their day or their writer" if held else "")
        + f"; {(r.get('quarantine') or {}).get('moved', 0)} quarantined; "
        f"{failed} failed; {r.get('wall_seconds', 0):.1f} s"
    )
    return ("DEGRADED " if r.get("degraded") else "") + text


def render_run_markdown(r: dict) -> str:
    """The run report as Markdown (a Prefect artifact): the summary line, then ``render_run``'s text as it is."""
    return f"# {r['flow']} run {r['run_id']}\n\n{summary_line(r)}\n\n```text\n{render_run(r)}\n```\n"


#: The user table's columns, always all of them and in this order: the days each stage did, left as they were,
#: failed (any stage), and left waiting (a summary or the index, for the next run's budget).
USER_COLUMNS = ("loaded", "summarized", "indexed", "unchanged", "failed", "waiting")


def user_rows(r: dict) -> list[dict]:
    """The run's days per user, one row each (a Prefect table artifact), with ``USER_COLUMNS`` and then any other
    count a stage tallied; one row of zeros for "(none)" when no user had a day."""
    by_user = r.get("by_user") or {}

    def folded(row: dict) -> dict:
        out = {c: row.get(c, 0) for c in USER_COLUMNS[:3]}
        for c in USER_COLUMNS[3:]:
            out[c] = sum(v for k, v in row.items() if k.endswith(f"_{c}"))
        return out

    known = set(USER_COLUMNS[:3]) | {k for row in by_user.values() for k in row if k.endswith(USER_COLUMNS[3:])}
    more = sorted({k for row in by_user.values() for k in row} - known)
    rows = [{"user": u, **folded(row), **{k: row.get(k, 0) for k in more}} for u, row in sorted(by_user.items())]
    return rows or [{"user": "(none)", **dict.fromkeys(USER_COLUMNS, 0)}]


def waiting_words(p: dict) -> str:
    """Why a file in active/ waits, in words: ``not_eligible`` (its day has not passed the grace period) with
    when it is taken, ``not_quiet`` (still being written), ``ready``."""
    why = p.get("why")
    if why == "not_eligible":  # eligible_at: in the home's zone, written as the runs' times are (+07:00)
        at = p.get("eligible_at")
        try:
            when = dt.datetime.fromisoformat(at).isoformat(sep=" ", timespec="minutes") if at else None
        except (TypeError, ValueError):
            when = str(at)
        return (f"taken after {when}: " if when else "") + "its day is not over, plus the grace period"
    if why == "not_quiet":
        return "still being written; taken once it rests (the quiet period)"
    if why == "ready":
        return "ready: the next run takes it"
    return str(why)


_SKIP_WORDS = {
    "hidden": "hidden name (starts with a dot)",
    "hidden_folder": "hidden folder, not looked into",
    "not_regular": "not a regular file (a pipe, socket or device): cannot be moved safely",
    "unreadable_folder": "a folder kenang may not list (check its permissions)",
}


def _skipped_words(counts: dict) -> str:
    return ", ".join(f"{n} {w.replace('_', ' ')}" for w, n in sorted(counts.items()))


# --- import ----------------------------------------------------------------------


_UNDATED_BY = {
    "conversation": "the nearest dated message of their conversation",
    "neighbour": "the nearest dated conversation in the file",
    "--date": "the date given with --date",
    "mtime": "the file's modification time (give --date YYYY-MM-DD to choose the day)",
}
_LINES_SHOWN = 5


def import_notes(f: dict) -> list[str]:
    """What ``kenang import`` says of one file: lines it could not read, the day undated messages took, notes."""
    out = []
    if lines := f.get("unreadable_lines"):
        n = len(lines)
        shown = ", ".join(map(str, lines[:_LINES_SHOWN])) + (", ..." if n > _LINES_SHOWN else "")
        out.append(
            f"{n} line{'s' if n != 1 else ''} could not be read and {'were' if n != 1 else 'was'} skipped "
            f"(line{'s' if n != 1 else ''} {shown}); the rest is imported"
        )
    for d in f.get("undated", []):
        n = d["messages"]
        out.append(f"{n} message{'s' if n != 1 else ''} without a time took {d['day']}: {_UNDATED_BY[d['by']]}")
    return out + [f"note: {note}" for note in f.get("notes", [])]


def render_import_preview(plan: dict) -> str:
    from transforms.redact import redact

    out = []
    for f in plan["files"]:
        convs = f["conversations"]
        head = f"{f['file']}: {f['format']}, {len(convs)} conversation{'s' if len(convs) != 1 else ''}"
        out.append(head)
        out += [f"  {line}" for line in import_notes(f)]
        rows = [
            (
                redact(c["title"] or c["id"]).text[:60],
                f"{c['first_day']} .. {c['last_day']}" if c["first_day"] else "-",
                c["messages"],
                c["new_messages"],
            )
            for c in convs
        ]
        if rows:
            out.append(table(["conversation", "days", "messages", "new"], rows))
        total, new = sum(c["messages"] for c in convs), sum(c["new_messages"] for c in convs)
        out.append(f"  {total} messages, {new} new (dry run: nothing changed)\n")
    return "\n".join(out).rstrip()


# --- recall ----------------------------------------------------------------------


def render_recall(
    query: str,
    user: str,
    hits: Sequence[Any],
    *,
    match: str = "strong",
    color: bool = False,
    span: tuple[dt.date | None, dt.date | None] = (None, None),
    empty: bool = False,
) -> str:
    """Readable recall results: how well they match, then date, score, relevance, via, source and the snippet.

    ``span``: the days the search was narrowed to (``--start``, ``--end``); ``empty``: it held no memory at all."""
    from transforms.recall import snippet

    first_day, last_day = span
    within = (
        f" from {first_day} to {last_day}"
        if first_day and last_day
        else f" from {first_day} on"
        if first_day
        else f" up to {last_day}"
        if last_day
        else ""
    )
    if empty:
        return f"no memories of {user}{within}"
    if not hits:
        return f"nothing matches {query!r} in the memories of {user}{within}"
    n = f"{len(hits)} result{'s' if len(hits) != 1 else ''}"
    if match == "none":
        first = f"nothing matches {query!r} ({user}); the nearest day{'s' if len(hits) != 1 else ''}, not relevant:"
    elif match == "weak":
        first = f"{n} for {query!r} ({user}), a weak match: read {'them' if len(hits) != 1 else 'it'} with care"
    else:
        first = f"{n} for {query!r} ({user})"
    out = [first]
    for i, h in enumerate(hits, 1):
        c = h.chunk
        where = c.source + (f" {c.session_id}" if c.session_id else "")
        head = f"{i}. {h.date.isoformat()}  score {h.score:.3f}  relevance {h.relevance:.2f}  {h.via}  {where}"
        if c.flagged:
            head += f"  [flagged: {', '.join(c.flagged)}; not instructions]"
        out += ["", click.style(head, bold=True) if color else head, "   " + snippet(c.text, query)]
    return "\n".join(out)


# --- analyze ---------------------------------------------------------------------


def render_analysis(res: Any) -> str:
    """A trend as a terminal table, headed by what it covers and how it is defined."""
    span = f"{res.start or 'the first day'} .. {res.end or 'the last day'}"
    head = [f"{res.intent} for {res.user}, {span}"]
    if "rule" in res.definition:
        head.append(f"productive: {res.definition['rule']}")
    elif res.definition:
        head.append("; ".join(f"{k}: {v}" for k, v in res.definition.items()))
    if res.empty:
        # Days may well be summarized and name nobody (people_mentions): the table is empty, not the history.
        return "\n".join(head + [f"(no rows: no summarized day of {res.user} in {span} gives one)"])
    cols = res.frame.columns
    rows = [tuple("" if v is None else v for v in r) for r in res.frame.iter_rows()]
    return "\n".join(head + [table(cols, rows, max_width=None), f"({len(rows)} row{'s' if len(rows) != 1 else ''})"])


# --- status ----------------------------------------------------------------------


def render_status(s: dict) -> str:
    out = [f"home: {s['home']}"]
    if s.get("archive", {}).get("state", "ok") != "ok":
        out.append(f"ARCHIVE {s['archive']['state'].replace('_', ' ').upper()}: {s['archive']['reason']}")
    if s["running"]:
        out.append(f"a run is in progress: {s['running'].get('run_id')} (pid {s['running'].get('pid')})")
    d = s["days"]
    out.append(f"days: {d['loaded']} loaded, {len(d['failed'])} failed, {len(d['missing'])} missing")
    out.append(
        f"summaries: {d['summarized']} written, {len(d['summary_failed'])} failed, "
        f"{d['summary_pending']} waiting for the next run"
    )
    ix = s.get("index")
    if ix:
        out.append(
            f"recall index: {ix['indexed']} days indexed, {len(ix['failed'])} failed, "
            f"{ix['pending']} waiting for the next run ({ix['embedder']})"
        )
    for stage, why in (s.get("model_servers") or {}).items():
        label = "summaries" if stage == "summarize" else "recall index"
        out.append(
            f"MODEL SERVER UNAVAILABLE at the last run ({label}): {why}; its days wait, the next run tries again"
        )
    for stage, label in (("summarize", "summaries"), ("index", "recall index")):
        b = (s.get("backlog") or {}).get(stage) or {}
        if b.get("days"):
            hours = f", about {_hours(b['hours'])} of work" if b.get("hours") is not None else ""
            more = f" (about {b['chunks_estimate']} chunks)" if b.get("chunks_estimate") else ""
            out.append(f"backlog, {label}: {b['days']} day(s){more}: {b['nights']} night(s) at this budget{hours}")
    if s["pending"]:
        out.append(f"\npending in active/ ({len(s['pending'])}):")
        out.append(
            table(
                ["file", "user", "day", "why"],
                [(p["file"], p.get("user_id"), p.get("date"), waiting_words(p)) for p in s["pending"]],
            )
        )
    if s["unreadable_in_active"]:
        out.append(f"\nunreadable in active/, quarantined at the next run ({len(s['unreadable_in_active'])}):")
        out.append(table(["file", "kind"], [(u["file"], u["kind"]) for u in s["unreadable_in_active"]]))
    if s.get("skipped_in_active"):
        sk = s["skipped_in_active"]
        out.append(f"\nskipped in active/, left as they are ({len(sk)}):")
        out.append(table(["file", "why"], [(x["file"], _SKIP_WORDS.get(x["why"], x["why"])) for x in sk[:20]]))
    for state in ("failed", "missing"):
        if d[state]:
            out.append(f"\n{state} days:")
            out.append(
                table(
                    ["user", "day", "files", "reason"],
                    [(x["user_id"], x["date"], x["files"], x["reason"]) for x in d[state]],
                )
            )
    if d["summary_failed"]:
        out.append("\nfailed summaries (retried by the next nightly run):")
        out.append(
            table(
                ["user", "day", "reason"],
                [(x["user_id"], x["date"], x["reason"]) for x in d["summary_failed"]],
                max_width=None,  # a reason says its cause, then what to do: never cut
            )
        )
    if d["missing"] or d["failed"]:
        out.append("fix: `kenang backfill --start D --end D --only-missing` reloads them from the archive")
    if s.get("core_memory"):
        out.append(f"\ncore memory files kenang cannot read, left out of the snapshots ({len(s['core_memory'])}):")
        out.extend(f"  {p}" for p in s["core_memory"])
    if s["quarantine"]:
        out.append(f"\nquarantine ({len(s['quarantine'])}):")
        out.append(
            table(["file", "kind", "reason"], [(q["path"], q["kind"], q["reason"]) for q in s["quarantine"][:20]])
        )
    out.append("\nlast runs:")
    out.append(
        table(
            ["run", "flow", "status", "started", "finished"],
            [(r["run_id"], r["flow"], _run_status(r), r["started_at"], r["finished_at"]) for r in s["runs"]],
        )
        if s["runs"]
        else "(none yet)"
    )
    return "\n".join(out)


def _run_status(r: dict) -> str:
    """A run that ended with the archive degraded (exit 3) is no plain success: it archived nothing."""
    if r["status"] == "completed" and r.get("degraded"):
        return f"degraded ({r['degraded'].replace('_', ' ')})"
    return r["status"]


def _hours(h: float) -> str:
    if h * 60 < 1:
        return f"{max(1, round(h * 3600))} s"
    return f"{h * 60:.0f} min" if h < 1 else f"{h:.1f} h"


def render_verify(v: dict) -> str:
    st = v.get("archive_state") or {"state": "ok"}
    if st["state"] in ("not_mounted", "foreign"):
        out = [f"ARCHIVE {st['state'].replace('_', ' ').upper()}: {st['reason']}", "(the archive was not checked)"]
    else:
        out = [f"verified {v['checked']} archived file(s) in {v['archive']}: {v['ok']} ok"]
    sections = (
        (
            "forget_key",
            "FORGET KEY MISSING (tombstones without their key match nothing; a rebuild would bring "
            "forgotten text back, so runs, backfills and forgets stop)",
        ),
        ("missing", "MISSING (recorded, not on disk)"),
        ("changed", "CHANGED (bytes differ from the record)"),
        (
            "unrecorded",
            "UNRECORDED (on disk, in no record: a backfill never loads it; `kenang adopt PATH` takes it in)",
        ),
        (
            "derived_changed",
            "EDITED BY HAND (a summary or MEMORY_INDEX differs from what kenang wrote; "
            "`kenang backfill --resummarize` rewrites summaries)",
        ),
        (
            "derived_missing",
            "DERIVED FILE MISSING (kenang wrote it, it is gone; `kenang backfill --resummarize` rewrites it)",
        ),
        ("derived_unrecorded", "UNRECORDED DERIVED FILE (a summary kenang has no record of writing)"),
        (
            "warehouse_changed",
            "WAREHOUSE CHANGED (a Parquet file differs from what kenang wrote; "
            "`kenang backfill` of its days rebuilds it)",
        ),
        ("warehouse_unrecorded", "WAREHOUSE UNRECORDED (a Parquet file kenang has no checksum for)"),
        (
            "records_changed",
            "RECORD CHANGED (a Parquet file of a record kenang keeps no other copy of differs from what "
            "it wrote: restore it from a backup, or `kenang verify --accept PATH` takes it as it is)",
        ),
        (
            "manifests_changed",
            "MANIFEST CHANGED (a day folder's file list differs from the warehouse's record; "
            "`kenang backfill` of its days rewrites it)",
        ),
        (
            "exports_manifests",
            "EXPORTS RECORD CHANGED (the warehouse's record of the exports, or an imports folder's manifest, "
            "cannot be read or contradicts the record; the exports were checked against the record: restore the "
            "file from a backup, or delete it and the next import into the folder writes it again)",
        ),
    )
    for key, label in sections:
        if v.get(key):
            out.append(f"\n{label}: {len(v[key])}")
            out += [f"  {p}" for p in v[key]]
    if v.get("warehouse_checked"):
        out.append(f"\nwarehouse: {v['warehouse_checked']} Parquet file(s) checked")
    if v.get("purged"):
        out.append(
            f"\npurged: {len(v['purged'])} archived file(s) deleted on purpose, as purge_log records "
            '(`kenang sql "SELECT * FROM purge_log"`)'
        )
    if v.get("purged_on_disk"):
        out.append(
            f"\nnote: {len(v['purged_on_disk'])} purged file(s) are still on disk (a purge was cut short): "
            + ", ".join(v["purged_on_disk"][:5])
        )
    if v.get("bucket"):
        out += _render_bucket(v["bucket"], v.get("archive_remote") or "the bucket")
    if v["writable"]:
        out.append(f"\nwarning: {len(v['writable'])} archived file(s) are writable (expected 0444)")
    if v["leftover_tmp"]:
        out.append(
            f"\nnote: {len(v['leftover_tmp'])} temporary file(s) from an interrupted run; the next run removes them"
        )
    if v.get("exports_manifests_absent"):
        out.append(
            f"\nnote: {len(v['exports_manifests_absent'])} imports folder manifest(s) are gone (the warehouse's "
            "record checked their exports; the next import into the folder writes it again): "
            + ", ".join(v["exports_manifests_absent"][:5])
        )
    if v.get("exports_unchecked"):
        out.append(
            f"\nnote: {len(v['exports_unchecked'])} export(s) in imports/ are in no record (archived by a kenang "
            "older than the exports' records, or put there by hand), so they were not re-hashed: "
            + ", ".join(v["exports_unchecked"][:5])
            + (" ..." if len(v["exports_unchecked"]) > 5 else "")
        )
    out.append("\nOK" if not v["problems"] else f"\n{v['problems']} problem(s)")
    return "\n".join(out)


def _render_bucket(b: dict, url: str) -> list[str]:
    if b.get("error"):
        return [f"\nBUCKET UNREACHABLE: {b['error']} (the local copy was checked, the bucket was not)"]
    out = [f"\nbucket {url}: {b['checked']} recorded original(s) read back"]
    for key, label in (
        (
            "missing",
            "MISSING IN THE BUCKET (recorded, not uploaded: the next run uploads it while the local copy has it)",
        ),
        ("changed", "CHANGED IN THE BUCKET (its bytes differ from the record)"),
        (
            "unrecorded",
            "UNRECORDED IN THE BUCKET (an original in no record; pulled into the local "
            "copy, `kenang adopt PATH` takes it in)",
        ),
    ):
        if b.get(key):
            out.append(f"{label}: {len(b[key])}")
            out += [f"  {p}" for p in b[key]]
    if b.get("not_uploaded"):
        out.append(
            f"note: {len(b['not_uploaded'])} file(s) of the local copy are not in the bucket yet; "
            "the next run uploads them: " + ", ".join(b["not_uploaded"][:5])
        )
    if b.get("purged_still_there"):
        out.append(
            f"note: {len(b['purged_still_there'])} purged file(s) are still in the bucket (a delete it "
            "refused or could not take yet; retried at every run): " + ", ".join(b["purged_still_there"][:5])
        )
    return out


def render_adopt(r: dict) -> str:
    out = []
    for a in r["adopted"]:
        out.append(f"adopted {a['path']} ({a['user_id']}, {a['date']}, {a['messages']} messages)")
    for a in r["already"]:
        out.append(f"already recorded: {a}")
    for a in r["refused"]:
        out.append(f"refused {a['path']}: {a['reason']}")
    if r["adopted"]:
        out.append(
            f"\n{len(r['adopted'])} file(s) recorded; the next `kenang run` loads their day(s): "
            + ", ".join(sorted({f"{a['user_id']}/{a['date']}" for a in r["adopted"]}))
        )
    return "\n".join(out) or "nothing to adopt"


def _count(n: int, noun: str) -> str:
    """``1 conversation``, ``2 conversations``."""
    return f"{n} {noun}{'' if n == 1 else 's'}"
