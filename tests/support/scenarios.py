"""Incident scenarios on the realistic cluster, each registered against the rule it exercises.

Each builder (``@scenario``) is named by a case file,
``tests/cases/<rule-id>/(fires|quiet)/<builder>.scenario.yaml``, beside that rule's pasted-text
cases: a ``fires`` scenario changes the healthy cluster by one fault and must make the rule fire on
the file's ``subject``; a ``quiet`` one is a near miss (the same shape without the fault) where the
rule must stay silent. tests/rules/test_rule_cases.py walks them.

Every FailedScheduling message below is written as kube-scheduler would print it for the nodes of
that scenario, and the fit explainer is checked against each one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from bot.render.rules_doc import SCENARIO_SUFFIX
from tests.support import k8s
from tests.support.cluster import (
    CLUSTER,
    GPU_TAINT,
    GPU_WORKERS,
    HEAD,
    NS,
    Bundle,
    gpu_worker_container,
    healthy,
    node_id,
    ray_pod,
)

A100 = {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB"}
CP_TAINT = "1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }"
PREEMPTION = "preemption: 0/5 nodes are available: 5 Preemption is not helpful for scheduling."


CASE_DIR = Path(__file__).resolve().parents[1] / "cases"
# A rule case that is a scenario: ``tests/cases/<rule>/(fires|quiet)/<builder>.scenario.yaml`` names
# the builder below (``scenario:``) and, for a firing case, the subject the rule must report.


@dataclass(frozen=True)
class Case:
    rule: str
    expect: str  # "fires" | "quiet"
    name: str
    build: Callable[[], Bundle]
    subject: str | None = None  # the subject name a firing rule must report


BUILDERS: dict[str, Callable[[], Bundle]] = {}


def scenario(build: Callable[[], Bundle]) -> Callable[[], Bundle]:
    """Register a builder that a case file under tests/cases names."""
    BUILDERS[build.__name__] = build
    return build


PENDING = f"{CLUSTER}-gpu-a100-worker-p2x7c"


def add_pending_gpu_worker(
    bundle: Bundle,
    message: str | None,
    *,
    gpus: int = 4,
    selector: dict[str, str] | None = None,
    tolerate: bool = True,
    name: str = PENDING,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A third GPU worker that the autoscaler asked for and the scheduler cannot place."""
    container = gpu_worker_container(gpus)
    body = ray_pod(
        name,
        "worker",
        "gpu-a100",
        container,
        node_name=None,
        ip=None,
        tolerations=[k8s.GPU_TOLERATION] if tolerate else None,
        node_selector=A100 if selector is None else selector,
    )
    body["spec"].update(extra or {})
    if message:
        body["status"] = k8s.pending_status(message)
        bundle.items("events").append(k8s.event(NS, "Pod", name, "FailedScheduling", message, count=42))
    bundle.items("pods").append(body)
    return body


def drop_gpu_workers(bundle: Bundle) -> None:
    """Scale the GPU group to zero: both A100 nodes empty."""
    for name in GPU_WORKERS:
        bundle.remove("pods", name)
    assert bundle.ray_state is not None
    ids = {node_id(n) for n in GPU_WORKERS}
    bundle.ray_state["nodes"] = [n for n in bundle.ray_nodes() if n["node_id"] not in ids]
    bundle.ray_state["actors"] = []


def set_gpu_request(bundle: Bundle, pod_name: str, gpus: int) -> None:
    body = bundle.find("pods", pod_name)
    resources = body["spec"]["containers"][0]["resources"]
    resources["limits"]["nvidia.com/gpu"] = str(gpus)
    resources["requests"]["nvidia.com/gpu"] = str(gpus)


# --- cause 1 ---------------------------------------------------------------------------------


@scenario
def third_gpu_worker_no_free_gpu() -> Bundle:
    bundle = healthy()
    add_pending_gpu_worker(
        bundle,
        f"0/5 nodes are available: {CP_TAINT}, 2 Insufficient nvidia.com/gpu, "
        f"2 node(s) didn't match Pod's node affinity/selector. {PREEMPTION}",
    )
    return bundle


@scenario
def gpu_worker_fits_after_scale_down() -> Bundle:
    bundle = healthy()
    drop_gpu_workers(bundle)
    add_pending_gpu_worker(bundle, None)
    return bundle


@scenario
def four_gpus_free_in_two_halves() -> Bundle:
    bundle = healthy()
    for name in GPU_WORKERS:
        set_gpu_request(bundle, name, 2)
    add_pending_gpu_worker(
        bundle,
        f"0/5 nodes are available: {CP_TAINT}, 2 Insufficient nvidia.com/gpu, "
        f"2 node(s) didn't match Pod's node affinity/selector. {PREEMPTION}",
    )
    return bundle


@scenario
def no_gpu_free_anywhere() -> Bundle:
    return third_gpu_worker_no_free_gpu()


@scenario
def eight_gpus_on_four_gpu_nodes() -> Bundle:
    bundle = healthy()
    drop_gpu_workers(bundle)
    add_pending_gpu_worker(
        bundle,
        f"0/5 nodes are available: {CP_TAINT}, 2 Insufficient nvidia.com/gpu, "
        f"2 node(s) didn't match Pod's node affinity/selector. {PREEMPTION}",
        gpus=8,
    )
    return bundle


@scenario
def four_gpus_on_four_gpu_nodes_busy() -> Bundle:
    return third_gpu_worker_no_free_gpu()


QUOTA_MESSAGE = (
    f'Error creating pod: pods "{CLUSTER}-gpu-a100-worker-9dfk2" is forbidden: exceeded quota: gpu-quota, '
    "requested: requests.nvidia.com/gpu=4, used: requests.nvidia.com/gpu=8, limited: requests.nvidia.com/gpu=8"
)


