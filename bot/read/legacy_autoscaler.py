"""The legacy autoscaler's status lines (Ray 0.x to 1.0) in monitor logs.

Before ``ray status`` existed, ``StandardAutoscaler`` logged the cluster's state on every update,
and people paste these lines from ``monitor.out``/``monitor.err``/``monitor.log``. The layouts, read
off Ray's ``python/ray/autoscaler/autoscaler.py`` of those versions:

* the earliest: ``StandardAutoscaler: Have 1 / 2 target nodes (1 updating)``;
* 0.5-0.7: ``StandardAutoscaler [<datetime>]: 0/2 target nodes (2 pending)`` followed by
  ``LoadMetrics.debug_string()``, one `` - Key: value`` line per metric;
* 0.8: two log lines, ``StandardAutoscaler: 1/2 target nodes (1 pending) (bringup=True)`` and
  ``LoadMetrics: Key=value, Key=value`` (keys sorted; ``ResourceUsage`` holds commas itself);
* 1.0: ``Cluster status: 1/2 target nodes (1 pending)`` with the ``Key=value`` line after it,
  unprefixed (the later ``Cluster status: 3 nodes`` summary is read with ``ray status``).

The suffixes are ``(N pending)`` (launches requested from the node provider that have not yet
produced a node), ``(N updating)``, ``(N failed to update)`` and ``(bringup=True)``. The first
count is the workers the provider reports, the second the target; ``NumNodesConnected`` counts Ray
nodes that heartbeat, head included; ``ResourceUsage`` is ``used/total name`` items, memory in
``GiB`` from 0.8 on. What is read joins the ``ray status`` figures: the connected nodes as the node
count, the usage as totals and used, and a header with pending launches as a pending-node line.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from bot.read.formats import Format, Tag
from bot.read.found import Found, RayStatusFigures
from bot.read.protocol import Block, Paste, Reader
from bot.read.ray_notation import base_resource, find_usages

FORMAT = Format("ray legacy autoscaler log", Tag.RAY_LOG)

_HEADER = re.compile(
    r"(?:StandardAutoscaler(?:\s*\[[^\]\n]{0,40}\])?|Cluster status):\s*(?:Have\s+)?"
    r"(?P<workers>\d{1,6})\s*/\s*(?P<target>\d{1,6})\s+target nodes(?P<suffix>(?:\s*\([^()\n]{0,40}\))*)"
)
_SUFFIX = re.compile(r"\((\d{1,6}) (pending|updating|failed to update)\)")
_KEYS = (
    "MostDelayedHeartbeats",
    "NodeIdleSeconds",
    "NumNodesConnected",
    "NumNodesUsed",
    "ResourceUsage",
    "TimeSinceLastHeartbeat",
)
_KEY_NAMES = "|".join(_KEYS)
_ITEM = re.compile(rf"^\s*-\s*(?P<key>{_KEY_NAMES}):\s*(?P<value>.*)$")
# ``LoadMetrics: Key=value, ...`` (0.8) or the same without the prefix (1.0); values hold commas.
_INLINE_START = re.compile(rf"(?:\bLoadMetrics:\s*|^\s*)(?={_KEY_NAMES}=)")
_INLINE_KEY = re.compile(rf"(?:^|,\s*)({_KEY_NAMES})=")
_MAX_LINE = 20_000


@dataclass
class LegacyStatus:
    """One status of the legacy autoscaler; None where the lines did not say."""

    workers: int | None = None
    target: int | None = None
    pending: int = 0
    header: str | None = None
    connected: int | None = None
    totals: dict[str, float] = field(default_factory=dict)
    used: dict[str, float] = field(default_factory=dict)


def _inline_metrics(line: str) -> dict[str, str] | None:
    """The ``Key=value`` items of a load-metrics line, or None when the line is not one."""
    if len(line) > _MAX_LINE:
        return None
    start = _INLINE_START.search(line)
    if start is None:
        return None
    body = line[start.end() :]
    keys = list(_INLINE_KEY.finditer(body))
    if not keys or keys[0].start() != 0:
        return None
    items: dict[str, str] = {}
    for index, match in enumerate(keys):
        end = keys[index + 1].start() if index + 1 < len(keys) else len(body)
        items[match.group(1)] = body[match.end() : end].strip()
    return items


def is_start(lines: Sequence[str], i: int) -> bool:
    line = lines[i]
    if len(line) > _MAX_LINE:
        return False
    return bool(_HEADER.search(line)) or _inline_metrics(line) is not None


def _add_metrics(items: dict[str, str], status: LegacyStatus) -> None:
    connected = items.get("NumNodesConnected", "").strip()
    if connected.isdecimal() and len(connected) <= 6:
        status.connected = int(connected)
    usage = items.get("ResourceUsage")
    if usage is None:
        return
    totals: dict[str, float] = {}
    used: dict[str, float] = {}
    for item in find_usages(usage.replace(",", " ")):
        name = base_resource(item.name)
        # ``node:<ip>`` is bookkeeping, never a demand's resource; ``ray status`` leaves it out too.
        if name is None or name != item.name or name.startswith("node:"):
            continue
        used[name], totals[name] = item.first, item.second
    if totals:
        status.totals, status.used = totals, used


def read(lines: Sequence[str], start: int, found: Found) -> int:
    """Read the status at ``lines[start]`` (``is_start`` said yes); return the index after it."""
    status = LegacyStatus()
    header = _HEADER.search(lines[start])
    if header is None:
        _add_metrics(_inline_metrics(lines[start]) or {}, status)
        _store(status, found)
        return start + 1
    status.workers, status.target = int(header.group("workers")), int(header.group("target"))
    status.pending = sum(int(n) for n, kind in _SUFFIX.findall(header.group("suffix")) if kind == "pending")
    status.header = header.string[header.start("workers") : header.end()].strip()
    found.add_text(lines[start])
    # The metrics follow the header: `` - Key: value`` lines, or one ``Key=value`` line.
    end = start + 1
    while end < len(lines) and end - start <= len(_KEYS):
        if item := _ITEM.match(lines[end]):
            _add_metrics({item.group("key"): item.group("value")}, status)
            end += 1
            continue
        if (inline := _inline_metrics(lines[end])) is not None:
            _add_metrics(inline, status)
            end += 1
        break
    _store(status, found)
    return max(end, start + 1)


def _store(status: LegacyStatus, found: Found) -> None:
    figures = found.ray_status or RayStatusFigures()
    if status.connected is not None:
        figures.node_count = status.connected
    if status.totals:
        figures.totals, figures.used = status.totals, status.used
    if status.header is not None:
        # The latest status says what is pending now: an update without the suffix launched all.
        figures.pending_nodes = [status.header] if status.pending else []
    found.ray_status = figures
    found.recognise(FORMAT)


def _read(lines: Sequence[str], i: int, paste: Paste) -> Block:
    return Block(read(lines, i, paste.found))


READER = Reader("ray-legacy-autoscaler", starts=is_start, read=_read)
