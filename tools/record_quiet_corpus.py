"""Record the corpus's quiet cases from real tools: what a healthy cluster's outputs look like.

A diagnosis tool earns trust as much by staying quiet on healthy output as by naming a cause on a
broken one. These cases are the outputs people paste "just in case": a ``describe`` of a Running
Pod or of a GPU node that advertises its GPUs, and a Python traceback that has nothing to do with
scheduling. They are made by the real programs, never typed:
``kubectl`` (the installed binary) against the project's loopback Kubernetes API serving the demo
cluster with its faults removed, and the Python interpreter raising an error of its own.

    .venv/bin/python tools/record_quiet_corpus.py            # writes tests/corpus/quiet/

Each run rewrites the same files; ages and timestamps that kubectl prints move with the clock.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bot.demo import kuberay_state as state  # noqa: E402
from tests.integration.test_live_ray import healthy_state, to_bundle  # noqa: E402
from tests.support.kube_api import ObjectStore, serve  # noqa: E402
from tools.record_kubectl_corpus import kubectl  # noqa: E402

OUT = ROOT / "tests" / "corpus" / "quiet"
COMMAND = "tools/record_quiet_corpus.py"

# file stem → (kubectl arguments, format tags, what it shows). ``get`` tables are the server-side
# Tables the loopback API renders as kube-apiserver does (tests.support.kube_printers).
KUBECTL: dict[str, tuple[list[str], list[str], str]] = {
    "kubectl-describe-running-head-pod": (
        ["describe", "pod", state.HEAD_POD, "-n", state.NAMESPACE],
        ["kubectl-describe-pod"],
        "kubectl describe pod of a Running, Ready Ray head Pod",
    ),
    "kubectl-describe-running-gpu-worker": (
        ["describe", "pod", state.A100_POD, "-n", state.NAMESPACE],
        ["kubectl-describe-pod"],
        "kubectl describe pod of a Running GPU worker that was scheduled and started",
    ),
    "kubectl-describe-gpu-node-advertising-gpus": (
        ["describe", "node", "gpu-a100-1"],
        ["kubectl-describe-node"],
        "kubectl describe node of a GPU node that advertises its nvidia.com/gpu",
    ),
    "kubectl-get-pods-wide-all-running": (
        ["get", "pods", "-n", state.NAMESPACE, "-o", "wide"],
        ["kubectl-get"],
        "kubectl get pods -o wide of a RayCluster whose head and workers all run and are Ready",
    ),
    "kubectl-get-pods-all-namespaces-running": (
        ["get", "pods", "--all-namespaces"],
        ["kubectl-get"],
        "kubectl get pods --all-namespaces with the device plugin and system Pods all Running",
    ),
    "kubectl-get-nodes-wide-ready": (
        ["get", "nodes", "-o", "wide"],
        ["kubectl-get"],
        "kubectl get nodes -o wide: every node Ready",
    ),
    "kubectl-get-raycluster-ready": (
        ["get", "raycluster", "-n", state.NAMESPACE],
        ["kubectl-get"],
        "kubectl get raycluster of a ready RayCluster (KubeRay 1.2+ columns)",
    ),
    "kubectl-get-raycluster-yaml-ready": (
        ["get", "raycluster", state.CLUSTER, "-n", state.NAMESPACE, "-o", "yaml"],
        ["k8s-object-yaml"],
        "kubectl get raycluster -o yaml of a ready RayCluster",
    ),
}

# An unrelated failure: the interpreter's own traceback of a user's data-loading bug.
TRACEBACK_SCRIPT = """
import json

def load_config(text):
    return json.loads(text)["model"]["layers"]

load_config('{"model": {"name": "resnet50"}}')
"""


def _settled(raw: dict[str, Any]) -> dict[str, Any]:
    """The healthy cluster as the operator reports it once settled: every worker Pod counted as ready."""
    workers = [
        p
        for p in raw["kubernetes"]["pods"]["items"]
        if p["metadata"].get("labels", {}).get("ray.io/node-type") == "worker"
        and p["metadata"].get("labels", {}).get("ray.io/cluster") == state.CLUSTER
    ]
    for cluster in raw["kubernetes"]["rayclusters"]["items"]:
        status = cluster.setdefault("status", {})
        for key in ("desiredWorkerReplicas", "availableWorkerReplicas", "readyWorkerReplicas"):
            status[key] = len(workers)
    return raw


def _traceback() -> str:
    result = subprocess.run(
        [sys.executable, "-c", TRACEBACK_SCRIPT], capture_output=True, text=True, timeout=60, check=False
    )
    return result.stderr


def _entry(stem: str, formats: list[str], what: str, source: str) -> dict[str, Any]:
    return {
        "file": f"{stem}.txt",
        "kind": "quiet",
        "causes": [],
        "also_ok": [],
        "layer": "healthy",
        "source": source,
        "title": what,
        "formats": formats,
        "format": what,
        "ray_version": "n/a",
        "what_happened": "Nothing is wrong: this is a healthy or irrelevant paste and must raise no warning.",
    }


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    entries: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="raydiag-quiet-") as tmp:
        home = Path(tmp)
        with serve(ObjectStore.from_bundle(to_bundle(_settled(healthy_state())))) as api:
            kubeconfig = api.kubeconfig(home / "kubeconfig")
            for stem, (args, formats, what) in KUBECTL.items():
                (OUT / f"{stem}.txt").write_text(kubectl(kubeconfig, home, args), encoding="utf-8")
                source = f"{COMMAND}: kubectl {' '.join(args)} (loopback API, healthy demo cluster)"
                entries.append(_entry(stem, formats, what, source))
    (OUT / "python-traceback-unrelated-keyerror.txt").write_text(_traceback(), encoding="utf-8")
    entries.append(
        _entry(
            "python-traceback-unrelated-keyerror",
            ["traceback"],
            "a Python traceback of a user's config bug (KeyError), unrelated to scheduling",
            f"{COMMAND}: python -c <a script that indexes a missing key>",
        )
    )
    (OUT / "expected.json").write_text(json.dumps(entries, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {len(entries)} quiet cases into {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
