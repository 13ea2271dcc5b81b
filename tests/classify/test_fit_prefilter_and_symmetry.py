"""Replay behaviour the differential test against the real kube-scheduler found missing
(tests/integration/test_fit_replay_differential.py): node affinity that names nodes, the 1.34
taint wording, pod-level requests, and the anti-affinity of Pods already bound."""

from __future__ import annotations

from collections import Counter

from bot.classify.fit import FitExplainer
from bot.read.kubernetes_json import pod_from_json
from bot.read.scheduler_message import reason_category
from bot.snapshot.data import load
from bot.snapshot.kubernetes import (
    LabelRequirement,
    Node,
    NodeSelectorTerm,
    Pod,
    PodAffinityTerm,
    Taint,
)
from tests.support.corpus import CORPUS

HOSTNAME = "kubernetes.io/hostname"


def _node(name: str, **kwargs: object) -> Node:
    base: dict[str, object] = {
        "allocatable": {"cpu": 8.0, "memory": 32 * 2**30, "pods": 110.0},
        "labels": {HOSTNAME: name},
    }
    base.update(kwargs)
    return load(Node, {"name": name, **base})


def _naming(*terms: list[str]) -> list[NodeSelectorTerm]:
    """Required node-affinity terms, each naming nodes with ``metadata.name In`` (one per field)."""
    return [
        NodeSelectorTerm(
            match_fields=[LabelRequirement(key="metadata.name", operator="In", values=[n]) for n in names]
        )
        for names in terms
    ]


def test_nodes_left_out_by_name_are_not_filtered_and_say_so() -> None:
    # The scheduler's NodeAffinity PreFilter narrows the search to "a": the cordoned "b" is never
    # filtered, so it is not counted as unschedulable.
    nodes = [_node("a", allocatable={"cpu": 1.0, "pods": 110.0}), _node("b", unschedulable=True), _node("c")]
    replay = FitExplainer(nodes, {}).explain(
        Pod(name="p", requests={"cpu": 4.0}, required_node_terms=_naming(["a"]))
    )
    assert replay.reasons == Counter(
        {"Insufficient cpu": 1, "node(s) didn't satisfy plugin(s) [NodeAffinity]": 2}
    )
    assert replay.blocked_by == {
        "b": "node(s) didn't satisfy plugin(s) [NodeAffinity]",
        "c": "node(s) didn't satisfy plugin(s) [NodeAffinity]",
    }


def test_terms_naming_no_node_in_common_conflict() -> None:
    nodes = [_node("a"), _node("b")]
    replay = FitExplainer(nodes, {}).explain(Pod(name="p", required_node_terms=_naming(["a", "b"])))
    assert replay.prefilter_reason == "pod affinity terms conflict"
    assert replay.summary == "0/2 nodes are available: pod affinity terms conflict."
    assert reason_category("pod affinity terms conflict") == "selector"
    assert reason_category("node(s) didn't satisfy plugin(s) [NodeAffinity]") == "selector"


def test_a_term_without_names_keeps_every_node_in_play() -> None:
    term = NodeSelectorTerm(match_expressions=[LabelRequirement(key="pool", operator="Exists")])
    nodes = [_node("a"), _node("b", labels={HOSTNAME: "b", "pool": "gpu"})]
    pod = Pod(name="p", required_node_terms=[*_naming(["a"]), term])
    assert sorted(FitExplainer(nodes, {}).explain(pod).fitting_nodes) == ["a", "b"]


def test_the_1_34_taint_wording_agrees_with_the_replay_s_named_taints() -> None:
    # kube-scheduler 1.34 stopped naming the taint; its recorded message must still agree.
    message = _recorded_message("untolerated-gpu-taint")
    taint = Taint(key="nvidia.com/gpu", value="present", effect="NoSchedule")
    nodes = [_node("gpu-node-1", taints=[taint]), _node("gpu-node-2", taints=[taint])]
    replay = FitExplainer(nodes, {}).explain(Pod(name="p"))
    assert "had untolerated taint(s)" in message
    assert replay.agrees_with(message) is True
    assert replay.agrees_with(message.replace("0/2", "0/3")) is False


