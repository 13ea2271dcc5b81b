"""Facts stated in words (bot/read/prose.py) and the findings built on them.

Sentences are real where the corpus or a public thread has one (the case name or comment says
which); the rest are phrasings written to the grammar the reader learns (place words near version
numbers, counts near GPU words), never a copy of one file's text.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.catalogue import default_catalogue
from bot.classify import classify
from bot.collect.paste import parse_paste
from bot.diagnosis import Diagnosis
from bot.read.found import Found
from bot.read.prose import (
    MAX_PROSE_CHARS,
    MAX_PROSE_PER_PASTE,
    read_join_gap,
    read_line,
    read_node_gpus,
    read_versions,
)
from bot.read.snapshot_file import parse_snapshot
from bot.render.localize import localize_all

ROOT = Path(__file__).resolve().parents[2]
STATED_RULES = {
    "ray-version-mismatch-stated",
    "ray-workers-said-not-joined",
    "ray-demand-exceeds-stated-node",
}


def _versions(line: str) -> set[tuple[str, str, str]]:
    return {(fact.component, fact.side, fact.version) for fact in read_versions(line)}


def _diagnose(text: str) -> Diagnosis:
    return classify(parse_paste(text))


def _rules(diagnosis: Diagnosis) -> list[str]:
    return [finding.rule for finding in diagnosis.findings]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("Ray 2.9 on the cluster, 2.10 locally", {("ray", "cluster", "2.9"), ("ray", "client", "2.10")}),
        (
            "Ray 1.11 on the cluster and 1.12 on the client",
            {("ray", "cluster", "1.11"), ("ray", "client", "1.12")},
        ),
        (
            "head runs ray 2.5.0 but my laptop has 2.6.3",
            {("ray", "head", "2.5.0"), ("ray", "client", "2.6.3")},
        ),
        # ray-project/ray#24823, in the reporter's words.
        (
            "This is a problem when running Ray 1.11 on cluster and Ray 1.12 on client.",
            {("ray", "cluster", "1.11"), ("ray", "client", "1.12")},
        ),
        ("1.12 on client, 1.11 on cluster", {("ray", "client", "1.12"), ("ray", "cluster", "1.11")}),
        # AMD-AGI/Hyperloom#432's title: Python versions, the submitter being the client.
        (
            "GEAK Ray py-version mismatch (cluster 3.10 vs submitter 3.12) → instant REVERTs",
            {("python", "cluster", "3.10"), ("python", "client", "3.12")},
        ),
        (
            "Python 3.8 on the cluster, 3.10 locally",
            {("python", "cluster", "3.8"), ("python", "client", "3.10")},
        ),
        (
            "the head uses rayproject/ray:2.9.0-py310 and my laptop has ray 2.10.0",
            {("ray", "head", "2.9.0"), ("python", "head", "3.10"), ("ray", "client", "2.10.0")},
        ),
        ("head runs 2.9 but the workers run 2.10", {("ray", "head", "2.9"), ("ray", "worker", "2.10")}),
        ("集群上是 2.9，本地是 2.10", {("ray", "cluster", "2.9"), ("ray", "client", "2.10")}),
        ("head 节点是 2.9，worker 是 2.10", {("ray", "head", "2.9"), ("ray", "worker", "2.10")}),
        (
            "Is this a bug or a config issue? Ray 2.9 on cluster, 2.10 locally, any idea?",
            {("ray", "cluster", "2.9"), ("ray", "client", "2.10")},
        ),
        (
            "Client: ray 2.10.0, python 3.11. Cluster: ray 2.9.0, python 3.10.",
            {
                ("ray", "client", "2.10.0"),
                ("python", "client", "3.11"),
                ("ray", "cluster", "2.9.0"),
                ("python", "cluster", "3.10"),
            },
        ),
        (
            "ray 2.9.0 (cluster image) vs 2.10.0 (local venv)",
            {("ray", "cluster", "2.9.0"), ("ray", "client", "2.10.0")},
        ),
    ],
)
def test_versions_are_placed_on_their_side(line: str, expected: set[tuple[str, str, str]]) -> None:
    assert _versions(line) == expected


@pytest.mark.parametrize(
    "line",
    [
        "upgraded from 2.9 to 2.10",
        "Ray version == 1.3.0",  # ray-project/ray#15594: a version with no place
        "- Python version == 3.8.8",
        "After upgrading K8s cluster to 1.12.4 all GPU worker nodes shows nvidia.com/gpu:     0",  # corpus
        "CUDA 12.1 on the cluster, 11.8 locally",
        "it works with either 2.9 or 2.10 on the cluster",
        "the NVIDIA driver 535.104 on the nodes, 550.54 on my laptop",
    ],
)
def test_no_version_without_a_place_or_of_another_tool(line: str) -> None:
    assert read_versions(line) == []


@pytest.mark.parametrize(
    "line",
    [
        "image: rayproject/ray:1.4.0-py38",  # a manifest line is no sentence
        "[2021-11-08 18:40:11,612 I 7813 40222436] head runs 2.9, client 2.10",  # a log line
        "ray_version = 2.9  # cluster",
    ],
)
def test_output_lines_are_not_read_as_prose(line: str) -> None:
    found = Found()
    assert read_line(line, found) is False
    assert not found.stated_versions


def test_an_upgrade_keeps_only_the_version_in_use() -> None:
    assert _versions("I upgraded the cluster from 2.9 to 2.10") == {("ray", "cluster", "2.10")}


@pytest.mark.parametrize(
    ("line", "gpus", "model", "nodes"),
    [
        ("each node has one A10G", 1, "A10G", None),
        ("2 nodes with 8 x A100 each", 8, "A100", 2),
        ("a single 4090", 1, "4090", None),
        ("I have 1 GPU in my machine, a RTX 2060.", 1, None, None),  # ray-project/ray#15594
        (
            "I was running grpo with 8 gpus in a node, and set `trainer.n_gpus_per_node=8`.",
            8,
            None,
            None,
        ),  # verl#539
        ("there are four nodes with two GPUs each", 2, None, 4),  # vllm-project/vllm#3293
        ("每个节点 1 张 A10G", 1, "A10G", None),
        ("单卡 4090", 1, "4090", None),
        ("the GPU nodes are p4d.24xlarge with 8 A100s each", 8, "A100", None),
    ],
)
def test_gpus_per_node(line: str, gpus: float, model: str | None, nodes: int | None) -> None:
    facts = read_node_gpus(line)
    assert [(f.gpus, f.model, f.nodes) for f in facts] == [(gpus, model, nodes)]


@pytest.mark.parametrize(
    "line",
    [
        "the cluster has 16 GPUs in total",
        "each trial needs 2 GPUs",
        "I want to run on a single A100",
        "we have 2 GPU nodes",
        "Clusters where *all* nodes have a GPU fail to autoscale on CPU-only workloads.",  # ray#20476
        "Although Ray uses the resources defined per worker in the `ScalingConfig` (here it is 6 CPUs and 1 GPU per worker)",
        "ray status shows 1 GPU per node",
    ],
)
def test_no_gpus_per_node_from_requests_or_sums(line: str) -> None:
    assert read_node_gpus(line) == []


@pytest.mark.parametrize(
    ("line", "ray_nodes"),
    [
        ("pods are Running but `ray status` shows one node", 1),
        (
            "From lake-user namespace, can see 1 head and 3 worker nodes. Still worker nodes are not joining.",
            None,
        ),
        ("worker pod 都是 Running，但是 ray status 只显示 1 个节点", 1),
        ("All worker pods are running, yet the dashboard only shows the head", 1),
    ],
)
def test_join_gap(line: str, ray_nodes: int | None) -> None:
    gap = read_join_gap(line.replace("`", ""))
    assert gap is not None
    assert gap.ray_nodes == ray_nodes


@pytest.mark.parametrize(
    "line",
    [
        "ray status shows one node",
        "all pods are running",
        "the worker pod is pending and ray status shows one node",
        "I checked the number alive pods, both worker pods are gone, only head pod is alive.",  # ray#15459
    ],
)
def test_no_join_gap_from_one_half(line: str) -> None:
    assert read_join_gap(line) is None


# --- findings -----------------------------------------------------------------------------------


def test_stated_mismatch_is_a_warning_quoting_the_words_and_naming_the_command() -> None:
    diagnosis = _diagnose("ray.init() hangs.\nWe run Ray 2.9 on the cluster, 2.10 locally.\n")
    [finding] = [f for f in diagnosis.findings if f.rule == "ray-version-mismatch-stated"]
    assert finding.cause == 8
    assert finding.severity == "warning"
    assert finding.params["version_a"] == "2.9"
    assert finding.params["version_b"] == "2.10"
    assert [e.source for e in finding.evidence] == ["user's words"]
    assert finding.evidence[0].text == "We run Ray 2.9 on the cluster, 2.10 locally."
    rule = default_catalogue()["ray-version-mismatch-stated"]
    assert "ray --version" in rule.commands[0]


def test_stated_mismatch_reads_in_chinese() -> None:
    diagnosis = _diagnose("集群上是 2.9，本地是 2.10\n")
    [zh] = [
        f
        for f in localize_all(diagnosis, default_catalogue(), "zh")
        if f.rule == "ray-version-mismatch-stated"
    ]
    assert "集群是 2.9" in zh.title and "客户端是 2.10" in zh.title
    assert zh.evidence[0].source == "用户的描述"


@pytest.mark.parametrize(
    "text",
    [
        "We upgraded from 2.9 to 2.10 last week and now ray.init() hangs.\n",
        "Ray 2.9 on the cluster, 2.9.3 locally.\n",  # a patch given on one side only
        "Python 3.10.4 on the cluster, 3.10.12 locally.\n",  # Ray checks only the minor version
        "The cluster runs Ray 2.9.\n",
        "Ray 2.9 and Ray 2.10 both fail on the cluster.\n",
    ],
)
def test_no_mismatch_without_two_sides_that_differ(text: str) -> None:
    assert "ray-version-mismatch-stated" not in _rules(_diagnose(text))


def test_stated_client_version_is_compared_with_the_raycluster_shown() -> None:
    # A real `kubectl get raycluster -o json` List (rayVersion and images 2.52.0) and the user's words.
    manifest = (ROOT / "tests/fixtures/kuberay/v1.7.0/raycluster.json").read_text(encoding="utf-8")
    diagnosis = _diagnose(manifest + "\n\nOn my laptop I run Ray 2.10.0 and ray.init() hangs.\n")
    [finding] = [f for f in diagnosis.findings if f.rule == "ray-version-mismatch-stated"]
    assert finding.params["version_a"] == "2.52.0"
    assert finding.params["side_b"] == "client"
    sources = [e.source for e in finding.evidence]
    assert sources[0] == "user's words"
    assert any(source.startswith("raycluster ") for source in sources)
    same = _diagnose(manifest + "\n\nOn my laptop I run Ray 2.52.0 and ray.init() hangs.\n")
    assert "ray-version-mismatch-stated" not in _rules(same)


def test_the_version_check_itself_outranks_the_words() -> None:
    text = (
        "RuntimeError: Version mismatch: The cluster was started with:\n"
        "    Ray: 2.12.0\n    Python: 3.11.11\n"
        "This process on node 10.123.3.87 was started with:\n    Ray: 2.42.0\n    Python: 3.9.21\n\n"
        "Ray 2.12 on the cluster, 2.42 locally.\n"
    )
    rules = _rules(_diagnose(text))
    assert "ray-version-mismatch" in rules
    assert "ray-version-mismatch-stated" not in rules


def test_demand_larger_than_every_stated_node_is_cause_6_on_their_word() -> None:
    text = (
        ROOT / "tests/cases/ray-demand-exceeds-stated-node/fires/list-tasks-gpu2-each-node-one-gpu.txt"
    ).read_text(encoding="utf-8")
    diagnosis = _diagnose(text)
    [finding] = [f for f in diagnosis.findings if f.rule == "ray-demand-exceeds-stated-node"]
    assert (finding.cause, finding.severity) == (6, "warning")
    assert finding.params["needed"] == "2"
    assert finding.params["total"] == "1"
    assert finding.evidence[-1].source == "user's words"
    assert "ray-demand-unjudged" not in _rules(diagnosis)


def test_a_demand_that_fits_the_stated_node_stays_unjudged() -> None:
    text = (
        ROOT / "tests/cases/ray-demand-exceeds-stated-node/fires/list-tasks-gpu2-each-node-one-gpu.txt"
    ).read_text(encoding="utf-8")
    rules = _rules(_diagnose(text.replace("Each node has one GPU.", "Each node has 4 GPUs.")))
    assert "ray-demand-exceeds-stated-node" not in rules
    assert "ray-demand-unjudged" in rules


def test_tool_output_of_the_two_layers_outranks_the_stated_join_gap() -> None:
    text = (
        ROOT / "tests/cases/ray-workers-missing-from-ray/fires/two-layer-get-pods-ray-status.txt"
    ).read_text(encoding="utf-8")
    rules = _rules(
        _diagnose("The worker pods are Running but `ray status` shows fewer nodes than pods.\n" + text)
    )
    assert "ray-workers-missing-from-ray" in rules
    assert "ray-workers-said-not-joined" not in rules


def test_stated_join_gap_alone_is_a_warning() -> None:
    diagnosis = _diagnose("The worker pods are Running but `ray status` shows one node.\n")
    [finding] = [f for f in diagnosis.findings if f.rule == "ray-workers-said-not-joined"]
    assert (finding.cause, finding.severity) == (8, "warning")
    assert finding.evidence[0].text == "The worker pods are Running but `ray status` shows one node."


def test_stated_findings_are_never_critical_on_corpus_cases() -> None:
    for path in sorted((ROOT / "tests/corpus").glob("*/*.txt")):
        for finding in _diagnose(path.read_text(encoding="utf-8")).findings:
            if finding.rule in STATED_RULES:
                assert finding.severity != "critical", path.name


def test_stated_facts_survive_a_snapshot_file() -> None:
    snapshot = parse_paste("Ray 2.9 on the cluster, 2.10 locally\neach node has one A10G\n")
    again = parse_snapshot(json.loads(snapshot.to_json()))
    assert again.stated == snapshot.stated
    assert "ray-version-mismatch-stated" in _rules(classify(again))


def test_prose_read_for_facts_stops_at_its_budget() -> None:
    found = Found()
    line = "Ray 2.9 on the cluster, 2.10 locally, and the pods are Running but ray status shows one node"
    for _ in range(20_000):
        read_line(line, found)
    assert found.prose_chars <= MAX_PROSE_PER_PASTE + len(line)
    assert len(found.stated_versions) == 2  # the same sentence states the same facts once


def test_huge_or_odd_prose_is_bounded() -> None:
    long_line = "Ray 2.9 on the cluster, 2.10 locally " * (MAX_PROSE_CHARS // 10)
    assert "ray-version-mismatch-stated" not in _rules(_diagnose(long_line))
    odd = "\n".join(
        ["each node has " + "1" * 5000 + " GPUs", "Ray ... on the ... cluster", "集群上是，本地是"]
    )
    assert _diagnose(odd) is not None
