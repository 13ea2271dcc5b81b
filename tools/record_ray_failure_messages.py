"""Record what Ray itself prints when a node is lost, a runtime env fails or an actor's __init__ raises.

    .venv/bin/python tools/record_ray_failure_messages.py OUT_DIR [--scenario NAME ...]

Each scenario runs in a fresh ``ray.cluster_utils.Cluster`` (its own processes, torn down by the
cluster object, never ``ray stop``) inside a child Python process whose stdout and stderr, the
driver's own output, are written to ``OUT_DIR/<scenario>.txt`` exactly as Ray printed them. The
rule cases under ``tests/cases/*/fires/`` that say "recorded" were made this way.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

_COMMON = """
import os, signal, sys, time, traceback
import ray
from ray.cluster_utils import Cluster
"""

SCENARIOS: dict[str, str] = {
    # An actor whose constructor imports a module that the image does not have.
    "actor-init-import-error": _COMMON
    + """
cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
ray.init(address=cluster.address)

@ray.remote
class Model:
    def __init__(self):
        import raydiag_module_that_is_not_installed  # noqa: F401

    def ping(self):
        return "pong"

model = Model.remote()
try:
    ray.get(model.ping.remote(), timeout=60)
except Exception as error:
    print("".join(traceback.format_exception_only(error)), end="")
ray.shutdown()
cluster.shutdown()
""",
    # A runtime_env that asks pip for a wheel that does not exist.
    "runtime-env-pip-missing": _COMMON
    + """
cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
ray.init(address=cluster.address)

@ray.remote
def hello():
    return "hello"

try:
    missing = "/nonexistent/raydiag_missing-1.0-py3-none-any.whl"
    ray.get(hello.options(runtime_env={"pip": [missing]}).remote(), timeout=240)
except Exception as error:
    print("".join(traceback.format_exception_only(error)), end="")
ray.shutdown()
cluster.shutdown()
""",
    # A worker node whose raylet is killed: the GCS stops hearing from it and marks it dead.
    "worker-node-killed": _COMMON
    + """
cluster = Cluster(
    initialize_head=True,
    head_node_args={
        "num_cpus": 1,
        "_system_config": {"health_check_period_ms": 1000, "health_check_failure_threshold": 3},
    },
)
worker = cluster.add_node(num_cpus=1, resources={"worker": 1})
ray.init(address=cluster.address)
cluster.wait_for_nodes()

@ray.remote(resources={"worker": 1}, max_restarts=0)
class Sleeper:
    def pid(self):
        return os.getpid()

    def wait(self):
        time.sleep(600)

sleeper = Sleeper.remote()
ray.get(sleeper.pid.remote())
pending = sleeper.wait.remote()
raylet_pid = worker.all_processes["raylet"][0].process.pid
os.kill(raylet_pid, signal.SIGKILL)
try:
    ray.get(pending, timeout=120)
except Exception as error:
    print("".join(traceback.format_exception_only(error)), end="")
time.sleep(5)
ray.shutdown()
cluster.shutdown()
""",
    # A Ray Client pointed at a port where no client server listens.
    "ray-client-no-server": _COMMON
    + """
try:
    ray.init("ray://127.0.0.1:10999")
except Exception as error:
    print("".join(traceback.format_exception_only(error)), end="")
""",
    # The head's GCS dies under a connected driver (the reconnect timeout is shortened).
    "gcs-killed-under-driver": _COMMON
    + """
os.environ["RAY_gcs_rpc_server_reconnect_timeout_s"] = "5"
cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
ray.init(address=cluster.address)
gcs_pid = cluster.head_node.all_processes["gcs_server"][0].process.pid
os.kill(gcs_pid, signal.SIGKILL)
time.sleep(30)
cluster.shutdown()
""",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--scenario", action="append", choices=sorted(SCENARIOS))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for name in args.scenario or sorted(SCENARIOS):
        result = subprocess.run(
            [sys.executable, "-c", SCENARIOS[name]],
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        (args.out / f"{name}.txt").write_text(result.stdout + result.stderr)
        print(f"{name}: exit {result.returncode}, {len(result.stdout) + len(result.stderr)} chars")


if __name__ == "__main__":
    main()
