"""The one error the state store raises: a sentence an operator can act on, never a traceback."""

from __future__ import annotations


class StoreError(Exception):
    """The state database cannot be used (unreachable, corrupt, newer schema, bad URL)."""
