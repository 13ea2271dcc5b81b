"""Live collection of the Kubernetes layer: what is read, and what breaks.

The Ray dashboard is pointed at a closed loopback port here, so these tests also show that a dead
dashboard costs one quick error and the Kubernetes layer is still diagnosed. Tests with a real Ray
cluster are in test_live_ray.py.

The scenario cases run on the real control plane (the module's ``plane``): RayClusters applied to
kube-apiserver, Pods made by the KubeRay operator, placed or refused by kube-scheduler on the
stand-in kubelet's Nodes, quota refused by kube-apiserver's own admission, read as the shipped
ServiceAccount. Setting it up took 55-75 s here (the plane, then six real raylets, one at a time).

Loopback API server, only for what a real one cannot be made to do on demand: answer slowly, 429
with Retry-After once, truncated JSON, a 403 on one resource for an otherwise allowed identity
(the real 403 is in test_compound_real_stack.py), and recording every request as it arrives (to
hold the reader's own call log to it, to see only GETs, and to see the dashboard's first request
land while Kubernetes reads are in flight). The head Service without Endpoints stays there too:
Endpoints are kube-controller-manager's work, which the real plane does not run, so there every
Service has none.
"""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from bot.classify import classify
from bot.collect.kubernetes import READ_SCOPES
from bot.collect.live import Target, collect_live, kubernetes_client
from bot.snapshot.model import Snapshot
from tests.support import scenarios
from tests.support.cluster import CLUSTER, NS, Bundle
from tests.support.controlplane import CONTEXT, ControlPlane, pid_alive
from tests.support.kube_api import Fault, KubeAPI, ObjectStore, serve
from tests.support.kubelet import KubeletNode, StandInKubelet, Waiting
from tests.support.rbac import install_shipped_rbac, service_account_kubeconfig
from tests.support.waiting import eventually

REPO = Path(__file__).resolve().parents[2]


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def dead_dashboard() -> str:
    return f"http://127.0.0.1:{closed_port()}"


def collect(api: KubeAPI, tmp_path: Path, dashboard: str, **kwargs: float) -> Snapshot:
    config = api.kubeconfig(tmp_path / "kubeconfig")
    target = Target(
        cluster=CLUSTER, namespace=NS, kubeconfig=str(config), context="loopback", dashboard_url=dashboard
    )
    return collect_live(target, **kwargs)  # type: ignore[arg-type]


@pytest.fixture
def api_for() -> Iterator[object]:
    with contextlib.ExitStack() as stack:

        def start(bundle: Bundle, faults: list[Fault] | None = None) -> KubeAPI:
            return stack.enter_context(serve(ObjectStore.from_bundle(bundle), faults=faults))

        yield start


# --- the real control plane -------------------------------------------------------------------
#
# Two RayClusters on the real kube-apiserver, made into Pods by the real KubeRay operator and placed
# or refused by the real kube-scheduler on the stand-in kubelet's Nodes: one healthy, and one whose
# worker groups each plant one Kubernetes-layer cause. The scheduler's FailedScheduling and the
# operator's FailedToCreateWorkerPod (carrying kube-apiserver's quota refusal) come from the programs
# that write them on a cluster; the image-pull events are the stand-in kubelet's, in its wording.

HEALTHY_NS, FAULTS_NS = "ml-healthy", "ml-faults"
HEALTHY, FAULTS = "healthy", "faults"
POOL = "raydiag.test/pool"
IMAGE = "rayproject/ray:2.9.3"
CAPPED = "capped"  # the PriorityClass whose Pods a ResourceQuota of FAULTS_NS allows none of
GPU_LABELS = {"nvidia.com/gpu.present": "true", "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"}
GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
NODES = [
    KubeletNode("cpu-node", {"cpu": "16", "memory": "64Gi", "pods": "110"}, labels={POOL: "cpu"}),
    *(
        KubeletNode(f"gpu-{n}", {"cpu": "8", "memory": "32Gi", "pods": "110", "nvidia.com/gpu": "1"},
                    labels={**GPU_LABELS, POOL: pool}, taints=taints)
        for n, pool, taints in (("a", "gpu", ()), ("b", "gpu", ()), ("c", "zero", ()), ("d", "tainted", (GPU_TAINT,)))
    ),
]  # fmt: skip
GPU = {"cpu": "1", "memory": "1Gi", "nvidia.com/gpu": "1"}
SMALL = {"cpu": "1", "memory": "1Gi"}


