"""Where a cluster's GPUs are, layer by layer, per GPU model: the ``Capacity`` of a diagnosis.

A GPU travels through five stages before work runs on it: a Kubernetes node advertises it
(allocatable), the scheduler gives it to a Ray Pod, the raylet in that Pod registers it with Ray,
an actor or task holds it, and more work may be waiting for one. Side by side, the stage where the
count drops is the layer where GPUs go missing: 8 allocatable, 8 given, 4 registered points at
cause 4 or 8, not at Kubernetes capacity.

Ray knows nothing of Kubernetes nodes, so a Ray node is tied to a GPU model through the Pod with
the same IP and the Kubernetes node that Pod runs on. A Ray node with no such Pod (a snapshot of
Ray alone) goes under its ``accelerator_type:*`` resource, else under ``unknown``. Demands that
name no GPU type could land on any model; with several models they are counted under ``any``.

A stage whose layer the snapshot does not hold (the Ray dashboard did not answer, a paste of
``ray status`` alone) is ``None``, never 0: "not read" and "none there" are different answers.

Alongside: what the health post says about each layer (Pending Pods and since when, ready worker
Pods, alive Ray nodes, waiting demands, actors on GPUs, signs of a scale-up). Pure: reads the
classifier's ``Context``, never the network or the clock.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

from bot.classify.context import RAY_NODE_TYPE_LABEL, Context
from bot.classify.detectors.ray_resources import gpu_models
from bot.diagnosis import (
    ANY_MODEL,
    UNKNOWN_MODEL,
    Capacity,
    GpuActor,
    GpuModelCapacity,
    Gpus,
    RayDemand,
    RayGpuNode,
    ReadLayer,
    ScaleUp,
    ServeApp,
    UnscheduledPod,
)
from bot.snapshot.gpu import GPU_MODEL_LABELS, advertised_gpus
from bot.snapshot.kubernetes import GPU_RESOURCE, Node, Pod
from bot.snapshot.ray import Demand, RayNode, RayState

__all__ = ["capacity_of", "model_name", "node_model", "waiting_work"]

ACCELERATOR_PREFIX = "accelerator_type:"
RAY_GPU = "GPU"
_MAX_MODEL_NAME = 40
_RAY_ADDING_NODES = re.compile(r"\bAdding \d+ node\(s\) of type\b")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


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

    def figures(self, model: str, kubernetes: bool, ray: bool) -> GpuModelCapacity:
        return GpuModelCapacity(
            model=model,
            allocatable=self.allocatable if kubernetes else None,
            given_to_ray_pods=self.given if kubernetes else None,
            registered_in_ray=self.registered if ray else None,
            in_use=self.in_use if ray else None,
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
        for node in self.ctx.gpu_nodes:
            gpus = node.allocatable.get(GPU_RESOURCE, 0.0)
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
        pods_by_ip = self.ctx.running_ray_pods_by_ip
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

    def count_demands(self, demands: Iterable[RayDemand]) -> None:
        for demand in demands:
            gpus = demand.shape.get(RAY_GPU, 0.0) * demand.count
            if gpus > 0:
                self.tallies[self._demand_model(_accelerator_models(demand.shape))].ray_demand += gpus

    def _demand_model(self, named: set[str]) -> str:
        if len(named) == 1:
            return named.pop()
        known = [m for m, t in self.tallies.items() if m not in (UNKNOWN_MODEL, ANY_MODEL) and _has_gpus(t)]
        return known[0] if len(known) == 1 else ANY_MODEL


def _has_gpus(tally: _Tally) -> bool:
    return tally.seen or any((tally.allocatable, tally.given, tally.registered, tally.in_use))


def _shown(tally: _Tally) -> bool:
    return _has_gpus(tally) or tally.ray_demand > 0 or tally.pod_demand > 0


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


def _demand_shape(demand: Demand) -> Mapping[str, float]:
    if demand.kind != "placement_group" or not demand.bundles:
        return demand.shape  # read, never changed: no copy for each of thousands of demands
    merged: dict[str, float] = {}
    for bundle in demand.bundles:
        for key, value in bundle.items():
            merged[key] = merged.get(key, 0.0) + value
    return merged


def _demands(ray: RayState) -> list[RayDemand]:
    """The waiting work, one entry per distinct shape (a large cluster repeats a few hundred shapes)."""
    counts: dict[frozenset[tuple[str, float]], int] = {}
    for shape, count in waiting_work(ray):
        key = frozenset(shape.items())
        counts[key] = counts.get(key, 0) + count
    return [RayDemand(shape=dict(sorted(key)), count=count) for key, count in counts.items()]


def _biggest(stages: Iterable[Gpus]) -> float:
    return max((float(value) for value in stages if value is not None), default=0.0)


def _order(row: GpuModelCapacity) -> tuple[bool, float, str]:
    return (row.model in (UNKNOWN_MODEL, ANY_MODEL), -_biggest(row.stages), row.model)


def gpu_rows(ctx: Context, demands: Iterable[RayDemand]) -> list[GpuModelCapacity]:
    """Per GPU model, the five stages; biggest models first, ``unknown`` and ``any`` last."""
    tallies = _Capacity(ctx)
    tallies.count_nodes()
    tallies.count_pods()
    ray = ctx.ray
    if ray is not None:
        if ctx.ray_nodes_known:
            tallies.count_ray_nodes(ray)
        else:
            tallies.count_ray_totals(ray)
        # Last, once every model is known: an untyped demand goes to the cluster's only model.
        tallies.count_demands(demands)
    rows = [
        tally.figures(model, ctx.has_kubernetes, ray is not None)
        for model, tally in tallies.tallies.items()
        if _shown(tally)
    ]
    return sorted(rows, key=_order)


def _utc(when: datetime) -> datetime:
    # A hand-written snapshot may carry times without a zone; Kubernetes and Ray mean UTC.
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when


def _age(since: datetime | None, at: datetime | None) -> float | None:
    if since is None or at is None:
        return None
    return max(0.0, (_utc(at) - _utc(since)).total_seconds())


def _pending_pods(ctx: Context) -> list[UnscheduledPod]:
    """Unscheduled Pods of the cluster's namespace and of the RayCluster itself, oldest first."""
    namespace = ctx.snapshot.namespace
    taken = ctx.snapshot.collected_at
    found = [
        UnscheduledPod(
            name=pod.name,
            namespace=pod.namespace,
            created=pod.created,
            age_s=_age(pod.created, taken),
            reason=(scheduled.reason if (scheduled := pod.condition("PodScheduled")) else None)
            or pod.status_reason,
        )
        for pod in ctx.unscheduled_pods
        if namespace is None or pod.namespace == namespace or (pod.is_ray and ctx.in_scope(pod))
    ]
    return sorted(found, key=lambda p: (p.created is None, _utc(p.created or _EPOCH), p.namespace, p.name))


