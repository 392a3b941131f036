"""Sentence splitting, claim extraction, cues, history queries and scope."""

from __future__ import annotations

import pytest

from lintaid.policy import (
    claim_scope,
    extract_claims,
    has_correction_cue,
    headings,
    is_history_query,
    normalize_value,
    split_sentences,
    strip_history_phrases,
)
from lintaid.retrieval.query import plan as query_plan


def triples(text: str) -> list[tuple[str, str, str]]:
    return [(c.subject, c.predicate, c.value) for c in extract_claims(text)]


# ---------------------------------------------------------------------------------------------
# Sentences


def test_split_keeps_offsets_into_the_original_text() -> None:
    text = "  First one.  Second one!\nThird one? fourth"
    spans = split_sentences(text)
    assert [s.text for s in spans] == ["First one.", "Second one!", "Third one?", "fourth"]
    for span in spans:
        assert text[span.start:span.end] == span.text


def test_split_keeps_decimals_file_names_and_abbreviations_whole() -> None:
    text = ("We released version 2.0 today. Version 1.5 is old. See config.yaml, e.g. the retry "
            "section. Tag v1.2.3 is pinned. Attempts: 5.")
    assert [s.text for s in split_sentences(text)] == [
        "We released version 2.0 today.",
        "Version 1.5 is old.",
        "See config.yaml, e.g. the retry section.",
        "Tag v1.2.3 is pinned.",
        "Attempts: 5.",
    ]


def test_split_skips_frontmatter_code_and_headings() -> None:
    text = (
        "---\nsupersedes: decision-a.md\nnote: we no longer use Redis.\n---\n"
        "# Gateway Retry Policy\n\n"
        "Gateway timeout retry attempts: 2.\n"
        "```python\nretry_limit = 9  # We use Redis for caching.\n```\n"
        "## Details\nMore text here.\n"
    )
    assert [s.text for s in split_sentences(text)] == [
        "Gateway timeout retry attempts: 2.", "More text here."
    ]
    heads = headings(text)
    assert [h for _, h in heads] == ["Gateway Retry Policy", "Details"]
    assert text[heads[0][0]:].startswith("# Gateway Retry Policy")
    assert triples(text) == [("gateway timeout retry attempts", "value", "2")]


def test_numbered_list_marker_does_not_split() -> None:
    assert [s.text for s in split_sentences("1. Use Redis for caching.\n2. Done.")] == [
        "1. Use Redis for caching.", "2. Done."
    ]