def worker_group(
    name: str,
    limits: dict[str, str],
    pool: str,
    replicas: int = 1,
    ray_start: dict[str, str] | None = None,
    image: str = IMAGE,
    priority_class: str | None = None,
) -> dict[str, Any]:
    container = {"name": "ray-worker", "image": image, "resources": {"limits": limits, "requests": limits}}
    spec: dict[str, Any] = {"nodeSelector": {POOL: pool}, "containers": [container]}
    if priority_class:
        spec["priorityClassName"] = priority_class
    return {
        "groupName": name,
        "replicas": replicas,
        "minReplicas": replicas,
        "maxReplicas": replicas,
        "rayStartParams": ray_start or {},
        "template": {"spec": spec},
    }


def raycluster(name: str, namespace: str, workers: list[dict[str, Any]]) -> dict[str, Any]:
    head = {"name": "ray-head", "image": IMAGE, "resources": {"limits": SMALL, "requests": SMALL}}
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "headGroupSpec": {"rayStartParams": {}, "template": {"spec": {"nodeSelector": {POOL: "cpu"}, "containers": [head]}}},
            "workerGroupSpecs": workers,
        },
    }  # fmt: skip


# rule, the faulty cluster's worker group it names, cause
REAL_CASES = [
    ("k8s-insufficient-resources", "gpu", 1),  # three one-GPU workers, two free GPUs in the pool
    ("k8s-untolerated-taint", "tainted", 2),  # the only Node of its pool is tainted for GPUs
    ("pod-image-pull-failed", "badimage", 10),  # a tag that does not exist
    ("k8s-quota-exceeded", "capped", 1),  # kube-apiserver's quota admission refuses its Pods
    ("ray-start-params-hide-gpu", "zero", 4),  # a GPU in the Pod, num-gpus 0 for Ray
]


@dataclass(frozen=True)
class RealPlane:
    kubeconfig: Path  # the shipped ServiceAccount's token, context CONTEXT
    pods: dict[str, list[str]]  # worker group of the faulty cluster -> its Pods
    pending: dict[str, list[str]]  # the same, only the Pods the scheduler refused
    healthy: Snapshot  # the healthy cluster, read before the faulty one was made


def _plant_quota(plane: ControlPlane) -> None:
    """A PriorityClass, and a ResourceQuota of FAULTS_NS scoped to it that allows no Pod. The quota
    controller (kube-controller-manager, not run here) would post its status; without one the
    quota admission plugin refuses every Pod it covers as "status unknown", so it is posted here."""
    from kubernetes import client

    scheduling: Any = client.SchedulingV1Api(plane.client())
    scheduling.create_priority_class(body={"metadata": {"name": CAPPED}, "value": 1000})
    core: Any = client.CoreV1Api(plane.client())
    quota = {
        "metadata": {"name": "capped-pods"},
        "spec": {
            "hard": {"pods": "0"},
            "scopeSelector": {
                "matchExpressions": [{"scopeName": "PriorityClass", "operator": "In", "values": [CAPPED]}]
            },
        },
    }
    core.create_namespaced_resource_quota(FAULTS_NS, body=quota)
    core.patch_namespaced_resource_quota_status(
        "capped-pods", FAULTS_NS, body={"status": {"hard": {"pods": "0"}, "used": {"pods": "0"}}}
    )


