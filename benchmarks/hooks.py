"""Hook shim latency and capture throughput, measured side by side in one run.

Prints, for a throwaway project with a real daemon:
  * the floor: a bare interpreter, ``python -I -S -c pass`` (nothing can start faster);
  * the hook exactly as ``lintaid install`` registers it (the launcher in lintaid's data
    folder), run through ``sh -c`` as the agent runs it: UserPromptSubmit (search, inject,
    record the prompt) and Stop (capture), daemon up; and Stop with the daemon down (the
    spool path); beside it, interleaved, the shim run by its path inside the package (what
    ``install`` registered before the launcher), so the launcher's cost is one ratio;
  * each as median and p99, with the ratio of medians to the floor and the p99 ratio;
  * the CLI's warm path (``lintaid status``, ``search``, ``add`` with the daemon running);
  * captures per second: 50 concurrent shims, and the daemon alone with 500 events in flight;
  * the hook with a ~2 MB prompt and a ping sent right after it, the hook against a daemon that
    does not answer (SIGSTOP: the budget path), and the hook that finds no daemon and starts
    one (auto-start). Tests check these paths' behaviour; their times are printed here;
  * the injection ledger's own cost on the hook path (``lintaid.ledger``): finding an
    injection's markers, adding its row and judging it at the next capture, each timed on a
    real store inside an open transaction (where the hook's own records are written, so no
    commit of its own), as a share of the UserPromptSubmit hook's median.
Runs are interleaved (floor, hook, floor, hook, ...) so machine noise hits both alike.

    python benchmarks/hooks.py [--runs 60]
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import zmq

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from lintaid.cli import _commands  # noqa: E402
from lintaid_client import connection, paths, protocol, spool  # noqa: E402
from tests.transcripts import realistic_turns, stop_payload, write_transcript  # noqa: E402


def timed(cmd: list[str], stdin: str, env: dict[str, str]) -> float:
    started = time.perf_counter()
    proc = subprocess.run(cmd, input=stdin, capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"{cmd} failed: {proc.stderr}")
    return elapsed


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def summary(name: str, values: list[float], floor: list[float] | None = None) -> str:
    med = statistics.median(values)
    text = f"{name:<36} median {med * 1000:7.1f} ms   p99 {pct(values, 0.99) * 1000:7.1f} ms"
    if floor:
        text += (f"   {med / statistics.median(floor):4.2f}x median, "
                 f"{pct(values, 0.99) / pct(floor, 0.99):4.2f}x p99")
    return text


def ledger_cost(tmp: Path, runs: int) -> dict[str, float]:
    """Median seconds of each ledger step on the hook path, on a real store."""
    from lintaid import ledger
    from lintaid.capture.record import turn_record
    from lintaid.integrations import injection
    from lintaid.retrieval.markers import markers
    from lintaid.store.memory import MemoryStore
    from lintaid_client.models import Hit, Passage

    root = tmp / "ledger"
    root.mkdir()
    store = MemoryStore(root)
    content = ("Request: How is the gateway retry policy configured?\nResult: `RetryPolicy` "
               "in gateway/retry.py reads max_retries (3) and backoff_ms (250 ms) from "
               "config/gateway.toml. The tests in tests/test_retry.py cover it.")
    hit = Hit(id="m" + "0" * 23, content=content, created_at=time.time(), client="claude-code",
              passages=[Passage(content.index("`Retry"), len(content), 0.5, {"retri": 0.5})])
    where = injection.Where("main", None, None)
    steps: dict[str, list[float]] = {"markers": [], "add": [], "judge": []}
    try:
        block = injection.recall([hit], where=where)
        assert block is not None
        shown = "\n".join(line for line in block.text.splitlines() if line.startswith("  "))
        for i in range(runs):
            # What the ledger adds to rendering: the markers of what was shown, the entry.
            started = time.perf_counter()
            markers(shown)
            entry = ledger.entry("claude-code", f"s{i}", "UserPromptSubmit", ledger.PROMPT,
                                 block, "How is the gateway retry policy configured?")
            steps["markers"].append(time.perf_counter() - started)
            rec = turn_record(client="claude-code", session_id=f"s{i}", event="Stop",
                              turn_id=f"t{i}", request="q", result="RetryPolicy now reads "
                              "backoff_ms from config/gateway.toml.", paths=[], tools=[],
                              cwd=None, branch=None, revision=None, metadata={})
            assert rec is not None
            with store.transaction():
                started = time.perf_counter()
                ledger.note(store.ledger, entry)
                steps["add"].append(time.perf_counter() - started)
                started = time.perf_counter()
                ledger.judge(store.ledger, rec)
                steps["judge"].append(time.perf_counter() - started)
    finally:
        store.close()
    return {name: statistics.median(values) for name, values in steps.items()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=60)
    opts = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="lintaid-bench-"))
    root = tmp / "proj"
    root.mkdir()
    paths.ensure_state_dir(root)
    env = {**os.environ, "LINTAID_NO_WATCH": "1", "LINTAID_PROJECT": str(root)}
    bare_env = {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/"),
                "LINTAID_PROJECT": str(root)}
    registered = shlex.join([*_commands().hook, "claude-code"])

    import lintaid_client

    direct = shlex.join([sys.executable, "-I", "-S",
                         str(Path(lintaid_client.__file__).resolve().parent / "hook.py"),
                         "claude-code"])

    def hook(event: str, command: str = registered) -> list[str]:
        return ["sh", "-c", f"{command} {event}"]

    floor_cmd = [sys.executable, "-I", "-S", "-c", "pass"]
    lintaid = [sys.executable, "-m", "lintaid"]

    subprocess.run([sys.executable, "-m", "lintaid", "start", "--project", str(root)],
                   check=True, env=env, capture_output=True)
    transcript = write_transcript(tmp / "t.jsonl", realistic_turns(str(root)), cwd=str(root))
    for i in range(200):  # something to search through
        connection.Connection(root).call("add", {
            "content": f"Decision {i}: the gateway retry policy uses backoff step {i} ms."})

    floor, prompt, stop_hook, prompt_direct, stop_direct = [], [], [], [], []
    for i in range(opts.runs):
        floor.append(timed(floor_cmd, "", env))
        payload = {"session_id": f"s{i}", "cwd": str(root), "hook_event_name": "UserPromptSubmit",
                   "prompt": f"How is the gateway retry policy configured? ({i})"}
        prompt.append(timed(hook("UserPromptSubmit"), json.dumps(payload), bare_env))
        prompt_direct.append(timed(hook("UserPromptSubmit", direct),
                                   json.dumps({**payload, "session_id": f"p{i}"}), bare_env))
        payload = stop_payload(transcript, session_id=f"s{i}", cwd=str(root))
        stop_hook.append(timed(hook("Stop"), json.dumps(payload), bare_env))
        payload = stop_payload(transcript, session_id=f"q{i}", cwd=str(root))
        stop_direct.append(timed(hook("Stop", direct), json.dumps(payload), bare_env))

    # A 1 MB pasted prompt, then a normal one right after it: both must stay in budget.
    big_text = "How is the gateway retry policy configured? " + " ".join(
        f"w{(i * 7919) % 5003}" for i in range(170_000))
    big_prompt, after_big = [], []
    for i in range(max(5, opts.runs // 4)):
        payload = {"session_id": f"b{i}", "cwd": str(root), "hook_event_name": "UserPromptSubmit",
                   "prompt": big_text[:1_000_000]}
        big_prompt.append(timed(hook("UserPromptSubmit"), json.dumps(payload), bare_env))
        payload = {**payload, "session_id": f"a{i}", "prompt": "gateway retry policy?"}
        after_big.append(timed(hook("UserPromptSubmit"), json.dumps(payload), bare_env))

    cli: dict[str, list[float]] = {"status": [], "search": [], "add": []}
    for i in range(max(5, opts.runs // 4)):
        cli["status"].append(timed([*lintaid, "status"], "", env))
        cli["search"].append(timed([*lintaid, "search", "gateway retry policy"], "", env))
        cli["add"].append(timed([*lintaid, "add", f"Bench note {i} for the CLI."], "", env))

    # 50 concurrent shims, each a distinct capture: time until all 50 are committed.
    before = connection.Connection(root).call("status")["memory"]["records"]
    started = time.perf_counter()
    procs = []
    for i in range(50):
        t = write_transcript(tmp / f"c{i}.jsonl", [("user", f"Task {i}: tidy module {i}"),
                                                   ("assistant", f"Tidied module {i}.")],
                             session_id=f"c{i}", cwd=str(root))
        proc = subprocess.Popen(hook("Stop"), stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                text=True, env={**bare_env, "LINTAID_HOOK_TIMEOUT_MS": "10000"})
        proc.stdin.write(json.dumps(stop_payload(t, session_id=f"c{i}", cwd=str(root))))
        proc.stdin.close()
        procs.append(proc)
    for proc in procs:
        proc.wait()
    while connection.Connection(root).call("status")["memory"]["records"] < before + 50:
        time.sleep(0.01)
    burst = time.perf_counter() - started

    # The daemon's side alone: 500 Stop events in flight from 50 sockets, no process spawns.
    ctx = zmq.Context()
    socks = []
    for _ in range(50):
        sock = ctx.socket(zmq.DEALER)
        sock.setsockopt(zmq.LINGER, 0)
        sock.connect(paths.endpoint(root))
        socks.append(sock)
    events = []
    for i in range(500):
        t = write_transcript(tmp / f"e{i}.jsonl", [("user", f"Job {i}: audit service {i}"),
                                                   ("assistant", f"Audited service {i}.")],
                             session_id=f"e{i}", cwd=str(root))
        events.append(stop_payload(t, session_id=f"e{i}", cwd=str(root)))
    started = time.perf_counter()
    for i, payload in enumerate(events):
        socks[i % 50].send(protocol.pack(protocol.request(
            "hook", {"provider": "claude-code", "event": "Stop", "payload": payload})))
    for i in range(500):
        sock = socks[i % 50]
        assert sock.poll(30_000)
        assert protocol.unpack(sock.recv())["ok"]
    in_daemon = time.perf_counter() - started
    for sock in socks:
        sock.close(0)
    ctx.term()

    # A ~2 MB prompt (the daemon keeps only its first distinct terms), then a ping at once.
    huge = " ".join(f"w{i % 40_000} gateway retry" for i in range(120_000))
    huge_hook, huge_ping = [], []
    for i in range(max(3, opts.runs // 10)):
        payload = {"session_id": f"h{i}", "cwd": str(root),
                   "hook_event_name": "UserPromptSubmit", "prompt": f"{huge} {i}"}
        huge_hook.append(timed(hook("UserPromptSubmit"), json.dumps(payload), bare_env))
        started = time.perf_counter()
        assert connection.ping(root, timeout=5.0) is not None
        huge_ping.append(time.perf_counter() - started)

    # A daemon that does not answer (stopped): the shim must answer itself within its budget.
    pid = int(connection.read_status(root)["pid"])
    os.kill(pid, signal.SIGSTOP)
    stalled = []
    try:
        for i in range(max(3, opts.runs // 10)):
            payload = stop_payload(transcript, session_id=f"x{i}", cwd=str(root))
            stalled.append(timed(hook("Stop"), json.dumps(payload),
                                 {**bare_env, "LINTAID_NO_AUTOSTART": "1"}))
    finally:
        os.kill(pid, signal.SIGCONT)
    time.sleep(1.0)  # the stalled hooks' detached children write the spool; then it drains
    deadline = time.monotonic() + 30
    while spool.pending(root) and time.monotonic() < deadline:
        time.sleep(0.05)

    subprocess.run([sys.executable, "-m", "lintaid", "stop", "--project", str(root)],
                   check=True, env=env, capture_output=True)

    # No daemon at all: the shim answers, then spools and starts one, detached.
    autostart = []
    for i in range(3):
        payload = stop_payload(transcript, session_id=f"a{i}", cwd=str(root))
        autostart.append(timed(hook("Stop"), json.dumps(payload), bare_env))
        while connection.ping(root, timeout=0.5) is None:
            time.sleep(0.01)
        while spool.pending(root):
            time.sleep(0.01)
        subprocess.run([sys.executable, "-m", "lintaid", "stop", "--project", str(root)],
                       check=True, env=env, capture_output=True)
    down_env = {**bare_env, "LINTAID_NO_AUTOSTART": "1"}
    floor_down, spooled = [], []
    for i in range(opts.runs):
        floor_down.append(timed(floor_cmd, "", env))
        payload = stop_payload(transcript, session_id=f"d{i}", cwd=str(root))
        spooled.append(timed(hook("Stop"), json.dumps(payload), down_env))
    deadline = time.monotonic() + 30  # the spool files are written by detached children
    while len(spool.pending(root)) < opts.runs and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(spool.pending(root)) == opts.runs

    print(f"lintaid hook benchmark, {opts.runs} runs each, interleaved; {os.cpu_count()} cores")
    print(f"hook command: {registered} EVENT  (through sh -c, PATH=/usr/bin:/bin)")
    print(summary("floor: python -I -S -c pass", floor))
    print(summary("hook UserPromptSubmit, daemon up", prompt, floor))
    print(summary("hook Stop capture, daemon up", stop_hook, floor))
    print(summary("  the shim by its path: UserPromptSubmit", prompt_direct, floor))
    print(summary("  the shim by its path: Stop", stop_direct, floor))
    print(f"{'  launcher / path (medians)':<36} UserPromptSubmit "
          f"{statistics.median(prompt) / statistics.median(prompt_direct):4.2f}x, "
          f"Stop {statistics.median(stop_hook) / statistics.median(stop_direct):4.2f}x")
    print(summary("hook UserPromptSubmit, 1 MB prompt", big_prompt, floor))
    print(summary("hook UserPromptSubmit after it", after_big, floor))
    print(summary("floor (second series)", floor_down))
    print(summary("hook Stop, daemon down (spool)", spooled, floor_down))
    print(summary("hook UserPromptSubmit, 2 MB prompt", huge_hook, floor))
    print(summary("ping right after a 2 MB prompt", huge_ping))
    print(summary("hook Stop, daemon SIGSTOPped", stalled, floor))
    print(summary("hook Stop, no daemon: auto-start", autostart, floor))
    for name, values in cli.items():
        print(summary(f"lintaid {name} (CLI, daemon up)", values, floor))
    cost = ledger_cost(tmp, max(50, opts.runs))
    total = sum(cost.values())
    print(f"{'ledger on the hook path':<36} {total * 1e6:7.0f} us   (markers "
          f"{cost['markers'] * 1e6:.0f} us, add {cost['add'] * 1e6:.0f} us, judge at the next "
          f"capture {cost['judge'] * 1e6:.0f} us) = "
          f"{100 * total / statistics.median(prompt):.2f}% of the UserPromptSubmit hook's median")
    print(f"{'50 concurrent Stop shims':<34} {50 / burst:7.1f} captures/s  ({burst:.2f} s, "
          "mostly starting 50 Python processes on this machine)")
    print(f"{'daemon alone, 500 Stop events':<34} {500 / in_daemon:7.1f} captures/s  "
          f"(50 sockets in flight, {in_daemon:.2f} s)")


if __name__ == "__main__":
    main()
