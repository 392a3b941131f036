"""Which project files are indexed.

Inside a git work tree git itself decides (``.gitignore``, ``.git/info/exclude``, the global
excludes file, tracked-but-ignored files): we ask ``git ls-files`` for the full list and
``git check-ignore`` for batches of changed paths, so the rules can never drift from git's.
Outside git we walk the tree and skip a small set of well-known junk folders. Always: never
``.git/`` or ``.lint-ai/``, no file whose name says it holds secrets (``.env*``, keys,
credential JSON), none of the agent clients' own configuration and transcripts (``excluded``:
the daemon hands over what each client names), no binary files, nothing over
``max_file_bytes``, no symlink that leads out of the root.
"""

from __future__ import annotations

import os
import stat
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from lintaid.logs import get_logger
from lintaid_client.paths import STATE_DIR_NAME

from .secrets import is_secret_file

DEFAULT_MAX_FILE_BYTES: Final = 1024 * 1024
BINARY_SNIFF_BYTES: Final = 8192
ALWAYS_EXCLUDED: Final = frozenset({".git", STATE_DIR_NAME})
# Only for trees outside git, where no .gitignore speaks for the project.
NON_GIT_JUNK: Final = frozenset({
    ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".tox", ".mypy_cache",
    ".pytest_cache", ".ruff_cache",
})
GIT_TIMEOUT: Final = 60.0

log = get_logger("lintaid.workspace")


def max_file_bytes_from_env() -> int:
    raw = os.environ.get("LINTAID_MAX_FILE_BYTES", "")
    try:
        value = int(raw)
    except ValueError:
        return DEFAULT_MAX_FILE_BYTES
    return value if value > 0 else DEFAULT_MAX_FILE_BYTES


def is_always_excluded(rel: str) -> bool:
    """True for anything under ``.git/`` or ``.lint-ai/`` at any depth (cheap: no I/O)."""
    return any(part in ALWAYS_EXCLUDED for part in rel.split("/"))


def is_binary(head: bytes) -> bool:
    return b"\x00" in head[:BINARY_SNIFF_BYTES]


def _encodable(rel: str) -> bool:
    """Names that are not valid UTF-8 cannot be stored in SQLite text; skip them."""
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@dataclass
class FileStat:
    rel: str
    size: int
    mtime_ns: int


