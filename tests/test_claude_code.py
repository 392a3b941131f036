from __future__ import annotations

import dataclasses
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from lintaid.capture import git as gitinfo
from lintaid.capture.record import NewRecord
from lintaid.hooks import build_records
from lintaid.integrations import registry
from lintaid.integrations.claude_code import CAPTURE_EVENTS, INJECT_EVENTS, ClaudeCode
from tests.transcripts import (
    DEFAULT_SESSION,
    FAKE_SECRETS,
    FINAL_REQUEST,
    SECRET_LAST_MESSAGE,
    realistic_turns,
    secret_turns,
    stop_payload,
    write_secret_transcript,
    write_transcript,
)

GIT_ENV = {
    "GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "T", "GIT_COMMITTER_EMAIL": "t@example.com",
}


def git(repo: Path, *args: str) -> str:
    out = subprocess.run(["git", "-C", str(repo), "-c", "commit.gpgsign=false", *args],
                         capture_output=True, text=True, check=True,
                         env={**os.environ, **GIT_ENV})
    return out.stdout.strip()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A git repository with one commit, used as the session's cwd."""
    gitinfo.clear_cache()
    root = tmp_path / "project"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "README.md").write_text("hello\n")
    git(root, "add", "README.md")
    git(root, "commit", "-q", "-m", "init")
    return root


CLIENT = ClaudeCode()


def records_for_event(event: str, payload: dict[str, Any],
                      now: float | None = None) -> list[NewRecord]:
    return build_records(CLIENT, CLIENT.parse(event, payload), now=now)


def stop_for(project: Path, **extra: Any) -> dict[str, Any]:
    path = write_transcript(project.parent / "t.jsonl", realistic_turns(str(project)),
                            cwd=str(project))
    return stop_payload(path, cwd=str(project), **extra)


# --- capture ----------------------------------------------------------------------------------


def test_stop_builds_one_outcome_record(project: Path) -> None:
    payload = stop_for(project)
    [rec] = records_for_event("Stop", payload, now=1_700_000_000.0)
    lines = rec.content.split("\n")
    assert lines[0] == f"Request: {FINAL_REQUEST}"
    # the result keeps its lines: each list item is a statement of its own
    assert lines[1:7] == ["Result: Done. Summary of the change:", "",
                          "- `gateway/retry.py`: `RetryPolicy` now reads `max_retries` and "
                          "`backoff_ms` from config.",
                          "- `tests/test_retry.py`: three new tests cover the exponential "
                          "backoff.", "", "All 42 tests pass."]
    assert lines[7] == (f"Affected paths: {project}/gateway/retry.py, "
                        f"{project}/tests/test_retry.py")
    assert lines[8] == "Tools used: Edit, Write, Bash"
    assert len(lines) == 9
    assert rec.kind == "capture"
    assert rec.source == f"claude-code://{DEFAULT_SESSION}/outcome"
    assert rec.provider == "claude-code"
    assert rec.session_id == DEFAULT_SESSION
    assert (rec.event, rec.doc_type, rec.cwd) == ("Stop", "outcome", str(project))
    assert rec.branch == "main"
    assert rec.revision == git(project, "rev-parse", "HEAD")
    assert rec.tools == ["Edit", "Write", "Bash"]
    assert rec.paths == [f"{project}/gateway/retry.py", f"{project}/tests/test_retry.py"]
    assert rec.created_at == 1_700_000_000.0
    assert rec.metadata["permission_mode"] == "default"


