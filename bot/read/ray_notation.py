"""Ray resource maps and amounts in the notations Ray prints, converted to Ray's units.

The same resource map appears in several notations depending on the component and the version:
Python dict reprs from the autoscaler (``{'CPU': 2.0}``, ``defaultdict(<class 'float'>, {...})``),
C++ maps from the raylet (``{CPU: 1.000000}``), and ``used/total`` pairs with byte suffixes in
``ray status`` and scheduler warnings (``0B/3.56TiB memory``, ``0.00/33.528 GiB memory``). Snapshots
hold Ray's own units (memory in bytes, see :mod:`bot.read.quantity` for what each suffix means),
and every reader, pasted or live, converts here.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from bot.read.quantity import parse_byte_size

_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_UNIT = r"(?:[KMGTPE]i?B|B)(?![A-Za-z])"
_AMOUNT = re.compile(rf"^\s*({_NUMBER})\s*({_UNIT})?\s*$")
_USAGE_BODY = rf"({_NUMBER})\s*({_UNIT})?\s*/\s*({_NUMBER})\s*({_UNIT})?\s+([^\s(),{{}}]+)"
_USAGE = re.compile(rf"^\s*{_USAGE_BODY}")
# Several usage items on one line (``0.0/32.0 CPU 0.0/4.0 GPU 0B/81.95GiB memory``): each starts
# where no number or name runs into it.
_USAGE_ANYWHERE = re.compile(rf"(?<![\w./]){_USAGE_BODY}")
_MAP = re.compile(r"\{([^{}]*)\}(?:\s*\*\s*(\d+))?")
# Placement-group bookkeeping: ``CPU_group_<pg id>`` and ``CPU_group_<index>_<pg id>`` are carved
# out of a node's real ``CPU``; ``bundle_group_...`` only marks a bundle.
_PG_RESOURCE = re.compile(r"^(?P<base>.+?)_group_(?:\d+_)?[0-9a-fA-F]{16,}$")
# A cluster whose config names no node types (nodes started by hand with ``ray start``, Ray's
# read-only node provider) gets one "type" per node, named after it: ``node_`` and the node id in
# hex (autoscaler v1 ``format_readonly_node_type(node_id.hex())``, v2
# ``ClusterStatusParser._parse_nodes``: ``f"node_{node_id}"``). Node ids are 28 bytes, 56 hex
# digits; no shorter run of hex comes from Ray, and a worker group is not named that way.
_SYNTHETIC_NODE_TYPE = re.compile(r"^node_[0-9a-fA-F]{16,}$")
_MAX_MAPS = 10_000
_MAX_COUNT_DIGITS = 12
# A bundle count is only ever multiplied out this far; a real group has a handful.
MAX_BUNDLES = 1000


def parse_amount(number: str, unit: str | None = None) -> float | None:
    """A printed number (with an optional byte suffix) in Ray's units; None when unreadable."""
    value = parse_byte_size(number, unit)
    return value if value is not None and math.isfinite(value) else None


def parse_amount_text(text: str) -> float | None:
    """``'2.0'``, ``'1.000000'``, ``'12.5 GiB'`` -> a float in Ray's units."""
    match = _AMOUNT.match(text)
    return parse_amount(match.group(1), match.group(2)) if match else None


def base_resource(name: str) -> str | None:
    """The resource a name counts as: itself, the base of a placement-group name, or None for a
    name that only marks a bundle (``bundle_group_...``)."""
    match = _PG_RESOURCE.match(name)
    if match is None:
        return name
    base = match.group("base")
    return None if base == "bundle" or "_group_" in base else base


def is_synthetic_node_type(name: str) -> bool:
    """Whether a node type is Ray's stand-in named after one node rather than a worker group."""
    return bool(_SYNTHETIC_NODE_TYPE.match(name))


