"""Git provenance: which branch and revision a capture was made on, and how that relates to now.

Injection shows captured vs current revision so an agent can tell whether a memory predates the
code it is looking at. ``git_state`` reads HEAD and the ref it names straight from the git
folder (microseconds, no process), falling back to ``git`` only for layouts it does not read
(reftable); ancestry needs ``git merge-base``, a subprocess with a short timeout whose answer
is cached for good (commits are immutable). Failures mean "unknown", never an error.
"""

from __future__ import annotations

import os
import re
import subprocess
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Final

GIT_TIMEOUT_S: Final = 1.0
STATE_TTL_S: Final = 1.0
_ANCESTRY_CACHE_MAX: Final = 1024
_REVISION_RE: Final = re.compile(r"^[0-9a-fA-F]{4,64}$")

_lock = threading.Lock()
_state_cache: dict[str, tuple[float, tuple[str | None, str | None]]] = {}
_ancestry_cache: OrderedDict[tuple[str, str, str], bool] = OrderedDict()


def _git(cwd: str, *args: str) -> subprocess.CompletedProcess[str] | None:
    env = dict(os.environ, GIT_OPTIONAL_LOCKS="0", LC_ALL="C", GIT_TERMINAL_PROMPT="0")
    try:
        return subprocess.run(
            ["git", "-C", cwd, *args],
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_S,
            env=env,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError, ValueError):
        return None


def _cache_key(cwd: str | os.PathLike[str]) -> str:
    return os.path.abspath(os.fspath(cwd))


def git_state(cwd: str | os.PathLike[str] | None, *,
              clock: Callable[[], float] = time.monotonic) -> tuple[str | None, str | None]:
    """Return ``(branch, revision)`` for the work tree at ``cwd``; ``None`` for what is unknown.

    A detached HEAD has no branch; a repository without commits has no revision. An answer
    is kept ``STATE_TTL_S`` seconds by ``clock`` (a test passes its own).
    """
    if not cwd:
        return None, None
    key = _cache_key(cwd)
    now = clock()
    with _lock:
        hit = _state_cache.get(key)
        if hit is not None and now - hit[0] < STATE_TTL_S:
            return hit[1]
    state = _read_state(key)
    with _lock:
        _state_cache[key] = (clock(), state)
        if len(_state_cache) > 256:
            _state_cache.pop(next(iter(_state_cache)))
    return state


def _git_dir(cwd: str) -> tuple[str, str] | None:
    """(git dir, common dir) of the work tree holding ``cwd``; None when not found."""
    here = os.path.abspath(cwd)
    while True:
        dot = os.path.join(here, ".git")
        if os.path.isdir(dot):
            git_dir = dot
            break
        if os.path.isfile(dot):  # a worktree or submodule: "gitdir: <path>"
            try:
                with open(dot, encoding="utf-8") as fh:
                    line = fh.read(4096).strip()
            except OSError:
                return None
            if not line.startswith("gitdir:"):
                return None
            git_dir = os.path.normpath(os.path.join(here, line[7:].strip()))
            break
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent
    common = git_dir
    try:
        with open(os.path.join(git_dir, "commondir"), encoding="utf-8") as fh:
            common = os.path.normpath(os.path.join(git_dir, fh.read().strip()))
    except OSError:
        pass
    return git_dir, common


def _read_ref(git_dir: str, common: str, ref: str) -> str | None:
    for folder in (git_dir, common):
        try:
            with open(os.path.join(folder, ref), encoding="utf-8") as fh:
                value = fh.read(128).strip()
            return value if _REVISION_RE.match(value) else None
        except OSError:
            continue
    try:
        with open(os.path.join(common, "packed-refs"), encoding="utf-8") as fh:
            for line in fh:
                parts = line.split()
                if len(parts) == 2 and parts[1] == ref and _REVISION_RE.match(parts[0]):
                    return parts[0]
    except OSError:
        pass
    return None


