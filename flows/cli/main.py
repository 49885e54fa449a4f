"""The ``kenang`` command line.

Results go to stdout (a table, or JSON with ``--json``); progress and diagnostics go to
stderr. ``run``, ``backfill`` and ``demo`` call the Prefect flows in
``flows.pipeline``; ``sql``, ``status`` and ``verify`` are queries and never import
Prefect. This module is the edge: it alone reads the environment (``KENANG_HOME``)
and sets Prefect's settings before Prefect is imported.

Exit codes: 0 done; 1 the run finished but something failed (a day, a verify check)
or a stage failed; 2 bad usage or configuration; 3 the night was degraded (the archive
is not mounted, read-only or full: nothing archived, no original deleted); 75 another
run holds the lock.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import sys
import time
from pathlib import Path
from typing import Any

import click

from flows.cli import config_cmd
from flows.config import Settings, init_home, load_settings, resolve_home
from schemas.frontmatter import SCHEMA_VERSION as NOTES_SCHEMA
from transforms.errors import ConfigError, KenangError, LockHeld, PrefectUnreachable, UsageError

EXIT_FAILED, EXIT_USAGE, EXIT_DEGRADED, EXIT_LOCKED = 1, 2, 3, 75
EXIT_PARTIAL = 4  # kenang import: some files were skipped (each said, with why), the others imported


def _home_option(f):
    return click.option(
        "--home",
        type=click.Path(file_okay=False, path_type=Path),
        default=None,
        help="kenang home (default: $KENANG_HOME, else ~/.local/share/kenang).",
    )(f)


class _Day(click.DateTime):
    """A day given as YYYY-MM-DD (a datetime at midnight, as ``click.DateTime`` gives it); one that is no day of the
    calendar ("2025-02-30") says so, as the MCP tools do, not that it does not match the format."""

    def __init__(self) -> None:
        super().__init__(["%Y-%m-%d"])

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, dt.datetime):
            return value
        try:
            return dt.datetime.strptime(str(value), "%Y-%m-%d")
        except ValueError:
            self.fail(f"{value!r} is not a date; give YYYY-MM-DD", param, ctx)


_DAY = _Day()


#: Which user a command serves without --user (``_user_for``), as its help says it.
_SERVED = "(default: the home's default_user, or its only user with data when that holds nothing)."


def _wait_option(what: str):
    """``--wait SECONDS`` (``wait_s``), never negative; ``what`` is its help."""
    return click.option("--wait", "wait_s", type=click.FloatRange(min=0), default=0.0, show_default=True, help=what)


def _json_option(f):
    return click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON on stdout.")(f)


class _Group(click.Group):
    def make_context(self, *args: Any, **kwargs: Any) -> click.Context:
        try:
            return super().make_context(*args, **kwargs)
        except click.ClickException as exc:
            raise _gated_click(exc) from None

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.ClickException as exc:  # a usage error quotes what was typed: it passes the gate too
            raise _gated_click(exc) from None
        except LockHeld as exc:
            _err(f"kenang: {exc}")
            ctx.exit(EXIT_LOCKED)
        except UsageError as exc:  # the command's options, not kenang.yaml
            _err(str(exc), f"kenang {ctx.invoked_subcommand}" if ctx.invoked_subcommand else "kenang")
            ctx.exit(EXIT_USAGE)
        except ConfigError as exc:
            _err(f"kenang: configuration error: {exc}")
            ctx.exit(EXIT_USAGE)
        except KenangError as exc:
            _err(f"kenang: {exc}")
            ctx.exit(EXIT_FAILED)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(
    package_name="kenang", prog_name="kenang", message=f"%(prog)s %(version)s (notes schema {NOTES_SCHEMA})"
)
@click.option("-v", "--verbose", is_flag=True, help="Show Prefect's and kenang's logs on stderr.")
@click.pass_context
def cli(ctx: click.Context, verbose: bool) -> None:
    """kenang: remember your AI conversations.

    A nightly pipeline that archives chat transcripts read-only, loads them into
    Parquet tables with a DuckDB catalog, and never loses a file.
    """
    ctx.obj = {"verbose": verbose}
    from transforms import log_gate

    log_gate.install()


def _home(home: Path | None) -> Path:
    return resolve_home(home, os.environ)


def _settings(home: Path | None) -> Settings:
    return load_settings(_home(home))


def _err(msg: str, command: str = "") -> None:
    """``msg`` on stderr through the redaction gate, after ``command: `` when given.

    The command path is kenang's own words (click's command names), so it is never redacted: "kenang mcp
    token add: this home ..." would read to the redactor as a token's value.
    """
    from transforms.redact import redact_reason

    click.echo(f"{command}: {redact_reason(msg)}" if command else redact_reason(msg), err=True)


def _gated_click(exc: click.ClickException) -> click.ClickException:
    """``exc`` with what click will print of it (its message, a file name) through the redaction gate."""
    from transforms.redact import redact_reason

    for attr in ("message", "ui_filename"):
        if isinstance(getattr(exc, attr, None), str):
            setattr(exc, attr, redact_reason(getattr(exc, attr)))
    return exc


def _gated_excepthook(kind: type[BaseException], value: BaseException, tb: Any) -> None:
    """An error kenang did not expect (a bug) is printed with its traceback, through the redaction gate."""
    import traceback

    from transforms.redact import redact

    sys.stderr.write(redact("".join(traceback.format_exception(kind, value, tb))).text)


def _gated(data: Any) -> Any:
    """``data`` through the redaction gate (every string redacted), before it is rendered or cut."""
    from transforms.redact import redact_tree

    return redact_tree(data)


def _emit_json(data: Any, *, gated: bool = False) -> None:
    """``data`` as JSON on stdout, through the redaction gate unless ``gated`` (already, or read from redacted
    tables: query results)."""
    click.echo(json.dumps(data if gated else _gated(data), indent=2, ensure_ascii=False, default=_json_default))


def _json_default(v: Any) -> Any:
    if isinstance(v, (dt.date, dt.datetime, dt.time)):
        return v.isoformat()
    if isinstance(v, (bytes, bytearray)):
        return v.hex()
    if isinstance(v, Path):
        return str(v)
    return str(v)


# --- init ---------------------------------------------------------------------------


@cli.command()
@_home_option
@click.option(
    "--claim-archive",
    is_flag=True,
    help="Take over an archive whose marker names another home (a restored or moved home).",
)
def init(home: Path | None, claim_archive: bool) -> None:
    """Create the home folders, a commented kenang.yaml and the archive marker.

    Run it with the archive mounted: the marker (.kenang-archive) is how every later
    run knows the archive is really there, and a run never creates the archive itself.
    """
    from flows.stages.catalog import ensure_catalog
    from flows.store import mount
    from flows.store.warehouse import record_missing_checksums

    target = _home(home)
    settings, created = init_home(target)
    marker = mount.claim(settings, force=claim_archive)
    ensure_catalog(settings.paths.catalog, settings.paths.warehouse)
    adopted = record_missing_checksums(settings.paths.warehouse)
    verb = "created" if created else "kept existing"
    click.echo(f"{verb} {settings.paths.config_file}")
    if adopted:
        _err(f"recorded checksums for {adopted} warehouse file(s) written before kenang kept them")
    for name in ("active", "archive", "warehouse", "quarantine"):
        click.echo(f"  {name:<11} {getattr(settings.paths, name)}")
    if settings.paths.remote_archive and marker != "foreign":
        from flows.store import remote

        click.echo(f"  {'bucket':<11} {settings.paths.remote_archive} ({remote.lock_summary(settings)})")
    if marker == "foreign":
        _err(
            f"kenang: the archive {settings.paths.archive} is marked as another home's; runs will not write to it. "
            "If this home was restored or moved, run `kenang init --claim-archive`."
        )
        sys.exit(EXIT_USAGE)
    if marker == "unmarked":
        _err(
            f"kenang: {settings.paths.archive} holds no {mount.MARKER} marker, but this home has archived files "
            "already: the archive is not mounted there, so no marker was written. Mount it and run `kenang init` "
            "again; if the archive really is there now (moved without its marker), run `kenang init --claim-archive`."
        )
        sys.exit(EXIT_USAGE)
    _err("next: drop transcripts into active/, then `kenang run` (or schedule the nightly flow; see docs/homelab.md)")


# --- run / backfill -----------------------------------------------------------------


def _parse_now(value: str | None, settings: Settings) -> dt.datetime | None:
    if value is None:
        return None
    try:
        when = dt.datetime.fromisoformat(value)
    except ValueError:
        raise click.BadParameter(
            f"{value!r} is not an ISO-8601 time, e.g. 2026-07-20T02:30", param_hint="--now"
        ) from None
    if not 1970 <= when.year <= 9000:
        raise click.BadParameter(f"{value!r} is not a time kenang can run at (years 1970 to 9000)", param_hint="--now")
    return when if when.tzinfo else when.replace(tzinfo=settings.timezone)


def _prepare_prefect(verbose: bool) -> None:
    """Prefect settings that must be in place before prefect is imported."""
    # An ephemeral API can take over 20 s to start on a busy 2-core box.
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "180")
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    if not verbose:
        os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
        os.environ.setdefault("PREFECT_LOGGING_SERVER_LEVEL", "WARNING")
        # A failed run is reported by kenang itself, in one line (`kenang: ...`); Prefect's
        # own traceback of it is for --verbose and the Prefect UI.
        os.environ.setdefault("PREFECT_LOGGING_LOGGERS_PREFECT_FLOW_RUNS_LEVEL", "CRITICAL")
        os.environ.setdefault("PREFECT_LOGGING_LOGGERS_PREFECT_TASK_RUNS_LEVEL", "CRITICAL")


def _tombstones_honoured(settings: Settings) -> None:
    """Stop before anything is written when the home's tombstones lost their key (a rebuild would unforget)."""
    from flows.store import tombstones

    tombstones.require_key(settings)


