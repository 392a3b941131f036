"""One project store serves every agent client at once; search and list filter by client."""

from __future__ import annotations

from lintaid_client.ops import OPS, tool_schema
from tests.client_sessions import codex_payload, codex_rollout, write_jsonl
from tests.conftest import Served
from tests.transcripts import stop_payload, write_transcript


def test_the_filter_is_declared_once_for_search_and_list() -> None:
    for op in ("search", "list"):
        arg = OPS[op].arg("client")
        assert arg.mcp and arg.option == "--client"
        assert "client" in tool_schema(OPS[op])["properties"]


def _capture_from_two_clients(served: Served) -> None:
    root = served.root
    cwd = str(root)
    claude = write_transcript(root.parent / "claude.jsonl", [
        ("user", "Where do the billing webhooks retry?"),
        ("assistant", "Billing webhooks retry five times from billing/webhooks.py with "
                      "jittered backoff.")], session_id="claude-session-1", cwd=cwd)
    out = served.hook("Stop", stop_payload(claude, session_id="claude-session-1", cwd=cwd))
    assert out == {}
    rollout = write_jsonl(root.parent / "rollout.jsonl", codex_rollout(
        cwd, request="Where do the billing webhooks log failures?",
        result="Billing webhooks log failures to billing/audit.log and page on-call."))
    out = served.hook("Stop", codex_payload(
        "Stop", cwd, rollout, last_assistant_message="Billing webhooks log failures to "
        "billing/audit.log and page on-call."), provider="codex")
    assert out == {}
    served.json("add", "Billing webhooks are owned by the payments team.")


def test_each_client_filter_shows_its_own_captures(served: Served) -> None:
    _capture_from_two_clients(served)
    everything = served.json("search", "billing webhooks", "--top-k", "10")["results"]
    assert {h["client"] for h in everything} == {"claude-code", "codex", None}

    for client, words in (("claude-code", "jittered"), ("codex", "audit.log")):
        hits = served.json("search", "billing webhooks", "--client", client)["results"]
        assert hits and {h["client"] for h in hits} == {client}
        assert words in hits[0]["content"]
        listed = served.json("list", "--client", client)["results"]
        assert listed and {h["client"] for h in listed} == {client}

    # Inside the index query, not after ranking: top 1 of one client is that client's best,
    # although the other client's record ranks first without the filter.
    best = served.json("search", "webhooks jittered backoff", "--top-k", "1")
    assert best["results"][0]["client"] == "claude-code"
    codex_only = served.json("search", "webhooks jittered backoff", "--top-k", "1",
                          "--client", "codex")["results"]
    assert [h["client"] for h in codex_only] == ["codex"]

    # The Python client takes the same filter.
    with served.memory() as memory:
        assert {h.client for h in memory.search("billing", client="codex").results} == {"codex"}
        assert {h.client for h in memory.get_all(client="claude-code")["results"]} \
            == {"claude-code"}

    refused = served.cli("search", "billing", "--client", "claude")
    assert refused.exit_code != 0
    assert "--client must be one of claude-code, codex" in refused.stderr
    assert "not 'claude'" in refused.stderr
