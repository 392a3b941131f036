"""Current state from the prose agents write: statements, typed values, cues and relations.

Each case is a pair (or a few) of records as a capture or a note would store them, derived by
the real engine on its reference store (``MemoryPolicyStore``), and asserts what is current,
what is retired, what waits in review. The phrasings are the kinds the rules must generalise
over (a value after a colon or in parentheses, verbs of hosting and rendering, rates, a
subject named differently on the two sides of a change, reverts, requests), not one template.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from lintaid.capture.record import turn_record
from lintaid.policy import cues, topics
from lintaid.policy.beliefs import record_claims_of
from lintaid.policy.inputs import RecordInput, record_claims
from lintaid.policy.memory_store import MemoryPolicyStore
from lintaid.policy.relations import CONTEXT, SUPERSEDES
from lintaid.policy.sentences import split_sentences
from lintaid.policy.statements import record_statements
from lintaid.policy.values import DURATION, HANDLE, RATE, URL, VERSION, find_values


def turn(request: str, result: str) -> str:
    rec = turn_record(client="claude-code", session_id="s", event="Stop", turn_id="t",
                      request=request, result=result, paths=[], tools=[], cwd=None,
                      branch=None, revision=None, metadata={})
    assert rec is not None
    return rec.content


class Story:
    """Records written one after another, derived as the daemon derives them."""

    def __init__(self) -> None:
        self.store = MemoryPolicyStore()
        self.n = 0

    def add(self, text: str, kind: str = "capture") -> str:
        self.n += 1
        rid = f"r{self.n:02d}"
        self.store.put(RecordInput(record_id=rid, text=text, kind=kind,
                                   created_at=1000.0 + self.n))
        return rid

    def note(self, text: str) -> str:
        return self.add(text, "note")

    def capture(self, request: str, result: str) -> str:
        return self.add(turn(request, result))

    def values(self, rid: str, status: str | None = None) -> set[str]:
        """The values of ``rid``'s claims (with that status), context claims left out."""
        states = self.store.claim_state_map()
        return {c.value for c in self.store.claims([rid]) if c.cue_kind != CONTEXT
                and (status is None or states.get(c.claim_id, "current") == status)}

    def status_of(self, rid: str, value: str) -> str:
        states = self.store.claim_state_map()
        found = {states.get(c.claim_id, "current") for c in self.store.claims([rid])
                 if c.value == value}
        assert found, f"{rid} has no claim of {value!r}: {self.values(rid)}"
        return "superseded" if found == {"superseded"} else sorted(found)[0]


# -- 1. beliefs come from what was done; a request is context -----------------------------------


def test_a_request_is_never_a_belief_and_its_result_retires_what_it_quoted() -> None:
    s = Story()
    rid = s.capture("Our CI runs on Python 3.10; bump it.",
                    "CI now pins Python 3.11 instead of 3.10.")
    claims = s.store.claims([rid])
    asked = [c for c in claims if c.cue_kind == CONTEXT]
    done = [c for c in claims if c.cue_kind != CONTEXT]
    assert [c.value for c in done] == ["3.11"]
    assert [c.value for c in asked] == ["3.10"]  # what was asked is kept as context ...
    assert s.status_of(rid, "3.10") == "superseded"  # ... and retired by its own result
    assert s.status_of(rid, "3.11") == "current"


def test_a_request_is_not_confirmed_by_a_result_that_only_weighs_it() -> None:
    """"one ALB per service, less to maintain" beside a proposal, answered by "Possible, but
    I'm not sure it's less to maintain: one ALB per service = 3+ ALBs ...": the result only
    weighed it, so the request's value stays context."""
    text = turn("maybe we should replace ingress-nginx with the AWS Load Balancer Controller? "
                "one ALB per service, less to maintain",
                "Possible, but I'm not sure it's less to maintain:\n\n"
                "- one ALB per service = 3+ ALBs, each ~20 EUR/month\n"
                "- migration touches every Ingress object\n\nI think not now.")
    alb = [c for c in record_claims_of(text, "capture") if c.value == "alb"]
    assert alb and {c.cue_kind for c in alb} == {CONTEXT}, alb


