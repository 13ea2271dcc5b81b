"""``kubectl describe pod`` and ``kubectl describe node``."""

from __future__ import annotations

from bot.collect.paste import parse_paste

GIB = 2**30

DESCRIBE_POD = """\
Name:             raycluster-gpu-worker-gpu-group-4kq9d
Namespace:        ray
Priority:         0
Service Account:  default
Node:             <none>
Labels:           app.kubernetes.io/created-by=kuberay-operator
                  ray.io/cluster=raycluster-gpu
                  ray.io/group=gpu-group
                  ray.io/node-type=worker
Annotations:      ray.io/ft-enabled: false
Status:           Pending
IP:
IPs:              <none>
Controlled By:    RayCluster/raycluster-gpu
Init Containers:
  wait-gcs-ready:
    Image:      rayproject/ray:2.9.0-gpu
    Port:       <none>
    Host Port:  <none>
    Command:
      /bin/bash
      -lc
      --
    Limits:
      cpu:     200m
      memory:  256Mi
    Requests:
      cpu:     200m
      memory:  256Mi
Containers:
  ray-worker:
    Image:      rayproject/ray:2.9.0-gpu
    Port:       8080/TCP
    Host Port:  0/TCP
    Limits:
      cpu:             4
      memory:          16Gi
      nvidia.com/gpu:  1
    Requests:
      cpu:             4
      memory:          16Gi
      nvidia.com/gpu:  1
    Environment:
      RAY_CLUSTER_NAME:   (v1:metadata.labels['ray.io/cluster'])
Conditions:
  Type           Status
  PodScheduled   False 
Volumes:
  shared-mem:
    Type:       EmptyDir (a temporary directory that shares a pod's lifetime)
QoS Class:                   Guaranteed
Node-Selectors:              cloud.google.com/gke-accelerator=nvidia-l4
                             nvidia.com/gpu.present=true
Tolerations:                 node.kubernetes.io/not-ready:NoExecute op=Exists for 300s
                             node.kubernetes.io/unreachable:NoExecute op=Exists for 300s
                             nvidia.com/gpu:NoSchedule op=Exists
                             dedicated=ray:NoSchedule
Events:
  Type     Reason             Age                   From                Message
  ----     ------             ----                  ----                -------
  Warning  FailedScheduling   2m21s (x42 over 60m)  default-scheduler   0/3 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, 2 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.
  Normal   NotTriggerScaleUp  55s (x300 over 60m)   cluster-autoscaler  pod didn't trigger scale-up: 1 node(s) didn't match Pod's node affinity/selector
"""  # noqa: W291

DESCRIBE_RUNNING_POD = """\
Name:             raycluster-kuberay-head-jw5zm
Namespace:        default
Node:             kind-control-plane/172.18.0.2
Start Time:       Wed, 13 Mar 2024 20:27:20 +0000
Status:           Running
IP:               10.244.0.6
Containers:
  ray-head:
    Container ID:   containerd://0f1e2d3c
    Image:          rayproject/ray:2.9.0
    State:          Waiting
      Reason:       CrashLoopBackOff
    Last State:     Terminated
      Reason:       OOMKilled
      Exit Code:    137
      Started:      Wed, 13 Mar 2024 20:40:00 +0000
      Finished:     Wed, 13 Mar 2024 20:41:10 +0000
    Ready:          False
    Restart Count:  5
    Limits:
      memory:  2G
    Requests:
      cpu:     1
      memory:  2G
Conditions:
  Type              Status
  Initialized       True 
  Ready             False 
  ContainersReady   False 
  PodScheduled      True 
QoS Class:       Burstable
Node-Selectors:  <none>
Tolerations:     <none>
Events:          <none>
"""  # noqa: W291

