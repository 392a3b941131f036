"""Workspace indexing figures on a generated tree of small files.

    python benchmarks/workspace.py                    # 10,000 files in a git work tree
    python benchmarks/workspace.py --files 2000 --no-git --polling

Drives ``Workspace`` in-process with a real Writer over a real MemoryStore (what the daemon
runs), real watchdog, SQLite and Tantivy. Prints:

- initial index: start to ready (first reconcile done and the index committed);
- restart with no changes: the same, against the stored fingerprints;
- full policy re-derivation over every file (what the incremental update avoids);
- edit-to-searchable latency over N edits (p50, p95): write a fresh word into a file, then
  poll the search until the file comes back for that word;
- idle CPU: process CPU time over ~5 s with nothing happening, as a share of one core.

Figures only: no assertion on timing.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "client")]

from lintaid.derivation import rebuild_workspace  # noqa: E402
from lintaid.store.memory import MemoryStore  # noqa: E402
from lintaid.workspace.service import Workspace  # noqa: E402
from lintaid.writer import Writer  # noqa: E402
from lintaid_client import paths  # noqa: E402

TOPICS = ["billing", "deploy", "gateway", "retry", "postgres", "redis", "queue", "auth", "cache",
          "search", "ledger", "timeout", "helm", "kafka", "staging", "backup", "schema", "index"]
SETTINGS = ["retry attempts", "timeout seconds", "pool size", "batch size", "max connections"]


def generate(root: Path, count: int, seed: int = 11) -> list[Path]:
    """``count`` small .py/.md/.txt files in nested folders (about 20 files per folder)."""
    rnd = random.Random(seed)
    files: list[Path] = []
    for i in range(count):
        folder = root / f"pkg{i % 25}" / f"mod{(i // 25) % 20}"
        kind = i % 3
        topic = rnd.choice(TOPICS)
        if kind == 0:
            path = folder / f"{topic}_{i}.py"
            body = "\n\n".join(
                f"def {topic}_{i}_{j}(value):\n    \"\"\"Handle {topic} step {j}.\"\"\"\n"
                f"    return value * {j}\n" for j in range(rnd.randint(2, 6))
            )
            text = f"import os\n\n{body}\n"
        elif kind == 1:
            path = folder / f"{topic}-{i}.md"
            setting = rnd.choice(SETTINGS)
            text = (f"# {topic.title()} {i % 40}\n\nNotes about {topic} for module {i}.\n\n"
                    f"## {topic.title()} {setting}\n\n{topic.title()} {setting}: "
                    f"{rnd.randint(1, 9)}.\n")
        else:
            path = folder / f"{topic}_{i}.txt"
            text = "\n".join(f"{topic} line {j} of file {i}" for j in range(rnd.randint(3, 12)))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        files.append(path)
    # Older than the index, so no fingerprint is "racy" and a restart hashes nothing.
    past = time.time() - 3600
    for path in files:
        os.utime(path, (past, past))
    return files


class Harness:
    def __init__(self, root: Path) -> None:
        self.store = MemoryStore(root)
        self.writer = Writer(self.store)
        self.writer.start()
        self.ws = Workspace(root, submit=self.writer.submit)
        self.writer.add_flusher(self.ws.flush)

    def start_until_ready(self) -> float:
        started = time.perf_counter()
        self.ws.start()
        if not self.ws.ready.wait(600):
            raise SystemExit("workspace never became ready")
        self.writer.wait_visible(timeout=600)
        return time.perf_counter() - started

    def searchable(self, word: str, rel: str) -> bool:
        self.writer.wait_visible()
        hits, _ = self.ws.search_hits(word, 5, history=False)
        return any(h["path"] == rel for h in hits)

    def close(self) -> None:
        self.ws.stop()
        self.writer.stop()
        self.store.close()


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, round(pct / 100 * (len(ordered) - 1))))
    return ordered[k]


def cpu_seconds() -> float:
    """CPU time of the whole process (every thread), in seconds, at nanosecond resolution."""
    return time.process_time()


def main() -> None:
    import logging

    logging.getLogger("lintaid").setLevel(logging.WARNING)  # lintaid.logs: stdlib loggers
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--edits", type=int, default=50)
    parser.add_argument("--idle", type=float, default=5.0)
    parser.add_argument("--no-git", action="store_true", help="a plain folder, walked")
    parser.add_argument("--polling", action="store_true", help="LINTAID_WATCHER=polling")
    parser.add_argument("--keep", action="store_true", help="keep the temporary tree")
    args = parser.parse_args()
    if args.polling:
        os.environ["LINTAID_WATCHER"] = "polling"

    tmp = Path(tempfile.mkdtemp(prefix="lintaid-ws-bench-"))
    root = tmp / "proj"
    root.mkdir()
    try:
        t0 = time.perf_counter()
        files = generate(root, args.files)
        if not args.no_git:
            subprocess.run(["git", "init", "-q", str(root)], check=True)
        paths.ensure_state_dir(root)
        print(f"tree: {len(files)} files in {time.perf_counter() - t0:.1f}s "
              f"({'git work tree' if not args.no_git else 'plain folder'}), "
              f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs")

        run = Harness(root)
        initial = run.start_until_ready()
        status = run.ws.status()
        print(f"initial index to ready: {initial:.2f}s  "
              f"({status['files']} files, {status['chunks']} chunks, "
              f"{status['superseded']} superseded, {status['conflicted']} conflicted, "
              f"watcher {status['watcher_mode']})")
        run.close()

        run = Harness(root)
        restart = run.start_until_ready()
        rec = run.ws.status()["reindexed"]
        print(f"restart, no changes, to ready: {restart:.2f}s  (listed {rec['files_listed']}, "
              f"hashed {rec['hashed']}, re-indexed {rec['added'] + rec['changed']}, "
              f"removed {rec['removed']})")

        started = time.perf_counter()
        restated = run.writer.run(lambda: rebuild_workspace(run.ws.store), timeout=600)
        print(f"full policy re-derivation over all files: {time.perf_counter() - started:.3f}s "
              f"({len(restated)} states changed)")

        rnd = random.Random(5)
        latencies: list[float] = []
        for n in range(args.edits):
            path = rnd.choice(files)
            rel = path.relative_to(root).as_posix()
            word = f"zq{n}marker{rnd.randint(0, 10**6)}"
            with open(path, "a") as fh:
                fh.write(f"\n{word}\n")
            began = time.perf_counter()
            deadline = began + 30
            while not run.searchable(word, rel):
                if time.perf_counter() > deadline:
                    raise SystemExit(f"edit {n} to {rel} never became searchable")
                time.sleep(0.005)
            latencies.append(time.perf_counter() - began)
        ms = [x * 1000 for x in latencies]
        print(f"edit-to-searchable over {len(ms)} edits: p50 {percentile(ms, 50):.0f} ms, "
              f"p95 {percentile(ms, 95):.0f} ms, max {max(ms):.0f} ms, "
              f"mean {statistics.mean(ms):.0f} ms")

        # Let the last batch and its flush settle before measuring idle.
        time.sleep(2.0)
        batches = run.ws.watcher.batches
        wall0, cpu0 = time.perf_counter(), cpu_seconds()
        time.sleep(args.idle)
        wall, cpu = time.perf_counter() - wall0, cpu_seconds() - cpu0
        print(f"idle CPU over {wall:.1f}s: {cpu * 1000:.1f} ms CPU = {100 * cpu / wall:.3f}% "
              f"of one core (watcher {run.ws.status()['watcher_mode']}, "
              f"{run.ws.watcher.batches - batches} batches while idle)")
        run.close()
    finally:
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
