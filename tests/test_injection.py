"""What a prompt is given, end to end through the hook shim's ``answer`` against a real daemon
(in this process): memory before project files and never third-party code, calibrated
relevance and the floor, statement excerpts, one provenance line with ``current`` only where
the policy judged, the token budget, the SessionStart digest, and the ledger of what memory
did. The renderer's rules that need exact shapes are checked on hand-made hits too."""

from __future__ import annotations

import importlib
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from lintaid.capture import git as gitinfo
from lintaid.integrations import injection
from lintaid.policy import values
from lintaid.retrieval import admit
from lintaid.retrieval.markers import markers, used
from lintaid.retrieval.query import parts
from lintaid.retrieval.statements import statements
from lintaid.search import merge
from lintaid.workspace import thirdparty
from lintaid_client.models import Claim, Hit, Passage
from tests.conftest import Served, wait_for
from tests.test_e2e_spine import git_init
from tests.test_viewer import open_viewer
from tests.transcripts import stop_payload, write_transcript

GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"]


def prompt(served: Served, text: str, session: str = "later") -> str:
    """What the prompt is given, once every write before it is searchable (injection itself
    waits only briefly for that, and a loaded machine can take longer)."""
    served.call("search", {"query": "settle", "top_k": 1})  # a read waits for the writes
    out = served.hook("UserPromptSubmit", {"session_id": session, "prompt": text})
    return str(out.get("hookSpecificOutput", {}).get("additionalContext", ""))


def capture(served: Served, session: str, request: str, result: str) -> None:
    root = served.root
    path = write_transcript(root.parent / f"{session}.jsonl", [("user", request),
                                                               ("assistant", result)],
                            session_id=session, cwd=str(root))
    assert served.hook("Stop", stop_payload(path, session_id=session, cwd=str(root))) == {}


def entries(text: str) -> list[list[str]]:
    """The block's entries: each a provenance line and its indented lines."""
    out: list[list[str]] = []
    for line in text.splitlines():
        if line.startswith("- "):
            out.append([line])
        elif line.startswith("  ") and out:
            out[-1].append(line.strip())
    return out


def commit(root: Path, message: str) -> None:
    subprocess.run([*GIT, "-C", str(root), "add", "-A"], check=True)
    subprocess.run([*GIT, "-C", str(root), "commit", "-q", "-m", message], check=True)


def workspace_settled(served: Served) -> bool:
    ws = served.call("status").get("workspace") or {}
    return bool(ws.get("ready")) and not ws.get("pending_index") and not ws.get("queue_depth")


# -- 1. what a prompt may get ----------------------------------------------------------------
def test_memory_comes_first_and_third_party_code_never_reaches_the_agent(
        project: Path, serve: Any) -> None:
    git_init(project)
    src = project / "src"
    for name in ("h11", "idna"):  # two small libraries, installed here, vendored under src/
        shutil.copytree(Path(importlib.import_module(name).__file__ or "").parent, src / name,
                        ignore=shutil.ignore_patterns("__pycache__"))
    (src / "h11" / "_util.py").write_text((src / "h11" / "_util.py").read_text() + "# ours\n")
    (src / "gateway").mkdir()
    (src / "gateway" / "client.py").write_text(
        "import httpx\n\n\ndef outbound_client():\n    \"\"\"The HTTP client for outbound "
        "calls.\"\"\"\n    return httpx.Client(timeout=5)\n")
    (project / "uv.lock").write_text('[[package]]\nname = "httpx"\nversion = "0.28.1"\n')
    (project / ".gitattributes").write_text("gen/** linguist-generated\n")
    (project / "gen").mkdir()
    (project / "gen" / "http_api.py").write_text("def outbound_http_library():\n    pass\n")
    (project / "web").mkdir()
    (project / "web" / "app.js").write_text("var http=function(){return 'outbound'};" * 300)
    commit(project, "tree")
    served = serve(project, watch=True)
    wait_for(lambda: workspace_settled(served), timeout=60)
    served.json("add", "The gateway now uses httpx instead of requests for outbound HTTP calls.")
    text = prompt(served, "Which HTTP library does the gateway use for outbound calls?")
    shown = entries(text)
    assert shown and shown[0][0].split(" · ")[0].startswith("- m")  # the memory, first
    assert "httpx instead of requests" in shown[0][1]
    for where in ("src/h11", "src/idna", "uv.lock", "gen/", "web/app.js", "src/gateway"):
        assert where not in text  # no library, lockfile, generated or minified code; no code
    skipped = served.call("status")["workspace"]["third_party"]
    assert skipped["installed copy"] >= 20 and skipped["lockfile"] == 1
    assert skipped["generated"] == 1 and skipped["minified"] == 1
    found = served.json("search", "outbound http", "--store", "workspace")["results"]
    assert [h["path"] for h in found] == ["src/gateway/client.py"]
    # Code comes in when the prompt names it, and after the memories.
    text = prompt(served, "What does outbound_client() in src/gateway/client.py return?")
    assert "src/gateway/client.py" in text


