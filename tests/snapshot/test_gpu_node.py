"""One definition of "GPU node", and every layer that counts GPU nodes agrees with it."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bot.catalogue import default_catalogue
from bot.classify import classify
from bot.demo import kuberay_state
from bot.read.snapshot_file import parse_snapshot
from bot.render.health import health_facts
from bot.snapshot.gpu import gpu_label, is_gpu_node, marked_as_gpu_node
from bot.snapshot.kubernetes import Node, Taint


@pytest.mark.parametrize(
    ("node", "gpu", "marked"),
    [
        (Node(name="a100", allocatable={"nvidia.com/gpu": 8.0}), True, False),
        (Node(name="legacy", capacity={"alpha.kubernetes.io/nvidia-gpu": 1.0}), True, False),
        (Node(name="silent", labels={"nvidia.com/gpu.present": "true"}), True, True),
        (Node(name="gke", labels={"cloud.google.com/gke-accelerator": "nvidia-tesla-t4"}), True, True),
        (Node(name="tainted", taints=[Taint(key="nvidia.com/gpu", effect="NoSchedule")]), True, True),
        (Node(name="switched-off", labels={"nvidia.com/gpu.present": "false"}), False, False),
        (Node(name="cpu", allocatable={"cpu": 16.0, "memory": 64e9}), False, False),
        (Node(name="zero", allocatable={"nvidia.com/gpu": 0.0}), False, False),
    ],
    ids=lambda value: value.name if isinstance(value, Node) else str(value),
)
def test_what_makes_a_gpu_node(node: Node, gpu: bool, marked: bool) -> None:
    assert is_gpu_node(node) is gpu
    assert marked_as_gpu_node(node) is marked


def test_the_label_that_marks_a_node_is_named() -> None:
    assert gpu_label(Node(name="n", labels={"nvidia.com/gpu.product": "NVIDIA-A100"})) == (
        "nvidia.com/gpu.product",
        "NVIDIA-A100",
    )
    assert gpu_label(Node(name="n", allocatable={"nvidia.com/gpu": 1.0})) == ("resource", "nvidia.com/gpu")
    assert gpu_label(Node(name="n")) == ("", "")


def test_verdict_figures_and_health_post_count_the_same_gpu_nodes() -> None:
    snapshot = parse_snapshot(kuberay_state.load_state())
    diagnosis = classify(snapshot, default_catalogue())
    facts = health_facts(diagnosis, datetime(2026, 12, 1, tzinfo=UTC))
    expected = sum(1 for node in snapshot.kubernetes.nodes if is_gpu_node(node))  # type: ignore[union-attr]
    assert expected > 0
    assert diagnosis.figures["gpu_nodes"] == str(expected)
    assert facts.gpu_nodes == expected
