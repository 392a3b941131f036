"""Full derivation over records, and the incremental update held against it."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lintaid.policy import Derived, RecordInput, derive, derive_incremental

JAN, FEB, JUN = 1767225600.0, 1769904000.0, 1780272000.0

CAPTURE = ("Claude Code outcome\nRequest: how should we store sessions\n"
           "Result: We use Redis for session storage. Added a health check endpoint in "
           "src/app.py.")
SWITCH = "We switched to Memcached for session storage instead of Redis."


def status(derived: Derived, record_id: str) -> str:
    return derived.record_states[record_id].status


def claim_status(derived: Derived, record_id: str) -> list[str]:
    return [derived.claim_states[c].status for c in derived.claims_by_record[record_id]]


def test_capture_record_keeps_its_other_content_visible() -> None:
    records = [RecordInput("old", CAPTURE, created_at=JAN),
               RecordInput("new", SWITCH, created_at=FEB)]
    d = derive(records)
    [old_claim] = d.record_claims("old")
    assert (old_claim.subject, old_claim.value) == ("session storage", "redis")
    assert d.claim_states[old_claim.claim_id].status == "superseded"
    assert d.claim_states[old_claim.claim_id].superseded_by_record == "new"
    old_state = d.record_states["old"]
    assert (old_state.status, old_state.superseded_by) == ("conflicted", "new")
    assert status(d, "new") == "current"


def test_capture_without_other_content_is_hidden() -> None:
    text = "Claude Code outcome\nRequest: how should we store sessions\nResult: We use Redis " \
           "for session storage."
    d = derive([RecordInput("old", text, created_at=JAN), RecordInput("new", SWITCH,
                                                                      created_at=FEB)])
    assert status(d, "old") == "superseded"


def test_retry_limit_records_share_a_chain() -> None:
    d = derive([RecordInput("a", "retry_limit: 3", created_at=JAN),
                RecordInput("b", "retry_limit: 5", created_at=FEB)])
    assert len(d.chains) == 1
    assert claim_status(d, "a") == ["superseded"]
    assert (status(d, "a"), status(d, "b")) == ("superseded", "current")
    assert d.record_states["a"].superseded_by == "b"


def test_other_users_do_not_retire_project_memory() -> None:
    d = derive([RecordInput("a", "retry_limit: 3", created_at=JAN),
                RecordInput("b", "retry_limit: 5", kind="note", user_id="alice", created_at=FEB)])
    assert len(d.chains) == 2
    assert (status(d, "a"), status(d, "b")) == ("current", "current")


DECISION_A = "# Gateway Retry Policy\n\nGateway timeout retry attempts: 5.\n"
DECISION_B = "# Gateway Retry Policy\n\nGateway timeout retry attempts: 2.\n"


def doc(record_id: str, text: str, at: float, path: str | None = None,
        supersedes: str | None = None) -> RecordInput:
    return RecordInput(record_id, text, kind="document", created_at=at,
                       path=path or f"decisions/{record_id}", explicit_supersedes=supersedes)


def test_file_timeline_supersedes_scalar_under_same_heading() -> None:
    d = derive([doc("decision-a.md", DECISION_A, JAN), doc("decision-b.md", DECISION_B, JUN)])
    [(scope, _, _)] = list(d.chains)
    assert scope == "file:decisions::heading:gateway retry policy"
    assert status(d, "decision-a.md") == "superseded"
    assert d.record_states["decision-a.md"].superseded_by == "decision-b.md"
    assert status(d, "decision-b.md") == "current"


def test_explicit_frontmatter_supersession() -> None:
    b = "---\nsupersedes: decision-a.md\n---\n" + DECISION_B
    d = derive([doc("decision-a.md", DECISION_A, JUN),  # even when the old file is newer
                doc("decision-b.md", b, JAN, supersedes="decision-a.md")])
    state = d.record_states["decision-a.md"]
    assert (state.status, state.superseded_by, state.confidence) == (
        "superseded", "decision-b.md", 1.0)
    assert status(d, "decision-b.md") in {"current", "conflicted"}


def test_scalar_scopes_that_must_not_meet() -> None:
    other_heading = "# Cache Policy\n\nGateway timeout retry attempts: 2.\n"
    d = derive([doc("a.md", DECISION_A, JAN), doc("b.md", other_heading, JUN)])
    assert len(d.chains) == 2 and status(d, "a.md") == "current"
    generic_a = "# Configuration\n\nRetry attempts: 5.\n"
    generic_b = "# Configuration\n\nRetry attempts: 2.\n"
    d = derive([doc("a", generic_a, JAN, path="svc-a/config.md"),
                doc("b", generic_b, JUN, path="svc-b/config.md")])
    assert len(d.chains) == 2 and status(d, "a") == "current"


def test_extra_content_keeps_the_document_visible() -> None:
    a = DECISION_A + "Additional rationale remains relevant.\n"
    d = derive([doc("a.md", a, JAN), doc("b.md", DECISION_B, JUN)])
    assert claim_status(d, "a.md") == ["superseded"]
    assert status(d, "a.md") == "conflicted"


def test_ownership_change_leaves_unrelated_content_visible() -> None:
    arch = ("The platform team owns the control surface.\n"
            "The deployment strategy uses blue-green releases.")
    d = derive([doc("architecture.md", arch, JAN, path="docs/architecture.md"),
                doc("ownership-update.md", "The reliability team owns the control surface.", FEB,
                    path="docs/ownership-update.md")])
    assert claim_status(d, "architecture.md") == ["superseded", "current"]
    assert status(d, "architecture.md") == "conflicted"


def test_document_and_memory_disagreeing_by_time_only_conflict() -> None:
    d = derive([doc("docs/owner.md", "The National Park POD owns valve control.", JAN),
                RecordInput("mem", "The Controls POD owns valve control.", created_at=JUN)])
    assert (status(d, "docs/owner.md"), status(d, "mem")) == ("conflicted", "conflicted")


# ---------------------------------------------------------------------------------------------
# Incremental updates: explicit cases


def step(prev: Derived, records: dict[str, RecordInput], changed: list[RecordInput],
         removed: list[str]) -> Derived:
    for record_id in removed:
        records.pop(record_id, None)
    for record in changed:
        records[record.record_id] = record
    inc = derive_incremental(prev, changed, removed, records)
    assert inc == derive(records.values())
    return inc


def test_deleting_the_newer_record_brings_the_older_back() -> None:
    records: dict[str, RecordInput] = {}
    d = step(Derived(), records, [RecordInput("a", "retry_limit: 3", created_at=JAN)], [])
    d = step(d, records, [RecordInput("b", "retry_limit: 5", created_at=FEB)], [])
    assert status(d, "a") == "superseded"
    d = step(d, records, [], ["b"])
    assert status(d, "a") == "current"
    assert "b" not in d.record_states and not d.chain_relations[next(iter(d.chains))]


def test_editing_the_newer_record_brings_the_older_back() -> None:
    records: dict[str, RecordInput] = {}
    d = step(Derived(), records, [RecordInput("old", CAPTURE, created_at=JAN),
                                  RecordInput("new", SWITCH, created_at=FEB)], [])
    assert status(d, "old") == "conflicted"
    d = step(d, records, [RecordInput("new", "Added a retry wrapper around the client.",
                                      created_at=FEB)], [])
    assert status(d, "old") == "current"
    assert claim_status(d, "old") == ["current"]


def test_removing_an_explicit_link_or_forgetting_the_newer_record() -> None:
    records: dict[str, RecordInput] = {}
    a = RecordInput("a", "Deploy notes for the gateway.", created_at=JAN)
    b = RecordInput("b", "New deploy notes.", created_at=FEB, explicit_supersedes="a")
    d = step(Derived(), records, [a, b], [])
    assert (status(d, "a"), d.record_states["a"].superseded_by) == ("superseded", "b")
    d = step(d, records, [RecordInput("b", "New deploy notes.", created_at=FEB,
                                      status_hold="forgotten")], [])
    assert (status(d, "a"), status(d, "b")) == ("current", "forgotten")
    d = step(d, records, [b], [])
    assert status(d, "a") == "superseded"
    d = step(d, records, [], ["a"])
    d = step(d, records, [a], [])  # the link was declared all along: it applies again
    assert status(d, "a") == "superseded"


def test_lookup_may_be_a_callable() -> None:
    records = {"a": RecordInput("a", "retry_limit: 3", created_at=JAN)}
    d = derive(records.values())
    b = RecordInput("b", "retry_limit: 5", created_at=FEB)
    records["b"] = b
    assert derive_incremental(d, [b], [], records.get) == derive(records.values())


# ---------------------------------------------------------------------------------------------
# Incremental updates: randomized, held against a full rebuild after every step

SENTENCES = [
    "We use Redis for session storage.",
    "We use Memcached for session storage.",
    SWITCH,
    "Session storage is handled by Redis.",
    "The platform team owns the control surface.",
    "The reliability team owns the control surface.",
    "The reliability team is now responsible for the control surface.",
    "retry_limit: 3",
    "retry_limit = 5",
    "Update: retry_limit: 7",
    "always start function names with 'a_'",
    "From now on, start function names with 'fn_'.",
    "We no longer use Redis.",
    "Redis is deprecated.",
    "Added a health check endpoint in src/app.py.",
    "Thanks.",
]
IDS = [f"r{i}" for i in range(6)]

record_strategy = st.builds(
    RecordInput,
    record_id=st.sampled_from(IDS),
    text=st.builds(
        lambda heading, parts, sep: heading + sep.join(parts),
        st.sampled_from(["", "# Retry Policy\n", "# Configuration\n"]),
        st.lists(st.sampled_from(SENTENCES), min_size=1, max_size=3),
        st.sampled_from([" ", "\n"]),
    ),
    kind=st.sampled_from(["capture", "capture", "note", "document", "prompt"]),
    user_id=st.sampled_from(["local", "local", "alice"]),
    created_at=st.integers(0, 4).map(float),
    valid_at=st.one_of(st.none(), st.integers(0, 4).map(float)),
    path=st.sampled_from([None, "docs/a.md", "docs/b.md", "ops/a.md"]),
    explicit_supersedes=st.sampled_from([None, None, None, *IDS[:3]]),
    status_hold=st.sampled_from([None] * 8 + ["forgotten", "expired"]),
)
operation = st.one_of(
    st.tuples(st.just("upsert"), st.lists(record_strategy, min_size=1, max_size=2)),
    st.tuples(st.just("delete"), st.lists(st.sampled_from(IDS), min_size=1, max_size=2)),
)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(operation, min_size=1, max_size=14))
def test_incremental_equals_full_rebuild(ops: list[tuple[str, list]]) -> None:
    records: dict[str, RecordInput] = {}
    derived = Derived()
    for op, items in ops:
        if op == "upsert":
            changed = list({r.record_id: r for r in items}.values())
            derived = step(derived, records, changed, [])
        else:
            removed = [i for i in dict.fromkeys(items) if i in records]
            derived = step(derived, records, [], removed)
