"""Kubernetes events, from tables, from loose lines, and from bare scheduler messages.

Events reach a paste in four shapes:

* ``kubectl get events`` tables: ``LAST SEEN TYPE REASON OBJECT MESSAGE`` (kubectl 1.14+, with an
  optional NAMESPACE column), ``LAST SEEN FIRST SEEN COUNT NAME KIND SUBOBJECT TYPE REASON SOURCE
  MESSAGE`` (older kubectl) and the ``-o wide`` order; read by header position;
* the Events section of ``kubectl describe``: ``Type Reason Age From Message``, where Age may be
  ``2m21s (x42 over 60m)`` and long messages continue on following lines;
* single rows copied out of either, often without the Type column;
* the bare message, the part people quote in an issue title: ``0/3 nodes are available: 3
  Insufficient nvidia.com/gpu.`` or ``pod didn't trigger scale-up: …``. Only kube-scheduler and
  cluster-autoscaler write those sentences, so they are events even without a row around them.

An event whose object is not named is left unattached here; ``assemble`` attaches it when the
paste holds exactly one pod it could be about.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from bot.read.columns import Column, header_columns, slice_row
from bot.read.counts import count_or
from bot.read.formats import Format, Tag
from bot.read.found import Found
from bot.read.protocol import Block, Paste, Reader
from bot.read.scheduler_message import quoted_reasons
from bot.snapshot.kubernetes import Event

TABLE_FORMAT = Format("kubectl get events", Tag.KUBECTL_EVENTS)
LINE_FORMAT = Format("kubernetes event line", Tag.KUBECTL_EVENTS)
SCHEDULER_FORMAT = Format("scheduler message", Tag.SCHEDULER_MESSAGE)
AUTOSCALER_FORMAT = Format("cluster-autoscaler message", Tag.CLUSTER_AUTOSCALER_EVENT)
KARPENTER_FORMAT = Format("karpenter message", Tag.KARPENTER)

_AGE = r"(?:<unknown>|<invalid>|\d+(?:\.\d+)?[smhdy](?:\d+[smhdy])*)"
_COUNT = rf"\(x(?P<count>\d+) over {_AGE}\)"
# Reasons are CamelCase words, except the kubelet's admission refusal for an extended resource: it
# appends the resource name to ``OutOf`` (``OutOfnvidia.com/gpu``, pkg/kubelet/lifecycle/predicate.go).
_REASON = r"OutOf[a-z0-9][\w.-]*/[\w.-]+|[A-Z][A-Za-z0-9]+"
_DESCRIBE_ROW = re.compile(
    rf"^\s*(?:(?P<type>Normal|Warning)\s+)?(?P<reason>{_REASON})\s+{_AGE}(?:\s+{_COUNT})?\s+"
    r"(?P<source>[a-z][\w.-]*(?:, [\w.-]+)?)\s+(?P<message>\S.*)$"
)
_GET_ROW = re.compile(
    rf"^\s*(?:(?P<ns>[a-z0-9][-a-z0-9.]*)\s+)?{_AGE}(?:\s+{_COUNT})?\s+(?P<type>Normal|Warning)\s+"
    rf"(?P<reason>{_REASON})\s+(?P<object>[a-zA-Z][\w.-]*/[\w.:-]+)\s+(?P<message>\S.*)$"
)
_TABLE_HEADER = re.compile(r"^\s*(?:NAMESPACE\s+)?LAST ?SEEN\s+\S")
_DESCRIBE_HEADER = re.compile(
    r"^\s*(?:Type\s+Reason\s+Age\s+From\s+Message|FirstSeen\s+LastSeen\s+Count\s+From\s+.*Message)\s*$"
)
_UNDERLINE = re.compile(r"^\s*-{2,}(?:\s+-{2,})*\s*$")
# kube-scheduler's FitError in every release: ``0/N nodes are available`` (1.10 on), ``No nodes are
# available that match all of the (following) predicates`` (1.6 to 1.9), ``failed to fit in any
# node`` with ``fit failure (summary) on node(s)`` (1.2 to 1.5) and 1.0's ``Failed for reason X and
# possibly others``.
_SCHEDULER = re.compile(
    r"\b\d+/\d+ nodes are available\b|\bNo nodes are available that match all of\b|"
    r"\bfailed to fit in any node\b|\bfit failure (?:summary )?on node|"
    r"\bFailed for reason [A-Za-z]\w* and possibly others\b|"
    # The GKE console's PodUnschedulable notice, one reason a line.
    r"\bCannot schedule pods: \S"
)
# Kubernetes 1.2 to 1.5 named the Pod before the reasons: ``pod (web-1) failed to fit in any node``.
_OLD_POD = re.compile(r"\bpod \((?P<pod>[a-z0-9][-a-z0-9.]*)\)\s*$")
# A FailedScheduling message quoted without its ``0/N nodes are available:`` head still starts with a
# counted reason only kube-scheduler writes.
_HEADLESS = re.compile(
    r"^[\s`'\">*-]*\d+ (?:node\(s\) (?:had|didn't|did not|were)|Insufficient [\w./-]+|Too many pods)"
)
_PREEMPTION_TAIL = re.compile(r"preemption:\s*$", re.IGNORECASE)
# cluster-autoscaler's own simulation of a node group's template (``Scale-up predicate failed: ...
# predicate mismatch, cannot put ns/x on template-node-for-g, reason: Insufficient ...``, ``Pod ns/x
# can't be scheduled on g, predicate checking error: ...``): the reason is about the template the
# autoscaler would build, not a FailedScheduling of kube-scheduler's.
_AUTOSCALER_SIMULATION = re.compile(
    r"predicate mismatch, cannot put \S+ on |can't be scheduled on \S+?,? predicate checking error"
)
# A message whose counted reasons start on the next line, one a line, as AKS's portal and some
# issue templates show cluster-autoscaler's event: ``pod didn't trigger scale-up:`` then
# ``4 node(s) had taint {...}, that the pod didn't tolerate,`` and ``1 max node group size reached``.
_OPENS_REASON_LIST = re.compile(r"(?:trigger scale-up|nodes are available):\s*$")
_COUNTED_REASON_LINE = re.compile(r"^[\s>*-]*\d+ (?:[A-Za-z]|\[)")
MAX_REASON_LINES = 60
_SCALE_UP = re.compile(r"\b(?:pod )?(?:didn't|did not) trigger scale-up\b|\bpod triggered scale-up\b")
_KARPENTER = re.compile(
    r"incompatible with nodepool|incompatible with provisioner|no instance type satisfied resources|"
    r"could not schedule pod|no instance type (?:has enough|met|which)|all available instance types exceed|"
    r"incompatible requirements|does not have known values|limits have been exhausted for nodepool|"
    r"launching nodeclaim|could not launch nodeclaim"
)
_KINDS = {
    "pod": "Pod",
    "node": "Node",
    "raycluster": "RayCluster",
    "rayjob": "RayJob",
    "rayservice": "RayService",
    "replicaset": "ReplicaSet",
    "deployment": "Deployment",
    "statefulset": "StatefulSet",
    "daemonset": "DaemonSet",
    "job": "Job",
    "service": "Service",
    "persistentvolumeclaim": "PersistentVolumeClaim",
    "persistentvolume": "PersistentVolume",
    "nodeclaim": "NodeClaim",
    "nodepool": "NodePool",
    "configmap": "ConfigMap",
    "endpoints": "Endpoints",
    "poddisruptionbudget": "PodDisruptionBudget",
}
_WARNING_REASONS = frozenset(
    {"BackOff", "Unhealthy", "Evicted", "InvalidImageName", "ErrImageNeverPull", "OOMKilling", "Preempted"}
)


# The event recorders of KubeRay's controllers (``mgr.GetEventRecorderFor("raycluster-controller")``
# in ray-operator/controllers/ray/*_controller.go, every release from v0.6 to v1.7): ``kubectl
# describe`` shows that name in its From column where ``kubectl get events`` shows the object, so a
# describe Events block pasted without its header still says which kind of object the event is on.
_RECORDER_KINDS = {
    "raycluster-controller": "RayCluster",
    "rayjob-controller": "RayJob",
    "rayservice-controller": "RayService",
}


def recorder_kind(source: str | None) -> str | None:
    """The object kind a controller's event recorder speaks for, when the From column names one."""
    return _RECORDER_KINDS.get((source or "").strip().lower())


