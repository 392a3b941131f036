"""``lintaid-mcp`` end to end: the SDK's stdio client against the real shim and a real daemon.

Also the shim's process contract: it answers ``initialize`` with the daemon down (and starts
the daemon on the first tool call), exits on stdin EOF and when its parent dies, and passes the
MCP Inspector CLI when node is available.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import psutil
import pytest
from mcp import Client, StdioServerParameters

from lintaid_client import connection
from tests.conftest import lintaid_env, start_daemon, stop_daemon, wait_for

pytestmark = pytest.mark.slow

TOOLS = {"search", "get_memory", "list_memories", "add_memory", "forget_memory",
         "supersede_memory", "memory_history", "memory_status"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def shim_command(root: Path) -> list[str]:
    return [sys.executable, "-m", "lintaid_client.mcp", "--project", str(root)]


def params(root: Path) -> StdioServerParameters:
    cmd = shim_command(root)
    return StdioServerParameters(command=cmd[0], args=cmd[1:], env=lintaid_env(), cwd=str(root))


async def call(client: Client, tool: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
    result = await client.call_tool(tool, args or {})
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


async def call_error(client: Client, tool: str, args: dict[str, Any]) -> str:
    result = await client.call_tool(tool, args)
    assert result.is_error, result.structured_content
    return " ".join(getattr(c, "text", "") for c in result.content)


@pytest.mark.anyio
async def test_tools_have_schemas(daemon: Path) -> None:
    async with Client(params(daemon)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert set(tools) == TOOLS
        for tool in tools.values():
            assert tool.output_schema, f"{tool.name} has no output schema"
            assert tool.description and not tool.description.startswith(" ")
        assert tools["search"].input_schema["required"] == ["query"]
        assert tools["search"].input_schema["properties"]["top_k"]["maximum"] == 100


@pytest.mark.anyio
async def test_add_search_supersede_history_forget(daemon: Path) -> None:
    async with Client(params(daemon)) as client:
        added = await call(client, "add_memory",
                           {"content": "The payments API uses idempotency keys stored 24 hours."})
        old = added["id"]
        assert added["event"] == "ADD"

        found = await call(client, "search", {"query": "payments idempotency keys"})
        assert [r["id"] for r in found["results"]] == [old]
        line = found["results"][0]
        assert line["status"] == "current" and line["store"] == "memory"
        assert line["summary"].startswith("The payments API uses idempotency keys")
        assert len(line["summary"]) <= 160 and line["score"] > 0

        record = await call(client, "get_memory", {"id": old})
        assert record["content"].startswith("The payments API")
        assert record["provenance"]["source"] == "mcp"
        assert record["provenance"]["user_id"] == "local"
        assert isinstance(record["claims"], list) and isinstance(record["relations"], list)

        sup = await call(client, "supersede_memory", {
            "old_id": old, "new_content": "The payments API keeps idempotency keys 72 hours."})
        new = sup["new_id"]
        assert sup["old_id"] == old and new != old

        found = await call(client, "search", {"query": "payments idempotency keys"})
        assert [r["id"] for r in found["results"]] == [new]
        assert found["results"][0]["status"] == "current"
        assert found["hidden"] >= 1
        past = await call(client, "search", {"query": "payments idempotency keys",
                                             "history": True})
        assert {r["id"]: r["status"] for r in past["results"]}[old] == "superseded"

        history = await call(client, "memory_history", {"id": old})
        events = [e["event"] for e in history["events"]]
        assert events[0] == "ADD" and "SUPERSEDE" in events
        assert {e["actor"] for e in history["events"]} == {"mcp"}
        assert history["events"][-1]["detail"].get("by") == new
        new_history = await call(client, "memory_history", {"id": new})
        assert new_history["events"][0]["event"] == "ADD"

        listed = await call(client, "list_memories", {"limit": 10})
        assert [r["id"] for r in listed["results"]] == [new]

        forgot = await call(client, "forget_memory", {"id": new, "reason": "wrong"})
        assert forgot["id"] == new
        found = await call(client, "search", {"query": "payments idempotency keys"})
        assert new not in [r["id"] for r in found["results"]]
        message = await call_error(client, "get_memory", {"id": new})
        assert "not_found" in message

        status = await call(client, "memory_status")
        assert status["root"] == str(daemon) and status["pid"]
        assert status["memory"]["forgotten"] >= 1


@pytest.mark.anyio
async def test_errors_are_tool_errors(daemon: Path) -> None:
    async with Client(params(daemon)) as client:
        assert "not_found" in await call_error(client, "get_memory", {"id": "m-nope"})
        assert "not_found" in await call_error(client, "memory_history", {"id": "m-nope"})
        assert "not_found" in await call_error(client, "forget_memory", {"id": "m-nope"})
        message = await call_error(client, "supersede_memory", {"old_id": "m-nope"})
        assert "exactly one" in message
        assert "not_found" in await call_error(
            client, "supersede_memory", {"old_id": "m-nope", "new_content": "x y z"})
        assert "as_of" in await call_error(
            client, "search", {"query": "x", "as_of": "next tuesday"})
        await call_error(client, "search", {"query": "x", "top_k": 0})
        await call_error(client, "search", {"query": "x", "store": "elsewhere"})
        # The shim survives every one of them.
        assert (await call(client, "search", {"query": "anything"}))["results"] == []


@pytest.mark.anyio
async def test_as_of_accepts_iso_and_epoch(daemon: Path) -> None:
    async with Client(params(daemon)) as client:
        old = (await call(client, "add_memory", {"content": "Staging lives in us-east-1."}))["id"]
        time.sleep(1.1)
        between = time.time()
        time.sleep(1.1)
        new = (await call(client, "supersede_memory", {
            "old_id": old, "new_content": "Staging lives in us-west-2."}))["new_id"]
        now = await call(client, "search", {"query": "staging lives"})
        assert [r["id"] for r in now["results"]] == [new]
        for as_of in (between, str(between),
                      time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(between))):
            then = await call(client, "search", {"query": "staging lives", "as_of": as_of})
            assert [r["id"] for r in then["results"]] == [old], as_of


@pytest.mark.anyio
async def test_workspace_hits_carry_path_and_lines(project: Path) -> None:
    docs = project / "docs"
    docs.mkdir()
    (docs / "runbook.md").write_text(
        "# Runbook\n\nRestart the marmalade worker with `make marmalade-restart`.\n")
    start_daemon(project, env=lintaid_env(LINTAID_NO_WATCH="0"))
    try:
        async with Client(params(project)) as client:
            found: dict[str, Any] = {}
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                found = await call(client, "search", {"query": "marmalade worker",
                                                      "store": "workspace"})
                if found["results"]:
                    break
                await anyio.sleep(0.2)
            assert found["results"], "the workspace was not indexed within 30 s"
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


@pytest.mark.anyio
async def test_initialize_with_the_daemon_down_then_first_call_starts_it(project: Path) -> None:
    assert connection.ping(project, timeout=0.3) is None
    try:
        started = time.monotonic()
        async with Client(params(project)) as client:
            tools = (await client.list_tools()).tools
            assert {t.name for t in tools} == TOOLS
            assert time.monotonic() - started < 10
            # Neither initialize nor tools/list touched the daemon.
            assert connection.ping(project, timeout=0.3) is None
            assert connection.read_status(project) is None

            added = await call(client, "add_memory", {"content": "Lazy start works."})
            assert added["event"] == "ADD"
            assert connection.ping(project) is not None
            found = await call(client, "search", {"query": "lazy start"})
            assert [r["id"] for r in found["results"]] == [added["id"]]
    finally:
        stop_daemon(project)


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def test_exits_on_stdin_eof(project: Path) -> None:
    proc = subprocess.Popen(shim_command(project), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=lintaid_env())
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write((json.dumps(INIT) + "\n").encode())
        proc.stdin.flush()
        reply = json.loads(proc.stdout.readline())
        assert reply["id"] == 1 and reply["result"]["serverInfo"]["name"] == "lintaid"
        proc.stdin.close()
        assert proc.wait(timeout=10) == 0
        assert proc.stdout.read() == b"", "nothing but protocol on stdout"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {},
    "clientInfo": {"name": "pytest", "version": "0"}}}


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
        os.write(in_w, (json.dumps(INIT) + "\n").encode())
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
            "old_id": export, "new_content": "The nightly export writes parquet to bucket beta."})
        found = await call(client, "search", {"query": "nightly export parquet bucket"})
        assert [r["id"] for r in found["results"]][0] == sup["new_id"]
        assert export not in [r["id"] for r in found["results"]]
        await call(client, "forget_memory", {"id": debug_id, "reason": "noise"})
        assert "not_found" in await call_error(client, "get_memory", {"id": debug_id})