def _lock_free(settings: Settings, wait_s: float) -> bool:
    """Say at once, before Prefect starts, that another run holds the lock (the flow checks again). With a wait,
    False when another run holds it now: what that run does meanwhile is not known, so nothing may be found quiet."""
    from flows.store.lock import held_message, holder

    if holder(settings.paths.lock) is None:
        return True
    if wait_s <= 0:
        raise LockHeld(held_message(settings.paths.lock, 0))
    return False


def _interactive() -> bool:
    """Whether stderr is a terminal (someone reads the run as it goes), not a journal or a file."""
    return sys.stderr.isatty()


def _with_progress(fn, *args, prefect: bool = True, **kwargs):
    """Call a flow with progress on stderr: a live line on a terminal, else a line every 5 s. ``prefect``: the
    flow talks to a Prefect API (without one set, a temporary server is started first, with a watcher that stops
    it if this process is killed: ``temporary_server``)."""
    from flows.stages import progress

    tty = sys.stderr.isatty()
    last = [0.0]

    def show(stage: str, done: int, total: int, files: int, elapsed: float, unit: str) -> None:
        text = progress.line(stage, done, total, files, elapsed, unit)
        if tty:
            sys.stderr.write(f"\r{text}" + ("\n" if done == total else ""))
        elif done == total or time.monotonic() - last[0] >= 5:
            last[0] = time.monotonic()
            sys.stderr.write(text + "\n")
        sys.stderr.flush()

    progress.set_reporter(show)
    # At a terminal without --verbose, kenang's warnings stay off the screen: what a run warns of (a source's error)
    # is in the report printed after it. A run under a timer or cron (stderr no terminal) logs them to its journal.
    ctx = click.get_current_context(silent=True)
    quiet_logs = _interactive() and not (ctx and ctx.obj and ctx.obj.get("verbose"))
    kenang_log = logging.getLogger("kenang")
    level = kenang_log.level
    if quiet_logs:
        kenang_log.setLevel(logging.ERROR)
    try:
        if not prefect:  # a plain run: Prefect is never imported
            return fn(*args, **kwargs)
        from flows.cli import temporary_server
        from flows.pipeline import heartbeats_as_asked

        temporary_server.start()
        with heartbeats_as_asked():
            return fn(*args, **kwargs)
    except RuntimeError as exc:  # Prefect's own, before the flow's body runs: one line, not its traceback
        url = _prefect_server()
        if url and "Failed to reach API" in str(exc):
            raise PrefectUnreachable(
                f"the Prefect server at {url} does not answer, so the run did not start (what waits in active/ "
                "stays there): start it (`prefect server start`, or its systemd unit), or unset PREFECT_API_URL "
                "to run with a temporary one"
            ) from None
        raise
    finally:
        progress.set_reporter(None)
        kenang_log.setLevel(level)


@cli.command()
@_home_option
@click.option("--now", "now_s", metavar="ISO", help="Pretend it is this time (local zone if no offset).")
@click.option("--dry-run", is_flag=True, help="Print what would happen and change nothing.")
@_wait_option("Seconds to wait for another run's lock.")
@_json_option
@click.pass_context
def run(ctx: click.Context, home: Path | None, now_s: str | None, dry_run: bool, wait_s: float, as_json: bool) -> None:
    """Run the nightly flow: collect, ingest, quarantine, archive, load, summarize, index, catalog."""
    settings = _settings(home)
    now = _parse_now(now_s, settings)
    if dry_run:
        from flows.cli import facts, report

        # the home's local time, to the second, as with --now
        plan = _gated(facts.dry_run(settings, now or dt.datetime.now(settings.timezone).replace(microsecond=0)))
        _emit_json(plan, gated=True) if as_json else click.echo(report.render_dry_run(plan))
        return
    _tombstones_honoured(settings)
    free = _lock_free(settings, wait_s)
    _prepare_prefect(ctx.obj["verbose"])
    from flows import pipeline
    from flows.pipeline import nightly_run, quiet

    t0 = time.perf_counter()
    # Nothing to do: the same body without Prefect, whose start-up (a temporary server, or a flow run's round trips
    # to one) would be most of the run. Such a run is in `kenang status`, not in the Prefect UI.
    plain = free and quiet(settings, now)
    flow = (lambda **kw: nightly_run(**kw, plain=True)) if plain else pipeline.nightly  # the flow: Prefect imported
    result = _with_progress(flow, now=now, home=str(settings.paths.home), wait_seconds=wait_s, prefect=not plain)
    _finish(result, as_json, time.perf_counter() - t0, hint=not plain)


