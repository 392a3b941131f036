"""Chaining futures without blocking a thread: the reply to a request is sent when its future
resolves, so a handler that waits on the writer returns a future instead of waiting."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

T = TypeVar("T")
U = TypeVar("U")


def resolved(value: T) -> Future[T]:
    future: Future[T] = Future()
    future.set_result(value)
    return future


def then(future: Future[T], fn: Callable[[T], U]) -> Future[U]:
    """A future of ``fn(result)``; it fails with the first future's error, or ``fn``'s.
    Attributes the first future carries (a write's ``token``) are carried over."""
    out: Future[U] = Future()

    def done(f: Future[T]) -> None:
        token = getattr(f, "token", None)
        if token is not None:
            out.token = token  # type: ignore[attr-defined]
        err = f.exception()
        if err is not None:
            out.set_exception(err)
            return
        try:
            out.set_result(fn(f.result()))
        except Exception as exc:
            out.set_exception(exc)

    future.add_done_callback(done)
    return out


def settle(value: Any, on_done: Callable[[Any, BaseException | None, str | None], None]) -> None:
    """Call ``on_done(result, error, token)`` once ``value`` is final: a plain value at once,
    a future (possibly of further futures) when its last link resolves."""
    if not isinstance(value, Future):
        on_done(value, None, None)
        return

    def done(f: Future[Any]) -> None:
        err = f.exception()
        if err is not None:
            on_done(None, err, getattr(f, "token", None))
            return
        result = f.result()
        if isinstance(result, Future):
            settle(result, on_done)
        else:
            on_done(result, None, getattr(f, "token", None))

    value.add_done_callback(done)
