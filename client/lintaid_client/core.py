"""The client core: what every client of the daemon does the same way (the Python client
``Memory``, the CLI, and through ``Memory`` the MCP shim): when a request is sent once more,
how a paged op is read to its end, and how rows are cut into requests that fit a message.

Standard library only.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Final, TypeVar

from . import ops, protocol

T = TypeVar("T")

BATCH_BYTES: Final = 4 * 2**20
"""A batch of rows stays well within a message's ``protocol.MAX_MESSAGE_BYTES`` (8 MiB)."""


def send_retrying(send: Callable[[], T], *, start: Callable[[], None] | None = None,
                  on_mismatch: Callable[[], None] | None = None) -> T:
    """``send()``, sent once more only when the daemon cannot have acted on it.

    ``DaemonUnavailable`` (no daemon bound the socket: nothing was sent): after ``start()``
    makes one answer; without ``start`` (no autostart, or a later step of an operation
    underway, which must not go on half-way) it is raised. ``ProtocolMismatch`` (the daemon
    refused the envelope): after ``on_mismatch()`` (stop that daemon) and ``start()``;
    without ``on_mismatch`` it is raised. Anything else is raised at once: a timeout or a
    refusal may follow a change the daemon made, and a write is never sent twice.
    """
    for attempt in (0, 1):
        try:
            return send()
        except protocol.ProtocolMismatch:
            if attempt or on_mismatch is None:
                raise
            on_mismatch()
        except protocol.DaemonUnavailable:
            if attempt or start is None:
                raise
        if start is not None:
            start()
    raise AssertionError("unreachable")


def pages(fetch: Callable[[Any], Mapping[str, Any]]) -> Iterator[Mapping[str, Any]]:
    """Every page of a paged op, in order: ``fetch(after)`` from ``None``, then the previous
    page's ``next``, until a page has none."""
    after: Any = None
    while True:
        page = fetch(after)
        yield page
        after = page.get("next")
        if after is None:
            return


def row_bytes(row: Any) -> int:
    """What a row weighs in a request, about: its JSON text's bytes (msgpack's are fewer)."""
    return len(json.dumps(row, ensure_ascii=False).encode())


def batches(rows: Iterable[T], *, max_rows: int = ops.MAX_BATCH,
            max_bytes: int = BATCH_BYTES) -> list[list[T]]:
    """Rows in order, at most ``max_rows`` and about ``max_bytes`` a batch (a row heavier
    than that goes alone, and the daemon says what is wrong with it)."""
    out: list[list[T]] = []
    size = 0
    for row in rows:
        weight = row_bytes(row)
        if not out or len(out[-1]) >= max_rows or size + weight > max_bytes:
            out.append([])
            size = 0
        out[-1].append(row)
        size += weight
    return out


__all__ = ["BATCH_BYTES", "batches", "pages", "row_bytes", "send_retrying"]