@cli.command()
@_home_option
@click.option("--start", required=True, type=_DAY, help="First day, YYYY-MM-DD.")
@click.option("--end", required=True, type=_DAY, help="Last day, YYYY-MM-DD (inclusive).")
@click.option("--only-missing", is_flag=True, help="Only days with archive files but no complete load.")
@click.option("--resummarize", is_flag=True, help="Rewrite every summary in the range (after switching models).")
@click.option("--reindex", is_flag=True, help="Re-chunk and re-embed every day in the range for the recall index.")
@click.option(
    "--no-budget",
    is_flag=True,
    help="Summarize and index the whole range now, past summarizer.max_days_per_run and embedder.max_chunks_per_run.",
)
@_wait_option("Seconds to wait for another run's lock.")
@_json_option
@click.pass_context
def backfill(
    ctx: click.Context,
    home: Path | None,
    start: dt.datetime,
    end: dt.datetime,
    only_missing: bool,
    resummarize: bool,
    reindex: bool,
    no_budget: bool,
    wait_s: float,
    as_json: bool,
) -> None:
    """Re-derive the tables, summaries and recall index for a date range from the archive alone."""
    settings = _settings(home)
    if end < start:
        raise click.BadParameter(f"--end {end:%Y-%m-%d} is before --start {start:%Y-%m-%d}")
    _tombstones_honoured(settings)
    free = _lock_free(settings, wait_s)
    _prepare_prefect(ctx.obj["verbose"])
    from flows import pipeline
    from flows.pipeline import backfill_quiet, backfill_run

    t0 = time.perf_counter()
    # A range with nothing to derive runs without Prefect, as a quiet night does (``backfill_quiet``).
    plain = free and backfill_quiet(settings, start.date(), end.date(), only_missing, redo_all=resummarize or reindex)
    flow = (lambda **kw: backfill_run(**kw, plain=True)) if plain else pipeline.backfill
    result = _with_progress(
        flow,
        start=start.date(),
        end=end.date(),
        only_missing=only_missing,
        resummarize=resummarize,
        home=str(settings.paths.home),
        wait_seconds=wait_s,
        reindex=reindex,
        no_budget=no_budget,
        prefect=not plain,
    )
    _finish(result, as_json, time.perf_counter() - t0, hint=not plain)


def _prefect_server() -> str | None:
    """The Prefect API this process talks to; None when each run starts a temporary one."""
    from prefect.settings import get_current_settings

    return get_current_settings().api.url


#: The start-up hint is shown when a temporary Prefect server took at least this many seconds, and this share of
#: the run: a long night's own work is not the server's fault.
HINT_SECONDS, HINT_SHARE = 3.0, 0.25


def _start_up_share(result: dict, seconds: float) -> float | None:
    """The seconds a run spent outside its flow's body (a temporary Prefect server's start-up, mostly), when there
    was no server to reuse and they were a large part of the run; else None."""
    if _prefect_server():
        return None
    overhead = seconds - float(result.get("wall_seconds") or 0.0)
    return overhead if overhead >= HINT_SECONDS and overhead >= HINT_SHARE * seconds else None


def _finish(result: dict, as_json: bool, seconds: float, *, hint: bool = True) -> None:
    from flows.cli import report

    result = _gated({**result, "cli_seconds": round(seconds, 3)})
    if as_json:
        _emit_json(result, gated=True)
    else:
        click.echo(report.render_run(result))
        if hint and (overhead := _start_up_share(result, seconds)) is not None:
            _err(
                f"hint: about {overhead:.0f} s of this run's {seconds:.1f} s went to starting a temporary Prefect "
                "server for it alone; with `prefect server start` running and PREFECT_API_URL set, runs skip that "
                "start-up"
            )
    if result.get("degraded"):
        sys.exit(EXIT_DEGRADED)
    if any(result.get(stage, {}).get("failed") for stage in ("load", "summarize", "index")):
        sys.exit(EXIT_FAILED)


# --- queries ------------------------------------------------------------------------


@cli.command()
@_home_option
@_json_option
def status(home: Path | None, as_json: bool) -> None:
    """Show pending, failed and missing days, quarantine and the last runs."""
    from flows.cli import facts, report

    settings = _settings(home)
    data = _gated(facts.status(settings))
    _emit_json(data, gated=True) if as_json else click.echo(report.render_status(data))


@cli.command()
@_home_option
@click.option(
    "--accept",
    "accept_paths",
    multiple=True,
    metavar="PATH",
    help="Take a changed record file (runs, quarantine, ...; a path under warehouse/) as it is now. Repeatable.",
)
@_json_option
def verify(home: Path | None, accept_paths: tuple[str, ...], as_json: bool) -> None:
    """Re-hash the archive, the summaries and the warehouse against what kenang recorded."""
    from dataclasses import asdict

    from flows.cli import report
    from flows.store.verify import accept
    from flows.store.verify import verify as verify_archive

    settings = _settings(home)
    if accept_paths:  # as verify prints them (relative to warehouse/), or absolute
        wh = settings.paths.warehouse.resolve()
        rels = []
        for p in accept_paths:
            path = Path(p)
            if path.is_absolute():
                if not path.resolve().is_relative_to(wh):
                    raise UsageError(f"{p} is not in this home's warehouse ({wh})")
                rels.append(path.resolve().relative_to(wh).as_posix())
            else:
                rels.append(path.as_posix().removeprefix("warehouse/"))
        for r in accept(settings, rels):
            _err(f"accepted warehouse/{r} as it is now")
    rep = verify_archive(settings)
    data = {
        **asdict(rep),
        "problems": rep.problems,
        "archive": str(settings.paths.archive),
        "archive_remote": settings.paths.remote_archive,
    }
    data = _gated(data)
    _emit_json(data, gated=True) if as_json else click.echo(report.render_verify(data))
    if rep.problems:
        sys.exit(EXIT_FAILED)


@cli.command()
@_home_option
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@_wait_option("Seconds to wait for another run's lock.")
@_json_option
def adopt(home: Path | None, paths: tuple[Path, ...], wait_s: float, as_json: bool) -> None:
    """Take files found in the archive without a record into the record, on purpose.

    PATH is a file in an archive day folder (daily_sessions/YYYY-MM-DD/[user/]), or a
    folder to adopt every unrecorded file under. Each must parse as a transcript. The
    file is made read-only and recorded; the next `kenang run` loads its day.
    """
    from flows.cli import report
    from flows.store import adopt as adopt_mod

    settings = _settings(home)
    res = adopt_mod.adopt(settings, paths, wait_s)
    res = _gated(res)
    _emit_json(res, gated=True) if as_json else click.echo(report.render_adopt(res))
    if res["refused"]:
        sys.exit(EXIT_FAILED)


