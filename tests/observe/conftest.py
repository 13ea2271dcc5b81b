"""The bot's log output, captured in JSON for one test."""

from __future__ import annotations

import io
import logging
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager

import pytest

from bot.observe.logs import LogFormat, configure_logging

CaptureLogs = Callable[..., AbstractContextManager[io.StringIO]]


@pytest.fixture
def captured_logs() -> CaptureLogs:
    """``with captured_logs("json", logging.DEBUG) as stream:`` — the root logger's lines, as the bot writes them."""

    @contextmanager
    def capture(log_format: LogFormat = "json", level: int = logging.INFO) -> Iterator[io.StringIO]:
        handler = configure_logging(log_format, level)
        stream = io.StringIO()
        handler.setStream(stream)  # type: ignore[attr-defined]
        try:
            yield stream
        finally:
            logging.getLogger().removeHandler(handler)
            logging.getLogger().setLevel(logging.WARNING)

    return capture
