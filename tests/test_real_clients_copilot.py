"""The real GitHub Copilot CLI (``@github/copilot`` on npm, pinned in tests/clients/package.json)
runs two sessions (``copilot -p``) in a project lintaid was installed into, with no GitHub
account: its own provider settings (``COPILOT_PROVIDER_BASE_URL`` and friends, "bring your own
key") point it at a loopback fake of an OpenAI-compatible Chat Completions API.

Copilot CLI runs a project's hooks and MCP servers only in a trusted folder: ``-p`` takes
``--trust-folder`` for one session, as a script would. Its session log (``events.jsonl``)
records each hook's run and whether Copilot took its output (``hook.end``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests import real_clients as rc
from tests.conftest import daemon_process
from tests.fake_models import FakeModel, call

pytestmark = [pytest.mark.real_client, pytest.mark.timeout(600)]

MODEL = "fake-model"


def copilot_env(home: Path, root: Path, fake: FakeModel) -> dict[str, str]:
    return rc.client_env(home, PWD=str(root), COPILOT_PROVIDER_BASE_URL=f"{fake.url}/v1",
                         COPILOT_PROVIDER_TYPE="openai", COPILOT_PROVIDER_API_KEY="fake-key",
                         COPILOT_MODEL=MODEL, COPILOT_OFFLINE="1")


def copilot(root: Path, env: dict[str, str], prompt: str) -> rc.Run:
    return rc.run([rc.require("copilot"), "--trust-folder", "--allow-all-tools", "-p", prompt],
                  cwd=root, env=env, timeout=300).check()


def hook_runs(home: Path) -> list[dict[str, Any]]:
    """Every hook.end of every session: which hook, and whether it succeeded."""
    ends = []
    for log in sorted((home / ".copilot" / "session-state").glob("*/events.jsonl")):
        for line in log.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            if entry.get("type") == "hook.end":
                ends.append(entry["data"])
    return ends


def test_two_sessions_capture_once_recall_and_never_echo(tmp_path: Path) -> None:
    rc.require("copilot")
    home = tmp_path / "home"
    root = rc.git_project(tmp_path / "service")
    daemon = daemon_process(root)
    try:
        rc.lintaid(root, "install", "copilot", home=home)
        script = rc.story(call("view", path=str(root / "README.md")),
                          call("lintaid-search", query="upload limit"))
        with FakeModel("chat", script, model=MODEL) as fake:
            env = copilot_env(home, root, fake)
            first = copilot(root, env, rc.DECIDE)
            assert rc.DECIDED in first.stdout, first.describe()
            turn = rc.decided(root, "copilot")
            assert turn.tools == ["view"] and turn.paths == [str(root / "README.md")], turn

            second = copilot(root, env, rc.ASK)
            assert rc.ANSWER in second.stdout, second.describe()
            [asked] = [r for r in fake.turns(rc.ASKED)
                       if r.tool_results == 0 and r.body.get("tools")]
            assert re.search(rf"Project state \(lintaid\)(?:[^\"\\]|\\.)*{turn.id}", asked.text), \
                asked.text[-4000:]
            assert re.search(rf"Recalled for this prompt \(lintaid\)(?:[^\"\\]|\\.)*{turn.id}",
                             asked.text), asked.text[-4000:]
            [searched] = [r for r in fake.turns(rc.ASKED) if r.tool_results == 1]
            assert turn.id in searched.text, searched.text[-3000:]
        rc.check_memory(root, "copilot")
        runs = hook_runs(home)
        assert {r["hookType"] for r in runs} >= {"sessionStart", "userPromptSubmitted",
                                                "agentStop"}, runs
        assert all(r["success"] for r in runs), runs

        # `copilot mcp list` shows a project's servers once the folder is trusted for good,
        # which Copilot records in its config.json.
        rc.dump(home / ".copilot" / "config.json", {"trustedFolders": [str(root)]})
        listed = rc.run([rc.require("copilot"), "mcp", "list"], cwd=root, env=env).check()
        assert re.search(r"Workspace servers:\s+lintaid \(local\)", listed.stdout), \
            listed.describe()
    finally:
        daemon.stop()
