"""Both layers of each configured cluster as Prometheus series, from its latest diagnosis.

The guide's prevention advice: watch Kubernetes and Ray together, since "Pod Running" says
nothing of a Ray layer without resources. Every diagnosis of a configured cluster (whatever
triggered it, and the leader's refresh on an interval) replaces that cluster's series:

- ``raydiag_gpus{cluster, model, stage}``: GPUs per model at each stage (``allocatable``,
  ``given_to_ray_pods``, ``registered_in_ray``, ``in_use``, ``pending_demand``);
- ``raydiag_ray_worker_pods_ready``, ``raydiag_ray_nodes_alive`` (the head included);
- ``raydiag_pending_pods{cluster, age}``: Pods waiting for a node, by age bucket;
- ``raydiag_ray_pending_demands{cluster, shape}``: Ray demands waiting, by shape class (``gpu``,
  ``accelerator``, ``custom``, ``cpu``);
- ``raydiag_ray_gpu_actors`` and ``raydiag_ray_gpu_actor_oldest_seconds``: ALIVE actors holding GPUs;
- ``raydiag_device_plugin_pods_not_ready``, ``raydiag_gpu_nodes_without_allocatable``;
- ``raydiag_scale_up_seen``: 1 while the cluster shows capacity being added (autoscaler events);
- ``raydiag_findings{cluster, cause, severity}``; ``raydiag_cluster_refreshed_timestamp_seconds``.

A figure of a layer that was not read is absent, never 0: an alert on it stays silent rather than
firing on missing data. Labels are bounded: clusters come from the configuration, models from the
GPU-model labels the cluster's nodes carry, and the rest are fixed words; no Pod or node names.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from datetime import UTC, datetime

from prometheus_client import CollectorRegistry, Gauge

from bot.diagnosis import Capacity, Diagnosis, RayDemand

STAGES = ("allocatable", "given_to_ray_pods", "registered_in_ray", "in_use", "pending_demand")
# Pending Pods by how long they have waited (seconds): the upper bound of each bucket.
AGE_BUCKETS = (("lt_5m", 300.0), ("5m_30m", 1800.0), ("30m_2h", 7200.0), ("gt_2h", float("inf")))


def age_bucket(age_s: float | None) -> str:
    if age_s is None:
        return "unknown"
    return next(name for name, upper in AGE_BUCKETS if age_s < upper)


def shape_class(demand: RayDemand) -> str:
    """What a waiting Ray demand is short of, as a fixed word (its shape itself is unbounded)."""
    keys = {k for k, v in demand.shape.items() if v > 0}
    if "GPU" in keys:
        return "gpu"
    if any(k.startswith("accelerator_type:") for k in keys):
        return "accelerator"
    if keys - {"CPU", "memory", "object_store_memory"}:
        return "custom"
    return "cpu"


class LayerGauges:
    """The per-cluster series; ``record`` replaces a cluster's series with its latest diagnosis."""

    def __init__(self, registry: CollectorRegistry) -> None:
        r = registry
        self.gpus = Gauge(
            "raydiag_gpus",
            "GPUs per model at each stage, from Kubernetes to work.",
            ["cluster", "model", "stage"],
            registry=r,
        )
        self.workers_ready = Gauge(
            "raydiag_ray_worker_pods_ready", "Ray worker Pods Running and Ready.", ["cluster"], registry=r
        )
        self.nodes_alive = Gauge(
            "raydiag_ray_nodes_alive", "ALIVE Ray nodes, the head included.", ["cluster"], registry=r
        )
        self.pending_pods = Gauge(
            "raydiag_pending_pods",
            "Pods waiting for a node, by how long they have waited.",
            ["cluster", "age"],
            registry=r,
        )
        self.demands = Gauge(
            "raydiag_ray_pending_demands",
            "Ray demands waiting for resources, by shape class.",
            ["cluster", "shape"],
            registry=r,
        )
        self.gpu_actors = Gauge(
            "raydiag_ray_gpu_actors", "ALIVE Ray actors holding GPUs.", ["cluster"], registry=r
        )
        self.oldest_actor = Gauge(
            "raydiag_ray_gpu_actor_oldest_seconds",
            "Age of the oldest ALIVE actor holding GPUs (absent when none, or its start is unknown).",
            ["cluster"],
            registry=r,
        )
        self.plugins_not_ready = Gauge(
            "raydiag_device_plugin_pods_not_ready",
            "GPU device-plugin Pods not Ready on GPU nodes.",
            ["cluster"],
            registry=r,
        )
        self.no_allocatable = Gauge(
            "raydiag_gpu_nodes_without_allocatable",
            "GPU nodes that advertise no allocatable GPU.",
            ["cluster"],
            registry=r,
        )
        self.scale_up = Gauge(
            "raydiag_scale_up_seen",
            "1 while the cluster shows capacity being added.",
            ["cluster"],
            registry=r,
        )
        self.findings = Gauge(
            "raydiag_findings",
            "Findings of the latest diagnosis, by cause and severity.",
            ["cluster", "cause", "severity"],
            registry=r,
        )
        self.refreshed = Gauge(
            "raydiag_cluster_refreshed_timestamp_seconds",
            "When the cluster's series were last refreshed.",
            ["cluster"],
            registry=r,
        )
        self._labels: dict[str, list[tuple[Gauge, tuple[str, ...]]]] = {}
        self._lock = threading.Lock()

    def record(self, cluster: str, diagnosis: Diagnosis, now: datetime | None = None) -> None:
        series = list(_series(self, cluster, diagnosis.capacity, diagnosis, now or datetime.now(UTC)))
        with self._lock:
            for gauge, labels in self._labels.pop(cluster, []):
                gauge.remove(*labels)
            for gauge, labels, value in series:
                gauge.labels(*labels).set(value)
            self._labels[cluster] = [(gauge, labels) for gauge, labels, _ in series]
            self.refreshed.labels(cluster).set(time.time())


