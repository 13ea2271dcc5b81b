"""A small Kubernetes API server on loopback, for tests: read-only, realistic JSON, injectable faults.

The official ``kubernetes`` client and ``kubectl`` talk to it as to a real API server::

    with serve(ObjectStore.from_bundle(cluster.healthy())) as api:
        config = api.kubeconfig(tmp_path / "kubeconfig")
        kubernetes.config.load_kube_config(config_file=str(config), context="loopback")

What it answers, like kube-apiserver 1.31 does:

* discovery: ``/api``, ``/api/v1``, ``/apis``, ``/apis/{group}``, ``/apis/{group}/{version}``,
  ``/version``, ``/healthz``; a CRD group (``ray.io``, ``kueue.x-k8s.io``) exists only when the
  store holds or installs it, otherwise its paths answer 404;
* lists and gets under ``/api/v1/...`` and ``/apis/{group}/{version}/...``, namespaced or
  cluster-scoped, with ``labelSelector``, ``fieldSelector``, ``limit``/``continue``; list items of
  built-in kinds carry no ``kind``/``apiVersion`` (the real server leaves them out, custom resources
  keep them), unless ``serve(list_item_kinds=True)``;
* ``kubectl get`` tables: a request whose Accept asks for ``as=Table;g=meta.k8s.io`` gets the
  server-side Table of pods, nodes, events and the ray.io resources (``tests.support.kube_printers``:
  kube-apiserver's printers and KubeRay's printer columns of the release ``serve(kuberay=...)``
  names), with ``includeObject`` (``PartialObjectMetadata`` by default, ``Object``, ``None``); ages
  are measured at ``serve(clock=...)``'s time, the real clock by default;
* pod logs at ``/api/v1/namespaces/{ns}/pods/{name}/log`` with ``container``, ``tailLines``,
  ``previous``, ``limitBytes``;
* Status bodies for every failure (404 NotFound, 400 BadRequest, 403 Forbidden, 405, 409, 429...);
* writes only for Leases (``coordination.k8s.io/v1``): create (POST) and update (PUT) with the
  resourceVersion conflict check; every other write answers 405.

Faults (``Fault``) are matched by method and path regex and replace or delay the answer: a Status
with a chosen code, a Retry-After, a body cut in half, an nginx HTML page, or a reset connection.
Everything is stdlib: ``http.server`` in daemon threads, bounded request log, bounded bodies, a
connection cap, and ``stop()`` that returns within 5 s even while faulted requests are sleeping.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import copy
import http.server
import json
import re
import secrets
import socket
import socketserver
import struct
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, NamedTuple
from urllib.parse import parse_qs, unquote, urlsplit

from tests.support import kube_printers

DEFAULT_USER = "system:serviceaccount:raydiag:raydiag"
BASE_RESOURCE_VERSION = 4471600
MAX_REQUEST_BODY = 3 * 1024 * 1024
VERSION_INFO: dict[str, str] = {
    "major": "1",
    "minor": "31",
    "gitVersion": "v1.31.3",
    "gitCommit": "c83cbee114ec00897aa25bc7e3d0ea5a6e8d3e02",
    "gitTreeState": "clean",
    "buildDate": "2024-11-19T13:43:47Z",
    "goVersion": "go1.22.8",
    "compiler": "gc",
    "platform": "linux/amd64",
}
NGINX_502 = (
    "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
    "<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"
)
# What kube-apiserver answers (410, reason Expired) for a continue token older than etcd's compaction.
EXPIRED_CONTINUE = (
    "The provided continue parameter is too old to display a consistent list result. You can start a new "
    "list without the continue parameter, or use the continue token in this response to retrieve the "
    "remainder of the results. Continuing with the provided token results in an inconsistent list - "
    "objects that were created, modified, or deleted between the time the first chunk was returned and "
    "now may show up in the list."
)
ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
BUILTIN_GROUPS = ("", "apps", "networking.k8s.io", "discovery.k8s.io", "coordination.k8s.io")

JSON = "application/json"
TEXT = "text/plain; charset=utf-8"


# --------------------------------------------------------------------------------------------------
# Resources


@dataclass(frozen=True)
class Resource:
    """One API resource: where it is served and how it can be selected."""

    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool = True
    short_names: tuple[str, ...] = ()
    field_labels: frozenset[str] = frozenset()
    subresources: tuple[str, ...] = ()
    builtin: bool = True
    writable: bool = False

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.group, self.version, self.plural)

    @property
    def group_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def qualified(self) -> str:
        """The name the API server uses in messages: ``pods``, ``rayclusters.ray.io``."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    @property
    def singular(self) -> str:
        return self.kind.lower()

    def selectable(self, label: str) -> bool:
        return label in ("metadata.name", "metadata.namespace") or label in self.field_labels


def _resource(
    group: str,
    version: str,
    plural: str,
    kind: str,
    *,
    namespaced: bool = True,
    short: tuple[str, ...] = (),
    fields: Iterable[str] = (),
    sub: tuple[str, ...] = ("status",),
    builtin: bool = True,
    writable: bool = False,
) -> Resource:
    return Resource(
        group, version, plural, kind, namespaced, short, frozenset(fields), sub, builtin, writable
    )


POD_FIELDS = (
    "spec.nodeName",
    "spec.restartPolicy",
    "spec.schedulerName",
    "spec.serviceAccountName",
    "spec.hostNetwork",
    "status.phase",
    "status.podIP",
    "status.nominatedNodeName",
)
EVENT_FIELDS = (
    "involvedObject.kind",
    "involvedObject.namespace",
    "involvedObject.name",
    "involvedObject.uid",
    "involvedObject.apiVersion",
    "involvedObject.resourceVersion",
    "involvedObject.fieldPath",
    "reason",
    "reportingComponent",
    "source",
    "type",
)

DEFAULT_RESOURCES: tuple[Resource, ...] = (
    _resource("", "v1", "namespaces", "Namespace", namespaced=False, short=("ns",), fields=("status.phase",)),
    _resource("", "v1", "nodes", "Node", namespaced=False, short=("no",), fields=("spec.unschedulable",)),
    _resource("", "v1", "pods", "Pod", short=("po",), fields=POD_FIELDS, sub=("log", "status")),
    _resource("", "v1", "events", "Event", short=("ev",), fields=EVENT_FIELDS, sub=()),
    _resource("", "v1", "services", "Service", short=("svc",), fields=("spec.clusterIP", "spec.type")),
    _resource("", "v1", "endpoints", "Endpoints", short=("ep",), sub=()),
    _resource("", "v1", "resourcequotas", "ResourceQuota", short=("quota",)),
    _resource("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", short=("pvc",)),
    _resource("apps", "v1", "daemonsets", "DaemonSet", short=("ds",)),
    _resource("apps", "v1", "deployments", "Deployment", short=("deploy",)),
    _resource("networking.k8s.io", "v1", "networkpolicies", "NetworkPolicy", short=("netpol",), sub=()),
    _resource("discovery.k8s.io", "v1", "endpointslices", "EndpointSlice", sub=()),
    _resource("coordination.k8s.io", "v1", "leases", "Lease", sub=(), writable=True),
    _resource("ray.io", "v1", "rayclusters", "RayCluster", builtin=False),
    _resource("ray.io", "v1", "rayjobs", "RayJob", builtin=False),
    _resource("ray.io", "v1", "rayservices", "RayService", builtin=False),
    _resource("kueue.x-k8s.io", "v1beta1", "workloads", "Workload", short=("wl",), builtin=False),
    _resource("kueue.x-k8s.io", "v1beta1", "localqueues", "LocalQueue", short=("lq", "queue"), builtin=False),
    _resource(
        "kueue.x-k8s.io",
        "v1beta1",
        "clusterqueues",
        "ClusterQueue",
        namespaced=False,
        short=("cq",),
        builtin=False,
    ),
    _resource(
        "kueue.x-k8s.io",
        "v1beta1",
        "resourceflavors",
        "ResourceFlavor",
        namespaced=False,
        short=("rf", "flavor"),
        sub=(),
        builtin=False,
    ),
)

