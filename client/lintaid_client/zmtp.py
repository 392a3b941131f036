"""A minimal ZMTP 3.1 client with DEALER semantics, NULL security, over a Unix stream socket.

The hook shim uses this instead of pyzmq, so it imports only ``_socket`` and ``time`` (both
cheap; ``socket`` pulls in ``enum`` and ``selectors``). No ``from __future__`` either: it is a
real import. One exchange, every step bounded by one monotonic deadline::

    connect ─▶ greeting ⇄ greeting ─▶ READY ⇄ READY ─▶ request frames ─▶ ◀─ reply frames

Wire layout (RFC 37/ZMTP, the subset a DEALER talking to a ROUTER needs)::

    greeting (64 octets)  FF | 8 x padding | 7F | major 03 | minor 01 | "NULL" + 16 x 00 (20)
                          | as-server 00 | 31 x 00
    frame                 flags (1) | size (1 if short, 8 big-endian if long) | body (size)
        flags             bit 0 MORE (another frame of this message follows)
                          bit 1 LONG (size is 8 octets; used for bodies over 255 octets)
                          bit 2 COMMAND (a command, never part of a message; MORE is 0)
                          bits 3-7 zero
    command body          name-size (1) | name | data
    READY data            repeated: name-size (1) | name | value-size (4, big-endian) | value
                          we send Socket-Type=DEALER and an empty Identity, as libzmq does
    ERROR data            reason-size (1) | reason
    PING data / PONG data TTL (2) | context (0-16)  /  context (answered from PING)

A DEALER adds no envelope: ``send([a, b])`` arrives at the ROUTER as ``[identity, a, b]``;
the ROUTER's ``[identity, x, y]`` arrives here as ``[x, y]``.

Errors are typed, and ``.sent`` says whether the request may have reached the peer:
``Unavailable`` (nobody listening, or the peer hung up before the request went out: never
sent), ``Timeout`` (a step missed the deadline), ``ConnectionLost`` (the peer hung up after the
request went out), ``ProtocolError`` (the peer is not a ZMTP 3 NULL ROUTER, or broke framing),
``TooLarge`` (a frame over ``max_size``: refused before sending, or on reading its length).
"""

import _socket
from time import monotonic, sleep

TYPE_CHECKING = False  # mypy reads the block below; at run time nothing more is imported
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

MAX_SIZE = 8 * 1024 * 1024

_MORE = 0x01
_LONG = 0x02
_COMMAND = 0x04
_GREETING = (b"\xff" + bytes(8) + b"\x7f" + b"\x03\x01" + b"NULL".ljust(20, b"\0")
             + b"\x00" + bytes(31))  # as-server 0, filler


class ZmtpError(Exception):
    """Base of every error here; ``sent`` is True once any byte of the request was written."""

    sent = False


class Unavailable(ZmtpError):
    """Nobody accepts on the socket (no file, stale file, refused); the request was not sent."""


class Timeout(ZmtpError):
    """A step (connect, greeting, handshake, send, receive) ran past the deadline."""


class ConnectionLost(ZmtpError):
    """The peer closed or reset the connection after the request went out."""


class ProtocolError(ZmtpError):
    """The peer does not speak ZMTP 3 with the NULL mechanism as a ROUTER, or broke framing."""


class TooLarge(ZmtpError):
    """A frame is larger than the allowed maximum."""


def _header(flags: int, size: int) -> bytes:
    if size < 256:
        return bytes((flags, size))
    return bytes((flags | _LONG,)) + size.to_bytes(8, "big")


def _frame(flags: int, body: bytes) -> bytes:
    return _header(flags, len(body)) + body


def _command(name: bytes, data: bytes) -> bytes:
    return _frame(_COMMAND, bytes((len(name),)) + name + data)


def _prop(name: bytes, value: bytes) -> bytes:
    return bytes((len(name),)) + name + len(value).to_bytes(4, "big") + value


_READY = _command(b"READY", _prop(b"Socket-Type", b"DEALER") + _prop(b"Identity", b""))


