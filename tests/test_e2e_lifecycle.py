"""Daemon life cycle: signals, index rebuilds, read-your-writes, version mismatch, auto-start.

Signals, restarts from damaged files and auto-start need a daemon process; the rest runs the
daemon in this process (``served``).
"""

from __future__ import annotations

import os
import shutil
import signal
from collections.abc import Callable
from pathlib import Path

import pytest
import zmq

from lintaid.daemon import Config
from lintaid_client import connection, lock, paths, protocol
from tests.conftest import (
    Served,
    daemon_process,
    lintaid_env,
    run_cli,
    run_hook,
    run_json,
    start_daemon,
    stop_daemon,
    wait_for,
)
from tests.transcripts import stop_payload, write_transcript


def search(root: Path, query: str) -> list[dict]:
    with connection.Connection(root) as conn:
        results: list[dict] = conn.call("search", {"query": query}, timeout=30)["results"]
    return results


@pytest.mark.slow
def test_sigterm_finishes_in_flight_writes_and_exits_cleanly(
        project: Path, serve: Callable[..., Served]) -> None:
    daemon = daemon_process(project)
    ctx = zmq.Context()
    sock = ctx.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    acked: set[str] = set()

    def take_reply() -> None:
        reply = protocol.unpack(sock.recv())
        if reply.get("ok"):
            acked.add(reply["result"]["id"])

    try:
        sock.connect(paths.endpoint(project))
        for i in range(300):  # pipelined: many writes in flight when the signal lands
            sock.send(protocol.pack(protocol.request(
                "add", {"content": f"fact number {i} about the frobnicator"}, f"r{i}")))
        assert sock.poll(30_000)  # the first write is through; most are still in flight
        daemon.proc.send_signal(signal.SIGTERM)
        while daemon.proc.poll() is None:  # replies keep coming until it has exited
            if sock.poll(100):
                take_reply()
        while sock.poll(500):  # and what was on its way when it exited
            take_reply()
        assert daemon.proc.wait(60) == 0
        assert "Traceback" not in daemon.stderr()
    finally:
        sock.close(0)
        ctx.term()
        daemon.stop()
    assert acked, "no write was acknowledged before the signal"
    assert not paths.status_path(project).exists()
    served = serve(project)  # read back through a fresh daemon, in this process
    stored = {h["id"] for h in served.call("list", {"limit": 1000})["results"]}
    assert acked <= stored


@pytest.mark.slow
def test_missing_or_corrupt_index_is_rebuilt_from_sqlite(project: Path) -> None:
    start_daemon(project)
    run_cli(project, "add", "The scheduler runs nightly compaction at 02:00 UTC.")
    assert "lintaid daemon" in run_cli(project, "stop").stdout
    assert run_cli(project, "status", check=False).returncode == 3  # stopped
    index = paths.index_dir(project, "memory")
    damages = [
        lambda: shutil.rmtree(index),  # missing
        lambda: (index / "meta.json").write_text("{ not json"),  # corrupt
        lambda: (index / "lintaid-schema").write_text("0\n"),  # an older schema version
    ]
    for damage in damages:
        damage()
        proc = daemon_process(project)
        try:
            hits = search(project, "nightly compaction scheduler")
            assert hits and "02:00" in hits[0]["content"]
            assert (index / "lintaid-schema").read_text().strip() != "0"
        finally:
            assert proc.stop() == 0


def test_an_acknowledged_write_is_visible_to_the_very_next_search(served: Served) -> None:
    conn = connection.Connection(served.root)
    try:
        for i in range(40):
            word = f"zyxq{i}word"
            rid = conn.call("add", {"content": f"note {word} for the next search"})["id"]
            hits = conn.call("search", {"query": word})["results"]
            assert [h["id"] for h in hits] == [rid], i
    finally:
        conn.close()


def test_protocol_mismatch_is_an_error_reply(served: Served) -> None:
    ctx = zmq.Context()
    sock = ctx.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.connect(paths.endpoint(served.root))
    try:
        sock.send(protocol.pack({"v": 2, "id": "x", "op": "ping", "args": {}}))
        assert sock.poll(30_000)
        reply = protocol.unpack(sock.recv())
        try:
            protocol.raise_for_error(reply)
        except protocol.ProtocolMismatch as err:
            assert "protocol 1" in err.message
        else:
            raise AssertionError("expected ProtocolMismatch")
    finally:
        sock.close(0)
        ctx.term()


