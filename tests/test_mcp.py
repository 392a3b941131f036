"""``lintaid-mcp`` end to end: the MCP SDK's stdio client against the real shim (a subprocess)
and a real daemon, the raw JSON-RPC contract line by line, and the MCP Inspector CLI when node
is available.

Also the shim's process contract: it answers ``initialize`` and ``tools/list`` with the daemon
down and without loading pyzmq (the first tool call starts the daemon), a slow daemon never
holds up ``ping``, and it exits on stdin EOF (after answering what it was given) and when its
parent dies.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import anyio
import psutil
import pytest
from mcp import Client, ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError
from mcp.types import methods as spec

from lintaid_client import connection, mcp_rpc, ops, paths
from lintaid_client.mcp import resolve_root
from tests.conftest import REPO, lintaid_env, start_daemon, stop_daemon, wait_for

pytestmark = pytest.mark.slow

TOOL_OPS = {op.tool: op for op in ops.OPS.values() if op.tool}
TOOLS = set(TOOL_OPS)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def shim_command(root: Path | None, *extra: str) -> list[str]:
    project = ["--project", str(root)] if root is not None else []
    return [sys.executable, "-m", "lintaid_client.mcp", *project, *extra]


def params(root: Path | None, *extra: str, cwd: Path | None = None,
           **env: str) -> StdioServerParameters:
    cmd = shim_command(root, *extra)
    return StdioServerParameters(command=cmd[0], args=cmd[1:], env=lintaid_env(**env),
                                 cwd=str(cwd or root))


async def call(client: Client, tool: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
    result = await client.call_tool(tool, args or {})
    assert not result.is_error, result.content
    assert result.structured_content is not None
    # The text block carries the same value, for clients that read only text.
    assert json.loads(result.content[0].text) == result.structured_content  # type: ignore[union-attr]
    return result.structured_content


async def call_error(client: Client, tool: str, args: dict[str, Any]) -> str:
    result = await client.call_tool(tool, args)
    assert result.is_error, result.structured_content
    assert result.structured_content is None
    return " ".join(getattr(c, "text", "") for c in result.content)


# -- the tools, from the declarations ---------------------------------------------------------
@pytest.mark.anyio
async def test_tools_are_the_declared_ops_and_need_no_daemon(project: Path) -> None:
    async with Client(params(project)) as client:
        assert client.server_info is not None and client.server_info.name == "lintaid"
        assert client.instructions and "supersede_memory" in client.instructions
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == TOOLS == {"search", "get_memory", "list_memories", "add_memory",
                                   "forget_memory", "supersede_memory", "memory_history",
                                   "memory_status", "confirm_memory", "review_queue",
                                   "review_decide", "board_open", "board_list", "board_info",
                                   "board_post", "board_read", "board_get", "board_search"}
    for name, tool in tools.items():
        op = TOOL_OPS[name]
        assert tool.description == op.help
        assert tool.input_schema == ops.tool_schema(op)
        assert tool.input_schema["additionalProperties"] is False
        hidden = {a.name for a in op.args if not a.mcp}
        assert not hidden & set(tool.input_schema["properties"]), name
        assert tool.output_schema and tool.output_schema["type"] == "object", name
        assert tool.annotations is not None
        assert tool.annotations.read_only_hint is (op.kind == ops.READ)
    assert tools["search"].input_schema["required"] == ["query"]
    assert tools["search"].input_schema["properties"]["top_k"]["maximum"] == ops.MAX_TOP_K
    assert tools["add_memory"].input_schema["required"] == ["content"]  # its one_of's only
    assert "exactly one of new_id or content" in (
        tools["supersede_memory"].input_schema["properties"]["content"]["description"])
    # Listing the tools neither started nor touched a daemon.
    assert connection.read_status(project) is None


@pytest.mark.anyio
async def test_add_search_supersede_history_forget(daemon: Path) -> None:
    async with Client(params(daemon)) as client:
        added = await call(client, "add_memory",
                           {"content": "The payments API uses idempotency keys stored 24 hours."})
        old = added["id"]
        assert added == {"id": old, "event": "ADD", "supersedes": None}

        found = await call(client, "search", {"query": "payments idempotency keys"})
        assert [r["id"] for r in found["results"]] == [old]
        line = found["results"][0]
        assert line["status"] == "current" and line["store"] == "memory"
        assert line["historical"] is False and line["superseded_by"] is None
        assert line["location"] is None
        assert line["summary"].startswith("The payments API uses idempotency keys")
        assert len(line["summary"]) <= 160 and line["score"] > 0

        record = await call(client, "get_memory", {"id": old})
        assert record["id"] == old and record["status"] == "current"
        assert record["content"] == "The payments API uses idempotency keys stored 24 hours."
        assert record["source"] == "mcp" and record["user_id"] == "local"
        assert isinstance(record["claims"], list) and isinstance(record["relations"], list)

        sup = await call(client, "supersede_memory", {
            "old_id": old, "content": "The payments API keeps idempotency keys 72 hours."})
        new = sup["new_id"]
        assert sup["old_id"] == old and new != old

        found = await call(client, "search", {"query": "payments idempotency keys"})
        assert [r["id"] for r in found["results"]] == [new]
        assert found["results"][0]["status"] == "current"
        assert found["hidden"] >= 1 and found["history"] is False
        past = await call(client, "search", {"query": "payments idempotency keys",
                                             "history": True})
        assert past["history"] is True
        lines = {r["id"]: r for r in past["results"]}
        assert lines[old]["status"] == "superseded" and lines[old]["historical"] is True
        assert lines[old]["superseded_by"] == new
        assert lines[new]["historical"] is False

        history = await call(client, "memory_history", {"id": old})
        assert history["id"] == old
        events = [e["event"] for e in history["events"]]
        assert events[0] == "ADD" and "SUPERSEDE" in events
        assert {e["actor"] for e in history["events"]} == {"mcp"}
        assert history["events"][-1]["detail"].get("by") == new
        new_history = await call(client, "memory_history", {"id": new})
        assert new_history["events"][0]["event"] == "ADD"

        listed = await call(client, "list_memories", {"limit": 10})
        assert [r["id"] for r in listed["results"]] == [new] and listed["count"] == 1

        forgot = await call(client, "forget_memory", {"id": new, "reason": "wrong"})
        assert forgot["id"] == new
        found = await call(client, "search", {"query": "payments idempotency keys"})
        assert new not in [r["id"] for r in found["results"]]
        assert "not_found" in await call_error(client, "get_memory", {"id": new})

        status = await call(client, "memory_status")
        assert status["root"] == str(daemon) and status["pid"]
        assert status["version"] and status["memory"]["forgotten"] >= 1


@pytest.mark.anyio
async def test_a_misspelled_argument_is_refused_and_nothing_is_superseded(daemon: Path) -> None:
    async with Client(params(daemon)) as client:
        keep = (await call(client, "add_memory", {"content": "Builds run on the blue runners."}))
        other = (await call(client, "add_memory", {"content": "Releases ship on Thursdays."}))
        message = await call_error(client, "supersede_memory", {
            "old_id": keep["id"], "new_id": other["id"], "contnet": "Builds run on green."})
        assert "unknown argument(s) 'contnet'" in message and "content, new_id" in message

        record = await call(client, "get_memory", {"id": keep["id"]})
        assert record["status"] == "current" and record["superseded_by"] is None
        events = [e["event"] for e in (await call(client, "memory_history",
                                                  {"id": keep["id"]}))["events"]]
        assert events == ["ADD"]
        found = await call(client, "search", {"query": "builds blue runners"})
        assert found["results"][0]["id"] == keep["id"] and found["hidden"] == 0

        # Arguments the op has but the tool does not show are unknown to agents too.
        for tool, args in (("search", {"query": "builds", "user_id": "someone-else"}),
                           ("add_memory", {"content": "Spoofed.", "actor": "admin"}),
                           ("list_memories", {"include_hidden": True})):
            message = await call_error(client, tool, args)
            assert "unknown argument" in message and "bad_request" in message, tool
        assert (await call(client, "list_memories"))["count"] == 2


@pytest.mark.anyio
async def test_refusals_are_tool_errors_and_the_shim_survives_them(daemon: Path) -> None:
    async with Client(params(daemon)) as client:
        assert "not_found" in await call_error(client, "get_memory", {"id": "m-nope"})
        assert "not_found" in await call_error(client, "memory_history", {"id": "m-nope"})
        assert "not_found" in await call_error(client, "forget_memory", {"id": "m-nope"})
        assert "exactly one of 'new_id' or 'content'" in await call_error(
            client, "supersede_memory", {"old_id": "m-nope"})
        assert "not_found" in await call_error(
            client, "supersede_memory", {"old_id": "m-nope", "content": "x y z"})
        assert "'content' is required" in await call_error(client, "add_memory", {})
        assert "'content' must not be empty" in await call_error(
            client, "add_memory", {"content": " \n "})
        assert "'content' must not be empty" in await call_error(
            client, "supersede_memory", {"old_id": "m-nope", "content": ""})
        assert "'query' is required" in await call_error(client, "search", {})
        assert "as_of" in await call_error(
            client, "search", {"query": "x", "as_of": "next tuesday"})
        assert "'top_k' must be between 1 and 100" in await call_error(
            client, "search", {"query": "x", "top_k": 0})
        assert "'top_k' must be an integer" in await call_error(
            client, "search", {"query": "x", "top_k": "5"})
        assert "'store' must be one of" in await call_error(
            client, "search", {"query": "x", "store": "elsewhere"})
        # An unknown tool is a protocol error, as the MCP spec has it.
        with pytest.raises(MCPError) as err:
            await client.call_tool("delete_everything", {})
        assert err.value.code == mcp_rpc.INVALID_PARAMS and "Unknown tool" in err.value.error.message
        assert (await call(client, "search", {"query": "anything"}))["results"] == []


@pytest.mark.anyio
async def test_time_arguments_take_iso_8601_or_epoch_seconds(daemon: Path) -> None:
    year_2100 = 4102444800.0  # 2100-01-01T00:00:00Z
    async with Client(params(daemon)) as client:
        for n, when in enumerate((year_2100, int(year_2100), str(year_2100),
                                  "2100-01-01T00:00:00Z", "2100-01-01T01:00:00+01:00",
                                  "2100-01-01")):
            added = await call(client, "add_memory", {
                "content": f"Feature flag number {n} expires at the turn of the century.",
                "expires_at": when})
            record = await call(client, "get_memory", {"id": added["id"]})
            assert record["expires_at"] == year_2100, when
        # as_of: before any of them existed nothing was believed; in 2099 all were.
        for before in ("2001-01-01T00:00:00Z", 978307200, "978307200", "2001-01-01"):
            then = await call(client, "search", {"query": "feature flag century",
                                                 "as_of": before})
            assert then["results"] == [], before
        later = await call(client, "search", {"query": "feature flag century", "top_k": 10,
                                              "as_of": "2099-06-01T12:00:00Z"})
        assert len(later["results"]) == 6
        for bad in ("next tuesday", "2100-13-01", True, [2100]):
            message = await call_error(client, "add_memory", {
                "content": "Never stored.", "expires_at": bad})
            assert "bad_request" in message and "expires_at" in message, bad
        assert (await call(client, "list_memories", {"limit": 100}))["count"] == 6


@pytest.mark.anyio
async def test_workspace_hits_carry_path_and_lines(project: Path) -> None:
    docs = project / "docs"
    docs.mkdir()
    (docs / "runbook.md").write_text(
        "# Runbook\n\nRestart the marmalade worker with `make marmalade-restart`.\n")
    start_daemon(project, env=lintaid_env(LINTAID_NO_WATCH="0"))
    try:
        async with Client(params(project)) as client:

            async def indexed() -> dict[str, Any]:
                while True:
                    found = await call(client, "search", {"query": "marmalade worker",
                                                          "store": "workspace"})
                    if found["results"]:
                        return found
                    await anyio.sleep(0.2)

            with anyio.fail_after(60):
                found = await indexed()
            hit = found["results"][0]
            assert hit["store"] == "workspace"
            assert hit["location"].startswith("docs/runbook.md:")
            start, end = hit["location"].rsplit(":", 1)[1].split("-")
            assert 1 <= int(start) <= int(end) <= 3
            assert "marmalade" in hit["summary"]
            memory_only = await call(client, "search", {"query": "marmalade worker",
                                                        "store": "memory"})
            assert memory_only["results"] == []
    finally:
        stop_daemon(project)


# -- the daemon: lazily started, down, slow --------------------------------------------------
@pytest.mark.anyio
async def test_initialize_with_the_daemon_down_then_first_call_starts_it(project: Path) -> None:
    assert connection.ping(project, timeout=0.3) is None
    try:
        # The low-level client this time: stdio_client and an explicit legacy handshake.
        async with stdio_client(params(project)) as (read, write), \
                ClientSession(read, write) as session:
            init = await session.initialize()
            assert init.protocol_version == mcp_rpc.LATEST
            assert {t.name for t in (await session.list_tools()).tools} == TOOLS
            # Neither initialize nor tools/list touched the daemon.
            assert connection.ping(project, timeout=0.3) is None
            assert connection.read_status(project) is None

            added = await session.call_tool("add_memory", {"content": "Lazy start works."})
            assert not added.is_error and added.structured_content is not None
            assert connection.ping(project) is not None
            found = await session.call_tool("search", {"query": "lazy start"})
            assert found.structured_content is not None
            assert [r["id"] for r in found.structured_content["results"]] == [
                added.structured_content["id"]]
    finally:
        stop_daemon(project)


@pytest.mark.anyio
async def test_daemon_down_is_a_tool_error_and_the_shim_recovers_when_it_runs(
        project: Path) -> None:
    try:
        async with Client(params(project, LINTAID_NO_AUTOSTART="1")) as client:
            message = await call_error(client, "search", {"query": "anything"})
            assert message.startswith("daemon_unavailable:")
            assert connection.read_status(project) is None  # it did not start one

            start_daemon(project)
            added = await call(client, "add_memory", {"content": "Written once it ran."})
            stop_daemon(project)
            assert "daemon_unavailable" in await call_error(client, "memory_status", {})

            start_daemon(project)
            found = await call(client, "search", {"query": "written once it ran"})
            assert [r["id"] for r in found["results"]] == [added["id"]]
    finally:
        stop_daemon(project)


def _daemon_pid(root: Path) -> int:
    status = connection.read_status(root)
    assert status is not None
    return int(status["pid"])


@pytest.mark.anyio
async def test_a_stalled_daemon_holds_up_tool_calls_but_never_ping(daemon: Path) -> None:
    pid = _daemon_pid(daemon)
    # mode="legacy": the initialize handshake, under which ping is still a method.
    async with Client(params(daemon, LINTAID_NO_AUTOSTART="1", LINTAID_MCP_TIMEOUT="60"),
                      mode="legacy") as client:
        await call(client, "add_memory", {"content": "The stall test's first record."})
        os.kill(pid, signal.SIGSTOP)  # the worker's connection is up; now nobody answers
        try:
            done: list[str] = []

            async def search() -> None:
                await call(client, "search", {"query": "stall test first record"})
                done.append("search")

            async with anyio.create_task_group() as tg:
                tg.start_soon(search)
                for _ in range(3):
                    await client.session.send_ping()  # answered while the search waits
                assert done == []  # the daemon is stopped: the search cannot have finished
                os.kill(pid, signal.SIGCONT)
            assert done == ["search"]
        finally:
            os.kill(pid, signal.SIGCONT)


@pytest.mark.anyio
async def test_a_daemon_that_does_not_answer_is_a_timeout_tool_error(daemon: Path) -> None:
    pid = _daemon_pid(daemon)
    async with Client(params(daemon, LINTAID_NO_AUTOSTART="1", LINTAID_MCP_TIMEOUT="1")) \
            as client:
        await call(client, "memory_status")
        os.kill(pid, signal.SIGSTOP)
        try:
            message = await call_error(client, "search", {"query": "anything"})
            assert message.startswith("daemon_timeout:")
        finally:
            os.kill(pid, signal.SIGCONT)
        assert (await call(client, "memory_status"))["pid"] == pid


# -- the raw protocol ------------------------------------------------------------------------
class RawShim:
    """The shim as a subprocess, spoken to one JSON-RPC line at a time."""

    def __init__(self, root: Path | None, *extra: str, env: dict[str, str] | None = None,
                 cwd: Path | None = None) -> None:
        self.proc = subprocess.Popen(shim_command(root, *extra), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     env=env or lintaid_env(), cwd=str(cwd or root))
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.next_id = 100

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def send(self, message: Any) -> None:
        assert self.proc.stdin is not None
        data = message if isinstance(message, bytes) else json.dumps(message).encode()
        self.proc.stdin.write(data + b"\n")
        self.proc.stdin.flush()

    def recv(self, timeout: float = 30) -> Any:
        line = self.lines.get(timeout=timeout)
        assert line is not None, "the shim closed stdout"
        return json.loads(line)

    def request(self, method: str, params: dict[str, Any] | None = None) -> Any:
        self.next_id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        reply = self.recv()
        assert reply["id"] == self.next_id, reply
        return reply

    def initialize(self, version: str = mcp_rpc.LATEST) -> Any:
        reply = self.request("initialize", {"protocolVersion": version, "capabilities": {},
                                            "clientInfo": {"name": "pytest", "version": "0"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return reply

    def close(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        return self.proc.wait(timeout=60)

    def __enter__(self) -> RawShim:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def test_jsonrpc_errors(project: Path) -> None:
    with RawShim(project) as shim:
        for bad in ({"id": 1, "method": "ping"},                        # no jsonrpc
                    {"jsonrpc": "1.0", "id": 1, "method": "ping"},
                    {"jsonrpc": "2.0", "id": 1, "method": 7},
                    {"jsonrpc": "2.0", "id": None, "method": "ping"},   # MCP: ids are not null
                    {"jsonrpc": "2.0", "id": 1.5, "method": "ping"},
                    {"jsonrpc": "2.0", "id": 1},                        # neither method nor result
                    "ping", 42, []):
            shim.send(bad)
            reply = shim.recv()
            assert reply["error"]["code"] == mcp_rpc.INVALID_REQUEST, (bad, reply)
            assert reply["jsonrpc"] == "2.0" and "result" not in reply
        assert shim.request("resources/list")["error"] == {
            "code": mcp_rpc.METHOD_NOT_FOUND, "message": "Method not found",
            "data": "resources/list"}
        assert shim.request("initialize", {})["error"]["code"] == mcp_rpc.INVALID_PARAMS
        assert shim.request("ping", [])["error"]["code"] == mcp_rpc.INVALID_PARAMS  # type: ignore[arg-type]
        for params in ({"arguments": {}}, {"name": 5}, {"name": "search", "arguments": [1]}):
            assert shim.request("tools/call", params)["error"]["code"] == mcp_rpc.INVALID_PARAMS
        unknown = shim.request("tools/call", {"name": "nope", "arguments": {}})
        assert unknown["error"] == {"code": mcp_rpc.INVALID_PARAMS, "message": "Unknown tool: nope"}
        # Unknown notifications and stray responses get no answer: the next line is ping's.
        shim.send({"jsonrpc": "2.0", "method": "notifications/whatever", "params": {"x": 1}})
        shim.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                   "params": {"requestId": 12345}})
        shim.send({"jsonrpc": "2.0", "id": "s1", "result": {}})
        assert shim.request("ping") == {"jsonrpc": "2.0", "id": shim.next_id, "result": {}}
        # A batch is answered as one array, notifications left out.
        shim.send([{"jsonrpc": "2.0", "id": "a", "method": "ping"},
                   {"jsonrpc": "2.0", "method": "notifications/initialized"},
                   {"jsonrpc": "2.0", "id": "b", "method": "nope"}])
        batch = shim.recv()
        assert [r["id"] for r in batch] == ["a", "b"]
        assert batch[0]["result"] == {} and batch[1]["error"]["code"] == mcp_rpc.METHOD_NOT_FOUND
        assert shim.close() == 0
        assert shim.lines.get(timeout=5) is None, "nothing but answers on stdout"


def test_cancelled_calls_are_not_answered_and_a_queued_one_never_runs(daemon: Path) -> None:
    pid = _daemon_pid(daemon)
    env = lintaid_env(LINTAID_NO_AUTOSTART="1", LINTAID_MCP_TIMEOUT="60")
    with RawShim(daemon, env=env) as shim:
        shim.initialize()
        assert shim.request("tools/call", {"name": "memory_status"})["result"]["isError"] is False
        os.kill(pid, signal.SIGSTOP)
        try:
            for rid, name, args in (("a", "search", {"query": "anything"}),
                                    ("b", "add_memory", {"content": "A cancelled write."})):
                shim.send({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                           "params": {"name": name, "arguments": args}})
            for rid in ("b", "a"):  # b waits behind a; a waits on the stopped daemon
                shim.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                           "params": {"requestId": rid, "reason": "changed my mind"}})
            assert shim.request("ping")["result"] == {}
        finally:
            os.kill(pid, signal.SIGCONT)
        # The worker answers in order: the first line now is c's, neither a's nor b's.
        shim.send({"jsonrpc": "2.0", "id": "c", "method": "tools/call",
                   "params": {"name": "list_memories", "arguments": {}}})
        reply = shim.recv()
        assert reply["id"] == "c"
        assert reply["result"]["structuredContent"]["count"] == 0  # b never ran


def test_parse_errors_have_a_null_id(project: Path) -> None:
    with RawShim(project) as shim:
        for line in (b"{not json", b"\xff\xfe garbage", b'{"jsonrpc": "2.0", "id": 1,'):
            shim.send(line)
            reply = shim.recv()
            assert reply["id"] is None and reply["error"]["code"] == mcp_rpc.PARSE_ERROR
        shim.send(b"")  # an empty line is no message
        assert shim.request("ping")["result"] == {}


@pytest.mark.parametrize("asked, answered", [
    *[(v, v) for v in mcp_rpc.PROTOCOL_VERSIONS],
    ("2099-01-01", mcp_rpc.LATEST), ("1.0", mcp_rpc.LATEST)])
def test_version_negotiation_and_shapes_match_the_sdk_models(
        shared_daemon: Path, asked: str, answered: str) -> None:
    """Every answer survives the SDK's own per-revision result models unchanged."""
    with RawShim(shared_daemon) as shim:
        init = shim.initialize(asked)["result"]
        assert init["protocolVersion"] == answered
        assert init["capabilities"] == {"tools": {"listChanged": False}}
        assert init["serverInfo"]["name"] == "lintaid" and init["instructions"]
        assert spec.serialize_server_result("initialize", answered, init) == init
        listed = shim.request("tools/list")["result"]
        assert spec.serialize_server_result("tools/list", answered, listed) == listed
        structured = mcp_rpc.supports(answered, "2025-06-18")
        assert all(("outputSchema" in t) is structured for t in listed["tools"])
        called = shim.request("tools/call", {"name": "add_memory", "arguments": {
            "content": f"Negotiated {answered} for {asked}."}})["result"]
        assert spec.serialize_server_result("tools/call", answered, called) == called
        assert called["isError"] is False and ("structuredContent" in called) is structured
        assert json.loads(called["content"][0]["text"])["event"] == "ADD"
        refused = shim.request("tools/call", {"name": "get_memory",
                                              "arguments": {"id": "m-nope"}})["result"]
        assert spec.serialize_server_result("tools/call", answered, refused) == refused
        assert refused["isError"] is True and "structuredContent" not in refused