def test_hits_merge_by_calibrated_relevance_and_keep_their_own_order() -> None:
    def hit(rid: str, score: float, relevance: float) -> Hit:
        return Hit(id=rid, content=rid, score=score, relevance=relevance)

    memory = [hit("m1", 4.3, 0.6), hit("m2", 3.9, 0.7)]  # the index's order: claims, dates
    files = [hit("w1", 17.1, 0.5), hit("w2", 9.0, 0.2)]  # far higher raw BM25
    assert [h.id for h in merge(memory, files)] == ["m1", "m2", "w1", "w2"]
    assert [h.id for h in merge([hit("m1", 9, 0.1)], files)] == ["w1", "w2", "m1"]


def test_relevance_is_a_share_the_same_in_both_indexes(project: Path, serve: Any) -> None:
    git_init(project)
    (project / "docs").mkdir()
    (project / "docs" / "cache.md").write_text("# Cache\n\nThe cache evicts with LRU.\n")
    commit(project, "docs")
    served = serve(project, watch=True)
    wait_for(lambda: workspace_settled(served), timeout=60)
    served.json("add", "The cache evicts with LRU.")
    hits = served.call("search", {"query": "cache evicts LRU", "store": "all"})["results"]
    assert {h["store"] for h in hits} == {"memory", "workspace"}
    assert all(0 < h["relevance"] <= 1 for h in hits)
    # The same words in either index reach a like share, whatever the raw scores.
    mem, ws = (next(h for h in hits if h["store"] == s) for s in ("memory", "workspace"))
    assert abs(mem["relevance"] - ws["relevance"]) < 0.25


def test_named_code_is_what_a_prompt_names() -> None:
    names = admit.named_code("Why does `RetryPolicy.next_delay()` raise ValueError: negative "
                             "delay in gateway/retry.py?")
    assert "RetryPolicy.next_delay()" in names and "gateway/retry.py" in names
    assert any(n.startswith("ValueError") for n in names)
    assert admit.named_code("How do we retry outbound calls?") == []


def test_third_party_rules_on_their_own(tmp_path: Path) -> None:
    assert thirdparty.by_path("vendor/lib/x.go") == thirdparty.VENDORED
    assert thirdparty.by_path("a/node_modules/p/index.js") == thirdparty.VENDORED
    assert thirdparty.by_path("poetry.lock") == thirdparty.LOCKFILE
    assert thirdparty.by_path("api/v1/user_pb2.py") == thirdparty.GENERATED
    assert thirdparty.by_path("static/site.min.css") == thirdparty.GENERATED
    assert thirdparty.by_path("src/app/main.py") is None
    assert thirdparty.by_content("x.go", b"// Code generated by protoc. DO NOT EDIT.\n") \
        == thirdparty.GENERATED
    assert thirdparty.by_content("a.js", b"var a=1;" * 200) == thirdparty.MINIFIED
    assert thirdparty.by_content("a.js", b"var a = 1;\n" * 200) is None
    # A distribution installed from the project itself is the project's, not a copy.
    site = tmp_path / "site"
    info = site / "own-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "RECORD").write_text("own/__init__.py,sha256=abc,10\n")
    (info / "direct_url.json").write_text(json.dumps({"url": tmp_path.as_uri(),
                                                      "dir_info": {}}))
    other = site / "lib-2.0.dist-info"
    other.mkdir()
    (other / "RECORD").write_text("lib/core.py,sha256=def,10\nlib-2.0.dist-info/RECORD,,\n")
    found = thirdparty.Installed.scan([site], tmp_path.resolve())
    assert found.digests == {"def"} and found.packages == {"lib"}


# -- 2. the floor ----------------------------------------------------------------------------
def test_a_prompt_below_the_floor_gets_nothing_not_even_the_header(served: Served) -> None:
    capture(served, "s1", "Set up the job queue for push notifications.",
            "River with riverpgxv5 on the same Postgres; queues default (10 workers) and "
            "push (20 workers).")
    assert "River" in prompt(served, "Which job queue runs our push notifications?")
    for general in ("What happens if you write to a nil map in Go?",
                    "What's the difference between a buffered and an unbuffered channel?",
                    "thanks, that's all for today!", "nice work 🎉"):
        assert served.hook("UserPromptSubmit", {"session_id": "g", "prompt": general}) == {}


