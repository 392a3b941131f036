"""Shared fixtures: real daemons as real subprocesses in temporary projects."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from lintaid_client import connection, paths

REPO = Path(__file__).resolve().parent.parent


def lintaid_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("LINTAID_PROJECT", None)
    env.setdefault("LINTAID_NO_WATCH", "1")
    env.update(extra)
    return env


def run_cli(root: Path, *args: str, env: dict[str, str] | None = None, check: bool = True,
            timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Run ``lintaid ARGS --project ROOT`` as a user would, in a subprocess."""
    proc = subprocess.run(
        [sys.executable, "-m", "lintaid", *args, "--project", str(root)],
        capture_output=True, text=True, env=env or lintaid_env(), timeout=timeout, cwd=str(root),
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"lintaid {' '.join(args)} failed ({proc.returncode}):\n"
                             f"{proc.stdout}\n{proc.stderr}")
    return proc


def run_json(root: Path, *args: str, env: dict[str, str] | None = None) -> dict:
    return json.loads(run_cli(root, *args, "--json", env=env).stdout)


def run_hook(root: Path, event: str, payload: dict, *, env: dict[str, str] | None = None,
             provider: str = "claude-code", timeout: float = 30) -> tuple[dict, float]:
    """Run ``lintaid-hook PROVIDER EVENT`` with the payload on stdin; return (output, seconds)."""
    payload = {"cwd": str(root), "hook_event_name": event, **payload}
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "lintaid_client.hook", provider, event],
        input=json.dumps(payload), capture_output=True, text=True,
        env=env or lintaid_env(), timeout=timeout, cwd=str(root),
    )
    elapsed = time.monotonic() - started
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout), elapsed


def start_daemon(root: Path, env: dict[str, str] | None = None) -> None:
    run_cli(root, "start", env=env)


def stop_daemon(root: Path, env: dict[str, str] | None = None) -> None:
    run_cli(root, "stop", env=env, check=False)


def wait_for(predicate, timeout: float = 10.0, interval: float = 0.05):
    """Poll ``predicate`` until it returns something truthy; return it or fail."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout}s")
        time.sleep(interval)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    paths.ensure_state_dir(root)
    return root


@pytest.fixture
def daemon(project: Path) -> Iterator[Path]:
    """A running daemon for ``project``; stopped (and killed if need be) afterwards."""
    start_daemon(project)
    try:
        yield project
    finally:
        stop_daemon(project)
        status = connection.read_status(project)
        if status:
            try:
                os.kill(int(status["pid"]), 9)
            except (OSError, ValueError):
                pass
