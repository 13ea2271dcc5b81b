"""Collect both layers of a live cluster into one snapshot.

Order matters: the Kubernetes layer first (it says where the head is and which Pods exist), then
the Ray dashboard, then the log tails that only the two together can choose — the head, its
autoscaler, and every worker Pod that runs but never joined Ray. Each step uses what the earlier
ones could read and carries on when they could not; all of it shares one deadline.
"""

from __future__ import annotations

import contextvars
import importlib.metadata
import importlib.util
import logging
import sys
import types
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from bot.collect.deadline import Deadline
from bot.collect.kubernetes import (
    KubernetesObjects,
    KubernetesReader,
    Read,
    collect_kubernetes,
    in_parallel,
    read_log,
)
from bot.collect.ray_dashboard import DashboardReader, read_ray_layer
from bot.snapshot.model import CollectionError, Snapshot

LOG = logging.getLogger(__name__)

Progress = Callable[[str], None]


@dataclass(frozen=True)
class Target:
    cluster: str
    namespace: str = "default"
    raycluster: str | None = None
    kubeconfig: str | None = None
    context: str | None = None
    dashboard_url: str | None = None

    @property
    def raycluster_name(self) -> str:
        return self.raycluster or self.cluster

    def default_dashboard_url(self) -> str:
        return f"http://{self.raycluster_name}-head-svc.{self.namespace}.svc.cluster.local:8265"


def kubernetes_client(target: Target) -> Any:
    """The API client for reading ``target``'s cluster (see ``api_client``)."""
    return api_client(target.kubeconfig, target.context)


def _without_package_init() -> None:
    """Let ``kubernetes.client`` and ``kubernetes.config`` load without the package's ``__init__``.

    That ``__init__`` imports every part of the client at once, the dynamic client (with a JSON
    Schema validator), watch, stream, informer and leader election among them, about 0.1 s that a
    read of one cluster never uses. When nothing has imported the package yet, it is registered
    bare (its path, spec and version, which is all ``__init__`` defines besides those imports);
    every submodule still imports on demand, the same files from the same place.
    """
    if "kubernetes" in sys.modules:
        return
    spec = importlib.util.find_spec("kubernetes")
    if spec is None or spec.submodule_search_locations is None:
        return  # not installed as a package: the import below says so
    package = types.ModuleType("kubernetes")
    package.__spec__ = spec
    package.__path__ = list(spec.submodule_search_locations)
    package.__file__ = spec.origin
    package.__project__ = "kubernetes"  # type: ignore[attr-defined]
    package.__version__ = importlib.metadata.version("kubernetes")  # type: ignore[attr-defined]
    sys.modules["kubernetes"] = package


def api_client(kubeconfig: str | None = None, context: str | None = None) -> Any:
    """An ApiClient from in-cluster credentials, or kubeconfig/context, like kubectl resolves them.

    urllib3's own retries are switched off: on a 429 they would sleep for Retry-After up to three
    times before our reader sees the answer, and the diagnosis deadline must stay ours.
    """
    _without_package_init()
    from kubernetes import client, config  # noqa: PLC0415 - lazy: ~0.4 s, only live reads need it

    configuration = client.Configuration()
    loaded = False
    if kubeconfig is None and context is None:
        try:
            config.load_incluster_config(client_configuration=configuration)  # type: ignore[no-untyped-call]
            loaded = True
        except config.ConfigException:
            loaded = False
    if not loaded:
        config.load_kube_config(  # type: ignore[no-untyped-call]
            config_file=kubeconfig, context=context, client_configuration=configuration
        )
    configuration.retries = False
    return client.ApiClient(configuration)


def pod_ray_cluster(
    kubeconfig: str | None, context: str | None, namespace: str, pod: str, timeout_s: float = 5.0
) -> str | None:
    """The ``ray.io/cluster`` label of one Pod: None when there is no such Pod or label, or the API
    does not answer (the caller maps an alert with it; a failed lookup costs only that mapping)."""
    try:
        api = api_client(kubeconfig, context)
    except Exception as error:  # no credentials for this cluster: nothing to look up
        LOG.info("cannot look up pod %s/%s: %s", namespace, pod, error)
        return None
    try:
        from kubernetes.client import CoreV1Api  # noqa: PLC0415 - lazy: only alert lookups need it

        # A list narrowed to the one name, not a get: the shipped ClusterRole grants `list` on Pods
        # (READ_SCOPES) and nothing more, and a list of no match is an empty answer, not a 404.
        answer = CoreV1Api(api).list_namespaced_pod(
            namespace, field_selector=f"metadata.name={pod}", limit=1, _request_timeout=timeout_s
        )
    except Exception as error:  # 403, a timeout or a malformed answer: no owner known
        LOG.info("cannot look up pod %s/%s: %s", namespace, pod, str(error).splitlines()[0][:200])
        return None
    finally:
        api.close()
    items = getattr(answer, "items", None) or []
    found = items[0] if isinstance(items, list) and items else None
    metadata = getattr(found, "metadata", None)
    labels = getattr(metadata, "labels", None) or {}
    owner = labels.get("ray.io/cluster") if isinstance(labels, dict) else None
    return owner if isinstance(owner, str) and owner else None


