"""Worker group templates judged on their own: what a RayCluster's spec says before any Pod exists.

These checks need nothing but the manifest, so ``raydiag lint`` runs them on files before they
deploy, and a paste or a live diagnosis gets them too. Two of them are exact whatever else is known
(a group that selects one GPU model and declares no GPU to Ray; ``num-gpus`` above the GPUs the Pod
gets). The other two are what the template alone can say about scheduling (a GPU resource name no
NVIDIA device-plugin strategy advertises; a group sent to GPU nodes without tolerating their taint);
where the snapshot holds the group's Pods and the node list, the scheduler's own filters are
replayed on those Pods instead (the ``pending_pod_fit`` rules), so these stay quiet there. A group
held against a node list or the team's conventions is ``bot.classify.detectors.group_lint``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from difflib import SequenceMatcher
from typing import Literal

from bot.catalogue import Rule
from bot.classify.context import RAY_CLUSTER_LABEL, RAY_GROUP_LABEL, RAY_NODE_TYPE_LABEL, Context
from bot.classify.detectors.ray_resources import (
    format_shape,
    group_facts,
    group_ray_resources,
    is_gpu_type_resource,
    is_ray_gpu_limit,
    untranslated_accelerator,
)
from bot.classify.registry import Hit, detector
from bot.diagnosis import Evidence, Subject
from bot.read.quantity import parse_quantity
from bot.snapshot.base import StrictRecord
from bot.snapshot.gpu import GPU_MODEL_LABELS, GPU_NODE_LABELS, LABEL_OFF, LEGACY_GPU_RESOURCE
from bot.snapshot.kubernetes import GPU_RESOURCE, RayClusterObject, RayGroup, Toleration

# What the NVIDIA device plugin advertises: ``nvidia.com/gpu`` (MIG strategy none or single), one
# ``nvidia.com/mig-<g>g.<memory>gb`` per profile (strategy mixed; ``+me`` with the media
# extensions), and ``nvidia.com/gpu.shared`` for time-sliced or MPS-shared GPUs renamed by default.
# HAMi, which reuses the vendor's domain, adds ``nvidia.com/gpumem``, ``gpucores`` and
# ``gpumem-percentage`` beside ``nvidia.com/gpu``.
_NVIDIA_NAMES = frozenset(
    {
        GPU_RESOURCE,
        "nvidia.com/gpu.shared",
        "nvidia.com/gpumem",
        "nvidia.com/gpucores",
        "nvidia.com/gpumem-percentage",
    }
)
_MIG_NAME = re.compile(r"^nvidia\.com/mig-\d+g\.\d+gb(?:\+me)?$")
# A name meant for the NVIDIA plugin: its domain names the vendor or misspells ``nvidia.com``, or it
# has no domain at all and says gpu or nvidia (``gpu: 1``, ``GPU: 1``, ``nvidia-gpu: 1``).
_BARE_GPU = re.compile(r"(?i)^(?:gpus?|[\w.-]*nvidia[\w.-]*)$")
_VENDOR_DOMAIN = "nvidia.com"
# The taint GPU node pools carry (GKE, AKS with the GPU operator, most EKS and on-premises setups).
_GPU_TAINT_KEY = GPU_RESOURCE
# KubeRay's ``ray.io/group`` label on the head Pod; the head group's template is named ``head`` here.
HEAD_GROUP = "headgroup"


def is_advertised_gpu_name(name: str) -> bool:
    """A resource name an NVIDIA device-plugin strategy (or HAMi beside it) can advertise."""
    return name in _NVIDIA_NAMES or bool(_MIG_NAME.match(name))


def unknown_gpu_name(name: str) -> bool:
    """A GPU resource name no NVIDIA strategy produces: a typo, the wrong case, the legacy name."""
    if name == LEGACY_GPU_RESOURCE:
        return True
    if is_advertised_gpu_name(name):
        return False
    if "/" not in name:
        return bool(_BARE_GPU.match(name))
    domain = name.split("/", 1)[0].lower()
    return "nvidia" in domain or SequenceMatcher(None, domain, _VENDOR_DOMAIN).ratio() >= 0.8


def _other_accelerator(group: RayGroup) -> bool:
    """The group asks for an accelerator that is not an NVIDIA GPU (a TPU, AMD, a shared-GPU plugin):
    its nodes, taints and registration follow that device, which these checks do not judge."""
    for container in group.containers:
        for name, amount in container.limits.items():
            if amount > 0 and name != GPU_RESOURCE and (is_ray_gpu_limit(name) or "tpu" in name.lower()):
                return True
    return untranslated_accelerator(group) is not None


def _names_tpu(value: str) -> bool:
    return "tpu" in value.lower()


def selected_gpu_model(group: RayGroup) -> tuple[str, str] | None:
    """The GPU-model label the group's Pods must carry, with its value(s)."""
    for key, value in group.node_selector.items():
        if key in GPU_MODEL_LABELS and not _names_tpu(value):
            return key, value
    for term in group.required_node_terms:
        for requirement in term.match_expressions:
            values = ",".join(requirement.values)
            model = requirement.key in GPU_MODEL_LABELS and requirement.operator == "In"
            if model and values and not _names_tpu(values):
                return requirement.key, values
    return None


