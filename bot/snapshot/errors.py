"""What a collection could not read: a model of its own, so that the diagnosis model (and the rule
catalogue that names its types) can be loaded without building every snapshot model."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from bot.snapshot.redact import Redacted


class CollectionError(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    source: str
    message: Redacted
    hint: str | None = None
