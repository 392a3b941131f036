"""What a daemon's life cycle costs a person: a new project's stores, start, a command, stop.

Prints medians (and the slowest run) over ``--runs`` fresh projects in a temporary folder
(``--dir``; the default is the system's, on this machine's disk: these costs are mostly
fsyncs, so a RAM disk shows far less):
  * a new memory.db opened (``MemoryStore`` on an empty project: schema, migrations);
  * a daemon in this process: start until it answers, one add, stop until its thread ended;
  * ``lintaid start`` from the command line on a new project, until it returns (the daemon
    detached and answering), ``lintaid status --json`` against it, ``lintaid stop``.

    python benchmarks/lifecycle.py [--runs 10] [--dir /tmp]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from lintaid.daemon import Config, Daemon  # noqa: E402
from lintaid.store.memory import MemoryStore  # noqa: E402
from lintaid_client import Memory, lock, paths  # noqa: E402


def new_project(base: str | None) -> Path:
    root = Path(tempfile.mkdtemp(prefix="lintaid-life-", dir=base)) / "proj"
    root.mkdir()
    return root


def timed(fn: Callable[[], object]) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def cli(root: Path, *args: str) -> None:
    proc = subprocess.run([sys.executable, "-m", "lintaid", *args, "--project", str(root)],
                          capture_output=True, text=True,
                          env={**os.environ, "LINTAID_NO_WATCH": "1"})
    if proc.returncode != 0:
        raise SystemExit(f"lintaid {' '.join(args)} failed: {proc.stderr}")


def in_process(root: Path) -> tuple[float, float, float]:
    """(start, add, stop) seconds for a daemon served from a thread of this process."""
    paths.ensure_state_dir(root)
    fd = lock.acquire(paths.lock_path(root))
    umask = os.umask(0o022)
    os.umask(umask)
    try:
        daemon = Daemon(root, Config(watch_workspace=False))
        thread = threading.Thread(target=daemon.run, daemon=True)
        started = time.perf_counter()
        thread.start()
        daemon.ready.wait(60)
        start_s = time.perf_counter() - started
        with Memory(root, autostart=False) as m:
            add_s = timed(lambda: m.add("We use Redis for session storage."))
        started = time.perf_counter()
        daemon.request_shutdown()
        thread.join(60)
        return start_s, add_s, time.perf_counter() - started
    finally:
        lock.release(fd)
        os.umask(umask)


def report(name: str, seconds: list[float]) -> None:
    print(f"{name:<44} median {1000 * statistics.median(seconds):7.1f} ms"
          f"   slowest {1000 * max(seconds):7.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--dir", default=None, help="where the projects go (default: $TMPDIR)")
    opts = parser.parse_args()
    os.environ.setdefault("XDG_RUNTIME_DIR", tempfile.mkdtemp(prefix="lintaid-life-rt-"))
    print(f"{opts.runs} runs, projects under {opts.dir or tempfile.gettempdir()}")

    opened: list[float] = []
    for _ in range(opts.runs):
        root = new_project(opts.dir)
        store: list[MemoryStore] = []
        opened.append(timed(lambda: store.append(MemoryStore(root))))  # noqa: B023
        store[0].close()
    report("new memory.db opened", opened)

    starts, adds, stops = [], [], []
    for _ in range(opts.runs):
        start_s, add_s, stop_s = in_process(new_project(opts.dir))
        starts.append(start_s)
        adds.append(add_s)
        stops.append(stop_s)
    report("daemon in process: start until ready", starts)
    report("daemon in process: one add", adds)
    report("daemon in process: stop (after one add)", stops)

    cli_start, cli_status, cli_stop = [], [], []
    for _ in range(opts.runs):
        root = new_project(opts.dir)
        cli_start.append(timed(lambda: cli(root, "start")))  # noqa: B023
        cli_status.append(timed(lambda: cli(root, "status", "--json")))  # noqa: B023
        cli_stop.append(timed(lambda: cli(root, "stop")))  # noqa: B023
    report("lintaid start (new project, until it answers)", cli_start)
    report("lintaid status --json", cli_status)
    report("lintaid stop", cli_stop)


if __name__ == "__main__":
    main()
