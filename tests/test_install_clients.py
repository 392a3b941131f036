"""Every client's installer on configuration files that already hold other hooks, other MCP
servers, comments and their own layout: install keeps them, a second install changes nothing,
uninstall gives every file back byte for byte (and removes what it created), and a file that
does not parse is refused with its name and line, never a traceback."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import tomlkit

from lintaid.integrations import registry
from lintaid.integrations.base import Commands, Scope
from lintaid.integrations.config_files import BACKUP_SUFFIX, ConfigError
from lintaid.integrations.hook_entries import is_hook_command
from tests.conftest import invoke

HOOK = ("/opt/venv/bin/python", "-I", "-S", "/opt/venv/lib/lintaid_client/hook.py")
MCP = ("/opt/venv/bin/lintaid-mcp",)
COMMANDS = Commands(HOOK, MCP)
OTHER_COMMANDS = Commands(("/usr/local/bin/lintaid-hook",), ("/usr/local/bin/lintaid-mcp",))


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh home folder; every client's own location variable cleared."""
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "OPENCLAW_STATE_DIR",
                 "OPENCLAW_CONFIG_PATH", "XDG_CONFIG_HOME", "COPILOT_HOME"):
        monkeypatch.delenv(name, raising=False)
    return folder


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


def dump(data: Any, indent: int | str = 2) -> str:
    return json.dumps(data, indent=indent) + "\n"


@dataclass
class Case:
    client: str
    scope: Scope
    # relative to the project ("P/...") or the home folder ("H/..."): the developer's files
    files: dict[str, str]
    check: Callable[[Callable[[str], Any]], None]
    created: list[str] = field(default_factory=list)  # files an install into nothing creates

    @property
    def id(self) -> str:
        return f"{self.client}-{self.scope}"


def place(name: str, root: Path, home: Path) -> Path:
    base, rel = name.split("/", 1)
    return (root if base == "P" else home) / rel


# --- the developers' files ----------------------------------------------------------------------
CLAUDE_SETTINGS = dump({
    "model": "opus",
    "permissions": {"allow": ["Bash(git status)"]},
    "hooks": {
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
        "PreToolUse": [{"matcher": "Bash",
                        "hooks": [{"type": "command", "command": "guard.sh", "timeout": 3}]}],
    },
}, indent=4)
CLAUDE_MCP = json.dumps({"mcpServers": {"other": {"command": "other-mcp", "args": ["x"]}}})

CODEX_HOOKS = dump({
    "description": "team hooks",
    "hooks": {
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
        "PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "./scripts/guard.sh", "timeout": 5}]}],
    },
})
CODEX_CONFIG = """\
# Codex settings for this repo
model = "gpt-5-codex"  # the default model
approval_policy = "on-request"

[features]
# hooks are on by default
web_search_request = true

[mcp_servers.docs]
command = "npx"
args = ["-y", "@acme/docs-mcp"]   # pinned
env = { DOCS_TOKEN_FILE = "~/.docs" }

[profiles.fast]
model = "gpt-5-codex-mini"
"""

GEMINI_SETTINGS = dump({
    "theme": "GitHub",
    "hooks": {"BeforeTool": [{"matcher": "write_file", "hooks": [
        {"name": "guard", "type": "command", "command": "./guard.sh", "timeout": 5000}]}],
        "AfterAgent": [{"hooks": [{"name": "say", "type": "command", "command": "say done"}]}]},
    "mcpServers": {"github": {"command": "gh-mcp", "args": [], "trust": False}},
}, indent="\t")

CURSOR_HOOKS = dump({"version": 1, "hooks": {
    "afterFileEdit": [{"command": "./hooks/format.sh"}],
    "stop": [{"command": "./hooks/notify.sh"}],
}})
CURSOR_MCP = dump({"mcpServers": {"linear": {"url": "https://mcp.linear.app/sse"}}})

AGY_HOOKS = dump({"defenseclaw": {"PreToolUse": [{"matcher": ".*", "hooks": [
    {"type": "command", "command": "~/.defenseclaw/hooks/antigravity-hook.sh"}]}]}})
AGY_MCP = dump({"mcpServers": {"context7": {"command": "npx", "args": ["-y", "ctx7"]}}})

