"""Every request that names an id gets a typed reply to that id, however it is broken, and a
fuzz run of the decoder and of every op's arguments finds no ``internal`` reply and no
silence, against a real daemon."""

from __future__ import annotations

import json
import string
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgpack
import pytest
import zmq
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lintaid_client import Memory, ops, paths, protocol
from tests.conftest import start_daemon, stop_daemon

REPLY_S = 20.0  # a bound on waiting for a reply, not a timing assertion


class Peer:
    """A raw DEALER: sends any frames, waits for the reply carrying one id."""

    def __init__(self, root: Path) -> None:
        self.ctx = zmq.Context()
        self.sock = self.ctx.socket(zmq.DEALER)
        self.sock.setsockopt(zmq.LINGER, 0)
        self.sock.connect(paths.endpoint(root))

    def send(self, frames: list[bytes]) -> None:
        self.sock.send_multipart(frames)

    def reply(self, rid: str | None, timeout: float = REPLY_S) -> dict[str, Any] | None:
        """The reply to ``rid`` (None: the next reply of any id), or None after ``timeout``."""
        while self.sock.poll(int(timeout * 1000)):
            frames = self.sock.recv_multipart()
            reply = (json.loads(frames[1]) if len(frames) == 2
                     else protocol.unpack(frames[0]))
            if rid is None or reply.get("id") == rid:
                return reply
        return None

    def drain(self) -> None:
        while self.sock.poll(0):
            self.sock.recv_multipart()

    def ping(self) -> bool:
        self.send([protocol.pack(protocol.request("ping", {}, "ping-check"))])
        reply = self.reply("ping-check")
        return bool(reply and reply["ok"] and reply["result"]["pong"])

    def close(self) -> None:
        self.sock.close(0)
        self.ctx.term()


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("replies") / "proj"
    root.mkdir()
    paths.ensure_state_dir(root)
    start_daemon(root)
    try:
        yield root
    finally:
        stop_daemon(root)


@pytest.fixture
def peer(live: Path) -> Iterator[Peer]:
    p = Peer(live)
    try:
        yield p
    finally:
        p.close()


def add_request(rid: str, content: Any = "The tern relay keeps 3 copies.", **args: Any) -> dict:
    return protocol.request("add", {"content": content, **args}, rid)


def with_bytes_in_place(message: dict, marker: str, raw: bytes) -> bytes:
    """msgpack of ``message`` with the string ``marker``'s bytes replaced by ``raw``."""
    data = protocol.pack(message)
    assert len(marker.encode()) == len(raw)
    return data.replace(marker.encode(), raw)


# -- each finding ----------------------------------------------------------------------------
def test_invalid_utf8_inside_a_string_is_a_bad_request(peer: Peer) -> None:
    peer.send([with_bytes_in_place(add_request("u1", "QQQQ"), "QQQQ", b"\xff\xfe\xfd\xfc")])
    reply = peer.reply("u1")
    assert reply and reply["error"]["code"] == "bad_request" and not reply["error"]["retryable"]
    assert "utf-8" in reply["error"]["message"].lower()
    body = b'{"v":1,"id":"u2","op":"add","args":{"content":"\xff\xfe"}}'
    peer.send([protocol.CONTENT_JSON, body])
    reply = peer.reply("u2")
    assert reply and reply["error"]["code"] == "bad_request"


def test_an_integer_map_key_is_a_bad_request(peer: Peer) -> None:
    message = add_request("k1", metadata={"a": 1})
    data = msgpack.packb({**message, "args": {**message["args"], 7: "seven"}})
    peer.send([data])
    reply = peer.reply("k1")
    assert reply and reply["error"]["code"] == "bad_request"


