"""Codex: rollout parsing, the event mapping, and capture then recall through the real shim."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from lintaid.hooks import build_records
from lintaid.integrations import registry
from lintaid.integrations.codex import Codex
from lintaid.integrations.codex.transcript import find_rollout
from tests.client_sessions import (
    CODEX_SESSION,
    FINAL_RESULT,
    SECRET_REQUEST,
    SECRET_RESULT,
    codex_payload,
    codex_rollout,
    codex_rollout_path,
    write_jsonl,
)
from tests.conftest import Served
from tests.transcripts import FAKE_SECRETS, FINAL_REQUEST

CLIENT = Codex()


def records(event: str, payload: dict) -> list:
    return build_records(CLIENT, CLIENT.parse(event, payload), now=1.0)


def test_stop_captures_the_last_turn_from_the_rollout(tmp_path: Path) -> None:
    cwd = str(tmp_path)
    rollout = write_jsonl(tmp_path / "rollout.jsonl", codex_rollout(cwd))
    [rec] = records("Stop", codex_payload("Stop", cwd, rollout))
    lines = rec.content.split("\n")
    assert lines[0] == f"Request: {FINAL_REQUEST}"
    assert lines[1] == f"Result: {FINAL_RESULT}"
    assert lines[2] == "Affected paths: gateway/retry.py, tests/test_retry.py"
    assert lines[3] == "Tools used: shell, apply_patch"
    assert rec.source == f"codex://{CODEX_SESSION}/outcome"
    assert (rec.provider, rec.doc_type, rec.event) == ("codex", "outcome", "Stop")
    assert rec.metadata["permission_mode"] == "default"


def test_harness_messages_and_reasoning_are_skipped(tmp_path: Path) -> None:
    cwd = str(tmp_path)
    rollout = write_jsonl(tmp_path / "rollout.jsonl", codex_rollout(cwd))
    # Without last_assistant_message the result comes from the rollout itself.
    payload = codex_payload("Stop", cwd, rollout, last_assistant_message=None)
    exchange = CLIENT.read_exchange(CLIENT.parse("Stop", payload))
    assert exchange.request == FINAL_REQUEST
    assert exchange.result == FINAL_RESULT
    assert "environment_context" not in exchange.request


def test_null_transcript_path_finds_the_rollout_by_session(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "codex-home"
    monkeypatch.setenv("CODEX_HOME", str(home))
    rollout = write_jsonl(codex_rollout_path(home), codex_rollout(str(tmp_path)))
    other = codex_rollout_path(home, "019a0000-0000-7000-8000-000000000000")
    write_jsonl(other, codex_rollout(str(tmp_path), request="something else entirely"))
    assert find_rollout(CODEX_SESSION) == rollout
    assert find_rollout("../../etc/passwd") is None
    assert find_rollout("no-such-session") is None
    assert find_rollout(CODEX_SESSION, max_visited=1) in (None, rollout)
    [rec] = records("Stop", codex_payload("Stop", str(tmp_path), None))
    assert rec.content.startswith(f"Request: {FINAL_REQUEST}")


def test_event_mapping() -> None:
    start = CLIENT.parse("SessionStart", {"source": "compact", "session_id": "s"})
    assert start.inject and start.session_start and start.source == "compact"
    prompt = CLIENT.parse("UserPromptSubmit", {"prompt": " fix the tests "})
    assert prompt.inject and prompt.prompt == "fix the tests"
    assert CLIENT.parse("PreCompact", {}).capture == "checkpoint"
    assert CLIENT.parse("SessionEnd", {}).capture == "session-summary"
    assert CLIENT.parse("Stop", {"stop_hook_active": True}).skip
    assert CLIENT.parse("PostToolUse", {}).capture is None
    assert registry.get("codex") is registry.CLIENTS["codex"]


def test_output_shape() -> None:
    prompt = CLIENT.parse("UserPromptSubmit", {"prompt": "x"})
    assert CLIENT.output(prompt, "ctx") == {"hookSpecificOutput": {
        "hookEventName": "UserPromptSubmit", "additionalContext": "ctx"}}
    assert CLIENT.output(prompt, None) == {}
    assert CLIENT.output(CLIENT.parse("Stop", {}), "ctx") == {}  # Stop takes JSON, not context


def test_no_secret_reaches_a_record(tmp_path: Path) -> None:
    cwd = str(tmp_path)
    rollout = write_jsonl(tmp_path / "rollout.jsonl",
                          codex_rollout(cwd, request=SECRET_REQUEST, result=SECRET_RESULT))
    recs = records("Stop", codex_payload("Stop", cwd, rollout, last_assistant_message=None))
    recs += records("UserPromptSubmit", codex_payload("UserPromptSubmit", cwd, rollout,
                                                      prompt=SECRET_REQUEST))
    assert len(recs) == 2
    for rec in recs:
        blob = json.dumps(dataclasses.asdict(rec))
        assert FAKE_SECRETS[0] not in blob and FAKE_SECRETS[1] not in blob
    assert "Please fix the deploy script." in recs[0].content


def test_capture_then_recall_through_the_shim(served: Served) -> None:
    cwd = str(served.root)
    rollout = write_jsonl(served.root.parent / "rollout.jsonl", codex_rollout(cwd))
    out = served.hook("Stop", codex_payload("Stop", cwd, rollout), provider="codex")
    assert out == {}
    out = served.hook("UserPromptSubmit", codex_payload(
        "UserPromptSubmit", cwd, None, session_id="019a-next",
        prompt="How is the gateway retry policy configured?"), provider="codex")
    hook = out["hookSpecificOutput"]
    assert hook["hookEventName"] == "UserPromptSubmit"
    assert "backoff_ms from config" in hook["additionalContext"]
    assert " · codex" in hook["additionalContext"]  # the entry's provenance line
    # After a compaction Codex fires SessionStart again: memory is re-injected there.
    served.json("add", "Decision: unresolved work on the gateway lives in TODO.md.")
    out = served.hook("SessionStart", codex_payload("SessionStart", cwd, None, source="compact"),
                      provider="codex")
    assert out["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert "TODO.md" in out["hookSpecificOutput"]["additionalContext"]
    hits = served.json("search", "retry policy configurable")["results"]
    assert any(h["source"] == f"codex://{CODEX_SESSION}/outcome" for h in hits)


@pytest.fixture
def codex_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``CODEX_HOME`` for this test, the daemon included (request it first)."""
    home = tmp_path / "codex-home"
    monkeypatch.setenv("CODEX_HOME", str(home))
    return home


def test_null_transcript_path_through_the_shim(codex_home: Path, served: Served) -> None:
    cwd = str(served.root)
    write_jsonl(codex_rollout_path(codex_home), codex_rollout(cwd))
    assert served.hook("SessionEnd", codex_payload("SessionEnd", cwd, None),
                       provider="codex") == {}
    hits = served.json("search", "retry policy configurable")["results"]
    assert any(h["source"] == f"codex://{CODEX_SESSION}/outcome" for h in hits)
