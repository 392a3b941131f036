"""The client core (``lintaid_client.core``): one retry policy, one paging, one batching by
bytes, used by the Python client ``Memory`` and the CLI alike.

The drift it ends: 1,000 rows of 10 KB through ``Memory.import_rows`` were sent as one
request of about 10 MiB and refused ``too_large``, while ``lintaid import`` split the same
rows into batches. Both now send what ``core.batches`` cuts, to a real in-process daemon.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import Served, invoke

from lintaid_client import core, ops, protocol

ROWS = 1000
ROW_BYTES = 10 * 1024


def _rows(tag: str, *, same: bool = False) -> list[dict[str, Any]]:
    """1,000 record rows of 10 KB; ``same``: all one text (the daemon derives it once and
    answers the rest NONE, so a test sends 10 MiB without deriving 10 MiB)."""
    filler = ("plain words without any setting in them " * 300)[:ROW_BYTES]
    return [{"type": "record", "content": f"{tag} row {'' if same else i}: {filler}"}
            for i in range(ROWS)]


def test_batches_cut_by_bytes_and_by_rows_in_order() -> None:
    rows = _rows("cut")
    cut = core.batches(rows)
    assert [r for batch in cut for r in batch] == rows  # nothing lost, nothing reordered
    assert len(cut) == 3  # about 10 MiB in batches of about 4 MiB
    assert all(sum(core.row_bytes(r) for r in b) <= core.BATCH_BYTES for b in cut)
    small = [{"n": i} for i in range(2500)]
    assert [len(b) for b in core.batches(small)] == [ops.MAX_BATCH, ops.MAX_BATCH, 500]
    heavy = {"blob": "x" * (core.BATCH_BYTES + 1)}
    assert core.batches([{"n": 1}, heavy, {"n": 2}]) == [[{"n": 1}], [heavy], [{"n": 2}]]
    assert core.batches([]) == []
    # one request of the whole would not fit a message
    assert sum(core.row_bytes(r) for r in rows) > protocol.MAX_MESSAGE_BYTES


def test_a_request_is_sent_again_only_when_the_daemon_cannot_have_acted_on_it() -> None:
    sent: list[str] = []

    def flaky(*errors: Exception) -> Any:
        queue = list(errors)

        def send() -> str:
            sent.append("send")
            if queue:
                raise queue.pop(0)
            return "answer"
        return send

    def start() -> None:
        sent.append("start")

    assert core.send_retrying(flaky(protocol.DaemonUnavailable("gone")), start=start) == "answer"
    assert sent == ["send", "start", "send"]
    sent.clear()
    with pytest.raises(protocol.DaemonUnavailable):  # no autostart, or a step underway
        core.send_retrying(flaky(protocol.DaemonUnavailable("gone")))
    assert sent == ["send"]
    sent.clear()
    with pytest.raises(protocol.DaemonUnavailable):  # once more, no more
        core.send_retrying(flaky(protocol.DaemonUnavailable("a"), protocol.DaemonUnavailable("b")),
                           start=start)
    assert sent == ["send", "start", "send"]
    sent.clear()
    with pytest.raises(protocol.DaemonTimeout):  # it may have acted: never sent twice
        core.send_retrying(flaky(protocol.DaemonTimeout("late")), start=start)
    assert sent == ["send"]
    sent.clear()
    with pytest.raises(protocol.ProtocolMismatch):  # Memory: said, not restarted
        core.send_retrying(flaky(protocol.ProtocolMismatch("v0")), start=start)
    assert sent == ["send"]
    sent.clear()
    assert core.send_retrying(flaky(protocol.ProtocolMismatch("v0")), start=start,
                              on_mismatch=lambda: sent.append("stop")) == "answer"
    assert sent == ["send", "stop", "start", "send"]


def test_pages_read_on_until_a_page_has_no_next() -> None:
    asked: list[Any] = []
    book = {None: {"rows": [1, 2], "next": "a"}, "a": {"rows": [3], "next": "b"},
            "b": {"rows": [], "next": None}}

    def fetch(after: Any) -> dict[str, Any]:
        asked.append(after)
        return book[after]

    assert [r for page in core.pages(fetch) for r in page["rows"]] == [1, 2, 3]
    assert asked == [None, "a", "b"]


def test_memory_import_rows_sends_10_mib_in_batches_as_the_cli_does(
        served: Served, tmp_path: Path) -> None:
    assert served.daemon is not None and served.daemon.server is not None
    server = served.daemon.server
    memory = served.memory(timeout=120)
    memory.status()  # connected: the requests counted below are the import's alone

    before = server.requests
    results = memory.import_rows(_rows("python", same=True))
    assert server.requests - before == 3  # three batches, none refused too_large
    assert len(results) == ROWS
    assert [r["event"] for r in results] == ["ADD"] + ["NONE"] * (ROWS - 1)
    assert served.record_count() == 1

    export = tmp_path / "rows.jsonl"
    export.write_text("".join(json.dumps(r) + "\n" for r in _rows("cli", same=True)))
    before = server.requests
    out = invoke(served.root, "import", str(export), "--json")
    assert out.exit_code == 0, out.stderr
    assert server.requests - before == 3  # the same batches
    assert out.json()["counts"] == {"record": {"ADD": 1, "NONE": ROWS - 1}}
    assert served.record_count() == 2
    memory.close()
