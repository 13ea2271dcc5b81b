"""Classification of Ray state recorded from a real local cluster (tests/fixtures/ray)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from bot.classify import classify
from bot.diagnosis import Diagnosis
from bot.read.snapshot_file import parse_snapshot
from bot.snapshot.model import Snapshot

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ray"


def snapshot_of(folder: str) -> Snapshot:
    answers = {
        path.stem: json.loads(path.read_text(encoding="utf-8"))
        for path in (FIXTURES / folder).glob("*.json")
        if not path.stem.startswith("_")
    }
    return parse_snapshot({"ray": answers})


def diagnose(folder: str) -> Diagnosis:
    return classify(snapshot_of(folder))


@pytest.mark.parametrize("folder", ["broken", "broken-autoscaler-v2"])
def test_a_held_demand_is_named_by_one_resource_whatever_order_ray_lists_them_in(folder: str) -> None:
    # Ray's demand shapes come from protobuf maps, whose order is not stable between answers.
    snapshot = snapshot_of(folder)
    assert snapshot.ray is not None
    demands = [replace(d, shape=dict(reversed(d.shape.items()))) for d in snapshot.ray.demands]
    flipped = replace(snapshot, ray=replace(snapshot.ray, demands=demands))

    def named(s: Snapshot) -> tuple[str, str]:
        held = next(f for f in classify(s).findings if f.rule == "ray-resources-held")
        return held.params["resource"], held.params["needed"]

    assert named(snapshot) == named(flipped) == ("GPU", "1")


@pytest.mark.parametrize("folder", ["broken", "broken-autoscaler-v2"])
def test_broken_workload_is_explained_cause_by_cause(folder: str) -> None:
    diagnosis = diagnose(folder)
    found = {(f.rule, f.subject.name) for f in diagnosis.findings}
    # The task that asks for an H100 on a cluster of A100 and T4 nodes: cause 7.
    assert ("ray-gpu-type-unregistered", "{CPU: 1, GPU: 1, accelerator_type:H100: 1}") in found
    # Four GPUs on one-GPU nodes, and a STRICT_PACK group of two GPUs: cause 6.
    assert ("ray-demand-infeasible", "{CPU: 1, GPU: 4}") in found
    assert (
        "ray-demand-infeasible",
        "placement group {CPU: 1, GPU: 1} + {CPU: 1, GPU: 1} (STRICT_PACK)",
    ) in found
    # The second A100 actor waits on the detached holder: cause 5, naming the holder.
    held = next(f for f in diagnosis.findings if f.rule == "ray-resources-held")
    assert held.subject.name == "{CPU: 1, GPU: 1, accelerator_type:A100: 1}"
    assert "gpu-holder" in held.params["holders"]
    assert ("ray-leftover-actor", "gpu-holder") in found
    # Application failures that look like waiting: cause 10.
    assert ("ray-serve-unhealthy", "broken-app") in found
    assert ("ray-job-failed", "raydiag-failing-job") in found
    # Ray's own detached actors (Serve replicas, job supervisors) are never called leftovers.
    leftovers = [f.subject.name for f in diagnosis.findings if f.rule == "ray-leftover-actor"]
    assert leftovers == ["gpu-holder"]
    assert diagnosis.verdict_layer == "ray"


def test_healthy_recording_is_quiet() -> None:
    diagnosis = diagnose("healthy")
    assert [f.rule for f in diagnosis.findings if f.severity != "info"] == []
    assert diagnosis.figures["ray_nodes_alive"] == "4"


@pytest.mark.parametrize("folder", ["older-shapes/ray-2.9", "older-shapes/ray-2.2"])
def test_older_shapes_classify_without_errors(folder: str) -> None:
    diagnosis = diagnose(folder)
    assert not [e for e in diagnosis.errors if e.source.startswith("rule ")]
    assert int(diagnosis.figures["ray_nodes_alive"]) >= 1
