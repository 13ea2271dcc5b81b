"""Pending Pods: which scheduler filter holds each one, and what that means.

One analysis per Pod is shared by the rules for causes 1, 2, 3 and 7: the explainer decides the
single most specific verdict (a GPU nobody advertises beats "Insufficient nvidia.com/gpu"; a GPU
model label that exists on no node beats "didn't match node selector"), and each rule picks the
Pods with its verdict. With the full node list the verdict comes from replaying the filters; with
only a pasted event, from the scheduler's own reasons.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Literal

from bot.catalogue import Rule
from bot.classify.context import RAY_GROUP_LABEL, Context
from bot.classify.fit import (
    BASIC_RESOURCES,
    CONTROL_PLANE_TAINTS,
    FitExplainer,
    FitExplanation,
    Shortfall,
    selector_requirements,
)
from bot.classify.registry import Hit, detector
from bot.diagnosis import Evidence, Subject
from bot.facts import ClosestNode, Fact, RefusedOn
from bot.facts import Shortfall as ShortfallFact
from bot.read.quantity import format_amount
from bot.read.scheduler_message import (
    REASON_UNBOUND_PVC,
    SCHEDULER_HEADS,
    has_scheduler_head,
    insufficient_resource,
    is_by_design_taint,
    parse_scheduler_message,
    reason_category,
    taint_of,
)
from bot.snapshot.base import StrictRecord
from bot.snapshot.gpu import GPU_MODEL_LABELS, gpu_label
from bot.snapshot.kubernetes import GPU_RESOURCE, Event, Node, Pod
from bot.terms import Severity

Verdict = Literal[
    "insufficient",
    "fragmented",
    "exceeds-every-node",
    "taint",
    "selector",
    "cordoned",
    "volume",
    "topology",
    "ports",
    "gpu-not-advertised",
    "unknown-resource",
    "gpu-label-missing",
    "node-condition",
    "gpu-unconfirmed",
]

# What the paste reader names a node pasted without ``Name:`` (``(pasted node)``, ``(pasted node 2)``):
# no command can be filled with it.
UNNAMED_NODE_PREFIX = "(pasted node"

FIT_PROVIDES = (
    "pod",
    "summary",
    "scheduler_message",
    "requests",
    "closest",
    "lacking",
    "taint",
    "selector",
    "resource",
    "node",
    "pvc",
    "free_total",
    "largest_node",
    "owner",
    "gpu_label",
    "gpu_value",
    "known_values",
    "group",
    "condition",
    "gpu_node",
    "plugin_namespace",
)


class FitParams(StrictRecord):
    verdict: Verdict


@dataclass
class PodFit:
    pod: Pod
    verdict: Verdict
    params: dict[str, str] = field(default_factory=dict)
    evidence: list[Evidence] = field(default_factory=list)
    # A second reading of the same scheduler message (a shortage beside a constraint): reported
    # as a warning, after the reading the message supports best.
    secondary: bool = False
    facts: tuple[Fact, ...] = ()


def gpu_node_names(ctx: Context) -> frozenset[str]:
    return ctx.memo("gpu_node_names", lambda: frozenset(n.name for n in ctx.gpu_nodes))


def _format_requests(requests: dict[str, float]) -> str:
    shown = [r for r in BASIC_RESOURCES if r in requests] + sorted(
        r for r in requests if r not in BASIC_RESOURCES
    )
    return ", ".join(f"{r}={format_amount(r, requests[r])}" for r in shown if requests[r] > 0) or "none"


def _closest(shortfalls: dict[str, list[Shortfall]], limit: int = 3) -> list[tuple[str, list[Shortfall]]]:
    def badness(item: tuple[str, list[Shortfall]]) -> tuple[int, float]:
        lacking = item[1]
        relative = sum((s.needed - s.free) / s.needed if s.needed else 1.0 for s in lacking)
        return len(lacking), relative

    return sorted(shortfalls.items(), key=badness)[:limit]


def _closest_facts(closest: list[tuple[str, list[Shortfall]]]) -> list[Fact]:
    """What the closest node lacks (``Shortfall``), then each closest node and its shortfalls
    (``ClosestNode``); the renderer words them (``node-1 (cpu: needs 4, 1 free of 8 allocatable)``)."""
    if not closest:
        return []
    return [
        *(s.fact() for s in closest[0][1]),
        *(ClosestNode(node, tuple(s.fact() for s in lacking)) for node, lacking in closest),
    ]


def _unbound_pvcs(ctx: Context, pod: Pod) -> list[str]:
    phases = ctx.memo("pvc_phases", lambda: {(c.namespace, c.name): c.phase for c in ctx.kube.pvcs})
    return [name for name in pod.pvc_names if phases.get((pod.namespace, name), "Bound") != "Bound"]


def _event_evidence(event: Event | None) -> list[Evidence]:
    if event is None:
        return []
    times = f" (x{event.count})" if event.count > 1 else ""
    return [Evidence(source=f"event {event.reason}{times}", text=event.message)]


def _offered(ctx: Context) -> frozenset[str]:
    """The resources some node has allocatable."""
    return ctx.memo(
        "offered_resources",
        lambda: frozenset(r for n in ctx.kube.nodes for r, amount in n.allocatable.items() if amount > 0),
    )


def _missing_resource(ctx: Context, pod: Pod) -> str | None:
    offered = _offered(ctx)
    for resource, amount in sorted(pod.requests.items()):
        if amount <= 0 or resource in BASIC_RESOURCES or resource == "pods":
            continue
        if resource not in offered:
            return resource
    return None


def _label_values(ctx: Context, key: str) -> list[str]:
    """The values of one node label across the nodes, sorted."""
    return ctx.memo(
        f"label_values\0{key}", lambda: sorted({n.labels[key] for n in ctx.kube.nodes if key in n.labels})
    )


def _gpu_label_gap(ctx: Context, pod: Pod) -> tuple[str, str, list[str]] | None:
    """A GPU-model label the Pod requires with a value that no node carries."""
    wanted: list[tuple[str, list[str]]] = [(k, [v]) for k, v in pod.node_selector.items()]
    for term in pod.required_node_terms:
        wanted += [(r.key, r.values) for r in term.match_expressions if r.operator == "In"]
    for key, values in wanted:
        if key not in GPU_MODEL_LABELS:
            continue
        present = _label_values(ctx, key)
        if not set(values) & set(present):
            return key, ", ".join(values), present
    return None


def _gpu_params(ctx: Context, resource: str) -> dict[str, str]:
    return dict(ctx.memo(f"gpu_params:{resource}", lambda: _silent_gpu_nodes(ctx, resource)))


def _silent_gpu_nodes(ctx: Context, resource: str) -> dict[str, str]:
    gpu_nodes = gpu_node_names(ctx)
    silent = [n for n in ctx.kube.nodes if n.name in gpu_nodes and n.allocatable.get(resource, 0.0) <= 0]
    return _unadvertised(silent, resource) if silent else {}


def _unadvertised(silent: list[Node], resource: str) -> dict[str, str]:
    """Facts about GPU nodes that advertise none of ``resource``."""
    label, value = gpu_label(silent[0])
    return {
        "node": ", ".join(n.name for n in silent[:5]),
        "gpu_label": label,
        "gpu_value": value,
        "resource": resource,
    }


def _largest(ctx: Context, resource: str) -> Node | None:
    """The node with the most allocatable ``resource``, computed once per resource."""
    return ctx.memo(
        f"largest:{resource}",
        lambda: (
            max(ctx.kube.nodes, key=lambda n: n.allocatable.get(resource, 0.0)) if ctx.kube.nodes else None
        ),
    )


def _structural(
    ctx: Context, explainer: FitExplainer, explanation: FitExplanation, pod: Pod
) -> tuple[Verdict, dict[str, str]] | None:
    nodes = ctx.kube.nodes
    missing = _missing_resource(ctx, pod)
    if missing is not None:
        gpu = _gpu_params(ctx, missing)
        if gpu and missing == GPU_RESOURCE:
            return "gpu-not-advertised", gpu
        offered = sorted({r for n in nodes for r in n.allocatable if "/" in r})
        return "unknown-resource", {"resource": missing, "known_values": ", ".join(offered) or "none"}
    gap = _gpu_label_gap(ctx, pod)
    if gap is not None:
        key, value, present = gap
        return "gpu-label-missing", {"gpu_label": key, "gpu_value": value, "known_values": ", ".join(present)}
    if explanation.prefilter_reason == REASON_UNBOUND_PVC:
        return "volume", {}
    if explanation.fitting_nodes:
        return None
    if explanation.eligible_nodes:
        gpu_nodes = gpu_node_names(ctx)
        silent = [
            ctx.nodes_by_name[n]
            for n in explanation.eligible_nodes
            if n in gpu_nodes and ctx.nodes_by_name[n].allocatable.get(GPU_RESOURCE, 0.0) <= 0
        ]
        if pod.requests.get(GPU_RESOURCE, 0.0) > 0 and silent:
            # A GPU node the Pod may use advertises no GPU: the device plugin, not capacity.
            return "gpu-not-advertised", _unadvertised(silent, GPU_RESOURCE)
        affinity_blocked = [n for n in explanation.eligible_nodes if n in explanation.blocked_by]
        if affinity_blocked:
            return "topology", {"node": ", ".join(affinity_blocked[:5])}
        return _capacity_verdict(ctx, explanation, pod)
    return _constraint_verdict(ctx, explainer, explanation, pod)


def _capacity_verdict(ctx: Context, explanation: FitExplanation, pod: Pod) -> tuple[Verdict, dict[str, str]]:
    eligible = [ctx.nodes_by_name[name] for name in explanation.eligible_nodes]
    for resource, needed in pod.requests.items():
        if needed <= 0:
            continue
        biggest = max(eligible, key=lambda n: n.allocatable.get(resource, 0.0))
        if needed > biggest.allocatable.get(resource, 0.0):
            largest = format_amount(resource, biggest.allocatable.get(resource, 0.0))
            return "exceeds-every-node", {
                "resource": resource,
                "largest_node": biggest.name,
                "largest_amount": largest,
                "largest_kind": "allocatable",
            }
    lacking = explanation.lacking_resources
    explainer_free = {
        resource: sum(
            max(
                0.0,
                n.allocatable.get(resource, 0.0) - ctx.requested_by_node.get(n.name, {}).get(resource, 0.0),
            )
            for n in eligible
        )
        for resource in lacking
        if resource != "pods"
    }
    if explainer_free and all(explainer_free[r] >= pod.requests.get(r, 0.0) for r in explainer_free):
        resource = max(explainer_free, key=lambda r: pod.requests.get(r, 0.0) / max(explainer_free[r], 1e-9))
        best = max(
            eligible,
            key=lambda n: (
                n.allocatable.get(resource, 0.0) - ctx.requested_by_node.get(n.name, {}).get(resource, 0.0)
            ),
        )
        best_free = best.allocatable.get(resource, 0.0) - ctx.requested_by_node.get(best.name, {}).get(
            resource, 0.0
        )
        # Atoms; the renderer says "4 cpu free across 3 node(s)" and "node-2 (2 cpu free)".
        return "fragmented", {
            "resource": resource,
            "free_amount": format_amount(resource, explainer_free[resource]),
            "free_nodes": str(len(eligible)),
            "largest_node": best.name,
            "largest_amount": format_amount(resource, best_free),
            "largest_kind": "free",
        }
    resource = sorted(lacking)[0] if lacking else ""
    return "insufficient", {"resource": resource}


def _constraint_verdict(
    ctx: Context, explainer: FitExplainer, explanation: FitExplanation, pod: Pod
) -> tuple[Verdict, dict[str, str]]:
    """Every node is excluded by a constraint: which one is the Pod really up against?"""
    selected = explainer.selected_by(pod)
    if not selected:
        # No node carries the labels the Pod asks for; taints elsewhere are beside the point.
        return "selector", {}
    blocked = {n: r for n, r in explanation.blocked_by.items() if n in selected}
    by_design = {n for n, reason in blocked.items() if any(t in reason for t in CONTROL_PLANE_TAINTS)}
    considered = [n for n in blocked if n not in by_design] or list(blocked)
    short = explainer.shortfalls_on(pod, considered, ctx.nodes_by_name)
    explanation.shortfalls.update(short)
    roomy = [n for n in considered if n not in short] or considered
    reasons = Counter(blocked[n] for n in roomy)
    reason, _ = reasons.most_common(1)[0]
    category = reason_category(reason)
    nodes = [n for n in roomy if blocked[n] == reason]
    params = {"node": ", ".join(nodes[:5])}
    if category == "taint":
        params["taint"] = reason.split("taint ", 1)[-1]
        return "taint", params
    if category == "cordoned":
        return "cordoned", params
    if category == "node-condition":
        params["taint"] = params["condition"] = taint_of(reason)
        return "node-condition", params
    return "selector", params


# Filters kube-scheduler runs after NodeResourcesFit (volumes, pod affinity, topology spread): a
# node that reports one of them had room for the Pod, so the constraint, not capacity, holds it.
_AFTER_RESOURCES = frozenset({"volume", "topology"})
# Constraints a node puts on Pods (a dedicated pool's taint, a cordon), as opposed to the Pod's own
# selector: a selector usually steers the Pod to the GPU pool, so the nodes reported short are the
# ones it chose; a taint usually keeps it out of that pool, so they are the ones it was left with.
_KEEPS_OUT = frozenset({"taint", "cordoned", "node-condition"})
_CONSTRAINT_VERDICTS: dict[str, Verdict] = {
    "selector": "selector",
    "cordoned": "cordoned",
    "volume": "volume",
    "topology": "topology",
    "ports": "ports",
    "taint": "taint",
    "node-condition": "node-condition",
}


def _resource_verdict(
    ctx: Context, pod: Pod | None, counted: dict[str, int]
) -> tuple[Verdict, dict[str, str]]:
    resources = [r for r in (insufficient_resource(reason) for reason in counted) if r]
    # A GPU or other extended resource names the shortage better than cpu or memory on other nodes.
    resources.sort(key=lambda r: ("/" not in r, r == "pods"))
    resource = resources[0] if resources else "pods"
    if resource.startswith("alpha.kubernetes.io/") or "mig-" in resource:
        return "unknown-resource", {"resource": resource}
    gpu = _gpu_params(ctx, resource) if resource == GPU_RESOURCE else {}
    if gpu:
        return "gpu-not-advertised", gpu
    needed = pod.requests.get(resource, 0.0) if pod else 0.0
    biggest = _largest(ctx, resource) if needed > 0 else None
    if biggest is not None:
        largest = biggest.allocatable.get(resource, 0.0)
        if needed > largest:
            shown = format_amount(resource, largest)
            return "exceeds-every-node", {
                "resource": resource,
                "largest_node": biggest.name,
                "largest_amount": shown,
                "largest_kind": "allocatable",
            }
    return "insufficient", {"resource": resource}


def _constraint_reading(category: str, counted: dict[str, int]) -> tuple[Verdict, dict[str, str]]:
    params: dict[str, str] = {}
    if category in ("taint", "node-condition"):
        reason = max((r for r in counted if reason_category(r) == category), key=lambda r: counted[r])
        params["taint"] = taint_of(reason)
        if category == "node-condition":
            params["condition"] = params["taint"]
    return _CONSTRAINT_VERDICTS[category], params


def _gpu_capacity_shown(ctx: Context) -> bool:
    """Whether any node in the snapshot shows nvidia.com/gpu in its capacity or allocatable."""
    return ctx.memo(
        "gpu_capacity_shown",
        lambda: any(
            n.allocatable.get(GPU_RESOURCE, 0.0) > 0 or n.capacity.get(GPU_RESOURCE, 0.0) > 0
            for n in ctx.kube.nodes
        ),
    )


def _unconfirmed_gpu_params(ctx: Context) -> dict[str, str]:
    """Names for the commands that settle capacity (1) against a GPU node that advertises none (3)."""
    named = [n for n in ctx.kube.nodes if not n.name.startswith(UNNAMED_NODE_PREFIX)]
    gpu_nodes = gpu_node_names(ctx)
    shown = [n.name for n in named if n.name in gpu_nodes] or [n.name for n in named]
    plugin = next((p.namespace for p in ctx.kube.device_plugin_pods if p.namespace), "")
    return {"gpu_node": ", ".join(shown[:3]), "plugin_namespace": plugin, "resource": GPU_RESOURCE}


def _from_message(
    ctx: Context, pod: Pod | None, reasons: Counter[str], prefilter: str | None
) -> list[tuple[Verdict, dict[str, str]]]:
    """Readings of the scheduler's reasons alone, the most likely first, refined by pasted nodes.

    Each counted reason is read on its own; one the grammar does not know costs only itself.
    Role taints (``node-role.kubernetes.io/...``) keep Pods off control-plane and infra nodes by
    design and are set aside unless nothing else is left. When a shortage and a constraint are
    both reported, both readings are returned, and the order follows kube-scheduler's filter
    order: a node rejected by a filter that runs after the resource check (volumes, pod affinity,
    spread) had room, so that constraint comes first. A node rejected before it (taint, selector,
    ports, cordon) was never measured: for a GPU or other extended resource beside a taint or a
    cordon, the nodes reported short are usually nodes without any and the tainted ones are the GPU
    pool, so the taint comes first; beside the Pod's own selector, and for cpu or memory, the
    shortage does.
    """
    if prefilter and reason_category(prefilter) == "volume":
        return [("volume", {})]
    counted = {r: c for r, c in reasons.items() if c > 0 and not is_by_design_taint(r)} or {
        r: c for r, c in reasons.items() if c > 0
    }
    by_category: Counter[str] = Counter()
    for reason, count in counted.items():
        by_category[reason_category(reason)] += count
    constraints = [(c, n) for c, n in by_category.most_common() if c in _CONSTRAINT_VERDICTS]
    readings: list[tuple[Verdict, dict[str, str]]] = [_constraint_reading(c, counted) for c, _ in constraints]
    if not by_category["resources"]:
        return readings
    shortage = _resource_verdict(ctx, pod, counted)
    if shortage[0] in ("gpu-not-advertised", "unknown-resource"):
        return [shortage, *readings]
    shortages = [shortage]
    if shortage == ("insufficient", {"resource": GPU_RESOURCE}) and not _gpu_capacity_shown(ctx):
        # ``Insufficient nvidia.com/gpu`` is also what a GPU node that advertises no GPU at all
        # gets: without any node's allocatable in the paste the two cannot be told apart, so the
        # second reading is reported too, with the commands that settle it.
        shortages.append(("gpu-unconfirmed", _unconfirmed_gpu_params(ctx)))
    extended = "/" in shortage[1].get("resource", "")
    constraint_first = any(c in _AFTER_RESOURCES for c, _ in constraints) or (
        extended and any(c in _KEEPS_OUT for c, _ in constraints)
    )
    return [*readings, *shortages] if constraint_first else [*shortages, *readings]


def _reasons_by_resource(reasons: Counter[str]) -> tuple[dict[str, str], list[Fact]]:
    """The scheduler's own resource reasons and their counts, as ``RefusedOn`` facts (the reason
    verbatim, ``Insufficient nvidia.com/gpu``; the renderer adds "on 2 node(s)"), or the param
    ``lacking`` ``not-applicable`` when it gives none."""
    rows = [
        RefusedOn(reason, count)
        for reason, count in sorted(reasons.items())
        if reason_category(reason) == "resources"
    ]
    return ({}, list(rows)) if rows else ({"lacking": "not-applicable"}, [])


def _base_params(pod: Pod) -> dict[str, str]:
    return {
        "pod": pod.name,
        "namespace": pod.namespace,
        "requests": _format_requests(pod.requests),
        "selector": ", ".join(selector_requirements(pod.node_selector, pod.required_node_terms)) or "none",
        "owner": f"{pod.owner.kind}/{pod.owner.name}" if pod.owner else "",
        "group": pod.labels.get(RAY_GROUP_LABEL, ""),
        "pvc": ", ".join(pod.pvc_names),
    }


def _agreement(explanation: FitExplanation, event: Event | None) -> list[Evidence]:
    """Our replay next to the scheduler's words; a disagreement is stated, not hidden."""
    ours = Evidence(
        source="raydiag fit replay", text=explanation.summary, source_phrase="evidence.fit_replay"
    )
    if event is None:
        return [ours]
    agrees = explanation.agrees_with(event.message)
    if agrees is None:
        return [ours]
    if agrees:
        return [
            Evidence(
                source="raydiag fit replay (agrees with the scheduler)",
                text=explanation.summary,
                source_phrase="evidence.fit_replay_agrees",
            )
        ]
    return [
        Evidence(
            source="raydiag fit replay (differs from the last scheduler message: the cluster has changed)",
            text=explanation.summary,
            source_phrase="evidence.fit_replay_differs",
        )
    ]


