"""Raw Kubernetes JSON (as ``kubectl get -o json`` or the API returns it) to snapshot models.

Every reader here takes ``object`` and tolerates anything: a missing field, a wrong type, a
``null`` list. Real clusters return fields the schema calls required as absent often enough that
a diagnosis tool must not trust the schema. An item that is not even a mapping is skipped; the
caller counts what was skipped if it wants to say so.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from bot.read.quantity import parse_resource_map
from bot.snapshot.kubernetes import (
    Condition,
    ContainerSpec,
    ContainerStatus,
    EndpointAddress,
    Endpoints,
    Event,
    KubernetesState,
    KueueWorkload,
    LabelRequirement,
    NetworkPolicy,
    Node,
    NodeSelectorTerm,
    OwnerRef,
    PersistentVolumeClaim,
    Pod,
    PodAffinityTerm,
    PodLog,
    RayClusterObject,
    RayGroup,
    RayJobObject,
    RayServiceObject,
    ResourceQuota,
    Service,
    ServicePort,
    Taint,
    Toleration,
)


def dig(raw: object, *path: str) -> Any:
    """Follow ``path`` through nested mappings; None as soon as a step is missing or not a mapping."""
    current: Any = raw
    for step in path:
        if not isinstance(current, Mapping):
            return None
        current = current.get(step)
    return current


def _str(value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, int | float | bool):
        return str(value)
    return None


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _mapping(value: object) -> dict[str, Any]:
    return dict(value) if isinstance(value, Mapping) else {}


def _str_map(value: object) -> dict[str, str]:
    return {str(k): s for k, v in _mapping(value).items() if (s := _str(v)) is not None}


def _int(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        text = value.strip()
        digits = text[1:] if text.startswith("-") else text
        # isdecimal, not isdigit: "²" is a digit that int() refuses; and int() refuses > 4300 digits.
        if digits.isascii() and digits.isdecimal() and len(digits) <= 18:
            return int(text)
        return None
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def parse_time(value: object) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def _conditions(raw: object) -> list[Condition]:
    found = []
    for item in _list(raw):
        kind = _str(dig(item, "type"))
        if kind:
            found.append(
                Condition(
                    type=kind,
                    status=_str(dig(item, "status")) or "Unknown",
                    reason=_str(dig(item, "reason")),
                    message=_str(dig(item, "message")),
                    last_transition=parse_time(dig(item, "lastTransitionTime")),
                )
            )
    return found


def _taints(raw: object) -> list[Taint]:
    return [
        Taint(
            key=key,
            value=_str(dig(item, "value")) or "",
            effect=_str(dig(item, "effect")) or "NoSchedule",
        )
        for item in _list(raw)
        if (key := _str(dig(item, "key")))
    ]


def _tolerations(raw: object) -> list[Toleration]:
    return [
        Toleration(
            key=_str(dig(item, "key")),
            operator=_str(dig(item, "operator")) or "Equal",
            value=_str(dig(item, "value")),
            effect=_str(dig(item, "effect")),
        )
        for item in _list(raw)
        if isinstance(item, Mapping)
    ]


def _requirements(raw: object) -> list[LabelRequirement]:
    return [
        LabelRequirement(
            key=key,
            operator=_str(dig(item, "operator")) or "In",
            values=[s for v in _list(dig(item, "values")) if (s := _str(v)) is not None],
        )
        for item in _list(raw)
        if (key := _str(dig(item, "key")))
    ]


def required_node_terms(affinity: object) -> list[NodeSelectorTerm]:
    terms = dig(
        affinity, "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms"
    )
    return [
        NodeSelectorTerm(
            match_expressions=_requirements(dig(term, "matchExpressions")),
            match_fields=_requirements(dig(term, "matchFields")),
        )
        for term in _list(terms)
        if isinstance(term, Mapping)
    ]


def _pod_affinity_terms(affinity: object) -> list[PodAffinityTerm]:
    terms = []
    for kind, anti in (("podAffinity", False), ("podAntiAffinity", True)):
        for term in _list(dig(affinity, kind, "requiredDuringSchedulingIgnoredDuringExecution")):
            if not isinstance(term, Mapping):
                continue
            terms.append(
                PodAffinityTerm(
                    anti=anti,
                    match_labels=_str_map(dig(term, "labelSelector", "matchLabels")),
                    match_expressions=_requirements(dig(term, "labelSelector", "matchExpressions")),
                    topology_key=_str(term.get("topologyKey")) or "kubernetes.io/hostname",
                    namespaces=[s for v in _list(term.get("namespaces")) if (s := _str(v))],
                )
            )
    return terms


_SECRET_FLAG = re.compile(
    r"(?i)^--?[a-z0-9_.-]*(password|passwd|secret|token|api[_-]?key|access[_-]?key)[a-z0-9_.-]*$"
)


def _mask_flag_values(parts: list[str]) -> list[str]:
    """``--token VALUE`` as two arguments: the value goes, the flag stays as evidence."""
    masked = list(parts)
    for index in range(1, len(masked)):
        if _SECRET_FLAG.match(masked[index - 1]):
            masked[index] = "[REDACTED]"
    return masked


def _container(raw: object) -> ContainerSpec | None:
    name = _str(dig(raw, "name"))
    if not name:
        return None
    requests = parse_resource_map(dig(raw, "resources", "requests"))
    limits = parse_resource_map(dig(raw, "resources", "limits"))
    # The API server copies limits into missing requests; pasted manifests have not been through it.
    for resource, amount in limits.items():
        requests.setdefault(resource, amount)
    command = _mask_flag_values(
        [s for part in _list(dig(raw, "command")) + _list(dig(raw, "args")) if (s := _str(part))]
    )
    return ContainerSpec(
        name=name,
        image=_str(dig(raw, "image")),
        requests=requests,
        limits=limits,
        # Names only: values can hold secrets and are never copied into a snapshot.
        env_names=[s for item in _list(dig(raw, "env")) if (s := _str(dig(item, "name")))],
        command=command[:40],
    )


def effective_requests(
    containers: Iterable[ContainerSpec],
    init_containers: Iterable[ContainerSpec],
    overhead: Mapping[str, float],
    sidecars: frozenset[str] = frozenset(),
    pod_level: Mapping[str, float] | None = None,
) -> dict[str, float]:
    """kube-scheduler's pod request: max(sum of app containers and sidecars, each init container),
    with the Pod's own cpu, memory and hugepages (``spec.resources``, on by default from 1.34)
    in place of the containers' when it sets them, and the runtime's overhead on top."""
    total: dict[str, float] = {}
    for container in containers:
        for resource, amount in container.requests.items():
            total[resource] = total.get(resource, 0.0) + amount
    for container in init_containers:
        if container.name in sidecars:
            for resource, amount in container.requests.items():
                total[resource] = total.get(resource, 0.0) + amount
    for container in init_containers:
        if container.name in sidecars:
            continue
        for resource, amount in container.requests.items():
            total[resource] = max(total.get(resource, 0.0), amount)
    for resource, amount in (pod_level or {}).items():
        if resource in ("cpu", "memory") or resource.startswith("hugepages-"):
            total[resource] = amount
    for resource, amount in overhead.items():
        total[resource] = total.get(resource, 0.0) + amount
    return total


def _sidecar_names(init_containers: object) -> frozenset[str]:
    """The init containers that keep running beside the app (``restartPolicy: Always``)."""
    return frozenset(
        n
        for item in _list(init_containers)
        if dig(item, "restartPolicy") == "Always" and (n := _str(dig(item, "name")))
    )


def _container_statuses(raw: object, init: bool) -> list[ContainerStatus]:
    statuses = []
    for item in _list(raw):
        name = _str(dig(item, "name"))
        if not name:
            continue
        state_raw = _mapping(dig(item, "state"))
        state = next((s for s in ("waiting", "running", "terminated") if s in state_raw), None)
        detail = _mapping(state_raw.get(state)) if state else {}
        statuses.append(
            ContainerStatus(
                name=name,
                init=init,
                ready=dig(item, "ready") is True,
                restart_count=_int(dig(item, "restartCount")) or 0,
                state=state,
                reason=_str(detail.get("reason")),
                message=_str(detail.get("message")),
                exit_code=_int(detail.get("exitCode")),
                last_terminated_reason=_str(dig(item, "lastState", "terminated", "reason")),
                image=_str(dig(item, "image")),
            )
        )
    return statuses


def _owner(raw: object) -> OwnerRef | None:
    refs = _list(dig(raw, "metadata", "ownerReferences"))
    controller = next((r for r in refs if dig(r, "controller") is True), refs[0] if refs else None)
    kind, name = _str(dig(controller, "kind")), _str(dig(controller, "name"))
    return OwnerRef(kind=kind, name=name) if kind and name else None


def pod_from_json(raw: object) -> Pod | None:
    name = _str(dig(raw, "metadata", "name"))
    if not name:
        return None
    spec = _mapping(dig(raw, "spec"))
    containers = [c for item in _list(spec.get("containers")) if (c := _container(item))]
    init_containers = [c for item in _list(spec.get("initContainers")) if (c := _container(item))]
    sidecars = _sidecar_names(spec.get("initContainers"))
    overhead = parse_resource_map(spec.get("overhead"))
    pod_level = parse_resource_map(dig(spec, "resources", "requests"))
    for resource, amount in parse_resource_map(dig(spec, "resources", "limits")).items():
        pod_level.setdefault(resource, amount)  # as for containers: a limit alone is the request
    affinity = spec.get("affinity")
    volumes = _list(spec.get("volumes"))
    status = _mapping(dig(raw, "status"))
    return Pod(
        name=name,
        namespace=_str(dig(raw, "metadata", "namespace")) or "default",
        uid=_str(dig(raw, "metadata", "uid")),
        phase=_str(status.get("phase")) or "Unknown",
        node_name=_str(spec.get("nodeName")),
        pod_ip=_str(status.get("podIP")),
        host_ip=_str(status.get("hostIP")),
        labels=_str_map(dig(raw, "metadata", "labels")),
        owner=_owner(raw),
        created=parse_time(dig(raw, "metadata", "creationTimestamp")),
        deleting=dig(raw, "metadata", "deletionTimestamp") is not None,
        scheduler_name=_str(spec.get("schedulerName")),
        scheduling_gates=[s for g in _list(spec.get("schedulingGates")) if (s := _str(dig(g, "name")))],
        containers=containers,
        init_containers=init_containers,
        overhead=overhead,
        requests=effective_requests(containers, init_containers, overhead, sidecars, pod_level),
        node_selector=_str_map(spec.get("nodeSelector")),
        required_node_terms=required_node_terms(affinity),
        tolerations=_tolerations(spec.get("tolerations")),
        pvc_names=[s for v in volumes if (s := _str(dig(v, "persistentVolumeClaim", "claimName")))],
        pod_affinity_terms=_pod_affinity_terms(affinity),
        has_topology_spread=any(
            dig(c, "whenUnsatisfiable") in (None, "DoNotSchedule")
            for c in _list(spec.get("topologySpreadConstraints"))
        ),
        conditions=_conditions(status.get("conditions")),
        container_statuses=_container_statuses(status.get("initContainerStatuses"), init=True)
        + _container_statuses(status.get("containerStatuses"), init=False),
        status_reason=_str(status.get("reason")),
        status_message=_str(status.get("message")),
    )


def node_from_json(raw: object) -> Node | None:
    name = _str(dig(raw, "metadata", "name"))
    if not name:
        return None
    addresses = _list(dig(raw, "status", "addresses"))
    internal_ip = next(
        (_str(dig(a, "address")) for a in addresses if dig(a, "type") == "InternalIP"),
        None,
    )
    return Node(
        name=name,
        labels=_str_map(dig(raw, "metadata", "labels")),
        taints=_taints(dig(raw, "spec", "taints")),
        unschedulable=dig(raw, "spec", "unschedulable") is True,
        capacity=parse_resource_map(dig(raw, "status", "capacity")),
        allocatable=parse_resource_map(dig(raw, "status", "allocatable")),
        conditions=_conditions(dig(raw, "status", "conditions")),
        internal_ip=internal_ip,
        created=parse_time(dig(raw, "metadata", "creationTimestamp")),
    )


def event_from_json(raw: object) -> Event | None:
    """Both ``core/v1`` Events and ``events.k8s.io/v1`` Events."""
    if not isinstance(raw, Mapping):
        return None
    regarding = raw.get("involvedObject") or raw.get("regarding")
    message = _str(raw.get("message")) or _str(raw.get("note")) or ""
    reason = _str(raw.get("reason")) or ""
    if not message and not reason:
        return None
    count = (
        _int(raw.get("count")) or _int(raw.get("deprecatedCount")) or _int(dig(raw, "series", "count")) or 1
    )
    last_seen = (
        parse_time(raw.get("lastTimestamp"))
        or parse_time(dig(raw, "series", "lastObservedTime"))
        or parse_time(raw.get("eventTime"))
        or parse_time(raw.get("deprecatedLastTimestamp"))
    )
    return Event(
        namespace=_str(dig(regarding, "namespace")) or _str(dig(raw, "metadata", "namespace")),
        object_kind=_str(dig(regarding, "kind")),
        object_name=_str(dig(regarding, "name")),
        type=_str(raw.get("type")) or "Normal",
        reason=reason,
        message=message,
        count=count,
        source=_str(dig(raw, "source", "component")) or _str(raw.get("reportingController")),
        first_seen=parse_time(raw.get("firstTimestamp")) or parse_time(raw.get("eventTime")),
        last_seen=last_seen,
    )


def service_from_json(raw: object) -> Service | None:
    name = _str(dig(raw, "metadata", "name"))
    if not name:
        return None
    ports = [
        ServicePort(name=_str(dig(p, "name")), port=port, target_port=_str(dig(p, "targetPort")))
        for p in _list(dig(raw, "spec", "ports"))
        if (port := _int(dig(p, "port"))) is not None
    ]
    return Service(
        name=name,
        namespace=_str(dig(raw, "metadata", "namespace")) or "default",
        type=_str(dig(raw, "spec", "type")) or "ClusterIP",
        cluster_ip=_str(dig(raw, "spec", "clusterIP")),
        selector=_str_map(dig(raw, "spec", "selector")),
        ports=ports,
    )


def endpoints_from_json(raw: object) -> Endpoints | None:
    """``v1/Endpoints`` or a ``discovery.k8s.io/v1`` EndpointSlice (named after its Service)."""
    name = _str(dig(raw, "metadata", "name"))
    if not name:
        return None
    namespace = _str(dig(raw, "metadata", "namespace")) or "default"
    addresses: list[EndpointAddress] = []
    ports: list[int] = []
    if dig(raw, "kind") == "EndpointSlice" or "endpoints" in _mapping(raw):
        name = _str(dig(raw, "metadata", "labels", "kubernetes.io/service-name")) or name
        for endpoint in _list(dig(raw, "endpoints")):
            ready = dig(endpoint, "conditions", "ready") is not False
            pod = _str(dig(endpoint, "targetRef", "name"))
            for ip in _list(dig(endpoint, "addresses")):
                if isinstance(ip, str):
                    addresses.append(EndpointAddress(ip=ip, pod=pod, ready=ready))
        ports = [p for item in _list(dig(raw, "ports")) if (p := _int(dig(item, "port"))) is not None]
    else:
        for subset in _list(dig(raw, "subsets")):
            for key, ready in (("addresses", True), ("notReadyAddresses", False)):
                for address in _list(dig(subset, key)):
                    ip = _str(dig(address, "ip"))
                    if ip:
                        addresses.append(
                            EndpointAddress(ip=ip, pod=_str(dig(address, "targetRef", "name")), ready=ready)
                        )
            ports += [p for item in _list(dig(subset, "ports")) if (p := _int(dig(item, "port"))) is not None]
    return Endpoints(name=name, namespace=namespace, addresses=addresses, ports=ports)


# With in-tree autoscaling on, KubeRay adds its autoscaler as one more container of the head Pod
# (``BuildAutoscalerContainer``): 500m CPU and 512Mi of memory, requested and limited, unless
# ``spec.autoscalerOptions.resources`` replaces them. The template does not show it; the Pod asks
# for it all the same.
_AUTOSCALER_RESOURCES = {"cpu": "500m", "memory": "512Mi"}


def _autoscaler_container(spec: Mapping[str, Any]) -> ContainerSpec | None:
    resources = dig(spec, "autoscalerOptions", "resources")
    if not isinstance(resources, Mapping):
        resources = {"requests": _AUTOSCALER_RESOURCES, "limits": _AUTOSCALER_RESOURCES}
    return _container({"name": "autoscaler", "resources": resources})


def _group(raw: object, name: str, is_head: bool, added: Sequence[ContainerSpec] = ()) -> RayGroup:
    """One group's template; ``added`` are containers the operator puts into its Pods beside the
    template's (they count in the Pod's requests, not among the template's containers)."""
    pod_spec = dig(raw, "template", "spec")
    containers = [c for item in _list(dig(pod_spec, "containers")) if (c := _container(item))]
    init_items = dig(pod_spec, "initContainers")
    init_containers = [c for item in _list(init_items) if (c := _container(item))]
    sidecars = _sidecar_names(init_items)
    return RayGroup(
        name=name,
        is_head=is_head,
        replicas=_int(dig(raw, "replicas")),
        min_replicas=_int(dig(raw, "minReplicas")),
        max_replicas=_int(dig(raw, "maxReplicas")),
        suspend=dig(raw, "suspend") is True,
        ray_start_params=_str_map(dig(raw, "rayStartParams")),
        node_selector=_str_map(dig(pod_spec, "nodeSelector")),
        required_node_terms=required_node_terms(dig(pod_spec, "affinity")),
        tolerations=_tolerations(dig(pod_spec, "tolerations")),
        containers=containers,
        requests=effective_requests(
            [*containers, *added], init_containers, parse_resource_map(dig(pod_spec, "overhead")), sidecars
        ),
    )