def selected_gpu_label(group: RayGroup) -> tuple[str, str] | None:
    """The label by which the group's Pods are sent to GPU nodes only, if any."""
    for key, value in group.node_selector.items():
        if (
            key in GPU_NODE_LABELS + GPU_MODEL_LABELS
            and value.lower() not in LABEL_OFF
            and not _names_tpu(value)
        ):
            return key, value
    terms = group.required_node_terms
    # Every term must send the Pod to GPU nodes; one term without a GPU label lets it go elsewhere.
    found: list[tuple[str, str]] = []
    for term in terms:
        hit = next(
            (
                (r.key, ",".join(r.values) or "(any)")
                for r in term.match_expressions
                if r.key in GPU_NODE_LABELS + GPU_MODEL_LABELS
                and (
                    r.operator == "Exists"
                    or (r.operator == "In" and any(v.lower() not in LABEL_OFF for v in r.values))
                )
            ),
            None,
        )
        if hit is None:
            return None
        found.append(hit)
    return found[0] if found else None


def tolerates_gpu_taint(tolerations: Iterable[Toleration]) -> bool:
    for toleration in tolerations:
        if toleration.effect not in (None, "", "NoSchedule", "NoExecute"):
            continue
        if not toleration.key and toleration.operator == "Exists":
            return True  # tolerates every taint
        if toleration.key == _GPU_TAINT_KEY:
            return True
    return False


def cluster_groups(ctx: Context) -> Iterator[tuple[RayClusterObject, RayGroup]]:
    """The head and worker groups of the RayClusters in scope (the diagnosed one, else all)."""
    clusters = list(ctx.kube.rayclusters)
    if ctx.cluster:
        clusters = [c for c in clusters if c.name == ctx.cluster] or clusters
    for cluster in clusters:
        for group in ([cluster.head] if cluster.head else []) + list(cluster.worker_groups):
            yield cluster, group


def _groups_with_pods(ctx: Context) -> frozenset[tuple[str, str, str]]:
    keys = set()
    for pod in ctx.ray_pods:
        cluster = pod.labels.get(RAY_CLUSTER_LABEL)
        head = pod.labels.get(RAY_NODE_TYPE_LABEL) == "head"
        group = HEAD_GROUP if head else pod.labels.get(RAY_GROUP_LABEL)
        if cluster and group:
            keys.add((pod.namespace, cluster, group))
    return frozenset(keys)


def group_pods_replayed(ctx: Context, cluster: RayClusterObject, group: RayGroup) -> bool:
    """Whether the fit replay judges this group for real: the snapshot has the node list and Pods
    of the group, whose placement the scheduler's own filters then explain (``pending_pod_fit``).
    Without them (a manifest, a node list of instance types, a group scaled to zero) only the
    template can be judged."""
    if not ctx.kube.nodes:
        return False
    name = HEAD_GROUP if group.is_head else group.name
    return (cluster.namespace, cluster.name, name) in ctx.memo(
        "groups_with_pods", lambda: _groups_with_pods(ctx)
    )


def group_hit(cluster: RayClusterObject, group: RayGroup, text: str, params: Mapping[str, str]) -> Hit:
    """A finding about one group's template: the RayCluster as its subject, ``text`` as its evidence
    (named after the group), with ``params``."""
    return Hit(
        Subject(kind="RayCluster", name=cluster.name, namespace=cluster.namespace),
        (Evidence(source=f"raycluster {cluster.name} group {group.name}", text=text),),
        params,
    )