def kind_of(name: str) -> str:
    base = name.split(".", 1)[0].lower()
    return _KINDS.get(base, name.split(".", 1)[0][:1].upper() + name.split(".", 1)[0][1:])


def type_for(reason: str) -> str:
    return "Warning" if reason.startswith("Failed") or reason in _WARNING_REASONS else "Normal"


def clean_message(text: str) -> str:
    return text.strip().strip("\"'`").rstrip("!").strip()


def _object(text: str) -> tuple[str | None, str | None]:
    kind, sep, name = text.partition("/")
    if not sep or not name:
        return None, None
    return kind_of(kind), name


def read_row(line: str, namespace: str | None = None) -> Event | None:
    """One event row outside a table header: describe-style or ``kubectl get events`` style."""
    if match := _GET_ROW.match(line):
        kind, name = _object(match.group("object"))
        return Event(
            namespace=match.group("ns") or namespace,
            object_kind=kind,
            object_name=name,
            type=match.group("type"),
            reason=match.group("reason"),
            message=match.group("message").strip(),
            count=count_or(match.group("count"), 1),
        )
    if match := _DESCRIBE_ROW.match(line):
        reason = match.group("reason")
        return Event(
            namespace=namespace,
            type=match.group("type") or type_for(reason),
            reason=reason,
            message=match.group("message").strip(),
            count=count_or(match.group("count"), 1),
            source=match.group("source"),
            object_kind=recorder_kind(match.group("source")),
        )
    return None


