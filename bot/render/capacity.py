"""Where a cluster's GPUs are, layer by layer, per GPU model.

A GPU travels through five stages before work runs on it: a Kubernetes node advertises it
(allocatable), the scheduler gives it to a Ray Pod, the raylet in that Pod registers it with Ray,
an actor or task holds it, and more work may be waiting for one. Side by side, the stage where the
count drops is the layer where GPUs go missing: 8 allocatable, 8 given, 4 registered points at
cause 4 or 8, not at Kubernetes capacity.

Ray knows nothing of Kubernetes nodes, so a Ray node is tied to a GPU model through the Pod with
the same IP and the Kubernetes node that Pod runs on. A Ray node with no such Pod (a snapshot of
Ray alone) goes under its ``accelerator_type:*`` resource, else under ``unknown``. Demands that
name no GPU type could land on any model; with several models they are counted under ``any``.

Pure: reads a snapshot, never the network.
"""

from __future__ import annotations

import unicodedata
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from bot.classify.context import RAY_NODE_TYPE_LABEL, Context
from bot.classify.detectors.ray_resources import gpu_models
from bot.render.messages import Lang, say
from bot.render.slack import escape
from bot.snapshot.gpu import GPU_MODEL_LABELS, is_gpu_node
from bot.snapshot.kubernetes import GPU_RESOURCE, Node, Pod
from bot.snapshot.model import Snapshot
from bot.snapshot.ray import Demand, RayNode, RayState

UNKNOWN_MODEL = "unknown"
ANY_MODEL = "any"
ACCELERATOR_PREFIX = "accelerator_type:"
RAY_GPU = "GPU"
_MAX_MODEL_NAME = 40


@dataclass(frozen=True)
class GpuModelCapacity:
    model: str  # GPU model from node labels (e.g. "A100", "H100", "unknown")
    allocatable: float  # nvidia.com/gpu allocatable on Ready, schedulable Kubernetes nodes of this model
    given_to_ray_pods: float  # nvidia.com/gpu limits of running Ray Pods (KubeRay head/worker) on those nodes
    registered_in_ray: float  # GPU total of ALIVE Ray nodes whose IP matches those Pods
    in_use: float  # registered minus available (held by actors/tasks)
    pending_demand: float  # GPUs asked for by pending Ray demands (+ pending Pods' GPU requests), best effort

    @property
    def stages(self) -> tuple[float, float, float, float, float]:
        """The five figures in the order a GPU travels through them."""
        return (
            self.allocatable,
            self.given_to_ray_pods,
            self.registered_in_ray,
            self.in_use,
            self.pending_demand,
        )


STAGES = ("allocatable", "given_to_ray_pods", "registered_in_ray", "in_use", "pending_demand")


def model_name(text: str) -> str | None:
    """``NVIDIA-A100-SXM4-40GB``, ``nvidia-tesla-a100``, ``A100-80G`` → ``A100``; None for ``true``."""
    found = sorted(gpu_models(text))
    if found:
        return found[0].upper()
    cleaned = text.strip()[:_MAX_MODEL_NAME]
    return cleaned if cleaned and cleaned.lower() not in ("true", "false", "1", "0") else None


def node_model(node: Node) -> str:
    for key in GPU_MODEL_LABELS:
        value = node.labels.get(key)
        if value and (name := model_name(value)):
            return name
    return UNKNOWN_MODEL


def _wanted_models(pod: Pod) -> set[str]:
    """GPU models a Pod's node selector or required node affinity ask for."""
    values = [v for k, v in pod.node_selector.items() if k in GPU_MODEL_LABELS]
    for term in pod.required_node_terms:
        values += [
            v
            for r in term.match_expressions
            if r.key in GPU_MODEL_LABELS and r.operator == "In"
            for v in r.values
        ]
    return {name for value in values if (name := model_name(value))}


def _accelerator_models(resources: Iterable[str]) -> set[str]:
    return {
        name
        for key in resources
        if key.startswith(ACCELERATOR_PREFIX) and (name := model_name(key.removeprefix(ACCELERATOR_PREFIX)))
    }


@dataclass
class _Tally:
    allocatable: float = 0.0
    given: float = 0.0
    registered: float = 0.0
    in_use: float = 0.0
    ray_demand: float = 0.0
    pod_demand: float = 0.0
    # A model seen only through a GPU node that advertises nothing still deserves its row (cause 3).
    seen: bool = False

    def figures(self, model: str) -> GpuModelCapacity:
        return GpuModelCapacity(
            model=model,
            allocatable=self.allocatable,
            given_to_ray_pods=self.given,
            registered_in_ray=self.registered,
            in_use=self.in_use,
            # A pending worker Pod is usually the autoscaler's answer to a pending Ray demand;
            # adding both would count the same need twice, so the larger one stands for it.
            pending_demand=max(self.ray_demand, self.pod_demand),
        )


