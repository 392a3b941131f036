"""The bulletin board: its seven MCP tools through the MCP SDK's client against the real shim
(a subprocess) and a real daemon (in this process), two sessions of different agent clients
exchanging posts; idempotent posts, catch-up after a sequence, a read that waits, users kept
apart, secrets redacted before anything is stored, bad input refused with nothing stored,
expiry, and posts kept out of memory (search, list, claims). The CLI's ``lintaid board``.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.types import Implementation

from lintaid_client import ops, paths, protocol
from tests.conftest import Served, lintaid_env, wait_for
from tests.redaction_corpus import GHP
from tests.test_mcp import call

pytestmark = pytest.mark.slow

BOARD_TOOLS = {"board_open", "board_list", "board_info", "board_post", "board_read",
               "board_get", "board_search"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def params(root: Path, **env: str) -> StdioServerParameters:
    """The shim as ``lintaid install claude-code`` registers it (``--session-env``)."""
    import sys

    variables = lintaid_env(LINTAID_NO_AUTOSTART="1", **env)
    for name in ("CLAUDE_CODE_SESSION_ID", "LINTAID_SESSION_ID"):
        if name not in env:
            variables.pop(name, None)  # a session this test may itself run inside
    return StdioServerParameters(
        command=sys.executable, env=variables, cwd=str(root),
        args=["-m", "lintaid_client.mcp", "--project", str(root),
              "--session-env", "CLAUDE_CODE_SESSION_ID"])


def agent(root: Path, name: str, **env: str) -> Client:
    """An MCP session of the agent client ``name`` (its ``clientInfo``)."""
    return Client(params(root, **env), client_info=Implementation(name=name, version="1.0"))


async def refused(client: Client, tool: str, args: dict[str, Any]) -> str:
    result = await client.call_tool(tool, args)
    assert result.is_error, result.structured_content
    return " ".join(getattr(c, "text", "") for c in result.content)


def rows(root: Path, sql: str) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(f"file:{paths.memory_db_path(root)}?mode=ro", uri=True)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


# -- the seven tools, two agent clients ----------------------------------------------------------
@pytest.mark.anyio
async def test_two_clients_exchange_posts_through_the_seven_tools(served: Served) -> None:
    root = served.root
    async with agent(root, "claude-code") as a, agent(root, "codex-mcp-client") as b:
        tools = {t.name: t for t in (await a.list_tools()).tools}
        assert BOARD_TOOLS <= set(tools)
        for name in BOARD_TOOLS:
            assert tools[name].input_schema == ops.tool_schema(ops.OPS[name])
            assert "client" not in tools[name].input_schema["properties"]
            assert "user_id" not in tools[name].input_schema["properties"]
        assert tools["board_read"].annotations.read_only_hint is True  # type: ignore[union-attr]

        listed = await call(a, "board_list")
        assert [x["key"] for x in listed["boards"]] == ["default"]
        assert listed["boards"][0]["session_board"] is True

        opened = await call(a, "board_open", {"key": "billing", "title": "Billing migration"})
        assert opened["created"] is True and opened["key"] == "billing"
        assert opened["title"] == "Billing migration" and opened["joined"] is True
        assert opened["session_board"] is True and opened["created_by_client"] == "claude-code"
        a_session = opened["session_id"]
        assert a_session and a_session.startswith("mcp-")

        # Without board_id, A's post goes to the board A opened.
        first = await call(a, "board_post", {
            "content": "I am migrating tests/billing/; don't touch it", "request_id": "a-1"})
        assert first["board_key"] == "billing" and first["sequence"] == 1
        assert first["client"] == "claude-code" and first["session_id"] == a_session
        assert first["author"] == "claude-code" and first["event"] == "ADD"

        # B has its own session board (the default): it names the board to read it.
        got = await call(b, "board_read", {"board_id": "billing"})
        assert [p["post_id"] for p in got["posts"]] == [first["post_id"]]
        assert got["posts"][0]["client"] == "claude-code" and got["last_sequence"] == 1
        reply = await call(b, "board_post", {
            "board_id": opened["board_id"], "request_id": "b-1", "author": "subagent tests",
            "content": "ack: the parser failure comes from the empty input path"})
        assert reply["sequence"] == 2 and reply["client"] == "codex"
        assert reply["author"] == "subagent tests" and reply["session_id"] != a_session

        info = await call(a, "board_info")
        assert info["key"] == "billing" and info["posts"] == 2 and info["last_sequence"] == 2
        assert info["unread"] == 1  # B's reply; A's own post counts as read
        caught = await call(a, "board_read", {"after_sequence": 1})
        assert [p["content"] for p in caught["posts"]] == [
            "ack: the parser failure comes from the empty input path"]
        assert caught["posts"][0]["client"] == "codex" and caught["more"] is False

        one = await call(b, "board_get", {"post_id": first["post_id"]})
        assert one["content"] == first["content"] and one["board_key"] == "billing"
        found = await call(b, "board_search", {"query": "parser empty input"})
        assert [p["post_id"] for p in found["posts"]] == [reply["post_id"]]
        assert found["posts"][0]["score"] > 0
        found = await call(b, "board_search", {"query": "migrating", "board_id": "billing"})
        assert [p["sequence"] for p in found["posts"]] == [1]

        # A read that waits is answered by the next post, not by its deadline.
        async def waiting() -> dict[str, Any]:
            return await call(b, "board_read", {"board_id": "billing", "after_sequence": 2,
                                                "wait": 25})

        async with anyio.create_task_group() as group:
            box: dict[str, Any] = {}

            async def reader() -> None:
                box["read"] = await waiting()

            group.start_soon(reader)
            await anyio.wait_all_tasks_blocked()
            await call(a, "board_post", {"content": "done with billing", "request_id": "a-2"})
        assert [p["content"] for p in box["read"]["posts"]] == ["done with billing"]
        assert box["read"]["last_sequence"] == 3

        listed = await call(b, "board_list")
        keys = {x["key"]: x for x in listed["boards"]}
        assert set(keys) == {"billing", "default"}
        assert keys["billing"]["joined"] is True and keys["billing"]["unread"] == 0
        assert keys["default"]["session_board"] is True

        # Posts are not memory: no memory search, list or record ever holds one.
        memory = await call(a, "search", {"query": "migrating billing parser empty input"})
        assert memory["results"] == []
        assert (await call(a, "list_memories"))["results"] == []
    assert served.record_count() == 0
    assert rows(root, "SELECT COUNT(*) FROM claims") == [(0,)]


@pytest.mark.anyio
async def test_idempotent_posts_and_bad_input_store_nothing(served: Served) -> None:
    async with agent(served.root, "claude-code") as a:
        post = await call(a, "board_post", {"content": "hello", "request_id": "r-1"})
        assert post["board_key"] == "default" and post["sequence"] == 1
        again = await call(a, "board_post", {"content": "hello", "request_id": "r-1"})
        assert again["post_id"] == post["post_id"] and again["sequence"] == 1
        assert again["event"] == "NONE"
        text = await refused(a, "board_post", {"content": "other", "request_id": "r-1"})
        assert "bad_request" in text and "request_id 'r-1' was used for another post" in text

        big = "x" * (ops.MAX_POST_BYTES + 1)
        text = await refused(a, "board_post", {"content": big, "request_id": "r-2"})
        assert "too_large" in text and f"larger than {ops.MAX_POST_BYTES} bytes" in text
        text = await refused(a, "board_read", {"after_sequence": "one"})
        assert "'after_sequence' must be an integer" in text
        text = await refused(a, "board_read", {"limit": 1000})
        assert "'limit' must be between 1 and 100" in text
        text = await refused(a, "board_post", {"content": 5, "request_id": "r-3"})
        assert "'content' must be a string" in text
        text = await refused(a, "board_post", {"content": "hi"})
        assert "'request_id' is required" in text
        text = await refused(a, "board_post", {"content": "hi", "request_id": "r-4",
                                               "client": "forged"})
        assert "unknown argument" in text
        for key, why in (("default", "the project's board"), ("session:x", "reserved"),
                         ("no spaces", "letters, digits"), (GHP, "looks like a secret")):
            text = await refused(a, "board_open", {"key": key})
            assert why in text, (key, text)
        text = await refused(a, "board_post", {"content": "hi", "request_id": "r-5",
                                               "board_id": "nowhere"})
        assert "not_found" in text and "no board 'nowhere'" in text
        text = await refused(a, "board_get", {"post_id": "p_missing"})
        assert "not_found" in text
        info = await call(a, "board_info")
        assert info["posts"] == 1 and info["last_sequence"] == 1
    assert rows(served.root, "SELECT request_id FROM board_posts") == [("r-1",)]
    assert rows(served.root, "SELECT key FROM boards") == [("default",)]
    assert served.call("ping")["pong"] is True  # the daemon kept running


# -- through the socket: what MCP does not show ----------------------------------------------
def test_catch_up_after_a_sequence_page_by_page(served: Served) -> None:
    served.call("board_open", {"key": "work", "session_id": "s1", "client": "cli"})
    for n in range(1, 6):
        served.call("board_post", {"board_id": "work", "content": f"step {n}",
                                   "request_id": f"step-{n}", "session_id": "s1"})
    seen, after, pages = [], 0, 0
    while True:
        page = served.call("board_read", {"board_id": "work", "after_sequence": after,
                                          "limit": 2})
        seen += [p["content"] for p in page["posts"]]
        after, pages = page["last_sequence"], pages + 1
        if not page["more"]:
            break
    assert seen == [f"step {n}" for n in range(1, 6)] and pages == 3 and after == 5
    nothing = served.call("board_read", {"board_id": "work", "after_sequence": 5})
    assert nothing["posts"] == [] and nothing["last_sequence"] == 5
    # A read that waits and sees no post answers at its deadline, with nothing.
    late = served.call("board_read", {"board_id": "work", "after_sequence": 5, "wait": 1})
    assert late["posts"] == []
    # One that is waiting when the post comes is answered with it.
    board = served.daemon.board  # type: ignore[union-attr]
    assert board is not None
    box: dict[str, Any] = {}
    reader = threading.Thread(target=lambda: box.update(served.call(
        "board_read", {"board_id": "work", "after_sequence": 5, "wait": 25})))
    reader.start()
    wait_for(lambda: board._waits)  # the read is held, waiting
    served.call("board_post", {"board_id": "work", "content": "step 6", "request_id": "s6"})
    reader.join(30)
    assert [p["content"] for p in box["posts"]] == ["step 6"] and box["last_sequence"] == 6


def test_a_user_never_reads_another_users_boards(served: Served) -> None:
    served.call("board_open", {"key": "plans", "title": "Alice's plans", "user_id": "alice",
                               "session_id": "a1"})
    post = served.call("board_post", {"content": "alice only", "request_id": "x",
                                      "user_id": "alice", "session_id": "a1"})
    assert post["board_key"] == "plans"
    bob = {"user_id": "bob", "session_id": "b1"}
    assert [b["key"] for b in served.call("board_list", bob)["boards"]] == ["default"]
    for op, args in (("board_read", {"board_id": "plans"}),
                     ("board_read", {"board_id": post["board_id"]}),
                     ("board_info", {"board_id": "plans"}),
                     ("board_get", {"post_id": post["post_id"]})):
        with pytest.raises(protocol.NotFound):
            served.call(op, {**args, "user_id": "bob"})
    assert served.call("board_search", {"query": "alice only", "user_id": "bob"})["posts"] == []
    # The same request id is bob's own: it posts bob's note, leaving alice's alone.
    mine = served.call("board_post", {"content": "bob's", "request_id": "x", **bob})
    assert mine["board_key"] == "default" and mine["post_id"] != post["post_id"]
    alice = served.call("board_read", {"board_id": "plans", "user_id": "alice"})
    assert [p["content"] for p in alice["posts"]] == ["alice only"]


def test_a_secret_in_a_post_is_redacted_before_it_is_stored(served: Served) -> None:
    post = served.call("board_post", {
        "content": f"deploy with token {GHP} then restart", "request_id": "s-1",
        "author": f"bot {GHP}", "session_id": "s"})
    assert GHP not in post["content"] and "deploy with token" in post["content"]
    assert GHP not in (post["author"] or "")
    served.call("board_open", {"key": "ops", "title": f"key {GHP}", "session_id": "s"})
    with pytest.raises(protocol.BadRequest, match="'request_id' looks like a secret"):
        served.call("board_post", {"content": "x", "request_id": GHP})
    served.call("board_post", {"content": "from a strange session", "request_id": "s-2",
                               "session_id": f"token={GHP}"})
    found = served.call("board_search", {"query": "deploy restart"})["posts"]
    assert [p["post_id"] for p in found] == [post["post_id"]]
    assert GHP not in json.dumps(served.call("board_list", {"session_id": "s"}))
    served.stop()  # every byte written: the database, its WAL, the logs
    secret = GHP.encode()
    for path in paths.state_dir(served.root).rglob("*"):
        if path.is_file():
            assert secret not in path.read_bytes(), path


def test_expired_posts_leave_every_answer_and_then_the_database(
        project: Path, serve: Callable[..., Served]) -> None:
    served = serve(project, board_keep_days=14)
    served.call("board_post", {"content": "old news", "request_id": "o-1"})
    board = served.daemon.board  # type: ignore[union-attr]
    assert board is not None
    now = time.time()
    board.wall = lambda: now + 15 * 86400
    assert served.call("board_read", {})["posts"] == []
    assert served.call("board_search", {"query": "old news"})["posts"] == []
    assert served.call("board_info", {})["posts"] == 0
    assert board.prune_now().result(10) == 1
    assert rows(project, "SELECT COUNT(*) FROM board_posts") == [(0,)]
    assert rows(project, "SELECT COUNT(*) FROM board_posts_fts WHERE board_posts_fts"
                         " MATCH 'news'") == [(0,)]
    # The sequence goes on after expiry: a reader's cursor never points back.
    assert served.call("board_post", {"content": "new", "request_id": "o-2"})["sequence"] == 2


def test_the_cli_lists_reads_posts_and_tails(served: Served) -> None:
    out = served.cli("board", "post", "starting the refactor", "--board", "default")
    assert out.exit_code == 0, out.stderr
    assert "#1" in out.stdout
    served.call("board_open", {"key": "infra", "title": "Infrastructure", "session_id": "s"})
    served.call("board_post", {"board_id": "infra", "content": "db moved", "request_id": "i",
                               "session_id": "s", "client": "codex"})
    listed = served.json("board", "list")
    assert {b["key"]: b["posts"] for b in listed["boards"]} == {"default": 1, "infra": 1}
    text = served.cli("board", "list").stdout
    assert "infra" in text and "Infrastructure" in text
    read = served.cli("board", "read", "infra").stdout
    assert "db moved" in read and "codex" in read and "#1" in read
    assert served.json("board", "read", "infra", "--after", "1")["posts"] == []
    # ``-f`` follows until the person stops it; ``--max`` bounds it for scripts and tests.
    tail = served.cli("board", "read", "infra", "-f", "--max", "1")
    assert "db moved" in tail.stdout
    bad = served.cli("board", "read", "nowhere")
    assert bad.exit_code != 0 and "no board 'nowhere'" in bad.stderr
    opened = served.cli("board", "open", "docs", "--title", "Docs rewrite")
    assert opened.exit_code == 0 and "created board docs" in opened.stdout
    again = served.json("board", "post", "chapter 2 is mine", "--board", "docs",
                        "--request-id", "c2")
    assert served.json("board", "post", "chapter 2 is mine", "--board", "docs",
                       "--request-id", "c2")["post_id"] == again["post_id"]
    found = served.cli("board", "search", "chapter").stdout
    assert "chapter 2 is mine" in found and "docs" in found
    refused = served.cli("board", "open", "session:me")
    assert refused.exit_code != 0 and "reserved" in refused.stderr


def test_session_start_mentions_unread_posts_on_joined_boards(served: Served) -> None:
    def start(session: str) -> str:
        return json.dumps(served.hook("SessionStart", {"session_id": session,
                                                       "source": "resume"}))

    served.call("board_open", {"key": "billing", "session_id": "S1", "client": "claude-code"})
    served.call("board_post", {"board_id": "billing", "content": "mine", "request_id": "m",
                               "session_id": "S1"})
    assert "Bulletin board" not in start("S1")  # its own post is not unread
    for n in (1, 2):
        served.call("board_post", {"board_id": "billing", "content": f"theirs {n}",
                                   "request_id": f"t{n}", "session_id": "S2",
                                   "client": "codex"})
    said = start("S1")
    assert said.count("Bulletin board: 2 unread post(s) on billing (2)") == 1
    assert "Bulletin board" not in start("S3")  # joined nothing
    read = served.call("board_read", {"board_id": "billing", "after_sequence": 1,
                                      "session_id": "S1"})
    assert len(read["posts"]) == 2
    wait_for(lambda: "Bulletin board" not in start("S1"))  # the read is noted off its path


def test_the_viewer_shows_boards_and_new_posts_live(served: Served) -> None:
    import http.client
    from urllib.parse import urlsplit

    served.call("board_open", {"key": "billing", "title": "Billing migration",
                               "session_id": "s"})
    served.call("board_post", {"board_id": "billing", "content": "<b>first</b> note",
                               "request_id": "v1", "session_id": "s", "client": "codex"})
    ui = served.call("ui", {})
    port, token = ui["port"], urlsplit(ui["url"]).path.strip("/")

    def get(path: str) -> tuple[int, str]:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        try:
            conn.request("GET", f"/{token}{path}", headers={"Host": f"127.0.0.1:{port}"})
            response = conn.getresponse()
            return response.status, response.read().decode()
        finally:
            conn.close()

    status, page = get("/board")
    assert status == 200 and "Billing migration" in page and "default" in page
    assert 'data-live="1"' in page and "&lt;b&gt;first&lt;/b&gt; note" in page
    assert "<b>first</b>" not in page and "codex" in page
    assert get("/board?b=nowhere")[0] == 404

    stream_conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    stream_conn.request("GET", f"/{token}/events", headers={"Host": f"127.0.0.1:{port}"})
    stream = stream_conn.getresponse()
    assert stream.readline() == b"retry: 2000\n"
    served.call("board_post", {"board_id": "billing", "content": "second note",
                               "request_id": "v2", "session_id": "s2"})
    lines: list[bytes] = []
    wait_for(lambda: lines.append(stream.readline()) or b"event: change\n" in lines, 20)
    stream_conn.close()
    status, fragment = get("/board?b=billing&fragment=1")
    assert status == 200 and "second note" in fragment and "<html" not in fragment
    assert fragment.index("#1") < fragment.index("#2")  # in order


def test_a_post_appears_on_the_open_board_page_in_a_browser(served: Served) -> None:
    """live.js over the real /events stream, in Chromium (skipped where it cannot be had,
    as the other browser tests are)."""
    from tests.test_viewer_browser import CHROMIUM, CHROMIUM_ARGS, WAIT_MS

    try:
        from playwright.sync_api import sync_playwright
    except ImportError as err:
        pytest.skip(f"the browser tests need Playwright: {err}")
    if not Path(CHROMIUM).exists():
        pytest.skip(f"the browser tests need Chromium at {CHROMIUM} (apt-get install chromium)")
    served.call("board_open", {"key": "live", "session_id": "s"})
    url = served.call("ui", {})["url"]
    with sync_playwright() as driver:
        chromium = driver.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = chromium.new_page()
            page.goto(url + "board?b=live")
            page.wait_for_selector("#board-posts[data-connected='1']", timeout=WAIT_MS)
            served.call("board_post", {"board_id": "live", "content": "arrives live",
                                       "request_id": "live-1", "session_id": "t"})
            page.wait_for_selector("#board-posts .post:has-text('arrives live')",
                                   timeout=WAIT_MS)
        finally:
            chromium.close()


@pytest.mark.anyio
async def test_the_agents_session_from_its_environment_links_mcp_and_session_start(
        served: Served) -> None:
    """Claude Code gives its stdio MCP servers CLAUDE_CODE_SESSION_ID, the id its hooks get:
    the board's membership made through MCP is the one SessionStart finds."""
    async with agent(served.root, "claude-code", CLAUDE_CODE_SESSION_ID="cc-42") as a, \
            agent(served.root, "codex-mcp-client") as b:
        opened = await call(a, "board_open", {"key": "release"})
        assert opened["session_id"] == "cc-42"
        await call(b, "board_post", {"board_id": "release", "content": "tag after CI",
                                     "request_id": "r"})
    said = json.dumps(served.hook("SessionStart", {"session_id": "cc-42",
                                                   "source": "resume"}))
    assert "Bulletin board: 1 unread post(s) on release (1)" in said


def test_a_waiting_read_is_answered_when_the_daemon_stops(served: Served) -> None:
    board = served.daemon.board  # type: ignore[union-attr]
    assert board is not None
    box: dict[str, Any] = {}
    reader = threading.Thread(target=lambda: box.update(served.call(
        "board_read", {"wait": 30}, timeout=60)))
    reader.start()
    wait_for(lambda: board._waits)
    served.stop()
    reader.join(60)
    assert box["posts"] == []  # answered as it stopped: after it, no reply could come
