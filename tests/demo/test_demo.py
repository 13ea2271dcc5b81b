"""``make demo``: the bundled KubeRay state, and one real run of the live demo end to end."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bot.classify import classify
from bot.demo import kuberay_state
from bot.demo.local_ray import processes_with_marker
from bot.diagnosis import Diagnosis
from bot.read.snapshot_file import parse_snapshot, snapshot_from_bundle
from tools import build_demo_state

# Real Ray clusters on 127.0.0.2-.5: these modules run one after another in one pytest-xdist worker.
pytestmark = pytest.mark.xdist_group("real-ray")

REPO = Path(__file__).resolve().parents[2]
RECORDED_RAY = REPO / "tests" / "fixtures" / "ray" / "broken"
PENDING = kuberay_state.A100_PENDING_POD
LOST = kuberay_state.LOST_POD
# (cause, rule, subject) in the order the demo must print them.
EXPECTED = [
    (3, "k8s-pod-waits-for-unadvertised-gpu", PENDING),
    (8, "ray-worker-not-joined", LOST),
    (7, "ray-gpu-type-unregistered", "{CPU: 1, GPU: 1, accelerator_type:H100: 1}"),
    (6, "ray-demand-infeasible", "{CPU: 1, GPU: 4}"),
    (5, "ray-resources-held", "{CPU: 1, GPU: 1, accelerator_type:A100: 1}"),
]


def _in_order(diagnosis: Diagnosis) -> list[tuple[int | None, str, str | None]]:
    return [(f.cause, f.rule, f.subject.name) for f in diagnosis.findings]


def _assert_expected_order(found: list[Any]) -> None:
    positions = [found.index(item) for item in EXPECTED]
    assert positions == sorted(positions), found


# --- the bundled Kubernetes half (fast) ----------------------------------------------------------


def test_committed_json_is_what_the_generator_writes() -> None:
    # After changing the tool or kuberay_state.py: `.venv/bin/python tools/build_demo_state.py`.
    assert kuberay_state.STATE_FILE.read_text(encoding="utf-8") == build_demo_state.render_state()


def test_bundled_state_reads_as_kubectl_lists() -> None:
    state = kuberay_state.load_state()
    kube = state["kubernetes"]
    for key, kind in [("nodes", "NodeList"), ("pods", "PodList"), ("events", "EventList")]:
        assert kube[key]["kind"] == kind
        assert kube[key]["apiVersion"] == "v1"
    assert kube["rayclusters"]["apiVersion"] == "ray.io/v1"
    snapshot = snapshot_from_bundle(state)
    assert snapshot.kubernetes is not None
    pods = {p.name: p for p in snapshot.kubernetes.pods}
    assert pods[PENDING].phase == "Pending" and pods[PENDING].node_name is None
    assert pods[LOST].pod_ip == kuberay_state.LOST_IP and pods[LOST].ready
    assert {p.pod_ip for p in pods.values() if p.labels.get("ray.io/cluster") == "demo-gpu"} >= {
        "127.0.0.2",
        "127.0.0.3",
        "127.0.0.4",
    }
    nodes = {n.name: n for n in snapshot.kubernetes.nodes}
    assert nodes["gpu-a100-1"].allocatable["nvidia.com/gpu"] == 1
    assert "nvidia.com/gpu" not in nodes["gpu-a100-2"].allocatable


def test_bundled_state_alone_gives_the_kubernetes_findings() -> None:
    diagnosis = classify(snapshot_from_bundle(kuberay_state.load_state()))
    assert not diagnosis.errors
    found = _in_order(diagnosis)
    assert found[0] == (3, "k8s-pod-waits-for-unadvertised-gpu", PENDING)
    assert (3, "k8s-gpu-node-without-allocatable", "gpu-a100-2") in found
    # Without Ray, the worker's log is the only sign that it never joined.
    assert (8, "ray-gcs-connection-failed", LOST) in found
    assert diagnosis.verdict_layer == "kubernetes"
    first = diagnosis.findings[0]
    assert first.params["node"] == "gpu-a100-2"
    sources = [e.source for e in first.evidence]
    # The recorded scheduler message is one our own replay of these nodes arrives at.
    assert "raydiag fit replay (agrees with the scheduler)" in sources
    assert first.evidence[0].text == kuberay_state.SCHEDULER_MESSAGE


def test_bundle_with_recorded_ray_gives_the_demo_diagnosis() -> None:
    """The same Ray workload, recorded earlier on the same addresses, paired with the bundle."""
    answers = {
        path.stem: json.loads(path.read_text(encoding="utf-8"))
        for path in RECORDED_RAY.glob("*.json")
        if not path.stem.startswith("_")
    }
    bundle = {**kuberay_state.load_state(), "ray": answers}
    diagnosis = classify(parse_snapshot(bundle))
    found = _in_order(diagnosis)
    _assert_expected_order(found)
    assert found[0] == EXPECTED[0]
    held = next(f for f in diagnosis.findings if f.rule == "ray-resources-held")
    assert "gpu-holder" in held.params["holders"]


# --- the live demo, end to end (one real Ray cluster, ~30 s on two cores) -------------------------


@pytest.mark.slow
def test_live_demo_end_to_end(tmp_path: Path) -> None:
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("RAY_ADDRESS", None)
    run = subprocess.run(
        [sys.executable, "-m", "bot.demo", "--out", str(out)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    temp_dir = re.search(r"Ray temp dir [^:]*: (\S+)", run.stderr)
    # Whatever happened, no process of this run may be left, and its temp dir is gone.
    assert temp_dir is not None, run.stderr
    assert processes_with_marker(temp_dir.group(1)) == []
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert not Path(temp_dir.group(1)).exists()

    lines = [line for line in run.stdout.splitlines() if re.match(r"^\d+\. \[", line)]
    headers = [re.search(r"cause (\d+) · \w+/(.+?)(?: -n \S+)?$", line) for line in lines]
    shown = [(int(m.group(1)), m.group(2)) for m in headers if m]
    expected = [(cause, subject) for cause, _, subject in EXPECTED]
    positions = [shown.index(item) for item in expected]
    assert positions == sorted(positions), run.stdout
    assert shown[0] == (3, PENDING)
    assert "Verdict: Kubernetes layer" in run.stdout
    assert "gpu-holder" in run.stdout
    assert "Done in" in run.stdout

    report = json.loads((out / "demo-diagnosis.json").read_text(encoding="utf-8"))
    rules = [f["rule"] for f in report["findings"]]
    assert [rule for _, rule, _ in EXPECTED if rule in rules] == [rule for _, rule, _ in EXPECTED]
    assert report["findings"][0]["cause"] == 3
    messages = json.loads((out / "demo-slack-thread.json").read_text(encoding="utf-8"))
    # The root message, then one reply per finding.
    assert isinstance(messages, list) and len(messages) == len(report["findings"]) + 1
    assert all(isinstance(m, dict) and m["text"] and m["blocks"] for m in messages)
    assert "cause 3" in messages[0]["text"]
    assert (out / "demo-diagnosis.zh.txt").read_text(encoding="utf-8").strip()