@pytest.fixture(scope="module")
def real(plane: ControlPlane, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealPlane]:
    from kubernetes import client

    install_shipped_rbac(plane)
    kubeconfig = service_account_kubeconfig(plane, tmp_path_factory.mktemp("account") / "kubeconfig")
    for namespace in (HEALTHY_NS, FAULTS_NS):
        plane.namespace(namespace)
    _plant_quota(plane)
    core: Any = client.CoreV1Api(plane.client())
    objects: Any = client.CustomObjectsApi(plane.client())
    healthy = raycluster(HEALTHY, HEALTHY_NS, [worker_group("cpu", SMALL, "cpu")])
    faults = raycluster(
        FAULTS,
        FAULTS_NS,
        [
            worker_group("gpu", GPU, "gpu", replicas=3, ray_start={"num-gpus": "1"}),
            worker_group("tainted", GPU, "tainted", ray_start={"num-gpus": "1"}),
            worker_group("badimage", SMALL, "cpu", image=f"{IMAGE}-no-such-tag"),
            worker_group("zero", GPU, "zero", ray_start={"num-gpus": "0"}),
            # Last: KubeRay's reconcile stops at the first Pod it fails to create.
            worker_group("capped", SMALL, "cpu", priority_class=CAPPED),
        ],
    )
    waiting = {f"{FAULTS}-badimage-": Waiting("ImagePullBackOff")}
    kubelet = StandInKubelet(plane, NODES, waiting=waiting, pod_ip_first=60)
    with kubelet:

        def pods(namespace: str, cluster: str) -> list[Any]:
            return list(core.list_namespaced_pod(namespace, label_selector=f"ray.io/cluster={cluster}").items)

        # The healthy cluster is read before the faulty one exists: the collector reads Pending Pods
        # cluster-wide (they compete for the same Nodes), and the faulty cluster's would be named.
        objects.create_namespaced_custom_object("ray.io", "v1", HEALTHY_NS, "rayclusters", healthy)
        assert eventually(
            lambda: [p.status.phase for p in pods(HEALTHY_NS, HEALTHY)] == ["Running", "Running"],
            timeout_s=120,
            poll_s=1,
        ), ([(p.metadata.name, p.status.phase) for p in pods(HEALTHY_NS, HEALTHY)], kubelet.errors)
        healthy_snapshot = collect_live(target(kubeconfig, HEALTHY, HEALTHY_NS))
        objects.create_namespaced_custom_object("ray.io", "v1", FAULTS_NS, "rayclusters", faults)

        def refused(pod: Any) -> bool:
            return any(
                c.type == "PodScheduled" and c.status == "False" and c.reason == "Unschedulable"
                for c in pod.status.conditions or []
            )

        def quota_refusal() -> bool:
            events = core.list_namespaced_event(FAULTS_NS).items
            return any(
                e.reason == "FailedToCreateWorkerPod" and "exceeded quota" in (e.message or "")
                for e in events
            )

        def settled() -> bool:
            up = [p for p in pods(HEALTHY_NS, HEALTHY) if p.status.phase == "Running"]
            now = pods(FAULTS_NS, FAULTS)
            phases = [(p.metadata.labels.get("ray.io/group"), p.status.phase, refused(p)) for p in now]
            return (
                len(up) == 2
                and sorted(phases) == sorted([
                    ("badimage", "Pending", False), ("gpu", "Pending", True), ("gpu", "Running", False),
                    ("gpu", "Running", False), ("headgroup", "Running", False), ("tainted", "Pending", True),
                    ("zero", "Running", False),
                ])
                and quota_refusal()
            )  # fmt: skip

        assert eventually(settled, timeout_s=180, poll_s=1), (
            [(p.metadata.name, p.status.phase, refused(p)) for p in pods(FAULTS_NS, FAULTS)],
            [(p.metadata.name, p.status.phase) for p in pods(HEALTHY_NS, HEALTHY)],
            [
                (e.reason, e.message)
                for e in core.list_namespaced_event(FAULTS_NS).items
                if e.type == "Warning"
            ],
            kubelet.errors,
            {str(k): v.read_text(errors="replace")[-1500:] for k, v in kubelet.logs.items() if v.exists()},
        )
        grouped: dict[str, list[str]] = {}
        pending: dict[str, list[str]] = {}
        for pod in pods(FAULTS_NS, FAULTS):
            group = pod.metadata.labels.get("ray.io/group")
            grouped.setdefault(group, []).append(pod.metadata.name)
            if refused(pod):
                pending.setdefault(group, []).append(pod.metadata.name)
        yield RealPlane(kubeconfig, grouped, pending, healthy_snapshot)
        started = kubelet.started_pids()
    assert kubelet.errors == []
    assert not [pid for pid in started if pid_alive(pid)]


