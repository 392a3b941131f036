"""Shared fixtures.

Most tests run the real daemon inside the test process (``served``): the real ``Daemon`` on a
temporary project, bound to that project's own ipc socket, serving from a thread, with real
SQLite and Tantivy stores. The CLI (click's ``CliRunner``), the Python client (``Memory``) and
the hook shim's logic (``lintaid_client.hook.answer``) talk to it over that socket, exactly as
they talk to a daemon process.

A few end-to-end tests start the daemon as a subprocess (``daemon``, ``start_daemon``,
``run_cli``, ``run_hook``) for what only a process shows: the hook shim as the agent runs it,
signals, the spool while no daemon runs, auto-start, a full disk, an index rebuilt at start.

Every test runs with its own ``XDG_RUNTIME_DIR``-based socket folder for the session, and an
autouse check fails a test that leaves a daemon thread running or a daemon listening.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest
from click.testing import CliRunner

from lintaid import cli as lintaid_cli
from lintaid.daemon import Config, Daemon
from lintaid_client import Memory, connection, hook, lock, paths

REPO = Path(__file__).resolve().parent.parent
# Test modules import helpers as ``tests.conftest``; pytest loaded this file as ``conftest``.
# One module under both names, so there is one registry of daemon processes (and one of
# every class) however a test reaches it.
sys.modules.setdefault("tests.conftest", sys.modules[__name__])
T = TypeVar("T")


def _bytecode_cache() -> Path | None:
    """Where PYTHONDONTWRITEBYTECODE is set, every daemon, CLI and hook process a test starts
    would compile each module it imports from source again (about half of a daemon's start),
    and each xdist worker would rewrite every test module's asserts again: they keep their
    bytecode in one cache instead, under .pytest_cache (never beside the sources). Python
    checks each cached file against its source and writes it atomically, so the processes may
    share it. None where bytecode is written as usual, or the cache cannot be made."""
    if not sys.flags.dont_write_bytecode:
        return None
    folder = REPO / ".pytest_cache" / "pycache"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    sys.pycache_prefix = str(folder)  # this process: the test modules pytest rewrites next
    sys.dont_write_bytecode = False
    return folder


BYTECODE = _bytecode_cache()


# -- waiting ----------------------------------------------------------------------------------
def wait_for(predicate: Callable[[], T], timeout: float = 10.0, interval: float = 0.05) -> T:
    """Poll ``predicate`` until it returns something truthy; return it or fail.

    The timeout is a generous bound on a condition, not a claim about speed.
    """
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout}s")
        time.sleep(interval)


# -- the daemon in this process ---------------------------------------------------------------
@dataclass(frozen=True)
class CliResult:
    exit_code: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        assert self.exit_code == 0, f"exit {self.exit_code}:\n{self.stdout}\n{self.stderr}"
        return json.loads(self.stdout)


def invoke(root: Path, *args: str, input: str | None = None) -> CliResult:
    """``lintaid ARGS --project ROOT`` through click in this process, never starting a
    daemon; a non-zero exit is returned, not raised."""
    result = CliRunner().invoke(lintaid_cli.main, [*args, "--project", str(root)], input=input,
                                catch_exceptions=False, env={"LINTAID_NO_AUTOSTART": "1"})
    return CliResult(result.exit_code, result.stdout, result.stderr)


class Served:
    """The real ``Daemon`` for ``root``, serving from a thread of this process.

    ``start`` takes the project's lock (as ``lintaid start --foreground`` does, so the hook
    shim sees a daemon), runs the daemon in a thread and returns once it is bound and its status
    file written; ``stop`` asks it to shut down, joins the thread and releases the lock.

    Helpers speak to it the way its users do, over its socket: ``memory()`` (the Python
    client), ``call()`` (one request), ``cli()`` / ``json()`` (the click CLI through
    ``CliRunner``), ``hook()`` (the hook shim's ``answer``).
    """

    def __init__(self, root: Path, config: Config | None = None) -> None:
        self.root = root
        self.config = config or Config(watch_workspace=False)
        self.daemon: Daemon | None = None
        self._thread: threading.Thread | None = None
        self._lock_fd: int | None = None
        self._umask: int | None = None
        self._error: BaseException | None = None

    # -- life cycle ------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self, timeout: float = 60.0) -> Served:
        assert not self.running, "already running"
        paths.ensure_state_dir(self.root)
        self._lock_fd = lock.acquire(paths.lock_path(self.root))
        # The daemon sets the process umask (0o077) as it starts; ours comes back on stop.
        self._umask = os.umask(0o022)
        os.umask(self._umask)
        self._error = None
        self.daemon = Daemon(self.root, self.config)
        self._thread = threading.Thread(target=self._run, name="lintaid-daemon", daemon=True)
        self._thread.start()
        daemon, thread = self.daemon, self._thread
        deadline = time.monotonic() + timeout
        while not daemon.ready.wait(0.02):
            if not thread.is_alive() or time.monotonic() > deadline:
                self._cleanup()
                raise AssertionError(f"the daemon did not start: {self._error!r}")
        return self

    def _run(self) -> None:
        assert self.daemon is not None
        try:
            self.daemon.run()
        except BaseException as err:  # reported by start() or stop()
            self._error = err

    def stop(self, timeout: float = 60.0) -> None:
        """Ask the daemon to stop (as the ``shutdown`` op does) and wait until it has."""
        if self.daemon is None or self._thread is None:
            return
        self.daemon.request_shutdown()
        self._thread.join(timeout)
        alive = self._thread.is_alive()
        error = self._error
        if not alive:
            self._cleanup()
        assert not alive, f"the daemon thread did not stop within {timeout}s"
        if error is not None:
            raise AssertionError(f"the daemon failed: {error!r}") from error

    def restart(self) -> Served:
        self.stop()
        return self.start()

    def _cleanup(self) -> None:
        if self._lock_fd is not None:
            lock.release(self._lock_fd)
            self._lock_fd = None
        if self._umask is not None:
            os.umask(self._umask)
            self._umask = None
        # The daemon points the package's logger at the project's log file; close it, so no
        # test inherits an open file in another test's folder.
        logger = logging.getLogger("lintaid")
        for handler in logger.handlers[:]:
            logger.removeHandler(handler)
            handler.close()
        self.daemon = None
        self._thread = None

    # -- talking to it ---------------------------------------------------------------------
    def memory(self, **kwargs: Any) -> Memory:
        """A ``Memory`` client for the project; never starts a daemon of its own."""
        kwargs.setdefault("autostart", False)
        return Memory(self.root, **kwargs)

    def call(self, op: str, args: dict[str, Any] | None = None, *,
             timeout: float = 30.0) -> Any:
        with connection.Connection(self.root) as conn:
            return conn.call(op, args, timeout=timeout)

    def cli(self, *args: str, input: str | None = None) -> CliResult:
        """``lintaid ARGS --project ROOT`` through click in this process; never raises on a
        non-zero exit (look at ``exit_code``)."""
        if args and args[0] in ("start", "stop"):
            raise ValueError("use Served.start()/stop(): `lintaid stop` would signal this "
                             "process, whose pid the status file names")
        return invoke(self.root, *args, input=input)

    def json(self, *args: str) -> Any:
        """``lintaid ARGS --json``: the parsed output (and the command must succeed)."""
        return self.cli(*args, "--json").json()

    def hook(self, event: str, payload: dict[str, Any], provider: str = "claude-code",
             *, raw: bytes | None = None) -> dict[str, Any]:
        """What ``lintaid-hook PROVIDER EVENT`` prints for ``payload`` (cwd: the project)."""
        data = raw if raw is not None else json.dumps(
            {"cwd": str(self.root), "hook_event_name": event, **payload}).encode()
        return hook.answer(provider, event, data)

    def record_count(self) -> int:
        count: int = self.call("status")["memory"]["records"]
        return count


@pytest.fixture
def served_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """The environment an in-process daemon's callers need: no project override, no auto-start
    (a test must never fall back to a daemon process), and a hook budget no loaded machine
    exhausts (the budget itself is tested end to end, with a stopped daemon process)."""
    monkeypatch.delenv("LINTAID_PROJECT", raising=False)
    monkeypatch.setenv("LINTAID_NO_AUTOSTART", "1")
    monkeypatch.setenv("LINTAID_HOOK_TIMEOUT_MS", "30000")


@pytest.fixture
def serve(served_env: None) -> Iterator[Callable[..., Served]]:
    """Factory: ``serve(root, watch=False, **config)`` starts a daemon in this process; every
    daemon it started is stopped (thread joined, lock released) after the test."""
    started: list[Served] = []

    def start(root: Path, *, watch: bool = False, **config: Any) -> Served:
        served = Served(root, Config(watch_workspace=watch, **config)).start()
        started.append(served)
        return served

    yield start
    errors = []
    for served in reversed(started):
        try:
            served.stop()
        except AssertionError as err:
            errors.append(err)
    assert not errors, errors


@pytest.fixture
def served(project: Path, serve: Callable[..., Served]) -> Served:
    """A daemon in this process for ``project``, without the workspace watcher."""
    return serve(project)


# -- the daemon as a subprocess (end-to-end tests) --------------------------------------------
def lintaid_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("LINTAID_PROJECT", None)
    env.setdefault("LINTAID_NO_WATCH", "1")
    if BYTECODE is not None:
        # Only lintaid's processes: pip, run with a cache prefix, would record no
        # __pycache__ files for its uninstall (tests/test_hook_reinstall.py).
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env.setdefault("PYTHONPYCACHEPREFIX", str(BYTECODE))
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


def run_json(root: Path, *args: str, env: dict[str, str] | None = None) -> Any:
    return json.loads(run_cli(root, *args, "--json", env=env).stdout)


def hook_command(provider: str, event: str) -> list[str]:
    return [sys.executable, "-m", "lintaid_client.hook", provider, event]


def run_hook(root: Path, event: str, payload: dict[str, Any], *,
             env: dict[str, str] | None = None, provider: str = "claude-code",
             timeout: float = 30) -> dict[str, Any]:
    """Run ``lintaid-hook PROVIDER EVENT`` with the payload on stdin; return what it printed
    (and check that it exited 0)."""
    payload = {"cwd": str(root), "hook_event_name": event, **payload}
    proc = subprocess.run(
        hook_command(provider, event), input=json.dumps(payload), capture_output=True,
        text=True, env=env or lintaid_env(), timeout=timeout, cwd=str(root),
    )
    assert proc.returncode == 0, proc.stderr
    output: dict[str, Any] = json.loads(proc.stdout)
    return output


def start_daemon(root: Path, env: dict[str, str] | None = None) -> None:
    """``lintaid start``: the CLI starts the daemon detached, as a person would."""
    run_cli(root, "start", env=env)


def stop_daemon(root: Path, env: dict[str, str] | None = None) -> None:
    run_cli(root, "stop", env=env, check=False)


class DaemonProcess:
    """``lintaid start --foreground`` as a child process (what systemd runs): one process per
    daemon, no CLI process around it. ``stop`` sends SIGTERM, as systemd does, and reaps it.
    One still running when its test ends is stopped, and fails the test (``no_leaks``)."""

    started: list[DaemonProcess] = []

    def __init__(self, root: Path, env: dict[str, str] | None = None) -> None:
        DaemonProcess.started.append(self)
        self.root = root
        self._stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "lintaid", "start", "--foreground", "--project", str(root)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self._stderr,
            env=env or lintaid_env(), cwd=str(root), start_new_session=True)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def stderr(self) -> str:
        self._stderr.seek(0)
        return self._stderr.read().decode(errors="replace")

    def wait_ready(self, timeout: float = 60.0) -> DaemonProcess:
        def up() -> bool:
            if self.proc.poll() is not None:
                raise AssertionError(f"the daemon exited ({self.proc.returncode}):\n"
                                     f"{self.stderr()}")
            return connection.ping(self.root, timeout=0.5) is not None

        wait_for(up, timeout)
        return self

    def stop(self, timeout: float = 60.0) -> int:
        """SIGTERM, wait for the exit (SIGKILL if it will not go); return the exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout)
        self._stderr.close()
        return self.proc.returncode


