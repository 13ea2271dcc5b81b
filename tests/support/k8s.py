"""Kubernetes objects in the exact shape ``kubectl get -o json`` prints them.

Fixtures are built from these so that every test reads the same JSON the collectors read from a
real API server (field names, nesting, string quantities, RFC 3339 times, ownerReferences,
admission-added tolerations), not a simplified stand-in. The demo's recorded KubeRay state
(``tools/build_demo_state.py``) is built from the same builders; the keyword options with a default
(times, resource versions, generated names, priority classes) are what its recording differs in.
"""

from __future__ import annotations

import hashlib
from typing import Any

T0 = "2026-11-30T08:00:00Z"
T1 = "2026-11-30T09:12:41Z"
T2 = "2026-11-30T09:40:03Z"

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
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
# Owners without a namespace: their uid is derived without one.
CLUSTER_SCOPED = {"Node"}
SYSTEM_NODE_CRITICAL = 2000001000


def uid(*parts: str) -> str:
    digest = hashlib.sha1("/".join(parts).encode()).hexdigest()
    return f"{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:32]}"


def version(*parts: str) -> str:
    """A resourceVersion that differs per object but is the same on every run."""
    return str(4_470_000 + int(hashlib.sha1("/".join(parts).encode()).hexdigest()[:4], 16) % 9000)


def node(
    name: str,
    *,
    cpu: str = "16",
    memory: str = "65843184Ki",
    gpus: int | None = None,
    labels: dict[str, str] | None = None,
    taints: list[dict[str, str]] | None = None,
    unschedulable: bool = False,
    ip: str = "10.0.0.1",
    extra_allocatable: dict[str, str] | None = None,
    ready: bool = True,
    created: str = T0,
    heartbeat: str = T2,
    ephemeral_storage: str = "95491281146",
    pod_cidr: str = "10.8.0.0/24",
    project: str = "ml-prod",
    resource_version: str = "4471203",
) -> dict[str, Any]:
    allocatable = {
        "cpu": cpu,
        "ephemeral-storage": ephemeral_storage,
        "hugepages-1Gi": "0",
        "hugepages-2Mi": "0",
        "memory": memory,
        "pods": "110",
    }
    if gpus is not None:
        allocatable["nvidia.com/gpu"] = str(gpus)
    allocatable.update(extra_allocatable or {})
    spec: dict[str, Any] = {"podCIDR": pod_cidr, "providerID": f"gce://{project}/us-central1-a/{name}"}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "uid": uid("node", name),
            "resourceVersion": resource_version,
            "creationTimestamp": created,
            "labels": {
                "beta.kubernetes.io/arch": "amd64",
                "beta.kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "topology.kubernetes.io/region": "us-central1",
                "topology.kubernetes.io/zone": "us-central1-a",
                **(labels or {}),
            },
            "annotations": {"node.alpha.kubernetes.io/ttl": "0"},
        },
        "spec": spec,
        "status": {
            "addresses": [{"address": ip, "type": "InternalIP"}, {"address": name, "type": "Hostname"}],
            "allocatable": allocatable,
            "capacity": dict(allocatable),
            "conditions": [
                {
                    "type": "MemoryPressure",
                    "status": "False",
                    "reason": "KubeletHasSufficientMemory",
                    "message": "kubelet has sufficient memory available",
                    "lastHeartbeatTime": heartbeat,
                    "lastTransitionTime": created,
                },
                {
                    "type": "Ready",
                    "status": "True" if ready else "False",
                    "reason": "KubeletReady" if ready else "KubeletNotReady",
                    "message": "kubelet is posting ready status" if ready else "container runtime is down",
                    "lastHeartbeatTime": heartbeat,
                    "lastTransitionTime": created,
                },
            ],
            "nodeInfo": {
                "architecture": "amd64",
                "bootID": uid("boot", name),
                "machineID": hashlib.md5(name.encode()).hexdigest(),
                "systemUUID": uid("system", name),
                "kubeProxyVersion": "v1.31.3",
                "containerRuntimeVersion": "containerd://1.7.22",
                "kernelVersion": "6.1.100+",
                "kubeletVersion": "v1.31.3",
                "operatingSystem": "linux",
                "osImage": "Container-Optimized OS from Google",
            },
        },
    }


