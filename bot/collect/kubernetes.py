"""Read the Kubernetes layer of one RayCluster: read-only, cheap, and tolerant of a broken cluster.

Every call goes through ``KubernetesReader.fetch`` as a declared ``ApiCall`` (verb, API group,
resource). That gives one place for per-call timeouts, the overall deadline, pagination, the
Retry-After of a throttled answer, and the mapping of failures to findings ("cannot list events:
403, needs `list events` in namespace ml"). It also makes the set of calls inspectable: the RBAC
manifests are tested against ``READ_SCOPES``.

Answers are read as raw JSON (``_preload_content=False`` semantics: we parse the bytes ourselves)
into the lenient snapshot models. The client's generated typed models are far slower on large
lists and have raised on real clusters when a field the OpenAPI schema calls required was missing
(kubernetes-client/python #1735, #895); a diagnosis tool cannot afford either.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from bot.collect.deadline import Deadline
from bot.collect.html_answer import html_summary, is_html
from bot.read.kubernetes_json import dig, item_reader, pod_logs
from bot.snapshot.gpu import is_gpu_node
from bot.snapshot.kubernetes import KubernetesState, Pod
from bot.snapshot.model import CollectionError
from bot.snapshot.node_filter import classes, eligible_nodes

# (verb, API group, resource) — everything the collector may ask for. Nothing here writes.
READ_SCOPES: frozenset[tuple[str, str, str]] = frozenset(
    {
        ("get", "ray.io", "rayclusters"),
        ("list", "ray.io", "rayclusters"),
        ("get", "ray.io", "rayjobs"),
        ("get", "ray.io", "rayservices"),
        ("list", "", "pods"),
        ("get", "", "pods/log"),
        ("list", "", "nodes"),
        ("list", "", "events"),
        ("get", "", "services"),
        ("get", "", "endpoints"),
        ("list", "discovery.k8s.io", "endpointslices"),
        ("list", "", "resourcequotas"),
        ("get", "", "persistentvolumeclaims"),
        ("list", "networking.k8s.io", "networkpolicies"),
        ("list", "kueue.x-k8s.io", "workloads"),
    }
)

RAY_API_VERSIONS = ("v1", "v1alpha1")
KUEUE_VERSION = "v1beta1"
DEVICE_PLUGIN_SELECTORS = (
    "app=nvidia-device-plugin-daemonset",  # GPU operator
    "name=nvidia-device-plugin-ds",  # upstream static manifest
    "app.kubernetes.io/name=nvidia-device-plugin",  # upstream Helm chart
)
# The KubeRay operator's Pods: its Helm chart and its kustomize base both set this label; their
# image tag is the operator's version (what the upgrade re-verification compares).
OPERATOR_SELECTOR = "app.kubernetes.io/component=kuberay-operator"
PAGE_SIZE = 500
PROXY_PAGE = "instead of the API's JSON (a proxy or load balancer in front of the API server answered)"
# Past this many candidate nodes, one paginated list of all Pods costs fewer requests.
MAX_NODE_QUERIES = 300
# Independent reads go out together, at most this many at a time: against a real API server each
# call is a round trip (tens of milliseconds through a VPN or a cloud's front end), and the reads
# of one diagnosis are a dozen; more at once would only queue behind API Priority and Fairness.
MAX_PARALLEL_CALLS = 6


@dataclass(frozen=True)
class ApiCall:
    verb: str
    group: str
    version: str
    resource: str
    namespace: str | None = None
    name: str | None = None
    subresource: str | None = None
    query: tuple[tuple[str, str], ...] = ()

    @property
    def scope(self) -> tuple[str, str, str]:
        resource = f"{self.resource}/{self.subresource}" if self.subresource else self.resource
        return (self.verb, self.group, resource)

    @property
    def path(self) -> str:
        root = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        parts = [root]
        if self.namespace:
            parts.append(f"namespaces/{self.namespace}")
        parts.append(self.resource)
        if self.name:
            parts.append(self.name)
        if self.subresource:
            parts.append(self.subresource)
        return "/".join(parts)

    def describe(self) -> str:
        where = f" in namespace {self.namespace}" if self.namespace else ""
        target = f" {self.name}" if self.name else ""
        group = f".{self.group}" if self.group else ""
        sub = f"/{self.subresource}" if self.subresource else ""
        return f"{self.verb} {self.resource}{group}{sub}{target}{where}"


class ApiFailure(Exception):
    """A call that did not give a usable answer; ``status`` is the HTTP status or 0.

    ``unreachable``: the API server itself could not be reached (refused, unresolvable, TLS), so
    this says nothing about the call in particular.
    """

    def __init__(self, call: ApiCall, status: int, message: str, *, unreachable: bool = False) -> None:
        super().__init__(message)
        self.call = call
        self.status = status
        self.unreachable = unreachable


@dataclass
class _Server:
    """What the readers of one collection share: whether the API server was found unreachable."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    unreachable: ApiFailure | None = None
    reported: bool = False
    # Calls in flight, over every reader of the collection (reads made at once may nest).
    slots: threading.BoundedSemaphore = field(
        default_factory=lambda: threading.BoundedSemaphore(MAX_PARALLEL_CALLS)
    )


