"""The ROUTER loop: receive, validate, dispatch through the op registry, reply.

One thread owns the ROUTER socket. Handlers that wait on the writer return a Future; its
reply is queued by a done-callback (on whatever thread resolves it) and the loop is woken
through a pipe, so only the loop thread ever touches the socket.
"""

from __future__ import annotations

import os
import queue
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

import structlog
import zmq

from lintaid_client import protocol

from .ops import REGISTRY, error_code

if TYPE_CHECKING:
    from .daemon import Daemon

log = structlog.get_logger("lintaid.server")


class Server:
    def __init__(self, daemon: Daemon, endpoint: str) -> None:
        self.daemon = daemon
        self.endpoint = endpoint
        self.context = zmq.Context()
        self.socket = self.context.socket(zmq.ROUTER)
        self.socket.setsockopt(zmq.LINGER, 1000)
        self.socket.setsockopt(zmq.MAXMSGSIZE, protocol.MAX_MESSAGE_BYTES)
        self.socket.setsockopt(zmq.ROUTER_MANDATORY, 0)
        self._replies: queue.Queue[tuple[list[bytes], dict[str, Any]]] = queue.Queue()
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
        self.requests = 0

    def bind(self) -> None:
        path = self.endpoint.removeprefix("ipc://")
        self.socket.bind(self.endpoint)
        if path != self.endpoint:
            os.chmod(path, 0o600)

    def wake(self) -> None:
        try:
            os.write(self._wake_w, b"x")
        except (BlockingIOError, OSError):
            pass  # the pipe is full: the loop is already due to wake

    def serve(self, should_stop: Any) -> None:
        """Serve until ``should_stop()`` is true; then answer what is in flight and return."""
        poller = zmq.Poller()
        poller.register(self.socket, zmq.POLLIN)
        poller.register(self._wake_r, zmq.POLLIN)
        while not should_stop():
            events = dict(poller.poll(500))
            if self._wake_r in events:
                try:
                    while os.read(self._wake_r, 4096):
                        pass
                except BlockingIOError:
                    pass
            self._send_queued()
            if self.socket in events:
                for _ in range(256):  # take what is waiting, then give replies a turn
                    try:
                        frames = self.socket.recv_multipart(zmq.NOBLOCK)
                    except zmq.Again:
                        break
                    self._handle(frames)
            self._send_queued()

    def close(self) -> None:
        self._send_queued()
        self.socket.close(linger=500)
        self.context.term()
        os.close(self._wake_r)
        os.close(self._wake_w)

    # -------------------------------------------------------------------------------------
    def _send_queued(self) -> None:
        while True:
            try:
                identity, reply = self._replies.get_nowait()
            except queue.Empty:
                return
            self._send(identity, reply)

    def _send(self, identity: list[bytes], reply: dict[str, Any]) -> None:
        try:
            data = protocol.pack(reply)
        except (TypeError, ValueError) as err:
            data = protocol.pack(protocol.error_reply(
                reply.get("id"), protocol.INTERNAL, f"reply could not be encoded: {err}"))
        try:
            self.socket.send_multipart([*identity, data], zmq.NOBLOCK)
        except zmq.ZMQError as err:  # the client went away; nothing to do
            log.debug("reply_dropped", error=str(err))

    def _handle(self, frames: list[bytes]) -> None:
        self.requests += 1
        if len(frames) < 2:
            return
        identity, body = frames[:-1], frames[-1]
        if len(body) > protocol.MAX_MESSAGE_BYTES:
            self._send(identity, protocol.error_reply(None, protocol.TOO_LARGE,
                                                      "message larger than 8 MiB"))
            return
        try:
            message = protocol.unpack(body)
        except (ValueError, TypeError) as err:
            log.warning("malformed_message", error=str(err), size=len(body))
            return  # not a message at all: drop it
        if not isinstance(message, dict):
            self._send(identity, protocol.error_reply(None, protocol.BAD_REQUEST,
                                                      "a request must be a map"))
            return
        rid = message.get("id")
        if not isinstance(rid, str):
            rid = None
        if message.get("v") != protocol.VERSION:
            self._send(identity, protocol.error_reply(
                rid, protocol.UNSUPPORTED_VERSION,
                f"this daemon speaks protocol {protocol.VERSION}, not {message.get('v')!r}"))
            return
        op = message.get("op")
        handler = REGISTRY.get(op) if isinstance(op, str) else None
        if handler is None:
            self._send(identity, protocol.error_reply(rid, protocol.UNKNOWN_OP,
                                                      f"unknown op {op!r}"))
            return
        args = message.get("args", {})
        if rid is None or not isinstance(args, dict):
            self._send(identity, protocol.error_reply(
                rid, protocol.BAD_REQUEST, "a request needs a string 'id' and a map 'args'"))
            return
        try:
            result = handler(self.daemon, args)
        except Exception as err:
            self._send(identity, self._error(rid, op, err))
            return
        if isinstance(result, Future):
            result.add_done_callback(lambda fut: self._complete(identity, rid, op, fut))
        else:
            self._send(identity, protocol.ok_reply(rid, result))

    def _complete(self, identity: list[bytes], rid: str, op: str, fut: Future[Any]) -> None:
        err = fut.exception()
        reply = protocol.ok_reply(rid, fut.result()) if err is None else self._error(rid, op, err)
        self._replies.put((identity, reply))
        self.wake()

    def _error(self, rid: str | None, op: str, err: BaseException) -> dict[str, Any]:
        code, message = error_code(err)
        if code == protocol.INTERNAL:
            log.error("op_failed", op=op, error=message, exc_info=err)
        return protocol.error_reply(rid, code, message)
