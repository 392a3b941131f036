"""Lint for the project's own documents (``lintaid lint --docs``).

The workspace index already holds every Markdown and reStructuredText file the project keeps
(``.gitignore`` and the workspace exclusions honoured); the rules run over those pages on the
daemon's reader pool, beside what only the memory knows (which statements the policy holds as
superseded, and by what):

- ``pages``: a page as the rules see it (title, headings and their anchors, links, prose
  lines), parsed from the indexed chunks;
- ``config``: ``[tool.lintaid.lint]`` from the project's ``pyproject.toml``;
- ``rules``: the rules themselves, pure functions of the pages and the policy's facts;
- ``facts``: those facts, read through the stores' existing state queries;
- ``report``: findings as a table, JSON and SARIF 2.1.0, and the ``--fail-on`` verdict.

The package computes; it opens no database or index (an import-linter contract).
"""
