"""``lintaid-hook CLIENT EVENT``: hand one agent event to the daemon, print what to inject.

Contract with the agent: read one JSON object on stdin, print one JSON object on stdout
(``{}`` when there is nothing to say), exit 0, and finish within the budget
(``LINTAID_HOOK_TIMEOUT_MS``, default 1000 ms) whatever happens. When the daemon is down or
slow the event goes to the spool, so no capture is lost, and (unless
``LINTAID_NO_AUTOSTART=1``) the daemon is started detached.

This runs on every agent event, registered as ``python -I -S /abs/lintaid_client/hook.py``:
no site start-up, and only the standard library's cheapest parts on the path that talks to
the daemon — ZMTP by hand over the ipc socket (``zmtp``), the envelope as JSON built around
stdin's bytes, which are forwarded unparsed (the C ``_json`` scanner reads the reply), and
``_signal`` for the budget. Spooling (the daemon is down) happens in a detached child after
the answer is printed, so redaction and file writing never cost the agent's wait.
"""

import os
import sys

if __name__ == "__main__" and __package__ in (None, ""):
    # Run by path without site: make the package importable from beside this file.
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import _json
import _signal
from time import monotonic

from lintaid_client import locate, zmtp

DEFAULT_BUDGET_MS = 1000
MAX_STDIN_BYTES = 8 * 1024 * 1024
RESERVE_S = 0.05  # kept back from the budget for printing after a failed round trip
GRACE_S = 0.2  # how long the last-resort exit waits to hear that keeping the event failed
CONTENT_JSON = b"application/json"  # as protocol.CONTENT_JSON, without importing it
PROTOCOL = 1
EMPTY = "{}"


class _Context:
    """What the C scanner reads from a decoder; strict JSON, plain dicts."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int

    @staticmethod
    def parse_constant(name: str) -> float:
        raise ValueError(f"{name} is not JSON")


_scan = _json.make_scanner(_Context)  # type: ignore[arg-type]  # any object with these fields


def loads(text: str) -> object:
    """One JSON value (surrounding whitespace allowed); ValueError for anything else."""
    start = len(text) - len(text.lstrip())
    try:
        value, end = _scan(text, start)
    except StopIteration:
        raise ValueError("not JSON") from None
    if text[end:].strip():
        raise ValueError("extra data after the JSON value")
    return value


def budget_seconds() -> float:
    try:
        ms = int(os.environ.get("LINTAID_HOOK_TIMEOUT_MS", DEFAULT_BUDGET_MS))
    except ValueError:
        ms = DEFAULT_BUDGET_MS
    return min(max(ms, 200), 60_000) / 1000.0


# What the last-resort exit needs to keep the event (set once stdin is read), and whether the
# answer is printed already.
_event: tuple[str, str, bytes, tuple[str, ...]] | None = None
_names: tuple[str, str, tuple[str, ...]] | None = None  # (client, event, root keys)
_stdin: list[bytes] = []  # what was read of stdin so far
_answered = False


def _bail(*_: object) -> None:
    """Last-resort guard: the budget ran out somewhere unexpected (a stopped daemon on a
    loaded machine, a slow disk). Answer, hand the event to a detached child that keeps it
    as the normal path would (spooled, the daemon started), and leave; a child that cannot
    be made, or that says within ``GRACE_S`` that it could not keep the event, is reported
    on stderr in one line."""
    global _answered
    try:
        if not _answered:
            _answered = True
            os.write(1, b"{}\n")
        found = _event or _finish_reading()
        if found is None:
            _warn("the hook's budget ran out before the event was read; it was not kept")
        else:
            _keep_detached(*found)
    finally:
        os._exit(0)


def _finish_reading() -> tuple[str, str, bytes, tuple[str, ...]] | None:
    """The event, when the budget ran out while stdin was being read (or before): the rest
    of it, if the agent finishes writing within ``GRACE_S``."""
    if _names is None:
        return None
    import select

    deadline = monotonic() + GRACE_S
    try:
        while True:
            left = deadline - monotonic()
            if left <= 0 or not select.select([0], [], [], left)[0]:
                return None  # the agent is still writing: nothing whole to keep
            chunk = os.read(0, 1 << 20)
            if not chunk:
                break  # end of input: the event is whole
            _stdin.append(chunk)
            if sum(map(len, _stdin)) > MAX_STDIN_BYTES:
                return None
    except OSError:
        return None
    data = b"".join(_stdin)
    return (*_names[:2], data, _names[2]) if data else None


def _keep_detached(provider: str, event: str, data: bytes, root_keys: tuple[str, ...]) -> None:
    try:
        read_end, write_end = os.pipe()
        pid = os.fork()
    except OSError as err:
        _warn(f"the hook's budget ran out and the event could not be kept ({err})")
        return
    if pid == 0:  # the child: no budget here
        os.close(read_end)
        said = b"ok"
        try:
            os.setsid()
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            payload = loads(data.decode("utf-8"))
            if isinstance(payload, dict):
                keep(_project(payload, root_keys), envelope(provider, event, data),
                     start=True, strict=True)
        except BaseException as err:
            said = f"no:{err}".encode("utf-8", "replace")[:500]
        finally:
            try:
                os.write(write_end, said)
            finally:
                os._exit(0)
    os.close(write_end)
    try:
        import select

        ready, _w, _x = select.select([read_end], [], [], GRACE_S)
        said = os.read(read_end, 500) if ready else b"ok"  # still at it: it will keep it
    except OSError:
        said = b"ok"
    finally:
        os.close(read_end)
    if said.startswith(b"no:"):
        _warn("the hook's budget ran out and the event could not be kept "
              f"({said[3:].decode('utf-8', 'replace')})")


def _warn(message: str) -> None:
    try:
        os.write(2, f"lintaid-hook: {message}\n".encode("utf-8", "replace"))
    except OSError:
        pass


def _name_ok(word: str) -> bool:
    return 0 < len(word) <= 64 and all(c.isalnum() or c in "-_." for c in word)


def envelope(provider: str, event: str, data: bytes) -> bytes:
    """The request, as JSON, around the agent's own bytes (the daemon parses them)."""
    rid = f"{os.getpid():x}-{os.urandom(4).hex()}"
    head = (f'{{"v":{PROTOCOL},"id":"{rid}","op":"hook","args":{{"provider":'
            f'{_json.encode_basestring_ascii(provider)},"event":'
            f'{_json.encode_basestring_ascii(event)},"payload":')
    return head.encode() + data + b"}}"


