"""Relations and statuses of claims, pairwise (``relations.relate``): the reference unit
cases, under the policy's rules (see ``lintaid.policy.relations``)."""

from __future__ import annotations

from dataclasses import replace
from itertools import combinations

from lintaid.policy import (
    CONFIRMS,
    CONFLICTS_WITH,
    SUPERSEDES,
    ClaimRef,
    ClaimState,
    RecordInput,
    Relation,
    chain_order,
    claim_statuses,
    explicit_relations,
    record_claims,
    record_status,
    relate,
)
from lintaid.policy.engine import similarity
from lintaid.policy.memory_store import MemoryPolicyStore

JAN, FEB, JUN = 1767225600.0, 1769904000.0, 1780272000.0  # 2026-01-01, 2026-02-01, 2026-06-01


def ref(record: str, text: str, at: float | None = None, kind: str = "document",
        scope: str = "project", n: int = 1, value: str | None = None,
        record_kind: str | None = None) -> ClaimRef:
    """The first claim of ``text`` (or the one with ``value``) as claim ``n`` of record
    ``record``, of source ``kind``, effective at ``at`` (None: undated), in ``scope``."""
    rk = record_kind or ("document" if kind == "document" else "note")
    claims = record_claims(RecordInput(record, text, kind=rk, created_at=at or 0.0,
                                       valid_at=at, path=f"docs/{record}.md"))
    claim = next(c for c in claims if value is None or c.value == value)
    return replace(claim, claim_id=f"{record}::c{n}", scope=scope, source_kind=kind,
                   effective_at=at, order_key=(at or 0.0, record, n))


def relate_all(claims: list[ClaimRef]) -> list[Relation]:
    """Every pair related, newer side first, as the engine relates candidates."""
    out = []
    for a, b in combinations(claims, 2):
        if a.scope != b.scope:
            continue
        newer, older = (a, b) if chain_order(a) > chain_order(b) else (b, a)
        rel = relate(newer, older, similarity(newer, older))
        if rel is not None:
            out.append(rel)
    return out


def kinds(relations: list[Relation]) -> list[tuple[str, str, str, float, str]]:
    return sorted((r.kind, r.source_claim, r.target_claim, r.confidence, r.method)
                  for r in relations)


def statuses(relations: list[Relation], *ids: str) -> list[str]:
    states = claim_statuses(relations)
    return [states.get(i, ClaimState()).status for i in ids]


OLD_OWNER = "The National Park POD owns valve control."
NEW_OWNER = "The Controls POD owns valve control."


def test_ownership_superseded_over_time_same_kind() -> None:
    old, new = ref("old", OLD_OWNER, JAN), ref("new", NEW_OWNER, JUN)
    rels = relate_all([new, old])
    assert kinds(rels) == [(SUPERSEDES, "new::c1", "old::c1", 0.90, "newer_same_kind")]
    assert rels[0].evidence == "valve control changed from 'national park pod' to 'controls pod'"
    assert statuses(rels, "old::c1", "new::c1") == ["superseded", "current"]


def test_different_source_kinds_conflict() -> None:
    old, new = ref("old", OLD_OWNER, JAN), ref("new", NEW_OWNER, JUN, kind="memory")
    rels = relate_all([old, new])
    assert kinds(rels) == [(CONFLICTS_WITH, "new::c1", "old::c1", 0.75,
                            "disagreement")]
    assert statuses(rels, "old::c1", "new::c1") == ["conflicted", "conflicted"]


def test_no_dates_no_cue_conflict() -> None:
    rels = relate_all([ref("a", OLD_OWNER), ref("b", NEW_OWNER)])
    assert [r.kind for r in rels] == [CONFLICTS_WITH]
    assert statuses(rels, "a::c1", "b::c1") == ["conflicted", "conflicted"]


