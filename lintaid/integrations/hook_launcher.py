"""lintaid's hook launcher: the file agents' hook commands run, kept in lintaid's data folder.

``lintaid install`` copies this file to ``<data>/hooks/<key>/lintaid-hook.py`` (``<data>``:
``$XDG_DATA_HOME/lintaid``, else ``~/.local/share/lintaid``; one folder per interpreter) and
registers ``<python> -I -S <that file> CLIENT EVENT``. Reinstalling lintaid, upgrading it or
switching between a wheel and an editable install moves the hook shim
(``lintaid_client/hook.py``) but neither this file nor the interpreter, so the registered
command stays valid.

Beside it, ``location`` says where this interpreter's lintaid was found and how to tell that
it is still there: the installed distribution's metadata folder, which every install writes
anew, with its inode and times. A run reads that file and stats that folder; when they
disagree (lintaid was reinstalled, upgraded or removed) it looks in the same site folder for
what pip wrote there (``rescan``: the package, or the editable install's finder or ``.pth``),
else asks the interpreter, once and with site, where ``lintaid_client`` is imported from now,
and writes the answer back. Then it
imports the shim from there and runs it. Standard library only, started without site, like
the shim: the common path costs one small read and one stat more than the shim alone.

Asking takes the interpreter's start with site (a few tens of milliseconds, once per
install); it gets the hook's budget (``LINTAID_HOOK_TIMEOUT_MS``) less what the shim needs,
and the shim then keeps to what is left. When no lintaid can be found for the interpreter (or
it did not answer in time), the hook still answers ``{}`` and exits 0 (the agent must never be
blocked by memory) and says on stderr why; ``lintaid doctor`` and ``lintaid status`` name the
registration (``found`` is what they ask).
"""

import os
import sys
import time

FORMAT = "lintaid-hook-location 1"
LOCATION = "location"
DEFAULT_BUDGET_MS = 1000  # as the shim's (``lintaid_client.hook``), which cannot be imported yet
RESERVE_S = 0.25  # of the budget, kept for the shim when the interpreter must be asked
# What the interpreter is asked, with site, when the location is unknown or stale: the folder
# ``lintaid_client`` is imported from, then what tells that install apart from the next.
LOCATE = (
    "import os, lintaid_client\n"
    "folder = os.path.dirname(os.path.dirname(os.path.abspath(lintaid_client.__file__)))\n"
    "stamp = ''\n"
    "try:\n"
    "    from importlib.metadata import distribution\n"
    "    stamp = str(getattr(distribution('lintaid'), '_path', '') or '')\n"
    "except Exception:\n"
    "    pass\n"
    "print(folder)\n"
    "print(stamp if os.path.isdir(stamp) else\n"
    "      os.path.join(folder, 'lintaid_client', 'hook.py'))\n"
)


def _read(path: str) -> str | None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        return os.read(fd, 1 << 16).decode("utf-8", "surrogateescape")
    except OSError:
        return None
    finally:
        os.close(fd)