@scenario
def worker_creation_refused_by_quota() -> Bundle:
    bundle = healthy()
    bundle.items("events").append(
        k8s.event(
            NS,
            "RayCluster",
            CLUSTER,
            "FailedToCreateWorkerPod",
            QUOTA_MESSAGE,
            component="raycluster-controller",
            api_version="ray.io/v1",
            count=17,
        )
    )
    bundle.items("resource_quotas").append(
        {
            "apiVersion": "v1",
            "kind": "ResourceQuota",
            "metadata": {"name": "gpu-quota", "namespace": NS},
            "spec": {"hard": {"requests.nvidia.com/gpu": "8"}},
            "status": {"hard": {"requests.nvidia.com/gpu": "8"}, "used": {"requests.nvidia.com/gpu": "8"}},
        }
    )
    return bundle


@scenario
def quota_with_room() -> Bundle:
    bundle = healthy()
    bundle.items("resource_quotas").append(
        {
            "apiVersion": "v1",
            "kind": "ResourceQuota",
            "metadata": {"name": "gpu-quota", "namespace": NS},
            "status": {"hard": {"requests.nvidia.com/gpu": "16"}, "used": {"requests.nvidia.com/gpu": "8"}},
        }
    )
    return bundle


def _karpenter(message: str) -> Bundle:
    bundle = healthy()
    drop_gpu_workers(bundle)
    add_pending_gpu_worker(bundle, None, gpus=8)
    bundle.items("events").append(
        k8s.event(NS, "Pod", PENDING, "FailedScheduling", message, component="karpenter", count=9)
    )
    return bundle


KARPENTER_NO_TYPE = (
    'Failed to schedule pod, incompatible with nodepool "gpu", daemonset overhead={"cpu":"180m","memory":"120Mi",'
    '"pods":"5"}, no instance type satisfied resources {"cpu":"24180m","memory":"160Gi","nvidia.com/gpu":"8",'
    '"pods":"6"} and requirements karpenter.k8s.aws/instance-family In [g5], karpenter.sh/capacity-type In '
    "[on-demand], karpenter.sh/nodepool In [gpu], kubernetes.io/arch In [amd64]"
)
KARPENTER_TAINT = (
    'Failed to schedule pod, incompatible with nodepool "gpu", daemonset overhead={"cpu":"180m","memory":"120Mi",'
    '"pods":"5"}, did not tolerate nvidia.com/gpu=true:NoSchedule; incompatible with nodepool "default", '
    'daemonset overhead={"cpu":"180m","memory":"120Mi","pods":"5"}, incompatible requirements, key '
    "nvidia.com/gpu.product, nvidia.com/gpu.product In [NVIDIA-A100-SXM4-40GB] not in nvidia.com/gpu.product "
    "DoesNotExist"
)


@scenario
def karpenter_has_no_eight_gpu_type() -> Bundle:
    return _karpenter(KARPENTER_NO_TYPE)


@scenario
def karpenter_blocked_by_taint_only() -> Bundle:
    return _karpenter(KARPENTER_TAINT)


# --- cause 2 ---------------------------------------------------------------------------------


@scenario
def gpu_worker_without_toleration() -> Bundle:
    bundle = healthy()
    drop_gpu_workers(bundle)
    add_pending_gpu_worker(
        bundle,
        f"0/5 nodes are available: {CP_TAINT}, 2 node(s) didn't match Pod's node affinity/selector, "
        f"2 node(s) had untolerated taint {{nvidia.com/gpu: present}}. {PREEMPTION}",
        tolerate=False,
    )
    return bundle


@scenario
def gpu_worker_with_toleration() -> Bundle:
    return gpu_worker_fits_after_scale_down()


SPOT = f"{CLUSTER}-cpu-workers-worker-zz81k"


@scenario
def worker_selects_a_nodepool_that_does_not_exist() -> Bundle:
    bundle = healthy()
    body = ray_pod(
        SPOT,
        "worker",
        "cpu-workers",
        k8s.container("ray-worker", "rayproject/ray:2.9.0-py310", limits={"cpu": "4", "memory": "16Gi"}),
        node_name=None,
        ip=None,
        node_selector={"cloud.google.com/gke-nodepool": "cpu-spot-pool"},
    )
    message = (
        f"0/5 nodes are available: {CP_TAINT}, 2 node(s) didn't match Pod's node affinity/selector, "
        f"2 node(s) had untolerated taint {{nvidia.com/gpu: present}}. {PREEMPTION}"
    )
    body["status"] = k8s.pending_status(message)
    bundle.items("pods").append(body)
    bundle.items("events").append(k8s.event(NS, "Pod", SPOT, "FailedScheduling", message, count=12))
    return bundle


@scenario
def worker_selects_an_existing_nodepool() -> Bundle:
    bundle = healthy()
    body = ray_pod(
        SPOT,
        "worker",
        "cpu-workers",
        k8s.container("ray-worker", "rayproject/ray:2.9.0-py310", limits={"cpu": "4", "memory": "16Gi"}),
        node_name=None,
        ip=None,
        node_selector={"cloud.google.com/gke-nodepool": "cpu-pool"},
    )
    bundle.items("pods").append(body)
    return bundle


@scenario
def worker_selects_a100_80gb_label_that_no_node_has() -> Bundle:
    bundle = healthy()
    drop_gpu_workers(bundle)
    add_pending_gpu_worker(
        bundle,
        f"0/5 nodes are available: {CP_TAINT}, 4 node(s) didn't match Pod's node affinity/selector. {PREEMPTION}",
        selector={"nvidia.com/gpu.product": "NVIDIA-A100-80GB"},
    )
    return bundle


@scenario
def worker_selects_the_exact_product_label() -> Bundle:
    return gpu_worker_fits_after_scale_down()


