"""The one policy engine's rules, over its in-memory store (``MemoryPolicyStore``; the SQLite
stores are held to the same engine by ``test_derivation_property.py``)."""

from __future__ import annotations

from lintaid.policy import RecordInput
from lintaid.policy.memory_store import MemoryPolicyStore

JAN, FEB, JUN = 1767225600.0, 1769904000.0, 1780272000.0

# A turn as the capture hooks write it (``capture.record.turn_record``).
CAPTURE = ("Request: how should we store sessions\n"
           "Result: We use Redis for session storage. Sessions expire after 30 minutes.")
SWITCH = "We switched to Memcached for session storage instead of Redis."


def derived(*records: RecordInput, links: set[tuple[str, str]] | None = None) -> MemoryPolicyStore:
    policy = MemoryPolicyStore({r.record_id: r for r in records}, set(links or ()))
    return policy.fresh()


def test_capture_record_keeps_its_other_content_visible() -> None:
    d = derived(RecordInput("old", CAPTURE, created_at=JAN),
                RecordInput("new", SWITCH, created_at=FEB))
    [old_claim] = [c for c in d.claims(["old"]) if c.value == "redis"]
    assert old_claim.subject == "session storage"
    assert d.claim_state[old_claim.claim_id].status == "superseded"
    # the session lifetime it states is still what it says
    others = [c for c in d.claims(["old"]) if c is not old_claim]
    assert others and all(d.claim_state[c.claim_id].status == "current" for c in others)
    assert d.claim_state[old_claim.claim_id].superseded_by_record == "new"
    old_state = d.record_state["old"]
    assert (old_state.status, old_state.superseded_by) == ("conflicted", "new")
    assert d.status("new") == "current"


def test_capture_without_other_content_is_hidden() -> None:
    text = "Request: how should we store sessions\nResult: We use Redis for session storage."
    d = derived(RecordInput("old", text, created_at=JAN), RecordInput("new", SWITCH,
                                                                      created_at=FEB))
    assert d.status("old") == "superseded"
    assert "session storage changed from 'redis'" in d.record_state["old"].evidence


def test_a_newer_setting_that_says_it_changed_supersedes() -> None:
    d = derived(RecordInput("a", "retry_limit: 3", created_at=JAN),
                RecordInput("b", "retry_limit: now 5", created_at=FEB))
    [rel] = [r for r in d.all_relations() if r.method != "explicit"]
    assert (rel.kind, rel.source_record, rel.target_record) == ("supersedes", "b", "a")
    assert d.claim_statuses("a") == ["superseded"]
    assert (d.status("a"), d.status("b")) == ("superseded", "current")
    assert d.record_state["a"].superseded_by == "b"


def test_a_newer_setting_without_a_cue_supersedes_as_a_newer_same_kind() -> None:
    """Nobody said the limit changed, but both set one key: the newer value holds (design: a
    newer same-kind source, 0.90) and the older is retired."""
    d = derived(RecordInput("a", "retry_limit: 3", created_at=JAN),
                RecordInput("b", "retry_limit: 5", created_at=FEB))
    [rel] = [r for r in d.all_relations() if r.method != "explicit"]
    assert (rel.kind, rel.source_record, rel.target_record, rel.confidence) == (
        "supersedes", "b", "a", 0.9)
    assert d.claim_statuses("a") == ["superseded"]
    assert (d.status("a"), d.status("b")) == ("superseded", "current")


def test_other_users_do_not_retire_project_memory() -> None:
    d = derived(RecordInput("a", "retry_limit: 3", created_at=JAN),
                RecordInput("b", "retry_limit: 5", kind="note", user_id="alice",
                            created_at=FEB))
    assert {c.scope for c in d.claims(["a", "b"])} == {"project", "user:alice"}
    assert (d.status("a"), d.status("b")) == ("current", "current")


DECISION_A = "# Gateway Retry Policy\n\nGateway timeout retry attempts: 5.\n"
DECISION_B = "# Gateway Retry Policy\n\nGateway timeout retry attempts: 2.\n"


def doc(record_id: str, text: str, at: float, path: str | None = None) -> RecordInput:
    return RecordInput(record_id, text, kind="document", created_at=at, valid_at=at,
                       path=path or f"decisions/{record_id}")


def test_file_timeline_supersedes_scalar_under_same_heading() -> None:
    d = derived(doc("decision-a.md", DECISION_A, JAN), doc("decision-b.md", DECISION_B, JUN))
    [claim] = d.claims(["decision-a.md"])
    assert claim.scope == "file:decisions::heading:gateway retry policy"
    assert d.status("decision-a.md") == "superseded"
    assert d.record_state["decision-a.md"].superseded_by == "decision-b.md"
    assert d.status("decision-b.md") == "current"


def test_explicit_frontmatter_supersession() -> None:
    b = "---\nsupersedes: decision-a.md\n---\n" + DECISION_B
    d = derived(doc("decision-a.md", DECISION_A, JUN),  # even when the old file is newer
                doc("decision-b.md", b, JAN), links={("decision-b.md", "decision-a.md")})
    state = d.record_state["decision-a.md"]
    assert (state.status, state.superseded_by, state.confidence) == (
        "superseded", "decision-b.md", 1.0)
    assert d.status("decision-b.md") in {"current", "conflicted"}


