"""Slack messages: root in the channel, one reply per finding, always within Slack's limits."""

from __future__ import annotations

from typing import Any

import pytest
from slack_sdk.models.blocks import Block

from bot.catalogue import default_catalogue
from bot.classify import classify
from bot.deliver.blocks.thread import render_thread
from bot.diagnosis import Diagnosis, Evidence, Finding, Subject
from bot.read.snapshot_file import parse_snapshot
from bot.render.slack import MAX_BLOCKS
from tests.support import scenarios


def validate(message: dict[str, Any]) -> None:
    assert message["text"]
    assert 0 < len(message["blocks"]) <= MAX_BLOCKS
    for raw in message["blocks"]:
        block = Block.parse(raw)
        assert block is not None
        block.validate_json()


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("case", scenarios.CASES[::3], ids=[c.name for c in scenarios.CASES[::3]])
def test_every_scenario_renders_valid_messages(case: scenarios.Case, lang: str) -> None:
    diagnosis = classify(parse_snapshot(case.build().to_json()))
    messages = render_thread(diagnosis, default_catalogue(), lang)  # type: ignore[arg-type]
    for message in messages:
        validate(message)
    if diagnosis.verdict_layer in ("healthy", "unknown"):
        assert len(messages) == 1
    else:
        assert len(messages) == 1 + len(diagnosis.findings)


def test_healthy_cluster_is_one_quiet_root_message() -> None:
    messages = render_thread(
        classify(parse_snapshot(scenarios.healthy().to_json())), default_catalogue(), "en"
    )
    assert len(messages) == 1
    actions = [b for b in messages[0]["blocks"] if b["type"] == "actions"]
    assert [e["action_id"] for e in actions[0]["elements"]] == [
        "raydiag_gpu_probe",
        "raydiag_head_check",
        "raydiag_ray_status",
        "raydiag_rerun",
        "raydiag_mute",
    ]


def test_root_names_layer_cause_and_count() -> None:
    diagnosis = classify(parse_snapshot(scenarios.gpu_worker_without_toleration().to_json()))
    root = render_thread(diagnosis, default_catalogue(), "en")[0]
    assert "Kubernetes layer" in root["text"] and "cause 2" in root["text"]


def test_huge_evidence_is_cut_with_a_note_and_markup_is_escaped() -> None:
    finding = Finding(
        rule="ray-gcs-connection-failed",
        code="RD0804",
        cause=8,
        layer="ray",
        severity="critical",
        subject=Subject(kind="Pod", name="w-<script>", namespace="ml"),
        evidence=[Evidence(source="log", text="Failed to connect to GCS " + "x" * 20000)],
        params={"pod": "w-<b>&", "line": "y" * 5000},
    )
    diagnosis = Diagnosis(cluster="c", findings=[finding])
    messages = render_thread(diagnosis, default_catalogue(), "en")
    for message in messages:
        validate(message)
    reply = messages[1]
    evidence = next(b for b in reply["blocks"] if b["type"] == "section" and "Evidence" in b["text"]["text"])
    assert "truncated" in evidence["text"]["text"]
    explanation = reply["blocks"][2]["text"]["text"]
    assert "<b>" not in explanation and "&lt;b&gt;" in explanation


def test_fifty_block_limit_holds_for_many_evidence_lines() -> None:
    evidence = [Evidence(source=f"log {i}", text="line " * 50) for i in range(500)]
    finding = Finding(
        rule="pod-crash-loop",
        code="RD1002",
        cause=10,
        layer="kubernetes",
        severity="critical",
        subject=Subject(kind="Pod", name="p"),
        evidence=evidence,
    )
    for message in render_thread(Diagnosis(findings=[finding]), default_catalogue(), "zh"):
        validate(message)
