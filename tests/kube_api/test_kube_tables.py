"""Server-side ``kubectl get`` tables: the loopback API answers Table requests as kube-apiserver does.

The printers are checked cell by cell on pods shaped like the kubelet reports them (every STATUS the
real printer can write), and end to end with the installed ``kubectl`` binary, which prints what a
real cluster's ``kubectl get`` would.

Loopback API server: ages in a Table are measured at a clock the test sets (``serve(clock=...)``); a
real kube-apiserver measures them at its own time.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.support import cluster, kube_printers, scenarios
from tests.support.cluster import GPU_WORKERS, NS
from tests.support.kube_api import KubeAPI, ObjectStore, serve
from tests.support.kube_printers import event_cells, human_duration, node_cells, pod_cells

NOW = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)
TABLE_ACCEPT = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"


def ago(**delta: float) -> str:
    return (NOW - timedelta(**delta)).strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (-5, "<invalid>"),
        (-1, "0s"),
        (59, "59s"),
        (119, "119s"),
        (120, "2m"),
        (125, "2m5s"),
        (600, "10m"),
        (179 * 60, "179m"),
        (3 * 3600 + 5 * 60, "3h5m"),
        (8 * 3600, "8h"),
        (47 * 3600, "47h"),
        (50 * 3600, "2d2h"),
        (30 * 86400, "30d"),
        (800 * 86400, "2y70d"),
        (10 * 365 * 86400, "10y"),
    ],
)
def test_human_duration_matches_apimachinery(seconds: float, text: str) -> None:
    assert human_duration(seconds) == text


def pod(
    *,
    phase: str = "Running",
    containers: list[dict[str, Any]] | None = None,
    init: list[dict[str, Any]] | None = None,
    init_specs: list[dict[str, Any]] | None = None,
    conditions: list[dict[str, Any]] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    statuses = containers if containers is not None else [running()]
    body: dict[str, Any] = {
        "metadata": {"name": "w", "namespace": NS, "creationTimestamp": ago(minutes=5)},
        "spec": {
            "containers": [{"name": s["name"]} for s in statuses] or [{"name": "c"}],
            "initContainers": init_specs
            if init_specs is not None
            else [{"name": s["name"]} for s in init or []],
            "nodeName": "gpu-a100-1",
        },
        "status": {
            "phase": phase,
            "conditions": conditions or [],
            "containerStatuses": statuses,
            "initContainerStatuses": init or [],
            "podIPs": [{"ip": "10.0.0.9"}],
        },
    }
    for key, value in extra.items():
        body["status"][key] = value
    return body


def running(name: str = "c", ready: bool = True) -> dict[str, Any]:
    return {
        "name": name,
        "ready": ready,
        "restartCount": 0,
        "state": {"running": {"startedAt": ago(minutes=4)}},
    }


def waiting(reason: str, name: str = "c", restarts: int = 0, finished: str | None = None) -> dict[str, Any]:
    last = (
        {"terminated": {"exitCode": 137, "reason": "OOMKilled", "finishedAt": finished}} if finished else {}
    )
    return {
        "name": name,
        "ready": False,
        "restartCount": restarts,
        "state": {"waiting": {"reason": reason}},
        "lastState": last,
    }


def terminated(name: str = "c", **fields: Any) -> dict[str, Any]:
    return {"name": name, "ready": False, "restartCount": 0, "state": {"terminated": fields}}


def status_cells(body: dict[str, Any]) -> tuple[str, str, str]:
    cells = pod_cells(body, NOW)
    return cells[1], cells[2], cells[3]


def test_running_and_ready() -> None:
    assert status_cells(pod()) == ("1/1", "Running", "0")


def test_crash_loop_shows_restarts_and_when_the_last_one_ended() -> None:
    body = pod(containers=[waiting("CrashLoopBackOff", restarts=7, finished=ago(minutes=2, seconds=13))])
    assert status_cells(body) == ("0/1", "CrashLoopBackOff", "7 (2m13s ago)")


def test_image_pull_and_pending_without_node() -> None:
    assert (
        status_cells(pod(phase="Pending", containers=[waiting("ImagePullBackOff")]))[1] == "ImagePullBackOff"
    )
    unscheduled = pod(phase="Pending", containers=[])
    unscheduled["spec"].pop("nodeName")
    unscheduled["status"].pop("podIPs")
    cells = pod_cells(unscheduled, NOW)
    assert cells[2] == "Pending" and cells[5:] == ["<none>", "<none>", "<none>", "<none>"]


@pytest.mark.parametrize(
    ("init", "expected"),
    [
        ([terminated("a", exitCode=0), waiting("PodInitializing", "b")], "Init:1/2"),
        ([waiting("ImagePullBackOff", "a")], "Init:ImagePullBackOff"),
        ([terminated("a", exitCode=1)], "Init:ExitCode:1"),
        ([terminated("a", exitCode=137, signal=9)], "Init:Signal:9"),
        ([terminated("a", exitCode=1, reason="Error")], "Init:Error"),
    ],
)
def test_init_container_reasons(init: list[dict[str, Any]], expected: str) -> None:
    body = pod(phase="Pending", containers=[waiting("PodInitializing")], init=init)
    assert status_cells(body)[1] == expected


def test_started_sidecar_counts_as_a_ready_container() -> None:
    sidecar = {**running("proxy"), "started": True}
    body = pod(init=[sidecar], init_specs=[{"name": "proxy", "restartPolicy": "Always"}])
    assert status_cells(body)[:2] == ("2/2", "Running")


@pytest.mark.parametrize(
    ("containers", "expected"),
    [
        ([terminated(exitCode=137)], "ExitCode:137"),
        ([terminated(exitCode=0, signal=15)], "Signal:15"),
        ([terminated(exitCode=137, reason="OOMKilled")], "OOMKilled"),
        ([terminated("done", exitCode=0, reason="Completed"), running("serve")], "NotReady"),
    ],
)
def test_terminated_container_reasons(containers: list[dict[str, Any]], expected: str) -> None:
    assert status_cells(pod(containers=containers))[1] == expected


def test_scheduling_gated_terminating_and_node_lost() -> None:
    gated = pod(
        phase="Pending",
        containers=[],
        conditions=[{"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}],
    )
    assert status_cells(gated)[1] == "SchedulingGated"
    deleting = pod()
    deleting["metadata"]["deletionTimestamp"] = ago(seconds=10)
    assert status_cells(deleting)[1] == "Terminating"
    lost = pod(reason="NodeLost")
    lost["metadata"]["deletionTimestamp"] = ago(seconds=10)
    assert status_cells(lost)[1] == "Unknown"


def test_wide_cells_nominated_node_and_readiness_gates() -> None:
    body = pod(
        nominatedNodeName="gpu-a100-2",
        conditions=[{"type": "example.com/lb-ready", "status": "True"}],
    )
    body["spec"]["readinessGates"] = [{"conditionType": "example.com/lb-ready"}, {"conditionType": "x/y"}]
    assert pod_cells(body, NOW)[5:] == ["10.0.0.9", "gpu-a100-1", "gpu-a100-2", "1/2"]


def test_node_status_roles_and_addresses() -> None:
    node = {
        "metadata": {
            "name": "n1",
            "creationTimestamp": ago(days=3),
            "labels": {"node-role.kubernetes.io/control-plane": "", "kubernetes.io/role": "master"},
        },
        "spec": {"unschedulable": True},
        "status": {
            "conditions": [{"type": "Ready", "status": "Unknown"}],
            "addresses": [{"type": "InternalIP", "address": "10.0.0.2"}],
            "nodeInfo": {"kubeletVersion": "v1.31.3"},
        },
    }
    assert node_cells(node, NOW) == [
        "n1",
        "NotReady,SchedulingDisabled",
        "control-plane,master",
        "3d",
        "v1.31.3",
        "10.0.0.2",
        "<none>",
        "<unknown>",
        "<unknown>",
        "<unknown>",
    ]


def test_event_cells_core_and_events_api_shapes() -> None:
    core = {
        "metadata": {"name": "w.1"},
        "involvedObject": {"kind": "Pod", "name": "w", "fieldPath": "spec.containers{c}"},
        "reason": "BackOff",
        "type": "Warning",
        "message": "Back-off restarting failed container\n",
        "firstTimestamp": ago(minutes=30),
        "lastTimestamp": ago(minutes=1),
        "count": 12,
        "source": {"component": "kubelet", "host": "gpu-a100-1"},
    }
    assert event_cells(core, NOW) == [
        "60s",
        "Warning",
        "BackOff",
        "pod/w",
        "spec.containers{c}",
        "kubelet, gpu-a100-1",
        "Back-off restarting failed container",
        "30m",
        12,
        "w.1",
    ]
    new_api = {
        "metadata": {"name": "w.2"},
        "involvedObject": {"kind": "Pod", "name": "w"},
        "reason": "FailedScheduling",
        "type": "Warning",
        "message": "0/5 nodes are available",
        "eventTime": ago(minutes=9),
        "series": {"count": 4, "lastObservedTime": ago(minutes=3)},
        "reportingComponent": "default-scheduler",
    }
    cells = event_cells(new_api, NOW)
    assert (cells[0], cells[5], cells[7], cells[8]) == ("3m", "default-scheduler", "9m", 4)


def test_kuberay_columns_per_release() -> None:
    names = {
        release: {plural: [c.name for c in columns] for plural, columns in table.items()}
        for release, table in kube_printers.KUBERAY_COLUMNS.items()
    }
    assert names["1.0"]["rayjobs"] == [] and "cpus" not in names["1.0"]["rayclusters"]
    assert names["1.1"]["rayjobs"][:2] == ["job status", "deployment status"]
    assert "ray cluster name" in names["1.2"]["rayjobs"]
    assert names["1.2"]["rayservices"] == ["service status", "num serve endpoints"]


# Over HTTP ----------------------------------------------------------------------------------------


@pytest.fixture
def api() -> Iterator[KubeAPI]:
    with serve(ObjectStore.from_bundle(scenarios.worker_oom_killed_in_a_loop()), clock=lambda: NOW) as server:
        yield server


def get(api: KubeAPI, path: str, accept: str = TABLE_ACCEPT) -> dict[str, Any]:
    request = urllib.request.Request(api.url + path, headers={"Accept": accept})
    with urllib.request.urlopen(request, timeout=10) as response:
        document: dict[str, Any] = json.loads(response.read())
    return document


def test_table_answer_for_a_list_and_for_one_object(api: KubeAPI) -> None:
    listed = get(api, f"/api/v1/namespaces/{NS}/pods")
    assert listed["kind"] == "Table" and listed["apiVersion"] == "meta.k8s.io/v1"
    assert [c["name"] for c in listed["columnDefinitions"]][:5] == [
        "Name",
        "Ready",
        "Status",
        "Restarts",
        "Age",
    ]
    assert [c["priority"] for c in listed["columnDefinitions"]][5:] == [1, 1, 1, 1]
    rows = {row["cells"][0]: row for row in listed["rows"]}
    assert rows[GPU_WORKERS[1]]["cells"][2] == "CrashLoopBackOff"
    assert rows[GPU_WORKERS[1]]["object"]["kind"] == "PartialObjectMetadata"
    one = get(api, f"/api/v1/namespaces/{NS}/pods/{GPU_WORKERS[1]}?includeObject=Object")
    assert len(one["rows"]) == 1 and one["rows"][0]["object"]["kind"] == "Pod"
    assert get(api, f"/api/v1/namespaces/{NS}/pods?includeObject=None")["rows"][0]["object"] is None


def test_plain_json_still_answers_lists(api: KubeAPI) -> None:
    assert get(api, f"/api/v1/namespaces/{NS}/pods", "application/json")["kind"] == "PodList"


def test_custom_resource_table_has_null_cells_for_missing_values(api: KubeAPI) -> None:
    table = get(api, f"/apis/ray.io/v1/namespaces/{NS}/rayclusters")
    assert [c["name"] for c in table["columnDefinitions"]][:3] == [
        "Name",
        "desired workers",
        "available workers",
    ]
    cells = table["rows"][0]["cells"]
    tpus = [c["name"] for c in table["columnDefinitions"]].index("tpus")
    assert cells[0] == cluster.CLUSTER and cells[tpus] is None


# With kubectl ------------------------------------------------------------------------------------


def run_kubectl(api: KubeAPI, home: Path, *args: str) -> str:
    binary = shutil.which("kubectl")
    assert binary is not None, "kubectl must be installed for this test"
    kubeconfig = api.kubeconfig(home / "kubeconfig")
    result = subprocess.run(
        [binary, "--kubeconfig", str(kubeconfig), "--cache-dir", str(home / "cache"), *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "HOME": str(home)},
        check=True,
    )
    return result.stdout


def test_kubectl_prints_server_side_columns(api: KubeAPI, tmp_path: Path) -> None:
    plain = run_kubectl(api, tmp_path, "get", "pods", "-n", NS).splitlines()
    assert plain[0].split() == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    crash = next(line for line in plain if line.startswith(GPU_WORKERS[1]))
    assert crash.split()[1:4] == ["0/1", "CrashLoopBackOff", "7"]
    wide = run_kubectl(api, tmp_path, "get", "pods", "-A", "-o", "wide").splitlines()
    assert wide[0].split()[:2] == ["NAMESPACE", "NAME"] and wide[0].rstrip().endswith("READINESS GATES")
    rays = run_kubectl(api, tmp_path, "get", "raycluster,rayjob,rayservice", "-n", NS)
    assert "DESIRED WORKERS   AVAILABLE WORKERS   CPUS   MEMORY   GPUS   STATUS   AGE" in rays
    assert f"raycluster.ray.io/{cluster.CLUSTER}" in rays
