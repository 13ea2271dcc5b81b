"""``kubectl describe pod`` and ``kubectl describe node`` output.

Describe output is the richest thing people paste about a stuck pod (requests, node selectors,
tolerations, container states and the scheduler's events) and about a node (labels, taints,
capacity and allocatable). It is indentation-structured text, so it is first read into a small
tree of ``Key: value`` entries and then turned into the same raw API shape that ``kubectl get -o
json`` returns, which the shared readers in ``bot.read.kubernetes_json`` then normalise: one
place decides what a pod's effective request is, whatever the source.

Pastes are partial: a node's ``Capacity:`` block alone, several objects back to back, or a
describe of another kind. A node without a ``Name:`` gets a placeholder name (see ``assemble``);
describes of other kinds contribute only their events.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from bot.read.columns import header_columns, slice_row
from bot.read.counts import count_or, parse_count
from bot.read.formats import Format, Tag
from bot.read.found import Found, PodRecord, PodSource
from bot.read.kubectl_events import format_of, parse_describe_events, read_bare
from bot.read.kubernetes_json import node_from_json, pod_from_json
from bot.read.protocol import Block, Paste, Reader

POD_FORMAT = Format("kubectl describe pod", Tag.KUBECTL_DESCRIBE_POD)
NODE_FORMAT = Format("kubectl describe node", Tag.KUBECTL_DESCRIBE_NODE)
OTHER_FORMAT = Format("kubectl describe", Tag.KUBECTL_EVENTS)
UNNAMED_NODE = "(pasted node)"


def numbered_unnamed_node(number: int) -> str:
    """The name of one of several nodes pasted without ``Name:``."""
    return f"(pasted node {number})"


_NODE_KEYS = frozenset(
    {
        "Roles",
        "Taints",
        "Unschedulable",
        "Addresses",
        "Capacity",
        "Allocatable",
        "System Info",
        "PodCIDR",
        "PodCIDRs",
        "ProviderID",
        "Non-terminated Pods",
        "Allocated resources",
        "Lease",
    }
)
_POD_KEYS = frozenset(
    {
        "Containers",
        "Init Containers",
        "Node",
        "Start Time",
        "QoS Class",
        "Node-Selectors",
        "Tolerations",
        "Controlled By",
        "Service Account",
        "Priority",
        "Priority Class Name",
        "Volumes",
        "Ephemeral Containers",
        # Kubernetes 1.0 to 1.4 wrote these for a pod.
        "Image(s)",
        "Replication Controllers",
        "Created By",
        "Controllers",
    }
)
_SHARED_KEYS = frozenset(
    {
        "Name",
        "Namespace",
        "Labels",
        "Annotations",
        "Status",
        "Reason",
        "Message",
        "IP",
        "IPs",
        "Conditions",
        "Events",
        "CreationTimestamp",
        "Runtime Class Name",
        "Nominated Node Name",
        "Readiness Gates",
        "Topology Spread Constraints",
        "Scheduling Gates",
        "Termination Grace Period",
        "SeccompProfile",
        "Overhead",
        "API Version",
        "Kind",
        "Metadata",
        "Spec",
        "Selector",
        "Type",
        "Finalizers",
    }
)
_ALL_KEYS = _NODE_KEYS | _POD_KEYS | _SHARED_KEYS
_START_KEYS = (_NODE_KEYS | _POD_KEYS | {"Name", "Labels", "Conditions", "Events"}) - {
    "Node",
    "Priority",
    "Volumes",
    "Lease",
}
_TOP_KEY = re.compile(r"^([A-Z][A-Za-z-]*(?:\(s\))?(?: [A-Za-z-]+)*):(?:\s|$)")
_ENTRY = re.compile(r"^([A-Za-z][\w ./()-]*?):(?:\s+(.*))?$")
_TAINT = re.compile(r"^(?P<key>[^=:\s]+)(?:=(?P<value>[^:\s]*))?:(?P<effect>\w+)$")
_TOLERATION = re.compile(
    r"^(?P<key>[^=:\s]*)(?:=(?P<value>[^:\s]*))?(?::(?P<effect>\w+))?(?:\s+op=(?P<op>\w+))?(?:\s+for\s+\d+s)?$"
)
_NONE = {"<none>", "<unset>", ""}


def _top_key(line: str) -> str | None:
    match = _TOP_KEY.match(line)
    return match.group(1) if match else None


def is_start(lines: Sequence[str], i: int) -> bool:
    # ``Unschedulable: 0/2 nodes are available: ...`` is a scheduler message quoted after its
    # condition reason, not the ``Unschedulable:`` field of a node.
    return _top_key(lines[i]) in _START_KEYS and read_bare(lines[i]) is None


def extent(lines: Sequence[str], start: int) -> int:
    end = start + 1
    last = start
    while end < len(lines):
        line = lines[end]
        if not line.strip():
            end += 1
            continue
        if (line[:1].isspace() and end == last + 1) or _top_key(line) in _ALL_KEYS:
            last = end
        else:
            break
        end += 1
    return last + 1


@dataclass
class _Entry:
    raw: str
    indent: int
    key: str | None
    value: str
    children: list[_Entry] = field(default_factory=list)

    @property
    def text(self) -> str:
        return self.raw.strip()

    def child(self, key: str) -> _Entry | None:
        return next((c for c in self.children if c.key == key), None)

    def child_value(self, key: str) -> str | None:
        entry = self.child(key)
        return entry.value if entry else None

    def descendants(self) -> list[str]:
        lines: list[str] = []
        stack = list(reversed(self.children))
        while stack:
            entry = stack.pop()
            lines.append(entry.raw)
            stack.extend(reversed(entry.children))
        return lines

    def values(self) -> list[str]:
        """A multi-line value (Labels, Taints, Tolerations): the first line and its continuations."""
        found = [self.value.strip()] if self.value.strip() not in _NONE else []
        found += [line.strip() for line in self.descendants() if line.strip() not in _NONE]
        return found

    def mapping(self) -> dict[str, str]:
        return {c.key: c.value for c in self.children if c.key and c.value}


def _tree(lines: Sequence[str]) -> list[_Entry]:
    roots: list[_Entry] = []
    stack: list[_Entry] = []
    for raw in lines:
        if not raw.strip():
            continue
        indent = len(raw) - len(raw.lstrip())
        match = _ENTRY.match(raw.strip())
        entry = _Entry(
            raw=raw,
            indent=indent,
            key=match.group(1) if match else None,
            value=(match.group(2) or "").strip() if match else "",
        )
        while stack and stack[-1].indent >= indent:
            stack.pop()
        (stack[-1].children if stack else roots).append(entry)
        stack.append(entry)
    return roots


def _split_objects(lines: Sequence[str]) -> list[list[str]]:
    """Objects back to back: a new one starts at ``Name:`` or when a top-level key repeats."""
    chunks: list[list[str]] = []
    seen: set[str] = set()
    for line in lines:
        key = _top_key(line)
        if key is not None and (key == "Name" or key in seen) and chunks and any(s != "Name" for s in seen):
            chunks.append([])
            seen = set()
        if not chunks:
            chunks.append([])
        if key is not None:
            seen.add(key)
        chunks[-1].append(line)
    return chunks


def _labels(entry: _Entry | None) -> dict[str, str]:
    labels: dict[str, str] = {}
    for item in entry.values() if entry else []:
        key, sep, value = item.partition("=")
        if sep and key:
            labels[key.strip()] = value.strip()
    return labels


def _conditions(entry: _Entry | None) -> list[dict[str, str]]:
    if entry is None:
        return []
    rows = [line for line in entry.descendants() if line.strip() and not set(line.strip()) <= {"-", " "}]
    if not rows:
        return []
    columns = header_columns(rows[0]) if rows[0].split()[:1] == ["Type"] else []
    conditions = []
    for row in rows[1:] if columns else rows:
        values = slice_row(row, columns) if columns else None
        tokens = row.split()
        if values and values.get("Status") in {"True", "False", "Unknown"}:
            condition = {"type": values["Type"], "status": values["Status"]}
            for name in ("Reason", "Message"):
                if values.get(name):
                    condition[name.lower()] = values[name]
        elif len(tokens) >= 2 and tokens[1] in {"True", "False", "Unknown"}:
            condition = {"type": tokens[0], "status": tokens[1]}
        else:
            continue
        conditions.append(condition)
    return conditions


def _events(
    entry: _Entry | None, namespace: str | None, kind: str | None, name: str | None, found: Found
) -> None:
    if entry is None:
        return
    events, _ = parse_describe_events(entry.descendants(), 0, namespace, kind, name)
    for event in events:
        found.add_event(event)
        found.recognise(format_of(event))


def _tolerations(entry: _Entry | None) -> list[dict[str, str]]:
    tolerations = []
    for item in entry.values() if entry else []:
        if item.startswith("op="):
            tolerations.append({"operator": item[3:].split()[0]})
            continue
        match = _TOLERATION.match(item)
        if match is None:
            continue
        toleration = {"key": match.group("key"), "operator": match.group("op") or "Equal"}
        if match.group("value") is not None:
            toleration["value"] = match.group("value")
        if match.group("effect"):
            toleration["effect"] = match.group("effect")
        tolerations.append({k: v for k, v in toleration.items() if v != ""})
    return tolerations


def _containers(entry: _Entry | None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    specs: list[dict[str, Any]] = []
    statuses: list[dict[str, Any]] = []
    for container in entry.children if entry else []:
        if not container.key or container.value:
            continue
        resources: dict[str, dict[str, str]] = {}
        for section in ("Limits", "Requests"):
            block = container.child(section)
            if block is not None:
                resources[section.lower()] = block.mapping()
        image = container.child_value("Image")
        specs.append({"name": container.key, "image": image, "resources": resources})
        status: dict[str, Any] = {
            "name": container.key,
            "image": image,
            "ready": container.child_value("Ready") == "True",
            "restartCount": count_or(container.child_value("Restart Count"), 0),
        }
        state = container.child("State")
        if state is not None and state.value:
            detail = state.mapping()
            status["state"] = {
                state.value.split()[0].lower(): {
                    "reason": detail.get("Reason"),
                    "message": detail.get("Message"),
                    "exitCode": parse_count(detail.get("Exit Code")),
                }
            }
        last = container.child("Last State")
        if last is not None and last.value.startswith("Terminated"):
            status["lastState"] = {"terminated": {"reason": last.mapping().get("Reason")}}
        statuses.append(status)
    return specs, statuses


def _pod(top: dict[str, _Entry], found: Found, namespace: str | None) -> None:
    name = top["Name"].value if "Name" in top else ""
    ns_entry = top.get("Namespace")
    ns = ns_entry.value if ns_entry and ns_entry.value else namespace
    node_value = top["Node"].value if "Node" in top else ""
    node_name, _, host_ip = node_value.partition("/")
    status_value = top["Status"].value if "Status" in top else ""
    phase = status_value.split()[0] if status_value else ""
    containers, statuses = _containers(top.get("Containers"))
    init_containers, init_statuses = _containers(top.get("Init Containers"))
    controlled = top["Controlled By"].value if "Controlled By" in top else ""
    owner_kind, _, owner_name = controlled.partition("/")
    raw: dict[str, Any] = {
        "metadata": {
            "name": name,
            "namespace": ns,
            "labels": _labels(top.get("Labels")),
            "ownerReferences": [{"kind": owner_kind, "name": owner_name, "controller": True}]
            if owner_name
            else [],
        },
        "spec": {
            "nodeName": node_name if node_name not in _NONE else None,
            "containers": containers,
            "initContainers": init_containers,
            "nodeSelector": _labels(top.get("Node-Selectors")),
            "tolerations": _tolerations(top.get("Tolerations")),
        },
        "status": {
            "phase": "Running" if phase == "Terminating" else phase or None,
            "podIP": top["IP"].value if "IP" in top and top["IP"].value not in _NONE else None,
            "hostIP": host_ip or None,
            "conditions": _conditions(top.get("Conditions")),
            "containerStatuses": statuses,
            "initContainerStatuses": init_statuses,
            "reason": top["Reason"].value if "Reason" in top else None,
            "message": top["Message"].value if "Message" in top else None,
        },
    }
    if phase == "Terminating":
        raw["metadata"]["deletionTimestamp"] = "(terminating)"
    pod = pod_from_json(raw) if name else None
    if pod is not None:
        found.add_pod(PodRecord(pod=pod, source=PodSource.DESCRIBE, namespace_known=bool(ns)))
        found.recognise(POD_FORMAT)
    else:
        _keep_gpu_lines(top, found)
    _events(top.get("Events"), ns, "Pod" if name else None, name or None, found)


# Spec fields of a pod whose describe was pasted without its ``Name:`` (a Tolerations block beside a
# node's Capacity, say): no pod can be built, but what they say about GPUs is kept as text.
_GPU_SPEC_KEYS = ("Tolerations", "Node-Selectors", "Containers", "Init Containers")


def _keep_gpu_lines(top: dict[str, _Entry], found: Found) -> None:
    for key in _GPU_SPEC_KEYS:
        entry = top.get(key)
        if entry is None:
            continue
        for line in (entry.raw, *entry.descendants()):
            if "nvidia.com/gpu" in line:
                found.add_text(line)


def _taints(entry: _Entry | None) -> list[dict[str, str]]:
    taints = []
    for item in entry.values() if entry else []:
        match = _TAINT.match(item)
        if match:
            taints.append(
                {
                    "key": match.group("key"),
                    "value": match.group("value") or "",
                    "effect": match.group("effect"),
                }
            )
    return taints


def _node(top: dict[str, _Entry], found: Found) -> None:
    name = top["Name"].value if "Name" in top and top["Name"].value else ""
    addresses = top.get("Addresses")
    raw = {
        "metadata": {"name": name or UNNAMED_NODE, "labels": _labels(top.get("Labels"))},
        "spec": {
            "taints": _taints(top.get("Taints")),
            "unschedulable": "Unschedulable" in top and top["Unschedulable"].value.lower() == "true",
        },
        "status": {
            "capacity": top["Capacity"].mapping() if "Capacity" in top else {},
            "allocatable": top["Allocatable"].mapping() if "Allocatable" in top else {},
            "addresses": [{"type": k, "address": v} for k, v in addresses.mapping().items()]
            if addresses
            else [],
            "conditions": _conditions(top.get("Conditions")),
        },
    }
    node = node_from_json(raw)
    if node is not None:
        found.add_node(node, named=bool(name))
        found.recognise(NODE_FORMAT)
    _events(top.get("Events"), None, "Node", name or None, found)


def parse(lines: Sequence[str], found: Found, namespace: str | None) -> list[str]:
    """Add the pods, nodes and events of a describe block; return the lines of unknown sections."""
    leftover: list[str] = []
    for chunk in _split_objects(lines):
        top: dict[str, _Entry] = {}
        for entry in _tree(chunk):
            if entry.key in _ALL_KEYS and entry.indent == 0:
                top.setdefault(entry.key, entry)
            else:
                leftover.append(entry.raw)
                leftover.extend(entry.descendants())
        keys = set(top)
        if "Kind" in keys or "API Version" in keys:
            kind = top["Kind"].value if "Kind" in top else None
            name = top["Name"].value if "Name" in top else None
            ns = top["Namespace"].value if "Namespace" in top else namespace
            _events(top.get("Events"), ns, kind, name, found)
            found.recognise(OTHER_FORMAT)
        elif keys & _NODE_KEYS and keys & {"Containers", "Init Containers"}:
            # A pod's describe with its node's Capacity and Conditions pasted straight below it
            # (old kubectl printed them with no ``Name:`` of their own): both are read.
            _pod(top, found, namespace)
            _node({k: v for k, v in top.items() if k in _NODE_KEYS}, found)
        elif keys & _NODE_KEYS:
            _node(top, found)
            # A pod's Tolerations pasted just above a node's Capacity, with no ``Name:`` between.
            _keep_gpu_lines(top, found)
        elif keys & _POD_KEYS:
            _pod(top, found, namespace)
        elif "Events" in keys:
            name = top["Name"].value if "Name" in top else None
            _events(top.get("Events"), namespace, None, name, found)
    return leftover


def _read(lines: Sequence[str], i: int, paste: Paste) -> Block:
    end = extent(lines, i)
    return Block(end, leftover=parse(lines[i:end], paste.found, paste.namespace))


READER = Reader("kubectl-describe", starts=is_start, read=_read)