# Bundle keys (tests.support.cluster.Bundle.kubernetes) -> (group, version, plural).
BUNDLE_KEYS: dict[str, tuple[str, str, str]] = {
    "nodes": ("", "v1", "nodes"),
    "namespaces": ("", "v1", "namespaces"),
    "pods": ("", "v1", "pods"),
    "device_plugin_pods": ("", "v1", "pods"),
    "events": ("", "v1", "events"),
    "services": ("", "v1", "services"),
    "endpoints": ("", "v1", "endpoints"),
    "resource_quotas": ("", "v1", "resourcequotas"),
    "pvcs": ("", "v1", "persistentvolumeclaims"),
    "network_policies": ("networking.k8s.io", "v1", "networkpolicies"),
    "endpointslices": ("discovery.k8s.io", "v1", "endpointslices"),
    "endpoint_slices": ("discovery.k8s.io", "v1", "endpointslices"),
    "daemonsets": ("apps", "v1", "daemonsets"),
    "leases": ("coordination.k8s.io", "v1", "leases"),
    "rayclusters": ("ray.io", "v1", "rayclusters"),
    "rayjobs": ("ray.io", "v1", "rayjobs"),
    "rayservices": ("ray.io", "v1", "rayservices"),
    "workloads": ("kueue.x-k8s.io", "v1beta1", "workloads"),
    "localqueues": ("kueue.x-k8s.io", "v1beta1", "localqueues"),
    "clusterqueues": ("kueue.x-k8s.io", "v1beta1", "clusterqueues"),
    "resourceflavors": ("kueue.x-k8s.io", "v1beta1", "resourceflavors"),
}
SYSTEM_NAMESPACES = ("default", "kube-node-lease", "kube-public", "kube-system")


# --------------------------------------------------------------------------------------------------
# Errors and Status bodies


class ApiError(Exception):
    """A failure the server answers with a ``Status`` body."""

    def __init__(
        self,
        code: int,
        reason: str,
        message: str,
        details: Mapping[str, Any] | None = None,
        headers: Iterable[tuple[str, str]] = (),
    ) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = dict(details) if details is not None else None
        self.headers = tuple(headers)

    def body(self) -> dict[str, Any]:
        return status_body(self.code, self.reason, self.message, self.details)


def status_body(
    code: int, reason: str, message: str, details: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """A ``metav1.Status`` failure, keys in the order the API server writes them."""
    body: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
    }
    if reason:
        body["reason"] = reason
    if details is not None:
        body["details"] = dict(details)
    body["code"] = code
    return body


def _not_found_resource() -> ApiError:
    return ApiError(404, "NotFound", "the server could not find the requested resource", {})


def _bad_request(message: str) -> ApiError:
    return ApiError(400, "BadRequest", message)


def _object_details(resource: Resource, name: str | None) -> dict[str, Any]:
    details: dict[str, Any] = {}
    if name:
        details["name"] = name
    if resource.group:
        details["group"] = resource.group
    details["kind"] = resource.plural
    return details


def _not_found(resource: Resource, name: str) -> ApiError:
    return ApiError(
        404, "NotFound", f'{resource.qualified} "{name}" not found', _object_details(resource, name)
    )


# --------------------------------------------------------------------------------------------------
# Selectors


_LABEL_KEY = r"(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?/)?[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?"
_LABEL_VALUE = r"(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?)?"
_EXISTS = re.compile(rf"\s*(!?)\s*({_LABEL_KEY})\s*")
_EQUALITY = re.compile(rf"\s*({_LABEL_KEY})\s*(==|!=|=)\s*({_LABEL_VALUE})\s*")
_SET = re.compile(rf"\s*({_LABEL_KEY})\s+(in|notin)\s*\(([^()]*)\)\s*")


@dataclass(frozen=True)
class LabelRequirement:
    key: str
    operator: Literal["exists", "!exists", "=", "!=", "in", "notin"]
    values: frozenset[str] = frozenset()

    def matches(self, labels: Mapping[str, str]) -> bool:
        present = self.key in labels
        value = labels.get(self.key)
        if self.operator == "exists":
            return present
        if self.operator == "!exists":
            return not present
        if self.operator in ("=", "in"):
            return present and value in self.values
        return not present or value not in self.values


def _split_top_level(text: str) -> list[str]:
    parts: list[str] = []
    depth = 0
    current: list[str] = []
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return parts


def parse_label_selector(text: str) -> list[LabelRequirement]:
    """Equality (``=``, ``==``, ``!=``) and set-based (``in``, ``notin``, ``key``, ``!key``) terms."""
    if not text.strip():
        return []
    requirements: list[LabelRequirement] = []
    for part in _split_top_level(text):
        if match := _EQUALITY.fullmatch(part):
            key, op, value = match.groups()
            requirements.append(LabelRequirement(key, "!=" if op == "!=" else "=", frozenset({value})))
        elif match := _SET.fullmatch(part):
            key, op, raw = match.groups()
            values = [v.strip() for v in raw.split(",")]
            if not any(values) or not all(re.fullmatch(_LABEL_VALUE, v) for v in values):
                raise _bad_request(
                    f"unable to parse requirement: invalid values for '{op}' in {part.strip()!r}"
                )
            requirements.append(LabelRequirement(key, "in" if op == "in" else "notin", frozenset(values)))
        elif match := _EXISTS.fullmatch(part):
            bang, key = match.groups()
            requirements.append(LabelRequirement(key, "!exists" if bang else "exists"))
        else:
            raise _bad_request(
                f"unable to parse requirement: found {part.strip()!r}, expected: identifier, '!', "
                "'=', '==', '!=', 'in' or 'notin'"
            )
    return requirements


@dataclass(frozen=True)
class FieldRequirement:
    field: str
    value: str
    negate: bool = False

    def matches(self, obj: Mapping[str, Any]) -> bool:
        return (field_value(obj, self.field) == self.value) != self.negate


def _split_unescaped(text: str, separator: str) -> list[str]:
    parts: list[str] = []
    current: list[str] = []
    escaped = False
    for char in text:
        if escaped:
            current.append("\\" + char)
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == separator:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return parts


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


def parse_field_selector(text: str, resource: Resource) -> list[FieldRequirement]:
    """``field=value``, ``field==value``, ``field!=value`` terms joined by commas (AND)."""
    if not text.strip():
        return []
    requirements: list[FieldRequirement] = []
    for part in _split_unescaped(text, ","):
        term = part.strip()
        for op in ("!=", "==", "="):
            index = term.find(op)
            if index > 0:
                field, value = term[:index].strip(), _unescape(term[index + len(op) :].strip())
                break
        else:
            raise _bad_request(f"invalid selector: '{text}'; can't understand '{term}'")
        if not resource.selectable(field):
            raise _bad_request(f"field label not supported: {field}")
        requirements.append(FieldRequirement(field, value, negate=op == "!="))
    return requirements