@scenario
def both_gpu_nodes_cordoned_for_upgrade() -> Bundle:
    bundle = healthy()
    drop_gpu_workers(bundle)
    for name in ("gpu-a100-1", "gpu-a100-2"):
        node = bundle.find("nodes", name)
        node["spec"]["unschedulable"] = True
        node["spec"]["taints"] = [
            GPU_TAINT,
            {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule", "timeAdded": k8s.T2},
        ]
    add_pending_gpu_worker(
        bundle,
        f"0/5 nodes are available: {CP_TAINT}, 2 node(s) didn't match Pod's node affinity/selector, "
        f"2 node(s) were unschedulable. {PREEMPTION}",
    )
    return bundle


@scenario
def one_cordoned_node_is_not_needed() -> Bundle:
    bundle = healthy()
    bundle.find("nodes", "cpu-node-2")["spec"]["unschedulable"] = True
    return bundle


@scenario
def worker_waits_for_unbound_checkpoint_claim() -> Bundle:
    bundle = healthy()
    drop_gpu_workers(bundle)
    add_pending_gpu_worker(
        bundle,
        "0/5 nodes are available: pod has unbound immediate PersistentVolumeClaims. "
        "preemption: 0/5 nodes are available: 5 Preemption is not helpful for scheduling.",
        extra={"volumes": [{"name": "ckpt", "persistentVolumeClaim": {"claimName": "checkpoints"}}]},
    )
    bundle.items("pvcs").append(
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": "checkpoints", "namespace": NS},
            "spec": {
                "accessModes": ["ReadWriteMany"],
                "storageClassName": "filestore-premium",
                "resources": {"requests": {"storage": "1Ti"}},
            },
            "status": {"phase": "Pending"},
        }
    )
    return bundle


@scenario
def worker_with_bound_claim() -> Bundle:
    bundle = worker_waits_for_unbound_checkpoint_claim()
    bundle.find("pvcs", "checkpoints")["status"]["phase"] = "Bound"
    bundle.kubernetes["events"] = [e for e in bundle.items("events") if e["reason"] != "FailedScheduling"]
    bundle.find("pods", PENDING)["status"] = k8s.pending_status()
    return bundle


@scenario
def anti_affinity_keeps_workers_apart_on_full_pool() -> Bundle:
    bundle = healthy()
    for name in GPU_WORKERS:
        set_gpu_request(bundle, name, 2)
    add_pending_gpu_worker(
        bundle,
        f"0/5 nodes are available: {CP_TAINT}, 2 node(s) didn't match Pod's node affinity/selector, "
        f"2 node(s) didn't match pod anti-affinity rules. {PREEMPTION}",
        gpus=2,
        extra={
            "affinity": {
                "podAntiAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "labelSelector": {"matchLabels": {"ray.io/group": "gpu-a100"}},
                            "topologyKey": "kubernetes.io/hostname",
                        }
                    ]
                }
            }
        },
    )
    return bundle


@scenario
def anti_affinity_satisfied_on_empty_pool() -> Bundle:
    bundle = anti_affinity_keeps_workers_apart_on_full_pool()
    drop_gpu_workers(bundle)
    bundle.kubernetes["events"] = [e for e in bundle.items("events") if e["reason"] != "FailedScheduling"]
    return bundle


def _ca_event(message: str) -> Bundle:
    bundle = third_gpu_worker_no_free_gpu()
    bundle.items("events").append(
        k8s.event(
            NS,
            "Pod",
            PENDING,
            "NotTriggerScaleUp",
            message,
            type_="Normal",
            component="cluster-autoscaler",
            count=31,
        )
    )
    return bundle


@scenario
def autoscaler_groups_do_not_match_selector() -> Bundle:
    return _ca_event("pod didn't trigger scale-up: 3 node(s) didn't match Pod's node affinity/selector")


@scenario
def autoscaler_scaled_up() -> Bundle:
    bundle = third_gpu_worker_no_free_gpu()
    bundle.items("events").append(
        k8s.event(
            NS,
            "Pod",
            PENDING,
            "TriggeredScaleUp",
            "pod triggered scale-up: [{https://www.googleapis.com/compute/v1/projects/ml-prod/zones/"
            "us-central1-a/instanceGroups/gke-ml-a100-pool-2f9a1c3e-grp 2->3 (max: 4)}]",
            type_="Normal",
            component="cluster-autoscaler",
        )
    )
    return bundle


@scenario
def scale_up_asked_pod_still_pending() -> Bundle:
    return autoscaler_scaled_up()


@scenario
def scale_up_delivered_pod_running() -> Bundle:
    bundle = healthy()
    worker = GPU_WORKERS[0]
    for reason, message in (
        ("TriggeredScaleUp", "pod triggered scale-up: [{gke-ml-a100-pool-2f9a1c3e-grp 1->2 (max: 4)}]"),
        (
            "Scheduled",
            f"Successfully assigned {NS}/{worker} to {bundle.find('pods', worker)['spec']['nodeName']}",
        ),
    ):
        bundle.items("events").append(
            k8s.event(NS, "Pod", worker, reason, message, type_="Normal", component="cluster-autoscaler")
        )
    return bundle


@scenario
def karpenter_nodepool_does_not_tolerate() -> Bundle:
    return _karpenter(KARPENTER_TAINT)


@scenario
def karpenter_capacity_message_only() -> Bundle:
    return _karpenter(KARPENTER_NO_TYPE)


# --- cause 3 ---------------------------------------------------------------------------------


def _silence_gpus(bundle: Bundle, node_name: str) -> None:
    node = bundle.find("nodes", node_name)
    for field in ("allocatable", "capacity"):
        node["status"][field].pop("nvidia.com/gpu", None)


