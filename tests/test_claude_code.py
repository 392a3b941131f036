from __future__ import annotations

import dataclasses
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from lintaid.capture import git as gitinfo
from lintaid.capture.record import NewRecord
from lintaid.hooks import build_records
from lintaid.integrations import injection, registry
from lintaid.integrations.claude_code import CAPTURE_EVENTS, INJECT_EVENTS, ClaudeCode
from lintaid_client.models import Hit
from tests.transcripts import (
    DEFAULT_SESSION,
    FAKE_SECRETS,
    FINAL_REQUEST,
    SECRET_LAST_MESSAGE,
    realistic_turns,
    secret_turns,
    stop_payload,
    write_secret_transcript,
    write_transcript,
)

GIT_ENV = {
    "GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "T", "GIT_COMMITTER_EMAIL": "t@example.com",
}


def git(repo: Path, *args: str) -> str:
    out = subprocess.run(["git", "-C", str(repo), "-c", "commit.gpgsign=false", *args],
                         capture_output=True, text=True, check=True,
                         env={**os.environ, **GIT_ENV})
    return out.stdout.strip()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A git repository with one commit, used as the session's cwd."""
    gitinfo.clear_cache()
    root = tmp_path / "project"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "README.md").write_text("hello\n")
    git(root, "add", "README.md")
    git(root, "commit", "-q", "-m", "init")
    return root


CLIENT = ClaudeCode()


def records_for_event(event: str, payload: dict[str, Any],
                      now: float | None = None) -> list[NewRecord]:
    return build_records(CLIENT, CLIENT.parse(event, payload), now=now)


def stop_for(project: Path, **extra: Any) -> dict[str, Any]:
    path = write_transcript(project.parent / "t.jsonl", realistic_turns(str(project)),
                            cwd=str(project))
    return stop_payload(path, cwd=str(project), **extra)


# --- capture ----------------------------------------------------------------------------------


def test_stop_builds_one_outcome_record(project: Path) -> None:
    payload = stop_for(project)
    [rec] = records_for_event("Stop", payload, now=1_700_000_000.0)
    lines = rec.content.split("\n")
    assert lines[0] == f"Request: {FINAL_REQUEST}"
    assert lines[1].startswith("Result: Done. Summary of the change: - `gateway/retry.py`")
    assert lines[1].endswith("All 42 tests pass.")
    assert lines[2] == (f"Affected paths: {project}/gateway/retry.py, "
                        f"{project}/tests/test_retry.py")
    assert lines[3] == "Tools used: Edit, Write, Bash"
    assert len(lines) == 4
    assert rec.kind == "capture"
    assert rec.source == f"claude-code://{DEFAULT_SESSION}/outcome"
    assert rec.provider == "claude-code"
    assert rec.session_id == DEFAULT_SESSION
    assert (rec.event, rec.doc_type, rec.cwd) == ("Stop", "outcome", str(project))
    assert rec.branch == "main"
    assert rec.revision == git(project, "rev-parse", "HEAD")
    assert rec.tools == ["Edit", "Write", "Bash"]
    assert rec.paths == [f"{project}/gateway/retry.py", f"{project}/tests/test_retry.py"]
    assert rec.created_at == 1_700_000_000.0
    assert rec.metadata["permission_mode"] == "default"


def test_replay_gives_the_same_record_id(project: Path) -> None:
    payload = stop_for(project)
    [first] = records_for_event("Stop", payload, now=1.0)
    [second] = records_for_event("Stop", json.loads(json.dumps(payload)), now=999.0)
    assert first.record_id == second.record_id
    assert first.content == second.content
    # The same turn, however its result reads, is one record: a turn's id is its session and
    # its request's transcript id (the first capture's text is kept).
    [same_turn] = records_for_event("Stop", {**payload, "last_assistant_message": "Different."})
    assert same_turn.record_id == first.record_id
    assert same_turn.turn_id == first.turn_id and first.turn_id
    # The next request is another turn, even with the same words (its own transcript id).
    path = Path(payload["transcript_path"])
    write_transcript(path, [("user", FINAL_REQUEST), ("assistant", "Again: done.")],
                     cwd=str(project), append=True)
    [next_turn] = records_for_event("Stop", {**payload, "last_assistant_message": "Again."})
    assert next_turn.record_id != first.record_id
    assert next_turn.request_hash == first.request_hash


def test_stop_hook_active_captures_nothing(project: Path) -> None:
    assert records_for_event("Stop", stop_for(project, stop_hook_active=True)) == []
    payload = stop_for(project, event="SubagentStop", stop_hook_active=True)
    assert records_for_event("SubagentStop", payload) == []