def test_a_request_reporting_trouble_stays_context_whatever_its_result_repeats() -> None:
    text = turn("The Android emulator can't reach my local backend on localhost:8080, the iOS "
                "simulator can.",
                "In the Android emulator `localhost` is the emulator itself: use "
                "`10.0.2.2:8080`, or `adb reverse tcp:8080 tcp:8080` and then localhost:8080.")
    asked = [c for c in record_claims_of(text, "capture") if c.start < text.index("Result:")]
    assert asked and {c.cue_kind for c in asked} == {CONTEXT}, asked
    text = turn("`istioctl proxy-status` on my mac: 'client version 1.22 is not compatible with "
                "control plane 1.26'", "Your istioctl 1.22 is an old Homebrew install; the "
                "control plane is on 1.26, so `brew upgrade istioctl`.")
    asked = [c for c in record_claims_of(text, "capture") if c.start < text.index("Result:")]
    assert asked and {c.cue_kind for c in asked} == {CONTEXT}, asked


def test_a_request_confirmed_by_its_result_is_a_belief() -> None:
    s = Story()
    rid = s.capture("From next week the app events land in s3://lake-raw/events/.",
                    "Done: the stage now reads `url = 's3://lake-raw/events/'`.")
    assert "s3://lake-raw/events" in s.values(rid)


def test_an_unconfirmed_request_value_is_retired_by_the_next_belief_on_its_topic() -> None:
    s = Story()
    asked = s.capture("The HTTP client is requests; tidy the retry code.",
                      "Split gateway/retry.py into policy and backoff.")
    s.capture("Swap the HTTP client.", "The gateway now uses httpx for the HTTP client.")
    (said,) = [c for c in s.store.claims([asked]) if c.value == "requests"]
    assert said.cue_kind == CONTEXT
    assert s.status_of(asked, "requests") == "superseded"


def test_questions_proposals_plans_and_conditions_assert_nothing() -> None:
    for text in ("Should we move the queue to Kafka?", "Maybe asynq for the jobs?",
                 "We could switch the cache to Memcached.", "We will move to Postgres 16 "
                 "next week.", "If traffic grows we might add a second Redis replica.",
                 "I'd suggest tightening the warning to 2 hours."):
        assert record_claims_of(text, "note") == [], text


def test_the_items_of_a_suggestion_are_not_beliefs() -> None:
    text = turn("Sync is hourly now.", "I'd suggest tightening it to:\n\n"
                "- warn after 2 hours\n- error after 6 hours\n\nWant that?")
    assert [c for c in record_claims_of(text, "capture") if c.cue_kind != CONTEXT] == []


def test_what_a_hypothetical_heading_heads_is_no_belief_and_retires_nothing() -> None:
    s = Story()
    kept = s.note("The snapshot format is v3.")
    plan = s.capture("What would a 1.0 look like?",
                     "**Hypothetical 1.0 plan (nothing changed)**\n\n"
                     "- snapshot format: v4 with a stable header\n"
                     "- default port: 8080\n\n"
                     "## Done today\n\n"
                     "- The CLI timeout is now 30 seconds.")
    assert s.status_of(kept, "v3") == "current"
    done = s.values(plan)
    assert "v4" not in done and "8080" not in done
    assert "30s" in done or "30 seconds" in {v.lower() for v in done}, done


