"""benchmarks/smoke.py (the CI step that runs every benchmark at a small size) knows every
script in benchmarks/, so a new one cannot be left out of it unnoticed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_every_benchmark_has_a_small_size() -> None:
    proc = subprocess.run([sys.executable, str(REPO / "benchmarks" / "smoke.py"), "--list"],
                          capture_output=True, text=True, check=False, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    listed = {Path(line.split()[0]).stem for line in proc.stdout.splitlines()}
    scripts = {p.stem for p in (REPO / "benchmarks").glob("*.py")} - {"smoke"}
    assert listed == scripts


def test_no_benchmark_hides_a_standard_library_module() -> None:
    """benchmarks/http.py once made `import http.client` fail in every other script."""
    scripts = {p.stem for p in (REPO / "benchmarks").glob("*.py")}
    assert not scripts & sys.stdlib_module_names