def _status_message(body: bytes) -> str:
    if is_html(body):
        return f"{html_summary(body)} {PROXY_PAGE}"
    try:
        status = json.loads(body)
    except ValueError:
        text = body[:200].decode("utf-8", errors="replace").strip()
        return text.splitlines()[0] if text else ""
    if isinstance(status, dict) and isinstance(status.get("message"), str):
        return str(status["message"])
    return ""


def hint_for(call: ApiCall, status: int) -> str | None:
    verb, group, resource = call.scope
    api_group = group or '""'
    if status in (401, 403):
        where = f"in namespace {call.namespace}" if call.namespace else "cluster-wide"
        return f"grant `{verb}` on `{resource}` (apiGroup {api_group}) {where} to raydiag's identity"
    if status == 429:
        return "the API server is throttling; raydiag will read less next time or try later"
    if status >= 500:
        return "the API server failed to answer; check its health"
    if status == 0:
        return "check the API server address, network path and credentials (kubeconfig/context)"
    return None


@dataclass
class KubernetesReader:
    """Performs ``ApiCall``s with a shared deadline and records what failed."""

    api_client: Any
    deadline: Deadline
    call_timeout: float = 10.0
    errors: list[CollectionError] = field(default_factory=list)
    made: list[ApiCall] = field(default_factory=list)
    bytes_read: int = 0
    _server: _Server = field(default_factory=_Server, repr=False)

    def fork(self) -> KubernetesReader:
        """A reader for one of several reads made at once: same client, deadline and server state,
        its own record of calls and errors (``absorb`` takes them back, in a fixed order)."""
        return KubernetesReader(self.api_client, self.deadline, self.call_timeout, _server=self._server)

    def absorb(self, other: KubernetesReader) -> None:
        self.errors += other.errors
        self.made += other.made
        self.bytes_read += other.bytes_read
        other.errors, other.made, other.bytes_read = [], [], 0

    def _send(self, call: ApiCall, timeout: float) -> tuple[int, bytes, Mapping[str, str]]:
        query = [(k, v) for k, v in call.query]
        # A log is text, but its failure (the Pod gone, the kubelet unreachable) is a JSON Status:
        # asked for text/plain alone, kube-apiserver answers such a failure with a 406 instead.
        accept = "application/json" if not call.subresource else "text/plain, application/json"
        method, url, headers, body, post = self.api_client.param_serialize(
            method="GET",
            resource_path=call.path,
            query_params=query,
            header_params={"Accept": accept},
            auth_settings=["BearerToken"],
        )
        response = self.api_client.call_api(
            method, url, headers, body, post, _request_timeout=(timeout, timeout)
        )
        data = response.read() or b""
        return int(response.status), bytes(data), dict(response.headers or {})

    def fetch(self, call: ApiCall) -> bytes:
        """The body of a successful answer; raises ``ApiFailure`` otherwise."""
        if self.deadline.expired():
            raise ApiFailure(
                call, 0, f"skipped: the {self.deadline.total:g}s collection deadline was reached"
            )
        unreachable = self._server.unreachable
        if unreachable is not None:
            raise ApiFailure(call, 0, str(unreachable), unreachable=True)
        self.made.append(call)
        for attempt in range(2):
            # The last calls before the deadline get only the time that is left.
            timeout = min(self.call_timeout, max(0.05, self.deadline.remaining()))
            try:
                with self._server.slots:
                    status, body, headers = self._send(call, timeout)
            except Exception as error:  # urllib3 timeouts, refused connections, TLS and DNS errors
                message, server_wide = _network_failure(error, timeout)
                if not server_wide:
                    raise ApiFailure(call, 0, message) from error
                failure = ApiFailure(call, 0, message, unreachable=True)
                with self._server.lock:
                    self._server.unreachable = self._server.unreachable or failure
                raise failure from error
            self.bytes_read += len(body)
            if status == 429 and attempt == 0:
                wait = _retry_after(headers)
                if wait is not None and wait < self.deadline.remaining() - 0.5:
                    time.sleep(wait)
                    continue
            if 200 <= status < 300:
                return body
            raise ApiFailure(call, status, _status_message(body) or f"HTTP {status}")
        raise ApiFailure(call, 429, "still throttled after waiting for Retry-After")

    def json(self, call: ApiCall) -> Any:
        body = self.fetch(call)
        try:
            return json.loads(body)
        except (ValueError, RecursionError) as error:
            if is_html(body):
                raise ApiFailure(call, 200, f"the answer is {html_summary(body)} {PROXY_PAGE}") from error
            raise ApiFailure(call, 200, f"the answer is not valid JSON ({len(body)} bytes)") from error

    def items(self, call: ApiCall, max_items: int = 200_000) -> list[Any]:
        """All items of a list call, page by page (``limit``/``continue``).

        A continue token expires when etcd compacts past the list's resource version (410 Gone,
        after about five minutes by default, sooner on a busy cluster). Like client-go's pager, the
        list then starts again from the first page, once; mixing pages of two versions would count
        some Pods twice and miss others.
        """
        found: list[Any] = []
        token = ""
        restarted = False
        while True:
            query = (*call.query, ("limit", str(PAGE_SIZE)), *((("continue", token),) if token else ()))
            try:
                page = self.json(ApiCall(**{**call.__dict__, "query": query}))
            except ApiFailure as failure:
                if failure.status != 410 or not token:
                    raise
                if restarted:
                    raise ApiFailure(
                        call, 410, f"the list expired twice while it was read page by page: {failure}"
                    ) from failure
                restarted, found, token = True, [], ""
                continue
            if not isinstance(page, Mapping):
                raise ApiFailure(call, 200, "the answer is not a list object")
            items = page.get("items")
            if isinstance(items, list):
                found += items
            metadata = page.get("metadata")
            token = metadata.get("continue", "") if isinstance(metadata, Mapping) else ""
            if not token or len(found) >= max_items:
                return found

    def record(self, failure: ApiFailure, source: str | None = None) -> None:
        if failure.unreachable:
            with self._server.lock:
                if self._server.reported:
                    return
                self._server.reported = True
            host = getattr(getattr(self.api_client, "configuration", None), "host", None)
            self.errors.append(
                CollectionError(
                    source="kubernetes api",
                    message=f"cannot reach the Kubernetes API server{f' at {host}' if host else ''} "
                    f"({failure.call.describe()}): {failure}; no other Kubernetes call was made",
                    hint="check the kubeconfig context's server address, the network path to it (VPN, "
                    "proxy) and that the API server is up: `kubectl cluster-info`",
                )
            )
            return
        _verb, _group, resource = failure.call.scope
        self.errors.append(
            CollectionError(
                source=source or f"kubernetes {resource}",
                message=f"cannot {failure.call.describe()}: "
                + (f"HTTP {failure.status}: " if failure.status else "")
                + str(failure),
                hint=hint_for(failure.call, failure.status),
            )
        )

    def try_items(self, call: ApiCall, source: str | None = None) -> list[Any] | None:
        try:
            return self.items(call)
        except ApiFailure as failure:
            self.record(failure, source)
            return None

    def try_json(self, call: ApiCall, source: str | None = None, missing_ok: bool = False) -> Any:
        try:
            return self.json(call)
        except ApiFailure as failure:
            if not (missing_ok and failure.status == 404):
                self.record(failure, source)
            return None


