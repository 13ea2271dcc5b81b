"""Record pastes that carry both layers: real ``kubectl`` beside real Ray, for the join and GPU rules.

The two-layer judgement (CAUSES.md's triage: Pods first, then whether every running worker Pod is
a Ray node, then what each Ray node registered) needs pastes where the Kubernetes layer and the Ray
layer describe one cluster. Both halves here are printed by the tools themselves:

* the Ray half by the venv's ``ray status``, ``ray status -v`` and ``ray list nodes`` against a
  real local cluster (``bot.demo.local_ray``: one ``ray start`` per loopback address, stopped by
  PID, never ``ray stop``);
* the Kubernetes half by the installed ``kubectl`` against the loopback API (``tests.support``),
  serving the test cluster with its Pods given the Ray nodes' addresses, so that a Pod IP and a
  Ray node IP name the same machine, as they do on a real cluster.

    .venv/bin/python tools/record_two_layer_cases.py
    # writes tests/cases/<rule>/(fires|quiet)/two-layer-*.txt

Each run rewrites the same files; ages, timestamps and node ids move with every run.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bot.demo.local_ray import RAY, LocalCluster, NodeSpec, running_cluster, wait_for  # noqa: E402
from tests.support.cluster import CLUSTER, GPU_WORKERS, HEAD, NS, Bundle, healthy  # noqa: E402
from tests.support.kube_api import ObjectStore, serve  # noqa: E402
from tools.record_kubectl_corpus import kubectl  # noqa: E402

CASES = ROOT / "tests" / "cases"
HEAD_IP, JOINED_IP, MISSING_IP = "127.0.0.2", "127.0.0.3", "127.0.0.4"
GPUS_PER_WORKER = 4


def _pods_at_ray_addresses() -> Bundle:
    """The test cluster's head and two GPU workers, at the addresses the local Ray nodes use."""
    bundle = healthy()
    keep = {HEAD: HEAD_IP, GPU_WORKERS[0]: JOINED_IP, GPU_WORKERS[1]: MISSING_IP}
    for pod in list(bundle.items("pods")):
        name = pod["metadata"]["name"]
        if name.startswith(CLUSTER) and name not in keep:
            bundle.remove("pods", name)
        elif name in keep:
            pod["status"]["podIP"] = keep[name]
            pod["status"]["podIPs"] = [{"ip": keep[name]}]
    return bundle


def _without_second_worker() -> Bundle:
    bundle = _pods_at_ray_addresses()
    bundle.remove("pods", GPU_WORKERS[1])
    return bundle


@dataclass(frozen=True)
class Case:
    rule: str
    outcome: str
    stem: str
    scenario: Callable[[], Bundle]
    kubectl: tuple[tuple[str, ...], ...]
    ray: tuple[tuple[str, ...], ...]


def _ray(cluster: LocalCluster, args: tuple[str, ...]) -> str:
    env = {**cluster.env, "RAY_ADDRESS": cluster.gcs_address}
    command = [str(RAY) if RAY.exists() else "ray", *args]
    if args[0] == "status":
        command.append(f"--address={cluster.gcs_address}")
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120, check=False)
    return done.stdout


def _status_counts_every_node(cluster: LocalCluster) -> bool:
    """``ray status`` reports from the autoscaler's view, which lags a few seconds behind the GCS."""
    text = _ray(cluster, ("status",))
    section = text.split("Pending:", 1)[0]
    return sum(1 for line in section.splitlines() if line.startswith(" 1 node_")) == len(cluster.nodes)


def _transcript(cluster: LocalCluster, case: Case, home: Path) -> str:
    parts: list[str] = []
    with serve(ObjectStore.from_bundle(case.scenario())) as api:
        config = api.kubeconfig(home / "kubeconfig")
        for args in case.kubectl:
            parts.append(f"$ kubectl {' '.join(args)}\n{kubectl(config, home, args)}")
    for args in case.ray:
        shown = f"kubectl exec {HEAD} -n {NS} -- ray {' '.join(args)}"
        parts.append(f"$ {shown}\n{_ray(cluster, args)}")
    return "".join(parts)


GET_PODS = ("get", "pods", "-n", NS, "-o", "wide")
GET_PODS_PLAIN = ("get", "pods", "-n", NS)
DESCRIBE_WORKER = ("describe", "pod", GPU_WORKERS[0], "-n", NS)

