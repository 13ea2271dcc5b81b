"""``ray status`` in the layouts Ray has printed since 1.x."""

from __future__ import annotations

from bot.collect.paste import parse_paste
from tests.support.corpus import CORPUS

GIB = 2**30

RAY_1_X = """\
======== Autoscaler status: 2022-06-01 10:00:00.123456 ========
Node status
---------------------------------------------------------------
Healthy:
 1 rayHeadType
 2 rayWorkerType
Pending:
 10.0.3.17: rayWorkerType, setting up
 10.0.3.18: rayWorkerType, launching
Recent failures:
 10.0.3.9: rayWorkerType

Resources
---------------------------------------------------------------
Usage:
 4.0/12.0 CPU
 1.0/2.0 GPU
 1.0/2.0 accelerator_type:T4
 0.00/33.528 GiB memory
 0.00/14.365 GiB object_store_memory

Demands:
 {'GPU': 2.0}: 1+ pending tasks/actors
 {'CPU': 1.0, 'GPU': 1.0} * 2 (STRICT_PACK): 3+ pending placement groups
 {'CPU': 8.0}: 1+ from request_resources()
"""

RAY_2_V2_AUTOSCALER = """\
======== Autoscaler status: 2024-01-24 08:21:04.803420 ========
GCS request time: 0.001187s
Node Provider non_terminated_nodes time: 0.004050s

Node status
--------------------------------------------------------
Active:
 (no active nodes)
Idle:
 1 headgroup
 1 small-group
Pending:
 (no pending nodes)
Recent failures:
 (no failures)

Resources
--------------------------------------------------------
Total Usage:
 0.0/2.0 CPU
 0.0/8.0 GPU (0.0 used of 8.0 reserved in placement groups)
 0B/3.00GiB memory
 0B/769.79MiB object_store_memory

Total Constraints:
 (no request_resources() constraints)
Total Demands:
 (no resource demands)
"""

RAY_STATUS_VERBOSE = """\
======== Autoscaler status: 2024-02-12 08:37:50.123456 ========
Node status
---------------------------------------------------------------
Active:
 1 head-group
 1 gpu-group
Pending:
 gpu-group, 1 launching
Recent failures:
 gpu-group: LaunchFailed (latest_attempt: 08:35:10) - InsufficientInstanceCapacity

Resources
---------------------------------------------------------------
Total Usage:
 2.0/6.0 CPU
 1.0/1.0 GPU
 1.0/1.0 accelerator_type:A10G
 1.00GiB/22.00GiB memory
 0B/6.29GiB object_store_memory

Total Demands:
 {'CPU': 1.0, 'GPU': 1.0}: 3+ pending tasks/actors

Node: 5a4c0e3f9d8f6e2b1c0a9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b2a (head-group)
 Usage:
  1.0/2.0 CPU
  1.00GiB/8.00GiB memory
  0B/2.29GiB object_store_memory
 Activity:
  Resource: CPU currently in use.

Node: 9b8a7f6e5d4c3b2a1f0e9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e (10.244.2.7)
 Usage:
  1.0/4.0 CPU
  1.0/1.0 GPU
  1.0/1.0 accelerator_type:A10G
  0B/14.00GiB memory
  0B/4.00GiB object_store_memory
 Activity:
  Resource: GPU currently in use.
  Busy workers on node.
"""

RAY_1_0_SUMMARY = """\
Cluster status: 3 nodes
 - MostDelayedHeartbeats: {'10.0.0.1': 0.21, '10.0.0.2': 0.14}
 - NodeIdleSeconds: Min=0 Mean=10 Max=30
 - ResourceUsage: 2.0/12.0 CPU, 1.0/2.0 GPU, 0.0 GiB/30.5 GiB memory, 0.0 GiB/9.2 GiB object_store_memory
 - TimeSinceLastHeartbeat: Min=0 Mean=0 Max=0
Worker node types:
 - cpu_worker: 1
 - gpu_worker: 1
"""


def test_ray_1_x_layout_reads_groups_pending_failures_and_every_demand_kind() -> None:
    ray = parse_paste(RAY_1_X).ray

    assert ray is not None
    assert ray.node_count == 3
    assert ray.node_groups == {"rayHeadType": 1, "rayWorkerType": 2}
    assert ray.pending_nodes == [
        "10.0.3.17: rayWorkerType, setting up",
        "10.0.3.18: rayWorkerType, launching",
    ]
    assert ray.recent_failures == ["10.0.3.9: rayWorkerType"]
    assert ray.totals["GPU"] == 2.0 and ray.used["GPU"] == 1.0
    assert ray.totals["accelerator_type:T4"] == 2.0
    assert ray.totals["memory"] == round(33.528 * GIB)
    tasks, group = ray.demands
    assert (tasks.kind, tasks.shape, tasks.count) == ("task_or_actor", {"GPU": 2.0}, 1)
    assert group.kind == "placement_group"
    assert group.strategy == "STRICT_PACK"
    assert group.bundles == [{"CPU": 1.0, "GPU": 1.0}, {"CPU": 1.0, "GPU": 1.0}]
    assert group.count == 3
    assert group.largest_single_request == {"CPU": 2.0, "GPU": 2.0}
    assert [(c.shape, c.count) for c in ray.constraints] == [({"CPU": 8.0}, 1)]
    assert ray.nodes == []


