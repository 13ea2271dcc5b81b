"""Recorded Ray dashboard answers become a RayState; nothing malformed crashes the reader.

The fixtures under ``tests/fixtures/ray`` were recorded from a real four-node Ray 2.60 cluster
(``tools/record_ray_fixtures.py``) or written from older Ray source; their README says which.
"""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.read.ray_json import ray_state
from bot.snapshot.ray import Demand, RayNode, RayState

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "ray"
KEYS = (
    "version",
    "nodes",
    "nodes_summary",
    "cluster_status",
    "cluster_status_formatted",
    "actors",
    "pending_tasks",
    "placement_groups",
    "serve_applications",
    "jobs",
    "state_jobs",
    "cluster_events",
)
A100_TASK = {"CPU": 1.0, "GPU": 1.0, "accelerator_type:A100": 1.0}
H100_TASK = {"CPU": 1.0, "GPU": 1.0, "accelerator_type:H100": 1.0}
GPU4_TASK = {"CPU": 1.0, "GPU": 4.0}


@cache
def responses(scenario: str) -> dict[str, Any]:
    folder = FIXTURES / scenario
    return {path.stem: json.loads(path.read_text()) for path in folder.glob("*.json") if path.stem in KEYS}


@cache
def state(scenario: str) -> RayState:
    return ray_state(responses(scenario))


def node_at(ray: RayState, ip: str) -> RayNode:
    return next(node for node in ray.nodes if node.node_ip == ip)


def task_demand(ray: RayState, shape: dict[str, float]) -> Demand:
    return next(d for d in ray.demands if d.kind == "task_or_actor" and d.shape == shape)


def pg_demand(ray: RayState) -> Demand:
    return next(d for d in ray.demands if d.kind == "placement_group")


# --- recorded: broken (autoscaler v1) -------------------------------------------------------------


def test_broken_cluster_has_four_alive_nodes_on_their_loopback_ips() -> None:
    ray = state("broken")
    assert ray.version == "2.60.0"
    assert sorted(n.node_ip or "" for n in ray.alive_nodes) == [
        "127.0.0.2",
        "127.0.0.3",
        "127.0.0.4",
        "127.0.0.5",
    ]
    assert [n.node_ip for n in ray.nodes if n.is_head] == ["127.0.0.2"]
    assert ray.node_count == 4


def test_gpu_nodes_keep_rays_resource_names_and_their_labels() -> None:
    a100 = node_at(state("broken"), "127.0.0.3")
    assert a100.resources_total["GPU"] == 1.0
    assert a100.resources_total["accelerator_type:A100"] == 1.0
    assert a100.resources_total["object_store_memory"] == 100_000_000.0
    assert a100.labels["gpu-model"] == "A100"
    assert node_at(state("broken"), "127.0.0.4").resources_total["accelerator_type:T4"] == 1.0


def test_camelcased_names_from_the_cluster_status_are_restored() -> None:
    ray = state("broken")
    # The dashboard sends these as acceleratorType:A100, objectStoreMemory and node:InternalHead.
    assert {"accelerator_type:A100", "object_store_memory", "node:__internal_head__"} <= set(ray.totals)
    assert not [
        name for name in ray.totals if name.startswith("acceleratorType") or name == "objectStoreMemory"
    ]
    assert ray.totals["GPU"] == 2.0
    assert ray.used["accelerator_type:A100"] == 1.0


def test_detached_actor_holds_the_only_a100() -> None:
    ray = state("broken")
    a100 = node_at(ray, "127.0.0.3")
    holder = next(a for a in ray.actors if a.name == "gpu-holder")
    assert holder.state == "ALIVE"
    assert holder.detached
    assert holder.ray_namespace == "raydiag-rec"
    assert holder.node_id == a100.node_id
    assert holder.required_resources["GPU"] == 1.0
    assert holder.required_resources["accelerator_type:A100"] == 1.0
    assert a100.resources_available is not None
    assert a100.resources_available["GPU"] == 0.0
    assert a100.resources_available["accelerator_type:A100"] == 0.0


def test_demands_beyond_every_node_are_listed_and_flagged_infeasible() -> None:
    ray = state("broken")
    assert task_demand(ray, GPU4_TASK).infeasible
    assert task_demand(ray, H100_TASK).infeasible
    assert task_demand(ray, {"GPU": 2.0}).infeasible  # the job supervisor of raydiag-gpu-job