def target(kubeconfig: Path, cluster: str, namespace: str) -> Target:
    """The shipped ServiceAccount's view of one RayCluster, the dashboard at a closed port."""
    return Target(
        cluster=cluster,
        namespace=namespace,
        kubeconfig=str(kubeconfig),
        context=CONTEXT,
        dashboard_url=f"http://127.0.0.1:{closed_port()}",
    )


@pytest.fixture(scope="module")
def faulty_snapshot(real: RealPlane) -> Snapshot:
    return collect_live(target(real.kubeconfig, FAULTS, FAULTS_NS))


@pytest.mark.slow
@pytest.mark.xdist_group("real-ray")
@pytest.mark.parametrize(("rule", "group", "cause"), REAL_CASES, ids=[c[0] for c in REAL_CASES])
def test_live_kubernetes_layer_names_the_cause(
    real: RealPlane, faulty_snapshot: Snapshot, rule: str, group: str, cause: int
) -> None:
    diagnosis = classify(faulty_snapshot)
    findings = [f for f in diagnosis.findings if f.rule == rule]
    assert findings, ([f.rule for f in diagnosis.findings], faulty_snapshot.errors[:3])
    assert {f.cause for f in findings} == {cause}
    subjects = {f.subject.name for f in findings}
    names = {FAULTS, f"{FAULTS}-{group}", group, *real.pods.get(group, ())}
    assert subjects & names, (subjects, names)
    # Only the dashboard, pointed at a closed port, is unread: reported once, as evidence. The
    # shipped ServiceAccount read everything else.
    assert [e.source for e in faulty_snapshot.errors] == ["ray dashboard"], faulty_snapshot.errors
    assert "refused" in faulty_snapshot.errors[0].message


@pytest.mark.slow
@pytest.mark.xdist_group("real-ray")
def test_the_scheduler_refusals_are_read_in_its_own_words(real: RealPlane, faulty_snapshot: Snapshot) -> None:
    """The refused Pods are the ones the real scheduler named, and its FailedScheduling events
    reached the snapshot as it wrote them (not as a fixture wrote them)."""
    assert faulty_snapshot.kubernetes is not None
    events = [e for e in faulty_snapshot.kubernetes.events if e.reason == "FailedScheduling"]
    about = {e.object_name for e in events}
    assert {*real.pending["gpu"], *real.pending["tainted"]} <= about, about
    texts = " ".join(e.message for e in events)
    assert "Insufficient nvidia.com/gpu" in texts and "untolerated taint" in texts, texts


@pytest.mark.slow
@pytest.mark.xdist_group("real-ray")
def test_healthy_cluster_live_has_no_kubernetes_warning(real: RealPlane) -> None:
    snapshot = real.healthy
    diagnosis = classify(snapshot)
    loud = [
        f.rule for f in diagnosis.findings if f.severity != "info" and f.rule != "ray-dashboard-unreachable"
    ]
    assert loud == [], [(f.rule, f.subject.name) for f in diagnosis.findings]
    assert snapshot.kubernetes is not None and len(snapshot.kubernetes.pods) == 2


@pytest.mark.slow
@pytest.mark.xdist_group("real-ray")
def test_missing_raycluster_lists_the_ones_that_exist(real: RealPlane) -> None:
    snapshot = collect_live(target(real.kubeconfig, "raycluster-typo", HEALTHY_NS))
    error = next(e for e in snapshot.errors if e.source == "kubernetes rayclusters")
    assert "raycluster-typo not found" in error.message and HEALTHY in error.message


