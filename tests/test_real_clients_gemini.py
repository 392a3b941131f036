"""The real Gemini CLI (pinned in tests/clients/package.json) runs two sessions of real turns in
a project lintaid was installed into, against a loopback fake of the Gemini API.

Gemini CLI writes the injected ``<hook_context>`` and its own ``<session_context>`` into the
user's message; before lintaid's readers dropped them, the second session captured lintaid's
own memories as the person's request, and a PreCompress that fires between a tool call and
the model's answer stored the first turn without its result.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests import real_clients as rc
from tests.conftest import daemon_process
from tests.fake_models import FakeModel, call

pytestmark = [pytest.mark.real_client, pytest.mark.timeout(600)]

MODEL = "gemini-2.5-flash"  # named: the automatic router first asks a classifier


def gemini(root: Path, home: Path, fake: FakeModel, prompt: str) -> rc.Run:
    env = rc.client_env(home, GOOGLE_GEMINI_BASE_URL=fake.url, GEMINI_API_KEY="fake-key")
    return rc.run([rc.require("gemini"), "--debug", "-m", MODEL,
                   "--allowed-tools", "mcp_lintaid_search", "-p", prompt],
                  cwd=root, env=env).check()


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, Path]:
    """A git project, and a fake home whose settings select the API key (the fake's base URL
    would select a gateway login that -p refuses) and trust the project's folder."""
    rc.require("gemini")
    home = tmp_path / "home"
    root = rc.git_project(tmp_path / "service")
    rc.dump(home / ".gemini" / "settings.json",
            {"security": {"auth": {"selectedType": "gemini-api-key"}}})
    rc.dump(home / ".gemini" / "trustedFolders.json", {str(root): "TRUST_FOLDER"})
    return root, home


def failed_hooks(run: rc.Run, *events: str) -> list[str]:
    """The events whose hooks Gemini CLI's debug output does not report as successful."""
    out = run.stdout + run.stderr
    return [e for e in events
            if not re.search(rf"Hook execution for {e}: 1 hooks executed successfully", out)]


def test_two_sessions_capture_once_recall_and_never_echo(
        project: tuple[Path, Path]) -> None:
    root, home = project
    daemon = daemon_process(root)
    try:
        rc.lintaid(root, "install", "gemini", home=home)
        script = rc.story(call("read_file", file_path="README.md"),
                          call("mcp_lintaid_search", query="upload limit"))
        with FakeModel("gemini", script, model=MODEL) as fake:
            first = gemini(root, home, fake, rc.DECIDE)
            assert rc.DECIDED in first.stdout, first.describe()
            assert not failed_hooks(first, "SessionStart", "BeforeAgent", "AfterAgent"), \
                first.describe()
            turn = rc.decided(root, "gemini")
            assert "read_file" in turn.tools and any(p.endswith("README.md")
                                                     for p in turn.paths), turn

            second = gemini(root, home, fake, rc.ASK)
            assert rc.ANSWER in second.stdout, second.describe()
            assert not failed_hooks(second, "SessionStart", "BeforeAgent", "AfterAgent"), \
                second.describe()
            # The model was given the first session's decision at the start and for the
            # prompt, inside the hooks' context.
            [asked] = [r for r in fake.turns(rc.ASKED) if r.tool_results == 0]
            contexts = re.findall(r"<hook_context>(.*?)</hook_context>", asked.text, re.S)
            assert any("Project state (lintaid)" in c and turn.id in c for c in contexts), \
                asked.text[:4000]
            assert any("Recalled for this prompt (lintaid)" in c and turn.id in c
                       for c in contexts), asked.text[:4000]
            # The MCP server connected and the search tool round-tripped.
            [searched] = [r for r in fake.turns(rc.ASKED) if r.tool_results == 1]
            assert "functionResponse" in searched.text and turn.id in searched.text, \
                searched.text[-3000:]
        rc.check_memory(root, "gemini")

        listed = rc.run([rc.require("gemini"), "mcp", "list"], cwd=root,
                        env=rc.client_env(home)).check()
        assert re.search(r"lintaid: .*lintaid_client\.mcp.* - Connected",
                         listed.stdout + listed.stderr), listed.describe()
    finally:
        daemon.stop()
