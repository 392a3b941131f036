"""`lintaid doctor` finds and names each planted problem, says how to fix it, and exits 1;
on a healthy project it exits 0."""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path

import pytest

from lintaid_client import connection, paths, spool
from tests.conftest import lintaid_env, run_cli, start_daemon, stop_daemon, wait_for

CLIENT_VARS = ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "OPENCLAW_STATE_DIR", "OPENCLAW_CONFIG_PATH",
               "XDG_CONFIG_HOME")


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """A home of its own, so the user's real agent configuration plays no part."""
    home = tmp_path / "home"
    home.mkdir()
    out = lintaid_env(HOME=str(home))
    for name in CLIENT_VARS:
        out.pop(name, None)
    return out


def doctor(root: Path, env: dict[str, str]) -> tuple[int, dict, str]:
    proc = run_cli(root, "doctor", "--json", env=env, check=False)
    text = run_cli(root, "doctor", env=env, check=False)
    assert text.returncode == proc.returncode and "Traceback" not in text.stderr
    return proc.returncode, json.loads(proc.stdout), text.stdout


def failed(report: dict) -> dict[str, dict]:
    return {c["name"]: c for c in report["checks"] if not c["ok"]}


@pytest.fixture
def installed(project: Path, env: dict[str, str]) -> Path:
    """A running daemon with Claude Code's hooks and MCP server installed in the project."""
    start_daemon(project, env=env)
    run_cli(project, "install", "claude-code", env=env)
    try:
        yield project
    finally:
        stop_daemon(project, env=env)


@pytest.mark.slow
def test_a_healthy_project_passes(installed: Path, env: dict[str, str]) -> None:
    code, report, text = doctor(installed, env)
    assert code == 0 and report["ok"] and report["problems"] == 0, text
    names = {c["name"] for c in report["checks"]}
    assert {"daemon", "files", "socket", "memory index", "spool", "disk",
            "claude-code hooks, project", "claude-code MCP, project"} <= names
    hooks = next(c for c in report["checks"] if c["name"] == "claude-code hooks, project")
    assert "answered through the daemon" in hooks["detail"]
    assert text.rstrip().endswith("no problems found")


@pytest.mark.slow
def test_a_hook_pointing_at_a_missing_interpreter(installed: Path, env: dict[str, str]) -> None:
    settings_path = installed / ".claude" / "settings.json"
    settings = json.loads(settings_path.read_text())
    handler = settings["hooks"]["Stop"][0]["hooks"][0]
    words = shlex.split(handler["command"])
    handler["command"] = shlex.join(["/nonexistent/venv/bin/python3", *words[1:]])
    settings_path.write_text(json.dumps(settings))
    code, report, text = doctor(installed, env)
    assert code == 1
    problem = failed(report)["claude-code hooks, project"]
    assert "Stop: it runs /nonexistent/venv/bin/python3, which does not exist" \
        in problem["detail"]
    assert problem["fix"].startswith("lintaid install claude-code")
    assert "FAIL  claude-code hooks, project" in text and "fix: lintaid install claude-code" \
        in text
    run_cli(installed, "install", "claude-code", env=env)  # the fix it names works
    assert doctor(installed, env)[0] == 0


@pytest.mark.slow
def test_a_missing_mcp_registration(installed: Path, env: dict[str, str]) -> None:
    (installed / ".mcp.json").write_text(json.dumps({"mcpServers": {}}))
    code, report, _ = doctor(installed, env)
    assert code == 1
    assert "not registered in" in failed(report)["claude-code MCP, project"]["detail"]


@pytest.mark.slow
def test_a_socket_with_loose_permissions(installed: Path, env: dict[str, str]) -> None:
    endpoint = connection.read_status(installed)["endpoint"]
    sock = Path(endpoint.removeprefix("ipc://"))
    os.chmod(sock, 0o666)
    code, report, text = doctor(installed, env)
    assert code == 1
    problem = failed(report)["socket"]
    assert str(sock) in problem["detail"] and "others may connect" in problem["detail"]
    assert f"chmod 600 {sock}" in problem["fix"]


@pytest.mark.slow
def test_files_others_can_read(installed: Path, env: dict[str, str]) -> None:
    os.chmod(paths.memory_db_path(installed), 0o644)
    code, report, _ = doctor(installed, env)
    assert code == 1
    problem = failed(report)["files"]
    assert "memory.db (-rw-r--r--)" in problem["detail"]
    assert problem["fix"] == f"chmod -R go-rwx {paths.state_dir(installed)}"


@pytest.mark.slow
def test_a_damaged_index(project: Path, env: dict[str, str]) -> None:
    start_daemon(project, env=env)
    run_cli(project, "add", "The deploy key rotates every 90 days.", env=env)
    stop_daemon(project, env=env)
    meta = paths.index_dir(project, "memory") / "meta.json"
    meta.write_text("{ this is not an index")
    code, report, _ = doctor(project, env)
    assert code == 1
    problem = failed(report)["memory index"]
    assert "unreadable" in problem["detail"] and "rebuilt" in problem["fix"]
    start_daemon(project, env=env)  # the fix it names: a start rebuilds the index
    try:
        assert doctor(project, env)[0] == 0
        hits = json.loads(run_cli(project, "search", "deploy key", "--json", env=env).stdout)
        assert hits["results"]
    finally:
        stop_daemon(project, env=env)


@pytest.mark.slow
def test_a_full_spool_and_rejected_events(project: Path, env: dict[str, str]) -> None:
    for n in range(120):
        spool.write(project, "hook", {"provider": "claude-code", "event": "Stop",
                                      "payload": {"session_id": f"s{n}"}})
    rejected = paths.spool_dir(project) / "rejected"
    rejected.mkdir(mode=0o700)
    (rejected / "x.json").write_text("{}")
    (rejected / "x.json.reason").write_text('{"reason": "bad_request: nope"}')
    for planted in rejected.iterdir():
        os.chmod(planted, 0o600)  # as the daemon writes them
    code, report, text = doctor(project, env)
    assert code == 1
    problems = failed(report)
    assert "120 events waiting" in problems["spool"]["detail"]
    assert "lintaid start" in problems["spool"]["fix"]
    assert "1 events the daemon refused" in problems["rejected events"]["detail"]
    start_daemon(project, env=env)  # the daemon drains the spool
    try:
        wait_for(lambda: not spool.pending(project), timeout=60)
        code, report, _ = doctor(project, env)
        assert set(failed(report)) == {"rejected events"}
    finally:
        stop_daemon(project, env=env)


@pytest.mark.slow
def test_a_pause_is_shown_but_is_no_problem(installed: Path, env: dict[str, str]) -> None:
    run_cli(installed, "pause", "--for", "1h", env=env)
    code, report, text = doctor(installed, env)
    assert code == 0
    assert "warn  pause" in text and "fix: lintaid resume" in text


@pytest.mark.slow
def test_every_client_checks_its_own_hooks_and_mcp_server(installed: Path,
                                                          env: dict[str, str]) -> None:
    from lintaid.integrations import registry

    for name in registry.names():
        scope = ["--user"] if name == "agy" else []
        run_cli(installed, "install", name, *scope, env=env)
    code, report, text = doctor(installed, env)
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
    code, report, _ = doctor(installed, env)
    assert code == 1
    assert "its script /nonexistent/lintaid_client/hook.py does not exist" \
        in failed(report)["codex hooks, project"]["detail"]
