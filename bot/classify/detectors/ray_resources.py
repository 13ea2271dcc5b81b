"""Ray's logical resources: who asks for what, who could ever hold it, who holds it now.

Ray schedules by declared resources, not by hardware. Each waiting demand is compared with every
Ray node's total and what is free now, and with every template the autoscaler could add (KubeRay
worker groups, cluster-launcher node types). That single comparison separates "held by someone"
(5) from "no node could ever hold it" (6), "the GPU type is registered nowhere" (7), "a template
hides its GPUs" (4) and "a template fits but the group cannot grow" (9).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from typing import Literal

from bot.catalogue import Rule
from bot.classify.context import RAY_CLUSTER_LABEL, RAY_GROUP_LABEL, Context
from bot.classify.detectors.stated import stated_evidence, stated_node_gpus
from bot.classify.registry import Hit, detector
from bot.diagnosis import Evidence, Subject
from bot.facts import ActorHolder, Fact, GroupHolder, Holder, ReservedHolder
from bot.read.quantity import format_amount, parse_quantity
from bot.snapshot.base import StrictRecord
from bot.snapshot.gpu import GPU_MODEL_LABELS
from bot.snapshot.kubernetes import RayClusterObject, RayGroup
from bot.snapshot.ray import Demand, PlacementGroup, RayActor, RayNode, RayState

_GPU_MODEL = re.compile(
    r"(?i)(?:^|[^a-z0-9])(a100|h100|h200|h20|h800|a800|b200|gb200|a10g|a10|a30|a40|l4|l40s|l40|t4|v100|p100|"
    r"p4|k80|a6000|rtx\d*|mi\d{3}x?|tpu-?v\d\w*)(?=$|[^a-z0-9])"
)
_INTERNAL_RESOURCE = re.compile(r"^(bundle_group_|node:__internal)|_group_[0-9a-f]{20,}$")


def is_gpu_type_resource(name: str) -> bool:
    """A custom resource that stands for a GPU model (``accelerator_type:A100``, ``A100``)."""
    return name.startswith(("accelerator_type:", "accelerator_type_")) or bool(_GPU_MODEL.search(name))


def gpu_models(text: str) -> set[str]:
    return {m.lower() for m in _GPU_MODEL.findall(text.replace("NVIDIA-", "-").replace("Tesla-", "-"))}


def _amount(name: str, value: float) -> str:
    if name in ("memory", "object_store_memory") and value >= 2**20:
        return format_amount("memory", value)
    return f"{value:g}"


def format_shape(shape: Mapping[str, float]) -> str:
    return "{" + ", ".join(f"{k}: {_amount(k, v)}" for k, v in sorted(shape.items())) + "}"


def fits(have: Mapping[str, float], need: Mapping[str, float]) -> bool:
    return all(have.get(key, 0.0) + 1e-9 >= amount for key, amount in need.items())


@dataclass
class Template:
    name: str
    resources: dict[str, float]
    explicit: bool
    max_replicas: int | None
    current: int | None
    can_grow: bool
    gpu_limit: float = 0.0
    # An accelerator limit KubeRay does not translate into Ray GPUs (``aliyun.com/gpu-mem``).
    accelerator: str = ""


def _start_param_resources(params: Mapping[str, str]) -> dict[str, float]:
    raw = params.get("resources")
    if not raw:
        return {}
    text = raw.strip().strip("'")
    for _ in range(2):  # KubeRay values are often a JSON string inside quotes
        try:
            value = json.loads(text)
        except ValueError:
            return {}
        if isinstance(value, dict):
            return {str(k): float(v) for k, v in value.items() if isinstance(v, int | float)}
        if not isinstance(value, str):
            return {}
        text = value
    return {}


# KubeRay turns a container limit into ``--num-gpus`` when its name ends in ``gpu``
# (``nvidia.com/gpu``, ``amd.com/gpu``; ``utils.IsGPUResourceKey``, every release), and since 1.4
# also for MIG slices (``nvidia.com/mig-2g.32gb``).
_MIG = re.compile(r"^nvidia\.com/mig-\d+g\.\d+gb$")
# Extended resources that are accelerators but whose names KubeRay does not turn into Ray GPUs:
# shared-GPU plugins (``aliyun.com/gpu-mem``, ``nvidia.com/gpu.shared``, HAMi's ``nvidia.com/gpumem``,
# Volcano's ``volcano.sh/vgpu-number``), Gaudi (``habana.ai/gaudi``), Intel GPUs (``gpu.intel.com/i915``).
_OTHER_GPU_LIMIT = re.compile(r"(?i)^[\w.-]+/(?=[\w.-]*(?:gpu|gaudi|i915|vcuda))[\w.-]+$")


def is_ray_gpu_limit(name: str) -> bool:
    return name.endswith("gpu") or bool(_MIG.match(name))


def untranslated_accelerator(group: RayGroup) -> str | None:
    """The first accelerator limit of a group's Ray container that KubeRay registers as no GPU."""
    container = group.ray_container
    if container is None:
        return None
    for name, value in {**container.requests, **container.limits}.items():
        if value > 0 and not is_ray_gpu_limit(name) and _OTHER_GPU_LIMIT.match(name):
            return name
    return None


def group_ray_resources(group: RayGroup) -> tuple[dict[str, float], bool, float]:
    """What a KubeRay group's Ray node will register: (resources, explicitly declared, GPU limit)."""
    container = group.ray_container
    limits = container.limits if container else {}
    requests = container.requests if container else {}
    gpu_limit = sum(v for k, v in limits.items() if is_ray_gpu_limit(k))
    resources: dict[str, float] = {}
    params = group.ray_start_params
    cpu = (
        parse_quantity(params.get("num-cpus"))
        if "num-cpus" in params
        else limits.get("cpu", requests.get("cpu"))
    )
    if cpu is not None:
        resources["CPU"] = float(math.ceil(cpu - 1e-9))
    gpus = parse_quantity(params.get("num-gpus")) if "num-gpus" in params else gpu_limit
    if gpus:
        resources["GPU"] = gpus
    memory = parse_quantity(params.get("memory")) if "memory" in params else limits.get("memory")
    if memory:
        resources["memory"] = memory
    custom = _start_param_resources(params)
    resources.update(custom)
    return resources, bool(custom) or "num-gpus" in params, gpu_limit


def _templates(ctx: Context) -> list[Template]:
    found: list[Template] = []
    ray = ctx.ray
    if ray:
        for node_type in ray.node_types:
            grow = node_type.max_workers is None or (node_type.current or 0) < node_type.max_workers
            found.append(
                Template(
                    node_type.name,
                    dict(node_type.resources),
                    node_type.explicit,
                    node_type.max_workers,
                    node_type.current,
                    grow and (node_type.max_workers or 0) > 0,
                    node_type.gpu_limit,
                )
            )
    for cluster in _clusters_in_scope(ctx):
        for group in cluster.worker_groups:
            resources, explicit, gpu_limit = group_ray_resources(group)
            current = sum(
                1
                for p in ctx.worker_pods
                if p.labels.get(RAY_GROUP_LABEL) == group.name and p.namespace == cluster.namespace
            ) or (group.replicas or 0)
            ceiling = group.max_replicas if group.max_replicas is not None else group.replicas
            grow = cluster.autoscaling and not group.suspend and (ceiling is None or current < ceiling)
            accelerator = (
                "" if "num-gpus" in group.ray_start_params else untranslated_accelerator(group) or ""
            )
            found.append(
                Template(group.name, resources, explicit, ceiling, current, grow, gpu_limit, accelerator)
            )
    return found


