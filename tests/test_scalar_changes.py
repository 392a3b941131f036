"""A setting changed in words (a scalar or a literal such as a bucket URL) ("reduced the retry count to 2", "retry count: 2 instead of 5")
retires the value it replaces: in search, in `get` and in what the prompt hook injects."""

from __future__ import annotations

import pytest

from lintaid.policy import extract_claims
from tests.conftest import Served

Quad = tuple[str, str, str, str | None]


def quads(text: str) -> list[Quad]:
    return [(c.subject, c.predicate, c.value, c.replaces) for c in extract_claims(text)]


@pytest.mark.parametrize(("text", "expected"), [
    ("Set the gateway retry count to 2 instead of 5.", ("gateway retry count", "value", "2", "5")),
    ("Reduced the gateway retry count to 2.", ("gateway retry count", "value", "2", None)),
    ("Gateway retry count: 2 instead of 5.", ("gateway retry count", "value", "2", "5")),
    ("Changed: gateway retry count: 2 instead of 5.", ("gateway retry count", "value", "2", "5")),
    ("Lowered the gateway timeout from 60s to 30s.", ("gateway timeout", "value", "30s", "60s")),
    ("We bumped max connections up to 50, because of load.",
     ("max connections", "value", "50", None)),
    ("The retry count is now 2, not 5.", ("retry count", "value", "2", "5")),
    ("I increased the cache ttl to 10 minutes (was 5 minutes).",
     ("cache ttl", "value", "10min", "5min")),
    ("Result: Reduced the gateway retry count to 2 instead of 5 in gateway/config.py.",
     ("gateway retry count", "value", "2", "5")),
    # literal settings name what they replace too
    ("Result: The artifact bucket is now s3://acme-beta instead of s3://acme-alpha.",
     ("artifact bucket", "value", "s3://acme-beta", "s3://acme-alpha")),
    ("artifact_bucket: s3://b, not s3://a", ("artifact_bucket", "value", "s3://b", "s3://a")),
])
def test_a_changed_setting_is_a_claim_naming_what_it_replaces(text: str, expected: Quad) -> None:
    assert quads(text) == [expected]


@pytest.mark.parametrize("text", [
    "We did not reduce the retry count to 2.",
    "Should we reduce the retry count to 2?",
    "Increase the timeout to 30 seconds if tests are flaky.",
    "Moved the deadline to Friday.",
    "Updated 3 files to use tabs.",
])
def test_no_change_is_read_where_none_was_made(text: str) -> None:
    assert quads(text) == []


def test_the_old_value_is_retired_everywhere(served: Served) -> None:
    old = served.call("add", {"content": "The gateway retry count is 5."})["id"]
    new = served.call("add", {"content": "Set the gateway retry count to 2 instead of 5."})["id"]
    results = served.call("search", {"query": "gateway retry count"})["results"]
    assert [(h["id"], h["status"]) for h in results] == [(new, "current")]
    got = served.call("get", {"id": old})
    assert got["status"] == "superseded" and got["superseded_by"] == new
    out = served.hook("UserPromptSubmit", {"session_id": "s1",
                                           "prompt": "what is the gateway retry count?"})
    injected = out["hookSpecificOutput"]["additionalContext"]
    assert "Set the gateway retry count to 2" in injected
    assert "retry count is 5" not in injected
