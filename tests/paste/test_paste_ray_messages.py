"""Ray's scheduling warnings, autoscaler infeasibility errors and connection errors."""

from __future__ import annotations

from bot.collect.paste import parse_paste

GIB = 2**30

RAY_2_WARNING = """\
2024-01-10 12:00:00,000\tWARNING worker.py:2058 -- The actor or task with ID ffffffffffffffff1b2c3d4e5f60718293a4b5c601000000 cannot be scheduled right now. You can ignore this message if this Ray cluster is expected to auto-scale or if you specified a runtime_env for this actor or task, which may take time to install.  Otherwise, this is likely due to all cluster resources being claimed by actors. To resolve the issue, consider creating fewer actors or increasing the resources available to this Ray cluster.
Required resources for this actor or task: {CPU: 1.000000, GPU: 1.000000}
Available resources on this node: {7.000000/8.000000 CPU, 18.339239 GiB/18.339239 GiB memory, 0.000000/1.000000 GPU, 9.169619 GiB/9.169619 GiB object_store_memory, 1.000000/1.000000 node:172.31.12.34, 1.000000/1.000000 accelerator_type:T4}
In total there are 0 pending tasks and 1 pending actors on this node.
"""

AUTOSCALING_VARIANT = (
    "(raylet) The actor or task with ID ffffffffffffffffb9a1c5dd86a1f1e3e1f8c8a701000000 cannot be scheduled "
    "right now. It requires {CPU: 1.000000}, {GPU: 1.000000} for placement, however the cluster currently "
    "cannot provide the requested resources. The required resources may be added as autoscaling takes place "
    "or placement groups are scheduled. Otherwise, consider reducing the resource requirements of the task."
)

RAY_1_REMAINING_ONLY = (
    "2021-03-02 10:00:00,000\tWARNING worker.py:1034 -- The actor or task with ID "
    "ffffffffffffffff45b95b1c0100 cannot be scheduled right now. It requires {CPU: 1.000000}, "
    "{GPU: 1.000000} for placement, but this node only has remaining {node:10.0.0.5: 1.000000}, "
    "{CPU: 3.000000}, {memory: 10.009766 GiB}, {object_store_memory: 3.466797 GiB}. In total there are 0 "
    "pending tasks and 2 pending actors on this node."
)

DRIVER_LOG = """\
(scheduler +8s) Tip: use `ray status` to view detailed cluster status. To disable these messages, set RAY_SCHEDULER_EVENTS=0.
(scheduler +8s) Warning: The following resource request cannot be scheduled right now: {'CPU': 1.0, 'GPU': 1.0}. This is likely due to all cluster resources being claimed by actors. Consider creating fewer actors or adding more nodes to this Ray cluster.
(autoscaler +1m3s) Error: No available node types can fulfill resource request {'CPU': 64.0, 'GPU': 8.0}. Add suitable node types to this cluster to resolve this issue.
(autoscaler +2m) Error: No available node types can fulfill resource requests {'GPU': 16.0}*2. Add suitable node types to this cluster to resolve this issue.
"""

VERSION_MISMATCH = """\
Traceback (most recent call last):
  File "train.py", line 3, in <module>
    ray.init(address="auto")
RuntimeError: Version mismatch: The cluster was started with:
    Ray: 2.9.0
    Python: 3.10.13
This process on node 10.42.0.17 was started with:
    Ray: 2.10.0
    Python: 3.11.5
"""


def test_ray_2_multi_line_warning_gives_demand_and_node() -> None:
    snapshot = parse_paste(RAY_2_WARNING)

    assert snapshot.ray is not None
    (demand,) = snapshot.ray.demands
    assert demand.shape == {"CPU": 1.0, "GPU": 1.0}
    assert demand.reported_held  # the "claimed by actors" deadlock warning
    (node,) = snapshot.ray.nodes
    assert node.node_ip == "172.31.12.34"
    assert node.resources_total["accelerator_type:T4"] == 1.0
    assert node.resources_total["memory"] == round(18.339239 * GIB)
    assert node.resources_available is not None
    assert node.resources_available["CPU"] == 7.0 and node.resources_available["GPU"] == 0.0
    (text,) = snapshot.texts
    assert "Required resources for this actor or task" in text.text
    assert text.text.endswith("1 pending actors on this node.")
    assert snapshot.notes == ["ray scheduling warning"]


def test_autoscaling_variant_gives_only_the_demand_marked_infeasible() -> None:
    """The raylet prints this variant for work in its infeasible queue: no node can hold it now."""
    snapshot = parse_paste(AUTOSCALING_VARIANT)

    assert snapshot.ray is not None
    (demand,) = snapshot.ray.demands
    assert demand.shape == {"CPU": 1.0, "GPU": 1.0}
    assert demand.kind == "task_or_actor" and demand.infeasible and not demand.reported_held
    assert demand.source_text == AUTOSCALING_VARIANT
    assert snapshot.ray.nodes == []