def _clusters_in_scope(ctx: Context) -> list[RayClusterObject]:
    if ctx.cluster:
        named = [c for c in ctx.kube.rayclusters if c.name == ctx.cluster]
        if named:
            return named
    return list(ctx.kube.rayclusters)


DemandVerdictKind = Literal[
    "unjudged",
    "fits-free",
    "held",
    "held-reported",
    "infeasible",
    "no-gpu-registered",
    "gpu-type-missing",
    "template-omits-gpu",
    "cannot-grow",
    "held-in-group",
    "gpu-type-unconfirmed",
    "gpu-type-unchecked",
    "group-exceeds-cluster",
    "group-vendor-gpu",
    "stated-exceeds-node",
]


@dataclass
class DemandVerdict:
    demand: Demand
    verdict: DemandVerdictKind
    params: dict[str, str] = field(default_factory=dict)
    evidence: list[Evidence] = field(default_factory=list)
    facts: tuple[Fact, ...] = ()


def _request(demand: Demand) -> dict[str, float]:
    return {
        k: v for k, v in demand.largest_single_request.items() if v > 0 and not _INTERNAL_RESOURCE.search(k)
    }


def demand_label(demand: Demand) -> str:
    if demand.kind == "placement_group" and demand.bundles:
        strategy = f" ({demand.strategy})" if demand.strategy else ""
        return f"placement group {bundles_label(demand.bundles)}{strategy}"
    return format_shape(demand.shape)


def demand_params(demand: Demand) -> dict[str, str]:
    """A demand as atoms: its shape (or a placement group's bundles), and for a placement group its
    kind and strategy; the renderer says "placement group …" in the reader's language."""
    if demand.kind == "placement_group" and demand.bundles:
        atoms = {"demand": bundles_label(demand.bundles), "demand_kind": "placement_group"}
        if demand.strategy:
            atoms["demand_strategy"] = demand.strategy
        return atoms
    return {"demand": format_shape(demand.shape)}


def bundles_label(bundles: list[dict[str, float]]) -> str:
    """Three or more equal bundles in a row read as ``3 x {GPU: 1}``; the rest are listed one by one."""
    runs: list[tuple[str, int]] = []
    for bundle in bundles:
        text = format_shape(bundle)
        if runs and runs[-1][0] == text:
            runs[-1] = (text, runs[-1][1] + 1)
        else:
            runs.append((text, 1))
    return " + ".join(
        " + ".join([text] * count) if count < 3 else f"{count} x {text}" for text, count in runs
    )


def _whole_group(demand: Demand) -> dict[str, float]:
    """What a placement group reserves across the cluster, all bundles together."""
    if demand.kind != "placement_group" or not demand.bundles:
        return {}
    whole: dict[str, float] = {}
    for bundle in demand.bundles:
        for key, value in bundle.items():
            if value > 0 and not _INTERNAL_RESOURCE.search(key) and not key.startswith("node:"):
                whole[key] = whole.get(key, 0.0) + value
    return whole


def _node_line(node: RayNode) -> Evidence:
    total = format_shape(node.resources_total)
    source = f"ray node {node.node_ip or node.node_id}"
    if node.resources_available is None:
        return Evidence(
            source=source,
            text=f"total {total}; available unknown",
            phrase="evidence.ray_node_unknown",
            values={"total": total},
        )
    free = format_shape(node.resources_available)
    return Evidence(
        source=source,
        text=f"total {total}; available {free}",
        phrase="evidence.ray_node",
        values={"total": total, "available": free},
    )


def _usage(ray: RayState, capacity: dict[str, float], keys: Iterable[str], source: str) -> Evidence:
    """``CPU 3/4 used; GPU 1/1 used``: what Ray reports in use of each resource, and of how much."""
    rows = [(k, f"{ray.used.get(k, 0.0):g}", f"{capacity.get(k, 0.0):g}") for k in sorted(keys)]
    values = {
        f"{n}.{field}": v
        for n, row in enumerate(rows, 1)
        for field, v in zip(("resource", "used", "total"), row, strict=True)
    }
    return Evidence(
        source=source,
        text="; ".join(f"{k} {used}/{total} used" for k, used, total in rows),
        phrase="evidence.used_of_total",
        values=values,
    )


def _holders(ctx: Context, nodes: list[RayNode], keys: set[str], limit: int = 6) -> list[Holder]:
    """ALIVE actors and CREATED placement groups that hold the scarce resources of a demand, each
    as a typed fact (an actor, what placement groups reserve, or a placement group)."""
    ray = ctx.ray
    if ray is None:
        return []
    by_resource = ctx.memo("actors_by_resource", lambda: _alive_actors_by_resource(ctx))
    ip_by_id = ctx.memo("ray_ip_by_id", lambda: {n.node_id: n.node_ip for n in ctx.ray_nodes})
    node_ids = {n.node_id for n in nodes if n.node_id}
    holders: list[Holder] = []
    scarce = {k for k in keys if k not in ("CPU", "memory")} or keys
    seen: set[int] = set()
    for key in sorted(scarce):
        for actor in by_resource.get(key, []):
            if id(actor) in seen or (node_ids and actor.node_id and actor.node_id not in node_ids):
                continue
            seen.add(id(actor))
            holders.append(_describe_actor(actor, ip_by_id.get(actor.node_id)))
            if len(holders) >= limit:
                return holders
    for key in sorted(scarce):
        reserved, in_use = ray.reserved.get(key, 0.0), ray.reserved_used.get(key, 0.0)
        if reserved > in_use and not ray.placement_groups:
            holders.append(ReservedHolder(key, f"{reserved:g}", f"{in_use:g}"))
    for group in ray.placement_groups:
        if group.state != "CREATED":
            continue
        if {k for b in group.bundles for k in b} & scarce:
            holders.append(_group_holder(group))
            if len(holders) >= limit:
                break
    return holders


def _alive_actors_by_resource(ctx: Context) -> dict[str, list[RayActor]]:
    index: dict[str, list[RayActor]] = {}
    for actor in ctx.ray.actors if ctx.ray else []:
        if actor.state == "ALIVE":
            for key in actor.required_resources:
                index.setdefault(key, []).append(actor)
    return index


def _describe_actor(actor: RayActor, node_ip: str | None) -> ActorHolder:
    return ActorHolder(
        resources=format_shape(actor.required_resources),
        class_name=actor.class_name or "",
        actor_id=actor.actor_id or "",
        name=actor.name or "",
        job=actor.job_id or "",
        detached=bool(actor.detached),
        node_ip=node_ip or "",
    )


def _group_holder(group: PlacementGroup) -> GroupHolder:
    return GroupHolder(
        name=group.name or group.placement_group_id or "",
        bundles=" + ".join(format_shape(b) for b in group.bundles),
        strategy=group.strategy or "",
    )


def holder_params(
    holders: Sequence[Holder], missing: Literal["unlisted", "not-in-snapshot"]
) -> dict[str, str]:
    """``holders``, the holders' names (each holder itself is a fact of the finding), or, when
    none is known, ``holders_missing`` (``unlisted``: not listed; ``not-in-snapshot``)."""
    if not holders:
        return {"holders_missing": missing}
    return {"holders": ", ".join(h.label for h in holders)}