def opens_reason_list(line: str) -> bool:
    """A scheduler or cluster-autoscaler message cut after its head, its reasons on the next lines."""
    return bool(_OPENS_REASON_LIST.search(line)) and bool(_SCALE_UP.search(line) or _SCHEDULER.search(line))


def continues_reason_list(line: str) -> bool:
    """One counted reason of a message whose reasons are listed a line each."""
    return bool(_COUNTED_REASON_LINE.match(line))


def read_bare(text: str) -> Event | None:
    """A scheduler or cluster-autoscaler sentence quoted on its own, anywhere in a line."""
    if (match := _SCHEDULER.search(text)) and not _PREEMPTION_TAIL.search(text[: match.start()]):
        # The ``preemption: 0/N nodes are available: ...`` half of a message wrapped onto its own
        # line says what preemption could do, not why the Pod does not fit.
        named = _OLD_POD.search(text[: match.start()])
        return Event(
            type="Warning",
            reason="FailedScheduling",
            message=clean_message(text[match.start() :]),
            source="default-scheduler",
            object_kind="Pod" if named else None,
            object_name=named.group("pod") if named else None,
        )
    if _HEADLESS.match(text) and not _SCALE_UP.search(text):
        return Event(
            type="Warning",
            reason="FailedScheduling",
            message=clean_message(text),
            source="default-scheduler",
        )
    if match := _SCALE_UP.search(text):
        triggered = "triggered scale-up" in match.group() and "didn't" not in match.group()
        return Event(
            type="Normal",
            reason="TriggeredScaleUp" if triggered else "NotTriggerScaleUp",
            message=clean_message(text[match.start() :]),
            source="cluster-autoscaler",
        )
    if not is_karpenter(text) and not _AUTOSCALER_SIMULATION.search(text) and quoted_reasons(text):
        # A reason quoted in a sentence: the scheduler spoke, but the paste keeps only its words.
        return Event(
            type="Warning",
            reason="FailedScheduling",
            message=clean_message(text),
            source="default-scheduler",
        )
    return None


def format_of(event: Event) -> Format:
    """Which tool's message an event carries, for the snapshot's notes."""
    if _SCHEDULER.search(event.message):
        return SCHEDULER_FORMAT
    if _SCALE_UP.search(event.message) or event.reason in {"NotTriggerScaleUp", "TriggeredScaleUp"}:
        return AUTOSCALER_FORMAT
    if is_karpenter(event.message) or (event.source or "").startswith("karpenter"):
        return KARPENTER_FORMAT
    return LINE_FORMAT


def is_karpenter(text: str) -> bool:
    return bool(_KARPENTER.search(text[:4000].lower()))


def is_table_start(lines: Sequence[str], i: int) -> bool:
    return bool(_TABLE_HEADER.match(lines[i]) or _DESCRIBE_HEADER.match(lines[i]))


def _from_columns(values: dict[str, str], namespace: str | None) -> Event | None:
    reason = values.get("REASON", "")
    if not reason or values.get("TYPE", "Normal") not in {"Normal", "Warning"}:
        return None
    kind, name = _object(values.get("OBJECT", ""))
    if kind is None and values.get("NAME"):
        # Old kubectl: NAME is ``<object>.<hash>`` and KIND a separate column.
        kind, name = values.get("KIND") or None, values["NAME"].rsplit(".", 1)[0]
    count = values.get("COUNT", "")
    return Event(
        namespace=values.get("NAMESPACE") or namespace,
        object_kind=kind,
        object_name=name,
        type=values.get("TYPE") or type_for(reason),
        reason=reason,
        message=values.get("MESSAGE", ""),
        count=count_or(count, 1),
        source=values.get("SOURCE") or values.get("FROM") or None,
    )


