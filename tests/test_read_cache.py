"""What a read keeps until the next write (``store.cache``): staleness evidence judged again
is the same as judged afresh, and the write that changes it (a confirming record, a
confirmation by hand, a forget) is seen at once."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from lintaid.policy import staleness as policy
from lintaid.store_lint import StoreJudge
from tests.test_record_watch import DAY, T0
from tests.test_record_watch import Store as WatchStore


class Store(WatchStore):
    """The record-watch tests' store, judging staleness evidence as reads do."""

    def judged(self, ids: list[str], at: float = T0) -> dict[str, tuple[object, ...]]:
        out = StoreJudge(self.store, policy.StalenessConfig()).judge(ids, at)
        return {rid: (s.level, s.score, s.confirmations, s.reason) for rid, s in out.items()}

    def afresh(self, ids: list[str], at: float = T0) -> dict[str, tuple[object, ...]]:
        self.store.cache.clear()
        return self.judged(ids, at)


@pytest.fixture
def st(tmp_path: Path) -> Iterator[Store]:
    s = Store(tmp_path)
    try:
        yield s
    finally:
        s.writer.stop()
        s.store.close()


def test_evidence_kept_until_a_write_changes_it(st: Store) -> None:
    old = st.add("We use Redis for session storage.", 200)
    other = st.add("The upload limit is 25 MB.", 150)
    ids = [old, other]
    first = st.judged(ids)
    assert st.store.cache.found("evidence", ids).keys() == set(ids)  # kept
    assert st.judged(ids) == first == st.afresh(ids)
    st.judged(ids)
    again = st.add("We use Redis for session storage.", 1)  # says it again: a confirmation
    confirmed = st.judged(ids)
    assert confirmed == st.afresh(ids)
    assert confirmed[old] != first[old] and confirmed[other] == first[other]
    st.writer.run(lambda: st.store.confirm(other, "local", "test", at=T0 - DAY))
    assert st.judged(ids) == st.afresh(ids)
    assert st.judged(ids)[other] != first[other]
    st.writer.run(lambda: st.store.forget(again, "local", None, "test"))
    assert st.judged(ids) == st.afresh(ids)
    assert st.judged(ids)[old] == first[old]


def test_a_judgement_of_the_past_is_never_kept(st: Store) -> None:
    old = st.add("We use Redis for session storage.", 200)
    st.add("We use Redis for session storage.", 1)
    before = T0 - 100 * DAY  # before the second record: it does not count yet
    st.store.cache.clear()
    past = st.judged([old], before)
    assert st.store.cache.found("evidence", [old]) == {}
    assert past != st.judged([old]) and past == st.afresh([old], before)
