"""The web viewer over real HTTP on the loopback address, served by a real daemon in this process:
who may talk to it (token, Host, same origin), where it listens, what its pages show, and that
its changes go through the ops. The browser tests are in ``test_viewer_browser.py``."""

from __future__ import annotations

import http.client
import re
import socket
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode, urlsplit

import psutil
import pytest

from lintaid_client import protocol
from tests.conftest import Served, wait_for

FORM = {"Content-Type": "application/x-www-form-urlencoded"}


@dataclass
class Page:
    status: int
    headers: dict[str, str]
    body: str


@dataclass
class Viewer:
    url: str
    port: int
    token: str

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def request(self, method: str, path: str, *, host: str | None = None,
                headers: dict[str, str] | None = None, body: str | None = None,
                token: bool = True) -> Page:
        """``method path`` below the token (``token=False``: as given), Host set as asked."""
        target = f"/{self.token}{path}" if token else path
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            conn.request(method, target, body=body.encode() if body is not None else None,
                         headers={"Host": f"127.0.0.1:{self.port}" if host is None else host,
                                  **(headers or {})})
            response = conn.getresponse()
            return Page(response.status, dict(response.getheaders()),
                        response.read().decode())
        finally:
            conn.close()

    def get(self, path: str, **kwargs: Any) -> Page:
        return self.request("GET", path, **kwargs)

    def post(self, path: str, fields: dict[str, str], *, origin: str | None = "same",
             headers: dict[str, str] | None = None, **kwargs: Any) -> Page:
        sent = {**FORM, **(headers or {})}
        if origin is not None:
            sent["Origin"] = self.origin if origin == "same" else origin
        return self.request("POST", path, headers=sent, body=urlencode(fields), **kwargs)


def open_viewer(served: Served, **args: Any) -> Viewer:
    result = served.call("ui", args)
    parts = urlsplit(result["url"])
    return Viewer(result["url"], result["port"], parts.path.strip("/"))


def add(served: Served, content: str) -> str:
    out = served.call("add", {"content": content})
    return str(out["id"])


@pytest.fixture
def viewer(served: Served) -> Viewer:
    return open_viewer(served)


# -- where it listens ------------------------------------------------------------------------
def _listening() -> set[tuple[str, int]]:
    return {(c.laddr.ip, c.laddr.port) for c in psutil.Process().net_connections("inet")
            if c.status == psutil.CONN_LISTEN}


def test_nothing_listens_until_asked_and_then_only_on_loopback(served: Served) -> None:
    before = _listening()
    assert served.call("status")["viewer"] is None
    viewer = open_viewer(served)
    new = _listening() - before
    assert new == {("127.0.0.1", viewer.port)}
    assert viewer.url == f"http://127.0.0.1:{viewer.port}/{viewer.token}/"
    assert len(viewer.token) >= 40
    # Asked again, the daemon finds the one it runs.
    assert served.call("ui", {})["url"] == viewer.url
    assert served.call("status")["viewer"]["url"] == viewer.url


def test_the_viewer_stops_with_the_daemon_even_with_a_live_page_open(served: Served) -> None:
    viewer = open_viewer(served)
    conn = http.client.HTTPConnection("127.0.0.1", viewer.port, timeout=30)
    conn.request("GET", f"/{viewer.token}/events", headers={"Host": f"127.0.0.1:{viewer.port}"})
    stream = conn.getresponse()
    assert stream.status == 200 and stream.getheader("Content-Type") == "text/event-stream"
    assert stream.readline() == b"retry: 2000\n"
    served.stop()  # returns only once every request thread has ended
    assert stream.read() == b"\n"  # the stream ends; nothing more comes
    conn.close()
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", viewer.port), timeout=5).close()


def test_each_daemon_has_its_own_token(served: Served) -> None:
    first = open_viewer(served)
    served.restart()
    second = open_viewer(served)
    assert first.token != second.token
    assert second.get("/", token=False).status == 401
    assert Viewer(second.url, second.port, first.token).get("/").status == 401
    assert second.get("/").status == 200


# -- the gate ---------------------------------------------------------------------------------
SECRET_TEXT = "The staging database lives on db7.internal."


