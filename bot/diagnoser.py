"""One service below every trigger: the only place a diagnosis is made.

A slash command, a button, a mention, an incident-channel message, a message shortcut, a pasted
output, a scheduled post and the command line all ask the ``Diagnoser``. It reads the cluster
(``collect`` → snapshot, bounded by the configured collection deadline) and classifies it, in a
bounded pool where a second request for a cluster that is being read joins the run under way
instead of reading it again, and it records every diagnosis in the metrics with the trigger that
asked for it. Triggers only turn what they were given into a request and deliver the answer.
"""

from __future__ import annotations

import itertools
import logging
import time
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Literal, Protocol

from bot.catalogue import Catalogue, default_catalogue
from bot.classify import classify
from bot.diagnosis import Diagnosis
from bot.snapshot.model import Snapshot
from bot.workers import Busy, SharedRuns, Submitted

if TYPE_CHECKING:
    from bot.collect.live import Target
    from bot.config import ClusterConfig, Config
    from bot.observe.metrics import Metrics

# Who asked: the metrics' ``trigger`` label.
Trigger = Literal[
    "slash",
    "button",
    "mention",
    "incident",
    "shortcut",
    "paste",
    "schedule",
    "cli",
    "alert",
    "refresh",
    "verify",
]
PASTED = "paste"  # the metrics' cluster label of a diagnosis of pasted text

Diagnose = Callable[["ClusterConfig", str], Diagnosis]


class Meter(Protocol):
    """Where diagnoses are counted: the service's Prometheus ``Metrics``, or ``NO_METER``."""

    def record_diagnosis(self, cluster: str, diagnosis: Diagnosis, seconds: float, trigger: str) -> None: ...

    def record_failure(self, cluster: str, outcome: Literal["failed", "busy"]) -> None: ...

    def record_cluster(self, cluster: str, diagnosis: Diagnosis) -> None: ...


class _NoMeter:
    """Counts nothing: the command line has no /metrics to show a count on."""

    def record_diagnosis(self, cluster: str, diagnosis: Diagnosis, seconds: float, trigger: str) -> None:
        return None

    def record_failure(self, cluster: str, outcome: Literal["failed", "busy"]) -> None:
        return None

    def record_cluster(self, cluster: str, diagnosis: Diagnosis) -> None:
        return None


LOG = logging.getLogger(__name__)
NO_METER: Meter = _NoMeter()
CollectSnapshot = Callable[["ClusterConfig", str], Snapshot]
Observer = Callable[["ClusterConfig", Diagnosis, Trigger], object]

__all__ = [
    "NO_METER",
    "Busy",
    "CollectSnapshot",
    "Diagnose",
    "Diagnoser",
    "Meter",
    "Submitted",
    "Trigger",
]


def target_of(cluster: ClusterConfig, namespace: str | None = None) -> Target:
    """Where a configured cluster is read from (its own namespace unless one is given)."""
    from bot.collect.live import Target  # noqa: PLC0415 - lazy: pastes and snapshots load no client

    return Target(
        cluster=cluster.name,
        namespace=namespace or cluster.namespace,
        raycluster=cluster.raycluster,
        kubeconfig=cluster.kubeconfig,
        context=cluster.context,
        dashboard_url=cluster.dashboard_url,
    )


def dashboard_url(cluster: ClusterConfig) -> str:
    """The Ray dashboard probes talk to: the configured URL, else the head Service's in-cluster name."""
    return cluster.dashboard_url or target_of(cluster).default_dashboard_url()


def live_snapshot(config: Config) -> CollectSnapshot:
    def run(cluster: ClusterConfig, namespace: str) -> Snapshot:
        from bot.collect.live import collect_live  # noqa: PLC0415 - lazy: pastes and snapshots load no client

        return collect_live(
            target_of(cluster, namespace),
            deadline_s=config.collection.deadline_s,
            call_timeout_s=config.collection.call_timeout_s,
        )

    return run