def test_last_assistant_message_is_the_result(project: Path) -> None:
    payload = stop_for(project, last_assistant_message="Shipped it.\nAll green.")
    [rec] = records_for_event("Stop", payload)
    assert "Result: Shipped it. All green." in rec.content.split("\n")


def test_subagent_stop_reads_the_agent_transcript(project: Path) -> None:
    main = write_transcript(project.parent / "main.jsonl", [("user", "main q"),
                                                             ("assistant", "main a")])
    agent = write_transcript(project.parent / "agent.jsonl", [("user", "find the config loader"),
                                                               ("assistant", "It is in cfg.py")])
    payload = stop_payload(main, cwd=str(project), event="SubagentStop",
                           agent_transcript_path=str(agent), agent_type="Explore",
                           agent_id="a1")
    [rec] = records_for_event("SubagentStop", payload)
    assert "Request: find the config loader" in rec.content
    assert "Result: It is in cfg.py" in rec.content
    assert rec.doc_type == "outcome" and rec.event == "SubagentStop"
    assert rec.metadata["agent_type"] == "Explore"


def test_precompact_and_session_end_never_copy_the_turn(project: Path) -> None:
    base = stop_for(project)
    [turn] = records_for_event("Stop", base)
    payload = {**base, "hook_event_name": "PreCompact", "trigger": "manual",
               "custom_instructions": "keep the retry decisions"}
    payload.pop("stop_hook_active")
    caught_up, checkpoint = records_for_event("PreCompact", payload)
    # The last turn again, with the Stop's id, marked as a catch-up; and the summary alone.
    assert caught_up.record_id == turn.record_id and caught_up.catch_up
    assert not turn.catch_up
    assert checkpoint.content == "Compact summary: keep the retry decisions"
    assert checkpoint.doc_type == "checkpoint" and checkpoint.source.endswith("/checkpoint")
    assert checkpoint.metadata["trigger"] == "manual"

    end = {**base, "hook_event_name": "SessionEnd", "reason": "prompt_input_exit"}
    [again] = records_for_event("SessionEnd", end)
    assert again.record_id == turn.record_id and again.catch_up
    assert again.doc_type == "outcome" and again.event == "SessionEnd"
    assert again.metadata["reason"] == "prompt_input_exit"


def test_precompact_summary_alone_is_enough(tmp_path: Path) -> None:
    payload = {"session_id": "s", "transcript_path": str(tmp_path / "missing.jsonl"),
               "cwd": str(tmp_path), "compact_summary": "We chose uv over pip."}
    [rec] = records_for_event("PreCompact", payload)
    assert rec.content == "Compact summary: We chose uv over pip."


def test_nothing_to_capture(tmp_path: Path) -> None:
    payload = {"session_id": "s", "transcript_path": str(tmp_path / "missing.jsonl"),
               "cwd": str(tmp_path)}
    for event in CAPTURE_EVENTS:
        assert records_for_event(event, payload) == []
    assert records_for_event("Stop", {}) == []
    assert records_for_event("PostToolUse", payload) == []
    assert records_for_event("Notification", payload) == []


def test_no_secret_reaches_any_field(project: Path) -> None:
    path = write_secret_transcript(project.parent / "s.jsonl", cwd=str(project))
    payload = stop_payload(path, cwd=str(project), last_assistant_message=SECRET_LAST_MESSAGE,
                           custom_instructions=f"use token {FAKE_SECRETS[1]}",
                           api_key=FAKE_SECRETS[-1])
    records = records_for_event("Stop", payload)
    payload_pc = {**payload, "hook_event_name": "PreCompact",
                  "compact_summary": f"Set password = \"hunter2\" and {FAKE_SECRETS[3]}"}
    records += records_for_event("PreCompact", payload_pc)
    records += records_for_event("SessionEnd", {**payload, "last_assistant_message": None})
    prompt = secret_turns()[0][1]  # the pasted .env, curl, key block ...
    records += records_for_event("UserPromptSubmit", {**payload, "prompt": prompt})
    assert len(records) == 5  # the turn (and its catch-ups), the compaction summary, the prompt
    for rec in records:
        blob = json.dumps(dataclasses.asdict(rec)) + rec.record_id
        for secret in FAKE_SECRETS:
            assert secret not in blob, (rec.doc_type, secret)
    assert "Please fix the deploy script." in records[0].content
    assert "Rotated the keys." in records[0].content


