"""Read-only views over one snapshot, computed once and shared by every detector.

Detectors ask the same questions (which Pods are Ray workers, which Ray node has this IP, what is
bound to that node); answering them here keeps each detector short and the whole classification
linear in the size of the snapshot.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Container, Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import Any, TypeVar

from bot.classify.lines import LineIndex, Pattern
from bot.snapshot.gpu import is_gpu_node
from bot.snapshot.kubernetes import Event, KubernetesState, Node, Pod, PodIndex, RayClusterObject
from bot.snapshot.model import Snapshot
from bot.snapshot.ray import RayNode, RayState

# How much of one line the text rules search.
MAX_SEARCHED = 20_000

T = TypeVar("T")

RAY_CLUSTER_LABEL = "ray.io/cluster"
RAY_NODE_TYPE_LABEL = "ray.io/node-type"
RAY_GROUP_LABEL = "ray.io/group"


@dataclass(frozen=True)
class Text:
    """A line of text from anywhere in the snapshot, with where it came from."""

    source: str  # event | log | paste | autoscaler | serve | job | condition
    text: str
    pod: str | None = None
    namespace: str | None = None
    container: str | None = None
    object_kind: str | None = None
    object_name: str | None = None

    @cached_property
    def searched(self) -> str:
        """The part of the line text rules search (a JSON log line can be megabytes)."""
        return self.text[:MAX_SEARCHED]


class Context:
    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot
        self.kube: KubernetesState = snapshot.kubernetes or KubernetesState(nodes_complete=False)
        self.ray: RayState | None = snapshot.ray
        self.has_kubernetes = snapshot.kubernetes is not None
        self.cluster = snapshot.cluster
        self.namespace = snapshot.namespace
        self._memo: dict[str, Any] = {}

    def memo(self, key: str, compute: Callable[[], T]) -> T:
        """Compute a shared analysis once per classification (several rules read one analysis)."""
        if key not in self._memo:
            self._memo[key] = compute()
        result: T = self._memo[key]
        return result

    # --- Kubernetes -------------------------------------------------------------------------
    @cached_property
    def nodes_by_name(self) -> dict[str, Node]:
        return {node.name: node for node in self.kube.nodes}

    @cached_property
    def gpu_nodes(self) -> list[Node]:
        """The nodes that have GPUs or are marked as GPU nodes (``is_gpu_node``), in node order."""
        return [node for node in self.kube.nodes if is_gpu_node(node)]

    @cached_property
    def _pod_indexes(self) -> PodIndex:
        """Every per-Pod view, built once with the snapshot (a large cluster has 100,000s of Pods)."""
        return self.kube.pod_index

    @property
    def live_pods(self) -> list[Pod]:
        return self._pod_indexes.live

    @cached_property
    def pods_by_namespace(self) -> dict[str, list[Pod]]:
        index: dict[str, list[Pod]] = {}
        for pod in self.live_pods:
            index.setdefault(pod.namespace, []).append(pod)
        return index

    @property
    def pods_by_node(self) -> dict[str, list[Pod]]:
        """Non-terminated Pods bound to each node."""
        return self._pod_indexes.by_node

    @property
    def pod_namespaces(self) -> set[str]:
        """Namespaces of every Pod in the snapshot, finished ones included."""
        return self._pod_indexes.namespaces

    @property
    def requested_by_node(self) -> dict[str, dict[str, float]]:
        """Sum of requests of non-terminated Pods bound to each node, plus a ``pods`` count."""
        return self._pod_indexes.requested

    @property
    def unscheduled_pods(self) -> list[Pod]:
        """Pods the scheduler has not placed, less another RayCluster's (``in_scope``): the
        collector lists Pending Pods cluster-wide, and another Ray cluster's waiting workers are
        not this one's problem."""
        return self._in_scope(self._pod_indexes.unscheduled)

    @property
    def pods_with_status(self) -> list[Pod]:
        """Pods whose status has a reason or a message, in any phase."""
        return self._pod_indexes.with_status

    @property
    def pods_not_running(self) -> list[Pod]:
        """Live Pods in a phase other than Running (Pending, Unknown)."""
        return self._pod_indexes.not_running

    @property
    def troubled_pods(self) -> list[Pod]:
        """Pods with a container that is not ready or has restarted: where failures can be (less
        another RayCluster's, as for ``unscheduled_pods``)."""
        return self._in_scope(self._pod_indexes.troubled)

    def _in_scope(self, pods: list[Pod]) -> list[Pod]:
        if self.cluster is None:
            return pods
        return [pod for pod in pods if self.in_scope(pod)]

    @cached_property
    def events_by_object(self) -> dict[tuple[str | None, str], list[Event]]:
        index: dict[tuple[str | None, str], list[Event]] = defaultdict(list)
        for event in self.kube.events:
            if event.object_name:
                index[(event.namespace, event.object_name)].append(event)
        return dict(index)

    def events_for(self, name: str, namespace: str | None) -> list[Event]:
        found = list(self.events_by_object.get((namespace, name), []))
        if namespace is not None:
            found += self.events_by_object.get((None, name), [])
        return found

    def latest_event(self, pod: Pod, reason: str) -> Event | None:
        matching = [e for e in self.events_for(pod.name, pod.namespace) if e.reason == reason]
        if not matching:
            return None
        return max(matching, key=lambda e: (e.last_seen is not None, e.last_seen or 0, e.count))

    @property
    def ray_pods(self) -> list[Pod]:
        return self._pod_indexes.ray

    @cached_property
    def head_pods(self) -> list[Pod]:
        return [p for p in self.ray_pods if p.labels.get(RAY_NODE_TYPE_LABEL) == "head"]

    @cached_property
    def worker_pods(self) -> list[Pod]:
        return [p for p in self.ray_pods if p.labels.get(RAY_NODE_TYPE_LABEL) == "worker"]

    @cached_property
    def running_ray_pods_by_ip(self) -> dict[str, Pod]:
        """The Running Ray Pods of the diagnosed RayCluster by Pod IP: where a Ray node with that
        IP runs (the capacity picture and the probe pools tie Ray nodes to Kubernetes with it)."""
        return {
            pod.pod_ip: pod
            for pod in self.ray_pods
            if pod.pod_ip and pod.phase == "Running" and self.in_scope(pod)
        }

    def in_scope(self, pod: Pod) -> bool:
        """Whether a Ray Pod belongs to the RayCluster being diagnosed (all of them when unnamed).

        The Ray layer describes one Ray cluster; another RayCluster's workers are not missing
        from it.
        """
        return self.cluster is None or pod.labels.get(RAY_CLUSTER_LABEL) in (None, self.cluster)

    def raycluster_for(self, pod: Pod) -> RayClusterObject | None:
        name = pod.labels.get(RAY_CLUSTER_LABEL)
        return next(
            (rc for rc in self.kube.rayclusters if rc.name == name and rc.namespace == pod.namespace),
            None,
        )

    def head_pod_for(self, cluster_name: str | None, namespace: str | None) -> Pod | None:
        return next(
            (
                p
                for p in self.head_pods
                if (cluster_name is None or p.labels.get(RAY_CLUSTER_LABEL) == cluster_name)
                and (namespace is None or p.namespace == namespace)
            ),
            None,
        )

    # --- Ray --------------------------------------------------------------------------------
    @cached_property
    def ray_nodes(self) -> list[RayNode]:
        """The alive Ray nodes, when the snapshot lists them all; else none.

        A ``ray status -v`` can print fewer ``Node:`` blocks than the nodes it counts
        (``RayState.nodes_complete``): judged one by one, the nodes left out would read as missing
        (a Pod not joined, a demand no node holds). Then the rules reason from the counts and the
        cluster totals, as for a plain ``ray status``.
        """
        return self.ray.alive_nodes if self.ray and self.ray.nodes_complete else []

    @cached_property
    def ray_nodes_by_ip(self) -> dict[str, RayNode]:
        return {node.node_ip: node for node in self.ray_nodes if node.node_ip}

    @property
    def ray_nodes_known(self) -> bool:
        """True when the snapshot lists every Ray node one by one (not only cluster totals)."""
        return bool(self.ray and self.ray.nodes and self.ray.nodes_complete)

    @cached_property
    def ray_node_count(self) -> tuple[int, int] | None:
        """(alive Ray nodes, of them workers), from per-node lines or else the status's count.

        Every Ray cluster has one head node among its alive nodes, whether the source marks it or
        not, so the workers are the rest. ``None`` when the snapshot holds no count at all.
        """
        if self.ray is None:
            return None
        if self.ray_nodes_known:
            alive = len(self.ray_nodes)
            heads = sum(n.is_head for n in self.ray_nodes)
        elif self.ray.node_count is not None:
            alive, heads = self.ray.node_count, 0
        else:
            return None
        return alive, max(0, alive - max(heads, 1))

    @cached_property
    def ray_gpus_registered(self) -> float | None:
        """GPUs Ray registers in all, from the cluster totals or the nodes; ``None`` if not read."""
        if self.ray is None:
            return None
        if self.ray.totals:
            return self.ray.totals.get("GPU", 0.0)
        if self.ray_nodes:
            return sum(n.resources_total.get("GPU", 0.0) for n in self.ray_nodes)
        if self.ray.node_count == 0:
            return 0.0  # a status of a cluster with no node at all: it registers nothing
        return None

    # --- Text -------------------------------------------------------------------------------
    @cached_property
    def texts(self) -> list[Text]:
        found: list[Text] = []
        # One text per event, first and in event order (``events_that_may_match`` relies on it).
        for event in self.kube.events:
            pod = event.object_name if event.object_kind in (None, "Pod") else None
            found.append(
                Text(
                    "event",
                    f"{event.reason}: {event.message}" if event.reason else event.message,
                    pod=pod,
                    namespace=event.namespace,
                    object_kind=event.object_kind,
                    object_name=event.object_name,
                )
            )
        for log in self.kube.logs:
            found += [
                Text("log", line, pod=log.pod, namespace=log.namespace, container=log.container)
                for line in log.lines
            ]
        for line in self.snapshot.texts:
            found.append(
                Text(line.source, line.text, pod=line.pod, namespace=line.namespace, container=line.container)
            )
        if self.ray:
            found += [Text("autoscaler", failure) for failure in self.ray.recent_failures]
            for job in self.ray.jobs:
                if job.message:
                    found.append(
                        Text("job", job.message, object_kind="RayJob", object_name=job.submission_id)
                    )
        return found

    @cached_property
    def lines(self) -> LineIndex:
        """The texts for the literal prefilter (``bot.classify.lines``), in the order of ``texts``."""
        texts = self.texts
        return LineIndex([t.text[:MAX_SEARCHED] for t in texts], [len(t.text) > MAX_SEARCHED for t in texts])

    def texts_that_may_match(self, *patterns: Pattern) -> list[Text]:
        """The texts, in order, that one of ``patterns`` could match anywhere in the whole text (a
        superset of those it does match: the caller still searches them)."""
        positions = self.lines.candidates(patterns)
        texts = self.texts
        return texts if positions is None else [texts[i] for i in positions]

    def lines_that_may_match(self, *patterns: Pattern) -> Container[int]:
        """The positions in ``texts`` of the texts ``texts_that_may_match`` would give."""
        positions = self.lines.candidates(patterns)
        return range(len(self.texts)) if positions is None else frozenset(positions)

    def events_that_may_match(self, *patterns: Pattern) -> list[Event]:
        """The events, in order, whose message one of ``patterns`` could match (as above)."""
        # An event's text is ``<reason>: <message>``, and the events come first in ``texts``.
        positions = self.lines.candidates(patterns)
        events = self.kube.events
        if positions is None:
            return events
        return [events[i] for i in positions if i < len(events)]

    def iter_texts(self, sources: frozenset[str] | None = None) -> Iterator[Text]:
        for text in self.texts:
            if sources is None or text.source in sources:
                yield text