def _ready_workers(status: Mapping[str, Any]) -> int | None:
    """Worker Pods that are Ready, from a RayCluster status of any KubeRay release.

    KubeRay writes ``readyWorkerReplicas`` from v1.2 on and, being ``omitempty``, leaves it out when
    it is 0; so when it is absent but the status holds a field only v1.2+ writes, the count is 0.
    Before v1.2 the nearest figure is ``availableWorkerReplicas`` (worker Pods Running).
    """
    ready = _int(status.get("readyWorkerReplicas"))
    if ready is not None:
        return ready
    head = _mapping(status.get("head"))
    only_from_1_2 = (
        status.get("conditions"),
        status.get("stateTransitionTimes"),
        head.get("podName"),
        head.get("serviceName"),
    )
    if any(only_from_1_2):
        return 0
    return _int(status.get("availableWorkerReplicas"))


def raycluster_from_json(raw: object) -> RayClusterObject | None:
    name = _str(dig(raw, "metadata", "name"))
    if not name:
        return None
    spec = _mapping(dig(raw, "spec"))
    head_raw = spec.get("headGroupSpec")
    autoscaling = spec.get("enableInTreeAutoscaling") is True
    sidecar = _autoscaler_container(spec) if autoscaling else None
    workers = [
        _group(item, _str(dig(item, "groupName")) or f"group-{index}", is_head=False)
        for index, item in enumerate(_list(spec.get("workerGroupSpecs")))
        if isinstance(item, Mapping)
    ]
    status = _mapping(dig(raw, "status"))
    return RayClusterObject(
        name=name,
        namespace=_str(dig(raw, "metadata", "namespace")) or "default",
        ray_version=_str(spec.get("rayVersion")),
        autoscaling=autoscaling,
        head=(
            _group(head_raw, "head", is_head=True, added=[sidecar] if sidecar else [])
            if isinstance(head_raw, Mapping)
            else None
        ),
        worker_groups=workers,
        state=_str(status.get("state")),
        reason=_str(status.get("reason")),
        conditions=_conditions(status.get("conditions")),
        ready_workers=_ready_workers(status),
        desired_workers=_int(status.get("desiredWorkerReplicas")),
        owner=_owner(raw),
    )