def daemon_process(root: Path, env: dict[str, str] | None = None) -> DaemonProcess:
    """Start a daemon process for ``root`` and return once it answers."""
    return DaemonProcess(root, env).wait_ready()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    paths.ensure_state_dir(root)
    return root


@pytest.fixture
def daemon(project: Path) -> Iterator[Path]:
    """A daemon process for ``project``; stopped (and killed if need be) afterwards."""
    proc = daemon_process(project)
    try:
        yield project
    finally:
        proc.stop()


@pytest.fixture(scope="module")
def shared_daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One daemon process for a project that a module's tests share (the cases of one
    parametrized test whose outcome does not depend on what the others stored), started once
    instead of once for each; stopped after the module's last test."""
    root = tmp_path_factory.mktemp("shared") / "proj"
    root.mkdir()
    paths.ensure_state_dir(root)
    proc = daemon_process(root)
    try:
        yield root
    finally:
        proc.stop()


# -- isolation and leak checks ----------------------------------------------------------------
@pytest.fixture(scope="session", autouse=True)
def runtime_dir() -> Iterator[Path]:
    """A private socket folder for this test session (inherited by subprocesses), so tests
    never meet a developer's daemons and leaked listeners can be found."""
    folder = Path(tempfile.mkdtemp(prefix="lintaid-rt-"))
    before = os.environ.get("XDG_RUNTIME_DIR")
    os.environ["XDG_RUNTIME_DIR"] = str(folder)
    try:
        yield folder
    finally:
        if before is None:
            os.environ.pop("XDG_RUNTIME_DIR", None)
        else:
            os.environ["XDG_RUNTIME_DIR"] = before
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session", autouse=True)
def data_dir() -> Iterator[Path]:
    """A private ``XDG_DATA_HOME`` for this test session (inherited by subprocesses): hook
    launchers that installs write go there, never into the developer's data folder."""
    folder = Path(tempfile.mkdtemp(prefix="lintaid-data-"))
    before = os.environ.get("XDG_DATA_HOME")
    os.environ["XDG_DATA_HOME"] = str(folder)
    try:
        yield folder
    finally:
        if before is None:
            os.environ.pop("XDG_DATA_HOME", None)
        else:
            os.environ["XDG_DATA_HOME"] = before
        shutil.rmtree(folder, ignore_errors=True)


