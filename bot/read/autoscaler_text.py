"""The autoscaler's "No available node types can fulfill ..." messages: what it says it cannot place.

The dashboard's ``cluster_events`` carry them as free text and drivers echo them (``(autoscaler +5s)
Error: ...``), so live snapshots and pastes read them here. Autoscaler v1 writes one message per
shape (``resource request {...}``; a STRICT_PACK group as the ``defaultdict`` of its summed
bundles); v2 lists several with their counts (``resource requests {...}*1, ...``), writes placement
groups apart (``placement group requests (detail=...): {...}*2``) and ``request_resources()``
constraints as ``cluster constraint: {...}*1``. Maps are Python dict reprs or C++ maps
(:mod:`bot.read.ray_notation`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from bot.read.ray_notation import MAX_BUNDLES, find_maps, fold_resources

INFEASIBLE_EVENT = "No available node types can fulfill"
# Past this many different shapes a message says nothing more worth reading.
_MAX_SHAPES = 50


@dataclass(frozen=True)
class InfeasibleRequests:
    """What one message says no node type can hold.

    ``shapes``: each different shape once, with how many requests ask it; ``bundles``: the bundles
    of one placement group. A placement-group message gives only bundles, any other only shapes.
    ``constraint``: the shapes are a ``request_resources()`` constraint (v2's ``cluster constraint:``),
    which no work waits on: the set as a whole did not fit, not each shape.
    """

    shapes: list[tuple[dict[str, float], int]] = field(default_factory=list)
    bundles: list[dict[str, float]] = field(default_factory=list)
    constraint: bool = False


def _printed_maps(text: str) -> list[tuple[dict[str, float], int]]:
    """``{'GPU': 1.0} * 2, {'CPU': 1.0}`` (also C++ ``{GPU: 1.000000}``) -> (map, times) pairs."""
    return [
        (shape, found.times or 1)
        for found in find_maps(text)
        if (shape := fold_resources(found.shape.items()))
    ]


def printed_bundles(text: str) -> list[dict[str, float]]:
    """``{'GPU': 1.0} * 2, {'CPU': 1.0}`` (also ``*2`` without spaces) -> one map per bundle."""
    bundles: list[dict[str, float]] = []
    for shape, times in _printed_maps(text):
        bundles += [shape] * min(times, MAX_BUNDLES - len(bundles))
    return bundles


def counted_shapes(text: str) -> list[tuple[dict[str, float], int]]:
    """Every different map in ``text`` once, with how many requests ask it (``* N`` summed)."""
    counts: dict[str, tuple[dict[str, float], int]] = {}
    for shape, times in _printed_maps(text):
        key = repr(sorted(shape.items()))
        if key not in counts and len(counts) >= _MAX_SHAPES:
            break
        first, count = counts.get(key, (shape, 0))
        counts[key] = (first, count + times)
    return list(counts.values())


def infeasible_requests(message: str) -> InfeasibleRequests:
    """What one message says no node type can hold; empty when it is not such a message.

    Only what follows the message's opening words is read (a log prefix before them is not part of
    it), up to ``. Add suitable node types``.
    """
    at = message.find(INFEASIBLE_EVENT)
    if at < 0:
        return InfeasibleRequests()
    message = message[at:].partition(". Add suitable")[0]
    if "placement group requests" in message:
        return InfeasibleRequests(bundles=printed_bundles(message.partition("):")[2]))
    if message[len(INFEASIBLE_EVENT) :].lstrip().startswith("cluster constraint"):
        return InfeasibleRequests(shapes=counted_shapes(message), constraint=True)
    return InfeasibleRequests(shapes=counted_shapes(message))
