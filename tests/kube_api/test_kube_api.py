"""The loopback API server answers the official client and kubectl like a real API server would.

Loopback API server: these test the stand-in itself, which stays for what a real kube-apiserver
cannot be made to do on demand: status faults (403, 429 with Retry-After, 500), truncated and HTML
bodies, reset connections, delays and hangs.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import urllib3
from kubernetes import client, config
from kubernetes.client.exceptions import ApiException

from tests.support import cluster, k8s
from tests.support.cluster import CLUSTER, CPU_WORKERS, GPU_WORKERS, HEAD, NS
from tests.support.kube_api import Fault, KubeAPI, ObjectStore, serve

PENDING = f"{CLUSTER}-gpu-a100-worker-p2c7v"
UNSCHEDULABLE = (
    "0/5 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, "
    "2 Insufficient nvidia.com/gpu, 2 node(s) didn't match Pod's node affinity/selector. preemption: "
    "0/5 nodes are available: 2 No preemption victims found for incoming pod, 3 Preemption is not helpful "
    "for scheduling."
)
NODES = ["cp-1", "cpu-node-1", "cpu-node-2", "gpu-a100-1", "gpu-a100-2"]
RAY_PODS = sorted([HEAD, *CPU_WORKERS, *GPU_WORKERS])
FORBIDDEN = (
    'pods is forbidden: User "system:serviceaccount:raydiag:raydiag" cannot list resource "pods" '
    'in API group "" in the namespace "ml"'
)


def bundle() -> cluster.Bundle:
    """The healthy cluster, plus one GPU worker the scheduler cannot place and a head autoscaler sidecar."""
    found = cluster.healthy()
    pending = cluster.ray_pod(
        PENDING,
        "worker",
        "gpu-a100",
        cluster.gpu_worker_container(),
        node_name=None,
        ip=None,
        tolerations=[k8s.GPU_TOLERATION],
        node_selector={"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB"},
    )
    pending["status"] = k8s.pending_status(UNSCHEDULABLE)
    found.items("pods").append(pending)
    found.find("pods", HEAD)["spec"]["containers"].append(
        k8s.container("autoscaler", cluster.RAY_IMAGE, limits={"cpu": "500m", "memory": "512Mi"})
    )
    found.items("logs").append(
        {
            "pod": GPU_WORKERS[0],
            "namespace": NS,
            "container": "ray-worker",
            "lines": [f"line {i}" for i in range(1, 51)],
        }
    )
    return found


@pytest.fixture
def store() -> ObjectStore:
    return ObjectStore.from_bundle(bundle())


@pytest.fixture
def api(store: ObjectStore) -> Iterator[KubeAPI]:
    with serve(store) as running:
        yield running


def api_client(api: KubeAPI, directory: Path, **settings: Any) -> client.ApiClient:
    configuration = client.Configuration()
    config.load_kube_config(
        config_file=str(api.kubeconfig(directory / "kubeconfig")),
        context="loopback",
        client_configuration=configuration,
    )
    for name, value in settings.items():
        setattr(configuration, name, value)
    return client.ApiClient(configuration)


@pytest.fixture
def core(api: KubeAPI, tmp_path: Path) -> client.CoreV1Api:
    return client.CoreV1Api(api_client(api, tmp_path))


def nodes(core: client.CoreV1Api, **params: Any) -> dict[str, Any]:
    """Nodes as raw JSON: the typed V1NodeList rejects the fixture nodes, whose ``nodeInfo`` lacks
    ``bootID``, ``machineID``, ``systemUUID`` and ``kubeProxyVersion`` (required by the client's models)."""
    return raw(core.list_node(_preload_content=False, **params))


def raw(response: Any) -> dict[str, Any]:
    """The JSON body of a ``_preload_content=False`` answer."""
    document: dict[str, Any] = json.loads(response.data)
    return document


def status_of(error: ApiException) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(error.body)
    return document


# Lists and selectors ------------------------------------------------------------------------------


def test_pods_by_label_selector_typed_and_raw(core: client.CoreV1Api) -> None:
    selector = f"ray.io/cluster={CLUSTER}"
    typed = core.list_namespaced_pod(NS, label_selector=selector)
    assert isinstance(typed, client.V1PodList)
    assert [p.metadata.name for p in typed.items] == sorted([*RAY_PODS, PENDING])
    gpu = next(p for p in typed.items if p.metadata.name == GPU_WORKERS[0])
    assert gpu.spec.node_name == "gpu-a100-1"
    assert gpu.spec.containers[0].resources.limits["nvidia.com/gpu"] == "4"
    assert gpu.metadata.owner_references[0].kind == "RayCluster"

    page = raw(core.list_namespaced_pod(NS, label_selector=selector, _preload_content=False))
    assert page["kind"] == "PodList"
    assert page["apiVersion"] == "v1"
    assert page["metadata"] == {"resourceVersion": "4471600"}
    assert len(page["items"]) == 6
    # Like the real API server: items of a built-in list carry no kind/apiVersion.
    assert "kind" not in page["items"][0]
    assert page["items"][0]["metadata"]["labels"]["ray.io/cluster"] == CLUSTER


def test_set_based_and_negative_label_selectors(core: client.CoreV1Api) -> None:
    def names(selector: str) -> list[str]:
        return [p.metadata.name for p in core.list_pod_for_all_namespaces(label_selector=selector).items]

    assert names("ray.io/node-type in (head),ray.io/cluster") == [HEAD]
    assert names("!ray.io/cluster") == [
        "coredns-5d78c9869d-8kq2x",
        "nvidia-device-plugin-daemonset-7hx2c",
        "nvidia-device-plugin-daemonset-m9d4w",
    ]
    assert names("ray.io/group notin (cpu-workers,gpu-a100),ray.io/is-ray-node==yes") == [HEAD]
    assert len(names("ray.io/node-type!=worker")) == 4  # the head and the three pods without the label
    assert names("name=nvidia-device-plugin-ds,k8s-app") == []
    with pytest.raises(ApiException) as error:
        core.list_pod_for_all_namespaces(label_selector="ray.io/node-type in ()")
    assert error.value.status == 400
    assert status_of(error.value)["reason"] == "BadRequest"


def test_pending_pods_by_field_selector(core: client.CoreV1Api) -> None:
    pending = core.list_pod_for_all_namespaces(field_selector="status.phase=Pending")
    assert [p.metadata.name for p in pending.items] == [PENDING]
    assert pending.items[0].status.conditions[0].reason == "Unschedulable"
    assert pending.items[0].status.conditions[0].message == UNSCHEDULABLE

    unscheduled = core.list_pod_for_all_namespaces(field_selector="spec.nodeName=")
    assert [p.metadata.name for p in unscheduled.items] == [PENDING]
    on_node = core.list_pod_for_all_namespaces(field_selector="spec.nodeName=gpu-a100-1")
    # Ordered by namespace, then name, like the real API server.
    assert [p.metadata.name for p in on_node.items] == [
        "nvidia-device-plugin-daemonset-7hx2c",
        GPU_WORKERS[0],
    ]
    running = core.list_pod_for_all_namespaces(field_selector="status.phase!=Pending,status.phase!=Succeeded")
    assert len(running.items) == 8
    in_ml = core.list_pod_for_all_namespaces(field_selector="metadata.namespace=ml,status.phase=Running")
    assert [p.metadata.name for p in in_ml.items] == RAY_PODS


def test_events_by_involved_object(core: client.CoreV1Api) -> None:
    events = core.list_namespaced_event(NS, field_selector=f"involvedObject.name={GPU_WORKERS[0]}")
    assert sorted(e.reason for e in events.items) == ["Pulled", "Scheduled", "Started"]
    assert {e.involved_object.kind for e in events.items} == {"Pod"}
    operator = core.list_namespaced_event(NS, field_selector="involvedObject.kind=RayCluster,type=Normal")
    assert [e.reason for e in operator.items] == ["CreatedWorkerPod"]
    assert operator.items[0].message == f"Created worker Pod {NS}/{GPU_WORKERS[1]}"
    assert core.list_namespaced_event(NS, field_selector="type=Warning").items == []


def test_unsupported_field_selector_is_a_400_status(core: client.CoreV1Api) -> None:
    with pytest.raises(ApiException) as error:
        core.list_namespaced_pod(NS, field_selector="spec.priorityClassName=high")
    assert error.value.status == 400
    assert status_of(error.value) == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "field label not supported: spec.priorityClassName",
        "reason": "BadRequest",
        "code": 400,
    }


