"""``ray status`` blocks in a paste: where one starts and ends; the reading is shared.

The grammar of every layout (autoscaler v1 and v2, Ray 1.0 to now, ``-v``) lives in
:mod:`bot.read.ray_status_text`, which the live dashboard reader uses too, so a pasted status
and the same status read from a cluster give the same figures. This module only finds the block in
the paste (people cut it anywhere, lose its indentation, prefix every line, or run it onto one
line) and adds what the shared reader found to :class:`Found`. Lines the reader does not understand
are handed back, so the message reader still sees them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from bot.read.formats import Format, Tag
from bot.read.found import Found, RayStatusFigures
from bot.read.protocol import Block, Paste, Reader
from bot.read.ray_notation import parse_usage
from bot.read.ray_status_text import (
    HEADER,
    LEGACY_HEADER,
    TIMING,
    TITLES,
    find_entries,
    parse_status_text,
    section_of,
)

FORMAT = Format("ray status", Tag.RAY_STATUS)

_DASHES = re.compile(r"^\s*[-=]{3,}\s*$")
_COUNT_NAME = re.compile(r"^(\d+)\s+(\S+)\s*$")
_DEMAND_LINE = re.compile(r"^\{[^{}]*\}\s*[:*]")
# A ``Recent failures:`` entry as both autoscalers format it (v1 ``util.py``, v2 ``utils.py``):
# `` <type>: NodeTerminated (ip: <ip>)``, `` <type>: NodeTerminated (instance_id: <id>)``,
# `` <type>: <category> (latest_attempt: HH:MM:SS)[ - <details>]``. A section cut above its titles
# that starts with one is a status block, as a ``Demands:`` section starting with a demand is.
_FAILURE_ENTRY = re.compile(r"^\s*[^\s:]+:\s*[A-Z]\w*\s+\((?:ip|instance_id|latest_attempt):\s")
# A header may follow a short prefix on the same line (``0: `` from ``srun -l``, a prompt); in a
# status run onto one long line it may follow anything.
_MAX_PREFIX = 40
_FLATTENED = 200


def _header_at(line: str) -> re.Match[str] | None:
    match = HEADER.search(line)
    if match and (match.start() <= _MAX_PREFIX or len(line) > _FLATTENED):
        return match
    return None


def is_start(lines: Sequence[str], i: int) -> bool:
    line = lines[i]
    if _header_at(line) or LEGACY_HEADER.match(line.strip()):
        return True
    title = line.strip().lower()
    following = lines[i + 1] if i + 1 < len(lines) else ""
    if title in TITLES:
        return bool(_DASHES.match(following))
    # Cut above its titles: a ``Usage:`` or ``Demands:`` section whose first line is one of its own.
    kind = section_of(line.strip())
    if kind == "usage":
        return parse_usage(following.strip()) is not None
    if kind in {"demands", "constraints"}:
        return bool(find_entries(following))
    if kind == "failures":
        return bool(_FAILURE_ENTRY.match(following))
    return False


def _prefix(line: str) -> str:
    match = _header_at(line)
    prefix = line[: match.start()] if match else ""
    # Without its trailing space: a quoted blank line is a bare ``>``.
    return prefix.rstrip() if prefix.strip() and len(prefix) <= _MAX_PREFIX else ""


def _belongs(stripped: str) -> bool:
    """Whether an unindented line can still be part of a ``ray status`` block."""
    lower = stripped.lower()
    return bool(
        HEADER.match(stripped)
        or LEGACY_HEADER.match(stripped)
        or _DASHES.match(stripped)
        or lower in TITLES
        or section_of(stripped)
        or lower.startswith(TIMING)
        or stripped.startswith(("Node: ", "(no ", "(none)", "- ", "Id: "))
        or _DEMAND_LINE.match(stripped)
        or parse_usage(stripped)
        or _COUNT_NAME.match(stripped)
        or lower.startswith("idle:")
    )


def extent(lines: Sequence[str], start: int) -> int:
    prefix = _prefix(lines[start])
    end = start + 1
    last_content = start
    # Pending nodes, failures and node activity are free text; they belong while their list runs
    # unbroken. An indented line belongs when it continues the lines above it; after a blank line
    # it must look like status content, or an indented snippet pasted below would be swallowed.
    free_text = False
    while end < len(lines):
        line = lines[end]
        if prefix and line.startswith(prefix):
            line = line[len(prefix) :]
        if not line.strip():
            free_text = False
            end += 1
            continue
        section = section_of(line.strip())
        continues = line[:1].isspace() and end == last_content + 1
        if section is not None:
            free_text = section in {"pending", "failures", "activity"}
        elif not (continues or free_text or _belongs(line.strip())):
            break
        last_content = end
        end += 1
    return last_content + 1


def _merged(earlier: RayStatusFigures | None, later: RayStatusFigures) -> RayStatusFigures:
    """A later block wins field by field; a status split by other text keeps both halves."""
    if earlier is None:
        return later
    return RayStatusFigures(
        totals=later.totals or earlier.totals,
        used=later.used or earlier.used,
        node_count=later.node_count if later.node_count is not None else earlier.node_count,
        node_groups=later.node_groups or earlier.node_groups,
        pending_nodes=later.pending_nodes or earlier.pending_nodes,
        recent_failures=later.recent_failures or earlier.recent_failures,
        reserved=later.reserved or earlier.reserved,
        reserved_used=later.reserved_used or earlier.reserved_used,
        hides_accelerator_types=later.hides_accelerator_types
        if later.totals
        else earlier.hides_accelerator_types,
    )


def parse(lines: Sequence[str], found: Found) -> list[str]:
    """Add the figures of one ``ray status`` block to ``found``; return the lines not understood."""
    status = parse_status_text(lines)
    for demand in status.demands:
        found.add_demand(demand)
    for constraint in status.constraints:
        found.add_constraint(constraint)
    for node in status.nodes:
        found.add_ray_node(node)
    figures = RayStatusFigures(
        totals=status.totals,
        used=status.used,
        node_count=status.node_count,
        node_groups=status.node_groups,
        pending_nodes=status.pending_nodes,
        recent_failures=status.recent_failures,
        reserved=status.reserved,
        reserved_used=status.reserved_used,
        hides_accelerator_types=bool(status.totals)
        and not status.verbose
        and not any(name.startswith("accelerator_type:") for name in status.totals),
    )
    if status.recognised or status.nodes:
        found.ray_status = _merged(found.ray_status, figures)
        found.recognise(FORMAT)
    return status.leftover


def _read(lines: Sequence[str], i: int, paste: Paste) -> Block:
    end = extent(lines, i)
    return Block(end, leftover=parse(lines[i:end], paste.found))


READER = Reader("ray-status", starts=is_start, read=_read)
