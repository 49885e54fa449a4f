"""``python -m flows.serve``: serve kenang's deployments from one long-running process.

The simplest homelab setup: no work pool, no worker. The deployments, with their
schedules, are read from ``prefect.yaml`` so they are declared in one place.

Invariants: a deployment served here is never left paused. Prefect's ``serve`` pauses
every deployment it served when it stops (Ctrl-C, SIGTERM from ``systemctl stop``), and a
paused nightly stays paused until someone resumes it by hand, so kenang serves with
``pause_on_shutdown=False`` and applies each deployment unpaused when it starts (which
also resumes one an older ``serve`` left paused). The parameter schema is enforced by the
server, so a bad date is refused when a run is submitted.
"""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path
from typing import Any

import yaml
from prefect import Flow, serve
from prefect.schedules import Cron

from flows.pipeline import backfill, nightly

FLOWS: dict[str, Flow[..., Any]] = {"nightly": nightly, "backfill": backfill}
PREFECT_YAML = Path(__file__).resolve().parent.parent / "prefect.yaml"


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
        out.append(
            flow.to_deployment(
                name=d["name"],
                description=d.get("description"),
                tags=d.get("tags"),
                parameters=parameters,
                schedules=schedules,
                paused=False,
                enforce_parameter_schema=True,
            )
        )
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
    # Prefect's runner takes SIGTERM over once it starts; one that comes before (systemctl stop during start-up) ends
    # the process as cleanly, not as a kill.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    serve(*served, pause_on_shutdown=False, limit=args.limit)


if __name__ == "__main__":
    main()