def test_a_decision_records_context_and_options_are_no_belief_and_its_decision_retires_them(
) -> None:
    """A decision record tells what was ("## Context and Problem Statement", "Context:") and
    what was weighed ("## Considered Options", "Alternatives considered") before what it
    decided: only the decision is a belief, and it retires the older note of what was."""
    s = Story()
    old = s.note("Services log with zap.")
    madr = s.add("# Use log/slog for logging\n\n"
                 "## Context and Problem Statement\n\n"
                 "Most services log with zap; two still use logrus.\n\n"
                 "## Considered Options\n\n"
                 "* zerolog\n* log/slog\n\n"
                 "## Alternatives considered\n\n"
                 "- apex/log\n\n"
                 "## Decision Outcome\n\n"
                 "Services now log with slog.\n\n"
                 "## Pros and Cons of the Options\n\n"
                 "### zerolog\n\n"
                 "* Good, because zerolog runs on Go 1.19.\n", "document")
    done = s.values(madr)
    assert "zerolog" not in done and "apex/log" not in done, done
    assert "zap" not in done and "logrus" not in done, done
    assert "outcome" not in done and "statement" not in done, done  # its section headings
    assert "1.19" not in done, done  # under an option's subheading, still an option
    assert any("slog" in v for v in done), done
    assert s.status_of(old, "zap") == "superseded"
    # Nygard's labels, pasted into a request: "Context:" is what was, "Decision:" is not.
    pasted = s.capture("ADR-005: Logging with log/slog\nContext: most services use zap, two "
                       "still use logrus.\nDecision: all services log through log/slog.",
                       "Done: `platform/log` now builds a `*slog.Logger`.")
    claims = s.store.claims([pasted])
    assert {c.cue_kind for c in claims if c.value in ("zap", "logrus")} == {CONTEXT}, claims
    # A bold label's paragraph, hard-wrapped, is context to its blank line.
    wrapped = s.add("**Status**: accepted\n\n**Context**: most services log with zap,\n"
                    "and two still use logrus.\n\n**Decision**: services log with slog.\n",
                    "document")
    assert s.values(wrapped) == {"slog"}, s.values(wrapped)


def test_a_setting_named_right_before_its_value_is_what_the_value_is_of() -> None:
    """"`TRANSFORM_WH` is X-Small again" says nothing else of what X-Small is of; and
    "x-small" is another size than "small", not the same one said longer."""
    (claim,) = record_claims_of("Undone: `TRANSFORM_WH` is X-Small again", "note")
    assert (claim.subject, claim.value) == ("transform_wh", "x-small")
    s = Story()
    bigger = s.capture("Runs are slow, size it up.", "## `TRANSFORM_WH` → Small")
    s.capture("Too expensive, undo it.", "## Undone: `TRANSFORM_WH` is X-Small again")
    assert s.status_of(bigger, "small") == "superseded"


def test_a_port_and_a_release_are_no_two_choices_for_one_thing() -> None:
    s = Story()
    port = s.note("routing-api: still on port 8080, nothing changed there.")
    s.note("Releases are git tags with the service prefix: `routing-api/v1.14.0`.")
    assert s.status_of(port, "8080") == "current"
    version = s.note("CI runs Python 3.10.")
    s.note("CI now runs 3.11.")  # a number said alone still meets a version
    assert s.status_of(version, "3.10") == "superseded"


@pytest.mark.parametrize(("before", "after"), [
    ("CI runs on Python 3.10 (`python-version: 3.10` in ci.yml).",
     "CI now pins Python 3.11 instead of 3.10."),
    ("Sessions expire after 30 minutes (`SESSION_TTL=1800`).",
     "Sessions now expire after 15 minutes."),
    ("Changed `drift.yml` cron to `0 */6 * * *`, so the drift check runs 4 times per day "
     "(every 6 hours).", "Rolled back `drift.yml` to the nightly schedule (`0 0 * * *`)."),
])
def test_a_value_said_twice_in_one_statement_is_retired_in_both_sayings(
        before: str, after: str) -> None:
    """A statement that gives one value two ways ("Python 3.10" and `python-version: 3.10`,
    "30 minutes" and ``SESSION_TTL=1800``, a cron and its period) keeps nothing of it
    current once a newer statement changed it."""
    s = Story()
    old = s.note(before)
    s.note(after)
    states = s.store.claim_state_map()
    kept = [c.value for c in s.store.claims([old])
            if states.get(c.claim_id, "current") == "current"
            and any(ch.isdigit() for ch in c.value) and not c.value.endswith(".yml")]
    assert kept == [], kept


# -- 2. statements and typed values ---------------------------------------------------------------


