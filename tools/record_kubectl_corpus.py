"""Record what real ``kubectl`` prints for the test scenarios: corpus cases made by the tool itself.

People paste ``kubectl get pods -o wide``, ``kubectl describe pod``, ``kubectl get events`` and
``kubectl get raycluster`` more than anything else. These cases are printed by the installed
``kubectl`` binary against the project's loopback Kubernetes API (``tests.support.kube_api``, which
answers ``kubectl get`` with kube-apiserver's server-side Tables and KubeRay's printer columns),
serving the clusters that the rule scenarios build (``tests.support.scenarios``): one broken
scenario per cause where the Kubernetes layer shows it, never typed by hand.

    .venv/bin/python tools/record_kubectl_corpus.py
    # writes tests/corpus/recorded-kubectl/ (corpus cases) and tests/paste/kubectl_recorded/ (the
    # parser tests' fixtures: the same tables with the printer columns of each KubeRay release)

A case of several commands is pasted as a terminal shows it: each command after a ``$`` prompt.
Each run rewrites the same files; ages that the server and kubectl print move with the clock.
The healthy counterparts are recorded by ``tools/record_quiet_corpus.py`` (tests/corpus/quiet/).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support import scenarios as sc  # noqa: E402
from tests.support.cluster import CLUSTER, GPU_WORKERS, HEAD, NS, Bundle, healthy  # noqa: E402
from tests.support.kube_api import ObjectStore, serve  # noqa: E402

OUT = ROOT / "tests" / "corpus" / "recorded-kubectl"
FIXTURES = ROOT / "tests" / "paste" / "kubectl_recorded"
COMMAND = "tools/record_kubectl_corpus.py"


@dataclass(frozen=True)
class Recording:
    stem: str
    scenario: Callable[[], Bundle]
    commands: tuple[tuple[str, ...], ...]
    causes: tuple[int, ...]
    formats: tuple[str, ...]
    what_happened: str
    kuberay: str = "1.2"


def _ns(*args: str) -> tuple[str, ...]:
    return (*args, "-n", NS)


RECORDINGS: tuple[Recording, ...] = (
    # cause 1 -------------------------------------------------------------------------------------
    Recording(
        "insufficient-gpu-describe-pending-worker",
        sc.third_gpu_worker_no_free_gpu,
        (_ns("describe", "pod", sc.PENDING),),
        (1,),
        ("kubectl-describe-pod", "scheduler-message"),
        "A third 4-GPU worker is Pending: both A100 nodes' GPUs are requested by the running workers.",
    ),
    Recording(
        "insufficient-gpu-get-pods-wide-and-events",
        sc.third_gpu_worker_no_free_gpu,
        (_ns("get", "pods", "-o", "wide"), _ns("get", "events")),
        (1,),
        ("kubectl-get", "kubectl-events", "scheduler-message"),
        "A third 4-GPU worker is Pending: both A100 nodes' GPUs are requested by the running workers.",
    ),
    Recording(
        "quota-refuses-worker-get-raycluster-and-events",
        sc.worker_creation_refused_by_quota,
        (_ns("get", "raycluster"), _ns("get", "events")),
        (1,),
        ("kubectl-get", "kubectl-events"),
        "The namespace's ResourceQuota on requests.nvidia.com/gpu is used up; KubeRay cannot create "
        "the worker.",
    ),
    # cause 2 -------------------------------------------------------------------------------------
    Recording(
        "untolerated-gpu-taint-describe-pending-worker",
        sc.gpu_worker_without_toleration,
        (_ns("describe", "pod", sc.PENDING),),
        (2,),
        ("kubectl-describe-pod", "scheduler-message"),
        "The GPU worker has no toleration for the GPU nodes' taint.",
    ),
    Recording(
        "selector-names-missing-nodepool-describe-pod",
        sc.worker_selects_a_nodepool_that_does_not_exist,
        (_ns("describe", "pod", sc.SPOT),),
        (2,),
        ("kubectl-describe-pod", "scheduler-message"),
        "The worker's nodeSelector names a node pool that no node belongs to.",
    ),
    Recording(
        "gpu-nodes-cordoned-get-nodes-and-events",
        sc.both_gpu_nodes_cordoned_for_upgrade,
        (("get", "nodes"), _ns("get", "events")),
        (2,),
        ("kubectl-get", "kubectl-events", "scheduler-message"),
        "Both A100 nodes are cordoned for an upgrade (SchedulingDisabled); the GPU worker cannot be placed.",
    ),
    Recording(
        "unbound-claim-describe-pending-worker",
        sc.worker_waits_for_unbound_checkpoint_claim,
        (_ns("describe", "pod", sc.PENDING),),
        (2,),
        ("kubectl-describe-pod", "scheduler-message"),
        "The worker mounts a PersistentVolumeClaim that is not bound.",
    ),
    # cause 3 -------------------------------------------------------------------------------------
    Recording(
        "gpu-node-without-allocatable-describe-node-and-pod",
        sc.device_plugin_gone_on_free_node,
        (("describe", "node", "gpu-a100-2"), _ns("describe", "pod", sc.PENDING)),
        (3,),
        ("kubectl-describe-node", "kubectl-describe-pod", "scheduler-message"),
        "gpu-a100-2 is labelled a GPU node but advertises no nvidia.com/gpu (its device plugin is gone); "
        "the scheduler reports Insufficient nvidia.com/gpu.",
    ),
    Recording(
        "device-plugin-crashloop-get-pods-all-namespaces",
        sc.device_plugin_crashing,
        (("get", "pods", "-A", "-o", "wide"),),
        (3,),
        ("kubectl-get",),
        "The NVIDIA device plugin Pod on gpu-a100-1 is in CrashLoopBackOff, so the node's GPUs are "
        "not advertised.",
    ),
    Recording(
        "mig-resource-name-describe-pending-worker",
        sc.worker_asks_for_mig_slice_on_whole_gpu_nodes,
        (_ns("describe", "pod", sc.PENDING),),
        (3,),
        ("kubectl-describe-pod", "scheduler-message"),
        "The worker asks for a MIG resource name that no node offers (the nodes expose whole GPUs).",
    ),
    # cause 8 -------------------------------------------------------------------------------------
    Recording(
        "head-readiness-probe-failing-get-pods-and-describe-head",
        sc.head_readiness_probe_failing,
        (_ns("get", "pods", "-o", "wide"), _ns("describe", "pod", HEAD)),
        (8,),
        ("kubectl-get", "kubectl-describe-pod"),
        "The Ray head Pod runs but its readiness probe fails, so workers cannot reach the GCS.",
    ),
    # cause 9 -------------------------------------------------------------------------------------
    Recording(
        "autoscaler-max-node-group-size-get-events",
        sc.autoscaler_group_at_max_size,
        (_ns("get", "events"),),
        (9,),
        ("kubectl-events", "cluster-autoscaler-event", "scheduler-message"),
        "cluster-autoscaler does not scale up: the only matching node group is at its maximum size.",
    ),
    Recording(
        "karpenter-insufficient-capacity-get-events",
        sc.karpenter_cloud_out_of_capacity,
        (_ns("get", "events"),),
        (9,),
        ("kubectl-events", "karpenter", "scheduler-message"),
        "Karpenter cannot launch the GPU instance: the cloud has no p4d.24xlarge capacity in the zone.",
    ),
    # cause 10 ------------------------------------------------------------------------------------
    Recording(
        "image-tag-missing-get-pods-wide",
        sc.worker_image_tag_does_not_exist,
        (_ns("get", "pods", "-o", "wide"),),
        (10,),
        ("kubectl-get",),
        "A GPU worker's image tag does not exist: ImagePullBackOff.",
    ),
    Recording(
        "image-tag-missing-describe-worker",
        sc.worker_image_tag_does_not_exist,
        (_ns("describe", "pod", GPU_WORKERS[0]),),
        (10,),
        ("kubectl-describe-pod",),
        "A GPU worker's image tag does not exist: ImagePullBackOff.",
    ),
    Recording(
        "worker-oom-crashloop-get-pods",
        sc.worker_oom_killed_in_a_loop,
        (_ns("get", "pods"),),
        (10,),
        ("kubectl-get",),
        "A GPU worker is OOMKilled at every start: CrashLoopBackOff.",
    ),
    Recording(
        "worker-oom-crashloop-describe-worker",
        sc.worker_oom_killed_in_a_loop,
        (_ns("describe", "pod", GPU_WORKERS[1]),),
        (10,),
        ("kubectl-describe-pod",),
        "A GPU worker is OOMKilled at every start: CrashLoopBackOff.",
    ),
    Recording(
        "worker-missing-secret-get-pods-all-namespaces",
        sc.worker_missing_secret,
        (("get", "pods", "-A"),),
        (10,),
        ("kubectl-get",),
        "A GPU worker references a Secret that does not exist: CreateContainerConfigError.",
    ),
    Recording(
        "operator-forbidden-ingress-get-events-wide",
        sc.operator_forbidden_to_create_ingress,
        (_ns("get", "events", "-o", "wide"),),
        (10,),
        ("kubectl-events", "kuberay-operator-log"),
        "The KubeRay operator is forbidden to create the RayService's Ingress (RBAC).",
    ),
)


def _statuses_without_reason() -> Bundle:
    """The healthy cluster with containers that ended without a reason, as a crashing runtime leaves
    them: the printer writes ``ExitCode:N``, ``Signal:N``, ``Init:ExitCode:N`` and ``NotReady``."""
    bundle = healthy()
    pods = {p["metadata"]["name"]: p for p in bundle.items("pods")}
    cpu = sorted(n for n in pods if "cpu-workers" in n)
    head, gpu0, gpu1 = HEAD, GPU_WORKERS[0], GPU_WORKERS[1]
    pods[gpu0]["status"]["containerStatuses"][0].update(
        ready=False, state={"terminated": {"exitCode": 137, "startedAt": None}}
    )
    pods[gpu1]["status"]["containerStatuses"][0].update(
        ready=False, state={"terminated": {"exitCode": 0, "signal": 9}}
    )
    init = pods[cpu[0]]
    init["spec"]["initContainers"] = [{"name": "wait-gcs-ready", "image": "rayproject/ray:2.9.0-py310"}]
    init["status"]["initContainerStatuses"] = [
        {
            "name": "wait-gcs-ready",
            "ready": False,
            "restartCount": 0,
            "state": {"terminated": {"exitCode": 1}},
        }
    ]
    sidecar = pods[head]
    sidecar["status"]["containerStatuses"].append(
        {
            "name": "log-shipper",
            "ready": False,
            "restartCount": 0,
            "state": {"terminated": {"exitCode": 0, "reason": "Completed"}},
        }
    )
    sidecar["spec"]["containers"].append({"name": "log-shipper", "image": "fluent/fluent-bit:3.1"})
    for condition in sidecar["status"].get("conditions", []):
        if condition["type"] in ("Ready", "ContainersReady"):
            condition["status"] = "False"
    return bundle


def _rayservice_deploy_failed() -> Bundle:
    """The Serve scenario's cluster behind a RayService, its status as KubeRay 1.3+ writes it."""
    bundle = sc.serve_app_fails_to_import()
    bundle.items("rayservices").append(
        {
            "apiVersion": "ray.io/v1",
            "kind": "RayService",
            "metadata": {"name": "llm-service", "namespace": NS, "creationTimestamp": "2026-11-30T07:58:12Z"},
            "spec": {"serveConfigV2": "applications:\n- name: llm\n  import_path: app:deployment\n"},
            "status": {
                "serviceStatus": "",
                "numServeEndpoints": 0,
                "observedGeneration": 1,
                "conditions": [
                    {
                        "type": "Ready",
                        "status": "False",
                        "reason": "Initializing",
                        "message": "",
                        "lastTransitionTime": "2026-11-30T09:12:41Z",
                    },
                    {
                        "type": "UpgradeInProgress",
                        "status": "False",
                        "reason": "NoPendingCluster",
                        "message": "",
                        "lastTransitionTime": "2026-11-30T09:12:41Z",
                    },
                ],
                "activeServiceStatus": {
                    "rayClusterName": CLUSTER,
                    "applicationStatuses": {
                        "llm": {
                            "status": "DEPLOY_FAILED",
                            "message": "Deploying app 'llm' failed with exception:\nModuleNotFoundError: "
                            "No module named 'vllm'",
                        }
                    },
                },
            },
        }
    )
    return bundle