@dataclass
class _Judged:
    """The replay of one Pod template, shared by every Pod made from it."""

    explanation: FitExplanation
    verdict: tuple[Verdict, dict[str, str]] | None
    params: dict[str, str]
    facts: list[Fact]
    _agreements: dict[str, list[Evidence]] = field(default_factory=dict)

    def agreement(self, event: Event | None) -> list[Evidence]:
        key = event.message if event else ""
        if key not in self._agreements:
            self._agreements[key] = _agreement(self.explanation, event)
        return self._agreements[key]


def _judge(ctx: Context, explainer: FitExplainer, pod: Pod, unbound: list[str]) -> _Judged:
    explanation = explainer.explain(pod, unbound)
    verdict = _structural(ctx, explainer, explanation, pod)
    params = {"summary": explanation.summary}
    # Nodes the Pod may use come first; the others (already measured by the verdict) otherwise.
    closest = _closest(explanation.shortfalls)
    return _Judged(explanation, verdict, params, _closest_facts(closest))


def analyse_pending_pods(ctx: Context) -> list[PodFit]:
    nodes = ctx.kube.nodes
    complete = bool(nodes) and ctx.kube.nodes_complete
    explainer = (
        FitExplainer(
            nodes,
            ctx.requested_by_node,
            # Pod affinity, the pending Pods' own and the bound Pods' anti-affinity, needs the Pods
            # of each node (the snapshot's index, built anyway).
            ctx.pods_by_node,
        )
        if complete
        else None
    )
    results: list[PodFit] = []
    seen: set[tuple[str, str]] = set()
    # Pods that share a template are judged once; their verdicts are identical by construction.
    cache: dict[tuple[object, ...], _Judged] = {}
    for pod in ctx.unscheduled_pods:
        seen.add(pod.key)
        if pod.scheduling_gates:
            continue
        event = ctx.latest_event(pod, "FailedScheduling")
        params = _base_params(pod)
        found: list[Fact] = []
        evidence = _event_evidence(event)
        verdict: tuple[Verdict, dict[str, str]] | None = None
        others: list[tuple[Verdict, dict[str, str]]] = []
        if explainer is not None:
            unbound = _unbound_pvcs(ctx, pod)
            signature = (
                tuple(sorted(pod.requests.items())),
                tuple(sorted(pod.node_selector.items())),
                # The reprs of the frozen records: every field, and fields only, like their JSON.
                tuple(repr(t) for t in pod.required_node_terms),
                tuple(repr(t) for t in pod.tolerations),
                tuple(repr(t) for t in pod.pod_affinity_terms),
                # Affinity terms select Pods by labels and namespace, a Pod's own or those bound.
                (pod.namespace, tuple(sorted(pod.labels.items())))
                if pod.pod_affinity_terms or explainer.anti_affinity_holders
                else (),
                tuple(unbound),
            )
            judged = cache.get(signature)
            if judged is None:
                judged = cache[signature] = _judge(ctx, explainer, pod, unbound)
            verdict = judged.verdict
            params.update(judged.params)
            found += judged.facts
            if verdict is not None:
                evidence += judged.agreement(event)
        if verdict is None and event is not None:
            # The replay found room, yet the scheduler refused: a constraint the snapshot cannot
            # show (pod affinity, host ports, topology) or a newer state. Its own reasons decide.
            parsed = _scheduler_reading(ctx, event.message)
            if parsed is not None:
                _, reasons, prefilter = parsed
                readings = _from_message(ctx, pod, reasons, prefilter)
                verdict, others = (readings[0], readings[1:]) if readings else (None, [])
                params.setdefault("summary", event.message)
                if not any(isinstance(f, ShortfallFact) for f in found):
                    atoms, refused = _reasons_by_resource(reasons)
                    params.update(atoms)
                    found += refused
                if explainer is None:
                    params["closest"] = "not-applicable"
        if verdict is None:
            continue
        if event is not None:
            params["scheduler_message"] = event.message
        for position, (kind, extra) in enumerate([verdict, *others]):
            results.append(
                PodFit(pod, kind, {**params, **extra}, evidence, secondary=position > 0, facts=tuple(found))
            )
    # Another RayCluster's Pods are out of this diagnosis; their events are no orphans either.
    out_of_scope = (
        {(p.namespace, p.name) for p in ctx.kube.pods if not ctx.in_scope(p)}
        if ctx.cluster is not None
        else set()
    )
    results += _orphan_scheduler_events(ctx, seen | out_of_scope)
    return results


