"""Staleness lint without the daemon: settings, memory exports, and the printed report.

- ``load_config``: the decay settings, from ``.lint-ai/staleness.toml`` and the environment
  (the daemon reads them at start; the file audit on every run).
- ``load_export``: a memory export in any format lintaid writes or memlint reads, told apart
  by its content (``auto``): memlint's ``json`` (``id``, ``content``, ``created_at``,
  ``source``, ``confirmation_count``, ``last_confirmed_at``, ``category``), ``mem0``
  (``id``, ``memory``, ``created_at``, ``updated_at`` as the last confirmation; a list or
  ``{"results": [...]}``) and lintaid's own JSON Lines (``jsonl``: its records, confirmed by
  its confirmation rows; prompts, if exported, are not judged); ``audit`` judges it by the
  same rules as the store, against its own entries.
- ``enrich``: the export's documents with ``memlint_score``, ``memlint_level``,
  ``memlint_age_days`` and ``memlint_checked_at`` added (memlint's names, so queries written
  for them keep working), written atomically in the shape they came in.
- ``as_memlint``: a report under memlint's names (``fact_id``, ``staleness_score``,
  ``staleness_level``, ``recommendation`` ...), for scripts written against memlint.
- ``table``: the report as the CLI prints it, for the store and for an export alike.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Final

import tomlkit

from lintaid_client import models, paths
from lintaid_client.ops import parse_time

from . import transfer
from .files import write_atomic
from .policy import staleness as policy
from .policy.staleness import ConfigError, StalenessConfig

CONFIG_FILE: Final = "staleness.toml"
ENV_RATES: Final = "LINTAID_STALENESS_RATES"
ENV_INJECT_EXPIRED: Final = "LINTAID_INJECT_EXPIRED"
FORMATS: Final = ("auto", "json", "mem0", "jsonl")
CONTENT_WIDTH: Final = 50
LIST, RESULTS, LINES = "list", "results", "lines"  # how an export's documents sat in it


def config_path(root: Path) -> Path:
    return paths.state_dir(root) / CONFIG_FILE


def load_config(root: Path | None, env: Mapping[str, str] | None = None) -> StalenessConfig:
    """The decay settings: defaults, then ``<root>/.lint-ai/staleness.toml`` when it exists,
    then ``LINTAID_STALENESS_RATES`` ("project=0.004,system_fact=0.02") and
    ``LINTAID_INJECT_EXPIRED`` (1 or 0). ``ConfigError`` names the file or variable at fault."""
    env = os.environ if env is None else env
    config = StalenessConfig()
    if root is not None:
        path = config_path(root)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            text = None
        except OSError as err:
            raise ConfigError(f"{path}: {err.strerror or err}") from None
        if text is not None:
            try:
                data = tomlkit.parse(text).unwrap()
            except Exception as err:  # tomlkit raises its own ParseError family
                raise ConfigError(f"{path}: not TOML: {err}") from None
            config = policy.config_from(data, str(path), config)
    if env.get(ENV_RATES):
        rates = {**config.rates, **policy.parse_rates(env[ENV_RATES], ENV_RATES)}
        config = StalenessConfig(rates, config.contradiction_penalty, config.inject_expired)
    if env.get(ENV_INJECT_EXPIRED):
        value = env[ENV_INJECT_EXPIRED].strip().lower()
        if value not in ("0", "1", "true", "false", "yes", "no"):
            raise ConfigError(f"{ENV_INJECT_EXPIRED}: must be 1 or 0, not {value!r}")
        config = StalenessConfig(config.rates, config.contradiction_penalty,
                                 value in ("1", "true", "yes"))
    return config


# -- exports ---------------------------------------------------------------------------------
class ExportError(ValueError):
    """An export that cannot be read; the message names the file and the entry."""


@dataclass
class Export:
    """A memory export as read: its documents (as they were), the facts judged (one per
    document), and how the documents sat in the file (``shape``; ``lines``: every line of a
    JSON Lines export, the documents among them)."""

    path: Path
    documents: list[dict[str, Any]]
    facts: list[policy.Fact]
    shape: str = LIST
    lines: list[dict[str, Any]] = field(default_factory=list)


def _time(value: Any, where: str) -> float:
    try:
        return parse_time(value, where)
    except ValueError as err:
        raise ExportError(str(err)) from None


def load_export(path: Path, fmt: str = "auto", now: float | None = None) -> Export:
    """Read a memory export (``FORMATS``; ``auto`` tells them apart by their content). An
    entry without ``created_at`` is taken as stated ``now`` (it scores fresh), as memlint
    does."""
    if fmt not in FORMATS:
        raise ExportError(f"unknown format {fmt!r} (known: {', '.join(FORMATS)})")
    now = time.time() if now is None else now
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise ExportError(f"{path}: {err.strerror or err}") from None
    except UnicodeDecodeError as err:
        raise ExportError(f"{path}: not JSON: {err}") from None
    if fmt == "jsonl" or (fmt == "auto" and _lintaid_lines(text)):
        return _load_lines(path, text, now)
    try:
        data = json.loads(text)
    except ValueError as err:
        raise ExportError(f"{path}: not JSON: {err}") from None
    wrapped = isinstance(data, dict) and isinstance(data.get("results"), list)
    docs = data["results"] if wrapped else data
    if not isinstance(docs, list):
        raise ExportError(f"{path}: expected a JSON array of memories at the root"
                          + (" (or mem0's {\"results\": [...]})" if fmt != "json" else "")
                          + f", got {type(docs).__name__}")
    if fmt == "auto":
        fmt = "mem0" if wrapped or any(isinstance(d, dict) and "memory" in d
                                       and "content" not in d for d in docs) else "json"
    facts = _facts(path, docs, fmt, now)
    return Export(path, docs, facts, RESULTS if wrapped else LIST)


def _lintaid_lines(text: str) -> bool:
    """Whether ``text`` starts with a lintaid export's header line."""
    first = next((line for line in text.splitlines() if line.strip()), "")
    try:
        head = json.loads(first)
    except ValueError:
        return False
    return isinstance(head, dict) and head.get("format") == transfer.FORMAT


