"""Structured documents (YAML or JSON) pasted whole or in part, routed by what they contain.

One reader for every structured document, whichever syntax it came in: Kubernetes objects and
lists (``kubectl get -o yaml|json``, or the manifest a user applied) go through the shared
readers in ``bot.read.kubernetes_json`` by their ``kind``; documents without a ``kind`` are
recognised by their keys (``serve status``, a cluster-launcher config or node-type snippet, a
RayCluster ``spec`` or worker group cut out of a manifest, the values of KubeRay's ``ray-cluster``
Helm chart, which is how many users describe their cluster).

A pod manifest usually has no ``status`` (it is the file the user applied), so its phase is
unknown here; ``assemble`` decides it from the rest of the paste.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bot.read import node_types, serve_config, serve_status
from bot.read.formats import Format, Tag
from bot.read.found import Found, PodRecord, PodSource
from bot.read.kubectl_describe import UNNAMED_NODE
from bot.read.kubernetes_json import dig, field_for_kind, read_list

KUBERNETES_FORMAT = Format("kubernetes manifest", Tag.K8S_OBJECT_YAML)
RAYCLUSTER_FORMAT = Format("raycluster manifest", Tag.K8S_OBJECT_YAML)
HELM_VALUES_FORMAT = Format("kuberay helm values", Tag.K8S_OBJECT_YAML)
UNNAMED_RAYCLUSTER = "(pasted raycluster)"
_MAX_ITEMS = 20_000


def _add_kubernetes_object(
    item: Mapping[str, Any], kind: str, found: Found, fmt: Format | None = None
) -> bool:
    field_name = field_for_kind(kind)
    if field_name is None:
        return False
    try:
        objects = read_list(field_name, dict(item))
    except Exception:  # one unreadable object must not cost the rest of a list
        found.note(f"a pasted {kind} was skipped after a parser error")
        return False
    added = False
    if kind == "RayService":  # its Serve config, a YAML string: what the replicas ask for
        serve_config.read_serve_config_text(dig(item, "spec", "serveConfigV2"), found)
    for obj in objects:
        added = True
        if field_name == "pods":
            has_status = bool(dig(item, "status", "phase"))
            found.add_pod(
                PodRecord(
                    pod=obj,
                    source=PodSource.API_OBJECT if has_status else PodSource.MANIFEST,
                    namespace_known=bool(dig(item, "metadata", "namespace")),
                    has_status=has_status,
                )
            )
        elif field_name == "nodes":
            found.add_node(obj)
        elif field_name == "events":
            found.add_event(obj)
        else:
            found.add_object(field_name, obj)
    if added:
        found.recognise(fmt or (RAYCLUSTER_FORMAT if kind == "RayCluster" else KUBERNETES_FORMAT))
    return added


def _raycluster_fragment(doc: Mapping[str, Any]) -> dict[str, Any] | None:
    """A RayCluster ``spec`` (or the ``spec`` part with its metadata lost), as a whole object."""
    spec = doc.get("spec") if isinstance(doc.get("spec"), Mapping) else doc
    if not isinstance(spec, Mapping) or not ("headGroupSpec" in spec or "workerGroupSpecs" in spec):
        return None
    groups = spec.get("workerGroupSpecs")
    if isinstance(groups, Mapping) and isinstance(groups.get("resources"), Mapping):
        # The lines between ``workerGroupSpecs:`` and the container's ``resources:`` were cut out.
        container = {"name": "ray-worker", "resources": groups["resources"]}
        group = {
            "groupName": "(pasted group)",
            "template": {"spec": {"containers": [container]}},
            **{k: groups[k] for k in ("rayStartParams", "replicas", "maxReplicas") if k in groups},
        }
        spec = {**spec, "workerGroupSpecs": [group]}
    raw_metadata = doc.get("metadata")
    metadata: dict[str, Any] = dict(raw_metadata) if isinstance(raw_metadata, Mapping) else {}
    if not dig(metadata, "name"):
        metadata["name"] = UNNAMED_RAYCLUSTER
    return {"kind": "RayCluster", "metadata": metadata, "spec": spec}


_GROUP_KEYS = frozenset(
    {"rayStartParams", "resources", "groupName", "replicas", "nodeSelector", "tolerations"}
)
_POD_TEMPLATE_KEYS = ("resources", "nodeSelector", "tolerations", "affinity")


def _helm_image(values: Mapping[str, Any]) -> str | None:
    image = values.get("image")
    repository, tag = dig(image, "repository"), dig(image, "tag")
    return f"{repository}:{tag}" if repository and tag else (str(repository) if repository else None)


def _helm_group(values: Mapping[str, Any], name: str, image: str | None) -> dict[str, Any]:
    """One group of the kuberay ``ray-cluster`` chart's values, as a RayCluster group spec."""
    container = {
        "name": "ray-head" if name == "head" else "ray-worker",
        "image": _helm_image(values) or image,
        "resources": values.get("resources"),
    }
    pod_spec: dict[str, Any] = {key: values[key] for key in _POD_TEMPLATE_KEYS[1:] if key in values}
    pod_spec["containers"] = [container]
    group = {
        key: values[key]
        for key in ("replicas", "minReplicas", "maxReplicas", "rayStartParams")
        if key in values
    }
    return {**group, "groupName": str(values.get("groupName") or name), "template": {"spec": pod_spec}}


