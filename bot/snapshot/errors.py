"""What a collection could not read: a model of its own, so that the diagnosis model (and the rule
catalogue that names its types) can be loaded without building every snapshot model."""

from __future__ import annotations

from bot.snapshot.base import Record
from bot.snapshot.redact import Redacted


class CollectionError(Record):
    source: str
    message: Redacted
    hint: str | None = None
