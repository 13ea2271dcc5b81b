"""Pods the scheduler placed but the kubelet refused, evicted or stopped (see bot.read.kubelet_message).

The same verdict arrives three ways: on the Pod (``status.reason``/``status.message``, from
``-o yaml``, ``describe pod`` or a ``get pods`` row), as the kubelet's Warning event, or as a loose
line of a paste. They are joined per Pod so a describe output that shows both gives one finding.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from bot.catalogue import Rule
from bot.classify.context import RAY_CLUSTER_LABEL, Context
from bot.classify.registry import Hit, detector
from bot.diagnosis import Evidence, Subject
from bot.read import kubelet_message as kubelet
from bot.snapshot.base import StrictRecord
from bot.snapshot.kubernetes import Pod

MAX_EVIDENCE = 4
# An event text is ``<reason>: <message>``; the reason is one word.
_EVENT_REASON = re.compile(r"^(?P<reason>[A-Za-z][\w./-]*): (?P<message>.*)$", re.DOTALL)


class KubeletParams(StrictRecord):
    verdicts: list[kubelet.KubeletKind]

    def __post_init__(self) -> None:
        if not self.verdicts:
            raise ValueError("verdicts: should have at least 1 item")


_Found = dict[
    tuple[str | None, str | None], tuple[kubelet.KubeletVerdict, Subject, dict[str, str], list[Evidence]]
]


def _verdicts(ctx: Context) -> _Found:
    found: _Found = {}

    def add(
        verdict: kubelet.KubeletVerdict, subject: Subject, facts: dict[str, str], quote: Evidence
    ) -> None:
        key = (subject.name, subject.namespace)
        entry = found.get(key)
        if entry is None:
            found[key] = (verdict, subject, facts, [quote])
        elif len(entry[3]) < MAX_EVIDENCE and quote not in entry[3]:
            entry[3].append(quote)

    pods: dict[tuple[str, str], Pod] | None = None  # built when a line first needs its Pod
    for pod in ctx.pods_with_status:
        message = str(pod.status_message) if pod.status_message else None
        if not pod.status_reason and not message:
            continue
        init = frozenset(c.name for c in pod.init_containers)
        verdict = kubelet.read(pod.status_reason, message, init)
        if verdict is None:
            continue
        subject = Subject(kind="Pod", name=pod.name, namespace=pod.namespace)
        facts = {
            "pod": pod.name,
            "namespace": pod.namespace,
            "node": pod.node_name or "",
            "raycluster": pod.labels.get(RAY_CLUSTER_LABEL, ""),
        }
        shown = " ".join(part for part in (pod.status_reason or "", message or "") if part)
        add(verdict, subject, facts, Evidence(source=f"pod {pod.name} status", text=shown))
    worded = ctx.lines_that_may_match(*kubelet.WORDING)
    for position, text in enumerate(ctx.texts):
        # Events are read by their reason too (a ``get events`` row may cut the message short);
        # a line that has neither the kubelet's words nor one of its reasons is passed at once.
        if position not in worded and not (
            text.source == "event" and kubelet.decisive_reason(text.text.partition(": ")[0])
        ):
            continue
        line = text.text[:4000]
        if text.source != "event" and not kubelet.SIGNAL.search(line):
            continue
        reason: str | None = None
        message = line
        if text.source == "event" and (event := _EVENT_REASON.match(line)):
            reason, message = event.group("reason"), event.group("message")
        # Whether there is a verdict does not depend on the Pod's init containers (only which kind
        # of GPU failure it is), so the Pod is looked up for the few lines that have one.
        verdict = kubelet.read(reason, message)
        if verdict is None:
            continue
        owner = None
        if text.pod:
            if pods is None:
                pods = {(p.name, p.namespace): p for p in ctx.kube.pods}
            owner = pods.get((text.pod, text.namespace or "default"))
        if owner is not None and owner.init_containers:
            init = frozenset(c.name for c in owner.init_containers)
            verdict = kubelet.read(reason, message, init) or verdict
        if text.pod:
            subject = Subject(kind="Pod", name=text.pod, namespace=text.namespace)
        else:
            subject = Subject(kind="Text", name=None)
        facts = {
            "pod": text.pod or "",
            "namespace": text.namespace or "",
            "node": (owner.node_name or "") if owner else "",
            "raycluster": owner.labels.get(RAY_CLUSTER_LABEL, "") if owner else "",
        }
        add(verdict, subject, facts, Evidence(source=text.source, text=line[:600]))
    return _join_unnamed(found)


def _join_unnamed(found: _Found) -> _Found:
    """A loose line that names no Pod (the ``Message:`` line pasted under a ``get pods`` row) joins
    the one Pod with the same verdict, rather than being reported twice."""
    for key, (verdict, subject, _facts, evidence) in list(found.items()):
        if subject.kind != "Text":
            continue
        same = [entry for entry in found.values() if entry[1].kind == "Pod" and entry[0].kind == verdict.kind]
        if len(same) == 1:
            pod_verdict, pod_subject, pod_facts, pod_evidence = same[0]
            pod_evidence.extend(e for e in evidence if e not in pod_evidence)
            if not pod_verdict.message:
                found[(pod_subject.name, pod_subject.namespace)] = (
                    verdict,
                    pod_subject,
                    pod_facts,
                    pod_evidence,
                )
            del found[key]
    return found


@detector(
    "kubelet_verdicts",
    (
        "pod",
        "node",
        "reason",
        "message",
        "resource",
        "container",
        "requested",
        "used",
        "capacity",
        "raycluster",
    ),
    KubeletParams,
)
def kubelet_verdicts(ctx: Context, rule: Rule) -> Iterable[Hit]:
    wanted = set(KubeletParams(**rule.params).verdicts)
    for verdict, subject, facts, evidence in ctx.memo("kubelet_verdicts", lambda: _verdicts(ctx)).values():
        if verdict.kind not in wanted:
            continue
        yield Hit(
            subject,
            tuple(evidence),
            {
                **facts,
                "reason": verdict.reason,
                "message": verdict.message[:600],
                "resource": verdict.resource,
                "container": verdict.container,
                "requested": verdict.requested,
                "used": verdict.used,
                "capacity": verdict.capacity,
            },
        )
