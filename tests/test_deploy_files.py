"""The service files of docs/deploy/ are real: systemd accepts the units, and every command is one kenang has.

``systemd-analyze verify`` reads each unit as systemd would (with the install paths
pointed at this checkout, since it also checks that each ExecStart exists); it is
skipped where it is not installed. The compose file is parsed as YAML and held to
what it promises: a Prefect server and a kenang worker, the volumes they mount, and
commands that parse as kenang's own.
"""

from __future__ import annotations

import getpass
import importlib.util
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest
import yaml

from flows.cli.main import cli

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "docs" / "deploy"
UNITS = sorted(p for p in DEPLOY.iterdir() if p.suffix in (".service", ".timer"))
PREFECT_COMMANDS = {("server", "start"), ("worker", "start")}


def assert_a_real_command(argv: list[str]) -> None:
    """``kenang CMD ...`` parses as that kenang command; ``python -m M`` names a module with ``main``."""
    prog = Path(argv[0]).name
    if prog == "kenang":
        cmd = cli.commands.get(argv[1])
        assert cmd is not None, f"kenang has no command {argv[1]!r}"
        args = argv[2:]
        while isinstance(cmd, click.Group) and args and args[0] in cmd.commands:
            cmd, args = cmd.commands[args[0]], args[1:]
        # Parsed under the group's own context (its -h), as `kenang` would: raises on an option the command lacks.
        parent = click.Context(cli, info_name="kenang", **cli.context_settings)
        cmd.make_context(argv[1], list(args), parent=parent)
    elif prog.startswith("python"):
        assert argv[1] == "-m", argv
        spec = importlib.util.find_spec(argv[2])
        assert spec is not None and spec.origin is not None, f"no module {argv[2]}"
        assert "def main(" in Path(spec.origin).read_text(encoding="utf-8")
    elif prog == "prefect":
        assert tuple(argv[1:3]) in PREFECT_COMMANDS, argv
    else:
        raise AssertionError(f"not a kenang, python -m or prefect command: {argv}")


def exec_starts(unit: Path) -> list[list[str]]:
    return [
        shlex.split(line.split("=", 1)[1])
        for line in unit.read_text(encoding="utf-8").splitlines()
        if line.startswith("ExecStart=")
    ]


def test_the_deploy_folder_holds_the_timer_the_server_and_the_worker():
    assert {p.name for p in UNITS} == {
        "kenang.service",
        "kenang.timer",
        "prefect-server.service",
        "kenang-worker.service",
    }
    homelab = (ROOT / "docs" / "homelab.md").read_text(encoding="utf-8")
    for p in DEPLOY.iterdir():
        assert f"(deploy/{p.name})" in homelab, f"docs/homelab.md does not link {p.name}"


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed")
def test_systemd_accepts_every_unit(tmp_path):
    venv_bin = Path(sys.executable).parent
    for unit in UNITS:
        text = unit.read_text(encoding="utf-8")
        text = text.replace("/opt/kenang/.venv/bin", str(venv_bin)).replace("/opt/kenang", str(ROOT))
        (tmp_path / unit.name).write_text(text.replace("User=kenang", f"User={getpass.getuser()}"))
    out = subprocess.run(
        ["systemd-analyze", "verify", *(str(tmp_path / u.name) for u in UNITS)], capture_output=True, text=True
    )
    assert out.returncode == 0 and out.stderr.strip() == "", out.stderr


def test_every_unit_runs_a_command_kenang_has():
    starts = [argv for unit in UNITS for argv in exec_starts(unit)]
    assert len(starts) == 3  # the nightly run, the server, the worker; the timer starts the run's service
    for argv in starts:
        assert argv[0].startswith("/opt/kenang/.venv/bin/"), argv
        assert_a_real_command(argv)
    assert ["run", "--wait", "600"] == exec_starts(DEPLOY / "kenang.service")[0][1:]


def test_the_compose_file_runs_a_prefect_server_and_a_kenang_worker_on_named_volumes():
    spec = yaml.safe_load((DEPLOY / "compose.yaml").read_text(encoding="utf-8"))
    services = spec["services"]
    assert set(services) == {"prefect-server", "kenang-init", "kenang-worker"}
    for name, svc in services.items():
        assert_a_real_command(svc["command"])
        for mount in svc.get("volumes", []):
            source = mount.split(":", 1)[0]
            assert source in spec["volumes"], f"{name} mounts {source}, which is not declared"
        for dep in svc.get("depends_on", {}):
            assert dep in services
    assert services["prefect-server"]["command"][:3] == ["prefect", "server", "start"]
    worker = services["kenang-worker"]
    assert worker["environment"]["PREFECT_API_URL"] == "http://prefect-server:4200/api"
    home = worker["environment"]["KENANG_HOME"]
    assert f"kenang-home:{home}" in worker["volumes"] and f"kenang-home:{home}" in services["kenang-init"]["volumes"]
    assert worker["depends_on"]["kenang-init"]["condition"] == "service_completed_successfully"
    build = services["prefect-server"]["build"]
    dockerfile = (DEPLOY / build["context"] / build["dockerfile"]).resolve()
    assert dockerfile == DEPLOY / "Dockerfile" and (DEPLOY / build["context"]).resolve() == ROOT
    for line in dockerfile.read_text(encoding="utf-8").splitlines():
        if line.startswith("COPY "):
            for src in line.split()[1:-1]:
                assert (ROOT / src).exists(), f"the Dockerfile copies {src}, which is not in the repository"


def test_a_command_kenang_does_not_have_is_caught():
    with pytest.raises(AssertionError, match="no command"):
        assert_a_real_command(["kenang", "serve-forever"])
    with pytest.raises(click.UsageError):
        assert_a_real_command(["kenang", "run", "--wait-forever"])


@pytest.mark.parametrize("unit", [u for u in UNITS if u.suffix == ".service"], ids=lambda u: u.name)
def test_each_service_keeps_prefects_files_in_a_folder_systemd_makes_for_its_user(unit):
    # a system user has no home: without PREFECT_HOME, Prefect's start-up fails with a page of tracebacks
    lines = unit.read_text().splitlines()
    state = [ln.split("=", 1)[1] for ln in lines if ln.startswith("StateDirectory=")]
    homes = [ln.split("=", 2)[2] for ln in lines if ln.startswith("Environment=PREFECT_HOME=")]
    assert len(state) == 1 and homes == [f"/var/lib/{state[0]}"], unit.name
