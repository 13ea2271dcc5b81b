"""Big, realistic Kubernetes object stores for the live-collection benchmark.

Everything here is raw JSON in the shape a real API server answers (built with the helpers of
``tests.support.k8s``, so the field names, nesting, string quantities, ownerReferences and
statuses are the ones the collector reads in the tests), stored in the loopback API server's
``ObjectStore``:

* ``workload_pod(i, node)`` / ``unrelated_stream(nodes)``: the i-th Pod of a busy shared cluster
  that has nothing to do with Ray: Deployment replicas (a third with an Istio sidecar and init
  container), StatefulSet members with a PVC and Job Pods (some Succeeded), spread over 320
  namespaces, each with probes, env, volume mounts, annotations and a full status; about 4.7 KiB of
  JSON each.
* ``big_cluster(node_count=5000)``: a GKE-like node fleet (three control-plane nodes, general,
  high-memory, small and dedicated web CPU pools, A100/H100/L4/T4 GPU pools with the labels GKE
  and the GPU operator set and the ``nvidia.com/gpu`` taint), kube-proxy on every node, the GPU
  device-plugin DaemonSet and GPU jobs on the GPU pools, and the RayCluster ``raycluster-gpu`` in
  ``ml`` with 50 Pods: a head, 30 CPU workers, 16 A100 workers and 3 A100 workers that stay
  Pending because every A100 is taken (each with the ``FailedScheduling`` event kube-scheduler
  would write). ``LargeCluster.add_unrelated(n)`` fills the CPU pools with unrelated Pods, and can
  be called again to grow the same cluster.
* ``BulkStore``: the tests' ``ObjectStore`` plus ``add_built``, which takes freshly built objects
  without a deep copy each.
* ``IndexedKubeAPI``: the loopback server of the tests, answering the same bytes, but serving
  lists the way kube-apiserver's watch cache does (filtered lists memoized per query, an index on
  ``spec.nodeName``) instead of filtering every stored object on every page.

Deterministic: the same arguments give the same objects.
"""

from __future__ import annotations

import copy
import hashlib
import threading
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from tests.support import k8s, kube_printers
from tests.support.cluster import (
    A100_LABELS,
    CLUSTER,
    GPU_TAINT,
    NS,
    cpu_worker_container,
    gpu_worker_container,
    head_container,
    healthy,
    ray_pod,
    raycluster,
)
from tests.support.kube_api import (
    KubeAPI,
    ObjectStore,
    Resource,
    _decode_continue,
    _encode_continue,
    _labels,
    _Response,
    _Target,
    parse_field_selector,
    parse_label_selector,
)