class TemplateParams(StrictRecord):
    verdict: Literal[
        "gpu-model-undeclared", "gpu-overstated", "unknown-gpu-resource", "gpu-taint-untolerated"
    ]


def _model_undeclared(cluster: RayClusterObject, group: RayGroup, params: dict[str, str]) -> Hit | None:
    """Sent to one GPU model's nodes, yet asking for no GPU and declaring to Ray neither a GPU
    (whose model Ray would register as ``accelerator_type:<model>`` itself) nor a custom resource
    naming the model."""
    selected = selected_gpu_model(group)
    if selected is None or _other_accelerator(group):
        return None
    resources, _, gpu_limit = group_ray_resources(group)
    if gpu_limit > 0:
        return None  # the Pod has GPUs: hiding them from Ray is ray-start-params-hide-gpu's finding
    if resources.get("GPU", 0.0) > 0 or any(is_gpu_type_resource(k) for k in resources):
        return None
    key, value = selected
    text = f"nodeSelector {key}={value}; Ray resources {format_shape(resources)}"
    return group_hit(cluster, group, text, {**params, "selector_key": key, "selector_value": value})


def _overstated(cluster: RayClusterObject, group: RayGroup, params: dict[str, str]) -> Hit | None:
    """``num-gpus`` above the GPUs the container gets: Ray hands out GPUs the Pod does not have."""
    if "num-gpus" not in group.ray_start_params or untranslated_accelerator(group):
        return None
    declared = parse_quantity(group.ray_start_params["num-gpus"])
    _, _, gpu_limit = group_ray_resources(group)
    if declared is None or declared <= gpu_limit + 1e-9:
        return None
    value = group.ray_start_params["num-gpus"]
    text = f"nvidia.com/gpu limit {gpu_limit:g}; rayStartParams num-gpus: {value!r}"
    return group_hit(cluster, group, text, {**params, "param": "num-gpus", "value": value})


def _unknown_resources(cluster: RayClusterObject, group: RayGroup, params: dict[str, str]) -> Iterator[Hit]:
    for container in group.containers:
        for name in sorted({*container.limits, *container.requests}):
            if unknown_gpu_name(name):
                text = f"container {container.name} resources: {name}"
                yield group_hit(
                    cluster, group, text, {**params, "container": container.name, "resource": name}
                )


def _taint_untolerated(cluster: RayClusterObject, group: RayGroup, params: dict[str, str]) -> Hit | None:
    """Sent to GPU nodes without tolerating their taint. A Pod that asks for ``nvidia.com/gpu`` gets
    the toleration from the API server where the ExtendedResourceToleration admission plugin runs
    (GKE, and many other clusters), so only a group asking for no GPU is certain to be kept out."""
    selected = selected_gpu_label(group)
    if selected is None or tolerates_gpu_taint(group.tolerations) or _other_accelerator(group):
        return None
    if any(container.limits.get(GPU_RESOURCE, 0.0) > 0 for container in group.containers):
        return None
    key, value = selected
    text = f"nodeSelector {key}={value}; no toleration for {_GPU_TAINT_KEY}; no {GPU_RESOURCE} limit"
    return group_hit(
        cluster,
        group,
        text,
        {**params, "selector_key": key, "selector_value": value, "taint": f"{_GPU_TAINT_KEY}:NoSchedule"},
    )


@detector(
    "group_template",
    (
        "raycluster",
        "group",
        "param",
        "value",
        "pod_gpus",
        "declared",
        "selector_key",
        "selector_value",
        "container",
        "resource",
        "taint",
    ),
    TemplateParams,
)
def group_template(ctx: Context, rule: Rule) -> Iterable[Hit]:
    wanted = TemplateParams(**rule.params).verdict
    # Where the group's Pods are replayed against the nodes, that replay judges resource names and
    # taints for real.
    static_only = wanted in ("unknown-gpu-resource", "gpu-taint-untolerated")
    for cluster, group in cluster_groups(ctx):
        if static_only and group_pods_replayed(ctx, cluster, group):
            continue
        _, _, params = group_facts(cluster, group)
        if wanted == "unknown-gpu-resource":
            yield from _unknown_resources(cluster, group, params)
            continue
        judge = {
            "gpu-model-undeclared": _model_undeclared,
            "gpu-overstated": _overstated,
            "gpu-taint-untolerated": _taint_untolerated,
        }[wanted]
        hit = judge(cluster, group, params)
        if hit is not None:
            yield hit
