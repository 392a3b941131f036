"""A value a change retired is retired in the other records that stated it (issue 21/22):
the policy relates claims two at a time, so a sentence naming the old value in words no
relation reaches ("Atlas diffs and writes the versioned file") would reach the agent as
current after the project went back to goose. Through the hook shim's logic against a real
daemon in this process, and the pure rule (``lintaid.retrieval.retired``) on its own."""

from __future__ import annotations

import time

from lintaid.retrieval import retired
from lintaid.search import StateRequest
from lintaid_client.models import CURRENT, SUPERSEDED, Claim
from tests.conftest import Served
from tests.test_e2e_policy import capture, context_for


def test_an_older_sentence_naming_a_retired_tool_is_not_injected_as_current(
        served: Served) -> None:
    capture(served, "s1", "Migrations tooling?",
            "migrations: goose, files in `db/migrations`")
    time.sleep(0.01)
    capture(served, "s2", "replace goose with Atlas, I want declarative diffs",
            "- replace goose with Atlas\n"
            "- Atlas versioned workflow, dir `db/migrations` + `atlas.sum`")
    time.sleep(0.01)
    capture(served, "s3", "I need a servings column on recipes.",
            "- `make migrate-new name=add_servings` → Atlas diffs and writes the versioned "
            "file\n- commit the new migration and atlas.sum together")
    time.sleep(0.01)
    capture(served, "s4", "Atlas needs a dev database for every lint run. Revert.",
            "- back to goose\n- goose is the migration tool again")
    context = context_for(served, "Which tool writes the versioned migration file?")
    # What the agent reads: the revert; the servings turn's Atlas sentence is retired with
    # the value (and its record, showing nothing else the prompt asked about, drops out).
    assert "goose is the migration tool again" in context
    assert "Atlas diffs and writes the versioned file" not in context, context
    # Asked about the past, the older sentence is there as it was.
    history = served.json("search", "Which tool wrote the versioned migration file before?",
                          "--history")["results"]
    assert any("Atlas diffs" in h["content"] for h in history)


def _claim(value: str, subject: str, evidence: str, status: str = CURRENT,
           predicate: str = "name") -> Claim:
    return Claim(claim_id="m1::c1", record_id="m1", subject=subject, predicate=predicate,
                 value=value, status=status, evidence=evidence, scope="project")


def _row(value: str, subject: str, new_value: str, new_subject: str = "", at: float = 10.0,
         predicate: str = "name") -> dict[str, object]:
    return {"o_value": value, "o_predicate": predicate, "o_subject": subject,
            "o_scope": "project", "n_value": new_value, "n_subject": new_subject,
            "n_record_id": "m9", "n_claim_id": "m9::c1", "new_created_at": at}


def _holder(value: str, subject: str, evidence: str, at: float,
            record: str = "m5", predicate: str = "name") -> dict[str, object]:
    return {"c_value": value, "c_predicate": predicate, "c_subject": subject,
            "c_scope": "project", "c_created_at": at, "c_record_id": record,
            "c_evidence": evidence}


def test_the_rule_retires_an_older_claim_of_the_same_value_and_thing() -> None:
    table = retired.retirements([_row("atlas", "versioned workflow", "goose")], [])
    older = _claim("atlas", "migrate-new writes versioned file",
                   "migrate-new → Atlas writes the versioned file")
    [out] = retired.apply([older], record_id="m1", created_at=5.0, table=table)
    assert (out.status, out.superseded_by, out.replaced_by_value) == (SUPERSEDED, "m9", "goose")
    # Written after the retirement, or by the retiring record itself: a mention, kept.
    for when, rid in ((11.0, "m1"), (5.0, "m9")):
        [kept] = retired.apply([older], record_id=rid, created_at=when, table=table)
        assert kept.status == CURRENT