def cluster_free(ray: RayState) -> dict[str, float]:
    """What work outside placement groups can still use, cluster-wide: the total less what is used
    and less what groups reserve beyond their own use (``x used of y reserved in placement groups``)."""
    return {
        k: total - ray.used.get(k, 0.0) - max(ray.reserved.get(k, 0.0) - ray.reserved_used.get(k, 0.0), 0.0)
        for k, total in ray.totals.items()
    }


def _aggregate_verdict(ctx: Context, demand: Demand, need: dict[str, float]) -> DemandVerdictKind | None:
    """Only cluster totals are known (plain ``ray status``)."""
    ray = ctx.ray
    assert ray is not None
    if not fits(ray.totals, need):
        return "infeasible"
    free = cluster_free(ray)
    if any(ray.reserved.get(k, 0.0) > ray.reserved_used.get(k, 0.0) for k in need) and not fits(free, need):
        return "held"  # placement groups keep back what it needs
    count = ray.node_count or sum(ray.node_groups.values()) or None
    if count == 1:
        return "fits-free" if fits(free, need) else "held"
    if all(ray.used.get(k, 0.0) <= 0 for k in need):
        # Everything is free, the cluster-wide total is enough, yet it waits: no single node
        # holds it.
        return "infeasible"
    if fits(free, need):
        # Enough is free cluster-wide: whether one node has it free, or the usage is spread so no
        # node does, only per-node figures (`ray status -v`) tell; a demand that fits is often just
        # being placed. Not claimed either way.
        return "fits-free"
    return "held"