def listening_sockets(folder: Path) -> list[str]:
    """The socket files in ``folder`` that something still accepts connections on."""
    found = []
    for path in folder.rglob("*.sock"):
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
            try:
                probe.connect(str(path))
            except OSError:
                continue  # left behind by a killed daemon: nobody listens
            found.append(path.name)
    return found


def _ours(thread: threading.Thread, before: set[int]) -> bool:
    """A thread started during the test by lintaid (the daemon's, the watcher's, watchdog's),
    still running. Other libraries' and tests' own helper threads are theirs to manage."""
    if thread.ident in before or not thread.is_alive():
        return False
    target = getattr(thread, "_target", None)
    module = getattr(target, "__module__", None) or type(thread).__module__
    return thread.name.startswith("lintaid") or module.startswith(("lintaid", "watchdog"))


@pytest.fixture(autouse=True)
def no_leaks(runtime_dir: Path) -> Iterator[None]:
    """Fail a test that leaves a lintaid thread running or a daemon listening once it is torn
    down."""
    before = {t.ident for t in threading.enumerate() if t.ident is not None}
    listening_before = set(listening_sockets(runtime_dir))
    DaemonProcess.started.clear()
    yield
    running = [p for p in DaemonProcess.started if p.proc.poll() is None]
    for process in running:
        process.stop()
    DaemonProcess.started.clear()
    assert not running, f"daemon processes left running: {[p.pid for p in running]}"
    try:
        wait_for(lambda: not [t for t in threading.enumerate() if _ours(t, before)], 10)
    except AssertionError:
        names = sorted(t.name for t in threading.enumerate() if _ours(t, before))
        raise AssertionError(f"threads left running after the test: {names}") from None
    listening = set(listening_sockets(runtime_dir)) - listening_before
    assert not listening, f"daemons still listening after the test: {sorted(listening)}"
