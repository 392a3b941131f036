"""What an idle daemon costs: wake-ups a second, threads and RSS, for one or more projects.

Starts N daemon processes (``lintaid start --foreground``, the workspace watcher on, idle exit
off so they stay for the measurement), each on a small git project of its own; uses each
(three adds, a search, a hook event), then measures twice with nothing asked:

  * ``idle``: a few seconds after the last request;
  * ``resting``: once the daemon has rested (``lintaid.idle.REST_AFTER_S`` after the last
    request it lets go of its indexes, whose threads otherwise poll twice a second).

Wake-ups are the context switches of all the process's threads (``voluntary`` plus
``nonvoluntary``, /proc/PID/task/*/status) over the sample, per second. Afterwards a search
on each daemon must still find its record (the indexes open again on use).

    python benchmarks/idle.py [--projects 5] [--seconds 10]
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "client"))

from lintaid.idle import REST_AFTER_S  # noqa: E402
from lintaid_client import Memory, connection, hook  # noqa: E402


def switches(pid: int) -> int:
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            text = Path(f"/proc/{pid}/task/{task}/status").read_text()
        except OSError:  # the thread ended meanwhile
            continue
        total += sum(int(line.split()[1]) for line in text.splitlines()
                     if "ctxt_switches:" in line)
    return total


def threads(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/task"))


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def make_project(base: Path, n: int) -> Path:
    root = base / f"proj{n}"
    (root / "docs").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "README.md").write_text(f"# Project {n}\n\nThe service stores orders in Postgres.\n")
    (root / "docs" / "adr-1.md").write_text("# ADR 1\n\nWe cache sessions in Redis.\n")
    (root / "app.py").write_text("def main():\n    return 1\n")
    return root


def sample(pids: list[int], seconds: float) -> list[float]:
    before = [switches(pid) for pid in pids]
    time.sleep(seconds)
    return [(switches(pid) - b) / seconds for pid, b in zip(pids, before, strict=True)]


def report(label: str, pids: list[int], rates: list[float]) -> None:
    for n, (pid, rate) in enumerate(zip(pids, rates, strict=True)):
        print(f"  {label:8s} daemon {n}: {rate:5.2f} wake-ups/s, {threads(pid):2d} threads, "
              f"RSS {rss_mib(pid):5.1f} MiB")
    print(f"  {label:8s} total: {sum(rates):5.2f} wake-ups/s, "
          f"RSS {sum(rss_mib(p) for p in pids):6.1f} MiB for {len(pids)} daemon(s)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--projects", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=10.0, help="each sample's length")
    parser.add_argument("--settle", type=float, default=5.0,
                        help="seconds after the last request before the first sample")
    opts = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="lintaid-idle-"))
    runtime = base / "run"
    runtime.mkdir(mode=0o700)
    env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime), "LINTAID_IDLE_EXIT_S": "0",
           "LINTAID_LOG_STDERR": "0", "LINTAID_NO_AUTOSTART": "1",
           "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "client")])}
    os.environ["XDG_RUNTIME_DIR"] = str(runtime)
    os.environ["LINTAID_NO_AUTOSTART"] = "1"
    roots = [make_project(base, n) for n in range(opts.projects)]
    procs = [subprocess.Popen([sys.executable, "-m", "lintaid", "start", "--foreground",
                               "--project", str(root)], env=env, cwd=str(root),
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL) for root in roots]
    try:
        for root in roots:
            deadline = time.monotonic() + 120
            while connection.ping(root) is None:
                if time.monotonic() > deadline:
                    raise SystemExit(f"no daemon answered for {root}")
                time.sleep(0.1)
        for n, root in enumerate(roots):
            with Memory(root, autostart=False) as mem:
                for word in ("kestrel", "plover", "osprey"):
                    mem.add(f"The {word} queue drains every hour in project {n}.")
                mem.search("queue drains")
            hook.answer("claude-code", "UserPromptSubmit", (
                f'{{"cwd": "{root}", "session_id": "s{n}", "hook_event_name": '
                f'"UserPromptSubmit", "prompt": "how often does the queue drain?"}}').encode())
        last_request = time.monotonic()
        pids = [p.pid for p in procs]
        time.sleep(opts.settle)
        print(f"{len(roots)} daemon(s), idle exit off, {opts.seconds:.0f} s samples")
        report("idle", pids, sample(pids, opts.seconds))
        time.sleep(max(0.0, last_request + REST_AFTER_S + 5 - time.monotonic()))
        report("resting", pids, sample(pids, opts.seconds))
        for n, root in enumerate(roots):
            with Memory(root, autostart=False) as mem:
                hits = mem.search("kestrel queue")["results"]
            assert hits and "kestrel" in hits[0]["memory"], (n, hits)
        print("  after resting, every daemon's search still finds its record")
    finally:
        for proc in procs:
            proc.send_signal(signal.SIGTERM)
        for proc in procs:
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                proc.kill()
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
