"""State the bot keeps between requests: mutes, events already answered, alerts answered, probe locks.

Mutes and answered events live in the state store (``StoredMutes``, ``StoredSeenOnce``) so that
they survive restarts and are shared by replicas: a Mute pressed on one replica silences scheduled
posts run by another, and a Slack retry that reaches a second replica is still answered once. The
in-process ``Mutes`` and ``SeenOnce`` stand in when there is no store (the CLI, tests, or a bot whose
database could not be opened), with the same methods. Probe locks stay in-process: a probe is a
running thread, and a lock outliving its process would block the cluster until someone cleared it.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

from bot.store import PostState, Store, StoreError

LOG = logging.getLogger(__name__)
EVENT_MEMORY_S = 3600.0


class MuteList(Protocol):
    def mute(self, cluster: str, seconds: float, by: str = "") -> object: ...

    def muted(self, cluster: str) -> bool: ...


class AnsweredOnce(Protocol):
    def first(self, key: str) -> bool: ...


class Mutes:
    """Clusters muted until a time: no unasked posts about them (a direct /raydiag still answers)."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._until: dict[str, float] = {}
        self._lock = threading.Lock()
        self._clock = clock

    def mute(self, cluster: str, seconds: float, by: str = "") -> float:
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
        self, ttl_s: float = EVENT_MEMORY_S, limit: int = 50_000, clock: Callable[[], float] = time.monotonic
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


class StoredMutes:
    """Mutes in the state store, by cluster, shared by every replica; ``by`` is who pressed Mute."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def mute(self, cluster: str, seconds: float, by: str = "") -> datetime:
        until = self._store.clock() + timedelta(seconds=seconds)
        self._store.mute(cluster, until, by)
        return until

    def muted(self, cluster: str) -> bool:
        try:
            return self._store.muted_until(cluster, self._store.clock()) is not None
        except StoreError as error:
            # Better one unwanted post than a bot that never speaks while its database is away.
            LOG.warning("cannot read mutes, treating %s as not muted: %s", cluster, error)
            return False


class StoredSeenOnce:
    """Keys (Slack event ids) remembered in the state store; the first ``first()`` on any replica wins."""

    def __init__(self, store: Store, ttl_s: float = EVENT_MEMORY_S) -> None:
        self._store = store
        self._ttl = timedelta(seconds=ttl_s)

    def first(self, key: str) -> bool:
        try:
            return self._store.first_seen(key, self._store.clock(), self._ttl)
        except StoreError as error:
            # Answering a retried event twice is better than answering no event at all.
            LOG.warning("cannot record event %s, answering it: %s", key, error)
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


# --- alerts answered ----------------------------------------------------------------------------


@dataclass(frozen=True)
class AlertAnswer:
    """What raydiag last said about one alert in one channel: the findings' keys and the thread.

    ``thread_ts`` None means nothing stands: never answered, or answered and then resolved.
    """

    findings: frozenset[str]
    thread_ts: str | None


class AlertAnswers(Protocol):
    def last(self, channel: str, alert: str) -> AlertAnswer | None: ...

    def remember(self, channel: str, alert: str, answer: AlertAnswer) -> None: ...


def alert_state_id(channel: str, alert: str) -> str:
    """A key of the store's post-state table (32 characters) for one alert in one channel."""
    digest = hashlib.sha256(f"{channel}\0{alert}".encode()).hexdigest()
    return f"alert:{digest[:26]}"


class MemoryAlertAnswers:
    """Alerts answered, in this process only (no store): the newest 10,000 are kept."""

    def __init__(self, limit: int = 10_000) -> None:
        self._answers: OrderedDict[str, AlertAnswer] = OrderedDict()
        self._lock = threading.Lock()
        self._limit = limit

    def last(self, channel: str, alert: str) -> AlertAnswer | None:
        with self._lock:
            return self._answers.get(alert_state_id(channel, alert))

    def remember(self, channel: str, alert: str, answer: AlertAnswer) -> None:
        key = alert_state_id(channel, alert)
        with self._lock:
            self._answers[key] = answer
            self._answers.move_to_end(key)
            while len(self._answers) > self._limit:
                self._answers.popitem(last=False)


class StoredAlertAnswers:
    """Alerts answered, in the state store's post-state table, so replicas and restarts agree."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def last(self, channel: str, alert: str) -> AlertAnswer | None:
        try:
            state = self._store.post_state(alert_state_id(channel, alert))
        except StoreError as error:
            # A repeated diagnosis is better than none while the database is away.
            LOG.warning("cannot read what was said about an alert, answering it: %s", error)
            return None
        if state is None:
            return None
        return AlertAnswer(state.posted_keys, state.message_ts if state.channel else None)

    def remember(self, channel: str, alert: str, answer: AlertAnswer) -> None:
        now = self._store.clock()
        state = PostState(
            schedule_id=alert_state_id(channel, alert),
            posted_keys=answer.findings,
            channel=channel if answer.thread_ts else None,
            message_ts=answer.thread_ts,
            posted_at=now,
            observed_at=now,
        )
        try:
            self._store.save_post_state(state, now)
        except StoreError as error:
            LOG.warning("cannot record the answer to an alert: %s", error)
