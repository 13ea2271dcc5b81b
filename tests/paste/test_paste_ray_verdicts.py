"""What Ray's own messages say about a waiting demand, read into the verdict they support.

Every text here was pasted by a user into a public issue thread (the thread is named above each
one) or recorded from a real Ray 2.60 cluster started on this machine.
"""

from __future__ import annotations

from bot.catalogue import default_catalogue
from bot.collect.paste import parse_paste
from tests.support.rule_cases import diagnose_paste

# ray-project/ray#35289: autoscaler v1 prints this only for requests some node type fits.
CLUSTER_FULL_OF_ACTORS = (
    "(autoscaler +14m25s) Warning: The following resource request cannot be scheduled right now: "
    "{'CPU': 1.0}. This is likely due to all cluster resources being claimed by actors. Consider "
    "creating fewer actors or adding more nodes to this Ray cluster."
)
# ray-project/ray#44556
NO_NODE_TYPE = (
    "(autoscaler +6s) Error: No available node types can fulfill resource request {'CPU': 16.0}. "
    "Add suitable node types to this cluster to resolve this issue."
)
# ray-project/ray#1065 (Ray 0.2): the local scheduler has the GPU, a terminated actor still holds it.
LEGACY_ACTOR = (
    "Exception: Could not find a node with enough GPUs or other resources to create this actor. The local "
    "scheduler information is [ {'ClientType': 'local_scheduler', 'Deleted': False, 'DBClientID': "
    "'31dc437d6df69857fea7a9eb6f04004421039e18', 'AuxAddress': '127.0.0.1:37853', 'NumCPUs': 32.0, "
    "'NumGPUs': 1.0, 'LocalSchedulerSocketName': '/tmp/scheduler9534802'}]."
)
# ray-project/ray#5744 (Jetson): Tune sees 0 GPUs.
TUNE_NO_GPU = (
    "ray.tune.error.TuneError: Insufficient cluster resources to launch trial: trial requested 4.0 CPUs, "
    "1.0 GPUs but the cluster has only 8 CPUs, 0 GPUs, 6.49 GiB heap, 2.25 GiB objects. Pass "
    "'queue_trials=True' in ray.tune.run() or on the command line to queue trials until the cluster scales up."
)
# ray-project/ray#18718 (Ray 1.x wording, lower-case units): the CPUs alone are already too many.
TUNE_TOO_BIG = (
    "(pid=202) 2021-09-17 11:08:06,745\tWARNING trial_executor.py:305 -- Ignore this message if the cluster "
    "is autoscaling. You asked for 11.0 cpu and 1.0 gpu per trial, but the cluster only has 8.0 cpu and 0 "
    "gpu. Stop the tuning job and adjust the resources requested per trial (possibly via "
    "`resources_per_trial` or via `num_workers` for rllib) and/or add more resources to your Ray runtime."
)
# ray-project/ray#5744: the ``== Status ==`` line of Ray 0.7.
TUNE_STATUS = "Resources requested: 0/8 CPUs, 0/0 GPUs, 0.0/6.4 GiB heap, 0.0/2.2 GiB objects"
# ray-project/kuberay#1090 (Ray 2.4): 5.6 CPUs free over the cluster, no 2-CPU Pod holds 3.
SERVE_NOT_SCHEDULED = (
    'WARNING 2023-05-13 23:26:26,277 controller 162 deployment_state.py:1613 - Deployment "MangoStand" has 1 '
    "replicas that have taken more than 30s to be scheduled. This may be caused by waiting for the cluster to "
    "auto-scale, or waiting for a runtime environment to install. Resources required for each replica: "
    '{"CPU": 3.0}, resources available: {"CPU": 5.6}.'
)
# ray-project/ray#19156 (Ray 1.7): Python reprs, and nothing free of what the replica needs.
SERVE_LEGACY = (
    "(pid=3979) 2021-10-06 10:37:25,982\tWARNING backend_state.py:996 -- Backend 'AAA' has 1 replicas that "
    "have taken more than 30s to start up. This may be caused by waiting for the cluster to auto-scale or "
    "because the constructor is slow. Resources required for each replica: {'CPU': 1}, resources available: "
    "{'CPU': 3.0}."
)
# ray-project/ray#34972
LAUNCH_FAILED = (
    "(autoscaler +57m59s) Failed to launch 2 node(s) of type worker_node. (InsufficientInstanceCapacity): We "
    "currently do not have sufficient m5.4xlarge capacity in the Availability Zone you requested (us-west-2a)."
)
# Recorded: Ray 2.60, ``ray.init(num_cpus=2, num_gpus=0)`` and a ``num_gpus=1`` task.
RECORDED_INFEASIBLE = (
    "\x1b[33m(autoscaler +5s)\x1b[0m Error: No available node types can fulfill resource request "
    "{'CPU': 1.0, 'GPU': 1.0}. Add suitable node types to this cluster to resolve this issue."
)


