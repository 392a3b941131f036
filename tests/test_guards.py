"""Guards issue 11 asked for that were built before their tests: private files whatever the
umask, spooling on a retryable error, a drainer that retries what may pass and rejects only
what cannot, times checked at the boundary, a client that notices a dead daemon, sockets
removed on a clean stop."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import zmq

from lintaid.spool_drain import MAX_ATTEMPTS, SpoolDrainer
from lintaid_client import Memory, connection, paths, protocol, spool
from tests.conftest import (
    lintaid_env,
    run_cli,
    run_hook,
    run_json,
    start_daemon,
    stop_daemon,
    wait_for,
)
from tests.transcripts import stop_payload, write_transcript


# -- private by construction ------------------------------------------------------------------
def test_every_file_under_lint_ai_is_private_whatever_the_umask(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    env = lintaid_env()
    loose = ["sh", "-c", 'umask 022; exec "$@"', "sh", sys.executable, "-m", "lintaid"]

    def cli(*args: str) -> None:
        subprocess.run([*loose, *args, "--project", str(root)], env=env, check=True,
                       capture_output=True, timeout=60)

    cli("add", "The auk gateway keeps 7 days of logs.")  # starts the daemon, umask 022
    run_hook(root, "UserPromptSubmit", {"session_id": "s", "prompt": "auk gateway logs?"})
    cli("backup")
    endpoint = paths.endpoint(root).removeprefix("ipc://")
    assert stat.S_IMODE(os.stat(endpoint).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(os.path.dirname(endpoint)).st_mode) == 0o700
    cli("stop")
    down = {**env, "LINTAID_NO_AUTOSTART": "1"}
    run_hook(root, "UserPromptSubmit", {"session_id": "d", "prompt": "spooled"}, env=down)
    wait_for(lambda: spool.pending(root), timeout=30)
    loose_modes = []
    for path in [paths.state_dir(root), *paths.state_dir(root).rglob("*")]:
        mode = stat.S_IMODE(path.stat().st_mode)
        if mode != (0o700 if path.is_dir() else 0o600):
            loose_modes.append(f"{path.relative_to(root)} {oct(mode)}")
    assert loose_modes == []


# -- the hook spools what a retry may save -------------------------------------------------------
@pytest.fixture
def stand_in(project: Path) -> Iterator[list[dict]]:
    """A ROUTER at the project's endpoint that answers every request with the error the test
    puts first in the list (the daemon's refusals, without staging a full disk)."""
    errors: list[dict] = []
    ctx = zmq.Context()
    sock = ctx.socket(zmq.ROUTER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.bind(paths.endpoint(project))
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            if not sock.poll(50):
                continue
            identity, content_type, body = sock.recv_multipart()
            request = json.loads(body)
            code = errors[0]["code"]
            reply = protocol.error_reply(request["id"], code, "refused by the stand-in")
            sock.send_multipart([identity, content_type, protocol.dump_json(reply)])

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield errors
    finally:
        stop.set()
        thread.join(5)
        sock.close(0)
        ctx.term()


def test_the_hook_spools_an_event_on_a_retryable_error_only(project: Path,
                                                            stand_in: list[dict]) -> None:
    env = lintaid_env(LINTAID_NO_AUTOSTART="1")
    transcript = write_transcript(project.parent / "t.jsonl", [
        ("user", "Tidy the razorbill module."), ("assistant", "Tidied it.")], cwd=str(project))
    stand_in.append({"code": protocol.BAD_REQUEST})
    out = run_hook(project, "Stop", stop_payload(transcript, cwd=str(project)), env=env)
    assert out == {} and spool.pending(project) == []  # a refusal a retry cannot change
    stand_in[0] = {"code": protocol.UNAVAILABLE}  # the disk is full, the daemon stopping
    out = run_hook(project, "Stop", stop_payload(transcript, cwd=str(project)), env=env)
    assert out == {}
    files = wait_for(lambda: spool.pending(project), timeout=30)
    assert [spool.read(f)["args"]["event"] for f in files] == ["Stop"]


# -- the drainer: back off on what may pass, reject only what cannot ----------------------------
def test_the_drainer_retries_transient_failures_and_rejects_permanent_ones(
        project: Path) -> None:
    from concurrent.futures import Future

    outcome: list[BaseException] = [protocol.Unavailable("database or disk is full")]

    def handle(provider: str, event: str, payload: dict, *, inject: bool,
               at: float | None = None) -> Future:
        future: Future = Future()
        future.set_exception(outcome[0])
        return future

    event = spool.write(project, "hook", {"provider": "claude-code", "event": "Stop",
                                          "payload": {"session_id": "s"}})
    noise = paths.spool_dir(project) / "00000000000000000000-1-deadbeef.json"
    noise.write_text("not an event")
    drainer = SpoolDrainer(project, handle)
    assert drainer.drain_once() == 0
    assert event.exists() and drainer.backoff >= 1.0  # kept, retried later
    rejected = paths.spool_dir(project) / "rejected"
    assert (rejected / noise.name).exists() and not noise.exists()  # ahead of it, never
    assert json.loads((rejected / (noise.name + ".reason")).read_text())["reason"].startswith(
        "bad_request: not a spooled event")  # holding it back
    first = drainer.backoff
    drainer.drain_once()
    assert event.exists() and drainer.backoff == min(30.0, first * 2)
    outcome[0] = protocol.BadRequest("the event names no client")  # a retry cannot help
    drainer.drain_once()
    assert not event.exists() and (rejected / event.name).exists()
    reason = json.loads((rejected / (event.name + ".reason")).read_text())["reason"]
    assert reason.startswith("bad_request: ")
    # An event that keeps failing unexpectedly (a bug) is set aside after a few tries.
    poison = spool.write(project, "hook", {"provider": "claude-code", "event": "Stop",
                                           "payload": {"session_id": "p"}})
    outcome[0] = RuntimeError("a bug in the adapter")
    for _ in range(MAX_ATTEMPTS):
        drainer.drain_once()
    assert not poison.exists() and (rejected / poison.name).exists()


# -- times are checked where they come in --------------------------------------------------------
@pytest.mark.parametrize("value", ["1e300", "inf", "nan", "-1", "99999999999999"])
def test_an_out_of_range_time_is_one_line_from_the_cli(shared_daemon: Path, value: str) -> None:
    proc = run_cli(shared_daemon, "add", "The shearwater job runs daily.", "--expires-at", value,
                   check=False)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert proc.stderr.strip() == ("lintaid: --expires-at must be a time between 1970 and 9999")


def test_an_out_of_range_time_is_a_bad_request_from_the_api(daemon: Path) -> None:
    with Memory(project=daemon) as m:
        rid = m.add("The fulmar cache expires weekly.")["results"][0]["id"]
        for call in (lambda: m.expire(rid, at=1e20),
                     lambda: m.call("add", {"content": "x", "created_at": float("inf")}),
                     lambda: m.call("add", {"content": "x", "created_at": float("nan")}),
                     lambda: m.call("add", {"content": "x", "created_at": -1e30})):
            with pytest.raises(protocol.BadRequest):
                call()
    conn = connection.Connection(daemon)  # and from a client that skips the checks
    try:
        for value in (1e300, float("inf")):
            sock_reply = conn.call
            with pytest.raises(protocol.BadRequest) as info:
                sock_reply("add", {"content": "y", "expires_at": value})
            assert info.value.arg == "expires_at"
    finally:
        conn.close()
    assert run_json(daemon, "status")["memory"]["records"] == 1


# -- a client that notices a dead daemon ----------------------------------------------------------
def test_reindex_notices_a_daemon_killed_mid_reindex(project: Path) -> None:
    tree = project / "src"
    tree.mkdir()
    for i in range(2500):
        (tree / f"m{i}.py").write_text(f"def handler_{i}():\n    return {i}\n" * 20)
    env = lintaid_env(LINTAID_NO_WATCH="0")
    start_daemon(project, env=env)
    wait_for(lambda: run_json(project, "status", env=env)["workspace"]["ready"], timeout=120)
    pid = connection.read_status(project)["pid"]
    proc = subprocess.Popen([sys.executable, "-m", "lintaid", "reindex", "--full", "--project",
                             str(project)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: (connection.Connection(project).call("status", timeout=5)
                          .get("workspace") or {}).get("progress", {}).get("running"),
                 timeout=60, interval=0.02)
        os.kill(pid, signal.SIGKILL)
        _out, err = proc.communicate(timeout=60)  # a bound, not a measurement
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode != 0 and "Traceback" not in err
    assert ("went away" in err or "stopped answering" in err) and len(err.strip().splitlines()) == 1


# -- a clean stop leaves no socket behind ---------------------------------------------------------
def test_a_clean_stop_removes_the_socket_file(project: Path) -> None:
    start_daemon(project)
    endpoint = paths.endpoint(project).removeprefix("ipc://")
    assert os.path.exists(endpoint)
    stop_daemon(project)
    assert not os.path.exists(endpoint) and not paths.status_path(project).exists()