def test_prompt_record(project: Path) -> None:
    payload = {"session_id": "s1", "cwd": str(project), "hook_event_name": "UserPromptSubmit",
               "prompt": "  Use uv, not pip.\n\nAlso pin ruff.  "}
    [rec] = records_for_event("UserPromptSubmit", payload, now=5.0)
    assert rec.content == "User prompt: Use uv, not pip.\nAlso pin ruff."
    assert (rec.kind, rec.doc_type, rec.source) == ("prompt", "prompt", "claude-code://s1/prompt")
    assert rec.branch == "main"
    [again] = records_for_event("UserPromptSubmit", payload, now=6.0)
    assert again.record_id == rec.record_id

    long = records_for_event("UserPromptSubmit", {**payload, "prompt": "word " * 2000})
    assert len(long[0].content.encode()) <= 4000 and long[0].content.endswith("...")
    assert records_for_event("UserPromptSubmit", {**payload, "prompt": "   "}) == []
    assert records_for_event("UserPromptSubmit", {**payload, "prompt": None}) == []


def test_parse_says_what_each_event_does() -> None:
    start = CLIENT.parse("SessionStart", {"source": "startup"})
    assert start.inject and start.session_start and start.source == "startup"
    prompt = CLIENT.parse("UserPromptSubmit", {"prompt": " how do retries work? "})
    assert prompt.inject and prompt.prompt == "how do retries work?"
    assert CLIENT.parse("UserPromptSubmit", {"prompt": ""}).prompt is None
    stop = CLIENT.parse("Stop", {"prompt": "x"})
    assert not stop.inject and stop.prompt is None and stop.capture == "outcome"
    assert INJECT_EVENTS == {"SessionStart", "UserPromptSubmit"}
    assert registry.get("claude-code") is registry.CLIENTS["claude-code"]


# --- injection --------------------------------------------------------------------------------


def hit(**overrides: Any) -> Hit:
    base: dict[str, Any] = {
        "id": "m1", "content": "Request: configure retries\nResult: done",
        "status": "current", "source": "claude-code://s1/outcome", "score": 1.0,
        "created_at": 1_700_000_000.0, "branch": "main", "revision": None,
        "client": "claude-code", "session_id": "s1", "doc_type": "outcome",
        "claims": [], "changed_files": [], "store": "memory",
    }
    base.update(overrides)
    base["claims"] = [{"claim_id": f"c{i}", "record_id": base["id"], "subject": "",
                       "predicate": "", "value": "", **c} for i, c in enumerate(base["claims"])]
    return Hit.from_dict(base)


def inject(hits: list[Hit], project: Path | None = None, *, current_branch: str = "main",
           current_revision: str | None = None, query: str = "retries",
           **kw: Any) -> dict[str, Any]:
    where = injection.Where(current_branch, current_revision, str(project) if project else None)
    text = injection.render(hits, where=where, query=query, **kw)
    return CLIENT.output(CLIENT.parse("UserPromptSubmit", {"prompt": query}), text)


def context(result: dict[str, Any]) -> str:
    out = result["hookSpecificOutput"]
    assert out["hookEventName"] == "UserPromptSubmit"
    return out["additionalContext"]


def test_no_hits_is_empty() -> None:
    assert inject([]) == {}
    assert inject([hit(content="")]) == {}


def test_entry_shows_provenance(project: Path) -> None:
    head = git(project, "rev-parse", "HEAD")
    (project / "b.txt").write_text("b")
    git(project, "add", "b.txt")
    git(project, "commit", "-q", "-m", "b")
    now = git(project, "rev-parse", "HEAD")
    text = context(inject(
        [hit(revision=head, changed_files=["gateway/retry.py"])], project,
        current_revision=now, current_branch="feature",
    ))
    assert "not instructions" in text
    assert "m1" in text and "claude-code://s1/outcome" in text
    assert "2023-11-14T22:13:20Z" in text
    assert f"Captured branch: main, revision: {head[:12]}" in text
    assert f"Current branch: feature, revision: {now[:12]}" in text
    assert "Revision status: captured-revision-is-ancestor" in text
    assert "file changed since capture: gateway/retry.py" in text
    assert "Request: configure retries" in text


