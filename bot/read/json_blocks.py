"""Finding JSON (``kubectl get -o json``) in a paste, and reading it when it was cut short.

Chat messages have length limits, so a pasted ``kubectl get pods -o json`` is often truncated.
Rather than losing the whole document, the reader remembers the last few places where the text
could be closed cleanly (after a comma or a bracket, outside strings) and closes the open brackets
there; the items that were complete are then read as usual.

Strings never span lines in JSON, so the scan is done line by line, which also lets it stop at the
first line that cannot belong to pretty-printed JSON instead of swallowing the rest of the paste.
"""

from __future__ import annotations

import json
import re
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\],]')
_ARRAY_START = re.compile(r'^\[\s*(?:$|"|\{\s*(?:$|"))')
_MAX_DEPTH = 256


def is_start(lines: Sequence[str], i: int) -> bool:
    text = lines[i].lstrip()
    return text in {"{", "["} or text.startswith(('{"', '{ "')) or bool(_ARRAY_START.match(text))


def _continues(line: str) -> bool:
    return bool(line) and (line[0].isspace() or line[0] in '{}[]"')


@dataclass
class JsonBlock:
    end: int
    value: Any = None
    parsed: bool = False
    repaired: bool = False


def read(lines: Sequence[str], start: int) -> JsonBlock:
    """Scan from ``start`` to where the value closes (or the JSON visibly ends) and parse it."""
    stack: list[str] = []
    cuts: deque[tuple[int, str]] = deque(maxlen=8)
    parts: list[str] = []
    offset = 0
    closed_at: int | None = None
    end = start
    for index in range(start, len(lines)):
        line = lines[index]
        if index > start and not _continues(line):
            break
        end = index + 1
        parts.append(line)
        for match in _TOKEN.finditer(line):
            token = match.group()
            if token[0] == '"':
                continue
            if token in "{[":
                stack.append("}" if token == "{" else "]")
                if len(stack) > _MAX_DEPTH:
                    return JsonBlock(end=end)
                cuts.append((offset + match.end(), "".join(reversed(stack))))
            elif token in "}]":
                if not stack or stack[-1] != token:
                    return JsonBlock(end=end)
                stack.pop()
                if not stack:
                    closed_at = offset + match.end()
                    break
                cuts.append((offset + match.end(), "".join(reversed(stack))))
            else:
                cuts.append((offset + match.start(), "".join(reversed(stack))))
        offset += len(line) + 1
        if closed_at is not None:
            break
    text = "\n".join(parts)
    if closed_at is not None:
        try:
            return JsonBlock(end=end, value=json.loads(text[:closed_at]), parsed=True)
        except ValueError:
            return JsonBlock(end=end)
    for cut, closers in reversed(cuts):
        try:
            return JsonBlock(end=end, value=json.loads(text[:cut] + closers), parsed=True, repaired=True)
        except ValueError:
            continue
    return JsonBlock(end=end)
