"""A stand-in kubelet for the real control plane of ``controlplane.py``: the one part of a node that
the API server, the scheduler and the KubeRay operator talk to, without a container runtime.

Why: with only the control plane, pods the scheduler binds stay Pending forever, so a test can
never show a Ray head that the operator made actually running, nor the kubelet's own words
(Pulling, Created, BackOff...). This object plays the kubelet's API-side part for Nodes it
registers: it posts each Node (capacity, allocatable, labels, taints, cordon), then polls the Pods
bound to them and for each one gives it a loopback IP, posts the events the kubelet would and
patches its status to Running/Ready, or to the waiting reason a scenario asks for. A Pod labelled
``ray.io/node-type`` becomes a real raylet on its IP (``bot/demo/local_ray.LocalCluster``), started
with the flags parsed out of the ``ray start`` line the operator wrote into the container. Each
Node's kubelet port serves its containers' logs (a raylet's is its ``ray start`` output), which
kube-apiserver's ``pods/log`` reaches over TLS with a certificate from the plane's CA::

    with StandInKubelet(plane, [KubeletNode("cpu-node", {"cpu": "4", ...})]) as kubelet:
        ...                                  # apply a RayCluster; pods come up for real

The event wording is the kubelet's own (pkg/kubelet/events, images/image_manager.go,
kuberuntime/kuberuntime_container.go and kuberuntime_manager.go of Kubernetes 1.34). It talks to
the API server with the admin's credentials: a per-node identity would need the Node authorizer
and NodeRestriction admission, which the fixture's API server does not run. Stopping ends every
process it started, by PID (LocalCluster's stop); nothing else is touched.
"""

from __future__ import annotations

import contextlib
import datetime
import http.server
import json
import secrets
import shlex
import ssl
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from bot.demo.local_ray import LocalCluster, NodeSpec, free_port
from tests.support.controlplane import ControlPlane

POLL_S = 0.5
KUBELET_VERSION = "v1.34.4"
# Pods get 127.0.0.<POD_IP_FIRST...>, Nodes 127.0.<NODE_SUBNET>.<n>: apart from the demo's .2-.4.
POD_IP_FIRST = 20
NODE_SUBNET = 3
# Each raylet takes a range of worker ports that LocalCluster reserves per node it is given up
# front; a cluster here grows pod by pod, so it is made with this many slots.
RAYLET_SLOTS = 8
RAY_NODE_TYPE = "ray.io/node-type"
RAY_CLUSTER = "ray.io/cluster"
NOT_READY_TAINT = "node.kubernetes.io/not-ready"


@dataclass(frozen=True)
class KubeletNode:
    """One Node as a scenario wants it. ``allocatable`` defaults to ``capacity``; ``taints`` are
    dicts as in the API (key, value, effect); ``cordoned`` sets spec.unschedulable."""

    name: str
    capacity: dict[str, str]
    allocatable: dict[str, str] | None = None
    labels: dict[str, str] = field(default_factory=dict)
    taints: tuple[dict[str, str], ...] = ()
    cordoned: bool = False


@dataclass(frozen=True)
class Waiting:
    """A container the scenario wants stuck: ``reason`` is ``ImagePullBackOff``, ``ErrImagePull``
    or ``CrashLoopBackOff``; ``error`` is the runtime's error text for a failed pull."""

    reason: str
    error: str = "rpc error: code = NotFound desc = failed to pull and unpack image: not found"


