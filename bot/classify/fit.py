"""Why kube-scheduler will not place a Pod: the filter plugins replayed node by node.

The explainer walks kube-scheduler's default filter plugins in their real order (NodeUnschedulable,
NodeName, TaintToleration, NodeAffinity, NodePorts, NodeResourcesFit, then volumes and topology)
and stops at the first plugin that rejects a node, exactly as the scheduler does, so the
per-reason counts match the ``0/N nodes are available: ...`` message of a FailedScheduling event.
Before the filters, NodeAffinity's PreFilter: required terms that name nodes (``metadata.name``)
leave every other node out unfiltered, as the scheduler does. InterPodAffinity checks the Pod's
own terms and the anti-affinity of the Pods already bound.
tests/integration/test_fit_replay_differential.py holds the replay to the real kube-scheduler.
Free capacity is allocatable minus the requests of the non-terminated Pods bound to the node,
never live usage: GPUs cannot be overcommitted, and a quiet node can still be full.

Nodes that look alike (same labels, taints and cordon state) are judged once for the static
filters, and the resource filter reads a Pod's requests against one list of free amounts per
resource (see ``_ListTable`` for why plain lists and not numpy).
Per-node shortfalls are spelt out only for the few nodes that came closest: a message names
those, and thousands of objects for nodes nobody reads about would cost more than the replay.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from bot import facts
from bot.read.quantity import format_amount
from bot.read.scheduler_message import (
    REASON_EXISTING_ANTI_AFFINITY,
    REASON_NAMES_CONFLICT,
    REASON_NOT_NAMED,
    REASON_POD_AFFINITY,
    REASON_POD_ANTI_AFFINITY,
    REASON_TOO_MANY_PODS,
    REASON_UNBOUND_PVC,
    comparable_reasons,
    format_summary,
    insufficient_reason,
    normalise_reason,
    parse_scheduler_message,
)
from bot.snapshot.kubernetes import (
    Node,
    NodeSelectorTerm,
    Pod,
    PodAffinityTerm,
)
from bot.snapshot.node_filter import (
    NodeClass,
    matches_node_affinity,
    node_class,
    required_node_names,
    requirement_matches,
    selects_per_node_label,
    static_reason,
)

CONTROL_PLANE_TAINTS = ("node-role.kubernetes.io/control-plane", "node-role.kubernetes.io/master")
BASIC_RESOURCES = ("cpu", "memory", "ephemeral-storage")

DEFAULT_MAX_PODS = 110.0
# How many of the nodes that lack resources get their shortfalls spelt out (the closest ones).
CLOSEST_KEPT = 3


def selects_pod(term: PodAffinityTerm, pod: Pod, namespace: str) -> bool:
    """Whether an affinity term's label selector picks ``pod`` (namespaces default to the owner's)."""
    if pod.namespace not in (term.namespaces or [namespace]):
        return False
    if any(pod.labels.get(k) != v for k, v in term.match_labels.items()):
        return False
    return all(requirement_matches(r, pod.labels) for r in term.match_expressions)


def selector_requirements(pod_selector: Mapping[str, str], terms: Sequence[NodeSelectorTerm]) -> list[str]:
    """The node constraints of a Pod as ``key=value`` / ``key in (a, b)`` strings."""
    shown = [f"{key}={value}" for key, value in pod_selector.items()]
    for term in terms:
        for requirement in term.match_expressions:
            values = ", ".join(requirement.values)
            shown.append(
                f"{requirement.key} {requirement.operator} ({values})" if values else requirement.key
            )
    return shown


@dataclass(frozen=True)
class Shortfall:
    resource: str
    needed: float
    free: float
    allocatable: float

    def fact(self) -> facts.Shortfall:
        """The shortfall as a finding's fact (the resource and its amounts, written for that
        resource); the renderer words it."""
        return facts.Shortfall(
            self.resource,
            format_amount(self.resource, self.needed),
            format_amount(self.resource, self.free),
            format_amount(self.resource, self.allocatable),
        )


@dataclass
class FitExplanation:
    pod: Pod
    total_nodes: int
    reasons: Counter[str]
    prefilter_reason: str | None = None
    fitting_nodes: list[str] = field(default_factory=list)
    eligible_nodes: list[str] = field(default_factory=list)
    shortfalls: dict[str, list[Shortfall]] = field(default_factory=dict)
    blocked_by: dict[str, str] = field(default_factory=dict)  # node -> first static reason
    # Resources that at least one eligible node lacks ("pods" for a full node).
    lacking_resources: set[str] = field(default_factory=set)

    @property
    def summary(self) -> str:
        return format_summary(self.total_nodes, self.reasons, self.prefilter_reason)

    def agrees_with(self, message: str) -> bool | None:
        """Whether a FailedScheduling message counts as many nodes for the same reasons as this
        replay, in any release's wording; None when the message has no counts to compare."""
        parsed = parse_scheduler_message(message)
        if parsed is None:
            return None
        total, reasons, prefilter = parsed
        theirs = comparable_reasons(reasons, {})
        if prefilter:
            theirs[normalise_reason(prefilter)] += total
        return total == self.total_nodes and comparable_reasons(self.reasons, theirs) == theirs


