"""Server-side ``kubectl get`` tables: the ``meta.k8s.io/v1`` Table answers of kube-apiserver.

``kubectl get`` asks the API server for a Table (``Accept: application/json;as=Table;v=v1;
g=meta.k8s.io,...``) and prints its cells; a server that answers a plain list leaves kubectl with
only NAME and AGE. This module is what the loopback server (``tests.support.kube_api``) answers
instead, written from the facts of the real printers:

* Pods, Nodes and Events follow kube-apiserver's table printers (``pkg/printers/internalversion``
  of kubernetes 1.29+): the READY count including restartable init containers (sidecars), the STATUS
  reason (``Init:N/M``, ``Init:<reason>``, ``Init:ExitCode:N``, the waiting or terminated reason of
  a container, ``Signal:N``/``ExitCode:N``, ``SchedulingGated``, ``NotReady``, ``Terminating``,
  ``Unknown`` for a Pod deleted on an unreachable node), RESTARTS with ``(Xm ago)``, and the
  priority-1 columns that only ``-o wide`` shows (IP, NODE, NOMINATED NODE, READINESS GATES; a
  node's addresses, OS image, kernel and runtime; an event's subobject, source, first seen, count
  and name).
* Custom resources follow apiextensions-apiserver's table convertor: NAME, then the CRD's
  ``additionalPrinterColumns`` (a missing value is a null cell, a ``date`` a human age), or a single
  AGE column when the CRD declares none. The KubeRay columns of each release are kept below
  (``KUBERAY_COLUMNS``), read from ``ray-operator/config/crd/bases/*.yaml`` of the tags.

Ages are the apimachinery ``HumanDuration`` of the time since the timestamp, measured at ``now``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

NAME_DESCRIPTION = (
    "Name must be unique within a namespace. Is required when creating resources, although some "
    "resources may allow a client to request the generation of an appropriate name automatically. "
    "Name is primarily intended for creation idempotence and configuration definition. Cannot be "
    "updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"
)
AGE_DESCRIPTION = (
    "CreationTimestamp is a timestamp representing the server time when this object was created."
)


@dataclass(frozen=True)
class Column:
    """One ``TableColumnDefinition``; ``path`` is the CRD column's JSONPath (custom resources only)."""

    name: str
    type: str = "string"
    priority: int = 0
    format: str = ""
    description: str = ""
    path: str = ""

    def definition(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "type": self.type,
            "format": self.format,
            "description": self.description,
            "priority": self.priority,
        }


# --------------------------------------------------------------------------------------------------
# Time


