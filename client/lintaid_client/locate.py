"""Where a project is and where its daemon listens: defined once, for every process.

The hook shim imports this on every agent event, started without site, so it uses only
``os`` and ``sys`` (already loaded) and a hash module on first use; no pathlib, tempfile or
hashlib. ``paths`` is the same knowledge as ``pathlib.Path`` objects for everything else.
"""

import os
import sys

STATE_DIR_NAME = ".lint-ai"
IPC_PATH_MAX = 100  # Linux sun_path is 108 bytes with the NUL; macOS 104


class ProjectError(Exception):
    """The project named (``--project``, ``LINTAID_PROJECT``) is not a usable folder."""


def find_root(start: str | None = None) -> str:
    """The project root for ``start`` (default: the working directory).

    ``LINTAID_PROJECT`` wins; then the nearest ancestor holding ``.lint-ai/``; then the git
    top-level; then ``start`` itself.
    """
    env = os.environ.get("LINTAID_PROJECT")
    if env:
        root = os.path.realpath(os.path.expanduser(env))
        if not os.path.isdir(root):
            raise ProjectError(f"LINTAID_PROJECT={env} is not a folder")
        return root
    here = os.path.realpath(os.path.expanduser(start or os.getcwd()))
    chain = [here]
    while True:
        parent = os.path.dirname(chain[-1])
        if parent == chain[-1]:
            break
        chain.append(parent)
    for candidate in chain:
        if os.path.isdir(os.path.join(candidate, STATE_DIR_NAME)):
            return candidate
    for candidate in chain:
        if os.path.exists(os.path.join(candidate, ".git")):
            return candidate
    return here


def project_key(root: str) -> str:
    try:
        from _sha256 import sha256  # the C module alone: hashlib costs more to import
    except ImportError:  # Python 3.12+
        from hashlib import sha256
    digest: str = sha256(str(root).encode()).hexdigest()
    return digest[:16]


def _private_dir(folder: str) -> bool:
    """Create ``folder`` 0700 if absent; True when it is a real folder of ours, private."""
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        st = os.lstat(folder)
    except OSError:
        return False
    if (st.st_mode & 0o170000) != 0o040000 or st.st_uid != os.getuid():
        return False  # not a folder (a link), or another user's
    if st.st_mode & 0o077:
        try:
            os.chmod(folder, 0o700)
        except OSError:
            return False
    return True


def _tmp_dir() -> str:
    for name in ("TMPDIR", "TEMP", "TMP"):
        value = os.environ.get(name)
        if value and os.path.isdir(value):
            return value
    return "/tmp"


def socket_dir() -> str:
    """The private (0700) folder the sockets live in, created if needed.

    ``$XDG_RUNTIME_DIR/lintaid``, else ``<tmp>/lintaid-<uid>``. When that one is not ours
    (another user created it first, or it is a link), a private folder in the home directory
    is used instead, and a one-line warning says so on stderr.
    """
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isdir(runtime) and os.access(runtime, os.W_OK):
        folder = os.path.join(runtime, "lintaid")
    else:
        folder = os.path.join(_tmp_dir(), f"lintaid-{os.getuid()}")
    if _private_dir(folder):
        return folder
    fallback = os.path.join(os.path.expanduser("~"), ".cache", "lintaid", "run")
    if _private_dir(fallback) and len(fallback) < IPC_PATH_MAX - 22:
        print(f"lintaid: {folder} is not a private folder of this user; using {fallback}",
              file=sys.stderr)
        return fallback
    raise PermissionError(f"{folder} is not a private folder of this user, and "
                          f"{fallback} cannot be used either")


ENDPOINT_FILE = "daemon.endpoint"


def endpoint(root: str) -> str:
    """Where the project's daemon listens, as it said when it bound (``daemon.endpoint``).

    The file matters because the computed place depends on the environment (XDG_RUNTIME_DIR,
    TMPDIR), and agents start some shims (MCP servers) with only a few variables: every
    process of the project must reach the one daemon. Without the file: ``socket_endpoint``.
    """
    try:
        with open(os.path.join(root, STATE_DIR_NAME, ENDPOINT_FILE), encoding="utf-8") as fh:
            said = fh.read(4096).strip()
    except (OSError, UnicodeDecodeError):
        said = ""
    return said if said.startswith("ipc://") else socket_endpoint(root)


def socket_endpoint(root: str) -> str:
    """The ``ipc://`` endpoint a daemon binds for ``root``: short, private, stable per root
    (in this environment)."""
    name = f"{project_key(root)}.sock"
    path = os.path.join(socket_dir(), name)
    if len(path) > IPC_PATH_MAX:
        path = os.path.join("/tmp", f"lintaid-{os.getuid()}", name)
    return f"ipc://{path}"
