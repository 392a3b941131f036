"""Claim precision on a hand-labelled corpus (``tests/data/precision/``).

The corpus: this project's own README and design document (copied as they stood; prose about
claims, tables and benchmark figures, nearly none of it a decision a later note could retire),
a developer/assistant chat, a pull-request review, and a hard-wrapped decision document. Each
document's correct claims are labelled below by hand; every other extracted claim is wrong.
The sentences listed as silent (chit-chat, questions, requests, hypotheticals) must yield none.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from lintaid.policy import extract_claims, split_sentences
from lintaid.policy.claims import ANY, RULES, Rule, _check_table

CORPUS = Path(__file__).parent / "data" / "precision"
MAX_WRONG_SHARE = 0.10
"""At most this share of the claims extracted from a document may be wrong."""

Triple = tuple[str, str, str]

EXPECTED: dict[str, set[Triple]] = {
    # "(`LINTAID_HOOK_TIMEOUT_MS`, default 1000)": the one setting the README states as such.
    "readme.md": {("lintaid_hook_timeout_ms", "default", "1000")},
    "design.md": set(),
    "chat.md": {
        ("gateway timeout retry attempts", "value", "3"),
        ("outbound http calls", "implementation", "httpx"),
        ("run linter before pushing", "convention", "always"),
        ("invoices", "implementation", "postgres"),
        ("billing service", "implementation", "postgres"),  # the actor's weak claim
        ("session storage", "implementation", "redis"),
        ("commit directly to main", "convention", "never"),
    },
    "code_review.md": {
        ("retries", "implementation", "tenacity"),
        ("gateway", "implementation", "tenacity"),  # the actor's weak claim
        ("gateway timeout retry attempts", "value", "3"),
        ("retry backoff", "default", "200ms"),
        ("backoff cap", "value", "2s"),
        ("httpx", "version", "0.27.2"),
    },
    "decisions.md": {
        ("gateway", "implementation", "httpx"),
        ("session storage", "implementation", "redis"),
        ("reporting", "implementation", "postgres"),
        ("mysql", "status", "deprecated"),
        ("deploy pipeline", "owner", "platform team"),
        ("retry attempts for the gateway", "value", "3"),
        ("retry_backoff_ms", "default", "200"),
    },
}

SILENT: dict[str, list[str]] = {
    "chat.md": [
        "user: Hi!",
        "Can you help me with the gateway today?",
        "assistant: Of course, happy to help!",
        "What's going on with the gateway?",
        "assistant: Got it.",
        "I'll update the config and run the tests.",
        "assistant: Thanks for the heads-up!",
        "Should I remove requests from the dependencies?",
        "user: Yes please.",
        "assistant: Sounds good.",
        "user: Great work, thanks so much!",
        "assistant: Always here to help!",
        "Let me know if you need anything else.",
        "user: Which database does the billing service use",
        "Let me know if you'd like me to check the migrations too.",
        "user: Could you switch the session store to Redis?",
        "assistant: Sure thing.",
        "user: Perfect.",
        "Don't worry about the docs for now.",
        "assistant: No problem!",
        "Have a great weekend.",
        "user: Maybe we should use Celery for background jobs?",
        "If we used Celery, Redis could be the broker.",
        "user: Can you use the staging bucket for the upload test",
        "Is it the one in us-east-1?",
        "Thanks again!",
        "assistant: You're welcome!",
        "Good luck with the release.",
    ],
    "code_review.md": [
        "nit: `attempt` shadows the outer loop variable; maybe rename it?",
        "Why not use tenacity here?",
        "Good catch, thanks!",
        "Could you add a test for the backoff cap?",
        "Please don't bump it in this PR.",
        "LGTM, thanks!",
        "Nice work on this one.",
        "Merge when CI is green.",
    ],
}


def extracted(name: str) -> list[Triple]:
    text = (CORPUS / name).read_text()
    return [(c.subject, c.predicate, c.value) for c in extract_claims(text)]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_labelled_claim_is_extracted(name: str) -> None:
    assert EXPECTED[name] - set(extracted(name)) == set()


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_wrong_claims_stay_under_the_ceiling(name: str) -> None:
    got = extracted(name)
    wrong = [t for t in got if t not in EXPECTED[name]]
    assert len(wrong) <= MAX_WRONG_SHARE * len(got), wrong


def test_the_whole_corpus_is_precise() -> None:
    got = [t for name in EXPECTED for t in extracted(name)]
    wrong = [t for name in EXPECTED for t in extracted(name) if t not in EXPECTED[name]]
    assert len(got) >= 19  # the labels are reached, not avoided by extracting nothing
    assert len(wrong) <= MAX_WRONG_SHARE * len(got)


@pytest.mark.parametrize(("name", "sentence"),
                         [(n, s) for n, sentences in SILENT.items() for s in sentences])
def test_chit_chat_questions_and_requests_yield_nothing(name: str, sentence: str) -> None:
    flat = {s.flat for s in split_sentences((CORPUS / name).read_text())}
    assert sentence in flat  # the label names a sentence of the document
    assert extract_claims(sentence) == []
    assert not [c for c in extract_claims((CORPUS / name).read_text())
                if c.evidence == sentence]


@pytest.mark.parametrize(
    "text",
    [
        "Always here to help!",
        "Always happy to help.",
        "Thanks again for your help, Alice.",
        "Don't hesitate to reach out if you have any questions.",
        "Keep going and never give up!",
        "Don't worry, I won't let anything get me down.",
        "Jon: Yes.",
        "Your courage is inspiring.",
        "Taking care of ourselves is key.",
        "We're all passionate about using tech for good in our community.",
        "Use their platform for important causes.",
        "You can use stuff like coconut oil instead of butter.",
        "Can you switch the gateway to httpx",
        "Should we use Redis for session storage",
        "We could use Redis for caching.",
        "If we switched from pip to uv, builds would be faster.",
        'Every record is split into claims ("X owns Y", "use X for Y", "name: 5").',
        "A newer claim supersedes an older one when its own sentence carries a cue.",
        "The unit that is retired is the claim: a record whose every claim is superseded and that"
        " says nothing else is hidden.",
        "Let's get back to work.",
        "Fixed: src/gateway/client.py",
        # imperative requests without a fact
        "Please fix the flaky test in the gateway.",
        "Run the migrations and restart the server.",
        "Add a retry to the HTTP client.",
        "Take a look at the failing build when you can.",
    ],
)
def test_text_without_a_fact_yields_nothing(text: str) -> None:
    assert extract_claims(text) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Sounds good, we use httpx for the gateway.", ("gateway", "implementation", "httpx")),
        ("Thanks! Gateway timeout retry attempts: 4.",
         ("gateway timeout retry attempts", "value", "4")),
        ("Please set the pool size to 20.", ("pool size", "value", "20")),
        ("Artifact bucket is s3://alpha.", ("artifact bucket", "value", "s3://alpha")),
        ("artifact_bucket: s3://alpha", ("artifact_bucket", "value", "s3://alpha")),
        ("The socket path is /run/lintaid/sock.", ("socket path", "value", "/run/lintaid/sock")),
        ("Coverage is 85%.", ("coverage", "value", "85%")),
    ],
)
def test_a_fact_after_a_pleasantry_or_in_a_setting_is_kept(text: str, expected: Triple) -> None:
    assert expected in [(c.subject, c.predicate, c.value) for c in extract_claims(text)]


# ---------------------------------------------------------------------------------------------
# Hard-wrapped Markdown


def test_wrapped_lines_are_one_sentence_with_offsets_into_the_original() -> None:
    text = (CORPUS / "decisions.md").read_text()
    by_value = {c.value: c for c in extract_claims(text)}
    mysql = by_value["deprecated"]
    assert mysql.evidence == ("The analytics jobs use Postgres for reporting; we no longer use "
                              "MySQL.")
    assert " ".join(text[mysql.start:mysql.end].split()) == mysql.evidence
    assert "\n" in text[mysql.start:mysql.end]
    owner = by_value["platform team"]
    assert text[owner.start:owner.end] == "- The platform team owns the\n  deploy pipeline."


def test_paragraph_boundaries_are_kept() -> None:
    text = ("Request: which store\nResult: Session storage is handled by Redis\n"
            "retry_limit: 3\nretry_limit = 5\n"
            "We use Redis for caching\nWe use Postgres for analytics\n"
            "- Owner: the platform team\n- Gateway retries: 2\n"
            "| pool size | 20 |\n"
            "# Heading that ends\nwithout a stop\n")
    spans = [s.flat for s in split_sentences(text)]
    assert spans == [
        "Request: which store", "Result: Session storage is handled by Redis", "retry_limit: 3",
        "retry_limit = 5", "We use Redis for caching", "We use Postgres for analytics",
        "- Owner: the platform team", "- Gateway retries: 2", "without a stop",
    ]


def test_a_short_line_stopping_on_a_function_word_was_wrapped() -> None:
    spans = [s.flat for s in split_sentences("We moved the gateway to\nHTTPX last week.\n")]
    assert spans == ["We moved the gateway to HTTPX last week."]


# ---------------------------------------------------------------------------------------------
# The rule table


def test_the_rule_table_is_ordered_and_only_yields_to_earlier_rules() -> None:
    assert [r.priority for r in RULES] == sorted(r.priority for r in RULES)
    names = [r.name for r in RULES]
    assert len(set(names)) == len(names)
    vetoes = [r for r in RULES if r.veto]
    assert {"question", "chit-chat", "hypothetical", "meta"} <= {r.name for r in vetoes}
    assert max(r.priority for r in vetoes) < min(r.priority for r in RULES if not r.veto)
    assert next(r for r in RULES if r.name == "policy").yields_to == ANY


def test_a_table_yielding_to_a_later_rule_is_refused() -> None:
    gate = re.compile("x")
    bad = (Rule("a", 1, gate, lambda s: [], yields_to=frozenset({"b"})),
           Rule("b", 2, gate, lambda s: []))
    with pytest.raises(ValueError, match="yields to a rule that runs after it"):
        _check_table(bad)
    with pytest.raises(ValueError, match="share a priority"):
        _check_table((Rule("a", 1, gate, lambda s: []), Rule("b", 1, gate, lambda s: [])))