def test_no_dates_cue_in_the_claim_sentence_supersedes() -> None:
    new = ref("b", "This replaces the previous decision: the Controls POD owns valve control.")
    rels = relate_all([ref("a", OLD_OWNER), new])
    assert kinds(rels) == [(SUPERSEDES, "b::c1", "a::c1", 0.95, "correction_cue")]
    assert statuses(rels, "a::c1", "b::c1") == ["superseded", "current"]


def test_cue_outranks_kind_difference() -> None:
    old = ref("doc", "We use Redis for session storage.", JAN)
    new = ref("mem", "We use Memcached for session storage instead of Redis.", FEB, kind="memory")
    # "instead of Redis" names the older value: a transition, whatever kind of source
    assert [(r.kind, r.method) for r in relate_all([old, new])] == [(SUPERSEDES, "transition")]


def test_cue_naming_a_different_old_value_does_not_count() -> None:
    """The newer statement says what it replaced (Postgres), and it is not MySQL: it retires
    nothing of MySQL's (``relate``: a statement naming its old value relates to that one)."""
    old = ref("a", "We use MySQL for analytics.", JAN)
    new = ref("b", "We use MongoDB for analytics instead of Postgres.", FEB)
    rels = relate_all([old, new])
    assert not [r for r in rels if r.kind == SUPERSEDES]
    assert statuses(rels, "a::c1") == ["current"]


def test_same_claim_confirms_and_both_stay_current() -> None:
    a = ref("a", NEW_OWNER, JAN)
    b = ref("b", "Valve control is owned by the Controls POD.", FEB)
    rels = relate_all([a, b])
    assert kinds(rels) == [(CONFIRMS, "b::c1", "a::c1", 0.95, "same_value")]
    assert statuses(rels, "a::c1", "b::c1") == ["current", "current"]


def test_different_scopes_never_meet() -> None:
    d = MemoryPolicyStore()
    d.put(RecordInput("a", OLD_OWNER, kind="note", user_id="alice", created_at=JAN),
          RecordInput("b", "Update: " + NEW_OWNER, kind="note", user_id="bob", created_at=FEB))
    assert {c.scope for c in d.all_claims()} == {"user:alice", "user:bob"}
    assert d.all_relations() == []
    assert (d.status("a"), d.status("b")) == ("current", "current")


def test_decimal_versions() -> None:
    a = ref("a", "user: api version: 1.5", JAN, kind="memory")
    b = ref("b", "user: api version: 2.0", FEB, kind="memory")
    assert (a.value, b.value) == ("1.5", "2.0")
    # Said later, without saying it changed: likely the newer holds; the older waits in review.
    rels = relate_all([a, b])
    assert kinds(rels) == [(SUPERSEDES, "b::c1", "a::c1", 0.8, "newer_unmarked")]
    assert statuses(rels, "a::c1", "b::c1") == ["conflicted", "current"]
    bumped = ref("b", "user: api version: bumped to 2.0", FEB, kind="memory")
    assert bumped.value == "2.0"
    assert statuses(relate_all([a, bumped]), "a::c1", "b::c1") == ["superseded", "current"]


def test_scalar_timeout() -> None:
    a = ref("a", "user: timeout: 100", JAN, kind="memory")
    b = ref("b", "user: timeout: 150", FEB, kind="memory")
    assert statuses(relate_all([a, b]), "a::c1", "b::c1") == ["conflicted", "current"]
    raised = ref("b", "user: timeout: raised to 150", FEB, kind="memory")
    assert statuses(relate_all([a, raised]), "a::c1", "b::c1") == ["superseded", "current"]


def test_date_tie_cue_bearing_claim_wins_whatever_the_ids() -> None:
    # Adversarial ids: the Postgres record sorts after the MongoDB one.
    pg = ref("z-postgres", "We use Postgres for analytics.", JAN)
    mongo = ref("a-mongo", "We use MongoDB for analytics instead of Postgres.", JAN)
    rels = relate_all([pg, mongo])
    assert kinds(rels) == [(SUPERSEDES, "a-mongo::c1", "z-postgres::c1", 0.95, "transition")]
    assert statuses(rels, "z-postgres::c1", "a-mongo::c1") == ["superseded", "current"]


