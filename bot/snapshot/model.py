"""The snapshot: everything one diagnosis knows, frozen at one moment.

Collectors (live API calls, a snapshot file, pasted text) produce a ``Snapshot``; the classifier
only ever reads one. Keeping that boundary is what lets every rule be tested with plain objects
and lets a user share a snapshot from an air-gapped cluster. A layer that was not read at all is
``None``; a layer that was read but failed carries its failures in ``errors``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from bot.snapshot.base import new_list
from bot.snapshot.errors import CollectionError
from bot.snapshot.kubernetes import KubernetesState
from bot.snapshot.ray import RayState
from bot.snapshot.redact import Redacted

SCHEMA = "raydiag.snapshot/v1"
__all__ = ["SCHEMA", "CollectionError", "Snapshot", "TextLine"]


class TextLine(BaseModel):
    """A line of free text worth matching: a log line, a warning, a pasted message."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    source: str
    text: Redacted
    pod: str | None = None
    namespace: str | None = None
    container: str | None = None


class Snapshot(BaseModel):
    schema_: Literal["raydiag.snapshot/v1"] = Field(default="raydiag.snapshot/v1", alias="schema")
    cluster: str | None = None
    namespace: str | None = None
    collected_at: datetime | None = None
    origin: Literal["live", "file", "paste"] = "file"
    kubernetes: KubernetesState | None = None
    ray: RayState | None = None
    texts: list[TextLine] = Field(default_factory=new_list)
    errors: list[CollectionError] = Field(default_factory=new_list)
    notes: list[str] = Field(default_factory=new_list)

    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)

    def to_json(self) -> str:
        return self.model_dump_json(by_alias=True, exclude_defaults=False, indent=1)
