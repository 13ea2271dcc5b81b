"""Whole numbers read out of pasted text, safely.

A count in a paste is text, and text can be anything: ``str.isdigit`` accepts superscripts that
``int`` rejects, and Python refuses to convert a string of more than 4300 digits. Every count the
parsers read (restarts, event counts, replicas, demand counts) goes through here, so junk in a
column can never raise; absurdly large counts are capped rather than trusted.
"""

from __future__ import annotations

MAX_COUNT = 10**12


def parse_count(text: str | None, default: int | None = None) -> int | None:
    """``'42'`` → 42; anything that is not a plain decimal number → ``default``."""
    if not text:
        return default
    text = text.strip()
    if not text.isdecimal():
        return default
    if len(text) > 12:
        return MAX_COUNT
    return min(int(text), MAX_COUNT)


def count_or(text: str | None, default: int) -> int:
    """Like ``parse_count`` with a default that is always an int, for fields that need one."""
    value = parse_count(text, default)
    return default if value is None else value