@dataclass
class _Capacity:
    ctx: Context
    tallies: dict[str, _Tally] = field(default_factory=lambda: defaultdict(_Tally))
    model_of_node: dict[str, str] = field(default_factory=dict)

    def count_nodes(self) -> None:
        for node in self.ctx.kube.nodes:
            gpus = node.allocatable.get(GPU_RESOURCE, 0.0)
            if not is_gpu_node(node):
                continue
            model = node_model(node)
            self.model_of_node[node.name] = model
            tally = self.tallies[model]
            tally.seen = True
            if node.ready and not node.unschedulable:
                tally.allocatable += max(gpus, 0.0)

    def pod_model(self, pod: Pod, ray_node: RayNode | None = None) -> str:
        if pod.node_name and pod.node_name in self.model_of_node:
            return self.model_of_node[pod.node_name]
        wanted = _wanted_models(pod)
        if len(wanted) == 1:
            return wanted.pop()
        if ray_node is not None and len(found := _accelerator_models(ray_node.resources_total)) == 1:
            return found.pop()
        return UNKNOWN_MODEL

    def count_pods(self) -> None:
        for pod in self.ctx.ray_pods:
            if not self.ctx.in_scope(pod) or RAY_NODE_TYPE_LABEL not in pod.labels:
                continue
            gpus = pod.gpu_limit()
            if gpus <= 0:
                continue
            if pod.phase == "Running" and not pod.deleting:
                self.tallies[self.pod_model(pod)].given += gpus
            elif pod.unscheduled and not pod.deleting:
                self.tallies[self._demand_model(_wanted_models(pod))].pod_demand += gpus

    def count_ray_nodes(self, ray: RayState) -> None:
        pods_by_ip = {
            pod.pod_ip: pod
            for pod in self.ctx.ray_pods
            if pod.pod_ip and pod.phase == "Running" and self.ctx.in_scope(pod)
        }
        for node in self.ctx.ray_nodes:
            gpus = max(0.0, node.resources_total.get(RAY_GPU, 0.0))
            pod = pods_by_ip.get(node.node_ip or "")
            if pod is not None:
                model = self.pod_model(pod, node)
            else:
                found = sorted(_accelerator_models(node.resources_total))
                model = found[0] if found else UNKNOWN_MODEL
            if gpus <= 0 and (pod is None or model == UNKNOWN_MODEL):
                continue
            tally = self.tallies[model]
            tally.registered += gpus
            tally.in_use += _gpus_held(node, ray)

    def count_ray_totals(self, ray: RayState) -> None:
        """A plain ``ray status`` gives only cluster totals: one model if the totals name one."""
        gpus = ray.totals.get(RAY_GPU, 0.0)
        if gpus <= 0:
            return
        found = sorted(_accelerator_models(ray.totals))
        tally = self.tallies[found[0] if len(found) == 1 else UNKNOWN_MODEL]
        tally.registered += gpus
        tally.in_use += min(gpus, max(0.0, ray.used.get(RAY_GPU, 0.0)))

    def count_demands(self, ray: RayState) -> None:
        for shape, count in waiting_work(ray):
            gpus = shape.get(RAY_GPU, 0.0) * count
            if gpus > 0:
                self.tallies[self._demand_model(_accelerator_models(shape))].ray_demand += gpus

    def _demand_model(self, named: set[str]) -> str:
        if len(named) == 1:
            return named.pop()
        known = [m for m, t in self.tallies.items() if m not in (UNKNOWN_MODEL, ANY_MODEL) and _has_gpus(t)]
        return known[0] if len(known) == 1 else ANY_MODEL


def _has_gpus(tally: _Tally) -> bool:
    return tally.seen or any((tally.allocatable, tally.given, tally.registered, tally.in_use))


def _gpus_held(node: RayNode, ray: RayState) -> float:
    total = max(0.0, node.resources_total.get(RAY_GPU, 0.0))
    if node.resources_available is not None:
        return min(total, max(0.0, total - node.resources_available.get(RAY_GPU, 0.0)))
    # No per-node availability (some dashboard versions): what its ALIVE actors hold is the floor.
    held = sum(
        a.required_resources.get(RAY_GPU, 0.0)
        for a in ray.actors
        if a.node_id and a.node_id == node.node_id and a.state.upper() == "ALIVE"
    )
    return min(total, held)


def waiting_work(ray: RayState) -> list[tuple[Mapping[str, float], int]]:
    """What waits for resources: the autoscaler's demands, else the state API's pending tasks."""
    if ray.demands:
        return [(_demand_shape(d), max(d.count, 1)) for d in ray.demands]
    return [(t.required_resources, 1) for t in ray.pending_tasks]


