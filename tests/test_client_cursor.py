"""Cursor: transcript parsing, the event mapping, and capture then recall through the real
shim."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from lintaid.hooks import build_records
from lintaid.integrations.cursor import Cursor, transcript
from tests.client_sessions import (
    CURSOR_CONVERSATION,
    FINAL_RESULT,
    FIRST_QUESTION,
    SECRET_REQUEST,
    SECRET_RESULT,
    cursor_payload,
    cursor_transcript,
    write_jsonl,
)
from tests.conftest import Served
from tests.transcripts import FAKE_SECRETS, FINAL_REQUEST

CLIENT = Cursor()


def records(event: str, payload: dict) -> list:
    return build_records(CLIENT, CLIENT.parse(event, payload), now=1.0)


def test_stop_captures_the_turn(tmp_path: Path) -> None:
    root = str(tmp_path)
    path = write_jsonl(tmp_path / "t.jsonl", cursor_transcript(root))
    [rec] = records("stop", cursor_payload("stop", root, path))
    lines = rec.content.split("\n")
    assert lines[0] == f"Request: {FINAL_REQUEST}"  # the <user_query> only
    assert lines[1] == f"Result: {FINAL_RESULT}"
    assert lines[2] == "Affected paths: gateway/retry.py, tests/test_retry.py"
    assert lines[3] == "Tools used: read_file, edit_file"
    assert rec.source == f"cursor://{CURSOR_CONVERSATION}/outcome"
    assert rec.cwd == root  # the first workspace root


def test_user_text_keeps_only_what_the_person_typed() -> None:
    assert transcript.user_text("<user_info>x</user_info>\n<user_query>\nhi\n</user_query>") \
        == "hi"
    assert transcript.user_text("<attached_files>a</attached_files>\nplain") == "plain"


def test_null_transcript_path_is_looked_up(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    folder = tmp_path / ".cursor" / "projects" / "home-dev-project" / "agent-transcripts"
    write_jsonl(folder / CURSOR_CONVERSATION / f"{CURSOR_CONVERSATION}.jsonl",
                cursor_transcript(str(tmp_path)))
    [rec] = records("stop", cursor_payload("stop", str(tmp_path), None))
    assert rec.content.startswith(f"Request: {FINAL_REQUEST}")
    assert transcript.find_transcript("../x") is None


def test_older_text_transcript(tmp_path: Path) -> None:
    path = tmp_path / f"{CURSOR_CONVERSATION}.txt"
    path.write_text(
        f"user:\n<user_query>\n{FIRST_QUESTION}\n</user_query>\n\nassistant:\n[Thinking] hmm\n"
        f"It retries.\n\nuser:\n<user_query>\n{FINAL_REQUEST}\n</user_query>\n\n"
        f"assistant:\n[Tool call] edit_file\n  target_file: gateway/retry.py\n\n"
        f"[Tool result] edit_file\n\nassistant:\n{FINAL_RESULT}\n")
    [rec] = records("stop", cursor_payload("stop", str(tmp_path), path))
    assert rec.content.split("\n")[:2] == [f"Request: {FINAL_REQUEST}", f"Result: {FINAL_RESULT}"]


def test_event_mapping_and_output() -> None:
    prompt = CLIENT.parse("beforeSubmitPrompt", {"prompt": "fix it", "conversation_id": "c1"})
    assert prompt.inject and prompt.prompt == "fix it" and prompt.session_id == "c1"
    assert CLIENT.output(prompt, "ctx") == {"continue": True, "additional_context": "ctx"}
    assert CLIENT.output(prompt, None) == {}
    start = CLIENT.parse("sessionStart", {})
    assert start.session_start and CLIENT.output(start, "ctx") == {"additional_context": "ctx"}
    response = CLIENT.parse("afterAgentResponse", {"text": "All done."})
    assert response.capture == "outcome" and response.last_message == "All done."
    assert CLIENT.output(CLIENT.parse("stop", {}), "ctx") == {}


def test_no_secret_reaches_a_record(tmp_path: Path) -> None:
    root = str(tmp_path)
    path = write_jsonl(tmp_path / "s.jsonl",
                       cursor_transcript(root, request=SECRET_REQUEST, result=SECRET_RESULT))
    recs = records("stop", cursor_payload("stop", root, path))
    recs += records("beforeSubmitPrompt", cursor_payload("beforeSubmitPrompt", root, path,
                                                         prompt=SECRET_REQUEST))
    assert len(recs) == 2
    for rec in recs:
        blob = json.dumps(dataclasses.asdict(rec))
        assert FAKE_SECRETS[0] not in blob and FAKE_SECRETS[1] not in blob


def test_capture_then_recall_through_the_shim(served: Served) -> None:
    root = str(served.root)
    path = write_jsonl(served.root.parent / "t.jsonl", cursor_transcript(root))
    out = served.hook("stop", cursor_payload("stop", root, path), provider="cursor")
    assert out == {}
    out = served.hook("beforeSubmitPrompt", cursor_payload(
        "beforeSubmitPrompt", root, None, conversation_id="c-next",
        prompt="How is the gateway retry policy configured?"), provider="cursor")
    assert out["continue"] is True
    assert "configurable" in out["additional_context"]
    assert " · cursor" in out["additional_context"]  # the entry's provenance line
    memory = served.call("status")["memory"]
    assert (memory["records"], memory["prompts"]) == (1, 1)  # the turn; the prompt apart
