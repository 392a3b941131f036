"""The daemon spine: hooks, CLI and raw sockets against a real daemon over its real socket.

Most tests run the daemon in this process (``served``). The rest start processes because what
they check only a process shows: the hook shim as the agent runs it (stdin, stdout, exit code,
its budget against a daemon that does not answer), the spool while no daemon runs, a daemon
killed under load, a second daemon process refused by the lock.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
from pathlib import Path
from typing import Any

import msgpack
import pytest
import tantivy
import zmq

from lintaid.store.index import MAX_QUERY_TERMS, TantivyIndex
from lintaid_client import connection, paths, protocol, spool
from tests.conftest import (
    Served,
    daemon_process,
    hook_command,
    invoke,
    lintaid_env,
    run_cli,
    run_hook,
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


def unique_session(root: Path, n: int, word: str) -> dict[str, Any]:
    """A Stop payload whose transcript holds a word found in no other session."""
    transcript = write_transcript(root.parent / f"t{n}.jsonl", [
        ("user", f"Please document the {word} module and its retry behaviour."),
        ("assistant", f"Documented the {word} module: it retries twice, then gives up."),
    ], session_id=f"session-{n}", cwd=str(root))
    return stop_payload(transcript, session_id=f"session-{n}", cwd=str(root))


def call(root: Path, op: str, args: dict[str, Any] | None = None) -> Any:
    """One request to whatever daemon serves ``root`` (a process or this one)."""
    with connection.Connection(root) as conn:
        return conn.call(op, args, timeout=30)


def record_count(root: Path) -> int:
    count: int = call(root, "status")["memory"]["records"]
    return count


def landed(root: Path) -> bool:
    """True once the daemon at ``root`` holds a record (False while it is too busy to say)."""
    try:
        return record_count(root) > 0
    except protocol.LintaidError:
        return False


def searchable(root: Path, words: list[str]) -> set[str]:
    """The words whose capture the daemon at ``root`` finds."""
    found = set()
    for word in words:
        hits = call(root, "search", {"query": word, "top_k": 3})["results"]
        if any(word in h["content"] for h in hits):
            found.add(word)
    return found


def spawn_hooks(root: Path, words: list[str], env: dict[str, str]) -> list[subprocess.Popen[str]]:
    """One ``lintaid-hook claude-code Stop`` process per word, all in flight at once."""
    procs = []
    for n, word in enumerate(words):
        payload = {"cwd": str(root), **unique_session(root, n, word)}
        proc = subprocess.Popen(hook_command("claude-code", "Stop"), stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                env=env, cwd=str(root))
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(payload))
        proc.stdin.close()
        procs.append(proc)
    return procs


# -- in this process ---------------------------------------------------------------------------
def test_stop_capture_is_injected_on_the_next_prompt(served: Served) -> None:
    root = served.root
    revision = git_init(root)
    transcript = write_transcript(root.parent / "session.jsonl", realistic_turns(str(root)),
                                  cwd=str(root))
    assert served.hook("Stop", stop_payload(transcript, cwd=str(root))) == {}
    out = served.hook("UserPromptSubmit", {
        "session_id": "next-session", "prompt": "How is the gateway retry policy configured?"})
    context = out["hookSpecificOutput"]["additionalContext"]
    assert out["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    # The captured turn's result answers; its request ("make the retry policy
    # configurable") is context the result carries out, so it is not shown beside it.
    assert "backoff" in context and "from config" in context
    assert "Request:" not in context
    entry = [line for line in context.splitlines() if line.startswith("- ")]
    # One provenance line: id, day, client, and "current" (the policy judged what it shows).
    assert len(entry) == 1 and entry[0].split(" · ")[2:] == ["claude-code", "current"]
    # Captured on the branch and revision the agent is on: neither is repeated.
    assert revision[:10] not in context and "branch" not in entry[0]
    # The prompt itself was recorded, apart from the records; a replay of the Stop event
    # added nothing.
    before = served.record_count()
    served.hook("Stop", stop_payload(transcript, cwd=str(root)))
    assert served.record_count() == before == 1
    assert served.call("status")["memory"]["prompts"] == 1
    assert not spool.pending(root)  # every answer came from the daemon, none from the spool


def test_session_start_injects_and_empty_store_injects_nothing(served: Served) -> None:
    assert served.hook("SessionStart", {"session_id": "s", "source": "startup"}) == {}
    served.json("add", "We decided to keep unresolved work in TODO.md; the failures are in CI.")
    out = served.hook("SessionStart", {"session_id": "s", "source": "startup"})
    assert "TODO.md" in out["hookSpecificOutput"]["additionalContext"]


def test_fifty_concurrent_hooks_lose_nothing(served: Served) -> None:
    words = [f"quuxword{n}" for n in range(50)]
    payloads = [unique_session(served.root, n, word) for n, word in enumerate(words)]
    outputs: list[Any] = []
    start = threading.Barrier(len(payloads))

    def one(payload: dict[str, Any]) -> None:
        start.wait()
        try:
            outputs.append(served.hook("Stop", payload))
        except BaseException as err:  # noqa: BLE001 - reported below
            outputs.append(err)

    threads = [threading.Thread(target=one, args=(p,)) for p in payloads]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert outputs == [{}] * 50
    assert not spool.pending(served.root)  # each was acknowledged, none spooled
    assert served.record_count() == 50
    assert searchable(served.root, words) == set(words)


def test_hostile_messages_get_errors_and_the_daemon_keeps_serving(served: Served) -> None:
    ctx = zmq.Context()
    sock = ctx.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.connect(paths.endpoint(served.root))

    def ask(raw: bytes, timeout_ms: int = 10_000) -> Any:
        sock.send(raw)
        if sock.poll(timeout_ms, zmq.POLLIN):
            return msgpack.unpackb(sock.recv(), raw=False)
        return None

    try:
        sock.send(os.urandom(4096))  # unparseable: dropped
        sock.send(b"\xc1\xc1\xc1")
        # Requests are answered in order on one socket: the next reply is for this ping, so
        # neither garbage message was answered.
        reply = ask(protocol.pack({"v": 1, "id": "p", "op": "ping", "args": {}}))
        assert reply["id"] == "p" and reply["ok"] is True
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
        reply = ask(b"\x00" * (9 * 1024 * 1024))  # over the 8 MiB cap
        assert reply["ok"] is False and reply["error"]["code"] == protocol.TOO_LARGE
    finally:
        sock.close(0)
        ctx.term()
    assert connection.ping(served.root, timeout=10)["pong"] is True
    assert served.json("status")["pid"] == os.getpid()
    assert served.record_count() == 0


def test_secrets_never_reach_disk(served: Served) -> None:
    root = served.root
    transcript = write_secret_transcript(root.parent / "secret.jsonl", cwd=str(root))
    served.hook("Stop", stop_payload(transcript, cwd=str(root)))
    prompt = f"Use token ghp_{'Z' * 36} and AWS AKIAZZZZZZZZZZZZZZZZ to deploy"
    served.hook("UserPromptSubmit", {"session_id": "s2", "prompt": prompt})
    served.json("add", f"the staging password = hunter2 and key {FAKE_SECRETS[0]}")
    memory = served.call("status")["memory"]
    assert (memory["records"], memory["prompts"]) == (2, 1)
    served.stop()  # flush everything to disk, including logs
    secrets = [*FAKE_SECRETS, "ghp_" + "Z" * 36, "AKIAZZZZZZZZZZZZZZZZ"]
    state = paths.state_dir(root)
    files = [p for p in state.rglob("*") if p.is_file()]
    assert any(p.name == "memory.db" for p in files)
    assert any(p.name == "lintaid.log" for p in files)
    for path in files:
        data = path.read_bytes()
        for secret in secrets:
            assert secret.encode() not in data, f"{secret!r} found in {path}"


def test_status_reports_and_stop_is_clean(served: Served) -> None:
    text = served.cli("status").stdout
    assert text.startswith("lintaid daemon: running, pid ")
    data = served.json("status")
    for key in ("pid", "uptime_s", "rss_bytes", "memory", "spool_depth", "versions", "endpoint"):
        assert key in data
    assert data["running"] is True and data["endpoint"] == paths.endpoint(served.root)
    assert paths.status_path(served.root).exists()
    served.stop()
    assert not paths.status_path(served.root).exists()
    stopped = served.cli("status", "--json")
    assert stopped.exit_code == 3
    assert json.loads(stopped.stdout) == {"running": False, "root": str(served.root),
                                          "stale_status_file": False}


def test_stale_status_file_is_detected(project: Path) -> None:
    paths.status_path(project).write_text(json.dumps({"pid": 999999, "create_time": 1.0}))
    result = invoke(project, "status", "--json")
    assert result.exit_code == 3
    assert json.loads(result.stdout) == {"running": False, "root": str(project),
                                         "stale_status_file": True}


GARBAGE = ("", "not json", "[1, 2]", "{")


@pytest.mark.parametrize("event", ["Stop", "UserPromptSubmit", "SessionStart", "PreCompact"])
def test_garbage_stdin_is_answered_with_nothing_and_kept_nowhere(served: Served,
                                                                  event: str) -> None:
    for stdin in GARBAGE:
        assert served.hook(event, {}, raw=stdin.encode()) == {}
    assert served.record_count() == 0
    assert not spool.pending(served.root)


def test_cli_add_search_get_json_shapes(served: Served) -> None:
    added = served.json("add", "The billing service uses Postgres for invoices.")
    assert set(added) >= {"id"}
    result = served.json("search", "billing invoices postgres")
    assert result["hidden"] == 0
    hit = result["results"][0]
    for key in ("id", "content", "status", "source", "score", "created_at"):
        assert key in hit
    assert hit["id"] == added["id"] and hit["status"] == "current" and hit["source"] == "cli"
    got = served.json("get", added["id"])
    assert got["content"] == "The billing service uses Postgres for invoices."
    missing = served.cli("get", "nope")
    assert missing.exit_code == 1 and "not_found" in missing.stderr


def test_request_prompt_is_captured_from_the_transcript(served: Served) -> None:
    root = served.root
    transcript = write_transcript(root.parent / "t.jsonl", realistic_turns(str(root)),
                                  cwd=str(root))
    served.hook("Stop", stop_payload(transcript, cwd=str(root)))
    hits = served.json("search", "configurable backoff tests")["results"]
    capture = next(h for h in hits if h["kind"] == "capture")
    assert FINAL_REQUEST in capture["content"]
    assert capture["client"] == "claude-code" and capture["event"] == "Stop"
    assert "Edit" in capture["tools"]


def test_api_adds_carry_git_provenance(served: Served) -> None:
    revision = git_init(served.root)
    rid = served.json("add", "The release train leaves on Thursdays.")["id"]
    got = served.json("get", rid)
    assert (got["branch"], got["revision"]) == ("main", revision)


def test_a_huge_prompt_is_answered_and_the_daemon_keeps_serving(served: Served) -> None:
    """How long this takes is printed by ``benchmarks/hooks.py``; here: it is answered."""
    served.json("add", "The gateway retry policy uses exponential backoff.")
    words = " ".join("gateway retry policy" for _ in range(100_000))  # ~2 MB
    out = served.hook("UserPromptSubmit", {"session_id": "s", "prompt": words})
    assert "exponential backoff" in out["hookSpecificOutput"]["additionalContext"]
    assert not spool.pending(served.root)
    assert connection.ping(served.root, timeout=10)["pong"] is True


def test_a_huge_query_is_cut_to_its_first_distinct_terms(tmp_path: Path) -> None:
    def schema() -> tantivy.Schema:
        builder = tantivy.SchemaBuilder()
        builder.add_text_field("content", stored=True)
        return builder.build()

    index = TantivyIndex(tmp_path / "index", schema, 1)
    words = " ".join(f"w{i % 40_000} gateway retry" for i in range(120_000))
    query = index.text_query(words, ["content"])
    assert repr(query).count("TermQuery(") == MAX_QUERY_TERMS
    assert repr(index.text_query("retry retry gateway", ["content"])).count("TermQuery(") == 2


# -- processes ---------------------------------------------------------------------------------
@pytest.mark.slow
def test_the_shim_process_answers_garbage_with_empty_json_and_exit_zero(project: Path) -> None:
    env = lintaid_env(LINTAID_NO_AUTOSTART="1")
    for stdin in GARBAGE:
        proc = subprocess.run(hook_command("claude-code", "Stop"), input=stdin,
                              capture_output=True, text=True, env=env, cwd=str(project),
                              timeout=30)
        assert proc.returncode == 0
        assert json.loads(proc.stdout) == {}
    usage = subprocess.run(hook_command("claude-code", "Stop")[:-1], input="{}",
                           capture_output=True, text=True, env=env, timeout=30)
    assert usage.returncode == 0 and json.loads(usage.stdout) == {}
    assert "usage" in usage.stderr


@pytest.mark.slow
def test_hooks_spool_while_the_daemon_is_down_and_drain_after_start(project: Path) -> None:
    env = lintaid_env(LINTAID_NO_AUTOSTART="1")
    words = [f"zorblax{i}" for i in range(10)]
    for n, word in enumerate(words):
        assert run_hook(project, "Stop", unique_session(project, n, word), env=env) == {}
    wait_for(lambda: len(spool.pending(project)) == 10)  # written by the shims' children
    assert not paths.status_path(project).exists()  # nothing started a daemon
    proc = daemon_process(project)
    try:
        wait_for(lambda: not spool.pending(project), timeout=60)
        assert searchable(project, words) == set(words)
        assert record_count(project) == 10
        # Replaying every event changes nothing: ids derive from content and provenance.
        for n, word in enumerate(words):
            assert run_hook(project, "Stop", unique_session(project, n, word), env=env) == {}
        assert not spool.pending(project)
        assert record_count(project) == 10
    finally:
        proc.stop()


@pytest.mark.slow
def test_a_hook_facing_a_daemon_that_does_not_answer_spools_and_answers_itself(
        project: Path) -> None:
    """The budget: SIGSTOP the daemon; the shim still prints ``{}``, exits 0 and leaves the
    event in the spool, which the daemon drains once it runs again."""
    proc = daemon_process(project)
    os.kill(proc.pid, signal.SIGSTOP)
    try:
        out = run_hook(project, "UserPromptSubmit",
                       {"session_id": "s", "prompt": "where does the frobnicator live?"},
                       env=lintaid_env(LINTAID_NO_AUTOSTART="1"))  # the default budget
        assert out == {}
        [spooled] = wait_for(lambda: spool.pending(project))  # written by the shim's child
        assert spool.read(spooled)["args"]["event"] == "UserPromptSubmit"
    finally:
        os.kill(proc.pid, signal.SIGCONT)
    wait_for(lambda: not spool.pending(project), timeout=60)
    # Prompts are kept apart: searchable when asked for, never among the beliefs.
    assert call(project, "search", {"query": "frobnicator"})["results"] == []
    hits = call(project, "search", {"query": "frobnicator", "kind": "prompt"})["results"]
    assert [h["kind"] for h in hits] == ["prompt"]
    assert proc.stop() == 0


@pytest.mark.slow
def test_sigkill_under_load_keeps_every_acknowledged_or_spooled_capture(project: Path) -> None:
    env = lintaid_env(LINTAID_NO_AUTOSTART="1", LINTAID_HOOK_TIMEOUT_MS="2000")
    words = [f"quuxword{n}" for n in range(24)]
    first = daemon_process(project)
    hooks = spawn_hooks(project, words, env)
    # Kill it once captures are landing, while most shims are still starting or waiting.
    wait_for(lambda: landed(project), timeout=60, interval=0.01)
    os.kill(first.pid, signal.SIGKILL)
    assert first.stop() == -signal.SIGKILL
    for proc in hooks:
        assert proc.stdout is not None
        with proc.stdout:
            out = proc.stdout.read()
        assert proc.wait(60) == 0 and json.loads(out) == {}
    second = daemon_process(project)
    try:
        # The shims' children may still be spooling: wait for every capture, then the spool.
        wait_for(lambda: record_count(project) == len(words), timeout=60)
        wait_for(lambda: not spool.pending(project), timeout=60)
        assert record_count(project) == len(words)
        assert searchable(project, words) == set(words)
    finally:
        second.stop()


@pytest.mark.slow
def test_second_daemon_for_the_same_project_refuses(served: Served) -> None:
    proc = run_cli(served.root, "start", "--foreground", check=False, timeout=60)
    assert proc.returncode != 0
    assert "another lintaid daemon" in proc.stderr
    assert served.json("status")["pid"] == os.getpid()  # the first one still serves
