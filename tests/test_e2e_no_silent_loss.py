"""No capture is lost without a word: the hook's last-resort exit still spools (or says why not
on stderr), a stopped daemon under a burst of hooks loses nothing, and a full project disk
sends the spool to the runtime folder, which the daemon drains.

(``benchmarks/no_silent_loss.py`` runs the SIGSTOP case at a load average of about 10.)
"""

# ruff: noqa: F811  (small_disk, a fixture of test_e2e_disk_full.py, is imported)
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from lintaid_client import paths, spool
from tests.conftest import daemon_process, hook_command, lintaid_env, wait_for
from tests.test_e2e_disk_full import fill, small_disk  # noqa: F401
from tests.test_e2e_spine import searchable, unique_session

HANG = ("import sys, time\n"
        "import lintaid_client.hook as hook\n"
        "hook.exchange = lambda *a, **k: time.sleep(60)  # stuck where no timeout reaches\n"
        "hook.main(sys.argv[1:])\n")


def stuck_hook(root: Path, stdin: bytes, *, close: bool = True) -> tuple[int, bytes, bytes]:
    """Run the hook shim with its round trip stuck; (exit code, stdout, stderr). ``close``
    False: the agent writes ``stdin`` and never closes the pipe."""
    env = lintaid_env(LINTAID_NO_AUTOSTART="1", LINTAID_HOOK_TIMEOUT_MS="300")
    proc = subprocess.Popen([sys.executable, "-c", HANG, "claude-code", "Stop"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, cwd=str(root))
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    try:
        proc.stdin.write(stdin)
        proc.stdin.flush()
        if close:
            proc.stdin.close()
        code = proc.wait(30)  # the pipe may still be open: the shim must leave anyway
        return code, proc.stdout.read(), proc.stderr.read()
    finally:
        proc.kill()
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            if not pipe.closed:
                pipe.close()


@pytest.mark.slow
def test_the_last_resort_exit_still_spools_the_event(project: Path) -> None:
    payload = json.dumps({"cwd": str(project), "hook_event_name": "Stop",
                          **unique_session(project, 0, "zorblatt")}).encode()
    code, out, err = stuck_hook(project, payload)
    assert code == 0 and json.loads(out) == {}
    assert err == b""  # kept: nothing to say
    [kept] = wait_for(lambda: spool.pending(project))  # by its detached child
    assert spool.read(kept)["args"]["event"] == "Stop"


@pytest.mark.slow
def test_the_last_resort_exit_says_so_when_the_event_was_never_read(project: Path) -> None:
    code, out, err = stuck_hook(project, b'{"cwd": ', close=False)  # never finished
    assert code == 0 and json.loads(out) == {}
    lines = err.decode().strip().splitlines()
    assert len(lines) == 1 and "was not kept" in lines[0], lines
    assert spool.pending(project) == []


@pytest.mark.slow
def test_a_stopped_daemon_loses_no_capture_of_a_burst_without_a_word(project: Path) -> None:
    """SIGSTOP the daemon, then 40 Stop hooks at once on a short budget (300 ms, so most
    run out of it while 40 interpreters start on 2 cores): each answers ``{}`` and exits 0,
    and its event is in the spool, or its stderr says in one line that it was not kept (the
    agent had not written it in time); once the daemon runs again every kept capture is
    searchable."""
    daemon = daemon_process(project)
    words = [f"stopword{n}x" for n in range(40)]
    env = lintaid_env(LINTAID_NO_AUTOSTART="1", LINTAID_HOOK_TIMEOUT_MS="300")
    os.kill(daemon.pid, signal.SIGSTOP)
    try:
        hooks = []
        for n, word in enumerate(words):
            proc = subprocess.Popen(hook_command("claude-code", "Stop"), stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                                    cwd=str(project))
            assert proc.stdin is not None
            proc.stdin.write(json.dumps({"cwd": str(project),
                                         **unique_session(project, n, word)}).encode())
            proc.stdin.close()
            hooks.append((word, proc))
        said: list[str] = []
        for word, proc in hooks:
            assert proc.stdout is not None and proc.stderr is not None
            with proc.stdout, proc.stderr:
                out, err = proc.stdout.read(), proc.stderr.read()
            assert proc.wait(60) == 0 and json.loads(out) == {}
            if b"was not kept" in err:
                assert len(err.strip().splitlines()) == 1
                said.append(word)
        wait_for(lambda: len(spool.pending(project)) == len(words) - len(said), timeout=60)
    finally:
        os.kill(daemon.pid, signal.SIGCONT)
    try:
        wait_for(lambda: not spool.pending(project), timeout=120)
        assert searchable(project, words) == set(words) - set(said)
        assert len(said) <= 4, said  # a few at most, and each one said so
    finally:
        assert daemon.stop() == 0


@pytest.mark.slow
def test_a_full_project_disk_spools_to_the_runtime_folder(small_disk: Path) -> None:
    """The daemon is down and the project's disk full: every Stop capture waits in the
    runtime folder's spool (another file system), and the daemon drains it once started,
    space back or not."""
    root = small_disk
    words = [f"fullword{n}x" for n in range(5)]
    payloads = [unique_session(root, n, word) for n, word in enumerate(words)]  # before filling
    filler = fill(root)
    env = lintaid_env(LINTAID_NO_AUTOSTART="1")
    for payload in payloads:
        proc = subprocess.run(hook_command("claude-code", "Stop"),
                              input=json.dumps({"cwd": str(root), **payload}),
                              capture_output=True, text=True, env=env, cwd=str(root), timeout=30)
        assert proc.returncode == 0 and json.loads(proc.stdout) == {}
    fallback = spool.fallback_dir(root)
    wait_for(lambda: len(spool.pending(root)) == len(words), timeout=30)
    assert {p.parent for p in spool.pending(root)} == {fallback}
    assert not any(paths.spool_dir(root).glob("*.json"))
    os.unlink(filler)
    daemon = daemon_process(root)
    try:
        wait_for(lambda: not spool.pending(root), timeout=60)
        assert searchable(root, words) == set(words)
    finally:
        daemon.stop()


@pytest.mark.slow
def test_a_full_disk_under_a_running_daemon_loses_no_capture(small_disk: Path) -> None:
    """The daemon runs but cannot write (the disk is full): it refuses the capture as one a
    retry can help, the hook spools it to the runtime folder, and the daemon stores it once
    space is back."""
    root = small_disk
    daemon = daemon_process(root)
    try:
        payload = unique_session(root, 0, "quenchword")
        filler = fill(root)
        proc = subprocess.run(hook_command("claude-code", "Stop"),
                              input=json.dumps({"cwd": str(root), **payload}),
                              capture_output=True, text=True, cwd=str(root), timeout=30,
                              env=lintaid_env(LINTAID_NO_AUTOSTART="1"))
        assert proc.returncode == 0 and json.loads(proc.stdout) == {}
        wait_for(lambda: spool.pending(root), timeout=30)
        os.unlink(filler)
        wait_for(lambda: not spool.pending(root), timeout=90)
        assert searchable(root, ["quenchword"]) == {"quenchword"}
    finally:
        daemon.stop()
