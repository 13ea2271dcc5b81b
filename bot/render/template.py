"""Fill a rule's template with facts: the one formatter every renderer and ``raydiag rules`` use.

Placeholders the facts do not know are shown as ``<name>`` so that a command is still copyable
and obviously incomplete, rather than silently wrong. No other module of raydiag is imported here,
so listing the rules does not load the diagnosis models.
"""

from __future__ import annotations

import string
from collections.abc import Mapping


class _Facts(dict[str, str]):
    """Unknown facts: ``<name>`` in a command (still copyable), a plain word in prose."""

    def __init__(self, values: Mapping[str, str], unknown: str | None) -> None:
        super().__init__(values)
        self.unknown = unknown

    def __missing__(self, key: str) -> str:
        return self.unknown if self.unknown is not None else f"<{key}>"


def fill(
    template: str, facts: Mapping[str, str], unknown: str | None = None, code: Mapping[str, str] | None = None
) -> str:
    """Fill ``template``; an unknown fact reads ``unknown`` in prose but stays ``<name>`` inside a
    backtick span, where prose quotes a command (`kubectl describe node <node>`). A backtick span
    is filled from ``code`` when given: the bare atoms, the same in every language."""
    if unknown is not None and "`" in template:
        parts = template.split("`")
        if len(parts) % 2 == 1:  # balanced: odd-numbered parts are code
            return "`".join(
                fill(part, code if code is not None else facts) if i % 2 else fill(part, facts, unknown)
                for i, part in enumerate(parts)
            )
    values = _Facts({k: v for k, v in facts.items() if v}, unknown)
    try:
        return string.Formatter().vformat(template, (), values)
    except (ValueError, IndexError, KeyError):
        return template
