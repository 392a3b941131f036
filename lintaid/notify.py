"""Readiness for systemd (``Type=notify``), with the standard library: ``sd_notify`` is one
datagram of ``KEY=VALUE`` lines sent to the socket named by ``NOTIFY_SOCKET`` (a path, or
an abstract-namespace name when it starts with ``@``).

Without ``NOTIFY_SOCKET`` (not under systemd) every call does nothing. The variable is taken
out of the environment when read, so the daemon's children (git) do not inherit it.
"""

from __future__ import annotations

import os
import socket
from collections.abc import MutableMapping

from lintaid.logs import get_logger

log = get_logger("lintaid.notify")

ENV: str = "NOTIFY_SOCKET"


def socket_address(value: str | None) -> str | None:
    """The ``AF_UNIX`` address ``NOTIFY_SOCKET`` names; None for none or one we cannot use
    (systemd also knows ``vsock:``, which a user service never gets)."""
    if not value:
        return None
    if value.startswith("@"):
        return "\0" + value[1:]
    if value.startswith("/"):
        return value
    return None


class Notifier:
    """Sends state changes to the service manager that started this process, if any."""

    def __init__(self, address: str | None) -> None:
        self.address = address

    @classmethod
    def from_env(cls, environ: MutableMapping[str, str] | None = None) -> Notifier:
        env = os.environ if environ is None else environ
        return cls(socket_address(env.pop(ENV, None)))

    @property
    def enabled(self) -> bool:
        return self.address is not None

    def send(self, **fields: object) -> bool:
        """Send ``READY=1``-style fields (``send(READY=1, STATUS="...")``); True when sent.
        A failure is logged, never raised: the daemon serves whether or not anyone listens."""
        if self.address is None:
            return False
        text = "\n".join(f"{key}={value}" for key, value in fields.items())
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
                sock.connect(self.address)
                sock.sendall(text.encode("utf-8", "replace"))
        except OSError as err:
            log.warning("notify_failed", error=str(err), state=text)
            return False
        return True

    def ready(self, status: str) -> bool:
        return self.send(READY=1, STATUS=status, MAINPID=os.getpid())

    def stopping(self) -> bool:
        return self.send(STOPPING=1, STATUS="stopping")

    def failed(self, reason: str) -> bool:
        return self.send(STATUS=f"could not start: {reason}")
