"""Build ``bot/demo/kuberay_state.json``, the Kubernetes half of ``make demo``.

    .venv/bin/python tools/build_demo_state.py           # rewrite the file
    .venv/bin/python tools/build_demo_state.py --check   # exit 1 if the file differs from a rebuild

The file is committed (and shipped with the package) so that the demo reads it and needs nothing
else; this tool is how it changes. The objects come from the builders every test fixture uses
(``tests/support/k8s.py``); what this cluster is (names, addresses, times, the scheduler's message,
the lost worker's log) lives in ``bot/demo/kuberay_state.py``, which the demo and its tests read too.
The Pods are built in ``tools/demo_state_pods.py``; the nodes, events, RayCluster and head Service here.
The objects' keys are written sorted, as ``kubectl get -o json`` prints them, so the file does not
depend on the order the builders happen to set them in.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bot.demo.kuberay_state import (  # noqa: E402
    A100_PENDING_POD,
    A100_POD,
    CLUSTER,
    CREATED,
    HEAD_IP,
    HEAD_POD,
    HEAD_SERVICE,
    LOST_POD,
    LOST_POD_LOG,
    NAMESPACE,
    RAY_VERSION,
    RECORDED,
    SCALED,
    SCHEDULER_MESSAGE,
    STARTED,
    STATE_FILE,
    T4_POD,
)
from tests.support import k8s  # noqa: E402
from tools.demo_state_pods import (  # noqa: E402
    A100_SELECTOR,
    A100_WORKER,
    CPU_WORKER,
    GPU_TAINT,
    LIST_VERSION,
    RAY_CLUSTER,
    RAY_PORTS,
    T4_SELECTOR,
    T4_WORKER,
    device_plugin_pods,
    head_container,
    kube_proxy_pod,
    ray_pods,
    worker_container,
)

# --- nodes ---------------------------------------------------------------------------------------

# The kubelet reports these besides MemoryPressure and Ready, in this order.
_MORE_PRESSURE = [
    ("DiskPressure", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
    ("PIDPressure", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
]


def _node(
    name: str,
    ip: str,
    instance_type: str,
    *,
    cpu: str,
    memory: str,
    pool: str,
    gpus: int | None = None,
    labels: dict[str, str] | None = None,
    taints: list[dict[str, str]] | None = None,
) -> dict[str, Any]:
    """A GKE node as this cluster's kubelets (1.31.4-gke) report it."""
    cidr = f"10.8.{int(ip.rsplit('.', 1)[1])}.0/24"
    node = k8s.node(
        name,
        cpu=cpu,
        memory=memory,
        gpus=gpus,
        labels={
            "cloud.google.com/gke-nodepool": pool,
            "cloud.google.com/machine-family": instance_type.split("-", 1)[0],
            "node.kubernetes.io/instance-type": instance_type,
            **(labels or {}),
        },
        taints=taints,
        ip=ip,
        created=CREATED,
        heartbeat=RECORDED,
        ephemeral_storage="47060071478",
        pod_cidr=cidr,
        project="ml-platform-prod",
        resource_version=k8s.version("node", name),
    )
    node["metadata"]["annotations"].update(
        {
            "container.googleapis.com/instance_id": str(int(k8s.uid("instance", name)[:8], 16)),
            "volumes.kubernetes.io/controller-managed-attach-detach": "true",
        }
    )
    node["spec"]["podCIDRs"] = [cidr]
    status = node["status"]
    status["conditions"][1:1] = [
        {
            "lastHeartbeatTime": RECORDED,
            "lastTransitionTime": CREATED,
            "message": message,
            "reason": reason,
            "status": "False",
            "type": kind,
        }
        for kind, reason, message in _MORE_PRESSURE
    ]
    status["nodeInfo"].update(
        {
            "containerRuntimeVersion": "containerd://1.7.24",
            "kernelVersion": "6.6.56+",
            "kubeProxyVersion": "v1.31.4-gke.1256000",
            "kubeletVersion": "v1.31.4-gke.1256000",
            "machineID": k8s.uid("machine", name).replace("-", ""),
        }
    )
    return node


