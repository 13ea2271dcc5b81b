"""``/api/cluster_status``: what the autoscaler says of demands, node groups, launches and failures.

Autoscaler v1 publishes a structured status that ``/api/cluster_status`` returns; v2 (KubeRay's
autoscaler v2, ``ray up`` since 2.4x) publishes nothing there and only the ``?format=1`` text (what
``ray status`` prints) carries its demands, so that text is read too, by the same reader as a pasted
one (:mod:`bot.read.ray_status_text`). Each reader here takes the structured status where there
is one and the text otherwise.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from bot.read.kubernetes_json import dig
from bot.read.ray_fields import (
    ResourceNames,
    as_count,
    as_int,
    as_list,
    as_number,
    as_text,
    field,
    resources,
)
from bot.read.ray_notation import MAX_BUNDLES, is_synthetic_node_type
from bot.read.ray_status_text import RayStatusText, parse_status_text, placement_group_demand
from bot.snapshot.ray import Demand, ResourceConstraint


class ClusterStatus:
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
        status = field(data, "cluster_status")
        if isinstance(status, str):
            self.text = self.text or status
        elif isinstance(status, Mapping):
            self.structured = self.structured or status
        elif field(data, "load_metrics_report") is not None:
            # The autoscaler's own JSON (from GCS), without the dashboard around it.
            self.structured = self.structured or data
        self.error = self.error or as_text(field(data, "autoscaling_error"))

    @property
    def load(self) -> Mapping[str, Any]:
        value = field(self.structured, "load_metrics_report")
        return value if isinstance(value, Mapping) else {}

    @property
    def report(self) -> Mapping[str, Any]:
        value = field(self.structured, "autoscaler_report")
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
            for entry in as_list(field(self.load, key)):
                if isinstance(entry, list) and entry and isinstance(entry[0], Mapping):
                    yield from entry[0]
        for entry in as_list(field(self.load, "pg_demand")):
            pg = entry[0] if isinstance(entry, list) and entry else None
            for bundle in as_list(dig(pg, "bundles")):
                if isinstance(bundle, list) and bundle and isinstance(bundle[0], Mapping):
                    yield from bundle[0]


def _shape_counts(raw: object) -> list[tuple[dict[str, float], int]]:
    """``[[{"GPU": 4.0}, 1], ...]`` (also ``[{"GPU": 4.0}, ...]``)."""
    found = []
    for entry in as_list(raw):
        if isinstance(entry, list) and entry and isinstance(entry[0], Mapping):
            found.append((resources(entry[0]), as_count(entry[1] if len(entry) > 1 else 1)))
        elif isinstance(entry, Mapping):
            found.append((resources(entry), 1))
    return found


def structured_demands(status: ClusterStatus) -> list[Demand]:
    """The demands of the structured (v1) status: tasks and actors, and placement groups."""
    load = status.load
    demands = [
        Demand(shape=shape, count=count, kind="task_or_actor")
        for shape, count in _shape_counts(field(load, "resource_demand"))
        if shape
    ]
    for entry in as_list(field(load, "pg_demand")):
        pg = entry[0] if isinstance(entry, list) and entry else entry
        if not isinstance(pg, Mapping):
            continue
        bundles = [
            bundle
            for shape, times in _shape_counts(pg.get("bundles"))
            for bundle in [shape] * min(times, MAX_BUNDLES)
        ]
        if bundles:
            demands.append(
                placement_group_demand(
                    bundles,
                    as_text(pg.get("strategy")),
                    as_count(entry[1] if isinstance(entry, list) and len(entry) > 1 else 1),
                )
            )
    return demands


def structured_constraints(status: ClusterStatus) -> list[ResourceConstraint]:
    """``request_demand`` of the structured (v1) status: what ``request_resources()`` asked the
    autoscaler to keep room for, which is no work waiting."""
    return [
        ResourceConstraint(shape=shape, count=count)
        for shape, count in _shape_counts(field(status.load, "request_demand"))
        if shape
    ]


def node_groups(status: ClusterStatus, names: ResourceNames) -> dict[str, int]:
    groups: dict[str, int] = {}
    if status.structured is not None:
        for key in ("active_nodes", "idle_nodes"):
            counts = field(status.report, key)
            if isinstance(counts, Mapping):
                for name, count in counts.items():
                    amount = as_int(count)
                    if isinstance(name, str) and amount is not None:
                        real = names.restore(name)
                        groups[real] = groups.get(real, 0) + amount
    else:
        groups = dict(status.parsed.node_groups)
    return {name: count for name, count in groups.items() if not is_synthetic_node_type(name)}


def pending_nodes(status: ClusterStatus, names: ResourceNames) -> list[str]:
    if status.structured is None:
        return list(status.parsed.pending_nodes)
    pending = []
    for entry in as_list(field(status.report, "pending_nodes")):
        parts = [p for item in as_list(entry) if (p := as_text(item))]
        if parts:
            pending.append(f"{parts[0]}: {', '.join(parts[1:])}" if len(parts) > 1 else parts[0])
    launches = field(status.report, "pending_launches")
    if isinstance(launches, Mapping):
        for name, count in launches.items():
            if isinstance(name, str) and (amount := as_int(count)):
                pending.append(f"{names.restore(name)}, {amount} launching")
    return pending


def recent_failures(status: ClusterStatus, names: ResourceNames) -> list[str]:
    failures = [] if status.structured is not None else list(status.parsed.recent_failures)
    for entry in as_list(field(status.report, "failed_nodes")):
        parts = [p for item in as_list(entry) if (p := as_text(item))]
        if len(parts) >= 2:
            failures.append(f"{parts[1]}: NodeTerminated (ip: {parts[0]})")
    availability = field(field(status.report, "node_availability_summary"), "node_availabilities")
    if isinstance(availability, Mapping):
        for name, record in availability.items():
            if not isinstance(name, str) or field(record, "is_available") is not False:
                continue
            info = field(record, "unavailable_node_information")
            category = as_text(field(info, "category")) or "Unavailable"
            description = as_text(field(info, "description"))
            failures.append(
                f"{names.restore(name)}: {category}" + (f" - {description}" if description else "")
            )
    if status.error:
        failures.append(status.error)
    return failures


def usage_pairs(raw: object, names: ResourceNames) -> tuple[dict[str, float], dict[str, float]]:
    """(used, total) from ``{"GPU": [used, total], ...}`` (the whole cluster's, or one node's)."""
    used: dict[str, float] = {}
    total: dict[str, float] = {}
    if not isinstance(raw, Mapping):
        return used, total
    for key, pair in raw.items():
        values = as_list(pair)
        if not isinstance(key, str) or len(values) < 2:
            continue
        spent, whole = as_number(values[0]), as_number(values[1])
        if spent is None or whole is None:
            continue
        for target, amount in ((used, spent), (total, whole)):
            target.update(resources({key: amount}, names))
    return used, total
