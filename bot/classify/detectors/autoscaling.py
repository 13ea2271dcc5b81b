"""Why cluster-autoscaler added no node for a pending Pod, read from its own words.

cluster-autoscaler says it in two places. The NotTriggerScaleUp event on the Pod counts node groups
per reason (``pod didn't trigger scale-up: 1 max node group size reached, 2 node(s) had untolerated
taint {...}``; before about 1.12 with ``(it wouldn't fit if a new node is added)`` and often no
reasons). Its log names each group it rejected: ``Pod ns/x can't be scheduled on <group>, predicate
checking error: <reason>; predicateName=...`` (klog text or JSON lines), and in the 0.x/1.0 releases
``Scale-up predicate failed: PodFitsResources predicate mismatch, cannot put ns/x on
template-node-for-<group>-..., reason: Insufficient ...``. Both are read reason by reason with the
scheduler grammar, and one verdict per Pod says what stopped the scale-up:

- ``limit``: a group that could hold the Pod is at its maximum size, or a cluster-wide node, cpu
  or memory limit is reached; also the old bare "wouldn't fit" with no reasons, which the FAQ says
  covers groups at their maximum (cause 9);
- ``backoff``: the group that fits is in backoff after a failed scale-up (a cloud quota or
  stock-out; cause 9);
- ``template``: every group's template node lacks a GPU or other extended resource the Pod asks
  for, which for groups scaled to zero is what the template declares (cause 9);
- ``too-small``: the groups the Pod may use offer less cpu or memory than it asks for (cause 1);
- ``no-match``: every group was rejected by a selector, taint, affinity or volume zone (cause 2),
  reported as the answer only when nothing else is.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from bot.catalogue import Rule
from bot.classify.context import Context
from bot.classify.registry import Hit, detector
from bot.diagnosis import Evidence, Subject
from bot.facts import ScaleUpGroup
from bot.read.scheduler_message import (
    SCALE_UP_REFUSAL,
    insufficient_resource,
    parse_scale_up_refusal,
    parse_scheduler_message,
    reason_category,
)
from bot.snapshot.base import StrictRecord

Refusal = Literal["limit", "backoff", "template", "too-small", "no-match"]

# ``Pod ns/x can't be scheduled on <group>, predicate checking error: <reason>; predicateName=...``
_CANT_SCHEDULE = re.compile(
    r"Pod (?P<pod>[\w.-]+/[\w.-]+|[\w.-]+) can't be scheduled on (?P<group>\S+?),? "
    r"predicate checking error:\s*(?P<reason>[^;\"]+)"
)
# ``Scale-up predicate failed: X predicate mismatch, cannot put ns/x on template-node-for-g-1, reason: R``
_PREDICATE_MISMATCH = re.compile(
    r"predicate mismatch, cannot put (?P<pod>\S+) on (?P<group>\S+?),? reason:\s*(?P<reason>[^\"\n]+)"
)
_CONSTRAINTS = frozenset({"selector", "taint", "topology", "volume", "ports", "cordoned", "node-condition"})
_AFTER_RESOURCES = frozenset({"volume", "topology"})
_BASIC = frozenset({"cpu", "memory", "pods", "ephemeral-storage"})


class RefusalParams(StrictRecord):
    verdicts: list[Refusal]

    def __post_init__(self) -> None:
        if not self.verdicts:
            raise ValueError("verdicts: should have at least 1 item")


@dataclass
class _PodRefusal:
    namespace: str | None
    pod: str | None
    reasons: Counter[str] = field(default_factory=Counter)
    wouldnt_fit: bool = False
    whole: str | None = None
    evidence: list[Evidence] = field(default_factory=list)
    message: str = ""


def _split_pod(name: str) -> tuple[str | None, str]:
    namespace, sep, pod = name.partition("/")
    return (namespace, pod) if sep else (None, name)


def _collect(ctx: Context) -> list[_PodRefusal]:
    found: dict[tuple[str | None, str | None], _PodRefusal] = {}
    for event in ctx.events_that_may_match(SCALE_UP_REFUSAL):
        refusal = parse_scale_up_refusal(event.message)
        if refusal is None:
            continue
        key = (event.namespace, event.object_name)
        record = found.setdefault(key, _PodRefusal(event.namespace, event.object_name))
        # The latest event replaces the counts: each one is a full account of one loop.
        record.reasons = Counter(refusal.reasons)
        record.wouldnt_fit = record.wouldnt_fit or refusal.wouldnt_fit
        record.whole = refusal.whole or record.whole
        record.message = event.message
        if len(record.evidence) < 3:
            record.evidence.append(
                Evidence(source=f"event {event.reason or 'NotTriggerScaleUp'}", text=event.message)
            )
    for line in ctx.texts_that_may_match(_CANT_SCHEDULE, _PREDICATE_MISMATCH):
        if line.source == "event":
            continue
        match = _CANT_SCHEDULE.search(line.text) or _PREDICATE_MISMATCH.search(line.text)
        if match is None:
            continue
        namespace, pod = _split_pod(match.group("pod"))
        record = found.setdefault((namespace, pod), _PodRefusal(namespace, pod))
        record.reasons[match.group("reason").strip().rstrip(".")] += 1
        record.message = record.message or line.text
        if len(record.evidence) < 3:
            record.evidence.append(Evidence(source="cluster-autoscaler log", text=line.text[:600]))
    return list(found.values())


def refusal_verdicts(reasons: Counter[str], wouldnt_fit: bool, whole: str | None) -> list[Refusal]:
    """The readings of one Pod's refusal, the one that stopped the scale-up first."""
    if whole is not None and reason_category(whole) == "scale-limit":
        return ["limit"]
    categories: Counter[str] = Counter()
    extended = basic = False
    for reason, count in reasons.items():
        category = reason_category(reason)
        categories[category] += count
        resource = insufficient_resource(reason) if category == "resources" else None
        if resource is not None:
            extended = extended or resource not in _BASIC
            basic = basic or resource in _BASIC
    verdicts: list[Refusal] = []
    if categories["scale-limit"]:
        verdicts.append("limit")
    if categories["scale-backoff"]:
        verdicts.append("backoff")
    shortage: list[Refusal] = []
    if extended:
        shortage.append("template")
    if basic:
        shortage.append("too-small")
    constrained: list[Refusal] = ["no-match"] if any(categories[c] for c in _CONSTRAINTS) else []
    # As in kube-scheduler, volume and pod-affinity checks run after the resource check: a group
    # rejected by one of them had room for the Pod, so that constraint is what holds it.
    if any(categories[c] for c in _AFTER_RESOURCES):
        verdicts += constrained + shortage
    else:
        verdicts += shortage + constrained
    if not verdicts and wouldnt_fit:
        verdicts.append("limit")
    return verdicts