def _scheduler_reading(ctx: Context, message: str) -> tuple[int, Counter[str], str | None] | None:
    """``parse_scheduler_message``, once per distinct message and diagnosis (Pods made from one
    template get the same message); the counts returned are the caller's own."""
    readings: dict[str, tuple[int, Counter[str], str | None] | None] = ctx.memo("scheduler_messages", dict)
    if message not in readings:
        readings[message] = parse_scheduler_message(message)
    parsed = readings[message]
    return None if parsed is None else (parsed[0], Counter(parsed[1]), parsed[2])


def _orphan_scheduler_events(ctx: Context, seen: set[tuple[str, str]]) -> Iterator[PodFit]:
    """FailedScheduling events whose Pod is not in the snapshot (a pasted event line)."""
    latest: dict[tuple[str | None, str | None], Event] = {}
    headed = {id(event) for event in ctx.events_that_may_match(*SCHEDULER_HEADS)}
    for event in ctx.kube.events:
        # Operators copy the scheduler's message into their own events (``Unschedulable`` from a
        # training operator, ``PodScheduled`` conditions); the message, not the reason, says it.
        if event.object_kind not in (None, "Pod") or not (
            event.reason == "FailedScheduling" or (id(event) in headed and has_scheduler_head(event.message))
        ):
            continue
        if event.object_name and (event.namespace or "default", event.object_name) in seen:
            continue
        key = (event.namespace, event.object_name)
        previous = latest.get(key)
        parsed = None if previous is None else _scheduler_reading(ctx, event.message)
        if previous is not None and parsed and parsed[1] and not has_scheduler_head(event.message):
            # A long message wrapped over several pasted lines: the lines after its head carry
            # more counted reasons of the same message.
            joined = f"{previous.message.rstrip(' ,')}, {event.message}"
            latest[key] = replace(previous, message=joined[:20_000])
        else:
            latest[key] = event
    for (namespace, name), event in latest.items():
        parsed = _scheduler_reading(ctx, event.message)
        if parsed is None:
            continue
        _, reasons, prefilter = parsed
        pod = Pod(name=name or "(unnamed pod)", namespace=namespace or "default", phase="Pending")
        atoms, refused = _reasons_by_resource(reasons)
        params = {
            "pod": name or "",
            "namespace": namespace or "",
            "summary": event.message,
            "scheduler_message": event.message,
            **atoms,
            "closest": "not-applicable",
        }
        for position, (kind, extra) in enumerate(_from_message(ctx, None, reasons, prefilter)):
            yield PodFit(
                pod,
                kind,
                {**params, **extra},
                _event_evidence(event),
                secondary=position > 0,
                facts=tuple(refused),
            )


