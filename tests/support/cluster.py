"""A realistic KubeRay GPU cluster, healthy by default, and the knobs that break it.

``healthy()`` returns a ``Bundle``: the Kubernetes lists (``kubectl get -o json`` shapes) and the
Ray state of one RayCluster, ``raycluster-gpu`` in namespace ``ml``. Scenarios copy it and change
what a real incident changes (a taint, a selector, a worker that never joined), so every case
differs from a healthy cluster by exactly the fault it is about.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any

from tests.support import k8s

NS = "ml"
CLUSTER = "raycluster-gpu"
RAY_IMAGE = "rayproject/ray:2.9.0-py310"
RAY_GPU_IMAGE = "rayproject/ray:2.9.0-py310-gpu"
A100_LABELS = {
    "cloud.google.com/gke-accelerator": "nvidia-tesla-a100",
    "cloud.google.com/gke-nodepool": "a100-pool",
    "node.kubernetes.io/instance-type": "a2-highgpu-4g",
    "nvidia.com/gpu.present": "true",
    "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB",
    "nvidia.com/gpu.count": "4",
}
GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
GiB = 1024**3


def ray_labels(node_type: str, group: str, *, cluster: str = CLUSTER) -> dict[str, str]:
    """The labels KubeRay puts on a Ray Pod of ``cluster``."""
    return {
        "app.kubernetes.io/created-by": "kuberay-operator",
        "app.kubernetes.io/name": "kuberay",
        "ray.io/cluster": cluster,
        "ray.io/group": group,
        "ray.io/identifier": f"{cluster}-{node_type}",
        "ray.io/is-ray-node": "yes",
        "ray.io/node-type": node_type,
    }


RAY_PORTS = [
    {"containerPort": 6379, "name": "gcs-server", "protocol": "TCP"},
    {"containerPort": 8265, "name": "dashboard", "protocol": "TCP"},
    {"containerPort": 10001, "name": "client", "protocol": "TCP"},
]


def head_container(image: str = RAY_IMAGE) -> dict[str, Any]:
    return k8s.container(
        "ray-head",
        image,
        limits={"cpu": "4", "memory": "16Gi"},
        requests={"cpu": "4", "memory": "16Gi"},
        ports=RAY_PORTS,
        env=[
            {
                "name": "RAY_CLUSTER_NAME",
                "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['ray.io/cluster']"}},
            }
        ],
    )


def cpu_worker_container() -> dict[str, Any]:
    return k8s.container("ray-worker", RAY_IMAGE, limits={"cpu": "4", "memory": "16Gi"})


def gpu_worker_container(gpus: int = 4, image: str = RAY_GPU_IMAGE) -> dict[str, Any]:
    return k8s.container(
        "ray-worker",
        image,
        limits={"cpu": "20", "memory": "160Gi", "nvidia.com/gpu": str(gpus)},
        requests={"cpu": "20", "memory": "160Gi", "nvidia.com/gpu": str(gpus)},
    )


def ray_pod(
    name: str,
    node_type: str,
    group: str,
    container: dict[str, Any],
    *,
    node_name: str | None,
    ip: str | None,
    host_ip: str = "10.128.0.2",
    ready: bool = True,
    tolerations: list[dict[str, Any]] | None = None,
    node_selector: dict[str, str] | None = None,
) -> dict[str, Any]:
    status = (
        k8s.running_status([container], ip=ip, host_ip=host_ip, ready=ready)
        if node_name and ip
        else k8s.pending_status()
    )
    return k8s.pod(
        name,
        NS,
        [container],
        node_name=node_name,
        labels=ray_labels(node_type, group),
        owner=("ray.io/v1", "RayCluster", CLUSTER),
        status=status,
        tolerations=tolerations,
        node_selector=node_selector,
    )


def raycluster(gpu_group: dict[str, Any] | None = None, autoscaling: bool = True) -> dict[str, Any]:
    gpu = {
        "groupName": "gpu-a100",
        "replicas": 2,
        "minReplicas": 0,
        "maxReplicas": 4,
        "numOfHosts": 1,
        "rayStartParams": {},
        "template": {
            "spec": {
                "containers": [gpu_worker_container()],
                "nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB"},
                "tolerations": [k8s.GPU_TOLERATION],
            }
        },
    }
    gpu.update(gpu_group or {})
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {
            "name": CLUSTER,
            "namespace": NS,
            "uid": k8s.uid("RayCluster", NS, CLUSTER),
            "generation": 3,
            "resourceVersion": "4471290",
            "creationTimestamp": k8s.T0,
        },
        "spec": {
            "rayVersion": "2.9.0",
            "enableInTreeAutoscaling": autoscaling,
            "headGroupSpec": {
                "rayStartParams": {"dashboard-host": "0.0.0.0", "num-cpus": "0"},
                "serviceType": "ClusterIP",
                "template": {"spec": {"containers": [head_container()]}},
            },
            "workerGroupSpecs": [
                {
                    "groupName": "cpu-workers",
                    "replicas": 2,
                    "minReplicas": 1,
                    "maxReplicas": 6,
                    "numOfHosts": 1,
                    "rayStartParams": {},
                    "template": {"spec": {"containers": [cpu_worker_container()]}},
                },
                gpu,
            ],
        },
        "status": {
            "state": "ready",
            "availableWorkerReplicas": 4,
            "desiredWorkerReplicas": 4,
            "readyWorkerReplicas": 4,
            "desiredCPU": "48",
            "desiredGPU": "8",
            "desiredMemory": "368Gi",
            "endpoints": {"client": "10001", "dashboard": "8265", "gcs-server": "6379", "metrics": "8080"},
            "head": {"podIP": "10.8.1.10", "serviceIP": "10.12.3.44"},
            "lastUpdateTime": k8s.T2,
            "observedGeneration": 3,
            "conditions": [
                {
                    "type": "HeadPodReady",
                    "status": "True",
                    "reason": "HeadPodRunningAndReady",
                    "message": "",
                    "lastTransitionTime": k8s.T1,
                },
                {
                    "type": "RayClusterProvisioned",
                    "status": "True",
                    "reason": "AllPodRunningAndReadyFirstTime",
                    "message": "",
                    "lastTransitionTime": k8s.T1,
                },
            ],
        },
    }


def ray_node(
    node_id: str, ip: str, total: dict[str, float], used: dict[str, float] | None = None, head: bool = False
):
    used = used or {}
    total = {**total, f"node:{ip}": 1.0}
    if head:
        total["node:__internal_head__"] = 1.0
    return {
        "node_id": node_id,
        "node_ip": ip,
        "state": "ALIVE",
        "is_head": head,
        "resources_total": total,
        "resources_available": {k: v - used.get(k, 0.0) for k, v in total.items()},
        "labels": {"ray.io/node_id": node_id},
    }


def node_id(seed: str) -> str:
    return k8s.hashlib.sha1(seed.encode()).hexdigest() * 2


@dataclass
class Bundle:
    """Raw Kubernetes lists plus Ray state: the input of one diagnosis."""

    kubernetes: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    ray_state: dict[str, Any] | None = None
    texts: list[str] = field(default_factory=list)
    errors: list[dict[str, str]] = field(default_factory=list)
    cluster: str | None = CLUSTER
    namespace: str | None = NS

    @classmethod
    def from_state(cls, raw: dict[str, Any]) -> Bundle:
        """The Kubernetes half of a recorded state (``kubectl get -o json`` lists and log tails, as
        the demo's ``kuberay_state.json`` holds it), for the loopback API server to serve."""
        kubernetes = {key: list(value["items"]) for key, value in raw["kubernetes"].items() if key != "logs"}
        kubernetes["logs"] = raw["kubernetes"].get("logs", [])
        return cls(kubernetes=kubernetes, ray_state=None, cluster=raw["cluster"], namespace=raw["namespace"])

    def copy(self) -> Bundle:
        return copy.deepcopy(self)

    def items(self, kind: str) -> list[dict[str, Any]]:
        return self.kubernetes.setdefault(kind, [])

    def find(self, kind: str, name: str) -> dict[str, Any]:
        return next(o for o in self.items(kind) if o["metadata"]["name"] == name)

    def remove(self, kind: str, name: str) -> None:
        self.kubernetes[kind] = [o for o in self.items(kind) if o["metadata"]["name"] != name]

    def ray_nodes(self) -> list[dict[str, Any]]:
        assert self.ray_state is not None
        nodes: list[dict[str, Any]] = self.ray_state["nodes"]
        return nodes

    def to_json(self) -> dict[str, Any]:
        kinds = {
            "nodes": "Node",
            "pods": "Pod",
            "events": "Event",
            "services": "Service",
            "endpoints": "Endpoints",
            "rayclusters": "RayCluster",
            "rayjobs": "RayJob",
            "rayservices": "RayService",
            "resource_quotas": "ResourceQuota",
            "pvcs": "PersistentVolumeClaim",
            "network_policies": "NetworkPolicy",
            "device_plugin_pods": "Pod",
            "workloads": "Workload",
        }
        body: dict[str, Any] = {
            "cluster": self.cluster,
            "namespace": self.namespace,
            "kubernetes": {
                key: k8s.lst(kinds[key], objects, _api_version(kinds[key]))
                for key, objects in self.kubernetes.items()
                if key != "logs"
            },
        }
        if self.kubernetes.get("logs"):
            body["kubernetes"]["logs"] = self.kubernetes["logs"]
        if self.ray_state is not None:
            body["ray_state"] = self.ray_state
        if self.texts:
            body["texts"] = self.texts
        if self.errors:
            body["errors"] = self.errors
        return json.loads(json.dumps(body))


HEAD = f"{CLUSTER}-head-8x2kq"
CPU_WORKERS = [f"{CLUSTER}-cpu-workers-worker-{s}" for s in ("4jv9t", "q7w2m")]
GPU_WORKERS = [f"{CLUSTER}-gpu-a100-worker-{s}" for s in ("h6b5n", "zr8xd")]
IPS = {
    HEAD: "10.8.1.10",
    CPU_WORKERS[0]: "10.8.1.11",
    CPU_WORKERS[1]: "10.8.2.11",
    GPU_WORKERS[0]: "10.8.3.10",
    GPU_WORKERS[1]: "10.8.4.10",
}


def _api_version(kind: str) -> str:
    if kind.startswith("Ray"):
        return "ray.io/v1"
    return "kueue.x-k8s.io/v1beta1" if kind == "Workload" else "v1"


def healthy() -> Bundle:
    nodes = [
        k8s.node(
            "cp-1",
            cpu="4",
            memory="16393500Ki",
            labels={"node-role.kubernetes.io/control-plane": ""},
            taints=[{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}],
            ip="10.128.0.2",
        ),
        k8s.node("cpu-node-1", ip="10.128.0.3", labels={"cloud.google.com/gke-nodepool": "cpu-pool"}),
        k8s.node("cpu-node-2", ip="10.128.0.4", labels={"cloud.google.com/gke-nodepool": "cpu-pool"}),
        k8s.node(
            "gpu-a100-1",
            cpu="47",
            memory="346887380Ki",
            gpus=4,
            labels=A100_LABELS,
            taints=[GPU_TAINT],
            ip="10.128.0.5",
        ),
        k8s.node(
            "gpu-a100-2",
            cpu="47",
            memory="346887380Ki",
            gpus=4,
            labels=A100_LABELS,
            taints=[GPU_TAINT],
            ip="10.128.0.6",
        ),
    ]
    gpu_tolerations = [k8s.GPU_TOLERATION]
    selector = {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB"}
    pods = [
        ray_pod(
            HEAD,
            "head",
            "headgroup",
            head_container(),
            node_name="cpu-node-1",
            ip=IPS[HEAD],
            host_ip="10.128.0.3",
        ),
        ray_pod(
            CPU_WORKERS[0],
            "worker",
            "cpu-workers",
            cpu_worker_container(),
            node_name="cpu-node-1",
            ip=IPS[CPU_WORKERS[0]],
            host_ip="10.128.0.3",
        ),
        ray_pod(
            CPU_WORKERS[1],
            "worker",
            "cpu-workers",
            cpu_worker_container(),
            node_name="cpu-node-2",
            ip=IPS[CPU_WORKERS[1]],
            host_ip="10.128.0.4",
        ),
        ray_pod(
            GPU_WORKERS[0],
            "worker",
            "gpu-a100",
            gpu_worker_container(),
            node_name="gpu-a100-1",
            ip=IPS[GPU_WORKERS[0]],
            host_ip="10.128.0.5",
            tolerations=gpu_tolerations,
            node_selector=selector,
        ),
        ray_pod(
            GPU_WORKERS[1],
            "worker",
            "gpu-a100",
            gpu_worker_container(),
            node_name="gpu-a100-2",
            ip=IPS[GPU_WORKERS[1]],
            host_ip="10.128.0.6",
            tolerations=gpu_tolerations,
            node_selector=selector,
        ),
        k8s.pod(
            "coredns-5d78c9869d-8kq2x",
            "kube-system",
            [
                k8s.container(
                    "coredns",
                    "registry.k8s.io/coredns/coredns:v1.11.1",
                    requests={"cpu": "100m", "memory": "70Mi"},
                    limits={"memory": "170Mi"},
                )
            ],
            node_name="cpu-node-2",
            labels={"k8s-app": "kube-dns"},
            owner=("apps/v1", "ReplicaSet", "coredns-5d78c9869d"),
            status=k8s.running_status(
                [{"name": "coredns", "image": "registry.k8s.io/coredns/coredns:v1.11.1"}],
                ip="10.8.2.3",
                host_ip="10.128.0.4",
            ),
        ),
    ]
    plugin = [
        k8s.pod(
            f"nvidia-device-plugin-daemonset-{suffix}",
            "kube-system",
            [k8s.container("nvidia-device-plugin-ctr", "nvcr.io/nvidia/k8s-device-plugin:v0.16.2")],
            node_name=node_name,
            labels={"name": "nvidia-device-plugin-ds"},
            owner=("apps/v1", "DaemonSet", "nvidia-device-plugin-daemonset"),
            tolerations=gpu_tolerations,
            status=k8s.running_status(
                [{"name": "nvidia-device-plugin-ctr", "image": "nvcr.io/nvidia/k8s-device-plugin:v0.16.2"}],
                ip=ip,
                host_ip=host,
            ),
        )
        for suffix, node_name, ip, host in (
            ("7hx2c", "gpu-a100-1", "10.8.3.2", "10.128.0.5"),
            ("m9d4w", "gpu-a100-2", "10.8.4.2", "10.128.0.6"),
        )
    ]
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": f"{CLUSTER}-head-svc",
            "namespace": NS,
            "uid": k8s.uid("svc", NS, CLUSTER),
            "labels": {
                "ray.io/cluster": CLUSTER,
                "ray.io/node-type": "head",
                "ray.io/identifier": f"{CLUSTER}-head",
            },
            "ownerReferences": [
                {
                    "apiVersion": "ray.io/v1",
                    "kind": "RayCluster",
                    "name": CLUSTER,
                    "uid": k8s.uid("RayCluster", NS, CLUSTER),
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {
            "clusterIP": "None",
            "clusterIPs": ["None"],
            "type": "ClusterIP",
            "selector": {"ray.io/cluster": CLUSTER, "ray.io/node-type": "head"},
            "ports": [
                {"name": "gcs-server", "port": 6379, "protocol": "TCP", "targetPort": 6379},
                {"name": "dashboard", "port": 8265, "protocol": "TCP", "targetPort": 8265},
                {"name": "client", "port": 10001, "protocol": "TCP", "targetPort": 10001},
                {"name": "metrics", "port": 8080, "protocol": "TCP", "targetPort": 8080},
            ],
            "publishNotReadyAddresses": True,
        },
        "status": {"loadBalancer": {}},
    }
    endpoints = {
        "apiVersion": "v1",
        "kind": "Endpoints",
        "metadata": {"name": f"{CLUSTER}-head-svc", "namespace": NS, "labels": service["metadata"]["labels"]},
        "subsets": [
            {
                "addresses": [
                    {
                        "ip": IPS[HEAD],
                        "nodeName": "cpu-node-1",
                        "targetRef": {
                            "kind": "Pod",
                            "name": HEAD,
                            "namespace": NS,
                            "uid": k8s.uid("pod", NS, HEAD),
                        },
                    }
                ],
                "ports": [
                    {"name": "gcs-server", "port": 6379, "protocol": "TCP"},
                    {"name": "dashboard", "port": 8265, "protocol": "TCP"},
                    {"name": "client", "port": 10001, "protocol": "TCP"},
                    {"name": "metrics", "port": 8080, "protocol": "TCP"},
                ],
            }
        ],
    }
    events = [
        k8s.event(
            NS,
            "Pod",
            GPU_WORKERS[0],
            "Scheduled",
            f"Successfully assigned {NS}/{GPU_WORKERS[0]} to gpu-a100-1",
            type_="Normal",
        ),
        k8s.event(
            NS,
            "Pod",
            GPU_WORKERS[0],
            "Pulled",
            f'Container image "{RAY_GPU_IMAGE}" already present on machine',
            type_="Normal",
            component="kubelet",
        ),
        k8s.event(
            NS,
            "Pod",
            GPU_WORKERS[0],
            "Started",
            "Started container ray-worker",
            type_="Normal",
            component="kubelet",
        ),
        k8s.event(
            NS,
            "RayCluster",
            CLUSTER,
            "CreatedWorkerPod",
            f"Created worker Pod {NS}/{GPU_WORKERS[1]}",
            type_="Normal",
            component="raycluster-controller",
            api_version="ray.io/v1",
        ),
    ]
    cpu = {"CPU": 4.0, "memory": 16.0 * GiB, "object_store_memory": 4.6 * GiB}
    gpu = {
        "CPU": 20.0,
        "GPU": 4.0,
        "memory": 160.0 * GiB,
        "object_store_memory": 30.0 * GiB,
        "accelerator_type:A100": 1.0,
    }
    job = "02000000"
    ray_state = {
        "version": "2.9.0",
        "nodes": [
            ray_node(
                node_id(HEAD), IPS[HEAD], {"memory": 16.0 * GiB, "object_store_memory": 4.6 * GiB}, head=True
            ),
            ray_node(node_id(CPU_WORKERS[0]), IPS[CPU_WORKERS[0]], cpu, {"CPU": 1.0}),
            ray_node(node_id(CPU_WORKERS[1]), IPS[CPU_WORKERS[1]], cpu),
            ray_node(node_id(GPU_WORKERS[0]), IPS[GPU_WORKERS[0]], gpu, {"GPU": 1.0, "CPU": 1.0}),
            ray_node(node_id(GPU_WORKERS[1]), IPS[GPU_WORKERS[1]], gpu),
        ],
        "actors": [
            {
                "actor_id": "8f4b0c6e1d2a3b4c5d6e7f8002000000",
                "class_name": "Trainer",
                "name": "trainer-0",
                "state": "ALIVE",
                "node_id": node_id(GPU_WORKERS[0]),
                "job_id": job,
                "pid": 4123,
                "required_resources": {"GPU": 1.0, "CPU": 1.0},
                "detached": False,
            }
        ],
        "jobs": [
            {
                "job_id": job,
                "submission_id": "raysubmit_T8nd2kq",
                "status": "RUNNING",
                "entrypoint": "python train.py",
            }
        ],
    }
    return Bundle(
        kubernetes={
            "nodes": nodes,
            "pods": pods,
            "events": events,
            "services": [service],
            "endpoints": [endpoints],
            "rayclusters": [raycluster()],
            "device_plugin_pods": plugin,
        },
        ray_state=ray_state,
    )