def test_nodes_paginate_with_limit_and_continue(api: KubeAPI, core: client.CoreV1Api) -> None:
    names: list[str] = []
    tokens: list[str] = []
    token: str | None = None
    while True:
        page = nodes(core, limit=2, _continue=token)
        assert page["kind"] == "NodeList"
        names += [n["metadata"]["name"] for n in page["items"]]
        token = page["metadata"].get("continue")
        if not token:
            assert "remainingItemCount" not in page["metadata"]
            break
        tokens.append(token)
        assert page["metadata"]["remainingItemCount"] == len(NODES) - len(names)
    assert names == NODES
    assert len(tokens) == len(set(tokens)) == 2
    assert api.requests.count(path=r"^/api/v1/nodes$") == 3
    assert nodes(core)["items"][3]["status"]["allocatable"]["nvidia.com/gpu"] == "4"
    # A typed list of a kind whose fixture satisfies the client's models paginates the same way.
    first = core.list_namespaced_pod(NS, limit=4)
    rest = core.list_namespaced_pod(NS, limit=4, _continue=first.metadata._continue)
    assert [p.metadata.name for p in first.items + rest.items] == sorted([*RAY_PODS, PENDING])
    assert rest.metadata._continue is None
    with pytest.raises(ApiException) as error:
        core.list_node(limit=2, _continue="not-a-token")
    assert error.value.status == 400
    assert status_of(error.value)["message"].startswith("continue key is not valid")


