"""The live workspace: real files, real watchdog, real SQLite and Tantivy, no mocks."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from lintaid.logs import capture_logs
from lintaid.store.workspace import WorkspaceStore
from lintaid.workspace import watcher as watcher_module
from lintaid_client import paths
from tests.workspace_harness import age, running_workspace, wait_for, write


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    write(root / "docs" / "guide.md", "# Guide\n\nThe guide mentions applewood.\n")
    write(root / "src" / "app.py", "def main():\n    return 'birchbark'\n")
    write(root / "notes.txt", "cedarwood notes\n")
    paths.ensure_state_dir(root)
    age(root)
    return root


def test_initial_index_and_status(root: Path) -> None:
    with running_workspace(root) as run:
        status = run.ws.status()
        assert status["ready"] and status["files"] == 3 and status["chunks"] == 3
        assert status["watcher_mode"] == "inotify" and status["watcher_alive"]
        assert status["reindexed"]["added"] == 3
        hits, hidden = run.search("applewood")
        assert hidden == 0
        hit = hits[0]
        assert hit["id"] == "ws:docs/guide.md:1"
        assert (hit["store"], hit["path"], hit["start_line"], hit["end_line"]) == (
            "workspace", "docs/guide.md", 1, 3)
        assert hit["heading"] == "Guide" and "applewood" in hit["content"]
        assert hit["status"] == "current" and hit["superseded_by"] is None
        assert hit["source"] == "docs/guide.md" and hit["claims"] == [] and hit["score"] > 0
        assert hit["created_at"] == pytest.approx(os.stat(root / "docs/guide.md").st_mtime)


def test_edit_makes_new_content_searchable_and_old_gone(root: Path) -> None:
    with running_workspace(root) as run:
        write(root / "docs" / "guide.md", "# Guide\n\nThe guide now mentions dogwood.\n")
        run.wait_searchable("dogwood", "docs/guide.md")
        run.wait_gone("applewood", "docs/guide.md")
        assert run.ws.status()["chunks"] == 3


def test_delete_rename_and_move(root: Path) -> None:
    with running_workspace(root) as run:
        (root / "notes.txt").unlink()
        run.wait_gone("cedarwood", "notes.txt")
        os.rename(root / "src" / "app.py", root / "src" / "main.py")
        run.wait_searchable("birchbark", "src/main.py")
        assert run.paths("birchbark") == {"src/main.py"}
        shutil.move(root / "docs", root / "handbook")
        run.wait_searchable("applewood", "handbook/guide.md")
        assert run.paths("applewood") == {"handbook/guide.md"}
        assert run.ws.status()["files"] == 2


def test_file_deleted_before_it_is_read_is_not_an_error(root: Path) -> None:
    with running_workspace(root) as run:
        for i in range(20):
            path = write(root / f"flash{i}.txt", "elmwood flash\n")
            path.unlink()
        write(root / "stays.txt", "elmwood stays\n")
        run.wait_searchable("elmwood", "stays.txt")
        assert run.paths("elmwood") == {"stays.txt"}
        assert run.ws.status()["error"] is None and run.ws.watcher.alive


def test_restart_reindexes_exactly_what_changed_while_stopped(root: Path) -> None:
    for i in range(20):
        write(root / "pkg" / f"mod{i}.py", f"def f{i}():\n    return {i}\n")
    age(root)
    with running_workspace(root) as run:
        assert run.ws.status()["files"] == 23
    write(root / "pkg" / "mod1.py", "def f1():\n    return 'hazelnut'\n")
    write(root / "pkg" / "mod2.py", "def f2():\n    return 'hazelnut two'\n")
    write(root / "notes.txt", "cedarwood notes, hazelnut edition\n")
    write(root / "added.md", "# Added\n\nhazelnut added\n")
    (root / "pkg" / "mod3.py").unlink()
    os.utime(root / "pkg" / "mod4.py")  # touched, content unchanged: not re-indexed
    with capture_logs() as logs, running_workspace(root) as run:
        summary = run.ws.last_reconcile
        assert run.paths("hazelnut") == {"pkg/mod1.py", "pkg/mod2.py", "notes.txt", "added.md"}
    assert summary["changed"] == 3 and summary["added"] == 1 and summary["removed"] == 1
    assert summary["touched"] == 1
    assert summary["hashed"] == 5  # only the files whose size or mtime moved were read
    events = [e for e in logs if e["event"] == "workspace_reconciled"]
    assert len(events) == 1
    assert events[0]["changed_paths"] == ["notes.txt", "pkg/mod1.py", "pkg/mod2.py"]
    assert events[0]["added_paths"] == ["added.md"]
    assert events[0]["removed_paths"] == ["pkg/mod3.py"]


def test_reindex_returns_counts(root: Path) -> None:
    with running_workspace(root) as run:
        quick = run.ws.reindex().result(60)
        assert (quick["added"], quick["changed"], quick["removed"]) == (0, 0, 0)
        full = run.ws.reindex(full=True).result(60)
        assert full["full"] and full["hashed"] == 3
        assert run.paths("applewood") == {"docs/guide.md"}


def test_index_is_rebuilt_from_workspace_db(root: Path) -> None:
    with running_workspace(root):
        pass
    index = paths.index_dir(root, "workspace")
    shutil.rmtree(index)
    index.mkdir()
    (index / "meta.json").write_text("{corrupt")
    with running_workspace(root) as run:
        assert run.ws.store.index.rebuilt
        assert run.paths("applewood") == {"docs/guide.md"}
        assert run.ws.status()["reindexed"]["added"] == 0  # from workspace.db, not the files


def test_workspace_store_never_touches_memory_db(root: Path) -> None:
    memory_db = paths.memory_db_path(root)
    store = WorkspaceStore(root)
    store.close()
    assert not memory_db.exists()


def test_changed_since(root: Path) -> None:
    import hashlib

    def digest(rel: str) -> str:
        return hashlib.sha256((root / rel).read_bytes()).hexdigest()

    with running_workspace(root) as run:
        captured = {"docs/guide.md": digest("docs/guide.md"), "notes.txt": digest("notes.txt"),
                    "src/app.py": digest("src/app.py")}
        assert run.ws.changed_since(captured) == []
        write(root / "docs" / "guide.md", "# Guide\n\nedited\n")
        (root / "notes.txt").unlink()
        # Detected at once from the disk, before the watcher has even processed the events.
        assert run.ws.changed_since(captured) == ["docs/guide.md", "notes.txt"]
        wait_for(lambda: run.ws.status()["files"] == 2)
        assert run.ws.changed_since(captured) == ["docs/guide.md", "notes.txt"]
        absolute = {str(root / "src" / "app.py"): captured["src/app.py"]}
        assert run.ws.changed_since(absolute) == []


def test_forced_polling_mode(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LINTAID_WATCHER", "polling")
    monkeypatch.setattr(watcher_module, "POLL_INTERVAL_S", 0.1)  # poll often: a shorter test
    with running_workspace(root) as run:
        assert run.ws.status()["watcher_mode"] == "polling"
        write(root / "polled.md", "# Polled\n\nmaplewood\n")
        run.wait_searchable("maplewood", "polled.md")
        (root / "notes.txt").unlink()
        run.wait_gone("cedarwood", "notes.txt")


def test_dead_observer_is_restarted(root: Path) -> None:
    with running_workspace(root, supervise_every=0.1) as run:
        watcher = run.ws.watcher
        old = watcher._observer
        assert old is not None
        old.stop()
        old.join(5)
        wait_for(lambda: watcher.restarts >= 1 and watcher.alive, timeout=10)
        write(root / "after.md", "# After\n\nwalnutwood\n")
        run.wait_searchable("walnutwood", "after.md")


# The worker thread dies of an exception on purpose here; pytest reports that as a warning.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_dead_worker_is_restarted(root: Path) -> None:
    with running_workspace(root, supervise_every=0.1) as run:
        watcher = run.ws.watcher
        real = watcher.on_batch
        fired: list[bool] = []

        def dies_once(batch):  # noqa: ANN001 - fault injection: the worker thread ends
            if not fired:
                fired.append(True)
                raise SystemExit("worker killed for the test")
            real(batch)

        watcher.on_batch = dies_once
        write(root / "first.md", "# First\n\nlarchwood\n")
        wait_for(lambda: fired and watcher.restarts >= 1 and watcher.alive, timeout=10)
        # The restart reconciles, so the event the dead worker dropped is not lost either.
        run.wait_searchable("larchwood", "first.md")
        write(root / "second.md", "# Second\n\nlarchwood again\n")
        run.wait_searchable("larchwood", "second.md")
