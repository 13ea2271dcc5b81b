"""Record the real kube-scheduler's wording, release by release: corpus cases nobody typed.

The FailedScheduling text raydiag reads changed between Kubernetes releases (``had taint``
became ``had untolerated taint``, the ``preemption:`` tail appeared, plugins were renamed), and a
loopback fake only says what we taught it. Here the real programs speak: for each minor release
built by ``tools/controlplane/build.sh`` (the default release, and ``build.sh k8s-v1.N`` for the
others), ``tests.support.controlplane`` starts etcd, that release's kube-apiserver and
kube-scheduler, and the KubeRay operator on loopback; each scenario creates its Nodes through the
API (as kubelets would), cordons with ``kubectl cordon``, creates PVs, claims and quotas, and then
the Ray worker Pods with ``kubectl create -f`` (the Pod KubeRay builds for a worker group: ray.io
labels, a ``ray-worker`` container with requests and limits). When the scheduler has posted its
FailedScheduling event, the real ``kubectl`` prints what a person pastes: ``kubectl get events``
and ``kubectl describe pod``. The quota case goes through the operator itself: a RayCluster whose
worker Pod the API server refuses, and the operator's event carrying the API server's words.

    .venv/bin/python tools/record_scheduler_corpus.py            # every release
    .venv/bin/python tools/record_scheduler_corpus.py k8s-v1.33  # one ("default" = the fixture's)

Writes ``tests/corpus/recorded-scheduler/<scenario>-v1.N.txt`` and that release's entries of
``expected.json`` (other releases' entries are kept). Nothing runs a kubelet or
kube-controller-manager: where a controller's work is needed (a claim bound to its volume) this
script does that one write, as ``add_node`` does the kubelet's; see ``NOT_RECORDED`` for what the
components here cannot produce.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from kubernetes import client

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.controlplane import ControlPlane, running_controlplane  # noqa: E402

OUT = ROOT / "tests" / "corpus" / "recorded-scheduler"
COMMAND = "tools/record_scheduler_corpus.py"
KUBECTL = "kubectl"
# None: the fixture's own release (tools/controlplane/go.mod); the others are folders under
# tools/controlplane that build.sh builds kube-apiserver and kube-scheduler from.
RELEASES: dict[str, str | None] = {"default": None, "k8s-v1.33": "k8s-v1.33", "k8s-v1.32": "k8s-v1.32"}
WAIT_S = 90.0
IMAGE = "rayproject/ray:2.41.0-py311-gpu"
CLUSTER = "raycluster-llm"
# KubeRay's random Pod-name suffix alphabet (k8s.io/apimachinery utilrand); ours is derived from
# the scenario so reruns write the same names.
SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"

# Scenarios the components run here cannot produce, and why (reported, not faked).
NOT_RECORDED = {
    "dynamically provisioned claim waiting for its provisioner": "no external provisioner or "
    "kube-controller-manager runs; the unbound claims recorded are an Immediate claim with no "
    "StorageClass behind it and a WaitForFirstConsumer claim with no matching static PV",
}

CPU_NODE = {"cpu": "8", "memory": "32Gi", "pods": "110", "ephemeral-storage": "100Gi"}
GPU_NODE = {
    "cpu": "48",
    "memory": "192Gi",
    "pods": "110",
    "ephemeral-storage": "500Gi",
    "nvidia.com/gpu": "4",
}
GPU_LABELS = {
    "nvidia.com/gpu.present": "true",
    "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB",
    "nvidia.com/gpu.count": "4",
}


@dataclass(frozen=True)
class Node:
    name: str
    capacity: dict[str, str]
    labels: dict[str, str] = field(default_factory=dict)
    taints: tuple[dict[str, str], ...] = ()
    cordoned: bool = False


@dataclass(frozen=True)
class Scenario:
    stem: str
    nodes: tuple[Node, ...]
    # Worker resources (KubeRay puts the group's requests and limits on the ray-worker container).
    requests: dict[str, str]
    limits: dict[str, str]
    causes: tuple[int, ...]
    what_happened: str
    group: str = "gpu-group"
    spec: dict[str, Any] = field(default_factory=dict)  # extra Pod spec: selectors, affinity, volumes
    ports: tuple[dict[str, Any], ...] = ()
    # Workers of the group created (and bound) before the one the scheduler refuses.
    earlier_workers: int = 0
    # Other things in the namespace or cluster before the workers: kind -> objects.
    setup: Callable[[ControlPlane, str], None] | None = None
    # Pods already on nodes (created with spec.nodeName, as if running): (node, requests, ports).
    bound: tuple[tuple[str, dict[str, str], tuple[dict[str, Any], ...]], ...] = ()
    via_operator: bool = False
    formats: tuple[str, ...] = ("kubectl-events", "kubectl-describe-pod", "scheduler-message")


def _gpu_nodes(n: int = 2, **extra: Any) -> tuple[Node, ...]:
    labels = {**GPU_LABELS, **extra.pop("labels", {})}
    return tuple(Node(f"gpu-node-{i}", dict(GPU_NODE), dict(labels), **extra) for i in range(1, n + 1))


def _zone(zone: str) -> dict[str, str]:
    return {"topology.kubernetes.io/zone": zone, "topology.kubernetes.io/region": zone[:-2]}


GPU_REQ = {"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": "4"}
GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}


def _pvc(ns: str, name: str, storage_class: str, volume: str = "") -> dict[str, Any]:
    spec: dict[str, Any] = {
        "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": "100Gi"}},
        "storageClassName": storage_class,
    }
    if volume:
        spec["volumeName"] = volume
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name}, "spec": spec}


def _setup_immediate_claim(cp: ControlPlane, ns: str) -> None:
    _kubectl_apply(cp, ns, [_pvc(ns, "model-cache", "premium-rwo")])


def _setup_wffc_claim(cp: ControlPlane, ns: str) -> None:
    """A local PV on a node that has since been replaced, behind a WaitForFirstConsumer class: the
    claim binds only when a node the Pod fits on also holds a matching PV."""
    sc = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": "local-nvme"},
        "provisioner": "kubernetes.io/no-provisioner",
        "volumeBindingMode": "WaitForFirstConsumer",
    }
    pv = _local_pv("local-pv-3f2a9c", "local-nvme", {"kubernetes.io/hostname": ["gpu-node-7"]})
    _kubectl_apply(cp, None, [sc, pv])
    _kubectl_apply(cp, ns, [_pvc(ns, "model-cache", "local-nvme")])


def _local_pv(name: str, storage_class: str, match: dict[str, list[str]], claim: str = "") -> dict[str, Any]:
    spec: dict[str, Any] = {
        "capacity": {"storage": "100Gi"},
        "accessModes": ["ReadWriteOnce"],
        "persistentVolumeReclaimPolicy": "Retain",
        "storageClassName": storage_class,
        "local": {"path": "/mnt/disks/nvme0"},
        "nodeAffinity": {
            "required": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": k, "operator": "In", "values": v} for k, v in match.items()
                        ]
                    }
                ]
            }
        },
    }
    if claim:
        namespace, _, claim_name = claim.partition("/")
        spec["claimRef"] = {"namespace": namespace, "name": claim_name}
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name}, "spec": spec}


def _setup_bound_claim_other_zone(cp: ControlPlane, ns: str) -> None:
    """A claim bound to a zonal volume in us-central1-c while the GPU nodes are in -a. Binding is
    the PV controller's work (kube-controller-manager, not run here): its writes are done by hand,
    the spec links both ways, the bind-completed annotation and both objects' Bound phase."""
    sc = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": "zonal-ssd"},
        "provisioner": "kubernetes.io/no-provisioner",
        "volumeBindingMode": "Immediate",
    }
    pv = _local_pv(
        "pvc-7d1e0b52", "zonal-ssd", {"topology.kubernetes.io/zone": ["us-central1-c"]}, f"{ns}/data"
    )
    _kubectl_apply(cp, None, [sc, pv])
    claim = _pvc(ns, "data", "zonal-ssd", "pvc-7d1e0b52")
    claim["metadata"]["annotations"] = {
        "pv.kubernetes.io/bind-completed": "yes",
        "pv.kubernetes.io/bound-by-controller": "yes",
    }
    _kubectl_apply(cp, ns, [claim])
    core = client.CoreV1Api(cp.client())
    core.patch_persistent_volume_status("pvc-7d1e0b52", body={"status": {"phase": "Bound"}})
    core.patch_namespaced_persistent_volume_claim_status(
        "data",
        ns,
        body={
            "status": {"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "100Gi"}}
        },
    )


def _volume(claim: str) -> dict[str, Any]:
    return {
        "volumes": [{"name": "cache", "persistentVolumeClaim": {"claimName": claim}}],
    }


def _setup_quota(cp: ControlPlane, ns: str) -> None:
    hard = {"requests.nvidia.com/gpu": "4", "limits.cpu": "64", "limits.memory": "256Gi"}
    quota = {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"name": "gpu-quota"},
        "spec": {"hard": hard},
    }
    _kubectl_apply(cp, ns, [quota])
    # The resource quota controller's first write (kube-controller-manager, not run here): until
    # status.hard is set, quota admission refuses every Pod with "status unknown for quota".
    used = dict.fromkeys(hard, "0")
    client.CoreV1Api(cp.client()).patch_namespaced_resource_quota_status(
        "gpu-quota", ns, body={"status": {"hard": hard, "used": used}}
    )


