"""YAML and JSON documents: Kubernetes objects, RayCluster, launcher node types, serve status."""

from __future__ import annotations

import json
from pathlib import Path

from bot.collect.paste import parse_paste

GIB = 2**30

RAYCLUSTER_YAML = """\
apiVersion: ray.io/v1
kind: RayCluster
metadata:
  name: raycluster-gpu
  namespace: ray
spec:
  rayVersion: '2.9.0'
  enableInTreeAutoscaling: true
  headGroupSpec:
    rayStartParams:
      dashboard-host: '0.0.0.0'
      num-gpus: "0"
    template:
      spec:
        containers:
        - name: ray-head
          image: rayproject/ray:2.9.0
          resources:
            limits:
              cpu: "2"
              memory: 8Gi
  workerGroupSpecs:
  - groupName: gpu-group
    replicas: 1
    minReplicas: 0
    maxReplicas: 4
    rayStartParams:
      num-gpus: "1"
    template:
      spec:
        nodeSelector:
          nvidia.com/gpu.product: NVIDIA-A10G
        tolerations:
        - key: nvidia.com/gpu
          operator: Exists
          effect: NoSchedule
        containers:
        - name: ray-worker
          image: rayproject/ray:2.9.0-gpu
          resources:
            limits:
              nvidia.com/gpu: 1
              cpu: "4"
              memory: 16Gi
"""

LAUNCHER_CONFIG = """\
cluster_name: gpu-cluster
max_workers: 10
provider:
    type: aws
    region: us-west-2
available_node_types:
    ray.head.default:
        resources: {}
        node_config:
            InstanceType: m5.2xlarge
    gpu_worker:
        min_workers: 0
        max_workers: 4
        resources: {"CPU": 48, "GPU": 4, "accelerator_type:A10G": 4}
        node_config:
            InstanceType: g5.12xlarge
            BlockDeviceMappings: *mount
head_node_type: ray.head.default
"""

SERVE_STATUS = """\
proxies:
  2f3b5c1e9d4a7b8c6e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f: HEALTHY
applications:
  llm:
    status: DEPLOY_FAILED
    message: 'Deploying app ''llm'' failed with exception:

      Traceback (most recent call last):

      RuntimeError: CUDA error: no kernel image is available for execution on the device'
    last_deployed_time_s: 1707727070.123
    deployments:
      VLLMDeployment:
        status: UNHEALTHY
        status_trigger: REPLICA_STARTUP_FAILED
        replica_states:
          STARTING: 1
          RECOVERING: 0
        message: The deployment failed to start 3 times in a row.
  default:
    status: RUNNING
    message: ''
    deployments:
      Translator:
        status: HEALTHY
        replica_states:
          RUNNING: 2
        message: ''
target_capacity: null
"""

LEGACY_SERVE_STATUS = """\
name: default
app_status:
  status: DEPLOYING
  message: ''
  deployment_timestamp: 1694000000.0
deployment_statuses:
- name: MyModel
  status: UPDATING
  message: 'Deployment MyModel has 1 replicas that have taken more than 30s to be scheduled.'
"""


def _pod_json(name: str, phase: str | None = "Running") -> dict[str, object]:
    pod: dict[str, object] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "ray", "labels": {"ray.io/node-type": "worker"}},
        "spec": {
            "nodeName": "node-a" if phase == "Running" else None,
            "containers": [
                {
                    "name": "ray-worker",
                    "image": "rayproject/ray:2.9.0",
                    "resources": {"limits": {"nvidia.com/gpu": "1"}},
                }
            ],
        },
    }
    if phase:
        pod["status"] = {
            "phase": phase,
            "podIP": "10.1.2.3",
            "conditions": [{"type": "Ready", "status": "True"}],
        }
    return pod


def test_raycluster_yaml_becomes_a_raycluster_object() -> None:
    snapshot = parse_paste(RAYCLUSTER_YAML)

    assert snapshot.kubernetes is not None and snapshot.ray is None
    (cluster,) = snapshot.kubernetes.rayclusters
    assert (cluster.name, cluster.namespace, cluster.ray_version, cluster.autoscaling) == (
        "raycluster-gpu",
        "ray",
        "2.9.0",
        True,
    )
    assert cluster.head is not None and cluster.head.ray_start_params["num-gpus"] == "0"
    (group,) = cluster.worker_groups
    assert (group.name, group.min_replicas, group.max_replicas) == ("gpu-group", 0, 4)
    assert group.node_selector == {"nvidia.com/gpu.product": "NVIDIA-A10G"}
    assert group.containers[0].limits["nvidia.com/gpu"] == 1.0
    assert snapshot.notes == ["raycluster manifest"]


