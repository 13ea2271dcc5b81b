"""Namespaces and Kubernetes nodes: GKE's labels, taints and reservations, and the nodes' conditions."""

from __future__ import annotations

from benchmarks.synth.common import ACCELERATOR, GPU, NODEPOOL, PRODUCT, ZONES, GiB, MiB
from benchmarks.synth.ray_specs import RAY_CLUSTERS
from benchmarks.synth.recipe import (
    ENVS,
    FIXED_NAMESPACES,
    ML_NAMESPACES,
    POOLS,
    SYSTEM_NAMESPACES,
    TEAMS,
    Pool,
)
from benchmarks.synth.state import BuilderState, PlannedNode
from bot.snapshot.kubernetes import Node


def _allocatable_cpu(cores: int) -> float:
    """GKE's CPU reservation: 6% of the first core, 1% of the next, 0.5% of the next 2, 0.25% above."""
    return round(cores - (0.08 + 0.0025 * max(0, cores - 4)), 3)


def _allocatable_memory(gib: float) -> float:
    """GKE's memory reservation (25/20/10/6/2% tiers) and the 100 MiB eviction threshold."""
    reserved, left = 0.0, gib
    for tier, rate in ((4, 0.25), (4, 0.2), (8, 0.1), (112, 0.06), (float("inf"), 0.02)):
        step = min(left, tier)
        reserved += step * rate
        left -= step
    return (gib - reserved) * GiB - 100 * MiB


