from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lintaid.integrations.base import Commands
from lintaid.integrations.claude_code.install import (
    HOOK_EVENTS,
    install,
    is_our_command,
    settings_path,
    uninstall,
)

MCP_ARGS = ["--project-env", "CLAUDE_PROJECT_DIR", "--session-env", "CLAUDE_CODE_SESSION_ID"]


def install_claude_code(root: Path, scope: Any, hook_command: str = "lintaid-hook",
                        mcp_command: str = "lintaid-mcp") -> list[str]:
    return install(root, scope, Commands((hook_command,), (mcp_command,))).changes


def uninstall_claude_code(root: Path, scope: Any) -> list[str]:
    return uninstall(root, scope, Commands(("lintaid-hook",), ("lintaid-mcp",))).changes

FOREIGN: dict[str, Any] = {
    "model": "opus",
    "permissions": {"allow": ["Bash(git status)"]},
    "hooks": {
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
        "PreToolUse": [{"matcher": "Bash",
                        "hooks": [{"type": "command", "command": "guard.sh", "timeout": 3}]}],
        "SessionStart": [{"matcher": "startup",
                          "hooks": [{"type": "command", "command": "echo hi"}]}],
    },
}
FOREIGN_MCP: dict[str, Any] = {"mcpServers": {"other": {"command": "other-mcp", "args": ["x"]}}}


def read(path: Path) -> Any:
    return json.loads(path.read_text())


def our_handlers(settings: dict[str, Any]) -> dict[str, list[tuple[str | None, dict[str, Any]]]]:
    found: dict[str, list[tuple[str | None, dict[str, Any]]]] = {}
    for event, groups in settings.get("hooks", {}).items():
        for group in groups:
            for handler in group["hooks"]:
                if is_our_command(handler.get("command")):
                    found.setdefault(event, []).append((group.get("matcher"), handler))
    return found


def test_fresh_project_install(tmp_path: Path) -> None:
    messages = install_claude_code(tmp_path, "project")
    settings = read(tmp_path / ".claude" / "settings.json")
    ours = our_handlers(settings)
    assert set(ours) == {e for e, _m, _t in HOOK_EVENTS}
    for event, matcher, timeout in HOOK_EVENTS:
        [(got_matcher, handler)] = ours[event]
        assert got_matcher == matcher
        assert handler == {"type": "command", "command": f"lintaid-hook claude-code {event}",
                           "timeout": timeout}
    assert ours["SessionStart"][0][0] == "startup|resume|clear|compact"
    assert ours["SessionEnd"][0][1]["timeout"] == 5
    assert read(tmp_path / ".mcp.json") == {
        "mcpServers": {"lintaid": {"type": "stdio", "command": "lintaid-mcp", "args": MCP_ARGS}}}
    assert len(messages) == 7
    assert not (tmp_path / ".claude" / "settings.json.lintaid.bak").exists()  # nothing to back up


def test_install_is_idempotent(tmp_path: Path) -> None:
    install_claude_code(tmp_path, "project")
    settings = tmp_path / ".claude" / "settings.json"
    before = (settings.read_bytes(), (tmp_path / ".mcp.json").read_bytes())
    mtime = settings.stat().st_mtime_ns
    assert install_claude_code(tmp_path, "project") == []
    assert install_claude_code(tmp_path, "project") == []
    assert (settings.read_bytes(), (tmp_path / ".mcp.json").read_bytes()) == before
    assert settings.stat().st_mtime_ns == mtime


def test_install_keeps_foreign_hooks_and_backs_up(tmp_path: Path) -> None:
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    original = json.dumps(FOREIGN, indent=4)
    settings.write_text(original)
    (tmp_path / ".mcp.json").write_text(json.dumps(FOREIGN_MCP))

    install_claude_code(tmp_path, "project")
    data = read(settings)
    assert data["model"] == "opus"
    assert data["permissions"] == FOREIGN["permissions"]
    assert data["hooks"]["PreToolUse"] == FOREIGN["hooks"]["PreToolUse"]
    assert data["hooks"]["Stop"][0] == FOREIGN["hooks"]["Stop"][0]
    assert data["hooks"]["SessionStart"][0] == FOREIGN["hooks"]["SessionStart"][0]
    assert len(our_handlers(data)["Stop"]) == 1
    assert (tmp_path / ".claude" / "settings.json.lintaid.bak").read_text() == original
    mcp = read(tmp_path / ".mcp.json")
    assert mcp["mcpServers"]["other"] == FOREIGN_MCP["mcpServers"]["other"]
    assert mcp["mcpServers"]["lintaid"]["command"] == "lintaid-mcp"
    assert read(tmp_path / ".mcp.json.lintaid.bak") == FOREIGN_MCP


