"""OpenClaw: the adapter, and the JavaScript plugin loaded into a fake OpenClaw host (Node),
calling a stand-in shim and then the real shim and daemon."""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from lintaid.hooks import build_records
from lintaid.integrations.openclaw import OpenClaw
from lintaid.integrations.openclaw.install import PLUGIN_SOURCE
from tests.client_sessions import (
    FINAL_RESULT,
    SECRET_REQUEST,
    SECRET_RESULT,
    openclaw_messages,
    openclaw_payload,
)
from tests.conftest import Served, lintaid_env
from tests.transcripts import FAKE_SECRETS, FINAL_REQUEST

CLIENT = OpenClaw()
HARNESS = Path(__file__).with_name("openclaw_harness.mjs")
NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="node is not installed here: the "
                                "OpenClaw plugin (JavaScript) cannot be loaded")


def records(event: str, payload: dict) -> list:
    return build_records(CLIENT, CLIENT.parse(event, payload), now=1.0)


def test_agent_end_captures_from_the_messages(tmp_path: Path) -> None:
    payload = openclaw_payload("agent_end", str(tmp_path), messages=openclaw_messages(),
                               success=True)
    [rec] = records("agent_end", payload)
    lines = rec.content.split("\n")
    assert lines[0] == f"Request: {FINAL_REQUEST}"  # carriers skipped
    assert lines[1] == f"Result: {FINAL_RESULT}"
    assert lines[2] == "Affected paths: gateway/retry.py, tests/test_retry.py"
    assert lines[3] == "Tools used: read, edit, write"
    assert rec.source == "openclaw://oc-session-1/outcome"
    assert records("agent_end", {**payload, "success": False}) == []


def test_before_prompt_build_and_output(tmp_path: Path) -> None:
    ev = CLIENT.parse("before_prompt_build", openclaw_payload(
        "before_prompt_build", str(tmp_path), prompt="retry limits?"))
    assert ev.inject and ev.prompt == "retry limits?" and ev.cwd == str(tmp_path)
    assert CLIENT.output(ev, "ctx") == {"prependContext": "ctx"}
    assert CLIENT.output(ev, None) == {}
    assert CLIENT.parse("agent_end", {"session_key": "k"}).session_id == "k"


def test_no_secret_reaches_a_record(tmp_path: Path) -> None:
    payload = openclaw_payload("agent_end", str(tmp_path), messages=openclaw_messages(
        request=SECRET_REQUEST, result=SECRET_RESULT))
    recs = records("agent_end", payload)
    recs += records("before_prompt_build", openclaw_payload(
        "before_prompt_build", str(tmp_path), prompt=SECRET_REQUEST))
    assert len(recs) == 2
    for rec in recs:
        blob = json.dumps(dataclasses.asdict(rec))
        assert FAKE_SECRETS[0] not in blob and FAKE_SECRETS[1] not in blob


def test_capture_then_recall_through_the_shim(served: Served) -> None:
    cwd = str(served.root)
    out = served.hook("agent_end", openclaw_payload(
        "agent_end", cwd, messages=openclaw_messages(), success=True), provider="openclaw")
    assert out == {}
    out = served.hook("before_prompt_build", openclaw_payload(
        "before_prompt_build", cwd, session_id="next",
        prompt="How is the gateway retry policy configured?"), provider="openclaw")
    assert "backoff_ms from config" in out["prependContext"]
    assert " · openclaw" in out["prependContext"]  # the entry's provenance line


# --- the plugin, in Node ----------------------------------------------------------------------
def run_plugin(config: dict[str, Any], calls: list[dict[str, Any]],
               env: dict[str, str] | None = None) -> dict[str, Any]:
    assert NODE is not None
    proc = subprocess.run(
        [NODE, str(HARNESS)], capture_output=True, text=True, timeout=60, env=env,
        input=json.dumps({"plugin": str(PLUGIN_SOURCE / "index.js"), "config": config,
                          "calls": calls}))
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


FAKE_SHIM = textwrap.dedent("""
    import json, os, sys, time
    record = {"argv": sys.argv[1:], "cwd": os.getcwd(), "stdin": json.load(sys.stdin),
              "project": os.environ.get("LINTAID_PROJECT")}
    with open(sys.argv[1], "a") as out:
        out.write(json.dumps(record) + "\\n")
    if record["argv"][-1] == "before_prompt_build":
        if "slow" in (record["stdin"].get("prompt") or ""):
            time.sleep(5)
        print(json.dumps({"prependContext": "Recalled: retries are 5.", "ignored": 1}))
    else:
        print("{}")
""")


