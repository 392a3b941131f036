"""Hook shim latency and capture throughput, measured side by side in one run.

Prints, for a throwaway project with a real daemon:
  * the floor: a minimal Python script that imports pyzmq and msgpack and makes one round trip
    to a trivial ROUTER (the least any ZeroMQ hook written in Python can cost);
  * lintaid-hook with the daemon up (UserPromptSubmit: search + prompt write; Stop: capture),
    as median, p99 and the ratio of medians to the floor;
  * lintaid-hook with the daemon down (the spool path);
  * captures per second with 50 concurrent shims.
Runs are interleaved (floor, hook, floor, hook, ...) so machine noise hits both alike.

    python benchmarks/hooks.py [--runs 60]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import zmq

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from lintaid_client import connection, paths, protocol, spool  # noqa: E402
from tests.transcripts import realistic_turns, stop_payload, write_transcript  # noqa: E402

FLOOR_SCRIPT = """
import sys, zmq, msgpack
ctx = zmq.Context()
s = ctx.socket(zmq.DEALER)
s.setsockopt(zmq.LINGER, 0)
s.connect(sys.argv[1])
s.send(msgpack.packb({"v": 1, "id": "x", "op": "ping", "args": {}}))
if s.poll(2000):
    msgpack.unpackb(s.recv())
print("{}")
"""


def trivial_router(endpoint: str, stop: threading.Event) -> None:
    ctx = zmq.Context()
    sock = ctx.socket(zmq.ROUTER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.bind(endpoint)
    while not stop.is_set():
        if sock.poll(100):
            ident, body = sock.recv_multipart()
            msg = protocol.unpack(body)
            sock.send_multipart([ident, protocol.pack(protocol.ok_reply(msg["id"], {}))])
    sock.close()
    ctx.term()


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


def summary(name: str, values: list[float], floor: float | None = None) -> str:
    med = statistics.median(values)
    text = f"{name:<34} median {med * 1000:7.1f} ms   p99 {pct(values, 0.99) * 1000:7.1f} ms"
    if floor:
        text += f"   ratio to floor {med / floor:5.2f}x"
    return text


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=60)
    opts = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="lintaid-bench-"))
    root = tmp / "proj"
    root.mkdir()
    paths.ensure_state_dir(root)
    env = {**os.environ, "LINTAID_NO_WATCH": "1", "LINTAID_PROJECT": str(root)}
    hook = [sys.executable, "-m", "lintaid_client.hook", "claude-code"]

    floor_endpoint = f"ipc://{tmp}/floor.sock"
    stop = threading.Event()
    router = threading.Thread(target=trivial_router, args=(floor_endpoint, stop), daemon=True)
    router.start()
    floor_cmd = [sys.executable, "-c", FLOOR_SCRIPT, floor_endpoint]

    subprocess.run([sys.executable, "-m", "lintaid", "start", "--project", str(root)],
                   check=True, env=env, capture_output=True)
    transcript = write_transcript(tmp / "t.jsonl", realistic_turns(str(root)), cwd=str(root))
    for i in range(200):  # something to search through
        connection.Connection(root).call("add", {
            "content": f"Decision {i}: the gateway retry policy uses backoff step {i} ms."})

    floor, prompt, stop_hook = [], [], []
    for i in range(opts.runs):
        floor.append(timed(floor_cmd, "", env))
        payload = {"session_id": f"s{i}", "cwd": str(root), "hook_event_name": "UserPromptSubmit",
                   "prompt": f"How is the gateway retry policy configured? ({i})"}
        prompt.append(timed([*hook, "UserPromptSubmit"], json.dumps(payload), env))
        payload = stop_payload(transcript, session_id=f"s{i}", cwd=str(root))
        stop_hook.append(timed([*hook, "Stop"], json.dumps(payload), env))

    # 50 concurrent shims, each a distinct capture: time until all 50 are committed.
    before = connection.Connection(root).call("status")["memory"]["records"]
    started = time.perf_counter()
    procs = []
    for i in range(50):
        t = write_transcript(tmp / f"c{i}.jsonl", [("user", f"Task {i}: tidy module {i}"),
                                                   ("assistant", f"Tidied module {i}.")],
                             session_id=f"c{i}", cwd=str(root))
        proc = subprocess.Popen([*hook, "Stop"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                text=True, env={**env, "LINTAID_HOOK_TIMEOUT_MS": "10000"})
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

    subprocess.run([sys.executable, "-m", "lintaid", "stop", "--project", str(root)],
                   check=True, env=env, capture_output=True)
    down_env = {**env, "LINTAID_NO_AUTOSTART": "1"}
    floor_down, spooled = [], []
    for i in range(opts.runs):
        floor_down.append(timed(floor_cmd, "", env))
        payload = stop_payload(transcript, session_id=f"d{i}", cwd=str(root))
        spooled.append(timed([*hook, "Stop"], json.dumps(payload), down_env))
    stop.set()
    assert len(spool.pending(root)) == opts.runs

    base = statistics.median(floor)
    print(f"lintaid hook benchmark, {opts.runs} runs each, interleaved; {os.cpu_count()} cores")
    print(summary("floor (pyzmq+msgpack round trip)", floor))
    print(summary("hook UserPromptSubmit, daemon up", prompt, base))
    print(summary("hook Stop capture, daemon up", stop_hook, base))
    print(summary("floor (second series)", floor_down))
    print(summary("hook Stop, daemon down (spool)", spooled, statistics.median(floor_down)))
    print(f"{'50 concurrent Stop shims':<34} {50 / burst:7.1f} captures/s  ({burst:.2f} s, "
          "mostly starting 50 Python processes on this machine)")
    print(f"{'daemon alone, 500 Stop events':<34} {500 / in_daemon:7.1f} captures/s  "
          f"(50 sockets in flight, {in_daemon:.2f} s)")


if __name__ == "__main__":
    main()