def test_scalar_scopes_that_must_not_meet() -> None:
    other_heading = "# Cache Policy\n\nGateway timeout retry attempts: 2.\n"
    d = derived(doc("a.md", DECISION_A, JAN), doc("b.md", other_heading, JUN))
    assert d.status("a.md") == "current"
    generic_a = "# Configuration\n\nRetry attempts: 5.\n"
    generic_b = "# Configuration\n\nRetry attempts: 2.\n"
    d = derived(doc("a", generic_a, JAN, path="svc-a/config.md"),
                doc("b", generic_b, JUN, path="svc-b/config.md"))
    assert d.status("a") == "current"


def test_extra_content_keeps_the_document_visible() -> None:
    a = DECISION_A + "Additional rationale remains relevant.\n"
    d = derived(doc("a.md", a, JAN), doc("b.md", DECISION_B, JUN))
    assert d.claim_statuses("a.md") == ["superseded"]
    assert d.status("a.md") == "conflicted"


def test_ownership_change_leaves_unrelated_content_visible() -> None:
    arch = ("The platform team owns the control surface.\n"
            "The deployment strategy uses blue-green releases.")
    d = derived(doc("architecture.md", arch, JAN, path="docs/architecture.md"),
                doc("ownership-update.md", "The reliability team owns the control surface.",
                    FEB, path="docs/ownership-update.md"))
    assert d.claim_statuses("architecture.md") == ["superseded", "current"]
    assert d.status("architecture.md") == "conflicted"


def test_document_and_memory_disagreeing_by_time_only_conflict() -> None:
    d = derived(doc("docs/owner.md", "The National Park POD owns valve control.", JAN),
                RecordInput("mem", "The Controls POD owns valve control.", created_at=JUN))
    assert (d.status("docs/owner.md"), d.status("mem")) == ("conflicted", "conflicted")
    assert "changed from" in d.record_state["mem"].evidence


# ---------------------------------------------------------------------------------------------
# Incremental runs, each held equal to a run from scratch


def check(d: MemoryPolicyStore) -> MemoryPolicyStore:
    assert d.snapshot() == d.fresh().snapshot()
    return d


def test_deleting_the_newer_record_brings_the_older_back() -> None:
    d = MemoryPolicyStore()
    d.put(RecordInput("a", "retry_limit: 3", created_at=JAN))
    restated = d.put(RecordInput("b", "retry_limit: now 5", created_at=FEB))
    assert d.status("a") == "superseded" and "a" in restated
    check(d)
    restated = d.drop("b")
    assert d.status("a") == "current" and "b" not in d.record_state
    assert restated >= {"a", "b"}
    check(d)


def test_editing_the_newer_record_brings_the_older_back() -> None:
    d = MemoryPolicyStore()
    d.put(RecordInput("old", CAPTURE, created_at=JAN), RecordInput("new", SWITCH,
                                                                   created_at=FEB))
    assert d.status("old") == "conflicted"
    d.put(RecordInput("new", "Added a retry wrapper around the client.", created_at=FEB))
    assert d.status("old") == "current"
    assert set(d.claim_statuses("old")) == {"current"}
    check(d)


def test_removing_an_explicit_link_or_forgetting_the_newer_record() -> None:
    d = MemoryPolicyStore()
    a = RecordInput("a", "Deploy notes for the gateway.", created_at=JAN)
    b = RecordInput("b", "New deploy notes.", created_at=FEB)
    d.put(a, b)
    d.link("b", "a")
    assert (d.status("a"), d.record_state["a"].superseded_by) == ("superseded", "b")
    check(d)
    d.drop("b")  # forgotten: held records take no part in links
    assert d.status("a") == "current"
    check(d)
    d.put(b)
    assert d.status("a") == "superseded"
    d.drop("a")
    d.put(a)  # the link was declared all along: it applies again
    assert d.status("a") == "superseded"
    d.unlink("b", "a")
    assert d.status("a") == "current"
    check(d)


def test_two_records_linked_to_one_newest_wins_and_either_alone_retires() -> None:
    d = MemoryPolicyStore()
    d.put(RecordInput("a", "Deploy notes.", created_at=JAN),
          RecordInput("b", "Newer deploy notes.", created_at=FEB),
          RecordInput("c", "Newest deploy notes.", created_at=JUN))
    d.link("b", "a")
    d.link("c", "a")
    assert d.record_state["a"].superseded_by == "c"
    d.drop("c")
    assert (d.status("a"), d.record_state["a"].superseded_by) == ("superseded", "b")
    check(d)


def test_a_claim_retired_by_a_link_stays_out_of_inference() -> None:
    # The old file is the newest by time, but the link retires it, so it cannot retire b.
    d = MemoryPolicyStore()
    d.put(doc("a.md", DECISION_A, JUN), doc("b.md", DECISION_B, JAN))
    assert d.status("b.md") == "superseded"
    d.link("b.md", "a.md")
    assert (d.status("a.md"), d.status("b.md")) == ("superseded", "current")
    check(d)


def test_batches_of_any_size_give_the_same_state() -> None:
    records = [RecordInput(f"r{i}", text, created_at=float(i)) for i, text in enumerate([
        "retry_limit: 3", "retry_limit = 5", "We use Redis for session storage.", SWITCH,
        "The platform team owns the control surface.", "Deploy notes.",
        "The reliability team owns the control surface.", "Update: retry_limit: 7"])]
    links = {("r5", "r0"), ("r3", "r5")}
    whole = MemoryPolicyStore({r.record_id: r for r in records}, set(links)).fresh()
    from lintaid.policy import rebuild

    for size in (1, 2, 3):
        part = MemoryPolicyStore({r.record_id: r for r in records}, set(links))
        rebuild(part, part.inputs, batch=size)
        assert part.snapshot() == whole.snapshot()
