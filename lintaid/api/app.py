"""One HTTP API request: route, read its fields, check them, hold back under load, run the op,
answer JSON.

The viewer's server has already checked Host, the bearer token and the origin, and read the
body within its limit. Bad input is answered before anything runs: 400 naming the argument
(a JSON body of the wrong type, a field the op does not take, a value out of range), 415 for
a body that is not JSON. Under load the answer is 429 with ``Retry-After``, never a wait:
when ``max_in_flight`` requests run already, or when a change finds the writer's queue
``max_queued`` deep. A change with an ``Idempotency-Key`` is made once (``replay``).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from typing import Any, Final, Protocol
from urllib.parse import parse_qsl, unquote

from lintaid.logs import get_logger
from lintaid_client import ops, protocol
from lintaid_client.models import json_default

from ..ops import Services, error_code
from ..viewer.calls import OpCaller
from ..viewer.routes import Response
from . import openapi
from .replay import MAX_KEY_BYTES, Answer, Replays
from .routes import FACE, Route, Table, gather

log = get_logger("lintaid.api")

ACTOR: Final = FACE
MAX_IN_FLIGHT: Final = 16
MAX_QUEUED: Final = 1000
RETRY_AFTER_S: Final = 1
JSON: Final = "application/json"
STATUS: Final = {protocol.BAD_REQUEST: 400, protocol.TOO_LARGE: 413, protocol.NOT_FOUND: 404,
                 protocol.FORBIDDEN: 403, protocol.UNKNOWN_OP: 404,
                 protocol.UNSUPPORTED_VERSION: 400, protocol.UNAVAILABLE: 503,
                 protocol.INTERNAL: 500}
"""The protocol's error codes as HTTP statuses; the body keeps the code itself."""


class Headers(Protocol):
    def get(self, name: str, /) -> str | None: ...


def error(status: int, code: str, message: str, *, arg: str | None = None,
          headers: Mapping[str, str] | None = None) -> Response:
    body = {"error": {"code": code, "message": message, "arg": arg,
                      "retryable": status in (429, 503) or code in protocol.RETRYABLE}}
    return Response(status=status, body=_dump(body), content_type=JSON,
                    headers=dict(headers or {}))


def _dump(value: Any) -> bytes:
    return json.dumps(value, default=json_default, ensure_ascii=False,
                      separators=(",", ":")).encode("utf-8")


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


class _Refused(Exception):
    def __init__(self, response: Response) -> None:
        super().__init__(response.status)
        self.response = response