# ---------------------------------------------------------------------------------------------
# Patterns


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # ownership
        ("The National Park POD owns valve control.",
         ("valve control", "owner", "national park pod")),
        ("Valve control is owned by the Controls POD.", ("valve control", "owner", "controls pod")),
        ("The Controls POD is now responsible for valve control.",
         ("valve control", "owner", "controls pod")),
        ("We assigned the billing migration to the payments team.",
         ("billing migration", "owner", "payments team")),
        ("The billing migration is assigned to Dana.", ("billing migration", "owner", "dana")),
        ("user: The platform team owns the control surface.",
         ("control surface", "owner", "platform team")),
        ("- The platform team owns deploys.", ("deploys", "owner", "platform team")),
        # usage
        ("We use Postgres for analytics.", ("analytics", "implementation", "postgres")),
        ("We chose Celery for background jobs.", ("background jobs", "implementation", "celery")),
        ("Mentor: pick pytest for the test runner.",
         ("test runner", "implementation", "pytest")),
        ("The deployment strategy uses blue-green releases.",
         ("deployment strategy", "implementation", "blue-green releases")),
        ("Session storage is handled by Redis.", ("session storage", "implementation", "redis")),
        ("use Vim as the preferred IDE", ("preferred ide", "implementation", "vim")),
        # switches
        ("We migrated session storage from Redis to Memcached.",
         ("session storage", "implementation", "memcached")),
        ("We moved from Redis to Memcached for session storage.",
         ("session storage", "implementation", "memcached")),
        ("We switched from pip to uv.", ("tool:pip", "implementation", "uv")),
        ("We use uv instead of pip.", ("tool:pip", "implementation", "uv")),
        ("We replaced Travis with GitHub Actions for CI.",
         ("ci", "implementation", "github actions")),
        ("We changed the timeout from 30s to 60s.", ("timeout", "value", "60s")),
        ("We upgraded Python from 3.11 to 3.12.", ("python", "version", "3.12")),
        # deprecation / status
        ("Python 2 is deprecated.", ("python 2", "status", "deprecated")),
        ("We no longer use Jenkins.", ("jenkins", "status", "deprecated")),
        ("Jenkins is no longer supported.", ("jenkins", "status", "deprecated")),
        ("We now use GitHub Actions.", ("github actions", "status", "in-use")),
        ("We use Ruff now.", ("ruff", "status", "in-use")),
        # defaults
        ("The default branch is main.", ("branch", "default", "main")),
        ("The request timeout defaults to 30 seconds.", ("request timeout", "default", "30s")),
        # versions
        ("Python version is 3.12.", ("python", "version", "3.12")),
        ("Use Node version 20.11.", ("node", "version", "20.11")),
        ("Postgres is pinned to 15.4.", ("postgres", "version", "15.4")),
        ("Install requests==2.31.0 first.", ("requests", "version", "2.31.0")),
        # scalar settings
        ("Gateway timeout retry attempts: 5.", ("gateway timeout retry attempts", "value", "5")),
        ("retry_limit: 3", ("retry_limit", "value", "3")),
        ("retry_limit = 5", ("retry_limit", "value", "5")),
        ("user: timeout: 100", ("timeout", "value", "100")),
        ("user: version: 2.0", ("version", "value", "2.0")),
        ("- cache_ttl: 5 minutes", ("cache_ttl", "value", "5min")),
        ("The pool size is set to 20.", ("pool size", "value", "20")),
        ("Set the pool size to 20.", ("pool size", "value", "20")),
        ("dark_mode: enabled", ("dark_mode", "value", "true")),
        ("Disk quota: 80%", ("disk quota", "value", "80%")),
        # conventions
        ("always start function names with 'x_'", ("function names", "convention:prefix", "x_")),
        ("always end variable names with '_w'", ("variable names", "convention:suffix", "_w")),
        ("Always prefix function names with `x_`.", ("function names", "convention:prefix", "x_")),
        ("always include the string 'chx' in attribute names",
         ("attribute names", "convention:contains", "chx")),
        ("always include a single digit in method names",
         ("method names", "convention:contains", "single digit")),
        ("always use CamelCase for class names", ("class names", "convention:case", "camelcase")),
        ("always use all UPPERCASE for class names",
         ("class names", "convention:case", "uppercase")),
        ("Use snake_case naming for functions.",
         ("function names", "convention:case", "snake_case")),
        ("When naming methods, start the name with 'gn_'.",
         ("method names", "convention:prefix", "gn_")),
        ("For functions, always begin the name with 'fn_'.",
         ("function names", "convention:prefix", "fn_")),
        ("Parameter names should end with '_in'.",
         ("function argument names", "convention:suffix", "_in")),
        ("Start commit messages with 'feat:'.",
         ("commit messages", "convention:prefix", "feat:")),
        ("always use a virtual environment",
         ("use virtual environment", "convention", "always")),
        ("Never commit directly to the main branch.",
         ("commit directly to main branch", "convention", "never")),
        ("Do not commit directly to the dev branch.",
         ("commit directly to dev branch", "convention", "never")),
        ("Inputs must always be validated.", ("inputs be validated", "convention", "always")),
    ],
)
def test_pattern(text: str, expected: tuple[str, str, str]) -> None:
    assert expected in triples(text)


def test_usage_strips_cue_tail_and_records_replaced_value() -> None:
    [claim] = extract_claims("We use MongoDB for analytics instead of Postgres.")
    assert (claim.subject, claim.predicate, claim.value) == ("analytics", "implementation",
                                                             "mongodb")
    assert claim.replaces == "postgres"
    assert claim.cue


def test_switch_records_replaced_value() -> None:
    [claim] = extract_claims("We migrated session storage from Redis to Memcached.")
    assert claim.replaces == "redis"
    [claim] = extract_claims("We switched to Memcached for session storage instead of Redis.")
    assert (claim.subject, claim.value, claim.replaces) == ("session storage", "memcached",
                                                            "redis")


def test_switch_without_purpose_meets_use_instead() -> None:
    # Documented choice: the old value is the anchor, so both statements land on tool:pip.
    assert triples("We switched from pip to uv.") == triples("From now on we use uv instead of pip.")


def test_version_keeps_decimals_whole() -> None:
    assert triples("user: version: 1.5") == [("version", "value", "1.5")]
    assert ("we released", "version", "2") not in triples("We released version 2.0 today.")