def test_without_the_token_every_page_and_endpoint_answers_401(served: Served,
                                                                viewer: Viewer) -> None:
    rid = add(served, SECRET_TEXT)
    wrong = "x" * len(viewer.token)
    paths = ["/", f"/record/{rid}", "/search?q=staging", "/conflicts", "/status", "/events",
             "/static/app.css", "/static/live.js", "/nothing"]
    for path in paths:
        for target in (path, f"/{wrong}{path}", f"{path}?token={viewer.token}"):
            page = viewer.get(target, token=False)
            assert page.status == 401, target
            assert "db7" not in page.body
    posted = viewer.post(f"/{wrong}/record/{rid}/forget", {"reason": "x"}, token=False)
    assert posted.status == 401
    assert viewer.request("PUT", "/", token=False).status == 401
    assert served.memory().get(rid)["status"] == "current"
    # With it, the same pages answer.
    for path in paths[:-1]:
        if path != "/events":
            assert viewer.get(path).status == 200, path
    assert "db7.internal" in viewer.get(f"/record/{rid}").body


def test_a_host_that_is_not_the_loopback_address_and_port_answers_421(served: Served,
                                                                       viewer: Viewer) -> None:
    add(served, SECRET_TEXT)
    for host in ("evil.example", f"evil.example:{viewer.port}", "127.0.0.1",
                 f"127.0.0.1:{viewer.port + 1}", f"[::1]:{viewer.port}", f"0.0.0.0:{viewer.port}",
                 ""):
        page = viewer.get("/", host=host)
        assert page.status == 421, host
        assert "db7" not in page.body
    for host in (f"127.0.0.1:{viewer.port}", f"localhost:{viewer.port}",
                 f"LOCALHOST:{viewer.port}"):
        assert viewer.get("/", host=host).status == 200, host


def test_a_change_needs_the_same_origin(served: Served, viewer: Viewer) -> None:
    rid = add(served, SECRET_TEXT)
    refusals = [
        {"origin": "http://evil.example"},
        {"origin": f"http://evil.example:{viewer.port}"},
        {"origin": f"https://127.0.0.1:{viewer.port}"},
        {"origin": f"http://127.0.0.1:{viewer.port + 1}"},
        {"origin": "null"},
        {"origin": None},  # neither Origin nor Sec-Fetch-Site
        {"origin": None, "headers": {"Sec-Fetch-Site": "cross-site"}},
        {"origin": None, "headers": {"Sec-Fetch-Site": "same-site"}},
    ]
    for case in refusals:
        page = viewer.post(f"/record/{rid}/forget", {"reason": "csrf"}, **case)
        assert page.status == 403, case
    assert served.memory().get(rid)["status"] == "current"
    assert [e["event"] for e in served.call("history", {"id": rid})["results"]] == ["ADD"]
    # From the viewer's own page it goes through the op, and the audit log names the viewer.
    page = viewer.post(f"/record/{rid}/forget", {"reason": "wrong host"})
    assert page.status == 303
    assert page.headers["Location"] == f"/{viewer.token}/?notice=forgotten&id={rid}"
    with pytest.raises(protocol.NotFound):
        served.memory().get(rid)
    gone = viewer.get(f"/record/{rid}")  # its page says so, and offers to restore it
    assert gone.status == 200 and 'class="badge forgotten"' in gone.body
    assert f'action="/{viewer.token}/record/{rid}/restore"' in gone.body


def test_a_browser_without_origin_is_recognised_by_fetch_metadata(served: Served,
                                                                   viewer: Viewer) -> None:
    rid = add(served, SECRET_TEXT)
    page = viewer.post(f"/record/{rid}/forget", {"reason": "r"}, origin=None,
                       headers={"Sec-Fetch-Site": "same-origin"})
    assert page.status == 303


def test_pages_keep_to_themselves(viewer: Viewer) -> None:
    headers = viewer.get("/").headers
    csp = headers["Content-Security-Policy"]
    assert "default-src 'none'" in csp and "script-src 'self'" in csp
    assert "frame-ancestors 'none'" in csp
    assert headers["X-Frame-Options"] == "DENY"
    assert headers["Referrer-Policy"] == "same-origin"
    assert headers["Cache-Control"] == "no-store"
    body = viewer.get("/").body
    assert "http://" not in body and "https://" not in body  # nothing fetched from elsewhere
    assert re.findall(r'<script src="([^"]+)"', body) == [f"/{viewer.token}/static/live.js"]