@scenario
def device_plugin_gone_on_free_node() -> Bundle:
    bundle = healthy()
    bundle.remove("pods", GPU_WORKERS[1])
    bundle.kubernetes["device_plugin_pods"] = [
        p for p in bundle.items("device_plugin_pods") if p["spec"]["nodeName"] != "gpu-a100-2"
    ]
    _silence_gpus(bundle, "gpu-a100-2")
    add_pending_gpu_worker(
        bundle,
        f"0/5 nodes are available: {CP_TAINT}, 2 Insufficient nvidia.com/gpu, "
        f"2 node(s) didn't match Pod's node affinity/selector. {PREEMPTION}",
    )
    return bundle


@scenario
def gpus_advertised_but_busy() -> Bundle:
    return third_gpu_worker_no_free_gpu()


@scenario
def gpu_node_with_no_gpu_resource() -> Bundle:
    return device_plugin_gone_on_free_node()


@scenario
def gpu_nodes_advertise_gpus() -> Bundle:
    return healthy()


@scenario
def node_advertises_legacy_gpu_name() -> Bundle:
    bundle = healthy()
    _silence_gpus(bundle, "gpu-a100-2")
    node = bundle.find("nodes", "gpu-a100-2")
    for field in ("allocatable", "capacity"):
        node["status"][field]["alpha.kubernetes.io/nvidia-gpu"] = "4"
    return bundle


@scenario
def nodes_advertise_current_gpu_name() -> Bundle:
    return healthy()


@scenario
def device_plugin_crashing() -> Bundle:
    bundle = healthy()
    plugin = bundle.items("device_plugin_pods")[0]
    plugin["status"]["conditions"][2]["status"] = "False"
    statuses = plugin["status"]["containerStatuses"][0]
    statuses.update(
        ready=False,
        restartCount=12,
        state={
            "waiting": {"reason": "CrashLoopBackOff", "message": "back-off 5m0s restarting failed container"}
        },
        lastState={"terminated": {"reason": "Error", "exitCode": 1}},
    )
    return bundle


@scenario
def device_plugins_ready() -> Bundle:
    return healthy()


@scenario
def worker_asks_for_mig_slice_on_whole_gpu_nodes() -> Bundle:
    bundle = healthy()
    drop_gpu_workers(bundle)
    body = add_pending_gpu_worker(
        bundle,
        f"0/5 nodes are available: {CP_TAINT}, 2 Insufficient nvidia.com/mig-1g.10gb, "
        f"2 node(s) didn't match Pod's node affinity/selector. {PREEMPTION}",
    )
    resources = body["spec"]["containers"][0]["resources"]
    for part in ("limits", "requests"):
        resources[part].pop("nvidia.com/gpu")
        resources[part]["nvidia.com/mig-1g.10gb"] = "1"
    return bundle


@scenario
def worker_asks_for_advertised_resource() -> Bundle:
    return gpu_worker_fits_after_scale_down()


# --- cause 10 (Pods failing) -----------------------------------------------------------------


def _waiting(
    bundle: Bundle,
    pod_name: str,
    reason: str,
    message: str,
    *,
    restarts: int = 0,
    last: dict[str, Any] | None = None,
) -> None:
    body = bundle.find("pods", pod_name)
    status = body["status"]
    for condition in status.get("conditions", []):
        if condition["type"] in ("Ready", "ContainersReady"):
            condition["status"] = "False"
    container = status["containerStatuses"][0]
    container.update(
        ready=False,
        started=False,
        restartCount=restarts,
        state={"waiting": {"reason": reason, "message": message}},
        lastState=last or {},
    )


@scenario
def worker_image_tag_does_not_exist() -> Bundle:
    bundle = healthy()
    image = "rayproject/ray:2.9.0-py310-gpu-typo"
    bundle.find("pods", GPU_WORKERS[0])["spec"]["containers"][0]["image"] = image
    _waiting(bundle, GPU_WORKERS[0], "ImagePullBackOff", f'Back-off pulling image "{image}"')
    bundle.items("events").append(
        k8s.event(
            NS,
            "Pod",
            GPU_WORKERS[0],
            "Failed",
            f'Failed to pull image "{image}": rpc error: code = NotFound desc = failed to pull and unpack '
            f'image "docker.io/{image}": docker.io/{image}: not found',
            component="kubelet",
            count=6,
        )
    )
    return bundle


@scenario
def worker_images_pulled() -> Bundle:
    return healthy()


@scenario
def worker_oom_killed_in_a_loop() -> Bundle:
    bundle = healthy()
    _waiting(
        bundle,
        GPU_WORKERS[1],
        "CrashLoopBackOff",
        f"back-off 5m0s restarting failed container=ray-worker pod={GPU_WORKERS[1]}_{NS}",
        restarts=7,
        last={"terminated": {"reason": "OOMKilled", "exitCode": 137}},
    )
    return bundle


@scenario
def worker_restarted_once_and_recovered() -> Bundle:
    bundle = healthy()
    status = bundle.find("pods", GPU_WORKERS[1])["status"]["containerStatuses"][0]
    status.update(restartCount=1, lastState={"terminated": {"reason": "Error", "exitCode": 1}})
    return bundle


@scenario
def worker_missing_secret() -> Bundle:
    bundle = healthy()
    _waiting(bundle, GPU_WORKERS[0], "CreateContainerConfigError", 'secret "hf-token" not found')
    return bundle


@scenario
def worker_config_resolved() -> Bundle:
    return healthy()


# --- cause 8 ---------------------------------------------------------------------------------


def _drop_ray_node(bundle: Bundle, pod_name: str) -> None:
    bundle.ray_state["nodes"] = [n for n in bundle.ray_nodes() if n["node_id"] != node_id(pod_name)]  # type: ignore[index]
    bundle.ray_state["actors"] = [  # type: ignore[index]
        a
        for a in bundle.ray_state["actors"]
        if a["node_id"] != node_id(pod_name)  # type: ignore[index]
    ]


