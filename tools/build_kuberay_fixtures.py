"""Build ``tests/fixtures/kuberay/<release>/`` from the CRD schemas of each KubeRay release.

    .venv/bin/python tools/build_kuberay_fixtures.py KUBERAY_GIT_DIR [--out tests/fixtures/kuberay]

``KUBERAY_GIT_DIR`` is a clone (or bare mirror) of github.com/ray-project/kuberay with its tags.

No KubeRay operator can run here, so these objects are not recordings. Each is the object that the
operator of that release writes in one known state (read off its Go status types and controller:
which fields it sets, with Go's ``omitempty`` leaving zero values out), then put through what the
API server does when ``kubectl get -o json`` asks for it in one API version: the CRD schema's
defaults are filled in and every field that version's schema does not declare is pruned. What is
left is then checked against the schema (types, enums, required keys), so a fixture never holds a
field or a value its release could not serve. ``ray.io/v1alpha1`` objects are the same stored
objects read through the v1alpha1 schema, which KubeRay stopped extending after v1.1.

Each release folder also gets ``expected.json``: what a reader of that object must come out with.
Where the API version's schema has lost the field a fact lives in, the fact is ``null`` (not read),
never a guess. The README in the output folder names the tag, commit and schema blobs used.
"""

from __future__ import annotations

import argparse
import copy
import json
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import yaml

JSON = dict[str, Any]
# An object, and what a reader gets from it (the argument: whether it is read as v1alpha1).
Built = tuple[JSON, Callable[[bool], JSON]]
KINDS = (
    ("raycluster", "rayclusters", "RayCluster"),
    ("rayjob", "rayjobs", "RayJob"),
    ("rayservice", "rayservices", "RayService"),
)
CRD_PATH = "ray-operator/config/crd/bases/ray.io_{plural}.yaml"
NAMESPACE = "ml"


@dataclass(frozen=True)
class Release:
    """A KubeRay minor release, built from its newest patch tag; ``patches`` share its status schema."""

    tag: str
    patches: tuple[str, ...]
    ray_version: str  # the rayVersion of that tag's config/samples

    @property
    def minor(self) -> int:
        return int(self.tag.split(".")[1])

    @property
    def folder(self) -> str:
        return self.tag


RELEASES = (
    Release("v1.0.0", ("v1.0.0",), "2.7.0"),
    Release("v1.1.1", ("v1.1.0", "v1.1.1"), "2.9.0"),
    Release("v1.2.2", ("v1.2.0", "v1.2.1", "v1.2.2"), "2.9.0"),
    Release("v1.3.2", ("v1.3.0", "v1.3.1", "v1.3.2"), "2.41.0"),
    Release("v1.4.2", ("v1.4.0", "v1.4.1", "v1.4.2"), "2.46.0"),
    Release("v1.5.2", ("v1.5.0", "v1.5.1", "v1.5.2"), "2.46.0"),
    Release("v1.6.2", ("v1.6.0", "v1.6.1", "v1.6.2"), "2.52.0"),
    Release("v1.7.0", ("v1.7.0",), "2.52.0"),
)

# One clock for every object, so a rebuild writes the same bytes.
CREATED = "2025-06-02T09:00:00Z"
HEAD_UP = "2025-06-02T09:01:40Z"
WORKERS_UP = "2025-06-02T09:03:10Z"
JOB_START = "2025-06-02T09:03:30Z"
JOB_END = "2025-06-02T09:14:05Z"
NOW = "2025-06-02T09:20:00Z"
DEADLINE_S = 600
DEADLINE_MESSAGE = (
    "The RayJob has passed the activeDeadlineSeconds. StartTime: 2025-06-02 09:00:00 +0000 UTC. "
    f"ActiveDeadlineSeconds: {DEADLINE_S}"
)

