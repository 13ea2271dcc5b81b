"""Synthetic snapshots of a large, busy, shared GPU cluster, for the classifier benchmark.

``build_snapshot(SIZES["full"])`` returns a ``Snapshot`` shaped like one collected live from a
production Kubernetes cluster that also runs several KubeRay clusters:

* node pools as GKE lays them out: general, high-memory, small and local-SSD CPU pools, a cordoned
  legacy pool, A100/H100/L4/T4 GPU pools (``nvidia.com/gpu.product`` and friends, the
  ``nvidia.com/gpu`` taint), three control-plane nodes, a few NotReady nodes and GPU nodes whose
  device plugin is down;
* every node carries its own ``kubernetes.io/hostname`` label, as real nodes do, so no two nodes
  look alike to the fit explainer;
* bound Pods fill the nodes from the DaemonSets up: Ray heads and workers, GPU jobs, then
  Deployments from a catalogue of request shapes until each node reaches a drawn fill level
  (a quarter of the CPU nodes end up nearly full; most GPUs are taken);
* Pending Pods come from a few dozen templates, as real ones come from ReplicaSets, Jobs and Ray
  worker groups: the Pods of one template share requests, selectors and tolerations, and each has
  a FailedScheduling event whose message is replayed from the generated node state;
* the Ray layer lists a Ray node (matched by Pod IP) for every Running Ray Pod of every RayCluster
  (a few workers never joined), ALIVE and DEAD actors, placement groups, jobs, Serve applications
  and ``demands`` entries drawn from a few hundred distinct shapes.

Every object is validated (``Model.model_validate`` on a plain dict, as a snapshot file is
loaded), and each Pod gets its own nested objects. The output is deterministic for a seed.
"""

from __future__ import annotations

import bisect
import random
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from bot.snapshot.kubernetes import (
    Endpoints,
    Event,
    KubernetesState,
    NetworkPolicy,
    Node,
    PersistentVolumeClaim,
    Pod,
    PodLog,
    RayClusterObject,
    RayJobObject,
    RayServiceObject,
    ResourceQuota,
    Service,
)
from bot.snapshot.model import Snapshot
from bot.snapshot.ray import (
    Demand,
    RayActor,
    RayJobInfo,
    RayNode,
    RayState,
    RayTask,
    ServeApplication,
)

GiB = float(1024**3)
MiB = float(1024**2)
NOW = datetime(2025, 6, 2, 9, 30, tzinfo=UTC)
FULL_NODES = 5_000
GPU = "nvidia.com/gpu"
PRODUCT = "nvidia.com/gpu.product"
ACCELERATOR = "cloud.google.com/gke-accelerator"
NODEPOOL = "cloud.google.com/gke-nodepool"
ZONES = ("us-central1-a", "us-central1-b", "us-central1-c", "us-central1-f")
A100 = "NVIDIA-A100-SXM4-40GB"
H100 = "NVIDIA-H100-80GB-HBM3"
L4 = "NVIDIA-L4"
T4 = "Tesla-T4"
RAY_IMAGE = "rayproject/ray:2.9.3-py310"
RAY_GPU_IMAGE = "rayproject/ray:2.9.3-py310-gpu"
DEFAULT_TOLERATIONS = (
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
)
GPU_TOLERATION = {"key": GPU, "operator": "Exists", "effect": "NoSchedule"}
WEB_TOLERATION = {"key": "dedicated", "operator": "Equal", "value": "web", "effect": "NoSchedule"}
WEB_NAMESPACES = ("web-prod", "shop-prod", "search-prod", "media-prod")
_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


@dataclass(frozen=True)
class Size:
    name: str
    nodes: int
    pods: int  # every Pod in the snapshot: Running, Pending and finished
    pending: int  # unscheduled Pods
    demands: int  # entries in ray.demands

    @property
    def scale(self) -> float:
        return self.nodes / FULL_NODES


SIZES: dict[str, Size] = {
    "quarter": Size("quarter", 1_250, 37_500, 250, 2_500),
    "half": Size("half", 2_500, 75_000, 500, 5_000),
    "full": Size("full", 5_000, 150_000, 1_000, 10_000),
}


# --- the cluster's recipe -------------------------------------------------------------------------


@dataclass(frozen=True)
class Pool:
    name: str
    share: float  # of the worker nodes
    machine: str
    cpu: int
    memory_gib: int
    gpus: int = 0
    product: str = ""
    accelerator: str = ""
    gpu_memory_mib: int = 0
    ray_type: str = ""  # Ray's accelerator_type
    keep_free: tuple[tuple[int, float], ...] = ()  # GPUs left free on a node: (count, probability)
    gpu_sizes: tuple[int, ...] = ()  # GPUs per Pod of the GPU jobs that run there
    cordoned: bool = False
    count_weight: float = 0.0  # relative number of application Pods per node
    labels: tuple[tuple[str, str], ...] = ()
    taint: tuple[str, ...] = ()  # a dedicated pool: key, value of its NoSchedule taint
    fill: tuple[float, ...] = ()  # CPU fill level of its nodes, when not the general mix


POOLS = (
    Pool("cpu-general", 0.39, "n2-standard-32", 32, 128, count_weight=1.0),
    # The web tier's own pool: tainted, selected by its Pods, and running at its limit.
    Pool(
        "cpu-web",
        0.06,
        "n2-standard-16",
        16,
        64,
        count_weight=0.9,
        labels=(("dedicated", "web"),),
        taint=("dedicated", "web"),
        fill=(0.985, 1.0),
    ),
    Pool("cpu-highmem", 0.15, "n2-highmem-64", 64, 512, count_weight=1.6),
    Pool("cpu-small", 0.14, "e2-standard-8", 8, 32, count_weight=0.45),
    Pool(
        "cpu-storage",
        0.02,
        "n2-standard-16",
        16,
        64,
        count_weight=0.6,
        labels=(("cloud.google.com/gke-local-nvme-ssd", "true"), ("workload-class", "stateful")),
    ),
    Pool("cpu-legacy", 0.01, "n1-standard-16", 16, 60, cordoned=True, count_weight=0.8),
    Pool(
        "gpu-a100",
        0.08,
        "a2-highgpu-8g",
        96,
        680,
        8,
        A100,
        "nvidia-tesla-a100",
        40960,
        "A100",
        keep_free=((0, 0.8), (1, 0.08), (2, 0.06), (3, 0.06)),
        gpu_sizes=(1, 2, 4, 8),
    ),
    Pool(
        "gpu-h100",
        0.04,
        "a3-highgpu-8g",
        208,
        1872,
        8,
        H100,
        "nvidia-h100-80gb",
        81559,
        "H100",
        keep_free=((0, 0.55), (1, 0.15), (2, 0.1), (3, 0.08), (4, 0.07), (6, 0.05)),
        gpu_sizes=(1, 2, 4, 8),
    ),
    Pool(
        "gpu-l4",
        0.07,
        "g2-standard-48",
        48,
        192,
        4,
        L4,
        "nvidia-l4",
        23034,
        "L4",
        keep_free=((0, 1.0),),
        gpu_sizes=(1, 2, 4),
    ),
    Pool(
        "gpu-t4",
        0.04,
        "n1-standard-16",
        16,
        60,
        2,
        T4,
        "nvidia-tesla-t4",
        15360,
        "T4",
        keep_free=((0, 1.0),),
        gpu_sizes=(1, 2),
    ),
)
POOL = {pool.name: pool for pool in POOLS}

# DaemonSets: namespace, name, GPU nodes only, containers (name, image, cpu, memory MiB).
DAEMONSETS = (
    ("kube-system", "kube-proxy", False, (("kube-proxy", "registry.k8s.io/kube-proxy:v1.29.4", 0.1, 0),)),
    (
        "kube-system",
        "fluentbit-gke",
        False,
        (
            ("fluentbit", "gke.gcr.io/fluent-bit:v1.8.12-gke.25", 0.1, 200),
            ("fluentbit-gke", "gke.gcr.io/fluent-bit-gke-exporter:v0.24.0-gke.1", 0.005, 50),
        ),
    ),
    (
        "kube-system",
        "pdcsi-node",
        False,
        (
            ("csi-driver-registrar", "gke.gcr.io/csi-node-driver-registrar:v2.9.0-gke.3", 0.005, 10),
            ("gce-pd-driver", "gke.gcr.io/gcp-compute-persistent-disk-csi-driver:v1.12.4", 0.005, 10),
        ),
    ),
    ("kube-system", "netd", False, (("netd", "gke.gcr.io/netd:v0.5.2-gke.1", 0.004, 30),)),
    (
        "monitoring",
        "node-exporter",
        False,
        (("node-exporter", "quay.io/prometheus/node-exporter:v1.7.0", 0.05, 64),),
    ),
    (
        "gpu-operator",
        "nvidia-device-plugin-daemonset",
        True,
        (("nvidia-device-plugin", "nvcr.io/nvidia/k8s-device-plugin:v0.14.5", 0.05, 64),),
    ),
    (
        "gpu-operator",
        "nvidia-dcgm-exporter",
        True,
        (("nvidia-dcgm-exporter", "nvcr.io/nvidia/k8s/dcgm-exporter:3.3.5-3.4.0-ubuntu22.04", 0.1, 512),),
    ),
)

# Application request shapes (cores, GiB), smallest first.
SHAPES = (
    (0.01, 0.03),
    (0.02, 0.06),
    (0.05, 0.0625),
    (0.05, 0.125),
    (0.1, 0.125),
    (0.1, 0.25),
    (0.1, 0.5),
    (0.15, 0.25),
    (0.2, 0.25),
    (0.2, 0.5),
    (0.25, 0.25),
    (0.25, 0.5),
    (0.25, 1.0),
    (0.3, 0.5),
    (0.4, 0.75),
    (0.5, 0.5),
    (0.5, 1.0),
    (0.5, 2.0),
    (0.75, 1.0),
    (0.75, 2.0),
    (1.0, 1.0),
    (1.0, 2.0),
    (1.0, 4.0),
    (1.5, 2.0),
    (1.5, 4.0),
    (2.0, 2.0),
    (2.0, 4.0),
    (2.0, 8.0),
    (3.0, 6.0),
    (3.0, 12.0),
    (4.0, 4.0),
    (4.0, 8.0),
    (4.0, 16.0),
    (6.0, 12.0),
    (6.0, 24.0),
    (8.0, 16.0),
    (8.0, 32.0),
    (12.0, 24.0),
    (12.0, 48.0),
    (16.0, 32.0),
    (16.0, 64.0),
    (24.0, 96.0),
)

_TEAM_WORDS = (
    "accounts ads alerts analytics api apollo atlas audit auth billing blog booking cache cart catalog "
    "chat checkout cms compliance comms content crm data delivery discovery docs email events experiments "
    "feeds finance fleet forecast fraud gateway geo growth helpdesk hermes identity images infra "
    "insights inventory invoices iot kyc labels ledger legal logistics loyalty maps marketing media "
    "metrics mobile notify onboarding orders partners payments payroll pricing profile promo quotes "
    "ranking ratings recsys refunds reports reviews risk routing sales scheduler search security "
    "sellers shipping shop signup social sso storage streaming subscriptions support sync tax "
    "telemetry tickets tracking translate travel trust users vault video voice wallet warehouse web "
    "wiki workflow"
)
TEAMS = tuple(_TEAM_WORDS.split())
ENVS = ("prod", "staging", "dev")
_ROLE_WORDS = (
    "api worker web frontend backend consumer producer scheduler sync indexer gateway proxy cache "
    "exporter cron reconciler notifier renderer resolver collector aggregator uploader importer"
)
WORDS = tuple(_ROLE_WORDS.split())
SYSTEM_NAMESPACES = (
    "kube-system",
    "gpu-operator",
    "monitoring",
    "logging",
    "istio-system",
    "cert-manager",
    "ingress-nginx",
    "kuberay-system",
    "kueue-system",
)
ML_NAMESPACES = ("ml-training", "ml-inference", "ml-research", "ml-platform", "notebooks")
FIXED_NAMESPACES = (
    "web-prod",
    "shop-prod",
    "search-prod",
    "reco-prod",
    "media-prod",
    "analytics-prod",
    "billing-prod",
    "finance-prod",
    "data-streaming",
    "db-prod",
    "ci",
    "data-batch",
    "payments-prod",
)


