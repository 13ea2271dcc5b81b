"""The re-verification's judgement, as pure functions: verdicts, what is news, the steps, versions.

The probe results here are the probe's own dataclass filled the way ``run_gpu_probe`` fills it
(its parsing of real jobs is tested against a real Ray in tests/probes); the diagnoses come from
the classifier on the realistic scenarios and the demo's recorded KubeRay state.
"""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from slack_sdk.models.blocks import Block

from bot.classify import classify
from bot.classify.versions import image_tag
from bot.deliver.blocks.verify import probe_change_message, verification_message
from bot.diagnosis import Capacity, Diagnosis, GpuModelCapacity, RayGpuNode, ServeApp, StackVersions
from bot.probes.gpu import GpuProbeResult
from bot.probes.verification import (
    ANY_POOL,
    STEPS,
    VERDICTS,
    Change,
    PoolResult,
    StepResult,
    VersionChange,
    changes,
    passed,
    pools_of,
    verdict_of,
    verification,
    version_changes,
)
from bot.read.snapshot_file import parse_snapshot
from bot.render.verify_text import render_verify_text
from bot.schedule.verify import VerifyMemory, memory_id
from bot.snapshot.gpu import driver_version
from bot.snapshot.kubernetes import Node
from tests.support.cluster import Bundle
from tests.support.demo_states import healthy_state, node

A100_NODE = RayGpuNode(
    node_id="n3", ip="127.0.0.3", gpus=1, accelerator_types=["A100"], pod="w-a100", kubernetes_model="A100"
)
T4_NODE = RayGpuNode(
    node_id="n4", ip="127.0.0.4", gpus=1, accelerator_types=["T4"], pod="w-t4", kubernetes_model="T4"
)


def probe(outcome: str = "ran", **facts: object) -> GpuProbeResult:
    made: dict[str, object] = {"dashboard_url": "http://127.0.0.2:8265", "elapsed_s": 4.2}
    if outcome == "ran":
        made |= {"node_id": "n3", "node_ip": "127.0.0.3", "cuda_visible_devices": "0", "gpu_ids": ("0",)}
    return GpuProbeResult(outcome=outcome, **(made | facts))  # type: ignore[arg-type]


# --- verdicts ------------------------------------------------------------------------------------


def test_a_probe_that_ran_where_the_labels_agree_is_ran() -> None:
    result = verdict_of(probe(), "A100", [A100_NODE, T4_NODE])
    assert (result.verdict, result.node, result.detail["cuda_visible_devices"]) == ("ran", "127.0.0.3", "0")


def test_stopped_at_the_time_limit_is_pending_and_the_probes_own_failures_keep_their_names() -> None:
    assert verdict_of(probe("pending_timeout", driver_started=True), "A100", []).verdict == "pending"
    # A job whose driver never connected never asked for the GPU: no word on the GPUs.
    slow = verdict_of(probe("pending_timeout", driver_started=False), "A100", [])
    assert (slow.verdict, slow.detail["error"]) == (
        "failed",
        "the probe's driver did not connect to the cluster in time",
    )
    for outcome in ("failed", "unreachable", "rejected"):
        result = verdict_of(probe(outcome, error="connection refused"), ANY_POOL, [])
        assert (result.verdict, result.detail["error"]) == (outcome, "connection refused")


def test_no_device_in_the_task_is_no_devices() -> None:
    for facts in ({"cuda_visible_devices": ""}, {"cuda_visible_devices": None}, {"device_count": 0}):
        assert verdict_of(probe(**facts), ANY_POOL, [A100_NODE]).verdict == "no_devices"
    # No way to count devices in the worker (no torch, nvidia-smi or NVML) is not "none seen".
    assert verdict_of(probe(device_count=None), ANY_POOL, [A100_NODE]).verdict == "ran"


def test_a_typed_probe_on_a_node_kubernetes_calls_another_model_is_wrong_node() -> None:
    relabelled = replace(A100_NODE, kubernetes_model="T4")
    result = verdict_of(probe(), "A100", [relabelled])
    assert (result.verdict, result.detail["kubernetes_model"], result.detail["pod"]) == (
        "wrong_node",
        "T4",
        "w-a100",
    )
    # A plain GPU task asks for no model: the same landing is fine for the "any" pool.
    assert verdict_of(probe(), ANY_POOL, [relabelled]).verdict == "ran"
    # Ray's type names and the label's spelling differ; both name the A100.
    spelled = replace(A100_NODE, accelerator_types=["NVIDIA_A100"])
    assert verdict_of(probe(), "NVIDIA_A100", [spelled]).verdict == "ran"


def test_ray_gpus_on_a_pod_given_no_gpu_is_wrong_node_for_any_pool() -> None:
    declared = replace(A100_NODE, kubernetes_gpus=0.0, kubernetes_model=None)
    result = verdict_of(probe(), ANY_POOL, [declared])
    assert (result.verdict, result.detail["pod_gpus"]) == ("wrong_node", "0")