def rayjob_from_json(raw: object) -> RayJobObject | None:
    name = _str(dig(raw, "metadata", "name"))
    if not name:
        return None
    return RayJobObject(
        name=name,
        namespace=_str(dig(raw, "metadata", "namespace")) or "default",
        job_status=_str(dig(raw, "status", "jobStatus")),
        deployment_status=_str(dig(raw, "status", "jobDeploymentStatus")),
        reason=_str(dig(raw, "status", "reason")),
        message=_str(dig(raw, "status", "message")),
        cluster_name=_str(dig(raw, "status", "rayClusterName")),
        submission_id=_str(dig(raw, "status", "jobId")) or _str(dig(raw, "spec", "jobId")),
    )


def rayservice_from_json(raw: object) -> RayServiceObject | None:
    name = _str(dig(raw, "metadata", "name"))
    if not name:
        return None
    # Until its first cluster's Serve apps are healthy, KubeRay (every release) keeps that cluster and
    # the apps' statuses in pendingServiceStatus and leaves activeServiceStatus empty.
    active = _mapping(dig(raw, "status", "activeServiceStatus"))
    pending = _mapping(dig(raw, "status", "pendingServiceStatus"))
    # A status cut down to its applications (no cluster names) is read from whichever part has them.
    serving = (
        active
        if _str(active.get("rayClusterName"))
        or (active.get("applicationStatuses") and not _str(pending.get("rayClusterName")))
        else pending
    )
    apps = _mapping(serving.get("applicationStatuses"))
    return RayServiceObject(
        name=name,
        namespace=_str(dig(raw, "metadata", "namespace")) or "default",
        service_status=_str(dig(raw, "status", "serviceStatus")),
        conditions=_conditions(dig(raw, "status", "conditions")),
        cluster_name=_str(serving.get("rayClusterName")),
        app_statuses={k: s for k, v in apps.items() if (s := _str(dig(v, "status")))},
        app_messages={k: s for k, v in apps.items() if (s := _str(dig(v, "message")))},
    )