@cli.command()
@_home_option
@click.argument("query")
@_json_option
def sql(home: Path | None, query: str, as_json: bool) -> None:
    """Run one read-only SQL query against the catalog (tables: sessions, messages, runs, ...).

    It reads the home's warehouse and nothing else. One SELECT (or WITH, DESCRIBE, SHOW,
    SUMMARIZE), a PRAGMA that reads, or an EXPLAIN of one runs; COPY, EXPORT, SET,
    INSTALL, ATTACH, CREATE and the like are refused before they run, as is any file
    outside the warehouse.
    """
    import duckdb

    from flows.cli import report
    from flows.query.sql import QueryRefused, check_read_only, connect

    settings = _settings(home)
    try:
        check_read_only(query)
    except QueryRefused as exc:
        _err(str(exc), "kenang sql")
        sys.exit(EXIT_USAGE)
    con = connect(settings)
    try:
        cur = con.execute(query)
        cols = [d[0] for d in cur.description] if cur.description else []
        rows = cur.fetchall() if cols else []
    except duckdb.PermissionException as exc:
        _err(
            f"kenang sql: refused: kenang sql reads only the warehouse ({settings.paths.warehouse}); "
            f"{str(exc).splitlines()[0]}"
        )
        sys.exit(EXIT_USAGE)
    except duckdb.Error as exc:
        _err(str(exc).splitlines()[0], "kenang sql")
        sys.exit(EXIT_USAGE)
    finally:
        con.close()
    if as_json:
        _emit_json([dict(zip(cols, r, strict=False)) for r in rows], gated=True)
    else:
        click.echo(report.render_rows(cols, rows))


class _ImportCommand(click.Command):
    """``kenang import``, whose help lists the importers' registry (read only when the help is shown)."""

    def format_help_text(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        from transforms.imports import labels

        self.help = (self.help or "").replace("{formats}", ", ".join(labels()))
        super().format_help_text(ctx, formatter)


@cli.command(name="import", cls=_ImportCommand)
@_home_option
# Not click's ``exists=True``: a path that is missing or a folder is skipped with why, as an unreadable file is, and
# the other files are imported.
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--user",
    help="Whose conversations these are (default: the home's default_user). A user the home does not have yet "
    "is made, and the report says so.",
)
@click.option(
    "--date",
    "date_s",
    type=_DAY,
    help="The file's date, for messages nothing in it dates (ShareGPT, OpenAI messages); default: its mtime.",
)
@click.option("--dry-run", is_flag=True, help="Show each conversation and what would be new; change nothing.")
@click.option("--now", "now_s", metavar="ISO", help="Pretend it is this time (for the grace period).")
@_json_option
@click.pass_context
def import_(
    ctx: click.Context,
    home: Path | None,
    files: tuple[Path, ...],
    user: str | None,
    date_s: dt.datetime | None,
    dry_run: bool,
    now_s: str | None,
    as_json: bool,
) -> None:
    """Import chat exports from other tools.

    Formats: {formats}.

    Each file is copied into active/ (the original stays where it is) and the nightly
    flow runs: the export is archived once, and each conversation becomes sessions on
    the days it has messages. Importing the same export again, or a newer one that
    overlaps it, adds only what is new. A message without a time takes the day of the
    nearest dated message in its conversation, else of the nearest dated conversation
    in the file, else the file's date (--date, else its modification time); the report
    says how many took which day, and how many lines of a file could not be read. A
    file that is no export kenang can read (or a pipe, a device, a file over
    limits.max_file_mb) is skipped, with why, and the rest is imported: exit 4.
    """
    from flows.cli import report
    from flows.stages import imports

    settings = _settings(home)
    user = imports.user_id(settings.default_user if user is None else user)  # --user "" is refused there
    date = date_s.date() if date_s else None
    now = _parse_now(now_s, settings)
    new_user = _new_user(settings, user)  # before the import: its own copy in active/<user>/ makes them known
    if dry_run:
        plan = _gated(imports.preview(settings, files, user, date, now or dt.datetime.now(settings.timezone)))
        _emit_json({**plan, "new_user": new_user}, gated=True) if as_json else click.echo(
            report.render_import_preview(plan)
        )
        if new_user:
            _err(new_user["note"], "kenang import")
        _say_skipped(plan["skipped"])
        if plan["skipped"]:
            sys.exit(EXIT_PARTIAL if plan["files"] else EXIT_USAGE)
        return
    _tombstones_honoured(settings)
    _lock_free(settings, 0)
    placed, skipped = imports.stage(settings, files, user, date, now or dt.datetime.now(settings.timezone))
    for p in placed:
        _err(f"copied {p['file']} ({p['format']}) to {p['active']}")
        for line in report.import_notes(p):
            _err(f"  {p['file']}: {line}")
    _say_skipped(skipped)
    if not placed:
        _err("kenang: nothing imported: no file given is an export kenang can read (each is listed above)")
        sys.exit(EXIT_USAGE)
    if new_user:
        _err(new_user["note"], "kenang import")
    _prepare_prefect(ctx.obj["verbose"])
    from flows.pipeline import nightly

    t0 = time.perf_counter()
    result = _with_progress(nightly, now=now, home=str(settings.paths.home))
    said = {"import_files": placed, "new_user": new_user, **({"import_skipped": skipped} if skipped else {})}
    _finish({**result, **said}, as_json, time.perf_counter() - t0)
    if skipped:
        _err(f"kenang: the import was partial: {len(skipped)} file(s) skipped (listed above), the others imported")
        sys.exit(EXIT_PARTIAL)


def _new_user(settings: Settings, user: str) -> dict | None:
    """When ``kenang import --user`` names a user this home does not have yet, and it has users with data: the
    user, the home's users and one line that says so. An import may start a user; a misspelt one should not
    pass unseen, so it is said, never refused. None otherwise (a fresh home's first import included)."""
    from flows.store import users

    if not users.users_holding_data(settings) or users.knows(settings, user):
        return None
    known = users.home_users(settings)
    note = f"{user} is a new user in this home (its users: {', '.join(known)}); check the spelling"
    return {"user": user, "home_users": known, "note": note}


def _say_skipped(skipped: list[dict]) -> None:
    """One line on stderr for each file ``kenang import`` skipped: which, and why."""
    for s in skipped:
        _err(f"skipped {s['file']}: {s['reason']}")


