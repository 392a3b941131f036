"""One document lint: the indexed pages parsed, the policy's facts gathered, the rules run,
the report built. Runs on the daemon's reader pool (``Reader.lint_docs``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Protocol

from . import config as settings
from . import facts as policy_facts
from . import report, rules
from .pages import Page, assemble, parse, syntax_of


class Documents(policy_facts.DocumentState, Protocol):
    """What the workspace offers the lint: its root, its indexed documents, whether a path
    is a project file."""

    root: Path

    def pages(self) -> list[dict[str, Any]]: ...

    def exists(self, rel: str) -> bool: ...


def parse_pages(rows: Iterable[dict[str, Any]],
                ignore_sections: tuple[str, ...] = ()) -> dict[str, Page]:
    """The Markdown and reStructuredText documents among the indexed rows (``path``,
    ``frontmatter``, ``mtime``, ``chunks`` as (start line, text))."""
    out = {}
    for row in rows:
        if syntax_of(row["path"]) is None:
            continue
        out[row["path"]] = parse(row["path"], assemble(row["chunks"]), row["frontmatter"],
                                 row["mtime"], ignore_sections)
    return out


def lint(documents: Documents, memory: policy_facts.MemoryState | None, user_id: str | None,
         limit: int | None = None, config: settings.LintConfig | None = None,
         exists: Callable[[str], bool] | None = None) -> dict[str, Any]:
    """The report over every indexed page (``settings.ConfigError`` for bad settings)."""
    config = config if config is not None else settings.load(documents.root)
    pages = parse_pages(documents.pages(), config.ignore_sections)
    targets = rules.linted(pages, config)
    facts = policy_facts.gather(documents, memory, user_id, [p.path for p in targets])
    findings = rules.run(pages, config, exists or documents.exists, facts)
    out = report.build(findings, len(pages), len(targets), limit, config.source)
    out["root"] = str(documents.root)
    return out