def _scheduler_categories(ctx: Context, record: _PodRefusal) -> set[str]:
    """What kube-scheduler said about the same Pod (a pasted message names none: any Pod's)."""
    categories: set[str] = set()
    for event in ctx.kube.events:
        if event.reason != "FailedScheduling" or (record.pod and event.object_name not in (None, record.pod)):
            continue
        parsed = parse_scheduler_message(event.message)
        if parsed is not None:
            _, reasons, prefilter = parsed
            categories |= {reason_category(r) for r in (*reasons, *([prefilter] if prefilter else []))}
    return categories


def _analyse(ctx: Context) -> list[tuple[_PodRefusal, list[Refusal]]]:
    analysed = []
    for record in _collect(ctx):
        verdicts = refusal_verdicts(record.reasons, record.wouldnt_fit, record.whole)
        # The bare "it wouldn't fit if a new node is added" is the autoscaler replaying the
        # scheduler's filters on a template node: when the scheduler says the Pod's volume (a
        # missing or unbound claim) or its spread or affinity holds it, no new node would take
        # it either, and that constraint is the answer, not a full node group.
        bare = verdicts == ["limit"] and not record.reasons and record.whole is None
        if bare and _scheduler_categories(ctx, record) & _AFTER_RESOURCES:
            verdicts = ["no-match"]
        if verdicts:
            analysed.append((record, verdicts))
    return analysed