@dataclass(frozen=True)
class _Check:
    """One NodeResourcesFit test: a node lacks ``resource`` when ``needed > free + tolerance``.

    A resource no node lists as allocatable is lacking on every node, whatever the tolerance; its
    gap counts free as zero.
    """

    resource: str
    needed: float
    tolerance: float
    reason: str

    def lacks(self, free: float) -> bool:
        return self.needed > free + self.tolerance

    def gap(self, free: float) -> float:
        """How far a node is from passing, as a share of the need (summed over what it lacks)."""
        return (self.needed - free) / self.needed


def resource_checks(needs: Sequence[tuple[str, float]]) -> list[_Check]:
    """The checks in the scheduler's order: room for one more Pod (``free < 1``), then each request."""
    pods = _Check("pods", 1.0, 0.0, REASON_TOO_MANY_PODS)
    return [pods] + [_Check(r, needed, 1e-9, insufficient_reason(r)) for r, needed in needs]


@dataclass(frozen=True)
class _Replay:
    """NodeResourcesFit over the eligible nodes; positions are indexes into the eligible list."""

    counts: list[int]  # per check: how many eligible nodes fail it
    fitting: list[int]  # the nodes that pass every check
    # The nodes that lack least (fewest checks failed, then smallest summed gap, then position),
    # at most CLOSEST_KEPT of them, in eligible order.
    closest: list[int]


def free_columns(
    nodes: Sequence[Node], requested: Mapping[str, Mapping[str, float]]
) -> dict[str, list[float]]:
    """Free amount of every resource on every node, one list (in node order) per resource name.

    A resource a node does not list as allocatable has nothing free there, whatever its Pods
    ask for (the same as ``FitExplainer.free()``).
    """
    names = sorted({r for node in nodes for r in node.allocatable} | {"pods"})
    columns = {name: [0.0] * len(nodes) for name in names}
    pods = columns["pods"]
    for row, node in enumerate(nodes):
        used = requested.get(node.name, {})
        for resource, amount in node.allocatable.items():
            columns[resource][row] = float(amount - used.get(resource, 0.0))
        pods[row] = float(node.allocatable.get("pods", DEFAULT_MAX_PODS) - used.get("pods", 0.0))
    return columns