def quota_from_json(raw: object) -> ResourceQuota | None:
    name = _str(dig(raw, "metadata", "name"))
    if not name:
        return None
    return ResourceQuota(
        name=name,
        namespace=_str(dig(raw, "metadata", "namespace")) or "default",
        hard=parse_resource_map(dig(raw, "status", "hard") or dig(raw, "spec", "hard")),
        used=parse_resource_map(dig(raw, "status", "used")),
    )


def pvc_from_json(raw: object) -> PersistentVolumeClaim | None:
    name = _str(dig(raw, "metadata", "name"))
    if not name:
        return None
    return PersistentVolumeClaim(
        name=name,
        namespace=_str(dig(raw, "metadata", "namespace")) or "default",
        phase=_str(dig(raw, "status", "phase")) or "Pending",
        storage_class=_str(dig(raw, "spec", "storageClassName")),
        volume_name=_str(dig(raw, "spec", "volumeName")),
    )


def network_policy_from_json(raw: object) -> NetworkPolicy | None:
    name = _str(dig(raw, "metadata", "name"))
    if not name:
        return None
    selector = dig(raw, "spec", "podSelector")
    labels = _str_map(dig(selector, "matchLabels"))
    return NetworkPolicy(
        name=name,
        namespace=_str(dig(raw, "metadata", "namespace")) or "default",
        pod_selector=labels,
        selects_all=not labels and not _list(dig(selector, "matchExpressions")),
        policy_types=[s for t in _list(dig(raw, "spec", "policyTypes")) if (s := _str(t))],
        ingress_rules=len(_list(dig(raw, "spec", "ingress"))),
        egress_rules=len(_list(dig(raw, "spec", "egress"))),
    )


