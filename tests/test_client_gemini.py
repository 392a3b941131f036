"""Gemini CLI: chat-recording replay, the event mapping, and capture then recall through the
real shim."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from lintaid.hooks import build_records
from lintaid.integrations.gemini import Gemini, transcript
from tests.client_sessions import (
    FINAL_RESULT,
    FIRST_ANSWER,
    GEMINI_SESSION,
    SECRET_REQUEST,
    SECRET_RESULT,
    gemini_payload,
    gemini_recording,
    write_jsonl,
)
from tests.conftest import Served
from tests.transcripts import FAKE_SECRETS, FINAL_REQUEST

CLIENT = Gemini()


def records(event: str, payload: dict) -> list:
    return build_records(CLIENT, CLIENT.parse(event, payload), now=1.0)


def test_replay_applies_upserts_rewinds_and_skips_noise(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "session.jsonl", gemini_recording(str(tmp_path)))
    messages = transcript.read(str(path))
    texts = [m.text for m in messages]
    assert "Let me think." not in " ".join(texts)  # thought parts
    assert FIRST_ANSWER in texts
    assert "no wait, undo" not in texts and "Undoing." not in texts  # rewound
    assert "Tests passed." not in texts  # info records
    assert [m.text for m in messages].count("I'll read the retry module.") == 1  # upserted
    assert next(m for m in messages if m.text == "/stats").is_request is False


def test_after_agent_captures_the_turn(tmp_path: Path) -> None:
    cwd = str(tmp_path)
    path = write_jsonl(tmp_path / "session.jsonl", gemini_recording(cwd))
    [rec] = records("AfterAgent", gemini_payload("AfterAgent", cwd, path))
    lines = rec.content.split("\n")
    assert lines[0] == f"Request: {FINAL_REQUEST}"
    assert lines[1] == f"Result: {FINAL_RESULT}"
    assert lines[2] == f"Affected paths: {cwd}/gateway/retry.py, {cwd}/tests/test_retry.py"
    assert lines[3] == "Tools used: read_file, replace, write_file"
    assert rec.source == f"gemini://{GEMINI_SESSION}/outcome"


def test_capture_from_the_recording_alone(tmp_path: Path) -> None:
    cwd = str(tmp_path)
    path = write_jsonl(tmp_path / "session.jsonl", gemini_recording(cwd))
    [end] = records("SessionEnd", gemini_payload("SessionEnd", cwd, path))
    assert end.doc_type == "outcome" and end.catch_up
    assert end.content.startswith(f"Request: {FINAL_REQUEST}\nResult: {FINAL_RESULT}")
    [compress] = records("PreCompress", gemini_payload("PreCompress", cwd, path))
    assert compress.record_id == end.record_id and compress.catch_up
    # The turn's AfterAgent, read from the same recording, is the same record.
    [turn] = records("AfterAgent", gemini_payload("AfterAgent", cwd, path))
    assert turn.record_id == end.record_id and not turn.catch_up
    # an older build's single JSON file
    legacy = tmp_path / "session.json"
    legacy.write_text(json.dumps({"sessionId": GEMINI_SESSION, "messages": [
        e for e in gemini_recording(cwd)[1:] if "id" in e]}))
    [old] = records("SessionEnd", gemini_payload("SessionEnd", cwd, legacy))
    assert "Request: no wait, undo" in old.content  # no rewinds in that format


def test_event_mapping_and_output() -> None:
    before = CLIENT.parse("BeforeAgent", {"prompt": "fix the tests"})
    assert before.inject and before.prompt == "fix the tests" and before.capture is None
    start = CLIENT.parse("SessionStart", {"source": "resume"})
    assert start.inject and start.session_start
    assert CLIENT.parse("AfterAgent", {"stop_hook_active": True}).skip
    assert CLIENT.output(before, "ctx") == {"hookSpecificOutput": {
        "hookEventName": "BeforeAgent", "additionalContext": "ctx"}}
    assert CLIENT.output(before, None) == {}
    assert CLIENT.output(CLIENT.parse("AfterAgent", {}), "ctx") == {}


def test_no_secret_reaches_a_record(tmp_path: Path) -> None:
    cwd = str(tmp_path)
    path = write_jsonl(tmp_path / "s.jsonl",
                       gemini_recording(cwd, request=SECRET_REQUEST, result=SECRET_RESULT))
    recs = records("AfterAgent", gemini_payload("AfterAgent", cwd, path, prompt=SECRET_REQUEST,
                                                prompt_response=SECRET_RESULT))
    recs += records("SessionEnd", gemini_payload("SessionEnd", cwd, path))
    recs += records("BeforeAgent", gemini_payload("BeforeAgent", cwd, path,
                                                  prompt=SECRET_REQUEST))
    assert len(recs) == 3
    for rec in recs:
        blob = json.dumps(dataclasses.asdict(rec))
        assert FAKE_SECRETS[0] not in blob and FAKE_SECRETS[1] not in blob


def test_capture_then_recall_through_the_shim(served: Served) -> None:
    cwd = str(served.root)
    path = write_jsonl(served.root.parent / "session.jsonl", gemini_recording(cwd))
    out = served.hook("AfterAgent", gemini_payload("AfterAgent", cwd, path), provider="gemini")
    assert out == {}
    out = served.hook("BeforeAgent", gemini_payload(
        "BeforeAgent", cwd, None, session_id="next",
        prompt="How is the gateway retry policy configured?"), provider="gemini")
    hook = out["hookSpecificOutput"]
    assert hook["hookEventName"] == "BeforeAgent"
    assert "backoff_ms from config" in hook["additionalContext"]
    assert " · gemini" in hook["additionalContext"]  # the entry's provenance line
    # nothing to say is still JSON
    out = served.hook("Notification", {"session_id": "x", "message": "hi"}, provider="gemini")
    assert out == {}
    memory = served.call("status")["memory"]
    assert (memory["records"], memory["prompts"]) == (1, 1)  # the turn; the prompt apart
