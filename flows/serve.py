"""``python -m flows.serve``: serve kenang's deployments from one long-running process.

The simplest homelab setup: no work pool, no worker. The deployments, with their
schedules, are read from ``prefect.yaml`` so they are declared in one place.

Invariants: a deployment served here is never left paused. Prefect's ``serve`` pauses
every deployment it served when it stops (Ctrl-C, SIGTERM from ``systemctl stop``), and a
paused nightly stays paused until someone resumes it by hand, so kenang serves with
``pause_on_shutdown=False`` and applies each deployment unpaused when it starts (which
also resumes one an older ``serve`` left paused). The parameter schema is enforced by the
server, so a bad date, or a backfill range whose end is before its start, is refused when a
run is submitted.

``kenang deploy`` is the work-pool way: ``prefect deploy --all`` from prefect.yaml, then the
same parameter checks put on the deployments it registered (``prefect deploy`` builds a
schema from the flow's signature alone, which cannot compare two parameters).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml
from prefect import Flow, serve
from prefect.deployments.runner import RunnerDeployment
from prefect.runner import Runner
from prefect.schedules import Cron
from prefect.utilities.callables import ParameterSchema
from pydantic import ConfigDict

from flows.config import load_settings, resolve_home
from flows.pipeline import backfill, nightly
from transforms.errors import ConfigError
from transforms.redact import redact_reason

FLOWS: dict[str, Flow[..., Any]] = {"nightly": nightly, "backfill": backfill}
PREFECT_YAML = Path(__file__).resolve().parent.parent / "prefect.yaml"

#: The definition a backfill's parameters must not match. The server's message names it, so it says what is wrong.
REVERSED = "end-is-before-start"
#: Where the digits of a YYYY-MM-DD date are.
_DIGITS = (0, 1, 2, 3, 5, 6, 8, 9)


def _digit(position: int, digits: str) -> dict:
    return {"pattern": f"^.{{{position}}}[{digits}]"}


def reversed_range() -> dict[str, dict]:
    """JSON Schema definitions that match parameters whose ``end`` is before their ``start``.

    JSON Schema cannot compare two values, but both dates are YYYY-MM-DD strings (their own
    pattern is checked too), so end < start is a comparison of digits, left to right: at the
    first digit where the two differ, end's is the smaller. One definition a digit: end's digit
    there is the smaller, or both are the same and the next definition holds.
    """
    defs: dict[str, dict] = {}
    for k, at in enumerate(_DIGITS):
        smaller = [{"properties": {"end": _digit(at, str(c)), "start": _digit(at, f"{c + 1}-9")}} for c in range(9)]
        either: list[dict] = [{"anyOf": smaller}]
        if k + 1 < len(_DIGITS):
            same = [{"properties": {"end": _digit(at, str(c)), "start": _digit(at, str(c))}} for c in range(10)]
            either.append({"allOf": [{"anyOf": same}, {"$ref": f"#/definitions/{REVERSED}-{k + 1}"}]})
        defs[f"{REVERSED}-{k}"] = {"anyOf": either}
    # Only two good dates can be the wrong way round: a bad one is refused for its own field, by name. Both are
    # there is said without ``required``, which Prefect drops when it checks a deployment's defaults.
    good = [
        {"properties": {name: {"$ref": f"#/properties/{name}"}}, "not": {"properties": {name: False}}}
        for name in ("start", "end")
    ]
    defs[REVERSED] = {"allOf": [*good, {"$ref": f"#/definitions/{REVERSED}-0"}]}
    return defs


class _Checked(ParameterSchema):
    """A flow's parameter schema with checks across its parameters, which Prefect's own model would drop."""

    model_config = ConfigDict(extra="allow")


def checked(flow: Flow[..., Any], schema: ParameterSchema) -> ParameterSchema:
    """``schema`` with the checks across ``flow``'s parameters: a backfill range must not end before it starts."""
    if flow is not backfill:
        return schema
    return _Checked.model_validate(
        {
            **schema.model_dump(exclude_unset=True),
            "definitions": {**schema.definitions, **reversed_range()},
            "not": {"$ref": f"#/definitions/{REVERSED}"},
        }
    )


