"""``kubectl get pods``, ``kubectl get events`` and KubeRay resource tables."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.collect.paste import parse_paste
from bot.snapshot.kubernetes import Pod

WIDE_ALL_NAMESPACES = """\
NAMESPACE     NAME                                          READY   STATUS                       RESTARTS        AGE     IP            NODE                          NOMINATED NODE   READINESS GATES
ray           raycluster-gpu-head-x7k2p                     1/1     Running                      0               3h12m   10.244.1.12   gke-pool-cpu-7c1a2b3c-x9z8    <none>           <none>
ray           raycluster-gpu-worker-gpu-group-4kq9d         0/1     Pending                      0               3h12m   <none>        <none>                        <none>           <none>
ray           raycluster-gpu-worker-gpu-group-9tz2m         0/1     Init:0/1                     0               12m     10.244.2.4    gke-pool-gpu-1d2e3f4a-q1w2    <none>           <none>
ray           rayjob-submitter-ws7xv                        0/1     Error                        0               40m     10.244.1.30   gke-pool-cpu-7c1a2b3c-x9z8    <none>           <none>
kube-system   nvidia-device-plugin-daemonset-2l9hx          0/1     CrashLoopBackOff             7 (2m13s ago)   15m     10.244.2.3    gke-pool-gpu-1d2e3f4a-q1w2    <none>           <none>
default       train-0                                       0/1     OOMKilled                    3 (45s ago)     9m      10.244.2.9    gke-pool-gpu-1d2e3f4a-q1w2    <none>           <none>
default       serve-app-5d9c8b7f6-abcde                     0/1     CreateContainerConfigError   0               3m      10.244.1.40   gke-pool-cpu-7c1a2b3c-x9z8    <none>           <none>
default       old-job-xyz12                                 0/1     Completed                    0               2d      10.244.1.5    gke-pool-cpu-7c1a2b3c-x9z8    <none>           <none>
default       evicted-pod-1                                 0/1     Evicted                      0               5h      <none>        gke-pool-cpu-7c1a2b3c-x9z8    <none>           <none>
default       going-away-1                                  1/1     Terminating                  0               6m      10.244.1.41   gke-pool-cpu-7c1a2b3c-x9z8    <none>           <none>
default       new-pod-1                                     0/1     ContainerCreating            0               4s      <none>        gke-pool-cpu-7c1a2b3c-x9z8    <none>           <none>
default       init-pod-1                                    0/1     PodInitializing              0               20s     10.244.1.42   gke-pool-cpu-7c1a2b3c-x9z8    <none>           <none>
"""


def _pods(text: str) -> dict[str, Pod]:
    snapshot = parse_paste(text)
    assert snapshot.kubernetes is not None
    return {pod.name: pod for pod in snapshot.kubernetes.pods}


def test_wide_table_with_namespace_column() -> None:
    pods = _pods(WIDE_ALL_NAMESPACES)

    assert len(pods) == 12
    head = pods["raycluster-gpu-head-x7k2p"]
    assert (head.namespace, head.phase, head.ready) == ("ray", "Running", True)
    assert head.pod_ip == "10.244.1.12" and head.node_name == "gke-pool-cpu-7c1a2b3c-x9z8"
    pending = pods["raycluster-gpu-worker-gpu-group-4kq9d"]
    assert pending.unscheduled and pending.pod_ip is None and pending.container_statuses == []
    init = pods["raycluster-gpu-worker-gpu-group-9tz2m"]
    assert init.phase == "Pending" and init.container_statuses[0].init
    assert init.display_status == "Init:0/1"
    plugin = pods["nvidia-device-plugin-daemonset-2l9hx"]
    assert plugin.namespace == "kube-system"
    assert plugin.container_statuses[0].restart_count == 7
    assert plugin.phase == "Running"


@pytest.mark.parametrize(
    ("name", "phase", "state", "reason"),
    [
        ("rayjob-submitter-ws7xv", "Failed", "terminated", "Error"),
        ("train-0", "Running", "terminated", "OOMKilled"),
        ("serve-app-5d9c8b7f6-abcde", "Pending", "waiting", "CreateContainerConfigError"),
        ("old-job-xyz12", "Succeeded", "terminated", "Completed"),
        ("new-pod-1", "Pending", "waiting", "ContainerCreating"),
        ("init-pod-1", "Pending", "waiting", "PodInitializing"),
    ],
)
def test_status_column_becomes_phase_and_container_state(
    name: str, phase: str, state: str, reason: str
) -> None:
    pod = _pods(WIDE_ALL_NAMESPACES)[name]

    assert pod.phase == phase
    (status,) = pod.container_statuses
    assert (status.name, status.state, status.reason) == ("(unknown)", state, reason)
    assert pod.condition("PodScheduled") is not None


def test_evicted_and_terminating_rows() -> None:
    pods = _pods(WIDE_ALL_NAMESPACES)

    assert pods["evicted-pod-1"].phase == "Failed"
    assert pods["evicted-pod-1"].status_reason == "Evicted"
    assert pods["going-away-1"].deleting and pods["going-away-1"].phase == "Running"


def test_plain_table_after_a_prompt_takes_the_namespace_from_the_command() -> None:
    paste = """\
