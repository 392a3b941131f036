"""Loopback fakes of the model APIs that real agent clients speak, for the real-client tests.

One standard-library HTTP server per test, on 127.0.0.1, answering the wire format the client
speaks (``WIRES``): Anthropic Messages (Claude Code), Gemini ``generateContent`` and
``streamGenerateContent`` (Gemini CLI), OpenAI Responses (Codex) and OpenAI Chat Completions
(OpenCode, OpenClaw, Copilot CLI's own providers). Each streams where the client asks for a
stream, with the events the real API sends.

What the model answers is scripted per turn (``Script``): a turn is picked by a word of the
person's prompt, and its replies are steps: the first answers the prompt, the next answers once
the client sent the first tool call's result back, and so on (``Script.pick``). A reply is text or a tool call.
Requests no turn claims (titles, summaries, routing) get a short plain answer. Every request
is logged (``requests``) with its parsed body, so a test asserts what the model was given.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Final
from urllib.parse import urlsplit

DEFAULT_TEXT: Final = "OK."


@dataclass(frozen=True)
class Reply:
    """One model answer: ``text``, or a call of ``tool`` with ``args`` (then ``text`` may
    precede the call). ``namespace``: the tool's group, where the wire has them (Responses:
    Codex offers each MCP server's tools as one namespace)."""

    text: str = ""
    tool: str | None = None
    args: Mapping[str, Any] = field(default_factory=dict)
    namespace: str | None = None


def say(text: str) -> Reply:
    return Reply(text=text)


def call(tool: str, namespace: str | None = None, **args: Any) -> Reply:
    return Reply(tool=tool, args=args, namespace=namespace)


@dataclass(frozen=True)
class Turn:
    """The replies for a prompt holding ``match``: step n answers after n tool results."""

    match: str
    steps: tuple[Reply, ...]


@dataclass
class Script:
    turns: list[Turn] = field(default_factory=list)

    def on(self, match: str, *steps: Reply) -> Script:
        self.turns.append(Turn(match, steps))
        return self

    def pick(self, items: Items) -> tuple[Turn, str, int] | None:
        """The turn this request continues: the last scripted turn whose word a user message
        holds (a later turn's prompt may carry an earlier one's words, as recalled memories,
        never the other way round); that message, and the tool results sent after it."""
        for turn in reversed(self.turns):
            hits = [i for i, item in enumerate(items) if item is not None and turn.match in item]
            if hits:
                last = hits[-1]
                return turn, str(items[last]), sum(1 for item in items[last:] if item is None)
        return None


@dataclass
class Request:
    """One request the fake received: its path and body (parsed JSON, or {})."""

    method: str
    path: str
    body: dict[str, Any]
    prompt: str = ""  # the user message that holds the answering turn's word
    tool_results: int = 0  # tool results sent after it
    answered: str = ""  # which turn answered it ("" for the default reply)

    @property
    def text(self) -> str:
        """The whole body as text: what the model was given, to search in."""
        return json.dumps(self.body, ensure_ascii=False)


# -- reading a request: what the client sent, in order ----------------------------------------
# Each reader gives the conversation as items: a user message's text, or None for a tool result.
Items = list["str | None"]


def _texts(content: Any, kinds: tuple[str, ...] = ("text", "input_text")) -> list[str]:
    if isinstance(content, str):
        return [content]
    out = []
    for part in content if isinstance(content, list) else []:
        if isinstance(part, dict) and isinstance(part.get("text"), str) \
                and part.get("type", "text") in kinds:
            out.append(part["text"])
    return out


