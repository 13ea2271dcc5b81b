"""Reading a snapshot file.

Two shapes are accepted. A raydiag snapshot (``"schema": "raydiag.snapshot/v1"``), as written by
``raydiag collect``; and a *bundle* of raw answers — Kubernetes lists as ``kubectl get -o json``
prints them and Ray dashboard responses — which is what people can assemble by hand on a cluster
where raydiag is not installed:

    {"cluster": "raycluster-gpu", "namespace": "ml",
     "kubernetes": {"nodes": <NodeList>, "pods": <PodList>, "events": <EventList>, ...},
     "ray": {"nodes": <GET /api/v0/nodes?detail=1>, "cluster_status": <GET /api/cluster_status>, ...},
     "texts": ["free text lines, e.g. log lines"],
     "errors": [{"source": "kubernetes events", "message": "403 Forbidden"}]}
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bot.read.kubernetes_json import kubernetes_state
from bot.read.ray_json import ray_state as build_ray_state
from bot.snapshot.data import load
from bot.snapshot.model import SCHEMA, CollectionError, Snapshot, TextLine
from bot.snapshot.ray import RayState

MAX_SNAPSHOT_BYTES = 512 * 1024 * 1024


class SnapshotError(ValueError):
    """The file is not a snapshot raydiag can read; the message says why, in one line."""


def snapshot_from_bundle(raw: Mapping[str, Any]) -> Snapshot:
    kube_raw = raw.get("kubernetes")
    ray_raw = raw.get("ray")
    ray_state: RayState | None = None
    if isinstance(ray_raw, Mapping):
        ray_state = build_ray_state(ray_raw)
    if isinstance(raw.get("ray_state"), Mapping):
        ray_state = load(RayState, raw["ray_state"])
    texts = [
        TextLine(source="bundle", text=line) if isinstance(line, str) else load(TextLine, line)
        for line in raw.get("texts") or []
        if isinstance(line, str | dict)
    ]
    errors = [load(CollectionError, e) for e in raw.get("errors") or [] if isinstance(e, dict)]
    return Snapshot(
        errors=errors,
        cluster=raw.get("cluster") if isinstance(raw.get("cluster"), str) else None,
        namespace=raw.get("namespace") if isinstance(raw.get("namespace"), str) else None,
        origin="file",
        kubernetes=kubernetes_state(kube_raw) if isinstance(kube_raw, Mapping) else None,
        ray=ray_state,
        texts=texts,
    )


def parse_snapshot(raw: object) -> Snapshot:
    from pydantic import ValidationError  # noqa: PLC0415 - lazy: only a snapshot file needs pydantic

    if not isinstance(raw, Mapping):
        raise SnapshotError("expected a JSON object at the top level")
    try:
        if raw.get("schema") == SCHEMA:
            return load(Snapshot, raw)
        if "schema" in raw:
            raise SnapshotError(
                f"unsupported snapshot schema {raw.get('schema')!r} (this raydiag reads {SCHEMA})"
            )
        if not any(key in raw for key in ("kubernetes", "ray", "ray_state", "texts")):
            raise SnapshotError("neither a raydiag snapshot nor a bundle (no 'kubernetes' or 'ray' key)")
        return snapshot_from_bundle(raw)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise SnapshotError(f"invalid snapshot at {where}: {first['msg']}") from error


def load_snapshot(path: Path) -> Snapshot:
    try:
        size = path.stat().st_size
        if size > MAX_SNAPSHOT_BYTES:
            raise SnapshotError(f"{path} is {size} bytes; the limit is {MAX_SNAPSHOT_BYTES}")
        raw = json.loads(path.read_bytes())
    except OSError as error:
        raise SnapshotError(f"cannot read {path}: {error.strerror or error}") from error
    except (ValueError, RecursionError) as error:
        raise SnapshotError(f"{path} is not valid JSON: {str(error).splitlines()[0]}") from error
    return parse_snapshot(raw)