class _ListTable:
    """Free amounts as Python lists, one per resource.

    A numpy table (every eligible node compared at once) was measured beside this one and removed
    (benchmarks/bench_fit_tables.py, 2026-12-04, 2 loaded cores; BENCHMARKS.md "The fit replay: one
    resource table"). The static filters leave a replay few nodes, so the tables' own time was
    small: 10/12 ms (lists/numpy, all replays of one classify) at 500 nodes, 35/18 ms at 1,000 and
    114/68 ms at 5,000 nodes and 73 replays, against a classify of 0.16, 0.25 and 2.0 s CPU. numpy's
    import (81-108 ms CPU) outweighs that in every fresh process, and it made a five-node ``raydiag
    diagnose`` 21 % slower (602 against 497 ms CPU); in a long-running bot it would save at most 45
    ms at 5,000 nodes, 2.3 % of classify alone and less of an answer that also collects the cluster.
    """

    def __init__(self, columns: dict[str, list[float]]) -> None:
        self._columns = columns

    def replay(self, checks: Sequence[_Check], eligible: Sequence[int]) -> _Replay:
        frees: list[list[float] | None] = []
        lacks: list[list[bool]] = []  # one row per check, one flag per eligible node
        for check in checks:
            column = self._columns.get(check.resource)
            free = None if column is None else [column[p] for p in eligible]
            frees.append(free)
            lacks.append([True] * len(eligible) if free is None else [check.lacks(f) for f in free])
        by_node = list(zip(*lacks, strict=True))

        def rank(position: int) -> tuple[int, float, int]:
            # The gap is summed in check order.
            gap = 0.0
            for check, flags, free in zip(checks, lacks, frees, strict=True):
                if flags[position]:
                    gap += check.gap(0.0 if free is None else free[position])
            return sum(by_node[position]), gap, position

        short = [position for position, flags in enumerate(by_node) if any(flags)]
        return _Replay(
            counts=[sum(flags) for flags in lacks],
            fitting=[position for position, flags in enumerate(by_node) if not any(flags)],
            closest=sorted(heapq.nsmallest(CLOSEST_KEPT, short, key=rank)),
        )