def _retry_after(headers: Mapping[str, str]) -> float | None:
    for key, value in headers.items():
        if key.lower() == "retry-after":
            try:
                return max(0.0, float(value))
            except ValueError:
                return None
    return None


def _network_failure(error: Exception, timeout: float) -> tuple[str, bool]:
    """What went wrong on the way to the API server, and whether it is about the server as a whole
    (refused, unresolvable, TLS) rather than this call: then no other call is made, since each
    would meet the same failure, and one error stands for them all."""
    text = str(error)
    if "timed out" in text.lower() or "timeout" in type(error).__name__.lower():
        return f"no answer within {timeout:g}s (timed out)", False
    if "refused" in text.lower():
        return "connection refused", True
    if any(words in text.lower() for words in ("reset by peer", "without response", "connection aborted")):
        return "the connection was closed or reset before an answer came", False
    if "resolve" in text.lower() or "name or service not known" in text.lower():
        return "the API server's name does not resolve", True
    if "ssl" in text.lower() or "certificate" in text.lower():
        return f"TLS: the handshake with the API server failed ({text[:200]})", True
    return f"{type(error).__name__}: {text[:200]}", False


def _core(resource: str, *, namespace: str | None = None, name: str | None = None, **query: str) -> ApiCall:
    verb = "get" if name else "list"
    return ApiCall(verb, "", "v1", resource, namespace, name, query=tuple(sorted(query.items())))