def test_replay_gives_the_same_record_id(project: Path) -> None:
    payload = stop_for(project)
    [first] = records_for_event("Stop", payload, now=1.0)
    [second] = records_for_event("Stop", json.loads(json.dumps(payload)), now=999.0)
    assert first.record_id == second.record_id
    assert first.content == second.content
    # The same turn, however its result reads, is one record: a turn's id is its session and
    # its request's transcript id (the first capture's text is kept).
    [same_turn] = records_for_event("Stop", {**payload, "last_assistant_message": "Different."})
    assert same_turn.record_id == first.record_id
    assert same_turn.turn_id == first.turn_id and first.turn_id
    # The next request is another turn, even with the same words (its own transcript id).
    path = Path(payload["transcript_path"])
    write_transcript(path, [("user", FINAL_REQUEST), ("assistant", "Again: done.")],
                     cwd=str(project), append=True)
    [next_turn] = records_for_event("Stop", {**payload, "last_assistant_message": "Again."})
    assert next_turn.record_id != first.record_id
    assert next_turn.request_hash == first.request_hash


def test_stop_hook_active_captures_nothing(project: Path) -> None:
    assert records_for_event("Stop", stop_for(project, stop_hook_active=True)) == []
    payload = stop_for(project, event="SubagentStop", stop_hook_active=True)
    assert records_for_event("SubagentStop", payload) == []


def test_last_assistant_message_is_the_result(project: Path) -> None:
    payload = stop_for(project, last_assistant_message="Shipped it.\nAll green.")
    [rec] = records_for_event("Stop", payload)
    assert "Result: Shipped it.\nAll green.\n" in rec.content


def test_subagent_stop_reads_the_agent_transcript(project: Path) -> None:
    main = write_transcript(project.parent / "main.jsonl", [("user", "main q"),
                                                             ("assistant", "main a")])
    agent = write_transcript(project.parent / "agent.jsonl", [("user", "find the config loader"),
                                                               ("assistant", "It is in cfg.py")])
    payload = stop_payload(main, cwd=str(project), event="SubagentStop",
                           agent_transcript_path=str(agent), agent_type="Explore",
                           agent_id="a1")
    [rec] = records_for_event("SubagentStop", payload)
    assert "Request: find the config loader" in rec.content
    assert "Result: It is in cfg.py" in rec.content
    assert rec.doc_type == "outcome" and rec.event == "SubagentStop"
    assert rec.metadata["agent_type"] == "Explore"


def test_precompact_and_session_end_never_copy_the_turn(project: Path) -> None:
    base = stop_for(project)
    [turn] = records_for_event("Stop", base)
    payload = {**base, "hook_event_name": "PreCompact", "trigger": "manual",
               "custom_instructions": "keep the retry decisions"}
    payload.pop("stop_hook_active")
    caught_up, checkpoint = records_for_event("PreCompact", payload)
    # The last turn again, with the Stop's id, marked as a catch-up; and the summary alone.
    assert caught_up.record_id == turn.record_id and caught_up.catch_up
    assert not turn.catch_up
    assert checkpoint.content == "Compact summary: keep the retry decisions"
    assert checkpoint.doc_type == "checkpoint" and checkpoint.source.endswith("/checkpoint")
    assert checkpoint.metadata["trigger"] == "manual"

    end = {**base, "hook_event_name": "SessionEnd", "reason": "prompt_input_exit"}
    [again] = records_for_event("SessionEnd", end)
    assert again.record_id == turn.record_id and again.catch_up
    assert again.doc_type == "outcome" and again.event == "SessionEnd"
    assert again.metadata["reason"] == "prompt_input_exit"


def test_precompact_summary_alone_is_enough(tmp_path: Path) -> None:
    payload = {"session_id": "s", "transcript_path": str(tmp_path / "missing.jsonl"),
               "cwd": str(tmp_path), "compact_summary": "We chose uv over pip."}
    [rec] = records_for_event("PreCompact", payload)
    assert rec.content == "Compact summary: We chose uv over pip."


def test_nothing_to_capture(tmp_path: Path) -> None:
    payload = {"session_id": "s", "transcript_path": str(tmp_path / "missing.jsonl"),
               "cwd": str(tmp_path)}
    for event in CAPTURE_EVENTS:
        assert records_for_event(event, payload) == []
    assert records_for_event("Stop", {}) == []
    assert records_for_event("PostToolUse", payload) == []
    assert records_for_event("Notification", payload) == []