def test_worker_group_snippet_is_read_as_an_unnamed_raycluster() -> None:
    snippet = RAYCLUSTER_YAML[RAYCLUSTER_YAML.index("  workerGroupSpecs:") :]

    snapshot = parse_paste(snippet)

    assert snapshot.kubernetes is not None
    (cluster,) = snapshot.kubernetes.rayclusters
    assert cluster.name == "(pasted raycluster)"
    assert cluster.worker_groups[0].max_replicas == 4


def test_launcher_config_node_types_with_undefined_alias() -> None:
    snapshot = parse_paste(LAUNCHER_CONFIG)

    assert snapshot.ray is not None
    head, gpu = snapshot.ray.node_types
    assert (head.name, head.explicit, head.resources) == ("ray.head.default", False, {})
    assert gpu.name == "gpu_worker" and gpu.explicit
    assert gpu.resources == {"CPU": 48.0, "GPU": 4.0, "accelerator_type:A10G": 4.0}
    assert (gpu.min_workers, gpu.max_workers) == (0, 4)
    assert snapshot.notes == ["ray cluster config (node types)"]


def test_truncated_invalid_snippet_keeps_the_complete_node_types() -> None:
    snippet = """\
    cpu_worker:
      node_config: {InstanceType: m5.4xlarge}
      resources: {CPU: 16}
      min_workers: 1
      max_workers: 10
    gpu_worker:
      node_config:
        InstanceType: p3.8xlarge
        <<: *defaults
      resources:
        CPU: 32
        GPU: 4
      min_workers: 0
      max_workers: [2
"""

    snapshot = parse_paste(snippet)

    assert snapshot.ray is not None
    types = {t.name: t for t in snapshot.ray.node_types}
    assert types["cpu_worker"].resources == {"CPU": 16.0}
    assert types["gpu_worker"].resources == {"CPU": 32.0, "GPU": 4.0}
    assert "some YAML lines could not be read and were skipped" in snapshot.notes


def test_serve_status_applications_and_deployments() -> None:
    snapshot = parse_paste(SERVE_STATUS)

    assert snapshot.ray is not None
    llm, default = snapshot.ray.serve_applications
    assert (llm.name, llm.status) == ("llm", "DEPLOY_FAILED")
    assert "no kernel image is available" in llm.message
    (deployment,) = llm.deployments
    assert (deployment.name, deployment.status) == ("VLLMDeployment", "UNHEALTHY")
    assert deployment.replica_states == {"STARTING": 1, "RECOVERING": 0}
    assert deployment.message == "The deployment failed to start 3 times in a row."
    assert default.status == "RUNNING" and default.deployments[0].replica_states == {"RUNNING": 2}
    assert snapshot.notes == ["serve status"]


def test_legacy_serve_status() -> None:
    snapshot = parse_paste(LEGACY_SERVE_STATUS)

    assert snapshot.ray is not None
    (app,) = snapshot.ray.serve_applications
    assert (app.name, app.status) == ("default", "DEPLOYING")
    assert app.deployments[0].name == "MyModel" and app.deployments[0].status == "UPDATING"


def test_pod_list_json_reads_every_pod() -> None:
    doc = {
        "apiVersion": "v1",
        "kind": "List",
        "items": [_pod_json("worker-1"), _pod_json("worker-2", "Pending")],
    }

    snapshot = parse_paste("$ kubectl get pods -n ray -o json\n" + json.dumps(doc, indent=4))

    assert snapshot.kubernetes is not None
    first, second = snapshot.kubernetes.pods
    assert (first.name, first.phase, first.ready, first.pod_ip) == ("worker-1", "Running", True, "10.1.2.3")
    assert second.phase == "Pending"
    assert first.gpu_limit() == 1.0
    assert "kubectl -o json" in snapshot.notes


def test_truncated_json_list_keeps_the_items_before_the_cut() -> None:
    text = json.dumps(
        {"apiVersion": "v1", "kind": "List", "items": [_pod_json(f"w-{i}") for i in range(3)]}, indent=2
    )
    cut = text[: text.index('"w-2"') + 2]

    snapshot = parse_paste(cut)

    assert snapshot.kubernetes is not None
    assert [pod.name for pod in snapshot.kubernetes.pods] == ["w-0", "w-1"]
    assert "a truncated JSON document was read up to where it was cut" in snapshot.notes


