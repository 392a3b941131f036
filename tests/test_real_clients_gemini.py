"""The real Gemini CLI (pinned in tests/clients/package.json) runs two sessions of real turns in
a project lintaid was installed into, against a loopback fake of the Gemini API.

Gemini CLI writes the injected ``<hook_context>`` and its own ``<session_context>`` into the
user's message; before lintaid's readers dropped them, the second session captured lintaid's
own memories as the person's request (the first assertion on ``prompts`` fails then).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests import real_clients as rc
from tests.fake_models import FakeModel, Script, call, say

pytestmark = [pytest.mark.real_client, pytest.mark.timeout(600)]

MODEL = "gemini-2.5-flash"
DECIDE = "We decided: the upload limit is 25 MB. Read README.md and confirm."
DECIDED = "Decided: uploads are capped at 25 MB; README.md says nothing against it."
ASK = "Which upload limit did we settle on?"
ASKED = "settle on"
ANSWER = "We settled on 25 MB, as the memory says."


def script() -> Script:
    return (Script()
            .on("upload limit is 25 MB", call("read_file", file_path="README.md"), say(DECIDED))
            .on(ASKED, call("mcp_lintaid_search", query="upload limit"), say(ANSWER)))


def gemini(root: Path, home: Path, fake: FakeModel, prompt: str) -> rc.Run:
    env = rc.client_env(home, GOOGLE_GEMINI_BASE_URL=fake.url, GEMINI_API_KEY="fake-key")
    return rc.run([rc.require("gemini"), "--debug", "-m", MODEL,
                   "--allowed-tools", "mcp_lintaid_search", "-p", prompt],
                  cwd=root, env=env).check()


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, Path]:
    """A git project with lintaid installed for Gemini CLI, a trusted folder in a fake home
    whose settings select the API key (the fake's base URL would select a gateway login)."""
    rc.require("gemini")
    home = tmp_path / "home"
    root = rc.git_project(tmp_path / "service")
    rc.dump(home / ".gemini" / "settings.json",
            {"security": {"auth": {"selectedType": "gemini-api-key"}}})
    rc.dump(home / ".gemini" / "trustedFolders.json", {str(root): "TRUST_FOLDER"})
    return root, home


def hooks_ran(run: rc.Run, *events: str) -> list[str]:
    """The events whose hooks Gemini CLI's debug output does not report as successful."""
    out = run.stdout + run.stderr
    return [e for e in events
            if not re.search(rf"Hook execution for {e}: 1 hooks executed successfully", out)]


def test_two_sessions_capture_once_recall_and_never_echo(
        project: tuple[Path, Path]) -> None:
    root, home = project
    from tests.conftest import daemon_process
    daemon = daemon_process(root)
    try:
        rc.lintaid(root, "install", "gemini", home=home)
        with FakeModel("gemini", script(), model=MODEL) as fake:
            first = gemini(root, home, fake, DECIDE)
            assert DECIDED in first.stdout, first.describe()
            assert not hooks_ran(first, "SessionStart", "BeforeAgent", "AfterAgent"), \
                first.describe()
            decided = rc.wait_until(
                lambda: [h for h in rc.captures(root, "gemini") if DECIDED in h.content],
                "the first turn's capture")
            [turn] = decided
            assert turn.content.startswith(f"Request: {DECIDE}\nResult: {DECIDED}")
            assert "read_file" in turn.tools and any(p.endswith("README.md")
                                                     for p in turn.paths)

            second = gemini(root, home, fake, ASK)
            assert ANSWER in second.stdout, second.describe()
            assert not hooks_ran(second, "SessionStart", "BeforeAgent", "AfterAgent"), \
                second.describe()
            # The model was given the first session's decision at the start and for the
            # prompt, inside the hook's context.
            [asked] = [r for r in fake.turns(ASKED) if r.tool_results == 0]
            contexts = re.findall(r"<hook_context>(.*?)</hook_context>", asked.text, re.S)
            assert any("Project state (lintaid)" in c and "25 MB" in c for c in contexts), \
                asked.text[:4000]
            assert any("Recalled for this prompt (lintaid)" in c and turn.id in c
                       for c in contexts), asked.text[:4000]
            # The MCP server connected and the search tool round-tripped.
            [searched] = [r for r in fake.turns(ASKED) if r.tool_results == 1]
            assert "functionResponse" in searched.text and turn.id in searched.text, \
                searched.text[-3000:]

        captures = rc.wait_until(
            lambda: (c := rc.captures(root, "gemini")) and len(c) >= 2 and c,
            "both sessions' captures")
        requests = sorted(h.content.split("\n")[0] for h in captures)
        assert requests == sorted([f"Request: {DECIDE}", f"Request: {ASK}"]), requests
        prompts = [h.content for h in rc.records(root) if h.kind == "prompt"]
        assert sorted(prompts) == sorted([f"User prompt: {DECIDE}", f"User prompt: {ASK}"]), \
            prompts
        for record in rc.records(root):
            for echoed in ("(lintaid):", "<hook_context>", "<session_context>",
                           "&lt;session_context"):
                assert echoed not in record.content, record.content

        listed = rc.run([rc.require("gemini"), "mcp", "list"], cwd=root,
                        env=rc.client_env(home)).check()
        assert re.search(r"lintaid: .*lintaid_client\.mcp.* - Connected", listed.stdout + listed.stderr), \
            listed.describe()
    finally:
        daemon.stop()