user@bastion:~$ kubectl get pods -n kuberay
NAME                                 READY   STATUS             RESTARTS      AGE
kuberay-operator-6b68b5b49d-rv8xj    1/1     Running            0             2d
raycluster-kuberay-head-jw5zm        0/1     ImagePullBackOff   0             10m
"""

    pods = _pods(paste)

    assert {pod.namespace for pod in pods.values()} == {"kuberay"}
    head = pods["raycluster-kuberay-head-jw5zm"]
    assert head.container_statuses[0].reason == "ImagePullBackOff"
    assert head.phase == "Pending"


def test_rows_without_header_and_without_namespace_are_default() -> None:
    paste = "gpu-job-7k2lp   0/1   Pending   0   3m12s\ngpu-job-9x8zq   1/1   Running   2 (30m ago)   1h\n"

    pods = _pods(paste)

    assert pods["gpu-job-7k2lp"].namespace == "default"
    assert pods["gpu-job-7k2lp"].unscheduled
    running = pods["gpu-job-9x8zq"]
    assert running.ready and running.phase == "Running"


def test_prose_with_slashes_is_not_a_pod_row() -> None:
    snapshot = parse_paste("we have 2 nodes 1/2 ready since yesterday\n")

    assert snapshot.kubernetes is None


GET_EVENTS = """\
LAST SEEN   TYPE      REASON              OBJECT                                      MESSAGE
2m21s       Warning   FailedScheduling    pod/raycluster-gpu-worker-gpu-group-4kq9d   0/3 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, 2 Insufficient nvidia.com/gpu. preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod.
60s         Normal    NotTriggerScaleUp   pod/raycluster-gpu-worker-gpu-group-4kq9d   pod didn't trigger scale-up: 1 max node group size reached
5m          Normal    Pulled              pod/raycluster-gpu-head-x7k2p               Container image "rayproject/ray:2.9.0" already present on machine
3m          Warning   FailedCreatePodSandBox   pod/other-1                            Failed to create pod sandbox: rpc error
"""

GET_EVENTS_ALL_NAMESPACES = """\
NAMESPACE   LAST SEEN   TYPE      REASON             OBJECT                    MESSAGE
ray         12s         Warning   FailedScheduling   pod/ray-worker-abc12      0/5 nodes are available: 5 node(s) didn't match Pod's node affinity/selector.
ray         40s         Warning   BackOff            pod/ray-head-xyz98        Back-off restarting failed container ray-head in pod ray-head-xyz98_ray(1234)
"""

OLD_KUBECTL_EVENTS = """\
LAST SEEN   FIRST SEEN   COUNT     NAME                              KIND      SUBOBJECT   TYPE      REASON             SOURCE              MESSAGE
1m          1h           120       gpu-pod.15f3c2a1b4e5d6c7          Pod                   Warning   FailedScheduling   default-scheduler   0/3 nodes are available: 3 Insufficient nvidia.com/gpu.
"""


def test_get_events_table() -> None:
    snapshot = parse_paste(GET_EVENTS)

    assert snapshot.kubernetes is not None
    scheduling, scale_up, pulled, sandbox = snapshot.kubernetes.events
    assert scheduling.object_kind == "Pod"
    assert scheduling.object_name == "raycluster-gpu-worker-gpu-group-4kq9d"
    assert scheduling.type == "Warning"
    assert scheduling.message.startswith("0/3 nodes are available: 1 node(s) had untolerated taint")
    assert scheduling.message.endswith("No preemption victims found for incoming pod.")
    assert scale_up.reason == "NotTriggerScaleUp"
    assert pulled.type == "Normal"
    assert sandbox.reason == "FailedCreatePodSandBox" and sandbox.object_name == "other-1"
    assert snapshot.notes == ["kubectl get events"]
    assert snapshot.texts == []


def test_get_events_with_namespace_column() -> None:
    snapshot = parse_paste(GET_EVENTS_ALL_NAMESPACES)

    assert snapshot.kubernetes is not None
    first, second = snapshot.kubernetes.events
    assert (first.namespace, first.object_name) == ("ray", "ray-worker-abc12")
    assert first.message.endswith("didn't match Pod's node affinity/selector.")
    assert (second.reason, second.object_name) == ("BackOff", "ray-head-xyz98")


def test_old_kubectl_events_columns() -> None:
    snapshot = parse_paste(OLD_KUBECTL_EVENTS)

    assert snapshot.kubernetes is not None
    (event,) = snapshot.kubernetes.events
    assert event.count == 120
    assert (event.object_kind, event.object_name) == ("Pod", "gpu-pod")
    assert event.source == "default-scheduler"
    assert event.message == "0/3 nodes are available: 3 Insufficient nvidia.com/gpu."


def test_misaligned_event_rows_are_read_by_tokens() -> None:
    paste = "LAST SEEN TYPE REASON OBJECT MESSAGE\n3m Warning FailedScheduling pod/x-1 0/2 nodes are available: 2 Insufficient cpu.\n"

    snapshot = parse_paste(paste)

    assert snapshot.kubernetes is not None
    (event,) = snapshot.kubernetes.events
    assert (event.reason, event.object_name) == ("FailedScheduling", "x-1")
    assert event.message == "0/2 nodes are available: 2 Insufficient cpu."


def test_loose_event_rows_of_both_shapes() -> None:
    paste = """\
  Warning  FailedScheduling  3m (x5 over 10m)  default-scheduler  0/4 nodes are available: 4 Insufficient memory.
