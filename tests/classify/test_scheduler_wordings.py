"""kube-scheduler's and cluster-autoscaler's words in every release, read reason by reason.

The messages are quoted from public issue threads and the projects' docs (see tests/corpus for
where each comes from); the grammar under test is ``bot.classify.fit``.
"""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.classify.detectors.autoscaling import refusal_verdicts
from bot.read.scheduler_message import (
    insufficient_resource,
    normalise_reason,
    parse_scale_up_refusal,
    parse_scheduler_message,
    reason_category,
)


def test_old_taint_wording_beside_a_shortage_is_two_reasons() -> None:
    # Kubernetes 1.18-1.24: the taint reason has a comma of its own.
    parsed = parse_scheduler_message(
        "0/6 nodes are available: 1 node(s) had taint {node-role.kubernetes.io/master: }, "
        "that the pod didn't tolerate, 5 Insufficient memory."
    )
    assert parsed is not None
    total, reasons, prefilter = parsed
    assert (total, prefilter) == (6, None)
    assert reasons == Counter(
        {
            "node(s) had taint {node-role.kubernetes.io/master: }, that the pod didn't tolerate": 1,
            "Insufficient memory": 5,
        }
    )


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        # 1.6 to 1.9: the count follows the reason, in brackets.
        (
            "No nodes are available that match all of the following predicates:: PodFitsHostPorts (1).",
            {"PodFitsHostPorts": 1},
        ),
        (
            "No nodes are available that match all of the following predicates:: Insufficient cpu (4), "
            "NoVolumeZoneConflict (2)",
            {"Insufficient cpu": 4, "NoVolumeZoneConflict": 2},
        ),
        # 1.2 to 1.5: a summary, or one line per node.
        (
            "pod (belligerent-ibis-minio-825379079-zv6bb) failed to fit in any node fit failure summary on "
            "nodes : NoVolumeZoneConflict (4), PodToleratesNodeTaints (3)",
            {"NoVolumeZoneConflict": 4, "PodToleratesNodeTaints": 3},
        ),
        (
            "pod (service-loadbalancer-do0ix) failed to fit in any node\n"
            "fit failure on node (kube-node1): MatchNodeSelector\n"
            "fit failure on node (kube-node3): MatchNodeSelector\n",
            {"MatchNodeSelector": 2},
        ),
        (
            "pod (nginx-deployment-1370807587-fz9sd) failed to fit in any node\n"
            "  fit failure on node (gemini-node-6ta5): Node didn't have enough resource: CPU, requested: 1000, "
            "used: 1420, capacity: 2000\n"
            "  fit failure on node (gemini-node-wul5): Node didn't have enough resource: CPU, requested: 1000, "
            "used: 1100, capacity: 2000",
            {"Node didn't have enough resource: CPU": 2},
        ),
        # 1.0: one predicate, no count.
        ("Failed for reason PodFitsResources and possibly others", {"PodFitsResources": 1}),
        # 1.11 to 1.13 folded repeats.
        (
            "0/3 nodes are available: 3 pod has unbound PersistentVolumeClaims (repeated 3 times).",
            {"pod has unbound PersistentVolumeClaims": 3},
        ),
    ],
)
def test_every_release_wording_is_counted(message: str, expected: dict[str, int]) -> None:
    parsed = parse_scheduler_message(message)
    assert parsed is not None
    assert parsed[1] == Counter(expected)