def analyse_demands(ctx: Context) -> list[DemandVerdict]:
    ray = ctx.ray
    if ray is None or not (ray.demands or ray.declared_demands):
        return []
    nodes = ctx.ray_nodes
    templates = _templates(ctx)
    registered: set[str] = set(ray.totals)
    for node in nodes:
        registered |= set(node.resources_total)
    for template in templates:
        registered |= set(template.resources)
    # What a live actor or a created placement group holds, some node registers.
    held_types: set[str] = set()
    for actor in ray.actors:
        if actor.state == "ALIVE":
            held_types |= {k for k, v in actor.required_resources.items() if v > 0}
    for group in ray.placement_groups:
        if group.state == "CREATED":
            held_types |= {k for bundle in group.bundles for k in bundle}
    registered |= held_types
    gpu_types = sorted(k for k in registered if is_gpu_type_resource(k))
    types_hidden = ray.accelerator_types_hidden and not nodes
    pending_groups = any(d.kind == "placement_group" for d in ray.demands)
    # Ray nodes of one type share their totals: each demand is compared once per distinct total.
    by_total: dict[tuple[tuple[str, float], ...], list[RayNode]] = {}
    for node in nodes:
        total = tuple(sorted((k, v) for k, v in node.resources_total.items() if not k.startswith("node:")))
        by_total.setdefault(total, []).append(node)
    shapes = [(dict(total), group) for total, group in by_total.items()]

    @cache
    def largest() -> list[RayNode]:
        """The three nodes with the most resources (shown beside a demand no node can hold)."""
        return sorted(nodes, key=lambda n: -sum(n.resources_total.values()))[:3]

    @cache
    def most() -> dict[str, float]:
        """The largest total of each resource on one node."""
        found: dict[str, float] = {}
        for node in nodes:
            for key, amount in node.resources_total.items():
                found[key] = max(found.get(key, 0.0), amount)
        return found

    results: list[DemandVerdict] = []
    seen: set[str] = set()
    seen_shapes: set[tuple[object, ...]] = set()
    for demand in [*ray.demands, *ray.declared_demands]:
        shape_key = (
            demand.kind,
            demand.strategy,
            frozenset(demand.shape.items()),
            tuple(frozenset(b.items()) for b in demand.bundles),
        )
        if shape_key in seen_shapes:
            continue  # one verdict per shape, however many pending groups share it
        seen_shapes.add(shape_key)
        label = demand_label(demand)
        if label in seen:
            continue
        seen.add(label)
        need = _request(demand)
        if not need:
            continue
        if demand.declared and not (nodes or ray.totals or templates):
            continue  # only hardware figures in the paste: judged in machine_gpus
        params = {
            **demand_params(demand),
            "count": str(demand.count),
            "registered": ", ".join(gpu_types) or "none",
        }
        held: list[Holder] = []
        evidence = [
            Evidence(source=demand.code_source or "ray demand", text=demand.source_text)
            if demand.source_text
            else Evidence(
                source="ray demand",
                text=f"{label}: {demand.count} pending",
                phrase="evidence.demand_pending",
                values={"demand": label, "count": str(demand.count)},
            )
        ]
        stated = None if nodes or ray.totals or templates else stated_node_gpus(ctx)
        if (
            stated is not None
            and not (demand.infeasible or demand.reported_held)
            and need.get("GPU", 0.0) > stated.gpus
        ):
            # No output in the paste says what a node holds, but the person does: more GPUs than
            # every node they describe has is cause 6, on their word (a warning, never critical).
            params.update(resource="GPU", needed=f"{need['GPU']:g}", total=f"{stated.gpus:g}")
            evidence.append(stated_evidence(stated.quote))
            results.append(DemandVerdict(demand, "stated-exceeds-node", params, evidence))
            continue
        if demand.listed and not (nodes or ray.totals):
            # Listed as waiting (the state API, a demand line quoted alone): nothing says why.
            results.append(DemandVerdict(demand, "unjudged", params, evidence))
            continue
        whole = _whole_group(demand)
        capacity = ray.totals or _merged_totals(nodes)
        if (
            (demand.name == "trial" or demand.declared)
            and whole
            and capacity
            and not templates
            and fits(capacity, need)
            and not fits(capacity, whole)
        ):
            # A Tune trial or a Train run reserves all its bundles at once; the bundles fit one by
            # one, but the cluster as a whole cannot hold the group (Tune compares the same sums).
            short = _limiting_resource(whole, [], capacity)
            params.update(resource=short, needed=f"{whole[short]:g}", total=f"{capacity.get(short, 0.0):g}")
            params["count"] = str(len(demand.bundles))
            evidence.append(_usage(ray, capacity, whole, "ray status" if ray.totals else "ray nodes"))
            results.append(DemandVerdict(demand, "group-exceeds-cluster", params, evidence))
            continue
        if demand.in_placement_group and not pending_groups:
            results.append(_in_group_verdict(ray, demand, need, params, evidence))
            continue
        missing_type = [k for k in need if is_gpu_type_resource(k) and k not in registered]
        # A plain `ray status` (2.4+) prints no `accelerator_type:` totals: from those alone a type
        # cannot be called missing. Only node figures, or totals that list such types, settle it.
        unchecked = [k for k in missing_type if k.startswith("accelerator_type:") and types_hidden]
        type_note: DemandVerdict | None = None
        if missing_type and len(unchecked) == len(missing_type):
            rest = {k: v for k, v in need.items() if k not in unchecked}
            params.update(resource=unchecked[0], needed=f"{need[unchecked[0]]:g}")
            params["rest"] = format_shape(rest) if rest else "{}"
            if fits(cluster_free(ray), rest):
                # Everything else it asks for is free: the type is the likely blocker.
                results.append(_unconfirmed_verdict(ray, demand, rest, params, evidence))
                continue
            type_note = DemandVerdict(demand, "gpu-type-unchecked", dict(params), list(evidence))
            need = rest
        elif missing_type:
            params.update(resource=missing_type[0], needed=f"{need[missing_type[0]]:g}")
            results.append(DemandVerdict(demand, "gpu-type-missing", params, evidence))
            continue
        if any(k.startswith("node:") for k in need):  # pinned to a node: judged node by node
            holding = [n for n in nodes if fits(n.resources_total, need)]
        else:
            holding = [n for shape, group in shapes if fits(shape, need) for n in group]
        verdict: DemandVerdictKind | None
        if holding:
            known = [n for n in holding if n.resources_available is not None]
            if known and not any(fits_now(n, need) for n in known):
                verdict = "held"
            elif not known and ray.totals and ray.used and not fits(cluster_free(ray), need):
                verdict = "held"  # node totals would hold it; cluster-wide, not that much is free
            elif not known and demand.reported_held:
                verdict = "held-reported"  # a node is big enough; Ray says the resources are claimed
            else:
                continue  # free somewhere now: it will start, or it waits on something else
            evidence += [_node_line(n) for n in holding[:3]]
        elif not nodes and not ray.totals and demand.reported_held:
            verdict = "held-reported"  # Ray's word alone: no figures in the paste to check it against
        elif not nodes and ray.totals:
            # Types a plain `ray status` hides are judged by who holds them, the rest by the totals.
            hidden = {
                k for k in need if types_hidden and k.startswith("accelerator_type:") and k not in ray.totals
            }
            visible = {k: v for k, v in need.items() if k not in hidden}
            if demand.declared and fits(ray.totals, visible):
                continue  # nothing shows it waiting: whether some one node holds it, totals cannot say
            verdict = _aggregate_verdict(ctx, demand, visible) if visible else None
            if verdict in (None, "fits-free") and hidden & held_types:
                verdict = "held"  # the nodes of that GPU type are taken by the holders listed
            if verdict is None:
                continue
            if verdict == "fits-free":
                params["free"] = format_shape(
                    {k: ray.totals.get(k, 0.0) - ray.used.get(k, 0.0) for k in sorted(visible)}
                )
            evidence.append(_usage(ray, ray.totals, need, "ray status"))
        else:
            verdict = "infeasible"
            evidence += [_node_line(n) for n in largest()]
        if verdict == "infeasible":
            verdict = _template_verdict(templates, need, params, evidence)
            if verdict is None:
                continue
            if (
                verdict == "infeasible"
                and not templates
                and _registers_no_gpu(demand, need, nodes, ray.totals)
            ):
                verdict = "no-gpu-registered"
        if verdict == "held-reported":
            scarce = _scarce_key(need)
            params.update(resource=scarce, needed=f"{need[scarce]:g}")
            biggest = max((n.resources_total.get(scarce, 0.0) for n in holding), default=None)
            params["total"] = "" if biggest is None else f"{biggest:g}"
            params["node"] = ", ".join(
                n.node_ip or n.node_id or "" for n in holding[:5] if n.node_ip or n.node_id
            )
            held = _holders(ctx, holding or nodes, set(need))[:5]
            params.update(holder_params(held, "unlisted"))
        if verdict == "held":
            held = _holders(ctx, holding or nodes, set(need))[:5]
            params.update(holder_params(held, "not-in-snapshot"))
            scarce = _scarce_key(need)
            params.update(resource=scarce, needed=f"{need[scarce]:g}")
            if holding:
                params["node"] = ", ".join(n.node_ip or n.node_id or "" for n in holding[:5])
                free = [
                    _free_now(n, scarce, need[scarce]) for n in holding if n.resources_available is not None
                ]
                params["available"] = f"{max(free):g}" if free else ""
                params["total"] = f"{max(n.resources_total.get(scarce, 0.0) for n in holding):g}"
            else:
                count = ray.node_count or sum(ray.node_groups.values())
                if count:
                    params["node_count"] = str(count)
                params["available"] = f"{ray.totals.get(scarce, 0.0) - ray.used.get(scarce, 0.0):g}"
                params["total"] = f"{ray.totals.get(scarce, 0.0):g}"
        if verdict == "no-gpu-registered":
            params.update(resource="GPU", needed=f"{need['GPU']:g}", total="0")
            if demand.shape.get("GPU", 0.0) > need["GPU"]:
                params["needed"] = f"{demand.shape['GPU']:g}"
            count = len(nodes) or ray.node_count or sum(ray.node_groups.values())
            if count:
                params["node_count"] = str(count)
            params["registered"] = format_shape(
                {k: v for k, v in (ray.totals or _merged_totals(nodes)).items() if not k.startswith("node:")}
            )
        if verdict == "infeasible":
            # With neither nodes nor totals pasted, the templates are what the demand was judged on.
            offered = ray.totals or (_largest_template(templates) if not nodes else {})
            short = _limiting_resource(need, nodes, offered, most())
            params.update(resource=short, needed=f"{need[short]:g}")
            biggest = most().get(short, 0.0) if nodes else offered.get(short, 0.0)
            params["total"] = f"{biggest:g}"
            if not nodes and ray.totals:
                count = ray.node_count or sum(ray.node_groups.values())
                params["node_count"] = str(count)
                params["node_total"] = f"{ray.totals.get(short, 0.0):g}"
                if fits(ray.totals, need):
                    # Only cluster totals are known and they would hold it: the largest node is
                    # smaller than the request, by how much the paste does not say.
                    params["total"] = f"< {need[short]:g}"
        results.append(DemandVerdict(demand, verdict, params, evidence, tuple(held)))
        if type_note is not None:
            results.append(type_note)
    # What code declares is judged only where the answer holds whatever runs now.
    return [r for r in results if not r.demand.declared or r.verdict in _DECLARED_VERDICTS]


_DECLARED_VERDICTS = frozenset(
    {
        "infeasible",
        "no-gpu-registered",
        "gpu-type-missing",
        "template-omits-gpu",
        "group-vendor-gpu",
        "group-exceeds-cluster",
    }
)


def fits_now(node: RayNode, need: Mapping[str, float]) -> bool:
    """Whether what is free on ``node`` holds ``need`` now, unit by unit where the units are known:
    Ray places a fractional request inside one unit of a GPU and a whole one on whole free units."""
    if not fits(node.resources_available or {}, need):
        return False
    for key, units in node.unit_available.items():
        amount = need.get(key, 0.0)
        if amount <= 0 or not units:
            continue
        if amount < 1:
            if not any(free + 1e-9 >= amount for free in units):
                return False
        elif sum(1 for free in units if free >= 1 - 1e-9) + 1e-9 < amount:
            return False
    return True


def _free_now(node: RayNode, key: str, amount: float) -> float:
    """What is free of ``key`` on ``node`` for a request of ``amount``: for a fractional request of
    a resource tracked per unit, the most one unit has left."""
    units = node.unit_available.get(key)
    if units and amount < 1:
        return max(units)
    return (node.resources_available or {}).get(key, 0.0)


def _scarcity_rank(key: str) -> tuple[bool, str]:
    """Among resources a demand lacks alike, GPU is named first, then the others by name. Ray's
    demand shapes come from protobuf maps, whose order is not stable from one answer to the next."""
    return (key != "GPU", key)