def workload_from_json(raw: object) -> KueueWorkload | None:
    name = _str(dig(raw, "metadata", "name"))
    if not name:
        return None
    conditions = _conditions(dig(raw, "status", "conditions"))
    admitted = dig(raw, "status", "admission") is not None or any(
        c.type == "Admitted" and c.status == "True" for c in conditions
    )
    waiting = next(
        (c for c in conditions if c.type in ("QuotaReserved", "Admitted") and c.status != "True"), None
    )
    return KueueWorkload(
        name=name,
        namespace=_str(dig(raw, "metadata", "namespace")) or "default",
        queue=_str(dig(raw, "spec", "queueName")),
        admitted=admitted,
        message=waiting.message if waiting else None,
        owner=_owner(raw),
    )


def items(raw: object) -> list[Any]:
    """The items of a List object, a bare list, or a single object."""
    if isinstance(raw, list):
        return raw
    if isinstance(raw, Mapping):
        if isinstance(raw.get("items"), list):
            return list(raw["items"])
        if "metadata" in raw or "involvedObject" in raw:
            return [raw]
    return []


_READERS: dict[str, Any] = {
    "nodes": node_from_json,
    "pods": pod_from_json,
    "events": event_from_json,
    "services": service_from_json,
    "endpoints": endpoints_from_json,
    "rayclusters": raycluster_from_json,
    "rayjobs": rayjob_from_json,
    "rayservices": rayservice_from_json,
    "resource_quotas": quota_from_json,
    "pvcs": pvc_from_json,
    "network_policies": network_policy_from_json,
    "device_plugin_pods": pod_from_json,
    "operator_pods": pod_from_json,
    "workloads": workload_from_json,
}

