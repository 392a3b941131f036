"""Everything about an op is in its declaration (``lintaid_client.ops``): whether it waits for
the index, which arguments a face stamps, and that a handler answers it. The socket server,
the viewer (and through it the HTTP API) run an op through the one ``lintaid.ops.dispatch``,
so a declaration alone changes what each of them does."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import Served

from lintaid import ops as handlers
from lintaid.viewer.calls import OpCaller
from lintaid_client import ops


def test_the_handler_table_answers_exactly_the_declared_ops() -> None:
    handlers.check_handlers(handlers.HANDLERS, ops.OPS)  # what the import ran
    spec = ops.Op("echo_extra", ops.READ, "Not served.")
    with pytest.raises(RuntimeError, match=r"no handler for \['echo_extra'\]"):
        handlers.check_handlers(handlers.HANDLERS, {**ops.OPS, spec.name: spec})
    fewer = {k: v for k, v in handlers.HANDLERS.items() if k != "confirm"}
    with pytest.raises(RuntimeError, match=r"no declaration for none"):
        handlers.check_handlers(fewer, ops.OPS)
    with pytest.raises(RuntimeError, match=r"no declaration for \['gone'\]"):
        handlers.check_handlers({**handlers.HANDLERS, "gone": handlers.op_ping}, ops.OPS)


def test_only_search_waits_for_the_index() -> None:
    assert [name for name, spec in ops.OPS.items() if spec.waits_for_index] == ["search"]


def test_stamp_fills_what_a_face_names_and_keeps_what_the_request_names() -> None:
    post = ops.OPS["board_post"]
    assert ops.stamp(post, {"content": "x"}, "http")["client"] == "http"
    assert ops.stamp(post, {"content": "x", "client": "codex"}, "http")["client"] == "codex"
    add = ops.OPS["add"]
    assert ops.stamp(add, {"content": "x"}, "viewer")["actor"] == "viewer"
    assert ops.stamp(add, {"content": "x", "actor": "cli"}, "viewer")["actor"] == "cli"
    # audit's 'actor' is a filter, not who acts: no face fills it
    assert "actor" not in ops.stamp(ops.OPS["audit"], {}, "viewer")
    # a socket request that names nobody: the daemon names the declaration's default
    # (test_each_face_names_itself_in_the_audit_log), which no client sends as its own
    assert ops.validate(add, {"content": "x"})["actor"] is None
    assert ops.DEFAULT_ACTOR == "api"


def _declare(monkeypatch: pytest.MonkeyPatch, served: Served) -> list[str | None]:
    """Two read ops that answer the same, one declared to wait for the index; returns the
    tokens the Reader was asked to settle on (the real settle still runs)."""
    for name, waits in (("echo_wait", True), ("echo_now", False)):
        monkeypatch.setitem(ops.OPS, name, ops.Op(name, ops.READ, "Say a note back.", (
            ops.Arg("note", ops.STR, "what to say", required=True, max_bytes=20),),
            waits_for_index=waits))
        monkeypatch.setitem(handlers.HANDLERS, name, lambda s, a: {"said": a["note"]})
    assert served.daemon is not None
    reader = served.daemon.services.reader
    settled: list[str | None] = []
    real = reader.settle

    def settle(token: str | None, *args: Any, **kwargs: Any) -> Any:
        settled.append(token)
        return real(token, *args, **kwargs)

    monkeypatch.setattr(reader, "settle", settle)
    return settled


def test_every_face_waits_for_the_index_exactly_when_the_declaration_says(
        served: Served, monkeypatch: pytest.MonkeyPatch) -> None:
    settled = _declare(monkeypatch, served)
    memory = served.memory()
    added = memory.add("We deploy with Helm.")["results"][0]
    assert added["event"] == "ADD"

    assert memory.call("echo_now", {"note": "hi"}) == {"said": "hi"}
    assert settled == []
    assert memory.call("echo_wait", {"note": "hi"}) == {"said": "hi"}
    assert len(settled) == 1 and settled[0] is not None  # the client's read-your-writes token

    assert served.daemon is not None
    viewer = OpCaller(served.daemon.services)
    assert viewer("echo_now", note="yo") == {"said": "yo"}
    assert len(settled) == 1
    assert viewer("echo_wait", note="yo") == {"said": "yo"}
    assert settled[1:] == [None]  # the viewer waits for every committed write
    memory.close()


def test_each_face_names_itself_in_the_audit_log(served: Served) -> None:
    assert served.daemon is not None
    memory = served.memory()
    by_socket = memory.add("Builds run on Buildkite.")["results"][0]["id"]
    by_viewer = OpCaller(served.daemon.services)("add", content="Deploys go through Argo.")
    by_http = OpCaller(served.daemon.services, actor="http")(
        "add", content="Logs ship to Loki.")
    actors = {e["memory_id"]: e["actor"] for e in memory.audit()["results"]}
    assert actors[by_socket] == ops.DEFAULT_ACTOR
    assert actors[by_viewer["id"]] == "viewer"
    assert actors[by_http["id"]] == "http"
    memory.close()