def _pod_subject(pod: Pod) -> Subject:
    return Subject(
        kind="Pod", name=pod.name if pod.name != "(unnamed pod)" else None, namespace=pod.namespace
    )


@detector("pending_pod_fit", FIT_PROVIDES, FitParams)
def pending_pod_fit(ctx: Context, rule: Rule) -> Iterable[Hit]:
    wanted = FitParams(**rule.params).verdict
    for fit in ctx.memo("pending_pod_fit", lambda: analyse_pending_pods(ctx)):
        if fit.verdict == wanted:
            severity: Severity | None = "warning" if fit.secondary else None
            yield Hit(_pod_subject(fit.pod), tuple(fit.evidence), fit.params, severity, fit.facts)


_GPU_SHORTAGE = re.compile(r"insufficient nvidia\.com/gpu", re.IGNORECASE)


def _gpu_shortage_said(ctx: Context) -> Evidence | None:
    """The scheduler's (or the reporter's) ``Insufficient nvidia.com/gpu``, wherever it was pasted."""
    for event in ctx.kube.events:
        if _GPU_SHORTAGE.search(event.message):
            return Evidence(source=f"event {event.reason or 'FailedScheduling'}", text=event.message)
    for text in ctx.iter_texts():
        if _GPU_SHORTAGE.search(text.text):
            return Evidence(source=text.source, text=text.text[:600])
    return None