class Nodes(BuilderState):
    """The namespaces, the node pools' nodes, and the Node objects a collector would read."""

    def make_namespaces(self) -> None:
        wanted = self.scaled(300, 40)
        combos = [f"{team}-{env}" for env in ENVS for team in TEAMS]
        self.rng.shuffle(combos)
        fixed = list(FIXED_NAMESPACES)
        extra = [n for n in combos if n not in fixed][: max(0, wanted - len(fixed))]
        self.app_namespaces = fixed + extra
        self.istio = {n for n in self.app_namespaces if self.rng.random() < 0.3} | {"web-prod", "shop-prod"}
        ray = [spec.namespace for spec in RAY_CLUSTERS]
        self.namespaces = list(SYSTEM_NAMESPACES) + list(ML_NAMESPACES) + ray + self.app_namespaces
        self.stats.counts["namespaces"] = len(self.namespaces)

    def make_nodes(self) -> None:
        workers = self.size.nodes - 3
        counts = {pool.name: int(pool.share * workers) for pool in POOLS}
        counts["cpu-general"] += workers - sum(counts.values())
        index = 0
        for i in range(3):
            self.add_node(index, f"gke-prod-control-plane-{i}", None)
            index += 1
        for pool in POOLS:
            group = self.hex(32)[:8]
            for _ in range(counts[pool.name]):
                self.add_node(index, f"gke-prod-{pool.name}-{group}-{self.suffix(4)}", pool)
                index += 1
        # A few NotReady nodes (kubelet gone) and GPU nodes whose device plugin is down.
        for node in self.rng.sample(self.by_pool["cpu-general"], self.scaled(4)):
            node.ready = False
            node.taints += [
                {"key": "node.kubernetes.io/not-ready", "value": "", "effect": "NoSchedule"},
                {"key": "node.kubernetes.io/unreachable", "value": "", "effect": "NoExecute"},
            ]
        gpu_nodes = [n for n in self.nodes if n.pool is not None and n.pool.gpus]
        for node in self.rng.sample(gpu_nodes, self.scaled(2)):
            node.allocatable.pop(GPU)
            node.capacity.pop(GPU)
        self.stats.counts["nodes"] = len(self.nodes)

    def add_node(self, index: int, name: str, pool: Pool | None) -> None:
        zone = ZONES[index % len(ZONES)]
        machine = pool.machine if pool else "n2-standard-16"
        labels = {
            "beta.kubernetes.io/arch": "amd64",
            "beta.kubernetes.io/instance-type": machine,
            "beta.kubernetes.io/os": "linux",
            "cloud.google.com/gke-boot-disk": "pd-balanced",
            "cloud.google.com/gke-container-runtime": "containerd",
            "cloud.google.com/gke-cpu-scaling-level": str(pool.cpu if pool else 16),
            "cloud.google.com/gke-max-pods-per-node": "110",
            NODEPOOL: pool.name if pool else "control-plane",
            "cloud.google.com/gke-os-distribution": "cos",
            "cloud.google.com/machine-family": machine.split("-")[0],
            "cloud.google.com/private-node": "false",
            "failure-domain.beta.kubernetes.io/region": "us-central1",
            "failure-domain.beta.kubernetes.io/zone": zone,
            "kubernetes.io/arch": "amd64",
            "kubernetes.io/hostname": name,
            "kubernetes.io/os": "linux",
            "node.kubernetes.io/instance-type": machine,
            "topology.gke.io/zone": zone,
            "topology.kubernetes.io/region": "us-central1",
            "topology.kubernetes.io/zone": zone,
        }
        taints: list[dict[str, str]] = []
        cores, memory = (pool.cpu, pool.memory_gib) if pool else (16, 64)
        capacity = {
            "cpu": float(cores),
            "memory": memory * GiB,
            "pods": 110.0,
            "ephemeral-storage": 100 * GiB,
            "hugepages-1Gi": 0.0,
            "hugepages-2Mi": 0.0,
        }
        allocatable = {
            "cpu": _allocatable_cpu(cores),
            "memory": _allocatable_memory(memory),
            "pods": 110.0,
            "ephemeral-storage": 87 * GiB,
            "hugepages-1Gi": 0.0,
            "hugepages-2Mi": 0.0,
        }
        if pool is None:
            labels["node-role.kubernetes.io/control-plane"] = ""
            labels["node.kubernetes.io/exclude-from-external-load-balancers"] = ""
            taints.append(
                {"key": "node-role.kubernetes.io/control-plane", "value": "", "effect": "NoSchedule"}
            )
        else:
            labels.update(dict(pool.labels))
            if pool.gpus:
                labels.update(
                    {
                        ACCELERATOR: pool.accelerator,
                        "cloud.google.com/gke-gpu": "true",
                        "cloud.google.com/gke-gpu-driver-version": "default",
                        "nvidia.com/cuda.driver.major": "535",
                        "nvidia.com/cuda.driver.minor": "161",
                        "nvidia.com/gpu.count": str(pool.gpus),
                        "nvidia.com/gpu.family": pool.ray_type.lower(),
                        "nvidia.com/gpu.machine": machine,
                        "nvidia.com/gpu.memory": str(pool.gpu_memory_mib),
                        "nvidia.com/gpu.present": "true",
                        PRODUCT: pool.product,
                    }
                )
                taints.append({"key": GPU, "value": "present", "effect": "NoSchedule"})
                capacity[GPU] = allocatable[GPU] = float(pool.gpus)
            if pool.taint:
                taints.append({"key": pool.taint[0], "value": pool.taint[1], "effect": "NoSchedule"})
            if pool.cordoned:
                taints.append(
                    {"key": "node.kubernetes.io/unschedulable", "value": "", "effect": "NoSchedule"}
                )
        node = PlannedNode(
            index=index,
            name=name,
            pool=pool,
            labels=labels,
            taints=taints,
            unschedulable=bool(pool and pool.cordoned),
            ready=True,
            capacity=capacity,
            allocatable=allocatable,
            ip=f"10.128.{index // 250}.{index % 250 + 2}",
        )
        self.nodes.append(node)
        self.by_pool.setdefault(pool.name if pool else "control-plane", []).append(node)

    def node_models_(self) -> list[Node]:
        models = []
        for node in self.nodes:
            created = self.ago(3600, 200 * 86400)
            conditions = [
                {"type": kind, "status": "False", "reason": f"KubeletHas{reason}", "last_transition": created}
                for kind, reason in (
                    ("MemoryPressure", "SufficientMemory"),
                    ("DiskPressure", "NoDiskPressure"),
                    ("PIDPressure", "SufficientPID"),
                )
            ]
            conditions.append(
                {
                    "type": "Ready",
                    "status": "True" if node.ready else "Unknown",
                    "reason": "KubeletReady" if node.ready else "NodeStatusUnknown",
                    "message": "kubelet is posting ready status"
                    if node.ready
                    else "Kubelet stopped posting node status.",
                    "last_transition": self.ago(60, 86400),
                }
            )
            conditions.append(
                {
                    "type": "NetworkUnavailable",
                    "status": "False",
                    "reason": "RouteCreated",
                    "last_transition": created,
                }
            )
            models.append(
                Node.model_validate(
                    {
                        "name": node.name,
                        "labels": node.labels,
                        "taints": node.taints,
                        "unschedulable": node.unschedulable,
                        "capacity": node.capacity,
                        "allocatable": node.allocatable,
                        "conditions": conditions,
                        "internal_ip": node.ip,
                        "created": created,
                    }
                )
            )
        return models
