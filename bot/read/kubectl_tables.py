"""``kubectl get`` tables for pods and for the KubeRay custom resources.

A ``kubectl get pods`` row is often all a user pastes about a pod, and it says more than it seems:
the STATUS column is kubectl's summary of container states (``CrashLoopBackOff``,
``Init:ImagePullBackOff``, ``ContainerCreating``), READY gives readiness, and with ``-o wide`` the
node and IP. Rows become ``Pod`` objects shaped like what the API would have returned for the same
pod (phase, a synthetic container status carrying the reason, a Ready condition), so rules written
against live snapshots work on pasted ones. The column itself is kept in ``display_status``.

Tables are read with or without their header row (people often copy only the rows), with or
without a NAMESPACE column (``-A``), with or without the ``-o wide`` columns (IP, NODE, NOMINATED
NODE, READINESS GATES), and with the ``pod/`` or ``raycluster.ray.io/`` prefix kubectl puts before
each name when several kinds are asked at once (``kubectl get pods,svc``, ``kubectl get
raycluster,rayjob``). STATUS is any reason kube-apiserver's printer writes: a phase, a container's
waiting or terminated reason, ``Init:N/M``, ``Init:<reason>``, ``ExitCode:N``/``Signal:N`` (also
after ``Init:``), ``NotReady``, ``SchedulingGated``, ``Terminating``, ``Unknown``.

The KubeRay tables are the CRDs' printer columns, read by header position so that empty cells stay
empty: RayCluster ``DESIRED WORKERS``/``AVAILABLE WORKERS``/``STATUS`` (KubeRay 0.5+), with ``CPUS``,
``MEMORY``, ``GPUS`` (1.1+) and, with ``-o wide``, ``TPUS``, ``HEAD POD IP``, ``HEAD SERVICE IP``;
RayJob ``JOB STATUS``/``DEPLOYMENT STATUS`` (1.1+) and ``RAY CLUSTER NAME`` (1.2+); RayService
``SERVICE STATUS``/``NUM SERVE ENDPOINTS`` (1.1+). Before those releases a KubeRay table is only
NAME and AGE, which says nothing to read.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from bot.read.columns import header_columns, slice_row
from bot.read.counts import count_or, parse_count
from bot.read.formats import Format, Tag
from bot.read.found import Found, PodRecord, PodSource
from bot.read.protocol import Block, Paste, Reader
from bot.snapshot.kubernetes import (
    Condition,
    ContainerStatus,
    Pod,
    RayClusterObject,
    RayJobObject,
    RayServiceObject,
)

PODS_FORMAT = Format("kubectl get pods", Tag.KUBECTL_GET)
RAY_RESOURCES_FORMAT = Format("kubectl get (KubeRay resources)", Tag.KUBECTL_GET)

_NAME = r"[a-z0-9](?:[-a-z0-9.]*[a-z0-9])?"
# ``kubectl get pods,svc`` writes ``pod/NAME``; ``kubectl get raycluster,rayjob`` ``raycluster.ray.io/NAME``.
_KIND_PREFIX = re.compile(r"^[a-z][a-z0-9]*(?:\.[a-z0-9][-a-z0-9.]*)?/")
_POD_HEADER = re.compile(r"^\s*(NAMESPACE\s+)?NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\b")
_POD_ROW = re.compile(
    rf"^\s*(?:(?P<ns>{_NAME})\s+)?(?:pods?/)?(?P<name>{_NAME})\s+(?P<ready>\d+/\d+)\s+(?P<status>[A-Za-z][\w:/.-]*)\s+"
    r"(?P<restarts>\d+)(?:\s+\((?P<last>[^()]*)\))?\s+(?P<age>\S+)(?P<rest>(?:\s+\S+)*)\s*$"
)
# ``-o wide`` adds IP and NODE after AGE; ``-L``/``--show-labels`` add other columns there instead.
_IP_OR_NONE = re.compile(r"^(?:<none>|\d{1,3}(?:\.\d{1,3}){3}|[0-9a-fA-F:]*:[0-9a-fA-F:]+)$")
AGE = re.compile(r"^(?:<unknown>|<invalid>|\d+(?:\.\d+)?[smhdy](?:\d+[smhdy])*)$")
_STATUS = re.compile(r"^(?:Init:)?(?:OutOf[\w./-]+|[A-Z][A-Za-z]+|\d+/\d+|(?:Signal|ExitCode):-?\d+)$")
# A container that ended without a reason: the printer writes its exit code or signal instead.
_EXIT = re.compile(r"^(?:Signal|ExitCode):-?\d+$")

WAITING_REASONS = frozenset(
    {
        "ContainerCreating",
        "PodInitializing",
        "CrashLoopBackOff",
        "ErrImagePull",
        "ImagePullBackOff",
        "ErrImageNeverPull",
        "InvalidImageName",
        "RegistryUnavailable",
        "CreateContainerConfigError",
        "CreateContainerError",
        "RunContainerError",
        "PreStartHookError",
        "PostStartHookError",
    }
)
TERMINATED_REASONS = frozenset(
    {"Error", "OOMKilled", "Completed", "ContainerCannotRun", "DeadlineExceeded", "StartError"}
)
_FAILED = frozenset(
    {
        "Failed",
        "Evicted",
        "OutOfcpu",
        "OutOfmemory",
        "OutOfpods",
        "NodeAffinity",
        "UnexpectedAdmissionError",
        "Shutdown",
        "Terminated",
        "ContainerStatusUnknown",
        "NodeShutdown",
    }
)


def _none(value: str | None) -> str | None:
    return None if value is None or value in {"<none>", "<unknown>", "", "-"} else value


def _exit_code(reason: str) -> int | None:
    """The exit code in ``ExitCode:137`` (a signal is not an exit code)."""
    return int(reason.split(":", 1)[1]) if reason.startswith("ExitCode:") else None


def pod_from_row(
    *,
    name: str,
    namespace: str,
    ready: str,
    status: str,
    restarts: int,
    ip: str | None = None,
    node: str | None = None,
) -> Pod:
    """The pod the API would have described, as far as one table row tells."""
    ready_now, _, ready_total = ready.partition("/")
    is_ready = ready_now == ready_total and ready_total not in {"", "0"}
    init = status.startswith("Init:")
    reason = status[len("Init:") :] if init else status
    statuses: list[ContainerStatus] = []
    phase = "Unknown"
    deleting = False
    if init:
        phase = "Pending"
        if re.fullmatch(r"\d+/\d+", reason):
            statuses.append(
                ContainerStatus(name="(unknown)", init=True, state="running", restart_count=restarts)
            )
        else:
            state = "terminated" if reason in TERMINATED_REASONS or _EXIT.match(reason) else "waiting"
            statuses.append(
                ContainerStatus(
                    name="(unknown)", init=True, state=state, reason=reason, restart_count=restarts
                )
            )
    elif reason in WAITING_REASONS:
        # A crash loop means the container has started before; an image pull means it never has.
        phase = "Running" if reason == "CrashLoopBackOff" or restarts > 0 else "Pending"
        statuses.append(
            ContainerStatus(name="(unknown)", state="waiting", reason=reason, restart_count=restarts)
        )
    elif reason in TERMINATED_REASONS or _EXIT.match(reason):
        phase = "Succeeded" if reason == "Completed" else ("Running" if restarts > 0 else "Failed")
        statuses.append(
            ContainerStatus(
                name="(unknown)",
                state="terminated",
                reason=reason,
                restart_count=restarts,
                exit_code=_exit_code(reason),
                last_terminated_reason=reason,
            )
        )
    elif reason in {"Running", "Pending", "Succeeded", "Unknown"}:
        phase = reason
        if reason == "Running" and restarts:
            # Restarted yet shown Running: a liveness probe or the process ended it and it came back.
            statuses.append(
                ContainerStatus(name="(unknown)", state="running", ready=is_ready, restart_count=restarts)
            )
    elif reason == "NotReady":
        # A container still runs while another completed and the Pod is not Ready.
        phase = "Running"
    elif reason == "Terminating":
        phase, deleting = "Running", True
    elif reason in _FAILED or reason.startswith("OutOf"):  # the kubelet's OutOf<any resource>
        phase = "Failed"
    elif reason == "SchedulingGated":
        phase = "Pending"
    conditions = [Condition(type="Ready", status="True" if is_ready else "False")]
    node_name = _none(node)
    # Every status except Pending and SchedulingGated is set by a kubelet, so the pod has a node
    # even when the table does not say which one.
    if node_name or status not in {"Pending", "SchedulingGated", "Unknown"}:
        conditions.append(Condition(type="PodScheduled", status="True"))
    return Pod(
        name=name,
        namespace=namespace,
        phase=phase,
        node_name=node_name,
        pod_ip=_none(ip),
        deleting=deleting,
        conditions=conditions,
        container_statuses=statuses,
        display_status=status,
        status_reason=reason if reason in _FAILED or reason.startswith("OutOf") else None,
    )


def _row_is_plausible(match: re.Match[str]) -> bool:
    return bool(_STATUS.match(match.group("status")) and AGE.match(match.group("age")))


def is_pods_start(lines: Sequence[str], i: int) -> bool:
    line = lines[i]
    if _POD_HEADER.match(line):
        return True
    match = _POD_ROW.match(line)
    return match is not None and _row_is_plausible(match)


def parse_pods(lines: Sequence[str], start: int, found: Found, namespace: str | None) -> int:
    """Read one pods table starting at ``start``; return the index after its last row."""
    i = start
    has_namespace_column: bool | None = None
    header = _POD_HEADER.match(lines[i])
    if header:
        has_namespace_column = header.group(1) is not None
        i += 1
    while i < len(lines):
        match = _POD_ROW.match(lines[i])
        if match is None or not _row_is_plausible(match):
            break
        name, ns = match.group("name"), match.group("ns")
        if has_namespace_column is False and ns:
            # Without a NAMESPACE column the first token is the name; the regex split it wrongly.
            break
        i += 1
        if found.pods_full():
            continue
        extra = match.group("rest").split()
        wide = bool(extra) and bool(_IP_OR_NONE.match(extra[0]))
        pod = pod_from_row(
            name=name,
            namespace=ns or namespace or "default",
            ready=match.group("ready"),
            status=match.group("status"),
            restarts=count_or(match.group("restarts"), 0),
            ip=extra[0] if wide else None,
            node=extra[1] if wide and len(extra) > 1 else None,
        )
        found.add_pod(PodRecord(pod=pod, source=PodSource.TABLE_ROW, namespace_known=bool(ns or namespace)))
    if i > start + (1 if header else 0):
        found.recognise(PODS_FORMAT)
    return i


_RAY_HEADER = re.compile(
    r"^\s*(?:NAMESPACE\s+)?NAME\s+(?:JOB STATUS|DEPLOYMENT STATUS|DESIRED WORKERS|SERVICE STATUS)\b"
)


def is_ray_resources_start(lines: Sequence[str], i: int) -> bool:
    return bool(_RAY_HEADER.match(lines[i]))


def object_name(cell: str) -> str:
    """A NAME cell without the ``kind.group/`` prefix of a several-kinds ``kubectl get``."""
    return _KIND_PREFIX.sub("", cell, count=1)


def parse_ray_resources(lines: Sequence[str], start: int, found: Found, namespace: str | None) -> int:
    """``kubectl get rayjob|raycluster|rayservice`` (KubeRay 1.0+ columns), read by header position."""
    columns = header_columns(lines[start])
    names = {column.name for column in columns}
    i = start + 1
    while i < len(lines) and lines[i].strip():
        values = slice_row(lines[i], columns)
        if values is None:
            break
        name = object_name(values["NAME"])
        if not name:
            break
        ns = values.get("NAMESPACE") or namespace or "default"
        if "JOB STATUS" in names or "DEPLOYMENT STATUS" in names:
            job = RayJobObject(
                name=name,
                namespace=ns,
                job_status=values.get("JOB STATUS") or None,
                deployment_status=values.get("DEPLOYMENT STATUS") or None,
                cluster_name=values.get("RAY CLUSTER NAME") or None,
            )
            found.add_object("rayjobs", job)
        elif "DESIRED WORKERS" in names:
            cluster = RayClusterObject(
                name=name,
                namespace=ns,
                state=values.get("STATUS") or None,
                desired_workers=parse_count(values.get("DESIRED WORKERS")),
                ready_workers=parse_count(values.get("AVAILABLE WORKERS")),
            )
            found.add_object("rayclusters", cluster)
        else:
            found.add_object(
                "rayservices",
                RayServiceObject(
                    name=name, namespace=ns, service_status=values.get("SERVICE STATUS") or None
                ),
            )
        i += 1
    if i > start + 1:
        found.recognise(RAY_RESOURCES_FORMAT)
    return i


def _read_pods(lines: Sequence[str], i: int, paste: Paste) -> Block:
    return Block(max(i + 1, parse_pods(lines, i, paste.found, paste.namespace)))


def _read_ray_resources(lines: Sequence[str], i: int, paste: Paste) -> Block:
    return Block(max(i + 1, parse_ray_resources(lines, i, paste.found, paste.namespace)))


PODS_READER = Reader("kubectl-get-pods", starts=is_pods_start, read=_read_pods)
RAY_RESOURCES_READER = Reader("kubectl-get-kuberay", starts=is_ray_resources_start, read=_read_ray_resources)