def test_two_values_in_one_record_conflict_until_a_newer_record_settles_them() -> None:
    a1 = ref("a", "retry_limit: 3", JAN, kind="memory")
    # the same setting stated twice in one record, with another value
    a2 = replace(ref("a", "retry_limit: 4", JAN, kind="memory", n=2), start=a1.end + 1,
                 end=a1.end + 15)
    rels = relate_all([a1, a2])
    assert kinds(rels) == [(CONFLICTS_WITH, "a::c2", "a::c1", 0.75, "disagreement")]
    assert statuses(rels, "a::c1", "a::c2") == ["conflicted", "conflicted"]
    b = ref("b", "retry_limit: now 5", FEB, kind="memory")
    rels = relate_all([a1, a2, b])
    assert {(r.source_claim, r.target_claim) for r in rels} == {
        ("a::c2", "a::c1"), ("b::c1", "a::c2"), ("b::c1", "a::c1")}
    assert statuses(rels, "a::c1", "a::c2", "b::c1") == ["superseded", "superseded", "current"]


def test_newer_means_a_later_creation_when_effective_times_tie() -> None:
    """Two notes effective at the same moment (a valid time given to both): the one the store
    stamped later is newer; stamped alike, neither is, and they conflict."""
    a = ref("a", "Artifact bucket is s3://alpha.", JAN, kind="memory")
    b = ref("b", "Artifact bucket is s3://beta.", JAN, kind="memory")
    later = ClaimRef(**{**b.__dict__, "order_key": (JAN + 0.001, "b", 1)})
    assert kinds(relate_all([a, later])) == [
        (SUPERSEDES, "b::c1", "a::c1", 0.9, "newer_same_kind")]
    assert statuses(relate_all([a, later]), "a::c1", "b::c1") == ["superseded", "current"]
    assert kinds(relate_all([a, b])) == [
        (CONFLICTS_WITH, "b::c1", "a::c1", 0.75, "disagreement")]
    assert statuses(relate_all([a, b]), "a::c1", "b::c1") == ["conflicted", "conflicted"]


def test_supersession_is_transitive_over_confirmations() -> None:
    # x (Jan, doc), x (Feb, memory: confirms), y (Jun, memory) -> both x claims retired,
    # although the Jan document is not y's neighbour.
    a = ref("a", "We use Redis for caching.", JAN)
    b = ref("b", "We use Redis for caching.", FEB, kind="memory")
    c = ref("c", "We use Memcached for caching instead of Redis.", JUN, kind="memory")
    rels = relate_all([a, b, c])
    assert kinds(rels) == [
        (CONFIRMS, "b::c1", "a::c1", 0.95, "same_value"),
        (SUPERSEDES, "c::c1", "a::c1", 0.95, "transition"),
        (SUPERSEDES, "c::c1", "b::c1", 0.95, "transition"),
    ]
    states = claim_statuses(rels)
    assert [states[i].status for i in ("a::c1", "b::c1", "c::c1")] == [
        "superseded", "superseded", "current"
    ]
    assert states["a::c1"].superseded_by_claim == "c::c1"


def test_chain_current_value_is_the_newest() -> None:
    a = ref("a", "retry_limit: 3", JAN, kind="memory")
    b = ref("b", "retry_limit: now 5", FEB, kind="memory")
    c = ref("c", "retry_limit: back to 3", JUN, kind="memory")
    states = claim_statuses(relate_all([a, b, c]))
    assert [states[i].status for i in ("a::c1", "b::c1", "c::c1")] == [
        "superseded", "superseded", "current"
    ]
    assert states["a::c1"].superseded_by_claim == "b::c1"  # its direct successor
    assert states["b::c1"].superseded_by_claim == "c::c1"


