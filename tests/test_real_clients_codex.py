"""The real Codex CLI (pinned in tests/clients/package.json) runs two sessions of real turns
(``codex exec``) in a project lintaid was installed into, against a loopback fake of the OpenAI
Responses API (a ``model_providers`` entry with the fake's base URL).

Codex reads a project's ``.codex/`` only for a trusted project, and runs a new or changed hook
only once the person trusts it in ``/hooks``. Both are recorded here the way Codex records
them: the project's ``trust_level`` in the user's ``config.toml``, and each hook's trust asked
of Codex's own app server (``hooks/list`` gives each hook's key and hash, ``config/batchWrite``
stores them under ``hooks.state``, as the ``/hooks`` panel does).
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from lintaid.integrations.hook_entries import is_hook_command
from tests import real_clients as rc
from tests.conftest import daemon_process
from tests.fake_models import FakeModel, call

pytestmark = [pytest.mark.real_client, pytest.mark.timeout(600)]

MODEL = "gpt-5.1-codex"
KEY_VARIABLE = "FAKE_OPENAI_KEY"


def write_user_config(home: Path, root: Path, fake: FakeModel) -> None:
    (home / ".codex").mkdir(parents=True, exist_ok=True)
    (home / ".codex" / "config.toml").write_text(
        f'model = "{MODEL}"\nmodel_provider = "fake"\n\n[model_providers.fake]\n'
        f'name = "fake"\nbase_url = "{fake.url}/v1"\nwire_api = "responses"\n'
        f'env_key = "{KEY_VARIABLE}"\n\n[projects."{root}"]\ntrust_level = "trusted"\n',
        encoding="utf-8")


def app_server(root: Path, env: dict[str, str], *calls: tuple[str, dict[str, Any]]) -> list[Any]:
    """Ask ``codex app-server`` (JSON-RPC on stdio) ``calls`` in turn; their results."""
    lines = [{"jsonrpc": "2.0", "id": 0, "method": "initialize",
              "params": {"clientInfo": {"name": "lintaid-tests", "version": "1"}}},
             {"jsonrpc": "2.0", "method": "initialized"}]
    lines += [{"jsonrpc": "2.0", "id": n, "method": m, "params": p}
              for n, (m, p) in enumerate(calls, 1)]
    proc = subprocess.Popen([str(rc.require("codex")), "app-server"], cwd=root, env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    assert proc.stdin is not None and proc.stdout is not None
    results: dict[int, Any] = {}
    try:
        for line in lines[:2]:
            proc.stdin.write(json.dumps(line) + "\n")
        proc.stdin.flush()
        for line in lines[2:]:  # one at a time: a write must land before the next read
            proc.stdin.write(json.dumps(line) + "\n")
            proc.stdin.flush()
            while line["id"] not in results:
                raw = proc.stdout.readline()
                assert raw, f"codex app-server closed before answering {line['method']}"
                reply = json.loads(raw)
                if "id" in reply and reply["id"]:
                    assert "error" not in reply, reply
                    results[reply["id"]] = reply["result"]
    finally:
        proc.stdin.close()
        proc.terminate()
        proc.wait(30)
    return [results[n] for n in range(1, len(calls) + 1)]


def lintaid_hooks(root: Path, env: dict[str, str]) -> list[dict[str, Any]]:
    [listed] = app_server(root, env, ("hooks/list", {"cwds": [str(root)]}))
    return [h for h in listed["data"][0]["hooks"] if is_hook_command(h["command"], "codex")]


def trust_hooks(root: Path, env: dict[str, str]) -> None:
    """Trust lintaid's hooks as the ``/hooks`` panel does."""
    hooks = lintaid_hooks(root, env)
    assert {h["eventName"] for h in hooks} >= {"sessionStart", "userPromptSubmit", "stop"}
    assert all(h["trustStatus"] == "untrusted" for h in hooks), hooks
    state = {h["key"]: {"trusted_hash": h["currentHash"]} for h in hooks}
    app_server(root, env, ("config/batchWrite", {"edits": [
        {"keyPath": "hooks.state", "value": state, "mergeStrategy": "upsert"}]}))
    assert {h["trustStatus"] for h in lintaid_hooks(root, env)} == {"trusted"}


def codex(root: Path, env: dict[str, str], prompt: str) -> rc.Run:
    """One ``codex exec`` session, whose hooks Codex reports completed (it says so on stderr,
    and names a hook whose output it could not use)."""
    run = rc.run([rc.require("codex"), "exec", prompt], cwd=root, env=env).check()
    for event in ("SessionStart", "UserPromptSubmit", "Stop"):
        assert re.search(rf"^hook: {event} Completed$", run.stderr, re.M), run.describe()
    assert not re.search(r"hook returned invalid|hook: \w+ Failed", run.stderr), run.describe()
    return run


def test_two_sessions_capture_once_recall_and_never_echo(tmp_path: Path) -> None:
    rc.require("codex")
    home = tmp_path / "home"
    root = rc.git_project(tmp_path / "service")
    daemon = daemon_process(root)
    try:
        rc.lintaid(root, "install", "codex", home=home)
        script = rc.story(call("exec_command", cmd="cat README.md"),
                          call("search", namespace="mcp__lintaid", query="upload limit"))
        with FakeModel("responses", script, model=MODEL) as fake:
            write_user_config(home, root, fake)
            env = rc.client_env(home, **{KEY_VARIABLE: "fake-key"})
            trust_hooks(root, env)

            first = codex(root, env, rc.DECIDE)
            assert rc.DECIDED in first.stdout, first.describe()
            turn = rc.decided(root, "codex")
            assert "exec_command" in turn.tools, turn

            second = codex(root, env, rc.ASK)
            assert rc.ANSWER in second.stdout, second.describe()
            [asked] = [r for r in fake.turns(rc.ASKED) if r.tool_results == 0]
            text = asked.text
            assert re.search(rf"Project state \(lintaid\)(?:[^\"\\]|\\.)*{turn.id}", text), text[-4000:]
            assert re.search(rf"Recalled for this prompt \(lintaid\)(?:[^\"\\]|\\.)*{turn.id}", text), \
                text[-4000:]
            [searched] = [r for r in fake.turns(rc.ASKED) if r.tool_results == 1]
            assert "function_call_output" in searched.text and turn.id in searched.text, \
                searched.text[-3000:]
        rc.check_memory(root, "codex")

        listed = rc.run([rc.require("codex"), "mcp", "list"], cwd=root, env=env).check()
        assert re.search(r"lintaid\s+.*lintaid_client\.mcp", listed.stdout), listed.describe()
    finally:
        daemon.stop()
