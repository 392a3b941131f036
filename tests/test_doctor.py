"""`lintaid doctor` finds and names each planted problem, says how to fix it, and exits 1;
on a healthy project it exits 0. The daemon runs in the test process; doctor runs the hook
commands it checks as processes, as agents would."""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Callable
from pathlib import Path

import pytest

from lintaid.store.user_index import user_dir_name
from lintaid_client import connection, paths, spool
from tests.conftest import Served, invoke, wait_for

CLIENT_VARS = ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "OPENCLAW_STATE_DIR", "OPENCLAW_CONFIG_PATH",
               "XDG_CONFIG_HOME")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home of its own, so the user's real agent configuration plays no part."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in CLIENT_VARS:
        monkeypatch.delenv(name, raising=False)
    return home


def doctor(root: Path) -> tuple[int, dict, str]:
    """``lintaid doctor --json`` and ``lintaid doctor``: (exit code, report, text)."""
    report = invoke(root, "doctor", "--json")  # an unexpected error raises here
    text = invoke(root, "doctor")
    assert text.exit_code == report.exit_code
    return report.exit_code, json.loads(report.stdout), text.stdout


def cli(root: Path, *args: str) -> str:
    result = invoke(root, *args)
    assert result.exit_code == 0, result.stderr
    return result.stdout


def failed(report: dict) -> dict[str, dict]:
    return {c["name"]: c for c in report["checks"] if not c["ok"]}


@pytest.fixture
def installed(home: Path, served: Served) -> Path:
    """A running daemon with Claude Code's hooks and MCP server installed in the project."""
    cli(served.root, "install", "claude-code")
    return served.root


def test_a_healthy_project_passes(installed: Path) -> None:
    code, report, text = doctor(installed)
    assert code == 0 and report["ok"] and report["problems"] == 0, text
    names = {c["name"] for c in report["checks"]}
    assert {"daemon", "files", "socket", "memory index", "spool", "disk",
            "claude-code hooks, project", "claude-code MCP, project"} <= names
    hooks = next(c for c in report["checks"] if c["name"] == "claude-code hooks, project")
    assert "answered through the daemon" in hooks["detail"]
    assert text.rstrip().endswith("no problems found")


def test_a_hook_pointing_at_a_missing_interpreter(installed: Path) -> None:
    settings_path = installed / ".claude" / "settings.json"
    settings = json.loads(settings_path.read_text())
    handler = settings["hooks"]["Stop"][0]["hooks"][0]
    words = shlex.split(handler["command"])
    handler["command"] = shlex.join(["/nonexistent/venv/bin/python3", *words[1:]])
    settings_path.write_text(json.dumps(settings))
    code, report, text = doctor(installed)
    assert code == 1
    problem = failed(report)["claude-code hooks, project"]
    assert "Stop: it runs /nonexistent/venv/bin/python3, which does not exist" \
        in problem["detail"]
    assert problem["fix"].startswith("lintaid install claude-code")
    assert "FAIL  claude-code hooks, project" in text and "fix: lintaid install claude-code" \
        in text
    cli(installed, "install", "claude-code")  # the fix it names works
    assert doctor(installed)[0] == 0


def test_a_missing_mcp_registration(installed: Path) -> None:
    (installed / ".mcp.json").write_text(json.dumps({"mcpServers": {}}))
    code, report, _ = doctor(installed)
    assert code == 1
    assert "not registered in" in failed(report)["claude-code MCP, project"]["detail"]


def test_a_socket_with_loose_permissions(installed: Path) -> None:
    endpoint = connection.read_status(installed)["endpoint"]
    sock = Path(endpoint.removeprefix("ipc://"))
    os.chmod(sock, 0o666)
    code, report, text = doctor(installed)
    assert code == 1
    problem = failed(report)["socket"]
    assert str(sock) in problem["detail"] and "others may connect" in problem["detail"]
    assert f"chmod 600 {sock}" in problem["fix"]