def test_negated_and_historical_usage_is_not_a_claim() -> None:
    assert triples("We don't use Redis for sessions.") == []
    assert triples("We used to use Postgres for analytics.") == []
    assert triples("We don't use Redis for sessions; we use Memcached for sessions.") == [
        ("sessions", "implementation", "memcached")
    ]


def test_questions_assert_nothing() -> None:
    assert triples("Should we use Redis for session storage?") == []
    assert triples("Who owns valve control now?") == []


def test_pronoun_subjects_are_dropped() -> None:
    assert triples("It uses a lot of memory.") == []
    assert triples("This replaces the previous decision.") == []


def test_scalar_units_normalise() -> None:
    assert normalize_value("5s") == normalize_value("5 seconds") == "5s"
    assert normalize_value("250 ms") == "250ms"
    assert normalize_value("2 hours") == normalize_value("2h") == "2h"
    assert normalize_value("enabled") == normalize_value("on") == "true"
    assert normalize_value("blue") is None
    assert triples("timeout: 5s") == triples("timeout: 5 seconds")


def test_canonical_subjects_and_values() -> None:
    assert triples("The current  Platform   Team owns the New Control Surface.") == [
        ("control surface", "owner", "platform team")
    ]


def test_deduplicates_per_text() -> None:
    text = "We use Redis for caching. We use Redis for caching! Redis is used for caching."
    assert triples(text) == [("caching", "implementation", "redis")]


def test_evidence_and_span() -> None:
    text = "Intro line.\nWe use Redis for caching. Tail."
    [claim] = extract_claims(text)
    assert claim.evidence == "We use Redis for caching."
    assert text[claim.start:claim.end] == claim.evidence


# ---------------------------------------------------------------------------------------------
# Naming conventions as people phrase them (several targets, anaphora, examples)


def test_two_targets_in_one_sentence() -> None:
    got = triples("From now on, always start your variable names with 'm_' and your method "
                  "names with 'a_'.")
    assert got == [("variable names", "convention:prefix", "m_"),
                   ("method names", "convention:prefix", "a_")]


def test_prefix_and_suffix_for_one_target() -> None:
    got = triples("Always start your function names with 'x_' and end them with '_d'.")
    assert got == [("function names", "convention:prefix", "x_"),
                   ("function names", "convention:suffix", "_d")]


def test_anaphora_takes_the_previous_sentence_target() -> None:
    got = triples("Let's talk about attribute names. Begin them with 'r_' as a prefix.")
    assert got == [("attribute names", "convention:prefix", "r_")]


def test_examples_and_decorators_are_not_affixes() -> None:
    got = triples("When naming attributes, start the name with 'i_' as in 'input' or 'info'.")
    assert got == [("attribute names", "convention:prefix", "i_")]
    got = triples("For all your methods, start using the '@validate' decorator from the "
                  "'pedantic' module.")
    assert not [t for t in got if t[1].startswith("convention:")]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a case style spelled with "letters", or named as a convention
        ("Use all uppercase letters for class names.", ("class names", "convention:case",
                                                         "uppercase")),
        ("Always use uppercase letters when naming classes.",
         ("class names", "convention:case", "uppercase")),
        ("Please adopt the CamelCase convention for class names.",
         ("class names", "convention:case", "camelcase")),
        # a listener repeating the rule back lands on the canonical subject
        ("I'll start using the 'fn_' prefix for all new functions I create.",
         ("function names", "convention:prefix", "fn_")),
        ("I'll make sure to use the 'x_' prefix for function arguments from now on.",
         ("function argument names", "convention:prefix", "x_")),
        ("I'll start using the 'g_' prefix for function argument names from now on.",
         ("function argument names", "convention:prefix", "g_")),
        # no rule word: the affix's own shape says prefix or suffix
        ("For function arguments, use 'a_' as in 'a_argument_name'.",
         ("function argument names", "convention:prefix", "a_")),
        ("Use '_impl' for all modules.", ("module names", "convention:suffix", "_impl")),
        # qualifiers that do not change the rule
        ("For member variables, always start the name with 'm_'.",
         ("variable names", "convention:prefix", "m_")),
        # spelled-out underscores
        ("For method names, end them with an underscore followed by the letters 'md'.",
         ("method names", "convention:suffix", "_md")),
        ("Start all your variable names with 'z', followed by an underscore.",
         ("variable names", "convention:prefix", "z_")),
        # the kind as the sentence subject, or the activity naming it
        ("Make sure that all attributes in the code end with '_j'.",
         ("attribute names", "convention:suffix", "_j")),
        ("Ensure your functions are named clearly, ending them with '_y'.",
         ("function names", "convention:suffix", "_y")),
        ("When you're ending function arguments, end the names with '_x'.",
         ("function argument names", "convention:suffix", "_x")),
        ("Always use snake_case for function names.",
         ("function names", "convention:case", "snake_case")),
    ],
)
def test_naming_rule_phrasings(text: str, expected: tuple[str, str, str]) -> None:
    assert triples(text) == [expected]