def deployments(prefect_yaml: Path, only: tuple[str, ...] = (), home: str | None = None):
    """Deployment objects for the entries of prefect.yaml (those named in ``only``, if given)."""
    spec = yaml.safe_load(prefect_yaml.read_text(encoding="utf-8"))
    out = []
    for d in spec["deployments"]:
        if only and d["name"] not in only:
            continue
        flow = FLOWS[d["entrypoint"].rsplit(":", 1)[1]]
        schedules = [Cron(s["cron"], timezone=s.get("timezone")) for s in d.get("schedules") or []]
        parameters = dict(d.get("parameters") or {})
        if home is not None:
            parameters["home"] = home
        deployment: RunnerDeployment = flow.to_deployment(  # type: ignore[assignment]  # sync here, not a coroutine
            name=d["name"],
            description=d.get("description"),
            tags=d.get("tags"),
            parameters=parameters,
            schedules=schedules,
            paused=False,
            enforce_parameter_schema=True,
        )
        deployment._parameter_openapi_schema = checked(flow, deployment._parameter_openapi_schema)
        out.append(deployment)
    return out


def parser(prog: str = "python -m flows.serve") -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=prog,
        description="Serve kenang's Prefect deployments (nightly on its schedule, backfill on demand) from this "
        "process, with no work pool or worker. Needs PREFECT_API_URL pointing at a running `prefect server`. "
        "Stopping it (Ctrl-C, SIGTERM) leaves every deployment unpaused.",
    )
    p.add_argument(
        "--only",
        action="append",
        choices=sorted(FLOWS),
        metavar="NAME",
        help="serve only this deployment (nightly or backfill); repeat for both (default: every one in prefect.yaml)",
    )
    p.add_argument("--home", help="the kenang home the runs use (default: KENANG_HOME in this process's environment)")
    p.add_argument(
        "--prefect-yaml",
        type=Path,
        default=PREFECT_YAML,
        help="where the deployments and their schedules are declared (default: the repository's prefect.yaml)",
    )
    p.add_argument("--limit", type=int, default=1, help="flow runs at a time (default 1: kenang runs one at a time)")
    p.add_argument("--list", action="store_true", help="print the deployments it would serve, and exit")
    return p


def deploy_parser(prog: str = "kenang deploy") -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=prog,
        description="Register kenang's deployments with a work pool, for `prefect worker start` to run: "
        "`prefect deploy --all` from prefect.yaml, then kenang's parameter checks on them, so a backfill whose end is "
        "before its start is refused when it is submitted. Needs PREFECT_API_URL pointing at a running "
        "`prefect server` and the work pool prefect.yaml names (`prefect work-pool create kenang --type process`).",
    )
    p.add_argument(
        "--prefect-yaml",
        type=Path,
        default=PREFECT_YAML,
        help="where the deployments are declared (default: the repository's prefect.yaml); its folder is where the "
        "worker runs the flows",
    )
    return p


def checks(prefect_yaml: Path) -> list[tuple[str, ParameterSchema]]:
    """("flow/deployment", its checked schema) for each deployment in ``prefect_yaml`` whose flow has checks
    across its parameters (the backfill); the others, kenang's or not, are left to ``prefect deploy``."""
    from prefect.utilities.callables import parameter_schema

    spec = yaml.safe_load(prefect_yaml.read_text(encoding="utf-8"))
    declared = spec.get("deployments") if isinstance(spec, dict) else None
    if not isinstance(declared, list) or not all(isinstance(d, dict) and "name" in d for d in declared):
        raise ValueError("it has no `deployments:` list whose entries each have a `name`")
    out: list[tuple[str, ParameterSchema]] = []
    for d in declared:
        flow = FLOWS.get(str(d.get("entrypoint", "")).rsplit(":", 1)[-1])
        if flow is None:
            continue
        schema = checked(flow, parameter_schema(flow))
        if isinstance(schema, _Checked):
            out.append((f"{flow.name}/{d['name']}", schema))
    return out


