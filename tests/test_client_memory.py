"""The Python client (``lintaid_client.Memory``) against a real daemon over its real socket.

Daemons come from the shared fixtures in ``conftest.py`` (``project``: an empty project,
``served``: the same with a daemon running in this process, stopped afterwards; auto-start
starts a daemon process). Isolation tests always carry
a positive control: the owner sees the rows (non-empty) before anyone else is shown to see
none, so a search that returns nothing for everybody cannot pass them.
"""

from __future__ import annotations

import datetime as dt
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from lintaid_client import (
    BadRequest,
    DaemonUnavailable,
    LintaidError,
    Memory,
    NotFound,
    connection,
    paths,
)
from lintaid_client.memory import messages_to_text, to_epoch
from tests.conftest import Served, stop_daemon


def ids(result: dict) -> list[str]:
    return [hit["id"] for hit in result["results"]]


def restart(served: Served) -> None:
    served.stop()
    assert connection.ping(served.root, timeout=0.3) is None, "the daemon did not stop"
    served.start()


@pytest.fixture
def mem(served: Served) -> Iterator[Memory]:
    with served.memory() as m:
        yield m


# -- pure helpers (no daemon) ----------------------------------------------------------------
def test_to_epoch_accepts_every_time_shape() -> None:
    utc = dt.datetime(2026, 1, 31, 9, 0, tzinfo=dt.timezone.utc)
    assert to_epoch(None) is None
    assert to_epoch(1700000000) == 1700000000.0
    assert to_epoch(1.5) == 1.5
    assert to_epoch("1700000000.5") == 1700000000.5
    assert to_epoch(utc) == utc.timestamp()
    assert to_epoch("2026-01-31T09:00:00Z") == utc.timestamp()
    assert to_epoch("2026-01-31T09:00:00+00:00") == utc.timestamp()
    assert to_epoch(dt.date(2026, 1, 31)) == dt.datetime(2026, 1, 31).timestamp()
    assert to_epoch("2026-01-31") == dt.datetime(2026, 1, 31).timestamp()
    with pytest.raises(ValueError, match="ISO 8601"):
        to_epoch("next tuesday")
    with pytest.raises(TypeError):
        to_epoch(True)
    with pytest.raises(TypeError):
        to_epoch([2026])  # type: ignore[arg-type]


def test_messages_are_joined_as_role_lines() -> None:
    text = messages_to_text([
        {"role": "user", "content": "which queue do we use?"},
        {"role": "assistant", "content": [{"type": "text", "text": "RabbitMQ"}]},
        "plain line",
    ])
    assert text == "user: which queue do we use?\nassistant: RabbitMQ\nplain line"
    assert messages_to_text({"role": "user", "content": "x"}) == "user: x"
    with pytest.raises(ValueError):
        messages_to_text("   ")
    with pytest.raises(ValueError):
        messages_to_text([{"role": "user"}])
    with pytest.raises(TypeError):
        messages_to_text(42)  # type: ignore[arg-type]


