"""SessionStart's cost as the store grows: the code the hook runs, and the hook itself.

Builds a store per size the fast way: one writer job (one transaction, derivation once over
the whole batch, no per-record acknowledgement) of turns as the hooks record them, each a
prompt and a captured turn that decides a subject again ("From now on we use X for Y.", each
subject about ten times over the store, so most decisions are superseded), spread over 400
days, so that many are old enough to need verifying. Then, per size:

  * in process: ``HookDispatcher.handle("claude-code", "SessionStart", ...)``, the daemon's
    own answer to the hook (settle, the previous session, ``Reader.project_state``,
    ``needs_verifying`` with its ``verify_candidates`` query, hydration, rendering), and each
    of its reads alone;
  * through a process (unless ``--no-hook``): a daemon started on the store, the SessionStart
    hook exactly as ``lintaid install`` registers it, run through ``sh -c``, interleaved with
    the floor (``python -I -S -c pass``): medians, p99 and the ratio to the floor. Each hook
    writes its injection's ledger row; ``--gap`` spaces the runs so that the daemon has judged
    the next brief before it (``lintaid.warm``), as between two sessions.

Prints figures; no assertions. ``--keep DIR`` keeps (and reuses) the built stores there.

    python benchmarks/session_start.py [--sizes 1000,10000,100000] [--runs 20] [--keep DIR]
                                       [--gap SECONDS]
    python benchmarks/session_start.py --smoke
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "client")]

from lintaid.capture.record import NewRecord, prompt_record, turn_record  # noqa: E402
from lintaid.hooks import HookDispatcher  # noqa: E402
from lintaid.integrations import injection  # noqa: E402
from lintaid.search import Reader, StateRequest  # noqa: E402
from lintaid.store.memory import MemoryStore  # noqa: E402
from lintaid.writer import Writer  # noqa: E402
from lintaid_client import paths  # noqa: E402

TOOLS = ["redis", "memcached", "kafka", "rabbitmq", "postgres", "mysql", "uv", "poetry",
         "httpx", "requests"]
DAY = 86_400.0
SPAN_DAYS = 400.0  # the records are spread over the last 400 days


def records(i: int, size: int, now: float, rnd: random.Random) -> list[NewRecord]:
    """Turn ``i``'s prompt and captured turn, as the hooks build them: the turn decides a
    subject again ("From now on we use X for Y."), about ten times over the store each."""
    subject = f"service{rnd.randrange(max(10, size // 20))}"
    at = now - SPAN_DAYS * DAY * (1 - i / size)
    where = {"client": "claude-code", "session_id": f"s{i // 10}", "event": "Stop",
             "cwd": None, "branch": "main", "revision": None, "metadata": {}, "created_at": at}
    prompt = prompt_record(prompt=f"How should {subject} be set up? ({i})",
                           **{**where, "event": "UserPromptSubmit"})
    turn = turn_record(turn_id=f"t{i}", request=f"How should {subject} be set up? ({i})",
                       result=f"Done. From now on we use {rnd.choice(TOOLS)} for {subject}.",
                       paths=[], tools=[], **where)
    assert prompt is not None and turn is not None
    return [prompt, turn]


def build(root: Path, size: int) -> float:
    """Seconds to build a ``size``-record store at ``root`` (none if it is there already)."""
    if (root / "built").exists():
        return 0.0
    paths.ensure_state_dir(root)
    store = MemoryStore(root)
    writer = Writer(store, max_batch=1)
    writer.start()
    rnd = random.Random(1)
    now = time.time()
    batch = [rec for i in range(size // 2) for rec in records(2 * i, size, now, rnd)]
    started = time.monotonic()
    writer.run(lambda: [store.put(r, "bench") for r in batch], timeout=None)
    store.index_now()
    took = time.monotonic() - started
    writer.stop()
    store.close()
    (root / "built").write_text(str(size))
    return took


def timed(fn: Callable[[], Any], runs: int) -> tuple[float, float]:
    """Median and worst milliseconds of ``fn`` over ``runs`` calls (after one warm-up)."""
    fn()
    took = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        took.append((time.perf_counter() - t0) * 1000)
    return statistics.median(took), max(took)


def in_process(root: Path, runs: int) -> dict[str, Any]:
    store = MemoryStore(root)
    writer = Writer(store)
    writer.start()
    try:
        reader = Reader(memory=store, wait_visible=writer.wait_visible)
        hooks = HookDispatcher(root, reader, store, writer.submit)
        payload = {"session_id": "new", "cwd": str(root), "hook_event_name": "SessionStart",
                   "source": "startup"}
        text = ""

        def hook() -> None:
            nonlocal text
            text = hooks.handle("claude-code", "SessionStart", payload).result()["stdout"]

        since = reader.previous_session_start(None, "new", "claude-code")
        out = {"hook": timed(hook, runs),
               "previous session": timed(
                   lambda: reader.previous_session_start(None, "new", "claude-code"), runs),
               "project_state": timed(lambda: reader.project_state(StateRequest(
                   since=since, branch="main", session_id="new")), runs),
               "needs_verifying": timed(lambda: reader.needs_verifying(None, limit=5), runs),
               "render": timed(lambda: injection.render_state(
                   reader.project_state(StateRequest(since=since, branch="main",
                                                     session_id="new")),
                   where=injection.Where("main", None, None), source="startup"), runs)}
        out["bytes"] = len(text.encode())
        out["verify"] = len(reader.needs_verifying(None, limit=5))
        out["counts"] = store.counts()
        return out
    finally:
        writer.stop()
        store.close()


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def through_hook(root: Path, runs: int, gap: float = 0.0) -> dict[str, float]:
    """The registered SessionStart hook against a daemon on ``root``, beside the floor;
    ``gap`` seconds before each run (the writes before it settled, as between sessions)."""
    from lintaid.cli import _commands

    env = {**os.environ, "LINTAID_NO_WATCH": "1", "LINTAID_PROJECT": str(root)}
    bare = {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/"),
            "LINTAID_PROJECT": str(root)}
    hook = ["sh", "-c", shlex.join([*_commands().hook, "claude-code"]) + " SessionStart"]
    floor_cmd = [sys.executable, "-I", "-S", "-c", "pass"]
    subprocess.run([sys.executable, "-m", "lintaid", "start", "--project", str(root)],
                   check=True, env=env, capture_output=True)
    floor, took = [], []
    try:
        for i in range(runs + 1):
            payload = json.dumps({"session_id": f"n{i}", "cwd": str(root),
                                  "hook_event_name": "SessionStart", "source": "startup"})
            time.sleep(gap)
            t0 = time.perf_counter()
            subprocess.run(floor_cmd, capture_output=True, check=True)
            t1 = time.perf_counter()
            proc = subprocess.run(hook, input=payload, capture_output=True, text=True, env=bare)
            t2 = time.perf_counter()
            if proc.returncode != 0 or "lintaid" not in proc.stdout:
                raise SystemExit(f"the hook failed or injected nothing: {proc.stderr}")
            if i:  # the first run warms the daemon's caches
                floor.append(t1 - t0)
                took.append(t2 - t1)
    finally:
        subprocess.run([sys.executable, "-m", "lintaid", "stop", "--project", str(root)],
                       env=env, capture_output=True)
    med = statistics.median(took) / statistics.median(floor)
    return {"floor_ms": statistics.median(floor) * 1000, "hook_ms": statistics.median(took) * 1000,
            "p99_ms": pct(took, 0.99) * 1000, "ratio": med,
            "p99_ratio": pct(took, 0.99) / pct(floor, 0.99)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1000,10000,100000", help="store sizes, comma separated")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--keep", type=Path, help="build the stores here and reuse them")
    ap.add_argument("--no-hook", action="store_true", help="in process only")
    ap.add_argument("--gap", type=float, default=0.0,
                    help="seconds between hook runs: each SessionStart writes its ledger row, "
                    "and the daemon judges the next brief once writes settle (lintaid.warm)")
    ap.add_argument("--smoke", action="store_true", help="one small size, a few runs")
    args = ap.parse_args()
    if args.smoke:
        args.sizes, args.runs = "300", 3
    with tempfile.TemporaryDirectory(prefix="lintaid-session-start-") as tmp:
        base = args.keep or Path(tmp)
        for size in (int(s) for s in args.sizes.split(",")):
            root = base / f"store-{size}"
            root.mkdir(parents=True, exist_ok=True)
            built = build(root, size)
            r = in_process(root, args.runs)
            c = r["counts"]
            print(f"{size} records ({c['claims']} claims, {c['superseded']} superseded; built "
                  f"in {built:.1f} s), {r['bytes']} bytes injected, {r['verify']} to verify; "
                  f"in process, median / worst of {args.runs}:")
            for name in ("hook", "previous session", "project_state", "needs_verifying",
                         "render"):
                med, worst = r[name]
                print(f"  {name:<18} {med:8.2f} ms {worst:8.2f} ms")
            if not args.no_hook:
                h = through_hook(root, args.runs, args.gap)
                print(f"  SessionStart hook process{f' ({args.gap:g} s apart)' if args.gap else ''}:"
                      f" median {h['hook_ms']:.1f} ms, p99 "
                      f"{h['p99_ms']:.1f} ms; floor {h['floor_ms']:.1f} ms; "
                      f"{h['ratio']:.2f}x median, {h['p99_ratio']:.2f}x p99")
    return 0


if __name__ == "__main__":
    sys.exit(main())
