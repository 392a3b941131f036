"""Forget, restore, edit and the audit listing.

The acceptance run uses daemon processes and the hook shim as the agent runs it: a captured
turn is forgotten, the same Stop event replayed three times, the daemon restarted and the
derived state rebuilt from nothing; the turn never comes back in search or injection until
``lintaid restore``, and ``lintaid audit`` lists every step in order.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lintaid.derivation import rebuild_memory
from lintaid.store.memory import MemoryStore
from tests.conftest import Served, daemon_process, run_cli, run_hook, run_json
from tests.transcripts import stop_payload, write_transcript

WORD = "zephyrine"


def injected(root: Path, prompt: str) -> str:
    out = run_hook(root, "UserPromptSubmit", {"session_id": "asker", "prompt": prompt})
    return str(out.get("hookSpecificOutput", {}).get("additionalContext", ""))


def found(root: Path) -> list[str]:
    hits = run_json(root, "search", f"{WORD} cache eviction")["results"]
    return [h["id"] for h in hits if WORD in h["content"]]


@pytest.mark.slow
def test_a_forgotten_capture_stays_forgotten_until_restored(project: Path) -> None:
    transcript = write_transcript(project.parent / "t.jsonl", [
        ("user", f"Why does the {WORD} cache evict entries early?"),
        ("assistant", f"The {WORD} cache evicts after 30 seconds; I raised it to 300."),
    ], session_id="s-forget", cwd=str(project))
    stop = stop_payload(transcript, session_id="s-forget", cwd=str(project))
    proc = daemon_process(project)
    try:
        assert run_hook(project, "Stop", stop) == {}
        [rid] = found(project)
        assert WORD in injected(project, f"how does the {WORD} cache evict?")
        run_cli(project, "forget", rid, "--reason", "captured by mistake")
        for _ in range(3):
            assert run_hook(project, "Stop", stop) == {}
        assert found(project) == []
        assert WORD not in injected(project, f"how does the {WORD} cache evict?")
        assert run_json(project, "status")["memory"]["forgotten"] == 1
    finally:
        proc.stop()
    proc = daemon_process(project)  # restarted
    try:
        assert found(project) == []
        assert run_hook(project, "Stop", stop) == {}
    finally:
        proc.stop()
    store = MemoryStore(project)  # the derived state rebuilt from nothing
    try:
        rebuild_memory(store)
    finally:
        store.close()
    proc = daemon_process(project)
    try:
        assert found(project) == []
        assert WORD not in injected(project, f"how does the {WORD} cache evict?")
        out = run_cli(project, "restore", rid, "--reason", "it was right after all")
        assert out.stdout.strip() == f"restored: {rid}"
        assert found(project) == [rid]
        assert WORD in injected(project, f"how does the {WORD} cache evict?")
        assert run_hook(project, "Stop", stop) == {}  # a replay now finds it there
        trail = run_json(project, "audit", "--id", rid)["results"]
        assert [e["event"] for e in trail] == ["ADD", "FORGET", "RESTORE"]
        assert [e["actor"] for e in trail] == ["hook:claude-code", "cli", "cli"]
        assert trail[1]["before_hash"] == trail[0]["after_hash"] == trail[2]["after_hash"]
        assert trail[1]["is_deleted"] and trail[1]["detail"] == {"reason": "captured by mistake"}
        assert trail[2]["detail"]["reason"] == "it was right after all"
        seqs = [int(e["id"]) for e in trail]
        assert seqs == sorted(seqs)
        listed = run_cli(project, "audit").stdout.splitlines()
        assert [line.split()[3] for line in listed if rid in line] == ["ADD", "FORGET",
                                                                       "RESTORE"]
        assert run_json(project, "status")["memory"]["forgotten"] == 0
    finally:
        proc.stop()


def test_restore_is_refused_for_what_is_not_forgotten(served: Served) -> None:
    rid = served.call("add", {"content": "The nightly job runs at 02:00 UTC."})["id"]
    out = served.cli("restore", rid)
    assert out.exit_code == 1 and "is not forgotten" in out.stderr
    missing = served.cli("restore", "m" + "0" * 23)
    assert missing.exit_code == 1 and "not_found" in missing.stderr
    served.call("forget", {"id": rid})
    other = served.cli("restore", rid, "--user", "alice")  # another user's forget
    assert other.exit_code == 1 and "not_found" in other.stderr
    assert served.json("restore", rid)["event"] == "RESTORE"


def test_adding_a_forgotten_text_again_is_refused_until_restored(served: Served) -> None:
    rid = served.json("add", "Deploys go through the blue pipeline.")["id"]
    served.call("forget", {"id": rid})
    again = served.json("add", "Deploys go through the blue pipeline.")
    assert again == {"id": rid, "event": "FORGOTTEN"}
    assert served.call("add", {"content": "Deploys go through the blue pipeline.",
                               "source": "elsewhere"})["event"] == "FORGOTTEN"
    served.call("restore", {"id": rid})
    assert served.json("add", "Deploys go through the blue pipeline.") == {
        "id": rid, "event": "NONE"}
    assert served.call("get", {"id": rid})["status"] == "current"


def test_add_and_edit_read_long_texts_from_standard_input(served: Served) -> None:
    text = "Gateway timeout retry attempts: 2.\n" + "Background: " + "details " * 400
    added = served.cli("add", "-", "--json", input=text)
    rid = json.loads(added.stdout)["id"]
    got = served.call("get", {"id": rid})
    assert got["content"] == text and got["content"] != "-"
    assert [c["value"] for c in got["claims"]] == ["2"]
    edited = served.cli("edit", rid, "--text", "-", input="Gateway timeout retry attempts: 4.")
    assert edited.exit_code == 0 and edited.stdout.strip() == f"updated: {rid}"
    got = served.call("get", {"id": rid})
    assert got["content"] == "Gateway timeout retry attempts: 4."
    assert [c["value"] for c in got["claims"]] == ["4"]  # claims derived again
    hits = served.call("search", {"query": "gateway timeout retry attempts"})["results"]
    assert [h["id"] for h in hits] == [rid]
    # the edit re-relates the chain: a note saying it is now 5 supersedes it
    newer = served.call("add", {"content": "Gateway timeout retry attempts: now 5."})["id"]
    assert served.call("get", {"id": rid})["superseded_by"] == newer
    assert [e["event"] for e in served.call("history", {"id": rid})["results"]] == [
        "ADD", "UPDATE"]
    empty = served.cli("add", "-", input="   \n")
    assert empty.exit_code == 1 and "nothing on standard input" in empty.stderr
    empty = served.cli("edit", rid, "--text", "-", input="")
    assert empty.exit_code == 1 and "nothing on standard input" in empty.stderr


def test_the_audit_listing_filters(served: Served) -> None:
    a = served.call("add", {"content": "Alpha service owner is Dan.", "actor": "cli"})["id"]
    b = served.call("add", {"content": "Beta service owner is Eve."})["id"]
    served.call("forget", {"id": b, "actor": "viewer"})
    everything = served.json("audit")["results"]
    assert [(e["event"], e["memory_id"], e["actor"]) for e in everything] == [
        ("ADD", a, "cli"), ("ADD", b, "api"), ("FORGET", b, "viewer")]
    assert [e["memory_id"] for e in served.json("audit", "--id", b)["results"]] == [b, b]
    assert [e["event"] for e in served.json("audit", "--actor", "viewer")["results"]] == [
        "FORGET"]
    since = everything[2]["created_at"]
    assert [e["event"] for e in served.json("audit", "--since", str(since))["results"]] == [
        "FORGET"]
    assert served.json("audit", "--user", "alice")["results"] == []  # another user's log
    first: dict[str, Any] = served.call("audit", {"limit": 1})
    assert len(first["results"]) == 1 and first["next"] == int(first["results"][0]["id"])
    rest = served.call("audit", {"after": first["next"]})["results"]
    assert [e["id"] for e in first["results"] + rest] == [e["id"] for e in everything]
    bad = served.cli("audit", "--since", "yesterday-ish")
    assert bad.exit_code == 1 and "--since" in bad.stderr


def test_the_audit_listing_reads_newest_first_page_by_page(served: Served) -> None:
    for n in range(5):
        served.call("add", {"content": f"Release train {n} leaves on Tuesday."})
    oldest = [e["id"] for e in served.json("audit")["results"]]
    newest = [e["id"] for e in served.json("audit", "--order", "newest")["results"]]
    assert newest == oldest[::-1]
    pages, after = [], 0
    while True:
        page: dict[str, Any] = served.memory().audit(newest_first=True, limit=2, after=after)
        pages.append([e["id"] for e in page["results"]])
        if page["next"] is None:
            break
        after = page["next"]
    assert pages == [newest[0:2], newest[2:4], newest[4:]]
    assert served.cli("audit", "--order", "sideways").exit_code == 2  # click: not a choice