@detector("autoscaler_refusal", ("pod", "message", "reasons", "resource"), RefusalParams)
def autoscaler_refusal(ctx: Context, rule: Rule) -> Iterable[Hit]:
    wanted = RefusalParams(**rule.params).verdicts
    for record, verdicts in ctx.memo("autoscaler_refusal", lambda: _analyse(ctx)):
        mine = [v for v in verdicts if v in wanted]
        if not mine:
            continue
        resources = sorted({r for reason in record.reasons if (r := insufficient_resource(reason))})
        subject = (
            Subject(kind="Pod", name=record.pod, namespace=record.namespace)
            if record.pod
            else Subject(kind="Text", name=None)
        )
        # A reading after the first is a second opinion on the same message.
        secondary = verdicts.index(mine[0]) > 0
        yield Hit(
            subject,
            tuple(record.evidence),
            {
                "pod": record.pod or "",
                "namespace": record.namespace or "",
                "message": record.message,
                "reasons": ", ".join(f"{count} {reason}" for reason, count in record.reasons.items())
                or (record.whole or "none-given"),
                "resource": ", ".join(resources),
            },
            "warning" if secondary else "critical",
        )


# GKE's cluster autoscaler also writes "visibility events" to Cloud Logging (the
# ``cluster-autoscaler-visibility`` log, and the console's notifications): each reason is a
# ``messageId`` with ``parameters``, e.g. ``no.scale.up.mig.failing.predicate`` with
# ``["NodeResourcesFit", "Insufficient cpu"]``. People paste the JSON, the YAML-ish console view
# (``messageId: "..."`` then ``parameters: [ 0: "nvidia-l4" ]``) or the id alone.
_MESSAGE_ID = re.compile(r"\b(?P<id>(?:no\.scale\.up|scale\.up\.error)\.[a-z0-9]+(?:\.[a-z0-9]+)*)\b")
_QUOTED = re.compile(r"\"(?P<value>(?:[^\"\\]|\\.)*)\"|'(?P<single>[^']*)'")
_PARAMETERS = re.compile(r"\bparameters\b\"?\s*[:=]?\s*\[?(?P<rest>.*)$", re.IGNORECASE)
_GKE_WINDOW = 8
GkeReading = Literal["no-scale-up", "pod-constraint", "pod-too-large"]

# The ids whose meaning is the Pod's own node constraints (a label value, machine family, compute
# class, CPU platform or architecture node auto-provisioning cannot create a node for), by prefix.
_GKE_POD_CONSTRAINT_IDS = (
    "no.scale.up.nap.pod.invalid.",
    "no.scale.up.nap.pod.machine.family.",
    "no.scale.up.nap.pod.compute.class.",
    "no.scale.up.nap.pod.autopilot.arch.",
    "no.scale.up.nap.pod.min.cpu.platform.",
    "no.scale.up.nap.pod.multiple.min.cpu.platforms",
    "no.scale.up.nap.pod.gpu.incompatible",
    "no.scale.up.nap.pod.gpu.request.invalid",
    "no.scale.up.nap.pod.gpu.failing.predicates",
    "no.scale.up.nap.pod.gpu.min.cpu.platform.",
    "no.scale.up.nap.pod.tpu.incompatible",
    "no.scale.up.nap.pod.tpu.accelerator.count.invalid",
    "no.scale.up.nap.pod.confidential.",
    "no.scale.up.nap.pod.workload.separation.",
    "no.scale.up.nap.pod.arch.",
    "no.scale.up.nap.pod.machine.config.invalid",
    "no.scale.up.nap.pod.missing.placement.policy",
    "no.scale.up.nap.npc.not.found",
    "no.scale.up.nap.ccc.not.found",
    "no.scale.up.nap.npc.pod.incompatible",
    "no.scale.up.nap.ccc.pod.incompatible",
    "no.scale.up.nap.npc.ccc.both.defined",
)
# Ids that carry a scheduler reason as a parameter: that reason decides.
_GKE_PREDICATE_IDS = ("no.scale.up.mig.failing.predicate", "no.scale.up.nap.pod.zonal.failing.predicates")