def _project(payload: dict[str, object], root_keys: tuple[str, ...] = ()) -> str:
    """The project the event belongs to: the first payload field that names an existing
    folder (``root_keys``, then ``cwd``; a list counts by its first entry), else this
    process's working directory."""
    for key in (*root_keys, "cwd"):
        value = payload.get(key)
        if isinstance(value, list) and value:
            value = value[0]
        if isinstance(value, str) and os.path.isdir(value):
            return locate.find_root(value)
    return locate.find_root(None)


class Outcome:
    """What one event came to: the text to print, and whether the event must be spooled."""

    def __init__(self, stdout: str = EMPTY, spool: bool = False, start: bool = False) -> None:
        self.stdout = stdout
        self.spool = spool
        self.start = start  # and start the daemon (nobody was listening)


def exchange(provider: str, event: str, data: bytes, *, budget: float | None = None,
             started: float | None = None,
             root_keys: tuple[str, ...] = ()) -> tuple[Outcome, str | None, bytes]:
    """Talk to the daemon for one event: (outcome, project root, request bytes)."""
    started = monotonic() if started is None else started
    budget = budget_seconds() if budget is None else budget
    if not data or len(data) > MAX_STDIN_BYTES:
        return Outcome(), None, b""
    try:
        payload = loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return Outcome(), None, b""
    if not isinstance(payload, dict):
        return Outcome(), None, b""
    root = _project(payload, root_keys)
    request = envelope(provider, event, data)
    remaining = budget - (monotonic() - started) - RESERVE_S
    if remaining <= 0.02:
        return Outcome(spool=True), root, request
    try:
        reply = zmtp.request(locate.endpoint(root), [CONTENT_JSON, request], timeout=remaining)
    except zmtp.Unavailable:
        return Outcome(spool=True, start=True), root, request
    except zmtp.TooLarge:
        _warn("the event is too large to hand over")
        return Outcome(), root, request
    except zmtp.ZmtpError as err:  # slow, went away, or not our daemon: keep the event
        _warn(f"daemon did not answer ({type(err).__name__}); event spooled")
        return Outcome(spool=True), root, request
    except OSError as err:  # the socket folder cannot be made or used
        _warn(str(err))
        return Outcome(spool=True), root, request
    return _read_reply(reply), root, request