12s   Warning   FailedScheduling   pod/ray-worker-q1   0/4 nodes are available: 4 Insufficient nvidia.com/gpu.
Warning  FailedScheduling  45s  karpenter  Failed to schedule pod, incompatible with nodepool "gpu", no instance type satisfied resources {"cpu":"8","nvidia.com/gpu":"2"}
"""

    snapshot = parse_paste(paste)

    assert snapshot.kubernetes is not None
    describe_row, get_row, karpenter = snapshot.kubernetes.events
    assert describe_row.count == 5 and describe_row.object_name is None
    assert get_row.object_name == "ray-worker-q1"
    assert karpenter.source == "karpenter"
    assert "incompatible with nodepool" in karpenter.message
    assert "karpenter message" in snapshot.notes
    assert len(snapshot.texts) == 3


def test_kuberay_resource_tables() -> None:
    paste = """\
$ kubectl get rayjob,raycluster -n ray
NAME            JOB STATUS   DEPLOYMENT STATUS   RAY CLUSTER NAME                START TIME             END TIME   AGE
rayjob-sample                Initializing        rayjob-sample-raycluster-s2p7k   2024-03-13T20:27:15Z              42m

NAME                             DESIRED WORKERS   AVAILABLE WORKERS   CPUS   MEMORY   GPUS   STATUS   AGE
rayjob-sample-raycluster-s2p7k   1                                     400m   0        0               42m
"""

    snapshot = parse_paste(paste)

    assert snapshot.kubernetes is not None
    (job,) = snapshot.kubernetes.rayjobs
    assert (job.name, job.namespace, job.job_status, job.deployment_status) == (
        "rayjob-sample",
        "ray",
        None,
        "Initializing",
    )
    assert job.cluster_name == "rayjob-sample-raycluster-s2p7k"
    (cluster,) = snapshot.kubernetes.rayclusters
    assert cluster.desired_workers == 1 and cluster.ready_workers is None and cluster.state is None


def test_kubernetes_1_9_get_events_headers_without_spaces() -> None:
    paste = """\
LASTSEEN   FIRSTSEEN   COUNT     NAME                         KIND      SUBOBJECT   TYPE      REASON             SOURCE              MESSAGE
1m         1h          61        gpu-pod.1520b2a2c3d4e5f6     Pod                   Warning   FailedScheduling   default-scheduler   No nodes are available that match all of the predicates: Insufficient nvidia.com/gpu (2).
"""

    snapshot = parse_paste(paste)

    assert snapshot.kubernetes is not None
    (event,) = snapshot.kubernetes.events
    assert (event.object_kind, event.object_name, event.count) == ("Pod", "gpu-pod", 61)
    assert event.message.endswith("Insufficient nvidia.com/gpu (2).")


def test_label_columns_after_age_are_not_mistaken_for_ip_and_node() -> None:
    paste = """\
$ kubectl get pods -L ray.io/node-type
NAME                          READY   STATUS    RESTARTS   AGE   NODE-TYPE
raycluster-a-head-5v7kd       1/1     Running   0          20m   head
raycluster-a-worker-x-2kq9d   0/1     Pending   0          20m   worker
"""

    pods = _pods(paste)

    assert pods["raycluster-a-head-5v7kd"].node_name is None
    assert pods["raycluster-a-worker-x-2kq9d"].pod_ip is None
    assert pods["raycluster-a-worker-x-2kq9d"].unscheduled


def test_watch_output_keeps_the_latest_row_of_each_pod() -> None:
    paste = """\
