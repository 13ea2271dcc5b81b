"""End to end with a real multi-node Ray cluster and the loopback Kubernetes API server.

Three raylets run on 127.0.0.2 (head), .3 (A100) and .4 (T4) for the whole module; the Kubernetes
side is the demo's recorded KubeRay state (Pod IPs match the raylets), varied per scenario and
served over HTTP to the real collector. Tests run in file order: the healthy cluster first, then
the broken workload is started once and stays for the rest.

Loopback API server, for what the real control plane cannot be made to give: a count of every
request a diagnosis makes (test_compound_incident_in_triage_order holds them under 40),
cluster-autoscaler's own
NotTriggerScaleUp event (no cluster-autoscaler runs there, and an event we posted would be ours,
which is what the recorded one already is, verbatim), and the demo's KubeRay state as recorded on
GKE, varied per cause around one Ray cluster whose raylets run at the demo's fixed IPs
(127.0.0.2-.4), joined to it by Pod IP: on the real plane Pod IPs are the stand-in kubelet's, and
the operator replaces Pods we edit by hand. Causes 1, 2, 3, 5, 6, 7 and 8 on the real control plane
(operator, scheduler, kubelet-made raylets, the shipped ServiceAccount) are
test_compound_real_stack.py and test_live_kubernetes.py.
"""

from __future__ import annotations

import contextlib
import copy
import json
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.classify import classify
from bot.collect.live import Target, collect_live
from bot.demo import kuberay_state as state
from bot.demo.local_ray import LocalCluster, running_cluster
from bot.diagnosis import Diagnosis
from tests.support.cluster import Bundle
from tests.support.demo_states import base_state, drop_node, healthy_state, pod
from tests.support.demo_states import items as _items
from tests.support.kube_api import ObjectStore, serve
from tests.support.probe_cluster import wait_for_demands

# Real Ray clusters on 127.0.0.2-.5: these modules run one after another in one pytest-xdist worker.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("real-ray")]


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[LocalCluster]:
    with running_cluster(say=lambda _: None) as cluster:
        yield cluster


@pytest.fixture(scope="module")
def broken_workload(ray_cluster: LocalCluster) -> Iterator[None]:
    driver = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "bot.demo.workload",
            "--address",
            ray_cluster.gcs_address,
            "--node-ip",
            ray_cluster.head_ip,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=ray_cluster.env,
    )
    try:
        assert driver.stdout is not None
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and b"READY" not in driver.stdout.readline():
            pass
        # Three wait: gpu-waiter behind the holder's A100, the four-GPU task, the H100 task.
        wait_for_demands(ray_cluster.dashboard_url, lambda found: len(found) >= 3)
        yield
    finally:
        driver.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            driver.wait(timeout=20)
        if driver.poll() is None:
            driver.kill()


def diagnose(raw: dict[str, Any], tmp_path: Path, dashboard: str) -> tuple[Diagnosis, float, int]:
    with serve(ObjectStore.from_bundle(Bundle.from_state(raw))) as api:
        config = api.kubeconfig(tmp_path / "kubeconfig")
        target = Target(
            cluster=state.CLUSTER,
            namespace=state.NAMESPACE,
            kubeconfig=str(config),
            context="loopback",
            dashboard_url=dashboard,
        )
        started = time.monotonic()
        diagnosis = classify(collect_live(target))
        return diagnosis, time.monotonic() - started, len(api.requests)


def rules_of(diagnosis: Diagnosis) -> list[tuple[str, str | None]]:
    return [(f.rule, f.subject.name) for f in diagnosis.findings]


# --- healthy: before any workload --------------------------------------------------------------


def test_healthy_cluster_has_no_warning(ray_cluster: LocalCluster, tmp_path: Path) -> None:
    diagnosis, _, _ = diagnose(healthy_state(), tmp_path, ray_cluster.dashboard_url)
    loud = [(f.rule, f.subject.name, f.evidence[:1]) for f in diagnosis.findings if f.severity != "info"]
    assert loud == []
    assert diagnosis.verdict_layer == "healthy"
    assert diagnosis.figures["ray_nodes_alive"] == "3"


def test_dashboard_down_still_diagnoses_kubernetes(ray_cluster: LocalCluster, tmp_path: Path) -> None:
    raw = base_state()
    diagnosis, _, _ = diagnose(raw, tmp_path, "http://127.0.0.2:1")
    assert diagnosis.findings[0].rule == "k8s-pod-waits-for-unadvertised-gpu"
    assert any(e.source == "ray dashboard" and "refused" in e.message for e in diagnosis.errors)
    assert "ray-dashboard-unreachable" in [f.rule for f in diagnosis.findings]


