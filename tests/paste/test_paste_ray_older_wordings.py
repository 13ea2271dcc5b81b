"""Ray 1.0's pending warning, Redis-era connection errors, Serve status fragments and accelerator
limits KubeRay does not count as GPUs. Texts from public threads (ray-project/ray#11179, #6794,
#4393, #13650, #33579; ray-project/kuberay#2484) and the names in KubeRay's ``IsGPUResourceKey``.
"""

from __future__ import annotations

import pytest

from bot.catalogue import default_catalogue
from bot.classify import classify
from bot.classify.detectors.ray_resources import is_ray_gpu_limit, untranslated_accelerator
from bot.collect.paste import parse_paste
from bot.snapshot.kubernetes import ContainerSpec, RayGroup

RAY_1_0_PENDING = """\
The actor or task with ID ffffffffffffffff88866c7d01000000 is pending and cannot currently be scheduled.
It requires {CPU: 0.700000} for execution and {CPU: 0.700000} for placement, but this node only has remaining
{node:192.168.0.199: 1.000000},
{CPU: 1.200000},
{GPU: 1.000000},
{object_store_memory: 2.392578 GiB}.
In total there are 0 pending tasks and 1 pending actors on this node. This is likely due to all cluster resources being claimed by actors. To resolve the issue, consider creating fewer actors or increase the resources available to this Ray cluster.
"""


def _findings(text: str) -> list[tuple[str, int | None]]:
    return [(f.rule, f.cause) for f in classify(parse_paste(text), default_catalogue()).findings]


def test_ray_1_0_pending_warning_one_resource_per_line_is_held() -> None:
    ray = parse_paste(RAY_1_0_PENDING).ray
    assert ray is not None
    [demand] = ray.demands
    # "for execution" and "for placement" print the same request twice; it is counted once.
    assert demand.shape == {"CPU": 0.7}
    assert demand.reported_held
    assert _findings(RAY_1_0_PENDING)[0] == ("ray-resources-claimed", 5)


@pytest.mark.parametrize(
    "line",
    [
        "(pid=raylet, ip=152.14.93.144) F0114 18:12:17.869905 324126 redis_context.cc:215] Could not "
        "establish connection to redis head ip:39902 (context.err = 1)",
        "W1119 08:22:22.445783 1513663 1513663 redis_context.cc:303] Failed to connect to Redis, retrying.",
        "redis_context.cc:336: Could not allocate Redis context, will retry in 100 milliseconds.",
        "2019-03-20 02:12:35,118\tWARNING worker.py:1249 -- Some processes that the driver needs to connect "
        "to have not registered with Redis, so retrying. Have you run 'ray start' on this node?",
    ],
)
def test_redis_era_connection_failures_are_cause_8(line: str) -> None:
    snapshot = parse_paste(line + "\n")
    assert "ray connection messages" in snapshot.notes
    assert ("gcs-redis-unreachable", 8) in _findings(line + "\n")


def test_serve_status_fragment_without_application_name() -> None:
    text = (
        "```\n  status: DEPLOY_FAILED\n  message: |-\n    Deployment failed:\n"
        "    ray::run_graph() (pid=49869, ip=10.104.98.7)\n    KeyError: 'app3_Modell'\n```\n"
    )
    ray = parse_paste(text).ray
    assert ray is not None
    [app] = ray.serve_applications
    assert app.status == "DEPLOY_FAILED" and "KeyError: 'app3_Modell'" in str(app.message)
    assert _findings(text)[0] == ("ray-serve-unhealthy", 10)


@pytest.mark.parametrize(
    ("name", "counted"),
    [
        ("nvidia.com/gpu", True),
        ("amd.com/gpu", True),
        ("nvidia.com/mig-2g.32gb", True),
        ("aliyun.com/gpu-mem", False),
        ("nvidia.com/gpu.shared", False),
        ("habana.ai/gaudi", False),
    ],
)
def test_kuberay_counts_gpu_limits_by_name(name: str, counted: bool) -> None:
    assert is_ray_gpu_limit(name) is counted
    group = RayGroup(name="workers", containers=[ContainerSpec(name="ray-worker", limits={name: 1.0})])
    assert (untranslated_accelerator(group) is None) is counted


def test_num_gpus_in_start_params_declares_the_vendor_gpu() -> None:
    fragment = """\
    workerGroupSpecs:
            rayStartParams:
              num-gpus: "1"
            resources:
              limits:
                aliyun.com/gpu-mem: "1"
                cpu: "1"
```
(autoscaler +3m13s) Error: No available node types can fulfill resource request {'GPU': 1.0, 'CPU': 1.0}. Add suitable node types to this cluster to resolve this issue.
"""
    assert "ray-group-vendor-gpu-resource" not in [rule for rule, _ in _findings(fragment)]


VLLM_WAIT = (
    "INFO 09-27 16:47:50 ray_utils.py:183] Waiting for creating a placement group of specs for 1270 seconds. "
    "specs=[{'node:10.2.0.127': 0.001, 'GPU': 1.0}, {'GPU': 1.0}, {'GPU': 1.0}, {'GPU': 1.0}]. Check `ray status` "
    "to see if you have enough resources\n"
)


def test_vllm_group_pinned_to_a_node_ip_no_node_registers_is_never_placed() -> None:
    [demand] = parse_paste(VLLM_WAIT).ray.demands  # type: ignore[union-attr]
    assert demand.kind == "placement_group" and len(demand.bundles) == 4
    assert demand.bundles[0] == {"node:10.2.0.127": 0.001, "GPU": 1.0}
    assert _findings(VLLM_WAIT)[0] == ("ray-demand-infeasible", 6)


def test_vllm_group_without_a_pin_is_not_judged_from_the_wait_alone() -> None:
    text = VLLM_WAIT.replace("'node:10.2.0.127': 0.001, ", "")
    assert parse_paste(text).ray.demands[0].listed  # type: ignore[union-attr]
    # Waiting work with nothing to judge it against: said as such, with no cause.
    assert _findings(text) == [("ray-demand-unjudged", None)]
