"""`lintaid service`: the rendered systemd unit passes `systemd-analyze verify`, the launchd
agent parses and holds what launchd needs, and where no manager answers the command says so
in one line and changes nothing."""

from __future__ import annotations

import os
import plistlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lintaid import service
from lintaid_client import paths
from tests.conftest import lintaid_env, run_cli

ANALYZE = shutil.which("systemd-analyze")
ESCAPE = shutil.which("systemd-escape")
TRICKY = ["/home/me/project", "/tmp/a b/pro-ject.x/é", "/srv/.hidden/x_y:z", "/",
          "/data//two///slashes/", "/p/100%/$HOME/a\\b"]


@pytest.mark.parametrize("path", TRICKY)
def test_instance_names_escape_as_systemd_does(path: str) -> None:
    expected = {"/home/me/project": "home-me-project", "/": "-",
                "/tmp/a b/pro-ject.x/é": "tmp-a\\x20b-pro\\x2dject.x-\\xc3\\xa9"}
    if ESCAPE:
        out = subprocess.run([ESCAPE, "--path", path], capture_output=True, text=True,
                             check=True).stdout.strip()
        assert service.escape_path(path) == out
    if path in expected:
        assert service.escape_path(path) == expected[path]


def test_a_path_too_long_for_a_unit_name_is_refused(tmp_path: Path) -> None:
    with pytest.raises(service.ServiceError, match="too long for a systemd unit name"):
        service.unit_name(Path("/" + "x" * 300))


def test_the_unit_runs_the_real_interpreter_in_the_foreground_with_readiness() -> None:
    text = service.render_unit(sys.executable)
    assert f"ExecStart={sys.executable} -m lintaid start --foreground --project %f" in text
    for line in ("Type=notify", "Restart=on-failure", "KillSignal=SIGTERM",
                 "WorkingDirectory=%f", "WantedBy=default.target",
                 "Environment=LINTAID_IDLE_EXIT_S=0"):  # a clean exit would stay stopped
        assert line in text.splitlines()
    assert "@PYTHON@" not in text and "%h/.local/bin" not in text
    # An interpreter path holding a space, a percent sign or a dollar stays one literal word.
    quoted = service.render_unit("/opt/my tools/100%/$py/python3")
    assert 'ExecStart="/opt/my tools/100%%/$$py/python3" -m lintaid' in quoted


@pytest.fixture
def verify_dir(tmp_path: Path) -> Path:
    if ANALYZE is None:
        pytest.skip("systemd-analyze is not installed (Debian: apt-get install systemd; "
                    ".ci/run installs it where it can)")
    return tmp_path


def _verify(folder: Path, python: str, project: Path) -> subprocess.CompletedProcess[str]:
    (folder / service.UNIT_TEMPLATE).write_text(service.render_unit(python))
    instance = folder / service.unit_name(project)
    assert ANALYZE is not None
    return subprocess.run([ANALYZE, "verify", str(instance)], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "SYSTEMD_LOG_LEVEL": "info"})


def test_the_rendered_unit_passes_systemd_analyze_verify(verify_dir: Path) -> None:
    project = verify_dir / "my project"
    project.mkdir()
    proc = _verify(verify_dir, sys.executable, project)
    assert proc.returncode == 0, proc.stderr
    assert "lintaid@" not in proc.stderr, proc.stderr  # no warning about our unit


def test_verify_catches_an_interpreter_that_is_not_there(verify_dir: Path) -> None:
    """The check above can fail: a unit pointing at a missing program does not verify."""
    proc = _verify(verify_dir, "/nonexistent/bin/python3", verify_dir)
    assert proc.returncode != 0 and "/nonexistent/bin/python3" in proc.stderr


def test_an_interpreter_in_a_folder_with_a_space_verifies(verify_dir: Path) -> None:
    spaced = verify_dir / "bin dir"
    spaced.mkdir()
    (spaced / "python3").symlink_to(sys.executable)
    proc = _verify(verify_dir, str(spaced / "python3"), verify_dir)
    assert proc.returncode == 0, proc.stderr


