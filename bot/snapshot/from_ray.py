"""Raw Ray dashboard answers (parsed JSON) to the normalised :class:`RayState`.

raydiag never calls ``ray.init``; it reads one cluster at a time over the dashboard's HTTP API, and
the bot serves clusters of many Ray versions at once. The answers differ between versions and even
between endpoints of one version, so everything here takes ``object`` and tolerates anything:

- **Envelopes.** State API lists come as ``{"result": true, "data": {"result": {"result": [...],
  "total": n}}}`` (2.x), sometimes as ``{"data": {"result": [...]}}`` or as a mapping of id to
  record (1.x); ``/api/jobs/`` is a bare list; Serve answers without any envelope.
- **Mangled resource names.** ``/api/cluster_status`` and ``/nodes?view=summary`` pass every mapping
  through the dashboard's camelCase converter, keys included, so ``accelerator_type:A100`` arrives as
  ``acceleratorType:A100`` and ``node:__internal_head__`` as ``node:InternalHead``. Shapes inside
  lists (the demand vectors) escape the converter. Names are mapped back through the names the
  unmangled sources use, so the classifier sees Ray's own spelling everywhere.
- **Autoscaler v1 and v2.** v1 publishes a structured status that ``/api/cluster_status`` returns;
  v2 (KubeRay's autoscaler v2, ``ray up`` since 2.4x) publishes nothing there and only the
  ``?format=1`` text (what ``ray status`` prints) carries its demands, so that text is parsed too.
- **Placement-group bookkeeping resources** (``GPU_group_<pg id>``, ``bundle_group_0_<pg id>``) are
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

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from bot.snapshot.from_kubernetes import dig
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
from bot.snapshot.ray_notation import Usage, base_resource, find_maps, find_usages
from bot.snapshot.ray_status_text import RayStatusText, parse_status_text, placement_group_demand

_BASE_NAMES = ("CPU", "GPU", "memory", "object_store_memory", "node:__internal_head__")
# ``autoscaler v1`` without a cluster config (a plain ``ray start`` cluster) names every node's type
# after the node itself; those are not worker groups.
_SYNTHETIC_TYPE = re.compile(r"^node_[0-9a-fA-F]{16,}$")
_INFEASIBLE_EVENT = "No available node types can fulfill"
# A bundle count is only ever multiplied out this far; a real group has a handful.
_MAX_BUNDLES = 1000
_DONE_TASK_STATES = ("FINISHED", "FAILED", "RUNNING")
_TERMINAL_JOB_STATES = {"SUCCEEDED", "FAILED", "STOPPED"}

_BundleKey = list[list[tuple[str, float]]]


# --- small total readers -------------------------------------------------------------------------


def _text(value: object) -> str | None:
    """A non-empty string, or a number spelled as one; Ray uses ``""`` for "not set"."""
    if isinstance(value, str):
        return value or None
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return None


def _number(value: object) -> float | None:
    if isinstance(value, bool):
        return None
    if not isinstance(value, int | float | str):
        return None
    try:
        number = float(value.strip() if isinstance(value, str) else value)
    except (ValueError, OverflowError):
        return None
    return number if math.isfinite(number) else None


def _int(value: object) -> int | None:
    number = _number(value)
    return int(number) if number is not None and number.is_integer() and abs(number) < 2**63 else None


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _mapping(value: object) -> dict[str, Any]:
    return {k: v for k, v in value.items() if isinstance(k, str)} if isinstance(value, Mapping) else {}


def _camel(name: str) -> str:
    """The dashboard's ``to_camel_case``: split on ``_``, title-case every part but the first."""
    first, *rest = name.split("_")
    return first + "".join(part.title() for part in rest)


def _field(record: object, snake: str) -> Any:
    """``record[snake]``, or its camelCase spelling for the endpoints that convert keys."""
    if not isinstance(record, Mapping):
        return None
    value = record.get(snake)
    return record.get(_camel(snake)) if value is None else value