# In a fresh process: read one cluster, then say which parts of the client were loaded, and that
# a part raydiag does not use still imports afterwards (as another library in the process might).
CLIENT_IMPORT_SCRIPT = r"""
import json, sys
from bot.collect.live import Target, collect_live
snapshot = collect_live(Target(cluster=sys.argv[2], namespace=sys.argv[3], kubeconfig=sys.argv[1],
                               context=sys.argv[4], dashboard_url="http://127.0.0.1:9"))
loaded = sorted({name.split(".")[1] for name in sys.modules if name.startswith("kubernetes.")})
import kubernetes
from kubernetes import dynamic, watch
from kubernetes.dynamic.discovery import Discoverer
print(json.dumps({
    "pods": len(snapshot.kubernetes.pods) if snapshot.kubernetes else 0,
    "errors": [e.source for e in snapshot.errors],
    "loaded": loaded,
    "version": kubernetes.__version__,
    "later": [dynamic.__name__, watch.__name__, Discoverer.__name__],
}))
"""


@pytest.mark.slow
@pytest.mark.xdist_group("real-ray")
def test_reading_a_cluster_loads_only_the_client_and_its_config(real: RealPlane) -> None:
    """The Kubernetes client loads without its package's ``__init__``, and still works in full."""
    from importlib.metadata import version

    done = subprocess.run(
        [sys.executable, "-c", CLIENT_IMPORT_SCRIPT, str(real.kubeconfig), FAULTS, FAULTS_NS, CONTEXT],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["pods"] > 0
    assert [e for e in result["errors"] if e.startswith("kubernetes")] == []
    assert {"client", "config"} <= set(result["loaded"])
    assert not {"dynamic", "watch", "stream", "informer", "leaderelection"} & set(result["loaded"])
    assert result["version"] == version("kubernetes")
    assert result["later"] == ["kubernetes.dynamic", "kubernetes.watch", "Discoverer"]


# --- the loopback API server: what a real one cannot be made to do -----------------------------


def test_head_service_selector_typo_leaves_it_without_endpoints(
    api_for: Any, tmp_path: Path, dead_dashboard: str
) -> None:
    """Endpoints are kube-controller-manager's (its endpoints and EndpointSlice controllers), which
    the real plane does not run: there, every Service has none, typo or not."""
    api = api_for(scenarios.head_service_selector_typo())
    diagnosis = classify(collect(api, tmp_path, dead_dashboard))
    (finding,) = [f for f in diagnosis.findings if f.rule == "ray-head-service-no-endpoints"]
    assert finding.cause == 8


def test_every_call_is_a_declared_read_scope(api_for, tmp_path: Path, dead_dashboard: str) -> None:  # type: ignore[no-untyped-def]
    api = api_for(scenarios.worker_waits_for_unbound_checkpoint_claim())
    config = api.kubeconfig(tmp_path / "kubeconfig")
    target = Target(
        cluster=CLUSTER,
        namespace=NS,
        kubeconfig=str(config),
        context="loopback",
        dashboard_url=dead_dashboard,
    )
    from bot.collect.deadline import Deadline
    from bot.collect.kubernetes import KubernetesReader, collect_kubernetes

    reader = KubernetesReader(kubernetes_client(target), Deadline(20))
    collect_kubernetes(reader, CLUSTER, NS)
    used = {call.scope for call in reader.made}
    assert used <= READ_SCOPES
    assert ("get", "", "persistentvolumeclaims") in used
    assert len(reader.made) == len(api.requests)
    # Only GET requests: nothing this collector does writes.
    assert {r.method for r in api.requests} == {"GET"}


def test_forbidden_events_still_diagnose(api_for, tmp_path: Path, dead_dashboard: str) -> None:  # type: ignore[no-untyped-def]
    api = api_for(scenarios.third_gpu_worker_no_free_gpu(), [Fault(r"/events$", status=403)])
    snapshot = collect(api, tmp_path, dead_dashboard)
    diagnosis = classify(snapshot)
    error = next(e for e in snapshot.errors if e.source == "kubernetes events")
    assert "403" in error.message and "forbidden" in error.message
    assert error.hint is not None and "`list` on `events`" in error.hint
    # Without the FailedScheduling event the fit replay still explains the Pod.
    assert diagnosis.findings[0].rule == "k8s-insufficient-resources"
    assert "collection-failed" in [f.rule for f in diagnosis.findings]


def test_slow_api_server_is_bounded_by_the_deadline(api_for, tmp_path: Path, dead_dashboard: str) -> None:  # type: ignore[no-untyped-def]
    api = api_for(scenarios.healthy(), [Fault(r"/api/v1/", delay_s=3.0)])
    started = time.monotonic()
    snapshot = collect(api, tmp_path, dead_dashboard, deadline_s=4.0, call_timeout_s=1.0)
    elapsed = time.monotonic() - started
    assert elapsed < 8.0
    assert any("timed out" in e.message or "deadline" in e.message for e in snapshot.errors)
    classify(snapshot)


def test_throttled_call_waits_for_retry_after_once(api_for, tmp_path: Path, dead_dashboard: str) -> None:  # type: ignore[no-untyped-def]
    api = api_for(scenarios.healthy(), [Fault(r"/nodes$", status=429, retry_after=1, times=1)])
    snapshot = collect(api, tmp_path, dead_dashboard)
    assert not [e for e in snapshot.errors if e.source == "kubernetes nodes"]
    assert api.requests.count(path=r"/nodes$") == 2
    assert snapshot.kubernetes is not None and len(snapshot.kubernetes.nodes) == 5


def test_truncated_json_is_an_error_not_a_crash(api_for, tmp_path: Path, dead_dashboard: str) -> None:  # type: ignore[no-untyped-def]
    api = api_for(scenarios.healthy(), [Fault(r"/nodes$", status=200, body="truncated")])
    snapshot = collect(api, tmp_path, dead_dashboard)
    error = next(e for e in snapshot.errors if e.source == "kubernetes nodes")
    assert "not valid JSON" in error.message
    assert snapshot.kubernetes is not None and snapshot.kubernetes.nodes_complete is False
    classify(snapshot)


def test_unreachable_api_server(tmp_path: Path, dead_dashboard: str) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: x\n  cluster:\n    server: http://127.0.0.1:"
        f"{closed_port()}\ncontexts:\n- name: x\n  context:\n    cluster: x\n    user: x\n"
        "current-context: x\nusers:\n- name: x\n  user:\n    token: t\n",
        encoding="utf-8",
    )
    target = Target(cluster=CLUSTER, namespace=NS, kubeconfig=str(kubeconfig), dashboard_url=dead_dashboard)
    snapshot = collect_live(target, deadline_s=10)
    assert any("refused" in e.message for e in snapshot.errors if e.source.startswith("kubernetes"))
    assert classify(snapshot).verdict_layer in ("unknown", "ray", "kubernetes")