def _load_lines(path: Path, text: str, now: float) -> Export:
    """lintaid's JSON Lines export: its records (not prompts), each confirmed as often as
    its confirmation rows say."""
    lines = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError as err:
            raise ExportError(f"{path}: line {number}: not JSON: {err}") from None
        if not isinstance(value, dict):
            raise ExportError(f"{path}: line {number}: must be a JSON object")
        lines.append(value)
    confirmed: dict[str, list[float]] = {}
    for row in lines:
        if row.get("type") == "confirmation" and isinstance(row.get("record_id"), str):
            confirmed.setdefault(row["record_id"], []).append(
                _time(row.get("at"), f"{path}: confirmation of {row['record_id']}: at"))
    docs = [row for row in lines
            if row.get("type") == "record" and row.get("kind") != models.PROMPT]
    facts = []
    for fact in _facts(path, docs, "json", now):
        times = confirmed.get(fact.id, [])
        facts.append(replace(fact, confirmation_count=fact.confirmation_count + len(times),
                             last_confirmed_at=max(times) if times else None))
    return Export(path, docs, facts, LINES, lines)


def _facts(path: Path, docs: list[Any], fmt: str, now: float) -> list[policy.Fact]:
    text_key = "memory" if fmt == "mem0" else "content"
    confirmed_key = "updated_at" if fmt == "mem0" else "last_confirmed_at"
    facts: list[policy.Fact] = []
    seen: set[str] = set()
    for i, doc in enumerate(docs):
        where = f"{path}: entry {i}"
        if not isinstance(doc, dict):
            raise ExportError(f"{where}: must be an object, not {type(doc).__name__}")
        for key in ("id", text_key):
            if doc.get(key) in (None, ""):
                raise ExportError(f"{where}: missing '{key}'")
        fid, text = str(doc["id"]), doc[text_key]
        if not isinstance(text, str):
            raise ExportError(f"{where}: '{text_key}' must be a string")
        if fid in seen:
            raise ExportError(f"{where}: id {fid!r} appears twice")
        seen.add(fid)
        created = (_time(doc["created_at"], f"{where}: created_at")
                   if doc.get("created_at") is not None else now)
        confirmed = (_time(doc[confirmed_key], f"{where}: {confirmed_key}")
                     if doc.get(confirmed_key) is not None else None)
        count = doc.get("confirmation_count", 0)
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise ExportError(f"{where}: confirmation_count must be a whole number >= 0")
        source = doc.get("source")
        try:
            category = policy.fact_category(text, doc.get("category"))
        except ConfigError as err:
            raise ExportError(f"{where}: {err}") from None
        facts.append(policy.Fact(fid, text, created, category,
                                 source if isinstance(source, str) else None, count, confirmed))
    return facts


def audit(export: Export, now: float | None = None,
          config: StalenessConfig | None = None) -> dict[str, Any]:
    """The export judged against itself: the whole lint report (``policy.report``)."""
    now = time.time() if now is None else now
    evidence = policy.relate(export.facts, now)
    judged = [(f.id, f.content, policy.judge(f, evidence[f.id], now, config))
              for f in export.facts]
    return policy.report(judged, now)


def narrow(result: Mapping[str, Any], only_flagged: bool = False,
           limit: int | None = None) -> dict[str, Any]:
    """A whole report as ``policy.report`` narrows it: only the flagged rows, at most
    ``limit`` of them; the counts stay complete."""
    rows = [r for r in result["results"] if not only_flagged or r["level"] in policy.FLAGGED]
    shown = rows if limit is None else rows[:limit]
    return {**result, "results": shown,
            "omitted": result.get("omitted", 0) + len(rows) - len(shown)}