@cli.command()
@_home_option
@click.argument("query", required=False)
@click.option("--user", help=f"Whose memory to search {_SERVED}")
@click.option("--top-k", type=click.IntRange(1, 100), default=None, help="Results to show (default: recall.top_k, 5).")
@click.option("--start", type=_DAY, help="Only days from this one, YYYY-MM-DD.")
@click.option("--end", type=_DAY, help="Only days up to this one, YYYY-MM-DD.")
@click.option(
    "--mode",
    type=click.Choice(["hybrid", "keyword", "vector"]),
    default="hybrid",
    show_default=True,
    help="Fused search, or one arm alone.",
)
@click.option(
    "--queries",
    "queries_file",
    type=click.File("r", encoding="utf-8"),
    help="Read one query per line (- for stdin); print one JSON line per query.",
)
@click.option(
    "--now",
    "now_s",
    type=_DAY,
    help="The day 'yesterday', 'bulan lalu' or 'two weeks ago' count from (default: the newest day indexed).",
)
@click.option("--explain", is_flag=True, help="Say what time the query names and whether it asks when, then search.")
@_json_option
def recall(
    home: Path | None,
    query: str | None,
    user: str | None,
    top_k: int | None,
    start: dt.datetime | None,
    end: dt.datetime | None,
    mode: str,
    queries_file,
    now_s: dt.datetime | None,
    explain: bool,
    as_json: bool,
) -> None:
    """Search your archive by meaning and keywords, with related days pulled in.

    A time in the query ("last Saturday", "bulan lalu", "on May 2nd") favours its days;
    a question that asks when ranks the day a thing happened first.

    Example: kenang recall "apa kesepakatan sama Kak Rina soal sahur?"
    """
    from flows.cli import report
    from flows.query.recall import Recaller
    from transforms.recall import match_of

    if (query is None) == (queries_file is None):
        raise click.UsageError("give a QUERY or --queries FILE (not both)")
    if query is not None and not query.strip():
        raise click.BadParameter("it is empty: give the words to look for", param_hint="QUERY")
    if start and end and end < start:
        raise click.BadParameter(f"--end {end:%Y-%m-%d} is before --start {start:%Y-%m-%d}")
    settings = _settings(home)
    r = Recaller(
        settings, _user_for(settings, user), start=start.date() if start else None, end=end.date() if end else None
    )
    if r.stale:
        _err(
            f"kenang: {r.stale} chunks were embedded by another embedder and are searched by keyword only; "
            "run `kenang backfill --reindex --start ... --end ...`"
        )
    from transforms import timeq

    now = now_s.date() if now_s else None
    if queries_file is not None:
        for line in queries_file:
            q = line.strip()
            if q:
                hits = r.search(q, top_k=top_k, mode=mode, now=now)
                extra = {"understood": timeq.as_dict(r.understand(q, now))} if explain else {}
                click.echo(
                    json.dumps(
                        {
                            "query": q,
                            **extra,
                            "match": match_of(hits, r.params),
                            "results": [h.as_dict(q) for h in hits],
                        },
                        ensure_ascii=False,
                        default=str,
                    )
                )
        return
    assert query is not None  # the usage check above: exactly one of QUERY and --queries is given
    if explain and not as_json:
        _err(timeq.explain(r.understand(query, now)))
    hits = r.search(query, top_k=top_k, mode=mode, now=now)
    if r.unavailable:
        _err(f"kenang: the embedding server could not be used ({r.unavailable}); these results are by keyword only")
    if as_json:
        extra = {"understood": timeq.as_dict(r.understand(query, now))} if explain else {}
        _emit_json(
            {**extra, "match": match_of(hits, r.params), "results": [h.as_dict(query) for h in hits]}, gated=True
        )
    else:
        click.echo(
            report.render_recall(
                query,
                r.user,
                hits,
                match=match_of(hits, r.params),
                color=sys.stdout.isatty(),
                span=(start.date() if start else None, end.date() if end else None),
                empty=r.size == 0,
            )
        )


@cli.command()
@_home_option
@click.argument("intent", required=False)
@click.option("--user", help=f"Whose days {_SERVED}")
@click.option("--start", type=_DAY, help="First day, YYYY-MM-DD.")
@click.option("--end", type=_DAY, help="Last day, YYYY-MM-DD (inclusive).")
@click.option(
    "--by", type=click.Choice(["day", "week", "month"]), default="month", show_default=True, help="Period to group by."
)
@click.option("--window", type=click.IntRange(1, 366), help="importance_trend: rolling window in days.")
@_json_option
def analyze(
    home: Path | None,
    intent: str | None,
    user: str | None,
    start: dt.datetime | None,
    end: dt.datetime | None,
    by: str,
    window: int | None,
    as_json: bool,
) -> None:
    """Trends over your summaries and messages: exact SQL, no LLM.

    INTENT is one of: mood_timeseries, productivity, technology_counts,
    people_mentions, project_activity, activity_heatmap, importance_trend.
    Without INTENT, lists them.
    """
    from flows.cli import report
    from flows.query.analyze import INTENTS, Analytics

    if intent is None or intent not in INTENTS:
        if intent is not None:
            _err(f"kenang analyze: unknown intent {intent!r}")
        click.echo(
            report.table(["intent", "what it shows"], [(i.name, i.doc) for i in INTENTS.values()]),
            err=intent is not None,
        )
        if intent is not None:
            sys.exit(EXIT_USAGE)
        return
    settings = _settings(home)
    res = Analytics(settings, _user_for(settings, user)).run(
        intent, start=start.date() if start else None, end=end.date() if end else None, by=by, window=window
    )
    _emit_json(res.as_dict(), gated=True) if as_json else click.echo(report.render_analysis(res))


# --- core memory and forgetting ---------------------------------------------------------


def _user_for(settings: Settings, user: str | None) -> str | None:
    """The user a command serves: ``--user`` when the home knows them; without it, ``users.served_user``'s.

    A user the home does not know is one line on stderr naming its users, and exit 2 (never "no memories");
    a note says which user is served when it is not the default user. None: no user holds anything yet.
    """
    from flows.store import users

    command = click.get_current_context().command_path
    try:
        if user is not None:  # an empty --user "" (an unset variable in a script) is refused, never the default
            return users.check_user(settings, user)
        who, note = users.served_user(settings)
    except users.UnknownUser as exc:
        _err(str(exc), command)
        sys.exit(EXIT_USAGE)
    if note:
        _err(note, command)
    return who


def _refused(fn, *args, **kwargs):
    """Run a core memory write; a refusal is one line on stderr and exit 2, and nothing changed."""
    from transforms.core_memory import Refused

    try:
        return fn(*args, **kwargs)
    except Refused as exc:
        _err(f"kenang: refused: {exc} (nothing was changed)")
        sys.exit(EXIT_USAGE)


def _write_memory(home: Path | None, user: str | None, target: str, action: str, done: str, **entry) -> None:
    """One CLI core memory write (add, replace, remove) under the rules; says where it went and the usage."""
    from flows.store import core_memory

    settings = _settings(home)
    who = _user_for(settings, user) or settings.default_user  # a misspelt --user never starts a new user
    state = _refused(core_memory.write, settings, who, target, action, source="cli", **entry)
    click.echo(f"{done} {state.path.name}: {state.usage.header(state.path.stem)}")
    if state.snapshot_error:
        _err(f"kenang: warning: {state.snapshot_error}")


_TARGET = click.option(
    "--to",
    "target",
    type=click.Choice(["memory", "user"]),
    default="memory",
    show_default=True,
    help="MEMORY.md (the agent's notes) or USER.md (the person's profile).",
)


@cli.command()
@_home_option
@click.argument("text")
@click.option("--user", help=f"Whose memory {_SERVED}")
@_TARGET
def remember(home: Path | None, text: str, user: str | None, target: str) -> None:
    """Add a note to core memory (MEMORY.md, or USER.md with --to user), under the memory rules."""
    _write_memory(home, user, target, "add", "remembered in", text=text)


@cli.group()
def models() -> None:
    """The configured summarizer and embedder: try them before a night depends on them."""


@models.command("test")
@_home_option
@click.option("--only", type=click.Choice(["summarizer", "embedder"]), help="Test one of the two.")
@_json_option
def models_test(home: Path | None, only: str | None, as_json: bool) -> None:
    """Run the summarizer on five sample days (Indonesian and English) and the embedder on one query.

    Prints latency, tokens/s, the replies valid on the first try, the summaries kept (grounded in their day),
    why the others fell back, the facts its notes mention against the extractive path's, and a verdict: whether
    the model is good enough to write notes, and what to use if not.
    """
    from flows.models import probe
    from transforms.errors import ModelUnavailable

    settings = _settings(home)
    data: dict = {}
    for name, run in (("summarizer", probe.test_summarizer), ("embedder", probe.test_embedder)):
        if only in (None, name):
            try:
                data[name] = run(settings)
            except ModelUnavailable as exc:
                data[name] = {"error": f"unavailable: {exc}"}
    if as_json:
        _emit_json(data)
    else:
        from flows.cli import report

        click.echo(report.render_models_test(_gated(data)))
    if any("error" in v for v in data.values()):
        sys.exit(EXIT_FAILED)


