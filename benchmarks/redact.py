"""Redaction's cost on large inputs of different shapes: milliseconds per input of ``--mb``
megabytes (prose, this repository's code, a base64 blob, dense secrets, secret words alone,
an unterminated private key, one long word, colon-separated values). Regex backtracking
would show here as a figure far above the others.

    python benchmarks/redact.py [--mb 2] [--runs 3]
"""

from __future__ import annotations

import argparse
import base64
import os
import statistics
import time
from pathlib import Path

from lintaid_client.redact import redact

REPO = Path(__file__).resolve().parent.parent
AWS_ID = "AKIA" + "IOSFODNN7EXAMPLE"
GHP = "ghp_" + "0123456789abcdefghijABCDEFGHIJ012345"


def inputs(size: int) -> dict[str, str]:
    def fill(unit: str) -> str:
        return (unit * (size // len(unit) + 1))[:size]

    code = "".join(p.read_text() for p in sorted((REPO / "lintaid").rglob("*.py")))
    return {
        "prose": fill("The gateway retries three times; tests cover the token budget and the "
                      "password reset flow in detail.\n"),
        "code": fill(code),
        "base64 blob": base64.b64encode(os.urandom(size * 3 // 4)).decode(),
        "dense secrets": fill(f"{AWS_ID} DB_PASS=hunter2 {GHP} the password is hunter2\n"),
        "secret words only": fill("secret token password key "),
        "unterminated key": fill("-----BEGIN RSA PRIVATE KEY-----"),
        "one long word": "x" * size,
        "colons": fill("token: " + "a" * 70 + " "),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=2.0)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    for name, text in inputs(int(args.mb * 1e6)).items():
        times = []
        for _ in range(args.runs):
            started = time.perf_counter()
            redact(text)
            times.append((time.perf_counter() - started) * 1000)
        print(f"redact {name:18s} {len(text) / 1e6:.1f} MB  median {statistics.median(times):8.1f} ms"
              f"  max {max(times):8.1f} ms")


if __name__ == "__main__":
    main()
