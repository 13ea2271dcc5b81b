"""Which replica runs the scheduled posts: leader election on a ``coordination.k8s.io`` Lease.

Slack interactions are answered by whichever replica receives them; scheduled health posts must
come from exactly one. Replicas compete for one Lease with the ``kubernetes`` client's own
leader election; the holder renews it every ``retry_period`` seconds, and when it dies the Lease
expires after ``lease_duration`` seconds and another replica takes it. The store's claim on each
scheduled run (one row per schedule and fire time) is the second guard: a leader that lost its
Lease without noticing still cannot post a run the new leader already claimed.
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kubernetes import client as k8s
from kubernetes.leaderelection import electionconfig
from kubernetes.leaderelection.leaderelection import LeaderElection
from kubernetes.leaderelection.resourcelock.leaselock import LeaseLock

LOG = logging.getLogger(__name__)


@dataclass(frozen=True)
class LeaseSettings:
    namespace: str
    name: str = "raydiag-leader"
    lease_duration_s: int = 15
    renew_deadline_s: int = 10
    retry_period_s: int = 2

    def problem(self) -> str | None:
        """Why the client's election would refuse these timings (it calls sys.exit), or None."""
        if self.retry_period_s < 1:
            return "retry_period_s must be at least 1"
        if self.renew_deadline_s <= 1.2 * self.retry_period_s:
            return "renew_deadline_s must be more than 1.2 × retry_period_s"
        if self.lease_duration_s <= self.renew_deadline_s:
            return "lease_duration_s must be more than renew_deadline_s"
        return None


def replica_identity() -> str:
    """The Pod name (HOSTNAME in Kubernetes) plus a random suffix, so a restarted Pod is a new holder."""
    return f"{os.environ.get('HOSTNAME') or socket.gethostname()}-{secrets.token_hex(3)}"


class _Stopped(Exception):
    """Every Lease call once the replica stopped competing. Not an ``ApiException``: the client's
    election retries a refused call for ever (a follower's loop has no other way out), so only an
    error it does not catch ends the election thread."""


class _StoppableLeases(k8s.CoordinationV1Api):
    """The Lease API, refused from the moment this replica stops competing.

    The client's election loop has no stop: a follower retries until it gets the Lease, a leader
    renews until a renewal fails. Raising ``_Stopped`` from every call after ``stop()`` ends either
    loop at its next call (``stop()`` itself has already given up the lead).
    """

    def __init__(self, api_client: k8s.ApiClient, stopped: threading.Event) -> None:
        super().__init__(api_client)
        self._stopped = stopped

    def _check(self) -> None:
        if self._stopped.is_set():
            raise _Stopped("this replica stopped competing for the Lease")

    def read_namespaced_lease(self, *args: Any, **kwargs: Any) -> Any:
        self._check()
        return super().read_namespaced_lease(*args, **kwargs)

    def create_namespaced_lease(self, *args: Any, **kwargs: Any) -> Any:
        self._check()
        return super().create_namespaced_lease(*args, **kwargs)

    def replace_namespaced_lease(self, *args: Any, **kwargs: Any) -> Any:
        self._check()
        return super().replace_namespaced_lease(*args, **kwargs)


class Leadership:
    """Runs the election in a daemon thread and calls back when this replica gains or loses the Lease."""

    def __init__(
        self,
        settings: LeaseSettings,
        api_client: k8s.ApiClient,
        on_lead: Callable[[], None],
        on_lose: Callable[[], None],
        identity: str | None = None,
    ) -> None:
        problem = settings.problem()
        if problem is not None:
            raise ValueError(f"leader election: {problem}")
        self.settings = settings
        self.identity = identity or replica_identity()
        self._on_lead = on_lead
        self._on_lose = on_lose
        self._leading = threading.Event()
        self._stopped = threading.Event()
        self._api = _StoppableLeases(api_client, self._stopped)
        self._thread = threading.Thread(target=self._run, name="raydiag-leader", daemon=True)

    @property
    def leading(self) -> bool:
        return self._leading.is_set()

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout_s: float | None = None) -> None:
        """Stop competing: scheduled posts pause here at once, and the held Lease is left to expire."""
        self._stopped.set()
        self._lost()
        if timeout_s is not None and self._thread.is_alive():
            self._thread.join(timeout_s)

    def _run(self) -> None:
        while not self._stopped.is_set():
            lock = LeaseLock(self.settings.name, self.settings.namespace, self.identity)  # type: ignore[no-untyped-call]
            lock.api_instance = self._api  # the client's default would ignore our configuration
            config = electionconfig.Config(  # type: ignore[no-untyped-call]
                lock,
                lease_duration=self.settings.lease_duration_s,
                renew_deadline=self.settings.renew_deadline_s,
                retry_period=self.settings.retry_period_s,
                onstarted_leading=self._gained,
                onstopped_leading=self._lost,
            )
            try:
                # Returns only when a held Lease could not be renewed in time.
                LeaderElection(config).run()  # type: ignore[no-untyped-call]
            except _Stopped:
                return
            except Exception:  # an API answer the client did not expect: compete again shortly
                LOG.exception("leader election failed; trying again")
                if self._leading.is_set():
                    self._lost()
            self._stopped.wait(self.settings.retry_period_s)

    def _gained(self) -> None:
        if self._stopped.is_set():
            return
        LOG.info("%s leads: scheduled posts run on this replica", self.identity)
        self._leading.set()
        self._on_lead()

    def _lost(self) -> None:
        if not self._leading.is_set():
            return
        self._leading.clear()
        LOG.info("%s no longer leads: scheduled posts paused here", self.identity)
        self._on_lose()