def anthropic_items(body: dict[str, Any]) -> Items:
    items: Items = []
    for message in body.get("messages") or []:
        if message.get("role") != "user":
            continue
        content = message.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        items += [None for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
        texts = _texts(content)
        if texts:
            items.append("\n".join(texts))
    return items


def gemini_items(body: dict[str, Any]) -> Items:
    items: Items = []
    for content in body.get("contents") or []:
        if content.get("role", "user") != "user":
            continue
        parts = [p for p in content.get("parts") or [] if isinstance(p, dict)]
        items += [None for p in parts if "functionResponse" in p]
        texts = [p["text"] for p in parts if isinstance(p.get("text"), str)]
        if texts:
            items.append("\n".join(texts))
    return items


def responses_items(body: dict[str, Any]) -> Items:
    raw = body.get("input")
    if isinstance(raw, str):
        return [raw]
    items: Items = []
    for item in raw if isinstance(raw, list) else []:
        if not isinstance(item, dict):
            continue
        if str(item.get("type", "")).endswith("_output"):
            items.append(None)
        elif item.get("role") == "user" and item.get("type", "message") == "message":
            texts = _texts(item.get("content"))
            if texts:
                items.append("\n".join(texts))
    return items


def chat_items(body: dict[str, Any]) -> Items:
    items: Items = []
    for message in body.get("messages") or []:
        if message.get("role") == "tool":
            items.append(None)
        elif message.get("role") == "user":
            texts = _texts(message.get("content"))
            if texts:
                items.append("\n".join(texts))
    return items


# -- writing a reply in each wire format --------------------------------------------------------
def _id(prefix: str) -> str:
    return f"{prefix}{uuid.uuid4().hex[:24]}"


def anthropic_events(reply: Reply, model: str) -> Iterator[tuple[str, dict[str, Any]]]:
    usage = {"input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 0,
             "cache_read_input_tokens": 0}
    yield "message_start", {"type": "message_start", "message": {
        "id": _id("msg_"), "type": "message", "role": "assistant", "model": model,
        "content": [], "stop_reason": None, "stop_sequence": None, "usage": usage}}
    index = 0
    if reply.text:
        yield "content_block_start", {"type": "content_block_start", "index": index,
                                      "content_block": {"type": "text", "text": ""}}
        yield "content_block_delta", {"type": "content_block_delta", "index": index,
                                      "delta": {"type": "text_delta", "text": reply.text}}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
        index += 1
    if reply.tool:
        yield "content_block_start", {"type": "content_block_start", "index": index,
                                      "content_block": {"type": "tool_use", "id": _id("toolu_"),
                                                        "name": reply.tool, "input": {}}}
        yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": {
            "type": "input_json_delta", "partial_json": json.dumps(dict(reply.args))}}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield "message_delta", {"type": "message_delta", "delta": {
        "stop_reason": "tool_use" if reply.tool else "end_turn", "stop_sequence": None},
        "usage": {"output_tokens": 5}}
    yield "message_stop", {"type": "message_stop"}


def anthropic_message(reply: Reply, model: str) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if reply.text:
        content.append({"type": "text", "text": reply.text})
    if reply.tool:
        content.append({"type": "tool_use", "id": _id("toolu_"), "name": reply.tool,
                        "input": dict(reply.args)})
    return {"id": _id("msg_"), "type": "message", "role": "assistant", "model": model,
            "content": content, "stop_reason": "tool_use" if reply.tool else "end_turn",
            "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 5}}


def gemini_response(reply: Reply, model: str) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    if reply.text:
        parts.append({"text": reply.text})
    if reply.tool:
        parts.append({"functionCall": {"name": reply.tool, "args": dict(reply.args)}})
    return {"candidates": [{"content": {"role": "model", "parts": parts},
                            "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5,
                              "totalTokenCount": 15},
            "modelVersion": model, "responseId": _id("")}


def responses_events(reply: Reply, model: str) -> Iterator[tuple[str, dict[str, Any]]]:
    rid = _id("resp_")
    base = {"id": rid, "object": "response", "created_at": int(time.time()), "model": model,
            "status": "in_progress", "output": []}
    yield "response.created", {"type": "response.created", "response": base}
    output: list[dict[str, Any]] = []
    if reply.text:
        item = {"type": "message", "id": _id("msg_"), "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": reply.text, "annotations": []}]}
        index = len(output)
        yield "response.output_item.added", {"type": "response.output_item.added",
                                             "output_index": index,
                                             "item": {**item, "content": [],
                                                      "status": "in_progress"}}
        yield "response.output_text.delta", {"type": "response.output_text.delta",
                                             "item_id": item["id"], "output_index": index,
                                             "content_index": 0, "delta": reply.text}
        yield "response.output_item.done", {"type": "response.output_item.done",
                                            "output_index": index, "item": item}
        output.append(item)
    if reply.tool:
        item = {"type": "function_call", "id": _id("fc_"), "call_id": _id("call_"),
                "name": reply.tool, "arguments": json.dumps(dict(reply.args)),
                "status": "completed"}
        if reply.namespace:
            item["namespace"] = reply.namespace
        yield "response.output_item.added", {"type": "response.output_item.added",
                                             "output_index": len(output), "item": item}
        yield "response.output_item.done", {"type": "response.output_item.done",
                                            "output_index": len(output), "item": item}
        output.append(item)
    done = {**base, "status": "completed", "output": output,
            "usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15,
                      "input_tokens_details": {"cached_tokens": 0},
                      "output_tokens_details": {"reasoning_tokens": 0}}}
    yield "response.completed", {"type": "response.completed", "response": done}