def field_value(obj: Mapping[str, Any], label: str) -> str:
    """The string the API server compares a field selector against."""
    path = ("source", "component") if label == "source" else tuple(label.split("."))
    current: Any = obj
    for step in path:
        current = current.get(step) if isinstance(current, Mapping) else None
    if isinstance(current, bool):
        return "true" if current else "false"
    if current is None:
        return "false" if label in ("spec.unschedulable", "spec.hostNetwork") else ""
    return str(current)


# --------------------------------------------------------------------------------------------------
# The store


def _labels(obj: Mapping[str, Any]) -> Mapping[str, str]:
    labels = obj.get("metadata", {}).get("labels")
    return labels if isinstance(labels, Mapping) else {}


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class ObjectStore:
    """Raw Kubernetes objects by resource, namespace and name, plus pod logs. Thread-safe."""

    def __init__(
        self, resources: Iterable[Resource] = DEFAULT_RESOURCES, *, installed_groups: Iterable[str] = ()
    ) -> None:
        self._lock = threading.RLock()
        self._resources: dict[tuple[str, str, str], Resource] = {}
        self._by_kind: dict[tuple[str, str], Resource] = {}
        self._objects: dict[tuple[str, str, str], dict[tuple[str, str], dict[str, Any]]] = {}
        self._sorted: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
        self._logs: dict[tuple[str, str, str, bool], str] = {}
        self._installed: set[str] = set(installed_groups)
        self._resource_version = BASE_RESOURCE_VERSION
        for resource in resources:
            self.register(resource)

    # Resources and groups ---------------------------------------------------------------------------

    def register(self, resource: Resource) -> None:
        with self._lock:
            self._resources[resource.key] = resource
            self._by_kind[(resource.group_version, resource.kind)] = resource

    def install(self, group: str) -> None:
        """Serve a CRD group (its discovery and lists) even while it holds no object."""
        with self._lock:
            self._installed.add(group)

    def resource(self, group: str, version: str, plural: str) -> Resource | None:
        with self._lock:
            return self._resources.get((group, version, plural))

    def resource_for(self, api_version: str, kind: str) -> Resource | None:
        with self._lock:
            return self._by_kind.get((api_version, kind))

    def serves(self, resource: Resource) -> bool:
        with self._lock:
            return resource.builtin or resource.group in self._installed

    def served_resources(self, group: str | None = None, version: str | None = None) -> list[Resource]:
        with self._lock:
            return [
                r
                for r in self._resources.values()
                if self.serves(r)
                and (group is None or r.group == group)
                and (version is None or r.version == version)
            ]

    def groups(self) -> list[tuple[str, list[str]]]:
        """Served API groups (core ``""`` first, then built-in, then CRD groups) and their versions."""
        versions: dict[str, list[str]] = {}
        for resource in self.served_resources():
            known = versions.setdefault(resource.group, [])
            if resource.version not in known:
                known.append(resource.version)
        order = [g for g in BUILTIN_GROUPS if g in versions] + sorted(
            g for g in versions if g not in BUILTIN_GROUPS
        )
        return [(group, versions[group]) for group in order]

    # Objects ----------------------------------------------------------------------------------------

    @property
    def resource_version(self) -> int:
        with self._lock:
            return self._resource_version

    def add(
        self, obj: Mapping[str, Any], resource: Resource | None = None, *, namespace: str | None = None
    ) -> None:
        """Store a deep copy of ``obj``; its resource comes from ``apiVersion``/``kind`` unless given."""
        if resource is None:
            resource = self.resource_for(str(obj.get("apiVersion", "")), str(obj.get("kind", "")))
            if resource is None:
                raise ValueError(f"no resource registered for {obj.get('apiVersion')!r} {obj.get('kind')!r}")
        stored = copy.deepcopy(dict(obj))
        metadata = stored.setdefault("metadata", {})
        name = metadata.get("name")
        if not isinstance(name, str) or not name:
            raise ValueError(f"a {resource.kind} without metadata.name cannot be stored")
        if resource.namespaced:
            metadata.setdefault("namespace", namespace or "default")
            key = (str(metadata["namespace"]), name)
        else:
            key = ("", name)
        with self._lock:
            if not resource.builtin:
                self._installed.add(resource.group)
            self._objects.setdefault(resource.key, {})[key] = stored
            self._sorted.pop(resource.key, None)
            with contextlib.suppress(TypeError, ValueError):
                self._resource_version = max(self._resource_version, int(metadata.get("resourceVersion")))

    def add_all(self, objects: Iterable[Mapping[str, Any]], resource: Resource | None = None) -> None:
        for obj in objects:
            self.add(obj, resource)

    def get(
        self, group: str, version: str, plural: str, namespace: str | None, name: str
    ) -> dict[str, Any] | None:
        """A deep copy of one object, or None."""
        found = self._get(group, version, plural, namespace, name)
        return copy.deepcopy(found) if found is not None else None

    def objects(
        self, group: str, version: str, plural: str, namespace: str | None = None
    ) -> list[dict[str, Any]]:
        """Deep copies of the objects, ordered by namespace then name."""
        return copy.deepcopy(self._list(group, version, plural, namespace))

    def _get(
        self, group: str, version: str, plural: str, namespace: str | None, name: str
    ) -> dict[str, Any] | None:
        with self._lock:
            return self._objects.get((group, version, plural), {}).get((namespace or "", name))

    def _list(self, group: str, version: str, plural: str, namespace: str | None) -> list[dict[str, Any]]:
        key = (group, version, plural)
        with self._lock:
            ordered = self._sorted.get(key)
            if ordered is None:
                objects = self._objects.get(key, {})
                ordered = [objects[k] for k in sorted(objects)]
                self._sorted[key] = ordered
        if namespace is None:
            return ordered
        return [o for o in ordered if o.get("metadata", {}).get("namespace") == namespace]

    def snapshot(self, resource: Resource, namespace: str | None) -> tuple[list[dict[str, Any]], int]:
        """The stored objects (not copies: stored objects are replaced, never changed) and the list RV."""
        with self._lock:
            return self._list(*resource.key, namespace), self._resource_version

    # Writes (Leases only) ---------------------------------------------------------------------------

    def create(self, resource: Resource, namespace: str, obj: dict[str, Any]) -> dict[str, Any]:
        metadata = obj.setdefault("metadata", {})
        if not isinstance(metadata, dict):
            raise _bad_request("metadata must be an object")
        if metadata.get("namespace") not in (None, "", namespace):
            raise _bad_request(
                "the namespace of the provided object does not match the namespace sent on the request"
            )
        name = metadata.get("name") or ""
        if not name and metadata.get("generateName"):
            name = f"{metadata['generateName']}{secrets.token_hex(3)[:5]}"
        if not isinstance(name, str) or not name:
            raise ApiError(
                422,
                "Invalid",
                f'{resource.kind}.{resource.group} "" is invalid: metadata.name: Required value: name or '
                "generateName is required",
                {"group": resource.group, "kind": resource.kind},
            )
        with self._lock:
            namespaces = self._objects.get(("", "v1", "namespaces"))
            if namespaces and ("", namespace) not in namespaces:
                raise ApiError(
                    404,
                    "NotFound",
                    f'namespaces "{namespace}" not found',
                    {"name": namespace, "kind": "namespaces"},
                )
            if self._get(*resource.key, namespace, name) is not None:
                raise ApiError(
                    409,
                    "AlreadyExists",
                    f'{resource.qualified} "{name}" already exists',
                    _object_details(resource, name),
                )
            self._resource_version += 1
            metadata.update(
                name=name,
                namespace=namespace,
                uid=str(uuid.uuid4()),
                resourceVersion=str(self._resource_version),
                creationTimestamp=_now(),
            )
            obj["apiVersion"], obj["kind"] = resource.group_version, resource.kind
            self.add(obj, resource)
            return copy.deepcopy(obj)

    def update(self, resource: Resource, namespace: str, name: str, obj: dict[str, Any]) -> dict[str, Any]:
        metadata = obj.setdefault("metadata", {})
        if not isinstance(metadata, dict):
            raise _bad_request("metadata must be an object")
        if metadata.get("name") not in (None, "", name):
            raise _bad_request(
                f"the name of the object ({metadata.get('name')}) does not match the name on the URL ({name})"
            )
        if metadata.get("namespace") not in (None, "", namespace):
            raise _bad_request(
                "the namespace of the provided object does not match the namespace sent on the request"
            )
        with self._lock:
            current = self._get(*resource.key, namespace, name)
            if current is None:
                raise _not_found(resource, name)
            sent = metadata.get("resourceVersion")
            if sent and str(sent) != str(current["metadata"].get("resourceVersion")):
                raise ApiError(
                    409,
                    "Conflict",
                    f'Operation cannot be fulfilled on {resource.qualified} "{name}": the object has been '
                    "modified; please apply your changes to the latest version and try again",
                    _object_details(resource, name),
                )
            self._resource_version += 1
            metadata.update(
                name=name,
                namespace=namespace,
                uid=current["metadata"].get("uid"),
                creationTimestamp=current["metadata"].get("creationTimestamp"),
                resourceVersion=str(self._resource_version),
            )
            obj["apiVersion"], obj["kind"] = resource.group_version, resource.kind
            self.add(obj, resource)
            return copy.deepcopy(obj)

    # Logs -------------------------------------------------------------------------------------------

    def set_log(self, namespace: str, pod: str, container: str, text: str, *, previous: bool = False) -> None:
        with self._lock:
            self._logs[(namespace, pod, container, previous)] = text

    def log(self, namespace: str, pod: str, container: str, *, previous: bool = False) -> str | None:
        with self._lock:
            return self._logs.get((namespace, pod, container, previous))

    # Construction -----------------------------------------------------------------------------------

    @classmethod
    def from_bundle(cls, bundle: Any, *, namespaces: bool = True) -> ObjectStore:
        """A store holding every list of a ``tests.support.cluster.Bundle`` and its logs.

        A Ray (or Kueue) key present in the bundle installs that CRD group even when its list is
        empty. With ``namespaces``, Namespace objects are made for the system namespaces and every
        namespace the objects live in.
        """
        store = cls()
        default_namespace = getattr(bundle, "namespace", None) or "default"
        lists: Mapping[str, Any] = bundle.kubernetes
        for key, objects in lists.items():
            if key == "logs":
                continue
            target = BUNDLE_KEYS.get(key)
            resource = store.resource(*target) if target else None
            if resource is not None and not resource.builtin:
                store.install(resource.group)
            for obj in objects:
                store.add(obj, resource, namespace=default_namespace)
        for entry in lists.get("logs", []):
            text = entry.get("text")
            if text is None:
                text = "".join(f"{line}\n" for line in entry.get("lines", []))
            store.set_log(
                str(entry.get("namespace") or default_namespace),
                str(entry["pod"]),
                str(entry.get("container") or ""),
                str(text),
                previous=bool(entry.get("previous", False)),
            )
        if namespaces:
            store.ensure_namespaces()
        store.link_events()
        return store

    def link_events(self) -> None:
        """Give each event the uid of the object it is about, as the recorder that wrote it did.

        ``kubectl describe`` finds an object's events by ``involvedObject.uid``; an event built by
        hand with another uid would be left out of the ``Events:`` section.
        """
        events = self.resource("", "v1", "events")
        assert events is not None
        with self._lock:
            stored = self._objects.get(events.key, {})
            for key, event in list(stored.items()):
                involved = event.get("involvedObject")
                if not isinstance(involved, Mapping):
                    continue
                resource = self.resource_for(
                    str(involved.get("apiVersion") or "v1"), str(involved.get("kind"))
                )
                if resource is None:
                    continue
                namespace = str(involved.get("namespace") or "") if resource.namespaced else ""
                target = self._get(*resource.key, namespace, str(involved.get("name") or ""))
                uid = target.get("metadata", {}).get("uid") if target is not None else None
                if uid and involved.get("uid") != uid:
                    linked = copy.deepcopy(event)
                    linked["involvedObject"]["uid"] = uid
                    stored[key] = linked
            self._sorted.pop(events.key, None)

    def ensure_namespaces(self, *extra: str) -> None:
        """Add an Active Namespace for the system namespaces, ``extra`` and every namespace in use.

        Once the store holds Namespaces, creating a Lease in a namespace it lacks answers 404.
        """
        namespace_resource = self.resource("", "v1", "namespaces")
        assert namespace_resource is not None
        with self._lock:
            used = {*SYSTEM_NAMESPACES, *extra}
            for key, objects in self._objects.items():
                if self._resources[key].namespaced:
                    used.update(ns for ns, _ in objects)
            existing = {name for _, name in self._objects.get(namespace_resource.key, {})}
        for name in sorted(used - existing):
            self.add(
                {
                    "apiVersion": "v1",
                    "kind": "Namespace",
                    "metadata": {
                        "name": name,
                        "uid": str(uuid.uuid5(uuid.NAMESPACE_URL, f"namespace/{name}")),
                        "resourceVersion": "196",
                        "creationTimestamp": "2026-11-30T08:00:00Z",
                        "labels": {"kubernetes.io/metadata.name": name},
                    },
                    "spec": {"finalizers": ["kubernetes"]},
                    "status": {"phase": "Active"},
                },
                namespace_resource,
            )


