"""The request loop: receive, decode, validate against the op's declaration, route, reply.

The loop only routes. ``control`` ops (ping, shutdown) are answered here; every other op runs
on the reader pool, so a search, a transcript read, a git call or a file hash never delays
the next request. A handler's result may be a future (a write resolves after its commit); its
reply is queued by a done-callback on whatever thread resolves it and the loop is woken
through a pipe, so only the loop thread ever touches the socket.

Every request that names an id gets a typed reply: one that does not decode (oversized,
invalid UTF-8, an integer key, an extension type, nested too deep) is answered ``too_large`` or
``bad_request`` with the id read from its top-level map. Noise with no id is dropped.
"""

from __future__ import annotations

import os
import queue
import struct
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import zmq

from lintaid.logs import get_logger
from lintaid_client import ops, protocol

from .ops import Services, dispatch, error_code

log = get_logger("lintaid.server")


def _monitor_event(frames: list[bytes]) -> int:
    """The event id of a libzmq monitor message: its first frame is the 16-bit id, then the
    32-bit value (what ``zmq.utils.monitor.parse_monitor_message`` reads; importing that
    module imports asyncio too, some 20 ms of every daemon's start)."""
    if len(frames) != 2 or len(frames[0]) != 6:
        raise RuntimeError(f"Invalid event message format: {frames}")
    event_id: int = struct.unpack("=hi", frames[0])[0]
    return event_id

SOCKET_MAX_BYTES = 64 * 1024 * 1024
"""Above this libzmq drops the message; between the protocol's limit and this, the daemon
answers ``too_large`` itself, so a client is told rather than left waiting."""
READERS = 4
CLOSE_GRACE_S = 0.25  # kept open at most this long after the last reply, so it can be read
_PEER_EVENTS = zmq.EVENT_ACCEPTED | zmq.EVENT_DISCONNECTED