def test_files_others_can_read(installed: Path) -> None:
    os.chmod(paths.memory_db_path(installed), 0o644)
    code, report, _ = doctor(installed)
    assert code == 1
    problem = failed(report)["files"]
    assert "memory.db (-rw-r--r--)" in problem["detail"]
    assert problem["fix"] == f"chmod -R go-rwx {paths.state_dir(installed)}"


def test_a_damaged_index(home: Path, served: Served) -> None:
    """The doctor never opens an index itself: the daemon checks each one when it starts,
    rebuilds a damaged one from memory.db, and the doctor reports what it found."""
    project = served.root
    served.json("add", "The deploy key rotates every 90 days.")
    served.stop()
    # One index per user: the local user's is damaged.
    meta = paths.index_dir(project, "memory") / user_dir_name("local") / "meta.json"
    meta.write_text("{ this is not an index")
    down = {c["name"]: c for c in doctor(project)[1]["checks"]}
    assert "memory index" not in down and "rebuilds a damaged" in down["indexes"]["detail"]
    served.start()  # a start finds the damage and rebuilds the index
    code, report, _ = doctor(project)
    assert code == 0
    check = {c["name"]: c for c in report["checks"]}["memory index"]
    assert check["ok"] and "built at this start" in check["detail"]
    assert served.json("search", "deploy key")["results"]
    served.restart()  # nothing damaged now: nothing rebuilt
    check = {c["name"]: c for c in doctor(project)[1]["checks"]}["memory index"]
    assert "built at this start" not in check["detail"]


def test_a_full_spool_and_rejected_events(home: Path, project: Path,
                                          serve: Callable[..., Served]) -> None:
    for n in range(120):
        spool.write(project, "hook", {"provider": "claude-code", "event": "Stop",
                                      "payload": {"session_id": f"s{n}"}})
    rejected = paths.spool_dir(project) / "rejected"
    rejected.mkdir(mode=0o700)
    (rejected / "x.json").write_text("{}")
    (rejected / "x.json.reason").write_text('{"reason": "bad_request: nope"}')
    for planted in rejected.iterdir():
        os.chmod(planted, 0o600)  # as the daemon writes them
    code, report, text = doctor(project)
    assert code == 1
    problems = failed(report)
    assert "120 events waiting" in problems["spool"]["detail"]
    assert "lintaid start" in problems["spool"]["fix"]
    assert "1 events the daemon refused" in problems["rejected events"]["detail"]
    serve(project)  # the daemon drains the spool
    wait_for(lambda: not spool.pending(project), timeout=60)
    code, report, _ = doctor(project)
    assert set(failed(report)) == {"rejected events"}


def test_a_pause_is_shown_but_is_no_problem(installed: Path) -> None:
    cli(installed, "pause", "--for", "1h")
    code, report, text = doctor(installed)
    assert code == 0
    assert "warn  pause" in text and "fix: lintaid resume" in text


def test_every_client_checks_its_own_hooks_and_mcp_server(installed: Path) -> None:
    from lintaid.integrations import registry

    for name in registry.names():
        scope = ["--user"] if name == "agy" else []
        cli(installed, "install", name, *scope)
    code, report, text = doctor(installed)
    assert code == 0, text
    names = {c["name"] for c in report["checks"]}
    for name in registry.names():
        scope = "user" if name == "agy" else "project"
        assert f"{name} hooks, {scope}" in names, (name, text)
        assert f"{name} MCP, {scope}" in names, (name, text)
    assert "openclaw plugin" in names

    # A Codex hooks file whose script is gone: Codex's own check names it.
    hooks_file = installed / ".codex" / "hooks.json"
    data = json.loads(hooks_file.read_text())
    handler = data["hooks"]["Stop"][0]["hooks"][0]
    words = shlex.split(handler["command"])
    script = next(i for i, w in enumerate(words) if w.endswith("hook.py"))
    words[script] = "/nonexistent/lintaid_client/hook.py"
    handler["command"] = shlex.join(words)
    hooks_file.write_text(json.dumps(data))
    code, report, _ = doctor(installed)
    assert code == 1
    assert "its script /nonexistent/lintaid_client/hook.py does not exist" \
        in failed(report)["codex hooks, project"]["detail"]
