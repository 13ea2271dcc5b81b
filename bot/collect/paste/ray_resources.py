"""Ray resource maps and amounts in the notations Ray prints, converted to Ray's units.

The same resource map appears in several notations depending on the component and the version:
Python dict reprs from the autoscaler (``{'CPU': 2.0}``, ``defaultdict(<class 'float'>, {...})``),
C++ maps from the core worker (``{CPU: 1.000000}``), and ``used/total`` pairs with human byte
suffixes in ``ray status`` and scheduler warnings (``0B/3.56TiB memory``, ``4.49 GiB/4.49 GiB
memory``). Snapshots hold Ray's own units (memory in bytes), so every parser converts here, once.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from bot.collect.paste.counts import parse_count

_BYTE_UNITS = {
    "B": 1.0,
    "KiB": 2.0**10,
    "MiB": 2.0**20,
    "GiB": 2.0**30,
    "TiB": 2.0**40,
    "PiB": 2.0**50,
    "EiB": 2.0**60,
    "KB": 1e3,
    "MB": 1e6,
    "GB": 1e9,
    "TB": 1e12,
    "PB": 1e15,
    "EB": 1e18,
}
_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_UNIT = r"(?:[KMGTPE]i?B|B)(?![A-Za-z])"
_AMOUNT = re.compile(rf"^\s*({_NUMBER})\s*({_UNIT})?\s*$")
_USAGE = re.compile(rf"^\s*({_NUMBER})\s*({_UNIT})?\s*/\s*({_NUMBER})\s*({_UNIT})?\s+([^\s(),{{}}]+)")
_MAP = re.compile(r"\{([^{}]*)\}(?:\s*\*\s*(\d+))?")
_MAX_MAPS = 10_000


def parse_amount(number: str, unit: str | None = None) -> float | None:
    try:
        value = float(number)
    except ValueError:
        return None
    if not math.isfinite(value):
        return None
    if unit in (None, "B"):
        return value
    scaled = value * _BYTE_UNITS.get(unit, 1.0)
    if not math.isfinite(scaled):
        return None
    # Ray prints memory rounded to a few digits; whole bytes are all the precision there is.
    return float(round(scaled))


def parse_amount_text(text: str) -> float | None:
    """``'2.0'``, ``'1.000000'``, ``'12.5 GiB'`` → a float in Ray's units."""
    match = _AMOUNT.match(text)
    return parse_amount(match.group(1), match.group(2)) if match else None


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


def find_maps(text: str) -> list[FoundMap]:
    """Every complete ``{...}`` map in ``text``, with an optional ``* N`` multiplier after it."""
    found: list[FoundMap] = []
    for match in _MAP.finditer(text):
        shape = parse_resource_map(match.group(1))
        times = parse_count(match.group(2))
        found.append(FoundMap(shape=shape, times=times, start=match.start(), end=match.end()))
        if len(found) >= _MAX_MAPS:
            break
    return found


@dataclass(frozen=True)
class Usage:
    name: str
    first: float
    second: float


def parse_usage(text: str) -> Usage | None:
    """``0.0/2.0 CPU``, ``0B/3.56TiB memory``, ``0.00/3.725 GiB memory``, ``11.0/12.0 CPU``.

    ``first`` is whatever precedes the slash (used in ``ray status``, available in scheduler
    warnings); a unit written only after the second number applies to both.
    """
    match = _USAGE.match(text)
    if match is None:
        return None
    first_number, first_unit, second_number, second_unit, name = match.groups()
    second = parse_amount(second_number, second_unit)
    first = parse_amount(first_number, first_unit or second_unit)
    if first is None or second is None:
        return None
    return Usage(name=name, first=first, second=second)


def node_ip_from_resources(resources: dict[str, float]) -> str | None:
    """Ray gives every node a ``node:<ip>`` resource; the head also has ``node:__internal_head__``."""
    for name in resources:
        if name.startswith("node:") and not name.startswith("node:__"):
            return name[len("node:") :]
    return None
