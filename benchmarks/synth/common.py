"""Units, the clock, well-known label keys, images and tolerations, and the benchmark sizes."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

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
RAY_VERSION = "2.9.3"  # every RayCluster's head, and the dashboard that answers
RAY_IMAGE = f"rayproject/ray:{RAY_VERSION}-py310"
RAY_GPU_IMAGE = f"rayproject/ray:{RAY_VERSION}-py310-gpu"
ISTIO_IMAGE = "docker.io/istio/proxyv2:1.20.3"  # the sidecar and its init container
DEFAULT_TOLERATIONS = (
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
)
GPU_TOLERATION = {"key": GPU, "operator": "Exists", "effect": "NoSchedule"}
WEB_TOLERATION = {"key": "dedicated", "operator": "Equal", "value": "web", "effect": "NoSchedule"}
WEB_SELECTOR = {"dedicated": "web"}  # the web tier's Pods select its dedicated pool


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