def _scarce_key(need: Mapping[str, float]) -> str:
    """The resource a waiting demand is named by: not CPU or memory when it asks for more."""
    return min(need, key=lambda k: (k in ("CPU", "memory"), _scarcity_rank(k)))


def _in_group_verdict(
    ray: RayState, demand: Demand, need: dict[str, float], params: dict[str, str], evidence: list[Evidence]
) -> DemandVerdict:
    """Work scheduled into a placement group runs only on its group's bundles, whatever is free
    elsewhere; when it waits while its group exists, the group's own work holds the bundles (5)."""
    scarce = min(need, key=lambda k: (k in ("CPU", "memory"), -ray.reserved.get(k, 0.0), _scarcity_rank(k)))
    reserved, in_use = ray.reserved.get(scarce, 0.0), ray.reserved_used.get(scarce, 0.0)
    created = [g for g in ray.placement_groups if g.state == "CREATED"]
    if not reserved and created:
        reserved = sum(b.get(scarce, 0.0) for g in created for b in g.bundles)
    free = cluster_free(ray).get(scarce) if ray.totals else None
    params.update(
        resource=scarce,
        needed=f"{need[scarce]:g}",
        reserved=f"{reserved:g}" if reserved else "?",
        reserved_used=f"{in_use:g}" if ray.reserved else "?",
        available="?" if free is None else f"{max(free, 0.0):g}",
    )
    held = [_group_holder(g) for g in created[:5]]
    params.update(holder_params(held, "unlisted"))
    if ray.reserved:
        evidence.append(
            Evidence(
                source="ray status",
                text=f"{in_use:g} used of {ray.reserved.get(scarce, 0.0):g} reserved in placement groups",
                phrase="evidence.reserved_in_groups",
                values={"used": f"{in_use:g}", "reserved": f"{ray.reserved.get(scarce, 0.0):g}"},
            )
        )
    return DemandVerdict(demand, "held-in-group", params, evidence, tuple(held))


def _unconfirmed_verdict(
    ray: RayState, demand: Demand, rest: dict[str, float], params: dict[str, str], evidence: list[Evidence]
) -> DemandVerdict:
    """An ``accelerator_type:`` demand whose other resources are free, read from plain totals."""
    gpus_used = ray.used.get("GPU", 0.0)
    params["gpus_used"] = f"{gpus_used:g}"
    params["gpus_total"] = f"{ray.totals.get('GPU', 0.0):g}"
    free = cluster_free(ray)
    evidence.append(
        _usage(ray, ray.totals, rest, "ray status")
        if rest
        else Evidence(
            source="ray status",
            text="no accelerator_type: totals listed",
            phrase="evidence.no_accelerator_totals",
        )
    )
    params["available"] = format_shape({k: free.get(k, 0.0) for k in rest}) if rest else "{}"
    return DemandVerdict(demand, "gpu-type-unconfirmed", params, evidence)


def _largest_template(templates: list[Template]) -> dict[str, float]:
    """The most of each resource one template offers."""
    largest: dict[str, float] = {}
    for template in templates:
        for key, value in template.resources.items():
            largest[key] = max(largest.get(key, 0.0), value)
    return largest


def _merged_totals(nodes: list[RayNode]) -> dict[str, float]:
    merged: dict[str, float] = {}
    for node in nodes:
        for key, value in node.resources_total.items():
            merged[key] = merged.get(key, 0.0) + value
    return merged


# Accelerator families Ray detects besides NVIDIA/AMD GPUs; a GPU counted as one of them (a
# misdetected ``/dev/accel*`` becomes a TPU) is a GPU Ray did not register as ``GPU``.
_OTHER_ACCELERATORS = ("TPU", "NPU", "HPU", "neuron_cores")


def _registers_no_gpu(
    demand: Demand, need: Mapping[str, float], nodes: list[RayNode], totals: Mapping[str, float]
) -> bool:
    """A GPU demand that only the GPU stops, where the paste shows Ray's resources but no GPU.

    When the rest of the request does not fit either (11 CPUs on an 8-CPU cluster), the request
    is too large whatever happens to the GPU, and that is the finding.
    """
    if need.get("GPU", 0.0) <= 0 or not (nodes or totals):
        return False
    rest = {k: v for k, v in need.items() if k != "GPU"}
    if not (fits(totals, rest) if totals else any(fits(n.resources_total, rest) for n in nodes)):
        return False
    if any(
        k not in ("CPU", "memory", "object_store_memory")
        and not k.startswith("node:")
        and not is_gpu_type_resource(k)
        for k in rest
    ):
        # It pairs the GPU with a resource that GPU-less nodes register (an Inferentia or TPU
        # host, a custom label): those nodes are right to have no GPU, the request is what is wrong.
        return False
    registered = totals.get("GPU", 0.0) + sum(n.resources_total.get("GPU", 0.0) for n in nodes)
    if registered <= 0:
        return True
    other = any(
        totals.get(k, 0.0) > 0 or any(n.resources_total.get(k, 0.0) > 0 for n in nodes)
        for k in _OTHER_ACCELERATORS
    )
    return other and demand.shape.get("GPU", 0.0) > max(registered, 0.0)


def _limiting_resource(
    need: Mapping[str, float],
    nodes: list[RayNode],
    totals: Mapping[str, float],
    most: Mapping[str, float] | None = None,
) -> str:
    """The resource the demand is furthest short of on the largest node (or in the totals when no
    node is known); ``most`` is each resource's largest amount on one node, when already known."""

    def shortage(key: str) -> float:
        if not nodes:
            return need[key] - totals.get(key, 0.0)
        if most is not None:
            return need[key] - most.get(key, 0.0)
        return need[key] - max(n.resources_total.get(key, 0.0) for n in nodes)

    return max(need, key=lambda k: (shortage(k), k not in ("CPU", "memory")))


def _template_verdict(
    templates: list[Template], need: dict[str, float], params: dict[str, str], evidence: list[Evidence]
) -> DemandVerdictKind | None:
    """No running node can hold the demand: can a template, and can its group grow?"""
    if not templates:
        return "infeasible"
    able = [t for t in templates if fits(t.resources, need)]
    if able:
        stuck = [t for t in able if not t.can_grow]
        if len(stuck) < len(able):
            return None  # the autoscaler can add a node that fits; it is (or should be) on its way
        template = stuck[0]
        params.update(
            group=template.name,
            node_type=template.name,
            max_replicas="" if template.max_replicas is None else str(template.max_replicas),
            current="" if template.current is None else str(template.current),
        )
        evidence.append(
            Evidence(
                source=f"worker group {template.name}",
                text=f"declares {format_shape(template.resources)}; "
                f"{template.current} of max {template.max_replicas}",
                phrase="evidence.group_at_max",
                values={
                    "shape": format_shape(template.resources),
                    "current": str(template.current),
                    "max": str(template.max_replicas),
                },
            )
        )
        return "cannot-grow"
    if need.get("GPU", 0.0) > 0:
        wanted_types = {k for k in need if is_gpu_type_resource(k)}
        # A group that hides its GPUs explains the demand only if, with them shown, it would fit:
        # a demand larger than every group's real GPUs is infeasible (6) whatever Ray registers.
        hiding = [
            t
            for t in templates
            if t.resources.get("GPU", 0.0) <= 0
            and (
                (t.gpu_limit > 0 and fits({**t.resources, "GPU": t.gpu_limit}, need))
                or (t.explicit and wanted_types & set(t.resources))
            )
        ]
        vendor = [t for t in templates if t.accelerator and t.resources.get("GPU", 0.0) <= 0]
        if vendor and not hiding:
            template = vendor[0]
            params.update(
                node_type=template.name,
                group=template.name,
                declared=format_shape(template.resources),
                resource=template.accelerator,
            )
            evidence.append(
                Evidence(
                    source=f"worker group {template.name}",
                    text=f"limits {template.accelerator}; no nvidia.com/gpu and no num-gpus",
                    phrase="evidence.group_vendor_gpu",
                    values={"resource": template.accelerator},
                )
            )
            return "group-vendor-gpu"
        if hiding:
            template = hiding[0]
            params.update(
                node_type=template.name, group=template.name, declared=format_shape(template.resources)
            )
            evidence.append(
                Evidence(
                    source=f"node type {template.name}",
                    text=f"resources {format_shape(template.resources)}",
                    phrase="evidence.node_type_resources",
                    values={"shape": format_shape(template.resources)},
                )
            )
            return "template-omits-gpu"
    return "infeasible"