@dataclass(frozen=True)
class RayGroupSpec:
    name: str
    pool: str
    cpu: float
    memory_gib: float
    gpus: int = 0
    replicas: int = 0  # Running workers at full size
    pending: float = 0.0  # weight in the mix of Pending Pods
    at_max: bool = False  # the group already has max_replicas Pods
    selector: tuple[tuple[str, str], ...] = ()
    tolerate_gpu: bool = True
    gpu_resource: str = GPU
    start_params: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class RayClusterSpec:
    name: str
    namespace: str
    groups: tuple[RayGroupSpec, ...]
    owner: str = ""  # RayService / RayJob that owns the cluster
    worker_image: str = ""  # default: the CPU or GPU image of the head's version


RAY_CLUSTERS = (
    RayClusterSpec(
        "llm-train",
        "ray-llm",
        (
            RayGroupSpec("h100-workers", "gpu-h100", 200, 1700, 8, 40, 6, selector=((PRODUCT, H100),)),
            # No node carries this product label: the Pods wait for a GPU model that is not here.
            RayGroupSpec(
                "h200-workers", "gpu-h100", 200, 1700, 8, 0, 2, selector=((PRODUCT, "NVIDIA-H200"),)
            ),
            RayGroupSpec(
                "cpu-workers", "cpu-general", 16, 60, 0, 40, 3, selector=((NODEPOOL, "cpu-general"),)
            ),
        ),
    ),
    RayClusterSpec(
        "batch-infer",
        "ray-inference",
        (
            RayGroupSpec(
                "a100-workers",
                "gpu-a100",
                44,
                300,
                4,
                60,
                5,
                at_max=True,
                selector=((ACCELERATOR, "nvidia-tesla-a100"),),
            ),
        ),
        owner="RayJob",
    ),
    RayClusterSpec(
        "embeddings",
        "ray-embed",
        (
            RayGroupSpec("l4-workers", "gpu-l4", 44, 170, 4, 30, 4, selector=((PRODUCT, L4),)),
            # num-gpus "0": the Pods get GPUs, Ray is told there are none.
            RayGroupSpec(
                "l4-debug",
                "gpu-l4",
                20,
                80,
                2,
                4,
                selector=((PRODUCT, L4),),
                start_params=(("num-gpus", "0"),),
            ),
        ),
    ),
    RayClusterSpec(
        "rl-research",
        "ray-rl",
        (
            RayGroupSpec(
                "rollout-workers", "cpu-highmem", 32, 250, 0, 60, 4, selector=((NODEPOOL, "cpu-highmem"),)
            ),
            RayGroupSpec(
                "t4-workers", "gpu-t4", 14, 50, 2, 60, 3, selector=((ACCELERATOR, "nvidia-tesla-t4"),)
            ),
        ),
    ),
    RayClusterSpec(
        "vision-train",
        "ray-vision",
        (
            # Declares A100 to Ray while selecting H100 nodes.
            RayGroupSpec(
                "h100-workers",
                "gpu-h100",
                200,
                1700,
                8,
                24,
                2,
                selector=((PRODUCT, H100),),
                start_params=(("resources", '"{\\"accelerator_type:A100\\": 1}"'),),
            ),
        ),
    ),
    RayClusterSpec("data-prep", "ray-data", (RayGroupSpec("cpu-workers", "cpu-general", 4, 16, 0, 120, 4),)),
    RayClusterSpec(
        "serve-prod",
        "ray-serve",
        (
            RayGroupSpec(
                "a100-1g", "gpu-a100", 10, 80, 1, 80, 3, selector=((ACCELERATOR, "nvidia-tesla-a100"),)
            ),
            RayGroupSpec(
                "mig-workers",
                "gpu-a100",
                8,
                40,
                1,
                0,
                1,
                selector=((ACCELERATOR, "nvidia-tesla-a100"),),
                gpu_resource="nvidia.com/mig-1g.10gb",
            ),
        ),
        owner="RayService",
    ),
    RayClusterSpec(
        "notebook-shared",
        "ray-notebooks",
        (
            RayGroupSpec("cpu-small", "cpu-small", 2, 8, 0, 4, 1, selector=((NODEPOOL, "cpu-small"),)),
            # A GPU group without the toleration for the GPU taint.
            RayGroupSpec(
                "t4-notol",
                "gpu-t4",
                6,
                24,
                1,
                0,
                2,
                selector=((ACCELERATOR, "nvidia-tesla-t4"),),
                tolerate_gpu=False,
            ),
        ),
        worker_image="rayproject/ray:2.9.0-py310",  # head runs 2.9.3
    ),
)


@dataclass(frozen=True)
class PendingSpec:
    """A controller whose Pods wait: every Pod of it has the same scheduling constraints."""

    owner: str
    namespace: str
    kind: str  # Deployment | Job | StatefulSet | PyTorchJob | SparkApplication
    weight: float
    cpu: float
    memory_gib: float
    gpus: float = 0.0
    extra: tuple[tuple[str, float], ...] = ()
    selector: tuple[tuple[str, str], ...] = ()
    terms: tuple[tuple[str, str, tuple[str, ...]], ...] = ()
    tolerate_gpu: bool = False
    web: bool = False  # runs in the dedicated web pool: its selector and toleration
    sidecar: bool = False
    pvc: str = ""  # "" | "bound" | "unbound"
    gated: bool = False
    anti_affinity: bool = False
    scale_up: str = ""  # the cluster-autoscaler's NotTriggerScaleUp message


A100_SELECTOR = ((ACCELERATOR, "nvidia-tesla-a100"),)
PENDING = (
    PendingSpec(
        "llama-finetune",
        "ml-training",
        "PyTorchJob",
        5,
        90,
        600,
        8,
        selector=A100_SELECTOR,
        tolerate_gpu=True,
        scale_up="pod didn't trigger scale-up: 1 max node group size reached, 7 node(s) didn't match Pod's "
        "node affinity/selector",
    ),
    PendingSpec(
        "sd-inference",
        "ml-inference",
        "Deployment",
        6,
        8,
        40,
        1,
        selector=((PRODUCT, L4),),
        tolerate_gpu=True,
    ),
    PendingSpec("gpu-smoke-test", "ml-platform", "Job", 2, 4, 16, 1),
    PendingSpec(
        "llm-eval", "ml-research", "Job", 2, 20, 160, 2, selector=((PRODUCT, H100),), tolerate_gpu=True
    ),
    PendingSpec(
        "embedding-batch",
        "ml-inference",
        "Job",
        2,
        10,
        40,
        1,
        selector=((ACCELERATOR, "nvidia-h200"),),
        tolerate_gpu=True,
        scale_up="pod didn't trigger scale-up: 9 node(s) didn't match Pod's node affinity/selector",
    ),
    PendingSpec(
        "eval-batch", "ml-research", "Job", 3, 8, 60, 1, selector=A100_SELECTOR, tolerate_gpu=True, gated=True
    ),
    PendingSpec(
        "jupyter-gpu",
        "notebooks",
        "StatefulSet",
        3,
        4,
        16,
        1,
        selector=((ACCELERATOR, "nvidia-tesla-t4"),),
        tolerate_gpu=True,
        pvc="bound",
    ),
    PendingSpec("feature-store-api", "web-prod", "Deployment", 10, 1, 2, web=True, sidecar=True),
    PendingSpec("checkout", "shop-prod", "Deployment", 8, 2, 4, web=True, sidecar=True),
    PendingSpec("search-indexer", "search-prod", "Deployment", 6, 1.5, 3, web=True),
    PendingSpec("graphql-gateway", "web-prod", "Deployment", 5, 1.5, 3, web=True, sidecar=True),
    PendingSpec("thumbnailer", "media-prod", "Deployment", 4, 1.25, 1, web=True),
    PendingSpec(
        "recommendations", "reco-prod", "Deployment", 5, 48, 96, selector=((NODEPOOL, "cpu-highmem"),)
    ),
    # Asks for all 8 cores of an 8-core machine type: more than any of them has allocatable.
    PendingSpec("video-transcode", "media-prod", "Deployment", 3, 8, 16, selector=((NODEPOOL, "cpu-small"),)),
    PendingSpec(
        "analytics-warehouse",
        "analytics-prod",
        "Deployment",
        2,
        16,
        900,
        scale_up="pod didn't trigger scale-up: 12 Insufficient memory, 3 max node group size reached",
    ),
    PendingSpec(
        "legacy-billing", "billing-prod", "Deployment", 2, 2, 4, selector=((NODEPOOL, "cpu-legacy"),)
    ),
    PendingSpec("finance-batch", "finance-prod", "Job", 2, 4, 8, selector=(("dedicated", "finance"),)),
    PendingSpec(
        "kafka",
        "data-streaming",
        "StatefulSet",
        1,
        4,
        16,
        selector=((NODEPOOL, "cpu-storage"),),
        anti_affinity=True,
    ),
    PendingSpec("postgres-replica", "db-prod", "StatefulSet", 1, 2, 8, pvc="unbound"),
    PendingSpec(
        "spark-executor",
        "analytics-prod",
        "SparkApplication",
        5,
        4,
        28,
        selector=((NODEPOOL, "cpu-highmem"),),
    ),
    PendingSpec("ci-runner", "ci", "Job", 2, 2, 8, extra=(("ephemeral-storage", 50 * GiB),)),
    PendingSpec(
        "nightly-etl",
        "data-batch",
        "Job",
        4,
        6,
        20,
        selector=((NODEPOOL, "cpu-small"),),
        scale_up="pod didn't trigger scale-up: 1 max node group size reached, 8 node(s) didn't match Pod's "
        "node affinity/selector",
    ),
    PendingSpec(
        "zone-pinned-api",
        "payments-prod",
        "Deployment",
        2,
        2,
        4,
        terms=(
            ("topology.kubernetes.io/zone", "In", ("us-central1-a",)),
            ("node.kubernetes.io/instance-type", "In", ("n2-standard-32",)),
        ),
    ),
    PendingSpec(
        "ledger",
        "payments-prod",
        "Deployment",
        2,
        1,
        2,
        terms=(
            ("cloud.google.com/gke-spot", "DoesNotExist", ()),
            (NODEPOOL, "In", ("cpu-general", "cpu-highmem")),
        ),
    ),
)


# --- small helpers ----------------------------------------------------------------------------------


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


def _container(
    name: str,
    image: str,
    requests: Mapping[str, float],
    limits: Mapping[str, float] | None = None,
    *,
    env: Sequence[str] = (),
    command: Sequence[str] = (),
) -> dict[str, Any]:
    return {
        "name": name,
        "image": image,
        "requests": {k: v for k, v in requests.items() if v},
        "limits": dict(limits if limits is not None else {}),
        "env_names": list(env),
        "command": list(command),
    }