# The head and one GPU worker run Ray; the second GPU worker's Pod runs, its raylet never joined.
JOINED_WITH_GPUS = (
    NodeSpec(HEAD_IP, num_cpus=1, labels={"node-group": "headgroup"}),
    NodeSpec(JOINED_IP, num_cpus=2, num_gpus=GPUS_PER_WORKER, labels={"node-group": "gpu-a100"}),
)
NOT_JOINED = (
    Case(
        "ray-worker-not-joined",
        "fires",
        "two-layer-get-pods-wide-list-nodes",
        _pods_at_ray_addresses,
        (GET_PODS,),
        (("list", "nodes"),),
    ),
    Case(
        "ray-worker-not-joined",
        "quiet",
        "two-layer-every-pod-a-node",
        _without_second_worker,
        (GET_PODS,),
        (("list", "nodes"),),
    ),
    Case(
        "ray-workers-missing-from-ray",
        "fires",
        "two-layer-get-pods-ray-status",
        _pods_at_ray_addresses,
        (GET_PODS_PLAIN,),
        (("status",),),
    ),
    Case(
        "ray-workers-missing-from-ray",
        "fires",
        "two-layer-get-pods-wide-ray-status-v",
        _pods_at_ray_addresses,
        (GET_PODS,),
        (("status", "-v"),),
    ),
    Case(
        "ray-workers-missing-from-ray",
        "quiet",
        "two-layer-every-pod-counted",
        _without_second_worker,
        (GET_PODS_PLAIN,),
        (("status",),),
    ),
    Case(
        "ray-gpu-not-registered",
        "quiet",
        "two-layer-gpus-registered",
        _without_second_worker,
        (DESCRIBE_WORKER,),
        (("list", "nodes"),),
    ),
    Case(
        "ray-gpus-missing-from-ray-total",
        "quiet",
        "two-layer-gpus-counted",
        _without_second_worker,
        (DESCRIBE_WORKER,),
        (("status",),),
    ),
)
# The GPU worker joined, but its raylet started with ``--num-gpus=0``: Ray registers no GPU.
JOINED_WITHOUT_GPUS = (
    NodeSpec(HEAD_IP, num_cpus=1, labels={"node-group": "headgroup"}),
    NodeSpec(JOINED_IP, num_cpus=2, num_gpus=0, labels={"node-group": "gpu-a100"}),
)
NO_GPUS = (
    Case(
        "ray-gpu-not-registered",
        "fires",
        "two-layer-describe-worker-list-nodes",
        _without_second_worker,
        (DESCRIBE_WORKER,),
        (("list", "nodes"),),
    ),
    Case(
        "ray-gpus-missing-from-ray-total",
        "fires",
        "two-layer-describe-worker-ray-status",
        _without_second_worker,
        (DESCRIBE_WORKER,),
        (("status",),),
    ),
    Case(
        "ray-gpus-missing-from-ray-total",
        "fires",
        "two-layer-get-pod-yaml-ray-status",
        _without_second_worker,
        (("get", "pod", GPU_WORKERS[0], "-n", NS, "-o", "yaml"),),
        (("status",),),
    ),
)


def _head_crashing(workers_wait: bool) -> Bundle:
    """The head is OOM-killed at every start; its workers wait in ``wait-gcs-ready`` (or run)."""
    bundle = healthy()
    head = bundle.find("pods", HEAD)["status"]
    head["containerStatuses"][0].update(
        ready=False,
        restartCount=6,
        state={
            "waiting": {"reason": "CrashLoopBackOff", "message": "back-off 5m0s restarting failed container"}
        },
        lastState={"terminated": {"exitCode": 137, "reason": "OOMKilled"}},
    )
    for condition in head["conditions"]:
        if condition["type"] in ("Ready", "ContainersReady"):
            condition.update(status="False", reason="ContainersNotReady")
    if not workers_wait:
        return bundle
    for pod in bundle.items("pods"):
        if pod["metadata"]["labels"].get("ray.io/node-type") != "worker":
            continue
        pod["spec"]["initContainers"] = [{"name": "wait-gcs-ready", "image": "rayproject/ray:2.9.0-py310"}]
        status = pod["status"]
        status["phase"] = "Pending"
        status.pop("podIP", None)
        status["initContainerStatuses"] = [
            {"name": "wait-gcs-ready", "ready": False, "restartCount": 0, "state": {"running": {}}}
        ]
        for container in status["containerStatuses"]:
            container.update(ready=False, state={"waiting": {"reason": "PodInitializing"}})
        for condition in status["conditions"]:
            if condition["type"] in ("Ready", "ContainersReady", "Initialized"):
                condition.update(status="False", reason="ContainersNotInitialized")
    return bundle


