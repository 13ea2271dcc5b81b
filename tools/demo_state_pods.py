"""The Pods of ``bot/demo/kuberay_state.json``: the Ray Pods, a device plugin's, kube-proxy's.

Part of ``tools/build_demo_state.py`` (run that); built from ``tests/support/k8s.py``.
"""

from __future__ import annotations

import hashlib
from typing import Any

from bot.demo.kuberay_state import (
    A100_IP,
    A100_PENDING_POD,
    A100_POD,
    CLUSTER,
    CREATED,
    HEAD_IP,
    HEAD_POD,
    HEAD_SERVICE,
    LOST_IP,
    LOST_POD,
    NAMESPACE,
    RAY_VERSION,
    SCALED,
    SCHEDULER_MESSAGE,
    STARTED,
    T4_IP,
    T4_POD,
)
from tests.support import k8s
from tests.support.cluster import ray_labels

RAY_IMAGE = f"rayproject/ray:{RAY_VERSION}-py311"
RAY_GPU_IMAGE = f"rayproject/ray:{RAY_VERSION}-py311-gpu"
PLUGIN_IMAGE = "nvcr.io/nvidia/k8s-device-plugin:v0.17.0"
GPU = "nvidia.com/gpu"
GPU_TAINT = {"key": GPU, "value": "present", "effect": "NoSchedule"}
A100_SELECTOR = {"cloud.google.com/gke-accelerator": "nvidia-tesla-a100"}
T4_SELECTOR = {"cloud.google.com/gke-accelerator": "nvidia-tesla-t4"}
LIST_VERSION = "4479911"

# The service-account token every Pod gets mounted (the admission controller adds both halves).
TOKEN_VOLUME = {
    "name": "kube-api-access",
    "projected": {
        "defaultMode": 420,
        "sources": [
            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
            {"configMap": {"items": [{"key": "ca.crt", "path": "ca.crt"}], "name": "kube-root-ca.crt"}},
        ],
    },
}
TOKEN_MOUNT = {
    "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
    "name": "kube-api-access",
    "readOnly": True,
}


def _container(
    name: str,
    image: str,
    *,
    cpu: str | None = None,
    memory: str | None = None,
    gpus: int = 0,
    ports: list[dict[str, Any]] | None = None,
    command: list[str] | None = None,
) -> dict[str, Any]:
    """Requests equal to limits (Guaranteed), as KubeRay's samples write them."""
    amounts = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v}
    if gpus:
        amounts[GPU] = str(gpus)
    return k8s.container(
        name,
        image,
        requests=dict(amounts) or None,
        limits=dict(amounts) or None,
        ports=ports,
        command=command,
        mounts=[TOKEN_MOUNT],
    )


def _running(
    containers: list[dict[str, Any]], ip: str, host_ip: str, started: str, qos_class: str | None = None
) -> dict[str, Any]:
    """Running and Ready, with the image references containerd reports for these registries."""
    if qos_class is None:
        limited = all(c["resources"].get("limits") for c in containers)
        qos_class = "Guaranteed" if limited else "BestEffort"
    status = k8s.running_status(containers, ip=ip, host_ip=host_ip, started=started, qos_class=qos_class)
    for container, reported in zip(containers, status["containerStatuses"], strict=True):
        image = container["image"]
        reported["containerID"] = (
            "containerd://" + hashlib.sha256((ip + container["name"]).encode()).hexdigest()
        )
        reported["image"] = f"docker.io/{image}" if image.startswith("rayproject/") else image
        reported["imageID"] = image.split(":", 1)[0] + "@sha256:" + hashlib.sha256(image.encode()).hexdigest()
    return status


def _pod(
    name: str,
    namespace: str,
    containers: list[dict[str, Any]],
    *,
    owner: tuple[str, str, str],
    status: dict[str, Any],
    labels: dict[str, str],
    created: str = STARTED,
    **spec: Any,
) -> dict[str, Any]:
    return k8s.pod(
        name,
        namespace,
        containers,
        labels=labels,
        owner=owner,
        status=status,
        volumes=[TOKEN_VOLUME],
        generated=True,
        created=created,
        resource_version=k8s.version("pod", namespace, name),
        **spec,
    )


RAY_PORTS = [
    {"containerPort": 6379, "name": "gcs-server", "protocol": "TCP"},
    {"containerPort": 8265, "name": "dashboard", "protocol": "TCP"},
    {"containerPort": 10001, "name": "client", "protocol": "TCP"},
    {"containerPort": 8080, "name": "metrics", "protocol": "TCP"},
]
HEAD_FQDN = f"{HEAD_SERVICE}.{NAMESPACE}.svc.cluster.local"
RAY_CLUSTER = ("ray.io/v1", "RayCluster", CLUSTER)


def head_container() -> dict[str, Any]:
    start = "ulimit -n 65536; ray start --head --block --dashboard-host=0.0.0.0 --metrics-export-port=8080"
    return _container("ray-head", RAY_IMAGE, cpu="2", memory="8Gi", ports=RAY_PORTS, command=[start])


