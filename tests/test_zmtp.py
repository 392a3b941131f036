"""The standard-library ZMTP client against the real libzmq ROUTER (pyzmq), and against raw
peers that misbehave on purpose. No timing asserts: tests wait on events and results."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import zmq
from zmq.utils.monitor import recv_monitor_message

from lintaid_client import zmtp

WAIT_MS = 10_000  # how long a test waits for an event that must happen
JSON = b"application/json"


@pytest.fixture
def path() -> Iterator[str]:
    """A socket path in a fresh, short temporary folder (sun_path is only 108 bytes)."""
    folder = tempfile.mkdtemp(prefix="zmtp-", dir="/tmp")
    yield f"{folder}/router.sock"
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def ctx() -> Iterator[zmq.Context]:
    context = zmq.Context()
    yield context
    context.destroy(linger=0)


def bind_router(ctx: zmq.Context, path: str, kind: int = zmq.ROUTER, **opts: object) -> zmq.Socket:
    sock = ctx.socket(kind)
    sock.linger = 0
    for name, value in opts.items():
        setattr(sock, name, value)
    sock.bind(f"ipc://{path}")
    return sock


@pytest.fixture
def router(ctx: zmq.Context, path: str) -> zmq.Socket:
    return bind_router(ctx, path)


@pytest.fixture
def pool() -> Iterator[ThreadPoolExecutor]:
    executor = ThreadPoolExecutor(max_workers=2)
    yield executor
    executor.shutdown(wait=True)


def recv_request(router: zmq.Socket) -> list[zmq.Frame]:
    assert router.poll(WAIT_MS), "the ROUTER never received the request"
    return router.recv_multipart(copy=False)


def serve_once(router: zmq.Socket, reply: Callable[[list[bytes]], list[bytes]]) -> list[bytes]:
    """Answer one request with ``reply(frames)``; return what the ROUTER received."""
    ident, *frames = [f.bytes for f in recv_request(router)]
    router.send_multipart([ident, *reply(frames)])
    return frames


# -- raw peers: a plain socket server that speaks as much ZMTP as a test needs ------------------

def greeting(major: int = 3, minor: int = 1, mechanism: bytes = b"NULL") -> bytes:
    return b"\xff" + b"\0" * 8 + b"\x7f" + bytes((major, minor)) + mechanism.ljust(20, b"\0") + b"\0" * 32


def frame(body: bytes, *, more: bool = False, command: bool = False) -> bytes:
    flags = (1 if more else 0) | (4 if command else 0)
    if len(body) > 255:
        return bytes((flags | 2,)) + len(body).to_bytes(8, "big") + body
    return bytes((flags, len(body))) + body


def command(name: bytes, data: bytes = b"") -> bytes:
    return frame(bytes((len(name),)) + name + data, command=True)


def ready(socket_type: bytes) -> bytes:
    name = b"Socket-Type"
    return command(b"READY", bytes((len(name),)) + name + len(socket_type).to_bytes(4, "big")
                   + socket_type)


def recv_exact(conn: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return data


def read_frame(conn: socket.socket) -> tuple[int, bytes]:
    flags, size = recv_exact(conn, 2)
    if flags & 2:
        size = int.from_bytes(bytes((size,)) + recv_exact(conn, 7), "big")
    return flags, recv_exact(conn, size)


def read_message(conn: socket.socket) -> list[bytes]:
    frames = []
    while True:
        flags, body = read_frame(conn)
        frames.append(body)
        if not flags & 1:
            return frames


def handshake(conn: socket.socket, *, major: int = 3, minor: int = 1) -> bytes:
    """Play the server side of greeting and READY; return the client's greeting."""
    conn.sendall(greeting(major, minor))
    client_greeting = recv_exact(conn, 64)
    flags, _ = read_frame(conn)
    assert flags & 4
    conn.sendall(ready(b"ROUTER"))
    return client_greeting