class Api:
    """``queued()``: how many jobs wait for the writer (its back-pressure)."""

    def __init__(self, services: Services, token: str, *, version: str,
                 queued: Callable[[], int], max_in_flight: int = MAX_IN_FLIGHT,
                 max_queued: int = MAX_QUEUED) -> None:
        self.token = token
        self.version = version
        self.queued = queued
        self.max_queued = max_queued
        self.table = Table()
        self.calls = OpCaller(services, actor=ACTOR)
        self.replays = Replays()
        self._slots = threading.BoundedSemaphore(max_in_flight)
        self._openapi: bytes | None = None

    # -- what the server asks --------------------------------------------------------------
    def handle(self, method: str, path: str, query: str, headers: Headers,
               body: bytes) -> Response:
        try:
            return self._handle(method, path, query, headers, body)
        except _Refused as refused:
            return refused.response
        except Exception as err:  # a bug: said, and the daemon keeps serving
            log.error("http_request_failed", path=path[:80], error=str(err), exc_info=err)
            return error(500, protocol.INTERNAL, f"{type(err).__name__}: {err}")

    def refused(self, status: int, reason: str) -> Response:
        """The gate's refusal (421, 401, 403), as this API answers errors."""
        code = {401: "unauthorized", 403: protocol.FORBIDDEN, 413: protocol.TOO_LARGE,
                421: "misdirected"}.get(status, protocol.BAD_REQUEST)
        headers = {"WWW-Authenticate": 'Bearer realm="lintaid"'} if status == 401 else {}
        return error(status, code, reason, headers=headers)

    # -------------------------------------------------------------------------------------
    def _handle(self, method: str, path: str, query: str, headers: Headers,
                body: bytes) -> Response:
        if method == "GET" and path == "/health":
            return Response(body=_dump({"status": "ok", "version": self.version}),
                            content_type=JSON)
        if method == "GET" and path == openapi.PATH:
            if self._openapi is None:
                self._openapi = _dump(openapi.document(self.table, self.version))
            return Response(body=self._openapi, content_type=JSON)
        found = self.table.find(method, path)
        if isinstance(found, list):
            if not found:
                return error(404, protocol.NOT_FOUND, f"no route {path!r}; the routes are "
                             f"listed at {openapi.PATH}")
            allowed = ", ".join(sorted(set(found)))
            return error(405, "method_not_allowed", f"{path} answers {allowed}, not "
                         f"{method}", headers={"Allow": allowed})
        route, path_args = found
        try:
            fields = gather(route, {k: unquote(v) for k, v in path_args.items()},
                            self._query(query), self._body(route, headers, body))
            shaped = route.shape(fields)  # a board post names 'http' its client (ops.stamp)
            checked = self.calls.check(route.op, shaped)
        except protocol.RemoteError as err:
            return self._failed(err)
        key = headers.get("Idempotency-Key")
        if key is None or route.spec.kind != ops.WRITE:
            return self._run(route, checked)
        return self._once(route, checked, key,
                          Replays.fingerprint(method, path, query, body))

    def _query(self, query: str) -> list[tuple[str, str]]:
        try:
            return parse_qsl(query, keep_blank_values=True, strict_parsing=False,
                             max_num_fields=200, errors="strict")
        except (ValueError, UnicodeDecodeError) as err:
            raise _Refused(error(400, protocol.BAD_REQUEST,
                                 f"the query string could not be read: {err}")) from None

    def _body(self, route: Route, headers: Headers, body: bytes) -> dict[str, Any] | None:
        if not body:
            return None
        if not route.body:
            raise _Refused(error(400, protocol.BAD_REQUEST,
                                 f"{route.method} {route.path} takes no body: send its "
                                 "arguments in the query string"))
        kind = (headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if kind != JSON:
            raise _Refused(error(415, "unsupported_media_type",
                                 f"the body must be {JSON}, not {kind or 'untyped'}"))
        try:
            value = json.loads(body.decode("utf-8"), parse_constant=_no_constant)
        except UnicodeDecodeError:
            raise _Refused(error(400, protocol.BAD_REQUEST,
                                 "the body is not UTF-8 text")) from None
        except RecursionError:
            raise _Refused(error(400, protocol.BAD_REQUEST,
                                 "the body nests too deep")) from None
        except ValueError as err:
            raise _Refused(error(400, protocol.BAD_REQUEST,
                                 f"the body is not JSON: {err}")) from None
        if not isinstance(value, dict):
            raise _Refused(error(400, protocol.BAD_REQUEST,
                                 "the body must be a JSON object of the op's arguments, "
                                 f"not {type(value).__name__}"))
        return value

    def _once(self, route: Route, checked: dict[str, Any], key: str,
              fingerprint: str) -> Response:
        if not key or len(key.encode("utf-8", "replace")) > MAX_KEY_BYTES:
            return error(400, protocol.BAD_REQUEST,
                         f"an Idempotency-Key holds 1 to {MAX_KEY_BYTES} bytes",
                         arg="Idempotency-Key")
        seen = self.replays.begin(key, fingerprint)
        if isinstance(seen, Answer):
            return Response(status=seen.status, body=seen.body, content_type=JSON,
                            headers={"Idempotent-Replayed": "true"})
        if seen == "running":
            return error(409, "conflict", "the first request with this Idempotency-Key is "
                         "still running; retry once it has answered",
                         headers={"Retry-After": str(RETRY_AFTER_S)})
        if seen == "other":
            return error(422, "conflict", "this Idempotency-Key was used for another "
                         "request (another method, path or body)", arg="Idempotency-Key")
        response = self._run(route, checked)
        if 200 <= response.status < 300:
            self.replays.finish(key, Answer(response.status, response.body))
        else:
            self.replays.abandon(key)
        return response

    def _run(self, route: Route, checked: dict[str, Any]) -> Response:
        if not self._slots.acquire(blocking=False):
            return self._busy("as many requests as it takes at once are running")
        try:
            if route.spec.kind == ops.WRITE and self.queued() >= self.max_queued:
                return self._busy(f"the writer has {self.max_queued} or more changes queued")
            try:
                result = self.calls.run(route.op, checked)
            except protocol.RemoteError as err:
                return self._failed(err)
            return Response(body=_dump(route.reply(result)), content_type=JSON)
        finally:
            self._slots.release()

    @staticmethod
    def _busy(why: str) -> Response:
        return error(429, "busy", f"the daemon is busy ({why}); nothing was done: retry "
                     f"after {RETRY_AFTER_S}s", headers={"Retry-After": str(RETRY_AFTER_S)})

    @staticmethod
    def _failed(err: BaseException) -> Response:
        code, message, arg = error_code(err)
        status = STATUS.get(code, 500)
        headers = {"Retry-After": str(RETRY_AFTER_S)} if status == 503 else None
        return error(status, code, message, arg=arg, headers=headers)
