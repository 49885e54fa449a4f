"""``python -m flows.serve``: serve both deployments from one long-running process.

The simplest homelab setup: no work pool, no worker. The deployments, with their
schedules, are read from ``prefect.yaml`` so they are declared in one place.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from prefect import Flow, serve
from prefect.schedules import Cron

from flows.pipeline import backfill, nightly

FLOWS: dict[str, Flow[..., Any]] = {"nightly": nightly, "backfill": backfill}


def deployments(prefect_yaml: Path):
    """Deployment objects for every entry of prefect.yaml."""
    spec = yaml.safe_load(prefect_yaml.read_text(encoding="utf-8"))
    out = []
    for d in spec["deployments"]:
        flow = FLOWS[d["entrypoint"].rsplit(":", 1)[1]]
        schedules = [Cron(s["cron"], timezone=s.get("timezone")) for s in d.get("schedules") or []]
        out.append(
            flow.to_deployment(
                name=d["name"],
                description=d.get("description"),
                tags=d.get("tags"),
                parameters=d.get("parameters") or {},
                schedules=schedules,
            )
        )
    return out


def main() -> None:
    serve(*deployments(Path(__file__).resolve().parent.parent / "prefect.yaml"))


if __name__ == "__main__":
    main()