# Parser fixtures: file stem → (scenario, KubeRay release whose printer columns the server uses, commands).
FIXTURE_TABLES: dict[str, tuple[Callable[[], Bundle], str, tuple[tuple[str, ...], ...]]] = {
    **{
        f"kuberay-{release}-get-raycluster-rayjob": (
            sc.rayjob_runtime_env_failed,
            release,
            (_ns("get", "raycluster,rayjob"),),
        )
        for release in ("0.4", "1.0", "1.1", "1.2")
    },
    "kuberay-1.2-get-raycluster-wide-all-namespaces": (
        sc.rayjob_runtime_env_failed,
        "1.2",
        (("get", "raycluster", "-A", "-o", "wide"),),
    ),
    "kuberay-1.2-get-rayjob-wide-all-namespaces": (
        sc.rayjob_runtime_env_failed,
        "1.2",
        (("get", "rayjob", "-A", "-o", "wide"),),
    ),
    "kuberay-1.2-get-rayservice": (_rayservice_deploy_failed, "1.2", (_ns("get", "rayservice"),)),
    "get-rayservice-yaml": (
        _rayservice_deploy_failed,
        "1.2",
        (_ns("get", "rayservice", "llm-service", "-o", "yaml"),),
    ),
    "get-raycluster-yaml": (
        sc.rayjob_runtime_env_failed,
        "1.2",
        (_ns("get", "raycluster", CLUSTER, "-o", "yaml"),),
    ),
    "get-pods-statuses-without-reason": (_statuses_without_reason, "1.2", (_ns("get", "pods"),)),
    "get-pods-kinds-prefixed": (sc.worker_oom_killed_in_a_loop, "1.2", (_ns("get", "pods,raycluster"),)),
    "get-pods-wide-image-pull": (
        sc.worker_image_tag_does_not_exist,
        "1.2",
        (_ns("get", "pods", "-o", "wide"),),
    ),
}


