"""The demo's deliberately broken Ray workload, run as a driver process of its own.

    python -m bot.demo.workload --address 127.0.0.2:6379 --node-ip 127.0.0.2

It connects to the running cluster and leaves it stuck in three ways a GPU team meets every week:

- ``gpu-holder``, a detached actor, holds the only A100 (``GPU: 1`` plus ``accelerator_type:A100``),
  and ``gpu-waiter`` asks for the same A100 and waits behind it (cause 5, resources held);
- ``train-step-gpu4`` asks for four GPUs on a cluster whose nodes have one each (cause 6);
- ``train-step-h100`` asks for an H100, a GPU type no node registers (cause 7).

Then it prints ``READY`` and blocks until it is killed; the demo owns and stops this process along
with the raylets. It runs in its own process because ``ray.init`` in the demo itself would tie the
diagnosis to the cluster's Ray version, which raydiag never does (it reads the dashboard only).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from typing import Any

READY = "READY"
NAMESPACE = "raydiag-demo"
HOLDER = "gpu-holder"
WAITER = "gpu-waiter"
GPU4_TASK = "train-step-gpu4"
H100_TASK = "train-step-h100"
A100 = {"num_gpus": 1, "resources": {"accelerator_type:A100": 1}}
H100 = {"num_gpus": 1, "resources": {"accelerator_type:H100": 1}}


class GpuHolder:
    """An actor that sits on its GPU, the way a forgotten notebook's model server does."""

    def ready(self) -> str:
        import ray  # noqa: PLC0415 - runs in the actor, in the cluster's own Ray

        return str(ray.get_runtime_context().get_node_id())


def train_step() -> int:
    return 1


def run(address: str, node_ip: str, ready_timeout_s: float = 120.0) -> list[Any]:
    """Create the broken workload; returns the handles that must stay alive for it to stay stuck."""
    import ray  # noqa: PLC0415 - lazy: Ray takes seconds to import; only the demo drives it

    ray.init(address=address, _node_ip_address=node_ip, namespace=NAMESPACE, log_to_driver=False)
    holder_cls: Any = ray.remote(GpuHolder)
    task: Any = ray.remote(train_step)
    holder = holder_cls.options(name=HOLDER, lifetime="detached", **A100).remote()
    # The holder must own the A100 before anyone else asks for it.
    ray.get(holder.ready.remote(), timeout=ready_timeout_s)
    gpu4 = task.options(name=GPU4_TASK, num_gpus=4).remote()
    h100 = task.options(name=H100_TASK, **H100).remote()
    # Keep the handle: an actor whose handles are all gone is cleaned up before it ever starts.
    waiter = holder_cls.options(name=WAITER, **A100).remote()
    return [holder, waiter, gpu4, h100]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Leave a local Ray cluster stuck, on purpose.")
    parser.add_argument("--address", required=True, help="GCS address, host:port")
    parser.add_argument("--node-ip", required=True, help="the IP of the raylet this driver attaches to")
    args = parser.parse_args(argv)
    handles = run(args.address, args.node_ip)
    print(READY, flush=True)
    # Killed together with the cluster: leave at once. ``ray.shutdown`` at exit would spend
    # seconds retrying a GCS that is going away; the detached actor dies with its raylet.
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    while handles:
        signal.pause()
    return 0


if __name__ == "__main__":
    sys.exit(main())
