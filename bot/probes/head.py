"""The head check: can the head be reached the way workers and the bot reach it?

Workers join through the head Service (``<raycluster>-head-svc``): a Service whose selector matches
no Pod has no endpoints, a head Pod that is not Ready may be behind it but not serving, and a
NetworkPolicy can cut a port while the Pod looks healthy. This check reads the Service, its
Endpoints (EndpointSlices where Endpoints are not served) and the head Pods through the collector's
``KubernetesReader`` — only calls already in ``READ_SCOPES`` — and then opens a TCP connection from
the bot to the GCS, dashboard and Ray client ports of every address behind the Service. With no
endpoints it tries the Service's cluster DNS name and the head Pod's own IP instead, which tells a
wrong selector (the Pod answers) from a head that is down (nothing answers).

Given only a dashboard URL (no Kubernetes access, or a port-forward), it checks that host and port.
Connections are made in parallel and the whole check is bounded by ``connect_timeout`` plus a
second, even when a name takes long to resolve.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal
from urllib.parse import urlsplit

from bot.collect.kubernetes import ApiCall, ApiFailure, KubernetesReader
from bot.probes import HeadVerdict, Outcome

# (our name, names KubeRay and others give the port, Ray's default)
HEAD_PORTS: tuple[tuple[str, tuple[str, ...], int], ...] = (
    ("gcs", ("gcs-server", "gcs", "redis"), 6379),
    ("dashboard", ("dashboard",), 8265),
    ("client", ("client", "ray-client"), 10001),
)
CLUSTER_DOMAIN = "svc.cluster.local"
Via = Literal["endpoint", "service_dns", "head_pod", "dashboard_url"]


@dataclass(frozen=True)
class EndpointAddress:
    ip: str
    ready: bool  # listed under ``addresses`` (EndpointSlice: conditions.ready), not ``notReadyAddresses``
    pod: str | None = None  # targetRef, when it is a Pod
    node_name: str | None = None


@dataclass(frozen=True)
class HeadPod:
    name: str
    phase: str | None
    ready: bool
    ip: str | None
    node_name: str | None
    selected: bool | None  # whether the head Service's selector matches its labels


@dataclass(frozen=True)
class PortCheck:
    via: Via
    host: str
    port_name: str  # "gcs", "dashboard", "client"
    port: int
    reachable: bool
    pod: str | None = None
    latency_ms: float | None = None
    error: str | None = None


@dataclass(frozen=True)
class HeadCheckResult:
    """Facts about the head; the sentences for ``verdict`` are in ``bot.probes.HEAD_VERDICT_MESSAGES``."""

    outcome: Outcome  # "ran"; "unreachable"/"failed" when Kubernetes could not be read and nothing else
    verdict: HeadVerdict
    namespace: str | None = None
    service: str | None = None
    service_found: bool | None = None  # None: not read (no reader, or the read failed)
    service_type: str | None = None
    cluster_ip: str | None = None
    selector: tuple[tuple[str, str], ...] = ()
    endpoints_source: str | None = None  # "endpoints", "endpointslices", or None
    addresses: tuple[EndpointAddress, ...] = ()
    head_pods: tuple[HeadPod, ...] = ()
    ports: tuple[PortCheck, ...] = ()
    errors: tuple[str, ...] = ()
    elapsed_s: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def unreachable_ports(self) -> tuple[PortCheck, ...]:
        return tuple(check for check in self.ports if not check.reachable)


# --- reading Kubernetes ------------------------------------------------------------------------


@dataclass
class _Read:
    service: Mapping[str, Any] | None = None
    service_found: bool | None = None
    endpoints_source: str | None = None
    addresses: list[EndpointAddress] | None = None
    endpoint_ports: dict[str, int] | None = None
    pods: list[Mapping[str, Any]] | None = None
    errors: list[str] = field(default_factory=list)
    statuses: list[int] = field(default_factory=list)  # HTTP status of each failed call, 0: no answer

    def failed(self, reader: KubernetesReader, failure: ApiFailure) -> None:
        reader.record(failure, "head check")
        self.errors.append(reader.errors[-1].message)
        self.statuses.append(failure.status)


def _get(reader: KubernetesReader, call: ApiCall, read: _Read, missing_ok: bool = False) -> Any:
    try:
        return reader.json(call)
    except ApiFailure as failure:
        if not (missing_ok and failure.status == 404):
            read.failed(reader, failure)
        return None


def _read_kubernetes(reader: KubernetesReader, namespace: str, raycluster: str) -> _Read:
    read = _Read()
    name = f"{raycluster}-head-svc"
    service = _get(reader, ApiCall("get", "", "v1", "services", namespace, name), read, missing_ok=True)
    if isinstance(service, Mapping):
        read.service, read.service_found = service, True
    elif not read.errors:
        read.service_found = False
    if read.service_found:
        endpoints = _get(
            reader, ApiCall("get", "", "v1", "endpoints", namespace, name), read, missing_ok=True
        )
        if isinstance(endpoints, Mapping):
            read.endpoints_source = "endpoints"
            read.addresses, read.endpoint_ports = _from_endpoints(endpoints)
        else:
            selector = (("labelSelector", f"kubernetes.io/service-name={name}"),)
            call = ApiCall("list", "discovery.k8s.io", "v1", "endpointslices", namespace, query=selector)
            slices = _get(reader, call, read, missing_ok=True)
            if isinstance(slices, Mapping):
                read.endpoints_source = "endpointslices"
                read.addresses, read.endpoint_ports = _from_slices(slices)
    selector = (("labelSelector", f"ray.io/cluster={raycluster},ray.io/node-type=head"),)
    try:
        pods = reader.items(ApiCall("list", "", "v1", "pods", namespace, query=selector))
    except ApiFailure as failure:
        read.failed(reader, failure)
    else:
        read.pods = [pod for pod in pods if isinstance(pod, Mapping)]
    return read


def _from_endpoints(endpoints: Mapping[str, Any]) -> tuple[list[EndpointAddress], dict[str, int]]:
    addresses: list[EndpointAddress] = []
    ports: dict[str, int] = {}
    for subset in _list(endpoints.get("subsets")):
        for ready, key in ((True, "addresses"), (False, "notReadyAddresses")):
            for address in _list(subset.get(key)):
                if isinstance(address.get("ip"), str):
                    addresses.append(
                        EndpointAddress(
                            ip=address["ip"],
                            ready=ready,
                            pod=_pod_ref(address.get("targetRef")),
                            node_name=_str(address.get("nodeName")),
                        )
                    )
        for port in _list(subset.get("ports")):
            if isinstance(port.get("port"), int):
                ports.setdefault(str(port.get("name") or ""), int(port["port"]))
    return addresses, ports


def _from_slices(slices: Mapping[str, Any]) -> tuple[list[EndpointAddress], dict[str, int]]:
    addresses: list[EndpointAddress] = []
    ports: dict[str, int] = {}
    for item in _list(slices.get("items")):
        for endpoint in _list(item.get("endpoints")):
            conditions = endpoint.get("conditions")
            ready = not isinstance(conditions, Mapping) or conditions.get("ready") is not False
            for ip in endpoint.get("addresses") or []:
                if isinstance(ip, str):
                    addresses.append(
                        EndpointAddress(
                            ip=ip,
                            ready=ready,
                            pod=_pod_ref(endpoint.get("targetRef")),
                            node_name=_str(endpoint.get("nodeName")),
                        )
                    )
        for port in _list(item.get("ports")):
            if isinstance(port.get("port"), int):
                ports.setdefault(str(port.get("name") or ""), int(port["port"]))
    return addresses, ports


def _list(value: object) -> list[Mapping[str, Any]]:
    return [item for item in value if isinstance(item, Mapping)] if isinstance(value, list) else []


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _pod_ref(ref: object) -> str | None:
    if isinstance(ref, Mapping) and ref.get("kind", "Pod") == "Pod":
        return _str(ref.get("name"))
    return None


def _map(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _head_pod(pod: Mapping[str, Any], selector: Mapping[str, str] | None) -> HeadPod:
    meta, spec, status = _map(pod.get("metadata")), _map(pod.get("spec")), _map(pod.get("status"))
    labels = _map(meta.get("labels"))
    ready = any(
        c.get("type") == "Ready" and c.get("status") == "True" for c in _list(status.get("conditions"))
    )
    return HeadPod(
        name=str(meta.get("name", "")),
        phase=_str(status.get("phase")),
        ready=ready,
        ip=_str(status.get("podIP")),
        node_name=_str(spec.get("nodeName")),
        selected=None if selector is None else all(labels.get(k) == v for k, v in selector.items()),
    )


def _service_ports(service: Mapping[str, Any] | None) -> dict[str, tuple[int, int | None]]:
    """Our port name -> (Service port, numeric targetPort or None)."""
    spec = service.get("spec") if service is not None else None
    declared = _list(spec.get("ports")) if isinstance(spec, Mapping) else []
    found: dict[str, tuple[int, int | None]] = {}
    for ours, names, default in HEAD_PORTS:
        match = next((p for p in declared if p.get("name") in names and isinstance(p.get("port"), int)), None)
        if match is None:
            found[ours] = (default, None)
        else:
            target = match.get("targetPort")
            found[ours] = (int(match["port"]), target if isinstance(target, int) else None)
    return found


def _pod_ports(
    service_ports: Mapping[str, tuple[int, int | None]], endpoint_ports: Mapping[str, int] | None
) -> dict[str, int]:
    """The ports the head Pod listens on: the Endpoints' ports, else the Service's targetPort."""
    found: dict[str, int] = {}
    for ours, names, _default in HEAD_PORTS:
        named = next((endpoint_ports[n] for n in names if endpoint_ports and n in endpoint_ports), None)
        port, target = service_ports[ours]
        found[ours] = named or target or port
    return found


# --- connecting --------------------------------------------------------------------------------


def tcp_check(host: str, port: int, timeout: float) -> tuple[bool, float | None, str | None]:
    """(reachable, latency in ms, error) of one TCP connection from here."""
    began = time.perf_counter()
    try:
        with socket.create_connection((host, port), timeout=timeout):
            pass
    except socket.gaierror:
        return False, None, f"the name {host} does not resolve from here"
    except TimeoutError:
        return False, None, f"no answer within {timeout:g}s (timed out; filtered or unroutable?)"
    except ConnectionRefusedError:
        return False, None, "connection refused (nothing listens on that port)"
    except OSError as error:
        return False, None, error.strerror or f"{type(error).__name__}: {error}"
    return True, round((time.perf_counter() - began) * 1000, 2), None


@dataclass(frozen=True)
class _Target:
    via: Via
    host: str
    port_name: str
    port: int
    pod: str | None = None


def _connect_all(targets: Sequence[_Target], timeout: float) -> list[PortCheck]:
    """Every target in parallel; a thread still resolving after ``timeout + 1`` s counts as timed out."""
    answers: dict[int, tuple[bool, float | None, str | None]] = {}
    lock = threading.Lock()

    def work(index: int, target: _Target) -> None:
        answer = tcp_check(target.host, target.port, timeout)
        with lock:
            answers[index] = answer

    threads = [
        threading.Thread(target=work, args=(i, t), daemon=True, name=f"head-check-{i}")
        for i, t in enumerate(targets)
    ]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + timeout + 1.0
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    checks = []
    for index, target in enumerate(targets):
        with lock:
            reachable, latency, error = answers.get(
                index, (False, None, f"no answer within {timeout:g}s (name resolution or connect hung)")
            )
        checks.append(
            PortCheck(
                via=target.via,
                host=target.host,
                port_name=target.port_name,
                port=target.port,
                reachable=reachable,
                pod=target.pod,
                latency_ms=latency,
                error=error,
            )
        )
    return checks


def dashboard_host_port(url: str) -> tuple[str, int]:
    """``http://host:8265`` -> ("host", 8265); no port means the scheme's default."""
    parts = urlsplit(url if "://" in url else f"http://{url}")
    if not parts.hostname:
        raise ValueError(f"no host in {url!r}")
    return parts.hostname, parts.port or (443 if parts.scheme == "https" else 80)


