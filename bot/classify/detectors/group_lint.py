"""Worker group templates held against a node list and against the team's written conventions.

A manifest alone cannot say whether a group's Pod fits on any machine the team has, whether the
labels it selects exist, or whether it follows the team's mapping of GPU models to Ray resources.
These checks answer that from what ``raydiag lint`` adds to the snapshot:

- **The node list** (``--nodes FILE``: instance types the team has, origin ``file``; or
  ``--cluster``: the live nodes, origin ``live``). A group whose Pod asks for more than every node
  it may go to has (kube-scheduler's static filters, ``bot.snapshot.node_filter``, decide which) can
  never start: cause 1. Against the live nodes only, a label value the group selects that no node
  carries is cause 7 for a GPU-model label and cause 2 for any other (CAUSES.md, most specific
  first); a file of instance types says what could exist, not what does.
- **The conventions** (``conventions.gpu_models`` of the config), which ``raydiag lint`` puts into
  the rule's params: the classifier reads no configuration, and the shipped rule files carry no
  entries, so nothing here fires for a team that wrote none down.

Both come in through the rules' params (``bot.classify.lint.lint_rules``), so a diagnosis of a live
cluster runs neither: there the groups' Pods are replayed against the nodes instead
(``pending_pod_fit``), and a group scaled to zero may be waiting for nodes an autoscaler has not
made yet, which the nodes of the moment do not show.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import field
from difflib import SequenceMatcher
from typing import Any, Literal

from bot.catalogue import Rule
from bot.classify.context import RAY_CLUSTER_LABEL, RAY_GROUP_LABEL, RAY_NODE_TYPE_LABEL, Context
from bot.classify.detectors.ray_resources import (
    format_shape,
    gpu_models,
    group_facts,
    group_ray_resources,
    is_gpu_type_resource,
)
from bot.classify.detectors.templates import cluster_groups, group_hit, unknown_gpu_name
from bot.classify.fit import BASIC_RESOURCES, selector_requirements
from bot.classify.registry import Hit, detector
from bot.read.quantity import format_amount
from bot.snapshot.base import StrictRecord
from bot.snapshot.gpu import GPU_MODEL_LABELS, advertised_gpus, marked_as_gpu_node
from bot.snapshot.kubernetes import GPU_RESOURCE, Node, Pod, RayClusterObject, RayGroup, Toleration
from bot.snapshot.node_filter import classes, eligible_nodes, matches_node_affinity

GPU_PRODUCT_LABEL = "nvidia.com/gpu.product"
# How many label values that do exist a finding lists.
SHOWN_VALUES = 8
# Ray names the model of a node's GPUs from the device name NVML reports (``NVIDIA A100-SXM4-80GB``
# -> ``A100``; ``NvidiaGPUAcceleratorManager._gpu_name_to_accelerator_type``) and registers it as
# ``accelerator_type:<model>``; GPU feature discovery writes that device name into
# ``nvidia.com/gpu.product`` with its spaces turned into hyphens.
_RAY_MODEL = re.compile(r"\w+\s+((?:[A-Z]+\s+)*[A-Z0-9]*\d[A-Z0-9]*)")
ACCELERATOR_TYPE = "accelerator_type:"


def ray_accelerator_type(product: str) -> str | None:
    """The ``accelerator_type`` Ray registers on a node whose ``nvidia.com/gpu.product`` is
    ``product`` (``NVIDIA-A100-SXM4-80GB`` -> ``A100``), or None when Ray's rule does not say."""
    match = _RAY_MODEL.match(product.replace("-", " "))
    model = match.group(1).replace(" ", "-") if match else ""
    return model if len(model) > 1 else None


def _hit(cluster: RayClusterObject, group: RayGroup, text: str, facts: Mapping[str, str]) -> Hit:
    """A finding about one group: the RayCluster as subject, ``text`` as its evidence, and the
    group's params (``group_facts``, the label selector of its Pods) with ``facts``."""
    _, _, params = group_facts(cluster, group)
    own = f"{RAY_NODE_TYPE_LABEL}=head" if group.is_head else f"{RAY_GROUP_LABEL}={group.name}"
    return group_hit(
        cluster, group, text, {**params, "pod_labels": f"{RAY_CLUSTER_LABEL}={cluster.name},{own}", **facts}
    )


