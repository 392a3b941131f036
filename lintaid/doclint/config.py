"""``[tool.lintaid.lint]`` in the project's ``pyproject.toml``: which rules run, at what
level, over which pages, what they leave alone.

```toml
[tool.lintaid.lint]
rules = { "missing-xref" = false }        # rules on or off (all on by default)
severity = { "orphan-page" = "note" }     # error | warning | note
include = ["docs/**", "*.md"]             # pages linted (default: every page)
exclude = ["docs/archive/**"]
ignore_sections = ["Changelog", "History*"]   # headings whose sections are skipped
adr_paths = ["docs/adr/**"]               # where decision records live
min_title_words = 2                       # shorter titles are not cross-reference cues

[tool.lintaid.lint.allow]
orphans = ["docs/glossary.md"]            # pages that may have no inbound link
terms = ["pre-commit"]                    # spellings never reported as drift
links = ["docs/generated/**"]             # link targets never checked
xref = ["Getting Started"]                # titles never suggested as links
```

A malformed table is refused with the key at fault (``ConfigError``), never half-read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import tomlkit

from .catalog import LEVELS, RULES

FILE: Final = "pyproject.toml"
DEFAULT_ADR_PATHS: Final = ("**/adr/**", "**/adrs/**", "**/decisions/**",
                            "**/decision-records/**", "**/architecture-decisions/**")
_KEYS: Final = frozenset({"rules", "severity", "include", "exclude", "ignore_sections",
                          "adr_paths", "min_title_words", "allow"})
_ALLOW_KEYS: Final = frozenset({"orphans", "terms", "links", "xref"})


class ConfigError(ValueError):
    """The lint settings cannot be used; the message names the file and key."""


@dataclass(frozen=True)
class LintConfig:
    enabled: frozenset[str] = frozenset(RULES)
    levels: Mapping[str, str] = field(default_factory=lambda: {r.id: r.level
                                                               for r in RULES.values()})
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    ignore_sections: tuple[str, ...] = ()
    adr_paths: tuple[str, ...] = DEFAULT_ADR_PATHS
    min_title_words: int = 2
    allow_orphans: tuple[str, ...] = ()
    allow_terms: tuple[str, ...] = ()
    allow_links: tuple[str, ...] = ()
    allow_xref: tuple[str, ...] = ()
    source: str | None = None  # the file it came from

    def level(self, rule: str) -> str:
        return self.levels[rule]


def load(root: Path | None) -> LintConfig:
    """The settings of the project at ``root`` (defaults when it has no such table)."""
    if root is None:
        return LintConfig()
    path = root / FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return LintConfig()
    except (OSError, UnicodeDecodeError) as err:
        raise ConfigError(f"{path}: {getattr(err, 'strerror', None) or err}") from None
    try:
        data = tomlkit.parse(text).unwrap()
    except Exception as err:  # tomlkit raises its own ParseError family
        raise ConfigError(f"{path}: not TOML: {err}") from None
    table = data.get("tool", {}).get("lintaid", {}).get("lint")
    if table is None:
        return LintConfig(source=str(path))
    return from_mapping(table, f"{path} [tool.lintaid.lint]")


def from_mapping(table: Any, where: str = "[tool.lintaid.lint]") -> LintConfig:
    if not isinstance(table, Mapping):
        raise ConfigError(f"{where}: must be a table")
    unknown = sorted(set(table) - _KEYS)
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r} (known: {', '.join(sorted(_KEYS))})")
    enabled = set(RULES)
    for rule, on in _table(table, "rules", where).items():
        _rule(rule, f"{where} rules")
        if not isinstance(on, bool):
            raise ConfigError(f"{where} rules.{rule}: must be true or false")
        (enabled.add if on else enabled.discard)(rule)
    levels = {r.id: r.level for r in RULES.values()}
    for rule, level in _table(table, "severity", where).items():
        _rule(rule, f"{where} severity")
        if level not in LEVELS:
            raise ConfigError(f"{where} severity.{rule}: must be one of "
                              f"{', '.join(LEVELS)}, not {level!r}")
        levels[rule] = level
    words = table.get("min_title_words", 2)
    if isinstance(words, bool) or not isinstance(words, int) or not 1 <= words <= 20:
        raise ConfigError(f"{where} min_title_words: must be a whole number from 1 to 20")
    allow = _table(table, "allow", where)
    unknown = sorted(set(allow) - _ALLOW_KEYS)
    if unknown:
        raise ConfigError(f"{where} allow: unknown key {unknown[0]!r} "
                          f"(known: {', '.join(sorted(_ALLOW_KEYS))})")
    return LintConfig(
        enabled=frozenset(enabled), levels=levels,
        include=_strings(table, "include", where), exclude=_strings(table, "exclude", where),
        ignore_sections=_strings(table, "ignore_sections", where),
        adr_paths=_strings(table, "adr_paths", where, DEFAULT_ADR_PATHS),
        min_title_words=words,
        allow_orphans=_strings(allow, "orphans", f"{where} allow"),
        allow_terms=_strings(allow, "terms", f"{where} allow"),
        allow_links=_strings(allow, "links", f"{where} allow"),
        allow_xref=_strings(allow, "xref", f"{where} allow"),
        source=where)


def _table(table: Mapping[str, Any], key: str, where: str) -> Mapping[str, Any]:
    value = table.get(key, {})
    if not isinstance(value, Mapping):
        raise ConfigError(f"{where} {key}: must be a table")
    return value


def _rule(rule: str, where: str) -> None:
    if rule not in RULES:
        raise ConfigError(f"{where}: unknown rule {rule!r} (known: {', '.join(sorted(RULES))})")


def _strings(table: Mapping[str, Any], key: str, where: str,
             default: tuple[str, ...] = ()) -> tuple[str, ...]:
    value = table.get(key)
    if value is None:
        return default
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where} {key}: must be a list of strings")
    return tuple(value)