def nodes() -> list[dict[str, Any]]:
    a100_labels = {
        "cloud.google.com/gke-accelerator": "nvidia-tesla-a100",
        "cloud.google.com/gke-gpu": "true",
    }
    # gpu-feature-discovery labels come with the GPU operator's plugin; only gpu-a100-1 has them.
    discovered = {
        "nvidia.com/gpu.count": "1",
        "nvidia.com/gpu.memory": "40960",
        "nvidia.com/gpu.present": "true",
        "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB",
    }
    return [
        _node(
            "control-plane-1",
            "10.128.0.2",
            "e2-standard-4",
            cpu="3920m",
            memory="13364508Ki",
            pool="system",
            labels={"node-role.kubernetes.io/control-plane": ""},
            taints=[{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}],
        ),
        _node(
            "cpu-node-1", "10.128.0.3", "n2-standard-16", cpu="15890m", memory="57893788Ki", pool="cpu-pool"
        ),
        _node(
            "gpu-a100-1",
            "10.128.0.5",
            "a2-highgpu-1g",
            cpu="11900m",
            memory="76473712Ki",
            pool="a100-pool",
            gpus=1,
            labels={**a100_labels, **discovered},
            taints=[GPU_TAINT],
        ),
        _node(
            "gpu-t4-1",
            "10.128.0.6",
            "n1-standard-8",
            cpu="7910m",
            memory="26890884Ki",
            pool="t4-pool",
            gpus=1,
            labels={
                "cloud.google.com/gke-accelerator": "nvidia-tesla-t4",
                "cloud.google.com/gke-gpu": "true",
                "nvidia.com/gpu.count": "1",
                "nvidia.com/gpu.memory": "15360",
                "nvidia.com/gpu.present": "true",
                "nvidia.com/gpu.product": "Tesla-T4",
            },
            taints=[GPU_TAINT],
        ),
        # Added to the pool later; nothing registered its GPU with the kubelet.
        _node(
            "gpu-a100-2",
            "10.128.0.7",
            "a2-highgpu-1g",
            cpu="11900m",
            memory="76473712Ki",
            pool="a100-pool",
            labels=a100_labels,
            taints=[GPU_TAINT],
        ),
    ]


# --- the rest ------------------------------------------------------------------------------------


def _event(
    kind: str, name: str, reason: str, message: str, *, first: str = STARTED, last: str = STARTED, **more: Any
) -> dict[str, Any]:
    return k8s.event(
        NAMESPACE,
        kind,
        name,
        reason,
        message,
        first=first,
        last=last,
        object_uid=k8s.uid("pod" if kind == "Pod" else kind, NAMESPACE, name),
        versions=None,
        **{"type_": "Normal", **more},
    )


def events() -> list[dict[str, Any]]:
    scheduled = [
        (HEAD_POD, "cpu-node-1"),
        (A100_POD, "gpu-a100-1"),
        (T4_POD, "gpu-t4-1"),
        (LOST_POD, "cpu-node-1"),
    ]
    found = [
        _event("Pod", pod, "Scheduled", f"Successfully assigned {NAMESPACE}/{pod} to {node}")
        for pod, node in scheduled
    ]
    found += [
        _event(
            "Pod",
            pod,
            "Started",
            f"Started container {'ray-head' if pod == HEAD_POD else 'ray-worker'}",
            component="kubelet",
            host=node,
        )
        for pod, node in scheduled
    ]
    found += [
        _event(
            "RayCluster",
            CLUSTER,
            "CreatedWorkerPod",
            f"Created worker Pod {NAMESPACE}/{A100_PENDING_POD}",
            component="raycluster-controller",
            api_version="ray.io/v1",
            first=SCALED,
            last=SCALED,
        ),
        _event(
            "Pod",
            A100_PENDING_POD,
            "FailedScheduling",
            SCHEDULER_MESSAGE,
            type_="Warning",
            count=23,
            first=SCALED,
            last="2026-11-30T09:51:48Z",
        ),
    ]
    return found


