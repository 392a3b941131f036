"""One record per agent turn, for every client behind the seam; prompts kept as prompts.

Unit checks build the records each client's events yield from the same transcript; the end to
end checks run the real hook shim against a real daemon.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lintaid.capture.record import NewRecord
from lintaid.hooks import build_records
from lintaid.integrations import registry
from tests.client_sessions import (
    GEMINI_SESSION,
    agy_payload,
    agy_steps,
    codex_payload,
    codex_rollout,
    copilot_events,
    copilot_payload,
    cursor_payload,
    cursor_transcript,
    gemini_payload,
    gemini_recording,
    openclaw_messages,
    openclaw_payload,
    opencode_messages,
    opencode_payload,
    write_jsonl,
)
from tests.conftest import run_cli, run_hook, run_json
from tests.transcripts import (
    FINAL_REQUEST,
    realistic_turns,
    stop_payload,
    write_transcript,
)


def records(client: str, event: str, payload: dict[str, Any]) -> list[NewRecord]:
    agent = registry.get(client)
    return build_records(agent, agent.parse(event, payload), now=1.0)


def turns(recs: list[NewRecord]) -> list[NewRecord]:
    return [r for r in recs if r.doc_type == "outcome"]


def _claude(tmp: Path) -> tuple[dict[str, Any], list[tuple[str, dict[str, Any]]]]:
    path = write_transcript(tmp / "cc.jsonl", realistic_turns(str(tmp)), cwd=str(tmp))
    stop = stop_payload(path, cwd=str(tmp))
    return stop, [("PreCompact", {**stop, "trigger": "auto"}),
                  ("SessionEnd", {**stop, "reason": "other"})]


def _codex(tmp: Path) -> tuple[dict[str, Any], list[tuple[str, dict[str, Any]]]]:
    path = write_jsonl(tmp / "rollout.jsonl", codex_rollout(str(tmp)))
    return (codex_payload("Stop", str(tmp), path),
            [(e, codex_payload(e, str(tmp), path)) for e in ("PreCompact", "SessionEnd")])


def _gemini(tmp: Path) -> tuple[dict[str, Any], list[tuple[str, dict[str, Any]]]]:
    path = write_jsonl(tmp / "chat.jsonl", gemini_recording(str(tmp)))
    return (gemini_payload("AfterAgent", str(tmp), path),
            [(e, gemini_payload(e, str(tmp), path)) for e in ("PreCompress", "SessionEnd")])


def _cursor(tmp: Path) -> tuple[dict[str, Any], list[tuple[str, dict[str, Any]]]]:
    path = write_jsonl(tmp / "cursor.jsonl", cursor_transcript(str(tmp)))
    return (cursor_payload("stop", str(tmp), path),
            [(e, cursor_payload(e, str(tmp), path)) for e in ("preCompact", "sessionEnd")])


def _agy(tmp: Path) -> tuple[dict[str, Any], list[tuple[str, dict[str, Any]]]]:
    path = write_jsonl(tmp / "steps.jsonl", agy_steps(str(tmp)))
    return (agy_payload("PostInvocation", str(tmp), path),
            [("Stop", agy_payload("Stop", str(tmp), path))])


def _openclaw(tmp: Path) -> tuple[dict[str, Any], list[tuple[str, dict[str, Any]]]]:
    payload = openclaw_payload("agent_end", str(tmp), messages=openclaw_messages())
    return (payload, [("before_reset", {**payload, "hook_event_name": "before_reset"})])


def _opencode(tmp: Path) -> tuple[dict[str, Any], list[tuple[str, dict[str, Any]]]]:
    payload = opencode_payload("session.idle", str(tmp), messages=opencode_messages(str(tmp)))
    return (payload, [("session.compacted", {**payload, "hook_event_name": "session.compacted"})])


def _copilot(tmp: Path) -> tuple[dict[str, Any], list[tuple[str, dict[str, Any]]]]:
    path = write_jsonl(tmp / "events.jsonl", copilot_events(str(tmp)))
    return (copilot_payload("Stop", str(tmp), path, stop_reason="end_turn",
                            stop_hook_active=False),
            [("PreCompact", copilot_payload("PreCompact", str(tmp), path)),
             ("SessionEnd", copilot_payload("SessionEnd", str(tmp), path, reason="complete"))])


SESSIONS = {"claude-code": ("Stop", _claude), "codex": ("Stop", _codex),
            "gemini": ("AfterAgent", _gemini), "cursor": ("stop", _cursor),
            "agy": ("PostInvocation", _agy), "openclaw": ("agent_end", _openclaw),
            "opencode": ("session.idle", _opencode), "copilot": ("Stop", _copilot)}


@pytest.mark.parametrize("client", sorted(SESSIONS))
def test_every_event_that_sees_a_turn_gives_the_one_record(client: str, tmp_path: Path) -> None:
    assert set(SESSIONS) == set(registry.names())  # every client behind the seam
    event, make = SESSIONS[client]
    turn_payload, later = make(tmp_path)
    [turn] = records(client, event, turn_payload)
    assert turn.doc_type == "outcome" and turn.turn_id and not turn.catch_up
    assert turn.content.startswith(f"Request: {FINAL_REQUEST}")
    # A replay is the same record.
    assert [r.record_id for r in records(client, event, turn_payload)] == [turn.record_id]
    for name, payload in later:
        recs = records(client, name, payload)
        [again] = turns(recs)
        # The compaction or session end reads the same turn: the same id, and only a
        # catch-up, stored if no capture of the session holds that request.
        assert again.record_id == turn.record_id, name
        assert again.catch_up and again.request_hash == turn.request_hash
        assert all(r.doc_type == "checkpoint" for r in recs if r is not again)


def compact_payload(stop: dict[str, Any], **extra: Any) -> dict[str, Any]:
    payload = {k: v for k, v in stop.items() if k != "stop_hook_active"}
    return {**payload, "hook_event_name": "PreCompact", **extra}


@pytest.mark.slow
def test_one_record_per_turn_through_the_shim(daemon: Path) -> None:
    transcript = write_transcript(daemon.parent / "t.jsonl", realistic_turns(str(daemon)),
                                  cwd=str(daemon))
    stop = stop_payload(transcript, cwd=str(daemon))
    run_hook(daemon, "Stop", stop)
    run_hook(daemon, "PreCompact", compact_payload(
        stop, trigger="manual", custom_instructions="Keep the retry decisions."))
    run_hook(daemon, "SessionEnd", {**compact_payload(stop), "hook_event_name": "SessionEnd",
                                    "reason": "prompt_input_exit"})
    listed = run_json(daemon, "list")["results"]
    assert sorted(h["doc_type"] for h in listed) == ["checkpoint", "outcome"]
    [checkpoint] = [h for h in listed if h["doc_type"] == "checkpoint"]
    assert checkpoint["content"] == "Compact summary: Keep the retry decisions."
    [turn] = [h for h in listed if h["doc_type"] == "outcome"]
    assert turn["turn_id"] and turn["event"] == "Stop"
    # Replaying every event changes nothing.
    for name, payload in (("Stop", stop), ("PreCompact", compact_payload(
            stop, trigger="manual", custom_instructions="Keep the retry decisions."))):
        run_hook(daemon, name, payload)
    assert run_json(daemon, "status")["memory"]["records"] == 2

    # A turn whose Stop never reached lintaid is caught up, once, by the session's end.
    write_transcript(transcript, [("user", "Rename RetryPolicy to Backoff."),
                                  ("assistant", "Renamed RetryPolicy to Backoff everywhere.")],
                     cwd=str(daemon), append=True)
    end = {**compact_payload(stop), "hook_event_name": "SessionEnd", "reason": "other"}
    run_hook(daemon, "SessionEnd", end)
    run_hook(daemon, "SessionEnd", end)
    listed = run_json(daemon, "list")["results"]
    caught = [h for h in listed if "Rename RetryPolicy" in h["content"]]
    assert len(caught) == 1 and caught[0]["event"] == "SessionEnd"
    assert run_json(daemon, "status")["memory"]["records"] == 3


@pytest.mark.slow
def test_a_lagging_gemini_recording_still_gives_one_record(daemon: Path) -> None:
    """AfterAgent carries the prompt; its recording may not hold the turn yet, so the turn id
    is the prompt's. SessionEnd later reads the turn from the recording under its message id:
    the session holds that request already, so nothing is added."""
    cwd = str(daemon)
    lagging = write_jsonl(daemon.parent / "lag.jsonl", gemini_recording(cwd)[:4])
    after = gemini_payload("AfterAgent", cwd, lagging)
    run_hook(daemon, "AfterAgent", after, provider="gemini")
    full = write_jsonl(daemon.parent / "lag.jsonl", gemini_recording(cwd))
    run_hook(daemon, "SessionEnd", gemini_payload("SessionEnd", cwd, full), provider="gemini")
    listed = run_json(daemon, "list")["results"]
    assert [h["source"] for h in listed] == [f"gemini://{GEMINI_SESSION}/outcome"]
    assert listed[0]["content"].startswith(f"Request: {FINAL_REQUEST}")


@pytest.mark.slow
def test_prompts_are_kept_as_prompts(daemon: Path) -> None:
    run_cli(daemon, "add", "The gateway uses requests for HTTP calls.")
    question = "Which HTTP client does the gateway use?"
    order = "Switch the gateway to httpx instead of requests."
    run_hook(daemon, "UserPromptSubmit", {"session_id": "s1", "prompt": question})
    out = run_hook(daemon, "UserPromptSubmit", {"session_id": "s1", "prompt": order})
    # Never injected: the next prompt's context holds the note, not the stored questions.
    out = run_hook(daemon, "UserPromptSubmit", {"session_id": "s2", "prompt": question})
    context = out["hookSpecificOutput"]["additionalContext"]
    assert "uses requests for HTTP calls" in context
    assert "User prompt" not in context and "httpx" not in context

    # Not beliefs: no claims, nothing superseded by "instead of", not counted as records.
    memory = run_json(daemon, "status")["memory"]
    assert (memory["records"], memory["prompts"]) == (1, 3)
    [note] = run_json(daemon, "list")["results"]  # list shows no prompt by default
    assert note["kind"] == "note" and note["status"] == "current"
    prompts = run_json(daemon, "list", "--kind", "prompt")["results"]
    assert {p["content"] for p in prompts} == {f"User prompt: {question}",
                                               f"User prompt: {order}"}
    for prompt in prompts:
        got = run_json(daemon, "get", prompt["id"])
        assert got["kind"] == "prompt" and got["claims"] == []
    assert len(prompts) == 3  # the same question in two sessions is kept for each
    assert len(run_json(daemon, "list", "--kind", "all")["results"]) == 4

    # Searchable when asked for, and only then.
    plain = run_json(daemon, "search", "which HTTP client gateway")["results"]
    assert [h["kind"] for h in plain] == ["note"]
    asked = run_json(daemon, "search", "which HTTP client gateway", "--kind", "prompt")
    assert {h["kind"] for h in asked["results"]} == {"prompt"}
    assert any(question in h["content"] for h in asked["results"])
    assert "User prompt" in run_cli(daemon, "search", "httpx", "--kind", "all").stdout
    bad = run_cli(daemon, "search", "x", "--kind", "opinion", check=False)
    assert bad.returncode != 0 and "opinion" in bad.stderr


def test_the_kind_filter_is_declared_once_for_cli_client_and_mcp() -> None:
    from lintaid_client import ops

    for name in ("search", "list"):
        spec = ops.OPS[name]
        schema = ops.tool_schema(spec)["properties"]["kind"]
        assert schema["enum"] == ["capture", "note", "prompt", "all"]
        assert ops.validate(spec, {"query": "q", "kind": "prompt"} if name == "search"
                            else {"kind": "prompt"})["kind"] == "prompt"
        with pytest.raises(ops.BadRequest, match="kind"):
            ops.validate(spec, {"query": "q", "kind": "opinion"} if name == "search"
                         else {"kind": "opinion"})


def test_record_ids_of_notes_and_prompts_are_those_earlier_versions_gave() -> None:
    """A note or prompt stored by an earlier version is "already stored" when it comes again:
    their id basis did not change, only turns have one of their own."""
    note = NewRecord(content="We use Redis.", kind="note", source="cli", session_id="s")
    prompt = NewRecord(content="User prompt: hi", kind="prompt", provider="claude-code",
                       source="claude-code://s/prompt", session_id="s", doc_type="prompt")
    assert (note.record_id, prompt.record_id) == ("m3703883dbc87467c4076c9b",
                                                  "m4b17178575bf4064b3d77e4")
