"""GitHub Copilot CLI: the session log (its shape read from a real ``copilot -p`` run,
tests/test_real_clients_copilot.py), the event mapping and output, and capture then recall
through the real shim."""

from __future__ import annotations

import time
from pathlib import Path

from lintaid.hooks import build_records
from lintaid.integrations.copilot import Copilot, transcript
from tests.client_sessions import (
    COPILOT_SESSION,
    FINAL_RESULT,
    FIRST_ANSWER,
    SECRET_REQUEST,
    SECRET_RESULT,
    copilot_events,
    copilot_payload,
    write_jsonl,
)
from tests.conftest import Served
from tests.transcripts import FAKE_SECRETS, FINAL_REQUEST

CLIENT = Copilot()


def records(event: str, payload: dict) -> list:
    return build_records(CLIENT, CLIENT.event(event, payload), now=1.0)


def test_stop_captures_the_turn_from_the_session_log(tmp_path: Path) -> None:
    cwd = str(tmp_path)
    path = write_jsonl(tmp_path / "events.jsonl", copilot_events(cwd))
    texts = [m.text for m in map(transcript.parse_line, path.read_bytes().splitlines()) if m]
    assert texts[:2] == ["What does the gateway do when the upstream times out?", FIRST_ANSWER]
    [rec] = records("Stop", copilot_payload("Stop", cwd, path, stop_hook_active=False))
    lines = rec.content.split("\n")
    assert lines[0] == f"Request: {FINAL_REQUEST}"  # the person's words, not transformedContent
    assert lines[1] == f"Result: {FINAL_RESULT}"
    assert lines[2] == f"Affected paths: {cwd}/gateway/retry.py, {cwd}/tests/test_retry.py"
    assert lines[3] == "Tools used: view, edit, create"
    assert rec.source == f"copilot://{COPILOT_SESSION}/outcome"
    assert records("Stop", copilot_payload("Stop", cwd, path, stop_hook_active=True)) == []


def test_events_and_output(tmp_path: Path) -> None:
    start = CLIENT.event("SessionStart", copilot_payload("SessionStart", "/p", None,
                                                         source="new", initial_prompt="hi"))
    assert start.inject and start.session_start and start.source == "startup"
    prompt = CLIENT.event("UserPromptSubmit", copilot_payload("UserPromptSubmit", "/p", None,
                                                              prompt="retry limits?"))
    assert prompt.inject and prompt.prompt == "retry limits?"
    assert CLIENT.output(prompt, "ctx") == {"additionalContext": "ctx"}  # top level
    assert CLIENT.output(prompt, None) == {}
    stop = CLIENT.event("Stop", copilot_payload("Stop", "/p", None))
    assert CLIENT.output(stop, "ctx") == {}


def test_secrets_are_redacted_before_the_record(tmp_path: Path) -> None:
    cwd = str(tmp_path)
    path = write_jsonl(tmp_path / "events.jsonl",
                       copilot_events(cwd, request=SECRET_REQUEST, result=SECRET_RESULT))
    [rec] = records("Stop", copilot_payload("Stop", cwd, path))
    for secret in FAKE_SECRETS[:2]:
        assert secret not in rec.content


def test_capture_then_recall_through_the_shim(served: Served) -> None:
    cwd = str(served.root)
    path = write_jsonl(served.root.parent / "events.jsonl", copilot_events(cwd))
    assert served.hook("Stop", copilot_payload("Stop", cwd, path), provider="copilot") == {}
    out = served.hook("UserPromptSubmit", copilot_payload(
        "UserPromptSubmit", cwd, None, session_id="next",
        prompt="How is the gateway retry policy configured?"), provider="copilot")
    assert out["additionalContext"].startswith("Recalled for this prompt (lintaid)")
    assert " · copilot · " in out["additionalContext"]  # the entry's one provenance line
    memory = served.call("status")["memory"]
    assert (memory["records"], memory["prompts"]) == (1, 1)


def test_a_reply_written_after_stop_completes_the_same_turn_at_session_end(
        served: Served) -> None:
    """Copilot may run its Stop hook before it writes the turn's last reply to events.jsonl
    (seen on a loaded machine): the turn is captured without a result, and SessionEnd,
    reading the log again, completes that same record instead of adding a second one."""
    cwd = str(served.root)
    events = copilot_events(cwd)
    path = write_jsonl(served.root.parent / "events.jsonl", events[:5])  # the request only
    served.hook("Stop", copilot_payload("Stop", cwd, path), provider="copilot")
    [early] = served.call("list", {"kind": "capture"})["results"]
    assert "Result:" not in early["content"] and early["tools"] == []
    write_jsonl(path, events)  # the reply, written late
    served.hook("SessionEnd", copilot_payload("SessionEnd", cwd, path), provider="copilot")
    [whole] = served.call("list", {"kind": "capture"})["results"]
    assert whole["id"] == early["id"]
    assert f"Result: {FINAL_RESULT}" in whole["content"]
    assert whole["tools"] == ["view", "edit", "create"]  # what the late reply's turn used
    # Read once more, the whole turn stays as it is: one record, one result.
    served.hook("SessionEnd", copilot_payload("SessionEnd", cwd, path), provider="copilot")
    [again] = served.call("list", {"kind": "capture"})["results"]
    assert again["content"] == whole["content"]


def test_a_stop_that_finds_no_reply_yet_reads_the_log_again(served: Served) -> None:
    """With no SessionEnd to come (a one-shot run), the daemon itself reads an open turn's log
    again a little later and completes the record once the reply is there."""
    cwd = str(served.root)
    events = copilot_events(cwd)
    path = write_jsonl(served.root.parent / "events.jsonl", events[:-2])
    served.hook("Stop", copilot_payload("Stop", cwd, path), provider="copilot")
    write_jsonl(path, events)

    def whole() -> list:
        return [r for r in served.call("list", {"kind": "capture"})["results"]
                if f"Result: {FINAL_RESULT}" in r["content"]]

    deadline = time.monotonic() + 30
    while not whole() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert len(whole()) == 1
    assert len(served.call("list", {"kind": "capture"})["results"]) == 1


def test_a_stop_that_finds_no_turn_yet_captures_it_once_the_log_holds_it(
        served: Served) -> None:
    cwd = str(served.root)
    events = copilot_events(cwd)
    path = write_jsonl(served.root.parent / "events.jsonl", events[:4])  # the first Q and A
    path.write_text("")  # nothing written yet when the Stop hook runs
    served.hook("Stop", copilot_payload("Stop", cwd, path), provider="copilot")
    assert served.call("list", {"kind": "capture"})["results"] == []
    write_jsonl(path, events)

    def captured() -> list:
        return served.call("list", {"kind": "capture"})["results"]

    deadline = time.monotonic() + 30
    while not captured() and time.monotonic() < deadline:
        time.sleep(0.1)
    [turn] = captured()
    assert f"Result: {FINAL_RESULT}" in turn["content"]