# --------------------------------------------------------------------------------------------------
# Faults and the request log


@dataclass(frozen=True)
class Fault:
    """Replace or delay the answer to requests whose path matches ``path_regex`` (``re.search``).

    * ``status``: answer this code with a realistic Status body (403 Forbidden naming the verb,
      resource and namespace; 404 NotFound; 429 TooManyRequests; 500 InternalError; ...);
      None keeps the normal answer (use with ``delay_s`` or ``body="truncated"``).
    * ``delay_s``: sleep this long before answering (for client timeouts); ``stop()`` cuts it short.
    * ``retry_after``: a ``Retry-After`` header (seconds); a 429 gets ``1`` when not set.
    * ``body``: ``"truncated"`` sends the first half of the answer's bytes (valid prefix, invalid
      JSON), with a matching Content-Length; ``"html"`` sends an nginx 502 page (status 502 unless
      ``status`` says otherwise).
    * ``reset``: close the connection without answering (TCP RST).
    * ``times``: None for every matching request, N for the first N only.
    * ``method``: HTTP method to match, ``"*"`` for any; ``query_regex`` also matches the raw query.
    * ``message``: the Status message for a ``status`` other than 403, 404, 429 and 500 (those
      build their own), e.g. ``EXPIRED_CONTINUE`` with 410 for an expired ``continue`` token.
    """

    path_regex: str
    status: int | None = None
    delay_s: float = 0.0
    retry_after: int | None = None
    body: Literal["truncated", "html"] | None = None
    times: int | None = None
    method: str = "GET"
    reset: bool = False
    query_regex: str | None = None
    message: str | None = None

    def __post_init__(self) -> None:
        re.compile(self.path_regex)
        if self.query_regex is not None:
            re.compile(self.query_regex)
        if self.status is not None and not 100 <= self.status <= 599:
            raise ValueError(f"status {self.status} is not an HTTP status code")
        if self.body not in (None, "truncated", "html"):
            raise ValueError(f"body must be None, 'truncated' or 'html', not {self.body!r}")
        if self.delay_s < 0 or (self.times is not None and self.times < 0):
            raise ValueError("delay_s and times must not be negative")

    def matches(self, method: str, path: str, query: str) -> bool:
        return (
            self.method in ("*", method)
            and re.search(self.path_regex, path) is not None
            and (self.query_regex is None or re.search(self.query_regex, query) is not None)
        )