OPENCLAW_CONFIG = dump({
    "gateway": {"port": 18789, "bind": "loopback"},
    "plugins": {"allow": ["voice-call"], "entries": {"voice-call": {"enabled": True}}},
    "mcp": {"servers": {"fs": {"command": "fs-mcp"}}},
})

OPENCODE_CONFIG = dump({
    "$schema": "https://opencode.ai/config.json",
    "model": "anthropic/claude-sonnet-4-5",
    "mcp": {"playwright": {"type": "local", "command": ["npx", "-y", "@playwright/mcp"]}},
    "permission": {"bash": {"git *": "allow", "*": "ask"}},
})

COPILOT_MCP = dump({"mcpServers": {"github": {"type": "http",
                                              "url": "https://api.githubcopilot.com/mcp/"}}})


def ours(client: str) -> Callable[[Any], bool]:
    return lambda h: isinstance(h, dict) and is_hook_command(h.get("command"), client)


def grouped_handlers(hooks: dict[str, Any], client: str) -> dict[str, list[dict[str, Any]]]:
    found: dict[str, list[dict[str, Any]]] = {}
    for event, groups in hooks.items():
        for group in groups:
            for handler in group.get("hooks", []):
                if ours(client)(handler):
                    found.setdefault(event, []).append(handler)
    return found


def check_claude(read: Callable[[str], Any]) -> None:
    settings = read("P/.claude/settings.json")
    assert settings["model"] == "opus" and settings["permissions"]
    assert settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"] == "guard.sh"
    assert settings["hooks"]["Stop"][0]["hooks"][0]["command"] == "notify-send done"
    assert set(grouped_handlers(settings["hooks"], "claude-code")) >= {"Stop", "SessionStart"}
    servers = read("P/.mcp.json")["mcpServers"]
    assert servers["other"] == {"command": "other-mcp", "args": ["x"]}
    assert servers["lintaid"]["args"] == ["--project-env", "CLAUDE_PROJECT_DIR",
                                          "--session-env", "CLAUDE_CODE_SESSION_ID"]


def check_codex(prefix: str) -> Callable[[Callable[[str], Any]], None]:
    def check(read: Callable[[str], Any]) -> None:
        hooks = read(f"{prefix}/hooks.json")
        assert hooks["description"] == "team hooks"
        assert hooks["hooks"]["PreToolUse"][0]["hooks"][0]["command"] == "./scripts/guard.sh"
        mine = grouped_handlers(hooks["hooks"], "codex")
        assert set(mine) == {"SessionStart", "UserPromptSubmit", "Stop", "SubagentStop",
                             "PreCompact", "SessionEnd"}
        assert mine["SessionEnd"][0]["timeout"] == 3
        assert mine["Stop"][0]["command"].endswith("hook.py codex Stop")
        text = read(f"{prefix}/config.toml")
        assert "# Codex settings for this repo" in text and "# pinned" in text
        assert "# hooks are on by default" in text
        config = tomlkit.parse(text).unwrap()
        assert config["mcp_servers"]["docs"]["env"] == {"DOCS_TOKEN_FILE": "~/.docs"}
        assert config["mcp_servers"]["lintaid"] == {"command": MCP[0], "args": []}
        assert config["profiles"]["fast"]["model"] == "gpt-5-codex-mini"
    return check


def check_gemini(prefix: str) -> Callable[[Callable[[str], Any]], None]:
    def check(read: Callable[[str], Any]) -> None:
        settings = read(f"{prefix}/.gemini/settings.json")
        assert settings["theme"] == "GitHub"
        assert settings["hooks"]["BeforeTool"][0]["hooks"][0]["name"] == "guard"
        assert settings["hooks"]["AfterAgent"][0]["hooks"][0]["command"] == "say done"
        mine = grouped_handlers(settings["hooks"], "gemini")
        assert set(mine) == {"SessionStart", "BeforeAgent", "AfterAgent", "PreCompress",
                             "SessionEnd"}
        assert mine["BeforeAgent"][0]["timeout"] == 10_000  # milliseconds
        assert mine["BeforeAgent"][0]["name"] == "lintaid-BeforeAgent"
        assert settings["mcpServers"]["github"]["command"] == "gh-mcp"
        assert settings["mcpServers"]["lintaid"] == {"command": MCP[0], "args": []}
    return check


