"""Uninstall leaves no backup behind once what it restored is checked.

Two ways the last round's uninstall left ``*.lintaid.bak`` files: the README's flow (install,
then install again after lintaid moved, which backed up a file already holding lintaid's
entries), and a client that rewrites its own file after the install (Claude Code keeps
``~/.claude.json`` up to date), so the file cannot be given back byte for byte and was written
without lintaid's entries, the backup kept beside it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lintaid.integrations import registry
from lintaid.integrations.base import Commands

FIRST = Commands(("/opt/venv/bin/python", "-I", "-S", "/opt/venv/lib/lintaid_client/hook.py"),
                 ("/opt/venv/bin/python", "-I", "-m", "lintaid_client.mcp"))
MOVED = Commands(("/opt/venv/bin/python", "-I", "-S",
                  "/home/me/.local/share/lintaid/hooks/0123456789abcdef/lintaid-hook.py"),
                 ("/opt/venv/bin/python", "-I", "-m", "lintaid_client.mcp"))


def backups(*folders: Path) -> list[Path]:
    return sorted(p for folder in folders for p in folder.rglob("*.lintaid.bak"))


def test_install_twice_then_uninstall_leaves_no_backup(tmp_path: Path) -> None:
    client = registry.get("claude-code")
    client.install(tmp_path, "project", FIRST)
    assert backups(tmp_path) == []  # nothing was there to back up
    assert client.install(tmp_path, "project", MOVED).changes  # the registration moved
    assert backups(tmp_path) == []  # a file holding lintaid's entries is no original
    client.uninstall(tmp_path, "project", MOVED)
    assert backups(tmp_path) == []
    assert not (tmp_path / ".claude" / "settings.json").exists()
    assert not (tmp_path / ".mcp.json").exists()


def test_a_file_the_client_rewrote_is_written_without_ours_and_its_backup_goes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "claude-config"
    config.mkdir()
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    state = config / ".claude.json"
    state.write_text(json.dumps({"numStartups": 1, "theme": "dark"}, indent=2) + "\n")
    project = tmp_path / "project"
    project.mkdir()
    client = registry.get("claude-code")
    client.install(project, "user", FIRST)
    assert [p.name for p in backups(config)] == [".claude.json.lintaid.bak"]
    data = json.loads(state.read_text())
    data["numStartups"] = 2  # Claude Code writes its own file while lintaid is installed
    state.write_text(json.dumps(data, indent=2) + "\n")
    client.uninstall(project, "user", FIRST)
    assert json.loads(state.read_text()) == {"numStartups": 2, "theme": "dark"}
    assert backups(config) == []


def test_a_backup_stays_when_the_file_cannot_be_checked(tmp_path: Path) -> None:
    """When what uninstall wrote does not read back as meant (here: a reader that cannot
    parse it), the developer's backup is kept; once it reads back, it goes."""
    from lintaid.integrations.config_files import backup_path, finish_removal, json_plain

    path = tmp_path / "settings.json"
    path.write_text('{"a": 1}\n')
    backup_path(path).write_text('{"a": 0}\n')

    def unreadable(text: str) -> object:
        raise ValueError("cannot read it back")

    assert finish_removal(path, {"a": 1}, lambda: '{"a": 1}\n', unreadable) == "written"
    assert backup_path(path).exists()  # not checked: kept
    assert finish_removal(path, {"a": 1}, lambda: '{"a": 1}\n', json_plain) == "written"
    assert not backup_path(path).exists()  # checked: gone


@pytest.mark.parametrize("name,folder", [("claude-code", ".claude"), ("codex", ".codex"),
                                         ("gemini", ".gemini"), ("cursor", ".cursor")])
def test_uninstall_leaves_no_empty_folder_it_made(tmp_path: Path, name: str,
                                                  folder: str) -> None:
    client = registry.get(name)
    project = tmp_path / "project"
    project.mkdir()
    client.install(project, "project", MOVED)
    assert (project / folder).is_dir()
    client.uninstall(project, "project", MOVED)
    assert sorted(p.name for p in project.iterdir()) == []  # as it was before the install
    # a folder holding anything of the developer's stays, with it
    (project / folder).mkdir()
    (project / folder / "notes.txt").write_text("mine\n")
    client.install(project, "project", MOVED)
    client.uninstall(project, "project", MOVED)
    assert sorted(p.name for p in (project / folder).iterdir()) == ["notes.txt"]
    assert backups(project) == []
