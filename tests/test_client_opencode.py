"""OpenCode: the adapter on the messages lintaid's plugin sends (their shape read from a real
``opencode run``, tests/test_real_clients_opencode.py), the plugin as installed, and capture
then recall through the real shim."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from lintaid.hooks import build_records
from lintaid.integrations.base import Commands
from lintaid.integrations.opencode import OpenCode, install
from tests.client_sessions import (
    FINAL_RESULT,
    OPENCODE_SESSION,
    SECRET_REQUEST,
    SECRET_RESULT,
    opencode_messages,
    opencode_payload,
)
from tests.conftest import Served
from tests.transcripts import FAKE_SECRETS, FINAL_REQUEST

CLIENT = OpenCode()


def records(event: str, payload: dict) -> list:
    return build_records(CLIENT, CLIENT.event(event, payload), now=1.0)


def test_session_idle_captures_the_last_turn(tmp_path: Path) -> None:
    cwd = str(tmp_path)
    [rec] = records("session.idle", opencode_payload("session.idle", cwd,
                                                     messages=opencode_messages(cwd)))
    lines = rec.content.split("\n")
    assert lines[0] == f"Request: {FINAL_REQUEST}"
    assert lines[1] == f"Result: {FINAL_RESULT}"
    assert lines[2] == f"Affected paths: {cwd}/gateway/retry.py, {cwd}/tests/test_retry.py"
    assert lines[3] == "Tools used: read, edit, write"
    assert rec.source == f"opencode://{OPENCODE_SESSION}/outcome"


def test_events_and_output() -> None:
    start = CLIENT.event("session.start", opencode_payload("session.start", "/p",
                                                           source="startup"))
    assert start.inject and start.session_start and start.prompt is None
    prompt = CLIENT.event("chat.message", opencode_payload("chat.message", "/p",
                                                           prompt="retry limits?"))
    assert prompt.inject and prompt.prompt == "retry limits?" and prompt.capture is None
    assert CLIENT.output(prompt, "ctx") == {"additionalContext": "ctx"}
    assert CLIENT.output(prompt, None) == {}
    idle = CLIENT.event("session.idle", opencode_payload("session.idle", "/p"))
    assert idle.capture == "outcome" and not idle.inject
    assert CLIENT.output(idle, "ctx") == {}


def test_secrets_are_redacted_before_the_record(tmp_path: Path) -> None:
    cwd = str(tmp_path)
    messages = opencode_messages(cwd, request=SECRET_REQUEST, result=SECRET_RESULT)
    [rec] = records("session.idle", opencode_payload("session.idle", cwd, messages=messages))
    for secret in FAKE_SECRETS[:2]:
        assert secret not in rec.content


def test_the_installed_plugin_is_the_shipped_one_with_its_settings(tmp_path: Path) -> None:
    commands = Commands(("/opt/py", "-I", "-S", "/opt/hook.py"), ("/opt/mcp",))
    text = install.render(tmp_path, "project", commands)
    shipped = install.TEMPLATE.read_text().splitlines()
    rendered = text.splitlines()
    assert len(rendered) == len(shipped)
    changed = [(a, b) for a, b in zip(shipped, rendered, strict=True) if a != b]
    assert [b for _a, b in changed] == [
        'const SETTINGS = {"hookCommand": ["/opt/py", "-I", "-S", "/opt/hook.py"], '
        f'"project": {json.dumps(str(tmp_path))}, "timeoutMs": 10000}};']
    node = shutil.which("node")
    if node:  # the rendered file is a module Node can load (OpenCode's runtime is Bun)
        path = tmp_path / "lintaid.mjs"
        path.write_text(text)
        out = subprocess.run([node, "-e", f"import('{path}').then(m => console.log("
                              "typeof m.LintaidPlugin))"], capture_output=True, text=True,
                             timeout=60)
        assert out.stdout.strip() == "function", out.stderr


def test_capture_then_recall_through_the_shim(served: Served) -> None:
    cwd = str(served.root)
    idle = opencode_payload("session.idle", cwd, messages=opencode_messages(cwd))
    assert served.hook("session.idle", idle, provider="opencode") == {}
    out = served.hook("chat.message", opencode_payload(
        "chat.message", cwd, session_id="ses_2",
        prompt="How is the gateway retry policy configured?"), provider="opencode")
    context = out["additionalContext"]
    assert context.startswith("Recalled for this prompt (lintaid)")
    assert " · opencode · " in context  # the entry's one provenance line
    memory = served.call("status")["memory"]
    assert (memory["records"], memory["prompts"]) == (1, 1)  # the turn; the prompt apart
