"""``lintaid lint --docs``: each rule over fixtures that trip it and fixtures that do not.

Pages are chunked exactly as the workspace index chunks them (``file_update``), then parsed
and linted by the same code the daemon runs (``doclint.check.parse_pages``,
``doclint.rules.run``); the policy's facts are handed in here (the stores' side is in
``test_doclint_policy``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lintaid.doclint import catalog, config, rules
from lintaid.doclint.check import parse_pages
from lintaid.doclint.rules import Facts, Finding, Replacement, Retired
from lintaid.workspace.service import file_update


def rows(files: dict[str, str]) -> list[dict[str, Any]]:
    out = []
    for path, text in files.items():
        up = file_update(path, text.encode(), len(text), 0, 0.0)
        out.append({"path": path, "frontmatter": up.frontmatter, "mtime": 0.0,
                    "chunks": [(c.start_line, c.text) for c in up.chunks]})
    return out


def lint(files: dict[str, str], settings: config.LintConfig | None = None,
         facts: Facts | None = None, extra: tuple[str, ...] = ()) -> list[Finding]:
    settings = settings or config.LintConfig()
    pages = parse_pages(rows(files), settings.ignore_sections)
    known = set(files) | set(extra)

    def exists(rel: str) -> bool:
        return rel in known or any(k.startswith(rel.rstrip("/") + "/") for k in known)

    return rules.run(pages, settings, exists, facts)


def of(found: list[Finding], rule: str) -> list[tuple[str, int]]:
    return [(f.path, f.line) for f in found if f.rule == rule]


def only(*rule_ids: str) -> config.LintConfig:
    return config.LintConfig(enabled=frozenset(rule_ids))


# -- broken links and anchors ----------------------------------------------------------------
DOCS = {
    "README.md": "# Demo\n\nSee [setup](docs/setup.md) and [usage](docs/usage.md#running-it).\n",
    "docs/setup.md": "# Setup\n\n## Install\n\nText.\n\n## Install\n\nAgain.\n\n"
                     "Back to [the top](#setup), [second](#install-1), [logo](img/logo.png),\n"
                     "[site](https://example.com/x.md), [mail](mailto:a@b.c), "
                     "[code](../lintaid/cli.py#L10).\n",
    "docs/usage.md": "# Usage\n\n## Running it\n\n<a id=\"custom\"></a>\nSee [custom](#custom) "
                     "and [setup](setup.md#install) and [dir](../docs/) and [s](setup).\n"
                     "```\n[not a link](nowhere.md)\n```\nAnd `[code](nowhere.md)` too.\n",
}


def test_links_that_resolve_are_not_reported() -> None:
    found = lint(DOCS, only(catalog.BROKEN_LINK, catalog.BROKEN_ANCHOR),
                 extra=("docs/img/logo.png", "lintaid/cli.py"))
    assert found == []


def test_a_missing_file_a_missing_anchor_and_a_link_out_of_the_root_are_reported() -> None:
    files = {**DOCS, "docs/bad.md": "# Bad\n\n[gone](gone.md) and [anchor](setup.md#instal)\n"
                                    "and [out](../../etc/passwd) and [self](#nope).\n"
                                    "[ref]: ./missing/file.md\n"}
    found = lint(files, only(catalog.BROKEN_LINK, catalog.BROKEN_ANCHOR),
                 extra=("docs/img/logo.png", "lintaid/cli.py"))
    assert of(found, catalog.BROKEN_LINK) == [("docs/bad.md", 3), ("docs/bad.md", 4),
                                              ("docs/bad.md", 5)]
    assert of(found, catalog.BROKEN_ANCHOR) == [("docs/bad.md", 3), ("docs/bad.md", 4)]
    anchor = next(f for f in found if "#instal" in f.message)
    assert anchor.level == catalog.ERROR and anchor.fix == "Use #install"
    assert all(f.fix for f in found)


def test_restructuredtext_roles_labels_and_toctrees() -> None:
    files = {
        "docs/index.rst": "Docs\n====\n\n.. toctree::\n\n   guide\n   missing\n\n"
                          "See :doc:`guide` and :ref:`the label <intro-label>` and "
                          ":ref:`nolabel`.\n",
        "docs/guide.rst": ".. _intro-label:\n\nGuide\n=====\n\nRead `index <index.rst>`_ "
                          "and `gone <gone.rst>`_.\n\n.. image:: pic.png\n\n::\n\n"
                          "   `literal <nowhere.rst>`_\n",
    }
    found = lint(files, only(catalog.BROKEN_LINK, catalog.BROKEN_ANCHOR))
    assert of(found, catalog.BROKEN_LINK) == [("docs/guide.rst", 6), ("docs/guide.rst", 8),
                                              ("docs/index.rst", 7)]
    assert of(found, catalog.BROKEN_ANCHOR) == [("docs/index.rst", 9)]


# -- orphans ---------------------------------------------------------------------------------
def test_a_page_nothing_links_to_is_an_orphan_but_readme_and_index_are_not() -> None:
    files = {"README.md": "# Demo\n\n[a](docs/a.md)\n", "docs/a.md": "# A\n\n[[b]]\n",
             "docs/b.md": "# B\n", "docs/lonely.md": "# Lonely\n\nNo one links here.\n",
             "docs/index.md": "# Index\n", "guide/README.md": "# Guide\n"}
    found = lint(files, only(catalog.ORPHAN))
    assert of(found, catalog.ORPHAN) == [("docs/lonely.md", 1)]
    assert found[0].level == catalog.WARNING and "docs/index.md" in found[0].fix
    allowed = config.from_mapping({"allow": {"orphans": ["docs/lon*"]},
                                   "rules": {"broken-link": False}})
    assert of(lint(files, allowed), catalog.ORPHAN) == []


# -- missing cross-references ----------------------------------------------------------------
XREF = {
    "README.md": "# Demo\n\nThe [retry policy](docs/retry.md) explains retries.\n",
    "docs/retry.md": "# Retry Policy\n\nHow retries work.\n",
    "docs/ops.md": "# Operations\n\nWhen a call fails, the retry policy decides.\n\n"
                   "The Retry Policy again: reported once.\n",
    "docs/code.md": "# Code\n\n```\nretry policy in code\n```\nAnd `retry policy` inline.\n",
    "docs/single.md": "# Operations guide\n\nOperations are mentioned (one word titles are "
                      "no cue).\n",
}


def test_a_page_naming_another_pages_title_without_a_link_is_reported_once() -> None:
    found = lint(XREF, only(catalog.MISSING_XREF))
    assert of(found, catalog.MISSING_XREF) == [("docs/ops.md", 3)]
    assert found[0].level == catalog.NOTE
    assert found[0].fix == "Link the first mention: [Retry Policy](retry.md)"


def test_cross_reference_titles_can_be_allowed_and_the_word_count_raised() -> None:
    found = lint(XREF, config.from_mapping({"allow": {"xref": ["Retry Policy"]}}))
    assert of(found, catalog.MISSING_XREF) == []
    found = lint(XREF, config.from_mapping({"min_title_words": 3}))
    assert of(found, catalog.MISSING_XREF) == []


# -- terminology -----------------------------------------------------------------------------
def test_one_concept_spelled_several_ways_is_reported_at_the_rarer_spellings() -> None:
    files = {
        "docs/a.md": "# A\n\nEach work_item has an owner. A work_item is closed by its owner.\n"
                     "Close the work_item first.\n",
        "docs/b.md": "# B\n\nA work item can be reopened. So can a workitem.\n",
    }
    found = lint(files, only(catalog.TERMINOLOGY))
    assert [(f.path, f.line, f.message.split("'")[1]) for f in found] == [
        ("docs/b.md", 3, "work item"), ("docs/b.md", 3, "workitem")]
    assert found[0].fix.startswith("Write 'work_item'")
    assert found[0].data["spellings"] == {"work_item": 3, "work item": 1, "workitem": 1}


@pytest.mark.parametrize("text", [
    "A work_item here, a work_item there.",  # one spelling
    "A well-known fix; it is well known.",  # hyphenation is English, not terminology
    "OpenClaw runs `openclaw`; openclaw is its command.",  # case is no spelling
    "The `work_item` field; each work item has one.",  # code is spelled as code spells it
    "See docs/work_item.md or https://x.org/work-item and --work-item.",  # paths, options
])
def test_what_is_not_terminology_drift(text: str) -> None:
    assert lint({"docs/a.md": f"# A\n\n{text}\n"}, only(catalog.TERMINOLOGY)) == []


def test_allowed_terms_and_ignored_sections_are_left_alone() -> None:
    files = {"docs/a.md": "# A\n\nA work_item and a work item.\n\n## Changelog\n\n"
                          "- renamed workitem to work_item\n"}
    assert len(lint(files, only(catalog.TERMINOLOGY))) == 2
    allowed = config.from_mapping({"allow": {"terms": ["work item"]}})
    assert of(lint(files, allowed), catalog.TERMINOLOGY) == []
    ignored = config.from_mapping({"ignore_sections": ["change*"]})
    assert [f.message.split("'")[1] for f in lint(files, ignored)
            if f.rule == catalog.TERMINOLOGY] == ["work item"]


def test_comment_markers_turn_the_lint_off_for_a_stretch() -> None:
    files = {"docs/a.md": "# A\n\n<!-- lintaid-lint: off -->\n[x](gone.md)\n"
                          "<!-- lintaid-lint: on -->\n[y](gone2.md)\n"}
    assert of(lint(files, only(catalog.BROKEN_LINK)), catalog.BROKEN_LINK) == [("docs/a.md", 6)]


# -- statements the policy holds superseded, and decision records ---------------------------
def _memory(value: str, evidence: str) -> Replacement:
    return Replacement(value=value, evidence=evidence, store="memory", record_id="m1",
                       created_at=1_780_000_000.0, source="claude-code://s1", session_id="s1",
                       client="claude-code", method="correction_cue", confidence=0.95)


def test_a_statement_the_policy_retired_is_reported_with_what_replaced_it() -> None:
    files = {"README.md": "# Demo\n\nUploads are stored on MinIO.\n",
             "docs/other.md": "# Other\n\nNothing retired here.\n"}
    facts = Facts(retired=[Retired("README.md", 3, "uploads stored on", "minio",
                                   "Uploads are stored on MinIO",
                                   _memory("s3", "Uploads are now stored on S3"))])
    found = lint(files, only(catalog.SUPERSEDED), facts)
    assert of(found, catalog.SUPERSEDED) == [("README.md", 3)]
    f = found[0]
    assert f.level == catalog.ERROR
    assert "now 's3' per memory m1, from claude-code, session s1, 2026-05-28" in f.message
    assert f.fix == "Replace 'minio' with 's3'"
    assert f.data["replaced_by"]["record_id"] == "m1"
    assert lint(files, only(catalog.SUPERSEDED)) == []  # nothing retired: nothing to say


def test_a_weak_supersession_says_likely_and_history_is_not_a_contradiction() -> None:
    weak = Replacement(value="s3", evidence="uploads: s3", store="workspace",
                       path="docs/storage.md", line=4, confidence=0.75)
    files = {"README.md": "# Demo\n\nUploads: minio.\n\n## History\n\nUploads: minio.\n",
             "docs/old.md": "# Old\n\nUploads: minio.\n",
             "docs/storage.md": "---\nsupersedes: old.md\n---\n# Storage\n\nUploads: s3.\n"}
    facts = Facts(retired=[Retired("README.md", 3, "uploads", "minio", "Uploads: minio", weak),
                           Retired("README.md", 7, "uploads", "minio", "Uploads: minio", weak),
                           Retired("docs/old.md", 3, "uploads", "minio", "Uploads: minio", weak)],
                  superseded_files={"docs/old.md": weak})
    found = lint(files, config.from_mapping({"ignore_sections": ["History"],
                                             "rules": {"orphan-page": False}}), facts)
    assert of(found, catalog.SUPERSEDED) == [("README.md", 3)]  # not the retired file
    assert "was likely superseded: now 's3' per docs/storage.md:4" in found[0].message
    assert found[0].related == [{"message": "now: uploads: s3 (docs/storage.md:4)",
                                 "path": "docs/storage.md", "line": 4}]


ADR1 = "docs/adr/0001-storage.md"
ADR2 = "docs/adr/0002-storage.md"


def test_a_decision_record_replaced_but_still_accepted_is_reported() -> None:
    files = {
        ADR1: "---\nstatus: accepted\n---\n# ADR 1: storage\n\nUploads: minio.\n",
        ADR2: "# ADR 2: storage\n\n## Status\n\nAccepted\n\nUploads: s3.\n",
        "docs/adr/0003-queue.md": "# ADR 3: queue\n\n* Status: Accepted\n\nQueue: redis.\n",
        "docs/adr/0004-cache.md": "# ADR 4: cache\n\nStatus: Superseded by ADR 5\n\nCache: memcached.\n",
    }
    by_adr2 = Replacement(value="", evidence="", store="workspace", path=ADR2)
    facts = Facts(superseded_files={ADR1: by_adr2, "docs/adr/0004-cache.md": by_adr2},
                  retired=[Retired("docs/adr/0003-queue.md", 5, "queue", "redis", "Queue: redis",
                                   _memory("nats", "The queue is now NATS"))])
    found = lint(files, only(catalog.ADR_STATUS), facts)
    assert of(found, catalog.ADR_STATUS) == [(ADR1, 1), ("docs/adr/0003-queue.md", 3)]
    assert found[0].message == f"status reads 'accepted' but {ADR2} supersedes the whole record"
    assert found[0].fix == f"Set the status to 'Superseded by {ADR2}'"
    assert "'queue: redis' was superseded by 'nats' per memory m1" in found[1].message
    # and the statement itself is not reported twice: the ADR rule speaks for records
    assert of(lint(files, only(catalog.SUPERSEDED), facts), catalog.SUPERSEDED) == []


def test_a_later_record_that_says_it_supersedes_one_is_enough() -> None:
    files = {ADR1: "# ADR 1\n\nStatus: Accepted\n\nUse MinIO.\n",
             ADR2: "# ADR 2\n\nStatus: Accepted\n\nSupersedes [ADR 1](0001-storage.md).\n"}
    found = lint(files, only(catalog.ADR_STATUS))
    assert of(found, catalog.ADR_STATUS) == [(ADR1, 3)]
    assert f"{ADR2}:5 says it supersedes it" in found[0].message


# -- settings --------------------------------------------------------------------------------
def test_pyproject_settings_are_read_and_bad_ones_refused(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.lintaid.lint]\nrules = { "orphan-page" = false }\n'
        'severity = { "missing-xref" = "warning" }\nexclude = ["docs/archive/**"]\n'
        '[tool.lintaid.lint.allow]\nlinks = ["docs/generated/**"]\n')
    loaded = config.load(tmp_path)
    assert catalog.ORPHAN not in loaded.enabled and catalog.BROKEN_LINK in loaded.enabled
    assert loaded.level(catalog.MISSING_XREF) == catalog.WARNING
    files = {"docs/a.md": "# A\n\n[g](generated/x.md) [h](gone.md)\n",
             "docs/archive/old.md": "# Old\n\n[x](gone.md)\n"}
    assert of(lint(files, loaded), catalog.BROKEN_LINK) == [("docs/a.md", 3)]
    assert config.load(tmp_path / "nowhere") == config.LintConfig()
    for bad, says in [({"rules": {"nope": True}}, "unknown rule 'nope'"),
                      ({"rules": {"orphan-page": "yes"}}, "must be true or false"),
                      ({"severity": {"orphan-page": "fatal"}}, "must be one of note"),
                      ({"include": [1]}, "include: must be a list of strings"),
                      ({"allow": {"pages": []}}, "unknown key 'pages'"),
                      ({"min_title_words": 0}, "min_title_words"),
                      ({"colour": 1}, "unknown key 'colour'")]:
        with pytest.raises(config.ConfigError, match=says):
            config.from_mapping(bad)
    (tmp_path / "pyproject.toml").write_text("[tool.lintaid.lint\n")
    with pytest.raises(config.ConfigError, match="not TOML"):
        config.load(tmp_path)


# -- whatever a page holds, the lint answers -------------------------------------------------
_PIECES = st.sampled_from(["# ", "## ", "[", "]", "(", ")", "#", "`", "```", "\n", "---", "==",
                           "<a id='x'>", "[[", "]]", ".. _l:", ":doc:`", ":ref:`", "::", "   ",
                           "work_item", "work item", "Status: accepted", "http://x", "../",
                           "<!--", "-->", "lintaid-lint: off", "a", "b.md", "*", "_", "é"])


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a.md", "docs/b.md", "c.rst", "adr/0001-x.md"]),
                          st.lists(st.one_of(_PIECES, st.text(max_size=8)), max_size=40)),
                min_size=1, max_size=4))
def test_any_text_is_linted_without_an_error(pages: list[tuple[str, list[str]]]) -> None:
    files = {path: "".join(parts) for path, parts in pages}
    for f in lint(files):
        assert f.rule in catalog.RULES and f.level in catalog.LEVELS and f.line >= 1
        assert f.path in files and f.fix
