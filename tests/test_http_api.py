"""The HTTP API over real HTTP on the loopback address, served by a real daemon in this process
and driven by clients that are not Python: ``curl`` and Node's ``fetch``. What it serves (every
op by its declaration, mem0's routes, the OpenAPI document), who may talk to it (token, Host,
origin), and bad input (oversized, wrong types, no token, a foreign Host, a busy daemon)
answered with a clear error, nothing stored and the daemon serving on."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from lintaid import ops as handlers
from lintaid_client import ops, paths
from tests.conftest import Served, wait_for

CURL = shutil.which("curl")
NODE = shutil.which("node")
needs_curl = pytest.mark.skipif(CURL is None, reason="curl is not installed here")
needs_node = pytest.mark.skipif(NODE is None, reason="node is not installed here")
FETCH_SCRIPT = Path(__file__).with_name("http_fetch.mjs")


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: Any


@dataclass
class Http:
    url: str
    port: int
    token: str

    def curl(self, method: str, path: str, body: Any = None, *, token: str | None = "ours",
             headers: dict[str, str] | None = None, raw: bytes | None = None,
             content_type: str | None = "application/json") -> Answer:
        """``curl -X METHOD`` to the API; ``body`` sent as JSON, ``raw`` as given (stdin)."""
        assert CURL is not None
        command = [CURL, "-sS", "-X", method, "-D", "-", "-o", "-", "--max-time", "60"]
        if token is not None:
            command += ["-H", f"Authorization: Bearer {self.token if token == 'ours' else token}"]
        for name, value in (headers or {}).items():
            command += ["-H", f"{name}: {value}" if value else f"{name}:"]  # "": left out
        data = raw if raw is not None else (
            json.dumps(body).encode() if body is not None else None)
        if data is not None:
            if content_type is not None:
                command += ["-H", f"Content-Type: {content_type}"]
            command += ["--data-binary", "@-"]
        done = subprocess.run([*command, self.url + path], input=data, capture_output=True,
                              timeout=90, check=True)
        head, _, text = done.stdout.partition(b"\r\n\r\n")
        lines = head.decode().split("\r\n")
        found = {k.strip().lower(): v.strip() for k, _, v in
                 (line.partition(":") for line in lines[1:])}
        try:
            parsed: Any = json.loads(text) if text else None
        except ValueError:
            parsed = text.decode()
        return Answer(int(lines[0].split()[1]), found, parsed)


def open_http(served: Served, **args: Any) -> Http:
    info = served.call("http", args)
    return Http(info["url"], info["port"], Path(info["token_file"]).read_text().strip())


@pytest.fixture
def http(served: Served) -> Http:
    return open_http(served)


def stored(served: Served) -> int:
    return served.record_count()


# -- where it listens and its token -----------------------------------------------------------
def test_the_token_file_is_private_made_once_and_kept_by_the_next_daemon(served: Served) -> None:
    token_file = paths.http_token_path(served.root)
    assert not token_file.exists()
    first = open_http(served)
    mode = stat.S_IMODE(token_file.stat().st_mode)
    assert mode == 0o600 and len(first.token) >= 40
    where = json.loads(paths.http_path(served.root).read_text())
    assert where["url"] == first.url == f"http://127.0.0.1:{first.port}"
    assert served.call("status")["http"]["token_file"] == str(token_file)
    assert served.call("http", {})["started"] is False  # asked again: the one it runs
    served.restart()
    assert not paths.http_path(served.root).exists()  # gone with the daemon that served
    os.chmod(token_file, 0o644)  # someone made it readable: the daemon makes it private again
    second = open_http(served)
    assert second.token == first.token
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600


@needs_curl
def test_a_daemon_configured_with_a_port_serves_the_api_from_its_start(
        project: Path, serve: Any) -> None:
    served = serve(project, http_port=0)
    info = served.call("status")["http"]
    assert info is not None
    http = Http(info["url"], info["port"], Path(info["token_file"]).read_text().strip())
    assert http.curl("GET", "/health").body["status"] == "ok"
    # The viewer is the same server, on the same port.
    assert served.call("ui", {})["port"] == info["port"]


# -- curl: the mem0 routes and lintaid's ------------------------------------------------------
@needs_curl
def test_curl_adds_searches_gets_updates_deletes_and_reads_history(served: Served,
                                                                    http: Http) -> None:
    added = http.curl("POST", "/memories", {
        "messages": [{"role": "user", "content": "Deploys go out from the release branch."}],
        "user_id": "ci", "run_id": "run-1"})
    assert added.status == 200, added.body
    [result] = added.body["results"]
    rid = result["id"]
    assert result["event"] == "ADD" and "release branch" in result["memory"]

    found = http.curl("POST", "/search", {"query": "release branch deploys", "user_id": "ci",
                                          "limit": 2})
    assert found.status == 200
    assert [h["id"] for h in found.body["results"]] == [rid]
    assert found.body["results"][0]["memory"] == found.body["results"][0]["content"]

    got = http.curl("GET", f"/memories/{rid}?user_id=ci")
    assert got.status == 200 and got.body["session_id"] == "run-1"
    assert http.curl("GET", f"/memories/{rid}").status == 404  # another user's

    listed = http.curl("GET", "/memories?user_id=ci&limit=10")
    assert [h["id"] for h in listed.body["results"]] == [rid]

    updated = http.curl("PUT", f"/memories/{rid}", {
        "text": "Deploys go out from the main branch.", "user_id": "ci"})
    assert updated.status == 200 and updated.body == {"id": rid, "event": "UPDATE"}
    again = http.curl("GET", "/ops/get?id=" + rid + "&user_id=ci")
    assert again.body["content"] == "Deploys go out from the main branch."

    history = http.curl("GET", f"/memories/{rid}/history?user_id=ci")
    assert history.status == 200
    assert [e["event"] for e in history.body] == ["ADD", "UPDATE"]
    assert history.body[-1]["actor"] == "http"

    deleted = http.curl("DELETE", f"/memories/{rid}?user_id=ci&reason=obsolete")
    assert deleted.status == 200 and deleted.body["event"] == "DELETE"
    assert http.curl("GET", f"/memories/{rid}?user_id=ci").status == 404
    # What the socket's clients see is the same memory.
    with served.memory() as m:
        assert m.history(rid, user_id="ci")[-1]["event"] == "FORGET"


@needs_curl
def test_lintaid_ops_beyond_mem0_supersede_restore_review_lint(served: Served,
                                                               http: Http) -> None:
    old = http.curl("POST", "/ops/add", {"content": "The cache is Redis 6."}).body["id"]
    swapped = http.curl("POST", "/ops/supersede", {"old_id": old,
                                                   "content": "The cache is Valkey 8."})
    assert swapped.status == 200 and swapped.body["old_id"] == old
    assert http.curl("GET", f"/ops/get?id={old}").body["status"] == "superseded"
    forgotten = http.curl("POST", "/ops/forget", {"id": swapped.body["new_id"],
                                                  "reason": "test"})
    assert forgotten.status == 200
    restored = http.curl("POST", "/ops/restore", {"id": swapped.body["new_id"]})
    assert restored.body["event"] == "RESTORE"
    review = http.curl("GET", "/ops/review?limit=5")
    assert review.status == 200 and review.body["count"] == len(review.body["results"])
    lint = http.curl("POST", "/ops/lint", {"only_flagged": False})
    assert lint.status == 200 and isinstance(lint.body, dict)
    assert http.curl("GET", "/ops/lint?only_flagged=maybe").status == 400


# -- Node's fetch ---------------------------------------------------------------------------------
@needs_node
def test_node_fetch_drives_the_api_end_to_end(served: Served, http: Http) -> None:
    assert NODE is not None
    done = subprocess.run([NODE, str(FETCH_SCRIPT)], capture_output=True, text=True,
                          input=json.dumps({"base": http.url, "token": http.token}),
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["add"]["status"] == 200 and out["add"]["body"]["results"][0]["event"] == "ADD"
    rid = out["add"]["body"]["results"][0]["id"]
    assert [h["id"] for h in out["search"]["body"]["results"]] == [rid]
    assert out["get"]["body"]["metadata"] == {"from": "node"}
    assert [h["id"] for h in out["list"]["body"]["results"]] == [rid]
    assert out["update"]["status"] == 200
    assert "7 times" in out["searchAfter"]["body"]["results"][0]["content"]
    assert [e["event"] for e in out["history"]["body"]] == ["ADD", "UPDATE"]
    assert out["delete"]["body"]["event"] == "DELETE" and out["gone"]["status"] == 404
    assert out["restore"]["body"]["event"] == "RESTORE"
    assert out["openapi"]["body"]["openapi"].startswith("3.")
    assert out["noToken"]["status"] == 401
    assert out["noToken"]["authenticate"].startswith("Bearer")
    assert out["noToken"]["body"]["error"]["code"] == "unauthorized"
    assert out["wrongType"]["status"] == 400
    assert out["wrongType"]["body"]["error"] == {
        "code": "bad_request", "message": "'top_k' must be an integer", "arg": "top_k",
        "retryable": False}
    assert out["wrongContent"]["status"] == 400
    assert out["wrongContent"]["body"]["error"]["arg"] == "messages"
    assert out["notJson"]["status"] == 400
    assert "not JSON" in out["notJson"]["body"]["error"]["message"]
    assert out["unknownArg"]["status"] == 400
    assert "colour" in out["unknownArg"]["body"]["error"]["message"]
    # Nothing the refused requests carried was stored: the one memory, restored.
    assert [h["id"] for h in out["listAtEnd"]["body"]["results"]] == [rid]
    assert stored(served) == 1


# -- the OpenAPI document ----------------------------------------------------------------------
def _refs(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [v for k, v in value.items() if k == "$ref"] + [
            r for v in value.values() for r in _refs(v)]
    if isinstance(value, list):
        return [r for v in value for r in _refs(v)]
    return []


@needs_curl
def test_the_openapi_document_describes_every_served_op_and_the_mem0_routes(
        http: Http) -> None:
    answer = http.curl("GET", "/openapi.json")
    assert answer.status == 200 and answer.headers["content-type"] == "application/json"
    doc = answer.body
    assert doc["openapi"] == "3.1.0"
    assert doc["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"
    for spec in ops.OPS.values():
        path = f"/ops/{spec.name}"
        if spec.kind == ops.CONTROL:
            assert path not in doc["paths"]
            continue
        operation = doc["paths"][path]["post"]
        schema = operation["requestBody"]["content"]["application/json"]["schema"]
        assert set(schema["properties"]) == {a.name for a in spec.args}, spec.name
        assert ("get" in doc["paths"][path]) == (spec.kind == ops.READ)
    assert set(doc["paths"]["/memories"]) == {"get", "post"}
    assert set(doc["paths"]["/memories/{id}"]) == {"get", "put", "delete"}
    assert "get" in doc["paths"]["/memories/{id}/history"]
    assert "post" in doc["paths"]["/search"]
    search = doc["paths"]["/ops/search"]["post"]["requestBody"]["content"][
        "application/json"]["schema"]
    assert search["required"] == ["query"]
    assert search["properties"]["top_k"] == {"type": "integer", "minimum": 1, "maximum": 100,
                                             "description": "how many hits", "default": 5}
    ids = [op["operationId"] for item in doc["paths"].values() for op in item.values()]
    assert len(ids) == len(set(ids))
    for ref in _refs(doc):
        assert ref.startswith("#/components/schemas/")
        assert ref.rsplit("/", 1)[1] in doc["components"]["schemas"]


@needs_curl
def test_an_op_declared_later_is_served_and_described_with_nothing_written_for_it(
        served: Served, monkeypatch: pytest.MonkeyPatch) -> None:
    """How a board op (declared in another branch) will appear: by its declaration alone."""
    spec = ops.Op("echo_note", ops.READ, "Say a note back.", (
        ops.Arg("note", ops.STR, "what to say", required=True, max_bytes=20),
        ops.Arg("times", ops.INT, "how often", default=1, lo=1, hi=3)))
    monkeypatch.setitem(ops.OPS, "echo_note", spec)
    monkeypatch.setitem(handlers.HANDLERS, "echo_note",
                        lambda s, a: {"said": [a["note"]] * a["times"]})
    http = open_http(served)
    assert http.curl("POST", "/ops/echo_note", {"note": "hi", "times": 2}).body == {
        "said": ["hi", "hi"]}
    assert http.curl("GET", "/ops/echo_note?note=hi&times=3").body == {
        "said": ["hi", "hi", "hi"]}
    assert http.curl("GET", "/ops/echo_note?note=hi&times=4").body["error"]["arg"] == "times"
    doc = http.curl("GET", "/openapi.json").body
    assert "/ops/echo_note" in doc["paths"]


# -- bad input: a clear error, nothing stored, the daemon serving on -----------------------------
@needs_curl
def test_bad_requests_are_refused_clearly_and_store_nothing(served: Served, http: Http) -> None:
    http.curl("POST", "/ops/add", {"content": "One memory, there before."})
    before = stored(served)
    content = {"content": "The secret staging host is db9.internal."}

    # (without curl's "Expect: 100-continue", which an HTTP/1.0 server never answers: curl
    # would wait a second before sending the body)
    big = http.curl("POST", "/ops/add", raw=b'{"content": "' + b"x" * (8 * 2**20) + b'"}',
                    headers={"Expect": ""})
    assert big.status == 413 and big.body["error"]["code"] == "too_large"
    too_long = http.curl("POST", "/ops/add", {"content": "x" * (ops.MAX_CONTENT_BYTES + 1)})
    assert too_long.status == 413 and too_long.body["error"]["arg"] == "content"

    cases = [
        ("POST", "/ops/add", {"content": 42}, 400, "'content' must be a string"),
        ("POST", "/ops/search", {"query": "x", "top_k": 1.5}, 400,
         "'top_k' must be an integer"),
        ("POST", "/ops/search", {"query": "x", "history": "yes"}, 400,
         "'history' must be true or false"),
        ("POST", "/ops/add", {"content": "x", "metadata": ["not", "a", "map"]}, 400,
         "'metadata' must be a map"),
        ("POST", "/memories", {"messages": [{"role": "user", "content": None}]}, 400,
         "messages"),
        ("POST", "/ops/add", {}, 400, "give exactly one of 'content' or 'items'"),
        ("GET", "/ops/list?limit=ten", None, 400, "'limit' must be an integer, not 'ten'"),
        ("GET", "/ops/list?limit=1&limit=2", None, 400, "'limit' is given twice"),
        ("POST", "/ops/ping", {}, 404, "no route"),
        ("POST", "/nowhere", {}, 404, "no route"),
        ("DELETE", "/search", None, 405, "answers POST"),
    ]
    for method, path, body, status, says in cases:
        answer = http.curl(method, path, body)
        assert answer.status == status, (path, body, answer.body)
        assert says in answer.body["error"]["message"], (path, answer.body)
    for raw, says in ((b"[1, 2]", "must be a JSON object"), (b'{"content": NaN}', "NaN"),
                      (b"\xff\xfe", "not UTF-8"), (b"[" * 100_000, "nests too deep"),
                      (b'{"content": "\\ud800"}', "not valid UTF-8")):
        answer = http.curl("POST", "/ops/add", raw=raw)
        assert answer.status == 400 and says in answer.body["error"]["message"], answer.body
    form = http.curl("POST", "/ops/add", raw=b"content=x",
                     content_type="application/x-www-form-urlencoded")
    assert form.status == 415
    chunked = http.curl("POST", "/ops/add", content, headers={"Transfer-Encoding": "chunked"})
    assert chunked.status == 411

    # no token, another token, a token in the wrong place: 401, and nothing read
    for token, where in ((None, {}), ("x" * 43, {}), (None, {"X-Api-Key": http.token}),
                         (http.token[:-1], {})):
        answer = http.curl("POST", "/ops/add", content, token=token, headers=where)
        assert answer.status == 401 and answer.body["error"]["code"] == "unauthorized"
        assert answer.headers["www-authenticate"] == 'Bearer realm="lintaid"'
    assert http.curl("GET", "/openapi.json", token=None).status == 401
    # a foreign Host (DNS rebinding): 421 before the token is even looked at
    for host in ("evil.example", f"evil.example:{http.port}", f"127.0.0.1:{http.port + 1}"):
        answer = http.curl("POST", "/ops/add", content, headers={"Host": host})
        assert answer.status == 421 and answer.body["error"]["code"] == "misdirected"
    # a web page of another origin, even one holding the token: 403
    for header in ({"Origin": "http://evil.example"}, {"Sec-Fetch-Site": "cross-site"},
                   {"Origin": f"http://localhost:{http.port + 1}"}):
        answer = http.curl("POST", "/ops/add", content, headers=header)
        assert answer.status == 403, header
    same = http.curl("GET", "/health", headers={"Origin": f"http://127.0.0.1:{http.port}"})
    assert same.status == 200

    assert stored(served) == before
    assert "db9" not in json.dumps(served.call("search", {"query": "staging host db9"}))
    assert served.call("ping")["pong"] is True
    assert http.curl("GET", "/health").status == 200


@needs_curl
def test_a_mem0_field_of_the_wrong_type_is_refused_under_the_name_sent(served: Served,
                                                                      http: Http) -> None:
    """mem0's names (limit, text, run_id, agent_id) are lintaid's arguments renamed; the
    refusal names the field the caller sent, not one it never wrote."""
    rid = http.curl("POST", "/ops/add", {"content": "Deploys use the release branch."}).body["id"]
    before = stored(served)
    cases = [
        ("POST", "/search", {"query": "deploys", "limit": "three"}, "limit",
         "'limit' must be an integer"),
        ("POST", "/search", {"query": "deploys", "limit": 0}, "limit", "'limit' must be between"),
        ("PUT", f"/memories/{rid}", {"text": 5}, "text", "'text' must be a string"),
        ("POST", "/memories", {"messages": "x", "run_id": 7}, "run_id",
         "'run_id' must be a string"),
        ("POST", "/memories", {"messages": "x", "agent_id": ["a"]}, "agent_id",
         "'agent_id' must be a string"),
    ]
    for method, path, body, arg, says in cases:
        answer = http.curl(method, path, body)
        assert answer.status == 400, (path, body, answer.body)
        assert answer.body["error"]["arg"] == arg, answer.body
        assert says in answer.body["error"]["message"], answer.body
    assert stored(served) == before
    assert http.curl("GET", f"/ops/get?id={rid}").body["content"] == \
        "Deploys use the release branch."


@needs_curl
def test_a_board_post_over_http_names_http_as_its_client_unless_it_says(served: Served,
                                                                       http: Http) -> None:
    """Every post carries its author's client: a program on the HTTP API is 'http' unless
    it names itself (a Node plugin's 'hermes')."""
    plain = http.curl("POST", "/ops/board_post", {"content": "from curl", "request_id": "h1"})
    assert plain.status == 200, plain.body
    assert (plain.body["client"], plain.body["author"]) == ("http", "http")
    named = http.curl("POST", "/ops/board_post", {"content": "from the plugin",
                                                  "request_id": "h2", "client": "hermes"})
    assert (named.body["client"], named.body["author"]) == ("hermes", "hermes")
    read = http.curl("GET", "/ops/board_read?after_sequence=0")
    assert [(p["content"], p["client"]) for p in read.body["posts"]] == [
        ("from curl", "http"), ("from the plugin", "hermes")]


# -- back-pressure: 429 and Retry-After instead of a wait ------------------------------------
def _held_writer(served: Served) -> threading.Event:
    """Hold the writer on a job until the event is set (what a long batch does)."""
    assert served.daemon is not None
    release = threading.Event()
    running = threading.Event()

    def hold() -> None:
        running.set()
        release.wait(60)

    served.daemon.writer.submit(hold)
    assert running.wait(30)
    return release


@needs_curl
def test_a_deep_writer_queue_answers_429_with_retry_after_and_stores_nothing(
        served: Served, http: Http) -> None:
    assert served.daemon is not None
    api = served.daemon.viewer.api
    api.max_queued = 1
    before = stored(served)
    release = _held_writer(served)
    try:
        served.daemon.writer.submit(lambda: None)  # one change waits behind it
        busy = http.curl("POST", "/memories", {"messages": "Queued too deep to be taken."})
        assert busy.status == 429 and busy.headers["retry-after"] == "1"
        assert busy.body["error"]["code"] == "busy" and busy.body["error"]["retryable"]
        assert http.curl("GET", "/health").status == 200  # reads still answer
    finally:
        release.set()
    wait_for(lambda: served.daemon is not None and served.daemon.writer.depth == 0)
    assert stored(served) == before
    retried = http.curl("POST", "/memories", {"messages": "Queued too deep to be taken."})
    assert retried.status == 200 and stored(served) == before + 1


@needs_curl
def test_requests_beyond_the_in_flight_limit_answer_429_not_a_wait(served: Served,
                                                                  http: Http) -> None:
    assert served.daemon is not None
    api = served.daemon.viewer.api
    api._slots = threading.BoundedSemaphore(1)
    release = _held_writer(served)
    first: list[Answer] = []
    sender = threading.Thread(target=lambda: first.append(
        http.curl("POST", "/ops/add", {"content": "The first change, held by the writer."})))
    try:
        sender.start()
        wait_for(lambda: api._slots._value == 0)  # the first request holds the one place
        busy = http.curl("POST", "/search", {"query": "first change"})
        assert busy.status == 429 and busy.headers["retry-after"] == "1"
    finally:
        release.set()
        sender.join(60)
    assert first[0].status == 200 and first[0].body["event"] == "ADD"
    assert http.curl("POST", "/search", {"query": "first change"}).status == 200


# -- request ids ---------------------------------------------------------------------------
@needs_curl
def test_a_change_sent_again_with_its_idempotency_key_is_made_once(served: Served,
                                                                  http: Http) -> None:
    key = {"Idempotency-Key": "turn-7f3a"}
    body = {"messages": [{"role": "assistant", "content": "Use ruff for linting."}]}
    first = http.curl("POST", "/memories", body, headers=key)
    second = http.curl("POST", "/memories", body, headers=key)
    assert first.status == second.status == 200
    assert second.body == first.body and second.headers["idempotent-replayed"] == "true"
    assert "idempotent-replayed" not in first.headers
    rid = first.body["results"][0]["id"]
    # Without the key the same text counts as stated again (a confirmation); with it, not.
    assert [e["event"] for e in http.curl("GET", f"/memories/{rid}/history").body] == ["ADD"]
    other = http.curl("POST", "/memories", {"messages": "Something else."}, headers=key)
    assert other.status == 422 and other.body["error"]["arg"] == "Idempotency-Key"
    assert stored(served) == 1
    # A refusal is not kept: the same key with a request that then succeeds runs it.
    bad = http.curl("POST", "/ops/add", {"content": 1}, headers={"Idempotency-Key": "k2"})
    good = http.curl("POST", "/ops/add", {"content": "Fixed."}, headers={"Idempotency-Key": "k2"})
    assert bad.status == 400 and good.status == 200 and stored(served) == 2
    too_long = http.curl("POST", "/ops/add", {"content": "x"},
                         headers={"Idempotency-Key": "k" * 201})
    assert too_long.status == 400


def test_lintaid_http_says_where_the_api_is_and_status_shows_it(served: Served) -> None:
    assert "off (`lintaid http` starts it)" in served.cli("status").stdout
    printed = served.cli("http")
    assert printed.exit_code == 0, printed.stderr
    info = served.json("http")
    assert info["started"] is False and info["url"] in printed.stdout
    assert info["openapi"] == info["url"] + "/openapi.json"
    assert str(paths.http_token_path(served.root)) in printed.stdout
    assert f"http      {info['url']}" in served.cli("status").stdout
    taken = served.cli("http", "--port", str(info["port"] + 1))
    assert taken.exit_code != 0 and "moves only with a new daemon" in taken.stderr