# --- what is news ----------------------------------------------------------------------------------


def result(pool: str, verdict: str) -> PoolResult:
    return PoolResult(pool, verdict, 1.0)  # type: ignore[arg-type]


def test_only_a_changed_verdict_or_a_new_pool_that_does_not_run_is_news() -> None:
    now = [result("any", "ran"), result("A100", "pending"), result("T4", "ran"), result("L4", "failed")]
    news = changes({"any": "ran", "A100": "ran"}, now)
    assert [(c.pool, c.before, c.after.verdict) for c in news] == [
        ("A100", "ran", "pending"),
        ("L4", None, "failed"),
    ]
    assert changes({"any": "ran", "A100": "pending", "T4": "ran", "L4": "failed"}, now) == []


def test_pools_are_any_and_each_registered_type_and_a_vanished_type_that_ran_is_probed_once_more() -> None:
    capacity = Capacity(layers_read=["kubernetes", "ray"], ray_gpu_nodes=[T4_NODE, A100_NODE])
    assert pools_of(Diagnosis(capacity=capacity)) == ["any", "A100", "T4"]
    assert pools_of(Diagnosis(capacity=capacity), kept=["any", "H100"]) == ["any", "A100", "H100", "T4"]
    # GPUs only Kubernetes shows (the dashboard was down) still get the plain probe.
    gpus_in_kubernetes = Capacity(
        layers_read=["kubernetes"],
        models=[
            GpuModelCapacity(
                model="A100",
                allocatable=2,
                given_to_ray_pods=2,
                registered_in_ray=None,
                in_use=None,
                pending_demand=0,
            )
        ],
    )
    assert pools_of(Diagnosis(capacity=gpus_in_kubernetes)) == ["any"]
    assert pools_of(Diagnosis(capacity=Capacity(layers_read=["kubernetes", "ray"]))) == []


def test_only_a_part_read_on_both_runs_can_change() -> None:
    before = {"ray": "2.9.3", "device_plugin": "v0.17.0", "nvidia_driver": "550.54.15"}
    now = {"ray": "2.9.3", "device_plugin": "v0.17.1", "kuberay_operator": "v1.3.0"}
    assert [(c.part, c.before, c.after) for c in version_changes(before, now)] == [
        ("device_plugin", "v0.17.0", "v0.17.1")
    ]
    assert version_changes({}, now) == []


# --- the verification order ------------------------------------------------------------------------


def demo_diagnosis() -> Diagnosis:
    return classify(parse_snapshot(Bundle.from_state(healthy_state()).to_json()))


def test_the_steps_follow_the_verification_order_and_unread_layers_are_unknown() -> None:
    diagnosis = demo_diagnosis()  # Kubernetes only: the recorded state has no Ray layer
    probes = [result("any", "ran"), result("A100", "ran")]
    steps = verification(diagnosis, probes)
    assert [(s.step, s.status) for s in steps] == [
        ("pods_ready", "ok"),
        ("ray_nodes", "unknown"),
        ("gpu_probe", "ok"),
        ("gpu_type_probe", "ok"),
        ("serve", "unknown"),
        ("holders", "unknown"),
    ]
    assert steps[0].detail == {"ready": "2", "workers": "2", "head": "True"} and passed(steps)


def test_a_failed_step_fails_the_verification() -> None:
    capacity = Capacity(
        layers_read=["kubernetes", "ray"],
        models=[
            GpuModelCapacity(
                model="A100",
                allocatable=2,
                given_to_ray_pods=2,
                registered_in_ray=1,
                in_use=0,
                pending_demand=0,
            )
        ],
        worker_pods=2,
        ready_worker_pods=2,
        head_ready=True,
        ray_nodes_alive=3,
        serve_applications=[
            ServeApp(name="llm", status="DEPLOY_FAILED"),
            ServeApp(name="embed", status="RUNNING"),
        ],
    )
    steps = {s.step: s for s in verification(Diagnosis(capacity=capacity), [result("any", "pending")])}
    assert steps["ray_nodes"].status == "failed" and steps["ray_nodes"].detail["registered"] == "1"
    assert steps["gpu_probe"].status == "failed" and steps["gpu_type_probe"].status == "skipped"
    assert steps["serve"].status == "failed" and steps["serve"].detail == {"apps": "llm: DEPLOY_FAILED"}
    assert steps["holders"].status == "ok"
    assert not passed(list(steps.values()))


# --- versions from a snapshot ----------------------------------------------------------------------


def test_image_tags_as_the_runtime_reads_them() -> None:
    assert image_tag("nvcr.io/nvidia/k8s-device-plugin:v0.17.0") == "v0.17.0"
    assert image_tag("registry.local:5000/kuberay/operator") == "latest"
    assert image_tag("quay.io/kuberay/operator:v1.2.2@sha256:" + "ab" * 32) == "v1.2.2"
    assert image_tag("quay.io/kuberay/operator@sha256:" + "cd" * 32) == "sha256:cdcdcdcdcdcd"
    assert image_tag("  ") is None


