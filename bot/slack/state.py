"""In-process state the bot keeps between requests: mutes, events already answered, probe locks.

Kept behind small classes so that a durable store (a database shared by replicas) can replace
them without touching the listeners.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable


class Mutes:
    """Clusters muted until a time: no unasked posts about them (a direct /raydiag still answers)."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._until: dict[str, float] = {}
        self._lock = threading.Lock()
        self._clock = clock

    def mute(self, cluster: str, seconds: float) -> float:
        until = self._clock() + seconds
        with self._lock:
            self._until[cluster] = until
        return until

    def muted(self, cluster: str) -> bool:
        with self._lock:
            until = self._until.get(cluster)
            if until is None:
                return False
            if until <= self._clock():
                del self._until[cluster]
                return False
            return True


class SeenOnce:
    """Remembers keys (Slack event ids) for a while; the first ``first()`` call for a key wins."""

    def __init__(
        self, ttl_s: float = 3600.0, limit: int = 50_000, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._seen: OrderedDict[str, float] = OrderedDict()
        self._lock = threading.Lock()
        self._ttl = ttl_s
        self._limit = limit
        self._clock = clock

    def first(self, key: str) -> bool:
        now = self._clock()
        with self._lock:
            while self._seen and (
                len(self._seen) > self._limit or next(iter(self._seen.values())) < now - self._ttl
            ):
                self._seen.popitem(last=False)
            if key in self._seen:
                return False
            self._seen[key] = now
            return True


class ClusterLocks:
    """At most one probe at a time per cluster; a second press is told so, not queued."""

    def __init__(self) -> None:
        self._busy: set[str] = set()
        self._lock = threading.Lock()

    def try_acquire(self, cluster: str) -> bool:
        with self._lock:
            if cluster in self._busy:
                return False
            self._busy.add(cluster)
            return True

    def release(self, cluster: str) -> None:
        with self._lock:
            self._busy.discard(cluster)