QUOTA_DENIED = (
    'pods "gpu-cluster-quota-gpu-worker-" is forbidden: exceeded quota: gpu-quota, '
    "requested: requests.nvidia.com/gpu=1, used: requests.nvidia.com/gpu=4, "
    "limited: requests.nvidia.com/gpu=4"
)
JOB_FAILED = (
    "Job entrypoint command failed with exit code 1, last available logs (truncated to 20,000 chars):\n"
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity "
    "of 22.05 GiB of which 1.12 GiB is free."
)
SERVE_FAILED = (
    "Deploying app 'llm' failed with exception:\n"
    "ray.exceptions.RayTaskError(ModuleNotFoundError): "
    "ray::ServeReplica:llm:LLMServer.initialize_and_get_metadata() "
    "(pid=412, ip=10.8.3.17)\nModuleNotFoundError: No module named 'vllm'"
)


# --- what the API server does -------------------------------------------------------------------


class SchemaError(ValueError):
    pass


def _type_ok(value: object, schema: JSON) -> bool:
    if schema.get("x-kubernetes-int-or-string"):
        return isinstance(value, int | str) and not isinstance(value, bool)
    kind = schema.get("type")
    checks: dict[str, tuple[type, ...]] = {
        "string": (str,),
        "integer": (int,),
        "number": (int, float),
        "boolean": (bool,),
        "object": (dict,),
        "array": (list,),
    }
    if kind is None:
        return True
    if kind in ("integer", "number") and isinstance(value, bool):
        return False
    return isinstance(value, checks[kind])


def serve(value: Any, schema: JSON, path: str = "") -> Any:
    """``value`` as the API server returns it under ``schema``: defaulted, pruned, then validated."""
    if not _type_ok(value, schema):
        raise SchemaError(f"{path or '.'}: {value!r} is not {schema.get('type')}")
    if "enum" in schema and value not in schema["enum"]:
        raise SchemaError(f"{path}: {value!r} not in {schema['enum']}")
    if schema.get("x-kubernetes-preserve-unknown-fields"):
        return copy.deepcopy(value)
    if isinstance(value, list):
        items = schema.get("items", {})
        return [serve(item, items, f"{path}[{n}]") for n, item in enumerate(value)]
    if not isinstance(value, dict):
        return value
    properties: JSON = schema.get("properties", {})
    extra = schema.get("additionalProperties")
    out: JSON = {}
    for key, sub in properties.items():
        if key not in value and "default" in sub:
            value = {**value, key: copy.deepcopy(sub["default"])}
    for key, item in value.items():
        if key in properties:
            out[key] = serve(item, properties[key], f"{path}.{key}")
        elif isinstance(extra, dict):
            out[key] = serve(item, extra, f"{path}.{key}")
    for key in schema.get("required", []):
        if key not in out:
            raise SchemaError(f"{path}: required field {key!r} missing")
    return out


def serve_object(obj: JSON, schema: JSON) -> JSON:
    """The root: apiVersion, kind and metadata are the API server's own, never pruned by the CRD."""
    body = {k: v for k, v in obj.items() if k not in ("apiVersion", "kind", "metadata")}
    served = serve(body, schema)
    return {"apiVersion": obj["apiVersion"], "kind": obj["kind"], "metadata": obj["metadata"], **served}


# --- reading the KubeRay repository -------------------------------------------------------------


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


def crd(repo: Path, tag: str, plural: str) -> JSON:
    loaded: JSON = yaml.safe_load(git(repo, "show", f"{tag}:{CRD_PATH.format(plural=plural)}"))
    return loaded


def schemas(document: JSON) -> dict[str, JSON]:
    """openAPIV3Schema per served API version."""
    return {
        v["name"]: v["schema"]["openAPIV3Schema"] for v in document["spec"]["versions"] if v.get("served")
    }


def check_patches_agree(repo: Path, release: Release, plural: str) -> None:
    """Every patch tag of a minor release must declare the same status schema as the one built."""
    reference = {v: s["properties"].get("status") for v, s in schemas(crd(repo, release.tag, plural)).items()}
    for tag in release.patches:
        other = {v: s["properties"].get("status") for v, s in schemas(crd(repo, tag, plural)).items()}
        if other != reference:
            raise SystemExit(f"{tag} {plural}: status schema differs from {release.tag}; build it separately")