@cli.group(invoke_without_command=True)
@_home_option
@_json_option
@click.pass_context
def sources(ctx: click.Context, home: Path | None, as_json: bool) -> None:
    """List the sources (agents' own logs kenang collects from): files, bytes taken, days waiting, errors."""
    if ctx.invoked_subcommand is not None:
        return
    from flows.cli import report
    from flows.stages import collect

    data = _gated({"sources": collect.listing(_settings(home))})  # what an older kenang recorded, too
    _emit_json(data, gated=True) if as_json else click.echo(report.render_sources(data))


@sources.command("add")
@_home_option
@click.argument("name")
@click.option(
    "--kind",
    required=True,
    type=click.Choice(["claude_code", "codex", "aider", "open_webui_db", "folder"]),
    help="What the source is.",
)
@click.option("--path", "path_s", required=True, help="A file, a folder or a glob; ~ is your home.")
@click.option("--user", help="Whose transcripts these are (default: the home's default_user).")
@click.option(
    "--mode",
    type=click.Choice(["copy", "move"]),
    default="copy",
    show_default=True,
    help="move: folder sources only; the original is removed once its copy is safe.",
)
@click.option("--webui-user", help="open_webui_db: only this Open WebUI user's chats (email or id).")
def sources_add(
    home: Path | None, name: str, kind: str, path_s: str, user: str | None, mode: str, webui_user: str | None
) -> None:
    """Add a source to kenang.yaml (its comments are kept); the next nightly run collects from it."""
    from flows.config import edit_config
    from flows.stages import collect
    from schemas.config import Source

    entry = {"name": name, "kind": kind, "path": path_s}
    entry |= {
        k: v
        for k, v in (("user", user), ("mode", mode if mode != "copy" else None), ("webui_user", webui_user))
        if v is not None
    }

    def change(data) -> None:
        if data.get("sources") is None:
            data["sources"] = []
        data["sources"].append(entry)

    # as `kenang import --user` does: a user this home does not have yet is said (a source may start one)
    new_user = _new_user(_settings(home), user) if user is not None else None
    settings = edit_config(_home(home), change)
    found = collect.matches(Source.model_validate(entry))
    click.echo(f"added source {name} ({kind}) to {settings.paths.config_file}")
    click.echo(f"  {_gated(path_s)} matches {len(found)} file(s) now" + ("" if found else ": check the path"))
    click.echo("  the next nightly run (`kenang run`) copies what is new from it; `kenang sources` shows what it took")
    if new_user:
        _err(new_user["note"], "kenang sources add")


@cli.group()
def memory() -> None:
    """Core memory: USER.md and MEMORY.md, and the candidates the nightly run proposes."""


@memory.command("show")
@_home_option
@click.option("--user", help=f"Whose memory {_SERVED}")
@_json_option
def memory_show(home: Path | None, user: str | None, as_json: bool) -> None:
    """Show both files' entries and usage, and anything wrong with a hand edit."""
    from flows.store import core_memory

    settings = _settings(home)
    who = _user_for(settings, user) or settings.default_user
    states = [core_memory.read(settings, who, t) for t in ("memory", "user")]
    if as_json:
        _emit_json({"user": who, "files": [s.as_dict() for s in states]})
        return
    for s in states:
        click.echo(s.usage.header(s.path.stem) + f"  {_gated(str(s.path))}")
        if s.error is not None:  # never printed: a link, a folder, an unreadable or malformed file
            click.echo(f"  error: {_gated(s.error)}")
            click.echo()
            continue
        for i, e in enumerate(s.as_dict()["entries"], 1):  # redacted; an entry that reads as an order is withheld
            click.echo(f"  [{i}] " + e.replace("\n", "\n      "))
        for p in s.problems:
            click.echo(f"  problem: {_gated(p)}")
        click.echo()


@memory.command("replace")
@_home_option
@click.argument("old")
@click.argument("new")
@click.option("--user", help=f"Whose memory {_SERVED}")
@_TARGET
def memory_replace(home: Path | None, old: str, new: str, user: str | None, target: str) -> None:
    """Replace the one entry holding OLD (a substring) with NEW."""
    _write_memory(home, user, target, "replace", "replaced in", text=new, old=old)


@memory.command("remove")
@_home_option
@click.argument("old")
@click.option("--user", help=f"Whose memory {_SERVED}")
@_TARGET
def memory_remove(home: Path | None, old: str, user: str | None, target: str) -> None:
    """Remove the one entry holding OLD (a substring)."""
    _write_memory(home, user, target, "remove", "removed from", old=old)


@memory.command("candidates")
@_home_option
@click.option("--user", help="Only this user's (a user this home knows).")
@click.option("--all", "show_all", is_flag=True, help="Also accepted and rejected ones.")
@_json_option
def memory_candidates(home: Path | None, user: str | None, show_all: bool, as_json: bool) -> None:
    """The notes the nightly run proposes, with where they were said."""
    from flows.cli import report
    from flows.stages import candidates

    settings = _settings(home)
    user = _user_for(settings, user) if user is not None else None
    rows = [
        r
        for r in candidates.read_all(settings)
        if (show_all or r["status"] == "pending") and (user is None or r["user_id"] == user)
    ]
    if as_json:
        _emit_json(rows)
        return
    click.echo(
        report.table(
            ["id", "user", "kind", "to", "status", "days", "note"],
            [
                (
                    r["candidate_id"][:10],
                    r["user_id"],
                    r["kind"],
                    r["target"],
                    r["status"],
                    ", ".join(d.isoformat() for d in (r["dates"] or [])[:3]),
                    r["text"],
                )
                for r in rows
            ],
        )
    )


@memory.command("accept")
@_home_option
@click.argument("candidate_id")
@click.option("--to", "target", type=click.Choice(["memory", "user"]), help="Override the file it goes to.")
def memory_accept(home: Path | None, candidate_id: str, target: str | None) -> None:
    """Add a candidate to core memory (under every rule)."""
    from flows.stages import candidates

    row = _refused(candidates.decide, _settings(home), candidate_id, True, target=target)
    click.echo(f"accepted {row['candidate_id']}: {row['text']}")


@memory.command("reject")
@_home_option
@click.argument("candidate_id")
def memory_reject(home: Path | None, candidate_id: str) -> None:
    """Reject a candidate; it is never proposed again."""
    from flows.stages import candidates

    row = _refused(candidates.decide, _settings(home), candidate_id, False)
    click.echo(f"rejected {row['candidate_id']}")


@cli.command(
    context_settings={"ignore_unknown_options": True, "allow_extra_args": True, "help_option_names": []},
    add_help_option=False,
)
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def serve(args: tuple[str, ...]) -> None:
    """Serve the nightly and backfill deployments from this process (no work pool or worker).

    The same as `python -m flows.serve`; `kenang serve --help` lists its options."""
    from flows import serve as serving

    serving.main(list(args), prog="kenang serve")


@cli.command(
    context_settings={"ignore_unknown_options": True, "allow_extra_args": True, "help_option_names": []},
    add_help_option=False,
)
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def deploy(args: tuple[str, ...]) -> None:
    """Register the nightly and backfill deployments with a work pool, with kenang's parameter checks.

    `prefect deploy --all`, then a backfill range whose end is before its start refused when it is submitted;
    `kenang deploy --help` lists its options."""
    from flows import serve as serving

    serving.deploy_main(list(args), prog="kenang deploy")


