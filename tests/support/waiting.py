"""Waiting for something another thread or process does, with a bound instead of a fixed sleep."""

from __future__ import annotations

import time
from collections.abc import Callable


def eventually(condition: Callable[[], bool], timeout_s: float = 20.0, poll_s: float = 0.05) -> bool:
    """True as soon as ``condition()`` holds; after ``timeout_s`` its last answer."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(poll_s)
    return condition()
