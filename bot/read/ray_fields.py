"""Total readers of the values inside Ray's JSON answers: envelopes, camelCase keys, scalars.

Every reader of a dashboard, state API, ``ray list --format json`` or Serve answer takes ``object``
and tolerates anything: a field of the wrong type counts as missing, a record that is not a mapping
is skipped. The answers differ between Ray versions and even between endpoints of one version:

- **Envelopes.** State API lists come as ``{"result": true, "data": {"result": {"result": [...],
  "total": n}}}`` (2.x), sometimes as ``{"data": {"result": [...]}}`` or as a mapping of id to
  record (1.x); ``/api/jobs/`` is a bare list; Serve answers without any envelope.
- **Mangled resource names.** ``/api/cluster_status`` and ``/nodes?view=summary`` pass every mapping
  through the dashboard's camelCase converter, keys included, so ``accelerator_type:A100`` arrives as
  ``acceleratorType:A100`` and ``node:__internal_head__`` as ``node:InternalHead``. Shapes inside
  lists (the demand vectors) escape the converter. :class:`ResourceNames` maps names back through
  the names the unmangled sources use, so the classifier sees Ray's own spelling everywhere.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from bot.read.ray_notation import fold_resources

_BASE_NAMES = ("CPU", "GPU", "memory", "object_store_memory", "node:__internal_head__")


def as_text(value: object) -> str | None:
    """A non-empty string, or a number spelled as one; Ray uses ``""`` for "not set"."""
    if isinstance(value, str):
        return value or None
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return None


def as_number(value: object) -> float | None:
    if isinstance(value, bool):
        return None
    if not isinstance(value, int | float | str):
        return None
    try:
        number = float(value.strip() if isinstance(value, str) else value)
    except (ValueError, OverflowError):
        return None
    return number if math.isfinite(number) else None


def as_int(value: object) -> int | None:
    number = as_number(value)
    return int(number) if number is not None and number.is_integer() and abs(number) < 2**63 else None


def as_count(value: object) -> int:
    """A positive count; 1 where the value is missing, not a whole number or not positive."""
    count = as_int(value)
    return count if count is not None and count > 0 else 1


def as_list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def as_mapping(value: object) -> dict[str, Any]:
    return {k: v for k, v in value.items() if isinstance(k, str)} if isinstance(value, Mapping) else {}


def camel(name: str) -> str:
    """The dashboard's ``to_camel_case``: split on ``_``, title-case every part but the first."""
    first, *rest = name.split("_")
    return first + "".join(part.title() for part in rest)


def field(record: object, snake: str) -> Any:
    """``record[snake]``, or its camelCase spelling for the endpoints that convert keys."""
    if not isinstance(record, Mapping):
        return None
    value = record.get(snake)
    return record.get(camel(snake)) if value is None else value


def time_ms(value: object) -> datetime | None:
    """Ray's epoch timestamps are milliseconds; a value that reads as seconds is taken as such."""
    number = as_number(value)
    if number is None or number <= 0:
        return None
    seconds = number / 1000.0 if number > 1e11 else number
    try:
        return datetime.fromtimestamp(seconds, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return None


def rows(raw: object, depth: int = 0) -> list[Mapping[str, Any]]:
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
            return rows(inner, depth + 1)
    values = list(raw.values())
    if values and all(isinstance(v, Mapping) for v in values):
        # Ray 1.x listed records as a mapping of id to record.
        return values
    return []


class ResourceNames:
    """Maps camelCased resource and node-type names back to the spelling Ray uses."""

    def __init__(self) -> None:
        self._by_camel: dict[str, str] = {}
        self.learn(_BASE_NAMES)

    def learn(self, names: Iterable[object]) -> None:
        for name in names:
            if isinstance(name, str) and name:
                self._by_camel.setdefault(camel(name), name)

    def restore(self, name: str) -> str:
        known = self._by_camel.get(name)
        if known is not None:
            return known
        # Names we never saw unmangled: undo the conversion for the prefixes Ray itself uses.
        if name.startswith("acceleratorType:"):
            return "accelerator_type:" + name.removeprefix("acceleratorType:")
        return name


def resources(raw: object, names: ResourceNames | None = None) -> dict[str, float]:
    """A resource map with Ray's names and units; anything not name -> number is skipped."""
    if not isinstance(raw, Mapping):
        return {}
    return fold_resources(
        (names.restore(key) if names else key, amount)
        for key, value in raw.items()
        if isinstance(key, str) and key and (amount := as_number(value)) is not None
    )
