"""Realistic transcripts and hook payloads for the clients other than Claude Code, written from
the protocol notes (``agent-protocols.md`` sections 2-4, ``lint-ai-behaviour.md`` 4.4-4.5).

Every session is the same story as ``tests.transcripts.realistic_turns``: a first question, then
``FINAL_REQUEST`` ("Make the gateway retry policy configurable ..."), tool calls that touch
``gateway/retry.py`` and ``tests/test_retry.py``, and a final reply (``CODEX_RESULT`` etc.).
Each writer puts the client's own noise around it (harness messages, reasoning, upserts,
context tags, checkpoints) that capture must skip.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.transcripts import FAKE_SECRETS, FINAL_REQUEST

FIRST_QUESTION = "What does the gateway do when the upstream times out?"
FIRST_ANSWER = "It retries three times with a fixed 200 ms delay."
FINAL_RESULT = ("Done. RetryPolicy now reads max_retries and backoff_ms from config, and "
                "tests/test_retry.py covers the exponential backoff.")
SECRET_REQUEST = (f"Deploy fails. My key is AWS_ACCESS_KEY_ID={FAKE_SECRETS[0]}\n"
                  f"and the token {FAKE_SECRETS[1]}. Please fix the deploy script.")
SECRET_RESULT = f"Rotated the keys; the old token {FAKE_SECRETS[1]} is revoked."

CODEX_SESSION = "019a2d7a-41c4-78b1-b7cc-a45d62a89cd5"
GEMINI_SESSION = "8f2c1a3b-5d21-4b8e-9c61-2a7f4e8d1b30"
CURSOR_CONVERSATION = "3c9e1f0a-77b2-4d0e-a1f3-5e6d7c8b9a01"
AGY_CONVERSATION = "b1e4c9d2-0a3f-4e5b-8c7d-6f5e4d3c2b1a"
STAMP = "2026-08-20T10:00:{:02d}.000Z"


def write_jsonl(path: Path, entries: list[Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
    return path


# --- Codex rollout ----------------------------------------------------------------------------
def _codex_item(n: int, payload: dict[str, Any], kind: str = "response_item") -> dict[str, Any]:
    return {"timestamp": STAMP.format(n), "type": kind, "payload": payload}


def _codex_message(role: str, text: str) -> dict[str, Any]:
    block = "input_text" if role == "user" else "output_text"
    return {"type": "message", "role": role, "content": [{"type": block, "text": text}]}


def codex_rollout(cwd: str, session_id: str = CODEX_SESSION, request: str = FINAL_REQUEST,
                  result: str = FINAL_RESULT) -> list[dict[str, Any]]:
    patch = ("*** Begin Patch\n*** Update File: gateway/retry.py\n@@\n-    max_retries = 3\n"
             "+    max_retries = config.max_retries\n*** Add File: tests/test_retry.py\n"
             "+def test_backoff(): ...\n*** End Patch\n")
    return [
        _codex_item(0, {"id": session_id, "timestamp": STAMP.format(0), "cwd": cwd,
                        "originator": "codex_cli_rs", "cli_version": "0.46.0",
                        "source": "cli", "git": {"branch": "main"}}, "session_meta"),
        _codex_item(1, {"type": "message", "role": "developer", "content": [
            {"type": "input_text", "text": "<permissions instructions>sandboxed</...>"}]}),
        _codex_item(1, _codex_message(
            "user", f"# AGENTS.md instructions for {cwd}\n\n<INSTRUCTIONS>use uv</INSTRUCTIONS>")),
        _codex_item(2, _codex_message(
            "user", f"<environment_context>\n  <cwd>{cwd}</cwd>\n</environment_context>")),
        _codex_item(3, {"cwd": cwd, "approval_policy": "on-request", "model": "gpt-5-codex"},
                    "turn_context"),
        _codex_item(4, _codex_message("user", FIRST_QUESTION)),
        _codex_item(5, _codex_message("assistant", FIRST_ANSWER)),
        _codex_item(6, _codex_message("user", request)),
        _codex_item(6, {"type": "user_message", "message": request, "kind": "plain"},
                    "event_msg"),
        _codex_item(7, {"type": "reasoning", "summary": [], "content": None,
                        "encrypted_content": "gAAAAABfake"}),
        _codex_item(8, {"type": "function_call", "name": "shell", "call_id": "call_1",
                        "arguments": json.dumps({"command": ["bash", "-lc",
                                                             "cat gateway/retry.py"],
                                                 "workdir": cwd})}),
        _codex_item(9, {"type": "function_call_output", "call_id": "call_1",
                        "output": json.dumps({"output": "class RetryPolicy: ...",
                                              "metadata": {"exit_code": 0}})}),
        _codex_item(10, {"type": "custom_tool_call", "status": "completed", "call_id": "call_2",
                         "name": "apply_patch", "input": patch}),
        _codex_item(11, {"type": "custom_tool_call_output", "call_id": "call_2",
                         "output": "Success. Updated the following files: ..."}),
        _codex_item(12, {"type": "agent_message", "message": result}, "event_msg"),
        _codex_item(12, _codex_message("assistant", result)),
        _codex_item(13, {"type": "token_count", "info": {"total_token_usage": {}}},
                    "event_msg"),
    ]


def codex_payload(event: str, cwd: str, transcript: Path | None,
                  session_id: str = CODEX_SESSION, **extra: Any) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "session_id": session_id,
        "transcript_path": str(transcript) if transcript else None,
        "cwd": cwd, "hook_event_name": event, "model": "gpt-5-codex",
        "permission_mode": "default",
    }
    if event in ("UserPromptSubmit", "Stop", "PreCompact"):
        payload["turn_id"] = "t1"
    if event == "Stop":
        payload.update(stop_hook_active=False, last_assistant_message=FINAL_RESULT)
    if event == "SessionStart":
        payload["source"] = "startup"
    if event == "SessionEnd":
        payload["reason"] = "other"
    if event == "PreCompact":
        payload["trigger"] = "auto"
    payload.update(extra)
    return payload


def codex_rollout_path(home: Path, session_id: str = CODEX_SESSION) -> Path:
    return (home / "sessions" / "2026" / "08" / "20"
            / f"rollout-2026-08-20T10-00-00-{session_id}.jsonl")


# --- Gemini CLI chat recording ----------------------------------------------------------------
def gemini_recording(cwd: str, session_id: str = GEMINI_SESSION, request: str = FINAL_REQUEST,
                     result: str = FINAL_RESULT) -> list[dict[str, Any]]:
    read_call = {"id": "read_file-1", "name": "read_file", "status": "success",
                 "args": {"absolute_path": f"{cwd}/gateway/retry.py"},
                 "timestamp": STAMP.format(6)}
    return [
        {"sessionId": session_id, "projectHash": "5f1e0c", "startTime": STAMP.format(0),
         "lastUpdated": STAMP.format(0), "kind": "main", "directories": [cwd]},
        {"id": "m1", "timestamp": STAMP.format(1), "type": "user",
         "content": [{"text": FIRST_QUESTION}]},
        {"id": "m2", "timestamp": STAMP.format(2), "type": "gemini",
         "content": [{"text": "Let me think.", "thought": True}, {"text": FIRST_ANSWER}],
         "thoughts": [{"subject": "Timeouts", "description": "read retry.py"}],
         "tokens": {"input": 900, "output": 40}, "model": "gemini-2.5-pro"},
        {"id": "m3", "timestamp": STAMP.format(3), "type": "user", "content": "/stats"},
        {"id": "m4", "timestamp": STAMP.format(4), "type": "user", "content": [{"text": request}]},
        {"id": "m5", "timestamp": STAMP.format(5), "type": "gemini",
         "content": [{"text": "I'll read the retry module."}], "toolCalls": [read_call]},
        # the same record again, now with the tool's result: an upsert, not a new message
        {"id": "m5", "timestamp": STAMP.format(5), "type": "gemini",
         "content": [{"text": "I'll read the retry module."}],
         "toolCalls": [{**read_call, "result": [{"functionResponse": {"response": {
             "output": "class RetryPolicy: ..."}}}]}]},
        {"$set": {"lastUpdated": STAMP.format(6)}},
        {"id": "m6", "timestamp": STAMP.format(6), "type": "gemini", "content": "",
         "toolCalls": [{"id": "replace-1", "name": "replace", "status": "success",
                        "args": {"file_path": f"{cwd}/gateway/retry.py",
                                 "old_string": "a", "new_string": "b"}},
                       {"id": "write_file-1", "name": "write_file", "status": "success",
                        "args": {"file_path": f"{cwd}/tests/test_retry.py",
                                 "content": "def test_backoff(): ..."}}]},
        {"id": "m7", "timestamp": STAMP.format(7), "type": "user", "content": "no wait, undo"},
        {"id": "m8", "timestamp": STAMP.format(8), "type": "gemini", "content": "Undoing."},
        {"$rewindTo": "m7"},
        {"id": "m9", "timestamp": STAMP.format(9), "type": "info", "content": "Tests passed."},
        {"id": "m10", "timestamp": STAMP.format(10), "type": "gemini",
         "content": [{"text": result}]},
    ]


def gemini_payload(event: str, cwd: str, transcript: Path | None,
                   session_id: str = GEMINI_SESSION, **extra: Any) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "session_id": session_id,
        "transcript_path": str(transcript) if transcript else None,
        "cwd": cwd, "hook_event_name": event, "timestamp": STAMP.format(11),
    }
    if event == "AfterAgent":
        payload.update(prompt=FINAL_REQUEST, prompt_response=FINAL_RESULT,
                       stop_hook_active=False)
    if event == "SessionStart":
        payload["source"] = "startup"
    if event == "SessionEnd":
        payload["reason"] = "exit"
    if event == "PreCompress":
        payload["trigger"] = "auto"
    payload.update(extra)
    return payload


# --- Cursor agent transcript ------------------------------------------------------------------
def cursor_transcript(cwd: str, request: str = FINAL_REQUEST,
                      result: str = FINAL_RESULT) -> list[dict[str, Any]]:
    def user(text: str) -> dict[str, Any]:
        return {"role": "user", "message": {"content": [{"type": "text", "text": (
            "<user_info>\nOS Version: linux 6.8\nWorkspace Path: " + cwd + "\n</user_info>\n"
            "<attached_files>\n<file path=\"README.md\">hello</file>\n</attached_files>\n"
            f"<user_query>\n{text}\n</user_query>")}]}}

    def assistant(*blocks: dict[str, Any]) -> dict[str, Any]:
        return {"role": "assistant", "message": {"content": list(blocks)}}

    return [
        user(FIRST_QUESTION),
        assistant({"type": "text", "text": FIRST_ANSWER}),
        user(request),
        assistant({"type": "text", "text": "I'll read the retry module first."},
                  {"type": "tool_use", "name": "read_file",
                   "input": {"target_file": "gateway/retry.py"}}),
        assistant({"type": "tool_use", "name": "edit_file",
                   "input": {"target_file": "gateway/retry.py", "instructions": "configurable"}},
                  {"type": "tool_use", "name": "edit_file",
                   "input": {"target_file": "tests/test_retry.py", "instructions": "add tests"}}),
        assistant({"type": "text", "text": result}),
    ]


def cursor_payload(event: str, root: str, transcript: Path | None,
                   conversation_id: str = CURSOR_CONVERSATION, **extra: Any) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "conversation_id": conversation_id, "generation_id": "g-7f3a",
        "hook_event_name": event, "workspace_roots": [root], "model": "claude-4.5-sonnet",
        "cursor_version": "2.0.77", "user_email": "dev@example.com",
        "transcript_path": str(transcript) if transcript else None,
    }
    if event == "stop":
        payload.update(status="completed", loop_count=0)
    if event == "beforeSubmitPrompt":
        payload["attachments"] = []
    payload.update(extra)
    return payload


# --- Antigravity CLI steps --------------------------------------------------------------------
def agy_steps(cwd: str, request: str = FINAL_REQUEST,
              result: str = FINAL_RESULT) -> list[dict[str, Any]]:
    def user(text: str) -> dict[str, Any]:
        return {"type": "CORTEX_STEP_TYPE_USER_INPUT", "content": (
            f"<USER_REQUEST>\n{text}\n</USER_REQUEST>\n"
            "<ADDITIONAL_METADATA>The current local time is 10:00.</ADDITIONAL_METADATA>")}

    return [
        user(FIRST_QUESTION),
        {"type": "CORTEX_STEP_TYPE_PLANNER_RESPONSE", "content": FIRST_ANSWER},
        {"type": "CORTEX_STEP_TYPE_CHECKPOINT", "content": "Checkpoint: summary of earlier work"},
        user(request),
        {"type": "CORTEX_STEP_TYPE_PLANNER_RESPONSE", "content": "I'll look at the retry module.",
         "toolCall": {"name": "view_file", "args": {"AbsolutePath": f"{cwd}/gateway/retry.py"}}},
        {"type": "CORTEX_STEP_TYPE_VIEW_FILE", "content": {"text": "class RetryPolicy: ..."}},
        {"type": "CORTEX_STEP_TYPE_PLANNER_RESPONSE", "content": "",
         "toolCall": {"name": "replace_file_content",
                      "args": {"TargetFile": f"{cwd}/gateway/retry.py"}}},
        {"type": "CORTEX_STEP_TYPE_PLANNER_RESPONSE", "content": "",
         "toolCall": {"name": "write_to_file",
                      "args": {"TargetFile": f"{cwd}/tests/test_retry.py"}}},
        {"type": "CORTEX_STEP_TYPE_PLANNER_RESPONSE", "content": result},
    ]


def agy_payload(event: str, root: str, transcript: Path | None,
                conversation_id: str = AGY_CONVERSATION, **extra: Any) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "conversationId": conversation_id, "stepIdx": 8,
        "transcriptPath": str(transcript) if transcript else None,
        "workspacePaths": [root], "artifactDirectoryPath": f"{root}/.artifacts",
    }
    payload.update(extra)
    return payload


# --- OpenClaw agent messages (what the plugin sends) ------------------------------------------
def openclaw_messages(request: str = FINAL_REQUEST,
                      result: str = FINAL_RESULT) -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>\nchannel: cli"},
        {"role": "user", "customType": "openclaw.runtime-context", "content": "runtime notes"},
        {"role": "user", "content": [{"type": "text", "text": FIRST_QUESTION}]},
        {"role": "assistant", "content": [{"type": "text", "text": FIRST_ANSWER}]},
        {"role": "user", "content": [{"type": "text", "text": request}]},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Reading the retry module."},
            {"type": "toolCall", "name": "read", "arguments": {"path": "gateway/retry.py"}}]},
        {"role": "toolResult", "content": [{"type": "text", "text": "class RetryPolicy: ..."}]},
        {"role": "assistant", "content": [
            {"type": "toolCall", "name": "edit", "arguments": {"path": "gateway/retry.py"}},
            {"type": "toolCall", "name": "write", "arguments": {"path": "tests/test_retry.py"}}]},
        {"role": "assistant", "content": [{"type": "text", "text": result}]},
    ]


def openclaw_payload(event: str, cwd: str, session_id: str = "oc-session-1",
                     **extra: Any) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "hook_event_name": event, "session_id": session_id,
        "session_key": "agent:main:main", "run_id": "run-42", "agent_id": "main",
        "workspace_dir": cwd, "cwd": cwd,
    }
    payload.update(extra)
    return payload


# --- OpenCode messages (what lintaid's plugin sends: OpenCode's {info, parts}, slimmed) -------
OPENCODE_SESSION = "ses_dcc17453bffe1cIR5O3LrcL64P"


def opencode_messages(cwd: str, request: str = FINAL_REQUEST,
                      result: str = FINAL_RESULT) -> list[dict[str, Any]]:
    return [
        {"role": "user", "id": "msg_1", "content": [{"type": "text", "text": FIRST_QUESTION}]},
        {"role": "assistant", "id": "msg_2", "content": [{"type": "text", "text": FIRST_ANSWER}]},
        {"role": "user", "id": "msg_3", "content": [{"type": "text", "text": request}]},
        {"role": "assistant", "id": "msg_4", "content": [
            {"type": "toolCall", "name": "read",
             "arguments": {"filePath": f"{cwd}/gateway/retry.py"}}]},
        {"role": "assistant", "id": "msg_5", "content": [
            {"type": "toolCall", "name": "edit",
             "arguments": {"filePath": f"{cwd}/gateway/retry.py"}},
            {"type": "toolCall", "name": "write",
             "arguments": {"filePath": f"{cwd}/tests/test_retry.py"}},
            {"type": "text", "text": result}]},
    ]


def opencode_payload(event: str, cwd: str, session_id: str = OPENCODE_SESSION,
                     **extra: Any) -> dict[str, Any]:
    payload: dict[str, Any] = {"hook_event_name": event, "session_id": session_id, "cwd": cwd}
    payload.update(extra)
    return payload


# --- GitHub Copilot CLI session log (events.jsonl, as Copilot CLI 1.0.102 wrote it) ----------
COPILOT_SESSION = "cbc407f6-c799-4b67-a3ea-5447ddfbb70e"


def _copilot_event(n: int, kind: str, data: dict[str, Any]) -> dict[str, Any]:
    return {"type": kind, "data": data, "id": f"e{n}", "timestamp": STAMP.format(n),
            "parentId": f"e{n - 1}" if n else None}


def copilot_events(cwd: str, request: str = FINAL_REQUEST,
                   result: str = FINAL_RESULT) -> list[dict[str, Any]]:
    return [
        _copilot_event(0, "session.start", {"sessionId": COPILOT_SESSION, "version": 1,
                                            "context": {"cwd": cwd, "branch": "main"}}),
        _copilot_event(1, "hook.start", {"hookType": "sessionStart", "input": {"cwd": cwd}}),
        _copilot_event(2, "user.message", {"content": FIRST_QUESTION, "messageId": "u1",
                                           "transformedContent": "<current_datetime>2026"
                                           "</current_datetime>\n\n" + FIRST_QUESTION}),
        _copilot_event(3, "assistant.message", {"messageId": "a1", "content": FIRST_ANSWER,
                                                "toolRequests": []}),
        _copilot_event(4, "user.message", {"content": request, "messageId": "u2",
                                           "transformedContent": request}),
        _copilot_event(5, "assistant.message", {"messageId": "a2", "content": "", "toolRequests": [
            {"toolCallId": "c1", "name": "view", "type": "function",
             "arguments": {"path": f"{cwd}/gateway/retry.py"}}]}),
        _copilot_event(6, "tool.execution_complete", {"toolCallId": "c1", "success": True,
                                                      "result": {"content": "class Retry"}}),
        _copilot_event(7, "assistant.message", {"messageId": "a3", "content": "", "toolRequests": [
            {"toolCallId": "c2", "name": "edit", "type": "function",
             "arguments": {"path": f"{cwd}/gateway/retry.py"}},
            {"toolCallId": "c3", "name": "create", "type": "function",
             "arguments": {"path": f"{cwd}/tests/test_retry.py"}}]}),
        _copilot_event(8, "assistant.message", {"messageId": "a4", "content": result,
                                                "toolRequests": []}),
        _copilot_event(9, "hook.start", {"hookType": "agentStop", "input": {}}),
    ]


def copilot_payload(event: str, cwd: str, transcript: Path | None,
                    **extra: Any) -> dict[str, Any]:
    """What Copilot CLI sends a hook registered under Claude Code's event name."""
    payload: dict[str, Any] = {"hook_event_name": event, "session_id": COPILOT_SESSION,
                               "timestamp": "2026-12-01T23:33:08.005Z", "cwd": cwd}
    if transcript is not None:
        payload["transcript_path"] = str(transcript)
    payload.update(extra)
    return payload
