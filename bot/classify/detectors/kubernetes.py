"""Kubernetes-layer detectors other than the scheduler replay: GPU nodes, failing Pods, quotas,
scheduling gates, and the collection errors that every diagnosis reports as findings.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Literal

from bot.catalogue import Rule
from bot.classify.context import RAY_CLUSTER_LABEL, RAY_GROUP_LABEL, Context, Text
from bot.classify.detectors.scheduling import UNNAMED_NODE_PREFIX
from bot.classify.registry import Hit, detector
from bot.diagnosis import Evidence, Subject
from bot.facts import PluginPod
from bot.read.quantity import format_amount
from bot.snapshot.base import StrictRecord
from bot.snapshot.gpu import LEGACY_GPU_RESOURCE, advertised_gpus, gpu_label
from bot.snapshot.kubernetes import GPU_RESOURCE, ContainerStatus, Pod

# The GPU resource named anywhere in a line (for the prefilter of ``Context.texts_that_may_match``).
_GPU_RESOURCE_NAMED = re.compile(re.escape(GPU_RESOURCE))


class GpuNodeParams(StrictRecord):
    verdict: Literal[
        "no-allocatable", "legacy-resource", "device-plugin-down", "unmarked-no-gpu", "unhealthy-devices"
    ]


def _plugin_pods_by_node(ctx: Context) -> dict[str, list[Pod]]:
    found: dict[str, list[Pod]] = {}
    for pod in ctx.kube.device_plugin_pods:
        if pod.node_name:
            found.setdefault(pod.node_name, []).append(pod)
    return found


@detector(
    "gpu_nodes",
    (
        "node",
        "gpu_label",
        "gpu_value",
        "resource",
        "plugin_pod",
        "plugin_status",
        "listed",
        "gpu_signal",
        "capacity_gpus",
        "allocatable_gpus",
    ),
    GpuNodeParams,
)
def gpu_nodes(ctx: Context, rule: Rule) -> Iterable[Hit]:
    wanted = GpuNodeParams(**rule.params).verdict
    if wanted == "unmarked-no-gpu":
        yield from _unmarked_nodes_without_gpu(ctx)
        return
    plugins = _plugin_pods_by_node(ctx)
    plugins_collected = bool(ctx.kube.device_plugin_pods)
    # A node with a legacy GPU resource is a GPU node too (``is_gpu_node`` counts both names).
    for node in ctx.gpu_nodes:
        legacy = node.allocatable.get(LEGACY_GPU_RESOURCE, node.capacity.get(LEGACY_GPU_RESOURCE, 0.0))
        gpus = node.allocatable.get(GPU_RESOURCE, 0.0)
        on_node = plugins.get(node.name, [])
        plugin_ok = any(p.phase == "Running" and p.ready for p in on_node)
        # Decide first: on a large cluster almost every GPU node is fine, and the texts below
        # would be built thousands of times for nothing.
        if wanted == "legacy-resource":
            applies = legacy > 0 and gpus <= 0
        elif wanted == "no-allocatable":
            applies = gpus <= 0 and legacy <= 0
        elif wanted == "unhealthy-devices":
            # The device plugin counts every GPU in capacity and only the healthy ones in allocatable.
            applies = 0 < gpus < node.capacity.get(GPU_RESOURCE, 0.0)
        else:
            applies = plugins_collected and not plugin_ok
        if not applies:
            continue
        label, value = gpu_label(node)
        params = {
            "node": node.name,
            "gpu_label": label,
            "gpu_value": value,
            "resource": GPU_RESOURCE,
            "plugin_pod": ", ".join(p.name for p in on_node) or "none",
            "capacity_gpus": format_amount(GPU_RESOURCE, node.capacity.get(GPU_RESOURCE, 0.0)),
            "allocatable_gpus": format_amount(GPU_RESOURCE, gpus),
            # Without a plugin Pod, why none is known; with them, each is a ``PluginPod`` fact.
            **(
                {}
                if on_node
                else {"plugin_status": "no-plugin-pod" if plugins_collected else "not-collected"}
            ),
        }
        pods = tuple(PluginPod(p.name, p.phase, p.ready) for p in on_node)
        figures = Evidence(
            source=f"node {node.name} allocatable",
            text=", ".join(
                f"{k}: {v:g}"
                for k, v in sorted(node.allocatable.items())
                if k in (GPU_RESOURCE, LEGACY_GPU_RESOURCE)
            )
            or f"no {GPU_RESOURCE} in allocatable (labels: {label}={value})",
        )
        if wanted == "legacy-resource":
            yield Hit(
                Subject(kind="Node", name=node.name),
                (figures,),
                {**params, "resource": LEGACY_GPU_RESOURCE},
                facts=pods,
            )
        elif wanted == "no-allocatable":
            yield Hit(Subject(kind="Node", name=node.name), (figures,), params, facts=pods)
        elif wanted == "unhealthy-devices":
            capacity = Evidence(
                source=f"node {node.name} capacity",
                text=f"{GPU_RESOURCE}: {node.capacity.get(GPU_RESOURCE, 0.0):g}",
            )
            yield Hit(Subject(kind="Node", name=node.name), (capacity, figures), params, facts=pods)
        else:
            evidence = [figures] + [
                Evidence(
                    source=f"pod {p.name}",
                    text=f"phase {p.phase}, ready {p.ready}",
                    phrase="evidence.pod_phase_ready",
                    values={"phase": p.phase, "ready": str(p.ready)},
                )
                for p in on_node
            ]
            yield Hit(Subject(kind="Node", name=node.name), tuple(evidence), params, facts=pods)


def gpu_wanted(ctx: Context) -> Evidence | None:
    """Where the paste shows that its Pods are after GPUs: a request, a GPU toleration or selector,
    a scheduler or autoscaler message, or a pasted spec line that names ``nvidia.com/gpu``."""
    for pod in ctx.kube.pods:
        if pod.requests.get(GPU_RESOURCE, 0.0) > 0:
            return Evidence(
                source=f"pod {pod.name} requests", text=f"{GPU_RESOURCE}: {pod.requests[GPU_RESOURCE]:g}"
            )
        for toleration in pod.tolerations:
            if (toleration.key or "").startswith(GPU_RESOURCE):
                return Evidence(source=f"pod {pod.name} tolerations", text=toleration.key or "")
    for event in ctx.events_that_may_match(_GPU_RESOURCE_NAMED):
        if GPU_RESOURCE in event.message:
            return Evidence(source=f"event {event.reason}", text=event.message)
    for text in ctx.texts_that_may_match(_GPU_RESOURCE_NAMED):
        if GPU_RESOURCE in text.text:
            return Evidence(source=text.source, text=text.text[:600])
    return None


def _unmarked_nodes_without_gpu(ctx: Context) -> Iterator[Hit]:
    """A node pasted without its labels, whose Capacity and Allocatable list no GPU, in a paste about
    GPU Pods: when no pasted node advertises a GPU, this is the GPU node that advertises none.

    A node whose labels were pasted is judged by them (``gpu_nodes``); one among nodes that do list
    GPUs is most likely a CPU node, and is left alone.
    """
    nodes = ctx.kube.nodes
    if not nodes or any(advertised_gpus(n) > 0 for n in nodes):
        return
    candidates = [n for n in nodes if not n.labels and not n.taints and (n.capacity or n.allocatable)]
    if not candidates:
        return
    wanted = gpu_wanted(ctx)
    if wanted is None:
        return
    for node in candidates[:5]:
        named = not node.name.startswith(UNNAMED_NODE_PREFIX)
        listed = node.allocatable or node.capacity
        figures = Evidence(
            source=f"node {node.name} {'allocatable' if node.allocatable else 'capacity'}",
            text=", ".join(f"{k}: {format_amount(k, v)}" for k, v in sorted(listed.items())),
        )
        yield Hit(
            Subject(kind="Node", name=node.name if named else None),
            (figures, wanted),
            {
                "node": node.name if named else "",
                "resource": GPU_RESOURCE,
                "listed": ", ".join(sorted(listed)),
                "gpu_signal": wanted.text,
            },
        )


class FailureParams(StrictRecord):
    reason: Literal["image-pull", "crash-loop", "config-error"]


_IMAGE_PULL = {
    "ErrImagePull",
    "ImagePullBackOff",
    "InvalidImageName",
    "ErrImageNeverPull",
    "RegistryUnavailable",
}
_CONFIG = {"CreateContainerConfigError", "CreateContainerError", "RunContainerError", "PreCreateHookError"}
_RESTARTS_WORTH_A_LOOK = 3


def _failure_kind(status: ContainerStatus, pod: Pod) -> str | None:
    if status.ready and not status.reason:
        return None  # a running container, whatever its restarts: decided without string work
    reason = (status.reason or "").split(":")[-1]
    if reason in _IMAGE_PULL:
        return "image-pull"
    if reason in _CONFIG:
        return "config-error"
    if reason in {"CrashLoopBackOff", "OOMKilled"}:
        return "crash-loop"
    if status.restart_count >= _RESTARTS_WORTH_A_LOOK and not status.ready and pod.phase != "Succeeded":
        return "crash-loop"
    return None


def _image_of(pod: Pod, container: str) -> str:
    spec = next((c for c in pod.containers + pod.init_containers if c.name == container), None)
    status = next((s for s in pod.container_statuses if s.name == container), None)
    return (spec.image if spec else None) or (status.image if status else None) or ""


def failing_pods(ctx: Context) -> list[tuple[Pod, list[tuple[ContainerStatus, str]]]]:
    """One pass over the Pods for the three failure rules."""
    found = []
    for pod in ctx.troubled_pods:
        failing = [
            (s, kind)
            for s in pod.container_statuses
            if not (s.ready and not s.reason) and (kind := _failure_kind(s, pod))
        ]
        if failing:
            found.append((pod, failing))
    return found


@detector(
    "pod_failures",
    ("pod", "container", "reason", "message", "image", "restarts", "exit_code", "group", "raycluster"),
    FailureParams,
)
def pod_failures(ctx: Context, rule: Rule) -> Iterable[Hit]:
    wanted = FailureParams(**rule.params).reason
    for pod, failing in ctx.memo("pod_failures", lambda: failing_pods(ctx)):
        matching = [s for s, kind in failing if kind == wanted]
        if not matching:
            continue
        status = matching[0]
        evidence = [
            Evidence(
                source=f"pod {pod.name} {'init container' if s.init else 'container'} {s.name}",
                text=" ".join(
                    part
                    for part in (
                        s.reason or "",
                        s.message or "",
                        f"(restarts: {s.restart_count})" if s.restart_count else "",
                        f"last terminated: {s.last_terminated_reason}" if s.last_terminated_reason else "",
                    )
                    if part
                ),
            )
            for s in matching[:3]
        ]
        warnings = [e for e in ctx.events_for(pod.name, pod.namespace) if e.type == "Warning"]
        evidence += [Evidence(source=f"event {e.reason}", text=e.message) for e in warnings[-3:]]
        container = (
            status.name if status.name != "(unknown)" else (pod.containers[0].name if pod.containers else "")
        )
        yield Hit(
            Subject(kind="Pod", name=pod.name, namespace=pod.namespace),
            tuple(evidence),
            {
                "pod": pod.name,
                "namespace": pod.namespace,
                "container": container,
                "reason": status.reason or "",
                "message": status.message or "",
                "image": _image_of(pod, status.name),
                "restarts": str(status.restart_count),
                "exit_code": "" if status.exit_code is None else str(status.exit_code),
                "group": pod.labels.get(RAY_GROUP_LABEL, ""),
                "raycluster": pod.labels.get(RAY_CLUSTER_LABEL, ""),
            },
        )


# kube-apiserver's ResourceQuota admission refuses a Pod in one of these words (its controller in
# plugin/pkg/admission/resourcequota): the request would pass a hard limit; a Pod states no request
# or limit for a resource the quota caps (``must specify cpu,memory`` before 1.27, then
# ``must specify limits.cpu for: app; requests.memory for: app``); a quota that limits a scope
# (a PriorityClass, say) has no entry for this Pod's; or the quota's usage is not known yet.
_QUOTA = re.compile(
    r"exceeded quota: (?P<quota>[^,\s]+),\s*requested: (?P<requested>[^,]+(?:,[^,:]+=[^,]+)*),\s*"
    r"used: (?P<used>.+?),\s*limited: (?P<limited>[^'\"\\\n]+)"
)
_MUST_SPECIFY = re.compile(
    r"[Ff]ailed quota: (?P<quota>[^:\s]+):\s*must specify (?P<missing>[^'\"\\\n]+?)\s*(?:$|['\"\\])",
    re.MULTILINE,
)
_QUOTA_WORDS = re.compile(
    r"exceeded quota|[Ff]ailed quota: [^:\s]+:\s*must specify|insufficient quota to match these scopes|"
    r"status unknown for quota"
)
_OTHER_QUOTA = re.compile(
    r"(?:insufficient quota to match these scopes: (?P<scopes>[^'\"\\\n]+)|"
    r"status unknown for quota: (?P<quota>[^,\s]+))"
)
_OPERATOR_LOG = re.compile(r'"level":"error"|\bERROR\b|Reconciler error')
# ``pods "raycluster-x-worker-gpu-abcde" is forbidden: exceeded quota: ...``
_REFUSED_POD = re.compile(r"\bpods? \\?\"(?P<pod>[^\"\\]+)\\?\" is forbidden")
QuotaForm = Literal["exceeded", "must-specify"]


class QuotaParams(StrictRecord):
    form: QuotaForm = "exceeded"


def _quota_messages(ctx: Context) -> Iterator[tuple[Subject, str, str]]:
    """Every place a quota refusal is written down: the owner's FailedCreate event, the RayCluster's
    ``status.reason`` or condition (KubeRay copies the API error there), a RayJob's message, and
    operator log lines; as (subject, where it was read, the message)."""
    for event in ctx.events_that_may_match(_QUOTA_WORDS):
        if _QUOTA_WORDS.search(event.message):
            subject = Subject(
                kind=event.object_kind or "Object", name=event.object_name, namespace=event.namespace
            )
            yield subject, f"event {event.reason}", event.message
    for cluster in ctx.kube.rayclusters:
        subject = Subject(kind="RayCluster", name=cluster.name, namespace=cluster.namespace)
        for text in (cluster.reason, *(c.message for c in cluster.conditions)):
            if text and _QUOTA_WORDS.search(text):
                yield subject, f"raycluster {cluster.name} status", text
    for job in ctx.kube.rayjobs:
        if job.message and _QUOTA_WORDS.search(job.message):
            yield (
                Subject(kind="RayJob", name=job.name, namespace=job.namespace),
                f"rayjob {job.name}",
                job.message,
            )
    for line in ctx.texts_that_may_match(_QUOTA_WORDS):
        if line.source == "event" or not _QUOTA_WORDS.search(line.text):
            continue
        # The KubeRay operator's own "exceeded quota" log has a rule of its own
        # (kuberay-operator-quota-exceeded).
        if "exceeded quota" in line.text and _OPERATOR_LOG.search(line.text):
            continue
        yield Subject(kind="Text", name=None), line.source, line.text


def _quota_fields(message: str) -> tuple[QuotaForm, dict[str, str]]:
    if match := _MUST_SPECIFY.search(message):
        missing = match.group("missing").strip().rstrip(".")
        # ``limits.cpu for: app; requests.memory for: app`` (1.27 on) or ``cpu,memory`` (before).
        names = dict.fromkeys(part.split(" for:")[0].strip() for part in re.split(r"[;,]", missing))
        return "must-specify", {
            "quota": match.group("quota"),
            "missing": missing,
            "resource": ", ".join(n for n in names if n),
        }
    if match := _QUOTA.search(message):
        fields = match.groupdict()
        requested = fields["requested"]
        fields["resource"] = requested.split("=", 1)[0] if "=" in requested else ""
        return "exceeded", fields
    other = _OTHER_QUOTA.search(message)
    if other and other.group("scopes"):
        return "exceeded", {"resource": f"scopes {other.group('scopes').strip()}"}
    return "exceeded", {"quota": other.group("quota") if other and other.group("quota") else ""}


@detector(
    "quota_exceeded",
    ("quota", "resource", "requested", "used", "limited", "owner", "message", "pod", "missing"),
    QuotaParams,
)
def quota_exceeded(ctx: Context, rule: Rule) -> Iterable[Hit]:
    wanted = QuotaParams(**rule.params).form
    seen: set[tuple[str | None, str]] = set()
    for subject, where, message in _quota_messages(ctx):
        form, fields = _quota_fields(message)
        if form != wanted:
            continue
        # One refusal per quota and owner: the operator retries and repeats the same error.
        key = (subject.name, fields.get("quota") or message)
        if key in seen or (subject.kind == "Text" and any(k[1] == key[1] for k in seen)):
            continue
        seen.add(key)
        refused = _REFUSED_POD.search(message)
        owner = f"{subject.kind}/{subject.name}" if subject.name and subject.kind != "Text" else ""
        yield Hit(
            subject,
            (Evidence(source=where, text=message),),
            {
                "namespace": subject.namespace or "",
                "quota": fields.get("quota", ""),
                "resource": fields.get("resource", ""),
                "requested": fields.get("requested", ""),
                "used": fields.get("used", ""),
                "limited": (fields.get("limited") or "").strip(),
                "missing": fields.get("missing", ""),
                "owner": owner or (f"Pod/{refused.group('pod')}" if refused else ""),
                "pod": refused.group("pod") if refused else "",
                "message": message,
            },
        )


@detector("kueue_admitted", ("workload", "queue", "status", "object"))
def kueue_admitted(ctx: Context, rule: Rule) -> Iterable[Hit]:
    """Kueue Workloads shown as admitted: Kueue has let the job in, so it is not what holds it."""
    for workload in ctx.kube.workloads:
        if not workload.admitted:
            continue
        # Kueue's own message is quoted; without one, raydiag says "admitted" in the reader's language.
        said = Evidence(
            source=f"kueue workload {workload.name}",
            text=workload.message or "admitted",
            phrase=None if workload.message else "evidence.kueue_admitted",
        )
        yield Hit(
            Subject(kind="Workload", name=workload.name, namespace=workload.namespace),
            (said,),
            {
                "workload": workload.name,
                "namespace": workload.namespace,
                "queue": workload.queue or "?",
                "status": workload.message or "admitted",
                "object": f"workload/{workload.name}",
            },
        )


@detector("scheduling_gates", ("pod", "gate", "object"))
def scheduling_gates(ctx: Context, rule: Rule) -> Iterable[Hit]:
    """Pods held by a scheduling gate, and Kueue Workloads not admitted yet: queued, not stuck."""
    for workload in ctx.kube.workloads:
        if workload.admitted:
            continue
        owner = f"{workload.owner.kind}/{workload.owner.name}" if workload.owner else workload.name
        yield Hit(
            Subject(kind="Workload", name=workload.name, namespace=workload.namespace),
            (
                Evidence(
                    source=f"kueue workload {workload.name}",
                    text=workload.message or "not admitted",
                    phrase=None if workload.message else "evidence.kueue_not_admitted",
                ),
            ),
            {
                "pod": owner,
                "namespace": workload.namespace,
                # The renderer says "Kueue LocalQueue <queue>".
                "gate_queue": workload.queue or "?",
                "object": f"workload/{workload.name}",
            },
        )
    for pod in ctx.unscheduled_pods:
        if pod.scheduling_gates:
            yield Hit(
                Subject(kind="Pod", name=pod.name, namespace=pod.namespace),
                (
                    Evidence(
                        source=f"pod {pod.name} spec.schedulingGates", text=", ".join(pod.scheduling_gates)
                    ),
                ),
                {
                    "pod": pod.name,
                    "namespace": pod.namespace,
                    "gate": ", ".join(pod.scheduling_gates),
                    "object": f"pod/{pod.name}",
                },
            )


class CollectionParams(StrictRecord):
    source_prefix: str


@detector("collection_errors", ("source", "message", "hint"), CollectionParams)
def collection_errors(ctx: Context, rule: Rule) -> Iterable[Hit]:
    prefix = CollectionParams(**rule.params).source_prefix
    for error in ctx.snapshot.errors:
        if not error.source.startswith(prefix):
            continue
        yield Hit(
            Subject(kind="Collection", name=error.source),
            (Evidence(source=error.source, text=error.message),),
            {"source": error.source, "message": error.message, "hint": error.hint or ""},
        )


# GKE Autopilot's admission webhook (GKE Warden, earlier the GKE Policy Controller) refuses a
# workload with ``Violations details: {"[denied by <constraint>]":["<why>", ...]}``; the JSON is
# often spread over several pasted lines, or escaped inside an API Status or a controller log.
_DENIED = re.compile(r"\[denied by (?P<constraint>(?:autogke|autopilot)-[\w-]+)\]")
_VIOLATION = re.compile(
    r"\[denied by (?P<constraint>(?:autogke|autopilot)-[\w-]+)\]\\?\"?\s*:?\s*\[?\s*\\?\"?"
    r"(?P<violation>.+?)(?=\\?\"\s*[,\]}]|\[denied by|$)"
)
_NOT_ALLOWED_KEY = re.compile(r"Key '(?P<key>[^']+)' is not allowed")
_SUPPORTED = re.compile(r"supported values are: \[(?P<values>[^\]]*)\]")
# What a node constraint violation is about (as opposed to hostPath, privilege or capabilities,
# which are not scheduling at all).
_NODE_WORDS = re.compile(
    r"node selector|node affinity|nodeSelector|compute[- ]class|gke-accelerator|toleration|"
    r"nvidia\.com/gpu|gke-tpu|GPU|TPU|machine-family|gke-spot|placement",
)
_OVER_MAXIMUM = re.compile(r"higher than the Autopilot maximum|exceeds? the (?:Autopilot )?maximum")
# A part of the Pod spec Autopilot does not run at all (host ports, host namespaces, privileged
# containers, GPU init containers, ...): the Pod is never created, whatever the node constraints.
_UNSUPPORTED = re.compile(
    r"\b(?:not (?:supported|allowed|permitted)|disallowed|cannot be specified)\b[^.]*\bAutopilot\b|"
    r"\bAutopilot\b[^.]*\b(?:does not|doesn't) (?:support|allow)\b|"
    r";\s*(?:not allowed|disallowed) in Autopilot"
)
# The violation sentence quoted alone, without Warden's ``[denied by ...]`` wrapper.
_BARE_VIOLATION = re.compile(
    r"(?P<violation>[A-Z][^\n\"\[\]{}]{8,300}?\b(?:not (?:supported|allowed)|disallowed) in (?:GKE )?"
    r"Autopilot\b[^\n\"]{0,80}?)"
    r"(?:\.|$)",
    re.MULTILINE,
)
_WINDOW = 8
AutopilotCategory = Literal["node-constraint", "over-maximum", "unsupported"]


class AutopilotParams(StrictRecord):
    category: AutopilotCategory


def _autopilot_category(constraint: str, violation: str) -> AutopilotCategory | None:
    if "pod-limit" in constraint or "resource" in constraint:
        return "over-maximum" if _OVER_MAXIMUM.search(violation) else None
    unsupported = _UNSUPPORTED.search(violation) is not None and not _NOT_ALLOWED_KEY.search(violation)
    if (
        re.search(r"gpu|tpu|accelerator|compute-class|node-affinity|selector", constraint)
        and _NODE_WORDS.search(violation)
        and not (unsupported and "container" in violation.lower())
    ):
        return "node-constraint"
    return "unsupported" if unsupported else None


def _autopilot_denials(ctx: Context) -> list[tuple[AutopilotCategory, Text, dict[str, str]]]:
    texts = ctx.texts
    found: list[tuple[AutopilotCategory, Text, dict[str, str]]] = []
    seen: set[tuple[str, str]] = set()

    def keep(constraint: str, violation: str, quoted: str, text: Text) -> None:
        """One violation, with or without Warden's ``[denied by ...]`` around it, once."""
        category = _autopilot_category(constraint, violation)
        if category is None or (constraint, violation) in seen:
            return
        seen.add((constraint, violation))
        key = _NOT_ALLOWED_KEY.search(violation)
        supported = _SUPPORTED.search(violation)
        facts = {
            "constraint": constraint,
            "violation": violation,
            "quoted": quoted.strip(),
            "key": key.group("key") if key else "",
            "known_values": supported.group("values") if supported else "",
        }
        found.append((category, text, facts))

    denied = ctx.lines_that_may_match(_DENIED)
    bare_lines = ctx.lines_that_may_match(_BARE_VIOLATION)
    i = 0
    while i < len(texts):
        if i not in denied or not _DENIED.search(texts[i].text):
            if i in bare_lines and (bare := _BARE_VIOLATION.search(texts[i].text)):
                keep("", bare.group("violation").strip(), bare.group(0), texts[i])
            i += 1
            continue
        # The constraint's reasons may follow on the next lines (pretty-printed JSON).
        end = i + 1
        while end < len(texts) and end - i < _WINDOW:
            if end in denied and _DENIED.search(texts[end].text):
                break
            if texts[end].source != texts[i].source:
                break
            end += 1
        joined = " ".join(t.text.strip() for t in texts[i:end])
        for match in _VIOLATION.finditer(joined):
            violation = match.group("violation").strip(' "[').rstrip(".")
            keep(match.group("constraint"), violation, match.group(0), texts[i])
        i = end
    return found