GCS_LOG = [
    "[2026-11-30 09:41:12,511 W 8 8] gcs_rpc_client.h:151: Failed to connect to GCS at address "
    f"{CLUSTER}-head-svc.{NS}.svc.cluster.local:6379 within 5 seconds.",
    "[2026-11-30 09:41:42,514 W 8 8] gcs_client.cc:183: Failed to get cluster ID from GCS server: TimedOut: "
    "Timed out while waiting for GCS to become available.",
]


@scenario
def gpu_worker_runs_but_never_joined() -> Bundle:
    bundle = healthy()
    _drop_ray_node(bundle, GPU_WORKERS[1])
    return bundle


@scenario
def every_worker_joined() -> Bundle:
    return healthy()


@scenario
def worker_log_cannot_reach_gcs() -> Bundle:
    """The Ray layer could not be read, so the log line is the only sign of the broken link."""
    bundle = gpu_worker_runs_but_never_joined()
    bundle.ray_state = None
    bundle.items("logs").append(
        {"pod": GPU_WORKERS[1], "namespace": NS, "container": "ray-worker", "lines": GCS_LOG}
    )
    return bundle


@scenario
def worker_log_connected() -> Bundle:
    bundle = healthy()
    bundle.items("logs").append(
        {
            "pod": GPU_WORKERS[1],
            "namespace": NS,
            "container": "ray-worker",
            "lines": ["Local node IP: 10.8.4.10", "--------------------", "Ray runtime started."],
        }
    )
    return bundle


@scenario
def head_readiness_probe_failing() -> Bundle:
    bundle = healthy()
    status = bundle.find("pods", HEAD)["status"]
    for condition in status["conditions"]:
        if condition["type"] in ("Ready", "ContainersReady"):
            condition.update(
                status="False",
                reason="ContainersNotReady",
                message="containers with unready status: [ray-head]",
            )
    status["containerStatuses"][0]["ready"] = False
    bundle.items("events").append(
        k8s.event(
            NS,
            "Pod",
            HEAD,
            "Unhealthy",
            'Readiness probe failed: Get "http://10.8.1.10:8265/api/gcs_healthz": dial tcp 10.8.1.10:8265: '
            "connect: connection refused",
            component="kubelet",
            count=23,
        )
    )
    return bundle


@scenario
def head_ready() -> Bundle:
    return healthy()


@scenario
def head_service_selector_typo() -> Bundle:
    bundle = healthy()
    service = bundle.find("services", f"{CLUSTER}-head-svc")
    service["spec"]["selector"]["ray.io/node-type"] = "Head"
    bundle.find("endpoints", f"{CLUSTER}-head-svc").pop("subsets")
    return bundle


@scenario
def head_service_has_endpoint() -> Bundle:
    return healthy()


@scenario
def worker_log_version_mismatch() -> Bundle:
    bundle = healthy()
    _drop_ray_node(bundle, GPU_WORKERS[0])
    bundle.items("logs").append(
        {
            "pod": GPU_WORKERS[0],
            "namespace": NS,
            "container": "ray-worker",
            "lines": [
                "RuntimeError: Version mismatch: The cluster was started with: Ray: 2.9.0 Python: 3.10.13 "
                "This process on node 10.8.3.10 was started with: Ray: 2.10.0 Python: 3.10.13"
            ],
        }
    )
    return bundle


@scenario
def worker_log_without_mismatch() -> Bundle:
    return worker_log_connected()


@scenario
def gpu_group_on_newer_ray_image() -> Bundle:
    bundle = healthy()
    group = bundle.find("rayclusters", CLUSTER)["spec"]["workerGroupSpecs"][1]
    group["template"]["spec"]["containers"][0]["image"] = "rayproject/ray:2.10.0-py310-gpu"
    return bundle


@scenario
def cpu_and_gpu_images_same_version() -> Bundle:
    return healthy()


def _policy(ingress: list[dict[str, Any]] | None) -> dict[str, Any]:
    spec: dict[str, Any] = {"podSelector": {}, "policyTypes": ["Ingress"]}
    if ingress is not None:
        spec["ingress"] = ingress
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": "default-deny-ingress", "namespace": NS},
        "spec": spec,
    }


@scenario
def namespace_denies_all_ingress() -> Bundle:
    bundle = gpu_worker_runs_but_never_joined()
    bundle.items("network_policies").append(_policy(None))
    return bundle


@scenario
def namespace_allows_intra_namespace_traffic() -> Bundle:
    bundle = healthy()
    bundle.items("network_policies").append(_policy([{"from": [{"podSelector": {}}]}]))
    return bundle


# --- cause 4 ---------------------------------------------------------------------------------


@scenario
def ray_node_reports_no_gpu() -> Bundle:
    bundle = healthy()
    for node in bundle.ray_nodes():
        if node["node_ip"] == "10.8.3.10":
            node["resources_total"].pop("GPU")
            node["resources_available"].pop("GPU")
    bundle.ray_state["actors"] = []  # type: ignore[index]
    return bundle


@scenario
def ray_nodes_report_their_gpus() -> Bundle:
    return healthy()


def ray_registers_no_gpu() -> Bundle:
    """Ray was read and answers: none of its nodes registered a GPU (a real 0, not "not read")."""
    bundle = healthy()
    for node in bundle.ray_nodes():
        node["resources_total"].pop("GPU", None)
        if node.get("resources_available"):
            node["resources_available"].pop("GPU", None)
    assert bundle.ray_state is not None
    bundle.ray_state["actors"] = []
    return bundle


