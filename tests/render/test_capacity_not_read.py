"""A layer that was not read is shown as "not read", never as 0, and no cause is drawn from it."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import matplotlib
import pytest
from matplotlib.figure import Figure

from bot.classify import classify
from bot.deliver.blocks.health import render_health_post
from bot.diagnosis import Diagnosis
from bot.read.snapshot_file import parse_snapshot
from bot.render.capacity import capacity_comment, capacity_table, gap_summary
from bot.render.capacity_chart import capacity_figure, chart_style
from bot.render.health import health_facts
from tests.support import scenarios
from tests.support.cluster import CLUSTER, Bundle

NOW = datetime(2026, 11, 30, 9, 52, 41, tzinfo=UTC)
GAP_CAUSES = {"en": "causes 4 and 8", "zh": "原因 4、8"}


def diagnose(bundle: Bundle) -> Diagnosis:
    return classify(parse_snapshot(bundle.to_json()))


def dashboard_unreachable() -> Diagnosis:
    """Kubernetes read; the Ray dashboard refused the connection, so Ray was not read at all."""
    bundle = scenarios.dashboard_connection_refused()
    assert bundle.ray_state is None
    assert [e["source"] for e in bundle.errors] == ["ray dashboard"]
    return diagnose(bundle)


def ray_registers_no_gpu() -> Diagnosis:
    """Ray read, and none of its nodes registered a GPU: a real 0."""
    return diagnose(scenarios.ray_registers_no_gpu())


def body(message: dict[str, Any]) -> str:
    return "\n".join(block["text"]["text"] for block in message["blocks"] if "text" in block)


def chart_texts(figure: Figure) -> list[str]:
    return [t.get_text() for t in figure.findobj(matplotlib.text.Text) if t.get_text()]


def test_table_says_not_read_for_the_ray_stages() -> None:
    table = capacity_table(dashboard_unreachable().capacity, cluster=CLUSTER, lang="en")
    lines = table.splitlines()
    assert lines[3].split() == ["A100", "8", "8", "not", "read", "not", "read", "0"]
    assert lines[-1] == "Ray was not read, so whether it registered the GPUs given to Ray Pods is not known."
    zh = capacity_table(dashboard_unreachable().capacity, cluster=CLUSTER, lang="zh")
    assert zh.splitlines()[3].split() == ["A100", "8", "8", "未读取", "未读取", "0"]
    assert "未读取 Ray 层" in zh


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_headline_names_no_cause_when_ray_was_not_read(lang: str) -> None:
    capacity = dashboard_unreachable().capacity
    for text in (
        gap_summary(capacity, lang),  # type: ignore[arg-type]
        capacity_table(capacity, cluster=CLUSTER, lang=lang),  # type: ignore[arg-type]
        capacity_comment(capacity, cluster=CLUSTER, lang=lang),  # type: ignore[arg-type]
    ):
        assert GAP_CAUSES[lang] not in text
    assert "not registered in Ray" not in gap_summary(capacity, "en")


def test_slack_comment_says_not_read() -> None:
    capacity = dashboard_unreachable().capacity
    comment = capacity_comment(capacity, cluster=CLUSTER, lang="en")
    assert "*A100*: 8 allocatable → 8 given to Ray Pods → registered in Ray and in use: not read" in comment
    assert "0 registered" not in comment
    assert "Ray 登记、占用：未读取" in capacity_comment(capacity, cluster=CLUSTER, lang="zh")


def test_chart_marks_the_ray_stages_not_read() -> None:
    with chart_style("en"):
        figure = capacity_figure(dashboard_unreachable().capacity, cluster=CLUSTER, lang="en")
    [axes] = figure.axes
    labels = {str(container.patches[0].get_gid()): container for container in axes.containers}
    assert set(labels) == {
        "allocatable",
        "given_to_ray_pods",
        "registered_in_ray",
        "in_use",
        "pending_demand",
    }
    assert [t.get_text() for t in axes.texts].count("not read") == 2
    assert [t.get_text() for t in axes.get_legend().get_texts()][2:4] == [
        "Registered in Ray (not read)",
        "In use by actors/tasks (not read)",
    ]
    shown = chart_texts(figure)
    assert "Ray was not read, so whether it registered the GPUs given to Ray Pods is not known." in shown
    assert not any(GAP_CAUSES["en"] in text for text in shown)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_health_post_says_not_read_for_the_ray_layer(lang: str) -> None:
    facts = health_facts(dashboard_unreachable(), NOW)
    assert (facts.ray_nodes_alive, facts.gpus_registered, facts.pending_demands, facts.gpu_actors) == (
        None,
        None,
        None,
        None,
    )
    assert (facts.ready_worker_pods, facts.gpus_given) == (4, 8)
    text = body(render_health_post(facts, lang))  # type: ignore[arg-type]
    assert GAP_CAUSES[lang] not in text
    if lang == "en":
        assert "Ray nodes alive: not read (4 ready worker Pod(s))" in text
        assert "GPUs registered in Ray: not read (8 given to Ray Pods)" in text
        assert "demands waiting: not read" in text and "GPUs held by actors: not read" in text
        assert "0 Ray node(s) alive" not in text and "0 GPU(s) registered" not in text
        assert "A100: 8 allocatable, 8 given to Ray Pods, 0 waiting" in text  # Kubernetes was read
    else:
        assert "存活的 Ray 节点：未读取（就绪的 worker Pod 4 个）" in text
        assert "Ray 中登记的 GPU：未读取（Ray Pod 获得 8 张）" in text
        assert "等待中的资源需求：未读取" in text and "占用 GPU 的 actor：未读取" in text


def test_ray_read_with_zero_gpus_keeps_saying_zero_and_the_gap() -> None:
    diagnosis = ray_registers_no_gpu()
    capacity = diagnosis.capacity
    gap = "A100: 8 of the 8 GPUs given to Ray Pods are not registered in Ray (causes 4 and 8)"
    assert gap_summary(capacity, "en") == gap
    assert capacity_table(capacity, cluster=CLUSTER, lang="en").splitlines()[3].split() == [
        "A100",
        "8",
        "8",
        "0",
        "0",
        "0",
    ]
    assert "→ 0 registered in Ray → 0 in use" in capacity_comment(capacity, cluster=CLUSTER, lang="en")
    with chart_style("en"):
        figure = capacity_figure(capacity, cluster=CLUSTER, lang="en")
    assert "not read" not in [t.get_text() for t in figure.axes[0].texts]
    assert gap in chart_texts(figure)
    text = body(render_health_post(health_facts(diagnosis, NOW), "en"))
    assert "0 GPU(s) registered in Ray of 8 given to Ray Pods" in text
    assert gap in text and "not read" not in text
    assert "原因 4、8" in body(render_health_post(health_facts(diagnosis, NOW), "zh"))
