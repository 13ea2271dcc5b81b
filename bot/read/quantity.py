"""Resource quantities as plain floats: Kubernetes quantities and the byte sizes Ray prints.

The snapshot stores every amount in one canonical unit per resource (CPU in cores, memory and
storage in bytes, everything else as a count) so that the classifier can add and compare them
without knowing about suffixes. Parsing is lenient: an unreadable quantity becomes ``None`` and the
caller decides whether that matters, because a malformed field must never stop a diagnosis.

Byte suffixes are decided here, once, for every reader. Kubernetes writes ``Gi`` (2**30) and ``G``
(10**9). Ray's ``ray status`` formats memory with binary units and spells them ``KiB``/``MiB``/
``GiB``/``TiB`` (``format_memory`` since 2.x: ``1.50GiB``; Ray 1.x: ``0.00/33.528 GiB``), and the
Ray tools that print ``KB``/``MB``/``GB`` (``ray memory --units``, Ray Data) mean powers of 1000. So
``GiB`` is 2**30 and ``GB`` is 10**9, the same as ``Gi`` and ``G``: a byte size is a quantity with
a trailing ``B``.
"""

from __future__ import annotations

import math
import re

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": 1e-9,
    "u": 1e-6,
    "m": 1e-3,
    "": 1.0,
    "k": 1e3,
    "K": 1e3,
    "M": 1e6,
    "G": 1e9,
    "T": 1e12,
    "P": 1e15,
    "E": 1e18,
}
_QUANTITY = re.compile(r"^\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)\s*([KMGTPE]i|[numkKMGTPE]?)\s*$")


def parse_quantity(value: object) -> float | None:
    """Return the quantity in base units, or None when it cannot be read."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if not isinstance(value, str):
        return None
    match = _QUANTITY.match(value)
    if match is None:
        return None
    number, suffix = match.groups()
    try:
        amount = float(number)
    except ValueError:
        return None
    factor = _BINARY.get(suffix) or _DECIMAL.get(suffix)
    if factor is None:
        return None
    return amount * factor


_BYTE_SIZE = re.compile(r"^([KMGTPE]i?|[kK]?)B$")


def byte_factor(unit: str | None) -> float | None:
    """Bytes per ``unit`` (``B``, ``KiB`` ... ``EiB``, ``KB`` ... ``EB``); None for anything else."""
    if not unit:
        return 1.0
    match = _BYTE_SIZE.match(unit)
    if match is None:
        return None
    prefix = match.group(1)
    return float(_BINARY.get(prefix) or _DECIMAL.get(prefix) or 1.0)


def parse_byte_size(number: str, unit: str | None) -> float | None:
    """``('1.50', 'GiB')`` -> 1610612736.0 bytes, rounded to whole bytes (Ray prints two decimals)."""
    factor = byte_factor(unit)
    try:
        value = float(number)
    except ValueError:
        return None
    if factor is None or not math.isfinite(value):
        return None
    scaled = value * factor
    if not math.isfinite(scaled):
        return None
    return float(round(scaled)) if factor != 1.0 else value


def parse_resource_map(raw: object) -> dict[str, float]:
    """Turn ``{"cpu": "500m", "memory": "1Gi"}`` into floats, dropping unreadable entries."""
    if not isinstance(raw, dict):
        return {}
    parsed: dict[str, float] = {}
    for name, value in raw.items():
        amount = parse_quantity(value)
        if isinstance(name, str) and amount is not None:
            parsed[name] = amount
    return parsed


_MEMORY_LIKE = ("memory", "ephemeral-storage", "storage", "hugepages-")


def is_byte_resource(name: str) -> bool:
    return name.startswith(_MEMORY_LIKE) or name in {"object_store_memory"}


def format_amount(name: str, amount: float) -> str:
    """Human form of an amount, in the units people type in manifests."""
    if is_byte_resource(name):
        for suffix, factor in (("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
            if abs(amount) >= factor:
                return f"{amount / factor:.4g}{suffix}"
        return f"{amount:.0f}"
    if name == "cpu" and 0 < abs(amount) < 1:
        return f"{amount * 1000:.0f}m"
    if float(amount).is_integer():
        return str(int(amount))
    return f"{amount:.4g}"