def _worker_restarting(job: str | None, restarts: int = 1) -> Bundle:
    """A GPU worker runs but stays unready and is restarted by its liveness probe; maybe a RayJob waits."""
    bundle = healthy()
    status = bundle.find("pods", GPU_WORKERS[1])["status"]
    status["containerStatuses"][0].update(
        ready=False,
        restartCount=restarts,
        lastState={"terminated": {"exitCode": 137, "reason": "Error"}} if restarts else {},
    )
    for condition in status["conditions"]:
        if condition["type"] in ("Ready", "ContainersReady"):
            condition.update(status="False", reason="ContainersNotReady")
    if job is not None:
        bundle.items("rayjobs").append(
            {
                "apiVersion": "ray.io/v1",
                "kind": "RayJob",
                "metadata": {"name": "nightly-eval", "namespace": NS},
                "spec": {"entrypoint": "python eval.py"},
                "status": {"jobStatus": "", "jobDeploymentStatus": job, "rayClusterName": CLUSTER},
            }
        )
    return bundle


KUBECTL_ONLY: tuple[tuple[str, str, str, Callable[[], Bundle], tuple[tuple[str, ...], ...]], ...] = (
    (
        "ray-head-not-ready",
        "fires",
        "head-crashloop-workers-wait-gcs",
        lambda: _head_crashing(True),
        (GET_PODS_PLAIN,),
    ),
    (
        "ray-head-not-ready",
        "quiet",
        "head-crashloop-workers-running",
        lambda: _head_crashing(False),
        (GET_PODS_PLAIN,),
    ),
    (
        "ray-worker-running-unready",
        "fires",
        "worker-restarting-rayjob-initializing",
        lambda: _worker_restarting("Initializing"),
        (GET_PODS_PLAIN, ("get", "rayjob", "-n", NS)),
    ),
    (
        "ray-worker-running-unready",
        "fires",
        "worker-restarting-get-pods-wide",
        lambda: _worker_restarting(None),
        (GET_PODS,),
    ),
    (
        "ray-worker-running-unready",
        "quiet",
        "worker-starting-rayjob-running",
        lambda: _worker_restarting("Running", restarts=0),
        (GET_PODS_PLAIN, ("get", "rayjob", "-n", NS)),
    ),
)


def _kubectl_only(home: Path) -> int:
    for rule, outcome, stem, scenario, commands in KUBECTL_ONLY:
        parts = []
        with serve(ObjectStore.from_bundle(scenario())) as api:
            config = api.kubeconfig(home / "kubeconfig")
            for args in commands:
                parts.append(f"$ kubectl {' '.join(args)}\n{kubectl(config, home, args)}")
        folder = CASES / rule / outcome
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{stem}.txt").write_text("".join(parts), encoding="utf-8")
    return len(KUBECTL_ONLY)


def main() -> int:
    written = 0
    with tempfile.TemporaryDirectory(prefix="raydiag-two-layer-") as tmp:
        home = Path(tmp)
        written += _kubectl_only(home)
        if "--kubectl-only" in sys.argv:
            print(f"wrote {written} kubectl cases under {CASES.relative_to(ROOT)}")
            return 0
        for nodes, cases in ((JOINED_WITH_GPUS, NOT_JOINED), (JOINED_WITHOUT_GPUS, NO_GPUS)):
            with running_cluster(nodes, temp_prefix="raydiag-2l-") as cluster:
                wait_for(lambda: _status_counts_every_node(cluster), 90, "ray status counts every node")
                for case in cases:
                    folder = CASES / case.rule / case.outcome
                    folder.mkdir(parents=True, exist_ok=True)
                    (folder / f"{case.stem}.txt").write_text(
                        _transcript(cluster, case, home), encoding="utf-8"
                    )
                    written += 1
    print(f"wrote {written} two-layer cases under {CASES.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