def test_the_rule_needs_the_same_thing_and_leaves_a_transition_alone() -> None:
    table = retired.retirements([_row("tom", "alert rule notifies", "sentry")], [])
    other = _claim("tom", "periodic tasks admin pages", "Tom gets the periodic tasks pages")
    assert retired.apply([other], record_id="m1", created_at=5.0,
                         table=table)[0].status == CURRENT
    table = retired.retirements([_row("atlas", "versioned workflow", "goose")], [])
    both = _claim("atlas", "versioned workflow", "versioned workflow: Atlas, before goose")
    assert retired.apply([both], record_id="m1", created_at=5.0,
                         table=table)[0].status == CURRENT
    # A number needs a word that tells what it is of, not a generic one.
    table = retired.retirements([_row("20", "pool max conns", "40", predicate="number")], [])
    workers = _claim("20", "push queue workers", "push (20 workers)", predicate="number")
    pool = _claim("20", "pool size", "pool of 20", predicate="number")
    assert [c.status for c in retired.apply([workers, pool], record_id="m1", created_at=5.0,
                                            table=table)] == [CURRENT, SUPERSEDED]


def test_a_value_stated_again_after_its_retirement_is_back() -> None:
    rows = [_row("goose", "migrations", "atlas", at=10.0)]
    back = _holder("goose", "migration tool", "goose is the migration tool again", at=20.0)
    assert retired.retirements(rows, [back]) == {}
    # ...but not when it is named beside the value that replaced it (a transition), nor by
    # the retiring record itself.
    beside = _holder("goose", "migrations", "converted goose files to atlas", at=20.0)
    own = _holder("goose", "migrations", "goose dropped", at=10.0, record="m9")
    assert set(retired.retirements(rows, [beside, own])) == {"goose"}
    # A supersession by a newer statement of the same value retires no value.
    assert retired.retirements([_row("goose", "migrations", "goose")], []) == {}


def test_session_start_lists_what_the_project_came_back_to_before_one_off_remarks(
        served: Served) -> None:
    """A fact restated across sessions is project state; sentences said once in passing,
    newer than it, come after it in the digest (which keeps what its bytes hold)."""
    capture(served, "s1", "Where do we deploy?", "Deploys go to Fly.io, region fra.")
    time.sleep(0.01)
    capture(served, "s2", "Confirm the deploy target?", "Deploys still go to Fly.io.")
    for n, (ask, said) in enumerate([
            ("My laptop is slow.", "Your Docker Desktop VM has 2 GB; give it 6 GB."),
            ("Lunch?", "The ramen place on Kastanienallee opens at 11:30."),
            ("Which font do you like?", "JetBrains Mono at 13 pt reads well in the terminal.")]):
        time.sleep(0.01)
        capture(served, f"t{n}", ask, said)
    state = served.daemon.reader.project_state(StateRequest(session_id="later"))
    values = [d.value for d in state.decisions]
    assert "fly.io" in values, values
    fly = values.index("fly.io")
    assert all(not d.standing for d in state.decisions[fly + 1:])
    assert any(d.evidence.startswith(("Your Docker", "JetBrains")) for d in
               state.decisions[fly + 1:]), values  # said once, newer: after it
    out = served.hook("SessionStart", {"session_id": "later", "source": "startup"})
    text = out["hookSpecificOutput"]["additionalContext"]
    decisions = next(b for b in text.split("\n\n") if b.startswith("Current decisions"))
    assert "Fly.io" in decisions.splitlines()[1], decisions


def test_one_code_setting_with_another_number_is_one_slot_whatever_words_surround_it(
        served: Served) -> None:
    """``f_auto,q_75,w_<width>`` then ``f_auto,q_60,...`` then a revert to ``q_75``: the three
    statements name the setting in three ways ("custom loader", "now requests", "loader
    quality"), so no topic joins them; the code template does."""
    capture(served, "s1", "catalog pages + product images",
            "- `next/image` with custom loader `cloudinaryLoader`: `f_auto,q_75,w_<width>`")
    time.sleep(0.01)
    capture(served, "s2", "LCP is 3.4s on PDP. squeeze the images",
            "- `cloudinaryLoader` now requests `q_60` (`f_auto,q_60,w_<width>`)")
    time.sleep(0.01)
    capture(served, "s3", "glazes look blotchy, go back",
            "revert(web): product images back to q_75\n\n"
            "- loader quality 60 → 75 again (`f_auto,q_75,w_<width>`)")
    context = context_for(served, "Which Cloudinary quality do product images use?")
    assert "f_auto,q_75,w_<width>" in context, context
    assert "q_60" not in context.replace("60 → 75", ""), context
    # The store's verdict, not only what one prompt was given: the q_60 statement is retired.
    found = served.json("search", "cloudinaryLoader requests q_60")["results"]
    assert not [h for h in found if "now requests" in h["content"]
                and h["status"] == "current"], found