def test_conflict_with_a_retired_claim_is_moot() -> None:
    # doc x (Jan) vs memory y (Feb): conflict; then doc z (Jun) retires x by time and y by cue.
    a = ref("a", "retry_limit: 3", JAN)
    b = ref("b", "retry_limit: 5", FEB, kind="memory")
    c = ref("c", "Update: retry_limit: 7", JUN)
    rels = relate_all([a, b, c])
    assert statuses(rels, "a::c1", "b::c1", "c::c1") == ["superseded", "superseded", "current"]


def test_conflict_against_all_live_rivals() -> None:
    a = ref("a", "retry_limit: 3", JAN)
    b = ref("b", "retry_limit: 3", FEB)
    c = ref("c", "retry_limit: 5", JUN, kind="memory")
    rels = relate_all([a, b, c])
    assert statuses(rels, "a::c1", "b::c1", "c::c1") == ["conflicted"] * 3


def test_explicit_relations_retire_the_whole_record() -> None:
    old = [ref("old", "We use Redis for caching."),
           ClaimRef("old::c2", "old", "project", "deploys", "owner", "ops", order_key=(0, "old", 2))]
    new = [ref("new", "We use Memcached for caching.")]
    rels = explicit_relations([("new", "old"), ("new", "new")],
                              {"old": old, "new": new})
    assert [(r.source_claim, r.target_claim, r.confidence, r.method) for r in rels] == [
        ("new::c1", "old::c1", 1.0, "explicit"),
        ("new::c1", "old::c2", 1.0, "explicit"),
    ]
    states = claim_statuses(rels)
    assert states["old::c1"].status == states["old::c2"].status == "superseded"
    assert states["old::c2"].superseded_by_record == "new"


def test_explicit_relations_without_claims_use_the_record() -> None:
    [rel] = explicit_relations([("b", "a")], {"a": [], "b": []})
    assert (rel.source_claim, rel.target_claim) == ("b::record", "a::record")


# ---------------------------------------------------------------------------------------------
# Record status


def test_record_with_only_the_superseded_claim_is_superseded() -> None:
    text = "# Gateway Retry Policy\n\nGateway timeout retry attempts: 5.\n"
    old = ref("a", text, JAN)
    new = ref("b", "# Gateway Retry Policy\n\nGateway timeout retry attempts: 2.\n", JUN)
    states = claim_statuses(relate_all([old, new]))
    state = record_status("a", text, [old], states, None)
    assert (state.status, state.superseded_by, state.confidence) == ("superseded", "b", 0.90)
    assert record_status("b", "", [new], states, None).status == "current"


def test_record_with_extra_content_is_conflicted_not_superseded() -> None:
    text = ("# Gateway Retry Policy\n\nGateway timeout retry attempts: 5.\n"
            "Additional rationale remains relevant.\n")
    old = ref("a", text, JAN)
    new = ref("b", "Gateway timeout retry attempts: 2.", JUN)
    states = claim_statuses(relate_all([old, new]))
    state = record_status("a", text, [old], states, None)
    assert (state.status, state.superseded_by) == ("conflicted", "b")


def test_record_explicitly_superseded() -> None:
    state = record_status("a", "Anything at all, with lots of words in it.", [], {}, "b")
    assert (state.status, state.superseded_by, state.confidence) == ("superseded", "b", 1.0)


def test_record_with_a_conflicted_claim_is_conflicted() -> None:
    a, b = ref("a", OLD_OWNER), ref("b", NEW_OWNER)
    states = claim_statuses(relate_all([a, b]))
    state = record_status("a", OLD_OWNER, [a], states, None)
    assert (state.status, state.superseded_by, state.confidence) == ("conflicted", None, 0.75)


def test_capture_boilerplate_is_not_substance() -> None:
    text = ("Memory type: outcome\nRequest: how should we store sessions\n"
            "Result: We use Redis for session storage.\nAffected paths: src/app.py")
    old = ref("a", text, JAN, kind="memory", value="redis", record_kind="capture")
    new = ref("b", "We use Memcached for session storage instead of Redis.", FEB, kind="memory")
    states = claim_statuses(relate_all([old, new]))
    assert record_status("a", text, [old], states, None).status == "superseded"


