"""The real control plane of tests/support/controlplane.py, end to end: the words raydiag reads in a
FailedScheduling event come from the real kube-scheduler judging a Node, and the KubeRay operator
really turns a RayCluster into a head pod that the same scheduler then refuses, under the RBAC of
its release's ClusterRole.

No kubelet runs: the Node is an object created through the API, which is all the scheduler judges.
The first run builds the binaries (tools/controlplane/build.sh; 10-15 minutes cold on two shared
cores), later runs reuse them from ~/.cache/raydiag/controlplane/.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.support.controlplane import ControlPlane
from tests.support.waiting import eventually

# In the real-Ray group: both start many processes on loopback ports, and on two shared cores a Ray
# cluster started beside the control plane once failed its start; one of them at a time.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("real-ray")]

NODE_CPU = "4"
TOO_MUCH_CPU = "64"


@pytest.fixture(scope="module")
def core(plane: ControlPlane) -> Any:
    from kubernetes import client

    plane.add_node("node-a", {"cpu": NODE_CPU, "memory": "16Gi", "pods": "110"})
    return client.CoreV1Api(plane.client())


def failed_scheduling(core: Any, namespace: str, pod: str) -> list[Any]:
    events = core.list_namespaced_event(
        namespace, field_selector=f"involvedObject.name={pod},reason=FailedScheduling"
    ).items
    return list(events)


def wait_for_failed_scheduling(core: Any, namespace: str, pod: str) -> Any:
    assert eventually(lambda: bool(failed_scheduling(core, namespace, pod)), timeout_s=90, poll_s=0.5), (
        f"no FailedScheduling event for {namespace}/{pod}"
    )
    return failed_scheduling(core, namespace, pod)[0]


def test_scheduler_reports_insufficient_cpu_for_a_pod_bigger_than_any_node(
    plane: ControlPlane, core: Any
) -> None:
    plane.namespace("smoke")
    container = {
        "name": "work",
        "image": "registry.k8s.io/pause:3.10",
        "resources": {"requests": {"cpu": TOO_MUCH_CPU}},
    }
    core.create_namespaced_pod(
        "smoke", body={"metadata": {"name": "too-big"}, "spec": {"containers": [container]}}
    )

    event = wait_for_failed_scheduling(core, "smoke", "too-big")

    assert event.type == "Warning"
    assert event.reporting_component == "default-scheduler"
    assert event.message.startswith("0/1 nodes are available: 1 Insufficient cpu."), event.message
    condition = {c.type: c for c in core.read_namespaced_pod("too-big", "smoke").status.conditions}
    assert condition["PodScheduled"].status == "False"
    assert condition["PodScheduled"].reason == "Unschedulable"


def test_operator_creates_the_head_pod_of_a_raycluster_and_the_scheduler_refuses_it(
    plane: ControlPlane, core: Any
) -> None:
    from kubernetes import client

    plane.namespace("ray")
    head = {
        "name": "ray-head",
        "image": "rayproject/ray:2.9.3",
        "resources": {
            "requests": {"cpu": TOO_MUCH_CPU, "memory": "1Gi"},
            "limits": {"cpu": TOO_MUCH_CPU, "memory": "1Gi"},
        },
    }
    cluster = {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": "demo"},
        "spec": {"headGroupSpec": {"rayStartParams": {}, "template": {"spec": {"containers": [head]}}}},
    }
    client.CustomObjectsApi(plane.client()).create_namespaced_custom_object(
        "ray.io", "v1", "ray", "rayclusters", cluster
    )

    def head_pods() -> list[Any]:
        selector = "ray.io/cluster=demo,ray.io/node-type=head"
        return list(core.list_namespaced_pod("ray", label_selector=selector).items)

    assert eventually(lambda: bool(head_pods()), timeout_s=90, poll_s=0.5), (
        f"the operator made no head pod:\n{plane.tail('ray-operator')}"
    )
    pod = head_pods()[0]
    assert pod.metadata.owner_references[0].kind == "RayCluster"

    event = wait_for_failed_scheduling(core, "ray", pod.metadata.name)

    assert "1 Insufficient cpu" in event.message, event.message


def test_rbac_holds_the_operator_to_the_cluster_role_of_its_release(plane: ControlPlane, core: Any) -> None:
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException

    operator = client.CoreV1Api(plane.client("operator"))
    assert operator.list_namespaced_pod("ray").items is not None  # granted by KubeRay's ClusterRole
    with pytest.raises(ApiException) as refused:
        operator.delete_node("node-a")  # not granted: nothing in the role touches Nodes

    assert refused.value.status == 403
    status = json.loads(refused.value.body or "{}")
    assert status["reason"] == "Forbidden"
    assert 'User "kuberay-operator" cannot delete resource "nodes"' in status["message"], status["message"]
