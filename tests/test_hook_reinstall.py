"""Hook registrations outlive the installation they were made from.

The README's set-up is two commands in one environment: ``pip install .`` and ``lintaid
install claude-code``, then ``pip install -e ".[test]"``. The second replaces the wheel with an
editable install, so the shim the first registered by its path inside site-packages is gone.
What ``install`` registers now is the environment's interpreter running the launcher in
lintaid's data folder, which finds that interpreter's lintaid wherever it is installed: here
the two commands run in order in a fresh virtual environment (its dependencies lent by the
test's own environment through a ``.pth`` file, so nothing is downloaded), and the registered
hooks then run through ``sh -c`` with a bare PATH from another folder, against the daemon the
first command started.

Then what is reported when a registration does point at something missing: the daemon checks
every client's registration at start (``lintaid status``), ``lintaid doctor`` names it, and
the launcher of an interpreter without lintaid answers ``{}`` and says why on stderr.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pytest

from lintaid.integrations import hook_entries, hook_launcher
from tests.conftest import Served, lintaid_env, wait_for
from tests.test_e2e_spine import git_init
from tests.test_hook_path import bare_env
from tests.transcripts import stop_payload, write_transcript

REPO = Path(__file__).resolve().parent.parent
SOURCE = ("pyproject.toml", "README.md", "lintaid", "client")
RESULT = "Webhook signatures are now checked with HMAC-SHA256 in gateway/verify.py."


def checkout(target: Path) -> Path:
    """A copy of what ``pip install .`` reads from this checkout (builds write into it)."""
    target.mkdir()
    skip = shutil.ignore_patterns("__pycache__", "*.egg-info", "build")
    for name in SOURCE:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, target / name, ignore=skip)
        else:
            shutil.copy2(source, target / name)
    return target


def fresh_env(folder: Path) -> Path:
    """A new virtual environment whose dependencies are the test environment's; its
    interpreter."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    python = folder / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; "
                           "print(sysconfig.get_paths()['purelib'])"], check=True,
                          capture_output=True, text=True).stdout.strip()
    (Path(site) / "lent-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return python


def pip_install(python: Path, *args: str, cwd: Path) -> None:
    """``pip install ARGS`` into ``python``'s environment (this environment's pip, offline:
    no dependencies, no build isolation)."""
    proc = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install",
                           "-q", "--no-deps", "--no-build-isolation", *args],
                          cwd=str(cwd), capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def run(*args: str | Path, cwd: Path, env: dict[str, str]) -> str:
    proc = subprocess.run([str(a) for a in args], cwd=str(cwd), env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, f"{args}: {proc.stdout}{proc.stderr}"
    return proc.stdout


def registered(project: Path) -> dict[str, str]:
    """event -> the command ``lintaid install claude-code`` wrote into the project."""
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    return {event: groups[0]["hooks"][0]["command"]
            for event, groups in settings["hooks"].items()}


def agent_runs(command: str, payload: dict[str, Any], *, cwd: Path,
               env: dict[str, str]) -> dict[str, Any]:
    """The command as Claude Code runs it: through ``sh -c``, the event on stdin."""
    proc = subprocess.run(["sh", "-c", command], input=json.dumps(payload),
                          capture_output=True, text=True, cwd=str(cwd), env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == "", proc.stderr
    answer: dict[str, Any] = json.loads(proc.stdout)
    return answer


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_the_readmes_two_commands_in_one_environment_keep_every_hook_working(
        tmp_path: Path) -> None:
    python = fresh_env(tmp_path / "venv")
    bin_dir = python.parent
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; "
                                "print(sysconfig.get_paths()['purelib'])"],
                               check=True, capture_output=True, text=True).stdout.strip())
    src = checkout(tmp_path / "checkout")
    project = tmp_path / "project"
    project.mkdir()
    git_init(project)
    env = lintaid_env(PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    lintaid = bin_dir / "lintaid"
    # pip install . && cd /path/to/your/project && lintaid start && lintaid install claude-code
    pip_install(python, ".", cwd=src)
    try:
        run(lintaid, "start", cwd=project, env=env)
        run(lintaid, "install", "claude-code", cwd=project, env=env)
        wheel_shim = site / "lintaid_client" / "hook.py"
        assert wheel_shim.is_file()
        # pip install -e ".[test]" (from the checkout, in the same environment)
        pip_install(python, "-e", ".[test]", cwd=src)
        assert not wheel_shim.exists()  # what the registration used to name is gone
        commands = registered(project)
        assert set(commands) == {"SessionStart", "UserPromptSubmit", "Stop", "SubagentStop",
                                 "PreCompact", "SessionEnd"}
        assert all(str(site) not in command for command in commands.values())

        # What the launcher finds by itself, without starting the interpreter: the editable
        # install's finder, in the site folder the wheel was in (on a copy of its folder).
        here = Path(shlex.split(commands["Stop"])[3]).parent
        copy = shutil.copytree(here, tmp_path / "launcher-copy")
        assert hook_launcher.known(str(copy), str(python)) is None  # the install changed
        assert hook_launcher.rescan(str(copy), str(python)) == str(src / "client")

        hook_env = bare_env(project)
        transcript = write_transcript(
            tmp_path / "t.jsonl", [("user", "Check webhook signatures properly."),
                                   ("assistant", RESULT)], cwd=str(project))
        assert agent_runs(commands["Stop"], stop_payload(transcript, cwd=str(project)),
                          cwd=elsewhere, env=hook_env) == {}
        answer = agent_runs(commands["UserPromptSubmit"],
                            {"cwd": str(project), "session_id": "s2",
                             "hook_event_name": "UserPromptSubmit",
                             "prompt": "how are webhook signatures checked?"},
                            cwd=elsewhere, env=hook_env)
        assert RESULT in answer["hookSpecificOutput"]["additionalContext"]
        # The launcher now runs the editable install's shim, from the checkout.
        location = (here / "location").read_text()
        assert location.splitlines()[2] == str(src / "client")

        # A daemon of the new install finds nothing broken, and doctor agrees.
        run(lintaid, "stop", cwd=project, env=env)
        run(lintaid, "start", cwd=project, env=env)
        status = wait_for(lambda: _registrations(lintaid, project, env), timeout=60)
        assert status == [[]]
        run(lintaid, "doctor", cwd=project, env=env)
    finally:
        subprocess.run([str(lintaid), "stop", "--project", str(project)], env=env,
                       capture_output=True, timeout=60)


def _registrations(lintaid: Path, project: Path, env: dict[str, str]) -> list[Any] | None:
    data = json.loads(run(lintaid, "status", "--json", cwd=project, env=env))
    found = data.get("registrations")
    return None if found is None else [found]


def _write_settings(project: Path, command: str) -> Path:
    path = project / ".claude" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"hooks": {"Stop": [{"hooks": [
        {"type": "command", "command": command, "timeout": 10}]}]}}))
    return path


