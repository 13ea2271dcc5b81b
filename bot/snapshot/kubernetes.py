"""The Kubernetes half of a snapshot, normalised.

These models hold only what the classifier reads, in canonical units (see ``quantity``). They are
built from raw API JSON by ``bot.read.kubernetes_json`` rather than from the generated client
models: the generated models are slow on large lists and have raised on real clusters when a field
the OpenAPI schema calls required was absent. Every field here has a default, unknown fields are
ignored, and nothing in a snapshot is a secret value (no env values, no Secret data).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property

from bot.snapshot.base import Record
from bot.snapshot.redact import Redacted, RedactedLines

GPU_RESOURCE = "nvidia.com/gpu"


class _Model(Record):
    pass


class Taint(_Model):
    key: str
    value: str = ""
    effect: str = "NoSchedule"


class Toleration(_Model):
    key: str | None = None
    operator: str = "Equal"
    value: str | None = None
    effect: str | None = None


class LabelRequirement(_Model):
    """One ``matchExpressions`` entry of a node selector term."""

    key: str
    operator: str = "In"
    values: list[str] = field(default_factory=list)


class NodeSelectorTerm(_Model):
    match_expressions: list[LabelRequirement] = field(default_factory=list)
    match_fields: list[LabelRequirement] = field(default_factory=list)


class PodAffinityTerm(_Model):
    """A required (anti-)affinity term: which Pods, in which topology domain."""

    anti: bool = False
    match_labels: dict[str, str] = field(default_factory=dict)
    match_expressions: list[LabelRequirement] = field(default_factory=list)
    topology_key: str = "kubernetes.io/hostname"
    namespaces: list[str] = field(default_factory=list)


class Condition(_Model):
    type: str
    status: str = "Unknown"
    reason: str | None = None
    message: Redacted | None = None
    last_transition: datetime | None = None


class Node(_Model):
    name: str
    labels: dict[str, str] = field(default_factory=dict)
    taints: list[Taint] = field(default_factory=list)
    unschedulable: bool = False
    capacity: dict[str, float] = field(default_factory=dict)
    allocatable: dict[str, float] = field(default_factory=dict)
    conditions: list[Condition] = field(default_factory=list)
    internal_ip: str | None = None
    created: datetime | None = None

    @property
    def ready(self) -> bool:
        return any(c.type == "Ready" and c.status == "True" for c in self.conditions) or not self.conditions


class ContainerSpec(_Model):
    name: str
    image: str | None = None
    requests: dict[str, float] = field(default_factory=dict)
    limits: dict[str, float] = field(default_factory=dict)
    env_names: list[str] = field(default_factory=list)
    command: RedactedLines = field(default_factory=list)


class ContainerStatus(_Model):
    name: str
    init: bool = False
    ready: bool = False
    restart_count: int = 0
    state: str | None = None  # waiting | running | terminated
    reason: str | None = None
    message: Redacted | None = None
    exit_code: int | None = None
    last_terminated_reason: str | None = None
    image: str | None = None


class OwnerRef(_Model):
    kind: str
    name: str


class Pod(_Model):
    name: str
    namespace: str = "default"
    uid: str | None = None
    phase: str = "Unknown"
    node_name: str | None = None
    pod_ip: str | None = None
    host_ip: str | None = None
    labels: dict[str, str] = field(default_factory=dict)
    owner: OwnerRef | None = None
    created: datetime | None = None
    deleting: bool = False
    scheduler_name: str | None = None
    scheduling_gates: list[str] = field(default_factory=list)
    containers: list[ContainerSpec] = field(default_factory=list)
    init_containers: list[ContainerSpec] = field(default_factory=list)
    overhead: dict[str, float] = field(default_factory=dict)
    # Effective scheduling request as kube-scheduler computes it: max(sum of app containers,
    # largest init container) plus overhead. Filled by the builders so rules never recompute it.
    requests: dict[str, float] = field(default_factory=dict)
    node_selector: dict[str, str] = field(default_factory=dict)
    required_node_terms: list[NodeSelectorTerm] = field(default_factory=list)
    tolerations: list[Toleration] = field(default_factory=list)
    pvc_names: list[str] = field(default_factory=list)
    pod_affinity_terms: list[PodAffinityTerm] = field(default_factory=list)
    has_topology_spread: bool = False
    # Only the conditions the classifier reads are kept (see _KEPT_POD_CONDITIONS).
    conditions: list[Condition] = field(default_factory=list)
    container_statuses: list[ContainerStatus] = field(default_factory=list)
    status_reason: str | None = None
    status_message: Redacted | None = None
    # Set by the pasted-text parser when only a `kubectl get pods` row was seen: the STATUS column.
    display_status: str | None = None

    def __post_init__(self) -> None:
        # Only the conditions the classifier reads are kept.
        if any(c.type not in _KEPT_POD_CONDITIONS for c in self.conditions):
            object.__setattr__(
                self, "conditions", [c for c in self.conditions if c.type in _KEPT_POD_CONDITIONS]
            )
        # Most Pods carry the same admission-added tolerations; one shared list serves them all.
        if self.tolerations and len(_TOLERATIONS) < 10_000:
            key = tuple((t.key, t.operator, t.value, t.effect) for t in self.tolerations)
            object.__setattr__(self, "tolerations", _TOLERATIONS.setdefault(key, self.tolerations))

    # Derived, once per Pod (not fields, so never written out): read for every Pod of a large
    # cluster, they save walking its container statuses and labels on each pass.
    @cached_property
    def troubled(self) -> bool:
        return any(
            s.restart_count or (not s.ready and not (s.init and s.exit_code == 0))
            for s in self.container_statuses
        )

    @cached_property
    def is_ray(self) -> bool:
        return "ray.io/node-type" in self.labels or "ray.io/cluster" in self.labels

    @property
    def key(self) -> tuple[str, str]:
        return (self.namespace, self.name)

    @property
    def terminated(self) -> bool:
        return self.phase in {"Succeeded", "Failed"}

    @property
    def ready(self) -> bool:
        return any(c.type == "Ready" and c.status == "True" for c in self.conditions)

    @property
    def unscheduled(self) -> bool:
        return self.phase == "Pending" and not self.node_name

    def condition(self, kind: str) -> Condition | None:
        return next((c for c in self.conditions if c.type == kind), None)

    def gpu_limit(self, resource: str = GPU_RESOURCE) -> float:
        return sum(c.limits.get(resource, c.requests.get(resource, 0.0)) for c in self.containers)


_KEPT_POD_CONDITIONS = frozenset({"PodScheduled", "Ready"})
_TOLERATIONS: dict[tuple[tuple[str | None, ...], ...], list[Toleration]] = {}


class Event(_Model):
    namespace: str | None = None
    object_kind: str | None = None
    object_name: str | None = None
    type: str = "Normal"
    reason: str = ""
    message: Redacted = ""
    count: int = 1
    source: str | None = None
    first_seen: datetime | None = None
    last_seen: datetime | None = None


class ServicePort(_Model):
    name: str | None = None
    port: int
    target_port: str | None = None


class Service(_Model):
    name: str
    namespace: str = "default"
    type: str = "ClusterIP"
    cluster_ip: str | None = None
    selector: dict[str, str] = field(default_factory=dict)
    ports: list[ServicePort] = field(default_factory=list)


class EndpointAddress(_Model):
    ip: str
    pod: str | None = None
    ready: bool = True


class Endpoints(_Model):
    name: str
    namespace: str = "default"
    addresses: list[EndpointAddress] = field(default_factory=list)
    ports: list[int] = field(default_factory=list)


class RayGroup(_Model):
    """A head or worker group template of a RayCluster."""

    name: str
    is_head: bool = False
    replicas: int | None = None
    min_replicas: int | None = None
    max_replicas: int | None = None
    suspend: bool = False
    ray_start_params: dict[str, str] = field(default_factory=dict)
    node_selector: dict[str, str] = field(default_factory=dict)
    required_node_terms: list[NodeSelectorTerm] = field(default_factory=list)
    tolerations: list[Toleration] = field(default_factory=list)
    containers: list[ContainerSpec] = field(default_factory=list)
    # What one Pod of the group asks the scheduler for, as ``Pod.requests`` (app containers and
    # sidecars summed, init containers by the largest); filled by the builder, like a Pod's.
    requests: dict[str, float] = field(default_factory=dict)

    @property
    def ray_container(self) -> ContainerSpec | None:
        return self.containers[0] if self.containers else None


class RayClusterObject(_Model):
    name: str
    namespace: str = "default"
    ray_version: str | None = None
    autoscaling: bool = False
    head: RayGroup | None = None
    worker_groups: list[RayGroup] = field(default_factory=list)
    state: str | None = None
    reason: str | None = None
    conditions: list[Condition] = field(default_factory=list)
    ready_workers: int | None = None
    desired_workers: int | None = None
    owner: OwnerRef | None = None


class RayJobObject(_Model):
    name: str
    namespace: str = "default"
    job_status: str | None = None
    deployment_status: str | None = None
    # Why KubeRay (v1.1 on) ended it: ``AppFailed``, ``DeadlineExceeded``, ``SubmissionFailed``...
    reason: str | None = None
    message: Redacted | None = None
    cluster_name: str | None = None
    submission_id: str | None = None


class RayServiceObject(_Model):
    name: str
    namespace: str = "default"
    service_status: str | None = None
    conditions: list[Condition] = field(default_factory=list)
    cluster_name: str | None = None
    app_statuses: dict[str, str] = field(default_factory=dict)
    app_messages: dict[str, Redacted] = field(default_factory=dict)


class ResourceQuota(_Model):
    name: str
    namespace: str = "default"
    hard: dict[str, float] = field(default_factory=dict)
    used: dict[str, float] = field(default_factory=dict)


class PersistentVolumeClaim(_Model):
    name: str
    namespace: str = "default"
    phase: str = "Pending"
    storage_class: str | None = None
    volume_name: str | None = None


class NetworkPolicy(_Model):
    name: str
    namespace: str = "default"
    pod_selector: dict[str, str] = field(default_factory=dict)
    selects_all: bool = False
    policy_types: list[str] = field(default_factory=list)
    ingress_rules: int = 0
    egress_rules: int = 0


class KueueWorkload(_Model):
    """A Kueue Workload: the admission ticket of a RayJob or RayCluster in a queue."""

    name: str
    namespace: str = "default"
    queue: str | None = None
    admitted: bool = False
    message: Redacted | None = None
    owner: OwnerRef | None = None


class PodLog(_Model):
    pod: str
    namespace: str = "default"
    container: str | None = None
    lines: RedactedLines = field(default_factory=list)


# The views of a snapshot's Pods that every classification reads, built once with the snapshot.
#
# Each rule needs some of the same few views: the Pods still running or waiting, those bound to
# each node with the sum of their requests (kube-scheduler's own bookkeeping for the fit filter),
# those no node was found for, those with a failing container, and the Ray Pods. On a cluster with
# 150,000 Pods one pass over them takes about half a second, nearly all of it memory traffic (every
# Pod is its own object), so the snapshot makes that pass once, when its Pods are built, and every
# reader after that shares it: each rule, a re-run, a scheduled post, the capacity picture.
@dataclass(frozen=True)
class PodIndex:
    source: Sequence[Pod]  # the list this index was built from
    live: list[Pod] = field(default_factory=list)  # not Succeeded or Failed
    ray: list[Pod] = field(default_factory=list)
    # Sum of the requests of live Pods bound to each node, plus a "pods" count.
    requested: dict[str, dict[str, float]] = field(default_factory=dict)
    by_node: dict[str, list[Pod]] = field(default_factory=dict)  # live Pods bound to each node
    unscheduled: list[Pod] = field(default_factory=list)  # Pending, no node, not being deleted
    troubled: list[Pod] = field(default_factory=list)  # a container not ready or restarted
    namespaces: set[str] = field(default_factory=set)  # of every Pod, finished ones included
    # Pods whose status has a reason or message (an eviction, the kubelet's refusal), any phase.
    with_status: list[Pod] = field(default_factory=list)
    not_running: list[Pod] = field(default_factory=list)  # live, in a phase other than Running


def index_pods(pods: Sequence[Pod]) -> PodIndex:
    index = PodIndex(pods)
    live, requested, by_node = index.live, index.requested, index.by_node
    unscheduled, troubled, ray = index.unscheduled, index.troubled, index.ray
    namespaces, with_status, not_running = index.namespaces, index.with_status, index.not_running
    for pod in pods:
        namespaces.add(pod.namespace)
        if pod.status_reason or pod.status_message:
            with_status.append(pod)
        phase = pod.phase
        if phase == "Succeeded" or phase == "Failed":  # noqa: PLR1714 (faster than a tuple test here)
            continue
        live.append(pod)
        if phase != "Running":
            not_running.append(pod)
        node = pod.node_name
        if node:
            used = requested.get(node)
            if used is None:
                used = requested[node] = {"pods": 0.0}
                by_node[node] = [pod]
            else:
                by_node[node].append(pod)
            for resource, amount in pod.requests.items():
                used[resource] = used.get(resource, 0.0) + amount
            used["pods"] += 1
        elif phase == "Pending" and not pod.deleting:
            unscheduled.append(pod)
        if pod.troubled:
            troubled.append(pod)
        if pod.is_ray:
            ray.append(pod)
    return index


class KubernetesState(_Model):
    nodes: list[Node] = field(default_factory=list)
    # False when the snapshot carries only some nodes (a pasted `describe node`): the fit
    # explainer then cannot count "0/N nodes" and says so instead of guessing.
    nodes_complete: bool = True
    pods: list[Pod] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    services: list[Service] = field(default_factory=list)
    endpoints: list[Endpoints] = field(default_factory=list)
    rayclusters: list[RayClusterObject] = field(default_factory=list)
    rayjobs: list[RayJobObject] = field(default_factory=list)
    rayservices: list[RayServiceObject] = field(default_factory=list)
    resource_quotas: list[ResourceQuota] = field(default_factory=list)
    pvcs: list[PersistentVolumeClaim] = field(default_factory=list)
    network_policies: list[NetworkPolicy] = field(default_factory=list)
    device_plugin_pods: list[Pod] = field(default_factory=list)
    # The KubeRay operator's Pods (any namespace): their image says the operator's version.
    operator_pods: list[Pod] = field(default_factory=list)
    logs: list[PodLog] = field(default_factory=list)
    workloads: list[KueueWorkload] = field(default_factory=list)

    @cached_property
    def pod_index(self) -> PodIndex:
        """The shared views of the Pods, built once per state on first use (see PodIndex for
        why). A copy (``dataclasses.replace``) is a new state with its own index."""
        return index_pods(self.pods)