def parse_time(value: object) -> datetime | None:
    """An RFC 3339 timestamp (``metav1.Time`` or ``MicroTime``), or None when absent or unreadable."""
    if not isinstance(value, str) or not value:
        return None
    text = value.replace("Z", "+00:00")
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def human_duration(seconds: float) -> str:
    """apimachinery's ``duration.HumanDuration``: two significant units while they matter."""
    whole = int(seconds)
    if whole < -1:
        return "<invalid>"
    if whole < 0:
        return "0s"
    if whole < 120:
        return f"{whole}s"
    minutes = whole // 60
    if minutes < 10:
        rest = whole % 60
        return f"{minutes}m" if rest == 0 else f"{minutes}m{rest}s"
    if minutes < 180:
        return f"{minutes}m"
    hours = whole // 3600
    if hours < 8:
        rest = minutes % 60
        return f"{hours}h" if rest == 0 else f"{hours}h{rest}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        rest = hours % 24
        return f"{hours // 24}d" if rest == 0 else f"{hours // 24}d{rest}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        days = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if days == 0 else f"{hours // 24 // 365}y{days}d"
    return f"{hours // 24 // 365}y"


def since(value: object, now: datetime) -> str:
    """``translateTimestampSince``: ``<unknown>`` for a zero time, else the age at ``now``."""
    moment = parse_time(value)
    if moment is None:
        return "<unknown>"
    return human_duration((now - moment).total_seconds())


# --------------------------------------------------------------------------------------------------
# Helpers


def _dig(obj: object, *path: str) -> Any:
    current = obj
    for step in path:
        if not isinstance(current, Mapping):
            return None
        current = current.get(step)
    return current


def _list(value: object) -> list[Any]:
    return list(value) if isinstance(value, list) else []


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _condition_true(conditions: object, kind: str) -> bool:
    return any(_dig(c, "type") == kind and _dig(c, "status") == "True" for c in _list(conditions))


# --------------------------------------------------------------------------------------------------
# Pods

POD_COLUMNS: tuple[Column, ...] = (
    Column("Name", format="name", description=NAME_DESCRIPTION),
    Column("Ready", description="The aggregate readiness state of this pod for accepting traffic."),
    Column("Status", description="The aggregate status of the containers in this pod."),
    Column(
        "Restarts",
        description="The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.",
    ),
    Column("Age", description=AGE_DESCRIPTION),
    Column(
        "IP",
        priority=1,
        description="IP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.",
    ),
    Column("Node", priority=1, description="NodeName indicates in which node this pod is scheduled."),
    Column(
        "Nominated Node",
        priority=1,
        description="nominatedNodeName is set only when this pod preempts other pods on the node, but it cannot be scheduled right away as preemption victims receive their graceful termination periods.",
    ),
    Column(
        "Readiness Gates",
        priority=1,
        description='If specified, all readiness gates will be evaluated for pod readiness. A pod is ready when all its containers are ready AND all conditions specified in the readiness gates have status equal to "True" More info: https://git.k8s.io/enhancements/keps/sig-network/580-pod-readiness-gates',
    ),
)

NODE_UNREACHABLE_POD_REASON = "NodeLost"


def _restartable(container: object) -> bool:
    return bool(_dig(container, "restartPolicy") == "Always")


def _finished_at(status: object) -> datetime | None:
    return parse_time(_dig(status, "lastState", "terminated", "finishedAt"))


def _later(current: datetime | None, candidate: datetime | None) -> datetime | None:
    if candidate is None:
        return current
    return candidate if current is None or candidate > current else current


def _terminated_reason(terminated: Mapping[str, Any], prefix: str = "") -> str:
    reason = _str(terminated.get("reason"))
    if reason:
        return prefix + reason
    signal = _int(terminated.get("signal"))
    if signal:
        return f"{prefix}Signal:{signal}"
    return f"{prefix}ExitCode:{_int(terminated.get('exitCode'))}"


def pod_cells(pod: Mapping[str, Any], now: datetime) -> list[Any]:
    """The cells of ``printPod`` (every column, the wide ones included, as the server sends them)."""
    spec = _dig(pod, "spec") or {}
    status = _dig(pod, "status") or {}
    containers = _list(spec.get("containers"))
    init_specs = {_str(_dig(c, "name")): c for c in _list(spec.get("initContainers"))}
    total = len(containers) + sum(1 for c in init_specs.values() if _restartable(c))
    ready = 0
    restarts = 0
    sidecar_restarts = 0
    last_restart: datetime | None = None
    last_sidecar_restart: datetime | None = None

    phase = _str(status.get("phase"))
    reason = _str(status.get("reason")) or phase
    for condition in _list(status.get("conditions")):
        if _dig(condition, "type") == "PodScheduled" and _dig(condition, "reason") == "SchedulingGated":
            reason = "SchedulingGated"

    init_statuses = _list(status.get("initContainerStatuses"))
    initializing = False
    for index, container in enumerate(init_statuses):
        count = _int(_dig(container, "restartCount"))
        restarts += count
        last_restart = _later(last_restart, _finished_at(container))
        sidecar = _restartable(init_specs.get(_str(_dig(container, "name"))))
        if sidecar:
            sidecar_restarts += count
            last_sidecar_restart = _later(last_sidecar_restart, _finished_at(container))
        state = _dig(container, "state") or {}
        terminated = state.get("terminated") if isinstance(state.get("terminated"), Mapping) else None
        waiting = state.get("waiting") if isinstance(state.get("waiting"), Mapping) else None
        if terminated is not None and _int(terminated.get("exitCode")) == 0:
            continue
        if sidecar and _dig(container, "started") is True:
            if _dig(container, "ready") is True:
                ready += 1
            continue
        if terminated is not None:
            reason = _terminated_reason(terminated, "Init:")
        elif waiting is not None and _str(waiting.get("reason")) not in ("", "PodInitializing"):
            reason = "Init:" + _str(waiting.get("reason"))
        else:
            reason = f"Init:{index}/{len(init_specs) or len(init_statuses)}"
        initializing = True
        break

    if not initializing or _condition_true(status.get("conditions"), "Initialized"):
        restarts = sidecar_restarts
        last_restart = last_sidecar_restart
        has_running = False
        for container in reversed(_list(status.get("containerStatuses"))):
            restarts += _int(_dig(container, "restartCount"))
            last_restart = _later(last_restart, _finished_at(container))
            state = _dig(container, "state") or {}
            waiting = state.get("waiting") if isinstance(state.get("waiting"), Mapping) else None
            terminated = state.get("terminated") if isinstance(state.get("terminated"), Mapping) else None
            if waiting is not None and _str(waiting.get("reason")):
                reason = _str(waiting.get("reason"))
            elif terminated is not None:
                reason = _terminated_reason(terminated)
            elif _dig(container, "ready") is True and isinstance(state.get("running"), Mapping):
                has_running = True
                ready += 1
        if reason == "Completed" and has_running:
            reason = "Running" if _condition_true(status.get("conditions"), "Ready") else "NotReady"

    deleting = bool(_dig(pod, "metadata", "deletionTimestamp"))
    if deleting and _str(status.get("reason")) == NODE_UNREACHABLE_POD_REASON:
        reason = "Unknown"
    elif deleting and phase not in ("Succeeded", "Failed"):
        reason = "Terminating"

    restarts_cell = str(restarts)
    if restarts and last_restart is not None:
        restarts_cell = f"{restarts} ({human_duration((now - last_restart).total_seconds())} ago)"

    ips = _list(status.get("podIPs"))
    ip = _str(_dig(ips[0], "ip")) if ips else _str(status.get("podIP"))
    gates = _list(spec.get("readinessGates"))
    gates_cell = "<none>"
    if gates:
        conditions = {_str(_dig(c, "type")): _dig(c, "status") for c in _list(status.get("conditions"))}
        passed = sum(1 for gate in gates if conditions.get(_str(_dig(gate, "conditionType"))) == "True")
        gates_cell = f"{passed}/{len(gates)}"
    return [
        _str(_dig(pod, "metadata", "name")),
        f"{ready}/{total}",
        reason,
        restarts_cell,
        since(_dig(pod, "metadata", "creationTimestamp"), now),
        ip or "<none>",
        _str(spec.get("nodeName")) or "<none>",
        _str(status.get("nominatedNodeName")) or "<none>",
        gates_cell,
    ]


# --------------------------------------------------------------------------------------------------
# Nodes

NODE_COLUMNS: tuple[Column, ...] = (
    Column("Name", format="name", description=NAME_DESCRIPTION),
    Column("Status", description="The status of the node"),
    Column("Roles", description="The roles of the node"),
    Column("Age", description=AGE_DESCRIPTION),
    Column("Version", description="Kubelet Version reported by the node."),
    Column("Internal-IP", priority=1, description="List of addresses reachable to the node."),
    Column("External-IP", priority=1, description="List of addresses reachable to the node."),
    Column(
        "OS-Image",
        priority=1,
        description="OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).",
    ),
    Column(
        "Kernel-Version",
        priority=1,
        description="Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).",
    ),
    Column(
        "Container-Runtime",
        priority=1,
        description="ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2).",
    ),
)
NODE_ROLE_PREFIX = "node-role.kubernetes.io/"
NODE_ROLE_LABEL = "kubernetes.io/role"


def node_roles(node: Mapping[str, Any]) -> list[str]:
    labels = _dig(node, "metadata", "labels") or {}
    roles: set[str] = set()
    for key, value in labels.items():
        if key.startswith(NODE_ROLE_PREFIX) and key[len(NODE_ROLE_PREFIX) :]:
            roles.add(key[len(NODE_ROLE_PREFIX) :])
        elif key == NODE_ROLE_LABEL and value:
            roles.add(str(value))
    return sorted(roles)


def _address(node: Mapping[str, Any], kind: str) -> str:
    for address in _list(_dig(node, "status", "addresses")):
        if _dig(address, "type") == kind and _str(_dig(address, "address")):
            return _str(_dig(address, "address"))
    return "<none>"


def node_cells(node: Mapping[str, Any], now: datetime) -> list[Any]:
    status: list[str] = []
    for condition in _list(_dig(node, "status", "conditions")):
        if _dig(condition, "type") == "Ready":
            status = ["Ready" if _dig(condition, "status") == "True" else "NotReady"]
    if not status:
        status = ["Unknown"]
    if _dig(node, "spec", "unschedulable") is True:
        status.append("SchedulingDisabled")
    info = _dig(node, "status", "nodeInfo") or {}
    return [
        _str(_dig(node, "metadata", "name")),
        ",".join(status),
        ",".join(node_roles(node)) or "<none>",
        since(_dig(node, "metadata", "creationTimestamp"), now),
        _str(info.get("kubeletVersion")),
        _address(node, "InternalIP"),
        _address(node, "ExternalIP"),
        _str(info.get("osImage")) or "<unknown>",
        _str(info.get("kernelVersion")) or "<unknown>",
        _str(info.get("containerRuntimeVersion")) or "<unknown>",
    ]


# --------------------------------------------------------------------------------------------------
# Events

EVENT_COLUMNS: tuple[Column, ...] = (
    Column(
        "Last Seen", description="The time at which the most recent occurrence of this event was recorded."
    ),
    Column(
        "Type", description="Type of this event (Normal, Warning), new types could be added in the future"
    ),
    Column(
        "Reason",
        description="This should be a short, machine understandable string that gives the reason for the transition into the object's current status.",
    ),
    Column("Object", description="The object that this event is about."),
    Column(
        "Subobject",
        priority=1,
        description="If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2].",
    ),
    Column(
        "Source",
        priority=1,
        description="The component reporting this event. Should be a short machine understandable string.",
    ),
    Column("Message", description="A human-readable description of the status of this operation."),
    Column(
        "First Seen",
        priority=1,
        description="The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)",
    ),
    Column("Count", priority=1, description="The number of times this event has occurred."),
    Column("Name", priority=1, format="name", description=NAME_DESCRIPTION),
)


def _event_source(event: Mapping[str, Any]) -> str:
    component = _str(_dig(event, "source", "component")) or _str(event.get("reportingComponent"))
    instance = _str(_dig(event, "source", "host")) or _str(event.get("reportingInstance"))
    return f"{component}, {instance}" if instance else component


def event_cells(event: Mapping[str, Any], now: datetime) -> list[Any]:
    first = since(event.get("firstTimestamp"), now)
    if parse_time(event.get("firstTimestamp")) is None:
        first = since(event.get("eventTime"), now)
    last = since(event.get("lastTimestamp"), now)
    if parse_time(event.get("lastTimestamp")) is None:
        last = first
    count = _int(event.get("count"))
    series = event.get("series")
    if isinstance(series, Mapping):
        last = since(series.get("lastObservedTime"), now)
        count = _int(series.get("count"))
    elif count == 0:
        count = 1  # singleton events of the events.k8s.io API have no count
    involved = event.get("involvedObject") or {}
    kind, name = _str(_dig(involved, "kind")).lower(), _str(_dig(involved, "name"))
    return [
        last,
        _str(event.get("type")),
        _str(event.get("reason")),
        f"{kind}/{name}" if name else kind,
        _str(_dig(involved, "fieldPath")),
        _event_source(event),
        _str(event.get("message")).strip(),
        first,
        count,
        _str(_dig(event, "metadata", "name")),
    ]


# --------------------------------------------------------------------------------------------------
# Custom resources


def _crd(name: str, path: str, kind: str = "string", priority: int = 0) -> Column:
    return Column(
        name,
        type=kind,
        priority=priority,
        description=f"Custom resource definition column (in JSONPath format): {path}",
        path=path,
    )


_RAYCLUSTER_1_0 = (
    _crd("desired workers", ".status.desiredWorkerReplicas", "integer"),
    _crd("available workers", ".status.availableWorkerReplicas", "integer"),
    _crd("status", ".status.state"),
    _crd("age", ".metadata.creationTimestamp", "date"),
    _crd("head pod IP", ".status.head.podIP", priority=1),
    _crd("head service IP", ".status.head.serviceIP", priority=1),
)
_RAYCLUSTER_1_1 = (
    _crd("desired workers", ".status.desiredWorkerReplicas", "integer"),
    _crd("available workers", ".status.availableWorkerReplicas", "integer"),
    _crd("cpus", ".status.desiredCPU"),
    _crd("memory", ".status.desiredMemory"),
    _crd("gpus", ".status.desiredGPU"),
    _crd("tpus", ".status.desiredTPU", priority=1),
    _crd("status", ".status.state"),
    _crd("age", ".metadata.creationTimestamp", "date"),
    _crd("head pod IP", ".status.head.podIP", priority=1),
    _crd("head service IP", ".status.head.serviceIP", priority=1),
)
_RAYJOB_1_1 = (
    _crd("job status", ".status.jobStatus"),
    _crd("deployment status", ".status.jobDeploymentStatus"),
    _crd("start time", ".status.startTime"),
    _crd("end time", ".status.endTime"),
    _crd("age", ".metadata.creationTimestamp", "date"),
)
_RAYJOB_1_2 = (
    _crd("job status", ".status.jobStatus"),
    _crd("deployment status", ".status.jobDeploymentStatus"),
    _crd("ray cluster name", ".status.rayClusterName"),
    _crd("start time", ".status.startTime"),
    _crd("end time", ".status.endTime"),
    _crd("age", ".metadata.creationTimestamp", "date"),
)
_RAYSERVICE_1_1 = (
    _crd("service status", ".status.serviceStatus"),
    _crd("num serve endpoints", ".status.numServeEndpoints"),
)

# KubeRay release → plural → additionalPrinterColumns; () means the CRD declares none (AGE only).
# 0.3/0.4: none; 0.5–1.0: RayCluster only; 1.1 adds resources and the RayJob/RayService columns;
# 1.2 adds RAY CLUSTER NAME to RayJob; unchanged since (checked up to 1.7 and the main branch).
KUBERAY_COLUMNS: dict[str, dict[str, tuple[Column, ...]]] = {
    "0.4": {"rayclusters": (), "rayjobs": (), "rayservices": ()},
    "1.0": {"rayclusters": _RAYCLUSTER_1_0, "rayjobs": (), "rayservices": ()},
    "1.1": {"rayclusters": _RAYCLUSTER_1_1, "rayjobs": _RAYJOB_1_1, "rayservices": _RAYSERVICE_1_1},
    "1.2": {"rayclusters": _RAYCLUSTER_1_1, "rayjobs": _RAYJOB_1_2, "rayservices": _RAYSERVICE_1_1},
}
KUBERAY_LATEST = "1.2"
_DEFAULT_CRD_COLUMNS = (_crd("Age", ".metadata.creationTimestamp", "date"),)


def _json_path(obj: object, path: str) -> object:
    current = obj
    for step in path.strip(".").split("."):
        if not isinstance(current, Mapping) or step not in current:
            return None
        current = current[step]
    return current


def _go_print(value: object) -> str:
    """How client-go's jsonpath prints one value into a string column."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


def crd_cell(column: Column, obj: Mapping[str, Any], now: datetime) -> Any:
    value = _json_path(obj, column.path)
    if value is None:
        return None
    if column.type == "string":
        return _go_print(value)
    if column.type == "integer":
        return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    if column.type == "number":
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    if column.type == "boolean":
        return value if isinstance(value, bool) else None
    if column.type == "date":
        if not isinstance(value, str):
            return None
        moment = parse_time(value)
        return "<invalid>" if moment is None else human_duration((now - moment).total_seconds())
    return None


# --------------------------------------------------------------------------------------------------
# Tables


@dataclass(frozen=True)
class Printer:
    columns: tuple[Column, ...]
    cells: Callable[[Mapping[str, Any], datetime], list[Any]]


def _crd_printer(columns: tuple[Column, ...]) -> Printer:
    chosen = columns or _DEFAULT_CRD_COLUMNS
    name = Column("Name", format="name", description=NAME_DESCRIPTION)

    def cells(obj: Mapping[str, Any], now: datetime) -> list[Any]:
        return [_str(_dig(obj, "metadata", "name")), *(crd_cell(c, obj, now) for c in chosen)]

    return Printer((name, *chosen), cells)


BUILTIN_PRINTERS: dict[tuple[str, str], Printer] = {
    ("", "pods"): Printer(POD_COLUMNS, pod_cells),
    ("", "nodes"): Printer(NODE_COLUMNS, node_cells),
    ("", "events"): Printer(EVENT_COLUMNS, event_cells),
}


def printer_for(group: str, plural: str, kuberay: str = KUBERAY_LATEST) -> Printer | None:
    """The table printer of a resource, or None where the loopback server answers plain lists."""
    if (group, plural) in BUILTIN_PRINTERS:
        return BUILTIN_PRINTERS[(group, plural)]
    if group == "ray.io":
        release = KUBERAY_COLUMNS.get(kuberay)
        if release is None:
            raise ValueError(f"unknown KubeRay release {kuberay!r}; known: {sorted(KUBERAY_COLUMNS)}")
        if plural in release:
            return _crd_printer(release[plural])
    return None


def wants_table(accept: str) -> bool:
    """Whether an Accept header asks for a ``meta.k8s.io`` Table (v1 or v1beta1)."""
    for part in accept.split(","):
        params = {
            key.strip(): value.strip() for key, _, value in (p.partition("=") for p in part.split(";")[1:])
        }
        if params.get("as") == "Table" and params.get("g") == "meta.k8s.io":
            return True
    return False


def _row_object(obj: Mapping[str, Any], include: str, api_version: str, kind: str) -> Any:
    if include == "None":
        return None
    if include == "Object":
        return {
            "kind": kind,
            "apiVersion": api_version,
            **{k: v for k, v in obj.items() if k not in ("kind", "apiVersion")},
        }
    return {
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": obj.get("metadata", {}),
    }


def table(
    printer: Printer,
    objects: Sequence[Mapping[str, Any]],
    *,
    metadata: Mapping[str, Any],
    include_object: str,
    api_version: str,
    kind: str,
    now: datetime | None = None,
    no_headers: bool = False,
) -> dict[str, Any]:
    """A ``meta.k8s.io/v1`` Table of ``objects`` as kube-apiserver writes it."""
    moment = now or datetime.now(UTC)
    rows = []
    for obj in objects:
        row: dict[str, Any] = {"cells": printer.cells(obj, moment)}
        if kind == "Pod":
            phase = _dig(obj, "status", "phase")
            if phase in ("Succeeded", "Failed"):
                row["conditions"] = [
                    {
                        "type": "Completed",
                        "status": "True",
                        "reason": phase,
                        "message": "The pod has completed successfully."
                        if phase == "Succeeded"
                        else "The pod failed.",
                    }
                ]
        row["object"] = _row_object(obj, include_object, api_version, kind)
        rows.append(row)
    return {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": dict(metadata),
        "columnDefinitions": [] if no_headers else [c.definition() for c in printer.columns],
        "rows": rows,
    }