@cli.command(name="open-items")
@_home_option
@click.option("--user", help=f"Whose items {_SERVED}")
@click.option("--all", "show_all", is_flag=True, help="Also the items a later day closed, and those that expired.")
@click.option("--since", type=_DAY, help="Only items raised from this day, YYYY-MM-DD.")
@click.option("--now", "now_s", type=_DAY, help="The day to count from, YYYY-MM-DD (default: today).")
@_json_option
def open_items(
    home: Path | None,
    user: str | None,
    show_all: bool,
    since: dt.datetime | None,
    now_s: dt.datetime | None,
    as_json: bool,
) -> None:
    """What is still open: items the daily notes raised that no later day has closed (for up to 30 days)."""
    from flows.cli import report
    from flows.query.service import MemoryService

    settings = _settings(home)
    who = _user_for(settings, user) or settings.default_user
    rows = MemoryService(settings).open_items(
        who,
        now=now_s.date() if now_s else None,
        include_closed=show_all,
        since=since.date() if since else None,
    )
    if as_json:
        _emit_json(rows)
        return
    if not rows:
        click.echo("nothing is open" if not show_all else "no open items were raised")
        return
    headers = ["raised on", "days", "status", "item"] if show_all else ["raised on", "days", "item"]
    click.echo(
        report.table(
            headers,
            [(r["raised_on"], r["days_open"], *((r["status"],) if show_all else ()), r["text"]) for r in rows],
            max_width=100,
        )
    )


@cli.command()
@_home_option
@click.option("--user", required=True, help="Whose memory to forget from (a user this home knows).")
@click.option(
    "--text", help="A phrase to forget wherever it was said (- reads it from stdin, kept out of shell history)."
)
@click.option("--session", "session_id", help="A session id, as `kenang sql` shows it in sessions.session_id.")
@click.option("--day", type=_DAY, help="A whole day.")
@click.option("--before", type=_DAY, help="Every day before this one.")
@click.option("--purge", is_flag=True, help="Delete the archived originals too (logged in purge_log; never undone).")
@click.option("--dry-run", is_flag=True, help="List exactly what would go; change nothing.")
@click.option("--yes", is_flag=True, help="Do not ask.")
@_wait_option("Seconds to wait for a running night.")
@_json_option
def forget(
    home: Path | None,
    user: str,
    text: str | None,
    session_id: str | None,
    day: dt.datetime | None,
    before: dt.datetime | None,
    purge: bool,
    dry_run: bool,
    yes: bool,
    wait_s: float,
    as_json: bool,
) -> None:
    """Truly forget a phrase, a session, a day or everything before a date: from the tables, summaries,
    recall index, MEMORY_INDEX, core memory, candidates and snapshots; with --purge, from the archive and quarantine too.

    A tombstone (a keyed hash, never the text) keeps every later backfill, reindex or
    re-import from bringing it back. Without --purge the archived originals stay,
    byte-exact and read-only.
    """
    from flows.stages import forget as forget_mod

    settings = _settings(home)
    who = _user_for(settings, user) or settings.default_user  # --user is required: never None here
    if text == "-":
        text = sys.stdin.read().strip()
    plan = forget_mod.make_plan(
        settings,
        who,
        text=text,
        session=session_id,
        day=day.date() if day else None,
        before=before.date() if before else None,
        purge=purge,
    )
    summary = plan.as_dict()
    if dry_run:
        _emit_json({"dry_run": True, **summary}) if as_json else click.echo(_forget_plan_text(summary, dry=True))
        return
    if not yes and not click.confirm(_forget_plan_text(summary, dry=False) + "\nForget it?", default=False, err=True):
        _err("nothing was changed")
        sys.exit(EXIT_FAILED)
    result = forget_mod.apply(settings, plan, wait_seconds=wait_s)
    _emit_json(result) if as_json else click.echo(
        f"forgotten: {len(plan.days)} day(s) re-derived, {result['archive_files_purged']} archived file(s) purged, "
        f"{_entries(result['memory_entries'], 'memory')} and {result['candidates']} candidate(s) removed"
        + "".join(
            f", {n} quarantined file(s) {how}"
            for how in ("purged", "scrubbed")
            if (n := result.get(f"quarantine_files_{how}"))
        )
        + f" (run {result['run_id']})"
    )
    from flows.store import remote

    if owed := remote.owed(settings):
        _err(
            f"note: {len(owed)} file(s) are still to be deleted from {settings.paths.remote_archive} (the bucket could "
            "not take the delete now); every run retries, and `kenang verify` lists them until they are gone"
        )


def _entries(n: int, what: str) -> str:
    return f"{n} {what} entr{'y' if n == 1 else 'ies'}"


def _forget_plan_text(p: dict, dry: bool) -> str:
    head = "would forget" if dry else "this forgets"
    lines = [
        f"{head}, for {p['user']} ({p['kind']}):",
        f"  {p['messages']} message(s) in {p['sessions']} session(s) on {len(p['days'])} day(s): "
        + (", ".join(p["days"][:10]) + (" ..." if len(p["days"]) > 10 else "") if p["days"] else "none"),
        f"  {_entries(p['memory_entries'], 'core memory')}, {p['candidates']} candidate(s)",
    ]
    if p["purge"]:
        lines.append(f"  {len(p['archive_files'])} archived original(s), deleted for good:")
        lines += [f"    {x}" for x in p["archive_files"]]
    else:
        lines.append("  the archived originals stay, byte-exact (add --purge to delete them too)")
    if p.get("quarantine_files"):
        lines.append(
            f"  {len(p['quarantine_files'])} quarantined file(s), "
            + (
                "deleted for good with their reason files:"
                if p["purge"]
                else "kept as they are, the phrase scrubbed from their reasons (--purge deletes them):"
            )
        )
        lines += [f"    {x}" for x in p["quarantine_files"]]
    return "\n".join(lines)


# --- mcp ----------------------------------------------------------------------------