def _ready_workers(ctx: Context) -> int:
    return sum(
        1
        for pod in ctx.ray_pods
        if pod.labels.get(RAY_NODE_TYPE_LABEL) == "worker"
        and ctx.in_scope(pod)
        and pod.phase == "Running"
        and pod.ready
    )


def _worker_pods(ctx: Context) -> int:
    return sum(1 for pod in ctx.worker_pods if ctx.in_scope(pod) and not pod.deleting)


def _head_ready(ctx: Context) -> bool | None:
    heads = [pod for pod in ctx.head_pods if ctx.in_scope(pod) and not pod.deleting]
    if not heads:
        return None
    return any(pod.phase == "Running" and pod.ready for pod in heads)


def _ray_gpu_nodes(ctx: Context) -> list[RayGpuNode]:
    """The ALIVE Ray nodes that register GPUs or a GPU type, each with the Pod and Kubernetes node
    under it (through the Pod's IP): where a probe of each pool may land."""
    found = []
    for node in ctx.ray_nodes:
        gpus = max(0.0, node.resources_total.get(RAY_GPU, 0.0))
        types = sorted(
            key.removeprefix(ACCELERATOR_PREFIX)
            for key in node.resources_total
            if key.startswith(ACCELERATOR_PREFIX)
        )
        if gpus <= 0 and not types:
            continue
        pod = ctx.running_ray_pods_by_ip.get(node.node_ip or "")
        if pod is not None and pod.deleting:
            pod = None  # on its way out: not what a probe landing on this node would meet
        host = ctx.nodes_by_name.get(pod.node_name or "") if pod is not None else None
        model = node_model(host) if host is not None else None
        found.append(
            RayGpuNode(
                node_id=node.node_id,
                ip=node.node_ip,
                gpus=gpus,
                accelerator_types=types,
                pod=pod.name if pod is not None else None,
                kubernetes_model=None if model in (None, UNKNOWN_MODEL) else model,
                kubernetes_gpus=pod.gpu_limit() if pod is not None else None,
            )
        )
    return found


