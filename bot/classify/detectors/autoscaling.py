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
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from bot.catalogue import Rule
from bot.classify.context import Context
from bot.classify.fit import insufficient_resource, parse_scale_up_refusal, reason_category
from bot.classify.registry import Hit, detector
from bot.diagnosis import Evidence, Subject

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


class RefusalParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    verdicts: list[Refusal] = Field(min_length=1)


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
    for event in ctx.kube.events:
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
    for line in ctx.iter_texts():
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


def _analyse(ctx: Context) -> list[tuple[_PodRefusal, list[Refusal]]]:
    return [
        (r, verdicts)
        for r in _collect(ctx)
        if (verdicts := refusal_verdicts(r.reasons, r.wouldnt_fit, r.whole))
    ]


@detector("autoscaler_refusal", ("pod", "message", "reasons", "resource"), RefusalParams)
def autoscaler_refusal(ctx: Context, rule: Rule) -> Iterable[Hit]:
    wanted = RefusalParams.model_validate(rule.params).verdicts
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
                or (record.whole or "none given"),
                "resource": ", ".join(resources),
            },
            "warning" if secondary else "critical",
        )
