"""The fit replay's resource table: ties among the nodes that came closest break by position."""

from __future__ import annotations

from collections import Counter

from bot.classify.fit import FitExplainer
from bot.snapshot.kubernetes import Node, Pod


def test_ties_in_the_closest_nodes_break_by_position() -> None:
    # Twelve identical full nodes: every one lacks the same, so the first three are the closest.
    nodes = [Node(name=f"n{i}", allocatable={"cpu": 2.0, "pods": 110.0}) for i in range(12)]
    requested = {f"n{i}": {"cpu": 1.5} for i in range(12)}
    pod = Pod(name="p", requests={"cpu": 1.0})
    explanation = FitExplainer(nodes[::-1], requested).explain(pod)
    assert list(explanation.shortfalls) == ["n11", "n10", "n9"]
    assert explanation.reasons == Counter({"Insufficient cpu": 12})