# -- the CLI -----------------------------------------------------------------------------------
def test_lintaid_ui_prints_the_address_and_status_gives_it(served: Served) -> None:
    out = served.cli("ui", "--no-open")
    assert out.exit_code == 0, out.stderr
    url = re.search(r"http://127\.0\.0\.1:\d+/\S+/", out.stdout)
    assert url is not None, out.stdout
    assert served.json("status")["viewer"]["url"] == url.group(0)
    assert url.group(0) in served.cli("status").stdout
    port = served.json("status")["viewer"]["port"]
    moved = served.cli("ui", "--no-open", "--port", str(port % 60000 + 1024))
    assert moved.exit_code == 1 and f"already listens at 127.0.0.1:{port}" in moved.stderr
    assert served.cli("ui", "--no-open", "--port", str(port)).exit_code == 0


def test_lintaid_ui_on_a_port_in_use_says_so(served: Served) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        out = served.cli("ui", "--no-open", "--port", str(port))
    assert out.exit_code == 1
    assert f"cannot listen on 127.0.0.1:{port}" in out.stderr
    assert served.call("status")["viewer"] is None
    assert served.cli("ui", "--no-open", "--port", "70000").exit_code == 2  # click's range


def test_lintaid_ui_on_a_chosen_port(served: Served) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = served.json("ui", "--no-open", "--port", str(port))
    assert result["port"] == port and result["url"].startswith(f"http://127.0.0.1:{port}/")


# -- pages -------------------------------------------------------------------------------------
def _record_links(body: str) -> list[str]:
    return re.findall(r'class="rec" href="/[^/]+/record/([^"]+)"', body)


def test_the_timeline_filters_by_status_kind_time_and_session(served: Served,
                                                              viewer: Viewer) -> None:
    old = add(served, "The gateway uses requests for HTTP calls.")
    new = add(served, "The gateway uses httpx instead of requests for HTTP calls.")
    note = add(served, "Release notes live in docs/releases.md.")
    assert _record_links(viewer.get("/").body) == [note, new]
    assert _record_links(viewer.get("/?status=superseded").body) == [old]
    assert _record_links(viewer.get("/?status=current").body) == [note, new]
    assert _record_links(viewer.get("/?kind=capture").body) == []
    assert _record_links(viewer.get("/?client=codex").body) == []
    assert _record_links(viewer.get("/?session_id=nope").body) == []
    assert _record_links(viewer.get("/?since=2999-01-01").body) == []
    assert _record_links(viewer.get("/?until=2999-01-01&status=superseded").body) == [old]
    bad = viewer.get("/?since=yesterday")
    assert bad.status == 400 and "neither epoch seconds nor an ISO 8601" in bad.body
    assert viewer.get("/?client=nobody").status == 400
    assert viewer.get("/?offset=-x").status == 400


def test_the_live_stream_tells_of_each_commit(served: Served, viewer: Viewer) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", viewer.port, timeout=30)
    conn.request("GET", f"/{viewer.token}/events", headers={"Host": f"127.0.0.1:{viewer.port}"})
    stream = conn.getresponse()
    assert stream.readline() == b"retry: 2000\n"
    add(served, "A new decision arrives while the page is open.")
    lines = []
    wait_for(lambda: lines.append(stream.readline()) or b"event: change\n" in lines, 20)
    conn.close()
    fragment = viewer.get("/?fragment=1").body
    assert "A new decision arrives" in fragment and "<html" not in fragment


def test_the_record_page_shows_the_chain_and_what_replaced_it(served: Served,
                                                              viewer: Viewer) -> None:
    old = add(served, "The gateway uses requests for HTTP calls.")
    new = add(served, "The gateway uses httpx instead of requests for HTTP calls.")
    body = viewer.get(f"/record/{old}").body
    assert f'id="replaced-by" href="/{viewer.token}/record/{new}"' in body
    chain = body.split('id="chains"')[1].split("</section>")[0]
    assert chain.index("requests") < chain.index("httpx")  # oldest first
    # "instead of requests" names the older value: a transition
    assert "supersedes by <strong>httpx</strong>" in chain and "(transition, " in chain
    assert "0.95" in chain
    newer = viewer.get(f"/record/{new}").body
    assert "this supersedes" in newer and old in newer
    assert "ADD" in newer.split('id="audit"')[1]


