"""The Kubernetes half of the demo: a recorded-looking KubeRay cluster, written once to JSON.

The demo's Ray half is real (raylets on 127.0.0.2-4); there is no Kubernetes on a laptop, so the
Kubernetes half is a bundle in the shape ``bot.snapshot.files.snapshot_from_bundle`` reads: the
lists exactly as ``kubectl get -o json`` prints them, for RayCluster ``demo-gpu`` in namespace
``ml``. Pod IPs are the raylets' loopback addresses, so the two halves line up by IP the way a
real cluster's do. What is wrong on the Kubernetes side:

- ``gpu-a100-2`` is an A100 node (GKE's accelerator label, the GPU taint) whose allocatable has no
  ``nvidia.com/gpu``: no NVIDIA device plugin runs there. The second A100 worker Pod is Pending,
  and the scheduler's only words are ``Insufficient nvidia.com/gpu`` (cause 3);
- the CPU worker at 127.0.0.9 is Running and Ready but its raylet never reached the head's GCS,
  and its log says so (cause 8).

``kuberay_state.json`` next to this file is what the demo loads; ``python -m
bot.demo.kuberay_state`` rewrites it, and a test checks the two agree.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

STATE_FILE = Path(__file__).resolve().with_name("kuberay_state.json")

CLUSTER = "demo-gpu"
NAMESPACE = "ml"
RAY_VERSION = "2.60.0"
RAY_IMAGE = f"rayproject/ray:{RAY_VERSION}-py311"
RAY_GPU_IMAGE = f"rayproject/ray:{RAY_VERSION}-py311-gpu"
PLUGIN_IMAGE = "nvcr.io/nvidia/k8s-device-plugin:v0.17.0"

CREATED = "2026-11-30T07:58:12Z"
STARTED = "2026-11-30T09:12:41Z"
SCALED = "2026-11-30T09:31:05Z"
RECORDED = "2026-11-30T09:52:30Z"

HEAD_POD = f"{CLUSTER}-head-7ktwq"
A100_POD = f"{CLUSTER}-gpu-a100-worker-9xv2d"
A100_PENDING_POD = f"{CLUSTER}-gpu-a100-worker-q4n7s"
T4_POD = f"{CLUSTER}-gpu-t4-worker-m2p8c"
LOST_POD = f"{CLUSTER}-cpu-workers-worker-h5r6j"
HEAD_SERVICE = f"{CLUSTER}-head-svc"

HEAD_IP = "127.0.0.2"
A100_IP = "127.0.0.3"
T4_IP = "127.0.0.4"
LOST_IP = "127.0.0.9"

GPU = "nvidia.com/gpu"
GPU_TAINT = {"key": GPU, "value": "present", "effect": "NoSchedule"}
GPU_TOLERATION = {"key": GPU, "operator": "Exists", "effect": "NoSchedule"}
A100_SELECTOR = {"cloud.google.com/gke-accelerator": "nvidia-tesla-a100"}
T4_SELECTOR = {"cloud.google.com/gke-accelerator": "nvidia-tesla-t4"}
DEFAULT_TOLERATIONS = [
    {
        "key": "node.kubernetes.io/not-ready",
        "operator": "Exists",
        "effect": "NoExecute",
        "tolerationSeconds": 300,
    },
    {
        "key": "node.kubernetes.io/unreachable",
        "operator": "Exists",
        "effect": "NoExecute",
        "tolerationSeconds": 300,
    },
]

# What kube-scheduler (1.31) prints for the second A100 worker on these five nodes: the control
# plane's taint, two nodes of the wrong kind, and two A100 nodes without a free nvidia.com/gpu —
# gpu-a100-1's one GPU is taken by the first A100 worker, gpu-a100-2 advertises none. Nobody has a
# lower priority to evict, hence the preemption half.
SCHEDULER_MESSAGE = (
    "0/5 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, "
    "2 Insufficient nvidia.com/gpu, 2 node(s) didn't match Pod's node affinity/selector. "
    "preemption: 0/5 nodes are available: 2 No preemption victims found for incoming pod, "
    "3 Preemption is not helpful for scheduling."
)

_GCS_ERROR = (
    "Unable to connect to GCS (ray head) at {HEAD}:6379. Check that (1) Ray with matching version started "
    "successfully at the specified address, (2) this node can reach the specified address, and (3) there "
    "is no firewall setting preventing access."
).replace("{HEAD}", HEAD_IP)
LOST_POD_LOG = [
    "2026-11-30 09:12:54,380\tINFO scripts.py:1234 -- Local node IP: 127.0.0.9",
    f"2026-11-30 09:13:01,412\tWARNING utils.py:1209 -- {_GCS_ERROR}",
    f"2026-11-30 09:13:08,447\tWARNING utils.py:1209 -- {_GCS_ERROR}",
    f"2026-11-30 09:13:15,481\tWARNING utils.py:1209 -- {_GCS_ERROR}",
    "[2026-11-30 09:13:20,503 W 41 41] rpc_client.h:151: Failed to connect to GCS at address "
    f"{HEAD_IP}:6379 within 5 seconds.",
]


def _uid(*parts: str) -> str:
    digest = hashlib.sha1("/".join(parts).encode()).hexdigest()
    return f"{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:32]}"


def _version(*parts: str) -> str:
    return str(4_470_000 + int(hashlib.sha1("/".join(parts).encode()).hexdigest()[:4], 16) % 9000)


def _list(kind: str, items: list[dict[str, Any]], api_version: str = "v1") -> dict[str, Any]:
    return {
        "apiVersion": api_version,
        "items": items,
        "kind": f"{kind}List",
        "metadata": {"resourceVersion": "4479911"},
    }


# --- nodes ---------------------------------------------------------------------------------------

_BASE_NODE_LABELS = {
    "beta.kubernetes.io/arch": "amd64",
    "beta.kubernetes.io/os": "linux",
    "kubernetes.io/arch": "amd64",
    "kubernetes.io/os": "linux",
    "topology.kubernetes.io/region": "us-central1",
    "topology.kubernetes.io/zone": "us-central1-a",
}


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
    allocatable = {
        "cpu": cpu,
        "ephemeral-storage": "47060071478",
        "hugepages-1Gi": "0",
        "hugepages-2Mi": "0",
        "memory": memory,
        "pods": "110",
    }
    if gpus is not None:
        allocatable[GPU] = str(gpus)
    spec: dict[str, Any] = {
        "podCIDR": f"10.8.{int(ip.rsplit('.', 1)[1])}.0/24",
        "podCIDRs": [f"10.8.{int(ip.rsplit('.', 1)[1])}.0/24"],
        "providerID": f"gce://ml-platform-prod/us-central1-a/{name}",
    }
    if taints:
        spec["taints"] = taints
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "annotations": {
                "container.googleapis.com/instance_id": str(int(_uid("instance", name)[:8], 16)),
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true",
            },
            "creationTimestamp": CREATED,
            "labels": {
                **_BASE_NODE_LABELS,
                "cloud.google.com/gke-nodepool": pool,
                "cloud.google.com/machine-family": instance_type.split("-", 1)[0],
                "kubernetes.io/hostname": name,
                "node.kubernetes.io/instance-type": instance_type,
                **(labels or {}),
            },
            "name": name,
            "resourceVersion": _version("node", name),
            "uid": _uid("node", name),
        },
        "spec": spec,
        "status": {
            "addresses": [
                {"address": ip, "type": "InternalIP"},
                {"address": name, "type": "Hostname"},
            ],
            "allocatable": allocatable,
            "capacity": dict(allocatable),
            "conditions": [
                {
                    "lastHeartbeatTime": RECORDED,
                    "lastTransitionTime": CREATED,
                    "message": "kubelet has sufficient memory available",
                    "reason": "KubeletHasSufficientMemory",
                    "status": "False",
                    "type": "MemoryPressure",
                },
                {
                    "lastHeartbeatTime": RECORDED,
                    "lastTransitionTime": CREATED,
                    "message": "kubelet has no disk pressure",
                    "reason": "KubeletHasNoDiskPressure",
                    "status": "False",
                    "type": "DiskPressure",
                },
                {
                    "lastHeartbeatTime": RECORDED,
                    "lastTransitionTime": CREATED,
                    "message": "kubelet has sufficient PID available",
                    "reason": "KubeletHasSufficientPID",
                    "status": "False",
                    "type": "PIDPressure",
                },
                {
                    "lastHeartbeatTime": RECORDED,
                    "lastTransitionTime": CREATED,
                    "message": "kubelet is posting ready status",
                    "reason": "KubeletReady",
                    "status": "True",
                    "type": "Ready",
                },
            ],
            "nodeInfo": {
                "architecture": "amd64",
                "bootID": _uid("boot", name),
                "containerRuntimeVersion": "containerd://1.7.24",
                "kernelVersion": "6.6.56+",
                "kubeProxyVersion": "v1.31.4-gke.1256000",
                "kubeletVersion": "v1.31.4-gke.1256000",
                "machineID": _uid("machine", name).replace("-", ""),
                "operatingSystem": "linux",
                "osImage": "Container-Optimized OS from Google",
                "systemUUID": _uid("system", name),
            },
        },
    }


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


# --- pods ----------------------------------------------------------------------------------------


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
    resources: dict[str, Any] = {}
    if cpu or memory or gpus:
        amounts = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v}
        if gpus:
            amounts[GPU] = str(gpus)
        resources = {"limits": dict(amounts), "requests": dict(amounts)}
    body: dict[str, Any] = {
        "image": image,
        "imagePullPolicy": "IfNotPresent",
        "name": name,
        "resources": resources,
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
        "volumeMounts": [
            {
                "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                "name": "kube-api-access",
                "readOnly": True,
            }
        ],
    }
    if command:
        body["command"] = ["/bin/bash", "-lc", "--"]
        body["args"] = command
    if ports:
        body["ports"] = ports
    return body


def _ray_labels(node_type: str, group: str) -> dict[str, str]:
    return {
        "app.kubernetes.io/created-by": "kuberay-operator",
        "app.kubernetes.io/name": "kuberay",
        "ray.io/cluster": CLUSTER,
        "ray.io/group": group,
        "ray.io/identifier": f"{CLUSTER}-{node_type}",
        "ray.io/is-ray-node": "yes",
        "ray.io/node-type": node_type,
    }


def _owner(api_version: str, kind: str, name: str, namespace: str) -> list[dict[str, Any]]:
    return [
        {
            "apiVersion": api_version,
            "blockOwnerDeletion": True,
            "controller": True,
            "kind": kind,
            "name": name,
            "uid": _uid(kind, namespace, name),
        }
    ]


def _running(containers: list[dict[str, Any]], ip: str, host_ip: str, started: str) -> dict[str, Any]:
    def condition(kind: str) -> dict[str, Any]:
        return {"lastProbeTime": None, "lastTransitionTime": started, "status": "True", "type": kind}

    return {
        "conditions": [
            condition("PodReadyToStartContainers"),
            condition("Initialized"),
            condition("Ready"),
            condition("ContainersReady"),
            condition("PodScheduled"),
        ],
        "containerStatuses": [
            {
                "containerID": "containerd://" + hashlib.sha256((ip + c["name"]).encode()).hexdigest(),
                "image": f"docker.io/{c['image']}" if c["image"].startswith("rayproject/") else c["image"],
                "imageID": c["image"].split(":", 1)[0]
                + "@sha256:"
                + hashlib.sha256(c["image"].encode()).hexdigest(),
                "lastState": {},
                "name": c["name"],
                "ready": True,
                "restartCount": 0,
                "started": True,
                "state": {"running": {"startedAt": started}},
            }
            for c in containers
        ],
        "hostIP": host_ip,
        "hostIPs": [{"ip": host_ip}],
        "phase": "Running",
        "podIP": ip,
        "podIPs": [{"ip": ip}],
        "qosClass": "Guaranteed" if all(c["resources"].get("limits") for c in containers) else "BestEffort",
        "startTime": started,
    }


def _pending(message: str) -> dict[str, Any]:
    return {
        "conditions": [
            {
                "lastProbeTime": None,
                "lastTransitionTime": SCALED,
                "message": message,
                "reason": "Unschedulable",
                "status": "False",
                "type": "PodScheduled",
            }
        ],
        "phase": "Pending",
        "qosClass": "Guaranteed",
    }


def _pod(
    name: str,
    namespace: str,
    containers: list[dict[str, Any]],
    *,
    labels: dict[str, str],
    owner: list[dict[str, Any]],
    status: dict[str, Any],
    node_name: str | None = None,
    node_selector: dict[str, str] | None = None,
    tolerations: list[dict[str, Any]] | None = None,
    priority_class: str | None = None,
    created: str = STARTED,
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": containers,
        "dnsPolicy": "ClusterFirst",
        "enableServiceLinks": True,
        "preemptionPolicy": "PreemptLowerPriority",
        "priority": 2000001000 if priority_class == "system-node-critical" else 0,
        "restartPolicy": "Always",
        "schedulerName": "default-scheduler",
        "securityContext": {},
        "serviceAccount": "default",
        "serviceAccountName": "default",
        "terminationGracePeriodSeconds": 30,
        "tolerations": (tolerations or []) + DEFAULT_TOLERATIONS,
        "volumes": [
            {
                "name": "kube-api-access",
                "projected": {
                    "defaultMode": 420,
                    "sources": [
                        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                        {
                            "configMap": {
                                "items": [{"key": "ca.crt", "path": "ca.crt"}],
                                "name": "kube-root-ca.crt",
                            }
                        },
                    ],
                },
            }
        ],
    }
    if node_name:
        spec["nodeName"] = node_name
    if node_selector:
        spec["nodeSelector"] = node_selector
    if priority_class:
        spec["priorityClassName"] = priority_class
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "creationTimestamp": created,
            "generateName": name.rsplit("-", 1)[0] + "-",
            "labels": labels,
            "name": name,
            "namespace": namespace,
            "ownerReferences": owner,
            "resourceVersion": _version("pod", namespace, name),
            "uid": _uid("pod", namespace, name),
        },
        "spec": spec,
        "status": status,
    }


RAY_PORTS = [
    {"containerPort": 6379, "name": "gcs-server", "protocol": "TCP"},
    {"containerPort": 8265, "name": "dashboard", "protocol": "TCP"},
    {"containerPort": 10001, "name": "client", "protocol": "TCP"},
    {"containerPort": 8080, "name": "metrics", "protocol": "TCP"},
]
HEAD_FQDN = f"{HEAD_SERVICE}.{NAMESPACE}.svc.cluster.local"


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


_A100_WORKER = ("gpu-a100", RAY_GPU_IMAGE, "4", "32Gi", 1)
_T4_WORKER = ("gpu-t4", RAY_GPU_IMAGE, "4", "16Gi", 1)
_CPU_WORKER = ("cpu-workers", RAY_IMAGE, "4", "16Gi", 0)


def ray_pods() -> list[dict[str, Any]]:
    owner = _owner("ray.io/v1", "RayCluster", CLUSTER, NAMESPACE)
    head = head_container()
    a100, t4, cpu = (worker_container(*spec) for spec in (_A100_WORKER, _T4_WORKER, _CPU_WORKER))
    return [
        _pod(
            HEAD_POD,
            NAMESPACE,
            [head],
            labels=_ray_labels("head", "headgroup"),
            owner=owner,
            node_name="cpu-node-1",
            status=_running([head], HEAD_IP, "10.128.0.3", STARTED),
        ),
        _pod(
            A100_POD,
            NAMESPACE,
            [a100],
            labels=_ray_labels("worker", "gpu-a100"),
            owner=owner,
            node_name="gpu-a100-1",
            node_selector=A100_SELECTOR,
            status=_running([a100], A100_IP, "10.128.0.5", STARTED),
            tolerations=[GPU_TOLERATION],
        ),
        _pod(
            T4_POD,
            NAMESPACE,
            [t4],
            labels=_ray_labels("worker", "gpu-t4"),
            owner=owner,
            node_name="gpu-t4-1",
            node_selector=T4_SELECTOR,
            status=_running([t4], T4_IP, "10.128.0.6", STARTED),
            tolerations=[GPU_TOLERATION],
        ),
        _pod(
            LOST_POD,
            NAMESPACE,
            [cpu],
            labels=_ray_labels("worker", "cpu-workers"),
            owner=owner,
            node_name="cpu-node-1",
            status=_running([cpu], LOST_IP, "10.128.0.3", STARTED),
        ),
        _pod(
            A100_PENDING_POD,
            NAMESPACE,
            [worker_container(*_A100_WORKER)],
            labels=_ray_labels("worker", "gpu-a100"),
            owner=owner,
            node_selector=A100_SELECTOR,
            status=_pending(SCHEDULER_MESSAGE),
            created=SCALED,
            tolerations=[GPU_TOLERATION],
        ),
    ]


def _plugin_pod(suffix: str, node: str, ip: str, host_ip: str) -> dict[str, Any]:
    container = _container("nvidia-device-plugin-ctr", PLUGIN_IMAGE)
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
        owner=_owner("apps/v1", "DaemonSet", "nvidia-device-plugin-daemonset", "gpu-operator"),
        node_name=node,
        status=_running([container], ip, host_ip, CREATED),
        tolerations=[GPU_TOLERATION],
        priority_class="system-node-critical",
        created=CREATED,
    )


def device_plugin_pods() -> list[dict[str, Any]]:
    # None on gpu-a100-2: its node pool was created without the label the DaemonSet selects.
    return [
        _plugin_pod("x7k2p", "gpu-a100-1", "10.8.5.4", "10.128.0.5"),
        _plugin_pod("b9m4t", "gpu-t4-1", "10.8.6.4", "10.128.0.6"),
    ]


def _kube_proxy(node: str, host_ip: str) -> dict[str, Any]:
    image = "gke.gcr.io/kube-proxy-amd64:v1.31.4-gke.1256000"
    container = _container("kube-proxy", image, cpu="100m")
    container["resources"] = {"requests": {"cpu": "100m"}}
    return _pod(
        f"kube-proxy-{node}",
        "kube-system",
        [container],
        labels={"component": "kube-proxy", "tier": "node"},
        owner=_owner("v1", "Node", node, ""),
        node_name=node,
        status={**_running([container], host_ip, host_ip, CREATED), "qosClass": "Burstable"},
        priority_class="system-node-critical",
        created=CREATED,
    )


# --- the rest ------------------------------------------------------------------------------------


def _event(
    kind: str,
    name: str,
    reason: str,
    message: str,
    *,
    component: str,
    type_: str = "Normal",
    count: int = 1,
    first: str = STARTED,
    last: str = STARTED,
    api_version: str = "v1",
    host: str | None = None,
) -> dict[str, Any]:
    event_name = f"{name}.{hashlib.sha1((reason + message).encode()).hexdigest()[:16]}"
    source: dict[str, str] = {"component": component}
    if host:
        source["host"] = host
    return {
        "apiVersion": "v1",
        "count": count,
        "eventTime": None,
        "firstTimestamp": first,
        "involvedObject": {
            "apiVersion": api_version,
            "kind": kind,
            "name": name,
            "namespace": NAMESPACE,
            "resourceVersion": _version(kind, name),
            "uid": _uid(kind if kind != "Pod" else "pod", NAMESPACE, name),
        },
        "kind": "Event",
        "lastTimestamp": last,
        "message": message,
        "metadata": {
            "creationTimestamp": first,
            "name": event_name,
            "namespace": NAMESPACE,
            "resourceVersion": _version("event", event_name),
            "uid": _uid("event", NAMESPACE, event_name),
        },
        "reason": reason,
        "reportingComponent": component if component != "kubelet" else "",
        "reportingInstance": host or "",
        "source": source,
        "type": type_,
    }


def events() -> list[dict[str, Any]]:
    scheduled = [
        (HEAD_POD, "cpu-node-1"),
        (A100_POD, "gpu-a100-1"),
        (T4_POD, "gpu-t4-1"),
        (LOST_POD, "cpu-node-1"),
    ]
    found = [
        _event(
            "Pod",
            pod,
            "Scheduled",
            f"Successfully assigned {NAMESPACE}/{pod} to {node}",
            component="default-scheduler",
        )
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
            component="default-scheduler",
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

    gpu_pod = {"tolerations": [GPU_TOLERATION]}
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {
            "creationTimestamp": CREATED,
            "generation": 4,
            "labels": {"app.kubernetes.io/part-of": "ml-platform"},
            "name": CLUSTER,
            "namespace": NAMESPACE,
            "resourceVersion": _version("RayCluster", CLUSTER),
            "uid": _uid("RayCluster", NAMESPACE, CLUSTER),
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
                group("cpu-workers", _CPU_WORKER, 1),
                group("gpu-a100", _A100_WORKER, 2, nodeSelector=A100_SELECTOR, **gpu_pod),
                group("gpu-t4", _T4_WORKER, 1, nodeSelector=T4_SELECTOR, **gpu_pod),
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
            "ownerReferences": _owner("ray.io/v1", "RayCluster", CLUSTER, NAMESPACE),
            "resourceVersion": _version("svc", HEAD_SERVICE),
            "uid": _uid("svc", NAMESPACE, HEAD_SERVICE),
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
            "resourceVersion": _version("endpoints", HEAD_SERVICE),
            "uid": _uid("endpoints", NAMESPACE, HEAD_SERVICE),
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
                            "uid": _uid("pod", NAMESPACE, HEAD_POD),
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
        _kube_proxy("gpu-a100-1", "10.128.0.5"),
        _kube_proxy("gpu-a100-2", "10.128.0.7"),
    ]
    return {
        "cluster": CLUSTER,
        "namespace": NAMESPACE,
        "recorded_at": RECORDED,
        "description": "KubeRay cluster demo-gpu as raydiag's live collector reads it; "
        "generated by bot/demo/kuberay_state.py",
        "kubernetes": {
            "nodes": _list("Node", nodes()),
            "pods": _list("Pod", pods),
            "events": _list("Event", events()),
            "services": _list("Service", [service]),
            "endpoints": _list("Endpoints", [endpoints]),
            "rayclusters": _list("RayCluster", [raycluster()], "ray.io/v1"),
            "device_plugin_pods": _list("Pod", plugins),
            "logs": [
                {"pod": LOST_POD, "namespace": NAMESPACE, "container": "ray-worker", "lines": LOST_POD_LOG}
            ],
        },
    }


def render_state() -> str:
    return json.dumps(build_state(), indent=1, sort_keys=False) + "\n"


def load_state() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(STATE_FILE.read_text(encoding="utf-8"))
    return loaded


def main() -> int:
    STATE_FILE.write_text(render_state(), encoding="utf-8")
    print(f"wrote {STATE_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
