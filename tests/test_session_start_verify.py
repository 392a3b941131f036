"""SessionStart names the memories that may be out of date (staleness), so the agent checks
them before relying on them; a fresh store names nothing."""

from __future__ import annotations

import time

from tests.conftest import Served

DAY = 86400.0


def context(served: Served) -> str:
    out = served.hook("SessionStart", {"session_id": "s-new", "source": "startup"})
    return str(out.get("hookSpecificOutput", {}).get("additionalContext", ""))


def test_session_start_names_what_needs_verifying(served: Served) -> None:
    mem = served.memory()
    now = time.time()
    [fresh] = mem.add_many([{"content": "We use Redis for session storage.",
                             "created_at": now - 2 * DAY}])["results"]
    assert "May be out of date" not in context(served)
    [pin] = mem.add_many([{"content": "We pin Django 4.2", "created_at": now - 65 * DAY}])[
        "results"]
    text = context(served)
    section = text.split("May be out of date", 1)[1]
    assert pin["id"] in section and "We pin Django 4.2" in section
    assert fresh["id"] not in section
    mem.call("confirm", {"id": pin["id"]})
    assert "May be out of date" not in context(served)


def test_what_may_be_out_of_date_is_shown_by_what_is_still_believed(served: Served) -> None:
    """A record the audit names is shown by the statements the policy still holds, its
    retired one cut out, not by the start of its text."""
    mem = served.memory()
    now = time.time()
    [old] = mem.add_many([{"content": "The upload limit is 25 MB. Thumbnails are rendered by "
                                      "libvips.", "created_at": now - 65 * DAY}])["results"]
    mem.add_many([{"content": "The upload limit is now 50 MB instead of 25 MB.",
                   "created_at": now - DAY}])
    section = context(served).split("May be out of date", 1)[1].split("\n\n", 1)[0]
    assert old["id"] in section and "libvips" in section
    assert "25 MB" not in section