def test_two_bare_targets_each_take_their_affix() -> None:
    got = triples("From now on, I'll use '_y' for variables and '_a' for methods.")
    assert got == [("variable names", "convention:suffix", "_y"),
                   ("method names", "convention:suffix", "_a")]


def test_case_goes_to_the_target_it_leads_into() -> None:
    got = triples("End all variable names with '_n', and use all uppercase letters for class "
                  "names.")
    assert sorted(got) == [("class names", "convention:case", "uppercase"),
                           ("variable names", "convention:suffix", "_n")]


@pytest.mark.parametrize(
    "text",
    [
        "The same goes for method names. End those with '_ud'.",
        "I want a convention for method names. End all such names with '_ud'.",
    ],
)
def test_demonstratives_refer_back_to_the_previous_target(text: str) -> None:
    assert triples(text) == [("method names", "convention:suffix", "_ud")]


def test_stopping_one_thing_and_starting_a_rule() -> None:
    got = triples("I'll stop using virtual environments and start prefixing my attribute names "
                  "with 'q_'.")
    assert ("attribute names", "convention:prefix", "q_") in got
    assert ("virtual environments", "status", "deprecated") in got


def test_contains_phrase_stops_at_the_next_clause() -> None:
    got = triples("When naming classes, always include a single digit and use snake_case.")
    assert got == [("class names", "convention:case", "snake_case"),
                   ("class names", "convention:contains", "single digit")]


@pytest.mark.parametrize(
    "text",
    [
        "Add docstrings for all functions.",  # "for <kind>" without an affix or case style
        "I'll include the '@validate' decorator from 'pedantic' for all functions I write.",
        "Start every module name with a lowercase letter.",  # one letter, not a case style
        "Prefix constants with two uppercase letters.",
        "It's similar to the 'self' prefix for instance variables in other languages.",
        "I previously asked you to end function names with '_y', but now reverse that.",
        "Never start function names with 'x_'.",
    ],
)
def test_not_naming_rules(text: str) -> None:
    assert not [t for t in triples(text) if t[1].startswith("convention:")]


def test_a_loose_target_is_no_context_for_the_next_sentence() -> None:
    got = triples("The 'gn_' prefix for functions is about scope. As for the other one, it "
                  "marks 'y_' as local.")
    assert got == [("function names", "convention:prefix", "gn_")]


def test_rules_for_different_targets_stay_apart() -> None:
    a = extract_claims("start function names with 'a_'")[0]
    b = extract_claims("start function names with 'fn_'")[0]
    c = extract_claims("start variable names with 'fn_'")[0]
    assert (a.subject, a.predicate) == (b.subject, b.predicate)
    assert (c.subject, c.predicate) != (a.subject, a.predicate)


# ---------------------------------------------------------------------------------------------
# Cues


@pytest.mark.parametrize(
    "sentence",
    [
        "This supersedes the old policy: the team owns X.",
        "Memcached replaces Redis.",
        "Redis was replaced by Memcached.",
        "We use uv instead of pip.",
        "We no longer use Jenkins.",
        "The owner changed from Ann to Bob.",
        "We switched from pip to uv.",
        "We migrated from MySQL to Postgres.",
        "We moved from Jenkins to Actions.",
        "Previously the platform team owned it.",
        "Formerly handled by ops.",
        "We now use Ruff.",
        "From now on, end names with '_x'.",
        "Going forward, use tabs.",
        "Update: retries are 5.",
        "Correction: the owner is Bob.",
        "The Controls POD is now responsible for valve control.",
        "We use Ruff now.",
    ],
)
def test_cue_positive(sentence: str) -> None:
    assert has_correction_cue(sentence)


@pytest.mark.parametrize(
    "sentence",
    [
        "The replacesment part arrived.",
        "Our unprevious attempt failed.",
        'The doc literally says "we no longer use Redis" in its title.',
        "The old README said 'this replaces everything' but it does not.",
        "We use Redis for caching.",
        "An update is available.",
        "The supersedesque style.",
    ],
)
def test_cue_negative(sentence: str) -> None:
    assert not has_correction_cue(sentence)


