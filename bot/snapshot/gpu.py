"""What makes a Kubernetes node a GPU node: decided here once, for every layer.

The verdict line, the health post, the capacity chart, the collectors (which read device-plugin
Pods only where GPU nodes exist) and the detectors all ask the same question; when each answered it
its own way, one demo cluster had two GPU nodes in Slack and three in the health post.

A node is a GPU node when Kubernetes advertises GPUs on it (``nvidia.com/gpu`` or the legacy
``alpha.kubernetes.io/nvidia-gpu`` in capacity or allocatable), or when it is *marked* as one: a
GPU label (NVIDIA's feature discovery, GKE, Karpenter, EKS) or the ``nvidia.com/gpu`` taint. A node
that is marked but advertises nothing is exactly the node cause 3 is about, so both count.

The Pods of the GPU software stack (driver, toolkit, device plugin, validators) are named here too:
a crash-looping driver Pod is cause 3, not an application error.
"""

from __future__ import annotations

from bot.snapshot.kubernetes import GPU_RESOURCE, Node, Pod

LEGACY_GPU_RESOURCE = "alpha.kubernetes.io/nvidia-gpu"
GPU_RESOURCES = (GPU_RESOURCE, LEGACY_GPU_RESOURCE)
# Label keys whose presence marks a GPU node (a value of "false" or "0" unmarks it).
GPU_NODE_LABELS = (
    "nvidia.com/gpu.present",
    "nvidia.com/gpu.product",
    "nvidia.com/gpu.count",
    "cloud.google.com/gke-accelerator",
    "karpenter.k8s.aws/instance-gpu-count",
    "karpenter.k8s.aws/instance-gpu-name",
    "k8s.amazonaws.com/accelerator",
)
# Label keys that name a GPU model; a selector on one of them is part of the GPU-type chain.
GPU_MODEL_LABELS = (
    "nvidia.com/gpu.product",
    "nvidia.com/gpu.machine",
    "cloud.google.com/gke-accelerator",
    "karpenter.k8s.aws/instance-gpu-name",
    "k8s.amazonaws.com/accelerator",
    "accelerator",
    "gpu-type",
    "gpu.nvidia.com/class",
)
# Values of a GPU node label that say the node has no GPU.
LABEL_OFF = ("false", "0")
# Where GPU feature discovery writes the NVIDIA driver's version on a node: one label with the
# whole version (GFD 0.15 and later), else its parts in separate labels (older GFD, and the
# ``gpu.driver`` spelling some node images use). GKE's ``gke-gpu-driver-version`` says only
# ``default`` or ``latest``, which is not a version.
DRIVER_VERSION_LABEL = "nvidia.com/cuda.driver-version.full"
DRIVER_VERSION_PARTS = (
    ("nvidia.com/cuda.driver.major", "nvidia.com/cuda.driver.minor", "nvidia.com/cuda.driver.rev"),
    ("nvidia.com/gpu.driver.major", "nvidia.com/gpu.driver.minor", "nvidia.com/gpu.driver.revision"),
)


def driver_version(node: Node) -> str | None:
    """The NVIDIA driver version GPU feature discovery labelled the node with (``550.54.15``)."""
    full = node.labels.get(DRIVER_VERSION_LABEL, "").strip()
    if full:
        return full
    for keys in DRIVER_VERSION_PARTS:
        parts = [node.labels.get(key, "").strip() for key in keys]
        if parts[0]:
            return ".".join(part for part in parts if part)
    return None


def marked_as_gpu_node(node: Node) -> bool:
    """A GPU label or the GPU taint, whatever the node advertises."""
    if any(key in node.labels and node.labels[key] not in LABEL_OFF for key in GPU_NODE_LABELS):
        return True
    return any(taint.key == GPU_RESOURCE for taint in node.taints)


def advertised_gpus(node: Node) -> float:
    """GPUs Kubernetes offers on the node: allocatable, else capacity, of either resource name."""
    return sum(node.allocatable.get(name, node.capacity.get(name, 0.0)) for name in GPU_RESOURCES)


def installed_gpus(node: Node) -> float:
    """GPUs the device plugin found on the node (capacity), healthy or not; allocatable when no
    capacity was pasted."""
    return sum(node.capacity.get(name, node.allocatable.get(name, 0.0)) for name in GPU_RESOURCES)


def is_gpu_node(node: Node) -> bool:
    # Capacity counts too: a node whose GPUs are all unhealthy has them in capacity and 0 allocatable.
    return advertised_gpus(node) > 0 or installed_gpus(node) > 0 or marked_as_gpu_node(node)


def gpu_label(node: Node) -> tuple[str, str]:
    """What marks a node as a GPU node: a GPU label, else the GPU taint, else a legacy GPU resource."""
    for key in GPU_NODE_LABELS:
        if key in node.labels:
            return key, node.labels[key]
    if any(t.key == GPU_RESOURCE for t in node.taints):
        return "taint", GPU_RESOURCE
    if LEGACY_GPU_RESOURCE in node.allocatable or LEGACY_GPU_RESOURCE in node.capacity:
        return "resource", LEGACY_GPU_RESOURCE
    if GPU_RESOURCE in node.allocatable or GPU_RESOURCE in node.capacity:
        return "resource", GPU_RESOURCE
    return "", ""


# Name prefixes of the Pods that make a node's GPUs visible to Kubernetes, from the GPU operator's
# DaemonSets, GKE's installer, and the device plugin's static manifest and Helm chart.
GPU_STACK_POD_PREFIXES = (
    "nvidia-driver-daemonset",
    "nvidia-driver-installer",
    "nvidia-gpu-device-plugin",
    "nvidia-container-toolkit",
    "nvidia-device-plugin",
    "nvidia-operator-validator",
    "nvidia-cuda-validator",
    "nvidia-device-plugin-validator",
    "nvidia-mig-manager",
    "gpu-feature-discovery",
    "gpu-operator-",
)
_APP_LABELS = ("app", "app.kubernetes.io/name", "k8s-app", "name")


def is_gpu_stack_pod(pod: Pod) -> bool:
    """A Pod of the GPU software stack: driver, toolkit, device plugin, validators, GPU operator."""
    names = [pod.name, *(pod.labels.get(key, "") for key in _APP_LABELS)]
    return any(name.startswith(GPU_STACK_POD_PREFIXES) for name in names if name)
