"""GPU capacity per model, layer by layer, from the realistic cluster and its incidents."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.classify import classify
from bot.classify.capacity import model_name
from bot.collect.paste import parse_paste
from bot.diagnosis import Capacity, GpuModelCapacity
from bot.read.snapshot_file import parse_snapshot
from bot.render.capacity import _width as display_width
from bot.render.capacity import capacity_comment, capacity_table, gap_summary
from bot.snapshot.data import load
from bot.snapshot.model import Snapshot
from bot.snapshot.ray import RayState
from tests.support import k8s, scenarios
from tests.support.cluster import A100_LABELS, GPU_TAINT, GPU_WORKERS, Bundle, healthy


def capacity_figures(snapshot: Snapshot) -> list[GpuModelCapacity]:
    """The rows the classifier puts in the diagnosis."""
    return classify(snapshot).capacity.models


def both_read(*rows: GpuModelCapacity) -> Capacity:
    return Capacity(layers_read=["kubernetes", "ray"], models=list(rows))


def figures_of(bundle: Bundle) -> dict[str, GpuModelCapacity]:
    return {row.model: row for row in capacity_figures(parse_snapshot(bundle.to_json()))}


def stages(row: GpuModelCapacity) -> dict[str, float | int | None]:
    return {
        "allocatable": row.allocatable,
        "given": row.given_to_ray_pods,
        "registered": row.registered_in_ray,
        "in_use": row.in_use,
        "waiting": row.pending_demand,
    }


def test_healthy_cluster_has_every_gpu_in_every_layer() -> None:
    [a100] = capacity_figures(parse_snapshot(healthy().to_json()))
    # Two 4-GPU A100 nodes, two 4-GPU workers on them, both joined; the trainer holds one GPU.
    assert a100.model == "A100"
    assert stages(a100) == {"allocatable": 8, "given": 8, "registered": 8, "in_use": 1, "waiting": 0}


def test_ray_node_without_its_gpus_shows_the_drop_between_pods_and_ray() -> None:
    """Cause 4: the Pod got 4 GPUs, the raylet at its IP registered none."""
    a100 = figures_of(scenarios.ray_node_reports_no_gpu())["A100"]
    assert (a100.allocatable, a100.given_to_ray_pods, a100.registered_in_ray) == (8, 8, 4)
    assert "4 of the 8 GPUs given to Ray Pods are not registered in Ray" in gap_summary(both_read(a100), "en")


def test_worker_that_never_joined_shows_the_same_drop() -> None:
    """Cause 8: the worker Pod runs with 4 GPUs but no Ray node has its IP."""
    a100 = figures_of(scenarios.gpu_worker_runs_but_never_joined())["A100"]
    assert stages(a100) == {"allocatable": 8, "given": 8, "registered": 4, "in_use": 1, "waiting": 0}


def test_pending_worker_pod_is_waiting_demand_for_its_model() -> None:
    a100 = figures_of(scenarios.third_gpu_worker_no_free_gpu())["A100"]
    assert stages(a100) == {"allocatable": 8, "given": 8, "registered": 8, "in_use": 1, "waiting": 4}


def test_ray_demands_waiting_behind_a_detached_actor() -> None:
    """Cause 5: two {GPU: 4} tasks wait; the embedder holds a whole node, the trainer one GPU."""
    a100 = figures_of(scenarios.four_gpu_task_waits_on_detached_actor())["A100"]
    assert stages(a100) == {"allocatable": 8, "given": 8, "registered": 8, "in_use": 5, "waiting": 8}


def test_demand_for_a_model_the_cluster_lacks_gets_its_own_row() -> None:
    rows = figures_of(scenarios.task_asks_for_h100_on_a100_cluster())
    assert list(rows) == ["A100", "H100"]
    assert stages(rows["H100"]) == {"allocatable": 0, "given": 0, "registered": 0, "in_use": 0, "waiting": 3}
    assert rows["A100"].pending_demand == 0
    assert gap_summary(both_read(*rows.values()), "en").startswith("H100: 3 GPU(s) wanted but no Ready node")


def test_gpu_node_without_allocatable_gpus_still_has_its_row() -> None:
    """Cause 3: gpu-a100-2 lost its device plugin; its 4 GPUs leave the allocatable bar."""
    bundle = scenarios.gpu_node_with_no_gpu_resource()
    bundle.remove("nodes", "gpu-a100-1")
    [a100] = capacity_figures(parse_snapshot(bundle.to_json()))
    assert a100.model == "A100" and a100.allocatable == 0


def test_cordoned_and_not_ready_nodes_offer_nothing_new() -> None:
    bundle = healthy()
    bundle.find("nodes", "gpu-a100-2")["spec"]["unschedulable"] = True
    a100 = figures_of(bundle)["A100"]
    assert a100.allocatable == 4
    # The worker already running on the cordoned node keeps its GPUs, in Kubernetes and in Ray.
    assert a100.given_to_ray_pods == 8 and a100.registered_in_ray == 8

    bundle = healthy()
    bundle.remove("nodes", "gpu-a100-2")
    bundle.items("nodes").append(
        k8s.node("gpu-a100-2", gpus=4, labels=A100_LABELS, taints=[GPU_TAINT], ip="10.128.0.6", ready=False)
    )
    assert figures_of(bundle)["A100"].allocatable == 4


def test_models_are_named_from_every_label_convention() -> None:
    bundle = healthy()
    t4 = {"cloud.google.com/gke-accelerator": "nvidia-tesla-t4", "nvidia.com/gpu.present": "true"}
    h100 = {"karpenter.k8s.aws/instance-gpu-name": "h100", "karpenter.k8s.aws/instance-gpu-count": "8"}
    bundle.items("nodes").extend(
        [
            k8s.node("gpu-t4-1", gpus=1, labels=t4, ip="10.128.0.7"),
            k8s.node("gpu-h100-1", gpus=8, labels=h100, ip="10.128.0.8"),
            k8s.node("gpu-mystery-1", gpus=2, labels={"nvidia.com/gpu.present": "true"}, ip="10.128.0.9"),
        ]
    )
    rows = figures_of(bundle)
    assert [(m, r.allocatable) for m, r in rows.items()] == [
        ("A100", 8),
        ("H100", 8),
        ("T4", 1),
        ("unknown", 2),
    ]


@pytest.mark.parametrize(
    ("label", "model"),
    [
        ("NVIDIA-A100-SXM4-40GB", "A100"),
        ("NVIDIA-A100-SXM4-80GB", "A100"),
        ("nvidia-tesla-a100", "A100"),
        ("NVIDIA-H100-80GB-HBM3", "H100"),
        ("Tesla-T4", "T4"),
        ("NVIDIA-A10G", "A10G"),
        ("nvidia-l4", "L4"),
        ("A100-80G", "A100"),
        ("true", None),
        ("", None),
    ],
)
def test_model_names(label: str, model: str | None) -> None:
    assert model_name(label) == model


def ray_only(nodes: list[dict[str, Any]], **extra: Any) -> Snapshot:
    return Snapshot(cluster="raycluster-gpu", ray=load(RayState, {"nodes": nodes, **extra}))


def test_ray_only_snapshot_groups_nodes_by_accelerator_type() -> None:
    snapshot = ray_only(
        [
            {
                "node_ip": "10.8.3.10",
                "resources_total": {"CPU": 20.0, "GPU": 4.0, "accelerator_type:A100": 1.0},
                "resources_available": {"CPU": 20.0, "GPU": 1.0, "accelerator_type:A100": 1.0},
            },
            {
                "node_ip": "10.8.9.10",
                "resources_total": {"CPU": 8.0, "GPU": 1.0},
                "resources_available": None,
            },
            {"node_ip": "10.8.1.10", "resources_total": {"CPU": 4.0}, "is_head": True},
            {
                "node_ip": "10.8.5.10",
                "state": "DEAD",
                "resources_total": {"GPU": 8.0, "accelerator_type:H100": 1.0},
            },
        ],
        actors=[{"name": "decoder", "node_id": None, "required_resources": {"GPU": 1.0}}],
    )
    rows = {row.model: row for row in capacity_figures(snapshot)}
    assert list(rows) == ["A100", "unknown"]  # the DEAD H100 node is gone from Ray
    # Kubernetes was not read: its stages are unknown, not empty.
    assert stages(rows["A100"]) == {
        "allocatable": None,
        "given": None,
        "registered": 4,
        "in_use": 3,
        "waiting": 0,
    }
    assert rows["unknown"].registered_in_ray == 1 and rows["unknown"].in_use == 0


RAY_STATUS_T4 = """\
======== Autoscaler status: 2026-11-30 09:41:12.511207 ========
Node status
---------------------------------------------------------------
Active:
 1 head
 2 gpu-t4
