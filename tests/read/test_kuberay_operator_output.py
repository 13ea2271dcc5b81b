"""What the KubeRay operator and Serve's controller write is read the same in every shape it is pasted in.

The texts are the rule cases under ``tests/cases/`` (printed by ``tools/inventory/instantiate.py``
from the message inventory, in the tools' own layouts); these tests pin what the readers make of
them, the rule cases what the rules then say.
"""

from __future__ import annotations

from pathlib import Path

from bot.collect.paste import parse_paste
from bot.snapshot.model import Snapshot

CASES = Path(__file__).resolve().parents[1] / "cases"


def read(rule: str, outcome: str, name: str) -> Snapshot:
    return parse_paste((CASES / rule / outcome / f"{name}.txt").read_text())


def test_describe_events_take_their_kind_from_the_kuberay_recorder() -> None:
    # `kubectl describe` names the controller's event recorder where `get events` names the object.
    for name, rule in (
        ("invalid-raycluster-spec-describe", "kuberay-operator-failed-event"),
        ("failed-to-create-worker-pod-webhook-describe", "kuberay-pod-refused-by-admission"),
        ("failed-to-create-worker-pod-rbac-describe", "kuberay-operator-error"),
    ):
        snapshot = read(rule, "fires", name)
        assert snapshot.kubernetes is not None
        kinds = {e.object_kind for e in snapshot.kubernetes.events}
        assert kinds == {"RayCluster"}, (name, kinds)


def test_a_status_cut_to_head_pod_ready_is_a_rayclusters() -> None:
    snapshot = read("ray-head-condition-not-ready", "fires", "kuberay-head-pod-ready-containers-not-ready")
    assert snapshot.kubernetes is not None
    [cluster] = snapshot.kubernetes.rayclusters
    [condition] = cluster.conditions
    assert (condition.type, condition.status, condition.reason) == (
        "HeadPodReady",
        "False",
        "ContainersNotReady",
    )


def test_a_status_cut_to_a_validation_failure_is_a_rayservices() -> None:
    snapshot = read("rayservice-spec-invalid", "fires", "kuberay-1-6-ready-validation-failed")
    assert snapshot.kubernetes is not None
    [service] = snapshot.kubernetes.rayservices
    assert [c.reason for c in service.conditions] == ["ValidationFailed"]
    assert not snapshot.kubernetes.rayclusters


def test_a_rayservice_status_cut_to_its_applications_keeps_them() -> None:
    snapshot = read("ray-serve-unhealthy", "fires", "rayservice-status-cut-to-applications")
    assert snapshot.kubernetes is not None
    [service] = snapshot.kubernetes.rayservices
    assert service.app_statuses == {"llm": "DEPLOY_FAILED"}


def test_serve_pending_with_the_gpu_left_out_of_available_is_not_called_held() -> None:
    # ray.available_resources() drops a resource with nothing free: used up or never there.
    snapshot = read("ray-resources-claimed", "quiet", "serve-pending-gpu-left-out-of-available")
    assert snapshot.ray is not None
    [demand] = snapshot.ray.demands
    assert demand.shape == {"CPU": 1.0, "GPU": 1.0}
    assert demand.listed and not demand.reported_held