def test_recorded_text_is_shown_as_text(served: Served, viewer: Viewer) -> None:
    rid = add(served, 'Escape <script>alert("x")</script> and <img src=x onerror=alert(1)>.')
    for page in (viewer.get("/").body, viewer.get(f"/record/{rid}").body,
                 viewer.get("/search?q=escape+script").body):
        assert "<script>alert" not in page and "<img src=x" not in page
        assert "&lt;img src=x onerror=alert(1)&gt;" in page


def test_search_ranks_as_the_cli_does_and_marks_the_words(served: Served,
                                                          viewer: Viewer) -> None:
    for n in range(6):
        add(served, f"Gateway retry note {n}: the upstream timeout is {n * 100} ms"
                    + " for the gateway" * n)
    cli = [h["id"] for h in served.json("search", "gateway timeout", "--top-k", "5")["results"]]
    page = viewer.get("/search?q=gateway+timeout&top_k=5").body
    assert _record_links(page) == cli
    assert "<mark>Gateway</mark>" in page and "<mark>timeout</mark>" in page


def test_search_history_shows_retired_statements(served: Served, viewer: Viewer) -> None:
    old = add(served, "The gateway uses requests for HTTP calls.")
    add(served, "The gateway uses httpx instead of requests for HTTP calls.")
    assert old not in _record_links(viewer.get("/search?q=gateway+requests").body)
    page = viewer.get("/search?q=gateway+requests&history=1").body
    assert old in _record_links(page) and ">historical<" in page


def test_bad_input_is_refused_with_the_ops_message_and_loses_nothing(served: Served,
                                                                     viewer: Viewer) -> None:
    rid = add(served, "Gateway retry attempts: 2.")
    typed = "Gateway retry attempts: 4, said the <b>release</b> team."
    page = viewer.post(f"/record/{rid}/supersede", {"content": typed, "new_id": "m0"})
    assert page.status == 400
    assert "give exactly one of" in page.body
    assert "Gateway retry attempts: 4, said the &lt;b&gt;release&lt;/b&gt; team." in page.body
    assert 'value="m0"' in page.body
    assert [e["event"] for e in served.call("history", {"id": rid})["results"]] == ["ADD"]
    missing = viewer.post(f"/record/{rid}/supersede", {"new_id": "m-nothing"})
    assert missing.status == 404
    assert viewer.post(f"/record/{rid}/supersede", {}).status == 400
    huge = viewer.post(f"/record/{rid}/supersede", {"content": "x" * 600_000})
    assert huge.status == 413
    as_json = viewer.post(f"/record/{rid}/forget", {}, headers={
        "Content-Type": "application/json"})
    assert as_json.status == 415
    assert viewer.post("/record/nothing-here/forget", {}).status == 404
    assert viewer.post("/status", {}).status == 405
    assert served.memory().get(rid)["status"] == "current"


def test_supersede_from_the_record_page(served: Served, viewer: Viewer) -> None:
    rid = add(served, "Gateway retry attempts: 2.")
    page = viewer.post(f"/record/{rid}/supersede", {"content": "Gateway retry attempts: 5."})
    assert page.status == 303
    new_id = page.headers["Location"].split("/record/")[1].split("?")[0]
    assert served.memory().get(rid)["status"] == "superseded"
    shown = viewer.get(f"/record/{new_id}?notice=superseded&id={rid}").body
    assert "attempts: 5" in shown and f"{rid} is superseded by this record" in shown
    assert served.call("history", {"id": new_id})["results"][0]["actor"] == "viewer"


def test_conflicts_and_status_pages(served: Served, viewer: Viewer) -> None:
    add(served, "Dan owns the payments service. Eve owns the payments service.")
    conflicts = viewer.get("/conflicts").body
    assert "payments service" in conflicts and "Dan owns" in conflicts and "Eve owns" in conflicts
    status = viewer.get("/status").body
    for section in ('id="daemon"', 'id="stores"', 'id="watcher"', 'id="spool"', 'id="clients"'):
        assert section in status
    assert "claude-code" in status and "not installed" in status