def raycluster() -> dict[str, Any]:
    def group(name: str, spec: tuple[str, str, str, str, int], replicas: int, **pod: Any) -> dict[str, Any]:
        return {
            "groupName": name,
            "maxReplicas": max(4, replicas),
            "minReplicas": 0,
            "numOfHosts": 1,
            "rayStartParams": {"metrics-export-port": "8080"},
            "replicas": replicas,
            "template": {"spec": {"containers": [_template_container(spec)], **pod}},
        }

    gpu_pod = {"tolerations": [k8s.GPU_TOLERATION]}
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {
            "creationTimestamp": CREATED,
            "generation": 4,
            "labels": {"app.kubernetes.io/part-of": "ml-platform"},
            "name": CLUSTER,
            "namespace": NAMESPACE,
            "resourceVersion": k8s.version("RayCluster", CLUSTER),
            "uid": k8s.uid("RayCluster", NAMESPACE, CLUSTER),
        },
        "spec": {
            "enableInTreeAutoscaling": False,
            "headGroupSpec": {
                "rayStartParams": {"dashboard-host": "0.0.0.0", "metrics-export-port": "8080"},
                "serviceType": "ClusterIP",
                "template": {"spec": {"containers": [_template_container(None)]}},
            },
            "rayVersion": RAY_VERSION,
            "workerGroupSpecs": [
                group("cpu-workers", CPU_WORKER, 1),
                group("gpu-a100", A100_WORKER, 2, nodeSelector=A100_SELECTOR, **gpu_pod),
                group("gpu-t4", T4_WORKER, 1, nodeSelector=T4_SELECTOR, **gpu_pod),
            ],
        },
        "status": {
            "availableWorkerReplicas": 3,
            "conditions": [
                {
                    "lastTransitionTime": STARTED,
                    "message": "",
                    "reason": "HeadPodRunningAndReady",
                    "status": "True",
                    "type": "HeadPodReady",
                },
                {
                    "lastTransitionTime": STARTED,
                    "message": "All Ray Pods are ready for the first time",
                    "reason": "AllPodRunningAndReadyFirstTime",
                    "status": "True",
                    "type": "RayClusterProvisioned",
                },
            ],
            "desiredCPU": "18",
            "desiredGPU": "3",
            "desiredMemory": "104Gi",
            "desiredTPU": "0",
            "desiredWorkerReplicas": 4,
            "endpoints": {"client": "10001", "dashboard": "8265", "gcs-server": "6379", "metrics": "8080"},
            "head": {
                "podIP": HEAD_IP,
                "podName": HEAD_POD,
                "serviceIP": HEAD_IP,
                "serviceName": HEAD_SERVICE,
            },
            "lastUpdateTime": RECORDED,
            "maxWorkerReplicas": 12,
            "minWorkerReplicas": 0,
            "observedGeneration": 4,
            "readyWorkerReplicas": 3,
            "state": "ready",
            "stateTransitionTimes": {"ready": STARTED},
        },
    }


def _template_container(spec: tuple[str, str, str, str, int] | None) -> dict[str, Any]:
    """A container as written in the RayCluster: no status-side fields, no service-account mount."""
    body = head_container() if spec is None else worker_container(*spec)
    body = {k: v for k, v in body.items() if k not in ("terminationMessagePath", "terminationMessagePolicy")}
    body.pop("volumeMounts", None)
    body.pop("command", None)
    body.pop("args", None)
    return body