def _amounts(resources: Mapping[str, float]) -> str:
    shown = [r for r in BASIC_RESOURCES if r in resources] + sorted(
        r for r in resources if r not in BASIC_RESOURCES
    )
    return ", ".join(f"{r}={format_amount(r, resources[r])}" for r in shown) or "none"


def _selected(group: RayGroup) -> Iterator[tuple[str, str]]:
    """Each label value the group's Pods must (or, for ``In``, may) carry: the node selector's
    pairs, then the values of the required node affinity's ``In`` expressions."""
    yield from group.node_selector.items()
    for term in group.required_node_terms:
        for requirement in term.match_expressions:
            if requirement.operator == "In":
                for value in requirement.values:
                    yield requirement.key, value


# --- the node list -------------------------------------------------------------------------------


class GroupNodesParams(StrictRecord):
    verdict: Literal["exceeds-every-node", "gpu-label-on-no-node", "label-on-no-node"]
    # Set by ``raydiag lint`` (``lint_rules``); the rule files leave it off (see the docstring).
    enabled: bool = False


def _template_pod(group: RayGroup) -> Pod:
    """One Pod of the group, as the scheduler would see it. Each extended resource it requests
    brings a toleration for the taint of that name, as the ExtendedResourceToleration admission
    plugin adds it (GKE runs it); ``k8s-group-gpu-taint-untolerated`` judges the template without."""
    added = [
        Toleration(key=name, operator="Exists", effect="NoSchedule")
        for name, amount in group.requests.items()
        if amount > 0 and "/" in name and not name.split("/", 1)[0].endswith("kubernetes.io")
    ]
    return Pod(
        name=group.name,
        phase="Pending",
        requests=group.requests,
        node_selector=group.node_selector,
        required_node_terms=group.required_node_terms,
        tolerations=[*group.tolerations, *added],
    )


def _lacking(node: Node, needed: Mapping[str, float]) -> dict[str, float]:
    return {r: v for r, v in needed.items() if node.allocatable.get(r, 0.0) + 1e-9 < v}


def _too_large(ctx: Context, cluster: RayClusterObject, group: RayGroup) -> Hit | None:
    # Resource names no NVIDIA strategy advertises are k8s-group-unknown-gpu-resource's (cause 3).
    needed = {r: v for r, v in group.requests.items() if v > 0 and r != "pods" and not unknown_gpu_name(r)}
    if not needed:
        return None
    nodes = ctx.kube.nodes
    eligible = eligible_nodes(_template_pod(group), ctx.memo("node_classes", lambda: classes(nodes)))
    if not eligible:
        return None  # no node may take it at all: a constraint, not a size (see the label checks)
    if needed.get(GPU_RESOURCE, 0.0) > 0 and any(
        marked_as_gpu_node(n) and advertised_gpus(n) <= 0 for n in eligible
    ):
        return None  # a GPU node that advertises no GPU is cause 3, not a size
    if any(not _lacking(node, needed) for node in eligible):
        return None

    def shortfall(node: Node) -> tuple[int, float]:
        lacking = _lacking(node, needed)
        return len(lacking), sum((v - node.allocatable.get(r, 0.0)) / v for r, v in lacking.items())

    largest = min(eligible, key=shortfall)
    lacking = _lacking(largest, needed)
    has = {r: largest.allocatable.get(r, 0.0) for r in needed}
    requests, allocatable = _amounts(needed), _amounts(has)
    # The head's requests include the autoscaler container KubeRay adds (bot.read.kubernetes_json).
    added = " (with the autoscaler container KubeRay adds)" if group.is_head and cluster.autoscaling else ""
    text = (
        f"requests {requests}{added}; {len(eligible)} of {len(nodes)} node(s) may take it, the closest "
        f"is {largest.name} with allocatable {allocatable}"
    )
    return _hit(
        cluster,
        group,
        text,
        {
            "requests": requests,
            "largest_node": largest.name,
            "node_allocatable": allocatable,
            "short_of": ", ".join(sorted(lacking)),
            "eligible": str(len(eligible)),
            "nodes": str(len(nodes)),
            "selector": ", ".join(selector_requirements(group.node_selector, group.required_node_terms))
            or "none",
        },
    )


