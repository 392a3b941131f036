"""Ops run in the daemon's process, as the request loop runs them for a socket client.

Arguments are checked against the op's declaration (``lintaid_client.ops.validate``), the
handler from ``lintaid.ops.HANDLERS`` runs with the daemon's ``Services``, and a write waits
for its commit. A search first waits until every committed write is searchable, as the
request loop's does, so a page shown after a change never shows what was there before.
"""

from __future__ import annotations

import threading
from typing import Any

from lintaid_client import ops, protocol

from ..futures import settle
from ..ops import HANDLERS, Services, error_code

ACTOR = "viewer"
"""Who the audit log names for a change made in the viewer."""


class OpCaller:
    """``actor``: who the audit log names for a change (unless the arguments name one)."""

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
        """The op's arguments validated (None: absent), the actor filled in; ``BadRequest``
        when they are not what it takes."""
        spec = ops.OPS[name]
        given = {k: v for k, v in args.items() if v is not None}
        if spec.kind == ops.WRITE and any(a.name == "actor" for a in spec.args):
            given.setdefault("actor", self.actor)
        return ops.validate(spec, given)

    def run(self, name: str, checked: dict[str, Any]) -> Any:
        """Run the op on arguments ``check`` returned; wait for its result."""
        outcome: dict[str, Any] = {}
        finished = threading.Event()

        def done(result: Any, err: BaseException | None, _token: str | None) -> None:
            outcome["result"], outcome["error"] = result, err
            finished.set()

        try:
            if name == "search":
                self.services.reader.settle(None)
            settle(HANDLERS[name](self.services, checked), done)
        except Exception as err:
            done(None, err, None)
        if not finished.wait(self.timeout):
            raise protocol.Unavailable(f"{name} did not finish within {self.timeout:.0f}s")
        failure: BaseException | None = outcome["error"]
        if failure is not None:
            if isinstance(failure, protocol.RemoteError):
                raise failure
            code, message, arg = error_code(failure)  # the store's refusal, or a bug
            raise protocol.remote_error(code, message, arg=arg) from failure
        return outcome["result"]
