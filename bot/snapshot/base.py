"""The base of every snapshot model: frozen, lenient, and light.

A snapshot of a large cluster holds hundreds of thousands of these objects. Pydantic keeps, per
instance, the set of field names that were passed in (``__pydantic_fields_set__``), which only
``exclude_unset`` serialisation reads; raydiag never uses that, and the sets made up about a third
of a large snapshot's memory. Every instance therefore shares one empty set.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

_NO_FIELDS: set[str] = set()


class SnapshotModel(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    def model_post_init(self, context: Any, /) -> None:
        object.__setattr__(self, "__pydantic_fields_set__", _NO_FIELDS)
