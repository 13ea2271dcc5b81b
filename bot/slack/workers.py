"""A bounded pool for diagnoses, with one run per cluster shared by everyone asking at once.

Two people typing ``/raydiag gpu-prod`` during the same incident get the same diagnosis from one
collection, not two loads on a struggling API server. When every worker is busy and the queue is
full the caller hears "busy" at once instead of a Slack timeout.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from concurrent.futures import Future
from typing import Generic, TypeVar

from bot.observe.logs import ContextExecutor

T = TypeVar("T")


class Busy(Exception):
    """Every worker is busy and the queue is full."""


class SharedRuns(Generic[T]):
    def __init__(self, workers: int, queue: int) -> None:
        # Runs keep the request id of whoever started them, for their log lines.
        self._pool = ContextExecutor(max_workers=workers, thread_name_prefix="raydiag-diagnosis")
        self._capacity = threading.BoundedSemaphore(workers + queue)
        self._lock = threading.Lock()
        self._running: dict[Hashable, Future[T]] = {}

    def submit(self, key: Hashable, work: Callable[[], T]) -> tuple[Future[T], bool]:
        """The future of the run for ``key``, and whether this call started it (False: joined)."""
        with self._lock:
            running = self._running.get(key)
            if running is not None:
                return running, False
            if not self._capacity.acquire(blocking=False):
                raise Busy
            future = self._pool.submit(work)
            self._running[key] = future
        future.add_done_callback(lambda _: self._finish(key))
        return future, True

    def _finish(self, key: Hashable) -> None:
        with self._lock:
            self._running.pop(key, None)
        self._capacity.release()

    def in_flight(self) -> int:
        with self._lock:
            return len(self._running)

    def shutdown(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
