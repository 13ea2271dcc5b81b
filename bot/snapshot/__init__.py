"""The snapshot model and the readers that build one from recorded files."""

from bot.snapshot.model import SCHEMA, CollectionError, Snapshot, TextLine

__all__ = ["SCHEMA", "CollectionError", "Snapshot", "TextLine"]