def test_a_question_about_the_craft_needs_a_clear_match(served: Served) -> None:
    """A general question sharing a word or two with memory ("map", "write") is given
    nothing; the same words asked about the project still get the memory."""
    capture(served, "s1", "CI is slow, look at the race detector.",
            "-race caught the feed cache map write in March, so it stays; the Go module "
            "cache is on now.")
    general = "In Go, what happens if you write to a nil map?"
    assert admit.generic_question(general)
    assert served.hook("UserPromptSubmit", {"session_id": "g", "prompt": general}) == {}
    ours = "Why do we keep the race detector in CI?"
    assert not admit.generic_question(ours)
    assert "race caught the feed cache map write" in prompt(served, ours)
    for project in ("What is the docs site built with?", "How do we deploy the API now?",
                    "What does our release tag look like?"):
        assert not admit.generic_question(project), project
    for craft in ("What's the difference between a buffered and an unbuffered channel?",
                  "How do I write a table-driven test in Go?", "Explain Rust's orphan rule.",
                  "unrelated, what is the difference between `count` and `for_each`?",
                  "Random Rust question: how do I write a function that takes any iterator?"):
        assert admit.generic_question(craft), craft
    assert admit.small_talk("ah ok makes sense.")


@pytest.mark.parametrize(("prompt", "craft"), [
    ("is it true that bcrypt truncates passwords longer than 72 bytes?", True),
    ("show me how to implement retries with exponential backoff and jitter in Go", True),
    ("context.WithTimeout vs context.WithDeadline — when should I use which?", True),
    ("Kotlin: what's the difference between `launch` and `async` in coroutines?", True),
    ("`ERROR: deadlock detected` — what does it mean and how do I avoid it?", True),
    ("how do I avoid rebuilding the whole widget tree on every setState", True),
    ("my pods get OOMKilled but the app's own metrics show low heap usage, what are common "
     "reasons?", True),
    ("When does the churn model get retrained?", False),  # "the" thing it asks about
    ("what's the schedule of the `revenue_daily` dag", False),
    ("why is linear history required on main, who pushed for that?", False),  # what happened
    ("What does a release tag for billing-svc look like?", False),  # a service's name
    ("how is `release.yml` triggered?", False),  # a file of the project's
    ("what's the MSRV for tidemark these days?", False),
    ("Is the gateway still on 8080?", False),
])
def test_a_question_about_the_craft_is_told_by_its_form_and_ties(prompt: str,
                                                                 craft: bool) -> None:
    """Forms read anywhere a clause starts, and what ties a question to the project: its
    words ("still", "these days"), an event ("who pushed for that?"), a thing asked about as
    known ("the churn model"), a file, a service's name (``benchmarks/craft_questions.py``
    measures it on 300 labelled questions)."""
    assert admit.generic_question(prompt) is craft


def test_a_question_about_the_craft_is_judged_whole_not_by_its_halves(served: Served) -> None:
    """"What is a goroutine leak and how can I detect one in tests?" asks about the craft;
    its second half alone ("how can I detect one in tests?") is short enough for a memory
    about the project's tests to match most of its words."""
    for n, (asked, done) in enumerate([
            ("Which queue for push?", "River on the same Postgres, one queue, 20 workers."),
            ("Where do we deploy?", "Fly.io, one app, kettle-api in fra."),
            ("Pool size?", "pgxpool max_conns 40 per machine, one pool each."),
            ("Tracing?", "Sentry samples 5% of transactions, one project."),
            ("Add make targets for the tests.",
             "`make test` runs `go test -race ./...`; integration tests sit behind the build "
             "tag `integration` and use testcontainers.")]):
        capture(served, f"s{n}", asked, done)
    general = "What is a goroutine leak and how can I detect one in tests?"
    assert admit.generic_question(general)
    assert served.hook("UserPromptSubmit", {"session_id": "g", "prompt": general}) == {}
    assert "testcontainers" in prompt(served, "How do we run the integration tests?")


def test_a_turn_that_only_asked_the_same_question_is_no_answer(served: Served) -> None:
    capture(served, "s1", "Which region do the production machines of the billing API run in?",
            "Good question, I'll find out and get back to you.")
    assert served.hook("UserPromptSubmit", {
        "session_id": "x",
        "prompt": "Which region do the production machines of the billing API run in?"}) == {}


def test_a_prompt_asking_two_things_gets_both(served: Served) -> None:
    served.json("add", "Ana owns the billing service.")
    served.json("add", "Database pool size: 20.")
    assert parts("Who owns billing, and what is the database pool size?") == [
        "Who owns billing", "what is the database pool size?"]
    text = prompt(served, "Who owns billing, and what is the database pool size?")
    assert "Ana owns the billing service." in text and "Database pool size: 20." in text


