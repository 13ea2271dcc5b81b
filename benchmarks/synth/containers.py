"""Containers as the snapshot holds them, and the requests the scheduler sums from them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from benchmarks.synth.common import GiB


def container_spec(
    name: str,
    image: str,
    requests: Mapping[str, float],
    limits: Mapping[str, float] | None = None,
    *,
    env: Sequence[str] = (),
    command: Sequence[str] = (),
) -> dict[str, Any]:
    return {
        "name": name,
        "image": image,
        "requests": {k: v for k, v in requests.items() if v},
        "limits": dict(limits if limits is not None else {}),
        "env_names": list(env),
        "command": list(command),
    }


def effective_requests(
    containers: Iterable[Mapping[str, Any]], init: Iterable[Mapping[str, Any]]
) -> dict[str, float]:
    total: dict[str, float] = {}
    for container in containers:
        for resource, amount in container["requests"].items():
            total[resource] = total.get(resource, 0.0) + amount
    for container in init:
        for resource, amount in container["requests"].items():
            total[resource] = max(total.get(resource, 0.0), amount)
    return total


def resource_requests(cpu: float, memory_gib: float, **extra: float) -> dict[str, float]:
    found = {"cpu": cpu, "memory": memory_gib * GiB}
    found.update({k: v for k, v in extra.items() if v})
    return {k: v for k, v in found.items() if v}
