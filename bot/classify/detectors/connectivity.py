"""Head and workers: is every running Ray Pod a Ray node that joined?

A Pod that Kubernetes runs is only a container; it becomes a Ray node when its raylet registers
with the head's GCS. These detectors correlate the two layers by Pod IP and look at what stands
between them: the head Pod, the head Service and its endpoints, versions, NetworkPolicies.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from bot.catalogue import Rule
from bot.classify.context import RAY_CLUSTER_LABEL, RAY_GROUP_LABEL, Context
from bot.classify.registry import Hit, detector
from bot.diagnosis import Evidence, Subject
from bot.snapshot.base import StrictRecord
from bot.snapshot.kubernetes import Pod


def _worker_pod_params(pod: Pod) -> dict[str, str]:
    """The names a worker finding fills its commands with."""
    return {
        "pod": pod.name,
        "namespace": pod.namespace,
        "pod_ip": pod.pod_ip or "",
        "group": pod.labels.get(RAY_GROUP_LABEL, ""),
        "container": _container_name(pod),
    }


def _container_name(pod: Pod) -> str:
    return pod.containers[0].name if pod.containers else ""


def _head_params(ctx: Context, pod: Pod) -> dict[str, str]:
    cluster = pod.labels.get(RAY_CLUSTER_LABEL, "")
    head = ctx.head_pod_for(cluster or None, pod.namespace)
    return {
        "raycluster": cluster,
        "head_pod": head.name if head else "",
        "head_container": _container_name(head) if head else "",
        "service": f"{cluster}-head-svc" if cluster else "",
    }


class JoinParams(StrictRecord):
    # ip: a Pod whose IP has no Ray node; count: fewer Ray nodes than running worker Pods, which
    # ones the paste cannot tell; unready: no Ray layer, but a worker runs unready and restarts.
    match: Literal["ip", "count", "unready"] = "ip"


JOIN_PROVIDES = (
    "pod",
    "pod_ip",
    "group",
    "container",
    "ray_nodes",
    "ready_workers",
    "head_pod",
    "head_container",
    "service",
    "raycluster",
    "missing",
    "alive",
    "unready",
    "ready",
    "restarts",
    "owner",
)


@dataclass
class _JoinHit:
    match: str
    hit: Hit


def _running_workers(ctx: Context) -> list[Pod]:
    return [p for p in ctx.worker_pods if p.phase == "Running" and not p.deleting and ctx.in_scope(p)]


def _ready_column(pod: Pod) -> str:
    """``READY`` as ``kubectl get pods`` prints it, as far as the snapshot knows the containers."""
    statuses = [s for s in pod.container_statuses if not s.init]
    if statuses and all(s.name != "(unknown)" for s in statuses):
        return f"{sum(s.ready for s in statuses)}/{len(statuses)}"
    return "True" if pod.ready else "False"


def _restarts(pod: Pod) -> int:
    return max((s.restart_count for s in pod.container_statuses if not s.init), default=0)


def _pod_line(pod: Pod) -> Evidence:
    """``Running, 0/1, 3 restart(s), IP 10.0.0.5``: a Pod as ``kubectl get pods -o wide`` shows it."""
    status, ready, restarts = pod.display_status or pod.phase, _ready_column(pod), _restarts(pod)
    parts = [status, ready]
    values = {"status": status, "ready": ready}
    key = "evidence.pod_line"
    if restarts:
        parts.append(f"{restarts} restart(s)")
        values["count"] = str(restarts)
        key += "_restarts"
    if pod.pod_ip:
        parts.append(f"IP {pod.pod_ip}")
        values["ip"] = pod.pod_ip
        key += "_ip"
    return Evidence(source=f"pod {pod.name}", text=", ".join(parts), phrase=key, values=values)


def _by_ip(ctx: Context, running: list[Pod]) -> bool:
    """Whether Pods and Ray nodes can be matched one by one: every side names its IP."""
    return (
        ctx.ray_nodes_known
        and bool(ctx.ray_nodes)
        and all(n.node_ip for n in ctx.ray_nodes)
        and all(p.pod_ip for p in running)
    )


def _ray_node_ips(ctx: Context) -> Evidence:
    ips = ", ".join(sorted(ctx.ray_nodes_by_ip))
    count = str(len(ctx.ray_nodes))
    if not ips:
        return Evidence(
            source="ray nodes",
            text=f"{count} alive; IPs: none",
            phrase="evidence.ray_nodes_no_ips",
            values={"count": count},
        )
    return Evidence(
        source="ray nodes",
        text=f"{count} alive; IPs: {ips}",
        phrase="evidence.ray_nodes_ips",
        values={"count": count, "ips": ips},
    )


def _ip_hits(ctx: Context, running: list[Pod]) -> Iterable[Hit]:
    alive_workers = len([n for n in ctx.ray_nodes if not n.is_head])
    for pod in running:
        if pod.pod_ip in ctx.ray_nodes_by_ip:
            continue
        head = _head_params(ctx, pod)
        evidence = [
            Evidence(
                source=f"pod {pod.name}",
                text=f"phase Running, Ready {pod.ready}, IP {pod.pod_ip}",
                phrase="evidence.pod_running_ready",
                values={"ready": str(pod.ready), "ip": str(pod.pod_ip)},
            ),
            _ray_node_ips(ctx),
        ]
        evidence += _log_tail(ctx, pod)
        yield Hit(
            Subject(kind="Pod", name=pod.name, namespace=pod.namespace),
            tuple(evidence),
            {
                **_worker_pod_params(pod),
                "ray_nodes": str(alive_workers),
                "ready_workers": str(len(running)),
                **head,
            },
        )


def _count_hits(ctx: Context, running: list[Pod]) -> Iterable[Hit]:
    counted = ctx.ray_node_count
    clusters = {p.labels.get(RAY_CLUSTER_LABEL) for p in running}
    if counted is None or len(clusters) > 1:
        return  # one Ray status describes one cluster: Pods of several cannot be counted against it
    alive, joined = counted
    missing = len(running) - joined
    if missing <= 0:
        return
    # Ray's readiness probe and a worker that cannot join fail together: unready Pods go first.
    unready = [p for p in running if not p.ready]
    candidates = unready if len(unready) == missing else running
    head = _head_params(ctx, running[0])
    named = ", ".join(p.name for p in candidates[:8]) + (" …" if len(candidates) > 8 else "")
    evidence = [_pod_line(p) for p in running[:8]]
    evidence.append(
        Evidence(
            source="ray status" if not ctx.ray_nodes_known else "ray nodes",
            text=f"{alive} node(s) alive, the head included",
            phrase="evidence.nodes_alive",
            values={"count": str(alive)},
        )
    )
    for pod in candidates[:3]:
        evidence += _log_tail(ctx, pod)
    yield Hit(
        Subject(kind="RayCluster", name=head["raycluster"] or None, namespace=running[0].namespace),
        tuple(evidence),
        {
            "pod": named,
            "namespace": running[0].namespace,
            "ray_nodes": str(joined),
            "alive": str(alive),
            "ready_workers": str(len(running)),
            "missing": str(missing),
            "unready": ", ".join(p.name for p in unready[:8]) or "—",
            "group": candidates[0].labels.get(RAY_GROUP_LABEL, ""),
            "container": _container_name(candidates[0]),
            **head,
        },
    )


# Deployment statuses of a RayJob still waiting for its cluster: v1.1 on, and v1.0's names.
_OWNER_WAITING = {
    "Initializing",
    "Pending",
    "Waiting",
    "New",
    "",
    "WaitForDashboard",
    "WaitForDashboardReady",
    "WaitForK8sJob",
}


@detector("job_waits_for_cluster", ("job", "namespace", "status", "cluster_name", "message"))
def job_waits_for_cluster(ctx: Context, rule: Rule) -> Iterable[Hit]:
    """A RayJob KubeRay still holds back for its RayCluster (``Initializing``) when the paste shows
    neither that cluster nor any Pod: KubeRay submits the job only
    once the cluster is ready, so the reason is in the cluster's Pods, which the paste leaves out.
    Where Pods or the RayCluster are shown, their own rules say what holds it."""
    if ctx.kube.pods:
        return
    shown = {c.name for c in ctx.kube.rayclusters}
    for job in ctx.kube.rayjobs:
        status = job.deployment_status or ""
        # ``Initializing`` (every KubeRay release) is the one state that means "the cluster is not
        # ready yet"; the later waits (dashboard, submitter Job, interactive mode) have a cluster.
        if status != "Initializing" or (job.job_status or "").strip():
            continue
        if job.cluster_name and job.cluster_name in shown:
            continue
        yield Hit(
            Subject(kind="RayJob", name=job.name, namespace=job.namespace),
            (Evidence(source=f"rayjob {job.name}", text=f"{status} {job.cluster_name or ''}".strip()),),
            {
                "job": job.name,
                "namespace": job.namespace,
                "status": status,
                "cluster_name": job.cluster_name or "<cluster>",
                "message": job.message or "",
            },
        )


def _owner_waiting(ctx: Context, pod: Pod) -> str:
    """The RayJob, RayService or RayCluster of ``pod`` that is still waiting for its cluster."""
    cluster = pod.labels.get(RAY_CLUSTER_LABEL)
    if not cluster:
        return ""
    for job in ctx.kube.rayjobs:
        if job.cluster_name == cluster and (job.deployment_status or "") in _OWNER_WAITING:
            return f"RayJob {job.name} {job.deployment_status or 'has no deployment status'}"
    for service in ctx.kube.rayservices:
        if service.cluster_name == cluster and (service.service_status or "") != "Running":
            return f"RayService {service.name} {service.service_status or 'not running'}"
    raycluster = ctx.raycluster_for(pod)
    if raycluster is not None and (raycluster.state or "").lower() != "ready":
        return f"RayCluster {raycluster.name} {raycluster.state or 'not ready'}"
    return ""


def _unready_hits(ctx: Context, running: list[Pod]) -> Iterable[Hit]:
    for pod in running:
        failing = any(
            s.reason or s.last_terminated_reason == "OOMKilled" for s in pod.container_statuses if not s.init
        )
        if pod.ready or failing or (pod.display_status or "Running") != "Running":
            continue  # Ready, or failing for a reason of its own (the Pod-health rules say which)
        head_pod = ctx.head_pod_for(pod.labels.get(RAY_CLUSTER_LABEL), pod.namespace)
        if head_pod is not None and not head_pod.ready:
            continue  # the head is the problem: ray-head-not-ready
        owner = _owner_waiting(ctx, pod)
        restarts = _restarts(pod)
        if not (restarts or owner):
            continue  # a worker still starting up
        head = _head_params(ctx, pod)
        evidence = [_pod_line(pod)]
        if head_pod is not None:
            evidence.append(_pod_line(head_pod))
        if owner:
            evidence.append(Evidence(source=owner.split(" ", 2)[0].lower(), text=owner))
        evidence += _log_tail(ctx, pod)
        yield Hit(
            Subject(kind="Pod", name=pod.name, namespace=pod.namespace),
            tuple(evidence),
            {
                **_worker_pod_params(pod),
                "ready": _ready_column(pod),
                "restarts": str(restarts),
                "owner": owner,
                **head,
            },
        )


def _join_hits(ctx: Context) -> list[_JoinHit]:
    running = _running_workers(ctx)
    if not running:
        return []
    if ctx.ray is None:
        return [_JoinHit("unready", hit) for hit in _unready_hits(ctx, running)]
    if _by_ip(ctx, running):
        return [_JoinHit("ip", hit) for hit in _ip_hits(ctx, running)]
    return [_JoinHit("count", hit) for hit in _count_hits(ctx, running)]


@detector("worker_not_joined", JOIN_PROVIDES, JoinParams)
def worker_not_joined(ctx: Context, rule: Rule) -> Iterable[Hit]:
    wanted = JoinParams(**rule.params).match
    for found in ctx.memo("worker_not_joined", lambda: _join_hits(ctx)):
        if found.match == wanted:
            yield found.hit


_CONNECTION_HINT = re.compile(
    r"GCS|gcs_|connect|Version mismatch|raylet|timed? ?out|heartbeat|marked dead|health check", re.IGNORECASE
)


def _log_tail(ctx: Context, pod: Pod) -> list[Evidence]:
    lines = [
        line
        for log in ctx.kube.logs
        if log.pod == pod.name and log.namespace == pod.namespace
        for line in log.lines
        if _CONNECTION_HINT.search(line)
    ]
    return [Evidence(source=f"log {pod.name}", text=line) for line in lines[-3:]]


def _waits_for_head(pod: Pod) -> bool:
    """A worker held back by its head: in its init containers (KubeRay's ``wait-gcs-ready``), or
    running unready."""
    if pod.deleting or pod.terminated:
        return False
    if (pod.display_status or "").startswith("Init:") or any(
        s.init and s.state != "terminated" for s in pod.container_statuses
    ):
        return True
    return pod.phase == "Running" and not pod.ready


def _head_failure(pod: Pod) -> tuple[str, int]:
    """What keeps a head container down, as its status says (``CrashLoopBackOff``, ``OOMKilled``),
    and how often it restarted."""
    for status in pod.container_statuses:
        if status.init:
            continue
        reason = status.reason or status.last_terminated_reason
        if reason:
            return reason, status.restart_count
    return "", 0


@detector("head_not_ready", ("pod", "container", "reason", "raycluster", "service", "waiting"))
def head_not_ready(ctx: Context, rule: Rule) -> Iterable[Hit]:
    for pod in ctx.head_pods:
        if pod.phase != "Running" or pod.ready:
            continue  # Pending and failed heads are reported by the scheduling and Pod-health rules.
        cluster = pod.labels.get(RAY_CLUSTER_LABEL, "")
        waiting = [
            w
            for w in ctx.worker_pods
            if w.namespace == pod.namespace
            and w.labels.get(RAY_CLUSTER_LABEL, "") == cluster
            and _waits_for_head(w)
        ]
        failure, restarts = _head_failure(pod)
        if failure and not waiting:
            continue  # a crashing head alone is the Pod-health rules' (its log says why it dies)
        ready = pod.condition("Ready")
        reason = failure or ((ready.reason or ready.message or "") if ready else "")
        # ``reason`` is the status's own word; "N restart(s)" is composed by the renderer.
        counted = str(restarts) if failure and restarts else ""
        shown = f"{reason}, {counted} restart(s)" if counted else reason
        evidence = [
            Evidence(
                source=f"pod {pod.name}",
                text=f"{pod.display_status or pod.phase}, Ready False" + (f" ({shown})" if shown else ""),
                phrase="evidence.head_restarting" if counted else None,
                values={"status": pod.display_status or pod.phase, "reason": reason, "count": counted}
                if counted
                else {},
            )
        ]
        evidence += [
            Evidence(
                source=f"pod {w.name}",
                text=f"{w.display_status or w.phase}, Ready False",
                phrase="evidence.pod_not_ready",
                values={"status": w.display_status or w.phase},
            )
            for w in waiting[:5]
        ]
        yield Hit(
            Subject(kind="Pod", name=pod.name, namespace=pod.namespace),
            tuple(evidence),
            {
                "pod": pod.name,
                "namespace": pod.namespace,
                "container": _container_name(pod),
                "reason": reason,
                "restart_count": counted,
                "raycluster": cluster,
                "service": f"{cluster}-head-svc" if cluster else "",
                "waiting": ", ".join(w.name for w in waiting[:8]) or "—",
            },
        )


def _selects(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


@detector("head_service", ("service", "selector", "head_pod", "raycluster", "ports"))
def head_service(ctx: Context, rule: Rule) -> Iterable[Hit]:
    endpoints = {(e.namespace, e.name): e for e in ctx.kube.endpoints}
    pods_seen = ctx.pod_namespaces
    for service in ctx.kube.services:
        is_head = service.selector.get("ray.io/node-type") == "head" or service.name.endswith("-head-svc")
        if not is_head:
            continue
        # A head Service selects on ray.io labels, so only Ray Pods can match it.
        ray_selector = any(k.startswith("ray.io/") for k in service.selector)
        candidates = ctx.ray_pods if ray_selector else ctx.pods_by_namespace.get(service.namespace, [])
        selected = [
            p for p in candidates if p.namespace == service.namespace and _selects(service.selector, p.labels)
        ]
        endpoint = endpoints.get((service.namespace, service.name))
        ready = [a for a in endpoint.addresses if a.ready] if endpoint else []
        selector = ", ".join(f"{k}={v}" for k, v in service.selector.items())
        evidence: list[Evidence] = []
        if service.namespace in pods_seen and not selected:
            evidence.append(
                Evidence(
                    source=f"service {service.name}",
                    text=f"selector {selector} matches no Pod",
                    phrase="evidence.selector_matches_nothing",
                    values={"selector": selector},
                )
            )
        if endpoint is not None and not ready:
            not_ready = [a.ip for a in endpoint.addresses if not a.ready]
            addresses = ", ".join(not_ready)
            evidence.append(
                Evidence(
                    source=f"endpoints {service.name}",
                    text="no ready addresses" + (f"; not ready: {addresses}" if not_ready else ""),
                    phrase=f"evidence.no_ready_addresses{'_some_not' if not_ready else ''}",
                    values={"addresses": addresses} if not_ready else {},
                )
            )
        if not evidence:
            continue
        cluster = service.selector.get(RAY_CLUSTER_LABEL) or service.name.removesuffix("-head-svc")
        head = ctx.head_pod_for(cluster, service.namespace)
        yield Hit(
            Subject(kind="Service", name=service.name, namespace=service.namespace),
            tuple(evidence),
            {
                "service": service.name,
                "namespace": service.namespace,
                "selector": selector,
                "head_pod": head.name if head else "",
                "raycluster": cluster,
                "ports": ", ".join(f"{p.name or ''}:{p.port}".lstrip(":") for p in service.ports),
            },
        )


_VERSION = re.compile(r"(\d+\.\d+\.\d+)")


def _image_version(image: str | None) -> str | None:
    if not image or ":" not in image.rsplit("/", 1)[-1]:
        return None
    match = _VERSION.search(image.rsplit(":", 1)[-1])
    return match.group(1) if match else None


@detector("version_skew", ("raycluster", "group", "head_image", "worker_image", "ray_version"))
def version_skew(ctx: Context, rule: Rule) -> Iterable[Hit]:
    for cluster in ctx.kube.rayclusters:
        head_container = cluster.head.ray_container if cluster.head else None
        head_image = head_container.image if head_container else None
        head_version = _image_version(head_image)
        for group in cluster.worker_groups:
            container = group.ray_container
            image = container.image if container else None
            version = _image_version(image)
            if head_version and version and version != head_version:
                yield Hit(
                    Subject(kind="RayCluster", name=cluster.name, namespace=cluster.namespace),
                    (
                        Evidence(
                            source=f"raycluster {cluster.name}",
                            text=f"head {head_image}; {group.name} {image}",
                        ),
                    ),
                    {
                        "raycluster": cluster.name,
                        "namespace": cluster.namespace,
                        "group": group.name,
                        "head_image": head_image or "",
                        "worker_image": image or "",
                        "ray_version": cluster.ray_version or "",
                    },
                )


@detector("network_policy", ("policy", "selector", "raycluster"))
def network_policy(ctx: Context, rule: Rule) -> Iterable[Hit]:
    ray_pods: dict[str, list[Pod]] = {}
    for pod in ctx.ray_pods:
        ray_pods.setdefault(pod.namespace, []).append(pod)
    for policy in ctx.kube.network_policies:
        restricts_ingress = "Ingress" in policy.policy_types or not policy.policy_types
        if not restricts_ingress or policy.ingress_rules > 0:
            continue
        hit_pods = [
            p
            for p in ray_pods.get(policy.namespace, ())
            if policy.selects_all or _selects(policy.pod_selector, p.labels)
        ]
        if not hit_pods:
            continue
        selector = ", ".join(f"{k}={v}" for k, v in policy.pod_selector.items()) or "all Pods"
        yield Hit(
            Subject(kind="NetworkPolicy", name=policy.name, namespace=policy.namespace),
            (
                Evidence(
                    source=f"networkpolicy {policy.name}",
                    text=f"podSelector {selector}; "
                    f"policyTypes {', '.join(policy.policy_types) or 'Ingress'}; "
                    f"0 ingress rules; selects {len(hit_pods)} Ray Pod(s)",
                ),
            ),
            {
                "policy": policy.name,
                "namespace": policy.namespace,
                "selector": selector,
                "raycluster": hit_pods[0].labels.get(RAY_CLUSTER_LABEL, ""),
            },
        )


class HeadConditionParams(StrictRecord):
    # ``probe``: the head's containers run but fail readiness (KubeRay's ``ContainersNotReady``);
    # ``container``: a container of the head is waiting or ended (KubeRay v1.6+ copies the first such
    # container's reason, ``CrashLoopBackOff`` say, into the condition in its place).
    state: Literal["probe", "container"]


# What FindHeadPodReadyCondition (ray-operator/controllers/ray/utils/util.go) writes as the reason of
# a False HeadPodReady besides a container's own reason: the Pod's Ready reason, KubeRay's
# ``HeadPodNotFound`` and ``Unknown`` (nothing to tell yet), and the Pod's ``PodCompleted``.
_HEAD_NOT_CONTAINER_REASONS = frozenset({"ContainersNotReady", "HeadPodNotFound", "Unknown", "PodCompleted"})


@detector("head_condition", ("raycluster", "namespace", "reason", "message"), HeadConditionParams)
def head_condition(ctx: Context, rule: Rule) -> Iterable[Hit]:
    """A RayCluster's HeadPodReady condition (KubeRay v1.2 on), when the paste has not the head Pod
    itself: the head Pod's rules read the Pod when it is there."""
    state = HeadConditionParams(**rule.params).state
    heads = {(p.namespace, p.labels.get(RAY_CLUSTER_LABEL, "")) for p in ctx.head_pods}
    for cluster in ctx.kube.rayclusters:
        if (cluster.namespace, cluster.name) in heads:
            continue
        condition = next((c for c in cluster.conditions if c.type == "HeadPodReady"), None)
        if condition is None or condition.status != "False" or not condition.reason:
            continue
        probe = condition.reason == "ContainersNotReady"
        if state == "probe" and not probe:
            continue
        if state == "container" and (probe or condition.reason in _HEAD_NOT_CONTAINER_REASONS):
            continue
        yield Hit(
            Subject(kind="RayCluster", name=cluster.name, namespace=cluster.namespace),
            (
                Evidence(
                    source=f"raycluster {cluster.name} condition HeadPodReady",
                    text=f"False ({condition.reason}): {condition.message or ''}".rstrip(": "),
                ),
            ),
            {
                "raycluster": cluster.name,
                "namespace": cluster.namespace,
                "reason": condition.reason,
                "message": condition.message or "",
            },
        )