# -- 3. excerpts by statement ------------------------------------------------------------------
def test_the_excerpt_is_the_matching_statements_and_the_result(served: Served) -> None:
    capture(served, "s1", "Three things: the cache TTL, the CI runner, and the logo colour.",
            "Done.\n- cache TTL for the home feed is now 5 minutes\n- CI runs on the "
            "self-hosted runner ci-large-2\n- logo colour is #ff6600")
    text = prompt(served, "How long is the home feed cache TTL?")
    (entry,) = entries(text)
    body = "\n".join(entry[1:])
    assert "cache TTL for the home feed is now 5 minutes" in body
    assert "ci-large-2" not in body and "#ff6600" not in body  # the other topics left out
    # Only the request matches: its result comes with it, never the request alone.
    capture(served, "s2", "Pin the Terraform provider versions.",
            "Done: aws ~> 5.60, kubernetes ~> 2.31.")
    (entry,) = entries(prompt(served, "Did we pin the Terraform provider versions?"))
    assert any(line.startswith("Result:") and "5.60" in line for line in entry[1:])


def test_statements_keep_code_spans_and_fences_whole() -> None:
    content = ("Request: how do I run it?\nResult: Run it like this: ```bash make test - "
               "go test ./... ``` - then `make lint - strict` - done.")
    pieces = [s.text for s in statements(content)]
    assert "```bash make test - go test ./... ```" in pieces  # a fence is one statement
    assert any("`make lint - strict`" in p for p in pieces)  # a span's " - " is no bullet
    assert [s.part for s in statements(content)][:1] == ["request"]


def _hit(content: str, rid: str = "m1", **kw: Any) -> Hit:
    weight = {"retri": 0.5}
    return Hit(id=rid, content=content, created_at=1.7e9, client="claude-code",
               passages=[Passage(0, len(content), 0.5, weight)], **kw)


def test_a_long_statement_is_cut_outside_its_code_spans_and_said_once() -> None:
    long = ("The retry policy " + "waits a little longer every time " * 8
            + "and reads `config.retry.backoff_ms from the gateway settings file` at start.")
    block = injection.recall([_hit(long), _hit(long, rid="m2")],
                             where=injection.Where(None, None, None))
    assert block is not None and block.ids == ["m1"]  # m2 would say the same again
    shown = entries(block.text)[0][1]
    assert shown.endswith(" …") and shown.count("`") % 2 == 0


# -- 4. a compact, honest format ---------------------------------------------------------------
def test_one_provenance_line_and_current_only_where_the_policy_judged(served: Served) -> None:
    root = served.root
    first = git_init(root)
    served.json("add", "Gateway timeout retry attempts: 2.")  # a claim: judged
    served.json("add", "The retry dashboards are checked every Friday before a deploy.")
    (judged,) = entries(prompt(served, "How many gateway retry attempts?"))
    (unjudged,) = entries(prompt(served, "When are the retry dashboards checked?"))
    assert judged[1:] == ["Gateway timeout retry attempts: 2."]  # one line of provenance
    assert unjudged[1:] == ["The retry dashboards are checked every Friday before a deploy."]
    assert judged[0].endswith(" · current") and "current" not in unjudged[0]
    assert " · note" in judged[0] and "branch" not in judged[0] and first[:10] not in judged[0]
    # A new revision: the memory's own is named, with how it relates to HEAD.
    (root / "x.txt").write_text("x")
    commit(root, "x")
    gitinfo.clear_cache()  # the daemon (in this process) caches HEAD for a moment
    text = prompt(served, "How many gateway retry attempts?")
    assert f"at {first[:10]} (an ancestor of HEAD)" in text


def test_the_block_keeps_to_its_token_budget() -> None:
    hits = [_hit(f"Retry rule {i}: " + "attempts back off by doubling " * 6, rid=f"m{i}")
            for i in range(5)]
    where = injection.Where(None, None, None)
    big = injection.recall(hits, where=where, max_records=5, max_tokens=10_000)
    small = injection.recall(hits, where=where, max_records=5, max_tokens=200)
    assert big is not None and small is not None
    assert len(small.ids) < len(big.ids) and small.tokens <= 200
    assert small.tokens == injection.estimate_tokens(small.text)
    assert injection.recall(hits, where=where, max_tokens=20) is None  # not even one fits


