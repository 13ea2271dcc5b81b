"""Health posts: the facts of both layers from a snapshot, and the few lines a channel reads."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from slack_sdk.models.blocks import Block

from bot.classify import classify
from bot.deliver.blocks.health import render_health_post
from bot.diagnosis import Capacity, Diagnosis, Finding, GpuModelCapacity, Subject
from bot.read.snapshot_file import parse_snapshot
from bot.render.health import HealthFacts, PendingPod, format_duration, health_facts
from bot.render.slack import MAX_BLOCKS
from bot.snapshot.model import Snapshot
from tests.support import k8s, scenarios
from tests.support.cluster import NS, Bundle, healthy

# The fixtures' events were last seen at k8s.T2 (09:40:03); Pods were created at k8s.T1 (09:12:41).
NOW = datetime(2026, 11, 30, 9, 52, 41, tzinfo=UTC)


def facts_of(bundle: Bundle, now: datetime = NOW) -> HealthFacts:
    snapshot = parse_snapshot(bundle.to_json())
    return health_facts(classify(snapshot), now)


def validate(message: dict[str, Any]) -> None:
    assert message["text"]
    assert 0 < len(message["blocks"]) <= MAX_BLOCKS
    for raw in message["blocks"]:
        block = Block.parse(raw)
        assert block is not None
        block.validate_json()


def body(message: dict[str, Any]) -> str:
    parts = []
    for block in message["blocks"]:
        if "text" in block:
            parts.append(block["text"]["text"])
        parts += [e["text"] for e in block.get("elements", [])]
    return "\n".join(parts)


def test_healthy_cluster_facts() -> None:
    facts = facts_of(healthy())
    assert facts.cluster == "raycluster-gpu"
    assert facts.pending_pods == ()
    assert facts.gpu_nodes == 2
    assert [(c.model, c.allocatable, c.given_to_ray_pods) for c in facts.capacity.models] == [("A100", 8, 8)]
    assert (facts.ray_nodes_alive, facts.ready_worker_pods) == (5, 4)  # head + 4 workers, 4 worker Pods
    assert (facts.gpus_registered, facts.gpus_given) == (8, 8)
    assert facts.pending_demands == 0
    assert facts.gpu_actors == (("trainer-0", 1.0, None),)
    assert facts.scaling_up is False
    assert facts.top_finding is None


def test_worker_that_never_joined() -> None:
    facts = facts_of(scenarios.gpu_worker_runs_but_never_joined())
    assert (facts.ray_nodes_alive, facts.ready_worker_pods) == (4, 4)
    assert (facts.gpus_registered, facts.gpus_given) == (4, 8)
    assert facts.top_finding is not None and facts.top_finding.cause == 8


def test_pending_pod_and_how_long_it_has_waited() -> None:
    facts = facts_of(scenarios.third_gpu_worker_no_free_gpu())
    assert facts.pending_pods == (PendingPod(scenarios.PENDING, NS, 40 * 60.0),)
    assert facts.top_finding is not None and facts.top_finding.cause == 1
    assert facts.capacity.models[0].pending_demand == 4
    text = body(render_health_post(facts, "en"))
    assert f"1 Pod(s) Pending, the oldest `{NS}/{scenarios.PENDING}` for 40 min" in text
    assert "已等待 40 分钟" in body(render_health_post(facts, "zh"))


def test_actors_holding_gpus_and_since_when() -> None:
    facts = facts_of(scenarios.four_gpu_task_waits_on_detached_actor())
    # The embedder started 2026-11-29T17:02:11Z: 16 h 50 min before NOW.
    assert facts.gpu_actors == (("embedder", 4.0, 60630.0), ("trainer-0", 1.0, None))
    assert facts.pending_demands == 2
    text = body(render_health_post(facts, "en"))
    assert "GPUs held by `embedder` (4 for 16 h 50 min), `trainer-0` (1)" in text
    assert "2 demand(s) waiting" in text


def test_cluster_autoscaler_scale_up_counts_only_while_recent() -> None:
    assert facts_of(scenarios.autoscaler_scaled_up()).scaling_up is True
    later = NOW + timedelta(hours=2)
    assert facts_of(scenarios.autoscaler_scaled_up(), later).scaling_up is False
    assert facts_of(scenarios.third_gpu_worker_no_free_gpu()).scaling_up is False


def test_karpenter_nominating_a_node_claim_is_scaling_up() -> None:
    assert facts_of(scenarios.karpenter_launched_a_node()).scaling_up is True
    assert facts_of(scenarios.karpenter_capacity_message_only()).scaling_up is False


def test_ray_autoscaler_launching_nodes_is_scaling_up() -> None:
    bundle = scenarios.third_gpu_worker_no_free_gpu()
    assert bundle.ray_state is not None
    bundle.ray_state["pending_nodes"] = ["gpu-a100, 1 launching"]
    assert facts_of(bundle).scaling_up is True

    bundle = scenarios.third_gpu_worker_no_free_gpu()
    bundle.items("logs").append(
        {
            "pod": "raycluster-gpu-head-8x2kq",
            "namespace": NS,
            "container": "autoscaler",
            "lines": [
                "2026-11-30 09:41:12,511\tINFO autoscaler.py:1380 -- Adding 1 node(s) of type gpu-a100.",
            ],
        }
    )
    assert facts_of(bundle).scaling_up is True


def test_only_warnings_and_criticals_are_the_top_finding() -> None:
    info = Finding(
        rule="kueue-admission-pending",
        code="RD0001",
        cause=None,
        layer="kubernetes",
        severity="info",
        subject=Subject(kind="Workload", name="w"),
    )
    facts = health_facts(Diagnosis(cluster="c", findings=[info]), NOW)
    assert facts.top_finding is None


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize(
    "build",
    [
        scenarios.healthy,
        scenarios.gpu_worker_runs_but_never_joined,
        scenarios.autoscaler_scaled_up,
        scenarios.four_gpu_task_waits_on_detached_actor,
        scenarios.task_asks_for_h100_on_a100_cluster,
        scenarios.dashboard_connection_refused,
    ],
    ids=lambda build: build.__name__,
)
def test_posts_are_valid_block_kit_in_both_languages(build: Any, lang: str) -> None:
    message = render_health_post(facts_of(build()), lang, headline="still pending after 40 min")  # type: ignore[arg-type]
    validate(message)
    assert "still pending after 40 min" in message["text"]


def test_post_reads_both_layers_and_the_top_finding() -> None:
    facts = facts_of(scenarios.gpu_worker_runs_but_never_joined())
    message = render_health_post(facts, "en", headline="still pending after 40 min")
    text = body(message)
    assert text.splitlines()[0] == ":red_circle: *raycluster-gpu* · health — still pending after 40 min"
    assert "*Kubernetes layer*" in text and "*Ray layer*" in text
    assert "A100: 8 allocatable, 8 given to Ray Pods, 0 waiting" in text
    assert "4 Ray node(s) alive (head included) for 4 ready worker Pod(s)" in text
    assert "4 GPU(s) registered in Ray of 8 given to Ray Pods" in text
    assert "4 of the 8 GPUs given to Ray Pods are not registered in Ray" in text
    top = facts.top_finding
    assert top is not None
    assert "*Top finding:*" in text and f"`{top.code}`, cause 8)" in text
    zh = body(render_health_post(facts, "zh"))
    assert (
        "*Kubernetes 层*" in zh and "原因 8" in zh and "Ray Pod 获得 8 张 GPU，其中 4 张已在 Ray 中登记" in zh
    )


def test_healthy_post_is_short_and_green() -> None:
    message = render_health_post(facts_of(healthy()), "en")
    assert len(message["blocks"]) == 4
    assert message["blocks"][0]["text"]["text"] == ":white_check_mark: *raycluster-gpu* · health"
    assert "No warning or critical finding" in message["blocks"][3]["text"]["text"]


def test_scaling_up_is_said_so_young_pending_pods_are_not_alarming() -> None:
    message = render_health_post(facts_of(scenarios.autoscaler_scaled_up()), "zh")
    assert message["blocks"][-1]["type"] == "context"
    assert "集群正在扩容" in body(message)


def test_names_from_the_cluster_cannot_inject_markup() -> None:
    facts = HealthFacts(
        cluster="gpu-prod",
        pending_pods=(PendingPod("<!channel>", "ml", 90.0),),
        gpu_nodes=1,
        capacity=Capacity(
            layers_read=["kubernetes", "ray"], models=[GpuModelCapacity("<@U123>", 1, 1, 1, 1, 0)]
        ),
        ray_nodes_alive=2,
        ready_worker_pods=1,
        gpus_registered=1,
        gpus_given=1,
        pending_demands=0,
        gpu_actors=tuple((f"<https://evil|actor-{i}>", 1.0, 7200.0) for i in range(5)),
        scaling_up=False,
        top_finding=None,
    )
    message = render_health_post(facts, "en", headline="<!here> changed")
    validate(message)
    text = body(message)
    assert "<!" not in text and "<@" not in text and "<http" not in text
    assert "2 more" in text  # five GPU actors, three shown


def test_times_without_a_zone_are_read_as_utc() -> None:
    bundle = scenarios.third_gpu_worker_no_free_gpu()
    bundle.find("pods", scenarios.PENDING)["metadata"]["creationTimestamp"] = "2026-11-30T09:12:41"
    assert facts_of(bundle).pending_pods[0].age_s == 40 * 60.0


def test_post_with_nothing_read_still_renders() -> None:
    facts = health_facts(classify(Snapshot()), NOW)
    assert facts.cluster == "?" and facts.capacity.models == []
    # Neither layer was read: every figure is unknown, none is 0.
    assert (facts.gpu_nodes, facts.ray_nodes_alive, facts.ready_worker_pods) == (None, None, None)
    assert (facts.gpus_registered, facts.gpus_given, facts.pending_demands, facts.gpu_actors) == (None,) * 4
    validate(render_health_post(facts, "zh"))
    text = body(render_health_post(facts, "en"))
    assert "Pending Pods, GPU nodes and GPUs per model: not read" in text
    assert "Ray nodes alive: not read" in text and "GPUs registered in Ray: not read" in text
    assert "no Pod is Pending" not in text and "0 GPU node(s)" not in text


@pytest.mark.parametrize(
    ("seconds", "en", "zh"),
    [
        (42.9, "42 s", "42 秒"),
        (40 * 60, "40 min", "40 分钟"),
        (2 * 3600 + 5 * 60, "2 h 5 min", "2 小时 5 分钟"),
        (3 * 86400 + 7200, "3 d 2 h", "3 天 2 小时"),
    ],
)
def test_durations(seconds: float, en: str, zh: str) -> None:
    assert format_duration(seconds, "en") == en
    assert format_duration(seconds, "zh") == zh


def test_pending_pods_of_other_namespaces_are_not_this_clusters() -> None:
    bundle = healthy()
    bundle.items("pods").append(
        k8s.pod(
            "notebook-7f9c",
            "research",
            [k8s.container("jupyter", "jupyter/base-notebook:2024-05-20", requests={"cpu": "64"})],
            status=k8s.pending_status("0/5 nodes are available: 5 Insufficient cpu."),
        )
    )
    assert facts_of(bundle).pending_pods == ()
