"""Pastes that carry both layers are judged as CAUSES.md's triage reads them.

The fixtures are real output: ``kubectl`` against the loopback API beside the venv's ``ray status``,
``ray status -v`` and ``ray list nodes`` from a local cluster (``tools/record_two_layer_cases.py``).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from bot.classify import classify
from bot.collect.paste import parse_paste
from bot.collect.paste.assemble import _role_from_name
from bot.diagnosis import Diagnosis
from bot.snapshot.kubernetes import Condition, ContainerSpec, Event, KubernetesState, Pod
from bot.snapshot.model import Snapshot
from bot.snapshot.ray import RayState

CASES = Path(__file__).resolve().parents[1] / "cases"


def _diagnose(rule: str, outcome: str, stem: str) -> Diagnosis:
    return classify(parse_paste((CASES / rule / outcome / f"{stem}.txt").read_text(encoding="utf-8")))


@pytest.mark.parametrize(
    ("name", "labels"),
    [
        # KubeRay 1.x: <cluster>-<group>-worker-<suffix>; the group may itself be called "worker".
        (
            "job-43n6os1dxr-2tzsh-worker-worker-w5qqz",
            {
                "ray.io/node-type": "worker",
                "ray.io/cluster": "job-43n6os1dxr-2tzsh",
                "ray.io/group": "worker",
            },
        ),
        # Before KubeRay 1.0: <cluster>-worker-<group>-<suffix>.
        (
            "raycluster-complete-worker-small-group-4s6jv",
            {
                "ray.io/node-type": "worker",
                "ray.io/cluster": "raycluster-complete",
                "ray.io/group": "small-group",
            },
        ),
        (
            "raycluster-complete-head-9s4x5",
            {"ray.io/node-type": "head", "ray.io/cluster": "raycluster-complete"},
        ),
        # A Helm Deployment of the legacy chart: a role, no cluster naming.
        ("ray-head-74d6c85dcc-r6jq6", {"ray.io/node-type": "head"}),
        ("spark-worker-7d9f8-x2x4q", {}),
    ],
)
def test_kuberay_pod_names_say_which_ray_node_a_pod_is(name: str, labels: dict[str, str]) -> None:
    assert _role_from_name(name, ["job-43n6os1dxr-2tzsh", "raycluster-complete"]) == labels


def test_pod_names_are_not_read_as_ray_roles_without_a_ray_cluster_in_the_paste() -> None:
    rows = "NAME                          READY   STATUS    RESTARTS   AGE\nspark-worker-7d9f8-x2x4q   1/1   Running   0   3d\n"
    snapshot = parse_paste(rows)
    assert snapshot.kubernetes is not None
    assert [p.labels for p in snapshot.kubernetes.pods] == [{}]


def test_pod_without_a_ray_node_at_its_ip_is_named() -> None:
    diagnosis = _diagnose("ray-worker-not-joined", "fires", "two-layer-get-pods-wide-list-nodes")
    first = diagnosis.findings[0]
    assert (first.rule, first.cause, first.subject.name) == (
        "ray-worker-not-joined",
        8,
        "raycluster-gpu-gpu-a100-worker-zr8xd",
    )
    assert first.params["pod_ip"] == "127.0.0.4"


def test_per_node_blocks_without_ips_are_counted_not_matched() -> None:
    """``ray status -v`` of Ray 2.x names nodes by id: no Pod can be paired, only counted."""
    diagnosis = _diagnose("ray-workers-missing-from-ray", "fires", "two-layer-get-pods-wide-ray-status-v")
    rules = [f.rule for f in diagnosis.findings]
    assert rules[0] == "ray-workers-missing-from-ray"
    assert "ray-worker-not-joined" not in rules
    assert diagnosis.findings[0].params["missing"] == "1"


def test_worker_restarting_unready_beside_an_initializing_rayjob_is_cause_8() -> None:
    diagnosis = _diagnose("ray-worker-running-unready", "fires", "worker-restarting-rayjob-initializing")
    first = diagnosis.findings[0]
    assert (first.cause, first.subject.name) == (8, "raycluster-gpu-gpu-a100-worker-zr8xd")
    assert any("RayJob nightly-eval Initializing" in e.text for e in first.evidence)
    assert first.params["head_pod"] == "raycluster-gpu-head-8x2kq"


def test_crashing_head_with_workers_waiting_is_the_head_first() -> None:
    diagnosis = _diagnose("ray-head-not-ready", "fires", "head-crashloop-workers-wait-gcs")
    first = diagnosis.findings[0]
    assert (first.rule, first.cause) == ("ray-head-not-ready", 8)
    assert "CrashLoopBackOff" in first.params["reason"]
    head_findings = [f.rule for f in diagnosis.findings if f.subject.name == "raycluster-gpu-head-8x2kq"]
    assert head_findings == ["ray-head-not-ready"]


def test_crashing_head_alone_stays_an_application_failure() -> None:
    diagnosis = _diagnose("ray-head-not-ready", "quiet", "head-crashloop-workers-running")
    assert diagnosis.findings[0].rule == "pod-crash-loop"


def test_gpus_given_to_a_pod_but_not_in_rays_totals_are_cause_4_with_the_pods_figures() -> None:
    diagnosis = _diagnose("ray-gpus-missing-from-ray-total", "fires", "two-layer-describe-worker-ray-status")
    first = diagnosis.findings[0]
    assert (first.rule, first.cause) == ("ray-gpus-missing-from-ray-total", 4)
    assert first.params["per_pod"] == "raycluster-gpu-gpu-a100-worker-h6b5n: 4"
    assert first.params["ray_gpus"] == "0"


def _gpu_pod(name: str, ip: str) -> Pod:
    return Pod(
        name=name,
        namespace="ml",
        phase="Running",
        pod_ip=ip,
        labels={"ray.io/node-type": "worker", "ray.io/cluster": "rc"},
        containers=[ContainerSpec(name="ray-worker", limits={"nvidia.com/gpu": 4.0})],
    )


def test_gpus_of_a_worker_that_never_joined_are_not_blamed_on_registration() -> None:
    """Two 4-GPU workers run, Ray counts the head and one worker with 4 GPUs: one never joined
    (cause 8), and the GPUs Ray has are all the joined one holds, so there is no cause 4."""
    snapshot = Snapshot(
        origin="paste",
        kubernetes=KubernetesState(
            nodes_complete=False,
            pods=[_gpu_pod("rc-gpu-worker-aaaaa", "10.0.0.3"), _gpu_pod("rc-gpu-worker-bbbbb", "10.0.0.4")],
        ),
        ray=RayState(node_count=2, totals={"CPU": 3.0, "GPU": 4.0}),
    )
    rules = [f.rule for f in classify(snapshot).findings]
    assert "ray-workers-missing-from-ray" in rules
    assert "ray-gpus-missing-from-ray-total" not in rules
    fewer = replace(snapshot, ray=RayState(node_count=2, totals={"CPU": 3.0, "GPU": 1.0}))
    assert "ray-gpus-missing-from-ray-total" in [f.rule for f in classify(fewer).findings]


def test_another_rayclusters_pending_workers_are_not_this_clusters_findings() -> None:
    """The collector lists Pending Pods cluster-wide; diagnosing RayCluster ``rc`` must not name the
    workers of ``other`` (seen on the real control plane, two RayClusters in two namespaces)."""
    other = Pod(
        name="other-gpu-worker-ccccc",
        namespace="batch",
        phase="Pending",
        labels={"ray.io/node-type": "worker", "ray.io/cluster": "other"},
        containers=[ContainerSpec(name="ray-worker", requests={"nvidia.com/gpu": 8.0})],
        conditions=[
            Condition(
                type="PodScheduled",
                status="False",
                reason="Unschedulable",
                message="0/2 nodes are available: 2 Insufficient nvidia.com/gpu.",
            )
        ],
    )
    mine = _gpu_pod("rc-gpu-worker-aaaaa", "10.0.0.3")

    def subjects(cluster: str | None) -> set[str | None]:
        snapshot = Snapshot(
            origin="paste",
            cluster=cluster,
            kubernetes=KubernetesState(
                nodes_complete=False,
                pods=[mine, other],
                events=[
                    Event(
                        namespace="batch",
                        object_kind="Pod",
                        object_name=other.name,
                        type="Warning",
                        reason="FailedScheduling",
                        message="0/2 nodes are available: 2 Insufficient nvidia.com/gpu.",
                    )
                ],
            ),
        )
        return {f.subject.name for f in classify(snapshot).findings if f.subject.kind == "Pod"}

    assert "other-gpu-worker-ccccc" in subjects(None)
    assert "other-gpu-worker-ccccc" not in subjects("rc")