class DemandParams(StrictRecord):
    verdict: DemandVerdictKind


# The placeholders the demand rules use. ``demand``, ``node`` and ``holders`` are handed as atoms
# (``demand`` with ``demand_kind``/``demand_strategy``, ``node_count``/``node_total``,
# ``holder.<n>.<field>``/``holders_missing``) that bot/render/localize.py words per language.
DEMAND_PROVIDES = (
    "demand",
    "rest",
    "reserved",
    "reserved_used",
    "gpus_used",
    "gpus_total",
    "count",
    "resource",
    "needed",
    "available",
    "total",
    "holders",
    "node",
    "node_type",
    "declared",
    "group",
    "max_replicas",
    "current",
    "registered",
    "free",
)


@detector("ray_demands", DEMAND_PROVIDES, DemandParams)
def ray_demands(ctx: Context, rule: Rule) -> Iterable[Hit]:
    wanted = DemandParams(**rule.params).verdict
    for result in ctx.memo("ray_demands", lambda: analyse_demands(ctx)):
        if result.verdict == wanted:
            yield Hit(
                Subject(kind="RayDemand", name=demand_label(result.demand)),
                tuple(result.evidence),
                result.params,
                facts=result.facts,
            )


@detector("gpu_registration", ("pod", "pod_ip", "pod_gpus", "ray_gpus", "node_id", "group", "container"))
def gpu_registration(ctx: Context, rule: Rule) -> Iterable[Hit]:
    if not ctx.ray_nodes_known:
        return
    for pod in ctx.ray_pods:
        wanted = pod.gpu_limit()
        if wanted <= 0 or pod.phase != "Running" or not pod.pod_ip or not ctx.in_scope(pod):
            continue
        node = ctx.ray_nodes_by_ip.get(pod.pod_ip)
        if node is None:
            continue  # not joined at all: the connectivity rule owns this Pod
        registered = node.resources_total.get("GPU", 0.0)
        if abs(registered - wanted) < 1e-9:
            continue
        yield Hit(
            Subject(kind="Pod", name=pod.name, namespace=pod.namespace),
            (
                Evidence(source=f"pod {pod.name} limits", text=f"nvidia.com/gpu: {wanted:g}"),
                Evidence(
                    source=f"ray node {node.node_ip}",
                    text=f"GPU total {registered:g}; resources {format_shape(node.resources_total)}",
                    phrase="evidence.ray_node_gpus",
                    values={"gpus": f"{registered:g}", "shape": format_shape(node.resources_total)},
                ),
            ),
            {
                "pod": pod.name,
                "namespace": pod.namespace,
                "pod_ip": pod.pod_ip,
                "pod_gpus": f"{wanted:g}",
                "ray_gpus": f"{registered:g}",
                "node_id": node.node_id or "",
                "group": pod.labels.get(RAY_GROUP_LABEL, ""),
                "container": pod.containers[0].name if pod.containers else "",
            },
        )


def _given_gpus(ctx: Context) -> list[tuple[str, str, float]]:
    """(where, group, GPUs) for each running Ray Pod with a GPU limit, else each worker group.

    A pasted ``kubectl describe pod`` or Pod manifest gives the Pods' own limits. Without them a
    RayCluster that reports itself ready runs ``replicas`` Pods of each group, each with the
    group template's GPU limit.
    """
    pods = [
        (f"pod {p.name}", p.labels.get(RAY_GROUP_LABEL, ""), p.gpu_limit())
        for p in ctx.ray_pods
        if p.phase == "Running" and not p.deleting and ctx.in_scope(p) and p.gpu_limit() > 0
    ]
    if pods:
        return pods
    groups = []
    for cluster in _clusters_in_scope(ctx):
        if (cluster.state or "").lower() != "ready":
            continue
        for group in cluster.worker_groups:
            _, _, limit = group_ray_resources(group)
            if limit > 0 and group.replicas:
                where = f"raycluster {cluster.name} group {group.name}"
                groups += [(f"{where} replica {n}", group.name, limit) for n in range(1, group.replicas + 1)]
    return groups


@detector(
    "gpu_total_registration",
    ("pod", "pod_gpus", "ray_gpus", "per_pod", "group", "raycluster", "missing_workers", "head_pod"),
)
def gpu_total_registration(ctx: Context, rule: Rule) -> Iterable[Hit]:
    """GPUs Kubernetes gives the Ray Pods against the GPUs Ray counts, when nodes cannot be paired.

    Pods and Ray nodes paired by IP are ``gpu_registration``'s. Here only sums are known, so a
    shortfall that Pods missing from Ray could explain (the connectivity rules' finding) is not
    claimed: only what the joined Pods must hold at the least.
    """
    registered = ctx.ray_gpus_registered
    if registered is None or (ctx.ray_nodes_known and all(n.node_ip for n in ctx.ray_nodes)):
        return
    given = _given_gpus(ctx)
    if not given:
        return
    counted = ctx.ray_node_count
    running_workers = sum(1 for p in ctx.worker_pods if p.phase == "Running" and ctx.in_scope(p))
    missing = max(0, running_workers - counted[1]) if counted and running_workers else 0
    # The Pods that never joined may be those with the most GPUs: what is left must be registered.
    largest_first = sorted((g for _, _, g in given), reverse=True)
    at_least = sum(largest_first[missing:])
    if registered >= at_least - 1e-9:
        return
    total = sum(g for _, _, g in given)
    per_pod = ", ".join(f"{where.split(' ', 1)[1]}: {gpus:g}" for where, _, gpus in given[:8])
    evidence = [
        Evidence(source=f"{where} limits", text=f"nvidia.com/gpu: {gpus:g}") for where, _, gpus in given[:8]
    ]
    evidence.append(
        Evidence(
            source="ray status" if ctx.ray and ctx.ray.totals else "ray nodes",
            text=f"GPU total {registered:g}" if registered else "no GPU among the registered resources",
        )
    )
    groups = sorted({group for _, group, _ in given if group})
    pods = [where.split(" ", 1)[1] for where, _, _ in given if where.startswith("pod ")]
    gpu_pods = [p for p in ctx.ray_pods if p.name in pods]
    names = {p.labels.get(RAY_CLUSTER_LABEL, "") for p in gpu_pods} | {
        c.name for c in _clusters_in_scope(ctx)
    }
    raycluster = next(iter(names)) if len(names - {""}) == 1 and len(names) == 1 else ""
    namespace = (
        gpu_pods[0].namespace
        if gpu_pods
        else (ctx.kube.rayclusters[0].namespace if ctx.kube.rayclusters else None)
    )
    yield Hit(
        Subject(kind="RayCluster", name=raycluster or None, namespace=namespace),
        tuple(evidence),
        {
            "namespace": namespace or "",
            "head_pod": next((p.name for p in ctx.head_pods), ""),
            "pod": ", ".join(pods[:8]),
            "pod_gpus": f"{total:g}",
            "ray_gpus": f"{registered:g}",
            "per_pod": per_pod,
            "group": ", ".join(groups),
            "raycluster": raycluster,
            "missing_workers": str(missing),
        },
    )


