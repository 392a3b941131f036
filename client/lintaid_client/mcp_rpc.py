"""The MCP stdio transport of ``lintaid-mcp``: JSON-RPC 2.0, one message per line.

Standard library only, and nothing heavy: this is all that runs before the ``initialize``
answer. The tools themselves come from a factory called on the first ``tools/list`` or
``tools/call``, so their imports wait until then.

Threads: the reading thread answers everything quick at once (``initialize``, ``ping``,
``tools/list``, every error); tool calls (and batches) go, in arrival order, to one worker
thread, so a slow daemon never holds up a ``ping``. Answers may therefore leave out of order;
their ids match. On stdin EOF the server stops reading, lets the worker finish what it was
given (bounded), and returns.

Only JSON-RPC messages are ever written to ``out``; logs go to ``log`` (stderr, when asked).
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable, Mapping
from typing import IO, Any, Final, Protocol

PROTOCOL_VERSIONS: Final = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
"""The revisions this server speaks, oldest first; ``initialize`` picks one."""
LATEST: Final = PROTOCOL_VERSIONS[-1]

PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603

MAX_LINE_BYTES: Final = 16 * 1024 * 1024
DRAIN_SECONDS: Final = 30.0
"""How long, after stdin EOF, the worker may still take to answer what it was given."""

# Fields of a tool and of a tool result that a revision introduced; older peers never see them.
_TOOL_FIELDS_SINCE: Final = {"annotations": "2025-03-26", "title": "2025-06-18",
                             "outputSchema": "2025-06-18"}
_RESULT_FIELDS_SINCE: Final = {"structuredContent": "2025-06-18"}


class Tools(Protocol):
    """What the server needs from its tools (``mcp_tools.Toolbox``)."""

    def list(self) -> list[dict[str, Any]]:
        """Every tool as ``tools/list`` shows it (newest revision's fields)."""
        ...

    def known(self, name: str) -> bool: ...

    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """A ``CallToolResult``; a refused call is one with ``isError: true``, not a raise."""
        ...


class RpcError(Exception):
    """A JSON-RPC error answer."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


class Log:
    """Lines on a stream (stderr) at or above a level; silent when no level is set."""

    LEVELS: Final = {"debug": 10, "info": 20, "warning": 30, "error": 40}

    def __init__(self, level: str | None, stream: IO[str] | None) -> None:
        self.threshold = self.LEVELS.get((level or "").strip().lower(), 100)
        self.stream = stream

    def enabled(self, level: str) -> bool:
        return self.stream is not None and self.LEVELS[level] >= self.threshold

    def __call__(self, level: str, message: str, *, trace: bool = False) -> None:
        if not self.enabled(level):
            return
        if trace:
            import traceback

            message = f"{message}\n{traceback.format_exc().rstrip()}"
        try:
            assert self.stream is not None
            self.stream.write(f"lintaid-mcp {level}: {message}\n")
            self.stream.flush()
        except (OSError, ValueError):
            pass


def supports(version: str, minimum: str) -> bool:
    """Whether ``version`` (one of ours) is ``minimum`` or newer."""
    return PROTOCOL_VERSIONS.index(version) >= PROTOCOL_VERSIONS.index(minimum)


def _trim(entry: dict[str, Any], since: Mapping[str, str], version: str) -> dict[str, Any]:
    """``entry`` without the fields ``version`` does not know."""
    return {k: v for k, v in entry.items() if k not in since or supports(version, since[k])}


def _valid_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _error(rid: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": rid if _valid_id(rid) else None, "error": error}


class Server:
    """One MCP session over a pair of byte streams.

    ``tools``: a factory, called once, on the first request that needs the tools.
    """

    def __init__(self, *, name: str, version: str, instructions: str,
                 tools: Callable[[], Tools], out: IO[bytes], log: Log) -> None:
        self.info = {"name": name, "version": version}
        self.instructions = instructions
        self.protocol_version = LATEST  # until initialize says otherwise
        self.client_name: str | None = None  # the peer's ``clientInfo.name``, once it said
        self.initialized = False
        self._make_tools = tools
        self._tools: Tools | None = None
        self._tools_lock = threading.Lock()
        self._out = out
        self._out_lock = threading.Lock()
        self.log = log
        # The worker's queue; ``None`` asks it to stop. Ids of queued and running tool calls
        # are kept so a cancellation can skip or silence them.
        self._jobs: deque[tuple[Any, Callable[[], Any]] | None] = deque()
        self._jobs_ready = threading.Condition()
        self._active: set[Any] = set()
        self._cancelled: set[Any] = set()
        self._worker: threading.Thread | None = None

    # -- the loop -----------------------------------------------------------------------
    def serve(self, stdin: IO[bytes]) -> None:
        """Answer messages until stdin ends; then let the worker finish and return."""
        while True:
            line = stdin.readline(MAX_LINE_BYTES + 1)
            if not line:
                break
            if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
                while line and not line.endswith(b"\n"):  # skip the rest of it
                    line = stdin.readline(MAX_LINE_BYTES)
                self._send(_error(None, INVALID_REQUEST,
                                  f"message larger than {MAX_LINE_BYTES} bytes"))
                continue
            self.handle_line(line)
        self.log("debug", "stdin closed")
        self._stop_worker(DRAIN_SECONDS)

    def handle_line(self, line: bytes) -> None:
        if not line.strip():
            return
        try:
            message = json.loads(line)
        except (ValueError, RecursionError) as err:  # UnicodeDecodeError is a ValueError
            self._send(_error(None, PARSE_ERROR, f"Parse error: {err}"))
            return
        if isinstance(message, list):
            if not message:
                self._send(_error(None, INVALID_REQUEST, "Invalid Request: empty batch"))
            else:
                self._submit(None, lambda: self._answer_batch(message))
            return
        if (isinstance(message, dict) and message.get("method") == "tools/call"
                and _valid_id(message.get("id")) and message.get("jsonrpc") == "2.0"):
            rid = message["id"]
            self._submit(rid, lambda: self._answer(message))
            return
        reply = self._answer(message)
        if reply is not None:
            self._send(reply)

    def _answer_batch(self, messages: list[Any]) -> list[dict[str, Any]] | None:
        replies = [r for r in (self._answer(m) for m in messages) if r is not None]
        return replies or None

    # -- one message ----------------------------------------------------------------------
    def _answer(self, message: Any) -> dict[str, Any] | None:
        """The answer to one message (``None`` for a notification or a response)."""
        if not isinstance(message, dict):
            return _error(None, INVALID_REQUEST, "Invalid Request: not a JSON-RPC object")
        rid = message.get("id")
        if "method" not in message:
            if "result" in message or "error" in message:
                self.log("debug", f"ignored a response to id {rid!r}: we send no requests")
                return None
            return _error(rid, INVALID_REQUEST, "Invalid Request: no 'method'")
        method, params = message["method"], message.get("params")
        if message.get("jsonrpc") != "2.0":
            return _error(rid, INVALID_REQUEST, "Invalid Request: 'jsonrpc' must be \"2.0\"")
        if not isinstance(method, str):
            return _error(rid, INVALID_REQUEST, "Invalid Request: 'method' must be a string")
        if "id" not in message:
            self._notification(method, params)
            return None
        if not _valid_id(rid):
            return _error(None, INVALID_REQUEST,
                          "Invalid Request: 'id' must be a string or an integer")
        if params is not None and not isinstance(params, dict):
            return _error(rid, INVALID_PARAMS, "Invalid params: 'params' must be an object")
        try:
            result = self._request(method, params or {})
        except RpcError as err:
            return _error(rid, err.code, err.message, err.data)
        except Exception as err:  # a bug here must cost one answer, never the session
            self.log("error", f"{method} failed", trace=True)
            return _error(rid, INTERNAL_ERROR, f"Internal error: {type(err).__name__}")
        return {"jsonrpc": "2.0", "id": rid, "result": result}

    def _request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "initialize":
            return self._initialize(params)
        if method == "ping":
            return {}
        if method == "tools/list":
            return {"tools": [_trim(t, _TOOL_FIELDS_SINCE, self.protocol_version)
                              for t in self.tools().list()]}
        if method == "tools/call":
            name, arguments = params.get("name"), params.get("arguments")
            if not isinstance(name, str):
                raise RpcError(INVALID_PARAMS, "Invalid params: 'name' must be a string")
            if arguments is not None and not isinstance(arguments, dict):
                raise RpcError(INVALID_PARAMS, "Invalid params: 'arguments' must be an object")
            tools = self.tools()
            if not tools.known(name):
                raise RpcError(INVALID_PARAMS, f"Unknown tool: {name}")
            result = tools.call(name, arguments or {})
            return _trim(result, _RESULT_FIELDS_SINCE, self.protocol_version)
        raise RpcError(METHOD_NOT_FOUND, "Method not found", method)

    def _initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        asked = params.get("protocolVersion")
        if not isinstance(asked, str):
            raise RpcError(INVALID_PARAMS, "Invalid params: 'protocolVersion' must be a string")
        self.protocol_version = asked if asked in PROTOCOL_VERSIONS else LATEST
        client = params.get("clientInfo")
        name = client.get("name") if isinstance(client, dict) else None
        if isinstance(name, str) and name.strip():
            self.client_name = name.strip()
        self.log("info", f"initialize: client {client!r} asked {asked!r}, "
                         f"answering {self.protocol_version}")
        return {
            "protocolVersion": self.protocol_version,
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": self.info,
            "instructions": self.instructions,
        }

    def _notification(self, method: str, params: Any) -> None:
        if method == "notifications/initialized":
            self.initialized = True
        elif method == "notifications/cancelled" and isinstance(params, dict):
            rid = params.get("requestId")
            with self._jobs_ready:
                if _valid_id(rid) and rid in self._active:
                    self._cancelled.add(rid)
                    self.log("info", f"request {rid!r} cancelled")
        else:
            self.log("debug", f"ignored notification {method!r}")

    def tools(self) -> Tools:
        with self._tools_lock:
            if self._tools is None:
                self._tools = self._make_tools()
            return self._tools

    # -- output ---------------------------------------------------------------------------
    def _send(self, message: dict[str, Any] | list[dict[str, Any]]) -> None:
        try:
            data = json.dumps(message, separators=(",", ":"), allow_nan=False)
        except (TypeError, ValueError) as err:  # NaN or a stray object in a result
            self.log("error", f"answer not serialisable: {err}")
            rid = message.get("id") if isinstance(message, dict) else None
            data = json.dumps(_error(rid, INTERNAL_ERROR, "Internal error: result not JSON"))
        with self._out_lock:
            try:
                self._out.write(data.encode("ascii") + b"\n")
                self._out.flush()
            except (OSError, ValueError):  # the client is gone; stdin EOF ends the loop
                self.log("debug", "stdout closed")

    # -- the worker -----------------------------------------------------------------------
    def _submit(self, rid: Any, job: Callable[[], Any]) -> None:
        with self._jobs_ready:
            if rid is not None:
                self._active.add(rid)
            self._jobs.append((rid, job))
            self._jobs_ready.notify()
            if self._worker is None:
                self._worker = threading.Thread(target=self._work, name="lintaid-mcp-tools",
                                                daemon=True)
                self._worker.start()

    def _work(self) -> None:
        while True:
            with self._jobs_ready:
                while not self._jobs:
                    self._jobs_ready.wait()
                item = self._jobs.popleft()
                if item is None:
                    return
                rid, job = item
                skip = rid in self._cancelled
            reply = None if skip else job()
            with self._jobs_ready:
                self._active.discard(rid)
                if rid in self._cancelled:
                    self._cancelled.discard(rid)
                    reply = None  # the client no longer wants it
            if reply is not None:
                self._send(reply)

    def _stop_worker(self, timeout: float) -> None:
        with self._jobs_ready:
            worker = self._worker
            self._jobs.append(None)
            self._jobs_ready.notify()
        if worker is not None:
            worker.join(timeout)