HOST_PORT = ({"name": "metrics", "containerPort": 8080, "hostPort": 8080, "protocol": "TCP"},)

SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "insufficient-cpu",
        (Node("cpu-node-1", dict(CPU_NODE)), Node("cpu-node-2", dict(CPU_NODE))),
        {"cpu": "16", "memory": "16Gi"},
        {"cpu": "16", "memory": "16Gi"},
        (1,),
        "A CPU worker asks for 16 CPUs; each node has 8.",
        group="cpu-group",
    ),
    Scenario(
        "insufficient-memory",
        (Node("cpu-node-1", dict(CPU_NODE)), Node("cpu-node-2", dict(CPU_NODE))),
        {"cpu": "4", "memory": "64Gi"},
        {"cpu": "4", "memory": "64Gi"},
        (1,),
        "A worker asks for 64Gi of memory; each node has 32Gi.",
        group="cpu-group",
    ),
    Scenario(
        "insufficient-gpu",
        _gpu_nodes(),
        {"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": "8"},
        {"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": "8"},
        (1,),
        "A worker asks for 8 GPUs; each GPU node has 4.",
    ),
    Scenario(
        "gpu-fragmentation",
        _gpu_nodes(),
        GPU_REQ,
        GPU_REQ,
        (1,),
        "Two GPUs are free on each of two nodes (four in all), but the worker needs four on one node.",
        bound=(
            ("gpu-node-1", {"cpu": "4", "memory": "16Gi", "nvidia.com/gpu": "2"}, ()),
            ("gpu-node-2", {"cpu": "4", "memory": "16Gi", "nvidia.com/gpu": "2"}, ()),
        ),
    ),
    Scenario(
        "untolerated-gpu-taint",
        _gpu_nodes(taints=(GPU_TAINT,)),
        GPU_REQ,
        GPU_REQ,
        (2,),
        "The GPU nodes carry the nvidia.com/gpu NoSchedule taint and the worker has no toleration.",
    ),
    Scenario(
        "node-selector-mismatch",
        _gpu_nodes(labels={"cloud.google.com/gke-nodepool": "default-pool"}),
        GPU_REQ,
        GPU_REQ,
        (2,),
        "The worker's nodeSelector names a node pool no node belongs to.",
        spec={"nodeSelector": {"cloud.google.com/gke-nodepool": "ray-workers"}},
    ),
    Scenario(
        "node-affinity-zone",
        _gpu_nodes(labels=_zone("us-central1-a")),
        GPU_REQ,
        GPU_REQ,
        (2,),
        "Required node affinity asks for zone us-central1-c; every GPU node is in us-central1-a.",
        spec={
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {
                                        "key": "topology.kubernetes.io/zone",
                                        "operator": "In",
                                        "values": ["us-central1-c"],
                                    }
                                ]
                            }
                        ]
                    }
                }
            }
        },
    ),
    Scenario(
        "pod-anti-affinity",
        _gpu_nodes(),
        {"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": "1"},
        {"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": "1"},
        (2,),
        "One worker per node (required anti-affinity on ray.io/group); a third worker, two nodes.",
        spec={
            "affinity": {
                "podAntiAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "labelSelector": {"matchLabels": {"ray.io/group": "gpu-group"}},
                            "topologyKey": "kubernetes.io/hostname",
                        }
                    ]
                }
            }
        },
        earlier_workers=2,
    ),
    Scenario(
        "topology-spread",
        (
            Node("gpu-node-1", dict(GPU_NODE), {**GPU_LABELS, **_zone("us-central1-a")}),
            Node("gpu-node-2", dict(GPU_NODE), {**GPU_LABELS, **_zone("us-central1-b")}, taints=(GPU_TAINT,)),
        ),
        {"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": "1"},
        {"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": "1"},
        (2,),
        "Workers spread over zones with maxSkew 1 (DoNotSchedule); the only node in the second zone"
        " is tainted, so a second worker in the first zone would break the skew.",
        spec={
            "topologySpreadConstraints": [
                {
                    "maxSkew": 1,
                    "topologyKey": "topology.kubernetes.io/zone",
                    "whenUnsatisfiable": "DoNotSchedule",
                    "labelSelector": {"matchLabels": {"ray.io/group": "gpu-group"}},
                }
            ]
        },
        earlier_workers=1,
    ),
    Scenario(
        "cordoned-gpu-nodes",
        _gpu_nodes(cordoned=True),
        GPU_REQ,
        GPU_REQ,
        (2,),
        "Both GPU nodes were cordoned (kubectl cordon) for maintenance.",
    ),
    Scenario(
        "unbound-immediate-claim",
        _gpu_nodes(),
        GPU_REQ,
        GPU_REQ,
        (2,),
        "The worker mounts a claim of a StorageClass that does not exist; the claim stays unbound.",
        spec=_volume("model-cache"),
        setup=_setup_immediate_claim,
    ),
    Scenario(
        "no-persistent-volume-to-bind",
        _gpu_nodes(),
        GPU_REQ,
        GPU_REQ,
        (2,),
        "The worker's WaitForFirstConsumer claim can only bind to a local PV on a node that is gone.",
        spec=_volume("model-cache"),
        setup=_setup_wffc_claim,
    ),
    Scenario(
        "volume-node-affinity-conflict",
        _gpu_nodes(labels=_zone("us-central1-a")),
        GPU_REQ,
        GPU_REQ,
        (2,),
        "The worker's claim is bound to a volume in us-central1-c; the GPU nodes are in us-central1-a.",
        spec=_volume("data"),
        setup=_setup_bound_claim_other_zone,
    ),
    Scenario(
        "host-port-taken",
        _gpu_nodes(),
        GPU_REQ,
        GPU_REQ,
        (2,),
        "The worker binds hostPort 8080, which a metrics exporter already holds on every node.",
        ports=HOST_PORT,
        bound=(
            ("gpu-node-1", {"cpu": "100m", "memory": "128Mi"}, HOST_PORT),
            ("gpu-node-2", {"cpu": "100m", "memory": "128Mi"}, HOST_PORT),
        ),
    ),
    Scenario(
        "too-many-pods",
        (
            Node("cpu-node-1", {**CPU_NODE, "pods": "2"}),
            Node("cpu-node-2", {**CPU_NODE, "pods": "2"}),
        ),
        {"cpu": "1", "memory": "2Gi"},
        {"cpu": "1", "memory": "2Gi"},
        (1,),
        "Each node allows 2 Pods and already runs 2.",
        group="cpu-group",
        bound=tuple(
            (n, {"cpu": "100m", "memory": "128Mi"}, ()) for n in ("cpu-node-1", "cpu-node-2") for _ in (1, 2)
        ),
    ),
    Scenario(
        "gpu-quota-exceeded",
        (Node("cpu-node-1", dict(CPU_NODE)), *_gpu_nodes()),
        GPU_REQ,
        GPU_REQ,
        (1,),
        "A ResourceQuota allows 4 GPUs in the namespace; the RayCluster's two 4-GPU workers exceed it"
        " and the API server refuses the operator's second worker Pod.",
        setup=_setup_quota,
        via_operator=True,
        formats=("kubectl-events",),
    ),
)


