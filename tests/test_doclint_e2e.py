"""``lintaid lint --docs`` as a user runs it: a daemon in this process watching a git work
tree, the click CLI over its socket; the table, ``--json``, ``--sarif``, ``--fail-on`` exit
codes, ``.gitignore`` honoured, ``[tool.lintaid.lint]`` read on every run."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

from tests.conftest import Served, wait_for
from tests.test_e2e_spine import git_init

PYPROJECT = '[project]\nname = "demo"\n\n[tool.lintaid.lint]\nrules = { "missing-xref" = false }\n'


def _commit(root: Path) -> None:
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@e.x",
                    "commit", "-q", "-m", "docs"], check=True)


def test_lint_docs_through_the_daemon(project: Path, serve: Callable[..., Served]) -> None:
    git_init(project)
    (project / "docs").mkdir()
    (project / "README.md").write_text(
        "# Demo\n\nStart with [the guide](docs/guide.md#install).\n\n"
        "The gateway uses requests for outbound HTTP calls.\n")
    (project / "docs" / "guide.md").write_text(
        "# Guide\n\n## Install\n\nSee [the API](api.md) and [usage](#usage).\n")
    (project / "docs" / "lonely.md").write_text("# Lonely\n\nNothing links here.\n")
    (project / "docs" / "private.md").write_text("# Private\n\n[gone](nowhere.md)\n")
    (project / ".gitignore").write_text("docs/private.md\n")
    (project / "pyproject.toml").write_text(PYPROJECT)
    _commit(project)
    served = serve(project, watch=True)
    wait_for(lambda: served.json("status")["workspace"]["ready"], timeout=60)

    data = served.json("lint", "--docs")
    found = {(f["rule"], f["path"], f["line"]) for f in data["findings"]}
    assert ("broken-link", "docs/guide.md", 5) in found  # api.md is not there
    assert ("broken-anchor", "docs/guide.md", 5) in found  # nor a "Usage" heading
    assert ("orphan-page", "docs/lonely.md", 1) in found
    assert not any(f["path"] == "docs/private.md" for f in data["findings"])  # .gitignore
    assert data["pages"] == 3 and data["root"] == str(project)
    assert all(f["fix"] for f in data["findings"])
    assert data["config"].endswith("pyproject.toml [tool.lintaid.lint]")

    table = served.cli("lint", "--docs")
    assert table.exit_code == 0, table.stderr
    assert table.stdout.splitlines()[0].split() == ["LOCATION", "LEVEL", "RULE", "MESSAGE"]
    assert "docs/guide.md:5" in table.stdout
    assert table.stdout.strip().splitlines()[-1].startswith("Checked 3 pages: 2 errors, 1 ")

    sarif = json.loads(served.cli("lint", "--docs", "--sarif").stdout)
    assert sarif["version"] == "2.1.0"
    assert {(r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"])
            for r in sarif["runs"][0]["results"]} == {(f[0], f[2]) for f in found}

    assert served.cli("lint", "--docs", "--fail-on", "error").exit_code == 1
    # A later document retires the README's statement: the README now contradicts it.
    (project / "docs" / "gateway.md").write_text(
        "# Gateway client\n\nThe gateway now uses httpx instead of requests. "
        "See the [guide](guide.md).\n")
    wait_for(lambda: any(f["rule"] == "superseded-statement"
                         for f in served.json("lint", "--docs")["findings"]), timeout=30)
    stated = next(f for f in served.json("lint", "--docs")["findings"]
                  if f["rule"] == "superseded-statement")
    assert (stated["path"], stated["line"]) == ("README.md", 5)
    assert "now 'httpx' per docs/gateway.md:3" in stated["message"]

    # The settings are read on every run: turn the errors' rules off and CI passes.
    (project / "pyproject.toml").write_text(
        PYPROJECT.replace('"missing-xref" = false', '"missing-xref" = false, "broken-link" = '
                          'false, "broken-anchor" = false, "superseded-statement" = false'))
    assert served.cli("lint", "--docs", "--fail-on", "error").exit_code == 0
    assert served.cli("lint", "--docs", "--fail-on", "warning").exit_code == 1  # the orphans

    (project / "pyproject.toml").write_text(PYPROJECT.replace("false", '"no"'))
    bad = served.cli("lint", "--docs")
    assert bad.exit_code == 1 and "rules.missing-xref: must be true or false" in bad.stderr


def test_lint_docs_refuses_what_applies_to_memories(project: Path) -> None:
    from tests.conftest import invoke
    for args, says in [(("--docs", "--fail-on", "stale"), "applies to memories"),
                       (("--docs", "--only-flagged"), "apply to memories"),
                       (("--docs", "--json", "--sarif"), "not both"),
                       (("--sarif",), "--sarif applies to --docs"),
                       (("--fail-on", "error"), "applies to --docs")]:
        result = invoke(project, "lint", *args)
        assert result.exit_code == 1 and says in result.stderr, (args, result.stderr)


def test_lint_docs_without_the_watcher_says_why(served: Served) -> None:
    result = served.cli("lint", "--docs")
    assert result.exit_code == 1 and "workspace is not indexed" in result.stderr