@needs_node
def test_plugin_calls_the_shim_and_returns_the_context(tmp_path: Path) -> None:
    shim = tmp_path / "fake_shim.py"
    shim.write_text(FAKE_SHIM)
    calls_log = tmp_path / "calls.jsonl"
    project = tmp_path / "project"
    project.mkdir()
    config = {"hookCommand": [sys.executable, str(shim), str(calls_log)],
              "project": str(project), "timeoutMs": 1500}
    ctx = {"sessionId": "s-1", "sessionKey": "agent:main:main", "agentId": "main",
           "workspaceDir": str(tmp_path / "workspace"), "runId": "run-1"}
    messages = [*openclaw_messages(),
                {"role": "assistant", "content": [{"type": "text", "text": "x" * 50_000}]},
                {"role": "assistant", "content": [{"type": "image", "data": "..."}]}]
    result = run_plugin(config, [
        # the request itself, not the prompt OpenClaw rebuilt around it
        {"hook": "before_prompt_build", "event": {
            "prompt": "earlier: what does the gateway do?\nretry limits?",
            "currentUserMessage": "retry limits?"}, "ctx": ctx},
        {"hook": "agent_end", "event": {"messages": messages, "success": True,
                                        "durationMs": 1200, "runId": "run-1"}, "ctx": ctx},
        {"hook": "before_prompt_build", "event": {"prompt": "slow one"}, "ctx": ctx},
    ])
    assert result["registered"] == ["agent_end", "before_agent_finalize", "before_prompt_build"]
    assert result["id"] == "lintaid"
    first, end, slow = result["results"]
    assert first["value"] == {"prependContext": "Recalled: retries are 5."}
    assert end["value"] is None
    assert slow["value"] is None  # given up at timeoutMs (the shim answers after 5 s): run goes on

    seen = [json.loads(line) for line in calls_log.read_text().splitlines()]
    assert [s["argv"][-2:] for s in seen[:2]] == [["openclaw", "before_prompt_build"],
                                                 ["openclaw", "agent_end"]]
    start, capture = seen[0], seen[1]
    assert start["cwd"] == str(project) and start["project"] == str(project)
    assert start["stdin"]["hook_event_name"] == "before_prompt_build"
    assert start["stdin"]["prompt"] == "retry limits?"
    assert start["stdin"]["session_id"] == "s-1" and start["stdin"]["cwd"] == str(project)
    sent = capture["stdin"]["messages"]
    assert sent[1]["customType"] == "openclaw.runtime-context"
    assert sent[-3]["content"][0]["text"] == FINAL_RESULT
    assert len(sent[-2]["content"][0]["text"]) == 32 * 1024  # clipped
    assert sent[-1]["content"] == []  # images are not sent
    assert capture["stdin"]["success"] is True and capture["stdin"]["run_id"] == "run-1"


@needs_node
def test_plugin_fails_open(tmp_path: Path) -> None:
    config = {"hookCommand": [str(tmp_path / "no-such-shim")], "timeoutMs": 1000}
    result = run_plugin(config, [
        {"hook": "before_prompt_build", "event": {"prompt": "x"}, "ctx": {}},
        {"hook": "agent_end", "event": {"messages": []}, "ctx": {}},
    ])
    assert [r["value"] for r in result["results"]] == [None, None]
    bad = tmp_path / "bad.py"
    bad.write_text("print('not json')")
    result = run_plugin({"hookCommand": [sys.executable, str(bad)]}, [
        {"hook": "before_prompt_build", "event": {"prompt": "x"}, "ctx": {}}])
    assert result["results"][0]["value"] is None


@needs_node
@pytest.mark.slow
def test_plugin_through_the_real_shim_and_daemon(served: Served) -> None:
    config = {"hookCommand": [sys.executable, "-m", "lintaid_client.hook"],
              "project": str(served.root), "timeoutMs": 10_000}
    ctx = {"sessionId": "oc-real", "workspaceDir": str(served.root)}
    result = run_plugin(config, [
        {"hook": "agent_end", "event": {"messages": openclaw_messages(), "success": True},
         "ctx": ctx},
        {"hook": "before_prompt_build",
         "event": {"prompt": "How is the gateway retry policy configured?"},
         "ctx": {**ctx, "sessionId": "oc-next"}},
    ], env=lintaid_env())
    context = result["results"][1]["value"]["prependContext"]
    assert "backoff_ms from config" in context and " · openclaw" in context
    hits = served.json("search", "retry policy configurable")["results"]
    assert any(h["source"] == "openclaw://oc-real/outcome" for h in hits)


def test_before_agent_finalize_captures_the_run_agent_end_would(tmp_path: Path) -> None:
    """OpenClaw awaits before_agent_finalize; agent_end of the same run is the same record."""
    payload = openclaw_payload("before_agent_finalize", str(tmp_path),
                               messages=openclaw_messages(), stop_hook_active=False,
                               last_assistant_message=FINAL_RESULT)
    [final] = records("before_agent_finalize", payload)
    [end] = records("agent_end", openclaw_payload("agent_end", str(tmp_path),
                                                  messages=openclaw_messages(), success=True))
    assert final.record_id == end.record_id and not final.catch_up
    assert final.content.split("\n")[:2] == [f"Request: {FINAL_REQUEST}",
                                             f"Result: {FINAL_RESULT}"]
    assert records("before_agent_finalize", {**payload, "stop_hook_active": True}) == []
