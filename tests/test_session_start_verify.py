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
