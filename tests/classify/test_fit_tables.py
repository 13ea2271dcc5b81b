"""The fit replay gives the same answer on plain lists (small clusters) as on numpy (large ones)."""

from __future__ import annotations

import random
import subprocess
import sys
from collections import Counter
from pathlib import Path

from bot.classify.fit import ARRAY_TABLE_FROM, FitExplainer, FitExplanation, _ArrayTable, _ListTable
from bot.snapshot.kubernetes import Node, Pod, Taint, Toleration

ROOT = Path(__file__).resolve().parents[2]
ALWAYS_ARRAYS = 0
NEVER_ARRAYS = 10**9
# Resources nodes may list; "example.com/fpga" is listed by no node, so asking for it always lacks.
LISTED = ("cpu", "memory", "ephemeral-storage", "nvidia.com/gpu", "hugepages-2Mi")
ASKED = (*LISTED, "example.com/fpga")


def _amount(rng: random.Random) -> float:
    """Amounts that tie often (small whole numbers) and some that do not (tenths, big bytes)."""
    return rng.choice([0.0, 1.0, 2.0, 4.0, 8.0, 0.1, 0.3, 2.5, 7.7, 16e9, 64e9])


def _cluster(rng: random.Random) -> tuple[list[Node], dict[str, dict[str, float]]]:
    nodes = []
    requested: dict[str, dict[str, float]] = {}
    for index in range(rng.randint(1, 60)):
        name = f"node-{index}"
        allocatable = {r: _amount(rng) for r in LISTED if rng.random() < 0.8}
        if rng.random() < 0.7:
            allocatable["pods"] = float(rng.choice([1, 3, 110]))
        taints = [Taint(key="dedicated", value="gpu", effect="NoSchedule")] if rng.random() < 0.2 else []
        nodes.append(
            Node(
                name=name,
                labels={"pool": rng.choice(["a", "b"])},
                taints=taints,
                unschedulable=rng.random() < 0.1,
                allocatable=allocatable,
            )
        )
        used = {r: amount * rng.choice([0.0, 0.5, 1.0, 1.0 - 1e-10]) for r, amount in allocatable.items()}
        # Pods counted on the node: none, up to its limit (110 by default), one short of it, or a
        # hair over one short (room for a Pod only with a tolerance, which the pods check has not).
        limit = allocatable.get("pods", 110.0)
        used["pods"] = rng.choice([0.0, limit, limit - 1, limit - 1 + 1e-10])
        requested[name] = used
    return nodes, requested


def _pod(rng: random.Random) -> Pod:
    return Pod(
        name="pending",
        requests={
            r: _amount(rng) for r in ASKED if rng.random() < (0.05 if r == "example.com/fpga" else 0.6)
        },
        node_selector={"pool": "a"} if rng.random() < 0.2 else {},
        tolerations=[Toleration(key="dedicated", operator="Exists")] if rng.random() < 0.5 else [],
    )


def _shape(explanation: FitExplanation) -> tuple[object, ...]:
    """Everything an explanation says, with the order of its lists and mappings."""
    return (
        explanation,
        list(explanation.reasons.items()),
        list(explanation.shortfalls.items()),
        list(explanation.blocked_by.items()),
        sorted(explanation.lacking_resources),
    )


def test_lists_and_arrays_explain_every_random_cluster_alike() -> None:
    seen: Counter[str] = Counter()
    for seed in range(400):
        rng = random.Random(seed)
        nodes, requested = _cluster(rng)
        on_lists = FitExplainer(nodes, requested, array_from=NEVER_ARRAYS)
        on_arrays = FitExplainer(nodes, requested, array_from=ALWAYS_ARRAYS)
        assert isinstance(on_lists._table, _ListTable)
        assert isinstance(on_arrays._table, _ArrayTable)
        for _ in range(5):
            pod = _pod(rng)
            listed = on_lists.explain(pod)
            arrayed = on_arrays.explain(pod)
            assert _shape(listed) == _shape(arrayed), f"seed {seed}"
            seen.update(listed.reasons.keys())
            seen["fits somewhere"] += bool(listed.fitting_nodes)
            seen["shortfalls cut"] += len(listed.shortfalls) == 3 and len(listed.eligible_nodes) > 3
    # The random clusters reach every branch the two tables implement separately.
    for reason in (
        "Too many pods",
        "Insufficient cpu",
        "Insufficient nvidia.com/gpu",
        "Insufficient example.com/fpga",
        "node(s) were unschedulable",
        "fits somewhere",
        "shortfalls cut",
    ):
        assert seen[reason] > 10, reason


def test_ties_in_the_closest_nodes_break_by_position_on_both_tables() -> None:
    # Twelve identical full nodes: every one lacks the same, so the first three are the closest.
    nodes = [Node(name=f"n{i}", allocatable={"cpu": 2.0, "pods": 110.0}) for i in range(12)]
    requested = {f"n{i}": {"cpu": 1.5} for i in range(12)}
    pod = Pod(name="p", requests={"cpu": 1.0})
    for array_from in (ALWAYS_ARRAYS, NEVER_ARRAYS):
        explanation = FitExplainer(nodes[::-1], requested, array_from=array_from).explain(pod)
        assert list(explanation.shortfalls) == ["n11", "n10", "n9"]
        assert explanation.reasons == Counter({"Insufficient cpu": 12})


def test_the_threshold_picks_the_table() -> None:
    nodes = [Node(name=f"n{i}", allocatable={"cpu": 1.0}) for i in range(ARRAY_TABLE_FROM)]
    assert isinstance(FitExplainer(nodes[:-1], {})._table, _ListTable)
    assert isinstance(FitExplainer(nodes, {})._table, _ArrayTable)


_NO_NUMPY = """
import sys
from bot.classify import classify
from bot.read.snapshot_file import parse_snapshot
from tests.support import scenarios

diagnosis = classify(parse_snapshot(scenarios.third_gpu_worker_no_free_gpu().to_json()))
rules = [f.rule for f in diagnosis.findings]
assert "k8s-insufficient-resources" in rules, rules
print("numpy" in sys.modules)
"""


def test_classifying_a_small_cluster_does_not_import_numpy() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _NO_NUMPY], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
