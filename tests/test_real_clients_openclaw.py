"""The real OpenClaw (``openclaw`` on npm, pinned in tests/clients/package.json) loads lintaid's
plugin from the files ``lintaid install openclaw`` wrote and runs two embedded agent sessions
(``openclaw agent --local``) against a loopback fake of an OpenAI-compatible Chat Completions
API (a ``models.providers`` entry). OpenClaw runs on Node 24, which the pins carry.

OpenClaw puts MCP tools behind its tool search: the model calls ``tool_call`` with the tool's
id (``lintaid__search``), as a model does after ``tool_search`` finds it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests import real_clients as rc
from tests.conftest import daemon_process
from tests.fake_models import FakeModel, call

pytestmark = [pytest.mark.real_client, pytest.mark.timeout(1200)]

MODEL = "fake-model"


def add_model(home: Path, root: Path, fake: FakeModel) -> None:
    """The person's own part of openclaw.json: a model provider and the agent's workspace."""
    path = home / ".openclaw" / "openclaw.json"
    config = json.loads(path.read_text(encoding="utf-8"))
    config["models"] = {"providers": {"fake": {
        "baseUrl": f"{fake.url}/v1", "apiKey": "fake-key", "api": "openai-completions",
        "models": [{"id": MODEL, "name": "Fake", "contextWindow": 128000, "maxTokens": 4096}]}}}
    config["agents"] = {"defaults": {"model": {"primary": f"fake/{MODEL}"},
                                     "workspace": str(root)}}
    rc.dump(path, config)


def openclaw(root: Path, home: Path, session: str, prompt: str) -> rc.Run:
    return rc.run([rc.require("openclaw"), "agent", "--local", "--session-id", session,
                   "-m", prompt], cwd=root, env=rc.client_env(home, PWD=str(root)),
                  timeout=480).check()


def test_plugin_loads_two_sessions_capture_once_recall_and_never_echo(tmp_path: Path) -> None:
    rc.require("openclaw")
    home = tmp_path / "home"
    root = rc.git_project(tmp_path / "service")
    daemon = daemon_process(root)
    try:
        rc.lintaid(root, "install", "openclaw", home=home)
        script = rc.story(call("read", path="README.md"),
                          call("tool_call", id="lintaid__search", args={"query": "upload limit"}))
        with FakeModel("chat", script, model=MODEL) as fake:
            add_model(home, root, fake)
            first = openclaw(root, home, "lintaid-s1", rc.DECIDE)
            assert rc.DECIDED in first.stdout, first.describe()
            # The provenance notice (a plugin from a local folder) is all OpenClaw says of it.
            said = [line for line in first.stderr.splitlines()
                    if line.startswith("[plugins]") and "lintaid" in line
                    and "can't verify where this plugin came from" not in line]
            assert not said, first.describe()
            turn = rc.decided(root, "openclaw")
            assert turn.tools == ["read"] and turn.paths == ["README.md"], turn

            second = openclaw(root, home, "lintaid-s2", rc.ASK)
            assert rc.ANSWER in second.stdout, second.describe()
            [asked] = [r for r in fake.turns(rc.ASKED) if r.tool_results == 0]
            assert re.search(rf"Recalled for this prompt \(lintaid\)(?:[^\"\\]|\\.)*{turn.id}",
                             asked.text), asked.text[-4000:]
            [searched] = [r for r in fake.turns(rc.ASKED) if r.tool_results == 1]
            assert "lintaid__search" in searched.text and turn.id in searched.text, \
                searched.text[-3000:]
        rc.check_memory(root, "openclaw")
    finally:
        daemon.stop()