DESCRIBE_NODE = """\
Name:               gke-ray-gpu-pool-3f1e2d4c-9xk2
Roles:              <none>
Labels:             beta.kubernetes.io/arch=amd64
                    cloud.google.com/gke-accelerator=nvidia-tesla-t4
                    cloud.google.com/gke-nodepool=gpu-pool
                    kubernetes.io/hostname=gke-ray-gpu-pool-3f1e2d4c-9xk2
                    node.kubernetes.io/instance-type=n1-standard-8
Annotations:        container.googleapis.com/instance_id: 1234567890
                    node.alpha.kubernetes.io/ttl: 0
CreationTimestamp:  Tue, 12 Mar 2024 10:00:00 +0000
Taints:             nvidia.com/gpu=present:NoSchedule
                    node.kubernetes.io/unschedulable:NoSchedule
Unschedulable:      true
Lease:
  HolderIdentity:  gke-ray-gpu-pool-3f1e2d4c-9xk2
  RenewTime:       Wed, 13 Mar 2024 10:05:00 +0000
Conditions:
  Type                 Status  LastHeartbeatTime                 LastTransitionTime                Reason                       Message
  ----                 ------  -----------------                 ------------------                ------                       -------
  MemoryPressure       False   Wed, 13 Mar 2024 10:04:55 +0000   Tue, 12 Mar 2024 10:00:10 +0000   KubeletHasSufficientMemory   kubelet has sufficient memory available
  DiskPressure         False   Wed, 13 Mar 2024 10:04:55 +0000   Tue, 12 Mar 2024 10:00:10 +0000   KubeletHasNoDiskPressure     kubelet has no disk pressure
  Ready                True    Wed, 13 Mar 2024 10:04:55 +0000   Tue, 12 Mar 2024 10:00:40 +0000   KubeletReady                 kubelet is posting ready status. AppArmor enabled
Addresses:
  InternalIP:  10.128.0.41
  ExternalIP:  34.68.10.20
  Hostname:    gke-ray-gpu-pool-3f1e2d4c-9xk2
Capacity:
  cpu:                8
  ephemeral-storage:  98831908Ki
  memory:             30817604Ki
  pods:               110
Allocatable:
  cpu:                7910m
  ephemeral-storage:  47060071478
  memory:             27140932Ki
  pods:               110
System Info:
  Machine ID:                 d2c3e4f5a6b7
  Kernel Version:             5.15.0-1049-gke
  Container Runtime Version:  containerd://1.7.10
  Kubelet Version:            v1.28.3-gke.1118000
ProviderID:                   gce://my-project/us-central1-a/gke-ray-gpu-pool-3f1e2d4c-9xk2
Non-terminated Pods:          (3 in total)
  Namespace                   Name                                CPU Requests  CPU Limits  Memory Requests  Memory Limits  Age
  ---------                   ----                                ------------  ----------  ---------------  -------------  ---
  kube-system                 fluentbit-gke-8x2lq                 100m (1%)     0 (0%)      200Mi (0%)       500Mi (1%)     1d
  kube-system                 nvidia-gpu-device-plugin-small-p8   50m (0%)      50m (0%)    100Mi (0%)       100Mi (0%)     1d
Allocated resources:
  (Total limits may be over 100 percent, i.e., overcommitted.)
  Resource           Requests    Limits
  --------           --------    ------
  cpu                150m (1%)   50m (0%)
  memory             300Mi (1%)  600Mi (2%)
Events:
  Type    Reason                   Age   From     Message
  ----    ------                   ----  ----     -------
  Normal  NodeNotSchedulable       5m    kubelet  Node gke-ray-gpu-pool-3f1e2d4c-9xk2 status is now: NodeNotSchedulable
"""


def test_describe_pending_pod_reads_spec_status_and_events() -> None:
    snapshot = parse_paste(DESCRIBE_POD)

    assert snapshot.kubernetes is not None
    (pod,) = snapshot.kubernetes.pods
    assert (pod.name, pod.namespace, pod.phase) == ("raycluster-gpu-worker-gpu-group-4kq9d", "ray", "Pending")
    assert pod.node_name is None and pod.unscheduled
    assert pod.labels["ray.io/group"] == "gpu-group"
    assert pod.owner is not None and (pod.owner.kind, pod.owner.name) == ("RayCluster", "raycluster-gpu")
    (container,) = pod.containers
    assert container.limits == {"cpu": 4.0, "memory": 16 * GIB, "nvidia.com/gpu": 1.0}
    assert pod.init_containers[0].requests == {"cpu": 0.2, "memory": 256 * 2**20}
    assert pod.requests == {"cpu": 4.0, "memory": 16 * GIB, "nvidia.com/gpu": 1.0}
    assert pod.node_selector == {
        "cloud.google.com/gke-accelerator": "nvidia-l4",
        "nvidia.com/gpu.present": "true",
    }
    tolerations = {(t.key, t.operator, t.value, t.effect) for t in pod.tolerations}
    assert ("nvidia.com/gpu", "Exists", None, "NoSchedule") in tolerations
    assert ("dedicated", "Equal", "ray", "NoSchedule") in tolerations
    assert len(tolerations) == 4
    condition = pod.condition("PodScheduled")
    assert condition is not None and condition.status == "False"
    scheduling, scale_up = snapshot.kubernetes.events
    assert (scheduling.object_kind, scheduling.object_name, scheduling.namespace) == (
        "Pod",
        "raycluster-gpu-worker-gpu-group-4kq9d",
        "ray",
    )
    assert scheduling.count == 42
    assert "didn't match Pod's node affinity/selector" in scheduling.message
    assert scale_up.reason == "NotTriggerScaleUp" and scale_up.count == 300
    assert snapshot.notes[0] == "kubectl describe pod"


