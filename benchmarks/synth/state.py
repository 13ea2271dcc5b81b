"""What the builder keeps while it works: the planned nodes, the objects made so far, ids and dice."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from benchmarks.synth.common import NOW, Size
from benchmarks.synth.ray_specs import RayClusterSpec, RayGroupSpec
from benchmarks.synth.recipe import Pool
from bot.snapshot.kubernetes import (
    Endpoints,
    Event,
    PersistentVolumeClaim,
    Pod,
    PodLog,
    RayClusterObject,
    Service,
)
from bot.snapshot.ray import RayNode

_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"

# A Pending controller's Pod template: containers, init containers, tolerations, labels, template hash.
TemplateParts = tuple[list[dict[str, Any]], list[dict[str, Any]], list[Any], dict[str, str], str]


def cluster_ip(index: int) -> str:
    """The ClusterIP of the ``index``-th Service."""
    return f"10.96.{index // 250}.{index % 250 + 2}"


@dataclass(eq=False)
class PlannedNode:
    index: int
    name: str
    pool: Pool | None  # None for the control plane
    labels: dict[str, str]
    taints: list[dict[str, str]]
    unschedulable: bool
    ready: bool
    capacity: dict[str, float]
    allocatable: dict[str, float]
    ip: str
    used: dict[str, float] = field(default_factory=dict)
    pods: int = 0

    def free(self, resource: str) -> float:
        return self.allocatable.get(resource, 0.0) - self.used.get(resource, 0.0)

    def fits(self, requests: Mapping[str, float]) -> bool:
        return self.pods < self.allocatable["pods"] and all(
            amount <= self.free(resource) + 1e-9 for resource, amount in requests.items() if amount > 0
        )

    def take(self, requests: Mapping[str, float]) -> str:
        for resource, amount in requests.items():
            self.used[resource] = self.used.get(resource, 0.0) + amount
        self.pods += 1
        return f"10.{64 + self.index // 256}.{self.index % 256}.{self.pods + 1}"


@dataclass(eq=False)
class AppDeployment:
    name: str
    namespace: str
    rs_hash: str
    containers: list[dict[str, Any]]
    init: list[dict[str, Any]]
    labels: dict[str, str]
    requests: dict[str, float]
    spread: bool
    service: bool
    web: bool  # runs in the dedicated web pool
    addresses: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class Stats:
    """What was generated, for the report."""

    counts: dict[str, int] = field(default_factory=dict)
    pending_templates: int = 0
    demand_shapes: int = 0
    ray_clusters: int = 0

    def add(self, key: str, amount: int = 1) -> None:
        self.counts[key] = self.counts.get(key, 0) + amount


class BuilderState:
    """The state every part of the builder shares, with the ids and draws they all use."""

    def __init__(self, size: Size, seed: int) -> None:
        self.size = size
        self.s = size.scale
        self.rng = random.Random(seed)
        self.stats = Stats()
        self.nodes: list[PlannedNode] = []
        self.by_pool: dict[str, list[PlannedNode]] = {}
        self.pods: list[Pod] = []
        self.plugin_pods: list[Pod] = []
        self.events: list[Event] = []
        self.services: list[Service] = []
        self.endpoints: list[Endpoints] = []
        self.pvcs: list[PersistentVolumeClaim] = []
        self.logs: list[PodLog] = []
        self.rayclusters: list[RayClusterObject] = []
        self.ray_nodes: list[RayNode] = []
        self.ray_groups: dict[str, int] = {}
        self.namespaces: list[str] = []
        self.app_namespaces: list[str] = []
        self.istio: set[str] = set()
        self.not_joined: list[Pod] = []
        self.failing: list[tuple[Pod, str]] = []
        self.pending_counts: dict[tuple[str, str], int] = {}
        self.ray_pending: list[
            tuple[RayClusterSpec, RayGroupSpec, dict[str, Any], list[dict[str, Any]], list[Any]]
        ] = []
        self.app_deployments: list[AppDeployment] = []
        self._parts: dict[str, TemplateParts] = {}
        self._serial = 0
        self._cursor: dict[str, int] = {}

    # ids and names
    def scaled(self, count: float, minimum: int = 1) -> int:
        return max(minimum, round(count * self.s))

    def suffix(self, length: int = 5) -> str:
        """Unique per call: a bijection of a counter onto base-27 strings, like Kubernetes' suffixes."""
        self._serial += 1
        number = (self._serial * 2_654_435_761) % (27**length)
        chars = []
        for _ in range(length):
            number, digit = divmod(number, 27)
            chars.append(_ALPHABET[digit])
        return "".join(chars)

    def hex(self, bits: int) -> str:
        return f"{self.rng.getrandbits(bits):0{bits // 4}x}"

    def uid(self) -> str:
        h = self.hex(128)
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:32]}"

    def template_hash(self) -> str:
        """A pod-template-hash or controller-revision-hash: ten hex digits."""
        return self.hex(40)[:10]

    def submission_id(self) -> str:
        return f"raysubmit_{self.hex(64)[:16]}"

    def ago(self, low: int, high: int) -> datetime:
        return NOW - timedelta(seconds=self.rng.randint(low, high))

    def choose(self, options: Sequence[tuple[Any, float]]) -> Any:
        values = [v for v, _ in options]
        weights = [w for _, w in options]
        return self.rng.choices(values, weights)[0]

    def add(self, pod: Pod, key: str) -> Pod:
        self.pods.append(pod)
        self.stats.add(key)
        return pod

    def place(self, pool: str, requests: Mapping[str, float]) -> PlannedNode | None:
        """First fit from a rotating cursor, so consecutive Pods spread over a pool."""
        nodes = self.by_pool[pool]
        start = self._cursor.get(pool, 0)
        for step in range(len(nodes)):
            node = nodes[(start + step) % len(nodes)]
            if node.ready and not node.unschedulable and node.fits(requests):
                self._cursor[pool] = (start + step) % len(nodes)
                return node
        return None

    def add_pvc(self, name: str, namespace: str, storage_class: str, *, bound: bool = True) -> None:
        """A claim; a bound one names its volume, a Pending one has none yet."""
        self.pvcs.append(
            PersistentVolumeClaim.model_validate(
                {
                    "name": name,
                    "namespace": namespace,
                    "phase": "Bound" if bound else "Pending",
                    "storage_class": storage_class,
                    "volume_name": f"pvc-{self.uid()}" if bound else None,
                }
            )
        )