# --- what the operator of each release writes ---------------------------------------------------


def _meta(name: str, generation: int = 1, **extra: Any) -> JSON:
    return {
        "creationTimestamp": CREATED,
        "generation": generation,
        "name": name,
        "namespace": NAMESPACE,
        "resourceVersion": str(48_100 + sum(map(ord, name))),
        "uid": f"5b2c9a4e-{sum(map(ord, name)):04x}-4f1e-9c3a-2d7e1f0b6a{len(name):02d}",
        **extra,
    }


def _cluster_spec(release: Release) -> JSON:
    image = f"rayproject/ray:{release.ray_version}-gpu"
    return {
        "rayVersion": release.ray_version,
        "headGroupSpec": {
            "rayStartParams": {"dashboard-host": "0.0.0.0", "num-gpus": "0"},
            "template": {
                "spec": {
                    "containers": [
                        {
                            "name": "ray-head",
                            "image": image,
                            "resources": {"limits": {"cpu": "2", "memory": "8Gi"}},
                            "ports": [
                                {"containerPort": 6379, "name": "gcs-server"},
                                {"containerPort": 8265, "name": "dashboard"},
                                {"containerPort": 10001, "name": "client"},
                            ],
                        }
                    ]
                }
            },
        },
        "workerGroupSpecs": [
            {
                "groupName": "gpu",
                "replicas": 2,
                "minReplicas": 0,
                "maxReplicas": 4,
                "rayStartParams": {},
                "template": {
                    "spec": {
                        "containers": [
                            {
                                "name": "ray-worker",
                                "image": image,
                                "resources": {
                                    "limits": {"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": "1"}
                                },
                            }
                        ],
                        "nodeSelector": {"cloud.google.com/gke-accelerator": "nvidia-l4"},
                        "tolerations": [
                            {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
                        ],
                    }
                },
            }
        ],
    }


def _condition(kind: str, status: str, reason: str, message: str, at: str) -> JSON:
    return {
        "lastTransitionTime": at,
        "message": message,
        "observedGeneration": 1,
        "reason": reason,
        "status": status,
        "type": kind,
    }


def cluster_status(release: Release, name: str, phase: str) -> JSON:
    """``RayClusterStatus`` of a cluster in one ``phase``.

    ``ready``: head and both GPU workers up. ``quota``: the head is up, the workers are refused by a
    ResourceQuota. ``head-pending``: the head Pod exists but is not scheduled, so nothing serves yet.
    """
    healthy = phase == "ready"
    ready = 2 if healthy else 0
    status: JSON = {
        "desiredWorkerReplicas": 2,
        "maxWorkerReplicas": 4,
        "endpoints": {"client": "10001", "dashboard": "8265", "gcs-server": "6379", "metrics": "8080"},
        "head": {"serviceIP": "10.12.0.41"},
        "lastUpdateTime": NOW,
        "observedGeneration": 1,
    }
    if phase != "head-pending":
        status["head"]["podIP"] = "10.8.3.17"
    if ready:  # int32 with omitempty: a zero never appears
        status["availableWorkerReplicas"] = ready
    if healthy:
        status["state"] = "ready"
    if release.minor >= 1:
        # resource.Quantity is a struct, so omitempty keeps even a zero.
        status.update(desiredCPU="18", desiredMemory="72Gi", desiredGPU="2", desiredTPU="0")
    if release.minor >= 2:
        status["head"].update(podName=f"{name}-head-8x2kq", serviceName=f"{name}-head-svc")
        if ready:
            status["readyWorkerReplicas"] = ready
        if healthy:
            status["stateTransitionTimes"] = {"ready": WORKERS_UP}
    if phase == "quota" and release.minor <= 1:
        # Until v1.1 a failed pod reconcile set state "failed" and the API error as the reason.
        status.update(state="failed", reason=QUOTA_DENIED)
    # The RayClusterStatusConditions gate is on by default from v1.3 (alpha, and off, in v1.2).
    if release.minor >= 3:
        if phase == "head-pending":  # an unscheduled Pod has no Ready condition to copy
            conditions = [_condition("HeadPodReady", "False", "Unknown", "", CREATED)]
        else:
            conditions = [_condition("HeadPodReady", "True", "HeadPodRunningAndReady", "", HEAD_UP)]
        if healthy:
            conditions.append(
                _condition(
                    "RayClusterProvisioned",
                    "True",
                    "AllPodRunningAndReadyFirstTime",
                    "All Ray Pods are ready for the first time",
                    WORKERS_UP,
                )
            )
        else:
            conditions += [
                _condition(
                    "RayClusterProvisioned",
                    "False",
                    "RayClusterPodsProvisioning",
                    "RayCluster Pods are being provisioned for first time",
                    CREATED,
                ),
            ]
        if phase == "quota":
            conditions.append(
                _condition(
                    "ReplicaFailure",
                    "True",
                    "FailedCreateWorkerPod",
                    f"FailedCreateWorkerPod\n{QUOTA_DENIED}",
                    HEAD_UP,
                )
            )
        status["conditions"] = conditions
    return status


def expected_cluster(release: Release, healthy: bool, alpha: bool) -> JSON:
    # v1alpha1 from v1.2 on lacks every field that says "this operator counts ready workers", so a
    # missing readyWorkerReplicas there cannot be told from an old operator's: not read.
    knows_ready = release.minor >= 2 and not alpha
    conditions = (
        {}
        if alpha or release.minor < 3
        else {
            "HeadPodReady": "True",
            "RayClusterProvisioned": "True" if healthy else "False",
            **({} if healthy else {"ReplicaFailure": "True"}),
        }
    )
    broken_state = "failed" if release.minor <= 1 else None
    return {
        "state": "ready" if healthy else broken_state,
        "reason": None if healthy or release.minor > 1 else QUOTA_DENIED,
        "ready_workers": 2 if healthy else (0 if knows_ready else None),
        "desired_workers": 2,
        "conditions": conditions,
    }


def rayclusters(release: Release) -> list[Built]:
    found: list[Built] = []
    for name, healthy in (("gpu-cluster", True), ("gpu-cluster-quota", False)):
        obj = {
            "kind": "RayCluster",
            "metadata": _meta(name),
            "spec": _cluster_spec(release),
            "status": cluster_status(release, name, "ready" if healthy else "quota"),
        }
        found.append((obj, partial(expected_cluster, release, healthy)))
    return found


def job_status(release: Release, name: str, outcome: str) -> JSON:
    """``RayJobStatus`` of a job that succeeded, failed in its own code, or waits for its cluster's head."""
    cluster = f"{name}-raycluster-q7v4d"
    status: JSON = {
        "jobId": f"{name}-m2wxs",
        "rayClusterName": cluster,
        "observedGeneration": 1,
        "rayClusterStatus": cluster_status(
            release, cluster, "head-pending" if outcome in ("waiting", "deadline") else "ready"
        ),
    }
    if release.minor >= 1:
        status["startTime"] = CREATED  # from v1.1 the RayJob's own start, not the Ray job's
    if outcome == "waiting":
        # v1.0 waited in WaitForDashboardReady while the head did not serve; v1.1 folded it into Initializing.
        status["jobDeploymentStatus"] = "WaitForDashboardReady" if release.minor == 0 else "Initializing"
        return status
    if outcome == "deadline":
        # v1.1 on: activeDeadlineSeconds passed while the cluster was still coming up. The operator
        # fails the job from any deployment status with reason DeadlineExceeded; the Ray job was
        # never submitted, so jobStatus stays empty. Its message prints StartTime with Go's %v.
        status.update(jobDeploymentStatus="Failed", reason="DeadlineExceeded", message=DEADLINE_MESSAGE)
        if release.minor >= 2:
            status.update(succeeded=0, failed=1)
        return status
    status["dashboardURL"] = f"{cluster}-head-svc.{NAMESPACE}.svc.cluster.local:8265"
    succeeded = outcome == "succeeded"
    status["jobStatus"] = "SUCCEEDED" if succeeded else "FAILED"
    status["message"] = "Job finished successfully." if succeeded else JOB_FAILED
    status["endTime"] = JOB_END
    if release.minor == 0:
        # v1.0 ended every terminal job in Complete, failed or not, and timed the Ray job itself.
        status.update(jobDeploymentStatus="Complete", startTime=JOB_START)
    else:
        status["jobDeploymentStatus"] = "Complete" if succeeded else "Failed"
        if not succeeded:
            status["reason"] = "AppFailed"
    if release.minor >= 2:
        status.update(succeeded=1 if succeeded else 0, failed=0 if succeeded else 1)
    if release.minor >= 4:
        status["rayJobInfo"] = {"startTime": JOB_START, "endTime": JOB_END}
    return status


def expected_job(release: Release, name: str, outcome: str, alpha: bool) -> JSON:
    message = {
        "succeeded": "Job finished successfully.",
        "failed": JOB_FAILED,
        "waiting": None,
        "deadline": DEADLINE_MESSAGE,
    }[outcome]
    if outcome == "waiting":
        deployment = "WaitForDashboardReady" if release.minor == 0 else "Initializing"
    elif outcome in ("failed", "deadline") and release.minor >= 1:
        deployment = "Failed"
    else:
        deployment = "Complete"
    # reason came with v1.1, in v1 only: the v1alpha1 schema never declared it.
    known = release.minor >= 1 and not alpha
    reason = {"failed": "AppFailed", "deadline": "DeadlineExceeded"}.get(outcome) if known else None
    return {
        "job_status": {"succeeded": "SUCCEEDED", "failed": "FAILED"}.get(outcome),
        "deployment_status": deployment,
        "reason": reason,
        "message": message,
        "cluster_name": f"{name}-raycluster-q7v4d",
        "submission_id": f"{name}-m2wxs",
    }


def rayjobs(release: Release) -> list[Built]:
    found: list[Built] = []
    outcomes = [("train-ok", "succeeded"), ("train-oom", "failed"), ("train-waiting", "waiting")]
    if release.minor >= 1:  # activeDeadlineSeconds came with v1.1
        outcomes.append(("train-deadline", "deadline"))
    for name, outcome in outcomes:
        spec: JSON = {
            "entrypoint": "python /home/ray/train.py",
            "shutdownAfterJobFinishes": True,
            "rayClusterSpec": _cluster_spec(release),
        }
        if outcome == "deadline":
            spec["activeDeadlineSeconds"] = DEADLINE_S
        obj = {
            "kind": "RayJob",
            "metadata": _meta(name),
            "spec": spec,
            "status": job_status(release, name, outcome),
        }
        found.append((obj, partial(expected_job, release, name, outcome)))
    return found


def _app(release: Release, healthy: bool) -> JSON:
    status, message = ("RUNNING", "") if healthy else ("DEPLOY_FAILED", SERVE_FAILED)
    deployment: JSON = {"status": "HEALTHY" if healthy else "UNHEALTHY"}
    if not healthy:
        deployment["message"] = "The deployment failed to start 3 times in a row."
    app: JSON = {"status": status, "serveDeploymentStatuses": {"LLMServer": deployment}}
    if message:
        app["message"] = message
    if release.minor <= 2:
        # Timestamps KubeRay kept per application and deployment; gone from v1.1 (lastUpdateTime) and v1.3.
        app["healthLastUpdateTime"] = NOW
        deployment["healthLastUpdateTime"] = NOW
    if release.minor == 0:
        app["lastUpdateTime"] = NOW
        deployment["lastUpdateTime"] = NOW
    return app


def _service_side(release: Release, cluster: str | None, healthy: bool) -> JSON:
    """One of activeServiceStatus / pendingServiceStatus; a Go struct, so written even when empty."""
    if cluster is None:
        empty: JSON = {"rayClusterStatus": {"head": {}}}
        if release.minor >= 1:
            empty["rayClusterStatus"].update(
                desiredCPU="0", desiredMemory="0", desiredGPU="0", desiredTPU="0"
            )
        return empty
    side: JSON = {
        "rayClusterName": cluster,
        "applicationStatuses": {"llm": _app(release, healthy)},
        "rayClusterStatus": cluster_status(release, cluster, "ready"),
    }
    if release.minor == 0:
        side["dashboardStatus"] = {"isHealthy": True, "lastUpdateTime": NOW, "healthLastUpdateTime": NOW}
    if release.minor >= 5 and healthy:
        side.update(targetCapacity=100, trafficRoutedPercent=100, lastTrafficMigratedTime=WORKERS_UP)
    return side


def service_status(release: Release, name: str, healthy: bool) -> JSON:
    """``RayServiceStatuses``: serving, or its first cluster up and its Serve app failing to start."""
    cluster = f"{name}-raycluster-x5n8j"
    status: JSON = {
        "activeServiceStatus": _service_side(release, cluster if healthy else None, healthy),
        "pendingServiceStatus": _service_side(release, None if healthy else cluster, healthy),
        "observedGeneration": 1,
    }
    if release.minor >= 1:
        status["lastUpdateTime"] = NOW
        if healthy:
            status["numServeEndpoints"] = 2
    if release.minor <= 2:
        status["serviceStatus"] = "Running" if healthy else "WaitForServeDeploymentReady"
    elif healthy:
        # From v1.3 only "Running" or nothing: the Ready condition says the rest.
        status["serviceStatus"] = "Running"
    if release.minor >= 3:
        if healthy:
            status["conditions"] = [
                _condition(
                    "Ready",
                    "True",
                    "NonZeroServeEndpoints",
                    "Number of serve endpoints is greater than 0",
                    WORKERS_UP,
                ),
                _condition(
                    "UpgradeInProgress",
                    "False",
                    "NoPendingCluster",
                    "Active Ray cluster exists and no pending Ray cluster",
                    WORKERS_UP,
                ),
            ]
        else:
            status["conditions"] = [
                _condition("Ready", "False", "Initializing", "RayService is initializing", CREATED),
                _condition(
                    "UpgradeInProgress", "False", "Initializing", "RayService is initializing", CREATED
                ),
            ]
    return status


def expected_service(release: Release, name: str, healthy: bool, alpha: bool) -> JSON:
    conditions = {}
    if release.minor >= 3 and not alpha:
        conditions = {"Ready": "True" if healthy else "False", "UpgradeInProgress": "False"}
    if healthy or release.minor <= 2:
        service = "Running" if healthy else "WaitForServeDeploymentReady"
    else:
        service = None
    return {
        "service_status": service,
        "cluster_name": f"{name}-raycluster-x5n8j",
        "app_statuses": {"llm": "RUNNING" if healthy else "DEPLOY_FAILED"},
        "conditions": conditions,
    }


def rayservices(release: Release) -> list[Built]:
    found: list[Built] = []
    for name, healthy in (("llm-serve", True), ("llm-serve-broken", False)):
        spec = {
            "serveConfigV2": "applications:\n- name: llm\n  import_path: serve_llm:app\n  route_prefix: /\n",
            "rayClusterConfig": _cluster_spec(release),
        }
        obj = {
            "kind": "RayService",
            "metadata": _meta(name),
            "spec": spec,
            "status": service_status(release, name, healthy),
        }
        found.append((obj, partial(expected_service, release, name, healthy)))
    return found


BUILDERS: dict[str, Callable[[Release], list[Built]]] = {
    "raycluster": rayclusters,
    "rayjob": rayjobs,
    "rayservice": rayservices,
}


# --- writing ------------------------------------------------------------------------------------


def build(repo: Path, out: Path) -> list[str]:
    rows = []
    for release in RELEASES:
        commit = git(repo, "rev-list", "-n1", release.tag).strip()
        folder = out / release.folder
        folder.mkdir(parents=True, exist_ok=True)
        expected: JSON = {}
        blobs = []
        for stem, plural, _kind in KINDS:
            check_patches_agree(repo, release, plural)
            served = schemas(crd(repo, release.tag, plural))
            blob = git(repo, "rev-parse", f"{release.tag}:{CRD_PATH.format(plural=plural)}").strip()
            blobs.append(f"`{plural}` {blob[:12]}")
            items = []
            expected[plural] = {}
            for version in ("v1", "v1alpha1"):
                for obj, expect in BUILDERS[stem](release):
                    raw = {"apiVersion": f"ray.io/{version}", **copy.deepcopy(obj)}
                    item = serve_object(raw, served[version])
                    items.append(item)
                    key = f"ray.io/{version} {item['metadata']['name']}"
                    expected[plural][key] = expect(version == "v1alpha1")
            listing = {
                "apiVersion": "v1",
                "items": items,
                "kind": "List",
                "metadata": {"resourceVersion": ""},
            }
            # kubectl prints a custom resource as the API server's map, so its keys come sorted.
            (folder / f"{stem}.json").write_text(json.dumps(listing, indent=4, sort_keys=True) + "\n")
        (folder / "expected.json").write_text(json.dumps(expected, indent=2, sort_keys=True) + "\n")
        patches = ", ".join(release.patches)
        rows.append(f"| {release.folder} | {patches} | `{commit}` | {'; '.join(blobs)} |")
    return rows


README = """\
# KubeRay objects of every release

`<release>/{{raycluster,rayjob,rayservice}}.json` are `kubectl get -o json` Lists of RayCluster, RayJob
and RayService objects as each KubeRay release serves them, each object twice: as `ray.io/v1` and as
`ray.io/v1alpha1` (every release from v1.0.0 to v1.7.0 serves both; v1 is the stored version).
`<release>/expected.json` says what a reader must get from each object (`null`: that API version's
schema no longer carries the fact). `tests/read/test_kuberay_versions.py` reads them all.

**These are not recordings.** No KubeRay operator (nor a Kubernetes API server) can run here, so
`tools/build_kuberay_fixtures.py` builds them from the CRD schema of each release: the status the
operator of that release writes in one state (which fields its Go status types declare and its
controller sets, zero values left out as Go's `omitempty` does), then the API server's part: the
schema's defaults filled in, every field the served version's schema lacks pruned, and the rest
validated against it (types, enums, required keys). No KubeRay code is copied here; the schemas are
read from a KubeRay checkout at build time.

States: RayCluster `gpu-cluster` (head and 2 GPU workers up) and `gpu-cluster-quota` (workers
refused by a ResourceQuota); RayJob `train-ok` (succeeded), `train-oom` (failed in its own code),
`train-waiting` (its cluster's head Pod unscheduled), from v1.1 `train-deadline` (failed by its
activeDeadlineSeconds while that head was still unscheduled); RayService `llm-serve` (serving) and
`llm-serve-broken` (first cluster up, Serve app failing in its constructor, so only
`pendingServiceStatus` is filled).

Rebuild (same bytes for the same tags):

    git clone https://github.com/ray-project/kuberay /tmp/kuberay
    .venv/bin/python tools/build_kuberay_fixtures.py /tmp/kuberay --out tests/fixtures/kuberay

## Sources

Schema files: `ray-operator/config/crd/bases/ray.io_<plural>.yaml` at the tag (git blob ids below),
status types read from `ray-operator/apis/ray/v1/*_types.go` at the same tag. A folder is built from
the newest patch of its minor release; the builder checks that every listed patch declares the
same status schema, so the folder stands for all of them. KubeRay is Apache-2.0,
© The KubeRay Authors.

| folder | tags with this status schema | commit | CRD schema blobs |
|---|---|---|---|
{rows}
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("kuberay", type=Path, help="a git clone or mirror of ray-project/kuberay, with tags")
    parser.add_argument("--out", type=Path, default=Path("tests/fixtures/kuberay"))
    args = parser.parse_args(argv)
    rows = build(args.kuberay, args.out)
    (args.out / "README.md").write_text(README.format(rows="\n".join(rows)))
    print(f"wrote {len(rows)} releases under {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