@detector("autopilot_denials", ("constraint", "violation", "key", "known_values", "pod"), AutopilotParams)
def autopilot_denials(ctx: Context, rule: Rule) -> Iterable[Hit]:
    """GKE Autopilot refused the workload at admission: no Pod exists, so no scheduler speaks."""
    wanted = AutopilotParams(**rule.params).category
    grouped: dict[Subject, tuple[dict[str, str], list[Evidence]]] = {}
    for category, text, params in ctx.memo("autopilot_denials", lambda: _autopilot_denials(ctx)):
        if category != wanted:
            continue
        refused = _REFUSED_POD.search(text.text)
        if text.object_kind and text.object_name:
            subject = Subject(kind=text.object_kind, name=text.object_name, namespace=text.namespace)
        else:
            subject = Subject(kind="Text", name=None)
        values, evidence = grouped.setdefault(
            subject, ({**params, "pod": refused.group("pod") if refused else ""}, [])
        )
        if evidence:
            # Every violation of the same kind is shown; the first names the finding.
            values["violation"] = f"{values['violation']}; {params['violation']}"
            values["key"] = values["key"] or params["key"]
            values["known_values"] = values["known_values"] or params["known_values"]
        evidence.append(
            Evidence(source=f"{text.source} (GKE Autopilot admission)", text=params["quoted"][:600])
        )
    for subject, (values, evidence) in grouped.items():
        yield Hit(subject, tuple(evidence[:5]), values)