def check_cursor(prefix: str) -> Callable[[Callable[[str], Any]], None]:
    def check(read: Callable[[str], Any]) -> None:
        hooks = read(f"{prefix}/.cursor/hooks.json")
        assert hooks["version"] == 1
        assert hooks["hooks"]["afterFileEdit"] == [{"command": "./hooks/format.sh"}]
        assert hooks["hooks"]["stop"][0] == {"command": "./hooks/notify.sh"}
        assert [h for h in hooks["hooks"]["stop"] if ours("cursor")(h)]
        assert [h for h in hooks["hooks"]["beforeSubmitPrompt"] if ours("cursor")(h)]
        assert [h for h in hooks["hooks"]["sessionStart"] if ours("cursor")(h)]
        servers = read(f"{prefix}/.cursor/mcp.json")["mcpServers"]
        assert servers["linear"] == {"url": "https://mcp.linear.app/sse"}
        assert servers["lintaid"]["args"] == ["--project", "${workspaceFolder}"]
    return check


def check_agy(read: Callable[[str], Any]) -> None:
    hooks = read("H/.gemini/config/hooks.json")
    assert "defenseclaw" in hooks
    assert set(hooks["lintaid"]) == {"PreInvocation", "PostInvocation", "Stop"}
    assert ours("agy")(hooks["lintaid"]["Stop"][0])
    servers = read("H/.gemini/config/mcp_config.json")["mcpServers"]
    assert servers["context7"]["args"] == ["-y", "ctx7"] and "lintaid" in servers


def check_openclaw(pinned: bool) -> Callable[[Callable[[str], Any]], None]:
    def check(read: Callable[[str], Any]) -> None:
        config = read("H/.openclaw/openclaw.json")
        assert config["gateway"] == {"port": 18789, "bind": "loopback"}
        assert config["plugins"]["allow"] == ["voice-call", "lintaid"]
        assert config["plugins"]["entries"]["voice-call"] == {"enabled": True}
        entry = config["plugins"]["entries"]["lintaid"]
        assert entry["enabled"] is True and entry["hooks"]["allowConversationAccess"] is True
        assert entry["config"]["hookCommand"] == list(HOOK)
        assert ("project" in entry["config"]) is pinned
        assert config["mcp"]["servers"]["fs"] == {"command": "fs-mcp"}
        assert ("--project" in config["mcp"]["servers"]["lintaid"]["args"]) is pinned
        assert read("H/.openclaw/extensions/lintaid/index.js").startswith("// lintaid")
    return check


def check_opencode(prefix: str, plugins: str, pinned: bool) -> Callable[[Callable[[str], Any]], None]:
    def check(read: Callable[[str], Any]) -> None:
        config = read(f"{prefix}/opencode.json")
        assert config["model"] == "anthropic/claude-sonnet-4-5"
        assert config["permission"] == {"bash": {"git *": "allow", "*": "ask"}}
        assert config["mcp"]["playwright"]["command"] == ["npx", "-y", "@playwright/mcp"]
        mine = config["mcp"]["lintaid"]
        assert mine["type"] == "local" and mine["enabled"] is True
        assert mine["command"][0] == MCP[0] and ("--project" in mine["command"]) is pinned
        plugin = read(f"{plugins}/lintaid.js")
        assert plugin.startswith("// lintaid for OpenCode")
        [settings] = [line for line in plugin.splitlines() if line.startswith("const SETTINGS")]
        assert json.dumps(list(HOOK)) in settings and ("project\": null" not in settings) is pinned
    return check


def check_copilot(hooks: str, mcp: str) -> Callable[[Callable[[str], Any]], None]:
    def check(read: Callable[[str], Any]) -> None:
        mine = read(hooks)
        assert mine["version"] == 1
        assert set(mine["hooks"]) == {"SessionStart", "UserPromptSubmit", "Stop", "PreCompact",
                                      "SessionEnd"}
        [stop] = mine["hooks"]["Stop"]
        assert ours("copilot")(stop) and stop["timeoutSec"] == 10
        servers = read(mcp)["mcpServers"]
        assert servers["github"]["url"] == "https://api.githubcopilot.com/mcp/"
        assert servers["lintaid"] == {"type": "local", "command": MCP[0], "args": [],
                                      "tools": ["*"]}
    return check


