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


def gemini_recording_as_written(cwd: str, prompt: str = PROMPT) -> list[dict[str, Any]]:
    """A second session's chat recording, line for line as Gemini CLI 0.61.0 wrote it (the
    person's ``prompt`` in its place)."""
    return [
        {"sessionId": "s2", "projectHash": "6cfd", "startTime": "2026-12-01T22:45:56.723Z",
         "lastUpdated": "2026-12-01T22:45:56.723Z", "kind": "main"},
        {"$set": {"messages": [{"id": "d049", "timestamp": "2026-12-01T22:45:56.724Z",
                                "type": "user", "content": [{"text": SESSION_CONTEXT}]}],
                  "lastUpdated": "2026-12-01T22:45:56.724Z"}},
        {"id": "a16f", "timestamp": "2026-12-01T22:45:57.409Z", "type": "user",
         "content": [{"text": GEMINI_PROMPT.replace(PROMPT, prompt)},
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


MULTILINE_PROMPT = ("Two questions about the gateway:\n\n- What is its timeout?  \n"
                    "- How often does it retry?\n\n\n```\ngateway --show\n```")


@pytest.mark.parametrize("prompt", [PROMPT, MULTILINE_PROMPT])
def test_gemini_turn_is_the_persons_prompt_not_the_echo(tmp_path: Path, prompt: str) -> None:
    cwd = str(tmp_path)
    lines = gemini_recording_as_written(cwd, prompt)
    path = write_jsonl(tmp_path / "session-2026-12-01T22-45-s2.jsonl", lines)
    gemini = registry.get("gemini")
    reply = "The timeout is 600 seconds; it retries three times."
    after = gemini_event("AfterAgent", cwd, path, prompt=GEMINI_PROMPT.replace(PROMPT, prompt),
                         prompt_response=reply, stop_hook_active=False)
    [turn] = build_records(gemini, after, now=1.0)
    # compact(): trailing spaces off, blank runs down to one, the lines kept.
    kept = prompt.replace("  \n", "\n").replace("\n\n\n", "\n\n")
    assert turn.content == f"Request: {kept}\nResult: {reply}"
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


# -- multi-line turns: capture keeps a turn's lines (``compact``), so an injected block is
# dropped line by line and the person's lists and code fences come through as written.
PERSON = ("We decided three things for the gateway:\n\n- timeout: 600 seconds\n"
          "- retries: 3, with backoff\n\n```python\nTIMEOUT_S = 600\n```")
MULTILINE_RECALL = (f"{injection.HEADER}\n- m4a88cbae40c15526186982f · 2026-12-01 22:45Z · "
                    "gemini · current\n  Request: We decided three things:\n"
                    "  - timeout: 300 seconds\n  Result: Decided.\n")
MULTILINE_STATE = (f"{injection.STATE_HEADER}\n\nCurrent decisions, newest first:\n"
                   "- \"timeout: 300 seconds\" (m4a88cbae40c15526186982f)\n\n"
                   "Last outcomes on branch main:\n- m4a88cbae40c15526186982f: Request: We "
                   "decided three things: | Result: Decided.\n")
# What a client may write back around the person's words: its wrappers (Gemini's
# <hook_context> and <session_context>, Claude Code's <system-reminder>, lintaid's own
# wrapper for Antigravity) anywhere, and lintaid's block unwrapped after them.
ECHOED = (f"{SESSION_CONTEXT}\n<hook_context>{MULTILINE_STATE}\n</hook_context>\n\n{PERSON}\n"
          f"<system-reminder>\nUserPromptSubmit hook additional context: {MULTILINE_RECALL}"
          f"</system-reminder>\n<{echo.UNTRUSTED_TAG}>\n{MULTILINE_RECALL}"
          f"</{echo.UNTRUSTED_TAG}>\n<hook_context>{MULTILINE_RECALL}</hook_context>\n\n"
          f"{MULTILINE_RECALL}")
REPLY = "Noted: the gateway timeout is 600 seconds, with 3 retries."


def _capture_event(name: str, tmp_path: Path, request: str) -> HookEvent:
    """Each client's turn-closing event for a session whose last request is ``request``, in
    the client's own transcript (or payload) format."""
    from tests import client_sessions as cs
    from tests.transcripts import stop_payload, write_transcript

    cwd = str(tmp_path)
    client = registry.get(name)
    if name == "claude-code":
        path = write_transcript(tmp_path / "t.jsonl", [("user", request), ("assistant", REPLY)])
        return client.event("Stop", stop_payload(path, cwd=cwd))
    if name == "codex":
        path = write_jsonl(tmp_path / "rollout.jsonl", cs.codex_rollout(cwd, request=request,
                                                                         result=REPLY))
        return client.event("Stop", cs.codex_payload("Stop", cwd, path,
                                                     last_assistant_message=REPLY))
    if name == "gemini":
        path = write_jsonl(tmp_path / "chat.jsonl", cs.gemini_recording(cwd, request=request,
                                                                         result=REPLY))
        return client.event("AfterAgent", cs.gemini_payload(
            "AfterAgent", cwd, path, prompt=request, prompt_response=REPLY))
    if name == "cursor":
        path = write_jsonl(tmp_path / "t.jsonl", cs.cursor_transcript(cwd, request=request,
                                                                       result=REPLY))
        return client.event("stop", cs.cursor_payload("stop", cwd, path))
    if name == "agy":
        path = write_jsonl(tmp_path / "steps.jsonl", cs.agy_steps(cwd, request=request,
                                                                   result=REPLY))
        return client.event("PostInvocation", cs.agy_payload("PostInvocation", cwd, path))
    if name == "openclaw":
        return client.event("agent_end", cs.openclaw_payload(
            "agent_end", cwd, messages=cs.openclaw_messages(request=request, result=REPLY),
            success=True))
    if name == "opencode":
        return client.event("session.idle", cs.opencode_payload(
            "session.idle", cwd, messages=cs.opencode_messages(cwd, request=request,
                                                               result=REPLY)))
    if name == "copilot":
        path = write_jsonl(tmp_path / "events.jsonl", cs.copilot_events(cwd, request=request,
                                                                         result=REPLY))
        return client.event("Stop", cs.copilot_payload("Stop", cwd, path,
                                                       stop_hook_active=False))
    pytest.fail(f"{name}: add its capture event to _capture_event")


@pytest.mark.parametrize("name", registry.names())
def test_multiline_turn_keeps_its_lines_and_drops_every_injected_block(
        name: str, tmp_path: Path) -> None:
    client = registry.get(name)
    [turn] = build_records(client, _capture_event(name, tmp_path, ECHOED), now=1.0)
    assert turn.content.startswith(f"Request: {PERSON}\nResult: {REPLY}"), (name, turn.content)
    for marker in ("(lintaid)", "<hook_context>", "<session_context>", "<system-reminder>",
                   echo.UNTRUSTED_TAG, "300 seconds"):
        assert marker not in turn.content, (name, marker, turn.content)
    # The same turn as the prompt event sees it: kept with its lines, nothing injected.
    event, extra = PROMPT_EVENTS[name]
    ev = client.event(event, {"prompt": ECHOED, "session_id": "s2", "cwd": str(tmp_path),
                              **extra})
    assert ev.prompt == PERSON, name
    prompts = [r.content for r in build_records(client, ev, now=1.0) if r.kind == "prompt"]
    assert prompts == [f"User prompt: {PERSON}"], name


@pytest.mark.parametrize("name", registry.names())
def test_a_multiline_turn_of_injected_text_only_is_no_capture(name: str, tmp_path: Path) -> None:
    only = ECHOED.replace(f"\n\n{PERSON}\n", "\n")
    records = build_records(registry.get(name), _capture_event(name, tmp_path, only), now=1.0)
    # The earlier turn of the session may be what is left; never the injected text.
    for rec in records:
        assert "(lintaid)" not in rec.content and "300 seconds" not in rec.content, \
            (name, rec.content)
        assert not rec.content.startswith("Request: <"), (name, rec.content)