def iso(epoch: float | None) -> str | None:
    if epoch is None or not math.isfinite(epoch):
        return None
    return datetime.fromtimestamp(epoch, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def enrich(export: Export, result: Mapping[str, Any], out: Path) -> int:
    """Write the export's documents with the memlint fields added (originals untouched), in
    the shape they came in, atomically; return how many were written."""
    by_id = {r["id"]: r for r in result["results"]}
    if len(by_id) != len(export.facts):
        raise ExportError("enrich needs the whole report, not only the flagged entries")
    checked = iso(result["checked_at"])
    docs = []
    for doc, fact in zip(export.documents, export.facts, strict=True):
        row = by_id[fact.id]
        docs.append({**doc, "memlint_score": row["score"], "memlint_level": row["level"],
                     "memlint_age_days": row["age_days"], "memlint_checked_at": checked})
    if export.shape == LINES:  # the same lines, the judged records enriched
        by_doc = {id(doc): new for doc, new in zip(export.documents, docs, strict=True)}
        text = "".join(json.dumps(by_doc.get(id(line), line), ensure_ascii=False) + "\n"
                       for line in export.lines)
    else:
        data: Any = {"results": docs} if export.shape == RESULTS else docs
        text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    write_atomic(out.expanduser(), text)
    return len(docs)


# -- memlint's names -------------------------------------------------------------------------
MEMLINT_CATEGORIES: Final = frozenset({"location", "employment", "project", "preference",
                                       "relationship", "identity", "episodic", "system_fact",
                                       "unknown"})
"""memlint's categories; lintaid's ``permanent`` is reported as memlint's ``identity`` (the
slowest it has), with lintaid's own word beside it."""


def as_memlint(result: Mapping[str, Any]) -> dict[str, Any]:
    """A lint report under memlint's names, as ``memlint check --json`` prints its
    ``DetectionReport``: ``checked_at`` (UTC, no zone), ``total_facts``, one count per level
    and per result ``fact_id``, ``content``, ``category``, ``staleness_score``,
    ``staleness_level``, ``age_days``, ``reason``, ``recommendation``, ``has_contradiction``
    and ``contradicted_by``."""
    counts = result["counts"]
    rows = []
    for r in result["results"]:
        row = {"fact_id": r["id"], "content": r["content"],
               "category": r["category"] if r["category"] in MEMLINT_CATEGORIES
               else "identity",
               "staleness_score": r["score"], "staleness_level": r["level"],
               "age_days": r["age_days"], "reason": r["reason"],
               "recommendation": r["action"],
               "has_contradiction": r.get("contradicted_by") is not None,
               "contradicted_by": r.get("contradicted_by")}
        if row["category"] != r["category"]:
            row["lintaid_category"] = r["category"]
        rows.append(row)
    checked = datetime.fromtimestamp(result["checked_at"], tz=timezone.utc)
    return {"checked_at": checked.replace(tzinfo=None).isoformat(),
            "total_facts": result["total"], "fresh_count": counts["fresh"],
            "aging_count": counts["aging"], "stale_count": counts["stale"],
            "expired_count": counts["expired"], "results": rows}


# -- printing --------------------------------------------------------------------------------
COLUMNS: Final = ("ID", "CONTENT", "CATEGORY", "AGE", "SCORE", "LEVEL", "ACTION")


def _cell(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 3] + "..."


def table(result: Mapping[str, Any], noun: str = "records") -> list[str]:
    """The report as lines: one row per result (id, content, category, age in days, score,
    level, action), then memlint's summary line over everything checked."""
    rows = [(str(r["id"]), _cell(str(r["content"]), CONTENT_WIDTH), str(r["category"]),
             str(r["age_days"]), f"{r['score']:.2f}", str(r["level"]).upper(), str(r["action"]))
            for r in result["results"]]
    widths = [max([len(h), *(len(row[i]) for row in rows)]) for i, h in enumerate(COLUMNS)]
    right = {3, 4}

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.rjust(w) if i in right else c.ljust(w)
                         for i, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip()

    out = [line(COLUMNS)] if rows else []
    out.extend(line(row) for row in rows)
    if result.get("omitted"):
        out.append(f"... {result['omitted']} more not listed (--limit)")
    out.append(summary(result, noun))
    return out


def summary(result: Mapping[str, Any], noun: str = "records") -> str:
    c = result["counts"]
    noun = noun.removesuffix("s") if result["total"] == 1 else noun
    return (f"Checked {result['total']} {noun}: {c['fresh']} fresh, {c['aging']} aging, "
            f"{c['stale']} stale, {c['expired']} expired")


def fails(result: Mapping[str, Any], fail_on: str | None) -> bool:
    """True when ``fail_on`` (stale or expired) is set and a record is at that level or
    beyond (so ``stale`` fails on expired ones too)."""
    if not fail_on:
        return False
    return any(count and policy.at_least(level, fail_on)
               for level, count in result["counts"].items())
