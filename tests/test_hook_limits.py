"""A huge prompt is cut before it costs the hook its budget: at a whitespace boundary, before
redaction, search and storage; it and the next normal prompt are both answered."""

from __future__ import annotations

import json
import random
from pathlib import Path

from lintaid.hooks import MAX_PROMPT_CHARS, cut_prompt
from lintaid.integrations.base import HookEvent
from lintaid_client import Memory, paths, spool
from tests.conftest import run_hook, run_json

TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def event(prompt: str) -> HookEvent:
    return HookEvent(client="claude-code", name="UserPromptSubmit", payload={}, prompt=prompt)


def test_a_prompt_is_cut_at_a_whitespace_boundary_never_inside_a_word() -> None:
    short = event("a normal prompt")
    assert cut_prompt(short) is short
    # A secret straddling the limit goes whole: no half of it is left to slip past redaction.
    head = "word " * ((MAX_PROMPT_CHARS - 10) // 5)
    cut = cut_prompt(event(head + TOKEN + " tail")).prompt
    assert cut is not None and len(cut) <= MAX_PROMPT_CHARS
    assert cut == head.rstrip() and "ghp_" not in cut
    # Whitespace exactly at the limit keeps every character before it.
    exact = "x" * (MAX_PROMPT_CHARS - 1) + "y"
    assert cut_prompt(event(exact + " more")).prompt == exact
    # One word longer than the limit says nothing we could keep safely.
    assert cut_prompt(event("z" * (3 * MAX_PROMPT_CHARS))).prompt == ""


def megabyte_prompt(seed: int = 3) -> str:
    noise = random.Random(seed)
    words = ["".join(noise.choice("bcdfghjklmnpqrstvwxz") for _ in range(noise.randint(3, 9)))
             for _ in range(4000)]
    body = " ".join(noise.choice(words) for _ in range(200_000))
    return ("How many retry attempts does the gateway make on timeouts? " + body)[:1_000_000]


def test_a_megabyte_prompt_and_the_next_prompt_are_both_answered(daemon: Path) -> None:
    with Memory(project=daemon) as m:
        m.add("Gateway timeout retry attempts: 3, with exponential backoff.")
    big = megabyte_prompt()
    out = run_hook(daemon, "UserPromptSubmit", {"session_id": "big", "prompt": big})
    assert "Gateway timeout retry attempts: 3" in out["hookSpecificOutput"]["additionalContext"]
    out = run_hook(daemon, "UserPromptSubmit", {
        "session_id": "next", "prompt": "What backoff does the gateway use for retries?"})
    assert "exponential backoff" in out["hookSpecificOutput"]["additionalContext"]
    assert spool.pending(daemon) == []  # both answered in time: nothing was spooled
    prompts = run_json(daemon, "list", "--kind", "prompt", "--limit", "50")["results"]
    stored = {h["session_id"]: h["content"] for h in prompts}
    assert stored["big"].startswith("User prompt: How many retry attempts")
    assert len(stored["big"].encode()) <= 4000
    assert "backoff" in stored["next"]
    # The cut came first, before redaction, search and storage.
    cuts = [json.loads(line) for line in paths.log_path(daemon).read_text().splitlines()
            if '"prompt_cut"' in line]
    assert [(c["chars"], c["kept"] <= MAX_PROMPT_CHARS) for c in cuts] == [(len(big), True)]