def _series(
    g: LayerGauges, cluster: str, capacity: Capacity, diagnosis: Diagnosis, now: datetime
) -> Iterable[tuple[Gauge, tuple[str, ...], float]]:
    for row in capacity.models:
        for stage, value in zip(STAGES, row.stages, strict=True):
            if value is not None:
                yield g.gpus, (cluster, row.model, stage), float(value)
    if capacity.kubernetes_read:
        if capacity.ready_worker_pods is not None:
            yield g.workers_ready, (cluster,), float(capacity.ready_worker_pods)
        buckets = dict.fromkeys([name for name, _ in AGE_BUCKETS], 0.0)
        for pod in capacity.pending_pods:
            bucket = age_bucket(pod.age_s)
            buckets[bucket] = buckets.get(bucket, 0.0) + 1
        for bucket, count in buckets.items():
            yield g.pending_pods, (cluster, bucket), count
        if capacity.device_plugin_pods_not_ready is not None:
            yield g.plugins_not_ready, (cluster,), float(capacity.device_plugin_pods_not_ready)
        if capacity.gpu_nodes_without_allocatable is not None:
            yield g.no_allocatable, (cluster,), float(capacity.gpu_nodes_without_allocatable)
    if capacity.ray_read:
        if capacity.ray_nodes_alive is not None:
            yield g.nodes_alive, (cluster,), float(capacity.ray_nodes_alive)
        shapes = dict.fromkeys(("gpu", "accelerator", "custom", "cpu"), 0.0)
        for demand in capacity.demands:
            shapes[shape_class(demand)] += demand.count
        for shape, count in shapes.items():
            yield g.demands, (cluster, shape), count
        yield g.gpu_actors, (cluster,), float(len(capacity.gpu_actors))
        started = [a.started for a in capacity.gpu_actors if a.started is not None]
        if started:
            oldest = min(s if s.tzinfo else s.replace(tzinfo=UTC) for s in started)
            yield g.oldest_actor, (cluster,), max(0.0, (now - oldest).total_seconds())
    if capacity.layers_read:
        yield g.scale_up, (cluster,), 1.0 if capacity.scale_ups else 0.0
    counted: dict[tuple[str, str], float] = {}
    for finding in diagnosis.findings:
        key = (str(finding.cause) if finding.cause is not None else "none", finding.severity)
        counted[key] = counted.get(key, 0.0) + 1
    for (cause, severity), count in counted.items():
        yield g.findings, (cluster, cause, severity), count