# -- kubectl -----------------------------------------------------------------------------------


def _kubectl(cp: ControlPlane, args: list[str], check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [KUBECTL, f"--kubeconfig={cp.kubeconfig}", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={"HOME": str(cp.root), "PATH": "/usr/bin:/bin:/usr/local/bin"},
    )
    if check and done.returncode != 0:
        raise RuntimeError(f"kubectl {' '.join(args)} failed: {done.stderr}")
    return done


def _kubectl_apply(cp: ControlPlane, ns: str | None, objects: list[dict[str, Any]]) -> None:
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", dir=cp.root, delete=False) as f:
        yaml.safe_dump_all(objects, f)
    _kubectl(cp, ["create", "-f", f.name, *(["-n", ns] if ns else [])])


def transcript(cp: ControlPlane, commands: list[list[str]]) -> str:
    """Several commands as a terminal shows them: each after a ``$`` prompt, stdout then stderr."""
    parts = []
    for args in commands:
        done = _kubectl(cp, args, check=False)
        parts.append(f"$ kubectl {' '.join(args)}\n{done.stdout}{done.stderr}")
    return "".join(parts)


# -- scenarios ---------------------------------------------------------------------------------


def _suffix(seed: str) -> str:
    digest = hashlib.sha256(seed.encode()).digest()
    return "".join(SUFFIX_ALPHABET[b % len(SUFFIX_ALPHABET)] for b in digest[:5])


def worker_pod(s: Scenario, ns: str, index: int) -> dict[str, Any]:
    """A worker Pod as KubeRay's BuildPod writes it for a worker group (labels, container, env)."""
    container: dict[str, Any] = {
        "name": "ray-worker",
        "image": IMAGE,
        "command": ["/bin/bash", "-c", "--"],
        "args": [
            f"ulimit -n 65536; ray start --address={CLUSTER}-head-svc.{ns}.svc.cluster.local:6379 --block"
        ],
        "resources": {"requests": s.requests, "limits": s.limits},
        "env": [{"name": "RAY_CLUSTER_NAME", "value": CLUSTER}],
    }
    if s.ports:
        container["ports"] = list(s.ports)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{CLUSTER}-{s.group}-worker-{_suffix(f'{s.stem}/{index}')}",
            "labels": {
                "app.kubernetes.io/created-by": "kuberay-operator",
                "app.kubernetes.io/name": "kuberay",
                "ray.io/cluster": CLUSTER,
                "ray.io/group": s.group,
                "ray.io/identifier": f"{CLUSTER}-worker",
                "ray.io/is-ray-node": "yes",
                "ray.io/node-type": "worker",
            },
        },
        "spec": {"containers": [container], "restartPolicy": "Never", **s.spec},
    }


