"""The single writer puts what people and agents wait for first: a hook's write never queues
behind a backlog of background work (pulled teammates' records, re-indexed files)."""

from __future__ import annotations

import threading
from pathlib import Path

from lintaid.store.memory import MemoryStore
from lintaid.writer import Writer


def test_a_waiting_job_overtakes_queued_background_work(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "proj")
    writer = Writer(store)
    writer.start()
    order: list[str] = []
    hold, running = threading.Event(), threading.Event()
    try:
        first = writer.submit(lambda: (running.set(), hold.wait(30),
                                       order.append("background 1")), background=True)
        assert running.wait(30)  # the writer is busy with it: the rest queue up behind
        backlog = [writer.submit(lambda n=n: order.append(f"background {n}"), background=True)
                   for n in (2, 3, 4)]
        hook = writer.submit(lambda: order.append("hook"))
        hold.set()
        hook.result(30)
        first.result(30)
        for future in backlog:
            future.result(30)
        # The hook's job went into the first batch after the busy one, ahead of the backlog;
        # each batch takes at most one background job.
        assert order == ["background 1", "hook", "background 2", "background 3",
                         "background 4"]
    finally:
        writer.stop()
        store.close()


def test_stop_finishes_every_queued_job_and_refuses_later_ones(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "proj")
    writer = Writer(store)
    writer.start()
    done: list[int] = []
    futures = [writer.submit(lambda n=n: done.append(n), background=n % 2 == 0)
               for n in range(20)]
    writer.stop()
    assert all(f.done() and f.exception() is None for f in futures)
    assert sorted(done) == list(range(20))
    late = writer.submit(lambda: None)
    assert late.exception() is not None
    store.close()