@pytest.mark.slow
def test_hook_autostarts_the_daemon_and_the_event_is_not_lost(project: Path) -> None:
    transcript = write_transcript(project.parent / "t.jsonl", [
        ("user", "Rename the plumbus module to widget."),
        ("assistant", "Renamed plumbus to widget and updated the imports."),
    ], cwd=str(project))
    try:
        out = run_hook(project, "Stop", stop_payload(transcript, cwd=str(project)))
        assert out == {}  # answered at once: the event went to the spool
        wait_for(lambda: connection.ping(project, timeout=0.5), timeout=60)
        hits = wait_for(lambda: search(project, "plumbus widget"), timeout=60)
        assert "Renamed plumbus to widget" in hits[0]["content"]
    finally:
        stop_daemon(project)


@pytest.mark.slow
def test_an_idle_daemon_stops_cleanly_and_the_next_event_starts_it_again(project: Path) -> None:
    env = lintaid_env(LINTAID_IDLE_EXIT_S="1")
    first = daemon_process(project, env)
    kept = run_json(project, "add", "The lapwing export runs on Sundays.", env=env)["id"]
    assert first.proc.wait(60) == 0  # by itself, once nothing came for a second
    # The clean stop's path: a backup of what changed, the socket and the lock let go.
    [backup] = sorted((paths.state_dir(project) / "backups").glob("memory-*.db"))
    assert not lock.is_held(paths.lock_path(project))
    assert connection.nobody_listens(paths.endpoint(project))
    assert connection.read_status(project) is None
    transcript = write_transcript(project.parent / "t.jsonl", [
        ("user", "Rename the gazpacho module to soup."),
        ("assistant", "Renamed gazpacho to soup and updated the imports."),
    ], cwd=str(project))
    assert run_hook(project, "Stop", stop_payload(transcript, cwd=str(project)), env=env) == {}
    # The hook spooled the event and started a daemon; the CLI finds (or starts) one too.
    wait_for(lambda: lock.is_held(paths.lock_path(project)), timeout=30)
    found = wait_for(lambda: run_json(project, "search", "gazpacho soup", env=env)["results"],
                     timeout=60)
    assert "Renamed gazpacho to soup" in found[0]["content"]
    assert kept in {h["id"] for h in run_json(project, "search", "lapwing export",
                                              env=env)["results"]}
    # That one stops when idle as well (waited on, not told to).
    wait_for(lambda: not lock.is_held(paths.lock_path(project)), timeout=60)
    assert backup.exists()


def test_status_says_when_an_idle_daemon_stops(project: Path,
                                              serve: Callable[..., Served],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LINTAID_IDLE_EXIT_S", "0")
    assert Config.from_env().idle_exit_s == 0
    served = serve(project, idle_exit_s=0)
    assert served.call("status")["idle"]["stops_at"] is None
    assert "idle stop never" in served.cli("status").stdout
    served.stop()
    served = serve(project, idle_exit_s=1800)
    idle = served.call("status")["idle"]
    assert idle["exit_after_s"] == 1800 and idle["stops_at"] is not None
    assert idle["pending"] is None  # the status request itself is not pending work
    assert "if still idle (30m without requests" in served.cli("status").stdout


def test_a_resting_daemon_lets_go_of_its_indexes_and_opens_them_on_use(
        served: Served) -> None:
    daemon = served.daemon
    assert daemon is not None
    served.call("add", {"content": "The tern mirror syncs at noon."})
    indexes = daemon.store.index
    daemon.idle.rest_after_s = 0.05
    daemon.server.wake()  # the loop was asleep until the default mark
    wait_for(lambda: daemon.idle.resting and indexes._open
             and all(i._index is None and i._writer is None for i in indexes._open.values()))
    assert "tern mirror" in served.call("search", {"query": "tern mirror"})["results"][0][
        "content"]
    served.call("add", {"content": "The skua relay restarts at midnight."})
    assert served.call("search", {"query": "skua relay"})["results"]


def test_logs_command_prints_json_lines(served: Served) -> None:
    out = served.cli("logs", "-n", "5").stdout
    assert '"event": "started"' in out


@pytest.mark.slow
def test_cli_restarts_a_daemon_that_is_gone_midway(project: Path) -> None:
    first = daemon_process(project)
    os.kill(first.pid, signal.SIGKILL)
    assert first.stop() == -signal.SIGKILL
    pid = first.pid
    try:
        # The status file is stale now; any command notices and starts a fresh daemon.
        run_cli(project, "add", "Auto restart keeps the CLI usable.")
        assert connection.read_status(project)["pid"] != pid
    finally:
        stop_daemon(project)