def test_demand_held_by_another_actor_is_pending_but_feasible() -> None:
    ray = state("broken")
    assert not task_demand(ray, A100_TASK).infeasible
    waiter = next(a for a in ray.actors if a.name == "gpu-waiter")
    assert waiter.state == "PENDING_CREATION"
    assert not waiter.detached
    assert waiter.pid is None


def test_strict_pack_group_is_pending_with_its_bundles() -> None:
    ray = state("broken")
    group = next(pg for pg in ray.placement_groups if pg.name == "train-pg")
    assert group.state == "PENDING"
    # The state API has no strategy field; it comes from the autoscaler's demand for the group.
    assert group.strategy == "STRICT_PACK"
    assert group.bundles == [{"CPU": 1.0, "GPU": 1.0}, {"CPU": 1.0, "GPU": 1.0}]
    demand = pg_demand(ray)
    assert demand.infeasible
    assert demand.largest_single_request == {"CPU": 2.0, "GPU": 2.0}


def test_pending_tasks_carry_their_resource_requests() -> None:
    tasks = {t.name: t for t in state("broken").pending_tasks}
    assert tasks["train-step-gpu4"].required_resources == GPU4_TASK
    assert tasks["train-step-h100"].required_resources == H100_TASK
    assert tasks["train-step-gpu4"].state == "PENDING_NODE_ASSIGNMENT"


def test_jobs_say_pending_failed_and_running() -> None:
    jobs = {j.submission_id or j.job_id: j for j in state("broken").jobs}
    assert jobs["raydiag-gpu-job"].status == "PENDING"
    assert "waiting for resources" in (jobs["raydiag-gpu-job"].message or "")
    assert jobs["raydiag-failing-job"].status == "FAILED"
    assert "exit code 3" in (jobs["raydiag-failing-job"].message or "")
    assert jobs["raydiag-failing-job"].entrypoint == "python -c 'import sys; sys.exit(3)'"
    assert jobs["01000000"].status == "RUNNING"  # the recording driver itself


def test_serve_applications_report_failure_and_slow_scheduling() -> None:
    apps = {a.name: a for a in state("broken").serve_applications}
    assert apps["broken-app"].status == "DEPLOY_FAILED"
    assert "model weights not found" in apps["broken-app"].deployments[0].message
    gpu = apps["gpu-app"]
    assert gpu.status == "DEPLOYING"
    assert "taken more than 30s to be scheduled" in gpu.deployments[0].message
    assert gpu.deployments[0].replica_states == {"STARTING": 1}


def test_serve_and_job_system_actors_are_detached_too() -> None:
    # A rule looking for leftover detached actors must know these are Ray's own.
    detached = {a.class_name for a in state("broken").actors if a.detached}
    assert {"ServeController", "JobSupervisor"} <= detached


def test_plain_ray_start_cluster_has_no_worker_groups_or_failures() -> None:
    ray = state("broken")
    assert ray.node_groups == {}  # node types named node_<id> are the readonly autoscaler's
    assert ray.pending_nodes == []
    assert ray.recent_failures == []


@pytest.mark.parametrize("scenario", ["broken", "broken-autoscaler-v2", "healthy"])
def test_nodes_summary_alone_gives_the_same_nodes(scenario: str) -> None:
    """``/nodes?view=summary`` camelCases resource names; they must come back as Ray spells them."""
    full = state(scenario)
    summary_only = ray_state({"nodes": responses(scenario)["nodes_summary"]})
    by_ip = {n.node_ip: n for n in summary_only.nodes}
    assert set(by_ip) == {n.node_ip for n in full.nodes}
    for node in full.nodes:
        twin = by_ip[node.node_ip]
        assert twin.is_head == node.is_head
        assert twin.resources_total == node.resources_total
        assert twin.resources_available is not None and node.resources_available is not None
        for name in ("CPU", "GPU", "accelerator_type:A100"):
            assert twin.resources_available.get(name) == node.resources_available.get(name)


# --- recorded: autoscaler v2 ----------------------------------------------------------------------


def test_autoscaler_v2_leaves_the_structured_status_empty() -> None:
    raw = responses("broken-autoscaler-v2")["cluster_status"]["data"]
    assert raw == {"autoscalingStatus": None, "autoscalingError": None, "clusterStatus": None}
    without_text = {
        k: v for k, v in responses("broken-autoscaler-v2").items() if k != "cluster_status_formatted"
    }
    assert ray_state(without_text).demands == []