def _serve_applications(ctx: Context) -> list[ServeApp] | None:
    """Serve's applications; None when Serve was not read (only a live read asks the dashboard
    for them, and a Ray without the Serve API leaves them unread)."""
    ray = ctx.ray
    if ray is None:
        return None
    apps = [ServeApp(name=app.name, status=app.status.upper()) for app in ray.serve_applications]
    if apps:
        return apps
    if ctx.snapshot.origin != "live" or "serve" in ray.unread:
        return None
    if any("serve" in error.source.lower() for error in ctx.snapshot.errors):
        return None
    return []


def _ray_nodes_alive(ctx: Context) -> int:
    counted = ctx.ray_node_count
    return counted[0] if counted else 0


def _gpu_actors(ray: RayState) -> list[GpuActor]:
    held = [
        GpuActor(
            name=actor.name or actor.class_name or actor.actor_id or "?", gpus=gpus, started=actor.start_time
        )
        for actor in ray.actors
        if actor.state.upper() == "ALIVE" and (gpus := actor.required_resources.get(RAY_GPU, 0.0)) > 0
    ]
    return sorted(held, key=lambda a: (-a.gpus, a.name))


def _scale_ups(ctx: Context) -> list[ScaleUp]:
    found: list[ScaleUp] = []
    for event in ctx.kube.events:
        source = (event.source or "").lower()
        at = event.last_seen or event.first_seen
        if event.reason == "TriggeredScaleUp":
            found.append(ScaleUp(source="cluster-autoscaler", at=at))
        elif event.reason == "Nominated" and ("karpenter" in source or "nodeclaim/" in event.message):
            found.append(ScaleUp(source="karpenter", at=at))
    ray = ctx.ray
    if (ray is not None and ray.pending_nodes) or any(
        _RAY_ADDING_NODES.search(text.text)
        for text in ctx.texts_that_may_match(_RAY_ADDING_NODES)
        if text.source not in ("event", "job")
    ):
        found.append(ScaleUp(source="ray-autoscaler"))
    return list(dict.fromkeys(found))


def _plugins_not_ready(ctx: Context) -> int | None:
    if not ctx.has_kubernetes or not ctx.kube.device_plugin_pods:
        return None  # not read: no device-plugin Pod in the snapshot says nothing either way
    gpu_nodes = {n.name for n in ctx.gpu_nodes}
    return sum(
        1
        for pod in ctx.kube.device_plugin_pods
        if pod.node_name in gpu_nodes and not (pod.phase == "Running" and pod.ready)
    )


def capacity_of(ctx: Context) -> Capacity:
    """The ``Capacity`` of the snapshot behind ``ctx``."""
    ray = ctx.ray
    layers: list[ReadLayer] = []
    if ctx.has_kubernetes:
        layers.append("kubernetes")
    if ray is not None:
        layers.append("ray")
    demands = _demands(ray) if ray is not None else []
    return Capacity(
        layers_read=layers,
        models=gpu_rows(ctx, demands),
        gpu_nodes=len(ctx.gpu_nodes) if ctx.has_kubernetes else None,
        gpu_nodes_without_allocatable=(
            sum(1 for n in ctx.gpu_nodes if advertised_gpus(n) <= 0) if ctx.has_kubernetes else None
        ),
        device_plugin_pods_not_ready=_plugins_not_ready(ctx),
        pending_pods=_pending_pods(ctx) if ctx.has_kubernetes else [],
        ready_worker_pods=_ready_workers(ctx) if ctx.has_kubernetes else None,
        worker_pods=_worker_pods(ctx) if ctx.has_kubernetes else None,
        head_ready=_head_ready(ctx) if ctx.has_kubernetes else None,
        ray_nodes_alive=_ray_nodes_alive(ctx) if ray is not None else None,
        ray_gpu_nodes=_ray_gpu_nodes(ctx) if ray is not None else [],
        serve_applications=_serve_applications(ctx),
        demands=demands,
        gpu_actors=_gpu_actors(ray) if ray is not None else [],
        scale_ups=_scale_ups(ctx),
    )