def test_a_superseded_statement_is_left_out_and_named() -> None:
    content = "Gateway retry attempts: 3.\nGateway retry attempts: 5."
    claims = [Claim("c1", "m1", "gateway retry attempts", "value", "3", status="superseded",
                    start=0, end=26, superseded_by="m9", replaced_by_value="5"),
              Claim("c2", "m1", "gateway retry attempts", "value", "5", start=27,
                    end=len(content))]
    # The query matched the retired statement (``Hit.retired_matches``): the note says so.
    block = injection.recall([_hit(content, claims=claims, retired_matches={"c1": 0.5})],
                             where=injection.Where(None, None, None))
    assert block is not None
    (entry,) = entries(block.text)
    assert entry[1:] == ["Gateway retry attempts: 5.",
                         "Superseded here: gateway retry attempts (now: 5, per m9)"]
    assert entry[0].endswith(" · current")
    # A query that matched only the rest of the record gets no note on what else changed.
    block = injection.recall([_hit(content, claims=claims)],
                             where=injection.Where(None, None, None))
    assert block is not None
    assert entries(block.text)[0][1:] == ["Gateway retry attempts: 5."]
    # One the prompt only brushed (a word of it, less than what the record still says
    # matched) gets none either: "Superseded here: ci takes duration" under a deploy question.
    block = injection.recall([_hit(content, claims=claims, retired_matches={"c1": 0.2})],
                             where=injection.Where(None, None, None))
    assert block is not None
    assert entries(block.text)[0][1:] == ["Gateway retry attempts: 5."]


def test_no_note_names_a_record_the_block_shows_after_it() -> None:
    """An older record ranked first, the record that changed it second: the second says
    what holds now, so the first carries no "Superseded here" note repeating it."""
    old = "Gateway retry attempts: 3.\nGateway retries back off by doubling."
    claims = [Claim("c1", "m1", "gateway retry attempts", "value", "3", status="superseded",
                    start=0, end=26, superseded_by="m9", replaced_by_value="5")]
    first = _hit(old, claims=claims, retired_matches={"c1": 0.5})
    newer = _hit("Gateway retry attempts are now 5 (was 3).", rid="m9")
    block = injection.recall([first, newer], where=injection.Where(None, None, None))
    assert block is not None and block.ids == ["m1", "m9"]
    assert "Superseded here" not in block.text
    alone = injection.recall([first], where=injection.Where(None, None, None))
    assert alone is not None and "Superseded here: gateway retry attempts (now: 5" in alone.text


def test_a_superseded_note_gives_the_new_value_as_a_person_writes_it() -> None:
    """"now: 14 days", not the canonical "1209600s" the policy compares."""
    content = "Log groups keep 30 days.\nDrift runs every 6 hours."
    claims = [Claim("c1", "m1", "log groups keep", "duration", "2592000s", status="superseded",
                    start=0, end=24, superseded_by="m9", replaced_by_value="1209600s"),
              Claim("c2", "m1", "drift runs", "schedule", "every 21600s", status="superseded",
                    start=25, end=len(content), superseded_by="m8",
                    replaced_by_value="cron 0 0 * * *")]
    notes = injection._superseded_notes(claims)
    assert notes == ["Superseded here: log groups keep (now: 14 days, per m9)",
                     "Superseded here: drift runs (now: `0 0 * * *`, per m8)"], notes
    assert [values.display(v, k) for v, k in [("9000/h", "rate"), ("0.05", "percent"),
                                             ("every 21600s", "schedule"), ("40", "number")]] \
        == ["150/min", "5%", "every 6 hours", "40"]


def test_session_start_leaves_small_talk_out_and_flags_a_contradicting_outcome(
        served: Served) -> None:
    served.json("add", "Gateway timeout retry attempts: 2.")
    capture(served, "s1", "Set retry attempts to 4 on the staging gateway.",
            "Gateway timeout retry attempts: 4.")
    capture(served, "s2", "cool, thanks! have a good weekend", "You too!")
    out = served.hook("SessionStart", {"session_id": "s3", "source": "startup"})
    text = out["hookSpecificOutput"]["additionalContext"]
    outcomes = text.split("Last outcomes on branch")[1]
    assert "have a good weekend" not in outcomes
    decisions = text.split("Current decisions")[1].split("\n\n")[0]
    if '"Gateway timeout retry attempts: 2."' in decisions:  # both current: one flags the other
        assert "CONTRADICTS a current decision" in outcomes or "CONFLICTED" in decisions


