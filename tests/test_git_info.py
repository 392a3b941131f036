from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from lintaid.capture import git as gitinfo
from lintaid.capture.git import git_state, revision_status, valid_revision

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def run(repo: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV, "HOME": str(repo.parent)}
    out = subprocess.run(
        ["git", "-C", str(repo), "-c", "commit.gpgsign=false", *args],
        capture_output=True, text=True, check=True, env=env,
    )
    return out.stdout.strip()


def commit(repo: Path, name: str) -> str:
    (repo / name).write_text(name)
    run(repo, "add", name)
    run(repo, "commit", "-q", "-m", f"add {name}")
    return run(repo, "rev-parse", "HEAD")


@pytest.fixture(autouse=True)
def fresh_cache() -> None:
    gitinfo.clear_cache()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    path.mkdir()
    run(path, "init", "-q", "-b", "main")
    return path


def test_state_of_a_repository(repo: Path) -> None:
    assert git_state(repo) == ("main", None)  # no commits yet: branch known, no revision
    gitinfo.clear_cache()
    first = commit(repo, "a.txt")
    assert git_state(repo) == ("main", first)
    assert git_state(str(repo / ".")) == ("main", first)


def test_state_is_cached_briefly(repo: Path) -> None:
    now = [1000.0]  # the cache's clock, moved by hand: a slow git commit cannot race it

    def clock() -> float:
        return now[0]

    first = commit(repo, "a.txt")
    assert git_state(repo, clock=clock) == ("main", first)
    second = commit(repo, "b.txt")
    now[0] += gitinfo.STATE_TTL_S - 0.01
    assert git_state(repo, clock=clock) == ("main", first)  # within the TTL: not read again
    now[0] += 0.02
    assert git_state(repo, clock=clock) == ("main", second)  # past it: read again


def test_detached_head_has_no_branch(repo: Path) -> None:
    first = commit(repo, "a.txt")
    commit(repo, "b.txt")
    run(repo, "checkout", "-q", first)
    assert git_state(repo) == (None, first)


def test_failures_are_none(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    env_ceiling = os.environ.get("GIT_CEILING_DIRECTORIES")
    os.environ["GIT_CEILING_DIRECTORIES"] = str(tmp_path)
    try:
        assert git_state(plain) == (None, None)
    finally:
        if env_ceiling is None:
            del os.environ["GIT_CEILING_DIRECTORIES"]
        else:
            os.environ["GIT_CEILING_DIRECTORIES"] = env_ceiling
    assert git_state(tmp_path / "missing") == (None, None)
    assert git_state(None) == (None, None)
    assert git_state("") == (None, None)


def test_revision_status(repo: Path) -> None:
    first = commit(repo, "a.txt")
    second = commit(repo, "b.txt")
    run(repo, "checkout", "-q", "-b", "side", first)
    side = commit(repo, "c.txt")

    assert revision_status(second, second, repo) == "exact-match"
    assert revision_status(second[:12], second, repo) == "exact-match"
    assert revision_status(first, second, repo) == "captured-revision-is-ancestor"
    assert revision_status(second, side, repo) == "diverged"
    assert revision_status(side, second, repo) == "diverged"
    assert revision_status(second, first, repo) == "diverged"  # captured on newer code
    # Answers are cached, and still right the second time.
    assert revision_status(first, second, repo) == "captured-revision-is-ancestor"


def test_revision_status_unknown(repo: Path, tmp_path: Path) -> None:
    head = commit(repo, "a.txt")
    assert revision_status(None, head, repo) == "unknown"
    assert revision_status(head, None, repo) == "unknown"
    assert revision_status("--output=/tmp/x", head, repo) == "unknown"
    assert revision_status("HEAD~1", head, repo) == "unknown"
    assert revision_status("abc", head, repo) == "unknown"  # too short
    assert revision_status("f" * 40, head, repo) == "unknown"  # not in this repository
    assert revision_status("a" * 40, head, tmp_path / "missing") == "unknown"
    assert revision_status("a" * 40, head, None) == "unknown"


def test_valid_revision() -> None:
    assert valid_revision("abcd")
    assert valid_revision("A" * 64)
    assert not valid_revision("a" * 65)
    assert not valid_revision("xyz123")
    assert not valid_revision("")
    assert not valid_revision(None)