def credentials_failure(error: Exception) -> CollectionError:
    """What a collection reports when ``kubernetes_client`` cannot load credentials."""
    return CollectionError(
        source="kubernetes config",
        message=f"cannot load Kubernetes credentials: {error}",
        hint="pass --kubeconfig/--context, or run inside the cluster with a service account",
    )


def _quiet(_: str) -> None:
    return None


def _log_tail(namespace: str, pod: str, container: str) -> Callable[[KubernetesReader], Read]:
    def read(reader: KubernetesReader) -> Read:
        lines = read_log(reader, namespace, pod, container)
        if lines is None:
            return []
        return [("logs", [{"pod": pod, "namespace": namespace, "container": container, "lines": lines}])]

    return read


def _log_targets(
    found: KubernetesObjects, cluster: str, ray_ips: set[str] | None
) -> list[tuple[str, str, str]]:
    """(namespace, pod, container) whose log tails are worth reading: the head's Ray container and
    autoscaler, and the Ray container of each Running worker that Ray does not list as alive."""
    wanted: list[tuple[str, str, str]] = []
    for pod in found.get("pods"):
        if pod.labels.get("ray.io/cluster") != cluster or pod.phase != "Running":
            continue
        names = [c.name for c in pod.containers]
        node_type = pod.labels.get("ray.io/node-type")
        if node_type == "head":
            wanted += [(pod.namespace, pod.name, c) for c in names[:1]]
            wanted += [(pod.namespace, pod.name, c) for c in names if c == "autoscaler"]
        elif node_type == "worker" and ray_ips is not None and pod.pod_ip not in ray_ips:
            wanted += [(pod.namespace, pod.name, c) for c in names[:1]]
    return wanted[:12]


def _read_kubernetes(
    target: Target, deadline: Deadline, call_timeout_s: float, progress: Progress, api_client: Any
) -> tuple[list[CollectionError], KubernetesObjects, KubernetesReader | None]:
    """The Kubernetes half of one collection: what was read, what failed, and the reader (None when
    there were no credentials to read with)."""
    progress(f"reading Kubernetes: RayCluster {target.raycluster_name} in {target.namespace}")
    try:
        client = api_client if api_client is not None else kubernetes_client(target)
    except Exception as error:  # a missing or broken kubeconfig is a finding, not a traceback
        return [credentials_failure(error)], KubernetesObjects(), None
    reader = KubernetesReader(client, deadline, call_timeout_s)
    found = collect_kubernetes(reader, target.raycluster_name, target.namespace)
    errors, reader.errors = reader.errors, []
    return errors, found, reader


def collect_live(
    target: Target,
    *,
    deadline_s: float = 25.0,
    call_timeout_s: float = 8.0,
    progress: Progress = _quiet,
    api_client: Any = None,
) -> Snapshot:
    deadline = Deadline(deadline_s)
    # The two layers are independent reads: the Ray dashboard is read in a thread of its own while
    # Kubernetes is read here, under the same deadline. Only the log tails wait for both (which
    # workers Ray lists as alive decides whose logs are worth reading).
    url = target.dashboard_url or target.default_dashboard_url()
    dashboard = DashboardReader(url, deadline, call_timeout_s)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="raydiag-ray-read") as pool:
        ray_read = pool.submit(contextvars.copy_context().run, read_ray_layer, dashboard)
        progress(f"reading Ray: dashboard {url}")
        errors, found, reader = _read_kubernetes(target, deadline, call_timeout_s, progress, api_client)
        ray_state = ray_read.result()
    errors += dashboard.errors

    if reader is not None:
        ray_ips = (
            {n.node_ip for n in ray_state.nodes if n.node_ip and n.alive}
            if ray_state and ray_state.nodes
            else None
        )
        targets = _log_targets(found, target.raycluster_name, ray_ips)
        if targets:
            progress(f"reading log tails of {len(targets)} container(s)")
        for _, tails in in_parallel(reader, [_log_tail(*where) for where in targets]):
            found.logs += tails or []
        errors += reader.errors

    kubernetes = None
    if reader is not None and (found.by_field or found.logs):
        kubernetes = found.state()
    return Snapshot(
        cluster=target.raycluster_name,
        namespace=target.namespace,
        collected_at=datetime.now(UTC),
        origin="live",
        kubernetes=kubernetes,
        ray=ray_state,
        errors=errors,
    )
