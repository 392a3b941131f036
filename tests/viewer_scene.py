"""A small project's history for the viewer's tests, made the way it is made in use: a git work
tree, a running daemon watching it, agent turns captured by the real hook shim (Claude Code and
Codex), notes added with the CLI, and a file edited after the turn that named it.

What it holds: a note that the gateway uses requests, superseded by a captured turn that
switched it to httpx ("instead of"); a note naming two owners of one service (a conflict); a
retry setting; a Codex turn; a file the capture named, changed since.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.client_sessions import codex_payload, codex_rollout, write_jsonl
from tests.conftest import run_cli, run_hook, wait_for
from tests.test_e2e_spine import git_init
from tests.transcripts import stop_payload, text, tool_result, tool_use, write_transcript

OLD_CLIENT = "The gateway uses requests for HTTP calls."
SWITCH_REQUEST = "Switch the gateway's HTTP client to httpx; requests has no HTTP/2."
SWITCH_RESULT = ("Done. The gateway uses httpx instead of requests for HTTP calls.\n"
                 "gateway/client.py now builds one httpx.Client with HTTP/2 on, and the retry "
                 "tests pass.")
OWNER_NOTE = "Dan owns the payments service. Eve owns the payments service."
HEALTH_REQUEST = "Add a health check to the gateway."
HEALTH_RESULT = "Added GET /healthz to the gateway; it answers 200 once the pool is up."
RETRY_NOTE = "Gateway retry attempts: 3."
SESSION = "5d21c0de-9a7e-4b8e-9c61-2a7f4e8d1b30"


@dataclass
class Scene:
    root: Path
    env: dict[str, str]
    old_note: str = ""  # the note the capture superseded
    capture: str = ""  # the Claude Code turn that switched the client
    owner_note: str = ""
    retry_note: str = ""


def add(scene: Scene, content: str) -> str:
    """``lintaid add CONTENT --json``: the new record's id."""
    out = run_cli(scene.root, "add", content, "--json", env=scene.env).stdout
    data: dict[str, Any] = json.loads(out)
    return str(data["id"])


def git(root: Path, *args: str) -> None:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
           "PATH": "/usr/bin:/bin"}
    subprocess.run(["git", "-C", str(root), *args], check=True, env=env, capture_output=True)


def prepare_tree(root: Path) -> None:
    """The work tree before the daemon starts: one commit holding the gateway client."""
    git_init(root)
    (root / "gateway").mkdir()
    (root / "gateway" / "client.py").write_text("import requests\n\nSESSION = requests.Session()\n")
    git(root, "add", "gateway/client.py")
    git(root, "commit", "-q", "-m", "gateway client")


def build(scene: Scene) -> Scene:
    """The history, in order (the daemon runs and watches ``scene.root``)."""
    root, env = scene.root, scene.env
    scene.old_note = add(scene, OLD_CLIENT)
    scene.owner_note = add(scene, OWNER_NOTE)
    scene.retry_note = add(scene, RETRY_NOTE)
    # A Claude Code turn that edits gateway/client.py and switches the client.
    transcript = write_transcript(root.parent / "claude.jsonl", [
        ("user", SWITCH_REQUEST),
        ("assistant", [text("I'll switch the client."),
                       tool_use("Edit", {"file_path": f"{root}/gateway/client.py",
                                         "old_string": "requests", "new_string": "httpx"})]),
        ("user", [tool_result("The file has been updated.")]),
        ("assistant", SWITCH_RESULT),
    ], session_id=SESSION, cwd=str(root))
    (root / "gateway" / "client.py").write_text(
        "import httpx\n\nCLIENT = httpx.Client(http2=True)\n")
    run_hook(root, "Stop", stop_payload(transcript, session_id=SESSION, cwd=str(root)), env=env)
    # A Codex turn in another session.
    rollout = write_jsonl(root.parent / "rollout.jsonl",
                          codex_rollout(str(root), request=HEALTH_REQUEST,
                                        result=HEALTH_RESULT))
    run_hook(root, "Stop", codex_payload("Stop", str(root), rollout,
                                         last_assistant_message=HEALTH_RESULT),
             env=env, provider="codex")
    return scene


def edit_after_capture(scene: Scene) -> None:
    """The file the capture named changes again: the record page says so."""
    (scene.root / "gateway" / "client.py").write_text(
        "import httpx\n\nCLIENT = httpx.Client(http2=True, timeout=5.0)\n")


def capture_id(scene: Scene) -> str:
    """The id of the Claude Code turn (from ``lintaid list``)."""
    def listed() -> list[dict[str, Any]]:
        out = run_cli(scene.root, "list", "--client", "claude-code", "--json",
                      env=scene.env).stdout
        found: list[dict[str, Any]] = json.loads(out)["results"]
        return found

    # On a loaded machine the hook may have run out of its budget and spooled the turn: it
    # is stored once the daemon drains the spool.
    try:
        results = wait_for(listed, timeout=60, interval=0.5)
    except AssertionError:
        raise AssertionError("the Claude Code turn was not captured") from None
    return str(results[0]["id"])