# A row of the 1.0-1.4 describe layout, whose From column is in braces (``{default-scheduler }``)
# and whose columns are often aligned with tabs, so positions do not line up with the header:
# ``5s  4s  2  {default-scheduler }  Warning  FailedScheduling  pod (x) failed to fit in any node``.
# Kubernetes 1.0 wrote reasons in lower camel case (``failedScheduling``).
_BRACED_ROW = re.compile(
    r"(?:^|\s)\{(?P<source>[^}]*)\}\s+(?:[\w.\[\]-]+\{[^}]*\}\s+)?(?:(?P<type>Normal|Warning)\s+)?"
    r"(?P<reason>[a-zA-Z][a-z]+[A-Z][A-Za-z]*|[A-Z][a-z]+)\s+(?P<message>\S.*)$"
)


def _from_braced_row(line: str, namespace: str | None) -> Event | None:
    match = _BRACED_ROW.search(line)
    if match is None:
        return None
    reason = match.group("reason")
    reason = reason[:1].upper() + reason[1:]
    return Event(
        namespace=namespace,
        type=match.group("type") or type_for(reason),
        reason=reason,
        message=match.group("message").strip(),
        source=match.group("source").strip() or None,
    )


def _from_describe_columns(values: dict[str, str] | None, namespace: str | None) -> Event | None:
    """A row of the Kubernetes <= 1.9 describe layout (``FirstSeen LastSeen Count From ...``)."""
    if not values or values.get("Type") not in {"Normal", "Warning"} or not values.get("Reason"):
        return None
    count = values.get("Count", "")
    return Event(
        namespace=namespace,
        type=values["Type"],
        reason=values["Reason"],
        message=values.get("Message", ""),
        count=count_or(count, 1),
        source=values.get("From") or None,
    )


def parse_describe_events(
    lines: Sequence[str], start: int, namespace: str | None, kind: str | None, name: str | None
) -> tuple[list[Event], int]:
    """The rows under a describe Events header; continuation lines join the previous message."""
    events: list[Event] = []
    columns: list[Column] = []
    i = start
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            break
        if _UNDERLINE.match(line) or _DESCRIBE_HEADER.match(line):
            if line.lstrip().startswith("FirstSeen"):
                columns = header_columns(line)
            i += 1
            continue
        event = (
            read_row(line, namespace)
            or (_from_describe_columns(slice_row(line, columns), namespace) if columns else None)
            or (_from_braced_row(line, namespace) if columns else None)
        )
        if event is not None:
            if kind is not None or name is not None:
                event = replace(event, object_kind=kind, object_name=name)
            elif event.object_kind is None and (recorder := recorder_kind(event.source)):
                # The 1.0-1.9 layouts (From in a column or in braces) are read apart from read_row.
                event = replace(event, object_kind=recorder)
            events.append(event)
        elif events and line[:1].isspace():
            last = events[-1]
            events[-1] = replace(last, message=f"{last.message} {line.strip()}"[:20_000])
        else:
            break
        i += 1
    return events, i


def parse_table(lines: Sequence[str], start: int, found: Found, namespace: str | None) -> int:
    """Read an events table (either header) at ``start``; return the index after its last row."""
    if _DESCRIBE_HEADER.match(lines[start]):
        events, end = parse_describe_events(lines, start, namespace, None, None)
        for event in events:
            found.add_event(event)
            found.recognise(format_of(event))
        return end
    columns = header_columns(lines[start])
    i = start + 1
    while i < len(lines) and lines[i].strip():
        values = slice_row(lines[i], columns)
        row = (_from_columns(values, namespace) if values else None) or read_row(lines[i], namespace)
        if row is None:
            break
        found.add_event(row)
        i += 1
    if i > start + 1:
        found.recognise(TABLE_FORMAT)
    return i


def _read_table(lines: Sequence[str], i: int, paste: Paste) -> Block:
    return Block(max(i + 1, parse_table(lines, i, paste.found, paste.namespace)))


TABLE_READER = Reader("kubectl-get-events", starts=is_table_start, read=_read_table)
