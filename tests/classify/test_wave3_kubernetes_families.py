"""Kubernetes-layer families read from real wordings: GKE's console and autoscaler visibility
events, AKS's one-reason-a-line autoscaler event, GKE Autopilot admission, quota refusals.

Every message is quoted from a public issue thread, doc page or test of the tool that writes it.
"""

from __future__ import annotations

import pytest

from bot.classify import classify
from bot.classify.detectors.autoscaling import gke_reading
from bot.collect.paste import parse_paste
from bot.read.scheduler_message import (
    parse_scale_up_refusal,
    parse_scheduler_message,
    reason_category,
    unlinked,
)


def _causes(text: str) -> list[tuple[int | None, str]]:
    return [(f.cause, f.rule) for f in classify(parse_paste(text)).findings]


def test_gke_console_lines_are_one_pods_reasons() -> None:
    parsed = parse_scheduler_message(
        "Cannot schedule pods: Insufficient cpu. Cannot schedule pods: node(s) didn't match node selector."
    )
    assert parsed is not None
    _, reasons, _ = parsed
    assert {reason_category(r) for r in reasons} == {"resources", "selector"}


def test_gke_console_shortage_beside_selector_is_cause_1() -> None:
    text = (
        "PodUnschedulable\nCannot schedule pods: Insufficient cpu.\nPodUnschedulable\n"
        "Cannot schedule pods: Insufficient memory.\nPodUnschedulable\n"
        "Cannot schedule pods: node(s) didn't match node selector.\n"
    )
    assert _causes(text)[0][0] == 1


def test_old_wouldnt_fit_with_a_missing_claim_is_the_claim() -> None:
    # The autoscaler replays the scheduler's filters on a template node: a claim that does not
    # exist fails there too, so the scale-up refusal is a consequence, not a full node group.
    text = (
        "[Normal] pod didn't trigger scale-up (it wouldn't fit if a new node is added)\n\n"
        '> Cannot schedule pods: persistentvolumeclaim "home-nfs" not found.\n'
    )
    causes = _causes(text)
    assert causes[0][0] == 2
    assert 9 not in [c for c, _ in causes]


def test_old_wouldnt_fit_alone_is_still_autoscaling() -> None:
    text = (
        'I0213 factory.go:33] Event(v1.ObjectReference{Kind:"Pod", Namespace:"default", '
        "Name:\"gpu-job-x\"}): type: 'Normal' reason: 'NotTriggerScaleUp' pod didn't trigger "
        "scale-up (it wouldn't fit if a new node is added)\n"
    )
    assert _causes(text)[0][0] == 9


def test_markdown_links_in_taint_keys_are_undone() -> None:
    assert unlinked("{[node.statcan.gc.ca/use](http://node.statcan.gc.ca/use): gpu}") == (
        "{node.statcan.gc.ca/use: gpu}"
    )
    assert (
        unlinked("1 Insufficient [nvidia.com/gpu](http://nvidia.com/gpu)") == "1 Insufficient nvidia.com/gpu"
    )


AKS_ONE_REASON_A_LINE = """\
pod didn't trigger scale-up:
4 node(s) had taint {[node.statcan.gc.ca/purpose](http://node.statcan.gc.ca/purpose): system}, that the pod didn't tolerate,
2 node(s) had taint {[node.statcan.gc.ca/use](http://node.statcan.gc.ca/use): gpu}, that the pod didn't tolerate,
1 Insufficient memory, 1 Insufficient [nvidia.com/gpu](http://nvidia.com/gpu),
1 node(s) had taint {CriticalAddonsOnly: true}, that the pod didn't tolerate,
1 max node group size reached
"""


def test_reasons_listed_a_line_each_are_one_autoscaler_message() -> None:
    snapshot = parse_paste(AKS_ONE_REASON_A_LINE)
    assert snapshot.kubernetes is not None
    events = snapshot.kubernetes.events
    assert [e.reason for e in events] == ["NotTriggerScaleUp"]
    refusal = parse_scale_up_refusal(events[0].message)
    assert refusal is not None
    assert refusal.reasons["max node group size reached"] == 1
    assert refusal.reasons["Insufficient nvidia.com/gpu"] == 1
    assert _causes(AKS_ONE_REASON_A_LINE)[0] == (9, "cluster-autoscaler-cannot-scale-up")


