"""Rules over the symptoms a person says they see (``Stated.symptoms``) and the per-unit GPU asks
they state (``Stated.demands``), joined with what the tools in the same paste showed.

A statement is a retelling: it points at a cause, at most as a warning, always quoted as the user's
words, and its rule names the command whose output settles it. Where the paste already holds that
output, the output decides and the statement stays quiet: Ray's own GPU figures above zero outrank
"Ray does not see my GPUs", a node list outranks "the node shows no nvidia.com/gpu", the
autoscaler's events outrank "the node group does not scale up", Serve's status outranks "the replica
fails in its constructor" (the rules of that output judge it, and rules of the same question also
``supersedes`` these). A figure the tools show that agrees with the words is quoted beside them.

Which rule owns which kind is data: each rule's ``params.kinds`` lists the kinds of
:data:`bot.snapshot.stated.SymptomKind` it reports, so one sentence has one owner.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import field

from bot.catalogue import Rule
from bot.classify.context import Context
from bot.classify.detectors.stated import stated_evidence, stated_node_gpus
from bot.classify.registry import Hit, detector
from bot.diagnosis import Evidence, Subject
from bot.read.loose_lines import MESSAGES_FORMAT
from bot.read.prose import STATED_FORMAT
from bot.snapshot.base import StrictRecord
from bot.snapshot.stated import StatedSymptom, SymptomKind

__all__ = ["stated_demand_exceeds_node", "stated_symptom"]

_MAX_EVIDENCE = 3
_MAX_QUOTE = 600
# The kinds that name a cause; a "pending" with nothing else said is reported only when none of them is.
_OPEN_KINDS: frozenset[str] = frozenset({"pod-pending", "ray-work-pending"})
# The kinds that name a layer, each with the open kind ("gpus-unseen", "gpus-busy") it settles.
_FAMILY: dict[str, str] = {
    "gpus-not-exposed": "gpus-unseen",
    "gpus-not-registered": "gpus-unseen",
    "gpus-busy-kubernetes": "gpus-busy",
    "gpus-busy-ray": "gpus-busy",
}
# Autoscaler events whose reasons say why a node group did or did not grow.
_SCALING_REASONS = frozenset({"NotTriggerScaleUp", "TriggeredScaleUp", "FailedScaleUp", "ScaleUpTimedOut"})


class SymptomParams(StrictRecord):
    kinds: list[SymptomKind] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.kinds:
            raise ValueError("kinds: should have at least 1 item")


def _ray_gpus_shown(ctx: Context) -> float | None:
    return ctx.ray_gpus_registered


def _autoscaler_spoke(ctx: Context) -> bool:
    events = ctx.kube.events if ctx.has_kubernetes else []
    return any(
        event.reason in _SCALING_REASONS or "karpenter" in (event.source or "").lower() for event in events
    )


# For each kind: whether the tools' output in the paste settles the question (the statement then
# stays quiet), and what that output shows that agrees with the words (quoted beside them).
_Settled = Callable[[Context], bool]
_SETTLED: dict[str, _Settled] = {
    # Both layers shown: the rules that compare Running Pods with Ray's nodes judge the join.
    "cannot-connect": lambda ctx: bool(ctx.ray_pods) and ctx.ray_node_count is not None,
    # Numbers on two sides: the version rules compare them.
    "versions-differ": lambda ctx: bool(
        ctx.snapshot.stated and len({v.side for v in ctx.snapshot.stated.versions}) >= 2
    ),
    "gpus-not-registered": lambda ctx: (_ray_gpus_shown(ctx) or 0.0) > 0,
    "gpus-not-exposed": lambda ctx: bool(ctx.has_kubernetes and ctx.kube.nodes),
    "gpus-busy-kubernetes": lambda ctx: bool(ctx.has_kubernetes and ctx.kube.nodes),
    "gpus-busy-ray": lambda ctx: bool(ctx.ray and (ctx.ray.totals or ctx.ray_nodes)),
    "not-scaling": _autoscaler_spoke,
    "app-start-error": lambda ctx: bool(ctx.ray and ctx.ray.serve_applications),
}


def _agreeing(ctx: Context, kind: str) -> Evidence | None:
    """A figure of the tools' own that says the same as the words."""
    if kind == "gpus-not-registered" and _ray_gpus_shown(ctx) == 0.0:
        return Evidence(
            source="ray status",
            text="Ray registers 0 GPU",
            phrase="evidence.ray_gpus_registered",
            values={"count": "0"},
        )
    return None


