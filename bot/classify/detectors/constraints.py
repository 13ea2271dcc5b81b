"""``request_resources()`` constraints the autoscaler says it can never build.

A constraint is no work waiting (see :class:`bot.snapshot.ray.ResourceConstraint`), so the demand
rules never judge it. But it is what the user asked the autoscaler for: a floor of ``count``
bundles of ``shape``. Autoscaler v2 reports one it cannot place with ``No available node types can
fulfill cluster constraint: {...}*N`` (``event_logger.py``), read as an infeasible constraint.

v2 tries the constraint's bundles as a set against the node types and their worker ceilings
(``ResourceDemandScheduler._enforce_resource_constraints``), so "infeasible" has two readings: a
bundle no node type can hold (the request can never be satisfied, cause 6), or bundles each some
type holds but too many for the types' ceilings (a ceiling, cause 9's ground, not this rule's).
Where the paste shows node types, worker groups or the Ray nodes' totals, the detector tells them
apart: a shape one of them holds is no shape problem. Where it shows none, only a constraint of one
bundle is judged: v2 places the constraint on the cluster as if empty plus the nodes it may add, so
one bundle that does not fit means no node and no node type can hold it, the catalogue's cause 6.
Several bundles may fail on the ceilings alone, and nothing in the paste says which: left unjudged.
"""

from __future__ import annotations

from collections.abc import Iterable

from bot.catalogue import Rule
from bot.classify.context import Context
from bot.classify.detectors.ray_resources import _templates, fits, format_shape
from bot.classify.registry import Hit, detector
from bot.diagnosis import Evidence, Subject
from bot.snapshot.base import StrictRecord


class ConstraintParams(StrictRecord):
    pass


@detector("constraint_never_fits", ("request", "count", "node_types"), ConstraintParams)
def constraint_never_fits(ctx: Context, rule: Rule) -> Iterable[Hit]:
    ray = ctx.ray
    if ray is None:
        return
    infeasible = [c for c in ray.constraints if c.infeasible and c.shape]
    if not infeasible:
        return
    templates = _templates(ctx)
    holders = [t.resources for t in templates] + [n.resources_total for n in ray.nodes if n.resources_total]
    bundles = sum(c.count for c in infeasible)
    for constraint in infeasible:
        # A bundle some template or node holds: the set failed on the ceilings, not on a shape.
        if any(fits(have, constraint.shape) for have in holders):
            continue
        if not holders and bundles > 1:
            continue
        request = format_shape(constraint.shape)
        quoted = str(constraint.source_text or f"{request} * {constraint.count}")
        yield Hit(
            Subject(kind="RayAutoscaler", name=ctx.cluster),
            (Evidence(source="ray autoscaler: request_resources() constraint", text=quoted[:600]),),
            {
                "request": request,
                "count": str(constraint.count),
                "node_types": ", ".join(f"{t.name} {format_shape(t.resources)}" for t in templates[:8])
                or "-",
            },
        )