def _check_sizes(frames: list[bytes], max_size: int) -> None:
    if not frames:
        raise ValueError("a message has at least one frame")
    for frame in frames:
        if len(frame) > max_size:
            raise TooLarge(f"frame of {len(frame)} bytes exceeds the {max_size}-byte maximum")


def _parse_command(body: bytes) -> tuple[bytes, bytes]:
    if not body or len(body) < 1 + body[0]:
        raise ValueError("malformed command")
    return body[1 : 1 + body[0]], body[1 + body[0] :]


def _parse_properties(data: bytes) -> dict[str, bytes]:
    props: dict[str, bytes] = {}
    pos = 0
    while pos < len(data):
        end = pos + 1 + data[pos]
        if end + 4 > len(data):
            raise ValueError("malformed READY metadata")
        name = data[pos + 1 : end].decode("ascii", "replace").lower()
        size = int.from_bytes(data[end : end + 4], "big")
        pos = end + 4 + size
        if pos > len(data):
            raise ValueError("malformed READY metadata")
        props[name] = data[end + 4 : pos]
    return props


class Dealer:
    """One ZMTP connection to a ROUTER at ``path`` (``ipc://`` prefix optional). Not thread-safe.

    ``connect``, ``send`` and ``recv`` each take an absolute ``time.monotonic()`` deadline.
    Any error but a refused oversized ``send`` closes the connection; use a new ``Dealer``.
    """

    def __init__(self, path: str, *, max_size: int = MAX_SIZE) -> None:
        self.path = path[6:] if path.startswith("ipc://") else path
        self.max_size = max_size
        self.sent = False
        self.peer: dict[str, bytes] = {}  # the ROUTER's READY metadata, names lower-cased
        self._sock: _socket.socket | None = None
        self._buf = bytearray()

    def __enter__(self) -> "Dealer":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    # -- the three steps -----------------------------------------------------------------

    def connect(self, deadline: float) -> None:
        """Connect, exchange greetings and READY; check the peer is a ZMTP 3 NULL ROUTER."""
        sock = self._sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        while True:
            self._arm(deadline, "connect")
            try:
                sock.connect(self.path)
                break
            except TimeoutError:
                raise self._error(Timeout, "connect: timed out") from None
            except BlockingIOError:  # the listen backlog is full: busy, not absent
                if monotonic() + 0.002 >= deadline:
                    raise self._error(Timeout, "connect: listen backlog full") from None
                sleep(0.002)
            except OSError as err:
                raise self._error(Unavailable, f"connect: {err.strerror or err}") from None
        self._write(_GREETING, deadline, "greeting")
        head = self._read(11, deadline, "greeting")
        if head[0] != 0xFF or head[9] != 0x7F:
            raise self._error(ProtocolError, f"peer is not a ZMTP peer (sent {head!r})")
        if head[10] != 3:
            raise self._error(ProtocolError, f"peer speaks ZMTP major version {head[10]}; need 3")
        rest = self._read(53, deadline, "greeting")
        mechanism = rest[1:21].rstrip(b"\0")
        if mechanism != b"NULL":
            raise self._error(ProtocolError, f"peer wants security mechanism {mechanism!r}")
        self._write(_READY, deadline, "handshake")
        flags, body = self._read_frame(deadline, "handshake")
        if not flags & _COMMAND:
            raise self._error(ProtocolError, "peer sent a message before READY")
        name, data = self._parse(_parse_command, body, "handshake")
        if name == b"ERROR":
            reason = data[1 : 1 + data[0]] if data else b""
            raise self._error(ProtocolError, f"peer refused the handshake: {reason!r}")
        if name != b"READY":
            raise self._error(ProtocolError, f"expected READY, peer sent {name!r}")
        self.peer = self._parse(_parse_properties, data, "handshake")
        socket_type = self.peer.get("socket-type")
        if socket_type != b"ROUTER":
            raise self._error(ProtocolError, f"peer socket type is {socket_type!r}, not ROUTER")

    def send(self, frames: list[bytes], deadline: float) -> None:
        """Send one multipart message; every frame must be at most ``max_size`` bytes."""
        _check_sizes(frames, self.max_size)
        self.sent = False
        parts: list[bytes] = []
        for i, body in enumerate(frames):
            parts += (_header(_MORE if i < len(frames) - 1 else 0, len(body)), body)
        self._write(b"".join(parts), deadline, "send", request=True)

    def recv(self, deadline: float) -> list[bytes]:
        """Receive one multipart message, answering PING and skipping other commands."""
        frames = []
        while True:
            flags, body = self._read_frame(deadline, "receive")
            if flags & _COMMAND:
                name, data = self._parse(_parse_command, body, "receive")
                if name == b"PING" and len(data) >= 2:
                    self._write(_command(b"PONG", data[2:18]), deadline, "receive")
                continue
            frames.append(body)
            if not flags & _MORE:
                return frames

    # -- plumbing ------------------------------------------------------------------------

    def _error(self, cls: "type[ZmtpError]", message: str) -> ZmtpError:
        err = cls(f"{message} ({self.path})")
        err.sent = self.sent
        self.close()
        return err

    def _parse(self, parser: "Callable[[bytes], Any]", data: bytes, step: str) -> "Any":
        """``parser(data)``; a ValueError (malformed) becomes a ProtocolError."""
        try:
            return parser(data)
        except ValueError as err:
            raise self._error(ProtocolError, f"{step}: {err}") from None

    def _arm(self, deadline: float, step: str) -> _socket.socket:
        """The open socket, its timeout set to what is left of the deadline."""
        remaining = deadline - monotonic()
        if remaining <= 0:
            raise self._error(Timeout, f"{step}: deadline passed")
        if self._sock is None:
            raise self._error(ConnectionLost if self.sent else Unavailable, f"{step}: closed")
        self._sock.settimeout(remaining)
        return self._sock

    def _hung_up(self, step: str, why: str) -> ZmtpError:
        if self.sent:
            return self._error(ConnectionLost, f"{step}: peer {why}")
        return self._error(Unavailable, f"{step}: peer {why} before the request was sent")

    def _write(self, data: bytes, deadline: float, step: str, request: bool = False) -> None:
        sock = self._arm(deadline, step)
        self.sent = self.sent or request
        try:
            sock.sendall(data)
        except TimeoutError:
            raise self._error(Timeout, f"{step}: timed out writing") from None
        except OSError as err:
            raise self._hung_up(step, f"reset the connection ({err.strerror or err})") from None

    def _read(self, size: int, deadline: float, step: str) -> bytes:
        buf = self._buf
        while len(buf) < size:
            sock = self._arm(deadline, step)
            try:
                chunk = sock.recv(min(max(size - len(buf), 65536), 1 << 20))
            except TimeoutError:
                raise self._error(Timeout, f"{step}: timed out waiting for the peer") from None
            except OSError as err:
                raise self._hung_up(step, f"reset the connection ({err.strerror or err})") from None
            if not chunk:
                raise self._hung_up(step, "closed the connection")
            buf += chunk
        data = bytes(buf[:size])
        del buf[:size]
        return data

    def _read_frame(self, deadline: float, step: str) -> tuple[int, bytes]:
        head = self._read(2, deadline, step)
        flags = head[0]
        if flags & ~(_MORE | _LONG | _COMMAND) or (flags & _COMMAND and flags & _MORE):
            raise self._error(ProtocolError, f"{step}: bad frame flags {flags:#04x}")
        size = head[1]
        if flags & _LONG:
            size = int.from_bytes(head[1:] + self._read(7, deadline, step), "big")
        if size > self.max_size:
            raise self._error(TooLarge, f"{step}: peer frame of {size} bytes exceeds "
                                        f"the {self.max_size}-byte maximum")
        return flags, self._read(size, deadline, step)


def request(path: str, frames: list[bytes], *, timeout: float = 1.0,
            max_size: int = MAX_SIZE) -> list[bytes]:
    """Send ``frames`` as one message to the ROUTER at ``path`` and return its reply's frames.

    One fresh connection, closed afterwards; ``timeout`` (seconds) bounds the whole exchange.
    Oversized frames are refused before connecting.
    """
    deadline = monotonic() + timeout
    _check_sizes(frames, max_size)
    with Dealer(path, max_size=max_size) as dealer:
        dealer.connect(deadline)
        dealer.send(frames, deadline)
        return dealer.recv(deadline)
