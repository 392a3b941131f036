"""The real OpenCode (``opencode-ai`` on npm, pinned in tests/clients/package.json) loads the
plugin ``lintaid install opencode`` wrote and runs two sessions (``opencode run``) against a
loopback fake of an OpenAI-compatible Chat Completions API (a ``provider`` entry in the fake
home's ``opencode.json``; OpenCode ships the ``@ai-sdk/openai-compatible`` provider).

OpenCode reads the working directory from ``PWD``, as a shell sets it, and joins the words of
``opencode run`` with spaces (quoting a word that holds one), so the prompt goes as words.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests import real_clients as rc
from tests.conftest import daemon_process
from tests.fake_models import FakeModel, call

pytestmark = [pytest.mark.real_client, pytest.mark.timeout(600)]

MODEL = "fake-model"


def opencode_env(home: Path, root: Path, fake: FakeModel) -> dict[str, str]:
    rc.dump(home / ".config" / "opencode" / "opencode.json", {
        "provider": {"fake": {"npm": "@ai-sdk/openai-compatible", "name": "Fake",
                              "options": {"baseURL": f"{fake.url}/v1", "apiKey": "fake-key"},
                              "models": {MODEL: {"name": "Fake"}}}},
        "model": f"fake/{MODEL}", "autoupdate": False, "share": "disabled"})
    return rc.client_env(home, PWD=str(root))


def opencode(root: Path, env: dict[str, str], prompt: str) -> rc.Run:
    """One ``opencode run`` session, whose log (OpenCode names no plugin when one loads and
    runs well, only when it fails) holds no error or warning but the catalogue fetch this
    offline machine cannot make."""
    run = rc.run([rc.require("opencode"), "run", "--print-logs", *prompt.split()], cwd=root,
                 env=env, timeout=300).check()
    complaints = [line for line in run.stderr.splitlines()
                  if re.search(r"\blevel=(?:ERROR|WARN)\b", line)
                  and 'message="Failed to fetch models.dev"' not in line]
    assert not complaints, run.describe()
    return run


def test_plugin_two_sessions_capture_once_recall_and_never_echo(tmp_path: Path) -> None:
    rc.require("opencode")
    home = tmp_path / "home"
    root = rc.git_project(tmp_path / "service")
    daemon = daemon_process(root)
    try:
        rc.lintaid(root, "install", "opencode", home=home)
        script = rc.story(call("read", filePath=str(root / "README.md")),
                          call("lintaid_search", query="upload limit"))
        with FakeModel("chat", script, model=MODEL) as fake:
            env = opencode_env(home, root, fake)
            first = opencode(root, env, rc.DECIDE)
            assert rc.DECIDED in first.stdout, first.describe()
            turn = rc.decided(root, "opencode")
            assert turn.tools == ["read"] and turn.paths == [str(root / "README.md")], turn

            second = opencode(root, env, rc.ASK)
            assert rc.ANSWER in second.stdout, second.describe()
            # The agent's requests (a title request has no tools) carried both contexts.
            [asked] = [r for r in fake.turns(rc.ASKED)
                       if r.tool_results == 0 and r.body.get("tools")]
            system = " ".join(str(m.get("content")) for m in asked.body["messages"]
                              if m.get("role") == "system")
            assert re.search(rf"Project state \(lintaid\).*{turn.id}", system, re.S), system
            assert re.search(rf"Recalled for this prompt \(lintaid\).*{turn.id}", system, re.S)
            [searched] = [r for r in fake.turns(rc.ASKED) if r.tool_results == 1]
            assert turn.id in searched.text, searched.text[-3000:]
        rc.check_memory(root, "opencode")

        listed = rc.run([rc.require("opencode"), "mcp", "list"], cwd=root, env=env).check()
        assert re.search(r"lintaid.*connected", listed.stdout + listed.stderr, re.I), \
            listed.describe()
    finally:
        daemon.stop()