CASES = [
    Case("claude-code", "project",
         {"P/.claude/settings.json": CLAUDE_SETTINGS, "P/.mcp.json": CLAUDE_MCP}, check_claude,
         ["P/.claude/settings.json", "P/.mcp.json"]),
    Case("codex", "project",
         {"P/.codex/hooks.json": CODEX_HOOKS, "P/.codex/config.toml": CODEX_CONFIG},
         check_codex("P/.codex"), ["P/.codex/hooks.json", "P/.codex/config.toml"]),
    Case("codex", "user",
         {"H/.codex/hooks.json": CODEX_HOOKS, "H/.codex/config.toml": CODEX_CONFIG},
         check_codex("H/.codex"), ["H/.codex/hooks.json", "H/.codex/config.toml"]),
    Case("gemini", "project", {"P/.gemini/settings.json": GEMINI_SETTINGS},
         check_gemini("P"), ["P/.gemini/settings.json"]),
    Case("gemini", "user", {"H/.gemini/settings.json": GEMINI_SETTINGS},
         check_gemini("H"), ["H/.gemini/settings.json"]),
    Case("cursor", "project",
         {"P/.cursor/hooks.json": CURSOR_HOOKS, "P/.cursor/mcp.json": CURSOR_MCP},
         check_cursor("P"), ["P/.cursor/hooks.json", "P/.cursor/mcp.json"]),
    Case("cursor", "user",
         {"H/.cursor/hooks.json": CURSOR_HOOKS, "H/.cursor/mcp.json": CURSOR_MCP},
         check_cursor("H"), ["H/.cursor/hooks.json", "H/.cursor/mcp.json"]),
    Case("agy", "user",
         {"H/.gemini/config/hooks.json": AGY_HOOKS, "H/.gemini/config/mcp_config.json": AGY_MCP},
         check_agy, ["H/.gemini/config/hooks.json", "H/.gemini/config/mcp_config.json"]),
    Case("openclaw", "project", {"H/.openclaw/openclaw.json": OPENCLAW_CONFIG},
         check_openclaw(pinned=True),
         ["H/.openclaw/openclaw.json", "H/.openclaw/extensions/lintaid/index.js"]),
    Case("openclaw", "user", {"H/.openclaw/openclaw.json": OPENCLAW_CONFIG},
         check_openclaw(pinned=False),
         ["H/.openclaw/openclaw.json", "H/.openclaw/extensions/lintaid/index.js"]),
    Case("opencode", "project", {"P/opencode.json": OPENCODE_CONFIG},
         check_opencode("P", "P/.opencode/plugins", pinned=True),
         ["P/opencode.json", "P/.opencode/plugins/lintaid.js"]),
    Case("opencode", "user", {"H/.config/opencode/opencode.json": OPENCODE_CONFIG},
         check_opencode("H/.config/opencode", "H/.config/opencode/plugins", pinned=False),
         ["H/.config/opencode/opencode.json", "H/.config/opencode/plugins/lintaid.js"]),
    Case("copilot", "project", {"P/.github/mcp.json": COPILOT_MCP},
         check_copilot("P/.github/hooks/lintaid.json", "P/.github/mcp.json"),
         ["P/.github/hooks/lintaid.json", "P/.github/mcp.json"]),
    Case("copilot", "user", {"H/.copilot/mcp-config.json": COPILOT_MCP},
         check_copilot("H/.copilot/hooks/lintaid.json", "H/.copilot/mcp-config.json"),
         ["H/.copilot/hooks/lintaid.json", "H/.copilot/mcp-config.json"]),
]


def reader(root: Path, home: Path) -> Callable[[str], Any]:
    def read(name: str) -> Any:
        text = place(name, root, home).read_text()
        return json.loads(text) if name.endswith(".json") else text
    return read