def _demand_shape(demand: Demand) -> dict[str, float]:
    if demand.kind != "placement_group" or not demand.bundles:
        return dict(demand.shape)
    merged: dict[str, float] = {}
    for bundle in demand.bundles:
        for key, value in bundle.items():
            merged[key] = merged.get(key, 0.0) + value
    return merged


def _order(item: tuple[str, GpuModelCapacity]) -> tuple[int, float, str]:
    model, figures = item
    return (model in (UNKNOWN_MODEL, ANY_MODEL), -max(figures.stages), model)


def capacity_figures(snapshot: Snapshot) -> list[GpuModelCapacity]:
    """Per GPU model, the five stages; biggest models first, ``unknown`` and ``any`` last."""
    ctx = Context(snapshot)
    capacity = _Capacity(ctx)
    capacity.count_nodes()
    capacity.count_pods()
    ray = snapshot.ray
    if ray is not None:
        if ray.nodes:
            capacity.count_ray_nodes(ray)
        else:
            capacity.count_ray_totals(ray)
        # Last, once every model is known: an untyped demand goes to the cluster's only model.
        capacity.count_demands(ray)
    rows = {model: tally.figures(model) for model, tally in capacity.tallies.items()}
    shown = {m: f for m, f in rows.items() if capacity.tallies[m].seen or any(f.stages)}
    return [figures for _, figures in sorted(shown.items(), key=_order)]


def model_label(model: str, lang: Lang) -> str:
    if model in (UNKNOWN_MODEL, ANY_MODEL):
        return say(f"capacity.model.{model}", lang)
    return model


def gap_summary(figures: Sequence[GpuModelCapacity], lang: Lang) -> str:
    """One sentence on the biggest drop between the layers, or that there is none."""
    worst: tuple[float, str] | None = None
    for row in figures:
        label = model_label(row.model, lang)
        missing = row.given_to_ray_pods - row.registered_in_ray
        if missing > 0 and (worst is None or missing > worst[0]):
            text = say("capacity.gap.ray", lang, model=label, missing=missing, given=row.given_to_ray_pods)
            worst = (missing, text)
    if worst is not None:
        return worst[1]
    for row in figures:
        offered = row.allocatable + row.given_to_ray_pods + row.registered_in_ray
        if row.pending_demand > 0 and offered == 0 and row.model != ANY_MODEL:
            label = model_label(row.model, lang)
            return say("capacity.gap.kubernetes", lang, model=label, wanted=row.pending_demand)
    return say("capacity.gap.none", lang) if figures else say("capacity.none", lang)


def _width(text: str) -> int:
    """Columns a terminal gives ``text``: Chinese characters take two."""
    return sum(2 if unicodedata.east_asian_width(char) in ("W", "F") else 1 for char in text)


def _pad(text: str, width: int, right: bool) -> str:
    fill = " " * max(0, width - _width(text))
    return fill + text if right else text + fill


def capacity_table(figures: Sequence[GpuModelCapacity], *, cluster: str, lang: Lang) -> str:
    """The figures as a small aligned table, with the title and the one-line verdict on the gaps."""
    header = [say("capacity.column.model", lang), *(say(f"capacity.column.{s}", lang) for s in STAGES)]
    rows = [[model_label(row.model, lang), *(f"{value:g}" for value in row.stages)] for row in figures]
    widths = [max(_width(line[i]) for line in [header, *rows]) for i in range(len(header))]
    lines = [say("capacity.title", lang, cluster=cluster), ""]
    for line in [header, *rows]:
        cells = [_pad(cell, widths[i], right=i > 0) for i, cell in enumerate(line)]
        lines.append("  ".join(cells).rstrip())
    lines += ["", gap_summary(figures, lang)]
    return "\n".join(lines) + "\n"


def describe_row(key: str, row: GpuModelCapacity, lang: Lang) -> str:
    """The message ``key`` filled with one model's figures, for Slack mrkdwn.

    Templates pick what they need among ``model``, ``allocatable``, ``given``, ``registered``,
    ``in_use`` and ``waiting``.
    """
    return say(
        key,
        lang,
        model=escape(model_label(row.model, lang)),
        allocatable=row.allocatable,
        given=row.given_to_ray_pods,
        registered=row.registered_in_ray,
        in_use=row.in_use,
        waiting=row.pending_demand,
    )


def capacity_comment(figures: Sequence[GpuModelCapacity], *, cluster: str, lang: Lang) -> str:
    """The figures in Slack mrkdwn, one line per model, for the message that carries the chart."""
    lines = [f"*{say('capacity.title', lang, cluster=f'`{escape(cluster)}`')}*"]
    lines += [f"• {describe_row('capacity.line', row, lang)}" for row in figures]
    lines.append(f"_{gap_summary(figures, lang)}_")
    return "\n".join(lines)