def test_autoscaler_v2_demands_come_from_the_formatted_text() -> None:
    ray = state("broken-autoscaler-v2")
    gpu4 = task_demand(ray, GPU4_TASK)
    assert gpu4.source_text == "{'CPU': 1.0, 'GPU': 4.0}: 1+ pending tasks/actors"
    assert task_demand(ray, H100_TASK).infeasible
    group = pg_demand(ray)
    assert group.strategy == "STRICT_PACK"
    assert group.bundles == [{"GPU": 1.0, "CPU": 1.0}, {"GPU": 1.0, "CPU": 1.0}]
    assert group.infeasible
    assert ray.totals["GPU"] == 2.0 and ray.used["GPU"] == 1.0


def test_autoscaler_v2_calls_a_busy_but_fitting_demand_infeasible() -> None:
    # v2 lists everything it cannot place by launching nodes, including a demand an existing node
    # could hold once freed; rules must compare with node totals before calling it impossible.
    assert task_demand(state("broken-autoscaler-v2"), A100_TASK).infeasible


def test_autoscaler_v2_per_node_availability_comes_from_the_summary_text() -> None:
    a100 = node_at(state("broken-autoscaler-v2"), "127.0.0.3")
    assert a100.resources_available is not None
    assert a100.resources_available["GPU"] == 0.0
    assert a100.resources_available["accelerator_type:A100"] == 0.0
    assert a100.resources_available["CPU"] == 1.0
    assert a100.resources_available["memory"] == a100.resources_total["memory"]


# --- recorded: healthy ----------------------------------------------------------------------------


def test_healthy_cluster_has_nothing_pending() -> None:
    ray = state("healthy")
    assert len(ray.alive_nodes) == 4
    assert ray.demands == []
    assert ray.pending_tasks == []
    assert ray.placement_groups == []
    counter = next(a for a in ray.actors if a.name == "counter")
    assert counter.state == "ALIVE" and not counter.detached
    assert counter.required_resources == {"CPU": 0.5}


def test_healthy_serve_app_and_job() -> None:
    ray = state("healthy")
    echo = next(a for a in ray.serve_applications if a.name == "echo-app")
    assert echo.status == "RUNNING"
    assert echo.deployments[0].status == "HEALTHY"
    assert echo.deployments[0].replica_states == {"RUNNING": 1}
    assert next(j for j in ray.jobs if j.submission_id == "raydiag-ok-job").status == "SUCCEEDED"


# --- hand-written older shapes --------------------------------------------------------------------


def test_ray_2_9_cluster_status_keyed_by_ip_with_worker_groups() -> None:
    ray = state("older-shapes/ray-2.9")
    assert ray.version == "2.9.3"
    # "gpuWorkers" in the answer; the report's node-type mapping spells it right.
    assert ray.node_groups == {"headgroup": 1, "gpu_workers": 1}
    gpu = node_at(ray, "10.0.0.11")
    assert gpu.node_type == "gpu_workers"
    assert gpu.resources_available is not None
    assert gpu.resources_available["GPU"] == 0.0
    assert gpu.resources_available["accelerator_type:A10G"] == 0.0
    assert ray.pending_nodes == ["10.0.0.12: gpu_workers, setting-up", "gpu_workers, 1 launching"]
    assert "gpu_workers: LaunchFailed - insufficient capacity for g5.xlarge" in ray.recent_failures
    assert "gpu_workers: NodeTerminated (ip: 10.0.0.13)" in ray.recent_failures


def test_ray_2_9_demands_of_every_kind() -> None:
    ray = state("older-shapes/ray-2.9")
    gpu = task_demand(ray, {"GPU": 1.0})
    assert gpu.count == 2
    group = pg_demand(ray)
    assert group.strategy == "STRICT_PACK"
    assert group.largest_single_request == {"GPU": 2.0, "CPU": 8.0}
    [constraint] = ray.constraints  # request_resources(): no demand
    assert constraint.shape == {"CPU": 16.0}
    assert not any(d.infeasible for d in ray.demands)  # no events recorded: nothing says so


def test_ray_2_2_nodes_summary_without_logical_resources() -> None:
    ray = ray_state({"nodes_summary": responses("older-shapes/ray-2.2")["nodes_summary"]})
    head = node_at(ray, "10.0.0.10")
    gpu = node_at(ray, "10.0.0.11")
    assert head.is_head and not gpu.is_head
    assert gpu.resources_total["accelerator_type:A10G"] == 1.0
    assert gpu.resources_total["object_store_memory"] == 6.0 * 2**30
    assert gpu.resources_available is None