def test_status_names_a_hook_that_points_at_a_shim_no_longer_there(
        project: Path, serve: Any, tmp_path: Path) -> None:
    gone = tmp_path / "venv" / "lib" / "python3.11" / "site-packages" / "lintaid_client"
    path = _write_settings(project, f"{sys.executable} -I -S {gone}/hook.py claude-code Stop")
    served: Served = serve(project)
    found = wait_for(lambda: served.json("status")["registrations"], timeout=30)
    problems = {p["name"]: p for p in found}
    hooks = problems["claude-code hooks, project"]  # (and no MCP server in .mcp.json)
    assert f"{path}: Stop: its script {gone}/hook.py does not exist" in hooks["detail"]
    assert hooks["fix"].startswith("lintaid install claude-code")
    shown = served.cli("status").stdout
    assert f"BROKEN    claude-code hooks, project: {path}: Stop: its script" in shown
    assert "fix: lintaid install claude-code" in shown


@pytest.mark.slow
def test_a_launcher_whose_interpreter_has_no_lintaid_answers_and_says_so(
        project: Path, tmp_path: Path) -> None:
    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    python = str(bare / "bin" / "python")
    launcher = hook_entries.install_launcher(python)  # as `lintaid install` run from there
    command = f"{python} -I -S {launcher} claude-code Stop"
    proc = subprocess.run(["sh", "-c", command], input="{}", capture_output=True, text=True,
                          cwd=str(project), env=bare_env(project), timeout=60)
    assert (proc.returncode, proc.stdout) == (0, "{}\n")
    assert f"lintaid: no lintaid is installed for {python}" in proc.stderr
    _write_settings(project, command)
    doctor = subprocess.run([sys.executable, "-m", "lintaid", "doctor", "--json",
                             "--project", str(project)], capture_output=True, text=True,
                            env=lintaid_env(), timeout=120)
    found = {c["name"]: c for c in json.loads(doctor.stdout)["checks"]}
    check = found["claude-code hooks, project"]
    assert not check["ok"]
    assert f"its interpreter {python} has no lintaid installed" in check["detail"]
    assert doctor.returncode == 1