def _helm_values_fragment(doc: Mapping[str, Any]) -> dict[str, Any] | None:
    """The kuberay ``ray-cluster`` Helm chart values (``head:``, ``worker:``, ``additionalWorkerGroups:``)."""
    head, worker, extra = doc.get("head"), doc.get("worker"), doc.get("additionalWorkerGroups")
    if not any(isinstance(part, Mapping) and _GROUP_KEYS & set(map(str, part)) for part in (head, worker)):
        return None
    image = _helm_image(doc)
    spec: dict[str, Any] = {"workerGroupSpecs": []}
    if isinstance(head, Mapping):
        spec["headGroupSpec"] = _helm_group(head, "head", image)
    groups = [("workergroup", worker)] if isinstance(worker, Mapping) else []
    if isinstance(extra, Mapping):
        groups += [(str(name), values) for name, values in extra.items() if isinstance(values, Mapping)]
    for name, values in groups:
        if values.get("disabled") is not True:
            spec["workerGroupSpecs"].append(_helm_group(values, name, image))
    return {"kind": "RayCluster", "metadata": {"name": UNNAMED_RAYCLUSTER}, "spec": spec}


# Keys of a RayCluster's ``status`` (and of the copy a RayJob or RayService keeps in
# ``rayClusterStatus``), every KubeRay release: 0.x/1.0 ``state`` (ready, unhealthy, failed),
# ``reason``, ``availableWorkerReplicas``; 1.1+ the desired resources and ``stateTransitionTimes``;
# 1.2+ ``readyWorkerReplicas`` and ``conditions`` (HeadPodReady, RayClusterProvisioned,
# ReplicaFailure; 1.3+ RayClusterSuspending/RayClusterSuspended).
_RAYCLUSTER_STATUS_KEYS = frozenset(
    {
        "stateTransitionTimes",
        "desiredCPU",
        "desiredGPU",
        "desiredMemory",
        "desiredTPU",
        "desiredWorkerReplicas",
        "readyWorkerReplicas",
        "availableWorkerReplicas",
        "maxWorkerReplicas",
        "minWorkerReplicas",
        "head",
        "endpoints",
        "state",
    }
)
_RAYJOB_STATUS_KEYS = frozenset(
    {"jobDeploymentStatus", "jobStatus", "rayClusterName", "rayClusterStatus", "jobId", "dashboardURL"}
)
# A RayService's: ``serviceStatus`` (0.x–1.2 a phase such as WaitForServeDeploymentReady or
# FailedToGetOrCreateRayCluster; 1.3+ only ``Running`` or empty, with ``conditions`` Ready and
# UpgradeInProgress), and the active and pending clusters' application statuses.
_RAYSERVICE_STATUS_KEYS = frozenset(
    {"serviceStatus", "activeServiceStatus", "pendingServiceStatus", "numServeEndpoints"}
)
UNNAMED_POD = "(pasted pod)"
# Condition types only a RayCluster writes (ray-operator/apis/ray/v1/raycluster_types.go, v1.2 on):
# a ``status:`` cut down to its ``conditions`` is still a RayCluster's when one of them is there.
_RAYCLUSTER_CONDITIONS = frozenset(
    {"HeadPodReady", "RayClusterProvisioned", "ReplicaFailure", "RayClusterSuspending", "RayClusterSuspended"}
)


# A RayService's (v1.3 on): ``UpgradeInProgress``, and ``Ready`` with one of the reasons KubeRay gives
# it (rayservice_types.go; ``ValidationFailed`` from v1.6); a Pod's or a Node's Ready has others.
_RAYSERVICE_READY_REASONS = frozenset(
    {
        "Initializing",
        "InitializingTimeout",
        "ZeroServeEndpoints",
        "NonZeroServeEndpoints",
        "ValidationFailed",
    }
)


