"""Structured logs: one JSON object per line (``RAYDIAG_LOG_FORMAT=json``), or readable text.

Every line carries the request id of the Slack interaction it belongs to, so one ``/raydiag``
can be followed from the ack through collection to the post, across the listener and the
diagnosis threads. Messages and tracebacks pass through the same redaction as snapshots: a token
that reaches an exception message (a URL with credentials, an Authorization header) is masked
before it is written.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import logging
import secrets
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any, Literal, ParamSpec, TypeVar

from bot.snapshot.redact import redact

_REQUEST_ID: contextvars.ContextVar[str | None] = contextvars.ContextVar("raydiag_request_id", default=None)

LogFormat = Literal["json", "text"]


def new_request_id(body: Mapping[str, Any] | None = None) -> str:
    """A short id for one interaction: Slack's own id when it sends one, else a random one."""
    body = body or {}
    for key in ("event_id", "trigger_id"):
        value = body.get(key)
        if isinstance(value, str) and value:
            return value[:64]
    return secrets.token_hex(6)


def current_request_id() -> str | None:
    return _REQUEST_ID.get()


def set_request_id(request_id: str | None) -> None:
    """Tag the rest of this thread's work (and what it submits to a ``ContextExecutor``).

    For Bolt middleware: its ``next()`` only marks the request as passed on, and the listeners run
    after the middleware has returned, so a ``with request_context(...)`` there would end too soon.
    Each request is dispatched from its own thread (or sets its own id first), so nothing leaks.
    """
    _REQUEST_ID.set(request_id)


@contextlib.contextmanager
def request_context(request_id: str | None) -> Iterator[None]:
    """Lines logged inside carry ``request_id`` (thread pools copy nothing: enter this in the worker)."""
    token = _REQUEST_ID.set(request_id)
    try:
        yield
    finally:
        _REQUEST_ID.reset(token)


P = ParamSpec("P")
T = TypeVar("T")


class ContextExecutor(ThreadPoolExecutor):
    """A thread pool whose work runs in a copy of the submitter's context (its request id).

    Bolt hands acks and lazy listeners to an executor, and diagnoses run in another; a plain
    pool starts each task with an empty context, and the request id would be lost on the way.
    """

    def submit(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        context = contextvars.copy_context()
        return super().submit(context.run, fn, *args, **kwargs)  # type: ignore[arg-type]


class _RequestIdFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = _REQUEST_ID.get() or "-"
        return True


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": redact(record.getMessage()),
            "request_id": getattr(record, "request_id", None) or _REQUEST_ID.get(),
        }
        if record.exc_info:
            entry["exception"] = redact(self.formatException(record.exc_info))
        return json.dumps(entry, ensure_ascii=False)


class RedactingFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record))


def configure_logging(log_format: LogFormat = "text", level: int | str = logging.INFO) -> logging.Handler:
    """Route the root logger to stderr in the chosen format; returns the handler it installed."""
    handler = logging.StreamHandler()
    handler.addFilter(_RequestIdFilter())
    if log_format == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(
            RedactingFormatter("%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s")
        )
    root = logging.getLogger()
    for old in [h for h in root.handlers if getattr(h, "_raydiag", False)]:
        root.removeHandler(old)
    handler._raydiag = True  # type: ignore[attr-defined]
    root.addHandler(handler)
    root.setLevel(level)
    return handler
