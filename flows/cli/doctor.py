"""``kenang doctor``: is this host ready for tonight's run? One line per check, changing nothing.

``flows.cli.main`` holds the command; the checks are here.

Each check says ``ok``, ``warn`` or ``FAIL``, what it looked at, and, when it is not
ok, what to do. The checks, in the order a night needs them:

- **config**: kenang.yaml reads (else nothing else is checked: the other checks need it);
- **home**: the home and its folders (active, warehouse, quarantine) take writes;
- **archive**: mounted (its marker names this home, ``flows.store.mount``) and writable;
- **summarizer**: the configured model loads (extractive: nothing to load; llama: the
  GGUF is there and loads; openai: the server answers and lists the model);
- **embedder**: the recall index's model is present and embeds a query (none: keyword only);
- **prefect**: the Prefect API this process would use answers (none configured: each
  run starts a temporary one, which works, only slower);
- **schedule**: when that server holds the nightly deployment, it is not paused and a
  run is scheduled (no deployment is fine: the nights come from ``kenang run``);
- **sources**: each source's folder or file is there and readable;
- **disk**: free space on the home's and the archive's filesystems (a warning below
  ``WARN_FREE_MB``).

A ``warn`` never fails: the exit status is 1 when a check says ``FAIL``, else 0. What
is checked is created and removed again (an empty probe file), never left behind.
Nothing here reads a transcript.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import shutil
import ssl
import tempfile
from dataclasses import dataclass
from pathlib import Path

from flows.config import Settings, load_settings
from transforms.errors import ConfigError, KenangError

#: Free space below this on the home's or the archive's filesystem is a warning.
WARN_FREE_MB = 1024
#: Seconds a server (model, Prefect) has to answer a check.
TIMEOUT_S = 5.0
#: A scheduled run this far past its time has nothing running it (``kenang serve`` or a worker is down).
LATE = dt.timedelta(minutes=15)


@dataclass(frozen=True)
class Check:
    name: str
    status: str  # ok | warn | FAIL
    what: str  # what was checked, and what was found
    todo: str = ""  # what to do when it is not ok

    def line(self) -> str:
        tail = f"; {self.todo}" if self.todo and self.status != "ok" else ""
        return f"{self.status:<4}  {self.name:<12}  {self.what}{tail}"


def _ok(name: str, what: str) -> Check:
    return Check(name, "ok", what)


def _fail(name: str, what: str, todo: str = "") -> Check:
    return Check(name, "FAIL", what, todo)


def _warn(name: str, what: str, todo: str = "") -> Check:
    return Check(name, "warn", what, todo)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


# --- the checks ---------------------------------------------------------------------------------


def check_home(settings: Settings) -> Check:
    p = settings.paths
    for folder in (p.home, p.active, p.warehouse, p.quarantine):
        if not folder.is_dir():
            return _fail("home", f"{folder} is missing", f"run `kenang init --home {p.home}` (it creates the folders)")
        try:
            with tempfile.TemporaryFile(dir=folder, prefix=".kenang-tmp-doctor-"):
                pass
        except OSError as exc:
            return _fail(
                "home",
                f"{folder} refuses writes ({exc.strerror or type(exc).__name__})",
                "give the user that runs kenang write access to it, or set KENANG_HOME / --home to a folder it owns",
            )
    return _ok("home", f"{p.home} and its active, warehouse and quarantine folders take writes")


_ARCHIVE_TODO = {
    "not_mounted": "mount it; for a new, empty archive run `kenang init` once",
    "foreign": "if this home was restored or moved, run `kenang init --claim-archive`",
    "read_only": "remount it read-write, or give the user that runs kenang write access to it",
    "full": "free space on it, or lower limits.archive_min_free_mb",
    "unreachable": "check the network, the credentials in the environment and the bucket's policy",
}
#: Where a run's reason goes on to say what the run did (nothing archived ...): not a doctor's business.
_RUN_PART = re.compile(r"[:;.] (?:nothing was archived|Nothing was archived).*$")


def check_archive(settings: Settings) -> Check:
    from flows.store import mount

    state = mount.check(settings, 0, probe=True)
    where = settings.paths.remote_archive or str(settings.paths.archive)
    if state.writable:
        return _ok("archive", f"{where} is mounted (its marker names this home) and takes writes")
    found = _RUN_PART.sub("", state.reason or state.state)
    return _fail("archive", f"{state.state.replace('_', ' ')}: {found}", _ARCHIVE_TODO.get(state.state, ""))


def check_summarizer(settings: Settings) -> Check:
    cfg = settings.summarizer
    if cfg.backend == "extractive":
        return _ok("summarizer", "extractive: no model to load")
    if cfg.backend == "openai":
        return _server_answers("summarizer", cfg)
    from flows.models import llm

    try:
        path = Path(cfg.model_path).expanduser() if cfg.model_path else llm.bundled_model_path()
        if not path.is_file():
            return _fail(
                "summarizer",
                f"summarizer.model_path: {path} is not a file",
                "point summarizer.model_path at a GGUF file, or set summarizer.backend: extractive",
            )
        # The smallest context the model takes: loading is what is checked, not a night's memory.
        llm.load_model(llm.ModelConfig(path, 512, cfg.n_threads, cfg.chat_format, cfg.seed))
    except ConfigError as exc:
        return _fail("summarizer", _first_line(exc), "or set summarizer.backend: extractive")
    return _ok("summarizer", f"llama: {path} loads")


def _server_answers(what: str, cfg) -> Check:
    """An OpenAI-compatible server answers ``GET /models`` and lists the configured model."""
    from flows.models.openai_api import Client, server_of

    try:
        server = server_of(cfg, what, query=True)
    except KenangError as exc:
        return _fail(what, _first_line(exc), f"set {what}.base_url and {what}.model in kenang.yaml")
    client = Client(server)
    try:
        listed = client.listed_models(TIMEOUT_S)
    finally:
        client.close()
    if listed is None:
        return _fail(
            what,
            f"openai: {server.shown}/models does not answer as an OpenAI-compatible API",
            f"start the server, or fix {what}.base_url",
        )
    if listed and server.model not in listed:
        return _warn(
            what,
            f"openai: {server.shown} answers but does not list {server.model} (it lists {', '.join(listed[:5])})",
            f"check {what}.model",
        )
    return _ok(what, f"openai: {server.shown} answers and serves {server.model}")


def check_embedder(settings: Settings) -> Check:
    cfg = settings.embedder
    if cfg.backend == "none":
        return _ok("embedder", "none: recall is keyword only")
    if cfg.backend == "openai":
        return _server_answers("embedder", cfg)
    from flows.models import embed

    try:
        e = embed.make_embedder(settings, for_queries=True)
        if e is not None:
            e.embed_query("kenang doctor")
    except Exception as exc:  # noqa: BLE001 - any failure to load or embed is this check's answer
        return _fail(
            "embedder",
            f"{cfg.backend}: {_first_line(exc)}",
            "run `make setup`, or set embedder.backend: none (keyword recall)",
        )
    return _ok("embedder", f"{cfg.backend}: loads and embeds a query")


def check_prefect(url: str | None) -> Check:
    """``url``: the Prefect API a run here would use (PREFECT_API_URL, else Prefect's profile), as the CLI found it."""
    if not url:
        return _ok("prefect", "no Prefect server configured: each run starts a temporary one (slower to start)")
    import httpx

    todo = "start it (`prefect server start`, or its systemd unit), or unset PREFECT_API_URL"
    try:
        verify = _prefect_tls() if url.lower().startswith("https:") else True
    except (OSError, ssl.SSLError) as exc:
        from prefect.settings import PREFECT_API_SSL_CERT_FILE

        return _fail(
            "prefect",
            f"the CA certificates for the Prefect server at {url}, {PREFECT_API_SSL_CERT_FILE.value()}, cannot be "
            f"read ({type(exc).__name__})",
            "point PREFECT_API_SSL_CERT_FILE (or SSL_CERT_FILE) at the PEM file of the CA that signed its certificate",
        )
    try:
        r = httpx.get(url.rstrip("/") + "/health", timeout=TIMEOUT_S, verify=verify)
        answered = r.status_code == 200
        why = f"HTTP {r.status_code}"
    except httpx.HTTPError as exc:
        answered, why = False, f"cannot reach it ({type(exc).__name__})"
        if "mismatch" in str(exc).lower():
            why = "its TLS certificate is not made for this host name"
            todo = "put the name (or address) its certificate was made for in PREFECT_API_URL"
        elif "CERTIFICATE_VERIFY_FAILED" in str(exc):
            why = "its TLS certificate is not one this host trusts"
            todo = (
                "set PREFECT_API_SSL_CERT_FILE to the certificate of the CA that signed it "
                "(or PREFECT_API_TLS_INSECURE_SKIP_VERIFY=true), as Prefect's own client needs too"
            )
    if answered:
        return _ok("prefect", f"the Prefect server at {url} answers")
    return _fail("prefect", f"the Prefect server at {url} does not answer: {why}", todo)


def _prefect_tls() -> ssl.SSLContext | bool:
    """How Prefect's own client checks its API's certificate: PREFECT_API_TLS_INSECURE_SKIP_VERIFY, else
    PREFECT_API_SSL_CERT_FILE's CA (else httpx's own CAs, as Prefect's)."""
    from prefect.settings import PREFECT_API_SSL_CERT_FILE, PREFECT_API_TLS_INSECURE_SKIP_VERIFY

    if PREFECT_API_TLS_INSECURE_SKIP_VERIFY.value():
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        return ctx
    cafile = PREFECT_API_SSL_CERT_FILE.value()
    return ssl.create_default_context(cafile=cafile) if cafile else True


def check_schedule(name: str = "nightly/nightly", now: dt.datetime | None = None) -> Check:
    """The nightly deployment (``name``) on the Prefect server this process uses (which answered), read with
    Prefect's own client (its auth and TLS settings): absent is fine (nights come from ``kenang run`` on a timer);
    present, it must be unpaused and have a run scheduled that is not long overdue (nothing serves it then)."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import (
        DeploymentFilter,
        DeploymentFilterId,
        FlowRunFilter,
        FlowRunFilterState,
        FlowRunFilterStateType,
    )
    from prefect.client.schemas.objects import StateType
    from prefect.client.schemas.sorting import FlowRunSort
    from prefect.exceptions import ObjectNotFound

    try:
        with get_client(sync_client=True) as client:
            try:
                dep = client.read_deployment_by_name(name)
            except ObjectNotFound:
                return _ok(
                    "schedule", "no nightly deployment on the server: nights come from `kenang run` (timer, cron)"
                )
            if dep.paused:
                return _warn(
                    "schedule",
                    "the nightly deployment is paused: no night runs",
                    "start `kenang serve` again, or resume it in the Prefect UI",
                )
            runs = client.read_flow_runs(
                deployment_filter=DeploymentFilter(id=DeploymentFilterId(any_=[dep.id])),
                flow_run_filter=FlowRunFilter(
                    state=FlowRunFilterState(type=FlowRunFilterStateType(any_=[StateType.SCHEDULED]))
                ),
                sort=FlowRunSort.EXPECTED_START_TIME_ASC,
                limit=1,
            )
    except Exception as exc:  # noqa: BLE001 - whatever the client raises is this check's answer, in one line
        return _warn("schedule", f"could not read the nightly deployment ({_first_line(exc)})")
    if not runs or runs[0].expected_start_time is None:
        return _warn(
            "schedule",
            "the nightly deployment has no run scheduled",
            "the server schedules runs within a minute of `kenang serve`; if this stays, its log says why",
        )
    when = runs[0].expected_start_time
    if when < (now or dt.datetime.now(dt.UTC)) - LATE:
        return _warn(
            "schedule",
            f"the nightly run scheduled for {when.isoformat(timespec='minutes')} has not started",
            "start `kenang serve` (or the worker of its work pool): nothing runs the deployment",
        )
    return _ok("schedule", f"the next nightly run is scheduled for {when.isoformat(timespec='minutes')}")


def check_sources(settings: Settings) -> list[Check]:
    from flows.stages import collect

    if not settings.config.sources:
        return [_ok("sources", "none configured: agents drop transcripts into active/ (`kenang sources add` adds one)")]
    out = []
    for src in settings.config.sources:
        name = f"source {src.name}"
        root = collect.source_root(src)
        if not root.exists():
            out.append(
                _warn(name, f"{src.kind}: {root} is not there (yet)", "check sources' path, or run the agent once")
            )
            continue
        readable = os.access(root, os.R_OK | (os.X_OK if root.is_dir() else 0))
        if not readable:
            out.append(
                _fail(name, f"{src.kind}: {root} is not readable", "give the user that runs kenang read access to it")
            )
            continue
        out.append(_ok(name, f"{src.kind}: {root} is readable, {len(collect.matches(src))} file(s) match"))
    return out


def check_disk(settings: Settings) -> list[Check]:
    places = [("home", settings.paths.home)]
    if not settings.paths.remote_archive:
        places.append(("archive", settings.paths.archive))
    out = []
    for what, path in places:
        try:
            free = shutil.disk_usage(path).free
        except OSError as exc:
            out.append(_warn(f"disk {what}", f"free space on {path} unknown ({exc.strerror})"))
            continue
        mb = free / 2**20
        if mb < WARN_FREE_MB:
            out.append(
                _warn(
                    f"disk {what}",
                    f"{mb:,.0f} MiB free on {path} (below {WARN_FREE_MB:,} MiB)",
                    "free space there, or move it to a larger disk",
                )
            )
        else:
            out.append(_ok(f"disk {what}", f"{mb:,.0f} MiB free on {path}"))
    return out


def run_checks(home: Path, prefect_url: str | None) -> list[Check]:
    """Every check, in order; a config that does not read is the only check then."""
    try:
        settings = load_settings(home)
    except ConfigError as exc:
        config = home / "kenang.yaml"
        if not config.is_file():  # the error's own advice would say it twice: the fix goes in the todo alone
            todo = f"run `kenang init --home {home}` (or `kenang demo --home {home}` for a sample home)"
            return [_fail("config", f"no kenang.yaml in {home}", todo)]
        todo = f"fix {config} (`kenang config check --home {home}` lists every problem)"
        return [_fail("config", _first_line(exc), todo)]
    checks = [
        _ok("config", f"{settings.paths.config_file} reads"),
        check_home(settings),
        check_archive(settings),
        check_summarizer(settings),
        check_embedder(settings),
        prefect := check_prefect(prefect_url),
    ]
    if prefect_url and prefect.status == "ok":
        checks.append(check_schedule())
    return checks + check_sources(settings) + check_disk(settings)
