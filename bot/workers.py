"""A bounded pool for diagnoses, with one run per cluster shared by everyone asking at once.

Two people typing ``/raydiag gpu-prod`` during the same incident get the same diagnosis from one
collection, not two loads on a struggling API server. When every worker is busy and the queue is
full the caller hears "busy" at once instead of a Slack timeout; a run that has to wait for a
worker says how many runs are ahead of it, so a slow answer is never a silent one.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Generic, TypeVar

from bot.observe.logs import ContextExecutor

T = TypeVar("T")


class Busy(Exception):
    """Every worker is busy and the queue is full."""


@dataclass(frozen=True)
class Submitted(Generic[T]):
    future: Future[T]
    started: bool  # False: joined a run already under way for the same key
    ahead: int  # runs that must finish before a worker takes this one (0: it starts at once)


class SharedRuns(Generic[T]):
    def __init__(self, workers: int, queue: int) -> None:
        self._workers = workers
        # Runs keep the request id of whoever started them, for their log lines.
        self._pool = ContextExecutor(max_workers=workers, thread_name_prefix="raydiag-diagnosis")
        self._capacity = threading.BoundedSemaphore(workers + queue)
        self._lock = threading.Lock()
        self._running: dict[Hashable, Future[T]] = {}

    def submit(self, key: Hashable, work: Callable[[], T]) -> Submitted[T]:
        """The run for ``key``: started now (perhaps queued behind others), or joined if one is under way."""
        with self._lock:
            running = self._running.get(key)
            if running is not None:
                return Submitted(running, started=False, ahead=0)
            if not self._capacity.acquire(blocking=False):
                raise Busy
            ahead = max(0, len(self._running) - self._workers + 1)
            future = self._pool.submit(work)
            self._running[key] = future
        future.add_done_callback(lambda _: self._finish(key))
        return Submitted(future, started=True, ahead=ahead)

    def _finish(self, key: Hashable) -> None:
        with self._lock:
            self._running.pop(key, None)
        self._capacity.release()

    def in_flight(self) -> int:
        with self._lock:
            return len(self._running)

    def shutdown(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
