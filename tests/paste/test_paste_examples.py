"""The real pasted examples in tests/corpus/shared-examples parse into the facts their diagnoses need."""

from __future__ import annotations

from collections.abc import Callable

from bot.collect.paste import parse_paste

Example = Callable[[str], str]


def test_aibrix_pod_table_and_event_row_attach_the_taint_message_to_the_pending_pod(example: Example) -> None:
    snapshot = parse_paste(example("aibrix-909-gke-gpu-taint-kvcache-pod-pending.txt"))

    assert snapshot.origin == "paste"
    assert snapshot.kubernetes is not None and snapshot.ray is None
    pods = {pod.name: pod for pod in snapshot.kubernetes.pods}
    assert len(pods) == 3
    crashing = pods["deepseek-coder-7b-instruct-688778dd76-wzwmg"]
    assert crashing.display_status == "CrashLoopBackOff"
    assert crashing.container_statuses[0].reason == "CrashLoopBackOff"
    assert crashing.container_statuses[0].restart_count == 13
    assert not crashing.ready
    pending = pods["deepseek-coder-7b-kvcache-7c984cdff8-xq5pk"]
    assert pending.phase == "Pending" and pending.unscheduled
    assert pods["deepseek-coder-7b-kvcache-etcd-0"].ready
    (event,) = snapshot.kubernetes.events
    assert event.reason == "FailedScheduling"
    assert event.count == 42
    assert event.source == "default-scheduler"
    assert event.object_name == "deepseek-coder-7b-kvcache-7c984cdff8-xq5pk"
    assert event.message == "1 node(s) had untolerated taint {nvidia.com/gpu: present}"
    assert snapshot.notes[:2] == ["kubectl get pods", "kubernetes event line"]


def test_autoscaler_quote_becomes_a_not_trigger_scale_up_event_and_text(example: Example) -> None:
    snapshot = parse_paste(example("k8s-autoscaler-5692-max-node-group-size-reached.txt"))

    assert snapshot.kubernetes is not None
    (event,) = snapshot.kubernetes.events
    assert event.reason == "NotTriggerScaleUp"
    assert event.message.startswith("pod didn't trigger scale-up: 12 node(s) didn't match")
    assert event.message.endswith("3 max node group size reached.")
    assert "max node group size reached" in snapshot.texts[0].text
    assert snapshot.notes == ["cluster-autoscaler message"]


def test_device_plugin_165_pod_manifest_heading_and_node_capacity(example: Example) -> None:
    snapshot = parse_paste(example("k8s-device-plugin-165-pod-asks-4-gpus-nodes-have-1.txt"))

    assert snapshot.kubernetes is not None
    (pod,) = snapshot.kubernetes.pods
    assert pod.name == "gpu-pod"
    # No status in the manifest, but the scheduler message in the heading is about it.
    assert pod.phase == "Pending"
    assert [c.name for c in pod.containers] == ["cuda-container", "digits-container"]
    assert pod.requests["nvidia.com/gpu"] == 4
    (event,) = snapshot.kubernetes.events
    assert event.reason == "FailedScheduling"
    assert event.object_name == "gpu-pod"
    assert event.message == "0/3 nodes are available: 3 insufficient nvidia.com/gpu"
    (node,) = snapshot.kubernetes.nodes
    assert node.name == "(pasted node)"
    assert node.internal_ip == "140.124.44.9"
    assert node.allocatable["nvidia.com/gpu"] == 1
    assert node.allocatable["memory"] == 16306144 * 1024
    assert snapshot.kubernetes.nodes_complete is False
    assert (
        snapshot.texts[0].text == "It always output 0/3 nodes are available: 3 insufficient nvidia.com/gpu!"
    )


def test_device_plugin_68_capacity_only_node_keeps_the_legacy_gpu_resource(example: Example) -> None:
    snapshot = parse_paste(example("k8s-device-plugin-68-taint-repels-device-plugin-wrong-resource-name.txt"))

    assert snapshot.kubernetes is not None
    (node,) = snapshot.kubernetes.nodes
    assert node.name == "(pasted node)"
    assert node.capacity["alpha.kubernetes.io/nvidia-gpu"] == 1
    assert node.allocatable["cpu"] == 4
    assert "nvidia.com/gpu" not in node.allocatable
    assert snapshot.notes == ["kubectl describe node"]


def test_kuberay_1990_headerless_rows_keep_image_pull_reasons(example: Example) -> None:
    snapshot = parse_paste(example("kuberay-1990-bad-image-errimagepull-rayjob-initializing.txt"))

    assert snapshot.kubernetes is not None
    head, worker = snapshot.kubernetes.pods
    assert head.name == "rayjob-sample-raycluster-s2p7k-head-7tvcr"
    assert head.display_status == "ErrImagePull"
    assert head.phase == "Pending"
    assert head.container_statuses[0].reason == "ErrImagePull"
    assert worker.display_status == "Init:ImagePullBackOff"
    assert worker.container_statuses[0].init
    assert worker.container_statuses[0].reason == "ImagePullBackOff"
    assert any("Initializing" in line.text for line in snapshot.texts)