class Server:
    """``on_request(op)`` is called on the loop for every request routed (the idle clock);
    ``in_flight`` counts the requests still running on the pool."""

    def __init__(self, services: Services, endpoint: str, *, readers: int = READERS,
                 on_request: Callable[[str], None] | None = None) -> None:
        self.services = services
        self.endpoint = endpoint
        self.on_request = on_request
        self.in_flight = 0
        self._in_flight_lock = threading.Lock()
        self.context = zmq.Context()
        self.socket = self.context.socket(zmq.ROUTER)
        self.socket.setsockopt(zmq.LINGER, 1000)
        self.socket.setsockopt(zmq.MAXMSGSIZE, SOCKET_MAX_BYTES)
        self.socket.setsockopt(zmq.ROUTER_MANDATORY, 0)
        self.pool = ThreadPoolExecutor(max_workers=readers, thread_name_prefix="lintaid-reader")
        self._replies: queue.Queue[tuple[list[bytes], bytes | None, dict[str, Any]]] = \
            queue.Queue()
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
        self.requests = 0
        self._last_send = 0.0
        # Connections open now (accepted, not yet gone), counted from the socket's monitor:
        # closing waits for the last replies to be read only while someone is still connected.
        self._monitor = self.socket.get_monitor_socket(_PEER_EVENTS)
        self._peers = 0

    def bind(self) -> None:
        self.socket.bind(self.endpoint)
        path = self.ipc_path
        if path:
            os.chmod(path, 0o600)

    @property
    def ipc_path(self) -> str | None:
        path = self.endpoint.removeprefix("ipc://")
        return path if path != self.endpoint else None

    @property
    def wake_fd(self) -> int:
        """The wake-up pipe's writing end (non-blocking): a byte in it wakes the loop."""
        return self._wake_w

    def wake(self) -> None:
        try:
            os.write(self._wake_w, b"x")
        except (BlockingIOError, OSError):
            pass  # the pipe is full: the loop is already due to wake

    def retire(self) -> None:
        """Remove the socket's file while still bound: a new client finds nobody at once (and
        starts a daemon, which waits for this one's lock); the ones connected already are
        still answered until the loop stops."""
        path = self.ipc_path
        if path:
            try:
                os.unlink(path)
            except OSError:
                pass

    def serve(self, should_stop: Callable[[], bool],
              timeout: Callable[[], float | None] = lambda: None,
              on_due: Callable[[], None] = lambda: None) -> None:
        """Serve until ``should_stop()`` is true; then answer what is in flight and return.

        The loop sleeps until a request, a reply or a wake-up comes, or ``timeout()`` seconds
        pass (None: no timer at all), then calls ``on_due`` when that time has come; nothing
        else wakes it (``request_shutdown`` wakes it through the pipe).
        """
        poller = zmq.Poller()
        poller.register(self.socket, zmq.POLLIN)
        poller.register(self._wake_r, zmq.POLLIN)
        poller.register(self._monitor, zmq.POLLIN)
        while not should_stop():
            left = timeout()
            events = dict(poller.poll(None if left is None else max(0, int(left * 1000) + 1)))
            if self._monitor in events:
                self._count_peers()
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
            if timeout() == 0:
                on_due()

    def drain(self) -> None:
        """Finish the requests already routed to the pool and send their replies."""
        self.pool.shutdown(wait=True)
        self._send_queued()

    def close(self) -> None:
        self._send_queued()
        # A DEALER that set ZMQ_IMMEDIATE (as ``Connection`` does) drops a reply it has not
        # read yet when the connection closes under it: the reply to ``shutdown`` would be
        # lost to a client that is a moment slow to read. Give the last replies that moment,
        # or less: a client that has read its reply hangs up, and once nobody is connected
        # there is nobody left to wait for (``lintaid stop`` returns that much sooner).
        deadline = self._last_send + CLOSE_GRACE_S
        self._count_peers()
        while self._peers > 0:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not self._monitor.poll(max(1, int(remaining * 1000))):
                break
            self._count_peers()
        self.socket.disable_monitor()
        self._monitor.close(linger=0)
        self.socket.close(linger=500)
        self.context.term()
        os.close(self._wake_r)
        os.close(self._wake_w)
        if self.ipc_path:
            try:
                os.unlink(self.ipc_path)
            except OSError:
                pass

    # -------------------------------------------------------------------------------------
    def _count_peers(self) -> None:
        """Take the monitor's waiting events into ``_peers`` (never blocks)."""
        while True:
            try:
                frames = self._monitor.recv_multipart(zmq.NOBLOCK)
            except zmq.Again:
                return
            event = _monitor_event(frames)
            if event == zmq.EVENT_ACCEPTED:
                self._peers += 1
            elif event == zmq.EVENT_DISCONNECTED:
                self._peers = max(0, self._peers - 1)

    def _send_queued(self) -> None:
        while True:
            try:
                identity, content_type, reply = self._replies.get_nowait()
            except queue.Empty:
                return
            self._send(identity, content_type, reply)

    def _send(self, identity: list[bytes], content_type: bytes | None,
              reply: dict[str, Any]) -> None:
        try:
            frames = protocol.encode(reply, content_type)
        except (TypeError, ValueError) as err:
            frames = protocol.encode(protocol.error_reply(
                reply.get("id"), protocol.INTERNAL, f"reply could not be encoded: {err}"),
                content_type)
        try:
            self.socket.send_multipart([*identity, *frames], zmq.NOBLOCK)
            self._last_send = time.monotonic()
        except zmq.ZMQError as err:  # the client went away; nothing to do
            log.debug("reply_dropped", error=str(err))

    def _handle(self, frames: list[bytes]) -> None:
        self.requests += 1
        if len(frames) < 2:
            return
        identity, body = frames[:1], frames[1:]
        content_type = body[0] if len(body) == 2 else None
        size = sum(len(f) for f in body)
        if content_type != protocol.CONTENT_JSON:
            content_type = None
        if size > protocol.MAX_MESSAGE_BYTES:
            self._send(identity, content_type, protocol.error_reply(
                protocol.peek_id(body), protocol.TOO_LARGE,
                f"message of {size} bytes is larger than {protocol.MAX_MESSAGE_BYTES}"))
            return
        try:
            message, content_type = protocol.decode(body)
        except (ValueError, TypeError) as err:
            # Answered to the request's id when one can be read, so no client waits for a
            # reply that never comes; msgpack noise without one is dropped (nobody to answer).
            rid = protocol.peek_id(body)
            log.warning("malformed_message", error=str(err)[:200], size=size, id=rid)
            if rid is not None or content_type == protocol.CONTENT_JSON:
                self._send(identity, content_type, protocol.error_reply(
                    rid, protocol.BAD_REQUEST, f"not a readable message: {str(err)[:300]}"))
            return
        self._route(identity, content_type, message)

    def _route(self, identity: list[bytes], content_type: bytes | None, message: Any) -> None:
        def reply(payload: dict[str, Any]) -> None:
            self._send(identity, content_type, payload)

        if not isinstance(message, dict):
            reply(protocol.error_reply(None, protocol.BAD_REQUEST, "a request must be a map"))
            return
        rid = message.get("id") if isinstance(message.get("id"), str) else None
        if message.get("v") != protocol.VERSION:
            reply(protocol.error_reply(
                rid, protocol.UNSUPPORTED_VERSION,
                f"this daemon speaks protocol {protocol.VERSION}, not {message.get('v')!r}"))
            return
        op = message.get("op")
        spec = ops.OPS.get(op) if isinstance(op, str) else None
        if spec is None:
            reply(protocol.error_reply(rid, protocol.UNKNOWN_OP, f"unknown op {op!r}"))
            return
        after = message.get("after")
        if rid is None or (after is not None and not isinstance(after, str)):
            reply(protocol.error_reply(
                rid, protocol.BAD_REQUEST,
                "a request needs a string 'id' (and 'after', when given, is a token string)"))
            return
        try:
            args = ops.validate(spec, message.get("args"))
        except protocol.RemoteError as err:
            reply(protocol.error_reply(rid, err.code, err.message, arg=err.arg))
            return
        if self.on_request is not None:
            self.on_request(spec.name)
        if spec.kind == ops.CONTROL:
            self._run(spec, args, identity, content_type, rid, None, counted=False)
            return
        self._count(1)
        try:
            self.pool.submit(self._run, spec, args, identity, content_type, rid, after)
        except RuntimeError:  # the pool is shut: the daemon is stopping
            self._count(-1)
            reply(protocol.error_reply(rid, protocol.UNAVAILABLE, "the daemon is stopping"))

    def _count(self, step: int) -> None:
        with self._in_flight_lock:
            self.in_flight += step

    def _run(self, spec: ops.Op, args: dict[str, Any], identity: list[bytes],
             content_type: bytes | None, rid: str, after: str | None, *,
             counted: bool = True) -> None:
        """Run one request (on a pool thread, or the loop for control ops); queue its reply.

        An op that waits for the index first waits until the write ``after`` names (or,
        without a token, every committed write) is searchable.
        """
        op = spec.name

        def done(result: Any, err: BaseException | None, token: str | None) -> None:
            if err is None:
                payload = protocol.ok_reply(rid, result, token)
            else:
                code, text, arg = error_code(err)
                if code == protocol.INTERNAL:
                    log.error("op_failed", op=op, error=text, exc_info=err)
                payload = protocol.error_reply(rid, code, text, arg=arg)
            self._replies.put((identity, content_type, payload))
            if counted:
                self._count(-1)
            self.wake()

        dispatch(self.services, spec, args, after, done)
