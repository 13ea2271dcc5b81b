"""Regenerate docs/capacity.png, the capacity picture shown in the README.

    .venv/bin/python tools/render_capacity_example.py

Input: the test suite's realistic KubeRay cluster (two 4-GPU A100 workers) where the second
worker's Pod runs but its raylet never joined the head, while a 4-GPU task waits, and two tasks
ask for H100s the cluster does not have: Kubernetes allocated 8 A100s and gave 8 to Ray Pods, Ray
registered 4; no layer has an H100. Rendering is deterministic, and a test
checks that the committed image is what this script draws.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bot.classify import classify  # noqa: E402
from bot.diagnosis import Capacity  # noqa: E402
from bot.read.snapshot_file import parse_snapshot  # noqa: E402
from bot.render.capacity_chart import render_capacity_png  # noqa: E402
from tests.support import scenarios  # noqa: E402
from tests.support.cluster import CLUSTER  # noqa: E402

OUTPUT = ROOT / "docs" / "capacity.png"


def example_figures() -> Capacity:
    bundle = scenarios.gpu_worker_runs_but_never_joined()
    assert bundle.ray_state is not None
    bundle.ray_state["demands"] = [
        {"shape": {"GPU": 4.0, "CPU": 1.0}, "count": 1, "kind": "task_or_actor"},
        {"shape": {"GPU": 1.0, "accelerator_type:H100": 0.001}, "count": 2, "kind": "task_or_actor"},
    ]
    return classify(parse_snapshot(bundle.to_json())).capacity


def example_png() -> bytes:
    return render_capacity_png(example_figures(), cluster=CLUSTER, lang="en")


def main() -> int:
    OUTPUT.parent.mkdir(exist_ok=True)
    OUTPUT.write_bytes(example_png())
    print(f"wrote {OUTPUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