@dataclass
class IgnoreRules:
    """The indexing rules for one project root. ``excluded``: files and folders (absolute,
    or relative to the root) never to index; those outside the root are dropped."""

    root: Path
    max_file_bytes: int = field(default_factory=max_file_bytes_from_env)
    excluded: Iterable[Path | str] = ()
    git: bool = field(init=False)

    def __post_init__(self) -> None:
        self.root = self.root.resolve()
        self.git = self._inside_git()
        self._excluded = frozenset(self._relative(p) for p in self.excluded) - {""}

    def _relative(self, path: Path | str) -> str:
        """``path`` as a posix path under the root; "" when it is outside."""
        given = Path(path).expanduser()
        if not given.is_absolute():
            given = self.root / given
        for candidate in (given, given.resolve()):
            try:
                rel = candidate.relative_to(self.root).as_posix()
            except ValueError:
                continue
            return "" if rel == "." else rel
        return ""

    def skipped(self, rel: str) -> bool:
        """True for a path no rule lets in, whatever git says (cheap: no I/O)."""
        if is_always_excluded(rel) or is_secret_file(rel) or not _encodable(rel):
            return True
        if not self._excluded:
            return False
        parts = rel.split("/")
        return any("/".join(parts[:n]) in self._excluded for n in range(1, len(parts) + 1))

    def _inside_git(self) -> bool:
        try:
            out = subprocess.run(
                ["git", "-C", str(self.root), "rev-parse", "--is-inside-work-tree"],
                capture_output=True, text=True, timeout=GIT_TIMEOUT,
            )
        except (OSError, subprocess.SubprocessError):
            return False
        return out.returncode == 0 and out.stdout.strip() == "true"

    # -- listing ---------------------------------------------------------------------------
    def list_files(self, under: str | None = None) -> list[str]:
        """Return candidate relative paths (posix) under the root or the folder ``under``.

        Candidates pass the path rules only; ``stat_file`` and ``read_file`` apply the rest.
        """
        names = self._git_list(under) if self.git else None
        if names is None:
            names = self._walk(under)
        return sorted(n for n in names if not self.skipped(n))

    def _git_list(self, under: str | None) -> list[str] | None:
        cmd = ["git", "-C", str(self.root), "ls-files", "-z", "--cached", "--others",
               "--exclude-standard"]
        if under:
            cmd += ["--", under]
        try:
            out = subprocess.run(cmd, capture_output=True, timeout=GIT_TIMEOUT)
        except (OSError, subprocess.SubprocessError) as err:
            log.warning("git_ls_files_failed", error=str(err))
            return None
        if out.returncode != 0:
            log.warning("git_ls_files_failed", error=out.stderr.decode(errors="replace")[:500])
            return None
        # --cached lists each path once per stage during a merge conflict: deduplicate.
        names = {os.fsdecode(n) for n in out.stdout.split(b"\0") if n}
        # An untracked nested repository is listed as "dir/": it is not ours to index.
        return [n for n in names if not n.endswith("/")]

    def _walk(self, under: str | None) -> list[str]:
        start = self.root / under if under else self.root
        out: list[str] = []
        stack = [start]
        while stack:
            folder = stack.pop()
            try:
                entries = list(os.scandir(folder))
            except OSError:
                continue
            for entry in entries:
                if entry.name in ALWAYS_EXCLUDED or entry.name in NON_GIT_JUNK:
                    continue
                try:
                    # Never follow directory symlinks: they loop and lead out of the root.
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(Path(entry.path))
                    elif entry.is_file(follow_symlinks=True):
                        out.append(Path(entry.path).relative_to(self.root).as_posix())
                except (OSError, ValueError):
                    continue
        return out

    # -- filtering ---------------------------------------------------------------------------
    def ignored(self, rels: Iterable[str]) -> set[str]:
        """Return the subset of ``rels`` that must not be indexed by path rules alone."""
        rels = list(dict.fromkeys(rels))
        out = {r for r in rels if self.skipped(r)}
        rest = [r for r in rels if r not in out]
        if not rest:
            return out
        if self.git:
            out |= self._git_check_ignore(rest)
        else:
            out |= {r for r in rest if any(p in NON_GIT_JUNK for p in r.split("/")[:-1])}
        return out

    def _git_check_ignore(self, rels: list[str]) -> set[str]:
        # Tracked files are never reported (git's own rule), matching ls-files --cached.
        try:
            out = subprocess.run(
                ["git", "-C", str(self.root), "check-ignore", "-z", "--stdin"],
                input=b"".join(os.fsencode(r) + b"\0" for r in rels),
                capture_output=True, timeout=GIT_TIMEOUT,
            )
        except (OSError, subprocess.SubprocessError) as err:
            log.warning("git_check_ignore_failed", error=str(err))
            return set()
        if out.returncode not in (0, 1):  # 1 = nothing ignored
            log.warning("git_check_ignore_failed",
                        error=out.stderr.decode(errors="replace")[:500])
            return set()
        return {os.fsdecode(n) for n in out.stdout.split(b"\0") if n}

    # -- one file ------------------------------------------------------------------------------
    def stat_file(self, rel: str) -> FileStat | None:
        """Stat ``rel``; None when it is gone, not a regular file, too big or leads outside."""
        path = self.root / rel
        try:
            lst = os.lstat(path)
            if stat.S_ISLNK(lst.st_mode) and not self._inside_root(path):
                return None
            st = os.stat(path) if stat.S_ISLNK(lst.st_mode) else lst
        except OSError:
            return None
        if not stat.S_ISREG(st.st_mode) or st.st_size > self.max_file_bytes:
            return None
        return FileStat(rel, st.st_size, st.st_mtime_ns)

    def _inside_root(self, path: Path) -> bool:
        try:
            path.resolve(strict=True).relative_to(self.root)
        except (OSError, ValueError, RuntimeError):
            return False
        return True

    def read_file(self, rel: str) -> tuple[FileStat, bytes] | None:
        """Read ``rel`` when it is indexable; None when gone, binary, too big or outside.

        The stat returned is the one taken before the read: if a write races the read, the
        stored fingerprint is older than the file, so the next reconcile re-reads it (erring
        towards a re-read, never towards keeping stale content).
        """
        before = self.stat_file(rel)
        if before is None:
            return None
        try:
            with open(self.root / rel, "rb") as fh:
                data = fh.read(self.max_file_bytes + 1)
        except OSError:  # deleted or replaced between stat and read: not an error
            return None
        if len(data) > self.max_file_bytes or is_binary(data):
            return None
        return before, data

    def sniff_binary(self, rel: str) -> bool:
        try:
            with open(self.root / rel, "rb") as fh:
                return is_binary(fh.read(BINARY_SNIFF_BYTES))
        except OSError:
            return False