def test_ray_2_2_state_api_merges_with_the_summary() -> None:
    ray = state("older-shapes/ray-2.2")
    assert node_at(ray, "10.0.0.10").is_head  # the state API of 2.2 has no is_head_node
    trainer = ray.actors[0]
    assert trainer.detached and trainer.required_resources == {"GPU": 1.0, "accelerator_type:A10G": 1.0}
    group = ray.placement_groups[0]
    assert group.name is None and group.state == "PENDING" and len(group.bundles) == 2


def test_ray_2_2_single_serve_application() -> None:
    (app,) = state("older-shapes/ray-2.2").serve_applications
    assert app.name == "default"
    assert app.status == "DEPLOY_FAILED"
    assert {d.name: d.status for d in app.deployments} == {"Model": "UNHEALTHY", "Ingress": "HEALTHY"}


def test_ray_2_2_serve_not_started_means_no_applications() -> None:
    empty = {
        "app_status": {"status": "NOT_STARTED", "message": "", "deployment_timestamp": 0},
        "deployment_statuses": [],
    }
    assert ray_state({"serve_applications": empty}).serve_applications == []


# --- other shapes the reader accepts --------------------------------------------------------------


ACTOR = {"actor_id": "aa", "class_name": "C", "state": "ALIVE", "required_resources": {"CPU": 1.0}}


@pytest.mark.parametrize(
    "envelope",
    [
        [ACTOR],
        {"data": {"result": [ACTOR]}},
        {"result": True, "msg": "", "data": {"result": {"total": 1, "result": [ACTOR]}}},
        {"aa": ACTOR},
    ],
    ids=["bare list", "data.result list", "2.x envelope", "mapping of id to record"],
)
def test_state_api_envelopes(envelope: object) -> None:
    (actor,) = ray_state({"actors": envelope}).actors
    assert actor.actor_id == "aa" and actor.required_resources == {"CPU": 1.0}


def test_placement_group_bookkeeping_resources_fold_into_their_base() -> None:
    pg = "a" * 36
    actor = {
        **ACTOR,
        "required_resources": {
            f"GPU_group_0_{pg}": 1.0,
            f"GPU_group_{pg}": 1.0,
            f"bundle_group_0_{pg}": 0.001,
        },
    }
    assert ray_state({"actors": [actor]}).actors[0].required_resources == {"GPU": 1.0}


def test_actor_start_time_from_epoch_milliseconds() -> None:
    actor = {**ACTOR, "start_time": 1_700_000_000_000}
    assert ray_state({"actors": [actor]}).actors[0].start_time == datetime(
        2023, 11, 14, 22, 13, 20, tzinfo=UTC
    )


def test_placement_group_of_a_finished_job_is_marked() -> None:
    groups = [
        {"placement_group_id": "p1", "state": "CREATED", "creator_job_id": "02000000", "bundles": []},
        {"placement_group_id": "p2", "state": "CREATED", "creator_job_dead": True, "bundles": []},
        {"placement_group_id": "p3", "state": "CREATED", "creator_job_id": "03000000", "bundles": []},
    ]
    jobs = [{"job_id": "02000000", "status": "FAILED"}, {"job_id": "03000000", "status": "RUNNING"}]
    ray = ray_state({"placement_groups": groups, "jobs": jobs})
    assert [pg.job_dead for pg in ray.placement_groups] == [True, True, False]


def test_infeasible_scheduling_state_marks_the_group_demand_without_events() -> None:
    bundle = {"unit_resources": {"GPU": 8.0}}
    group = {"state": "PENDING", "bundles": [bundle, bundle], "stats": {"scheduling_state": "INFEASIBLE"}}
    status = {
        "load_metrics_report": {"pg_demand": [[{"bundles": [[{"GPU": 8.0}, 2]], "strategy": "SPREAD"}, 1]]}
    }
    ray = ray_state({"placement_groups": [group], "cluster_status": status})
    assert pg_demand(ray).infeasible
    assert ray.placement_groups[0].strategy == "SPREAD"


def test_jobs_as_a_mapping_of_submission_id() -> None:
    (job,) = ray_state({"jobs": {"raysubmit_1": {"status": "RUNNING", "entrypoint": "python x.py"}}}).jobs
    assert job.submission_id == "raysubmit_1" and job.status == "RUNNING"


def test_autoscaler_json_without_the_dashboard_envelope() -> None:
    raw = {"load_metrics_report": {"resource_demand": [[{"GPU": 8.0}, 3]], "usage": {"GPU": [0.0, 4.0]}}}
    ray = ray_state({"cluster_status": raw})
    assert task_demand(ray, {"GPU": 8.0}).count == 3
    assert ray.totals == {"GPU": 4.0}