def test_broken_kubeconfig_is_a_finding(tmp_path: Path, dead_dashboard: str) -> None:
    target = Target(
        cluster=CLUSTER, namespace=NS, kubeconfig=str(tmp_path / "missing"), dashboard_url=dead_dashboard
    )
    snapshot = collect_live(target, deadline_s=5)
    assert snapshot.errors[0].source == "kubernetes config"


def test_the_ray_layer_is_read_while_kubernetes_is(api_for, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The dashboard's first request arrives before the Kubernetes reads are done: the two layers
    are read side by side, not one after the other. Both are still read in full."""
    from tests.hardening.recorded_dashboard import recorded_answers, serve_dashboard

    api = api_for(scenarios.third_gpu_worker_no_free_gpu())
    kubernetes_calls_when_ray_began: list[int] = []
    with serve_dashboard(recorded_answers("broken")) as dashboard:
        answer = dashboard.respond

        def respond(path: str):  # type: ignore[no-untyped-def]
            if not kubernetes_calls_when_ray_began:
                kubernetes_calls_when_ray_began.append(len(api.requests))
            return answer(path)

        dashboard.respond = respond  # type: ignore[method-assign]
        snapshot = collect(api, tmp_path, dashboard.url)
    kubernetes_calls = sum(1 for r in api.requests if not r.path.endswith("/log"))
    assert kubernetes_calls >= 10
    assert kubernetes_calls_when_ray_began[0] < kubernetes_calls, (
        kubernetes_calls_when_ray_began,
        kubernetes_calls,
    )
    assert snapshot.ray is not None and snapshot.ray.nodes and snapshot.kubernetes is not None
    assert not [e for e in snapshot.errors if e.source.startswith("ray")], snapshot.errors
