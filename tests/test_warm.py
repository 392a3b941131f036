"""The daemon judges what the next SessionStart asks about once writes settle (``Warmer``): a
burst of commits is judged after its last one, and a stopped warmer ends its thread."""

from __future__ import annotations

import threading

from lintaid.warm import Warmer


def test_judged_after_the_last_commit_of_a_burst() -> None:
    state = {"written": 0, "judged": -1}
    judged = threading.Event()

    def compute() -> None:
        state["judged"] = state["written"]
        judged.set()

    warmer = Warmer(compute, quiet_s=0.05)
    warmer.start()
    try:
        for _ in range(5):
            state["written"] += 1
            warmer.poke()
        while state["judged"] != 5:  # each judgement after a poke; the last sees all five
            assert judged.wait(10), "never judged"
            judged.clear()
    finally:
        warmer.stop()
    assert not warmer._thread.is_alive()


def test_a_failing_judgement_keeps_the_warmer_going() -> None:
    calls: list[int] = []

    def compute() -> None:
        calls.append(1)
        raise RuntimeError("the store is closing")

    warmer = Warmer(compute, quiet_s=0.01)
    warmer.start()
    try:
        warmer.poke()
        assert warmer.warmed.wait(10)
        warmer.warmed.clear()
        warmer.poke()
        assert warmer.warmed.wait(10)
    finally:
        warmer.stop()
    assert len(calls) == 2