def test_ray_1_remaining_without_totals_makes_no_node() -> None:
    snapshot = parse_paste(RAY_1_REMAINING_ONLY)

    assert snapshot.ray is not None
    assert snapshot.ray.demands[0].shape == {"CPU": 1.0, "GPU": 1.0}
    assert snapshot.ray.nodes == []


def test_warning_cut_in_the_middle_of_the_remaining_map_keeps_what_is_there() -> None:
    cut = RAY_2_WARNING[: RAY_2_WARNING.index(" 9.169619 GiB/9.16")]

    snapshot = parse_paste(cut)

    assert snapshot.ray is not None
    (node,) = snapshot.ray.nodes
    assert node.resources_total == {"CPU": 8.0, "memory": round(18.339239 * GIB), "GPU": 1.0}
    assert node.node_ip is None


def test_driver_log_scheduler_and_autoscaler_lines() -> None:
    snapshot = parse_paste(DRIVER_LOG)

    assert snapshot.ray is not None
    not_now, infeasible, sixteen = snapshot.ray.demands
    assert not_now.shape == {"CPU": 1.0, "GPU": 1.0} and not not_now.infeasible
    assert infeasible.shape == {"CPU": 64.0, "GPU": 8.0} and infeasible.infeasible
    assert sixteen.shape == {"GPU": 16.0} and sixteen.count == 2 and sixteen.infeasible
    assert len(snapshot.texts) == 4
    assert snapshot.texts[0].text.startswith("(scheduler +8s) Tip: use `ray status`")


def test_truncated_autoscaler_request_list_counts_complete_shapes() -> None:
    line = (
        "2023-05-01 10:00:00,123\tWARNING resource_demand_scheduler.py:783 -- The autoscaler could not find a "
        "node type to satisfy the request: [{'CPU': 2.0}, {'CPU': 2.0}, {'GPU': 1.0, 'CPU': 1.0}, {'CPU': 2.0"
    )

    snapshot = parse_paste(line)

    assert snapshot.ray is not None
    cpu, gpu = snapshot.ray.demands
    assert cpu.shape == {"CPU": 2.0} and cpu.count == 2 and cpu.infeasible
    assert gpu.shape == {"GPU": 1.0, "CPU": 1.0} and gpu.count == 1


def test_repeated_warnings_give_one_demand_and_one_node() -> None:
    snapshot = parse_paste(RAY_2_WARNING * 3)

    assert snapshot.ray is not None
    assert len(snapshot.ray.demands) == 1
    assert len(snapshot.ray.nodes) == 1
    assert len(snapshot.texts) == 1


def test_version_mismatch_block_is_joined_into_one_line() -> None:
    snapshot = parse_paste(VERSION_MISMATCH)

    assert snapshot.ray is None and snapshot.kubernetes is None
    texts = [line.text for line in snapshot.texts]
    assert (
        "RuntimeError: Version mismatch: The cluster was started with: Ray: 2.9.0 Python: 3.10.13 "
        "This process on node 10.42.0.17 was started with: Ray: 2.10.0 Python: 3.11.5"
    ) in texts
    assert "ray connection messages" in snapshot.notes


def test_gcs_connection_errors_are_text() -> None:
    paste = """\
[2024-05-02 09:13:45,118 E 102 102] gcs_rpc_client.h:212: Failed to connect to GCS within 60 seconds. GCS may have been killed. It's either GCS is terminated by `ray stop` or is killed unexpectedly.
ConnectionError: Could not find any running Ray instance. Please specify the one to connect to by setting `--address` flag or `RAY_ADDRESS` environment variable.
$ ray start --address=10.0.0.5:6379
Unable to connect to GCS at 10.0.0.5:6379. Check that (1) Ray GCS with matching version started successfully at the specified address, and (2) there is no firewall setting preventing access.
"""

    snapshot = parse_paste(paste)

    texts = [line.text for line in snapshot.texts]
    assert len(texts) == 4
    assert "ray start --address=10.0.0.5:6379" in texts
    assert any(text.startswith("Unable to connect to GCS at 10.0.0.5:6379") for text in texts)
    assert snapshot.notes[0] == "ray connection messages"


def test_ray_tune_insufficient_resources_warning_gives_the_trial_demand() -> None:
    line = (
        "2024-02-01 10:00:00,000\tWARNING insufficient_resources_manager.py:163 -- Ignore this message if the "
        "cluster is autoscaling. No trial is running and no new trial has been started within the last 60 "
        "seconds. This could be due to the cluster not having enough resources available. You asked for 3.0 "
        "CPUs and 1.0 GPUs per trial, but the cluster only has 8.0 CPUs and 0 GPUs available. Stop the tuning "
        "and adjust the required resources (e.g. via the `ScalingConfig` or `resources_per_trial`, or "
        "`num_workers` for rllib), or add more resources to your cluster."
    )

    snapshot = parse_paste(line)

    assert snapshot.ray is not None
    (demand,) = snapshot.ray.demands
    assert demand.shape == {"CPU": 3.0, "GPU": 1.0}
    assert demand.kind == "placement_group" and demand.largest_single_request == {"CPU": 3.0, "GPU": 1.0}
    assert snapshot.notes == ["ray tune resource warning"]
