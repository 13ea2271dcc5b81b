"""The Pending Pods: how many each template gets and the FailedScheduling message each one carries."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from benchmarks.synth.common import (
    DEFAULT_TOLERATIONS,
    GPU,
    GPU_TOLERATION,
    ISTIO_IMAGE,
    NODEPOOL,
    WEB_SELECTOR,
    WEB_TOLERATION,
)
from benchmarks.synth.containers import container_spec, effective_requests, resource_requests
from benchmarks.synth.events import Events
from benchmarks.synth.pending_specs import PENDING, PendingSpec
from benchmarks.synth.pods import PodFactory
from benchmarks.synth.ray_specs import RAY_CLUSTERS
from benchmarks.synth.recipe import POOLS
from benchmarks.synth.state import TemplateParts
from tests.support.cluster import ray_labels


def _tolerates(tolerations: Sequence[Mapping[str, Any]], taint: Mapping[str, str]) -> bool:
    for toleration in tolerations:
        if toleration.get("effect") and toleration["effect"] != taint["effect"]:
            continue
        if toleration.get("operator") == "Exists":
            if toleration.get("key") in (None, "", taint["key"]):
                return True
        elif toleration.get("key") == taint["key"] and toleration.get("value", "") == taint["value"]:
            return True
    return False


def _matches(labels: Mapping[str, str], selector: Mapping[str, str], terms: Sequence[Any]) -> bool:
    if any(labels.get(k) != v for k, v in selector.items()):
        return False
    for key, operator, values in terms:
        value = labels.get(key)
        if operator == "In" and value not in values:
            return False
        if operator == "NotIn" and value in values:
            return False
        if operator == "DoesNotExist" and value is not None:
            return False
        if operator == "Exists" and value is None:
            return False
    return True


def _anti_affinity(owner: str) -> list[dict[str, Any]]:
    """No two Pods of ``owner`` on one node."""
    return [{"anti": True, "match_labels": {"app": owner}, "topology_key": "kubernetes.io/hostname"}]


def _statefulset_labels(labels: Mapping[str, str], name: str, ordinal: int) -> dict[str, str]:
    return {
        **labels,
        "statefulset.kubernetes.io/pod-name": name,
        "apps.kubernetes.io/pod-index": str(ordinal),
    }


class Pending(Events, PodFactory):
    """The Pods that wait, each with the scheduler's verdict replayed on the generated nodes."""

    def allot_pending(self) -> None:
        """How many Pending Pods each template gets: weights, largest remainder, at least one each."""
        keys: list[tuple[str, str]] = []
        weights: list[float] = []
        for spec in RAY_CLUSTERS:
            for group in spec.groups:
                if group.pending:
                    keys.append((spec.name, group.name))
                    weights.append(group.pending)
        for pending in PENDING:
            keys.append(("", pending.owner))
            weights.append(pending.weight)
        total = self.size.pending
        raw = [total * w / sum(weights) for w in weights]
        counts = [max(1, int(r)) for r in raw]
        order = sorted(range(len(raw)), key=lambda i: raw[i] - int(raw[i]), reverse=True)
        i = 0
        while sum(counts) < total:
            counts[order[i % len(order)]] += 1
            i += 1
        while sum(counts) > total:
            j = max(range(len(counts)), key=lambda k: counts[k])
            counts[j] -= 1
        self.pending_counts = dict(zip(keys, counts, strict=True))
        self.stats.pending_templates = len(keys)

    def scheduler_message(
        self,
        requests: Mapping[str, float],
        selector: Mapping[str, str],
        terms: Sequence[Any],
        tolerations: Sequence[Mapping[str, Any]],
        anti_pool: str = "",
    ) -> str:
        """kube-scheduler's FitError for these constraints, replayed on the generated nodes."""
        reasons: Counter[str] = Counter()
        resources = 0
        for node in self.nodes:
            if node.unschedulable:
                reasons["node(s) were unschedulable"] += 1
                continue
            taint = next(
                (
                    t
                    for t in node.taints
                    if t["effect"] in ("NoSchedule", "NoExecute") and not _tolerates(tolerations, t)
                ),
                None,
            )
            if taint is not None:
                reasons[f"node(s) had untolerated taint {{{taint['key']}: {taint['value']}}}"] += 1
                continue
            if not _matches(node.labels, selector, terms):
                reasons["node(s) didn't match Pod's node affinity/selector"] += 1
                continue
            lacking = [r for r, v in requests.items() if v > node.free(r) + 1e-9]
            if node.pods >= node.allocatable["pods"]:
                lacking.insert(0, "pods")
            if lacking:
                resources += 1
                for resource in lacking:
                    reasons["Too many pods" if resource == "pods" else f"Insufficient {resource}"] += 1
                continue
            if anti_pool and node.pool is not None and node.pool.name == anti_pool:
                reasons["node(s) didn't match pod anti-affinity rules"] += 1
                continue
            # Room now: the message predates the Pods that finished since (the scheduler retries).
            reasons["Insufficient cpu"] += 1
            resources += 1
        n = len(self.nodes)
        parts = ", ".join(sorted(f"{count} {reason}" for reason, count in reasons.items()))
        return (
            f"0/{n} nodes are available: {parts}. preemption: 0/{n} nodes are available: {resources} No "
            f"preemption victims found for incoming pod, {n - resources} Preemption is not helpful for scheduling."
        )

    def pending_pods(self) -> None:
        for spec, group, container, init, tolerations in self.ray_pending:
            count = self.pending_counts[(spec.name, group.name)]
            requests = effective_requests([container], init)
            message = self.scheduler_message(requests, dict(group.selector), (), tolerations)
            for _ in range(count):
                name = f"{spec.name}-{group.name}-worker-{self.suffix()}"
                pod = self.pod(
                    name=name,
                    namespace=spec.namespace,
                    labels=ray_labels("worker", group.name, cluster=spec.name),
                    owner=("RayCluster", spec.name),
                    containers=[dict(container)],
                    init=[dict(c) for c in init],
                    tolerations=tolerations,
                    selector=dict(group.selector),
                    scheduler_message=message,
                    created=self.ago(60, 4 * 3600),
                )
                self.add(pod, "pods_pending")
                self.failed_scheduling(pod, message)
                if group.gpus and self.rng.random() < 0.5:
                    self.scale_up_event(
                        pod,
                        "pod didn't trigger scale-up: 2 max node group size reached, "
                        f"{len(POOLS) - 1} node(s) didn't match Pod's node affinity/selector",
                    )
        for template in PENDING:
            self.pending_template(template, self.pending_counts[("", template.owner)])

    def template_parts(self, spec: PendingSpec) -> TemplateParts:
        """Containers, init containers, tolerations, labels and template hash of a controller."""
        if spec.owner in self._parts:
            return self._parts[spec.owner]
        requests = resource_requests(spec.cpu, spec.memory_gib)
        requests.update(dict(spec.extra))
        if spec.gpus:
            requests[GPU] = spec.gpus
        limits = {"memory": requests["memory"], **({GPU: spec.gpus} if spec.gpus else {})}
        image = f"us-docker.pkg.dev/acme/{spec.namespace}/{spec.owner}:{self.hex(28)}"
        env = ["LOG_LEVEL", "PORT", "POD_NAME", "POD_NAMESPACE", "OTEL_SERVICE_NAME"]
        containers = [container_spec("main", image, requests, limits, env=env, command=["/app/run"])]
        init: list[dict[str, Any]] = []
        if spec.sidecar:
            containers.append(
                container_spec(
                    "istio-proxy",
                    ISTIO_IMAGE,
                    resource_requests(0.1, 0.125),
                    {"cpu": 2.0},
                )
            )
            init.append(container_spec("istio-init", ISTIO_IMAGE, resource_requests(0.01, 0.04)))
        tolerations: list[Any] = list(DEFAULT_TOLERATIONS)
        if spec.tolerate_gpu:
            tolerations.append(GPU_TOLERATION)
        if spec.web:
            tolerations.append(WEB_TOLERATION)
        rs = self.template_hash()
        labels = {"app": spec.owner, "app.kubernetes.io/name": spec.owner}
        if spec.kind == "Deployment":
            labels["pod-template-hash"] = rs
        self._parts[spec.owner] = (containers, init, tolerations, labels, rs)
        return self._parts[spec.owner]

    def pending_template(self, spec: PendingSpec, count: int) -> None:
        containers, init, tolerations, labels, rs = self.template_parts(spec)
        selector = {**dict(spec.selector), **(WEB_SELECTOR if spec.web else {})}
        owner_kind = {"Deployment": "ReplicaSet"}.get(spec.kind, spec.kind)
        owner_name = f"{spec.owner}-{rs}" if spec.kind == "Deployment" else spec.owner
        affinity = _anti_affinity(spec.owner) if spec.anti_affinity else []
        if spec.pvc == "unbound":
            message = (
                f"0/{len(self.nodes)} nodes are available: pod has unbound immediate PersistentVolumeClaims. "
                f"preemption: 0/{len(self.nodes)} nodes are available: {len(self.nodes)} Preemption is not "
                "helpful for scheduling."
            )
        else:
            message = self.scheduler_message(
                effective_requests(containers, init),
                selector,
                spec.terms,
                tolerations,
                selector.get(NODEPOOL, "") if spec.anti_affinity else "",
            )
        for i in range(count):
            if spec.kind == "StatefulSet":
                ordinal = len(self.by_pool["cpu-storage"]) + i if spec.anti_affinity else i
                name = f"{spec.owner}-{ordinal}"
                pod_labels = {
                    **_statefulset_labels(labels, name, ordinal),
                    "controller-revision-hash": f"{spec.owner}-{rs[:8]}",
                }
            elif spec.kind == "Deployment":
                name = f"{spec.owner}-{rs}-{self.suffix()}"
                pod_labels = labels
            else:
                name = f"{spec.owner}-{self.suffix()}"
                pod_labels = {**labels, "job-name": spec.owner}
            pvcs = [f"data-{name}"] if spec.pvc else []
            for claim in pvcs:
                bound = spec.pvc == "bound"
                self.add_pvc(
                    claim, spec.namespace, "premium-rwo" if bound else "local-ssd-manual", bound=bound
                )
            gates = ["kueue.x-k8s.io/admission"] if spec.gated else []
            pod = self.pod(
                name=name,
                namespace=spec.namespace,
                labels=pod_labels,
                owner=(owner_kind, owner_name),
                containers=[dict(c) for c in containers],
                init=[dict(c) for c in init],
                tolerations=tolerations,
                selector=selector,
                terms=spec.terms,
                affinity=affinity,
                pvcs=pvcs,
                gates=gates,
                scheduler_message=message,
                created=self.ago(60, 6 * 3600),
            )
            self.add(pod, "pods_pending")
            if not spec.gated:
                self.failed_scheduling(pod, message)
                if spec.scale_up:
                    self.scale_up_event(pod, spec.scale_up)

    def anti_affinity_replicas(self) -> int:
        """The running brokers: one per node of their pool, which is why the next one cannot start."""
        placed = 0
        for spec in PENDING:
            if spec.anti_affinity:
                placed += self.anti_affinity_set(spec)
        return placed

    def anti_affinity_set(self, spec: PendingSpec) -> int:
        containers, _, tolerations, labels, _ = self.template_parts(spec)
        affinity = _anti_affinity(spec.owner)
        pool = dict(spec.selector)[NODEPOOL]
        for ordinal, node in enumerate(self.by_pool[pool]):
            name = f"{spec.owner}-{ordinal}"
            pod = self.pod(
                name=name,
                namespace=spec.namespace,
                labels=_statefulset_labels(labels, name, ordinal),
                owner=("StatefulSet", spec.owner),
                containers=[dict(c) for c in containers],
                node=node,
                tolerations=tolerations,
                selector=dict(spec.selector),
                affinity=affinity,
                pvcs=[f"data-{name}"],
            )
            self.add(pod, "pods_app")
            self.add_pvc(f"data-{name}", spec.namespace, "local-ssd")
        return len(self.by_pool[pool])