def test_v2_autoscaler_layout_with_idle_groups_and_placement_group_note() -> None:
    snapshot = parse_paste(RAY_2_V2_AUTOSCALER)
    ray = snapshot.ray

    assert ray is not None
    assert ray.node_count == 2
    assert ray.node_groups == {"headgroup": 1, "small-group": 1}
    assert ray.totals == {
        "CPU": 2.0,
        "GPU": 8.0,
        "memory": 3 * GIB,
        "object_store_memory": round(769.79 * 2**20),
    }
    assert ray.used["GPU"] == 0.0
    assert ray.demands == [] and ray.pending_nodes == [] and ray.recent_failures == []
    assert snapshot.texts == []
    assert snapshot.notes == ["ray status"]


def test_verbose_layout_builds_one_ray_node_per_block() -> None:
    ray = parse_paste(RAY_STATUS_VERBOSE).ray

    assert ray is not None
    assert ray.node_count == 2
    assert ray.pending_nodes == ["gpu-group, 1 launching"]
    assert ray.recent_failures[0].startswith("gpu-group: LaunchFailed")
    assert ray.used["memory"] == 1 * GIB
    head, gpu = ray.nodes
    assert head.node_id == "5a4c0e3f9d8f6e2b1c0a9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b2a"
    assert head.node_type == "head-group" and head.is_head
    assert head.resources_total["CPU"] == 2.0
    assert head.resources_available == {
        "CPU": 1.0,
        "memory": 7 * GIB,
        "object_store_memory": round(2.29 * GIB),
    }
    assert gpu.node_ip == "10.244.2.7" and gpu.node_type is None and not gpu.is_head
    assert gpu.resources_total["GPU"] == 1.0
    assert gpu.resources_available is not None and gpu.resources_available["GPU"] == 0.0
    (demand,) = ray.demands
    assert demand.shape == {"CPU": 1.0, "GPU": 1.0} and demand.count == 3


def test_cluster_status_header_and_lost_indentation_are_still_ray_status() -> None:
    flattened = "\n".join(
        line.strip() for line in RAY_1_X.replace("Autoscaler status", "Cluster status").splitlines()
    )

    ray = parse_paste(flattened).ray

    assert ray is not None
    assert ray.node_groups == {"rayHeadType": 1, "rayWorkerType": 2}
    assert ray.totals["CPU"] == 12.0
    assert len(ray.demands) == 2 and len(ray.constraints) == 1


def test_status_pasted_without_its_header_is_recognised_from_the_section_title() -> None:
    body = RAY_1_X.split("\n", 1)[1]

    ray = parse_paste(body).ray

    assert ray is not None and ray.node_count == 3 and ray.totals["GPU"] == 2.0


def test_ray_1_0_summary_layout() -> None:
    ray = parse_paste(RAY_1_0_SUMMARY).ray

    assert ray is not None
    assert ray.node_count == 3
    assert ray.totals == {
        "CPU": 12.0,
        "GPU": 2.0,
        "memory": round(30.5 * GIB),
        "object_store_memory": round(9.2 * GIB),
    }
    assert ray.used["CPU"] == 2.0
    assert ray.node_groups == {"cpu_worker": 1, "gpu_worker": 1}


def test_a_cut_status_keeps_what_was_read() -> None:
    cut = RAY_1_X[: RAY_1_X.index(" 0.00/33.528")]

    ray = parse_paste(cut).ray

    assert ray is not None
    assert ray.totals == {"CPU": 12.0, "GPU": 2.0, "accelerator_type:T4": 2.0}
    assert ray.demands == []


def test_text_after_the_status_is_not_swallowed() -> None:
    paste = RAY_2_V2_AUTOSCALER + "\nNAME READY STATUS RESTARTS AGE\nworker-x 0/1 Pending 0 5m\n"

    snapshot = parse_paste(paste)

    assert snapshot.ray is not None and snapshot.ray.node_count == 2
    assert snapshot.kubernetes is not None
    assert [pod.name for pod in snapshot.kubernetes.pods] == ["worker-x"]


# --- recorded from real clusters (tools/record_corpus.py) ----------------------------------------

RECORDED = CORPUS / "recorded"


def test_recorded_status_with_request_resources_keeps_every_demand() -> None:
    snapshot = parse_paste((RECORDED / "v1-request-resources-ray-status-v.txt").read_text())
    ray = snapshot.ray

    assert ray is not None and snapshot.texts == []
    assert [d.kind for d in ray.demands] == ["task_or_actor"]
    assert [c.shape for c in ray.constraints] == [{"GPU": 2.0}]
    assert ray.node_count == 3 and len(ray.nodes) == 3
    assert sum(n.resources_total.get("GPU", 0.0) for n in ray.nodes) == ray.totals["GPU"] == 2.0


def test_recorded_autoscaler_v2_verbose_status_gives_nodes_with_their_ids() -> None:
    ray = parse_paste((RECORDED / "v2-held-gpus-ray-status-v.txt").read_text()).ray

    assert ray is not None and ray.node_count == 3
    assert {len(n.node_id or "") for n in ray.nodes} == {56}
    gpu_nodes = [n for n in ray.nodes if n.resources_total.get("GPU")]
    assert len(gpu_nodes) == 2
    assert all(n.resources_available is not None and n.resources_available["GPU"] == 0.0 for n in gpu_nodes)