_KIND_TO_FIELD = {
    "Node": "nodes",
    "Pod": "pods",
    "Event": "events",
    "Service": "services",
    "Endpoints": "endpoints",
    "EndpointSlice": "endpoints",
    "RayCluster": "rayclusters",
    "RayJob": "rayjobs",
    "RayService": "rayservices",
    "ResourceQuota": "resource_quotas",
    "PersistentVolumeClaim": "pvcs",
    "NetworkPolicy": "network_policies",
    "Workload": "workloads",
}


def item_reader(field: str) -> Any:
    """The reader of one item of a ``KubernetesState`` field (``nodes``, ``pods``...): raw JSON in,
    a model or None out."""
    return _READERS[field]


def read_list(field: str, raw: object) -> list[Any]:
    reader = _READERS[field]
    return [obj for item in items(raw) if (obj := reader(item)) is not None]


def field_for_kind(kind: object) -> str | None:
    return _KIND_TO_FIELD.get(kind) if isinstance(kind, str) else None


def kubernetes_state(raw: Mapping[str, object], nodes_complete: bool = True) -> KubernetesState:
    """Build the Kubernetes half from ``{"nodes": <NodeList JSON>, "pods": <PodList JSON>, ...}``.

    ``logs`` may be given as ``[{"pod", "namespace", "container", "lines"}]``.
    """
    fields: dict[str, Any] = {name: read_list(name, raw.get(name)) for name in _READERS if name in raw}
    return KubernetesState(**fields, logs=pod_logs(raw.get("logs")), nodes_complete=nodes_complete)


def pod_logs(entries: object) -> list[PodLog]:
    """Log tails given as ``[{"pod", "namespace", "container", "lines"}]``; entries without a Pod
    are dropped, and lines that are not text are skipped."""
    logs: list[PodLog] = []
    for entry in entries if isinstance(entries, list) else ():
        if not isinstance(entry, Mapping) or not isinstance(entry.get("pod"), str) or not entry["pod"]:
            continue
        namespace, container, lines = entry.get("namespace"), entry.get("container"), entry.get("lines")
        logs.append(
            PodLog(
                pod=entry["pod"],
                namespace=namespace if isinstance(namespace, str) and namespace else "default",
                container=container if isinstance(container, str) else None,
                lines=[line for line in lines if isinstance(line, str)] if isinstance(lines, list) else [],
            )
        )
    return logs