def _stamp(path: str) -> str | None:
    """What changes when ``path`` is written anew: its inode and times."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return f"{st.st_ino} {st.st_mtime_ns} {st.st_ctime_ns}"


def known(here: str, executable: str) -> str | None:
    """The folder holding ``lintaid_client`` for ``executable``, as ``location`` in ``here``
    says, while the install it names is still the one there; None otherwise."""
    text = _read(os.path.join(here, LOCATION))
    if text is None:
        return None
    lines = text.split("\n")
    if len(lines) < 5 or lines[0] != FORMAT or lines[1] != executable:
        return None
    folder, stamp_path, stamp = lines[2], lines[3], lines[4]
    if not folder or _stamp(stamp_path) != stamp:
        return None
    return folder


class TooSlow(Exception):
    """The interpreter did not say where its lintaid is in the time given."""


def locate(here: str, executable: str, timeout: float) -> str | None:
    """Ask ``executable`` (with site) where its lintaid is, and keep the answer in ``here``;
    None when it has none; ``TooSlow`` when it did not answer within ``timeout`` seconds."""
    import subprocess

    try:
        proc = subprocess.run([executable, "-I", "-c", LOCATE], stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise TooSlow(f"{executable} took over {timeout:.1f}s to say where lintaid is") from None
    except (OSError, subprocess.SubprocessError):
        return None
    lines = proc.stdout.decode("utf-8", "surrogateescape").splitlines()
    if proc.returncode != 0 or len(lines) < 2 or not os.path.isabs(lines[0]):
        _forget(here)
        return None
    folder, stamp_path = lines[0], lines[1]
    stamp = _stamp(stamp_path)
    if stamp is not None:
        _write(here, "\n".join([FORMAT, executable, folder, stamp_path, stamp, ""]))
    return folder


def rescan(here: str, executable: str) -> str | None:
    """After a reinstall in the same environment: find lintaid again from the site folder the
    last location named, by what pip wrote there (one ``lintaid-*.dist-info``, and the package
    itself, or setuptools' editable finder or a ``.pth`` naming the folder that holds it),
    without starting an interpreter; keep the answer. None when that does not find it."""
    text = _read(os.path.join(here, LOCATION))
    lines = text.split("\n") if text else []
    if len(lines) < 5 or lines[0] != FORMAT or lines[1] != executable:
        return None
    site = os.path.dirname(lines[3])
    try:
        names = os.listdir(site)
    except OSError:
        return None
    dists = [n for n in names if n.startswith("lintaid-") and n.endswith(".dist-info")]
    if len(dists) != 1:
        return None
    stamp_path = os.path.join(site, dists[0])
    folder = site if _holds_shim(site) else next(
        (f for f in (_named_in(os.path.join(site, n)) for n in sorted(names)
                     if "lintaid" in n and n.endswith((".pth", "_finder.py"))) if f), None)
    stamp = _stamp(stamp_path)
    if folder is None or stamp is None:
        return None
    _write(here, "\n".join([FORMAT, executable, folder, stamp_path, stamp, ""]))
    return folder


def _holds_shim(folder: str) -> bool:
    return os.path.isfile(os.path.join(folder, "lintaid_client", "hook.py"))


def _named_in(path: str) -> str | None:
    """The folder holding ``lintaid_client`` that a ``.pth`` file (a line naming the folder)
    or setuptools' editable finder (``MAPPING``: package -> its folder) names."""
    text = _read(path) or ""
    if path.endswith(".pth"):
        return next((line.strip() for line in text.splitlines()
                     if os.path.isabs(line.strip()) and _holds_shim(line.strip())), None)
    for line in text.splitlines():
        if line.startswith("MAPPING"):
            import ast

            try:
                mapping = ast.literal_eval(line.split("=", 1)[1].strip())
            except (ValueError, SyntaxError):
                return None
            target = mapping.get("lintaid_client") if isinstance(mapping, dict) else None
            if isinstance(target, str) and _holds_shim(os.path.dirname(target)):
                return os.path.dirname(target)
    return None


def found(here: str, executable: str) -> str | None:
    """Where the launcher in ``here`` finds the shim for ``executable`` now: a known location
    whose shim is there, else None (nothing was found, or the interpreter was not asked
    since lintaid moved)."""
    folder = known(here, executable)
    if folder and os.path.isfile(os.path.join(folder, "lintaid_client", "hook.py")):
        return folder
    return None


def _write(here: str, text: str) -> None:
    """Replace ``location`` atomically; a folder that cannot be written is no failure (the
    next run asks again)."""
    tmp = os.path.join(here, f".{LOCATION}.{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(fd, text.encode("utf-8", "surrogateescape"))
        finally:
            os.close(fd)
        os.replace(tmp, os.path.join(here, LOCATION))
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass


def _forget(here: str) -> None:
    try:
        os.unlink(os.path.join(here, LOCATION))
    except OSError:
        pass


def _budget_s() -> float:
    try:
        ms = int(os.environ.get("LINTAID_HOOK_TIMEOUT_MS", DEFAULT_BUDGET_MS))
    except ValueError:
        ms = DEFAULT_BUDGET_MS
    return min(max(ms, 200), 60_000) / 1000.0


def main() -> None:
    started = time.monotonic()
    here = os.path.dirname(os.path.abspath(__file__))
    executable = sys.executable
    budget = _budget_s()
    folder = known(here, executable)
    asked = False
    why = (f"no lintaid is installed for {executable}: install it there again, or run "
           "`lintaid install CLIENT` with the lintaid you use now")
    for attempt in range(2):
        if folder is None and attempt == 0:  # reinstalled where it was: look there first
            folder = rescan(here, executable)
        if folder is None:  # elsewhere, or a first run: ask once, within the budget
            asked = True
            try:
                folder = locate(here, executable, max(budget - RESERVE_S, 0.1))
            except TooSlow as err:
                why = f"{err}; this event was not recorded, the next one asks again"
                break
        if folder is None:
            break
        sys.path.insert(0, folder)
        try:
            from lintaid_client import hook
        except ImportError:
            sys.path.remove(folder)
            sys.modules.pop("lintaid_client", None)
            folder = None
            if attempt == 0:
                _forget(here)
            continue
        if asked:  # the shim keeps to what is left of the budget
            left = budget - (time.monotonic() - started)
            os.environ["LINTAID_HOOK_TIMEOUT_MS"] = str(int(max(left, 0.2) * 1000))
        hook.main()
        return
    os.write(2, f"lintaid: {why}\n".encode("utf-8", "surrogateescape"))
    os.write(1, b"{}\n")
    os._exit(0)


if __name__ == "__main__":
    main()
