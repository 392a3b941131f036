"""Pause: hooks capture and inject nothing while paused, still answer at once; the daemon
keeps the pause across a restart until it runs out; one agent session can be paused alone."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from lintaid.pause import PauseState
from lintaid_client import paths
from lintaid_client.ops import validate
from lintaid_client.protocol import BadRequest
from tests.conftest import Served
from tests.transcripts import stop_payload, write_transcript

PROMPT = "How many times do the billing webhooks retry?"


# -- the state, by itself ------------------------------------------------------------------------
def test_a_pause_covers_its_span_and_runs_out(tmp_path: Path) -> None:
    state = PauseState(tmp_path / "pause.json")
    assert not state.paused(None, at=1000.0)
    state.pause(600, now=1000.0)
    assert state.paused(None, at=1000.0) and state.paused("any-session", at=1599.0)
    assert not state.paused(None, at=1600.0)  # ran out
    assert not state.paused(None, at=999.0)  # an event from before the pause (spooled)
    assert state.to_dict(now=1001.0)["all"] == {"since": 1000.0, "until": 1600.0}
    assert state.to_dict(now=1700.0) == {"paused": False, "all": None, "sessions": {}}


def test_a_session_pause_leaves_other_sessions_alone(tmp_path: Path) -> None:
    state = PauseState(tmp_path / "pause.json")
    state.pause(None, "s1", now=10.0)
    assert state.paused("s1", at=10.0**9)  # until resumed
    assert not state.paused("s2", at=11.0) and not state.paused(None, at=11.0)
    assert state.to_dict(now=11.0)["paused"] is False  # not everything
    assert state.resume("s2", now=12.0) == {"resumed": False, "session_id": "s2"}
    assert state.resume("s1", now=12.0) == {"resumed": True, "session_id": "s1"}
    assert not state.paused("s1", at=13.0)


def test_the_file_is_private_survives_a_restart_and_goes_when_nothing_is_paused(
        tmp_path: Path) -> None:
    path = tmp_path / "pause.json"
    PauseState(path).pause(3600, now=100.0)
    PauseState(path).pause(None, "s1", now=100.0)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    again = PauseState(path)
    assert again.paused(None, at=200.0) and again.paused("s1", at=5000.0)
    assert again.resume(now=300.0)["resumed"]
    assert not path.exists()


def test_an_unreadable_file_is_no_pause_and_no_crash(tmp_path: Path) -> None:
    path = tmp_path / "pause.json"
    path.write_text("{not json")
    assert not PauseState(path).paused(None, at=1.0)


@pytest.mark.parametrize("bad", ["5x", "1h30", "0s", "400d", "", "-5m"])
def test_a_bad_duration_is_refused_with_the_way_to_write_one(bad: str) -> None:
    with pytest.raises(BadRequest, match="'duration' must be"):
        validate("pause", {"duration": bad})


def test_durations() -> None:
    assert validate("pause", {"duration": "1h30m"})["duration"] == 5400.0
    assert validate("pause", {"duration": "45s", "session_id": "s"})["duration"] == 45.0
    assert validate("pause", {})["duration"] is None


# -- through the daemon (in this process) and the hook shim's logic --------------------------------
def _capture(served: Served, session: str, answer: str) -> None:
    root = served.root
    transcript = write_transcript(root.parent / f"{session}.jsonl", [
        ("user", "Where do the billing webhooks retry?"), ("assistant", answer)],
        session_id=session, cwd=str(root))
    assert served.hook("Stop", stop_payload(transcript, session_id=session, cwd=str(root))) == {}


def _prompt(served: Served, session: str) -> dict:
    return served.hook("UserPromptSubmit", {"session_id": session, "prompt": PROMPT})


def _cli(served: Served, *args: str) -> str:
    """``lintaid ARGS``; it must succeed; its output."""
    result = served.cli(*args)
    assert result.exit_code == 0, result.stderr
    return result.stdout


def stored(served: Served) -> int:
    """Everything written: records and prompts (which are counted apart)."""
    memory = served.call("status")["memory"]
    return int(memory["records"]) + int(memory["prompts"])


def test_paused_hooks_capture_and_inject_nothing_until_resumed(served: Served) -> None:
    _capture(served, "before", "Billing webhooks retry five times with jittered backoff.")
    assert "jittered" in json.dumps(_prompt(served, "s1"))
    records = stored(served)

    out = _cli(served, "pause", "--for", "2h")
    assert "paused capture and injection for everything until" in out
    status = served.json("status")["pause"]
    assert status["paused"] and status["all"]["until"] - status["all"]["since"] == 7200
    assert "paused    everything until" in _cli(served, "status")

    assert _prompt(served, "s1") == {}  # nothing injected, and the prompt not recorded
    _capture(served, "during", "Billing webhooks moved to a dead-letter queue.")
    assert stored(served) == records

    # The daemon holds the pause across a restart.
    served.stop()
    assert paths.pause_path(served.root).exists()
    served.start()
    assert served.json("status")["pause"]["paused"]
    assert _prompt(served, "s1") == {}

    assert "resumed capture and injection for everything" in _cli(served, "resume")
    assert "was not paused" in _cli(served, "resume")
    assert "jittered" in json.dumps(_prompt(served, "s2"))
    assert stored(served) == records + 1  # prompts are recorded again
    assert "paused    no" in _cli(served, "status")


def test_one_session_can_be_paused_alone(served: Served) -> None:
    _capture(served, "before", "Billing webhooks retry five times with jittered backoff.")
    out = _cli(served, "pause", "--session", "quiet-session")
    assert "for session quiet-session until `lintaid resume`" in out
    records = stored(served)
    assert _prompt(served, "quiet-session") == {}
    assert stored(served) == records
    assert "jittered" in json.dumps(_prompt(served, "loud-session"))
    assert stored(served) == records + 1
    status = served.json("status")["pause"]
    assert not status["paused"] and list(status["sessions"]) == ["quiet-session"]
    _cli(served, "resume", "--session", "quiet-session")
    assert "jittered" in json.dumps(_prompt(served, "quiet-session"))


def test_a_bad_duration_on_the_command_line_says_how_to_write_one(served: Served) -> None:
    result = served.cli("pause", "--for", "soon")
    assert result.exit_code != 0
    assert "--for must be a length of time such as 90s, 30m" in result.stderr
    assert not served.json("status")["pause"]["paused"]