class FitExplainer:
    """Replays kube-scheduler's filters for Pods against one set of nodes."""

    def __init__(
        self,
        nodes: Sequence[Node],
        requested_by_node: Mapping[str, Mapping[str, float]],
        pods_by_node: Mapping[str, Sequence[Pod]] | None = None,
    ) -> None:
        self.nodes = list(nodes)
        self.requested = requested_by_node
        self._pods_by_node: Mapping[str, Sequence[Pod]] = pods_by_node or {}
        # Nodes that share labels, taints and cordon state pass or fail static filters together.
        # Labels unique to each node (its hostname) are left out of the key, or no two nodes
        # would ever share a class; a Pod that selects on one of them is judged node by node.
        self._classes: dict[NodeClass, list[int]] = {}
        for position, node in enumerate(self.nodes):
            self._classes.setdefault(node_class(node), []).append(position)
        self._free: dict[str, dict[str, float]] = {}
        self._domains: dict[str, dict[str, list[Pod]]] = {}
        self._holders: list[tuple[Node, Pod]] | None = None
        self._table = _ListTable(free_columns(self.nodes, requested_by_node))
        self._class_names = {key: [self.nodes[p].name for p in group] for key, group in self._classes.items()}

    def free(self, node: Node) -> dict[str, float]:
        cached = self._free.get(node.name)
        if cached is None:
            used = self.requested.get(node.name, {})
            cached = {r: amount - used.get(r, 0.0) for r, amount in node.allocatable.items()}
            cached["pods"] = node.allocatable.get("pods", DEFAULT_MAX_PODS) - used.get("pods", 0.0)
            self._free[node.name] = cached
        return cached

    @staticmethod
    def static_reason(pod: Pod, node: Node) -> str | None:
        return static_reason(pod, node)

    @staticmethod
    def needs(pod: Pod) -> list[tuple[str, float]]:
        """The Pod's positive requests in the scheduler's order: cpu, memory, storage, then the rest."""
        ordered = [r for r in BASIC_RESOURCES if r in pod.requests] + sorted(
            r for r in pod.requests if r not in BASIC_RESOURCES
        )
        return [(r, pod.requests[r]) for r in ordered if pod.requests[r] > 0]

    def resource_shortfalls(
        self, pod: Pod, node: Node, needs: list[tuple[str, float]] | None = None
    ) -> list[Shortfall]:
        free = self.free(node)
        lacking = []
        if free["pods"] < 1:
            lacking.append(Shortfall("pods", 1, free["pods"], node.allocatable.get("pods", DEFAULT_MAX_PODS)))
        for resource, needed in self.needs(pod) if needs is None else needs:
            available = free.get(resource, 0.0)
            if needed > available + 1e-9:
                lacking.append(Shortfall(resource, needed, available, node.allocatable.get(resource, 0.0)))
        return lacking

    def explain(self, pod: Pod, unbound_pvcs: Iterable[str] = ()) -> FitExplanation:
        explanation = FitExplanation(pod=pod, total_nodes=len(self.nodes), reasons=Counter())
        unbound = list(unbound_pvcs)
        if unbound:
            # VolumeBinding rejects the Pod in PreFilter: every node gets the same status.
            explanation.prefilter_reason = REASON_UNBOUND_PVC
            explanation.reasons[REASON_UNBOUND_PVC] = len(self.nodes)
            return explanation
        named = required_node_names(pod)
        if named is not None and not named:
            # NodeAffinity's PreFilter: every term names nodes, and no node is in all of them.
            explanation.prefilter_reason = REASON_NAMES_CONFLICT
            explanation.reasons[REASON_NAMES_CONFLICT] = len(self.nodes)
            return explanation
        eligible = self._static_filters(pod, explanation, named)
        if not eligible:
            return explanation
        needs = self.needs(pod)
        checks = resource_checks(needs)
        replay = self._table.replay(checks, eligible)
        for check, count in zip(checks, replay.counts, strict=True):
            if count:
                explanation.reasons[check.reason] += count
                explanation.lacking_resources.add(check.resource)
        domains = self.affinity_domains(pod) if pod.pod_affinity_terms else None
        for position in replay.fitting:
            node = self.nodes[eligible[position]]
            affinity = (
                self.affinity_reason(pod, node, domains)
                if pod.pod_affinity_terms or self.anti_affinity_holders
                else None
            )
            if affinity is not None:
                explanation.reasons[affinity] += 1
                explanation.blocked_by[node.name] = affinity
                continue
            explanation.fitting_nodes.append(node.name)
        for position in replay.closest:
            node = self.nodes[eligible[position]]
            explanation.shortfalls[node.name] = self.resource_shortfalls(pod, node, needs)
        return explanation

    def _static_filters(
        self, pod: Pod, explanation: FitExplanation, named: frozenset[str] | None = None
    ) -> list[int]:
        """NodeUnschedulable, TaintToleration and NodeAffinity: the positions of the nodes that pass.

        Nodes left out by the names the Pod's node affinity gives (``named``) are never filtered:
        the scheduler gives each the same status and runs no filter on it."""
        per_node = selects_per_node_label(pod)
        eligible: list[int] = []
        for key, positions in self._classes.items():
            if not per_node:
                static = self.static_reason(pod, self.nodes[positions[0]])
                if static is None:
                    eligible += positions
                else:
                    explanation.reasons[static] += len(positions)
                    explanation.blocked_by.update(dict.fromkeys(self._class_names[key], static))
                continue
            for position in positions:
                node = self.nodes[position]
                reason = (
                    REASON_NOT_NAMED
                    if named is not None and node.name not in named
                    else self.static_reason(pod, node)
                )
                if reason is None:
                    eligible.append(position)
                    continue
                explanation.reasons[reason] += 1
                explanation.blocked_by[node.name] = reason
        explanation.eligible_nodes = [self.nodes[p].name for p in eligible]
        return eligible

    def selected_by(self, pod: Pod) -> set[str]:
        """The nodes the Pod's node selector and required node affinity accept (taints and cordons
        aside): one check per class of nodes unless the Pod selects on a per-node label."""
        selector, terms = pod.node_selector, pod.required_node_terms
        if selects_per_node_label(pod):
            return {n.name for n in self.nodes if matches_node_affinity(selector, terms, n)}
        return {
            name
            for key, positions in self._classes.items()
            if matches_node_affinity(selector, terms, self.nodes[positions[0]])
            for name in self._class_names[key]
        }

    def _domain_pods(self, node: Node, topology_key: str) -> Sequence[Pod]:
        value = node.labels.get(topology_key)
        if value is None:
            return []
        domains: dict[str, list[Pod]] | None = self._domains.get(topology_key)
        if domains is None:
            domains = {}
            for other in self.nodes:
                label = other.labels.get(topology_key)
                if label is not None:
                    domains.setdefault(label, []).extend(self._pods_by_node.get(other.name, []))
            self._domains[topology_key] = domains
        return domains.get(value, [])

    def shortfalls_on(
        self, pod: Pod, names: Iterable[str], nodes_by_name: Mapping[str, Node]
    ) -> dict[str, list[Shortfall]]:
        """What ``pod`` lacks on each named node (for nodes a constraint already ruled out)."""
        found = {}
        for name in names:
            lacking = self.resource_shortfalls(pod, nodes_by_name[name])
            if lacking:
                found[name] = lacking
        return found

    @property
    def anti_affinity_holders(self) -> list[tuple[Node, Pod]]:
        """Bound Pods with required anti-affinity terms, each with its node: the scheduler keeps a
        Pod they select out of their topology domain, whatever the Pod's own terms say."""
        if self._holders is None:
            by_name = {node.name: node for node in self.nodes}
            self._holders = [
                (by_name[name], held)
                for name, pods in self._pods_by_node.items()
                if name in by_name
                for held in pods
                if any(term.anti for term in held.pod_affinity_terms)
            ]
        return self._holders

    def affinity_domains(self, pod: Pod) -> set[tuple[str, str]]:
        """kube-scheduler's affinity counts for ``pod``: the (topology key, value) pairs of the nodes
        that hold a Pod every one of its affinity terms selects (a node without a term's key adds
        nothing for that term)."""
        terms = [t for t in pod.pod_affinity_terms if not t.anti]
        pairs: set[tuple[str, str]] = set()
        for node in self.nodes:
            for other in self._pods_by_node.get(node.name, ()):
                if all(selects_pod(t, other, pod.namespace) for t in terms):
                    pairs.update(
                        (t.topology_key, node.labels[t.topology_key])
                        for t in terms
                        if t.topology_key in node.labels
                    )
        return pairs

    def affinity_reason(
        self, pod: Pod, node: Node, domains: set[tuple[str, str]] | None = None
    ) -> str | None:
        """InterPodAffinity for required terms, in the scheduler's order: the Pod's affinity terms,
        its anti-affinity terms, then the anti-affinity of the Pods already bound. ``domains``:
        ``affinity_domains(pod)``, when the caller judges several nodes."""
        affinity = [t for t in pod.pod_affinity_terms if not t.anti]
        if affinity:
            if any(t.topology_key not in node.labels for t in affinity):
                return REASON_POD_AFFINITY
            pairs = self.affinity_domains(pod) if domains is None else domains
            # The first Pod of a group that must sit together may go to any node with the keys:
            # when no Pod matches all its terms on such a node, and it matches them itself.
            first = not pairs and all(selects_pod(t, pod, pod.namespace) for t in affinity)
            if not first and not all(
                (t.topology_key, node.labels[t.topology_key]) in pairs for t in affinity
            ):
                return REASON_POD_AFFINITY
        for term in pod.pod_affinity_terms:
            if not term.anti or term.topology_key not in node.labels:
                continue
            if any(selects_pod(term, p, pod.namespace) for p in self._domain_pods(node, term.topology_key)):
                return REASON_POD_ANTI_AFFINITY
        for holder_node, holder in self.anti_affinity_holders:
            for term in holder.pod_affinity_terms:
                value = holder_node.labels.get(term.topology_key)
                if (
                    term.anti
                    and value is not None
                    and node.labels.get(term.topology_key) == value
                    and selects_pod(term, pod, holder.namespace)
                ):
                    return REASON_EXISTING_ANTI_AFFINITY
        return None
