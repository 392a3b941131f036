"""Ops run in the daemon's process, as the request loop runs them for a socket client.

Arguments are checked against the op's declaration (``lintaid_client.ops.validate``), the
op runs through ``lintaid.ops.dispatch`` with the daemon's ``Services`` (as the request loop
runs it), and a write waits for its commit. An op that waits for the index (a search) first
waits until every committed write is searchable, so a page shown after a change never shows
what was there before.
"""

from __future__ import annotations

import threading
from typing import Any

from lintaid_client import ops, protocol

from ..ops import Services, dispatch, error_code

ACTOR = "viewer"
"""Who the audit log names for a change made in the viewer."""


class OpCaller:
    """``actor``: the face's name, stamped in the arguments its ops declare a face fills
    (who acts, a board post's client) unless the arguments name one."""

    def __init__(self, services: Services, timeout: float = 60.0, *,
                 actor: str = ACTOR) -> None:
        self.services = services
        self.timeout = timeout
        self.actor = actor

    def __call__(self, name: str, **args: Any) -> Any:
        """The op's result; a refusal raises the ``protocol.RemoteError`` a socket client
        would get for it (``BadRequest``, ``NotFound`` ...; an unexpected failure as
        ``internal``)."""
        return self.run(name, self.check(name, args))

    def check(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        """The op's arguments validated (None: absent), the face's name filled in
        (``ops.stamp``); ``BadRequest`` when they are not what it takes."""
        spec = ops.OPS[name]
        given = {k: v for k, v in args.items() if v is not None}
        return ops.validate(spec, ops.stamp(spec, given, self.actor))

    def run(self, name: str, checked: dict[str, Any]) -> Any:
        """Run the op on arguments ``check`` returned; wait for its result."""
        outcome: dict[str, Any] = {}
        finished = threading.Event()

        def done(result: Any, err: BaseException | None, _token: str | None) -> None:
            outcome["result"], outcome["error"] = result, err
            finished.set()

        dispatch(self.services, ops.OPS[name], checked, None, done)
        if not finished.wait(self.timeout):
            raise protocol.Unavailable(f"{name} did not finish within {self.timeout:.0f}s")
        failure: BaseException | None = outcome["error"]
        if failure is not None:
            if isinstance(failure, protocol.RemoteError):
                raise failure
            code, message, arg = error_code(failure)  # the store's refusal, or a bug
            raise protocol.remote_error(code, message, arg=arg) from failure
        return outcome["result"]
