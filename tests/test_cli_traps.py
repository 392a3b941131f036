"""Traps for people, through the CLI as a person runs it: each is one line on stderr, a
non-zero exit, and never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import lintaid_env, run_cli, stop_daemon


def lintaid(args: list[str | bytes], *, cwd: Path, env: dict[str, str] | None = None
            ) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable.encode(), b"-m", b"lintaid",
                           *[a if isinstance(a, bytes) else a.encode() for a in args]],
                          capture_output=True, cwd=str(cwd), env=env or lintaid_env(),
                          timeout=60)


def one_line_failure(proc: subprocess.CompletedProcess[bytes]) -> str:
    err = proc.stderr.decode("utf-8", "replace").strip()
    assert proc.returncode != 0, err
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    assert err.startswith("lintaid: ") and "unexpected error" not in err, err
    return err


@pytest.mark.parametrize(("args", "named"), [
    ([b"add", b"caf\xff"], "CONTENT"),
    ([b"search", b"\xff\xfe"], "QUERY"),
    ([b"get", b"m\xff"], "ID"),
    ([b"supersede", b"m1", b"--text", b"\xff"], "--text"),
    ([b"add", b"fine", b"--expires-at", b"\xff"], "--expires-at"),
    ([b"add", b"fine", b"--metadata", b'{"k": "\xff"}'], "--metadata"),
])
def test_non_utf8_arguments_are_one_line_naming_the_argument(
        project: Path, args: list[bytes], named: str) -> None:
    err = one_line_failure(lintaid([*args, b"--project", str(project).encode()], cwd=project))
    assert named in err


def test_lintaid_project_naming_a_file_is_one_line(tmp_path: Path) -> None:
    afile = tmp_path / "notes.txt"
    afile.write_text("not a folder\n")
    err = one_line_failure(lintaid(["status"], cwd=tmp_path,
                                   env=lintaid_env(LINTAID_PROJECT=str(afile))))
    assert f"LINTAID_PROJECT={afile} is not a folder" in err


def test_a_mistyped_project_is_refused_not_created(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-project"
    proc = lintaid(["add", "a note", "--project", str(missing)], cwd=tmp_path)
    assert proc.returncode != 0 and b"Traceback" not in proc.stderr
    assert b"does not exist" in proc.stderr and not missing.exists()


def test_agent_settings_that_are_not_json_are_one_line_naming_file_and_line(
        project: Path) -> None:
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{\n  "hooks": {,\n}\n')
    err = one_line_failure(lintaid(["install", "claude-code", "--project", str(project)],
                                   cwd=project))
    assert f"{settings}:2" in err
    assert settings.read_text() == '{\n  "hooks": {,\n}\n'  # left as it was


def test_a_duplicate_add_says_already_stored(daemon: Path) -> None:
    first = run_cli(daemon, "add", "The egret build caches wheels.").stdout
    again = run_cli(daemon, "add", "The egret build caches wheels.").stdout
    rid = first.split(": ", 1)[1].strip()
    assert first.startswith("added: ") and again.strip() == f"already stored: {rid}"
    assert "none" not in again.lower()


# -- a read-only project tree ----------------------------------------------------------------
@pytest.fixture
def read_only(tmp_path: Path) -> Iterator[Path]:
    """A folder mounted read-only over a writable one (a bind mount: needs root)."""
    source, mount = tmp_path / "src", tmp_path / "ro"
    source.mkdir()
    mount.mkdir()
    steps = [["mount", "--bind", str(source), str(mount)],
             ["mount", "-o", "remount,bind,ro", str(mount)]]
    for step in steps:
        proc = subprocess.run(step, capture_output=True, text=True)
        if proc.returncode != 0:
            subprocess.run(["umount", str(mount)], capture_output=True)
            reason = proc.stderr.strip() or f"{step[0]} exited {proc.returncode}"
            print(f"skipped: cannot mount a read-only folder here: {reason}")
            pytest.skip(f"cannot mount a read-only folder here: {reason}")
    try:
        yield source
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def test_a_read_only_project_tree_is_one_line(read_only: Path) -> None:
    fresh = read_only / "fresh"
    fresh.mkdir()
    used = read_only / "used"
    used.mkdir()
    run_cli(used, "add", "The ibis service logs to syslog.")  # .lint-ai exists, then ro
    stop_daemon(used)
    mounted = read_only.parent / "ro"
    for name in ("fresh", "used"):
        root = mounted / name
        for args in (["add", "a note"], ["search", "ibis"], ["start"]):
            err = one_line_failure(lintaid([*args, "--project", str(root)], cwd=root))
            assert "read-only file system" in err.lower(), err
        err = one_line_failure(lintaid(["start", "--foreground", "--project", str(root)],
                                       cwd=root))
        assert "read-only file system" in err.lower(), err
    assert not os.path.exists(mounted / "fresh" / ".lint-ai")