# -- 5. the ledger ---------------------------------------------------------------------------------
def test_the_ledger_says_what_was_injected_and_whether_it_was_used(served: Served) -> None:
    root = served.root
    served.json("add", "Outbound calls go through `GatewayClient` in gateway/http_client.py.")
    start = served.hook("SessionStart", {"session_id": "s1", "source": "startup"})
    assert "GatewayClient" in start["hookSpecificOutput"]["additionalContext"]
    assert "GatewayClient" in prompt(served, "Where do outbound calls go?", session="s1")
    capture(served, "s1", "Where do outbound calls go?",
            "Through GatewayClient; I added a timeout to gateway/http_client.py.")
    assert "GatewayClient" in prompt(served, "Where do outbound calls go?", session="s2")
    capture(served, "s2", "Where do outbound calls go?", "I could not find that.")
    stats = served.json("stats", "--recent", "10")
    total = stats["totals"]
    assert total["injections"] == 3 and total["judged"] == 3 and total["used"] == 2
    assert total["tokens"] > 0 and total["records"] >= 3
    newest = stats["recent"]
    assert [(i["session_id"], i["kind"], i["used"]) for i in reversed(newest)] == [
        ("s1", "start", True), ("s1", "prompt", True), ("s2", "prompt", False)]
    assert "gateway/http_client.py" in newest[1]["used_markers"]
    assert {r["session"]: r["used"] for r in stats["by_session"]} == {"s1": 2, "s2": 0}
    assert [r["client"] for r in stats["by_client"]] == ["claude-code"]
    assert len(stats["by_day"]) == 1
    assert served.call("status")["ledger"]["last_7_days"]["injections"] == 3
    listing = served.cli("stats", "--by", "session").stdout
    assert "used in 2 of 3 judged" in listing and "s2" in listing
    page = open_viewer(served).get("/ledger").body
    assert "<svg" in page and "tokens injected per day" in page and "s1" in page
    assert served.hook("UserPromptSubmit", {"session_id": "s4", "prompt": "thanks!"}) == {}
    assert served.json("stats")["totals"]["injections"] == 3  # nothing given, nothing noted
    del root


def test_markers_are_what_shows_use() -> None:
    found = markers("Result: We use Memcached now; `RetryPolicy` reads backoff_ms "
                    "(250 ms) from config/gateway.toml, see https://wiki.example/retry.")
    assert {"Memcached", "RetryPolicy", "backoff_ms", "250 ms", "config/gateway.toml",
            "https://wiki.example/retry"} <= set(found)
    assert used(found, "I switched RetryPolicy to 300 ms.", asked="") == ["RetryPolicy"]
    assert used(found, "RetryPolicy it is", asked="what does RetryPolicy do?") == []


def test_hit_rows_hydrate_in_one_query_what_the_lookups_gave(served: Served) -> None:
    old = served.json("add", "Gateway timeout retry attempts: 5.")["id"]
    new = served.json("add", "Gateway timeout retry attempts: 2.", "--supersedes", old)["id"]
    served.json("add", "The retry dashboards are checked every Friday before a deploy.")
    served.call("search", {"query": "settle"})
    store = served.daemon.store
    ids = [r[0] for r in store._read().execute("SELECT id FROM records")]
    rows = store.hit_rows(ids)
    assert set(rows) == set(ids) == set(store.get_rows(ids))
    claims, spans, relations = (store.claims_for(ids), store.claim_spans(ids),
                                store.relations_for(ids))
    for rid, row in rows.items():
        assert {k: row[k] for k in store.get_rows([rid])[rid].keys()} == dict(
            store.get_rows([rid])[rid])
        assert [{k: c[k] for k in claims[rid][0]} for c in row["claims"]] == claims[rid] \
            if claims[rid] else row["claims"] == []
        assert row["spans"] == {c["claim_id"]: spans[c["claim_id"]] for c in claims[rid]}
        assert sorted(map(str, row["relations"])) == sorted(map(str, relations[rid]))
    assert rows[old]["relations"] and rows[new]["relations"]


def test_a_request_restating_a_value_its_turn_retired_is_left_out(served: Served) -> None:
    """The turn's request said the pool size its result stated; once a later turn raised
    the pool, neither the result's line nor the request's sentence presents the old size."""
    capture(served, "s1", "DB layer: sqlc on top of pgx. A pool of 20 connections is plenty.",
            "Done:\n- pgxpool with max_conns 20 and min_conns 2\n- migrations with goose")
    capture(served, "s2", "We exceed the pool at peak; raise it.",
            "Raised the pgxpool max_conns from 20 to 40 in `internal/store/pool.go`.")
    text = prompt(served, "How many connections does the pgx pool hold?")
    assert "40" in text
    assert "A pool of 20" not in text and "max_conns 20" not in text
    # The record that changed it comes first, though its words ("pgxpool max_conns") match
    # the question far less than the older record's do.
    first = entries(text)[0]
    assert "Raised the pgxpool max_conns from 20 to 40" in " ".join(first), text


