"""Head and workers: is every running Ray Pod a Ray node that joined?

A Pod that Kubernetes runs is only a container; it becomes a Ray node when its raylet registers
with the head's GCS. These detectors correlate the two layers by Pod IP and look at what stands
between them: the head Pod, the head Service and its endpoints, versions, NetworkPolicies.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from bot.catalogue import Rule
from bot.classify.context import RAY_CLUSTER_LABEL, RAY_GROUP_LABEL, Context
from bot.classify.registry import Hit, detector
from bot.diagnosis import Evidence, Subject
from bot.snapshot.kubernetes import Pod


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


@detector(
    "worker_not_joined",
    (
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
    ),
)
def worker_not_joined(ctx: Context, rule: Rule) -> Iterable[Hit]:
    if ctx.ray is None:
        return
    running = [
        p for p in ctx.worker_pods if p.phase == "Running" and p.pod_ip and not p.deleting and ctx.in_scope(p)
    ]
    alive = len(ctx.ray_nodes) if ctx.ray_nodes_known else ctx.ray.node_count
    # Worker Pods are compared with worker nodes: the head's Ray node is not one of them.
    alive_workers = len([n for n in ctx.ray_nodes if not n.is_head]) if ctx.ray_nodes_known else None
    if ctx.ray_nodes_known:
        for pod in running:
            if pod.pod_ip in ctx.ray_nodes_by_ip:
                continue
            head = _head_params(ctx, pod)
            evidence = [
                Evidence(
                    source=f"pod {pod.name}",
                    text=f"phase Running, Ready {pod.ready}, IP {pod.pod_ip}",
                ),
                Evidence(
                    source="ray nodes",
                    text=f"{alive} alive; IPs: {', '.join(sorted(ctx.ray_nodes_by_ip)) or 'none'}",
                ),
            ]
            evidence += _log_tail(ctx, pod)
            yield Hit(
                Subject(kind="Pod", name=pod.name, namespace=pod.namespace),
                tuple(evidence),
                {
                    "pod": pod.name,
                    "namespace": pod.namespace,
                    "pod_ip": pod.pod_ip or "",
                    "group": pod.labels.get(RAY_GROUP_LABEL, ""),
                    "container": _container_name(pod),
                    "ray_nodes": str(alive_workers),
                    "ready_workers": str(len(running)),
                    **head,
                },
            )
    elif alive is not None and running and ctx.head_pods:
        # Only totals are known (a pasted `ray status`): compare counts.
        joined_workers = max(0, alive - 1)
        if joined_workers < len(running):
            head = _head_params(ctx, running[0])
            missing = len(running) - joined_workers
            yield Hit(
                Subject(kind="RayCluster", name=head["raycluster"] or None, namespace=running[0].namespace),
                (
                    Evidence(source="kubernetes", text=f"{len(running)} worker Pod(s) Running"),
                    Evidence(source="ray status", text=f"{alive} Ray node(s) including the head"),
                ),
                {
                    "pod": ", ".join(p.name for p in running[:5]),
                    "namespace": running[0].namespace,
                    "ray_nodes": str(alive),
                    "ready_workers": str(len(running)),
                    "pod_ip": "",
                    "group": "",
                    "container": _container_name(running[0]),
                    "missing": str(missing),
                    **head,
                },
            )


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


@detector("head_not_ready", ("pod", "container", "reason", "raycluster", "service"))
def head_not_ready(ctx: Context, rule: Rule) -> Iterable[Hit]:
    for pod in ctx.head_pods:
        if pod.phase != "Running" or pod.ready:
            continue  # Pending and failing heads are reported by the scheduling and Pod-health rules.
        ready = pod.condition("Ready")
        crashing = any(s.reason == "CrashLoopBackOff" for s in pod.container_statuses)
        if crashing:
            continue
        cluster = pod.labels.get(RAY_CLUSTER_LABEL, "")
        reason = (ready.reason or ready.message or "") if ready else ""
        yield Hit(
            Subject(kind="Pod", name=pod.name, namespace=pod.namespace),
            (Evidence(source=f"pod {pod.name} condition Ready", text=f"False {reason}".strip()),),
            {
                "pod": pod.name,
                "namespace": pod.namespace,
                "container": _container_name(pod),
                "reason": reason,
                "raycluster": cluster,
                "service": f"{cluster}-head-svc" if cluster else "",
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
                Evidence(source=f"service {service.name}", text=f"selector {selector} matches no Pod")
            )
        if endpoint is not None and not ready:
            not_ready = [a.ip for a in endpoint.addresses if not a.ready]
            evidence.append(
                Evidence(
                    source=f"endpoints {service.name}",
                    text="no ready addresses" + (f"; not ready: {', '.join(not_ready)}" if not_ready else ""),
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
    for policy in ctx.kube.network_policies:
        restricts_ingress = "Ingress" in policy.policy_types or not policy.policy_types
        if not restricts_ingress or policy.ingress_rules > 0:
            continue
        hit_pods = [
            p
            for p in ctx.ray_pods
            if p.namespace == policy.namespace
            and (policy.selects_all or _selects(policy.pod_selector, p.labels))
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