def _gpu_containers(pod: Pod) -> list[tuple[str, float]]:
    return [
        (c.name, amount)
        for c in pod.containers
        if (amount := c.limits.get(GPU_RESOURCE, c.requests.get(GPU_RESOURCE, 0.0))) > 0
    ]


@detector("gpu_split_over_containers", ("pod", "containers", "total", "largest_node"))
def gpu_split_over_containers(ctx: Context, rule: Rule) -> Iterable[Hit]:
    """A Pod whose containers each ask for GPUs, refused for GPUs: the requests add up per Pod.

    Every container's ``nvidia.com/gpu`` limit is its own devices (GPUs are not shared between
    containers), so two containers with one GPU each need a node with two free. When the nodes in
    the snapshot show one with that many allocatable, the sum is not what holds the Pod.
    """
    pods = [p for p in ctx.pods_not_running if not p.node_name and len(_gpu_containers(p)) > 1]
    if not pods:
        return
    said = _gpu_shortage_said(ctx)
    if said is None:
        return
    largest = _largest(ctx, GPU_RESOURCE)
    most = largest.allocatable.get(GPU_RESOURCE, 0.0) if largest is not None else 0.0
    for pod in pods:
        containers = _gpu_containers(pod)
        total = sum(amount for _, amount in containers)
        if most >= total:
            continue
        evidence = [
            Evidence(source=f"pod {pod.name} container {name}", text=f"limits: {GPU_RESOURCE}: {amount:g}")
            for name, amount in containers[:4]
        ]
        yield Hit(
            _pod_subject(pod),
            (*evidence, said),
            {
                "pod": pod.name,
                "namespace": pod.namespace,
                "containers": ", ".join(f"{name} ({amount:g})" for name, amount in containers),
                "total": f"{total:g}",
                **(
                    {
                        "largest_node": largest.name,
                        "largest_amount": f"{most:g}",
                        "largest_kind": "allocatable",
                        "largest_resource": GPU_RESOURCE,
                    }
                    if largest and most > 0
                    else {}
                ),
            },
        )
