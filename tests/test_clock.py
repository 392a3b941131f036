"""The hybrid logical clock: never backwards, close to the wall clock, comparable."""

from __future__ import annotations

import threading

from lintaid.clock import HybridClock


class FakeWall:
    """A wall clock the test sets: the point is a clock that steps back."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_stamps_follow_the_wall_clock_and_never_go_back() -> None:
    wall = FakeWall(1_800_000_000.0)
    clock = HybridClock(wall=wall)
    first = clock.now()
    assert first == 1_800_000_000.0
    wall.now += 300  # five minutes fast ...
    fast = clock.now()
    assert fast == 1_800_000_300.0
    wall.now -= 300  # ... then corrected
    after = [clock.now() for _ in range(5)]
    assert all(b > a for a, b in zip([fast, *after], after, strict=False))
    assert after[-1] - fast < 0.001  # the logical counter moves, not the time


def test_many_stamps_in_one_millisecond_stay_ordered() -> None:
    clock = HybridClock(wall=FakeWall(1_800_000_000.0))
    stamps = [clock.now() for _ in range(2500)]
    assert stamps == sorted(set(stamps))


def test_observed_stamps_push_the_clock_forward() -> None:
    clock = HybridClock(wall=FakeWall(100.0))
    clock.observe(200.5)
    assert clock.now() > 200.5
    clock.observe(float("nan"))
    clock.observe(50.0)  # older: nothing changes
    assert clock.now() > 200.5


def test_restart_continues_after_the_newest_stored_stamp() -> None:
    clock = HybridClock(last=1_900_000_000.25, wall=FakeWall(1_800_000_000.0))
    assert clock.now() > 1_900_000_000.25


def test_threads_get_distinct_increasing_stamps() -> None:
    clock = HybridClock()
    out: list[list[float]] = [[] for _ in range(4)]

    def take(bucket: list[float]) -> None:
        bucket.extend(clock.now() for _ in range(500))

    threads = [threading.Thread(target=take, args=(b,)) for b in out]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    every = [s for bucket in out for s in bucket]
    assert len(set(every)) == len(every)
    assert all(bucket == sorted(bucket) for bucket in out)