@dataclass
class _GkeMessage:
    message_id: str
    parameters: list[str]
    text: str


def gke_reading(message_id: str, parameters: Sequence[str]) -> GkeReading:
    """Which cause a GKE autoscaler message id (with its parameters) stands for."""
    if message_id in _GKE_PREDICATE_IDS:
        categories = {reason_category(p) for p in parameters}
        if "resources" in categories:
            return "pod-too-large"
        if categories & (_CONSTRAINTS | {"preemption"}) or message_id.startswith("no.scale.up.nap"):
            return "pod-constraint"
        return "no-scale-up"
    if message_id.startswith(_GKE_POD_CONSTRAINT_IDS):
        return "pod-constraint"
    return "no-scale-up"


_BARE_VALUE = re.compile(r"^\s*(?:\d+:\s*)?\"(?:[^\"\\]|\\.)*\"\s*,?\s*\]?\s*$")


def _values(line: str) -> list[str]:
    return [
        m.group("value") if m.group("value") is not None else m.group("single")
        for m in _QUOTED.finditer(line)
    ]


def _parameters(window: Sequence[str]) -> list[str]:
    """The values of the ``parameters`` list after a message id, up to its ``]``.

    The list may sit on the id's own line, start on a later ``parameters: [`` line, or (in
    pasted JSON whose repeated ``"parameters": [`` lines were folded into one) be only the quoted
    values on the lines that follow; a line with another key, an object brace or another id ends it.
    """
    values: list[str] = []
    started = False
    for index, line in enumerate(window):
        if index > 0 and _MESSAGE_ID.search(line):
            break
        if not started:
            match = _PARAMETERS.search(line)
            if match is not None:
                started, body = True, match.group("rest")
            elif index > 0 and _BARE_VALUE.match(line):
                started, body = True, line
            elif index > 0 and line.strip() not in ("", ",", "{", "}", "},", "]", "],") and ":" in line:
                break
            else:
                continue
        elif _BARE_VALUE.match(line):
            body = line
        else:
            break
        values += _values(body)
        if "]" in _QUOTED.sub("", body):
            break
    return [v for v in values if v][:8]


def _gke_messages(ctx: Context) -> list[_GkeMessage]:
    texts = [t.text for t in ctx.texts]
    found: list[_GkeMessage] = []
    seen: set[tuple[str, tuple[str, ...]]] = set()
    naming = ctx.lines_that_may_match(_MESSAGE_ID)
    for i, text in enumerate(texts):
        if i not in naming:
            continue
        for match in _MESSAGE_ID.finditer(text):
            message_id = match.group("id")
            window = [text[match.end() :], *texts[i + 1 : i + _GKE_WINDOW]]
            parameters = _parameters(window)
            key = (message_id, tuple(parameters))
            if key in seen:
                continue
            seen.add(key)
            found.append(_GkeMessage(message_id, parameters, text.strip()[:600]))
    return found


class GkeParams(StrictRecord):
    reading: GkeReading


