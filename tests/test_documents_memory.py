"""Decision documents inform memory: their claims take part in memory's chains, read-only.

First through the real stores (``MemoryStore`` and ``WorkspaceStore`` on SQLite in ``tmp_path``)
driven as the writer drives them (``apply_files`` with memory, ``derive_memory`` against the
documents, ``link_documents``), read back through ``Reader`` and the injected text; then end to
end, a daemon in this process watching a git work tree.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from lintaid.capture.record import NewRecord
from lintaid.derivation import apply_files, derive_memory, link_documents
from lintaid.integrations import injection
from lintaid.search import Reader, SearchRequest
from lintaid.store.memory import MemoryStore
from lintaid.store.workspace import WorkspaceStore
from lintaid.workspace.service import file_update
from tests.conftest import Served, wait_for
from tests.test_e2e_spine import git_init

T0 = 1_780_000_000
ADR1 = "docs/adr/0001-artifacts.md"
ADR2 = "docs/adr/0002-artifacts.md"
ALPHA = "# ADR 1: artifact storage\n\nArtifact bucket: s3://acme-alpha.\n"
BETA = ("---\nsupersedes: 0001-artifacts.md\n---\n# ADR 2: artifact storage, moved\n\n"
        "Artifact bucket: s3://acme-beta.\n")
# A capture with more to say than the bucket: it stays visible, its bucket sentence marked.
TURN = ("Request: Set up the release upload.\nResult: Artifact bucket: s3://acme-alpha. The "
        "upload step signs every artifact with the release key before it leaves CI.")


class Stores:
    """memory.db and workspace.db as the daemon's writer drives them."""

    def __init__(self, root: Path) -> None:
        self.memory = MemoryStore(root)
        self.workspace = WorkspaceStore(root, derived_version="test")
        self.documents: WorkspaceStore | None = self.workspace
        self.reader = Reader(memory=self.memory)

    def put(self, text: str, at: float) -> str:
        rec = NewRecord(content=text, kind="capture", source=f"test/{at}", created_at=at)
        with self.memory.transaction():
            rid, _event = self.memory.put(rec, "test")
            derive_memory(self.memory, self.documents)
        self.memory.index_now()
        return str(rid)

    def write(self, path: str, text: str, at: float) -> None:
        self.files([file_update(path, text.encode(), len(text), int(at * 1e9), read_at=at)], [])

    def delete(self, path: str) -> None:
        self.files([], [path])

    def files(self, updates: list[Any], removed: list[str]) -> None:
        with self.memory.transaction():
            apply_files(self.workspace, updates, removed, self.memory)
            derive_memory(self.memory, self.documents)
        self.memory.index_now()

    def link(self, documents: WorkspaceStore | None) -> int:
        self.documents = documents
        with self.memory.transaction():
            chains = link_documents(self.memory, documents)
        self.memory.index_now()
        return chains

    def state(self, rid: str) -> tuple[str, str | None, list[tuple[str, str | None, str | None]]]:
        hit = self.reader.get(rid, None)
        return hit.status, hit.superseded_by, [
            (c.status, c.superseded_by, c.replaced_by_value) for c in hit.claims]

    def file_state(self, path: str) -> tuple[str, set[str]]:
        """The file's status and the statuses its claims have (a heading states things too:
        "ADR 2: artifact storage" is a claim of its own)."""
        conn = self.workspace.derived.conn
        claims = {r[0] for r in conn.execute(
            "SELECT COALESCE(s.status, 'current') FROM claims c LEFT JOIN claim_state s"
            " USING (claim_id) WHERE c.record_id = ? ORDER BY c.n", (path,))}
        return self.workspace.file_state(path)["status"], claims

    def close(self) -> None:
        self.workspace.close()
        self.memory.close()


@pytest.fixture
def s(tmp_path: Path) -> Iterator[Stores]:
    stores = Stores(tmp_path)
    try:
        yield stores
    finally:
        stores.close()


def test_a_newer_decision_document_retires_an_older_capture(s: Stores) -> None:
    s.write(ADR1, ALPHA, T0)
    turn = s.put(TURN, T0 + 10)
    assert s.state(turn) == ("current", None, [("current", None, None)])  # it confirms ADR 1
    s.write(ADR2, BETA, T0 + 20)
    assert s.state(turn) == ("partly_superseded", ADR2, [("superseded", ADR2, "s3://acme-beta")])
    hits = s.reader.search(SearchRequest(query="artifact bucket", passages=True)).results
    text = injection.render(hits, where=injection.Where(None, None, None))
    assert text is not None
    assert "Superseded here: artifact bucket (now: s3://acme-beta, per " + ADR2 + ")" in text
    assert "acme-alpha" not in text
    # Memory never writes a document's state: ADR 2 is current, ADR 1 retired by ADR 2 alone.
    assert s.file_state(ADR2) == ("current", {"current"})
    assert s.workspace.file_state(ADR1)["superseded_by"] == ADR2


def test_a_capture_that_says_only_the_retired_value_is_hidden(s: Stores) -> None:
    bare = s.put("Artifact bucket: s3://acme-alpha.", T0)
    s.write(ADR2, BETA.replace("supersedes: 0001-artifacts.md", "status: accepted"), T0 + 20)
    assert s.state(bare)[:2] == ("superseded", ADR2)
    assert s.reader.search(SearchRequest(query="artifact bucket")).hidden == 1