def deploy_main(argv: list[str] | None = None, prog: str = "kenang deploy") -> None:
    """``prefect deploy --all``, then the parameter checks it cannot make put on what it registered."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.actions import DeploymentUpdate

    args = deploy_parser(prog).parse_args(argv)
    yaml_path = args.prefect_yaml.resolve()
    try:
        checked_here = checks(yaml_path)
    except (OSError, yaml.YAMLError, ValueError) as exc:
        deploy_parser(prog).error(f"cannot read the deployments in {yaml_path}: {exc}")
    folder = yaml_path.parent
    done = subprocess.run(
        [sys.executable, "-m", "prefect", "--no-prompt", "deploy", "--all", "--prefect-file", str(yaml_path)],
        cwd=folder,
        env={**os.environ, "PWD": str(folder)},  # prefect.yaml's pull step runs the flows from {{ $PWD }}
    )
    if done.returncode:
        sys.exit(done.returncode)
    with get_client(sync_client=True) as client:
        for name, schema in checked_here:
            try:
                registered = client.read_deployment_by_name(name)
                client.update_deployment(
                    registered.id, DeploymentUpdate(parameter_openapi_schema=schema.model_dump(exclude_unset=True))
                )
            except Exception as exc:  # the server's answer, in one line: what was deployed stays deployed
                sys.exit(f"{prog}: {name} was deployed, but its parameter checks were not added: {exc}")
            print(f"{name}: a range whose end is before its start is refused when it is submitted")


def main(argv: list[str] | None = None, prog: str = "python -m flows.serve") -> None:
    """Serve the deployments (``kenang serve`` and ``python -m flows.serve`` both land here)."""
    args = parser(prog).parse_args(argv)
    if args.limit < 1:
        parser(prog).error("--limit must be 1 or more")
    try:
        served = deployments(args.prefect_yaml, tuple(args.only or ()), args.home)
    except (OSError, yaml.YAMLError, KeyError, TypeError) as exc:
        parser(prog).error(f"cannot read the deployments in {args.prefect_yaml}: {exc}")
    if not served:
        parser(prog).error(f"no deployment named {', '.join(args.only)} in {args.prefect_yaml}")
    if args.list:
        for d in served:
            print(f"{d.flow_name}/{d.name}")
        return
    try:  # a home that is not there would fail every run it serves, each night, where only the Prefect UI shows it
        load_settings(resolve_home(args.home, os.environ))
    except ConfigError as exc:
        sys.stderr.write(f"{prog}: configuration error: {redact_reason(str(exc))}; nothing was served\n")
        sys.exit(2)
    down = _api_down()
    if down is not None:
        status, why = down
        sys.stderr.write(f"{prog}: {redact_reason(why)}; nothing was served\n")
        sys.exit(status)
    # Prefect's runner takes SIGTERM over once it starts; one that comes before (systemctl stop during start-up) ends
    # the process as cleanly, not as a kill.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    # serve() makes its Runner itself, so its SIGTERM handler is replaced on the class (see _stop_on_sigterm)
    Runner.handle_sigterm = _stop_on_sigterm  # type: ignore[method-assign,assignment]
    serve(*served, pause_on_shutdown=False, limit=args.limit)


def _api_down() -> tuple[int, str] | None:
    """(exit status, why) the deployments cannot be served where they would stay; None: they can. Without
    PREFECT_API_URL, Prefect would register them on a temporary server of this process's own, gone with it: no
    schedule would ever fire. A server that does not answer would be a page of tracebacks. Asked with Prefect's
    own client, so its API key, auth string and TLS settings apply."""
    from prefect.client.orchestration import get_client
    from prefect.settings import get_current_settings

    url = get_current_settings().api.url
    if not url:
        return 2, (
            "PREFECT_API_URL is not set: deployments served on a temporary server would go with this process, "
            "and no night would run; start `prefect server start` and point PREFECT_API_URL at its /api"
        )
    with get_client(sync_client=True) as client:
        failed = client.api_healthcheck()
    if failed is None:
        return None
    return 1, (
        f"the Prefect server at {url} does not answer ({type(failed).__name__}: {str(failed).splitlines()[0][:200]}): "
        "start it (`prefect server start`, or its systemd unit)"
    )


def _stop_on_sigterm(runner: Runner, *_: Any) -> None:
    """The runner's SIGTERM handler (``systemctl stop``): stop it as Prefect means to, by running its ``astop`` in
    its loop, so runs still going are cancelled in Prefect and ``serve`` returns.

    Prefect's own handler calls the synchronous ``stop()`` inside that loop, where it only makes a coroutine
    that nothing awaits (a RuntimeWarning), and then exits without the runner having stopped."""
    runner._logger.info("SIGTERM received, stopping the runner...")
    loop = asyncio.get_running_loop()
    _stopping.append(loop.create_task(runner.astop()))


_stopping: list[asyncio.Task] = []  # held until the loop ends: a task nothing refers to may be collected


if __name__ == "__main__":
    main()