def test_quoted_utterance_is_speech_not_a_quotation() -> None:
    assert has_correction_cue('Alice: "We no longer use Redis."')


def test_claim_cue_is_per_sentence() -> None:
    claims = extract_claims("This replaces the previous decision.\nThe Controls POD owns valve "
                            "control.")
    assert [c.cue for c in claims] == [False]
    claims = extract_claims("This replaces the previous decision: the Controls POD owns valve "
                            "control.")
    assert [c.cue for c in claims] == [True]


# ---------------------------------------------------------------------------------------------
# History queries


@pytest.mark.parametrize(
    "query",
    [
        "what changed about who owns the control surface",
        "What has changed in the retry policy?",
        "why did we change the session store",
        "what was true before the migration",
        "what did we use before Memcached",
        "who owned this before",
        "who was responsible before the reorg",
        "retry settings before the change",
        "before we changed the owner",
        "what did we used to use for caching",
        "show the timeline of valve control",
        "changelog of the gateway policy",
        "previous owner of billing",
        "which database did we previously use",
        "formerly used tools",
        "superseded decisions",
        "what changed in gateway retry attempts",
        "which HTTP client was previously used by the gateway",
        "what did we use before we switched to httpx",
        "why did we switch the gateway to httpx",
        "what did the gateway use before",
        "how has the retry policy changed",
        "the decision history of the cache",
        # "history of" a thing of the project asks how it changed, like "timeline of" above
        # (the history of something outside the project is a general question, not this)
        "History of the control surface",
    ],
)
def test_history_query_positive(query: str) -> None:
    assert is_history_query(query)


@pytest.mark.parametrize(
    "query",
    [
        "who owns valve control now",
        "what must happen before deployment",
        "validate inputs before saving",
        "check authorization before updating status",
        "the script is used to build the docs",
        "historically accurate storytelling",
        "how many retry attempts should we use for gateway timeouts",
        # "history" or "used to" alone is no question about a change in the project
        "historical retry values",
        "the history module",
        "how is the history table pruned",
        "what is the script used to build",
        "which library is used to parse the config",
        "we used to think this was slow",
        "run the linter before we commit",
    ],
)
def test_history_query_negative(query: str) -> None:
    assert not is_history_query(query)


def test_strip_history_phrases() -> None:
    """What the question names stays for ranking; its past-tense scaffolding goes. Ranking
    reads the content words (``retrieval.query.plan``), so that is what is compared: which
    function words the strip keeps does not change a rank."""
    def ranked_words(query: str) -> list[str]:
        return query_plan(strip_history_phrases(query), 0.0).words

    assert ranked_words("what changed about who owns the control surface") == [
        "owns", "control", "surface"]
    # a current question is ranked exactly as asked
    assert strip_history_phrases("who owns valve control now") == "who owns valve control now"
    assert ranked_words("previous owner of billing") == ["owner", "billing"]
    assert strip_history_phrases("how has the retry policy changed") == "retry policy"
    assert ranked_words("what changed in gateway retry attempts") == [
        "gateway", "retry", "attempts"]
    assert ranked_words("what did the gateway use before") == ["gateway"]


# ---------------------------------------------------------------------------------------------
# Scope


def test_scope_rules() -> None:
    assert claim_scope("capture", "local", "owner", None, None) == "project"
    assert claim_scope("capture", "alice", "value", None, None) == "project"
    assert claim_scope("note", "", "owner", None, None) == "project"
    assert claim_scope("note", "alice", "owner", None, None) == "user:alice"
    assert claim_scope("document", "local", "owner", "docs/a.md", "Ownership") == "project"
    assert claim_scope("document", "local", "value", "decisions/a.md", "Gateway Retry Policy") == (
        "file:decisions::heading:gateway retry policy"
    )
    assert claim_scope("document", "local", "value", "a/cfg.md", "Configuration") == (
        "file:a/cfg.md"
    )
    assert claim_scope("document", "local", "value", "a\\cfg.md", None) == "file:a/cfg.md"


def test_a_synonym_and_the_word_it_stands_for_are_one_term() -> None:
    from lintaid.policy import topics

    # "cron" stands for "schedule": the word "schedule" itself must be that term too.
    assert topics.words("cron") == topics.words("schedule") == topics.words("schedules")
    assert topics.words("photo") == topics.words("images")
    for target in set(topics.SYNONYMS.values()):
        assert topics.words(target) == [target], target