@pytest.mark.parametrize(
    ("message_id", "parameters", "reading"),
    [
        ("scale.up.error.out.of.resources", ["gke-pool-grp"], "no-scale-up"),
        ("scale.up.error.quota.exceeded", ["gke-pool-grp"], "no-scale-up"),
        ("no.scale.up.nap.pod.zonal.resources.exceeded", ["us-central1-f"], "no-scale-up"),
        ("no.scale.up.nap.pod.gpu.type.not.supported", ["nvidia-l4"], "no-scale-up"),
        ("no.scale.up.mig.skipped", ["max node group size reached"], "no-scale-up"),
        ("no.scale.up.mig.failing.predicate", ["NodeResourcesFit", "Insufficient memory"], "pod-too-large"),
        ("no.scale.up.mig.failing.predicate", ["Insufficient nvidia.com/gpu"], "pod-too-large"),
        ("no.scale.up.mig.failing.predicate", ["NodeAffinity"], "pod-constraint"),
        (
            "no.scale.up.mig.failing.predicate",
            ["TaintToleration", "node(s) had untolerated taint"],
            "pod-constraint",
        ),
        ("no.scale.up.nap.pod.compute.class.unknown", ["my-class"], "pod-constraint"),
        ("no.scale.up.nap.pod.invalid.label.value", [], "pod-constraint"),
    ],
)
def test_gke_message_ids_by_cause(message_id: str, parameters: list[str], reading: str) -> None:
    assert gke_reading(message_id, parameters) == reading


def test_autopilot_gpu_without_accelerator_selector_is_a_node_constraint() -> None:
    text = (
        'Error: admission webhook "warden-validating.common-webhooks.networking.gke.io" denied the '
        "request: GKE Warden rejected the request because it violates one or more constraints.\n"
        'Violations details: {"[denied by autogke-gpu-limitation]":["You must specify a GPU type with '
        "node selector 'cloud.google.com/gke-accelerator' when GPU is requested on Autopilot workloads; "
        'supported values are: [nvidia-tesla-t4]."]}\n'
    )
    findings = classify(parse_paste(text)).findings
    assert findings[0].rule == "k8s-autopilot-node-constraint"
    assert findings[0].params["known_values"] == "nvidia-tesla-t4"


@pytest.mark.parametrize(
    "message",
    [
        'pods "ml-pipeline-ui-artifact-684c5db68-s74w8" is forbidden: failed quota: kf-resource-quota: '
        "must specify cpu,memory",
        'pods "probe" is forbidden: failed quota: tenant-a-quota: must specify requests.cpu for: probe; '
        "requests.memory for: probe",
    ],
)
def test_quota_that_needs_requests_is_cause_1(message: str) -> None:
    findings = classify(parse_paste(f"Error from server (Forbidden): {message}\n")).findings
    assert (findings[0].cause, findings[0].rule) == (1, "k8s-quota-requires-requests")
    assert findings[0].params["quota"] in message


@pytest.mark.parametrize(
    ("wording", "first"),
    [
        # Karpenter's filter: the pair of criteria some instance type met says which one failed.
        ("no instance type has the required offering", 9),
        (
            "no instance type which met the scheduling requirements and had enough resources, had a required offering",
            9,
        ),
        (
            "no instance type which met the scheduling requirements and the required offering had the required resources",
            1,
        ),
        ("no instance type has enough resources", 1),
    ],
)
def test_karpenter_filter_wordings(wording: str, first: int) -> None:
    line = (
        '{"level":"ERROR","logger":"controller.provisioner","message":"Could not schedule pod, '
        f'incompatible with nodepool \\"default\\", {wording}"}}\n'
    )
    assert _causes(line)[0][0] == first