def _effective(
    containers: Iterable[Mapping[str, Any]], init: Iterable[Mapping[str, Any]]
) -> dict[str, float]:
    total: dict[str, float] = {}
    for container in containers:
        for resource, amount in container["requests"].items():
            total[resource] = total.get(resource, 0.0) + amount
    for container in init:
        for resource, amount in container["requests"].items():
            total[resource] = max(total.get(resource, 0.0), amount)
    return total


def _requests(cpu: float, memory_gib: float, **extra: float) -> dict[str, float]:
    found = {"cpu": cpu, "memory": memory_gib * GiB}
    found.update({k: v for k, v in extra.items() if v})
    return {k: v for k, v in found.items() if v}


def _tolerates(tolerations: Sequence[Mapping[str, Any]], taint: Mapping[str, str]) -> bool:
    for toleration in tolerations:
        if toleration.get("effect") and toleration["effect"] != taint["effect"]:
            continue
        if toleration.get("operator") == "Exists":
            if toleration.get("key") in (None, "", taint["key"]):
                return True
        elif toleration.get("key") == taint["key"] and toleration.get("value", "") == taint["value"]:
            return True
    return False


def _matches(labels: Mapping[str, str], selector: Mapping[str, str], terms: Sequence[Any]) -> bool:
    if any(labels.get(k) != v for k, v in selector.items()):
        return False
    for key, operator, values in terms:
        value = labels.get(key)
        if operator == "In" and value not in values:
            return False
        if operator == "NotIn" and value in values:
            return False
        if operator == "DoesNotExist" and value is not None:
            return False
        if operator == "Exists" and value is None:
            return False
    return True


def _gib(amount: float) -> str:
    return f"{amount / GiB:g}Gi"


@dataclass(eq=False)
class _Node:
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
class _Deployment:
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


# --- the builder ------------------------------------------------------------------------------------


