"""The team tier: replication lag, bulk push and pull, and hook latency while replicating.

Starts a throwaway PostgreSQL server (``tests/pgserver.py``: this machine's binaries, durable
settings unless ``--fast``), two clones of one repository, and a daemon process for each
(``lintaid start --foreground``), both joined to one team. Then prints:

  * replication lag: a note added on one daemon (from its acknowledgement) until the other
    daemon's ``get`` finds it, ``--lag-runs`` times each way: p50, p95, max;
  * bulk: ``--records`` notes added on Alice's daemon (``add_many``, 500 a call), and the time
    until her outbox is empty (pushed) and until Bob holds all of them (pulled);
  * catch-up: Bob's daemon stopped while Alice adds ``--records`` more, then started: the
    time until he holds them all, with hooks run on his project meanwhile (his pull alone,
    Alice idle);
  * hook latency: the UserPromptSubmit hook as ``lintaid install`` registers it, run on Bob's
    project while his daemon is idle, and again while it pulls the bulk: p50, p95, p99, each
    interleaved with a bare interpreter (the floor, which the load raises too).

    python benchmarks/team.py [--records 10000] [--lag-runs 50] [--hook-runs 30] [--fast]
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from lintaid.cli import _commands  # noqa: E402
from lintaid_client import Memory, connection, paths, protocol  # noqa: E402
from tests import pgserver  # noqa: E402


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def line(name: str, values: list[float]) -> str:
    return (f"{name:<44} p50 {statistics.median(values) * 1000:8.1f} ms   p95 "
            f"{pct(values, 0.95) * 1000:8.1f} ms   p99 {pct(values, 0.99) * 1000:8.1f} ms   "
            f"max {max(values) * 1000:8.1f} ms   (n={len(values)})")


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.email=b@example.com", "-c", "user.name=B", *args],
                   cwd=cwd, check=True, capture_output=True)


def holds(root: Path, record_id: str) -> bool:
    with connection.Connection(root) as conn:
        try:
            conn.call("get", {"id": record_id}, timeout=10)
            return True
        except protocol.NotFound:
            return False


def status(root: Path) -> dict[str, Any]:
    with connection.Connection(root) as conn:
        data: dict[str, Any] = conn.call("status", timeout=10)
        return data


def wait(predicate: Any, timeout: float, interval: float = 0.005) -> float:
    """Seconds until ``predicate()`` holds (SystemExit past ``timeout``)."""
    started = time.perf_counter()
    while not predicate():
        if time.perf_counter() - started > timeout:
            raise SystemExit(f"not reached within {timeout}s")
        time.sleep(interval)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--lag-runs", type=int, default=50)
    parser.add_argument("--hook-runs", type=int, default=30)
    parser.add_argument("--fast", action="store_true",
                        help="the server without fsync (as the tests run it)")
    opts = parser.parse_args()

    server = pgserver.start_server(fast=opts.fast)
    if isinstance(server, str):
        raise SystemExit(server)
    tmp = Path(tempfile.mkdtemp(prefix="lintaid-team-bench-"))
    procs: list[subprocess.Popen[bytes]] = []
    try:
        origin = tmp / "origin"
        origin.mkdir()
        git(origin, "init", "-q", "-b", "main")
        (origin / "README.md").write_text("# bench\n")
        git(origin, "add", "README.md")
        git(origin, "commit", "-q", "-m", "first")
        alice, bob = tmp / "alice", tmp / "bob"
        for root in (alice, bob):
            git(tmp, "clone", "-q", str(origin), str(root))
            paths.ensure_state_dir(root)
        env = {**os.environ, "LINTAID_NO_WATCH": "1", "PGPASSFILE": str(tmp / "pgpass"),
               "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring",
               "XDG_RUNTIME_DIR": str(tmp / "run")}
        (tmp / "run").mkdir(mode=0o700)
        os.environ["XDG_RUNTIME_DIR"] = env["XDG_RUNTIME_DIR"]
        for root in (alice, bob):
            procs.append(subprocess.Popen(
                [sys.executable, "-m", "lintaid", "start", "--foreground", "--project",
                 str(root)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        for root in (alice, bob):
            wait(lambda r=root: connection.ping(r, timeout=0.5) is not None, 60, 0.05)
        database = server.create_database()
        for root, member in ((alice, "alice"), (bob, "bob")):  # each as a role of its own
            invite = subprocess.run([sys.executable, "-m", "lintaid", "team", "add-member",
                                     member, "--dsn", server.dsn(database), "--json",
                                     "--project", str(root)],
                                    env=env, check=True, capture_output=True, text=True)
            subprocess.run([sys.executable, "-m", "lintaid", "team", "join",
                            json.loads(invite.stdout)["dsn"], "--project", str(root)],
                           env=env, check=True, capture_output=True)
        a, b = Memory(alice, autostart=False), Memory(bob, autostart=False)
        print(f"PostgreSQL {server.port} ({'fsync off' if opts.fast else 'durable'}); "
              f"daemons {alice.name} and {bob.name}")

        # -- replication lag -------------------------------------------------------------
        lags = {"alice -> bob": [], "bob -> alice": []}
        for i in range(opts.lag_runs):
            for (name, src, dst) in (("alice -> bob", a, bob), ("bob -> alice", b, alice)):
                rid = src.add(f"Lag probe {name} {i}: the cache TTL is {i} seconds.")[
                    "results"][0]["id"]
                lags[name].append(wait(lambda r=rid, d=dst: holds(d, r), 30))
        for name, values in lags.items():
            print(line(f"replication lag {name}", values))
        print(line("replication lag, both ways", lags["alice -> bob"] + lags["bob -> alice"]))

        # -- hook latency on Bob's project, idle ------------------------------------------
        hook = ["sh", "-c", shlex.join([*_commands().hook, "claude-code"]) + " UserPromptSubmit"]
        bare_env = {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/"),
                    "XDG_RUNTIME_DIR": env["XDG_RUNTIME_DIR"]}

        def run_hook(i: int) -> float:
            payload = {"session_id": f"h{i}", "cwd": str(bob),
                       "hook_event_name": "UserPromptSubmit",
                       "prompt": f"What is the cache TTL? ({i})"}
            started = time.perf_counter()
            subprocess.run(hook, input=json.dumps(payload), capture_output=True, text=True,
                           env=bare_env, check=True)
            return time.perf_counter() - started

        def run_floor() -> float:
            started = time.perf_counter()
            subprocess.run([sys.executable, "-I", "-S", "-c", "pass"], check=True)
            return time.perf_counter() - started

        idle, idle_floor = [], []
        for i in range(opts.hook_runs):  # interleaved: machine noise hits both alike
            idle_floor.append(run_floor())
            idle.append(run_hook(i))

        # -- bulk, with hooks running on the pulling side meanwhile ------------------------
        before = status(bob)["memory"]["records"]
        done: dict[str, float] = {}

        def bulk() -> None:
            started = time.perf_counter()
            for start in range(0, opts.records, 500):
                a.add_many([f"Bulk {n}: service {n} listens on port {10000 + n}."
                            for n in range(start, min(opts.records, start + 500))])
            done["added"] = time.perf_counter() - started
            wait(lambda: (status(alice).get("team") or {}).get("push", {}).get("pending") == 0,
                 600, 0.02)
            done["pushed"] = time.perf_counter() - started

        started = time.perf_counter()
        writer = threading.Thread(target=bulk)
        writer.start()
        busy: list[float] = []
        busy_floor: list[float] = []
        i = opts.hook_runs
        while status(bob)["memory"]["records"] < before + opts.records:
            busy_floor.append(run_floor())
            busy.append(run_hook(i))
            i += 1
            if time.perf_counter() - started > 600:
                raise SystemExit("bulk not pulled within 600 s")
        pulled = time.perf_counter() - started
        writer.join()
        print(f"bulk: {opts.records} records added on alice in {done['added']:.1f} s; "
              f"pushed (outbox empty) by {done['pushed']:.1f} s; "
              f"all pulled by bob {pulled:.1f} s after the first add")
        print(line("floor (python -I -S -c pass), idle", idle_floor))
        print(line("hook UserPromptSubmit on bob, idle", idle))
        print(line("floor, while replicating", busy_floor))
        print(line("hook UserPromptSubmit on bob, while pulling", busy))
        print(f"hook over floor (medians): idle {statistics.median(idle) / statistics.median(idle_floor):.2f}x, "
              f"while replicating {statistics.median(busy) / statistics.median(busy_floor):.2f}x")
        # -- catch-up: Bob's daemon away while Alice adds as many again -----------------------
        procs[1].terminate()
        procs[1].wait(60)
        for start in range(0, opts.records, 500):
            a.add_many([f"Catch-up {n}: worker {n} drains queue {n % 17}."
                        for n in range(start, min(opts.records, start + 500))])
        wait(lambda: (status(alice).get("team") or {}).get("push", {}).get("pending") == 0,
             600, 0.02)
        started = time.perf_counter()
        procs[1] = subprocess.Popen(
            [sys.executable, "-m", "lintaid", "start", "--foreground", "--project", str(bob)],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait(lambda: connection.ping(bob, timeout=0.5) is not None, 60, 0.05)
        back = time.perf_counter() - started
        catching, catching_floor = [], []
        target = 2 * opts.records + 2 * opts.lag_runs
        while status(bob)["memory"]["records"] < target:
            catching_floor.append(run_floor())
            catching.append(run_hook(i))
            i += 1
        caught = time.perf_counter() - started
        print(f"catch-up: bob back up in {back:.1f} s, then {opts.records} missed records "
              f"pulled by {caught:.1f} s after his start")
        print(line("floor, while bob catches up alone", catching_floor))
        print(line("hook UserPromptSubmit on bob, catching up", catching))
        print(f"hook over floor (medians), catching up: "
              f"{statistics.median(catching) / statistics.median(catching_floor):.2f}x")
        team = status(bob)["team"]
        print(f"bob: pulled {team['pull']['pulled']}, behind {team['pull']['behind']}, "
              f"RSS {status(bob)['rss_bytes'] / 2**20:.0f} MiB")
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                proc.kill()
        server.destroy()


if __name__ == "__main__":
    main()