def test_describe_crash_looping_pod_reads_container_states() -> None:
    snapshot = parse_paste(DESCRIBE_RUNNING_POD)

    assert snapshot.kubernetes is not None
    (pod,) = snapshot.kubernetes.pods
    assert pod.phase == "Running"
    assert (pod.node_name, pod.host_ip, pod.pod_ip) == ("kind-control-plane", "172.18.0.2", "10.244.0.6")
    (status,) = pod.container_statuses
    assert (status.state, status.reason, status.restart_count) == ("waiting", "CrashLoopBackOff", 5)
    assert status.last_terminated_reason == "OOMKilled"
    assert not status.ready
    assert pod.containers[0].requests == {"cpu": 1.0, "memory": 2e9}
    assert {c.type: c.status for c in pod.conditions}["Ready"] == "False"
    assert snapshot.kubernetes.events == []


def test_describe_node_reads_labels_taints_capacity_and_conditions() -> None:
    snapshot = parse_paste(DESCRIBE_NODE)

    assert snapshot.kubernetes is not None
    assert snapshot.kubernetes.pods == []
    (node,) = snapshot.kubernetes.nodes
    assert node.name == "gke-ray-gpu-pool-3f1e2d4c-9xk2"
    assert node.labels["cloud.google.com/gke-accelerator"] == "nvidia-tesla-t4"
    assert len(node.labels) == 5
    assert [(t.key, t.value, t.effect) for t in node.taints] == [
        ("nvidia.com/gpu", "present", "NoSchedule"),
        ("node.kubernetes.io/unschedulable", "", "NoSchedule"),
    ]
    assert node.unschedulable
    assert node.internal_ip == "10.128.0.41"
    assert node.allocatable["cpu"] == 7.91
    assert node.allocatable["memory"] == 27140932 * 1024
    assert "nvidia.com/gpu" not in node.allocatable
    ready = next(c for c in node.conditions if c.type == "Ready")
    assert (ready.status, ready.reason) == ("True", "KubeletReady")
    assert node.ready
    (event,) = snapshot.kubernetes.events
    assert (event.object_kind, event.object_name, event.reason) == (
        "Node",
        "gke-ray-gpu-pool-3f1e2d4c-9xk2",
        "NodeNotSchedulable",
    )
    assert snapshot.kubernetes.nodes_complete is False


def test_several_nodes_back_to_back_and_unnamed_fragments_are_numbered() -> None:
    fragment = "Capacity:\n cpu: 4\n nvidia.com/gpu: 1\nAllocatable:\n cpu: 4\n nvidia.com/gpu: 1\n"
    paste = DESCRIBE_NODE + "\n\n" + DESCRIBE_NODE.replace("9xk2", "7abc") + "\n" + fragment + "\n" + fragment

    snapshot = parse_paste(paste)

    assert snapshot.kubernetes is not None
    names = [node.name for node in snapshot.kubernetes.nodes]
    assert names == [
        "gke-ray-gpu-pool-3f1e2d4c-9xk2",
        "gke-ray-gpu-pool-3f1e2d4c-7abc",
        "(pasted node 1)",
        "(pasted node 2)",
    ]
    assert snapshot.kubernetes.nodes[2].allocatable["nvidia.com/gpu"] == 1.0


def test_describe_of_another_kind_contributes_only_its_events() -> None:
    paste = """\
Name:         raycluster-gpu
Namespace:    ray
Labels:       <none>
API Version:  ray.io/v1
Kind:         RayCluster
Spec:
  Ray Version:  2.9.0
Events:
  Type     Reason             Age   From                   Message
  ----     ------             ----  ----                   -------
  Warning  FailedToCreatePod  12s   raycluster-controller  Failed to create worker Pod ray/raycluster-gpu-worker-x, pods "raycluster-gpu-worker-x" is forbidden: exceeded quota: gpu-quota, requested: requests.nvidia.com/gpu=1, used: requests.nvidia.com/gpu=4, limited: requests.nvidia.com/gpu=4
"""

    snapshot = parse_paste(paste)

    assert snapshot.kubernetes is not None
    assert snapshot.kubernetes.pods == [] and snapshot.kubernetes.nodes == []
    (event,) = snapshot.kubernetes.events
    assert (event.object_kind, event.object_name, event.namespace) == ("RayCluster", "raycluster-gpu", "ray")
    assert "exceeded quota" in event.message