def test_initialize_and_tools_list_load_nothing_heavy(project: Path) -> None:
    """In a fresh interpreter: the handshake and the listing load no pyzmq, msgpack, MCP SDK
    or pydantic; the first tool call loads pyzmq (so the check can tell; msgpack waits for
    the first message actually sent)."""
    code = f"""
import io, json, os, sys
os.environ["LINTAID_NO_AUTOSTART"] = "1"
from lintaid_client.mcp import build_server
from lintaid_client.mcp_rpc import Log

HEAVY = ("zmq", "msgpack", "mcp", "pydantic", "anyio", "lintaid")
def heavy():
    return sorted({{m.split(".")[0] for m in sys.modules}} & set(HEAVY))

out = io.BytesIO()
server = build_server({str(project)!r}, None, out, Log(None, None))
def send(method, params, rid):
    server.handle_line(json.dumps({{"jsonrpc": "2.0", "id": rid, "method": method,
                                   "params": params}}).encode())
send("initialize", {{"protocolVersion": "2025-11-25", "capabilities": {{}},
                    "clientInfo": {{"name": "t", "version": "0"}}}}, 1)
after_initialize = heavy()
send("tools/list", {{}}, 2)
after_list = heavy()
send("tools/call", {{"name": "memory_status", "arguments": {{}}}}, 3)
server._stop_worker(30)
replies = [json.loads(line) for line in out.getvalue().splitlines()]
print(json.dumps({{"initialize": after_initialize, "list": after_list, "call": heavy(),
                  "ids": [r["id"] for r in replies],
                  "error": replies[-1]["result"]["isError"]}}))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=lintaid_env(), cwd=str(REPO), timeout=60)
    assert out.returncode == 0, out.stderr
    loaded = json.loads(out.stdout)
    assert loaded["initialize"] == [] and loaded["list"] == []
    assert "zmq" in loaded["call"]
    assert loaded["ids"] == [1, 2, 3] and loaded["error"] is True  # daemon down, no autostart


# -- the process -------------------------------------------------------------------------------
def test_project_is_found_from_the_named_variable(project: Path, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    sub = project / "src" / "pkg"
    sub.mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    monkeypatch.delenv("LINTAID_PROJECT", raising=False)
    monkeypatch.setenv("AGENT_PROJECT", str(sub))
    assert resolve_root(None, "AGENT_PROJECT") == project      # found as the hooks find it
    assert resolve_root(str(elsewhere), "AGENT_PROJECT") == elsewhere  # --project wins
    assert resolve_root(None, None) == elsewhere                # no variable: the working dir
    monkeypatch.setenv("AGENT_PROJECT", "")
    assert resolve_root(None, "AGENT_PROJECT") == elsewhere     # set but empty: ignored
    monkeypatch.setenv("AGENT_PROJECT", str(tmp_path / "gone"))
    assert resolve_root(None, "AGENT_PROJECT") == elsewhere     # not a folder: ignored
    monkeypatch.setenv("AGENT_PROJECT", str(sub))
    monkeypatch.setenv("LINTAID_PROJECT", str(elsewhere))
    assert resolve_root(None, "AGENT_PROJECT") == elsewhere     # LINTAID_PROJECT wins
    with pytest.raises(paths.ProjectError):
        resolve_root(str(tmp_path / "gone"), None)
    source = (REPO / "client" / "lintaid_client" / "mcp.py").read_text()
    assert "CLAUDE" not in source, "the shim names no agent client's variable"


@pytest.mark.anyio
async def test_project_env_end_to_end(daemon: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    async with Client(params(None, "--project-env", "AGENT_PROJECT", cwd=elsewhere,
                             AGENT_PROJECT=str(daemon))) as client:
        assert (await call(client, "memory_status"))["root"] == str(daemon)


def test_a_missing_project_folder(tmp_path: Path) -> None:
    # On the command line: a usage error at once.
    proc = subprocess.run(shim_command(tmp_path / "missing"), capture_output=True, text=True,
                          env=lintaid_env(), stdin=subprocess.DEVNULL, timeout=30)
    assert proc.returncode == 2 and "not a folder" in proc.stderr and proc.stdout == ""
    # In LINTAID_PROJECT: the handshake still works, and a tool call says what is wrong.
    env = lintaid_env(LINTAID_PROJECT=str(tmp_path / "missing"), LINTAID_NO_AUTOSTART="1")
    with RawShim(None, env=env, cwd=tmp_path) as shim:
        assert shim.initialize()["result"]["serverInfo"]["name"] == "lintaid"
        assert shim.request("tools/list")["result"]["tools"]
        result = shim.request("tools/call", {"name": "memory_status"})["result"]
        assert result["isError"] is True
        assert result["content"][0]["text"].startswith("bad_project: LINTAID_PROJECT=")
    assert not (tmp_path / "missing").exists()


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def test_exits_on_stdin_eof_after_answering(daemon: Path) -> None:
    with RawShim(daemon) as shim:
        assert shim.initialize()["result"]["serverInfo"]["name"] == "lintaid"
        # A tool call, then EOF at once: the call is still answered before the exit.
        shim.send({"jsonrpc": "2.0", "id": "last", "method": "tools/call",
                   "params": {"name": "add_memory", "arguments": {"content": "Said at EOF."}}})
        assert shim.close() == 0
        reply = shim.recv()
        assert reply["id"] == "last" and reply["result"]["isError"] is False
        assert shim.lines.get(timeout=5) is None, "nothing but protocol on stdout"


def test_exits_when_its_parent_dies(project: Path) -> None:
    """The parent is killed while the shim's stdin stays open: only the ppid watch can exit."""
    in_r, in_w = os.pipe()    # the test holds in_w open: the shim never sees stdin EOF
    out_r, out_w = os.pipe()
    launcher = (
        "import subprocess, time\n"
        f"p = subprocess.Popen({shim_command(project)!r}, stdin={in_r}, stdout={out_w})\n"
        "print(p.pid, flush=True)\n"
        "time.sleep(120)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", launcher], stdout=subprocess.PIPE,
                              pass_fds=(in_r, out_w), env=lintaid_env())
    os.close(in_r)
    os.close(out_w)
    child = None
    try:
        assert parent.stdout is not None
        child = int(parent.stdout.readline())
        # A full handshake first, so the shim is surely serving (and watching) when we kill.
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": mcp_rpc.LATEST, "capabilities": {},
            "clientInfo": {"name": "pytest", "version": "0"}}}
        os.write(in_w, (json.dumps(init) + "\n").encode())
        with os.fdopen(os.dup(out_r), "rb") as replies:
            assert json.loads(replies.readline())["id"] == 1
        assert not _gone(child)
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        wait_for(lambda: _gone(child), timeout=10)
    finally:
        os.close(in_w)
        os.close(out_r)
        if parent.poll() is None:
            parent.kill()
        if child is not None and not _gone(child):
            os.kill(child, signal.SIGKILL)


