"""The OpenAPI 3.1 document of the HTTP API, made from the route table (and so from the op
declarations): what is served is what is described."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Final

from lintaid_client import ops

from .routes import FACE, MESSAGES, Route, Table

PATH: Final = "/openapi.json"
ERROR_CODES: Final = ("bad_request", "too_large", "not_found", "forbidden", "unknown_op",
                      "unavailable", "internal", "unauthorized", "misdirected", "busy",
                      "conflict", "unsupported_media_type", "method_not_allowed")
STATUSES: Final = {
    "400": "Bad input: the message names the argument (nothing was stored)",
    "401": "No bearer token, or not this project's",
    "403": "A request from a web page of another origin",
    "404": "No such route, or no such memory for this user",
    "409": "The Idempotency-Key's first request is still running",
    "413": "The body is larger than the limit",
    "415": "The body is not application/json",
    "421": "The Host header is not this server's loopback address",
    "422": "The Idempotency-Key was used for another request",
    "429": "The daemon is busy: retry after the Retry-After seconds (nothing was stored)",
    "503": "The daemon is stopping or its disk refuses writes (retryable)",
}


def _error() -> dict[str, Any]:
    return {"type": "object", "required": ["error"], "properties": {"error": {
        "type": "object", "required": ["code", "message"], "properties": {
            "code": {"type": "string", "enum": list(ERROR_CODES)},
            "message": {"type": "string"},
            "arg": {"type": ["string", "null"], "description": "the argument at fault"},
            "retryable": {"type": "boolean"}}}}}


def _schema(arg: ops.Arg, note: str | None = None) -> dict[str, Any]:
    """An argument's schema; one the face fills defaults to this face's name."""
    return ops.arg_schema(replace(arg, default=FACE) if arg.face else arg, note)


def _object(args: tuple[ops.Arg, ...], skip: set[str], spec: ops.Op) -> dict[str, Any]:
    notes: dict[str, str] = {}
    for group in spec.one_of:
        for name in group:
            notes[name] = f"give exactly one of {' or '.join(group)}"
    props = {a.name: _schema(a, notes.get(a.name)) for a in args if a.name not in skip}
    if MESSAGES in args:  # a text, one message or a list of them
        props[MESSAGES.name]["type"] = ["string", "object", "array"]
    required = [a.name for a in args if a.required and a.name not in skip]
    out: dict[str, Any] = {"type": "object", "properties": props,
                           "additionalProperties": False}
    if required:
        out["required"] = required
    return out


def _operation(route: Route) -> dict[str, Any]:
    spec = route.spec
    in_path = set(route.params)
    operation: dict[str, Any] = {
        "operationId": (f"{route.op}_{route.method.lower()}" if route.tag == "ops"
                        else f"mem0_{route.method.lower()}_{route.path.strip('/')}"
                        .replace("/", "_").replace("{", "").replace("}", "")),
        "summary": route.summary.split(". ")[0][:120],
        "description": route.summary,
        "tags": [route.tag],
        "parameters": [{"name": name, "in": "path", "required": True,
                        "schema": {"type": "string"}} for name in route.params],
    }
    if route.body:
        operation["requestBody"] = {"required": True, "content": {"application/json": {
            "schema": _object(route.takes, in_path, spec)}}}
        if spec.kind == ops.WRITE:
            operation["parameters"].append(
                {"name": "Idempotency-Key", "in": "header", "required": False,
                 "description": "a request id: the same change sent again with it is "
                                "answered as the first time, not made twice",
                 "schema": {"type": "string", "maxLength": 200}})
    else:
        operation["parameters"] += [
            {"name": a.name, "in": "query", "required": a.required,
             "schema": _schema(a)} for a in route.takes
            if a.name not in in_path and a.type not in (ops.MAP, ops.LIST)]
    errors = {code: {"description": text, "content": {"application/json": {
        "schema": {"$ref": "#/components/schemas/Error"}}}} for code, text in STATUSES.items()}
    operation["responses"] = {"200": {"description": "the op's result", "content": {
        "application/json": {"schema": {}}}}, **errors}
    return operation


def document(table: Table, version: str) -> dict[str, Any]:
    paths: dict[str, dict[str, Any]] = {
        "/health": {"get": {"operationId": "health", "summary": "Whether the daemon answers",
                            "tags": ["daemon"],
                            "responses": {"200": {"description": "{status, version}"}}}},
        PATH: {"get": {"operationId": "openapi", "summary": "This document",
                       "tags": ["daemon"], "responses": {"200": {"description": "OpenAPI"}}}},
    }
    for route in table.routes:
        paths.setdefault(route.path, {})[route.method.lower()] = _operation(route)
    return {
        "openapi": "3.1.0",
        "info": {"title": "lintaid", "version": version,
                 "description": "A project's memory over HTTP on the loopback address. Every "
                                "request carries the project's bearer token (the file "
                                ".lint-ai/http-token)."},
        "servers": [{"url": "/"}],
        "security": [{"bearer": []}],
        "paths": paths,
        "components": {"securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
                       "schemas": {"Error": _error()}},
    }