@dataclass
class KubernetesObjects:
    """The objects read so far, as snapshot models, keyed like ``KubernetesState``'s fields.

    Each answer is converted once, as it arrives (an item the lenient reader cannot read is left
    out); the reads that follow are decided from these models, and the snapshot is assembled from
    them. An object read twice (a Pending Pod of this cluster is in two lists) is kept once.
    """

    by_field: dict[str, list[Any]] = field(default_factory=dict)
    logs: list[dict[str, Any]] = field(default_factory=list)
    _seen: dict[str, set[tuple[str, str]]] = field(default_factory=dict)

    def add(self, key: str, items: Iterable[Any] | None) -> None:
        if items is None:
            return
        read = item_reader(key)
        known = self.by_field.setdefault(key, [])
        seen = self._seen.setdefault(key, set())
        for item in items:
            identity = _identity(item)
            if identity in seen:
                continue
            seen.add(identity)
            obj = read(item)
            if obj is not None:
                known.append(obj)

    def get(self, key: str) -> list[Any]:
        return self.by_field.get(key, [])

    def state(self) -> KubernetesState:
        """The Kubernetes half of the snapshot. Without the node list the fit replay cannot count
        "0/N nodes"; ``nodes_complete`` says so."""
        return KubernetesState(
            **self.by_field, logs=pod_logs(self.logs), nodes_complete="nodes" in self.by_field
        )


def _identity(item: Any) -> tuple[str, str]:
    # Items of built-in lists carry no "kind"; each key of KubernetesObjects holds one kind anyway.
    meta = item.get("metadata") if isinstance(item, Mapping) else None
    if not isinstance(meta, Mapping):
        return ("", str(id(item)))
    return (str(meta.get("namespace", "")), str(meta.get("name", "")))


def read_raycluster(reader: KubernetesReader, name: str, namespace: str) -> Mapping[str, Any] | None:
    """The RayCluster by name, trying ``ray.io/v1`` then ``v1alpha1``; a 404 names the ones that exist."""
    last: ApiFailure | None = None
    for version in RAY_API_VERSIONS:
        call = ApiCall("get", "ray.io", version, "rayclusters", namespace, name)
        try:
            found = reader.json(call)
            return found if isinstance(found, Mapping) else None
        except ApiFailure as failure:
            last = failure
            if failure.status != 404:
                break
    assert last is not None
    if last.status == 404:
        existing = reader.try_items(ApiCall("list", "ray.io", "v1", "rayclusters", namespace)) or []
        names = sorted(str(dig(item, "metadata", "name")) for item in existing if isinstance(item, Mapping))
        listing = ", ".join(names) if names else "none"
        reader.errors.append(
            CollectionError(
                source="kubernetes rayclusters",
                message=f"RayCluster {name} not found in namespace {namespace}; RayClusters there: {listing}",
                hint="pick one of those names, or pass --namespace",
            )
        )
    else:
        reader.record(last, "kubernetes rayclusters")
    return None


Read = list[tuple[str, list[Any] | None]]  # what one read found: (KubernetesObjects key, items)