def test_package_import_stays_light() -> None:
    import subprocess
    import sys

    code = ("import sys, lintaid_client; "
            "bad = [m for m in ('mcp', 'pydantic', 'zmq', 'lintaid') if m in sys.modules]; "
            "print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]"


def test_no_daemon_and_no_autostart_is_daemon_unavailable(project: Path) -> None:
    with Memory(project, autostart=False, timeout=1.0) as m:
        with pytest.raises(DaemonUnavailable):
            m.search("anything")
    assert not paths.status_path(project).exists()  # and none was started


# -- the API against a real daemon -------------------------------------------------------------
def test_add_search_get_list(mem: Memory) -> None:
    added = mem.add("The billing service deploys with Helm charts.", metadata={"team": "pay"})
    [row] = added["results"]
    assert row["event"] == "ADD" and row["id"]
    assert row["memory"] == "The billing service deploys with Helm charts."

    again = mem.add("The billing service deploys with Helm charts.")
    assert again["results"][0] == {**row, "event": "NONE"}

    chat = mem.add([{"role": "user", "content": "what broker do we use for billing?"},
                    {"role": "assistant", "content": "RabbitMQ, since March."}])
    chat_id = chat["results"][0]["id"]

    found = mem.search("billing helm deploy")
    assert found["results"], "an acknowledged add must be visible to the very next search"
    top = found["results"][0]
    assert top["id"] == row["id"]
    assert top["status"] == "current"
    assert top["score"] > 0
    assert found["hidden"] == 0

    record = mem.get(row["id"])
    assert record["content"] == "The billing service deploys with Helm charts."
    assert record["memory"] == record["content"]
    assert record["metadata"] == {"team": "pay"}
    assert record["user_id"] == "local"
    assert record["status"] == "current"

    assert mem.get(chat_id)["content"] == (
        "user: what broker do we use for billing?\nassistant: RabbitMQ, since March.")
    listed = mem.get_all()
    assert set(ids(listed)) == {row["id"], chat_id}
    assert len(ids(mem.get_all(limit=1))) == 1


def test_add_returns_what_was_stored_after_redaction(mem: Memory) -> None:
    [row] = mem.add("Deploy notes for the walrus cluster.\n"
                    "api_key=sk-live-abcdef1234567890\nDone.")["results"]
    assert "sk-live" not in row["memory"] and "[REDACTED]" in row["memory"]
    assert mem.get(row["id"])["content"] == row["memory"]


def test_update_changes_what_search_finds(mem: Memory) -> None:
    rid = mem.add("Nightly backups run at 02:00 on the staging cluster.")["results"][0]["id"]
    assert rid in ids(mem.search("nightly backups staging"))
    result = mem.update(rid, "Nightly backups run at 04:00 on the production cluster.",
                        metadata={"checked": True})
    assert result["id"] == rid
    assert mem.get(rid)["content"] == "Nightly backups run at 04:00 on the production cluster."
    assert mem.get(rid)["metadata"] == {"checked": True}
    assert rid in ids(mem.search("production cluster backups"))
    assert rid not in ids(mem.search("staging"))
    events = [e["event"] for e in mem.history(rid)]
    assert events[:2] == ["ADD", "UPDATE"]
    update = mem.history(rid)[1]
    assert update["old_memory"].startswith("Nightly backups run at 02:00")
    assert update["new_memory"].startswith("Nightly backups run at 04:00")
    assert update["memory_id"] == rid


def test_delete_forgets_and_stays_forgotten(mem: Memory) -> None:
    rid = mem.add("The legacy FTP exporter is still used by finance.")["results"][0]["id"]
    keep = mem.add("The FTP credentials rotate monthly.")["results"][0]["id"]
    assert rid in ids(mem.search("ftp exporter finance"))
    mem.delete(rid, reason="exporter removed")
    with pytest.raises(NotFound):
        mem.get(rid)
    assert rid not in ids(mem.search("ftp exporter finance"))
    assert keep in ids(mem.search("ftp"))  # positive control: the search still finds FTP rows
    assert rid not in ids(mem.get_all())
    again = mem.add("The legacy FTP exporter is still used by finance.")["results"][0]
    assert again["event"] == "FORGOTTEN"
    assert rid not in ids(mem.search("ftp exporter finance"))
    with pytest.raises(NotFound):
        mem.delete(rid)
    history = mem.history(rid)
    assert [e["event"] for e in history][0] == "ADD"
    assert "FORGET" in [e["event"] for e in history]


def test_supersede_by_text_and_by_id(mem: Memory) -> None:
    old = mem.add("Gateway timeout retry attempts: 5.")["results"][0]["id"]
    result = mem.supersede(old, "Gateway timeout retry attempts: 2.")
    new = result["new_id"]
    assert result["old_id"] == old and new != old

    found = mem.search("gateway timeout retry attempts")
    assert ids(found) == [new]
    assert found["results"][0]["status"] == "current"
    assert found["hidden"] >= 1
    with_history = mem.search("gateway timeout retry attempts", history=True)
    statuses = {h["id"]: (h["status"], h["historical"]) for h in with_history["results"]}
    assert statuses.get(new) == ("current", False)
    assert statuses.get(old) == ("superseded", True)
    assert mem.get(old)["superseded_by"] == new
    assert old not in ids(mem.get_all())
    assert "SUPERSEDE" in [e["event"] for e in mem.history(old)]

    a = mem.add("Release trains leave every Tuesday.")["results"][0]["id"]
    b = mem.add("Release trains leave every Thursday.")["results"][0]["id"]
    assert mem.supersede(a, new_id=b)["new_id"] == b
    assert ids(mem.search("release trains leave")) == [b]

    with pytest.raises(ValueError):
        mem.supersede(a)
    with pytest.raises(ValueError):
        mem.supersede(a, "x", new_id=b)
    with pytest.raises(NotFound):
        mem.supersede("m-does-not-exist", "Release trains leave daily.")


def test_add_with_supersedes_retires_the_old_record(mem: Memory) -> None:
    old = mem.add("The docs site is built with Sphinx.")["results"][0]["id"]
    new = mem.add("The docs site is built with MkDocs.", supersedes=old)["results"][0]["id"]
    assert ids(mem.search("docs site built")) == [new]


def test_expire_and_expires_at(mem: Memory) -> None:
    soon = mem.add("The office wifi password changes on Friday.")["results"][0]["id"]
    later = mem.add("The office wifi router sits in room 4.",
                    expires_at=dt.datetime.now() + dt.timedelta(days=1))["results"][0]["id"]
    gone = mem.add("The office wifi is down for maintenance.",
                   expires_at=time.time() - 60)["results"][0]["id"]
    found = ids(mem.search("office wifi"))
    assert soon in found and later in found and gone not in found
    mem.expire(soon)
    found = mem.search("office wifi")
    assert ids(found) == [later]
    assert found["hidden"] == 2
    assert mem.get(soon)["status"] == "expired"
    assert soon not in ids(mem.get_all())
    assert "EXPIRE" in [e["event"] for e in mem.history(soon)]


def test_as_of_sees_the_state_at_that_time(mem: Memory) -> None:
    old = mem.add("The CI runs on Jenkins.")["results"][0]["id"]
    time.sleep(0.01)  # the index holds times in milliseconds
    between = dt.datetime.now()
    time.sleep(0.01)
    new = mem.supersede(old, "The CI runs on GitHub Actions.")["new_id"]
    assert ids(mem.search("CI runs")) == [new]
    then = mem.search("CI runs", as_of=between)
    assert ids(then) == [old]
    assert then["results"][0]["status"] == "current"
    assert set(ids(mem.search("CI runs", as_of=between.isoformat()))) == {old}


def test_search_filters_and_argument_errors(mem: Memory) -> None:
    rid = mem.add("Feature flags live in LaunchDarkly.")["results"][0]["id"]
    assert ids(mem.search("feature flags", filters={"store": "memory"})) == [rid]
    assert ids(mem.search("feature flags", filters={"user_id": "someone-else"})) == []
    with pytest.raises(ValueError, match="unsupported search filter"):
        mem.search("feature flags", filters={"provider": "claude"})
    with pytest.raises(ValueError, match="both"):
        mem.search("feature flags", store="workspace", filters={"store": "memory"})
    with pytest.raises(ValueError, match="store"):
        mem.search("feature flags", store="everything")
    with pytest.raises(BadRequest):
        mem.search("feature flags", top_k=0)
    with pytest.raises(BadRequest):
        mem.search("feature flags", top_k=101)
    with pytest.raises(NotFound):
        mem.get("m-no-such-record")
    with pytest.raises(NotFound):
        mem.history("m-no-such-record")
    with pytest.raises(ValueError):
        mem.add("")


def test_threads_share_one_memory(mem: Memory) -> None:
    errors: list[BaseException] = []
    added: list[str] = []
    lock = threading.Lock()

    def work(n: int) -> None:
        try:
            for i in range(10):
                rid = mem.add(f"Thread {n} note {i} about the quokka migration.")["results"][0]
                with lock:
                    added.append(rid["id"])
                mem.search("quokka migration")
        except BaseException as err:  # noqa: BLE001 - reported below
            errors.append(err)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    assert len(set(added)) == 60
    assert set(ids(mem.get_all(limit=100))) == set(added)


@pytest.mark.slow
def test_autostart_on_first_use_and_after_the_daemon_went_away(project: Path) -> None:
    assert connection.ping(project, timeout=0.3) is None
    try:
        with Memory(project, timeout=10) as m:
            rid = m.add("Autostarted daemons answer the first call.")["results"][0]["id"]
            first = connection.ping(project)
            assert first is not None
            stop_daemon(project)
            assert connection.ping(project, timeout=0.3) is None
            # The same Memory starts it again and the row survived.
            assert m.get(rid)["content"] == "Autostarted daemons answer the first call."
            second = connection.ping(project)
            assert second is not None and second["pid"] != first["pid"]
    finally:
        stop_daemon(project)


# -- isolation between users ------------------------------------------------------------------
A_TEXTS = [
    "Zebracorn team alpha owns the ledger service.",
    "Zebracorn team alpha deploys the ledger on Mondays.",
    "Zebracorn team alpha pins Postgres 16 for the ledger.",
]
B_TEXTS = [
    "Zebracorn team beta owns the search service.",
    "Zebracorn team beta deploys search on Fridays.",
]
LOCAL_TEXT = "Zebracorn is the codename of the local developer's sandbox."


def _seed_users(root: Path) -> tuple[list[str], list[str], str]:
    with Memory(root, user_id="A", autostart=False) as a, \
            Memory(root, user_id="B", autostart=False) as b, \
            Memory(root, autostart=False) as local:
        a_ids = [a.add(t)["results"][0]["id"] for t in A_TEXTS]
        b_ids = [b.add(t)["results"][0]["id"] for t in B_TEXTS]
        local_id = local.add(LOCAL_TEXT, user_id="")["results"][0]["id"]  # empty = local
    return a_ids, b_ids, local_id


def _check_isolation(root: Path, a_ids: list[str], b_ids: list[str], local_id: str) -> None:
    with Memory(root, user_id="A", autostart=False) as a, \
            Memory(root, user_id="B", autostart=False) as b, \
            Memory(root, autostart=False) as local:
        # search: each user gets their own rows, non-empty, and nobody else's.
        got_a = a.search("zebracorn team deploys owns", top_k=20)
        assert set(ids(got_a)) == set(a_ids), "positive control: A must find A's rows"
        assert {h["user_id"] for h in got_a["results"]} == {"A"}
        got_b = b.search("zebracorn team deploys owns", top_k=20)
        assert set(ids(got_b)) == set(b_ids), "positive control: B must find B's rows"
        assert not set(ids(got_b)) & set(a_ids)
        got_local = local.search("zebracorn", top_k=20)
        assert ids(got_local) == [local_id]
        assert ids(local.search("zebracorn", user_id="", top_k=20)) == [local_id]
        assert local_id not in ids(a.search("zebracorn sandbox codename", top_k=20))
        # Other users' rows neither take top-k slots nor count as hidden.
        assert a.search("zebracorn", top_k=3)["hidden"] == 0
        assert len(ids(a.search("zebracorn", top_k=3))) == 3

        # get
        for rid in a_ids:
            assert a.get(rid)["user_id"] == "A"
            for other in (b, local):
                with pytest.raises(NotFound):
                    other.get(rid)
        with pytest.raises(NotFound):
            a.get(local_id)
        with pytest.raises(NotFound):
            a.get(b_ids[0])

        # list
        assert set(ids(a.get_all())) == set(a_ids)
        assert set(ids(b.get_all())) == set(b_ids)
        assert ids(local.get_all()) == [local_id]
        assert ids(local.get_all(user_id="")) == [local_id]

        # history
        assert a.history(a_ids[0])[0]["event"] == "ADD"
        with pytest.raises(NotFound):
            b.history(a_ids[0])
        with pytest.raises(NotFound):
            local.history(a_ids[0])

        # mutations by B on A's rows: all refused, nothing changes.
        target = a_ids[0]
        before = a.get(target)
        b_before = set(ids(b.get_all()))
        with pytest.raises(NotFound):
            b.update(target, "Zebracorn team beta now owns the ledger service.")
        with pytest.raises(NotFound):
            b.delete(target)
        with pytest.raises(NotFound):
            b.expire(target)
        with pytest.raises(NotFound):
            b.supersede(target, "Zebracorn team beta took over the ledger.")
        with pytest.raises(NotFound):
            b.supersede(b_ids[0], new_id=target)
        with pytest.raises(NotFound):
            b.supersede(target, new_id=b_ids[0])
        with pytest.raises(NotFound):
            b.add("Zebracorn ledger now belongs to beta.", supersedes=target)
        with pytest.raises(NotFound):
            local.delete(target)  # the default user is a user like any other
        with pytest.raises(NotFound):
            local.update(target, "Zebracorn local rewrite.", user_id="")

        after = a.get(target)
        for key in ("content", "status", "superseded_by", "expires_at", "updated_at"):
            assert after[key] == before[key], key
        assert set(ids(a.get_all())) == set(a_ids)
        assert set(ids(a.search("zebracorn team deploys owns", top_k=20))) == set(a_ids)
        assert set(ids(b.get_all())) == b_before, "B's refused attempts must not add rows"
        assert set(ids(b.search("zebracorn team deploys owns", top_k=20))) == set(b_ids)
        events = [e["event"] for e in a.history(target)]
        assert events == ["ADD"], f"refused mutations must not be audited as done: {events}"


def test_users_are_isolated_before_and_after_restart(served: Served) -> None:
    a_ids, b_ids, local_id = _seed_users(served.root)
    _check_isolation(served.root, a_ids, b_ids, local_id)
    restart(served)
    _check_isolation(served.root, a_ids, b_ids, local_id)


def test_owner_mutations_work_where_others_are_refused(mem: Memory) -> None:
    """The other half of the isolation test: the same calls succeed for the owner."""
    def add(text: str) -> str:
        return mem.add(text, user_id="A")["results"][0]["id"]

    one, two, three, four = (add(f"Zebracorn owner row {n}.") for n in
                             ("one", "two", "three", "four"))
    mem.update(one, "Zebracorn owner row one, revised.", user_id="A")
    two_new = mem.supersede(two, "Zebracorn owner row two, replaced.", user_id="A")["new_id"]
    mem.expire(three, user_id="A")
    mem.delete(four, user_id="A")
    found = mem.search("zebracorn owner row", user_id="A", top_k=10)
    assert set(ids(found)) == {one, two_new}
    assert found["hidden"] == 2  # two (superseded) and three (expired); four is forgotten
    assert mem.get(one, user_id="A")["content"] == "Zebracorn owner row one, revised."


# -- expiry is applied inside the query, not after ranking ------------------------------------
def test_expired_rows_never_take_top_k_slots(mem: Memory) -> None:
    strong = [mem.add(f"Kumquat kumquat kumquat kumquat rollout note {i}.")["results"][0]["id"]
              for i in range(10)]
    live = [mem.add(f"Release {i} of the billing app mentions the kumquat flag once, among "
                    f"many other words about dashboards, alerts and quarterly planning {i}.")
            ["results"][0]["id"] for i in range(6)]
    before = mem.search("kumquat", top_k=5)
    assert set(ids(before)) <= set(strong), "positive control: the strong rows outrank"
    assert len(ids(before)) == 5
    for rid in strong:
        mem.expire(rid)
    after = mem.search("kumquat", top_k=5)
    assert len(ids(after)) == 5
    assert set(ids(after)) <= set(live)
    assert all(h["status"] == "current" for h in after["results"])
    assert after["hidden"] == 10
    assert len(ids(mem.search("kumquat", top_k=20))) == 6


# -- visibility survives a restart ------------------------------------------------------------
QUERIES = ("numbat storage bucket", "quoll queue", "bilby cache", "dingo region",
           "numbat quoll bilby dingo")


def _visibility(root: Path) -> dict:
    """Everything a reader can see: searches with and without history, and the list."""
    with Memory(root, autostart=False) as m:
        out: dict = {}
        for query in QUERIES:
            res = m.search(query, top_k=20)
            out[query] = (sorted((h["id"], h["status"]) for h in res["results"]), res["hidden"])
            hist = m.search(query, top_k=20, history=True)
            out[query + " (history)"] = sorted((h["id"], h["status"]) for h in hist["results"])
        out["list"] = sorted(ids(m.get_all()))
        return out


def test_visibility_is_the_same_after_restart(served: Served) -> None:
    with served.memory() as m:
        bucket_old = m.add("Numbat storage bucket is s3://old-uploads.")["results"][0]["id"]
        bucket_new = m.supersede(bucket_old, "Numbat storage bucket is s3://new-uploads.")[
            "new_id"]
        queue = m.add("Quoll queue is SQS, to be removed.")["results"][0]["id"]
        m.delete(queue, reason="queue removed")
        cache = m.add("Bilby cache is Redis until June.")["results"][0]["id"]
        m.expire(cache)
        region_old = m.add("Dingo region is eu-west-1.")["results"][0]["id"]
        region_new = m.supersede(region_old, "Dingo region is eu-central-1.")["new_id"]
        assert ids(m.search("dingo region")) == [region_new]
        # Forgetting the replacement brings the old record back as current.
        m.delete(region_new, reason="the move was cancelled")

        assert ids(m.search("numbat storage bucket")) == [bucket_new]
        assert ids(m.search("quoll queue")) == []
        assert ids(m.search("bilby cache")) == []
        region = m.search("dingo region")
        assert ids(region) == [region_old]
        assert region["results"][0]["status"] == "current"
        assert m.get(region_old)["superseded_by"] is None
        assert set(ids(m.get_all())) == {bucket_new, region_old}
        with pytest.raises(NotFound):
            m.get(queue)
        with pytest.raises(NotFound):
            m.get(region_new)
        assert m.get(cache)["status"] == "expired"
        assert m.get(bucket_old)["status"] == "superseded"
        hist = {h.id: (h.status, h.historical) for h in
                m.search("numbat storage bucket", history=True).results}
        assert hist == {bucket_new: ("current", False), bucket_old: ("superseded", True)}
        everything = m.search("numbat quoll bilby dingo", top_k=20)
        assert set(ids(everything)) == {bucket_new, region_old}
        assert everything["hidden"] == 2  # bucket_old (superseded) and cache (expired)

    before = _visibility(served.root)
    restart(served)
    assert _visibility(served.root) == before
    with served.memory() as m:
        assert m.get(bucket_old)["status"] == "superseded"
        assert m.get(cache)["status"] == "expired"
        with pytest.raises(NotFound):
            m.get(region_new)


def test_errors_are_typed(mem: Memory) -> None:
    with pytest.raises(NotFound) as err:
        mem.get("m-missing")
    assert err.value.code == "not_found"
    assert isinstance(err.value, LintaidError)