# Custom resources and discovery -------------------------------------------------------------------


def test_raycluster_through_custom_objects_api(api: KubeAPI, tmp_path: Path) -> None:
    custom = client.CustomObjectsApi(api_client(api, tmp_path))
    found = custom.get_namespaced_custom_object("ray.io", "v1", NS, "rayclusters", CLUSTER)
    assert found["kind"] == "RayCluster"
    assert found["spec"]["workerGroupSpecs"][1]["groupName"] == "gpu-a100"
    assert found["status"]["state"] == "ready"
    listed = custom.list_namespaced_custom_object("ray.io", "v1", NS, "rayclusters")
    assert listed["kind"] == "RayClusterList"
    assert listed["apiVersion"] == "ray.io/v1"
    assert [(i["kind"], i["metadata"]["name"]) for i in listed["items"]] == [("RayCluster", CLUSTER)]


def test_missing_raycluster_is_a_404_status(api: KubeAPI, tmp_path: Path) -> None:
    custom = client.CustomObjectsApi(api_client(api, tmp_path))
    with pytest.raises(ApiException) as error:
        custom.get_namespaced_custom_object("ray.io", "v1", NS, "rayclusters", "x")
    assert error.value.status == 404
    assert status_of(error.value) == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'rayclusters.ray.io "x" not found',
        "reason": "NotFound",
        "details": {"name": "x", "group": "ray.io", "kind": "rayclusters"},
        "code": 404,
    }
    core = client.CoreV1Api(api_client(api, tmp_path))
    with pytest.raises(ApiException) as missing_pod:
        core.read_namespaced_pod("x", NS)
    assert status_of(missing_pod.value)["message"] == 'pods "x" not found'
    assert status_of(missing_pod.value)["details"] == {"name": "x", "kind": "pods"}


def test_discovery_shows_ray_and_not_kueue(api: KubeAPI, tmp_path: Path) -> None:
    api_client_ = api_client(api, tmp_path)
    groups = client.ApisApi(api_client_).get_api_versions()
    names = [g.name for g in groups.groups]
    assert "ray.io" in names
    assert "kueue.x-k8s.io" not in names
    assert {"apps", "coordination.k8s.io", "discovery.k8s.io", "networking.k8s.io"} <= set(names)
    assert client.CoreApi(api_client_).get_api_versions().versions == ["v1"]
    assert client.VersionApi(api_client_).get_code().git_version == "v1.31.3"
    ray = client.CustomObjectsApi(api_client_).get_api_resources("ray.io", "v1")
    assert [r.name for r in ray.resources if "/" not in r.name] == ["rayclusters", "rayjobs", "rayservices"]
    core_resources = {r.name: r for r in client.CoreV1Api(api_client_).get_api_resources().resources}
    assert core_resources["nodes"].namespaced is False
    assert core_resources["pods/log"].verbs == ["get"]
    with pytest.raises(ApiException) as error:
        client.CustomObjectsApi(api_client_).get_api_resources("kueue.x-k8s.io", "v1beta1")
    assert error.value.status == 404
    with pytest.raises(ApiException) as listing:
        client.CustomObjectsApi(api_client_).list_namespaced_custom_object(
            "kueue.x-k8s.io", "v1beta1", NS, "workloads"
        )
    assert listing.value.status == 404


