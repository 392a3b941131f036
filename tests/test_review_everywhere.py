"""Every conflicted pair is listed where a person goes to resolve it, and can be resolved there.

Two kinds of pair in one project: a captured turn against the decision document it contradicts
("Signature max age: 300 seconds." in ``docs/decisions.md``, then a turn that found "Signature
max age: 600 seconds." without saying it changed anything: a memory never silently retires a
document, so the two disagree), and two memories stamped alike that disagree. Both are listed by
``lintaid review``, ``lintaid list --status conflicted``, the MCP ``review_queue`` tool (the
MCP SDK's client against the real shim) and the viewer's conflicts page, and the project's
state names both as unresolved; accept and reject work on each, from the CLI, MCP and the
viewer, and what was decided holds through a restart.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from tests.conftest import Served, wait_for
from tests.test_e2e_spine import git_init
from tests.test_mcp import call, params
from tests.test_viewer import open_viewer
from tests.transcripts import stop_payload, write_transcript

DECISIONS = "docs/decisions.md"
DOCUMENT = "# Webhooks\n\nSignature max age: 300 seconds.\n"
# No change cue and no request to change it: a cue ("now 600 instead of 300") or a turn asked
# to "raise" it would supersede the document's value, and there would be nothing to review.
REQUEST = "Which signature max age do the webhook handlers check?"
RESULT = "Signature max age: 600 seconds."
STATED = RESULT.rstrip(".")  # a statement as review and the state quote it
SAME_TIME = float(int(time.time()) - 3600)


@dataclass
class Scene:
    served: Served
    capture: str  # the turn that contradicts the document
    dan: str
    eve: str  # two memories of one moment that disagree

    def queue(self) -> list[dict[str, Any]]:
        return list(self.served.json("review")["results"])

    def item(self, kind: str) -> dict[str, Any]:
        """The document's pair ("document") or the memories' ("memory")."""
        found = [i for i in self.queue()
                 if (i["older"]["store"] == "workspace") == (kind == "document")]
        assert len(found) == 1, found
        return found[0]

    def status(self, rid: str) -> str:
        return str(self.served.json("get", rid)["status"])


@pytest.fixture
def scene(project: Path, serve: Callable[..., Served], tmp_path: Path) -> Scene:
    git_init(project)
    (project / "docs").mkdir()
    (project / DECISIONS).write_text(DOCUMENT)
    served = serve(project, watch=True)
    wait_for(lambda: served.json("status")["workspace"]["ready"], timeout=60)
    transcript = write_transcript(tmp_path / "t.jsonl", [
        ("user", REQUEST), ("assistant", RESULT)],
        cwd=str(project))
    assert served.hook("Stop", stop_payload(transcript, cwd=str(project))) == {}
    capture = wait_for(lambda: served.json("list")["results"])[0]["id"]
    dan = served.call("add", {"content": "Dan owns the payments service.",
                              "created_at": SAME_TIME})["id"]
    eve = served.call("add", {"content": "Eve owns the payments service.",
                              "created_at": SAME_TIME})["id"]
    return Scene(served, capture, dan, eve)


def test_both_kinds_of_pair_are_listed_by_review_list_mcp_the_viewer_and_the_state(
        scene: Scene) -> None:
    served = scene.served
    document, memories = scene.item("document"), scene.item("memory")
    assert document["kind"] == memories["kind"] == "conflicts_with"
    assert document["newer"]["record_id"] == scene.capture
    assert (document["older"]["path"], document["older"]["line"]) == (DECISIONS, 3)
    assert (document["newer"]["value"], document["older"]["value"]) == ("600s", "300s")
    assert {memories["newer"]["record_id"], memories["older"]["record_id"]} == {scene.dan,
                                                                                scene.eve}
    shown = served.cli("review").stdout
    assert f"older {DECISIONS}:3: Signature max age: 300 seconds\n" in shown
    assert "2 waiting" in shown

    listed = {h["id"] for h in served.json("list", "--status", "conflicted")["results"]}
    assert listed == {scene.capture, scene.dan, scene.eve}
    # get and injection name the pending item on the capture
    assert served.json("get", scene.capture)["reviews"] == [document["id"]]

    viewer = open_viewer(served)
    page = viewer.get("/conflicts").body
    for item in (document, memories):
        assert f'data-item="{item["id"]}"' in page
    assert f"<code>{DECISIONS}:3</code>" in page

    state = served.hook("SessionStart", {"session_id": "s9", "source": "startup"})
    text = state["hookSpecificOutput"]["additionalContext"]
    assert (f'"{STATED}" ({scene.capture}' in text
            and f'vs "Signature max age: 300 seconds" ({DECISIONS}:3)' in text)
    assert "vs \"Dan owns the payments service\"" in text


@pytest.mark.slow
@pytest.mark.anyio
async def test_the_mcp_tool_lists_both_and_decides_each(scene: Scene) -> None:
    async with Client(params(scene.served.root)) as client:
        queue = await call(client, "review_queue")
        assert queue["count"] == 2
        lines = {line["older_location"]: line for line in queue["results"]}
        document = lines[f"{DECISIONS}:3"]
        assert (document["newer_id"], document["older_id"]) == (scene.capture, DECISIONS)
        decided = await call(client, "review_decide", {"id": document["id"],
                                                        "decision": "accept"})
        assert decided["status"] == "accepted"
        assert DECISIONS in decided["document"] and "300s" in decided["document"]
        other = next(line for key, line in lines.items() if key != f"{DECISIONS}:3")
        await call(client, "review_decide", {"id": other["id"], "decision": "reject"})
        assert (await call(client, "review_queue"))["count"] == 0
    assert scene.status(scene.capture) == "current"
    assert {scene.status(scene.dan), scene.status(scene.eve)} == {"current"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def test_accepting_the_memory_over_the_document_settles_it_and_leaves_the_file(
        scene: Scene, project: Path) -> None:
    served = scene.served
    item = scene.item("document")
    out = served.cli("review", "accept", item["id"])
    assert out.exit_code == 0, out.stderr
    assert f"{scene.capture} stands; {DECISIONS} still says '300s'" in out.stdout
    assert scene.status(scene.capture) == "current"
    assert [i["id"] for i in scene.queue()] == [scene.item("memory")["id"]]
    assert (project / DECISIONS).read_text() == DOCUMENT  # memory never writes a file
    trail = served.call("audit", {"id": scene.capture})["results"]
    assert trail[-1]["event"] == "ACCEPT" and trail[-1]["detail"]["other"] == DECISIONS
    again = served.cli("review", "accept", item["id"])
    assert "was accepted already; nothing changed" in again.stdout
    # The state no longer offers the file's old value as a current decision beside it.
    state = served.hook("SessionStart", {"session_id": "s9", "source": "startup"})
    text = state["hookSpecificOutput"]["additionalContext"]
    assert f"({DECISIONS}:3)" not in text and f'"{STATED}" ({scene.capture}' in text
    served.restart()
    wait_for(lambda: served.json("status")["workspace"]["ready"], timeout=60)
    assert scene.status(scene.capture) == "current"
    assert len(scene.queue()) == 1


def test_rejecting_the_document_pair_and_accepting_the_memories_from_the_viewer(
        scene: Scene) -> None:
    served = scene.served
    viewer = open_viewer(served)
    document, memories = scene.item("document"), scene.item("memory")
    page = viewer.post(f"/review/{document['id']}/reject", {"reason": "different hooks"})
    assert page.status == 303
    assert scene.status(scene.capture) == "current"
    page = viewer.post(f"/review/{memories['id']}/accept", {})
    assert page.status == 303
    after = viewer.get(page.headers["Location"].split(viewer.token, 1)[1]).body
    assert "Accepted" in after and "No unresolved conflicts." in after
    older = memories["older"]["record_id"]
    assert served.cli("get", older).exit_code != 0 or scene.status(older) == "superseded"
    assert scene.queue() == []


def test_decisions_on_both_kinds_of_pair_travel_with_an_export(
        scene: Scene, serve: Callable[..., Served], tmp_path: Path) -> None:
    """An export carries the decision on a memory against a document (it names the file by its
    path, no memory): re-imported into its store it is already there, and imported into a
    copy of the project (the same decision document, as old) it settles the pair there too."""
    served = scene.served
    document, memories = scene.item("document"), scene.item("memory")
    assert served.cli("review", "accept", document["id"]).exit_code == 0
    assert served.cli("review", "reject", memories["id"]).exit_code == 0
    path = tmp_path / "export.jsonl"
    assert served.cli("export", "--output", str(path)).exit_code == 0
    again = served.json("import", str(path))["counts"]
    assert again["review"] == {"NONE": 2}, again
    assert "SKIP" not in json.dumps(again)

    clone = tmp_path / "clone"
    clone.mkdir()
    git_init(clone)
    (clone / "docs").mkdir()
    (clone / DECISIONS).write_text(DOCUMENT)
    # the file as old as the source's (copied with its times): newer than the memory, a
    # document would supersede it by itself, and there would be nothing to decide
    mtime = (served.root / DECISIONS).stat().st_mtime_ns
    os.utime(clone / DECISIONS, ns=(mtime, mtime))
    other = serve(clone, watch=True)
    wait_for(lambda: other.json("status")["workspace"]["ready"], timeout=60)
    counts = other.json("import", str(path))["counts"]
    assert counts["review"] == {"ADD": 2}, counts
    assert other.json("review")["results"] == []
    assert other.json("list", "--status", "conflicted")["results"] == []
    assert other.json("get", scene.capture)["status"] == "current"
    state = other.hook("SessionStart", {"session_id": "s9", "source": "startup"})
    text = state["hookSpecificOutput"]["additionalContext"]
    assert f"({DECISIONS}:3)" not in text and f'"{STATED}" ({scene.capture}' in text


def _document_then_turn(project: Path, serve: Callable[..., Served], tmp_path: Path,
                        document: tuple[str, str], request: str,
                        result: str) -> tuple[Served, str]:
    """A decision document under docs/ in a git project, then one captured turn: the daemon
    and the turn's record id."""
    git_init(project)
    (project / "docs").mkdir()
    (project / "docs" / document[0]).write_text(document[1])
    served = serve(project, watch=True)
    wait_for(lambda: served.json("status")["workspace"]["ready"], timeout=60)
    transcript = write_transcript(tmp_path / "t.jsonl", [("user", request),
                                                         ("assistant", result)],
                                  cwd=str(project))
    assert served.hook("Stop", stop_payload(transcript, cwd=str(project))) == {}
    return served, wait_for(lambda: served.json("list")["results"])[0]["id"]