def test_pod_level_requests_replace_the_containers_cpu_and_memory() -> None:
    raw = {
        "metadata": {"name": "p"},
        "spec": {
            "resources": {"requests": {"cpu": "2"}, "limits": {"memory": "1Gi"}},
            "containers": [
                {"name": "main", "resources": {"requests": {"cpu": "100m", "nvidia.com/gpu": "1"}}},
            ],
            "overhead": {"cpu": "250m"},
        },
    }
    pod = pod_from_json(raw)
    assert pod is not None
    assert pod.requests == {"cpu": 2.25, "memory": 2.0**30, "nvidia.com/gpu": 1.0}


def test_a_bound_pod_s_anti_affinity_keeps_the_pods_it_selects_out_of_its_zone() -> None:
    zone = "topology.kubernetes.io/zone"
    nodes = [
        _node("a", labels={HOSTNAME: "a", zone: "z1"}),
        _node("b", labels={HOSTNAME: "b", zone: "z1"}),
        _node("c", labels={HOSTNAME: "c", zone: "z2"}),
    ]
    term = PodAffinityTerm(anti=True, match_labels={"app": "web"}, topology_key=zone)
    holder = Pod(name="lonely", namespace="ns", node_name="a", pod_affinity_terms=[term])
    explainer = FitExplainer(nodes, {"a": {"pods": 1.0}}, {"a": [holder]})
    web = explainer.explain(Pod(name="w", namespace="ns", labels={"app": "web"}))
    assert web.fitting_nodes == ["c"]
    assert web.reasons == Counter({"node(s) didn't satisfy existing pods anti-affinity rules": 2})
    # Another namespace, or other labels, are not selected by the term.
    assert len(explainer.explain(Pod(name="x", namespace="other", labels={"app": "web"})).fitting_nodes) == 3
    assert len(explainer.explain(Pod(name="y", namespace="ns", labels={"app": "db"})).fitting_nodes) == 3


def _recorded_message(stem: str) -> str:
    text = (CORPUS / "recorded-scheduler" / f"{stem}-v1.34.txt").read_text()
    return next(line for line in text.splitlines() if "FailedScheduling" in line).split("   ")[-1].strip()


def test_the_1_34_not_found_tail_after_a_prefilter_refusal_is_no_reason() -> None:
    # 1.34's DynamicResources PostFilter says "not found" when a PreFilter refused the Pod first.
    message = _recorded_message("unbound-immediate-claim")
    nodes = [_node("gpu-node-1"), _node("gpu-node-2")]
    replay = FitExplainer(nodes, {}).explain(Pod(name="p", pvc_names=["model-cache"]), ["model-cache"])
    assert message.endswith(". not found")
    assert replay.agrees_with(message) is True


def test_pods_on_nodes_without_the_topology_key_do_not_stop_the_first_of_a_group() -> None:
    # The scheduler counts matching Pods only on nodes that have the term's key: a web Pod on a
    # node without a zone leaves the counts empty, so a web Pod asking for web in its zone may go
    # to any zoned node (and never to one without a zone).
    zone = "topology.kubernetes.io/zone"
    nodes = [_node("zoned", labels={HOSTNAME: "zoned", zone: "z1"}), _node("bare")]
    term = PodAffinityTerm(match_labels={"app": "web"}, topology_key=zone)
    other = Pod(name="web-0", namespace="ns", node_name="bare", labels={"app": "web"})
    explainer = FitExplainer(nodes, {"bare": {"pods": 1.0}}, {"bare": [other]})
    pod = Pod(name="web-1", namespace="ns", labels={"app": "web"}, pod_affinity_terms=[term])
    replay = explainer.explain(pod)
    assert replay.fitting_nodes == ["zoned"]
    assert replay.reasons == Counter({"node(s) didn't match pod affinity rules": 1})
