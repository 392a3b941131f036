"""``lintaid lint --docs`` over a generated Markdown corpus: how long a warm lint takes.

    python benchmarks/lint_docs.py                  # 2,000 pages
    python benchmarks/lint_docs.py --pages 5000 --runs 7
    python benchmarks/lint_docs.py --cli        # and the CLI against a daemon process

Generates a documentation tree (folders of pages with titles, headings, links between pages,
some broken, some to missing anchors; mentions of other pages' titles; one concept spelled
several ways; decision records, some superseded by later ones; statements the policy relates),
indexes it with ``Workspace`` in process over a real Writer and MemoryStore (what the daemon
runs: real watchdog, SQLite and Tantivy), then times ``Reader.lint_docs``, the call the
``lint_docs`` op makes on the daemon's reader pool: the first run, then ``--runs`` warm runs
(median, worst). Also prints where a warm run's time goes (reading the pages from the index,
parsing them, the policy's facts, the rules) and the findings by rule.

Figures only: no assertion on timing (the target is a warm lint under 5 s at 2,000 pages).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "client")]

from lintaid.doclint import config as settings  # noqa: E402
from lintaid.doclint import facts, rules  # noqa: E402
from lintaid.doclint.check import parse_pages  # noqa: E402
from lintaid.search import Reader  # noqa: E402
from lintaid.store.memory import MemoryStore  # noqa: E402
from lintaid.workspace.service import Workspace  # noqa: E402
from lintaid.writer import Writer  # noqa: E402
from lintaid_client import paths  # noqa: E402

SYLLABLES = ["ka", "lo", "mi", "ne", "ru", "ta", "vi", "zo", "pe", "shu", "dra", "qi", "mo"]
TOOLS = ["redis", "memcached", "kafka", "rabbitmq", "postgres", "mysql", "httpx", "requests"]
DRIFT = ["work_item", "work item", "workitem"]


def words(rnd: random.Random, n: int) -> list[str]:
    return ["".join(rnd.choice(SYLLABLES) for _ in range(rnd.randint(2, 4))) for _ in range(n)]


def corpus(root: Path, pages: int, seed: int = 5) -> None:
    rnd = random.Random(seed)
    folders = max(1, pages // 50)
    names = [f"docs/s{i % folders}/p{i}.md" for i in range(pages)]
    titles = [" ".join(words(rnd, 2)).title() for _ in range(pages)]
    for i, path in enumerate(names):
        folder = path.rsplit("/", 1)[0]
        lines = [f"# {titles[i]}", ""]
        for section in range(rnd.randint(2, 4)):
            lines += [f"## {' '.join(words(rnd, 2)).title()} {section}", ""]
            for _ in range(rnd.randint(2, 4)):
                sentence = " ".join(words(rnd, rnd.randint(10, 18)))
                if rnd.random() < 0.3:
                    sentence += f" Each {rnd.choice(DRIFT)} is tracked."
                if rnd.random() < 0.2:
                    sentence += f" See also {titles[rnd.randrange(pages)].lower()}."
                lines += [sentence.capitalize() + ".", ""]
            if rnd.random() < 0.2:
                lines += ["```python", "x = work_item()  # code is not prose", "```", ""]
        for _ in range(rnd.randint(1, 4)):
            j = rnd.randrange(pages)
            target = names[j].rsplit("/", 1)[1] if names[j].startswith(folder + "/") \
                else "../../" + names[j]
            if rnd.random() < 0.02:
                target = target.replace(".md", "-gone.md")
            anchor = "#nowhere" if rnd.random() < 0.02 else ""
            lines.append(f"- [{titles[j]}]({target}{anchor})")
        if rnd.random() < 0.1:
            lines += ["", f"The gateway uses {rnd.choice(TOOLS)} for outbound calls."]
        file = root / path
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text("\n".join(lines) + "\n")
    adr = root / "docs" / "adr"
    adr.mkdir(parents=True, exist_ok=True)
    for k in range(1, 21):
        front = f"---\nstatus: accepted\nsupersedes: {k - 1:04d}-cache.md\n---\n" if k % 2 == 0 \
            else "---\nstatus: accepted\n---\n"
        (adr / f"{k:04d}-cache.md").write_text(
            f"{front}# ADR {k}: cache\n\nThe cache uses {TOOLS[k % len(TOOLS)]} for sessions.\n")
    index = ["# Documentation", ""] + [f"- [{titles[i]}]({names[i]})" for i in range(0, pages, 3)]
    (root / "README.md").write_text("\n".join(index) + "\n")


def cli_runs(root: Path, runs: int) -> None:
    """``lintaid lint --docs --json`` as a user runs it, against a daemon process (started
    on the same project; its index is already there), warm runs only."""
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'client'}"}
    cmd = [sys.executable, "-m", "lintaid"]
    subprocess.run([*cmd, "start", "--project", str(root)], check=True, env=env,
                   capture_output=True)
    try:
        deadline = time.monotonic() + 900
        while True:
            out = subprocess.run([*cmd, "status", "--json", "--project", str(root)], env=env,
                                 capture_output=True, text=True)
            if out.returncode == 0 and json.loads(out.stdout).get("workspace", {}).get("ready"):
                break
            if time.monotonic() > deadline:
                raise SystemExit("the daemon's workspace never became ready")
            time.sleep(0.5)
        times = []
        for _ in range(runs + 1):
            t = time.perf_counter()
            subprocess.run([*cmd, "lint", "--docs", "--json", "--project", str(root)],
                           env=env, check=True, stdout=subprocess.DEVNULL)
            times.append(time.perf_counter() - t)
        warm = times[1:]
        print(f"`lintaid lint --docs --json` (a daemon process, the CLI's start-up included): "
              f"warm median {statistics.median(warm):.2f}s, worst {max(warm):.2f}s")
    finally:
        subprocess.run([*cmd, "stop", "--project", str(root)], env=env, capture_output=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--keep", action="store_true", help="keep the generated project")
    ap.add_argument("--cli", action="store_true",
                    help="also time `lintaid lint --docs --json` against a daemon process")
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="lintaid-lintdocs-"))
    try:
        corpus(root, args.pages)
        paths.ensure_state_dir(root)
        store = MemoryStore(root)
        writer = Writer(store)
        writer.start()
        ws = Workspace(root, submit=writer.submit, memory=store)
        writer.add_flusher(ws.flush)
        started = time.perf_counter()
        ws.start()
        if not ws.ready.wait(900):
            raise SystemExit("the workspace never became ready")
        print(f"corpus: {args.pages} pages + 20 decision records + README; indexed in "
              f"{time.perf_counter() - started:.1f}s")
        reader = Reader(memory=store, workspace=ws)
        t = time.perf_counter()
        report = reader.lint_docs(None)
        first = time.perf_counter() - t
        warm = []
        for _ in range(args.runs):
            t = time.perf_counter()
            reader.lint_docs(None)
            warm.append(time.perf_counter() - t)
        print(f"lint --docs over {report['pages']} pages: first {first:.2f}s; warm median "
              f"{statistics.median(warm):.2f}s, worst {max(warm):.2f}s ({args.runs} runs)")
        print(f"findings: {sum(report['counts'].values())} {report['counts']}; by rule "
              f"{report['by_rule']}; report {len(json.dumps(report)) / 1e6:.1f} MB as JSON")
        # Where a warm run's time goes.
        config = settings.load(root)
        t = time.perf_counter()
        rows = ws.pages()
        t_read = time.perf_counter() - t
        t = time.perf_counter()
        pages = parse_pages(rows, config.ignore_sections)
        t_parse = time.perf_counter() - t
        t = time.perf_counter()
        known = facts.gather(ws, store, None, list(pages))
        t_facts = time.perf_counter() - t
        t = time.perf_counter()
        rules.run(pages, config, ws.exists, known)
        t_rules = time.perf_counter() - t
        print(f"  read pages {t_read:.2f}s, parse {t_parse:.2f}s, policy facts {t_facts:.2f}s, "
              f"rules {t_rules:.2f}s")
        ws.stop()
        writer.stop()
        ws.store.close()
        store.close()
        if args.cli:
            cli_runs(root, args.runs)
    finally:
        if args.keep:
            print(f"kept: {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