class RawPeer:
    """Listen on ``path``; run ``script(conn, peer)`` on the first connection in a thread."""

    def __init__(self, path: str, script: Callable[[socket.socket, RawPeer], None]) -> None:
        self.release = threading.Event()  # set at teardown: a stalling script may now leave
        self.result: object = None
        self.error: BaseException | None = None
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(path)
        self.listener.listen(8)
        self.listener.settimeout(WAIT_MS / 1000)
        self._script = script
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            conn, _ = self.listener.accept()
            with conn:
                conn.settimeout(WAIT_MS / 1000)
                self.result = self._script(conn, self)
        except BaseException as err:  # reported by join()
            self.error = err

    def join(self) -> object:
        self._thread.join(WAIT_MS / 1000)
        assert not self._thread.is_alive()
        if self.error is not None:
            raise self.error
        return self.result

    def close(self) -> None:
        self.release.set()
        self._thread.join(WAIT_MS / 1000)
        self.listener.close()


@pytest.fixture
def raw_peer(path: str) -> Iterator[Callable[..., RawPeer]]:
    peers: list[RawPeer] = []

    def start(script: Callable[[socket.socket, RawPeer], None]) -> RawPeer:
        peers.append(RawPeer(path, script))
        return peers[-1]

    yield start
    for peer in peers:
        peer.close()


# -- wire format ------------------------------------------------------------------------------

def test_greeting_is_64_octets_of_zmtp_3_1_null_client() -> None:
    g = zmtp._GREETING
    assert len(g) == 64
    assert g[:10] == b"\xff" + b"\0" * 8 + b"\x7f"
    assert g[10:12] == b"\x03\x01"
    assert g[12:32] == b"NULL" + b"\0" * 16
    assert g[32] == 0  # as-server: we are the client
    assert g[33:] == b"\0" * 31


def test_frames_switch_from_short_to_long_after_255_octets() -> None:
    assert zmtp._frame(0, b"") == b"\x00\x00"
    assert zmtp._frame(1, b"x" * 255) == b"\x01\xff" + b"x" * 255
    assert zmtp._frame(0, b"x" * 256) == b"\x02" + (256).to_bytes(8, "big") + b"x" * 256
    assert zmtp._frame(1, b"x" * 256)[:1] == b"\x03"
    assert zmtp._command(b"PONG", b"ab") == b"\x04\x07\x04PONGab"


def test_the_module_loads_only_the_cheap_builtins() -> None:
    """Loaded alone, as the hook would under ``-I -S``: nothing but ``_socket`` comes with it."""
    code = (
        "import sys\n"
        f"sys.path.insert(0, {str(Path(zmtp.__file__).parent)!r})\n"
        "before = set(sys.modules)\n"
        "import zmtp\n"
        "print(' '.join(sorted(set(sys.modules) - before)))\n"
    )
    out = subprocess.run([sys.executable, "-I", "-S", "-c", code], capture_output=True,
                         text=True, check=True)
    assert set(out.stdout.split()) <= {"zmtp", "_socket"}, out.stdout


# -- against the real libzmq ROUTER -----------------------------------------------------------

def test_greeting_and_ready_with_a_real_router(router: zmq.Socket, path: str) -> None:
    monitor = router.get_monitor_socket(zmq.EVENT_HANDSHAKE_SUCCEEDED)
    with zmtp.Dealer(f"ipc://{path}") as dealer:
        dealer.connect(zmtp.monotonic() + 5)
        assert dealer.peer["socket-type"] == b"ROUTER"
        assert monitor.poll(WAIT_MS), "libzmq never completed the handshake"
        event = recv_monitor_message(monitor)
        assert event["event"] == zmq.EVENT_HANDSHAKE_SUCCEEDED
    router.disable_monitor()
    monitor.close()


def test_router_gets_identity_and_frames_and_the_multipart_reply_comes_back(
        router: zmq.Socket, path: str, pool: ThreadPoolExecutor) -> None:
    call = pool.submit(zmtp.request, f"ipc://{path}", [JSON, b'{"op":"ping"}'], timeout=10)
    ident, *frames = recv_request(router)
    assert [f.bytes for f in frames] == [JSON, b'{"op":"ping"}']
    assert frames[0].get("Socket-Type") == "DEALER"  # our READY metadata, as libzmq read it
    router.send_multipart([ident.bytes, JSON, b'{"ok":true}', b"", b"tail"])
    assert call.result(WAIT_MS / 1000) == [JSON, b'{"ok":true}', b"", b"tail"]