def fold_resources(items: Iterable[tuple[str, float]]) -> dict[str, float]:
    """A resource map in which placement-group bookkeeping counts under its base resource, once.

    Ray names every bundle's resources twice, with the same amount: the wildcard
    ``CPU_group_<pg id>`` and the indexed ``CPU_group_<index>_<pg id>`` (``BundleSpecification``
    labels a reserved bundle with both; a task pinned to a bundle index asks both, one left to any
    bundle only the wildcard). Both are carved out of the node's ``CPU``, not extra capacity, and
    Ray's own ``ray status`` folds them the same way (``filter_placement_group_from_bundle`` keeps
    one amount per base name). So the real name's amount wins, else the first bookkeeping name's;
    ``bundle_group_...`` and amounts that are not finite are dropped.
    """
    found: dict[str, float] = {}
    for name, amount in items:
        base = base_resource(name)
        if base is None or not math.isfinite(amount):
            continue
        if base != name:
            found.setdefault(base, amount)
            continue
        found[name] = amount
    return found


def _key(text: str) -> str:
    return text.strip().strip("'\"").strip()


def parse_resource_map(body: str) -> dict[str, float]:
    """The inside of ``{'CPU': 2.0, 'node:10.0.0.1': 1.0}`` or ``{CPU: 1.000000}``.

    Keys may contain colons (``node:10.0.0.1``, ``accelerator_type:A100``), so each item is split
    at its last colon. Unreadable items are skipped: a partial map is still evidence.
    """
    shape: dict[str, float] = {}
    for item in body.split(","):
        key, sep, value = item.rpartition(":")
        if not sep:
            continue
        name = _key(key)
        amount = parse_amount_text(value)
        if name and amount is not None:
            shape[name] = shape.get(name, 0.0) + amount
    return shape


@dataclass(frozen=True)
class FoundMap:
    shape: dict[str, float]
    times: int | None
    start: int
    end: int


def _times(text: str | None) -> int | None:
    if not text or not text.isdecimal():
        return None
    return 10**_MAX_COUNT_DIGITS if len(text) > _MAX_COUNT_DIGITS else int(text)


def find_maps(text: str) -> list[FoundMap]:
    """Every complete ``{...}`` map in ``text``, with an optional ``* N`` multiplier after it."""
    found: list[FoundMap] = []
    for match in _MAP.finditer(text):
        shape = parse_resource_map(match.group(1))
        found.append(
            FoundMap(shape=shape, times=_times(match.group(2)), start=match.start(), end=match.end())
        )
        if len(found) >= _MAX_MAPS:
            break
    return found


@dataclass(frozen=True)
class Usage:
    name: str
    first: float
    second: float
    start: int = 0
    end: int = 0


def _usage(match: re.Match[str]) -> Usage | None:
    first_number, first_unit, second_number, second_unit, name = match.groups()
    second = parse_amount(second_number, second_unit)
    first = parse_amount(first_number, first_unit or second_unit)
    if first is None or second is None:
        return None
    return Usage(name=name, first=first, second=second, start=match.start(), end=match.end())


def parse_usage(text: str) -> Usage | None:
    """``0.0/2.0 CPU``, ``0B/3.56TiB memory``, ``0.00/3.725 GiB memory``, ``11.0/12.0 CPU``.

    ``first`` is whatever precedes the slash (used in ``ray status``, available in scheduler
    warnings); a unit written only after the second number applies to both.
    """
    match = _USAGE.match(text)
    return _usage(match) if match else None


def find_usages(text: str) -> Iterator[Usage]:
    """Every ``used/total name`` item in ``text``, for lines that hold several."""
    for match in _USAGE_ANYWHERE.finditer(text):
        usage = _usage(match)
        if usage is not None:
            yield usage


def node_ip_from_resources(resources: dict[str, float]) -> str | None:
    """Ray gives every node a ``node:<ip>`` resource; the head also has ``node:__internal_head__``."""
    for name in resources:
        if name.startswith("node:") and not name.startswith("node:__"):
            return name[len("node:") :]
    return None
