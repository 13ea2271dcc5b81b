"""Prometheus metrics for ``/metrics``: is raydiag answering, how fast, and what fails.

Each ``Metrics`` owns its registry, so tests (and two bots in one process) never share counters.
Label values are bounded: clusters come from the configuration (a typed name that is not
configured never reaches a label), outcomes, sources, probes and results are fixed words, and
Slack method and error names come from Slack's own finite vocabulary.
"""

from __future__ import annotations

import contextlib
from datetime import datetime
from typing import Literal

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)

from bot.diagnosis import Diagnosis
from bot.observe.layers import LayerGauges

Outcome = Literal["healthy", "findings", "partial", "failed", "busy"]
ProbeResult = Literal["run", "refused", "timed_out", "failed"]
PostResult = Literal["sent", "edited", "suppressed", "muted", "failed"]

# Diagnoses take from tens of milliseconds (a paste) to the collection deadline (25 s by default).
LATENCY_BUCKETS = (0.1, 0.25, 0.5, 1.0, 2.0, 3.0, 5.0, 10.0, 20.0, 30.0, 60.0)


def outcome_of(diagnosis: Diagnosis) -> Outcome:
    """``partial`` when something could not be read, else whether anything is wrong."""
    if diagnosis.errors:
        return "partial"
    if any(f.severity != "info" for f in diagnosis.findings):
        return "findings"
    return "healthy"


class Metrics:
    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        r = self.registry
        self.diagnoses = Counter(
            "raydiag_diagnoses",
            "Diagnoses finished, by cluster and outcome.",
            ["cluster", "outcome"],
            registry=r,
        )
        self.diagnosis_seconds = Histogram(
            "raydiag_diagnosis_seconds",
            "Time from the request to a finished diagnosis (collection included), by trigger.",
            ["trigger"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.collection_errors = Counter(
            "raydiag_collection_errors",
            "Parts of a cluster that could not be read, by source.",
            ["source"],
            registry=r,
        )
        self.slack_api_errors = Counter(
            "raydiag_slack_api_errors",
            "Slack Web API calls that failed, by method and error.",
            ["method", "error"],
            registry=r,
        )
        self.slack_api_retries = Counter(
            "raydiag_slack_api_retries", "Slack Web API calls retried, by reason.", ["reason"], registry=r
        )
        self.probes = Counter(
            "raydiag_probes",
            "Probe buttons pressed, by probe and what happened.",
            ["probe", "result"],
            registry=r,
        )
        self.schedules_leader = Gauge(
            "raydiag_schedules_leader",
            "1 while this replica runs the scheduled health posts (it holds the Lease), else 0.",
            registry=r,
        )
        self.scheduled_posts = Counter(
            "raydiag_scheduled_posts", "Scheduled health runs, by what they did.", ["result"], registry=r
        )

        # Both layers of each configured cluster, from its latest diagnosis (bot/observe/layers.py).
        self.layers = LayerGauges(r)

        # The scheduled re-verification (bot/schedule/verify.py): pools are "any" and the
        # accelerator types Ray registers, so these stay as few as the cluster's GPU types.
        self.pool_probe_result = Gauge(
            "raydiag_gpu_probe_result",
            "1 for the verdict of the latest scheduled GPU probe of each pool (ran, pending, "
            "wrong_node, no_devices, failed, unreachable, rejected); no other verdict has a series.",
            ["cluster", "pool", "result"],
            registry=r,
        )
        self.pool_probe_seconds = Gauge(
            "raydiag_gpu_probe_duration_seconds",
            "How long the latest scheduled GPU probe of each pool took, submission to verdict.",
            ["cluster", "pool"],
            registry=r,
        )
        self.pool_probe_at = Gauge(
            "raydiag_gpu_probe_timestamp_seconds",
            "When the latest scheduled GPU probe of each pool finished (Unix time).",
            ["cluster", "pool"],
            registry=r,
        )
        self.verifications = Counter(
            "raydiag_upgrade_verifications",
            "Verification orders run after a version change in the GPU chain, by result.",
            ["cluster", "result"],
            registry=r,
        )
        self._pool_results: dict[tuple[str, str], str] = {}

    def __deepcopy__(self, memo: dict[int, object]) -> Metrics:
        # Bolt deep-copies each request (its client included) for lazy listeners; a copy of the
        # counters would count into nothing, so every copy is this same object.
        return self

    def set_leading(self, leading: bool) -> None:
        self.schedules_leader.set(1 if leading else 0)

    def record_diagnosis(self, cluster: str, diagnosis: Diagnosis, seconds: float, trigger: str) -> None:
        self.diagnoses.labels(cluster=cluster, outcome=outcome_of(diagnosis)).inc()
        self.diagnosis_seconds.labels(trigger=trigger).observe(seconds)
        for error in diagnosis.errors:
            self.collection_errors.labels(source=_source_label(error.source)).inc()

    def record_failure(self, cluster: str, outcome: Literal["failed", "busy"]) -> None:
        self.diagnoses.labels(cluster=cluster, outcome=outcome).inc()

    def record_cluster(self, cluster: str, diagnosis: Diagnosis) -> None:
        """A configured cluster's latest diagnosis: its two layers as series (``raydiag_gpus`` ...)."""
        self.layers.record(cluster, diagnosis)

    def record_probe(self, probe: str, result: ProbeResult) -> None:
        self.probes.labels(probe=probe, result=result).inc()

    def record_pool_probe(self, cluster: str, pool: str, result: str, seconds: float, at: datetime) -> None:
        """The latest scheduled probe of one pool: its verdict replaces the last one's series."""
        last = self._pool_results.get((cluster, pool))
        if last is not None and last != result:
            with contextlib.suppress(KeyError):
                self.pool_probe_result.remove(cluster, pool, last)
        self._pool_results[(cluster, pool)] = result
        self.pool_probe_result.labels(cluster=cluster, pool=pool, result=result).set(1)
        self.pool_probe_seconds.labels(cluster=cluster, pool=pool).set(seconds)
        self.pool_probe_at.labels(cluster=cluster, pool=pool).set(at.timestamp())

    def record_verification(self, cluster: str, passed: bool) -> None:
        self.verifications.labels(cluster=cluster, result="passed" if passed else "failed").inc()

    def record_scheduled_post(self, result: PostResult) -> None:
        self.scheduled_posts.labels(result=result).inc()

    def exposition(self) -> tuple[bytes, str]:
        """The text format body and its content type, for ``GET /metrics``."""
        return generate_latest(self.registry), CONTENT_TYPE_LATEST


def _source_label(source: str) -> str:
    """``kubernetes: list pods`` → ``kubernetes``: the layer, not the free text after it."""
    head = source.split(":", 1)[0].split(maxsplit=1)[0] if source.strip() else "unknown"
    return head[:40].lower()
