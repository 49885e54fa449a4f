"""prefect.yaml declares the two deployments docs/homelab.md promises, and serve reads the same file."""

from __future__ import annotations

from pathlib import Path

import yaml
from prefect.flows import load_flow_from_entrypoint

from flows.serve import deployments

ROOT = Path(__file__).resolve().parent.parent


def test_prefect_yaml_declares_a_nightly_cron_in_jakarta_and_an_unscheduled_backfill():
    spec = yaml.safe_load((ROOT / "prefect.yaml").read_text())
    by_name = {d["name"]: d for d in spec["deployments"]}
    assert by_name["nightly"]["entrypoint"] == "flows/pipeline.py:nightly"
    assert by_name["nightly"]["schedules"] == [{"cron": "30 2 * * *", "timezone": "Asia/Jakarta", "active": True}]
    assert by_name["backfill"]["entrypoint"] == "flows/pipeline.py:backfill"
    assert by_name["backfill"]["schedules"] == []
    for d in by_name.values():  # what a worker loads: the flow of that name (made when first asked for)
        path, func = d["entrypoint"].split(":")
        assert f"def {func}(" in (ROOT / path).read_text()  # where Prefect looks when it cannot import the file
        flow = load_flow_from_entrypoint(str(ROOT / d["entrypoint"]))
        assert flow.name == func == flow.fn.__qualname__


def test_serve_builds_the_same_deployments_with_the_same_schedule():
    nightly, backfill = deployments(ROOT / "prefect.yaml")
    assert (nightly.name, backfill.name) == ("nightly", "backfill")
    (schedule,) = nightly.schedules
    assert schedule.schedule.cron == "30 2 * * *" and schedule.schedule.timezone == "Asia/Jakarta"
    assert backfill.schedules in (None, [])
    assert set(backfill._parameter_openapi_schema.properties) >= {"start", "end", "only_missing"}