def _bound_pod(s: Scenario, index: int, node: str, requests: dict[str, str], ports: Any) -> dict[str, Any]:
    """A Pod already on a node (spec.nodeName set, as after binding): what holds the node's room."""
    container: dict[str, Any] = {
        "name": "main",
        "image": "registry.k8s.io/pause:3.10",
        "resources": {"requests": requests, "limits": requests},
    }
    if ports:
        container["ports"] = list(ports)
    name = "node-exporter" if ports else ("inference" if "nvidia.com/gpu" in requests else "job")
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"{name}-{_suffix(f'{s.stem}/bound/{index}')}", "labels": {"app": name}},
        "spec": {"nodeName": node, "containers": [container]},
    }


def _ray_cluster(s: Scenario) -> dict[str, Any]:
    worker = {
        "name": "ray-worker",
        "image": IMAGE,
        "resources": {"requests": s.requests, "limits": s.limits},
    }
    head = {
        "name": "ray-head",
        "image": IMAGE,
        "resources": {"requests": {"cpu": "2", "memory": "8Gi"}, "limits": {"cpu": "2", "memory": "8Gi"}},
    }
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": CLUSTER},
        "spec": {
            "headGroupSpec": {"rayStartParams": {}, "template": {"spec": {"containers": [head]}}},
            "workerGroupSpecs": [
                {
                    "groupName": s.group,
                    "replicas": 2,
                    "minReplicas": 0,
                    "maxReplicas": 4,
                    "rayStartParams": {},
                    "template": {"spec": {"containers": [worker]}},
                }
            ],
        },
    }