def in_parallel(reader: KubernetesReader, reads: Sequence[Callable[[KubernetesReader], Read]]) -> Read:
    """Run independent reads at once (at most ``MAX_PARALLEL_CALLS``), each with a reader of its own;
    their answers, calls and errors come back in the order of ``reads``, however they finished."""
    if len(reads) <= 1:
        return [found for read in reads for found in read(reader)]
    readers = [reader.fork() for _ in reads]
    with ThreadPoolExecutor(min(MAX_PARALLEL_CALLS, len(reads)), thread_name_prefix="raydiag-k8s") as pool:
        futures = [pool.submit(read, own) for read, own in zip(reads, readers, strict=True)]
        answers = [future.result() for future in futures]
    for own in readers:
        reader.absorb(own)
    return [found for answer in answers for found in answer]


def _cluster_and_owners(reader: KubernetesReader, cluster_name: str, namespace: str) -> Read:
    """The RayCluster, and the RayJob or RayService that owns it as its owner references name them."""
    cluster = read_raycluster(reader, cluster_name, namespace)
    if cluster is None:
        return []
    found: Read = [("rayclusters", [cluster])]
    owners = dig(cluster, "metadata", "ownerReferences")
    for owner in owners if isinstance(owners, list) else []:
        plural = {"RayJob": "rayjobs", "RayService": "rayservices"}.get(str(dig(owner, "kind")))
        if plural is None:
            continue
        version = str(dig(owner, "apiVersion") or "ray.io/v1").rsplit("/", 1)[-1]
        obj = reader.try_json(ApiCall("get", "ray.io", version, plural, namespace, str(dig(owner, "name"))))
        if isinstance(obj, Mapping):
            found.append((plural, [obj]))
    return found


def _head_service(reader: KubernetesReader, cluster_name: str, namespace: str) -> Read:
    """The head Service and what routes to it: its Endpoints, else its EndpointSlices."""
    service = reader.try_json(
        _core("services", namespace=namespace, name=f"{cluster_name}-head-svc"), missing_ok=True
    )
    if not isinstance(service, Mapping):
        return []
    endpoints = reader.try_json(
        _core("endpoints", namespace=namespace, name=f"{cluster_name}-head-svc"), missing_ok=True
    )
    if isinstance(endpoints, Mapping):
        return [("services", [service]), ("endpoints", [endpoints])]
    slices = ApiCall(
        "list",
        "discovery.k8s.io",
        "v1",
        "endpointslices",
        namespace,
        query=(("labelSelector", f"kubernetes.io/service-name={cluster_name}-head-svc"),),
    )
    return [("services", [service]), ("endpoints", reader.try_items(slices))]


def _listed(key: str, call: ApiCall, source: str | None = None) -> Callable[[KubernetesReader], Read]:
    return lambda reader: [(key, reader.try_items(call, source))]


def collect_kubernetes(reader: KubernetesReader, cluster_name: str, namespace: str) -> KubernetesObjects:
    """Everything the classifier needs from Kubernetes about one RayCluster, and no more.

    Two rounds of reads, each made at once: what needs nothing else (the RayCluster, its Pods, the
    Pending Pods, nodes, events, the head Service, quotas, policies, Kueue), then what the first
    round decides (events of Pods elsewhere, claims, device-plugin Pods, Pods on candidate nodes).
    """
    found = KubernetesObjects()
    first = in_parallel(
        reader,
        [
            lambda r: _cluster_and_owners(r, cluster_name, namespace),
            _listed(
                "pods", _core("pods", namespace=namespace, labelSelector=f"ray.io/cluster={cluster_name}")
            ),
            _listed("pods", _core("pods", fieldSelector="status.phase=Pending")),
            _listed("nodes", _core("nodes")),
            _listed("events", _core("events", namespace=namespace)),
            lambda r: _head_service(r, cluster_name, namespace),
            _listed("resource_quotas", _core("resourcequotas", namespace=namespace)),
            _listed(
                "network_policies", ApiCall("list", "networking.k8s.io", "v1", "networkpolicies", namespace)
            ),
            lambda r: _kueue(r, namespace),
            _listed(
                "operator_pods",
                _core("pods", labelSelector=OPERATOR_SELECTOR),
                source="kubernetes kuberay operator pods",
            ),
        ],
    )
    for key, items in first:
        found.add(key, items)
    second = in_parallel(
        reader,
        [
            lambda r: _pending_elsewhere_events(r, found, namespace),
            lambda r: _claims(r, found),
            lambda r: _device_plugins(r, found),
            lambda r: _bound_pods(r, found, cluster_name),
        ],
    )
    for key, items in second:
        found.add(key, items)
    return found