def _label_values(nodes: Iterable[Node]) -> dict[str, set[str]]:
    values: dict[str, set[str]] = {}
    for node in nodes:
        for key, value in node.labels.items():
            values.setdefault(key, set()).add(value)
    return values


def _absent_labels(ctx: Context, group: RayGroup) -> list[tuple[str, str]]:
    """The (key, value) pairs the group selects that no node carries. Values of ORed affinity
    terms count only when no node matches any term (one term a node satisfies is enough)."""
    values = ctx.memo("node_label_values", lambda: _label_values(ctx.kube.nodes))
    absent = [(k, v) for k, v in group.node_selector.items() if v not in values.get(k, ())]
    terms = group.required_node_terms
    if terms and not any(matches_node_affinity({}, terms, node) for node in ctx.kube.nodes):
        for term in terms:
            for requirement in term.match_expressions:
                wanted = set(requirement.values)
                if (
                    requirement.operator == "In"
                    and wanted
                    and not wanted & values.get(requirement.key, set())
                ):
                    absent.append((requirement.key, ",".join(requirement.values)))
    return list(dict.fromkeys(absent))


def _absent_label_hits(ctx: Context, cluster: RayClusterObject, group: RayGroup, gpu: bool) -> Iterator[Hit]:
    values = ctx.memo("node_label_values", lambda: _label_values(ctx.kube.nodes))
    for key, value in _absent_labels(ctx, group):
        if (key in GPU_MODEL_LABELS) is not gpu:
            continue
        present = sorted(values.get(key, ()))
        known = ", ".join(present[:SHOWN_VALUES]) + (" ..." if len(present) > SHOWN_VALUES else "")
        text = (
            f"selects {key}={value}; no node of {len(ctx.kube.nodes)} has it; "
            f"values of {key} on the nodes: {known or 'none'}"
        )
        yield _hit(
            cluster,
            group,
            text,
            {
                "selector_key": key,
                "selector_value": value,
                "known_values": known or "none",
                "nodes": str(len(ctx.kube.nodes)),
            },
        )


@detector(
    "group_nodes",
    (
        "raycluster",
        "group",
        "pod_labels",
        "pod_gpus",
        "declared",
        "requests",
        "largest_node",
        "node_allocatable",
        "short_of",
        "eligible",
        "nodes",
        "selector",
        "selector_key",
        "selector_value",
        "known_values",
    ),
    GroupNodesParams,
)
def group_nodes(ctx: Context, rule: Rule) -> Iterable[Hit]:
    params = GroupNodesParams(**rule.params)
    wanted = params.verdict
    # "Every node" and "no node" need the whole list; a paste shows some nodes only.
    if not params.enabled or not ctx.kube.nodes or not ctx.kube.nodes_complete:
        return
    # The values a file of instance types holds are not the cluster's: labels are checked live only.
    if wanted != "exceeds-every-node" and ctx.snapshot.origin != "live":
        return
    for cluster, group in cluster_groups(ctx):
        if wanted == "exceeds-every-node":
            hit = _too_large(ctx, cluster, group)
            if hit is not None:
                yield hit
        else:
            yield from _absent_label_hits(ctx, cluster, group, gpu=wanted == "gpu-label-on-no-node")


# --- the conventions -----------------------------------------------------------------------------


class GpuModelEntry(StrictRecord):
    """One entry of ``conventions.gpu_models`` (validated with the config in ``bot.config``)."""

    label: str
    value: str
    ray_resource: str


class ConventionParams(StrictRecord):
    verdict: Literal["resource-mismatch", "value-unknown"]
    # Filled by ``raydiag lint --config`` from the configuration; the rule files leave it empty.
    gpu_models: list[GpuModelEntry] = field(default_factory=list)

    def __post_init__(self) -> None:
        # Built from the rule's params (``ConventionParams(**rule.params)``) the entries are still
        # the config's mappings; pydantic has made them entries already.
        given: list[Any] = self.gpu_models
        if any(not isinstance(entry, GpuModelEntry) for entry in given):
            entries = [e if isinstance(e, GpuModelEntry) else GpuModelEntry(**e) for e in given]
            object.__setattr__(self, "gpu_models", entries)