class RequestRecord(NamedTuple):
    method: str
    path: str
    query: str
    status: int  # 0: the connection was reset without an answer
    bytes_sent: int  # body bytes
    duration: float  # seconds


class RequestLog:
    """The last ``maxlen`` requests, and all-time totals. Thread-safe."""

    def __init__(self, maxlen: int = 10_000) -> None:
        self._lock = threading.Lock()
        self._records: deque[RequestRecord] = deque(maxlen=maxlen)
        self.total = 0
        self.bytes_total = 0

    def append(self, record: RequestRecord) -> None:
        with self._lock:
            self._records.append(record)
            self.total += 1
            self.bytes_total += record.bytes_sent

    def snapshot(self) -> list[RequestRecord]:
        with self._lock:
            return list(self._records)

    def __len__(self) -> int:
        with self._lock:
            return len(self._records)

    def __iter__(self) -> Iterator[RequestRecord]:
        return iter(self.snapshot())

    def __getitem__(self, index: int) -> RequestRecord:
        with self._lock:
            return self._records[index]

    def count(self, *, method: str | None = None, path: str | None = None, status: int | None = None) -> int:
        """Retained requests matching the method, a path regex (``re.search``) and the status."""
        return sum(
            1
            for r in self.snapshot()
            if (method is None or r.method == method)
            and (path is None or re.search(path, r.path))
            and (status is None or r.status == status)
        )

    def clear(self) -> None:
        with self._lock:
            self._records.clear()
            self.total = 0
            self.bytes_total = 0


# --------------------------------------------------------------------------------------------------
# Responses


