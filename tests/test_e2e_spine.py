"""The daemon spine end to end: real daemon subprocess, real hook processes, real sockets."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import msgpack
import pytest
import zmq

from lintaid_client import connection, paths, protocol, spool
from tests.conftest import (
    lintaid_env,
    run_cli,
    run_hook,
    run_json,
    start_daemon,
    stop_daemon,
    wait_for,
)
from tests.transcripts import (
    FAKE_SECRETS,
    FINAL_REQUEST,
    realistic_turns,
    stop_payload,
    write_secret_transcript,
    write_transcript,
)


def git_init(root: Path) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True, env=env)
    (root / "README.md").write_text("demo\n")
    subprocess.run(["git", "-C", str(root), "add", "README.md"], check=True, env=env)
    subprocess.run(["git", "-C", str(root), "commit", "-q", "-m", "init"], check=True, env=env)
    out = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], check=True, env=env,
                         capture_output=True, text=True)
    return out.stdout.strip()


def unique_session(root: Path, n: int, word: str) -> dict:
    """A Stop payload whose transcript holds a word found in no other session."""
    transcript = write_transcript(root.parent / f"t{n}.jsonl", [
        ("user", f"Please document the {word} module and its retry behaviour."),
        ("assistant", f"Documented the {word} module: it retries twice, then gives up."),
    ], session_id=f"session-{n}", cwd=str(root))
    return stop_payload(transcript, session_id=f"session-{n}", cwd=str(root))


def record_count(root: Path) -> int:
    return run_json(root, "status")["memory"]["records"]


def test_stop_capture_is_injected_on_the_next_prompt(daemon: Path) -> None:
    revision = git_init(daemon)
    transcript = write_transcript(daemon.parent / "session.jsonl", realistic_turns(str(daemon)),
                                  cwd=str(daemon))
    out, _ = run_hook(daemon, "Stop", stop_payload(transcript, cwd=str(daemon)))
    assert out == {}
    out, _ = run_hook(daemon, "UserPromptSubmit", {
        "session_id": "next-session", "prompt": "How is the gateway retry policy configured?"})
    context = out["hookSpecificOutput"]["additionalContext"]
    assert out["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    assert "configurable" in context  # the captured request
    assert "backoff" in context
    assert "claude-code://" in context  # source
    assert "main" in context and revision[:12] in context  # captured and current branch/rev
    assert "exact-match" in context
    # The prompt itself was recorded, apart from the records; a replay of the Stop event
    # added nothing.
    before = record_count(daemon)
    run_hook(daemon, "Stop", stop_payload(transcript, cwd=str(daemon)))
    assert record_count(daemon) == before == 1
    assert run_json(daemon, "status")["memory"]["prompts"] == 1


def test_session_start_injects_and_empty_store_injects_nothing(daemon: Path) -> None:
    out, _ = run_hook(daemon, "SessionStart", {"session_id": "s", "source": "startup"})
    assert out == {}
    run_cli(daemon, "add", "We decided to keep unresolved work in TODO.md; the failures are in CI.")
    out, _ = run_hook(daemon, "SessionStart", {"session_id": "s", "source": "startup"})
    assert "TODO.md" in out["hookSpecificOutput"]["additionalContext"]


def test_hooks_spool_while_the_daemon_is_down_and_drain_after_start(project: Path) -> None:
    env = lintaid_env(LINTAID_NO_AUTOSTART="1")
    words = [f"zorblax{i}" for i in range(20)]
    for n, word in enumerate(words):
        out, elapsed = run_hook(project, "Stop", unique_session(project, n, word), env=env)
        assert out == {}
        assert elapsed < 1.0, f"hook took {elapsed:.3f}s with the daemon down"
    wait_for(lambda: len(spool.pending(project)) == 20)  # spooled by detached children
    start_daemon(project)
    try:
        wait_for(lambda: not spool.pending(project), timeout=20)
        for word in words:
            hits = run_json(project, "search", word)["results"]
            assert any(word in h["content"] for h in hits), word
        assert record_count(project) == 20
        # Replaying every event changes nothing: ids derive from content and provenance.
        for n, word in enumerate(words):
            run_hook(project, "Stop", unique_session(project, n, word), env=env)
        assert record_count(project) == 20
    finally:
        stop_daemon(project)


def _spawn_hooks(root: Path, count: int, env: dict[str, str]) -> list[subprocess.Popen[str]]:
    procs = []
    for n in range(count):
        payload = {"cwd": str(root), **unique_session(root, n, f"quuxword{n}")}
        proc = subprocess.Popen(
            [sys.executable, "-m", "lintaid_client.hook", "claude-code", "Stop"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env=env, cwd=str(root),
        )
        proc.stdin.write(json.dumps(payload))
        proc.stdin.close()
        procs.append(proc)
    return procs


def _searchable_words(root: Path, count: int) -> set[int]:
    found = set()
    for n in range(count):
        hits = run_json(root, "search", f"quuxword{n}", "--top-k", "3")["results"]
        if any(f"quuxword{n}" in h["content"] for h in hits):
            found.add(n)
    return found


def test_fifty_concurrent_hooks_lose_nothing(daemon: Path) -> None:
    env = lintaid_env(LINTAID_HOOK_TIMEOUT_MS="10000")
    procs = _spawn_hooks(daemon, 50, env)
    for proc in procs:
        assert proc.wait(30) == 0
        assert json.loads(proc.stdout.read()) == {}
    wait_for(lambda: not spool.pending(daemon), timeout=20)
    assert record_count(daemon) == 50
    assert _searchable_words(daemon, 50) == set(range(50))


def test_sigkill_under_load_keeps_every_acknowledged_or_spooled_capture(project: Path) -> None:
    env = lintaid_env(LINTAID_NO_AUTOSTART="1", LINTAID_HOOK_TIMEOUT_MS="2000")
    start_daemon(project)
    try:
        pid = connection.read_status(project)["pid"]
        procs = _spawn_hooks(project, 50, env)
        time.sleep(0.3)
        os.kill(pid, signal.SIGKILL)
        for proc in procs:
            assert proc.wait(30) == 0
        start_daemon(project)
        wait_for(lambda: not spool.pending(project), timeout=30)
        assert record_count(project) == 50
        assert _searchable_words(project, 50) == set(range(50))
    finally:
        stop_daemon(project)


def test_hostile_messages_get_errors_and_the_daemon_keeps_serving(daemon: Path) -> None:
    ctx = zmq.Context()
    sock = ctx.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.connect(paths.endpoint(daemon))

    def ask(raw: bytes, timeout_ms: int = 2000) -> dict | None:
        sock.send(raw)
        if sock.poll(timeout_ms, zmq.POLLIN):
            return msgpack.unpackb(sock.recv(), raw=False)
        return None

    try:
        assert ask(os.urandom(4096), 500) is None  # unparseable: dropped
        assert ask(b"\xc1\xc1\xc1", 500) is None
        reply = ask(msgpack.packb(["not", "a", "map"]))
        assert reply["error"]["code"] == protocol.BAD_REQUEST
        reply = ask(protocol.pack({"v": 99, "id": "a", "op": "ping", "args": {}}))
        assert reply["error"]["code"] == protocol.UNSUPPORTED_VERSION and reply["id"] == "a"
        reply = ask(protocol.pack({"v": 1, "id": "b", "op": "explode", "args": {}}))
        assert reply["error"]["code"] == protocol.UNKNOWN_OP
        reply = ask(protocol.pack({"v": 1, "id": "c", "op": "search", "args": {"query": 5}}))
        assert reply["error"]["code"] == protocol.BAD_REQUEST
        reply = ask(protocol.pack({"v": 1, "id": "d", "op": "hook",
                                   "args": {"provider": "claude-code", "event": "Stop",
                                            "payload": {"transcript_path": "/nonexistent"}}}))
        assert reply["ok"] is True  # a capture with nothing to read captures nothing
        sock.send(b"\x00" * (9 * 1024 * 1024))  # over the 8 MiB cap: dropped
        time.sleep(0.2)
    finally:
        sock.close(0)
        ctx.term()
    assert connection.ping(daemon, timeout=2.0)["pong"] is True
    assert run_json(daemon, "status")["pid"] > 0


def test_secrets_never_reach_disk(daemon: Path) -> None:
    transcript = write_secret_transcript(daemon.parent / "secret.jsonl", cwd=str(daemon))
    out, _ = run_hook(daemon, "Stop", stop_payload(transcript, cwd=str(daemon)))
    prompt = f"Use token ghp_{'Z' * 36} and AWS AKIAZZZZZZZZZZZZZZZZ to deploy"
    run_hook(daemon, "UserPromptSubmit", {"session_id": "s2", "prompt": prompt})
    run_cli(daemon, "add", f"the staging password = hunter2 and key {FAKE_SECRETS[0]}")
    memory = run_json(daemon, "status")["memory"]
    assert (memory["records"], memory["prompts"]) == (2, 1)
    stop_daemon(daemon)  # flush everything to disk, including logs
    secrets = [*FAKE_SECRETS, "ghp_" + "Z" * 36, "AKIAZZZZZZZZZZZZZZZZ"]
    state = paths.state_dir(daemon)
    files = [p for p in state.rglob("*") if p.is_file()]
    assert any(p.name == "memory.db" for p in files)
    for path in files:
        data = path.read_bytes()
        for secret in secrets:
            assert secret.encode() not in data, f"{secret!r} found in {path}"


def test_status_reports_and_stop_is_clean(daemon: Path) -> None:
    text = run_cli(daemon, "status").stdout
    assert "running" in text and str(os.getpid()) not in text.split("pid")[0]
    data = run_json(daemon, "status")
    for key in ("pid", "uptime_s", "rss_bytes", "memory", "spool_depth", "versions", "endpoint"):
        assert key in data
    assert paths.status_path(daemon).exists()
    stop_daemon(daemon)
    assert not paths.status_path(daemon).exists()
    assert run_cli(daemon, "status", check=False).returncode == 3


def test_second_daemon_for_the_same_project_refuses(daemon: Path) -> None:
    proc = run_cli(daemon, "start", "--foreground", check=False, timeout=30)
    assert proc.returncode != 0
    assert "another lintaid daemon" in proc.stderr


def test_stale_status_file_is_detected(project: Path) -> None:
    paths.status_path(project).write_text(json.dumps({"pid": 999999, "create_time": 1.0}))
    result = json.loads(run_cli(project, "status", "--json", check=False).stdout)
    assert result == {"running": False, "root": str(project), "stale_status_file": True}


@pytest.mark.parametrize("event", ["Stop", "UserPromptSubmit", "SessionStart", "PreCompact"])
def test_hook_with_garbage_stdin_exits_zero_with_empty_json(project: Path, event: str) -> None:
    for stdin in ("", "not json", "[1, 2]", "{"):
        proc = subprocess.run([sys.executable, "-m", "lintaid_client.hook", "claude-code", event],
                              input=stdin, capture_output=True, text=True, env=lintaid_env(
                                  LINTAID_NO_AUTOSTART="1"), cwd=str(project), timeout=10)
        assert proc.returncode == 0
        assert json.loads(proc.stdout) == {}


def test_cli_add_search_get_json_shapes(daemon: Path) -> None:
    added = run_json(daemon, "add", "The billing service uses Postgres for invoices.")
    assert set(added) >= {"id"}
    result = run_json(daemon, "search", "billing invoices postgres")
    assert result["hidden"] == 0
    hit = result["results"][0]
    for key in ("id", "content", "status", "source", "score", "created_at"):
        assert key in hit
    assert hit["id"] == added["id"] and hit["status"] == "current" and hit["source"] == "cli"
    got = run_json(daemon, "get", added["id"])
    assert got["content"] == "The billing service uses Postgres for invoices."
    missing = run_cli(daemon, "get", "nope", check=False)
    assert missing.returncode == 1 and "not_found" in missing.stderr


def test_request_prompt_is_captured_from_the_transcript(daemon: Path) -> None:
    transcript = write_transcript(daemon.parent / "t.jsonl", realistic_turns(str(daemon)),
                                  cwd=str(daemon))
    run_hook(daemon, "Stop", stop_payload(transcript, cwd=str(daemon)))
    hits = run_json(daemon, "search", "configurable backoff tests")["results"]
    capture = next(h for h in hits if h["kind"] == "capture")
    assert FINAL_REQUEST in capture["content"]
    assert capture["client"] == "claude-code" and capture["event"] == "Stop"
    assert "Edit" in capture["tools"]


def test_api_adds_carry_git_provenance(daemon: Path) -> None:
    revision = git_init(daemon)
    rid = run_json(daemon, "add", "The release train leaves on Thursdays.")["id"]
    got = run_json(daemon, "get", rid)
    assert (got["branch"], got["revision"]) == ("main", revision)


def test_a_huge_prompt_neither_blocks_the_hook_nor_stalls_the_daemon(daemon: Path) -> None:
    run_cli(daemon, "add", "The gateway retry policy uses exponential backoff.")
    words = " ".join(f"w{i % 40_000} gateway retry" for i in range(120_000))  # ~2 MB
    out, elapsed = run_hook(daemon, "UserPromptSubmit", {"session_id": "s", "prompt": words})
    assert elapsed < 1.0
    assert "exponential backoff" in out["hookSpecificOutput"]["additionalContext"]
    started = time.monotonic()
    assert connection.ping(daemon, timeout=2.0)["pong"] is True
    assert time.monotonic() - started < 0.5