def test_kuberay_846_status_totals_and_both_demands(example: Example) -> None:
    snapshot = parse_paste(example("kuberay-846-cpu2-on-1cpu-workers.txt"))

    assert snapshot.ray is not None and snapshot.kubernetes is None
    ray = snapshot.ray
    assert ray.node_count == 2
    assert ray.node_groups == {"head-group": 1, "workergroup": 1}
    assert ray.totals["CPU"] == 2.0 and ray.used["CPU"] == 0.0
    assert ray.totals["memory"] == round(3.725 * 2**30)
    pending, infeasible = ray.demands
    assert pending.shape == {"CPU": 2.0} and pending.count == 10000 and not pending.infeasible
    assert infeasible.shape == {"CPU": 2.0} and infeasible.infeasible
    assert "could not find a node type" in snapshot.texts[0].text
    assert snapshot.notes == ["ray status", "ray autoscaler message"]


def test_mm_eureka_gcs_failures_and_ray_start_command_are_text(example: Example) -> None:
    snapshot = parse_paste(example("mm-eureka-54-empty-master-addr-gcs-address.txt"))

    assert snapshot.kubernetes is None and snapshot.ray is not None
    # The command line is a fact of what the worker declares; it invents no Ray node or total.
    (command,) = snapshot.ray.start_commands
    assert command.address == ":6379" and command.num_gpus == 8.0 and not command.head
    assert not snapshot.ray.nodes and not snapshot.ray.totals and snapshot.ray.node_count is None
    texts = [line.text for line in snapshot.texts]
    assert "ray start --address=:6379 --num-gpus 8 --block" in texts
    assert any("Failed to connect to GCS at address :6379" in text for text in texts)
    assert any("Failed to get cluster ID from GCS server" in text for text in texts)
    assert "ray connection messages" in snapshot.notes


def test_ray_15594_warning_gives_the_demand_and_the_node_it_ran_on(example: Example) -> None:
    snapshot = parse_paste(example("ray-15594-second-gpu-actor-waits-on-first.txt"))

    assert snapshot.ray is not None
    (demand,) = snapshot.ray.demands
    assert demand.shape == {"CPU": 1.0, "GPU": 1.0}
    assert demand.kind == "task_or_actor"
    (node,) = snapshot.ray.nodes
    assert node.node_ip == "192.168.178.28"
    assert node.resources_total["GPU"] == 1.0 and node.resources_total["CPU"] == 12.0
    assert node.resources_available == {
        "CPU": 11.0,
        "memory": round(4.498190 * 2**30),
        "GPU": 0.0,
        "object_store_memory": round(2.249095 * 2**30),
        "node:192.168.178.28": 1.0,
    }
    # The wrapped continuation line is part of the one logical message.
    (text,) = snapshot.texts
    assert "node:192.168.178.28}. In total there are 0 pending tasks" in text.text


def test_ray_50348_active_nodes_are_counted_but_not_groups(example: Example) -> None:
    snapshot = parse_paste(example("ray-50348-single-task-16gpu-on-two-8gpu-nodes.txt"))

    assert snapshot.ray is not None
    assert snapshot.ray.node_count == 2
    assert snapshot.ray.node_groups == {}
    assert snapshot.ray.totals["GPU"] == 16.0
    assert snapshot.ray.totals["memory"] == round(3.56 * 2**40)
    assert snapshot.ray.used["memory"] == 0.0
    (demand,) = snapshot.ray.demands
    assert demand.shape == {"GPU": 16.0} and demand.count == 1


def test_ray_llm_wrapped_infeasible_error_and_node_type_snippet(example: Example) -> None:
    snapshot = parse_paste(example("ray-llm-120-node-type-resources-omit-gpu.txt"))

    assert snapshot.ray is not None
    (demand,) = snapshot.ray.demands
    assert demand.infeasible
    assert demand.shape == {"accelerator_type_a10": 0.02, "CPU": 9.0, "GPU": 1.0}
    (node_type,) = snapshot.ray.node_types
    assert node_type.name == "gpu_worker_g5"
    assert node_type.explicit
    assert node_type.resources == {"worker_node": 1.0, "instance_type_g5": 1.0, "accelerator_type_a10": 1.0}
    assert (node_type.min_workers, node_type.max_workers) == (0, 4)
    (text,) = snapshot.texts
    assert text.text.startswith("Error: No available node types can fulfill resource request defaultdict(")
    assert text.text.endswith("Add suitable node types to this cluster to resolve this issue.")