def test_the_driver_version_from_either_generation_of_feature_discovery_labels() -> None:
    assert (
        driver_version(Node(name="a", labels={"nvidia.com/cuda.driver-version.full": "570.124.06"}))
        == "570.124.06"
    )
    parts = {
        "nvidia.com/cuda.driver.major": "545",
        "nvidia.com/cuda.driver.minor": "23",
        "nvidia.com/cuda.driver.rev": "08",
    }
    assert driver_version(Node(name="b", labels=parts)) == "545.23.08"
    assert (
        driver_version(Node(name="c", labels={"cloud.google.com/gke-gpu-driver-version": "latest"})) is None
    )


def test_a_snapshot_says_which_versions_it_read() -> None:
    raw = healthy_state()
    node(raw, "gpu-a100-1")["metadata"]["labels"]["nvidia.com/cuda.driver-version.full"] = "550.54.15"
    versions = classify(parse_snapshot(Bundle.from_state(raw).to_json())).versions
    # Ray from the RayCluster's spec (no dashboard in this snapshot); no operator Pod was read.
    assert versions == StackVersions(ray="2.60.0", nvidia_driver=["550.54.15"], device_plugin=["v0.17.0"])
    assert versions.known() == {"ray": "2.60.0", "nvidia_driver": "550.54.15", "device_plugin": "v0.17.0"}


# --- what the runs remember ------------------------------------------------------------------------


def test_memory_survives_the_post_state_row() -> None:
    at = datetime(2026, 12, 1, 8, 0, tzinfo=UTC)
    memory = VerifyMemory(
        {"ray": "2.9.3", "device_plugin": "v0.17.0, v0.17.1"}, {"any": "ran", "A100": "pending"}, at, None
    )
    state = memory.to_state(memory_id("gpu-prod"), at)
    assert len(state.schedule_id) <= 32
    assert VerifyMemory.from_state(state) == memory
    # A row written by a newer release with a verdict this one does not know drops that verdict only.
    odd = state.__class__(state.schedule_id, posted_keys=state.posted_keys | {"verdict\0T4\0exploded"})
    assert VerifyMemory.from_state(odd).verdicts == {"any": "ran", "A100": "pending"}
    assert json.dumps(sorted(state.posted_keys))  # plain strings, as the table stores them


# --- what the channel reads -------------------------------------------------------------------------


def valid_blocks(message: dict[str, Any]) -> None:
    """Slack would take it: 1 to 50 blocks, each valid Block Kit, and a fallback text."""
    blocks = message["blocks"]
    assert message["text"] and 0 < len(blocks) <= 50
    for raw in blocks:
        block = Block.parse(raw)
        assert block is not None
        block.validate_json()


def test_every_verdict_and_step_reads_in_both_languages_as_valid_block_kit() -> None:
    for lang in ("en", "zh"):
        for verdict in VERDICTS:
            after = PoolResult("A100", verdict, 3.5, "127.0.0.3", {"pod": "w", "kubernetes_model": "T4"})
            for before in (None, "ran"):
                message = probe_change_message("gpu-prod", Change("A100", before, after), lang, 120)
                valid_blocks(message)
                text = json.dumps(message, ensure_ascii=False)
                assert "{" + "pod}" not in text and "verify." not in text  # every placeholder and key filled
        steps = [StepResult(step, "failed" if step == "gpu_type_probe" else "ok") for step in STEPS]
        upgrade = [VersionChange("nvidia_driver", "550.54.15", "570.124.06")]
        message = verification_message(
            "gpu-prod", upgrade, steps, [PoolResult("A100", "pending", 120.0)], lang, timeout_s=120
        )
        valid_blocks(message)
        text = json.dumps(message, ensure_ascii=False)
        assert "`550.54.15` → `570.124.06`" in text and "verify." not in text
        assert ("7, 5" in text) and (("causes" in text) if lang == "en" else ("原因" in text))


def test_the_terminal_report_in_chinese_names_the_first_failed_step_and_its_causes() -> None:
    steps = [StepResult(step, "failed" if step == "ray_nodes" else "ok") for step in STEPS]
    probes = [PoolResult("any", "ran", 4.0, "127.0.0.3"), PoolResult("A100", "pending", 15.0)]
    text = render_verify_text("gpu-prod", {"device_plugin": "v0.17.1"}, steps, probes, "zh", 15)
    assert text.startswith("raydiag verify gpu-prod: 未通过")
    assert "device plugin v0.17.1" in text and "2. [FAIL] ray status 显示应有的节点和 GPU: 未通过" in text
    assert "accelerator_type:A100: pending, 15.0s" in text and "15 秒内没有任何 Ray 节点接收" in text
    assert text.rstrip().endswith("从第一个未通过的步骤查起：ray status 显示应有的节点和 GPU（原因 4, 8）。")
