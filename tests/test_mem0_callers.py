"""What mem0 callers write against a search's answer works on lintaid's, and ``status``
counts each user apart once there is more than one (a real daemon, the Python client)."""

from __future__ import annotations

import json

from lintaid_client import Hit, SearchResult, json_default
from tests.conftest import Served


def test_a_search_result_reads_as_a_mapping_and_writes_as_json(served: Served) -> None:
    with served.memory() as m:
        m.add("Gateway timeout retry attempts: 2.", user_id="alice")
        result = m.search("gateway retry attempts", user_id="alice")
    assert isinstance(result, SearchResult)
    hits = result.get("results")
    assert hits is result["results"] and len(hits) == 1
    assert hits[0]["memory"] == "Gateway timeout retry attempts: 2."
    assert result.get("hidden") == 0 and result.get("missing", "none") == "none"
    assert list(result.keys()) == ["results", "hidden", "history"]
    assert "results" in result and "memory" not in result
    plain = dict(result)
    assert plain["results"] == hits and isinstance(plain["results"][0], Hit)
    text = json.dumps(result, default=json_default)
    assert json.loads(text) == result.to_dict()
    assert json.loads(text)["results"][0]["content"] == "Gateway timeout retry attempts: 2."
    assert SearchResult.from_dict(json.loads(text)) == result
    try:
        json.dumps({"x": object()}, default=json_default)
    except TypeError as err:
        assert "object is not JSON serializable" in str(err)
    else:
        raise AssertionError("json_default serialised an object it does not know")


def test_status_counts_per_user_only_when_there_are_several(served: Served) -> None:
    served.call("add", {"content": "The local user prefers spaces."})
    assert "users" not in served.json("status")["memory"]
    assert "  users " not in served.cli("status").stdout
    served.call("add", {"content": "Alice prefers tabs.", "user_id": "alice"})
    served.call("add", {"content": "Alice uses vim.", "user_id": "alice"})
    served.hook("UserPromptSubmit", {"session_id": "s1", "prompt": "tabs or spaces?"})
    users = served.json("status")["memory"]["users"]
    assert users == {"alice": {"records": 2, "prompts": 0},
                     "local": {"records": 1, "prompts": 1}}
    assert "users     alice 2 records, 0 prompts, local 1 records, 1 prompts" in \
        served.cli("status").stdout
