"""The cluster summary that Ray's cluster quick-start script prints, and its home-made variants.

Ray's cluster guide (1.x on) has a ``script.py`` that ends with::

    print('''This cluster consists of
        {} nodes in total
        {} CPU resources in total
    '''.format(len(ray.nodes()), ray.cluster_resources()['CPU']))

People run it on their cluster and paste what it printed, often after adding lines of their own
for other resources (``40.0 GPU resources in total``) or for what is free
(``3.0/4.0 GPU resources available``, from ``ray.available_resources()``). The figures are the
cluster's totals (``ray.cluster_resources()``) and node count; ``len(ray.nodes())`` counts dead
nodes too, so the count is what Ray remembers, an upper bound on the live ones. Only the resources
the script chose are printed, so a resource left out says nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from bot.read.formats import Format, Tag
from bot.read.found import Found, RayStatusFigures
from bot.read.protocol import Block, Paste, Reader
from bot.read.ray_notation import parse_amount

FORMAT = Format("ray cluster summary printout", Tag.RAY_API_OUTPUT)

_HEADER = re.compile(r"\bThis cluster consists of\s*:?\s*$")
_NODES = re.compile(r"^\s*(\d{1,6})\s+nodes?\s+in\s+total\s*$", re.IGNORECASE)
_NUMBER = r"(\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)"
_TOTAL = re.compile(rf"^\s*{_NUMBER}\s+(\S+)\s+resources?\s+in\s+total\s*$", re.IGNORECASE)
_AVAILABLE = re.compile(rf"^\s*{_NUMBER}\s*/\s*{_NUMBER}\s+(\S+)\s+resources?\s+available\s*$", re.IGNORECASE)
_MAX_ITEMS = 50


def is_start(lines: Sequence[str], i: int) -> bool:
    return len(lines[i]) <= 400 and bool(_HEADER.search(lines[i]))


def read(lines: Sequence[str], start: int, found: Found) -> int:
    """Read the summary at ``lines[start]``; return the index after it."""
    node_count: int | None = None
    totals: dict[str, float] = {}
    used: dict[str, float] = {}
    end = start + 1
    while end < len(lines) and end - start <= _MAX_ITEMS:
        line = lines[end]
        if nodes := _NODES.match(line):
            node_count = int(nodes.group(1))
        elif total := _TOTAL.match(line):
            amount = parse_amount(total.group(1))
            if amount is not None:
                totals[total.group(2)] = amount
        elif available := _AVAILABLE.match(line):
            free, whole = parse_amount(available.group(1)), parse_amount(available.group(2))
            if free is not None and whole is not None:
                totals[available.group(3)] = whole
                used[available.group(3)] = max(whole - free, 0.0)
        else:
            break
        end += 1
    if node_count is None and not totals:
        found.add_text(lines[start])  # a sentence that happens to begin the same way
        return start + 1
    figures = found.ray_status or RayStatusFigures()
    if node_count is not None:
        figures.node_count = node_count
    if totals:
        figures.totals = {**figures.totals, **totals}
        figures.used = {**figures.used, **used}
        figures.hides_accelerator_types = True
    found.ray_status = figures
    found.recognise(FORMAT)
    return end


def _read(lines: Sequence[str], i: int, paste: Paste) -> Block:
    return Block(read(lines, i, paste.found))


READER = Reader("ray-cluster-summary", starts=is_start, read=_read)
