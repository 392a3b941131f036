"""Captures under a stopped daemon on a loaded machine, and under a full disk: how many
Stop events are captured in the end, said lost, lost without a word.

The scratch project gets lintaid's hooks with ``lintaid install claude-code`` (``HOME`` is a
scratch folder too, so the launcher is written there), and every event runs the Stop
command the install wrote into ``.claude/settings.json``, through ``sh -c`` as Claude Code
runs it, with a transcript of its own that holds a word no other event's does. Each hook
must print ``{}`` and exit 0; an event is said lost when the hook's stderr says it was not
kept. At the end the captured turns are counted in memory.db (read only): an event is
captured when a record holds its word.

* ``sigstop``: ``--load`` busy processes run until the 1-minute load average reaches
  ``--load`` (at most ``--ramp-s``); the daemon is stopped (SIGSTOP) and ``--events`` hooks
  run, ``--wave`` at a time, on the default budget (``--budget-ms``); then SIGCONT, and the
  daemon drains the spool.
* ``full``: the project lives on a 24 MiB tmpfs (mounting one needs root); the daemon runs;
  the disk is filled; ``--events`` hooks run (the daemon refuses the writes as retryable,
  the project's spool cannot take them, the runtime folder's does); the filler is removed
  and the daemon drains the spool.

Prints one line of figures per phase.

    python benchmarks/no_silent_loss.py --events 200 --load 10
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "client"))
sys.path.insert(0, str(REPO))

from lintaid_client import paths, spool  # noqa: E402

BURN = "while True: pass"


def word(n: int) -> str:
    return f"widget{n}zq"


def setup(root: Path, base: Path, budget_ms: int) -> tuple[dict[str, str], str]:
    """The environment and the installed Stop command for a new project at ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    (base / "home").mkdir(exist_ok=True)
    run = base / "run"
    run.mkdir(mode=0o700, exist_ok=True)
    env = {**os.environ, "HOME": str(base / "home"), "XDG_RUNTIME_DIR": str(run),
           "LINTAID_NO_WATCH": "1", "LINTAID_NO_AUTOSTART": "1",
           "LINTAID_HOOK_TIMEOUT_MS": str(budget_ms)}
    env.pop("XDG_DATA_HOME", None)
    os.environ["XDG_RUNTIME_DIR"] = str(run)  # where this process looks for the spool too
    subprocess.run([sys.executable, "-m", "lintaid", "install", "claude-code", "--project",
                    str(root)], env=env, check=True, capture_output=True)
    settings = json.loads((root / ".claude" / "settings.json").read_text())
    [command] = [h["command"] for entry in settings["hooks"]["Stop"] for h in entry["hooks"]
                 if "lintaid" in h["command"]]
    return env, command