class StartParams(StrictRecord):
    verdict: Literal["hides-gpu", "model-mismatch"]


def _selected_gpu_model(group: RayGroup) -> tuple[str, str] | None:
    for key, value in group.node_selector.items():
        if key in GPU_MODEL_LABELS:
            return key, value
    for term in group.required_node_terms:
        for requirement in term.match_expressions:
            if requirement.key in GPU_MODEL_LABELS and requirement.operator == "In" and requirement.values:
                return requirement.key, ",".join(requirement.values)
    return None


def group_facts(cluster: RayClusterObject, group: RayGroup) -> tuple[dict[str, float], float, dict[str, str]]:
    """A group's Ray resources, its Pods' GPU limit, and the params every group rule starts from."""
    resources, _, gpu_limit = group_ray_resources(group)
    params = {
        "raycluster": cluster.name,
        "namespace": cluster.namespace,
        "group": group.name,
        "pod_gpus": f"{gpu_limit:g}",
        "declared": format_shape(resources),
    }
    return resources, gpu_limit, params


@detector(
    "ray_start_params",
    ("raycluster", "group", "param", "value", "pod_gpus", "selector_key", "selector_value", "declared"),
    StartParams,
)
def ray_start_params(ctx: Context, rule: Rule) -> Iterable[Hit]:
    wanted = StartParams(**rule.params).verdict
    for cluster in _clusters_in_scope(ctx):
        groups = ([cluster.head] if cluster.head else []) + list(cluster.worker_groups)
        for group in groups:
            resources, gpu_limit, params = group_facts(cluster, group)
            subject = Subject(kind="RayCluster", name=cluster.name, namespace=cluster.namespace)
            if wanted == "hides-gpu" and gpu_limit > 0 and resources.get("GPU", 0.0) < gpu_limit:
                value = group.ray_start_params.get("num-gpus", "")
                yield Hit(
                    subject,
                    (
                        Evidence(
                            source=f"raycluster {cluster.name} group {group.name}",
                            text=f"nvidia.com/gpu limit {gpu_limit:g}; rayStartParams num-gpus: {value!r}",
                        ),
                    ),
                    {**params, "param": "num-gpus", "value": value},
                )
            if wanted == "model-mismatch":
                selected = _selected_gpu_model(group)
                declared_types = [k for k in resources if is_gpu_type_resource(k)]
                if not selected or not declared_types:
                    continue
                key, value = selected
                chosen, declared = gpu_models(value), set().union(*(gpu_models(k) for k in declared_types))
                if chosen and declared and not chosen & declared:
                    yield Hit(
                        subject,
                        (
                            Evidence(
                                source=f"raycluster {cluster.name} group {group.name}",
                                text=f"nodeSelector {key}={value}; rayStartParams resources "
                                f"{group.ray_start_params.get('resources', '')}",
                            ),
                        ),
                        {
                            **params,
                            "param": "resources",
                            "value": group.ray_start_params.get("resources", ""),
                            "selector_key": key,
                            "selector_value": value,
                            "declared": ", ".join(declared_types),
                        },
                    )


_FINISHED_JOB = {"SUCCEEDED", "FAILED", "STOPPED"}
# Ray's own detached actors: Serve's controller, proxies and replicas, and the supervisor of each
# submitted job (which holds the job's entrypoint resources while the job runs).
_SYSTEM_ACTORS = (
    "ServeReplica",
    "ServeController",
    "ProxyActor",
    "HTTPProxyActor",
    "ServeDeploymentReplica",
    "JobSupervisor",
)


def _age(start: datetime | None, now: datetime | None) -> str:
    if start is None or now is None:
        return ""
    try:
        seconds = (now - start).total_seconds()
    except TypeError:
        return ""
    if seconds < 0:
        return ""
    hours, rest = divmod(int(seconds), 3600)
    return f"{hours}h{rest // 60:02d}m" if hours else f"{rest // 60}m"


@detector("leftover_actors", ("actor", "actor_id", "class_name", "job_id", "resources", "node_ip", "age"))
def leftover_actors(ctx: Context, rule: Rule) -> Iterable[Hit]:
    ray = ctx.ray
    if ray is None:
        return
    finished = {j.job_id for j in ray.jobs if j.job_id and j.status.upper() in _FINISHED_JOB}
    scarce_waiting = any(
        k not in ("CPU", "memory", "object_store_memory")
        for d in ray.demands
        for k in d.largest_single_request
    )
    ip_by_id = {n.node_id: n.node_ip for n in ray.nodes}
    for actor in ray.actors:
        scarce = {k: v for k, v in actor.required_resources.items() if k not in ("CPU", "memory") and v > 0}
        if actor.state != "ALIVE" or not scarce:
            continue
        if (actor.class_name or "").startswith(_SYSTEM_ACTORS) or actor.ray_namespace == "serve":
            continue
        orphaned = actor.job_id in finished
        if not orphaned and not (actor.detached and scarce_waiting):
            continue
        why = f"job {actor.job_id} has finished" if orphaned else "detached, while other work waits"
        held = format_shape(scarce)
        yield Hit(
            Subject(kind="RayActor", name=actor.name or actor.actor_id or actor.class_name),
            (
                Evidence(
                    source=f"ray actor {actor.actor_id}",
                    text=f"ALIVE; {why}; holds {held}",
                    phrase="evidence.actor_job_finished" if orphaned else "evidence.actor_detached",
                    values={"job": actor.job_id or "", "resources": held}
                    if orphaned
                    else {"resources": held},
                ),
            ),
            {
                "actor": actor.name or actor.actor_id or "",
                "actor_id": actor.actor_id or "",
                "class_name": actor.class_name or "",
                "job_id": actor.job_id or "",
                "resources": format_shape(actor.required_resources),
                "node_ip": ip_by_id.get(actor.node_id) or "",
                "age": _age(actor.start_time, ctx.snapshot.collected_at),
            },
        )


class FailureParams(StrictRecord):
    # ``raycluster``: KubeRay's ReplicaFailure condition (the operator could not create a Pod);
    # ``ray-autoscaler``: the Ray autoscaler's own failures, from ``ray status`` or its log.
    source: Literal["raycluster", "ray-autoscaler"]
    patterns: list[str] = field(default_factory=list)