def _num_gpus_zero() -> Bundle:
    bundle = healthy()
    group = bundle.find("rayclusters", CLUSTER)["spec"]["workerGroupSpecs"][1]
    group["rayStartParams"] = {"num-gpus": "0"}
    for node in bundle.ray_nodes():
        node["resources_total"].pop("GPU", None)
        node["resources_available"].pop("GPU", None)
    bundle.ray_state["actors"] = []  # type: ignore[index]
    bundle.ray_state["demands"] = [  # type: ignore[index]
        {
            "shape": {"GPU": 1.0},
            "count": 4,
            "kind": "task_or_actor",
            "source_text": " {'GPU': 1.0}: 4+ pending tasks/actors",
        }
    ]
    return bundle


@scenario
def gpu_group_declares_zero_gpus() -> Bundle:
    return _num_gpus_zero()


@scenario
def gpu_group_declares_its_gpus() -> Bundle:
    bundle = healthy()
    bundle.find("rayclusters", CLUSTER)["spec"]["workerGroupSpecs"][1]["rayStartParams"] = {"num-gpus": "4"}
    return bundle


@scenario
def gpu_demand_while_template_hides_gpus() -> Bundle:
    return _num_gpus_zero()


@scenario
def gpu_demand_that_fits() -> Bundle:
    bundle = healthy()
    bundle.ray_state["demands"] = [{"shape": {"GPU": 1.0}, "count": 1}]  # type: ignore[index]
    return bundle


# --- causes 5, 6, 7, 9 (Ray logical resources) -----------------------------------------------


def _with_demand(bundle: Bundle, shape: dict[str, float], count: int = 1, **extra: Any) -> Bundle:
    assert bundle.ray_state is not None
    bundle.ray_state.setdefault("demands", []).append({"shape": shape, "count": count, **extra})
    return bundle


def _hold_all_gpus(bundle: Bundle) -> None:
    """The trainer holds one GPU on the first node; a detached actor holds all of the second."""
    assert bundle.ray_state is not None
    for node in bundle.ray_nodes():
        if node["node_ip"] == "10.8.4.10":
            node["resources_available"]["GPU"] = 0.0
            node["resources_available"]["accelerator_type:A100"] = 0.0
    bundle.ray_state["actors"].append(
        {
            "actor_id": "c2a1f0e9d8b7a6f5e4d3c2b101000000",
            "class_name": "EmbeddingServer",
            "name": "embedder",
            "state": "ALIVE",
            "node_id": node_id(GPU_WORKERS[1]),
            "job_id": "01000000",
            "required_resources": {"GPU": 4.0, "accelerator_type:A100": 1.0},
            "detached": True,
            "ray_namespace": "notebooks",
            "start_time": "2026-11-29T17:02:11Z",
        }
    )
    bundle.ray_state["jobs"].append(
        {"job_id": "01000000", "status": "SUCCEEDED", "entrypoint": "python embed.py"}
    )


@scenario
def four_gpu_task_waits_on_detached_actor() -> Bundle:
    bundle = healthy()
    _hold_all_gpus(bundle)
    return _with_demand(bundle, {"GPU": 4.0}, 2, kind="task_or_actor")


@scenario
def four_gpu_task_with_a_free_node() -> Bundle:
    bundle = healthy()
    return _with_demand(bundle, {"GPU": 4.0}, 1, kind="task_or_actor")


@scenario
def actor_of_finished_job_keeps_gpus() -> Bundle:
    return four_gpu_task_waits_on_detached_actor()


@scenario
def serve_replica_holds_gpu_legitimately() -> Bundle:
    bundle = healthy()
    bundle.ray_state["actors"].append(  # type: ignore[index]
        {
            "actor_id": "aa11",
            "class_name": "ServeReplica:llm:LLMServer",
            "state": "ALIVE",
            "node_id": node_id(GPU_WORKERS[1]),
            "job_id": "03000000",
            "required_resources": {"GPU": 1.0},
            "detached": True,
            "ray_namespace": "serve",
        }
    )
    return bundle


@scenario
def eight_gpu_task_on_four_gpu_nodes() -> Bundle:
    return _with_demand(healthy(), {"GPU": 8.0}, 1)


@scenario
def strict_pack_larger_than_a_node() -> Bundle:
    return _with_demand(
        healthy(),
        {"GPU": 4.0},
        1,
        kind="placement_group",
        bundles=[{"GPU": 4.0}, {"GPU": 4.0}],
        strategy="STRICT_PACK",
    )


@scenario
def pack_bundles_fit_on_separate_nodes() -> Bundle:
    bundle = healthy()
    bundle.ray_state["actors"] = []  # type: ignore[index]
    for node in bundle.ray_nodes():
        node["resources_available"] = dict(node["resources_total"])
    return _with_demand(
        bundle, {"GPU": 4.0}, 1, kind="placement_group", bundles=[{"GPU": 4.0}, {"GPU": 4.0}], strategy="PACK"
    )


@scenario
def task_asks_for_h100_on_a100_cluster() -> Bundle:
    return _with_demand(healthy(), {"GPU": 1.0, "accelerator_type:H100": 0.001}, 3)


@scenario
def task_asks_for_a100_on_a100_cluster() -> Bundle:
    return _with_demand(healthy(), {"GPU": 1.0, "accelerator_type:A100": 0.001}, 3)


def _group_params(resources: str) -> Bundle:
    bundle = healthy()
    group = bundle.find("rayclusters", CLUSTER)["spec"]["workerGroupSpecs"][1]
    group["rayStartParams"] = {"resources": resources}
    return bundle


@scenario
def a100_group_declares_h100_resource() -> Bundle:
    return _group_params('"{\\"accelerator_type:H100\\": 1}"')


@scenario
def a100_group_declares_a100_resource() -> Bundle:
    return _group_params('"{\\"accelerator_type:A100\\": 1}"')