def test_list_takes_the_timeline_filters(served: Served) -> None:
    old = add(served, "The gateway uses requests for HTTP calls.")
    add(served, "The gateway uses httpx instead of requests for HTTP calls.")
    listed = served.json("list", "--status", "superseded")["results"]
    assert [h["id"] for h in listed] == [old]
    assert served.json("list", "--branch", "nope")["results"] == []
    assert served.cli("list", "--status", "forgotten").exit_code == 2


def test_each_status_filter_lists_exactly_the_records_of_that_status(served: Served) -> None:
    """The list filter's SQL and the status every hit carries say the same."""
    add(served, "The gateway uses requests for HTTP calls. Gateway retry attempts: 2.")
    add(served, "Gateway retry attempts: now 3.")  # partly supersedes the first (a cue)
    add(served, "The billing job uses cron for scheduling.")
    add(served, "The billing job uses Airflow instead of cron for scheduling.")
    add(served, "Dan owns the payments service. Eve owns the payments service.")
    add(served, "Release notes live in docs/releases.md.")
    gone = add(served, "The old staging host is stage1.")
    served.call("expire", {"id": gone})
    every = served.call("list", {"include_hidden": True, "limit": 100})["results"]
    by_status: dict[str, set[str]] = {}
    for hit in every:
        by_status.setdefault(hit["status"], set()).add(hit["id"])
    assert set(by_status) == {"current", "partly_superseded", "superseded", "conflicted",
                              "expired"}
    for status, ids in by_status.items():
        listed = served.call("list", {"status": status, "limit": 100})["results"]
        assert {h["id"] for h in listed} == ids, status
        assert {h["status"] for h in listed} == {status}


# -- trust: restore, review, audit -------------------------------------------------------------
def _error(body: str) -> str:
    found = re.search(r'<p class="error" role="alert">([^<]*)</p>', body)
    assert found is not None, "the page shows no error"
    return found.group(1)


def test_forget_then_restore_from_the_records_page(served: Served, viewer: Viewer) -> None:
    rid = add(served, "The staging database lives on db7.internal.")
    forgot = viewer.post(f"/record/{rid}/forget", {"reason": "wrong host"})
    timeline = viewer.get(forgot.headers["Location"].removeprefix(f"/{viewer.token}")).body
    assert f'id="notice-link" href="/{viewer.token}/record/{rid}">Restore it' in timeline
    page = viewer.get(f"/record/{rid}")
    assert page.status == 200 and 'class="badge forgotten"' in page.body
    assert "by <strong>viewer</strong>: <q>wrong host</q>" in page.body
    assert "db7.internal" in page.body.split("<details>")[1]  # the text, folded away
    assert [e["event"] for e in served.call("history", {"id": rid})["results"]] == [
        "ADD", "FORGET"]

    restored = viewer.post(f"/record/{rid}/restore", {"reason": "it was right after all"})
    assert restored.status == 303
    assert restored.headers["Location"] == (
        f"/{viewer.token}/record/{rid}?notice=restored&id={rid}")
    shown = viewer.get(f"/record/{rid}?notice=restored&id={rid}").body
    assert f"Restored {rid}: it is searched and injected again" in shown
    assert 'class="badge current"' in shown and "/restore" not in shown
    assert served.memory().get(rid)["status"] == "current"
    hits = served.call("search", {"query": "staging database"})["results"]
    assert [h["id"] for h in hits] == [rid]
    trail = served.call("history", {"id": rid})["results"]
    assert [(e["event"], e["actor"]) for e in trail] == [
        ("ADD", "api"), ("FORGET", "viewer"), ("RESTORE", "viewer")]
    assert trail[-1]["detail"]["reason"] == "it was right after all"
    assert "RESTORE" in shown.split('id="audit"')[1]