def test_statements_cut_at_a_clause_colon_and_keep_a_key_colon() -> None:
    text = turn("Builds are slow.", "Rolled the image builder back to Kaniko: removed the "
                "buildx cache step and the `--push` flag.\n- pgxpool settings: max_conns: 40")
    belief, request = record_statements(text, "capture")
    said = [st.text for st in belief]
    assert "Rolled the image builder back to Kaniko" in said
    assert any(t.startswith("removed the buildx cache step") for t in said)
    assert "pgxpool settings: max_conns: 40" in said
    assert [st.text for st in request] == ["Builds are slow"]


@pytest.mark.parametrize(("text", "kind", "norm"), [
    ("raised the pool to 40 (DB_POOL_SIZE=40)", "number", "40"),
    ("the cache TTL is 5m", DURATION, "300s"),
    ("entries now expire after 5 minutes", DURATION, "300s"),
    ("uploads are capped at 20 uploads per hour", RATE, "20/h"),
    ("the throttle is 150 rpm", RATE, "9000/h"),
    ("the drift check runs 4 times per day", "schedule", "every 21600s"),
    ("cron `0 */6 * * *`", "schedule", "every 21600s"),  # an interval is its period
    ("cron `0 0 * * *`", "schedule", "cron 0 0 * * *"),  # a time of day is more than that
    ("CI pins Python 3.11", VERSION, "3.11"),
    ("review goes to @marek-nowak", HANDLE, "@marek-nowak"),
    ("artifacts go to s3://acme-beta/builds/", URL, "s3://acme-beta/builds"),
    ("tracing samples 5% of transactions", "percent", "0.05"),
    ("`TracesSampleRate: 0.2`", "number", "0.2"),  # a setting's number, not a version
    ("`sample_rate = 0.25`", "number", "0.25"),
    ("python: 3.11", VERSION, "3.11"),
])
def test_values_are_found_by_their_form(text: str, kind: str, norm: str) -> None:
    found = [(v.type, v.norm) for v in find_values(text)]
    assert (kind, norm) in found, found


def test_a_setting_in_parentheses_names_the_value_it_repeats() -> None:
    claims = record_claims_of("Raised the pool to 40 (DB_POOL_SIZE=40).", "note")
    assert [c.value for c in claims] == ["40"]
    assert set(topics.name_terms("DB_POOL_SIZE")) <= {t for t, _w in claims[0].topic}


def test_cues_are_read_from_the_words() -> None:
    assert cues.cue("Rolled the image builder back to Kaniko") == cues.REVERT
    assert cues.cue("access TTL 15m -> 30m") == cues.CHANGE
    assert cues.cue("routing-api: still 8080, nothing changed there") == cues.KEEP
    assert cues.cue("log groups keep 14 days now") == cues.CHANGE  # retention, not "unchanged"
    assert cues.cue("Do you want the tighter thresholds now?") == cues.QUESTION
    assert cues.cue("handled: customer.subscription.updated") == cues.NONE  # an identifier
    assert cues.cue("tracing down to 5% of transactions") == cues.CHANGE
    assert cues.cue("it comes down to the queue depth") == cues.NONE
    assert cues.cue("He proposes Isar, it is very fast he says") == cues.PROPOSAL
    assert cues.cue("Probably your SSO session expired") == cues.PROPOSAL  # a guess
    assert cues.cue("Mikko asks how long CloudWatch keeps logs") == cues.QUESTION  # reported
    assert cues.cue("He asked us to move to Postgres 16") == cues.NONE
    # "(it was at 10%)" says what the rollout was, not what it is
    said = "halted the staged rollout in Play Console (it was at 10%)"
    assert cues.is_old_side(said, said.index("10%"), said.index("10%") + 3)


def test_a_sentence_never_ends_inside_a_code_span() -> None:
    text = ('Rule: `count` only for "0 or 1" (feature toggle: `count = var.enabled ? 1 : 0`) '
            "or really identical copies. For everything with a name, use `for_each`.")
    said = [text[sp.start:sp.end] for sp in split_sentences(text)]
    assert said[0].endswith("or really identical copies."), said
    assert len(said) == 2, said


# -- 3. relating statements ---------------------------------------------------------------------


