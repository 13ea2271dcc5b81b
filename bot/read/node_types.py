"""Node types from a Ray cluster-launcher (or autoscaler) config: what the autoscaler may launch.

The autoscaler only ever launches a node type whose ``resources`` can hold a pending demand, and
once a type lists ``resources`` explicitly the autoscaler believes that list over what the machine
has (the ray-llm g5 type that listed ``accelerator_type_a10`` but not ``GPU``). So the parser keeps
whether the block was written out (``explicit``), not just the numbers.

Accepted shapes: a whole config (``available_node_types:`` inside), that mapping alone, or one or
more type entries cut out of it (``gpu_worker_g5:`` with ``node_config``/``resources``/...).

Ray 1.x on Kubernetes before KubeRay had its own operator, fed by the Helm chart under
``deploy/charts/ray``: ``headPodType:`` and ``podTypes:`` (name -> ``minWorkers``, ``maxWorkers``,
``CPU``/``GPU``/``memory`` (``numCPU``/``numGPU`` in 1.3), ``rayResources``, ``nodeSelector``),
which the chart turns into a ``cluster.ray.io/v1`` RayCluster whose ``spec.podTypes`` is a list
of ``name``, ``minWorkers``, ``maxWorkers``, ``rayResources`` and a ``podConfig`` Pod. The chart
puts ``CPU`` and ``memory`` in the container's requests and limits and ``GPU`` (when set) in its
``nvidia.com/gpu`` limit; the autoscaler reads CPU, GPU and memory (the limit less the object
store's 30 %) from that container and lays ``rayResources`` over them, and Ray's nodes start with
the result. So ``rayResources: {"GPU": 0}`` on a type with GPUs leaves Ray without them. Such a type
is explicit: CPU, GPU and memory are always known. The cluster launcher before node types
(``head_node:``/``worker_nodes:`` with top-level ``min_workers``/``max_workers``) had one worker
type, named ``ray-legacy-worker-node-type`` inside the autoscaler, whose resources it detected.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from bot.read.formats import Format, Tag
from bot.read.quantity import parse_quantity
from bot.snapshot.ray import NodeType

FORMAT = Format("ray cluster config (node types)", Tag.RAY_CLUSTER_CONFIG)
_MAX_TYPES = 200
# What the Ray 1.x autoscaler left of a container's memory limit for tasks (the rest: object store).
_TASK_MEMORY_SHARE = 0.7
LEGACY_WORKER_TYPE = "ray-legacy-worker-node-type"


def _number(value: object) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return None
    else:
        return None
    return number if math.isfinite(number) else None


def _count(value: object) -> int | None:
    number = _number(value)
    return int(number) if number is not None and number.is_integer() else None


def _is_node_type(spec: object) -> bool:
    """A launcher node type, not some other mapping with a ``resources`` key (a Kubernetes one has
    ``limits``/``requests`` under it, not numbers)."""
    if not isinstance(spec, Mapping):
        return False
    keys = set(map(str, spec))
    if keys & {"node_config", "min_workers", "max_workers"}:
        return True
    resources = spec.get("resources")
    return isinstance(resources, Mapping) and all(_number(v) is not None for v in resources.values())


def _pod_types(doc: Mapping[object, object]) -> list[tuple[str, Mapping[object, object]]]:
    """The Ray 1.x operator's pod types: Helm values (a mapping) or the RayCluster's list."""
    raw = doc.get("podTypes")
    spec = doc.get("spec")
    if raw is None and isinstance(spec, Mapping):
        raw = spec.get("podTypes")
    if isinstance(raw, Mapping):
        return [(str(name), value) for name, value in raw.items() if isinstance(value, Mapping)][:_MAX_TYPES]
    if isinstance(raw, list):
        return [
            (str(item.get("name") or f"podType{index}"), item)
            for index, item in enumerate(raw[:_MAX_TYPES])
            if isinstance(item, Mapping)
        ]
    return []


def _first_container_limits(pod: object) -> Mapping[object, object]:
    spec = pod.get("spec") if isinstance(pod, Mapping) else None
    containers = spec.get("containers") if isinstance(spec, Mapping) else None
    first = containers[0] if isinstance(containers, list) and containers else None
    resources = first.get("resources") if isinstance(first, Mapping) else None
    limits = resources.get("limits") if isinstance(resources, Mapping) else None
    return limits if isinstance(limits, Mapping) else {}


def _pod_type(name: str, spec: Mapping[object, object]) -> NodeType:
    limits = _first_container_limits(spec.get("podConfig"))
    gpu_limit = next((v for k, v in limits.items() if "gpu" in str(k).lower()), None)
    cpu = parse_quantity(spec.get("CPU", spec.get("numCPU", limits.get("cpu"))))
    gpu = parse_quantity(spec.get("GPU", spec.get("numGPU", gpu_limit)))
    memory = parse_quantity(spec.get("memory", limits.get("memory")))
    # The chart adds a GPU limit only when ``GPU`` is set; an entry cut before its ``CPU`` says
    # too little to count as a full declaration.
    resources: dict[str, float] = {"GPU": math.ceil(gpu) if gpu else 0.0}
    if cpu is not None:
        resources["CPU"] = math.ceil(cpu)
    if memory:
        resources["memory"] = float(int(memory * _TASK_MEMORY_SHARE))
    overrides = spec.get("rayResources")
    if isinstance(overrides, Mapping):
        resources.update({str(k): n for k, v in overrides.items() if (n := _number(v)) is not None})
    return NodeType(
        name=name,
        resources={k: float(v) for k, v in resources.items()},
        explicit=cpu is not None,
        min_workers=_count(spec.get("minWorkers")),
        max_workers=_count(spec.get("maxWorkers")),
        gpu_limit=float(math.ceil(gpu)) if gpu else 0.0,
    )


def looks_like_node_types(mapping: Mapping[object, object]) -> bool:
    if _pod_types(mapping) or _legacy_worker(mapping) is not None:
        return True
    return any(_is_node_type(spec) for spec in mapping.values())


def _legacy_worker(doc: Mapping[object, object]) -> NodeType | None:
    """A launcher config from before node types: ``worker_nodes`` with the cluster's worker bounds."""
    if "available_node_types" in doc or not isinstance(doc.get("worker_nodes"), Mapping):
        return None
    return NodeType(
        name=LEGACY_WORKER_TYPE,
        min_workers=_count(doc.get("min_workers")),
        max_workers=_count(doc.get("max_workers")),
    )


def node_types_from(doc: object) -> list[NodeType]:
    if not isinstance(doc, Mapping):
        return []
    if pod_types := _pod_types(doc):
        # The head's type stays in: the autoscaler counts what the head offers as well.
        return [_pod_type(name, spec) for name, spec in pod_types]
    if (legacy := _legacy_worker(doc)) is not None:
        return [legacy]
    available = doc.get("available_node_types")
    mapping = available if isinstance(available, Mapping) else doc
    types: list[NodeType] = []
    for name, spec in list(mapping.items())[:_MAX_TYPES]:
        if not isinstance(spec, Mapping) or not _is_node_type(spec):
            continue
        raw_resources = spec.get("resources")
        resources = (
            {str(k): n for k, v in raw_resources.items() if (n := _number(v)) is not None}
            if isinstance(raw_resources, Mapping)
            else {}
        )
        types.append(
            NodeType(
                name=str(name),
                resources=resources,
                # ``resources: {}`` (common on the head type) lets the autoscaler detect resources
                # itself, so only a block that lists something counts as explicit.
                explicit=bool(resources),
                min_workers=_count(spec.get("min_workers")),
                max_workers=_count(spec.get("max_workers")),
            )
        )
    return types