def test_restore_refusals_are_said_on_the_page_and_change_nothing(served: Served,
                                                                  viewer: Viewer) -> None:
    rid = add(served, "Gateway retry attempts: 2.")
    # A record that is not forgotten: its own page again, with the op's message.
    page = viewer.post(f"/record/{rid}/restore", {"reason": "why not"})
    assert page.status == 400
    assert _error(page.body) == f"{rid} is not forgotten; nothing to restore"
    assert "Gateway retry attempts: 2." in page.body
    assert viewer.post("/record/m-nothing-here/restore", {}).status == 404
    served.call("forget", {"id": rid})
    # Without the token, from another origin, or with a reason too long: still forgotten.
    assert viewer.post(f"/record/{rid}/restore", {}, token=False).status == 401
    assert viewer.post(f"/nottoken/record/{rid}/restore", {}, token=False).status == 401
    assert viewer.post(f"/record/{rid}/restore", {},
                       origin="http://evil.example").status == 403
    long = viewer.post(f"/record/{rid}/restore", {"reason": "r" * 3000})
    assert long.status == 400 and "reason" in _error(long.body)
    assert 'class="badge forgotten"' in long.body and 'value="' + "r" * 3000 in long.body
    assert [e["event"] for e in served.call("history", {"id": rid})["results"]] == [
        "ADD", "FORGET"]
    assert viewer.get("/record/m-nothing-here").status == 404


SAME_TIME = 1_790_000_000.0  # two memories stamped alike (one import batch) that disagree


def _conflict(served: Served) -> tuple[str, str]:
    dan = served.call("add", {"content": "Dan owns the payments service.",
                              "created_at": SAME_TIME})["id"]
    eve = served.call("add", {"content": "Eve owns the payments service.",
                              "created_at": SAME_TIME})["id"]
    return dan, eve


def _items(body: str) -> list[str]:
    return re.findall(r'data-item="([^"]+)"', body)


def test_accept_a_review_item_from_the_conflicts_page(served: Served, viewer: Viewer) -> None:
    dan, eve = _conflict(served)
    item = served.call("review", {})["results"][0]
    newer, older = item["newer"]["record_id"], item["older"]["record_id"]
    page = viewer.get("/conflicts").body
    assert _items(page) == [item["id"]]  # once: the conflict is the review item
    assert 'id="conflicts"' not in page
    shown = page.split(f'id="item-{item["id"]}"')[1]
    sides = shown.split('class="sides"')[1]  # the newer statement first, then the older
    assert sides.index(f'value">{item["newer"]["value"]}<') < sides.index(
        f'value">{item["older"]["value"]}<')
    assert "conflict: the two disagree" in shown and "confidence 0.75" in shown
    assert f"explicitly supersedes <a href=\"/{viewer.token}/record/{older}\"" in shown
    assert f'action="/{viewer.token}/review/{item["id"]}/accept"' in shown
    assert f'formaction="/{viewer.token}/review/{item["id"]}/reject"' in shown

    done = viewer.post(f"/review/{item['id']}/accept", {"reason": "Eve took it over"})
    assert done.status == 303
    after = viewer.get(done.headers["Location"].removeprefix(f"/{viewer.token}")).body
    assert (f"Accepted {item['id']}: {newer} now explicitly supersedes {older}, which is "
            "hidden") in after
    assert _items(after) == [] and "No unresolved conflicts." in after
    assert served.call("get", {"id": older})["status"] == "superseded"
    assert [h["id"] for h in served.call("search", {"query": "payments service owner"})[
        "results"]] == [newer]
    assert served.call("review", {})["count"] == 0
    decisions = served.call("audit", {"actor": "viewer"})["results"]
    assert {(e["event"], e["memory_id"]) for e in decisions} >= {("ACCEPT", dan),
                                                                ("ACCEPT", eve)}
    assert all(e["detail"]["reason"] == "Eve took it over"
               for e in decisions if e["event"] == "ACCEPT")
    # Deciding the same again changes nothing; the other way is refused on the page.
    again = viewer.post(f"/review/{item['id']}/accept", {})
    assert "was accepted already; nothing changed" in viewer.get(
        again.headers["Location"].removeprefix(f"/{viewer.token}")).body
    refused = viewer.post(f"/review/{item['id']}/reject", {"reason": "no"})
    assert refused.status == 400 and "never taken back" in _error(refused.body)
    assert served.call("get", {"id": older})["status"] == "superseded"