def _wait(what: str, ready: Callable[[], bool]) -> None:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        if ready():
            return
        time.sleep(0.5)
    raise RuntimeError(f"timed out waiting for {what}")


def _reset(cp: ControlPlane) -> None:
    """Remove what the previous scenario left that is cluster-wide: Nodes, PVs, StorageClasses."""
    for kind in ("nodes", "persistentvolumes", "storageclasses"):
        _kubectl(cp, ["delete", kind, "--all", "--wait=false"], check=False)


def record(cp: ControlPlane, s: Scenario, ns: str) -> str:
    core = client.CoreV1Api(cp.client())
    _reset(cp)
    cp.namespace(ns)
    for node in s.nodes:
        cp.add_node(node.name, node.capacity, node.labels)
        if node.taints:
            core.patch_node(node.name, body={"spec": {"taints": list(node.taints)}})
        if node.cordoned:
            _kubectl(cp, ["cordon", node.name])
    if s.setup:
        s.setup(cp, ns)
    if s.bound:
        _kubectl_apply(cp, ns, [_bound_pod(s, i, *b) for i, b in enumerate(s.bound)])

    def placed(name: str) -> Callable[[], bool]:
        return lambda: bool(getattr(core.read_namespaced_pod(name, ns).spec, "node_name", None))

    def refused(name: str) -> Callable[[], bool]:
        selector = f"involvedObject.name={name},reason=FailedScheduling"
        return lambda: bool(core.list_namespaced_event(ns, field_selector=selector).items)

    if s.via_operator:
        client.CustomObjectsApi(cp.client()).create_namespaced_custom_object(
            "ray.io", "v1", ns, "rayclusters", _ray_cluster(s)
        )

        def refused_by_quota() -> bool:
            events = core.list_namespaced_event(ns).items
            return any("exceeded quota" in (e.message or "") for e in events)

        _wait(f"{ns}: the operator's quota event", refused_by_quota)
        time.sleep(2)  # let the scheduler post the events of the Pods that were created
        return transcript(cp, [["get", "events", "-n", ns]])

    for index in range(s.earlier_workers):
        earlier = worker_pod(s, ns, index)
        _kubectl_apply(cp, ns, [earlier])
        bound = earlier["metadata"]["name"]
        _wait(f"{ns}/{bound} bound", placed(bound))
    pending = worker_pod(s, ns, s.earlier_workers)
    _kubectl_apply(cp, ns, [pending])
    name = pending["metadata"]["name"]
    _wait(f"{ns}/{name} FailedScheduling", refused(name))
    return transcript(cp, [["get", "events", "-n", ns], ["describe", "pod", name, "-n", ns]])


