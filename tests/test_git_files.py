"""git_state reads HEAD and refs from the git folder; it must agree with git itself in every
layout: loose refs, packed refs, a detached HEAD, an unborn branch, a linked worktree."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from lintaid.capture import git as gitinfo

ENV = {**os.environ, "GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.com",
       "GIT_COMMITTER_NAME": "T", "GIT_COMMITTER_EMAIL": "t@example.com",
       "GIT_CONFIG_NOSYSTEM": "1"}


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "-c", "commit.gpgsign=false", *args],
                          capture_output=True, text=True, check=True, env=ENV).stdout.strip()


def truth(repo: Path) -> tuple[str | None, str | None]:
    """What git itself says: (branch or None when detached, full revision)."""
    revision = git(repo, "rev-parse", "HEAD")
    branch = git(repo, "rev-parse", "--abbrev-ref", "HEAD")
    return (None if branch == "HEAD" else branch), revision


def state(path: Path) -> tuple[str | None, str | None]:
    gitinfo.clear_cache()
    return gitinfo.git_state(str(path))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    assert state(root) == ("main", None)  # unborn: the branch is known, no revision yet
    (root / "a.txt").write_text("a")
    git(root, "add", "a.txt")
    git(root, "commit", "-q", "-m", "a")
    return root


def test_loose_and_packed_refs_and_subfolders(repo: Path) -> None:
    assert state(repo) == truth(repo)
    (repo / "sub" / "deeper").mkdir(parents=True)
    assert state(repo / "sub" / "deeper") == truth(repo)
    git(repo, "pack-refs", "--all")
    assert not (repo / ".git" / "refs" / "heads" / "main").exists()
    assert state(repo) == truth(repo)


def test_detached_head_and_other_branch(repo: Path) -> None:
    first = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-q", "-b", "feature/x")
    (repo / "b.txt").write_text("b")
    git(repo, "add", "b.txt")
    git(repo, "commit", "-q", "-m", "b")
    assert state(repo) == truth(repo) == ("feature/x", git(repo, "rev-parse", "HEAD"))
    git(repo, "checkout", "-q", first)
    assert state(repo) == truth(repo) == (None, first)


def test_linked_worktree(repo: Path, tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    git(repo, "worktree", "add", "-q", "-b", "side", str(tree))
    assert (tree / ".git").is_file()
    assert state(tree) == truth(tree) == ("side", git(repo, "rev-parse", "HEAD"))


def test_not_a_repository(tmp_path: Path) -> None:
    assert state(tmp_path) == (None, None)
