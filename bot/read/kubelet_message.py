"""What the kubelet wrote when it refused, evicted or stopped a Pod that was already scheduled.

A Pod the scheduler placed can still fail on its node. The kubelet's admission handlers
(``pkg/kubelet/lifecycle/predicate.go``) re-check it and set ``status.reason`` to the handler's
reason, ``status.message`` to ``Pod was rejected: <message>`` (the prefix came with later
kubelets), and raise a Warning event with the same reason; the eviction manager and the node
shutdown manager do the same with their own words. ``kubectl get pods`` shows that reason in its
STATUS column, ``kubectl describe pod`` under ``Reason:``/``Message:``. Every form reaches this one
reader, as a reason, a message, or both.

The wordings, all versions:

- device or resource allocation: ``UnexpectedAdmissionError`` with ``Allocate failed due to <err>,
  which is unexpected`` (``Update plugin resources failed due to <err>, which is unexpected.``
  before that); the device manager's ``<err>`` says which container and device.
- the node's own fit check: ``OutOf<resource>`` with ``Node didn't have enough resource: <name>,
  requested: N, used: N, capacity: N`` (``OutOf`` joined to the resource name as it is, so an
  extended resource reads ``OutOfnvidia.com/gpu``, the legacy one
  ``OutOfalpha.kubernetes.io/nvidia-gpu``); other predicates ``<Name>`` with ``Predicate <Name>
  failed`` (``NodeAffinity``, ``MatchNodeSelector`` before 1.19, ``TaintToleration``, ``NodePorts``).
- eviction: ``Evicted`` with ``The node was low on resource: <res>.`` (``[MemoryPressure]`` in the
  oldest kubelets, ``The node had condition: [DiskPressure].``), then ``Threshold quantity: …`` and
  the container the kubelet blamed (``Container c was using X, which exceeds its request of Y`` or,
  later, ``…, request is Y, has larger consumption of memory``); local-storage limits of the Pod
  itself (``Pod ephemeral local storage usage exceeds the total limit of containers …``).
- the node going away: ``Terminated`` with ``Pod was terminated in response to imminent node
  shutdown.`` (``Shutdown`` with ``Node is shutting, evicting pods`` before 1.22), ``NodeShutdown``
  with ``Pod was rejected as the node is shutting down.``, ``Preempting`` with ``Preempted in order
  to admit critical pod``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from bot.snapshot.gpu import LEGACY_GPU_RESOURCE

KubeletKind = Literal[
    "gpu-allocation",  # the device plugin's state refused the Pod: cause 3
    "init-container-gpu",  # an init container asked for the device: the Pod spec is wrong, cause 10
    "gpu-not-advertised",  # OutOf<gpu> with capacity 0: the node offers no GPU at all, cause 3
    "out-of-resource",  # the node is full for what the Pod requests: cause 1
    "node-constraint",  # affinity, selector, taint, host port re-checked on the node: cause 2
    "evicted-node-pressure",  # the node ran short and evicted: cause 1
    "evicted-own-usage",  # the Pod used more than it declared: cause 10
    "node-stopped",  # node shutdown or critical-pod preemption: informational
]

ADMISSION_ERROR = "UnexpectedAdmissionError"
_CONSTRAINT_PREDICATES = frozenset(
    {"NodeAffinity", "MatchNodeSelector", "NodeSelector", "TaintToleration", "NodePorts", "PodFitsHostPorts"}
)
_STOPPED_REASONS = frozenset({"Terminated", "Shutdown", "NodeShutdown", "Preempting"})
_ALLOCATE = re.compile(
    r"(?:Allocate|Update plugin resources) failed due to (?P<detail>.+?)(?:,? which is unexpected\.?|$)"
)
# The CPU and memory managers also answer through ``Allocate failed``; anything else there is the
# device manager talking to a device plugin (its gRPC errors name no device at all).
_CPU_MEMORY_MANAGER = re.compile(
    r"not enough cpus|cpus? available|SMTAlignment|NUMA node|memory manager", re.I
)
_CONTAINER = re.compile(r"\bcontainer \\?[\"']?(?P<container>[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)")
_NOT_ENOUGH = re.compile(
    r"Node didn't have enough resources?: (?P<resource>[^,\s]+), requested: (?P<requested>-?\d+), "
    r"used: (?P<used>-?\d+), capacity: (?P<capacity>-?\d+)"
)
# The reason as an event row or a loose line shows it, when the message after it was cut or wrapped.
_OUT_OF_WORD = re.compile(r"\bOutOf(?:cpu|memory|pods|ephemeral-storage|hugepages-\w+|[\w.-]+/[\w.-]+)\b")
_PREDICATE = re.compile(r"Predicate (?P<predicate>[A-Z]\w+) failed")
_LOW = re.compile(r"The node (?:was low on resource|had condition): \[?(?P<resource>[\w./-]+?)\]?(?:\.|\s|$)")
# The oldest kubelets name the node condition instead of the resource.
_PRESSURE_RESOURCE = {"MemoryPressure": "memory", "DiskPressure": "ephemeral-storage", "PIDPressure": "pids"}
_OVER_REQUEST = re.compile(
    r"Container (?P<container>\S+) was using (?P<usage>[^,\s]+), (?:which exceeds its request of "
    r"(?P<request>[^,.\s]+)|request is (?P<request_new>[^,\s]+), has larger consumption)"
)
_OWN_STORAGE_LIMIT = re.compile(
    r"ephemeral local storage usage exceeds the total limit|exceeded its local ephemeral storage limit|"
    r"Usage of EmptyDir volume \S+ exceeds the limit"
)
_STOPPED = re.compile(
    r"in response to (?:imminent )?node shutdown|as (?:the )?node is shutting down|"
    r"Node is shutting, evicting pods|Node is in progress of shutting down|"
    r"Preempted in order to admit critical pod"
)
# Where one of these appears, a line is the kubelet's (used to pick lines out of loose text).
SIGNAL = re.compile(
    "|".join(
        re.sub(r"\(\?P<\w+>", "(?:", p.pattern)
        for p in (_ALLOCATE, _NOT_ENOUGH, _OUT_OF_WORD, _LOW, _OWN_STORAGE_LIMIT, _STOPPED)
    )
    + r"|Predicate (?:NodeAffinity|MatchNodeSelector|TaintToleration|NodePorts) failed"
)


# Every wording ``read`` finds a verdict in; a message with none of them has one only by its reason.
WORDING = (SIGNAL, _PREDICATE)


def decisive_reason(reason: str) -> bool:
    """Whether ``read`` finds a verdict in this reason alone, whatever the message says."""
    return (
        reason in (ADMISSION_ERROR, "Evicted")
        or reason.startswith("OutOf")
        or reason in _CONSTRAINT_PREDICATES
        or reason in _STOPPED_REASONS
    )


@dataclass(frozen=True)
class KubeletVerdict:
    kind: KubeletKind
    reason: str
    message: str
    resource: str = ""
    container: str = ""
    requested: str = ""
    used: str = ""
    capacity: str = ""


def _is_gpu_resource(name: str) -> bool:
    return name == LEGACY_GPU_RESOURCE or ("/" in name and "gpu" in name.lower())


def read(
    reason: str | None, message: str | None, init_containers: frozenset[str] = frozenset()
) -> KubeletVerdict | None:
    """The kubelet's verdict on a Pod from its ``status.reason`` and ``status.message`` (either may
    be missing: a ``kubectl get pods`` row has only the reason, a loose line only the message).

    ``init_containers`` names the Pod's init containers where the spec was read; KubeRay's own
    ``wait-gcs-ready`` counts as one, since the operator injects it into every worker Pod.
    """
    reason = (reason or "").strip()
    text = (message or "").strip()
    if not reason and (word := _OUT_OF_WORD.search(text)):
        reason = word.group(0)
    allocate = _ALLOCATE.search(text)
    if allocate or reason == ADMISSION_ERROR:
        detail = allocate.group("detail") if allocate else ""
        if _CPU_MEMORY_MANAGER.search(detail):
            # The CPU or memory manager, not a device: ``not enough cpus available to satisfy request``.
            return KubeletVerdict("out-of-resource", reason or ADMISSION_ERROR, text)
        named = _CONTAINER.search(detail)
        container = named.group("container") if named else ""
        kind: KubeletKind = (
            "init-container-gpu"
            if container and (container in init_containers or container == "wait-gcs-ready")
            else "gpu-allocation"
        )
        return KubeletVerdict(kind, reason or ADMISSION_ERROR, text, container=container)
    enough = _NOT_ENOUGH.search(text)
    if enough or reason.startswith("OutOf"):
        resource = enough.group("resource") if enough else reason.removeprefix("OutOf")
        capacity = enough.group("capacity") if enough else ""
        # The scheduler counted this node's GPUs before it bound the Pod, so a kubelet that finds none
        # to admit it with is looking at a device plugin that has not (re)registered there: capacity
        # 0, or only the reason (``OutOfnvidia.com/gpu`` in a ``get pods`` row) with no figures. A
        # message whose figures show the node does offer GPUs is a plain over-commit (a ``nodeName``
        # bind, a race), as for CPU and memory.
        kind = (
            "gpu-not-advertised"
            if _is_gpu_resource(resource) and capacity in ("0", "")
            else "out-of-resource"
        )
        return KubeletVerdict(
            kind,
            reason or f"OutOf{resource}",
            text,
            resource=resource,
            requested=enough.group("requested") if enough else "",
            used=enough.group("used") if enough else "",
            capacity=capacity,
        )
    predicate = _PREDICATE.search(text)
    name = predicate.group("predicate") if predicate else reason
    if name in _CONSTRAINT_PREDICATES:
        return KubeletVerdict("node-constraint", reason or name, text)
    low = _LOW.search(text)
    own_storage = _OWN_STORAGE_LIMIT.search(text)
    if low or own_storage or reason == "Evicted":
        over = _OVER_REQUEST.search(text)
        resource = low.group("resource") if low else ("ephemeral-storage" if own_storage else "")
        resource = _PRESSURE_RESOURCE.get(resource, resource)
        if own_storage or over:
            return KubeletVerdict(
                "evicted-own-usage",
                reason or "Evicted",
                text,
                resource=resource,
                container=over.group("container") if over else "",
                used=over.group("usage") if over else "",
                requested=(over.group("request") or over.group("request_new") or "") if over else "",
            )
        return KubeletVerdict("evicted-node-pressure", reason or "Evicted", text, resource=resource)
    if _STOPPED.search(text) or reason in _STOPPED_REASONS:
        return KubeletVerdict("node-stopped", reason or "Terminated", text)
    return None


# The kubelet's container events, and the waiting reason it sets on the container status at the same
# time (pkg/kubelet/images/image_manager.go, pkg/kubelet/kuberuntime/kuberuntime_container.go and
# kuberuntime_manager.go): a pull that failed (``Failed``: ``Failed to pull image "x": …``, then
# ``Error: ErrImagePull``), its back-off (``BackOff``: ``Back-off pulling image "x"``, then ``Error:
# ImagePullBackOff``), ``ErrImageNeverPull`` and ``InspectFailed`` (an image name it cannot parse), a
# container restarting in back-off (``BackOff``: ``Back-off restarting failed container[ c in pod …]``),
# and a container whose config the kubelet could not build (``Failed``: ``Error: configmap "x" not
# found`` and the like: ``CreateContainerConfigError``). A runtime's refusal (``Error: failed to create
# containerd task: …``, ``CreateContainerError``) is left out: its cause is in the runtime's words (a
# GPU hook, a seccomp profile), which this family does not judge. Two of the runtime's answers to
# CreateContainer name no such cause and are read: the call timing out (``Error: context deadline
# exceeded``) and its retry finding the name still held by the call that timed out (``Error: failed
# to reserve container name "<container>_<pod>_<namespace>_<uid>_<attempt>": name … is reserved for
# …``, containerd's CRI); the kubelet sets ``CreateContainerError`` for both. A paste of events alone
# still shows the container's state this way.
_PULL_FAILED = re.compile(r"^Failed to pull image\b|^Error: ErrImagePull\b")
_PULL_BACK_OFF = re.compile(r"^Back-off pulling image\b|^Error: ImagePullBackOff\b")
_RESTART_BACK_OFF = re.compile(r"^Back-off restarting failed container(?: (?P<container>[\w.-]+))?")
_CONFIG_ERROR = re.compile(
    r"^Error: (?:(?:configmap|secret) \"[^\"]+\" not found|couldn't find key \S+ in (?:ConfigMap|Secret)\b|"
    r"container has runAsNonRoot and image)"
)
_CREATE_TIMED_OUT = re.compile(
    r"^Error: (?:context deadline exceeded\b|"
    r"failed to reserve container name \\?\"?(?:(?P<container>[a-z0-9][\w.-]*?)_[\w.-]+_)?)"
)
_CONTAINER_REASONS = {"ErrImageNeverPull": "ErrImageNeverPull", "InspectFailed": "InvalidImageName"}


@dataclass(frozen=True)
class ContainerEvent:
    """A container state read from one kubelet event: the waiting reason and, where the message
    names it, the container."""

    reason: str
    container: str = ""


def container_event(reason: str, message: str) -> ContainerEvent | None:
    """The container waiting reason a kubelet event reports, or None when it reports none."""
    text = message.strip()
    if reason in _CONTAINER_REASONS:
        return ContainerEvent(_CONTAINER_REASONS[reason])
    if reason == "Failed":
        if _PULL_FAILED.search(text):
            return ContainerEvent("ErrImagePull")
        if _PULL_BACK_OFF.search(text):
            return ContainerEvent("ImagePullBackOff")
        if _CONFIG_ERROR.search(text):
            return ContainerEvent("CreateContainerConfigError")
        if created := _CREATE_TIMED_OUT.search(text):
            return ContainerEvent("CreateContainerError", created.group("container") or "")
        return None
    if reason == "BackOff":
        if _PULL_BACK_OFF.search(text):
            return ContainerEvent("ImagePullBackOff")
        if restart := _RESTART_BACK_OFF.search(text):
            return ContainerEvent("CrashLoopBackOff", restart.group("container") or "")
    return None
