"""Progress lines on stderr, only for steps that take longer than a second.

A quick diagnosis prints nothing but its result; a slow one says which layer it is reading, so a
user on a struggling cluster knows what raydiag is waiting for. stdout carries only the result.
"""

from __future__ import annotations

import sys
import threading
from types import TracebackType
from typing import TextIO

QUIET_FOR_S = 1.0


class StderrProgress:
    def __init__(self, stream: TextIO | None = None, quiet_for: float = QUIET_FOR_S) -> None:
        self._stream = stream or sys.stderr
        self._quiet_for = quiet_for
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        self._current = ""

    def __call__(self, message: str) -> None:
        with self._lock:
            self._cancel()
            self._current = message
            self._timer = threading.Timer(self._quiet_for, self._show, args=(message,))
            self._timer.daemon = True
            self._timer.start()

    def _show(self, message: str) -> None:
        with self._lock:
            if message == self._current:
                print(f"raydiag: {message}…", file=self._stream, flush=True)

    def _cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def __enter__(self) -> StderrProgress:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        with self._lock:
            self._cancel()
            self._current = ""
