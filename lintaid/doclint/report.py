"""A document lint report: as the op returns it, as a terminal table, as SARIF 2.1.0, and
the ``--fail-on`` verdict for CI."""

from __future__ import annotations

import hashlib
import textwrap
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final
from urllib.parse import quote

from . import catalog
from .catalog import LEVELS, RULES
from .rules import Finding

SARIF_VERSION: Final = "2.1.0"
SARIF_SCHEMA: Final = "https://json.schemastore.org/sarif-2.1.0.json"
TOOL_URI: Final = "https://github.com/lintaid/lintaid#lint-for-documents"
SRCROOT: Final = "SRCROOT"


def build(findings: Sequence[Finding], pages: int, linted: int, limit: int | None = None,
          config: str | None = None) -> dict[str, Any]:
    """The op's answer: counts over every finding, at most ``limit`` findings listed."""
    shown = list(findings) if limit is None else list(findings)[:limit]
    levels = Counter(f.level for f in findings)
    return {"pages": pages, "linted": linted,
            "counts": {level: levels.get(level, 0) for level in reversed(LEVELS)},
            "by_rule": dict(sorted(Counter(f.rule for f in findings).items())),
            "findings": [f.as_dict() for f in shown],
            "omitted": len(findings) - len(shown), "config": config}


def fails(report: Mapping[str, Any], fail_on: str | None) -> bool:
    """True when ``fail_on`` (error, warning or note) is set and a finding is at that level
    or above (``warning`` fails on errors too)."""
    if not fail_on:
        return False
    return any(count and catalog.at_least(level, fail_on)
               for level, count in report["counts"].items())


# -- the terminal ----------------------------------------------------------------------------
COLUMNS: Final = ("LOCATION", "LEVEL", "RULE", "MESSAGE")
MESSAGE_WIDTH: Final = 88


def table(report: Mapping[str, Any], width: int = MESSAGE_WIDTH) -> list[str]:
    """One row per finding (location, level, rule, message wrapped), its fix under it, then
    a summary line."""
    rows = [(f"{f['path']}:{f['line']}", f["level"], f["rule"], f["message"], f["fix"])
            for f in report["findings"]]
    widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(COLUMNS[:3])]
    indent = sum(widths) + 6
    out = []
    if rows:
        out.append("  ".join(h.ljust(w) for h, w in zip(COLUMNS[:3], widths, strict=True))
                   + "  " + COLUMNS[3])
    for loc, level, rule, message, fix in rows:
        head = "  ".join(c.ljust(w) for c, w in zip((loc, level, rule), widths, strict=True))
        wrapped = textwrap.wrap(message, width) or [""]
        out.append(f"{head}  {wrapped[0]}")
        out.extend(" " * indent + more for more in wrapped[1:])
        out.extend(" " * indent + ("fix: " if i == 0 else "     ") + part
                   for i, part in enumerate(textwrap.wrap(fix, width - 5)))
    if report.get("omitted"):
        out.append(f"... {report['omitted']} more not listed (--limit)")
    out.append(summary(report))
    return out


def summary(report: Mapping[str, Any]) -> str:
    c = report["counts"]
    pages = report["linted"]

    def n(count: int, word: str) -> str:
        return f"{count} {word}{'' if count == 1 else 's'}"

    return (f"Checked {n(pages, 'page')}: {n(c['error'], 'error')}, "
            f"{n(c['warning'], 'warning')}, {n(c['note'], 'note')}")


# -- SARIF -----------------------------------------------------------------------------------
def sarif(report: Mapping[str, Any], root: str | None, version: str) -> dict[str, Any]:
    """The report as a SARIF 2.1.0 log: one run, every rule described, each finding a result
    on its file and line (paths relative to ``%SRCROOT%``, the project root), its fix and
    the statement that replaced it as ``relatedLocations``."""
    rule_ids = sorted(RULES)
    rules = [{"id": r, "name": _camel(r),
              "shortDescription": {"text": RULES[r].short},
              "fullDescription": {"text": RULES[r].help},
              "defaultConfiguration": {"level": RULES[r].level},
              "helpUri": TOOL_URI} for r in rule_ids]
    results = []
    for f in report["findings"]:
        related = []
        for k, rel in enumerate(f.get("related") or []):
            entry: dict[str, Any] = {"id": k, "message": {"text": rel["message"]}}
            if rel.get("path"):
                entry["physicalLocation"] = _location(rel["path"], rel.get("line"))
            related.append(entry)
        result: dict[str, Any] = {
            "ruleId": f["rule"], "ruleIndex": rule_ids.index(f["rule"]), "level": f["level"],
            "message": {"text": f"{f['message']}. Fix: {f['fix']}"},
            "locations": [{"physicalLocation": _location(f["path"], f["line"])}],
            "partialFingerprints": {"lintaid/v1": _fingerprint(f)},
            "properties": {"fix": f["fix"], **({"data": f["data"]} if f.get("data") else {})},
        }
        if related:
            result["relatedLocations"] = related
        results.append(result)
    run: dict[str, Any] = {
        "tool": {"driver": {"name": "lintaid", "version": version, "informationUri": TOOL_URI,
                            "rules": rules}},
        "results": results,
        "columnKind": "unicodeCodePoints",
        "properties": {"pages": report["linted"], "omitted": report.get("omitted", 0)},
    }
    if root:
        run["originalUriBaseIds"] = {SRCROOT: {"uri": _dir_uri(root)}}
    return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}


def _location(path: str, line: int | None) -> dict[str, Any]:
    loc: dict[str, Any] = {"artifactLocation": {"uri": _uri(path), "uriBaseId": SRCROOT}}
    if line:
        loc["region"] = {"startLine": max(1, int(line))}
    return loc


def _uri(path: str) -> str:
    return quote(path, safe="/")


def _dir_uri(root: str) -> str:
    uri = Path(root).resolve().as_uri()
    return uri if uri.endswith("/") else uri + "/"


def _camel(rule: str) -> str:
    return "".join(p.capitalize() for p in rule.split("-"))


def _fingerprint(f: Mapping[str, Any]) -> str:
    return hashlib.sha256(f"{f['rule']}\x1f{f['path']}\x1f{f['message']}".encode()
                          ).hexdigest()[:16]