def worker_container(group: str, image: str, cpu: str, memory: str, gpus: int) -> dict[str, Any]:
    start = f"ulimit -n 65536; ray start --address={HEAD_FQDN}:6379 --block --metrics-export-port=8080"
    if gpus:
        start += f" --num-gpus={gpus}"
    return _container(
        "ray-worker",
        image,
        cpu=cpu,
        memory=memory,
        gpus=gpus,
        ports=[{"containerPort": 8080, "name": "metrics", "protocol": "TCP"}],
        command=[start],
    )


A100_WORKER = ("gpu-a100", RAY_GPU_IMAGE, "4", "32Gi", 1)
T4_WORKER = ("gpu-t4", RAY_GPU_IMAGE, "4", "16Gi", 1)
CPU_WORKER = ("cpu-workers", RAY_IMAGE, "4", "16Gi", 0)


def _labels(node_type: str, group: str) -> dict[str, str]:
    return ray_labels(node_type, group, cluster=CLUSTER)


def ray_pods() -> list[dict[str, Any]]:
    head = head_container()
    a100, t4, cpu = (worker_container(*spec) for spec in (A100_WORKER, T4_WORKER, CPU_WORKER))
    return [
        _pod(
            HEAD_POD,
            NAMESPACE,
            [head],
            labels=_labels("head", "headgroup"),
            owner=RAY_CLUSTER,
            node_name="cpu-node-1",
            status=_running([head], HEAD_IP, "10.128.0.3", STARTED),
        ),
        _pod(
            A100_POD,
            NAMESPACE,
            [a100],
            labels=_labels("worker", "gpu-a100"),
            owner=RAY_CLUSTER,
            node_name="gpu-a100-1",
            node_selector=A100_SELECTOR,
            status=_running([a100], A100_IP, "10.128.0.5", STARTED),
            tolerations=[k8s.GPU_TOLERATION],
        ),
        _pod(
            T4_POD,
            NAMESPACE,
            [t4],
            labels=_labels("worker", "gpu-t4"),
            owner=RAY_CLUSTER,
            node_name="gpu-t4-1",
            node_selector=T4_SELECTOR,
            status=_running([t4], T4_IP, "10.128.0.6", STARTED),
            tolerations=[k8s.GPU_TOLERATION],
        ),
        _pod(
            LOST_POD,
            NAMESPACE,
            [cpu],
            labels=_labels("worker", "cpu-workers"),
            owner=RAY_CLUSTER,
            node_name="cpu-node-1",
            status=_running([cpu], LOST_IP, "10.128.0.3", STARTED),
        ),
        _pod(
            A100_PENDING_POD,
            NAMESPACE,
            [worker_container(*A100_WORKER)],
            labels=_labels("worker", "gpu-a100"),
            owner=RAY_CLUSTER,
            node_selector=A100_SELECTOR,
            status=k8s.pending_status(SCHEDULER_MESSAGE, since=SCALED, qos_class="Guaranteed"),
            created=SCALED,
            tolerations=[k8s.GPU_TOLERATION],
        ),
    ]


def _plugin_pod(suffix: str, node: str, ip: str, host_ip: str) -> dict[str, Any]:
    container = k8s.container("nvidia-device-plugin-ctr", PLUGIN_IMAGE, mounts=[TOKEN_MOUNT])
    return _pod(
        f"nvidia-device-plugin-daemonset-{suffix}",
        "gpu-operator",
        [container],
        labels={
            "app": "nvidia-device-plugin-daemonset",
            "app.kubernetes.io/managed-by": "gpu-operator",
            "controller-revision-hash": "6c9f8b7d54",
            "pod-template-generation": "1",
        },
        owner=("apps/v1", "DaemonSet", "nvidia-device-plugin-daemonset"),
        node_name=node,
        status=_running([container], ip, host_ip, CREATED),
        tolerations=[k8s.GPU_TOLERATION],
        priority_class="system-node-critical",
        created=CREATED,
    )


def device_plugin_pods() -> list[dict[str, Any]]:
    # None on gpu-a100-2: its node pool was created without the label the DaemonSet selects.
    return [
        _plugin_pod("x7k2p", "gpu-a100-1", "10.8.5.4", "10.128.0.5"),
        _plugin_pod("b9m4t", "gpu-t4-1", "10.8.6.4", "10.128.0.6"),
    ]


def kube_proxy_pod(node: str, host_ip: str) -> dict[str, Any]:
    image = "gke.gcr.io/kube-proxy-amd64:v1.31.4-gke.1256000"
    container = k8s.container("kube-proxy", image, requests={"cpu": "100m"}, mounts=[TOKEN_MOUNT])
    return _pod(
        f"kube-proxy-{node}",
        "kube-system",
        [container],
        labels={"component": "kube-proxy", "tier": "node"},
        owner=("v1", "Node", node),
        node_name=node,
        status=_running([container], host_ip, host_ip, CREATED, qos_class="Burstable"),
        priority_class="system-node-critical",
        created=CREATED,
    )