def head_service() -> tuple[dict[str, Any], dict[str, Any]]:
    labels = {
        "app.kubernetes.io/created-by": "kuberay-operator",
        "app.kubernetes.io/name": "kuberay",
        "ray.io/cluster": CLUSTER,
        "ray.io/identifier": f"{CLUSTER}-head",
        "ray.io/node-type": "head",
    }
    ports = [(p["name"], p["containerPort"]) for p in RAY_PORTS]
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "creationTimestamp": CREATED,
            "labels": labels,
            "name": HEAD_SERVICE,
            "namespace": NAMESPACE,
            "ownerReferences": k8s.owner_references(*RAY_CLUSTER, namespace=NAMESPACE),
            "resourceVersion": k8s.version("svc", HEAD_SERVICE),
            "uid": k8s.uid("svc", NAMESPACE, HEAD_SERVICE),
        },
        "spec": {
            "clusterIP": "None",
            "clusterIPs": ["None"],
            "internalTrafficPolicy": "Cluster",
            "ipFamilies": ["IPv4"],
            "ipFamilyPolicy": "SingleStack",
            "ports": [{"name": n, "port": p, "protocol": "TCP", "targetPort": p} for n, p in ports],
            "publishNotReadyAddresses": True,
            "selector": {"ray.io/cluster": CLUSTER, "ray.io/node-type": "head"},
            "sessionAffinity": "None",
            "type": "ClusterIP",
        },
        "status": {"loadBalancer": {}},
    }
    endpoints = {
        "apiVersion": "v1",
        "kind": "Endpoints",
        "metadata": {
            "annotations": {"endpoints.kubernetes.io/last-change-trigger-time": STARTED},
            "creationTimestamp": CREATED,
            "labels": {**labels, "service.kubernetes.io/headless": ""},
            "name": HEAD_SERVICE,
            "namespace": NAMESPACE,
            "resourceVersion": k8s.version("endpoints", HEAD_SERVICE),
            "uid": k8s.uid("endpoints", NAMESPACE, HEAD_SERVICE),
        },
        "subsets": [
            {
                "addresses": [
                    {
                        "ip": HEAD_IP,
                        "nodeName": "cpu-node-1",
                        "targetRef": {
                            "kind": "Pod",
                            "name": HEAD_POD,
                            "namespace": NAMESPACE,
                            "uid": k8s.uid("pod", NAMESPACE, HEAD_POD),
                        },
                    }
                ],
                "ports": [{"name": n, "port": p, "protocol": "TCP"} for n, p in ports],
            }
        ],
    }
    return service, endpoints


def build_state() -> dict[str, Any]:
    """The bundle the demo loads, exactly as ``kuberay_state.json`` holds it."""
    service, endpoints = head_service()
    plugins = device_plugin_pods()
    # As the live collector reads them: the RayCluster's Pods, Pending Pods anywhere, and the Pods
    # bound to the nodes that could host a Pending one (the A100 nodes), to count what is in use.
    pods = [
        *ray_pods(),
        plugins[0],
        kube_proxy_pod("gpu-a100-1", "10.128.0.5"),
        kube_proxy_pod("gpu-a100-2", "10.128.0.7"),
    ]
    return {
        "cluster": CLUSTER,
        "namespace": NAMESPACE,
        "recorded_at": RECORDED,
        "description": "KubeRay cluster demo-gpu as raydiag's live collector reads it; "
        "generated by tools/build_demo_state.py",
        "kubernetes": {
            "nodes": k8s.lst("Node", nodes(), resource_version=LIST_VERSION),
            "pods": k8s.lst("Pod", pods, resource_version=LIST_VERSION),
            "events": k8s.lst("Event", events(), resource_version=LIST_VERSION),
            "services": k8s.lst("Service", [service], resource_version=LIST_VERSION),
            "endpoints": k8s.lst("Endpoints", [endpoints], resource_version=LIST_VERSION),
            "rayclusters": k8s.lst("RayCluster", [raycluster()], "ray.io/v1", LIST_VERSION),
            "device_plugin_pods": k8s.lst("Pod", plugins, resource_version=LIST_VERSION),
            "logs": [
                {"pod": LOST_POD, "namespace": NAMESPACE, "container": "ray-worker", "lines": LOST_POD_LOG}
            ],
        },
    }


def _sorted(value: Any) -> Any:
    return json.loads(json.dumps(value, sort_keys=True))


def render_state() -> str:
    """The file's text: each Kubernetes list with its keys sorted, the bundle's own keys as written."""
    state = build_state()
    kube = state["kubernetes"]
    state["kubernetes"] = {key: value if key == "logs" else _sorted(value) for key, value in kube.items()}
    return json.dumps(state, indent=1) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--check", action="store_true", help="only check that the file is up to date")
    args = parser.parse_args(argv)
    shown = STATE_FILE.relative_to(ROOT)
    text = render_state()
    if args.check:
        current = STATE_FILE.read_text(encoding="utf-8") if STATE_FILE.exists() else ""
        if current != text:
            print(f"{shown} is out of date: run tools/build_demo_state.py", file=sys.stderr)
            return 1
        print(f"{shown} is up to date")
        return 0
    STATE_FILE.write_text(text, encoding="utf-8")
    print(f"wrote {shown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