def now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def ray_start_flags(container: dict[str, Any]) -> dict[str, str]:
    """The ``--flag=value`` options of the ``ray start`` in a container's command and args (KubeRay
    writes one shell line: ``ulimit -n 65536; ray start --head --num-cpus=1 ...``). Flags without
    a value map to ""; words after the first shell separator that follows are not read."""
    words: list[str] = []
    for part in [*(container.get("command") or []), *(container.get("args") or [])]:
        with contextlib.suppress(ValueError):
            words += shlex.split(str(part).replace(";", " ; "))
    flags: dict[str, str] = {}
    for index in range(len(words) - 1):
        if words[index] == "ray" and words[index + 1] == "start":
            rest = words[index + 2 :]
            for position, word in enumerate(rest):
                if word in {";", "&&", "||", "|"}:
                    break
                if not word.startswith("--"):
                    continue
                name, has_value, value = word[2:].partition("=")
                if not has_value and position + 1 < len(rest) and not rest[position + 1].startswith("-"):
                    value = rest[position + 1] if rest[position + 1] not in {";", "&&", "||", "|"} else ""
                flags[name] = value
            break
    return flags


def node_spec(ip: str, flags: dict[str, str]) -> NodeSpec:
    """A LocalCluster node from ``ray start`` flags: CPUs, GPUs and custom resources."""
    resources: dict[str, float] = {}
    with contextlib.suppress(ValueError, TypeError, AttributeError):
        raw = json.loads(flags.get("resources") or "{}")
        resources = {str(k): float(v) for k, v in raw.items()}
    return NodeSpec(
        ip,
        num_cpus=int(float(flags.get("num-cpus") or 1)),
        num_gpus=int(float(flags.get("num-gpus") or 0)),
        resources=resources,
    )


@dataclass
class _RayCluster:
    """The raylets of one RayCluster: a LocalCluster whose head is the head Pod's IP."""

    local: LocalCluster
    pods: dict[str, Any] = field(default_factory=dict)  # pod uid -> the `ray start` Popen


