"""The Kubernetes half of a snapshot, normalised.

These models hold only what the classifier reads, in canonical units (see ``quantity``). They are
built from raw API JSON by ``bot.snapshot.from_kubernetes`` rather than from the generated client
models: the generated models are slow on large lists and have raised on real clusters when a field
the OpenAPI schema calls required was absent. Every field here has a default, unknown fields are
ignored, and nothing in a snapshot is a secret value (no env values, no Secret data).
"""

from __future__ import annotations

from datetime import datetime

from pydantic import Field, PrivateAttr, field_validator, model_validator

from bot.snapshot.base import SnapshotModel, new_dict, new_list
from bot.snapshot.pod_index import PodIndex, index_pods
from bot.snapshot.redact import Redacted, RedactedLines

GPU_RESOURCE = "nvidia.com/gpu"


class _Model(SnapshotModel):
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
    values: list[str] = Field(default_factory=new_list)


class NodeSelectorTerm(_Model):
    match_expressions: list[LabelRequirement] = Field(default_factory=new_list)
    match_fields: list[LabelRequirement] = Field(default_factory=new_list)


class PodAffinityTerm(_Model):
    """A required (anti-)affinity term: which Pods, in which topology domain."""

    anti: bool = False
    match_labels: dict[str, str] = Field(default_factory=new_dict)
    match_expressions: list[LabelRequirement] = Field(default_factory=new_list)
    topology_key: str = "kubernetes.io/hostname"
    namespaces: list[str] = Field(default_factory=new_list)


class Condition(_Model):
    type: str
    status: str = "Unknown"
    reason: str | None = None
    message: Redacted | None = None
    last_transition: datetime | None = None


class Node(_Model):
    name: str
    labels: dict[str, str] = Field(default_factory=new_dict)
    taints: list[Taint] = Field(default_factory=new_list)
    unschedulable: bool = False
    capacity: dict[str, float] = Field(default_factory=new_dict)
    allocatable: dict[str, float] = Field(default_factory=new_dict)
    conditions: list[Condition] = Field(default_factory=new_list)
    internal_ip: str | None = None
    created: datetime | None = None

    @property
    def ready(self) -> bool:
        return any(c.type == "Ready" and c.status == "True" for c in self.conditions) or not self.conditions


class ContainerSpec(_Model):
    name: str
    image: str | None = None
    requests: dict[str, float] = Field(default_factory=new_dict)
    limits: dict[str, float] = Field(default_factory=new_dict)
    env_names: list[str] = Field(default_factory=new_list)
    command: RedactedLines = Field(default_factory=new_list)


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
    labels: dict[str, str] = Field(default_factory=new_dict)
    owner: OwnerRef | None = None
    created: datetime | None = None
    deleting: bool = False
    scheduler_name: str | None = None
    scheduling_gates: list[str] = Field(default_factory=new_list)
    containers: list[ContainerSpec] = Field(default_factory=new_list)
    init_containers: list[ContainerSpec] = Field(default_factory=new_list)
    overhead: dict[str, float] = Field(default_factory=new_dict)
    # Effective scheduling request as kube-scheduler computes it: max(sum of app containers,
    # largest init container) plus overhead. Filled by the builders so rules never recompute it.
    requests: dict[str, float] = Field(default_factory=new_dict)
    node_selector: dict[str, str] = Field(default_factory=new_dict)
    required_node_terms: list[NodeSelectorTerm] = Field(default_factory=new_list)
    tolerations: list[Toleration] = Field(default_factory=new_list)
    pvc_names: list[str] = Field(default_factory=new_list)
    pod_affinity_terms: list[PodAffinityTerm] = Field(default_factory=new_list)
    has_topology_spread: bool = False
    # Only the conditions the classifier reads are kept (see _KEPT_POD_CONDITIONS).
    conditions: list[Condition] = Field(default_factory=new_list)
    container_statuses: list[ContainerStatus] = Field(default_factory=new_list)
    status_reason: str | None = None
    status_message: Redacted | None = None
    # Set by the pasted-text parser when only a `kubectl get pods` row was seen: the STATUS column.
    display_status: str | None = None
    # Derived when the Pod is built (never serialised): read for every Pod of a large cluster, they
    # save walking its container statuses and labels on each pass.
    troubled: bool = Field(default=False, exclude=True)
    is_ray: bool = Field(default=False, exclude=True)

    @model_validator(mode="after")
    def _derive_flags(self) -> Pod:
        troubled = any(
            s.restart_count or (not s.ready and not (s.init and s.exit_code == 0))
            for s in self.container_statuses
        )
        is_ray = "ray.io/node-type" in self.labels or "ray.io/cluster" in self.labels
        object.__setattr__(self, "troubled", troubled)
        object.__setattr__(self, "is_ray", is_ray)
        return self

    @field_validator("conditions")
    @classmethod
    def _kept_conditions(cls, conditions: list[Condition]) -> list[Condition]:
        return [c for c in conditions if c.type in _KEPT_POD_CONDITIONS]

    @field_validator("tolerations")
    @classmethod
    def _shared_tolerations(cls, tolerations: list[Toleration]) -> list[Toleration]:
        # Most Pods carry the same admission-added tolerations; one shared list serves them all.
        key = tuple((t.key, t.operator, t.value, t.effect) for t in tolerations)
        return _TOLERATIONS.setdefault(key, tolerations) if len(_TOLERATIONS) < 10_000 else tolerations

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
    selector: dict[str, str] = Field(default_factory=new_dict)
    ports: list[ServicePort] = Field(default_factory=new_list)