@dataclass(frozen=True)
class _Response:
    status: int
    body: bytes = b""
    content_type: str = JSON
    headers: tuple[tuple[str, str], ...] = ()
    reset: bool = False

    @classmethod
    def json(cls, status: int, document: Any, headers: Iterable[tuple[str, str]] = ()) -> _Response:
        data = json.dumps(document, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"
        return cls(status, data, JSON, tuple(headers))

    @classmethod
    def error(cls, error: ApiError) -> _Response:
        return cls.json(error.code, error.body(), error.headers)

    def truncated(self) -> _Response:
        return _Response(self.status, self.body[: len(self.body) // 2], self.content_type, self.headers)


def _flag(params: Mapping[str, str], name: str) -> bool:
    return params.get(name, "").lower() in ("true", "1")


def _int_param(params: Mapping[str, str], name: str, minimum: int) -> int | None:
    raw = params.get(name)
    if raw is None or raw == "":
        return None
    try:
        value = int(raw)
    except ValueError:
        raise _bad_request(f'strconv.ParseInt: parsing "{raw}": invalid syntax') from None
    if value < minimum:
        raise ApiError(
            422, "Invalid", f"{name}: Invalid value: {value}: must be greater than or equal to {minimum}"
        )
    return value


def _encode_continue(resource_version: int, offset: int) -> str:
    raw = json.dumps({"v": "meta.k8s.io/v1", "rv": resource_version, "start": offset}, separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def _decode_continue(token: str) -> int:
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        decoded = json.loads(raw)
        offset = decoded["start"]
        if decoded.get("v") != "meta.k8s.io/v1" or not isinstance(offset, int) or offset < 0:
            raise ValueError(token)
    except (binascii.Error, ValueError, KeyError, TypeError, UnicodeDecodeError):
        raise _bad_request(
            "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)"
        ) from None
    return offset


def _resource_entry(resource: Resource) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "name": resource.plural,
        "singularName": resource.singular,
        "namespaced": resource.namespaced,
        "kind": resource.kind,
        "verbs": list(ALL_VERBS),
    }
    if resource.short_names:
        entry["shortNames"] = list(resource.short_names)
    if resource.kind in ("Pod", "Service", "DaemonSet", "Deployment") or not resource.builtin:
        entry["categories"] = ["all"]
    return entry


def _subresource_entries(resource: Resource) -> list[dict[str, Any]]:
    verbs = {"log": ["get"], "status": ["get", "patch", "update"], "finalize": ["update"]}
    return [
        {
            "name": f"{resource.plural}/{sub}",
            "singularName": "",
            "namespaced": resource.namespaced,
            "kind": resource.kind,
            "verbs": verbs.get(sub, ["get"]),
        }
        for sub in resource.subresources
    ]


@dataclass(frozen=True)
class _Target:
    resource: Resource
    namespace: str | None
    name: str | None
    subresource: str | None

    @property
    def verb(self) -> str:
        return "get" if self.name else "list"


# --------------------------------------------------------------------------------------------------
# The server


class KubeAPI:
    """A running loopback API server. Use ``serve()``; ``stop()`` is idempotent."""

    def __init__(
        self,
        store: ObjectStore,
        *,
        faults: Iterable[Fault] | None = None,
        require_auth: bool = False,
        user: str = DEFAULT_USER,
        list_item_kinds: bool = False,
        max_connections: int = 128,
        log_size: int = 10_000,
        kuberay: str = kube_printers.KUBERAY_LATEST,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        if kuberay not in kube_printers.KUBERAY_COLUMNS:
            raise ValueError(f"unknown KubeRay release {kuberay!r}")
        self.store = store
        self.kuberay = kuberay
        self.clock = clock or (lambda: datetime.now(UTC))
        self.requests = RequestLog(log_size)
        self.require_auth = require_auth
        self.user = user
        self.list_item_kinds = list_item_kinds
        self._fault_lock = threading.Lock()
        self._faults: list[tuple[Fault, list[int | None]]] = []
        for fault in faults or ():
            self.add_fault(fault)
        self._stopping = threading.Event()
        self._server = _HTTPServer(self, max_connections)
        host, port = self._server.server_address[:2]
        self.host, self.port = str(host), int(port)
        self.url = f"http://{self.host}:{self.port}"
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, name="kube-api", daemon=True
        )
        self._thread.start()
        self._stopped = False

    # Control ----------------------------------------------------------------------------------------

    def add_fault(self, fault: Fault) -> None:
        with self._fault_lock:
            self._faults.append((fault, [fault.times]))

    def clear_faults(self) -> None:
        with self._fault_lock:
            self._faults.clear()

    @property
    def faults(self) -> list[Fault]:
        with self._fault_lock:
            return [fault for fault, _ in self._faults]

    def kubeconfig(
        self,
        path: str | Path,
        *,
        context: str = "loopback",
        namespace: str | None = None,
        token: str = "loopback-token",
    ) -> Path:
        """Write a kubeconfig for this server (a directory gets a ``kubeconfig`` file in it)."""
        target = Path(path)
        if target.is_dir():
            target = target / "kubeconfig"
        quote = json.dumps  # a JSON string is a valid YAML double-quoted scalar
        lines = [
            "apiVersion: v1",
            "kind: Config",
            "preferences: {}",
            "clusters:",
            f"- name: {quote(context)}",
            "  cluster:",
            f"    server: {quote(self.url)}",
            "    insecure-skip-tls-verify: true",
            "users:",
            f"- name: {quote(context + '-user')}",
            "  user:",
            f"    token: {quote(token)}",
            "contexts:",
            f"- name: {quote(context)}",
            "  context:",
            f"    cluster: {quote(context)}",
            f"    user: {quote(context + '-user')}",
        ]
        if namespace:
            lines.append(f"    namespace: {quote(namespace)}")
        lines.append(f"current-context: {quote(context)}")
        target.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return target

    def stop(self, timeout: float = 5.0) -> None:
        """Stop accepting, cut open connections and sleeping faults, join all threads."""
        if self._stopped:
            return
        self._stopped = True
        deadline = time.monotonic() + timeout
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()
        for thread in self._server.close_connections():
            thread.join(max(0.0, deadline - time.monotonic()))
        self._thread.join(max(0.0, deadline - time.monotonic()))

    @property
    def stopping(self) -> bool:
        return self._stopping.is_set()

    def __enter__(self) -> KubeAPI:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # Request handling -------------------------------------------------------------------------------

    def _fault_for(self, method: str, path: str, query: str) -> Fault | None:
        with self._fault_lock:
            for fault, remaining in self._faults:
                if remaining[0] == 0 or not fault.matches(method, path, query):
                    continue
                if remaining[0] is not None:
                    remaining[0] -= 1
                return fault
        return None

    def respond(
        self, method: str, path: str, query: str, headers: Mapping[str, str], body: bytes | None
    ) -> _Response:
        """The answer to one request (faults first, then authentication, then the API)."""
        fault = self._fault_for(method, path, query)
        if fault is not None:
            if fault.delay_s and self._stopping.wait(fault.delay_s):
                return _Response(0, reset=True)
            if fault.reset:
                return _Response(0, reset=True)
            if fault.body == "html":
                response = _Response(fault.status or 502, NGINX_502.encode(), "text/html")
            elif fault.status is not None:
                response = _Response.error(self._fault_error(fault, method, path))
            else:
                response = self._answer(method, path, query, headers, body)
            if fault.body == "truncated":
                response = response.truncated()
            retry_after = (
                fault.retry_after if fault.retry_after is not None else (1 if fault.status == 429 else None)
            )
            if retry_after is not None:
                response = _Response(
                    response.status,
                    response.body,
                    response.content_type,
                    (*response.headers, ("Retry-After", str(retry_after))),
                )
            return response
        return self._answer(method, path, query, headers, body)

    def _answer(
        self, method: str, path: str, query: str, headers: Mapping[str, str], body: bytes | None
    ) -> _Response:
        if self.require_auth and not headers.get("authorization", "").lower().startswith("bearer "):
            return _Response.error(ApiError(401, "Unauthorized", "Unauthorized"))
        try:
            params = {k: v[0] for k, v in parse_qs(query, keep_blank_values=True).items()}
            return self._route(method, path, params, body, headers.get("accept", ""))
        except ApiError as error:
            return _Response.error(error)
        except Exception as error:  # a bug here must still answer, not hang the client
            return _Response.error(
                ApiError(
                    500,
                    "InternalError",
                    f"Internal error occurred: {type(error).__name__}: {error}",
                    {"causes": [{"message": f"{type(error).__name__}: {error}"}]},
                )
            )

    def _fault_error(self, fault: Fault, method: str, path: str) -> ApiError:
        status = fault.status or 500
        try:
            target: _Target | None = self._target_of(path)
        except ApiError:
            target = None
        verb = {"POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}.get(
            method, target.verb if target else "get"
        )
        if status == 403:
            if target is None:
                return ApiError(
                    403, "Forbidden", f'forbidden: User "{self.user}" cannot {verb} path "{path}"', {}
                )
            resource = target.resource
            what = f'{resource.qualified} "{target.name}"' if target.name else resource.qualified
            plural = f"{resource.plural}/{target.subresource}" if target.subresource else resource.plural
            scope = f'in the namespace "{target.namespace}"' if target.namespace else "at the cluster scope"
            return ApiError(
                403,
                "Forbidden",
                f'{what} is forbidden: User "{self.user}" cannot {verb} resource "{plural}" in API group '
                f'"{resource.group}" {scope}',
                _object_details(resource, target.name),
            )
        if status == 404:
            if target is not None and target.name:
                return _not_found(target.resource, target.name)
            return _not_found_resource()
        if status == 429:
            seconds = fault.retry_after if fault.retry_after is not None else 1
            return ApiError(
                429,
                "TooManyRequests",
                "Too many requests, please try again later.",
                {"retryAfterSeconds": seconds},
            )
        if status == 500:
            cause = "etcdserver: leader changed"
            return ApiError(
                500, "InternalError", f"Internal error occurred: {cause}", {"causes": [{"message": cause}]}
            )
        known = {
            400: ("BadRequest", "the server rejected our request for an unknown reason"),
            401: ("Unauthorized", "Unauthorized"),
            405: ("MethodNotAllowed", "the server does not allow this method on the requested resource"),
            409: ("Conflict", "the server reported a conflict"),
            410: ("Expired", f"too old resource version: 1 ({self.store.resource_version})"),
            503: ("ServiceUnavailable", "the server is currently unable to handle the request"),
            504: (
                "Timeout",
                "Timeout: request did not complete within requested timeout - context deadline exceeded",
            ),
        }
        reason, message = known.get(
            status,
            ("", f"the server responded with the status code {status} but did not return more information"),
        )
        message = fault.message or message
        return ApiError(status, reason, message, {} if status != 401 else None)

    # Routing ----------------------------------------------------------------------------------------

    def _route(
        self, method: str, path: str, params: Mapping[str, str], body: bytes | None, accept: str = ""
    ) -> _Response:
        parts = [unquote(p) for p in path.split("/") if p]
        if parts and parts[0] in ("api", "apis") and self._is_resource_path(parts):
            return self._resource_request(method, self._target_of(path), params, body, accept)
        if method != "GET":
            raise ApiError(
                405, "MethodNotAllowed", "the server does not allow this method on the requested resource", {}
            )
        if not parts:
            paths = ["/api", "/api/v1", "/apis", "/healthz", "/livez", "/readyz", "/version"]
            for group, versions in self.store.groups():
                if group:
                    paths += [f"/apis/{group}", *(f"/apis/{group}/{v}" for v in versions)]
            return _Response.json(200, {"paths": sorted(paths)})
        if len(parts) == 1 and parts[0] in ("healthz", "livez", "readyz"):
            return _Response(200, b"ok", TEXT)
        if parts == ["version"]:
            return _Response.json(200, VERSION_INFO)
        if parts == ["api"]:
            return _Response.json(
                200,
                {
                    "kind": "APIVersions",
                    "versions": ["v1"],
                    "serverAddressByClientCIDRs": [
                        {"clientCIDR": "0.0.0.0/0", "serverAddress": "10.128.0.2:443"}
                    ],
                },
            )
        if parts == ["api", "v1"]:
            return self._resource_list("", "v1")
        if parts == ["apis"]:
            return _Response.json(
                200,
                {
                    "kind": "APIGroupList",
                    "apiVersion": "v1",
                    "groups": [self._group_document(g, v) for g, v in self.store.groups() if g],
                },
            )
        if parts[0] == "apis" and len(parts) in (2, 3):
            versions = dict(self.store.groups()).get(parts[1]) or []
            if not versions or (len(parts) == 3 and parts[2] not in versions):
                raise _not_found_resource()
            if len(parts) == 2:
                return _Response.json(
                    200, {"kind": "APIGroup", "apiVersion": "v1", **self._group_document(parts[1], versions)}
                )
            return self._resource_list(parts[1], parts[2])
        if parts[0] in ("api", "apis"):
            raise _not_found_resource()
        return _Response(404, b"404 page not found\n", TEXT)

    @staticmethod
    def _is_resource_path(parts: list[str]) -> bool:
        return (parts[0] == "api" and len(parts) >= 3) or (parts[0] == "apis" and len(parts) >= 4)

    @staticmethod
    def _group_document(group: str, versions: list[str]) -> dict[str, Any]:
        entries = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
        return {"name": group, "versions": entries, "preferredVersion": entries[0]}

    def _resource_list(self, group: str, version: str) -> _Response:
        resources = sorted(self.store.served_resources(group, version), key=lambda r: r.plural)
        entries: list[dict[str, Any]] = []
        for resource in resources:
            entries.append(_resource_entry(resource))
            entries.extend(_subresource_entries(resource))
        document: dict[str, Any] = {"kind": "APIResourceList"}
        if group:
            document["apiVersion"] = "v1"
        document.update(groupVersion=f"{group}/{version}" if group else version, resources=entries)
        return _Response.json(200, document)

    def _target_of(self, path: str) -> _Target:
        parts = [unquote(p) for p in path.split("/") if p]
        if parts[:2] == ["api", "v1"]:
            group, version, rest = "", "v1", parts[2:]
        elif parts[:1] == ["apis"] and len(parts) >= 4:
            group, version, rest = parts[1], parts[2], parts[3:]
        else:
            raise _not_found_resource()
        namespace: str | None = None
        if (
            rest[0] == "namespaces"
            and len(rest) >= 3
            and not (len(rest) == 3 and rest[2] in ("status", "finalize"))
        ):
            namespace, rest = rest[1], rest[2:]
        if not 1 <= len(rest) <= 3:
            raise _not_found_resource()
        plural, name, subresource = (
            rest[0],
            rest[1] if len(rest) > 1 else None,
            rest[2] if len(rest) > 2 else None,
        )
        resource = self.store.resource(group, version, plural)
        if resource is None or not self.store.serves(resource):
            raise _not_found_resource()
        if namespace is not None and not resource.namespaced:
            raise _not_found_resource()
        if namespace is None and resource.namespaced and name is not None:
            raise _not_found_resource()
        if subresource is not None and subresource not in resource.subresources:
            raise _not_found_resource()
        return _Target(resource, namespace, name, subresource)

    def _resource_request(
        self, method: str, target: _Target, params: Mapping[str, str], body: bytes | None, accept: str = ""
    ) -> _Response:
        resource = target.resource
        if method == "GET":
            if target.subresource == "log":
                return self._log(target, params)
            printer = self._printer(target, params, accept)
            if target.name is not None:
                found = self.store._get(*resource.key, target.namespace, target.name)
                if found is None:
                    raise _not_found(resource, target.name)
                if printer is not None:
                    metadata = {"resourceVersion": str(found.get("metadata", {}).get("resourceVersion", ""))}
                    return self._table(printer, target, [found], metadata, params)
                return _Response.json(200, found)
            return self._list(target, params, printer)
        if resource.writable and target.subresource is None and target.namespace is not None:
            if method == "POST" and target.name is None:
                return _Response.json(
                    201, self.store.create(resource, target.namespace, self._object_body(body))
                )
            if method == "PUT" and target.name is not None:
                return _Response.json(
                    200, self.store.update(resource, target.namespace, target.name, self._object_body(body))
                )
        raise ApiError(
            405, "MethodNotAllowed", "the server does not allow this method on the requested resource", {}
        )

    @staticmethod
    def _object_body(body: bytes | None) -> dict[str, Any]:
        try:
            obj = json.loads(body or b"")
        except (ValueError, RecursionError):
            raise _bad_request(
                "the body of the request was in an unknown format - accepted media types include: "
                "application/json, application/yaml, application/vnd.kubernetes.protobuf"
            ) from None
        if not isinstance(obj, dict):
            raise _bad_request("the body of the request must be a JSON object")
        return obj

    def _printer(
        self, target: _Target, params: Mapping[str, str], accept: str
    ) -> kube_printers.Printer | None:
        """The Table printer when the client asked for a Table of a resource that has one."""
        if target.subresource is not None or not kube_printers.wants_table(accept):
            return None
        include = params.get("includeObject", "PartialObjectMetadata") or "PartialObjectMetadata"
        if include not in ("None", "Object", "PartialObjectMetadata"):
            raise _bad_request(
                f'Invalid value: "{include}": must be one of "None", "Object", "PartialObjectMetadata"'
            )
        return kube_printers.printer_for(target.resource.group, target.resource.plural, self.kuberay)

    def _table(
        self,
        printer: kube_printers.Printer,
        target: _Target,
        objects: list[dict[str, Any]],
        metadata: Mapping[str, Any],
        params: Mapping[str, str],
    ) -> _Response:
        resource = target.resource
        return _Response.json(
            200,
            kube_printers.table(
                printer,
                objects,
                metadata=metadata,
                include_object=params.get("includeObject") or "PartialObjectMetadata",
                api_version=resource.group_version,
                kind=resource.kind,
                now=self.clock(),
                no_headers=_flag(params, "noHeaders"),
            ),
        )

    def _list(
        self, target: _Target, params: Mapping[str, str], printer: kube_printers.Printer | None = None
    ) -> _Response:
        resource = target.resource
        if _flag(params, "watch"):
            raise _bad_request("watch is not supported by the loopback test API server")
        labels = parse_label_selector(params.get("labelSelector", ""))
        fields = parse_field_selector(params.get("fieldSelector", ""), resource)
        limit = _int_param(params, "limit", 0) or 0
        start = _decode_continue(params["continue"]) if params.get("continue") else 0
        objects, resource_version = self.store.snapshot(resource, target.namespace)
        matched = [
            o
            for o in objects
            if all(r.matches(_labels(o)) for r in labels) and all(f.matches(o) for f in fields)
        ]
        end = min(start + limit, len(matched)) if limit else len(matched)
        page = matched[start:end]
        metadata: dict[str, Any] = {"resourceVersion": str(resource_version)}
        if end < len(matched):
            metadata["continue"] = _encode_continue(resource_version, end)
            if not labels and not fields:
                metadata["remainingItemCount"] = len(matched) - end
        if printer is not None:
            return self._table(printer, target, page, metadata, params)
        if resource.builtin and not self.list_item_kinds:
            page = [{k: v for k, v in o.items() if k not in ("kind", "apiVersion")} for o in page]
        return _Response.json(
            200,
            {
                "kind": f"{resource.kind}List",
                "apiVersion": resource.group_version,
                "metadata": metadata,
                "items": page,
            },
        )

    def _log(self, target: _Target, params: Mapping[str, str]) -> _Response:
        assert target.name is not None and target.namespace is not None
        pod = self.store._get("", "v1", "pods", target.namespace, target.name)
        if pod is None:
            raise _not_found(target.resource, target.name)
        spec = pod.get("spec", {})
        containers = [str(c.get("name")) for c in spec.get("containers", [])]
        init = [str(c.get("name")) for c in spec.get("initContainers", [])]
        ephemeral = [str(c.get("name")) for c in spec.get("ephemeralContainers", [])]
        container = params.get("container", "")
        if not container:
            if len(containers) != 1:
                message = f"a container name must be specified for pod {target.name}, choose one of: [{' '.join(containers)}]"
                if init:
                    message += f" or one of the init containers: [{' '.join(init)}]"
                if ephemeral:
                    message += f" or one of the ephemeral containers: [{' '.join(ephemeral)}]"
                raise _bad_request(message)
            container = containers[0]
        if container not in (*containers, *init, *ephemeral):
            raise _bad_request(f"container {container} is not valid for pod {target.name}")
        tail = _int_param(params, "tailLines", 0)
        limit_bytes = _int_param(params, "limitBytes", 1)
        previous = _flag(params, "previous")
        text = self.store.log(target.namespace, target.name, container, previous=previous)
        if text is None:
            if previous:
                raise _bad_request(
                    f'previous terminated container "{container}" in pod "{target.name}" not found'
                )
            waiting = self._waiting_reason(pod, container)
            if waiting is not None:
                raise _bad_request(
                    f'container "{container}" in pod "{target.name}" is waiting to start: {waiting}'
                )
            text = ""
        data = text.encode()
        if tail is not None:
            lines = data.splitlines(keepends=True)
            data = b"".join(lines[-tail:]) if tail else b""
        if limit_bytes is not None:
            data = data[:limit_bytes]
        return _Response(200, data, TEXT)

    @staticmethod
    def _waiting_reason(pod: Mapping[str, Any], container: str) -> str | None:
        """Why the kubelet has no log for this container, or None (unscheduled pods: an empty log)."""
        if not pod.get("spec", {}).get("nodeName"):
            return None
        status = pod.get("status", {})
        for key in ("containerStatuses", "initContainerStatuses", "ephemeralContainerStatuses"):
            for entry in status.get(key) or []:
                if entry.get("name") == container:
                    state = entry.get("state") or {}
                    if "running" in state or "terminated" in state:
                        return None
                    return str((state.get("waiting") or {}).get("reason") or "ContainerCreating")
        return "ContainerCreating"


class _BodyTooLarge(Exception):
    pass


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # As Go's net/http (the API server): TCP_NODELAY, so a body written after its headers does not
    # wait 40 ms for the client's delayed ACK.
    disable_nagle_algorithm = True
    timeout = 60  # idle keep-alive connections end after this many seconds (stop() ends them at once)
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:  # the log is RequestLog
        return

    def send_response(self, code: int, message: str | None = None) -> None:
        self.send_response_only(code, message)
        self.send_header("Date", self.date_time_string())

    def _read_body(self) -> bytes | None:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            raise _BodyTooLarge("chunked request bodies are not supported by the loopback API server")
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_REQUEST_BODY:
            raise _BodyTooLarge(f"Request entity too large: limit is {MAX_REQUEST_BODY}")
        return self.rfile.read(length) if length > 0 else None

    def _handle(self, method: str) -> None:
        api = self.server.api
        started = time.monotonic()
        split = urlsplit(self.path)
        recorded = False

        def record(status: int, sent: int) -> None:
            nonlocal recorded
            recorded = True
            duration = time.monotonic() - started
            api.requests.append(RequestRecord(method, split.path, split.query, status, sent, duration))

        try:
            try:
                body = self._read_body()
            except (_BodyTooLarge, ValueError) as error:
                self.close_connection = True
                code = 413 if "too large" in str(error) else 400
                reason = "RequestEntityTooLarge" if code == 413 else "BadRequest"
                response = _Response.error(ApiError(code, reason, str(error)))
            else:
                headers = {k.lower(): v for k, v in self.headers.items()}
                response = api.respond(method, split.path, split.query, headers, body)
            # Recorded before the answer leaves, so a client that got its answer sees it counted.
            record(0 if response.reset else response.status, len(response.body))
            if response.reset:
                self._reset()
            else:
                self._send(response)
        except OSError:  # the client went away (reset, broken pipe, timeout)
            self.close_connection = True
        finally:
            if not recorded:
                record(0, 0)

    def _send(self, response: _Response) -> None:
        self.send_response(response.status)
        self.send_header("Audit-Id", str(uuid.uuid4()))
        self.send_header("Cache-Control", "no-cache, private")
        self.send_header("Content-Type", response.content_type)
        self.send_header("X-Kubernetes-Pf-Flowschema-Uid", "3a1f6b8e-53a9-4c6e-9a7b-2d0c5e6f7a81")
        self.send_header("X-Kubernetes-Pf-Prioritylevel-Uid", "9c4d2e1f-0b7a-4e3c-8d5f-6a2b1c0d9e8f")
        for name, value in response.headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(response.body)))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(response.body)

    def _reset(self) -> None:
        """Close the connection with a TCP RST and no answer."""
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        with contextlib.suppress(OSError):
            self.connection.close()

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def do_PUT(self) -> None:
        self._handle("PUT")

    def do_PATCH(self) -> None:
        self._handle("PATCH")

    def do_DELETE(self) -> None:
        self._handle("DELETE")


class _HTTPServer(http.server.HTTPServer):
    """One daemon thread per connection, at most ``max_connections``, all tracked for ``stop()``."""

    daemon_threads = True

    def __init__(self, api: KubeAPI, max_connections: int) -> None:
        self.api = api
        self.max_connections = max_connections
        self._connections_lock = threading.Lock()
        self._connections: dict[threading.Thread, socket.socket] = {}
        super().__init__(("127.0.0.1", 0), _Handler)

    def server_bind(self) -> None:
        # HTTPServer.server_bind resolves the host name (getfqdn), which can stall without DNS.
        socketserver.TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name, self.server_port = str(host), int(port)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._connections_lock:
            if self.api.stopping or len(self._connections) >= self.max_connections:
                self.shutdown_request(request)
                return
            thread = threading.Thread(
                target=self._serve_connection,
                args=(request, client_address),
                name="kube-api-conn",
                daemon=True,
            )
            self._connections[thread] = request
        thread.start()

    def _serve_connection(self, request: Any, client_address: Any) -> None:
        try:
            self.finish_request(request, client_address)
        except Exception:
            pass  # a client that went away mid-request is not a server failure
        finally:
            self.shutdown_request(request)
            with self._connections_lock:
                self._connections.pop(threading.current_thread(), None)

    def handle_error(self, request: Any, client_address: Any) -> None:
        return

    def close_connections(self) -> list[threading.Thread]:
        with self._connections_lock:
            connections = list(self._connections.items())
        for _, sock in connections:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        return [thread for thread, _ in connections]


def start(
    store: ObjectStore,
    *,
    faults: Iterable[Fault] | None = None,
    require_auth: bool = False,
    user: str = DEFAULT_USER,
    list_item_kinds: bool = False,
    max_connections: int = 128,
    log_size: int = 10_000,
    kuberay: str = kube_printers.KUBERAY_LATEST,
    clock: Callable[[], datetime] | None = None,
) -> KubeAPI:
    """Start a server on a free loopback port; the caller must ``stop()`` it."""
    return KubeAPI(
        store,
        faults=faults,
        require_auth=require_auth,
        user=user,
        list_item_kinds=list_item_kinds,
        max_connections=max_connections,
        log_size=log_size,
        kuberay=kuberay,
        clock=clock,
    )


@contextlib.contextmanager
def serve(
    store: ObjectStore,
    *,
    faults: Iterable[Fault] | None = None,
    require_auth: bool = False,
    user: str = DEFAULT_USER,
    list_item_kinds: bool = False,
    max_connections: int = 128,
    log_size: int = 10_000,
    kuberay: str = kube_printers.KUBERAY_LATEST,
    clock: Callable[[], datetime] | None = None,
) -> Iterator[KubeAPI]:
    """A running server for the ``with`` block; stopped (threads joined) on exit."""
    api = start(
        store,
        faults=faults,
        require_auth=require_auth,
        user=user,
        list_item_kinds=list_item_kinds,
        max_connections=max_connections,
        log_size=log_size,
        kuberay=kuberay,
        clock=clock,
    )
    try:
        yield api
    finally:
        api.stop()