def snapshot(root: Path, home: Path) -> dict[str, bytes]:
    """Every file under the project and the home folder, by path."""
    out = {}
    for base in (root, home):
        for dirpath, _dirs, names in os.walk(base):
            for name in names:
                path = Path(dirpath) / name
                out[str(path)] = path.read_bytes()
    return out


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_install_keeps_theirs_and_uninstall_gives_it_back(case: Case, root: Path,
                                                          home: Path) -> None:
    for name, text in case.files.items():
        path = place(name, root, home)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        os.chmod(path, 0o600)
    before = snapshot(root, home)
    client = registry.get(case.client)

    report = client.install(root, case.scope, COMMANDS)
    assert report.changes and report.next_steps
    case.check(reader(root, home))
    for name in case.files:  # the developer's file is kept beside it, as it was
        path = place(name, root, home)
        backup = path.with_name(path.name + BACKUP_SUFFIX)
        assert backup.read_text() == case.files[name]
        assert path.stat().st_mode & 0o777 == 0o600
    assert client.installed(root)

    installed = snapshot(root, home)
    assert client.install(root, case.scope, COMMANDS).changes == []  # idempotent
    assert snapshot(root, home) == installed

    report = client.uninstall(root, case.scope, COMMANDS)
    assert report.changes
    assert snapshot(root, home) == before  # byte for byte, backups gone
    assert client.uninstall(root, case.scope, COMMANDS).changes == []


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_install_into_nothing_and_uninstall_leaves_nothing(case: Case, root: Path,
                                                           home: Path) -> None:
    client = registry.get(case.client)
    client.install(root, case.scope, COMMANDS)
    for name in case.created:
        assert place(name, root, home).is_file(), name
    found = client.installed(root)
    assert found, "installed() finds the install"
    client.uninstall(root, case.scope, COMMANDS)
    assert snapshot(root, home) == {}
    assert client.installed(root) == []


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_reinstall_with_other_commands_updates_ours_only(case: Case, root: Path,
                                                         home: Path) -> None:
    for name, text in case.files.items():
        path = place(name, root, home)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    before = snapshot(root, home)
    client = registry.get(case.client)
    client.install(root, case.scope, COMMANDS)
    changes = client.install(root, case.scope, OTHER_COMMANDS).changes
    assert any("updated" in c for c in changes)
    text = "".join(place(n, root, home).read_text() for n in case.files)
    assert "/usr/local/bin/lintaid-mcp" in text
    assert "/opt/venv/bin/lintaid-mcp" not in text
    assert "/opt/venv/lib/lintaid_client/hook.py" not in text
    client.uninstall(root, case.scope, OTHER_COMMANDS)
    assert snapshot(root, home) == before


def test_a_change_of_theirs_while_installed_is_kept(root: Path, home: Path) -> None:
    codex = registry.get("codex")
    hooks = root / ".codex" / "hooks.json"
    config = root / ".codex" / "config.toml"
    hooks.parent.mkdir()
    hooks.write_text(CODEX_HOOKS)
    config.write_text(CODEX_CONFIG)
    codex.install(root, "project", COMMANDS)
    config.write_text(config.read_text() + "\n# added later\n[mcp_servers.late]\ncommand = \"x\"\n")
    codex.uninstall(root, "project", COMMANDS)
    assert hooks.read_text() == CODEX_HOOKS
    text = config.read_text()
    assert "# added later" in text and "[mcp_servers.late]" in text
    assert "lintaid" not in text and "# pinned" in text
    # written as checked: the backup of the file as it was before lintaid is gone too
    assert not config.with_name("config.toml" + BACKUP_SUFFIX).exists()


BROKEN = [
    ("claude-code", "project", "P/.claude/settings.json", '{\n  "hooks": {,}\n}\n', 2),
    ("claude-code", "project", "P/.mcp.json", '{"mcpServers":\n\n  {"a": 1,}}', 3),
    ("codex", "project", "P/.codex/hooks.json", '{\n\n  "hooks": [\n}', 4),
    ("codex", "project", "P/.codex/config.toml", 'model = "x"\n\n[mcp_servers\ncommand = 1\n', 3),
    ("gemini", "project", "P/.gemini/settings.json",
     '{\n  // comments\n  "theme": "x"\n}\n', 2),
    ("cursor", "project", "P/.cursor/mcp.json", '{"mcpServers": {\n"a": }\n', 2),
    ("agy", "user", "H/.gemini/config/hooks.json", "{\n\n\n  nope\n}", 4),
    ("openclaw", "user", "H/.openclaw/openclaw.json",
     "{\n  // JSON5\n  gateway: { port: 1 },\n}\n", 2),
    ("opencode", "project", "P/opencode.json", '{\n  // JSONC\n  "model": "x"\n}\n', 2),
]


