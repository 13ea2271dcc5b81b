"""Kubernetes-layer readings that the pasted text alone cannot settle, and the ones it can.

The texts are real: the case files under tests/cases (quoted from public threads, see
tests/corpus/*/expected.json for their sources), cut or combined where a test needs one fact more.
"""

from __future__ import annotations

from bot.catalogue import default_catalogue
from bot.render.localize import localize
from tests.support.rule_cases import case_text, diagnose_paste, rules_of

SCHEDULER_COUNT_ONLY = case_text("k8s-gpu-shortage-unconfirmed", "fires", "scheduler-count-only.txt")


def test_a_gpu_count_without_node_data_is_read_both_ways_capacity_first() -> None:
    diagnosis = diagnose_paste(SCHEDULER_COUNT_ONLY)
    assert rules_of(diagnosis)[:2] == ["k8s-insufficient-resources", "k8s-gpu-shortage-unconfirmed"]
    unconfirmed = diagnosis.findings[1]
    assert (unconfirmed.cause, unconfirmed.severity) == (3, "warning")
    assert unconfirmed.evidence[0].text in SCHEDULER_COUNT_ONLY


def test_the_undecided_reading_says_what_settles_it_in_both_languages() -> None:
    finding = next(f for f in diagnose_paste(SCHEDULER_COUNT_ONLY).findings if f.cause == 3)
    catalogue = default_catalogue()
    english = localize(finding, catalogue, "en", None)
    chinese = localize(finding, catalogue, "zh", None)
    assert any("grep -A8 Allocatable" in c for c in english.commands)
    assert any("allocatable.nvidia\\.com/gpu" in c for c in english.commands)
    assert "cannot tell" in english.title
    assert "分不清" in chinese.title
    assert "Insufficient nvidia.com/gpu on 5 node(s)" in english.explanation


def test_pasted_node_names_fill_the_settling_command() -> None:
    text = SCHEDULER_COUNT_ONLY + "\nName:               gpu-node-7\nRoles:              <none>\n"
    finding = next(f for f in diagnose_paste(text).findings if f.rule == "k8s-gpu-shortage-unconfirmed")
    english = localize(finding, default_catalogue(), "en", None)
    assert "kubectl describe node gpu-node-7 | grep -A8 Allocatable" in english.commands


def test_node_allocatable_with_gpus_settles_it_as_capacity() -> None:
    text = case_text("k8s-gpu-shortage-unconfirmed", "quiet", "node-allocatable-shows-gpus.txt")
    rules = rules_of(diagnose_paste(text))
    assert "k8s-gpu-shortage-unconfirmed" not in rules
    assert rules[0] in ("k8s-request-exceeds-every-node", "k8s-insufficient-resources")


def test_a_gpu_node_with_labels_and_no_allocatable_is_cause_3_first() -> None:
    text = SCHEDULER_COUNT_ONLY + (
        "\nName:               gke-pool-gpu-1\n"
        "Labels:             cloud.google.com/gke-accelerator=nvidia-tesla-t4\n"
        "Capacity:\n cpu:                4\n memory:             16408544Ki\n pods:               110\n"
        "Allocatable:\n cpu:                3920m\n memory:             13000000Ki\n pods:               110\n"
    )
    diagnosis = diagnose_paste(text)
    assert diagnosis.findings[0].cause == 3
    assert "k8s-gpu-shortage-unconfirmed" not in rules_of(diagnosis)


def test_a_not_ready_taint_is_a_node_condition_not_a_missing_toleration() -> None:
    diagnosis = diagnose_paste(
        case_text("k8s-node-not-ready", "fires", "coredns-node-not-ready-cni-missing.txt")
    )
    assert rules_of(diagnosis)[0] == "k8s-node-not-ready"
    assert "k8s-untolerated-taint" not in rules_of(diagnosis)
    finding = diagnosis.findings[0]
    assert finding.cause == 2
    assert finding.params["condition"] == "{node.kubernetes.io/not-ready: }"


def test_the_old_not_ready_wording_has_the_same_reading() -> None:
    diagnosis = diagnose_paste("0/3 nodes are available: 3 node(s) were not ready.")
    assert rules_of(diagnosis)[0] == "k8s-node-not-ready"


def test_a_gpu_taint_stays_a_toleration_problem() -> None:
    text = case_text("k8s-node-not-ready", "quiet", "gpu-taint-not-node-condition.txt")
    rules = rules_of(diagnose_paste(text))
    assert "k8s-node-not-ready" not in rules
    assert "k8s-untolerated-taint" in rules


def test_tolerations_beside_a_capacity_without_gpu_read_as_a_node_that_advertises_none() -> None:
    text = case_text(
        "k8s-pasted-node-advertises-no-gpu", "fires", "tolerations-beside-capacity-without-gpu.txt"
    )
    diagnosis = diagnose_paste(text)
    assert rules_of(diagnosis) == ["k8s-pasted-node-advertises-no-gpu"]
    finding = diagnosis.findings[0]
    assert finding.cause == 3
    # Quoted as pasted, cut mid-word as it was.
    assert any(e.text == "nvidia.com/gpu=present:NoSched" for e in finding.evidence)


def test_a_capacity_without_gpu_and_no_gpu_pod_says_nothing() -> None:
    text = case_text(
        "k8s-pasted-node-advertises-no-gpu", "fires", "tolerations-beside-capacity-without-gpu.txt"
    )
    capacity_only = text[text.index("Capacity:") :]
    assert "k8s-pasted-node-advertises-no-gpu" not in rules_of(diagnose_paste(capacity_only))


def test_gpu_limits_of_several_containers_add_up() -> None:
    diagnosis = diagnose_paste(
        case_text("k8s-gpu-summed-over-containers", "fires", "two-containers-one-gpu-each.txt")
    )
    finding = diagnosis.findings[0]
    assert (finding.rule, finding.cause) == ("k8s-gpu-summed-over-containers", 1)
    assert finding.params["total"] == "2"
    assert finding.params["containers"] == "cuda-container (1), digits-container (1)"