# -- MCP Inspector CLI -------------------------------------------------------------------------
INSPECTOR = "@modelcontextprotocol/inspector@2"  # 2.x: --format json, exit 5 on tool errors


def _inspector(root: Path, *options: str) -> subprocess.CompletedProcess[str]:
    npx = shutil.which("npx")
    if npx is None or shutil.which("node") is None:
        reason = "node/npx not found on PATH: MCP Inspector CLI test skipped"
        print(reason)
        pytest.skip(reason)
    cmd = [npx, "-y", INSPECTOR, "--cli", *shim_command(root), "--", *options]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=180,
                              env=lintaid_env(npm_config_yes="true"), cwd=str(root))
    except subprocess.TimeoutExpired:
        reason = "the MCP Inspector did not finish within 180 s (download or start-up)"
        print(reason)
        pytest.skip(reason)
    if proc.returncode != 0 and ("npm ERR" in proc.stderr or "npm error" in proc.stderr):
        reason = f"the MCP Inspector could not be installed: {proc.stderr.strip()[-400:]}"
        print(reason)
        pytest.skip(reason)
    return proc


# The MCP Inspector is an npm client like the agent clients: it runs in their CI step.
@pytest.mark.real_client
@pytest.mark.timeout(420)
def test_inspector_cli(daemon: Path) -> None:
    listed = _inspector(daemon, "--method", "tools/list")
    assert listed.returncode == 0, listed.stderr
    names = {t["name"] for t in json.loads(listed.stdout)["tools"]}
    assert names == TOOLS

    added = _inspector(daemon, "--method", "tools/call", "--tool-name", "add_memory",
                       "--tool-arg", "content=The inspector can write memories.",
                       "--format", "json")
    assert added.returncode == 0, added.stderr
    new_id = json.loads(added.stdout)["result"]["structuredContent"]["id"]

    found = _inspector(daemon, "--method", "tools/call", "--tool-name", "search",
                       "--tool-args-json", json.dumps({"query": "inspector memories"}),
                       "--format", "json")
    assert found.returncode == 0, found.stderr
    result = json.loads(found.stdout)["result"]
    assert result["isError"] is False
    assert [r["id"] for r in result["structuredContent"]["results"]] == [new_id]

    missing = _inspector(daemon, "--method", "tools/call", "--tool-name", "get_memory",
                         "--tool-arg", "id=m-missing", "--format", "json")
    assert missing.returncode != 0  # 5 = tool error in inspector 2.x
    assert "isError" in missing.stderr or "not_found" in missing.stdout + missing.stderr

    misspelled = _inspector(daemon, "--method", "tools/call", "--tool-name", "search",
                            "--tool-args-json", json.dumps({"query": "x", "top-k": 3}),
                            "--format", "json")
    assert misspelled.returncode != 0, misspelled.stdout
    assert "unknown argument(s) 'top-k'" in misspelled.stdout