Pending:
 (no pending nodes)
Recent failures:
 (no failures)

Resources
---------------------------------------------------------------
Usage:
 3.0/18.0 CPU
 1.0/2.0 GPU
 0.0/2.0 accelerator_type:T4
 0B/48.00GiB memory
 0B/14.00GiB object_store_memory

Demands:
 {'GPU': 2.0}: 2+ pending tasks/actors
"""


def test_pasted_ray_status_gives_cluster_totals_under_its_one_model() -> None:
    snapshot = parse_paste(RAY_STATUS_T4)
    [t4] = capacity_figures(snapshot)
    assert t4.model == "T4"
    assert stages(t4) == {"allocatable": None, "given": None, "registered": 2, "in_use": 1, "waiting": 4}
    # Nothing of Kubernetes was pasted: no "no Ready node offers T4", no "every GPU arrived".
    capacity = classify(snapshot).capacity
    assert gap_summary(capacity, "en") == (
        "Kubernetes was not read, so which GPUs its nodes offer and its Ray Pods were given is not known."
    )
    table = capacity_table(capacity, cluster="pasted", lang="en")
    assert table.splitlines()[3].split() == ["T4", "not", "read", "not", "read", "2", "1", "4"]


def test_untyped_demand_on_a_cluster_with_several_models_counts_under_any() -> None:
    bundle = scenarios.four_gpu_task_waits_on_detached_actor()
    bundle.items("nodes").append(
        k8s.node("gpu-t4-1", gpus=1, labels={"nvidia.com/gpu.product": "Tesla-T4"}, ip="10.128.0.7")
    )
    rows = figures_of(bundle)
    assert list(rows) == ["A100", "T4", "any"]
    assert rows["A100"].pending_demand == 0 and rows["any"].pending_demand == 8


def test_placement_group_bundles_add_up() -> None:
    rows = figures_of(scenarios.strict_pack_larger_than_a_node())
    assert rows["A100"].pending_demand == 8


def test_snapshot_with_nothing_gives_no_rows_and_says_so() -> None:
    assert capacity_figures(Snapshot()) == []
    assert (
        gap_summary(classify(Snapshot()).capacity, "en")
        == "Neither layer was read, so no GPU figure is known."
    )
    assert gap_summary(both_read(), "en").startswith("Neither layer shows a GPU")
    assert "A100" not in capacity_table(both_read(), cluster="empty", lang="en")


def test_other_rayclusters_pods_are_not_given_to_this_one() -> None:
    bundle = healthy()
    other = bundle.find("pods", GPU_WORKERS[1])
    other["metadata"]["labels"]["ray.io/cluster"] = "another-cluster"
    assert figures_of(bundle)["A100"].given_to_ray_pods == 4


def test_table_columns_line_up_in_both_languages() -> None:
    figures = capacity_figures(parse_snapshot(scenarios.gpu_worker_runs_but_never_joined().to_json()))
    for lang in ("en", "zh"):
        table = capacity_table(both_read(*figures), cluster="raycluster-gpu", lang=lang)  # type: ignore[arg-type]
        header, row = table.splitlines()[2:4]
        assert display_width(header) == display_width(row)
        assert row.split() == ["A100", "8", "8", "4", "1", "0"]
    assert "型号" in capacity_table(both_read(*figures), cluster="raycluster-gpu", lang="zh")


def test_slack_comment_lists_each_model_and_escapes_names() -> None:
    rows = both_read(GpuModelCapacity("A100", 8, 8, 4, 1, 0), GpuModelCapacity("<b>", 0, 0, 0, 0, 2))
    comment = capacity_comment(rows, cluster="gpu-prod", lang="en")
    assert (
        "*A100*: 8 allocatable → 8 given to Ray Pods → 4 registered in Ray → 1 in use · 0 waiting" in comment
    )
    assert "<b>" not in comment and "&lt;b&gt;" in comment
    assert "分配给 Ray Pod 8" in capacity_comment(rows, cluster="gpu-prod", lang="zh")


_resources = st.dictionaries(
    st.sampled_from(["CPU", "GPU", "accelerator_type:A100", "accelerator_type:", "A100", "memory"]),
    st.floats(min_value=-8, max_value=64, allow_nan=False),
    max_size=4,
)
_ray_nodes = st.lists(
    st.fixed_dictionaries(
        {
            "node_ip": st.sampled_from(["10.8.3.10", "10.8.4.10", "10.8.9.9", ""]),
            "state": st.sampled_from(["ALIVE", "DEAD", "IDLE"]),
            "resources_total": _resources,
            "resources_available": st.one_of(st.none(), _resources),
        }
    ),
    max_size=6,
)


@settings(max_examples=60, deadline=None)
@given(nodes=_ray_nodes, demand=_resources)
def test_odd_ray_state_never_crashes(nodes: list[dict[str, Any]], demand: dict[str, float]) -> None:
    bundle = healthy()
    assert bundle.ray_state is not None
    bundle.ray_state["nodes"] = nodes
    bundle.ray_state["demands"] = [{"shape": demand, "count": 0}]
    capacity = classify(parse_snapshot(bundle.to_json())).capacity
    rows = capacity.models
    assert capacity.layers_read == ["kubernetes", "ray"]
    assert all(row.model and min(value or 0 for value in row.stages) >= 0 for row in rows)
    assert all(None not in row.stages for row in rows)
    assert all((row.in_use or 0) <= (row.registered_in_ray or 0) for row in rows)
    assert gap_summary(capacity, "zh")
