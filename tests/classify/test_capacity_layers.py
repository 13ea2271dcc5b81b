"""The diagnosis carries the GPUs layer by layer: a layer not read is None, never 0; JSON round-trips."""

from __future__ import annotations

import ast
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.classify import classify
from bot.diagnosis import (
    Capacity,
    Diagnosis,
    GpuActor,
    GpuModelCapacity,
    RayDemand,
    ScaleUp,
    UnscheduledPod,
)
from bot.read.snapshot_file import parse_snapshot
from bot.snapshot.data import dump_json, load_json
from bot.snapshot.model import Snapshot
from tests.support import scenarios
from tests.support.cluster import NS, Bundle, healthy

ROOT = Path(__file__).resolve().parents[2]


def capacity_of(bundle: Bundle) -> Capacity:
    return classify(parse_snapshot(bundle.to_json())).capacity


def test_dashboard_unreachable_leaves_the_ray_stages_unread() -> None:
    bundle = scenarios.dashboard_connection_refused()
    snapshot = parse_snapshot(bundle.to_json())
    assert snapshot.kubernetes is not None and snapshot.ray is None
    assert [e.source for e in snapshot.errors] == ["ray dashboard"]
    capacity = classify(snapshot).capacity
    assert capacity.layers_read == ["kubernetes"]
    assert (capacity.kubernetes_read, capacity.ray_read) == (True, False)
    [a100] = capacity.models
    assert a100.stages == (8, 8, None, None, 0)
    assert (capacity.gpu_nodes, capacity.ready_worker_pods) == (2, 4)
    assert capacity.ray_nodes_alive is None
    assert capacity.demands == [] and capacity.gpu_actors == []


def test_ray_read_with_no_gpu_registered_is_zero_not_unread() -> None:
    capacity = capacity_of(scenarios.ray_registers_no_gpu())
    assert capacity.layers_read == ["kubernetes", "ray"]
    [a100] = capacity.models
    assert a100.stages == (8, 8, 0, 0, 0)
    assert capacity.ray_nodes_alive == 5


def test_kubernetes_not_read_leaves_its_stages_unread() -> None:
    bundle = healthy()
    snapshot = replace(parse_snapshot(bundle.to_json()), kubernetes=None)
    capacity = classify(snapshot).capacity
    assert capacity.layers_read == ["ray"]
    assert [row.stages[:2] for row in capacity.models] == [(None, None)]
    assert capacity.models[0].registered_in_ray == 8
    assert (capacity.gpu_nodes, capacity.ready_worker_pods, capacity.pending_pods) == (None, None, [])


def test_nothing_read_is_an_empty_picture() -> None:
    capacity = classify(Snapshot()).capacity
    assert capacity == Capacity()
    assert capacity.layers_read == [] and capacity.models == []


def test_pending_pods_carry_their_age_at_collection_and_their_reason() -> None:
    bundle = scenarios.third_gpu_worker_no_free_gpu()
    snapshot = replace(
        parse_snapshot(bundle.to_json()), collected_at=datetime(2026, 11, 30, 9, 52, 41, tzinfo=UTC)
    )
    [pending] = classify(snapshot).capacity.pending_pods
    assert (pending.name, pending.namespace, pending.reason) == (scenarios.PENDING, NS, "Unschedulable")
    assert pending.age_s == 40 * 60.0
    assert pending.created == datetime(2026, 11, 30, 9, 12, 41, tzinfo=UTC)


def test_pending_pods_without_a_collection_time_have_no_age() -> None:
    [pending] = capacity_of(scenarios.third_gpu_worker_no_free_gpu()).pending_pods
    assert pending.created is not None and pending.age_s is None


def test_ray_demands_actors_and_scale_ups() -> None:
    capacity = capacity_of(scenarios.four_gpu_task_waits_on_detached_actor())
    assert [(d.shape.get("GPU"), d.count) for d in capacity.demands] == [(4.0, 2)]
    assert [(a.name, a.gpus) for a in capacity.gpu_actors] == [("embedder", 4.0), ("trainer-0", 1.0)]
    assert capacity.gpu_actors[0].started == datetime(2026, 11, 29, 17, 2, 11, tzinfo=UTC)
    assert [s.source for s in capacity_of(scenarios.autoscaler_scaled_up()).scale_ups] == [
        "cluster-autoscaler"
    ]
    assert [s.source for s in capacity_of(scenarios.karpenter_launched_a_node()).scale_ups] == ["karpenter"]


@pytest.mark.parametrize(
    "build",
    [
        healthy,
        scenarios.dashboard_connection_refused,
        scenarios.third_gpu_worker_no_free_gpu,
        scenarios.four_gpu_task_waits_on_detached_actor,
        scenarios.task_asks_for_h100_on_a100_cluster,
        scenarios.autoscaler_scaled_up,
    ],
    ids=lambda build: build.__name__,
)
def test_the_diagnosis_with_its_capacity_round_trips_through_json(build: object) -> None:
    diagnosis = classify(parse_snapshot(build().to_json()))  # type: ignore[operator]
    again = load_json(Diagnosis, dump_json(diagnosis))
    assert again == diagnosis
    assert again.capacity == diagnosis.capacity


def test_every_capacity_field_round_trips_through_json() -> None:
    capacity = Capacity(
        layers_read=["kubernetes"],
        models=[GpuModelCapacity("A100", 8, 8.5, None, None, 0)],
        gpu_nodes=2,
        pending_pods=[
            UnscheduledPod(
                name="w", namespace="ml", created=datetime(2026, 1, 1, tzinfo=UTC), age_s=90.0, reason="x"
            ),
            UnscheduledPod(name="v", namespace="ml"),
        ],
        ready_worker_pods=0,
        demands=[RayDemand(shape={"GPU": 1.0}, count=3)],
        gpu_actors=[GpuActor(name="a", gpus=0.5, started=None)],
        scale_ups=[ScaleUp(source="ray-autoscaler"), ScaleUp(source="karpenter", at=datetime(2026, 1, 1))],
    )
    again = load_json(Capacity, dump_json(capacity))
    assert again == capacity
    # None stays "not read", 0 stays zero, an int stays an int.
    assert again.models[0].stages == (8, 8.5, None, None, 0)
    assert type(again.models[0].allocatable) is int and again.ray_nodes_alive is None


RENDERERS = sorted(
    str(path.relative_to(ROOT))
    for pattern in ("bot/render/*.py", "bot/deliver/blocks/*.py")
    for path in ROOT.glob(pattern)
)


@pytest.mark.parametrize("module", RENDERERS)
def test_renderers_read_the_diagnosis_not_the_snapshot(module: str) -> None:
    tree = ast.parse((ROOT / module).read_text(encoding="utf-8"))
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    imported |= {
        alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names
    }
    assert not {name for name in imported if name.startswith(("bot.classify", "bot.snapshot"))}