class StandInKubelet:
    """Registers ``nodes`` and serves the Pods bound to them until stopped (a context manager).

    ``waiting`` maps a Pod name prefix to the state its first container should be stuck in.
    ``cut_off``: Pod name prefixes of Ray workers cut off from their head: the Pod runs, but its
    real ``ray start`` dials a GCS port on the head's IP that nothing listens on, so it retries
    (for minutes) and never joins, as behind a firewall that refuses the GCS port."""

    def __init__(
        self,
        plane: ControlPlane,
        nodes: list[KubeletNode],
        waiting: dict[str, Waiting] | None = None,
        pod_ip_first: int = POD_IP_FIRST,
        cut_off: tuple[str, ...] = (),
    ) -> None:
        from kubernetes import client

        self.plane = plane
        self.nodes = {node.name: node for node in nodes}
        self.node_ips = {node.name: f"127.0.{NODE_SUBNET}.{i + 1}" for i, node in enumerate(nodes)}
        self.waiting = dict(waiting or {})
        self.cut_off = cut_off
        self.api = plane.client()
        self.core: Any = client.CoreV1Api(self.api)
        self._next_ip = pod_ip_first
        self.pod_ips: dict[str, str] = {}  # pod uid -> IP
        self.served: set[str] = set()  # pod uids whose status is final
        self.clusters: dict[tuple[str, str], _RayCluster] = {}  # (namespace, cluster) -> raylets
        self.errors: list[str] = []
        self.logs: dict[tuple[str, str], Path] = {}  # (namespace, pod) -> its container's output
        self.log_servers: dict[str, http.server.ThreadingHTTPServer] = {}  # node -> its log server
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="stand-in-kubelet", daemon=True)

    # -- life ----------------------------------------------------------------------------------

    def __enter__(self) -> StandInKubelet:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        for node in self.nodes.values():
            self.register(node)
        self._thread.start()

    def stop(self) -> None:
        """End the poll loop and the log servers, then every raylet this kubelet started (by PID,
        via LocalCluster)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=180)
        for server in self.log_servers.values():
            server.shutdown()
            server.server_close()
        for cluster in self.clusters.values():
            cluster.local.stop()

    def started_pids(self) -> list[int]:
        return [proc.pid for cluster in self.clusters.values() for proc in cluster.local.procs]

    def stragglers(self) -> list[int]:
        return [pid for cluster in self.clusters.values() for pid in cluster.local.stragglers()]

    # -- nodes ---------------------------------------------------------------------------------

    def register(self, node: KubeletNode) -> None:
        """What the kubelet posts at start (the Node, then its status), plus the node lifecycle
        controller's lifting of the not-ready taint that admission puts on every new Node (no
        kube-controller-manager runs here)."""
        from kubernetes import client

        labels = {
            "kubernetes.io/hostname": node.name,
            "kubernetes.io/os": "linux",
            "kubernetes.io/arch": "amd64",
            **node.labels,
        }
        body = client.V1Node(
            metadata=client.V1ObjectMeta(name=node.name, labels=labels),
            spec=client.V1NodeSpec(unschedulable=node.cordoned or None),
        )
        self.core.create_node(body=body)
        ready = {
            "type": "Ready",
            "status": "True",
            "reason": "KubeletReady",
            "message": "kubelet is posting ready status",
            "lastHeartbeatTime": now(),
            "lastTransitionTime": now(),
        }
        pressures = [
            {
                "type": kind,
                "status": "False",
                "reason": f"KubeletHasSufficient{word}",
                "message": f"kubelet has sufficient {word.lower()} available",
                "lastHeartbeatTime": now(),
                "lastTransitionTime": now(),
            }
            for kind, word in (("MemoryPressure", "Memory"), ("DiskPressure", "Disk"), ("PIDPressure", "PID"))
        ]
        status = {
            "capacity": node.capacity,
            "allocatable": node.allocatable or node.capacity,
            "conditions": [*pressures, ready],
            "addresses": [
                {"type": "InternalIP", "address": self.node_ips[node.name]},
                {"type": "Hostname", "address": node.name},
            ],
            "nodeInfo": {
                "kubeletVersion": KUBELET_VERSION,
                "kubeProxyVersion": "",
                "operatingSystem": "linux",
                "architecture": "amd64",
                "containerRuntimeVersion": "containerd://2.0.0",
                "osImage": "raydiag stand-in kubelet",
                "kernelVersion": "",
                "machineID": "",
                "systemUUID": "",
                "bootID": "",
            },
        }
        status["daemonEndpoints"] = {"kubeletEndpoint": {"Port": self.serve_logs(node.name)}}
        self.core.patch_node_status(node.name, body={"status": status})
        spec = self.core.read_node(node.name).spec
        taints = [t.to_dict() for t in ((spec.taints if spec else None) or []) if t.key != NOT_READY_TAINT]
        wanted = [dict(t) for t in node.taints]
        kept = [t for t in taints if not any(t["key"] == w.get("key") for w in wanted)]
        merged = [{k: v for k, v in t.items() if v is not None} for t in kept] + wanted
        self.core.patch_node(node.name, body={"spec": {"taints": merged or None}})
        self.event_for_node(node.name, "Normal", "Starting", "Starting kubelet.")
        self.event_for_node(node.name, "Normal", "NodeReady", f"Node {node.name} status is now: NodeReady")

    # -- the loop ------------------------------------------------------------------------------

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.sync()
            except Exception as error:
                self.errors.append(f"{type(error).__name__}: {error}")
            self._stop.wait(POLL_S)

    def sync(self) -> None:
        """One pass over the Pods bound to our Nodes; head Pods first, so workers find their GCS."""
        pods = [
            pod
            for pod in self.core.list_pod_for_all_namespaces(field_selector="spec.nodeName!=").items
            if pod.spec.node_name in self.nodes
        ]
        pods.sort(key=lambda p: (p.metadata.labels or {}).get(RAY_NODE_TYPE) != "head")
        for pod in pods:
            if self._stop.is_set():
                return
            if pod.metadata.deletion_timestamp is not None:
                self.remove(pod)
            elif pod.metadata.uid not in self.served:
                self.serve(pod)

    def pod_ip(self, pod: Any) -> str:
        uid = pod.metadata.uid
        if uid not in self.pod_ips:
            if self._next_ip > 254:
                raise RuntimeError("the stand-in kubelet ran out of 127.0.0.x pod IPs")
            self.pod_ips[uid] = f"127.0.0.{self._next_ip}"
            self._next_ip += 1
        return self.pod_ips[uid]

    def serve(self, pod: Any) -> None:
        labels = pod.metadata.labels or {}
        containers = self.api.sanitize_for_serialization(pod.spec.containers)
        stuck = next((w for prefix, w in self.waiting.items() if pod.metadata.name.startswith(prefix)), None)
        ip = self.pod_ip(pod)
        if stuck is not None:
            self.fail(pod, containers[0], ip, stuck)
            self.served.add(pod.metadata.uid)
            return
        node_type = labels.get(RAY_NODE_TYPE)
        if node_type in {"head", "worker"}:
            key = (pod.metadata.namespace, labels.get(RAY_CLUSTER, ""))
            if node_type == "worker" and key not in self.clusters:
                return  # its head is not up yet: like ray start's retries, try on the next pass
            self.init_containers(pod)
            self.pull_create_start(pod, containers[0])
            self.start_raylet(pod, containers[0], ip, key, head=node_type == "head")
        else:
            self.init_containers(pod)
            for container in containers:
                self.pull_create_start(pod, container)
        self.patch_status(pod, ip, self.running_statuses(pod, containers), ready=True)
        self.served.add(pod.metadata.uid)

    # -- Ray -----------------------------------------------------------------------------------

    def start_raylet(
        self, pod: Any, container: dict[str, Any], ip: str, key: tuple[str, str], head: bool
    ) -> None:
        """``ray start`` at the Pod's IP with the Pod's flags; the head's ``--address`` is ours
        (the operator's points at the head Service's DNS name, which nothing resolves here). A
        worker waits until the head lists it, unless it is one the scenario cut off."""
        spec = node_spec(ip, ray_start_flags(container))
        if head:
            local = LocalCluster(
                [spec], temp_prefix="raydiag-kubelet-", say=lambda _: None, max_nodes=RAYLET_SLOTS
            )
            self.clusters[key] = _RayCluster(local)
        cluster = self.clusters[key]
        gcs = None
        if not head and pod.metadata.name.startswith(self.cut_off):
            gcs = f"{cluster.local.head_ip}:{free_port(cluster.local.head_ip)}"
        self.logs[(pod.metadata.namespace, pod.metadata.name)] = cluster.local.node_log(ip)
        cluster.pods[pod.metadata.uid] = cluster.local.start_node(spec, gcs_address=gcs)

    def remove(self, pod: Any) -> None:
        """A Pod being deleted: stop its raylet (SIGTERM by PID), then finish the deletion as the
        kubelet does once its containers are gone."""
        from kubernetes.client.exceptions import ApiException

        for cluster in self.clusters.values():
            proc = cluster.pods.pop(pod.metadata.uid, None)
            if proc is not None and proc.poll() is None:
                proc.terminate()
        with contextlib.suppress(ApiException):
            self.core.delete_namespaced_pod(pod.metadata.name, pod.metadata.namespace, grace_period_seconds=0)

    # -- logs ----------------------------------------------------------------------------------

    def serve_logs(self, node: str) -> int:
        """Start the node's log server (HTTPS on its InternalIP, a certificate from the plane's CA)
        and return its port, the kubelet port the Node posts in ``daemonEndpoints``."""
        ip = self.node_ips[node]
        certificate, key = self.plane.serving_certificate(f"kubelet-{node}", [ip])
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(certificate, key)
        server = http.server.ThreadingHTTPServer((ip, 0), _LogRequest)
        server.daemon_threads = True
        server.socket = context.wrap_socket(server.socket, server_side=True)
        server.kubelet = self  # type: ignore[attr-defined]
        self.log_servers[node] = server
        threading.Thread(target=server.serve_forever, name=f"kubelet-logs-{node}", daemon=True).start()
        return int(server.server_address[1])

    def container_log(
        self, namespace: str, pod: str, container: str, query: dict[str, list[str]]
    ) -> tuple[int, bytes]:
        """What the kubelet's ``/containerLogs/{namespace}/{pod}/{container}`` answers: the
        container's output (a raylet's ``ray start``; nothing for other containers), cut as
        ``tailLines`` then ``limitBytes`` say. No container here ever restarted, so ``previous``
        gets the kubelet's refusal."""
        if query.get("previous", [""])[0] == "true":
            return 400, f'previous terminated container "{container}" in pod "{pod}" not found'.encode()
        path = self.logs.get((namespace, pod))
        text = path.read_bytes() if path is not None and path.exists() else b""
        tail = query.get("tailLines", [""])[0]
        if tail.isdigit():
            lines = text.splitlines(keepends=True)
            text = b"".join(lines[len(lines) - int(tail) :] if int(tail) else [])
        limit = query.get("limitBytes", [""])[0]
        if limit.isdigit():
            text = text[: int(limit)]
        return 200, text

    # -- events and status ---------------------------------------------------------------------

    def event(self, pod: Any, kind: str, reason: str, message: str, container: str | None = None) -> None:
        """A core/v1 Event as the kubelet's (legacy) event recorder writes it."""
        involved = {
            "kind": "Pod",
            "apiVersion": "v1",
            "namespace": pod.metadata.namespace,
            "name": pod.metadata.name,
            "uid": pod.metadata.uid,
            "resourceVersion": pod.metadata.resource_version,
        }
        if container is not None:
            involved["fieldPath"] = f"spec.containers{{{container}}}"
        self._post_event(
            pod.metadata.namespace, pod.metadata.name, involved, kind, reason, message, pod.spec.node_name
        )

    def event_for_node(self, node: str, kind: str, reason: str, message: str) -> None:
        involved = {"kind": "Node", "name": node, "uid": node}
        self._post_event("default", node, involved, kind, reason, message, node)

    def _post_event(
        self,
        namespace: str,
        name: str,
        involved: dict[str, str],
        kind: str,
        reason: str,
        message: str,
        host: str,
    ) -> None:
        stamp = now()
        body = {
            "metadata": {"name": f"{name}.{secrets.token_hex(8)}", "namespace": namespace},
            "involvedObject": involved,
            "reason": reason,
            "message": message,
            "type": kind,
            "source": {"component": "kubelet", "host": host},
            "firstTimestamp": stamp,
            "lastTimestamp": stamp,
            "count": 1,
            "reportingComponent": "kubelet",
            "reportingInstance": host,
        }
        self.core.create_namespaced_event(namespace, body=body)

    def init_containers(self, pod: Any) -> None:
        for container in self.api.sanitize_for_serialization(pod.spec.init_containers or []):
            self.pull_create_start(pod, container)

    def pull_create_start(self, pod: Any, container: dict[str, Any]) -> None:
        name, image = container["name"], container.get("image", "")
        self.event(pod, "Normal", "Pulled", f'Container image "{image}" already present on machine', name)
        self.event(pod, "Normal", "Created", f"Created container: {name}", name)
        self.event(pod, "Normal", "Started", f"Started container {name}", name)

    def fail(self, pod: Any, container: dict[str, Any], ip: str, stuck: Waiting) -> None:
        """The events and status of a container stuck as the scenario asks."""
        name, image = container["name"], container.get("image", "")
        pod_ref = f"{pod.metadata.name}_{pod.metadata.namespace}({pod.metadata.uid})"
        status: dict[str, Any] = {
            "name": name,
            "image": image,
            "imageID": "",
            "ready": False,
            "restartCount": 0,
        }
        phase = "Pending"
        if stuck.reason in {"ImagePullBackOff", "ErrImagePull"}:
            self.event(pod, "Normal", "Pulling", f'Pulling image "{image}"', name)
            self.event(pod, "Warning", "Failed", f'Failed to pull image "{image}": {stuck.error}', name)
            self.event(pod, "Warning", "Failed", "Error: ErrImagePull", name)
            message = f"ErrImagePull: {stuck.error}"
            if stuck.reason == "ImagePullBackOff":
                self.event(pod, "Normal", "BackOff", f'Back-off pulling image "{image}"', name)
                self.event(pod, "Warning", "Failed", "Error: ImagePullBackOff", name)
                message = f'Back-off pulling image "{image}": {message}'
            status["state"] = {"waiting": {"reason": stuck.reason, "message": message}}
        else:
            self.pull_create_start(pod, container)
            self.event(
                pod,
                "Warning",
                "BackOff",
                f"Back-off restarting failed container {name} in pod {pod_ref}",
                name,
            )
            phase = "Running"
            status["restartCount"] = 1
            status["lastState"] = {
                "terminated": {"exitCode": 1, "reason": "Error", "startedAt": now(), "finishedAt": now()}
            }
            status["state"] = {
                "waiting": {
                    "reason": stuck.reason,
                    "message": f"back-off 10s restarting failed container={name} pod={pod_ref}",
                }
            }
        self.patch_status(pod, ip, [status], ready=False, phase=phase)

    def running_statuses(self, pod: Any, containers: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [
            {
                "name": c["name"],
                "image": c.get("image", ""),
                "imageID": "",
                "containerID": f"containerd://{secrets.token_hex(32)}",
                "ready": True,
                "started": True,
                "restartCount": 0,
                "state": {"running": {"startedAt": now()}},
            }
            for c in containers
        ]

    def patch_status(
        self, pod: Any, ip: str, statuses: list[dict[str, Any]], ready: bool, phase: str = "Running"
    ) -> None:
        stamp = now()
        unready = [s["name"] for s in statuses if not s["ready"]]

        def condition(kind: str, ok: bool) -> dict[str, Any]:
            row: dict[str, Any] = {
                "type": kind,
                "status": "True" if ok else "False",
                "lastTransitionTime": stamp,
            }
            if not ok:
                row["reason"] = "ContainersNotReady"
                row["message"] = f"containers with unready status: [{' '.join(unready)}]"
            return row

        inits = self.api.sanitize_for_serialization(pod.spec.init_containers or [])
        host_ip = self.node_ips[pod.spec.node_name]
        status = {
            "phase": phase,
            "hostIP": host_ip,
            "hostIPs": [{"ip": host_ip}],
            "podIP": ip,
            "podIPs": [{"ip": ip}],
            "startTime": stamp,
            "conditions": [
                {"type": "PodReadyToStartContainers", "status": "True", "lastTransitionTime": stamp},
                {"type": "Initialized", "status": "True", "lastTransitionTime": stamp},
                condition("Ready", ready),
                condition("ContainersReady", ready),
                {"type": "PodScheduled", "status": "True", "lastTransitionTime": stamp},
            ],
            "containerStatuses": statuses,
            "initContainerStatuses": [
                {
                    "name": c["name"],
                    "image": c.get("image", ""),
                    "imageID": "",
                    "ready": True,
                    "restartCount": 0,
                    "state": {"terminated": {"exitCode": 0, "reason": "Completed", "finishedAt": stamp}},
                }
                for c in inits
            ],
        }
        self.core.patch_namespaced_pod_status(
            pod.metadata.name, pod.metadata.namespace, body={"status": status}
        )


class _LogRequest(http.server.BaseHTTPRequestHandler):
    """One request to a Node's log server: ``GET /containerLogs/{namespace}/{pod}/{container}``."""

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        parts = [unquote(part) for part in url.path.split("/") if part]
        kubelet: StandInKubelet = self.server.kubelet  # type: ignore[attr-defined]
        if len(parts) == 4 and parts[0] == "containerLogs":
            status, body = kubelet.container_log(parts[1], parts[2], parts[3], parse_qs(url.query))
        else:
            status, body = 404, b"404 page not found\n"
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        """Quiet: the test's output is no place for an access log."""


__all__ = ["KubeletNode", "StandInKubelet", "Waiting", "node_spec", "ray_start_flags"]
