"""Export and import: lintaid's JSON Lines and mem0's format, against real daemons.

A project with supersessions (inferred and explicit), a rejected review item, a forgotten
record, a confirmation, an expired record, a captured turn and a prompt is exported and
imported into an empty project: a fixed set of queries gives the same results and the same
injected context there. Importing twice adds nothing; every row added is audited as an
import; a bad file is refused by line before anything is imported.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lintaid_client import paths
from tests.conftest import Served
from tests.transcripts import stop_payload, write_transcript

RECENT = float(int(time.time()) - 7200)
QUERIES = [
    "gateway timeout retry attempts",
    "who owns the payments service",
    "session storage",
    "deploy notes",
    "staging host",
    "nightly backup job",
    "what did we use before for session storage",
]


def make_project(tmp_path: Path, name: str) -> Path:
    root = tmp_path / name
    root.mkdir()
    paths.ensure_state_dir(root)
    return root


def fill(served: Served, tmp_path: Path) -> dict[str, str]:
    call = served.call
    ids = {
        "two": call("add", {"content": "Gateway timeout retry attempts: 2."})["id"],
        "three": call("add", {"content": "Gateway timeout retry attempts: now 3."})["id"],
        "redis": call("add", {"content": "We use Redis for session storage."})["id"],
        "memcached": call("add", {"content": "Use Memcached for session storage instead of "
                                             "Redis."})["id"],
        "dan": call("add", {"content": "Dan owns the payments service.",
                            "created_at": RECENT})["id"],
        "eve": call("add", {"content": "Eve owns the payments service.",
                            "created_at": RECENT})["id"],
        "notes": call("add", {"content": "Deploy notes for the gateway."})["id"],
        "notes2": call("add", {"content": "New deploy notes for the gateway."})["id"],
        "staging": call("add", {"content": "The old staging host is stage1."})["id"],
        "secret": call("add", {"content": "The nightly backup job writes to bucket nb-7."})[
            "id"],
        "valid": call("add", {"content": "The nightly backup job runs at 02:00 UTC.",
                              "valid_at": RECENT - 86400})["id"],
    }
    call("supersede", {"old_id": ids["notes"], "new_id": ids["notes2"]})
    [item] = call("review", {})["results"]
    call("decide", {"id": item["id"], "decision": "reject", "reason": "they share it"})
    call("forget", {"id": ids["secret"], "reason": "not for this store"})
    call("confirm", {"id": ids["redis"]})
    call("expire", {"id": ids["staging"]})
    transcript = write_transcript(tmp_path / f"{served.root.name}.jsonl", [
        ("user", "Which session storage backend do we run in staging?"),
        ("assistant", "Staging runs Memcached for session storage; checked the config."),
    ], session_id="s-export", cwd=str(served.root))
    served.hook("Stop", stop_payload(transcript, session_id="s-export", cwd=str(served.root)))
    served.hook("UserPromptSubmit", {"session_id": "s-export",
                                     "prompt": "remind me about session storage"})
    return ids


def ranked(hits: list[dict[str, Any]]) -> list[set[tuple[Any, ...]]]:
    """Hits best first, as groups of equal score: two memories that score exactly alike come
    back in the order the index holds them, which a rebuilt index need not share."""
    groups: list[tuple[float, set[tuple[Any, ...]]]] = []
    for h in hits:
        seen = (h["id"], h["status"], h["historical"], h["superseded_by"], h["content"],
                tuple(h["reviews"]),
                tuple((c["value"], c["status"], c["valid_from"], c["valid_until"])
                      for c in h["claims"]),
                h["staleness"]["level"] if h["staleness"] else None)
        if groups and abs(groups[-1][0] - h["score"]) < 1e-6:
            groups[-1][1].add(seen)
        else:
            groups.append((h["score"], {seen}))
    return [group for _score, group in groups]


def answers(served: Served) -> list[Any]:
    """What a fixed set of queries gives: hits (current and history mode) and injection."""
    out: list[Any] = []
    for query in QUERIES:
        for history in (False, True):
            result = served.call("search", {"query": query, "history": history,
                                            "store": "memory", "top_k": 10})
            out.append(ranked(result["results"]))
            out.append(result["hidden"])
        hook = served.hook("UserPromptSubmit", {"session_id": "reader", "prompt": query})
        out.append(hook.get("hookSpecificOutput", {}).get("additionalContext"))
    return out


def reindexed(served: Served) -> None:
    """Restart the daemon with its memory index rebuilt from memory.db."""
    served.stop()
    shutil.rmtree(paths.index_dir(served.root, "memory"))
    served.start()


@pytest.fixture
def source(tmp_path: Path, serve: Callable[..., Served]) -> tuple[Served, dict[str, str]]:
    served = serve(make_project(tmp_path, "source"))
    return served, fill(served, tmp_path)


def test_an_export_imported_into_an_empty_project_answers_the_same(
        source: tuple[Served, dict[str, str]], tmp_path: Path,
        serve: Callable[..., Served]) -> None:
    served, ids = source
    dump = tmp_path / "export.jsonl"  # everything, to move the project's memory whole
    out = served.cli("export", "--include-history", "--include-prompts", "--include-paths",
                     "--output", str(dump))
    assert out.exit_code == 0, out.stderr
    assert dump.stat().st_mode & 0o777 == 0o600
    lines = [json.loads(line) for line in dump.read_text().splitlines()]
    assert lines[0]["type"] == "header" and lines[0]["format"] == "lintaid-export"
    types = {line["type"] for line in lines}
    assert types == {"header", "record", "link", "review", "confirmation", "tombstone", "audit"}
    exported = {line["id"] for line in lines if line["type"] == "record"}
    assert ids["secret"] not in exported  # forgotten: left out, its tombstone kept
    assert "nb-7" not in dump.read_text()  # not even in its history
    record = next(line for line in lines if line.get("id") == ids["two"])
    assert record["claims"][0]["value"] == "2" and record["status"] == "superseded"

    target = serve(make_project(tmp_path, "target"))
    first = target.cli("import", str(dump), "--json")
    assert first.exit_code == 0, first.stderr
    counts = json.loads(first.stdout)["counts"]
    assert counts["record"] == {"ADD": len(exported)}
    assert counts["link"] == {"ADD": 1} and counts["review"] == {"ADD": 1}
    assert counts["tombstone"] == {"ADD": 1} and counts["confirmation"] == {"ADD": 1}

    # Ranking reads the index's statistics, which count documents replaced since the last
    # merge: the source's own answers shift a little once its index is rebuilt. Compared on
    # indexes of the same live documents, the two projects answer alike.
    reindexed(served)
    reindexed(target)
    assert answers(target) == answers(served)

    again = json.loads(target.cli("import", str(dump), "--json").stdout)["counts"]
    assert all(set(events) == {"NONE"} for events in again.values()), again
    held = [s.call("status")["memory"] for s in (served, target)]
    assert held[1]["records"] == held[0]["records"] - held[0]["forgotten"]
    assert held[1]["prompts"] == held[0]["prompts"]
    assert (held[1]["superseded"], held[1]["conflicted"]) == (held[0]["superseded"],
                                                            held[0]["conflicted"])
    # the forgotten text stays forgotten here too
    assert target.json("add", "The nightly backup job writes to bucket nb-7.")["event"] == \
        "FORGOTTEN"
    # every row added is audited as an import; the history came along, marked imported
    # (in the order this store wrote them: the import, then the history it carried)
    trail = target.call("history", {"id": ids["two"]})["results"]
    assert [(e["event"], e["actor"]) for e in trail] == [("IMPORT", "cli"), ("ADD", "api")]
    assert trail[1]["detail"] == {"imported": True}
    assert trail[1]["created_at"] < trail[0]["created_at"]
    assert target.call("audit", {"actor": "cli"})["results"][0]["event"] == "IMPORT"


def test_mem0_exports_import_idempotently(served: Served, tmp_path: Path) -> None:
    doc = {"results": [
        {"id": "6f1c2d9a-1", "memory": "Prefers dark mode in every editor",
         "hash": "abc", "metadata": {"topic": "ui"}, "created_at": "2025-07-20T01:31:04-07:00",
         "updated_at": "2025-07-21T10:00:00-07:00", "user_id": "alex"},
        {"id": "6f1c2d9a-2", "memory": "Works on the payments team",
         "created_at": "2025-07-20T01:31:04-07:00", "user_id": "alex"},
    ]}
    path = tmp_path / "mem0.json"
    path.write_text(json.dumps(doc))
    out = served.cli("import", str(path))
    assert out.exit_code == 0 and "records: 2 added" in out.stdout
    again = served.cli("import", str(path))
    assert "records: 2 already here" in again.stdout
    hits = served.call("list", {"limit": 10})["results"]
    dark = next(h for h in hits if "dark mode" in h["content"])
    assert dark["source"] == "mem0://6f1c2d9a-1" and dark["kind"] == "note"
    assert dark["metadata"]["topic"] == "ui" and dark["metadata"]["mem0"]["user_id"] == "alex"
    assert dark["created_at"] == pytest.approx(1752999064.0)
    assert [e["event"] for e in served.call("history", {"id": dark["id"]})["results"]] == [
        "IMPORT"]
    # one memory a line reads the same
    lines = tmp_path / "mem0.jsonl"
    lines.write_text("\n".join(json.dumps(m) for m in doc["results"]))
    assert "records: 2 already here" in served.cli("import", str(lines)).stdout


def test_a_mem0_export_round_trips(source: tuple[Served, dict[str, str]], tmp_path: Path,
                                   serve: Callable[..., Served]) -> None:
    served, ids = source
    out = served.cli("export", "--format", "mem0", "--include-history")
    doc = json.loads(out.stdout)
    by_id = {m["id"]: m for m in doc["results"]}
    assert by_id[ids["two"]]["memory"] == "Gateway timeout retry attempts: 2."
    assert by_id[ids["two"]]["lintaid"]["status"] == "superseded"
    assert [e["event"] for e in by_id[ids["two"]]["history"]] == ["ADD"]
    path = tmp_path / "mem0-export.json"
    path.write_text(out.stdout)
    target = serve(make_project(tmp_path, "mem0-target"))
    assert target.cli("import", str(path)).exit_code == 0
    copied = {h["content"]: h for h in target.call("list", {"limit": 100,
                                                           "include_hidden": True})["results"]}
    original = {h["content"]: h for h in served.call("list", {"limit": 100,
                                                             "include_hidden": True})["results"]}
    assert copied.keys() == original.keys()
    for text, hit in copied.items():
        assert hit["created_at"] == original[text]["created_at"]
        assert hit["valid_at"] == original[text]["valid_at"]
        assert hit["kind"] == original[text]["kind"]


def test_a_bad_file_is_refused_by_line_and_nothing_is_imported(
        source: tuple[Served, dict[str, str]], tmp_path: Path,
        serve: Callable[..., Served]) -> None:
    served, _ids = source
    lines = served.cli("export").stdout.splitlines()
    broken = [*lines[:3], '{"type": "record", "content": 7}', *lines[3:]]
    path = tmp_path / "broken.jsonl"
    path.write_text("\n".join(broken))
    target = serve(make_project(tmp_path, "refusing"))
    out = target.cli("import", str(path))
    assert out.exit_code == 1 and "line 4" in out.stderr and "'content'" in out.stderr
    assert target.record_count() == 0
    path.write_text("not json at all\n{]")
    out = target.cli("import", str(path))
    assert out.exit_code == 1 and "line 1" in out.stderr
    assert target.cli("import", str(tmp_path / "missing.jsonl")).exit_code == 1
    assert target.record_count() == 0


def test_an_export_belongs_to_its_user(served: Served, tmp_path: Path,
                                       serve: Callable[..., Served]) -> None:
    served.call("add", {"content": "Alice prefers tabs.", "user_id": "alice"})
    served.call("add", {"content": "The local user prefers spaces."})
    text = served.cli("export", "--user", "alice").stdout
    assert "Alice prefers tabs" in text and "spaces" not in text
    path = tmp_path / "alice.jsonl"
    path.write_text(text)
    target = serve(make_project(tmp_path, "users"))
    refused = target.cli("import", str(path))
    assert refused.exit_code == 1 and "--user alice" in refused.stderr
    assert target.cli("import", str(path), "--user", "alice").exit_code == 0
    assert target.call("list", {"user_id": "alice"})["results"][0]["content"] == \
        "Alice prefers tabs."
    assert target.call("list", {})["results"] == []
