"""Ray's JSON answers (dashboard, state API, ``ray list --format json``, Serve) to :class:`RayState`.

raydiag never calls ``ray.init``; it reads one cluster at a time over the dashboard's HTTP API, and
the bot serves clusters of many Ray versions at once. The answers differ between versions and even
between endpoints of one version; the readers of their envelopes, camelCase keys and values are in
:mod:`bot.read.ray_fields`, the cluster status (autoscaler v1 structured, v2 text) in
:mod:`bot.read.ray_cluster_status`, the autoscaler's event messages in
:mod:`bot.read.autoscaler_text`. This module reads the records (nodes, actors, tasks, placement
groups, Serve, jobs) and puts the whole together.

**Placement-group bookkeeping resources** (``GPU_group_<pg id>``, ``bundle_group_0_<pg id>``) are
carved out of a node's real resources, not extra capacity; they are folded back to their base name
(or dropped, for ``bundle``) so that no rule mistakes them for a custom resource no node offers.

**Infeasible** is set only where Ray says so: the autoscaler's cluster events ("No available node
types can fulfill ...") or a placement group whose scheduling state is INFEASIBLE. Autoscaler v1
says it of shapes no node type could ever hold; v2 also says it of shapes that fit an existing node
that is busy, when it cannot launch another (readonly clusters, groups at their maximum), so a rule
must still compare a demand with the nodes' totals before calling it impossible.

Nothing here raises on a malformed answer: a field of the wrong type counts as missing, a record that
is not a mapping is skipped, and the state holds whatever could be read.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from bot.read.autoscaler_text import infeasible_requests
from bot.read.kubernetes_json import dig
from bot.read.ray_cluster_status import (
    ClusterStatus,
    node_groups,
    pending_nodes,
    recent_failures,
    structured_constraints,
    structured_demands,
    usage_pairs,
)
from bot.read.ray_fields import (
    ResourceNames,
    as_int,
    as_list,
    as_mapping,
    as_text,
    field,
    resources,
    rows,
    time_ms,
)
from bot.read.ray_notation import is_synthetic_node_type
from bot.read.ray_status_text import node_usage
from bot.snapshot.ray import (
    Demand,
    PlacementGroup,
    RayActor,
    RayJobInfo,
    RayNode,
    RayState,
    RayTask,
    ServeApplication,
    ServeDeployment,
)

_DONE_TASK_STATES = ("FINISHED", "FAILED", "RUNNING")
_TERMINAL_JOB_STATES = {"SUCCEEDED", "FAILED", "STOPPED"}

_BundleKey = list[list[tuple[str, float]]]


# --- infeasible demands --------------------------------------------------------------------------


def _infeasible_events(
    events: object,
) -> tuple[list[dict[str, float]], list[_BundleKey], list[dict[str, float]]]:
    """Shapes, placement groups and ``request_resources()`` constraints the autoscaler said no node
    type can hold (``cluster_events``)."""
    shapes: list[dict[str, float]] = []
    groups: list[_BundleKey] = []
    constraints: list[dict[str, float]] = []
    for event in rows(events):
        found = infeasible_requests(as_text(event.get("message")) or "")
        if found.constraint:
            # The constraint's set did not fit, which says nothing of a task of one of its shapes.
            constraints += [shape for shape, _ in found.shapes]
            continue
        shapes += [shape for shape, _ in found.shapes]
        if found.bundles:
            groups.append(_bundle_key(found.bundles))
    return shapes, groups, constraints


def _infeasible_groups(pg_rows: list[Mapping[str, Any]], names: ResourceNames) -> list[_BundleKey]:
    """Bundles of the placement groups whose scheduling stats say INFEASIBLE (state API, 2.x)."""
    return [
        _bundle_key(_bundles(row, names))
        for row in pg_rows
        if as_text(dig(row, "stats", "scheduling_state")) == "INFEASIBLE"
    ]


def _mark_infeasible(
    demands: list[Demand], shapes: list[dict[str, float]], groups: list[_BundleKey]
) -> list[Demand]:
    marked = []
    for demand in demands:
        hit = demand.largest_single_request in shapes
        if demand.kind == "placement_group":
            hit = hit or _bundle_key(demand.bundles) in groups
            if (demand.strategy or "").upper() != "STRICT_PACK":
                hit = hit or any(bundle in shapes for bundle in demand.bundles)
        marked.append(replace(demand, infeasible=True) if hit and not demand.infeasible else demand)
    return marked


def _bundle_key(bundles: Iterable[Mapping[str, float]]) -> _BundleKey:
    """Bundles compared as a multiset, whatever their order."""
    return sorted(sorted(bundle.items()) for bundle in bundles)


# --- nodes ---------------------------------------------------------------------------------------


def _summary_rows(raw: object) -> tuple[list[Mapping[str, Any]], Mapping[str, Any]]:
    """``/nodes?view=summary``: per-node records (``raylet`` inside) and the logical-resource text."""
    data = dig(raw, "data") if isinstance(dig(raw, "data"), Mapping) else raw
    summary = [item for item in as_list(field(data, "summary")) if isinstance(item, Mapping)]
    logical = field(data, "node_logical_resources")
    return summary, logical if isinstance(logical, Mapping) else {}


def _node_from_row(row: Mapping[str, Any], names: ResourceNames) -> RayNode | None:
    raylet = row.get("raylet") if isinstance(row.get("raylet"), Mapping) else row
    node_id = as_text(field(raylet, "node_id"))
    node_ip = (
        as_text(field(raylet, "node_ip"))
        or as_text(field(raylet, "node_manager_address"))
        or as_text(row.get("ip"))
    )
    if not node_id and not node_ip:
        return None
    totals = resources(field(raylet, "resources_total"), names)
    head = field(raylet, "is_head_node")
    labels = field(raylet, "labels")
    return RayNode(
        node_id=node_id,
        node_ip=node_ip,
        state=(as_text(field(raylet, "state")) or "ALIVE").upper(),
        is_head=head is True or (head is None and "node:__internal_head__" in totals),
        node_type=as_text(field(raylet, "node_type_name")),
        resources_total=totals,
        resources_available=None,
        labels={k: v for k, v in labels.items() if isinstance(k, str) and isinstance(v, str)}
        if isinstance(labels, Mapping)
        else {},
    )


def _merge(first: RayNode, second: RayNode) -> RayNode:
    """Fill what the state API left out from the summary of the same node."""
    update: dict[str, Any] = {}
    for name in ("node_ip", "node_type"):
        if getattr(first, name) is None and getattr(second, name) is not None:
            update[name] = getattr(second, name)
    if not first.resources_total and second.resources_total:
        update["resources_total"] = second.resources_total
    if not first.labels and second.labels:
        update["labels"] = second.labels
    if second.is_head and not first.is_head:
        update["is_head"] = True
    return replace(first, **update) if update else first


def _nodes(responses: Mapping[str, object], status: ClusterStatus, names: ResourceNames) -> list[RayNode]:
    summary, logical = _summary_rows(responses.get("nodes_summary"))
    node_summary, node_logical = _summary_rows(responses.get("nodes"))
    summary += node_summary
    logical = {**node_logical, **logical}
    nodes: dict[str, RayNode] = {}
    for row in [r for r in rows(responses.get("nodes")) if "raylet" not in r] + summary:
        node = _node_from_row(row, names)
        if node is None:
            continue
        key = node.node_id or node.node_ip or ""
        nodes[key] = _merge(nodes[key], node) if key in nodes else node

    head_ip = as_text(field(status.load, "head_ip"))
    per_node = field(status.load, "usage_by_node")
    type_of = {
        **as_mapping(field(status.load, "node_type_mapping")),
        **as_mapping(field(status.report, "node_type_mapping")),
    }
    result = []
    for node in nodes.values():
        update: dict[str, Any] = {}
        usage = None
        if isinstance(per_node, Mapping):
            # Keyed by node id since 2.4x, by node IP before.
            usage = per_node.get(node.node_id or "") or per_node.get(node.node_ip or "")
        if isinstance(usage, Mapping):
            used, total = usage_pairs(usage, names)
            update["resources_available"] = {k: max(total[k] - used.get(k, 0.0), 0.0) for k in total}
            if not node.resources_total:
                update["resources_total"] = total
        elif isinstance(logical.get(node.node_id or ""), str):
            # The text rounds memory to two decimals of GiB; the exact total is better when known.
            used, total = node_usage(str(logical[node.node_id or ""]))
            total = {k: node.resources_total.get(k, v) for k, v in total.items()}
            update["resources_available"] = {k: max(total[k] - used.get(k, 0.0), 0.0) for k in total}
        node_type = as_text(type_of.get(node.node_id or "")) or as_text(type_of.get(node.node_ip or ""))
        if node.node_type is None and node_type and not is_synthetic_node_type(node_type):
            update["node_type"] = node_type
        if head_ip and node.node_ip == head_ip and not node.is_head:
            update["is_head"] = True
        result.append(replace(node, **update) if update else node)
    return result


# --- actors, tasks, placement groups -------------------------------------------------------------


def _actor(row: Mapping[str, Any], names: ResourceNames) -> RayActor:
    pid = as_int(field(row, "pid"))
    detached = field(row, "is_detached")
    return RayActor(
        actor_id=as_text(field(row, "actor_id")),
        class_name=as_text(field(row, "class_name")),
        name=as_text(row.get("name")),
        state=(as_text(row.get("state")) or "ALIVE").upper(),
        node_id=as_text(field(row, "node_id")) or as_text(dig(row, "address", "nodeId")),
        job_id=as_text(field(row, "job_id")),
        pid=pid if pid else None,  # 0 while the actor has no worker yet
        required_resources=resources(field(row, "required_resources"), names),
        detached=detached is True,
        ray_namespace=as_text(field(row, "ray_namespace")),
        start_time=time_ms(field(row, "start_time")) or time_ms(field(row, "start_time_ms")),
        placement_group_id=as_text(field(row, "placement_group_id")),
    )


def _task(row: Mapping[str, Any], names: ResourceNames) -> RayTask | None:
    state = (as_text(row.get("state")) or "PENDING_NODE_ASSIGNMENT").upper()
    if state.startswith(_DONE_TASK_STATES):
        return None
    return RayTask(
        task_id=as_text(field(row, "task_id")),
        name=as_text(row.get("name")) or as_text(field(row, "func_or_class_name")),
        state=state,
        job_id=as_text(field(row, "job_id")),
        required_resources=resources(field(row, "required_resources"), names),
    )


def _bundle(raw: object, names: ResourceNames) -> dict[str, float]:
    """A bundle record (``unit_resources`` inside) or a bare resource map."""
    unit = field(raw, "unit_resources")
    return resources(unit if isinstance(unit, Mapping) else raw, names)


def _bundles(row: Mapping[str, Any], names: ResourceNames) -> list[dict[str, float]]:
    raw = row.get("bundles")
    items = raw.values() if isinstance(raw, Mapping) else as_list(raw)
    return [b for item in items if (b := _bundle(item, names))]


def _placement_group(row: Mapping[str, Any], names: ResourceNames, dead_jobs: set[str]) -> PlacementGroup:
    creator = as_text(field(row, "creator_job_id"))
    return PlacementGroup(
        placement_group_id=as_text(field(row, "placement_group_id")),
        name=as_text(row.get("name")),
        state=(as_text(row.get("state")) or "CREATED").upper(),
        strategy=(as_text(row.get("strategy")) or "PACK").upper(),
        bundles=_bundles(row, names),
        detached=field(row, "is_detached") is True,
        creator_job_id=creator,
        job_dead=field(row, "creator_job_dead") is True or (creator is not None and creator in dead_jobs),
    )


def _strategy_from_demands(pg: PlacementGroup, demands: list[Demand], raw_strategy: object) -> PlacementGroup:
    """The state API (2.x) does not list a group's strategy; a pending group's demand does."""
    if as_text(raw_strategy):
        return pg
    for demand in demands:
        same = demand.kind == "placement_group" and _bundle_key(demand.bundles) == _bundle_key(pg.bundles)
        if same and demand.strategy:
            return replace(pg, strategy=demand.strategy.upper())
    return pg


# --- Serve and jobs ------------------------------------------------------------------------------


def _replica_states(replicas: object) -> dict[str, int]:
    states: dict[str, int] = {}
    for replica in replicas.values() if isinstance(replicas, Mapping) else as_list(replicas):
        state = as_text(dig(replica, "state"))
        if state:
            states[state] = states.get(state, 0) + 1
    return states


def _named_records(raw: object) -> list[tuple[str, Mapping[str, Any]]]:
    """Records given as a mapping of name to record, or as a list of records that carry a ``name``."""
    pairs = raw.items() if isinstance(raw, Mapping) else ((None, item) for item in as_list(raw))
    found = []
    for key, record in pairs:
        name = as_text(dig(record, "name")) or (key if isinstance(key, str) and key else None)
        if name and isinstance(record, Mapping):
            found.append((name, record))
    return found


def _deployments(raw: object) -> list[ServeDeployment]:
    return [
        ServeDeployment(
            name=name,
            status=as_text(record.get("status")) or "UNKNOWN",
            message=as_text(record.get("message")) or "",
            replica_states=_replica_states(record.get("replicas")),
        )
        for name, record in _named_records(raw)
    ]


def _serve_applications(raw: object) -> list[ServeApplication]:
    apps = dig(raw, "applications")
    if isinstance(apps, Mapping | list):
        return [
            ServeApplication(
                name=name,
                status=as_text(record.get("status")) or "UNKNOWN",
                message=as_text(record.get("message")) or "",
                deployments=_deployments(record.get("deployments")),
            )
            for name, record in _named_records(apps)
        ]
    # Ray 2.0-2.3: /api/serve/deployments/status, one unnamed application.
    app_status = dig(raw, "app_status")
    # NOT_STARTED with no deployments is how those versions say "Serve is not running".
    if isinstance(app_status, Mapping) and (
        app_status.get("status") != "NOT_STARTED" or dig(raw, "deployment_statuses")
    ):
        return [
            ServeApplication(
                name=as_text(dig(raw, "name")) or "default",
                status=as_text(app_status.get("status")) or "UNKNOWN",
                message=as_text(app_status.get("message")) or "",
                deployments=_deployments(dig(raw, "deployment_statuses")),
            )
        ]
    return []


def _jobs(raw: object) -> list[RayJobInfo]:
    jobs = []
    keyed = isinstance(raw, Mapping) and not any(k in raw for k in ("data", "result"))
    pairs = raw.items() if keyed and isinstance(raw, Mapping) else ((None, row) for row in rows(raw))
    for key, row in pairs:
        if not isinstance(row, Mapping):
            continue
        submission = as_text(row.get("submission_id")) or (key if isinstance(key, str) else None)
        job_id = as_text(row.get("job_id"))
        if not submission and not job_id:
            continue
        jobs.append(
            RayJobInfo(
                job_id=job_id,
                submission_id=submission,
                status=(as_text(row.get("status")) or "PENDING").upper(),
                message=as_text(row.get("message")),
                entrypoint=as_text(row.get("entrypoint")),
            )
        )
    return jobs


def _dead_jobs(jobs: list[RayJobInfo], raw_state_jobs: object) -> set[str]:
    dead = {job.job_id for job in jobs if job.job_id and job.status in _TERMINAL_JOB_STATES}
    for row in rows(raw_state_jobs):
        job_id = as_text(row.get("job_id"))
        if job_id and (
            row.get("is_dead") is True or (as_text(row.get("status")) or "") in _TERMINAL_JOB_STATES
        ):
            dead.add(job_id)
    return dead


# --- the whole ------------------------------------------------------------------------------------


def _version(raw: object) -> str | None:
    if isinstance(raw, str):
        return raw or None
    return as_text(dig(raw, "ray_version")) or as_text(dig(raw, "data", "ray_version"))


# Optional endpoints whose absence hides a part of the Ray layer (and a cause with it).
_UNREAD_PARTS = {"serve_applications": "serve"}


def ray_state(
    responses: Mapping[str, object], unanswered: Mapping[str, Sequence[str]] | None = None
) -> RayState:
    """Build the Ray half from ``{"nodes": <answer>, "cluster_status": <answer>, ...}``.

    Keys: ``version``, ``nodes`` (state API or ``/nodes?view=summary``), ``nodes_summary``,
    ``cluster_status`` (either format), ``cluster_status_formatted``, ``actors``, ``pending_tasks``,
    ``placement_groups``, ``serve_applications``, ``jobs``, ``state_jobs``, ``cluster_events``.
    Values are the parsed JSON bodies; a missing key just leaves its part empty. ``unanswered``
    names the optional endpoints the release does not have (key -> paths that answered 404); the
    parts they hide are listed in ``RayState.unread``.
    """
    if not isinstance(responses, Mapping):
        return RayState()
    missing = unanswered or {}
    status = ClusterStatus(responses)
    names = ResourceNames()
    actor_rows = rows(responses.get("actors"))
    task_rows = rows(responses.get("pending_tasks"))
    pg_rows = rows(responses.get("placement_groups"))
    for row in rows(responses.get("nodes")):
        names.learn(as_mapping(field(row, "resources_total")))
    for row in actor_rows + task_rows:
        names.learn(as_mapping(field(row, "required_resources")))
    for row in pg_rows:
        for bundle in as_list(row.get("bundles")):
            names.learn(as_mapping(field(bundle, "unit_resources")))
    names.learn(status.shapes())
    for key in ("nodes", "nodes_summary"):
        for text in _summary_rows(responses.get(key))[1].values():
            names.learn(node_usage(str(text))[1])
    names.learn(as_mapping(field(status.report, "node_type_mapping")).values())
    names.learn(as_mapping(field(status.load, "node_type_mapping")).values())

    jobs = _jobs(responses.get("jobs"))
    dead_jobs = _dead_jobs(jobs, responses.get("state_jobs"))
    demands = structured_demands(status) if status.structured is not None else list(status.parsed.demands)
    placement_groups = [
        _strategy_from_demands(_placement_group(row, names, dead_jobs), demands, row.get("strategy"))
        for row in pg_rows
    ]
    shapes, groups, unfit = _infeasible_events(responses.get("cluster_events"))
    demands = _mark_infeasible(demands, shapes, groups + _infeasible_groups(pg_rows, names))

    nodes = _nodes(responses, status, names)
    if status.structured is not None:
        used, totals = usage_pairs(field(status.load, "usage"), names)
    else:
        used, totals = dict(status.parsed.used), dict(status.parsed.totals)
    alive = sum(1 for node in nodes if node.alive)
    return RayState(
        version=_version(responses.get("version")),
        nodes=nodes,
        totals=totals,
        used=used,
        node_count=alive if nodes else (status.parsed.node_count if status.structured is None else None),
        node_groups=node_groups(status, names),
        pending_nodes=pending_nodes(status, names),
        recent_failures=recent_failures(status, names),
        demands=demands,
        constraints=[
            replace(c, infeasible=True) if c.shape in unfit and not c.infeasible else c
            for c in (
                structured_constraints(status) if status.structured is not None else status.parsed.constraints
            )
        ],
        actors=[_actor(row, names) for row in actor_rows],
        pending_tasks=[task for row in task_rows if (task := _task(row, names))],
        placement_groups=placement_groups,
        serve_applications=_serve_applications(responses.get("serve_applications")),
        jobs=jobs,
        unread={
            part: [str(path) for path in missing[key]]
            for key, part in _UNREAD_PARTS.items()
            if key in missing and key not in responses
        },
    )