def test_no_secret_reaches_any_field(project: Path) -> None:
    path = write_secret_transcript(project.parent / "s.jsonl", cwd=str(project))
    payload = stop_payload(path, cwd=str(project), last_assistant_message=SECRET_LAST_MESSAGE,
                           custom_instructions=f"use token {FAKE_SECRETS[1]}",
                           api_key=FAKE_SECRETS[-1])
    records = records_for_event("Stop", payload)
    payload_pc = {**payload, "hook_event_name": "PreCompact",
                  "compact_summary": f"Set password = \"hunter2\" and {FAKE_SECRETS[3]}"}
    records += records_for_event("PreCompact", payload_pc)
    records += records_for_event("SessionEnd", {**payload, "last_assistant_message": None})
    prompt = secret_turns()[0][1]  # the pasted .env, curl, key block ...
    records += records_for_event("UserPromptSubmit", {**payload, "prompt": prompt})
    assert len(records) == 5  # the turn (and its catch-ups), the compaction summary, the prompt
    for rec in records:
        blob = json.dumps(dataclasses.asdict(rec)) + rec.record_id
        for secret in FAKE_SECRETS:
            assert secret not in blob, (rec.doc_type, secret)
    assert "Please fix the deploy script." in records[0].content
    assert "Rotated the keys." in records[0].content


def test_prompt_record(project: Path) -> None:
    payload = {"session_id": "s1", "cwd": str(project), "hook_event_name": "UserPromptSubmit",
               "prompt": "  Use uv, not pip.\n\nAlso pin ruff.  "}
    [rec] = records_for_event("UserPromptSubmit", payload, now=5.0)
    assert rec.content == "User prompt: Use uv, not pip.\n\nAlso pin ruff."  # lines kept
    assert (rec.kind, rec.doc_type, rec.source) == ("prompt", "prompt", "claude-code://s1/prompt")
    assert rec.branch == "main"
    [again] = records_for_event("UserPromptSubmit", payload, now=6.0)
    assert again.record_id == rec.record_id

    long = records_for_event("UserPromptSubmit", {**payload, "prompt": "word " * 2000})
    assert len(long[0].content.encode()) <= 4000 and long[0].content.endswith("...")
    assert records_for_event("UserPromptSubmit", {**payload, "prompt": "   "}) == []
    assert records_for_event("UserPromptSubmit", {**payload, "prompt": None}) == []


def test_parse_says_what_each_event_does() -> None:
    start = CLIENT.parse("SessionStart", {"source": "startup"})
    assert start.inject and start.session_start and start.source == "startup"
    prompt = CLIENT.parse("UserPromptSubmit", {"prompt": " how do retries work? "})
    assert prompt.inject and prompt.prompt == "how do retries work?"
    assert CLIENT.parse("UserPromptSubmit", {"prompt": ""}).prompt is None
    stop = CLIENT.parse("Stop", {"prompt": "x"})
    assert not stop.inject and stop.prompt is None and stop.capture == "outcome"
    assert INJECT_EVENTS == {"SessionStart", "UserPromptSubmit"}
    assert registry.get("claude-code") is registry.CLIENTS["claude-code"]


def test_a_result_opening_with_a_block_starts_below_its_label(project: Path) -> None:
    # "Result: ```rust" is no fence to a Markdown reader: the code would be read as prose.
    from lintaid.capture.record import sections
    from lintaid.retrieval.statements import statements

    reply = "```rust\nfn id(x: u8) -> u8 { x }\n```\n- `id` is a no-op"
    [rec] = records_for_event("Stop", stop_for(project, last_assistant_message=reply))
    assert f"\nResult:\n{reply}\n" in rec.content
    assert sections(rec.content)["Result"] == reply
    code = [st for st in statements(rec.content) if st.code]
    assert len(code) == 1 and "fn id" in code[0].text and code[0].part == "result"
    plain = stop_for(project, last_assistant_message="Shipped it.")
    [rec] = records_for_event("Stop", plain)
    assert "\nResult: Shipped it." in rec.content
