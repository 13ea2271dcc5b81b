"""Node types from a Ray cluster-launcher (or autoscaler) config: what the autoscaler may launch.

The autoscaler only ever launches a node type whose ``resources`` can hold a pending demand, and
once a type lists ``resources`` explicitly the autoscaler believes that list over what the machine
has (the ray-llm g5 type that listed ``accelerator_type_a10`` but not ``GPU``). So the parser keeps
whether the block was written out (``explicit``), not just the numbers.

Accepted shapes: a whole config (``available_node_types:`` inside), that mapping alone, or one or
more type entries cut out of it (``gpu_worker_g5:`` with ``node_config``/``resources``/...).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from bot.snapshot.ray import NodeType

FORMAT = "ray cluster config (node types)"
_MAX_TYPES = 200


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


def looks_like_node_types(mapping: Mapping[object, object]) -> bool:
    return any(_is_node_type(spec) for spec in mapping.values())


def node_types_from(doc: object) -> list[NodeType]:
    if not isinstance(doc, Mapping):
        return []
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
