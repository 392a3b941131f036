"""Captures under a stopped daemon on a loaded machine: how many are kept, said lost, lost.

A daemon process for a scratch project is stopped (SIGSTOP) while CPU burners hold the load
average near ``--load``; ``--events`` Stop hooks run as a client runs them (``python -I -S
.../hook.py claude-code Stop``, the default budget unless ``--budget-ms``), ``--wave`` at a
time. Each must print ``{}`` and exit 0; then the spool is counted: an event is kept (its file
is there), said lost (the hook's stderr said it was not kept) or lost without a word. The
daemon is resumed and must drain the spool. Prints one line of figures.

    python benchmarks/no_silent_loss.py --events 280 --load 10
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "client"))
sys.path.insert(0, str(REPO))

from lintaid_client import paths, spool  # noqa: E402

HOOK = REPO / "client" / "lintaid_client" / "hook.py"
BURN = "while True: pass"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=280)
    parser.add_argument("--wave", type=int, default=20)
    parser.add_argument("--load", type=int, default=10, help="CPU burners to run")
    parser.add_argument("--budget-ms", type=int, default=1000)
    opts = parser.parse_args()

    base = Path(tempfile.mkdtemp(prefix="lintaid-bench-loss-"))
    root = base / "project"
    root.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    paths.ensure_state_dir(root)
    env = {**os.environ, "XDG_RUNTIME_DIR": str(base / "run"), "LINTAID_NO_WATCH": "1",
           "LINTAID_NO_AUTOSTART": "1", "LINTAID_HOOK_TIMEOUT_MS": str(opts.budget_ms)}
    (base / "run").mkdir(mode=0o700)
    daemon = subprocess.Popen([sys.executable, "-m", "lintaid", "start", "--foreground",
                               "--project", str(root)], env=env, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not paths.status_path(root).exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    burners = [subprocess.Popen([sys.executable, "-c", BURN]) for _ in range(opts.load)]
    said = 0
    try:
        time.sleep(3)  # let the load build
        load_before = os.getloadavg()[0]
        os.kill(daemon.pid, signal.SIGSTOP)
        started = time.monotonic()
        for first in range(0, opts.events, opts.wave):
            procs = []
            for n in range(first, min(opts.events, first + opts.wave)):
                transcript = base / f"t{n}.jsonl"
                transcript.write_text("\n".join(json.dumps(line) for line in [
                    {"type": "user", "sessionId": f"s{n}", "uuid": f"u{n}", "cwd": str(root),
                     "message": {"role": "user", "content": f"Check the widget{n} job."}},
                    {"type": "assistant", "sessionId": f"s{n}", "uuid": f"a{n}",
                     "cwd": str(root), "message": {"role": "assistant", "content": [
                         {"type": "text", "text": f"The widget{n} job is healthy."}]}},
                ]) + "\n")
                payload = {"cwd": str(root), "session_id": f"s{n}", "hook_event_name": "Stop",
                           "transcript_path": str(transcript)}
                proc = subprocess.Popen([sys.executable, "-I", "-S", str(HOOK), "claude-code",
                                         "Stop"], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                                        cwd="/")
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
        elapsed = time.monotonic() - started
        load_during = os.getloadavg()[0]
        wait_until = time.monotonic() + 60
        while len(spool.pending(root)) < opts.events - said and time.monotonic() < wait_until:
            time.sleep(0.2)  # the detached children finish writing
        kept = len(spool.pending(root))
    finally:
        for burner in burners:
            burner.kill()
        os.kill(daemon.pid, signal.SIGCONT)
    drain_until = time.monotonic() + 120
    while spool.pending(root) and time.monotonic() < drain_until:
        time.sleep(0.2)
    left = len(spool.pending(root))
    daemon.send_signal(signal.SIGTERM)
    daemon.wait(60)
    print(f"events {opts.events} budget {opts.budget_ms} ms load {load_before:.1f}->"
          f"{load_during:.1f}: kept {kept}, said not kept {said}, lost without a word "
          f"{opts.events - kept - said}; {elapsed:.1f}s of hooks; spool left after resume "
          f"{left}")


if __name__ == "__main__":
    main()
