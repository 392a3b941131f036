"""What only the memory knows, through the real stores: a document stating a value the
policy holds as superseded (by a later document or by a memory), and a decision record
replaced while it still reads accepted.

``MemoryStore`` and the workspace's ``WorkspaceStore`` on SQLite in ``tmp_path`` are driven
as the writer drives them (``apply_files`` with memory, ``derive_memory``); the lint reads
through the real ``Workspace`` and ``Reader`` (``Reader.lint_docs``), as the daemon does."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lintaid.capture.record import NewRecord
from lintaid.derivation import apply_files, derive_memory
from lintaid.doclint import catalog
from lintaid.search import Reader
from lintaid.store.memory import MemoryStore
from lintaid.workspace.service import Workspace, file_update
from lintaid_client import protocol

T0 = 1_780_000_000
ADR1 = "docs/adr/0001-artifacts.md"
ADR2 = "docs/adr/0002-artifacts.md"
ALPHA = "---\nstatus: accepted\n---\n# ADR 1: artifact storage\n\nArtifact bucket: s3://acme-alpha.\n"
BETA = ("---\nsupersedes: 0001-artifacts.md\nstatus: accepted\n---\n"
        "# ADR 2: artifact storage, moved\n\nArtifact bucket: s3://acme-beta.\n")


class Project:
    def __init__(self, root: Path) -> None:
        self.memory = MemoryStore(root)
        self.workspace = Workspace(root, submit=_no_writer)
        self.reader = Reader(memory=self.memory, workspace=self.workspace)

    def write(self, path: str, text: str, at: float) -> None:
        up = file_update(path, text.encode(), len(text), int(at * 1e9), read_at=at)
        with self.memory.transaction():
            apply_files(self.workspace.store, [up], [], self.memory)
            derive_memory(self.memory, self.workspace.store)
        self.memory.index_now()

    def remember(self, text: str, at: float, user: str | None = None) -> str:
        rec = NewRecord(content=text, kind="capture", source="claude-code://s1",
                        created_at=at, provider="claude-code", session_id="s1",
                        **({"user_id": user} if user else {}))
        with self.memory.transaction():
            rid, _ = self.memory.put(rec, "test")
            derive_memory(self.memory, self.workspace.store)
        self.memory.index_now()
        return str(rid)

    def lint(self, user: str | None = None) -> list[dict[str, Any]]:
        findings: list[dict[str, Any]] = self.reader.lint_docs(user)["findings"]
        return [f for f in findings if f["rule"] in (catalog.SUPERSEDED, catalog.ADR_STATUS)]

    def close(self) -> None:
        self.workspace.store.close()
        self.memory.close()


def _no_writer(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("the lint writes nothing")


@pytest.fixture
def p(tmp_path: Path) -> Iterator[Project]:
    project = Project(tmp_path)
    try:
        yield project
    finally:
        project.close()


def test_a_readme_stating_what_a_memory_replaced_names_the_memory(p: Project) -> None:
    p.write("README.md", "# Demo\n\nArtifact bucket: s3://acme-beta.\n", T0)
    assert p.lint() == []  # nothing replaced it yet
    rid = p.remember("The artifact bucket is now s3://acme-gamma.", T0 + 10)
    [found] = p.lint()
    assert (found["rule"], found["path"], found["line"], found["level"]) == (
        catalog.SUPERSEDED, "README.md", 3, catalog.ERROR)
    assert "'s3://acme-beta'" in found["message"]
    assert f"now 's3://acme-gamma' per memory {rid}, from claude-code, session s1" \
        in found["message"]
    assert found["fix"] == "Replace 's3://acme-beta' with 's3://acme-gamma'"
    by = found["data"]["replaced_by"]
    assert (by["store"], by["record_id"], by["method"]) == ("memory", rid, "correction_cue")
    # another user's memory is not this user's current decision
    assert p.lint(user="someone-else") == []


def test_a_readme_in_plain_prose_is_read_as_the_engine_reads_it(p: Project) -> None:
    # No "key: value" line: the page takes part all the same (the issue's own example).
    p.write("README.md", "# Demo\n\nUploads are stored on MinIO.\n", T0)
    assert p.lint() == []
    p.remember("Uploads are now stored on S3 instead of MinIO.", T0 + 10)
    [found] = p.lint()
    assert (found["rule"], found["path"], found["line"]) == (catalog.SUPERSEDED, "README.md", 3)
    assert "'minio'" in found["message"].lower() and "s3" in found["message"].lower()


def test_a_forgotten_memory_replaces_nothing(p: Project) -> None:
    p.write("README.md", "# Demo\n\nArtifact bucket: s3://acme-beta.\n", T0)
    rid = p.remember("The artifact bucket is now s3://acme-gamma.", T0 + 10)
    with p.memory.transaction():
        p.memory.forget(rid, "local", "wrong", "test")
        derive_memory(p.memory, p.workspace.store)
    assert p.lint() == []


def test_a_document_stating_what_a_later_document_replaced(p: Project) -> None:
    p.write("README.md", "# Demo\n\nThe gateway uses requests for outbound HTTP calls.\n", T0)
    p.write("docs/gateway.md", "# Gateway client\n\nThe gateway now uses httpx instead of "
            "requests.\n", T0 + 10)
    [found] = p.lint()
    assert (found["rule"], found["path"], found["line"]) == (catalog.SUPERSEDED, "README.md", 3)
    assert "now 'httpx' per docs/gateway.md:3" in found["message"], found["message"]
    assert found["related"][0]["path"] == "docs/gateway.md"
    assert found["fix"] == "Replace 'requests' with 'httpx'"


def test_a_replaced_decision_record_that_still_reads_accepted(p: Project) -> None:
    p.write(ADR1, ALPHA, T0)
    assert p.lint() == []
    p.write(ADR2, BETA, T0 + 10)
    [found] = p.lint()  # the record, not each of its statements
    assert (found["rule"], found["path"], found["line"]) == (catalog.ADR_STATUS, ADR1, 1)
    assert found["message"] == f"status reads 'accepted' but {ADR2} supersedes the whole record"
    p.write(ADR1, ALPHA.replace("accepted", "superseded by ADR 2"), T0 + 20)
    assert p.lint() == []


def test_a_decision_record_whose_decision_a_memory_replaced(p: Project) -> None:
    p.write(ADR2, BETA.replace("supersedes: 0001-artifacts.md\n", ""), T0)
    rid = p.remember("The artifact bucket is now s3://acme-gamma.", T0 + 10)
    [found] = p.lint()
    assert (found["rule"], found["path"]) == (catalog.ADR_STATUS, ADR2)
    assert f"was superseded by 's3://acme-gamma' per memory {rid}" in found["message"]


def test_without_a_workspace_the_lint_says_so(tmp_path: Path) -> None:
    memory = MemoryStore(tmp_path)
    try:
        with pytest.raises(protocol.Unavailable, match="workspace is not indexed"):
            Reader(memory=memory).lint_docs(None)
    finally:
        memory.close()