def test_content_over_the_limit_is_too_large_with_its_id(peer: Peer) -> None:
    big = "x " * (protocol.MAX_MESSAGE_BYTES // 2 + 1024)  # just over 8 MiB
    peer.send([protocol.pack(add_request("big1", big))])
    reply = peer.reply("big1")
    assert reply and reply["error"]["code"] == "too_large"
    body = json.dumps(add_request("big2", big)).encode()
    peer.send([protocol.CONTENT_JSON, body])
    reply = peer.reply("big2")
    assert reply and reply["error"]["code"] == "too_large"
    assert peer.ping()


def test_a_timestamp_or_any_extension_type_is_refused(peer: Peer) -> None:
    for rid, value in (("t1", msgpack.Timestamp(1_700_000_000, 0)),
                       ("t2", msgpack.ExtType(42, b"opaque"))):
        data = msgpack.packb(add_request(rid, metadata={"when": value}), datetime=False)
        peer.send([data])
        reply = peer.reply(rid)
        assert reply and reply["error"]["code"] == "bad_request", reply
    data = msgpack.packb(protocol.request("search", {"query": "x",
                                                    "as_of": msgpack.Timestamp(5, 0)}, "t3"))
    peer.send([data])
    reply = peer.reply("t3")
    assert reply and reply["error"]["code"] == "bad_request"


def test_a_thousand_deep_metadata_is_refused(peer: Peer) -> None:
    deep: Any = "bottom"
    for _ in range(1000):
        deep = {"d": deep}
    peer.send([msgpack.packb(add_request("d1", metadata=deep))])
    reply = peer.reply("d1")
    assert reply and reply["error"]["code"] == "bad_request"
    nested = '{"d":' * 1000 + '"bottom"' + "}" * 1000  # json.dumps itself would recurse
    body = json.dumps(add_request("d2", metadata={})).replace('"metadata": {}',
                                                             f'"metadata": {nested}')
    peer.send([protocol.CONTENT_JSON, body.encode()])
    reply = peer.reply("d2")
    assert reply and reply["error"]["code"] == "bad_request"


def test_flags_of_the_wrong_type_are_refused_by_name(peer: Peer) -> None:
    for rid, args in (("f1", {"query": "x", "history": "yes"}),
                      ("f2", {"query": "x", "top_k": "5"}),
                      ("f3", {"query": "x", "history": 1})):
        peer.send([protocol.pack(protocol.request("search", args, rid))])
        reply = peer.reply(rid)
        assert reply and reply["error"]["code"] == "bad_request"
        assert reply["error"]["arg"] in ("history", "top_k")


def test_noise_without_an_id_harms_nothing(peer: Peer) -> None:
    peer.send([b"\xc1\xc1 not msgpack"])
    peer.send([protocol.CONTENT_JSON, b"{not json"])  # a JSON peer is told, id or not
    reply = peer.reply(None)
    assert reply and reply["id"] is None and reply["error"]["code"] == "bad_request"
    assert peer.ping()


def test_the_python_client_refuses_a_lone_surrogate_clearly(live: Path) -> None:
    with Memory(project=live) as m, pytest.raises(protocol.BadRequest) as info:
        m.add("half a pair: \udc80")
    assert info.value.arg == "content" and "UTF-8" in info.value.message


# -- the fuzz run ----------------------------------------------------------------------------
FUZZ = settings(max_examples=300, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow,
                                       HealthCheck.function_scoped_fixture])
# One stops the daemon, one writes where it is told, two connect to the server they are given.
SKIPPED_OPS = {"shutdown", "backup", "team_join", "team_add_member"}
OP_NAMES = sorted(set(ops.OPS) - SKIPPED_OPS)
OUTCOMES: dict[str, int] = {}  # what the fuzz run met, printed at the end (pytest -s)

text = st.text(alphabet=string.printable + "äß€𝄞\x00", max_size=40)
scalars = st.one_of(st.none(), st.booleans(), st.integers(-(2**63), 2**64 - 1),
                    st.floats(allow_nan=True, allow_infinity=True), text,
                    st.binary(max_size=16))
exotic = st.one_of(
    st.builds(msgpack.Timestamp, st.integers(0, 2**32 - 1), st.integers(0, 999_999_999)),
    st.builds(msgpack.ExtType, st.integers(0, 127), st.binary(max_size=8)),
)
values = st.recursive(st.one_of(scalars, exotic),
                      lambda inner: st.one_of(st.lists(inner, max_size=4),
                                              st.dictionaries(text, inner, max_size=4)),
                      max_leaves=12)


def arg_value(arg: ops.Arg) -> st.SearchStrategy[Any]:
    """Mostly what the declaration asks for, sometimes anything at all."""
    proper: dict[str, st.SearchStrategy[Any]] = {
        ops.STR: text, ops.TEXT: text.filter(str.strip), ops.CHOICE: st.sampled_from([*arg.choices, "nope"]),
        ops.INT: st.integers(-5, 2000), ops.BOOL: st.booleans(),
        ops.TIME: st.one_of(st.floats(allow_nan=True), text, st.integers(-10, 2**40)),
        ops.DURATION: st.one_of(st.sampled_from(["90s", "30m", "2h", "1d", "1h30m", "0s",
                                                 "400d", "-5m", "h"]), text,
                                st.integers(-5, 10**9), st.floats(allow_nan=True)),
        ops.MAP: st.dictionaries(text, values, max_size=4),
        ops.LIST: st.lists(st.dictionaries(st.sampled_from(["content", "metadata", "x"]),
                                           values, max_size=3), max_size=3),
    }
    fitting = proper.get(arg.type, values)  # an argument type added later: anything at all
    return st.sampled_from([True] * 4 + [False]).flatmap(
        lambda fits: fitting if fits else values)


