"""The stand-in kubelet of tests/support/kubelet.py on the real control plane: a RayCluster applied to
the real API server becomes, through the real KubeRay operator and the real kube-scheduler, Pods
on kubelet-registered Nodes, and those Pods a real Ray cluster (head + one GPU worker) on loopback.
Also: a scenario's stuck container gets the kubelet's waiting reason and events.
"""

from __future__ import annotations

from typing import Any

import pytest

from bot.demo.local_ray import dig_list, http_json
from tests.support.controlplane import ControlPlane, pid_alive
from tests.support.kubelet import KubeletNode, StandInKubelet, Waiting, ray_start_flags
from tests.support.waiting import eventually

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("real-ray")]

GPU_LABELS = {"nvidia.com/gpu.present": "true", "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"}
NODES = [
    KubeletNode("cpu-node", {"cpu": "4", "memory": "16Gi", "pods": "110"}),
    KubeletNode(
        "gpu-node",
        {"cpu": "4", "memory": "16Gi", "pods": "110", "nvidia.com/gpu": "1"},
        labels=GPU_LABELS,
    ),
]


def raycluster(name: str) -> dict[str, Any]:
    def container(name: str, limits: dict[str, Any]) -> dict[str, Any]:
        return {"name": name, "image": "rayproject/ray:2.9.3", "resources": {"limits": limits}}

    worker_limits = {"cpu": "1", "memory": "2Gi", "nvidia.com/gpu": 1}
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": name},
        "spec": {
            "headGroupSpec": {
                "rayStartParams": {},
                "template": {"spec": {"containers": [container("ray-head", {"cpu": "1", "memory": "2Gi"})]}},
            },
            "workerGroupSpecs": [
                {
                    "groupName": "gpu",
                    "replicas": 1,
                    "minReplicas": 1,
                    "maxReplicas": 1,
                    "rayStartParams": {"num-gpus": "1"},
                    "template": {"spec": {"containers": [container("ray-worker", worker_limits)]}},
                }
            ],
        },
    }


def test_ray_start_flags_are_read_from_the_operators_shell_line() -> None:
    container = {
        "command": ["/bin/bash", "-c", "--"],
        "args": [
            "ulimit -n 65536; ray start --head  --block  --num-cpus=1 --resources='{\"TPU\": 2}' ; echo"
        ],
    }

    assert ray_start_flags(container) == {"head": "", "block": "", "num-cpus": "1", "resources": '{"TPU": 2}'}


def test_a_raycluster_becomes_a_real_ray_cluster_on_kubelet_nodes(plane: ControlPlane) -> None:
    from kubernetes import client

    plane.namespace("ray")
    core: Any = client.CoreV1Api(plane.client())
    kubelet = StandInKubelet(plane, NODES)
    with kubelet:
        node = core.read_node("gpu-node")
        assert node.status.allocatable["nvidia.com/gpu"] == "1"
        assert node.metadata.labels["nvidia.com/gpu.present"] == "true"
        assert not node.spec.taints

        client.CustomObjectsApi(plane.client()).create_namespaced_custom_object(
            "ray.io", "v1", "ray", "rayclusters", raycluster("demo")
        )

        def pods() -> list[Any]:
            return list(core.list_namespaced_pod("ray", label_selector="ray.io/cluster=demo").items)

        def all_ready() -> bool:
            found = pods()
            return len(found) == 2 and all(
                p.status.phase == "Running"
                and {c.type: c.status for c in p.status.conditions or []}.get("Ready") == "True"
                for p in found
            )

        assert eventually(all_ready, timeout_s=240, poll_s=1), (
            f"pods not Running/Ready: {[(p.metadata.name, p.status.phase) for p in pods()]}; "
            f"kubelet errors: {kubelet.errors}"
        )
        by_type = {p.metadata.labels["ray.io/node-type"]: p for p in pods()}
        assert by_type["worker"].spec.node_name == "gpu-node"  # the only Node with nvidia.com/gpu
        for pod in by_type.values():
            assert pod.status.pod_ip.startswith("127.0.0.")
            assert pod.status.host_ip.startswith("127.0.")

        (cluster,) = kubelet.clusters.values()
        assert cluster.local.head_ip == by_type["head"].status.pod_ip
        status, body = http_json(cluster.local.dashboard_url, "/api/v0/nodes?limit=100", timeout=20)
        assert status == 200, body
        alive = [n for n in dig_list(body, "data", "result", "result") if n.get("state") == "ALIVE"]
        assert {n["node_ip"] for n in alive} == {p.status.pod_ip for p in by_type.values()}
        assert sum(n["resources_total"].get("GPU", 0) for n in alive) == 1

        head_events = core.list_namespaced_event(
            "ray", field_selector=f"involvedObject.name={by_type['head'].metadata.name}"
        ).items
        # The scheduler writes events.k8s.io/v1 Events (no ``source``), the kubelet core/v1 ones.
        by_reason = {(e.reason, e.reporting_component): e for e in head_events}
        scheduled = by_reason[("Scheduled", "default-scheduler")].message
        head = by_type["head"]
        assert scheduled == f"Successfully assigned ray/{head.metadata.name} to {head.spec.node_name}"
        assert by_reason[("Started", "kubelet")].message == "Started container ray-head"
        assert by_reason[("Created", "kubelet")].message == "Created container: ray-head"
        assert by_reason[("Started", "kubelet")].involved_object.field_path == "spec.containers{ray-head}"
        started = kubelet.started_pids()
        assert started

    assert kubelet.errors == []
    assert not [pid for pid in started if pid_alive(pid)]
    assert kubelet.stragglers() == []


