"""Guard the architecture: the arrows point one way, and only the stores touch storage."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CLIENT = REPO / "client" / "lintaid_client"
DAEMON = REPO / "lintaid"
HEAVY = {"tantivy", "watchdog", "structlog", "psutil", "sqlite3", "click", "rich", "lintaid",
         "mcp", "pydantic", "anyio"}
STORAGE = {"sqlite3", "tantivy"}
# Modules allowed to open a database or an index.
STORAGE_OWNERS = {DAEMON / "store", DAEMON / "search.py"}


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_client_imports_nothing_heavy_and_nothing_from_the_daemon() -> None:
    offenders = {}
    for path in CLIENT.rglob("*.py"):
        bad = imported_modules(path) & HEAVY
        if bad:
            offenders[str(path.relative_to(REPO))] = sorted(bad)
    assert offenders == {}


def test_hook_shim_loads_only_stdlib_pyzmq_and_msgpack() -> None:
    code = (
        "import sys, lintaid_client.hook\n"
        "mods = sorted({m.split('.')[0] for m in sys.modules})\n"
        "print('\\n'.join(mods))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(out.stdout.split())
    third_party = {m for m in loaded if m not in sys.stdlib_module_names and not m.startswith("_")}
    assert third_party <= {"zmq", "msgpack", "lintaid_client", "cython_runtime"}, third_party


def test_only_the_store_and_the_search_executor_touch_storage() -> None:
    offenders = {}
    for path in DAEMON.rglob("*.py"):
        if any(path == owner or owner in path.parents for owner in STORAGE_OWNERS):
            continue
        bad = imported_modules(path) & STORAGE
        if bad:
            offenders[str(path.relative_to(REPO))] = sorted(bad)
    assert offenders == {}


def test_the_daemon_package_reuses_the_client_protocol() -> None:
    """One envelope: the daemon imports the client's protocol instead of defining its own."""
    users = [p for p in DAEMON.rglob("*.py") if "lintaid_client" in imported_modules(p)]
    assert any(p.name == "server.py" for p in users)
    for path in DAEMON.rglob("*.py"):
        text = path.read_text()
        assert "msgpack.packb" not in text and "msgpack.unpackb" not in text, path


def test_only_the_team_server_module_imports_psycopg() -> None:
    """The team tier's driver is an optional extra: one module imports it, and only a daemon
    that has joined a team loads that module."""
    users = sorted(str(p.relative_to(REPO)) for p in DAEMON.rglob("*.py")
                   if "psycopg" in imported_modules(p))
    assert users == ["lintaid/team/pg.py"]
    code = ("import sys, lintaid.daemon, lintaid.cli, lintaid.doctor\n"
            "print(sorted(m for m in sys.modules if m.startswith('psycopg')))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"
