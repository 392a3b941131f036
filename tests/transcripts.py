"""Build Claude Code transcript JSONL files for tests (unit and end-to-end).

Usage::

    from tests.transcripts import write_transcript, text, tool_use, tool_result, thinking

    path = write_transcript(tmp_path / "t.jsonl", [
        ("user", "Fix the retry bug in the gateway"),
        ("assistant", [thinking("let me look"), tool_use("Read", {"file_path": "/p/gw.py"})]),
        ("user", [tool_result("def retry(): ...")]),
        ("assistant", "Fixed: retries now back off exponentially."),
    ])

``turns`` is a list of ``(role, text_or_blocks)``:

- ``role`` is ``"user"`` or ``"assistant"``; ``"meta"`` writes a user entry with ``isMeta: true``
  (harness-injected text the reader must skip);
- ``text_or_blocks`` is a string (a typed prompt / plain reply) or a list of content blocks
  built with ``text``, ``thinking``, ``tool_use``, ``tool_result``.

An assistant turn with several blocks is written the way Claude Code writes it: one JSONL line
per block, all sharing one ``message.id``. A plain ``dict`` in ``turns`` is written verbatim (use
it for ``system``, ``progress`` or ``file-history-snapshot`` entries, or broken shapes).

``FAKE_SECRETS`` lists fake credentials; ``write_secret_transcript`` writes a transcript holding
every one of them (in prompts, replies, tool inputs and tool results), and ``SECRET_LAST_MESSAGE``
is a ``last_assistant_message`` holding several too. No secret may survive into a record.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

Turn = tuple[str, str | list[dict[str, Any]]] | dict[str, Any]

DEFAULT_SESSION = "0f3c9a7e-5d21-4b8e-9c61-2a7f4e8d1b30"
DEFAULT_CWD = "/home/dev/project"
_BASE_TIME = "2026-03-14T09:26:{:02d}.{:03d}Z"


# --- content blocks ---------------------------------------------------------------------------


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def thinking(value: str) -> dict[str, Any]:
    return {"type": "thinking", "thinking": value, "signature": "sig-" + _digest(value)[:12]}


def tool_use(name: str, tool_input: dict[str, Any], tool_id: str | None = None) -> dict[str, Any]:
    tid = tool_id or "toolu_" + _digest(name + json.dumps(tool_input, sort_keys=True))[:20]
    return {"type": "tool_use", "id": tid, "name": name, "input": tool_input}


def tool_result(
    content: str | list[dict[str, Any]], tool_use_id: str = "toolu_x", is_error: bool = False
) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": tool_use_id, "content": content,
            "is_error": is_error}


# --- writing ----------------------------------------------------------------------------------


def transcript_lines(
    turns: Iterable[Turn], *, session_id: str = DEFAULT_SESSION, cwd: str = DEFAULT_CWD
) -> list[dict[str, Any]]:
    """The JSONL entries ``write_transcript`` would write, as dicts."""
    entries: list[dict[str, Any]] = []
    parent: str | None = None
    counter = 0
    for turn_index, turn in enumerate(turns):
        if isinstance(turn, dict):
            entries.append(turn)
            continue
        role, content = turn
        is_meta = role == "meta"
        role = "user" if is_meta else role
        if role == "assistant" and isinstance(content, list) and len(content) > 1:
            pieces: list[Any] = [[block] for block in content]
        else:
            pieces = [content]
        msg_id = f"msg_{_digest(f'{session_id}:{turn_index}')[:22]}"
        for piece in pieces:
            counter += 1
            uuid = _uuid(f"{session_id}:{counter}")
            entry: dict[str, Any] = {
                "parentUuid": parent,
                "isSidechain": False,
                "userType": "external",
                "cwd": cwd,
                "sessionId": session_id,
                "version": "2.1.240",
                "gitBranch": "main",
                "type": role,
                "uuid": uuid,
                "timestamp": _BASE_TIME.format(counter % 60, counter % 1000),
            }
            if is_meta:
                entry["isMeta"] = True
            if role == "assistant":
                entry["message"] = {
                    "id": msg_id,
                    "type": "message",
                    "role": "assistant",
                    "model": "claude-opus-4-5",
                    "content": piece if isinstance(piece, list) else [text(piece)],
                    "stop_reason": None,
                    "usage": {"input_tokens": 1200, "output_tokens": 85},
                }
                entry["requestId"] = "req_" + _digest(msg_id)[:20]
            else:
                entry["message"] = {"role": "user", "content": piece}
            entries.append(entry)
            parent = uuid
    return entries


def write_transcript(
    path: str | Path,
    turns: Iterable[Turn],
    *,
    session_id: str = DEFAULT_SESSION,
    cwd: str = DEFAULT_CWD,
    append: bool = False,
) -> Path:
    """Write ``turns`` as a Claude Code transcript JSONL at ``path`` and return the path."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(e, ensure_ascii=False) for e in transcript_lines(
        turns, session_id=session_id, cwd=cwd)]
    with out.open("a" if append else "w", encoding="utf-8") as handle:
        handle.write("".join(line + "\n" for line in lines))
    return out