def _pending_elsewhere_events(reader: KubernetesReader, found: KubernetesObjects, namespace: str) -> Read:
    """Events of this cluster's pending Pods that live outside the namespace read above (rare)."""
    return [
        (
            "events",
            reader.try_items(
                _core("events", namespace=pod.namespace, fieldSelector=f"involvedObject.name={pod.name}")
            ),
        )
        for pod in found.get("pods")
        if pod.namespace != namespace and "ray.io/cluster" in pod.labels
    ]


def _claims(reader: KubernetesReader, found: KubernetesObjects) -> Read:
    pending = [pod for pod in found.get("pods") if pod.phase == "Pending"]
    wanted = sorted({(pod.namespace, claim) for pod in pending for claim in pod.pvc_names})
    claims: list[Any] = []
    for namespace, name in wanted:
        claim = reader.try_json(
            _core("persistentvolumeclaims", namespace=namespace, name=name), missing_ok=True
        )
        if isinstance(claim, Mapping):
            claims.append(claim)
    return [("pvcs", claims)] if claims else []


def _device_plugins(reader: KubernetesReader, found: KubernetesObjects) -> Read:
    if not any(is_gpu_node(n) for n in found.get("nodes")):
        return []
    for selector in DEVICE_PLUGIN_SELECTORS:
        pods = reader.try_items(_core("pods", labelSelector=selector), source="kubernetes device plugin pods")
        if pods is None:
            return []  # the next selector would fail the same way and only repeat the error
        if pods:
            return [("device_plugin_pods", pods)]
    return []


def _kueue(reader: KubernetesReader, namespace: str) -> Read:
    call = ApiCall("list", "kueue.x-k8s.io", KUEUE_VERSION, "workloads", namespace)
    try:
        return [("workloads", reader.items(call))]
    except ApiFailure as failure:
        if failure.status != 404:  # 404: Kueue is not installed, which is normal
            reader.record(failure, "kubernetes kueue workloads")
        return []


def _bound_pods(reader: KubernetesReader, found: KubernetesObjects, cluster_name: str) -> Read:
    """Pods bound to the nodes that could host a pending Pod, to compute free capacity there.

    Only candidate nodes are read (one ``spec.nodeName=`` query each): those the static filters
    (taints, cordon, node selector and affinity) let one of this RayCluster's Pending Pods go to,
    so the cost follows the nodes that could take the Pod, not the number of Pods in the cluster.
    Another team's Pending Pods do not choose nodes. Only when the candidates are so many that one
    paginated list of all Pods is cheaper is that list read instead.
    """
    nodes = found.get("nodes")
    pending = [p for p in found.get("pods") if _ours_unscheduled(p, cluster_name)]
    if not pending or not nodes:
        return []
    grouped = classes(nodes)
    candidates = sorted({node.name for pod in pending for node in eligible_nodes(pod, grouped)})
    if len(candidates) > MAX_NODE_QUERIES:
        every = _core("pods", fieldSelector="status.phase!=Succeeded,status.phase!=Failed")
        return [("pods", reader.try_items(every))]
    return in_parallel(
        reader, [_listed("pods", _core("pods", fieldSelector=f"spec.nodeName={node}")) for node in candidates]
    )


def _ours_unscheduled(pod: Pod, cluster_name: str) -> bool:
    return pod.unscheduled and pod.labels.get("ray.io/cluster") == cluster_name


def read_log(
    reader: KubernetesReader, namespace: str, pod: str, container: str | None, tail: int = 200
) -> list[str] | None:
    query = [("tailLines", str(tail)), ("limitBytes", str(256 * 1024))]
    if container:
        query.append(("container", container))
    call = ApiCall("get", "", "v1", "pods", namespace, pod, "log", tuple(query))
    try:
        body = reader.fetch(call)
    except ApiFailure as failure:
        reader.record(failure, f"kubernetes logs {pod}")
        return None
    return body.decode("utf-8", errors="replace").splitlines()[-tail:]
