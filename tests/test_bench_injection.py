"""benchmarks/injection.py: its scoring rules on hand-made blocks, and a slice of its scripted
project (the first seven sessions) through a real in-process daemon."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parent.parent


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_injection",
                                                  REPO / "benchmarks" / "injection.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


bench = _load()


def probe(kind: str, text: str, current: dict[str, str], expected: set) -> object:
    return bench.Probe(kind, 1, "q", expected, expected, set(), set(), current, text)


def test_scoring_reads_what_the_text_marks() -> None:
    current = {"cache": "memcached", "billing owner": "bob"}
    start = "\n".join([
        "Project state (lintaid): ...",
        "",
        "Current decisions, newest first, grouped by subject:",
        '- caching: "We use Memcached for caching." (m2, 2026-01-01 10:00Z)',
        '- uv.lock: "Replaced uv.lock with poetry.lock." (m3, 2026-01-01 10:00Z)',
        "",
        "Changed since your last session began (2026-01-01T09:00:00Z):",
        '- now: "We use Memcached for caching instead of Redis." (m2, ...); '
        'before: "We use Redis for caching." (m1, ...)',
        '- new conflict: billing service: "Ana owns the billing service." (m4) vs '
        '"Bob owns the billing service." (m5)',
    ])
    expected = {("cache", "memcached"), ("billing owner", "bob")}
    score = bench.score(probe("start", start, current, expected))
    # Four items; the conflict shows Bob only as disputed, so it is neither found nor stale;
    # Redis after "before:" is history, not a stale presentation.
    assert (score.items, score.relevant_items, score.stale) == (4, 2, 0)
    assert (score.expected, score.found) == (2, 1)

    prompt = "\n".join([
        "Recalled for this prompt (lintaid): ...",
        "",
        "- Memory m1 [current, with a superseded statement left out]",
        "  Source: claude-code://s/outcome",
        "  Result: Done. Wired gateway/cache.py.",
        "  Superseded here: caching implementation (now: memcached, per m2)",
        "",
        "- Memory m7 [current]",
        "  Source: cli",
        "  We use Redis for caching.",
        "  User prompt: which cache?",
    ])
    score = bench.score(probe("prompt", prompt, current, {("cache", "memcached")}))
    assert (score.items, score.relevant_items, score.stale, score.found) == (2, 0, 1, 0)
    assert score.prompt_echoes == 1


def test_a_slice_of_the_project(tmp_path: Path) -> None:
    probes = bench.run(7, 8000, tmp_path)
    result = bench.report(probes)
    assert result["sessions"] == 7
    kinds = {p.kind for p in probes}
    assert kinds == {"start", "prompt"}
    overall = result["overall"]
    # What lintaid must never do, whatever the policy decides.
    assert overall["prompt_echoes"] == 0
    assert overall["config_leaks"] == 0 and overall["secret_leaks"] == 0
    assert overall["max_bytes"] <= 8000
    # The slice holds one change the policy knows (Redis, then Memcached "instead of"):
    # nothing stale, and SessionStart brings the decisions and the last outcome.
    assert overall["stale_presentations"] == 0
    start = result["by_probe"]["start"]
    assert start["recall"] >= 0.8 and start["precision"] >= 0.8
    last = next(p for p in probes if p.kind == "start" and p.session == 7)
    assert last.text and "We use Memcached for caching instead of Redis." in last.text
    assert "Updated gateway/cache.py for pymemcache." in last.text  # the last outcome
    table = bench.table(result)
    assert table.splitlines()[0].split()[:5] == ["probe", "probes", "items", "precision",
                                                 "recall"]