@pytest.mark.parametrize("size", [0, 1, 255, 256, 65_536, zmtp.MAX_SIZE])
def test_message_sizes_round_trip_up_to_the_maximum(
        router: zmq.Socket, path: str, pool: ThreadPoolExecutor, size: int) -> None:
    body = bytes(range(256)) * (size // 256) + b"z" * (size % 256)
    call = pool.submit(zmtp.request, path, [JSON, body], timeout=30)
    received = serve_once(router, lambda frames: frames[::-1])
    assert received == [JSON, body]
    assert call.result(30) == [body, JSON]


def test_one_dealer_connection_carries_several_requests(router: zmq.Socket, path: str,
                                                        pool: ThreadPoolExecutor) -> None:
    def two_calls() -> list[list[bytes]]:
        deadline = zmtp.monotonic() + 10
        with zmtp.Dealer(path) as dealer:
            dealer.connect(deadline)
            replies = []
            for body in (b"one", b"two"):
                dealer.send([body], deadline)
                replies.append(dealer.recv(deadline))
            return replies

    call = pool.submit(two_calls)
    idents = set()
    for _ in range(2):
        ident, *frames = [f.bytes for f in recv_request(router)]
        idents.add(ident)
        router.send_multipart([ident, b"re:" + frames[0]])
    assert call.result(WAIT_MS / 1000) == [[b"re:one"], [b"re:two"]]
    assert len(idents) == 1  # one connection, one routing id


def test_single_frame_request_and_reply(router: zmq.Socket, path: str,
                                        pool: ThreadPoolExecutor) -> None:
    call = pool.submit(zmtp.request, path, [b"\x81\xa1v\x01"], timeout=10)
    assert serve_once(router, lambda frames: [b"reply"]) == [b"\x81\xa1v\x01"]
    assert call.result(WAIT_MS / 1000) == [b"reply"]


def test_a_frame_over_the_maximum_is_refused_before_connecting(path: str) -> None:
    # No listener at all: TooLarge (not Unavailable) proves no connection was attempted.
    with pytest.raises(zmtp.TooLarge) as info:
        zmtp.request(path, [JSON, b"x" * (zmtp.MAX_SIZE + 1)])
    assert not info.value.sent
    with pytest.raises(zmtp.TooLarge):
        zmtp.request(path, [b"x" * 1025], max_size=1024)


def test_a_reply_over_the_callers_maximum_is_refused(router: zmq.Socket, path: str,
                                                     pool: ThreadPoolExecutor) -> None:
    call = pool.submit(zmtp.request, path, [b"q"], timeout=10, max_size=1024)
    serve_once(router, lambda frames: [b"ok", b"x" * 1025])
    with pytest.raises(zmtp.TooLarge) as info:
        call.result(WAIT_MS / 1000)
    assert info.value.sent
    # exactly the maximum is fine, and the ROUTER keeps serving new connections
    call = pool.submit(zmtp.request, path, [b"q"], timeout=10, max_size=1024)
    serve_once(router, lambda frames: [b"x" * 1024])
    assert call.result(WAIT_MS / 1000) == [b"x" * 1024]


def test_a_router_that_restarts_between_calls_is_reached_on_a_new_connection(
        ctx: zmq.Context, path: str, pool: ThreadPoolExecutor) -> None:
    for generation in (b"first", b"second"):
        router = bind_router(ctx, path)
        call = pool.submit(zmtp.request, path, [b"who"], timeout=10)
        serve_once(router, lambda frames, g=generation: [g])
        assert call.result(WAIT_MS / 1000) == [generation]
        router.close(linger=0)


def test_a_router_that_goes_away_mid_call_is_a_lost_connection(
        router: zmq.Socket, path: str, pool: ThreadPoolExecutor) -> None:
    call = pool.submit(zmtp.request, path, [b"work"], timeout=10)
    recv_request(router)
    router.close(linger=0)
    with pytest.raises(zmtp.ConnectionLost) as info:
        call.result(WAIT_MS / 1000)
    assert info.value.sent


def test_a_router_that_never_answers_times_out_after_sending(
        router: zmq.Socket, path: str, pool: ThreadPoolExecutor) -> None:
    def call() -> list[bytes]:
        with zmtp.Dealer(path) as dealer:
            dealer.connect(zmtp.monotonic() + 10)  # generous: only the reply should be late
            dealer.send([b"work"], zmtp.monotonic() + 10)
            return dealer.recv(zmtp.monotonic() + 0.3)

    pending = pool.submit(call)
    recv_request(router)
    with pytest.raises(zmtp.Timeout, match="receive") as info:
        pending.result(WAIT_MS / 1000)
    assert info.value.sent


def test_a_peer_of_another_socket_type_is_a_protocol_error(ctx: zmq.Context, path: str) -> None:
    puller = bind_router(ctx, path, zmq.PULL)  # keep a reference: a collected socket closes
    with pytest.raises(zmtp.ProtocolError, match="PULL") as info:
        zmtp.request(path, [b"x"], timeout=10)
    assert not info.value.sent
    puller.close()


def test_a_real_router_that_wants_another_mechanism_hangs_up_before_the_request(
        ctx: zmq.Context, path: str) -> None:
    # libzmq queues the rest of its greeting, reads ours whole, sees NULL != PLAIN and closes
    # before flushing its mechanism: to us the peer hung up during the greeting.
    secured = bind_router(ctx, path, plain_server=True)
    with pytest.raises((zmtp.Unavailable, zmtp.ProtocolError)) as info:
        zmtp.request(path, [b"x"], timeout=10)
    assert not info.value.sent
    secured.close()


# -- absent, stalled and foreign peers --------------------------------------------------------

def test_a_missing_socket_file_is_unavailable(path: str) -> None:
    with pytest.raises(zmtp.Unavailable) as info:
        zmtp.request(path, [b"x"], timeout=10)
    assert not info.value.sent


def test_a_stale_socket_file_is_unavailable(path: str) -> None:
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(path)  # the file exists, nobody listens: what a crashed daemon leaves behind
    stale.close()
    with pytest.raises(zmtp.Unavailable) as info:
        zmtp.request(f"ipc://{path}", [b"x"], timeout=10)
    assert not info.value.sent


def test_a_full_listen_backlog_times_out_without_sending(path: str) -> None:
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(0)  # never accepts
    waiting = []
    try:
        while True:  # fill the backlog
            client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            client.setblocking(False)
            waiting.append(client)
            try:
                client.connect(path)
            except BlockingIOError:
                break
        with pytest.raises(zmtp.Timeout) as info:
            zmtp.request(path, [b"x"], timeout=0.2)
        assert not info.value.sent
    finally:
        for client in waiting:
            client.close()
        listener.close()


def test_a_peer_that_stalls_after_its_greeting_times_out(path: str, raw_peer) -> None:
    def stall(conn: socket.socket, peer: RawPeer) -> None:
        conn.sendall(greeting())
        peer.release.wait(WAIT_MS / 1000)

    raw_peer(stall)
    with pytest.raises(zmtp.Timeout, match="handshake") as info:
        zmtp.request(path, [b"x"], timeout=1.0)  # margin for the greeting on a busy machine
    assert not info.value.sent


def test_a_peer_that_says_nothing_times_out(path: str, raw_peer) -> None:
    raw_peer(lambda conn, peer: peer.release.wait(WAIT_MS / 1000))
    with pytest.raises(zmtp.Timeout, match="greeting"):
        zmtp.request(path, [b"x"], timeout=0.3)


def test_a_peer_with_a_wrong_signature_is_a_protocol_error(path: str, raw_peer) -> None:
    def http(conn: socket.socket, peer: RawPeer) -> None:
        conn.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n")
        peer.release.wait(WAIT_MS / 1000)

    raw_peer(http)
    with pytest.raises(zmtp.ProtocolError, match="not a ZMTP peer"):
        zmtp.request(path, [b"x"], timeout=10)


def test_a_peer_that_announces_another_mechanism_is_a_protocol_error(path: str, raw_peer) -> None:
    def curve(conn: socket.socket, peer: RawPeer) -> None:
        conn.sendall(greeting(mechanism=b"CURVE"))
        peer.release.wait(WAIT_MS / 1000)

    raw_peer(curve)
    with pytest.raises(zmtp.ProtocolError, match="CURVE") as info:
        zmtp.request(path, [b"x"], timeout=10)
    assert not info.value.sent


@pytest.mark.parametrize("major", [1, 2, 4])
def test_a_peer_of_another_major_version_is_a_protocol_error(
        path: str, raw_peer, major: int) -> None:
    def old(conn: socket.socket, peer: RawPeer) -> None:
        conn.sendall(greeting(major=major)[:12])  # ZMTP 2.0 sends only 12 octets
        peer.release.wait(WAIT_MS / 1000)

    raw_peer(old)
    with pytest.raises(zmtp.ProtocolError, match=f"major version {major}"):
        zmtp.request(path, [b"x"], timeout=10)


def test_a_zmtp_3_0_peer_is_accepted(path: str, raw_peer) -> None:
    def v30(conn: socket.socket, peer: RawPeer) -> list[bytes]:
        client_greeting = handshake(conn, minor=0)
        assert client_greeting[10:12] == b"\x03\x01"
        request = read_message(conn)
        conn.sendall(frame(b"a", more=True) + frame(b"b" * 300))
        return request

    peer = raw_peer(v30)
    assert zmtp.request(path, [b"1", b"2" * 256], timeout=10) == [b"a", b"b" * 300]
    assert peer.join() == [b"1", b"2" * 256]


def test_an_error_command_during_the_handshake_is_a_protocol_error(path: str, raw_peer) -> None:
    def refuse(conn: socket.socket, peer: RawPeer) -> None:
        conn.sendall(greeting())
        recv_exact(conn, 64)
        conn.sendall(command(b"ERROR", b"\x0cno thank you"))
        peer.release.wait(WAIT_MS / 1000)

    raw_peer(refuse)
    with pytest.raises(zmtp.ProtocolError, match="no thank you"):
        zmtp.request(path, [b"x"], timeout=10)


def test_ping_is_answered_with_pong_and_other_commands_are_skipped(path: str, raw_peer) -> None:
    def pinging(conn: socket.socket, peer: RawPeer) -> bytes:
        handshake(conn)
        read_message(conn)
        conn.sendall(command(b"PING", b"\x00\x64ctx-42") + command(b"SUBSCRIBE", b"news"))
        flags, pong = read_frame(conn)  # the reply waits until the client has answered
        conn.sendall(frame(b"done"))
        return pong

    peer = raw_peer(pinging)
    assert zmtp.request(path, [b"x"], timeout=10) == [b"done"]
    assert peer.join() == b"\x04PONGctx-42"


def test_a_peer_that_breaks_framing_is_a_protocol_error(path: str, raw_peer) -> None:
    def bad_flags(conn: socket.socket, peer: RawPeer) -> None:
        handshake(conn)
        read_message(conn)
        conn.sendall(b"\x80\x01x")
        peer.release.wait(WAIT_MS / 1000)

    raw_peer(bad_flags)
    with pytest.raises(zmtp.ProtocolError, match="flags") as info:
        zmtp.request(path, [b"x"], timeout=10)
    assert info.value.sent


def test_a_malformed_command_after_the_request_is_a_protocol_error(path: str, raw_peer) -> None:
    def garbled(conn: socket.socket, peer: RawPeer) -> None:
        handshake(conn)
        read_message(conn)
        conn.sendall(b"\x04\x01\x05")  # a command whose name claims 5 octets of 0
        peer.release.wait(WAIT_MS / 1000)

    raw_peer(garbled)
    with pytest.raises(zmtp.ProtocolError, match="malformed command") as info:
        zmtp.request(path, [b"x"], timeout=10)
    assert info.value.sent


def test_malformed_ready_metadata_is_a_protocol_error(path: str, raw_peer) -> None:
    def garbled(conn: socket.socket, peer: RawPeer) -> None:
        conn.sendall(greeting())
        recv_exact(conn, 64)
        read_frame(conn)
        conn.sendall(command(b"READY", b"\x0bSocket-Type\x00\x00\x00\x09ROUTER"))
        peer.release.wait(WAIT_MS / 1000)

    raw_peer(garbled)
    with pytest.raises(zmtp.ProtocolError, match="malformed READY") as info:
        zmtp.request(path, [b"x"], timeout=10)
    assert not info.value.sent


def test_a_peer_that_hangs_up_during_the_handshake_is_unavailable(path: str, raw_peer) -> None:
    raw_peer(lambda conn, peer: conn.sendall(greeting()))  # then closes
    with pytest.raises(zmtp.Unavailable) as info:
        zmtp.request(path, [b"x"], timeout=10)
    assert not info.value.sent