def chat_chunks(reply: Reply, model: str) -> Iterator[dict[str, Any]]:
    cid = _id("chatcmpl-")
    head = {"id": cid, "object": "chat.completion.chunk", "created": int(time.time()),
            "model": model}
    yield {**head, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""},
                                "finish_reason": None}]}
    if reply.text:
        yield {**head, "choices": [{"index": 0, "delta": {"content": reply.text},
                                    "finish_reason": None}]}
    if reply.tool:
        yield {**head, "choices": [{"index": 0, "delta": {"tool_calls": [{
            "index": 0, "id": _id("call_"), "type": "function",
            "function": {"name": reply.tool, "arguments": json.dumps(dict(reply.args))}}]},
            "finish_reason": None}]}
    yield {**head, "choices": [{"index": 0, "delta": {},
                                "finish_reason": "tool_calls" if reply.tool else "stop"}],
           "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}


def chat_completion(reply: Reply, model: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if reply.tool:
        message["tool_calls"] = [{"id": _id("call_"), "type": "function", "function": {
            "name": reply.tool, "arguments": json.dumps(dict(reply.args))}}]
    return {"id": _id("chatcmpl-"), "object": "chat.completion", "created": int(time.time()),
            "model": model, "choices": [{"index": 0, "message": message,
                                         "finish_reason": "tool_calls" if reply.tool
                                         else "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}


# -- the server ---------------------------------------------------------------------------------
ItemReader = Callable[[dict[str, Any]], Items]
WIRES: Final[dict[str, ItemReader]] = {
    "anthropic": anthropic_items,
    "gemini": gemini_items,
    "responses": responses_items,
    "chat": chat_items,
}


class FakeModel:
    """A loopback server speaking ``wire``; ``url`` is its base address. Use as a context
    manager, or ``start``/``stop``."""

    def __init__(self, wire: str, script: Script | None = None, model: str = "fake-model"):
        if wire not in WIRES:
            raise ValueError(f"unknown wire {wire!r}; known: {', '.join(WIRES)}")
        self.wire = wire
        self.script = script or Script()
        self.model = model
        self.requests: list[Request] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        name="fake-model", daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> FakeModel:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(10)

    def __enter__(self) -> FakeModel:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- what a test reads --------------------------------------------------------------------
    def turns(self, match: str | None = None) -> list[Request]:
        """The requests a scripted turn answered (the turn of ``match``, if given)."""
        with self._lock:
            return [r for r in self.requests if r.answered
                    and (match is None or r.answered == match)]

    def log(self) -> str:
        """Every request, one a line: for a failing test's message."""
        with self._lock:
            return "\n".join(f"{r.method} {r.path} answered={r.answered!r} "
                             f"prompt={r.prompt[:160]!r}" for r in self.requests)

    # -- serving ------------------------------------------------------------------------------
    def _record(self, method: str, path: str, body: dict[str, Any]) -> tuple[Request, Reply]:
        picked = self.script.pick(WIRES[self.wire](body)) if body else None
        if picked is None:
            req = Request(method, path, body)
            reply = None
        else:
            turn, prompt, results = picked
            req = Request(method, path, body, prompt, results, turn.match)
            reply = turn.steps[min(results, len(turn.steps) - 1)]
        with self._lock:
            self.requests.append(req)
        return req, reply or Reply(text=DEFAULT_TEXT)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

            def do_GET(self) -> None:  # noqa: N802
                fake._record("GET", self.path, {})
                path = urlsplit(self.path).path
                if path.endswith("/models"):
                    self._json({"object": "list", "data": [
                        {"id": fake.model, "object": "model", "created": 0,
                         "owned_by": "fake", "type": "model", "display_name": fake.model}],
                        "models": [{"name": f"models/{fake.model}"}]})
                else:
                    self._json({})

            def do_HEAD(self) -> None:  # noqa: N802
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else {}
                except ValueError:
                    body = {}
                if not isinstance(body, dict):
                    body = {}
                path = urlsplit(self.path).path
                if path.endswith("count_tokens") or path.endswith(":countTokens"):
                    fake._record("POST", self.path, {})
                    self._json({"input_tokens": 10, "totalTokens": 10})
                    return
                _req, reply = fake._record("POST", self.path, body)
                model = str(body.get("model") or fake.model)
                stream = bool(body.get("stream")) or "alt=sse" in self.path \
                    or ":streamGenerateContent" in path
                if fake.wire == "anthropic":
                    if stream:
                        self._sse((f"event: {name}\ndata: {json.dumps(data)}\n\n"
                                   for name, data in anthropic_events(reply, model)))
                    else:
                        self._json(anthropic_message(reply, model))
                elif fake.wire == "gemini":
                    answer = gemini_response(reply, model)
                    if stream:
                        self._sse([f"data: {json.dumps(answer)}\r\n\r\n"])
                    else:
                        self._json(answer)
                elif fake.wire == "responses":
                    self._sse(f"event: {name}\ndata: {json.dumps(data)}\n\n"
                              for name, data in responses_events(reply, model))
                elif stream:
                    self._sse([*(f"data: {json.dumps(c)}\n\n" for c in chat_chunks(reply, model)),
                               "data: [DONE]\n\n"])
                else:
                    self._json(chat_completion(reply, model))

            def _json(self, data: Any) -> None:
                raw = json.dumps(data).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def _sse(self, chunks: Any) -> None:
                raw = "".join(chunks).encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        return Handler