# --- one scenario per cause --------------------------------------------------------------------


def test_cause_1_no_free_gpu(ray_cluster: LocalCluster, tmp_path: Path) -> None:
    raw = base_state()
    drop_node(raw, "gpu-a100-2")
    diagnosis, _, _ = diagnose(raw, tmp_path, ray_cluster.dashboard_url)
    assert diagnosis.findings[0].cause == 1
    assert diagnosis.findings[0].subject.name == state.A100_PENDING_POD


def test_cause_2_missing_toleration(ray_cluster: LocalCluster, tmp_path: Path) -> None:
    raw = base_state()
    drop_node(raw, "gpu-a100-2")
    pending = pod(raw, state.A100_PENDING_POD)
    pending["spec"]["tolerations"] = [
        t for t in pending["spec"]["tolerations"] if t.get("key") != "nvidia.com/gpu"
    ]
    raw["kubernetes"]["events"]["items"] = [
        e for e in _items(raw, "events") if e["involvedObject"]["name"] != state.A100_PENDING_POD
    ]
    diagnosis, _, _ = diagnose(raw, tmp_path, ray_cluster.dashboard_url)
    assert (diagnosis.findings[0].rule, diagnosis.findings[0].subject.name) == (
        "k8s-untolerated-taint",
        state.A100_PENDING_POD,
    )


def test_cause_3_gpu_node_advertises_no_gpu(ray_cluster: LocalCluster, tmp_path: Path) -> None:
    diagnosis, _, _ = diagnose(base_state(), tmp_path, ray_cluster.dashboard_url)
    assert rules_of(diagnosis)[0] == ("k8s-pod-waits-for-unadvertised-gpu", state.A100_PENDING_POD)
    assert ("k8s-gpu-node-without-allocatable", "gpu-a100-2") in rules_of(diagnosis)


def test_cause_4_pod_given_two_gpus_ray_registered_one(ray_cluster: LocalCluster, tmp_path: Path) -> None:
    raw = healthy_state()
    t4 = next(p for p in _items(raw, "pods") if p.get("status", {}).get("podIP") == "127.0.0.4")
    resources = t4["spec"]["containers"][0]["resources"]
    resources["limits"]["nvidia.com/gpu"] = "2"
    resources["requests"]["nvidia.com/gpu"] = "2"
    diagnosis, _, _ = diagnose(raw, tmp_path, ray_cluster.dashboard_url)
    finding = next(f for f in diagnosis.findings if f.rule == "ray-gpu-not-registered")
    assert finding.subject.name == t4["metadata"]["name"]
    assert (finding.params["pod_gpus"], finding.params["ray_gpus"]) == ("2", "1")


def test_cause_8_worker_never_joined(ray_cluster: LocalCluster, tmp_path: Path) -> None:
    raw = healthy_state()
    lost = copy.deepcopy(pod(base_state(), state.LOST_POD))
    raw["kubernetes"]["pods"]["items"].append(lost)
    raw["kubernetes"]["logs"] = [
        log for log in base_state()["kubernetes"]["logs"] if log["pod"] == state.LOST_POD
    ]
    diagnosis, _, _ = diagnose(raw, tmp_path, ray_cluster.dashboard_url)
    assert rules_of(diagnosis)[0] == ("ray-worker-not-joined", state.LOST_POD)
    evidence = " ".join(e.text for e in diagnosis.findings[0].evidence)
    assert "127.0.0.9" in evidence and "GCS" in evidence


def test_cause_9_autoscaler_at_max(ray_cluster: LocalCluster, tmp_path: Path) -> None:
    raw = base_state()
    drop_node(raw, "gpu-a100-2")
    event = copy.deepcopy(
        next(e for e in _items(raw, "events") if e["involvedObject"]["name"] == state.A100_PENDING_POD)
    )
    event["metadata"]["name"] += ".ca"
    event.update(
        reason="NotTriggerScaleUp",
        type="Normal",
        source={"component": "cluster-autoscaler"},
        message="pod didn't trigger scale-up: 3 node(s) didn't match Pod's node affinity/selector, "
        "1 max node group size reached",
    )
    raw["kubernetes"]["events"]["items"].append(event)
    diagnosis, _, _ = diagnose(raw, tmp_path, ray_cluster.dashboard_url)
    assert rules_of(diagnosis)[0] == ("cluster-autoscaler-cannot-scale-up", state.A100_PENDING_POD)
    assert diagnosis.findings[0].cause == 9


