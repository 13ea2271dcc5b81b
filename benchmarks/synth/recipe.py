"""The cluster's recipe: node pools, DaemonSets, application request shapes and namespaces."""

from __future__ import annotations

from dataclasses import dataclass

from benchmarks.synth.common import A100, H100, L4, T4


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
WEB_NAMESPACES = ("web-prod", "shop-prod", "search-prod", "media-prod")
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
