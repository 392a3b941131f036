"""The document lint's outputs: the op's report, the terminal table, SARIF 2.1.0 and the
``--fail-on`` verdict.

No copy of the SARIF 2.1.0 schema is available offline, so the log is validated (with
``jsonschema``) against the part of the OASIS schema a reader relies on: the required
properties and the types and enumerations of every object lintaid writes."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from lintaid.doclint import catalog, report
from lintaid.doclint.rules import Finding

_MESSAGE = {"type": "object", "required": ["text"], "properties": {"text": {"type": "string"}}}
_PHYSICAL = {
    "type": "object", "required": ["artifactLocation"],
    "properties": {
        "artifactLocation": {"type": "object", "required": ["uri"], "properties": {
            "uri": {"type": "string", "format": "uri-reference"},
            "uriBaseId": {"type": "string"}}},
        "region": {"type": "object", "required": ["startLine"],
                   "properties": {"startLine": {"type": "integer", "minimum": 1}}},
    },
}
SARIF_REQUIRED = {
    "type": "object", "required": ["version", "runs"],
    "properties": {
        "$schema": {"type": "string", "format": "uri"},
        "version": {"const": "2.1.0"},
        "runs": {"type": "array", "minItems": 1, "items": {
            "type": "object", "required": ["tool"],
            "properties": {
                "tool": {"type": "object", "required": ["driver"], "properties": {
                    "driver": {"type": "object", "required": ["name"], "properties": {
                        "name": {"type": "string"}, "version": {"type": "string"},
                        "informationUri": {"type": "string", "format": "uri"},
                        "rules": {"type": "array", "items": {
                            "type": "object", "required": ["id"], "properties": {
                                "id": {"type": "string"},
                                "shortDescription": _MESSAGE, "fullDescription": _MESSAGE,
                                "defaultConfiguration": {"type": "object", "properties": {
                                    "level": {"enum": ["none", "note", "warning", "error"]}}},
                            }}}}}}},
                "originalUriBaseIds": {"type": "object", "additionalProperties": {
                    "type": "object", "properties": {"uri": {"type": "string"}}}},
                "columnKind": {"enum": ["utf16CodeUnits", "unicodeCodePoints"]},
                "results": {"type": "array", "items": {
                    "type": "object", "required": ["message"], "properties": {
                        "ruleId": {"type": "string"},
                        "ruleIndex": {"type": "integer", "minimum": -1},
                        "level": {"enum": ["none", "note", "warning", "error"]},
                        "message": _MESSAGE,
                        "locations": {"type": "array", "items": {
                            "type": "object", "properties": {"physicalLocation": _PHYSICAL}}},
                        "relatedLocations": {"type": "array", "items": {
                            "type": "object", "properties": {
                                "id": {"type": "integer", "minimum": -1},
                                "message": _MESSAGE, "physicalLocation": _PHYSICAL}}},
                        "partialFingerprints": {"type": "object", "additionalProperties": {
                            "type": "string"}},
                        "properties": {"type": "object"},
                    }}},
            }}},
    },
}


def findings() -> list[Finding]:
    return [
        Finding(catalog.BROKEN_LINK, catalog.ERROR, "docs/a b.md", 3, "link to 'x.md': no such "
                "file in the project", "Fix the path, or remove the link if the file is gone."),
        Finding(catalog.SUPERSEDED, catalog.ERROR, "README.md", 7, "states uploads is 'minio'",
                "Replace 'minio' with 's3'", related=[
                    {"message": "now: uploads on s3 (memory m1)"},
                    {"path": "docs/storage.md", "line": 4, "message": "now: uploads: s3"}],
                data={"replaced_by": {"store": "memory", "record_id": "m1"}}),
        Finding(catalog.MISSING_XREF, catalog.NOTE, "docs/ops.md", 2, "mentions 'Retry "
                "Policy' (docs/retry.md) without linking it", "Link the first mention"),
        Finding(catalog.ORPHAN, catalog.WARNING, "docs/lonely.md", 1, "no page links to it",
                "Link to it"),
    ]


def test_the_report_counts_everything_and_lists_up_to_the_limit() -> None:
    built = report.build(findings(), pages=10, linted=8, limit=2, config="pyproject.toml")
    assert built["counts"] == {"error": 2, "warning": 1, "note": 1}
    assert built["by_rule"] == {catalog.BROKEN_LINK: 1, catalog.MISSING_XREF: 1,
                                catalog.ORPHAN: 1, catalog.SUPERSEDED: 1}
    assert len(built["findings"]) == 2 and built["omitted"] == 2
    assert built["findings"][1]["data"]["replaced_by"]["record_id"] == "m1"


@pytest.mark.parametrize(("fail_on", "counts", "fails"), [
    (None, {"error": 3, "warning": 0, "note": 0}, False),
    ("error", {"error": 0, "warning": 5, "note": 5}, False),
    ("error", {"error": 1, "warning": 0, "note": 0}, True),
    ("warning", {"error": 1, "warning": 0, "note": 0}, True),
    ("warning", {"error": 0, "warning": 0, "note": 9}, False),
    ("note", {"error": 0, "warning": 0, "note": 1}, True),
    ("note", {"error": 0, "warning": 0, "note": 0}, False),
])
def test_fail_on_counts_its_level_and_the_levels_above(fail_on: str | None,
                                                      counts: dict[str, int],
                                                      fails: bool) -> None:
    assert report.fails({"counts": counts}, fail_on) is fails


def test_the_table_shows_location_level_rule_message_and_fix() -> None:
    lines = report.table(report.build(findings(), pages=4, linted=4))
    assert lines[0].split() == ["LOCATION", "LEVEL", "RULE", "MESSAGE"]
    assert lines[1].startswith("docs/a b.md:3") and "broken-link" in lines[1]
    assert any(line.strip().startswith("fix: Replace 'minio' with 's3'") for line in lines)
    assert lines[-1] == "Checked 4 pages: 2 errors, 1 warning, 1 note"
    assert report.table(report.build([], pages=1, linted=1)) == [
        "Checked 1 page: 0 errors, 0 warnings, 0 notes"]


def test_sarif_has_the_required_structure_and_every_finding_on_its_line() -> None:
    built = report.build(findings(), pages=4, linted=4)
    log: dict[str, Any] = report.sarif(built, "/tmp/project", "1.2.3")
    jsonschema.validate(log, SARIF_REQUIRED, format_checker=jsonschema.FormatChecker())
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == sorted(catalog.RULES)
    assert run["originalUriBaseIds"]["SRCROOT"]["uri"] == "file:///tmp/project/"
    results = run["results"]
    assert len(results) == 4
    for result, finding in zip(results, built["findings"], strict=True):
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"] == finding["rule"]
        assert result["level"] == finding["level"]
        loc = result["locations"][0]["physicalLocation"]
        assert loc["region"]["startLine"] == finding["line"]
        assert loc["artifactLocation"]["uriBaseId"] == "SRCROOT"
        assert finding["fix"] in result["message"]["text"]
    assert results[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == \
        "docs/a%20b.md"
    related = results[1]["relatedLocations"]
    assert related[0] == {"id": 0, "message": {"text": "now: uploads on s3 (memory m1)"}}
    assert related[1]["physicalLocation"]["region"]["startLine"] == 4
    assert len({r["partialFingerprints"]["lintaid/v1"] for r in results}) == 4
    with pytest.raises(jsonschema.ValidationError):  # the schema can fail: a bad level
        jsonschema.validate({**log, "runs": [{**run, "results": [
            {**results[0], "level": "fatal"}]}]}, SARIF_REQUIRED)
