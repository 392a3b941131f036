"""systemd readiness: the daemon sends READY=1 to NOTIFY_SOCKET once it answers, STOPPING=1
when it stops, and logs to stderr (the journal) in the foreground."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from lintaid.notify import Notifier, socket_address
from lintaid_client import connection
from tests.conftest import lintaid_env


def _fields(datagram: bytes) -> dict[str, str]:
    return dict(line.split("=", 1) for line in datagram.decode().splitlines())


@pytest.fixture(params=["path", "abstract"])
def notify_socket(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[
        tuple[str, socket.socket]]:
    """A datagram socket standing in for systemd's: (NOTIFY_SOCKET value, the socket)."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    if request.param == "path":
        value = str(tmp_path / "notify.sock")
        sock.bind(value)
    else:
        value = f"@lintaid-test-{os.getpid()}-{os.urandom(4).hex()}"
        sock.bind("\0" + value[1:])
    sock.settimeout(60)  # a bound on a broken daemon, not a timing assertion
    try:
        yield value, sock
    finally:
        sock.close()


def test_addresses() -> None:
    assert socket_address("/run/user/1000/systemd/notify") == "/run/user/1000/systemd/notify"
    assert socket_address("@abstract") == "\0abstract"
    assert socket_address("vsock:2:1") is None and socket_address("") is None


def test_the_notifier_sends_one_datagram_and_takes_the_variable_out(
        notify_socket: tuple[str, socket.socket]) -> None:
    value, sock = notify_socket
    env = {"NOTIFY_SOCKET": value, "OTHER": "x"}
    notifier = Notifier.from_env(env)
    assert env == {"OTHER": "x"}  # children never inherit it
    assert notifier.ready("serving /p")
    fields = _fields(sock.recv(4096))
    assert fields == {"READY": "1", "STATUS": "serving /p", "MAINPID": str(os.getpid())}


def test_without_a_socket_nothing_is_sent_and_a_dead_one_is_no_error(tmp_path: Path) -> None:
    assert not Notifier.from_env({}).ready("x")
    assert not Notifier(str(tmp_path / "gone.sock")).stopping()


@pytest.mark.slow
def test_the_daemon_says_ready_then_stopping(project: Path,
                                             notify_socket: tuple[str, socket.socket]) -> None:
    value, sock = notify_socket
    env = lintaid_env(NOTIFY_SOCKET=value, INVOCATION_ID="0123456789abcdef")
    proc = subprocess.Popen(
        [sys.executable, "-m", "lintaid", "start", "--foreground", "--project", str(project)],
        env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        cwd=str(project))
    try:
        ready = _fields(sock.recv(4096))
        assert ready["READY"] == "1" and ready["MAINPID"] == str(proc.pid)
        assert ready["STATUS"] == f"serving {project}"
        # READY=1 means it answers: no waiting needed before the first request.
        assert connection.ping(project, timeout=5.0)["pid"] == proc.pid
        proc.send_signal(signal.SIGTERM)
        assert _fields(sock.recv(4096))["STOPPING"] == "1"
        _out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0
    events = [json.loads(line)["event"] for line in err.decode().splitlines()
              if line.startswith("{")]
    assert "started" in events and "stopped" in events  # what the journal shows


@pytest.mark.slow
def test_a_failed_start_says_why_to_the_manager(tmp_path: Path,
                                                notify_socket: tuple[str, socket.socket]) -> None:
    value, sock = notify_socket
    project = tmp_path / "proj"
    (project / ".lint-ai").mkdir(parents=True)
    (project / ".lint-ai" / "memory.db").mkdir()  # a folder where the database must be
    proc = subprocess.run(
        [sys.executable, "-m", "lintaid", "start", "--foreground", "--project", str(project)],
        env=lintaid_env(NOTIFY_SOCKET=value), capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    assert _fields(sock.recv(4096))["STATUS"].startswith("could not start: ")