@detector("gke_autoscaler_messages", ("message_id", "parameters", "messages"), GkeParams)
def gke_autoscaler_messages(ctx: Context, rule: Rule) -> Iterable[Hit]:
    """GKE cluster-autoscaler visibility reasons, one finding per reading with every id quoted."""
    wanted = GkeParams(**rule.params).reading
    mine = [
        m
        for m in ctx.memo("gke_autoscaler_messages", lambda: _gke_messages(ctx))
        if gke_reading(m.message_id, m.parameters) == wanted
    ]
    if not mine:
        return
    described = [
        f"{m.message_id} ({', '.join(m.parameters)})" if m.parameters else m.message_id for m in mine
    ]
    evidence = [Evidence(source="GKE cluster-autoscaler visibility event", text=m.text) for m in mine[:5]]
    yield Hit(
        Subject(kind="Text", name=None),
        tuple(evidence),
        {
            "message_id": mine[0].message_id,
            "parameters": ", ".join(mine[0].parameters) or "none-shown",
            "messages": "; ".join(dict.fromkeys(described)),
        },
    )


# cluster-autoscaler's TriggeredScaleUp event: ``pod triggered scale-up: [{<group> 0->1 (max: 1)}]``
# (one ``{group current->new (max: max)}`` per group it grew, ScaleUpInfo's String) and, before about
# 1.0, ``pod triggered scale-up, group: <group>, sizes (current/new): 3/4``. It says a node was asked
# for, not that one came: a Pod still Pending after it is waiting for the cloud to deliver.
_SCALE_UP_INFO = re.compile(r"\{(?P<group>\S+) (?P<current>\d+)->(?P<new>\d+) \(max: (?P<max>\d+)\)\}")
_SCALE_UP_OLD = re.compile(
    r"pod triggered scale-up, group: (?P<group>\S+?),? sizes \(current/new\): (?P<current>\d+)/(?P<new>\d+)"
)


@dataclass(frozen=True)
class ScaleUpAsk:
    group: str
    current: int
    new: int
    maximum: int | None

    def fact(self) -> ScaleUpGroup:
        """The ask as a finding's fact; the renderer words it (``g 1→2 (max 3)``)."""
        return ScaleUpGroup(self.group, self.current, self.new, self.maximum)


def parse_scale_up(message: str) -> list[ScaleUpAsk]:
    """The node groups a TriggeredScaleUp message grew, in either wording."""
    asks = [
        ScaleUpAsk(m.group("group"), int(m.group("current")), int(m.group("new")), int(m.group("max")))
        for m in _SCALE_UP_INFO.finditer(message)
    ]
    if not asks and (old := _SCALE_UP_OLD.search(message)):
        asks.append(ScaleUpAsk(old.group("group"), int(old.group("current")), int(old.group("new")), None))
    return asks


def _scheduled_later(ctx: Context, namespace: str | None, pod: str | None) -> bool:
    if pod is None:
        return False
    if any(e.reason == "Scheduled" for e in ctx.events_for(pod, namespace)):
        return True
    return any(
        p.name == pod and p.node_name and (namespace is None or p.namespace == namespace)
        for p in ctx.kube.pods
    )


@detector("autoscaler_scale_up_in_flight", ("pod", "namespace", "groups", "ceiling"))
def autoscaler_scale_up_in_flight(ctx: Context, rule: Rule) -> Iterable[Hit]:
    """cluster-autoscaler asked for nodes for a Pod the paste does not show scheduled afterwards."""
    seen: set[tuple[str | None, str | None]] = set()
    for event in ctx.kube.events:
        asks = parse_scale_up(event.message) if "triggered scale-up" in event.message else []
        key = (event.namespace, event.object_name)
        if not asks or key in seen or _scheduled_later(ctx, *key):
            continue
        seen.add(key)
        full = [a for a in asks if a.maximum is not None and a.new >= a.maximum]
        subject = (
            Subject(kind="Pod", name=event.object_name, namespace=event.namespace)
            if event.object_name
            else Subject(kind="Text", name=None)
        )
        yield Hit(
            subject,
            (Evidence(source=f"event {event.reason or 'TriggeredScaleUp'}", text=event.message),),
            {
                "pod": event.object_name or "",
                "namespace": event.namespace or "",
                "ceiling": ", ".join(a.group for a in full),
            },
            facts=tuple(ask.fact() for ask in asks),
        )