def test_kueue_appears_once_the_store_holds_a_workload(tmp_path: Path) -> None:
    found = bundle()
    found.items("workloads").append(
        {
            "apiVersion": "kueue.x-k8s.io/v1beta1",
            "kind": "Workload",
            "metadata": {
                "name": f"raycluster-{CLUSTER}-5f3c1",
                "namespace": NS,
                "resourceVersion": "4471700",
            },
            "spec": {"queueName": "ml-queue", "podSets": []},
            "status": {"conditions": [{"type": "QuotaReserved", "status": "False", "reason": "Pending"}]},
        }
    )
    with serve(ObjectStore.from_bundle(found)) as api:
        custom = client.CustomObjectsApi(api_client(api, tmp_path))
        assert "kueue.x-k8s.io" in [
            g.name for g in client.ApisApi(custom.api_client).get_api_versions().groups
        ]
        workloads = custom.list_namespaced_custom_object("kueue.x-k8s.io", "v1beta1", NS, "workloads")
        assert workloads["kind"] == "WorkloadList"
        assert workloads["metadata"]["resourceVersion"] == "4471700"
        assert workloads["items"][0]["spec"]["queueName"] == "ml-queue"


# Logs ---------------------------------------------------------------------------------------------


def test_pod_log_tail_limit_and_errors(core: client.CoreV1Api) -> None:
    tail = core.read_namespaced_pod_log(GPU_WORKERS[0], NS, container="ray-worker", tail_lines=3)
    assert tail == "line 48\nline 49\nline 50\n"
    assert core.read_namespaced_pod_log(GPU_WORKERS[0], NS, tail_lines=1) == "line 50\n"  # one container
    assert core.read_namespaced_pod_log(GPU_WORKERS[0], NS, tail_lines=2, limit_bytes=9) == "line 49\nl"
    assert core.read_namespaced_pod_log(PENDING, NS) == ""  # not scheduled yet: empty, like the real server

    with pytest.raises(ApiException) as no_container:
        core.read_namespaced_pod_log(HEAD, NS)
    assert no_container.value.status == 400
    assert status_of(no_container.value)["message"] == (
        f"a container name must be specified for pod {HEAD}, choose one of: [ray-head autoscaler]"
    )
    with pytest.raises(ApiException) as previous:
        core.read_namespaced_pod_log(GPU_WORKERS[0], NS, container="ray-worker", previous=True)
    assert status_of(previous.value)["message"] == (
        f'previous terminated container "ray-worker" in pod "{GPU_WORKERS[0]}" not found'
    )
    with pytest.raises(ApiException) as missing:
        core.read_namespaced_pod_log("gone", NS, container="ray-worker")
    assert missing.value.status == 404
    assert status_of(missing.value)["message"] == 'pods "gone" not found'


# Faults -------------------------------------------------------------------------------------------


def test_forbidden_fault_is_a_real_forbidden_status(api: KubeAPI, core: client.CoreV1Api) -> None:
    api.add_fault(Fault(r"^/api/v1/namespaces/ml/pods$", status=403))
    with pytest.raises(ApiException) as error:
        core.list_namespaced_pod(NS)
    assert error.value.status == 403
    assert status_of(error.value) == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": FORBIDDEN,
        "reason": "Forbidden",
        "details": {"kind": "pods"},
        "code": 403,
    }
    assert len(nodes(core)["items"]) == 5  # other paths unaffected
    assert core.read_namespaced_pod(HEAD, NS).metadata.name == HEAD


def test_throttling_has_retry_after(api: KubeAPI, tmp_path: Path) -> None:
    api.add_fault(Fault(r"/pods$", status=429, retry_after=7, times=1))
    strict = client.CoreV1Api(api_client(api, tmp_path, retries=False))
    with pytest.raises(ApiException) as error:
        strict.list_namespaced_pod(NS, _preload_content=False)
    assert error.value.status == 429
    assert error.value.headers["Retry-After"] == "7"
    assert status_of(error.value)["details"] == {"retryAfterSeconds": 7}
    assert len(strict.list_namespaced_pod(NS).items) == 6  # times=1: the next request passes

    # urllib3's default Retry honours Retry-After on 429 by itself, before the caller sees anything.
    api.requests.clear()
    api.add_fault(Fault(r"/nodes$", status=429, retry_after=0, times=1))
    default = client.CoreV1Api(api_client(api, tmp_path))
    assert len(nodes(default)["items"]) == 5
    assert [r.status for r in api.requests] == [429, 200]


