"""The views of a snapshot's Pods that every classification reads, built once with the snapshot.

Each rule needs some of the same few views: the Pods still running or waiting, those bound to
each node with the sum of their requests (kube-scheduler's own bookkeeping for the fit filter),
those no node was found for, those with a failing container, and the Ray Pods. On a cluster with
150,000 Pods one pass over them takes about half a second, nearly all of it memory traffic (every
Pod is its own object), so the snapshot makes that pass once, when its Pods are built, and every
reader after that shares it: each rule, a re-run, a scheduled post, the capacity picture.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bot.snapshot.kubernetes import Pod


@dataclass(frozen=True)
class PodIndex:
    source: Sequence[Pod]  # the list this index was built from
    live: list[Pod] = field(default_factory=list)  # not Succeeded or Failed
    ray: list[Pod] = field(default_factory=list)
    # Sum of the requests of live Pods bound to each node, plus a "pods" count.
    requested: dict[str, dict[str, float]] = field(default_factory=dict)
    by_node: dict[str, list[Pod]] = field(default_factory=dict)  # live Pods bound to each node
    unscheduled: list[Pod] = field(default_factory=list)  # Pending, no node, not being deleted
    troubled: list[Pod] = field(default_factory=list)  # a container not ready or restarted
    namespaces: set[str] = field(default_factory=set)  # of every Pod, finished ones included
    # Pods whose status has a reason or message (an eviction, the kubelet's refusal), any phase.
    with_status: list[Pod] = field(default_factory=list)
    not_running: list[Pod] = field(default_factory=list)  # live, in a phase other than Running


def index_pods(pods: Sequence[Pod]) -> PodIndex:
    index = PodIndex(pods)
    live, requested, by_node = index.live, index.requested, index.by_node
    unscheduled, troubled, ray = index.unscheduled, index.troubled, index.ray
    namespaces, with_status, not_running = index.namespaces, index.with_status, index.not_running
    for pod in pods:
        namespaces.add(pod.namespace)
        if pod.status_reason or pod.status_message:
            with_status.append(pod)
        phase = pod.phase
        if phase == "Succeeded" or phase == "Failed":  # noqa: PLR1714 (faster than a tuple test here)
            continue
        live.append(pod)
        if phase != "Running":
            not_running.append(pod)
        node = pod.node_name
        if node:
            used = requested.get(node)
            if used is None:
                used = requested[node] = {"pods": 0.0}
                by_node[node] = [pod]
            else:
                by_node[node].append(pod)
            for resource, amount in pod.requests.items():
                used[resource] = used.get(resource, 0.0) + amount
            used["pods"] += 1
        elif phase == "Pending" and not pod.deleting:
            unscheduled.append(pod)
        if pod.troubled:
            troubled.append(pod)
        if pod.is_ray:
            ray.append(pod)
    return index
