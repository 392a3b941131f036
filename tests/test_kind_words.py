"""A question in the words of a tool's kind finds the statement that names the tool (issue 22):
"Where do exceptions get tracked?" shares no word with "crash reporting moved to Firebase
Crashlytics", yet that is its answer. The index holds, beside each record, the words a
question uses for the kinds of tools it names (``lintaid.policy.kinds.kind_terms``), and a
statement is matched with them. Through the hook shim's logic against a real daemon in this
process, and the pure function on its own."""

from __future__ import annotations

from lintaid.policy.kinds import kind_terms
from tests.conftest import Served
from tests.test_e2e_policy import capture, context_for


def test_a_question_in_a_kinds_words_is_given_the_statement_naming_the_tool(
        served: Served) -> None:
    capture(served, "s1", "Crashes are piling up, pick something.",
            "- crash reporting moved to Firebase Crashlytics\n- dSYMs uploaded in the release job")
    capture(served, "s2", "Bump the build number.", "- build number 412 in pubspec.yaml")
    context = context_for(served, "Where do exceptions get tracked?")
    assert "Firebase Crashlytics" in context, context
    assert "build number" not in context
    # The kind's words are the index's, never the agent's text: nothing invented is shown.
    assert "exceptions tracking" not in context


def test_kind_terms_name_the_kind_of_a_tool_written_as_a_name() -> None:
    assert "database" in kind_terms("api: Fastify 5, Drizzle ORM on Neon Postgres 16").split()
    assert "hosting" in kind_terms("web: Next.js 15 on Vercel").split()
    assert "queue" in kind_terms("jobs go through NATS JetStream").split()
    # Two words make one name; a backticked span counts whole.
    assert "ci" in kind_terms("checks run on GitHub Actions").split()
    assert "migrations" in kind_terms("write the file with `goose`").split()
    # A name that is an ordinary word counts only when written as one.
    assert kind_terms("we render the page and the river flows") == ""
    assert "queue" in kind_terms("background work runs on River").split()
    assert kind_terms("nothing named here") == ""