def test_a_revert_after_a_colon_retires_the_switch_and_is_the_current_statement() -> None:
    s = Story()
    first = s.note("Image builds use Kaniko.")
    switch = s.capture("Builds are slow, use buildx.",
                       "Switched the image builder to buildx with a registry cache.")
    back = s.capture("buildx broke the cache.", "Rolled the image builder back to Kaniko: "
                     "removed the buildx cache step.")
    assert s.status_of(switch, "buildx") == "superseded"
    assert s.status_of(back, "kaniko") == "current"
    assert s.status_of(first, "kaniko") == "superseded"  # the revert states it again
    assert all(c.cue_kind == CONTEXT for c in s.store.claims([back]) if c.value == "buildx")


def test_undoing_an_explicit_replacement_retires_what_replaced_it() -> None:
    s = Story()
    s.note("Migrations use goose.")
    atlas = s.capture("Replace goose with Atlas.", "refactor(db): replace goose with Atlas")
    back = s.capture("Atlas needs a cloud login. Roll it back.",
                     "revert(db): goose is the migration tool again")
    assert s.status_of(atlas, "atlas") == "superseded"
    assert s.status_of(back, "goose") == "current"


@pytest.mark.parametrize(("old", "new", "old_value", "new_value"), [
    ("The docs site is hosted on Netlify.", "The docs site is now hosted on Vercel.",
     "netlify", "vercel"),
    ("Release notes are rendered by Hugo.", "Release notes are now rendered by Astro.",
     "hugo", "astro"),
    ("The DB pool size is 20.", "Raised the pool to 40 (DB_POOL_SIZE=40).", "20", "40"),
    ("Uploads are limited to 10 uploads per hour per user.",
     "Raised the per-user upload limit to 20 uploads per hour.", "10/h", "20/h"),
    ("The feed cache TTL is 5 minutes.", "The feed cache TTL is now 90s.", "300s", "90s"),
    ("Sentry: `TracesSampleRate: 0.2`.", "Tracing down to 5% of transactions (0.05).",
     "0.2", "0.05"),
])
def test_a_change_retires_the_older_value(old: str, new: str, old_value: str,
                                          new_value: str) -> None:
    s = Story()
    a, b = s.note(old), s.note(new)
    assert s.status_of(a, old_value) == "superseded"
    assert s.status_of(b, new_value) == "current"


def test_a_transition_retires_the_value_it_names_whatever_the_subject_is_called() -> None:
    s = Story()
    resize = s.note("The resize step uses Pillow.")
    s.note("Image thumbnails are now generated with libvips instead of Pillow.")
    assert s.status_of(resize, "pillow") == "superseded"


def test_a_memory_naming_a_documents_value_retires_it_in_memorys_view() -> None:
    s = Story()
    doc = RecordInput(record_id="docs/handlers.md", kind="document", path="docs/handlers.md",
                      text="# Handlers\n\nEvent handlers must never block for more than 50 ms.\n",
                      created_at=900.0, valid_at=900.0)
    s.store.external = [replace(c, external=True) for c in record_claims(doc)]
    assert [c.value for c in s.store.external] == ["0.05s"]
    mem = s.note("Event handlers may now block for up to 100 ms instead of 50 ms.")
    relations = [r for r in s.store.all_relations() if r.target_record == doc.record_id]
    assert [(r.kind, r.source_record, r.method) for r in relations] == [
        (SUPERSEDES, mem, "transition")]


def test_two_values_of_one_named_setting_without_a_cue_the_newer_holds() -> None:
    s = Story()
    a = s.note("Artifact bucket is s3://delta.")
    b = s.note("Artifact bucket is s3://epsilon.")
    assert s.status_of(a, "s3://delta") == "superseded"
    assert s.status_of(b, "s3://epsilon") == "current"
    (rel,) = [r for r in s.store.all_relations() if r.target_record == a]
    assert (rel.kind, rel.confidence, rel.method) == (SUPERSEDES, 0.9, "newer_same_kind")


def test_the_same_value_confirms() -> None:
    s = Story()
    a = s.note("Sessions are stored in Redis.")
    s.note("Redis stores the sessions, unchanged.")
    assert s.status_of(a, "redis") == "current"
    assert any(r.kind == "confirms" for r in s.store.all_relations())


