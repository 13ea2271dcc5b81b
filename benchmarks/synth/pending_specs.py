"""The controllers whose Pods wait, one template each, with the constraint that holds them."""

from __future__ import annotations

from dataclasses import dataclass

from benchmarks.synth.common import ACCELERATOR, H100, L4, NODEPOOL, PRODUCT, GiB


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