def _rayservice_conditions(status: Mapping[str, Any]) -> bool:
    conditions = status.get("conditions")
    return isinstance(conditions, list) and any(
        isinstance(c, Mapping)
        and (
            c.get("type") == "UpgradeInProgress"
            or (c.get("type") == "Ready" and c.get("reason") in _RAYSERVICE_READY_REASONS)
        )
        for c in conditions
    )


def _raycluster_conditions(status: Mapping[str, Any]) -> bool:
    conditions = status.get("conditions")
    return isinstance(conditions, list) and any(
        isinstance(c, Mapping) and c.get("type") in _RAYCLUSTER_CONDITIONS for c in conditions
    )


def _status_fragment(doc: Mapping[str, Any], found: Found) -> bool:
    """A ``status:`` cut out of ``kubectl get raycluster|rayjob -o yaml`` (what people paste when the
    RayCluster says ``failed``): its ``reason`` carries the operator's error, a quota refusal say."""
    status = doc.get("status")
    if not isinstance(status, Mapping) or set(doc) - {"status", "metadata"}:
        return False
    raw_metadata = doc.get("metadata")
    metadata: dict[str, Any] = dict(raw_metadata) if isinstance(raw_metadata, Mapping) else {}
    keys = set(map(str, status))
    added = False
    if keys & _RAYSERVICE_STATUS_KEYS or _rayservice_conditions(status):
        service = {
            "kind": "RayService",
            "metadata": {"name": "(pasted rayservice)", **metadata},
            "status": status,
        }
        added = _add_kubernetes_object(service, "RayService", found)
        for part in ("activeServiceStatus", "pendingServiceStatus"):
            cluster_status = dig(status, part, "rayClusterStatus")
            name = dig(status, part, "rayClusterName")
            if isinstance(cluster_status, Mapping) and cluster_status and name:
                cluster = {"kind": "RayCluster", "metadata": {"name": name}, "status": cluster_status}
                added = _add_kubernetes_object(cluster, "RayCluster", found) or added
    elif keys & _RAYJOB_STATUS_KEYS:
        job = {"kind": "RayJob", "metadata": {"name": "(pasted rayjob)", **metadata}, "status": status}
        added = _add_kubernetes_object(job, "RayJob", found)
        cluster_status = status.get("rayClusterStatus")
        if isinstance(cluster_status, Mapping):
            name = status.get("rayClusterName") or UNNAMED_RAYCLUSTER
            cluster = {"kind": "RayCluster", "metadata": {"name": name}, "status": cluster_status}
            added = _add_kubernetes_object(cluster, "RayCluster", found) or added
    elif (
        len(keys & _RAYCLUSTER_STATUS_KEYS) >= 2
        or (keys & _RAYCLUSTER_STATUS_KEYS and "reason" in keys)
        or _raycluster_conditions(status)
    ):
        cluster = {
            "kind": "RayCluster",
            "metadata": {"name": UNNAMED_RAYCLUSTER, **metadata},
            "status": status,
        }
        added = _add_kubernetes_object(cluster, "RayCluster", found)
    elif isinstance(status.get("containerStatuses"), list) or {"phase", "reason"} <= keys:
        # ``phase`` with ``reason``: a Pod the kubelet rejected or evicted (``UnexpectedAdmissionError``).
        pod = {"kind": "Pod", "metadata": {"name": UNNAMED_POD, **metadata}, "status": status}
        added = _add_kubernetes_object(pod, "Pod", found)
    return added


_NODE_STATUS_KEYS = frozenset({"addresses", "nodeInfo", "daemonEndpoints", "images", "conditions"})


