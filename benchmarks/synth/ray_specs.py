"""The KubeRay clusters that run on the cluster: their worker groups and what is wrong with them."""

from __future__ import annotations

from dataclasses import dataclass

from benchmarks.synth.common import ACCELERATOR, GPU, H100, L4, NODEPOOL, PRODUCT


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
        worker_image="rayproject/ray:2.9.0-py310",  # the head runs RAY_VERSION
    ),
)
