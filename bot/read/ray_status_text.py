"""``ray status`` text, in every layout Ray has printed: one reader for pastes and the live dashboard.

The CLI prints it, ``/api/cluster_status?format=1`` returns it, and users paste it. The layouts, from
Ray's own formatters (autoscaler v1 ``format_info_string``, v2 ``ClusterStatusFormatter``):

* Ray 1.0-1.2 summary: ``Cluster status: 3 nodes`` with `` - ResourceUsage: 2.0/12.0 CPU, ...``
  and ``Worker node types:`` `` - gpu_worker: 1``.
* ``======== Autoscaler status: <time> ========``, then ``Node status`` with ``Healthy:`` (1.x) or
  ``Active:``/``Idle:`` (2.x; ``Idle:`` missing from the legacy layout), lines `` <count> <node type>``
  (``node_<hex>`` per node when no cluster config names types), ``Pending:`` (`` <type>, N
  launching``, `` <ip or instance>: <type>, <status>``) and ``Recent failures:`` (`` <type>:
  NodeTerminated (ip: <ip>)``, v2 ``(instance_id: ...)``, `` <type>: <category> (latest_attempt:
  HH:MM:SS)[ - <details>]`` with categories such as ``LaunchFailed`` or a cloud's
  ``InsufficientInstanceCapacity``).
* ``Resources`` with ``Usage:`` (1.x) / ``Total Usage:``: `` used/total name`` with an optional
  `` (x used of y reserved in placement groups)``; memory as ``0.00/33.528 GiB memory`` (1.x) or
  ``1.50GiB/64.00GiB memory`` (2.x; ``0B`` when nothing); ``node:`` resources are never printed and
  ``accelerator_type:`` ones only with ``-v``.
* Constraints that ``ray.autoscaler.sdk.request_resources()`` set, under ``Constraints:``, then
  ``Total Constraints:``, now ``From request_resources:`` (Ray renamed it twice in 2025): lines
  `` {'CPU': 4}: 2 from request_resources()`` or `` (none)``. Before that section existed the same
  lines sat among the demands as `` {'CPU': 16}: 100+ from request_resources()``. They are the
  autoscaler's floor, not work that waits: they are read as constraints, never as demands.
* Demands: ``Demands:`` / ``Total Demands:`` / ``Pending Demands:``, lines `` {'GPU': 1.0}: 2+
  pending tasks/actors`` (`` (1+ using placement groups)`` after it when inside a group) and
  `` {'CPU': 1.0} * 2, {'GPU': 1.0} * 1 (PACK): 1+ pending placement groups``.
* ``-v``: per node ``Node: <node id or ip> [(<type>)]`` (v2: ``Node: <instance id> (<type>)`` and
  `` Id: <node id>``), `` Idle: <ms> ms``, `` Usage:`` and `` Activity:`` (free text). v1 prints one
  block per entry of its per-node report, keyed by IP unless the provider keys nodes by id (the
  read-only provider of a ``ray start`` cluster does), and none with
  ``AUTOSCALER_REPORT_PER_NODE_STATUS=0``: the blocks can be fewer than the nodes counted (Ray's
  own example prints 22 healthy nodes and one block).
* A cluster with no node at all: `` (no active nodes)`` / `` (no idle nodes)`` and an empty
  ``Total Usage:``. That is a count of 0 (and so 0 GPUs), not a status that says nothing.

People paste it with indentation lost, cut anywhere, with a prefix on every line (``0: `` from
``srun -l``), flattened onto one line, or with log lines mixed in. Lines are read one by one: a line
that fits nothing is handed back in ``leftover`` and costs only itself. The node count comes from
the ``Node status`` counts; the ``-v`` blocks count only where those are missing (a cut paste), and
never lower a count the summary gives (``RayState.nodes_complete`` says whether they are all).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from bot.read.ray_notation import (
    MAX_BUNDLES,
    base_resource,
    find_maps,
    find_usages,
    fold_resources,
    is_synthetic_node_type,
    node_ip_from_resources,
    parse_amount,
)
from bot.snapshot.ray import Demand, RayNode, ResourceConstraint

HEADER = re.compile(r"=+\s*(?:Autoscaler|Cluster) status\b[^=]*=*")
LEGACY_HEADER = re.compile(r"^Cluster status:\s*(\d+)\s+nodes?\b")
TITLES = ("node status", "resources")
TIMING = ("gcs request time", "node provider non_terminated_nodes time", "autoscaler iteration time")
_DASHES = re.compile(r"^[-=]{3,}$")
_IPV4 = re.compile(r"\b(\d{1,3}(?:\.\d{1,3}){3})\b")
_HEX_ID = re.compile(r"^[0-9a-fA-F]{16,}$")
_COUNT_NAME = re.compile(r"(?<!\S)(\d{1,9})\s+([^\s,:()]+)(?=\s|$)")
_MAPS = r"\{[^{}]*\}(?:\s*\*\s*\d+)?(?:\s*,\s*\{[^{}]*\}(?:\s*\*\s*\d+)?)*"
_DEMAND = re.compile(
    rf"(?P<maps>{_MAPS})\s*(?:\((?P<strategy>[A-Z_]+)\))?\s*:\s*(?P<count>\d+)\+?\s+"
    r"(?P<what>pending tasks(?:/actors)?|pending actors|pending placement groups?"
    r"|from request_resources(?:\(\))?)"
    r"(?:\s*\((?P<in_group>\d+)\+? using placement groups?\))?"
)
_TYPED_NODES = re.compile(r"^(\d+)\s+node\(s\) with resources:\s*(\{.*)$")
_IDLE_MS = re.compile(r"^Idle:\s*(\d+)\s*ms\b")
_NODE_ID_LINE = re.compile(r"^Id:\s*(\S+)")
_LEGACY_ITEM = re.compile(r"^-\s*([\w.-]+):\s*(\d+)\s*$")
_EMPTY = re.compile(r"^\((?:no .*|none)\)$")
# What a node section prints when it has no node (``(no active nodes)``, ``(no idle nodes)``).
_NO_NODES = re.compile(r"^\(no \w+ nodes\)$")
# After a usage item: `` (3.0 used of 4.0 reserved in placement groups)`` (both formatters, 1.x on).
_RESERVED = re.compile(
    r"^\s*\(\s*([\d.]+)\s*([KMGTPE]i?B|B)?\s+used of\s+([\d.]+)\s*([KMGTPE]i?B|B)?"
    r"\s+reserved in placement groups?\)"
)
# A line this long that holds several section titles is a status whose newlines were lost.
_FLATTENED = 200

# Section titles (lower case, without the colon) and what their lines hold.
SECTIONS = {
    "healthy": "nodes",
    "active": "nodes",
    "idle": "nodes",
    "pending": "pending",
    "recent failures": "failures",
    "usage": "usage",
    "total usage": "usage",
    "demands": "demands",
    "total demands": "demands",
    "pending demands": "demands",
    "resource demands": "demands",
    "total constraints": "constraints",
    "constraints": "constraints",
    "from request_resources": "constraints",
    "worker node types": "legacy_types",
    "activity": "activity",
}
# Where a status was flattened onto one line, these mark where its lines began. Longer titles come
# first so that ``Total Usage:`` is not cut at ``Usage:``.
_INLINE_TITLES = re.compile(
    r"(?:=+\s*(?:Autoscaler|Cluster) status:[^=]*=+|Node status|Resources(?=\s+-{3,}|\s+(?:Total )?Usage:)"
    r"|Recent failures:|Total Usage:|Usage:|From request_resources:|Pending Demands:|Total Demands:"
    r"|Total Constraints:|Constraints:|Demands:|Healthy:|Active:|Idle:(?!\s*\d+\s*ms)|Pending:|Activity:"
    r"|Node: |Id: |Idle: \d+ ms|-{3,})"
)


def section_of(stripped: str) -> str | None:
    """The kind of a section title line (``Total Usage:``), or None when it is not one."""
    if stripped.endswith(":"):
        return SECTIONS.get(stripped[:-1].strip().lower())
    return None


def is_header(stripped: str) -> bool:
    return bool(HEADER.match(stripped) or LEGACY_HEADER.match(stripped))


@dataclass
class NodeBlock:
    """One ``Node:`` block of ``ray status -v``."""

    header: str
    node_id: str | None = None
    totals: dict[str, float] = field(default_factory=dict)
    used: dict[str, float] = field(default_factory=dict)
    idle: bool = False
    extra_ips: list[str] = field(default_factory=list)
    # ``(x used of y reserved in placement groups)`` on this node: the unused rest is not free.
    reserved: dict[str, float] = field(default_factory=dict)
    reserved_used: dict[str, float] = field(default_factory=dict)

    def to_ray_node(self) -> RayNode:
        ident, _, paren = self.header.strip().partition("(")
        ident = ident.strip()
        label = paren.rstrip(")").strip() or None
        node_ip = label if label and _IPV4.fullmatch(label) else None
        node_type = label if label and node_ip is None else None
        if node_type and is_synthetic_node_type(node_type):
            node_type = None  # a plain `ray start` cluster names each node's type after the node
        if node_ip is None and _IPV4.fullmatch(ident):
            node_ip = ident
        node_ip = node_ip or node_ip_from_resources(self.totals) or next(iter(self.extra_ips), None)
        node_id = self.node_id or (ident if ident and ident != node_ip else None)
        available = {
            name: total
            - self.used.get(name, 0.0)
            - max(self.reserved.get(name, 0.0) - self.reserved_used.get(name, 0.0), 0.0)
            for name, total in self.totals.items()
        }
        is_head = "node:__internal_head__" in self.totals or bool(node_type and "head" in node_type.lower())
        return RayNode(
            node_id=node_id or None,
            node_ip=node_ip,
            state="IDLE" if self.idle else "ALIVE",
            is_head=is_head,
            node_type=node_type,
            resources_total=dict(self.totals),
            resources_available=available if self.totals else None,
        )


@dataclass
class RayStatusText:
    """What one ``ray status`` text says, in snapshot units; ``None``/empty where it says nothing."""

    node_count: int | None = None
    node_groups: dict[str, int] = field(default_factory=dict)
    pending_nodes: list[str] = field(default_factory=list)
    recent_failures: list[str] = field(default_factory=list)
    totals: dict[str, float] = field(default_factory=dict)
    used: dict[str, float] = field(default_factory=dict)
    demands: list[Demand] = field(default_factory=list)
    constraints: list[ResourceConstraint] = field(default_factory=list)
    nodes: list[RayNode] = field(default_factory=list)
    # What placement groups reserve of each resource, and how much of that their work uses: the
    # reserved rest is free only to work inside those groups.
    reserved: dict[str, float] = field(default_factory=dict)
    reserved_used: dict[str, float] = field(default_factory=dict)
    # ``Usage:`` lines were read: without ``-v`` Ray leaves out ``accelerator_type:`` resources, so
    # their absence from ``totals`` says nothing unless per-node blocks were printed.
    verbose: bool = False
    # Something this grammar knows was read (a count, a usage, a demand...), not just titles.
    recognised: bool = False
    leftover: list[str] = field(default_factory=list)


def placement_group_demand(
    bundles: Sequence[dict[str, float]],
    strategy: str | None,
    count: int,
    source_text: str | None = None,
    infeasible: bool = False,
) -> Demand:
    """A pending placement group: its bundles, and as ``shape`` what the whole group asks for."""
    total: dict[str, float] = {}
    for bundle in bundles:
        for key, value in bundle.items():
            total[key] = total.get(key, 0.0) + value
    return Demand(
        kind="placement_group",
        shape=total,
        bundles=[dict(b) for b in bundles],
        strategy=strategy.upper() if strategy else None,
        count=count,
        source_text=source_text,
        infeasible=infeasible,
    )


def _count(text: str) -> int:
    return min(int(text), 10**12) if text.isdecimal() and len(text) <= 13 else 1


def demand_from(match: re.Match[str]) -> Demand | ResourceConstraint | None:
    """The demand (or ``request_resources()`` constraint) one ``_DEMAND`` match describes; None when
    its maps are empty or unreadable."""
    count = max(_count(match.group("count")), 1)
    what = match.group("what")
    text = match.group(0).strip()
    maps = find_maps(match.group("maps"))
    if what.startswith("from request_resources"):
        shape = fold_resources(maps[0].shape.items()) if maps else {}
        return ResourceConstraint(shape=shape, count=count, source_text=text) if shape else None
    if what.startswith("pending placement group"):
        bundles: list[dict[str, float]] = []
        for found in maps[:MAX_BUNDLES]:
            shape = fold_resources(found.shape.items())
            if shape:
                bundles.extend(dict(shape) for _ in range(min(found.times or 1, MAX_BUNDLES - len(bundles))))
        return placement_group_demand(bundles, match.group("strategy"), count, text) if bundles else None
    shape = fold_resources(maps[0].shape.items()) if maps else {}
    if not shape:
        return None
    in_group = bool(match.group("in_group"))
    return Demand(
        shape=shape, count=count, kind="task_or_actor", source_text=text, in_placement_group=in_group
    )


def find_entries(text: str) -> list[Demand | ResourceConstraint]:
    """Every demand or constraint line inside ``text`` (one section line, or several run together)."""
    return [entry for match in _DEMAND.finditer(text) if (entry := demand_from(match))]


def find_demands(text: str) -> list[Demand]:
    """Every demand line inside ``text``; ``request_resources()`` constraints are no demand."""
    return [entry for entry in find_entries(text) if isinstance(entry, Demand)]


def node_usage(text: str) -> tuple[dict[str, float], dict[str, float]]:
    """(used, total) from ``used/total name`` lines, as ``/nodes?view=summary`` gives them per node."""
    used: dict[str, float] = {}
    total: dict[str, float] = {}
    for line in text.splitlines():
        for usage in find_usages(line):
            used.update(fold_resources([(usage.name, usage.first)]))
            total.update(fold_resources([(usage.name, usage.second)]))
    return used, total


def _common_prefix(lines: Sequence[str]) -> str:
    """The prefix every line of the status carries (``0: `` from ``srun -l``), read off its header."""
    for line in lines[:50]:
        match = HEADER.search(line)
        if match:
            prefix = line[: match.start()]
            if prefix.strip() and len(prefix) <= 40 and "=" not in prefix:
                return prefix.rstrip()
            return ""
    return ""


def _unflatten(line: str) -> list[str]:
    """A status run onto one line, cut back into its lines at the section titles."""
    starts = [m.start() for m in _INLINE_TITLES.finditer(line)]
    if len(starts) < 3:
        return [line]
    pieces = []
    edges = [0, *starts, len(line)]
    for begin, end in itertools.pairwise(edges):
        piece = line[begin:end].strip()
        if not piece:
            continue
        # A title and the entries that followed it on the same line become title + entry lines.
        for title in ("Node status", "Resources"):
            if piece.startswith(title) and piece != title:
                pieces += [title, piece[len(title) :].strip()]
                break
        else:
            colon = piece.find(":")
            head = piece[: colon + 1]
            if colon > 0 and section_of(head) and piece[colon + 1 :].strip():
                pieces += [head, piece[colon + 1 :].strip()]
            else:
                pieces.append(piece)
    return pieces


def _lines(lines: Iterable[str]) -> list[str]:
    raw = list(lines)
    prefix = _common_prefix(raw)
    out: list[str] = []
    for line in raw:
        text = line[len(prefix) :] if prefix and line.startswith(prefix) else line
        out.extend(_unflatten(text) if len(text) > _FLATTENED else [text])
    return out


class _Reader:
    def __init__(self) -> None:
        self.status = RayStatusText()
        self.blocks: list[NodeBlock] = []
        self.section: str | None = None
        self.in_node = False
        self.counted = False

    def add_usage(
        self,
        text: str,
        totals: dict[str, float],
        used: dict[str, float],
        reserved: tuple[dict[str, float], dict[str, float]] | None = None,
    ) -> bool:
        """``used/total name`` items (one per line, or several where newlines were lost)."""
        read = False
        for usage in find_usages(text):
            name = base_resource(usage.name)
            if name is None or usage.name != name:
                continue  # bookkeeping of a placement group, already inside its base resource
            used[name] = usage.first
            totals[name] = usage.second
            read = True
            match = _RESERVED.match(text[usage.end :]) if reserved is not None else None
            if match and reserved is not None:
                in_use = parse_amount(match.group(1), match.group(2) or match.group(4))
                held = parse_amount(match.group(3), match.group(4))
                if in_use is not None and held is not None:
                    reserved[0][name], reserved[1][name] = held, in_use
        return read

    def add_typed_nodes(self, match: re.Match[str]) -> None:
        """``2 node(s) with resources: {...}`` (1.x without node types): counts and node totals."""
        count = _count(match.group(1))
        self.status.node_count = (self.status.node_count or 0) + count
        self.counted = True
        maps = find_maps(match.group(2))
        totals = fold_resources(maps[0].shape.items()) if maps else {}
        if totals:
            for _ in range(min(count, 100)):
                self.blocks.append(NodeBlock(header=node_ip_from_resources(totals) or "", totals=totals))

    def add_nodes(self, stripped: str) -> bool:
        pairs = _COUNT_NAME.findall(stripped)
        if not pairs or " ".join(f"{c} {n}" for c, n in pairs) != " ".join(stripped.split()):
            return False
        for count_text, name in pairs:
            count = _count(count_text)
            self.status.node_count = (self.status.node_count or 0) + count
            if not is_synthetic_node_type(name):
                self.status.node_groups[name] = self.status.node_groups.get(name, 0) + count
        self.counted = True
        return True

    def read(self, line: str) -> bool:
        """Take one line; False when it says nothing this grammar knows."""
        stripped = line.strip()
        status = self.status
        if not stripped or _DASHES.match(stripped) or HEADER.match(stripped):
            return True
        lower = stripped.lower()
        if legacy := LEGACY_HEADER.match(stripped):
            status.node_count = _count(legacy.group(1))
            self.counted = True
            self.section = None
            return True
        if lower in TITLES or lower.startswith(TIMING):
            self.section, self.in_node = None, False
            return True
        if stripped.startswith("Node:"):
            self.blocks.append(NodeBlock(header=stripped[len("Node:") :]))
            self.section, self.in_node = None, True
            return True
        if self.in_node and (idle := _IDLE_MS.match(stripped)):
            self.blocks[-1].idle = _count(idle.group(1)) > 0
            return True
        if self.in_node and (ident := _NODE_ID_LINE.match(stripped)):
            self.blocks[-1].node_id = ident.group(1)
            return True
        new_section = section_of(stripped)
        if new_section is not None:
            if not self.in_node or new_section in {"usage", "activity"}:
                self.section = new_section
            else:
                self.section, self.in_node = new_section, False
            return True
        if stripped.startswith("- ResourceUsage:"):
            return self.add_usage(
                stripped[len("- ResourceUsage:") :].replace(",", " "), status.totals, status.used
            )
        if _EMPTY.match(stripped):
            if self.section == "nodes" and _NO_NODES.match(stripped):
                # The section says it has no node: a count of 0, where saying nothing is no count.
                status.node_count = status.node_count or 0
                self.counted = True
            return True
        section = self.section
        if section == "activity":
            return True
        if self.in_node and section == "usage":
            block = self.blocks[-1]
            if self.add_usage(stripped, block.totals, block.used, (block.reserved, block.reserved_used)):
                return True
            if ip := _IPV4.search(stripped):
                block.extra_ips.append(ip.group(1))
            return False
        if typed := _TYPED_NODES.match(stripped):
            self.add_typed_nodes(typed)
            return True
        if section == "nodes":
            return self.add_nodes(stripped)
        if section == "legacy_types" and (match := _LEGACY_ITEM.match(stripped)):
            status.node_groups[match.group(1)] = _count(match.group(2))
            return True
        if section == "pending":
            status.pending_nodes.append(stripped)
            return True
        if section == "failures":
            status.recent_failures.append(stripped)
            return True
        if section == "usage":
            return self.add_usage(
                stripped, status.totals, status.used, (status.reserved, status.reserved_used)
            )
        if section in {"demands", "constraints"} or stripped.startswith("{"):
            entries = find_entries(stripped)
            for entry in entries:
                if isinstance(entry, ResourceConstraint):
                    status.constraints.append(entry)
                else:
                    status.demands.append(entry)
            return bool(entries)
        return False

    def finish(self) -> RayStatusText:
        status = self.status
        status.nodes = [block.to_ray_node() for block in self.blocks]
        status.verbose = any(block.header.strip() for block in self.blocks)
        if not self.counted and self.blocks:
            status.node_count = len(self.blocks)
        status.recognised = bool(
            status.node_count is not None
            or status.totals
            or status.demands
            or status.constraints
            or status.node_groups
            or status.pending_nodes
            or status.recent_failures
        )
        return status


def parse_status_text(lines: Iterable[str]) -> RayStatusText:
    """Read one ``ray status`` text (its lines); never raises, whatever the text."""
    reader = _Reader()
    for line in _lines(lines):
        if not reader.read(line):
            reader.status.leftover.append(line)
    return reader.finish()