def _node_fragment(doc: Mapping[str, Any], found: Found) -> bool:
    """A node's ``status:`` (or just its ``capacity:`` and ``allocatable:``) cut out of ``kubectl get
    node -o yaml``: what people paste to show that a GPU is in capacity but not allocatable."""
    status = doc.get("status") if isinstance(doc.get("status"), Mapping) else doc
    if not isinstance(status, Mapping) or (status is not doc and set(doc) - {"status", "metadata"}):
        return False
    capacity, allocatable = status.get("capacity"), status.get("allocatable")
    resources = [r for r in (capacity, allocatable) if isinstance(r, Mapping)]
    if not resources or not (len(resources) == 2 or set(map(str, status)) & _NODE_STATUS_KEYS):
        return False
    raw_metadata = doc.get("metadata")
    metadata: dict[str, Any] = dict(raw_metadata) if isinstance(raw_metadata, Mapping) else {}
    if not metadata.get("name"):
        addresses = status.get("addresses")
        hostnames = (
            [
                a.get("address")
                for a in addresses
                if isinstance(a, Mapping)
                and a.get("type") == "Hostname"
                and isinstance(a.get("address"), str)
            ]
            if isinstance(addresses, list)
            else []
        )
        metadata["name"] = hostnames[0] if hostnames else UNNAMED_NODE
    node = {"kind": "Node", "metadata": metadata, "status": dict(status)}
    return _add_kubernetes_object(node, "Node", found)


_TERMINATION_KEYS = frozenset(
    {"containerID", "exitCode", "finishedAt", "startedAt", "reason", "signal", "message"}
)


def _termination_fragment(doc: Mapping[str, Any], found: Found) -> bool:
    """``.status.containerStatuses[0].lastState.terminated`` printed on its own (``yq``, jsonpath):
    how a container died, exit code 137 and ``OOMKilled`` for one out of memory."""
    if "exitCode" not in doc or not set(map(str, doc)) <= _TERMINATION_KEYS:
        return False
    terminated = {k: doc[k] for k in doc}
    status = {
        "name": "(unknown)",
        "ready": False,
        "restartCount": 0,
        "state": {"terminated": terminated},
        "lastState": {"terminated": terminated},
    }
    pod = {"kind": "Pod", "metadata": {"name": UNNAMED_POD}, "status": {"containerStatuses": [status]}}
    return _add_kubernetes_object(pod, "Pod", found)


def read_document(doc: object, found: Found, depth: int = 0) -> bool:
    """Add what one parsed document holds; False when nothing in it was recognised."""
    if depth > 3:
        return False
    if isinstance(doc, list):
        if doc and all(isinstance(item, Mapping) and "groupName" in item for item in doc[:50]):
            return read_document({"workerGroupSpecs": doc}, found, depth + 1)
        results = [read_document(item, found, depth + 1) for item in doc[:_MAX_ITEMS]]
        return any(results)
    if not isinstance(doc, Mapping):
        return False
    kind = doc.get("kind")
    items = doc.get("items")
    if isinstance(items, list):
        default_kind = kind[: -len("List")] if isinstance(kind, str) and kind.endswith("List") else None
        added = False
        for item in items[:_MAX_ITEMS]:
            if isinstance(item, Mapping):
                item_kind = item.get("kind") if isinstance(item.get("kind"), str) else default_kind
                if item_kind and _add_kubernetes_object(item, item_kind, found):
                    added = True
        return added
    if kind == "RayCluster" and str(doc.get("apiVersion", "")).startswith("cluster.ray.io/"):
        kind = None  # the Ray 1.x operator's RayCluster: its ``podTypes`` are node types, read below
    if isinstance(kind, str):
        return _add_kubernetes_object(doc, kind, found)
    if serve_config.looks_like_serve_config(doc):
        return serve_config.read_serve_config(doc, found)
    if serve_status.looks_like_serve_status(doc):
        return serve_status.read_serve_status(doc, found)
    if isinstance(doc.get("available_node_types"), Mapping) or node_types.looks_like_node_types(doc):
        types = node_types.node_types_from(doc)
        for node_type in types:
            found.add_node_type(node_type)
        if types:
            found.recognise(node_types.FORMAT)
        if types or "available_node_types" in doc:
            return bool(types)
    fragment = _raycluster_fragment(doc)
    if fragment is not None:
        return _add_kubernetes_object(fragment, "RayCluster", found)
    values = _helm_values_fragment(doc)
    if values is not None:
        return _add_kubernetes_object(values, "RayCluster", found, HELM_VALUES_FORMAT)
    if isinstance(doc.get("spec"), Mapping) and isinstance(dig(doc, "spec", "containers"), list):
        return _add_kubernetes_object(doc, "Pod", found)
    if isinstance(doc.get("lastState"), Mapping) or isinstance(doc.get("terminated"), Mapping):
        terminated = dig(doc, "lastState", "terminated") or doc.get("terminated")
        return isinstance(terminated, Mapping) and _termination_fragment(terminated, found)
    return _status_fragment(doc, found) or _node_fragment(doc, found) or _termination_fragment(doc, found)
