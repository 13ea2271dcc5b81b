"""The demo's recorded KubeRay state (``bot/demo/kuberay_state.json``), varied per test.

Its Pod IPs match the raylets of ``bot.demo.local_ray``'s cluster (head 127.0.0.2, A100 worker
127.0.0.3, T4 worker 127.0.0.4), so the real collector ties each Ray node to its Pod and node.
"""

from __future__ import annotations

from typing import Any

from bot.demo import kuberay_state as state


def base_state() -> dict[str, Any]:
    return state.load_state()


def items(raw: dict[str, Any], key: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = raw["kubernetes"][key]["items"]
    return found


def drop_pod(raw: dict[str, Any], name: str) -> None:
    raw["kubernetes"]["pods"]["items"] = [p for p in items(raw, "pods") if p["metadata"]["name"] != name]
    raw["kubernetes"]["events"]["items"] = [
        e for e in items(raw, "events") if e["involvedObject"]["name"] != name
    ]
    raw["kubernetes"]["logs"] = [log for log in raw["kubernetes"].get("logs", []) if log["pod"] != name]


def drop_node(raw: dict[str, Any], name: str) -> None:
    raw["kubernetes"]["nodes"]["items"] = [n for n in items(raw, "nodes") if n["metadata"]["name"] != name]
    raw["kubernetes"]["pods"]["items"] = [p for p in items(raw, "pods") if p["spec"].get("nodeName") != name]


def healthy_state() -> dict[str, Any]:
    """Every Pod of the RayCluster Running and joined: the lost CPU worker, the Pending A100
    worker and the A100 node that advertises no GPU are left out."""
    raw = base_state()
    drop_pod(raw, state.LOST_POD)
    drop_pod(raw, state.A100_PENDING_POD)
    drop_node(raw, "gpu-a100-2")
    return raw


def pod(raw: dict[str, Any], name: str) -> dict[str, Any]:
    return next(p for p in items(raw, "pods") if p["metadata"]["name"] == name)


def node(raw: dict[str, Any], name: str) -> dict[str, Any]:
    return next(n for n in items(raw, "nodes") if n["metadata"]["name"] == name)
