"""The Kubernetes half of the demo: a recorded-looking KubeRay cluster, committed as JSON.

The demo's Ray half is real (raylets on 127.0.0.2-4); there is no Kubernetes on a laptop, so the
Kubernetes half is a bundle in the shape ``bot.read.snapshot_file.snapshot_from_bundle`` reads: the
lists exactly as ``kubectl get -o json`` prints them, for RayCluster ``demo-gpu`` in namespace
``ml``. Pod IPs are the raylets' loopback addresses, so the two halves line up by IP the way a
real cluster's do. What is wrong on the Kubernetes side:

- ``gpu-a100-2`` is an A100 node (GKE's accelerator label, the GPU taint) whose allocatable has no
  ``nvidia.com/gpu``: no NVIDIA device plugin runs there. The second A100 worker Pod is Pending,
  and the scheduler's only words are ``Insufficient nvidia.com/gpu`` (cause 3);
- the CPU worker at 127.0.0.9 is Running and Ready but its raylet never reached the head's GCS,
  and its log says so (cause 8).

``kuberay_state.json`` next to this file is what the demo loads; it is committed (and shipped as
package data) so that the demo needs nothing but this package. This module holds what the demo and
its tests name in it; ``tools/build_demo_state.py`` builds the objects from the test suite's
Kubernetes builders and rewrites the file, and a test checks the two agree.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

STATE_FILE = Path(__file__).resolve().with_name("kuberay_state.json")

CLUSTER = "demo-gpu"
NAMESPACE = "ml"
RAY_VERSION = "2.60.0"

CREATED = "2026-11-30T07:58:12Z"
STARTED = "2026-11-30T09:12:41Z"
SCALED = "2026-11-30T09:31:05Z"
RECORDED = "2026-11-30T09:52:30Z"

HEAD_POD = f"{CLUSTER}-head-7ktwq"
A100_POD = f"{CLUSTER}-gpu-a100-worker-9xv2d"
A100_PENDING_POD = f"{CLUSTER}-gpu-a100-worker-q4n7s"
T4_POD = f"{CLUSTER}-gpu-t4-worker-m2p8c"
LOST_POD = f"{CLUSTER}-cpu-workers-worker-h5r6j"
HEAD_SERVICE = f"{CLUSTER}-head-svc"

HEAD_IP = "127.0.0.2"
A100_IP = "127.0.0.3"
T4_IP = "127.0.0.4"
LOST_IP = "127.0.0.9"

# What kube-scheduler (1.31) prints for the second A100 worker on these five nodes: the control
# plane's taint, two nodes of the wrong kind, and two A100 nodes without a free nvidia.com/gpu —
# gpu-a100-1's one GPU is taken by the first A100 worker, gpu-a100-2 advertises none. Nobody has a
# lower priority to evict, hence the preemption half.
SCHEDULER_MESSAGE = (
    "0/5 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, "
    "2 Insufficient nvidia.com/gpu, 2 node(s) didn't match Pod's node affinity/selector. "
    "preemption: 0/5 nodes are available: 2 No preemption victims found for incoming pod, "
    "3 Preemption is not helpful for scheduling."
)

_GCS_ERROR = (
    "Unable to connect to GCS (ray head) at {HEAD}:6379. Check that (1) Ray with matching version started "
    "successfully at the specified address, (2) this node can reach the specified address, and (3) there "
    "is no firewall setting preventing access."
).replace("{HEAD}", HEAD_IP)
LOST_POD_LOG = [
    "2026-11-30 09:12:54,380\tINFO scripts.py:1234 -- Local node IP: 127.0.0.9",
    f"2026-11-30 09:13:01,412\tWARNING utils.py:1209 -- {_GCS_ERROR}",
    f"2026-11-30 09:13:08,447\tWARNING utils.py:1209 -- {_GCS_ERROR}",
    f"2026-11-30 09:13:15,481\tWARNING utils.py:1209 -- {_GCS_ERROR}",
    "[2026-11-30 09:13:20,503 W 41 41] rpc_client.h:151: Failed to connect to GCS at address "
    f"{HEAD_IP}:6379 within 5 seconds.",
]


def load_state() -> dict[str, Any]:
    """The bundle as ``bot.read.snapshot_file.snapshot_from_bundle`` reads it."""
    loaded: dict[str, Any] = json.loads(STATE_FILE.read_text(encoding="utf-8"))
    return loaded