@pytest.mark.parametrize(("client", "scope", "name", "text", "line"), BROKEN,
                         ids=[f"{b[0]}-{b[2].rsplit('/', 1)[-1]}" for b in BROKEN])
def test_a_file_that_does_not_parse_is_refused(client: str, scope: Scope, name: str,
                                               text: str, line: int, root: Path,
                                               home: Path) -> None:
    path = place(name, root, home)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    with pytest.raises(ConfigError, match=f"^{path}:{line}: "):
        registry.get(client).install(root, scope, COMMANDS)
    assert path.read_text() == text
    assert snapshot(root, home) == {str(path): text.encode()}  # nothing else written either


def test_cli_install_uninstall_and_refusal(root: Path, home: Path) -> None:
    (root / ".codex").mkdir()
    (root / ".codex" / "config.toml").write_text(CODEX_CONFIG)
    result = invoke(root, "install", "codex")
    assert result.exit_code == 0, result.stderr
    assert f"added MCP server 'lintaid' in {root}/.codex/config.toml" in result.stdout
    assert "next: Codex runs new or changed hooks only once trusted" in result.stdout
    assert "/hooks" in result.stdout
    assert "nothing changed" in invoke(root, "install", "codex").stdout
    assert invoke(root, "uninstall", "codex").exit_code == 0
    assert (root / ".codex" / "config.toml").read_text() == CODEX_CONFIG
    assert not (root / ".codex" / "hooks.json").exists()

    result = invoke(root, "install", "agy")
    assert result.exit_code != 0 and "--user" in result.stderr
    assert invoke(root, "install", "agy", "--user").exit_code == 0
    assert (home / ".gemini" / "config" / "hooks.json").exists()

    (root / ".cursor").mkdir()
    (root / ".cursor" / "hooks.json").write_text('{"version": 1,\n "hooks": {\n')
    result = invoke(root, "install", "cursor")  # an unexpected error would raise here
    assert result.exit_code != 0
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"lintaid: {root}/.cursor/hooks.json:3: not valid JSON")

    result = invoke(root, "install", "claude-code")
    assert result.exit_code == 0, result.stderr
    assert "approve the project's 'lintaid' MCP server" in result.stdout


def test_hooks_turned_off_are_reported_not_changed(root: Path, home: Path) -> None:
    config = root / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text("[features]\nhooks = false  # noisy\n")
    report = registry.get("codex").install(root, "project", COMMANDS)
    assert any("[features] hooks = false" in step for step in report.next_steps)
    assert "hooks = false  # noisy" in config.read_text()

    settings = home / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"hooksConfig": {"enabled": False,
                                                    "disabled": ["lintaid-BeforeAgent"]}}))
    report = registry.get("gemini").install(root, "user", COMMANDS)
    assert any("hooksConfig.enabled = false" in step for step in report.next_steps)
    assert any("lintaid-BeforeAgent" in step for step in report.next_steps)
    assert json.loads(settings.read_text())["hooksConfig"]["enabled"] is False


def test_a_new_toml_file_has_no_stray_blank_line(root: Path, home: Path) -> None:
    registry.get("codex").install(root, "project", COMMANDS)
    assert (root / ".codex" / "config.toml").read_text() == (
        f'[mcp_servers.lintaid]\ncommand = "{MCP[0]}"\nargs = []\n')


def test_a_linked_config_file_stays_a_link(root: Path, home: Path, tmp_path: Path) -> None:
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    (dotfiles / "settings.json").write_text(GEMINI_SETTINGS)
    link = home / ".gemini" / "settings.json"
    link.parent.mkdir()
    link.symlink_to(dotfiles / "settings.json")
    gemini = registry.get("gemini")
    gemini.install(root, "user", COMMANDS)
    assert link.is_symlink()
    assert "lintaid" in (dotfiles / "settings.json").read_text()
    gemini.uninstall(root, "user", COMMANDS)
    assert link.is_symlink() and (dotfiles / "settings.json").read_text() == GEMINI_SETTINGS
    assert sorted(p.name for p in dotfiles.iterdir()) == ["settings.json"]