class EndpointAddress(_Model):
    ip: str
    pod: str | None = None
    ready: bool = True


class Endpoints(_Model):
    name: str
    namespace: str = "default"
    addresses: list[EndpointAddress] = Field(default_factory=new_list)
    ports: list[int] = Field(default_factory=new_list)


class RayGroup(_Model):
    """A head or worker group template of a RayCluster."""

    name: str
    is_head: bool = False
    replicas: int | None = None
    min_replicas: int | None = None
    max_replicas: int | None = None
    suspend: bool = False
    ray_start_params: dict[str, str] = Field(default_factory=new_dict)
    node_selector: dict[str, str] = Field(default_factory=new_dict)
    required_node_terms: list[NodeSelectorTerm] = Field(default_factory=new_list)
    tolerations: list[Toleration] = Field(default_factory=new_list)
    containers: list[ContainerSpec] = Field(default_factory=new_list)
    # What one Pod of the group asks the scheduler for, as ``Pod.requests`` (app containers and
    # sidecars summed, init containers by the largest); filled by the builder, like a Pod's.
    requests: dict[str, float] = Field(default_factory=new_dict)

    @property
    def ray_container(self) -> ContainerSpec | None:
        return self.containers[0] if self.containers else None


class RayClusterObject(_Model):
    name: str
    namespace: str = "default"
    ray_version: str | None = None
    autoscaling: bool = False
    head: RayGroup | None = None
    worker_groups: list[RayGroup] = Field(default_factory=new_list)
    state: str | None = None
    reason: str | None = None
    conditions: list[Condition] = Field(default_factory=new_list)
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
    conditions: list[Condition] = Field(default_factory=new_list)
    cluster_name: str | None = None
    app_statuses: dict[str, str] = Field(default_factory=new_dict)
    app_messages: dict[str, Redacted] = Field(default_factory=new_dict)


class ResourceQuota(_Model):
    name: str
    namespace: str = "default"
    hard: dict[str, float] = Field(default_factory=new_dict)
    used: dict[str, float] = Field(default_factory=new_dict)


class PersistentVolumeClaim(_Model):
    name: str
    namespace: str = "default"
    phase: str = "Pending"
    storage_class: str | None = None
    volume_name: str | None = None


class NetworkPolicy(_Model):
    name: str
    namespace: str = "default"
    pod_selector: dict[str, str] = Field(default_factory=new_dict)
    selects_all: bool = False
    policy_types: list[str] = Field(default_factory=new_list)
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
    lines: RedactedLines = Field(default_factory=new_list)


class KubernetesState(_Model):
    nodes: list[Node] = Field(default_factory=new_list)
    # False when the snapshot carries only some nodes (a pasted `describe node`): the fit
    # explainer then cannot count "0/N nodes" and says so instead of guessing.
    nodes_complete: bool = True
    pods: list[Pod] = Field(default_factory=new_list)
    events: list[Event] = Field(default_factory=new_list)
    services: list[Service] = Field(default_factory=new_list)
    endpoints: list[Endpoints] = Field(default_factory=new_list)
    rayclusters: list[RayClusterObject] = Field(default_factory=new_list)
    rayjobs: list[RayJobObject] = Field(default_factory=new_list)
    rayservices: list[RayServiceObject] = Field(default_factory=new_list)
    resource_quotas: list[ResourceQuota] = Field(default_factory=new_list)
    pvcs: list[PersistentVolumeClaim] = Field(default_factory=new_list)
    network_policies: list[NetworkPolicy] = Field(default_factory=new_list)
    device_plugin_pods: list[Pod] = Field(default_factory=new_list)
    # The KubeRay operator's Pods (any namespace): their image says the operator's version.
    operator_pods: list[Pod] = Field(default_factory=new_list)
    logs: list[PodLog] = Field(default_factory=new_list)
    workloads: list[KueueWorkload] = Field(default_factory=new_list)
    _pod_index: PodIndex | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _index_pods(self) -> KubernetesState:
        # Built here, once, while the Pods are fresh; see bot.snapshot.pod_index for why.
        self._pod_index = index_pods(self.pods)
        return self

    @property
    def pod_index(self) -> PodIndex:
        """The shared views of the Pods (rebuilt only for an object made without validation)."""
        index = self._pod_index
        if index is None or index.source is not self.pods:
            index = self._pod_index = index_pods(self.pods)
        return index
