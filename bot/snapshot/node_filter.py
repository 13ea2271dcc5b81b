"""kube-scheduler's static node filters: which nodes a Pod may go to, whatever is free on them.

NodeUnschedulable, TaintToleration and NodeAffinity depend only on the Pod's spec and the node's
labels, taints and cordon state, never on other Pods. The collector uses them to decide which
nodes' Pods are worth reading; the classifier's fit replay (``bot.classify.fit``) starts from
them. One definition for both, below both.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from bot.snapshot.kubernetes import LabelRequirement, Node, NodeSelectorTerm, Pod, Taint, Toleration

# Labels every node carries with its own value; they never group nodes.
PER_NODE_LABELS = frozenset(
    {"kubernetes.io/hostname", "node.kubernetes.io/instance-id", "topology.gke.io/node"}
)

REASON_UNSCHEDULABLE = "node(s) were unschedulable"
REASON_AFFINITY = "node(s) didn't match Pod's node affinity/selector"

NodeClass = tuple[object, ...]


def taint_reason(taint: Taint) -> str:
    return f"node(s) had untolerated taint {{{taint.key}: {taint.value}}}"


def tolerates(tolerations: Sequence[Toleration], taint: Taint) -> bool:
    for toleration in tolerations:
        if toleration.effect and toleration.effect != taint.effect:
            continue
        if toleration.operator == "Exists":
            if toleration.key in (None, "", taint.key):
                return True
            continue
        if toleration.key == taint.key and (toleration.value or "") == taint.value:
            return True
    return False


def first_untolerated_taint(node: Node, tolerations: Sequence[Toleration]) -> Taint | None:
    for taint in node.taints:
        if taint.effect not in ("NoSchedule", "NoExecute"):
            continue
        if not tolerates(tolerations, taint):
            return taint
    return None


def requirement_matches(requirement: LabelRequirement, labels: Mapping[str, str]) -> bool:
    value = labels.get(requirement.key)
    operator = requirement.operator
    if operator == "In":
        return value is not None and value in requirement.values
    if operator == "NotIn":
        return value is None or value not in requirement.values
    if operator == "Exists":
        return value is not None
    if operator == "DoesNotExist":
        return value is None
    if operator in ("Gt", "Lt") and value is not None and requirement.values:
        try:
            left, right = int(value), int(requirement.values[0])
        except ValueError:
            return False
        return left > right if operator == "Gt" else left < right
    return False


def selects_per_node_label(pod: Pod) -> bool:
    """Whether the Pod's node constraints name a label unique to each node (or a node's name), so
    nodes of one class cannot be judged together."""
    keys = set(pod.node_selector) | {
        r.key for term in pod.required_node_terms for r in (*term.match_expressions, *term.match_fields)
    }
    return bool(keys & PER_NODE_LABELS) or any(term.match_fields for term in pod.required_node_terms)


def required_node_names(pod: Pod) -> frozenset[str] | None:
    """The nodes kube-scheduler's NodeAffinity PreFilter limits the Pod to, or None for every node.

    Only when each required term names nodes (``metadata.name In``, several in one term meaning
    the nodes they share) does the scheduler narrow its search to the union of those names; an
    empty set means the terms conflict. ``selects_per_node_label`` holds for such a Pod.
    """
    terms = pod.required_node_terms
    if not terms:
        return None
    names: set[str] = set()
    for term in terms:
        named: set[str] | None = None
        for field in term.match_fields:
            if field.key == "metadata.name" and field.operator == "In":
                named = set(field.values) if named is None else named & set(field.values)
        if named is None:
            return None
        names |= named
    return frozenset(names)


def _term_matches(term: NodeSelectorTerm, node: Node) -> bool:
    if not term.match_expressions and not term.match_fields:
        return False
    fields = {"metadata.name": node.name}
    return all(requirement_matches(r, node.labels) for r in term.match_expressions) and all(
        requirement_matches(r, fields) for r in term.match_fields
    )


def matches_node_affinity(
    node_selector: Mapping[str, str], terms: Sequence[NodeSelectorTerm], node: Node
) -> bool:
    if any(node.labels.get(key) != value for key, value in node_selector.items()):
        return False
    return not terms or any(_term_matches(term, node) for term in terms)


def static_reason(pod: Pod, node: Node) -> str | None:
    """kube-scheduler's reason for ruling ``node`` out before looking at resources, or None."""
    if node.unschedulable and not tolerates(
        pod.tolerations, Taint(key="node.kubernetes.io/unschedulable", effect="NoSchedule")
    ):
        return REASON_UNSCHEDULABLE
    taint = first_untolerated_taint(node, pod.tolerations)
    if taint is not None:
        return taint_reason(taint)
    if not matches_node_affinity(pod.node_selector, pod.required_node_terms, node):
        return REASON_AFFINITY
    return None


def node_class(node: Node) -> NodeClass:
    """Nodes with the same class pass or fail the static filters together (for a Pod that does not
    select on a per-node label): cordon state, labels other than per-node ones, and taints."""
    shared = dict(node.labels)
    for key in PER_NODE_LABELS:
        shared.pop(key, None)
    # A set of the labels, not a sorted tuple: the key is only compared and hashed.
    return (
        node.unschedulable,
        frozenset(shared.items()),
        tuple((t.key, t.value, t.effect) for t in node.taints),
    )


def classes(nodes: Iterable[Node]) -> dict[NodeClass, list[Node]]:
    grouped: dict[NodeClass, list[Node]] = {}
    for node in nodes:
        grouped.setdefault(node_class(node), []).append(node)
    return grouped


def eligible_nodes(pod: Pod, grouped: Mapping[NodeClass, Sequence[Node]]) -> list[Node]:
    """The nodes (grouped by ``classes``) the static filters let ``pod`` go to: one check per class
    unless the Pod selects on a per-node label."""
    if selects_per_node_label(pod):
        return [node for group in grouped.values() for node in group if static_reason(pod, node) is None]
    return [node for group in grouped.values() if static_reason(pod, group[0]) is None for node in group]