def test_stuck_pods_and_a_cordoned_gpu_node_as_a_scenario_asks(plane: ControlPlane) -> None:
    from kubernetes import client

    plane.namespace("stuck")
    core: Any = client.CoreV1Api(plane.client())
    gpu_taint = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
    nodes = [
        KubeletNode("pull-node", {"cpu": "2", "memory": "4Gi", "pods": "10"}, labels={"pool": "pull"}),
        KubeletNode(
            "cordoned-gpu",
            {"cpu": "8", "memory": "32Gi", "pods": "10", "nvidia.com/gpu": "1"},
            labels=GPU_LABELS,
            taints=(gpu_taint,),
            cordoned=True,
        ),
    ]
    waiting = {"bad-image": Waiting("ImagePullBackOff"), "crash": Waiting("CrashLoopBackOff")}
    with StandInKubelet(plane, nodes, waiting=waiting, pod_ip_first=60):
        gpu = core.read_node("cordoned-gpu")
        assert gpu.spec.unschedulable is True
        assert [(t.key, t.effect) for t in gpu.spec.taints] == [("nvidia.com/gpu", "NoSchedule")]
        for name, extra in (
            ("bad-image", {"nodeSelector": {"pool": "pull"}}),
            ("crash", {"nodeSelector": {"pool": "pull"}}),
            ("wants-gpu", {"tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}]}),
        ):
            container: dict[str, Any] = {"name": "app", "image": f"example.invalid/{name}:1"}
            if name == "wants-gpu":
                container["resources"] = {"limits": {"nvidia.com/gpu": "1"}}
            core.create_namespaced_pod(
                "stuck", body={"metadata": {"name": name}, "spec": {"containers": [container], **extra}}
            )

        def waiting_reason(name: str) -> str | None:
            statuses = core.read_namespaced_pod(name, "stuck").status.container_statuses or []
            return statuses[0].state.waiting.reason if statuses and statuses[0].state.waiting else None

        assert eventually(lambda: waiting_reason("bad-image") == "ImagePullBackOff", timeout_s=60, poll_s=0.5)
        assert eventually(lambda: waiting_reason("crash") == "CrashLoopBackOff", timeout_s=60, poll_s=0.5)
        pulled = core.read_namespaced_pod("bad-image", "stuck")
        assert pulled.status.phase == "Pending"
        assert pulled.status.pod_ip.startswith("127.0.0.")
        crash = core.read_namespaced_pod("crash", "stuck")
        assert crash.status.phase == "Running"
        assert crash.status.container_statuses[0].restart_count == 1
        assert crash.status.container_statuses[0].last_state.terminated.exit_code == 1

        def kubelet_events(name: str) -> list[tuple[str, str]]:
            events = core.list_namespaced_event("stuck", field_selector=f"involvedObject.name={name}").items
            return [(e.reason, e.message) for e in events if e.source.component == "kubelet"]

        pull = kubelet_events("bad-image")
        assert ("Pulling", 'Pulling image "example.invalid/bad-image:1"') in pull
        assert ("BackOff", 'Back-off pulling image "example.invalid/bad-image:1"') in pull
        assert ("Failed", "Error: ImagePullBackOff") in pull
        backoff = [message for reason, message in kubelet_events("crash") if reason == "BackOff"]
        assert backoff == [
            f"Back-off restarting failed container app in pod crash_stuck({crash.metadata.uid})"
        ]

        def refused() -> list[Any]:
            selector = "involvedObject.name=wants-gpu,reason=FailedScheduling"
            return list(core.list_namespaced_event("stuck", field_selector=selector).items)

        # The real scheduler sees the cordon the kubelet's scenario put on the only GPU Node.
        assert eventually(lambda: bool(refused()), timeout_s=60, poll_s=0.5)
        assert "1 node(s) were unschedulable" in refused()[0].message, refused()[0].message