def test_reject_a_review_item_and_the_refusals(served: Served, viewer: Viewer) -> None:
    rid = add(served, "Dan owns the payments service. Eve owns the payments service.")
    item = served.call("review", {})["results"][0]["id"]
    page = viewer.get("/conflicts").body
    assert _items(page) == [item]
    one = page.split(f'id="item-{item}"')[1]
    assert "Both statements are in one memory" in one and 'value="accept"' not in one
    # Accepting cannot link a memory to itself: said beside the item, the reason kept.
    refused = viewer.post(f"/review/{item}/accept", {"reason": "typed"})
    assert refused.status == 400 and "in one memory" in _error(refused.body)
    assert 'value="typed"' in refused.body.split(f'id="item-{item}"')[1]
    # A bad item id, no token, another origin, a wrong verb: refused, nothing decided.
    bad = viewer.post("/review/rv0000000000000000000000/reject", {})
    assert bad.status == 404 and "no review item" in _error(bad.body)
    assert _items(bad.body) == [item]
    assert viewer.post(f"/review/{item}/reject", {}, token=False).status == 401
    assert viewer.post(f"/review/{item}/reject", {}, origin="http://evil.example").status == 403
    assert viewer.post(f"/review/{item}/forget", {}).status == 404
    assert viewer.post(f"/record/{rid}/accept", {}).status == 405
    assert viewer.get(f"/review/{item}").status == 404
    assert served.call("review", {})["count"] == 1

    done = viewer.post(f"/review/{item}/reject", {"reason": "they share it"})
    assert done.status == 303
    after = viewer.get(done.headers["Location"].removeprefix(f"/{viewer.token}")).body
    assert f"Rejected {item}: {rid} and {rid} will not be related again" in after
    assert _items(after) == []
    assert served.call("get", {"id": rid})["status"] == "current"
    trail = served.call("history", {"id": rid})["results"]
    assert [(e["event"], e["actor"]) for e in trail] == [("ADD", "api"), ("REJECT", "viewer")]


def test_the_audit_page_lists_changes_newest_first_by_actor_and_time(served: Served,
                                                                     viewer: Viewer) -> None:
    ids = served.call("add", {"items": [{"content": f"Release train {n} leaves on Tuesday."}
                                        for n in range(55)]})["results"]
    first = ids[0]["id"]
    viewer.post(f"/record/{first}/forget", {"reason": "cancelled"})
    page = viewer.get("/audit")
    assert page.status == 200
    rows = re.findall(r'<tr data-seq="(\d+)"><td>[^<]*</td><td class="event">(\w+)</td>'
                      r'<td class="actor">([^<]*)</td>', page.body)
    newest = [e["id"] for e in served.call("audit", {"order": "newest", "limit": 100})[
        "results"]]
    assert [r[0] for r in rows] == newest[:50]
    assert rows[0][1:] == ("FORGET", "viewer")
    older = re.search(r'href="([^"]+)" rel="next">Older<', page.body)
    assert older is not None
    rest = viewer.get(older.group(1).replace("&amp;", "&").removeprefix(f"/{viewer.token}"))
    assert re.findall(r'<tr data-seq="(\d+)">', rest.body) == newest[50:]
    assert 'rel="next"' not in rest.body and 'rel="first"' in rest.body
    # Filters: by actor, by time, by memory; the oldest first when asked.
    mine = viewer.get("/audit?actor=viewer").body
    assert re.findall(r'<td class="event">(\w+)</td>', mine) == ["FORGET"]
    assert f'href="/{viewer.token}/record/{first}"' in mine
    assert "No changes recorded that match" in viewer.get("/audit?since=2999-01-01").body
    one = viewer.get(f"/audit?id={first}&order=oldest").body
    assert re.findall(r'<td class="event">(\w+)</td>', one) == ["ADD", "FORGET"]
    bad = viewer.get("/audit?since=yesterday")
    assert bad.status == 400 and "neither epoch seconds nor an ISO 8601" in _error(bad.body)
    assert viewer.get("/audit?order=sideways").status == 400
    assert viewer.get("/audit?after=x").status == 400
    assert viewer.get("/audit", token=False).status == 401