def test_session_start_quotes_no_statement_a_retired_claim_shared(served: Served) -> None:
    """"pgxpool with max_conns 20 and min_conns 2" held a claim on each; once max_conns went
    to 40 the sentence is no current decision, though min_conns 2 was never changed."""
    capture(served, "s1", "DB layer: sqlc on top of pgx.",
            "Done:\n- pgxpool with max_conns 20 and min_conns 2\n- migrations with goose")
    capture(served, "s2", "We exceed the pool at peak; raise it.",
            "Raised the pgxpool max_conns from 20 to 40 in `internal/store/pool.go`.")
    served.call("search", {"query": "settle", "top_k": 1})
    out = served.hook("SessionStart", {"session_id": "s3", "source": "startup"})
    text = str(out["hookSpecificOutput"]["additionalContext"])
    decisions = text.split("Current decisions", 1)[1].split("\n\n", 1)[0]
    assert "from 20 to 40" in decisions
    assert "max_conns 20 and" not in decisions, decisions
    assert "DB layer: sqlc on top of pgx" in decisions  # its other statement still stands
    assert "migrations with goose" in decisions  # and so does the list's other item
    assert "min_conns" not in decisions  # no label borrowed from the retired clause beside it


def test_what_replaced_the_asked_statement_comes_first_and_nothing_else_is_pulled() -> None:
    """An older turn matches the prompt on a statement since retired: the record that
    retired it answers, though its own words match little, and comes first; a record that
    retired something else of the older turn, or a statement the prompt only brushes, is
    not pulled in by it."""
    older = ("Request: A pool of 20 connections is plenty.\n"
             "Result: pgxpool with max_conns 20; retries 5 with jitter.")
    claims = [Claim("o::c1", "old", "pgxpool max_conns", "number", "20", status="superseded",
                    start=54, end=76, superseded_by="new", replaced_by_value="40"),
              Claim("o::c2", "old", "retries", "number", "5", status="superseded",
                    start=78, end=len(older), superseded_by="other", replaced_by_value="3")]
    pool = {"pool": 0.4, "connect": 0.4}
    old = Hit(id="old", content=older, relevance=0.6, claims=claims, session_id="a",
              passages=[Passage(0, 44, 0.4, {"pgx": 0.4})],
              retired_matches={"o::c1": 0.8, "o::c2": 0.1})
    new = Hit(id="new", content="Result: Raised max_conns from 20 to 40.", relevance=0.05,
              session_id="b")
    other = Hit(id="other", content="Result: Retries now 3.", relevance=0.05, session_id="c")
    prompt = "How many connections does the pgx pool hold?"
    assert [h.id for h in admit.admit([old, new, other], prompt)] == ["new", "old"]
    # The same older turn, matched mostly on what still stands: nothing is pulled in.
    old.retired_matches = {"o::c1": 0.1}
    old.passages = [Passage(0, 44, 0.8, pool)]
    assert [h.id for h in admit.admit([old, new, other], prompt)] == ["old"]


def test_retired_matches_name_the_claims_the_query_found_in_retired_statements() -> None:
    from lintaid.retrieval.passages import retired_matches
    content = ("Request: A pool of 20 connections is plenty.\n"
               "Result: pgxpool with max_conns 20 and min_conns 2.\nResult: retries 5.")
    c1 = Claim("c1", "m", "pgxpool max_conns", "number", "20", status="superseded",
               start=54, end=100, superseded_by="n")
    c2 = Claim("c2", "m", "retries", "number", "5", status="superseded",
               start=101, end=len(content), superseded_by="o")

    def match(text: str) -> dict[str, float]:
        return {w: 0.25 for w in ("pool", "connections") if w in text}

    # The request restates c1's 20 beside "pool": its match counts for c1; c2's does not.
    assert retired_matches(content, [c1, c2], match) == {"c1": 0.5}
    assert retired_matches(content, [c1, c2], lambda text: {}) == {}


def test_a_request_its_result_changed_is_no_decision_and_leaves_no_stub(served: Served) -> None:
    """"Our CI runs on Python 3.10; bump it." answered by "CI now pins Python 3.11 instead of
    3.10": the request's 3.10 is no current decision, the outcome line does not start with
    what cutting it left (";"), and the prompt is given the result."""
    capture(served, "s1", "Our CI runs on Python 3.10; bump it.",
            "CI now pins Python 3.11 instead of 3.10 in `.github/workflows/ci.yml`.")
    served.call("search", {"query": "settle", "top_k": 1})
    out = served.hook("SessionStart", {"session_id": "s2", "source": "startup"})
    text = str(out["hookSpecificOutput"]["additionalContext"])
    assert "runs on Python 3.10" not in text, text
    assert "Request: bump it. | Result: CI now pins Python 3.11" in text, text
    given = prompt(served, "Which Python version does CI use?")
    assert "CI now pins Python 3.11" in given and "runs on Python 3.10" not in given


