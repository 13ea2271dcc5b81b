"""Resolving what the parsers found into one Snapshot.

Some facts only exist across blocks of a paste, so they are settled here, once:

* the same pod seen as a table row, in a describe and in a manifest is one pod, built from the
  richest source with the gaps filled from the others (a row without a NAMESPACE column matches a
  pod of the same name in any namespace);
* a scheduler message with no object (a bare ``0/3 nodes are available`` or an event row copied
  without its OBJECT column) is about the one pending pod in the paste, if there is exactly one
  (or about the only pod, if there is only one); otherwise it stays unattached rather than guessed;
* a pod manifest without ``status`` is ``Pending`` when a scheduler message refers to it (the user
  pasted it because it does not schedule) and ``Unknown`` otherwise;
* nodes pasted without a name are named ``(pasted node)``, numbered when there are several, and the
  node list is never complete: a paste shows some nodes, never provably all of them;
* a pod known only from a ``kubectl get pods`` row has no labels, yet its name says which Ray node
  it is when KubeRay made it: the operator names the head ``<cluster>-head-<suffix>`` and workers
  ``<cluster>-<group>-worker-<suffix>`` (before KubeRay 1.0 ``<cluster>-worker-<group>-<suffix>``).
  Those pods get the ``ray.io/node-type``, ``ray.io/cluster`` and ``ray.io/group`` labels the
  operator would have set, but only when the paste shows a Ray cluster (Ray's own output, a KubeRay
  object, or a head with workers of the same cluster), so that a ``spark-worker`` is left alone.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import replace
from typing import Any, TypeVar

from bot.read import constructor_calls, kubelet_message, python_code
from bot.read.found import Found, PodRecord
from bot.read.kubectl_describe import numbered_unnamed_node
from bot.read.manifests import UNNAMED_POD
from bot.snapshot.base import Record, defaults
from bot.snapshot.kubernetes import Condition, ContainerStatus, Event, KubernetesState, Node, Pod
from bot.snapshot.model import Snapshot
from bot.snapshot.ray import RayNode, RayState, TuneTrials
from bot.snapshot.stated import Stated

NOTHING_RECOGNISED = "no known output format recognised"
_SCHEDULING_REASONS = frozenset({"FailedScheduling", "NotTriggerScaleUp", "TriggeredScaleUp"})

M = TypeVar("M", bound=Record)


def _fill(primary: M, other: M) -> M:
    """``primary`` with each field it left at its default taken from ``other``."""
    updates: dict[str, Any] = {}
    for name, default in defaults(type(primary)).items():
        mine, theirs = getattr(primary, name), getattr(other, name)
        if mine == default and theirs != default:
            updates[name] = theirs
    return replace(primary, **updates) if updates else primary


def _merge_pods(records: list[PodRecord]) -> list[PodRecord]:
    groups: dict[tuple[str, str], list[PodRecord]] = {}
    by_name: dict[str, list[tuple[str, str]]] = {}
    for record in records:
        if record.namespace_known:
            key = (record.pod.namespace, record.pod.name)
            if key not in groups:
                by_name.setdefault(record.pod.name, []).append(key)
            groups.setdefault(key, []).append(record)
    for record in records:
        if record.namespace_known:
            continue
        known = by_name.get(record.pod.name, [])
        key = known[0] if len(known) == 1 else (record.pod.namespace, record.pod.name)
        groups.setdefault(key, []).append(record)
    merged: list[PodRecord] = []
    for group in groups.values():
        # The richest source first; among equals the latest, as in ``kubectl get pods -w`` output.
        ranked = sorted(reversed(group), key=lambda r: r.source, reverse=True)
        pod = ranked[0].pod
        for other in ranked[1:]:
            pod = _fill(pod, other.pod)
        merged.append(
            PodRecord(
                pod=pod,
                source=ranked[0].source,
                namespace_known=any(r.namespace_known for r in ranked),
                has_status=any(r.has_status for r in ranked),
            )
        )
    return merged


def _attach_events(events: list[Event], records: list[PodRecord]) -> list[Event]:
    pending = [r.pod for r in records if r.pod.phase == "Pending" or not r.has_status]
    target: Pod | None = None
    if len(pending) == 1:
        target = pending[0]
    elif not pending and len(records) == 1:
        target = records[0].pod
    if target is None:
        return events
    update: dict[str, Any] = {"object_kind": "Pod", "object_name": target.name, "namespace": target.namespace}
    return [
        replace(event, **update)
        if event.object_name is None and event.reason in _SCHEDULING_REASONS
        else event
        for event in events
    ]


def _settle_pods(records: list[PodRecord], events: list[Event]) -> list[Pod]:
    mentioned: set[str] = set()
    failed: dict[str, str] = {}
    for event in events:
        if event.reason in _SCHEDULING_REASONS and event.object_name and event.object_kind in {None, "Pod"}:
            mentioned.add(event.object_name)
            if event.reason == "FailedScheduling":
                failed[event.object_name] = event.message
    pods = []
    for record in records:
        pod = record.pod
        if not record.has_status and pod.phase == "Unknown" and pod.name in mentioned:
            pod = replace(pod, phase="Pending")
        message = failed.get(pod.name)
        if pod.phase == "Pending" and message is not None and pod.condition("PodScheduled") is None:
            scheduled = Condition(
                type="PodScheduled", status="False", reason="Unschedulable", message=message
            )
            pod = replace(pod, conditions=[*pod.conditions, scheduled])
        pods.append(pod)
    return pods


def _with_container_events(pods: list[Pod], events: list[Event]) -> list[Pod]:
    """The container state the kubelet's events report (an image that does not pull, a container in
    restart back-off, a missing ConfigMap), for the Pods the paste shows no container status of.

    A Pod whose statuses or running phase the paste shows keeps them: its events may be older than
    its state. An event that names no Pod is about the one Pod in the paste, or, when there is
    none, about a Pod pasted without its name (the ``Events:`` block of a ``describe`` cut from its
    head).
    """
    by_key = {(p.namespace, p.name): i for i, p in enumerate(pods)}
    by_name = {p.name: i for i, p in enumerate(pods)}
    pods = list(pods)
    for event in events:
        state = kubelet_message.container_event(event.reason, str(event.message))
        if state is None or event.object_kind not in {None, "Pod"}:
            continue
        name = event.object_name or (pods[0].name if len(pods) == 1 else None if pods else UNNAMED_POD)
        if name is None:
            continue
        index = by_key.get((event.namespace or "", name), by_name.get(name))
        status = ContainerStatus(
            name=state.container or "(unknown)", state="waiting", reason=state.reason, message=event.message
        )
        if index is None:
            phase = "Running" if state.reason == "CrashLoopBackOff" else "Pending"
            pod = Pod(
                name=name, namespace=event.namespace or "default", phase=phase, container_statuses=[status]
            )
            by_key[(pod.namespace, pod.name)] = by_name[pod.name] = len(pods)
            pods.append(pod)
        elif not pods[index].container_statuses and pods[index].phase in {"Pending", "Unknown"}:
            # Made anew rather than copied: what a Pod derives from its statuses is computed then.
            pods[index] = dataclasses.replace(pods[index], container_statuses=[status])
    return pods


def _nodes(found: Found) -> list[Node]:
    nodes = list(found.nodes)
    unnamed = found.unnamed_nodes
    if len(unnamed) > 1:
        for number, index in enumerate(unnamed, start=1):
            nodes[index] = replace(nodes[index], name=numbered_unnamed_node(number))
    by_name: dict[str, Node] = {}
    for node in nodes:
        by_name[node.name] = _fill(by_name[node.name], node) if node.name in by_name else node
    return list(by_name.values())


# The five-character suffix Kubernetes appends to a ``generateName``.
_SUFFIX = re.compile(r"^[a-z0-9]{5}$")
_ROLE_LABELS = ("ray.io/node-type", "ray.io/cluster", "ray.io/group")


def _kuberay_head_cluster(name: str) -> str | None:
    prefix, _, suffix = name.rpartition("-head-")
    return prefix if prefix and _SUFFIX.match(suffix) else None


def _worker_group(name: str, cluster: str) -> str | None:
    """The group in a KubeRay worker Pod name of ``cluster``, in either naming."""
    rest = name[len(cluster) + 1 :]
    body, _, suffix = rest.rpartition("-")
    if not _SUFFIX.match(suffix):
        return None
    if body.endswith("-worker") and len(body) > len("-worker"):
        return body[: -len("-worker")]
    if body.startswith("worker-") and len(body) > len("worker-"):
        return body[len("worker-") :]
    return None


def _role_from_name(name: str, clusters: list[str]) -> dict[str, str]:
    """The labels KubeRay would have put on a Pod of this name, as far as the name tells."""
    head_cluster = _kuberay_head_cluster(name)
    if head_cluster is not None:
        return {"ray.io/node-type": "head", "ray.io/cluster": head_cluster}
    for cluster in clusters:  # longest first: ``rc`` must not claim ``rc-gpu``'s workers
        if name.startswith(cluster + "-"):
            group = _worker_group(name, cluster)
            if group is not None:
                return {"ray.io/node-type": "worker", "ray.io/cluster": cluster, "ray.io/group": group}
    tokens = name.split("-")[:-1]
    # Other operators and charts (the legacy Ray operator, Helm Deployments ``ray-head-…``)
    # keep ``head`` or ``worker`` as a word of the name but follow no cluster naming.
    if ("head" in tokens) != ("worker" in tokens) and "ray" in tokens:
        return {"ray.io/node-type": "head" if "head" in tokens else "worker"}
    return {}


def _shows_ray_cluster(found: Found) -> bool:
    return bool(
        found.ray_status
        or found.ray_nodes
        or found.objects.get("rayclusters")
        or found.objects.get("rayjobs")
        or found.objects.get("rayservices")
    )


def _label_ray_roles(pods: list[Pod], found: Found) -> list[Pod]:
    unlabelled = [p for p in pods if not any(label in p.labels for label in _ROLE_LABELS)]
    if not unlabelled:
        return pods
    heads = {c for p in unlabelled if (c := _kuberay_head_cluster(p.name))}
    named = {o.name for o in found.objects.get("rayclusters", [])}
    named |= {o.cluster_name for o in found.objects.get("rayjobs", []) if o.cluster_name}
    named |= {o.cluster_name for o in found.objects.get("rayservices", []) if o.cluster_name}
    named |= {p.labels["ray.io/cluster"] for p in pods if "ray.io/cluster" in p.labels}
    clusters = sorted(heads | named, key=len, reverse=True)
    roles = {p.name: _role_from_name(p.name, clusters) for p in unlabelled}
    has_workers = any(r.get("ray.io/node-type") == "worker" and "ray.io/cluster" in r for r in roles.values())
    if not (_shows_ray_cluster(found) or (heads and has_workers)):
        return pods
    return [
        replace(pod, labels={**pod.labels, **roles[pod.name]}) if roles.get(pod.name) else pod for pod in pods
    ]


def _kubernetes(found: Found) -> KubernetesState | None:
    if not (found.pods or found.nodes or found.events or any(found.objects.values())):
        return None
    records = _merge_pods(found.pods)
    events = _attach_events(found.events, records)
    pods = _label_ray_roles(_with_container_events(_settle_pods(records, events), events), found)
    device_plugin_pods = [p for p in pods if "device-plugin" in p.name]
    return KubernetesState(
        nodes=_nodes(found),
        nodes_complete=False,
        pods=pods,
        events=events,
        device_plugin_pods=device_plugin_pods,
        **{name: objects for name, objects in found.objects.items() if objects},
    )


def _ray_nodes(nodes: list[RayNode]) -> list[RayNode]:
    """The same node reported by repeated warnings is kept once, as last reported."""
    by_key: dict[str, RayNode] = {}
    for index, node in enumerate(nodes):
        key = node.node_id or node.node_ip or f"#{index}"
        # ``ray list nodes`` and ``ray status -v`` each give part of a node: keep both parts.
        by_key[key] = _fill(node, by_key[key]) if key in by_key else node
    return list(by_key.values())


def _ray(found: Found) -> RayState | None:
    status = found.ray_status
    without_gpus = python_code.work_without_gpus(found.code)
    mismatches = constructor_calls.mismatches(found.code)
    if not (
        status
        or found.ray_nodes
        or found.demands
        or found.constraints
        or found.node_types
        or found.serve_applications
        or found.ray_actors
        or found.placement_groups
        or (found.tune and found.tune.counts())
        or found.code.declared
        or without_gpus
        or mismatches
        or found.ray_starts
    ):
        return None
    return RayState(
        version=found.ray_version,
        nodes=_ray_nodes(found.ray_nodes),
        totals=status.totals if status else {},
        used=status.used if status else {},
        node_count=status.node_count if status else None,
        node_groups=status.node_groups if status else {},
        pending_nodes=status.pending_nodes if status else [],
        recent_failures=status.recent_failures if status else [],
        reserved=status.reserved if status else {},
        reserved_used=status.reserved_used if status else {},
        accelerator_types_hidden=status.hides_accelerator_types if status else False,
        demands=found.demands,
        declared_demands=found.code.declared,
        work_without_gpus=without_gpus,
        constructor_mismatches=mismatches,
        start_commands=found.ray_starts,
        constraints=found.constraints,
        node_types=found.node_types,
        actors=found.ray_actors,
        placement_groups=found.placement_groups,
        serve_applications=found.serve_applications,
        tune=TuneTrials(counts=found.tune.counts(), quotes=found.tune.quotes)
        if found.tune and found.tune.counts()
        else None,
    )


def build(found: Found) -> Snapshot:
    python_code.settle(found)  # the code's requests against the cluster facts of the whole paste
    kubernetes = _kubernetes(found)
    ray = _ray(found)
    notes = [fmt.label for fmt in found.formats]
    for kind, count in found.dropped.items():
        notes.append(f"{count:,} further {kind} were left out to keep the snapshot small")
    notes.extend(found.notes)
    # Prose is kept as text for the phrase rules, but prose alone is no recognised output.
    if kubernetes is None and ray is None and not (found.texts and found.formats) and not found.nvidia_smi:
        notes = [NOTHING_RECOGNISED, *found.notes]
    stated = Stated(
        versions=found.stated_versions,
        node_gpus=found.stated_gpus,
        join_gaps=found.stated_join_gaps,
        symptoms=found.stated_symptoms,
        demands=found.stated_demands,
    )
    return Snapshot(
        origin="paste",
        kubernetes=kubernetes,
        ray=ray,
        texts=found.texts,
        stated=stated or None,
        nvidia_smi=found.nvidia_smi,
        notes=notes,
    )
