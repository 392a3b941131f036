"""``lintaid lint`` and ``lintaid confirm`` as a user runs them (real subprocesses, a real
daemon where the store is linted), with the clock fixed by ``--at``."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from lintaid_client import Memory, connection
from lintaid_client.mcp_rpc import Log
from lintaid_client.mcp_tools import Toolbox
from tests.conftest import REPO, lintaid_env, run_cli, run_hook, run_json
from tests.transcripts import stop_payload, write_transcript

pytestmark = pytest.mark.slow

EXPORT = REPO / "tests" / "data" / "memlint_export.json"
AT = "2026-06-07T00:00:00Z"
DAY = 86400.0


def lint(*args: str, cwd: Path, check: bool = False) -> subprocess.CompletedProcess[str]:
    """``lintaid lint ARGS`` without --project: the file audit needs no project or daemon."""
    proc = subprocess.run([sys.executable, "-m", "lintaid", "lint", *args], capture_output=True,
                          text=True, env=lintaid_env(), timeout=60, cwd=str(cwd))
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def parse_table(out: str) -> tuple[list[dict[str, str]], str]:
    lines = out.strip().splitlines()
    header, *rows, summary = lines
    assert header.split() == ["ID", "CONTENT", "CATEGORY", "AGE", "SCORE", "LEVEL", "ACTION"]
    parsed = []
    for line in rows:
        cells = re.split(r"\s{2,}", line.strip())
        parsed.append(dict(zip(["id", "content", "category", "age", "score", "level",
                                "action"], cells, strict=True)))
    return parsed, summary


def test_the_table_and_the_json_agree_on_an_export(tmp_path: Path) -> None:
    table = lint(str(EXPORT), "--at", AT, cwd=tmp_path, check=True).stdout
    data = json.loads(lint(str(EXPORT), "--at", AT, "--json", cwd=tmp_path, check=True).stdout)
    rows, summary = parse_table(table)
    assert [r["id"] for r in rows] == [r["id"] for r in data["results"]]
    assert len(rows) == data["total"] == len(json.loads(EXPORT.read_text()))
    for shown, row in zip(rows, data["results"], strict=True):
        assert shown["category"] == row["category"]
        assert int(shown["age"]) == row["age_days"]
        assert shown["score"] == f"{row['score']:.2f}"
        assert shown["level"] == row["level"].upper()
        assert shown["action"] == row["action"]
        assert row["content"].startswith(shown["content"].removesuffix("..."))
    c = data["counts"]
    assert summary == (f"Checked {data['total']} facts: {c['fresh']} fresh, {c['aging']} aging, "
                       f"{c['stale']} stale, {c['expired']} expired")
    by_id = {r["id"]: r for r in data["results"]}
    # memlint's README sample row: employment, 279 days... here 278 at this clock: stale, flag
    assert (by_id["mem_004"]["level"], by_id["mem_004"]["action"]) == ("stale", "flag")
    # the older side of a move only; the name stays fresh; the repeated pin confirmed it
    assert by_id["mem_002"]["contradicted_by"] == "mem_003"
    assert by_id["mem_003"]["level"] == "fresh" and by_id["mem_001"]["level"] == "fresh"
    assert by_id["mem_007"]["confirmations"] == 1 and by_id["mem_007"]["level"] == "fresh"
    assert by_id["mem_006"]["level"] == "expired"
    assert not (tmp_path / ".lint-ai").exists()  # no project, no daemon


def test_only_flagged_lists_stale_and_expired_but_counts_everything(tmp_path: Path) -> None:
    full = json.loads(lint(str(EXPORT), "--at", AT, "--json", cwd=tmp_path).stdout)
    flagged = json.loads(lint(str(EXPORT), "--at", AT, "--json", "--only-flagged",
                              cwd=tmp_path).stdout)
    assert flagged["counts"] == full["counts"]
    assert {r["level"] for r in flagged["results"]} == {"stale", "expired"}
    assert len(flagged["results"]) == full["counts"]["stale"] + full["counts"]["expired"]
    two = json.loads(lint(str(EXPORT), "--at", AT, "--json", "--limit", "2",
                          cwd=tmp_path).stdout)
    assert two["results"] == full["results"][:2] and two["omitted"] == full["total"] - 2
    table = lint(str(EXPORT), "--at", AT, "--limit", "2", cwd=tmp_path).stdout.splitlines()
    assert len(table) == 5 and table[3] == f"... {full['total'] - 2} more not listed (--limit)"
    refused = lint(str(EXPORT), "--limit", "6000", cwd=tmp_path)
    assert refused.returncode == 2 and "--limit" in refused.stderr


def write_export(path: Path, entries: list[dict[str, Any]]) -> Path:
    path.write_text(json.dumps(entries))
    return path


def test_fail_on_gates_exactly_on_the_level(tmp_path: Path) -> None:
    at = 1_780_790_400.0  # AT as epoch seconds
    fresh = {"id": "f", "content": "We use Redis for session storage.", "created_at": at - DAY}
    stale = {"id": "s", "content": "User works at Acme", "created_at": at - 250 * DAY}
    expired = {"id": "e", "content": "Debugged the flaky test today", "created_at": at - 60 * DAY}
    cases = [([fresh], "stale", 0), ([fresh, stale], "stale", 1), ([fresh, stale], "expired", 0),
             ([fresh, expired], "stale", 1), ([fresh, expired], "expired", 1),
             ([fresh, stale, expired], None, 0)]
    for i, (entries, fail_on, code) in enumerate(cases):
        path = write_export(tmp_path / f"case{i}.json", entries)
        args = ["--fail-on", fail_on] if fail_on else []
        proc = lint(str(path), "--at", AT, *args, cwd=tmp_path)
        assert proc.returncode == code, (entries, fail_on, proc.stdout, proc.stderr)


def test_enrich_writes_the_documents_back_with_the_scores(tmp_path: Path) -> None:
    out = tmp_path / "enriched.json"
    data = json.loads(lint(str(EXPORT), "--at", AT, "--json", "--enrich", str(out),
                           cwd=tmp_path, check=True).stdout)
    original = json.loads(EXPORT.read_text())
    enriched = json.loads(out.read_text())
    by_id = {r["id"]: r for r in data["results"]}
    assert [d["id"] for d in enriched] == [d["id"] for d in original]
    for before, after in zip(original, enriched, strict=True):
        added = {k: after[k] for k in after.keys() - before.keys()}
        assert {k: after[k] for k in before} == before  # nothing of theirs changed
        row = by_id[before["id"]]
        assert added == {"memlint_score": row["score"], "memlint_level": row["level"],
                         "memlint_age_days": row["age_days"],
                         "memlint_checked_at": "2026-06-07T00:00:00Z"}


def test_a_mem0_export_keeps_its_shape(tmp_path: Path) -> None:
    mem0 = {"results": [
        {"id": "a", "memory": "User works at Acme", "created_at": "2025-06-01T00:00:00Z",
         "updated_at": "2026-06-01T00:00:00Z", "user_id": "alice"},
        {"id": "b", "memory": "User lives in Lisbon", "created_at": "2025-06-01T00:00:00Z"},
    ]}
    src = tmp_path / "mem0.json"
    src.write_text(json.dumps(mem0))
    out = tmp_path / "mem0.enriched.json"
    data = json.loads(lint(str(src), "--format", "mem0", "--at", AT, "--json", "--enrich",
                           str(out), cwd=tmp_path, check=True).stdout)
    rows = {r["id"]: r for r in data["results"]}
    assert rows["a"]["age_days"] == 6 and rows["a"]["level"] == "fresh"  # updated_at confirms
    assert rows["b"]["age_days"] == 371 and rows["b"]["level"] == "stale"  # 371 * 0.002
    written = json.loads(out.read_text())
    assert list(written) == ["results"] and written["results"][0]["user_id"] == "alice"


@pytest.mark.parametrize(("content", "message"), [
    ({"id": "x"}, "expected a JSON array"),
    ([{"content": "no id"}], "entry 0: missing 'id'"),
    ([{"id": "a", "content": "x", "created_at": "last tuesday"}], "entry 0: created_at"),
    ([{"id": "a", "content": "x", "category": "gossip"}], "unknown category 'gossip'"),
    ([{"id": "a", "content": "x"}, {"id": "a", "content": "y"}], "appears twice"),
    ([{"id": "a", "content": "x", "confirmation_count": -1}], "confirmation_count"),
])
def test_a_bad_export_is_refused_and_nothing_is_written(tmp_path: Path, content: Any,
                                                        message: str) -> None:
    src = tmp_path / "bad.json"
    src.write_text(json.dumps(content))
    out = tmp_path / "out.json"
    proc = lint(str(src), "--enrich", str(out), cwd=tmp_path)
    assert proc.returncode == 1 and message in proc.stderr and not out.exists()
    assert proc.stderr.startswith("lintaid: ") and "Traceback" not in proc.stderr


def test_settings_come_from_the_project_file_and_the_environment(project: Path) -> None:
    (project / ".lint-ai" / "staleness.toml").write_text("[rates]\nlocation = 0.0001\n")
    src = write_export(project / "e.json", [
        {"id": "l", "content": "User lives in Lisbon", "created_at": "2025-06-01T00:00:00Z"}])
    row = run_json(project, "lint", str(src), "--at", AT)["results"][0]
    assert row["level"] == "fresh"
    env = lintaid_env(LINTAID_STALENESS_RATES="location=0.01")
    proc = run_cli(project, "lint", str(src), "--at", AT, "--json", env=env)
    assert json.loads(proc.stdout)["results"][0]["level"] == "expired"
    (project / ".lint-ai" / "staleness.toml").write_text("[rates]\nlocaton = 0.1\n")
    proc = run_cli(project, "lint", str(src), check=False)
    assert proc.returncode == 1 and "locaton: unknown category" in proc.stderr


# -- the store, through the daemon -------------------------------------------------------------
def test_lint_over_the_store_gates_ci_and_confirm_resets(daemon: Path) -> None:
    now = time.time()
    m = Memory(daemon)
    ids = [r["id"] for r in m.add_many([
        {"content": "We use Redis for session storage.", "created_at": now - 2 * DAY},
        {"content": "User's name is Priya", "created_at": now - 730 * DAY},
    ])["results"]]
    assert run_cli(daemon, "lint", "--fail-on", "stale").returncode == 0
    pin = m.add_many([{"content": "We pin Django 4.2", "created_at": now - 65 * DAY}])
    pin_id = pin["results"][0]["id"]
    proc = run_cli(daemon, "lint", "--fail-on", "stale", check=False)
    assert proc.returncode == 1
    rows, summary = parse_table(proc.stdout)
    assert rows[0]["id"] == pin_id and rows[0]["level"] == "STALE"
    assert summary == "Checked 3 records: 2 fresh, 0 aging, 1 stale, 0 expired"
    assert run_cli(daemon, "lint", "--fail-on", "expired").returncode == 0
    data = run_json(daemon, "lint", "--only-flagged")
    assert [r["id"] for r in data["results"]] == [pin_id] and data["total"] == 3
    one = run_json(daemon, "lint", "--limit", "1")
    assert [r["id"] for r in one["results"]] == [pin_id] and one["omitted"] == 2
    assert run_cli(daemon, "confirm", pin_id).stdout.strip() == f"confirmed: {pin_id}"
    assert run_cli(daemon, "lint", "--fail-on", "stale").returncode == 0
    got = run_json(daemon, "get", pin_id)["staleness"]
    assert (got["confirmations"], got["age_days"], got["level"]) == (1, 0, "fresh")
    history = run_json(daemon, "history", pin_id)["results"]
    assert [e["event"] for e in history] == ["ADD", "CONFIRM"]
    hits = run_json(daemon, "search", "Redis session storage")["results"]
    assert hits[0]["id"] == ids[0] and hits[0]["staleness"]["level"] == "fresh"
    # judged as of two months on, the Redis decision is aging
    later = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now + 60 * DAY))
    rows_later = {r["id"]: r for r in run_json(daemon, "lint", "--at", later)["results"]}
    assert rows_later[ids[0]]["level"] == "aging"
    assert run_cli(daemon, "confirm", "m-nope", check=False).returncode == 1
    # stating a stored text again confirms it (an import of items does not)
    added = run_json(daemon, "add", "Deploys go through Helm.")
    again = run_json(daemon, "add", "Deploys go through Helm.")
    assert again == {"id": added["id"], "event": "NONE"}
    assert run_json(daemon, "get", added["id"])["staleness"]["confirmations"] == 1
    m.add_many([{"content": "Deploys go through Helm.", "source": "cli"}])
    assert run_json(daemon, "get", added["id"])["staleness"]["confirmations"] == 1


def test_a_captured_turn_confirms_an_older_decision(daemon: Path, tmp_path: Path) -> None:
    now = time.time()
    m = Memory(daemon)
    pin = m.add_many([{"content": "We pin Django to 4.2.", "created_at": now - 150 * DAY}])
    pin_id = pin["results"][0]["id"]
    later = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now + 50 * DAY))
    before = {r["id"]: r for r in run_json(daemon, "lint", "--at", later)["results"]}
    assert before[pin_id]["level"] == "expired"
    transcript = write_transcript(tmp_path / "t.jsonl", [
        ("user", "Is Django still on the LTS?"),
        ("assistant", "Checked requirements.txt: Django is pinned to 4.2; nothing to change."),
    ], cwd=str(daemon))
    run_hook(daemon, "Stop", stop_payload(transcript, cwd=str(daemon)))
    # 50 days (and a minute) after the capture
    later = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 50 * DAY + 60))
    after = {r["id"]: r for r in run_json(daemon, "lint", "--at", later)["results"]}
    row = after[pin_id]
    assert row["confirmations"] == 1 and row["age_days"] == 50
    assert row["level"] == "aging"  # 50 days * 0.01 - 0.08: nobody called confirm


def test_the_confirm_memory_tool(daemon: Path) -> None:
    m = Memory(daemon)
    rid = m.add("We deploy with Helm.")["results"][0]["id"]
    tools = Toolbox(lambda: daemon, log=Log(None, None), autostart=False)
    try:
        done = tools.call("confirm_memory", {"id": rid})
        assert not done["isError"]
        assert done["structuredContent"]["id"] == rid
        assert done["structuredContent"]["event"] == "CONFIRM"
        listed = tools.call("search", {"query": "deploy Helm"})["structuredContent"]
        assert listed["results"][0]["staleness"] == "fresh"
        bad = tools.call("confirm_memory", {"id": "m-nope"})
        assert bad["isError"] and "not_found" in bad["content"][0]["text"]
    finally:
        tools.close()
    assert m.lint()["results"][0]["confirmations"] == 1
    assert connection.read_status(daemon) is not None