def test_describe_and_table_row_of_the_same_pod_merge() -> None:
    paste = (
        "$ kubectl get pods -n ray\nNAME READY STATUS RESTARTS AGE\n"
        "raycluster-gpu-worker-gpu-group-4kq9d   0/1   Pending   0   60m\n\n" + DESCRIBE_POD
    )

    snapshot = parse_paste(paste)

    assert snapshot.kubernetes is not None
    (pod,) = snapshot.kubernetes.pods
    assert pod.display_status == "Pending"
    assert pod.requests["nvidia.com/gpu"] == 1.0
    assert pod.labels["ray.io/cluster"] == "raycluster-gpu"


def test_kubernetes_1_9_describe_with_tabs_and_old_events_layout() -> None:
    paste = (
        "Name:\t\tgpu-pod\nNamespace:\tdefault\nNode:\t\t<none>\nStatus:\t\tPending\nContainers:\n  cuda:\n"
        "    Image:\tnvidia/cuda:9.0-base\n    Limits:\n      nvidia.com/gpu:\t1\n"
        "Events:\n"
        "  FirstSeen\tLastSeen\tCount\tFrom\t\t\tSubObjectPath\tType\t\tReason\t\t\tMessage\n"
        "  ---------\t--------\t-----\t----\t\t\t-------------\t--------\t------\t\t\t-------\n"
        "  2m\t\t12s\t\t12\tdefault-scheduler\t\t\tWarning\t\tFailedScheduling\tNo nodes are available "
        "that match all of the following predicates:: Insufficient nvidia.com/gpu (1).\n"
    )

    snapshot = parse_paste(paste)

    assert snapshot.kubernetes is not None
    (pod,) = snapshot.kubernetes.pods
    assert (pod.name, pod.phase, pod.requests) == ("gpu-pod", "Pending", {"nvidia.com/gpu": 1.0})
    (event,) = snapshot.kubernetes.events
    assert (event.reason, event.count, event.source, event.object_name) == (
        "FailedScheduling",
        12,
        "default-scheduler",
        "gpu-pod",
    )
    assert event.message.startswith("No nodes are available that match all of the following predicates")
    assert "scheduler message" in snapshot.notes


def test_evicted_pod_describe_keeps_reason_and_message() -> None:
    paste = """\
Name:           train-worker-0
Namespace:      ml
Node:           gpu-node-2/10.0.4.7
Status:         Failed
Reason:         Evicted
Message:        The node was low on resource: ephemeral-storage. Container ray-worker was using 52Gi, which exceeds its request of 0.
IP:
Containers:
  ray-worker:
    Image:          rayproject/ray:2.9.0-gpu
    State:          Terminated
      Reason:       ContainerStatusUnknown
      Exit Code:    137
    Ready:          False
    Restart Count:  0
"""

    snapshot = parse_paste(paste)

    assert snapshot.kubernetes is not None
    (pod,) = snapshot.kubernetes.pods
    assert (pod.phase, pod.status_reason) == ("Failed", "Evicted")
    assert pod.status_message is not None and "low on resource: ephemeral-storage" in pod.status_message
    (status,) = pod.container_statuses
    assert (status.state, status.reason, status.exit_code) == ("terminated", "ContainerStatusUnknown", 137)
    assert pod.pod_ip is None and pod.host_ip == "10.0.4.7"


# kubeflow/kubeflow#5275: a pod's Tolerations pasted straight above a GKE node's Capacity, no Name:
# for either, the last toleration cut mid-word as it was pasted.
NAMELESS_TOLERATIONS_ABOVE_CAPACITY = """\
Tolerations:     node.kubernetes.io/not-ready:NoExecute for 300s
                 node.kubernetes.io/unreachable:NoExecute for 300s
                 nvidia.com/gpu=present:NoSched

Capacity:
 attachable-volumes-gce-pd:  127
 cpu:                        16
 memory:                     107260540Ki
 pods:                       110
"""


def test_gpu_lines_of_a_nameless_pod_fragment_are_kept_as_text() -> None:
    snapshot = parse_paste(NAMELESS_TOLERATIONS_ABOVE_CAPACITY)
    assert snapshot.kubernetes is not None
    assert [n.name for n in snapshot.kubernetes.nodes] == ["(pasted node)"]
    assert snapshot.kubernetes.pods == []
    assert [t.text for t in snapshot.texts] == ["nvidia.com/gpu=present:NoSched"]