def test_a_memory_that_says_it_changed_a_documents_value_waits_for_review(
        project: Path, serve: Callable[..., Served], tmp_path: Path) -> None:
    """"Cache TTL is now 90 seconds." against a decision document's "Cache TTL: 60 seconds.":
    the memory supersedes the file's statement for the policy, but memory never marks a
    document, so the file's value is still offered as a current decision beside it. The pair
    waits in the queue like a conflict; accepting it stops the file's value being offered."""
    served, capture = _document_then_turn(
        project, serve, tmp_path, ("cache.md", "# Cache\n\nCache TTL: 60 seconds.\n"),
        "Which cache TTL does the API use?", "Cache TTL is now 90 seconds.")
    queue = served.json("review")["results"]
    assert len(queue) == 1, queue
    item = queue[0]
    assert item["kind"] == "supersedes"
    assert item["newer"]["record_id"] == capture
    assert (item["older"]["path"], item["older"]["value"]) == ("docs/cache.md", "60s")
    assert served.json("get", capture)["reviews"] == [item["id"]]
    viewer = open_viewer(served)
    assert f'data-item="{item["id"]}"' in viewer.get("/conflicts").body

    out = served.cli("review", "accept", item["id"])
    assert "docs/cache.md still says '60s'" in out.stdout, out.stdout + out.stderr
    assert served.json("review")["results"] == []
    assert served.json("get", capture)["status"] == "current"
    state = served.hook("SessionStart", {"session_id": "s9", "source": "startup"})
    text = state["hookSpecificOutput"]["additionalContext"]
    assert "(docs/cache.md:3)" not in text and capture in text


def test_the_issues_own_change_naming_the_old_value_bare_waits_for_review(
        project: Path, serve: Callable[..., Served], tmp_path: Path) -> None:
    """"Signature max age is now 600 seconds instead of 300." against a decision document's
    "Signature max age: 300 seconds.": the old side is written without its unit, and takes
    the new side's (seconds); the pair waits in the queue."""
    served, capture = _document_then_turn(
        project, serve, tmp_path, ("auth.md", "# Auth\n\nSignature max age: 300 seconds.\n"),
        "Clients with slow clocks fail signature checks.",
        "Signature max age is now 600 seconds instead of 300.")
    queue = wait_for(lambda: served.json("review")["results"])
    assert [(i["newer"]["record_id"], i["older"]["path"], i["older"]["value"])
            for i in queue] == [(capture, "docs/auth.md", "300s")]