class Diagnoser:
    """Diagnoses for every trigger: pooled, shared per cluster, deadline-bounded, metered.

    ``diagnose`` reads and classifies one cluster; without it, the cluster is read by
    ``snapshot_of`` (the live collector unless a test gives another) and classified here.
    Without a ``config`` (the command line, which reads its cluster itself), one worker runs the
    one diagnosis, and the config's pydantic models are never loaded.
    """

    def __init__(
        self,
        config: Config | None,
        diagnose: Diagnose | None = None,
        *,
        catalogue: Catalogue | None = None,
        metrics: Meter | None = None,
        snapshot_of: CollectSnapshot | None = None,
    ) -> None:
        self.config = config
        self.catalogue = catalogue or default_catalogue()
        self.metrics = metrics if metrics is not None else _prometheus()
        self._snapshot_of = snapshot_of
        self._diagnose = diagnose or self._read_and_classify
        workers, queue = (config.slack.workers, config.slack.queue) if config is not None else (1, 0)
        self.runs: SharedRuns[Diagnosis] = SharedRuns(workers, queue)
        self._unshared = itertools.count()  # keys of runs nobody joins: pastes, snapshots
        self._observers: list[Observer] = []

    def watch(self, observer: Observer) -> None:
        """Call ``observer(cluster, diagnosis, trigger)`` after each diagnosis of a configured
        cluster (in the worker that ran it; the started run's trigger when several joined)."""
        self._observers.append(observer)

    # --- clusters ---------------------------------------------------------------------------------

    def submit(self, cluster: ClusterConfig, namespace: str, trigger: Trigger) -> Submitted[Diagnosis]:
        """The run for this cluster and namespace: started now (or queued), or joined if one is under
        way. Raises ``Busy`` when every worker is busy and the queue is full (counted as ``busy``)."""

        def diagnose() -> Diagnosis:
            diagnosis = self._diagnose(cluster, namespace)
            # Every diagnosis of a configured cluster refreshes its series, whatever triggered it.
            self.metrics.record_cluster(cluster.name, diagnosis)
            for observer in tuple(self._observers):
                try:
                    observer(cluster, diagnosis, trigger)
                except Exception:  # an observer's failure is logged; the diagnosis stands
                    LOG.exception("an observer of %s's diagnosis failed", cluster.name)
            return diagnosis

        return self._submit((cluster.name, namespace), cluster.name, trigger, diagnose)

    def run(
        self, cluster: ClusterConfig, namespace: str, trigger: Trigger, timeout: float | None = None
    ) -> Diagnosis:
        """``submit`` and wait for the answer (scheduled posts, the command line)."""
        return self.submit(cluster, namespace, trigger).future.result(timeout=timeout)

    def snapshot(self, cluster: ClusterConfig, namespace: str) -> Snapshot:
        if self._snapshot_of is not None:
            return self._snapshot_of(cluster, namespace)
        if self.config is None:
            raise RuntimeError("a Diagnoser without a config reads no cluster: give it snapshot_of")
        return live_snapshot(self.config)(cluster, namespace)

    def _read_and_classify(self, cluster: ClusterConfig, namespace: str) -> Diagnosis:
        return classify(self.snapshot(cluster, namespace), self.catalogue)

    # --- a snapshot already in hand ---------------------------------------------------------------

    def judge(self, snapshot: Snapshot, trigger: Trigger, timeout: float | None = None) -> Diagnosis:
        """Classify a snapshot read elsewhere (a file, the command line's own collection), in the
        same pool and metered like every other diagnosis; never shared. Raises ``Busy``."""
        key = ("snapshot", next(self._unshared))
        label = snapshot.cluster or "snapshot"
        work = self._submit(key, label, trigger, lambda: classify(snapshot, self.catalogue))
        return work.future.result(timeout=timeout)

    # --- pasted text ------------------------------------------------------------------------------

    def explain(self, text: str, trigger: Trigger = "paste", timeout: float | None = None) -> Diagnosis:
        """A diagnosis of pasted output (``ray status``, ``kubectl describe``, logs...), in the same
        pool as cluster runs; never shared (each paste is its own). Raises ``Busy`` like ``submit``.
        The parser bounds its own work and says in the notes what it left out. The diagnosis carries
        the closest resolved reports ("Seen before", ``bot.similar``), and when nothing in the paste
        was recognised, the cause they agree on as an ``info`` finding."""
        from bot.collect.paste import parse_paste  # noqa: PLC0415 - lazy: the paste readers load only for pastes
        from bot.similar import seen_before  # noqa: PLC0415 - lazy: like the paste readers

        key = (PASTED, next(self._unshared))
        work = self._submit(
            key, PASTED, trigger, lambda: seen_before(text, classify(parse_paste(text), self.catalogue))
        )
        return work.future.result(timeout=timeout)

    # --- the one way a diagnosis runs ---------------------------------------------------------------

    def _submit(
        self, key: Hashable, label: str, trigger: Trigger, work: Callable[[], Diagnosis]
    ) -> Submitted[Diagnosis]:
        """``work`` in the pool under ``key`` (joined if that key is running), metered under the
        ``label`` cluster and the trigger: finished, failed, or refused as busy."""
        try:
            return self.runs.submit(key, lambda: self._metered(label, trigger, work))
        except Busy:
            self.metrics.record_failure(label, "busy")
            raise

    def _metered(self, label: str, trigger: Trigger, work: Callable[[], Diagnosis]) -> Diagnosis:
        started = time.monotonic()
        try:
            diagnosis = work()
        except Exception:
            self.metrics.record_failure(label, "failed")
            raise
        self.metrics.record_diagnosis(label, diagnosis, time.monotonic() - started, trigger=trigger)
        return diagnosis

    def shutdown(self) -> None:
        self.runs.shutdown()


def _prometheus() -> Metrics:
    from bot.observe.metrics import Metrics  # noqa: PLC0415 - lazy: the command line meters nothing

    return Metrics()