def _cleanup(cp: ControlPlane, ns: str) -> None:
    """Stop the scenario's Pods competing for the next scenario's Nodes: no garbage collector or
    namespace controller runs, so the RayCluster and Pods are deleted by hand."""
    _kubectl(cp, ["delete", "raycluster", "--all", "-n", ns, "--wait=false"], check=False)
    _kubectl(cp, ["delete", "pods", "--all", "-n", ns, "--grace-period=0", "--force"], check=False)


def _version(cp: ControlPlane) -> str:
    done = subprocess.run(
        [str(cp.binaries.kube_scheduler), "--version"], capture_output=True, text=True, check=True
    )
    return done.stdout.split()[-1]  # "Kubernetes v1.33.13"


def _kubectl_version() -> str:
    done = subprocess.run(
        [KUBECTL, "version", "--client", "-o", "json"], capture_output=True, text=True, check=False
    )
    try:
        return str(json.loads(done.stdout)["clientVersion"]["gitVersion"])
    except (ValueError, KeyError):
        return "unknown"


def record_release(key: str, release: str | None, entries: list[dict[str, Any]]) -> None:
    kubectl_version = _kubectl_version()
    with running_controlplane(release) as cp:
        version = _version(cp)
        minor = ".".join(version.split(".")[:2])
        entries[:] = [e for e in entries if not e["file"].endswith(f"-{minor}.txt")]
        for index, s in enumerate(SCENARIOS, start=1):
            ns = f"ml-team-{index:02d}"
            text = record(cp, s, ns)
            _cleanup(cp, ns)
            file = f"{s.stem}-{minor}.txt"
            (OUT / file).write_text(text)
            commands = "; ".join(line[2:] for line in text.splitlines() if line.startswith("$ kubectl "))
            entries.append(
                {
                    "file": file,
                    "kind": "recorded",
                    "causes": list(s.causes),
                    "also_ok": [],
                    "layer": "k8s",
                    "formats": list(s.formats),
                    "source": f"{COMMAND} {key}: {commands} (real kube-apiserver and kube-scheduler"
                    f" {version}, KubeRay operator v1.5.0, kubectl {kubectl_version}; scenario {s.stem})",
                    "what_happened": s.what_happened,
                }
            )
            print(f"{version} {s.stem}: recorded", flush=True)


def main(argv: list[str]) -> int:
    chosen = argv or list(RELEASES)
    unknown = [k for k in chosen if k not in RELEASES]
    if unknown:
        print(f"unknown release(s) {unknown}; choose from {list(RELEASES)}", file=sys.stderr)
        return 2
    OUT.mkdir(parents=True, exist_ok=True)
    expected = OUT / "expected.json"
    entries: list[dict[str, Any]] = json.loads(expected.read_text()) if expected.exists() else []
    for key in chosen:
        record_release(key, RELEASES[key], entries)
        entries.sort(key=lambda e: str(e["file"]))
        expected.write_text(json.dumps(entries, indent=1, ensure_ascii=False) + "\n")
    for what, why in NOT_RECORDED.items():
        print(f"not recorded: {what}: {why}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