def _nothing_else_shown(ctx: Context) -> bool:
    """Whether the paste holds no tool output at all (no format recognised but the person's words):
    only then is a bare "pending" worth a note."""
    stated = ctx.snapshot.stated
    said_more = bool(stated and (stated.versions or stated.join_gaps or stated.demands))
    # Prose lines that merely look like messages ("stuck", "pending") are the same words, not output.
    words = {STATED_FORMAT.label, MESSAGES_FORMAT.label}
    other_output = any(note not in words for note in ctx.snapshot.notes)
    return not (ctx.has_kubernetes or ctx.ray is not None or said_more or other_output)


@detector("stated_symptom", ("kind", "quote"), SymptomParams)
def stated_symptom(ctx: Context, rule: Rule) -> Iterable[Hit]:
    """The symptoms of this rule's kinds that the person states, unless the paste's output settles them."""
    stated = ctx.snapshot.stated
    if stated is None or not stated.symptoms:
        return
    params = SymptomParams(**rule.params)
    kinds = set(params.kinds)
    said = [s for s in stated.symptoms if s.kind in kinds]
    if not said:
        return
    if kinds & _OPEN_KINDS:
        named = any(s.kind not in _OPEN_KINDS for s in stated.symptoms)
        if named or not _nothing_else_shown(ctx):
            return
    # An open kind whose layer another sentence of the paste names is that sentence's to report.
    settled_open = {_FAMILY[s.kind] for s in stated.symptoms if s.kind in _FAMILY}
    said = [s for s in said if s.kind not in settled_open]
    by_kind: dict[SymptomKind, list[StatedSymptom]] = {}
    for symptom in said:
        by_kind.setdefault(symptom.kind, []).append(symptom)
    for kind, symptoms in by_kind.items():
        settled = _SETTLED.get(kind)
        if settled is not None and settled(ctx):
            continue
        evidence = [stated_evidence(s.quote) for s in symptoms[:_MAX_EVIDENCE]]
        if (agreeing := _agreeing(ctx, kind)) is not None:
            evidence.append(agreeing)
        yield Hit(
            Subject(kind="Text", name=kind),
            tuple(evidence),
            {"kind": kind, "quote": symptoms[0].quote[:_MAX_QUOTE]},
        )


def _one_node_most(ctx: Context) -> tuple[float, Evidence] | None:
    """The most GPUs one node holds, from the tools' output when the paste has it, else from the
    person's words; with the evidence for it."""
    if ctx.ray_nodes:
        most = max(n.resources_total.get("GPU", 0.0) for n in ctx.ray_nodes)
        return most, Evidence(
            source="ray nodes",
            text=f"largest node: {most:g} GPU",
            phrase="evidence.largest_node_gpus",
            values={"count": f"{most:g}"},
        )
    gpu_nodes = ctx.gpu_nodes if ctx.has_kubernetes else []
    offered = [n.allocatable.get("nvidia.com/gpu", 0.0) for n in gpu_nodes]
    if offered and max(offered) > 0:
        most = max(offered)
        return most, Evidence(
            source="kubernetes nodes",
            text=f"largest node: {most:g} nvidia.com/gpu",
            phrase="evidence.largest_node_gpus",
            values={"count": f"{most:g}"},
        )
    stated = stated_node_gpus(ctx)
    if stated is not None:
        return stated.gpus, stated_evidence(stated.quote)
    return None


@detector("stated_demand_exceeds_node", ("needed", "total"))
def stated_demand_exceeds_node(ctx: Context, rule: Rule) -> Iterable[Hit]:
    """A per-unit GPU ask the person states that is larger than every node they show or describe."""
    stated = ctx.snapshot.stated
    if stated is None or not stated.demands:
        return
    if ctx.ray and any(d.shape.get("GPU") for d in (*ctx.ray.demands, *ctx.ray.declared_demands)):
        return  # the demands Ray or the pasted code show are judged by the demand rules
    largest = _one_node_most(ctx)
    total = ctx.ray.totals.get("GPU") if ctx.ray and ctx.ray.totals else None
    if largest is None and total:
        # Only cluster totals: an ask above the whole cluster is above every node too.
        largest = (
            total,
            Evidence(
                source="ray status",
                text=f"{total:g} GPU in the cluster",
                phrase="evidence.cluster_gpus",
                values={"count": f"{total:g}"},
            ),
        )
    if largest is None or largest[0] <= 0:
        return  # no GPU anywhere is a question of GPUs not registered, not of a too-large ask
    most, where = largest
    demand = max(stated.demands, key=lambda d: d.gpus)
    if demand.gpus <= most:
        return
    yield Hit(
        Subject(kind="Text", name="stated-demand"),
        (stated_evidence(demand.quote), where),
        {"needed": f"{demand.gpus:g}", "total": f"{most:g}"},
    )