@pytest.mark.anyio
async def test_the_agent_can_forget_and_supersede_captured_records(daemon: Path) -> None:
    from tests.conftest import run_hook
    from tests.transcripts import stop_payload, write_transcript

    for session, text in (("s1", "The nightly export writes parquet files to bucket alpha."),
                          ("s2", "Debug printing was left on in the exporter by mistake.")):
        transcript = write_transcript(daemon.parent / f"{session}.jsonl", [
            ("user", "Tell me about the exporter."), ("assistant", text)],
            session_id=session, cwd=str(daemon))
        run_hook(daemon, "Stop", stop_payload(transcript, session_id=session, cwd=str(daemon)))
    async with Client(params(daemon)) as client:
        found = await call(client, "search", {"query": "nightly export parquet bucket"})
        export = found["results"][0]["id"]
        debug = (await call(client, "search", {"query": "debug printing exporter"}))["results"]
        debug_id = next(r["id"] for r in debug if "Debug printing" in r["summary"])
        sup = await call(client, "supersede_memory", {
            "old_id": export, "content": "The nightly export writes parquet to bucket beta."})
        found = await call(client, "search", {"query": "nightly export parquet bucket"})
        assert [r["id"] for r in found["results"]][0] == sup["new_id"]
        assert export not in [r["id"] for r in found["results"]]
        await call(client, "forget_memory", {"id": debug_id, "reason": "noise"})
        assert "not_found" in await call_error(client, "get_memory", {"id": debug_id})
