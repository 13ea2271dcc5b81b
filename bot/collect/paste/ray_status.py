"""``ray status`` output, in every layout Ray has printed since 1.x.

Layouts seen in the wild:

* Ray 1.0-1.2 autoscaler summary: ``Cluster status: 2 nodes`` with `` - ResourceUsage: 0.0/4.0 CPU,
  0.0 GiB/5.09 GiB memory``.
* Ray 1.x-2.x: ``======== Autoscaler status: <time> ========`` (``Cluster status`` in some
  versions), ``Node status`` with ``Healthy:`` (v1 autoscaler, lines `` 1 head-group``) or
  ``Active:``/``Idle:`` (lines `` 1 node_<hex>`` or group names), ``Pending:``, ``Recent
  failures:``; ``Resources`` with ``Usage:`` or ``Total Usage:``; ``Demands:``/``Total Demands:``/
  ``Pending Demands:`` and ``Total Constraints:``.
* ``ray status -v``: the same plus one block per node, ``Node: <id> [(<ip or type>)]`` followed by
  `` Usage:`` and `` Activity:``.

People paste it with indentation lost, cut at any line, and with autoscaler log lines mixed in;
lines this module does not understand are handed back so the message reader still sees them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from bot.collect.paste.counts import count_or
from bot.collect.paste.found import Found, RayStatusFigures
from bot.collect.paste.ray_resources import find_maps, node_ip_from_resources, parse_usage
from bot.snapshot.ray import Demand, RayNode

FORMAT = "ray status"

_HEADER = re.compile(r"^\s*=+\s*(?:Autoscaler|Cluster) status\b")
_LEGACY_HEADER = re.compile(r"^\s*Cluster status:\s*(\d+)\s+nodes?\b")
_DASHES = re.compile(r"^\s*[-=]{3,}\s*$")
_IPV4 = re.compile(r"\b(\d{1,3}(?:\.\d{1,3}){3})\b")
_NODE_ID = re.compile(r"^node_[0-9a-f]{8,}$")
_COUNT_NAME = re.compile(r"^(\d+)\s+(\S+)\s*$")
_TASKS = re.compile(r"^(\{[^{}]*\})\s*:\s*(\d+)\+?\s+pending tasks")
_PLACEMENT = re.compile(r"^(.*?)\(([A-Z_]+)\)\s*:\s*(\d+)\+?\s+pending placement groups?")
_REQUEST = re.compile(r"^(\{[^{}]*\})\s*:\s*(\d+)\+?\s+from request_resources")
_DEMAND_LINE = re.compile(r"^\{[^{}]*\}\s*[:*]")
_LEGACY_ITEM = re.compile(r"^-\s*([\w.-]+):\s*(\d+)\s*$")

# Section titles (lower case, without the colon) and what their lines hold.
_SECTIONS = {
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
    "total constraints": "demands",
    "constraints": "demands",
    "worker node types": "legacy_types",
    "activity": "skip",
}
_TITLES = {"node status", "resources"}
_TIMING = ("gcs request time", "node provider non_terminated_nodes time", "autoscaler iteration time")


def is_start(lines: Sequence[str], i: int) -> bool:
    line = lines[i]
    if _HEADER.match(line) or _LEGACY_HEADER.match(line):
        return True
    title = line.strip().lower()
    if title in _TITLES:
        following = lines[i + 1] if i + 1 < len(lines) else ""
        return bool(_DASHES.match(following))
    return False


def _section_of(stripped: str) -> str | None:
    if stripped.endswith(":"):
        return _SECTIONS.get(stripped[:-1].strip().lower())
    return None


def _belongs(line: str) -> bool:
    """Whether an unindented line can still be part of a ``ray status`` block."""
    stripped = line.strip()
    lower = stripped.lower()
    return bool(
        _HEADER.match(line)
        or _LEGACY_HEADER.match(line)
        or _DASHES.match(line)
        or lower in _TITLES
        or _section_of(stripped)
        or lower.startswith(_TIMING)
        or stripped.startswith(("Node: ", "(no ", "- "))
        or _DEMAND_LINE.match(stripped)
        or parse_usage(stripped)
        or _COUNT_NAME.match(stripped)
        or lower.startswith("idle:")
    )


def extent(lines: Sequence[str], start: int) -> int:
    end = start + 1
    last_content = start
    # Pending nodes and failures are free text; they belong while their list runs unbroken. An
    # indented line belongs when it continues the lines above it; after a blank line it must look
    # like status content, or an indented snippet pasted below would be swallowed.
    free_text = False
    while end < len(lines):
        line = lines[end]
        if not line.strip():
            free_text = False
            end += 1
            continue
        section = _section_of(line.strip())
        continues = line[:1].isspace() and end == last_content + 1
        if section is not None:
            free_text = section in {"pending", "failures"}
        elif not (continues or free_text or _belongs(line.strip())):
            break
        last_content = end
        end += 1
    return last_content + 1


@dataclass
class _NodeBlock:
    header: str
    totals: dict[str, float] = field(default_factory=dict)
    used: dict[str, float] = field(default_factory=dict)
    idle: bool = False
    extra_ips: list[str] = field(default_factory=list)

    def to_ray_node(self) -> RayNode:
        rest = self.header.strip()
        ident, _, paren = rest.partition("(")
        ident = ident.strip()
        label = paren.rstrip(")").strip() or None
        node_ip = None
        node_type = None
        if label and _IPV4.fullmatch(label):
            node_ip = label
        elif label:
            node_type = label
        if node_ip is None and _IPV4.fullmatch(ident):
            node_ip = ident
        node_ip = node_ip or node_ip_from_resources(self.totals) or next(iter(self.extra_ips), None)
        available = {name: total - self.used.get(name, 0.0) for name, total in self.totals.items()}
        is_head = "node:__internal_head__" in self.totals or bool(node_type and "head" in node_type.lower())
        return RayNode(
            node_id=ident or None,
            node_ip=node_ip,
            state="IDLE" if self.idle else "ALIVE",
            is_head=is_head,
            node_type=node_type,
            resources_total=dict(self.totals),
            resources_available=available if self.totals else None,
        )


def _demand(stripped: str) -> Demand | None:
    if match := _TASKS.match(stripped):
        maps = find_maps(match.group(1))
        if maps and maps[0].shape:
            return Demand(
                shape=maps[0].shape,
                count=count_or(match.group(2), 1),
                kind="task_or_actor",
                source_text=stripped,
            )
    if match := _REQUEST.match(stripped):
        maps = find_maps(match.group(1))
        if maps and maps[0].shape:
            return Demand(
                shape=maps[0].shape, count=count_or(match.group(2), 1), kind="request", source_text=stripped
            )
    if match := _PLACEMENT.match(stripped):
        bundles: list[dict[str, float]] = []
        for found in find_maps(match.group(1))[:1000]:
            if found.shape:
                bundles.extend(dict(found.shape) for _ in range(min(found.times or 1, 1000)))
        if bundles:
            total: dict[str, float] = {}
            for bundle in bundles:
                for key, value in bundle.items():
                    total[key] = total.get(key, 0.0) + value
            return Demand(
                shape=total,
                count=count_or(match.group(3), 1),
                kind="placement_group",
                bundles=bundles,
                strategy=match.group(2),
                source_text=stripped,
            )
    return None


def _add_usage(text: str, totals: dict[str, float], used: dict[str, float]) -> bool:
    usage = parse_usage(text)
    if usage is None:
        return False
    used[usage.name] = usage.first
    totals[usage.name] = usage.second
    return True


def _merged(earlier: RayStatusFigures | None, later: RayStatusFigures) -> RayStatusFigures:
    """A later block wins field by field; a status split by other text keeps both halves."""
    if earlier is None:
        return later
    return RayStatusFigures(
        totals=later.totals or earlier.totals,
        used=later.used or earlier.used,
        node_count=later.node_count if later.node_count is not None else earlier.node_count,
        node_groups=later.node_groups or earlier.node_groups,
        pending_nodes=later.pending_nodes or earlier.pending_nodes,
        recent_failures=later.recent_failures or earlier.recent_failures,
    )


def parse(lines: Sequence[str], found: Found) -> list[str]:
    """Add the figures of one ``ray status`` block to ``found``; return the lines not understood."""
    figures = RayStatusFigures()
    leftover: list[str] = []
    blocks: list[_NodeBlock] = []
    section: str | None = None
    counted = False
    for line in lines:
        stripped = line.strip()
        if not stripped or _DASHES.match(stripped) or _HEADER.match(stripped):
            continue
        lower = stripped.lower()
        if legacy := _LEGACY_HEADER.match(stripped):
            figures.node_count = count_or(legacy.group(1), 0)
            counted = True
            section = None
            continue
        if lower in _TITLES or lower.startswith(_TIMING):
            section = None
            continue
        if stripped.startswith("Node:"):
            blocks.append(_NodeBlock(header=stripped[len("Node:") :]))
            section = "node"
            continue
        if blocks and section and section.startswith("node") and lower.startswith("idle:"):
            blocks[-1].idle = True
            continue
        new_section = _section_of(stripped)
        if new_section is not None:
            section = (
                "node_" + new_section if blocks and section and section.startswith("node") else new_section
            )
            continue
        if stripped.startswith("- ResourceUsage:"):
            for item in stripped[len("- ResourceUsage:") :].split(","):
                _add_usage(item, figures.totals, figures.used)
            continue
        if stripped.startswith("(no ") or section in {"skip", "node_skip", "node_activity"}:
            continue
        if section == "nodes" and (match := _COUNT_NAME.match(stripped)):
            count, name = count_or(match.group(1), 0), match.group(2)
            figures.node_count = (figures.node_count or 0) + count
            counted = True
            if not _NODE_ID.match(name):
                figures.node_groups[name] = figures.node_groups.get(name, 0) + count
            continue
        if section == "legacy_types" and (match := _LEGACY_ITEM.match(stripped)):
            figures.node_groups[match.group(1)] = count_or(match.group(2), 0)
            continue
        if section == "pending":
            figures.pending_nodes.append(stripped)
            continue
        if section == "failures":
            figures.recent_failures.append(stripped)
            continue
        if section == "usage" and _add_usage(stripped, figures.totals, figures.used):
            continue
        if section == "node_usage" and _add_usage(stripped, blocks[-1].totals, blocks[-1].used):
            continue
        if section in {"demands", "node_demands"} and (demand := _demand(stripped)):
            found.add_demand(demand)
            continue
        if blocks and section and section.startswith("node") and (ip := _IPV4.search(stripped)):
            blocks[-1].extra_ips.append(ip.group(1))
        leftover.append(line)
    for block in blocks:
        found.add_ray_node(block.to_ray_node())
    if not counted and blocks:
        figures.node_count = len(blocks)
    found.ray_status = _merged(found.ray_status, figures)
    found.recognise(FORMAT)
    return leftover