def test_the_launch_agent_parses_and_holds_what_launchd_needs(tmp_path: Path) -> None:
    root = tmp_path / "a & b <project>"
    other = tmp_path / "other"
    agent = plistlib.loads(service.render_plist(root, sys.executable).encode())
    assert agent["Label"] == f"dev.lintaid.{paths.project_key(root)}"
    assert agent["Label"] != plistlib.loads(service.render_plist(other, sys.executable)
                                            .encode())["Label"]  # one per project
    assert agent["ProgramArguments"] == [sys.executable, "-m", "lintaid", "start",
                                         "--foreground", "--project", str(root)]
    assert agent["RunAtLoad"] is True
    assert agent["KeepAlive"] == {"SuccessfulExit": False}
    assert agent["WorkingDirectory"] == str(root)
    logs = paths.log_dir(root)
    assert agent["StandardOutPath"] == str(logs / "launchd.out")
    assert agent["StandardErrorPath"] == str(logs / "launchd.err")
    assert agent["EnvironmentVariables"]["LINTAID_LOG_STDERR"] == "0"  # the log file has it
    # KeepAlive leaves a clean exit stopped: a service's daemon has no idle exit.
    assert agent["EnvironmentVariables"]["LINTAID_IDLE_EXIT_S"] == "0"


def test_the_shipped_templates_are_the_ones_rendered() -> None:
    repo = Path(__file__).resolve().parent.parent
    assert (repo / "systemd" / "lintaid@.service").resolve() == \
        service.TEMPLATES / service.UNIT_TEMPLATE
    assert (repo / "launchd" / "dev.lintaid.plist").resolve() == \
        service.TEMPLATES / service.PLIST_TEMPLATE


# -- the command ---------------------------------------------------------------------------------
def _env(home: Path, **extra: str) -> dict[str, str]:
    env = lintaid_env(HOME=str(home), **extra)
    env.pop("XDG_CONFIG_HOME", None)
    return env


def test_dry_run_prints_the_files_and_commands_and_writes_nothing(project: Path,
                                                                 tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    out = run_cli(project, "service", "install", "--dry-run", "--manager", "systemd",
                  env=_env(home)).stdout
    unit = service.unit_name(project)
    assert f"# {home}/.config/systemd/user/lintaid@.service" in out
    assert f"ExecStart={sys.executable} -m lintaid" in out
    assert f"systemctl --user enable --now {unit}" in out
    out = run_cli(project, "service", "install", "--dry-run", "--manager", "launchd",
                  env=_env(home)).stdout
    label = f"dev.lintaid.{paths.project_key(project)}"
    assert f"# {home}/Library/LaunchAgents/{label}.plist" in out
    assert f"launchctl bootstrap gui/{os.getuid()} {home}/Library/LaunchAgents/{label}.plist" \
        in out
    assert not any(home.iterdir())


def test_without_systemctl_install_says_so_in_one_line(project: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    empty = tmp_path / "no-tools"
    empty.mkdir()
    for command in ("install", "uninstall", "status"):
        proc = run_cli(project, "service", command, "--manager", "systemd",
                       env=_env(home, PATH=str(empty)), check=False)
        assert proc.returncode != 0
        assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
        assert "systemctl is not available here (no systemd); nothing was changed" \
            in proc.stderr
    assert not any(home.iterdir())


@pytest.mark.skipif(shutil.which("systemctl") is None, reason="systemctl is not installed")
def test_a_systemctl_without_a_user_manager_changes_nothing(project: Path,
                                                           tmp_path: Path) -> None:
    """Here systemd is installed but not running (a container): say so, write nothing."""
    probe = subprocess.run(["systemctl", "--user", "show-environment"], capture_output=True,
                           text=True, env=_env(tmp_path))
    if probe.returncode == 0:
        pytest.skip("a systemd user manager runs here; installing would change this machine")
    home = tmp_path / "home"
    home.mkdir()
    proc = run_cli(project, "service", "install", env=_env(home), check=False)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert "systemd's user manager does not answer here" in proc.stderr
    assert not any(home.iterdir())