def _eight_gpu_group(replicas: int, max_replicas: int) -> Bundle:
    bundle = healthy()
    cluster = bundle.find("rayclusters", CLUSTER)
    cluster["spec"]["workerGroupSpecs"].append(
        {
            "groupName": "gpu-h100x8",
            "replicas": replicas,
            "minReplicas": 0,
            "maxReplicas": max_replicas,
            "rayStartParams": {},
            "template": {
                "spec": {
                    "containers": [gpu_worker_container(8)],
                    "nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"},
                }
            },
        }
    )
    return _with_demand(bundle, {"GPU": 8.0}, 1)


@scenario
def eight_gpu_group_capped_at_zero() -> Bundle:
    return _eight_gpu_group(0, 0)


@scenario
def eight_gpu_group_can_scale() -> Bundle:
    return _eight_gpu_group(0, 2)


# An admission webhook refusing the operator's worker Pods, as the message inventory records it: a
# quota refusal in the same condition is k8s-quota-exceeded's (cause 1), which supersedes this rule.
WEBHOOK_MESSAGE = (
    "FailedCreateWorkerPod\n"
    + yaml.safe_load((Path(__file__).parents[1] / "inventory" / "kuberay.yaml").read_text())["values"][
        "webhook_error"
    ]
)


@scenario
def raycluster_replica_failure() -> Bundle:
    bundle = healthy()
    bundle.find("rayclusters", CLUSTER)["status"]["conditions"].append(
        {
            "type": "ReplicaFailure",
            "status": "True",
            "reason": "FailedCreateWorkerPod",
            "message": WEBHOOK_MESSAGE,
            "lastTransitionTime": k8s.T2,
        }
    )
    return bundle


@scenario
def raycluster_conditions_clean() -> Bundle:
    return healthy()


# --- cause 10 (application) ------------------------------------------------------------------


@scenario
def serve_app_fails_to_import() -> Bundle:
    bundle = healthy()
    bundle.ray_state["serve_applications"] = [  # type: ignore[index]
        {
            "name": "llm",
            "status": "DEPLOY_FAILED",
            "message": "Deploying application llm failed: ModuleNotFoundError: No module named 'vllm'",
            "deployments": [
                {
                    "name": "LLMServer",
                    "status": "UNHEALTHY",
                    "message": "The deployment failed to start 3 times in a row. This may be due to a "
                    "problem with its constructor or initial health check failing.",
                    "replica_states": {},
                }
            ],
        }
    ]
    return bundle


@scenario
def serve_app_running() -> Bundle:
    bundle = healthy()
    bundle.ray_state["serve_applications"] = [  # type: ignore[index]
        {
            "name": "llm",
            "status": "RUNNING",
            "message": "",
            "deployments": [{"name": "LLMServer", "status": "HEALTHY", "replica_states": {"RUNNING": 2}}],
        }
    ]
    return bundle


def _rayjob(status: str, deployment: str, message: str, reason: str | None = None) -> Bundle:
    bundle = healthy()
    job_status = {
        "jobStatus": status,
        "jobDeploymentStatus": deployment,
        "message": message,
        "rayClusterName": CLUSTER,
        "jobId": "nightly-eval-7xk2p",
    }
    if reason:
        job_status["reason"] = reason
    if not status:
        del job_status["jobStatus"]  # omitempty: never submitted
    bundle.items("rayjobs").append(
        {
            "apiVersion": "ray.io/v1",
            "kind": "RayJob",
            "metadata": {"name": "nightly-eval", "namespace": NS},
            "spec": {"entrypoint": "python eval.py", "activeDeadlineSeconds": 900},
            "status": job_status,
        }
    )
    return bundle


# KubeRay's message for a RayJob past spec.activeDeadlineSeconds (StartTime printed with Go's %v).
DEADLINE = (
    "The RayJob has passed the activeDeadlineSeconds. StartTime: 2026-11-30 08:45:00 +0000 UTC. "
    "ActiveDeadlineSeconds: 900"
)


@scenario
def rayjob_deadline_while_cluster_starts() -> Bundle:
    return _rayjob("", "Failed", DEADLINE, "DeadlineExceeded")


@scenario
def rayjob_deadline_while_running_is_not_before_start() -> Bundle:
    return _rayjob("RUNNING", "Failed", DEADLINE, "DeadlineExceeded")


@scenario
def rayjob_deadline_while_running() -> Bundle:
    return _rayjob("RUNNING", "Failed", DEADLINE, "DeadlineExceeded")


@scenario
def rayjob_failed_in_its_code_is_not_a_deadline() -> Bundle:
    return _rayjob(
        "FAILED",
        "Failed",
        "Job entrypoint command failed with exit code 1, last available logs: ValueError: bad config",
        "AppFailed",
    )


@scenario
def rayjob_ended_by_its_deadline_is_not_a_failed_job() -> Bundle:
    return _rayjob("PENDING", "Failed", DEADLINE, "DeadlineExceeded")


@scenario
def rayjob_runtime_env_failed() -> Bundle:
    return _rayjob(
        "FAILED",
        "Failed",
        "Job failed due to an application error: runtime_env setup failed: Failed to set up "
        "runtime environment. pip install failed: No matching distribution found for torch==9.9",
    )


@scenario
def rayjob_running() -> Bundle:
    return _rayjob("RUNNING", "Running", "")


@scenario
def operator_forbidden_to_create_ingress() -> Bundle:
    bundle = healthy()
    bundle.items("events").append(
        k8s.event(
            NS,
            "RayService",
            "llm-service",
            "FailedToCreateIngress",
            'ingresses.networking.k8s.io "llm-service-head-ingress" is forbidden: User '
            '"system:serviceaccount:kuberay:kuberay-operator" cannot create resource "ingresses" in API group '
            '"networking.k8s.io" in the namespace "ml"',
            component="rayservice-controller",
            api_version="ray.io/v1",
        )
    )
    return bundle