def start_daemon(root: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    daemon = subprocess.Popen([sys.executable, "-m", "lintaid", "start", "--foreground",
                               "--project", str(root)], env=env, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not paths.status_path(root).exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    return daemon


def fire(root: Path, base: Path, env: dict[str, str], command: str, events: range,
         wave: int) -> tuple[int, float]:
    """Run the installed Stop command once per event, ``wave`` at a time; return how many
    said they did not keep their event, and the seconds it took."""
    said = 0
    started = time.monotonic()
    for first in range(events.start, events.stop, wave):
        procs = []
        for n in range(first, min(events.stop, first + wave)):
            transcript = base / f"t{n}.jsonl"
            transcript.write_text("\n".join(json.dumps(line) for line in [
                {"type": "user", "sessionId": f"s{n}", "uuid": f"u{n}", "cwd": str(root),
                 "message": {"role": "user", "content": f"Check the {word(n)} job."}},
                {"type": "assistant", "sessionId": f"s{n}", "uuid": f"a{n}", "cwd": str(root),
                 "message": {"role": "assistant", "content": [
                     {"type": "text", "text": f"The {word(n)} job is healthy."}]}},
            ]) + "\n")
            payload = {"cwd": str(root), "session_id": f"s{n}", "hook_event_name": "Stop",
                       "transcript_path": str(transcript)}
            proc = subprocess.Popen(["sh", "-c", command], stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                                    cwd=str(root))
            assert proc.stdin is not None
            proc.stdin.write(json.dumps(payload).encode())
            proc.stdin.close()
            procs.append(proc)
        for proc in procs:
            assert proc.stdout is not None and proc.stderr is not None
            out, err = proc.stdout.read(), proc.stderr.read()
            proc.stdout.close()
            proc.stderr.close()
            if proc.wait(60) != 0 or json.loads(out) != {}:
                raise SystemExit(f"a hook broke its contract: {out!r} {err!r}")
            said += b"was not kept" in err
    return said, time.monotonic() - started


def captured(root: Path, events: range) -> int:
    """Events whose word a record in memory.db holds (read only)."""
    db = paths.memory_db_path(root)
    conn = sqlite3.connect(f"{db.absolute().as_uri()}?mode=ro", uri=True, timeout=30)
    try:
        text = "\n".join(str(r[0]) for r in conn.execute("SELECT content FROM records"))
    finally:
        conn.close()
    return sum(word(n) in text for n in events)


def drain(root: Path, events: range, timeout: float = 300) -> int:
    """Wait until the spool is empty and every event is captured (or ``timeout``); return
    how many are captured."""
    deadline = time.monotonic() + timeout
    got = 0
    while time.monotonic() < deadline:
        if not spool.pending(root):
            got = captured(root, events)
            if got == len(events):
                break
        time.sleep(0.5)
    return captured(root, events)


def stop(daemon: subprocess.Popen[bytes]) -> None:
    daemon.send_signal(signal.SIGTERM)
    try:
        daemon.wait(60)
    except subprocess.TimeoutExpired:
        daemon.kill()


def sigstop_phase(opts: argparse.Namespace) -> None:
    base = Path(tempfile.mkdtemp(prefix="lintaid-bench-loss-"))
    root = base / "project"
    env, command = setup(root, base, opts.budget_ms)
    daemon = start_daemon(root, env)
    burners = [subprocess.Popen([sys.executable, "-c", BURN]) for _ in range(opts.load)]
    events = range(opts.events)
    try:
        ramp_until = time.monotonic() + opts.ramp_s
        while os.getloadavg()[0] < opts.load and time.monotonic() < ramp_until:
            time.sleep(1)
        load_before = os.getloadavg()[0]
        os.kill(daemon.pid, signal.SIGSTOP)
        try:
            said, elapsed = fire(root, base, env, command, events, opts.wave)
            load_during = os.getloadavg()[0]
            time.sleep(2)  # the last detached children finish writing
            spooled = len(spool.pending(root))
        finally:
            os.kill(daemon.pid, signal.SIGCONT)
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()
    got = drain(root, events)
    stop(daemon)
    print(f"sigstop: {opts.events} Stop hooks (installed command, budget {opts.budget_ms} ms, "
          f"{opts.load} busy processes, load average {load_before:.1f} at SIGSTOP, "
          f"{load_during:.1f} after the hooks; {elapsed:.1f}s of hooks): spooled while "
          f"stopped {spooled}, captured after SIGCONT {got}, said not kept {said}, lost "
          f"without a word {opts.events - got - said}")


def full_phase(opts: argparse.Namespace) -> None:
    base = Path(tempfile.mkdtemp(prefix="lintaid-bench-full-"))
    mount = base / "disk"
    mount.mkdir()
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", str(mount)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        print(f"full: not run (cannot mount a small tmpfs: {proc.stderr.strip()})")
        return
    try:
        root = mount / "project"
        env, command = setup(root, base, opts.budget_ms)
        daemon = start_daemon(root, env)
        events = range(opts.events)
        filler = mount / "filler"
        fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            while True:
                os.write(fd, b"\0" * 65536)
        except OSError:
            pass  # ENOSPC
        finally:
            os.close(fd)
        for block in (4096, 512, 1):  # what is left in smaller pieces too
            fd = os.open(filler, os.O_WRONLY | os.O_APPEND)
            try:
                while True:
                    os.write(fd, b"\0" * block)
            except OSError:
                pass
            finally:
                os.close(fd)
        said, elapsed = fire(root, base, env, command, events, opts.wave)
        time.sleep(2)
        waiting = spool.pending(root)
        fallback = sum(p.parent == spool.fallback_dir(root) for p in waiting)
        during = captured(root, events)
        os.unlink(filler)
        got = drain(root, events)
        stop(daemon)
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)
    print(f"full: {opts.events} Stop hooks (installed command, daemon running, project disk "
          f"full; {elapsed:.1f}s of hooks): captured while full {during}, spooled {len(waiting)}"
          f" ({fallback} in the runtime folder), captured once space was back {got}, said not "
          f"kept {said}, lost without a word {opts.events - got - said}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=200)
    parser.add_argument("--wave", type=int, default=20)
    parser.add_argument("--load", type=int, default=10,
                        help="busy processes, and the load average to wait for")
    parser.add_argument("--ramp-s", type=float, default=150.0)
    parser.add_argument("--budget-ms", type=int, default=1000)
    parser.add_argument("--phase", choices=("sigstop", "full", "both"), default="both")
    opts = parser.parse_args()
    if opts.phase in ("sigstop", "both"):
        sigstop_phase(opts)
    if opts.phase in ("full", "both"):
        full_phase(opts)


if __name__ == "__main__":
    main()
