"""A real older Ray cluster read by this bot's collector, probes and head check.

The cluster runs Ray 2.9.3 from its own venv (``make ray-compat-venv`` builds it from
``tools/ray-versions/ray-2.9.3.lock`` outside the checkout, and ``make test`` points
``RAYDIAG_RAY_COMPAT_VENV`` at it), while the bot itself runs the project's Ray. The collector and
the GPU probe speak only HTTP to the dashboard (the state API, the autoscaler status and the Job
Submission API), so they must work across versions or say what the older one lacks.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.classify import classify
from bot.collect.deadline import Deadline
from bot.collect.ray_dashboard import DashboardReader, collect_ray
from bot.demo.local_ray import LocalCluster, NodeSpec, http_json, running_cluster
from bot.probes.gpu import run_gpu_probe
from bot.probes.head import check_head
from bot.read.ray_json import ray_state
from bot.read.snapshot_file import parse_snapshot

# Real Ray clusters on 127.0.0.2-.5: these modules run one after another in one pytest-xdist worker.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("real-ray")]

VERSION = "2.9.3"
NODES = (
    NodeSpec("127.0.0.2", num_cpus=1),
    NodeSpec("127.0.0.3", num_cpus=2, num_gpus=1, resources={"accelerator_type:A100": 1}),
)


def _venv() -> Path:
    default = Path.home() / ".cache" / "raydiag" / f"venv-ray-{VERSION}"
    return Path(os.environ.get("RAYDIAG_RAY_COMPAT_VENV", default))


@pytest.fixture(scope="module")
def old_ray() -> Iterator[LocalCluster]:
    ray = _venv() / "bin" / "ray"
    if not ray.exists():
        pytest.fail(
            f"no Ray {VERSION} venv at {ray.parent.parent}: run `make ray-compat-venv`", pytrace=False
        )
    with running_cluster(NODES, ray=ray, temp_prefix="raydiag-compat-") as cluster:
        yield cluster


def test_the_cluster_really_is_the_older_release(old_ray: LocalCluster) -> None:
    status, body = http_json(old_ray.dashboard_url, "/api/version")
    assert status == 200 and body["ray_version"] == VERSION, body


def test_the_collector_reads_the_older_dashboard(old_ray: LocalCluster) -> None:
    answers = collect_ray(DashboardReader(old_ray.dashboard_url, Deadline(20)))
    ray = ray_state(answers)
    alive = sorted(n.node_ip for n in ray.nodes if n.state == "ALIVE")
    assert alive == ["127.0.0.2", "127.0.0.3"]
    gpu_node = next(n for n in ray.nodes if n.node_ip == "127.0.0.3")
    assert gpu_node.resources_total.get("GPU") == 1.0
    assert gpu_node.resources_total.get("accelerator_type:A100") == 1.0
    # Whatever 2.9 does not answer is named as an error, never a crash, and the rest still judges.
    diagnosis = classify(parse_snapshot({"ray": answers}))
    assert [f.rule for f in diagnosis.findings if f.severity != "info"] == []
    assert diagnosis.figures["ray_nodes_alive"] == "2"


def test_the_gpu_probe_runs_through_the_older_job_api(old_ray: LocalCluster) -> None:
    result = run_gpu_probe(old_ray.dashboard_url, gpu_type="A100", timeout_s=90, poll_s=0.5)
    assert result.outcome == "ran", result
    assert result.node_ip == "127.0.0.3"
    assert result.cuda_visible_devices == "0" and result.job_status == "SUCCEEDED"


def test_the_head_check_reaches_the_older_head(old_ray: LocalCluster) -> None:
    result = check_head(None, None, None, old_ray.dashboard_url)
    assert (result.outcome, result.verdict) == ("ran", "ok"), result
