"""Record the Ray dashboard's HTTP answers from a real local multi-node cluster as test fixtures.

    .venv/bin/python tools/record_ray_fixtures.py                 # every scenario
    .venv/bin/python tools/record_ray_fixtures.py --scenario broken

Why a real cluster: raydiag reads Ray only over the dashboard's HTTP API, and the shapes of those
answers (camelCased keys in one endpoint, snake_case in the next, envelopes that moved between
releases) are exactly what a hand-written fixture gets wrong. Each scenario starts its own cluster
of several raylets on distinct loopback addresses, builds the situation, records every endpoint
into ``tests/fixtures/ray/<scenario>/<key>.json`` and tears the cluster down again.

Only processes this script started are stopped: each ``ray start --block`` runs in its own session
and is signalled by its PID; anything left behind is found by the private ``--temp-dir`` in its
command line. ``ray stop`` is never used, because it kills every Ray process on the machine. The
cluster itself is ``bot.demo.local_ray.LocalCluster``, the same one ``make demo`` runs.

The Serve parts need ``ray[serve]``; without it they are skipped with a note (the fixtures README
shows how to put Serve's packages on ``PYTHONPATH`` for a recording without touching the venv).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # run as a script from anywhere: bot/ is importable without install
    sys.path.insert(0, str(REPO))

from bot.demo.local_ray import (  # noqa: E402
    LocalCluster,
    NodeSpec,
    dig_list,
    http_json,
    log,
    wait_for,
)

FIXTURES = REPO / "tests" / "fixtures" / "ray"
NAMESPACE = "raydiag-rec"

# Fixture key -> dashboard path. The key is the file name and, for the keys ray_json.ray_state understands,
# the logical name the live collector will use.
ENDPOINTS: dict[str, str] = {
    "version": "/api/version",
    "serve_version": "/api/ray/version",
    "cluster_metadata": "/api/v0/cluster_metadata",
    "nodes": "/api/v0/nodes?detail=1&limit=10000",
    "nodes_summary": "/nodes?view=summary",
    "cluster_status": "/api/cluster_status",
    "cluster_status_formatted": "/api/cluster_status?format=1",
    "actors": "/api/v0/actors?detail=1&limit=10000",
    "actors_alive": "/api/v0/actors?detail=1&limit=10000"
    "&filter_keys=state&filter_predicates=%3D&filter_values=ALIVE",
    "pending_tasks": "/api/v0/tasks?detail=1&limit=10000"
    "&filter_keys=state&filter_predicates=%3D&filter_values=PENDING_NODE_ASSIGNMENT",
    "placement_groups": "/api/v0/placement_groups?detail=1&limit=10000",
    "jobs": "/api/jobs/",
    "state_jobs": "/api/v0/jobs?limit=10000",
    "serve_applications": "/api/serve/applications/",
    "cluster_events": "/api/v0/cluster_events",
    "gcs_healthz": "/api/gcs_healthz",
    # Asked for to document that they do not exist in this version.
    "cluster_resources": "/api/v0/cluster_resources",
    "cluster_resources_legacy": "/api/cluster_resources",
    "snapshot": "/api/snapshot",
}


# The same shape for every scenario: a CPU-only head, one A100 node, one T4 node, one CPU worker.
CLUSTER = [
    NodeSpec("127.0.0.2", num_cpus=1, labels={"node-group": "head"}),
    NodeSpec(
        "127.0.0.3",
        num_cpus=2,
        num_gpus=1,
        resources={"accelerator_type:A100": 1},
        labels={"node-group": "gpu-a100", "gpu-model": "A100"},
    ),
    NodeSpec(
        "127.0.0.4",
        num_cpus=2,
        num_gpus=1,
        resources={"accelerator_type:T4": 1},
        labels={"node-group": "gpu-t4", "gpu-model": "T4"},
    ),
    NodeSpec("127.0.0.5", num_cpus=2, labels={"node-group": "cpu"}),
]


def record(cluster: LocalCluster, scenario: str, notes: list[str]) -> None:
    import ray

    folder = FIXTURES / scenario
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    errors: dict[str, Any] = {}
    index: dict[str, Any] = {}
    for key, path in ENDPOINTS.items():
        status, body = http_json(cluster.dashboard_url, path)
        index[key] = {"path": path, "status": status}
        # The dashboard's own envelope says `"result": false` for failures it catches itself.
        refused = isinstance(body, dict) and body.get("result") is False
        if status == 200 and isinstance(body, dict | list) and not refused:
            (folder / f"{key}.json").write_text(json.dumps(body, indent=2) + "\n")
        elif status == 200 and isinstance(body, str):
            (folder / f"{key}.txt").write_text(body)
        else:
            errors[key] = {"path": path, "status": status, "body": body}
    (folder / "_errors.json").write_text(json.dumps(errors, indent=2) + "\n")
    meta = {
        "scenario": scenario,
        "ray_version": ray.__version__,
        "ray_commit": getattr(ray, "__commit__", None),
        "python": sys.version.split()[0],
        "recorded_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "autoscaler_v2_env": cluster.env.get("RAY_enable_autoscaler_v2"),
        "nodes": [
            {"ip": s.ip, "num_cpus": s.num_cpus, "num_gpus": s.num_gpus, "resources": s.resources}
            for s in CLUSTER
        ],
        "endpoints": index,
        "notes": notes,
    }
    (folder / "_recording.json").write_text(json.dumps(meta, indent=2) + "\n")
    log(f"wrote {folder.relative_to(REPO)} ({len(ENDPOINTS) - len(errors)} ok, {len(errors)} errors)")


@contextlib.contextmanager
def driver(cluster: LocalCluster) -> Iterator[Any]:
    import ray

    ray.init(
        address=cluster.gcs_address,
        _node_ip_address=cluster.head_ip,
        namespace=NAMESPACE,
        log_to_driver=False,
    )
    try:
        yield ray
    finally:
        ray.shutdown()


def submit_job(cluster: LocalCluster, submission_id: str, entrypoint: str, **extra: Any) -> None:
    status, body = http_json(
        cluster.dashboard_url,
        "/api/jobs/",
        {"entrypoint": entrypoint, "submission_id": submission_id, **extra},
    )
    log(f"submitted job {submission_id}: {status} {body}")


def job_status(cluster: LocalCluster, submission_id: str) -> str | None:
    status, body = http_json(cluster.dashboard_url, f"/api/jobs/{submission_id}")
    return body.get("status") if status == 200 and isinstance(body, dict) else None


def pending_task_names(cluster: LocalCluster) -> set[str]:
    _, body = http_json(cluster.dashboard_url, ENDPOINTS["pending_tasks"])
    return {
        str(row.get("name")) for row in dig_list(body, "data", "result", "result") if isinstance(row, dict)
    }


def autoscaler_sees(cluster: LocalCluster, *needles: str) -> bool:
    """The autoscaler reports every few seconds; wait until its text mentions what we created."""
    _, body = http_json(cluster.dashboard_url, ENDPOINTS["cluster_status_formatted"])
    text = json.dumps(body)
    return all(needle in text for needle in needles)


def serve_status(cluster: LocalCluster, app: str) -> str | None:
    _, body = http_json(cluster.dashboard_url, ENDPOINTS["serve_applications"])
    apps = body.get("applications") if isinstance(body, dict) else None
    return apps.get(app, {}).get("status") if isinstance(apps, dict) else None


def import_serve() -> Any:
    """Ray Serve, or None when this venv has only ``ray[default]`` (see the fixtures README)."""
    try:
        from ray import serve
    except ImportError as err:
        log(f"Ray Serve is not importable, the Serve part is skipped: {err}")
        return None
    return serve


# The workload. Plain classes here, made remote inside the scenario (Ray and Serve need the driver
# connected first); their names are what the recorded actor and deployment records show.


class GpuHolder:
    def ready(self) -> str:
        import ray

        return str(ray.get_runtime_context().get_node_id())


class Counter:
    def ping(self) -> int:
        return 1


class BrokenModel:
    def __init__(self) -> None:
        raise RuntimeError("model weights not found at /models/llama-3-8b")


class Echo:
    def __call__(self) -> str:
        return "ok"


def train_step() -> int:
    return 1


def scenario_broken(cluster: LocalCluster, scenario: str) -> None:
    with driver(cluster) as ray:
        from ray.util.placement_group import placement_group

        holder_cls: Any = ray.remote(GpuHolder)
        task: Any = ray.remote(train_step)
        a100 = {"num_gpus": 1, "resources": {"accelerator_type:A100": 1}}
        # (a) a detached actor that holds the only A100 node's GPU and its A100 marker.
        holder = holder_cls.options(name="gpu-holder", lifetime="detached", **a100).remote()
        ray.get(holder.ready.remote(), timeout=120)
        # (b) more GPUs than any node has; (c) a GPU type no node registers.
        task.options(name="train-step-gpu4", num_gpus=4).remote()
        task.options(name="train-step-h100", num_gpus=1, resources={"accelerator_type:H100": 1}).remote()
        # (d) fits the A100 node's totals but waits for (a). Keep the handle: an actor whose
        # handles are all gone is cleaned up as OUT_OF_SCOPE before it ever starts.
        waiter = holder_cls.options(name="gpu-waiter", **a100).remote()
        # (e) STRICT_PACK needs both GPUs on one node; every node has one.
        pg = placement_group(
            [{"CPU": 1, "GPU": 1}, {"CPU": 1, "GPU": 1}], strategy="STRICT_PACK", name="train-pg"
        )

        # A submitted job whose driver asks for more GPUs than any node: it stays PENDING.
        submit_job(cluster, "raydiag-gpu-job", "python -c 'print(1)'", entrypoint_num_gpus=2)
        submit_job(cluster, "raydiag-failing-job", "python -c 'import sys; sys.exit(3)'")

        # Serve: one app whose replica raises in its constructor, one whose replica asks for 2 GPUs.
        serve = import_serve()
        if serve is not None:
            serve.start(proxy_location="Disabled")
            broken = serve.deployment(BrokenModel, ray_actor_options={"num_cpus": 0.1})
            two_gpu = serve.deployment(
                Echo, name="TwoGpu", ray_actor_options={"num_cpus": 0.1, "num_gpus": 2}
            )
            serve._run(broken.bind(), name="broken-app", route_prefix="/broken", _blocking=False)
            serve._run(two_gpu.bind(), name="gpu-app", route_prefix="/gpu", _blocking=False)

        wait_for(lambda: job_status(cluster, "raydiag-failing-job") == "FAILED", 120, "failing job")
        wait_for(
            lambda: {"train-step-gpu4", "train-step-h100"} <= pending_task_names(cluster), 60, "pending tasks"
        )
        wait_for(
            lambda: autoscaler_sees(cluster, "'GPU': 4.0", "H100", "STRICT_PACK"), 90, "autoscaler demands"
        )
        if serve is not None:
            wait_for(lambda: serve_status(cluster, "broken-app") == "DEPLOY_FAILED", 180, "broken-app failed")
            # Serve warns about replicas that wait more than 30 s to be scheduled; wait for that message.
            wait_for(
                lambda: (
                    "taken more than"
                    in json.dumps(http_json(cluster.dashboard_url, ENDPOINTS["serve_applications"]))
                ),
                90,
                "serve slow-start warning",
            )
        assert waiter is not None and pg is not None  # alive until recorded
        record(
            cluster,
            scenario,
            [
                "detached actor gpu-holder holds GPU 1 + accelerator_type:A100 1 on 127.0.0.3",
                "task train-step-gpu4 asks GPU 4 (no node has more than 1)",
                "task train-step-h100 asks accelerator_type:H100 (registered nowhere)",
                "actor gpu-waiter asks the A100 and waits for gpu-holder",
                "placement group train-pg: STRICT_PACK 2 x {CPU 1, GPU 1}, no node has 2 GPUs",
                "job raydiag-gpu-job asks entrypoint_num_gpus=2 and stays PENDING",
                "job raydiag-failing-job exits 3",
                "serve app broken-app raises in its constructor (DEPLOY_FAILED)",
                "serve app gpu-app asks GPU 2 per replica and never schedules (DEPLOYING)",
            ],
        )


def scenario_healthy(cluster: LocalCluster, scenario: str) -> None:
    with driver(cluster) as ray:
        counter_cls: Any = ray.remote(num_cpus=0.5)(Counter)
        counter = counter_cls.options(name="counter").remote()
        ray.get(counter.ping.remote(), timeout=120)
        submit_job(cluster, "raydiag-ok-job", "python -c 'print(42)'")
        serve = import_serve()
        if serve is not None:
            serve.start(proxy_location="Disabled")
            echo = serve.deployment(Echo, ray_actor_options={"num_cpus": 0.1})
            serve._run(echo.bind(), name="echo-app", route_prefix="/echo", _blocking=False)
            wait_for(lambda: serve_status(cluster, "echo-app") == "RUNNING", 120, "echo-app running")
        wait_for(lambda: job_status(cluster, "raydiag-ok-job") == "SUCCEEDED", 120, "ok job")
        # Let the autoscaler publish a report that shows the actor's usage and no demands.
        time.sleep(12)
        record(
            cluster,
            scenario,
            [
                "actor counter (CPU 0.5) runs; nothing pending",
                "job raydiag-ok-job succeeded",
                "serve app echo-app RUNNING",
            ],
        )


SCENARIOS: dict[str, tuple[Callable[[LocalCluster, str], None], dict[str, str]]] = {
    "broken": (scenario_broken, {}),
    "healthy": (scenario_healthy, {}),
    # KubeRay's autoscaler v2 and `ray up` (2.4x+) run autoscaler v2, which stops publishing the
    # structured status that /api/cluster_status returns; record what the dashboard shows then.
    "broken-autoscaler-v2": (scenario_broken, {"RAY_enable_autoscaler_v2": "1"}),
}


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--scenario", choices=sorted(SCENARIOS), action="append")
    args = parser.parse_args()
    names = args.scenario or list(SCENARIOS)
    if len(names) > 1:
        # One process per scenario: Ray and Serve keep per-process state between ray.init calls.
        return max(subprocess.call([sys.executable, __file__, "--scenario", name]) for name in names)
    for name in names:
        build, env = SCENARIOS[name]
        cluster = LocalCluster(CLUSTER, extra_env=env, temp_prefix="rdrec-")
        os.environ.update(env)
        log(f"scenario {name}: temp dir {cluster.temp_dir}")
        failed = True
        try:
            cluster.start()
            build(cluster, name)
            failed = False
        finally:
            log("stopping the processes this script started")
            cluster.stop(keep_logs=failed, grace_s=60)
            for key in env:
                os.environ.pop(key, None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