def _turns(*results: str) -> tuple[MemoryPolicyStore, list[str]]:
    store = MemoryPolicyStore()
    ids = []
    for i, text in enumerate(results):
        rid = f"r{i}"
        store.put(RecordInput(rid, f"Request: go on\nResult: {text}", kind="capture",
                              created_at=JAN + i * 86400.0))
        ids.append(rid)
    return store, ids


def _states_of(store: MemoryPolicyStore, rid: str, value: str) -> set[str]:
    states = store.claim_state_map()
    return {states.get(c.claim_id, "current") for c in store.all_claims()
            if c.record_id == rid and c.value == value}


def test_a_bare_number_said_as_the_old_value_names_a_percentage() -> None:
    """"60 (was 70)" retires "target CPU 70%": the old side is written without its unit."""
    store, (old, new) = _turns(
        "Current HPA for routing-api: min 3, max 12 replicas, target CPU 70%.",
        "Changed in `deploy/hpa.yaml`:\n- target CPU utilization: 60 (was 70)")
    assert _states_of(store, old, "0.7") == {"superseded"}
    assert _states_of(store, new, "60") == {"current"}


def test_one_setting_named_by_its_key_in_both_statements_is_one_slot() -> None:
    """The newer statement's key holds every word of the older's ("automated backups"):
    one setting, so a newer value without a cue is at least disputed; a value of another
    setting that shares one word ("retention") is left alone."""
    store, (logs, old, new) = _turns(
        "CloudWatch log retention: 30 days for every group.",
        "billing-db (RDS PostgreSQL):\n- engine 15.5\n- automated backups 7 days, window "
        "01:00-02:00 UTC",
        "Fixed in `billing-db.tf`:\n\nbackup_retention_period: 35 days (the AWS maximum for "
        "automated backups)")
    assert _states_of(store, old, "604800s") & {"superseded", "conflicted"}
    assert "current" not in _states_of(store, old, "604800s")
    assert _states_of(store, logs, "2592000s") == {"current"}
    assert "current" in _states_of(store, new, "3024000s")


def test_a_bare_number_said_as_the_old_value_names_a_duration_in_the_new_ones_unit() -> None:
    """"now 600 seconds instead of 300" retires "300 seconds", and "10 minutes instead of
    5" retires "5 minutes": the old side takes the unit the new side was written in."""
    store, (old, new) = _turns("Token refresh interval: 300 seconds.",
                               "Token refresh interval is now 600 seconds instead of 300.")
    assert _states_of(store, old, "300s") == {"superseded"}
    assert _states_of(store, new, "600s") == {"current"}
    store, (old, new) = _turns("Session idle timeout: 5 minutes.",
                               "Session idle timeout is now 10 minutes instead of 5.")
    assert _states_of(store, old, "300s") == {"superseded"}


def test_a_file_named_by_its_dot_in_both_statements_is_one_slot() -> None:
    """"`.nvmrc` → `20`" then, in a toolchain bump among other things, "`.nvmrc` → `22`": the
    key is one word, written as a dotfile in both statements, so it is one setting."""
    store, (old, new) = _turns(
        "chore: scaffold\n\n- `apps/api`: Fastify 5, listens on `PORT`\n"
        "- `.nvmrc` → `20`, `engines.node` `>=20 <21`\n- `pnpm dev` runs web + api via turbo",
        "chore: toolchain bump\n\n- `.nvmrc` → `22`, `engines.node` `>=22 <23`, CI "
        "`node-version-file: .nvmrc`, Vercel project setting Node.js 22.x, Railway "
        "`NIXPACKS_NODE_VERSION=22`\n- removed `lodash` from `apps/web`")
    assert _states_of(store, old, "20") == {"superseded"}
    assert "current" in _states_of(store, new, "22")


