"""The review queue against a real daemon: what waits, accept and reject through the CLI, the
Python client and the MCP tools, the injected marker, and decisions held through restarts and
full rebuilds of the derived state (held beside derived)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from lintaid.derivation import rebuild_memory
from lintaid.policy import CONFLICTS_WITH, SUPERSEDES
from lintaid.policy.review import reviewable, waits
from lintaid.store.memory import MemoryStore
from lintaid_client import mcp_rpc, protocol
from lintaid_client.mcp_tools import Toolbox
from tests.conftest import Served

# Two memories stamped alike (one mem0 batch, say) that disagree; recent, so not yet stale.
SAME_TIME = float(int(time.time()) - 3600)


def conflict(served: Served, first: str = "Dan owns the payments service.",
             second: str = "Eve owns the payments service.") -> tuple[str, str]:
    """Two memories of the same moment that disagree: an unresolved conflict."""
    a = served.call("add", {"content": first, "created_at": SAME_TIME})["id"]
    b = served.call("add", {"content": second, "created_at": SAME_TIME})["id"]
    return a, b


def rebuild(served: Served) -> None:
    """Stop the daemon, derive everything again from empty derived tables, start it."""
    served.stop()
    store = MemoryStore(served.root)
    try:
        before = store.db.execute("SELECT COUNT(*) FROM relations").fetchone()[0]
        rebuild_memory(store)
        assert store.db.execute("SELECT COUNT(*) FROM relations").fetchone()[0] <= before
    finally:
        store.close()
    served.start()


def statuses(served: Served, query: str) -> dict[str, str]:
    return {h["id"]: h["status"] for h in served.call("search", {"query": query})["results"]}


def test_what_waits_for_review() -> None:
    assert waits(SUPERSEDES, 0.80, explicit=False)  # too weak to hide the older memory
    assert not waits(SUPERSEDES, 0.90, explicit=False)  # hides it: settled by the policy
    assert not waits(SUPERSEDES, 0.60, explicit=False)  # below the conflict threshold
    assert waits(CONFLICTS_WITH, 0.75, explicit=False)
    assert not waits(CONFLICTS_WITH, 0.75, explicit=True)
    assert reviewable(SUPERSEDES, 0.95, explicit=False)  # a person may still reject it
    assert not reviewable(SUPERSEDES, 1.0, explicit=True)


def test_a_conflict_waits_is_marked_in_injection_and_a_rejection_is_held(
        served: Served) -> None:
    dan, eve = conflict(served)
    queue = served.json("review")
    assert queue["count"] == 1
    item = queue["results"][0]
    assert item["kind"] == "conflicts_with" and item["status"] == "pending"
    assert {item["newer"]["record_id"], item["older"]["record_id"]} == {dan, eve}
    assert statuses(served, "payments service owner") == {dan: "conflicted", eve: "conflicted"}
    # get, search and injection say a review is pending on each side
    assert served.call("get", {"id": dan})["reviews"] == [item["id"]]
    context = served.hook("UserPromptSubmit", {"session_id": "s1",
                                               "prompt": "who owns the payments service?"})
    text = context["hookSpecificOutput"]["additionalContext"]
    assert f"review pending: {item['id']}" in text

    out = served.cli("review", "reject", item["id"], "--reason", "they share it")
    assert out.exit_code == 0 and "will not be related again" in out.stdout
    assert served.json("review")["count"] == 0
    assert statuses(served, "payments service owner") == {dan: "current", eve: "current"}
    assert served.call("get", {"id": dan})["reviews"] == []
    trail = [e for e in served.json("audit")["results"] if e["event"] == "REJECT"]
    assert {e["memory_id"] for e in trail} == {dan, eve}
    assert all(e["actor"] == "cli" and e["detail"]["reason"] == "they share it" for e in trail)
    # deciding again changes nothing
    again = served.json("review", "reject", item["id"])
    assert again["event"] == "NONE" and again["status"] == "rejected"

    served.restart()
    assert served.json("review")["count"] == 0
    assert statuses(served, "payments service owner") == {dan: "current", eve: "current"}
    rebuild(served)
    assert served.json("review")["count"] == 0
    assert statuses(served, "payments service owner") == {dan: "current", eve: "current"}
    # the same text captured again under another id makes a new pair: it waits again
    eve2 = served.call("add", {"content": "Eve owns the payments service.", "source": "other",
                               "created_at": SAME_TIME})["id"]
    fresh = served.json("review")["results"]
    assert [{i["newer"]["record_id"], i["older"]["record_id"]} for i in fresh] == [{dan, eve2}]


def test_an_accepted_item_hides_the_older_record_and_survives_a_rebuild(
        served: Served) -> None:
    dan, eve = conflict(served)
    item = served.memory().review()[0]
    newer, older = item.newer.record_id, item.older.record_id
    decided = served.memory().accept(item.id, reason="Eve took it over")
    assert decided == {"id": item.id, "event": "ACCEPT", "status": "accepted",
                       "newer_id": newer, "older_id": older}
    assert statuses(served, "payments service owner") == {newer: "current"}
    got = served.call("get", {"id": older})
    assert got["status"] == "superseded" and got["superseded_by"] == newer
    events = [e["event"] for e in served.call("history", {"id": older})["results"]]
    assert events == ["ADD", "SUPERSEDE", "ACCEPT"]
    # an acceptance is a link: it cannot become a rejection
    with pytest.raises(protocol.BadRequest, match="never taken back"):
        served.memory().reject(item.id)
    served.restart()
    rebuild(served)
    assert statuses(served, "payments service owner") == {newer: "current"}
    assert served.json("review")["count"] == 0


def test_a_rejection_may_become_an_acceptance(served: Served) -> None:
    conflict(served)
    memory = served.memory()
    item = memory.review()[0]
    memory.reject(item.id)
    assert memory.accept(item.id)["event"] == "ACCEPT"
    assert statuses(served, "payments service owner") == {item.newer.record_id: "current"}
    decisions = [e["event"] for e in memory.audit(item.older.record_id)["results"]]
    assert decisions == ["ADD", "REJECT", "SUPERSEDE", "ACCEPT"]


def test_both_statements_in_one_memory_can_be_rejected_not_accepted(served: Served) -> None:
    rid = served.call("add", {"content": "Dan owns the payments service. "
                                         "Eve owns the payments service."})["id"]
    item = served.json("review")["results"][0]
    assert item["newer"]["record_id"] == item["older"]["record_id"] == rid
    refused = served.cli("review", "accept", item["id"])
    assert refused.exit_code == 1 and "in one memory" in refused.stderr
    assert served.json("review", "reject", item["id"])["event"] == "REJECT"
    assert served.call("get", {"id": rid})["status"] == "current"
    assert [e["event"] for e in served.call("history", {"id": rid})["results"]] == [
        "ADD", "REJECT"]


def test_bad_decisions_are_refused_and_change_nothing(served: Served) -> None:
    conflict(served)
    unknown = served.cli("review", "accept", "rv" + "0" * 22)
    assert unknown.exit_code == 1 and "no review item" in unknown.stderr
    assert served.cli("review", "maybe", "x").exit_code == 2  # click: not a choice
    missing = served.cli("review", "accept")
    assert missing.exit_code == 1 and "give the item's id" in missing.stderr
    with pytest.raises(protocol.NotFound):  # another user's item is not this user's
        served.memory().accept(served.memory().review()[0].id, user_id="alice")
    assert served.json("review")["count"] == 1


def _tool(box: Toolbox, name: str, args: dict[str, Any]) -> dict[str, Any]:
    result = box.call(name, args)
    assert not result["isError"], result
    structured: dict[str, Any] = result["structuredContent"]
    return structured


def test_mcp_tools_list_and_decide(served: Served) -> None:
    conflict(served)
    box = Toolbox(lambda: served.root, log=mcp_rpc.Log(None, None), autostart=False)
    try:
        names = {t["name"] for t in box.list()}
        assert {"review_queue", "review_decide"} <= names
        queue = _tool(box, "review_queue", {})
        assert queue["count"] == 1
        line = queue["results"][0]
        assert {line["newer_value"], line["older_value"]} == {"dan", "eve"}
        refused = box.call("review_decide", {"id": line["id"], "decision": "maybe"})
        assert refused["isError"] and "bad_request" in refused["content"][0]["text"]
        decided = _tool(box, "review_decide", {"id": line["id"], "decision": "reject",
                                               "reason": "both"})
        assert decided["status"] == "rejected"
        assert _tool(box, "review_queue", {})["count"] == 0
        trail = served.call("audit", {"actor": "mcp"})["results"]
        assert {e["event"] for e in trail} == {"REJECT"}
    finally:
        box.close()


def test_the_queue_is_per_user(served: Served, tmp_path: Path) -> None:
    conflict(served)
    assert served.memory().review(user_id="alice") == []
    assert len(served.memory().review()) == 1