def test_reinstall_with_another_command_replaces_ours(tmp_path: Path) -> None:
    install_claude_code(tmp_path, "project")
    messages = install_claude_code(tmp_path, "project", hook_command="/opt/bin/lintaid-hook",
                                   mcp_command="/opt/bin/lintaid-mcp")
    assert any("updated Stop" in m for m in messages)
    data = read(tmp_path / ".claude" / "settings.json")
    ours = our_handlers(data)
    assert all(len(v) == 1 for v in ours.values())
    assert ours["Stop"][0][1]["command"] == "/opt/bin/lintaid-hook claude-code Stop"
    assert read(tmp_path / ".mcp.json")["mcpServers"]["lintaid"]["command"] == "/opt/bin/lintaid-mcp"


def test_mcp_entry_keeps_extra_keys(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"lintaid": {
        "type": "stdio", "command": "lintaid-mcp", "args": MCP_ARGS,
        "env": {"LINTAID_LOG": "warn"}}}}))
    install_claude_code(tmp_path, "project")
    entry = read(tmp_path / ".mcp.json")["mcpServers"]["lintaid"]
    assert entry["env"] == {"LINTAID_LOG": "warn"}
    assert not (tmp_path / ".mcp.json.lintaid.bak").exists()  # unchanged, so not rewritten


def test_invalid_json_is_refused(tmp_path: Path) -> None:
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"hooks": {,}')
    with pytest.raises(ValueError, match="not valid JSON"):
        install_claude_code(tmp_path, "project")
    assert settings.read_text() == '{"hooks": {,}'
    with pytest.raises(ValueError, match="not valid JSON"):
        uninstall_claude_code(tmp_path, "project")
    assert settings.read_text() == '{"hooks": {,}'

    settings.write_text("[1, 2]")
    with pytest.raises(ValueError, match="JSON object"):
        install_claude_code(tmp_path, "project")
    settings.write_text('{"hooks": []}')
    with pytest.raises(ValueError, match="hooks"):
        install_claude_code(tmp_path, "project")
    assert settings.read_text() == '{"hooks": []}'


def test_invalid_mcp_json_is_refused(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text("{nope")
    with pytest.raises(ValueError, match="not valid JSON"):
        install_claude_code(tmp_path, "project")
    assert (tmp_path / ".mcp.json").read_text() == "{nope"


def test_uninstall_is_exact(tmp_path: Path) -> None:
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps(FOREIGN))
    (tmp_path / ".mcp.json").write_text(json.dumps(FOREIGN_MCP))
    install_claude_code(tmp_path, "project")
    # A foreign handler added to one of our groups afterwards must survive uninstall.
    data = read(settings)
    group = next(g for g in data["hooks"]["Stop"]
                 if any(is_our_command(h["command"]) for h in g["hooks"]))
    group["hooks"].append({"type": "command", "command": "say stopped"})
    settings.write_text(json.dumps(data))

    messages = uninstall_claude_code(tmp_path, "project")
    assert len(messages) == 7
    after = read(settings)
    expected = json.loads(json.dumps(FOREIGN))
    expected["hooks"]["Stop"].append({"hooks": [{"type": "command", "command": "say stopped"}]})
    assert after == expected
    assert read(tmp_path / ".mcp.json") == FOREIGN_MCP
    assert uninstall_claude_code(tmp_path, "project") == []


def test_install_then_uninstall_leaves_nothing(tmp_path: Path) -> None:
    install_claude_code(tmp_path, "project")
    uninstall_claude_code(tmp_path, "project")
    assert not (tmp_path / ".claude" / "settings.json").exists()
    assert not (tmp_path / ".mcp.json").exists()
    assert uninstall_claude_code(tmp_path, "project") == []


def test_user_scope_honours_claude_config_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "claude-config"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    project = tmp_path / "project"
    project.mkdir()
    assert settings_path(project, "user") == config / "settings.json"
    install_claude_code(project, "user")
    assert set(our_handlers(read(config / "settings.json"))) == {e for e, _m, _t in HOOK_EVENTS}
    # user-level MCP servers live in .claude.json, beside the user's settings
    assert read(config / ".claude.json")["mcpServers"]["lintaid"]["command"] == "lintaid-mcp"
    assert not (project / ".mcp.json").exists()
    assert not (project / ".claude").exists()
    uninstall_claude_code(project, "user")
    assert not (config / "settings.json").exists()
    assert not (config / ".claude.json").exists()


def test_user_scope_defaults_to_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert settings_path(tmp_path / "p", "user") == tmp_path / ".claude" / "settings.json"
    with pytest.raises(ValueError):
        settings_path(tmp_path, "global")  # type: ignore[arg-type]


def test_is_our_command() -> None:
    assert is_our_command("lintaid-hook claude-code Stop")
    assert is_our_command("/usr/local/bin/lintaid-hook claude-code Stop")
    assert is_our_command("/venv/bin/python -I -S /venv/lib/lintaid_client/hook.py claude-code Stop")
    assert not is_our_command("lintaid-hook codex Stop")
    assert not is_our_command("notify-send lintaid-hook claude-code")
    assert not is_our_command(None)