def test_the_words_a_value_is_of_find_the_older_claim_whatever_else_the_statement_says() -> None:
    """"so all get 30 days retention" and, later, "I reduced retention: log groups keep 14
    days now": the newer statement's heaviest words are other ones (log, groups, days), and
    many turns between hold those, yet the older claim is found by "retention", what its
    value is of, and retired."""
    between = [f"Alarm {name}: the log group `{name}-logs` pages after {n} days of silence."
               for n, name in enumerate(("billing", "routing", "portal", "gateway", "ingest",
                                         "search", "auth", "media", "jobs", "push", "export",
                                         "audit", "mail", "sync", "geo", "tiles", "quota",
                                         "admin"), start=2)]
    store, (old, *_between, new) = _turns(
        "Most log groups have **never expire**, that's the reason. EKS control plane log"
        "s, VPC flow logs and all the fluent-bit groups grow forever.\n\nI added in the `"
        "observability` module:\n\n```hcl\nresource \"aws_cloudwatch_log_group\" \"this\" {\n"
        "  for_each          = var.log_groups\n  name              = each.key\n  retentio"
        "n_in_days = 30\n}\n```\n\nand imported the existing groups, so all get 30 days r"
        "etention. Data older than 30 days AWS delete in next ~72h, this will reduce stor"
        "age cost. If someone need older logs for audit, they are allready in S3 archive "
        "via the subscription filter (bucket `norrvik-log-archive`).",
        *between,
        "Yes, everything is copied to `norrvik-log-archive` (S3, Glacier after 90 days) b"
        "y the subscription filter. So CloudWatch is only for quick search.\n\nI reduced "
        "retention: log groups keep 14 days now, in `observability` module `retention_in_"
        "days = 14`. Estimated saving ~340 EUR/month. For older than two weeks use Athena"
        " on the archive bucket, I put a query example in `docs/runbooks/logs.md`.")
    states = store.claim_state_map()
    said = {c.evidence: states.get(c.claim_id, "current")
            for c in store.all_claims() if c.record_id == old and c.value == "2592000s"}
    assert [v for e, v in said.items() if "all get 30 days retention" in e] == ["superseded"]
    assert [v for e, v in said.items() if "retention_in_days = 30" in e] == ["superseded"]
    assert "current" in _states_of(store, new, "1209600s")


def test_two_values_written_as_one_key_are_one_setting() -> None:
    # The subjects the statements give differ ("pool connections", "pool"); the key each
    # value is written as the value of is the same: one setting, changed.
    from lintaid.policy.relations import same_slot

    old = ref("a", "The pgx pool is 20 connections (`DB_POOL_SIZE=20`), min 2.", JAN,
              kind="memory", value="20")
    new = ref("b", "Raised the pool to 40 (`DB_POOL_SIZE=40`).", FEB, kind="memory",
              value="40")
    assert same_slot(new, old)
    assert kinds(relate_all([old, new])) == [
        (SUPERSEDES, "b::c1", "a::c1", 0.95, "correction_cue")]
    # The same key beside another value is no sign: "min 2" is not DB_POOL_SIZE's.
    two = ref("a", "The pgx pool is 20 connections (`DB_POOL_SIZE=20`), min 2.", JAN,
              kind="memory", value="2")
    assert not same_slot(new, two)


def test_also_of_one_setting_named_alike_is_its_new_value() -> None:
    # "Additionally, ..." of the same named setting (same subject, same kind of value) is one
    # more statement of its value: the newer holds. Of a topic only alike it adds, and stays.
    old = ref("a", "From now on, begin all method names with the prefix 'md_'.", JAN,
              kind="memory")
    new = ref("b", "Additionally, I'd like you to start method names with 'o_'.", FEB,
              kind="memory")
    assert (old.subject, old.predicate) == (new.subject, new.predicate)
    assert kinds(relate_all([old, new])) == [
        (SUPERSEDES, "b::c1", "a::c1", 0.9, "newer_same_kind")]
