"""Ray resource maps and amounts, for the paste parsers.

The notations and their units are decided once, in :mod:`bot.read.ray_notation` (which the live
dashboard reader uses too); this module only gives the paste package its usual import path.
"""

from __future__ import annotations

from bot.read.ray_notation import (
    FoundMap,
    Usage,
    base_resource,
    find_maps,
    find_usages,
    node_ip_from_resources,
    parse_amount,
    parse_amount_text,
    parse_resource_map,
    parse_usage,
)

__all__ = [
    "FoundMap",
    "Usage",
    "base_resource",
    "find_maps",
    "find_usages",
    "node_ip_from_resources",
    "parse_amount",
    "parse_amount_text",
    "parse_resource_map",
    "parse_usage",
]
