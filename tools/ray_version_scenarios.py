"""The broken (and one healthy) Ray situations that ``record_ray_versions.py`` records, as drivers.

    <venv of one Ray release>/bin/python tools/ray_version_scenarios.py SCENARIO GCS_ADDRESS NODE_IP

Run by the recorded release's own interpreter, so it imports nothing from raydiag and uses only
APIs that every Ray from 2.5 to 2.60 has (``ray.remote(...).options``, ``placement_group``,
``serve.deployment`` + ``bind`` + ``serve.run``; where an argument changed, the one this release
takes is picked from the signature). The driver builds its scenario, prints ``READY_LINE`` and
keeps every handle alive until its stdin closes: a waiting actor whose handles are all gone is
cleaned up before the recording could see it pending. Its stdout and stderr are recorded as the
driver's output (``log_to_driver`` stays on, so the autoscaler's "cannot be scheduled" warnings
reach it as they reach a user's driver).
"""

from __future__ import annotations

import inspect
import socket
import subprocess
import sys
from collections.abc import Callable
from typing import Any

READY_LINE = "RAYDIAG-SCENARIO-READY"
NAMESPACE = "raydiag-versions"
A100 = {"num_gpus": 1, "resources": {"accelerator_type:A100": 1}}

# What each scenario builds, as _recording.json and the fixtures README say it.
DESCRIPTIONS: dict[str, list[str]] = {
    "held-a100": [
        "actor gpu-holder holds GPU 1 + accelerator_type:A100 1 on 127.0.0.22 (the only A100)",
        "actor gpu-waiter asks the same and stays PENDING_CREATION",
    ],
    "too-many-gpus": ["task train-step-gpu4 asks GPU 4 (no node has more than 1)"],
    "gpu-type-missing": ["task train-step-h100 asks GPU 1 + accelerator_type:H100 1 (registered nowhere)"],
    "strict-pack-pg": ["placement group train-pg: STRICT_PACK 2 x {CPU 1, GPU 1}; no node has 2 GPUs"],
    "detached-leftover": [
        "a first driver (job) starts detached actor gpu-holder on the A100 and exits",
        "a second driver's task train-step-a100 asks GPU 1 + accelerator_type:A100 1 and waits",
    ],
    "serve-constructor-fails": [
        "Serve app broken-app (deployment BrokenModel) raises RuntimeError in __init__ (DEPLOY_FAILED)",
        "Serve started with one HTTP proxy, on the head (127.0.0.21, a free port)",
    ],
    "healthy": ["actor counter (CPU 0.5) runs and answered; task train-step ran; nothing pending"],
}


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

    def __call__(self) -> str:
        return "never"


def train_step() -> int:
    return 1


def _accepted(function: Callable[..., Any], **wanted: Any) -> dict[str, Any]:
    """The keyword arguments of ``wanted`` that this release's ``function`` takes."""
    try:
        params = inspect.signature(function).parameters
    except (TypeError, ValueError):
        return wanted
    return {key: value for key, value in wanted.items() if key in params}


def held_a100(ray: Any, node_ip: str) -> list[Any]:
    holder_cls = ray.remote(GpuHolder)
    holder = holder_cls.options(name="gpu-holder", **A100).remote()
    ray.get(holder.ready.remote(), timeout=120)
    waiter = holder_cls.options(name="gpu-waiter", **A100).remote()
    return [holder, waiter, waiter.ready.remote()]


def too_many_gpus(ray: Any, node_ip: str) -> list[Any]:
    return [ray.remote(train_step).options(name="train-step-gpu4", num_gpus=4).remote()]


def gpu_type_missing(ray: Any, node_ip: str) -> list[Any]:
    task = ray.remote(train_step).options(
        name="train-step-h100", num_gpus=1, resources={"accelerator_type:H100": 1}
    )
    return [task.remote()]


def strict_pack_pg(ray: Any, node_ip: str) -> list[Any]:
    from ray.util.placement_group import placement_group

    return [placement_group([{"CPU": 1, "GPU": 1}] * 2, strategy="STRICT_PACK", name="train-pg")]


def detached_leftover_first_job(ray: Any, node_ip: str) -> list[Any]:
    holder = ray.remote(GpuHolder).options(name="gpu-holder", lifetime="detached", **A100).remote()
    ray.get(holder.ready.remote(), timeout=120)
    return []


def detached_leftover(ray: Any, node_ip: str) -> list[Any]:
    task = ray.remote(train_step).options(name="train-step-a100", **A100)
    return [task.remote()]


def _free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def serve_constructor_fails(ray: Any, node_ip: str) -> list[Any]:
    from ray import serve

    # One HTTP proxy, on the head's loopback address and a free port (8000 may be taken here).
    # Not "Disabled": Ray 2.9's controller then fails to describe itself (`proxy_location value is
    # not a valid enumeration member`) and every Serve status answer is that error.
    http = {"host": node_ip, "port": _free_port(node_ip)}
    if "proxy_location" in _accepted(serve.start, proxy_location=None):
        serve.start(proxy_location="HeadOnly", http_options=http)
    else:  # before ProxyLocation existed (2.5). Detached, as `serve deploy` and KubeRay start it:
        # a driver-scoped Serve instance is invisible to the agent's REST API (and `serve status`).
        serve.start(detached=True, http_options={**http, "location": "HeadOnly"})
    deployment: Any = serve.deployment(BrokenModel, ray_actor_options={"num_cpus": 0.1})
    app = deployment.bind()
    try:
        # Returns, or raises, once the application is RUNNING or DEPLOY_FAILED.
        serve.run(app, **_accepted(serve.run, name="broken-app", route_prefix="/broken"))
    except Exception as error:  # what a user's driver would print is the point
        print(f"serve.run raised {type(error).__name__}: {error}", file=sys.stderr, flush=True)
    return []


def healthy(ray: Any, node_ip: str) -> list[Any]:
    counter = ray.remote(num_cpus=0.5)(Counter).options(name="counter").remote()
    ray.get(counter.ping.remote(), timeout=120)
    ray.get(ray.remote(train_step).options(name="train-step").remote(), timeout=120)
    return [counter]


BUILDERS: dict[str, Callable[[Any, str], list[Any]]] = {
    "held-a100": held_a100,
    "too-many-gpus": too_many_gpus,
    "gpu-type-missing": gpu_type_missing,
    "strict-pack-pg": strict_pack_pg,
    "detached-leftover": detached_leftover,
    "serve-constructor-fails": serve_constructor_fails,
    "healthy": healthy,
    # Not a scenario of its own: the finished job of detached-leftover, run as its own process.
    "detached-leftover-first-job": detached_leftover_first_job,
}


def main(argv: list[str]) -> int:
    name, address, node_ip = argv
    if name == "detached-leftover":
        # The leftover must come from a job that has finished: its own driver process.
        first = [sys.executable, __file__, "detached-leftover-first-job", address, node_ip]
        subprocess.run(first, check=True, stdin=subprocess.DEVNULL)
    import ray

    ray.init(address=address, _node_ip_address=node_ip, namespace=NAMESPACE)
    handles = BUILDERS[name](ray, node_ip)
    print(f"{READY_LINE} {name}", flush=True)
    if name != "detached-leftover-first-job":
        sys.stdin.read()  # hold every handle until the recorder has read the cluster
    del handles
    ray.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