ZONES = ("us-central1-a", "us-central1-b", "us-central1-c", "us-central1-f")
CP_TAINT = {"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}
WEB_TAINT = {"key": "dedicated", "value": "web", "effect": "NoSchedule"}
A100_PRODUCT = A100_LABELS["nvidia.com/gpu.product"]


# --------------------------------------------------------------------------------------------------
# Nodes


@dataclass(frozen=True)
class Pool:
    name: str
    share: float  # of the nodes that are not control-plane
    machine: str
    cpu: str
    memory: str
    gpus: int | None = None
    gpu_labels: Mapping[str, str] = field(default_factory=dict)
    taint: Mapping[str, str] | None = None
    labels: Mapping[str, str] = field(default_factory=dict)

    @property
    def is_gpu(self) -> bool:
        return self.gpus is not None


def _gpu_labels(accelerator: str, product: str, count: int) -> dict[str, str]:
    return {
        "cloud.google.com/gke-accelerator": accelerator,
        "nvidia.com/gpu.present": "true",
        "nvidia.com/gpu.product": product,
        "nvidia.com/gpu.count": str(count),
        "nvidia.com/cuda.driver.major": "535",
        "nvidia.com/gpu.family": "ampere" if "A100" in product else "hopper" if "H100" in product else "ada",
    }


# Shares of a 5,000-node fleet: 3,000 general, 1,000 high-memory, 600 small, 100 web, 40 A100,
# 32 H100, 120 L4, 105 T4 (plus three control-plane nodes).
POOLS: tuple[Pool, ...] = (
    Pool("general", 3000 / 4997, "n2-standard-32", "31850m", "122857868Ki"),
    Pool("highmem", 1000 / 4997, "n2-highmem-16", "15890m", "127817556Ki"),
    Pool("small", 600 / 4997, "e2-standard-8", "7910m", "29258804Ki"),
    Pool(
        "web",
        100 / 4997,
        "c2-standard-16",
        "15890m",
        "58661284Ki",
        taint=WEB_TAINT,
        labels={"dedicated": "web"},
    ),
    Pool(
        "a100",
        40 / 4997,
        "a2-highgpu-4g",
        "47",
        "346887380Ki",
        4,
        {k: v for k, v in A100_LABELS.items() if k != "cloud.google.com/gke-nodepool"},
        GPU_TAINT,
    ),
    Pool(
        "h100",
        32 / 4997,
        "a3-highgpu-8g",
        "207",
        "1891308752Ki",
        8,
        _gpu_labels("nvidia-h100-80gb", "NVIDIA-H100-80GB-HBM3", 8),
        GPU_TAINT,
    ),
    Pool(
        "l4",
        120 / 4997,
        "g2-standard-24",
        "23",
        "94330312Ki",
        2,
        _gpu_labels("nvidia-l4", "NVIDIA-L4", 2),
        GPU_TAINT,
    ),
    Pool(
        "t4",
        105 / 4997,
        "n1-standard-16",
        "15890m",
        "57696424Ki",
        2,
        _gpu_labels("nvidia-tesla-t4", "Tesla-T4", 2),
        GPU_TAINT,
    ),
)


def _ip(prefix: int, index: int) -> str:
    return f"10.{prefix}.{index // 250 % 250}.{index % 250 + 2}"


def make_node(pool: Pool, index: int, serial: int) -> dict[str, Any]:
    name = f"gke-prod-{pool.name}-{hashlib.sha1(f'{pool.name}{index}'.encode()).hexdigest()[:8]}-{index:04d}"
    zone = ZONES[index % len(ZONES)]
    labels = {
        "cloud.google.com/gke-nodepool": f"{pool.name}-pool",
        "cloud.google.com/gke-os-distribution": "cos",
        "cloud.google.com/gke-boot-disk": "pd-balanced",
        "cloud.google.com/gke-container-runtime": "containerd",
        "cloud.google.com/gke-max-pods-per-node": "110",
        "cloud.google.com/machine-family": pool.machine.split("-")[0],
        "cloud.google.com/gke-logging-variant": "DEFAULT",
        "cloud.google.com/private-node": "false",
        "node.kubernetes.io/instance-type": pool.machine,
        "beta.kubernetes.io/instance-type": pool.machine,
        "topology.kubernetes.io/zone": zone,
        "failure-domain.beta.kubernetes.io/zone": zone,
        "failure-domain.beta.kubernetes.io/region": "us-central1",
        "topology.gke.io/zone": zone,
        **pool.labels,
        **pool.gpu_labels,
    }
    body = k8s.node(
        name,
        cpu=pool.cpu,
        memory=pool.memory,
        gpus=pool.gpus,
        labels=labels,
        taints=[dict(pool.taint)] if pool.taint else None,
        ip=_ip(128, serial),
    )
    body["spec"]["podCIDR"] = f"10.{64 + serial // 256}.{serial % 256}.0/24"
    body["spec"]["providerID"] = f"gce://ml-prod/{zone}/{name}"
    return body


def control_plane_nodes() -> list[dict[str, Any]]:
    return [
        k8s.node(
            f"cp-{i}",
            cpu="4",
            memory="16393500Ki",
            labels={"node-role.kubernetes.io/control-plane": ""},
            taints=[dict(CP_TAINT)],
            ip=_ip(127, i),
        )
        for i in range(1, 4)
    ]


def make_nodes(total: int) -> dict[str, list[dict[str, Any]]]:
    """Node objects by pool name (``"cp"`` for the control plane); ``total`` includes those three."""
    pools: dict[str, list[dict[str, Any]]] = {"cp": control_plane_nodes()}
    workers = total - 3
    counts = [max(1, round(pool.share * workers)) for pool in POOLS]
    counts[0] += workers - sum(counts)  # rounding goes to the general pool
    serial = 0
    for pool, count in zip(POOLS, counts, strict=True):
        pools[pool.name] = []
        for index in range(count):
            serial += 1
            pools[pool.name].append(make_node(pool, index, serial))
    return pools


# --------------------------------------------------------------------------------------------------
# Unrelated Pods


TEAMS = (
    "payments", "checkout", "search", "catalog", "identity", "ledger", "growth", "ads", "maps",
    "media", "notifications", "risk", "support", "data-platform", "observability", "platform",
    "messaging", "billing", "inventory", "pricing", "recsys", "mobile-api", "partner-api",
    "fulfilment", "warehouse", "analytics", "ml-serving", "feature-store", "security", "infra-tools",
    "compliance", "crm", "cms", "web", "gateway", "edge", "storage", "sre", "qa", "sandbox",
)  # fmt: skip
ENVS = ("prod", "staging", "canary", "dev", "perf", "eu", "us", "batch")
NAMESPACES = tuple(f"{team}-{env}" for team in TEAMS for env in ENVS)  # 320
APPS = (
    "api", "worker", "frontend", "consumer", "scheduler", "cache", "gateway", "indexer", "sync",
    "webhook", "grpc", "exporter", "cron-runner", "backfill", "admin", "proxy",
)  # fmt: skip
# (cpu request, memory request, cpu limit or None, memory limit)
SHAPES = (
    ("50m", "64Mi", None, "128Mi"), ("100m", "128Mi", "200m", "256Mi"), ("100m", "256Mi", None, "512Mi"),
    ("250m", "256Mi", "500m", "512Mi"), ("250m", "512Mi", "1", "1Gi"), ("500m", "512Mi", "1", "1Gi"),
    ("500m", "1Gi", None, "2Gi"), ("750m", "1536Mi", "1500m", "3Gi"), ("1", "1Gi", "2", "2Gi"),
    ("1", "2Gi", None, "4Gi"), ("1500m", "3Gi", "3", "6Gi"), ("2", "4Gi", "4", "8Gi"),
    ("2", "8Gi", None, "8Gi"), ("3", "6Gi", None, "12Gi"), ("4", "8Gi", "8", "16Gi"), ("200m", "300Mi", "400m", "600Mi"),
)  # fmt: skip
ISTIO_PROXY = "docker.io/istio/proxyv2:1.22.3"
KUBE_PROXY = "gke.gcr.io/kube-proxy-amd64:v1.31.3-gke.1162000"
FLUENT_BIT = "gke.gcr.io/fluent-bit:v1.8.12-gke.31"
NODE_EXPORTER = "quay.io/prometheus/node-exporter:v1.8.2"
DEVICE_PLUGIN = "nvcr.io/nvidia/k8s-device-plugin:v0.16.2"


def _h(*parts: object, size: int = 10) -> str:
    return hashlib.sha1("/".join(map(str, parts)).encode()).hexdigest()[:size]


def _suffix(*parts: object) -> str:
    # ReplicaSet Pod suffixes use consonants and digits only, five characters.
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    number = int(_h(*parts, size=12), 16)
    out = []
    for _ in range(5):
        number, digit = divmod(number, len(alphabet))
        out.append(alphabet[digit])
    return "".join(out)


def _serial_suffix(serial: int) -> str:
    """Five characters that differ for every ``serial`` below 27**5 (DaemonSet Pods must not collide)."""
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    number = (serial * 7919 + 12345) % len(alphabet) ** 5
    out = []
    for _ in range(5):
        number, digit = divmod(number, len(alphabet))
        out.append(alphabet[digit])
    return "".join(out)


def _probe(port: int, path: str) -> dict[str, Any]:
    return {
        "httpGet": {"path": path, "port": port, "scheme": "HTTP"},
        "initialDelaySeconds": 10,
        "periodSeconds": 10,
        "timeoutSeconds": 1,
        "successThreshold": 1,
        "failureThreshold": 3,
    }


def _app_container(
    name: str, image: str, shape: tuple[str, str, str | None, str], port: int
) -> dict[str, Any]:
    cpu, memory, cpu_limit, memory_limit = shape
    limits = {"memory": memory_limit, **({"cpu": cpu_limit} if cpu_limit else {})}
    body = k8s.container(
        name,
        image,
        requests={"cpu": cpu, "memory": memory},
        limits=limits,
        ports=[
            {"containerPort": port, "name": "http", "protocol": "TCP"},
            {"containerPort": 9090, "name": "metrics", "protocol": "TCP"},
        ],
        env=[
            {"name": "LOG_LEVEL", "value": "info"},
            {
                "name": "POD_NAME",
                "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}},
            },
            {"name": "POD_IP", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "status.podIP"}}},
            {
                "name": "DB_PASSWORD",
                "valueFrom": {"secretKeyRef": {"key": "password", "name": f"{name}-db", "optional": False}},
            },
        ],
    )
    body["readinessProbe"] = _probe(port, "/readyz")
    body["livenessProbe"] = _probe(port, "/healthz")
    body["volumeMounts"] = [
        {"mountPath": "/etc/config", "name": "config", "readOnly": True},
        {
            "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
            "name": "kube-api-access",
            "readOnly": True,
        },
    ]
    return body