@pytest.mark.parametrize(
    ("reason", "category"),
    [
        ("node(s) didn't have free ports for the requested pod ports", "ports"),
        ("PodFitsHostPorts", "ports"),
        ("node(s) had volume node affinity conflict", "volume"),
        ("NoVolumeZoneConflict", "volume"),
        ("pod has unbound immediate PersistentVolumeClaims", "volume"),
        ("node(s) didn't match Pod's node affinity/selector", "selector"),
        ("MatchNodeSelector", "selector"),
        ("node(s) didn't match pod topology spread constraints", "topology"),
        ("node(s) didn't satisfy existing pods anti-affinity rules", "topology"),
        ("PodToleratesNodeTaints", "taint"),
        ("node(s) had untolerated taint {nvidia.com/gpu: present}", "taint"),
        ("node(s) were unschedulable", "cordoned"),
        ("node(s) were not ready", "node-condition"),
        ("node(s) had memory pressure", "node-condition"),
        ("node(s) were out of disk space", "node-condition"),
        # 1.17 on, the node's condition is a taint the node lifecycle controller or kubelet sets.
        ("node(s) had untolerated taint {node.kubernetes.io/not-ready: }", "node-condition"),
        ("node(s) had untolerated taint {node.kubernetes.io/unreachable: }", "node-condition"),
        (
            "node(s) had taint {node.kubernetes.io/disk-pressure: }, that the pod didn't tolerate",
            "node-condition",
        ),
        (
            "node(s) had untolerated taint {node.cloudprovider.kubernetes.io/uninitialized: true}",
            "node-condition",
        ),
        ("node(s) had untolerated taint {node.kubernetes.io/unschedulable: }", "cordoned"),
        ("PodFitsResources", "resources"),
        ("Too many pods", "resources"),
        ("max node group size reached", "scale-limit"),
        ("max cluster cpu, memory limit reached", "scale-limit"),
        ("in backoff after failed scale-up", "scale-backoff"),
        ("No preemption victims found for incoming pod", "preemption"),
    ],
)
def test_reason_categories(reason: str, category: str) -> None:
    assert reason_category(reason) == category


def test_old_resource_names_are_made_current() -> None:
    assert insufficient_resource("Node didn't have enough resource: CPU") == "cpu"
    assert (
        insufficient_resource("Insufficient alpha.kubernetes.io/nvidia-gpu")
        == "alpha.kubernetes.io/nvidia-gpu"
    )
    assert normalise_reason("Too many pods") == normalise_reason("PodExceedsMaxPodNumber")


def test_autoscaler_reasons_with_commas_stay_whole() -> None:
    refusal = parse_scale_up_refusal(
        "pod didn't trigger scale-up: 1 max cluster cpu, memory limit reached, "
        "2 node(s) didn't match Pod's node affinity/selector"
    )
    assert refusal is not None and not refusal.wouldnt_fit
    assert refusal.reasons == Counter(
        {"max cluster cpu, memory limit reached": 1, "node(s) didn't match Pod's node affinity/selector": 2}
    )
    assert refusal_verdicts(refusal.reasons, refusal.wouldnt_fit, refusal.whole) == ["limit", "no-match"]


@pytest.mark.parametrize(
    ("message", "verdicts"),
    [
        ("pod didn't trigger scale-up (it wouldn't fit if a new node is added)", ["limit"]),
        (
            "pod didn't trigger scale-up (it wouldn't fit if a new node is added): 1 in backoff after failed scale-up",
            ["backoff"],
        ),
        (
            "pod didn't trigger scale-up (it wouldn't fit if a new node is added): 2 Insufficient nvidia.com/gpu, "
            "1 max node group size reached",
            ["limit", "template"],
        ),
        ("pod didn't trigger scale-up: 1 Insufficient cpu", ["too-small"]),
        (
            "pod didn't trigger scale-up (it wouldn't fit if a new node is added): 4 Insufficient cpu, "
            "5 Insufficient memory, 1 node(s) had volume node affinity conflict, 4 node(s) didn't match node selector",
            ["no-match", "too-small"],
        ),
        ("pod didn't trigger scale-up: max total nodes in cluster reached", ["limit"]),
    ],
)
def test_autoscaler_verdicts(message: str, verdicts: list[str]) -> None:
    refusal = parse_scale_up_refusal(message)
    assert refusal is not None
    assert refusal_verdicts(refusal.reasons, refusal.wouldnt_fit, refusal.whole) == verdicts


@given(st.text(max_size=400))
def test_no_text_crashes_the_grammar(text: str) -> None:
    parse_scheduler_message(text)
    parse_scale_up_refusal(text)
    reason_category(text)
    normalise_reason(text)