def _first(text: str) -> tuple[str, int | None]:
    finding = diagnose_paste(text).findings[0]
    return finding.rule, finding.cause


def test_cluster_full_of_actors_is_held_not_impossible() -> None:
    snapshot = parse_paste(CLUSTER_FULL_OF_ACTORS)
    assert snapshot.ray is not None
    (demand,) = snapshot.ray.demands
    assert demand.reported_held and not demand.infeasible
    assert _first(CLUSTER_FULL_OF_ACTORS) == ("ray-resources-claimed", 5)


def test_held_finding_names_the_commands_that_settle_5_against_6() -> None:
    finding = diagnose_paste(CLUSTER_FULL_OF_ACTORS).findings[0]
    rule = default_catalogue().get(finding.rule)
    assert rule is not None
    commands = " ".join(rule.commands)
    assert "ray status -v" in commands and "ray list actors" in commands
    assert "ray list placement-groups" in commands
    assert finding.evidence[0].text == CLUSTER_FULL_OF_ACTORS


def test_no_node_type_fits_stays_impossible() -> None:
    assert _first(NO_NODE_TYPE)[1] == 6


def test_legacy_actor_error_compares_with_the_local_schedulers() -> None:
    snapshot = parse_paste(LEGACY_ACTOR)
    assert snapshot.ray is not None
    assert [n.resources_total for n in snapshot.ray.nodes] == [{"CPU": 32.0, "GPU": 1.0}]
    assert _first(LEGACY_ACTOR) == ("ray-resources-claimed", 5)


def test_legacy_actor_error_on_a_node_without_gpus_is_registration() -> None:
    text = LEGACY_ACTOR.replace("'NumGPUs': 1.0", "'NumGPUs': 0.0")
    assert _first(text) == ("ray-cluster-registers-no-gpu", 4)


def test_tune_trial_on_a_cluster_without_gpus_is_registration() -> None:
    snapshot = parse_paste(TUNE_NO_GPU)
    assert snapshot.ray is not None
    assert snapshot.ray.totals["CPU"] == 8.0 and snapshot.ray.totals["GPU"] == 0.0
    assert _first(TUNE_NO_GPU) == ("ray-cluster-registers-no-gpu", 4)


def test_tune_trial_too_big_in_cpus_is_impossible_whatever_the_gpu() -> None:
    assert _first(TUNE_TOO_BIG) == ("ray-demand-infeasible", 6)


def test_tune_status_line_gives_cluster_totals() -> None:
    snapshot = parse_paste(TUNE_STATUS)
    assert snapshot.ray is not None
    assert snapshot.ray.totals["CPU"] == 8.0 and snapshot.ray.totals["GPU"] == 0.0
    assert snapshot.ray.totals["memory"] == round(6.4 * 2**30)


def test_serve_replica_free_across_cluster_but_waiting_is_per_node() -> None:
    snapshot = parse_paste(SERVE_NOT_SCHEDULED)
    assert snapshot.ray is not None
    (demand,) = snapshot.ray.demands
    assert demand.shape == {"CPU": 3.0} and not demand.reported_held
    assert _first(SERVE_NOT_SCHEDULED)[1] == 6


def test_serve_legacy_python_reprs_are_read() -> None:
    snapshot = parse_paste(SERVE_LEGACY)
    assert snapshot.ray is not None
    assert [d.shape for d in snapshot.ray.demands] == [{"CPU": 1.0}]


def test_autoscaler_launch_failure_is_cause_9_with_cloud_advice() -> None:
    finding = diagnose_paste(LAUNCH_FAILED).findings[0]
    assert (finding.rule, finding.cause) == ("ray-autoscaler-launch-failed", 9)
    assert finding.params["group"] == "worker_node"
    assert finding.params["reason"] == "InsufficientInstanceCapacity"
    rule = default_catalogue().get(finding.rule)
    assert rule is not None
    assert "ResourceQuota" not in " ".join(rule.text["en"].fix)


def test_recorded_infeasible_gpu_task_on_cpu_cluster() -> None:
    assert _first(RECORDED_INFEASIBLE)[1] == 6
