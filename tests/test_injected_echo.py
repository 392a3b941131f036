"""What lintaid injected never comes back as the person's request, for any client.

The Gemini cases are the shapes Gemini CLI 0.61.0 wrote here (tests/test_real_clients_gemini.py
runs the real program): the chat opens with a ``<session_context>`` user message, and the
SessionStart and BeforeAgent contexts come back as ``<hook_context>`` inside the prompt, in the
recording and in the BeforeAgent and AfterAgent payloads alike.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from lintaid.capture import echo
from lintaid.hooks import build_records
from lintaid.integrations import injection, registry
from lintaid.integrations.base import HookEvent
from tests.client_sessions import write_jsonl

STATE = (f"{injection.STATE_HEADER}\n\nLast outcomes on branch main:\n- m033adc49dc26e1113d01557"
         " (2026-12-01 22:45Z, gemini://s1/outcome): Request: We decided the gateway timeout "
         "is 300 seconds. | Result: Decided: 300 seconds.")
RECALL = (f"{injection.HEADER}\n\n- Memory m4a88cbae40c15526186982f [current]\n  Source: "
          "gemini://s1/outcome\n  Request: We decided the gateway timeout is 300 seconds.")
SESSION_CONTEXT = ("<session_context>\nThis is the Gemini CLI. We are setting up the context "
                   "for our chat.\n- **Directory Structure:**\n/srv/proj/\n├───README.md\n"
                   "<loaded_context>\n<project_context>\nThe following are instructions "
                   "provided by the tool server 'lintaid':\nProject memory for this "
                   "repository\n</project_context>\n</loaded_context>\n</session_context>")
PROMPT = "What is the gateway timeout and how often does it retry?"
GEMINI_PROMPT = f"<hook_context>{STATE}\n</hook_context>\n\n{PROMPT}"

# Each client's prompt event: (event, payload holding the prompt).
PROMPT_EVENTS: dict[str, tuple[str, dict[str, Any]]] = {
    "claude-code": ("UserPromptSubmit", {}),
    "codex": ("UserPromptSubmit", {}),
    "gemini": ("BeforeAgent", {}),
    "cursor": ("beforeSubmitPrompt", {}),
    "agy": ("PreInvocation", {}),
    "openclaw": ("before_prompt_build", {}),
    "opencode": ("chat.message", {}),
    "copilot": ("UserPromptSubmit", {}),
}


def test_every_block_lintaid_renders_carries_the_marker() -> None:
    for header in (injection.HEADER, injection.STATE_HEADER):
        first = header.splitlines()[0]
        assert re.match(r"^[A-Z][^\n]{0,60}? " + re.escape(echo.OWN_MARKER), first), first


@pytest.mark.parametrize(("text", "kept"), [
    (GEMINI_PROMPT, PROMPT),
    (f"{SESSION_CONTEXT}\n{PROMPT}", PROMPT),
    (f"{PROMPT}\n\n{RECALL}", PROMPT),  # unwrapped: from lintaid's header on
    (f"<hook_context>{RECALL[:200]}", ""),  # a wrapper cut open runs to the end
    (f"<system-reminder>Todo list is empty</system-reminder>\n{PROMPT}", PROMPT),
    (STATE, ""),
    (PROMPT, PROMPT),
    ("Why does lintaid (the daemon) print <b>bold</b> in the viewer?",
     "Why does lintaid (the daemon) print <b>bold</b> in the viewer?"),
])
def test_strip(text: str, kept: str) -> None:
    assert echo.strip(text) == kept
    assert echo.injected_only(text) == (not kept)


@pytest.mark.parametrize("name", registry.names())
def test_no_client_records_an_injected_prompt(name: str) -> None:
    client = registry.get(name)
    if name not in PROMPT_EVENTS:
        pytest.fail(f"{name}: add its prompt event to PROMPT_EVENTS")
    event, extra = PROMPT_EVENTS[name]
    for prompt, wanted in ((GEMINI_PROMPT, PROMPT), (f"<hook_context>{RECALL}</hook_context>",
                                                     None), (RECALL, None)):
        payload = {"prompt": prompt, "session_id": "s2", "cwd": "/srv/proj", **extra}
        ev = client.event(event, payload)
        assert ev.prompt == wanted, (name, prompt[:60])
        records = build_records(client, ev, now=1.0)
        prompts = [r.content for r in records if r.kind == "prompt"]
        assert prompts == ([f"User prompt: {wanted}"] if wanted else []), name


def gemini_recording_as_written(cwd: str) -> list[dict[str, Any]]:
    """A second session's chat recording, line for line as Gemini CLI 0.61.0 wrote it."""
    return [
        {"sessionId": "s2", "projectHash": "6cfd", "startTime": "2026-12-01T22:45:56.723Z",
         "lastUpdated": "2026-12-01T22:45:56.723Z", "kind": "main"},
        {"$set": {"messages": [{"id": "d049", "timestamp": "2026-12-01T22:45:56.724Z",
                                "type": "user", "content": [{"text": SESSION_CONTEXT}]}],
                  "lastUpdated": "2026-12-01T22:45:56.724Z"}},
        {"id": "a16f", "timestamp": "2026-12-01T22:45:57.409Z", "type": "user",
         "content": [{"text": GEMINI_PROMPT},
                     {"text": f"<hook_context>{RECALL}\n</hook_context>"}]},
        {"$set": {"lastUpdated": "2026-12-01T22:45:57.410Z"}},
        {"id": "59b8", "timestamp": "2026-12-01T22:45:57.640Z", "type": "gemini",
         "content": "The timeout is 600 seconds; it retries three times.", "thoughts": [],
         "model": "gemini-2.5-flash"},
    ]


def gemini_event(name: str, cwd: str, path: Path, **fields: Any) -> HookEvent:
    payload = {"session_id": "s2", "transcript_path": str(path), "cwd": cwd,
               "hook_event_name": name, "timestamp": "2026-12-01T22:45:57.700Z", **fields}
    return registry.get("gemini").event(name, payload)


def test_gemini_turn_is_the_persons_prompt_not_the_echo(tmp_path: Path) -> None:
    cwd = str(tmp_path)
    lines = gemini_recording_as_written(cwd)
    path = write_jsonl(tmp_path / "session-2026-12-01T22-45-s2.jsonl", lines)
    gemini = registry.get("gemini")
    reply = "The timeout is 600 seconds; it retries three times."
    after = gemini_event("AfterAgent", cwd, path, prompt=GEMINI_PROMPT, prompt_response=reply,
                         stop_hook_active=False)
    [turn] = build_records(gemini, after, now=1.0)
    assert turn.content == f"Request: {PROMPT}\nResult: {reply}"
    # The recording alone (a session end) reads the same turn, the same record.
    [end] = build_records(gemini, gemini_event("SessionEnd", cwd, path, reason="exit"), now=1.0)
    assert end.record_id == turn.record_id and end.content == turn.content
    # Before the model answered, a compaction finds the turn still open: nothing to keep,
    # and never the <session_context> that opened the chat.
    open_path = write_jsonl(tmp_path / "open.jsonl", lines[:4])
    assert build_records(gemini, gemini_event("PreCompress", cwd, open_path,
                                              trigger="auto"), now=1.0) == []
    only_context = write_jsonl(tmp_path / "fresh.jsonl", lines[:2])
    assert build_records(gemini, gemini_event("SessionEnd", cwd, only_context,
                                              reason="exit"), now=1.0) == []