# ``ray status``: ``gpu-group: LaunchFailed (latest_attempt: 02:46:45) - <details>`` (v2),
# `` gpu: NodeTerminated (ip: 10.0.0.3)``, ``gpu: InsufficientInstanceCapacity (latest_attempt: ...)``
# (v1 2.x) and ``10.0.0.3: gpu_worker`` (v1 before 2.0); log lines name the type after ``of type``.
_FAILURE_LINE = re.compile(r"^\s*(?P<first>[^\s:]+):\s*(?P<second>[A-Za-z][\w.-]*)")
# v2's instance manager writes ``(id=..., type=<node type>, cloud_instance_id=...)``.
_OF_TYPE = re.compile(r"(?:of type |\btype=)(?P<group>[^\s.,:()]+(?:\.[^\s.,:()]+)*)")
_IPV4 = re.compile(r"^\d{1,3}(?:\.\d{1,3}){3}$")


_FAILURE_CATEGORY = re.compile(
    r"\b(InsufficientInstanceCapacity|\w*LimitExceeded|\w*QuotaExceeded|\w*Unsupported\w*|LaunchFailed|"
    r"NodeTerminated|RayletUnexpectedlyDied|ALLOCATION_FAILED|RAY_INSTALL_FAILED|maxReplicas)\b"
)


def _failure_reason(evidence: Evidence) -> tuple[str, str]:
    """(node type, reason) of one failure, as far as its line says."""
    line = evidence.text
    category = _FAILURE_CATEGORY.search(line)
    group = ""
    if evidence.source.startswith("ray status") and (match := _FAILURE_LINE.match(line)):
        first, second = match.group("first"), match.group("second")
        if _IPV4.match(first):  # before Ray 2.0: ``<ip>: <node type>``
            return second.rstrip(","), category.group(1) if category else "NodeTerminated"
        group = first
    elif of_type := _OF_TYPE.search(line):
        group = of_type.group("group")
    if category:
        return group, category.group(1)
    lowered = line.lower()
    # Enum-like keys: the renderer words them (``launch-failed``, ``autoscaler-error``).
    if "timeout=" in lowered:  # v2's ``timeout=300s at status ALLOCATED``: it never came up
        return group, "launch-timeout"
    return group, "launch-failed" if "launch" in lowered or "runinstances" in lowered else "autoscaler-error"


@detector("autoscaler_failures", ("raycluster", "group", "reason", "message"), FailureParams)
def autoscaler_failures(ctx: Context, rule: Rule) -> Iterable[Hit]:
    params = FailureParams(**rule.params)
    if params.source == "raycluster":
        for cluster in ctx.kube.rayclusters:
            for condition in cluster.conditions:
                if condition.type == "ReplicaFailure" and condition.status == "True":
                    yield Hit(
                        Subject(kind="RayCluster", name=cluster.name, namespace=cluster.namespace),
                        (
                            Evidence(
                                source=f"raycluster {cluster.name} condition ReplicaFailure",
                                text=condition.message or "",
                            ),
                        ),
                        {
                            "raycluster": cluster.name,
                            "namespace": cluster.namespace,
                            "group": "",
                            "reason": condition.reason or "",
                            "message": condition.message or "",
                        },
                    )
        return
    evidence = [
        Evidence(source="ray status: recent failures", text=line)
        for line in (ctx.ray.recent_failures if ctx.ray else [])
    ]
    if params.patterns:
        any_pattern = re.compile("|".join(f"(?:{p})" for p in params.patterns))
        seen = {e.text for e in evidence}
        for text in ctx.iter_texts():
            if text.source == "autoscaler" or text.text in seen or len(evidence) >= 20:
                continue
            if any_pattern.search(text.text[:20_000]):
                seen.add(text.text)
                evidence.append(Evidence(source=f"{text.source} line", text=text.text[:600]))
    if not evidence:
        return
    group, reason = _failure_reason(evidence[0])
    yield Hit(
        Subject(kind="RayAutoscaler", name=ctx.cluster),
        tuple(evidence[:5]),
        {"raycluster": ctx.cluster or "", "group": group, "reason": reason, "message": evidence[0].text},
    )


class TuneParams(StrictRecord):
    # ``queued``: trials wait while others run (they hold what the next one needs); ``never-starts``:
    # trials wait and none runs, so no trial holds anything, and no demand in the paste says more;
    # ``held-idle``: trials wait or are paused, none runs, yet Ray reports GPUs in use: something
    # that is not a running trial (a paused or ended trial's placement group, a leftover actor)
    # still holds them.
    verdict: Literal["queued", "never-starts", "held-idle"]


# Tune's trials that want GPUs back: PENDING ones to start, PAUSED ones to resume.
_WAITING_TRIALS = ("PENDING", "PAUSED")


def _usage_line(ray: RayState) -> str:
    return ", ".join(
        f"{ray.used.get(k, 0.0):g}/{ray.totals[k]:g} {k}"
        for k in ("CPU", "GPU", *sorted(k for k in ray.totals if k not in ("CPU", "GPU")))
        if k in ray.totals and k not in ("memory", "object_store_memory")
    )


def _gpus_held_idle(ray: RayState) -> bool:
    """No trial runs, some wait or are paused, and Ray's own figures show GPUs in use.

    "None runs" needs a summary line (it counts every trial) or paused trials: a cut table or an
    old-style list that shows only PENDING rows may have lost its RUNNING ones, whose GPUs Tune's
    own ``Resources requested`` line then counts."""
    tune = ray.tune
    if tune is None or tune.running > 0 or not any(tune.counts.get(s, 0) for s in _WAITING_TRIALS):
        return False
    summary = any(quote.startswith(("Number of trials", "Trial status")) for quote in tune.quotes)
    if not summary and tune.counts.get("PAUSED", 0) <= 0:
        return False
    return ray.totals.get("GPU", 0.0) > 0 and ray.used.get("GPU", 0.0) > 0


@detector("tune_trials", ("pending", "running", "paused", "message", "usage", "full"), TuneParams)
def tune_trials(ctx: Context, rule: Rule) -> Iterable[Hit]:
    wanted = TuneParams(**rule.params).verdict
    ray = ctx.ray
    tune = ray.tune if ray else None
    if ray is None or tune is None:
        return
    if wanted == "held-idle":
        if not _gpus_held_idle(ray):
            return
    elif tune.pending <= 0:
        return
    if wanted == "queued" and tune.running <= 0:
        return
    if wanted == "never-starts" and (
        tune.running > 0 or ctx.memo("ray_demands", lambda: analyse_demands(ctx))
    ):
        return
    usage = _usage_line(ray)
    full = [k for k in ("GPU", "CPU") if ray.totals.get(k, 0.0) > 0 and ray.used.get(k, 0.0) >= ray.totals[k]]
    evidence = [Evidence(source="tune status", text=quote) for quote in tune.quotes[:5]]
    if wanted == "held-idle":
        evidence.append(Evidence(source="ray resources in use", text=usage))
    yield Hit(
        Subject(kind="TuneExperiment", name=None),
        tuple(evidence),
        {
            "pending": str(tune.pending),
            "running": str(tune.running),
            "paused": str(tune.counts.get("PAUSED", 0)),
            "message": next(
                (q for q in tune.quotes if q.startswith(("Number of trials", "Trial status"))),
                ", ".join(f"{count} {state}" for state, count in sorted(tune.counts.items())),
            ),
            "usage": usage or "?",
            "full": ", ".join(full) or "-",
        },
    )
