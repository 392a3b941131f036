"""A record's text is versioned in time, and time queries say which store they cover.

A note is added, then edited (``lintaid edit``): searched ``--as-of`` a time between the two, it
shows the text it had then (from the audit log), with no claims (they were derived from the
text it has now); as of now, the edited text. ``--valid-at`` and ``--as-of`` cover memory only:
project files hold no past versions, so with both stores they bring none, and asked of the
workspace alone they are refused with why (a real daemon watching a git tree).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from tests.conftest import Served, wait_for
from tests.test_e2e_spine import git_init

BEFORE = "Deploy region: eu-west-1."
AFTER = "Deploy region: us-east-2."


def test_as_of_shows_the_text_a_record_had_then(served: Served) -> None:
    rid = served.json("add", BEFORE)["id"]
    between = time.time()
    edited = served.cli("edit", rid, "--text", AFTER)
    assert edited.exit_code == 0, edited.stderr
    now = served.json("search", "deploy region")["results"]
    assert [(h["id"], h["content"]) for h in now] == [(rid, AFTER)]
    assert now[0]["claims"]
    then = served.json("search", "deploy region", "--as-of", str(between))["results"]
    assert [(h["id"], h["content"]) for h in then] == [(rid, BEFORE)]
    assert then[0]["claims"] == [] and then[0]["updated_at"] == then[0]["created_at"]
    # edited twice: each time between gets the text it had
    second = time.time()
    served.cli("edit", rid, "--text", AFTER.replace("us-east-2", "ap-south-1"))
    middle = served.json("search", "deploy region", "--as-of", str(second))["results"]
    assert middle[0]["content"] == AFTER and middle[0]["updated_at"] > between
    assert served.json("search", "deploy region", "--as-of",
                       str(between))["results"][0]["content"] == BEFORE
    shown = served.cli("search", "deploy region", "--as-of", str(between)).stdout
    assert "eu-west-1" in shown and "ap-south-1" not in shown


def test_time_queries_cover_memory_only(project: Path,
                                        serve: Callable[..., Served]) -> None:
    git_init(project)
    (project / "docs").mkdir()
    (project / "docs" / "deploy.md").write_text("# Deploy\n\nThe billing service deploys "
                                                "to region eu-west-1 every Tuesday.\n")
    served = serve(project, watch=True)
    wait_for(lambda: served.json("status")["workspace"]["ready"], timeout=60)
    served.json("add", BEFORE)
    plain = served.json("search", "billing service deploy region")["results"]
    assert {h["store"] for h in plain} == {"memory", "workspace"}
    for option in ("--valid-at", "--as-of"):
        timed = served.json("search", "billing service deploy region", option,
                            str(time.time()))["results"]
        assert timed and {h["store"] for h in timed} == {"memory"}, option
        refused = served.cli("search", "billing service deploy region", option,
                             str(time.time()), "--store", "workspace")
        assert refused.exit_code != 0 and "cover memory only" in refused.stderr, option