def _istio(shape_index: int) -> tuple[dict[str, Any], dict[str, Any]]:
    proxy = k8s.container(
        "istio-proxy",
        ISTIO_PROXY,
        requests={"cpu": "100m", "memory": "128Mi"},
        limits={"cpu": "2", "memory": "1Gi"},
        ports=[{"containerPort": 15090, "name": "http-envoy-prom", "protocol": "TCP"}],
        env=[
            {"name": "ISTIO_META_CLUSTER_ID", "value": "Kubernetes"},
            {"name": "PILOT_CERT_PROVIDER", "value": "istiod"},
        ],
    )
    proxy["readinessProbe"] = _probe(15021, "/healthz/ready")
    init = k8s.container(
        "istio-init",
        ISTIO_PROXY,
        requests={"cpu": "100m", "memory": "128Mi"},
        limits={"cpu": "2", "memory": "1Gi"},
    )
    init["args"] = ["istio-iptables", "-p", "15001", "-z", "15006", "-u", "1337", "-m", "REDIRECT", "-i", "*"]
    return proxy, init


def _volumes(config: str) -> list[dict[str, Any]]:
    return [
        {"name": "config", "configMap": {"name": config, "defaultMode": 420}},
        {
            "name": "kube-api-access",
            "projected": {
                "defaultMode": 420,
                "sources": [
                    {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                    {
                        "configMap": {
                            "name": "kube-root-ca.crt",
                            "items": [{"key": "ca.crt", "path": "ca.crt"}],
                        }
                    },
                ],
            },
        },
    ]


def _status(
    containers: list[dict[str, Any]], ip: str, host_ip: str, phase: str, init: dict[str, Any] | None
) -> dict[str, Any]:
    status = k8s.running_status(containers, ip=ip, host_ip=host_ip)
    if init is not None:
        status["initContainerStatuses"] = [
            {
                "name": init["name"],
                "image": init["image"],
                "imageID": f"docker.io/{init['image']}@sha256:{_h(init['image'], size=64)}",
                "containerID": f"containerd://{_h(ip, init['name'], size=64)}",
                "ready": True,
                "restartCount": 0,
                "started": False,
                "lastState": {},
                "state": {
                    "terminated": {
                        "exitCode": 0,
                        "reason": "Completed",
                        "startedAt": k8s.T1,
                        "finishedAt": k8s.T1,
                    }
                },
            }
        ]
    if phase == "Succeeded":
        status["phase"] = "Succeeded"
        for entry in status["containerStatuses"]:
            entry["ready"], entry["started"] = False, False
            entry["state"] = {
                "terminated": {
                    "exitCode": 0,
                    "reason": "Completed",
                    "startedAt": k8s.T1,
                    "finishedAt": k8s.T2,
                }
            }
        for condition in status["conditions"]:
            if condition["type"] in ("Ready", "ContainersReady"):
                condition.update(status="False", reason="PodCompleted")
    return status


def workload_pod(index: int, node: Mapping[str, Any]) -> dict[str, Any]:
    """The ``index``-th unrelated workload Pod, bound to ``node``."""
    deployment = index // 12  # a dozen replicas per workload
    namespace = NAMESPACES[deployment % len(NAMESPACES)]
    app = f"{APPS[deployment % len(APPS)]}-{_h('app', deployment, size=4)}"
    shape = SHAPES[deployment % len(SHAPES)]
    kind = ("Deployment", "Deployment", "Deployment", "Deployment", "StatefulSet", "Job")[deployment % 6]
    image = f"us-docker.pkg.dev/acme-prod/{namespace.split('-')[0]}/{app}:v{deployment % 9}.{deployment % 17}.{index % 3}"
    node_name = node["metadata"]["name"]
    host_ip = node["status"]["addresses"][0]["address"]
    ip = _ip(100 + index // 62500, index % 62500)
    containers = [_app_container(app, image, shape, 8080)]
    init: dict[str, Any] | None = None
    if deployment % 3 == 0:  # Istio-injected namespaces
        proxy, init = _istio(deployment)
        containers.append(proxy)
    labels = {
        "app": app,
        "app.kubernetes.io/name": app,
        "app.kubernetes.io/part-of": namespace.split("-")[0],
        "app.kubernetes.io/version": f"v{deployment % 9}.{deployment % 17}",
        "team": namespace.split("-")[0],
    }
    volumes = _volumes(f"{app}-config")
    phase = "Running"
    if kind == "Deployment":
        template_hash = _h("rs", deployment, size=10)
        labels["pod-template-hash"] = template_hash
        owner = ("apps/v1", "ReplicaSet", f"{app}-{template_hash}")
        name = f"{app}-{template_hash}-{_suffix('pod', index)}"
    elif kind == "StatefulSet":
        ordinal = index % 12
        labels["apps.kubernetes.io/pod-index"] = str(ordinal)
        labels["statefulset.kubernetes.io/pod-name"] = f"{app}-{ordinal}"
        owner = ("apps/v1", "StatefulSet", app)
        name = f"{app}-{ordinal}"
        volumes.append({"name": "data", "persistentVolumeClaim": {"claimName": f"data-{app}-{ordinal}"}})
        containers[0]["volumeMounts"].append({"mountPath": "/var/lib/data", "name": "data"})
    else:
        job = f"{app}-{29000000 + index // 12}"
        labels.update({"batch.kubernetes.io/job-name": job, "job-name": job})
        owner = ("batch/v1", "Job", job)
        name = f"{job}-{_suffix('job', index)}"
        phase = "Succeeded" if index % 4 == 0 else "Running"
    body = k8s.pod(
        name,
        namespace,
        containers,
        node_name=node_name,
        labels=labels,
        owner=owner,
        status=_status(containers, ip, host_ip, phase, init),
        volumes=volumes,
    )
    if init is not None:
        body["spec"]["initContainers"] = [init]
    if kind == "Job":
        body["spec"]["restartPolicy"] = "Never"
    body["spec"]["serviceAccount"] = body["spec"]["serviceAccountName"] = app
    body["metadata"]["annotations"] = {
        "kubectl.kubernetes.io/restartedAt": "2026-11-29T22:14:05Z",
        "prometheus.io/scrape": "true",
        "prometheus.io/port": "9090",
        **(
            {"sidecar.istio.io/status": '{"initContainers":["istio-init"],"containers":["istio-proxy"]}'}
            if init
            else {}
        ),
    }
    body["metadata"]["generateName"] = name.rsplit("-", 1)[0] + "-"
    body["metadata"]["uid"] = k8s.uid("pod", namespace, name, str(index))
    body["metadata"]["resourceVersion"] = str(4400000 + index)
    return body


def daemon_pod(
    daemonset: str, namespace: str, image: str, node: Mapping[str, Any], serial: int, **extra: Any
) -> dict[str, Any]:
    node_name = node["metadata"]["name"]
    host_ip = node["status"]["addresses"][0]["address"]
    container = k8s.container(
        daemonset,
        image,
        requests={"cpu": "100m", "memory": "200Mi"},
        limits={"memory": "400Mi"},
    )
    name = f"{daemonset}-{_serial_suffix(serial)}"
    body = k8s.pod(
        name,
        namespace,
        [container],
        node_name=node_name,
        labels={
            "k8s-app": daemonset,
            "controller-revision-hash": _h(daemonset, size=10),
            "pod-template-generation": "3",
            **extra.get("labels", {}),
        },
        owner=("apps/v1", "DaemonSet", daemonset),
        status=k8s.running_status(
            [container], ip=host_ip if daemonset == "kube-proxy" else _ip(48, serial), host_ip=host_ip
        ),
        tolerations=[{"operator": "Exists"}],
    )
    body["spec"]["priorityClassName"] = "system-node-critical"
    body["spec"]["priority"] = 2000001000
    return body


def unrelated_stream(nodes: Mapping[str, list[dict[str, Any]]]) -> Iterator[dict[str, Any]]:
    """Unrelated Pods in a fixed order: workload Pods spread over the CPU pools, without end.

    The web pool gets every fiftieth Pod (those carry the ``dedicated=web`` toleration); the rest
    cycle through the general, high-memory and small pools in proportion to their size.
    """
    general = [*nodes["general"], *nodes["highmem"], *nodes["small"]]
    web = nodes["web"]
    index = 0
    while True:
        if index % 50 == 49:
            pod = workload_pod(index, web[(index // 50) % len(web)])
            pod["spec"]["tolerations"].insert(
                0, {"key": "dedicated", "operator": "Equal", "value": "web", "effect": "NoSchedule"}
            )
            pod["spec"]["nodeSelector"] = {"dedicated": "web"}
        else:
            # A stride coprime with the pool size spreads consecutive replicas over distant nodes.
            pod = workload_pod(index, general[(index * 7919) % len(general)])
        yield pod
        index += 1


def pods_for_listing(count: int, node_count: int = 0) -> list[dict[str, Any]]:
    """``count`` unrelated Pods on ``count // 30`` nodes (for the list-all-Pods comparison)."""
    nodes = make_nodes(max(node_count or count // 30, 40))
    stream = unrelated_stream(nodes)
    return [next(stream) for _ in range(count)]


def align_event_uids(kubernetes: Mapping[str, list[dict[str, Any]]]) -> int:
    """Give each Pod event the uid of the Pod it is about; returns how many were changed.

    ``tests.support.k8s.event`` derives ``involvedObject.uid`` from ``uid("Pod", ...)`` while
    ``k8s.pod`` uses ``uid("pod", ...)``, so the two never match. raydiag matches events by name,
    but ``kubectl describe pod`` asks for events by name, namespace *and* uid, and would show none.
    """
    uids = {
        (p["metadata"].get("namespace"), p["metadata"]["name"]): p["metadata"].get("uid")
        for p in kubernetes.get("pods", [])
    }
    changed = 0
    for event in kubernetes.get("events", []):
        involved = event.get("involvedObject", {})
        uid = uids.get((involved.get("namespace"), involved.get("name")))
        if involved.get("kind") == "Pod" and uid and involved.get("uid") != uid:
            involved["uid"] = uid
            changed += 1
    return changed


# --------------------------------------------------------------------------------------------------
# The RayCluster with 50 Pods on the big fleet


HEAD_NAME = f"{CLUSTER}-head-8x2kq"
CPU_WORKERS = 30
GPU_RUNNING = 16
GPU_PENDING = 3


def scheduler_message(pod_nodes: Iterable[tuple[str, Mapping[str, Any]]], total: int) -> str:
    """``0/N nodes are available: ...`` as kube-scheduler writes it for an A100 worker that fits nowhere."""
    reasons: Counter[str] = Counter()
    for pool, node in pod_nodes:
        labels = node["metadata"]["labels"]
        if pool == "cp":
            reasons["node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }"] += 1
        elif pool == "web":
            reasons["node(s) had untolerated taint {dedicated: web}"] += 1
        elif labels.get("nvidia.com/gpu.product") != A100_PRODUCT:
            reasons["node(s) didn't match Pod's node affinity/selector"] += 1
        else:
            reasons["Insufficient nvidia.com/gpu"] += 1
    parts = sorted(f"{count} {reason}" for reason, count in reasons.items())
    fits = reasons["Insufficient nvidia.com/gpu"]
    return (
        f"0/{total} nodes are available: {', '.join(parts)}. preemption: 0/{total} nodes are available: "
        f"{fits} No preemption victims found for incoming pod, {total - fits} Preemption is not helpful "
        "for scheduling."
    )


def ray_objects(nodes: Mapping[str, list[dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    """The RayCluster, its 50 Pods, Service, Endpoints and events."""
    general, a100 = nodes["general"], nodes["a100"]
    gpu_selector = {"nvidia.com/gpu.product": A100_PRODUCT}

    def host(node: Mapping[str, Any]) -> tuple[str, str]:
        return node["metadata"]["name"], node["status"]["addresses"][0]["address"]

    pods: list[dict[str, Any]] = []
    name, host_ip = host(general[0])
    pods.append(
        ray_pod(
            HEAD_NAME, "head", "headgroup", head_container(), node_name=name, ip="10.8.1.10", host_ip=host_ip
        )
    )
    for i in range(CPU_WORKERS):
        name, host_ip = host(general[1 + i * 97 % (len(general) - 1)])
        pods.append(
            ray_pod(
                f"{CLUSTER}-cpu-workers-worker-{_suffix('cpu', i)}",
                "worker",
                "cpu-workers",
                cpu_worker_container(),
                node_name=name,
                ip=_ip(9, i + 20),
                host_ip=host_ip,
            )
        )
    for i in range(GPU_RUNNING):
        name, host_ip = host(a100[i])
        pods.append(
            ray_pod(
                f"{CLUSTER}-gpu-a100-worker-{_suffix('gpu', i)}",
                "worker",
                "gpu-a100",
                gpu_worker_container(),
                node_name=name,
                ip=_ip(10, i + 20),
                host_ip=host_ip,
                tolerations=[k8s.GPU_TOLERATION],
                node_selector=gpu_selector,
            )
        )
    total = sum(len(group) for group in nodes.values())
    message = scheduler_message(((pool, n) for pool, group in nodes.items() for n in group), total)
    events = [
        k8s.event(
            NS,
            "RayCluster",
            CLUSTER,
            "CreatedWorkerPod",
            f"Created worker Pod {NS}/{pods[-1]['metadata']['name']}",
            type_="Normal",
            component="raycluster-controller",
            api_version="ray.io/v1",
        )
    ]
    for i in range(GPU_PENDING):
        pod_name = f"{CLUSTER}-gpu-a100-worker-{_suffix('pending', i)}"
        body = ray_pod(
            pod_name,
            "worker",
            "gpu-a100",
            gpu_worker_container(),
            node_name=None,
            ip=None,
            tolerations=[k8s.GPU_TOLERATION],
            node_selector=gpu_selector,
        )
        body["status"] = k8s.pending_status(message)
        pods.append(body)
        events.append(k8s.event(NS, "Pod", pod_name, "FailedScheduling", message, count=40 + i))
    for pod in pods[:-GPU_PENDING]:
        pod_name, node_name = pod["metadata"]["name"], pod["spec"]["nodeName"]
        events.append(
            k8s.event(
                NS,
                "Pod",
                pod_name,
                "Scheduled",
                f"Successfully assigned {NS}/{pod_name} to {node_name}",
                type_="Normal",
            )
        )
        events.append(
            k8s.event(
                NS, "Pod", pod_name, "Started", "Started container", type_="Normal", component="kubelet"
            )
        )
    cluster = raycluster(
        {"replicas": GPU_RUNNING + GPU_PENDING, "maxReplicas": GPU_RUNNING + GPU_PENDING + 5}
    )
    cpu_group = cluster["spec"]["workerGroupSpecs"][0]
    cpu_group.update(replicas=CPU_WORKERS, maxReplicas=CPU_WORKERS + 10)
    cluster["status"].update(
        availableWorkerReplicas=CPU_WORKERS + GPU_RUNNING,
        readyWorkerReplicas=CPU_WORKERS + GPU_RUNNING,
        desiredWorkerReplicas=CPU_WORKERS + GPU_RUNNING + GPU_PENDING,
        desiredCPU=str(4 + CPU_WORKERS * 4 + (GPU_RUNNING + GPU_PENDING) * 20),
        desiredGPU=str((GPU_RUNNING + GPU_PENDING) * 4),
    )
    align_event_uids({"pods": pods, "events": events})
    base = healthy().kubernetes
    endpoints = copy.deepcopy(base["endpoints"])
    for subset in endpoints[0]["subsets"]:
        for address in subset["addresses"]:
            address["nodeName"] = general[0]["metadata"]["name"]
    return {
        "rayclusters": [cluster],
        "pods": pods,
        "events": events,
        "services": copy.deepcopy(base["services"]),
        "endpoints": endpoints,
    }


def gpu_fleet_pods(nodes: Mapping[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """DaemonSet Pods on every node, and GPU jobs that take every A100 the Ray workers do not."""
    pods: list[dict[str, Any]] = []
    serial = 0
    for pool, group in nodes.items():
        for node in group:
            serial += 1
            pods.append(daemon_pod("kube-proxy", "kube-system", KUBE_PROXY, node, serial))
            if pool in ("a100", "h100", "l4", "t4"):
                pods.append(
                    daemon_pod(
                        "nvidia-device-plugin-daemonset",
                        "kube-system",
                        DEVICE_PLUGIN,
                        node,
                        serial,
                        labels={"name": "nvidia-device-plugin-ds"},
                    )
                )
    for i, node in enumerate(nodes["a100"][GPU_RUNNING:]):
        node_name = node["metadata"]["name"]
        host_ip = node["status"]["addresses"][0]["address"]
        job = f"llm-finetune-{_h('job', i, size=5)}"
        container = k8s.container(
            "trainer",
            "us-docker.pkg.dev/acme-prod/research/finetune:2026.11.3",
            requests={"cpu": "20", "memory": "150Gi", "nvidia.com/gpu": "4"},
            limits={"cpu": "20", "memory": "150Gi", "nvidia.com/gpu": "4"},
        )
        pods.append(
            k8s.pod(
                f"{job}-0-{_suffix('trainer', i)}",
                "research-training",
                [container],
                node_name=node_name,
                labels={"batch.kubernetes.io/job-name": job, "job-name": job, "team": "research"},
                owner=("batch/v1", "Job", job),
                status=k8s.running_status([container], ip=_ip(11, i + 20), host_ip=host_ip),
                tolerations=[k8s.GPU_TOLERATION],
                node_selector={"nvidia.com/gpu.product": A100_PRODUCT},
            )
        )
    return pods


# --------------------------------------------------------------------------------------------------
# The store


POD_KEY = ("", "v1", "pods")


class BulkStore(ObjectStore):
    """An ``ObjectStore`` that also takes freshly built objects without the deep copy ``add`` makes.

    ``add`` copies every object so that a caller cannot change what is served; the generators here
    hand over objects nobody else holds, and copying 150,000 Pods would take longer than building
    them. The store never changes a stored object, so dicts shared between Pods (default
    tolerations) are safe.
    """

    def add_built(self, objects: Iterable[dict[str, Any]], resource: Resource) -> int:
        count = 0
        with self._lock:
            bucket = self._objects.setdefault(resource.key, {})
            for obj in objects:
                metadata = obj["metadata"]
                if resource.namespaced:
                    key = (str(metadata.setdefault("namespace", "default")), str(metadata["name"]))
                else:
                    key = ("", str(metadata["name"]))
                bucket[key] = obj
                count += 1
            self._sorted.pop(resource.key, None)
            if not resource.builtin:
                self._installed.add(resource.group)
        return count


@dataclass
class LargeCluster:
    """A big object store: nodes, the RayCluster and its neighbours, and a growing number of unrelated Pods."""

    store: BulkStore
    nodes: dict[str, list[dict[str, Any]]]
    fixed_unrelated: int
    unrelated: int = 0
    _stream: Iterator[dict[str, Any]] | None = None

    @property
    def node_count(self) -> int:
        return sum(len(group) for group in self.nodes.values())

    def add_unrelated(self, target: int) -> int:
        """Grow to ``target`` unrelated Pods (the fixed DaemonSet and GPU-job Pods count); returns the count."""
        resource = self._pods()
        if self._stream is None:
            self._stream = unrelated_stream(self.nodes)
        if target > self.unrelated:
            self.unrelated += self.store.add_built(islice(self._stream, target - self.unrelated), resource)
        self.store.ensure_namespaces()
        return self.unrelated

    def _pods(self) -> Resource:
        resource = self.store.resource(*POD_KEY)
        assert resource is not None
        return resource

    def add_unrelated_pending(self, count: int, namespace: str = "data-pipeline-prod") -> None:
        """Pending Pods of an unrelated Deployment that fit on any CPU node but wait for a scale-up."""
        resource = self._pods()
        for i in range(count):
            container = _app_container(
                "ingest", "us-docker.pkg.dev/acme-prod/data/ingest:v4.2.0", ("2", "4Gi", None, "8Gi"), 8080
            )
            name = f"ingest-7d9c5b8f6d-{_suffix('ingest', i)}"
            message = "0/5000 nodes are available: Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never."
            body = k8s.pod(
                name,
                namespace,
                [container],
                labels={"app": "ingest", "pod-template-hash": "7d9c5b8f6d"},
                owner=("apps/v1", "ReplicaSet", "ingest-7d9c5b8f6d"),
                status=k8s.pending_status(message),
            )
            self.store.add(body, resource)
            self.unrelated += 1
        self.store.ensure_namespaces(namespace)


def big_cluster(node_count: int = 5000, unrelated: int = 0) -> LargeCluster:
    """``node_count`` nodes with the 50-Pod RayCluster, and ``unrelated`` other Pods (at least the fixed ones)."""
    nodes = make_nodes(node_count)
    store = BulkStore()
    node_resource = store.resource("", "v1", "nodes")
    assert node_resource is not None
    store.add_built((n for group in nodes.values() for n in group), node_resource)
    for key, objects in ray_objects(nodes).items():
        resource_key = {
            "rayclusters": ("ray.io", "v1", "rayclusters"),
            "pods": POD_KEY,
            "events": ("", "v1", "events"),
            "services": ("", "v1", "services"),
            "endpoints": ("", "v1", "endpoints"),
        }[key]
        store.add_all(objects, store.resource(*resource_key))
    fixed = gpu_fleet_pods(nodes)
    cluster = LargeCluster(store, nodes, len(fixed), unrelated=0)
    cluster.unrelated = store.add_built(fixed, cluster._pods())
    cluster.add_unrelated(unrelated)
    return cluster


def listing_store(count: int) -> BulkStore:
    """A store holding ``count`` unrelated Pods (and their Namespaces), for the list-all comparison."""
    store = BulkStore()
    resource = store.resource(*POD_KEY)
    assert resource is not None
    store.add_built(pods_for_listing(count), resource)
    store.ensure_namespaces()
    return store


# --------------------------------------------------------------------------------------------------
# A loopback server that lists like kube-apiserver's watch cache


class IndexedKubeAPI(KubeAPI):
    """``KubeAPI`` with the same answers, byte for byte, but lists served from a memo and an index.

    The test server filters every stored object of the resource for every page it serves, so one
    paginated list of N objects costs it N*N/limit object checks, and a ``spec.nodeName=`` query
    scans every Pod. kube-apiserver answers from its watch cache, which keeps an index on
    ``spec.nodeName`` for Pods. This subclass does the same: each (resource, namespace, selectors)
    query is filtered once and kept until ``invalidate()`` (call it after changing the store), and
    a query with ``spec.nodeName=X`` starts from the Pods bound to X.
    """

    def __init__(self, store: ObjectStore, *, cache_pages: bool = False, **kwargs: Any) -> None:
        self._memo_lock = threading.Lock()
        self._memo: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
        self._by_node: dict[str, list[dict[str, Any]]] | None = None
        # With cache_pages, each list answer (one page) is also kept, so a repeated list costs the
        # server nothing but the send: for measuring a client alone.
        self._pages: dict[tuple[Any, ...], _Response] | None = {} if cache_pages else None
        super().__init__(store, **kwargs)

    def invalidate(self) -> None:
        with self._memo_lock:
            self._memo.clear()
            self._by_node = None
            if self._pages is not None:
                self._pages.clear()

    def _node_index(self) -> dict[str, list[dict[str, Any]]]:
        with self._memo_lock:
            if self._by_node is None:
                index: dict[str, list[dict[str, Any]]] = {}
                for pod in self.store._list(*POD_KEY, None):
                    index.setdefault(str(pod.get("spec", {}).get("nodeName") or ""), []).append(pod)
                self._by_node = index
            return self._by_node

    def _matched(self, target: _Target, params: Mapping[str, str]) -> list[dict[str, Any]]:
        resource = target.resource
        label_text, field_text = params.get("labelSelector", ""), params.get("fieldSelector", "")
        key = (resource.key, target.namespace, label_text, field_text)
        with self._memo_lock:
            found = self._memo.get(key)
        if found is not None:
            return found
        labels = parse_label_selector(label_text)
        fields = parse_field_selector(field_text, resource)
        node = next((f.value for f in fields if f.field == "spec.nodeName" and not f.negate), None)
        if resource.key == POD_KEY and node is not None:
            objects = self._node_index().get(node, [])
            if target.namespace is not None:
                objects = [o for o in objects if o.get("metadata", {}).get("namespace") == target.namespace]
        else:
            objects, _ = self.store.snapshot(resource, target.namespace)
        found = [
            o
            for o in objects
            if all(r.matches(_labels(o)) for r in labels) and all(f.matches(o) for f in fields)
        ]
        with self._memo_lock:
            self._memo[key] = found
        return found

    def _list(
        self, target: _Target, params: Mapping[str, str], printer: kube_printers.Printer | None = None
    ) -> _Response:
        # The same answer as KubeAPI._list (metadata, continue tokens, kind stripping), from the memo.
        # Tables for kubectl and watches are the original's.
        if printer is not None or params.get("watch", "").lower() in ("true", "1"):
            return super()._list(target, params, printer)
        if self._pages is None:
            return self._page(target, params)
        key = (target.resource.key, target.namespace, tuple(sorted(params.items())))
        with self._memo_lock:
            cached = self._pages.get(key)
        if cached is None:
            cached = self._page(target, params)
            with self._memo_lock:
                self._pages[key] = cached
        return cached

    def _page(self, target: _Target, params: Mapping[str, str]) -> _Response:
        resource = target.resource
        matched = self._matched(target, params)
        limit_text = params.get("limit", "")
        if limit_text and not limit_text.isdigit():
            return super()._list(target, params)  # let the original produce its error
        limit = int(limit_text or 0)
        start = _decode_continue(params["continue"]) if params.get("continue") else 0
        resource_version = self.store.resource_version
        end = min(start + limit, len(matched)) if limit else len(matched)
        page = matched[start:end]
        metadata: dict[str, Any] = {"resourceVersion": str(resource_version)}
        if end < len(matched):
            metadata["continue"] = _encode_continue(resource_version, end)
            if not params.get("labelSelector", "").strip() and not params.get("fieldSelector", "").strip():
                metadata["remainingItemCount"] = len(matched) - end
        if resource.builtin and not self.list_item_kinds:
            page = [{k: v for k, v in o.items() if k not in ("kind", "apiVersion")} for o in page]
        return _Response.json(
            200,
            {
                "kind": f"{resource.kind}List",
                "apiVersion": resource.group_version,
                "metadata": metadata,
                "items": page,
            },
        )