def test_node_and_event_json() -> None:
    node = {
        "kind": "Node",
        "metadata": {"name": "gpu-node-1", "labels": {"nvidia.com/gpu.present": "true"}},
        "spec": {"taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]},
        "status": {
            "allocatable": {"cpu": "8", "memory": "32Gi"},
            "addresses": [{"type": "InternalIP", "address": "10.0.0.9"}],
        },
    }
    events = {
        "kind": "EventList",
        "items": [
            {
                "involvedObject": {"kind": "Pod", "name": "worker-2", "namespace": "ray"},
                "reason": "FailedScheduling",
                "message": "0/1 nodes are available: 1 node(s) had untolerated taint {nvidia.com/gpu: present}.",
                "type": "Warning",
                "count": 7,
            }
        ],
    }

    snapshot = parse_paste(json.dumps(node) + "\n" + json.dumps(events, indent=2))

    assert snapshot.kubernetes is not None
    (parsed_node,) = snapshot.kubernetes.nodes
    assert parsed_node.internal_ip == "10.0.0.9" and parsed_node.allocatable["memory"] == 32 * GIB
    assert parsed_node.taints[0].key == "nvidia.com/gpu"
    (event,) = snapshot.kubernetes.events
    assert (event.object_name, event.count, event.namespace) == ("worker-2", 7, "ray")


def test_pod_yaml_with_status_keeps_its_phase_and_multi_document_yaml() -> None:
    paste = """\
apiVersion: v1
kind: Pod
metadata:
  name: worker-3
  namespace: ray
  creationTimestamp: 2024-99-99T00:00:00Z
spec:
  containers:
  - name: ray-worker
    image: rayproject/ray:2.9.0
status:
  phase: Running
  podIP: 10.1.2.4
---
apiVersion: v1
kind: ResourceQuota
metadata:
  name: gpu-quota
  namespace: ray
spec:
  hard:
    requests.nvidia.com/gpu: "4"
status:
  used:
    requests.nvidia.com/gpu: "4"
"""

    snapshot = parse_paste(paste)

    assert snapshot.kubernetes is not None
    (pod,) = snapshot.kubernetes.pods
    assert (pod.name, pod.phase, pod.pod_ip) == ("worker-3", "Running", "10.1.2.4")
    (quota,) = snapshot.kubernetes.resource_quotas
    assert quota.hard == {"requests.nvidia.com/gpu": 4.0} and quota.used == {"requests.nvidia.com/gpu": 4.0}


def test_pod_manifest_without_status_or_scheduler_message_has_unknown_phase() -> None:
    paste = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: gpu-pod\nspec:\n  containers:\n  - name: c\n    image: x\n"

    snapshot = parse_paste(paste)

    assert snapshot.kubernetes is not None
    assert snapshot.kubernetes.pods[0].phase == "Unknown"


def test_json_log_lines_that_are_not_objects_stay_text() -> None:
    line = (
        '{"level":"ERROR","time":"2024-05-01T10:00:00.000Z","logger":"controller.provisioner",'
        '"message":"could not schedule pod, incompatible with nodepool \\"default\\", no instance type '
        'satisfied resources {\\"nvidia.com/gpu\\":\\"8\\"}","pod":"ray/ray-worker-1"}'
    )

    snapshot = parse_paste(line)

    assert snapshot.kubernetes is None
    assert snapshot.texts[0].text == line
    assert "karpenter message" in snapshot.notes


KUBERAY_HELM_VALUES = """\
image:
  repository: rayproject/ray
  tag: 2.1.0
  pullPolicy: IfNotPresent
head:
  rayStartParams:
    dashboard-host: '0.0.0.0'
  resources:
    limits:
      cpu: "1"
      memory: "2G"
worker:
  groupName: workergroup
  replicas: 1
  resources:
    limits:
      cpu: "1"
      memory: "1G"
additionalWorkerGroups:
  smallGroup:
    disabled: true
    replicas: 0
  gpu:
    replicas: 0
    maxReplicas: 2
    rayStartParams:
      num-gpus: "1"
    resources:
      limits:
        nvidia.com/gpu: 1
service:
  type: ClusterIP
"""


def test_kuberay_helm_values_become_an_unnamed_raycluster() -> None:
    snapshot = parse_paste(KUBERAY_HELM_VALUES)

    assert snapshot.kubernetes is not None and snapshot.ray is None
    (cluster,) = snapshot.kubernetes.rayclusters
    assert cluster.name == "(pasted raycluster)"
    assert cluster.head is not None and cluster.head.ray_container is not None
    assert cluster.head.ray_container.limits == {"cpu": 1.0, "memory": 2e9}
    assert cluster.head.ray_container.image == "rayproject/ray:2.1.0"
    workers = {group.name: group for group in cluster.worker_groups}
    assert set(workers) == {"workergroup", "gpu"}
    assert workers["workergroup"].replicas == 1
    assert workers["gpu"].max_replicas == 2 and workers["gpu"].ray_start_params == {"num-gpus": "1"}
    assert snapshot.notes == ["kuberay helm values"]


RAYCLUSTER_STATUS_WITH_QUOTA = """\
status:
  desiredCPU: "0"
  desiredGPU: "0"
  head: {}
  reason: 'pods "my-cluster-head-9xmvs" is forbidden: exceeded quota: compute-deploy,
    requested: limits.memory=9048576k,requests.cpu=2010m, used: limits.memory=14330Mi,requests.cpu=2810m,
    limited: limits.memory=18Gi,requests.cpu=3'
  state: failed
"""

HEAD_TERMINATION = """\
$ kubectl get pod ${RAY_HEAD} -o yaml | yq '.status.containerStatuses[0].lastState.terminated'
containerID: containerd://0f30d47b321c9d9482bc6b78f2292196f7156194f5d2ea02b12eaeb2b395a1b3
exitCode: 137
finishedAt: "2025-12-17T10:56:44Z"
reason: OOMKilled
startedAt: "2025-12-17T10:56:35Z"
"""


def test_a_raycluster_status_cut_out_of_its_manifest_keeps_the_quota_refusal() -> None:
    # From red-hat-data-services/fraud-detection#73: `oc get rayclusters ... -o yaml`, status only.
    snapshot = parse_paste(RAYCLUSTER_STATUS_WITH_QUOTA)
    assert snapshot.kubernetes is not None
    (cluster,) = snapshot.kubernetes.rayclusters
    assert cluster.state == "failed"
    assert cluster.reason is not None and "exceeded quota: compute-deploy" in cluster.reason


def test_a_container_termination_printed_alone_is_a_failed_container() -> None:
    # From ray-project/kuberay#4287: yq of the head's lastState.terminated.
    snapshot = parse_paste(HEAD_TERMINATION)
    assert snapshot.kubernetes is not None
    (pod,) = snapshot.kubernetes.pods
    (status,) = pod.container_statuses
    assert (status.reason, status.exit_code, status.last_terminated_reason) == ("OOMKilled", 137, "OOMKilled")


# ``kubectl get ... -o yaml`` printed by the real kubectl (tools/record_kubectl_corpus.py) ---------

RECORDED = Path(__file__).parent / "kubectl_recorded"


def _status_part(stem: str) -> str:
    """The ``status:`` block of a recorded manifest, as people cut it out to paste it."""
    text = (RECORDED / f"{stem}.txt").read_text(encoding="utf-8")
    return text[text.index("\nstatus:\n") + 1 :]


def test_whole_rayservice_yaml_keeps_conditions_and_application_status() -> None:
    snapshot = parse_paste((RECORDED / "get-rayservice-yaml.txt").read_text(encoding="utf-8"))
    assert snapshot.kubernetes is not None
    (service,) = snapshot.kubernetes.rayservices
    assert service.name == "llm-service" and service.cluster_name == "raycluster-gpu"
    assert {c.type: c.status for c in service.conditions} == {"Ready": "False", "UpgradeInProgress": "False"}
    assert service.app_statuses == {"llm": "DEPLOY_FAILED"}


def test_rayservice_status_cut_out_is_a_rayservice_not_a_raycluster() -> None:
    snapshot = parse_paste(_status_part("get-rayservice-yaml"))
    assert snapshot.kubernetes is not None
    (service,) = snapshot.kubernetes.rayservices
    assert service.app_statuses == {"llm": "DEPLOY_FAILED"}
    assert "ModuleNotFoundError" in (service.app_messages["llm"] or "")
    assert snapshot.kubernetes.rayclusters == []


def test_raycluster_status_cut_out_keeps_state_conditions_and_replicas() -> None:
    snapshot = parse_paste(_status_part("get-raycluster-yaml"))
    assert snapshot.kubernetes is not None
    (cluster,) = snapshot.kubernetes.rayclusters
    assert (cluster.state, cluster.desired_workers, cluster.ready_workers) == ("ready", 4, 4)
    assert {c.type for c in cluster.conditions} == {"HeadPodReady", "RayClusterProvisioned"}