def test_a_newer_capture_without_a_cue_conflicts_with_a_document(s: Stores) -> None:
    s.write(ADR2, BETA, T0)
    newer = s.put("Artifact bucket: s3://acme-gamma.", T0 + 10)
    assert s.state(newer) == ("conflicted", None, [("conflicted", None, None)])
    assert s.file_state(ADR2) == ("current", {"current"})  # only memory's side is marked


def test_a_newer_capture_with_a_cue_is_current(s: Stores) -> None:
    s.write(ADR2, BETA, T0)
    newer = s.put("The artifact bucket is now s3://acme-gamma.", T0 + 10)
    assert s.state(newer) == ("current", None, [("current", None, None)])
    assert s.file_state(ADR2) == ("current", {"current"})


def test_a_document_another_file_supersedes_takes_no_part(s: Stores) -> None:
    turn = s.put(TURN.replace("alpha", "beta"), T0)
    s.write(ADR1, ALPHA, T0 + 10)  # newer: it retires the capture ...
    assert s.state(turn)[:2] == ("partly_superseded", ADR1)
    s.write(ADR2, BETA, T0 + 20)  # ... until ADR 2 retires ADR 1 (and agrees with the capture)
    assert s.state(turn) == ("current", None, [("current", None, None)])
    s.delete(ADR2)  # ADR 1 stands again
    assert s.state(turn)[:2] == ("partly_superseded", ADR1)


def test_an_actors_sentence_is_retired_by_a_document_naming_its_value(s: Stores) -> None:
    actor = s.put("The gateway uses requests for outbound HTTP calls.", T0)
    s.write("docs/gateway.md", "# Gateway client\n\nThe gateway now uses httpx instead of "
            "requests.\n", T0 + 10)
    assert s.state(actor) == ("superseded", "docs/gateway.md", [
        ("superseded", "docs/gateway.md", "httpx")])


def test_linking_and_unlinking_the_documents_derives_memory_again(s: Stores) -> None:
    s.link(None)  # memory derived without documents: the capture stands alone
    s.write(ADR2, BETA, T0 + 20)
    turn = s.put(TURN, T0 + 10)
    assert s.state(turn)[0] == "current"
    s.link(s.workspace)
    assert s.state(turn)[:2] == ("partly_superseded", ADR2)
    s.link(None)
    assert s.state(turn) == ("current", None, [("current", None, None)])
    reaching = s.memory.derived.records_reaching("records", "id")
    assert reaching == set()  # no relation to a document is left behind


# ---------------------------------------------------------------------------------------------
# End to end: a daemon in this process, its watcher on a git work tree


def _commit(root: Path, message: str) -> None:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com", "HOME": str(root)}
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True, env=env)
    subprocess.run(["git", "-C", str(root), "commit", "-q", "-m", message], check=True, env=env)


def _status(served: Served, rid: str) -> tuple[str, str | None]:
    hit = served.json("get", rid)
    return hit["status"], hit.get("superseded_by")


def test_a_daemon_retires_a_capture_when_a_decision_document_changes(
        project: Path, serve: Callable[..., Served]) -> None:
    git_init(project)
    (project / "docs" / "adr").mkdir(parents=True)
    (project / ADR1).write_text(ALPHA)
    _commit(project, "ADR 1")
    served = serve(project, watch=True)
    wait_for(lambda: served.json("status")["workspace"]["ready"], timeout=60)
    with served.memory() as mem:
        turn = mem.add(TURN)["results"][0]["id"]
    assert _status(served, turn) == ("current", None)

    (project / ADR2).write_text(BETA)
    _commit(project, "ADR 2")
    wait_for(lambda: _status(served, turn) == ("partly_superseded", ADR2), timeout=30)
    claim = served.json("get", turn)["claims"][0]
    assert (claim["status"], claim["replaced_by_value"]) == ("superseded", "s3://acme-beta")
    shown = served.cli("get", turn).stdout
    assert f"claim [superseded] artifact bucket value s3://acme-alpha (now s3://acme-beta, per " \
        f"{ADR2})" in shown

    # Started without its watcher, the daemon reads no documents: the capture stands alone.
    served.stop()
    alone = serve(project, watch=False)
    assert _status(alone, turn) == ("current", None)
    alone.stop()
    watching = serve(project, watch=True)
    wait_for(lambda: _status(watching, turn) == ("partly_superseded", ADR2), timeout=60)


def test_linking_again_with_nothing_changed_derives_nothing(s: Stores) -> None:
    s.write(ADR2, BETA, T0 + 20)
    turn = s.put(TURN, T0 + 10)
    assert s.link(s.workspace) > 0  # the keys the documents' claims hold: related again
    assert s.link(s.workspace) == 0  # a restart: memory is in step with the documents
    s.write(ADR2, BETA.replace("beta", "delta"), T0 + 30)  # followed as it happens
    assert s.state(turn)[:2] == ("partly_superseded", ADR2)
    assert s.link(s.workspace) == 0
    s.documents = None  # memory written without the documents (a daemon stopping) ...
    s.put("The gateway uses requests.", T0 + 40)
    assert s.link(s.workspace) > 0  # ... is derived against them again at the next start