class _Builder:
    def __init__(self, size: Size, seed: int) -> None:
        self.size = size
        self.s = size.scale
        self.rng = random.Random(seed)
        self.stats = Stats()
        self.nodes: list[_Node] = []
        self.by_pool: dict[str, list[_Node]] = {}
        self.node_models: list[Node] = []
        self.pods: list[Pod] = []
        self.plugin_pods: list[Pod] = []
        self.events: list[Event] = []
        self.services: list[Service] = []
        self.endpoints: list[Endpoints] = []
        self.pvcs: list[PersistentVolumeClaim] = []
        self.logs: list[PodLog] = []
        self.rayclusters: list[RayClusterObject] = []
        self.ray_nodes: list[RayNode] = []
        self.ray_node_pool: dict[str, str] = {}  # node_id -> pool name
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
        self.app_deployments: list[_Deployment] = []
        self._parts: dict[
            str, tuple[list[dict[str, Any]], list[dict[str, Any]], list[Any], dict[str, str], str]
        ] = {}
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

    def ago(self, low: int, high: int) -> datetime:
        return NOW - timedelta(seconds=self.rng.randint(low, high))

    def choose(self, options: Sequence[tuple[Any, float]]) -> Any:
        values = [v for v, _ in options]
        weights = [w for _, w in options]
        return self.rng.choices(values, weights)[0]

    # --- namespaces and nodes -------------------------------------------------------------------
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
        node = _Node(
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

    # --- Pods -----------------------------------------------------------------------------------
    def pod(
        self,
        *,
        name: str,
        namespace: str,
        labels: Mapping[str, str],
        owner: tuple[str, str] | None,
        containers: list[dict[str, Any]],
        init: Sequence[dict[str, Any]] = (),
        node: _Node | None = None,
        tolerations: Sequence[Mapping[str, Any]] = DEFAULT_TOLERATIONS,
        selector: Mapping[str, str] | None = None,
        terms: Sequence[Any] = (),
        affinity: Sequence[Mapping[str, Any]] = (),
        pvcs: Sequence[str] = (),
        phase: str | None = None,
        failure: str = "",
        deleting: bool = False,
        spread: bool = False,
        gates: Sequence[str] = (),
        scheduler_message: str = "",
        created: datetime | None = None,
        charge: bool = True,
    ) -> Pod:
        """A Pod as the API returns it: bound and Running (or failing) with a node, else Pending."""
        requests = _effective(containers, init)
        created = created or self.ago(300, 60 * 86400)
        ip = None
        if node is not None and charge:
            ip = node.take(requests)
        conditions: list[dict[str, Any]]
        statuses: list[dict[str, Any]] = []
        status_reason = None
        if node is None:
            phase = "Pending"
            conditions = [
                {
                    "type": "PodScheduled",
                    "status": "False",
                    "reason": "SchedulingGated" if gates else "Unschedulable",
                    "message": "Scheduling is blocked due to non-empty scheduling gates"
                    if gates
                    else scheduler_message,
                    "last_transition": created,
                }
            ]
        elif phase in ("Succeeded", "Failed"):
            conditions = [
                {"type": kind, "status": "False", "reason": "PodCompleted", "last_transition": created}
                for kind in ("Ready", "ContainersReady")
            ]
            conditions.append({"type": "PodScheduled", "status": "True", "last_transition": created})
            evicted = phase == "Failed"
            status_reason = "Evicted" if evicted else None
            statuses = [
                {
                    "name": c["name"],
                    "state": "terminated",
                    "reason": "Error" if evicted else "Completed",
                    "exit_code": 137 if evicted else 0,
                    "image": c["image"],
                }
                for c in containers
            ]
        else:
            ready = not failure
            phase = "Pending" if failure in ("image-pull", "config") else "Running"
            started = created + timedelta(seconds=self.rng.randint(2, 90))
            conditions = [
                {"type": kind, "status": "True", "last_transition": started}
                for kind in ("PodReadyToStartContainers", "Initialized")
            ]
            conditions += [
                {
                    "type": kind,
                    "status": "True" if ready else "False",
                    "reason": None if ready else "ContainersNotReady",
                    "last_transition": started,
                }
                for kind in ("Ready", "ContainersReady")
            ]
            conditions.append({"type": "PodScheduled", "status": "True", "last_transition": created})
            statuses = [
                {
                    "name": c["name"],
                    "init": True,
                    "state": "terminated",
                    "reason": "Completed",
                    "exit_code": 0,
                }
                for c in init
            ]
            for position, c in enumerate(containers):
                status: dict[str, Any] = {
                    "name": c["name"],
                    "ready": ready,
                    "restart_count": self.choose(((0, 0.9), (1, 0.07), (2, 0.03))),
                    "state": "running",
                    "image": c["image"],
                }
                if failure and position == 0:
                    status.update(self.failure_status(failure, c["image"]))
                statuses.append(status)
        return Pod.model_validate(
            {
                "name": name,
                "namespace": namespace,
                "uid": self.uid(),
                "phase": phase,
                "node_name": node.name if node else None,
                "pod_ip": ip,
                "host_ip": node.ip if node and ip else None,
                "labels": labels,
                "owner": {"kind": owner[0], "name": owner[1]} if owner else None,
                "created": created,
                "deleting": deleting,
                "scheduler_name": "default-scheduler",
                "scheduling_gates": list(gates),
                "containers": containers,
                "init_containers": list(init),
                "requests": requests,
                "node_selector": dict(selector or {}),
                "required_node_terms": [
                    {
                        "match_expressions": [
                            {"key": k, "operator": op, "values": list(v)} for k, op, v in terms
                        ]
                    }
                ]
                if terms
                else [],
                "tolerations": list(tolerations),
                "pvc_names": list(pvcs),
                "pod_affinity_terms": list(affinity),
                "has_topology_spread": spread,
                "conditions": conditions,
                "container_statuses": statuses,
                "status_reason": status_reason,
            }
        )

    def failure_status(self, failure: str, image: str) -> dict[str, Any]:
        if failure == "crash-loop":
            return {
                "state": "waiting",
                "reason": "CrashLoopBackOff",
                "message": f"back-off 5m0s restarting failed container=app pod=({image})",
                "restart_count": self.rng.randint(5, 400),
                "last_terminated_reason": self.choose((("Error", 0.7), ("OOMKilled", 0.3))),
                "exit_code": None,
            }
        if failure == "image-pull":
            return {
                "state": "waiting",
                "reason": "ImagePullBackOff",
                "message": f'Back-off pulling image "{image}"',
                "restart_count": 0,
            }
        return {
            "state": "waiting",
            "reason": "CreateContainerConfigError",
            "message": 'configmap "app-config" not found',
            "restart_count": 0,
        }

    def add(self, pod: Pod, key: str) -> Pod:
        self.pods.append(pod)
        self.stats.add(key)
        return pod

    def place(self, pool: str, requests: Mapping[str, float]) -> _Node | None:
        """First fit from a rotating cursor, so consecutive Pods spread over a pool."""
        nodes = self.by_pool[pool]
        start = self._cursor.get(pool, 0)
        for step in range(len(nodes)):
            node = nodes[(start + step) % len(nodes)]
            if node.ready and not node.unschedulable and node.fits(requests):
                self._cursor[pool] = (start + step) % len(nodes)
                return node
        return None

    # --- DaemonSets and the control plane ---------------------------------------------------------
    def daemonsets(self) -> None:
        for namespace, name, gpu_only, specs in DAEMONSETS:
            revision = self.hex(40)[:10]
            containers = [
                _container(
                    c, image, _requests(cpu, memory / 1024), {"memory": memory * MiB * 2} if memory else {}
                )
                for c, image, cpu, memory in specs
            ]
            tolerations = (
                [GPU_TOLERATION, {"key": "CriticalAddonsOnly", "operator": "Exists"}]
                if gpu_only
                else [{"operator": "Exists"}]
            )
            for node in self.nodes:
                is_gpu = node.pool is not None and node.pool.gpus > 0
                if gpu_only and not is_gpu:
                    continue
                broken = gpu_only and GPU not in node.allocatable and name.startswith("nvidia-device-plugin")
                pod = self.pod(
                    name=f"{name}-{self.suffix()}",
                    namespace=namespace,
                    labels={
                        "k8s-app": name,
                        "controller-revision-hash": revision,
                        "pod-template-generation": "4",
                    },
                    owner=("DaemonSet", name),
                    containers=[dict(c) for c in containers],
                    node=node,
                    tolerations=tolerations,
                    selector={"nvidia.com/gpu.present": "true"} if gpu_only else None,
                    failure="crash-loop" if broken else "",
                    created=self.ago(86400, 90 * 86400),
                )
                self.add(pod, "pods_daemonset")
                if name.startswith("nvidia-device-plugin"):
                    self.plugin_pods.append(pod)

    def control_plane(self) -> None:
        for node in self.by_pool["control-plane"]:
            for component, cpu, memory in (
                ("etcd", 0.1, 0.1),
                ("kube-apiserver", 0.25, 1.0),
                ("kube-controller-manager", 0.2, 0.25),
                ("kube-scheduler", 0.1, 0.125),
            ):
                container = _container(
                    component, f"registry.k8s.io/{component}:v1.29.4", _requests(cpu, memory)
                )
                pod = self.pod(
                    name=f"{component}-{node.name}",
                    namespace="kube-system",
                    labels={"component": component, "tier": "control-plane"},
                    owner=("Node", node.name),
                    containers=[container],
                    node=node,
                    tolerations=[{"operator": "Exists", "effect": "NoExecute"}],
                    created=self.ago(86400, 90 * 86400),
                )
                self.add(pod, "pods_control_plane")

    # --- Ray ------------------------------------------------------------------------------------
    def ray_clusters(self) -> None:
        self.stats.ray_clusters = len(RAY_CLUSTERS)
        for spec in RAY_CLUSTERS:
            self.ray_cluster(spec)

    def ray_labels(self, cluster: str, group: str, node_type: str) -> dict[str, str]:
        return {
            "app.kubernetes.io/created-by": "kuberay-operator",
            "app.kubernetes.io/name": "kuberay",
            "ray.io/cluster": cluster,
            "ray.io/group": group,
            "ray.io/identifier": f"{cluster}-{node_type}",
            "ray.io/is-ray-node": "yes",
            "ray.io/node-type": node_type,
        }

    def ray_container(
        self, spec: RayClusterSpec, group: RayGroupSpec | None, image: str
    ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        env = [
            "RAY_CLUSTER_NAME",
            "RAY_CLOUD_INSTANCE_ID",
            "RAY_NODE_TYPE_NAME",
            "KUBERAY_GEN_RAY_START_CMD",
            "RAY_PORT",
            "RAY_ADDRESS",
            "RAY_USAGE_STATS_KUBERAY_IN_USE",
            "RAY_USAGE_STATS_EXTRA_TAGS",
            "REDIS_PASSWORD",
            "RAY_DASHBOARD_ENABLE_K8S_DISK_USAGE",
            "FQ_RAY_IP",
            "RAY_IP",
        ]
        if group is None:
            requests = _requests(8, 32)
            start = (
                "ray start --head --dashboard-host=0.0.0.0 --num-cpus=0 --metrics-export-port=8080 --block"
            )
            return (
                _container(
                    "ray-head",
                    image,
                    requests,
                    dict(requests),
                    env=env,
                    command=["/bin/bash", "-lc", "--", start],
                ),
                [],
            )
        requests = _requests(group.cpu, group.memory_gib)
        if group.gpus:
            requests[group.gpu_resource] = float(group.gpus)
        address = f"{spec.name}-head-svc.{spec.namespace}.svc.cluster.local:6379"
        start = f"ray start --address={address} --metrics-export-port=8080 --block"
        init = _container(
            "wait-gcs-ready",
            image,
            _requests(0.2, 0.25),
            _requests(0.2, 0.25),
            env=["FQ_RAY_IP", "RAY_IP"],
            command=[
                "/bin/bash",
                "-lc",
                "--",
                f"until ray health-check --address {address}; do sleep 5; done",
            ],
        )
        return (
            _container(
                "ray-worker",
                image,
                requests,
                dict(requests),
                env=env,
                command=["/bin/bash", "-lc", "--", start],
            ),
            [init],
        )

    def ray_resources(self, group: RayGroupSpec | None, pool: Pool, ip: str) -> dict[str, float]:
        if group is None:
            memory = 32 * GiB
            return {
                "memory": memory,
                "object_store_memory": round(memory * 0.3),
                f"node:{ip}": 1.0,
                "node:__internal_head__": 1.0,
            }
        params = dict(group.start_params)
        memory = group.memory_gib * GiB
        found = {"CPU": float(group.cpu), "memory": memory, "object_store_memory": round(memory * 0.3)}
        gpus = float(params.get("num-gpus", group.gpus if group.gpu_resource == GPU else 0))
        if gpus:
            found["GPU"] = gpus
            found[f"accelerator_type:{pool.ray_type}"] = 1.0
        if "resources" in params:
            found["accelerator_type:A100"] = 1.0
        found[f"node:{ip}"] = 1.0
        return found

    def ray_cluster(self, spec: RayClusterSpec) -> None:
        head_image = RAY_IMAGE
        workers: list[dict[str, Any]] = []
        head_container, _ = self.ray_container(spec, None, head_image)
        head_node = self.place("cpu-highmem", _effective([head_container], []))
        assert head_node is not None
        head = self.pod(
            name=f"{spec.name}-head-{self.suffix()}",
            namespace=spec.namespace,
            labels=self.ray_labels(spec.name, "headgroup", "head"),
            owner=("RayCluster", spec.name),
            containers=[head_container],
            node=head_node,
            selector={NODEPOOL: "cpu-highmem"},
        )
        self.add(head, "pods_ray")
        self.add_ray_node(head, None, POOL["cpu-highmem"], spec.name)
        ready = 0
        for group in spec.groups:
            pool = POOL[group.pool]
            image = spec.worker_image or (RAY_GPU_IMAGE if group.gpus else RAY_IMAGE)
            container, init = self.ray_container(spec, group, image)
            running = self.scaled(group.replicas) if group.replicas else 0
            tolerations = (
                [*DEFAULT_TOLERATIONS, GPU_TOLERATION] if group.gpus and group.tolerate_gpu else None
            )
            for _ in range(running):
                requests = _effective([container], init)
                node = self.place(group.pool, requests)
                if node is None:
                    raise RuntimeError(f"no room for a {spec.name}/{group.name} worker in {group.pool}")
                pod = self.pod(
                    name=f"{spec.name}-{group.name}-worker-{self.suffix()}",
                    namespace=spec.namespace,
                    labels=self.ray_labels(spec.name, group.name, "worker"),
                    owner=("RayCluster", spec.name),
                    containers=[dict(container)],
                    init=[dict(c) for c in init],
                    node=node,
                    tolerations=tolerations or DEFAULT_TOLERATIONS,
                    selector=dict(group.selector),
                )
                self.add(pod, "pods_ray")
                ready += 1
                if (
                    group.name == "cpu-workers"
                    and spec.name == "data-prep"
                    and len(self.not_joined) < self.scaled(3)
                ):
                    self.not_joined.append(pod)  # Running, never registered with the GCS
                    continue
                self.add_ray_node(pod, group, pool, spec.name)
            pending = self.pending_counts.get((spec.name, group.name), 0)
            desired = running + pending
            workers.append(
                {
                    "name": group.name,
                    "replicas": desired,
                    "min_replicas": 0,
                    "max_replicas": desired if group.at_max else desired + self.scaled(8),
                    "ray_start_params": dict(group.start_params),
                    "node_selector": dict(group.selector),
                    "tolerations": tolerations or [],
                    "containers": [container],
                }
            )
            if pending:
                self.ray_pending.append(
                    (spec, group, container, init, tolerations or list(DEFAULT_TOLERATIONS))
                )
        self.rayclusters.append(
            RayClusterObject.model_validate(
                {
                    "name": spec.name,
                    "namespace": spec.namespace,
                    "ray_version": "2.9.3",
                    "autoscaling": True,
                    "head": {
                        "name": "headgroup",
                        "is_head": True,
                        "replicas": 1,
                        "ray_start_params": {"dashboard-host": "0.0.0.0", "num-cpus": "0"},
                        "node_selector": {NODEPOOL: "cpu-highmem"},
                        "containers": [head_container],
                    },
                    "worker_groups": workers,
                    "state": "ready",
                    "conditions": [
                        {"type": "HeadPodReady", "status": "True", "reason": "HeadPodRunningAndReady"},
                        {
                            "type": "RayClusterProvisioned",
                            "status": "True",
                            "reason": "AllPodRunningAndReadyFirstTime",
                        },
                    ],
                    "ready_workers": ready,
                    "desired_workers": sum(w["replicas"] for w in workers),
                    "owner": {"kind": spec.owner, "name": spec.name} if spec.owner else None,
                }
            )
        )
        service = f"{spec.name}-head-svc"
        self.services.append(
            Service.model_validate(
                {
                    "name": service,
                    "namespace": spec.namespace,
                    "cluster_ip": f"10.96.{len(self.services) // 250}.{len(self.services) % 250 + 2}",
                    "selector": {"ray.io/cluster": spec.name, "ray.io/node-type": "head"},
                    "ports": [
                        {"name": "gcs-server", "port": 6379, "target_port": "6379"},
                        {"name": "dashboard", "port": 8265, "target_port": "8265"},
                        {"name": "client", "port": 10001, "target_port": "10001"},
                        {"name": "metrics", "port": 8080, "target_port": "8080"},
                        {"name": "serve", "port": 8000, "target_port": "8000"},
                    ],
                }
            )
        )
        self.endpoints.append(
            Endpoints.model_validate(
                {
                    "name": service,
                    "namespace": spec.namespace,
                    "addresses": [{"ip": head.pod_ip, "pod": head.name, "ready": True}],
                    "ports": [6379, 8265, 10001, 8080, 8000],
                }
            )
        )
        self.logs.append(self.head_log(head))

    def add_ray_node(self, pod: Pod, group: RayGroupSpec | None, pool: Pool, cluster: str) -> None:
        assert pod.pod_ip is not None
        node_id = self.hex(224)
        total = self.ray_resources(group, pool, pod.pod_ip)
        name = group.name if group else "headgroup"
        self.ray_groups[f"{cluster}/{name}"] = self.ray_groups.get(f"{cluster}/{name}", 0) + 1
        self.ray_node_pool[node_id] = pool.name
        self.ray_nodes.append(
            RayNode.model_validate(
                {
                    "node_id": node_id,
                    "node_ip": pod.pod_ip,
                    "state": "ALIVE",
                    "is_head": group is None,
                    "node_type": name,
                    "resources_total": total,
                    "resources_available": dict(total),  # actors take their share later
                    "labels": {"ray.io/node_id": node_id},
                }
            )
        )

    def head_log(self, head: Pod) -> PodLog:
        lines = []
        for i in range(150):
            stamp = (NOW - timedelta(seconds=150 - i)).strftime("%Y-%m-%d %H:%M:%S")
            lines.append(
                self.choose(
                    (
                        (
                            f"{stamp},{i:03d}\tINFO autoscaler.py:{400 + i % 50} -- Resized to {i % 97} CPUs",
                            3,
                        ),
                        (
                            f"{stamp},{i:03d}\tINFO gcs_server.cc:{200 + i} -- Node registered: {self.hex(64)}",
                            1,
                        ),
                        (f"{stamp},{i:03d}\tINFO monitor.py:{100 + i % 30} -- Monitor: Started", 1),
                        (
                            f"{stamp},{i:03d}\tINFO http_server_head.py:{50 + i} -- Dashboard head http server",
                            1,
                        ),
                    )
                )
            )
        return PodLog(pod=head.name, namespace=head.namespace, container="ray-head", lines=lines)

    # --- GPU jobs -------------------------------------------------------------------------------
    def gpu_workloads(self) -> None:
        catalogue: dict[tuple[str, int], list[tuple[str, str, str, dict[str, str]]]] = {}
        gpu_pools = [p for p in POOLS if p.gpus]
        for _ in range(self.scaled(120, 20)):
            pool = self.choose([(p, p.share) for p in gpu_pools])
            gpus = self.rng.choice(pool.gpu_sizes)
            kind = self.choose((("Job", 0.5), ("ReplicaSet", 0.35), ("StatefulSet", 0.15)))
            name = f"{self.rng.choice(TEAMS)}-{self.rng.choice(('train', 'infer', 'eval', 'embed', 'tune'))}"
            name = f"{name}-{self.suffix(4)}"
            selector = {PRODUCT: pool.product} if self.rng.random() < 0.5 else {ACCELERATOR: pool.accelerator}
            catalogue.setdefault((pool.name, gpus), []).append(
                (self.rng.choice(ML_NAMESPACES), kind, name, selector)
            )
        for pool in gpu_pools:
            for gpus in pool.gpu_sizes:
                if (pool.name, gpus) not in catalogue:
                    catalogue[(pool.name, gpus)] = [
                        ("ml-training", "Job", f"{pool.name}-x{gpus}", {PRODUCT: pool.product})
                    ]
            for node in self.by_pool[pool.name]:
                free = int(node.free(GPU)) if GPU in node.allocatable else 0
                keep = min(free, self.choose(pool.keep_free))  # never all of them: no node is empty
                to_fill = free - keep
                cpu_per_gpu = node.allocatable["cpu"] * 0.8 / pool.gpus
                memory_per_gpu = node.allocatable["memory"] * 0.8 / pool.gpus
                while to_fill > 0:
                    sizes = [g for g in pool.gpu_sizes if g <= to_fill]
                    gpus = self.rng.choice(sizes)
                    namespace, kind, owner, selector = self.rng.choice(catalogue[(pool.name, gpus)])
                    requests = {
                        "cpu": round(cpu_per_gpu * gpus, 1),
                        "memory": float(int(memory_per_gpu * gpus / GiB) * GiB),
                        GPU: float(gpus),
                    }
                    if not node.fits(requests):
                        break
                    container = _container(
                        "trainer" if kind == "Job" else "server",
                        f"us-docker.pkg.dev/acme-ml/images/{owner.rsplit('-', 1)[0]}:v{self.rng.randint(1, 40)}",
                        requests,
                        {GPU: float(gpus), "memory": requests["memory"]},
                        env=["NCCL_DEBUG", "CUDA_VISIBLE_DEVICES", "WANDB_PROJECT", "HF_HOME", "MODEL_ID"],
                        command=[
                            "python",
                            "-m",
                            "torch.distributed.run",
                            "--nproc_per_node",
                            str(gpus),
                            "main.py",
                        ],
                    )
                    pod_name = (
                        f"{owner}-{self.suffix()}" if kind != "StatefulSet" else f"{owner}-{self.suffix(3)}"
                    )
                    if kind == "ReplicaSet":
                        pod_name = f"{owner}-{self.hex(40)[:10]}-{self.suffix()}"
                    pod = self.pod(
                        name=pod_name,
                        namespace=namespace,
                        labels={"app": owner, "team": owner.split("-")[0], "workload": "gpu"},
                        owner=(kind, owner),
                        containers=[container],
                        node=node,
                        tolerations=[*DEFAULT_TOLERATIONS, GPU_TOLERATION],
                        selector=selector,
                    )
                    self.add(pod, "pods_gpu")
                    to_fill -= gpus

    # --- applications -----------------------------------------------------------------------------
    def deployments(self) -> list[_Deployment]:
        found = []
        weights = [1.0 / (1 + 0.12 * abs(i - 16)) for i in range(len(SHAPES))]
        shapes = list(range(len(SHAPES)))
        web_namespaces = [n for n in self.app_namespaces if n in WEB_NAMESPACES or n.endswith("-prod")]
        for i in range(self.scaled(3000, 300)):
            # The first of each kind cover every shape; the rest are drawn, web ones one in ten.
            web = i % (2 * len(SHAPES)) >= len(SHAPES) if i < 4 * len(SHAPES) else self.rng.random() < 0.1
            shape = i % len(SHAPES) if i < 4 * len(SHAPES) else self.rng.choices(shapes, weights)[0]
            cpu, memory = SHAPES[shape]
            namespace = self.rng.choice(web_namespaces if web else self.app_namespaces)
            if web and self.rng.random() < 0.5:
                namespace = self.rng.choice(WEB_NAMESPACES)
            name = f"{namespace.split('-')[0]}-{self.rng.choice(WORDS)}-{self.suffix(3)}"
            extra = {"ephemeral-storage": 2 * GiB} if self.rng.random() < 0.1 else {}
            limits = {"memory": memory * GiB * self.rng.choice((1, 1, 2))}
            if self.rng.random() < 0.3:
                limits["cpu"] = cpu * 2
            image = f"us-docker.pkg.dev/acme/{namespace}/{name}:{self.hex(28)}"
            containers = [
                _container(
                    "app",
                    image,
                    _requests(cpu, memory, **extra),
                    limits,
                    env=[
                        "LOG_LEVEL",
                        "PORT",
                        "OTEL_EXPORTER_OTLP_ENDPOINT",
                        "DATABASE_URL",
                        "POD_NAME",
                        "POD_IP",
                    ],
                    command=["/app/server", "--port=8080"],
                )
            ]
            init = []
            if namespace in self.istio:
                containers.append(
                    _container(
                        "istio-proxy",
                        "docker.io/istio/proxyv2:1.20.3",
                        _requests(0.1, 0.125),
                        {"cpu": 2.0, "memory": 1 * GiB},
                        env=[
                            "PILOT_CERT_PROVIDER",
                            "CA_ADDR",
                            "POD_NAME",
                            "POD_NAMESPACE",
                            "INSTANCE_IP",
                            "ISTIO_META_POD_PORTS",
                        ],
                        command=["/usr/local/bin/pilot-agent", "proxy", "sidecar"],
                    )
                )
                init.append(
                    _container(
                        "istio-init",
                        "docker.io/istio/proxyv2:1.20.3",
                        _requests(0.01, 0.04),
                        {},
                        command=["istio-iptables"],
                    )
                )
            rs_hash = self.hex(40)[:10]
            labels = {
                "app": name,
                "app.kubernetes.io/name": name,
                "app.kubernetes.io/part-of": namespace.split("-")[0],
                "pod-template-hash": rs_hash,
                "version": f"v{self.rng.randint(1, 9)}",
            }
            if namespace in self.istio:
                labels["security.istio.io/tlsMode"] = "istio"
                labels["service.istio.io/canonical-name"] = name
            found.append(
                _Deployment(
                    name=name,
                    namespace=namespace,
                    rs_hash=rs_hash,
                    containers=containers,
                    init=init,
                    labels=labels,
                    requests=_effective(containers, init),
                    spread=self.rng.random() < 0.2,
                    service=self.rng.random() < 0.7,
                    web=web,
                )
            )
        found.sort(key=lambda d: d.requests.get("cpu", 0.0))
        return found

    def applications(self, room: int) -> None:
        """Fill the CPU nodes with ``room`` Pods from Deployments, each node up to a drawn level."""
        self.app_deployments = self.deployments()
        catalogues = {web: ([d for d in self.app_deployments if d.web == web]) for web in (False, True)}
        cpus = {web: [d.requests.get("cpu", 0.0) for d in found] for web, found in catalogues.items()}
        targets = [n for n in self.nodes if n.pool is not None and n.pool.name.startswith("cpu")]
        weights = [n.pool.count_weight * self.rng.uniform(0.6, 1.4) for n in targets if n.pool is not None]
        total = sum(weights)
        counts = [int(room * w / total) for w in weights]
        caps = [int(n.allocatable["pods"]) - n.pods for n in targets]
        counts = [min(c, cap) for c, cap in zip(counts, caps, strict=True)]
        short = room - sum(counts)
        while short > 0:
            i = self.rng.randrange(len(targets))
            if counts[i] < caps[i]:
                counts[i] += 1
                short -= 1
        for node, count in zip(targets, counts, strict=True):
            assert node.pool is not None
            web = bool(node.pool.taint)
            deployments = catalogues[web]
            full = self.rng.random() < 0.25
            level = self.rng.uniform(0.93, 0.995) if full else self.rng.uniform(0.35, 0.9)
            if node.pool.fill:
                level = self.rng.uniform(*node.pool.fill)
            budget_cpu = node.allocatable["cpu"] * level - node.used.get("cpu", 0.0)
            budget_memory = node.allocatable["memory"] * min(1.0, level * 1.02) - node.used.get("memory", 0.0)
            for left in range(count, 0, -1):
                desired = max(0.0, budget_cpu) / left * self.rng.uniform(0.5, 1.6)
                index = bisect.bisect_right(cpus[web], desired) - 1 - self.rng.randint(0, 25)
                index = max(index, self.rng.randint(0, 30))  # a node over its level still gets small Pods
                if left == 1 and node.pool.fill:  # a pool run at its limit: the last Pod takes what is left
                    index = max(0, bisect.bisect_right(cpus[web], budget_cpu) - 1)
                deployment = None
                for candidate in range(index, max(index - 60, -1), -1):
                    option = deployments[candidate]
                    light = option.requests.get("memory", 0.0) <= max(0.0, budget_memory) / left * 2.5
                    if (light or candidate < 30) and node.fits(option.requests):
                        deployment = option
                        break
                if self.rng.random() < 0.02 and not web:
                    deployment = None  # a BestEffort Pod someone started by hand
                pod = self.app_pod(node, deployment)
                budget_cpu -= pod.requests.get("cpu", 0.0)
                budget_memory -= pod.requests.get("memory", 0.0)

    def app_pod(self, node: _Node, deployment: _Deployment | None) -> Pod:
        if deployment is None:  # a BestEffort Pod: no requests at all
            name = f"debug-{self.suffix(6)}"
            container = _container(
                "shell", "docker.io/library/busybox:1.36", {}, {}, command=["sleep", "infinity"]
            )
            pod = self.pod(
                name=name,
                namespace=self.rng.choice(self.app_namespaces),
                labels={"run": name},
                owner=None,
                containers=[container],
                node=node,
                tolerations=[*DEFAULT_TOLERATIONS, WEB_TOLERATION]
                if node.pool and node.pool.taint
                else DEFAULT_TOLERATIONS,
                selector={"dedicated": "web"} if node.pool and node.pool.taint else None,
            )
            return self.add(pod, "pods_app")
        roll = self.rng.random()
        failure = ""
        if roll < 0.0003:
            failure = "crash-loop"
        elif roll < 0.0004:
            failure = "image-pull"
        elif roll < 0.00045:
            failure = "config"
        pod = self.pod(
            name=f"{deployment.name}-{deployment.rs_hash}-{self.suffix()}",
            namespace=deployment.namespace,
            labels=deployment.labels,
            owner=("ReplicaSet", f"{deployment.name}-{deployment.rs_hash}"),
            containers=[dict(c) for c in deployment.containers],
            init=[dict(c) for c in deployment.init],
            node=node,
            tolerations=[*DEFAULT_TOLERATIONS, WEB_TOLERATION] if deployment.web else DEFAULT_TOLERATIONS,
            selector={"dedicated": "web"} if deployment.web else None,
            failure=failure,
            deleting=self.rng.random() < 0.0005,
            spread=deployment.spread,
        )
        if pod.pod_ip:
            deployment.addresses.append((pod.pod_ip, pod.name))
        if failure:
            self.failing.append((pod, failure))
        return self.add(pod, "pods_app")

    def finished(self, count: int) -> None:
        """Completed and evicted Pods: still listed, bound to a node, holding nothing."""
        cpu_nodes = [n for n in self.by_pool["cpu-general"] + self.by_pool["cpu-highmem"]]
        jobs = [
            f"{self.rng.choice(TEAMS)}-{self.rng.choice(('report', 'backup', 'sync', 'etl'))}"
            for _ in range(50)
        ]
        for _ in range(count):
            job = self.rng.choice(jobs)
            namespace = self.rng.choice(self.app_namespaces)
            container = _container("job", f"us-docker.pkg.dev/acme/jobs/{job}:latest", _requests(0.5, 1))
            phase = "Failed" if self.rng.random() < 0.1 else "Succeeded"
            pod = self.pod(
                name=f"{job}-{self.rng.randint(28_000_000, 29_000_000)}-{self.suffix()}",
                namespace=namespace,
                labels={"job-name": job, "batch.kubernetes.io/job-name": job},
                owner=("Job", job),
                containers=[container],
                node=self.rng.choice(cpu_nodes),
                phase=phase,
                charge=False,
                created=self.ago(600, 86400),
            )
            self.add(pod, "pods_finished")

    # --- Pending Pods -------------------------------------------------------------------------------
    def allot_pending(self) -> None:
        """How many Pending Pods each template gets: weights, largest remainder, at least one each."""
        keys: list[tuple[str, str]] = []
        weights: list[float] = []
        for spec in RAY_CLUSTERS:
            for group in spec.groups:
                if group.pending:
                    keys.append((spec.name, group.name))
                    weights.append(group.pending)
        for pending in PENDING:
            keys.append(("", pending.owner))
            weights.append(pending.weight)
        total = self.size.pending
        raw = [total * w / sum(weights) for w in weights]
        counts = [max(1, int(r)) for r in raw]
        order = sorted(range(len(raw)), key=lambda i: raw[i] - int(raw[i]), reverse=True)
        i = 0
        while sum(counts) < total:
            counts[order[i % len(order)]] += 1
            i += 1
        while sum(counts) > total:
            j = max(range(len(counts)), key=lambda k: counts[k])
            counts[j] -= 1
        self.pending_counts = dict(zip(keys, counts, strict=True))
        self.stats.pending_templates = len(keys)

    def scheduler_message(
        self,
        requests: Mapping[str, float],
        selector: Mapping[str, str],
        terms: Sequence[Any],
        tolerations: Sequence[Mapping[str, Any]],
        anti_pool: str = "",
    ) -> str:
        """kube-scheduler's FitError for these constraints, replayed on the generated nodes."""
        reasons: Counter[str] = Counter()
        resources = 0
        for node in self.nodes:
            if node.unschedulable:
                reasons["node(s) were unschedulable"] += 1
                continue
            taint = next(
                (
                    t
                    for t in node.taints
                    if t["effect"] in ("NoSchedule", "NoExecute") and not _tolerates(tolerations, t)
                ),
                None,
            )
            if taint is not None:
                reasons[f"node(s) had untolerated taint {{{taint['key']}: {taint['value']}}}"] += 1
                continue
            if not _matches(node.labels, selector, terms):
                reasons["node(s) didn't match Pod's node affinity/selector"] += 1
                continue
            lacking = [r for r, v in requests.items() if v > node.free(r) + 1e-9]
            if node.pods >= node.allocatable["pods"]:
                lacking.insert(0, "pods")
            if lacking:
                resources += 1
                for resource in lacking:
                    reasons["Too many pods" if resource == "pods" else f"Insufficient {resource}"] += 1
                continue
            if anti_pool and node.pool is not None and node.pool.name == anti_pool:
                reasons["node(s) didn't match pod anti-affinity rules"] += 1
                continue
            # Room now: the message predates the Pods that finished since (the scheduler retries).
            reasons["Insufficient cpu"] += 1
            resources += 1
        n = len(self.nodes)
        parts = ", ".join(sorted(f"{count} {reason}" for reason, count in reasons.items()))
        return (
            f"0/{n} nodes are available: {parts}. preemption: 0/{n} nodes are available: {resources} No "
            f"preemption victims found for incoming pod, {n - resources} Preemption is not helpful for scheduling."
        )

    def pending_pods(self) -> None:
        for spec, group, container, init, tolerations in self.ray_pending:
            count = self.pending_counts[(spec.name, group.name)]
            requests = _effective([container], init)
            message = self.scheduler_message(requests, dict(group.selector), (), tolerations)
            for _ in range(count):
                name = f"{spec.name}-{group.name}-worker-{self.suffix()}"
                pod = self.pod(
                    name=name,
                    namespace=spec.namespace,
                    labels=self.ray_labels(spec.name, group.name, "worker"),
                    owner=("RayCluster", spec.name),
                    containers=[dict(container)],
                    init=[dict(c) for c in init],
                    tolerations=tolerations,
                    selector=dict(group.selector),
                    scheduler_message=message,
                    created=self.ago(60, 4 * 3600),
                )
                self.add(pod, "pods_pending")
                self.failed_scheduling(pod, message)
                if group.gpus and self.rng.random() < 0.5:
                    self.scale_up_event(
                        pod,
                        "pod didn't trigger scale-up: 2 max node group size reached, "
                        f"{len(POOLS) - 1} node(s) didn't match Pod's node affinity/selector",
                    )
        for template in PENDING:
            self.pending_template(template, self.pending_counts[("", template.owner)])

    def template_parts(
        self, spec: PendingSpec
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[Any], dict[str, str], str]:
        """Containers, init containers, tolerations, labels and template hash of a controller."""
        if spec.owner in self._parts:
            return self._parts[spec.owner]
        requests = _requests(spec.cpu, spec.memory_gib)
        requests.update(dict(spec.extra))
        if spec.gpus:
            requests[GPU] = spec.gpus
        limits = {"memory": requests["memory"], **({GPU: spec.gpus} if spec.gpus else {})}
        image = f"us-docker.pkg.dev/acme/{spec.namespace}/{spec.owner}:{self.hex(28)}"
        env = ["LOG_LEVEL", "PORT", "POD_NAME", "POD_NAMESPACE", "OTEL_SERVICE_NAME"]
        containers = [_container("main", image, requests, limits, env=env, command=["/app/run"])]
        init: list[dict[str, Any]] = []
        if spec.sidecar:
            containers.append(
                _container(
                    "istio-proxy", "docker.io/istio/proxyv2:1.20.3", _requests(0.1, 0.125), {"cpu": 2.0}
                )
            )
            init.append(_container("istio-init", "docker.io/istio/proxyv2:1.20.3", _requests(0.01, 0.04)))
        tolerations: list[Any] = list(DEFAULT_TOLERATIONS)
        if spec.tolerate_gpu:
            tolerations.append(GPU_TOLERATION)
        if spec.web:
            tolerations.append(WEB_TOLERATION)
        rs = self.hex(40)[:10]
        labels = {"app": spec.owner, "app.kubernetes.io/name": spec.owner}
        if spec.kind == "Deployment":
            labels["pod-template-hash"] = rs
        self._parts[spec.owner] = (containers, init, tolerations, labels, rs)
        return self._parts[spec.owner]

    def pending_template(self, spec: PendingSpec, count: int) -> None:
        containers, init, tolerations, labels, rs = self.template_parts(spec)
        selector = {**dict(spec.selector), **({"dedicated": "web"} if spec.web else {})}
        owner_kind = {"Deployment": "ReplicaSet"}.get(spec.kind, spec.kind)
        owner_name = f"{spec.owner}-{rs}" if spec.kind == "Deployment" else spec.owner
        affinity = (
            [{"anti": True, "match_labels": {"app": spec.owner}, "topology_key": "kubernetes.io/hostname"}]
            if spec.anti_affinity
            else []
        )
        if spec.pvc == "unbound":
            message = (
                f"0/{len(self.nodes)} nodes are available: pod has unbound immediate PersistentVolumeClaims. "
                f"preemption: 0/{len(self.nodes)} nodes are available: {len(self.nodes)} Preemption is not "
                "helpful for scheduling."
            )
        else:
            message = self.scheduler_message(
                _effective(containers, init),
                selector,
                spec.terms,
                tolerations,
                selector.get(NODEPOOL, "") if spec.anti_affinity else "",
            )
        for i in range(count):
            if spec.kind == "StatefulSet":
                ordinal = len(self.by_pool["cpu-storage"]) + i if spec.anti_affinity else i
                name = f"{spec.owner}-{ordinal}"
                pod_labels = {
                    **labels,
                    "statefulset.kubernetes.io/pod-name": name,
                    "apps.kubernetes.io/pod-index": str(ordinal),
                    "controller-revision-hash": f"{spec.owner}-{rs[:8]}",
                }
            elif spec.kind == "Deployment":
                name = f"{spec.owner}-{rs}-{self.suffix()}"
                pod_labels = labels
            else:
                name = f"{spec.owner}-{self.suffix()}"
                pod_labels = {**labels, "job-name": spec.owner}
            pvcs = [f"data-{name}"] if spec.pvc else []
            for claim in pvcs:
                self.pvcs.append(
                    PersistentVolumeClaim.model_validate(
                        {
                            "name": claim,
                            "namespace": spec.namespace,
                            "phase": "Bound" if spec.pvc == "bound" else "Pending",
                            "storage_class": "premium-rwo" if spec.pvc == "bound" else "local-ssd-manual",
                            "volume_name": f"pvc-{self.uid()}" if spec.pvc == "bound" else None,
                        }
                    )
                )
            gates = ["kueue.x-k8s.io/admission"] if spec.gated else []
            pod = self.pod(
                name=name,
                namespace=spec.namespace,
                labels=pod_labels,
                owner=(owner_kind, owner_name),
                containers=[dict(c) for c in containers],
                init=[dict(c) for c in init],
                tolerations=tolerations,
                selector=selector,
                terms=spec.terms,
                affinity=affinity,
                pvcs=pvcs,
                gates=gates,
                scheduler_message=message,
                created=self.ago(60, 6 * 3600),
            )
            self.add(pod, "pods_pending")
            if not spec.gated:
                self.failed_scheduling(pod, message)
                if spec.scale_up:
                    self.scale_up_event(pod, spec.scale_up)

    def anti_affinity_replicas(self) -> int:
        """The running brokers: one per node of their pool, which is why the next one cannot start."""
        placed = 0
        for spec in PENDING:
            if spec.anti_affinity:
                placed += self.anti_affinity_set(spec)
        return placed

    def anti_affinity_set(self, spec: PendingSpec) -> int:
        containers, _, tolerations, labels, _ = self.template_parts(spec)
        affinity = [
            {"anti": True, "match_labels": {"app": spec.owner}, "topology_key": "kubernetes.io/hostname"}
        ]
        pool = dict(spec.selector)[NODEPOOL]
        for ordinal, node in enumerate(self.by_pool[pool]):
            name = f"{spec.owner}-{ordinal}"
            pod = self.pod(
                name=name,
                namespace=spec.namespace,
                labels={
                    **labels,
                    "statefulset.kubernetes.io/pod-name": name,
                    "apps.kubernetes.io/pod-index": str(ordinal),
                },
                owner=("StatefulSet", spec.owner),
                containers=[dict(c) for c in containers],
                node=node,
                tolerations=tolerations,
                selector=dict(spec.selector),
                affinity=affinity,
                pvcs=[f"data-{name}"],
            )
            self.add(pod, "pods_app")
            self.pvcs.append(
                PersistentVolumeClaim.model_validate(
                    {
                        "name": f"data-{name}",
                        "namespace": spec.namespace,
                        "phase": "Bound",
                        "storage_class": "local-ssd",
                        "volume_name": f"pvc-{self.uid()}",
                    }
                )
            )
        return len(self.by_pool[pool])

    # --- events -----------------------------------------------------------------------------------
    def event(
        self,
        namespace: str | None,
        kind: str,
        name: str,
        reason: str,
        message: str,
        *,
        warning: bool = False,
        source: str = "kubelet",
        count: int = 1,
        seen: datetime | None = None,
    ) -> None:
        last = seen or self.ago(0, 3600)
        self.events.append(
            Event.model_validate(
                {
                    "namespace": namespace,
                    "object_kind": kind,
                    "object_name": name,
                    "type": "Warning" if warning else "Normal",
                    "reason": reason,
                    "message": message,
                    "count": count,
                    "source": source,
                    "first_seen": last - timedelta(seconds=self.rng.randint(0, 3600) * (count > 1)),
                    "last_seen": last,
                }
            )
        )
        self.stats.add("events")

    def failed_scheduling(self, pod: Pod, message: str) -> None:
        self.event(
            pod.namespace,
            "Pod",
            pod.name,
            "FailedScheduling",
            message,
            warning=True,
            source="default-scheduler",
            count=self.rng.randint(1, 40),
            seen=self.ago(0, 300),
        )

    def scale_up_event(self, pod: Pod, message: str) -> None:
        self.event(
            pod.namespace,
            "Pod",
            pod.name,
            "NotTriggerScaleUp",
            message,
            source="cluster-autoscaler",
            count=self.rng.randint(1, 30),
        )

    def churn_events(self) -> None:
        """The last hour of a busy cluster: Pods started, probes failing, containers restarting."""
        running = [p for p in self.pods if p.phase == "Running" and p.owner and p.owner.kind == "ReplicaSet"]
        for pod in self.rng.sample(running, int(len(running) * 0.012)):
            container = pod.containers[0]
            image = container.image or ""
            self.event(
                pod.namespace,
                "Pod",
                pod.name,
                "Scheduled",
                f"Successfully assigned {pod.namespace}/{pod.name} to {pod.node_name}",
                source="default-scheduler",
            )
            self.event(pod.namespace, "Pod", pod.name, "Pulling", f'Pulling image "{image}"')
            seconds = self.rng.uniform(0.5, 40)
            self.event(
                pod.namespace,
                "Pod",
                pod.name,
                "Pulled",
                f'Successfully pulled image "{image}" in {seconds:.3f}s ({seconds:.3f}s including waiting)',
            )
            self.event(pod.namespace, "Pod", pod.name, "Created", f"Created container {container.name}")
            self.event(pod.namespace, "Pod", pod.name, "Started", f"Started container {container.name}")
        for pod in self.rng.sample(running, int(len(running) * 0.002)):
            self.event(
                pod.namespace,
                "Pod",
                pod.name,
                "Unhealthy",
                "Readiness probe failed: HTTP probe failed with statuscode: 503",
                warning=True,
                count=self.rng.randint(1, 200),
            )
        for pod, failure in self.failing:
            container = pod.containers[0]
            if failure == "crash-loop":
                self.event(
                    pod.namespace,
                    "Pod",
                    pod.name,
                    "BackOff",
                    f"Back-off restarting failed container {container.name} in pod {pod.name}_{pod.namespace}"
                    f"({pod.uid})",
                    warning=True,
                    count=self.rng.randint(10, 2000),
                )
            elif failure == "image-pull":
                self.event(
                    pod.namespace,
                    "Pod",
                    pod.name,
                    "Failed",
                    f'Failed to pull image "{container.image}": rpc error: code = NotFound desc = failed to '
                    f'pull and unpack image "{container.image}": not found',
                    warning=True,
                    count=self.rng.randint(3, 60),
                )
            else:
                self.event(
                    pod.namespace,
                    "Pod",
                    pod.name,
                    "Failed",
                    'Error: configmap "app-config" not found',
                    warning=True,
                )
        for node in self.nodes:
            if not node.ready:
                self.event(
                    None,
                    "Node",
                    node.name,
                    "NodeNotReady",
                    f"Node {node.name} status is now: NodeNotReady",
                    source="node-controller",
                )
        for cluster in self.rayclusters:
            for group in cluster.worker_groups[:2]:
                self.event(
                    cluster.namespace,
                    "RayCluster",
                    cluster.name,
                    "CreatedWorkerPod",
                    f"Created worker Pod {cluster.namespace}/{cluster.name}-{group.name}-worker-{self.suffix()}",
                    source="raycluster-controller",
                )
        for namespace, gpus in (("ml-research", 4), ("ml-training", 8)):
            self.event(
                namespace,
                "ReplicaSet",
                f"quota-bound-{self.hex(40)[:10]}",
                "FailedCreate",
                f'Error creating: pods "quota-bound-{self.suffix()}" is forbidden: exceeded quota: gpu-quota, '
                f"requested: requests.nvidia.com/gpu={gpus}, used: requests.nvidia.com/gpu=32, "
                "limited: requests.nvidia.com/gpu=32",
                warning=True,
                source="replicaset-controller",
                count=self.rng.randint(5, 50),
            )

    # --- everything else in the Kubernetes layer ---------------------------------------------------
    def services_and_more(self) -> tuple[list[ResourceQuota], list[NetworkPolicy]]:
        for deployment in self.app_deployments:
            if not deployment.service:
                continue
            index = len(self.services)
            self.services.append(
                Service.model_validate(
                    {
                        "name": deployment.name,
                        "namespace": deployment.namespace,
                        "cluster_ip": f"10.96.{index // 250}.{index % 250 + 2}",
                        "selector": {"app": deployment.name},
                        "ports": [{"name": "http", "port": 80, "target_port": "8080"}],
                    }
                )
            )
            self.endpoints.append(
                Endpoints.model_validate(
                    {
                        "name": deployment.name,
                        "namespace": deployment.namespace,
                        "addresses": [
                            {"ip": ip, "pod": pod, "ready": True} for ip, pod in deployment.addresses
                        ],
                        "ports": [8080],
                    }
                )
            )
        for _ in range(self.scaled(3000)):
            namespace = self.rng.choice(self.app_namespaces)
            self.pvcs.append(
                PersistentVolumeClaim.model_validate(
                    {
                        "name": f"data-{namespace.split('-')[0]}-{self.rng.choice(WORDS)}-{self.suffix(4)}",
                        "namespace": namespace,
                        "phase": "Bound",
                        "storage_class": self.rng.choice(("standard-rwo", "premium-rwo", "filestore")),
                        "volume_name": f"pvc-{self.uid()}",
                    }
                )
            )
        quotas = []
        for namespace in self.app_namespaces + list(ML_NAMESPACES):
            hard = {"requests.cpu": 400.0, "requests.memory": 1600 * GiB, "requests.nvidia.com/gpu": 32.0}
            used = {k: round(v * self.rng.uniform(0.1, 0.95), 2) for k, v in hard.items()}
            quotas.append(
                ResourceQuota.model_validate(
                    {"name": "compute-quota", "namespace": namespace, "hard": hard, "used": used}
                )
            )
        policies = []
        for namespace in self.app_namespaces:
            policies.append(
                NetworkPolicy.model_validate(
                    {
                        "name": "default-deny-ingress",
                        "namespace": namespace,
                        "selects_all": True,
                        "policy_types": ["Ingress"],
                    }
                )
            )
            policies.append(
                NetworkPolicy.model_validate(
                    {
                        "name": "allow-same-namespace",
                        "namespace": namespace,
                        "selects_all": True,
                        "policy_types": ["Ingress"],
                        "ingress_rules": 1,
                    }
                )
            )
        for spec in RAY_CLUSTERS:
            policies.append(
                NetworkPolicy.model_validate(
                    {
                        "name": "allow-ray",
                        "namespace": spec.namespace,
                        "pod_selector": {"ray.io/is-ray-node": "yes"},
                        "policy_types": ["Ingress"],
                        "ingress_rules": 3,
                    }
                )
            )
        # One team copied the default-deny policy into its Ray namespace.
        policies.append(
            NetworkPolicy.model_validate(
                {
                    "name": "default-deny-ingress",
                    "namespace": "ray-rl",
                    "selects_all": True,
                    "policy_types": ["Ingress"],
                }
            )
        )
        for pod in self.not_joined:
            self.logs.append(
                PodLog(
                    pod=pod.name,
                    namespace=pod.namespace,
                    container="ray-worker",
                    lines=[
                        f"[2025-06-02 09:{10 + i:02d}:00,000 W 1 1] gcs_client.cc:{100 + i}: Failed to connect to GCS "
                        f"at address data-prep-head-svc.ray-data.svc.cluster.local:6379 within 5 seconds."
                        for i in range(20)
                    ],
                )
            )
        return quotas, policies

    def ray_objects(self) -> tuple[list[RayJobObject], list[RayServiceObject]]:
        jobs = []
        for i in range(self.scaled(60, 8)):
            spec = self.rng.choice(RAY_CLUSTERS)
            status = self.choose((("RUNNING", 0.5), ("SUCCEEDED", 0.4), ("FAILED", 0.05), ("PENDING", 0.05)))
            jobs.append(
                RayJobObject.model_validate(
                    {
                        "name": f"{spec.name}-job-{i}",
                        "namespace": spec.namespace,
                        "job_status": status,
                        "deployment_status": "Complete" if status in ("SUCCEEDED", "FAILED") else "Running",
                        "message": "Job entrypoint command failed with exit code 1"
                        if status == "FAILED"
                        else None,
                        "cluster_name": spec.name,
                        "submission_id": f"raysubmit_{self.hex(64)[:16]}",
                    }
                )
            )
        services = [
            RayServiceObject.model_validate(
                {
                    "name": "serve-prod",
                    "namespace": "ray-serve",
                    "service_status": "Running",
                    "cluster_name": "serve-prod",
                    "app_statuses": {
                        "text-gen": "RUNNING",
                        "ranker": "RUNNING",
                        "moderation": "DEPLOY_FAILED",
                    },
                    "app_messages": {"moderation": "Deploying app 'moderation' failed: ModuleNotFoundError"},
                }
            )
        ]
        return jobs, services

    # --- the Ray layer ------------------------------------------------------------------------------
    def ray_state(self) -> RayState:
        rng = self.rng
        jobs = []
        for _ in range(self.scaled(150, 12)):
            status = self.choose((("RUNNING", 0.4), ("SUCCEEDED", 0.45), ("FAILED", 0.1), ("PENDING", 0.05)))
            jobs.append(
                {
                    "job_id": f"{rng.randint(1, 0xFFFF):04x}0000",
                    "submission_id": f"raysubmit_{self.hex(64)[:16]}",
                    "status": status,
                    "message": "Job failed due to an application error, last available logs: ..."
                    if status == "FAILED"
                    else None,
                    "entrypoint": f"python {rng.choice(('train.py', 'infer.py', 'prep.py'))} --config cfg.yaml",
                }
            )
        running = [j["job_id"] for j in jobs if j["status"] == "RUNNING"] or [jobs[0]["job_id"]]
        done = [j["job_id"] for j in jobs if j["status"] == "SUCCEEDED"] or running
        groups: list[dict[str, Any]] = []
        for _ in range(self.scaled(300, 20)):
            gpus = rng.choice((1, 2, 4, 8))
            state = self.choose((("CREATED", 0.8), ("PENDING", 0.13), ("REMOVED", 0.07)))
            groups.append(
                {
                    "placement_group_id": self.hex(144),
                    "name": f"pg-{self.suffix(6)}" if rng.random() < 0.5 else "",
                    "state": state,
                    "strategy": rng.choice(("PACK", "STRICT_PACK", "SPREAD")),
                    "bundles": [{"GPU": float(gpus), "CPU": float(8 * gpus)}] * rng.choice((1, 2, 4, 8)),
                    "creator_job_id": rng.choice(running),
                }
            )
        created_groups = [g["placement_group_id"] for g in groups if g["state"] == "CREATED"]
        actors: list[RayActor] = []
        nodes: list[RayNode] = []
        for node in self.ray_nodes:
            total = node.resources_total
            available = dict(total)
            node_gpus = total.get("GPU", 0.0)
            free_gpus = 0.0 if rng.random() < 0.85 else float(rng.randint(1, max(1, int(node_gpus // 2))))
            used_gpus = max(0.0, node_gpus - free_gpus)
            while used_gpus > 0:
                take = min(used_gpus, float(rng.choice((1, 1, 1, 2))))
                self.actor(
                    actors,
                    node,
                    {"GPU": take, "CPU": min(available.get("CPU", 0.0), 2.0 * take)},
                    job=rng.choice(running),
                    groups=created_groups,
                    available=available,
                )
                used_gpus -= take
            busy = available.get("CPU", 0.0) * rng.uniform(0.5, 1.0)
            share = float(max(1, int(busy / rng.randint(1, 8))))
            while busy >= share:
                self.actor(
                    actors, node, {"CPU": share}, job=rng.choice(running), groups=[], available=available
                )
                busy -= share
            if total.get("object_store_memory"):
                available["object_store_memory"] = round(total["object_store_memory"] * rng.uniform(0.2, 0.9))
            if total.get("memory"):
                available["memory"] = round(total["memory"] * rng.uniform(0.1, 0.8))
            nodes.append(node.model_copy(update={"resources_available": available}))
        # Detached GPU actors left by someone, and GPU actors of jobs that have finished.
        holding = [i for i, a in enumerate(actors) if "GPU" in a.required_resources]
        chosen = rng.sample(holding, self.scaled(12) + self.scaled(6))
        for i in chosen[: self.scaled(12)]:
            actors[i] = actors[i].model_copy(update={"detached": True, "name": f"cache-{self.suffix()}"})
        for i in chosen[self.scaled(12) :]:
            actors[i] = actors[i].model_copy(update={"job_id": rng.choice(done)})
        dead = []
        for actor in rng.sample(actors, len(actors) // 4):
            dead.append(actor.model_copy(update={"state": "DEAD", "actor_id": self.hex(128)}))
        actors += dead
        for _ in range(len(nodes) // 10):
            nodes.append(
                RayNode.model_validate(
                    {
                        "node_id": self.hex(224),
                        "node_ip": f"10.250.{rng.randint(0, 255)}.{rng.randint(2, 254)}",
                        "state": "DEAD",
                        "node_type": "cpu-workers",
                        "resources_total": {"CPU": 4.0, "memory": 16 * GiB},
                        "labels": {},
                    }
                )
            )
        alive = [n for n in nodes if n.state == "ALIVE"]
        totals: dict[str, float] = {}
        used: dict[str, float] = {}
        for node in alive:
            for key, amount in node.resources_total.items():
                if key.startswith("node:"):
                    continue
                totals[key] = totals.get(key, 0.0) + amount
                free = (node.resources_available or {}).get(key, amount)
                used[key] = used.get(key, 0.0) + amount - free
        demands = self.demands(alive)
        tasks = [
            RayTask.model_validate(
                {
                    "task_id": self.hex(192),
                    "name": rng.choice(("preprocess", "tokenize", "rollout", "evaluate", "map_batches")),
                    "state": "PENDING_NODE_ASSIGNMENT",
                    "job_id": rng.choice(running),
                    "required_resources": rng.choice(({"CPU": 1.0}, {"CPU": 1.0, "GPU": 1.0}, {"CPU": 4.0})),
                }
            )
            for _ in range(self.scaled(1000))
        ]
        self.stats.counts.update(
            ray_nodes=len(nodes),
            ray_actors=len(actors),
            ray_placement_groups=len(groups),
            ray_jobs=len(jobs),
            ray_demand_entries=len(demands),
        )
        return RayState.model_validate(
            {
                "version": "2.9.3",
                "nodes": nodes,
                "totals": totals,
                "used": used,
                "node_count": len(alive),
                "node_groups": self.ray_groups,
                "pending_nodes": [f"h100-workers: {self.scaled(4)} launching"],
                "recent_failures": [
                    "h200-workers: NodeLaunchException: no nodes match the worker group's node selector "
                    "nvidia.com/gpu.product=NVIDIA-H200"
                ],
                "demands": demands,
                "actors": actors,
                "pending_tasks": tasks,
                "placement_groups": groups,
                "serve_applications": [
                    ServeApplication.model_validate(
                        {
                            "name": name,
                            "status": status,
                            "message": message,
                            "deployments": [
                                {
                                    "name": f"{name.title()}Deployment",
                                    "status": status,
                                    "message": message,
                                    "replica_states": {"RUNNING": 4},
                                }
                            ],
                        }
                    )
                    for name, status, message in (
                        ("text-gen", "RUNNING", ""),
                        ("ranker", "RUNNING", ""),
                        ("moderation", "DEPLOY_FAILED", "ModuleNotFoundError: No module named 'detoxify'"),
                    )
                ],
                "jobs": [RayJobInfo.model_validate(j) for j in jobs],
            }
        )

    def actor(
        self,
        actors: list[RayActor],
        node: RayNode,
        resources: dict[str, float],
        *,
        job: str,
        groups: Sequence[str],
        available: dict[str, float],
    ) -> None:
        for key, amount in resources.items():
            available[key] = available.get(key, 0.0) - amount
        gpu = "GPU" in resources
        name = self.choose(
            (
                ("TrainWorker", 3),
                ("LLMEngine", 1),
                ("RolloutWorker", 2),
                ("EmbeddingModel", 1),
                ("ServeReplica:text-gen:TextGen", 1),
            )
            if gpu
            else (("MapWorker", 3), ("_StatsActor", 1), ("RolloutWorker", 2), ("DataShardReader", 2))
        )
        actors.append(
            RayActor.model_validate(
                {
                    "actor_id": self.hex(128),
                    "class_name": name,
                    "name": None,
                    "state": "ALIVE",
                    "node_id": node.node_id,
                    "job_id": job,
                    "pid": self.rng.randint(1000, 60000),
                    "required_resources": {k: v for k, v in resources.items() if v},
                    "ray_namespace": "serve" if name.startswith("ServeReplica") else self.hex(128)[:8],
                    "start_time": self.ago(60, 3 * 86400),
                    "placement_group_id": self.rng.choice(groups)
                    if groups and self.rng.random() < 0.5
                    else None,
                }
            )
        )

    def demands(self, nodes: Sequence[RayNode]) -> list[Demand]:
        shapes = demand_shapes()
        self.stats.demand_shapes = len(shapes)
        ranks = list(range(len(shapes)))
        random.Random(7).shuffle(ranks)  # the same popularity order at every size
        weights = [1.0 / (1 + r) ** 0.8 for r in ranks]
        biggest: dict[str, float] = {}
        for node in nodes:
            for key, amount in node.resources_total.items():
                biggest[key] = max(biggest.get(key, 0.0), amount)
        found = []
        for shape in self.rng.choices(shapes, weights, k=self.size.demands):
            count = min(500, int(self.rng.paretovariate(1.2)))
            need = shape["shape"]
            if shape["bundles"] and shape["strategy"] == "STRICT_PACK":
                need = {k: sum(b.get(k, 0.0) for b in shape["bundles"]) for k in shape["bundles"][0]}
            infeasible = any(amount > biggest.get(key, 0.0) for key, amount in need.items())
            shown = "{" + ", ".join(f"'{k}': {v}" for k, v in need.items()) + "}"
            if shape["bundles"]:
                text = f"{shown} * {len(shape['bundles'])} ({shape['strategy']}): {count}+ pending placement groups"
            else:
                text = f"{shown}: {count}+ pending tasks/actors"
            found.append(
                Demand.model_validate(
                    {**shape, "count": count, "infeasible": infeasible, "source_text": text}
                )
            )
        return found


def demand_shapes() -> list[dict[str, Any]]:
    """About three hundred distinct demand shapes: tasks, GPU actors, custom resources, placement groups."""
    shapes: list[dict[str, Any]] = []

    def add(
        shape: dict[str, float],
        kind: str,
        bundles: Sequence[dict[str, float]] = (),
        strategy: str | None = None,
    ) -> None:
        shapes.append({"shape": shape, "kind": kind, "bundles": list(bundles), "strategy": strategy})

    for cpu in (0.25, 0.5, 1, 2, 4, 8, 16, 32, 64):
        for memory in (0, 2, 8, 32, 128):
            add({"CPU": float(cpu), **({"memory": memory * GiB} if memory else {})}, "task")
    for gpu in (0.25, 0.5, 1, 2, 4, 8, 16):
        for cpu in (1, 4, 8, 16):
            for accelerator in ("", "A100", "H100", "L4", "T4", "H200"):
                shape = {"CPU": float(cpu), "GPU": float(gpu)}
                if accelerator:
                    shape[f"accelerator_type:{accelerator}"] = 0.001
                add(shape, "actor" if gpu >= 1 else "task_or_actor")
    for name in ("TPU", "spot_node", "high_mem_node", "preemptible"):
        for amount in (1, 4):
            add({"CPU": 1.0, name: float(amount)}, "task")
    for count in (2, 4, 8, 16):
        for gpu in (1, 2, 4, 8):
            for strategy in ("PACK", "STRICT_PACK", "SPREAD", "STRICT_SPREAD"):
                bundle = {"CPU": float(8 * gpu), "GPU": float(gpu)}
                add(dict(bundle), "placement_group", [dict(bundle) for _ in range(count)], strategy)
    for count in (4, 16, 64):
        for cpu in (1, 4):
            for strategy in ("PACK", "SPREAD"):
                bundle = {"CPU": float(cpu)}
                add(dict(bundle), "placement_group", [dict(bundle) for _ in range(count)], strategy)
    return shapes


def build_snapshot(size: Size, seed: int = 20250602) -> tuple[Snapshot, Stats]:
    """The synthetic cluster at ``size``; deterministic for a given seed."""
    b = _Builder(size, seed)
    b.make_namespaces()
    b.make_nodes()
    b.allot_pending()
    b.daemonsets()
    b.control_plane()
    b.ray_clusters()
    b.gpu_workloads()
    b.anti_affinity_replicas()
    finished = round(size.pods * 0.02)
    room = size.pods - size.pending - finished - len(b.pods)
    if room < 0:
        raise ValueError(f"{size.name}: {size.pods} Pods leave no room for applications")
    b.applications(room)
    b.finished(finished)
    b.pending_pods()
    b.churn_events()
    quotas, policies = b.services_and_more()
    rayjobs, rayservices = b.ray_objects()
    ray = b.ray_state()
    pods = sorted(b.pods, key=lambda p: (p.namespace, p.name))
    b.stats.counts.update(
        pods=len(pods),
        pods_unscheduled=sum(1 for p in pods if p.unscheduled),
        services=len(b.services),
        endpoint_addresses=sum(len(e.addresses) for e in b.endpoints),
        pvcs=len(b.pvcs),
        log_lines=sum(len(log.lines) for log in b.logs),
    )
    kube = KubernetesState(
        nodes=b.node_models_(),
        pods=pods,
        events=b.events,
        services=b.services,
        endpoints=b.endpoints,
        rayclusters=b.rayclusters,
        rayjobs=rayjobs,
        rayservices=rayservices,
        resource_quotas=quotas,
        pvcs=b.pvcs,
        network_policies=policies,
        device_plugin_pods=b.plugin_pods,
        logs=b.logs,
    )
    snapshot = Snapshot(collected_at=NOW, origin="live", kubernetes=kube, ray=ray)
    return snapshot, b.stats