@pytest.mark.parametrize(("first", "second", "value"), [
    ("routing-api listens on 8080.", "billing-svc now listens on 9090; routing-api: still "
     "8080, nothing changed there.", "8080"),
    ("Access token TTL is 30 minutes.", "Refresh token TTL is now 30 days.", "1800s"),
    ("The max pool size is 20 conns.", "The min pool size is now 2 conns.", "20"),
    ("Service 17 timeout seconds: 30.", "Service 18 timeout seconds: 45.", "30"),
])
def test_neighbouring_things_do_not_retire_each_other(first: str, second: str,
                                                       value: str) -> None:
    s = Story()
    a = s.note(first)
    s.note(second)
    assert s.status_of(a, value) == "current"


def test_a_list_restated_with_one_more_item_retires_none_of_it() -> None:
    s = Story()
    a = s.note("Linters: errcheck, govet, staticcheck.")
    s.note("Linters now: errcheck, govet, staticcheck, gosec.")
    assert s.values(a, "superseded") == set()


def test_two_tools_of_one_kind_meet_though_their_subjects_differ() -> None:
    s = Story()
    old = s.note("Product search runs on Algolia.")
    s.capture("Algolia is too expensive.", "Moved the search cluster to Typesense Cloud.")
    assert s.status_of(old, "algolia") == "superseded"


def test_a_diff_line_replaces_the_value_of_its_minus_line() -> None:
    s = Story()
    old = s.note("db_creds_default_ttl = 86400")
    s.add(turn("```diff\n-  db_creds_default_ttl = 86400\n+  db_creds_default_ttl = 3600\n```",
               "Applied."))
    assert s.status_of(old, "86400") == "superseded"


def test_incremental_derivation_equals_a_rebuild() -> None:
    s = Story()
    for text in ("The docs site is hosted on Netlify.", "Artifact bucket is s3://delta.",
                 "The docs site is now hosted on Vercel.", "Artifact bucket is s3://epsilon.",
                 "Image builds use Kaniko.", "Switched the image builder to buildx.",
                 "Rolled the image builder back to Kaniko."):
        s.note(text)
    s.store.drop("r03")
    assert s.store.snapshot() == s.store.fresh().snapshot()


def test_a_generic_word_beside_a_value_says_what_it_is_of() -> None:
    """"Deploys go to Fly.io": "deploy" weighs little in similarity, but said right beside
    the value it is what the value is of; the sentence had yielded no claim at all."""
    text = "Request: Where do we deploy?\nResult: Deploys go to Fly.io, region fra."
    assert [(c.predicate, c.value) for c in record_claims_of(text, "capture")] \
        == [("host", "fly.io")]


def test_punctuation_cut_out_of_code_is_no_value() -> None:
    """``CELERY_BROKER_USE_SSL = {...}`` had given the value "{", and a supersession drawn
    to it retired the broker's real value."""
    text = ('Result: I added `CELERY_BROKER_USE_SSL = {"ssl_cert_reqs": ssl.CERT_REQUIRED}` '
            "and deployed to staging.")
    assert all(any(ch.isalnum() for ch in c.value) for c in record_claims_of(text, "capture"))


def test_a_tool_named_like_an_ordinary_word_is_a_value_only_where_a_value_goes() -> None:
    """"`cloudinaryLoader` now requests `q_60`": the verb is no HTTP library, and taking it
    for one left the statement's real value (`q_60`) unclaimed, so the revert to `q_75`
    could never retire it. Where a value goes, the same word is a name."""
    now = "Result: - `cloudinaryLoader` now requests `q_60` (`f_auto,q_60,w_<width>`)"
    values = [c.value for c in record_claims_of(now, "capture")]
    assert "requests" not in values and "q_60" in values
    for text in ("Result: switched the gateway to requests", "Result: The HTTP client is requests",
                 "Result: HTTP client: requests, retries in gateway/retry.py"):
        assert "requests" in [c.value for c in record_claims_of(text, "capture")], text
