"""The fit replay must count exactly what kube-scheduler counted."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.classify.context import Context
from bot.classify.fit import FitExplainer, Shortfall
from bot.read.scheduler_message import (
    format_summary,
    normalise_reason,
    parse_scheduler_message,
    reason_category,
)
from bot.read.snapshot_file import parse_snapshot
from bot.snapshot.data import load
from bot.snapshot.kubernetes import Node, Pod, Taint, Toleration
from tests.support.scenarios import CASES

SCHEDULED = [
    case
    for case in CASES
    if any(
        e["reason"] == "FailedScheduling" and e["source"]["component"] == "default-scheduler"
        for e in case.build().items("events")
    )
]


@pytest.mark.parametrize("case", SCHEDULED, ids=[c.name for c in SCHEDULED])
def test_replay_agrees_with_every_failed_scheduling_event(case) -> None:  # type: ignore[no-untyped-def]
    snapshot = parse_snapshot(case.build().to_json())
    context = Context(snapshot)
    explainer = FitExplainer(context.kube.nodes, context.requested_by_node, context.pods_by_node)
    checked = 0
    for event in context.kube.events:
        if event.reason != "FailedScheduling" or event.source != "default-scheduler":
            continue
        pod = next(p for p in context.kube.pods if p.name == event.object_name)
        unbound = [
            c for c in pod.pvc_names if any(v.name == c and v.phase != "Bound" for v in context.kube.pvcs)
        ]
        replay = explainer.explain(pod, unbound)
        parsed = parse_scheduler_message(event.message)
        assert parsed is not None
        total, reasons, prefilter = parsed
        assert total == replay.total_nodes
        if prefilter:
            assert replay.prefilter_reason == prefilter
        else:
            theirs = Counter({normalise_reason(r): n for r, n in reasons.items()})
            ours = Counter({normalise_reason(r): n for r, n in replay.reasons.items()})
            assert ours == theirs
            # Our text is the scheduler's own up to the preemption part.
            assert event.message.startswith(replay.summary.rstrip("."))
        checked += 1
    assert checked >= 1


def test_enough_scheduler_messages_are_covered() -> None:
    assert len(SCHEDULED) >= 10


def test_reasons_are_sorted_as_strings_like_the_scheduler() -> None:
    text = format_summary(12, {"Insufficient cpu": 2, "node(s) were unschedulable": 10})
    # "10 ..." sorts before "2 ..." because the scheduler sorts the formatted strings.
    assert text == "0/12 nodes are available: 10 node(s) were unschedulable, 2 Insufficient cpu."


def test_parses_old_and_new_taint_wordings_to_one_key() -> None:
    old = parse_scheduler_message(
        "0/3 nodes are available: 3 node(s) had taint {nvidia.com/gpu: present}, that the pod didn't tolerate."
    )
    new = parse_scheduler_message(
        "0/3 nodes are available: 3 node(s) had untolerated taint {nvidia.com/gpu: present}."
    )
    assert old is not None and new is not None
    assert {normalise_reason(r) for r in old[1]} == {normalise_reason(r) for r in new[1]}


def test_taint_with_comma_in_value_is_one_reason() -> None:
    parsed = parse_scheduler_message("0/2 nodes are available: 2 node(s) had untolerated taint {team: a,b}.")
    assert parsed is not None
    assert parsed[1] == Counter({"node(s) had untolerated taint {team: a,b}": 2})


def test_lower_case_insufficient_from_old_schedulers() -> None:
    parsed = parse_scheduler_message(
        "## It always output 0/3 nodes are available: 3 insufficient nvidia.com/gpu!"
    )
    assert parsed is not None
    total, reasons, prefilter = parsed
    assert (total, prefilter) == (3, None)
    assert reasons == Counter({"insufficient nvidia.com/gpu": 3})
    assert reason_category("insufficient nvidia.com/gpu") == "resources"


def test_unscheduled_messages_are_not_parsed() -> None:
    assert parse_scheduler_message("Successfully assigned ml/x to node-1") is None


def _node(name: str, **kwargs: object) -> Node:
    base: dict[str, object] = {"allocatable": {"cpu": 8.0, "memory": 32 * 2**30, "pods": 110.0}}
    base.update(kwargs)
    return load(Node, {"name": name, **base})


def test_first_failing_filter_wins_per_node() -> None:
    # A cordoned node that is also too small counts only as unschedulable, as in kube-scheduler.
    nodes = [_node("a", unschedulable=True, allocatable={"cpu": 1.0, "pods": 110.0}), _node("b")]
    pod = Pod(name="p", requests={"cpu": 4.0})
    replay = FitExplainer(nodes, {}).explain(pod)
    assert replay.reasons == Counter({"node(s) were unschedulable": 1})
    assert replay.fitting_nodes == ["b"]


def test_requests_of_bound_pods_reduce_free_capacity() -> None:
    nodes = [_node("a")]
    replay = FitExplainer(nodes, {"a": {"cpu": 6.0, "pods": 3.0}}).explain(
        Pod(name="p", requests={"cpu": 4.0})
    )
    assert replay.reasons == Counter({"Insufficient cpu": 1})
    assert replay.shortfalls["a"][0].free == pytest.approx(2.0)


def test_no_execute_and_prefer_no_schedule_taints() -> None:
    nodes = [
        _node("soft", taints=[Taint(key="spot", value="true", effect="PreferNoSchedule")]),
        _node("hard", taints=[Taint(key="spot", value="true", effect="NoExecute")]),
    ]
    replay = FitExplainer(nodes, {}).explain(Pod(name="p"))
    assert replay.fitting_nodes == ["soft"]
    tolerant = Pod(name="q", tolerations=[Toleration(key="spot", operator="Exists")])
    assert sorted(FitExplainer(nodes, {}).explain(tolerant).fitting_nodes) == ["hard", "soft"]


def test_too_many_pods() -> None:
    nodes = [_node("a", allocatable={"cpu": 8.0, "pods": 2.0})]
    replay = FitExplainer(nodes, {"a": {"pods": 2.0}}).explain(Pod(name="p"))
    assert replay.reasons == Counter({"Too many pods": 1})


# --- the array replay against the node-by-node definition ------------------------------------

_POOL_SHAPES = [
    {"cpu": 8.0, "memory": 32.0, "pods": 110.0},
    {"cpu": 16.0, "memory": 64.0, "pods": 110.0, "nvidia.com/gpu": 4.0},
    {"cpu": 4.0, "memory": 16.0, "pods": 3.0},
    {"cpu": 96.0, "memory": 768.0, "pods": 110.0, "nvidia.com/gpu": 8.0, "example.com/fpga": 1.0},
]


@st.composite
def _cluster(draw: st.DrawFn) -> tuple[list[Node], dict[str, dict[str, float]], Pod]:
    count = draw(st.integers(min_value=1, max_value=25))
    nodes, requested = [], {}
    for index in range(count):
        name = f"n{index:02d}"
        shape = draw(st.sampled_from(_POOL_SHAPES))
        tainted = draw(st.booleans())
        nodes.append(
            _node(
                name,
                allocatable=dict(shape),
                labels={"pool": str(_POOL_SHAPES.index(shape)), "kubernetes.io/hostname": name},
                taints=[Taint(key="dedicated", value="gpu", effect="NoSchedule")] if tainted else [],
                unschedulable=draw(st.integers(0, 9)) == 0,
            )
        )
        used = {r: draw(st.sampled_from([0.0, a / 2, a, a - 1])) for r, a in shape.items()}
        requested[name] = used
    wanted = draw(
        st.dictionaries(
            st.sampled_from(["cpu", "memory", "nvidia.com/gpu", "example.com/fpga", "vendor.io/none"]),
            st.sampled_from([0.5, 1.0, 2.0, 6.0, 40.0]),
            max_size=4,
        )
    )
    pod = Pod(
        name="p",
        requests=wanted,
        tolerations=[Toleration(key="dedicated", operator="Exists")] if draw(st.booleans()) else [],
        node_selector={"pool": draw(st.sampled_from(["0", "1", "3"]))} if draw(st.booleans()) else {},
    )
    return nodes, requested, pod


@settings(max_examples=150, deadline=None)
@given(_cluster())
def test_array_replay_counts_and_closest_nodes_match_node_by_node(
    case: tuple[list[Node], dict[str, dict[str, float]], Pod],
) -> None:
    nodes, requested, pod = case
    explainer = FitExplainer(nodes, requested)
    replay = explainer.explain(pod)

    # The definition, one node at a time: first failing filter wins, then every lacking resource.
    reasons: Counter[str] = Counter()
    short: dict[str, list[Shortfall]] = {}
    fitting, lacking = [], set()
    for node in nodes:
        static = explainer.static_reason(pod, node)
        if static is not None:
            reasons[static] += 1
            continue
        shortfalls = explainer.resource_shortfalls(pod, node)
        for s in shortfalls:
            reasons["Too many pods" if s.resource == "pods" else f"Insufficient {s.resource}"] += 1
            lacking.add(s.resource)
        if shortfalls:
            short[node.name] = shortfalls
        else:
            fitting.append(node.name)
    assert replay.reasons == reasons
    assert sorted(replay.fitting_nodes) == sorted(fitting)
    assert replay.lacking_resources == lacking
    # Only the closest nodes are spelt out, and each one exactly as resource_shortfalls says.
    assert len(replay.shortfalls) == min(3, len(short))
    for name, found in replay.shortfalls.items():
        assert found == short[name]

    def badness(name: str) -> tuple[int, float]:
        found = explainer.resource_shortfalls(pod, next(n for n in nodes if n.name == name))
        return len(found), sum((s.needed - s.free) / s.needed if s.needed else 1.0 for s in found)

    best = sorted(badness(n) for n in short)[:3]
    assert sorted(badness(n) for n in replay.shortfalls) == best
