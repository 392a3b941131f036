"""The hook as agents run it: the command `install` registers, through `sh -c`, with a bare
PATH, from another working directory; and on its fast path it loads nothing but the standard
library and the client package's light modules. The hooks are processes; the daemon they reach
runs in the test process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lintaid.cli import _commands
from lintaid_client import spool
from tests.conftest import Served, wait_for

ALLOWED_CLIENT_MODULES = {"lintaid_client", "lintaid_client.hook", "lintaid_client.locate",
                          "lintaid_client.zmtp"}


def registered(event: str) -> str:
    """The command `lintaid install` writes for this event (as a shell string)."""
    import shlex

    return shlex.join([*_commands().hook, "claude-code", event])


def run_registered(event: str, payload: dict, *, cwd: Path, env: dict[str, str]) -> dict:
    proc = subprocess.run(["sh", "-c", registered(event)], input=json.dumps(payload),
                          capture_output=True, text=True, cwd=str(cwd), env=env, timeout=30)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def bare_env(root: Path) -> dict[str, str]:
    env = {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/root"),
           "LINTAID_NO_WATCH": "1"}
    for key in ("XDG_RUNTIME_DIR", "TMPDIR"):
        if key in os.environ:
            env[key] = os.environ[key]
    return env


def imported(event: str, payload: dict, env: dict[str, str], cwd: Path) -> set[str]:
    command = [*_commands().hook]
    command.insert(1, "-X")
    command.insert(2, "importtime")
    proc = subprocess.run([*command, "claude-code", event], input=json.dumps(payload),
                          capture_output=True, text=True, env=env, cwd=str(cwd), timeout=30)
    names = set()
    for line in proc.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip())
    names.discard("imported package")
    return names


@pytest.mark.slow
def test_the_registered_command_injects_with_a_bare_path(served: Served, tmp_path: Path) -> None:
    project = served.root
    env = bare_env(project)
    served.json("add", "The gateway uses httpx as its HTTP client.")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = run_registered("UserPromptSubmit",
                         {"cwd": str(project), "session_id": "s1",
                          "prompt": "which HTTP client does the gateway use?"},
                         cwd=elsewhere, env=env)
    context = out["hookSpecificOutput"]["additionalContext"]
    assert "The gateway uses httpx as its HTTP client." in context
    assert out["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    # The fast path loads only the standard library and the client's light modules.
    names = imported("UserPromptSubmit", {"cwd": str(project), "prompt": "gateway"},
                     env, elsewhere)
    ours = {n for n in names if n.split(".")[0] == "lintaid_client"}
    assert ours and ours <= ALLOWED_CLIENT_MODULES, ours
    third_party = {n.split(".")[0] for n in names} - set(sys.stdlib_module_names) - {
        "lintaid_client", "encodings"}
    assert third_party == set(), third_party
    assert not {"json", "pathlib", "signal", "re", "typing", "socket"} & names


@pytest.mark.slow
def test_with_the_daemon_down_the_event_is_spooled_redacted(project: Path) -> None:
    env = {**bare_env(project), "LINTAID_NO_AUTOSTART": "1"}
    token = "ghp_" + "a1B2" * 9
    out = run_registered("UserPromptSubmit",
                         {"cwd": str(project), "session_id": "s1",
                          "prompt": f"deploy with token {token} please"},
                         cwd=project, env=env)
    assert out == {}
    files = wait_for(lambda: spool.pending(project))  # written by a detached child
    [event] = [spool.read(path) for path in files]
    assert event["args"]["event"] == "UserPromptSubmit"
    assert "deploy with token" in event["args"]["payload"]["prompt"]
    assert token not in files[0].read_text()
    assert oct(files[0].stat().st_mode & 0o777) == "0o600"


@pytest.mark.slow
def test_a_payload_field_can_name_the_project(served: Served, tmp_path: Path) -> None:
    """Clients whose payload has no cwd (Cursor's workspace_roots) find the project from the
    field their installer names with --root-key, not from the process's folder."""
    import shlex

    project = served.root
    served.json("add", "Invoices are rendered with WeasyPrint.")
    command = shlex.join([*_commands().hook, "--root-key", "workspace_roots",
                          "claude-code", "UserPromptSubmit"])
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    payload = {"workspace_roots": [str(project)], "session_id": "s1",
               "prompt": "how are invoices rendered?"}
    proc = subprocess.run(["sh", "-c", command], input=json.dumps(payload),
                          capture_output=True, text=True, cwd=str(elsewhere),
                          env=bare_env(project), timeout=30)
    assert "WeasyPrint" in json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
