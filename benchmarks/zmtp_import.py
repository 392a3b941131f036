"""Start-up plus one round trip: the standard-library ZMTP client against pyzmq and a bare interpreter.

Each variant runs as its own subprocess, interleaved round by round (the order rotates), against
one trivial pyzmq ROUTER in this process that answers ``[application/json, {...}]``:

  * bare ``python -I -S -c pass``: the floor of any Python hook;
  * zmtp.py loaded alone under ``-I -S`` (the module's own cost);
  * zmtp.py through the ``lintaid_client`` package under ``-I -S`` (adds the package
    ``__init__``, which is what the hook shim pays if it imports the module that way);
  * a pyzmq DEALER with the virtual environment's site start-up, as a hook runs today.

Prints medians, p90 and the ratio of medians to the bare interpreter; asserts nothing.

    python benchmarks/zmtp_import.py [--runs 40]
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
from pathlib import Path

import zmq

CLIENT = Path(__file__).resolve().parent.parent / "client"
REQUEST = b'{"v":1,"id":"bench","op":"ping","args":{}}'
REPLY = b'{"v":1,"id":"bench","ok":true,"result":{}}'

ZMTP_CALL = (
    "r = zmtp.request(sys.argv[1], [b'application/json', {request!r}], timeout=2.0)\n"
    "assert r[0] == b'application/json', r\n"
)
VARIANTS = {
    "bare python -I -S -c pass": (["-I", "-S", "-c", "pass"], False),
    "zmtp.py alone, -I -S": ([
        "-I", "-S", "-c",
        f"import sys\nsys.path.insert(0, {str(CLIENT / 'lintaid_client')!r})\nimport zmtp\n"
        + ZMTP_CALL.format(request=REQUEST),
    ], True),
    "lintaid_client.zmtp, -I -S": ([
        "-I", "-S", "-c",
        f"import sys\nsys.path.insert(0, {str(CLIENT)!r})\nfrom lintaid_client import zmtp\n"
        + ZMTP_CALL.format(request=REQUEST),
    ], True),
    "pyzmq DEALER, venv site": ([
        "-c",
        "import sys, zmq\n"
        "s = zmq.Context().socket(zmq.DEALER)\n"
        "s.linger = 0\n"
        "s.connect(sys.argv[1])\n"
        f"s.send_multipart([b'application/json', {REQUEST!r}])\n"
        "assert s.poll(2000)\n"
        "assert s.recv_multipart()[0] == b'application/json'\n",
    ], True),
}


def router(endpoint: str, ready: threading.Event, stop: threading.Event) -> None:
    ctx = zmq.Context()
    sock = ctx.socket(zmq.ROUTER)
    sock.linger = 0
    sock.bind(endpoint)
    ready.set()
    while not stop.is_set():
        if sock.poll(100):
            ident, *_ = sock.recv_multipart()
            sock.send_multipart([ident, b"application/json", REPLY])
    sock.close()
    ctx.term()


def timed(args: list[str], endpoint: str) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, *args, endpoint], check=True, stdin=subprocess.DEVNULL)
    return time.perf_counter() - started


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=40)
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="zmtp-bench-") as folder:
        endpoint = f"ipc://{folder}/router.sock"
        ready, stop = threading.Event(), threading.Event()
        thread = threading.Thread(target=router, args=(endpoint, ready, stop), daemon=True)
        thread.start()
        ready.wait()
        names = list(VARIANTS)
        times: dict[str, list[float]] = {name: [] for name in names}
        for name in names:  # warm the page cache and the .pyc files once
            timed(VARIANTS[name][0], endpoint)
        for i in range(opts.runs):
            for name in names[i % len(names):] + names[:i % len(names)]:
                times[name].append(timed(VARIANTS[name][0], endpoint))
        stop.set()
        thread.join()
    base = statistics.median(times[names[0]])
    print(f"start-up + one round trip, {opts.runs} runs each, interleaved; "
          f"{os.cpu_count()} cores; {sys.version.split()[0]}")
    for name in names:
        med = statistics.median(times[name])
        print(f"{name:<30} median {med * 1000:6.1f} ms   p90 {pct(times[name], 0.9) * 1000:6.1f} ms"
              f"   {med / base:4.2f}x bare")


if __name__ == "__main__":
    main()
