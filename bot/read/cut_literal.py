"""Closing a Python printout that was cut short, so what was printed before the cut can be read.

A pasted ``print(ray.util.placement_group_table())`` or ``ray.nodes()`` is often one very long line,
and chat limits, terminal scroll-back or the person pasting cut it anywhere, even inside a string.
Like the JSON reader (:mod:`bot.read.json_blocks`), this remembers the last places where
the text could end cleanly (just before a comma, or just after a bracket, outside strings) and
closes the brackets still open there; the caller parses the result with ``ast``, never ``eval``.
The last complete items survive; the item the cut went through is lost or left partial.
"""

from __future__ import annotations

from collections import deque

_OPENERS = {"[": "]", "{": "}", "(": ")"}
_CLOSERS = set(_OPENERS.values())
_MAX_DEPTH = 256
_CANDIDATES = 8


def closings(text: str) -> list[str]:
    """Texts that end where ``text`` could have ended, with their brackets closed; latest first.

    Empty when ``text`` closes by itself or does not look like a literal (a closer that matches
    nothing, or nesting too deep to be a printout).
    """
    stack: list[str] = []
    cuts: deque[tuple[int, str]] = deque(maxlen=_CANDIDATES)
    quote: str | None = None
    escaped = False
    for index, char in enumerate(text):
        if quote is not None:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = None
            continue
        if char in "'\"":
            quote = char
        elif char in _OPENERS:
            stack.append(_OPENERS[char])
            if len(stack) > _MAX_DEPTH:
                return []
            cuts.append((index + 1, "".join(reversed(stack))))
        elif char in _CLOSERS:
            if not stack or stack[-1] != char:
                return []
            stack.pop()
            if not stack:
                return []  # the value closed: nothing was cut
            cuts.append((index + 1, "".join(reversed(stack))))
        elif char == "," and stack:
            cuts.append((index, "".join(reversed(stack))))
    if not stack:
        return []
    return [text[:cut] + closers for cut, closers in reversed(cuts)]