# --- the check ---------------------------------------------------------------------------------


def check_head(
    reader: KubernetesReader | None,
    namespace: str | None,
    raycluster: str | None,
    dashboard_url: str | None,
    *,
    connect_timeout: float = 2.0,
) -> HeadCheckResult:
    """Read the head Service, its endpoints and head Pods (when ``reader`` is given), connect, judge.

    Never raises for anything the cluster or the network does; takes about the reader's calls plus
    ``connect_timeout + 1`` seconds at most.
    """
    began = time.monotonic()
    errors: list[str] = []
    targets: list[_Target] = []
    read = _Read()
    service_name: str | None = None
    selector: dict[str, str] | None = None
    head_pods: list[HeadPod] = []
    addresses: list[EndpointAddress] = []

    if reader is not None and namespace and raycluster:
        service_name = f"{raycluster}-head-svc"
        read = _read_kubernetes(reader, namespace, raycluster)
        errors += read.errors
        spec = read.service.get("spec") if read.service is not None else None
        raw_selector = spec.get("selector") if isinstance(spec, Mapping) else None
        if isinstance(raw_selector, Mapping):
            selector = {str(k): str(v) for k, v in raw_selector.items()}
        elif read.service_found:
            selector = {}  # a Service without a selector gets no endpoints from Kubernetes
        head_pods = [_head_pod(pod, selector) for pod in read.pods or []]
        addresses = read.addresses or []
        service_ports = _service_ports(read.service)
        pod_ports = _pod_ports(service_ports, read.endpoint_ports)
        for address in addresses:
            targets += [
                _Target("endpoint", address.ip, ours, pod_ports[ours], address.pod) for ours in pod_ports
            ]
        if read.service_found and not addresses:
            dns = f"{service_name}.{namespace}.{CLUSTER_DOMAIN}"
            targets += [_Target("service_dns", dns, ours, port) for ours, (port, _) in service_ports.items()]
            for pod in head_pods:
                if pod.ip:
                    targets += [
                        _Target("head_pod", pod.ip, ours, pod_ports[ours], pod.name) for ours in pod_ports
                    ]
    elif reader is not None:
        errors.append("the head check needs the namespace and the RayCluster name to read Kubernetes")

    if dashboard_url:
        try:
            host, port = dashboard_host_port(dashboard_url)
        except ValueError as error:
            errors.append(f"cannot check the dashboard URL: {error}")
        else:
            targets.append(_Target("dashboard_url", host, "dashboard", port))

    checks = _connect_all(targets, connect_timeout)
    verdict = _verdict(read, head_pods, addresses, checks)
    if verdict == "unknown":
        statuses = read.statuses
        outcome: Outcome = "unreachable" if statuses and all(s == 0 for s in statuses) else "failed"
    else:
        outcome = "ran"
    spec = read.service.get("spec") if read.service is not None else None
    return HeadCheckResult(
        outcome=outcome,
        verdict=verdict,
        namespace=namespace,
        service=service_name,
        service_found=read.service_found,
        service_type=_str(spec.get("type")) if isinstance(spec, Mapping) else None,
        cluster_ip=_str(spec.get("clusterIP")) if isinstance(spec, Mapping) else None,
        selector=tuple(sorted((selector or {}).items())),
        endpoints_source=read.endpoints_source,
        addresses=tuple(addresses),
        head_pods=tuple(head_pods),
        ports=tuple(checks),
        errors=tuple(errors),
        elapsed_s=round(time.monotonic() - began, 3),
    )


def _verdict(
    read: _Read,
    head_pods: Sequence[HeadPod],
    addresses: Sequence[EndpointAddress],
    checks: Sequence[PortCheck],
) -> HeadVerdict:
    if read.service_found is False:
        return "no_service"
    if read.service_found:
        if not addresses:
            # A head that is not Ready drops out of a Service that does not publish not-ready
            # addresses; only a selector that matches no head Pod is "no endpoints" proper.
            selected = [pod for pod in head_pods if pod.selected]
            if selected and not any(pod.ready for pod in selected):
                return "pod_not_ready"
            return "no_endpoints"
        by_name = {pod.name: pod for pod in head_pods}
        serving = [a for a in addresses if a.ready and (a.pod not in by_name or by_name[str(a.pod)].ready)]
        if not serving:
            return "pod_not_ready"
    if not checks:
        return "unknown"
    if any(not check.reachable for check in checks):
        return "port_unreachable"
    return "ok"


__all__ = [
    "HEAD_PORTS",
    "EndpointAddress",
    "HeadCheckResult",
    "HeadPod",
    "PortCheck",
    "check_head",
    "dashboard_host_port",
    "tcp_check",
]