def test_status_text_with_groups_failures_and_constraints() -> None:
    text = "\n".join(
        [
            "======== Autoscaler status: 2025-01-01 00:00:00 ========",
            "Node status",
            "---------------------------------------------------------------",
            "Active:",
            " 1 head-group",
            " 2 gpu-group",
            "Idle:",
            " 1 cpu-group",
            "Pending:",
            " gpu-group, 1 launching",
            "Recent failures:",
            " gpu-group: LaunchFailed (latest_attempt: 10:00:00)",
            "",
            "Resources",
            "---------------------------------------------------------------",
            "Total Usage:",
            " 16.0/24.0 CPU",
            " 2.0/2.0 GPU",
            " 1.50GiB/64.00GiB memory",
            "",
            "From request_resources:",
            " {'CPU': 64}: 1 from request_resources()",
            "Pending Demands:",
            " {'GPU': 1.0, 'CPU': 4.0} * 2, {'CPU': 1.0} * 1 (PACK): 2+ pending placement groups",
        ]
    )
    ray = ray_state({"cluster_status_formatted": {"data": {"clusterStatus": text}}})
    assert ray.node_groups == {"head-group": 1, "gpu-group": 2, "cpu-group": 1}
    assert ray.pending_nodes == ["gpu-group, 1 launching"]
    assert ray.recent_failures == ["gpu-group: LaunchFailed (latest_attempt: 10:00:00)"]
    assert ray.used["memory"] == 1.5 * 2**30 and ray.totals["CPU"] == 24.0
    group = pg_demand(ray)
    assert group.count == 2 and group.strategy == "PACK"
    assert group.bundles == [{"GPU": 1.0, "CPU": 4.0}, {"GPU": 1.0, "CPU": 4.0}, {"CPU": 1.0}]
    assert [c.shape for c in ray.constraints] == [{"CPU": 64.0}]
    assert {d.kind for d in ray.demands} == {"placement_group"}


# --- never raises ---------------------------------------------------------------------------------


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30),
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=12), children, max_size=5)
    ),
    max_leaves=25,
)


@pytest.mark.parametrize("key", KEYS)
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=JSON)
def test_any_json_under_any_key_gives_a_state(key: str, value: object) -> None:
    assert isinstance(ray_state({key: value}), RayState)


def _paths(value: object, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value[:3]):
            found += _paths(item, (*prefix, index))
    return found


@cache
def _paths_in(scenario: str, key: str) -> list[tuple[Any, ...]]:
    return _paths(responses(scenario)[key])


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_recorded_answers_with_one_part_replaced_give_a_state(data: st.DataObject) -> None:
    """Real answers with one field swapped for junk reach the deep paths plain junk cannot."""
    scenario = data.draw(st.sampled_from(["broken", "broken-autoscaler-v2", "older-shapes/ray-2.9"]))
    raw = dict(responses(scenario))
    key = data.draw(st.sampled_from(sorted(raw)))
    raw[key] = copy.deepcopy(raw[key])
    path = data.draw(st.sampled_from(_paths_in(scenario, key)))
    junk = data.draw(JSON)
    if not path:
        raw[key] = junk
    else:
        parent: Any = raw[key]
        for step in path[:-1]:
            parent = parent[step]
        parent[path[-1]] = junk
    assert isinstance(ray_state(raw), RayState)


@settings(max_examples=60, deadline=None)
@given(
    lines=st.lists(
        st.sampled_from(
            [
                "Pending Demands:",
                "Active:",
                "Total Usage:",
                "From request_resources:",
                "Pending:",
                "Recent failures:",
                " {'GPU': 4.0}: 1+ pending tasks/actors",
                " {'CPU': 1.0} * 99999999 (STRICT_PACK): 1+ pending placement groups",
                " {'GPU': [1]}: 1+ pending tasks/actors",
                " {1: 2} * 2 (PACK): 3 pending placement groups",
                " 1.0/x CPU",
                " 9e999/1e999 GPU",
                " 3 node_abc",
                " {",
                " }: 1 from request_resources()",
                "",
            ]
        )
        | st.text(max_size=40),
        max_size=20,
    )
)
def test_any_status_text_gives_a_state(lines: list[str]) -> None:
    assert isinstance(ray_state({"cluster_status_formatted": "\n".join(lines)}), RayState)