def _read_files(cwd: str) -> tuple[str | None, str | None] | None:
    """(branch, revision) from the git folder's files; None when only git can tell."""
    found = _git_dir(cwd)
    if found is None:
        return None
    git_dir, common = found
    if os.path.exists(os.path.join(common, "reftable")):
        return None  # the reftable format: ask git
    try:
        with open(os.path.join(git_dir, "HEAD"), encoding="utf-8") as fh:
            head = fh.read(1024).strip()
    except OSError:
        return None
    if head.startswith("ref:"):
        ref = head[4:].strip()
        branch = ref.removeprefix("refs/heads/") if ref.startswith("refs/heads/") else None
        return branch, _read_ref(git_dir, common, ref)  # no commit yet: revision None
    return (None, head) if _REVISION_RE.match(head) else None


def _read_state(cwd: str) -> tuple[str | None, str | None]:
    from_files = _read_files(cwd)
    if from_files is not None:
        return from_files
    # One spawn for both: the first HEAD prints the full id, the second its branch name.
    out = _git(cwd, "rev-parse", "HEAD", "--abbrev-ref", "HEAD")
    if out is not None and out.returncode == 0:
        lines = out.stdout.split()
        if len(lines) == 2:
            revision = lines[0] if _REVISION_RE.match(lines[0]) else None
            branch = lines[1] if lines[1] != "HEAD" else None
            return branch, revision
    # No commits yet (unborn branch): the branch name is still known.
    out = _git(cwd, "symbolic-ref", "--short", "-q", "HEAD")
    if out is not None and out.returncode == 0 and out.stdout.strip():
        return out.stdout.strip(), None
    return None, None


def clear_cache() -> None:
    """Forget cached git answers (tests, or after the daemon sees a checkout)."""
    with _lock:
        _state_cache.clear()
        _ancestry_cache.clear()


def valid_revision(revision: str | None) -> bool:
    """True for 4–64 hex digits: the only thing we ever pass to git as a revision."""
    return bool(revision) and bool(_REVISION_RE.match(revision or ""))


def revision_status(
    captured: str | None, current: str | None, cwd: str | os.PathLike[str] | None
) -> str:
    """Relate the captured revision to the current one.

    Returns ``exact-match``, ``captured-revision-is-ancestor``, ``diverged`` (not an ancestor:
    another branch, rewritten history, or a checkout of older code) or ``unknown``.
    """
    if not valid_revision(captured) or not valid_revision(current):
        return "unknown"
    old = (captured or "").lower()
    new = (current or "").lower()
    if old == new or old.startswith(new) or new.startswith(old):
        return "exact-match"
    if not cwd:
        return "unknown"
    key = (_cache_key(cwd), old, new)
    with _lock:
        if key in _ancestry_cache:
            _ancestry_cache.move_to_end(key)
            return "captured-revision-is-ancestor" if _ancestry_cache[key] else "diverged"
    out = _git(key[0], "merge-base", "--is-ancestor", old, new)
    if out is None or out.returncode not in (0, 1):
        return "unknown"  # unknown commit (not fetched yet), not a repository, timeout
    is_ancestor = out.returncode == 0
    with _lock:
        _ancestry_cache[key] = is_ancestor
        if len(_ancestry_cache) > _ANCESTRY_CACHE_MAX:
            _ancestry_cache.popitem(last=False)
    return "captured-revision-is-ancestor" if is_ancestor else "diverged"


def root_commits(cwd: str | os.PathLike[str]) -> list[str]:
    """The commits without parents reachable from HEAD, sorted: the same in every clone of a
    repository (the team tier keys a store on them); [] without commits or git."""
    out = _git(_cache_key(cwd), "rev-list", "--max-parents=0", "HEAD")
    if out is None or out.returncode != 0:
        return []
    return sorted(line for line in out.stdout.split() if _REVISION_RE.match(line))


def remote_url(cwd: str | os.PathLike[str], remote: str = "origin") -> str | None:
    """The configured URL of ``remote``, or None."""
    out = _git(_cache_key(cwd), "config", "--get", f"remote.{remote}.url")
    if out is None or out.returncode != 0:
        return None
    return out.stdout.strip() or None


def config_value(cwd: str | os.PathLike[str], key: str) -> str | None:
    """A git configuration value (``user.email``), or None."""
    out = _git(_cache_key(cwd), "config", "--get", key)
    if out is None or out.returncode != 0:
        return None
    return out.stdout.strip() or None
