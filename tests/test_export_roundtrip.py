"""Every export lintaid writes round-trips, and the linters read each other's files.

A project holds a captured turn (its transcript's path in the metadata, a file inside the
project and one outside it among the affected paths), a prompt, notes and a confirmation.
Exported in each format (lintaid's JSON Lines, mem0's, memlint's), the files leave out the
prompt and every local path unless asked for; re-imported into the store they came from, or
one after another into a new store, they add nothing already there (search shows each memory
once); ``lintaid lint`` reads each of them; ``lint --json --names memlint`` is memlint's own
report shape (checked with memlint's models), and the real memlint (from PyPI) reads
lintaid's memlint export.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lintaid_client import paths
from tests.conftest import Served
from tests.transcripts import stop_payload, tool_result, tool_use, write_transcript

FORMATS = ("jsonl", "mem0", "memlint")
PROMPT = "please check how the release job signs artifacts"


def make_project(tmp_path: Path, name: str) -> Path:
    root = tmp_path / name
    root.mkdir()
    paths.ensure_state_dir(root)
    return root


@pytest.fixture
def source(tmp_path: Path, serve: Callable[..., Served]) -> Served:
    served = serve(make_project(tmp_path, "source"))
    root = served.root
    transcript = write_transcript(tmp_path / "t.jsonl", [
        ("user", "Sign release artifacts in CI."),
        ("assistant", [tool_use("Edit", {"file_path": str(root / "ci" / "release.yml")}),
                       tool_use("Read", {"file_path": "/etc/ssl/openssl.cnf"})]),
        ("user", [tool_result("ok")]),
        ("assistant", "The release job signs every artifact with cosign before upload."),
    ], session_id="s-export", cwd=str(root))
    served.hook("Stop", stop_payload(transcript, session_id="s-export", cwd=str(root)))
    served.hook("UserPromptSubmit", {"session_id": "s-export", "prompt": PROMPT})
    note = served.call("add", {"content": "Gateway timeout retry attempts: 2."})["id"]
    served.call("add", {"content": "We pin Django to 4.2 for the admin service."})
    served.call("confirm", {"id": note})
    return served


def export(served: Served, fmt: str, folder: Path, *extra: str) -> Path:
    path = folder / f"export-{fmt}{'-all' if extra else ''}.json"
    out = served.cli("export", "--format", fmt, "--output", str(path), *extra)
    assert out.exit_code == 0, out.stderr
    return path


def records(path: Path, fmt: str) -> list[dict[str, Any]]:
    """The memories in an export: (id, text, and the rest as the format holds it)."""
    text = path.read_text()
    if fmt == "jsonl":
        return [r for r in map(json.loads, text.splitlines()) if r["type"] == "record"]
    data = json.loads(text)
    return list(data["results"] if fmt == "mem0" else data)


def imported(served: Served, path: Path) -> dict[str, dict[str, int]]:
    out = served.cli("import", str(path), "--json")
    assert out.exit_code == 0, out.stderr
    counts: dict[str, dict[str, int]] = json.loads(out.stdout)["counts"]
    return counts


def test_exports_leave_out_prompts_and_local_paths_unless_asked(source: Served,
                                                                tmp_path: Path) -> None:
    root = str(source.root)
    for fmt in FORMATS:
        path = export(source, fmt, tmp_path)
        text = path.read_text()
        assert PROMPT not in text, fmt
        assert root not in text and "openssl.cnf" not in text and "t.jsonl" not in text, fmt
        turn = next(r for r in records(path, fmt) if "cosign" in str(r))
        body = turn.get("content") or turn.get("memory")
        assert "Affected paths: ci/release.yml" in body, body
        everything = export(source, fmt, tmp_path, "--include-prompts", "--include-paths")
        text = everything.read_text()
        assert PROMPT in text and root in text and "openssl.cnf" in text, fmt
        assert str(tmp_path / "t.jsonl") in text, fmt  # the transcript's path, as stored


@pytest.mark.parametrize("fmt", FORMATS)
def test_reimporting_an_export_into_its_own_store_adds_nothing(source: Served,
                                                               tmp_path: Path, fmt: str) -> None:
    before = source.call("status")["memory"]
    path = export(source, fmt, tmp_path)
    counts = imported(source, path)
    assert counts["record"] == {"NONE": len(records(path, fmt))}, counts
    assert "ADD" not in json.dumps(counts)
    assert source.call("status")["memory"]["records"] == before["records"]
    hits = source.call("search", {"query": "release artifacts cosign"})["results"]
    assert len([h for h in hits if "cosign" in h["content"]]) == 1


def test_the_three_exports_into_a_new_store_add_each_memory_once(
        source: Served, tmp_path: Path, serve: Callable[..., Served]) -> None:
    files = {fmt: export(source, fmt, tmp_path) for fmt in FORMATS}
    target = serve(make_project(tmp_path, "target"))
    first = imported(target, files["mem0"])
    count = len(records(files["mem0"], "mem0"))
    assert first["record"] == {"ADD": count}
    for fmt in ("jsonl", "memlint"):
        counts = imported(target, files[fmt])
        assert counts["record"] == {"NONE": count}, (fmt, counts)
    # the ids and provenance came along: the copy exports as the original did
    mine = {r["id"]: r for r in records(files["jsonl"], "jsonl")}
    theirs = {r["id"]: r for r in records(export(target, "jsonl", tmp_path / ".."), "jsonl")}
    assert theirs.keys() == mine.keys()
    for rid, row in mine.items():
        for key in ("content", "kind", "source", "session_id", "turn_id", "created_at"):
            assert theirs[rid][key] == row[key], (rid, key)
    hits = target.call("search", {"query": "release artifacts cosign"})["results"]
    assert len([h for h in hits if "cosign" in h["content"]]) == 1


def test_lint_reads_every_export_lintaid_writes(source: Served, tmp_path: Path) -> None:
    expected = {r["id"] for r in records(export(source, "jsonl", tmp_path), "jsonl")}
    for fmt in FORMATS:
        path = export(source, fmt, tmp_path)
        out = source.cli("lint", str(path), "--json")
        assert out.exit_code == 0, (fmt, out.stderr)
        report = json.loads(out.stdout)
        assert {r["id"] for r in report["results"]} == expected, fmt
        confirmed = [r for r in report["results"] if "retry attempts" in r["content"]]
        assert confirmed[0]["confirmations"] >= 1, fmt  # the confirmation came along
    # enrich writes lintaid's JSON Lines back as JSON Lines, the records scored
    path = export(source, "jsonl", tmp_path)
    out_path = tmp_path / "enriched.jsonl"
    assert source.cli("lint", str(path), "--enrich", str(out_path)).exit_code == 0
    lines = [json.loads(line) for line in out_path.read_text().splitlines()]
    assert lines[0]["type"] == "header"
    assert all("memlint_level" in r for r in lines if r["type"] == "record")


def test_lint_speaks_memlints_names_and_memlint_reads_lintaids_export(
        source: Served, tmp_path: Path) -> None:
    memlint_models = pytest.importorskip("memlint.models")
    path = export(source, "memlint", tmp_path)
    out = source.cli("lint", str(path), "--json", "--names", "memlint")
    assert out.exit_code == 0, out.stderr
    report = memlint_models.DetectionReport.model_validate_json(out.stdout)
    ids = {e["id"] for e in records(path, "memlint")}
    assert {r.fact_id for r in report.results} == ids
    assert report.total_facts == len(ids)
    assert all(r.recommendation in ("use", "verify", "flag", "discard") for r in report.results)
    refused = source.cli("lint", str(path), "--names", "memlint")
    assert refused.exit_code != 0 and "--names applies to --json" in refused.stderr

    memlint = shutil.which("memlint", path=str(Path(sys.executable).parent))
    assert memlint is not None, "memlint (a test dependency) is not installed"
    proc = subprocess.run([memlint, "check", str(path), "--json"], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    theirs = json.loads(proc.stdout)
    assert theirs["total_facts"] == len(ids)
    assert {r["fact_id"] for r in theirs["results"]} == ids
    # and lintaid's lint reads memlint's report shape's input too: the same file, the same ids
    ours = json.loads(out.stdout)
    assert set(ours) == set(theirs) and set(ours["results"][0]) >= set(theirs["results"][0])
