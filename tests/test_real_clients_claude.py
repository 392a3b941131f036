"""The real Claude Code (pinned in tests/clients/package.json) runs two sessions of real turns
in a project lintaid was installed into, against a loopback fake of the Anthropic Messages API.

Claude Code's npm package installs a stub that its postinstall script replaces with the native
binary, so the pins allow that one script. ``claude -p`` loads the project's ``.mcp.json``
server by itself; ``claude mcp list`` waits for a person's approval, recorded here the way
Claude Code records it (``~/.claude.json``), leaving lintaid's files as installed.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests import real_clients as rc
from tests.conftest import daemon_process
from tests.fake_models import FakeModel, call

pytestmark = [pytest.mark.real_client, pytest.mark.timeout(600)]


def claude(root: Path, home: Path, fake: FakeModel, prompt: str) -> tuple[rc.Run, str]:
    """One ``claude -p`` session; its result, and Claude Code's debug log of it."""
    env = rc.client_env(home, ANTHROPIC_BASE_URL=fake.url, ANTHROPIC_API_KEY="fake-key")
    debug = home / ".claude" / "debug"
    before = set(debug.glob("*.txt")) if debug.exists() else set()
    run = rc.run([rc.require("claude"), "--debug", "--allowedTools", "mcp__lintaid__search",
                  "-p", prompt], cwd=root, env=env).check()
    [log] = [p for p in debug.glob("*.txt") if p not in before and not p.is_symlink()]
    return run, log.read_text(encoding="utf-8", errors="replace")


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, Path]:
    rc.require("claude")
    home = tmp_path / "home"
    root = rc.git_project(tmp_path / "service")
    # What a person's first run records: onboarding done, the folder trusted, the project's
    # MCP server approved.
    rc.dump(home / ".claude.json", {"hasCompletedOnboarding": True, "projects": {str(root): {
        "hasTrustDialogAccepted": True, "enabledMcpjsonServers": ["lintaid"]}}})
    return root, home


def hook_verdicts(log: str) -> dict[str, str]:
    """event -> what Claude Code said of lintaid's hook output: "valid", or its complaint."""
    out: dict[str, str] = {}
    lines = log.splitlines()
    for index, line in enumerate(lines):
        found = re.search(r"Hooks: (\w+)(?::\w+)? \[.*(?:hook|lintaid-hook)\.py claude-code \w+\] "
                          r"(?:finished|completed) with status (\d+)", line)
        if not found:
            continue
        later = "\n".join(lines[index + 1:index + 4])
        valid = found.group(2) == "0" and "Successfully parsed and validated hook JSON" in later
        out[found.group(1)] = "valid" if valid else later
    return out


def test_two_sessions_capture_once_recall_and_never_echo(
        project: tuple[Path, Path]) -> None:
    root, home = project
    daemon = daemon_process(root)
    try:
        rc.lintaid(root, "install", "claude-code", home=home)
        script = rc.story(call("Read", file_path=str(root / "README.md")),
                          call("mcp__lintaid__search", query="upload limit"))
        with FakeModel("anthropic", script) as fake:
            first, log = claude(root, home, fake, rc.DECIDE)
            assert rc.DECIDED in first.stdout, first.describe()
            verdicts = hook_verdicts(log)
            for event in ("SessionStart", "UserPromptSubmit", "Stop"):
                assert verdicts.get(event) == "valid", (event, verdicts)
            turn = rc.decided(root, "claude-code")
            assert turn.tools == ["Read"] and turn.paths == [str(root / "README.md")], turn

            second, log = claude(root, home, fake, rc.ASK)
            assert rc.ANSWER in second.stdout, second.describe()
            verdicts = hook_verdicts(log)
            for event in ("SessionStart", "UserPromptSubmit", "Stop"):
                assert verdicts.get(event) == "valid", (event, verdicts)
            for event in ("SessionStart", "UserPromptSubmit"):
                assert re.search(rf"Hook {event} \(.*(?:hook|lintaid-hook)\.py.*\) provided "
                                 r"additionalContext", log), event
            # Both contexts reached the model, each naming the first session's turn.
            [asked] = [r for r in fake.turns(rc.ASKED) if r.tool_results == 0]
            text = asked.text
            assert re.search(r"SessionStart hook additional context: Project state \(lintaid\)"
                             rf"(?:[^\"\\]|\\.)*{turn.id}", text), text[:4000]
            assert re.search(rf"Recalled for this prompt \(lintaid\)(?:[^\"\\]|\\.)*{turn.id}", text), \
                text[:4000]
            # The MCP server connected and the search tool round-tripped.
            [searched] = [r for r in fake.turns(rc.ASKED) if r.tool_results == 1]
            assert '"tool_result"' in searched.text and turn.id in searched.text, \
                searched.text[-3000:]
        rc.check_memory(root, "claude-code")

        listed = rc.run([rc.require("claude"), "mcp", "list"], cwd=root,
                        env=rc.client_env(home)).check()
        assert re.search(r"lintaid: .*lintaid_client\.mcp.* - ✔ Connected", listed.stdout), \
            listed.describe()
    finally:
        daemon.stop()