def _resources(raw: object, names: _Names | None = None) -> dict[str, float]:
    """A resource map with Ray's names and units; anything not name -> number is skipped."""
    found: dict[str, float] = {}
    if not isinstance(raw, Mapping):
        return found
    for key, value in raw.items():
        amount = _number(value)
        if not isinstance(key, str) or not key or amount is None:
            continue
        name = names.restore(key) if names else key
        base = base_resource(name)
        if base is None:
            continue
        if base != name:
            # Bookkeeping of a placement group: count it under its base resource, once.
            found.setdefault(base, amount)
            continue
        found[name] = amount
    return found


def _printed_maps(text: str) -> list[tuple[dict[str, float], int]]:
    """``{'GPU': 1.0} * 2, {'CPU': 1.0}`` (also C++ ``{GPU: 1.000000}``) -> (map, times) pairs."""
    return [
        (shape, min(found.times or 1, _MAX_BUNDLES))
        for found in find_maps(text)
        if (shape := _resources(found.shape))
    ]


def _time_ms(value: object) -> datetime | None:
    """Ray's epoch timestamps are milliseconds; a value that reads as seconds is taken as such."""
    number = _number(value)
    if number is None or number <= 0:
        return None
    seconds = number / 1000.0 if number > 1e11 else number
    try:
        return datetime.fromtimestamp(seconds, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return None


def _rows(raw: object, depth: int = 0) -> list[Mapping[str, Any]]:
    """The records of a list answer, whatever envelope this Ray version wraps them in."""
    if depth > 5:
        return []
    if isinstance(raw, list):
        return [item for item in raw if isinstance(item, Mapping)]
    if not isinstance(raw, Mapping):
        return []
    for key in ("data", "result", "results", "items"):
        inner = raw.get(key)
        if isinstance(inner, list | Mapping):
            return _rows(inner, depth + 1)
    values = list(raw.values())
    if values and all(isinstance(v, Mapping) for v in values):
        # Ray 1.x listed records as a mapping of id to record.
        return values
    return []


# --- names ---------------------------------------------------------------------------------------


class _Names:
    """Maps camelCased resource and node-type names back to the spelling Ray uses."""

    def __init__(self) -> None:
        self._by_camel: dict[str, str] = {}
        self.learn(_BASE_NAMES)

    def learn(self, names: Iterable[object]) -> None:
        for name in names:
            if isinstance(name, str) and name:
                self._by_camel.setdefault(_camel(name), name)

    def restore(self, name: str) -> str:
        known = self._by_camel.get(name)
        if known is not None:
            return known
        # Names we never saw unmangled: undo the conversion for the prefixes Ray itself uses.
        if name.startswith("acceleratorType:"):
            return "accelerator_type:" + name.removeprefix("acceleratorType:")
        return name


# --- the cluster status --------------------------------------------------------------------------


class _Status:
    """``/api/cluster_status`` in any of its forms: structured dict (v1), text (v2, ``format=1``)."""

    def __init__(self, responses: Mapping[str, object]) -> None:
        self.structured: Mapping[str, Any] | None = None
        self.text: str | None = None
        self.error: str | None = None
        self._parsed: RayStatusText | None = None
        for key in ("cluster_status", "cluster_status_formatted"):
            self._read(responses.get(key))

    def _read(self, raw: object) -> None:
        if isinstance(raw, str):
            self.text = self.text or raw
            return
        data = dig(raw, "data") if isinstance(dig(raw, "data"), Mapping) else raw
        if not isinstance(data, Mapping):
            return
        status = _field(data, "cluster_status")
        if isinstance(status, str):
            self.text = self.text or status
        elif isinstance(status, Mapping):
            self.structured = self.structured or status
        elif _field(data, "load_metrics_report") is not None:
            # The autoscaler's own JSON (from GCS), without the dashboard around it.
            self.structured = self.structured or data
        self.error = self.error or _text(_field(data, "autoscaling_error"))

    @property
    def load(self) -> Mapping[str, Any]:
        value = _field(self.structured, "load_metrics_report")
        return value if isinstance(value, Mapping) else {}

    @property
    def report(self) -> Mapping[str, Any]:
        value = _field(self.structured, "autoscaler_report")
        return value if isinstance(value, Mapping) else {}

    @property
    def parsed(self) -> RayStatusText:
        """The ``ray status`` text, read by the same reader as a pasted one (read once)."""
        if self._parsed is None:
            self._parsed = parse_status_text((self.text or "").splitlines())
        return self._parsed

    def shapes(self) -> Iterable[object]:
        """Every resource name the structured status spells correctly (inside lists)."""
        for key in ("resource_demand", "request_demand", "node_types"):
            for entry in _list(_field(self.load, key)):
                if isinstance(entry, list) and entry and isinstance(entry[0], Mapping):
                    yield from entry[0]
        for entry in _list(_field(self.load, "pg_demand")):
            pg = entry[0] if isinstance(entry, list) and entry else None
            for bundle in _list(dig(pg, "bundles")):
                if isinstance(bundle, list) and bundle and isinstance(bundle[0], Mapping):
                    yield from bundle[0]


def _count(value: object) -> int:
    count = _int(value)
    return count if count is not None and count > 0 else 1


def _shape_counts(raw: object) -> list[tuple[dict[str, float], int]]:
    """``[[{"GPU": 4.0}, 1], ...]`` (also ``[{"GPU": 4.0}, ...]``)."""
    found = []
    for entry in _list(raw):
        if isinstance(entry, list) and entry and isinstance(entry[0], Mapping):
            found.append((_resources(entry[0]), _count(entry[1] if len(entry) > 1 else 1)))
        elif isinstance(entry, Mapping):
            found.append((_resources(entry), 1))
    return found


def _structured_demands(status: _Status) -> list[Demand]:
    load = status.load
    demands = [
        Demand(shape=shape, count=count, kind="task_or_actor")
        for shape, count in _shape_counts(_field(load, "resource_demand"))
        if shape
    ]
    for entry in _list(_field(load, "pg_demand")):
        pg = entry[0] if isinstance(entry, list) and entry else entry
        if not isinstance(pg, Mapping):
            continue
        bundles = [
            bundle
            for shape, times in _shape_counts(pg.get("bundles"))
            for bundle in [shape] * min(times, _MAX_BUNDLES)
        ]
        if bundles:
            demands.append(
                placement_group_demand(
                    bundles,
                    _text(pg.get("strategy")),
                    _count(entry[1] if isinstance(entry, list) and len(entry) > 1 else 1),
                )
            )
    demands += [
        Demand(shape=shape, count=count, kind="request")
        for shape, count in _shape_counts(_field(load, "request_demand"))
        if shape
    ]
    return demands


def _printed_bundles(text: str) -> list[dict[str, float]]:
    """``{'GPU': 1.0} * 2, {'CPU': 1.0}`` (also ``*2`` without spaces) -> one map per bundle."""
    bundles: list[dict[str, float]] = []
    for shape, times in _printed_maps(text):
        bundles += [shape] * min(times, _MAX_BUNDLES - len(bundles))
    return bundles


def _infeasible_events(events: object) -> tuple[list[dict[str, float]], list[_BundleKey]]:
    """Shapes and placement groups the autoscaler said no node type can hold (``cluster_events``).

    v1 writes one event per shape (``resource request {...}``; a STRICT_PACK group as the
    ``defaultdict`` of its summed bundles); v2 lists several (``resource requests {...}*1, ...``)
    and writes placement groups apart (``placement group requests (detail=...): {...}*2``).
    """
    shapes: list[dict[str, float]] = []
    groups: list[_BundleKey] = []
    for event in _rows(events):
        message = _text(event.get("message")) or ""
        if _INFEASIBLE_EVENT not in message:
            continue
        message = message.partition(". Add suitable")[0]
        if "placement group requests" in message:
            if bundles := _printed_bundles(message.partition("):")[2]):
                groups.append(_bundle_key(bundles))
            continue
        shapes += [shape for shape, _ in _printed_maps(message)]
    return shapes, groups


def _infeasible_groups(pg_rows: list[Mapping[str, Any]], names: _Names) -> list[_BundleKey]:
    """Bundles of the placement groups whose scheduling stats say INFEASIBLE (state API, 2.x)."""
    return [
        _bundle_key(_bundles(row, names))
        for row in pg_rows
        if _text(dig(row, "stats", "scheduling_state")) == "INFEASIBLE"
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
        marked.append(
            demand.model_copy(update={"infeasible": True}) if hit and not demand.infeasible else demand
        )
    return marked


def _bundle_key(bundles: Iterable[Mapping[str, float]]) -> _BundleKey:
    """Bundles compared as a multiset, whatever their order."""
    return sorted(sorted(bundle.items()) for bundle in bundles)


def _node_groups(status: _Status, names: _Names) -> dict[str, int]:
    groups: dict[str, int] = {}
    if status.structured is not None:
        for key in ("active_nodes", "idle_nodes"):
            counts = _field(status.report, key)
            if isinstance(counts, Mapping):
                for name, count in counts.items():
                    amount = _int(count)
                    if isinstance(name, str) and amount is not None:
                        real = names.restore(name)
                        groups[real] = groups.get(real, 0) + amount
    else:
        groups = dict(status.parsed.node_groups)
    return {name: count for name, count in groups.items() if not _SYNTHETIC_TYPE.match(name)}


def _pending_nodes(status: _Status, names: _Names) -> list[str]:
    if status.structured is None:
        return list(status.parsed.pending_nodes)
    pending = []
    for entry in _list(_field(status.report, "pending_nodes")):
        parts = [p for item in _list(entry) if (p := _text(item))]
        if parts:
            pending.append(f"{parts[0]}: {', '.join(parts[1:])}" if len(parts) > 1 else parts[0])
    launches = _field(status.report, "pending_launches")
    if isinstance(launches, Mapping):
        for name, count in launches.items():
            if isinstance(name, str) and (amount := _int(count)):
                pending.append(f"{names.restore(name)}, {amount} launching")
    return pending


def _recent_failures(status: _Status, names: _Names) -> list[str]:
    failures = [] if status.structured is not None else list(status.parsed.recent_failures)
    for entry in _list(_field(status.report, "failed_nodes")):
        parts = [p for item in _list(entry) if (p := _text(item))]
        if len(parts) >= 2:
            failures.append(f"{parts[1]}: NodeTerminated (ip: {parts[0]})")
    availability = _field(_field(status.report, "node_availability_summary"), "node_availabilities")
    if isinstance(availability, Mapping):
        for name, record in availability.items():
            if not isinstance(name, str) or _field(record, "is_available") is not False:
                continue
            info = _field(record, "unavailable_node_information")
            category = _text(_field(info, "category")) or "Unavailable"
            description = _text(_field(info, "description"))
            failures.append(
                f"{names.restore(name)}: {category}" + (f" - {description}" if description else "")
            )
    if status.error:
        failures.append(status.error)
    return failures


def _usage(raw: object, names: _Names) -> tuple[dict[str, float], dict[str, float]]:
    """(used, total) from ``{"GPU": [used, total], ...}``."""
    used: dict[str, float] = {}
    total: dict[str, float] = {}
    if not isinstance(raw, Mapping):
        return used, total
    for key, pair in raw.items():
        values = _list(pair)
        if not isinstance(key, str) or len(values) < 2:
            continue
        spent, whole = _number(values[0]), _number(values[1])
        if spent is None or whole is None:
            continue
        for target, amount in ((used, spent), (total, whole)):
            target.update(_resources({key: amount}, names))
    return used, total


def _text_usage(text: str) -> tuple[dict[str, float], dict[str, float]]:
    """(used, total) from ``used/total name`` lines, as ``/nodes?view=summary`` gives them per node."""
    used: dict[str, float] = {}
    total: dict[str, float] = {}
    usages: list[Usage] = [usage for line in text.splitlines() for usage in find_usages(line)]
    for usage in usages:
        used.update(_resources({usage.name: usage.first}))
        total.update(_resources({usage.name: usage.second}))
    return used, total


# --- nodes ---------------------------------------------------------------------------------------


def _summary_rows(raw: object) -> tuple[list[Mapping[str, Any]], Mapping[str, Any]]:
    """``/nodes?view=summary``: per-node records (``raylet`` inside) and the logical-resource text."""
    data = dig(raw, "data") if isinstance(dig(raw, "data"), Mapping) else raw
    summary = [item for item in _list(_field(data, "summary")) if isinstance(item, Mapping)]
    logical = _field(data, "node_logical_resources")
    return summary, logical if isinstance(logical, Mapping) else {}


def _node_from_row(row: Mapping[str, Any], names: _Names) -> RayNode | None:
    raylet = row.get("raylet") if isinstance(row.get("raylet"), Mapping) else row
    node_id = _text(_field(raylet, "node_id"))
    node_ip = (
        _text(_field(raylet, "node_ip"))
        or _text(_field(raylet, "node_manager_address"))
        or _text(row.get("ip"))
    )
    if not node_id and not node_ip:
        return None
    totals = _resources(_field(raylet, "resources_total"), names)
    head = _field(raylet, "is_head_node")
    labels = _field(raylet, "labels")
    return RayNode(
        node_id=node_id,
        node_ip=node_ip,
        state=(_text(_field(raylet, "state")) or "ALIVE").upper(),
        is_head=head is True or (head is None and "node:__internal_head__" in totals),
        node_type=_text(_field(raylet, "node_type_name")),
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
    return first.model_copy(update=update) if update else first


def _nodes(responses: Mapping[str, object], status: _Status, names: _Names) -> list[RayNode]:
    summary, logical = _summary_rows(responses.get("nodes_summary"))
    node_summary, node_logical = _summary_rows(responses.get("nodes"))
    summary += node_summary
    logical = {**node_logical, **logical}
    nodes: dict[str, RayNode] = {}
    for row in [r for r in _rows(responses.get("nodes")) if "raylet" not in r] + summary:
        node = _node_from_row(row, names)
        if node is None:
            continue
        key = node.node_id or node.node_ip or ""
        nodes[key] = _merge(nodes[key], node) if key in nodes else node

    head_ip = _text(_field(status.load, "head_ip"))
    per_node = _field(status.load, "usage_by_node")
    type_of = {
        **_mapping(_field(status.load, "node_type_mapping")),
        **_mapping(_field(status.report, "node_type_mapping")),
    }
    result = []
    for node in nodes.values():
        update: dict[str, Any] = {}
        usage = None
        if isinstance(per_node, Mapping):
            # Keyed by node id since 2.4x, by node IP before.
            usage = per_node.get(node.node_id or "") or per_node.get(node.node_ip or "")
        if isinstance(usage, Mapping):
            used, total = _usage(usage, names)
            update["resources_available"] = {k: max(total[k] - used.get(k, 0.0), 0.0) for k in total}
            if not node.resources_total:
                update["resources_total"] = total
        elif isinstance(logical.get(node.node_id or ""), str):
            # The text rounds memory to two decimals of GiB; the exact total is better when known.
            used, total = _text_usage(str(logical[node.node_id or ""]))
            total = {k: node.resources_total.get(k, v) for k, v in total.items()}
            update["resources_available"] = {k: max(total[k] - used.get(k, 0.0), 0.0) for k in total}
        node_type = _text(type_of.get(node.node_id or "")) or _text(type_of.get(node.node_ip or ""))
        if node.node_type is None and node_type and not _SYNTHETIC_TYPE.match(node_type):
            update["node_type"] = node_type
        if head_ip and node.node_ip == head_ip and not node.is_head:
            update["is_head"] = True
        result.append(node.model_copy(update=update) if update else node)
    return result


# --- actors, tasks, placement groups -------------------------------------------------------------


def _actor(row: Mapping[str, Any], names: _Names) -> RayActor:
    pid = _int(_field(row, "pid"))
    detached = _field(row, "is_detached")
    return RayActor(
        actor_id=_text(_field(row, "actor_id")),
        class_name=_text(_field(row, "class_name")),
        name=_text(row.get("name")),
        state=(_text(row.get("state")) or "ALIVE").upper(),
        node_id=_text(_field(row, "node_id")) or _text(dig(row, "address", "nodeId")),
        job_id=_text(_field(row, "job_id")),
        pid=pid if pid else None,  # 0 while the actor has no worker yet
        required_resources=_resources(_field(row, "required_resources"), names),
        detached=detached is True,
        ray_namespace=_text(_field(row, "ray_namespace")),
        start_time=_time_ms(_field(row, "start_time")) or _time_ms(_field(row, "start_time_ms")),
        placement_group_id=_text(_field(row, "placement_group_id")),
    )


def _task(row: Mapping[str, Any], names: _Names) -> RayTask | None:
    state = (_text(row.get("state")) or "PENDING_NODE_ASSIGNMENT").upper()
    if state.startswith(_DONE_TASK_STATES):
        return None
    return RayTask(
        task_id=_text(_field(row, "task_id")),
        name=_text(row.get("name")) or _text(_field(row, "func_or_class_name")),
        state=state,
        job_id=_text(_field(row, "job_id")),
        required_resources=_resources(_field(row, "required_resources"), names),
    )


def _bundle(raw: object, names: _Names) -> dict[str, float]:
    """A bundle record (``unit_resources`` inside) or a bare resource map."""
    unit = _field(raw, "unit_resources")
    return _resources(unit if isinstance(unit, Mapping) else raw, names)


def _bundles(row: Mapping[str, Any], names: _Names) -> list[dict[str, float]]:
    raw = row.get("bundles")
    items = raw.values() if isinstance(raw, Mapping) else _list(raw)
    return [b for item in items if (b := _bundle(item, names))]


def _placement_group(row: Mapping[str, Any], names: _Names, dead_jobs: set[str]) -> PlacementGroup:
    creator = _text(_field(row, "creator_job_id"))
    return PlacementGroup(
        placement_group_id=_text(_field(row, "placement_group_id")),
        name=_text(row.get("name")),
        state=(_text(row.get("state")) or "CREATED").upper(),
        strategy=(_text(row.get("strategy")) or "PACK").upper(),
        bundles=_bundles(row, names),
        detached=_field(row, "is_detached") is True,
        creator_job_id=creator,
        job_dead=_field(row, "creator_job_dead") is True or (creator is not None and creator in dead_jobs),
    )


def _strategy_from_demands(pg: PlacementGroup, demands: list[Demand], raw_strategy: object) -> PlacementGroup:
    """The state API (2.x) does not list a group's strategy; a pending group's demand does."""
    if _text(raw_strategy):
        return pg
    for demand in demands:
        same = demand.kind == "placement_group" and _bundle_key(demand.bundles) == _bundle_key(pg.bundles)
        if same and demand.strategy:
            return pg.model_copy(update={"strategy": demand.strategy.upper()})
    return pg


# --- Serve and jobs ------------------------------------------------------------------------------


def _replica_states(replicas: object) -> dict[str, int]:
    states: dict[str, int] = {}
    for replica in replicas.values() if isinstance(replicas, Mapping) else _list(replicas):
        state = _text(dig(replica, "state"))
        if state:
            states[state] = states.get(state, 0) + 1
    return states


def _named_records(raw: object) -> list[tuple[str, Mapping[str, Any]]]:
    """Records given as a mapping of name to record, or as a list of records that carry a ``name``."""
    pairs = raw.items() if isinstance(raw, Mapping) else ((None, item) for item in _list(raw))
    found = []
    for key, record in pairs:
        name = _text(dig(record, "name")) or (key if isinstance(key, str) and key else None)
        if name and isinstance(record, Mapping):
            found.append((name, record))
    return found


def _deployments(raw: object) -> list[ServeDeployment]:
    return [
        ServeDeployment(
            name=name,
            status=_text(record.get("status")) or "UNKNOWN",
            message=_text(record.get("message")) or "",
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
                status=_text(record.get("status")) or "UNKNOWN",
                message=_text(record.get("message")) or "",
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
                name=_text(dig(raw, "name")) or "default",
                status=_text(app_status.get("status")) or "UNKNOWN",
                message=_text(app_status.get("message")) or "",
                deployments=_deployments(dig(raw, "deployment_statuses")),
            )
        ]
    return []


def _jobs(raw: object) -> list[RayJobInfo]:
    jobs = []
    keyed = isinstance(raw, Mapping) and not any(k in raw for k in ("data", "result"))
    pairs = raw.items() if keyed and isinstance(raw, Mapping) else ((None, row) for row in _rows(raw))
    for key, row in pairs:
        if not isinstance(row, Mapping):
            continue
        submission = _text(row.get("submission_id")) or (key if isinstance(key, str) else None)
        job_id = _text(row.get("job_id"))
        if not submission and not job_id:
            continue
        jobs.append(
            RayJobInfo(
                job_id=job_id,
                submission_id=submission,
                status=(_text(row.get("status")) or "PENDING").upper(),
                message=_text(row.get("message")),
                entrypoint=_text(row.get("entrypoint")),
            )
        )
    return jobs


def _dead_jobs(jobs: list[RayJobInfo], raw_state_jobs: object) -> set[str]:
    dead = {job.job_id for job in jobs if job.job_id and job.status in _TERMINAL_JOB_STATES}
    for row in _rows(raw_state_jobs):
        job_id = _text(row.get("job_id"))
        if job_id and (
            row.get("is_dead") is True or (_text(row.get("status")) or "") in _TERMINAL_JOB_STATES
        ):
            dead.add(job_id)
    return dead


# --- the whole ------------------------------------------------------------------------------------


def _version(raw: object) -> str | None:
    if isinstance(raw, str):
        return raw or None
    return _text(dig(raw, "ray_version")) or _text(dig(raw, "data", "ray_version"))


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
    status = _Status(responses)
    names = _Names()
    actor_rows = _rows(responses.get("actors"))
    task_rows = _rows(responses.get("pending_tasks"))
    pg_rows = _rows(responses.get("placement_groups"))
    for row in _rows(responses.get("nodes")):
        names.learn(_mapping(_field(row, "resources_total")))
    for row in actor_rows + task_rows:
        names.learn(_mapping(_field(row, "required_resources")))
    for row in pg_rows:
        for bundle in _list(row.get("bundles")):
            names.learn(_mapping(_field(bundle, "unit_resources")))
    names.learn(status.shapes())
    for key in ("nodes", "nodes_summary"):
        for text in _summary_rows(responses.get(key))[1].values():
            names.learn(_text_usage(str(text))[1])
    names.learn(_mapping(_field(status.report, "node_type_mapping")).values())
    names.learn(_mapping(_field(status.load, "node_type_mapping")).values())

    jobs = _jobs(responses.get("jobs"))
    dead_jobs = _dead_jobs(jobs, responses.get("state_jobs"))
    demands = _structured_demands(status) if status.structured is not None else list(status.parsed.demands)
    placement_groups = [
        _strategy_from_demands(_placement_group(row, names, dead_jobs), demands, row.get("strategy"))
        for row in pg_rows
    ]
    shapes, groups = _infeasible_events(responses.get("cluster_events"))
    demands = _mark_infeasible(demands, shapes, groups + _infeasible_groups(pg_rows, names))

    nodes = _nodes(responses, status, names)
    if status.structured is not None:
        used, totals = _usage(_field(status.load, "usage"), names)
    else:
        used, totals = dict(status.parsed.used), dict(status.parsed.totals)
    alive = sum(1 for node in nodes if node.alive)
    return RayState(
        version=_version(responses.get("version")),
        nodes=nodes,
        totals=totals,
        used=used,
        node_count=alive if nodes else (status.parsed.node_count if status.structured is None else None),
        node_groups=_node_groups(status, names),
        pending_nodes=_pending_nodes(status, names),
        recent_failures=_recent_failures(status, names),
        demands=demands,
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
