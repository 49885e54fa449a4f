"""A backfill's parameter schema refuses a range whose end is before its start.

The schema kenang gives the backfill deployment is checked here with Prefect's own
validator, the one its server runs when a run is submitted; the refusal through a real
server is in tests/test_prefect_reports.py and tests/test_deploy_e2e.py.
"""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st
from prefect.utilities.schema_tools.validation import ValidationError, validate

from flows.pipeline import nightly
from flows.serve import PREFECT_YAML, REVERSED, checked, checks, deployments

DATES = st.dates(min_value=dt.date(1970, 1, 1), max_value=dt.date(2199, 12, 31))


@pytest.fixture(scope="module")
def schema() -> dict:
    (d,) = deployments(PREFECT_YAML, ("backfill",))
    return d._parameter_openapi_schema.model_dump(exclude_unset=True)


def refused(schema: dict, start: str, end: str) -> str | None:
    try:
        validate({"start": start, "end": end, "only_missing": False}, schema, raise_on_error=True)
    except ValidationError as exc:
        return str(exc)
    return None


@given(start=DATES, end=DATES)
def test_a_range_is_refused_exactly_when_its_end_is_before_its_start(schema, start, end):
    said = refused(schema, start.isoformat(), end.isoformat())
    if end < start:
        assert said is not None and REVERSED in said
    else:
        assert said is None


@pytest.mark.parametrize(
    ("start", "end"),
    [
        ("2026-07-19", "2026-07-01"),
        ("2026-01-01", "2025-12-31"),
        ("2026-10-01", "2026-09-30"),
        ("2100-01-01", "2099-12-31"),
        ("2026-07-02", "2026-07-01"),
    ],
)
def test_a_range_one_day_or_more_the_wrong_way_round_is_refused(schema, start, end):
    assert REVERSED in (refused(schema, start, end) or "")


def test_a_one_day_range_is_taken(schema):
    assert refused(schema, "2026-07-19", "2026-07-19") is None


@given(day=st.dates(min_value=dt.date(1, 1, 1), max_value=dt.date(9999, 12, 31)))
def test_every_calendar_date_is_taken_and_a_29th_of_february_only_in_a_leap_year(schema, day):
    assert refused(schema, day.isoformat(), day.isoformat()) is None
    try:
        dt.date(day.year, 2, 29)
    except ValueError:
        assert refused(schema, f"{day.year:04d}-02-29", f"{day.year:04d}-02-29") is not None


@pytest.mark.parametrize(
    ("start", "end", "field"),
    [
        ("2026-07-01", "2026-02-30", "end"),
        ("2026-13-01", "2026-07-31", "start"),
        ("2026-07-19\n", "2026-07-31", "start"),
        ("2026-02-29", "2026-03-01", "start"),  # no 29th of February in 2026
        ("1900-02-29", "2026-03-01", "start"),
        ("0000-01-01", "2026-03-01", "start"),
    ],
)
def test_a_bad_date_is_refused_for_its_own_field_not_as_a_reversed_range(schema, start, end, field):
    said = refused(schema, start, end)
    assert said is not None and f"field {field!r}" in said and REVERSED not in said


def test_defaults_without_the_dates_are_not_a_reversed_range(schema):
    # Prefect checks a deployment's default parameters with every ``required`` removed
    validate({"home": "/srv/kenang"}, schema, raise_on_error=True, ignore_required=True)
    validate({"start": "2026-07-19"}, schema, raise_on_error=True, ignore_required=True)


def test_the_nightly_schema_is_left_as_prefect_builds_it():
    (d,) = deployments(PREFECT_YAML, ("nightly",))
    assert checked(nightly, d._parameter_openapi_schema) is d._parameter_openapi_schema
    assert "not" not in d._parameter_openapi_schema.model_dump(exclude_unset=True)


def test_kenang_deploy_checks_only_the_backfill_and_leaves_other_deployments_to_prefect(tmp_path):
    spec = tmp_path / "prefect.yaml"
    spec.write_text(
        PREFECT_YAML.read_text(encoding="utf-8").replace(
            "deployments:\n",
            "deployments:\n  - name: theirs\n    entrypoint: elsewhere/flow.py:their_flow\n"
            "    schedules:\n      - interval: 3600\n",
            1,
        ),
        encoding="utf-8",
    )
    got = checks(spec)
    assert [name for name, _ in got] == ["backfill/backfill"]
    assert got[0][1].model_dump(exclude_unset=True)["not"] == {"$ref": f"#/definitions/{REVERSED}"}


@pytest.mark.parametrize(
    "text", ["root:x:0:0:root:/root:/bin/bash\n", "deployments:\n  - entrypoint: flows/pipeline.py:backfill\n", "[]\n"]
)
def test_kenang_deploy_refuses_a_file_that_declares_no_deployments_in_one_line_and_deploys_nothing(tmp_path, text):
    spec = tmp_path / "prefect.yaml"
    spec.write_text(text, encoding="utf-8")
    out = subprocess.run(
        [sys.executable, "-m", "flows.cli.main", "deploy", "--prefect-yaml", str(spec)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PREFECT_API_URL": "http://127.0.0.1:9/api"},  # never reached: refused before
    )
    assert out.returncode == 2
    assert "no `deployments:` list whose entries each have a `name`" in out.stderr
    assert "Traceback" not in out.stderr and "prefect deploy" not in out.stdout
