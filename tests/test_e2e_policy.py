"""The current-state policy end to end, through the CLI and the hook shim's logic, against a real
daemon (in this process) over its real socket."""

from __future__ import annotations

import time

from tests.conftest import Served
from tests.transcripts import stop_payload, write_transcript

RETRY_Q = "How many retry attempts should we use for gateway timeouts?"


def capture(served: Served, session: str, request: str, result: str) -> None:
    root = served.root
    transcript = write_transcript(root.parent / f"{session}.jsonl", [
        ("user", request), ("assistant", result)], session_id=session, cwd=str(root))
    out = served.hook("Stop", stop_payload(transcript, session_id=session, cwd=str(root)))
    assert out == {}


def context_for(served: Served, prompt: str) -> str:
    out = served.hook("UserPromptSubmit", {"session_id": "later", "prompt": prompt})
    context: str = out.get("hookSpecificOutput", {}).get("additionalContext", "")
    return context


def test_newer_scalar_supersedes_older_and_history_shows_both(served: Served) -> None:
    old = served.json("add", "Gateway timeout retry attempts: 5.")["id"]
    time.sleep(0.01)
    # A change cue ("now"): without one a newer value only likely supersedes (a review).
    new = served.json("add", "Gateway timeout retry attempts: now 2.")["id"]
    result = served.json("search", RETRY_Q)
    assert [(h["id"], h["status"]) for h in result["results"]] == [(new, "current")]
    assert result["hidden"] == 1
    changed = served.json("search", "what changed in the gateway retry attempts?")
    statuses = {h["id"]: h for h in changed["results"]}
    assert statuses[new]["status"] == "current"
    assert statuses[old]["status"] == "superseded" and statuses[old]["historical"]
    assert statuses[old]["superseded_by"] == new
    relation = statuses[old]["relations"][0]
    assert relation["kind"] == "supersedes" and relation["other_id"] == new
    assert "'5' to '2'" in relation["evidence"]
    claim = statuses[old]["claims"][0]
    assert claim["status"] == "superseded" and claim["value"] == "5"
    assert claim["subject"] == "gateway timeout retry attempts" and claim["predicate"] == "value"
    assert claim["scope"] == "project" and claim["record_id"] == old
    assert claim["effective_at"] == statuses[old]["created_at"]
    assert claim["evidence"] == "Gateway timeout retry attempts: 5"  # the statement
    # --history on an ordinary query lifts the filter too; a step order ("before deploying")
    # does not. (History intent reads "before deployment", a noun, as a point in the past.)
    assert len(served.json("search", RETRY_Q, "--history")["results"]) == 2
    hits = served.json("search", "gateway retry attempts before deploying")["results"]
    assert [h["id"] for h in hits] == [new]


def test_a_superseded_claim_inside_a_captured_session_is_not_injected_as_current(
        served: Served) -> None:
    capture(served, "s1", "How should we store sessions, and what about health checks?",
            "We use Redis for session storage.\n"
            "I added a health check endpoint at /healthz in src/app.py for the load balancer.")
    time.sleep(0.01)
    capture(served, "s2", "Redis keeps running out of memory.",
            "Switched: use Memcached for session storage instead of Redis.")
    context = context_for(served, "Where do we keep session storage and the health check?")
    assert "Memcached" in context
    assert "healthz" in context  # the rest of the older record is still there
    # Redis may be named as the replaced value, never stated as the current choice.
    assert "We use Redis for session storage" not in context
    # The older record's entry shows what still holds of it (the health check, which the
    # policy judged current); the record that replaced its session storage comes just before
    # it, so no note repeats it.
    parts = context.split("\n- ")[1:]
    older = next(n for n, e in enumerate(parts) if "healthz" in e)
    newer = next(n for n, e in enumerate(parts) if "Memcached" in e)
    assert newer < older and "Redis" not in parts[older]
    assert "Superseded here" not in parts[older]
    older = next(h for h in served.json("search", "health check endpoint")["results"]
                 if "healthz" in h["content"])
    assert older["status"] == "partly_superseded"
    redis = next(c for c in older["claims"] if c["value"] == "redis")
    assert redis["status"] == "superseded" and redis["replaced_by_value"] == "memcached"


def test_two_sessions_setting_one_value_meet_on_one_chain(served: Served) -> None:
    capture(served, "a", "Set the retry limit for the sync worker.", "retry_limit: 3")
    time.sleep(0.01)
    capture(served, "b", "The sync worker gives up too early.", "retry_limit: 5")
    hits = served.json("search", "sync worker retry_limit", "--top-k", "10")["results"]
    # Nobody said the limit changed, but both set one key: the newer value holds (a newer
    # same-kind source), the older is hidden, nothing waits for review.
    states = {c["value"]: (h["status"], c["status"]) for h in hits for c in h["claims"]}
    assert states == {"5": ("current", "current")}
    assert served.json("review")["results"] == []
    older = served.json("search", "sync worker retry_limit", "--history")["results"]
    assert any(c["value"] == "3" and c["status"] == "superseded"
               for h in older for c in h["claims"])
    context = context_for(served, "What is the sync worker retry_limit?")
    assert "retry_limit: 5" in context and "retry_limit: 3" not in context


def test_forget_via_cli_hides_everywhere_and_stays_forgotten(served: Served) -> None:
    rid = served.json("add", "The legacy billing cron runs at midnight.")["id"]
    assert served.cli("forget", rid, "--reason", "wrong").exit_code == 0
    assert served.json("search", "legacy billing cron")["results"] == []
    again = served.json("add", "The legacy billing cron runs at midnight.")
    assert again["event"] == "FORGOTTEN"
    history = served.json("history", rid)["results"]
    assert [e["event"] for e in history] == ["ADD", "FORGET"]


def test_one_long_session_cannot_crowd_out_the_others(served: Served) -> None:
    for turn in range(5):
        capture(served, "long", f"Tune the flux capacitor and its coolant, step {turn}.",
                f"Flux capacitor tuned: step {turn} of the coolant calibration is done.")
    capture(served, "other", "Why did the flux capacitor fail last week?",
            "The flux capacitor failed because its coolant valve was stuck.")
    context = context_for(served, "What do we know about the flux capacitor coolant valve?")
    shown = [line.split(" · ")[0][2:] for line in context.splitlines() if line.startswith("- ")]
    sessions = [served.call("get", {"id": rid})["session_id"] for rid in shown]
    assert sessions.count("long") <= 2 and "other" in sessions