def container(
    name: str,
    image: str,
    *,
    requests: dict[str, str] | None = None,
    limits: dict[str, str] | None = None,
    ports: list[dict[str, Any]] | None = None,
    env: list[dict[str, Any]] | None = None,
    command: list[str] | None = None,
    mounts: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """``command`` is run by a login bash (``args``), as KubeRay writes ``ray start``."""
    resources: dict[str, Any] = {}
    if limits:
        resources["limits"] = limits
    if requests or limits:
        resources["requests"] = requests or dict(limits or {})
    body: dict[str, Any] = {
        "name": name,
        "image": image,
        "imagePullPolicy": "IfNotPresent",
        "resources": resources,
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
    }
    if mounts:
        body["volumeMounts"] = mounts
    if command:
        body["command"] = ["/bin/bash", "-lc", "--"]
        body["args"] = command
    if ports:
        body["ports"] = ports
    if env:
        body["env"] = env
    return body


def running_status(
    containers: list[dict[str, Any]],
    *,
    ip: str,
    host_ip: str,
    ready: bool = True,
    started: str = T1,
    qos_class: str = "Burstable",
) -> dict[str, Any]:
    return {
        "phase": "Running",
        "conditions": [
            {
                "type": "PodReadyToStartContainers",
                "status": "True",
                "lastProbeTime": None,
                "lastTransitionTime": started,
            },
            {"type": "Initialized", "status": "True", "lastProbeTime": None, "lastTransitionTime": started},
            {
                "type": "Ready",
                "status": "True" if ready else "False",
                "lastProbeTime": None,
                "lastTransitionTime": started,
                **(
                    {}
                    if ready
                    else {"reason": "ContainersNotReady", "message": "containers with unready status"}
                ),
            },
            {
                "type": "ContainersReady",
                "status": "True" if ready else "False",
                "lastProbeTime": None,
                "lastTransitionTime": started,
            },
            {"type": "PodScheduled", "status": "True", "lastProbeTime": None, "lastTransitionTime": started},
        ],
        "hostIP": host_ip,
        "hostIPs": [{"ip": host_ip}],
        "podIP": ip,
        "podIPs": [{"ip": ip}],
        "startTime": started,
        "qosClass": qos_class,
        "containerStatuses": [
            {
                "name": c["name"],
                "image": c["image"],
                "imageID": f"docker.io/{c['image']}@sha256:{hashlib.sha256(c['image'].encode()).hexdigest()}",
                "containerID": f"containerd://{hashlib.sha256(c['name'].encode()).hexdigest()}",
                "ready": ready,
                "started": True,
                "restartCount": 0,
                "lastState": {},
                "state": {"running": {"startedAt": started}},
            }
            for c in containers
        ],
    }


def pending_status(
    message: str | None = None, *, since: str = T2, qos_class: str = "Burstable"
) -> dict[str, Any]:
    status: dict[str, Any] = {"phase": "Pending", "qosClass": qos_class}
    if message:
        status["conditions"] = [
            {
                "type": "PodScheduled",
                "status": "False",
                "reason": "Unschedulable",
                "message": message,
                "lastProbeTime": None,
                "lastTransitionTime": since,
            }
        ]
    return status


def owner_references(api_version: str, kind: str, name: str, *, namespace: str) -> list[dict[str, Any]]:
    """What a controller writes on the objects it creates in ``namespace``."""
    return [
        {
            "apiVersion": api_version,
            "kind": kind,
            "name": name,
            "uid": uid(kind, "" if kind in CLUSTER_SCOPED else namespace, name),
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]


def pod(
    name: str,
    namespace: str,
    containers: list[dict[str, Any]],
    *,
    node_name: str | None = None,
    labels: dict[str, str] | None = None,
    owner: tuple[str, str, str] | None = None,
    status: dict[str, Any] | None = None,
    node_selector: dict[str, str] | None = None,
    affinity: dict[str, Any] | None = None,
    tolerations: list[dict[str, Any]] | None = None,
    volumes: list[dict[str, Any]] | None = None,
    scheduling_gates: list[str] | None = None,
    priority_class: str | None = None,
    generated: bool = False,
    created: str = T1,
    resource_version: str = "4471377",
) -> dict[str, Any]:
    """``generated``: the name is a controller's ``generateName`` plus a five-character suffix."""
    spec: dict[str, Any] = {
        "containers": containers,
        "dnsPolicy": "ClusterFirst",
        "enableServiceLinks": True,
        "preemptionPolicy": "PreemptLowerPriority",
        "priority": SYSTEM_NODE_CRITICAL if priority_class == "system-node-critical" else 0,
        "restartPolicy": "Always",
        "schedulerName": "default-scheduler",
        "securityContext": {},
        "serviceAccount": "default",
        "serviceAccountName": "default",
        "terminationGracePeriodSeconds": 30,
        "tolerations": (tolerations or []) + DEFAULT_TOLERATIONS,
        "volumes": volumes
        or [{"name": "kube-api-access-7xk2p", "projected": {"defaultMode": 420, "sources": []}}],
    }
    if node_name:
        spec["nodeName"] = node_name
    if node_selector:
        spec["nodeSelector"] = node_selector
    if affinity:
        spec["affinity"] = affinity
    if scheduling_gates:
        spec["schedulingGates"] = [{"name": gate} for gate in scheduling_gates]
    if priority_class:
        spec["priorityClassName"] = priority_class
    metadata: dict[str, Any] = {
        "name": name,
        "namespace": namespace,
        "uid": uid("pod", namespace, name),
        "resourceVersion": resource_version,
        "creationTimestamp": created,
        "labels": labels or {},
    }
    if generated:
        metadata["generateName"] = name.rsplit("-", 1)[0] + "-"
    if owner:
        metadata["ownerReferences"] = owner_references(*owner, namespace=namespace)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": metadata,
        "spec": spec,
        "status": status or pending_status(),
    }


def event(
    namespace: str,
    kind: str,
    name: str,
    reason: str,
    message: str,
    *,
    type_: str = "Warning",
    count: int = 1,
    component: str = "default-scheduler",
    api_version: str = "v1",
    first: str = T1,
    last: str = T2,
    host: str | None = None,
    object_uid: str | None = None,
    versions: tuple[str, str] | None = ("4471502", "4471377"),
) -> dict[str, Any]:
    """``host``: the node whose kubelet reported it; ``versions``: the event's and the object's
    resourceVersion (``None``: one of ``version()`` each)."""
    event_name = f"{name}.{hashlib.sha1((reason + message).encode()).hexdigest()[:16]}"
    if versions is None:
        versions = (version("event", event_name), version(kind, name))
    source = {"component": component}
    if host:
        source["host"] = host
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {
            "name": event_name,
            "namespace": namespace,
            "uid": uid("event", namespace, event_name),
            "resourceVersion": versions[0],
            "creationTimestamp": first,
        },
        "involvedObject": {
            "apiVersion": api_version,
            "kind": kind,
            "name": name,
            "namespace": namespace,
            "uid": object_uid or uid(kind, namespace, name),
            "resourceVersion": versions[1],
        },
        "reason": reason,
        "message": message,
        "source": source,
        "firstTimestamp": first,
        "lastTimestamp": last,
        "count": count,
        "type": type_,
        "eventTime": None,
        # The kubelet still reports through the old events API, which leaves this empty.
        "reportingComponent": "" if host else component,
        "reportingInstance": host or "",
    }


def lst(
    kind: str, items: list[dict[str, Any]], api_version: str = "v1", resource_version: str = "4471600"
) -> dict[str, Any]:
    return {
        "apiVersion": api_version,
        "kind": f"{kind}List",
        "items": items,
        "metadata": {"resourceVersion": resource_version},
    }