def test_of_two_memories_answering_in_the_same_terms_the_newer_is_shown() -> None:
    # Two memories the policy did not relate (no cue it knows: "moved", "now", "instead of")
    # state the prompt's terms alike: the newer is shown in the older's place; one that adds
    # terms of its own is a second answer and stays.
    def hit(rid: str, at: float, **terms: float) -> Hit:
        text = f"{rid}: the nightly export job writes its files"
        return Hit(id=rid, content=text, created_at=at, relevance=0.6,
                   passages=[Passage(0, len(text), sum(terms.values()), terms)])

    older = hit("m-nas", 100.0, export=0.3, job=0.2, file=0.3)
    newer = hit("m-s3", 200.0, export=0.3, job=0.2, file=0.2)
    role = hit("m-role", 50.0, export=0.2, role=0.5)
    assert [h.id for h in admit.adding([older, newer, role], admit.GAIN)] == ["m-s3", "m-role"]
    # The other way round nothing changes: an older memory never displaces a newer one.
    assert [h.id for h in admit.adding([newer, older], admit.GAIN)] == ["m-s3"]
    # Nor does a newer one that leaves out a share of what the older said.
    partial = hit("m-part", 300.0, export=0.3)
    assert [h.id for h in admit.adding([older, partial], admit.GAIN)] == ["m-nas"]
    # Nor one that shares a single word of the prompt with it ("timeout"): no sign of one answer.
    one_word = hit("m-one", 100.0, timeout=0.9)
    newer_one = hit("m-one-new", 200.0, timeout=0.9)
    assert [h.id for h in admit.adding([one_word, newer_one], admit.GAIN)] == ["m-one"]
    # Nor one the older disagrees with in review: both sides are shown.
    disputed = Hit(**{**newer.__dict__, "reviews": ["rv1"]})
    older_disputed = Hit(**{**older.__dict__, "reviews": ["rv1"]})
    assert [h.id for h in admit.adding([older_disputed, disputed], admit.GAIN)] == [
        "m-nas", "m-s3"]


def test_a_turns_outcome_line_leaves_its_code_out(served: Served) -> None:
    capture(served, "s1", "Move the uploads to R2.",
            "Moved uploads:\n\n- uploads now go to the R2 bucket `kettle-media`\n"
            "```sh\nrclone sync nas:photos r2:kettle-media\n```")
    out = served.hook("SessionStart", {"session_id": "s2", "source": "startup"})
    outcomes = out["hookSpecificOutput"]["additionalContext"].split("Last outcomes on branch")[1]
    assert "uploads now go to the R2 bucket" in outcomes
    assert "rclone" not in outcomes and "```" not in outcomes


def test_a_request_beside_its_result_shows_what_it_asked_and_what_the_result_confirms() -> None:
    """A request is context: its statement of a value the result did otherwise ("make it 15
    minutes", answered with 5) is left out beside the result; one whose value the result
    states too (a pasted decision the result applied), and a question, are shown."""
    def hit(request: str, result: str, claims: list[Claim]) -> Hit:
        content = f"Request: {request}\nResult: {result}"
        sts = [st for st in statements(content) if not st.listing]
        return Hit(id="m1", content=content, created_at=1.7e9, client="claude-code",
                   claims=claims, passages=[Passage(st.start, st.end, 0.5, {"cach": 0.5})
                                            for st in sts])

    def lines(h: Hit) -> list[str]:
        block = injection.recall([h], where=injection.Where(None, None, None))
        assert block is not None
        return entries(block.text)[0][1:]

    asked = "make the catalog cache 15 minutes."
    start = len("Request: ") + asked.index("15")
    changed = hit(asked, "catalog cache kept at 5 minutes, the hit ratio is fine.",
                  [Claim("c1", "m1", "catalog cache", "duration", "15 minutes",
                         start=start, end=start + 10)])
    assert [line for line in lines(changed) if "15 minutes" in line] == []
    assert any("5 minutes" in line for line in lines(changed))
    applied = hit(asked, "catalog cache now 15 minutes.",
                  [Claim("c1", "m1", "catalog cache", "duration", "15 minutes",
                         start=start, end=start + 10)])
    assert lines(applied)[0] == "Request: make the catalog cache 15 minutes."
    question = hit("how long is the catalog cache kept?", "catalog cache: 5 minutes.", [])
    assert lines(question)[0] == "Request: how long is the catalog cache kept?"