@scenario
def quota_refusal_is_not_an_operator_error() -> Bundle:
    return worker_creation_refused_by_quota()


# --- outside the ten causes ------------------------------------------------------------------


SERVE_404 = ["/api/serve/applications/", "/api/serve/deployments/status"]


def _ray_2_5_dashboard() -> Bundle:
    """A Ray 2.5 head: its dashboard answers 404 to both Serve paths (the agent serves them)."""
    bundle = healthy()
    bundle.ray_state["version"] = "2.5.1"  # type: ignore[index]
    bundle.ray_state["unread"] = {"serve": SERVE_404}  # type: ignore[index]
    return bundle


@scenario
def serve_api_absent_on_ray_2_5() -> Bundle:
    return _ray_2_5_dashboard()


@scenario
def serve_read_from_the_rayservice() -> Bundle:
    bundle = _ray_2_5_dashboard()
    bundle.items("rayservices").append(
        {
            "apiVersion": "ray.io/v1",
            "kind": "RayService",
            "metadata": {"name": "llm-service", "namespace": NS},
            "spec": {},
            "status": {
                "serviceStatus": "Running",
                "activeServiceStatus": {
                    "rayClusterName": CLUSTER,
                    "applicationStatuses": {"llm": {"status": "RUNNING", "serveDeploymentStatuses": {}}},
                },
            },
        }
    )
    return bundle


@scenario
def serve_api_on_a_newer_dashboard() -> Bundle:
    return healthy()


@scenario
def worker_gated_by_kueue() -> Bundle:
    bundle = healthy()
    drop_gpu_workers(bundle)
    add_pending_gpu_worker(bundle, None, extra={"schedulingGates": [{"name": "kueue.x-k8s.io/admission"}]})
    return bundle


@scenario
def worker_not_gated() -> Bundle:
    return gpu_worker_fits_after_scale_down()


@scenario
def events_forbidden_by_rbac() -> Bundle:
    bundle = healthy()
    bundle.kubernetes.pop("events")
    bundle.errors.append(
        {
            "source": "kubernetes events",
            "message": "403 Forbidden: events is forbidden: User "
            '"system:serviceaccount:raydiag:raydiag" cannot list resource "events" in the namespace "ml"',
            "hint": "grant list on events (see deploy/ RBAC)",
        }
    )
    return bundle


@scenario
def everything_readable() -> Bundle:
    return healthy()


@scenario
def dashboard_connection_refused() -> Bundle:
    bundle = head_readiness_probe_failing()
    bundle.ray_state = None
    bundle.errors.append(
        {
            "source": "ray dashboard",
            "message": f"GET http://{CLUSTER}-head-svc.{NS}.svc.cluster.local:8265/api/version:"
            " connection refused",
        }
    )
    return bundle


@scenario
def kubernetes_read_failed_but_dashboard_answered() -> Bundle:
    return events_forbidden_by_rbac()


@scenario
def autoscaler_group_at_max_size() -> Bundle:
    return _ca_event(
        "pod didn't trigger scale-up: 2 node(s) didn't match Pod's node affinity/selector, 1 max node group size reached"
    )


@scenario
def autoscaler_only_excluded_unmatching_groups() -> Bundle:
    return autoscaler_groups_do_not_match_selector()


@scenario
def karpenter_cloud_out_of_capacity() -> Bundle:
    return _karpenter(
        "Failed launching nodeclaim, creating instance, insufficient capacity, with fleet error(s), "
        "InsufficientInstanceCapacity: We currently do not have sufficient p4d.24xlarge capacity in the "
        "Availability Zone you requested (us-east-1a)."
    )


@scenario
def karpenter_launched_a_node() -> Bundle:
    bundle = _karpenter(KARPENTER_NO_TYPE)
    bundle.items("events").append(
        k8s.event(
            NS,
            "Pod",
            PENDING,
            "Nominated",
            "Pod should schedule on: nodeclaim/gpu-x7k2p",
            type_="Normal",
            component="karpenter",
        )
    )
    return bundle


@scenario
def rayjob_waits_for_kueue_quota() -> Bundle:
    bundle = healthy()
    bundle.items("workloads").append(
        {
            "apiVersion": "kueue.x-k8s.io/v1beta1",
            "kind": "Workload",
            "metadata": {
                "name": "rayjob-nightly-eval-3f2a1",
                "namespace": NS,
                "ownerReferences": [
                    {
                        "apiVersion": "ray.io/v1",
                        "kind": "RayJob",
                        "name": "nightly-eval",
                        "uid": "u",
                        "controller": True,
                    }
                ],
            },
            "spec": {"queueName": "gpu-queue", "podSets": [{"name": "head", "count": 1}]},
            "status": {
                "conditions": [
                    {
                        "type": "QuotaReserved",
                        "status": "False",
                        "reason": "Pending",
                        "message": "couldn't assign flavors to pod set workers: insufficient quota for nvidia.com/gpu "
                        "in flavor a100, request > maximum capacity (8 > 4)",
                        "lastTransitionTime": k8s.T2,
                    }
                ]
            },
        }
    )
    return bundle


def scenario_cases(case_dir: Path = CASE_DIR) -> list[Case]:
    """The scenario cases filed under ``tests/cases``, each with its builder."""
    cases = []
    for path in sorted(case_dir.glob(f"*/*/*{SCENARIO_SUFFIX}")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        name = data["scenario"]
        cases.append(Case(path.parents[1].name, path.parent.name, name, BUILDERS[name], data.get("subject")))
    return cases


CASES: list[Case] = scenario_cases()
