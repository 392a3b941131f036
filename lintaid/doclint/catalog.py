"""The rules ``lintaid lint --docs`` knows: id, default level, what each finds."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

ERROR: Final = "error"
WARNING: Final = "warning"
NOTE: Final = "note"
LEVELS: Final = (NOTE, WARNING, ERROR)  # least to most severe; SARIF's words


def at_least(level: str, threshold: str) -> bool:
    return LEVELS.index(level) >= LEVELS.index(threshold)


@dataclass(frozen=True)
class Rule:
    id: str
    level: str
    short: str
    help: str


ORPHAN: Final = "orphan-page"
MISSING_XREF: Final = "missing-xref"
TERMINOLOGY: Final = "terminology-drift"
BROKEN_LINK: Final = "broken-link"
BROKEN_ANCHOR: Final = "broken-anchor"
SUPERSEDED: Final = "superseded-statement"
ADR_STATUS: Final = "adr-status"

RULES: Final = {r.id: r for r in (
    Rule(ORPHAN, WARNING, "No other page links to this page",
         "A page nothing links to is hard to find. README and index pages are exempt; "
         "allow others with [tool.lintaid.lint.allow] orphans."),
    Rule(MISSING_XREF, NOTE, "A page names another page's title without linking it",
         "The first mention of another page's title (or an alias in its frontmatter) in a "
         "page that never links to it."),
    Rule(TERMINOLOGY, WARNING, "One concept spelled several ways",
         "work_item, workitem, WorkItem and 'work item' are one concept; the spelling used "
         "less often is reported, with the one used most."),
    Rule(BROKEN_LINK, ERROR, "A link to a file that is not in the project",
         "A relative link (or reStructuredText role or directive) whose target file or "
         "folder does not exist under the project root."),
    Rule(BROKEN_ANCHOR, ERROR, "A link to a heading or label that does not exist",
         "The #fragment matches no heading anchor, explicit anchor or label of the target."),
    Rule(SUPERSEDED, ERROR, "A document states what a current decision replaced",
         "The policy holds this statement's value as superseded (by a later document or "
         "memory); the finding names the statement that replaced it and where it comes from."),
    Rule(ADR_STATUS, WARNING, "A decision record was replaced but still reads accepted",
         "A later document or memory supersedes the record's decision (or the whole record), "
         "while its status still says it stands."),
)}