$ kubectl get pods -w
NAME           READY   STATUS              RESTARTS   AGE
ray-worker-1   0/1     Pending             0          0s
ray-worker-1   0/1     ContainerCreating   0          2s
ray-worker-1   0/1     ErrImagePull        0          20s
"""

    (pod,) = _pods(paste).values()

    assert pod.display_status == "ErrImagePull"
    assert pod.container_statuses[0].reason == "ErrImagePull"


# Tables printed by the real kubectl (tools/record_kubectl_corpus.py), with the printer columns of
# each KubeRay release ---------------------------------------------------------------------------

RECORDED = Path(__file__).parent / "kubectl_recorded"


def _recorded(stem: str) -> str:
    return (RECORDED / f"{stem}.txt").read_text(encoding="utf-8")


@pytest.mark.parametrize("release", ["1.1", "1.2"])
def test_recorded_raycluster_and_rayjob_tables_of_each_release(release: str) -> None:
    snapshot = parse_paste(_recorded(f"kuberay-{release}-get-raycluster-rayjob"))
    assert snapshot.kubernetes is not None
    (cluster,) = snapshot.kubernetes.rayclusters
    assert (cluster.name, cluster.state, cluster.desired_workers, cluster.ready_workers) == (
        "raycluster-gpu",
        "ready",
        4,
        4,
    )
    (job,) = snapshot.kubernetes.rayjobs
    assert (job.name, job.job_status, job.deployment_status) == ("nightly-eval", "FAILED", "Failed")
    assert job.cluster_name == ("raycluster-gpu" if release == "1.2" else None)


def test_recorded_kuberay_1_0_table_has_no_job_columns() -> None:
    snapshot = parse_paste(_recorded("kuberay-1.0-get-raycluster-rayjob"))
    assert snapshot.kubernetes is not None
    assert [c.name for c in snapshot.kubernetes.rayclusters] == ["raycluster-gpu"]
    assert snapshot.kubernetes.rayjobs == []  # NAME and AGE only: nothing to read


def test_recorded_wide_all_namespaces_ray_tables() -> None:
    snapshot = parse_paste(_recorded("kuberay-1.2-get-raycluster-wide-all-namespaces"))
    assert snapshot.kubernetes is not None
    (cluster,) = snapshot.kubernetes.rayclusters
    assert (cluster.namespace, cluster.state, cluster.desired_workers) == ("ml", "ready", 4)
    snapshot = parse_paste(_recorded("kuberay-1.2-get-rayjob-wide-all-namespaces"))
    assert snapshot.kubernetes is not None
    (job,) = snapshot.kubernetes.rayjobs
    assert (job.namespace, job.job_status, job.cluster_name) == ("ml", "FAILED", "raycluster-gpu")


def test_recorded_kind_prefixed_names() -> None:
    snapshot = parse_paste(_recorded("get-pods-kinds-prefixed"))
    assert snapshot.kubernetes is not None
    pods = {pod.name: pod for pod in snapshot.kubernetes.pods}
    assert len(pods) == 5 and all(not name.startswith("pod/") for name in pods)
    assert pods["raycluster-gpu-gpu-a100-worker-zr8xd"].display_status == "CrashLoopBackOff"
    assert [c.name for c in snapshot.kubernetes.rayclusters] == ["raycluster-gpu"]


def test_recorded_wide_pods_with_nominated_node_and_readiness_gates() -> None:
    pods = _pods(_recorded("get-pods-wide-image-pull"))
    pulling = pods["raycluster-gpu-gpu-a100-worker-h6b5n"]
    assert (pulling.display_status, pulling.node_name, pulling.pod_ip) == (
        "ImagePullBackOff",
        "gpu-a100-1",
        "10.8.3.10",
    )
    assert pulling.container_statuses[0].reason == "ImagePullBackOff"


@pytest.mark.parametrize(
    ("name", "status", "phase", "state", "exit_code"),
    [
        ("raycluster-gpu-gpu-a100-worker-h6b5n", "ExitCode:137", "Failed", "terminated", 137),
        ("raycluster-gpu-gpu-a100-worker-zr8xd", "Signal:9", "Failed", "terminated", None),
        ("raycluster-gpu-cpu-workers-worker-4jv9t", "Init:ExitCode:1", "Pending", "terminated", None),
        ("raycluster-gpu-head-8x2kq", "NotReady", "Running", None, None),
    ],
)
def test_statuses_the_printer_writes_without_a_reason(
    name: str, status: str, phase: str, state: str | None, exit_code: int | None
) -> None:
    pod = _pods(_recorded("get-pods-statuses-without-reason"))[name]
    assert (pod.phase, pod.display_status) == (phase, status)
    if state is None:
        assert pod.container_statuses == []
    else:
        assert pod.container_statuses[0].state == state
        assert pod.container_statuses[0].exit_code == exit_code
