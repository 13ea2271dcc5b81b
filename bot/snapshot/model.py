"""The snapshot: everything one diagnosis knows, frozen at one moment.

Collectors (live API calls, a snapshot file, pasted text) produce a ``Snapshot``; the classifier
only ever reads one. Keeping that boundary is what lets every rule be tested with plain objects
and lets a user share a snapshot from an air-gapped cluster. A layer that was not read at all is
``None``; a layer that was read but failed carries its failures in ``errors``.
"""

from __future__ import annotations

from dataclasses import field
from datetime import datetime
from typing import Literal

from bot.snapshot.base import Record
from bot.snapshot.data import dump_json
from bot.snapshot.errors import CollectionError
from bot.snapshot.kubernetes import KubernetesState
from bot.snapshot.nvidia_smi import SmiOutput
from bot.snapshot.ray import RayState
from bot.snapshot.redact import Redacted
from bot.snapshot.stated import Stated

SCHEMA = "raydiag.snapshot/v1"
__all__ = ["SCHEMA", "CollectionError", "Snapshot", "TextLine"]


class TextLine(Record):
    """A line of free text worth matching: a log line, a warning, a pasted message."""

    source: str
    text: Redacted
    pod: str | None = None
    namespace: str | None = None
    container: str | None = None


class Snapshot(Record):
    schema: Literal["raydiag.snapshot/v1"] = "raydiag.snapshot/v1"
    cluster: str | None = None
    namespace: str | None = None
    collected_at: datetime | None = None
    origin: Literal["live", "file", "paste"] = "file"
    kubernetes: KubernetesState | None = None
    ray: RayState | None = None
    texts: list[TextLine] = field(default_factory=list)
    # What the person said in words around a paste (a live collection has none).
    stated: Stated | None = None
    # What pasted ``nvidia-smi`` output showed, one entry per output (one machine each).
    nvidia_smi: list[SmiOutput] = field(default_factory=list)
    errors: list[CollectionError] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> str:
        return dump_json(self, indent=1)