def _read_reply(frames: list[bytes]) -> Outcome:
    try:
        message = loads(frames[-1].decode("utf-8"))
    except (UnicodeDecodeError, ValueError, IndexError):
        _warn("unreadable reply from the daemon; event spooled")
        return Outcome(spool=True)
    if not isinstance(message, dict):
        return Outcome(spool=True)
    if message.get("ok"):
        result = message.get("result")
        stdout = result.get("stdout") if isinstance(result, dict) else None
        return Outcome(stdout if isinstance(stdout, str) and stdout else EMPTY)
    error = message.get("error") if isinstance(message.get("error"), dict) else {}
    assert isinstance(error, dict)
    code, text = error.get("code"), error.get("message")
    _warn(f"{code}: {text}")
    if code == "unsupported_version":
        _warn("the daemon speaks another protocol; run `lintaid stop` to restart it")
        return Outcome(spool=True)
    return Outcome(spool=error.get("retryable") is True)


def keep(root: str, request: bytes, *, start: bool, strict: bool = False) -> None:
    """Spool the event (redacted) and, when nobody listens, start the daemon detached.

    Runs in a detached child in the hook process (after the answer is printed), or inline.
    ``strict``: a spool that fails raises (for a caller that reports it) instead of warning.
    """
    from pathlib import Path

    from lintaid_client import launch, spool

    message = loads(request.decode("utf-8"))
    assert isinstance(message, dict)
    project = Path(root)
    try:
        spool.write(project, "hook", message["args"])
    except OSError as err:  # disk full, read-only tree: say so once
        if strict:
            raise
        _warn(f"could not spool the event: {err}")
        return
    if start and os.environ.get("LINTAID_NO_AUTOSTART") != "1":
        launch.start_detached(project)


def answer(provider: str, event: str, data: bytes,
           root_keys: tuple[str, ...] = ()) -> dict[str, object]:
    """What the agent reads on stdout for one event whose stdin was ``data`` (in-process:
    spooling, if needed, happens before this returns)."""
    outcome, root, request = exchange(provider, event, data, root_keys=root_keys)
    if outcome.spool and root is not None:
        keep(root, request, start=outcome.start)
    value = loads(outcome.stdout)
    return value if isinstance(value, dict) else {}


def _detach_and_keep(root: str, request: bytes, start: bool) -> None:
    """Fork a child that spools and maybe starts the daemon; the parent returns at once."""
    try:
        pid = os.fork()
    except OSError:
        keep(root, request, start=start)
        return
    if pid:
        return
    try:  # the child: its own session, no inherited pipes, so the agent is not kept waiting
        os.setsid()
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        keep(root, request, start=start)
    finally:
        os._exit(0)


def _read_stdin() -> bytes:
    chunks = _stdin  # kept where the last-resort exit can finish reading
    size = 0
    while size <= MAX_STDIN_BYTES:
        chunk = os.read(0, 1 << 20)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def main(argv: list[str] | None = None) -> None:
    global _event, _answered, _names
    started = monotonic()
    argv = sys.argv[1:] if argv is None else argv
    budget = budget_seconds()
    root_keys: list[str] = []
    while len(argv) >= 2 and argv[0] == "--root-key":
        root_keys.append(argv[1])
        argv = argv[2:]
    usable = len(argv) == 2 and _name_ok(argv[0]) and _name_ok(argv[1])
    if usable:  # before the budget runs: its last-resort exit needs to know the event
        _names = (argv[0], argv[1], tuple(root_keys))
    _signal.signal(_signal.SIGALRM, _bail)
    _signal.setitimer(_signal.ITIMER_REAL, budget)
    if not usable:
        _warn("usage: lintaid-hook [--root-key FIELD]... CLIENT EVENT   "
              "(e.g. lintaid-hook claude-code Stop)")
        _bail()
    outcome, root, request = Outcome(), None, b""
    try:
        data = _read_stdin()
        if data and len(data) <= MAX_STDIN_BYTES:
            _event = (argv[0], argv[1], data, tuple(root_keys))
        outcome, root, request = exchange(argv[0], argv[1], data, budget=budget,
                                          started=started, root_keys=tuple(root_keys))
    except Exception as err:  # fail open: the agent must never be blocked by memory
        _warn(f"{type(err).__name__}: {err}")
    _signal.setitimer(_signal.ITIMER_REAL, 0)
    _answered = True
    os.write(1, outcome.stdout.encode("utf-8", "surrogateescape") + b"\n")
    if outcome.spool and root is not None:
        _detach_and_keep(root, request, outcome.start)
    os._exit(0)  # skip interpreter teardown: it only costs time here


if __name__ == "__main__":
    main()
