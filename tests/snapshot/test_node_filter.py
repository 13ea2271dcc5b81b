"""The static node filters: grouping nodes into classes never changes which nodes a Pod may use."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.snapshot.kubernetes import LabelRequirement, Node, NodeSelectorTerm, Pod, Taint, Toleration
from bot.snapshot.node_filter import (
    REASON_AFFINITY,
    REASON_UNSCHEDULABLE,
    classes,
    eligible_nodes,
    static_reason,
)


@st.composite
def _nodes_and_pod(draw: st.DrawFn) -> tuple[list[Node], Pod]:
    nodes = []
    for index in range(draw(st.integers(min_value=0, max_value=30))):
        name = f"node-{index:02d}"
        nodes.append(
            Node(
                name=name,
                labels={
                    "kubernetes.io/hostname": name,
                    "pool": draw(st.sampled_from(["cpu", "a100", "t4"])),
                    **({"zone": draw(st.sampled_from(["a", "b"]))} if draw(st.booleans()) else {}),
                },
                taints=[Taint(key="nvidia.com/gpu", value="present", effect="NoSchedule")]
                if draw(st.booleans())
                else [],
                unschedulable=draw(st.integers(0, 7)) == 0,
            )
        )
    terms = []
    if draw(st.booleans()):
        key = draw(st.sampled_from(["pool", "zone", "kubernetes.io/hostname"]))
        values = draw(st.lists(st.sampled_from(["cpu", "a100", "t4", "a", "node-03", "node-07"]), max_size=2))
        operator = draw(st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist"]))
        terms.append(
            NodeSelectorTerm(match_expressions=[LabelRequirement(key=key, operator=operator, values=values)])
        )
    pod = Pod(
        name="worker",
        node_selector={"pool": draw(st.sampled_from(["cpu", "a100"]))} if draw(st.booleans()) else {},
        required_node_terms=terms,
        tolerations=[Toleration(key="nvidia.com/gpu", operator="Exists", effect="NoSchedule")]
        if draw(st.booleans())
        else [],
    )
    return nodes, pod


@settings(max_examples=200, deadline=None)
@given(_nodes_and_pod())
def test_grouped_filtering_equals_node_by_node(case: tuple[list[Node], Pod]) -> None:
    nodes, pod = case
    by_class = {n.name for n in eligible_nodes(pod, classes(nodes))}
    one_by_one = {n.name for n in nodes if static_reason(pod, n) is None}
    assert by_class == one_by_one


def test_each_filter_gives_kube_schedulers_reason() -> None:
    cordoned = Node(name="a", unschedulable=True)
    tainted = Node(name="b", taints=[Taint(key="nvidia.com/gpu", value="present", effect="NoSchedule")])
    labelled = Node(name="c", labels={"pool": "cpu"})
    pod = Pod(name="p", node_selector={"pool": "a100"})
    assert static_reason(pod, cordoned) == REASON_UNSCHEDULABLE
    assert static_reason(pod, tainted) == "node(s) had untolerated taint {nvidia.com/gpu: present}"
    assert static_reason(pod, labelled) == REASON_AFFINITY
    assert static_reason(Pod(name="q", node_selector={"pool": "cpu"}), labelled) is None