def _closest(word: str, candidates: Iterable[str]) -> tuple[str, float]:
    """The candidate most like ``word`` (case ignored), with how alike (0 to 1)."""
    scored = [(SequenceMatcher(None, word.lower(), c.lower()).ratio(), c) for c in candidates]
    if not scored:
        return "", 0.0
    ratio, best = max(scored)
    return best, ratio


def _registered_by_ray(key: str, value: str, resource: str, resources: Mapping[str, float]) -> bool:
    """Whether Ray itself registers ``resource`` on the group's nodes: ``accelerator_type:<model>``
    on a node that registers GPUs, for the model Ray names from the device. For a label other than
    the product name the model is only compared by name (``nvidia-tesla-t4`` and ``T4``)."""
    if resources.get("GPU", 0.0) <= 0 or not resource.startswith(ACCELERATOR_TYPE):
        return False
    model = resource[len(ACCELERATOR_TYPE) :]
    if key == GPU_PRODUCT_LABEL:
        named = ray_accelerator_type(value)
        if named is not None:
            return named == model
    return bool(gpu_models(value) & gpu_models(model))


def _convention_hits(
    cluster: RayClusterObject, group: RayGroup, verdict: str, entries: list[GpuModelEntry]
) -> Iterator[Hit]:
    by_value = {(e.label, e.value): e for e in entries}
    keys = {e.label for e in entries}
    agreed = {e.ray_resource for e in entries}
    resources, _, _ = group_ray_resources(group)
    for key, value in dict.fromkeys(_selected(group)):
        if key not in keys:
            continue
        entry = by_value.get((key, value))
        if verdict == "value-unknown" and entry is None:
            suggestion, _ = _closest(value, (e.value for e in entries if e.label == key))
            suggested = by_value[(key, suggestion)]
            known = sorted({e.value for e in entries if e.label == key})
            text = (
                f"selects {key}={value}; the conventions name for {key}: {', '.join(known)}; "
                f"closest: {suggestion} ({suggested.ray_resource})"
            )
            yield _hit(
                cluster,
                group,
                text,
                {
                    "selector_key": key,
                    "selector_value": value,
                    "suggestion": suggestion,
                    "ray_resource": suggested.ray_resource,
                    "known_values": ", ".join(known),
                },
            )
        elif verdict == "resource-mismatch" and entry is not None:
            wanted = entry.ray_resource
            registered = resources.get(wanted, 0.0) > 0 or _registered_by_ray(key, value, wanted, resources)
            # GPU-type names the group declares that no convention has: a misspelling, or a model
            # of the group's own invention; either way tasks written against the convention miss.
            stray = sorted(n for n in resources if is_gpu_type_resource(n) and n not in agreed)
            if registered and not stray:
                continue
            near, ratio = _closest(wanted, stray)
            misspelt = near if ratio >= 0.6 else ""
            text = f"selects {key}={value}; Ray resources {format_shape(resources)}; the convention: {wanted}"
            if not registered:
                text += ", which Ray will not register on these nodes"
            if misspelt:
                text += f"; {misspelt} looks like a misspelling of it"
            elif stray:
                text += f"; {', '.join(stray)}: not in the conventions"
            yield _hit(
                cluster,
                group,
                text,
                {
                    "selector_key": key,
                    "selector_value": value,
                    "ray_resource": wanted,
                    "misspelt": misspelt,
                },
            )


@detector(
    "group_conventions",
    (
        "raycluster",
        "group",
        "pod_labels",
        "pod_gpus",
        "declared",
        "selector_key",
        "selector_value",
        "suggestion",
        "ray_resource",
        "known_values",
        "misspelt",
    ),
    ConventionParams,
)
def group_conventions(ctx: Context, rule: Rule) -> Iterable[Hit]:
    params = ConventionParams(**rule.params)
    if not params.gpu_models:
        return
    for cluster, group in cluster_groups(ctx):
        yield from _convention_hits(cluster, group, params.verdict, params.gpu_models)
