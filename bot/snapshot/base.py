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


def new_list() -> list[Any]:
    """A fresh empty list: the ``default_factory`` of every list field of raydiag's models.

    Not ``list`` itself: for each field pydantic asks whether its factory takes an argument, and for
    a builtin type that means parsing the type's text signature (about 1.5 ms per field for
    ``list``, 0.2 ms for ``dict``), paid by every process at import. A function of ours answers at
    once.
    """
    return []


def new_dict() -> dict[Any, Any]:
    """A fresh empty dict: the ``default_factory`` of every dict field (see ``new_list``)."""
    return {}


class SnapshotModel(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    def model_post_init(self, context: Any, /) -> None:
        object.__setattr__(self, "__pydantic_fields_set__", _NO_FIELDS)