def stop_payload(
    transcript_path: str | Path,
    *,
    session_id: str = DEFAULT_SESSION,
    cwd: str = DEFAULT_CWD,
    event: str = "Stop",
    last_assistant_message: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """A Claude Code hook payload for a capture event (Stop by default)."""
    payload: dict[str, Any] = {
        "session_id": session_id,
        "transcript_path": str(transcript_path),
        "cwd": cwd,
        "permission_mode": "default",
        "hook_event_name": event,
    }
    if event in ("Stop", "SubagentStop"):
        payload["stop_hook_active"] = False
    if last_assistant_message is not None:
        payload["last_assistant_message"] = last_assistant_message
    payload.update(extra)
    return payload


# --- a realistic multi-turn session -----------------------------------------------------------

FINAL_REQUEST = "Make the gateway retry policy configurable and add tests for the backoff."
FINAL_RESULT_LINES = [
    "Done. Summary of the change:",
    "",
    "- `gateway/retry.py`: `RetryPolicy` now reads `max_retries` and `backoff_ms` from config.",
    "- `tests/test_retry.py`: three new tests cover the exponential backoff.",
    "",
    "All 42 tests pass.",
]
FINAL_RESULT = "\n".join(FINAL_RESULT_LINES)


def realistic_turns(cwd: str = DEFAULT_CWD) -> list[Turn]:
    """A session with noise entries, a slash command, tool calls, thinking and a final reply."""
    return [
        {"type": "file-history-snapshot", "messageId": "snap-1", "snapshot": {"files": {}}},
        ("meta", "<local-command-caveat>Caveat: messages below were generated locally."
                 "</local-command-caveat>"),
        ("user", "<command-name>/clear</command-name>\n<command-message>clear</command-message>"),
        ("user", "<local-command-stdout></local-command-stdout>"),
        ("user", "What does the gateway do when the upstream times out?"),
        ("assistant", [
            thinking("The user asks about timeouts; read gateway/retry.py."),
            text("Let me look at the retry code."),
            tool_use("Read", {"file_path": f"{cwd}/gateway/retry.py"}),
        ]),
        ("user", [tool_result("class RetryPolicy:\n    max_retries = 3\n")]),
        ("assistant", "It retries three times with a fixed 200 ms delay."),
        {"type": "system", "subtype": "turn_duration", "durationMs": 5123},
        ("user", FINAL_REQUEST),
        ("assistant", [
            thinking("Plan: edit retry.py, then add tests, then run pytest."),
            text("I'll make the policy configurable."),
            tool_use("Edit", {"file_path": f"{cwd}/gateway/retry.py", "old_string": "a",
                              "new_string": "b"}),
        ]),
        ("user", [tool_result("The file has been updated.")]),
        ("assistant", [tool_use("Write", {"file_path": f"{cwd}/tests/test_retry.py",
                                          "content": "def test_backoff(): ..."})]),
        ("user", [tool_result("File created successfully.")]),
        {"type": "progress", "data": {"type": "bash_progress", "output": "running"}},
        ("assistant", [tool_use("Bash", {"command": "pytest -q", "description": "run tests"})]),
        ("user", [tool_result("42 passed in 1.2s")]),
        ("assistant", [tool_use("Edit", {"file_path": f"{cwd}/gateway/retry.py",
                                         "old_string": "c", "new_string": "d"})]),
        ("user", [tool_result("The file has been updated.")]),
        ("user", "<task-notification>Background task finished</task-notification>"),
        ("assistant", [thinking("All good, summarise."), text(FINAL_RESULT)]),
        {"type": "system", "subtype": "stop_hook_summary", "hookCount": 1},
    ]


# --- secrets ----------------------------------------------------------------------------------

_PRIVATE_KEY_LINES = [
    "MIIEpAIBAAKCAQEAz3fAkEkEyBoDyLiNe0nE0123456789abcdefghijklmnopqrstu",
    "vWxYz0123456789FAKEfakeFAKEfakeSeCoNdLiNeOfThEkEy9876543210zyxwvut",
]
PRIVATE_KEY_BLOCK = "\n".join(
    ["-----BEGIN RSA PRIVATE KEY-----", *_PRIVATE_KEY_LINES, "-----END RSA PRIVATE KEY-----"]
)

FAKE_SECRETS: list[str] = [
    "AKIAIOSFODNN7EXAMPLE",
    "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "glpat-" + "xK9fAkE2tOkEnAbCdEfGh",
    "xoxb-" + "123456789012-1234567890123-fAkEsLaCkToKeNvAlUe00",
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwi"
    "aWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    "fAkEbEaReRtOkEn0123456789abcdef",  # sent as "Authorization: Bearer <this>"
    "hunter2",  # password = "hunter2"
    *_PRIVATE_KEY_LINES,
    "sk-proj-" + "FAKEfakeFAKEfake0123456789abcd",
    "AIza" + "SyFAKEfakeFAKEfake0123456789abcdefg",
    "s3cr3tPa55w0rd",  # in a URL: https://deploy:<this>@git.example.com
    "hf_" + "FAKEfakeFAKEfakeFAKEfake012345",
    "npm_" + "FAKEfakeFAKEfakeFAKEfake0123456789",
    "k3y-vAlUe-zzz-0099",  # api_key = '<this>'
]

SECRET_LAST_MESSAGE = (
    f"Rotated the keys. The old AWS id {FAKE_SECRETS[0]} and GitHub token {FAKE_SECRETS[1]}\n"
    f"are revoked; the service JWT {FAKE_SECRETS[4]} expires tonight.\n"
    f"The deploy URL is https://deploy:{FAKE_SECRETS[11]}@git.example.com/app.git"
)


def secret_turns(cwd: str = DEFAULT_CWD) -> list[Turn]:
    """A session in which every ``FAKE_SECRETS`` entry appears somewhere capture reads."""
    request = "\n".join([
        "Deploy is failing. Here is my .env and the curl I ran:",
        f"AWS_ACCESS_KEY_ID={FAKE_SECRETS[0]}",
        f"GITLAB={FAKE_SECRETS[2]} SLACK={FAKE_SECRETS[3]}",
        f"curl -H 'Authorization: Bearer {FAKE_SECRETS[5]}' https://api.example.com",
        'In settings.py we have password = "hunter2" for the staging db.',
        PRIVATE_KEY_BLOCK,
        f"OPENAI={FAKE_SECRETS[9]} GOOGLE={FAKE_SECRETS[10]}",
        f"HF {FAKE_SECRETS[12]} and NPM {FAKE_SECRETS[13]}",
        f"api_key = '{FAKE_SECRETS[14]}'",
        "Please fix the deploy script.",
    ])
    return [
        ("user", request),
        ("assistant", [
            thinking(f"The user pasted {FAKE_SECRETS[1]}; must not echo it."),
            text(f"Checking the token {FAKE_SECRETS[1]} scope first."),
            tool_use("Bash", {"command": f"curl -H 'Authorization: Bearer {FAKE_SECRETS[5]}'"}),
            tool_use("Read", {"file_path": f"/home/dev/.config/{FAKE_SECRETS[1]}/hosts.yml"}),
        ]),
        ("user", [tool_result(f"token={FAKE_SECRETS[1]}\n{PRIVATE_KEY_BLOCK}")]),
        ("assistant", [
            text(
                f"Found it: the script used {FAKE_SECRETS[0]} with a JWT {FAKE_SECRETS[4]}.\n"
                f'The db password = "hunter2" is also hard-coded.\n'
                f"Clone via https://deploy:{FAKE_SECRETS[11]}@git.example.com/app.git works."
            ),
            tool_use("Edit", {"file_path": f"{cwd}/deploy.sh", "old_string": "x",
                              "new_string": "y"}),
        ]),
    ]


def write_secret_transcript(
    path: str | Path, *, session_id: str = DEFAULT_SESSION, cwd: str = DEFAULT_CWD
) -> Path:
    """Write a transcript holding every entry of ``FAKE_SECRETS``."""
    return write_transcript(path, secret_turns(cwd), session_id=session_id, cwd=cwd)


# --- helpers ----------------------------------------------------------------------------------


def _digest(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


def _uuid(value: str) -> str:
    h = _digest(value)
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"