def rarely(draw: st.DrawFn, tenths: int) -> bool:
    """True about ``tenths`` times in ten (hypothesis leans to small integers, not this)."""
    return draw(st.sampled_from([False] * (10 - tenths) + [True] * tenths))


@st.composite
def requests(draw: st.DrawFn) -> dict[str, Any]:
    name = draw(text) if rarely(draw, 1) else draw(st.sampled_from(OP_NAMES))
    spec = ops.OPS.get(name)
    args: dict[Any, Any] = {}
    if spec is not None:
        for arg in spec.args:
            if rarely(draw, 9 if arg.required or arg.name == "content" else 3):
                args[arg.name] = draw(arg_value(arg))
        if name == "hook":  # a real client name, so the adapter runs
            args["provider"] = draw(st.sampled_from(["claude-code", "codex", "gemini", "x"]))
    if rarely(draw, 1):
        args[draw(st.one_of(text, st.integers(0, 5)))] = draw(values)
    message: dict[Any, Any] = {"v": draw(st.sampled_from([1] * 12 + [2, "1", None])),
                               "id": draw(st.uuids()).hex, "op": name, "args": args}
    if rarely(draw, 1):
        message["after"] = draw(values)
    return message


def encodings(message: dict[str, Any]) -> Iterator[tuple[str, list[bytes]]]:
    """The message as msgpack and as JSON, each under its own id, where it can be written."""
    try:
        yield message["id"], [msgpack.packb(message, datetime=False)]
    except (TypeError, ValueError, OverflowError):
        pass  # not representable in msgpack (an integer beyond 64 bits)
    as_json = {**message, "id": message["id"] + "-json"}
    try:  # NaN and Infinity go as JSON's unofficial tokens, which a peer may send
        yield as_json["id"], [protocol.CONTENT_JSON, json.dumps(as_json).encode()]
    except (TypeError, ValueError):
        pass  # bytes, extension types, non-string keys: not JSON


@FUZZ
@given(message=requests())
def test_fuzz_every_op_gets_a_typed_reply_never_internal(peer: Peer, message: dict) -> None:
    for rid, frames in encodings(message):
        peer.send(frames)
        reply = peer.reply(rid)
        assert reply is not None, f"no reply to {frames!r}"
        outcome = "ok" if reply["ok"] else reply["error"]["code"]
        key = f"{message['op'] if message['op'] in ops.OPS else '?'}:{outcome}"
        OUTCOMES[key] = OUTCOMES.get(key, 0) + 1
        assert outcome != "internal", (frames, reply)


@FUZZ
@given(data=st.binary(max_size=300), flips=st.lists(st.integers(0, 10_000), max_size=4))
def test_fuzz_the_decoder_never_breaks_the_daemon(peer: Peer, data: bytes,
                                                  flips: list[int]) -> None:
    base = bytearray(protocol.pack(add_request("flip", "The heron pump runs hot.")) + data)
    for at in flips:  # damage a valid request, and append noise
        base[at % len(base)] ^= 0xFF
    for frames in ([bytes(base)], [protocol.CONTENT_JSON, bytes(base)], [data]):
        peer.send(frames)
        rid = protocol.peek_id(frames)
        if rid is not None:  # a request that names an id gets an answer to it
            reply = peer.reply(rid)
            assert reply is not None, f"no reply to {frames!r}"
            assert reply["ok"] or reply["error"]["code"] != "internal", reply
    peer.drain()


def test_after_the_fuzz_the_daemon_still_answers(live: Path, peer: Peer) -> None:
    print("fuzz outcomes:", dict(sorted(OUTCOMES.items())))
    assert peer.ping()
    with Memory(project=live) as m:
        assert m.status()["pid"]


def test_the_reply_to_shutdown_reaches_a_client_a_moment_slow_to_read(project: Path) -> None:
    """A DEALER with ZMQ_IMMEDIATE (as ``Connection`` sets it) drops an unread reply when the
    connection closes: the daemon must not close the moment it has answered ``shutdown``."""
    import time

    start_daemon(project)
    try:
        ctx = zmq.Context()
        sock = ctx.socket(zmq.DEALER)
        sock.setsockopt(zmq.LINGER, 0)
        sock.setsockopt(zmq.IMMEDIATE, 1)
        sock.connect(paths.endpoint(project))
        try:
            assert sock.poll(5000, zmq.POLLOUT)
            sock.send(protocol.pack(protocol.request("shutdown", {}, "bye")))
            time.sleep(0.05)  # busy elsewhere for a moment, as a loaded machine makes it
            assert sock.poll(int(REPLY_S * 1000)), "the reply to shutdown was lost"
            assert protocol.unpack(sock.recv())["result"] == {"stopping": True}
        finally:
            sock.close(0)
            ctx.term()
    finally:
        stop_daemon(project)
