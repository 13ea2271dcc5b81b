"""Scheduler reasons quoted inside a sentence, scale-ups asked for, and Autopilot's spec refusals."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from bot.classify.detectors.autoscaling import ScaleUpAsk, parse_scale_up
from bot.read.scheduler_message import parse_scheduler_message, quoted_reasons, reason_category
from tests.support.corpus import CORPUS
from tests.support.rule_cases import case_text, diagnose_paste, rules_of


def test_a_reason_quoted_in_prose_is_read_in_the_scheduler_spelling() -> None:
    found = quoted_reasons("the ray cluster will run into an error with `Pod's node affinity/selector`")
    assert list(found) == ["node(s) didn't match Pod's node affinity/selector"]
    assert reason_category(next(iter(found))) == "selector"
    named = quoted_reasons("the pod becomes un-schedulable with this error `X insufficient nvidia.com/gpu`")
    assert list(named) == ["Insufficient nvidia.com/gpu"]
    old_taint = quoted_reasons(
        "it had taint {node-role.kubernetes.io/master: }, that the pod didn't tolerate"
    )
    assert reason_category(next(iter(old_taint))) == "taint"


def test_everyday_words_are_not_scheduler_reasons() -> None:
    assert not quoted_reasons("the job failed with insufficient memory on my laptop")
    assert not quoted_reasons("we need more GPUs and a better node selector story")


def test_the_quoted_tier_is_the_last_one_the_message_grammar_tries() -> None:
    counted = parse_scheduler_message("0/3 nodes are available: 3 Insufficient nvidia.com/gpu.")
    assert counted is not None and counted[1]["Insufficient nvidia.com/gpu"] == 3
    quoted = parse_scheduler_message("stuck with insufficient nvidia.com/gpu since the upgrade")
    assert quoted is not None and quoted[0] == 0 and list(quoted[1]) == ["Insufficient nvidia.com/gpu"]


def test_both_wordings_of_triggered_scale_up_are_read() -> None:
    assert parse_scale_up("pod triggered scale-up: [{aks-gpupool-29545764-vmss 0->1 (max: 1)}]") == [
        ScaleUpAsk("aks-gpupool-29545764-vmss", 0, 1, 1)
    ]
    several = parse_scale_up("pod triggered scale-up: [{pool-a 1->2 (max: 4)} {pool-b 0->1 (max: 1)}]")
    assert several == [ScaleUpAsk("pool-a", 1, 2, 4), ScaleUpAsk("pool-b", 0, 1, 1)]
    old = parse_scale_up("pod triggered scale-up, group: nodes.example.com, sizes (current/new): 2/3")
    assert old == [ScaleUpAsk("nodes.example.com", 2, 3, None)]


def test_a_scale_up_asked_for_is_information_not_an_alarm() -> None:
    diagnosis = diagnose_paste(
        case_text("cluster-autoscaler-scale-up-in-flight", "fires", "aks-group-at-max.txt")
    )
    (finding,) = diagnosis.findings
    assert (finding.cause, finding.severity) == (9, "info")
    assert finding.params["ceiling"] == "aks-gpupool-29545764-vmss"
    assert diagnosis.verdict_layer == "healthy"


def test_autopilot_refusing_a_spec_feature_is_not_a_node_constraint() -> None:
    bare = diagnose_paste(
        case_text("k8s-autopilot-unsupported-pod-spec", "fires", "gpu-init-container-bare-sentence.txt")
    )
    assert rules_of(bare) == ["k8s-autopilot-unsupported-pod-spec"]
    assert "GPU-using init containers are not supported in Autopilot" in bare.findings[0].params["violation"]
    selector = diagnose_paste(
        case_text("k8s-autopilot-node-constraint", "fires", "gpu-limitation-pretty-printed.txt")
    )
    assert rules_of(selector) == ["k8s-autopilot-node-constraint"]


@given(st.text(max_size=400))
def test_quoted_reasons_never_raise(text: str) -> None:
    for reason in quoted_reasons(text):
        assert (reason and reason in text) or reason.startswith(("node(s)", "Insufficient"))


def test_an_idle_device_plugin_daemonset_matters_only_in_a_paste_about_gpus() -> None:
    rows = case_text("gpu-stack-daemonset-on-no-node", "quiet", "get-all-cluster-without-gpu-nodes.txt")
    assert "gpu-stack-daemonset-on-no-node" not in rules_of(diagnose_paste(rows))
    pending = (CORPUS / "recorded-kubectl" / "insufficient-gpu-describe-pending-worker.txt").read_text(
        "utf-8"
    )
    both = diagnose_paste(rows + "\n" + pending)
    [finding] = [f for f in both.findings if f.rule == "gpu-stack-daemonset-on-no-node"]
    assert (finding.cause, finding.subject.name, finding.subject.namespace) == (
        3,
        "nvidia-device-plugin-daemonset",
        "kube-system",
    )


def test_a_demand_line_quoted_alone_is_waiting_work_not_a_verdict() -> None:
    diagnosis = diagnose_paste(case_text("ray-demand-unjudged", "fires", "demand-line-quoted-in-prose.txt"))
    assert rules_of(diagnosis) == ["ray-demand-unjudged"]
    assert diagnosis.findings[0].cause is None and diagnosis.findings[0].severity == "info"