def kubectl(kubeconfig: Path, home: Path, args: tuple[str, ...] | list[str]) -> str:
    """Run the installed kubectl against ``kubeconfig``; what it prints to stdout."""
    binary = shutil.which("kubectl")
    if binary is None:
        raise SystemExit("kubectl is not installed")
    result = subprocess.run(
        [binary, "--kubeconfig", str(kubeconfig), "--cache-dir", str(home / "cache"), *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "HOME": str(home), "KUBECONFIG": str(kubeconfig)},
        check=False,
    )
    if result.returncode != 0:
        raise SystemExit(f"kubectl {' '.join(args)} failed: {result.stderr.strip()}")
    return result.stdout


def transcript(kubeconfig: Path, home: Path, commands: tuple[tuple[str, ...], ...]) -> str:
    """One command's output as it is, several as a terminal shows them (``$ kubectl ...`` prompts)."""
    if len(commands) == 1:
        return kubectl(kubeconfig, home, commands[0])
    return "".join(f"$ kubectl {' '.join(c)}\n{kubectl(kubeconfig, home, c)}" for c in commands)


def _entry(recording: Recording) -> dict[str, Any]:
    shown = "; ".join(f"kubectl {' '.join(c)}" for c in recording.commands)
    return {
        "file": f"{recording.stem}.txt",
        "kind": "recorded",
        "causes": list(recording.causes),
        "also_ok": [],
        "layer": "k8s",
        "formats": list(recording.formats),
        "source": f"{COMMAND}: {shown} (loopback API, scenario {recording.scenario.__name__}, "
        f"KubeRay {recording.kuberay} columns)",
        "what_happened": recording.what_happened,
    }


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    entries: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="raydiag-kubectl-") as tmp:
        home = Path(tmp)
        for recording in RECORDINGS:
            store = ObjectStore.from_bundle(recording.scenario())
            with serve(store, kuberay=recording.kuberay) as api:
                kubeconfig = api.kubeconfig(home / "kubeconfig")
                text = transcript(kubeconfig, home, recording.commands)
            (OUT / f"{recording.stem}.txt").write_text(text, encoding="utf-8")
            entries.append(_entry(recording))
        FIXTURES.mkdir(parents=True, exist_ok=True)
        for stem, (scenario, release, commands) in FIXTURE_TABLES.items():
            with serve(ObjectStore.from_bundle(scenario()), kuberay=release) as api:
                text = transcript(api.kubeconfig(home / "kubeconfig"), home, commands)
            (FIXTURES / f"{stem}.txt").write_text(text, encoding="utf-8")
    (OUT / "expected.json").write_text(json.dumps(entries, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {len(entries)} recorded kubectl cases into {OUT.relative_to(ROOT)} ({CLUSTER})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