def test_cause_10_failed_ray_job(ray_cluster: LocalCluster, tmp_path: Path) -> None:
    body = json.dumps(
        {"entrypoint": "python -c 'import sys; sys.exit(3)'", "submission_id": "raydiag-it-failing"}
    )
    request = urllib.request.Request(
        ray_cluster.dashboard_url + "/api/jobs/",
        data=body.encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        assert response.status == 200
    deadline = time.monotonic() + 90
    diagnosis = None
    while time.monotonic() < deadline:
        diagnosis, _, _ = diagnose(healthy_state(), tmp_path, ray_cluster.dashboard_url)
        if any(f.rule == "ray-job-failed" for f in diagnosis.findings):
            break
        time.sleep(2)
    assert diagnosis is not None
    finding = next(f for f in diagnosis.findings if f.rule == "ray-job-failed")
    assert finding.subject.name == "raydiag-it-failing" and finding.cause == 10


# --- with the broken workload: causes 5, 6, 7 and the compound incident -------------------------


def test_ray_causes_5_6_7_from_the_workload(
    ray_cluster: LocalCluster, broken_workload: None, tmp_path: Path
) -> None:
    diagnosis, _, _ = diagnose(healthy_state(), tmp_path, ray_cluster.dashboard_url)
    by_rule = {f.rule: f for f in diagnosis.findings}
    assert by_rule["ray-gpu-type-unregistered"].params["resource"] == "accelerator_type:H100"
    assert by_rule["ray-demand-infeasible"].subject.name == "{CPU: 1, GPU: 4}"
    held = by_rule["ray-resources-held"]
    assert "gpu-holder" in held.params["holders"]
    assert [f.cause for f in diagnosis.findings if f.severity == "critical"][:3] == [7, 6, 5]


def test_compound_incident_in_triage_order(
    ray_cluster: LocalCluster, broken_workload: None, tmp_path: Path
) -> None:
    diagnosis, _, requests = diagnose(base_state(), tmp_path, ray_cluster.dashboard_url)
    causes = [f.cause for f in diagnosis.findings if f.severity == "critical"]
    assert causes[:5] == [3, 8, 7, 6, 5]
    assert diagnosis.verdict_layer == "kubernetes"
    # Reads are targeted: a few dozen requests, whatever else the cluster runs (timing: BENCHMARKS.md).
    assert requests < 40, requests


def test_compound_tie_breaks_too_large_demand_and_gpu_node_before_autoscaler(
    ray_cluster: LocalCluster, broken_workload: None, tmp_path: Path
) -> None:
    """CAUSES.md's tie-breaks on a live cluster where two explanations compete for one subject.

    The T4 group hides its GPU (``num-gpus: "0"`` beside an ``nvidia.com/gpu`` limit), and the
    workload asks for ``{CPU: 1, GPU: 4}``, more than any node or group has even with that GPU shown:
    the demand is 6, while the group keeps its own finding, 4. The pending A100 worker waits on a GPU
    node that advertises no GPU, and cluster-autoscaler also refuses to add a node for it: the GPU
    node (3) is the root cause and comes first.
    """
    raw = base_state()
    cluster = _items(raw, "rayclusters")[0]
    t4 = next(g for g in cluster["spec"]["workerGroupSpecs"] if g["groupName"] == "gpu-t4")
    t4["rayStartParams"]["num-gpus"] = "0"
    refused = copy.deepcopy(
        next(e for e in _items(raw, "events") if e["involvedObject"]["name"] == state.A100_PENDING_POD)
    )
    refused["metadata"]["name"] += "-ca"
    refused.update(
        reason="NotTriggerScaleUp",
        type="Normal",
        message="pod didn't trigger scale-up: 1 max node group size reached",
        source={"component": "cluster-autoscaler"},
        reportingComponent="cluster-autoscaler",
    )
    _items(raw, "events").append(refused)

    diagnosis, _, _ = diagnose(raw, tmp_path, ray_cluster.dashboard_url)
    findings = diagnosis.findings
    by_subject = {(f.rule, f.subject.name): f for f in findings}
    assert by_subject[("ray-demand-infeasible", "{CPU: 1, GPU: 4}")].cause == 6
    assert ("ray-node-type-omits-gpu", "{CPU: 1, GPU: 4}") not in by_subject
    hiding = [f for f in findings if f.rule == "ray-start-params-hide-gpu"]
    assert [(f.params.get("group"), f.cause) for f in hiding] == [("gpu-t4", 4)]

    about_pod = [f for f in findings if f.subject.name == state.A100_PENDING_POD]
    assert [f.rule for f in about_pod][:2] == [
        "k8s-pod-waits-for-unadvertised-gpu",
        "cluster-autoscaler-cannot-scale-up",
    ]
    assert findings[0].rule == "k8s-pod-waits-for-unadvertised-gpu"
    assert diagnosis.verdict_layer == "kubernetes"