def test_server_error_truncated_html_and_reset(api: KubeAPI, tmp_path: Path) -> None:
    core = client.CoreV1Api(api_client(api, tmp_path, retries=False))
    full = core.list_node(_preload_content=False).data

    api.add_fault(Fault(r"/nodes$", status=500, times=1))
    with pytest.raises(ApiException) as error:
        core.list_node(_preload_content=False)
    assert error.value.status == 500
    assert status_of(error.value)["reason"] == "InternalError"
    assert status_of(error.value)["message"] == "Internal error occurred: etcdserver: leader changed"

    api.add_fault(Fault(r"/nodes$", body="truncated", times=1))
    cut = core.list_node(_preload_content=False)
    assert cut.status == 200
    assert cut.data == full[: len(full) // 2]
    with pytest.raises(ValueError):
        json.loads(cut.data)

    api.add_fault(Fault(r"/nodes$", body="html", times=1))
    with pytest.raises(ApiException) as gateway:
        core.list_node(_preload_content=False)
    assert gateway.value.status == 502
    assert gateway.value.headers["Content-Type"] == "text/html"
    assert "<center><h1>502 Bad Gateway</h1></center>" in gateway.value.body

    api.add_fault(Fault(r"/nodes$", reset=True, times=1))
    with pytest.raises(urllib3.exceptions.ProtocolError):
        core.list_node(_preload_content=False)
    assert [r.status for r in api.requests][-4:] == [500, 200, 502, 0]
    assert len(nodes(core)["items"]) == 5


def test_delay_fault_times_the_client_out_and_stop_is_prompt(store: ObjectStore, tmp_path: Path) -> None:
    api = KubeAPI(store, faults=[Fault(r"/nodes$", delay_s=30)])
    core = client.CoreV1Api(api_client(api, tmp_path, retries=False))
    started = time.monotonic()
    with pytest.raises(urllib3.exceptions.ReadTimeoutError):
        core.list_node(_request_timeout=0.3, _preload_content=False)
    assert time.monotonic() - started < 2

    outcome: list[str] = []

    def blocked() -> None:
        try:
            core.list_node(_request_timeout=20, _preload_content=False)
            outcome.append("answered")
        except Exception as error:
            outcome.append(type(error).__name__)

    waiting = threading.Thread(target=blocked, daemon=True)
    waiting.start()
    time.sleep(0.2)
    started = time.monotonic()
    api.stop()
    assert time.monotonic() - started < 5
    waiting.join(5)
    assert outcome and outcome[0] != "answered"  # the sleeping request was cut, not answered
    api.stop()  # idempotent


# Writes, auth, bookkeeping ------------------------------------------------------------------------


def test_leases_create_update_conflict_and_other_writes_refused(
    api: KubeAPI, store: ObjectStore, tmp_path: Path
) -> None:
    api_client_ = api_client(api, tmp_path)
    leases = client.CoordinationV1Api(api_client_)
    lease = client.V1Lease(
        metadata=client.V1ObjectMeta(name="raydiag-leader"),
        spec=client.V1LeaseSpec(holder_identity="raydiag-0", lease_duration_seconds=15),
    )
    with pytest.raises(ApiException) as no_namespace:
        leases.create_namespaced_lease("raydiag", lease)
    assert no_namespace.value.status == 404
    assert status_of(no_namespace.value)["message"] == 'namespaces "raydiag" not found'

    store.ensure_namespaces("raydiag")
    created = leases.create_namespaced_lease("raydiag", lease)
    assert created.metadata.resource_version == "4471601"
    assert created.metadata.namespace == "raydiag"
    with pytest.raises(ApiException) as exists:
        leases.create_namespaced_lease("raydiag", lease)
    assert exists.value.status == 409
    assert status_of(exists.value)["reason"] == "AlreadyExists"

    created.spec.holder_identity = "raydiag-1"
    updated = leases.replace_namespaced_lease("raydiag-leader", "raydiag", created)
    assert updated.metadata.resource_version == "4471602"
    assert updated.spec.holder_identity == "raydiag-1"
    assert updated.metadata.uid == created.metadata.uid

    created.spec.holder_identity = "raydiag-2"  # still carries resourceVersion 4471601
    with pytest.raises(ApiException) as conflict:
        leases.replace_namespaced_lease("raydiag-leader", "raydiag", created)
    assert conflict.value.status == 409
    assert status_of(conflict.value)["message"] == (
        'Operation cannot be fulfilled on leases.coordination.k8s.io "raydiag-leader": the object has been '
        "modified; please apply your changes to the latest version and try again"
    )
    assert leases.read_namespaced_lease("raydiag-leader", "raydiag").spec.holder_identity == "raydiag-1"
    assert [i.metadata.name for i in leases.list_namespaced_lease("raydiag").items] == ["raydiag-leader"]

    core = client.CoreV1Api(api_client_)
    with pytest.raises(ApiException) as refused_delete:
        core.delete_namespaced_pod(HEAD, NS)
    with pytest.raises(ApiException) as refused_create:
        core.create_namespaced_pod(NS, client.V1Pod(metadata=client.V1ObjectMeta(name="intruder")))
    for refused in (refused_delete.value, refused_create.value):
        assert refused.status == 405
        assert status_of(refused)["reason"] == "MethodNotAllowed"
    assert core.read_namespaced_pod(HEAD, NS).metadata.name == HEAD
    assert [r.status for r in api.requests if r.method != "GET"] == [404, 201, 409, 200, 409, 405, 405]


def test_auth_required_answers_401_without_a_token(store: ObjectStore, tmp_path: Path) -> None:
    with serve(store, require_auth=True) as api:
        with pytest.raises(urllib.error.HTTPError) as error:
            urllib.request.urlopen(f"{api.url}/api/v1/nodes", timeout=5)
        assert error.value.code == 401
        assert json.loads(error.value.read()) == {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": "Unauthorized",
            "reason": "Unauthorized",
            "code": 401,
        }
        assert len(nodes(client.CoreV1Api(api_client(api, tmp_path)))["items"]) == 5


def test_request_log_counts_and_is_bounded(store: ObjectStore) -> None:
    with serve(store, log_size=3) as api:
        for path in ("/version", "/api", "/api/v1/nodes", "/api/v1/namespaces/ml/pods", "/healthz"):
            with urllib.request.urlopen(api.url + path, timeout=5) as answer:
                answer.read()
        assert api.requests.total == 5
        assert len(api.requests) == 3
        assert [r.path for r in api.requests] == ["/api/v1/nodes", "/api/v1/namespaces/ml/pods", "/healthz"]
        assert api.requests[-1].bytes_sent == 2
        assert api.requests.bytes_total > api.requests[0].bytes_sent > 1000
        assert api.url.startswith("http://127.0.0.1:")


# kubectl ------------------------------------------------------------------------------------------


def test_kubectl_reads_workers_as_json(api: KubeAPI, tmp_path: Path) -> None:
    kubectl = shutil.which("kubectl")
    assert kubectl is not None, "kubectl must be installed for this test"
    kubeconfig = api.kubeconfig(tmp_path / "kubeconfig")
    result = subprocess.run(
        [
            kubectl,
            "--kubeconfig",
            str(kubeconfig),
            "--cache-dir",
            str(tmp_path / "cache"),
            "get",
            "pods",
            "-n",
            NS,
            "-l",
            "ray.io/node-type=worker",
            "-o",
            "json",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "HOME": str(tmp_path), "KUBECONFIG": str(kubeconfig)},
        check=False,
    )
    assert result.returncode == 0, result.stderr
    listed = json.loads(result.stdout)
    assert listed["kind"] == "List"
    assert [i["metadata"]["name"] for i in listed["items"]] == sorted([*CPU_WORKERS, *GPU_WORKERS, PENDING])
    assert {i["kind"] for i in listed["items"]} == {"Pod"}  # kubectl fills in what the list left out
    assert {i["metadata"]["labels"]["ray.io/node-type"] for i in listed["items"]} == {"worker"}
    pods = api.requests.count(path=r"^/api/v1/namespaces/ml/pods$")
    assert pods == 1