@cli.group(invoke_without_command=True)
@_home_option
@click.option(
    "--user",
    help="stdio: whose memory to serve, a user this home knows (default: the home's "
    "default_user; when that holds nothing, its only other user).",
)
@click.option(
    "--http",
    "use_http",
    is_flag=True,
    help="Serve streamable HTTP (for agents on other machines) "
    "instead of stdio; clients send Authorization: Bearer <token>.",
)
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="HTTP: the address to bind. Anything but 127.0.0.1 exposes your memory to the network.",
)
@click.option("--port", type=click.IntRange(1, 65535), default=8765, show_default=True, help="HTTP: the port.")
@click.pass_context
def mcp(ctx: click.Context, home: Path | None, user: str | None, use_http: bool, host: str, port: int) -> None:
    """Serve your memory to agents over MCP: recall, trends, a day, a snapshot, core memory and session_write.

    stdio (the default) serves one user to a desktop client that starts kenang itself; a
    user this home does not know is refused before serving. --http serves every user
    that holds a token (`kenang mcp token add --user U`), at http://HOST:PORT/mcp, to
    requests whose Host and Origin are loopback or listed in mcp.allowed_hosts and
    mcp.allowed_origins.
    """
    if ctx.invoked_subcommand is not None:
        return
    import logging

    from flows.query import mcp as mcp_server
    from flows.store import ann

    ann.serve_on_one_blas_thread()  # before the server's threads start (flows.store.ann)

    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="%(message)s")
    logging.getLogger("kenang.mcp").setLevel(logging.INFO)
    settings = _settings(home)
    if use_http:
        if user is not None:
            raise click.UsageError("--user is for stdio; over HTTP each token names its user")
        if not settings.mcp.tokens:
            _err(
                "kenang mcp: no tokens yet, so every request will get 401; add one with `kenang mcp token add --user U`"
            )
        if host not in ("127.0.0.1", "localhost", "::1"):
            _err(
                f"kenang mcp: WARNING: listening on {host}: anyone who reaches this port and holds a token "
                "reads that user's memory. Put it behind TLS (a reverse proxy) before it leaves the homelab."
            )
            if not settings.mcp.allowed_hosts:
                _err(
                    "kenang mcp: a request whose Host is a name (not the address it reached) gets 421; list the "
                    "names clients use (e.g. nas.lan) under mcp.allowed_hosts"
                )
        server = mcp_server.build_server(settings)
        _err(f"kenang mcp: serving {settings.paths.home} at http://{host}:{port}/mcp")
        server.run(transport="http", host=host, port=port, show_banner=False, **mcp_server.http_guard(settings))
        return
    try:
        who, note = mcp_server.stdio_user(settings, user)
    except mcp_server.UnknownUser as exc:
        _err(str(exc), "kenang mcp")
        sys.exit(EXIT_USAGE)
    if note:
        _err(note, "kenang mcp")
    mcp_server.serve_stdio(mcp_server.build_server(settings, user=who), settings)


@mcp.group()
def token() -> None:
    """Bearer tokens for kenang mcp --http: kenang.yaml keeps only their sha256."""


@token.command("add")
@_home_option
@click.option("--user", required=True, help="Whose memory the token opens (a user this home knows).")
def token_add(home: Path | None, user: str) -> None:
    """Make a new token for USER, print it once, and store its sha256 in kenang.yaml."""
    import secrets as _secrets

    from flows.config import edit_config
    from flows.query.mcp import UnknownUser, check_user, token_sha256

    settings = _settings(home)
    try:
        user = check_user(settings, user)
    except UnknownUser as exc:
        _err(str(exc), "kenang mcp token add")
        sys.exit(EXIT_USAGE)
    new = "kenang_" + _secrets.token_urlsafe(32)

    def add(data) -> None:
        section = data.setdefault("mcp", {})
        if section.get("tokens") is None:
            section["tokens"] = {}
        section["tokens"][token_sha256(new)] = user

    edit_config(settings.paths.home, add)
    click.echo(new)
    _err(
        f"a token for {user} (stored as its sha256 in {settings.paths.config_file}); it is shown only now. "
        f"Clients send: Authorization: Bearer <token>"
    )


@token.command("list")
@_home_option
def token_list(home: Path | None) -> None:
    """The tokens kenang.yaml knows: the start of each sha256, and its user."""
    settings = _settings(home)
    from flows.cli import report

    click.echo(
        report.table(["sha256", "user"], [(sha[:12] + "...", u) for sha, u in sorted(settings.mcp.tokens.items())])
    )


@token.command("remove")
@_home_option
@click.argument("sha256_prefix")
def token_remove(home: Path | None, sha256_prefix: str) -> None:
    """Revoke the token whose sha256 starts with SHA256_PREFIX (see `kenang mcp token list`)."""
    from flows.config import edit_config

    settings = _settings(home)
    matches = [sha for sha in settings.mcp.tokens if sha.startswith(sha256_prefix.lower())]
    if not matches:
        raise click.BadParameter(
            f"no token's sha256 starts with {sha256_prefix!r}; `kenang mcp token list` shows them",
            param_hint="SHA256_PREFIX",
        )
    if len(matches) > 1:
        raise click.BadParameter(
            f"{len(matches)} tokens start with {sha256_prefix!r}; give more of the sha256", param_hint="SHA256_PREFIX"
        )

    def drop(data) -> None:
        del data["mcp"]["tokens"][matches[0]]

    edit_config(settings.paths.home, drop)
    _err(f"revoked the token {matches[0][:12]}... of {settings.mcp.tokens[matches[0]]}")


# --- demo ---------------------------------------------------------------------------


@cli.command()
@click.option(
    "--home",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="The demo home (default: ~/.local/share/kenang-demo; never $KENANG_HOME).",
)
@_json_option
@click.pass_context
def demo(ctx: click.Context, home: Path | None, as_json: bool) -> None:
    """Generate three weeks of sample chats, run the nightly flow on them, and recall.

    The demo home defaults to ~/.local/share/kenang-demo (never your real home). It is
    wiped and rebuilt on each call, and only if it is a demo home.
    """
    from flows.cli import demo as demo_mod

    target = (home or Path("~/.local/share/kenang-demo")).expanduser().resolve()
    plan = demo_mod.prepare(target)
    _err(f"demo home: {target}  ({plan.written} sample files written to {plan.settings.paths.active})")
    _prepare_prefect(ctx.obj["verbose"])
    from flows.pipeline import nightly

    t0 = time.perf_counter()
    _err("night 1: archiving and loading three weeks of history (extractive summaries)...")
    history = _with_progress(nightly, now=plan.history_now, home=str(target))
    history = {**history, "cli_seconds": round(time.perf_counter() - t0, 3)}  # each night says its own time
    settings = demo_mod.use_model(plan.settings)
    _err("night 2: the newest day, summarized by the bundled model (about a minute)...")
    t1 = time.perf_counter()
    result = _with_progress(nightly, now=plan.now, home=str(target))
    seconds = time.perf_counter() - t1
    result = {**result, "cli_seconds": round(seconds, 3)}
    found = demo_mod.recalls(settings)
    if as_json:
        _emit_json(
            {
                "home": str(target),
                "nights": [history, result],
                "recalls": [{"query": q, "results": [h.as_dict(q) for h in hits]} for q, hits in found],
            }
        )
        return
    click.echo(demo_mod.render(settings, history, result, seconds, found))


@cli.command()
@_home_option
@_json_option
def doctor(home: Path | None, as_json: bool) -> None:
    """Check this host for a night: home, archive, models, Prefect, sources, disk.

    One line per check: ok, warn or FAIL, what was checked, and what to do when it
    fails. Exits 1 if any check fails. Changes nothing.
    """
    from dataclasses import asdict

    from flows.cli import doctor as checks

    found = checks.run_checks(_home(home), os.environ.get("PREFECT_API_URL") or _prefect_server())
    failed = any(c.status == "FAIL" for c in found)
    if as_json:
        _emit_json({"ok": not failed, "checks": [asdict(c) for c in found]})
    else:
        click.echo("\n".join(c.line() for c in found))
    if failed:
        sys.exit(EXIT_FAILED)


cli.add_command(config_cmd.group(_home_option, _json_option, _home))


def main(argv: list[str] | None = None) -> None:
    """The `kenang` process: a prompt stop on SIGTERM (``flows.cli.stop``), then the command."""
    from flows.cli import stop

    stop.install()
    sys.excepthook = _gated_excepthook
    cli.main(args=argv, prog_name="kenang")


if __name__ == "__main__":  # pragma: no cover
    main()