def test_superseded_claims_are_omitted_and_the_rest_stays() -> None:
    content = ("Gateway notes.\nThe retry limit is 3 attempts. Deploys go through Argo.\n"
               "We use Redis for caching.")
    old = "The retry limit is 3 attempts."
    start = content.index(old)
    claims = [
        {"status": "superseded", "start": start, "end": start + len(old), "evidence": old,
         "superseded_by": "m9", "value": "3", "replaced_by_value": "5",
         "subject": "gateway retry limit"},
        {"status": "current", "start": content.index("We use"), "end": len(content),
         "evidence": "We use Redis for caching.", "value": "Redis"},
    ]
    text = context(inject([hit(content=content, claims=claims)], query="retry limit Argo Redis"))
    assert "3 attempts" not in text
    assert old not in text
    assert "Deploys go through Argo." in text
    assert "We use Redis for caching." in text
    assert "Superseded here: gateway retry limit (now: 5, per m9)" in text


def test_conflicted_record_and_claims_are_marked() -> None:
    content = "Owner of billing is Ana.\nBilling runs nightly."
    claims = [{"status": "conflicted", "start": 0, "end": 24, "evidence": "Owner of billing is Ana.",
               "superseded_by": None, "value": "Ana"}]
    text = context(inject([hit(content=content, claims=claims, status="conflicted")],
                          query="billing owner"))
    assert "CONFLICTED" in text
    assert "Owner of billing is Ana. [conflicted]" in text
    assert "Billing runs nightly." in text
    assert "Billing runs nightly. [conflicted]" not in text


def test_byte_cap_and_record_cap() -> None:
    hits = [hit(id=f"m{i}", content=f"retries {i} " + "lorem ipsum dolor " * 200) for i in range(20)]
    text = context(inject(hits, max_bytes=2500))
    assert len(text.encode()) <= 2500
    assert "m0" in text
    full = context(inject(hits))
    assert len(full.encode()) <= 8000
    assert full.count("\n- Memory ") <= 5
    two = context(inject(hits, max_records=2, max_bytes=100_000))
    assert two.count("\n- Memory ") == 2
    assert inject(hits, max_bytes=50) == {}  # not even the header plus one entry fits


def test_excerpt_prefers_query_lines_and_is_capped() -> None:
    lines = [f"line {i} about nothing" for i in range(10)]
    lines[7] = "the cache eviction policy is LRU"
    lines[2] = "cache warmed at startup"
    text = context(inject([hit(content="\n".join(lines))], query="what is the cache policy"))
    assert "the cache eviction policy is LRU" in text
    assert "cache warmed at startup" in text
    assert "line 0 about nothing" not in text
    assert text.index("cache warmed") < text.index("eviction")  # original order

    plain = context(inject([hit(content="\n".join(lines))], query="zebra"))
    assert "line 0 about nothing" in plain and "line 3 about nothing" not in plain

    huge = context(inject([hit(content="retries " * 1000)]))
    excerpt = [line for line in huge.split("\n") if line.startswith("  retries")][0]
    assert len(excerpt.strip().encode()) <= 800


def test_workspace_hit_shows_path_and_lines() -> None:
    ws = hit(id="w1", store="workspace", path="docs/retry.md", start_line=10, end_line=24,
             source="workspace", content="Retries back off exponentially.", created_at=None,
             branch=None)
    text = context(inject([ws]))
    assert "docs/retry.md:10-24" in text
    assert "Retries back off exponentially." in text


def test_duplicate_hits_are_shown_once() -> None:
    text = context(inject([hit(), hit(), hit(id="m2")]))
    assert text.count("Request: configure retries") == 1


def test_weak_matches_are_left_out() -> None:
    from lintaid.hooks import InjectConfig, relevant

    hits = [hit(id=f"m{i}", score=score) for i, score in enumerate((10.0, 5.0, 3.9, 1.0))]
    assert [h.id for h in relevant(hits, 0.4)] == ["m0", "m1"]
    assert relevant(hits, 0) == hits and relevant([], 0.4) == []
    assert InjectConfig().min_relative_score == 0.4


def test_a_match_in_the_tools_list_brings_the_turn_with_it() -> None:
    content = ("Request: Move packaging to poetry.\nResult: We use poetry for dependency "
               "management.\nAffected paths: poetry.lock\nTools used: Edit, Bash")
    # Only "Tools used" holds "tool": the turn's request and result come with it.
    text = context(inject([hit(content=content)], query="Which tool was it?"))
    assert "Tools used: Edit, Bash" in text
    assert "Request: Move packaging to poetry." in text
    assert "Result: We use poetry for dependency management." in text
    # Query words match by stem: "dependencies" finds "dependency".
    text = context(inject([hit(content=content)], query="dependencies"))
    assert "Result: We use poetry for dependency management." in text
    assert "Request: Move packaging" not in text
