"""Live collection against a loopback Kubernetes API server: what is read, and what breaks.

The Ray dashboard is pointed at a closed loopback port here, so these tests also show that a dead
dashboard costs one quick error and the Kubernetes layer is still diagnosed. Tests with a real Ray
cluster are in test_live_ray.py.

Loopback API server: the faults (a slow server, a 429 with Retry-After, truncated JSON, an
unreachable server) need it; the scenario cases are the recorded bundles of
tests/support/scenarios.py, served in milliseconds. Causes 1, 2, 3 and 8 with the real scheduler's
own events and a real 403 are in test_compound_real_stack.py.
"""

from __future__ import annotations

import contextlib
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.classify import classify
from bot.collect.kubernetes import READ_SCOPES
from bot.collect.live import Target, collect_live, kubernetes_client
from bot.snapshot.model import Snapshot
from tests.support import scenarios
from tests.support.cluster import CLUSTER, NS, Bundle
from tests.support.kube_api import Fault, KubeAPI, ObjectStore, serve


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


K8S_CASES = [
    ("k8s-insufficient-resources", scenarios.third_gpu_worker_no_free_gpu, 1),
    ("k8s-untolerated-taint", scenarios.gpu_worker_without_toleration, 2),
    ("k8s-pod-waits-for-unadvertised-gpu", scenarios.device_plugin_gone_on_free_node, 3),
    ("pod-image-pull-failed", scenarios.worker_image_tag_does_not_exist, 10),
    ("k8s-quota-exceeded", scenarios.worker_creation_refused_by_quota, 1),
    ("ray-head-service-no-endpoints", scenarios.head_service_selector_typo, 8),
    ("ray-start-params-hide-gpu", scenarios.gpu_group_declares_zero_gpus, 4),
]


@pytest.mark.parametrize(("rule", "build", "cause"), K8S_CASES, ids=[c[0] for c in K8S_CASES])
def test_live_kubernetes_layer_names_the_cause(
    api_for, tmp_path: Path, dead_dashboard: str, rule, build, cause
) -> None:  # type: ignore[no-untyped-def]
    api = api_for(build())
    snapshot = collect(api, tmp_path, dead_dashboard)
    diagnosis = classify(snapshot)
    rules = [f.rule for f in diagnosis.findings]
    assert rule in rules, (rules, snapshot.errors[:3])
    finding = next(f for f in diagnosis.findings if f.rule == rule)
    assert finding.cause == cause
    # Only GET requests; nothing this collector does writes.
    assert {r.method for r in api.requests} == {"GET"}
    # The dead dashboard is reported once, as evidence, not as a crash.
    assert any(e.source == "ray dashboard" and "refused" in e.message for e in snapshot.errors)


def test_healthy_cluster_live_has_no_kubernetes_warning(api_for, tmp_path: Path, dead_dashboard: str) -> None:  # type: ignore[no-untyped-def]
    api = api_for(scenarios.healthy())
    diagnosis = classify(collect(api, tmp_path, dead_dashboard))
    loud = [
        f.rule for f in diagnosis.findings if f.severity != "info" and f.rule != "ray-dashboard-unreachable"
    ]
    assert loud == []


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


def test_missing_raycluster_lists_the_ones_that_exist(api_for, tmp_path: Path, dead_dashboard: str) -> None:  # type: ignore[no-untyped-def]
    api = api_for(scenarios.healthy())
    config = api.kubeconfig(tmp_path / "kubeconfig")
    target = Target(
        cluster="raycluster-typo",
        namespace=NS,
        kubeconfig=str(config),
        context="loopback",
        dashboard_url=dead_dashboard,
    )
    snapshot = collect_live(target)
    error = next(e for e in snapshot.errors if e.source == "kubernetes rayclusters")
    assert "raycluster-typo not found" in error.message and CLUSTER in error.message


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
