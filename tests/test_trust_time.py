"""Valid time beside record time, against a real daemon.

A setting holds from t1 (value 2), changes at t2 (value 3, which the store learns a month
late), and is retracted at t3. ``--valid-at`` asks what held in the project then, ``--as-of``
what the store believed then; both take ISO 8601 and epoch seconds, in the CLI and in the MCP
tool alike. Each claim carries both axes.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import pytest

from lintaid_client import mcp_rpc
from lintaid_client.mcp_tools import Toolbox
from tests.conftest import Served

QUERY = "gateway timeout retry attempts"
DAY = 86_400.0


def at(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=timezone.utc).timestamp()


T1, T2, T3 = at("2025-01-10"), at("2025-03-10"), at("2025-06-10")
LEARNED_1, LEARNED_2 = T1 + DAY, T2 + 30 * DAY  # the change reached the store a month late


@pytest.fixture
def timeline(served: Served) -> dict[str, str]:
    two = served.call("add", {"content": "Gateway timeout retry attempts: 2.",
                              "valid_at": T1, "created_at": LEARNED_1})["id"]
    three = served.call("add", {"content": "Gateway timeout retry attempts: now 3.",
                                "valid_at": T2, "created_at": LEARNED_2})["id"]
    served.call("expire", {"id": three, "at": T3})
    return {"two": two, "three": three}


def current_values(result: dict[str, Any], ids: dict[str, str]) -> list[str]:
    """The values the hits present as holding (historical hits are shown as the past)."""
    names = {v: k for k, v in ids.items()}
    return [names[h["id"]] for h in result["results"] if not h["historical"]
            or h["status"] in ("current", "partly_superseded", "conflicted")]


def held(served: Served, ids: dict[str, str], *flags: str) -> list[str]:
    result = served.json("search", QUERY, "--store", "memory", *flags)
    return current_values(result, ids)


def test_each_claim_carries_valid_and_record_time(served: Served,
                                                  timeline: dict[str, str]) -> None:
    old = served.call("get", {"id": timeline["two"]})["claims"][0]
    assert (old["valid_from"], old["valid_until"]) == (T1, T2)
    assert (old["learned_at"], old["retracted_at"]) == (LEARNED_1, LEARNED_2)
    new = served.call("get", {"id": timeline["three"]})["claims"][0]
    assert (new["valid_from"], new["valid_until"]) == (T2, T3)
    assert (new["learned_at"], new["retracted_at"]) == (LEARNED_2, None)


def test_valid_at_gives_what_held_then(served: Served, timeline: dict[str, str]) -> None:
    assert held(served, timeline, "--valid-at", "2024-12-31") == []
    assert held(served, timeline, "--valid-at", "2025-02-01") == ["two"]
    assert held(served, timeline, "--valid-at", "2025-04-01T12:00:00Z") == ["three"]
    assert held(served, timeline, "--valid-at", str(int(at("2025-05-01")))) == ["three"]
    assert held(served, timeline, "--valid-at", "2025-07-01") == []
    # what held then, no longer true now: shown as it stood, marked historical
    hit = served.json("search", QUERY, "--valid-at", "2025-02-01")["results"][0]
    assert hit["status"] == "current" and hit["historical"] is True
    assert hit["claims"][0]["status"] == "current"


def test_as_of_gives_what_the_store_believed_then(served: Served,
                                                  timeline: dict[str, str]) -> None:
    assert held(served, timeline, "--as-of", "2025-01-05") == []
    # the change had happened (t2) but the store had not learned it yet
    assert held(served, timeline, "--as-of", "2025-03-20") == ["two"]
    assert held(served, timeline, "--as-of", "2025-05-01") == ["three"]
    assert held(served, timeline, "--as-of", str(int(at("2025-07-01")))) == []


def test_both_axes_at_once(served: Served, timeline: dict[str, str]) -> None:
    # On 2025-03-20 the store did not know of the change: for it, 2 still held on April 1st.
    assert held(served, timeline, "--valid-at", "2025-04-01",
                "--as-of", "2025-03-20") == ["two"]
    assert held(served, timeline, "--valid-at", "2025-04-01",
                "--as-of", "2025-05-01") == ["three"]
    assert held(served, timeline, "--valid-at", "2025-02-01",
                "--as-of", "2025-01-05") == []  # nothing learned yet


def test_a_bad_time_is_refused_with_the_option_named(served: Served,
                                                     timeline: dict[str, str]) -> None:
    out = served.cli("search", QUERY, "--valid-at", "last tuesday")
    assert out.exit_code == 1 and "--valid-at" in out.stderr and "ISO 8601" in out.stderr


def test_the_mcp_search_tool_takes_both_times(served: Served,
                                              timeline: dict[str, str]) -> None:
    box = Toolbox(lambda: served.root, log=mcp_rpc.Log(None, None), autostart=False)
    try:
        schema = next(t for t in box.list() if t["name"] == "search")["inputSchema"]
        assert {"as_of", "valid_at"} <= set(schema["properties"])
        names = {v: k for k, v in timeline.items()}
        for value in ("2025-02-01", at("2025-02-01")):
            out = box.call("search", {"query": QUERY, "valid_at": value})
            assert not out["isError"], out
            assert [names[h["id"]] for h in out["structuredContent"]["results"]] == ["two"]
        out = box.call("search", {"query": QUERY, "as_of": "2025-03-20", "store": "memory"})
        lines = out["structuredContent"]["results"]
        assert [(names[h["id"]], h["status"]) for h in lines] == [("two", "current")]
    finally:
        box.close()


def test_python_client_valid_at(served: Served, timeline: dict[str, str]) -> None:
    result = served.memory().search(QUERY, valid_at="2025-04-01")
    assert [h.id for h in result.results] == [timeline["three"]]
